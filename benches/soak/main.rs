//! The soak run: a torture run anyone can repeat (`scripts/soak`, which runs this).
//!
//! ```text
//! scripts/soak --minutes 2 --backend sqlite|postgres [--workers N] [--seed S] [--keep]
//! ```
//!
//! For the given minutes, N workers claim and complete through the real binary (claim,
//! claim --id, claim --wait, complete, complete --next, fail, release, skip, renew, set,
//! tick, park for a few seconds, wake, undo; complete, fail, release and skip with a
//! ready-made text's --code, complete --override as staff; and review: claim --review,
//! accept, reject in the main queue, which reviews a share of its items; reject with a
//! ready-made reason's code), a long-running `caseload work --exec CMD` (`loops`: claims,
//! runs CMD, completes or fails, now and then on review work, stopped by SIGTERM or
//! killed), a feed reader (`caseload events --checkpoint`, sometimes `--follow`, killed;
//! and `--exec HOOK`, a hook per event, judged at least once and in order), while one
//! supervisor runs the chaos loop
//! (`chaos::CHAOS`: imports (some into fields, with --define-fields) and re-imports, adds
//! (with a source, into a queue being renamed), reap, unlocks, assignments, reopen, edits,
//! comments, wakes, merges and not-duplicate marks (the main queue's `note` is a duplicate
//! key), queue settings and SLAs, queue rename and delete, fields, ready-made
//! texts (and the holders' codes coming and going), review shares, roles, logins,
//! eligibility, leads and leavers, import --skip-duplicates (JSON Lines and --no-index
//! too), bulk unlocks by holder and queue, a supervisor's complete --override of a record
//! whose checklist is not ticked, init on the live database, check --repair-figures,
//! migrate-to (SQLite runs: the live file into a
//! fresh PostgreSQL database, killed mid-copy half the time, judged on the spot), backups
//! checked, check, stats, metrics, search, export...), a killer
//! SIGKILLs a running call every 1.5 s or so, one call in twenty runs
//! under strace with an I/O error, a full disk or a SIGKILL injected at its Nth write or
//! fsync (PostgreSQL: its Nth message), and on PostgreSQL the run's server processes are
//! terminated at random. Then parked items are woken by a supervisor, the queue is
//! drained and what waits for review is reviewed (a lock nobody can take, a park or a
//! review left, is a lockout),
//! `caseload check` runs, and every call's exit code is judged against the database (see
//! `analysis`). One table is printed; the exit code is 1 on any violation.
//!
//! PostgreSQL runs in a new database `soak_*` made through `--pg` (default:
//! `CASELOAD_TEST_PG`), dropped at the end unless something was found or `--keep`.

// A test program: it may unwrap, be long, and drive the OS directly.
#![allow(
    clippy::unwrap_used,
    clippy::too_many_lines,
    clippy::too_many_arguments
)]

mod analysis;
mod backend;
mod chaos;
mod loops;
mod process;
mod rng;
mod worker;

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use clap::Parser;

use backend::{Backend, Kind};
use chaos::{CHAOS, Ctx, LISTS, QUEUE, Seen};
use process::{Call, Class, Exit, Request, Runner};
use rng::Rng;

/// A torture run of caseload through its real binary, judged against the database.
#[derive(Parser)]
#[command(name = "soak")]
struct Args {
    /// How long the workers and the chaos run (the drain and analysis come after)
    #[arg(long, default_value_t = 2.0)]
    minutes: f64,
    /// Which backend to torture
    #[arg(long, value_enum, default_value = "sqlite")]
    backend: Kind,
    /// Workers claiming and completing at once
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// The seed of the run's choices (printed; the timing is the machine's)
    #[arg(long)]
    seed: Option<u64>,
    /// A PostgreSQL URL allowed to create databases (a new one is made per run)
    #[arg(
        long,
        env = "CASELOAD_TEST_PG",
        default_value = "postgres://postgres@127.0.0.1:5432/test"
    )]
    pg: String,
    /// The share of calls run under strace with a fault injected
    #[arg(long, default_value_t = 0.05)]
    fault_rate: f64,
    /// Keep the run's directory and database even when nothing was found
    #[arg(long)]
    keep: bool,
    /// Self-check: forget one take, one complete and one park of the database before
    /// judging, which must show up as lost writes, and one undo of a complete that was
    /// followed by another finish, which must show up as a duplicate; also a finish
    /// `work` printed, a line the feed printed, a run of the feed's hook, and a
    /// ready-made code and an override's reason of a finish (lost writes) (proves the
    /// analysis can fail)
    #[arg(long)]
    tamper: bool,
    /// (passed by `cargo bench`)
    #[arg(long, hide = true)]
    bench: bool,
}

