//! Hooks run from the feed (`caseload events --follow --exec CMD --checkpoint FILE`): CMD
//! runs once per matching event with its JSON line on standard input. Exit 0 moves the
//! checkpoint on; a failure is said on stderr and retried with back-off until it succeeds
//! (at least once: a crash between the hook's success and the checkpoint runs it again,
//! so a hook uses the event id, also in `CASELOAD_EVENT_ID`, as its idempotency key).
//! Hooks live on the command line of whoever runs the follower, never in the database: a
//! person who can write the database cannot make anyone run a command.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::cli::Failure;
use crate::domain::sanitize;

/// The first pause after a failure; doubled after each one up to [`BACKOFF_MAX`].
const BACKOFF_FIRST: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(60);

pub(crate) struct Hook {
    command: String,
}

impl Hook {
    pub(crate) fn new(command: &str) -> Self {
        Hook {
            command: command.to_string(),
        }
    }

    /// Runs the hook for event `id` until it succeeds.
    pub(crate) fn run(&mut self, id: i64, line: &str) -> Result<(), Failure> {
        let mut pause = BACKOFF_FIRST;
        let mut attempt = 1u32;
        loop {
            let why = match self.once(id, line) {
                Ok(()) => return Ok(()),
                Err(why) => why,
            };
            eprintln!(
                "caseload: hook for event {id} failed ({why}; attempt {attempt}); \
                 trying again in {} s",
                pause.as_secs()
            );
            std::thread::sleep(pause);
            pause = (pause * 2).min(BACKOFF_MAX);
            attempt += 1;
        }
    }

    /// One run: `Err` says why it failed.
    fn once(&self, id: i64, line: &str) -> Result<(), String> {
        let event: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        let text = |k: &str| event.get(k).map(|v| v.to_string()).unwrap_or_default();
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .env("CASELOAD_EVENT_ID", id.to_string())
            .env("CASELOAD_EVENT_KIND", text("kind").trim_matches('"'))
            .env("CASELOAD_ITEM_ID", text("item"))
            .stdin(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start sh: {e}"))?;
        if let Some(mut stdin) = child.stdin.take() {
            // A hook that does not read its input is not a failure.
            let _ = writeln!(stdin, "{line}");
        }
        let status = child.wait().map_err(|e| format!("waiting for it: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(sanitize::line(&status.to_string()).into_owned())
        }
    }
}
