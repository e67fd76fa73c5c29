//! Who may take what, team leads and leavers (issue 29 §2–§4) through the real binary:
//! `user set --queues/--reviews`, a claim outside one's queues (exit 5 naming why, the
//! database unchanged), assign naming who may, `--role lead`, `--leaving --reason` and
//! `--back`, `user list [--all]`; bad input is one line, exit 1.

use crate::support::cli::Env;
use serde_json::Value;

/// boss's database with queues kyc and support, an item in each (kyc's first).
fn two_queues() -> (Env, i64, i64) {
    let env = Env::init("boss");
    env.ok("boss", &["queue", "set", "kyc", "--create"]);
    env.ok("boss", &["queue", "set", "support", "--create"]);
    let add = |q: &str, t: &str| -> i64 {
        env.ok("producer", &["add", "--queue", q, "--title", t])
            .trim()
            .parse()
            .unwrap()
    };
    let kyc = add("kyc", "check passport");
    let support = add("support", "printer jam");
    (env, kyc, support)
}

#[test]
fn a_person_takes_only_from_their_queues() {
    let (env, kyc, support) = two_queues();
    let out = env.ok("boss", &["user", "set", "alice", "--queues", "support"]);
    assert_eq!(out.trim(), "alice may take from: support");
    let before = env.fingerprint();
    let err = env.fails("alice", &["claim", "--id", &kyc.to_string()], 5);
    assert!(
        err.contains("alice may not take from queue 'kyc' (theirs: support;"),
        "{err}"
    );
    let err = env.fails("alice", &["claim", "--queue", "kyc"], 5);
    assert!(err.contains("may not take from queue 'kyc'"), "{err}");
    assert_eq!(env.fingerprint(), before, "a refused claim changes nothing");
    let (got, _) = env.claim("alice", &[]);
    assert_eq!(got, support, "take-next passes over kyc's older item");
    env.fails("alice", &["claim"], 4);

    // Assign names who may.
    let err = env.fails(
        "boss",
        &["assign", &kyc.to_string(), "--to", "alice", "--reason", "x"],
        5,
    );
    assert!(err.contains("who may take from queue 'kyc': boss"), "{err}");

    let users: Vec<Value> =
        serde_json::from_str(&env.ok("boss", &["user", "list", "--json"])).unwrap();
    let alice = users.iter().find(|u| u["name"] == "alice").unwrap();
    assert_eq!(alice["queues"], serde_json::json!(["support"]));
    assert_eq!(alice["reviews"], "all");
    let table = env.ok("boss", &["user", "list"]);
    assert!(
        table.contains("QUEUES") && table.contains("support"),
        "{table}"
    );

    // Bad input: one line, exit 1, nothing changed.
    let before = env.fingerprint();
    let err = env.fails("boss", &["user", "set", "alice", "--queues", "kyc,nope"], 1);
    assert!(err.contains("nope"), "{err}");
    let err = env.fails("boss", &["user", "set", "alice", "--queues", "kyc,"], 1);
    assert!(err.contains("--queues: queue '': name is empty"), "{err}");
    env.fails("alice", &["user", "set", "alice", "--queues", "all"], 5);
    assert_eq!(env.fingerprint(), before);
}

#[test]
fn a_lead_supervises_their_queues_only() {
    let (env, kyc, support) = two_queues();
    let out = env.ok(
        "boss",
        &["user", "set", "carol", "--role", "lead", "--queues", "kyc"],
    );
    assert!(out.contains("carol is now lead"), "{out}");
    env.claim("alice", &["--id", &kyc.to_string()]);
    env.claim("alice", &["--id", &support.to_string()]);
    env.ok("carol", &["unlock", &kyc.to_string(), "--reason", "stuck"]);
    let err = env.fails(
        "carol",
        &["unlock", &support.to_string(), "--reason", "stuck"],
        5,
    );
    assert!(
        err.contains("carol leads kyc only and may not unlock items in queue 'support'"),
        "{err}"
    );
    env.ok("carol", &["queue", "set", "kyc", "--lock-seconds", "600"]);
    env.fails(
        "carol",
        &["queue", "set", "support", "--lock-seconds", "600"],
        5,
    );
    env.fails("carol", &["user", "set", "bob", "--role", "supervisor"], 5);
    // Reports: of her queue, not of others.
    let report = env.ok("carol", &["report", "--by", "queue"]);
    assert!(
        report.contains("kyc") && !report.contains("support"),
        "{report}"
    );
    let err = env.fails(
        "carol",
        &["report", "--by", "queue", "--queue", "support"],
        5,
    );
    assert!(err.contains("carol leads kyc only"), "{err}");
    let all = env.ok("boss", &["report", "--by", "queue"]);
    assert!(all.contains("support"), "{all}");
    let err = env.fails("boss", &["user", "set", "dave", "--role", "lead"], 1);
    assert!(err.contains("--queues"), "{err}");
}

#[test]
fn a_leaver_s_work_returns_to_the_pool() {
    let (env, kyc, support) = two_queues();
    env.claim("bob", &["--id", &kyc.to_string()]);
    env.ok(
        "boss",
        &[
            "assign",
            &support.to_string(),
            "--to",
            "bob",
            "--reason",
            "his",
        ],
    );
    env.ok("boss", &["user", "set", "bob", "--login", "bobby"]);
    let err = env.fails("boss", &["user", "set", "bob", "--leaving"], 2);
    assert!(err.contains("--reason"), "{err}");
    let out = env.ok(
        "boss",
        &[
            "user",
            "set",
            "bob",
            "--leaving",
            "--reason",
            "moved to sales",
        ],
    );
    assert!(
        out.contains(&format!(
            "bob has left: 2 lock(s) and assignment(s) returned (#{kyc} #{support})"
        )),
        "{out}"
    );
    for id in [kyc, support] {
        let shown = env.show(id);
        assert!(shown["lock_user"].is_null(), "{shown}");
    }
    let err = env.fails("bob", &["claim"], 5);
    assert!(err.contains("bob has left (moved to sales)"), "{err}");
    let list = env.ok("boss", &["user", "list"]);
    assert!(!list.contains("bob"), "{list}");
    let all = env.ok("boss", &["user", "list", "--all"]);
    assert!(
        all.lines()
            .any(|l| l.starts_with("bob ") && l.contains("left")),
        "{all}"
    );
    env.ok("boss", &["user", "set", "bob", "--back"]);
    assert!(env.ok("boss", &["user", "list"]).contains("bob"));
    env.claim("bob", &[]);
}
