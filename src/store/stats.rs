//! The figures of `caseload stats` and the Stats view, assembled once for both backends
//! from the facts each reads in one consistent snapshot.

use serde::Serialize;

use crate::domain::time::ser_rfc3339;
use crate::domain::{ItemState, Millis, QueueSettings};

/// The figures of `caseload stats` and the Stats view.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// When the figures were taken (RFC 3339 in JSON).
    #[serde(serialize_with = "ser_rfc3339")]
    pub at: Millis,
    pub by_state: Vec<StateCount>,
    pub by_queue: Vec<QueueCount>,
    pub locked: u64,
    pub expired: u64,
    pub overdue: u64,
    /// Completions per hour, oldest first, the last entry being the current hour.
    pub completed_per_hour: Vec<u64>,
    /// Open items by age: labels and counts.
    pub open_ages: Vec<Bucket>,
    /// Held locks by age.
    pub lock_ages: Vec<Bucket>,
    pub wip: Vec<UserWip>,
    pub oldest_open: Option<OldestItem>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StateCount {
    pub state: ItemState,
    pub count: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueueCount {
    pub queue: String,
    pub open: u64,
    pub locked: u64,
    pub done: u64,
    pub failed: u64,
    pub cancelled: u64,
    /// Completed by their makers, waiting for a second person.
    pub review: u64,
    pub paused: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bucket {
    pub label: String,
    pub count: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserWip {
    pub user: String,
    pub held: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OldestItem {
    pub id: i64,
    pub title: String,
    #[serde(serialize_with = "ser_rfc3339")]
    pub created_at: Millis,
}

/// Age buckets shared by the open-item and lock-age histograms, in milliseconds.
pub(crate) const AGE_BUCKETS: [(&str, i64); 6] = [
    ("<5m", 5 * 60_000),
    ("<30m", 30 * 60_000),
    ("<2h", 2 * 3_600_000),
    ("<1d", 86_400_000),
    ("<1w", 7 * 86_400_000),
    (">=1w", i64::MAX),
];

/// What a backend reads, in one snapshot, for [`Stats`].
pub(crate) struct StatsFacts {
    pub now: Millis,
    pub queues: Vec<QueueSettings>,
    /// Kept counts: (queue, state, n), several rows per pair allowed (summed).
    pub counts: Vec<(String, String, i64)>,
    /// Held locks: (holder, queue, lock_time, lock_expires_at).
    pub locks: Vec<(String, String, Millis, Millis)>,
    pub overdue: i64,
    /// Completions per hour: (hours since [`first_hour`], n).
    pub completions: Vec<(i64, i64)>,
    /// Open items per [`AGE_BUCKETS`] bucket, in order.
    pub open_ages: Vec<i64>,
    pub oldest_open: Option<OldestItem>,
}

/// The first hour (hours since the epoch) of the 24 the completions cover.
pub(crate) fn first_hour(now: Millis) -> i64 {
    now.div_euclid(3_600_000) - 23
}

/// The creation-time range `(after, before)` of each open-age bucket, exclusive.
pub(crate) fn age_ranges(now: Millis) -> Vec<(Millis, Millis)> {
    let mut prev = now + 1;
    AGE_BUCKETS
        .iter()
        .map(|&(_, lim)| {
            let lower = if lim == i64::MAX { i64::MIN } else { now - lim };
            let range = (lower, prev);
            prev = lower + 1;
            range
        })
        .collect()
}

fn buckets(counts: impl IntoIterator<Item = u64>) -> Vec<Bucket> {
    AGE_BUCKETS
        .iter()
        .zip(counts)
        .map(|((label, _), count)| Bucket {
            label: label.to_string(),
            count,
        })
        .collect()
}

/// The figures from the facts.
pub(crate) fn assemble(f: StatsFacts) -> Stats {
    let now = f.now;
    let (by_state, mut by_queue) = count_states(&f);
    let mut locks = f.locks;
    locks.sort();
    let mut wip: Vec<UserWip> = Vec::new();
    let mut expired = 0u64;
    let mut lock_ages = [0u64; AGE_BUCKETS.len()];
    for (user, queue, time, expires) in &locks {
        if let Some(qc) = by_queue.iter_mut().find(|q| &q.queue == queue) {
            qc.locked += 1;
        }
        match wip.last_mut() {
            Some(w) if &w.user == user => w.held += 1,
            _ => wip.push(UserWip {
                user: user.clone(),
                held: 1,
            }),
        }
        if now >= *expires {
            expired += 1;
        }
        // An assignment runs no clock until it is opened: it has no age yet.
        if *time >= crate::domain::lock::ASSIGNED {
            continue;
        }
        let age = now - time;
        let i = AGE_BUCKETS
            .iter()
            .position(|(_, lim)| age < *lim)
            .unwrap_or(AGE_BUCKETS.len() - 1);
        lock_ages[i] += 1;
    }
    let mut completed_per_hour = vec![0u64; 24];
    for (h, n) in f.completions {
        if let Some(slot) = usize::try_from(h)
            .ok()
            .and_then(|h| completed_per_hour.get_mut(h))
        {
            *slot = n.max(0) as u64;
        }
    }
    Stats {
        at: now,
        by_state,
        by_queue,
        locked: locks.len() as u64,
        expired,
        overdue: f.overdue.max(0) as u64,
        completed_per_hour,
        open_ages: buckets(f.open_ages.into_iter().map(|n| n.max(0) as u64)),
        lock_ages: buckets(lock_ages),
        wip,
        oldest_open: f.oldest_open,
    }
}

/// Items by state, and by queue and state, from the stored counts.
fn count_states(f: &StatsFacts) -> (Vec<StateCount>, Vec<QueueCount>) {
    let mut by_state: Vec<StateCount> = ItemState::ALL
        .iter()
        .map(|s| StateCount {
            state: *s,
            count: 0,
        })
        .collect();
    let mut by_queue: Vec<QueueCount> = f
        .queues
        .iter()
        .map(|q| QueueCount {
            queue: q.name.clone(),
            open: 0,
            locked: 0,
            done: 0,
            failed: 0,
            cancelled: 0,
            review: 0,
            paused: q.paused,
        })
        .collect();
    for (queue, state, n) in &f.counts {
        let n = (*n).max(0) as u64;
        // A state caseload does not know is reported by `check`, not counted here.
        let Some(st) = ItemState::parse(state) else {
            continue;
        };
        if let Some(sc) = by_state.iter_mut().find(|s| s.state == st) {
            sc.count += n;
        }
        if let Some(qc) = by_queue.iter_mut().find(|q| &q.queue == queue) {
            match st {
                // Parked items are open work, kept for their owner.
                ItemState::Open | ItemState::Parked => qc.open += n,
                ItemState::Done => qc.done += n,
                ItemState::Failed => qc.failed += n,
                ItemState::Cancelled => qc.cancelled += n,
                ItemState::Review => qc.review += n,
            }
        }
    }
    (by_state, by_queue)
}
