//! Section `figures` of the engine benchmark: the supervisors' figures on a big history,
//! and what keeping the `holds` table costs a claim and a complete.
//!
//! The history: `CL_BENCH_FIG_ITEMS` [1000000] items created evenly over the past
//! `CL_BENCH_FIG_DAYS` [365] days across 3 queues, each with 5 events (created, locked by
//! one of 20 people, noted, renewed, completed; every 25th released and re-taken instead
//! of noted and renewed; every 50th taken over by another person), a due time on every
//! 4th, written with prepared raw inserts in one unjournaled transaction on a file the
//! store created, with the figures' triggers dropped during the load; then `holds` is
//! filled by one INSERT … SELECT of the rows `check` expects (`EXPECTED_HOLDS`), the day
//! summary by the fill of migration 0008, and the triggers are put back (cached like the
//! other big files, keyed by its parameters; the build time is printed).
//!
//! Measured through `Store` against a raw baseline that reads the same rows with the same
//! statements (the day summary's rows of the whole UTC days, the holds of the edges) and
//! does nothing with them: `report` for 30 and 7 days, and the Stats view's refresh of
//! its figures page (`stats` + `report`). The cost of keeping the figures is
//! claim+complete cycles through the store on two copies of one file, one with both
//! triggers (`events_hold_end`, `holds_figure_day`) dropped, alternated in the same run.

use std::path::Path;
use std::time::Instant;

use caseload::domain::figures::Period;
use caseload::store::sql::{EXPECTED_HOLDS, HOLDS_COLS};
use caseload::store::{AddOptions, Reads, ReportQuery, TakeNext, Writes};
use rusqlite::{Connection, params};

use super::{Config, Report, env_num, filled_copy_of, fresh_db, ms, now_ms, open_store, pct, yes};

const DAY: i64 = 86_400_000;
const QUEUES: [&str; 3] = ["default", "billing", "returns"];
/// The triggers that keep the figures (dropped for the bulk load, and for the baseline of
/// the cost of keeping them).
const TRIGGERS: [&str; 2] = ["events_hold_end", "holds_figure_day"];
/// Migration 0008's fill of the day summary from the holds.
fn fill_figure_days() -> &'static str {
    let step = include_str!("../../src/store/sqlite/migrations/0008_figure_days.sql");
    let at = step.find("-- Filled from the holds already kept.").unwrap();
    &step[at..]
}

/// The SQL of the figures' triggers, then drops them.
fn drop_triggers(c: &Connection) -> Vec<String> {
    TRIGGERS
        .iter()
        .map(|t| {
            let sql: String = c
                .query_row(
                    "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?1",
                    [t],
                    |r| r.get(0),
                )
                .unwrap();
            c.execute_batch(&format!("DROP TRIGGER {t}")).unwrap();
            sql
        })
        .collect()
}

