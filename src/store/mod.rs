//! The Store: every read and write of the queue, behind one trait with two backends.
//!
//! The lock protocol (DESIGN section 2) is written once, in [`ops`], over the primitives
//! of one write transaction ([`ops::Tx`]); each backend ([`sqlite`], [`postgres`])
//! implements those primitives and its own reads ([`backend::Backend`]), and the one
//! [`Store`] implementation in [`backend`] joins the two. Every claim is one conditional
//! write in a write transaction, every holder write is fenced by
//! `(id, lock_user, lock_token)`, and every change writes its audit event in the same
//! transaction.

pub(crate) mod backend;
mod check;
pub mod copy;
pub(crate) mod error;
#[doc(hidden)] // a test hook, not part of the library's face
pub mod fault;
mod figure_days;
pub(crate) mod figures;
pub mod fsfacts;
pub(crate) mod identity;
mod list;
pub mod location;
pub(crate) mod ops;
pub mod postgres;
mod rows;
pub mod sql;
pub mod sqlite;
mod stats;

pub(crate) use sqlite::check as sqlite_check;
pub use sqlite::migrate;
pub(crate) use sqlite::open as sqlite_open;

use std::path::Path;

use crate::domain::{
    Actor, AuditEntry, Comment, Event, Item, ItemEdit, ItemState, LockLoss, Millis, NewItem,
    QueueSettings, QueueUpdate, RealIdentity, Role, SeenLock, UserInfo,
};
pub use error::{Result, StoreError, exit};
pub use figures::{Figures, QueueFigures, Report, ReportQuery};
pub use sqlite::SqliteStore;
pub(crate) use stats::{Bucket, OldestItem, Stats};

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
    pub(crate) fn parse(s: &str) -> Option<StateFilter> {
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
    /// A search: every word must appear in the title, body, notes, result, params or
    /// error, as part of a word, ignoring case and accents (`domain::search`). Counts of
    /// a search stop one past `domain::search::COUNT_CAP`.
    pub text: Option<String>,
    pub limit: usize,
    pub offset: usize,
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

/// Whether a holder's write was applied now, or had been applied before: a retry of the
/// very same write (same op, same token, same value) whose answer was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    Now,
    Already,
}

/// What complete-and-next did: the complete (applied now, or a retry of one applied
/// before), and the next item taken — or why none could be (`NothingToClaim`, `Paused`,
/// `WipLimit`: exit 4), the complete having happened all the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AndNext {
    pub finished: Applied,
    pub next: Result<Item>,
}

/// A lock the user lost to someone else's action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostLock {
    pub item_id: i64,
    pub title: String,
    /// Taken over, expired (reaped), unlocked, reassigned or cancelled: by whom and when.
    pub loss: LockLoss,
    /// The new holder, if someone holds it now.
    pub now_held_by: Option<String>,
}

/// Every read and write of the queue. One implementation per backend; the same
/// conformance tests run against each. `Send`: the TUI runs its store on a thread of its own.
pub trait Store: Send {
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
    /// Adds a batch in one short transaction, skipping known request ids; returns what
    /// each item became, in order.
    fn add_each(&mut self, items: &[NewItem]) -> Result<Vec<Added>>;

    /// Takes the next free (or expired) item in take order.
    fn take_next(&mut self, opts: &TakeNext) -> Result<Item>;
    /// Takes one chosen item; an item the caller already holds is returned (and its lock
    /// renewed).
    fn take(&mut self, id: i64) -> Result<Item>;
    /// Renews the caller's lock.
    fn renew(&mut self, id: i64, token: i64) -> Result<Item>;
    /// Returns the item to the pool.
    fn release(&mut self, id: i64, token: i64) -> Result<Applied>;
    /// Releases the item, recorded as skipped.
    fn skip(&mut self, id: i64, token: i64) -> Result<Applied>;
    /// Saves the holder's working notes.
    fn save_notes(&mut self, id: i64, token: i64, notes: &str) -> Result<()>;
    /// Completes the item with an optional result. The same complete again (same token,
    /// same result) by the same holder is `Applied::Already`: a retry whose answer was
    /// lost.
    fn complete(&mut self, id: i64, token: i64, result: Option<&str>) -> Result<Applied>;
    /// Completes the item (fenced by `token`, as [`Store::complete`]) and takes the next
    /// one `next` allows (as [`Store::take_next`]) in ONE transaction: one commit, both
    /// events. Nothing left to take still completes (see [`AndNext`]).
    fn complete_and_next(
        &mut self,
        id: i64,
        token: i64,
        result: Option<&str>,
        next: &TakeNext,
    ) -> Result<AndNext>;
    /// Fails the item with a reason (a retry of the same fail is `Applied::Already`).
    fn fail(&mut self, id: i64, token: i64, reason: &str) -> Result<Applied>;
    /// Adds a comment to an item's thread (no lock needed, any state); returns its id.
    fn comment(&mut self, id: i64, text: &str) -> Result<i64>;
    /// An item's comments, oldest first.
    fn comments(&mut self, id: i64) -> Result<Vec<Comment>>;
    /// Releases every expired lock; returns how many.
    fn reap(&mut self) -> Result<usize>;

