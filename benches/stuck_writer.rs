//! The stuck writer: key-to-frame latency in a TUI while another program holds the
//! database's write lock and is stopped (SIGSTOP, as Ctrl-Z on an import) for 20 s.
//!
//! ```text
//! cargo bench --bench stuck_writer
//! ```
//!
//! `CL_STUCK_SECS` (default 20) is how long the writer stays stopped; `CL_STUCK_ITEMS`
//! (default 100,000) how many open items the file has. The TUI is the real `Session` and
//! `run_loop` drawing into a 120x40 TestBackend, fed by a scripted terminal that presses a
//! key every 20 ms and times each one to the frame the loop draws after it. While the
//! writer is stopped the user first presses `n` (take next: a write, which waits for the
//! lock on the store's worker thread), then keeps going: moving, paging, switching views,
//! help, and `n`/Enter again (refused: one change at a time). The writer is this binary,
//! re-executed with `__hold DB`.

// Benchmarks may unwrap (a panic is the failure, with its message), be long, and drive
// the OS directly (kill, mounts, setuid); the product's C calls are all in src/sys.rs.
#![allow(clippy::unwrap_used, clippy::too_many_lines, unsafe_code)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use caseload::domain::{Actor, NewItem};
use caseload::store::sqlite::{OpenOptions, SqliteStore};
use caseload::store::{AddOptions, Writes};
use caseload::tui::{EventSource, Session, run_loop};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

const INTERVAL: Duration = Duration::from_millis(20);
const TARGET: Duration = Duration::from_millis(16);

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The child: takes the write lock, says HELD, lets go when a line arrives.
fn hold(db: &str) {
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute_batch("BEGIN IMMEDIATE").unwrap();
    println!("HELD");
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    c.execute_batch("ROLLBACK").unwrap();
}

/// Another process holding the write lock, stopped.
struct StoppedWriter(Child);

