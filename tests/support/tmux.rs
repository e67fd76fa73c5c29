//! The real binary in a real terminal: a private tmux server per test, driven with
//! `send-keys` and read with `capture-pane` / `display-message`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::cli::BIN;

/// A private tmux server, killed when dropped.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// A 100x30 session running a bare bash whose prompt is `READY$ `; `None` (the test
    /// skips) when tmux is not installed.
    pub fn start(name: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            super::skip::skip(super::skip::NO_TMUX);
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

    /// Makes a second window current: tmux raises the bell flag only for a window that is
    /// not the one being looked at. Window 0 stays the one the test drives.
    pub fn look_elsewhere(&self) {
        assert!(self.cmd(&["new-window", "-d"]).status.success());
    }

    pub fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("running tmux")
    }

    pub fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", ":0"];
        args.extend_from_slice(keys);
        assert!(self.cmd(&args).status.success());
    }

    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", ":0"]).stdout).into_owned()
    }

    /// A tmux format of window 0 (`#{pane_title}`, `#{window_bell_flag}`, …).
    pub fn format(&self, f: &str) -> String {
        String::from_utf8_lossy(&self.cmd(&["display-message", "-p", "-t", ":0", f]).stdout)
            .trim()
            .to_string()
    }

    /// Polls the screen until `pred` holds (10 s at most); returns it.
    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        self.wait_until(what, || self.screen(), pred)
    }

    /// Polls `get` until `pred` holds (10 s at most); returns the value.
    pub fn wait_until(
        &self,
        what: &str,
        get: impl Fn() -> String,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        let start = Instant::now();
        loop {
            let v = get();
            if pred(&v) {
                return v;
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

/// Runs the real binary as `user` on `db` (outside tmux) and returns its stdout; it must
/// succeed.
pub fn caseload(db: &Path, user: &str, args: &[&str]) -> String {
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
