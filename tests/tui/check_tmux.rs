//! `caseload check` in a real terminal (tmux): it says what it is checking while it runs,
//! and Ctrl-C stops it at once with nothing changed (exit 130).

use crate::support::cli::BIN;
use crate::support::tmux::{Tmux, caseload};

/// A database of `n` items with two events each, written straight into the file (fast):
/// big enough that its check runs for a while.
fn big_db(dir: &std::path::Path, n: u32) -> std::path::PathBuf {
    let db = dir.join("q.db");
    caseload(&db, "boss", &["init"]);
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(&format!(
        "BEGIN; \
         INSERT INTO queues (name) VALUES ('default') ON CONFLICT DO NOTHING; \
         WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < {n}) \
         INSERT INTO items (id, queue, title, created_at, created_by) \
         SELECT x, 'default', 'item ' || x, 1000 * x, 'boss' FROM g; \
         INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
         SELECT id, created_at + 1, 'boss', 'boss', 'noted', '{{}}' FROM items; \
         INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
         SELECT id, created_at + 2, 'boss', 'boss', 'renewed', '{{}}' FROM items; \
         COMMIT; PRAGMA wal_checkpoint(TRUNCATE);"
    ))
    .unwrap();
    db
}

#[test]
fn check_shows_its_progress_and_stops_on_ctrl_c_changing_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = big_db(dir.path(), 200_000);
    let Some(t) = Tmux::start("check") else {
        return;
    };
    let before = std::fs::read(&db).unwrap();
    t.wait_for("the shell prompt", |s| s.contains("READY$"));
    t.send(&[
        &format!(
            "clear; {BIN} --db {} --user boss check; echo EXIT=$?",
            db.display()
        ),
        "Enter",
    ]);
    t.wait_for("the progress line", |s| {
        s.contains("check: the items and their history") && s.contains("of 200000 items")
    });
    t.send(&["C-c"]);
    let screen = t.wait_for("the exit code", |s| s.contains("EXIT="));
    assert!(screen.contains("EXIT=130"), "{screen}");
    assert!(
        screen.contains("check stopped before it finished")
            && screen.contains("nothing was changed"),
        "{screen}"
    );
    assert!(!screen.contains("\nok\n"), "{screen}");
    assert!(std::fs::read(&db).unwrap() == before, "the file changed");
    // And a check left to finish says all is well.
    assert_eq!(caseload(&db, "boss", &["check", "--quick"]).trim(), "ok");
}
