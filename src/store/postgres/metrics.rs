//! `caseload metrics` on PostgreSQL: every fact read by one statement (one snapshot), at
//! the server's now (see [`crate::store::metrics`]). The due counts sum the kept counts
//! per hour of due time (`due_hours`, migration 26) and count in the due index only the
//! two partial hours at the edges, so that no statement walks every due item's index
//! entry.
//!
//! The statement runs in a transaction of its own with JIT compilation off: its plan
//! repeats a few subqueries per queue, and where the planner's estimates are large (a
//! new schema not yet analyzed, many queues) its cost passes `jit_above_cost`, and
//! compiling it took seconds for what runs in milliseconds. Four round trips in all
//! (begin, the setting, the statement, commit) where there were one per statement and
//! queue (14 with three queues).

use super::open::{Conn, TxResult};
use super::txn::{self, Failed, Kind};
use crate::domain::{Millis, QueueSettings};
use crate::store::metrics::{COUNTS, DUE_SOON_MS, LOCKS, MetricsFacts, OLDEST_OPEN, TOTALS};

/// One hour in ms: the width of a `due_hours` bucket.
const HOUR_MS: i64 = 3_600_000;

/// The statement, at the server's now (`now_sql`: the connection's `SELECT <now in ms>`).
/// Rows, each tagged by its first column: `q` one per queue (overdue, due before now + 24
/// h, oldest open item's creation, now), `c` the kept counts (state, n), `l` the held locks
/// (expiry), `t` the kept totals (completed, failed, holds, held ms).
///
/// A queue's open items due before a time T are the kept counts of the whole hours before
/// T's hour plus the items of T's hour due before T, counted in `items_queue_due`:
/// overdue with T = now, due before soon with T = now + 24 h.
pub(super) fn metrics_sql(now_sql: &str) -> String {
    let edge = |from: &str, to: &str| {
        format!(
            "(SELECT count(*) FROM items i WHERE i.queue = q.name AND i.state = 'open' \
             AND i.due_at IS NOT NULL AND i.due_at >= {from} * {HOUR_MS} AND i.due_at < {to})"
        )
    };
    format!(
        "WITH t AS (SELECT ({now_sql}) AS now), \
         h AS (SELECT now, now + {DUE_SOON_MS} AS soon, now / {HOUR_MS} AS h0, \
               (now + {DUE_SOON_MS}) / {HOUR_MS} AS h1 FROM t) \
         SELECT 'q' AS what, q.name AS queue, NULL::text AS state, \
             d.overdue + {} AS a, d.before_soon + {} AS b, ({}) AS c, h.now AS d \
         FROM h CROSS JOIN queues q \
         CROSS JOIN LATERAL (SELECT \
             coalesce(sum(n) FILTER (WHERE hour < h.h0), 0)::bigint AS overdue, \
             coalesce(sum(n), 0)::bigint AS before_soon \
             FROM due_hours WHERE queue = q.name AND hour < h.h1) d \
         UNION ALL SELECT 'c', x.queue, x.state, x.n, NULL, NULL, NULL \
         FROM ({COUNTS}) x(queue, state, n) \
         UNION ALL SELECT 'l', q.name, NULL, l.expires, NULL, NULL, NULL \
         FROM queues q CROSS JOIN LATERAL ({}) l(queue, expires) \
         UNION ALL SELECT 't', x.queue, NULL, x.completed, x.failed, x.holds, x.held_ms \
         FROM ({TOTALS}) x(queue, completed, failed, holds, held_ms)",
        edge("h.h0", "h.now"),
        edge("h.h1", "h.soon"),
        OLDEST_OPEN.replace("$1", "q.name"),
        LOCKS.replace("$1", "q.name"),
    )
}

pub(super) fn facts(c: &mut Conn) -> TxResult<MetricsFacts> {
    txn::run(c, Kind::Read, |c, _| {
        c.client.batch_execute("SET LOCAL jit = off")?;
        read(c)
    })
    .map_err(Failed::into_tx)
}

fn read(c: &mut Conn) -> TxResult<MetricsFacts> {
    let sql = metrics_sql(&c.now_sql);
    let mut f = MetricsFacts::default();
    let mut now = None;
    for r in c.query(&sql, &[])? {
        let what: &str = r.get(0);
        let queue: String = r.get(1);
        match what {
            "q" => {
                let (overdue, before_soon): (i64, i64) = (r.get(3), r.get(4));
                now = Some(r.get::<_, Millis>(6));
                f.queues.push(QueueSettings::new(&queue));
                f.per_queue
                    .push((queue, overdue, before_soon - overdue, r.get(5)));
            }
            "c" => f.counts.push((queue, r.get(2), r.get(3))),
            "l" => f.locks.push((queue, r.get(3))),
            _ => f
                .totals
                .push((queue, r.get(3), r.get(4), r.get(5), r.get(6))),
        }
    }
    f.now = match now {
        Some(now) => now,
        // No queue: the figures are empty, and the time is still the server's.
        None => c.now()?,
    };
    Ok(f)
}

/// The kept due counts as the items give them: (queue, hour, shard, n).
pub(super) const DUE_HOURS_RECOUNT: &str = "SELECT queue, floor(due_at / 3600000.0)::bigint, \
     (id % 16)::integer, count(*) FROM items WHERE state = 'open' AND due_at IS NOT NULL \
     GROUP BY 1, 2, 3";

/// The queues whose kept due counts (`due_hours`) disagree with a recount of the items:
/// a row missing, extra (a row of 0 included: the trigger deletes those) or off, shard
/// by shard.
pub(super) fn due_hours_check_sql() -> String {
    format!(
        "SELECT DISTINCT q FROM (SELECT q, h, s, n FROM ( \
         SELECT queue AS q, hour AS h, shard AS s, n, 1 AS side FROM due_hours \
         UNION ALL SELECT r.*, 2 FROM ({DUE_HOURS_RECOUNT}) r) u \
         GROUP BY q, h, s, n HAVING count(*) <> 2 OR min(side) = max(side)) x \
         ORDER BY q LIMIT {}",
        crate::store::check::LIMIT
    )
}

/// The finding for a queue whose kept due counts disagree with its items, and how to
/// repair them.
pub(super) fn due_hours_finding(queue: &str) -> String {
    format!(
        "metrics due counts: the kept due counts of queue '{}' disagree with its items \
         (`caseload metrics` counts its overdue or due-soon items wrong; a supervisor's \
         `caseload check --repair-figures` rebuilds them)",
        crate::domain::sanitize::line(queue),
    )
}
