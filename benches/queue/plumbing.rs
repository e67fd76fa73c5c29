//! Sections `metrics` and `follow` of the engine benchmark: what plugging caseload into a
//! shop costs.
//!
//! `metrics`: `Reads::metrics` (what `caseload metrics` prints) at 1,000,000 items, on
//! SQLite (a copy of the benchmarks' 1M-item file) and PostgreSQL (a schema of 1M items,
//! `bench_metrics_1m`, built once and kept for re-runs, when `CASELOAD_TEST_PG` is set;
//! the figures also check its due counts against a direct count); each with 10% of the
//! items due, 2,000 held
//! locks, and a year of figures (365 days × 3 queues × 20 people × 2 chunks of the day
//! summary, the size a million finishes make, and the queues' kept totals: one row per
//! queue on SQLite, all 64 shards of each queue on PostgreSQL). Against a raw baseline in
//! the same run:
//! one `count(*)` of the open items, what a naive exporter would do per scrape. Median
//! and worst of `CL_BENCH_METRICS_RUNS` [20] runs; the target is ≤ 50 ms.
//!
//! `follow`: `caseload events --follow` (the release binary) while this process takes
//! items at random intervals (20–80 ms apart, `CL_BENCH_FOLLOW_EVENTS` [200] events):
//! the time from a write's commit returning to its line being read from the follower's
//! pipe, p50 and p99, on SQLite and PostgreSQL.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use caseload::store::sqlite::{OpenOptions, SqliteStore};
use caseload::store::{Reads, Store};

use super::{Config, PgOptions, PgStore, Report, actor, env_num, loadavg, yes};

const CASELOAD: &str = env!("CARGO_BIN_EXE_caseload");

/// The day summary a year of a million finishes leaves: `$days` × 3 queues × 20 people ×
/// 2 chunks, each chunk's finishes ~700 bytes. (`{series}` is the dialect's 0..n rows.)
fn figure_days_sql(series: &str, pad: &str) -> String {
    format!(
        "INSERT INTO figure_days (day, queue, holder, chunk, holds, completed, failed, skipped, \
         released, lost, held_ms, finishes) \
         SELECT CAST(g / 120 AS BIGINT) * 86400000, \
                CASE g % 3 WHEN 0 THEN 'default' WHEN 1 THEN 'billing' ELSE 'returns' END, \
                'p' || ((g / 3) % 20), (g / 60) % 2, 25, 23, 1, 1, 0, 0, 25 * 600000, {pad} \
         FROM {series}"
    )
}

/// The queues' kept totals of a million finishes, per queue (`{shard}`: PostgreSQL's
/// shard column and its 64 shards).
fn totals_sql(shard: &str, shards: &str) -> String {
    format!(
        "INSERT INTO queue_totals SELECT name, {shard} 1000000, 950000, 50000, \
         600000000000 FROM queues{shards}"
    )
}

/// The PostgreSQL server of `CASELOAD_TEST_PG`, or `None` (said) when unset.
fn pg_base() -> Option<String> {
    let base = std::env::var("CASELOAD_TEST_PG")
        .ok()
        .filter(|u| !u.is_empty());
    if base.is_none() {
        println!("  (PostgreSQL skipped: CASELOAD_TEST_PG is not set)");
    }
    base
}

fn median_and_worst(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[v.len() - 1])
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

/// Times `metrics` and the raw count, alternating; adds the rows.
fn time_metrics(
    rep: &mut Report,
    label: &str,
    s: &mut dyn Store,
    mut raw: impl FnMut() -> i64,
) -> f64 {
    let runs: usize = env_num("CL_BENCH_METRICS_RUNS", 20);
    let m = s.metrics().unwrap();
    let open: u64 = m.queues.iter().map(|q| q.open).sum();
    assert!(open >= 900_000, "{label}: {open} open items");
    assert_eq!(raw() as u64, open, "{label}: the raw count agrees");
    assert!(
        m.queues.iter().all(|q| q.completed > 0 && q.held > 0),
        "{label}: the totals and the locks are read: {:?}",
        m.queues
    );
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let t = Instant::now();
        std::hint::black_box(s.metrics().unwrap());
        ours.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        std::hint::black_box(raw());
        theirs.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let (med, worst) = median_and_worst(&mut ours);
    let (raw_med, _) = median_and_worst(&mut theirs);
    rep.add(
        "metrics",
        format!(
            "{label}: metrics at 1M items, median (worst) ms (load {})",
            loadavg()
        ),
        format!("{med:.1} ({worst:.1})"),
        format!("{raw_med:.1}"),
        format!("{:.2}", med / raw_med),
        "≤ 50 ms",
        yes(worst <= 50.0),
    );
    med
}

