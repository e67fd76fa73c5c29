//! `caseload metrics` on PostgreSQL: every fact read in one `REPEATABLE READ READ ONLY`
//! transaction, at the server's now (see [`crate::store::metrics`]).

use super::open::{Conn, TxResult};
use super::reads::queues;
use super::txn::{self, Failed, Kind};
use crate::domain::Millis;
use crate::store::metrics::{COUNTS, DUE, LOCKS, MetricsFacts, OLDEST_OPEN, TOTALS, per_queue};

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
    let mut locks = Vec::new();
    for q in &queues {
        locks.extend(
            c.query(LOCKS, &[&q.name])?
                .iter()
                .map(|r| (r.get(0), r.get(1))),
        );
    }
    let totals = c
        .query(TOTALS, &[])?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
        .collect();
    // Both questions go to the one connection, one at a time.
    let conn = std::cell::RefCell::new(&mut *c);
    let per_queue = per_queue(
        &queues,
        now,
        |q, now, soon| -> TxResult<(i64, i64)> {
            let r = conn.borrow_mut().query_one(DUE, &[&q, &now, &soon])?;
            Ok((r.get(0), r.get(1)))
        },
        |q| -> TxResult<Option<Millis>> {
            Ok(conn.borrow_mut().query_one(OLDEST_OPEN, &[&q])?.get(0))
        },
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