    /// Supervisor: returns a held item to the pool. With `seen`, only if its lock is
    /// still the one the supervisor saw, not even renewed since (else `LockChanged`);
    /// without, whatever lock it holds when the write lock is taken.
    fn unlock(&mut self, id: i64, seen: Option<SeenLock>, reason: &str) -> Result<()>;
    /// Supervisor: returns many held items to the pool in one transaction. Each entry is
    /// a lock as the supervisor saw it; an item whose lock changed since (renewed, taken
    /// over, completed, released) is left alone. Returns how many were unlocked.
    fn unlock_many(&mut self, locks: &[SeenLock], reason: &str) -> Result<usize>;
    /// Supervisor: gives the item's lock to another user; with `token`, only if its lock
    /// is still the one the supervisor saw (else `LockChanged`).
    fn reassign(&mut self, id: i64, token: Option<i64>, to: &str, reason: &str) -> Result<Item>;
    /// Supervisor: assigns the item to a known user: in their Mine, not takeable by
    /// others, no lock clock until they open it (take it); with `token`, only if its lock
    /// is still the one the supervisor saw (else `LockChanged`). Undone by `unlock`.
    fn assign(&mut self, id: i64, token: Option<i64>, to: &str, reason: &str) -> Result<Item>;
    /// Supervisor: reopens a done, failed or cancelled item, with a reason.
    fn reopen(&mut self, id: i64, reason: &str) -> Result<()>;
    /// Supervisor: changes an open item's priority, due time or queue.
    fn edit(&mut self, id: i64, edit: &ItemEdit) -> Result<Item>;
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
    /// Supervisor: renames a queue, moving its settings and items (locks stay held);
    /// returns how many items moved.
    fn rename_queue(&mut self, from: &str, to: &str) -> Result<u64>;
    /// Supervisor: deletes a queue that holds no items at all.
    fn delete_queue(&mut self, name: &str) -> Result<()>;
    /// Adds items in one transaction, like [`Store::add_batch`]; a queue not known yet is
    /// created when `create_queues`, else the whole batch is refused (`UnknownQueue`).
    fn add_items(&mut self, items: &[NewItem], create_queues: bool) -> Result<Vec<Added>>;
    /// Supervisor: starts an import that keeps the ids `ids.0..=ids.1` by adding `last`
    /// (which keeps `ids.1`, the largest), so that items added meanwhile get ids above
    /// them; refused when an item got an id in the range after `seen` (the largest id
    /// when the file's ids were checked). Returns what `last` became and the time the
    /// import began.
    fn keep_ids(&mut self, last: &NewItem, ids: (i64, i64), seen: i64) -> Result<(Added, Millis)>;
    /// Adds items in one transaction, each keeping its id in `ids` (free, see
    /// [`Store::keep_ids`]) and created at `at`, skipping known request ids; queues are
    /// created.
    fn add_kept(&mut self, items: &[NewItem], ids: &[i64], at: Millis) -> Result<Vec<Added>>;
    /// The largest item id (0 when there are none).
    fn last_item_id(&mut self) -> Result<i64>;
    /// The id and request id of every item that has one of `ids` or `request_ids`.
    fn item_keys(
        &mut self,
        ids: &[i64],
        request_ids: &[&str],
    ) -> Result<Vec<(i64, Option<String>)>>;
    /// Supervisor: sets a user's role (audited: who, real identity, old and new role).
    fn set_role(&mut self, user: &str, role: Role) -> Result<()>;
    /// Supervisor: binds the user name `user` to a login (OS login on SQLite, database
    /// role on PostgreSQL) that may then use it, or unbinds it (`None`); audited.
    fn set_login(&mut self, user: &str, login: Option<&str>) -> Result<()>;
    /// Audit records of roles, login bindings and queue settings since a time, oldest
    /// first; with `who`, only those made by that user or about them.
    fn audit(&mut self, who: Option<&str>, since: Millis) -> Result<Vec<AuditEntry>>;
    /// The real identity behind the actor (OS login or database role).
    fn real(&self) -> &RealIdentity;