/// What the run did, for the table.
#[derive(Default)]
struct Counts {
    kills: AtomicUsize,
    terminated: AtomicUsize,
}

fn main() {
    match run() {
        Ok(clean) => std::process::exit(if clean { 0 } else { 1 }),
        Err(e) => {
            eprintln!("soak: {e:#}");
            std::process::exit(2);
        }
    }
}

fn run() -> Result<bool> {
    let args = Args::parse();
    let seed = args.seed.unwrap_or_else(|| process::now_ms() as u64);
    let mut rng = Rng::new(seed);
    let dir = tempfile::Builder::new()
        .prefix("caseload-soak-")
        .tempdir()?;
    let tag = format!("{}_{}", std::process::id(), seed % 100_000);
    let backend = Backend::create(args.backend, dir.path(), &args.pg, &tag)?;
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_caseload"));
    let runner = Runner::new(bin, backend.db.clone(), dir.path().to_path_buf());
    eprintln!(
        "soak: {:?}, {} min, {} workers, seed {seed}, in {} ({})",
        args.backend,
        args.minutes,
        args.workers,
        dir.path().display(),
        backend.db
    );
    let workers: Vec<String> = (1..=args.workers).map(|i| format!("w{i}")).collect();
    setup(&runner, &backend, &workers)?;

    let seen = Seen::new(1..=50);
    let parks = Seen::new(std::iter::empty());
    let backlog = AtomicI64::new(50);
    let counts = Counts::default();
    let found = std::sync::Mutex::new(analysis::Findings::default());
    // migrate-to (SQLite runs) copies into fresh databases on the server of --pg.
    let pg_admin = (args.backend == Kind::Sqlite)
        .then(|| {
            postgres::Client::connect(&args.pg, postgres::NoTls)
                .ok()
                .map(|_| args.pg.clone())
        })
        .flatten();
    if args.backend == Kind::Sqlite && pg_admin.is_none() {
        eprintln!("soak: no PostgreSQL at --pg: migrate-to is left out of the chaos loop");
    }
    let deadline = Instant::now() + Duration::from_secs_f64(args.minutes * 60.0);
    std::thread::scope(|s| {
        for name in &workers {
            let w = worker::Worker::new(
                &runner,
                name.clone(),
                rng.fork(),
                args.backend,
                args.fault_rate,
                deadline,
                &seen,
                &backlog,
                &parks,
            );
            s.spawn(move || w.run());
        }
        let ctx = Ctx {
            rng: rng.fork(),
            kind: args.backend,
            dir: dir.path().to_path_buf(),
            workers: workers.clone(),
            seen: &seen,
            backlog: &backlog,
            parks: &parks,
            texts: Vec::new(),
            call: 0,
            files: Vec::new(),
            pg_admin,
            tag: tag.clone(),
            found: &found,
        };
        let (runner, fault_rate) = (&runner, args.fault_rate);
        s.spawn(move || chaos_loop(runner, ctx, fault_rate, deadline));
        let (wrng, frng, kind) = (rng.fork(), rng.fork(), args.backend);
        let backlog = &backlog;
        s.spawn(move || loops::work_loop(runner, wrng, kind, fault_rate, deadline, backlog));
        let feed_dir = dir.path().to_path_buf();
        s.spawn(move || loops::feed_loop(runner, frng, &feed_dir, deadline));
        let (counts, backend, mut krng) = (&counts, &backend, rng.fork());
        s.spawn(move || killer(runner, backend, counts, &mut krng, deadline));
    });

    let mut holders = workers.clone();
    holders.push(loops::WORK.to_string());
    // (The chaos loop's supervisor holds a checklist item for its override.)
    holders.push("boss".to_string());
    let drain_note = drain(&runner, &holders)?;
    let check = runner.run(
        runner.next_id(),
        Request::new(&backend.login, "check", Class::Setup, vec!["check".into()]),
    );
    let mut facts = backend.facts()?;
    if args.tamper {
        let refinished = |u: &backend::Event| {
            facts.events.iter().any(|e| {
                e.item == u.item
                    && e.id > u.id
                    && ["completed", "failed", "cancelled"].contains(&e.kind.as_str())
            })
        };
        if let Some(i) = facts
            .events
            .iter()
            .position(|u| u.kind == "undone" && u.detail["undid"] == "completed" && refinished(u))
        {
            eprintln!("soak: --tamper: forgetting event {:?}", facts.events[i]);
            facts.events.remove(i);
        }
        for kind in ["locked", "completed", "parked", "submitted"] {
            if let Some(i) = facts
                .events
                .iter()
                .position(|e| e.kind == kind && e.actor.starts_with('w'))
            {
                eprintln!("soak: --tamper: forgetting event {:?}", facts.events[i]);
                facts.events.remove(i);
            }
        }
    }
    if args.tamper {
        // The judges of ready-made codes and overrides: a code and a reason forgotten.
        for key in ["code", "override"] {
            if let Some(e) = facts.events.iter_mut().find(|e| {
                e.actor.starts_with('w')
                    && ["completed", "failed", "released", "skipped"].contains(&e.kind.as_str())
                    && !e.detail[key].is_null()
            }) {
                eprintln!("soak: --tamper: forgetting the {key} of event {e:?}");
                if let Some(d) = e.detail.as_object_mut() {
                    d.remove(key);
                }
            }
        }
    }
    let mut calls = runner.calls();
    if args.tamper {
        // The new paths' judges too: a finish `work` printed, a line of the feed.
        if let Some(i) = facts.events.iter().position(|e| {
            e.actor == loops::WORK && ["completed", "failed"].contains(&e.kind.as_str())
        }) {
            eprintln!("soak: --tamper: forgetting event {:?}", facts.events[i]);
            facts.events.remove(i);
        }
        if let Some(c) = calls.iter_mut().find(|c| c.ids.len() > 2) {
            let id = c.ids.remove(1);
            eprintln!(
                "soak: --tamper: forgetting that call {} printed event {id}",
                c.id
            );
        }
    }
    let mut hooked = analysis::Hooked {
        log: std::fs::read_to_string(dir.path().join(loops::HOOK_LOG)).unwrap_or_default(),
        checkpoint: std::fs::read_to_string(dir.path().join("feed-hook.checkpoint"))
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0),
    };
    if args.tamper {
        // The hook's judge too: a run of the hook below its checkpoint.
        let lines: Vec<&str> = hooked.log.lines().collect();
        let ran = |l: &str| l.split(' ').nth(1).and_then(|id| id.parse::<i64>().ok());
        let once = |id: i64| lines.iter().filter(|l| ran(l) == Some(id)).count() == 1;
        if let Some(i) = lines
            .iter()
            .position(|l| ran(l).is_some_and(|id| id <= hooked.checkpoint && once(id)))
        {
            eprintln!("soak: --tamper: forgetting the hook's run '{}'", lines[i]);
            let mut kept: Vec<&str> = lines.clone();
            kept.remove(i);
            hooked.log = kept.join("\n");
        }
    }
    let mut found = {
        let mut f = analysis::analyse(&calls, &facts, &hooked);
        let on_the_spot = found.into_inner().unwrap();
        f.lost.extend(on_the_spot.lost);
        f.errors.extend(on_the_spot.errors);
        f.failed_applied.extend(on_the_spot.failed_applied);
        f
    };
    if drain_note.is_empty() {
        for i in facts
            .items
            .iter()
            .filter(|i| matches!(i.state.as_str(), "open" | "parked" | "review"))
        {
            found.lockouts.push(format!(
                "#{} is {} (held by {:?}) but the drain could not take it",
                i.id, i.state, i.lock_user
            ));
        }
    }
    write_log(dir.path(), &calls)?;
    let hook_runs = hooked.log.lines().count();
    let clean = report(
        &args,
        seed,
        &calls,
        &counts,
        &found,
        &check,
        &drain_note,
        hook_runs,
    );
    if clean && !args.keep {
        backend.drop_database()?;
    } else {
        let kept = dir.keep();
        eprintln!(
            "soak: kept {} (calls.log: every call) and {}",
            kept.display(),
            backend.db
        );
    }
    Ok(clean)
}

