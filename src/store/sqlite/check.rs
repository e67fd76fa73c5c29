//! `caseload check` on SQLite: SQLite's own integrity and foreign-key checks, then the
//! schema's invariants and every stored word caseload must be able to read.

use rusqlite::Connection;

use super::migrate;
use crate::store::check::invariants;
use crate::store::error::Result;

pub(super) fn check(c: &Connection) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let mut stmt = c.prepare("PRAGMA integrity_check")?;
    for row in stmt.query_map([], |r| r.get::<_, String>(0))? {
        let line = row?;
        if line != "ok" {
            problems.push(format!("integrity: {line}"));
        }
    }
    let mut stmt = c.prepare("PRAGMA foreign_key_check")?;
    for row in stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, Option<i64>>(1)?,
            r.get::<_, String>(2)?,
        ))
    })? {
        let (table, rowid, parent) = row?;
        problems.push(format!(
            "{table} row {} refers to a missing {parent} row",
            rowid.map_or("?".into(), |r| r.to_string())
        ));
    }
    let mut checks = invariants();
    checks.push((
        "SELECT id FROM items WHERE NOT json_valid(params) ORDER BY id LIMIT 20".into(),
        "item",
        "has params that are not JSON (column params)",
    ));
    checks.push((
        "SELECT id FROM events WHERE NOT json_valid(detail) ORDER BY id LIMIT 20".into(),
        "event",
        "has a detail that is not JSON (column detail)",
    ));
    for (sql, row, what) in checks {
        let mut stmt = c.prepare(&sql)?;
        for id in stmt.query_map([], |r| r.get::<_, i64>(0))? {
            problems.push(format!("{row} #{} {what}", id?));
        }
    }
    let mut stmt = c.prepare(
        "SELECT coalesce(a.queue, k.queue), coalesce(a.state, k.state), coalesce(a.n, 0), \
         coalesce(k.n, 0) FROM (SELECT queue, state, count(*) AS n FROM items \
         GROUP BY queue, state) a FULL OUTER JOIN item_counts k \
         ON k.queue = a.queue AND k.state = a.state WHERE coalesce(a.n, 0) <> coalesce(k.n, 0)",
    )?;
    for row in stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, i64>(3)?,
        ))
    })? {
        let (q, s, actual, kept) = row?;
        problems.push(format!(
            "counts: queue '{q}' has {actual} {s} items but the kept count says {kept}"
        ));
    }
    let v: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if v != migrate::LATEST {
        problems.push(format!(
            "schema version is {v}, expected {}",
            migrate::LATEST
        ));
    }
    Ok(problems)
}
