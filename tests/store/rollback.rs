//! A write that panics half-way leaves nothing behind: not its changes, not its locks.
//! The TUI's store worker survives a panic in a store call and carries on with the same
//! store, so this is a path real users reach: the test hook panics inside the write
//! transaction, after all its statements ran and before its commit.

use crate::support::backend::Adds;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::Command;

use crate::support::backend::{Backend, kinds, setup};
use crate::support::cli::BIN;
use caseload::domain::fields::{Col, Value};
use caseload::domain::{ItemEdit, ItemState, NewItem};
use caseload::store::{Applied, fault};

conformance!(a_write_that_panics_commits_nothing_and_holds_nothing);

/// The real binary on the test's database as `user` (another process, another connection).
fn caseload(b: &dyn Backend, user: &str, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(["--db", &b.location(), "--user", user])
        .args(args)
        .env_remove("CASELOAD_DB")
        .env_remove("CASELOAD_USER")
        .output()
        .expect("run caseload")
}

fn a_write_that_panics_commits_nothing_and_holds_nothing(b: &dyn Backend) {
    let mut boss = setup(b);
    let mut alice = b.open("alice", 0);
    let id = boss.add(&NewItem::titled("Printer on fire")).unwrap().id;
    let token = alice.take(id).unwrap().lock_token;

    fault::panic_in_next_write();
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        alice.complete(id, token, Some("half done"))
    }));
    assert!(panicked.is_err(), "the hook makes the write panic");

    // Another process changes the very row the panicked write had changed, at once: no
    // write lock (SQLite) or row lock (PostgreSQL) was left behind. (Left behind, this
    // waits for the busy timeout or lock_timeout and fails.)
    let out = caseload(b, "boss", &["edit", &id.to_string(), "--priority", "7"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}: another process could not write: {}",
        b.name(),
        String::from_utf8_lossy(&out.stderr)
    );

    // Nothing of the panicked complete was committed.
    let item = boss.item(id).unwrap();
    assert_eq!(item.state, ItemState::Open, "{}", b.name());
    assert_eq!(item.result, None);
    assert_eq!(item.priority, 7);
    assert_eq!(item.lock_user.as_deref(), Some("alice"));
    assert_eq!(kinds(&mut *boss, id), ["created", "locked", "noted"]);

    // The same store writes again, and its write is its own: the complete happens now
    // (not "already"), with its own result, and nothing of the panicked one rides along.
    assert_eq!(
        alice.complete(id, token, Some("done")).unwrap(),
        Applied::Now,
        "{}",
        b.name()
    );
    let item = boss.item(id).unwrap();
    assert_eq!(item.state, ItemState::Done);
    assert_eq!(item.result.as_deref(), Some("done"));
    assert_eq!(
        kinds(&mut *boss, id),
        ["created", "locked", "noted", "completed"]
    );
    let other = alice.add(&NewItem::titled("after")).unwrap();
    assert!(other.created);

    // A panic in a supervisor's multi-statement write leaves nothing either.
    fault::panic_in_next_write();
    let edit = ItemEdit::default()
        .with(Col::Priority, Value::Number(9))
        .with(Col::DueAt, Value::Time(Some(1_900_000_000_000)));
    let panicked = catch_unwind(AssertUnwindSafe(|| boss.edit(other.id, &edit)));
    assert!(panicked.is_err());
    let item = boss.item(other.id).unwrap();
    assert_eq!((item.priority, item.due_at), (0, None));
    assert_eq!(kinds(&mut *boss, other.id), ["created"]);
    boss.edit(other.id, &edit).unwrap();
    assert_eq!(kinds(&mut *boss, other.id), ["created", "noted", "noted"]);
}

/// Every transaction goes through the one guard of its backend (`sqlite/txn.rs`,
/// `postgres/txn.rs`): nowhere else in src/ is a BEGIN, COMMIT or ROLLBACK written by
/// hand (such a skeleton rolls back on an error, but not when a panic unwinds through it).
/// The postgres crate's own transactions (`transaction()`, `build_transaction()`) are
/// guards too, and allowed.
#[test]
fn no_transaction_is_written_by_hand_outside_the_two_guards() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let guards = ["store/sqlite/txn.rs", "store/postgres/txn.rs"];
    let words = [
        "\"BEGIN",
        "BEGIN;",
        "\"COMMIT",
        "COMMIT;",
        "\"ROLLBACK",
        "ROLLBACK;",
        "START TRANSACTION",
        "\"END",
    ];
    let mut found = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if !rel.ends_with(".rs") || guards.contains(&rel.as_str()) {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.trim_start();
                if code.starts_with("//") {
                    continue;
                }
                if words.iter().any(|w| code.contains(w)) {
                    found.push(format!("src/{rel}:{}: {}", n + 1, code));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "transactions written by hand (use the backend's txn::run):\n{}",
        found.join("\n")
    );
}
