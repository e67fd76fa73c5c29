//! The figures of `caseload metrics`, per queue, for a monitoring system scraping every
//! 15 s: cheap at a million items (kept counts, the held locks from their own index,
//! index range counts, a skip scan for the oldest open item, and the kept per-queue totals
//! for the counters).
//! Assembled once for both backends from the facts each reads ([`MetricsFacts`]).

use crate::domain::lock::ASSIGNED;
use crate::domain::{Millis, QueueSettings};

/// How far ahead an open item counts as due soon.
pub const DUE_SOON_MS: Millis = 24 * 3_600_000;

/// One queue's figures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueMetrics {
    pub queue: String,
    /// Items by state from the kept counts: every state the database knows, so a new one
    /// (parked, in review) shows here as soon as items are in it.
    pub states: Vec<(String, u64)>,
    /// Open items (held ones included).
    pub open: u64,
    /// Locks held with their clock running, expired ones included.
    pub held: u64,
    /// Held locks older than the queue's lock time.
    pub expired: u64,
    /// Items assigned to someone who has not opened them yet (no lock clock).
    pub assigned: u64,
    /// Items parked by their holder until a time (no lock; see `store::ops::park`).
    pub parked: u64,
    /// Age of the oldest open item, in ms (`None` when nothing is open).
    pub oldest_open_ms: Option<Millis>,
    /// Open items due within [`DUE_SOON_MS`], not yet overdue.
    pub due_soon: u64,
    /// Open items past their due time.
    pub overdue: u64,
    /// Totals since the database began, from the holds the events ended (monotonic; kept
    /// per queue in `queue_totals`): completions, failures, holds ended, and the time
    /// those holds lasted.
    pub completed: u64,
    pub failed: u64,
    pub holds: u64,
    pub held_ms: u64,
}

/// `caseload metrics`: when, and each queue's figures, by queue name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Metrics {
    pub at: Millis,
    pub queues: Vec<QueueMetrics>,
}

/// One queue's facts: (queue, overdue, due soon, oldest open item's creation).
pub(crate) type QueueFacts = (String, i64, i64, Option<Millis>);

/// What a backend reads, in one snapshot, for [`Metrics`].
#[derive(Debug, Default)]
pub(crate) struct MetricsFacts {
    pub now: Millis,
    pub queues: Vec<QueueSettings>,
    /// Kept counts: (queue, state, n).
    pub counts: Vec<(String, String, i64)>,
    /// Held locks of the known queues: (queue, lock_expires_at).
    pub locks: Vec<(String, Millis)>,
    pub per_queue: Vec<QueueFacts>,
    /// Kept totals: (queue, completed, failed, holds, held_ms).
    pub totals: Vec<(String, i64, i64, i64, i64)>,
}

/// The kept counts by queue and state.
pub const COUNTS: &str = "SELECT queue, state, CAST(sum(n) AS BIGINT) FROM item_counts \
     GROUP BY queue, state";

/// A queue's (`$1`) held locks (as many as people at work), read from their index alone
/// (`items_held`; asked per queue, so that no plan prefers the index by holder): each
/// with its expiry.
pub const LOCKS: &str =
    "SELECT queue, lock_expires_at FROM items WHERE queue = $1 AND lock_user IS NOT NULL";

/// A queue's (`$1`) open items due before `$3`, and of those the ones due before `$2`
/// (overdue), counted in its due index.
pub const DUE: &str = "SELECT coalesce(sum(CASE WHEN due_at < $2 THEN 1 ELSE 0 END), 0), \
     count(*) FROM items \
     WHERE queue = $1 AND state = 'open' AND due_at IS NOT NULL AND due_at < $3";

/// A queue's (`$1`) oldest open item's creation time: a skip scan of the take-order index
/// over the queue's few distinct priorities, the first entry of each.
pub const OLDEST_OPEN: &str = "WITH RECURSIVE p(prio) AS ( \
       SELECT max(priority) FROM items WHERE queue = $1 AND state = 'open' \
       UNION ALL \
       SELECT (SELECT max(priority) FROM items \
               WHERE queue = $1 AND state = 'open' AND priority < p.prio) \
       FROM p WHERE p.prio IS NOT NULL) \
     SELECT min((SELECT created_at FROM items \
                 WHERE queue = $1 AND state = 'open' AND priority = p.prio \
                 ORDER BY created_at LIMIT 1)) \
     FROM p WHERE p.prio IS NOT NULL";

/// The kept totals by queue (one row per queue on SQLite, a few shards on PostgreSQL).
pub const TOTALS: &str = "SELECT queue, CAST(sum(completed) AS BIGINT), \
     CAST(sum(failed) AS BIGINT), CAST(sum(holds) AS BIGINT), CAST(sum(held_ms) AS BIGINT) \
     FROM queue_totals GROUP BY queue";

