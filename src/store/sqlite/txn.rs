//! The one way a transaction runs on SQLite (and the only place that says BEGIN, COMMIT or
//! ROLLBACK): a guard begins it, commits it only when its body returned `Ok`, and rolls it
//! back when dropped otherwise: on an error, an early return, or a panic unwinding through
//! it. The TUI's store worker survives a panic in a store call; without the guard its
//! connection would keep the write lock, and everyone else would wait, until it exited.

use rusqlite::Connection;

use super::busy::retry_busy;
use super::map_err;
use super::open::Facts;
use crate::store::error::{Result, StoreError};

/// What a transaction is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A write: `BEGIN IMMEDIATE`, so the write lock is held from the start and no write
    /// inside fails half-way with SQLITE_BUSY; retried while another program holds the
    /// lock in a way the busy handler does not cover.
    Write,
    /// Reads from one snapshot (a deferred `BEGIN`). Inside a transaction already open,
    /// that one is joined: its snapshot is the one wanted, and its owner ends it.
    Read,
}

/// Where a transaction failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    Begin,
    Body,
    Commit,
}

/// A failed transaction: where, what SQLite said of the connection right then (read
/// before the rollback could change it), and the error.
#[derive(Debug)]
pub(super) struct Failed {
    pub stage: Stage,
    pub facts: Facts,
    pub error: StoreError,
}

impl Failed {
    fn at(stage: Stage, conn: &Connection, error: StoreError) -> Failed {
        Failed {
            stage,
            facts: Facts::of(conn),
            error,
        }
    }
}

/// What holds the connection a transaction runs on: the connection itself, or the store
/// (whose reads then run inside one snapshot).
pub(super) trait OnConnection {
    fn connection(&self) -> &Connection;
}

impl OnConnection for &Connection {
    fn connection(&self) -> &Connection {
        self
    }
}

/// Rolls the transaction back when dropped while still open.
struct Guard<'h, H: OnConnection + ?Sized> {
    host: &'h mut H,
    open: bool,
}

impl<H: OnConnection + ?Sized> Drop for Guard<'_, H> {
    fn drop(&mut self) {
        let c = self.host.connection();
        if self.open && !c.is_autocommit() {
            let _ = c.execute_batch("ROLLBACK");
        }
    }
}

/// Runs `f` in one transaction of `kind` on `host`'s connection: committed when it
/// returns `Ok`, rolled back on every other path, panics included.
pub(super) fn run<H: OnConnection + ?Sized, T>(
    host: &mut H,
    kind: Kind,
    f: impl FnOnce(&mut H) -> Result<T>,
) -> std::result::Result<T, Failed> {
    if kind == Kind::Read && !host.connection().is_autocommit() {
        return f(host).map_err(|e| Failed::at(Stage::Body, host.connection(), e));
    }
    let begin = match kind {
        Kind::Write => "BEGIN IMMEDIATE",
        Kind::Read => "BEGIN",
    };
    retry_busy(|| host.connection().execute_batch(begin))
        .map_err(|e| Failed::at(Stage::Begin, host.connection(), e))?;
    let mut guard = Guard { host, open: true };
    let out = f(guard.host);
    let c = guard.host.connection();
    match out {
        Ok(v) => match c.execute_batch("COMMIT") {
            Ok(()) => {
                guard.open = false;
                Ok(v)
            }
            Err(e) => Err(Failed::at(Stage::Commit, c, map_err(e))),
        },
        Err(e) => Err(Failed::at(Stage::Body, c, e)),
    }
}
