//! The audit of changes that are not about one item: roles, login bindings, queue
//! settings, field definitions and ready-made texts. Each record says who (the caseload name and the real identity behind it: the
//! OS login on SQLite, the database role on PostgreSQL), when, what, and old → new.

use serde::Serialize;
use serde_json::Value;

use super::time::Millis;

/// What an audit record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AuditKind {
    /// A user's role (`caseload user set NAME --role`).
    Role,
    /// Which OS login or database role may use a caseload name (`--login`).
    Login,
    /// A queue's settings (`caseload queue set`, the TUI's `S`).
    Queue,
    /// A queue's field definitions (`caseload field set|delete`); the subject is
    /// `QUEUE.FIELD`.
    Field,
    /// A queue's ready-made texts (`caseload text add|delete`); the subject is
    /// `QUEUE.CODE`.
    Text,
    /// Which queues a person may take from and review in (`user set --queues
    /// --reviews`).
    Access,
    /// A person marked as leaving, or back (`user set --leaving|--back`).
    Leaving,
}

impl AuditKind {
    /// Every kind (the schemas' kind checks list the same names: a test compares them).
    pub(crate) const ALL: [AuditKind; 7] = [
        AuditKind::Role,
        AuditKind::Login,
        AuditKind::Queue,
        AuditKind::Field,
        AuditKind::Text,
        AuditKind::Access,
        AuditKind::Leaving,
    ];

    /// The kind's name as stored.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            AuditKind::Role => "role",
            AuditKind::Login => "login",
            AuditKind::Queue => "queue",
            AuditKind::Field => "field",
            AuditKind::Text => "text",
            AuditKind::Access => "access",
            AuditKind::Leaving => "leaving",
        }
    }

    /// Parses a stored kind.
    pub(crate) fn parse(s: &str) -> Option<AuditKind> {
        AuditKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// The change an audit record is written for, before it is stored: old and new value.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditNote {
    pub kind: AuditKind,
    /// The user or queue changed.
    pub subject: String,
    /// Before (`null` when the row did not exist).
    pub old: Value,
    pub new: Value,
}

/// One stored audit record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditEntry {
    pub id: i64,
    pub at: Millis,
    /// The caseload name used.
    pub actor: String,
    /// Who really acted: the OS login (SQLite) or the database role (PostgreSQL).
    pub real: String,
    pub kind: AuditKind,
    pub subject: String,
    pub old: Value,
    pub new: Value,
}

/// How a caseload name is shown next to the identity that used it: `alice`, or
/// `alice (as bob)` when OS login (or database role) bob used the name alice.
pub(crate) fn acting(name: &str, real: &str) -> String {
    if name == real || real.is_empty() {
        name.to_string()
    } else {
        format!("{name} (as {real})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_and_names_show_who_used_them() {
        for k in AuditKind::ALL {
            assert_eq!(AuditKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(acting("alice", "alice"), "alice");
        assert_eq!(acting("alice", "bob"), "alice (as bob)");
    }
}
