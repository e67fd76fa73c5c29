//! Section `work` of the engine benchmark (issue 32 §2): `caseload work --exec true`
//! (the real binary: one process, `--concurrency N` slots each on its own connection,
//! complete-and-next, a `sh -c true` per item) against the raw claim loop in the same
//! run: N processes of this benchmark each looping the store's own claim and complete
//! statements (`pgrawn` on PostgreSQL: the `FOR UPDATE SKIP LOCKED` candidate, the claim
//! CTE and the fenced complete, each in its transaction with the change counter's bump
//! after COMMIT; `raw` on SQLite: the same in `BEGIN IMMEDIATE`), with 1, 8 and 32
//! workers on both backends. Both sides drain the same number of fresh open items; the
//! rate is items / (last `completed` event − first `locked` event), read from the events
//! table after the run, so process start and connecting count on neither side.
//!
//! Then, on PostgreSQL, the round trips of one claim (`take_next`) and one complete
//! through `PgStore`, counted by a proxy in front of the server that reads the protocol
//! (`tests/support/wire.rs`, as `tests/store/round_trips.rs` does): one round trip per
//! `ReadyForQuery` the server sends.
//!
//! `CL_BENCH_WORK_ITEMS` [600] items per run, `CL_BENCH_WORK_WORKERS` [1,8,32],
//! `CL_BENCH_WORK_RUNS` [2] runs per worker count (alternating sides, median reported).

use std::path::Path;
use std::process::Command;

use caseload::domain::Actor;
use caseload::store::postgres::{PgOptions, PgStore};
use caseload::store::{TakeNext, Writes};

use super::wire::{Wire, host_port};
use super::{
    Config, Report, env_num, filled_copy, loadavg, pg_drop_schema, pg_fresh_schema, run_workers,
    yes,
};

const CASELOAD: &str = env!("CARGO_BIN_EXE_caseload");

