//! `caseload check` on an SQLite file: every problem it can see, never an error of its own.
//!
//! A damaged file is exactly when `check` is needed, so nothing here trusts a value: rows
//! are read as raw values (a NULL or a number where text belongs is reported, not fatal),
//! each check runs on its own, and a check that cannot run (a page SQLite cannot read) is
//! itself a finding. The advice keeps data: copy what reads, touch nothing else.
//!
//! SQLite's own check of every page and index (`PRAGMA integrity_check`, or `quick_check`
//! for `check --quick`) runs on a second, read-only connection in a thread of its own,
//! beside the one pass over the items and their history ([`crate::store::check::pass`])
//! on this connection: on two cores the whole check takes about as long as SQLite's.
//! Nothing is written: stopping it at any point (Ctrl-C) leaves the file as it was.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rusqlite::Connection;
use rusqlite::types::ValueRef;

use super::check_rows::{SqliteRows, statements};
use super::migrate;
use super::txn::{Kind, Stage};
use rusqlite::functions::FunctionFlags;

use crate::domain::queue_fields::FieldDef;
use crate::store::check::{
    CheckRun, Findings, counts, figure_day_finding, figure_days_sql, keys, pass,
    queue_total_finding, queue_totals_sql,
};
use crate::store::figure_days::sorted_entries;

pub(crate) use crate::store::check::UNREADABLE;

/// Prefix of findings that mean the file itself is damaged (SQLite's own checks, or a
/// check that could not read the file).
pub(crate) const DAMAGE: &str = "damaged:";

/// One check: adds its findings, or fails when it cannot finish.
type Check = fn(&Connection, &CheckRun<'_>, &mut Findings) -> rusqlite::Result<()>;

/// Runs every check on an open connection; returns the findings (empty when all is well).
/// `path` (when the file opened normally) lets SQLite's page check run beside the rest on
/// a connection of its own.
pub(crate) fn run(c: &Connection, path: Option<&Path>, how: &CheckRun<'_>) -> Vec<String> {
    let mut found = Findings::default();
    // Nothing else can run when SQLite cannot read the schema itself.
    if let Err(e) = c.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(())) {
        found.push(format!(
            "{DAMAGE} SQLite cannot read the file's schema: {}",
            one_line(&e)
        ));
        return found.lines();
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let (to_main, handle) = std::sync::mpsc::channel();
        let pages = path.map(|p| s.spawn(move || page_check(p, how.quick, to_main)));
        let mut handles = vec![c.get_interrupt_handle()];
        // The page check's connection, once open (none when it could not open).
        handles.extend(handle.recv().ok());
        let done_ref = &done;
        s.spawn(move || watch(&handles, how.stop, done_ref));
        if pages.is_none() {
            (how.progress)("SQLite's check of every page", 0, 0);
            let check: Check = if how.quick { quick_check } else { integrity };
            guarded("the integrity check", c, how, &mut found, check);
        }
        checks(c, how, &mut found);
        let mut all = Findings::default();
        if let Some(t) = pages {
            (how.progress)("SQLite's check of every page", 0, 0);
            match t.join() {
                Ok(lines) => lines.into_iter().for_each(|l| all.push(l)),
                Err(_) => all.push(format!("{DAMAGE} SQLite's check of every page failed")),
            }
        }
        done.store(true, Ordering::Relaxed);
        all.lines().into_iter().chain(found.lines()).collect()
    })
}

/// The checks of this connection, in one read transaction (every one sees the same state
/// of the file).
fn checks(c: &Connection, how: &CheckRun<'_>, found: &mut Findings) {
    let checks: [(&str, Check); 7] = [
        ("reading the items and their history", history),
        ("the other tables' references", foreign_keys),
        ("reading every comment, queue and user", unreadable_text),
        ("the figures summary", figure_days),
        ("the queues' totals", queue_totals),
        ("the duplicate keys", duplicate_keys),
        ("the schema version", schema_version),
    ];
    let mut run_all = |c: &Connection| {
        for (what, check) in checks {
            if how.stop.load(Ordering::Relaxed) {
                break;
            }
            guarded(what, c, how, found, check);
        }
    };
    let snapshot = super::txn::run(&mut &*c, Kind::Read, |c| {
        run_all(c);
        Ok(())
    });
    // Without a snapshot (it could not begin), each check reads on its own.
    if snapshot.is_err_and(|f| f.stage == Stage::Begin) {
        run_all(c);
    }
}

/// Runs one check; a check that cannot finish is a finding.
fn guarded(what: &str, c: &Connection, how: &CheckRun<'_>, found: &mut Findings, check: Check) {
    if let Err(e) = check(c, how, found) {
        found.push(format!(
            "{DAMAGE} {what} could not finish: {}",
            one_line(&e)
        ));
    }
}

