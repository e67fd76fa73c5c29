//! Every command of DESIGN section 4, through the real binary, in temp dirs.

use crate::support;
use crate::support::cli::Env;
use serde_json::Value;

#[test]
fn init_creates_the_database_and_prints_where() {
    let env = Env::new();
    let out = env.ok("alice", &["init"]);
    assert_eq!(out.trim(), env.db.display().to_string());
    assert!(env.db.exists());
    // Running it again is harmless.
    env.ok("alice", &["init"]);
    // The creator is the first supervisor: a supervisor-only command works for them.
    env.ok("alice", &["user", "set", "bob", "--role", "supervisor"]);
}

#[test]
fn help_and_version_exit_zero_and_usage_errors_exit_two() {
    let env = Env::new();
    let help = env.ok("alice", &["--help"]);
    assert!(help.contains("claim") && help.contains("Exit codes"));
    env.ok("alice", &["--version"]);
    env.fails("alice", &["frobnicate"], 2);
    env.fails("alice", &["fail", "1"], 2); // --reason is required
    env.fails("alice", &["list", "--state", "sideways"], 2);
    env.fails("alice", &[], 2);
}

#[test]
fn add_prints_an_id_and_a_known_request_id_gives_the_same_id() {
    let env = Env::init("producer");
    let a = env.ok(
        "producer",
        &["add", "--title", "Reset password", "--request-id", "r-1"],
    );
    let b = env.ok(
        "producer",
        &["add", "--title", "Reset password", "--request-id", "r-1"],
    );
    assert_eq!(a, b);
    let c = env.ok("producer", &["add", "--title", "Other"]);
    assert_ne!(a, c);
    let id: i64 = a.trim().parse().unwrap();
    let v = env.show(id);
    assert_eq!(v["request_id"], "r-1");
    assert_eq!(v["queue"], "default");
    assert_eq!(v["created_by"], "producer");
}

/// A request id names one item: reused for another title or body it is refused (exit 3,
/// one line naming the item), and nothing changes; the same content is the retry it was.
#[test]
fn add_refuses_a_request_id_reused_for_other_content() {
    let env = Env::init("producer");
    fn add<'a>(title: &'a str, body: &'a str) -> [&'a str; 7] {
        [
            "add",
            "--title",
            title,
            "--body",
            body,
            "--request-id",
            "r-9",
        ]
    }
    let id = env.ok("producer", &add("Printer jams", "floor 3"));
    let before = env.fingerprint();
    for (title, body, differs) in [
        ("Printer jams again", "floor 3", "title differs"),
        ("Printer jams", "floor 4", "body differs"),
        ("Printer fixed", "", "title and body differ"),
    ] {
        let err = env.fails("producer", &add(title, body), 3);
        assert!(
            err.contains(&format!("request id 'r-9' is #{}'s", id.trim()))
                && err.contains(&format!("whose {differs} from this one's")),
            "{err}"
        );
        assert_eq!(env.fingerprint(), before, "nothing added");
    }
    let again = env.ok("producer", &add("Printer jams", "floor 3"));
    assert_eq!(again, id, "the same content is a retry");
    assert_eq!(env.fingerprint(), before);
}

