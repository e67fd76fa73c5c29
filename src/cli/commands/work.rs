//! `caseload work`: a long-running worker that runs a command per item. Each of its
//! `--concurrency` slots keeps one store (one connection on PostgreSQL, or one pooler
//! client) for its whole life: it takes an item (waiting as `claim --wait` does when there
//! is none), runs CMD with the item's JSON on standard input, renews the lock while CMD
//! runs, then completes with CMD's standard output as the result (exit 0) or fails the
//! item with the last line CMD wrote to standard error, and takes the next item in the
//! complete's own transaction. SIGINT or SIGTERM stops CMD and releases the lock.
//! Commands live on the worker's command line, never in the database: a person who can
//! write the database cannot make anyone run a command.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use clap::Args;
use signal_hook::consts::{SIGINT, SIGTERM};

use crate::cli::output::item_json;
use crate::cli::{CliResult, Failure, Invocation, open_store_patiently};
use crate::domain::texts::Said;
use crate::domain::{Item, sanitize};
use crate::store::{Store, StoreError, TakeNext, exit};

use super::holder::{WAIT_POLL, offline, take_waiting};

/// `caseload work`'s flags.
#[derive(Debug, Args)]
pub struct WorkArgs {
    /// Take from this queue only (default: every queue).
    #[arg(long)]
    pub queue: Option<String>,
    /// Work items waiting for review: CMD's exit 0 accepts (its output the comment), any
    /// other rejects with its last line on standard error as the reason.
    #[arg(long)]
    pub review: bool,
    /// Run CMD (with `sh -c`) for each item: the item's JSON (as `claim --json` prints
    /// it) on its standard input, CASELOAD_ITEM_ID and CASELOAD_LOCK_TOKEN set. Exit 0
    /// completes the item with CMD's standard output as the result; any other exit fails
    /// it with the last line CMD wrote to standard error as the reason.
    #[arg(long, value_name = "CMD")]
    pub exec: String,
    /// How many items to work at once, each slot with its own connection.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=256))]
    pub concurrency: u32,
    /// Stop after taking this many items (all slots together), once they are finished.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_items: Option<u64>,
    /// Stop when a slot has found nothing to take for this many seconds (default: wait
    /// for work forever).
    #[arg(long, value_name = "SECS")]
    pub idle_exit: Option<u64>,
}

/// How long CMD is given to end after SIGTERM (on a stop) before SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(10);

/// The longest reason kept from CMD's standard error.
const REASON_MAX: usize = 500;

/// What every slot shares: the flags, the stop flag signals set, the items taken.
struct Job {
    exec: String,
    next: TakeNext,
    review: bool,
    idle_exit: Option<Duration>,
    max_items: Option<u64>,
    taken: AtomicU64,
    stop: Arc<AtomicBool>,
}

impl Job {
    /// Counts one more item to take; false when `--max-items` are all taken.
    fn reserve(&self) -> bool {
        let n = self.taken.fetch_add(1, Ordering::SeqCst);
        if self.max_items.is_some_and(|m| n >= m) {
            self.taken.fetch_sub(1, Ordering::SeqCst);
            return false;
        }
        true
    }

    /// Gives back a reservation no item was taken for.
    fn unreserve(&self) {
        self.taken.fetch_sub(1, Ordering::SeqCst);
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

/// What became of one item.
enum Outcome {
    Done(String),
    Failed(String),
    Stopped,
    Lost(StoreError),
}

/// What a slot tells the main thread: a line for standard output (with what became of
/// the item, for the summary: done, failed, released, or neither) or standard error.
enum Line {
    Out(String, Option<usize>),
    Err(String),
}

const DONE: usize = 0;
const FAILED: usize = 1;
const RELEASED: usize = 2;

/// `caseload work`.
pub(crate) fn work(ctx: &Invocation, a: &WorkArgs, out: &mut dyn Write) -> CliResult {
    let stop = Arc::new(AtomicBool::new(false));
    // Set by signals only: a slot's error also sets `stop` (the others stop too), and a
    // first signal after that must still release what the other slots hold.
    let signalled = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // The first signal stops the worker (CMD ended, lock released); a second ends the
        // process at once (the lock then expires as usual).
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&signalled));
        let _ = signal_hook::flag::register(sig, Arc::clone(&signalled));
        let _ = signal_hook::flag::register(sig, Arc::clone(&stop));
    }
    let mut stores = Vec::new();
    for _ in 0..a.concurrency {
        stores.push(open_store_patiently(ctx)?);
    }
    if let (Some(q), Some(s)) = (&a.queue, stores.first_mut()) {
        s.queue(q)?; // an unknown queue is a typo, not an empty one
    }
    let job = Arc::new(Job {
        exec: a.exec.clone(),
        next: TakeNext {
            queue: a.queue.clone(),
            skip: vec![],
        },
        review: a.review,
        idle_exit: a.idle_exit.map(Duration::from_secs),
        max_items: a.max_items,
        taken: AtomicU64::new(0),
        stop,
    });
    let (tx, rx) = mpsc::channel();
    let slots: Vec<_> = stores
        .into_iter()
        .map(|s| {
            let (job, tx) = (Arc::clone(&job), tx.clone());
            std::thread::spawn(move || {
                let r = slot(s, &job, &tx);
                if r.is_err() {
                    job.stop.store(true, Ordering::SeqCst); // the others stop too
                }
                r
            })
        })
        .collect();
    drop(tx);
    let mut counts = [0u64; 3];
    for said in rx {
        match said {
            Line::Out(line, what) => {
                if let Some(i) = what {
                    counts[i] += 1;
                }
                writeln!(out, "{line}")?;
                out.flush()?;
            }
            Line::Err(line) => eprintln!("{line}"),
        }
    }
    let mut first_err = None;
    for h in slots {
        let r = h
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("a worker slot panicked").into()));
        if let (Err(e), None) = (r, &first_err) {
            first_err = Some(e);
        }
    }
    let [done, failed, released] = counts;
    writeln!(
        out,
        "work: {done} done, {failed} failed, {released} released"
    )?;
    first_err.map_or(Ok(()), Err)
}

