//! The command line's daily irritations, fixed: one way to type a time for every time
//! flag; `report` without `--by`; `history` of a name nobody is known by; a wrong
//! `--token` said as such; `complete`, `fail` and `release` with `--json`; `user list`
//! naming everyone `assign` accepts.

use serde_json::Value;

use crate::support::cli::Env;

/// The JSON of a command.
fn json(env: &Env, user: &str, args: &[&str]) -> Value {
    serde_json::from_str(&env.ok(user, args)).unwrap()
}

fn millis(v: &Value) -> i64 {
    chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap())
        .unwrap()
        .timestamp_millis()
}

fn now() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

#[test]
fn every_time_flag_takes_the_same_words() {
    let env = Env::init("boss");
    // --due: a span ahead of now.
    let before = now();
    env.ok("p", &["add", "--title", "in two hours", "--due", "2h"]);
    let due = millis(&env.show(1)["due_at"]);
    assert!(
        (before + 7_200_000..=now() + 7_200_000).contains(&due),
        "{due}"
    );
    // A local date and time, in the zone of the one typing it.
    let out = env
        .command(
            "p",
            &["add", "--title", "at five", "--due", "2026-12-01 17:00"],
        )
        .env("TZ", "Europe/Berlin")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(env.show(2)["due_at"], "2026-12-01T16:00:00.000Z");
    env.ok("p", &["add", "--title", "tomorrow", "--due", "tomorrow"]);
    let d = millis(&env.show(3)["due_at"]);
    assert_eq!(d % 86_400_000, 0, "midnight (UTC here)");
    assert!(d > now() && d <= now() + 86_400_000);
    // edit --due: the same words, and none.
    env.ok("boss", &["edit", "1", "--due", "3d"]);
    assert!(millis(&env.show(1)["due_at"]) > now() + 2 * 86_400_000);
    env.ok("boss", &["edit", "1", "--due", "none"]);
    assert!(env.show(1)["due_at"].is_null());
    // --since: a span or a word back from now.
    env.ok("alice", &["claim", "--id", "2"]);
    for since in ["7d", "yesterday", "today", "90m", "2026-01-01"] {
        let h = json(&env, "alice", &["history", "--since", since, "--json"]);
        assert_eq!(h.as_array().unwrap().len(), 1, "--since {since}: {h}");
        let export = env.ok("boss", &["export", "--since", since, "--format", "jsonl"]);
        assert_eq!(export.lines().count(), 3, "export --since {since}");
        env.ok("boss", &["report", "--since", since]);
    }
    // Anything else: one line naming the flag and what it takes; nothing written.
    let before = env.fingerprint();
    for (args, flag) in [
        (vec!["add", "--title", "x", "--due", "soonish"], "--due"),
        (vec!["edit", "1", "--due", "later"], "--due"),
        (vec!["history", "--since", "last week"], "--since"),
        (vec!["export", "--since", "3 days"], "--since"),
        (vec!["report", "--until", "2026-13-01"], "--until"),
    ] {
        let err = env.fails("boss", &args, 1);
        assert!(
            err.contains(&format!("{flag}: '"))
                && err.contains("is not a time")
                && err.contains("2026-12-01 17:00"),
            "{err}"
        );
    }
    assert_eq!(env.fingerprint(), before);
}

#[test]
fn report_is_by_person_unless_asked_otherwise() {
    let env = Env::init("boss");
    env.add("one");
    let (id, token) = env.claim("alice", &[]);
    env.ok(
        "alice",
        &["complete", &id.to_string(), "--token", &token.to_string()],
    );
    let plain = env.ok("boss", &["report"]);
    assert_eq!(plain, env.ok("boss", &["report", "--by", "person"]));
    assert!(plain.contains("alice"), "{plain}");
    assert_ne!(plain, env.ok("boss", &["report", "--by", "queue"]));
}

