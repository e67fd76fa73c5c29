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
            "ends a hold the holds table lacks or records differently (the figures are wrong; \
             a supervisor's `caseload check --repair-figures` rebuilds them)",
        ),
        (
            format!(
                "SELECT event_id FROM (SELECT {HOLDS_COLS} FROM holds \
                 EXCEPT SELECT {HOLDS_COLS} FROM ({EXPECTED_HOLDS}) x) d ORDER BY event_id \
                 LIMIT {LIMIT}"
            ),
            "event",
            "has a row in the holds table that its history does not give (the figures are \
             wrong; a supervisor's `caseload check --repair-figures` rebuilds them)",
        ),
    ]
}

/// One finish's entry in a `figure_days` list, from a `holds` row (the schema's trigger
/// writes the same text, with a `;` after each entry).
const FINISH_ENTRY: &str = "CASE WHEN how IN ('completed', 'failed') THEN \
     CASE how WHEN 'completed' THEN 'c' ELSE 'f' END \
     || ',' || CAST((ended % 86400000 + 86400000) % 86400000 AS TEXT) \
     || ',' || CAST(own_ms AS TEXT) || ',' || CAST(handle_ms AS TEXT) \
     || ',' || CAST(wait_ms AS TEXT) || ',' || CAST(cycle_ms AS TEXT) \
     || ',' || coalesce(CAST(late_ms AS TEXT), '') END";

/// The day summary's cells (`day, queue, holder`, all their chunks together) that disagree
/// with the `holds` rows: missing, extra, or with other counts, held time or finishes. `sorted` turns a stored
/// `finishes` column into its entries sorted bytewise and joined by `;` (each dialect has
/// its own way); `collate` makes the dialect's ORDER BY bytewise.
pub(crate) fn figure_days_sql(sorted: &str, collate: &str) -> String {
    let count = |how: &str| format!("sum(CASE WHEN how IN ({how}) THEN 1 ELSE 0 END)");
    let expected = format!(
        "SELECT ended - (ended % 86400000 + 86400000) % 86400000 AS day, queue, holder, \
         count(*) AS holds, {} AS completed, {} AS failed, {} AS skipped, {} AS released, \
         {} AS lost, sum(ended - started) AS held_ms, \
         coalesce(string_agg({FINISH_ENTRY}, ';' ORDER BY {FINISH_ENTRY}{collate}), '') \
         AS finishes FROM holds GROUP BY 1, 2, 3",
        count("'completed'"),
        count("'failed'"),
        count("'skipped'"),
        count("'released'"),
        count(&kinds_sql(crate::domain::figures::LOST)),
    );
    let differ = [
        "holds",
        "completed",
        "failed",
        "skipped",
        "released",
        "lost",
        "held_ms",
    ]
    .iter()
    .map(|c| format!("s.{c} <> e.{c}"))
    .collect::<Vec<_>>()
    .join(" OR ");
    format!(
        "SELECT coalesce(s.day, e.day) AS d, coalesce(s.queue, e.queue) AS q, \
         coalesce(s.holder, e.holder) AS h \
         FROM (SELECT day, queue, holder, sum(holds) AS holds, sum(completed) AS completed, \
         sum(failed) AS failed, sum(skipped) AS skipped, sum(released) AS released, \
         sum(lost) AS lost, sum(held_ms) AS held_ms, string_agg(finishes, '') AS finishes \
         FROM figure_days GROUP BY day, queue, holder) s FULL OUTER JOIN ({expected}) e \
         ON e.day = s.day AND e.queue = s.queue AND e.holder = s.holder \
         WHERE s.day IS NULL OR e.day IS NULL OR {differ} OR {} <> e.finishes \
         ORDER BY d, q, h LIMIT {LIMIT}",
        sorted.replace("{}", "s.finishes")
    )
}

/// The finding for a summary cell that disagrees with the holds, and how to repair it.
pub(crate) fn figure_day_finding(day: i64, queue: &str, holder: &str) -> String {
    format!(
        "figures summary: the row of {} (UTC day) for queue '{}' and '{}' disagrees with the \
         holds (report and Stats figures for periods over that day are wrong; a supervisor's \
         `caseload check --repair-figures` rebuilds it)",
        crate::domain::time::rfc3339(day),
        crate::domain::sanitize::line(queue),
        crate::domain::sanitize::line(holder),
    )
}
