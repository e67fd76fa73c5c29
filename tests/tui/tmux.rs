//! The real binary in a real terminal (tmux): take, complete, quit, and the terminal comes
//! back; a hang-up (SIGHUP) restores it too and leaves the lock held; a writer stopped
//! while it holds the write lock (SIGSTOP) never freezes the screen.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::cli::BIN;
use crate::support::tmux::{Tmux, caseload};

/// A fresh database in a temporary directory holding one item, "Fix the printer" (the
/// directory lives as long as the returned guard).
fn printer_db() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    caseload(&db, "feeder", &["init"]);
    caseload(&db, "feeder", &["add", "--title", "Fix the printer"]);
    (dir, db)
}

/// The pid of the caseload running under the pane's shell.
fn caseload_pid(t: &Tmux) -> String {
    let shell = t.format("#{pane_pid}");
    let out = Command::new("pgrep").args(["-P", &shell]).output().unwrap();
    let pid = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(!pid.is_empty(), "caseload's pid under the shell {shell}");
    pid
}

fn start_tui(t: &Tmux, db: &Path) {
    t.wait_for("the shell prompt", |s| s.contains("READY$"));
    t.send(&[
        &format!("clear; {BIN} --db {} --user alice", db.display()),
        "Enter",
    ]);
    t.wait_for("the queue", |s| {
        s.contains("1 Queue") && s.contains("Fix the printer")
    });
    assert_eq!(
        t.format("#{alternate_on}"),
        "1",
        "the TUI uses the alternate screen"
    );
}

#[test]
fn take_complete_quit_in_a_real_terminal() {
    let (_dir, db) = printer_db();
    let Some(t) = Tmux::start("flow") else {
        return;
    };
    start_tui(&t, &db);
    t.send(&["n"]);
    t.wait_for("the detail pane", |s| {
        s.contains("yours, 30m00s left") || s.contains("yours, 29m")
    });
    t.send(&["c"]);
    t.wait_for("the confirmation", |s| s.contains("Complete #1?"));
    t.send(&["Enter"]);
    t.wait_for("the completion", |s| s.contains("Completed #1"));
    t.send(&["q"]);
    let s = t.wait_for("the prompt again", |s| {
        s.contains("READY$") && !s.contains("1 Queue")
    });
    assert!(!s.contains("Completed"), "the TUI's screen is gone: {s}");
    assert_eq!(t.format("#{alternate_on}"), "0", "alternate screen left");
    assert_eq!(t.format("#{cursor_flag}"), "1", "cursor shown again");
    // Raw mode is off: the shell echoes typed text and runs it on Enter.
    t.send(&["echo cooked-$((40+2))", "Enter"]);
    t.wait_for("the shell to run a command", |s| s.contains("cooked-42"));
    let shown = caseload(&db, "feeder", &["show", "1", "--json"]);
    assert!(
        shown.contains("\"state\":\"done\"") || shown.contains("\"state\": \"done\""),
        "{shown}"
    );
    assert!(shown.contains("alice"), "{shown}");
}

#[test]
fn hangup_restores_the_terminal_and_keeps_the_lock() {
    let (_dir, db) = printer_db();
    let Some(t) = Tmux::start("hup") else {
        return;
    };
    start_tui(&t, &db);
    t.send(&["n"]);
    t.wait_for("the detail pane", |s| s.contains("yours, "));
    let pid = caseload_pid(&t);
    assert!(
        Command::new("kill")
            .args(["-HUP", &pid])
            .status()
            .unwrap()
            .success()
    );
    t.wait_for("the prompt again", |s| {
        s.contains("READY$") && !s.contains("1 Queue")
    });
    assert_eq!(t.format("#{alternate_on}"), "0", "alternate screen left");
    let shown = caseload(&db, "feeder", &["list", "--state", "locked", "--json"]);
    assert!(
        shown.contains("\"lock_user\":\"alice\"") || shown.contains("\"lock_user\": \"alice\""),
        "{shown}"
    );
}