#[test]
fn history_of_a_name_nobody_is_known_by_says_so() {
    let env = Env::init("boss");
    env.add("one");
    env.claim("alice", &[]);
    let err = env.fails("boss", &["history", "--of", "alcie"], 1);
    assert!(
        err.contains("unknown user 'alcie'") && err.contains("did you mean alice?"),
        "{err}"
    );
    // Someone who only acted (alice is in no table of users) is known by that.
    assert!(
        env.ok("boss", &["history", "--of", "alice"])
            .contains("locked")
    );
    // One's own empty history is no error.
    env.ok("newcomer", &["history"]);
    env.ok("newcomer", &["history", "--of", "newcomer"]);
}

#[test]
fn a_wrong_token_says_whose_lock_it_is() {
    let env = Env::init("boss");
    let id = env.add("one");
    let (_, token) = env.claim("alice", &[]);
    let before = env.fingerprint();
    let err = env.fails("alice", &["release", &id.to_string(), "--token", "9"], 3);
    assert_eq!(
        err.trim(),
        format!("caseload: token 9 is not your current lock on #{id} (yours is {token})")
    );
    assert_eq!(env.fingerprint(), before);
}

#[test]
fn complete_fail_release_and_park_print_the_items_new_state_as_json() {
    let env = Env::init("boss");
    for t in ["a", "b", "c"] {
        env.add(t);
    }
    let (id, _) = env.claim("alice", &["--id", "1"]);
    let v = json(
        &env,
        "alice",
        &["complete", &id.to_string(), "--result", "fixed", "--json"],
    );
    assert_eq!(
        (&v["id"], &v["state"], &v["result"], &v["finished_by"]),
        (
            &Value::from(1),
            &Value::from("done"),
            &Value::from("fixed"),
            &Value::from("alice")
        )
    );
    env.claim("alice", &["--id", "2"]);
    let v = json(
        &env,
        "alice",
        &["fail", "2", "--reason", "no such customer", "--json"],
    );
    assert_eq!(
        (&v["state"], &v["error"]),
        (&Value::from("failed"), &Value::from("no such customer"))
    );
    let (_, token) = env.claim("alice", &["--id", "3"]);
    let v = json(&env, "alice", &["release", "3", "--json"]);
    assert_eq!(v["state"], "open");
    assert!(v["lock_user"].is_null(), "{v}");
    assert_eq!(v["lock_token"], token, "the token it had");
    let (_, _) = env.claim("alice", &["--id", "3"]);
    let v = json(&env, "alice", &["renew", "3", "--json"]);
    assert_eq!(v["lock_user"], "alice");
    // As before, text without --json.
    assert!(env.ok("alice", &["release", "3"]).contains("Released #3"));
    env.claim("alice", &["--id", "3"]);
    let v = json(
        &env,
        "alice",
        &[
            "park",
            "3",
            "--until",
            "2h",
            "--reason",
            "call back",
            "--json",
        ],
    );
    assert_eq!(
        (&v["state"], &v["parked_by"], &v["park_reason"]),
        (
            &Value::from("parked"),
            &Value::from("alice"),
            &Value::from("call back")
        )
    );
    assert!(
        v["lock_user"].is_null() && v["lock_expires_at"].is_null() && v["parked_until"].is_string(),
        "{v}"
    );
}

#[test]
fn user_list_names_everyone_assign_accepts() {
    let env = Env::init("boss");
    env.add("one");
    env.add("two");
    env.claim("alice", &[]);
    let names: Vec<String> = json(&env, "boss", &["user", "list", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["alice", "boss"], "alice acted, so she is known");
    let alice = &json(&env, "boss", &["user", "list", "--json"])[0];
    assert_eq!(
        (&alice["role"], &alice["login"]),
        (&Value::from("staff"), &Value::Null)
    );
    // Every name listed is one assign accepts.
    for name in names {
        env.ok("boss", &["assign", "2", "--to", &name, "--reason", "yours"]);
        env.ok("boss", &["unlock", "2", "--reason", "back"]);
    }
    env.fails(
        "boss",
        &["assign", "2", "--to", "carol", "--reason", "x"],
        1,
    );
    assert!(!env.ok("boss", &["user", "list"]).contains("carol"));
}
