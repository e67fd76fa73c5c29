//! TUI tests: the pure `update` function, sessions on a TestBackend (screens are insta
//! snapshots in `snapshots/`), whole flows through `run_loop`, the supervisor's views,
//! waiting on a busy database, PostgreSQL reconnects, and the real binary under tmux.
//!
//! `cargo test --test tui`; one module: `cargo test --test tui screens::`.

#[macro_use]
#[path = "../support/mod.rs"]
pub mod support;

mod figures;
mod flow;
mod notify_tmux;
mod reconnect;
mod screens;
mod supervisor;
mod tmux;
mod update;
mod ux;
mod waiting;
mod working_day;
