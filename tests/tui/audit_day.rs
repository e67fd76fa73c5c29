//! The audit's working day (issue 25), replayed in a real terminal (tmux) against the real
//! binary: a sentence typed into the item by mistake (the clerk thought the notes editor
//! was open) changes nothing in the database, and says so; the list follows a filter as it
//! is typed; a supervisor's shorter lock age leaves the locks people hold alone.

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

/// The supervisor shortens the queue's lock age while a clerk works: her lock keeps the age
/// it was given (her screen counts down from half an hour, nobody can take the item); a
/// lock taken after the change gets the new age and expires on everyone's screen.
#[test]
fn a_shorter_lock_age_leaves_the_clerks_lock_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    caseload(&db, "sup", &["init"]);
    for title in ["Call back Mrs Novak", "Replace the toner"] {
        caseload(&db, "feeder", &["add", "--title", title]);
    }
    let Some(t) = Tmux::start("auditage") else {
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
    t.send(&["q"]);
    t.wait_for("the list", |s| s.contains("TITLE") && s.contains("1 held"));

    let said = caseload(
        &db,
        "sup",
        &[
            "queue",
            "set",
            "default",
            "--lock-seconds",
            "3",
            "--warn-seconds",
            "1",
        ],
    );
    assert!(
        said.contains("1 current lock(s) keep the age they were given (30m"),
        "{said}"
    );
    let bob: serde_json::Value =
        serde_json::from_str(&caseload(&db, "bob", &["claim", "--json"])).unwrap();
    assert_eq!(bob["title"], "Replace the toner");
    // bob's new lock runs out on alice's screen; hers still counts down from 30 minutes.
    let s = t.wait_for("bob's lock expired", |s| s.contains("EXPIRED bob"));
    assert!(
        s.contains("you, 29m") || s.contains("you, 30m"),
        "alice's lock keeps its age: {s}"
    );
    let out = std::process::Command::new(BIN)
        .args([
            "--db",
            db.to_str().unwrap(),
            "--user",
            "carol",
            "claim",
            "--id",
            "1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "alice's item is still hers");
    let v: serde_json::Value =
        serde_json::from_str(&caseload(&db, "sup", &["show", "1", "--json"])).unwrap();
    let at = |k: &str| {
        chrono::DateTime::parse_from_rfc3339(v[k].as_str().unwrap())
            .unwrap()
            .timestamp_millis()
    };
    assert_eq!(at("lock_expires_at") - at("lock_time"), 1_800_000);
    t.send(&["q"]);
    t.wait_for("the prompt again", |s| {
        s.contains("READY$") && !s.contains("1 Queue")
    });
}
