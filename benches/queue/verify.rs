//! Section `verify` of the engine benchmark: what typed fields cost (issue 26 §4), each
//! against the same work without fields in the same run.
//!
//! - **save**: the holder's `set` of one field (one fenced write of the params with its
//!   `field_changed` event) against a notes save (one fenced write with its `noted`
//!   event), alternating blocks on two held items; median per save. Target: no more.
//! - **complete**: take + complete of items in a queue with 20 fields (two of each of ten
//!   types, with rules: patterns, bounds, a phone country, choices), every field filled
//!   with a valid value, against items with the very same params in a queue without
//!   fields; only the complete is timed, alternating blocks; median per complete.
//!   Target ≤ 1.1×.
//! - **import**: `caseload import` (the release binary, under `/usr/bin/time` for the
//!   peak RSS) of `CL_BENCH_VERIFY_ROWS` [1,000,000] CSV rows into a queue with 10 fields,
//!   the file carrying a column per field (one value in ten breaks its rule), against the
//!   same rows without the field columns into a queue without fields, each into a fresh
//!   file; rounds alternate (baseline, fields, fields, baseline, …). Targets: ≥ 0.8× the
//!   baseline's rows/s, peak RSS ≤ 64 MiB.
//!
//! Both SQLite; save and complete also on PostgreSQL when `CASELOAD_TEST_PG` is set.
//! Sizes: `CL_BENCH_VERIFY_OPS` [600] saves and completes of each kind,
//! `CL_BENCH_VERIFY_ROUNDS` [1] import rounds (each one baseline and one fields run).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use caseload::domain::NewItem;
use caseload::domain::QueueUpdate;
use caseload::domain::queue_fields::{FieldChange, FieldType};
use caseload::store::{AddOptions, Store, TakeNext};

use super::{Config, PgOptions, PgStore, Report, actor, env_num, loadavg, open_store, yes};

const CASELOAD: &str = env!("CARGO_BIN_EXE_caseload");

/// Saves and completes are timed in blocks of this many, alternating kinds.
const BLOCK: usize = 50;
/// Untimed saves and completes of each kind first.
const WARM: usize = 10;

/// A field's definition as `caseload field set` flags would give it.
fn def(kind: FieldType) -> FieldChange {
    FieldChange {
        kind: Some(kind),
        ..FieldChange::default()
    }
}

fn some(s: &str) -> Option<Option<String>> {
    Some(Some(s.to_string()))
}

/// The ten fields of the import (and the first ten of the complete's twenty), with a
/// row's values (`broken`: a value that breaks the field's rule, one row in ten).
fn ten() -> Vec<(&'static str, FieldChange)> {
    vec![
        (
            "name",
            FieldChange {
                required: Some(true),
                min: some("2"),
                max: some("80"),
                ..def(FieldType::Text)
            },
        ),
        (
            "vat",
            FieldChange {
                pattern: some("^[A-Z]{2}[0-9A-Z]{8,12}$"),
                ..def(FieldType::Text)
            },
        ),
        (
            "email",
            FieldChange {
                required: Some(true),
                ..def(FieldType::Email)
            },
        ),
        (
            "phone",
            FieldChange {
                country: some("DE"),
                ..def(FieldType::Phone)
            },
        ),
        ("iban", def(FieldType::Iban)),
        (
            "since",
            FieldChange {
                min: some("2000-01-01"),
                ..def(FieldType::Date)
            },
        ),
        (
            "amount",
            FieldChange {
                min: some("0"),
                max: some("100000"),
                ..def(FieldType::Decimal)
            },
        ),
        (
            "count",
            FieldChange {
                min: some("0"),
                max: some("1000"),
                ..def(FieldType::Integer)
            },
        ),
        (
            "status",
            FieldChange {
                choices: Some(vec!["new".into(), "checked".into(), "closed".into()]),
                ..def(FieldType::Choice)
            },
        ),
        ("site", def(FieldType::Url)),
    ]
}

