//! The command line of issue 15 parts 1–3: `assign`, `reopen`, `edit`, `comment`,
//! `user list`, and `show` with the comment thread, through the real binary.

use std::io::Write;
use std::process::Stdio;

use crate::support::cli::Env;
use serde_json::Value;

/// sup creates the database (its supervisor); alice and bob are known staff.
fn env() -> Env {
    let env = Env::new();
    env.ok("sup", &["init"]);
    env.ok("sup", &["user", "set", "alice", "--role", "staff"]);
    env.ok("sup", &["user", "set", "bob", "--role", "staff"]);
    env
}

#[test]
fn assign_gives_an_item_that_waits_for_its_assignee() {
    let env = env();
    let id = env.add("call back").to_string();
    let out = env.ok(
        "sup",
        &[
            "assign",
            &id,
            "--to",
            "bob",
            "--reason",
            "alice is off sick",
        ],
    );
    assert!(out.contains("Assigned #1 to bob"), "{out}");
    // Nobody else may take it; the refusal says whose it is.
    let err = env.fails("alice", &["claim", "--id", &id], 3);
    assert!(err.contains("assigned to bob"), "{err}");
    env.fails("alice", &["claim"], 4);
    // In bob's own list, shown as assigned, not as a countdown.
    let mine = env.ok("bob", &["list", "--mine"]);
    assert!(mine.contains("assigned to bob"), "{mine}");
    let v = env.show(1);
    assert_eq!(v["lock_user"], "bob");
    let last = v["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["kind"], "reassigned");
    assert_eq!(last["detail"]["assigned"], true);
    assert_eq!(last["detail"]["reason"], "alice is off sick");
    // bob opens it: an ordinary lock from now on, which he can complete.
    let (taken, token) = env.claim("bob", &["--id", &id]);
    assert_eq!(taken, 1);
    env.ok("bob", &["complete", &id, "--token", &token.to_string()]);
}

#[test]
fn assign_and_reassign_refuse_an_unknown_user_and_change_nothing() {
    let env = env();
    let id = env.add("x").to_string();
    env.claim("alice", &[]);
    for verb in ["assign", "reassign"] {
        let before = env.fingerprint();
        let err = env.fails("sup", &[verb, &id, "--to", "alcie", "--reason", "typo"], 1);
        assert!(err.contains("unknown user 'alcie'"), "{err}");
        assert!(err.contains("did you mean alice?"), "{err}");
        assert_eq!(before, env.fingerprint(), "{verb} changed nothing");
    }
    let err = env.fails("alice", &["assign", &id, "--to", "bob", "--reason", "x"], 5);
    assert!(err.contains("supervisor only"), "{err}");
    // unlock undoes an assignment.
    env.ok("sup", &["assign", &id, "--to", "bob", "--reason", "r"]);
    env.ok("sup", &["unlock", &id, "--reason", "wrong person"]);
    assert!(env.show(1)["lock_user"].is_null());
}

#[test]
fn user_list_shows_role_and_last_seen() {
    let env = env();
    let out = env.ok("sup", &["user", "list"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("NAME"), "{out}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("sup ") && l.contains("supervisor"))
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("bob ") && l.contains("never"))
    );
    let v: Value = serde_json::from_str(&env.ok("alice", &["user", "list", "--json"])).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alice", "bob", "sup"]);
    assert_eq!(v[2]["role"], "supervisor");
    assert!(v[0]["last_seen"].is_null());
    // A login binding shows beside the name.
    env.ok("sup", &["user", "set", "bob", "--login", "svc-bob"]);
    let out = env.ok("sup", &["user", "list"]);
    let bob = out.lines().find(|l| l.starts_with("bob ")).unwrap();
    assert!(bob.contains("svc-bob"), "{out}");
    let v: Value = serde_json::from_str(&env.ok("sup", &["user", "list", "--json"])).unwrap();
    assert_eq!(v[1]["login"], "svc-bob");
}

#[test]
fn reopen_needs_a_reason_and_a_finished_item() {
    let env = env();
    let id = env.add("closed too soon").to_string();
    let (_, t) = env.claim("alice", &[]);
    env.fails("sup", &["reopen", &id, "--reason", "x"], 1);
    env.ok(
        "alice",
        &[
            "complete",
            &id,
            "--token",
            &t.to_string(),
            "--result",
            "done it",
        ],
    );
    env.fails("sup", &["reopen", &id], 2);
    env.fails("alice", &["reopen", &id, "--reason", "x"], 5);
    assert!(
        env.ok("sup", &["reopen", &id, "--reason", "customer wrote back"])
            .contains("Reopened #1")
    );
    let v = env.show(1);
    assert_eq!(v["state"], "open");
    let last = v["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["kind"], "requeued");
    assert_eq!(last["detail"]["reason"], "customer wrote back");
    assert_eq!(last["detail"]["result"], "done it");
    // alice's complete retried after the reopen is not "already completed by you": the
    // item is open again, and she is told so (exit 3).
    let retry = [
        "complete",
        &id,
        "--token",
        &t.to_string(),
        "--result",
        "done it",
    ];
    let err = env.fails("alice", &retry, 3);
    assert!(
        err.contains("sup reopened it") && err.contains("nobody holds it"),
        "{err}"
    );
    let (_, t2) = env.claim("alice", &["--id", &id]);
    let err = env.fails("alice", &retry, 3);
    assert!(
        err.contains(&format!(
            "token {t} is not your current lock on #{id} (yours is {t2})"
        )),
        "{err}"
    );
    assert_eq!(env.show(1)["state"], "open");
}

#[test]
fn edit_changes_priority_due_and_queue() {
    let env = env();
    env.ok("sup", &["queue", "set", "billing", "--create"]);
    let id = env.add("move me").to_string();
    let out = env.ok(
        "sup",
        &[
            "edit",
            &id,
            "--priority",
            "-3",
            "--due",
            "2026-12-01T17:00:00Z",
            "--queue",
            "billing",
        ],
    );
    assert!(out.contains("priority -3"), "{out}");
    let v = env.show(1);
    assert_eq!(v["priority"], -3);
    assert_eq!(v["queue"], "billing");
    assert_eq!(v["due_at"], "2026-12-01T17:00:00.000Z");
    env.ok("sup", &["edit", &id, "--due", "none"]);
    assert!(env.show(1)["due_at"].is_null());
    let before = env.fingerprint();
    env.fails("sup", &["edit", &id], 2);
    let err = env.fails("sup", &["edit", &id, "--due", "whenever"], 1);
    assert!(err.contains("--due: 'whenever'"), "{err}");
    let err = env.fails("sup", &["edit", &id, "--queue", "biling"], 1);
    assert!(err.contains("unknown queue 'biling'"), "{err}");
    env.fails("alice", &["edit", &id, "--priority", "1"], 5);
    env.fails("sup", &["edit", "99", "--priority", "1"], 1);
    assert_eq!(before, env.fingerprint(), "refusals changed nothing");
}

#[test]
fn comments_from_an_argument_a_file_and_standard_input_show_in_order() {
    let env = env();
    let id = env.add("discussed").to_string();
    env.ok("alice", &["comment", &id, "first: called, no answer"]);
    let file = env.dir.path().join("note.txt");
    std::fs::write(&file, "from a file\nsecond line\n").unwrap();
    env.ok("bob", &["comment", &id, "--file", file.to_str().unwrap()]);
    let mut child = env
        .command("alice", &["comment", &id, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all("piped \u{1b}[31mred\u{1b}[0m".as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    let text = env.ok("sup", &["show", &id]);
    let thread = text.split("comments:").nth(1).unwrap();
    let a = thread.find("first: called").unwrap();
    let b = thread.find("from a file").unwrap();
    let c = thread.find("piped").unwrap();
    assert!(a < b && b < c, "in order:\n{text}");
    assert!(thread.contains("second line"));
    assert!(
        !text.contains('\u{1b}'),
        "escape sequences never reach the terminal"
    );
    let v = env.show(1);
    let comments = v["comments"].as_array().unwrap();
    assert_eq!(comments.len(), 3);
    assert_eq!(comments[1]["author"], "bob");
    assert_eq!(comments[1]["text"], "from a file\nsecond line");
    let before = env.fingerprint();
    env.fails("alice", &["comment", &id, "   "], 1);
    env.fails("alice", &["comment", "99", "x"], 1);
    let err = env.fails("alice", &["comment", &id, "--file", "/nonexistent/x"], 1);
    assert!(err.contains("/nonexistent/x"), "{err}");
    env.fails("alice", &["comment", &id], 2);
    assert_eq!(before, env.fingerprint());
}
