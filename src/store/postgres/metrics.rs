//! `caseload metrics` on PostgreSQL: every fact read in one `REPEATABLE READ READ ONLY`
//! transaction, at the server's now (see [`crate::store::metrics`]).

use super::open::{Conn, TxResult};
use super::reads::queues;
use super::txn::{self, Failed, Kind};
use crate::domain::Millis;
use crate::store::metrics::{
    COUNTS, DUE_BEFORE, DUE_SOON_MS, LOCKS, MetricsFacts, OLDEST_OPEN, TOTALS,
};

pub(super) fn facts(c: &mut Conn) -> TxResult<MetricsFacts> {
    txn::run(c, Kind::Snapshot, in_snapshot).map_err(Failed::into_tx)
}

fn in_snapshot(c: &mut Conn, now: Millis) -> TxResult<MetricsFacts> {
    let queues = queues(c)?;
    let counts = c
        .query(COUNTS, &[])?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let locks = c
        .query(LOCKS, &[])?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let totals = c
        .query(TOTALS, &[])?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
        .collect();
    let mut per_queue = Vec::with_capacity(queues.len());
    for q in &queues {
        let overdue: i64 = c.query_one(DUE_BEFORE, &[&q.name, &now])?.get(0);
        let soon: i64 = c
            .query_one(DUE_BEFORE, &[&q.name, &(now + DUE_SOON_MS)])?
            .get(0);
        let first: Option<Millis> = c.query_one(OLDEST_OPEN, &[&q.name])?.get(0);
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
