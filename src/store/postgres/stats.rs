//! The Stats figures on PostgreSQL: every fact read in one `REPEATABLE READ READ ONLY`
//! transaction, so all of them come from the same snapshot.

use super::open::{Conn, TxResult};
use super::reads::queues;
use super::txn::{self, Failed, Kind};
use crate::domain::Millis;
use crate::store::OldestItem;
use crate::store::stats::{StatsFacts, age_ranges, first_hour};

/// The facts, from one snapshot, at the server's now.
pub(super) fn facts(c: &mut Conn) -> TxResult<StatsFacts> {
    txn::run(c, Kind::Snapshot, in_snapshot).map_err(Failed::into_tx)
}

fn in_snapshot(c: &mut Conn, now: Millis) -> TxResult<StatsFacts> {
    let counts = c
        .query(
            "SELECT queue, state, sum(n)::bigint FROM item_counts GROUP BY queue, state",
            &[],
        )?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let locks = c
        .query(
            "SELECT lock_user, queue, lock_time, lock_expires_at FROM items \
             WHERE lock_user IS NOT NULL",
            &[],
        )?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    let overdue: i64 = c
        .query_one(
            "SELECT count(*) FROM items WHERE state = 'open' AND due_at < $1",
            &[&now],
        )?
        .get(0);
    let completions = c
        .query(
            "SELECT at / 3600000 - $1, count(*) FROM events \
             WHERE kind = 'completed' AND at >= $1 * 3600000 AND at <= $2 GROUP BY 1",
            &[&first_hour(now), &now],
        )?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let mut open_ages = Vec::new();
    for (lower, upper) in age_ranges(now) {
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM items WHERE state = 'open' AND created_at > $1 \
                 AND created_at < $2",
                &[&lower, &upper],
            )?
            .get(0);
        open_ages.push(n);
    }
    let oldest_open = c
        .query_opt(
            "SELECT id, title, created_at FROM items WHERE state = 'open' \
             ORDER BY created_at, id LIMIT 1",
            &[],
        )?
        .map(|r| OldestItem {
            id: r.get(0),
            title: r.get(1),
            created_at: r.get(2),
        });
    Ok(StatsFacts {
        now,
        queues: queues(c)?,
        counts,
        locks,
        overdue,
        completions,
        open_ages,
        oldest_open,
    })
}
