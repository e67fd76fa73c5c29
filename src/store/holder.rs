//! What each of a holder's fenced writes does — its SET clause, value, event and checks —
//! described once for both backends. Each backend runs it as one UPDATE conditional on
//! `(id, lock_user, lock_token)` plus the event, in one transaction.

use serde_json::json;

use super::error::{Result, StoreError};
use crate::domain::EventKind;
use crate::domain::item::check_text;

/// A holder's write.
#[derive(Debug, Clone, Copy)]
pub(crate) enum HolderOp<'a> {
    Renew,
    Release,
    Skip,
    SaveNotes(&'a str),
    Complete(Option<&'a str>),
    Fail(&'a str),
}

/// A checked holder write, ready for a backend.
#[derive(Debug, Clone)]
pub(crate) struct HolderWrite<'a> {
    /// The SET clause; `:now`, `:me` and `:value` stand for the write's time, the holder
    /// and `value` (each backend binds them its own way).
    pub set: &'static str,
    pub value: Option<&'a str>,
    pub kind: EventKind,
    pub detail: serde_json::Value,
}

impl<'a> HolderOp<'a> {
    /// Checks the op's text and describes the write.
    pub(crate) fn plan(self, token: i64) -> Result<HolderWrite<'a>> {
        let invalid = |e: crate::domain::ValidationError| StoreError::Invalid(e.message);
        Ok(match self {
            HolderOp::Renew => HolderWrite {
                set: "lock_time = :now",
                value: None,
                kind: EventKind::Renewed,
                detail: json!({"token": token}),
            },
            HolderOp::Release | HolderOp::Skip => HolderWrite {
                set: "lock_user = NULL, lock_time = NULL",
                value: None,
                kind: if matches!(self, HolderOp::Skip) {
                    EventKind::Skipped
                } else {
                    EventKind::Released
                },
                detail: json!({"token": token}),
            },
            HolderOp::SaveNotes(notes) => {
                check_text("notes", notes).map_err(invalid)?;
                HolderWrite {
                    set: "notes = :value",
                    value: Some(notes),
                    kind: EventKind::Noted,
                    detail: json!({"token": token, "notes_chars": notes.chars().count()}),
                }
            }
            HolderOp::Complete(result) => {
                if let Some(r) = result {
                    check_text("result", r).map_err(invalid)?;
                }
                HolderWrite {
                    set: "state = 'done', result = :value, lock_user = NULL, \
                          lock_time = NULL, finished_at = :now, finished_by = :me",
                    value: result,
                    kind: EventKind::Completed,
                    detail: json!({"token": token, "result": result}),
                }
            }
            HolderOp::Fail(reason) => {
                let reason = reason.trim();
                if reason.is_empty() {
                    return Err(StoreError::Invalid(
                        "a reason is required to fail an item".into(),
                    ));
                }
                check_text("reason", reason).map_err(invalid)?;
                HolderWrite {
                    set: "state = 'failed', error = :value, lock_user = NULL, \
                          lock_time = NULL, finished_at = :now, finished_by = :me",
                    value: Some(reason),
                    kind: EventKind::Failed,
                    detail: json!({"token": token, "reason": reason}),
                }
            }
        })
    }
}

/// A supervisor's or holder's reason: required, trimmed, checked like any text.
pub(crate) fn required_reason(reason: &str) -> Result<&str> {
    let r = reason.trim();
    if r.is_empty() {
        return Err(StoreError::Invalid("a reason is required".into()));
    }
    check_text("reason", r).map_err(|e| StoreError::Invalid(e.message))?;
    Ok(r)
}

/// A comment on an item's history: not empty, checked like any text.
pub(crate) fn check_comment(text: &str) -> Result<()> {
    if text.trim().is_empty() {
        return Err(StoreError::Invalid("the comment is empty".into()));
    }
    check_text("comment", text).map_err(|e| StoreError::Invalid(e.message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failing_needs_a_reason_and_text_is_checked() {
        assert!(HolderOp::Fail("  ").plan(1).is_err());
        assert!(HolderOp::SaveNotes("a\0b").plan(1).is_err());
        let w = HolderOp::Fail(" no answer ").plan(3).unwrap();
        assert_eq!(w.value, Some("no answer"));
        assert_eq!(w.detail["token"], 3);
        assert_eq!(HolderOp::Skip.plan(1).unwrap().kind, EventKind::Skipped);
    }
}