/// The database, its queues (30 s locks, so a lock left by a killed call expires within
/// the run; a text field for set, a checklist in the other for tick), a supervisor for the chaos and the workers'
/// names bound to this login, and 50 items to start.
fn setup(runner: &Runner, backend: &Backend, workers: &[String]) -> Result<()> {
    let login = backend.login.as_str();
    let mut steps: Vec<Vec<String>> = vec![
        vec!["init".into()],
        [
            "queue",
            "set",
            QUEUE,
            "--create",
            "--lock-seconds",
            "30",
            "--warn-seconds",
            "5",
        ]
        .map(String::from)
        .to_vec(),
        ["queue", "set", QUEUE, "--review", "30%"]
            .map(String::from)
            .to_vec(),
        [
            "field",
            "set",
            QUEUE,
            "note",
            "--type",
            "text",
            "--dedupe-key",
        ]
        .map(String::from)
        .to_vec(),
        [
            "queue",
            "set",
            LISTS,
            "--create",
            "--lock-seconds",
            "30",
            "--warn-seconds",
            "5",
        ]
        .map(String::from)
        .to_vec(),
        [
            "queue",
            "set",
            "spare",
            "--create",
            "--lock-seconds",
            "30",
            "--warn-seconds",
            "5",
        ]
        .map(String::from)
        .to_vec(),
        [
            "field",
            "set",
            LISTS,
            "steps",
            "--type",
            "checklist",
            "--choices",
            "a,b,c",
        ]
        .map(String::from)
        .to_vec(),
        [
            "user",
            "set",
            "boss",
            "--role",
            "supervisor",
            "--login",
            login,
        ]
        .map(String::from)
        .to_vec(),
        [
            "user",
            "set",
            "drain",
            "--role",
            "supervisor",
            "--login",
            login,
        ]
        .map(String::from)
        .to_vec(),
    ];
    steps.push(
        [
            "text",
            "add",
            QUEUE,
            "--for",
            "reject",
            "do it again",
            "--code",
            "redo",
        ]
        .map(String::from)
        .to_vec(),
    );
    // The holders' ready-made texts (worker::HOLDER uses them by code), in the main and
    // the checklist queue; the spare queue has none (a code there: exit 1).
    for q in [QUEUE, LISTS] {
        for (purpose, text, code) in chaos::READY {
            steps.push(
                ["text", "add", q, "--for", purpose, text, "--code", code]
                    .map(String::from)
                    .to_vec(),
            );
        }
    }
    for w in workers
        .iter()
        .map(String::as_str)
        .chain([loops::WORK, loops::FEED])
    {
        steps.push(
            ["user", "set", w, "--login", login]
                .map(String::from)
                .to_vec(),
        );
    }
    for i in 1..=50 {
        steps.push(
            ["add", "--queue", QUEUE, "--title", &format!("seed-{i}")]
                .map(String::from)
                .to_vec(),
        );
    }
    for args in steps {
        let c = runner.run(
            runner.next_id(),
            Request::new(login, "setup", Class::Setup, args),
        );
        if c.exit != Exit::Code(0) {
            bail!("setup failed: {}", c.line());
        }
    }
    Ok(())
}

