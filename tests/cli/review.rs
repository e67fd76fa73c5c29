//! Four eyes (issue 29 §1) through the real binary: `queue set --review`, a complete that
//! waits for review, `claim --review` (never your own work: exit 5 by id), `accept`,
//! `reject` back to the maker, `list --state review`, the report's review figures; bad
//! input is one line, exit 1, the database unchanged.

use crate::support::cli::Env;
use serde_json::{Value, json};

fn reviewed_queue() -> Env {
    let env = Env::init("boss");
    let out = env.ok(
        "boss",
        &["queue", "set", "default", "--review", "all", "--create"],
    );
    assert!(out.contains("review all"), "{out}");
    env
}

#[test]
fn a_completion_waits_for_review_and_is_accepted_by_someone_else() {
    let env = reviewed_queue();
    let id = env.add("Verify Mei Brandt");
    let ids = id.to_string();
    env.claim("alice", &[]);
    let out = env.ok("alice", &["complete", &ids, "--result", "passport ok"]);
    assert_eq!(
        out.trim(),
        format!("Completed #{id} — waiting for review by someone else")
    );
    assert_eq!(env.show(id)["state"], "review");
    let err = env.fails("alice", &["undo", &ids], 3);
    assert!(
        err.contains("it waits for review; its reviewer may reject it back to you"),
        "{err}"
    );
    let stats = env.ok("viewer", &["stats"]);
    assert!(
        stats.contains("cancelled 0, waiting for review 1"),
        "{stats}"
    );
    assert!(stats.contains("  review     1"), "{stats}");
    let listed: Vec<Value> =
        serde_json::from_str(&env.ok("viewer", &["list", "--state", "review", "--json"])).unwrap();
    assert_eq!(listed.len(), 1);
    let text = env.ok("viewer", &["list", "--state", "review"]);
    assert!(text.contains("waiting for review"), "{text}");

    // Alice may not review her own work, by take-next (nothing) or by id (exit 5).
    let err = env.fails("alice", &["claim", "--review"], 4);
    assert!(err.contains("review"), "{err}");
    let err = env.fails("alice", &["claim", "--review", "--id", &ids], 5);
    assert_eq!(
        err.trim(),
        format!("caseload: you worked on #{id}; someone else must review it")
    );

    let (got, token) = env.claim("bob", &["--review"]);
    assert_eq!(got, id);
    let shown = env.ok("viewer", &["show", &ids]);
    assert!(shown.contains("in review, held by bob"), "{shown}");
    let out = env.ok(
        "bob",
        &[
            "accept",
            &ids,
            "--token",
            &token.to_string(),
            "--comment",
            "fine",
        ],
    );
    assert_eq!(
        out.trim(),
        format!("Accepted #{id}: done (completed by alice)")
    );
    let v = env.show(id);
    assert_eq!(v["state"], "done");
    assert_eq!(v["finished_by"], "alice");

    // The report counts the review: bob reviewed one, alice's work was accepted.
    let report = env.ok("boss", &["report", "--by", "person", "--format", "json"]);
    let v: Value = serde_json::from_str(&report).unwrap();
    let alice = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "alice");
    assert_eq!(
        alice.unwrap()["completed"],
        1,
        "the maker's completion: {report}"
    );
    // Bob gave one review; alice's work was judged once, not rejected, and waited as long
    // as from her complete to bob's accept.
    let people = v["reviews"]["people"].as_array().unwrap();
    let of = |name: &str| people.iter().find(|p| p["person"] == name).unwrap().clone();
    let (alice, bob) = (of("alice"), of("bob"));
    assert_eq!(
        (&alice["reviewed"], &alice["judged"], &alice["rejected"]),
        (&json!(0), &json!(1), &json!(0)),
        "{report}"
    );
    assert_eq!(alice["rejection_rate"], json!(0.0), "{report}");
    assert!(
        alice["review_wait_median_ms"].as_i64().unwrap() >= 0,
        "{report}"
    );
    assert_eq!(
        (&bob["reviewed"], &bob["judged"], &bob["rejection_rate"]),
        (&json!(1), &json!(0), &Value::Null),
        "{report}"
    );
    let table = env.ok("boss", &["report", "--by", "person"]);
    assert!(
        table.contains("reviews          reviewed judged rejected rej.rate review wait"),
        "{table}"
    );
    let row = (table.lines())
        .skip_while(|l| !l.starts_with("reviews "))
        .find(|l| l.starts_with("alice "));
    assert!(
        row.is_some_and(
            |l| l.split_whitespace().take(5).collect::<Vec<_>>() == ["alice", "0", "1", "0", "0%"]
        ),
        "{table}"
    );
}

