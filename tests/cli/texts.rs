//! Ready-made texts and reasons from the command line (issue 28 §2): `text add|list|
//! delete`, `release`/`skip --reason/--code`, `fail`/`complete --code`, with their
//! refusals (one line, the documented exit code, the database unchanged), against the
//! real binary.

use crate::support::cli::Env;

fn with_texts() -> Env {
    let env = Env::init("sup");
    env.ok(
        "sup",
        &[
            "text",
            "add",
            "default",
            "--for",
            "skip",
            "Needs a Spanish speaker",
            "--code",
            "spanish",
        ],
    );
    env.ok(
        "sup",
        &[
            "text",
            "add",
            "default",
            "--for",
            "fail",
            "No answer after 3 calls",
        ],
    );
    env
}

/// The last event of item `id` in `show --json`.
fn last_event(env: &Env, id: i64) -> serde_json::Value {
    let v = env.show(id);
    v["history"].as_array().unwrap().last().unwrap().clone()
}

#[test]
fn supervisors_keep_texts_and_everyone_lists_them() {
    let env = with_texts();
    let out = env.ok("alice", &["text", "list", "default"]);
    assert_eq!(
        out,
        "fail     no-answer-after-3-calls: No answer after 3 calls\n\
         skip     spanish: Needs a Spanish speaker\n"
    );
    let json: serde_json::Value =
        serde_json::from_str(&env.ok("alice", &["text", "list", "default", "--json"])).unwrap();
    assert_eq!(json[1]["for"], "skip");
    assert_eq!(json[1]["code"], "spanish");
    assert_eq!(json[1]["queue"], "default");
    let out = env.ok(
        "sup",
        &[
            "text",
            "add",
            "default",
            "--for",
            "skip",
            "Needs Spanish",
            "--code",
            "spanish",
        ],
    );
    assert_eq!(out, "Changed skip text spanish: Needs Spanish\n");
    let out = env.ok("sup", &["text", "delete", "default", "spanish"]);
    assert_eq!(out, "Deleted skip text spanish: Needs Spanish\n");
    let before = env.fingerprint();
    let err = env.fails(
        "alice",
        &["text", "add", "default", "--for", "fail", "x"],
        5,
    );
    assert!(err.contains("alice is staff"), "{err}");
    let err = env.fails("sup", &["text", "add", "default", "--for", "fial", "x"], 2);
    assert!(err.contains("result, fail, skip"), "{err}");
    let err = env.fails(
        "sup",
        &[
            "text", "add", "default", "--for", "fail", "x", "--code", "A B",
        ],
        1,
    );
    assert!(err.contains("code 'A B' must be"), "{err}");
    let err = env.fails("sup", &["text", "delete", "default", "nope"], 1);
    assert!(err.contains("its codes: no-answer-after-3-calls"), "{err}");
    let err = env.fails("sup", &["text", "list", "defualt"], 1);
    assert!(err.contains("default"), "did you mean: {err}");
    assert_eq!(env.fingerprint(), before, "refusals change nothing");
    let out = env.ok("sup", &["history"]);
    assert!(out.contains("text default.spanish"), "audited: {out}");
}

#[test]
fn release_and_skip_take_a_reason_and_fail_a_code() {
    let env = with_texts();
    let id = env.add("call Mei Brandt");
    env.claim("alice", &[]);
    let out = env.ok(
        "alice",
        &[
            "release",
            &id.to_string(),
            "--reason",
            "waiting for documents",
        ],
    );
    assert_eq!(out, format!("Released #{id}\n"));
    let e = last_event(&env, id);
    assert_eq!(e["kind"], "released");
    assert_eq!(e["detail"]["reason"], "waiting for documents");
    env.claim("alice", &[]);
    let out = env.ok("alice", &["skip", &id.to_string(), "--code", "spanish"]);
    assert_eq!(out, format!("Skipped #{id}\n"));
    let e = last_event(&env, id);
    assert_eq!(e["kind"], "skipped");
    assert_eq!(e["detail"]["reason"], "Needs a Spanish speaker");
    assert_eq!(e["detail"]["code"], "spanish");
    // A code of another kind is refused, naming the right ones; nothing changes.
    env.claim("alice", &[]);
    let before = env.fingerprint();
    let err = env.fails("alice", &["fail", &id.to_string(), "--code", "spanish"], 1);
    assert!(err.contains("no fail text with code 'spanish'"), "{err}");
    assert!(err.contains("no-answer-after-3-calls"), "{err}");
    env.fails("alice", &["fail", &id.to_string()], 2);
    assert_eq!(env.fingerprint(), before);
    env.ok(
        "alice",
        &["fail", &id.to_string(), "--code", "no-answer-after-3-calls"],
    );
    let v = env.show(id);
    assert_eq!(v["error"], "No answer after 3 calls");
    let e = last_event(&env, id);
    assert_eq!(e["detail"]["code"], "no-answer-after-3-calls");
    // Someone else's lock: exit 3, whatever the reason.
    let other = env.add("two");
    env.claim("alice", &[]);
    env.fails(
        "bob",
        &["skip", &other.to_string(), "--reason", "not mine"],
        3,
    );
}

#[test]
fn report_by_reason_counts_codes_and_free_texts() {
    let env = with_texts();
    let a = env.add("one");
    let b = env.add("two");
    env.claim("alice", &["--id", &a.to_string()]);
    env.ok("alice", &["skip", &a.to_string(), "--code", "spanish"]);
    env.claim("bob", &["--id", &a.to_string()]);
    env.ok("bob", &["skip", &a.to_string(), "--code", "spanish"]);
    env.claim("alice", &["--id", &b.to_string()]);
    env.ok("alice", &["release", &b.to_string(), "--reason", "lunch"]);
    let out = env.ok("sup", &["report", "--by", "reason"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].ends_with("reasons by queue and person"), "{out}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("default        released other") && l.ends_with("1  alice 1")),
        "{out}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("skipped  spanish: Needs a Spanish speaker")
                && l.ends_with("2  alice 1, bob 1")),
        "{out}"
    );
    let csv = env.ok("sup", &["report", "--by", "reason", "--format", "csv"]);
    assert_eq!(
        csv,
        "queue,person,kind,reason,count\n\
         default,alice,released,other,1\n\
         default,alice,skipped,spanish,1\n\
         default,bob,skipped,spanish,1\n"
    );
    let json: serde_json::Value = serde_json::from_str(&env.ok(
        "sup",
        &[
            "report", "--by", "reason", "--queue", "default", "--format", "json",
        ],
    ))
    .unwrap();
    assert_eq!(json["by"], "reason");
    assert_eq!(json["rows"][0]["reason"], "other");
    let err = env.fails("sup", &["report", "--by", "reason", "--queue", "nosuch"], 1);
    assert!(err.contains("nosuch"), "{err}");
}
