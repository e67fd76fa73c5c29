//! `caseload check` on an SQLite file: every problem it can see, never an error of its own.
//!
//! A damaged file is exactly when `check` is needed, so nothing here trusts a value: rows
//! are read as raw values (a NULL or a number where text belongs is reported, not fatal),
//! each check runs on its own, and a check that cannot run (a page SQLite cannot read) is
//! itself a finding. The advice keeps data: copy what reads, touch nothing else.

use std::path::Path;

use rusqlite::Connection;
use rusqlite::types::ValueRef;

use super::migrate;
use super::rows::item_from_row;
use rusqlite::functions::FunctionFlags;

use crate::store::check::invariants as shared_invariants;
use crate::store::check::{figure_day_finding, figure_days_sql};
use crate::store::figure_days::sorted_entries;

/// How many rows one check names before it only counts the rest.
const NAMED: usize = 20;

/// Prefix of findings that mean the file itself is damaged (SQLite's own checks, or a
/// check that could not read the file).
pub(crate) const DAMAGE: &str = "damaged:";
/// Prefix of findings about rows whose values cannot be read.
pub(crate) const UNREADABLE: &str = "unreadable:";

/// One check: adds its findings, or fails when it cannot finish.
type Check = fn(&Connection, &mut Vec<String>) -> rusqlite::Result<()>;

/// Runs every check on an open connection; returns the findings (empty when all is well).
pub(crate) fn run(c: &Connection) -> Vec<String> {
    let mut found = Vec::new();
    // Nothing else can run when SQLite cannot read the schema itself.
    if let Err(e) = c.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(())) {
        found.push(format!(
            "{DAMAGE} SQLite cannot read the file's schema: {}",
            one_line(&e)
        ));
        return found;
    }
    let checks: [(&str, Check); 8] = [
        ("the integrity check", integrity),
        ("the foreign key check", foreign_keys),
        ("the lock and state rules", invariants),
        ("reading every item", unreadable_items),
        ("reading every event, queue and user", unreadable_text),
        ("the kept counts", counts),
        ("the figures summary", figure_days),
        ("the schema version", schema_version),
    ];
    for (what, check) in checks {
        if let Err(e) = check(c, &mut found) {
            found.push(format!(
                "{DAMAGE} {what} could not finish: {}",
                one_line(&e)
            ));
        }
    }
    found
}

/// Checks a file that caseload could not open normally because SQLite found it damaged
/// (`why` says what failed): the same checks on a plain connection, after that reason.
pub(crate) fn run_on_file(path: &Path, why: &str) -> Vec<String> {
    let mut found = vec![format!("{DAMAGE} opening it failed: {why}")];
    // Opened as doctor opens: read-only, creating no -wal/-shm a writer could not use.
    match super::open::inspect(path, true) {
        Ok(c) => found.extend(run(&c)),
        Err(e) => found.push(format!("{DAMAGE} SQLite cannot open it: {e}")),
    }
    found
}

/// Steps that keep every byte that can still be read, for the findings given.
pub(crate) fn advice(found: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    if found.iter().any(|f| f.starts_with(DAMAGE)) {
        out.push(
            "the file is damaged: leave it and its -wal and -shm files exactly where they are \
             (do not delete, move or replace any of them), then save what still reads:"
                .to_string(),
        );
        out.push(
            "  caseload backup NEW-FILE   (a copy through SQLite, safe while others work), then \
             `caseload --db NEW-FILE check`"
                .to_string(),
        );
        out.push(
            "  caseload export --format jsonl > items.jsonl   (every readable item, as text)"
                .to_string(),
        );
    }
    let items = format!("{UNREADABLE} item #");
    if found
        .iter()
        .any(|f| f.starts_with(UNREADABLE) && !f.starts_with(&items))
    {
        out.push(
            "unreadable history, queue or user text is shown with \u{FFFD} in place of its bad \
             bytes; nothing else is affected"
                .to_string(),
        );
    }
    if found.iter().any(|f| f.starts_with(&items)) {
        out.push(
            "unreadable rows were written by another program or damaged on disk: lists mark \
             them, take-next passes them over, export leaves them out; `caseload show ID` \
             shows what is readable, and a supervisor can `caseload cancel ID --reason …` \
             and add the item again"
                .to_string(),
        );
    }
    out
}

fn one_line(e: &rusqlite::Error) -> String {
    e.to_string().replace('\n', " ")
}

/// A stored value as text for a finding, whatever its type.
fn shown(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Null => "NULL".into(),
        ValueRef::Integer(n) => n.to_string(),
        ValueRef::Real(f) => f.to_string(),
        ValueRef::Text(b) => String::from_utf8_lossy(b).into_owned(),
        ValueRef::Blob(b) => format!("<{} bytes>", b.len()),
    }
}