#[test]
fn add_takes_every_field() {
    let env = Env::init("producer");
    let id = env.ok(
        "producer",
        &[
            "add",
            "--title",
            "Verify VAT",
            "--queue",
            "verification",
            "--body",
            "Line 1\nLine 2",
            "--params",
            r#"{"vat":"DE1","n":[1,2]}"#,
            "--priority",
            "-3",
            "--due",
            "2026-12-01T17:00:00+01:00",
            "--create-queue",
        ],
    );
    let v = env.show(id.trim().parse().unwrap());
    assert_eq!(v["queue"], "verification");
    assert_eq!(v["body"], "Line 1\nLine 2");
    assert_eq!(v["params"]["n"][1], 2);
    assert_eq!(v["priority"], -3);
    assert_eq!(v["due_at"], "2026-12-01T16:00:00.000Z");
    assert_eq!(v["state"], "open");
    assert!(v["created_at"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn list_shows_open_items_in_take_order_with_filters() {
    let env = Env::init("p");
    env.ok("p", &["add", "--title", "low", "--priority", "0"]);
    env.ok("p", &["add", "--title", "high", "--priority", "5"]);
    env.ok(
        "p",
        &[
            "add",
            "--title",
            "other queue",
            "--queue",
            "billing",
            "--create-queue",
        ],
    );
    let list: Value = serde_json::from_str(&env.ok("p", &["list", "--json"])).unwrap();
    let titles: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["high", "low", "other queue"]);
    let billing: Value =
        serde_json::from_str(&env.ok("p", &["list", "--queue", "billing", "--json"])).unwrap();
    assert_eq!(billing.as_array().unwrap().len(), 1);
    let limited: Value =
        serde_json::from_str(&env.ok("p", &["list", "--limit", "1", "--json"])).unwrap();
    assert_eq!(limited.as_array().unwrap().len(), 1);
    let text = env.ok("p", &["list"]);
    assert!(text.lines().next().unwrap().contains("high"));
    assert!(text.contains("free"));

    let (id, _) = env.claim("alice", &[]);
    let mine: Value =
        serde_json::from_str(&env.ok("alice", &["list", "--mine", "--json"])).unwrap();
    assert_eq!(mine[0]["id"], id);
    let bobs: Value = serde_json::from_str(&env.ok("bob", &["list", "--mine", "--json"])).unwrap();
    assert!(bobs.as_array().unwrap().is_empty());
    let locked: Value =
        serde_json::from_str(&env.ok("bob", &["list", "--state", "locked", "--json"])).unwrap();
    assert_eq!(locked[0]["lock_user"], "alice");
    assert!(env.ok("bob", &["list"]).contains("held by alice"));
    env.ok("alice", &["complete", &id.to_string()]);
    let done: Value =
        serde_json::from_str(&env.ok("bob", &["list", "--state", "done", "--json"])).unwrap();
    assert_eq!(done[0]["id"], id);
    let all: Value =
        serde_json::from_str(&env.ok("bob", &["list", "--state", "all", "--json"])).unwrap();
    assert_eq!(all.as_array().unwrap().len(), 3);
}

#[test]
fn show_prints_the_item_and_its_history() {
    let env = Env::init("producer");
    let id = env.add("Printer on fire");
    let (_, token) = env.claim("alice", &[]);
    env.ok(
        "alice",
        &["complete", &id.to_string(), "--result", "extinguished"],
    );
    let text = env.ok("bob", &["show", &id.to_string()]);
    assert!(text.starts_with(&format!("#{id} Printer on fire")));
    assert!(text.contains("created") && text.contains("locked") && text.contains("completed"));
    assert!(text.contains("result:     extinguished"));
    let v = env.show(id);
    let kinds: Vec<&str> = v["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["created", "locked", "completed"]);
    assert_eq!(v["history"][1]["actor"], "alice");
    assert_eq!(v["history"][1]["detail"]["token"], token);
    assert_eq!(v["finished_by"], "alice");
}

#[test]
fn claim_takes_next_and_says_who_holds_a_taken_item() {
    let env = Env::init("producer");
    let first = env.add("first");
    let second = env.add("second");
    let (id, token) = env.claim("alice", &[]);
    assert_eq!((id, token), (first, 1));
    let v = env.show(first);
    assert_eq!(v["lock_user"], "alice");
    let err = env.fails("bob", &["claim", "--id", &first.to_string()], 3);
    assert!(err.contains("held by alice"), "{err}");
    let (id, _) = env.claim("bob", &[]);
    assert_eq!(id, second);
    let err = env.fails("carol", &["claim"], 4);
    assert!(err.contains("nothing to claim"), "{err}");
    let text = env.ok("alice", &["claim", "--id", &first.to_string()]);
    assert!(
        text.contains("lock_token: 1"),
        "taking your own item again keeps the token"
    );
}

#[test]
fn claim_by_queue() {
    let env = Env::init("p");
    env.ok(
        "p",
        &[
            "add",
            "--title",
            "a",
            "--queue",
            "one",
            "--priority",
            "9",
            "--create-queue",
        ],
    );
    let b: i64 = env
        .ok(
            "p",
            &["add", "--title", "b", "--queue", "two", "--create-queue"],
        )
        .trim()
        .parse()
        .unwrap();
    let (id, _) = env.claim("alice", &["--queue", "two"]);
    assert_eq!(id, b);
    env.fails("alice", &["claim", "--queue", "two"], 4);
    let err = env.fails("alice", &["claim", "--queue", "three"], 1);
    assert!(
        err.contains("unknown queue 'three'") && err.contains("one, two"),
        "{err}"
    );
}

#[test]
fn holder_commands_with_and_without_token() {
    let env = Env::init("producer");
    let a = env.add("a");
    let (_, token) = env.claim("alice", &[]);
    let out = env.ok("alice", &["renew", &a.to_string()]);
    assert!(out.starts_with(&format!("Renewed #{a} until ")));
    env.ok(
        "alice",
        &["renew", &a.to_string(), "--token", &token.to_string()],
    );
    env.fails("alice", &["renew", &a.to_string(), "--token", "99"], 3);
    env.ok("alice", &["release", &a.to_string()]);
    assert!(env.show(a)["lock_user"].is_null());
    let err = env.fails("alice", &["complete", &a.to_string()], 3);
    assert!(err.contains("alice released it at"), "{err}");

    let (_, token) = env.claim("alice", &[]);
    env.fails("bob", &["complete", &a.to_string()], 3);
    env.fails(
        "bob",
        &["complete", &a.to_string(), "--token", &token.to_string()],
        3,
    );
    env.ok(
        "alice",
        &[
            "fail",
            &a.to_string(),
            "--token",
            &token.to_string(),
            "--reason",
            "customer unreachable",
        ],
    );
    let v = env.show(a);
    assert_eq!(v["state"], "failed");
    assert_eq!(v["error"], "customer unreachable");
    let err = env.fails(
        "alice",
        &["complete", &a.to_string(), "--token", &token.to_string()],
        3,
    );
    assert!(err.contains("failed already"), "{err}");
    let b = env.add("b");
    env.claim("alice", &[]);
    let err = env.fails("alice", &["fail", &b.to_string(), "--reason", "  "], 1);
    assert!(err.contains("reason"), "{err}");
}

#[test]
fn fencing_a_late_complete_after_takeover_is_refused() {
    let env = Env::new();
    env.ok("alice", &["init"]);
    env.one_second_locks("alice", "default");
    let id = env.add("fragile");
    let (_, a_token) = env.claim("amy", &[]);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let listed = env.ok("bob", &["list"]);
    assert!(listed.contains("EXPIRED amy"), "{listed}");
    let (taken, b_token) = env.claim("bob", &["--id", &id.to_string()]);
    assert_eq!(taken, id);
    assert_eq!(b_token, a_token + 1);
    let err = env.fails(
        "amy",
        &["complete", &id.to_string(), "--token", &a_token.to_string()],
        3,
    );
    assert!(
        err.contains("lock on #") && err.contains("bob took it over"),
        "{err}"
    );
    env.fails("amy", &["complete", &id.to_string()], 3);
    let v = env.show(id);
    assert_eq!(v["state"], "open");
    assert_eq!(v["lock_user"], "bob");
    assert_eq!(v["lock_token"], b_token);
    let kinds: Vec<String> = v["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds, ["created", "locked", "taken_over"]);
    assert_eq!(v["history"][2]["detail"]["from"], "amy");
    env.ok("bob", &["complete", &id.to_string()]);
    assert_eq!(env.show(id)["finished_by"], "bob");
}

#[test]
fn reap_releases_expired_locks() {
    let env = Env::new();
    env.ok("sup", &["init"]);
    env.one_second_locks("sup", "default");
    let a = env.add("a");
    env.add("b");
    env.claim("alice", &[]);
    assert_eq!(env.ok("cron", &["reap"]).trim(), "0");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(env.ok("cron", &["reap"]).trim(), "1");
    let v = env.show(a);
    assert!(v["lock_user"].is_null());
    let last = v["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["kind"], "expired");
    assert_eq!(last["detail"]["from"], "alice");
}

#[test]
fn supervisor_commands_and_staff_refusal() {
    let env = Env::new();
    env.ok("sup", &["init"]);
    let a = env.add("a").to_string();
    env.claim("alice", &[]);
    for args in [
        vec!["unlock", a.as_str(), "--reason", "x"],
        vec!["reassign", a.as_str(), "--to", "bob", "--reason", "x"],
        vec!["requeue", a.as_str()],
        vec!["cancel", a.as_str(), "--reason", "x"],
        vec!["queue", "set", "default", "--lock-seconds", "60"],
        vec!["user", "set", "alice", "--role", "supervisor"],
    ] {
        let before = env.fingerprint();
        let err = env.fails("alice", &args, 5);
        assert!(err.contains("supervisor only"), "{err}");
        assert_eq!(
            before,
            env.fingerprint(),
            "refused {args:?} changed nothing"
        );
    }
    env.ok("sup", &["user", "set", "bob", "--role", "staff"]); // a known user
    let out = env.ok(
        "sup",
        &["reassign", &a, "--to", "bob", "--reason", "alice is away"],
    );
    assert!(out.contains("to bob"));
    let v = env.show(a.parse().unwrap());
    assert_eq!(v["lock_user"], "bob");
    let last = v["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["kind"], "reassigned");
    assert_eq!(last["detail"]["from"], "alice");
    assert_eq!(last["detail"]["reason"], "alice is away");
    assert_eq!(last["actor"], "sup");
    env.fails("alice", &["complete", &a], 3);
    env.ok("sup", &["unlock", &a, "--reason", "stale"]);
    assert!(env.show(a.parse().unwrap())["lock_user"].is_null());
    env.fails("sup", &["unlock", &a, "--reason", "again"], 1);
    env.ok("sup", &["cancel", &a, "--reason", "duplicate"]);
    assert_eq!(env.show(a.parse().unwrap())["state"], "cancelled");
    env.ok("sup", &["requeue", &a]);
    assert_eq!(env.show(a.parse().unwrap())["state"], "open");
    env.fails("sup", &["requeue", &a], 1);
    env.ok("sup", &["user", "set", "alice", "--role", "supervisor"]);
    env.ok("alice", &["cancel", &a, "--reason", "now a supervisor"]);
}

#[test]
fn queue_settings_are_validated_and_shared() {
    let env = Env::new();
    env.ok("sup", &["init"]);
    env.add("a");
    let out = env.ok(
        "sup",
        &[
            "queue",
            "set",
            "default",
            "--lock-seconds",
            "600",
            "--max-per-user",
            "1",
        ],
    );
    assert!(
        out.contains("lock 600s") && out.contains("max per user 1"),
        "{out}"
    );
    let err = env.fails(
        "sup",
        &["queue", "set", "default", "--lock-seconds", "0"],
        1,
    );
    assert!(err.contains("lock-seconds"), "{err}");
    let err = env.fails(
        "sup",
        &["queue", "set", "default", "--warn-seconds", "900"],
        1,
    );
    assert!(err.contains("warn-seconds"), "{err}");
    env.fails("sup", &["queue", "set", "nosuch", "--paused", "true"], 1);
    env.fails("sup", &["queue", "set", "default"], 2);
    env.ok(
        "sup",
        &["queue", "set", "new", "--create", "--paused", "yes"],
    );
    let qs: Value = serde_json::from_str(&env.ok("x", &["queue", "list", "--json"])).unwrap();
    assert_eq!(qs.as_array().unwrap().len(), 2);
    assert_eq!(qs[1]["paused"], true);

    // The WIP limit holds for everyone.
    env.add("b");
    env.claim("alice", &[]);
    let err = env.fails("alice", &["claim"], 4);
    assert!(err.contains("limit"), "{err}");
    env.claim("bob", &[]);
    env.ok("sup", &["queue", "set", "default", "--paused", "true"]);
    env.ok("sup", &["queue", "set", "default", "--max-per-user", "0"]);
    env.add("c");
    let err = env.fails("carol", &["claim", "--queue", "default"], 4);
    assert!(err.contains("paused"), "{err}");
}

#[test]
fn user_roles() {
    let env = Env::new();
    env.ok("sup", &["init"]);
    assert!(
        env.ok("sup", &["user", "set", "bob", "--role", "supervisor"])
            .contains("bob is now supervisor")
    );
    env.ok("bob", &["user", "set", "sup", "--role", "staff"]);
    env.fails("sup", &["user", "set", "bob", "--role", "staff"], 5);
    env.fails("bob", &["user", "set", "bob", "--role", "staff"], 1);
    env.fails("bob", &["user", "set", "x", "--role", "king"], 2);
}

#[test]
fn stats_in_text_and_json() {
    let env = Env::init("producer");
    env.add("a");
    env.add("b");
    let (id, _) = env.claim("alice", &[]);
    env.ok("alice", &["complete", &id.to_string()]);
    env.claim("bob", &[]);
    let v: Value = serde_json::from_str(&env.ok("x", &["stats", "--json"])).unwrap();
    let count = |s: &str| {
        v["by_state"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["state"] == s)
            .unwrap()["count"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(count("open"), 1);
    assert_eq!(count("done"), 1);
    assert_eq!(v["locked"], 1);
    assert_eq!(v["wip"][0]["user"], "bob");
    assert_eq!(v["completed_per_hour"].as_array().unwrap().len(), 24);
    assert_eq!(v["completed_per_hour"][23], 1);
    let text = env.ok("x", &["stats"]);
    assert!(
        text.contains("open       1") && text.contains("bob"),
        "{text}"
    );
}

#[test]
fn export_csv_and_jsonl() {
    let env = Env::init("p");
    env.ok(
        "p",
        &[
            "add",
            "--title",
            "comma, \"quoted\"",
            "--body",
            "two\nlines",
        ],
    );
    let b = env.add("b");
    env.claim("alice", &["--id", &b.to_string()]);
    env.ok("alice", &["complete", &b.to_string()]);
    let csv = env.ok("x", &["export"]);
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    let headers = r.headers().unwrap().clone();
    assert_eq!(&headers[3], "title");
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(&rows[0][3], "comma, \"quoted\"");
    assert_eq!(&rows[0][4], "two\nlines");
    let jsonl = env.ok("x", &["export", "--format", "jsonl", "--state", "done"]);
    let lines: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["id"], b);
    env.fails("x", &["export", "--state", "nope"], 2);
}

#[test]
fn check_passes_on_a_healthy_database() {
    let env = Env::init("producer");
    env.add("a");
    env.claim("alice", &[]);
    assert_eq!(env.ok("x", &["check"]).trim(), "ok");
}

#[test]
fn check_repairs_the_figures_for_a_supervisor() {
    let env = Env::init("producer");
    let id = env.add("a").to_string();
    env.claim("alice", &[]);
    env.ok("alice", &["complete", &id]);
    rusqlite::Connection::open(&env.db)
        .unwrap()
        .execute_batch("DELETE FROM figure_days")
        .unwrap();
    let run = env.run("x", &["check"]);
    assert_eq!(run.status.code(), Some(1));
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(out.contains("figures summary:"), "{out}");
    assert!(out.contains("--repair-figures"), "{out}");
    let out = env.fails("alice", &["check", "--repair-figures"], 5);
    assert!(out.contains("supervisor only"), "{out}");
    let out = env.ok("producer", &["check", "--repair-figures"]);
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "rebuilt the figures from the history: 1 holds; and the duplicate keys",
            "ok"
        ]
    );
}

#[test]
fn backup_writes_a_consistent_copy() {
    let env = Env::init("producer");
    env.add("a");
    env.add("b");
    env.claim("alice", &[]);
    let dest = env.dir.path().join("copy.db");
    let out = env.ok("x", &["backup", dest.to_str().unwrap()]);
    assert!(out.contains("copy.db"));
    let original = env.fingerprint();
    assert_eq!(support::cli::fingerprint(&dest), original);
    let copy = env.ok("x", &["--db", dest.to_str().unwrap(), "check"]);
    assert_eq!(copy.trim(), "ok");
    let err = env.fails("x", &["backup", dest.to_str().unwrap()], 1);
    assert!(err.contains("exists"), "{err}");
}

#[test]
fn import_csv_and_jsonl_all_or_nothing_and_idempotent() {
    let env = Env::init("p");
    let csv_path = env.dir.path().join("items.csv");
    std::fs::write(
        &csv_path,
        "title,queue,priority,params\nOne,q,1,\"{\"\"a\"\":1}\"\nTwo,q,2,\nThree,,0,\n",
    )
    .unwrap();
    // Queues that do not exist are refused, all of them named, nothing imported.
    let before = env.fingerprint();
    let err = env.fails(
        "p",
        &["import", csv_path.to_str().unwrap(), "--queue", "fallback"],
        1,
    );
    assert!(
        err.contains("nothing imported: unknown queue 'fallback'")
            && err.contains("and 1 more unknown queue")
            && err.contains("--create-queue"),
        "{err}"
    );
    assert_eq!(env.fingerprint(), before);
    let out = env.ok(
        "p",
        &[
            "import",
            csv_path.to_str().unwrap(),
            "--queue",
            "fallback",
            "--create-queue",
        ],
    );
    assert!(out.contains("Imported 3 new item(s)"), "{out}");
    let again = env.ok(
        "p",
        &["import", csv_path.to_str().unwrap(), "--queue", "fallback"],
    );
    assert!(
        again.contains("Imported 0 new item(s)") && again.contains("3 already present"),
        "{again}"
    );
    let all: Value =
        serde_json::from_str(&env.ok("x", &["list", "--state", "all", "--json"])).unwrap();
    assert_eq!(all.as_array().unwrap().len(), 3);
    assert_eq!(all[0]["params"]["a"], 1);
    assert_eq!(all[2]["queue"], "fallback");

    let jsonl = env.dir.path().join("items.jsonl");
    std::fs::write(&jsonl, "{\"title\":\"J1\",\"params\":{\"k\":\"v\"},\"due\":\"2026-12-01T00:00:00Z\"}\n\n{\"title\":\"J2\",\"request_id\":\"j-2\"}\n").unwrap();
    assert!(
        env.ok("p", &["import", jsonl.to_str().unwrap()])
            .contains("Imported 2")
    );
    let v = env.show(4);
    assert_eq!(v["params"]["k"], "v");
    assert_eq!(v["due_at"], "2026-12-01T00:00:00.000Z");
    let forced = env.dir.path().join("items.txt");
    std::fs::write(&forced, "{\"title\":\"J3\"}\n").unwrap();
    env.ok(
        "p",
        &["import", forced.to_str().unwrap(), "--format", "jsonl"],
    );
    assert_eq!(env.show(6)["title"], "J3");
}

#[test]
fn demo_fills_a_fresh_database() {
    let env = Env::new();
    let demo = env.dir.path().join("demo.db");
    let out = env.ok("alice", &["demo", "--db", demo.to_str().unwrap()]);
    assert!(out.contains("holds") && out.contains("items"), "{out}");
    let n: usize = out
        .split_whitespace()
        .skip_while(|w| *w != "holds")
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!(n >= 300, "a few hundred demo items, got {n}");
    let qs: Value = serde_json::from_str(&env.ok(
        "alice",
        &["--db", demo.to_str().unwrap(), "queue", "list", "--json"],
    ))
    .unwrap();
    assert!(qs.as_array().unwrap().len() >= 2);
    let locked: Value = serde_json::from_str(&env.ok(
        "alice",
        &[
            "--db",
            demo.to_str().unwrap(),
            "list",
            "--state",
            "locked",
            "--json",
        ],
    ))
    .unwrap();
    assert!(
        !locked.as_array().unwrap().is_empty(),
        "the demo shows others at work"
    );
    // A demo never overwrites a database that holds work.
    env.fails("alice", &["demo", "--db", demo.to_str().unwrap()], 1);
}

#[test]
fn database_location_comes_from_flag_env_config_then_default() {
    let env = Env::new();
    let flag_db = env.dir.path().join("flag.db");
    env.ok("a", &["--db", flag_db.to_str().unwrap(), "init"]);
    assert!(flag_db.exists());
    // Config file in the user's config dir.
    let cfg_dir = env.dir.path().join("config").join("caseload");
    std::fs::create_dir_all(&cfg_dir).unwrap();
    let cfg_db = env.dir.path().join("from-config.db");
    std::fs::write(
        cfg_dir.join("config.toml"),
        format!("# shared\ndb = \"{}\"\n", cfg_db.display()),
    )
    .unwrap();
    let out = env
        .command("a", &["init"])
        .env_remove("CASELOAD_DB")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        cfg_db.display().to_string()
    );
    // Default: the user's data dir, created on first use.
    std::fs::remove_file(cfg_dir.join("config.toml")).unwrap();
    let out = env
        .command("a", &["init"])
        .env_remove("CASELOAD_DB")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let default = env
        .dir
        .path()
        .join("data")
        .join("caseload")
        .join("caseload.db");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        default.display().to_string()
    );
    assert!(default.exists());
    // A broken config names the file and line.
    std::fs::write(cfg_dir.join("config.toml"), "db = \n").unwrap();
    let out = env
        .command("a", &["init"])
        .env_remove("CASELOAD_DB")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("config.toml:1:"));
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let env = Env::init("p");
    for i in 0..300 {
        env.ok("p", &["add", "--title", &format!("item {i}")]);
    }
    let mut child = env
        .command("x", &["list", "--limit", "300"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bulk_unlock_of_expired_locks_by_holder() {
    let env = Env::new();
    env.ok("sup", &["init"]);
    env.ok(
        "sup",
        &["queue", "set", "slow", "--create", "--lock-seconds", "600"],
    );
    env.one_second_locks("sup", "fast");
    for i in 0..3 {
        env.ok(
            "p",
            &[
                "add",
                "--title",
                &format!("fast {i}"),
                "--queue",
                "fast",
                "--create-queue",
            ],
        );
    }
    env.ok(
        "p",
        &[
            "add",
            "--title",
            "slow",
            "--queue",
            "slow",
            "--create-queue",
        ],
    );
    env.claim("bob", &["--queue", "fast"]);
    env.claim("bob", &["--queue", "fast"]);
    env.claim("bob", &["--queue", "slow"]);
    env.claim("carol", &["--queue", "fast"]);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    env.fails(
        "bob",
        &["unlock", "--expired", "--holder", "bob", "--reason", "x"],
        5,
    );
    env.fails("sup", &["unlock", "--reason", "x"], 2);
    let out = env.ok(
        "sup",
        &[
            "unlock",
            "--expired",
            "--holder",
            "bob",
            "--reason",
            "bob went home",
        ],
    );
    assert_eq!(out.trim(), "Unlocked 2 item(s)");
    let locked: Value =
        serde_json::from_str(&env.ok("x", &["list", "--state", "locked", "--json"])).unwrap();
    let holders: Vec<(&str, &str)> = locked
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["lock_user"].as_str().unwrap(),
                v["queue"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(holders.len(), 2);
    assert!(holders.contains(&("bob", "slow")) && holders.contains(&("carol", "fast")));
    let v = env.show(1);
    let last = v["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["kind"], "unlocked");
    assert_eq!(last["actor"], "sup");
    assert_eq!(last["detail"]["from"], "bob");
    assert_eq!(last["detail"]["reason"], "bob went home");
    // A queue alone would take every live lock in it: it needs --expired or --all.
    let usage = env.fails("sup", &["unlock", "--queue", "fast", "--reason", "x"], 2);
    assert!(
        usage.contains("--expired") && usage.contains("--all"),
        "{usage}"
    );
    let out = env.ok(
        "sup",
        &["unlock", "--queue", "slow", "--expired", "--reason", "x"],
    );
    assert_eq!(out.trim(), "Unlocked 0 item(s)", "bob's slow lock is live");
    let out = env.ok(
        "sup",
        &[
            "unlock",
            "--queue",
            "fast",
            "--all",
            "--reason",
            "closing fast",
        ],
    );
    assert_eq!(out.trim(), "Unlocked 1 item(s)", "carol's, expired or not");
    env.fails("sup", &["unlock", "3", "--all", "--reason", "x"], 2);
}

#[test]
fn history_of_a_user() {
    let env = Env::init("producer");
    let a = env.add("a");
    env.add("b");
    env.claim("alice", &[]);
    env.ok("alice", &["complete", &a.to_string()]);
    env.claim("bob", &[]);
    let v: Value =
        serde_json::from_str(&env.ok("sup", &["history", "--of", "alice", "--json"])).unwrap();
    let kinds: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["locked", "completed"]);
    let text = env.ok("alice", &["history"]);
    assert!(
        text.contains(&format!("#{a}")) && text.contains("completed"),
        "{text}"
    );
    let later: Value = serde_json::from_str(&env.ok(
        "alice",
        &["history", "--since", "2999-01-01T00:00:00Z", "--json"],
    ))
    .unwrap();
    assert!(later.as_array().unwrap().is_empty());
    env.fails("alice", &["history", "--since", "the day before"], 1);
}

#[test]
fn a_retried_complete_is_acknowledged_not_refused() {
    // The first `complete` was applied but its answer never reached the caller (a killed
    // terminal, a dropped connection); the caller runs the very same command again.
    let env = Env::init("producer");
    let a = env.add("a");
    let (_, token) = env.claim("alice", &[]);
    let t = token.to_string();
    let args = [
        "complete",
        &a.to_string(),
        "--token",
        &t,
        "--result",
        "reset",
    ];
    assert_eq!(env.ok("alice", &args).trim(), format!("Completed #{a}"));
    assert_eq!(
        env.ok("alice", &args).trim(),
        format!("#{a} already completed by you")
    );
    // Without --token too: the token is the item's, and the completion was alice's.
    let again = ["complete", &a.to_string(), "--result", "reset"];
    assert_eq!(
        env.ok("alice", &again).trim(),
        format!("#{a} already completed by you")
    );
    // Not the same request: another result, another user, or another op is refused.
    let err = env.fails(
        "alice",
        &["complete", &a.to_string(), "--result", "other"],
        3,
    );
    assert!(err.contains("done already (by alice)"), "{err}");
    env.fails("bob", &args, 3);
    env.fails("alice", &["fail", &a.to_string(), "--reason", "r"], 3);
    let history = env.show(a)["history"].as_array().unwrap().len();
    assert_eq!(
        history, 3,
        "created, locked, completed: retries write nothing"
    );

    let b = env.add("b");
    let (_, token) = env.claim("alice", &[]);
    let fail = [
        "fail",
        &b.to_string(),
        "--token",
        &token.to_string(),
        "--reason",
        "no answer",
    ];
    env.ok("alice", &fail);
    assert_eq!(
        env.ok("alice", &fail).trim(),
        format!("#{b} already failed by you")
    );
}
