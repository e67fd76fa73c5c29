//! Store tests: the conformance suite written once against `dyn Store` (SQLite always,
//! PostgreSQL when `CASELOAD_TEST_PG` holds a URL), the refusal table, supervisor
//! operations, migrations, and real processes racing on one database.
//!
//! `cargo test --test store`; one module: `cargo test --test store conformance::`.

// Tests may unwrap (a panic is the failure, with its message), be long, and drive
// the OS directly (kill, mounts, setuid); the product's C calls are all in src/sys.rs.
#![allow(clippy::unwrap_used, clippy::too_many_lines, unsafe_code)]

#[macro_use]
#[path = "../support/mod.rs"]
pub mod support;

mod concurrency;
mod conformance;
mod cut_history;
mod due_order;
mod duplicates;
mod feed;
mod fields;
mod figure_days;
mod figures;
mod item_threads;
mod metrics;
mod migrate;
mod park;
mod pooled;
mod postgres;
mod postgres_lost;
mod queue_fields;
mod refusals;
mod reprepare;
mod review;
mod rollback;
mod round_trips;
mod search;
mod search_index;
mod security;
mod short_words;
mod sla;
mod snapshot;
mod supervisor;
mod teams;
mod texts;
mod wal;
mod working_day;
