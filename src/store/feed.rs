//! The event feed behind `caseload events`: the audit trail in id order, which a consumer
//! resumes from the last id it processed with no event skipped and none repeated.
//!
//! Reading `id > last` is only exact when no event with a smaller id can still appear.
//! On SQLite writers are serialised (`BEGIN IMMEDIATE`) and an event's id is one more than
//! the largest committed one, so ids are handed out in commit order: every id below a
//! visible one is visible too, and the horizon is simply the largest id.
//!
//! On PostgreSQL an identity hands out 41 and 42 to two transactions and 42 may commit
//! first: a reader that saw 42 and moved on would miss 41 forever. Filtering on "written
//! by a transaction older than the snapshot's xmin" is not enough either: the transaction
//! with the older xid can take the newer id. The feed therefore reads only up to a
//! *horizon* that is final, in two steps:
//!
//! 1. A mark: in one statement, the largest id L visible in its snapshot S, then (read
//!    live, after S was taken) the transactions W that hold a `RowExclusiveLock` on the
//!    events table. A transaction takes that lock when its INSERT is parsed, before the
//!    identity gives its row an id, and keeps it until it ends; ids are handed out in
//!    order (the identity's cache is 1). So a transaction that took an id ≤ L either had
//!    committed before S (its events are visible), or has ended since, or is in W.
//! 2. Once none of W holds the lock any more, every id ≤ L is committed (and visible to
//!    any later statement) or rolled back for good: L is final. When W is empty at the
//!    mark, L is final at once.
//!
//! Only transactions that write events on this database's table are waited for: a long
//! transaction elsewhere on the server delays nothing. [`Horizon`] keeps the marks not
//! yet final and says how far the feed may read; the backends only fetch the facts
//! ([`FeedMark`]) and the events ([`FeedEvent`]); [`Feed`] reads page by page.

use std::collections::VecDeque;

use crate::domain::Event;
use crate::store::Reads;
use crate::store::error::{Result, StoreError};
use crate::store::rows::{Cells, event_from};

/// An event with its item's current queue and title (read when the feed is read).
#[derive(Debug, Clone, PartialEq)]
pub struct FeedEvent {
    pub event: Event,
    pub queue: String,
    pub title: String,
}

/// A feed event from the event columns (as [`event_from`]) followed by the item's queue
/// and title.
pub(crate) fn feed_event_from(c: &mut impl Cells) -> Result<FeedEvent> {
    Ok(FeedEvent {
        event: event_from(c)?,
        queue: c.text(7, "queue")?,
        title: c.text(8, "title")?,
    })
}

/// What a backend knows, in one statement, about the events committed so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedMark {
    /// The largest event id visible (0 when there are none).
    pub last_id: i64,
    /// PostgreSQL: the transactions (virtual transaction ids) that held a lock for writing
    /// events when the mark was taken, after its snapshot. `None` where writers commit in
    /// id order (SQLite): `last_id` is final at once.
    pub writers: Option<Vec<String>>,
}

/// How many marks wait for their transactions at most; past that, the newest replaces the
/// last (a later, larger mark is final later: only slower, never wrong).
const MAX_PENDING: usize = 64;

/// The feed's horizon: the largest id up to which every event is final.
#[derive(Debug, Default, Clone)]
pub struct Horizon {
    /// Marks not yet final: (last id, the writers it waits for), ids increasing.
    pending: VecDeque<(i64, Vec<String>)>,
    safe: i64,
}

impl Horizon {
    /// A horizon that starts at `after` (the last id the consumer processed).
    pub fn starting_at(after: i64) -> Self {
        Horizon {
            pending: VecDeque::new(),
            safe: after,
        }
    }

    /// Takes a new mark into account; returns the id up to which the feed may now read.
    pub fn observe(&mut self, mark: FeedMark) -> i64 {
        let Some(writers) = mark.writers else {
            self.safe = self.safe.max(mark.last_id);
            return self.safe;
        };
        // A pending mark whose writers all ended (none holds the lock now) is final, and
        // so is every id below it.
        for (l, waits_for) in &self.pending {
            if !waits_for.iter().any(|w| writers.contains(w)) {
                self.safe = self.safe.max(*l);
            }
        }
        if writers.is_empty() {
            self.safe = self.safe.max(mark.last_id);
        } else if mark.last_id > self.safe
            && self.pending.back().is_none_or(|(l, _)| mark.last_id > *l)
        {
            if self.pending.len() >= MAX_PENDING {
                self.pending.pop_back();
            }
            self.pending.push_back((mark.last_id, writers));
        }
        let safe = self.safe;
        self.pending.retain(|(l, _)| *l > safe);
        self.safe
    }

