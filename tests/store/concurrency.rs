//! Real processes against one SQLite file: draining a queue from eight processes, two
//! processes racing for one item, eight programs migrating an old file at once, and
//! kill -9 in the middle of a claim or complete.

use crate::support::backend::Adds;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::cli::Env;
use caseload::domain::{Actor, NewItem};
use caseload::store::sqlite::OpenOptions;
use caseload::store::{Reads, SqliteStore, StoreError, TakeNext, Writes};

const WORKER_DB: &str = "CASELOAD_TEST_WORKER_DB";
const WORKER_USER: &str = "CASELOAD_TEST_WORKER_USER";

fn open(path: &std::path::Path, user: &str) -> SqliteStore {
    SqliteStore::open(path, Actor::new(user, user), &OpenOptions::default()).expect("open store")
}

/// Not a test on its own: the body of a worker process started by
/// `eight_processes_drain_a_queue` (it re-runs this test binary with the env var set).
#[test]
fn worker_drain() {
    let Ok(db) = std::env::var(WORKER_DB) else {
        return;
    };
    let user = std::env::var(WORKER_USER).unwrap();
    let mut store = open(std::path::Path::new(&db), &user);
    let mut done = 0u64;
    loop {
        match store.take_next(&TakeNext::default()) {
            Ok(item) => {
                store
                    .complete(item.id, item.lock_token, Some(&user))
                    .unwrap_or_else(|e| panic!("{user} could not complete #{}: {e}", item.id));
                done += 1;
            }
            Err(StoreError::NothingToClaim(_)) => break,
            Err(e) => panic!("{user}: claim failed: {e}"),
        }
    }
    println!("completed={done}");
}

#[test]
fn eight_processes_drain_a_queue() {
    const ITEMS: usize = 4000;
    let env = Env::new();
    {
        let mut store = open(&env.db, "producer");
        let items: Vec<NewItem> = (0..ITEMS)
            .map(|i| NewItem {
                priority: (i % 5) as i64,
                ..NewItem::titled(&format!("item {i}"))
            })
            .collect();
        for chunk in items.chunks(1000) {
            store.add_batch(chunk).unwrap();
        }
    }
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..8)
        .map(|i| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "concurrency::worker_drain",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(WORKER_DB, &env.db)
                .env(WORKER_USER, format!("w{i}"))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut total = 0u64;
    let mut per_worker = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "worker failed: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let n: u64 = stdout
            .split("completed=")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no count in {stdout}"));
        per_worker.push(n);
        total += n;
    }
    assert_eq!(total, ITEMS as u64, "per worker: {per_worker:?}");
    let conn = rusqlite::Connection::open(&env.db).unwrap();
    let q = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(
        q("SELECT count(*) FROM items WHERE state = 'done'"),
        ITEMS as i64
    );
    assert_eq!(
        q("SELECT count(*) FROM events WHERE kind = 'completed'"),
        ITEMS as i64
    );
    assert_eq!(
        q(
            "SELECT count(*) FROM (SELECT item_id FROM events WHERE kind = 'completed' \
           GROUP BY item_id HAVING count(*) <> 1)"
        ),
        0,
        "every item completed exactly once"
    );
    assert_eq!(
        q("SELECT count(*) FROM items WHERE result <> finished_by"),
        0,
        "each item was completed by the worker that took it"
    );
    assert_eq!(
        q("SELECT count(*) FROM events WHERE kind = 'locked'"),
        ITEMS as i64
    );
    assert_eq!(
        q("SELECT count(*) FROM holds WHERE how = 'completed' AND handle_ms = own_ms"),
        ITEMS as i64,
        "one hold kept per completion, in the completion's transaction"
    );
    assert_eq!(
        q("SELECT sum(completed) FROM figure_days"),
        ITEMS as i64,
        "the day summary counts each completion once, in its transaction"
    );
    assert_eq!(
        q("SELECT sum(completed) FROM queue_totals"),
        ITEMS as i64,
        "the queue's totals count each completion once, in its transaction"
    );
    // check also recomputes the holds from the events.
    assert!(open(&env.db, "checker").check().unwrap().is_empty());
}

