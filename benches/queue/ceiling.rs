//! Section `ceiling` of the engine benchmark: caseload's claim+complete against the
//! physical ceiling, `../shared/sqlite-limit` (a minimal raw SQLite work queue of the same
//! shape: WAL, `BEGIN IMMEDIATE`, a conditional claim UPDATE and a fenced complete, with no
//! audit, no triggers and one index), in the same run.
//!
//! `CL_BENCH_CEILING` names the ceiling's binary (build it outside its read-only folder:
//! `(cd ../shared/sqlite-limit && CARGO_TARGET_DIR=$T cargo build --release)`); the
//! section is skipped without it. Per repetition, alternating: the ceiling's `cycle N FULL
//! 1 full` against caseload's store draining N items in one process, then `contend 8 N
//! FULL 1 spin` (its fair variant: a busy handler of 50 µs sleeps) against 8 processes of
//! caseload draining N items. Figures are the medians of `CL_BENCH_CEILING_RUNS` [3]
//! repetitions of `CL_BENCH_CEILING_ITEMS` [5000] items; fairness is the fewest claims of
//! a process over the most, p99 the worst process's 99th percentile claim latency, both
//! as the ceiling computes them.
//!
//! Then where a cycle's time goes (`CL_BENCH_SPLIT_CYCLES` [2000] cycles, one process, one
//! connection, on copies of one file): the store as it is, without the figures' triggers
//! (the holds and the day summary), also without the kept counts' triggers, and the raw
//! baseline (caseload's SQL without its layers) with and without the event insert; each
//! with `synchronous = FULL` and `OFF` (the latter shows the CPU and page writes alone).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use caseload::store::{TakeNext, Writes};
use rusqlite::Connection;

use super::{
    Claimed, Config, Report, candidate_sql, env_num, fill, loadavg, open_raw, open_store,
    raw_complete, raw_take_next, run_workers, yes,
};

