//! Through a pooler (issue 32 §1): a real PgBouncer in transaction mode, the binary told
//! so by `CASELOAD_PG_POOL=transaction`, the schema named by the URL's `options` (which
//! caseload sets in each transaction, as PgBouncer refuses it at startup).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::backend::{PgBackend, with_search_path};
use crate::support::cli::Env;
use crate::support::pooler::Pooler;

/// A command on the test's schema through `pooler`.
fn through(env: &Env, pg: &PgBackend, pooler: &Pooler, user: &str, args: &[&str]) -> Command {
    let mut c = env.command(user, args);
    c.env(
        "CASELOAD_DB",
        with_search_path(&pooler.url(&pg.base_url), &pg.schema),
    )
    .env("CASELOAD_PG_POOL", "transaction");
    c
}

#[test]
fn a_full_pooler_fails_a_command_at_once_and_a_waiting_claim_waits_it_out() {
    let Some(pg) = PgBackend::from_env() else {
        return;
    };
    let Some(pooler) = Pooler::start_limited(&pg.base_url, 2, 2) else {
        return;
    };
    let env = Env::new();
    let direct = |user: &str, args: &[&str]| {
        let mut c = env.command(user, args);
        c.env("CASELOAD_DB", &pg.url);
        c
    };
    assert!(direct("boss", &["init"]).status().unwrap().success());
    // Through the pooler, with room: it works.
    let out = through(&env, &pg, &pooler, "boss", &["add", "--title", "first"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The pooler's client slots taken: a one-shot command fails at once, in one line that
    // names the cause and where the README says how to size.
    // (Both slots: the pooler may not have seen the last command's client leave yet.)
    let mut hold = Vec::new();
    for _ in 0..100 {
        if hold.len() == 2 {
            break;
        }
        match postgres::Client::connect(&pooler.url(&pg.base_url), postgres::NoTls) {
            Ok(c) => hold.push(c),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    assert_eq!(hold.len(), 2, "the pooler's two client slots");
    let started = Instant::now();
    let out = through(&env, &pg, &pooler, "alice", &["list"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5), "not at once");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("no more connections allowed") && err.contains("A team of hundreds"),
        "{err}"
    );

    // A waiting claim waits it out, saying so, and takes the work once there is room.
    let waiter = through(
        &env,
        &pg,
        &pooler,
        "alice",
        &["claim", "--wait", "--timeout", "40", "--json"],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    drop(hold);
    let out = waiter.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("trying again in"), "said it waits: {err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["title"], "first");
    assert_eq!(v["lock_user"], "alice");
}
