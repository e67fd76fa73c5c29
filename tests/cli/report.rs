//! `caseload report`, the figures line of `show` and the `figures` of `stats --json`,
//! through the real binary.

use crate::support::cli::Env;

/// alice completes #1 and fails #2; bob releases #3; carol's queue "other" has an item
/// overdue since 2020.
fn busy() -> Env {
    let env = Env::new();
    env.ok("boss", &["init"]);
    for t in ["one", "two", "three"] {
        env.ok("boss", &["add", "--title", t]);
    }
    env.ok(
        "boss",
        &[
            "add",
            "--title",
            "late",
            "--queue",
            "other",
            "--due",
            "2020-01-01T00:00:00Z",
            "--create-queue",
        ],
    );
    env.ok("alice", &["claim", "--id", "1"]);
    env.ok("alice", &["complete", "1"]);
    env.ok("alice", &["claim", "--id", "2"]);
    env.ok("alice", &["fail", "2", "--reason", "no data"]);
    env.ok("bob", &["claim", "--id", "3"]);
    env.ok("bob", &["release", "3"]);
    env
}

#[test]
fn report_by_person_as_a_table_csv_and_json() {
    let env = busy();
    let table = env.ok("boss", &["report", "--by", "person"]);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].contains("by person"), "{table}");
    assert!(
        lines[1].starts_with("person") && lines[1].contains("median"),
        "{table}"
    );
    let alice: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(&alice[..6], &["alice", "1", "1", "0", "0", "0"], "{table}");
    let bob: Vec<&str> = lines[3].split_whitespace().collect();
    assert_eq!(&bob[..6], &["bob", "0", "0", "0", "1", "0"], "{table}");

    let csv = env.ok(
        "boss",
        &[
            "report", "--by", "person", "--since", "1h", "--format", "csv",
        ],
    );
    let rows: Vec<&str> = csv.lines().collect();
    assert!(
        rows[0].starts_with("person,completed,failed,skipped,released,lost,"),
        "{csv}"
    );
    assert!(rows[1].starts_with("alice,1,1,0,0,0,"), "{csv}");
    assert_eq!(rows.len(), 3, "{csv}");

    let json = env.ok("boss", &["report", "--by", "person", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["by"], "person");
    assert_eq!(v["rows"][0]["name"], "alice");
    assert_eq!(v["rows"][0]["completed"], 1);
    assert!(v["rows"][0]["handle_median_ms"].is_i64(), "{json}");
    assert!(v["since"].as_str().unwrap().ends_with('Z'), "{json}");
}

#[test]
fn report_by_queue_shows_due_health() {
    let env = busy();
    let csv = env.ok("boss", &["report", "--by", "queue", "--format", "csv"]);
    let rows: Vec<&str> = csv.lines().collect();
    assert!(
        rows[0].ends_with("overdue,due_next_hour,late_median_s,on_time_share,merged"),
        "{csv}"
    );
    assert!(rows[1].starts_with("default,1,1,0,1,0,"), "{csv}");
    assert!(rows[2].starts_with("other,0,0,0,0,0,"), "{csv}");
    assert!(
        rows[2].contains(",1,0,,"),
        "one overdue, none due soon: {csv}"
    );
    let one = env.ok("boss", &["report", "--by", "queue", "--queue", "other"]);
    assert_eq!(one.lines().count(), 3, "{one}");
    assert!(one.lines().nth(2).unwrap().starts_with("other"), "{one}");
}

#[test]
fn report_refuses_bad_periods_and_unknown_queues() {
    let env = busy();
    let err = env.fails(
        "boss",
        &["report", "--by", "person", "--since", "yesterday-ish"],
        1,
    );
    assert!(
        err.contains("--since: 'yesterday-ish' is not a time"),
        "{err}"
    );
    let err = env.fails(
        "boss",
        &["report", "--by", "person", "--until", "2020-13-45"],
        1,
    );
    assert!(err.contains("--until"), "{err}");
    let err = env.fails(
        "boss",
        &["report", "--by", "person", "--since", "1h", "--until", "2h"],
        1,
    );
    assert!(err.contains("the period is empty"), "{err}");
    let err = env.fails("boss", &["report", "--by", "queue", "--queue", "nope"], 1);
    assert!(err.contains("unknown queue 'nope'"), "{err}");
    env.fails("boss", &["report", "--by", "team"], 2);
}

#[test]
fn show_and_stats_carry_the_figures() {
    let env = busy();
    let show = env.ok("boss", &["show", "1"]);
    let line = show.lines().find(|l| l.starts_with("figures:")).unwrap();
    assert!(
        line.contains("by alice") && line.contains("done "),
        "{show}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&env.ok("boss", &["show", "1", "--json"])).unwrap();
    assert_eq!(json["figures"]["handled"][0]["person"], "alice");
    assert!(json["figures"]["cycle_ms"].is_i64());
    let open: serde_json::Value =
        serde_json::from_str(&env.ok("boss", &["show", "3", "--json"])).unwrap();
    assert!(open["figures"]["cycle_ms"].is_null());

    let stats: serde_json::Value =
        serde_json::from_str(&env.ok("boss", &["stats", "--json"])).unwrap();
    for key in [
        "at",
        "by_state",
        "by_queue",
        "locked",
        "expired",
        "overdue",
        "completed_per_hour",
        "wip",
    ] {
        assert!(stats.get(key).is_some(), "stats keeps {key}: {stats}");
    }
    assert_eq!(stats["figures"]["people"][0]["name"], "alice");
    assert_eq!(stats["figures"]["queues"][0]["completed"], 1);
    let text = env.ok("boss", &["stats"]);
    assert!(
        text.contains("today: 1 completed, 1 failed, 0 locks lost, by 2 people"),
        "{text}"
    );
}