#[test]
fn reject_sends_it_back_to_the_maker() {
    let env = reviewed_queue();
    let id = env.add("Verify");
    let ids = id.to_string();
    env.claim("alice", &[]);
    env.ok("alice", &["complete", &ids]);
    env.claim("bob", &["--review", "--id", &ids]);
    let err = env.fails("bob", &["reject", &ids, "--reason", " "], 1);
    assert!(err.contains("reason"), "{err}");
    let out = env.ok("bob", &["reject", &ids, "--reason", "passport expired"]);
    assert_eq!(
        out.trim(),
        format!("Rejected #{id}: back to alice (assigned)")
    );
    let v = env.show(id);
    assert_eq!(
        (v["state"].as_str(), v["lock_user"].as_str()),
        (Some("open"), Some("alice"))
    );
    let mine = env.ok("alice", &["list", "--mine"]);
    assert!(mine.contains(&format!("{id}")), "{mine}");
    let shown = env.ok("viewer", &["show", &ids]);
    assert!(shown.contains("passport expired"), "{shown}");
    let reasons = env.ok("boss", &["report", "--by", "reason"]);
    assert!(
        reasons
            .lines()
            .any(|l| l.contains("rejected") && l.contains("other")),
        "a reject's free reason counts as other: {reasons}"
    );
    // One rejection of alice's work, one review by bob; nothing waits for review.
    let report = env.ok("boss", &["report", "--by", "person", "--format", "json"]);
    let v: Value = serde_json::from_str(&report).unwrap();
    let people: Vec<(String, i64, i64, i64, Value)> = v["reviews"]["people"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let n = |k: &str| p[k].as_i64().unwrap();
            let name = p["person"].as_str().unwrap().to_string();
            (
                name,
                n("reviewed"),
                n("judged"),
                n("rejected"),
                p["rejection_rate"].clone(),
            )
        })
        .collect();
    assert_eq!(
        people,
        [
            ("alice".to_string(), 0, 1, 1, json!(1.0)),
            ("bob".to_string(), 1, 0, 0, Value::Null)
        ],
        "{report}"
    );
    assert_eq!(v["reviews"]["queues"], serde_json::json!([]), "{report}");
    // Completed again: it waits, and the queue report says so.
    env.ok("alice", &["claim", "--id", &ids]);
    env.ok("alice", &["complete", &ids]);
    let table = env.ok("boss", &["report", "--by", "queue"]);
    assert!(
        table.contains("waiting for review in default: 1 (oldest "),
        "{table}"
    );
    let report = env.ok("boss", &["report", "--by", "queue", "--format", "json"]);
    let v: Value = serde_json::from_str(&report).unwrap();
    let q = &v["reviews"]["queues"][0];
    assert_eq!(
        (&q["queue"], &q["waiting"]),
        (&json!("default"), &json!(1)),
        "{report}"
    );
    assert!(
        q["oldest_age_ms"].as_i64().is_some_and(|a| a >= 0),
        "{report}"
    );
    // Rejected again with a ready-made reason: its code counts in report --by reason.
    env.ok(
        "boss",
        &[
            "text",
            "add",
            "default",
            "--for",
            "reject",
            "Photo unreadable",
            "--code",
            "photo",
        ],
    );
    env.claim("bob", &["--review", "--id", &ids]);
    let out = env.ok("bob", &["reject", &ids, "--code", "photo"]);
    assert!(out.contains("back to alice"), "{out}");
    assert!(
        env.ok("viewer", &["show", &ids])
            .contains("Photo unreadable")
    );
    let reasons = env.ok("boss", &["report", "--by", "reason"]);
    assert!(
        reasons
            .lines()
            .any(|l| l.contains("rejected") && l.contains("photo: Photo unreadable")),
        "{reasons}"
    );
}

#[test]
fn bad_review_settings_are_one_line_and_change_nothing() {
    let env = Env::init("boss");
    env.ok("boss", &["queue", "set", "default", "--create"]);
    let before = env.fingerprint();
    for (args, says) in [
        (vec!["--review", "150%"], "between 0% and 100%"),
        (vec!["--review", "half"], "none, all or a share such as 20%"),
        (vec!["--review", "20"], "none, all or a share such as 20%"),
        (
            vec!["--review-new", "-1"],
            "review-new must be between 0 and 1000",
        ),
    ] {
        let mut cmd = vec!["queue", "set", "default"];
        cmd.extend(args);
        let err = env.fails("boss", &cmd, 1);
        assert!(err.contains(says), "{err}");
    }
    // Staff may not change it.
    env.fails("alice", &["queue", "set", "default", "--review", "all"], 5);
    assert_eq!(env.fingerprint(), before);
    // A good one reads back.
    let out = env.ok(
        "boss",
        &[
            "queue",
            "set",
            "default",
            "--review",
            "20%",
            "--review-new",
            "3",
        ],
    );
    assert!(
        out.contains("review 20% (and each person's first 3)"),
        "{out}"
    );
    let qs: Vec<Value> =
        serde_json::from_str(&env.ok("boss", &["queue", "list", "--json"])).unwrap();
    assert_eq!(
        (
            qs[0]["review_percent"].as_i64(),
            qs[0]["review_new"].as_i64()
        ),
        (Some(20), Some(3))
    );
}