/// The supervisor's loop over the chaos table until the deadline.
fn chaos_loop(runner: &Runner, mut ctx: Ctx<'_>, fault_rate: f64, deadline: Instant) {
    while Instant::now() < deadline {
        let entry = ctx.rng.weighted(CHAOS, |c| c.weight);
        ctx.call = runner.next_id();
        if let chaos::Build::Run(f) = entry.build {
            f(runner, &mut ctx, fault_rate);
            continue;
        }
        let Some(steps) = entry.steps(&mut ctx) else {
            continue;
        };
        for (n, step) in steps.into_iter().enumerate() {
            let id = if n == 0 { ctx.call } else { runner.next_id() };
            let mut req = Request::new("boss", entry.name, entry.class, step.args);
            req.refusals = entry.refusals;
            req.db = step.db.clone();
            if entry.class != Class::Read && ctx.rng.chance(fault_rate) {
                req.fault = Some(worker::fault(&mut ctx.rng, ctx.kind));
            }
            let call = runner.run(id, req);
            if entry.name == "add"
                && call.exit == Exit::Code(0)
                && let Ok(item) = call.stdout.trim().parse::<i64>()
            {
                ctx.seen.add(item);
            }
            if let Some(db) = step.db {
                let _ = std::fs::remove_file(db);
            }
            if call.exit != Exit::Code(0) {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(20 + ctx.rng.below(150)));
    }
}

/// SIGKILLs a running call every 0.5-2.5 s, and on PostgreSQL terminates one of the run's
/// server processes every few seconds.
fn killer(runner: &Runner, backend: &Backend, counts: &Counts, rng: &mut Rng, deadline: Instant) {
    let mut pg = if backend.kind == Kind::Postgres {
        backend.pg_client().ok()
    } else {
        None
    };
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(500 + rng.below(2000)));
        runner.kill_hung();
        let pick = rng.next_u64() as usize;
        if runner.kill_one(|n| pick % n) {
            counts.kills.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(c) = pg.as_mut().filter(|_| rng.chance(0.3)) {
            let sql = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                       WHERE datname = current_database() AND pid <> pg_backend_pid() \
                       AND backend_type = 'client backend' ORDER BY random() LIMIT 1";
            if let Ok(rows) = c.query(sql, &[]) {
                counts.terminated.fetch_add(rows.len(), Ordering::Relaxed);
            }
        }
    }
}

