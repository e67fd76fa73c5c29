//! Subcommands of the lock holder: claim, renew, release, complete, fail.

use std::io::Write;

use crate::domain::time::local_full;
use crate::store::{Store, TakeNext};

use crate::cli::args::HolderArgs;
use crate::cli::commands::read::write_item;
use crate::cli::output::{done_line, item_json, write_json};
use crate::cli::{CliResult, Failure};

pub(crate) fn claim(
    s: &mut dyn Store,
    queue: Option<String>,
    id: Option<i64>,
    json: bool,
    out: &mut dyn Write,
) -> CliResult {
    let item = match id {
        Some(id) => s.take(id)?,
        None => s.take_next(&TakeNext {
            queue,
            skip: vec![],
        })?,
    };
    if json {
        write_json(out, &item_json(&item))?;
    } else {
        write_item(s, &item, out)?;
    }
    Ok(())
}

/// The token a holder command applies to: `--token`, else the item's current one. The
/// store decides with it: the caller's own lock is written; anything else is explained
/// (who took it and when) or, for a retried complete, fail or release whose answer was
/// lost, acknowledged as already done.
pub(crate) fn token_for(s: &mut dyn Store, h: &HolderArgs) -> Result<i64, Failure> {
    match h.token {
        Some(t) => Ok(t),
        None => Ok(s.item(h.id)?.lock_token),
    }
}

/// `caseload renew`: extends the holder's lock.
pub(crate) fn renew(s: &mut dyn Store, h: &HolderArgs, out: &mut dyn Write) -> CliResult {
    let token = token_for(s, h)?;
    let item = s.renew(h.id, token)?;
    let q = s.queue(&item.queue)?;
    let until = item.lock_time.unwrap_or(0) + q.lock_ms();
    writeln!(out, "Renewed #{} until {}", item.id, local_full(until))?;
    Ok(())
}

/// `caseload release`: gives the item back to the queue.
pub(crate) fn release(s: &mut dyn Store, h: &HolderArgs, out: &mut dyn Write) -> CliResult {
    let token = token_for(s, h)?;
    let applied = s.release(h.id, token)?;
    writeln!(out, "{}", done_line(h.id, "Released", "released", applied))?;
    Ok(())
}

/// `caseload complete`: finishes the item.
pub(crate) fn complete(
    s: &mut dyn Store,
    h: &HolderArgs,
    result: Option<&str>,
    out: &mut dyn Write,
) -> CliResult {
    let token = token_for(s, h)?;
    let applied = s.complete(h.id, token, result)?;
    writeln!(
        out,
        "{}",
        done_line(h.id, "Completed", "completed", applied)
    )?;
    Ok(())
}

/// `caseload fail`: finishes the item as failed, with a reason.
pub(crate) fn fail(
    s: &mut dyn Store,
    h: &HolderArgs,
    reason: &str,
    out: &mut dyn Write,
) -> CliResult {
    let token = token_for(s, h)?;
    let applied = s.fail(h.id, token, reason)?;
    writeln!(out, "{}", done_line(h.id, "Failed", "failed", applied))?;
    Ok(())
}
