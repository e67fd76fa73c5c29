//! Reading stored rows into the domain's types, once for both backends. Each backend
//! gives access to a row's cells ([`Cells`]); what the cells mean is decided here, and a
//! value caseload cannot read — an unknown item state or event kind, an event detail that
//! is not JSON — is corruption, reported naming the row and the column, never replaced by
//! a plausible value.

use super::LostLock;
use super::error::{Result, StoreError};
use crate::domain::{Event, EventKind, Item, ItemState, LockLoss, QueueSettings};

/// The cells of one result row, by position.
pub(crate) trait Cells {
    fn int(&self, i: usize) -> Result<i64>;
    fn opt_int(&self, i: usize) -> Result<Option<i64>>;
    fn text(&self, i: usize) -> Result<String>;
    fn opt_text(&self, i: usize) -> Result<Option<String>>;
    /// A boolean (SQLite stores 0/1, PostgreSQL a BOOLEAN).
    fn flag(&self, i: usize) -> Result<bool>;
}

fn corrupt(what: String) -> StoreError {
    StoreError::Corrupt(format!(
        "{what}; the database was changed outside caseload or is damaged (run `caseload check`)"
    ))
}

/// An item's state as stored.
pub(crate) fn item_state(id: i64, stored: &str) -> Result<ItemState> {
    ItemState::parse(stored).ok_or_else(|| {
        corrupt(format!(
            "item #{id}: column state holds '{stored}', which is not a state caseload knows"
        ))
    })
}

/// An event's kind as stored.
pub(crate) fn event_kind(event: i64, item: i64, stored: &str) -> Result<EventKind> {
    EventKind::parse(stored).ok_or_else(|| {
        corrupt(format!(
            "event #{event} of item #{item}: column kind holds '{stored}', which is not an \
             event kind caseload knows"
        ))
    })
}

/// An item from the columns of `ITEM_COLS`.
pub(crate) fn item_from(r: &impl Cells) -> Result<Item> {
    let id = r.int(0)?;
    Ok(Item {
        id,
        queue: r.text(1)?,
        request_id: r.opt_text(2)?,
        title: r.text(3)?,
        body: r.text(4)?,
        params: r.text(5)?,
        priority: r.int(6)?,
        due_at: r.opt_int(7)?,
        state: item_state(id, &r.text(8)?)?,
        lock_user: r.opt_text(9)?,
        lock_time: r.opt_int(10)?,
        lock_token: r.int(11)?,
        notes: r.text(12)?,
        result: r.opt_text(13)?,
        error: r.opt_text(14)?,
        created_at: r.int(15)?,
        created_by: r.text(16)?,
        finished_at: r.opt_int(17)?,
        finished_by: r.opt_text(18)?,
    })
}

/// An event from `id, item_id, at, actor, os_user, kind, detail` (detail as JSON text).
pub(crate) fn event_from(r: &impl Cells) -> Result<Event> {
    let (id, item_id) = (r.int(0)?, r.int(1)?);
    let detail = r.text(6)?;
    Ok(Event {
        id,
        item_id,
        at: r.int(2)?,
        actor: r.text(3)?,
        os_user: r.text(4)?,
        kind: event_kind(id, item_id, &r.text(5)?)?,
        detail: serde_json::from_str(&detail).map_err(|e| {
            corrupt(format!(
                "event #{id} of item #{item_id}: column detail is not JSON ({e})"
            ))
        })?,
    })
}

/// A lost lock from the event columns (as [`event_from`]) followed by the item's title
/// and current holder.
pub(crate) fn lost_lock_from(r: &impl Cells) -> Result<LostLock> {
    let e = event_from(r)?;
    let loss = LockLoss::from_event(&e).ok_or_else(|| {
        corrupt(format!(
            "event #{} of item #{}: a '{}' event cannot end a lock",
            e.id,
            e.item_id,
            e.kind.as_str()
        ))
    })?;
    Ok(LostLock {
        item_id: e.item_id,
        title: r.text(7)?,
        loss,
        now_held_by: r.opt_text(8)?,
    })
}

/// Queue settings from `name, lock_seconds, warn_seconds, max_per_user, paused`.
pub(crate) fn queue_from(r: &impl Cells) -> Result<QueueSettings> {
    Ok(QueueSettings {
        name: r.text(0)?,
        lock_seconds: r.int(1)?,
        warn_seconds: r.int(2)?,
        max_per_user: r.opt_int(3)?,
        paused: r.flag(4)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_words_are_corruption_naming_row_and_column() {
        let e = item_state(7, "exploded").unwrap_err();
        assert!(matches!(e, StoreError::Corrupt(_)));
        let m = e.to_string();
        assert!(m.contains("item #7") && m.contains("column state"), "{m}");
        let m = event_kind(3, 7, "vanished").unwrap_err().to_string();
        assert!(
            m.contains("event #3 of item #7") && m.contains("column kind"),
            "{m}"
        );
    }
}
