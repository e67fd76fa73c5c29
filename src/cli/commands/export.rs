//! `caseload export`: items as CSV or JSON Lines.

use std::io::{IsTerminal, Write};

use crate::domain::time::rfc3339;
use crate::domain::{Item, ItemState, sanitize};
use crate::store::Store;

use crate::cli::CliResult;
use crate::cli::args::FormatArg;
use crate::cli::output::{escape_json_output, item_json};

pub(crate) fn export(
    s: &mut dyn Store,
    state: Option<ItemState>,
    format: FormatArg,
    out: &mut dyn Write,
) -> CliResult {
    // Raw data into a file or pipe (for fidelity); sanitized onto a terminal.
    let to_terminal = std::io::stdout().is_terminal();
    let clean = |s: &str| -> String {
        if to_terminal {
            sanitize::line(s).into_owned()
        } else {
            s.to_string()
        }
    };
    let mut left_out: Vec<(i64, String)> = Vec::new();
    let mut written = 0u64;
    match format {
        FormatArg::Jsonl => {
            s.export(state, &mut |item| {
                if crate::cli::damage::left_out_unreadable(item, &mut left_out) {
                    return Ok(());
                }
                written += 1;
                writeln!(out, "{}", escape_json_output(&item_json(item).to_string()))
            })?;
        }
        FormatArg::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(Item::COLUMNS)?;
            s.export(state, &mut |item| {
                if crate::cli::damage::left_out_unreadable(item, &mut left_out) {
                    return Ok(());
                }
                written += 1;
                let t = |v: Option<i64>| v.map(rfc3339).unwrap_or_default();
                let o = |v: &Option<String>| v.as_deref().map(clean).unwrap_or_default();
                w.write_record([
                    item.id.to_string(),
                    clean(&item.queue),
                    o(&item.request_id),
                    clean(&item.title),
                    clean(&item.body),
                    clean(&item.params),
                    item.priority.to_string(),
                    t(item.due_at),
                    item.state.as_str().to_string(),
                    o(&item.lock_user),
                    t(item.lock_time),
                    item.lock_token.to_string(),
                    clean(&item.notes),
                    o(&item.result),
                    o(&item.error),
                    rfc3339(item.created_at),
                    clean(&item.created_by),
                    t(item.finished_at),
                    o(&item.finished_by),
                ])
                .map_err(std::io::Error::other)
            })?;
            w.flush()?;
        }
    }
    crate::cli::damage::unreadable_left_out(written, &left_out)
}
