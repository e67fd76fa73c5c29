//! Section `cli` of the engine benchmark: what one call of the command line costs.
//!
//! A script that loops `caseload claim` / `caseload complete` starts a process per call.
//! Measured against a per-call raw loop in the same run: this benchmark re-executed as
//! `__raw_call claim|complete …`, a plain rusqlite program that opens the file with the
//! store's settings (WAL, `synchronous=FULL`, foreign keys, the busy handler), runs the
//! store's own statements for the claim (candidate, conditional UPDATE, event) or the
//! complete (fenced UPDATE, event) in one `BEGIN IMMEDIATE` transaction and closes, as
//! `sqlite3` would: with SQLite's checkpoint on close. Blocks of calls alternate between
//! the two on copies of one file. Then the fsyncs of a few calls of each are counted with
//! `strace` (when installed), by file: the -wal, the database, the directory.
//!
//! `CL_BENCH_CLI_CYCLES` [300] claim+complete cycles per side; `CL_BENCH_CLI_WAL_CYCLES`
//! [0] cycles of caseload alone afterwards (20,000 for the -wal bound), reporting the
//! largest -wal seen between calls.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use rusqlite::Connection;

use super::{
    Claimed, Config, Report, candidate_sql, env_num, fill, loadavg, open_raw, raw_complete,
    raw_take_next, yes,
};

const CASELOAD: &str = env!("CARGO_BIN_EXE_caseload");

/// `__raw_call claim DB` prints `ID TOKEN`; `__raw_call complete DB ID TOKEN`.
pub(super) fn raw_call(args: &[String]) {
    let c = open_raw(Path::new(&args[1]));
    match args[0].as_str() {
        "claim" => match raw_take_next(&c, "bench", &candidate_sql()).unwrap() {
            Claimed::Item(id, token) => println!("{id} {token}"),
            Claimed::Nothing => std::process::exit(4),
        },
        "complete" => {
            let (id, token) = (args[2].parse().unwrap(), args[3].parse().unwrap());
            raw_complete(&c, "bench", id, token).unwrap();
        }
        other => panic!("__raw_call {other}"),
    }
    // Closing is part of the call: the raw program lets SQLite checkpoint, as sqlite3 does.
    drop::<Connection>(c);
}

/// One call's command line, caseload's or the raw program's: a claim, or the complete
/// of `(id, token)`.
fn call(engine: &str, db: &Path, complete: Option<(i64, i64)>) -> Command {
    let mut cmd = if engine == "caseload" {
        let mut c = Command::new(CASELOAD);
        c.arg("--db").arg(db).env_remove("CASELOAD_DB");
        match complete {
            None => c.args(["claim", "--json"]),
            Some((id, token)) => {
                c.args(["complete", &id.to_string(), "--token", &token.to_string()])
            }
        };
        c
    } else {
        let mut c = Command::new(std::env::current_exe().unwrap());
        c.arg("__raw_call");
        match complete {
            None => c.arg("claim").arg(db),
            Some((id, token)) => c
                .arg("complete")
                .arg(db)
                .args([id.to_string(), token.to_string()]),
        };
        c
    };
    // No config file of the user running the benchmark, and the log beside the file.
    cmd.env("HOME", db.parent().unwrap());
    cmd
}

/// Runs `cmd`, under `prefix` (a tracer) when given; its output and time in µs.
fn run(cmd: Command, prefix: &[&str]) -> (String, u64) {
    let mut cmd = if prefix.is_empty() {
        cmd
    } else {
        let mut c = Command::new(prefix[0]);
        c.args(&prefix[1..])
            .arg(cmd.get_program())
            .args(cmd.get_args());
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        c
    };
    let t = Instant::now();
    let out = cmd.output().unwrap();
    let us = t.elapsed().as_micros() as u64;
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (String::from_utf8(out.stdout).unwrap(), us)
}

/// Runs one claim and its complete; returns the two calls' times in µs.
fn cycle(engine: &str, db: &Path, prefix: &[&str]) -> (u64, u64) {
    let (out, claim_us) = run(call(engine, db, None), prefix);
    let (id, token) = if engine == "caseload" {
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        (v["id"].as_i64().unwrap(), v["lock_token"].as_i64().unwrap())
    } else {
        let mut w = out.split_whitespace().map(|s| s.parse::<i64>().unwrap());
        (w.next().unwrap(), w.next().unwrap())
    };
    let (_, complete_us) = run(call(engine, db, Some((id, token))), prefix);
    (claim_us, complete_us)
}

fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

fn wal_len(db: &Path) -> u64 {
    std::fs::metadata(format!("{}-wal", db.display())).map_or(0, |m| m.len())
}

/// The fsyncs of `cycles` cycles by file kind: (-wal, database, directory, other) per call.
fn fsyncs(engine: &str, db: &Path, dir: &Path, cycles: usize) -> Option<[f64; 4]> {
    let log = dir.join(format!("strace-{engine}.log"));
    let log_s = log.to_str().unwrap().to_string();
    let prefix = [
        "strace",
        "-f",
        "-y",
        "-qq",
        "-e",
        "trace=fsync,fdatasync",
        "-o",
        &log_s,
        "-A",
    ];
    let _ = std::fs::remove_file(&log);
    if Command::new("strace").arg("-V").output().is_err() {
        return None;
    }
    for _ in 0..cycles {
        cycle(engine, db, &prefix);
    }
    let text = std::fs::read_to_string(&log).ok()?;
    let mut n = [0f64; 4];
    let name = db.file_name().unwrap().to_str().unwrap();
    for line in text.lines().filter(|l| l.contains("sync(")) {
        let kind = if line.contains(&format!("{name}-wal>")) {
            0
        } else if line.contains(&format!("{name}>")) {
            1
        } else if line.contains(&format!("{}>", dir.display())) {
            2
        } else {
            3
        };
        n[kind] += 1.0;
    }
    let calls = (cycles * 2) as f64;
    Some(n.map(|x| x / calls))
}

