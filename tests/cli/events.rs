//! `caseload events`: the audit trail as JSON Lines, resumable by id; a follower killed
//! (kill -9) and restarted at random under eight writing processes reproduces the events
//! table exactly, on SQLite and on PostgreSQL; checkpoints; hooks (both backends); bad input.

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::support::backend::PgBackend;
use crate::support::cli::{Env, explain};
use serde_json::Value;

/// A database for the binary: a SQLite file in the temp dir, or a PostgreSQL schema.
pub(crate) struct Db {
    pub env: Env,
    pg: Option<PgBackend>,
}

impl Db {
    pub(crate) fn sqlite() -> Db {
        let db = Db {
            env: Env::new(),
            pg: None,
        };
        db.ok("boss", &["init"]);
        db
    }

    pub(crate) fn postgres() -> Option<Db> {
        let db = Db {
            env: Env::new(),
            pg: Some(PgBackend::from_env()?),
        };
        db.ok("boss", &["init"]);
        Some(db)
    }

    pub(crate) fn command(&self, user: &str, args: &[&str]) -> Command {
        let mut c = self.env.command(user, args);
        if let Some(pg) = &self.pg {
            c.env("CASELOAD_DB", &pg.url);
        }
        c
    }

    pub(crate) fn ok(&self, user: &str, args: &[&str]) -> String {
        let out = self.command(user, args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            explain(user, args, &out, "exit 0")
        );
        String::from_utf8(out.stdout).unwrap()
    }

    pub(crate) fn fails(&self, user: &str, args: &[&str], code: i32) -> String {
        let out = self.command(user, args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{}",
            explain(user, args, &out, &format!("exit {code}"))
        );
        String::from_utf8(out.stderr).unwrap()
    }

    /// Every event id in the table, by id, read with SQL (not through the feed).
    pub(crate) fn table_ids(&self) -> Vec<i64> {
        match &self.pg {
            Some(pg) => pg
                .admin()
                .query("SELECT id FROM events ORDER BY id", &[])
                .unwrap()
                .iter()
                .map(|r| r.get(0))
                .collect(),
            None => {
                let c = rusqlite::Connection::open(&self.env.db).unwrap();
                let mut st = c.prepare("SELECT id FROM events ORDER BY id").unwrap();
                st.query_map([], |r| r.get(0))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect()
            }
        }
    }
}

/// The ids of JSON lines.
fn ids(text: &str) -> Vec<i64> {
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            v["id"].as_i64().unwrap()
        })
        .collect()
}

/// The complete lines of a follower's output file, a line cut by kill -9 removed from
/// the file (as a consumer that reads whole lines would).
fn complete_lines(file: &Path) -> String {
    let mut text = std::fs::read_to_string(file).unwrap_or_default();
    if let Some(end) = text.rfind('\n') {
        text.truncate(end + 1);
    } else {
        text.clear();
    }
    std::fs::write(file, &text).unwrap();
    text
}

/// Eight processes at a time, each adding, taking and completing (or releasing) items
/// with the real binary, until `stop`.
fn writers(db: &Arc<Db>, stop: &Arc<AtomicBool>) -> Vec<std::thread::JoinHandle<usize>> {
    (0..8)
        .map(|w| {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let user = format!("writer{w}");
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let id = db.ok(&user, &["add", "--title", &format!("w{w} #{n}")]);
                    let id = id.trim();
                    db.ok(&user, &["claim", "--id", id, "--json"]);
                    let finish = if n % 4 == 3 { "release" } else { "complete" };
                    db.ok(&user, &[finish, id]);
                    n += 1;
                }
                n
            })
        })
        .collect()
}

/// The followers' stderr, beside their output.
fn err_file(out: &Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out.with_extension("err"))
        .unwrap()
}

fn follower(db: &Db, after: i64, out: &Path) -> Child {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)
        .unwrap();
    db.command(
        "boss",
        &["events", "--follow", "--since-id", &after.to_string()],
    )
    .stdout(file)
    .stderr(err_file(out))
    .spawn()
    .unwrap()
}

