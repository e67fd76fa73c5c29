//! TUI tests: the pure `update` function, sessions on a TestBackend (screens are insta
//! snapshots in `snapshots/`), whole flows through `run_loop`, the supervisor's views,
//! waiting on a busy database, PostgreSQL reconnects, and the real binary under tmux.
//!
//! `cargo test --test tui`; one module: `cargo test --test tui screens::`.

// Tests may unwrap (a panic is the failure, with its message), be long, and drive
// the OS directly (kill, mounts, setuid); the product's C calls are all in src/sys.rs.
#![allow(clippy::unwrap_used, clippy::too_many_lines, unsafe_code)]

#[macro_use]
#[path = "../support/mod.rs"]
pub mod support;

mod audit_day;
mod canned;
mod canned_tmux;
mod check_tmux;
mod duplicates;
mod field_admin;
mod figures;
mod first_hour;
mod flow;
mod form;
mod form_tmux;
mod items;
mod list_prompts;
mod notify_tmux;
mod park;
mod park_tmux;
mod readme;
mod reconnect;
mod review;
mod screens;
mod sla;
mod supervisor;
mod tmux;
mod typing;
mod update;
mod ux;
mod waiting;
mod working_day;