pub(super) fn sec_metrics(_cfg: &Config, dir: &Path, rep: &mut Report) {
    println!(
        "\n== metrics: caseload metrics at 1M items against one count(*) of the open items \
         (load {}) ==",
        loadavg()
    );
    let db = dir.join("metrics-1m.db");
    let base = crate::common::million_item_db();
    {
        // A consistent copy of the shared file, then the extras on the copy only.
        let c = rusqlite::Connection::open(&base).unwrap();
        c.execute("VACUUM INTO ?1", [db.to_str().unwrap()]).unwrap();
    }
    // Brought to this schema first (the cached file may be older).
    drop(SqliteStore::open(&db, actor("boss"), &OpenOptions::default()).unwrap());
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(&format!(
        "BEGIN; \
         UPDATE items SET due_at = created_at + (id % 72) * 3600000 - 24 * 3600000 \
         WHERE id % 10 = 0; \
         UPDATE items SET lock_user = 'p' || (id % 50), lock_time = created_at, \
         lock_expires_at = created_at + 1800000 \
         WHERE id % 500 = 0; \
         {}; {}; COMMIT; ANALYZE",
        figure_days_sql(
            "(WITH RECURSIVE s(g) AS (SELECT 0 UNION ALL SELECT g + 1 FROM s WHERE g < 365 * 120 - 1) \
             SELECT g FROM s)",
            "substr(replace(hex(zeroblob(350)), '0', 'c'), 1, 700)"
        ),
        totals_sql("", "")
    ))
    .unwrap();
    let mut s = SqliteStore::open(&db, actor("boss"), &OpenOptions::default()).unwrap();
    let raw_conn = rusqlite::Connection::open(&db).unwrap();
    time_metrics(rep, "SQLite", &mut s, || {
        raw_conn
            .query_row("SELECT count(*) FROM items WHERE state = 'open'", [], |r| {
                r.get(0)
            })
            .unwrap()
    });
    drop(s);
    let Some(base) = pg_base() else {
        return;
    };
    let url = pg_metrics_schema(&base);
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    // The counts are index-only scans when the pages are all-visible (autovacuum's work);
    // a transaction left open elsewhere on the server keeps VACUUM from marking them, and
    // then every count reads the table: said here, as it changes the figure tenfold.
    let r = c
        .query_one(
            "SELECT relallvisible::bigint, relpages::bigint FROM pg_class \
             WHERE oid = 'items'::regclass",
            &[],
        )
        .unwrap();
    let (visible, pages): (i64, i64) = (r.get(0), r.get(1));
    println!("  PostgreSQL: {visible} of {pages} pages of items all-visible");
    let mut s = PgStore::open(&url, actor("boss"), &PgOptions::default()).unwrap();
    // The due figures (kept counts per hour plus the edges) agree with a direct count.
    let m = s.metrics().unwrap();
    for q in &m.queues {
        let r = c
            .query_one(
                "SELECT count(*) FILTER (WHERE due_at < $2), \
                 count(*) FILTER (WHERE due_at >= $2 AND due_at < $2 + 86400000) \
                 FROM items WHERE queue = $1 AND state = 'open'",
                &[&q.queue, &m.at],
            )
            .unwrap();
        let (overdue, soon): (i64, i64) = (r.get(0), r.get(1));
        assert_eq!(
            (q.overdue, q.due_soon),
            (overdue as u64, soon as u64),
            "{}",
            q.queue
        );
    }
    time_metrics(rep, "PostgreSQL", &mut s, || {
        c.query_one("SELECT count(*) FROM items WHERE state = 'open'", &[])
            .unwrap()
            .get(0)
    });
    drop(s);
}

