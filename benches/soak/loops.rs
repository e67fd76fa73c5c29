//! Two more callers beside the workers and the chaos loop, each its own caseload name
//! running one call at a time:
//! - `x1` runs `caseload work --exec CMD` (issue 32 §2), a long-running worker that
//!   claims, runs CMD, and completes (CMD's exit 0) or fails (non-zero) each item, taking
//!   the next in the complete's transaction; now and then on review work (`--review`:
//!   accept or reject), with two slots, or stopped by SIGTERM (it releases what it holds).
//!   The killer SIGKILLs it too: its items end completed, failed or released, or their
//!   locks expire and others take them.
//! - `feed` reads the audit trail with `caseload events --checkpoint FILE` (issue 33 §1)
//!   again and again, on two checkpoint files (every event; completions and failures
//!   only), sometimes as `--follow` killed after a few seconds: the analysis puts its
//!   output together and compares it with the events table.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

use crate::backend::Kind;
use crate::process::{Class, Request, Runner};
use crate::rng::Rng;

/// The name `caseload work` runs under.
pub(crate) const WORK: &str = "x1";
/// The name the feed reads under.
pub(crate) const FEED: &str = "feed";

/// CMD for `work --exec`: reads the item, takes 0-0.3 s, and fails one item in five
/// (its last line on stderr the reason), else prints a result.
const CMD: &str = "cat >/dev/null; sleep 0.$((CASELOAD_ITEM_ID % 4)); \
    if [ $((CASELOAD_ITEM_ID % 5)) -eq 0 ]; then echo \"no luck with $CASELOAD_ITEM_ID\" >&2; exit 3; fi; \
    echo \"done by cmd: $CASELOAD_ITEM_ID\"";

/// `x1`'s loop: one `work` process at a time until the deadline.
pub(crate) fn work_loop(
    runner: &Runner,
    mut rng: Rng,
    kind: Kind,
    fault_rate: f64,
    deadline: Instant,
    backlog: &AtomicI64,
) {
    while Instant::now() < deadline {
        let max = rng.range(1, 8).to_string();
        let mut args: Vec<String> = [
            "work",
            "--exec",
            CMD,
            "--max-items",
            &max,
            "--idle-exit",
            "2",
        ]
        .map(String::from)
        .to_vec();
        if rng.chance(0.3) {
            args.extend(["--concurrency", "2"].map(String::from));
        }
        // The checklist queue's items cannot be completed untouched: a `work` on every
        // queue stops at one (exit 1 "cannot be completed", an answer) now and then.
        match rng.below(10) {
            0..=1 => args.push("--review".into()),
            2 => {}
            _ => args.extend(["--queue", crate::chaos::QUEUE].map(String::from)),
        }
        let mut req = Request::new(WORK, "work", Class::Work, args);
        if rng.chance(fault_rate) {
            req.fault = Some(crate::worker::fault(&mut rng, kind));
        }
        let id = runner.next_id();
        // One in four is stopped with SIGTERM after 0.3-3 s (it releases what it holds).
        let term = rng
            .chance(0.25)
            .then(|| Duration::from_millis(300 + rng.below(2700)));
        std::thread::scope(|s| {
            if let Some(after) = term {
                s.spawn(move || {
                    std::thread::sleep(after);
                    runner.signal(id, "TERM");
                });
            }
            let call = runner.run(id, req);
            // What it finished leaves the backlog (imports wait while it is high).
            let finished = call
                .stdout
                .lines()
                .filter(|l| l.starts_with('#') && (l.ends_with(" done") || l.contains(" failed: ")))
                .count();
            backlog.fetch_sub(finished as i64, Ordering::Relaxed);
        });
        std::thread::sleep(Duration::from_millis(100 + rng.below(900)));
    }
}

/// The file the feed's hook appends to (in the run's directory): `CALL EVENT KIND` per run
/// that succeeded, `CALL BAD EVENT` when its standard input was not that event's line.
pub(crate) const HOOK_LOG: &str = "hook.log";
/// The kinds the hook runs for.
pub(crate) const HOOK_KINDS: &str = "failed,cancelled,parked,rejected";

/// The hook of `events --exec` for call `call`: checks that its standard input is the
/// event's line (else says so and fails: a call killed before it wrote the line leaves
/// the hook an empty input), fails once (exit 1) for one event in 40 (caseload retries it after a
/// second), and appends `CALL EVENT KIND` to the log. At least once: a call killed after a
/// run and before it stored the checkpoint runs that event again in the next call.
fn hook(call: usize, dir: &str, log: &str) -> String {
    format!(
        "if ! grep -q \"\\\"id\\\":$CASELOAD_EVENT_ID,\"; then echo \"{call} BAD $CASELOAD_EVENT_ID\" >> {log}; exit 1; fi; \
         if [ $((CASELOAD_EVENT_ID % 40)) -eq 7 ] && mkdir {dir}/hookfail-$CASELOAD_EVENT_ID 2>/dev/null; then exit 1; fi; \
         echo \"{call} $CASELOAD_EVENT_ID $CASELOAD_EVENT_KIND\" >> {log}"
    )
}

/// `feed`'s loop: `events --checkpoint` on one of three files (every event; completions
/// and failures; and with `--exec`, a hook per event of [`HOOK_KINDS`]), until the
/// deadline.
pub(crate) fn feed_loop(runner: &Runner, mut rng: Rng, dir: &std::path::Path, deadline: Instant) {
    let all = dir.join("feed-all.checkpoint").display().to_string();
    let ends = dir.join("feed-ends.checkpoint").display().to_string();
    let hooked = dir.join("feed-hook.checkpoint").display().to_string();
    let log = dir.join(HOOK_LOG).display().to_string();
    while Instant::now() < deadline {
        let id = runner.next_id();
        let mut args: Vec<String> = vec!["events".into(), "--checkpoint".into()];
        let pick = rng.below(3);
        if pick == 0 {
            args.push(all.clone());
        } else if pick == 1 {
            args.push(hooked.clone());
            args.extend(["--kind", HOOK_KINDS, "--exec"].map(String::from));
            args.push(hook(id, &dir.display().to_string(), &log));
        } else {
            args.push(ends.clone());
            args.extend(["--kind", "completed,failed"].map(String::from));
        }
        let follow = rng.chance(0.3);
        if follow {
            args.push("--follow".into());
        }
        let op = match (follow, pick == 1) {
            (true, true) => "events --exec --follow",
            (false, true) => "events --exec",
            (true, false) => "events --follow",
            (false, false) => "events",
        };
        let req = Request::new(FEED, op, Class::Read, args);
        // A follower runs until it is killed, 1-5 s on.
        let kill = Duration::from_millis(1000 + rng.below(4000));
        let done = AtomicBool::new(false);
        std::thread::scope(|s| {
            if follow {
                let done = &done;
                s.spawn(move || {
                    std::thread::sleep(kill);
                    // (Until it is signalled: it may have started late.)
                    while !done.load(Ordering::Relaxed) && !runner.signal(id, "KILL") {
                        std::thread::sleep(Duration::from_millis(100));
                    }
                });
            }
            runner.run(id, req);
            done.store(true, Ordering::Relaxed);
        });
        std::thread::sleep(Duration::from_millis(200 + rng.below(1500)));
    }
}
