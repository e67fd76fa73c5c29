//! The working day through the real binary: `complete --next`, `claim --wait` (SQLite,
//! and PostgreSQL when `CASELOAD_TEST_PG` is set).

use crate::support::backend::PgBackend;
use crate::support::cli::Env;
use serde_json::Value;

#[test]
fn complete_next_completes_and_prints_the_next_item_with_its_token() {
    let env = Env::new();
    env.ok("boss", &["init"]);
    let first = env.add("first");
    let second = env.add("second");
    let (id, token) = env.claim("alice", &[]);
    assert_eq!(id, first);
    let out = env.ok(
        "alice",
        &[
            "complete",
            &id.to_string(),
            "--token",
            &token.to_string(),
            "--result",
            "done",
            "--next",
            "--json",
        ],
    );
    let v: Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(v["id"], second);
    assert_eq!(v["lock_user"], "alice");
    let next_token = v["lock_token"].as_i64().unwrap();
    assert_eq!(env.show(first)["state"], "done");
    assert_eq!(env.show(first)["result"], "done");
    // Text: the complete, then the item as `claim` prints it.
    let third = env.add("third");
    let out = env.ok(
        "alice",
        &[
            "complete",
            &second.to_string(),
            "--token",
            &next_token.to_string(),
            "--next",
        ],
    );
    assert!(
        out.starts_with(&format!("Completed #{second}\n#{third} third\n")),
        "{out}"
    );
    assert!(out.contains("lock_token: "), "{out}");
}

#[test]
fn complete_next_with_nothing_left_completes_and_exits_4() {
    let env = Env::new();
    env.ok("boss", &["init"]);
    let only = env.add("only");
    let (id, _) = env.claim("alice", &[]);
    let out = env.run("alice", &["complete", &id.to_string(), "--next"]);
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("Completed #{only}\n")
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("completed #{only}; nothing to claim")),
        "{err}"
    );
    assert_eq!(env.show(only)["state"], "done");
    // JSON: nothing on stdout, the one line on stderr.
    let two = env.add("two");
    env.claim("alice", &[]);
    let err = env.fails(
        "alice",
        &[
            "complete",
            &two.to_string(),
            "--next",
            "--json",
            "--queue",
            "default",
        ],
        4,
    );
    assert!(err.contains("no free items in queue 'default'"), "{err}");
    assert_eq!(env.show(two)["state"], "done");
}

#[test]
fn complete_next_flags_need_next_and_a_lost_lock_changes_nothing() {
    let env = Env::new();
    env.ok("boss", &["init"]);
    let a = env.add("a");
    env.add("b");
    env.claim("alice", &["--id", &a.to_string()]);
    env.fails("alice", &["complete", &a.to_string(), "--queue", "x"], 2);
    let before = env.fingerprint();
    env.fails("bob", &["complete", &a.to_string(), "--next"], 3);
    env.fails(
        "alice",
        &["complete", &a.to_string(), "--next", "--queue", "defualt"],
        1,
    );
    assert_eq!(env.fingerprint(), before, "refused: nothing changed");
}

#[test]
fn claim_wait_is_woken_by_another_process_adding_work() {
    let env = Env::new();
    env.ok("boss", &["init"]);
    env.ok("boss", &["queue", "set", "helpdesk", "--create"]);
    let waiter = env
        .command(
            "alice",
            &[
                "claim",
                "--wait",
                "--timeout",
                "60",
                "--queue",
                "helpdesk",
                "--json",
            ],
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start claim --wait");
    // Let it find nothing and start waiting; then another process adds work.
    std::thread::sleep(std::time::Duration::from_millis(700));
    let id: i64 = env
        .ok(
            "producer",
            &["add", "--title", "arrived", "--queue", "helpdesk"],
        )
        .trim()
        .parse()
        .unwrap();
    let out = waiter.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "claim --wait: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["id"], id);
    assert_eq!(v["lock_user"], "alice");
    assert_eq!(env.show(id)["lock_user"], "alice");
}

#[test]
fn claim_wait_times_out_with_exit_4_and_changes_nothing() {
    let env = Env::new();
    env.ok("boss", &["init"]);
    let held = env.add("held by bob");
    env.claim("bob", &[]);
    let before = env.fingerprint();
    let start = std::time::Instant::now();
    let err = env.fails("alice", &["claim", "--wait", "--timeout", "1"], 4);
    assert!(
        start.elapsed() >= std::time::Duration::from_secs(1),
        "it waited"
    );
    assert!(err.contains("after waiting 1 s"), "{err}");
    assert_eq!(env.fingerprint(), before);
    assert_eq!(env.show(held)["lock_user"], "bob");
    // --timeout needs --wait; --wait does not go with --id; a mistyped queue is no wait.
    env.fails("alice", &["claim", "--timeout", "1"], 2);
    env.fails("alice", &["claim", "--wait", "--id", "1"], 2);
    let err = env.fails("alice", &["claim", "--wait", "--queue", "nope"], 1);
    assert!(err.contains("unknown queue 'nope'"), "{err}");
}

#[test]
fn claim_wait_takes_an_item_of_a_queue_when_it_is_unpaused() {
    let env = Env::new();
    env.ok("boss", &["init"]);
    let id = env.add("paused work");
    env.ok("boss", &["queue", "set", "default", "--paused", "true"]);
    let waiter = env
        .command("alice", &["claim", "--wait", "--timeout", "60", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    env.ok("boss", &["queue", "set", "default", "--paused", "false"]);
    let out = waiter.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["id"], id);
}

/// `claim --wait` on PostgreSQL: woken through the change counter by another process's add.
#[test]
fn claim_wait_on_postgres_is_woken_by_another_process_adding_work() {
    let Some(pg) = PgBackend::from_env() else {
        return;
    };
    let env = Env::new();
    let on_pg = |user: &str, args: &[&str]| {
        let mut c = env.command(user, args);
        c.env("CASELOAD_DB", &pg.url);
        c
    };
    assert!(on_pg("boss", &["init"]).status().unwrap().success());
    let waiter = on_pg("alice", &["claim", "--wait", "--timeout", "60", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    let added = on_pg("producer", &["add", "--title", "arrived"])
        .output()
        .unwrap();
    assert!(added.status.success());
    let id: i64 = String::from_utf8_lossy(&added.stdout)
        .trim()
        .parse()
        .unwrap();
    let out = waiter.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["id"], id);
    assert_eq!(v["lock_user"], "alice");
}