/// `caseload work` draining the database at `db` with `n` slots.
fn run_work(db: &str, n: usize, items: usize, home: &Path) {
    let out = Command::new(CASELOAD)
        .args(["--db", db, "work", "--exec", "true"])
        .args([
            "--concurrency",
            &n.to_string(),
            "--max-items",
            &items.to_string(),
        ])
        .env_remove("CASELOAD_DB")
        .env_remove("CASELOAD_PG_POOL")
        .env("CASELOAD_USER", "bench")
        .env("HOME", home)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains(&format!("work: {items} done")),
        "caseload work: {}{}",
        text.lines().last().unwrap_or_default(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Items / (last completed − first locked), in items per second, from the events.
fn rate_pg(url: &str, items: usize) -> f64 {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let row = c
        .query_one(
            "SELECT (SELECT min(at) FROM events WHERE kind = 'locked'), \
             (SELECT max(at) FROM events WHERE kind = 'completed'), \
             (SELECT count(*) FROM items WHERE state = 'done')",
            &[],
        )
        .unwrap();
    let (first, last, done): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
    assert_eq!(done as usize, items, "not all drained");
    items as f64 / ((last - first).max(1) as f64 / 1e3)
}

fn rate_sqlite(db: &Path, items: usize) -> f64 {
    let c = rusqlite::Connection::open(db).unwrap();
    let (first, last, done): (i64, i64, i64) = c
        .query_row(
            "SELECT (SELECT min(at) FROM events WHERE kind = 'locked'), \
             (SELECT max(at) FROM events WHERE kind = 'completed'), \
             (SELECT count(*) FROM items WHERE state = 'done')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(done as usize, items, "not all drained");
    items as f64 / ((last - first).max(1) as f64 / 1e3)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub(super) fn sec_work(cfg: &Config, dir: &Path, rep: &mut Report) {
    let items: usize = env_num("CL_BENCH_WORK_ITEMS", 600);
    let runs: usize = env_num("CL_BENCH_WORK_RUNS", 2);
    let workers: Vec<usize> = std::env::var("CL_BENCH_WORK_WORKERS")
        .unwrap_or_else(|_| "1,8,32".into())
        .split(',')
        .map(|s| s.trim().parse().expect("CL_BENCH_WORK_WORKERS: numbers"))
        .collect();
    println!(
        "\n== work: `caseload work --exec true` vs the raw claim loop, {items} items per run, \
         median of {runs} runs =="
    );
    let pg = std::env::var("CASELOAD_TEST_PG")
        .ok()
        .filter(|u| !u.trim().is_empty());
    for &n in &workers {
        // SQLite: a fresh copy of a file with `items` open items for each run and side.
        let mut r = [Vec::new(), Vec::new()];
        for _ in 0..runs {
            for (k, side) in ["caseload", "raw"].iter().enumerate() {
                let db = dir.join(format!("work-{side}-{n}.db"));
                filled_copy(cfg, items, items, &db);
                match *side {
                    "caseload" => run_work(&db.display().to_string(), n, items, dir),
                    _ => {
                        let rs = run_workers("raw", &db, n, "drain", "0");
                        assert!(rs.iter().all(|w| w.other == 0), "raw errors");
                    }
                }
                r[k].push(rate_sqlite(&db, items));
            }
        }
        println!(
            "  SQLite, {n} worker(s): work runs {:.0?}, raw runs {:.0?} items/s; load average {}",
            r[0],
            r[1],
            loadavg()
        );
        let (w, raw) = (median(&mut r[0]), median(&mut r[1]));
        rep.add(
            "work",
            format!("SQLite items/s, {n} worker(s)"),
            format!("{w:.0}"),
            format!("{raw:.0}"),
            format!("{:.2}", w / raw),
            "(reported)",
            "-",
        );
        let Some(base) = &pg else { continue };
        let mut r = [Vec::new(), Vec::new()];
        for _ in 0..runs {
            for (k, side) in ["caseload", "raw"].iter().enumerate() {
                let (schema, url) = pg_fresh_schema(base, items);
                match *side {
                    "caseload" => run_work(&url, n, items, dir),
                    _ => {
                        let rs = run_workers("pgrawn", Path::new(&url), n, "drain", "0");
                        assert!(rs.iter().all(|w| w.other == 0), "raw errors");
                    }
                }
                r[k].push(rate_pg(&url, items));
                pg_drop_schema(base, &schema);
            }
        }
        println!(
            "  PostgreSQL, {n} worker(s): work runs {:.0?}, raw runs {:.0?} items/s; load \
             average {}",
            r[0],
            r[1],
            loadavg()
        );
        let (w, raw) = (median(&mut r[0]), median(&mut r[1]));
        let (target, met) = match n {
            8 => ("≥0.5× raw", yes(w / raw >= 0.5)),
            _ => ("(reported)", "-".into()),
        };
        rep.add(
            "work",
            format!("PostgreSQL items/s, {n} worker(s)"),
            format!("{w:.0}"),
            format!("{raw:.0}"),
            format!("{:.2}", w / raw),
            target,
            met,
        );
    }
    match &pg {
        Some(base) => round_trips(base, rep),
        None => println!("  PostgreSQL: skipped (set CASELOAD_TEST_PG to a PostgreSQL URL)"),
    }
}

/// Round trips of one `take_next` and one `complete` through `PgStore`, direct, warm (the
/// fifth of each, so statements prepared once are prepared).
fn round_trips(base: &str, rep: &mut Report) {
    let (schema, url) = pg_fresh_schema(base, 20);
    let wire = Wire::start(&host_port(&url));
    let mut s = PgStore::open(
        &wire.url(&url),
        Actor::new("bench", "bench"),
        &PgOptions::default(),
    )
    .unwrap();
    let (mut claim, mut complete, mut next) = (0, 0, 0);
    for _ in 0..5 {
        wire.take();
        let item = s.take_next(&TakeNext::default()).unwrap();
        claim = wire.take().round_trips;
        s.complete(item.id, item.lock_token, Some("ok")).unwrap();
        complete = wire.take().round_trips;
    }
    let mut held = s.take_next(&TakeNext::default()).unwrap();
    for _ in 0..3 {
        wire.take();
        let done = s
            .complete_and_next(held.id, held.lock_token, Some("ok"), &TakeNext::default())
            .unwrap();
        next = wire.take().round_trips;
        held = done.next.unwrap();
    }
    drop(s);
    pg_drop_schema(base, &schema);
    println!(
        "  PostgreSQL round trips, direct: take_next {claim}, complete {complete}, \
         complete-and-next {next} (the change counter's bump rides in COMMIT's round trip)"
    );
    for (what, n) in [("claim (take_next)", claim), ("complete", complete)] {
        rep.add(
            "work",
            format!("PostgreSQL round trips per {what}"),
            n.to_string(),
            "-",
            "-",
            "≤ 4",
            yes(n <= 4),
        );
    }
    rep.add(
        "work",
        "PostgreSQL round trips per complete-and-next",
        next.to_string(),
        "-",
        "-",
        "(reported)",
        "-",
    );
}
