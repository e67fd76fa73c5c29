//! Section `pg` (issue 32 §4): search on PostgreSQL with and without pg_trgm's index, on
//! the same million items (the big file's text) in two schemas of one database, side by
//! side in the same run; and what the index costs `caseload import` and a claim+complete.
//!
//! ```text
//! CASELOAD_TEST_PG=postgres://postgres@127.0.0.1:5432/test cargo bench --bench search -- pg
//! ```
//!
//! The server must let the URL's role create a database (`caseload_bench_search`, kept,
//! with pg_trgm installed) whose schemas `s{n}_index` and `s{n}_scan` are built once and
//! kept (`CL_SEARCH_ITEMS` items; a million took 10 min on a quiet 2-core machine, most
//! of it the column and the GIN build; the count trigger is off while rows are copied).
//! Import: `CL_SEARCH_PG_IMPORT` [20000] rows into fresh schemas without the index and
//! with the indexer beside the import (schema 31: the index in `item_search`, the
//! command returns once every row is indexed, checked), and with
//! `CL_SEARCH_PG_PENDING_KB` the last with that `gin_pending_list_limit`; then
//! `CL_SEARCH_PG_CYCLES` [300] claim+complete on each. (Schema 27's index inside each
//! INSERT and schema 29's indexer beside the import are measured by the bench of those
//! versions: BENCHMARKS.md.)

use std::time::{Duration, Instant};

use caseload::domain::Actor;
use caseload::store::postgres::{PgOptions, PgStore};
use caseload::store::{ListFilter, Reads, StateFilter, Writes};

use super::{CASELOAD, body, env_num, import_csv, ms, pct, title};

const DB: &str = "caseload_bench_search";

/// The URL of database `name` on the server of `base`.
fn db_url(base: &str, name: &str) -> String {
    let (head, _) = base.split_once('?').unwrap_or((base, ""));
    let (server, _) = head.rsplit_once('/').unwrap();
    format!("{server}/{name}")
}

fn with_schema(url: &str, schema: &str) -> String {
    format!("{url}?options=-c%20search_path%3D{schema}")
}

fn admin(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls).unwrap()
}

/// The bench database, with pg_trgm.
fn database(base: &str) -> String {
    let mut c = admin(base);
    let _ = c.batch_execute(&format!("CREATE DATABASE {DB}"));
    let url = db_url(base, DB);
    admin(&url)
        .batch_execute("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public")
        .unwrap();
    url
}

/// A fresh caseload schema `schema` (dropped first); with the search index or without.
fn fresh_schema(url: &str, schema: &str, indexed: bool) -> String {
    let mut c = admin(url);
    c.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
    ))
    .unwrap();
    let su = with_schema(url, schema);
    drop(open(&su));
    if !indexed {
        admin(&su).batch_execute(NO_INDEX).unwrap();
    }
    su
}

/// A schema without the search index (as before pg_trgm was installed): searches scan.
const NO_INDEX: &str = "DROP FUNCTION caseload_search_row() CASCADE; \
    DROP INDEX item_search_trgm; TRUNCATE item_search, item_search_pending";

fn open(url: &str) -> PgStore {
    let opts = PgOptions {
        statement_timeout: Duration::from_secs(600),
        ..PgOptions::default()
    };
    PgStore::open(url, Actor::new("bench", "bench"), &opts).unwrap()
}

