//! The audit's working day, replayed in a real terminal (tmux) against the real binary:
//! a sentence typed into the item by mistake (the clerk thought the notes editor was
//! open) changes nothing in the database, and says so; the list follows a filter as it
//! is typed.

use crate::support::cli::BIN;
use crate::support::tmux::{Tmux, caseload};

#[test]
fn a_sentence_typed_into_the_item_by_mistake_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    caseload(&db, "feeder", &["init"]);
    for title in [
        "Call back Mrs Novak",
        "Replace the toner",
        "Reset a password",
    ] {
        caseload(&db, "feeder", &["add", "--title", title]);
    }
    let Some(t) = Tmux::start("auditday") else {
        return;
    };
    t.wait_for("the shell prompt", |s| s.contains("READY$"));
    t.send(&[
        &format!("clear; {BIN} --db {} --user alice", db.display()),
        "Enter",
    ]);
    t.wait_for("the queue", |s| s.contains("Call back Mrs Novak"));
    t.send(&["n"]);
    t.wait_for("the item taken", |s| {
        s.contains("yours, 30m") || s.contains("yours, 29m")
    });
    let before = caseload(&db, "feeder", &["list", "--state", "all", "--json"]);
    // The clerk's sentence, as typed (n, s, r, c, f, q among its letters), and Enter.
    t.send(&[
        "-l",
        "spoke to her, sending the new form; she calls back friday",
    ]);
    t.send(&["Enter"]);
    let s = t.wait_for("the typing hint", |s| {
        s.contains("Typing? Press e to write notes, / to filter")
    });
    assert!(
        s.contains("Call back Mrs Novak"),
        "the item is still open: {s}"
    );
    // Given time for anything held back to act, the database is as it was.
    std::thread::sleep(std::time::Duration::from_millis(1000));
    assert_eq!(
        caseload(&db, "feeder", &["list", "--state", "all", "--json"]),
        before
    );
    let shown = caseload(&db, "feeder", &["show", "1", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&shown).unwrap();
    let kinds: Vec<&str> = v["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["created", "locked"], "{shown}");
    assert!(t.screen().contains("1 Queue"), "still running");
    t.send(&["q"]);
    t.wait_for("the list", |s| s.contains("TITLE") && s.contains("1 held"));
    t.send(&["q"]);
    t.wait_for("the prompt again", |s| {
        s.contains("READY$") && !s.contains("1 Queue")
    });
}

/// The list follows what is typed at `/` before Enter; Esc puts back the list there was.
#[test]
fn the_list_follows_the_filter_as_it_is_typed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    caseload(&db, "feeder", &["init"]);
    for title in [
        "Call back Mrs Novak",
        "Replace the toner",
        "Reset a password",
    ] {
        caseload(&db, "feeder", &["add", "--title", title]);
    }
    let Some(t) = Tmux::start("auditfilter") else {
        return;
    };
    t.wait_for("the shell prompt", |s| s.contains("READY$"));
    t.send(&[
        &format!("clear; {BIN} --db {} --user alice", db.display()),
        "Enter",
    ]);
    t.wait_for("the queue", |s| s.contains("Reset a password"));
    t.send(&["/"]);
    t.wait_for("the prompt", |s| s.contains("Filter ("));
    t.send(&["-l", "toner"]);
    // No Enter: the rows follow the typing.
    let s = t.wait_for("the filtered list", |s| {
        s.contains("filter: toner") && !s.contains("Reset a password")
    });
    assert!(s.contains("Replace the toner"), "{s}");
    assert!(s.contains("Filter ("), "still typing: {s}");
    t.send(&["Escape"]);
    t.wait_for("the list there was", |s| {
        s.contains("Reset a password") && !s.contains("filter:")
    });
    t.send(&["q"]);
    t.wait_for("the prompt again", |s| {
        s.contains("READY$") && !s.contains("1 Queue")
    });
}
