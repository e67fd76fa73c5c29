//! `caseload metrics` on SQLite: every fact read in one read transaction, each over an
//! index or a small table (see [`crate::store::metrics`]).

use rusqlite::{Connection, params};

use super::reads::queues;
use super::rows::lossy_text;
use super::txn::{self, Kind};
use crate::domain::Millis;
use crate::store::error::Result;
use crate::store::metrics::{
    COUNTS, DUE, LOCKS, Metrics, MetricsFacts, OLDEST_OPEN, TOTALS, assemble, per_queue,
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
    let mut held = c.prepare_cached(LOCKS)?;
    let mut locks = Vec::new();
    for q in &queues {
        for lock in held.query_map(params![q.name], |r| Ok((lossy_text(r, 0)?, r.get(1)?)))? {
            locks.push(lock?);
        }
    }
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
    let mut due = c.prepare_cached(DUE)?;
    let mut first = c.prepare_cached(OLDEST_OPEN)?;
    let per_queue = per_queue(
        &queues,
        now,
        // By name: `$2` comes before `$1` in the text, and SQLite numbers by appearance.
        |q, now, soon| {
            due.query_row(
                rusqlite::named_params! {"$1": q, "$2": now, "$3": soon},
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
        },
        |q| first.query_row(params![q], |r| r.get(0)),
    )?;
    Ok(MetricsFacts {
        now,
        queues,
        counts,
        locks,
        per_queue,
        totals,
    })
}
