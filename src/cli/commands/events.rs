//! `caseload events`: the audit trail as JSON Lines (or a table for people), oldest first,
//! resumable by id with no event skipped and none repeated ([`crate::store::feed`] says
//! how); `--follow` keeps going, `--checkpoint` remembers where, `--exec` runs a hook per
//! event (see [`super::hooks`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use crate::cli::output::escape_json_output;
use crate::cli::{CliResult, Failure};
use crate::domain::time::{local_full, rfc3339};
use crate::domain::{EventKind, sanitize};
use crate::store::feed::{Feed, FeedEvent};
use crate::store::{Store, exit};

use super::wake::Wake;

/// `caseload events`'s flags.
#[derive(Debug, Args)]
pub struct EventsArgs {
    /// Start after this event id (the last one you processed; default: from the first).
    #[arg(long, value_name = "N", conflicts_with = "checkpoint")]
    pub since_id: Option<i64>,
    /// Resume after the id stored in FILE and store there the last id written (atomically,
    /// after the line is flushed); a missing FILE starts from the first event.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,
    /// Keep going: wait for new events (woken by the database's change notice).
    #[arg(long)]
    pub follow: bool,
    /// Only events of items in this queue (default: every queue).
    #[arg(long, value_name = "QUEUE")]
    pub queue: Option<String>,
    /// Only events of these kinds, separated by commas (e.g. completed,failed).
    #[arg(long, value_name = "KIND,…", value_delimiter = ',', value_parser = parse_kind)]
    pub kind: Vec<EventKind>,
    /// Output format: one JSON object per line, or a table for people.
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: EventsFormat,
    /// Accepted for symmetry with other commands: JSON Lines is the default.
    #[arg(long)]
    pub json: bool,
    /// Run CMD (with `sh -c`) once per matching event, the event's JSON line on its
    /// standard input; exit 0 moves the checkpoint on, a failure is retried with back-off.
    /// At least once: use the event id as the idempotency key. Needs --checkpoint.
    #[arg(long, value_name = "CMD", requires = "checkpoint")]
    pub exec: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EventsFormat {
    /// One JSON object per line.
    Jsonl,
    /// Aligned text for a terminal.
    Table,
}

fn parse_kind(s: &str) -> Result<EventKind, String> {
    EventKind::parse(s.trim()).ok_or_else(|| {
        let all: Vec<&str> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
        format!(
            "unknown event kind '{}' (kinds: {})",
            sanitize::line(s),
            all.join(", ")
        )
    })
}

/// How long a follower waits before looking again while a mark waits for transactions
/// still in progress (PostgreSQL), at first; doubled up to [`super::wake::POLL`].
const PENDING_FIRST: Duration = Duration::from_millis(2);

pub(crate) fn events(s: &mut dyn Store, a: &EventsArgs, out: &mut dyn Write) -> CliResult {
    if let Some(q) = &a.queue {
        // An unknown queue is a typo, not an empty feed.
        s.queue(q)?;
    }
    let start = match (&a.checkpoint, a.since_id) {
        (Some(file), _) => {
            let start = read_checkpoint(file)?;
            if !file.exists() {
                // A checkpoint that cannot be written is said before any line or hook.
                write_checkpoint(file, start)?;
            }
            start
        }
        (None, Some(n)) if n < 0 => {
            return Err(usage("--since-id: an event id is 0 or more"));
        }
        (None, n) => n.unwrap_or(0),
    };
    let mut hook = a.exec.as_deref().map(super::hooks::Hook::new);
    let mut checkpoint = Checkpoint {
        file: a.checkpoint.as_deref(),
        saved: start,
    };
    let mut feed = Feed::after(start);
    let mut wake = super::wake::ChangeMarker::default();
    // Without --follow: everything committed when the command started.
    let mut target = None;
    let mut pending_wait = PENDING_FIRST;
    loop {
        wake.arm(s)?;
        let last = feed.poll(s, &mut |page| -> Result<(), Failure> {
            for e in page.iter().filter(|e| matches(a, e)) {
                match hook.as_mut() {
                    Some(h) => {
                        h.run(e.event.id, &line(e))?;
                        checkpoint.save(e.event.id)?;
                    }
                    None => write_event(a.format, e, out)?,
                }
            }
            out.flush()?;
            if let Some(e) = page.last() {
                checkpoint.save(e.event.id)?;
            }
            Ok(())
        })?;
        checkpoint.save(feed.cursor())?;
        let target = *target.get_or_insert(last);
        if !a.follow && feed.cursor() >= target {
            return Ok(());
        }
        if feed.waiting() {
            // A transaction in progress may still commit an id below the newest: look
            // again soon (its commit is moments away), without waiting for a notice.
            std::thread::sleep(pending_wait);
            pending_wait = (pending_wait * 2).min(super::wake::POLL);
        } else {
            pending_wait = PENDING_FIRST;
            wake.wait(s)?;
        }
    }
}

/// The checkpoint file, and the id it holds.
struct Checkpoint<'a> {
    file: Option<&'a Path>,
    saved: i64,
}

