//! The store's errors: each says what happened in one line and maps to an exit code.

use crate::domain::FieldError;
use crate::domain::queue_fields::FieldProblem;
use crate::domain::time::clock_hm;
use crate::domain::{ItemState, Millis, NoLock};

/// Exit codes of DESIGN section 4.
pub mod exit {
    pub const OK: i32 = 0;
    pub const ERROR: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const CONFLICT: i32 = 3;
    pub const NOTHING: i32 = 4;
    pub const SUPERVISOR_ONLY: i32 = 5;
    /// The connection was lost while a change was being committed: it may or may not
    /// have been applied, so look (`caseload list --mine`, `caseload show ID`) before
    /// retrying.
    pub const UNKNOWN: i32 = 6;
    /// Stopped by Ctrl-C before it finished (a command that only reads: `check`).
    pub const INTERRUPTED: i32 = 130;
}

/// Everything a store operation can refuse or fail with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    #[error("item #{0} does not exist")]
    NotFound(i64),
    #[error("unknown queue '{name}'{}", known_list(.name, .known))]
    UnknownQueue { name: String, known: Vec<String> },
    #[error("{0}")]
    Invalid(String),
    /// A value given for one field (a column of the item, `--to`, `--login`) breaks a
    /// rule: typed, so that the command line names the flag (its `Display`: "--queue:
    /// name is longer than 100 characters") and the TUI the field's label
    /// ([`FieldError::with_label`]). Nothing was written.
    #[error("{0}")]
    Field(FieldError),
    #[error("unknown user '{name}'{}", unknown_user_hint(.name, .known))]
    UnknownUser { name: String, known: Vec<String> },
    #[error("#{id} is {}", held_since(.holder, *.since))]
    HeldByOther {
        id: i64,
        holder: String,
        since: Millis,
    },
    #[error("#{id} is {} already{}", state_words(*.state), by_whom(.by))]
    NotOpen {
        id: i64,
        state: ItemState,
        by: Option<String>,
    },
    /// Parked by another for a call-back: `what` is "parked by alice until 14:00: call
    /// back Mei Brandt" (domain::park::Park::describe).
    #[error("#{id} is {what}")]
    Parked { id: i64, what: String },
    /// `claim --review --id` of an item the caller completed or corrected a field of.
    #[error("you worked on #{0}; someone else must review it")]
    OwnWork(i64),
    /// A review take, accept or reject of an item that is not waiting for review.
    #[error("#{id} is not waiting for review (it is {})", .state.as_str())]
    NotInReview { id: i64, state: ItemState },
    /// An undo that may not be done (the window passed, someone else touched the item).
    #[error("{0}")]
    UndoRefused(String),
    #[error("{}", lock_lost(*.id, .why))]
    LockLost { id: i64, why: NoLock },
    /// `add --request-id` with a request id an item of other content already has: an
    /// idempotency key names one item, so reusing it for another is a producer's bug.
    /// Nothing was added.
    #[error(
        "request id '{}' is #{id}'s, whose {differs} {} from this one's; nothing added (a \
         request id names one item: give this one its own)",
        crate::domain::sanitize::line(.request_id),
        if .differs.contains(" and ") { "differ" } else { "differs" }
    )]
    RequestIdReused {
        request_id: String,
        id: i64,
        /// What differs: "title", "body" or "title and body".
        differs: &'static str,
    },
    /// A supervisor's fenced write: the lock is no longer the one the supervisor saw.
    #[error("#{id} changed since you looked ({}); nothing done", now_held(.holder))]
    LockChanged { id: i64, holder: Option<String> },
    #[error("nothing to claim: {0}")]
    NothingToClaim(String),
    #[error("nothing to claim: {}", paused_list(.queues))]
    Paused { queues: Vec<String> },
    #[error("nothing to claim: you hold {held} item(s) in queue '{queue}', its limit per user")]
    WipLimit { queue: String, held: i64 },
    /// A value typed for a field breaks its type or a rule (`caseload set`): nothing
    /// was written.
    #[error("{0}")]
    BadValue(FieldProblem),
    /// Complete refused: fields of the record break their rules (each named).
    #[error("#{id} cannot be completed: {}", broken_list(.problems))]
    BrokenRules {
        id: i64,
        problems: Vec<FieldProblem>,
    },
    #[error("supervisor only: {0}")]
    SupervisorOnly(String),
    /// The real identity (OS login, database role) may not use the caseload name given.
    #[error("not permitted: {0}")]
    NotYou(String),
    /// The person may not take (review) work of that queue, or has left (issue 29 §2).
    #[error("not permitted: {0}")]
    NotEligible(String),
    #[error("database is read-only: {0}")]
    ReadOnly(String),
    #[error("database is busy: {0}")]
    Busy(String),
    #[error("{0}")]
    Corrupt(String),
    #[error("{0}")]
    Unusable(String),
    #[error("database error: {0}")]
    Database(String),
    /// The storage under the database failed (disk full, an I/O error); the message names
    /// the cause, where, and the fix. `code` is SQLite's extended result code.
    #[error("{message}")]
    Storage { code: i32, message: String },
    /// The database server cannot be reached or dropped the connection; the message
    /// says which, and names the server without its password.
    #[error("{0}")]
    Connection(String),
    /// The change may have been applied or not, and nobody can tell from here: the
    /// connection was lost while committing, or (SQLite) the disk failed at COMMIT after
    /// the commit record may have reached the -wal. The message says where and how to
    /// find out.
    #[error("{0}")]
    OutcomeUnknown(String),
    /// The connection to `server` (shown without its password) broke while one change was
    /// being committed: applied or not, nobody can tell from here.
    #[error(
        "the connection to {server} was lost while committing; the server may have applied \
         it — run `caseload list --mine` to see what you hold (or `caseload show ID` for an \
         item) before trying again ({reason})"
    )]
    CommitLost { server: String, reason: String },
    /// The connection to `server` broke inside a write transaction, before COMMIT: the
    /// server rolled that transaction back.
    #[error(
        "the connection to {server} was lost before the change was committed; nothing was \
         changed, try again ({reason})"
    )]
    NotCommitted { server: String, reason: String },
}