fn killed_and_restarted(db: Db) {
    let db = Arc::new(db);
    let stop = Arc::new(AtomicBool::new(false));
    let writing = writers(&db, &stop);
    let out = db.env.dir.path().join("feed.jsonl");
    let mut rng = crate::support::Rand::seeded(0x9e37_79b9_7f4a_7c15);
    let mut rand = move |m: u64| rng.below(m);
    let (mut after, mut runs_with_lines) = (0, 0);
    for _ in 0..50 {
        let mut child = follower(&db, after, &out);
        if rand(2) == 0 {
            // Killed once it is printing (a loaded machine starts a process slowly)...
            let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
            let deadline = Instant::now() + Duration::from_secs(20);
            while std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0) == size
                && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            std::thread::sleep(Duration::from_millis(rand(150)));
        } else {
            // ... or at any moment, starting up included.
            std::thread::sleep(Duration::from_millis(20 + rand(300)));
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let got = ids(&complete_lines(&out));
        let last = got.last().copied().unwrap_or(0);
        if last > after {
            runs_with_lines += 1;
        }
        after = last;
    }
    stop.store(true, Ordering::Relaxed);
    let written: usize = writing.into_iter().map(|w| w.join().unwrap()).sum();
    // The last run, without --follow: what was committed, then it ends.
    let rest = db.ok("boss", &["events", "--since-id", &after.to_string()]);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&out)
        .unwrap()
        .write_all(rest.as_bytes())
        .unwrap();
    let feed = std::fs::read_to_string(&out).unwrap();
    let table = db.table_ids();
    assert!(written >= 16, "the writers wrote {written} items");
    assert!(
        runs_with_lines >= 10,
        "only {runs_with_lines} of 50 runs printed before being killed; stderr: {}",
        std::fs::read_to_string(out.with_extension("err")).unwrap_or_default()
    );
    assert_eq!(
        ids(&feed),
        table,
        "the follower's ids are the table's, in order"
    );
    // And the lines are those of one reading from the start.
    assert_eq!(feed, db.ok("boss", &["events"]));
}

#[test]
fn a_follower_killed_50_times_under_8_writers_reproduces_the_table_sqlite() {
    killed_and_restarted(Db::sqlite());
}

#[test]
fn a_follower_killed_50_times_under_8_writers_reproduces_the_table_postgres() {
    if let Some(db) = Db::postgres() {
        killed_and_restarted(db);
    }
}

#[test]
fn lines_carry_the_event_its_item_and_sanitized_text() {
    let db = Db::sqlite();
    db.ok("boss", &["add", "--title", "evil \u{1b}[2J\u{202e} title"]);
    db.ok("boss", &["claim", "--json"]);
    db.ok("boss", &["complete", "1", "--result", "done"]);
    let out = db.ok("boss", &["events", "--json"]);
    assert!(
        !out.contains('\u{1b}') && !out.contains('\u{202e}'),
        "{out}"
    );
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    let done = &lines[1];
    assert_eq!(done["kind"], "completed");
    assert_eq!(done["item"], 1);
    assert_eq!(done["actor"], "boss");
    assert_eq!(done["queue"], "default");
    assert_eq!(
        done["title"], "evil \u{1b}[2J\u{202e} title",
        "the data is kept"
    );
    assert_eq!(done["detail"]["result"], "done");
    assert!(done["login"].is_string() && done["time"].as_str().unwrap().ends_with('Z'));
    let table = db.ok("boss", &["events", "--format", "table"]);
    assert!(
        !table.contains('\u{1b}') && table.contains("completed"),
        "{table}"
    );
    // Filters.
    assert_eq!(ids(&db.ok("boss", &["events", "--kind", "completed"])), [2]);
    assert_eq!(ids(&db.ok("boss", &["events", "--since-id", "1"])), [2]);
    db.ok("boss", &["queue", "set", "other", "--create"]);
    assert_eq!(db.ok("boss", &["events", "--queue", "other"]), "");
}

#[test]
fn bad_input_is_refused_with_one_line() {
    let db = Db::sqlite();
    let e = db.fails("boss", &["events", "--kind", "finished"], 2);
    assert!(e.contains("unknown event kind 'finished'"), "{e}");
    let e = db.fails("boss", &["events", "--queue", "nope"], 1);
    assert!(e.contains("nope"), "{e}");
    db.fails("boss", &["events", "--since-id", "-1"], 2);
    db.fails(
        "boss",
        &["events", "--since-id", "1", "--checkpoint", "cp"],
        2,
    );
    let e = db.fails("boss", &["events", "--exec", "true"], 2);
    assert!(e.contains("--checkpoint"), "{e}");
    // A checkpoint that cannot be written: said before any line is printed.
    db.ok("boss", &["add", "--title", "x"]);
    db.ok("boss", &["claim", "--json"]);
    let out = db
        .command("boss", &["events", "--checkpoint", "no/such/dir/cp"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stdout.is_empty()
            && String::from_utf8_lossy(&out.stderr).contains("checkpoint no/such/dir/cp")
    );
    std::fs::write(db.env.dir.path().join("bad"), "twelve\n").unwrap();
    let e = db.fails("boss", &["events", "--checkpoint", "bad"], 1);
    assert!(
        e.contains("checkpoint bad") && e.contains("'twelve'"),
        "{e}"
    );
}

#[test]
fn a_checkpoint_resumes_a_restarted_follower_by_itself() {
    let db = Db::sqlite();
    let cp = db.env.dir.path().join("cp");
    for t in ["a", "b"] {
        db.ok("boss", &["add", "--title", t]);
    }
    db.ok("boss", &["claim", "--json"]);
    let first = db.ok("boss", &["events", "--checkpoint", "cp"]);
    assert_eq!(ids(&first), [1]);
    assert_eq!(std::fs::read_to_string(&cp).unwrap(), "1\n");
    db.ok("boss", &["complete", "1"]);
    db.ok("boss", &["claim", "--json"]);
    assert_eq!(
        ids(&db.ok("boss", &["events", "--checkpoint", "cp"])),
        [2, 3]
    );
    assert_eq!(
        ids(&db.ok("boss", &["events", "--checkpoint", "cp"])),
        [0i64; 0]
    );
    // Killed at random while following: the checkpoint is always a whole id, never
    // ahead of what was written, and resuming from it repeats at most what came after.
    let db = Arc::new(db);
    let stop = Arc::new(AtomicBool::new(false));
    let writing = writers(&db, &stop);
    let out = db.env.dir.path().join("feed.jsonl");
    for round in 0..10u64 {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&out)
            .unwrap();
        let mut child = db
            .command("boss", &["events", "--follow", "--checkpoint", "cp"])
            .stdout(file)
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(60 + 37 * round));
        child.kill().unwrap();
        child.wait().unwrap();
        let written = ids(&complete_lines(&out));
        let saved: i64 = std::fs::read_to_string(&cp)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(
            written.last().is_none_or(|&w| saved <= w),
            "checkpoint {saved} ahead of the output"
        );
    }
    stop.store(true, Ordering::Relaxed);
    for w in writing {
        w.join().unwrap();
    }
    db.ok("boss", &["events", "--checkpoint", "cp"]);
    let mut seen = vec![1, 2, 3];
    for id in ids(&std::fs::read_to_string(&out).unwrap()) {
        if seen.last().is_none_or(|&l| id > l) {
            seen.push(id);
        } else {
            assert!(seen.contains(&id), "{id} out of order");
        }
    }
    let saved: i64 = std::fs::read_to_string(&cp)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let table = db.table_ids();
    assert_eq!(saved, *table.last().unwrap());
}

