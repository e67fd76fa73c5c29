//! The supervisors' figures on SQLite, read in one snapshot: the day summary's rows of the
//! period's whole UTC days (`figure_days`, by day), the holds that ended in its edges
//! (ranges of the `holds` table, clustered by end time) and each queue's due counts (over
//! `items_queue_due`).

use rusqlite::{Connection, params};

use super::reads::queues;
use super::rows::lossy_text;
use super::txn::{self, Kind};
use crate::domain::Millis;
use crate::store::error::Result;
use crate::store::figure_days::{DayCell, split};
use crate::store::figures::{HoldRow, MERGED, Report, ReportFacts, ReportQuery, assemble};

/// The report at `now`, from one snapshot.
pub(super) fn report(c: &Connection, now: Millis, q: &ReportQuery) -> Result<Report> {
    let facts = txn::run(&mut &*c, Kind::Read, |c| facts(c, now, q)).map_err(|f| f.error)?;
    assemble(q, facts)
}

fn facts(c: &Connection, now: Millis, q: &ReportQuery) -> Result<ReportFacts> {
    let parts = split(q.period.since, q.period.until, q.rows_only);
    let mut rows = Vec::new();
    for (since, until) in parts.edges {
        rows.extend(holds(c, since, until, q.queue.as_deref())?);
    }
    let cells = match parts.days {
        Some((first, end)) => cells(c, first, end, q.queue.as_deref())?,
        None => Vec::new(),
    };
    let queues = queues(c)?;
    let mut due = Vec::with_capacity(queues.len());
    let mut count = c.prepare_cached(
        "SELECT count(*) FROM items WHERE queue = ?1 AND state = 'open' \
         AND due_at IS NOT NULL AND due_at >= ?2 AND due_at < ?3",
    )?;
    for s in &queues {
        let overdue: i64 = count.query_row(params![s.name, i64::MIN, now], |r| r.get(0))?;
        let soon: i64 = count.query_row(params![s.name, now, now + 3_600_000], |r| r.get(0))?;
        due.push((s.name.clone(), overdue, soon));
    }
    let merged = c
        .prepare_cached(MERGED)?
        .query_map(params![q.period.since, q.period.until], |r| {
            Ok((lossy_text(r, 0)?, r.get(1)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(ReportFacts {
        now,
        queues,
        rows,
        cells,
        due,
        merged,
    })
}

/// The summary rows of the days `[first, end)`.
fn cells(c: &Connection, first: Millis, end: Millis, queue: Option<&str>) -> Result<Vec<DayCell>> {
    Ok(c.prepare_cached(
        "SELECT day, queue, holder, completed, failed, skipped, released, lost, held_ms, \
         finishes FROM figure_days WHERE day >= ?1 AND day < ?2 AND (?3 IS NULL OR queue = ?3)",
    )?
    .query_map(params![first, end, queue], |r| {
        Ok(DayCell {
            day: r.get(0)?,
            queue: lossy_text(r, 1)?,
            holder: lossy_text(r, 2)?,
            completed: r.get(3)?,
            failed: r.get(4)?,
            skipped: r.get(5)?,
            released: r.get(6)?,
            lost: r.get(7)?,
            held_ms: r.get(8)?,
            finishes: lossy_text(r, 9)?,
        })
    })?
    .collect::<rusqlite::Result<_>>()?)
}

/// The holds that ended in `[since, until)`.
fn holds(
    c: &Connection,
    since: Millis,
    until: Millis,
    queue: Option<&str>,
) -> Result<Vec<HoldRow>> {
    Ok(c.prepare_cached(
        "SELECT queue, holder, started, ended, how, handle_ms, own_ms, wait_ms, cycle_ms, \
             late_ms FROM holds WHERE ended >= ?1 AND ended < ?2 AND (?3 IS NULL OR queue = ?3)",
    )?
    .query_map(params![since, until, queue], |r| {
        Ok(HoldRow {
            queue: lossy_text(r, 0)?,
            holder: lossy_text(r, 1)?,
            started: r.get(2)?,
            ended: r.get(3)?,
            how: lossy_text(r, 4)?,
            handle_ms: r.get(5)?,
            own_ms: r.get(6)?,
            wait_ms: r.get(7)?,
            cycle_ms: r.get(8)?,
            late_ms: r.get(9)?,
        })
    })?
    .collect::<rusqlite::Result<_>>()?)
}
