//! The audit trail: one event for every change, written in the change's transaction.

use serde::Serialize;

use super::time::Millis;

/// What happened to an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    Created,
    Locked,
    Renewed,
    Released,
    Expired,
    TakenOver,
    Completed,
    Failed,
    Requeued,
    Unlocked,
    Reassigned,
    Skipped,
    Noted,
    Cancelled,
    /// A holder's correction of a field (`caseload set`, the detail pane's form, a
    /// checklist's tick): `{field, from, to}`, `typed` when the value was normalised,
    /// `line` for a checklist's line (see `domain::queue_fields`).
    FieldChanged,
    /// The holder parked the item (a call-back): `{token, until, reason}`; the lock is
    /// released and the hold ends, as a release's.
    Parked,
    /// A parked item's park ended: `{by: owner|grace|supervisor, owner}`; by its owner it
    /// is followed by their `locked`.
    Woke,
    /// The actor undid their own last change (`{undid: KIND, event, token}`): the item is
    /// as it was before it, locked to them under a new token.
    Undone,
    /// A completion went to review (its `completed` event is just before it): `{why:
    /// sample|new, share|first}`; the item waits for a second person.
    Submitted,
    /// The reviewer accepted the item (it is done): `{token, comment}`.
    Accepted,
    /// The reviewer rejected the item, `{token, reason, code, to}`: it goes back to its
    /// maker as an assignment (their `reassigned` follows), or to the pool.
    Rejected,
}

impl EventKind {
    pub(crate) const ALL: [EventKind; 21] = [
        EventKind::Created,
        EventKind::Locked,
        EventKind::Renewed,
        EventKind::Released,
        EventKind::Expired,
        EventKind::TakenOver,
        EventKind::Completed,
        EventKind::Failed,
        EventKind::Requeued,
        EventKind::Unlocked,
        EventKind::Reassigned,
        EventKind::Skipped,
        EventKind::Noted,
        EventKind::Cancelled,
        EventKind::FieldChanged,
        EventKind::Parked,
        EventKind::Woke,
        EventKind::Undone,
        EventKind::Submitted,
        EventKind::Accepted,
        EventKind::Rejected,
    ];

    /// Every kind's name, for messages: "created, locked, …".
    pub fn names() -> String {
        let names: Vec<&str> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
        names.join(", ")
    }

    /// The kind's name as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Created => "created",
            EventKind::Locked => "locked",
            EventKind::Renewed => "renewed",
            EventKind::Released => "released",
            EventKind::Expired => "expired",
            EventKind::TakenOver => "taken_over",
            EventKind::Completed => "completed",
            EventKind::Failed => "failed",
            EventKind::Requeued => "requeued",
            EventKind::Unlocked => "unlocked",
            EventKind::Reassigned => "reassigned",
            EventKind::Skipped => "skipped",
            EventKind::Noted => "noted",
            EventKind::Cancelled => "cancelled",
            EventKind::FieldChanged => "field_changed",
            EventKind::Parked => "parked",
            EventKind::Woke => "woke",
            EventKind::Undone => "undone",
            EventKind::Submitted => "submitted",
            EventKind::Accepted => "accepted",
            EventKind::Rejected => "rejected",
        }
    }

    /// Parses a stored kind name.
    pub(crate) fn parse(s: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Kinds that give an item's lock to someone (its holder from then on).
    pub(crate) const TAKES_LOCK: &'static [EventKind] = &[
        EventKind::Locked,
        EventKind::TakenOver,
        EventKind::Reassigned,
        EventKind::Undone,
    ];

    /// Kinds by which a holder loses a lock to someone else's action.
    pub(crate) const ENDS_ANOTHERS_LOCK: &'static [EventKind] = &[
        EventKind::TakenOver,
        EventKind::Expired,
        EventKind::Unlocked,
        EventKind::Reassigned,
        EventKind::Cancelled,
    ];

    /// Kinds that change who holds an open item's lock, and a supervisor's reopen or
    /// requeue (which leaves the item free): the last of them says who holds an open item,
    /// or why nobody does.
    pub(crate) const CHANGES_LOCK_OR_REOPENS: &'static [EventKind] = &[
        EventKind::Locked,
        EventKind::TakenOver,
        EventKind::Expired,
        EventKind::Unlocked,
        EventKind::Reassigned,
        EventKind::Released,
        EventKind::Skipped,
        EventKind::Requeued,
        EventKind::Parked,
        EventKind::Undone,
    ];

    /// Kinds that finish an item or make a finished item open again: the last of them is
    /// the item's state as its history tells it.
    pub(crate) const FINISHES_OR_REOPENS: &'static [EventKind] = &[
        EventKind::Completed,
        EventKind::Failed,
        EventKind::Cancelled,
        EventKind::Requeued,
        EventKind::Undone,
        EventKind::Accepted,
        EventKind::Rejected,
    ];

    /// Kinds after which the previous holder holds the item no more: the lock changes and
    /// the ways an item is finished.
    pub(crate) const ENDS_A_HOLD: &'static [EventKind] = &[
        EventKind::Locked,
        EventKind::TakenOver,
        EventKind::Expired,
        EventKind::Unlocked,
        EventKind::Reassigned,
        EventKind::Released,
        EventKind::Skipped,
        EventKind::Completed,
        EventKind::Failed,
        EventKind::Cancelled,
        EventKind::Parked,
        EventKind::Undone,
        EventKind::Accepted,
        EventKind::Rejected,
    ];

    /// True when the kind is one of `set`.
    pub(crate) fn is_in(self, set: &[EventKind]) -> bool {
        set.contains(&self)
    }
}

/// One audit event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub id: i64,
    pub item_id: i64,
    pub at: Millis,
    pub actor: String,
    pub os_user: String,
    pub kind: EventKind,
    pub detail: serde_json::Value,
}

impl Event {
    /// A string field of the detail, if present.
    pub fn detail_str(&self, key: &str) -> Option<&str> {
        self.detail.get(key).and_then(|v| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip() {
        for k in EventKind::ALL {
            assert_eq!(EventKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(EventKind::parse("exploded"), None);
    }

    #[test]
    fn the_sets_nest() {
        for k in EventKind::CHANGES_LOCK_OR_REOPENS {
            assert!(
                k.is_in(EventKind::ENDS_A_HOLD) || *k == EventKind::Requeued,
                "{k:?}"
            );
        }
        for k in EventKind::ENDS_ANOTHERS_LOCK
            .iter()
            .chain(EventKind::TAKES_LOCK)
        {
            assert!(k.is_in(EventKind::ENDS_A_HOLD), "{k:?}");
        }
        assert!(!EventKind::Renewed.is_in(EventKind::ENDS_A_HOLD));
        assert!(!EventKind::Noted.is_in(EventKind::ENDS_A_HOLD));
    }
}
