//! The event feed's reads on SQLite ([`crate::store::feed`]): writers are serialised, so
//! the largest id is final at once.

use rusqlite::{Connection, params};

use super::rows::Cols;
use crate::store::error::Result;
use crate::store::feed::{FeedEvent, FeedMark, feed_event_from};

pub(super) fn feed_mark(c: &Connection) -> Result<FeedMark> {
    let last_id: i64 = c.query_row("SELECT coalesce(max(id), 0) FROM events", [], |r| r.get(0))?;
    Ok(FeedMark {
        last_id,
        writers: None,
    })
}

pub(super) fn feed(c: &Connection, after: i64, upto: i64, limit: usize) -> Result<Vec<FeedEvent>> {
    let mut stmt = c.prepare_cached(&crate::store::sql::feed("e.detail"))?;
    let mut rows = stmt.query(params![after, upto, limit as i64])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        out.push(feed_event_from(&mut Cols::new(r))?);
    }
    Ok(out)
}