/// Calls `each` with every row of `sql`, each column shown as text; rows read before an
/// error are kept.
fn each_row(c: &Connection, sql: &str, mut each: impl FnMut(Vec<String>)) -> rusqlite::Result<()> {
    let mut stmt = c.prepare(sql)?;
    let n = stmt.column_count();
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let mut row = Vec::with_capacity(n);
        for i in 0..n {
            row.push(shown(r.get_ref(i)?));
        }
        each(row);
    }
    Ok(())
}

/// The tables whose damage `check` names, and what they hold.
const TABLES: [(&str, &str); 5] = [
    ("items", "the items"),
    ("events", "the history"),
    ("queues", "the queue settings"),
    ("users", "the roles"),
    ("item_counts", "the kept counts"),
];

fn integrity(c: &Connection, found: &mut Vec<String>) -> rusqlite::Result<()> {
    let trees = tree_names(c);
    let mut clean = true;
    let whole = each_row(c, "PRAGMA integrity_check", |row| {
        for line in row.join(" ").lines() {
            if line == "ok" || line.starts_with("*** in database") {
                continue;
            }
            clean = false;
            found.push(format!("{DAMAGE} {}", name_tree(line, &trees)));
        }
    });
    if clean && whole.is_ok() {
        return Ok(());
    }
    // Say which data is at risk: each table with its indexes on its own.
    for (table, holds) in TABLES {
        let mut ok = true;
        let out = each_row(c, &format!("PRAGMA integrity_check({table})"), |row| {
            ok &= row.join(" ") == "ok";
        });
        if !ok || out.is_err() {
            found.push(format!(
                "{DAMAGE} table {table} ({holds}) or one of its indexes is damaged"
            ));
        }
    }
    whole
}

/// Root page → "index items_take of items" / "table items", as far as the schema reads.
fn tree_names(c: &Connection) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let _ = each_row(
        c,
        "SELECT rootpage, type, name, tbl_name FROM sqlite_master WHERE rootpage > 0",
        |row| {
            if let [root, kind, name, table] = &row[..] {
                let what = if kind == "index" {
                    format!("index {name} of {table}")
                } else {
                    format!("{kind} {name}")
                };
                out.push((root.clone(), what));
            }
        },
    );
    out
}

/// "Tree 6 page 6: …" from SQLite, with the table or index that tree is.
fn name_tree(line: &str, trees: &[(String, String)]) -> String {
    let root = line
        .strip_prefix("Tree ")
        .and_then(|rest| rest.split(' ').next());
    match root.and_then(|r| trees.iter().find(|(root, _)| root == r)) {
        Some((_, what)) => format!("{line} ({what})"),
        None => line.to_string(),
    }
}

fn foreign_keys(c: &Connection, found: &mut Vec<String>) -> rusqlite::Result<()> {
    each_row(c, "PRAGMA foreign_key_check", |row| {
        let cell = |i: usize| row.get(i).cloned().unwrap_or_default();
        found.push(format!(
            "{} row {} refers to a missing {} row",
            cell(0),
            cell(1),
            cell(2)
        ));
    })
}

fn invariants(c: &Connection, found: &mut Vec<String>) -> rusqlite::Result<()> {
    let mut checks = shared_invariants();
    // SQLite stores JSON as text: it may not be JSON at all.
    checks.push((
        format!(
            "SELECT id FROM items WHERE params IS NULL OR NOT json_valid(params) \
             ORDER BY id LIMIT {NAMED}"
        ),
        "item",
        "has params that are not JSON (column params)",
    ));
    checks.push((
        format!(
            "SELECT id FROM events WHERE detail IS NULL OR NOT json_valid(detail) \
             ORDER BY id LIMIT {NAMED}"
        ),
        "event",
        "has a detail that is not JSON (column detail)",
    ));
    let mut failed: Vec<(&str, String)> = Vec::new();
    for (sql, row, what) in &checks {
        // One failing rule does not hide the others.
        let out = each_row(c, sql, |id| {
            found.push(format!("{row} #{} {what}", id.join(" ")));
        });
        if let Err(e) = out {
            failed.push((*what, one_line(&e)));
        }
    }
    // Rules that failed alike are named on one line.
    while let Some((_, why)) = failed.first().cloned() {
        let (alike, rest): (Vec<_>, Vec<_>) = failed.into_iter().partition(|(_, w)| *w == why);
        let names: Vec<String> = alike.iter().map(|(w, _)| format!("\"{w}\"")).collect();
        found.push(format!(
            "{DAMAGE} the rule(s) {} could not be checked: {why}",
            names.join(", ")
        ));
        failed = rest;
    }
    Ok(())
}