/// The twenty fields of the complete: the ten, and ten more of the same types.
fn twenty() -> Vec<(String, FieldChange)> {
    let mut all: Vec<(String, FieldChange)> =
        ten().into_iter().map(|(n, c)| (n.to_string(), c)).collect();
    for (n, c) in ten() {
        all.push((format!("{n}_2"), c));
    }
    all
}

/// Row `i`'s values of the ten fields as a file gives them (national phone numbers,
/// spaced IBANs, mixed-case e-mail domains: values with a canonical form to reach); one
/// row in ten has a broken one.
fn ten_values(i: usize) -> [String; 10] {
    let broken = i % 10 == 7;
    [
        format!("Supplier {i} GmbH"),
        if broken {
            format!("DE{}", i % 100)
        } else {
            format!("DE{:09}", i % 1_000_000_000)
        },
        format!("buyer{i}@Example.com"),
        format!("030 {:07}", 2_000_000 + i % 7_000_000),
        "DE89 3704 0044 0532 0130 00".into(),
        format!("20{:02}-{:02}-{:02}", 10 + i % 15, 1 + i % 12, 1 + i % 28),
        format!("{}.{:02}", i % 90_000, i % 100),
        format!("{}", i % 1000),
        ["new", "Checked", "closed"][i % 3].into(),
        format!("https://example.com/s/{i}"),
    ]
}