/// The schema of `n` items (the last tenth open), built once and kept: rows copied in
/// without the index, which is then built at once (as `caseload init` would).
fn big_schema(url: &str, n: usize, indexed: bool) -> String {
    let schema = format!("s{n}_{}", if indexed { "index" } else { "scan" });
    let su = with_schema(url, &schema);
    let have: Option<i64> = admin(url)
        .query_one(
            &format!(
                "SELECT CASE WHEN to_regclass('{schema}.bench_done') IS NULL THEN NULL \
                 ELSE 1 END::bigint"
            ),
            &[],
        )
        .unwrap()
        .get(0);
    if have.is_some() {
        return su;
    }
    let t = Instant::now();
    fresh_schema(url, &schema, false);
    let mut c = admin(&su);
    // The count trigger's row per insert would take most of the copy's time: off for the
    // copy, the counts written once after it.
    c.batch_execute(
        "INSERT INTO queues (name) VALUES ('default') ON CONFLICT DO NOTHING; \
         ALTER TABLE items DISABLE TRIGGER USER",
    )
    .unwrap();
    let base = chrono::Utc::now().timestamp_millis() - 30 * 86_400_000;
    let open_from = n - n / 10;
    {
        use std::io::Write;
        let mut w = c
            .copy_in(
                "COPY items (id, queue, title, body, priority, state, created_at, created_by, \
                 finished_at, finished_by) FROM STDIN",
            )
            .unwrap();
        for i in 1..=n {
            let created = base + i as i64 * 2;
            let done = i <= open_from;
            let prio = if i.is_multiple_of(10) { i % 3 } else { 0 };
            let fin = if done {
                format!("{}\tw0", created + 60_000)
            } else {
                "\\N\t\\N".into()
            };
            writeln!(
                w,
                "{i}\tdefault\t{}\t{}\t{prio}\t{}\t{created}\tproducer\t{fin}",
                title(i),
                body(i),
                if done { "done" } else { "open" }
            )
            .unwrap();
        }
        w.finish().unwrap();
    }
    c.batch_execute(
        "ALTER TABLE items ENABLE TRIGGER USER; DELETE FROM item_counts; \
         INSERT INTO item_counts (queue, state, shard, n) \
         SELECT queue, state, 0, count(*) FROM items GROUP BY 1, 2; \
         SELECT setval(pg_get_serial_sequence('items', 'id'), (SELECT max(id) FROM items))",
    )
    .unwrap();
    println!(
        "  {schema}: {n} items copied in {:.0} s",
        t.elapsed().as_secs_f64()
    );
    if indexed {
        let t = Instant::now();
        c.batch_execute("SET maintenance_work_mem = '512MB'; SELECT caseload_search_index()")
            .unwrap();
        println!(
            "  {schema}: search index built in {:.0} s (the column, then the GIN index)",
            t.elapsed().as_secs_f64()
        );
    }
    c.batch_execute("ANALYZE items; CREATE TABLE bench_done ()")
        .unwrap();
    su
}

/// The first screen's item ids and count.
fn first_screen(s: &mut PgStore, state: StateFilter, text: &str) -> (Vec<i64>, u64) {
    let f = ListFilter {
        state,
        text: Some(text.into()),
        limit: 200,
        ..ListFilter::default()
    };
    let ids = s.list(&f).unwrap().iter().map(|i| i.id).collect();
    (ids, s.count(&f).unwrap())
}

/// Median and max of `reps` runs of the first screen (list of 200 + capped count).
fn timed(
    s: &mut PgStore,
    state: StateFilter,
    q: &str,
    reps: usize,
) -> (Duration, Duration, (Vec<i64>, u64)) {
    let mut times = Vec::new();
    let mut got = (Vec::new(), 0);
    for _ in 0..reps {
        let t = Instant::now();
        got = first_screen(s, state, q);
        times.push(t.elapsed());
    }
    times.sort();
    (pct(&times, 0.5), *times.last().unwrap(), got)
}

pub(super) fn sec_pg() {
    let Ok(base) = std::env::var("CASELOAD_TEST_PG") else {
        println!("\n## pg: skipped (CASELOAD_TEST_PG is not set)\n");
        return;
    };
    let n = env_num("CL_SEARCH_ITEMS", 1_000_000);
    let reps = env_num("CL_SEARCH_REPS", 5);
    let url = database(&base);
    let idx_url = big_schema(&url, n, true);
    let scan_url = big_schema(&url, n, false);
    let mut idx = open(&idx_url);
    let mut scan = open(&scan_url);
    println!(
        "\n## pg: {n} items (10 % open), 1 KiB bodies; first screen = list of 200 + count \
         (capped); {reps} runs each (ms: p50 / max); load {}\n",
        super::loadavg()
    );
    println!(
        "| search | state | matches (count) | index p50 | index max | scan p50 | scan/index | target |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---|");
    let queries = [
        ("69525", "rare: 10 items", 50),
        ("69529", "a number in no item", 50),
        ("jose", "a name, 1 in 40", 0),
        ("nordl", "a company, 1 in 50", 0),
        ("refund müller", "two words", 0),
        ("ledger", "common", 100),
        ("zebra", "nothing", 50),
        ("er", "two characters", 0),
    ];
    for (q, what, target) in queries {
        for state in [StateFilter::Open, StateFilter::All] {
            let (p50, max, got) = timed(&mut idx, state, q, reps);
            let (sp50, _, sgot) = timed(&mut scan, state, q, reps.min(2));
            assert_eq!(got, sgot, "{q} {state:?}: the index and the scan agree");
            let verdict = match target {
                0 => "-".to_string(),
                t if p50 <= Duration::from_millis(t) => format!("≤{t} ms yes"),
                t => format!("≤{t} ms **NO**"),
            };
            println!(
                "| `{q}` ({what}) | {} | {} ({}) | {} | {} | {} | {:.1}x | {verdict} |",
                state.as_str(),
                got.0.len(),
                caseload::domain::search::count_text(got.1),
                ms(p50),
                ms(max),
                ms(sp50),
                sp50.as_secs_f64() / p50.as_secs_f64().max(1e-6),
            );
        }
    }
    drop((idx, scan));
    sec_pg_import(&url);
}

