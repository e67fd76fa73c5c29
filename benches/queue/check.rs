//! Section `check` of the engine benchmark: `caseload check` and `check --quick` on big
//! histories against SQLite's own `PRAGMA integrity_check` of the same file, in the same
//! run.
//!
//! The files are the `figures` section's histories (`queue/figures.rs`: N items, 5 events
//! each, their holds and day summary; cached), at each size of `CL_BENCH_CHECK_SIZES`
//! [100000,300000,1000000]. Per size, after one read of the whole file (so that no side
//! pays for a cold page cache), `CL_BENCH_CHECK_RUNS` [1] rounds of: `PRAGMA
//! integrity_check` on a plain rusqlite connection, `caseload --db F check` and
//! `caseload --db F check --quick` (the release binary, as a user runs it; each must say
//! "ok"), and `PRAGMA quick_check` for reference. Medians are reported.
//!
//! PostgreSQL (when `CASELOAD_TEST_PG` is set), at the sizes of `CL_BENCH_CHECK_PG_SIZES`
//! [100000,1000000]: the same history built in a schema of its own by SQL
//! (`generate_series`, the figures' triggers off for the load, then the holds and the day
//! summary filled as the migrations fill them; the schema is kept between runs), and
//! `caseload check` / `check --quick` against an amcheck-free equivalent of SQLite's
//! check: one read of every row of every table of the schema (`COPY … TO STDOUT`,
//! discarded), what a `pg_dump` of the data costs; and that read plus one read of every
//! page of every index (`pg_read_binary_file` of its file), which is what SQLite's
//! `integrity_check` reads (every table and every index), without its comparisons.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use rusqlite::Connection;

use super::{
    Config, PgOptions, PgStore, Report, actor, env_num, filled_copy_of, loadavg, pg_schema_url, yes,
};

const CASELOAD: &str = env!("CARGO_BIN_EXE_caseload");