/// SQLite's check of every page on a read-only connection of its own; its interrupt handle
/// goes to `handle` first.
fn page_check(
    path: &Path,
    quick: bool,
    handle: std::sync::mpsc::Sender<rusqlite::InterruptHandle>,
) -> Vec<String> {
    let c = match super::open::inspect(path, true) {
        Ok(c) => c,
        Err(e) => return vec![format!("{DAMAGE} SQLite cannot open it to check: {e}")],
    };
    let _ = handle.send(c.get_interrupt_handle());
    drop(handle);
    let mut found = Findings::default();
    let check: Check = if quick { quick_check } else { integrity };
    CheckRun::plain(|how| guarded("the integrity check", &c, how, &mut found, check));
    found.lines()
}

/// Interrupts the statements of `handles` once `stop` is set (Ctrl-C), until `done`.
fn watch(handles: &[rusqlite::InterruptHandle], stop: &AtomicBool, done: &AtomicBool) {
    while !done.load(Ordering::Relaxed) {
        if stop.load(Ordering::Relaxed) {
            handles.iter().for_each(|h| h.interrupt());
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Checks a file that caseload could not open normally because SQLite found it damaged
/// (`why` says what failed): the same checks on a plain connection, after that reason.
pub(crate) fn run_on_file(path: &Path, why: &str, how: &CheckRun<'_>) -> Vec<String> {
    let mut found = vec![format!("{DAMAGE} opening it failed: {why}")];
    // Opened as doctor opens: read-only, creating no -wal/-shm a writer could not use.
    match super::open::inspect(path, true) {
        Ok(c) => found.extend(run(&c, None, how)),
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

fn integrity(c: &Connection, _: &CheckRun<'_>, found: &mut Findings) -> rusqlite::Result<()> {
    pages(c, "integrity_check", found)
}

fn quick_check(c: &Connection, _: &CheckRun<'_>, found: &mut Findings) -> rusqlite::Result<()> {
    pages(c, "quick_check", found)
}

/// SQLite's `PRAGMA integrity_check` or `quick_check`; on damage, which tables it hit.
fn pages(c: &Connection, pragma: &str, found: &mut Findings) -> rusqlite::Result<()> {
    let trees = tree_names(c);
    let mut clean = true;
    let whole = each_row(c, &format!("PRAGMA {pragma}"), |row| {
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
    if let Err(rusqlite::Error::SqliteFailure(f, _)) = &whole
        && f.code == rusqlite::ErrorCode::OperationInterrupted
    {
        return whole;
    }
    // Say which data is at risk: each table with its indexes on its own.
    for (table, holds) in TABLES {
        let mut ok = true;
        let out = each_row(c, &format!("PRAGMA {pragma}({table})"), |row| {
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

/// The tables whose references the pass checks itself (the rest: SQLite's own check).
const PASSED: [&str; 3] = ["items", "events", "comments"];

/// The references of every other table that has any (SQLite's `foreign_key_check`).
fn foreign_keys(c: &Connection, _: &CheckRun<'_>, found: &mut Findings) -> rusqlite::Result<()> {
    let mut tables = Vec::new();
    each_row(
        c,
        "SELECT m.name FROM sqlite_master m WHERE m.type = 'table' AND EXISTS \
         (SELECT 1 FROM pragma_foreign_key_list(m.name))",
        |row| tables.extend(row),
    )?;
    for t in tables.iter().filter(|t| !PASSED.contains(&t.as_str())) {
        each_row(c, &format!("PRAGMA foreign_key_check(\"{t}\")"), |row| {
            let cell = |i: usize| row.get(i).cloned().unwrap_or_default();
            found.add(
                "fk other",
                format!(
                    "{} row {} refers to a missing {} row",
                    cell(0),
                    cell(1),
                    cell(2)
                ),
            );
        })?;
    }
    Ok(())
}

/// The one pass over the items and their history, then what it tells about the rows'
/// ids and the kept counts.
fn history(c: &Connection, how: &CheckRun<'_>, found: &mut Findings) -> rusqlite::Result<()> {
    let mut queues = HashSet::new();
    each_row(c, "SELECT name FROM queues", |row| queues.extend(row))?;
    let total: i64 = c.query_row("SELECT count(*) FROM items", [], |r| r.get(0))?;
    let what = if how.quick {
        "the items"
    } else {
        "the items and their history"
    };
    let sql = statements(how.quick);
    let prep = |k: usize| sql[k].as_deref().map(|q| c.prepare(q)).transpose();
    let (mut s0, mut s1, mut s2, mut s3) = (prep(0)?, prep(1)?, prep(2)?, prep(3)?);
    let mut rows = SqliteRows {
        items: query(&mut s0)?.ok_or(rusqlite::Error::InvalidQuery)?,
        events: query(&mut s1)?,
        holds: query(&mut s2)?,
        comments: query(&mut s3)?,
    };
    let tally = pass::run(
        &mut rows,
        &queues,
        found,
        &mut |done| (how.progress)(what, done, total.max(0) as u64),
        how.stop,
    )
    .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    drop(rows);
    let mut kept = BTreeMap::new();
    each_row(
        c,
        "SELECT queue, state, sum(n) FROM item_counts GROUP BY queue, state",
        |row| {
            if let [q, s, n] = &row[..] {
                kept.insert((q.clone(), s.clone()), n.parse().unwrap_or(0));
            }
        },
    )?;
    counts(&tally.counts, &kept, found);
    super::check_history::cut(c, &tally, how.quick, found)
}

/// Starts the query of a statement there is.
fn query<'s>(
    s: &'s mut Option<rusqlite::Statement<'_>>,
) -> rusqlite::Result<Option<rusqlite::Rows<'s>>> {
    s.as_mut().map(|s| s.query([])).transpose()
}

/// Text columns of the smaller tables that are not valid UTF-8 (or missing); the events'
/// are read by the pass.
fn unreadable_text(c: &Connection, _: &CheckRun<'_>, found: &mut Findings) -> rusqlite::Result<()> {
    let tables: [(&str, &str, &[&str]); 3] = [
        ("comments", "id", &["author", "os_user", "text"]),
        ("queues", "name", &["name"]),
        ("users", "name", &["name", "role"]),
    ];
    for (table, key, cols) in tables {
        let sql = format!("SELECT {key}, {} FROM {table}", cols.join(", "));
        let mut stmt = c.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            for (i, col) in cols.iter().enumerate() {
                let bad = match r.get_ref(i + 1)? {
                    ValueRef::Text(b) | ValueRef::Blob(b) => std::str::from_utf8(b).is_err(),
                    ValueRef::Null => true,
                    _ => false,
                };
                if bad {
                    found.add(
                        match table {
                            "comments" => "unreadable comments",
                            "queues" => "unreadable queues",
                            _ => "unreadable users",
                        },
                        format!(
                            "{UNREADABLE} {table} row {}: {col} is not valid UTF-8 text",
                            shown(r.get_ref(0)?)
                        ),
                    );
                }
            }
        }
    }
    Ok(())
}

/// The day summary against the holds (an older file without one is named by the schema
/// version check); not in a quick check.
fn figure_days(c: &Connection, how: &CheckRun<'_>, found: &mut Findings) -> rusqlite::Result<()> {
    if how.quick {
        return Ok(());
    }
    let mut has = false;
    each_row(
        c,
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'figure_days'",
        |_| has = true,
    )?;
    if !has {
        return Ok(());
    }
    (how.progress)("the figures summary", 0, 0);
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

/// The queues' kept totals against the holds (an older file without them is named by the
/// schema version check); not in a quick check.
fn queue_totals(c: &Connection, how: &CheckRun<'_>, found: &mut Findings) -> rusqlite::Result<()> {
    if how.quick {
        return Ok(());
    }
    let mut has = false;
    each_row(
        c,
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'queue_totals'",
        |_| has = true,
    )?;
    if !has {
        return Ok(());
    }
    (how.progress)("the queues' totals", 0, 0);
    each_row(c, &queue_totals_sql(), |row| {
        found.push(queue_total_finding(
            &row.first().cloned().unwrap_or_default(),
        ));
    })
}

/// The duplicate keys against the items' params (`store::check::keys`); not in a quick
/// check.
fn duplicate_keys(
    c: &Connection,
    how: &CheckRun<'_>,
    found: &mut Findings,
) -> rusqlite::Result<()> {
    if how.quick {
        return Ok(());
    }
    let mut has = false;
    each_row(
        c,
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'item_keys'",
        |_| has = true,
    )?;
    if !has {
        return Ok(());
    }
    (how.progress)("the duplicate keys", 0, 0);
    if let Err(e) = keys::check(&mut KeyRowsOf(c), found) {
        found.push(format!("the duplicate keys could not be checked: {e}"));
    }
    Ok(())
}

struct KeyRowsOf<'a>(&'a Connection);

impl keys::KeyRows for KeyRowsOf<'_> {
    fn fields(&mut self) -> crate::store::error::Result<Vec<(String, FieldDef)>> {
        super::reads::fields(self.0, None)
    }

    fn queues(&mut self) -> crate::store::error::Result<Vec<String>> {
        let mut stmt = self
            .0
            .prepare_cached("SELECT name FROM queues ORDER BY name")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn page(
        &mut self,
        queue: &str,
        after: i64,
        limit: usize,
    ) -> crate::store::error::Result<Vec<(i64, String)>> {
        super::dedupe::queue_params(self.0, queue, after, limit)
    }

    fn kept(
        &mut self,
        queue: &str,
        first: i64,
        last: i64,
    ) -> crate::store::error::Result<Vec<(i64, String, String)>> {
        let mut stmt = self.0.prepare_cached(keys::KEPT)?;
        let rows = stmt.query_map(rusqlite::params![queue, first, last], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

fn schema_version(c: &Connection, _: &CheckRun<'_>, found: &mut Findings) -> rusqlite::Result<()> {
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
