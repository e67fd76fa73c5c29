//! Import and export as a script author uses them: the two-pass import in bounded memory
//! (rows keyed by file identity and line, a killed import re-run, a file changed between
//! the passes), the export/import round trip on both backends, export's filters, its audit
//! trail and formula neutralization, `add --body-file`, `list`'s truncation notice.

use std::io::Write;
use std::process::Stdio;

use crate::support::backend::{Backend, PgBackend, SqliteBackend};
use crate::support::cli::Env;
use caseload::import::{self, Format, ImportError, Progress};
use serde_json::Value;

fn count(env: &Env) -> i64 {
    let c =
        rusqlite::Connection::open_with_flags(&env.db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    c.query_row("SELECT count(*) FROM items", [], |r| r.get(0))
        .unwrap_or(0)
}

fn write(env: &Env, name: &str, text: &str) -> String {
    let path = env.dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

fn items(env: &Env) -> Vec<Value> {
    let v: Value =
        serde_json::from_str(&env.ok("x", &["list", "--state", "all", "--limit", "0", "--json"]))
            .unwrap();
    v.as_array().unwrap().clone()
}

#[test]
fn the_same_file_twice_gives_each_row_once_and_says_why() {
    let env = Env::init("p");
    // Identical rows stay distinct rows (they are on different lines).
    let a = write(
        &env,
        "a.csv",
        "title,request_id\nsame,\nsame,\nown key,k-1\n",
    );
    let out = env.ok("p", &["import", &a]);
    assert!(out.contains("Imported 3 new item(s)"), "{out}");
    let again = env.ok("p", &["import", &a]);
    assert!(
        again.contains("Imported 0 new item(s)")
            && again.contains("3 already present")
            && again.contains("2 imported before from this same file")
            && again.contains("1 whose request_id was already known"),
        "{again}"
    );
    // A copy under another name is the same file.
    let copy = write(
        &env,
        "copy.csv",
        "title,request_id\nsame,\nsame,\nown key,k-1\n",
    );
    assert!(env.ok("p", &["import", &copy]).contains("Imported 0 new"));
    // The same file into another default queue is another import.
    assert!(
        env.ok("p", &["import", &a, "--queue", "other", "--create-queue"])
            .contains("Imported 2 new item(s)")
    );
    assert_eq!(count(&env), 5);
}

#[test]
fn a_pipe_or_device_is_refused_before_anything_is_read() {
    let env = Env::new();
    env.ok("p", &["init"]);
    let before = env.fingerprint();
    let err = env.fails("p", &["import", "/dev/null"], 1);
    assert!(
        err.contains("/dev/null") && err.contains("not a regular file"),
        "{err}"
    );
    assert_eq!(before, env.fingerprint());
}

#[test]
fn a_row_of_another_file_is_never_taken_for_an_earlier_one() {
    let env = Env::init("p");
    let monday = write(&env, "monday.csv", "title\nCheck the backup ran\n");
    env.ok("p", &["import", &monday]);
    let (id, _) = env.claim("alice", &[]);
    env.ok("alice", &["complete", &id.to_string()]);
    // Tuesday's file holds the very same task, and one more line: a different file.
    let tuesday = write(
        &env,
        "tuesday.csv",
        "title\nCheck the backup ran\nRotate the logs\n",
    );
    let out = env.ok("p", &["import", &tuesday]);
    assert!(out.contains("Imported 2 new item(s)"), "{out}");
    assert!(!out.contains("already present"), "{out}");
    // Fields that would run into each other under a separator hash apart.
    let j = write(
        &env,
        "sep.jsonl",
        "{\"title\":\"a\\u001fb\",\"body\":\"\"}\n{\"title\":\"a\",\"body\":\"b\\u001f\"}\n",
    );
    assert!(env.ok("p", &["import", &j]).contains("Imported 2 new"));
    assert_eq!(count(&env), 5);
}

#[test]
fn a_killed_import_run_again_gives_each_row_once() {
    let env = Env::new();
    env.ok("p", &["init"]);
    let rows = 150_000;
    let mut text = String::from("title,body,priority\n");
    for i in 0..rows {
        // Many identical rows: position, not content, tells them apart.
        text.push_str(&format!("Row {},same body,{}\n", i % 7, i % 3));
    }
    let path = write(&env, "big.csv", &text);
    let mut child = env
        .command("p", &["import", &path])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill -9 once some batches are committed, well before the end.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let n = count(&env);
        if n > 0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no batch committed");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let partial = count(&env);
    assert!(partial > 0 && partial < rows, "killed part-way: {partial}");
    let out = env.ok("p", &["import", &path]);
    assert!(
        out.contains(&format!("Imported {} new item(s)", rows - partial))
            && out.contains(&format!("{partial} imported before from this same file")),
        "{out}"
    );
    assert_eq!(count(&env), rows);
    let c = rusqlite::Connection::open(&env.db).unwrap();
    let distinct: i64 = c
        .query_row("SELECT count(DISTINCT request_id) FROM items", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(distinct, rows, "every row once, none twice");
}

/// Changes the file once the first pass has read all of it.
struct ChangeAfterCheck {
    path: std::path::PathBuf,
    change: fn(&std::path::Path),
    done: bool,
}

impl Progress for ChangeAfterCheck {
    fn checking(&mut self, bytes: u64, total: u64, _: u64) {
        if bytes == total && !self.done {
            self.done = true;
            (self.change)(&self.path);
        }
    }
    fn writing(&mut self, _: u64, _: u64) {}
}

fn import_while_changing(change: fn(&std::path::Path)) -> (ImportError, i64) {
    let dir = tempfile::tempdir().unwrap();
    let backend = SqliteBackend::new();
    let mut store = backend.open("p", 0);
    let path = dir.path().join("rows.csv");
    let mut text = String::from("title\n");
    for i in 0..500 {
        text.push_str(&format!("row {i:04}\n"));
    }
    std::fs::write(&path, text).unwrap();
    let mut progress = ChangeAfterCheck {
        path: path.clone(),
        change,
        done: false,
    };
    let opts = import::Options {
        format: Format::Csv,
        default_queue: "default",
        create_queues: true,
        keep_ids: false,
        define_fields: false,
        skip_duplicates: false,
    };
    let err = import::import(&mut *store, &path, &opts, &mut progress)
        .expect_err("the change is noticed");
    let n = store.count(&Default::default()).unwrap() as i64;
    (err, n)
}

#[test]
fn a_file_changed_between_the_passes_writes_nothing_unchecked() {
    // Appended to: size and mtime differ.
    let (err, n) = import_while_changing(|p| {
        let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
        f.write_all(b"=evil\n").unwrap();
    });
    assert!(
        matches!(&err, ImportError::Changed { written: 0, .. }),
        "{err:?}"
    );
    assert_eq!(n, 0);
    // Rewritten in place with the same size and the old mtime put back: the rows differ.
    let (err, n) = import_while_changing(|p| {
        let mtime = std::fs::metadata(p).unwrap().modified().unwrap();
        let text = std::fs::read_to_string(p)
            .unwrap()
            .replace("row 0001", "ROW 0001");
        std::fs::write(p, text).unwrap();
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
    });
    assert!(
        matches!(&err, ImportError::Changed { written: 0, what } if what.contains("rows differ")),
        "{err:?}"
    );
    assert_eq!(n, 0);
}

/// Items as a round trip must keep them: what a new item has.
fn essentials(v: &Value) -> Value {
    serde_json::json!([
        v["queue"],
        v["title"],
        v["body"],
        v["params"],
        v["priority"],
        v["due_at"],
        v["request_id"]
    ])
}

/// Exports `src` as CSV into `dsts[0]` and as JSON Lines into `dsts[1]`: each gets the
/// open items with every field a new item has.
fn round_trip(src: &Env, dsts: [&Env; 2]) {
    let tricky = [
        "=HYPERLINK(\"http://evil\",\"click\")",
        "+1 555 0100",
        "-5 degrees, \"quoted\"",
        "@SUM(A1)",
        "'=already quoted",
        "multi\nline",
        "Müller – 東京",
    ];
    for (i, t) in tricky.iter().enumerate() {
        let p = (i as i64) - 3;
        // `--title=-5 …`: a value that starts with '-' is given with '='.
        let (title, body) = (format!("--title={t}"), format!("--body={t}"));
        src.ok(
            "p",
            &[
                "add",
                &title,
                &body,
                "--queue",
                if i % 2 == 0 { "a" } else { "b" },
                "--priority",
                &p.to_string(),
                "--params",
                "{\"n\": 1, \"s\": \"=x\"}",
                "--due",
                "2026-12-01T17:00:00Z",
                "--create-queue",
            ],
        );
    }
    src.ok("p", &["add", "--title", "keyed", "--request-id", "rid-1"]);
    let (done, _) = src.claim("alice", &["--queue", "a"]);
    src.ok("alice", &["complete", &done.to_string()]);
    // What a new item has; a request id the import made up is no field of the source.
    let fields = |v: &Value| {
        let mut e = essentials(v);
        if e[6].as_str().is_some_and(|r| r.starts_with("import:")) {
            e[6] = Value::Null;
        }
        e
    };
    let want: Vec<Value> = items(src)
        .iter()
        .filter(|v| v["state"] == "open")
        .map(fields)
        .collect();
    assert_eq!(want.len(), 7);
    for (format, dst) in ["csv", "jsonl"].into_iter().zip(dsts) {
        let exported = src.ok("x", &["export", "--format", format]);
        let path = src.dir.path().join(format!("out.{format}"));
        std::fs::write(&path, &exported).unwrap();
        let out = dst.ok("p", &["import", path.to_str().unwrap(), "--create-queue"]);
        assert!(
            out.contains(&format!("Imported {} new item(s)", want.len()))
                && out.contains("left out 1 finished row(s)"),
            "{format}: {out}"
        );
        let got: Vec<Value> = items(dst).iter().map(fields).collect();
        assert_eq!(got, want, "{format}");
        // Importing the same export again adds nothing.
        assert!(
            dst.ok("p", &["import", path.to_str().unwrap()])
                .contains("Imported 0 new")
        );
    }
}

#[test]
fn export_then_import_round_trips_on_sqlite() {
    let src = Env::init("p");
    round_trip(&src, [&Env::init("p"), &Env::init("p")]);
}

#[test]
fn export_then_import_round_trips_on_postgres() {
    let (Some(a), Some(b), Some(c)) = (
        PgBackend::from_env(),
        PgBackend::from_env(),
        PgBackend::from_env(),
    ) else {
        return;
    };
    // Only init makes caseload's tables (as only init makes a database file).
    let on = |pg: &PgBackend| {
        let env = Env {
            db: pg.url.clone().into(),
            ..Env::new()
        };
        env.ok("p", &["init"]);
        env
    };
    round_trip(&on(&a), [&on(&b), &on(&c)]);
}

#[test]
fn csv_export_neutralizes_formulas_unless_raw() {
    let env = Env::init("p");
    env.ok(
        "p",
        &["add", "--title", "=cmd|' /C calc'!A0", "--body", "@x"],
    );
    env.ok("p", &["add", "--title", "plain", "--priority", "-2"]);
    let csv = env.ok("x", &["export"]);
    assert!(
        csv.contains("'=cmd|' /C calc'!A0") && csv.contains("'@x"),
        "{csv}"
    );
    // Numbers stay numbers.
    assert!(csv.contains(",-2,"), "{csv}");
    for line in csv.lines().skip(1) {
        for cell in line.split(',') {
            let cell = cell.trim_start_matches('"');
            assert!(!cell.starts_with('=') && !cell.starts_with('@'), "{line}");
        }
    }
    let raw = env.ok("x", &["export", "--raw"]);
    assert!(
        raw.contains(",=cmd|' /C calc'!A0,") || raw.contains("\"=cmd|' /C calc'!A0\""),
        "{raw}"
    );
    // JSON Lines is data, not a spreadsheet: unchanged.
    let jsonl = env.ok("x", &["export", "--format", "jsonl"]);
    assert!(
        jsonl.contains("\"title\":\"=cmd|' /C calc'!A0\""),
        "{jsonl}"
    );
}

#[test]
fn export_filters_and_the_audit_trail() {
    let env = Env::init("p");
    let a = env.ok(
        "p",
        &["add", "--title", "in a", "--queue", "a", "--create-queue"],
    );
    env.ok(
        "p",
        &["add", "--title", "in b", "--queue", "b", "--create-queue"],
    );
    let (id, _) = env.claim("alice", &["--queue", "a"]);
    assert_eq!(id.to_string(), a.trim());
    env.ok("alice", &["complete", &id.to_string(), "--result", "=ok"]);
    let only_b = env.ok("x", &["export", "--queue", "b", "--format", "jsonl"]);
    assert_eq!(only_b.lines().count(), 1);
    assert!(only_b.contains("in b"));
    let done = env.ok("x", &["export", "--state", "done", "--format", "jsonl"]);
    assert_eq!(done.lines().count(), 1);
    assert!(done.contains("in a"));
    let future = env.ok("x", &["export", "--since", "2999-01-01T00:00:00Z"]);
    assert_eq!(future.lines().count(), 1, "the header only: {future}");
    let err = env.fails("x", &["export", "--queue", "nope"], 1);
    assert!(err.contains("nope"), "{err}");
    let err = env.fails("x", &["export", "--since", "last spring"], 1);
    assert!(err.contains("--since"), "{err}");

    let trail = env.ok("x", &["export", "--events", "--format", "jsonl"]);
    let events: Vec<Value> = trail
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<(i64, &str)> = events
        .iter()
        .map(|e| (e["item_id"].as_i64().unwrap(), e["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            (1, "created"),
            (2, "created"),
            (1, "locked"),
            (1, "completed")
        ]
    );
    // The created events come from the item rows: no stored event, no id.
    assert!(events[0]["id"].is_null() && events[2]["id"].is_i64());
    assert_eq!(events[0]["actor"], "p");
    let of_a = env.ok("x", &["export", "--events", "--queue", "a"]);
    assert_eq!(of_a.lines().count(), 4, "{of_a}");
    assert!(of_a.starts_with("id,item_id,at,actor,os_user,kind,detail\n"));
    // No stored `created` events: history still shows one.
    let c = rusqlite::Connection::open(&env.db).unwrap();
    let stored: i64 = c
        .query_row(
            "SELECT count(*) FROM events WHERE kind = 'created'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored, 0);
    assert_eq!(env.show(2)["history"][0]["kind"], "created");
}

#[test]
fn add_takes_a_long_body_from_a_file_or_stdin() {
    let env = Env::init("p");
    let body = "é".repeat(512 * 1024); // 1 MiB exactly
    let path = write(&env, "body.txt", &body);
    let id = env.ok("p", &["add", "--title", "from file", "--body-file", &path]);
    assert_eq!(env.show(id.trim().parse().unwrap())["body"], body.as_str());
    let mut child = env
        .command("p", &["add", "--title", "from stdin", "--body-file", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"piped body")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let id: i64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert_eq!(env.show(id)["body"], "piped body");

    let before = env.fingerprint();
    let big = write(&env, "big.txt", &format!("{body}x"));
    let err = env.fails("p", &["add", "--title", "t", "--body-file", &big], 1);
    assert!(err.contains("big.txt") && err.contains("1 MiB"), "{err}");
    let bin = env.dir.path().join("bin.dat");
    std::fs::write(&bin, b"\xff\xfe").unwrap();
    let err = env.fails(
        "p",
        &["add", "--title", "t", "--body-file", bin.to_str().unwrap()],
        1,
    );
    assert!(err.contains("UTF-8"), "{err}");
    let err = env.fails(
        "p",
        &["add", "--title", "t", "--body-file", "/nonexistent/b"],
        1,
    );
    assert!(err.contains("/nonexistent/b"), "{err}");
    env.fails(
        "p",
        &["add", "--title", "t", "--body", "b", "--body-file", &path],
        2,
    );
    assert_eq!(before, env.fingerprint());
}

#[test]
fn list_says_when_it_stops_short_and_limit_0_lists_all() {
    let env = Env::init("p");
    let mut text = String::from("title\n");
    for i in 0..1234 {
        text.push_str(&format!("item {i}\n"));
    }
    let path = write(&env, "many.csv", &text);
    env.ok("p", &["import", &path]);
    let out = env.run("x", &["list"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 100);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("100 of 1,234 shown") && err.contains("--limit"),
        "{err}"
    );
    let out = env.run("x", &["list", "--json", "--limit", "10"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 10);
    assert!(String::from_utf8_lossy(&out.stderr).contains("10 of 1,234 shown"));
    let out = env.run("x", &["list", "--json", "--limit", "0"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1234);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Exactly as many as asked for: nothing to say.
    let out = env.run("x", &["list", "--limit", "1234"]);
    assert!(out.stderr.is_empty());
}

#[test]
fn a_command_group_without_its_subcommand_is_a_usage_error() {
    let env = Env::new();
    for group in ["user", "queue"] {
        let err = env.fails("x", &[group], 2);
        assert!(
            err.contains(&format!("'caseload {group}' needs a subcommand"))
                && err.contains("set")
                && err.contains(&format!("(see caseload {group} --help)")),
            "{err}"
        );
    }
}
