//! Four eyes (issue 29 §1): a completion its queue chooses for review (a share of its
//! items, each person's first ones: `domain::review`) puts the item into `review` — the
//! maker's `completed`, then `submitted` — instead of `done`. A second person takes it
//! under a lock as any item; the take's conditional write itself refuses the caller's own
//! work (completed by them, or a field corrected by them before it went to review), so
//! nobody reviews themselves whatever they ask. The reviewer accepts (`accepted`: done) or
//! rejects with a reason (`rejected`: back to the maker as an assignment, or to the pool
//! when the maker is no longer known or has left); both fenced by the reviewer's token.
//! A verdict asked again after its answer was lost (same token, the item as it left it)
//! answers with the item and writes nothing, as an undo's retry does.

use serde_json::{Value, json};

use super::{HolderOp, ItemWrite, Tx, found, known_queue};
use crate::domain::review::why_review;
use crate::domain::{Event, EventKind, Item, ItemState, QueueSettings, Work};
use crate::store::error::{Result, StoreError};
use crate::store::sql::{
    FENCE_REVIEW_TAKE, FENCE_REVIEWER, SET_ACCEPT, SET_REJECT_TO_MAKER, SET_REJECT_TO_POOL,
    SET_REVIEW_TAKE, SET_SUBMIT,
};

/// Where a complete (`op`, planned as `w`) goes: to review when item `id`'s queue
/// (`queue`, as [`Tx::finishing`] read it) chooses it; else unchanged. No lookup for a
/// queue that reviews nothing.
pub(crate) fn route<'a>(
    tx: &mut dyn Tx,
    id: i64,
    op: HolderOp<'a>,
    w: ItemWrite<'a>,
    queue: Option<QueueSettings>,
) -> Result<(HolderOp<'a>, ItemWrite<'a>)> {
    let HolderOp::Complete(said) = op else {
        return Ok((op, w));
    };
    // No such item: the fenced write explains.
    let Some(q) = queue else {
        return Ok((op, w));
    };
    if q.review_percent == 0 && q.review_new == 0 {
        return Ok((op, w));
    }
    let before = match q.review_new {
        0 => 0,
        n => tx.completions_in(&q.name, n)?,
    };
    Ok(match why_review(&q, id, before) {
        Some(why) => (
            HolderOp::Submit(said, why),
            ItemWrite {
                set: SET_SUBMIT,
                ..w
            },
        ),
        None => (op, w),
    })
}

/// Takes an item for review: `id`, or the oldest submission the caller may review
/// (within `queue`).
pub(crate) fn take_review(tx: &mut dyn Tx, queue: Option<&str>, id: Option<i64>) -> Result<Item> {
    if let Some(id) = id {
        return take_one(tx, id);
    }
    if let Some(name) = queue {
        let q = known_queue(tx, name)?;
        super::require_eligible(tx, Work::Review, &q.name)?;
        if q.paused {
            return Err(StoreError::Paused {
                queues: vec![q.name],
            });
        }
    }
    // PostgreSQL: a row another reviewer took between the look and the write is looked
    // past (the look skips rows being written).
    for _ in 0..3 {
        let Some(c) = tx.reviewable(queue)? else {
            return Err(StoreError::NothingToClaim(match queue {
                Some(q) => format!("nothing waits for review in queue '{q}' that you may review"),
                None => "nothing waits for review that you may review".into(),
            }));
        };
        if let Some(item) = claim(tx, &c)? {
            return Ok(item);
        }
    }
    Err(StoreError::Busy(
        "items waiting for review kept being taken by others; try again".into(),
    ))
}

/// `claim --review --id`: the caller's own review lock is renewed; someone else's live
/// lock, a paused queue or the caller's own work is refused.
fn take_one(tx: &mut dyn Tx, id: i64) -> Result<Item> {
    let me = tx.actor().name.clone();
    let cur = found(id, tx.item_for_update(id)?)?;
    if cur.state != ItemState::Review {
        return Err(StoreError::NotInReview {
            id,
            state: cur.state,
        });
    }
    if cur.is_held_by(&me) {
        let renew = HolderOp::Renew;
        let w = renew.plan(cur.lock_token)?;
        super::holder_write(tx, id, cur.lock_token, renew, &w)?;
        return found(id, tx.item(id)?);
    }
    if let Some(lock) = cur.lock()
        && !lock.is_expired(tx.now())
    {
        return Err(StoreError::HeldByOther {
            id,
            holder: lock.user,
            since: lock.time,
        });
    }
    let q = known_queue(tx, &cur.queue)?;
    super::require_eligible(tx, Work::Review, &q.name)?;
    if q.paused {
        return Err(StoreError::Paused {
            queues: vec![q.name],
        });
    }
    // The row is held: only the own-work condition of the take's write can refuse it now.
    claim(tx, &cur)?.ok_or(StoreError::OwnWork(id))
}

