//! `caseload park` and `caseload wake` through the real binary: a call-back parks the
//! item for its holder, others are refused with whose, until when and why (exit 3), the
//! owner's `wake` takes it back, a supervisor's returns it to the pool; bad input is one
//! line naming the flag, and the database is unchanged.

use crate::support::cli::Env;
use serde_json::Value;

#[test]
fn park_refuses_others_and_wake_gives_it_back() {
    let env = Env::init("boss");
    let id = env.add("Call Mei Brandt");
    let other = env.add("other");
    let (taken, _) = env.claim("alice", &["--id", &id.to_string()]);
    assert_eq!(taken, id);
    let ids = id.to_string();
    let out = env.ok(
        "alice",
        &[
            "park",
            &ids,
            "--until",
            "2h",
            "--reason",
            "call back Mei Brandt",
        ],
    );
    assert!(
        out.starts_with(&format!("Parked #{id} until ")) && out.contains(": call back Mei Brandt"),
        "{out}"
    );
    let v = env.show(id);
    assert_eq!(v["state"], "parked");
    assert_eq!(v["parked_by"], "alice");
    assert_eq!(v["park_reason"], "call back Mei Brandt");
    assert_eq!(v["lock_user"], Value::Null);
    assert!(v["parked_until"].as_str().is_some(), "{v}");

    // Others are refused (exit 3) with who, until when and why; take-next passes it.
    let err = env.fails("bob", &["claim", "--id", &ids], 3);
    assert!(
        err.contains(&format!("#{id} is parked by alice until "))
            && err.trim_end().ends_with(": call back Mei Brandt"),
        "{err}"
    );
    assert_eq!(env.claim("bob", &[]).0, other);
    let listed = env.ok("viewer", &["list", "--state", "parked", "--json"]);
    let listed: Vec<Value> = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], id);
    let text = env.ok("viewer", &["list", "--state", "parked"]);
    assert!(text.contains("parked by alice until"), "{text}");
    let shown = env.ok("viewer", &["show", &ids]);
    assert!(
        shown.contains("state:      parked by alice until ")
            && shown.contains("parked  reason=call back Mei Brandt token=1 until="),
        "{shown}"
    );
    // The figures count the parked time apart (a park still running: up to now).
    assert!(shown.contains("(parked now)"), "{shown}");

    // Bob may not wake it (staff, not its owner); alice's wake gives it to her.
    let err = env.fails("bob", &["wake", &ids], 5);
    assert!(err.contains("alice"), "{err}");
    let out = env.ok("alice", &["wake", &ids]);
    assert_eq!(out.trim(), format!("Woke #{id}: yours now (token 2)"));
    assert_eq!(env.show(id)["lock_user"], "alice");

    // Parked again, a supervisor returns it to the pool.
    env.ok(
        "alice",
        &[
            "park",
            &ids,
            "--until",
            "tomorrow 09:00",
            "--reason",
            "bank",
        ],
    );
    let out = env.ok("boss", &["wake", &ids, "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["state"], "open");
    assert_eq!(v["lock_user"], Value::Null);
    assert_eq!(env.ok("boss", &["check"]).trim(), "ok");
}

#[test]
fn a_bad_park_names_the_flag_and_changes_nothing() {
    let env = Env::init("boss");
    let id = env.add("parked badly").to_string();
    env.claim("alice", &["--id", &id]);
    let before = env.fingerprint();
    let err = env.fails(
        "alice",
        &["park", &id, "--until", "soonish", "--reason", "x"],
        1,
    );
    assert!(err.contains("--until: 'soonish' is not a time"), "{err}");
    let err = env.fails(
        "alice",
        &["park", &id, "--until", "2026-01-01", "--reason", "x"],
        1,
    );
    assert!(
        err.contains("--until: ") && err.contains("has passed"),
        "{err}"
    );
    let err = env.fails("alice", &["park", &id, "--until", "2h", "--reason", " "], 1);
    assert!(err.contains("--reason"), "{err}");
    // Not the holder: a conflict.
    env.fails(
        "bob",
        &["park", &id, "--until", "2h", "--reason", "mine"],
        3,
    );
    // Not parked: nothing to wake.
    let err = env.fails("alice", &["wake", &id], 1);
    assert!(err.contains("is not parked"), "{err}");
    assert_eq!(before, env.fingerprint());
}

#[test]
fn undo_takes_back_your_own_slip_and_says_why_when_it_cannot() {
    let env = Env::init("boss");
    let id = env.add("Wrong one").to_string();
    let (_, token) = env.claim("alice", &["--id", &id]);
    env.ok("alice", &["complete", &id, "--result", "oops"]);
    // Not bob's to undo: exit 3, one line saying what to do instead.
    let err = env.fails("bob", &["undo", &id], 3);
    assert!(
        err.contains(&format!("#{id} cannot be undone: alice completed it"))
            && err
                .trim_end()
                .ends_with(&format!("ask a supervisor to reopen #{id}")),
        "{err}"
    );
    let out = env.ok("alice", &["undo", &id]);
    assert_eq!(
        out.trim(),
        format!(
            "Undone: #{id} is yours again, as it was (token {})",
            token + 1
        )
    );
    let v = env.show(id.parse().unwrap());
    assert_eq!(v["state"], "open");
    assert_eq!(v["result"], Value::Null);
    assert_eq!(v["lock_user"], "alice");
    // Asked again (as after a lost answer): the same answer, nothing more undone.
    let again = env.ok("alice", &["undo", &id]);
    assert_eq!(again, out);
    let events = env.ok("boss", &["show", &id, "--json"]);
    assert_eq!(events.matches("\"undone\"").count(), 1, "{events}");
    assert_eq!(env.ok("boss", &["check"]).trim(), "ok");
}

#[test]
fn a_queue_sets_its_park_grace_and_undo_window() {
    let env = Env::init("boss");
    let out = env.ok(
        "boss",
        &[
            "queue",
            "set",
            "default",
            "--create",
            "--park-grace-seconds",
            "600",
            "--undo-seconds",
            "0",
        ],
    );
    assert!(out.contains("park grace 600s, undo 0s"), "{out}");
    let listed = env.ok("viewer", &["queue", "list", "--json"]);
    let listed: Vec<Value> = serde_json::from_str(&listed).unwrap();
    let q = listed.iter().find(|q| q["name"] == "default").unwrap();
    assert_eq!(
        (q["park_grace_seconds"].as_i64(), q["undo_seconds"].as_i64()),
        (Some(600), Some(0))
    );
    // Out of range: one line naming the setting, exit 1, nothing changed.
    let err = env.fails(
        "boss",
        &["queue", "set", "default", "--undo-seconds", "7200"],
        1,
    );
    assert!(
        err.contains("undo-seconds must be between 0 (no undo) and 3600"),
        "{err}"
    );
    let err = env.fails(
        "boss",
        &["queue", "set", "default", "--park-grace-seconds", "5"],
        1,
    );
    assert!(
        err.contains("park-grace-seconds must be between 60"),
        "{err}"
    );
    let out = env.ok("viewer", &["queue", "list"]);
    assert!(out.contains("park grace 600s, undo 0s"), "{out}");
    // Staff may not change them.
    env.fails(
        "alice",
        &["queue", "set", "default", "--undo-seconds", "60"],
        5,
    );
    // No undo in this queue: said at once.
    let id = env.add("Final").to_string();
    env.claim("alice", &["--id", &id]);
    env.ok("alice", &["complete", &id]);
    let err = env.fails("alice", &["undo", &id], 3);
    assert!(err.contains("offers no undo"), "{err}");
}
