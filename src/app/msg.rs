//! The messages `update` hears and the effects it asks the loop to run: the whole
//! contract between the app and the loop (`tui`), which runs effects on its store worker
//! and sends their results back as messages.

use crate::domain::figures::PeriodKind;
use crate::domain::texts::{CannedText, Saying};
use crate::domain::{
    Comment, Event, Item, ItemEdit, Millis, QueueSettings, QueueUpdate, Role, SeenLock,
};
use crate::store::{ListFilter, LostLock, Report, Stats, StoreError, TakeNext};

use super::{Filter, View};

/// What `update` hears about.
#[derive(Debug, Clone)]
pub enum Msg {
    /// Something the loop tells the user (e.g. why Ctrl-Z did not suspend).
    Said(String),
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
    /// A comment typed in the comment dialog was added (or not).
    CommentAdded {
        id: i64,
        result: Result<(), StoreError>,
    },
    /// An opened item's candidates for "Possibly the same" (issue 27).
    Similar {
        id: i64,
        result: Result<Vec<crate::domain::duplicates::Candidate>, StoreError>,
    },
    /// A merge of `id` into `into` was done (or refused).
    Merged {
        id: i64,
        into: i64,
        result: Result<(), StoreError>,
    },
    /// `id` and `other` were marked not the same (or refused).
    NotSame {
        id: i64,
        other: i64,
        result: Result<(), StoreError>,
    },
    /// An opened item's comment thread, oldest first.
    Thread {
        id: i64,
        result: Result<Vec<Comment>, StoreError>,
    },
    /// The known users' names (for completing names in dialogs).
    Users(Vec<String>),
    /// Every queue's ready-made texts (offered with Tab in the dialogs that take one).
    Texts(Vec<CannedText>),
    /// Complete-and-next completed `after` but found nothing to take (`why`: nothing
    /// free, paused, the WIP limit).
    NothingNext {
        after: i64,
        why: StoreError,
    },
    /// A supervisor action ran; `Ok(n)` is how many items it changed.
    Supervised {
        op: SupervisorOp,
        result: Result<usize, StoreError>,
    },
    /// The locks a bulk unlock would touch, as listed now, with their holders.
    LocksCollected {
        filter: Filter,
        result: Result<Vec<(SeenLock, String)>, StoreError>,
    },
    /// A user's events since a time.
    Activity {
        user: String,
        since: Millis,
        result: Result<Vec<Event>, StoreError>,
    },
    /// The loop handed a store call to its worker (`Some`), or has none under way (`None`).
    Calling(Option<Call>),
    /// A field's value was set or a checklist's line ticked (the item as it is now, with
    /// its history), or not.
    FieldWritten {
        id: i64,
        write: FieldWrite,
        result: Result<(Item, Vec<Event>), StoreError>,
    },
}

/// A holder's write to the detail's form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldWrite {
    /// Set a field to what was typed (checked and normalised by the store).
    Value { field: String, typed: String },
    /// Tick a checklist's line (done, back to do, or not done for a reason).
    Tick {
        field: String,
        line: String,
        state: crate::domain::queue_fields::LineState,
    },
}

/// A store call under way on the loop's worker thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// What it does, as the waiting line says it ("completing #42").
    pub what: String,
    /// It writes, so it may be waiting for another program's write lock.
    pub writes: bool,
    /// When it was handed over (the same clock as `State::now`).
    pub since: Millis,
}

impl Msg {
    /// The answer to a change the user asked for (see [`Effect::is_change`]).
    pub(crate) fn ends_change(&self) -> bool {
        matches!(
            self,
            Msg::Opened { taken: true, .. }
                | Msg::NotesSaved { .. }
                | Msg::Finished { .. }
                | Msg::Commented { .. }
                | Msg::CommentAdded { .. }
                | Msg::Supervised { .. }
                | Msg::FieldWritten { .. }
                | Msg::Merged { .. }
                | Msg::NotSame { .. }
        )
    }

