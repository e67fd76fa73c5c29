//! The messages `update` hears and the effects it asks the loop to run: the whole
//! contract between the app and the loop (`tui`), which runs effects on its store worker
//! and sends their results back as messages.

use crate::domain::{Event, Item, Millis, QueueSettings, QueueUpdate, Role};
use crate::store::{ListFilter, LostLock, Stats, StoreError, TakeNext};

use super::{Filter, View};

/// What `update` hears about.
#[derive(Debug, Clone)]
pub enum Msg {
    Key {
        key: ratatui::crossterm::event::KeyEvent,
        now: Millis,
    },
    Mouse {
        mouse: ratatui::crossterm::event::MouseEvent,
        now: Millis,
    },
    Paste {
        text: String,
        now: Millis,
    },
    Resize {
        width: u16,
        height: u16,
    },
    Tick {
        now: Millis,
    },
    Marker(u64),
    Resumed(Box<Resume>),
    Reacquired(Vec<(i64, Result<Item, StoreError>)>),
    Refreshed(Box<Snapshot>),
    /// An item was taken (or opened) with its history.
    Opened {
        taken: bool,
        result: Result<(Item, Vec<Event>), StoreError>,
    },
    Renewed {
        id: i64,
        result: Result<Item, StoreError>,
    },
    NotesSaved {
        id: i64,
        text: String,
        result: Result<(), StoreError>,
    },
    Finished {
        id: i64,
        what: Finish,
        result: Result<(), StoreError>,
    },
    Commented {
        id: i64,
        result: Result<(), StoreError>,
    },
    /// A supervisor action ran; `Ok(n)` is how many items it changed.
    Supervised {
        op: SupervisorOp,
        result: Result<usize, StoreError>,
    },
    /// The locks a bulk unlock would touch, as listed now: (id, token, holder).
    LocksCollected {
        filter: Filter,
        result: Result<Vec<(i64, i64, String)>, StoreError>,
    },
    /// A user's events since a time.
    Activity {
        user: String,
        since: Millis,
        result: Result<Vec<Event>, StoreError>,
    },
}

/// A supervisor's change, run by the loop against the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SupervisorOp {
    /// Unlock the item if its lock still has `token`.
    Unlock {
        id: i64,
        token: i64,
        reason: String,
    },
    /// Reassign the item if its lock still has `token`.
    Reassign {
        id: i64,
        token: i64,
        to: String,
        reason: String,
    },
    UnlockMany {
        locks: Vec<(i64, i64)>,
        reason: String,
    },
    Requeue {
        id: i64,
    },
    Cancel {
        id: i64,
        reason: String,
    },
    SetQueue {
        name: String,
        update: QueueUpdate,
    },
}

/// Startup facts for resuming.
#[derive(Debug, Clone, Default)]
pub struct Resume {
    pub own: Vec<Item>,
    pub queues: Vec<QueueSettings>,
    pub lost: Vec<LostLock>,
    pub last_seen: Option<Millis>,
    pub role: Option<Role>,
}

/// A held lock as the database shows it now.
#[derive(Debug, Clone)]
pub struct LockCheck {
    pub id: i64,
    pub item: Result<Item, StoreError>,
    /// Only fetched when the lock is gone.
    pub history: Vec<Event>,
}

/// A refresh's results.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub marker: Option<u64>,
    pub view: Option<View>,
    pub rows: Vec<Item>,
    pub total: u64,
    pub offset: usize,
    pub queues: Vec<QueueSettings>,
    pub checks: Vec<LockCheck>,
    pub stats: Option<Stats>,
    /// When the listed locks were taken (Locks view).
    pub lock_since: Vec<(i64, Millis)>,
    pub error: Option<StoreError>,
}

/// How an item is finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    Complete(Option<String>),
    Fail(String),
    Release,
    /// Release as skipped, then take the next item not skipped this session.
    Skip(TakeNext),
}

/// What the loop does for `update`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Load own locks, lost locks and settings; record this visit.
    Resume,
    Reacquire(Vec<i64>),
    /// Read the change marker (live refresh).
    CheckMarker,
    Refresh(RefreshRequest),
    TakeNext(TakeNext),
    Take(i64),
    Open(i64),
    Renew {
        id: i64,
        token: i64,
    },
    SaveNotes {
        id: i64,
        token: i64,
        text: String,
    },
    /// Finish an item, saving `notes` first when given.
    Finish {
        id: i64,
        token: i64,
        what: Finish,
        notes: Option<String>,
    },
    Comment {
        id: i64,
        text: String,
    },
    Supervise(SupervisorOp),
    /// List every lock matching the filter (for a bulk unlock).
    CollectLocks(Filter),
    /// Load a user's events since a time.
    Activity {
        user: String,
        since: Millis,
    },
}

/// What to re-query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshRequest {
    pub view: View,
    /// The visible window of the current list view.
    pub list: Option<ListFilter>,
    pub stats: bool,
    /// Held locks to check: (id, token).
    pub checks: Vec<(i64, i64)>,
}