impl StoppedWriter {
    fn start(db: &Path) -> StoppedWriter {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .arg("__hold")
            .arg(db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let held = out.lines().any(|l| l.unwrap().contains("HELD"));
        let w = StoppedWriter(child);
        assert!(held, "the writer took the lock");
        w.signal(libc::SIGSTOP);
        w
    }

    fn signal(&self, sig: libc::c_int) {
        // SAFETY: a signal to our own child, not reaped yet.
        unsafe { libc::kill(self.0.id() as libc::pid_t, sig) };
    }

    fn go_on(&mut self) {
        self.signal(libc::SIGCONT);
        if let Some(stdin) = self.0.stdin.as_mut() {
            let _ = writeln!(stdin);
        }
    }
}

impl Drop for StoppedWriter {
    fn drop(&mut self) {
        self.signal(libc::SIGCONT);
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

/// A terminal that presses `keys` in turn every [`INTERVAL`] until `until`, then `q`; each
/// key is timed to the loop's next call here, which comes right after it drew the frame.
struct Typist {
    keys: Vec<KeyEvent>,
    first: Option<KeyEvent>,
    i: usize,
    next_at: Instant,
    until: Instant,
    pressed: Option<Instant>,
    samples: Vec<Duration>,
}

impl Typist {
    fn new(first: Option<KeyEvent>, secs: u64) -> Typist {
        use KeyCode::*;
        let keys = [
            Char('j'),
            Char('j'),
            Char('k'),
            PageDown,
            PageUp,
            Char('2'),
            Char('1'),
            Char('?'),
            Esc,
            Char('3'),
            Char('1'),
            Char('4'),
            Char('1'),
            Char('G'),
            Char('g'),
            Char('n'),
            Enter,
            Esc,
        ]
        .map(key)
        .to_vec();
        let now = Instant::now();
        Typist {
            keys,
            first,
            i: 0,
            next_at: now,
            until: now + Duration::from_secs(secs),
            pressed: None,
            samples: Vec::new(),
        }
    }
}

impl EventSource for Typist {
    fn next(&mut self, timeout: Duration) -> std::io::Result<Option<Event>> {
        if let Some(t) = self.pressed.take() {
            self.samples.push(t.elapsed());
        }
        let now = Instant::now();
        if now >= self.until {
            return Ok(Some(Event::Key(key(KeyCode::Char('q')))));
        }
        if now < self.next_at {
            std::thread::sleep((self.next_at - now).min(timeout));
            if Instant::now() < self.next_at {
                return Ok(None);
            }
        }
        self.next_at += INTERVAL;
        let k = self.first.take().unwrap_or_else(|| {
            self.i += 1;
            self.keys[(self.i - 1) % self.keys.len()]
        });
        self.pressed = Some(Instant::now());
        Ok(Some(Event::Key(k)))
    }
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p / 100.0).round() as usize;
    sorted[i]
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

/// Runs the typist through the real loop; returns the sorted key-to-frame times.
fn type_for(session: &mut Session, first: Option<KeyEvent>, secs: u64) -> Vec<Duration> {
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let mut typist = Typist::new(first, secs);
    session.state.quit = false;
    run_loop(&mut term, session, &mut typist, &AtomicBool::new(false)).unwrap();
    let mut s = typist.samples;
    s.sort_unstable();
    s
}

fn row(what: &str, s: &[Duration]) {
    let max = s.last().copied().unwrap_or_default();
    println!(
        "| {what} | {} | {} | {} | {} | {} |",
        s.len(),
        ms(pct(s, 50.0)),
        ms(pct(s, 99.0)),
        ms(max),
        if max < TARGET { "yes" } else { "**NO**" }
    );
}

/// CPU time (user + system, in clock ticks) of this process's thread named `name`.
fn thread_ticks(name: &str) -> Option<u64> {
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim() == name {
            let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
            let after = stat.rsplit_once(')')?.1;
            let f: Vec<&str> = after.split_whitespace().collect();
            return Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?);
        }
    }
    None
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("__hold") {
        hold(&args[1]);
        return;
    }
    let secs = env_num("CL_STUCK_SECS", 20);
    let items = env_num("CL_STUCK_ITEMS", 100_000) as usize;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    let t = Instant::now();
    {
        let mut feeder =
            SqliteStore::open(&db, Actor::new("feeder", "feeder"), &OpenOptions::default())
                .unwrap();
        let queues = ["helpdesk", "verification", "fulfilment"];
        let mut batch = Vec::with_capacity(2000);
        for i in 0..items {
            let mut it = NewItem::titled(&format!("Item {i} of the stuck-writer benchmark"));
            it.queue = queues[i % 3].to_string();
            it.priority = (i % 5) as i64;
            batch.push(it);
            if batch.len() == 2000 || i + 1 == items {
                feeder
                    .add_items(&batch, AddOptions::creating_queues())
                    .unwrap();
                batch.clear();
            }
        }
    }
    println!(
        "stuck writer: {items} open items built in {:.1} s; writer stopped for {secs} s; \
         load average {}",
        t.elapsed().as_secs_f64(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    let store =
        SqliteStore::open(&db, Actor::new("alice", "alice"), &OpenOptions::default()).unwrap();
    let mut session = Session::start(
        Box::new(store),
        caseload::tui::system_clock(),
        120,
        40,
        true,
    )
    .unwrap();
    session.settle(Duration::from_secs(10));

    let quiet = type_for(&mut session, None, 5);

    let mut writer = StoppedWriter::start(&db);
    let cpu_before = thread_ticks(caseload::tui::WORKER_THREAD);
    let stuck = type_for(&mut session, Some(key(KeyCode::Char('n'))), secs);
    let cpu_after = thread_ticks(caseload::tui::WORKER_THREAD);
    let still_waiting = session.state.doing.is_some();
    let waiting_line = session.state.waiting();
    let t = Instant::now();
    writer.go_on();
    session.settle_change(Duration::from_secs(30));
    let answer = t.elapsed();
    let status = session.state.status.clone().map(|s| s.text);
    let after = type_for(&mut session, None, 3);
    drop(writer);

    println!();
    println!("| phase | keys | p50 ms | p99 ms | max ms | max < 16 ms |");
    println!("| --- | --- | --- | --- | --- | --- |");
    row("no other writer", &quiet);
    row(
        &format!("writer stopped holding the lock ({secs} s)"),
        &stuck,
    );
    row("after it continued", &after);
    println!();
    println!(
        "take under way all through the stop: {still_waiting}; waiting line at the end: {:?}",
        waiting_line.unwrap_or_default()
    );
    println!(
        "from SIGCONT to the take's answer on screen: {} ms ({})",
        ms(answer),
        status.unwrap_or_default()
    );
    if let (Some(a), Some(b)) = (cpu_before, cpu_after) {
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        println!(
            "CPU of the store's thread while its call waited (SQLite's busy handler): {:.1} % of a core",
            (b - a) as f64 / hz / secs as f64 * 100.0
        );
    }
    assert!(still_waiting, "the take waited for the writer");
}
