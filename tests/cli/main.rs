//! CLI tests of the real binary (assert_cmd style): every subcommand, bad input, config
//! files, help and man pages, damaged and faulty storage, shared files and doctor.
//!
//! `cargo test --test cli`; one module: `cargo test --test cli bad_input::`.

// Tests may unwrap (a panic is the failure, with its message), be long, and drive
// the OS directly (kill, mounts, setuid); the product's C calls are all in src/sys.rs.
#![allow(clippy::unwrap_used, clippy::too_many_lines, unsafe_code)]

#[macro_use]
#[path = "../support/mod.rs"]
pub mod support;

mod bad_input;
mod command_line;
mod commands;
mod config;
mod damaged;
mod doctor;
mod due_order;
mod duplicates;
mod events;
mod failover;
mod fields;
mod first_hour;
mod help;
mod import_export;
mod item_shape;
mod items;
mod keep_ids;
mod local_time;
mod lock_age;
mod metrics;
mod no_typos;
mod open_path;
mod park;
mod pooled;
mod records;
mod report;
mod review;
mod search;
mod security;
mod shared_files;
mod sla;
mod storage_faults;
mod teams;
mod texts;
mod units;
mod verification;
mod verification_demo;
mod work;
mod working_day;
