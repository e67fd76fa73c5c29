//! SQLite compiles each statement of the hot paths once per connection: none is prepared
//! again on later calls. SQLite re-prepares a cached statement before it runs when a
//! value bound to it can change the plan it chose — a `LIMIT ?` it read as a number, a
//! `LIKE ?` pattern, a range it estimated from the bound value — and then whenever any
//! such parameter is bound again, even to the same value (`sqlite3VdbeSetVarmask`): a
//! whole compilation per call, which made a quarter of a take-next's CPU. This test runs
//! the holder's calls (take-next, take, notes, field save, complete, complete-and-next,
//! park, release, renew, add) and the screen's reads (the title's count, the figures) a few times on one connection and asks SQLite how often
//! each statement it holds was re-prepared; it names every one that was.

use caseload::domain::queue_fields::{FieldChange, FieldType};
use caseload::domain::{Actor, NewItem, QueueUpdate};
use caseload::store::sqlite::{OpenOptions, SqliteStore};
use caseload::store::{Reads, TakeNext, Writes};

use crate::support::backend::Adds;

/// Every statement the connection holds, with how often it was re-prepared.
fn reprepared(s: &SqliteStore) -> Vec<(i32, String)> {
    use rusqlite::ffi;
    let mut out = Vec::new();
    // SAFETY: the handle is the store's open connection, used on this thread only; the
    // statements are only read (their text and counter), none is stepped or finalised.
    unsafe {
        let db = s.connection().handle();
        let mut stmt = ffi::sqlite3_next_stmt(db, std::ptr::null_mut());
        while !stmt.is_null() {
            let n = ffi::sqlite3_stmt_status(stmt, ffi::SQLITE_STMTSTATUS_REPREPARE, 0);
            let sql = std::ffi::CStr::from_ptr(ffi::sqlite3_sql(stmt))
                .to_string_lossy()
                .into_owned();
            out.push((n, sql));
            stmt = ffi::sqlite3_next_stmt(db, stmt);
        }
    }
    out
}

fn open(path: &std::path::Path, user: &str) -> SqliteStore {
    let opts = OpenOptions {
        allow_network_fs: true,
        ..OpenOptions::default()
    };
    SqliteStore::open(path, Actor::new(user, "tester"), &opts).unwrap()
}

/// One round of the holder's calls on `s`: each item taken, worked and finished.
fn round(s: &mut SqliteStore, r: usize) {
    let items: Vec<NewItem> = (0..4)
        .map(|i| NewItem {
            queue: "checked".into(),
            params: format!(r#"{{"name": "Supplier {r}-{i}", "vat": "DE123456789"}}"#),
            ..NewItem::titled(&format!("item {r}-{i}"))
        })
        .collect();
    s.add_batch(&items).unwrap();
    let in_queue = TakeNext {
        queue: Some("checked".into()),
        skip: vec![],
    };
    let a = s.take_next(&TakeNext::default()).unwrap();
    s.save_notes(a.id, a.lock_token, &format!("called back {r}"))
        .unwrap();
    s.set_fields(
        a.id,
        a.lock_token,
        &[("name".to_string(), format!("Supplier {r} GmbH"))],
    )
    .unwrap();
    s.renew(a.id, a.lock_token).unwrap();
    let next = s
        .complete_and_next(a.id, a.lock_token, Some("ok"), &in_queue)
        .unwrap();
    let b = next.next.unwrap();
    s.complete(b.id, b.lock_token, None).unwrap();
    let c = s.take_next(&in_queue).unwrap();
    s.release(c.id, c.lock_token).unwrap();
    let c = s.take(c.id).unwrap();
    let later = c.lock_time.unwrap_or_default() + 3_600_000;
    s.park(c.id, c.lock_token, later, "call back").unwrap();
    let d = s.take_next(&in_queue).unwrap();
    s.complete(d.id, d.lock_token, Some("done")).unwrap();
    // What the screen reads beside them: the title's count, the figures.
    s.takeable(None, 100).unwrap();
    s.stats().unwrap();
}

#[test]
fn no_statement_of_the_holders_calls_is_prepared_again_on_each_call() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("queue.db");
    let mut boss = open(&path, "boss");
    boss.set_queue(
        "checked",
        &QueueUpdate {
            lock_seconds: Some(600),
            ..Default::default()
        },
        true,
    )
    .unwrap();
    for (name, kind) in [("name", FieldType::Text), ("vat", FieldType::Text)] {
        let def = FieldChange {
            kind: Some(kind),
            ..FieldChange::default()
        };
        boss.define_field("checked", name, &def).unwrap();
    }
    drop(boss);
    let mut s = open(&path, "alice");
    // The first round prepares what it runs; the others must find it ready.
    for r in 0..4 {
        round(&mut s, r);
    }
    let stmts = reprepared(&s);
    assert!(stmts.len() > 10, "the connection holds its statements");
    let again: Vec<String> = stmts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, sql)| format!("{n}x: {sql}"))
        .collect();
    assert!(
        again.is_empty(),
        "statements prepared again on later calls:\n{}",
        again.join("\n")
    );
}