/// The PostgreSQL schema of the metrics section, `bench_metrics_1m` in the database of
/// `CASELOAD_TEST_PG`: built once and kept (a table `bench_built` marks it finished), so
/// that a re-run on a quiet machine measures without rebuilding; drop the schema to build
/// it again. 1M open items (the benches' fresh schema), 10% due over ±48 h, 2,000 held
/// locks, a year of the day summary and the totals' 64 shards per queue. The due times
/// are set with the triggers off (a replica's session: a million-row UPDATE through the
/// due counts' row trigger walks each counter row's versions) and the due counts filled
/// as migration 26 fills them.
fn pg_metrics_schema(base: &str) -> String {
    const SCHEMA: &str = "bench_metrics_1m";
    let url = super::pg_schema_url(base, SCHEMA);
    let mut admin = postgres::Client::connect(base, postgres::NoTls).unwrap();
    let built = admin
        .query_opt(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = $1 \
             AND table_name = 'bench_built'",
            &[&SCHEMA],
        )
        .unwrap()
        .is_some();
    if built {
        // Brought to this schema version (the kept one may be older).
        drop(PgStore::open(&url, actor("boss"), &PgOptions::default()).unwrap());
        return url;
    }
    let t = Instant::now();
    let url = super::pg_filled_schema(base, SCHEMA, 1_000_000);
    let fill_due = include_str!("../../src/store/postgres/migrations/0026_due_hours.sql");
    let fill_due = &fill_due[fill_due
        .find("-- Filled from the items already kept.")
        .unwrap()..];
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    c.batch_execute(&format!(
        "BEGIN; \
         SET LOCAL session_replication_role = replica; \
         UPDATE items SET due_at = created_at + (id % 72) * 3600000 - 24 * 3600000 \
         WHERE id % 10 = 0; \
         {fill_due} \
         SET LOCAL session_replication_role = origin; \
         UPDATE items SET lock_user = 'p' || (id % 50), lock_time = created_at, \
         lock_expires_at = created_at + 1800000 \
         WHERE id % 500 = 0; \
         {}; {}; CREATE TABLE bench_built (at bigint); COMMIT",
        figure_days_sql("generate_series(0, 365 * 120 - 1) g", "repeat('c', 700)"),
        totals_sql("shard,", ", generate_series(0, 63) shard")
    ))
    .unwrap();
    // On its own: VACUUM cannot run in the implicit transaction of a multi-statement query.
    c.batch_execute("VACUUM ANALYZE").unwrap();
    println!(
        "  (built the PostgreSQL schema {SCHEMA} in {:.1} s; kept for the next run)",
        t.elapsed().as_secs_f64()
    );
    url
}

/// Latencies (ms) from a take's commit to the follower printing its `locked` line.
fn follow_latency(db: &str, s: &mut dyn Store, n: usize) -> Vec<f64> {
    let ids: Vec<i64> = (0..n)
        .map(|i| {
            s.add_items(
                &[caseload::domain::NewItem::titled(&format!("follow {i}"))],
                caseload::store::AddOptions::creating_queues(),
            )
            .unwrap()[0]
                .id
        })
        .collect();
    let after = s.feed_mark().unwrap().last_id;
    let mut child = Command::new(CASELOAD)
        .args([
            "--db", db, "--user", "boss", "events", "--follow", "--kind", "locked",
        ])
        .args(["--since-id", &after.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let line = line.unwrap();
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            if tx
                .send((v["item"].as_i64().unwrap(), Instant::now()))
                .is_err()
            {
                break;
            }
        }
    });
    // Let the follower start and settle before the first write.
    std::thread::sleep(Duration::from_millis(500));
    let mut seed = 0x51_7cc1_b727_220au64;
    let mut lat = Vec::with_capacity(n);
    for id in ids {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_millis(20 + seed % 61));
        s.take(id).unwrap();
        let committed = Instant::now();
        let (item, seen) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(item, id, "lines in order");
        lat.push(seen.saturating_duration_since(committed).as_secs_f64() * 1000.0);
    }
    child.kill().unwrap();
    child.wait().unwrap();
    lat
}

fn report_latency(rep: &mut Report, label: &str, mut lat: Vec<f64>) {
    let p50 = percentile(&mut lat, 0.5);
    let p99 = percentile(&mut lat, 0.99);
    rep.add(
        "follow",
        format!(
            "{label}: event committed → line printed, p50 / p99 ms (load {})",
            loadavg()
        ),
        format!("{p50:.1} / {p99:.1}"),
        "—",
        "—",
        "p99 ≤ 100 ms",
        yes(p99 <= 100.0),
    );
}

pub(super) fn sec_follow(_cfg: &Config, dir: &Path, rep: &mut Report) {
    let n: usize = env_num("CL_BENCH_FOLLOW_EVENTS", 200);
    println!(
        "\n== follow: caseload events --follow, {n} takes 20–80 ms apart (load {}) ==",
        loadavg()
    );
    let db = dir.join("follow.db");
    let mut s = SqliteStore::open(&db, actor("boss"), &OpenOptions::default()).unwrap();
    let lat = follow_latency(db.to_str().unwrap(), &mut s, n);
    report_latency(rep, "SQLite", lat);
    let Some(base) = pg_base() else {
        return;
    };
    let (schema, url) = super::pg_fresh_schema(&base, 0);
    let mut s = PgStore::open(&url, actor("boss"), &PgOptions::default()).unwrap();
    let lat = follow_latency(&url, &mut s, n);
    report_latency(rep, "PostgreSQL", lat);
    drop(s);
    super::pg_drop_schema(&base, &schema);
}
