//! `caseload undo ID`: take back your own last complete, fail, release, skip or park of an
//! item within the undo window (see `store::ops::undo`).

use std::io::Write;

use crate::cli::CliResult;
use crate::cli::output::{item_json, write_json};
use crate::store::Store;

/// `caseload undo ID [--json]`.
pub(crate) fn undo(s: &mut dyn Store, id: i64, json: bool, out: &mut dyn Write) -> CliResult {
    let item = s.undo(id)?;
    if json {
        write_json(out, &item_json(&item)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "Undone: #{id} is yours again, as it was (token {})",
        item.lock_token
    )?;
    Ok(())
}
