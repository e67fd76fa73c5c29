//! Parking (a call-back): the holder parks the item until a time, which releases the lock
//! and keeps the item theirs (state `parked`, event `parked {token, until, reason}`);
//! the park ends (event `woke {by, owner}`) when
//! - its owner takes it (`claim --id`, `wake`, or their next take once it is awake, which
//!   offers it first): it is locked to them under a new token (`woke` then `locked`);
//! - a supervisor wakes it: it returns to the pool;
//! - the grace after its wake time (its queue's `park_grace_seconds`) passes unopened:
//!   it returns to the pool, written by whatever comes first: the reaper (`reap`), or a
//!   claim, which returns such items before it looks for one to take.
//!
//! Every end is one conditional write fenced by the item's state, owner and token, with
//! its event in the same transaction.
//!
//! Parked time pauses a service level: when a park ends, an item with a due time in a
//! queue with an SLA is due later by the working time it spent parked (by the queue's
//! calendar), in the same write; the `woke` event says so (`due: {from, to, paused_ms}`).

use serde_json::{Value, json};

use super::{ItemWrite, Tx, found};
use crate::domain::fields::{FieldError, Input};
use crate::domain::park::{GRACE_MS, Park, ParkStatus};
use crate::domain::{EventKind, Item, ItemState};
use crate::store::TakeNext;
use crate::store::error::{Result, StoreError};
use crate::store::sql::{FENCE_PARKED, FENCE_PARKED_MINE, SET_UNPARK, SET_WAKE_TAKE};

/// How an ended park is recorded (`woke {by}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WokeBy {
    Owner,
    Grace,
    Supervisor,
    /// Its owner left (`user set NAME --leaving`).
    Leaving,
}

impl WokeBy {
    fn as_str(self) -> &'static str {
        match self {
            WokeBy::Owner => "owner",
            WokeBy::Grace => "grace",
            WokeBy::Supervisor => "supervisor",
            WokeBy::Leaving => "leaving",
        }
    }
}

/// Checks a park's wake time against the transaction's clock: it must lie ahead.
pub(crate) fn check_until(tx: &mut dyn Tx, until: i64) -> Result<()> {
    let now = tx.now();
    if until <= now {
        return Err(StoreError::Field(FieldError::new(
            Input::Until,
            format!(
                "{} has passed; park until a later time",
                crate::domain::park::when_text(until, now)
            ),
        )));
    }
    Ok(())
}

/// The park of an item in state `parked` (a row without owner or time cannot be acted on),
/// with its queue's grace.
fn park_of(tx: &mut dyn Tx, item: &Item) -> Result<Park> {
    let grace = tx
        .queue(&item.queue)?
        .map_or(GRACE_MS, |q| q.park_grace_ms());
    Park::of(item, grace).ok_or_else(|| {
        StoreError::Corrupt(format!(
            "#{} is parked without an owner or wake time (see `caseload check`)",
            item.id
        ))
    })
}

/// Ends the owner's park of `cur` (read with its row held): locked to them under a new
/// token, `woke {by: owner}` then `locked`.
pub(crate) fn wake_for_owner(tx: &mut dyn Tx, cur: &Item) -> Result<Item> {
    let park = park_of(tx, cur)?;
    let given = cur.lock_token + 1;
    let (due, moved) = paused_due(tx, cur)?;
    let w = ItemWrite {
        set: SET_WAKE_TAKE,
        fence: FENCE_PARKED_MINE,
        value: None,
        arg: due,
        kind: EventKind::Woke,
        detail: with_due(
            json!({"by": WokeBy::Owner.as_str(), "owner": park.by, "token": given}),
            moved,
        ),
    };
    if !tx.write_item(cur.id, cur.lock_token, &w)? {
        return Err(changed(cur.id));
    }
    tx.insert_event(cur.id, EventKind::Locked, &json!({"token": given}))?;
    found(cur.id, tx.item(cur.id)?)
}

/// Returns the parked item `cur` to the pool (`woke {by}` naming its owner); false when
/// it changed since it was read.
fn return_to_pool(tx: &mut dyn Tx, cur: &Item, by: WokeBy) -> Result<bool> {
    let owner = cur.parked_by.clone();
    let (due, moved) = paused_due(tx, cur)?;
    let w = ItemWrite {
        set: SET_UNPARK,
        fence: FENCE_PARKED,
        value: None,
        arg: due,
        kind: EventKind::Woke,
        detail: with_due(json!({"by": by.as_str(), "owner": owner}), moved),
    };
    tx.write_item(cur.id, cur.lock_token, &w)
}

