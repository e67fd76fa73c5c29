//! The supervisors' figures on PostgreSQL: the holds that ended in the period and each
//! queue's due counts, read in one `REPEATABLE READ READ ONLY` transaction (one snapshot).

use super::open::{Conn, TxResult};
use super::reads::queues;
use crate::store::figures::{HoldRow, ReportFacts, ReportQuery};

/// The facts, from one snapshot, at the server's now.
pub(super) fn facts(c: &mut Conn, q: &ReportQuery) -> TxResult<ReportFacts> {
    c.client
        .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?;
    let out = in_snapshot(c, q);
    if !c.client.is_closed() {
        let _ = c
            .client
            .batch_execute(if out.is_ok() { "COMMIT" } else { "ROLLBACK" });
    }
    out
}

fn in_snapshot(c: &mut Conn, q: &ReportQuery) -> TxResult<ReportFacts> {
    let now = c.now()?;
    let rows = c
        .query(
            "SELECT queue, holder, started, ended, how, handle_ms, own_ms, wait_ms, cycle_ms, \
             late_ms FROM holds WHERE ended >= $1 AND ended < $2 \
             AND ($3::text IS NULL OR queue = $3)",
            &[&q.period.since, &q.period.until, &q.queue],
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
        .collect();
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
    Ok(ReportFacts {
        now,
        queues,
        rows,
        due,
    })
}
