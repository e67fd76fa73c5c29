//! What the CLI does about damaged data: `caseload check` always finishes with its list
//! and advice that keeps data, and `export` writes every readable row and names the rows
//! it left out.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::anyhow;
use signal_hook::consts::{SIGINT, SIGTERM};

use crate::cli::{CliResult, Failure, Invocation, open_store};
use crate::domain::{Item, sanitize};
use crate::store::location::Location;
use crate::store::sqlite_check;
use crate::store::{CheckRun, StoreError, exit};

/// Export writes data exactly or not at all: a row with unreadable text is left out (and
/// reported after the rest) rather than written with its bad bytes replaced.
pub(crate) fn left_out_unreadable(item: &Item, left_out: &mut Vec<(i64, String)>) -> bool {
    match item.unreadable_summary() {
        Some(why) => {
            left_out.push((item.id, why));
            true
        }
        None => false,
    }
}

/// Exit 1 with one line naming the rows export left out, once every other row is written.
pub(crate) fn unreadable_left_out(written: u64, left_out: &[(i64, String)]) -> CliResult {
    if left_out.is_empty() {
        return Ok(());
    }
    let named: Vec<String> = left_out
        .iter()
        .take(5)
        .map(|(id, why)| format!("#{id} ({why})"))
        .collect();
    let more = match left_out.len() {
        n if n > 5 => format!(" and {} more", n - 5),
        _ => String::new(),
    };
    Err(anyhow!(
        "export wrote {written} item(s) but left out {} unreadable item(s): {}{more}; \
         `caseload show ID` shows what is readable, `caseload check` lists them all",
        left_out.len(),
        named.join(", ")
    )
    .into())
}

/// `caseload check`: always finishes with the list of every problem it can see (exit 1)
/// or "ok"; a file too damaged to open normally is still checked as far as SQLite can read.
/// `repair_figures` first rebuilds the figures' tables from the history. On a terminal it
/// shows what it is checking; Ctrl-C stops it (exit 130), and as it only reads, nothing is
/// changed (a second Ctrl-C ends the process at once).
pub(crate) fn check(
    ctx: &Invocation,
    repair_figures: bool,
    quick: bool,
    out: &mut dyn Write,
) -> CliResult {
    let mut opened = open_store(ctx, false);
    if repair_figures && let Ok(s) = &mut opened {
        let n = s.rebuild_figures()?;
        writeln!(
            out,
            "rebuilt the figures from the history: {n} holds; and the duplicate keys"
        )?;
    }
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // The second signal ends the process at once; the first asks the check to stop.
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop));
        let _ = signal_hook::flag::register(sig, Arc::clone(&stop));
    }
    let bar = progress_bar();
    let tell = |what: &str, done: u64, of: u64| {
        bar.set_message(if of > 0 {
            format!("{what}: {done} of {of} items")
        } else {
            what.to_string()
        });
    };
    let how = CheckRun {
        quick,
        progress: &tell,
        stop: &stop,
    };
    let problems = match (opened, &ctx.location) {
        (Ok(mut s), _) => s.check_with(&how),
        (Err(f), Location::File(path)) if damaged(&f) => Ok(sqlite_check::run_on_file(
            path,
            &format!("{:#}", f.error),
            &how,
        )),
        (Err(f), _) => {
            bar.finish_and_clear();
            return Err(f);
        }
    };
    bar.finish_and_clear();
    if stop.load(Ordering::Relaxed) {
        return Err(Failure {
            code: exit::INTERRUPTED,
            error: anyhow!("check stopped before it finished (Ctrl-C); nothing was changed"),
        });
    }
    let problems = problems?;
    if problems.is_empty() {
        writeln!(out, "ok")?;
        return Ok(());
    }
    for p in &problems {
        writeln!(out, "{}", sanitize::line(p))?;
    }
    if matches!(ctx.location, Location::File(_)) {
        for a in sqlite_check::advice(&problems) {
            writeln!(out, "{}", sanitize::line(&a))?;
        }
    }
    Err(anyhow!("check found {} problem(s)", problems.len()).into())
}

/// A line on stderr telling what is being checked (hidden when stderr is no terminal).
fn progress_bar() -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new_spinner();
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} check: {msg} ({elapsed})")
    {
        bar.set_style(style);
    }
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// True when opening failed because SQLite found the file's content damaged (not for a
/// refusal such as a network filesystem or a missing file, which the error explains).
fn damaged(f: &Failure) -> bool {
    f.error.chain().any(|c| {
        matches!(
            c.downcast_ref::<StoreError>(),
            Some(StoreError::Corrupt(_) | StoreError::Database(_))
        )
    })
}