/// One slot: takes, runs, finishes, until stopped, idle, or `--max-items` are taken.
fn slot(mut s: Box<dyn Store>, job: &Job, tx: &Sender<Line>) -> CliResult {
    let s = &mut *s;
    let mut next: Option<Item> = None;
    loop {
        let item = match next.take() {
            Some(i) => i,
            None => match claim(s, job)? {
                Some(i) => i,
                None => return Ok(()),
            },
        };
        let (id, token) = (item.id, item.lock_token);
        let outcome = run(s, job, &item, tx)?;
        let (line, what) = match outcome {
            Outcome::Done(result) => {
                let said = Said::text((!result.is_empty()).then_some(result.as_str()));
                match finish_done(s, job, (id, token), said) {
                    Ok(taken) => {
                        next = taken;
                        (format!("#{id} done"), Some(DONE))
                    }
                    Err(e) => (finished_badly(id, e)?, None),
                }
            }
            Outcome::Failed(reason) => {
                let r = match job.review {
                    true => s.reject(id, token, &reason).map(|_| ()),
                    false => s
                        .fail_said(id, token, Said::text(Some(&reason)))
                        .map(|_| ()),
                };
                match r {
                    Ok(()) => (format!("#{id} failed: {reason}"), Some(FAILED)),
                    Err(e) => (finished_badly(id, e)?, None),
                }
            }
            Outcome::Stopped => {
                let why = Said::text(Some("caseload work was stopped"));
                let said = match s.release_said(id, token, why) {
                    Ok(_) => (format!("#{id} released (stopped)"), Some(RELEASED)),
                    Err(e) => (finished_badly(id, e)?, None),
                };
                let _ = tx.send(Line::Out(sanitize::line(&said.0).into_owned(), said.1));
                return Ok(());
            }
            Outcome::Lost(e) => (format!("#{id} lock lost while CMD ran: {e}"), None),
        };
        let _ = tx.send(Line::Out(sanitize::line(&line).into_owned(), what));
    }
}

/// Completes (or accepts) a finished item; takes the next one in the same transaction
/// when one more may be taken (not for reviews, which have no such step).
fn finish_done(
    s: &mut dyn Store,
    job: &Job,
    (id, token): (i64, i64),
    said: Said<'_>,
) -> crate::store::Result<Option<Item>> {
    if job.review {
        return s.accept(id, token, said.text).map(|_| None);
    }
    if job.stopping() || !job.reserve() {
        return s.complete_said(id, token, said, None).map(|_| None);
    }
    match s.complete_and_next_said(id, token, said, None, &job.next) {
        Ok(done) => match done.next {
            Ok(item) => Ok(Some(item)),
            Err(e) => {
                job.unreserve();
                match e.exit_code() {
                    exit::NOTHING => Ok(None),
                    _ => Err(e),
                }
            }
        },
        Err(e) => {
            job.unreserve();
            Err(e)
        }
    }
}

/// A finish the store refused: a lock lost, a write whose outcome is unknown or a lost
/// connection (a failover) is said and the worker goes on (the item is someone else's,
/// finished, or its lock expires and it is taken again); anything else stops the worker.
fn finished_badly(id: i64, e: StoreError) -> Result<String, Failure> {
    match e.exit_code() {
        _ if matches!(e, StoreError::Connection(_)) => Ok(format!("#{id} not finished: {e}")),
        exit::CONFLICT | exit::UNKNOWN => Ok(format!("#{id} not finished: {e}")),
        _ => Err(Failure {
            code: e.exit_code(),
            error: anyhow::anyhow!("#{id}: {e}"),
        }),
    }
}

