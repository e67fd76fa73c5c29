//! A lock keeps the age it was given (issue 25 §3): shortening a queue's lock age applies
//! to new locks and renewals only, `queue set` says how many current locks keep theirs,
//! and `claim`, `show` and `list` give each lock's `lock_expires_at`.

use crate::support::cli::Env;
use caseload::store::exit;

fn millis(v: &serde_json::Value) -> i64 {
    chrono::DateTime::parse_from_rfc3339(v.as_str().expect("a time"))
        .unwrap()
        .timestamp_millis()
}

#[test]
fn a_shorter_lock_age_applies_to_new_locks_and_renewals_only() {
    let env = Env::init("sup");
    let (first, second) = (env.add("taken before"), env.add("taken after"));
    let taken: serde_json::Value =
        serde_json::from_str(&env.ok("alice", &["claim", "--id", &first.to_string(), "--json"]))
            .unwrap();
    let expires = millis(&taken["lock_expires_at"]);
    assert_eq!(expires - millis(&taken["lock_time"]), 1_800_000);

    let said = env.ok(
        "sup",
        &[
            "queue",
            "set",
            "default",
            "--lock-seconds",
            "1",
            "--warn-seconds",
            "0",
        ],
    );
    assert!(
        said.contains("1 current lock(s) keep the age they were given (30m")
            && said.contains("new locks and renewals get 1s"),
        "{said}"
    );
    // Setting the same age again changes no age: nothing to say about locks.
    let again = env.ok("sup", &["queue", "set", "default", "--lock-seconds", "1"]);
    assert!(!again.contains("current lock"), "{again}");
    assert!(
        again.contains("nothing changed: queue 'default' had these settings already"),
        "{again}"
    );

    let (id, _) = env.claim("alice", &["--id", &second.to_string()]);
    assert_eq!(id, second);
    std::thread::sleep(std::time::Duration::from_millis(1_300));

    // The lock taken before the change is live for half an hour; the new one expired.
    let listed: serde_json::Value =
        serde_json::from_str(&env.ok("viewer", &["list", "--state", "expired", "--json"])).unwrap();
    let ids: Vec<i64> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [second]);
    assert!(listed[0]["lock_expires_at"].is_string());
    assert_eq!(millis(&env.show(first)["lock_expires_at"]), expires);
    let refused = env.fails(
        "bob",
        &["claim", "--id", &first.to_string()],
        exit::CONFLICT,
    );
    assert!(refused.contains("alice"), "{refused}");
    env.ok("bob", &["claim", "--id", &second.to_string()]);

    // A renewal gives the old lock the queue's age now.
    env.ok("alice", &["renew", &first.to_string()]);
    let renewed = env.show(first);
    assert!(millis(&renewed["lock_expires_at"]) < expires - 1_700_000);
    assert_eq!(
        renewed["lock_time"], taken["lock_time"],
        "held since the take"
    );
    std::thread::sleep(std::time::Duration::from_millis(1_300));
    env.ok("bob", &["claim", "--id", &first.to_string()]);
    assert_eq!(env.ok("sup", &["check"]).trim(), "ok");
}
