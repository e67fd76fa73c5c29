//! The Store: every read and write of the queue, behind one trait with two backends.
//!
//! The lock protocol (DESIGN section 2) lives in the implementations: every claim is one
//! conditional write in a write transaction, every holder write is fenced by
//! `(id, lock_user, lock_token)`, and every change writes its audit event in the same
//! transaction.

pub mod copy;
pub mod error;
mod holder;
pub mod identity;
pub mod location;
pub use sqlite::migrate;
pub mod postgres;
pub mod sqlite;

use std::path::Path;

use serde::Serialize;

use crate::domain::{
    Actor, Event, Item, ItemState, Millis, NewItem, QueueSettings, QueueUpdate, Role,
};
pub use error::{Result, StoreError, exit};
pub use sqlite::SqliteStore;

/// Which items a list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StateFilter {
    /// Open items in take order (held ones included).
    #[default]
    Open,
    /// Held locks, live or expired, oldest first.
    Locked,
    /// Expired locks, oldest first.
    Expired,
    Done,
    Failed,
    Cancelled,
    /// Everything, by id.
    All,
}

impl StateFilter {
    /// The name the CLI and the `/` filter take.
    pub fn as_str(self) -> &'static str {
        match self {
            StateFilter::Open => "open",
            StateFilter::Locked => "locked",
            StateFilter::Expired => "expired",
            StateFilter::Done => "done",
            StateFilter::Failed => "failed",
            StateFilter::Cancelled => "cancelled",
            StateFilter::All => "all",
        }
    }

    /// Parses the names the CLI takes.
    pub fn parse(s: &str) -> Option<StateFilter> {
        Some(match s {
            "open" => StateFilter::Open,
            "locked" => StateFilter::Locked,
            "expired" => StateFilter::Expired,
            "done" => StateFilter::Done,
            "failed" => StateFilter::Failed,
            "cancelled" => StateFilter::Cancelled,
            "all" => StateFilter::All,
            _ => return None,
        })
    }
}

/// A query over items: what, where, and which window of the result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListFilter {
    pub state: StateFilter,
    pub queue: Option<String>,
    /// Only items locked by this user.
    pub holder: Option<String>,
    /// Text that must appear in the title or body (case-insensitive for ASCII).
    pub text: Option<String>,
    pub limit: usize,
    pub offset: usize,
}

/// Which rows of the whole list a window reads, and from which end.
///
/// A window past the middle of a long list is read from the far end in reverse order, so
/// that `G` and deep paging walk at most half the index. Knowing where the middle is needs
/// the total, which is O(1) only for filters without holder or text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    pub offset: usize,
    pub limit: usize,
    /// Read in reverse order (then reverse the rows).
    pub reversed: bool,
}

/// Offsets beyond this are worth a count to decide from which end to read.
const DEEP_OFFSET: usize = 2_000;

impl Window {
    /// True when planning this filter's window needs the total.
    pub(crate) fn wants_total(f: &ListFilter) -> bool {
        f.offset > DEEP_OFFSET && f.holder.is_none() && f.text.is_none()
    }

    /// The window to read; `None` when it lies past the end.
    pub(crate) fn plan(f: &ListFilter, total: Option<u64>) -> Option<Window> {
        let limit = f.limit.max(1);
        let front = Window {
            offset: f.offset,
            limit,
            reversed: false,
        };
        let Some(total) = total.map(|t| t as usize) else {
            return Some(front);
        };
        if f.offset >= total {
            return None;
        }
        if f.offset * 2 <= total {
            return Some(front);
        }
        let end = (f.offset + limit).min(total);
        Some(Window {
            offset: total - end,
            limit: end - f.offset,
            reversed: true,
        })
    }
}