/// Returns every parked item to the pool (a supervisor's `wake`), frees every worker's
/// lock (a supervisor's bulk unlock per holder) and takes and completes every open item
/// through the CLI. Returns why the drain stopped short, or "" when the queue emptied
/// (then an open or parked item left is a lockout).
fn drain(runner: &Runner, workers: &[String]) -> Result<String> {
    let run = |op, class, args: &[&str]| {
        let args = args.iter().map(|s| s.to_string()).collect();
        let mut req = Request::new("drain", op, class, args);
        req.refusals = &[3, 4];
        runner.run(runner.next_id(), req)
    };
    let c = run(
        "drain: list parked",
        Class::Read,
        &["list", "--state", "parked", "--limit", "100000", "--json"],
    );
    let parked: Vec<i64> = match serde_json::from_str(&c.stdout) {
        Ok(serde_json::Value::Array(items)) => {
            items.iter().filter_map(|i| i["id"].as_i64()).collect()
        }
        _ => return Ok(format!("the list of parked items failed: {}", c.line())),
    };
    for id in parked {
        let c = run("drain: wake", Class::Write, &["wake", &id.to_string()]);
        if c.exit != Exit::Code(0) {
            return Ok(format!("a parked item could not be woken: {}", c.line()));
        }
    }
    for w in workers {
        let c = run(
            "drain: unlock",
            Class::MayWrite,
            &["unlock", "--holder", w, "--reason", "soak drain"],
        );
        if c.exit != Exit::Code(0) {
            return Ok(format!("the bulk unlock failed: {}", c.line()));
        }
    }
    // The drain's own completions go straight to done; what waits for review is reviewed
    // after.
    let c = run(
        "drain: review none",
        Class::Write,
        &[
            "queue",
            "set",
            QUEUE,
            "--review",
            "none",
            "--review-new",
            "0",
        ],
    );
    if c.exit != Exit::Code(0) && c.exit != Exit::Code(1) {
        return Ok(format!("the review setting failed: {}", c.line()));
    }
    let until = Instant::now() + Duration::from_secs(180);
    let mut held = None;
    while Instant::now() < until {
        let c = match held {
            None => run("drain: claim", Class::Claim, &["claim", "--json"]),
            Some((i, t)) => {
                let (i, t): (String, String) = (format!("{i}"), format!("{t}"));
                let mut req = Request::new(
                    "drain",
                    "complete --next",
                    Class::CompleteNext,
                    [
                        "complete",
                        &i,
                        "--token",
                        &t,
                        "--override",
                        "soak drain",
                        "--next",
                        "--json",
                    ]
                    .map(String::from)
                    .to_vec(),
                );
                req.refusals = &[3, 4];
                req.item = held.map(|h| h.0);
                req.token = held.map(|h| h.1);
                runner.run(runner.next_id(), req)
            }
        };
        match c.exit {
            Exit::Code(0) => held = c.claimed,
            Exit::Code(4) => return Ok(review_drain(runner, until)),
            _ => return Ok(format!("the drain stopped: {}", c.line())),
        }
    }
    Ok("the drain ran out of time (180 s)".into())
}

