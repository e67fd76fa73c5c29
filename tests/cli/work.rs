//! `caseload work`, the real binary on both backends: CMD's exit 0 completes with its
//! output as the result, a failure fails with its last line on standard error (made safe
//! where printed), a signal stops CMD and releases the lock, `--max-items`, `--idle-exit`,
//! the lock renewed while CMD runs, an unknown queue refused.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::events::Db;
use crate::support::cli::explain;

/// Both backends: SQLite always, PostgreSQL when the environment names a server.
fn backends() -> Vec<Db> {
    let mut all = vec![Db::sqlite()];
    all.extend(Db::postgres());
    all
}

fn add(db: &Db, title: &str) -> i64 {
    db.ok("producer", &["add", "--title", title])
        .trim()
        .parse()
        .unwrap()
}

fn show(db: &Db, id: i64) -> Value {
    serde_json::from_str(&db.ok("viewer", &["show", &id.to_string(), "--json"])).unwrap()
}

/// The item's JSON on stdin, its id and token in the environment: an item titled "bad"
/// fails with two lines on stderr (the last with an escape sequence), the others
/// complete with a result naming what CMD was given.
const CMD: &str = r#"input=$(cat)
case "$input" in
  *'"title":"bad"'*) printf 'first line\nthe reason \033[31mred\n' >&2; exit 3 ;;
esac
id=$(printf '%s' "$input" | sed 's/.*"id":\([0-9]*\).*/\1/')
echo "did $CASELOAD_ITEM_ID (json id $id) with token $CASELOAD_LOCK_TOKEN""#;

#[test]
fn work_completes_on_exit_0_and_fails_with_the_last_stderr_line() {
    for db in backends() {
        let ok1 = add(&db, "one");
        let bad = add(&db, "bad");
        let ok2 = add(&db, "two");
        let out = db
            .command("bot", &["work", "--exec", CMD, "--idle-exit", "1"])
            .output()
            .unwrap();
        let args = ["work"];
        assert!(
            out.status.success(),
            "{}",
            explain("bot", &args, &out, "exit 0")
        );
        let text = String::from_utf8(out.stdout.clone()).unwrap();
        let err = String::from_utf8(out.stderr.clone()).unwrap();
        for line in [
            format!("#{ok1} done"),
            format!("#{ok2} done"),
            format!("#{bad} failed: the reason"),
            "work: 2 done, 1 failed, 0 released".to_string(),
        ] {
            assert!(
                text.contains(&line),
                "{line}: {}",
                explain("bot", &args, &out, "")
            );
        }
        // CMD's stderr goes on, each line named by its item; nothing raw reaches the
        // terminal.
        assert!(err.contains(&format!("#{bad}: first line")), "{err}");
        assert!(
            !text.contains('\u{1b}') && !err.contains('\u{1b}'),
            "{text}{err}"
        );
        let v = show(&db, ok1);
        assert_eq!(v["state"], "done");
        assert_eq!(
            v["result"],
            format!("did {ok1} (json id {ok1}) with token 1"),
            "{v}"
        );
        let v = show(&db, bad);
        assert_eq!(v["state"], "failed");
        assert!(
            v["error"].as_str().unwrap().starts_with("the reason"),
            "{v}"
        );
    }
}

#[test]
fn work_stops_after_max_items() {
    for db in backends() {
        let ids: Vec<i64> = (0..3).map(|i| add(&db, &format!("item {i}"))).collect();
        let text = db.ok(
            "bot",
            &[
                "work",
                "--exec",
                "cat >/dev/null",
                "--max-items",
                "2",
                "--concurrency",
                "2",
            ],
        );
        assert!(
            text.contains("work: 2 done, 0 failed, 0 released"),
            "{text}"
        );
        let open = ids
            .iter()
            .filter(|&&id| show(&db, id)["state"] == "open")
            .count();
        assert_eq!(open, 1, "{text}");
        // The one left is free, not held by the worker.
        let left = ids
            .iter()
            .find(|&&id| show(&db, id)["state"] == "open")
            .unwrap();
        assert!(show(&db, *left)["lock_user"].is_null());
    }
}

#[test]
fn work_exits_when_idle_and_refuses_an_unknown_queue() {
    for db in backends() {
        let start = Instant::now();
        let text = db.ok("bot", &["work", "--exec", "true", "--idle-exit", "1"]);
        assert!(text.contains("work: 0 done"), "{text}");
        assert!(start.elapsed() < Duration::from_secs(60));
        let err = db.fails("bot", &["work", "--queue", "nosuch", "--exec", "true"], 1);
        assert!(
            err.contains("nosuch") && err.trim_end().lines().count() == 1,
            "{err}"
        );
    }
}

/// SIGTERM while CMD runs: CMD is stopped, the lock released (with its event), exit 0.
#[test]
fn work_releases_its_lock_on_a_signal() {
    for db in backends() {
        let id = add(&db, "long");
        let started = db.env.dir.path().join(format!("started-{id}"));
        let cmd = format!("touch '{}'; sleep 60", started.display());
        let child = db
            .command("bot", &["work", "--exec", &cmd])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let until = Instant::now() + Duration::from_secs(60);
        while !started.exists() {
            assert!(Instant::now() < until, "CMD never started");
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(show(&db, id)["lock_user"], "bot");
        // SAFETY: a signal to the child this test started.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            explain("bot", &["work"], &out, "exit 0")
        );
        assert!(
            text.contains(&format!("#{id} released (stopped)")),
            "{text}"
        );
        let v = show(&db, id);
        assert_eq!(v["state"], "open");
        assert!(v["lock_user"].is_null(), "{v}");
        let kinds: Vec<&str> = v["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds.last(), Some(&"released"), "{kinds:?}");
    }
}

/// Locks of one second: CMD runs for three, the worker renews, nobody else can take the
/// item meanwhile, and the complete goes through.
#[test]
fn work_renews_the_lock_while_cmd_runs() {
    for db in backends() {
        db.ok(
            "boss",
            &[
                "queue",
                "set",
                "short",
                "--create",
                "--lock-seconds",
                "1",
                "--warn-seconds",
                "0",
            ],
        );
        let id: i64 = db
            .ok("producer", &["add", "--queue", "short", "--title", "slow"])
            .trim()
            .parse()
            .unwrap();
        let started = db.env.dir.path().join(format!("slow-{id}"));
        let cmd = format!("touch '{}'; sleep 3; echo finished", started.display());
        let child = db
            .command(
                "bot",
                &[
                    "work",
                    "--queue",
                    "short",
                    "--exec",
                    &cmd,
                    "--max-items",
                    "1",
                ],
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let until = Instant::now() + Duration::from_secs(60);
        while !started.exists() {
            assert!(Instant::now() < until, "CMD never started");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(1800));
        let err = db.fails("alice", &["claim", "--queue", "short"], 4);
        assert!(!err.is_empty());
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            explain("bot", &["work"], &out, "exit 0")
        );
        let v = show(&db, id);
        assert_eq!(v["state"], "done", "{v}");
        assert_eq!(v["result"], "finished");
        assert_eq!(v["finished_by"], "bot");
    }
}