    /// Marks wait for transactions still in progress (worth looking again soon).
    pub fn waiting(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The id up to which the feed may read.
    pub fn safe(&self) -> i64 {
        self.safe
    }
}

/// How many events one read returns at most.
pub const PAGE: usize = 1000;

/// A reader of the feed: where it is (the last id handled) and its [`Horizon`]. A
/// consumer that restarts makes a new one after the last id it processed.
#[derive(Debug, Clone)]
pub struct Feed {
    cursor: i64,
    horizon: Horizon,
    page: usize,
}

impl Feed {
    /// A feed of the events after id `after`.
    pub fn after(after: i64) -> Self {
        Self::paged(after, PAGE)
    }

    /// [`Feed::after`] reading at most `page` events at a time.
    pub fn paged(after: i64, page: usize) -> Self {
        Feed {
            cursor: after,
            horizon: Horizon::starting_at(after),
            page: page.max(1),
        }
    }

    /// The last id handled: every event up to it was given to `each`, or will never exist.
    pub fn cursor(&self) -> i64 {
        self.cursor
    }

    /// A mark waits for transactions in progress: worth polling again soon.
    pub fn waiting(&self) -> bool {
        self.horizon.waiting()
    }

    /// Reads every event that became final since the last call, oldest first, a page at
    /// a time: `page` gets each page; the cursor moves past it when `page` succeeds, so a
    /// failed page is read again by the next poll. Returns the largest id visible.
    pub fn poll<R, E>(
        &mut self,
        s: &mut R,
        page: &mut dyn FnMut(&[FeedEvent]) -> std::result::Result<(), E>,
    ) -> std::result::Result<i64, E>
    where
        R: Reads + ?Sized,
        E: From<StoreError>,
    {
        let mark = s.feed_mark()?;
        let last = mark.last_id;
        let upto = self.horizon.observe(mark);
        while self.cursor < upto {
            let events = s.feed(self.cursor, upto, self.page)?;
            page(&events)?;
            self.cursor = match events.last() {
                Some(e) if events.len() == self.page => e.event.id,
                // Ids up to the horizon that are not here were rolled back: never coming.
                _ => upto,
            };
        }
        Ok(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg(last_id: i64, writers: &[&str]) -> FeedMark {
        FeedMark {
            last_id,
            writers: Some(writers.iter().map(|w| w.to_string()).collect()),
        }
    }

    #[test]
    fn sqlite_marks_are_final_at_once() {
        let mut h = Horizon::starting_at(5);
        let mark = |last_id| FeedMark {
            last_id,
            writers: None,
        };
        assert_eq!(h.observe(mark(9)), 9);
        assert!(!h.waiting());
        assert_eq!(h.observe(mark(3)), 9, "never backwards");
    }

    #[test]
    fn a_mark_waits_for_the_writers_in_progress_at_its_snapshot() {
        let mut h = Horizon::starting_at(0);
        // 42 is visible, 3/7 (which may hold 41) and 4/9 are still writing.
        assert_eq!(h.observe(pg(42, &["3/7", "4/9"])), 0);
        assert!(h.waiting());
        // 3/7 ended, 4/9 still writes; 5/2 began (it holds ids above 42 only).
        assert_eq!(h.observe(pg(50, &["4/9", "5/2"])), 0);
        // Both of the first mark's writers ended: 42 is final; 50 waits for 5/2.
        assert_eq!(h.observe(pg(50, &["5/2", "6/1"])), 42);
        assert!(h.waiting());
        assert_eq!(h.observe(pg(51, &["6/1"])), 50);
        assert_eq!(h.observe(pg(51, &[])), 51);
        assert!(!h.waiting());
    }

    #[test]
    fn with_no_writer_the_mark_is_final() {
        let mut h = Horizon::starting_at(0);
        assert_eq!(h.observe(pg(7, &[])), 7);
        assert!(!h.waiting());
    }

    #[test]
    fn a_stuck_writer_keeps_a_bounded_list() {
        let mut h = Horizon::starting_at(0);
        for i in 1..1000 {
            h.observe(pg(i, &["1/1", &format!("2/{i}")]));
        }
        assert!(h.pending.len() <= MAX_PENDING);
        assert_eq!(h.observe(pg(1000, &["3/3"])), 999);
    }
}