#[test]
fn a_vanished_terminal_ends_the_program_and_keeps_the_lock() {
    let (_dir, db) = printer_db();
    let Some(t) = Tmux::start("gone") else {
        return;
    };
    start_tui(&t, &db);
    t.send(&["n"]);
    t.wait_for("the detail pane", |s| s.contains("yours, "));
    let pid = caseload_pid(&t);
    // The whole terminal disappears (as when an SSH connection drops): no key, no quit.
    t.cmd(&["kill-server"]);
    let start = Instant::now();
    while Path::new(&format!("/proc/{pid}")).exists() {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.split_whitespace().nth(2) == Some("Z") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(6),
            "caseload {pid} still runs after its terminal went away"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let shown = caseload(&db, "feeder", &["list", "--state", "locked", "--json"]);
    assert!(
        shown.contains("\"lock_user\":\"alice\"") || shown.contains("\"lock_user\": \"alice\""),
        "the lock stays held for alice to resume: {shown}"
    );
}

/// Not a test on its own: the stuck writer, run by the tests below as a child process of
/// this test binary (with `CASELOAD_HOLD_DB` set). It takes the database's write lock,
/// says HELD, and lets go when a line arrives on its standard input.
#[test]
fn stuck_writer_child() {
    let Some(db) = std::env::var_os("CASELOAD_HOLD_DB") else {
        return;
    };
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute_batch("BEGIN IMMEDIATE").unwrap();
    println!("HELD");
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    c.execute_batch("ROLLBACK").unwrap();
}

/// Another program holding the write lock, stopped (SIGSTOP) as by Ctrl-Z. Dropping it
/// continues and ends it.
struct StoppedWriter {
    child: Child,
}

impl StoppedWriter {
    fn start(db: &Path) -> StoppedWriter {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "tmux::stuck_writer_child", "--nocapture"])
            .args(["--test-threads", "1"])
            .env("CASELOAD_HOLD_DB", db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut held = false;
        for line in out.lines() {
            if line.unwrap().contains("HELD") {
                held = true;
                break;
            }
        }
        let w = StoppedWriter { child };
        assert!(held, "the writer took the lock");
        w.signal(libc::SIGSTOP);
        w
    }

    fn signal(&self, sig: libc::c_int) {
        // SAFETY: a signal to our own child, which has not been reaped yet.
        unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
    }

    /// Continues it; it lets go of the lock and ends.
    fn go_on(&mut self) {
        self.signal(libc::SIGCONT);
        if let Some(stdin) = self.child.stdin.as_mut() {
            let _ = writeln!(stdin);
        }
    }
}

