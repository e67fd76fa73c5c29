//! The real binary in a real terminal (tmux): take, complete, quit, and the terminal comes
//! back; a hang-up (SIGHUP) restores it too and leaves the lock held.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_caseload");

/// A private tmux server, killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(name: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            eprintln!("tmux is not installed; skipping");
            return None;
        }
        let t = Tmux {
            socket: format!("caseload-{name}-{}", std::process::id()),
        };
        let ok = t
            .cmd(&[
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "100",
                "-y",
                "30",
                "env PS1='READY$ ' bash --norc --noprofile",
            ])
            .status
            .success();
        assert!(ok, "tmux new-session failed");
        Some(t)
    }

    fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("running tmux")
    }

    fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        assert!(self.cmd(&args).status.success());
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "0"]).stdout).into_owned()
    }

    fn format(&self, f: &str) -> String {
        String::from_utf8_lossy(&self.cmd(&["display-message", "-p", "-t", "0", f]).stdout)
            .trim()
            .to_string()
    }

    /// Polls the screen until `pred` holds (10 s at most).
    fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if pred(&s) {
                return s;
            }
            if start.elapsed() > Duration::from_secs(10) {
                panic!("timed out waiting for {what}; screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

fn caseload(db: &Path, user: &str, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("--db")
        .arg(db)
        .arg("--user")
        .arg(user)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "caseload {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
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
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    caseload(&db, "feeder", &["add", "--title", "Fix the printer"]);
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
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    caseload(&db, "feeder", &["add", "--title", "Fix the printer"]);
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
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    caseload(&db, "feeder", &["add", "--title", "Fix the printer"]);
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
