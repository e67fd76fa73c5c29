//! Whether a history was cut on an SQLite file: anyone who may write the file can delete
//! audit rows with another client (the README says roles hold against caseload, not
//! against `sqlite3`); `check` can still tell. caseload never deletes an event, a comment
//! or an audit row, and SQLite numbers each new row one past the highest, so the ids of
//! these tables run from 1 without a gap: a gap is rows deleted. The holds name the events
//! that ended them, so a history cut at its end shows too; and a comment written under a
//! name nobody ever used is named.

use rusqlite::Connection;

use crate::store::check::Findings;
use crate::store::check::pass::{IdSpan, Tally};

/// The findings about cut histories: gaps in the ids, events the holds name beyond the
/// last one, comments under names that never held a role.
pub(super) fn cut(
    c: &Connection,
    tally: &Tally,
    quick: bool,
    found: &mut Findings,
) -> rusqlite::Result<()> {
    let events = if quick {
        span(c, "events")?
    } else {
        tally.events
    };
    gaps(c, "events", events, found)?;
    for table in ["comments", "audit"] {
        let s = span(c, table)?;
        gaps(c, table, s, found)?;
    }
    if !quick
        && let Some(held) = tally.holds_max_event
        && events.max.is_none_or(|m| held > m)
    {
        found.push(format!(
            "history: the figures' holds name event #{held}, but the last event is #{}: \
             the history's last events were deleted outside caseload",
            events.max.unwrap_or(0)
        ));
    }
    strangers(c, found)
}

/// How many rows `table` has, and its smallest and largest id.
fn span(c: &Connection, table: &str) -> rusqlite::Result<IdSpan> {
    c.query_row(
        &format!("SELECT count(*), min(id), max(id) FROM {table}"),
        [],
        |r| {
            Ok(IdSpan {
                rows: r.get::<_, i64>(0)?.max(0) as u64,
                min: r.get(1)?,
                max: r.get(2)?,
            })
        },
    )
}

/// The ranges of ids missing from `table` (one finding each), when its rows do not run
/// from 1 to its largest id.
fn gaps(c: &Connection, table: &str, s: IdSpan, found: &mut Findings) -> rusqlite::Result<()> {
    let Some(max) = s.max else {
        return Ok(());
    };
    if s.min == Some(1) && s.rows == max as u64 {
        return Ok(());
    }
    let mut missing = Vec::new();
    if let Some(min) = s.min
        && min > 1
    {
        missing.push((1, min - 1));
    }
    let mut stmt = c.prepare(&format!(
        "SELECT id + 1, next - 1 FROM (SELECT id, lead(id) OVER (ORDER BY id) AS next \
         FROM {table}) WHERE next > id + 1"
    ))?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        missing.push((r.get(0)?, r.get(1)?));
    }
    let kind = match table {
        "events" => "gaps events",
        "comments" => "gaps comments",
        _ => "gaps audit",
    };
    for (from, to) in missing {
        let rows = if from == to {
            format!("row {from} is")
        } else {
            format!("rows {from}–{to} are")
        };
        found.add(
            kind,
            format!("history: {table} {rows} missing (deleted outside caseload)"),
        );
    }
    Ok(())
}

/// Comments whose author never held a role: no user of that name, and nothing else done
/// under it (no change but comments, no item added).
fn strangers(c: &Connection, found: &mut Findings) -> rusqlite::Result<()> {
    let mut stmt = c.prepare(
        "SELECT a.author, a.n, a.first FROM (SELECT author, count(*) AS n, min(id) AS first \
         FROM comments GROUP BY author) a \
         WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.name = a.author) \
         AND NOT EXISTS (SELECT 1 FROM events e WHERE e.actor = a.author AND e.kind <> 'noted') \
         AND NOT EXISTS (SELECT 1 FROM items i WHERE i.created_by = a.author)",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let author = super::rows::lossy_text(r, 0)?;
        let (n, first): (i64, i64) = (r.get(1)?, r.get(2)?);
        found.add(
            "strangers",
            format!(
                "history: {n} comment(s) (the first #{first}) by '{author}', a name that never \
                 held a role here (no user of that name, nothing else done under it): if \
                 nobody works under that name, they were written outside caseload"
            ),
        );
    }
    Ok(())
}
