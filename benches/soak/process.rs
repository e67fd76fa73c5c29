//! Running the real binary: every call is a process whose exit code, output and time span
//! are logged for the analysis. A call may run under strace with a fault injected, and
//! the killer may SIGKILL any call that is not under strace (strace's own kill lands
//! mid-syscall instead).

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Milliseconds since the epoch, as caseload stores times.
pub(crate) fn now_ms() -> i64 {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    Code(i32),
    /// SIGKILLed by the killer.
    Killed,
    /// Ran past the hang limit and was killed: a lockout.
    Hung,
    /// Ended by a signal it was not sent by the killer (strace's injected SIGKILL).
    Signal(i32),
}

impl Exit {
    /// True when the caller cannot know whether the write happened: killed, or exit 6.
    pub(crate) fn unknown(self) -> bool {
        !matches!(self, Exit::Code(c) if c != 6)
    }
}

/// What a call is, and so what the analysis expects of its effects in the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Setup and drain housekeeping: not judged.
    Setup,
    /// Reads: exit 0, nothing written.
    Read,
    /// Takes an item (`claim`, `claim --id`, `claim --wait`): exit 0 prints the item and
    /// its token; 3 and 4 are refusals, judged against the item's history.
    Claim,
    /// A holder's fenced write on `(item, token)`; 3 is a refusal judged against the lock.
    Holder,
    /// `complete --next`: the complete (as Holder), then a claim (exit 4: completed,
    /// nothing next).
    CompleteNext,
    /// `undo` and an owner's `wake`: exit 0 prints the item locked to the caller under a
    /// new token (an `undone`, or a `woke` and `locked`, must be recorded with it); their
    /// refusals are judged against the item's history (see `analysis`).
    Retake,
    /// A write that must leave at least one row when it exits 0.
    Write,
    /// A write that may find nothing to do (reap, unlock --expired, a re-import).
    MayWrite,
    /// `caseload work --exec`: a long-running worker under its own name. Each line it
    /// printed ("#N done", "#N failed: …", "#N released (stopped)") is an acknowledged
    /// write, whatever became of the process later; a finish it did not print is a
    /// failed-but-applied write when the process ended with a definite answer.
    Work,
}

/// One call of the binary, as it ran.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub(crate) id: usize,
    pub(crate) actor: String,
    pub(crate) op: &'static str,
    pub(crate) args: Vec<String>,
    pub(crate) class: Class,
    /// Refusal codes that are an answer, not an error, for this call.
    pub(crate) refusals: &'static [i32],
    pub(crate) start: i64,
    pub(crate) end: i64,
    pub(crate) exit: Exit,
    /// The strace expression injected, if any.
    pub(crate) fault: Option<String>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    /// The item and token a holder write or `claim --id` names.
    pub(crate) item: Option<i64>,
    pub(crate) token: Option<i64>,
    /// The item and token an exit-0 claim (or complete --next) printed.
    pub(crate) claimed: Option<(i64, i64)>,
    /// The call this one repeats after an unknown outcome.
    pub(crate) retry_of: Option<usize>,
    /// `events`: the ids of the whole lines it printed, in order (read before the kept
    /// output is cut short).
    pub(crate) ids: Vec<i64>,
}

impl Call {
    /// A `check` (of the database, a backup or a copy) that did not answer ok.
    pub(crate) fn failed_check(&self) -> bool {
        self.args.first().is_some_and(|a| a == "check")
            && matches!(self.exit, Exit::Code(c) if c != 0)
    }

    /// What the report says of a call: its [`Call::line`], and for a failing `check` its
    /// whole standard output and error after it (the problems it found, one a line).
    pub(crate) fn finding(&self) -> String {
        if !self.failed_check() {
            return self.line();
        }
        let mut s = self.line();
        for (name, text) in [("stdout", &self.stdout), ("stderr", &self.stderr)] {
            for l in text.lines() {
                s.push_str(&format!("\n    {name}: {l}"));
            }
        }
        s
    }

    /// One line for the report: id, who, what, how it ended.
    pub(crate) fn line(&self) -> String {
        let fault = self
            .fault
            .as_deref()
            .map(|f| format!(" [strace {f}]"))
            .unwrap_or_default();
        let err = self.stderr.lines().next().unwrap_or("");
        format!(
            "call {} {} `{}` exit {:?}{fault} {}..{}: {err}",
            self.id,
            self.actor,
            self.args.join(" "),
            self.exit,
            self.start,
            self.end,
        )
    }
}

