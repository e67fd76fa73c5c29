//! The SQLite store's statements on the lock protocol's hot paths, in one place: the
//! store runs them and the benchmark's raw baseline (benches/queue.rs) runs the very same
//! text, so the two cannot drift apart.

use crate::domain::TakeOrder;
pub use crate::store::sql::ITEM_COLS;
use crate::store::sql::{ORDER_DUE, ORDER_PRIORITY, const_join, eligible};

/// The event columns, in the order the row reader expects.
pub(crate) const EVENT_COLS: &str = "id, item_id, at, actor, os_user, kind, detail";

/// Condition: the row's lock has expired at `:now` (one comparison; the held items by
/// expiry are in the `items_held` index).
pub(crate) const EXPIRED: &str = "lock_expires_at <= :now";

/// Condition: the row's queue is neither paused nor at `:me`'s limit per user.
const QUEUE_ADMITS: &str = "NOT EXISTS (SELECT 1 FROM queues q WHERE q.name = items.queue AND \
     (q.paused = 1 OR (q.max_per_user IS NOT NULL AND q.max_per_user <= (SELECT count(*) \
     FROM items h WHERE h.lock_user = :me AND h.queue = items.queue AND h.id <> items.id))))";

/// Condition: `:me` may take from the row's queue (see [`eligible!`]).
const ELIGIBLE: &str = eligible!(":me", "take", "items");

/// The claim: the conditional write that takes item `:id` for `:me` at `:now` — its
/// token still `:token`, open, free or expired, its queue not paused, within the WIP
/// limit, a queue `:me` may take from — returning the item.
pub const CLAIM: &str = const_join!(
    &[
        "UPDATE items SET lock_user = :me, lock_time = :now, \
         lock_token = lock_token + 1, lock_expires_at = :now + ",
        crate::store::sql::LOCK_AGE,
        " WHERE id = :id AND lock_token = :token AND state = 'open' \
         AND (lock_user IS NULL OR lock_expires_at <= :now) \
         AND NOT EXISTS (SELECT 1 FROM queues q WHERE q.name = items.queue AND (q.paused = 1 \
              OR (q.max_per_user IS NOT NULL AND q.max_per_user <= (SELECT count(*) FROM \
              items h WHERE h.lock_user = :me AND h.queue = items.queue AND h.id <> \
              items.id)))) AND ",
        eligible!(":me", "take", "items"),
        " RETURNING ",
        ITEM_COLS
    ],
    ""
);

/// The items `:me` may take at `:now`, in take order, across all queues or within
/// `:queue`, other than the ids in the JSON array `:skip`: whole rows (`ITEM_COLS`), so
/// that take-next can step past a row another program spoiled without another lookup.
/// Stepped one row at a time: the usual claim reads one.
pub fn candidate(one_queue: bool) -> String {
    candidate_in(one_queue, TakeOrder::Priority)
}

/// [`candidate`] in a take order (`Due` within one queue: the `items_take_due` index).
pub fn candidate_in(one_queue: bool, order: TakeOrder) -> String {
    format!(
        "SELECT {ITEM_COLS} FROM items \
         WHERE state = 'open' {} \
         AND (lock_user IS NULL OR {EXPIRED}) \
         AND id NOT IN (SELECT value FROM json_each(:skip)) \
         AND {QUEUE_ADMITS} AND {ELIGIBLE} \
         ORDER BY {}",
        if one_queue { "AND queue = :queue" } else { "" },
        match order {
            TakeOrder::Priority => ORDER_PRIORITY,
            TakeOrder::Due => ORDER_DUE,
        }
    )
}

/// An item write: `set` where the item is `:id` and `fence` holds (see
/// [`crate::store::sql`] for both).
pub fn fenced_update(set: &str, fence: &str) -> String {
    // The column's json_valid CHECK reads the text: `:json` is the value as it is.
    let set = set.replace(":json", ":value");
    format!("UPDATE items SET {set} WHERE id = :id AND {fence}")
}

/// Appends an event: item, time, actor, OS user, kind, detail (JSON text).
pub const INSERT_EVENT: &str = "INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

/// Creates a queue row on first use.
pub const ENSURE_QUEUE: &str =
    "INSERT INTO queues (name) VALUES (?1) ON CONFLICT (name) DO NOTHING";

/// Inserts an item unless its request id is known; returns the new id (bind it with
/// [`bind_items`]).
pub use super::insert::{Creation, bind_items, insert_item_sql};

/// The item with a known request id.
pub const ITEM_BY_REQUEST_ID: &str = "SELECT id FROM items WHERE request_id = ?1";

/// Items in a state (all when NULL) of a queue (all when NULL), from the kept counts.
pub const KEPT_COUNT: &str = "SELECT coalesce(sum(n), 0) FROM item_counts \
     WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR queue = ?2)";
