//! `caseload list --search`: the real binary, every list flag with it, JSON, bad input.

use crate::support::cli::Env;

#[test]
fn list_search_finds_parts_of_words_ignoring_case_and_accents() {
    let env = Env::new();
    env.ok("boss", &["init"]);
    let order = env.add("Pick & pack order #A-69529");
    let jose = env.add("Callback for José");
    env.add("Printer on floor 3");
    let out = env.ok("viewer", &["list", "--search", "69529"]);
    assert!(out.contains(&format!("#{order}")), "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");
    let out = env.ok("viewer", &["list", "--search", "JOSE callb", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ids: Vec<i64> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [jose]);
}

#[test]
fn list_search_combines_with_state_queue_mine_and_limit() {
    let env = Env::new();
    env.ok("boss", &["init"]);
    let done = env.add("Refund Nordlicht 1");
    env.ok(
        "producer",
        &[
            "add",
            "--title",
            "Refund Nordlicht 2",
            "--queue",
            "billing",
            "--create-queue",
        ],
    );
    let open = env.add("Refund Nordlicht 3");
    let (id, token) = env.claim("alice", &["--id", &done.to_string()]);
    env.ok(
        "alice",
        &["complete", &id.to_string(), "--token", &token.to_string()],
    );
    let titles = |user: &str, args: &[&str]| -> Vec<String> {
        let out = env.ok(user, args);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .map(|i| i["title"].as_str().unwrap().to_string())
            .collect()
    };
    let s = ["list", "--search", "nordlicht", "--json"];
    assert_eq!(
        titles("viewer", &s),
        ["Refund Nordlicht 2", "Refund Nordlicht 3"]
    );
    let all = [&s[..], &["--state", "all"]].concat();
    assert_eq!(titles("viewer", &all).len(), 3);
    let done_only = [&s[..], &["--state", "done"]].concat();
    assert_eq!(titles("viewer", &done_only), ["Refund Nordlicht 1"]);
    let billing = [&s[..], &["--queue", "billing"]].concat();
    assert_eq!(titles("viewer", &billing), ["Refund Nordlicht 2"]);
    let limited = [&s[..], &["--limit", "1"]].concat();
    assert_eq!(titles("viewer", &limited).len(), 1);
    env.claim("bob", &["--id", &open.to_string()]);
    let mine = [&s[..], &["--mine"]].concat();
    assert_eq!(titles("bob", &mine), ["Refund Nordlicht 3"]);
    assert!(titles("alice", &mine).is_empty());
}

#[test]
fn an_empty_search_is_a_usage_error_and_changes_nothing() {
    let env = Env::new();
    env.ok("boss", &["init"]);
    env.add("Something");
    let before = env.fingerprint();
    let err = env.fails("viewer", &["list", "--search", "   "], 2);
    assert!(err.contains("--search"), "{err}");
    assert!(err.contains("at least one word"), "{err}");
    assert_eq!(env.fingerprint(), before);
}