/// What to run: the op's name and class, its arguments, and the item/token it concerns.
pub(crate) struct Request {
    pub(crate) actor: String,
    pub(crate) op: &'static str,
    pub(crate) args: Vec<String>,
    pub(crate) class: Class,
    pub(crate) refusals: &'static [i32],
    pub(crate) item: Option<i64>,
    pub(crate) token: Option<i64>,
    pub(crate) fault: Option<String>,
    pub(crate) db: Option<String>,
    pub(crate) retry_of: Option<usize>,
    /// Not for the killer (a rerun that must finish).
    pub(crate) spared: bool,
}

impl Request {
    pub(crate) fn new(actor: &str, op: &'static str, class: Class, args: Vec<String>) -> Request {
        Request {
            actor: actor.to_string(),
            op,
            args,
            class,
            refusals: &[],
            item: None,
            token: None,
            fault: None,
            db: None,
            retry_of: None,
            spared: false,
        }
    }
}

struct Running {
    child: Mutex<Child>,
    killable: bool,
    started: i64,
    killed: AtomicBool,
    hung: AtomicBool,
}

/// Runs calls, keeps the ones running (for the killer) and the log of finished ones.
pub(crate) struct Runner {
    bin: PathBuf,
    db: String,
    dir: PathBuf,
    next: AtomicUsize,
    running: Mutex<HashMap<usize, Arc<Running>>>,
    log: Mutex<Vec<Call>>,
}

/// A call running longer than this is a lockout (claim --wait times out long before).
const HANG_MS: i64 = 90_000;

impl Runner {
    pub(crate) fn new(bin: PathBuf, db: String, dir: PathBuf) -> Runner {
        Runner {
            bin,
            db,
            dir,
            next: AtomicUsize::new(1),
            running: Mutex::new(HashMap::new()),
            log: Mutex::new(Vec::new()),
        }
    }

