//! Told when work arrives, in a real terminal (tmux): another user adds an item to alice's
//! empty queue; her TUI rings the bell (tmux's bell flag) and the title says how many
//! items she can take; quitting puts the title back.

use crate::support::cli::BIN;
use crate::support::tmux::{Tmux, caseload};

#[test]
fn another_users_add_rings_the_bell_and_sets_the_title() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    caseload(&db, "boss", &["init"]);
    let Some(t) = Tmux::start("notify") else {
        return;
    };
    t.look_elsewhere();
    t.wait_until("the shell prompt", || t.screen(), |s| s.contains("READY$"));
    // The shell's own title first, to see it come back.
    t.send(&["printf '\\033]2;my shell\\033\\\\'; clear", "Enter"]);
    t.wait_until(
        "the shell's title",
        || t.format("#{pane_title}"),
        |v| v == "my shell",
    );
    t.send(&[
        &format!("{BIN} --db {} --user alice", db.display()),
        "Enter",
    ]);
    t.wait_until("the queue", || t.screen(), |s| s.contains("1 Queue"));
    t.wait_until(
        "the title with nothing to take",
        || t.format("#{pane_title}"),
        |v| v == "caseload · 0 open",
    );
    assert_eq!(t.format("#{window_bell_flag}"), "0", "no bell yet");
    caseload(&db, "producer", &["add", "--title", "Printer on fire"]);
    t.wait_until(
        "the title to count the new item",
        || t.format("#{pane_title}"),
        |v| v == "caseload · 1 open",
    );
    t.wait_until("the bell", || t.format("#{window_bell_flag}"), |v| v == "1");
    t.wait_until(
        "the status line",
        || t.screen(),
        |s| s.contains("New work: 1 item to take in your queues"),
    );
    t.send(&["q"]);
    t.wait_until(
        "the shell's title back",
        || t.format("#{pane_title}"),
        |v| v == "my shell",
    );
}

#[test]
fn no_notify_keeps_the_bell_quiet_but_says_it_on_the_status_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    caseload(&db, "boss", &["init"]);
    let Some(t) = Tmux::start("quiet") else {
        return;
    };
    t.look_elsewhere();
    t.wait_until("the shell prompt", || t.screen(), |s| s.contains("READY$"));
    t.send(&[
        &format!(
            "clear; {BIN} --db {} --user alice --no-notify",
            db.display()
        ),
        "Enter",
    ]);
    t.wait_until("the queue", || t.screen(), |s| s.contains("1 Queue"));
    t.wait_until(
        "the first count",
        || t.format("#{pane_title}"),
        |v| v == "caseload · 0 open",
    );
    caseload(&db, "producer", &["add", "--title", "Printer on fire"]);
    t.wait_until(
        "the status line",
        || t.screen(),
        |s| s.contains("New work: 1 item to take"),
    );
    assert_eq!(t.format("#{window_bell_flag}"), "0", "--no-notify: no bell");
    t.send(&["q"]);
}