/// One `RESULT` line of the ceiling: its `key=value` fields.
fn ceiling(bin: &str, dir: &Path, args: &[&str]) -> Vec<(String, String)> {
    let out = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("BENCH_DIR", dir.join("ceiling-data"))
        .output()
        .expect("run the ceiling");
    assert!(
        out.status.success(),
        "{bin} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("RESULT"))
        .unwrap_or_else(|| panic!("no RESULT from {bin} {args:?}: {text}"));
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn field(r: &[(String, String)], key: &str) -> f64 {
    r.iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or_else(|| panic!("{key} missing in {r:?}"))
}

/// caseload's store, `procs` processes draining a copy of `template`: (cycles/s, worst
/// process's p99 claim in ms, fairness, errors).
fn caseload_drain(template: &Path, dir: &Path, procs: usize) -> (f64, f64, f64, u64) {
    let db = dir.join(format!("ceiling-caseload-{procs}.db"));
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
    }
    std::fs::copy(template, &db).unwrap();
    let rs = run_workers("store", &db, procs, "drain", "0");
    let start = rs.iter().map(|r| r.start).min().unwrap();
    let end = rs.iter().map(|r| r.end).max().unwrap();
    let cycles: u64 = rs.iter().map(|r| r.cycles).sum();
    let rate = cycles as f64 / ((end - start) as f64 / 1e6);
    let p99 = rs
        .iter()
        .map(|r| {
            let mut l = r.lat.clone();
            l.sort_unstable();
            super::pct(&l, 99.0) as f64 / 1e3
        })
        .fold(0.0, f64::max);
    let counts: Vec<u64> = rs.iter().map(|r| r.cycles).collect();
    let fair = *counts.iter().min().unwrap() as f64 / *counts.iter().max().unwrap() as f64;
    let errors = rs.iter().map(|r| r.busy + r.other).sum();
    (rate, p99, fair, errors)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub(super) fn sec_ceiling(_cfg: &Config, dir: &Path, rep: &mut Report) {
    let n: usize = env_num("CL_BENCH_CEILING_ITEMS", 5000);
    let runs: usize = env_num("CL_BENCH_CEILING_RUNS", 3);
    println!(
        "\n== ceiling: claim+complete against ../shared/sqlite-limit, {n} items, {runs} runs =="
    );
    let Ok(bin) = std::env::var("CL_BENCH_CEILING") else {
        println!("  skipped: set CL_BENCH_CEILING to the sqlite-limit binary");
        return;
    };
    let template = dir.join("ceiling-template.db");
    fill(&template, n, n);
    let ns = n.to_string();
    // [ceiling 1, caseload 1, ceiling 8, caseload 8] × (rate, p99, fairness)
    let mut m: [[Vec<f64>; 3]; 4] = Default::default();
    let mut errors = 0;
    for _ in 0..runs {
        let r = ceiling(&bin, dir, &["cycle", &ns, "FULL", "1", "full"]);
        m[0][0].push(field(&r, "median_cycles_per_s"));
        let (rate, _, _, e) = caseload_drain(&template, dir, 1);
        m[1][0].push(rate);
        errors += e;
        let r = ceiling(&bin, dir, &["contend", "8", &ns, "FULL", "1", "spin"]);
        m[2][0].push(field(&r, "median_cycles_per_s"));
        m[2][1].push(field(&r, "worst_claim_p99_ms"));
        m[2][2].push(field(&r, "fairness_min_over_max"));
        let (rate, p99, fair, e) = caseload_drain(&template, dir, 8);
        m[3][0].push(rate);
        m[3][1].push(p99);
        m[3][2].push(fair);
        errors += e;
        println!(
            "  run: 1 process ceiling {:.0} caseload {:.0}; 8 processes ceiling {:.0} (p99 \
             {:.1} ms, fairness {:.2}) caseload {:.0} (p99 {p99:.1} ms, fairness {fair:.2}); \
             load average {}",
            m[0][0].last().unwrap(),
            m[1][0].last().unwrap(),
            m[2][0].last().unwrap(),
            m[2][1].last().unwrap(),
            m[2][2].last().unwrap(),
            rate,
            loadavg()
        );
    }
    let med: Vec<[f64; 3]> = m
        .iter_mut()
        .map(|s| {
            [
                median(&mut s[0]),
                if s[1].is_empty() {
                    0.0
                } else {
                    median(&mut s[1])
                },
                if s[2].is_empty() {
                    0.0
                } else {
                    median(&mut s[2])
                },
            ]
        })
        .collect();
    let r1 = med[1][0] / med[0][0];
    rep.add(
        "10 ceiling",
        "cycles/s, 1 process (ceiling: `cycle`)",
        format!("{:.0}", med[1][0]),
        format!("{:.0}", med[0][0]),
        format!("{r1:.2}"),
        "≥0.7 of ceiling",
        yes(r1 >= 0.7 && errors == 0),
    );
    let r8 = med[3][0] / med[2][0];
    rep.add(
        "10 ceiling",
        "cycles/s, 8 processes (ceiling: `contend … spin`)",
        format!("{:.0}", med[3][0]),
        format!("{:.0}", med[2][0]),
        format!("{r8:.2}"),
        "≥0.7 of ceiling",
        yes(r8 >= 0.7 && errors == 0),
    );
    rep.add(
        "10 ceiling",
        "8 processes: fairness (fewest claims / most)",
        format!("{:.2}", med[3][2]),
        format!("{:.2}", med[2][2]),
        format!("{:.2}", med[3][2] / med[2][2]),
        "≥0.5",
        yes(med[3][2] >= 0.5),
    );
    rep.add(
        "10 ceiling",
        "8 processes: worst process's p99 claim (ms)",
        format!("{:.1}", med[3][1]),
        format!("{:.1}", med[2][1]),
        format!("{:.2}", med[3][1] / med[2][1]),
        "≤50 ms",
        yes(med[3][1] <= 50.0),
    );
    split(dir, rep);
}

/// The variants of the time split: which triggers are dropped, and whether the raw
/// baseline (with or without its event insert) runs instead of the store.
const VARIANTS: [(&str, &[&str], Engine); 5] = [
    ("store", &[], Engine::Store),
    (
        "store, no figures triggers",
        &["events_hold_end", "holds_figure_day"],
        Engine::Store,
    ),
    (
        "store, no figures or counts triggers",
        &[
            "events_hold_end",
            "holds_figure_day",
            "items_count_insert",
            "items_count_update",
            "items_count_delete",
        ],
        Engine::Store,
    ),
    (
        "raw SQL, no triggers",
        &[
            "events_hold_end",
            "holds_figure_day",
            "items_count_insert",
            "items_count_update",
            "items_count_delete",
        ],
        Engine::Raw { events: true },
    ),
    (
        "raw SQL, no triggers, no event insert",
        &[
            "events_hold_end",
            "holds_figure_day",
            "items_count_insert",
            "items_count_update",
            "items_count_delete",
        ],
        Engine::Raw { events: false },
    ),
];

#[derive(Clone, Copy)]
enum Engine {
    Store,
    Raw { events: bool },
}

/// µs per claim+complete cycle of one variant on a fresh copy of `template`.
/// WAL frames (pages) written by the commits since the count was last taken.
static FRAMES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// The WAL's length in frames after the last commit.
static WAL_LEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Counts the frames each commit appends (a WAL begun anew counts from 0). Replaces
/// SQLite's automatic checkpoint for the connection: the measuring runs are short.
fn count_frames(_: &rusqlite::hooks::Wal, pages: std::os::raw::c_int) -> rusqlite::Result<()> {
    use std::sync::atomic::Ordering::Relaxed;
    let pages = pages.max(0) as u64;
    let last = WAL_LEN.swap(pages, Relaxed);
    FRAMES.fetch_add(if pages >= last { pages - last } else { pages }, Relaxed);
    Ok(())
}

/// Variant `v`'s cycle, `n` times; µs per cycle, and the WAL pages per cycle when
/// `frames` (counted with a WAL hook, so without the automatic checkpoint).
fn split_run(template: &Path, dir: &Path, n: usize, sync: &str, v: usize) -> f64 {
    split_measured(template, dir, n, sync, v, false).0
}

fn split_measured(
    template: &Path,
    dir: &Path,
    n: usize,
    sync: &str,
    v: usize,
    frames: bool,
) -> (f64, f64) {
    use std::sync::atomic::Ordering::Relaxed;
    let (_, drop, engine) = VARIANTS[v];
    let db = dir.join(format!("split-{v}.db"));
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
    }
    std::fs::copy(template, &db).unwrap();
    {
        let c = Connection::open(&db).unwrap();
        for t in drop {
            c.execute_batch(&format!("DROP TRIGGER {t}")).unwrap();
        }
    }
    let pragma = format!("PRAGMA synchronous = {sync}");
    let t;
    match engine {
        Engine::Store => {
            let mut s = open_store(&db, "w0");
            s.connection().execute_batch(&pragma).unwrap();
            if frames {
                s.connection().wal_hook(Some(count_frames));
            }
            WAL_LEN.store(0, Relaxed);
            FRAMES.store(0, Relaxed);
            t = Instant::now();
            for _ in 0..n {
                let it = s.take_next(&TakeNext::default()).unwrap();
                s.complete(it.id, it.lock_token, None).unwrap();
            }
        }
        Engine::Raw { events } => {
            let c = open_raw(&db);
            c.execute_batch(&pragma).unwrap();
            if frames {
                c.wal_hook(Some(count_frames));
            }
            if !events {
                // The event insert goes into a table nobody reads: a temporary one that
                // is dropped, so the statement is the same but writes nothing.
                c.execute_batch(
                    "CREATE TEMP TABLE events (id INTEGER PRIMARY KEY, item_id, at, actor, \
                     os_user, kind, detail)",
                )
                .unwrap();
            }
            let cand = candidate_sql();
            WAL_LEN.store(0, Relaxed);
            FRAMES.store(0, Relaxed);
            t = Instant::now();
            for _ in 0..n {
                let Claimed::Item(id, token) = raw_take_next(&c, "w0", &cand).unwrap() else {
                    panic!("ran dry");
                };
                raw_complete(&c, "w0", id, token).unwrap();
            }
        }
    }
    (
        t.elapsed().as_secs_f64() * 1e6 / n as f64,
        FRAMES.load(Relaxed) as f64 / n as f64,
    )
}

fn split(dir: &Path, rep: &mut Report) {
    let n: usize = env_num("CL_BENCH_SPLIT_CYCLES", 2000);
    let runs: usize = env_num("CL_BENCH_CEILING_RUNS", 3);
    println!("\n  where a cycle's time goes: {n} cycles, one process, one connection");
    let template = dir.join("split-template.db");
    fill(&template, n, n);
    for sync in ["FULL", "OFF"] {
        let mut us: Vec<Vec<f64>> = vec![Vec::new(); VARIANTS.len()];
        for _ in 0..runs {
            for (v, u) in us.iter_mut().enumerate() {
                u.push(split_run(&template, dir, n, sync, v));
            }
        }
        let med: Vec<f64> = us.iter_mut().map(|u| median(u)).collect();
        for (v, (name, _, _)) in VARIANTS.iter().enumerate() {
            let step = med.get(v + 1).map_or(med[v], |next| med[v] - next);
            rep.add(
                "10 ceiling",
                format!("µs per cycle, synchronous={sync}: {name} (its own share)"),
                format!("{:.0} ({step:.0})", med[v]),
                "-",
                "-",
                "(reported)",
                "-",
            );
        }
    }
    // The pages each cycle's two commits write to the WAL (what a commit's fsync syncs).
    for (v, (name, _, _)) in VARIANTS.iter().enumerate() {
        let (_, pages) = split_measured(&template, dir, n.min(500), "OFF", v, true);
        rep.add(
            "10 ceiling",
            format!("WAL pages per cycle: {name}"),
            format!("{pages:.1}"),
            "-",
            "-",
            "(reported)",
            "-",
        );
    }
}
