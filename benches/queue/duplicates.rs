//! Section `dup` of the engine benchmark (issue 27 §3): `caseload similar` (what the
//! detail pane's "Possibly the same" box reads) at 1,000,000 items with two duplicate-key
//! fields, on SQLite (`dup-sqlite`: a copy of the benchmarks' 1M-item file) and PostgreSQL
//! (`dup-pg`, when `CASELOAD_TEST_PG` is set: a schema of 1M items, built once and kept
//! for the next run, see [`pg_schema`]).
//!
//! Every item of two queues (two thirds of the items) gets a VAT number shared by four
//! items of its queue and an e-mail shared by three (written raw); then both fields are
//! defined as keys of one of them (the keyed queue), which builds its keys: its time is
//! printed. The titles of the 1M files are nearly alike (`Item 12: check the thing for
//! customer 12`), so the title prefilter finds a full page for every item: the worst case
//! of the similarity step.
//!
//! The raw baseline, in the same run, is the floor of the key half: the item's row, its
//! keys, and one index lookup per key joined to the items for the queue, by hand. Median,
//! p99 and worst of `CL_BENCH_DUP_RUNS` [200] items; the target is p99 ≤ 50 ms. Then
//! claim and complete in the keyed queue against the same in the other one (same items,
//! same params, no fields), in alternating rounds (`claim_cost_with_keys`).

use std::path::Path;
use std::time::Instant;

use caseload::domain::duplicates::{DEFAULT_LIMIT, Dedupe};
use caseload::domain::queue_fields::{FieldChange, FieldType};
use caseload::store::similar::similar;
use caseload::store::sqlite::{OpenOptions, SqliteStore};
use caseload::store::{Store, Writes};

use caseload::store::{StoreError, TakeNext};

use super::{Config, PgOptions, PgStore, Report, actor, env_num, loadavg, ms, pct, yes};

fn key(kind: FieldType) -> FieldChange {
    FieldChange {
        kind: Some(kind),
        dedupe: Some(Some(Dedupe::Key)),
        ..FieldChange::default()
    }
}

