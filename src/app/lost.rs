//! Noticing a lost lock and saying in the user's terms what happened to it.

use super::Held;
use crate::domain::time::clock_hm;
use crate::domain::{Event, EventKind, Item, ItemState, QueueSettings};
use crate::store::LostLock;

/// True when `item` as stored now is no longer held by `me` under `held`'s token.
pub fn is_lost(me: &str, held: &Held, item: &Item) -> bool {
    item.state != ItemState::Open
        || item.lock_user.as_deref() != Some(me)
        || item.lock_token != held.token
}

/// Why the lock is gone, from the item's history, e.g.
/// "Your lock on #42 expired at 10:42; bob took it at 10:47".
pub fn explain(me: &str, held: &Held, queue: &QueueSettings, history: &[Event]) -> String {
    let id = held.id;
    let expired_at = clock_hm(held.lock_time + queue.lock_ms());
    let last = history.iter().rev().find(|e| {
        matches!(
            e.kind,
            EventKind::TakenOver
                | EventKind::Locked
                | EventKind::Released
                | EventKind::Skipped
                | EventKind::Expired
                | EventKind::Unlocked
                | EventKind::Reassigned
                | EventKind::Completed
                | EventKind::Failed
                | EventKind::Cancelled
        )
    });
    let Some(e) = last else {
        return format!("Your lock on #{id} is gone");
    };
    let at = clock_hm(e.at);
    let who = &e.actor;
    let mine = who == me;
    // A supervisor's action carries the reason they gave; the holder is told it.
    let why = e
        .detail_str("reason")
        .filter(|_| {
            matches!(
                e.kind,
                EventKind::Unlocked | EventKind::Reassigned | EventKind::Cancelled
            )
        })
        .map(|r| format!(", reason: “{r}”"))
        .unwrap_or_default();
    let text = match e.kind {
        EventKind::TakenOver | EventKind::Locked if !mine => {
            if e.at >= held.lock_time + queue.lock_ms() {
                format!("Your lock on #{id} expired at {expired_at}; {who} took it at {at}")
            } else {
                format!("Your lock on #{id} was lost; {who} took it at {at}")
            }
        }
        EventKind::TakenOver | EventKind::Locked => {
            format!("Your lock on #{id} was replaced by a newer one of yours at {at}")
        }
        EventKind::Expired => {
            format!("Your lock on #{id} expired at {expired_at}; {who} released it at {at}")
        }
        EventKind::Unlocked => {
            format!("{who} unlocked #{id} at {at} (you held it; it is back in the pool)")
        }
        EventKind::Reassigned => format!(
            "{who} reassigned #{id} from you to {} at {at}",
            e.detail_str("to").unwrap_or("someone else")
        ),
        EventKind::Released | EventKind::Skipped if mine => {
            format!("You released #{id} elsewhere at {at}")
        }
        kind => {
            let by = if mine {
                "you (elsewhere)"
            } else {
                who.as_str()
            };
            format!("#{id} was {} by {by} at {at}", past_tense(kind))
        }
    };
    format!("{text}{why}")
}

fn past_tense(kind: EventKind) -> &'static str {
    match kind {
        EventKind::Completed => "completed",
        EventKind::Failed => "failed",
        EventKind::Cancelled => "cancelled",
        EventKind::Released => "released",
        EventKind::Skipped => "skipped",
        other => other.as_str(),
    }
}

/// One line about a lock lost since the last visit.
pub fn describe_lost(l: &LostLock) -> String {
    let at = clock_hm(l.at);
    let what = match l.how {
        EventKind::TakenOver => format!("{} took it over at {at}", l.by),
        EventKind::Expired => format!("it expired; {} released it at {at}", l.by),
        EventKind::Unlocked => format!("{} unlocked it at {at}", l.by),
        EventKind::Reassigned => format!(
            "{} reassigned it{} at {at}",
            l.by,
            l.now_held_by
                .as_ref()
                .map(|h| format!(" to {h}"))
                .unwrap_or_default()
        ),
        EventKind::Cancelled => format!("{} cancelled it at {at}", l.by),
        other => format!("{} ({}) at {at}", l.by, other.as_str()),
    };
    format!("#{} {}: {what}", l.item_id, l.title)
}