    /// One item.
    fn item(&mut self, id: i64) -> Result<Item>;
    /// An item's events, oldest first.
    fn history(&mut self, id: i64) -> Result<Vec<Event>>;
    /// A window of items.
    fn list(&mut self, filter: &ListFilter) -> Result<Vec<Item>>;
    /// How many items match (ignoring limit and offset).
    fn count(&mut self, filter: &ListFilter) -> Result<u64>;
    /// How many items the caller could take now — open, free or expired, their queue
    /// running — in `queue` (every queue when `None`), counting at most `cap`.
    fn takeable(&mut self, queue: Option<&str>, cap: u64) -> Result<u64>;
    /// Every queue's settings.
    fn queues(&mut self) -> Result<Vec<QueueSettings>>;
    /// One queue's settings.
    fn queue(&mut self, name: &str) -> Result<QueueSettings>;
    /// A user's role (staff when unknown).
    fn role(&mut self, user: &str) -> Result<Role>;
    /// Every user in `users`, by name.
    fn users(&mut self) -> Result<Vec<UserInfo>>;
    /// The figures of the Stats view.
    fn stats(&mut self) -> Result<Stats>;
    /// The supervisors' figures over a period, per person and per queue (from the holds
    /// that ended in it; see [`crate::domain::figures`]). An empty period is `Invalid`.
    fn report(&mut self, q: &ReportQuery) -> Result<Report>;
    /// When each of these items' current lock was taken (its last `locked`, `taken_over`
    /// or `reassigned` event); items never locked are left out. `lock_time` is the last
    /// renewal, so the Locks view asks this for "held for".
    fn lock_started(&mut self, ids: &[i64]) -> Result<Vec<(i64, Millis)>>;
    /// Events by one actor since a time, oldest first.
    fn events_by(&mut self, actor: &str, since: Millis) -> Result<Vec<Event>>;
    /// Locks `user` lost to others since a time, newest first.
    fn lost_locks(&mut self, user: &str, since: Millis) -> Result<Vec<LostLock>>;
    /// Records that the caller is here now; returns when they were last seen.
    fn touch_last_seen(&mut self) -> Result<Option<Millis>>;
    /// Integrity and invariant problems (empty when all is well).
    fn check(&mut self) -> Result<Vec<String>>;
    /// Rebuilds the figures' tables (`holds`, the day summary) from the events, in one
    /// transaction; returns how many holds. Supervisors only.
    fn rebuild_figures(&mut self) -> Result<u64>;
    /// Writes a consistent copy of the database to `dest` (SQLite only).
    fn backup(&mut self, dest: &Path) -> Result<()>;
    /// Brings the search index closer to date: indexes up to `budget` items added or
    /// changed since it was last brought up to date, in one short write transaction;
    /// returns how many (0 when it is up to date, the file is read-only or the backend
    /// keeps no such index). Searches are right either way: what is not indexed yet is
    /// scanned.
    fn index_search(&mut self, budget: usize) -> Result<usize>;
    /// Calls `each` for every item `filter` selects, by id.
    fn export(
        &mut self,
        filter: &ExportFilter,
        each: &mut dyn FnMut(&Item) -> std::io::Result<()>,
    ) -> Result<u64>;
    /// Calls `each` for every event of the items `filter` selects (`since` applies to the
    /// event's time), by time: the audit trail. Items without a stored `created` event
    /// get one from their row (with id 0).
    fn export_events(
        &mut self,
        filter: &ExportFilter,
        each: &mut dyn FnMut(&Event) -> std::io::Result<()>,
    ) -> Result<u64>;
}

/// Which items `export` writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportFilter {
    /// Only items in this state (all when `None`).
    pub state: Option<ItemState>,
    /// Only items in this queue.
    pub queue: Option<String>,
    /// Only items created (events: written) at or after this time.
    pub since: Option<Millis>,
}