/// Defines the two key fields of `queue` (building its keys, twice: once per field);
/// prints and returns how long it took (s).
fn define_keys(label: &str, s: &mut dyn Store, queue: &str) -> f64 {
    let t = Instant::now();
    s.define_field(queue, "vat", &key(FieldType::Text)).unwrap();
    s.define_field(queue, "email", &key(FieldType::Email))
        .unwrap();
    let took = t.elapsed().as_secs_f64();
    println!(
        "  {label}: two key fields defined on {queue} (its keys built) in {took:.1} s (load {})",
        loadavg()
    );
    took
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

/// Times `similar` and the raw lookups over `ids`, alternating; adds the rows.
fn time_similar(
    rep: &mut Report,
    label: &str,
    s: &mut dyn Store,
    ids: &[i64],
    mut raw: impl FnMut(i64) -> usize,
) {
    let first = similar(s, ids[0], DEFAULT_LIMIT).unwrap();
    assert!(
        first.candidates.iter().any(|c| !c.keys.is_empty()),
        "{label}: key matches found: {:?}",
        first.candidates
    );
    assert!(raw(ids[0]) > 0, "{label}: the raw lookups find them too");
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for &id in ids {
        let t = Instant::now();
        std::hint::black_box(similar(s, id, DEFAULT_LIMIT).unwrap());
        ours.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        std::hint::black_box(raw(id));
        theirs.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let (med, p99, worst) = (
        percentile(&mut ours, 0.5),
        percentile(&mut ours, 0.99),
        percentile(&mut ours, 1.0),
    );
    let raw_med = percentile(&mut theirs, 0.5);
    let raw_p99 = percentile(&mut theirs, 0.99);
    rep.add(
        "dup",
        format!(
            "{label}: similar at 1M, 2 keys, p50 / p99 (worst) ms (load {})",
            loadavg()
        ),
        format!("{med:.1} / {p99:.1} ({worst:.1})"),
        format!("{raw_med:.2} / {raw_p99:.2}"),
        format!("{:.1}", med / raw_med),
        "p99 ≤ 50 ms",
        yes(p99 <= 50.0),
    );
}

/// `n` ids spread over the items of the queue whose ids are `rest` modulo 3.
fn sample(n: usize, rest: i64) -> Vec<i64> {
    (0..n as i64)
        .map(|i| (i * 4_999 + 17) % 999_000 / 3 * 3 + rest)
        .map(|id| id.max(rest))
        .collect()
}

pub(super) fn sec_duplicates(cfg: &Config, dir: &Path, rep: &mut Report) {
    sec_dup_sqlite(cfg, dir, rep);
    sec_dup_pg(cfg, dir, rep);
}

/// The SQLite half: a copy of the 1M file, its `verification` queue keyed, `fulfilment`
/// given the same params without fields.
pub(super) fn sec_dup_sqlite(_cfg: &Config, dir: &Path, rep: &mut Report) {
    println!(
        "\n== dup (SQLite): caseload similar at 1M items with two duplicate keys against the \
         raw key lookups (load {}) ==",
        loadavg()
    );
    let runs: usize = env_num("CL_BENCH_DUP_RUNS", 200);
    let db = dir.join("dup-1m.db");
    let base = crate::common::million_item_db();
    {
        let c = rusqlite::Connection::open(&base).unwrap();
        c.execute("VACUUM INTO ?1", [db.to_str().unwrap()]).unwrap();
    }
    drop(SqliteStore::open(&db, actor("feeder"), &OpenOptions::default()).unwrap());
    let c = rusqlite::Connection::open(&db).unwrap();
    // The 1M file's queues go round by id: item k+1 is in queues[k % 3].
    c.execute_batch(
        "UPDATE items SET params = json_object('vat', 'DE ' || (id / 12), \
         'email', 'p' || (id / 9) || '@Example.com') \
         WHERE queue IN ('verification', 'fulfilment'); ANALYZE",
    )
    .unwrap();
    let mut s = SqliteStore::open(&db, actor("feeder"), &OpenOptions::default()).unwrap();
    let took = define_keys("SQLite", &mut s, "verification");
    rep.add(
        "dup",
        format!(
            "SQLite: two key fields defined on 333,333 items (s) (load {})",
            loadavg()
        ),
        format!("{took:.1}"),
        "",
        "",
        "",
        "",
    );
    // The search index as a TUI or `caseload import` leaves it (the 1M file is written
    // by the API, which leaves the index to them): without it every word of the title
    // prefilter is a scan of the queue, and a rare one (the item's number) reads it all.
    let t = Instant::now();
    let mut indexed = 0;
    loop {
        let k = s.index_search(50_000).unwrap();
        if k == 0 {
            break;
        }
        indexed += k;
    }
    println!(
        "  SQLite: {indexed} items indexed for search in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let mut look = c
        .prepare(
            "SELECT count(*) FROM (SELECT k.item_id FROM item_keys k JOIN items i \
             ON i.id = k.item_id WHERE k.field = ?1 AND k.key = ?2 AND i.queue = ?3 \
             AND k.item_id <> ?4 LIMIT 50)",
        )
        .unwrap();
    let mut keys_of = c
        .prepare("SELECT field, key FROM item_keys WHERE item_id = ?1")
        .unwrap();
    let mut row = c
        .prepare("SELECT queue, params FROM items WHERE id = ?1")
        .unwrap();
    let ids = sample(runs, 2);
    time_similar(rep, "SQLite", &mut s, &ids, |id| {
        let (queue, _params): (String, String) =
            row.query_row([id], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        let keys: Vec<(String, String)> = keys_of
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        keys.iter()
            .map(|(f, k)| {
                look.query_row(rusqlite::params![f, k, queue, id], |r| r.get::<_, i64>(0))
                    .unwrap() as usize
            })
            .sum()
    });
    drop(s);
    let fixer = rusqlite::Connection::open(&db).unwrap();
    fixer
        .busy_timeout(std::time::Duration::from_secs(10))
        .unwrap();
    let open = || -> Box<dyn Store> {
        Box::new(SqliteStore::open(&db, actor("w0"), &OpenOptions::default()).unwrap())
    };
    claim_cost_with_keys(
        rep,
        "SQLite",
        open,
        |ids| {
            fixer.execute_batch("BEGIN IMMEDIATE").unwrap();
            for id in ids {
                fixer
                    .execute(
                        "UPDATE items SET state = 'open', result = NULL, finished_at = NULL, \
                         finished_by = NULL WHERE id = ?1",
                        [id],
                    )
                    .unwrap();
            }
            fixer.execute_batch("COMMIT").unwrap();
        },
        ["verification", "fulfilment"],
    );
}

/// Marks a schema whose build finished (a half-built one is rebuilt).
const PG_READY: &str = "caseload dup bench v2: 1M items, billing keyed";

/// The PostgreSQL schema of the `dup` bench (`CL_BENCH_DUP_PG_SCHEMA` [bench_dup_1m]) in
/// `CASELOAD_TEST_PG`'s database: 1M open items (as `pg_fresh_schema` makes them), the
/// queues `billing` and `returns` given VAT numbers and e-mails, `billing`'s two key
/// fields defined (its 333,333 items keyed: the time is printed). Kept after the run and
/// used again as it is when its build had finished (`CL_BENCH_DUP_PG_FRESH=1` rebuilds
/// it); the measured claims leave it as they found it. The search index is there when the
/// database has `pg_trgm` (the README's step for a DBA) when the schema is built.
fn pg_schema(base: &str, rep: &mut Report) -> String {
    let schema = std::env::var("CL_BENCH_DUP_PG_SCHEMA").unwrap_or_else(|_| "bench_dup_1m".into());
    let url = super::pg_schema_url(base, &schema);
    let mut admin = postgres::Client::connect(base, postgres::NoTls).expect("connect");
    let said: Option<String> = admin
        .query_one(
            "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1 \
             UNION ALL SELECT NULL LIMIT 1",
            &[&schema],
        )
        .unwrap()
        .get(0);
    let fresh = std::env::var("CL_BENCH_DUP_PG_FRESH").is_ok_and(|v| v == "1");
    if said.as_deref() == Some(PG_READY) && !fresh {
        println!("  PostgreSQL: schema {schema} kept from an earlier run, used as it is");
        // Opening migrates it when the program's schema moved on.
        drop(PgStore::open(&url, actor("bench"), &PgOptions::default()).unwrap());
        return url;
    }
    let t = Instant::now();
    admin
        .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .unwrap();
    super::pg_filled_schema(base, &schema, 1_000_000);
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    c.batch_execute(
        "UPDATE items SET params = json_build_object('vat', 'DE ' || (id / 12), \
         'email', 'p' || (id / 9) || '@Example.com') WHERE queue IN ('billing', 'returns')",
    )
    .unwrap();
    // The two queues compared by the claim case alike in take order too: pg_fresh_schema
    // gives every tenth item priority g % 3 (billing 1, returns 2), so that a claim in
    // billing would first pass returns' 33,333 items of priority 2 on the index over all
    // queues the planner picks (635 ms, load 17): a cost of the queue's place in the
    // take order, not of its fields.
    c.batch_execute("UPDATE items SET priority = 1 WHERE queue = 'returns' AND priority = 2")
        .unwrap();
    c.batch_execute("VACUUM ANALYZE").unwrap();
    println!(
        "  PostgreSQL: schema {schema}, 1M items, built in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let mut s = PgStore::open(&url, actor("bench"), &PgOptions::default()).unwrap();
    let took = define_keys("PostgreSQL", &mut s, "billing");
    rep.add(
        "dup",
        format!(
            "PostgreSQL: two key fields defined on 333,333 items (s) (load {})",
            loadavg()
        ),
        format!("{took:.1}"),
        "",
        "",
        "",
        "",
    );
    c.batch_execute("VACUUM ANALYZE").unwrap();
    c.batch_execute(&format!("COMMENT ON SCHEMA {schema} IS '{PG_READY}'"))
        .unwrap();
    url
}

/// The PostgreSQL half (when `CASELOAD_TEST_PG` is set): on [`pg_schema`], `billing`
/// keyed, `returns` given the same params without fields.
pub(super) fn sec_dup_pg(_cfg: &Config, _dir: &Path, rep: &mut Report) {
    let Some(base) = std::env::var("CASELOAD_TEST_PG")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        println!("  (dup on PostgreSQL skipped: CASELOAD_TEST_PG is not set)");
        return;
    };
    println!(
        "\n== dup (PostgreSQL): caseload similar at 1M items with two duplicate keys against \
         the raw key lookups (load {}) ==",
        loadavg()
    );
    let runs: usize = env_num("CL_BENCH_DUP_RUNS", 200);
    let url = pg_schema(&base, rep);
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let search: bool = c
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_class WHERE relname = 'item_search_trgm' \
             AND relnamespace = current_schema()::regnamespace)",
            &[],
        )
        .unwrap()
        .get(0);
    let label = if search {
        "PostgreSQL, pg_trgm index"
    } else {
        "PostgreSQL, no pg_trgm"
    };
    let mut s = PgStore::open(&url, actor("bench"), &PgOptions::default()).unwrap();
    // A whole queue's keys rebuilt again (one key field off, then on: each a rebuild of
    // the queue's keys), as a supervisor's change of a key field does.
    let t = Instant::now();
    let off = FieldChange {
        dedupe: Some(None),
        ..FieldChange::default()
    };
    s.define_field("billing", "vat", &off).unwrap();
    let on = FieldChange {
        dedupe: Some(Some(Dedupe::Key)),
        ..FieldChange::default()
    };
    let t2 = Instant::now();
    s.define_field("billing", "vat", &on).unwrap();
    println!(
        "  PostgreSQL: billing's keys rebuilt twice (vat off, then on) in {:.1} s, the \
         second (333,333 items, 2 keys each) {:.1} s (load {})",
        t.elapsed().as_secs_f64(),
        t2.elapsed().as_secs_f64(),
        loadavg()
    );
    rep.add(
        "dup",
        format!(
            "PostgreSQL: a key field set on 333,333 items, 2 keys each (s) (load {})",
            loadavg()
        ),
        format!("{:.1}", t2.elapsed().as_secs_f64()),
        "",
        "",
        "",
        "",
    );
    c.batch_execute("VACUUM ANALYZE item_keys").unwrap();
    // pg_fresh_schema's item g is in queue g % 3: 'billing' is g % 3 = 1.
    let ids = sample(runs, 1);
    time_similar(rep, label, &mut s, &ids, |id| {
        let queue: String = c
            .query_one("SELECT queue FROM items WHERE id = $1", &[&id])
            .unwrap()
            .get(0);
        let keys = c
            .query(
                "SELECT field, key FROM item_keys WHERE item_id = $1",
                &[&id],
            )
            .unwrap();
        keys.iter()
            .map(|k| {
                let (f, key): (String, String) = (k.get(0), k.get(1));
                c.query(
                    "SELECT k.item_id FROM item_keys k JOIN items i ON i.id = k.item_id \
                     WHERE k.field = $1 AND k.key = $2 AND i.queue = $3 AND k.item_id <> $4 \
                     LIMIT 50",
                    &[&f, &key, &queue, &id],
                )
                .unwrap()
                .len()
            })
            .sum()
    });
    drop(s);
    let open = || -> Box<dyn Store> {
        Box::new(PgStore::open(&url, actor("w0"), &PgOptions::default()).unwrap())
    };
    claim_cost_with_keys(
        rep,
        "PostgreSQL",
        open,
        |ids| {
            c.execute(
                "UPDATE items SET state = 'open', result = NULL, finished_at = NULL, \
                 finished_by = NULL WHERE id = ANY($1)",
                &[&ids],
            )
            .unwrap();
        },
        ["billing", "returns"],
    );
}

/// One case of the claim comparison: take-next in `queue` then complete (its fields
/// checked, as `caseload complete` does), `k` times on a fresh connection after 10
/// untimed; every 50 the completed items are reopened (`reopen`, untimed) so the queue
/// stays as built. The claim's and the complete's latencies (µs).
fn claim_round(
    s: &mut dyn Store,
    queue: &str,
    k: usize,
    reopen: &mut dyn FnMut(&[i64]),
) -> (Vec<u64>, Vec<u64>) {
    let next = TakeNext {
        queue: Some(queue.to_string()),
        ..TakeNext::default()
    };
    let (mut claims, mut completes) = (Vec::with_capacity(k), Vec::with_capacity(k));
    let mut done = Vec::new();
    let mut warm = 10;
    while claims.len() < k {
        let t = Instant::now();
        let item = match s.take_next(&next) {
            Ok(item) => item,
            Err(StoreError::NothingToClaim(_)) => panic!("{queue}: ran dry"),
            Err(e) => panic!("{queue}: {e}"),
        };
        let claimed = t.elapsed().as_micros() as u64;
        let t = Instant::now();
        s.complete_with(item.id, item.lock_token, None, None)
            .unwrap();
        let completed = t.elapsed().as_micros() as u64;
        if warm > 0 {
            warm -= 1;
        } else {
            claims.push(claimed);
            completes.push(completed);
        }
        done.push(item.id);
        if done.len() >= 50 {
            reopen(&done);
            done.clear();
        }
    }
    reopen(&done);
    (claims, completes)
}

/// p50 and p99 (µs) of `v`.
fn p50_p99(v: &[u64]) -> (u64, u64) {
    let mut v = v.to_vec();
    v.sort_unstable();
    (pct(&v, 50.0), pct(&v, 99.0))
}

/// Claim then complete in `queues[0]` (two key fields, its items keyed) against the same
/// in `queues[1]` (the same params, no fields) of the same database, the same run:
/// `CL_BENCH_DUP_CLAIMS` [2000] claims per case per round, `CL_BENCH_DUP_ROUNDS` [4]
/// rounds, the order of the two cases swapped every round (AB BA AB BA). Prints each
/// round's p50 and p99 (claim, complete, their sum) so that the reader sees the
/// round-to-round spread beside the difference; "met" when the keyed queue's p50 and p99
/// of the whole run are within the spread of the other's rounds (at most its slowest
/// round's).
fn claim_cost_with_keys(
    rep: &mut Report,
    label: &str,
    open: impl Fn() -> Box<dyn Store>,
    mut reopen: impl FnMut(&[i64]),
    queues: [&str; 2],
) {
    let k: usize = env_num("CL_BENCH_DUP_CLAIMS", 2000);
    let rounds: usize = env_num("CL_BENCH_DUP_ROUNDS", 4);
    // [case][round]: (claims, completes); case 0 keyed.
    let mut runs: [Vec<(Vec<u64>, Vec<u64>)>; 2] = [Vec::new(), Vec::new()];
    println!(
        "  {label}: claim+complete, {k} per case per round, {rounds} rounds, \
         {} (2 key fields) against {} (no fields) (load {})",
        queues[0],
        queues[1],
        loadavg()
    );
    for round in 0..rounds {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for case in order {
            let mut s = open();
            let (claims, completes) = claim_round(&mut *s, queues[case], k, &mut reopen);
            let cycle: Vec<u64> = claims.iter().zip(&completes).map(|(a, b)| a + b).collect();
            let ((c50, c99), (f50, f99), (y50, y99)) =
                (p50_p99(&claims), p50_p99(&completes), p50_p99(&cycle));
            println!(
                "    round {} {:<12} claim {:.3} / {:.3}  complete {:.3} / {:.3}  \
                 both {:.3} / {:.3} ms p50 / p99 (load {})",
                round + 1,
                queues[case],
                ms(c50),
                ms(c99),
                ms(f50),
                ms(f99),
                ms(y50),
                ms(y99),
                loadavg()
            );
            runs[case].push((claims, completes));
        }
    }
    let sum = |r: &(Vec<u64>, Vec<u64>)| -> Vec<u64> {
        r.0.iter().zip(&r.1).map(|(a, b)| a + b).collect()
    };
    let all = |case: usize| -> Vec<u64> { runs[case].iter().flat_map(sum).collect() };
    let spread = |case: usize| -> ((u64, u64), (u64, u64)) {
        let per: Vec<(u64, u64)> = runs[case].iter().map(|r| p50_p99(&sum(r))).collect();
        let lo50 = per.iter().map(|p| p.0).min().unwrap_or(0);
        let hi50 = per.iter().map(|p| p.0).max().unwrap_or(0);
        let lo99 = per.iter().map(|p| p.1).min().unwrap_or(0);
        let hi99 = per.iter().map(|p| p.1).max().unwrap_or(0);
        ((lo50, hi50), (lo99, hi99))
    };
    let ((k50, k99), (b50, b99)) = (p50_p99(&all(0)), p50_p99(&all(1)));
    let (ks, bs) = (spread(0), spread(1));
    let within = k50 <= bs.0.1 && k99 <= bs.1.1;
    rep.add(
        "dup",
        format!(
            "{label}: claim+complete p50 / p99 (ms), 2 key fields vs none, {rounds}×{k}, \
             rounds' p50 {:.3}–{:.3} / {:.3}–{:.3}, p99 {:.3}–{:.3} / {:.3}–{:.3} (load {})",
            ms(ks.0.0),
            ms(ks.0.1),
            ms(bs.0.0),
            ms(bs.0.1),
            ms(ks.1.0),
            ms(ks.1.1),
            ms(bs.1.0),
            ms(bs.1.1),
            loadavg()
        ),
        format!("{:.3} / {:.3}", ms(k50), ms(k99)),
        format!("{:.3} / {:.3}", ms(b50), ms(b99)),
        format!(
            "{:.2} / {:.2}",
            k50 as f64 / b50.max(1) as f64,
            k99 as f64 / b99.max(1) as f64
        ),
        "within the rounds' spread",
        yes(within),
    );
}