/// How an import schema keeps the search index.
#[derive(Clone, Copy, PartialEq)]
enum Indexing {
    /// No index.
    Without,
    /// Schema 30: rows left for the indexer beside the import, on a second connection;
    /// the command returns once every row is indexed (the bench checks none is left).
    Beside,
}

/// `caseload import` of the same rows into fresh schemas without the index and with the
/// indexer beside the import (schema 31), then claim+complete cycles on each.
fn sec_pg_import(url: &str) {
    let rows = env_num("CL_SEARCH_PG_IMPORT", 20_000);
    let cycles = env_num("CL_SEARCH_PG_CYCLES", 300);
    let csv = import_csv(rows);
    println!(
        "\n### pg import: {rows} rows by `caseload import`, then {cycles} claim+complete \
         (load {})\n",
        super::loadavg()
    );
    println!("| schema | import s | rows/s | claim+complete per s |");
    println!("|---|---:|---:|---:|");
    // GIN's pending list of new rows' trigrams at another size than the server's
    // (`CL_SEARCH_PG_PENDING_KB`, kB): a fourth schema with it (the indexer beside).
    let pending = std::env::var("CL_SEARCH_PG_PENDING_KB").ok();
    let mut variants = vec![(Indexing::Without, None), (Indexing::Beside, None)];
    if let Some(kb) = &pending {
        variants.push((Indexing::Beside, Some(kb.clone())));
    }
    let mut rates = Vec::new();
    for (how, pending) in variants {
        let name = match how {
            Indexing::Without => "imp_scan",
            _ => "imp_index",
        };
        let su = fresh_schema(url, name, how != Indexing::Without);
        if let Some(kb) = &pending {
            admin(&su)
                .batch_execute(&format!(
                    "ALTER INDEX item_search_trgm SET (gin_pending_list_limit = {kb})"
                ))
                .unwrap();
        }
        let args = vec!["--db", &su, "import", csv.to_str().unwrap()];
        let t = Instant::now();
        let out = std::process::Command::new(CASELOAD)
            .args(&args)
            .env("CASELOAD_USER", "bench")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let took = t.elapsed().as_secs_f64();
        if how != Indexing::Without {
            let waiting: i64 = admin(&su)
                .query_one("SELECT count(*) FROM item_search_pending", &[])
                .unwrap()
                .get(0);
            assert_eq!(waiting, 0, "every row indexed when the import returned");
        }
        let mut s = open(&su);
        let t = Instant::now();
        for _ in 0..cycles {
            let it = s.take_next(&Default::default()).unwrap();
            s.complete(it.id, it.lock_token, None).unwrap();
        }
        let cps = cycles as f64 / t.elapsed().as_secs_f64();
        let what = match (how, &pending) {
            (Indexing::Without, _) => "without".to_string(),
            (Indexing::Beside, None) => "with the index, indexer beside (schema 31)".to_string(),
            (Indexing::Beside, Some(kb)) => {
                format!("with the index, indexer beside, pending list {kb} kB")
            }
        };
        rates.push((what.clone(), rows as f64 / took, cps));
        println!(
            "| {what} | {took:.1} | {:.0} | {cps:.0} |",
            rows as f64 / took
        );
        drop(s);
        admin(url)
            .batch_execute(&format!("DROP SCHEMA {name} CASCADE"))
            .unwrap();
    }
    println!();
    for r in rates.iter().skip(1) {
        println!(
            "{}: import {:.2}x without (target ≥0.6x), claim+complete {:.2}x",
            r.0,
            r.1 / rates[0].1,
            r.2 / rates[0].2
        );
    }
    println!("(load {})", super::loadavg());
}
