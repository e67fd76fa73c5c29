//! `caseload metrics`: each queue's figures, exact on SQLite and PostgreSQL, counters that
//! never go down, and text that real parsers accept: promtool (the Prometheus text format
//! node_exporter reads) and prometheus_client's OpenMetrics and text parsers.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::events::Db;
use crate::support::skip::skip;
use serde_json::Value;

fn figures(db: &Db) -> Value {
    let v: Value = serde_json::from_str(&db.ok("boss", &["metrics", "--format", "json"])).unwrap();
    let q = v["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["queue"] == "work")
        .cloned();
    q.unwrap_or_else(|| panic!("no queue 'work' in {v}"))
}

fn scenario(db: &Db) {
    db.ok(
        "boss",
        &[
            "queue",
            "set",
            "work",
            "--create",
            "--lock-seconds",
            "1",
            "--warn-seconds",
            "0",
        ],
    );
    let add = |title: &str, extra: &[&str]| -> String {
        let args = [&["add", "--queue", "work", "--title", title][..], extra].concat();
        db.ok("boss", &args).trim().to_string()
    };
    let done = add("done", &[]);
    let failed = add("failed", &[]);
    add("late", &["--due", "2020-01-01"]);
    add("soon", &["--due", "2h"]);
    add("later", &["--due", "3d"]);
    let assigned = add("assigned", &[]);
    let held = add("held", &[]);
    let parked = add("parked", &[]);
    db.ok("ann", &["claim", "--id", &done]);
    db.ok("ann", &["complete", &done]);
    db.ok("ann", &["claim", "--id", &failed]);
    db.ok("ann", &["fail", &failed, "--reason", "broken"]);
    db.ok(
        "boss",
        &["assign", &assigned, "--to", "ann", "--reason", "yours"],
    );
    db.ok("bob", &["claim", "--id", &held]);
    db.ok("ann", &["claim", "--id", &parked]);
    db.ok(
        "ann",
        &["park", &parked, "--until", "2h", "--reason", "call back"],
    );
    // The lock runs out (one second).
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let f = figures(db);
    assert_eq!(f["open"], 5, "{f}");
    assert_eq!(f["items"]["open"], 5, "{f}");
    assert_eq!(f["items"]["done"], 1, "{f}");
    assert_eq!(f["items"]["failed"], 1, "{f}");
    assert_eq!(f["held_locks"], 1, "{f}");
    assert_eq!(f["expired_locks"], 1, "{f}");
    assert_eq!(f["assigned"], 1, "{f}");
    assert_eq!(f["parked"], 1, "{f}");
    assert_eq!(f["items"]["parked"], 1, "{f}");
    assert_eq!(f["overdue"], 1, "{f}");
    assert_eq!(f["due_soon"], 1, "{f}");
    assert_eq!(f["completed_total"], 1, "{f}");
    assert_eq!(f["failed_total"], 1, "{f}");
    assert_eq!(f["holds_total"], 3, "{f}");
    assert!(f["oldest_open_age_seconds"].as_f64().unwrap() >= 1.0, "{f}");
    // Counters come from the history: reopening the completed item leaves them.
    db.ok("boss", &["reopen", &done, "--reason", "again"]);
    let f = figures(db);
    assert_eq!(
        (f["items"]["done"].as_i64(), f["open"].as_i64()),
        (Some(0), Some(6))
    );
    assert_eq!(f["completed_total"], 1, "{f}");
    parsers_accept(db);
}

/// Runs `program args` with `input` on stdin; its output, or a failure naming it.
fn check(program: &str, args: &[&str], input: &str) -> String {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{program} {args:?} refused:\n{text}\n--- input:\n{input}"
    );
    text
}

const OPENMETRICS: &str = "import sys\n\
from prometheus_client.openmetrics.parser import text_string_to_metric_families\n\
for f in text_string_to_metric_families(sys.stdin.read()):\n    print(f.name, f.type, len(f.samples))\n";
const CLASSIC: &str = "import sys\n\
from prometheus_client.parser import text_string_to_metric_families\n\
for f in text_string_to_metric_families(sys.stdin.read()):\n    print(f.name, f.type, len(f.samples))\n";

fn parsers_accept(db: &Db) {
    let open = db.ok("boss", &["metrics"]);
    assert!(open.ends_with("# EOF\n"), "{open}");
    let text = db.ok("boss", &["metrics", "--format", "prometheus"]);
    if std::process::Command::new("promtool")
        .arg("--version")
        .output()
        .is_ok()
    {
        let lint = check("promtool", &["check", "metrics"], &text);
        assert!(lint.trim().is_empty(), "promtool: {lint}");
    } else {
        skip("promtool is not installed (Debian package prometheus)");
    }
    let python = "/usr/bin/python3";
    let has_client = Command::new(python)
        .args(["-c", "import prometheus_client"])
        .status()
        .is_ok_and(|s| s.success());
    if has_client {
        let families = check(python, &["-c", OPENMETRICS], &open);
        assert!(
            families.contains("caseload_completions counter"),
            "{families}"
        );
        assert!(
            families.contains("caseload_hold_duration_seconds summary"),
            "{families}"
        );
        let families = check(python, &["-c", CLASSIC], &text);
        assert!(families.contains("caseload_open_items gauge"), "{families}");
        assert!(
            families.contains("caseload_parked_items gauge"),
            "{families}"
        );
    } else {
        skip("Python's prometheus_client is not installed (Debian python3-prometheus-client)");
    }
}

#[test]
fn metrics_count_each_queue_and_parsers_accept_them_sqlite() {
    scenario(&Db::sqlite());
}

#[test]
fn metrics_count_each_queue_and_parsers_accept_them_postgres() {
    if let Some(db) = Db::postgres() {
        scenario(&db);
    }
}
