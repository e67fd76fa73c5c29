//! No silent typos (issue 15.5) through the real binary: a missing database is refused
//! unless `init`, `demo` or `--create` make it; an unknown queue is refused with the one
//! meant unless `--create-queue`; supervisors rename and delete queues.

use crate::support::cli::Env;
use serde_json::Value;

#[test]
fn a_mistyped_database_is_refused_and_not_created() {
    let env = Env::init("boss");
    let typo = env.dir.path().join("queeu.db");
    let t = typo.to_str().unwrap();
    for args in [
        vec!["--db", t, "add", "--title", "lost"],
        vec!["--db", t, "list"],
        vec!["--db", t, "claim"],
    ] {
        let err = env.fails("producer", &args, 1);
        assert!(
            err.contains("does not exist")
                && err.contains("caseload init")
                && err.contains("--create"),
            "{args:?}: {err}"
        );
        assert!(!typo.exists(), "{args:?} created the file");
    }
    // --create makes it (its creator is its first supervisor); init always did.
    let id = env.ok(
        "carol",
        &["--db", t, "--create", "add", "--title", "wanted"],
    );
    assert_eq!(id.trim(), "1");
    env.ok(
        "carol",
        &[
            "--db",
            t,
            "queue",
            "set",
            "default",
            "--lock-seconds",
            "600",
        ],
    );
}

#[test]
fn an_unknown_queue_is_refused_with_the_one_meant() {
    let env = Env::init("boss");
    env.ok("boss", &["queue", "set", "helpdesk", "--create"]);
    env.ok("boss", &["queue", "set", "verification", "--create"]);
    let before = env.fingerprint();
    let err = env.fails(
        "producer",
        &["add", "--title", "x", "--queue", "helpdsk"],
        1,
    );
    assert!(
        err.contains("unknown queue 'helpdsk' — did you mean helpdesk?")
            && err.contains("--create-queue"),
        "{err}"
    );
    let err = env.fails("producer", &["claim", "--queue", "verfication"], 1);
    assert!(err.contains("did you mean verification?"), "{err}");
    let err = env.fails(
        "producer",
        &["add", "--title", "x", "--queue", "billing"],
        1,
    );
    assert!(
        !err.contains("did you mean") && err.contains("known: "),
        "{err}"
    );
    assert_eq!(env.fingerprint(), before, "refused: nothing changed");
    // The default queue needs no naming; --create-queue makes a new one on purpose.
    env.add("to default");
    let id = env.ok(
        "producer",
        &[
            "add",
            "--title",
            "x",
            "--queue",
            "billing",
            "--create-queue",
        ],
    );
    assert_eq!(env.show(id.trim().parse().unwrap())["queue"], "billing");
}

#[test]
fn a_queue_that_does_not_exist_yet_names_how_to_create_it() {
    let env = Env::init("boss");
    let before = env.fingerprint();
    let err = env.fails(
        "boss",
        &["queue", "set", "checks", "--lock-seconds", "60"],
        1,
    );
    assert!(
        err.contains(
            "unknown queue 'checks' (there are no queues yet); give --create to create it"
        ),
        "{err}"
    );
    let err = env.fails(
        "boss",
        &["field", "set", "checks", "vat", "--type", "text"],
        1,
    );
    assert!(
        err.contains("unknown queue 'checks' (there are no queues yet); a supervisor creates it with: caseload queue set checks --create"),
        "{err}"
    );
    assert_eq!(env.fingerprint(), before, "refused: nothing changed");
    env.ok("boss", &["queue", "set", "checks", "--create"]);
    env.ok("boss", &["field", "set", "checks", "vat", "--type", "text"]);
}

#[test]
fn supervisors_rename_and_delete_queues() {
    let env = Env::init("boss");
    env.ok("boss", &["queue", "set", "spare", "--create"]);
    let a = env.ok(
        "producer",
        &[
            "add",
            "--title",
            "a",
            "--queue",
            "helpdsk",
            "--create-queue",
        ],
    );
    let a: i64 = a.trim().parse().unwrap();
    env.ok("producer", &["add", "--title", "b", "--queue", "helpdsk"]);
    let (held, token) = env.claim("alice", &["--queue", "helpdsk"]);
    assert_eq!(held, a);
    let before = env.fingerprint();
    env.fails("alice", &["queue", "rename", "helpdsk", "helpdesk"], 5);
    env.fails("alice", &["queue", "delete", "helpdsk"], 5);
    let err = env.fails("boss", &["queue", "delete", "helpdsk"], 1);
    assert!(err.contains("holds 2 item(s)"), "{err}");
    let err = env.fails("boss", &["queue", "rename", "helpdsk", "spare"], 1);
    assert!(err.contains("'spare' exists already"), "{err}");
    let err = env.fails("boss", &["queue", "rename", "nope", "x"], 1);
    assert!(err.contains("unknown queue 'nope'"), "{err}");
    assert_eq!(env.fingerprint(), before, "refused: nothing changed");
    let out = env.ok("boss", &["queue", "rename", "helpdsk", "helpdesk"]);
    assert_eq!(
        out.trim(),
        "Renamed queue helpdsk to helpdesk (2 item(s) moved)"
    );
    let v = env.show(a);
    assert_eq!(v["queue"], "helpdesk");
    assert_eq!(v["lock_user"], "alice", "the lock moves with the item");
    let last = v["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["kind"], "noted");
    assert_eq!(last["actor"], "boss");
    assert_eq!(last["detail"]["renamed_from"], "helpdsk");
    // Alice's token still completes it.
    env.ok(
        "alice",
        &["complete", &a.to_string(), "--token", &token.to_string()],
    );
    let queues: Value =
        serde_json::from_str(&env.ok("boss", &["queue", "list", "--json"])).unwrap();
    let names: Vec<&str> = queues
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["helpdesk", "spare"]);
    assert_eq!(
        env.ok("boss", &["queue", "delete", "spare"]).trim(),
        "Deleted queue spare"
    );
    env.fails("producer", &["add", "--title", "x", "--queue", "spare"], 1);
}