/// The review take's one conditional write (see [`FENCE_REVIEW_TAKE`]): `locked`, or
/// `taken_over` naming an expired reviewer; `None` when the condition does not hold.
fn claim(tx: &mut dyn Tx, cur: &Item) -> Result<Option<Item>> {
    let given = cur.lock_token + 1;
    let (kind, detail) = match &cur.lock_user {
        Some(from) => (
            EventKind::TakenOver,
            json!({"from": from, "token": given, "review": true}),
        ),
        None => (EventKind::Locked, json!({"token": given, "review": true})),
    };
    let w = ItemWrite {
        set: SET_REVIEW_TAKE,
        fence: FENCE_REVIEW_TAKE,
        value: None,
        arg: None,
        kind,
        detail,
    };
    if !tx.write_item(cur.id, cur.lock_token, &w)? {
        return Ok(None);
    }
    found(cur.id, tx.item(cur.id)?).map(Some)
}

/// The reviewer accepts item `id` (held under `token`): done, with an optional comment.
pub(crate) fn accept(tx: &mut dyn Tx, id: i64, token: i64, comment: Option<&str>) -> Result<Item> {
    let mut detail = json!({"token": token});
    if let Some(c) = comment {
        detail["comment"] = json!(c);
    }
    let w = ItemWrite {
        set: SET_ACCEPT,
        fence: FENCE_REVIEWER,
        value: None,
        arg: None,
        kind: EventKind::Accepted,
        detail,
    };
    reviewer_write(tx, id, token, &w)?;
    found(id, tx.item(id)?)
}

/// The reviewer rejects item `id` (held under `token`) for `reason` (a ready-made text's
/// `code`, when one was chosen, kept in the event): open again, assigned to its maker
/// (their `reassigned` follows the `rejected`), or in the pool when the maker is no longer
/// known.
pub(crate) fn reject(
    tx: &mut dyn Tx,
    id: i64,
    token: i64,
    reason: &str,
    code: Option<&str>,
) -> Result<Item> {
    let cur = found(id, tx.item_for_update(id)?)?;
    // A maker who left (issue 29 §4) gets nothing back: the pool does.
    let maker = match cur.finished_by.clone() {
        Some(m) if super::supervise::is_known(tx, &m)? && tx.access(&m)?.left.is_none() => Some(m),
        _ => None,
    };
    let mut detail = json!({"token": token, "reason": reason, "to": maker,
                            "maker": cur.finished_by});
    if let Some(c) = code {
        detail["code"] = json!(c);
    }
    let w = ItemWrite {
        set: match maker {
            Some(_) => SET_REJECT_TO_MAKER,
            None => SET_REJECT_TO_POOL,
        },
        fence: FENCE_REVIEWER,
        value: maker.as_deref(),
        arg: None,
        kind: EventKind::Rejected,
        detail,
    };
    if !reviewer_write(tx, id, token, &w)? {
        return Ok(cur);
    }
    if let Some(to) = &maker {
        let me = tx.actor().name.clone();
        let detail = json!({"from": me, "to": to, "reason": reason, "token": token + 1,
                            "assigned": true, "rejected": true});
        tx.insert_event(id, EventKind::Reassigned, &detail)?;
    }
    found(id, tx.item(id)?)
}

/// A fenced write of the reviewer: true when written; false when this same verdict was
/// written before under this same lock (a retry after its answer was lost: nothing is
/// written again). When the fence does not hold otherwise, why (not in review, or the
/// lock lost as any lock is).
fn reviewer_write(tx: &mut dyn Tx, id: i64, token: i64, w: &ItemWrite<'_>) -> Result<bool> {
    if tx.write_item(id, token, w)? {
        return Ok(true);
    }
    let item = found(id, tx.item(id)?)?;
    let me = tx.actor().name.clone();
    let verdict = tx.last_event(id, &[EventKind::Accepted, EventKind::Rejected], None)?;
    if verdict.is_some_and(|v| retried(&item, &v, w.kind, token, &me)) {
        return Ok(false);
    }
    if item.state != ItemState::Review {
        return Err(StoreError::NotInReview {
            id,
            state: item.state,
        });
    }
    Err(super::holder::explain_loss(tx, id, token)?)
}

/// True when `verdict` (the item's last accept or reject) is this person's `kind` under
/// `token` and the item is still as it left it: done under that token (accepted); open,
/// assigned to its maker under the next token or free under the same one (rejected).
fn retried(item: &Item, verdict: &Event, kind: EventKind, token: i64, me: &str) -> bool {
    let of = |key: &str| verdict.detail.get(key);
    if verdict.kind != kind
        || verdict.actor != me
        || of("token").and_then(Value::as_i64) != Some(token)
    {
        return false;
    }
    match kind {
        EventKind::Accepted => item.state == ItemState::Done && item.lock_token == token,
        _ => {
            let to = of("to").and_then(Value::as_str);
            item.state == ItemState::Open
                && item.lock_user.as_deref() == to
                && item.lock_token == token + i64::from(to.is_some())
        }
    }
}
