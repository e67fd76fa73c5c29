//! The Store: every read and write of the queue, behind one trait with two backends.
//!
//! `Store` is [`Reads`] + [`Writes`]. Each backend ([`sqlite`], [`postgres`]) implements
//! [`Reads`] directly, and the primitives of one write transaction ([`ops::Tx`], with
//! `writes::Backend`'s `transact`); [`Writes`] is implemented once, for every backend, by
//! the lock protocol (DESIGN section 2) written in [`ops`]. A new read goes into `Reads`
//! and both backends; a new write into `Writes`, `writes.rs` and `ops` (with a new `Tx`
//! primitive when it needs one). Every claim is one conditional
//! write in a write transaction, every holder write is fenced by
//! `(id, lock_user, lock_token)`, and every change writes its audit event in the same
//! transaction.

mod check;
pub mod clock;
pub mod copy;
pub(crate) mod error;
#[doc(hidden)] // a test hook, not part of the library's face
pub mod fault;
pub mod feed;
mod figure_days;
pub(crate) mod figures;
pub mod fsfacts;
pub(crate) mod identity;
mod list;
pub mod location;
pub mod metrics;
pub(crate) mod ops;
pub mod postgres;
mod reads;
mod rows;
pub mod similar;
pub mod sql;
pub mod sqlite;
mod stats;
mod writes;

pub(crate) use sqlite::check as sqlite_check;
pub use sqlite::migrate;
pub(crate) use sqlite::open as sqlite_open;

use crate::domain::{Item, ItemState, LockLoss, Millis};
pub use check::CheckRun;
pub use error::{Result, StoreError, exit};
pub use figures::{Figures, QueueFigures, ReasonCount, Report, ReportQuery};
pub use ops::Merged;

/// The digest a record's fields were found keeping every rule under (see
/// `store::ops::fields::digest`). Public because the key is no secret — caseload's source
/// names it — so that a test can forge one as a hostile client would (the PostgreSQL
/// server stamps who wrote it, and a digest counts only for its writer).
#[doc(hidden)]
pub fn fields_digest(version: i64, queue: &str, params: &str) -> [u8; 16] {
    ops::digest(version, queue, params)
}
pub use ops::{UserChange, UserChanged};
pub use reads::Reads;
pub use sqlite::SqliteStore;
pub(crate) use stats::{Bucket, OldestItem, Stats};
pub use writes::Writes;

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
    /// Parked items, earliest wake time first (with a holder: the items they parked).
    Parked,
    /// Items waiting for review, oldest submission first (with a holder: their reviews).
    Review,
    /// What the Locks view shows: held locks (oldest first), then parked items (earliest
    /// wake first); with a holder, their locks and the items they parked.
    Held,
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
            StateFilter::Parked => "parked",
            StateFilter::Review => "review",
            StateFilter::Held => "held",
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
            "parked" => StateFilter::Parked,
            "review" => StateFilter::Review,
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
    /// A search: every word must appear in a searched column (the field table's), as
    /// part of a word, ignoring case and accents (`domain::search`). Counts of a search
    /// stop one past `domain::search::COUNT_CAP`.
    pub text: Option<String>,
    /// Only items this person may review: none they completed or corrected a field of
    /// (the review take's own condition; the Review view's list).
    pub reviewer: Option<String>,
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

/// How [`Writes::add_items`] adds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AddOptions<'a> {
    /// Create the queues not known yet (else a batch naming one is refused).
    pub create_queues: bool,
    /// An import that keeps ids (started by [`Writes::keep_ids`]): each item keeps its id
    /// here (one per item, each free or already the item's own) and is created at the
    /// time the import began; queues are created.
    pub kept: Option<Keeping<'a>>,
    /// A known request id answers with its item only when the title and body are the
    /// same (a retry); other content is refused (`RequestIdReused`, exit 3). `add` asks
    /// for it; an import counts a known request id as already there.
    pub same_content: bool,
    /// Leave out each item whose duplicate key equals one of an open item of its queue
    /// (`import --skip-duplicates`): its [`Added`] names that item, `skipped` set.
    pub skip_duplicates: bool,
    /// Leave the records' fields unchecked (an import: it counts broken values in its own
    /// pass, and each record's Complete checks its fields). Otherwise each added record in
    /// a queue with fields is checked, and one that keeps every rule is marked so (on
    /// SQLite: its digest), so that its Complete need not check it again.
    pub unchecked: bool,
    /// With `unchecked`: the records the caller checked itself (an import's rows), to be
    /// marked checked as the caller found them.
    pub checked: Option<FieldsChecked<'a>>,
    /// Leave the items' search text for later (an import, which indexes them on a second
    /// connection meanwhile: [`Writes::index_search`]); searches scan them until then.
    /// Only PostgreSQL's index is kept on insert; SQLite indexes later anyway.
    pub search_later: bool,
}

/// Which of a batch's records in `queue` keep every rule of its fields (`ok`, one per
/// record), as found against the definitions of `version` (read by
/// [`Reads::fields_version`] before them); marked checked only while that is still the
/// version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldsChecked<'a> {
    pub version: i64,
    pub queue: &'a str,
    pub ok: &'a [bool],
}

impl<'a> AddOptions<'a> {
    /// Queues not known yet are created.
    pub fn creating_queues() -> Self {
        AddOptions {
            create_queues: true,
            kept: None,
            same_content: false,
            skip_duplicates: false,
            unchecked: false,
            checked: None,
            search_later: false,
        }
    }

    /// An import that keeps `ids`, begun at `at` (queues are created).
    pub fn keeping(ids: &'a [i64], at: Millis) -> Self {
        AddOptions {
            create_queues: true,
            kept: Some(Keeping { ids, at }),
            same_content: false,
            skip_duplicates: false,
            unchecked: false,
            checked: None,
            search_later: false,
        }
    }
}

/// The ids an import keeps and the time it began (see [`AddOptions::kept`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keeping<'a> {
    pub ids: &'a [i64],
    pub at: Millis,
}

/// Result of adding an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Added {
    pub id: i64,
    /// False when the request id was already known and the existing item is returned.
    pub created: bool,
    /// Left out as a duplicate ([`AddOptions::skip_duplicates`]): `id` is the open item
    /// it duplicates.
    pub skipped: bool,
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

/// Every read and write of the queue: [`Reads`], implemented by each backend, and
/// [`Writes`], written once over [`ops`] for every backend. One store per backend
/// ([`SqliteStore`], [`postgres::PgStore`]); the same conformance tests run against each.
/// Used as `Box<dyn Store>` / `&mut dyn Store`; a concrete store's methods need `Reads`
/// and `Writes` in scope.
pub trait Store: Reads + Writes {}

impl<S: Reads + Writes + ?Sized> Store for S {}

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

/// The (kind, queue) rows of `name` among everyone's (name, kind, queue) rows.
pub(crate) fn list_of(rows: &[(String, String, String)], name: &str) -> Vec<(String, String)> {
    (rows.iter())
        .filter(|(n, ..)| n == name)
        .map(|(_, k, q)| (k.clone(), q.clone()))
        .collect()
}

/// `users` with each one's access from `accesses` (by name; the role is the user's own).
pub(crate) fn with_access(
    mut users: Vec<crate::domain::UserInfo>,
    accesses: Vec<(String, crate::domain::Access)>,
) -> Vec<crate::domain::UserInfo> {
    for (name, access) in accesses {
        if let Some(u) = users.iter_mut().find(|u| u.name == name) {
            u.access = crate::domain::Access {
                role: u.role,
                ..access
            };
        }
    }
    for u in &mut users {
        u.access.role = u.role;
    }
    users
}
