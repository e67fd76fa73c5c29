//! `caseload park` and `caseload wake`: a call-back (see `store::ops::park`).

use std::io::Write;

use crate::cli::args::HolderArgs;
use crate::cli::commands::holder::token_for;
use crate::cli::commands::time_arg;
use crate::cli::output::{done_line, item_json, write_json};
use crate::cli::{CliResult, Failure};
use crate::domain::park::when_text;
use crate::domain::sanitize;
use crate::domain::when::Span;
use crate::store::{Store, exit};

/// `caseload park ID --until WHEN --reason TEXT`.
pub(crate) fn park(
    s: &mut dyn Store,
    h: &HolderArgs,
    until: &str,
    reason: &str,
    out: &mut dyn Write,
) -> CliResult {
    let now = s.now()?;
    let at = time_arg("--until", until, now, Span::Ahead).map_err(|error| Failure {
        code: exit::ERROR,
        error,
    })?;
    let token = token_for(s, h)?;
    let applied = s.park(h.id, token, at, reason)?;
    if h.json {
        write_json(out, &item_json(&s.item(h.id)?)?)?;
        return Ok(());
    }
    let line = done_line(h.id, "Parked", "parked", applied);
    writeln!(
        out,
        "{line} until {}: {}",
        when_text(at, now),
        sanitize::line(reason.trim())
    )?;
    Ok(())
}

/// `caseload wake ID`.
pub(crate) fn wake(s: &mut dyn Store, id: i64, json: bool, out: &mut dyn Write) -> CliResult {
    let me = s.actor().name.clone();
    let item = s.wake(id)?;
    if json {
        write_json(out, &item_json(&item)?)?;
        return Ok(());
    }
    if item.is_held_by(&me) {
        writeln!(out, "Woke #{id}: yours now (token {})", item.lock_token)?;
    } else {
        writeln!(out, "Woke #{id}: back in the pool")?;
    }
    Ok(())
}