pub(super) fn sec_cli(_cfg: &Config, dir: &Path, rep: &mut Report) {
    let cycles: usize = env_num("CL_BENCH_CLI_CYCLES", 300);
    let wal_cycles: usize = env_num("CL_BENCH_CLI_WAL_CYCLES", 0);
    let block = 25.min(cycles);
    println!(
        "\n== cli: one process per call, claim then complete, {cycles} cycles per side in \
         alternating blocks of {block} =="
    );
    let probe = 20;
    let template = dir.join("cli-template.db");
    fill(
        &template,
        cycles + probe + wal_cycles,
        cycles + probe + wal_cycles,
    );
    let engines = ["caseload", "raw"];
    let dbs: Vec<_> = engines
        .iter()
        .map(|e| {
            let db = dir.join(format!("cli-{e}.db"));
            std::fs::copy(&template, &db).unwrap();
            db
        })
        .collect();
    let mut times: [(Vec<u64>, Vec<u64>, f64); 2] = Default::default();
    let mut largest_wal = [0u64; 2];
    let mut done = 0;
    while done < cycles {
        for (k, engine) in engines.iter().enumerate() {
            let t = Instant::now();
            for _ in 0..block {
                let (a, b) = cycle(engine, &dbs[k], &[]);
                times[k].0.push(a);
                times[k].1.push(b);
                largest_wal[k] = largest_wal[k].max(wal_len(&dbs[k]));
            }
            times[k].2 += t.elapsed().as_secs_f64();
        }
        done += block;
    }
    println!("  load average {}", loadavg());
    let mut per = [(0u64, 0u64, 0f64); 2];
    for (k, engine) in engines.iter().enumerate() {
        let rate = times[k].0.len() as f64 / times[k].2;
        per[k] = (median(&mut times[k].0), median(&mut times[k].1), rate);
        println!(
            "  {engine}: claim p50 {:.2} ms, complete p50 {:.2} ms, {rate:.1} cycles/s, \
             largest -wal between calls {} KiB",
            per[k].0 as f64 / 1e3,
            per[k].1 as f64 / 1e3,
            largest_wal[k] / 1024
        );
    }
    let ratio = per[0].2 / per[1].2;
    rep.add(
        "9 cli",
        "cycles/s, a process per call (claim --json, complete --token)",
        format!("{:.1}", per[0].2),
        format!("{:.1}", per[1].2),
        format!("{ratio:.2}"),
        "≥1.5× raw",
        yes(ratio >= 1.5),
    );
    rep.add(
        "9 cli",
        "p50 per call: claim / complete (ms)",
        format!(
            "{:.2} / {:.2}",
            per[0].0 as f64 / 1e3,
            per[0].1 as f64 / 1e3
        ),
        format!(
            "{:.2} / {:.2}",
            per[1].0 as f64 / 1e3,
            per[1].1 as f64 / 1e3
        ),
        format!(
            "{:.2}",
            (per[0].0 + per[0].1) as f64 / (per[1].0 + per[1].1) as f64
        ),
        "(reported)",
        "-",
    );
    for (k, engine) in engines.iter().enumerate() {
        let Some([wal, db, dirs, other]) = fsyncs(engine, &dbs[k], dir, probe / 2) else {
            println!("  (strace not installed: fsyncs not counted)");
            break;
        };
        rep.add(
            "9 cli",
            format!("{engine}: fsyncs per call: -wal + database + directory (+ other)"),
            format!("{wal:.2} + {db:.2} + {dirs:.2} (+ {other:.2})"),
            "",
            "",
            "1 per transaction",
            if k == 0 {
                yes(wal + db <= 1.05)
            } else {
                "-".into()
            },
        );
    }
    if wal_cycles > 0 {
        wal_bound(&dbs[0], wal_cycles, rep);
    }
}

/// `n` cycles of caseload alone: the largest -wal seen between calls.
fn wal_bound(db: &Path, n: usize, rep: &mut Report) {
    let t = Instant::now();
    let mut largest = 0;
    for i in 0..n {
        cycle("caseload", db, &[]);
        largest = largest.max(wal_len(db));
        if (i + 1) % 2000 == 0 {
            println!(
                "  {} cycles, largest -wal {} KiB, {:.1} cycles/s",
                i + 1,
                largest / 1024,
                (i + 1) as f64 / t.elapsed().as_secs_f64()
            );
        }
    }
    let bound = caseload::store::sqlite::WAL_BOUND;
    rep.add(
        "9 cli",
        format!("largest -wal between calls over {n} CLI cycles (KiB)"),
        format!("{}", largest / 1024),
        "-",
        "-",
        format!("≤{} KiB", (bound + 256 * 1024) / 1024),
        yes(largest <= bound + 256 * 1024),
    );
}