    /// The error of a change that failed for a reason worth trying again (the database was
    /// busy past its patience, the server was unreachable, a disk error), not a refusal.
    pub(crate) fn retryable_error(&self) -> Option<&StoreError> {
        let e = match self {
            Msg::Opened { result: Err(e), .. } => e,
            Msg::NotesSaved { result: Err(e), .. }
            | Msg::Finished { result: Err(e), .. }
            | Msg::Commented { result: Err(e), .. }
            | Msg::CommentAdded { result: Err(e), .. } => e,
            Msg::Supervised { result: Err(e), .. } => e,
            Msg::FieldWritten { result: Err(e), .. } => e,
            Msg::Merged { result: Err(e), .. } | Msg::NotSame { result: Err(e), .. } => e,
            _ => return None,
        };
        matches!(
            e,
            StoreError::Busy(_)
                | StoreError::Connection(_)
                | StoreError::NotCommitted { .. }
                | StoreError::Database(_)
        )
        .then_some(e)
    }
}

/// A supervisor's change, run by the loop against the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SupervisorOp {
    /// Unlock the item if its lock still has `token`.
    Unlock {
        seen: SeenLock,
        reason: String,
    },
    /// Return a parked item to the pool (`caseload wake` by a supervisor).
    Unpark {
        id: i64,
    },
    /// Reassign the item if its lock still has `token`.
    Reassign {
        id: i64,
        token: i64,
        to: String,
        reason: String,
    },
    UnlockMany {
        locks: Vec<SeenLock>,
        reason: String,
    },
    Requeue {
        id: i64,
    },
    Cancel {
        id: i64,
        reason: String,
    },
    /// Assign the item (no lock clock until the assignee opens it); with `token`, only
    /// if its lock is still the one seen.
    Assign {
        id: i64,
        token: Option<i64>,
        to: String,
        reason: String,
    },
    /// Change an open item's priority, due time or queue.
    Edit {
        id: i64,
        edit: ItemEdit,
    },
    SetQueue {
        name: String,
        update: QueueUpdate,
    },
    /// Define field `name` of `queue`, or change or move it.
    DefineField {
        queue: String,
        name: String,
        change: crate::domain::queue_fields::FieldChange,
    },
    DeleteField {
        queue: String,
        name: String,
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
    /// The filter of the list asked for (as `RefreshRequest::filter`): what the rows
    /// answer to.
    pub filter: Option<Filter>,
    pub view: Option<View>,
    pub rows: Vec<Item>,
    pub total: u64,
    pub offset: usize,
    pub queues: Vec<QueueSettings>,
    /// Every queue's field definitions, (queue, field), each queue's in order.
    pub fields: Option<Vec<(String, crate::domain::queue_fields::FieldDef)>>,
    pub checks: Vec<LockCheck>,
    pub stats: Option<Stats>,
    /// The SLA figures, read with the stats.
    pub sla_watch: Option<crate::domain::sla::SlaWatch>,
    /// Every queue's SLA.
    pub slas: Option<Vec<crate::domain::sla::Sla>>,
    /// Every queue's ready-made texts.
    pub texts: Option<Vec<CannedText>>,
    /// The Stats view's figures, for the period asked.
    pub figures: Option<(PeriodKind, Report)>,
    /// The same period's corrections (`report --by field|source`).
    pub corrections: Option<(PeriodKind, crate::app::Corrections)>,
    /// Every lock the user holds now, however taken (another TUI, the CLI, a supervisor).
    pub own: Option<Vec<Item>>,
    /// Why the store refuses every change (a standby, a read-only file), when it does.
    pub read_only: Option<String>,
    /// The items the user parked (earliest wake first).
    pub parked: Option<Vec<Item>>,
    /// For each of `own` not among the checked locks: the event that gave it (locked,
    /// taken over, reassigned), to tell the user who gave it and why.
    pub given: Vec<Event>,
    /// The request's `takeable` scope (a queue, or every queue) and how many items could
    /// be taken there now (at most [`super::notify::COUNT_CAP`]).
    pub takeable: Option<(Option<String>, u64)>,
    /// The user's role, when the request asked for it.
    pub role: Option<Role>,
    pub error: Option<StoreError>,
}

