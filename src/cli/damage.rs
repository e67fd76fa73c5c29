//! What the CLI does about damaged data: `caseload check` always finishes with its list
//! and advice that keeps data, and `export` writes every readable row and names the rows
//! it left out.

use std::io::Write;

use anyhow::anyhow;

use crate::cli::{CliResult, Failure, Invocation, open_store};
use crate::domain::{Item, sanitize};
use crate::store::StoreError;
use crate::store::location::Location;
use crate::store::sqlite_check;

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
/// `repair_figures` first rebuilds the figures' tables from the history.
pub(crate) fn check(ctx: &Invocation, repair_figures: bool, out: &mut dyn Write) -> CliResult {
    let problems = match (open_store(ctx, false), &ctx.location) {
        (Ok(mut s), _) => {
            if repair_figures {
                let n = s.rebuild_figures()?;
                writeln!(out, "rebuilt the figures from the history: {n} holds")?;
            }
            s.check()?
        }
        (Err(f), Location::File(path)) if damaged(&f) => {
            sqlite_check::run_on_file(path, &format!("{:#}", f.error))
        }
        (Err(f), _) => return Err(f),
    };
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
