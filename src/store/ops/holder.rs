//! A holder's fenced writes (renew, release, skip, save notes, complete, fail): each one
//! UPDATE conditional on `(id, lock_user, lock_token)` with its event. When the fence
//! does not hold, the holder is told why in their terms — or, when the very same write
//! (same op, same token, same value) was applied before and only its answer was lost, it
//! is acknowledged again instead of refused.

use serde_json::json;

use super::{ItemWrite, Tx, found, not_open};
use crate::domain::fields::{FieldError, Input};
use crate::domain::item::check_text;
use crate::domain::texts::Said;
use crate::domain::{EventKind, Item, ItemState, LockLoss, NoLock};
use crate::store::Applied;
use crate::store::error::{Result, StoreError};
use crate::store::sql::{
    FENCE_HOLDER, FENCE_HOLDER_OR_REVIEWER, SET_COMPLETE, SET_FAIL, SET_NOTES, SET_PARK,
    SET_RELEASE, SET_RENEW, SET_SUBMIT,
};

/// A holder's write.
#[derive(Debug, Clone, Copy)]
pub(crate) enum HolderOp<'a> {
    Renew,
    /// With the reason given, if any.
    Release(Said<'a>),
    /// With the reason given, if any.
    Skip(Said<'a>),
    SaveNotes(&'a str),
    /// With the result, if any.
    Complete(Said<'a>),
    /// A complete that goes to review (see [`super::review`]), and why.
    Submit(Said<'a>, crate::domain::review::Why),
    /// With its reason (required).
    Fail(Said<'a>),
    /// Park until a time (Unix ms) for a reason (see [`super::park`]).
    Park {
        until: i64,
        reason: &'a str,
    },
}

/// Adds what was said to an event's detail: the reason (or result) under `key` when there
/// is one, and the ready-made text's code when one was chosen.
fn with_said(mut detail: serde_json::Value, key: &str, said: &Said<'_>) -> serde_json::Value {
    if let Some(t) = said.text {
        detail[key] = json!(t);
    }
    if let Some(c) = said.code {
        detail["code"] = json!(c);
    }
    detail
}

impl<'a> HolderOp<'a> {
    /// Checks the op's text and describes the write.
    pub(crate) fn plan(self, token: i64) -> Result<ItemWrite<'a>> {
        let write = |set, value, kind, detail| ItemWrite {
            set,
            fence: self.fence(),
            value,
            arg: None,
            kind,
            detail,
        };
        Ok(match self {
            HolderOp::Renew => write(SET_RENEW, None, EventKind::Renewed, json!({"token": token})),
            HolderOp::Release(said) | HolderOp::Skip(said) => {
                let said = Said::text(said.text).coded(said.code);
                if let Some(r) = said.text {
                    check_text("reason", r).map_err(StoreError::Invalid)?;
                }
                let kind = match self {
                    HolderOp::Skip(_) => EventKind::Skipped,
                    _ => EventKind::Released,
                };
                let detail = with_said(json!({"token": token}), "reason", &said);
                write(SET_RELEASE, None, kind, detail)
            }
            HolderOp::SaveNotes(notes) => {
                check_text("notes", notes).map_err(StoreError::Invalid)?;
                let detail = json!({"token": token, "notes_chars": notes.chars().count()});
                write(SET_NOTES, Some(notes), EventKind::Noted, detail)
            }
            HolderOp::Submit(said, _) => ItemWrite {
                set: SET_SUBMIT,
                ..HolderOp::Complete(said).plan(token)?
            },
            HolderOp::Complete(said) => {
                let result = said.text;
                if let Some(r) = result {
                    check_text("result", r).map_err(StoreError::Invalid)?;
                }
                let mut detail = json!({"token": token, "result": result});
                if let Some(c) = said.code {
                    detail["code"] = json!(c);
                }
                write(SET_COMPLETE, result, EventKind::Completed, detail)
            }
            HolderOp::Fail(said) => {
                let reason = said.text.unwrap_or_default().trim();
                if reason.is_empty() {
                    return Err(StoreError::Invalid(
                        "a reason is required to fail an item".into(),
                    ));
                }
                check_text("reason", reason).map_err(StoreError::Invalid)?;
                let said = Said {
                    text: Some(reason),
                    code: said.code,
                };
                let detail = with_said(json!({"token": token}), "reason", &said);
                write(SET_FAIL, Some(reason), EventKind::Failed, detail)
            }
            HolderOp::Park { until, reason } => {
                let reason = reason.trim();
                if reason.is_empty() {
                    return Err(StoreError::Field(FieldError::new(
                        Input::Reason,
                        "say why the item is parked (who to call back, what you wait for)",
                    )));
                }
                check_text("reason", reason).map_err(StoreError::Invalid)?;
                let detail = json!({"token": token, "until": until, "reason": reason});
                ItemWrite {
                    arg: Some(until),
                    ..write(SET_PARK, Some(reason), EventKind::Parked, detail)
                }
            }
        })
    }

    /// The write's fence: a reviewer renews, releases and saves notes as any holder;
    /// the rest are the maker's (an open item).
    fn fence(self) -> &'static str {
        match self {
            HolderOp::Renew | HolderOp::Release(_) | HolderOp::SaveNotes(_) => {
                FENCE_HOLDER_OR_REVIEWER
            }
            _ => FENCE_HOLDER,
        }
    }

    /// True for the writes that end the holder's lock: applied once, a retry of the same
    /// write finds the lock gone and is acknowledged as already done.
    fn ends_lock(self) -> bool {
        !matches!(self, HolderOp::Renew | HolderOp::SaveNotes(_))
    }
}

/// Applies a holder's write (checked by [`HolderOp::plan`]) under `token`.
pub(crate) fn holder_write(
    tx: &mut dyn Tx,
    id: i64,
    token: i64,
    op: HolderOp<'_>,
    w: &ItemWrite<'_>,
) -> Result<Applied> {
    if tx.write_item(id, token, w)? {
        if let HolderOp::Submit(_, why) = op {
            // The maker's part is done (their `completed`); the item waits for review.
            tx.insert_event(id, EventKind::Submitted, &why.detail())?;
        }
        return Ok(Applied::Now);
    }
    if op.ends_lock() && done_before(tx, id, w)? {
        return Ok(Applied::Already);
    }
    let reviewer_may = w.fence == FENCE_HOLDER_OR_REVIEWER;
    Err(explain_loss_as(tx, id, token, reviewer_may)?)
}

/// Saves the holder's notes (`w` planned by [`HolderOp::SaveNotes`]); the text they
/// replace is kept in the `noted` event's `previous`, so no saved text is ever lost.
pub(crate) fn save_notes(tx: &mut dyn Tx, id: i64, token: i64, w: &ItemWrite<'_>) -> Result<()> {
    let before = tx.item_for_update(id)?.map(|i| i.notes);
    let mut w = w.clone();
    if let Some(prev) = before.filter(|p| !p.is_empty() && Some(p.as_str()) != w.value) {
        w.detail["previous"] = json!(prev);
    }
    let op = HolderOp::SaveNotes(w.value.unwrap_or_default());
    holder_write(tx, id, token, op, &w).map(|_| ())
}

/// True when this holder already applied this very write (same kind, same token, same
/// value: its event's detail is the same). A finish must still be the item's last word:
/// after a reopen (or a requeue, or another finish) the item is no longer what the
/// holder's write made it, so a retry of it is no longer answered "already done".
fn done_before(tx: &mut dyn Tx, id: i64, w: &ItemWrite<'_>) -> Result<bool> {
    let me = tx.actor().name.clone();
    let last = if w.kind.is_in(EventKind::FINISHES_OR_REOPENS) {
        tx.last_event(id, EventKind::FINISHES_OR_REOPENS, None)?
    } else {
        tx.last_event(id, &[w.kind], Some(&me))?
    };
    // Which fields a supervisor's override completed over is learnt under the lock; a
    // retry after the lock is gone cannot know it, and is the same write without it.
    let same = |stored: &serde_json::Value| {
        let mut stored = stored.clone();
        if let Some(m) = stored.as_object_mut() {
            m.remove("broken");
        }
        stored == w.detail
    };
    Ok(last.is_some_and(|e| e.actor == me && e.kind == w.kind && same(&e.detail)))
}

/// Why a fenced holder write changed nothing, in the holder's terms.
pub(crate) fn explain_loss(tx: &mut dyn Tx, id: i64, token: i64) -> Result<StoreError> {
    explain_loss_as(tx, id, token, true)
}

/// [`explain_loss`] of a write a reviewer may make too (`review`: a lock on an item in
/// review is explained as any lock) or not (such an item is not open).
pub(crate) fn explain_loss_as(
    tx: &mut dyn Tx,
    id: i64,
    token: i64,
    review: bool,
) -> Result<StoreError> {
    let item: Item = found(id, tx.item(id)?)?;
    let lockable = item.state == ItemState::Open || (review && item.state == ItemState::Review);
    if !lockable {
        return Ok(not_open(&item));
    }
    let me = tx.actor().name.clone();
    let why = match &item.lock_user {
        Some(holder) if *holder == me => NoLock::OtherToken {
            given: token,
            current: item.lock_token,
        },
        holder => match tx.last_event(id, EventKind::CHANGES_LOCK_OR_REOPENS, None)? {
            Some(e) if e.kind == EventKind::Requeued => NoLock::Reopened {
                by: e.actor,
                at: e.at,
            },
            Some(e) => LockLoss::from_event(&e).map_or(NoLock::NotHeld, NoLock::Lost),
            None => holder.clone().map_or(NoLock::NotHeld, NoLock::HeldBy),
        },
    };
    Ok(StoreError::LockLost { id, why })
}

/// A supervisor's or holder's reason: required, trimmed, checked like any text.
pub(crate) fn required_reason(reason: &str) -> Result<&str> {
    let r = reason.trim();
    if r.is_empty() {
        return Err(StoreError::Invalid("a reason is required".into()));
    }
    check_text("reason", r).map_err(StoreError::Invalid)?;
    Ok(r)
}

/// A comment on an item's history: not empty, checked like any text.
pub(crate) fn check_comment(text: &str) -> Result<()> {
    if text.trim().is_empty() {
        return Err(StoreError::Invalid("the comment is empty".into()));
    }
    check_text("comment", text).map_err(StoreError::Invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failing_needs_a_reason_and_text_is_checked() {
        let said = |t| Said::text(Some(t));
        assert!(HolderOp::Fail(said("  ")).plan(1).is_err());
        assert!(HolderOp::SaveNotes("a\0b").plan(1).is_err());
        let w = HolderOp::Fail(said(" no answer ")).plan(3).unwrap();
        assert_eq!(w.value, Some("no answer"));
        assert_eq!(w.detail["token"], 3);
        let skip = HolderOp::Skip(Said::NOTHING).plan(1).unwrap();
        assert_eq!(skip.kind, EventKind::Skipped);
        assert_eq!(skip.detail, json!({"token": 1}));
    }

    #[test]
    fn reasons_and_codes_go_into_the_event() {
        let said = Said::text(Some(" needs a Spanish speaker ")).coded(Some("spanish"));
        let w = HolderOp::Release(said).plan(2).unwrap();
        assert_eq!(w.kind, EventKind::Released);
        assert_eq!(
            w.detail,
            json!({"token": 2, "reason": "needs a Spanish speaker", "code": "spanish"})
        );
        let w = HolderOp::Complete(Said::text(Some("ok")).coded(Some("done-ok")))
            .plan(4)
            .unwrap();
        assert_eq!(w.detail["code"], "done-ok");
        assert!(HolderOp::Skip(Said::text(Some("a\0"))).plan(1).is_err());
    }
}