impl Drop for StoppedWriter {
    fn drop(&mut self) {
        self.signal(libc::SIGCONT);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const WAITING: &str = "waiting for the database — another program holds it";

#[test]
fn a_stopped_writer_never_freezes_the_screen_and_the_take_happens_when_it_goes_on() {
    let (_dir, db) = printer_db();
    let Some(t) = Tmux::start("stuck") else {
        return;
    };
    start_tui(&t, &db);
    let mut writer = StoppedWriter::start(&db);

    t.send(&["n"]);
    let s = t.wait_for("the waiting line", |s| s.contains(WAITING));
    assert!(s.contains("Taking the next item: "), "{s}");
    // Keys work while the take waits: help opens and closes, views switch.
    t.send(&["?"]);
    t.wait_for("the help screen", |s| s.contains("Keys (j/k scroll"));
    t.send(&["Escape"]);
    t.wait_for("the help closed", |s| !s.contains("Keys (j/k scroll"));
    t.send(&["3"]);
    t.wait_for("the Locks view", |s| s.contains("holder's day"));
    t.send(&["1"]);
    t.wait_for("the Queue view", |s| {
        s.contains("Enter take/open") && s.contains("Fix the printer")
    });
    let s = t.wait_for("the wait counting up", |s| {
        s.contains("another program holds it (2 s)") || s.contains("another program holds it (3 s)")
    });
    assert!(s.contains("free"), "nothing taken yet: {s}");

    writer.go_on();
    let s = t.wait_for("the take", |s| s.contains("Took #1: Fix the printer"));
    assert!(!s.contains(WAITING), "{s}");
    let shown = caseload(&db, "feeder", &["list", "--state", "locked", "--json"]);
    assert!(
        shown.contains("\"lock_user\":\"alice\"") || shown.contains("\"lock_user\": \"alice\""),
        "{shown}"
    );
}

#[test]
fn quitting_while_a_take_waits_closes_the_screen_and_says_how_it_ended() {
    let (_dir, db) = printer_db();
    let Some(t) = Tmux::start("stuckquit") else {
        return;
    };
    start_tui(&t, &db);
    let mut writer = StoppedWriter::start(&db);
    t.send(&["n"]);
    t.wait_for("the waiting line", |s| s.contains(WAITING));
    t.send(&["q"]);
    let s = t.wait_for("the screen to close", |s| {
        s.contains("caseload: waiting for the database to finish taking the next item")
    });
    assert_eq!(
        t.format("#{alternate_on}"),
        "0",
        "alternate screen left: {s}"
    );
    assert!(s.contains("Ctrl-C"), "says how to stop waiting: {s}");

    writer.go_on();
    let s = t.wait_for("the outcome and the prompt", |s| {
        s.contains("caseload: Took #1: Fix the printer") && s.trim_end().ends_with("READY$")
    });
    assert!(
        s.find("caseload: waiting") < s.find("caseload: Took #1"),
        "printed in order, nothing overwritten: {s}"
    );
    let shown = caseload(&db, "feeder", &["list", "--state", "locked", "--json"]);
    assert!(
        shown.contains("\"lock_user\":\"alice\"") || shown.contains("\"lock_user\": \"alice\""),
        "the take committed and was told: {shown}"
    );
}

#[test]
fn ctrl_z_suspends_to_the_shell_and_fg_brings_the_screen_back() {
    let (_dir, db) = printer_db();
    let Some(t) = Tmux::start("suspend") else {
        return;
    };
    start_tui(&t, &db);
    t.send(&["n"]);
    t.wait_for("the detail pane", |s| s.contains("yours, "));
    t.send(&["e"]);
    t.wait_for("the notes editor", |s| s.contains("Notes on #1"));
    t.send(&["-l", "half typed"]);
    t.wait_for("the typing", |s| s.contains("half typed"));
    t.send(&["C-z"]);
    let s = t.wait_for("the shell", |s| {
        s.contains("Stopped") && !s.contains("Notes on #1")
    });
    assert_eq!(
        t.format("#{alternate_on}"),
        "0",
        "alternate screen left: {s}"
    );
    // The shell works normally (cooked mode, echo).
    t.send(&["echo cooked-$((40+2))", "Enter"]);
    t.wait_for("the shell to run a command", |s| s.contains("cooked-42"));
    t.send(&["fg", "Enter"]);
    t.wait_for("the screen again, as it was", |s| {
        s.contains("Notes on #1") && s.contains("half typed") && !s.contains("cooked-42")
    });
    assert_eq!(t.format("#{alternate_on}"), "1");
    // Keys work again: the editor takes typing, Esc keeps the draft, q backs out, q quits.
    t.send(&["-l", " still here"]);
    t.wait_for("typing after fg", |s| s.contains("half typed still here"));
    t.send(&["Escape"]);
    t.wait_for("the draft kept", |s| s.contains("kept as a draft"));
    t.send(&["q"]);
    t.wait_for("the list", |s| s.contains("TITLE"));
    t.send(&["q"]);
    t.wait_for("the quit question (unsaved notes)", |s| s.contains("Quit?"));
    t.send(&["Enter"]);
    t.wait_for("the prompt again", |s| {
        s.contains("READY$") && !s.contains("1 Queue")
    });
}

#[test]
fn ctrl_z_with_no_shell_to_come_back_to_does_not_freeze_the_terminal() {
    let (_dir, db) = printer_db();
    let Some(t) = Tmux::start("nojobs") else {
        return;
    };
    t.wait_for("the shell prompt", |s| s.contains("READY$"));
    // caseload as the terminal's own program (as `ssh -t host caseload` starts it): no
    // shell could `fg` it, so Ctrl-Z must not stop it.
    let cmd = format!("{BIN} --db {} --user alice", db.display());
    assert!(
        t.cmd(&["respawn-pane", "-k", "-t", "0", &cmd])
            .status
            .success()
    );
    t.wait_for("the queue", |s| s.contains("Fix the printer"));
    t.send(&["C-z"]);
    t.wait_for("the reason", |s| s.contains("no shell to come back to"));
    t.send(&["n"]);
    t.wait_for("keys still working", |s| s.contains("yours, "));
}

#[test]
fn ctrl_z_under_a_non_interactive_shell_stops_the_job_and_fg_brings_it_back() {
    let (_dir, db) = printer_db();
    let Some(t) = Tmux::start("subshell") else {
        return;
    };
    t.wait_for("the shell prompt", |s| s.contains("READY$"));
    // caseload under `bash -c`, itself a job of the interactive shell: the whole job stops
    // and `fg` continues it.
    t.send(&[
        &format!(
            "clear; bash -c 'true; {BIN} --db {} --user alice'",
            db.display()
        ),
        "Enter",
    ]);
    t.wait_for("the queue", |s| s.contains("Fix the printer"));
    t.send(&["C-z"]);
    t.wait_for("the shell", |s| s.contains("Stopped"));
    t.send(&["fg", "Enter"]);
    t.wait_for("the screen again", |s| s.contains("Fix the printer"));
    t.send(&["q"]);
    t.wait_for("the prompt again", |s| {
        s.contains("READY$") && !s.contains("1 Queue")
    });
}

#[test]
fn an_assignment_reaches_the_assignees_screen_at_once() {
    let (_dir, db) = printer_db();
    let Some(t) = Tmux::start("assign") else {
        return;
    };
    start_tui(&t, &db);
    // alice opened the screen, so she is a known user; feeder created the database and
    // is its supervisor.
    caseload(
        &db,
        "feeder",
        &[
            "assign",
            "1",
            "--to",
            "alice",
            "--reason",
            "you know this printer",
        ],
    );
    let s = t.wait_for("the notice", |s| s.contains("feeder gave you #1"));
    assert!(s.contains("you know this printer"), "{s}");
    assert!(s.contains("1 held"), "the header counts it: {s}");
    t.send(&["Enter", "2"]);
    // (Mine's hint line: `2` acts once it is clear no typing follows it.)
    let s = t.wait_for("Mine", |s| {
        s.contains("assigned to you") && s.contains("act on row")
    });
    assert!(s.contains("Fix the printer"), "{s}");
    // Opening it starts its lock clock.
    t.send(&["Enter"]);
    t.wait_for("the running lock", |s| {
        s.contains("yours, 30m") || s.contains("yours, 29m")
    });
    t.send(&["q"]);
    t.wait_for("the list", |s| s.contains("TITLE"));
    t.send(&["q"]);
    t.wait_for("the prompt again", |s| {
        s.contains("READY$") && !s.contains("1 Queue")
    });
    let shown = caseload(&db, "feeder", &["show", "1"]);
    assert!(shown.contains("held by alice"), "{shown}");
}

#[test]
fn a_look_before_taking_takes_nothing_until_t() {
    let (_dir, db) = printer_db();
    caseload(
        &db,
        "feeder",
        &["add", "--title", "Held by bob", "--body", "bob's case"],
    );
    caseload(&db, "bob", &["claim", "--id", "2"]);
    let Some(t) = Tmux::start("look") else {
        return;
    };
    start_tui(&t, &db);
    t.send(&["Space"]);
    let s = t.wait_for("the read-only view", |s| s.contains("not yours (free)"));
    assert!(s.contains("read-only"), "{s}");
    let shown = caseload(&db, "feeder", &["show", "1", "--json"]);
    assert!(
        shown.contains("\"lock_user\":null"),
        "looking took nothing: {shown}"
    );
    // Esc alone: a letter right behind it would read as Alt+letter.
    t.send(&["Escape"]);
    t.wait_for("the queue again", |s| {
        s.contains("Held by bob") && !s.contains("(free)")
    });
    t.send(&["j", "v"]);
    let s = t.wait_for("bob's item", |s| s.contains("held by bob"));
    assert!(s.contains("bob's case"), "its body is shown: {s}");
    t.send(&["t"]);
    t.wait_for("the refusal", |s| {
        s.contains("you can look but not take it")
    });
    t.send(&["Escape"]);
    t.wait_for("the queue again", |s| {
        s.contains("Fix the printer") && !s.contains("bob's case")
    });
    t.send(&[":", "1", "Enter"]);
    t.wait_for("#1 by its id", |s| s.contains("not yours (free)"));
    t.send(&["t"]);
    t.wait_for("the take", |s| {
        s.contains("yours, 30m") || s.contains("yours, 29m")
    });
    t.send(&["q"]);
    t.wait_for("the list", |s| s.contains("TITLE"));
    t.send(&["q"]);
    t.wait_for("the prompt again", |s| {
        s.contains("READY$") && !s.contains("1 Queue")
    });
    let shown = caseload(&db, "feeder", &["show", "1", "--json"]);
    assert!(shown.contains("\"lock_user\":\"alice\""), "{shown}");
}