/// The per-queue facts, asked of a backend one queue at a time: `due(queue, now,
/// soon)` runs [`DUE`] (overdue, due before `soon`), `oldest(queue)` [`OLDEST_OPEN`].
pub(crate) fn per_queue<E>(
    queues: &[QueueSettings],
    now: Millis,
    mut due: impl FnMut(&str, Millis, Millis) -> std::result::Result<(i64, i64), E>,
    mut oldest: impl FnMut(&str) -> std::result::Result<Option<Millis>, E>,
) -> std::result::Result<Vec<QueueFacts>, E> {
    queues
        .iter()
        .map(|q| {
            let (overdue, before_soon) = due(&q.name, now, now + DUE_SOON_MS)?;
            Ok((
                q.name.clone(),
                overdue,
                before_soon - overdue,
                oldest(&q.name)?,
            ))
        })
        .collect()
}

fn count(n: i64) -> u64 {
    n.max(0) as u64
}

/// The figures from the facts: one entry per known queue, by name.
pub(crate) fn assemble(f: MetricsFacts) -> Metrics {
    let mut queues: Vec<QueueMetrics> = f
        .queues
        .iter()
        .map(|q| QueueMetrics {
            queue: q.name.clone(),
            ..QueueMetrics::default()
        })
        .collect();
    queues.sort_by(|a, b| a.queue.cmp(&b.queue));
    let find = |qs: &[QueueMetrics], name: &str| -> Option<usize> {
        qs.binary_search_by(|q| q.queue.as_str().cmp(name)).ok()
    };
    for (queue, state, n) in &f.counts {
        if let Some(i) = find(&queues, queue) {
            let q = &mut queues[i];
            match state.as_str() {
                "open" => q.open += count(*n),
                "parked" => q.parked += count(*n),
                _ => {}
            }
            match q.states.iter_mut().find(|(s, _)| s == state) {
                Some((_, c)) => *c += count(*n),
                None => q.states.push((state.clone(), count(*n))),
            }
        }
    }
    for (queue, expires) in &f.locks {
        let Some(i) = find(&queues, queue) else {
            continue;
        };
        let q = &mut queues[i];
        if *expires >= ASSIGNED {
            q.assigned += 1;
        } else {
            q.held += 1;
            // The claim's rule: a lock is expired when lock_expires_at <= now.
            if *expires <= f.now {
                q.expired += 1;
            }
        }
    }
    for (queue, overdue, soon, oldest) in &f.per_queue {
        if let Some(i) = find(&queues, queue) {
            let q = &mut queues[i];
            q.overdue = count(*overdue);
            q.due_soon = count(*soon);
            q.oldest_open_ms = oldest.map(|c| (f.now - c).max(0));
        }
    }
    for (queue, completed, failed, holds, held_ms) in &f.totals {
        if let Some(i) = find(&queues, queue) {
            let q = &mut queues[i];
            q.completed += count(*completed);
            q.failed += count(*failed);
            q.holds += count(*holds);
            q.held_ms += count(*held_ms);
        }
    }
    for q in &mut queues {
        q.states.sort();
    }
    Metrics { at: f.now, queues }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(name: &str, lock_seconds: i64) -> QueueSettings {
        QueueSettings {
            lock_seconds,
            ..QueueSettings::new(name)
        }
    }

    #[test]
    fn figures_are_assembled_per_queue() {
        let now = 10_000_000;
        let m = assemble(MetricsFacts {
            now,
            queues: vec![queue("b", 60), queue("a", 600)],
            counts: vec![
                ("a".into(), "open".into(), 3),
                ("a".into(), "open".into(), 2),
                ("a".into(), "done".into(), 7),
                ("a".into(), "parked".into(), 2),
                ("gone".into(), "open".into(), 1),
            ],
            locks: vec![
                ("a".into(), now - 1_000 + 600_000),
                ("a".into(), now - 700_000 + 600_000),
                ("a".into(), ASSIGNED),
                ("b".into(), now - 61_000 + 60_000),
                // Taken under a longer age than b's now: it keeps it.
                ("b".into(), now + 1_000),
            ],
            per_queue: vec![
                ("a".into(), 1, 2, Some(now - 5_000)),
                ("b".into(), 0, 0, None),
            ],
            totals: vec![("a".into(), 4, 1, 9, 123_000)],
        });
        assert_eq!(m.queues.len(), 2);
        let a = &m.queues[0];
        assert_eq!(a.queue, "a");
        assert_eq!(
            (a.open, a.held, a.expired, a.assigned, a.parked),
            (5, 2, 1, 1, 2)
        );
        assert_eq!(
            a.states,
            [("done".into(), 7), ("open".into(), 5), ("parked".into(), 2)]
        );
        assert_eq!(
            (a.overdue, a.due_soon, a.oldest_open_ms),
            (1, 2, Some(5_000))
        );
        assert_eq!(
            (a.completed, a.failed, a.holds, a.held_ms),
            (4, 1, 9, 123_000)
        );
        let b = &m.queues[1];
        assert_eq!((b.held, b.expired, b.oldest_open_ms), (2, 1, None));
    }
}