/// Item `i`'s params for the complete: the twenty fields, each valid.
fn twenty_params(i: usize) -> String {
    let mut m = serde_json::Map::new();
    let names = twenty();
    for (k, (name, _)) in names.iter().enumerate() {
        let v = ten_values(i + (i % 10 == 7) as usize)[k % 10].clone();
        m.insert(name.clone(), serde_json::Value::String(v));
    }
    serde_json::Value::Object(m).to_string()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// This thread's CPU time (user and system), in ms: what the work itself costs, apart
/// from the fsync waits that make most of a commit's wall time.
fn cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

/// One kind's timings: wall median and CPU mean per operation (ms).
#[derive(Default)]
struct Times {
    wall: Vec<f64>,
    cpu: f64,
}

impl Times {
    fn time(&mut self, f: impl FnOnce()) {
        let (t, c) = (Instant::now(), cpu_ms());
        f();
        self.cpu += cpu_ms() - c;
        self.wall.push(t.elapsed().as_secs_f64() * 1e3);
    }

    /// (wall median, CPU mean).
    fn figures(mut self) -> (f64, f64) {
        let n = self.wall.len() as f64;
        (median(&mut self.wall), self.cpu / n)
    }
}

/// Times `a` and `b` (each given its own timer) in alternating blocks of [`BLOCK`], `n`
/// of each.
fn alternate(
    n: usize,
    mut a: impl FnMut(usize, &mut Times),
    mut b: impl FnMut(usize, &mut Times),
) -> ((f64, f64), (f64, f64)) {
    let (mut ta, mut tb) = (Times::default(), Times::default());
    for start in (0..n).step_by(BLOCK) {
        let end = (start + BLOCK).min(n);
        for i in start..end {
            a(i, &mut ta);
        }
        for i in start..end {
            b(i, &mut tb);
        }
    }
    (ta.figures(), tb.figures())
}

/// The rows of one comparison: wall medians against the target, CPU means reported.
fn report(
    rep: &mut Report,
    what: &str,
    (ours, theirs): ((f64, f64), (f64, f64)),
    target: &str,
    limit: f64,
) {
    let ratio = ours.0 / theirs.0;
    rep.add(
        "verify",
        format!("{what}, median ms (load {})", loadavg()),
        format!("{:.3}", ours.0),
        format!("{:.3}", theirs.0),
        format!("{ratio:.2}"),
        target,
        yes(ratio <= limit),
    );
    rep.add(
        "verify",
        format!("{what}, CPU ms per call (this process)"),
        format!("{:.3}", ours.1),
        format!("{:.3}", theirs.1),
        format!("{:.2}", ours.1 / theirs.1),
        "(reported)",
        "-",
    );
}

/// Defines `fields` of `queue` (created first).
fn define(s: &mut dyn Store, queue: &str, fields: &[(String, FieldChange)]) {
    s.set_queue(queue, &QueueUpdate::default(), true).unwrap();
    for (name, change) in fields {
        s.define_field(queue, name, change)
            .unwrap_or_else(|e| panic!("field {name}: {e}"));
    }
}

/// Save and complete on one store (`label`: the backend).
fn saves_and_completes(s: &mut dyn Store, label: &str, n: usize, rep: &mut Report) {
    define(s, "checked", &twenty());
    s.set_queue("plain", &QueueUpdate::default(), true).unwrap();
    let items = |queue: &str| -> Vec<NewItem> {
        (0..n + WARM + 1)
            .map(|i| NewItem {
                queue: queue.into(),
                params: twenty_params(i),
                ..NewItem::titled(&format!("Supplier record {i}"))
            })
            .collect()
    };
    for q in ["checked", "plain"] {
        for chunk in items(q).chunks(500) {
            s.add_items(chunk, AddOptions::default()).unwrap();
        }
    }
    let take = |s: &mut dyn Store, q: &str| {
        s.take_next(&TakeNext {
            queue: Some(q.into()),
            skip: Vec::new(),
        })
        .unwrap()
    };

    // Field save against notes save, each on an item of its own held throughout.
    let f = take(s, "checked");
    let p = take(s, "plain");
    // Warm: the first check of a phone number loads libphonenumber's metadata (once per
    // process, tens of ms), the first statements are prepared.
    for i in 0..WARM {
        let v = vec![("name".to_string(), format!("Warm {i}"))];
        s.set_fields(f.id, f.lock_token, &v).unwrap();
        s.save_notes(p.id, p.lock_token, &format!("Warm {i}"))
            .unwrap();
        for q in ["checked", "plain"] {
            let it = take(s, q);
            s.complete(it.id, it.lock_token, None).unwrap();
        }
    }
    let s_cell = std::cell::RefCell::new(&mut *s);
    let times = alternate(
        n,
        |i, t| {
            let v = vec![("name".to_string(), format!("Supplier {i} AG"))];
            let mut s = s_cell.borrow_mut();
            t.time(|| {
                let changed = s.set_fields(f.id, f.lock_token, &v).unwrap();
                assert_eq!(changed.len(), 1);
            });
        },
        |i, t| {
            let notes = format!("Supplier {i} AG");
            let mut s = s_cell.borrow_mut();
            t.time(|| s.save_notes(p.id, p.lock_token, &notes).unwrap());
        },
    );
    report(
        rep,
        &format!("{label}: save of one field vs notes"),
        times,
        "≤1.0 (+5% noise)",
        1.05,
    );

    // Complete with 20 fields against complete without fields, same params.
    let complete = |q: &str, t: &mut Times| {
        let mut s = s_cell.borrow_mut();
        let it = take(&mut **s, q);
        t.time(|| {
            s.complete(it.id, it.lock_token, Some("checked"))
                .unwrap_or_else(|e| panic!("complete #{}: {e}", it.id));
        });
    };
    let times = alternate(
        n,
        |_, t| complete("checked", t),
        |_, t| complete("plain", t),
    );
    report(
        rep,
        &format!("{label}: complete, 20 fields vs none"),
        times,
        "≤1.1",
        1.1,
    );
}

/// The import CSVs (cached): the rows with the ten field columns, and without them.
/// The import's three files: the ten values as columns (for the queue that defines them),
/// the same values as each row's `params` JSON (for a queue without definitions: the same
/// data stored and indexed), and the rows without them.
fn import_csvs(cfg: &Config, rows: usize) -> [PathBuf; 3] {
    std::fs::create_dir_all(&cfg.cache).unwrap();
    let names: Vec<&str> = ten().iter().map(|(n, _)| *n).collect();
    ["fields", "params", "plain"].map(|kind| {
        let path = cfg.cache.join(format!("verify-{kind}-{rows}.csv"));
        if !path.exists() {
            let tmp = cfg.cache.join("verify-building.csv");
            let mut w = csv::Writer::from_writer(std::io::BufWriter::new(
                std::fs::File::create(&tmp).unwrap(),
            ));
            let mut head = vec!["title", "body", "priority"];
            match kind {
                "fields" => head.extend(&names),
                "params" => head.push("params"),
                _ => {}
            }
            w.write_record(&head).unwrap();
            for i in 0..rows {
                let mut rec = vec![
                    format!("Supplier record {i}: verify"),
                    format!("Row {i}, batch {}", i / 1000),
                    format!("{}", i % 3),
                ];
                match kind {
                    "fields" => rec.extend(ten_values(i)),
                    "params" => {
                        let m: serde_json::Map<String, serde_json::Value> = names
                            .iter()
                            .zip(ten_values(i))
                            .map(|(n, v)| (n.to_string(), v.into()))
                            .collect();
                        rec.push(serde_json::Value::Object(m).to_string());
                    }
                    _ => {}
                }
                w.write_record(&rec).unwrap();
            }
            w.flush().unwrap();
            drop(w);
            std::fs::rename(&tmp, &path).unwrap();
        }
        path
    })
}

/// A fresh file made by the binary, queue `checked` with `fields`.
fn import_db(path: &Path, fields: &[(String, FieldChange)]) {
    super::drop_db(path);
    let init = Command::new(CASELOAD)
        .args(["--user", "importer", "--db"])
        .arg(path)
        .arg("init")
        .output()
        .expect("init");
    assert!(init.status.success(), "init: {init:?}");
    let mut s = caseload::store::sqlite::SqliteStore::open(
        path,
        caseload::domain::Actor::new("importer", "root"),
        &caseload::store::sqlite::OpenOptions::default(),
    )
    .unwrap();
    define(&mut s, "checked", fields);
}

/// One `caseload import` run: seconds, peak RSS (MiB), CPU seconds (user + system), its
/// summary line.
fn import_run(db: &Path, csv: &Path) -> (f64, f64, f64, String) {
    let t = Instant::now();
    let out = Command::new("/usr/bin/time")
        .args([
            "-f",
            "MAXRSS_KB %M CPU %U %S",
            CASELOAD,
            "--user",
            "importer",
            "--db",
        ])
        .arg(db)
        .arg("import")
        .arg(csv)
        .args(["--queue", "checked"])
        .output()
        .expect("run /usr/bin/time");
    let secs = t.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "import: {err}");
    let nums: Vec<f64> = err
        .lines()
        .find_map(|l| l.strip_prefix("MAXRSS_KB "))
        .map(|v| v.split(' ').filter_map(|w| w.parse().ok()).collect())
        .unwrap_or_default();
    let [kb, user, sys] = nums[..] else {
        panic!("no RSS and CPU in {err}")
    };
    let said = String::from_utf8_lossy(&out.stdout)
        .trim()
        .replace('\n', " / ");
    (secs, kb / 1024.0, user + sys, said)
}