/// The opposite of an ORDER BY list: `priority DESC, created_at, id` becomes
/// `priority, created_at DESC, id DESC`.
pub(crate) fn reverse_order(order: &str) -> String {
    order
        .split(',')
        .map(|term| {
            let term = term.trim();
            match term.strip_suffix(" DESC") {
                Some(col) => col.to_string(),
                None => format!("{term} DESC"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What `take_next` may take.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TakeNext {
    /// Only this queue (all unpaused queues when `None`).
    pub queue: Option<String>,
    /// Items not to offer again (skipped this session).
    pub skip: Vec<i64>,
}

/// Result of adding an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Added {
    pub id: i64,
    /// False when the request id was already known and the existing item is returned.
    pub created: bool,
}

/// A lock the user lost to someone else's action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostLock {
    pub item_id: i64,
    pub title: String,
    /// taken_over, expired (reaped), unlocked, reassigned or cancelled.
    pub how: crate::domain::EventKind,
    pub by: String,
    pub at: Millis,
    /// The new holder, if someone holds it now.
    pub now_held_by: Option<String>,
}

/// The figures of `caseload stats` and the Stats view.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// When the figures were taken (RFC 3339 in JSON).
    #[serde(serialize_with = "ser_time")]
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

fn ser_time<S: serde::Serializer>(t: &Millis, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&crate::domain::time::rfc3339(*t))
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
    #[serde(serialize_with = "ser_time")]
    pub created_at: Millis,
}

/// Age buckets shared by the open-item and lock-age histograms, in milliseconds.
pub const AGE_BUCKETS: [(&str, i64); 6] = [
    ("<5m", 5 * 60_000),
    ("<30m", 30 * 60_000),
    ("<2h", 2 * 3_600_000),
    ("<1d", 86_400_000),
    ("<1w", 7 * 86_400_000),
    (">=1w", i64::MAX),
];

/// Every read and write of the queue. One implementation per backend; the same
/// conformance tests run against each.
pub trait Store {
    /// Who is acting.
    fn actor(&self) -> &Actor;
    /// Now, by the clock that decides expiry (the host's on SQLite, the server's on
    /// PostgreSQL).
    fn now(&mut self) -> Result<Millis>;
    /// A value that changes whenever anybody commits a change (for live refresh).
    fn change_marker(&mut self) -> Result<u64>;

    /// Adds an item; a known request id returns the existing item's id instead.
    fn add(&mut self, item: &NewItem) -> Result<Added>;
    /// Adds a batch in one short transaction, skipping known request ids; returns how
    /// many were new.
    fn add_batch(&mut self, items: &[NewItem]) -> Result<usize>;

    /// Takes the next free (or expired) item in take order.
    fn take_next(&mut self, opts: &TakeNext) -> Result<Item>;
    /// Takes one chosen item; an item the caller already holds is returned (and its lock
    /// renewed).
    fn take(&mut self, id: i64) -> Result<Item>;
    /// Renews the caller's lock.
    fn renew(&mut self, id: i64, token: i64) -> Result<Item>;
    /// Returns the item to the pool.
    fn release(&mut self, id: i64, token: i64) -> Result<()>;
    /// Releases the item, recorded as skipped.
    fn skip(&mut self, id: i64, token: i64) -> Result<()>;
    /// Saves the holder's working notes.
    fn save_notes(&mut self, id: i64, token: i64, notes: &str) -> Result<()>;
    /// Completes the item with an optional result.
    fn complete(&mut self, id: i64, token: i64, result: Option<&str>) -> Result<()>;
    /// Fails the item with a reason.
    fn fail(&mut self, id: i64, token: i64, reason: &str) -> Result<()>;
    /// Adds a comment to an item's history (no lock needed).
    fn comment(&mut self, id: i64, text: &str) -> Result<()>;
    /// Releases every expired lock; returns how many.
    fn reap(&mut self) -> Result<usize>;

    /// Supervisor: returns a held item to the pool.
    fn unlock(&mut self, id: i64, reason: &str) -> Result<()>;
    /// Supervisor: returns many held items to the pool in one transaction. Each entry is
    /// `(id, lock_token)` as the supervisor saw it; an item whose lock changed since (taken
    /// over, completed, released) is left alone. Returns how many were unlocked.
    ///
    /// This default is composed of `item` and `unlock`, one transaction per item, and is
    /// not fenced atomically (a lock taken over between the two calls is removed): a
    /// backend should override it with one fenced transaction, as SQLite does.
    fn unlock_many(&mut self, locks: &[(i64, i64)], reason: &str) -> Result<usize> {
        if reason.trim().is_empty() {
            return Err(StoreError::Invalid("a reason is required".into()));
        }
        let mut n = 0;
        for &(id, token) in locks {
            match self.item(id) {
                Ok(item) if item.lock_user.is_some() && item.lock_token == token => {
                    match self.unlock(id, reason) {
                        Ok(()) => n += 1,
                        // Finished or released since it was read: left alone.
                        Err(StoreError::Invalid(_) | StoreError::NotFound(_)) => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(_) | Err(StoreError::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }
    /// Supervisor: gives the item's lock to another user.
    fn reassign(&mut self, id: i64, to: &str, reason: &str) -> Result<Item>;
    /// Supervisor: reopens a failed (or cancelled) item.
    fn requeue(&mut self, id: i64) -> Result<()>;
    /// Supervisor: cancels an open item.
    fn cancel(&mut self, id: i64, reason: &str) -> Result<()>;
    /// Supervisor: changes a queue's settings (creating the queue when `create`).
    fn set_queue(
        &mut self,
        name: &str,
        update: &QueueUpdate,
        create: bool,
    ) -> Result<QueueSettings>;
    /// Supervisor: sets a user's role.
    fn set_role(&mut self, user: &str, role: Role) -> Result<()>;

    /// One item.
    fn item(&mut self, id: i64) -> Result<Item>;
    /// An item's events, oldest first.
    fn history(&mut self, id: i64) -> Result<Vec<Event>>;
    /// A window of items.
    fn list(&mut self, filter: &ListFilter) -> Result<Vec<Item>>;
    /// How many items match (ignoring limit and offset).
    fn count(&mut self, filter: &ListFilter) -> Result<u64>;
    /// Every queue's settings.
    fn queues(&mut self) -> Result<Vec<QueueSettings>>;
    /// One queue's settings.
    fn queue(&mut self, name: &str) -> Result<QueueSettings>;
    /// A user's role (staff when unknown).
    fn role(&mut self, user: &str) -> Result<Role>;
    /// The figures of the Stats view.
    fn stats(&mut self) -> Result<Stats>;
    /// When each of these items' current lock was taken (its last `locked`, `taken_over`
    /// or `reassigned` event); items never locked are left out. `lock_time` is the last
    /// renewal, so the Locks view asks this for "held for".
    fn lock_started(&mut self, ids: &[i64]) -> Result<Vec<(i64, Millis)>> {
        let mut out = Vec::new();
        for &id in ids {
            let events = match self.history(id) {
                Ok(h) => h,
                Err(StoreError::NotFound(_)) => continue,
                Err(e) => return Err(e),
            };
            if let Some(e) = events.iter().rev().find(|e| {
                matches!(
                    e.kind,
                    crate::domain::EventKind::Locked
                        | crate::domain::EventKind::TakenOver
                        | crate::domain::EventKind::Reassigned
                )
            }) {
                out.push((id, e.at));
            }
        }
        Ok(out)
    }
    /// Events by one actor since a time, oldest first.
    fn events_by(&mut self, actor: &str, since: Millis) -> Result<Vec<Event>>;
    /// Locks `user` lost to others since a time, newest first.
    fn lost_locks(&mut self, user: &str, since: Millis) -> Result<Vec<LostLock>>;
    /// Records that the caller is here now; returns when they were last seen.
    fn touch_last_seen(&mut self) -> Result<Option<Millis>>;
    /// Integrity and invariant problems (empty when all is well).
    fn check(&mut self) -> Result<Vec<String>>;
    /// Writes a consistent copy of the database to `dest` (SQLite only).
    fn backup(&mut self, dest: &Path) -> Result<()>;
    /// Calls `each` for every item in a state (all when `None`), by id.
    fn export(
        &mut self,
        state: Option<ItemState>,
        each: &mut dyn FnMut(&Item) -> std::io::Result<()>,
    ) -> Result<u64>;
}