/// A `woke` event's detail, with `due` when the due time moved.
fn with_due(mut detail: Value, moved: Value) -> Value {
    if !moved.is_null() {
        detail["due"] = moved;
    }
    detail
}

/// The due time of the parked item `cur` once its park ends now: later by the working
/// time it spent parked when its queue has an SLA and it has a due time (else `None`,
/// and the due time stays), with the event's account of it (`{from, to, paused_ms}`,
/// or null).
fn paused_due(tx: &mut dyn Tx, cur: &Item) -> Result<(Option<i64>, Value)> {
    let Some(due) = cur.due_at else {
        return Ok((None, Value::Null));
    };
    let Some(sla) = tx.sla(&cur.queue)? else {
        return Ok((None, Value::Null));
    };
    let Some(parked) = tx.last_event(cur.id, &[EventKind::Parked], None)? else {
        return Ok((None, Value::Null));
    };
    let paused = sla.working_between(parked.at, tx.now());
    match sla.after(due, paused) {
        Some(to) if paused > 0 && to != due => Ok((
            Some(to),
            json!({"from": due, "to": to, "paused_ms": paused}),
        )),
        _ => Ok((None, Value::Null)),
    }
}

fn changed(id: i64) -> StoreError {
    StoreError::Busy(format!("#{id} changed while it was being woken; try again"))
}

/// `caseload wake ID`: its owner takes it now (locked to them); a supervisor returns it
/// to the pool; anyone else is refused.
pub(crate) fn wake(tx: &mut dyn Tx, id: i64) -> Result<Item> {
    let cur = found(id, tx.item_for_update(id)?)?;
    if cur.state != ItemState::Parked {
        return Err(StoreError::Invalid(format!(
            "#{id} is not parked (it is {})",
            cur.state.as_str()
        )));
    }
    let park = park_of(tx, &cur)?;
    let me = tx.actor().name.clone();
    if park.by == me {
        return wake_for_owner(tx, &cur);
    }
    super::require_supervisor_of(
        tx,
        Some(&cur.queue),
        &format!("wake #{id}, which {} parked", park.by),
    )?;
    if !return_to_pool(tx, &cur, WokeBy::Supervisor)? {
        return Err(changed(id));
    }
    found(id, tx.item(id)?)
}

/// What `take(id)` does with a parked item: its owner takes it; one past its grace goes
/// back to the pool first (`Ok(None)`: take it as any free item); else `Parked`.
pub(crate) fn take_parked(tx: &mut dyn Tx, cur: &Item) -> Result<Option<Item>> {
    let park = park_of(tx, cur)?;
    let now = tx.now();
    if park.by == tx.actor().name {
        return wake_for_owner(tx, cur).map(Some);
    }
    if park.status(now) == ParkStatus::Returned {
        return_to_pool(tx, cur, WokeBy::Grace)?;
        return Ok(None);
    }
    Err(StoreError::Parked {
        id: cur.id,
        what: park.describe(now),
    })
}

/// Before a take-next: the caller's own woken item (the earliest), taken for them, when
/// `next` allows it (its queue, not skipped).
pub(crate) fn take_woken(tx: &mut dyn Tx, next: &TakeNext) -> Result<Option<Item>> {
    let me = tx.actor().name.clone();
    let now = tx.now();
    let woken = tx.parked(Some(&me), now, false, 8)?;
    let allowed =
        |i: &&Item| next.queue.as_ref().is_none_or(|q| *q == i.queue) && !next.skip.contains(&i.id);
    match woken.iter().find(allowed) {
        // Changed since it was read (PostgreSQL: another session of theirs): take-next
        // goes on as usual.
        Some(item) => match wake_for_owner(tx, item) {
            Err(StoreError::Busy(_)) => Ok(None),
            other => other.map(Some),
        },
        None => Ok(None),
    }
}

/// Returns the parked item `cur`, whose owner is leaving, to the pool (`woke {by:
/// leaving}`); false when it changed since it was read.
pub(crate) fn return_for_leaver(tx: &mut dyn Tx, cur: &Item) -> Result<bool> {
    return_to_pool(tx, cur, WokeBy::Leaving)
}

/// Returns up to `limit` parks whose grace has passed to the pool (`woke {by: grace}`);
/// returns how many.
pub(crate) fn return_parked(tx: &mut dyn Tx, limit: usize) -> Result<usize> {
    let now = tx.now();
    let due = tx.parked(None, now, true, limit)?;
    let mut n = 0;
    for item in &due {
        if return_to_pool(tx, item, WokeBy::Grace)? {
            n += 1;
        }
    }
    Ok(n)
}
