//! Undo a slip: the person who just completed, failed, released, skipped or parked an item
//! takes it back, within its queue's undo window (`undo_seconds`), if nobody touched it
//! since. One conditional write: the item as it was before (open, no result, no error, not
//! parked), locked to them under a new token, fenced by its token and by its last event
//! still being theirs; its event `undone {undid, event, token}`. The undo of a
//! complete-and-next also returns the item that complete took to the pool (its `locked`
//! event is the actor's, at the complete's very time), as a release. An undo asked again
//! after it was applied (its answer lost) answers with the item as it left it.

use serde_json::json;

use super::{ItemWrite, Tx, found};
use crate::domain::park::UNDO_MS;
use crate::domain::time::clock_hm;
use crate::domain::{Event, EventKind, Item, ItemState};
use crate::store::error::{Result, StoreError};
use crate::store::sql::{FENCE_HOLDER, FENCE_UNDO, SET_RELEASE, SET_UNDO};

/// The kinds a person may undo.
pub(crate) const UNDOABLE: &[EventKind] = &[
    EventKind::Completed,
    EventKind::Failed,
    EventKind::Released,
    EventKind::Skipped,
    EventKind::Parked,
];

/// Why an undo is refused, and what to do instead.
fn refused(item: &Item, why: String) -> StoreError {
    let id = item.id;
    let instead = match item.state {
        ItemState::Done | ItemState::Failed | ItemState::Cancelled => {
            format!("ask a supervisor to reopen #{id}")
        }
        ItemState::Review => "it waits for review; its reviewer may reject it back to you".into(),
        _ => format!("take #{id} again if it is free"),
    };
    StoreError::UndoRefused(format!("#{id} cannot be undone: {why}; {instead}"))
}

/// Undoes the actor's last change to `id` (see the module); returns the item, locked to
/// them.
pub(crate) fn undo(tx: &mut dyn Tx, id: i64) -> Result<Item> {
    let me = tx.actor().name.clone();
    let now = tx.now();
    let cur = found(id, tx.item_for_update(id)?)?;
    let Some(last) = tx.last_event(id, &EventKind::ALL, None)? else {
        return Err(refused(&cur, "it has no change to undo".into()));
    };
    if retried(&cur, &last, &me) {
        return Ok(cur);
    }
    if last.actor != me {
        return Err(refused(
            &cur,
            format!(
                "{} {} it at {}",
                last.actor,
                last.kind.as_str(),
                clock_hm(last.at)
            ),
        ));
    }
    if !last.kind.is_in(UNDOABLE) {
        return Err(refused(
            &cur,
            format!(
                "your last change to it ({}) is not one undo takes back",
                last.kind.as_str()
            ),
        ));
    }
    let window = tx.queue(&cur.queue)?.map_or(UNDO_MS, |q| q.undo_ms());
    if window == 0 {
        return Err(refused(
            &cur,
            format!("queue '{}' offers no undo", cur.queue),
        ));
    }
    if now - last.at > window {
        return Err(refused(
            &cur,
            format!(
                "the {} s to undo it ended at {}",
                window / 1000,
                clock_hm(last.at + window)
            ),
        ));
    }
    let given = cur.lock_token + 1;
    let w = ItemWrite {
        set: SET_UNDO,
        fence: FENCE_UNDO,
        value: None,
        arg: Some(last.id),
        kind: EventKind::Undone,
        detail: json!({"undid": last.kind.as_str(), "event": last.id, "token": given}),
    };
    if !tx.write_item(id, cur.lock_token, &w)? {
        return Err(refused(&cur, "it changed just now".into()));
    }
    if last.kind == EventKind::Completed {
        return_next(tx, id, &last)?;
    }
    found(id, tx.item(id)?)
}

/// True when `last` is this person's undo of `cur` and they still hold it under the token
/// it gave: a retry of an undo whose answer was lost (a killed call, a dropped connection),
/// answered with the item as the undo left it, writing nothing.
fn retried(cur: &Item, last: &Event, me: &str) -> bool {
    last.kind == EventKind::Undone
        && last.actor == me
        && cur.lock_user.as_deref() == Some(me)
        && last.detail.get("token").and_then(serde_json::Value::as_i64) == Some(cur.lock_token)
}

/// The item a complete-and-next took along with `completed` (of item `id`): returned to
/// the pool when the actor still holds it under that take's token.
fn return_next(tx: &mut dyn Tx, id: i64, completed: &Event) -> Result<()> {
    let taken = tx.events_at(completed.at)?;
    let Some(next) = taken
        .iter()
        .find(|e| e.item_id != id && e.id > completed.id && e.kind.is_in(EventKind::TAKES_LOCK))
    else {
        return Ok(());
    };
    let Some(token) = next.detail.get("token").and_then(serde_json::Value::as_i64) else {
        return Ok(());
    };
    // A release, as far as the figures go: that hold ends here.
    let w = ItemWrite {
        set: SET_RELEASE,
        fence: FENCE_HOLDER,
        value: None,
        arg: None,
        kind: EventKind::Released,
        detail: json!({"token": token, "undo_of": id}),
    };
    tx.write_item(next.item_id, token, &w)?;
    Ok(())
}
