//! The supervisors' figures on PostgreSQL: the day summary's rows of the period's whole
//! UTC days, the holds that ended in its edges and each queue's due counts, read in one
//! `REPEATABLE READ READ ONLY` transaction (one snapshot).

use super::open::{Conn, TxResult};
use super::reads::queues;
use super::txn::{self, Failed, Kind};
use crate::domain::Millis;
use crate::store::figure_days::{DayCell, split};
use crate::store::figures::{HoldRow, MERGED, ReportFacts, ReportQuery};

/// The facts, from one snapshot, at the server's now.
pub(super) fn facts(c: &mut Conn, q: &ReportQuery) -> TxResult<ReportFacts> {
    txn::run(c, Kind::Snapshot, |c, now| in_snapshot(c, now, q)).map_err(Failed::into_tx)
}

fn in_snapshot(c: &mut Conn, now: Millis, q: &ReportQuery) -> TxResult<ReportFacts> {
    let parts = split(q.period.since, q.period.until, q.rows_only);
    let mut rows = Vec::new();
    for (since, until) in parts.edges {
        rows.extend(holds(c, since, until, &q.queue)?);
    }
    let cells = match parts.days {
        Some((first, end)) => cells(c, first, end, &q.queue)?,
        None => Vec::new(),
    };
    let queues = queues(c)?;
    let due = c
        .query(
            "SELECT q.name, \
             (SELECT count(*) FROM items i WHERE i.queue = q.name AND i.state = 'open' \
              AND i.due_at IS NOT NULL AND i.due_at < $1), \
             (SELECT count(*) FROM items i WHERE i.queue = q.name AND i.state = 'open' \
              AND i.due_at IS NOT NULL AND i.due_at >= $1 AND i.due_at < $2) \
             FROM queues q",
            &[&now, &(now + 3_600_000)],
        )?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let merged = c
        .query(MERGED, &[&q.period.since, &q.period.until])?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
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
fn cells(
    c: &mut Conn,
    first: Millis,
    end: Millis,
    queue: &Option<String>,
) -> TxResult<Vec<DayCell>> {
    Ok(c.query(
        "SELECT day, queue, holder, completed, failed, skipped, released, lost, held_ms, \
             finishes FROM figure_days WHERE day >= $1 AND day < $2 \
             AND ($3::text IS NULL OR queue = $3)",
        &[&first, &end, queue],
    )?
    .iter()
    .map(|r| DayCell {
        day: r.get(0),
        queue: r.get(1),
        holder: r.get(2),
        completed: r.get(3),
        failed: r.get(4),
        skipped: r.get(5),
        released: r.get(6),
        lost: r.get(7),
        held_ms: r.get(8),
        finishes: r.get(9),
    })
    .collect())
}

/// The holds that ended in `[since, until)`.
fn holds(
    c: &mut Conn,
    since: Millis,
    until: Millis,
    queue: &Option<String>,
) -> TxResult<Vec<HoldRow>> {
    Ok(c.query(
        "SELECT queue, holder, started, ended, how, handle_ms, own_ms, wait_ms, cycle_ms, \
             late_ms FROM holds WHERE ended >= $1 AND ended < $2 \
             AND ($3::text IS NULL OR queue = $3)",
        &[&since, &until, queue],
    )?
    .iter()
    .map(|r| HoldRow {
        queue: r.get(0),
        holder: r.get(1),
        started: r.get(2),
        ended: r.get(3),
        how: r.get(4),
        handle_ms: r.get(5),
        own_ms: r.get(6),
        wait_ms: r.get(7),
        cycle_ms: r.get(8),
        late_ms: r.get(9),
    })
    .collect())
}