    /// A fresh call id (also used in markers, so a write's text names its call).
    pub(crate) fn next_id(&self) -> usize {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Runs one call to its end (or its kill) and logs it.
    pub(crate) fn run(&self, id: usize, req: Request) -> Call {
        let mut cmd = match &req.fault {
            Some(expr) => {
                let mut c = Command::new("strace");
                c.args(["-f", "-qq", "-o", "/dev/null", "-e", expr, "--"])
                    .arg(&self.bin);
                c
            }
            None => Command::new(&self.bin),
        };
        cmd.arg("--db")
            .arg(req.db.as_deref().unwrap_or(&self.db))
            .arg("--user")
            .arg(&req.actor)
            .args(&req.args)
            .env_remove("CASELOAD_DB")
            .env_remove("CASELOAD_USER")
            .env("XDG_CONFIG_HOME", self.dir.join("config"))
            .env("XDG_DATA_HOME", self.dir.join("data"))
            .env("XDG_STATE_HOME", self.dir.join("state"))
            .env("NO_COLOR", "1")
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let start = now_ms();
        let (exit, stdout, stderr) = match cmd.spawn() {
            Ok(child) => self.wait(id, child, req.fault.is_none() && !req.spared, start),
            Err(e) => (
                Exit::Code(127),
                String::new(),
                format!("soak: cannot run: {e}"),
            ),
        };
        let end = now_ms();
        let claimed = claimed(&req, exit, &stdout);
        let ids = if req.op.starts_with("events") {
            feed_ids(&stdout)
        } else {
            Vec::new()
        };
        let call = Call {
            id,
            actor: req.actor,
            op: req.op,
            args: req.args,
            class: req.class,
            refusals: req.refusals,
            start,
            end,
            exit,
            fault: req.fault,
            stdout,
            stderr,
            item: req.item,
            token: req.token,
            claimed,
            retry_of: req.retry_of,
            ids,
        };
        let mut kept = call.clone();
        if call.failed_check() {
            // A failing check's whole answer, in the run's directory (the report prints
            // it too): its first line says only how many problems it found.
            let file = self.dir.join(format!("check-{id}.log"));
            if let Err(e) = std::fs::write(&file, call.finding() + "\n") {
                eprintln!("soak: could not write {}: {e}", file.display());
            }
        }
        // `work` prints a line per item it finished, `import` the rows it left out, a
        // failing `check` its problems: kept whole for the analysis.
        if req.class != Class::Work && !req.op.contains("import") && !call.failed_check() {
            kept.stdout.truncate(floor_char(&kept.stdout, 400));
        }
        self.log.lock().expect("log").push(kept);
        call
    }

    fn wait(
        &self,
        id: usize,
        mut child: Child,
        killable: bool,
        started: i64,
    ) -> (Exit, String, String) {
        let out = child.stdout.take();
        let err = child.stderr.take();
        let running = Arc::new(Running {
            child: Mutex::new(child),
            killable,
            started,
            killed: AtomicBool::new(false),
            hung: AtomicBool::new(false),
        });
        self.running
            .lock()
            .expect("running")
            .insert(id, Arc::clone(&running));
        let err_reader = std::thread::spawn(move || read_all(err));
        let stdout = read_all(out);
        let stderr = err_reader.join().unwrap_or_default();
        let status = loop {
            // Reaped under the lock, so the killer never signals a pid the OS reused.
            if let Ok(Some(s)) = running.child.lock().expect("child").try_wait() {
                break s;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        self.running.lock().expect("running").remove(&id);
        use std::os::unix::process::ExitStatusExt;
        let exit = match (status.code(), status.signal()) {
            (Some(c), _) => Exit::Code(c),
            _ if running.hung.load(Ordering::Relaxed) => Exit::Hung,
            _ if running.killed.load(Ordering::Relaxed) => Exit::Killed,
            (None, s) => Exit::Signal(s.unwrap_or(0)),
        };
        (exit, stdout, stderr)
    }

    /// SIGKILLs one running call chosen by `pick` among the killable ones; true if it did.
    pub(crate) fn kill_one(&self, pick: impl FnOnce(usize) -> usize) -> bool {
        let victim = {
            let running = self.running.lock().expect("running");
            let ids: Vec<&Arc<Running>> = running.values().filter(|r| r.killable).collect();
            if ids.is_empty() {
                return false;
            }
            Arc::clone(ids[pick(ids.len())])
        };
        let mut child = victim.child.lock().expect("child");
        if matches!(child.try_wait(), Ok(None)) {
            victim.killed.store(true, Ordering::Relaxed);
            return child.kill().is_ok();
        }
        false
    }

    /// Sends `signal` (a name for kill(1): TERM, KILL) to call `id` if it is still running
    /// (not to strace's tracee: only calls without a fault are signalled); true if it did.
    pub(crate) fn signal(&self, id: usize, signal: &str) -> bool {
        let Some(r) = self.running.lock().expect("running").get(&id).cloned() else {
            return false;
        };
        if !r.killable {
            return false;
        }
        let mut child = r.child.lock().expect("child");
        if !matches!(child.try_wait(), Ok(None)) {
            return false;
        }
        if signal == "KILL" {
            r.killed.store(true, Ordering::Relaxed);
        }
        let pid = child.id().to_string();
        Command::new("kill")
            .args([format!("-{signal}").as_str(), "--", pid.as_str()])
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Kills every call running past the hang limit (strace and its tracee included).
    pub(crate) fn kill_hung(&self) {
        let now = now_ms();
        let hung: Vec<Arc<Running>> = self
            .running
            .lock()
            .expect("running")
            .values()
            .filter(|r| now - r.started > HANG_MS)
            .cloned()
            .collect();
        for r in hung {
            let mut child = r.child.lock().expect("child");
            if matches!(child.try_wait(), Ok(None)) {
                r.hung.store(true, Ordering::Relaxed);
                // The whole group: strace's tracee would run on detached from a killed strace.
                let group = format!("-{}", child.id());
                let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            }
        }
    }

    /// Every call so far, in the order they finished.
    pub(crate) fn calls(&self) -> Vec<Call> {
        let mut calls = self.log.lock().expect("log").clone();
        calls.sort_by_key(|c| c.id);
        calls
    }
}

fn read_all(pipe: Option<impl Read>) -> String {
    let mut buf = Vec::new();
    if let Some(mut p) = pipe {
        let _ = p.read_to_end(&mut buf);
    }
    String::from_utf8_lossy(&buf).into_owned()
}

fn floor_char(s: &str, max: usize) -> usize {
    if s.len() <= max {
        return s.len();
    }
    (0..=max)
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0)
}

/// The `id` of each whole JSON line `caseload events` printed (a line cut by a kill is
/// not one it wrote).
fn feed_ids(stdout: &str) -> Vec<i64> {
    let whole = match stdout.rfind('\n') {
        Some(i) => &stdout[..i],
        None => "",
    };
    whole
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok()?["id"].as_i64())
        .collect()
}

/// The item and token a successful claim (complete --next, undo, wake) printed as JSON.
fn claimed(req: &Request, exit: Exit, stdout: &str) -> Option<(i64, i64)> {
    if !matches!(
        req.class,
        Class::Claim | Class::CompleteNext | Class::Retake
    ) || exit != Exit::Code(0)
    {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).ok()?;
    Some((v["id"].as_i64()?, v["lock_token"].as_i64()?))
}