fn unreadable_items(c: &Connection, found: &mut Vec<String>) -> rusqlite::Result<()> {
    let mut stmt = c.prepare(&format!(
        "SELECT {} FROM items ORDER BY id",
        super::sql::ITEM_COLS
    ))?;
    let mut rows = stmt.query([])?;
    let mut n = 0usize;
    while let Some(r) = rows.next()? {
        let item =
            item_from_row(r).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        let Some(why) = item.unreadable_summary() else {
            continue;
        };
        n += 1;
        if n <= NAMED {
            found.push(format!(
                "{UNREADABLE} item #{}: {why} (take-next passes it over, export leaves it out)",
                item.id
            ));
        }
    }
    if n > NAMED {
        found.push(format!(
            "{UNREADABLE} {} more unreadable item(s) not named here",
            n - NAMED
        ));
    }
    Ok(())
}

/// Text columns of the other tables that are not valid UTF-8 (or missing).
fn unreadable_text(c: &Connection, found: &mut Vec<String>) -> rusqlite::Result<()> {
    let tables: [(&str, &str, &[&str]); 4] = [
        ("events", "id", &["actor", "os_user", "kind", "detail"]),
        ("comments", "id", &["author", "os_user", "text"]),
        ("queues", "name", &["name"]),
        ("users", "name", &["name", "role"]),
    ];
    for (table, key, cols) in tables {
        let sql = format!("SELECT {key}, {} FROM {table}", cols.join(", "));
        let mut stmt = c.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        let mut n = 0usize;
        while let Some(r) = rows.next()? {
            for (i, col) in cols.iter().enumerate() {
                let bad = match r.get_ref(i + 1)? {
                    ValueRef::Text(b) | ValueRef::Blob(b) => std::str::from_utf8(b).is_err(),
                    ValueRef::Null => true,
                    _ => false,
                };
                if !bad {
                    continue;
                }
                n += 1;
                if n <= NAMED {
                    found.push(format!(
                        "{UNREADABLE} {table} row {}: {col} is not valid UTF-8 text",
                        shown(r.get_ref(0)?)
                    ));
                }
            }
        }
        if n > NAMED {
            found.push(format!(
                "{UNREADABLE} {} more unreadable {table} value(s) not named here",
                n - NAMED
            ));
        }
    }
    Ok(())
}

fn counts(c: &Connection, found: &mut Vec<String>) -> rusqlite::Result<()> {
    let sql = "SELECT coalesce(a.queue, k.queue), coalesce(a.state, k.state), \
         coalesce(a.n, 0), coalesce(k.n, 0) FROM (SELECT queue, state, count(*) AS n \
         FROM items GROUP BY queue, state) a FULL OUTER JOIN item_counts k \
         ON k.queue = a.queue AND k.state = a.state WHERE coalesce(a.n, 0) <> coalesce(k.n, 0)";
    each_row(c, sql, |row| {
        let cell = |i: usize| row.get(i).cloned().unwrap_or_default();
        found.push(format!(
            "counts: queue '{}' has {} {} items but the kept count says {}",
            cell(0),
            cell(2),
            cell(1),
            cell(3)
        ));
    })
}

/// The day summary against the holds (an older file without one is named by the schema
/// version check).
fn figure_days(c: &Connection, found: &mut Vec<String>) -> rusqlite::Result<()> {
    let mut has = false;
    each_row(
        c,
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'figure_days'",
        |_| has = true,
    )?;
    if !has {
        return Ok(());
    }
    c.create_scalar_function(
        "caseload_sorted_entries",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            Ok(match ctx.get_raw(0) {
                ValueRef::Text(b) => Some(sorted_entries(&String::from_utf8_lossy(b))),
                _ => None,
            })
        },
    )?;
    each_row(
        c,
        &figure_days_sql("caseload_sorted_entries({})", ""),
        |row| {
            let cell = |i: usize| row.get(i).cloned().unwrap_or_default();
            let day = cell(0).parse().unwrap_or(0);
            found.push(figure_day_finding(day, &cell(1), &cell(2)));
        },
    )
}

fn schema_version(c: &Connection, found: &mut Vec<String>) -> rusqlite::Result<()> {
    let mut v = String::new();
    each_row(c, "PRAGMA user_version", |row| v = row.join(" "))?;
    if v != migrate::LATEST.to_string() {
        found.push(format!(
            "schema version is {v}, expected {}",
            migrate::LATEST
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advice_never_says_delete_or_replace_the_file() {
        let found = vec![
            format!("{DAMAGE} page 3 is never used"),
            format!("{UNREADABLE} item #1: title is not valid UTF-8"),
        ];
        let text = advice(&found).join("\n");
        assert!(text.contains("take-next passes them over"), "{text}");
        assert!(text.contains("caseload backup NEW-FILE"), "{text}");
        assert!(text.contains("do not delete, move or replace"), "{text}");
        assert!(!text.contains("restore"), "{text}");
        assert!(advice(&["item #1 is not open but carries a lock".into()]).is_empty());
        let events = advice(&[format!(
            "{UNREADABLE} events row 1: actor is not valid UTF-8"
        )]);
        assert!(!events.join(" ").contains("take-next"), "{events:?}");
    }
}