fn broken_list(problems: &[FieldProblem]) -> String {
    let each: Vec<String> = problems.iter().map(FieldProblem::to_string).collect();
    format!(
        "{} (correct them with `caseload set` or `caseload tick`; a supervisor may complete \
         anyway with --override REASON)",
        each.join("; ")
    )
}

fn known_list(name: &str, known: &[String]) -> String {
    if known.is_empty() {
        " (there are no queues yet)".to_string()
    } else if let Some(meant) = crate::domain::queue::closest(name, known) {
        format!(" — did you mean {meant}? (known: {})", known.join(", "))
    } else {
        format!(" (known: {})", known.join(", "))
    }
}

/// "token 9 is not your current lock on #22 (yours is 1)" when the caller holds it under
/// another token; else "lock on #22 lost: " and what happened.
fn lock_lost(id: i64, why: &NoLock) -> String {
    match why {
        NoLock::OtherToken { given, current } => {
            format!("token {given} is not your current lock on #{id} (yours is {current})")
        }
        other => format!("lock on #{id} lost: {other}"),
    }
}

fn held_since(holder: &str, since: Millis) -> String {
    if since >= crate::domain::lock::ASSIGNED {
        format!("assigned to {holder} (not opened yet)")
    } else {
        format!("held by {holder} (since {})", clock_hm(since))
    }
}

fn unknown_user_hint(name: &str, known: &[String]) -> String {
    let close = crate::domain::user::closest(name, known)
        .map(|c| format!("; did you mean {c}?"))
        .unwrap_or_default();
    format!(
        "{close} (known users are listed by `caseload user list`; add one with \
         `caseload user set {name} --role staff`)"
    )
}

fn now_held(holder: &Option<String>) -> String {
    match holder {
        Some(h) => format!("now held by {h}"),
        None => "now nobody holds it".into(),
    }
}

fn paused_list(queues: &[String]) -> String {
    match queues {
        [one] => format!("queue '{one}' is paused"),
        many => format!("queues '{}' are paused", many.join("', '")),
    }
}

/// "done", "in review".
fn state_words(state: ItemState) -> &'static str {
    match state {
        ItemState::Review => "in review",
        other => other.as_str(),
    }
}

fn by_whom(by: &Option<String>) -> String {
    by.as_ref()
        .map(|b| format!(" (by {b})"))
        .unwrap_or_default()
}

impl StoreError {
    /// The documented exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            StoreError::HeldByOther { .. }
            | StoreError::NotOpen { .. }
            | StoreError::Parked { .. }
            | StoreError::NotInReview { .. }
            | StoreError::UndoRefused(_)
            | StoreError::RequestIdReused { .. }
            | StoreError::LockLost { .. }
            | StoreError::LockChanged { .. } => exit::CONFLICT,
            StoreError::NothingToClaim(_)
            | StoreError::Paused { .. }
            | StoreError::WipLimit { .. } => exit::NOTHING,
            StoreError::SupervisorOnly(_)
            | StoreError::NotYou(_)
            | StoreError::OwnWork(_)
            | StoreError::NotEligible(_) => exit::SUPERVISOR_ONLY,
            StoreError::OutcomeUnknown(_) | StoreError::CommitLost { .. } => exit::UNKNOWN,
            _ => exit::ERROR,
        }
    }

    /// True for the conflicts of the lock protocol (exit 3).
    pub(crate) fn is_conflict(&self) -> bool {
        self.exit_code() == exit::CONFLICT
    }
}

/// Result of a store operation.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
