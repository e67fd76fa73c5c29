//! caseload: a terminal work queue for people.
//!
//! Module map (what may use what is in `shared/STYLE.md`):
//! - [`domain`]: items, queues, locks, events, users and the pure rules over them; never
//!   reads the clock.
//! - [`store`]: the [`store::Store`] trait, its errors, the SQLite implementation, the
//!   migrator, database location and identity lookup.
//! - [`cli`]: the subcommands, each a few lines over the Store.
//! - [`import`]: CSV / JSON Lines parsing and validation for `caseload import`.
//! - [`logging`]: diagnostics to a log file, never to a screen.

pub mod cli;
pub mod demo;
pub mod domain;
pub mod import;
pub mod logging;
pub mod store;
