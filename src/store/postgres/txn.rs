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
    /// A write (`READ COMMITTED`); its commit is followed by the connection's
    /// `after_commit` (the change counter's bump).
    Write,
    /// Reads that need a transaction only to carry a pooled connection's settings
    /// (`READ COMMITTED`, as without one).
    Read,
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

/// A transaction's start: `BEGIN` (for a snapshot, `REPEATABLE READ READ ONLY`),
/// `now_sql`, the server's clock, and on a pooled connection its settings, in one simple
/// query.
pub(super) fn begin_sql(kind: Kind, now_sql: &str, settings: Option<&str>) -> String {
    let mode = match kind {
        Kind::Write | Kind::Read => "",
        Kind::Snapshot => " ISOLATION LEVEL REPEATABLE READ READ ONLY",
    };
    match settings {
        Some(set) => format!("BEGIN{mode}; {now_sql}; {set}"),
        None => format!("BEGIN{mode}; {now_sql}"),
    }
}

/// A commit's one round trip: `COMMIT`, then for a write what runs after it.
fn commit_sql(kind: Kind, after: &str) -> std::borrow::Cow<'static, str> {
    match kind {
        Kind::Write if !after.is_empty() => format!("COMMIT; {after}").into(),
        _ => "COMMIT".into(),
    }
}

/// True when the error of `COMMIT; <after>` is the second statement's: a name it uses is
/// missing or not allowed (classes 42 and 3F), which a COMMIT never says; the commit
/// itself went through.
fn after_commit_failed(e: &postgres::Error) -> bool {
    e.as_db_error()
        .is_some_and(|d| matches!(&d.code().code()[..2], "42" | "3F"))
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
        let now = c.now().map_err(Failed::Body)?;
        return f(host, now).map_err(Failed::Body);
    }
    let begin = begin_sql(kind, &c.now_sql, c.pooled.as_deref());
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
    let c = guard.host.conn();
    match c.client.batch_execute(&commit_sql(kind, &c.after_commit)) {
        Ok(()) => {
            guard.open = false;
            Ok(out)
        }
        Err(e) if after_commit_failed(&e) => {
            guard.open = false;
            tracing::warn!(error = %super::open::one_line(&e), "change counter not bumped");
            Ok(out)
        }
        Err(e) => Err(Failed::Commit(e)),
    }
}
