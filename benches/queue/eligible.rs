//! Section `eligible` of the engine benchmark (issue 29 §2): take-next latency when the
//! claimer's queues are limited (`user set w0 --queues …`) against the same claims without
//! a list, in the same run. Eligibility is a condition of the candidate search and of the
//! claim's conditional write (`store::sql::eligible!`: one probe of the `users` row by its
//! key and, for a limited person, one of `user_queues` by its key), so the cost to measure
//! is those probes per claim, and, for a list that leaves queues out, the rows the take-order
//! walk passes over.
//!
//! The file is the `claim` section's big one (`CL_BENCH_ELIGIBLE_ITEMS` [1000000] items,
//! 10 % open, spread over three queues; cached). Cases, each on a fresh copy, alternately
//! over `CL_BENCH_ELIGIBLE_ROUNDS` [2] rounds of `CL_BENCH_CLAIMS` claims (each claim
//! followed by its complete, as in `claim`): no list; a list of every queue; a list of two
//! of the three queues. The ratio is each case's p99 (and p50) over the no-list case's.

use std::path::Path;

use rusqlite::Connection;

use super::{Config, QUEUES, Report, claim_latencies, env_num, filled_copy, ms, pct, yes};

/// Gives `w0` a list of `queues` (none: no list) on the file `db`, as `user set w0
/// --queues` does.
fn limit(db: &Path, queues: Option<&[&str]>) {
    let Some(queues) = queues else {
        return;
    };
    let c = Connection::open(db).unwrap();
    c.execute(
        "INSERT INTO users (name, take_limited) VALUES ('w0', 1) \
         ON CONFLICT (name) DO UPDATE SET take_limited = 1",
        [],
    )
    .unwrap();
    for q in queues {
        c.execute(
            "INSERT INTO user_queues (name, kind, queue) VALUES ('w0', 'take', ?1)",
            [q],
        )
        .unwrap();
    }
}

pub(crate) fn sec_eligible(cfg: &Config, dir: &Path, rep: &mut Report) {
    let n: usize = env_num("CL_BENCH_ELIGIBLE_ITEMS", 1_000_000);
    let rounds: usize = env_num("CL_BENCH_ELIGIBLE_ROUNDS", 2);
    let open = n / 10;
    println!(
        "\n== eligible: take_next latency with a list of queues, {n} items, {open} open, \
         {rounds} rounds of {} claims per case ==",
        cfg.claims
    );
    let every: Vec<&str> = QUEUES.to_vec();
    let two: Vec<&str> = QUEUES[..2].to_vec();
    let cases: [(&str, Option<&[&str]>); 3] = [
        ("no list", None),
        ("a list of every queue", Some(&every)),
        ("a list of 2 of 3 queues", Some(&two)),
    ];
    let mut lat: Vec<Vec<u64>> = vec![Vec::new(); cases.len()];
    for _ in 0..rounds {
        for (i, (_, queues)) in cases.iter().enumerate() {
            let db = dir.join("eligible.db");
            filled_copy(cfg, n, open, &db);
            limit(&db, *queues);
            lat[i].extend(claim_latencies("store", &db, cfg.claims));
        }
    }
    for l in &mut lat {
        l.sort_unstable();
    }
    let (base50, base99) = (pct(&lat[0], 50.0), pct(&lat[0], 99.0));
    for (i, (name, _)) in cases.iter().enumerate() {
        let (p50, p99) = (pct(&lat[i], 50.0), pct(&lat[i], 99.0));
        println!(
            "  {name}: p50 {:.3} p90 {:.3} p99 {:.3} max {:.3} ms",
            ms(p50),
            ms(pct(&lat[i], 90.0)),
            ms(p99),
            ms(*lat[i].last().unwrap())
        );
        if i == 0 {
            continue;
        }
        let r99 = p99 as f64 / base99.max(1) as f64;
        rep.add(
            "3c eligible",
            format!("p50 / p99 claim, {n} items, {name} vs none (ms)"),
            format!("{:.3} / {:.3}", ms(p50), ms(p99)),
            format!("{:.3} / {:.3}", ms(base50), ms(base99)),
            format!("{r99:.2}"),
            "p99 ≤1.2× no list",
            yes(r99 <= 1.2),
        );
    }
}