/// How an item is finished, with what the holder said (a result or reason, and the
/// code of the ready-made text chosen).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    Complete(Saying),
    /// A supervisor completes a record that breaks its fields' rules, for a reason
    /// (recorded in the event with the fields broken).
    CompleteAnyway {
        result: Saying,
        reason: String,
    },
    /// Complete, and take the next item in the same transaction.
    CompleteNext(Saying, TakeNext),
    Fail(Saying),
    Release(Saying),
    /// Release as skipped, then take the next item not skipped this session.
    Skip(TakeNext, Saying),
    /// Park until a time (Unix ms), for a reason.
    Park {
        until: Millis,
        reason: String,
    },
    /// The reviewer accepts the item (done), with an optional comment.
    Accept(Option<String>),
    /// The reviewer rejects it back to its maker, for a reason.
    Reject(Saying),
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
    /// Take an item for review: this one, or the next the user may review.
    TakeReview(Option<i64>),
    /// Undo the user's last change to the item (it comes back as an opened item).
    Undo(i64),
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
    /// Add a typed comment to an item's thread.
    AddComment {
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
    /// The holder's write to a field of the item (fenced by `token`), then the item again.
    WriteField {
        id: i64,
        token: i64,
        write: FieldWrite,
    },
    /// Read the candidates of the open item (`store::similar`).
    Similar(i64),
    /// Merge `id` into `into` as its duplicate (the holder's `token`, or a supervisor's).
    Merge {
        id: i64,
        into: i64,
        token: Option<i64>,
        reason: Option<String>,
    },
    /// Remember that `id` and `other` are not the same.
    NotSame {
        id: i64,
        other: i64,
    },
}

impl Effect {
    /// A change the user asked for: taking, saving notes, finishing, commenting, a
    /// supervisor's change. One is under way at a time; keys asking for another are refused
    /// until its answer comes back.
    pub(crate) fn is_change(&self) -> bool {
        matches!(
            self,
            Effect::TakeNext(_)
                | Effect::Take(_)
                | Effect::TakeReview(_)
                | Effect::Undo(_)
                | Effect::SaveNotes { .. }
                | Effect::Finish { .. }
                | Effect::Comment { .. }
                | Effect::AddComment { .. }
                | Effect::Supervise(_)
                | Effect::WriteField { .. }
                | Effect::Merge { .. }
                | Effect::NotSame { .. }
        )
    }

    /// Writes to the database, so it may wait for another program's write lock.
    pub fn writes(&self) -> bool {
        self.is_change()
            || matches!(
                self,
                Effect::Resume | Effect::Reacquire(_) | Effect::Renew { .. }
            )
    }

    /// What it does, in the words of the waiting line ("completing #42").
    pub fn describe(&self) -> String {
        match self {
            Effect::Resume => "loading your work".into(),
            Effect::Reacquire(ids) => match ids.as_slice() {
                [id] => format!("taking back #{id}"),
                _ => format!("taking back {} items", ids.len()),
            },
            Effect::CheckMarker => "checking for changes".into(),
            Effect::Refresh(_) => "refreshing the screen".into(),
            Effect::TakeNext(_) => "taking the next item".into(),
            Effect::Take(id) => format!("taking #{id}"),
            Effect::TakeReview(None) => "taking the next item to review".into(),
            Effect::TakeReview(Some(id)) => format!("taking #{id} for review"),
            Effect::Undo(id) => format!("undoing #{id}"),
            Effect::Open(id) => format!("opening #{id}"),
            Effect::Renew { id, .. } => format!("renewing your lock on #{id}"),
            Effect::SaveNotes { id, .. } => format!("saving notes on #{id}"),
            Effect::Finish { id, what, .. } => match what {
                Finish::Complete(_) | Finish::CompleteAnyway { .. } => {
                    format!("completing #{id}")
                }
                Finish::CompleteNext(..) => format!("completing #{id} and taking the next"),
                Finish::Fail(_) => format!("failing #{id}"),
                Finish::Release(_) => format!("releasing #{id}"),
                Finish::Skip(..) => format!("skipping #{id}"),
                Finish::Park { .. } => format!("parking #{id}"),
                Finish::Accept(_) => format!("accepting #{id}"),
                Finish::Reject(_) => format!("rejecting #{id}"),
            },
            Effect::Comment { id, .. } => format!("adding your notes to #{id}"),
            Effect::AddComment { id, .. } => format!("adding your comment to #{id}"),
            Effect::Supervise(op) => match op {
                SupervisorOp::Unlock { seen, .. } => format!("unlocking #{}", seen.id),
                SupervisorOp::Unpark { id } => format!("unparking #{id}"),
                SupervisorOp::Reassign { id, .. } => format!("reassigning #{id}"),
                SupervisorOp::UnlockMany { locks, .. } => {
                    format!("unlocking {} locks", locks.len())
                }
                SupervisorOp::Requeue { id } => format!("requeueing #{id}"),
                SupervisorOp::Cancel { id, .. } => format!("cancelling #{id}"),
                SupervisorOp::SetQueue { .. } => "changing the queue's settings".into(),
                SupervisorOp::Assign { id, .. } => format!("assigning #{id}"),
                SupervisorOp::Edit { id, .. } => format!("editing #{id}"),
                SupervisorOp::DefineField { queue, name, .. } => {
                    format!("defining field {name} of {queue}")
                }
                SupervisorOp::DeleteField { queue, name } => {
                    format!("deleting field {name} of {queue}")
                }
            },
            Effect::CollectLocks(_) => "listing the locks".into(),
            Effect::Activity { .. } => "loading the activity".into(),
            Effect::WriteField { id, write, .. } => match write {
                FieldWrite::Value { field, .. } => format!("saving {field} on #{id}"),
                FieldWrite::Tick { field, .. } => format!("ticking {field} on #{id}"),
            },
            Effect::Similar(id) => format!("looking for items like #{id}"),
            Effect::Merge { id, into, .. } => format!("merging #{id} into #{into}"),
            Effect::NotSame { id, other } => format!("marking #{id} and #{other} not the same"),
        }
    }