/// Builds the history file (see the module's comment).
pub(super) fn build(path: &Path, n: usize, days: i64) {
    let t0 = Instant::now();
    fresh_db(path);
    let c = Connection::open(path).unwrap();
    c.execute_batch(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -400000",
    )
    .unwrap();
    let triggers = drop_triggers(&c);
    c.execute_batch("BEGIN").unwrap();
    for q in QUEUES {
        c.execute(
            "INSERT INTO queues (name) VALUES (?1) ON CONFLICT DO NOTHING",
            [q],
        )
        .unwrap();
    }
    let now = now_ms();
    let start = now - days * DAY;
    let step = (days * DAY) / n as i64;
    let mut item = c
        .prepare(
            "INSERT INTO items (id, queue, title, state, lock_token, due_at, created_at, \
             created_by, finished_at, finished_by) VALUES (?1, ?2, ?3, 'done', ?4, ?5, ?6, \
             'producer', ?7, ?8)",
        )
        .unwrap();
    let mut ev = c
        .prepare(
            "INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
             VALUES (?1, ?2, ?3, 'bench', ?4, ?5)",
        )
        .unwrap();
    for i in 1..=n as i64 {
        let created = start + i * step;
        let who = format!("p{:02}", i % 20);
        let other = format!("p{:02}", (i + 7) % 20);
        let queue = QUEUES[(i % 3) as usize];
        // Handle times of 2 to 40 minutes, spread by a cheap hash.
        let handle = (2 + (i * 7919 % 39)) * 60_000;
        let taken = created + (i * 104_729 % 90) * 60_000;
        let done = taken + handle;
        let due = (i % 4 == 0).then_some(created + 3_600_000);
        let finisher = if i % 50 == 0 { &other } else { &who };
        item.execute(params![
            i,
            queue,
            format!("Request {i}"),
            2,
            due,
            created,
            done,
            finisher
        ])
        .unwrap();
        let mut e = |at: i64, actor: &str, kind: &str, detail: &str| {
            ev.execute(params![i, at, actor, kind, detail]).unwrap();
        };
        e(created, "producer", "created", "{}");
        e(taken, &who, "locked", r#"{"token":1}"#);
        if i % 50 == 0 {
            e(
                taken + handle / 3,
                &other,
                "taken_over",
                &format!(r#"{{"from":"{who}","token":2}}"#),
            );
            e(taken + handle / 2, &other, "renewed", r#"{"token":2}"#);
        } else if i % 25 == 0 {
            e(taken + handle / 3, &who, "released", r#"{"token":1}"#);
            e(taken + handle / 2, &who, "locked", r#"{"token":2}"#);
        } else {
            e(taken + handle / 3, &who, "noted", r#"{"token":1}"#);
            e(taken + handle / 2, &who, "renewed", r#"{"token":1}"#);
        }
        e(done, finisher, "completed", r#"{"token":2,"result":null}"#);
    }
    drop(item);
    drop(ev);
    let loaded = t0.elapsed();
    c.execute_batch(&format!(
        "INSERT INTO holds ({HOLDS_COLS}) SELECT {HOLDS_COLS} FROM ({EXPECTED_HOLDS}) x"
    ))
    .unwrap();
    let held = t0.elapsed();
    c.execute_batch(fill_figure_days()).unwrap();
    for t in &triggers {
        c.execute_batch(t).unwrap();
    }
    c.execute_batch("COMMIT; PRAGMA journal_mode = WAL")
        .unwrap();
    println!(
        "  built the history in {:.1} s: items and events {:.1} s, holds {:.1} s, day \
         summary {:.1} s",
        t0.elapsed().as_secs_f64(),
        loaded.as_secs_f64(),
        (held - loaded).as_secs_f64(),
        (t0.elapsed() - held).as_secs_f64()
    );
}

fn period(days: i64) -> Period {
    let now = now_ms();
    Period {
        since: now - days * DAY,
        until: now,
    }
}

/// The raw baseline: the same rows read with the same statements (the summary rows of
/// the period's whole UTC days, the holds of its edges), nothing done with them. Returns
/// `(summary rows, edge holds)`.
fn raw_rows(c: &Connection, p: Period) -> (usize, usize) {
    let first = p.since.div_euclid(DAY) * DAY + if p.since % DAY == 0 { 0 } else { DAY };
    let end = p.until.div_euclid(DAY) * DAY;
    let (edges, days) = if first < end {
        (vec![(p.since, first), (end, p.until)], Some((first, end)))
    } else {
        (vec![(p.since, p.until)], None)
    };
    let mut cells = 0;
    if let Some((first, end)) = days {
        let mut st = c
            .prepare_cached(
                "SELECT day, queue, holder, completed, failed, skipped, released, lost, \
                 held_ms, finishes FROM figure_days WHERE day >= ?1 AND day < ?2 \
                 AND (?3 IS NULL OR queue = ?3)",
            )
            .unwrap();
        let mut rows = st
            .query(params![first, end, Option::<String>::None])
            .unwrap();
        while let Some(r) = rows.next().unwrap() {
            let _: (String, String, String) =
                (r.get(1).unwrap(), r.get(2).unwrap(), r.get(9).unwrap());
            cells += 1;
        }
    }
    let mut st = c
        .prepare_cached(
            "SELECT queue, holder, started, ended, how, handle_ms, own_ms, wait_ms, cycle_ms, \
             late_ms FROM holds WHERE ended >= ?1 AND ended < ?2 AND (?3 IS NULL OR queue = ?3)",
        )
        .unwrap();
    let mut n = 0;
    for (since, until) in edges.into_iter().filter(|(a, b)| a < b) {
        let mut rows = st
            .query(params![since, until, Option::<String>::None])
            .unwrap();
        while let Some(r) = rows.next().unwrap() {
            let _: (String, String, i64) =
                (r.get(0).unwrap(), r.get(1).unwrap(), r.get(3).unwrap());
            n += 1;
        }
    }
    (cells, n)
}

/// How many holds ended in the period (what the report sums up).
fn holds_in(c: &Connection, p: Period) -> i64 {
    c.query_row(
        "SELECT count(*) FROM holds WHERE ended >= ?1 AND ended < ?2",
        params![p.since, p.until],
        |r| r.get(0),
    )
    .unwrap()
}

fn timed(iters: usize, mut f: impl FnMut()) -> (u64, u64) {
    let mut us: Vec<u64> = (0..iters)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_micros() as u64
        })
        .collect();
    us.sort_unstable();
    (pct(&us, 50.0), pct(&us, 99.0))
}

pub(super) fn sec_figures(cfg: &Config, dir: &Path, rep: &mut Report) {
    let n: usize = env_num("CL_BENCH_FIG_ITEMS", 1_000_000);
    let days: i64 = env_num("CL_BENCH_FIG_DAYS", 365);
    let iters: usize = env_num("CL_BENCH_FIG_ITERS", 20);
    println!("\n[figures] {n} items, 5 events each, over {days} days");
    let db = dir.join("figures.db");
    filled_copy_of(cfg, &format!("figures-{n}-{days}d-v2.db"), &db, |p| {
        build(p, n, days)
    });
    let mut store = open_store(&db, "sup");
    let raw = Connection::open(&db).unwrap();
    for (label, d, target_ms) in [("30 days", 30, 100.0), ("7 days", 7, 50.0)] {
        let q = ReportQuery {
            period: period(d),
            queue: None,
            rows_only: false,
        };
        let (cells, edge) = raw_rows(&raw, q.period);
        let holds = holds_in(&raw, q.period);
        let (rp50, _) = timed(iters, || {
            raw_rows(&raw, q.period);
        });
        let (p50, p99) = timed(iters, || {
            store.report(&q).unwrap();
        });
        rep.add(
            "8 figures",
            format!(
                "report, {label} ({holds} holds: {cells} summary rows + {edge} edge holds) \
                 p50 / p99 (ms)"
            ),
            format!("{:.1} / {:.1}", ms(p50), ms(p99)),
            format!("{:.1}", ms(rp50)),
            format!("{:.2}", p50 as f64 / rp50.max(1) as f64),
            format!("≤{target_ms} ms"),
            yes(ms(p99) <= target_ms),
        );
        let (p50, p99) = timed(iters, || {
            store.stats().unwrap();
            store.report(&q).unwrap();
        });
        rep.add(
            "8 figures",
            format!("Stats figures page refresh, {label} p50 / p99 (ms)"),
            format!("{:.1} / {:.1}", ms(p50), ms(p99)),
            "-",
            "-",
            format!("≤{target_ms} ms"),
            yes(ms(p99) <= target_ms),
        );
    }
    drop(store);
    drop(raw);
    cost_of_keeping(dir, rep);
}

/// Claim+complete cycles through the store, with and without the figures' triggers.
fn cost_of_keeping(dir: &Path, rep: &mut Report) {
    let items: usize = env_num("CL_BENCH_FIG_CYCLES", 1500);
    let runs: usize = env_num("CL_BENCH_FIG_RUNS", 5);
    let mut with = Vec::new();
    let mut without = Vec::new();
    for run in 0..runs * 2 {
        let keep = run % 2 == 0;
        let db = dir.join(format!("cycles-{run}.db"));
        fresh_db(&db);
        if !keep {
            drop_triggers(&Connection::open(&db).unwrap());
        }
        let mut s = open_store(&db, "w");
        let batch: Vec<caseload::domain::NewItem> = (0..items)
            .map(|i| caseload::domain::NewItem::titled(&format!("item {i}")))
            .collect();
        s.add_items(&batch, AddOptions::creating_queues()).unwrap();
        let t = Instant::now();
        for _ in 0..items {
            let it = s.take_next(&TakeNext::default()).unwrap();
            s.complete(it.id, it.lock_token, None).unwrap();
        }
        let rate = items as f64 / t.elapsed().as_secs_f64();
        if keep { &mut with } else { &mut without }.push(rate);
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (w, wo) = (med(&mut with), med(&mut without));
    rep.add(
        "8 figures",
        "claim+complete cycles/s, holds and day summary kept (vs both triggers dropped)",
        format!("{w:.0}"),
        format!("{wo:.0}"),
        format!("{:.2}", w / wo),
        "≥0.90",
        yes(w / wo >= 0.90),
    );
}
