//! Section `dup` of the engine benchmark (issue 27 §3): `caseload similar` (what the
//! detail pane's "Possibly the same" box reads) at 1,000,000 items with two duplicate-key
//! fields, on SQLite (a copy of the benchmarks' 1M-item file) and PostgreSQL (a fresh
//! schema of 1M items, when `CASELOAD_TEST_PG` is set).
//!
//! Every item of one queue (a third of the items) gets a VAT number shared by four items
//! and an e-mail shared by three (written raw, then both fields are defined as keys, which
//! builds the queue's keys: its time is printed). The titles of the 1M files are nearly
//! alike (`Item 12: check the thing for customer 12`), so the title prefilter finds a full
//! page for every item: the worst case of the similarity step.
//!
//! The raw baseline, in the same run, is the floor of the key half: the item's row, its
//! keys, and one index lookup per key joined to the items for the queue, by hand. Median,
//! p99 and worst of `CL_BENCH_DUP_RUNS` [200] items; the target is p99 ≤ 50 ms. Then, on
//! SQLite, claim and complete with the two key fields on every queue against the same file
//! without them (`claim_cost_with_keys`).

use std::path::Path;
use std::time::Instant;

use caseload::domain::duplicates::{DEFAULT_LIMIT, Dedupe};
use caseload::domain::queue_fields::{FieldChange, FieldType};
use caseload::store::similar::similar;
use caseload::store::sqlite::{OpenOptions, SqliteStore};
use caseload::store::{Store, Writes};

use super::{
    Config, PgOptions, PgStore, QUEUES, Report, actor, claim_latencies, env_num, filled_copy,
    loadavg, ms, pct, yes,
};

fn key(kind: FieldType) -> FieldChange {
    FieldChange {
        kind: Some(kind),
        dedupe: Some(Some(Dedupe::Key)),
        ..FieldChange::default()
    }
}

/// Defines the two key fields of `queue` (building its keys); prints how long it took.
fn define_keys(label: &str, s: &mut dyn Store, queue: &str) {
    let t = Instant::now();
    s.define_field(queue, "vat", &key(FieldType::Text)).unwrap();
    s.define_field(queue, "email", &key(FieldType::Email))
        .unwrap();
    println!(
        "  {label}: two key fields defined on {queue} (its keys built) in {:.1} s",
        t.elapsed().as_secs_f64()
    );
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
    println!(
        "\n== dup: caseload similar at 1M items with two duplicate keys against the raw key \
         lookups (load {}) ==",
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
         'email', 'p' || (id / 9) || '@Example.com') WHERE queue = 'verification'; ANALYZE",
    )
    .unwrap();
    let mut s = SqliteStore::open(&db, actor("feeder"), &OpenOptions::default()).unwrap();
    define_keys("SQLite", &mut s, "verification");
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
    claim_cost_with_keys(cfg, dir, rep);
    let Some(base) = std::env::var("CASELOAD_TEST_PG")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        println!("  (PostgreSQL skipped: CASELOAD_TEST_PG is not set)");
        return;
    };
    let (schema, url) = super::pg_fresh_schema(&base, 1_000_000);
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    c.batch_execute(
        "UPDATE items SET params = json_build_object('vat', 'DE ' || (id / 12), \
         'email', 'p' || (id / 9) || '@Example.com') WHERE queue = 'billing'",
    )
    .unwrap();
    c.batch_execute("VACUUM ANALYZE").unwrap();
    let mut s = PgStore::open(&url, actor("bench"), &PgOptions::default()).unwrap();
    define_keys("PostgreSQL", &mut s, "billing");
    c.batch_execute("VACUUM ANALYZE").unwrap();
    // pg_fresh_schema's item g is in queue g % 3: 'billing' is g % 3 = 1.
    let ids = sample(runs, 1);
    time_similar(rep, "PostgreSQL", &mut s, &ids, |id| {
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
    super::pg_drop_schema(&base, &schema);
}

/// Claim and complete (the `claim` section's take-next, each followed by its complete) on
/// the claim file (`CL_BENCH_DUP_CLAIM_ITEMS` [1000000] items, 10 % open) whose items all
/// carry a VAT number and an e-mail, with the two key fields defined on every queue against
/// the same file without them: each case on a fresh copy, alternately over two rounds
/// (issue 27 §3: "adding key fields must not slow claim/complete measurably").
fn claim_cost_with_keys(cfg: &Config, dir: &Path, rep: &mut Report) {
    let n: usize = env_num("CL_BENCH_DUP_CLAIM_ITEMS", 1_000_000);
    let mut lat: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..2 {
        for (i, keys) in [false, true].into_iter().enumerate() {
            let db = dir.join("dup-claim.db");
            filled_copy(cfg, n, n / 10, &db);
            let c = rusqlite::Connection::open(&db).unwrap();
            c.execute_batch(
                "UPDATE items SET params = json_object('vat', 'DE ' || (id / 12), \
                 'email', 'p' || (id / 9) || '@Example.com'); ANALYZE",
            )
            .unwrap();
            drop(c);
            if keys {
                // (The claim file's supervisor defines them.)
                let mut s =
                    SqliteStore::open(&db, actor("bench"), &OpenOptions::default()).unwrap();
                for q in QUEUES {
                    define_keys("SQLite", &mut s, q);
                }
            }
            lat[i].extend(claim_latencies("store", &db, cfg.claims));
        }
    }
    for l in &mut lat {
        l.sort_unstable();
    }
    let (b50, b99) = (pct(&lat[0], 50.0), pct(&lat[0], 99.0));
    let (k50, k99) = (pct(&lat[1], 50.0), pct(&lat[1], 99.0));
    let r99 = k99 as f64 / b99.max(1) as f64;
    println!(
        "  SQLite: claim+complete, {n} items, no key fields p50 {:.3} p99 {:.3} ms; two key \
         fields on every queue p50 {:.3} p99 {:.3} ms",
        ms(b50),
        ms(b99),
        ms(k50),
        ms(k99)
    );
    rep.add(
        "dup",
        format!("SQLite: claim+complete p50 / p99, {n} items, 2 key fields vs none (ms)"),
        format!("{:.3} / {:.3}", ms(k50), ms(k99)),
        format!("{:.3} / {:.3}", ms(b50), ms(b99)),
        format!("{r99:.2}"),
        "p99 ≤1.2× without",
        yes(r99 <= 1.2),
    );
}