#[test]
fn two_processes_racing_for_one_item_get_one_winner() {
    let env = Env::init("producer");
    for round in 0..15 {
        let id = env.add(&format!("contested {round}")).to_string();
        let spawn = |user: &str| {
            env.command(user, &["claim", "--id", &id])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let a = spawn("alice");
        let b = spawn("bob");
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        let mut codes = [a.status.code(), b.status.code()];
        codes.sort();
        assert_eq!(
            codes,
            [Some(0), Some(3)],
            "round {round}: exactly one winner"
        );
        let loser_err = if a.status.success() {
            &b.stderr
        } else {
            &a.stderr
        };
        let err = String::from_utf8_lossy(loser_err);
        assert!(err.contains("held by"), "the loser is told who: {err}");
        let holder = env.show(id.parse().unwrap())["lock_user"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(holder == "alice", a.status.success());
    }
}

#[test]
fn eight_programs_migrate_an_old_file_exactly_once() {
    let env = Env::new();
    {
        let conn = rusqlite::Connection::open(&env.db).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL").unwrap();
        caseload::store::migrate::create_at_version(&conn, 1).unwrap();
        conn.execute_batch(
            "INSERT INTO queues (name) VALUES ('default');
             INSERT INTO items (queue, title, created_at, created_by) VALUES
               ('default', 'old one', 1, 'p'), ('default', 'old two', 2, 'p');
             INSERT INTO items (queue, title, state, created_at, created_by, finished_at, finished_by)
               VALUES ('default', 'old done', 'done', 3, 'p', 4, 'p');
             INSERT INTO events (item_id, at, actor, os_user, kind) VALUES
               (1, 1, 'p', 'p', 'created'), (2, 2, 'p', 'p', 'created'), (3, 3, 'p', 'p', 'created');",
        )
        .unwrap();
    }
    let children: Vec<_> = (0..8)
        .map(|i| {
            env.command(&format!("u{i}"), &["list", "--json"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 2);
    }
    let conn = rusqlite::Connection::open(&env.db).unwrap();
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, caseload::store::migrate::LATEST);
    let kept: i64 = conn
        .query_row("SELECT n FROM item_counts WHERE state = 'open'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(kept, 2, "counts were filled once, not once per program");
    assert_eq!(env.ok("x", &["check"]).trim(), "ok");
}

/// A small deterministic-per-run random source (no extra crates).
fn rand_below(state: &mut u64, n: u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state % n
}

#[test]
fn kill_9_mid_claim_or_complete_leaves_a_consistent_file() {
    let env = Env::init("producer");
    for i in 0..40 {
        env.add(&format!("item {i}"));
    }
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    for round in 0..25 {
        // Either a claim, or a complete of an item the victim holds.
        let held: serde_json::Value =
            serde_json::from_str(&env.ok("victim", &["list", "--mine", "--json"])).unwrap();
        let target = held
            .as_array()
            .unwrap()
            .first()
            .map(|v| v["id"].as_i64().unwrap());
        let args: Vec<String> = match (round % 2, target) {
            (1, Some(id)) => vec!["complete".into(), id.to_string()],
            _ => vec!["claim".into(), "--json".into()],
        };
        let args_ref: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = env
            .command("victim", &args_ref)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let delay = rand_below(&mut seed, 12_000);
        std::thread::sleep(Duration::from_micros(delay));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        assert_eq!(
            env.ok("checker", &["check"]).trim(),
            "ok",
            "round {round}: {args:?} killed after {delay}µs"
        );
        let all: serde_json::Value = serde_json::from_str(&env.ok(
            "x",
            &["list", "--state", "all", "--limit", "1000", "--json"],
        ))
        .unwrap();
        for item in all.as_array().unwrap() {
            let holder = &item["lock_user"];
            assert!(
                holder.is_null() || holder == "victim",
                "round {round}: #{} is held by {holder}",
                item["id"]
            );
            if item["state"] == "done" {
                assert_eq!(item["finished_by"], "victim");
            }
        }
    }
    // Whatever was interrupted, the victim can carry on with every item it holds.
    let held: serde_json::Value =
        serde_json::from_str(&env.ok("victim", &["list", "--mine", "--json"])).unwrap();
    for item in held.as_array().unwrap() {
        env.ok("victim", &["complete", &item["id"].to_string()]);
    }
    let start = Instant::now();
    assert!(start.elapsed() < Duration::from_secs(60));
}