fn pragma(db: &Path, which: &str) -> f64 {
    let c = Connection::open(db).unwrap();
    let t = Instant::now();
    let ok: String = c
        .query_row(&format!("PRAGMA {which}"), [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok", "{which}");
    t.elapsed().as_secs_f64()
}

fn caseload_check(db: &Path, quick: bool) -> f64 {
    let mut cmd = Command::new(CASELOAD);
    cmd.arg("--db").arg(db).arg("check");
    cmd.env_remove("CASELOAD_DB");
    if quick {
        cmd.arg("--quick");
    }
    if db.parent().is_some_and(|d| d.exists()) {
        cmd.env("HOME", db.parent().unwrap());
    }
    let t = Instant::now();
    let out = cmd.output().unwrap();
    let s = t.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "check{}: {}{}",
        if quick { " --quick" } else { "" },
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    s
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub(super) fn sec_check(cfg: &Config, dir: &Path, rep: &mut Report) {
    let sizes: Vec<usize> = std::env::var("CL_BENCH_CHECK_SIZES")
        .unwrap_or_else(|_| "100000,300000,1000000".into())
        .split(',')
        .map(|s| {
            s.trim()
                .replace('_', "")
                .parse()
                .expect("CL_BENCH_CHECK_SIZES")
        })
        .collect();
    let runs: usize = env_num("CL_BENCH_CHECK_RUNS", 1);
    let days: i64 = env_num("CL_BENCH_FIG_DAYS", 365);
    println!(
        "\n== check: caseload check against PRAGMA integrity_check, {runs} run(s) per size =="
    );
    for n in sizes {
        let db = dir.join(format!("check-{n}.db"));
        filled_copy_of(cfg, &format!("figures-{n}-{days}d-v2.db"), &db, |p| {
            super::figures::build(p, n, days)
        });
        // Once through the whole file: every side finds it in the page cache alike.
        let _ = std::fs::read(&db).map(|b| b.len());
        let mut t: [Vec<f64>; 4] = Default::default();
        for _ in 0..runs {
            t[0].push(pragma(&db, "integrity_check"));
            t[1].push(caseload_check(&db, false));
            t[2].push(caseload_check(&db, true));
            t[3].push(pragma(&db, "quick_check"));
        }
        let m: Vec<f64> = t.iter_mut().map(|v| median(v)).collect();
        println!(
            "  {n} items, {} events: integrity_check {:.1} s, check {:.1} s, check --quick \
             {:.1} s, quick_check {:.1} s; load average {}",
            n * 5,
            m[0],
            m[1],
            m[2],
            m[3],
            loadavg()
        );
        let ratio = m[1] / m[0];
        rep.add(
            "11 check",
            format!(
                "check, {n} items / {} events (s; raw: integrity_check)",
                n * 5
            ),
            format!("{:.1}", m[1]),
            format!("{:.1}", m[0]),
            format!("{ratio:.2}"),
            "≤2× integrity_check",
            yes(ratio <= 2.0),
        );
        rep.add(
            "11 check",
            format!("check --quick, {n} items (s; raw: quick_check)"),
            format!("{:.1}", m[2]),
            format!("{:.1}", m[3]),
            format!("{:.2}", m[2] / m[3]),
            "≤30 s",
            yes(m[2] <= 30.0),
        );
        let _ = std::fs::remove_file(&db);
        let _ = std::fs::remove_file(format!("{}-wal", db.display()));
        let _ = std::fs::remove_file(format!("{}-shm", db.display()));
    }
    sec_check_pg(rep);
}

/// The figures' history of `n` items in a PostgreSQL schema of its own (built once, kept):
/// its URL.
fn pg_history(base: &str, n: usize, days: i64) -> String {
    let schema = format!("bench_hist_{n}_{days}d_v2");
    let url = pg_schema_url(base, &schema);
    let mut admin = postgres::Client::connect(base, postgres::NoTls).expect("connect");
    let built = admin
        .query_opt(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = $1 \
             AND table_name = 'bench_built'",
            &[&schema],
        )
        .unwrap()
        .is_some();
    if built {
        return url;
    }
    let t = Instant::now();
    admin
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
        ))
        .unwrap();
    drop(PgStore::open(&url, actor("bench"), &PgOptions::default()).expect("create schema"));
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let now = super::now_ms();
    let start = now - days * 86_400_000;
    let step = days * 86_400_000 / n as i64;
    let item = "i AS id, (ARRAY['default', 'billing', 'returns'])[(i % 3)::int + 1] AS queue, \
         'p' || lpad((i % 20)::text, 2, '0') AS who, \
         'p' || lpad(((i + 7) % 20)::text, 2, '0') AS other, \
         {start} + i * {step} AS created, \
         {start} + i * {step} + (i * 104729 % 90) * 60000 AS taken, \
         (2 + (i * 7919 % 39)) * 60000 AS handle";
    let item = item
        .replace("{start}", &start.to_string())
        .replace("{step}", &step.to_string());
    let events = [
        "(i.id, 1, i.created, 'producer', 'created', '{}')",
        "(i.id, 2, i.taken, i.who, 'locked', '{\"token\":1}')",
        "(i.id, 3, i.taken + i.handle / 3, CASE WHEN i.id % 50 = 0 THEN i.other ELSE i.who END, \
         CASE WHEN i.id % 50 = 0 THEN 'taken_over' WHEN i.id % 25 = 0 THEN 'released' \
         ELSE 'noted' END, CASE WHEN i.id % 50 = 0 THEN json_build_object('from', i.who, \
         'token', 2)::text ELSE '{\"token\":1}' END)",
        "(i.id, 4, i.taken + i.handle / 2, CASE WHEN i.id % 50 = 0 THEN i.other ELSE i.who END, \
         CASE WHEN i.id % 50 = 0 THEN 'renewed' WHEN i.id % 25 = 0 THEN 'locked' \
         ELSE 'renewed' END, '{\"token\":2}')",
        "(i.id, 5, i.taken + i.handle, CASE WHEN i.id % 50 = 0 THEN i.other ELSE i.who END, \
         'completed', '{\"token\":2,\"result\":null}')",
    ];
    let fill_days = include_str!("../../src/store/postgres/migrations/0008_figure_days.sql");
    let fill_days = &fill_days[fill_days
        .find("-- Filled from the holds already kept.")
        .unwrap()..];
    // The queues' kept totals, as the step that added them filled them from the holds
    // (their trigger is off for the load too).
    let totals = include_str!("../../src/store/postgres/migrations/0016_queue_totals.sql");
    let totals = &totals[totals
        .find("-- Filled from the holds already kept.")
        .unwrap()..];
    let totals = &totals[..totals.find("-- The held locks by queue").unwrap()];
    c.batch_execute(&format!(
        "BEGIN; \
         ALTER TABLE items DISABLE TRIGGER USER; ALTER TABLE events DISABLE TRIGGER USER; \
         ALTER TABLE holds DISABLE TRIGGER USER; \
         INSERT INTO queues (name) VALUES ('default'), ('billing'), ('returns') \
         ON CONFLICT (name) DO NOTHING; \
         CREATE TEMP TABLE g AS SELECT {item} FROM generate_series(1::bigint, {n}) i; \
         INSERT INTO items (id, queue, title, state, lock_token, due_at, created_at, created_by, \
         finished_at, finished_by) SELECT id, queue, 'Request ' || id, 'done', 2, \
         CASE WHEN id % 4 = 0 THEN created + 3600000 END, created, 'producer', taken + handle, \
         CASE WHEN id % 50 = 0 THEN other ELSE who END FROM g; \
         INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
         SELECT e.item_id, e.at, e.actor, 'bench', e.kind, e.detail::json FROM g i \
         CROSS JOIN LATERAL (VALUES {}) AS e(item_id, seq, at, actor, kind, detail) \
         ORDER BY e.item_id, e.seq; \
         INSERT INTO item_counts (queue, state, shard, n) \
         SELECT queue, state, 0, count(*) FROM items GROUP BY queue, state \
         ON CONFLICT (queue, state, shard) DO UPDATE SET n = excluded.n; \
         INSERT INTO holds ({cols}) SELECT {cols} FROM ({expected}) x; \
         {fill_days} \
         {totals} \
         ALTER TABLE items ENABLE TRIGGER USER; ALTER TABLE events ENABLE TRIGGER USER; \
         ALTER TABLE holds ENABLE TRIGGER USER; \
         SELECT setval(pg_get_serial_sequence('items', 'id'), {n}); \
         CREATE TABLE bench_built (at bigint); COMMIT",
        events.join(", "),
        cols = caseload::store::sql::HOLDS_COLS,
        expected = caseload::store::sql::EXPECTED_HOLDS,
    ))
    .unwrap();
    // On its own: VACUUM runs in no transaction block (a multi-statement batch is one).
    c.batch_execute("VACUUM ANALYZE").unwrap();
    eprintln!(
        "  (built the PostgreSQL history of {n} items in {:.1} s)",
        t.elapsed().as_secs_f64()
    );
    url
}

/// One read of every row of every table of the URL's schema (`COPY … TO STDOUT`,
/// discarded): what reading the whole database once costs.
fn pg_read_all(url: &str) -> f64 {
    use std::io::Read;
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let tables: Vec<String> = c
        .query(
            "SELECT quote_ident(table_name) FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let t = Instant::now();
    let mut buf = vec![0u8; 1 << 16];
    for table in tables {
        let mut r = c.copy_out(&format!("COPY {table} TO STDOUT")).unwrap();
        while r.read(&mut buf).unwrap() > 0 {}
    }
    t.elapsed().as_secs_f64()
}

/// One read of every page of every index of the URL's schema (`pg_read_binary_file` of
/// each index's file, counted on the server): with [`pg_read_all`], what SQLite's
/// `integrity_check` reads (every table and every index), without its comparisons.
fn pg_read_indexes(url: &str) -> f64 {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let indexes: Vec<String> = c
        .query(
            "SELECT c.oid::regclass::text FROM pg_index i \
             JOIN pg_class c ON c.oid = i.indexrelid \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = current_schema()",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let t = Instant::now();
    for index in indexes {
        let _: i32 = c
            .query_one(
                "SELECT length(pg_read_binary_file(pg_relation_filepath($1::text::regclass)))",
                &[&index],
            )
            .unwrap()
            .get(0);
    }
    t.elapsed().as_secs_f64()
}

/// The PostgreSQL figures (see the module's comment).
fn sec_check_pg(rep: &mut Report) {
    let Some(base) = std::env::var("CASELOAD_TEST_PG")
        .ok()
        .filter(|u| !u.trim().is_empty())
    else {
        println!("  PostgreSQL skipped: CASELOAD_TEST_PG is not set");
        return;
    };
    let sizes: Vec<usize> = std::env::var("CL_BENCH_CHECK_PG_SIZES")
        .unwrap_or_else(|_| "100000,1000000".into())
        .split(',')
        .map(|s| {
            s.trim()
                .replace('_', "")
                .parse()
                .expect("CL_BENCH_CHECK_PG_SIZES")
        })
        .collect();
    let runs: usize = env_num("CL_BENCH_CHECK_RUNS", 1);
    let days: i64 = env_num("CL_BENCH_FIG_DAYS", 365);
    for n in sizes {
        let url = pg_history(&base, n, days);
        let db = Path::new(&url);
        pg_read_all(&url);
        pg_read_indexes(&url);
        let mut t: [Vec<f64>; 4] = Default::default();
        for _ in 0..runs {
            t[0].push(pg_read_all(&url));
            t[1].push(caseload_check(db, false));
            t[2].push(caseload_check(db, true));
            t[3].push(pg_read_indexes(&url));
        }
        let m: Vec<f64> = t.iter_mut().map(|v| median(v)).collect();
        println!(
            "  PostgreSQL, {n} items: one read of every row {:.1} s, of every index page \
             {:.1} s, check {:.1} s, check --quick {:.1} s; load average {}",
            m[0],
            m[3],
            m[1],
            m[2],
            loadavg()
        );
        let both = m[0] + m[3];
        rep.add(
            "11 check",
            format!(
                "PostgreSQL check, {n} items (s; raw: every row and every index page read once)"
            ),
            format!("{:.1}", m[1]),
            format!("{both:.1}"),
            format!("{:.2}", m[1] / both),
            "≤2× the reads",
            yes(m[1] <= 2.0 * both),
        );
        rep.add(
            "11 check",
            format!("PostgreSQL check, {n} items (s; raw: one read of every row)"),
            format!("{:.1}", m[1]),
            format!("{:.1}", m[0]),
            format!("{:.2}", m[1] / m[0]),
            "≤2× the read",
            yes(m[1] <= 2.0 * m[0]),
        );
        rep.add(
            "11 check",
            format!("PostgreSQL check --quick, {n} items (s)"),
            format!("{:.1}", m[2]),
            format!("{:.1}", m[0]),
            format!("{:.2}", m[2] / m[0]),
            "≤30 s",
            yes(m[2] <= 30.0),
        );
    }
}
