//! Ready-made texts in a real terminal (tmux): Tab in the skip dialog lists the queue's
//! skip texts, Tab moves through them, Enter fills the field (still editable), Enter
//! skips; the event keeps the reason and the code.

use crate::support::cli::BIN;
use crate::support::tmux::{Tmux, caseload};

#[test]
fn tab_through_ready_made_texts_and_skip_with_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    caseload(&db, "sup", &["init"]);
    caseload(&db, "feeder", &["add", "--title", "Call Mei Brandt"]);
    for (code, text) in [
        ("spanish", "Needs a Spanish speaker"),
        ("docs", "Waiting for documents"),
    ] {
        caseload(
            &db,
            "sup",
            &[
                "text", "add", "default", "--for", "skip", text, "--code", code,
            ],
        );
    }
    let Some(t) = Tmux::start("canned") else {
        return;
    };
    t.wait_for("the shell prompt", |s| s.contains("READY$"));
    t.send(&[
        &format!("clear; {BIN} --db {} --user alice", db.display()),
        "Enter",
    ]);
    t.wait_for("the queue", |s| s.contains("Call Mei Brandt"));
    t.send(&["n"]);
    t.wait_for("the detail pane", |s| s.contains("yours, "));
    t.send(&["s"]);
    t.wait_for("the skip dialog", |s| {
        s.contains("Skip #1?") && s.contains("Tab: ready-made texts")
    });
    t.send(&["Tab"]);
    t.wait_for("the texts, by code", |s| {
        s.contains("› docs  Waiting for documents") && s.contains("spanish  Needs a Spanish")
    });
    t.send(&["Tab"]);
    t.wait_for("the second selected", |s| {
        s.contains("› spanish  Needs a Spanish speaker")
    });
    t.send(&["Enter"]);
    t.wait_for("the field filled, the list closed", |s| {
        s.contains("> Needs a Spanish speaker") && !s.contains("› spanish")
    });
    t.send(&["-l", " (Chile)"]);
    t.wait_for("edited", |s| {
        s.contains("> Needs a Spanish speaker (Chile)")
    });
    t.send(&["Enter"]);
    t.wait_for("skipped", |s| {
        s.contains("Skipped #1") || s.contains("nothing to claim")
    });
    t.send(&["q"]);
    t.wait_for("the prompt again", |s| {
        s.contains("READY$") && !s.contains("1 Queue")
    });
    let shown = caseload(&db, "viewer", &["show", "1", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&shown).unwrap();
    let last = v["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["kind"], "skipped");
    assert_eq!(last["detail"]["reason"], "Needs a Spanish speaker (Chile)");
    assert_eq!(last["detail"]["code"], "spanish");
}