/// Takes and accepts everything waiting for review (the drain worked on none of it).
/// Returns why it stopped short, or "" when nothing waits.
fn review_drain(runner: &Runner, until: Instant) -> String {
    let run = |op, class, args: Vec<String>, lock: Option<(i64, i64)>| {
        let mut req = Request::new("drain", op, class, args);
        req.refusals = &[3, 4];
        req.item = lock.map(|l| l.0);
        req.token = lock.map(|l| l.1);
        runner.run(runner.next_id(), req)
    };
    while Instant::now() < until {
        let args = ["claim", "--review", "--json"].map(String::from).to_vec();
        let c = run("claim --review", Class::Claim, args, None);
        let (item, token) = match (c.exit, c.claimed) {
            (Exit::Code(0), Some(lock)) => lock,
            (Exit::Code(4), _) => return String::new(),
            _ => return format!("the review drain stopped: {}", c.line()),
        };
        let args = ["accept", &item.to_string(), "--token", &token.to_string()]
            .map(String::from)
            .to_vec();
        let c = run("accept", Class::Holder, args, Some((item, token)));
        if c.exit != Exit::Code(0) {
            return format!("the review drain stopped: {}", c.line());
        }
    }
    "the review drain ran out of time".into()
}

fn write_log(dir: &std::path::Path, calls: &[Call]) -> Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join("calls.log"))?);
    for c in calls {
        writeln!(f, "{}", c.line())?;
    }
    Ok(())
}