    /// The messages saying this effect failed with `e`: what the loop sends back when
    /// its worker cannot run it, so every screen state waiting for an answer gets one.
    pub fn failed(self, e: StoreError) -> Vec<Msg> {
        let snapshot = |e| {
            Msg::Refreshed(Box::new(Snapshot {
                error: Some(e),
                ..Snapshot::default()
            }))
        };
        match self {
            Effect::Resume => vec![Msg::Resumed(Box::default()), snapshot(e)],
            Effect::Reacquire(ids) => vec![Msg::Reacquired(
                ids.into_iter().map(|id| (id, Err(e.clone()))).collect(),
            )],
            Effect::CheckMarker | Effect::Refresh(_) => vec![snapshot(e)],
            Effect::TakeNext(_) | Effect::Take(_) | Effect::TakeReview(_) | Effect::Undo(_) => {
                vec![Msg::Opened {
                    taken: true,
                    result: Err(e),
                }]
            }
            Effect::Open(_) => vec![Msg::Opened {
                taken: false,
                result: Err(e),
            }],
            Effect::Renew { id, .. } => vec![Msg::Renewed { id, result: Err(e) }],
            Effect::SaveNotes { id, text, .. } => vec![Msg::NotesSaved {
                id,
                text,
                result: Err(e),
            }],
            Effect::Finish { id, what, .. } => vec![Msg::Finished {
                id,
                what,
                result: Err(e),
            }],
            Effect::Comment { id, .. } => vec![Msg::Commented { id, result: Err(e) }],
            Effect::AddComment { id, .. } => vec![Msg::CommentAdded { id, result: Err(e) }],
            Effect::Supervise(op) => vec![Msg::Supervised { op, result: Err(e) }],
            Effect::CollectLocks(filter) => vec![Msg::LocksCollected {
                filter,
                result: Err(e),
            }],
            Effect::Activity { user, since } => vec![Msg::Activity {
                user,
                since,
                result: Err(e),
            }],
            Effect::WriteField { id, write, .. } => vec![Msg::FieldWritten {
                id,
                write,
                result: Err(e),
            }],
            Effect::Similar(id) => vec![Msg::Similar { id, result: Err(e) }],
            Effect::Merge { id, into, .. } => vec![Msg::Merged {
                id,
                into,
                result: Err(e),
            }],
            Effect::NotSame { id, other } => vec![Msg::NotSame {
                id,
                other,
                result: Err(e),
            }],
        }
    }
}

/// What to re-query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshRequest {
    pub view: View,
    /// The visible window of the current list view.
    pub list: Option<ListFilter>,
    /// The view's filter as typed at `/` (Queue, Locks), given back with the rows.
    pub filter: Option<Filter>,
    pub stats: bool,
    /// The Stats view's figures page: its period ("today" starts at midnight in the
    /// display zone).
    pub figures: Option<PeriodKind>,
    /// Held locks to check: (id, token).
    pub checks: Vec<(i64, i64)>,
    /// Count what could be taken now in this queue (`None`: every queue), for "work
    /// arrived" and the terminal title.
    pub takeable: Option<String>,
    /// Read the user's role (asked until it is known).
    pub role: bool,
}
