//! `caseload queue set Q --order due|priority`, `queue list` (text and JSON), and claims
//! that follow the order, through the real binary.

use crate::support::cli::Env;

#[test]
fn queue_order_is_set_listed_and_followed() {
    let env = Env::new();
    env.ok("boss", &["init"]);
    env.ok(
        "producer",
        &[
            "add",
            "--title",
            "urgent",
            "--priority",
            "5",
            "--queue",
            "ship",
            "--create-queue",
        ],
    );
    env.ok(
        "producer",
        &[
            "add",
            "--title",
            "overdue",
            "--due",
            "2020-01-01T00:00:00Z",
            "--queue",
            "ship",
            "--create-queue",
        ],
    );
    let out = env.ok("boss", &["queue", "set", "ship", "--order", "due"]);
    assert!(out.contains("order due"), "{out}");
    let out = env.ok("viewer", &["queue", "list"]);
    assert!(
        out.lines()
            .any(|l| l.starts_with("ship:") && l.contains(", order due,")),
        "{out}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&env.ok("viewer", &["queue", "list", "--json"])).unwrap();
    let ship = v
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["name"] == "ship")
        .unwrap();
    assert_eq!(ship["order"], "due");
    let listed: serde_json::Value =
        serde_json::from_str(&env.ok("viewer", &["list", "--queue", "ship", "--json"])).unwrap();
    assert_eq!(listed[0]["title"], "overdue", "the list is in take order");
    let taken: serde_json::Value =
        serde_json::from_str(&env.ok("alice", &["claim", "--queue", "ship", "--json"])).unwrap();
    assert_eq!(taken["title"], "overdue");
    env.ok("boss", &["queue", "set", "ship", "--order", "PRIORITY"]);
    let v: serde_json::Value =
        serde_json::from_str(&env.ok("viewer", &["queue", "list", "--json"])).unwrap();
    assert_eq!(v[0]["order"], "priority");
}

#[test]
fn a_bad_order_is_a_usage_error_and_staff_may_not_set_one() {
    let env = Env::new();
    env.ok("boss", &["init"]);
    env.add("x");
    let before = env.fingerprint();
    let err = env.fails(
        "boss",
        &["queue", "set", "default", "--order", "soonest"],
        2,
    );
    assert!(err.contains("priority or due"), "{err}");
    let err = env.fails("alice", &["queue", "set", "default", "--order", "due"], 5);
    assert!(err.contains("supervisor"), "{err}");
    assert_eq!(env.fingerprint(), before);
}