fn sec_import(cfg: &Config, dir: &Path, rep: &mut Report) {
    let rows: usize = env_num("CL_BENCH_VERIFY_ROWS", 1_000_000);
    let rounds: usize = env_num("CL_BENCH_VERIFY_ROUNDS", 1);
    let [with, as_params, without] = import_csvs(cfg, rows);
    let fields: Vec<(String, FieldChange)> =
        ten().into_iter().map(|(n, c)| (n.to_string(), c)).collect();
    let db = dir.join("verify-import.db");
    // Three imports: the ten values as columns into a queue that defines them, the same
    // values as params into a queue without definitions (the same data stored and indexed:
    // what defining the fields costs), and rows without them (what the values cost as well).
    let (mut secs, mut rss, mut cpu) = ([0.0f64; 3], [0.0f64; 3], [0.0f64; 3]);
    for r in 0..rounds {
        // Rounds alternate the order, so a change of load falls on every kind.
        let order = if r % 2 == 0 { [2, 1, 0] } else { [0, 1, 2] };
        for k in order {
            let (csv, defs) = match k {
                0 => (&with, &fields[..]),
                1 => (&as_params, &[][..]),
                _ => (&without, &[][..]),
            };
            import_db(&db, defs);
            let (s, m, c, said) = import_run(&db, csv);
            println!(
                "  import {}: {s:.1} s, {:.0} rows/s, CPU {c:.1} s, peak RSS {m:.1} MiB (load {}) \
                 — {said}",
                KINDS[k],
                rows as f64 / s,
                loadavg()
            );
            secs[k] += s;
            cpu[k] += c;
            rss[k] = rss[k].max(m);
        }
    }
    super::drop_db(&db);
    let rate = secs.map(|s| (rows * rounds) as f64 / s);
    let per_row = cpu.map(|c| c * 1e6 / (rows * rounds) as f64);
    for (base, what) in [
        (1, "the same values as params, no fields"),
        (2, "rows without the ten values"),
    ] {
        rep.add(
            "verify",
            format!(
                "import rows/s, {rows} rows, 10 fields vs {what} ({rounds} round(s), load {})",
                loadavg()
            ),
            format!("{:.0}", rate[0]),
            format!("{:.0}", rate[base]),
            format!("{:.2}", rate[0] / rate[base]),
            "≥0.8",
            yes(rate[0] / rate[base] >= 0.8),
        );
        rep.add(
            "verify",
            format!("import CPU µs per row (user + system), {rows} rows, 10 fields vs {what}"),
            format!("{:.1}", per_row[0]),
            format!("{:.1}", per_row[base]),
            format!("{:.2}", cpu[0] / cpu[base]),
            "(reported)",
            "-",
        );
    }
    rep.add(
        "verify",
        format!("import peak RSS MiB, {rows} rows, 10 fields vs rows without them"),
        format!("{:.1}", rss[0]),
        format!("{:.1}", rss[2]),
        format!("{:.2}", rss[0] / rss[2]),
        "≤64 MiB",
        yes(rss[0] <= 64.0),
    );
}

