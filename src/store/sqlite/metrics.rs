//! `caseload metrics` on SQLite: every fact read in one read transaction, each over an
//! index or a small table (see [`crate::store::metrics`]).

use rusqlite::{Connection, params};

use super::reads::queues;
use super::rows::lossy_text;
use super::txn::{self, Kind};
use crate::domain::Millis;
use crate::store::error::Result;
use crate::store::metrics::{
    COUNTS, DUE_BEFORE, DUE_SOON_MS, LOCKS, Metrics, MetricsFacts, OLDEST_OPEN, TOTALS, assemble,
};

pub(super) fn metrics(c: &Connection, now: Millis) -> Result<Metrics> {
    let facts = txn::run(&mut &*c, Kind::Read, |c| facts(c, now)).map_err(|f| f.error)?;
    Ok(assemble(facts))
}

fn facts(c: &Connection, now: Millis) -> Result<MetricsFacts> {
    let queues = queues(c)?;
    let counts = c
        .prepare_cached(COUNTS)?
        .query_map([], |r| {
            Ok((lossy_text(r, 0)?, lossy_text(r, 1)?, r.get(2)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let locks = c
        .prepare_cached(LOCKS)?
        .query_map([], |r| Ok((lossy_text(r, 0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let totals = c
        .prepare_cached(TOTALS)?
        .query_map([], |r| {
            Ok((
                lossy_text(r, 0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut per_queue = Vec::with_capacity(queues.len());
    let mut due = c.prepare_cached(DUE_BEFORE)?;
    let mut oldest = c.prepare_cached(OLDEST_OPEN)?;
    for q in &queues {
        let overdue: i64 = due.query_row(params![q.name, now], |r| r.get(0))?;
        let soon: i64 = due.query_row(params![q.name, now + DUE_SOON_MS], |r| r.get(0))?;
        let first: Option<Millis> = oldest.query_row(params![q.name], |r| r.get(0))?;
        per_queue.push((q.name.clone(), overdue, soon - overdue, first));
    }
    Ok(MetricsFacts {
        now,
        queues,
        counts,
        locks,
        per_queue,
        totals,
    })
}
