//! Park, wake and undo in a real terminal (tmux): alice takes an item, parks it (`P`),
//! takes the park back (`u`), parks it again a few seconds ahead; at that time her screen
//! tells her it woke (status line and bell) and lists it in Mine, and `n` takes it.

use crate::support::cli::BIN;
use crate::support::tmux::{Tmux, caseload};

/// A wake time `secs` seconds from now, as RFC 3339 (UTC).
fn in_seconds(secs: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::seconds(secs))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn park(t: &Tmux, until: &str) {
    t.send(&["P"]);
    t.wait_for("the park dialog", |s| s.contains("Park #1?"));
    t.send(&[until, "Tab", "call back Mei", "Enter"]);
    t.wait_for("the park", |s| s.contains("Parked #1 — u undo (30 s)"));
}

#[test]
fn park_wake_and_undo_in_a_real_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    caseload(&db, "feeder", &["init"]);
    caseload(&db, "feeder", &["add", "--title", "Call Mei Brandt"]);
    let Some(t) = Tmux::start("park") else {
        return;
    };
    t.look_elsewhere();
    t.wait_for("the shell prompt", |s| s.contains("READY$"));
    t.send(&[
        &format!("clear; {BIN} --db {} --user alice", db.display()),
        "Enter",
    ]);
    t.wait_for("the queue", |s| s.contains("Call Mei Brandt"));
    t.send(&["n"]);
    t.wait_for("the item", |s| s.contains("yours, "));
    park(&t, &in_seconds(3600));
    // Undone: hers again, as it was.
    t.send(&["u"]);
    t.wait_for("the undo", |s| s.contains("Undone: yours again, #1"));
    assert!(caseload(&db, "viewer", &["show", "1"]).contains("undone"));
    // Parked a few seconds ahead: Mine lists it, then it wakes with the bell.
    park(&t, &in_seconds(4));
    t.send(&["2"]);
    t.wait_for("Mine's parked block", |s| {
        s.contains("Parked (1") && s.contains("call back Mei")
    });
    assert_eq!(t.format("#{window_bell_flag}"), "0", "no bell yet");
    t.wait_for("the wake", |s| s.contains("#1 woke for you: call back Mei"));
    t.wait_until("the bell", || t.format("#{window_bell_flag}"), |v| v == "1");
    t.send(&["n"]);
    t.wait_for("the item taken back", |s| s.contains("Took #1"));
    t.send(&["q", "q"]);
    t.wait_for("the prompt again", |s| s.contains("READY$"));
    let shown = caseload(&db, "viewer", &["show", "1"]);
    assert!(shown.contains("woke  by=owner"), "{shown}");
}
