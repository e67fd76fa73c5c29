//! `caseload accept` and `caseload reject`: the reviewer's verdict (issue 29 §1; the
//! take is `claim --review`, see `store::ops::review`).

use std::io::Write;

use crate::cli::CliResult;
use crate::cli::args::HolderArgs;
use crate::cli::commands::holder::token_for;
use crate::cli::output::{item_json, write_json};
use crate::domain::texts::Said;
use crate::domain::{ItemState, sanitize};
use crate::store::Store;

/// What a complete's line adds when the item went to review: " — waiting for review".
pub(crate) fn waits(s: &mut dyn Store, id: i64) -> anyhow::Result<&'static str> {
    Ok(match s.item(id)?.state {
        ItemState::Review => " — waiting for review by someone else",
        _ => "",
    })
}

/// `caseload accept ID [--comment TEXT]`.
pub(crate) fn accept(
    s: &mut dyn Store,
    h: &HolderArgs,
    comment: Option<String>,
    out: &mut dyn Write,
) -> CliResult {
    let token = token_for(s, h)?;
    let item = s.accept(h.id, token, comment.as_deref())?;
    if h.json {
        write_json(out, &item_json(&item)?)?;
        return Ok(());
    }
    let by = item.finished_by.as_deref().map(sanitize::line);
    writeln!(
        out,
        "Accepted #{}: done{}",
        item.id,
        by.map(|b| format!(" (completed by {b})"))
            .unwrap_or_default()
    )?;
    Ok(())
}

/// `caseload reject ID --reason TEXT [--code CODE]`.
pub(crate) fn reject(
    s: &mut dyn Store,
    h: &HolderArgs,
    reason: Said<'_>,
    out: &mut dyn Write,
) -> CliResult {
    let token = token_for(s, h)?;
    let item = s.reject_said(h.id, token, reason)?;
    if h.json {
        write_json(out, &item_json(&item)?)?;
        return Ok(());
    }
    match item.lock_user.as_deref() {
        Some(maker) => writeln!(
            out,
            "Rejected #{}: back to {} (assigned)",
            item.id,
            sanitize::line(maker)
        )?,
        None => writeln!(out, "Rejected #{}: back in the pool", item.id)?,
    }
    Ok(())
}
