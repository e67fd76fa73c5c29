//! The invariants `caseload check` looks for on both backends: each a query (the same
//! SQL in both dialects) selecting the ids of the rows that break it, and what to say.

use crate::domain::{EventKind, ItemState};
use crate::store::sql::{EXPECTED_HOLDS, HOLDS_COLS, kinds_sql};

/// At most this many rows are named per finding.
pub(crate) const LIMIT: usize = 20;

/// `(query, row kind, what is wrong)`: the query selects the ids of offending rows; a
/// finding reads "item #7 has an unknown state".
pub(crate) fn invariants() -> Vec<(String, &'static str, &'static str)> {
    let states = ItemState::ALL
        .iter()
        .map(|s| format!("'{}'", s.as_str()))
        .collect::<Vec<_>>()
        .join(", ");
    let items = |cond: &str| format!("SELECT id FROM items WHERE {cond} ORDER BY id LIMIT {LIMIT}");
    vec![
        (
            items("(lock_user IS NULL) <> (lock_time IS NULL)"),
            "item",
            "lock_user and lock_time disagree",
        ),
        (
            items("state <> 'open' AND lock_user IS NOT NULL"),
            "item",
            "is not open but carries a lock",
        ),
        (
            items(&format!("state IS NULL OR state NOT IN ({states})")),
            "item",
            "has an unknown state (column state)",
        ),
        (
            items("lock_user IS NOT NULL AND (lock_token IS NULL OR lock_token < 1)"),
            "item",
            "is locked with no lock token",
        ),
        (
            format!(
                "SELECT id FROM events WHERE kind IS NULL OR kind NOT IN ({}) ORDER BY id \
                 LIMIT {LIMIT}",
                kinds_sql(&EventKind::ALL)
            ),
            "event",
            "has an unknown kind (column kind)",
        ),
        (
            format!(
                "SELECT event_id FROM (SELECT {HOLDS_COLS} FROM ({EXPECTED_HOLDS}) x \
                 EXCEPT SELECT {HOLDS_COLS} FROM holds) d ORDER BY event_id LIMIT {LIMIT}"
            ),
            "event",
            "ends a hold the holds table lacks or records differently (the figures are wrong)",
        ),
        (
            format!(
                "SELECT event_id FROM (SELECT {HOLDS_COLS} FROM holds \
                 EXCEPT SELECT {HOLDS_COLS} FROM ({EXPECTED_HOLDS}) x) d ORDER BY event_id \
                 LIMIT {LIMIT}"
            ),
            "event",
            "has a row in the holds table that its history does not give (the figures are wrong)",
        ),
    ]
}
