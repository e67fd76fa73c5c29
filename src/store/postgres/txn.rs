//! The one way a transaction runs on PostgreSQL (and the only place that says BEGIN,
//! COMMIT or ROLLBACK): a guard begins it, commits it only when its body returned `Ok`,
//! and rolls it back when dropped otherwise: on an error, an early return, or a panic
//! unwinding through it. Without the guard, a connection whose store call panicked stays
//! in its transaction: its row locks held, and its next `BEGIN` only a warning, so the
//! next `COMMIT` would commit the half-done work.
//!
//! Not `postgres::Client::build_transaction`: its `BEGIN` is a round trip of its own,
//! where here `BEGIN` and the server's clock are one simple query (a write's first round
//! trip is also its `now`), and a guard that borrows the store can lend it to the reads of
//! a snapshot.

use super::open::{Conn, TxError, TxResult, first_i64};
use crate::domain::Millis;
use crate::store::error::StoreError;

/// What a transaction is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A write (`READ COMMITTED`).
    Write,
    /// Reads from one snapshot (`REPEATABLE READ READ ONLY`). Inside a transaction
    /// already open, that one is joined: its snapshot is the one wanted, and its owner
    /// ends it.
    Snapshot,
}

/// Where a transaction failed, and why.
pub(super) enum Failed {
    /// Nothing was done yet.
    Begin(TxError),
    Body(TxError),
    /// COMMIT failed or went unanswered: on a lost connection, the server may have
    /// applied it.
    Commit(postgres::Error),
}

impl Failed {
    /// The error as a step's error, for callers that need not tell where it failed.
    pub(super) fn into_tx(self) -> TxError {
        match self {
            Failed::Begin(e) | Failed::Body(e) => e,
            Failed::Commit(e) => TxError::Pg(e),
        }
    }
}

/// What holds the connection a transaction runs on: the connection itself, or the store
/// (whose reads then run inside one snapshot).
pub(super) trait OnConn {
    fn conn(&mut self) -> &mut Conn;
}

impl OnConn for Conn {
    fn conn(&mut self) -> &mut Conn {
        self
    }
}

/// Rolls the transaction back when dropped while still open.
struct Guard<'h, H: OnConn + ?Sized> {
    host: &'h mut H,
    open: bool,
}

impl<H: OnConn + ?Sized> Drop for Guard<'_, H> {
    fn drop(&mut self) {
        let c = self.host.conn();
        c.in_txn = false;
        if self.open && !c.client.is_closed() {
            let _ = c.client.batch_execute("ROLLBACK");
        }
    }
}

/// A transaction's start: `BEGIN` (for a snapshot, `REPEATABLE READ READ ONLY`) and
/// `now_sql`, the server's clock, in one simple query.
pub(super) fn begin_sql(kind: Kind, now_sql: &str) -> String {
    let mode = match kind {
        Kind::Write => "",
        Kind::Snapshot => " ISOLATION LEVEL REPEATABLE READ READ ONLY",
    };
    format!("BEGIN{mode}; {now_sql}")
}

/// Runs `f` in one transaction of `kind` on `host`'s connection, given the server's now
/// (read by the same round trip as `BEGIN`): committed when `f` returns `Ok`, rolled back
/// on every other path, panics included.
pub(super) fn run<H: OnConn + ?Sized, T>(
    host: &mut H,
    kind: Kind,
    f: impl FnOnce(&mut H, Millis) -> TxResult<T>,
) -> Result<T, Failed> {
    let c = host.conn();
    if c.in_txn {
        let now = c.now().map_err(|e| Failed::Body(e.into()))?;
        return f(host, now).map_err(Failed::Body);
    }
    let begin = begin_sql(kind, &c.now_sql);
    let msgs = c.client.simple_query(&begin);
    c.in_txn = true;
    let mut guard = Guard { host, open: true };
    let now = match msgs {
        Ok(m) => first_i64(&m).ok_or_else(|| {
            let e = StoreError::Database("the server did not say what time it is".into());
            Failed::Begin(e.into())
        })?,
        Err(e) => return Err(Failed::Begin(e.into())),
    };
    let out = f(guard.host, now).map_err(Failed::Body)?;
    match guard.host.conn().client.batch_execute("COMMIT") {
        Ok(()) => {
            guard.open = false;
            Ok(out)
        }
        Err(e) => Err(Failed::Commit(e)),
    }
}