impl Checkpoint<'_> {
    /// Stores `id` (the last one handled: its line flushed, its hook run) when it moved.
    fn save(&mut self, id: i64) -> Result<(), Failure> {
        if let Some(file) = self.file
            && id > self.saved
        {
            write_checkpoint(file, id)?;
            self.saved = id;
        }
        Ok(())
    }
}

fn matches(a: &EventsArgs, e: &FeedEvent) -> bool {
    a.queue.as_ref().is_none_or(|q| *q == e.queue)
        && (a.kind.is_empty() || a.kind.contains(&e.event.kind))
}

/// An event as the feed's JSON object: id, item, kind, actor, login, time, detail, queue
/// and title.
pub(crate) fn event_object(e: &FeedEvent) -> Value {
    let ev = &e.event;
    json!({
        "id": ev.id,
        "item": ev.item_id,
        "kind": ev.kind.as_str(),
        "actor": ev.actor,
        "login": ev.os_user,
        "time": rfc3339(ev.at),
        "detail": ev.detail,
        "queue": e.queue,
        "title": e.title,
    })
}

/// The event's JSON line (terminal controls escaped, the data kept).
pub(crate) fn line(e: &FeedEvent) -> String {
    escape_json_output(&event_object(e).to_string()).into_owned()
}

fn write_event(format: EventsFormat, e: &FeedEvent, out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        EventsFormat::Jsonl => writeln!(out, "{}", line(e)),
        EventsFormat::Table => {
            let ev = &e.event;
            let detail = if ev.detail.as_object().is_some_and(|o| o.is_empty()) {
                String::new()
            } else {
                format!("  {}", sanitize::line(&ev.detail.to_string()))
            };
            writeln!(
                out,
                "{:>8}  {}  {:<13} #{:<7} {:<12} {} ({}){}  {}",
                ev.id,
                local_full(ev.at),
                ev.kind.as_str(),
                ev.item_id,
                sanitize::line(&e.queue),
                sanitize::line(&ev.actor),
                sanitize::line(&ev.os_user),
                detail,
                sanitize::line(&e.title),
            )
        }
    }
}

fn usage(msg: &str) -> Failure {
    Failure {
        code: exit::USAGE,
        error: anyhow::anyhow!("{msg}"),
    }
}

/// The id a checkpoint file holds; a missing file starts from the first event.
fn read_checkpoint(file: &Path) -> Result<i64, Failure> {
    let shown = sanitize::line(&file.display().to_string()).into_owned();
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(anyhow::anyhow!("checkpoint {shown}: {e}").into()),
    };
    text.trim()
        .parse::<i64>()
        .ok()
        .filter(|n| *n >= 0)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "checkpoint {shown}: expected the last event id (a number), found '{}'",
                sanitize::line(text.trim())
            )
            .into()
        })
}

/// Stores `id` in `file` atomically: a temporary file beside it, flushed to disk, renamed
/// over it, and the directory flushed, so a crash leaves the old id or the new one.
fn write_checkpoint(file: &Path, id: i64) -> Result<(), Failure> {
    let shown = sanitize::line(&file.display().to_string()).into_owned();
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "checkpoint".into());
    let tmp = dir.join(format!(".{name}.tmp"));
    let r = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        writeln!(f, "{id}")?;
        f.sync_all()?;
        std::fs::rename(&tmp, file)?;
        std::fs::File::open(&dir)?.sync_all()
    })();
    r.map_err(|e| anyhow::anyhow!("checkpoint {shown}: {e}").into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_round_trips_and_a_missing_one_starts_at_zero() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("cp");
        assert_eq!(read_checkpoint(&f).unwrap(), 0);
        write_checkpoint(&f, 41).unwrap();
        assert_eq!(read_checkpoint(&f).unwrap(), 41);
        write_checkpoint(&f, 42).unwrap();
        assert_eq!(read_checkpoint(&f).unwrap(), 42);
        std::fs::write(&f, "x\n").unwrap();
        let e = read_checkpoint(&f).unwrap_err();
        assert!(
            format!("{:#}", e.error).contains("found 'x'"),
            "{:#}",
            e.error
        );
    }

    #[test]
    fn kinds_are_checked() {
        assert_eq!(parse_kind("completed"), Ok(EventKind::Completed));
        assert!(parse_kind("finished").unwrap_err().contains("completed"));
    }
}