/// A hook that fails the first time for even event ids and records each success.
const HOOK: &str = r#"read -r line; case "$line" in *"\"id\":$CASELOAD_EVENT_ID,"*) ;; *) exit 9;; esac
if [ $((CASELOAD_EVENT_ID % 2)) = 0 ] && [ ! -e "failed.$CASELOAD_EVENT_ID" ]; then
  touch "failed.$CASELOAD_EVENT_ID"; exit 3
fi
echo "$CASELOAD_EVENT_ID $CASELOAD_EVENT_KIND" >> ran"#;

#[test]
fn hooks_run_once_per_matching_event_and_failures_are_retried_sqlite() {
    hooks_once_and_retried(&Db::sqlite());
}

#[test]
fn hooks_run_once_per_matching_event_and_failures_are_retried_postgres() {
    if let Some(db) = Db::postgres() {
        hooks_once_and_retried(&db);
    }
}

fn hooks_once_and_retried(db: &Db) {
    for t in ["a", "b", "c"] {
        db.ok("boss", &["add", "--title", t]);
        db.ok("boss", &["claim", "--json"]);
    }
    for id in ["1", "2", "3"] {
        db.ok("boss", &["complete", id]);
    }
    // Events 1..3 locked, 4..6 completed; the hook is only for completions.
    let hook_args = ["--exec", HOOK, "--kind", "completed", "--checkpoint", "cp"];
    let following: Vec<&str> = ["events", "--follow"]
        .iter()
        .chain(&hook_args)
        .copied()
        .collect();
    let mut child = db
        .command("boss", &following)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let said = Arc::new(AtomicUsize::new(0));
    let said2 = said.clone();
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        for l in std::io::BufReader::new(stderr).lines() {
            let l = l.unwrap();
            if l.contains("failed") {
                said2.fetch_add(1, Ordering::Relaxed);
            }
            lines.push(l);
        }
        lines
    });
    let ran = db.env.dir.path().join("ran");
    let want = "4 completed\n5 completed\n6 completed\n";
    let wait_for = |what: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::fs::read_to_string(&ran).unwrap_or_default() != what {
            assert!(
                Instant::now() < deadline,
                "hook runs: {:?}",
                std::fs::read_to_string(&ran)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for(want);
    // New work while it follows: one more completion, one more run.
    db.ok("boss", &["add", "--title", "d"]);
    db.ok("boss", &["claim", "--json"]);
    db.ok("boss", &["complete", "4"]);
    wait_for("4 completed\n5 completed\n6 completed\n8 completed\n");
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    let lines = reader.join().unwrap();
    assert_eq!(said.load(Ordering::Relaxed), 3, "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("hook for event 4 failed") && l.contains("again")),
        "{lines:?}"
    );
    assert_eq!(
        std::fs::read_to_string(db.env.dir.path().join("cp")).unwrap(),
        "8\n"
    );
    // A restarted follower runs nothing again.
    let once: Vec<&str> = ["events"].iter().chain(&hook_args).copied().collect();
    db.ok("boss", &once);
    assert_eq!(
        std::fs::read_to_string(&ran).unwrap(),
        "4 completed\n5 completed\n6 completed\n8 completed\n"
    );
}