/// Takes the next item, waiting while there is none; `None` when stopped, idle for
/// `--idle-exit`, or all of `--max-items` are taken.
fn claim(s: &mut dyn Store, job: &Job) -> Result<Option<Item>, Failure> {
    if !job.reserve() {
        return Ok(None);
    }
    let since = Instant::now();
    let pause = &mut |_: &str| {
        if job.stopping() || job.idle_exit.is_some_and(|d| since.elapsed() >= d) {
            return Ok(false);
        }
        std::thread::sleep(WAIT_POLL);
        Ok(true)
    };
    let taken = match job.stopping() {
        true => None,
        false => take_waiting(s, &job.next, job.review, pause)?,
    };
    if taken.is_none() {
        job.unreserve();
    }
    Ok(taken)
}

/// Runs CMD for `item`, renewing the lock while it runs.
fn run(s: &mut dyn Store, job: &Job, item: &Item, tx: &Sender<Line>) -> Result<Outcome, Failure> {
    let input = serde_json::to_string(&item_json(item)?)?;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(&job.exec)
        .env("CASELOAD_ITEM_ID", item.id.to_string())
        .env("CASELOAD_LOCK_TOKEN", item.lock_token.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group: a Ctrl-C at the terminal reaches the worker, which
        // stops CMD itself and then releases the lock.
        .process_group(0)
        .spawn()
        .map_err(|e| anyhow::anyhow!("cannot start sh for --exec: {e}"))?;
    let pid = child.id();
    if let Some(mut stdin) = child.stdin.take() {
        // A CMD that does not read its input is not a failure.
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
            let _ = stdin.write_all(b"\n");
        });
    }
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(child.wait_with_output());
    });
    let every = renew_every(item);
    let mut renewed = Instant::now();
    let mut said = None;
    loop {
        let wait = every.saturating_sub(renewed.elapsed()).min(WAIT_POLL);
        match done_rx.recv_timeout(wait) {
            Ok(output) => {
                let output = output.map_err(|e| anyhow::anyhow!("waiting for --exec: {e}"))?;
                return Ok(judge(item.id, &output, tx));
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(anyhow::anyhow!("lost track of --exec for #{}", item.id).into());
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        if job.stopping() {
            end(pid, &done_rx);
            return Ok(Outcome::Stopped);
        }
        if renewed.elapsed() >= every {
            match s.renew(item.id, item.lock_token) {
                Ok(_) => renewed = Instant::now(),
                Err(e) if offline(&e, &mut said) || e.exit_code() == exit::UNKNOWN => {
                    renewed = Instant::now();
                }
                Err(e) => {
                    end(pid, &done_rx);
                    return match e.exit_code() {
                        exit::CONFLICT => Ok(Outcome::Lost(e)),
                        _ => Err(e.into()),
                    };
                }
            }
        }
    }
}

/// A third of the lock's length: two renewals may fail before it expires.
fn renew_every(item: &Item) -> Duration {
    let length = match (item.lock_time, item.lock_expires_at) {
        (Some(at), Some(until)) => until - at,
        _ => 60_000,
    };
    Duration::from_millis((length / 3).max(200) as u64)
}

/// CMD's verdict: its output as the result, or its last line on standard error (else its
/// exit status) as the reason. Its standard error goes on to the worker's, each line
/// named by the item and made safe for a terminal.
fn judge(id: i64, output: &Output, tx: &Sender<Line>) -> Outcome {
    let err = String::from_utf8_lossy(&output.stderr);
    for line in err.lines().filter(|l| !l.trim().is_empty()) {
        let _ = tx.send(Line::Err(format!("#{id}: {}", sanitize::line(line))));
    }
    if output.status.success() {
        let out = String::from_utf8_lossy(&output.stdout);
        return Outcome::Done(out.trim_end_matches(['\n', '\r']).to_string());
    }
    let last = err.lines().rev().map(str::trim).find(|l| !l.is_empty());
    let reason = match (last, output.status.code()) {
        (Some(l), _) => l.chars().take(REASON_MAX).collect(),
        (None, Some(c)) => format!("--exec exited with code {c}"),
        (None, None) => format!("--exec ended: {}", output.status),
    };
    Outcome::Failed(reason)
}

/// Stops CMD's process group: SIGTERM, then SIGKILL after [`KILL_GRACE`].
fn end(pid: u32, done: &mpsc::Receiver<std::io::Result<Output>>) {
    crate::sys::signal_group(pid, libc::SIGTERM);
    if done.recv_timeout(KILL_GRACE).is_err() {
        crate::sys::signal_group(pid, libc::SIGKILL);
        let _ = done.recv_timeout(KILL_GRACE);
    }
}
