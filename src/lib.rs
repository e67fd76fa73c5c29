//! caseload: a terminal work queue for people.
//!
//! Module map (what may use what is in `shared/STYLE.md`). Items are `pub(crate)` unless
//! the binary (`main.rs`), the tests or the benches use them; `ui`, `doctor` and `sys`
//! are private to the crate.
//! - [`domain`]: items, queues, locks, events, users and the pure rules over them; never
//!   reads the clock.
//! - [`store`]: the [`store::Store`] trait ([`store::Reads`] + [`store::Writes`]) and its
//!   errors; every read implemented by each backend, every write once, as the lock
//!   protocol written in [`store::ops`] over the primitives of one write transaction
//!   ([`store::ops::Tx`]); the SQLite and PostgreSQL backends ([`store::sqlite`],
//!   [`store::postgres`], the same file names on both sides: open, txn, tx, reads, stats,
//!   check, migrate, sql); migrate-to, database location and identity lookup.
//! - [`app`]: the TUI's state, messages (`msg`), the dialog, the list filters and the key
//!   table; `update/` is `update(state, msg) -> effects`, one short function per message
//!   (`keys`, `modes`, `results`, `supervise`); pure (never touches the store or the clock).
//! - `ui`: `render(&state, frame)`, one file per view or widget; no I/O.
//! - [`tui`]: the thin loop that draws `ui` and hands `app`'s effects to a worker thread
//!   that owns the Store (answers come back as messages; the screen never waits for the
//!   database), plus the terminal's life cycle (restore on every exit, SIGHUP).
//! - [`cli`]: the command line: `args` (every flag and its help), `commands/` (one small
//!   function per subcommand over the Store), `output` (text and JSON), `damage` (`check`'s
//!   findings and advice, the rows `export` leaves out), `help` (examples after every
//!   `--help`, shell completions, man pages); `run` only dispatches.
//! - [`config`]: the system and user config files (`toml`) in one `Config`.
//! - [`import`]: `caseload import`: CSV / JSON Lines read a row at a time, checked in a
//!   first pass and written in a second, in bounded memory.
//! - `doctor`: `caseload doctor`, the deployment checks (files, disk, schema, server).
//! - [`logging`]: diagnostics to a log file, never to a screen.
//! - `sys`: every call into C behind a safe function; the one module allowed `unsafe`
//!   (Cargo.toml's `[lints]` deny it elsewhere, and deny `unwrap()` outside tests,
//!   functions over 80 lines and unreachable `pub` items).

pub mod app;
pub mod cli;
pub mod config;
pub mod demo;
mod doctor;
pub mod domain;
pub mod import;
pub mod logging;
pub mod store;
mod sys;
pub mod tui;
mod ui;