const KINDS: [&str; 3] = [
    "10 fields",
    "the same values as params, no fields",
    "rows without the ten values",
];

pub(super) fn sec_verify(cfg: &Config, dir: &Path, rep: &mut Report) {
    let n: usize = env_num("CL_BENCH_VERIFY_OPS", 600);
    println!(
        "\n== verify: typed fields against the same work without (load {}) ==",
        loadavg()
    );
    let db = dir.join("verify.db");
    super::fresh_db(&db);
    let mut s = open_store(&db, "bench");
    saves_and_completes(&mut s, "SQLite", n, rep);
    drop(s);
    super::drop_db(&db);
    if let Some(base) = std::env::var("CASELOAD_TEST_PG")
        .ok()
        .filter(|u| !u.is_empty())
    {
        let (schema, url) = super::pg_fresh_schema(&base, 0);
        let mut s = PgStore::open(&url, actor("bench"), &PgOptions::default()).unwrap();
        saves_and_completes(&mut s, "PostgreSQL", n, rep);
        drop(s);
        super::pg_drop_schema(&base, &schema);
    } else {
        println!("  (PostgreSQL skipped: CASELOAD_TEST_PG is not set)");
    }
    sec_import(cfg, dir, rep);
    std::io::stdout().flush().ok();
}
