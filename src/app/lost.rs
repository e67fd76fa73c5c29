//! Noticing a lost lock and saying in the user's terms what happened to it.

use super::Held;
use crate::domain::{Event, Item, LockLoss};
use crate::store::LostLock;

/// True when `item` as stored now is no longer held by `me` under `held`'s token.
pub(crate) fn is_lost(me: &str, held: &Held, item: &Item) -> bool {
    !item.held_with(me, held.token)
}

/// Why the lock is gone, from the item's history, e.g.
/// "Your lock on #42 expired at 10:42; bob took it at 10:47".
pub(crate) fn explain(me: &str, held: &Held, history: &[Event]) -> String {
    match LockLoss::last_in(history) {
        Some(loss) => loss.told_to(me, held.id, held.lock_expires_at),
        None => format!("Your lock on #{} is gone", held.id),
    }
}

/// One line about a lock lost since the last visit.
pub fn describe_lost(l: &LostLock) -> String {
    format!("#{} {}: {}", l.item_id, l.title, l.loss)
}
