//! The event feed's reads on PostgreSQL ([`crate::store::feed`]): in one statement, the
//! largest id its snapshot sees, then the transactions writing events (read live, after
//! the snapshot was taken).

use super::open::{Conn, TxResult};
use super::reads::{PgCells, all};
use crate::store::feed::{FeedEvent, FeedMark, feed_event_from};

/// The largest visible id, and the virtual transaction ids holding the lock an INSERT
/// into this database's `events` takes (held from before its row's id until its end).
const MARK: &str = "SELECT coalesce(max(id), 0), \
     ARRAY(SELECT l.virtualtransaction FROM pg_locks l \
           WHERE l.locktype = 'relation' AND l.relation = 'events'::regclass \
           AND l.mode = 'RowExclusiveLock' \
           AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())) \
     FROM events";

pub(super) fn feed_mark(c: &mut Conn) -> TxResult<FeedMark> {
    let row = c.query_one(MARK, &[])?;
    Ok(FeedMark {
        last_id: row.get(0),
        writers: Some(row.get(1)),
    })
}

pub(super) fn feed(c: &mut Conn, after: i64, upto: i64, limit: usize) -> TxResult<Vec<FeedEvent>> {
    let rows = c.query(
        &crate::store::sql::feed("e.detail::text"),
        &[&after, &upto, &(limit as i64)],
    )?;
    all(rows, |c: &mut PgCells| feed_event_from(c))
}
