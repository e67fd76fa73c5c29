//! Told when work arrives, in a real terminal (tmux): another user adds an item to alice's
//! empty queue; her TUI rings the bell (tmux's bell flag) and the title says how many
//! items she can take; quitting puts the title back.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::cli::BIN;

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
        // A second window, made current: the bell flag is raised for a window that is not
        // the one being looked at.
        assert!(t.cmd(&["new-window", "-d"]).status.success());
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
        let mut args = vec!["send-keys", "-t", ":0"];
        args.extend_from_slice(keys);
        assert!(self.cmd(&args).status.success());
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", ":0"]).stdout).into_owned()
    }

    fn format(&self, f: &str) -> String {
        String::from_utf8_lossy(&self.cmd(&["display-message", "-p", "-t", ":0", f]).stdout)
            .trim()
            .to_string()
    }

    /// Polls `get` until `pred` holds (10 s at most).
    fn wait_until(&self, what: &str, get: impl Fn() -> String, pred: impl Fn(&str) -> bool) {
        let start = Instant::now();
        loop {
            let v = get();
            if pred(&v) {
                return;
            }
            if start.elapsed() > Duration::from_secs(10) {
                panic!(
                    "timed out waiting for {what}; last: {v:?}\nscreen:\n{}",
                    self.screen()
                );
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

#[test]
fn another_users_add_rings_the_bell_and_sets_the_title() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    caseload(&db, "boss", &["init"]);
    let Some(t) = Tmux::start("notify") else {
        return;
    };
    t.wait_until("the shell prompt", || t.screen(), |s| s.contains("READY$"));
    // The shell's own title first, to see it come back.
    t.send(&["printf '\\033]2;my shell\\033\\\\'; clear", "Enter"]);
    t.wait_until(
        "the shell's title",
        || t.format("#{pane_title}"),
        |v| v == "my shell",
    );
    t.send(&[
        &format!("{BIN} --db {} --user alice", db.display()),
        "Enter",
    ]);
    t.wait_until("the queue", || t.screen(), |s| s.contains("1 Queue"));
    t.wait_until(
        "the title with nothing to take",
        || t.format("#{pane_title}"),
        |v| v == "caseload · 0 open",
    );
    assert_eq!(t.format("#{window_bell_flag}"), "0", "no bell yet");
    caseload(&db, "producer", &["add", "--title", "Printer on fire"]);
    t.wait_until(
        "the title to count the new item",
        || t.format("#{pane_title}"),
        |v| v == "caseload · 1 open",
    );
    t.wait_until("the bell", || t.format("#{window_bell_flag}"), |v| v == "1");
    t.wait_until(
        "the status line",
        || t.screen(),
        |s| s.contains("New work: 1 item to take in your queues"),
    );
    t.send(&["q"]);
    t.wait_until(
        "the shell's title back",
        || t.format("#{pane_title}"),
        |v| v == "my shell",
    );
}

#[test]
fn no_notify_keeps_the_bell_quiet_but_says_it_on_the_status_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    caseload(&db, "boss", &["init"]);
    let Some(t) = Tmux::start("quiet") else {
        return;
    };
    t.wait_until("the shell prompt", || t.screen(), |s| s.contains("READY$"));
    t.send(&[
        &format!(
            "clear; {BIN} --db {} --user alice --no-notify",
            db.display()
        ),
        "Enter",
    ]);
    t.wait_until("the queue", || t.screen(), |s| s.contains("1 Queue"));
    t.wait_until(
        "the first count",
        || t.format("#{pane_title}"),
        |v| v == "caseload · 0 open",
    );
    caseload(&db, "producer", &["add", "--title", "Printer on fire"]);
    t.wait_until(
        "the status line",
        || t.screen(),
        |s| s.contains("New work: 1 item to take"),
    );
    assert_eq!(t.format("#{window_bell_flag}"), "0", "--no-notify: no bell");
    t.send(&["q"]);
}