/// Prints the table (and the first findings of each kind); true when nothing was found.
fn report(
    args: &Args,
    seed: u64,
    calls: &[Call],
    counts: &Counts,
    f: &analysis::Findings,
    check: &Call,
    drain_note: &str,
    hook_runs: usize,
) -> bool {
    let faults = calls.iter().filter(|c| c.fault.is_some()).count();
    let check_ok = check.exit == Exit::Code(0);
    let backend = match args.backend {
        Kind::Sqlite => "sqlite",
        Kind::Postgres => "postgres",
    };
    let terminated = if args.backend == Kind::Postgres {
        counts.terminated.load(Ordering::Relaxed).to_string()
    } else {
        "-".into()
    };
    println!(
        "| backend | minutes | workers | calls | kills | faults | terminated | duplicates | lost | failed but applied | false refusals | lockouts | errors | check |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    println!(
        "| {backend} | {} | {} | {} | {} | {faults} | {terminated} | {} | {} | {} | {} | {} | {} | {} |",
        args.minutes,
        args.workers,
        calls.len(),
        counts.kills.load(Ordering::Relaxed),
        f.duplicates.len(),
        f.lost.len(),
        f.failed_applied.len(),
        f.false_refusals.len(),
        f.lockouts.len(),
        f.errors.len(),
        if check_ok { "ok" } else { "FAILED" },
    );
    let sections = [
        ("duplicates", &f.duplicates),
        ("lost", &f.lost),
        ("failed but applied", &f.failed_applied),
        ("false refusals", &f.false_refusals),
        ("lockouts", &f.lockouts),
        ("errors", &f.errors),
    ];
    for (name, v) in sections {
        for line in v.iter().take(8) {
            println!("{name}: {line}");
        }
        if v.len() > 8 {
            println!("{name}: ... and {} more", v.len() - 8);
        }
    }
    if !check_ok {
        println!("check: {}", check.finding());
    }
    if !drain_note.is_empty() {
        println!("drain: {drain_note}");
    }
    let judged = |p: &dyn Fn(&Call) -> bool| {
        calls
            .iter()
            .filter(|c| c.class != Class::Setup && p(c))
            .count()
    };
    println!(
        "judged: {} exit-0 writes, {} claims refused 'nothing to claim', {} refused 'taken' or 'lock lost', {} without an answer (killed, exit 6)",
        judged(&|c| c.exit == Exit::Code(0) && c.class != Class::Read),
        judged(&|c| c.exit == Exit::Code(4)),
        judged(&|c| c.exit == Exit::Code(3)),
        judged(&|c| c.exit.unknown()),
    );
    let of = |op: &'static str| calls.iter().filter(move |c| c.op == op);
    let lines = |what: &str| {
        calls
            .iter()
            .filter(|c| c.class == Class::Work)
            .flat_map(|c| c.stdout.lines())
            .filter(|l| l.starts_with('#') && l.contains(what))
            .count()
    };
    println!(
        "new paths: work --exec {} runs ({} killed, {} stopped by SIGTERM) saying {} done, {} failed, {} released; \
         import --skip-duplicates left out {} rows; reject --code {} ok, {} refused for a missing code; \
         events --checkpoint {} calls, {} lines; migrate-to {} tries ({} killed or faulted); \
         a holder's merge {} ok, {} refused",
        of("work").count(),
        of("work").filter(|c| c.exit.unknown()).count(),
        of("work")
            .filter(|c| c.stdout.contains("released (stopped)"))
            .count(),
        lines(" done"),
        lines(" failed: "),
        lines(" released (stopped)"),
        calls
            .iter()
            .filter(|c| c.op.contains("import") && c.exit == Exit::Code(0))
            .map(|c| analysis::skipped_rows(&c.stdout).0)
            .sum::<usize>(),
        of("reject --code")
            .filter(|c| c.exit == Exit::Code(0))
            .count(),
        of("reject --code")
            .filter(|c| analysis::code_refused(c))
            .count(),
        calls.iter().filter(|c| c.op.starts_with("events")).count(),
        calls.iter().map(|c| c.ids.len()).sum::<usize>(),
        of("migrate-to").count(),
        of("migrate-to")
            .filter(|c| c.exit.unknown() || c.fault.is_some())
            .count(),
        of("merge").filter(|c| c.exit == Exit::Code(0)).count(),
        of("merge")
            .filter(|c| matches!(c.exit, Exit::Code(1 | 3 | 5)))
            .count(),
    );
    let coded = |op: &'static str| {
        let ok = of(op).filter(|c| c.exit == Exit::Code(0)).count();
        let refused = of(op).filter(|c| analysis::code_refused(c)).count();
        format!("{ok}/{refused}")
    };
    println!(
        "ready-made codes (ok/refused for a code gone): complete {} fail {} release {} skip {}; \
         complete --override: staff {} ok, {} refused (rules broken), a supervisor's {} ok; \
         events --exec {} calls, {} hook runs",
        coded("complete --code"),
        coded("fail --code"),
        coded("release --code"),
        coded("skip --code"),
        of("complete --override")
            .filter(|c| c.actor != "boss" && c.exit == Exit::Code(0))
            .count(),
        of("complete --override")
            .filter(|c| c.exit == Exit::Code(5))
            .count(),
        of("complete --override")
            .filter(|c| c.actor == "boss" && c.exit == Exit::Code(0))
            .count(),
        calls
            .iter()
            .filter(|c| c.op.starts_with("events --exec"))
            .count(),
        hook_runs,
    );
    println!(
        "seed {seed}: scripts/soak --minutes {} --backend {backend} --workers {} --seed {seed}",
        args.minutes, args.workers
    );
    check_ok && sections.iter().all(|(_, v)| v.is_empty())
}
