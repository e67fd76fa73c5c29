//! `caseload export`: items, or their audit trail, as CSV or JSON Lines.

use std::io::{IsTerminal, Write};

use crate::domain::fields;
use crate::domain::time::rfc3339;
use crate::domain::when::Span;
use crate::domain::{Cell, Event, Item, sanitize};
use crate::import::neutralize;
use crate::store::{ExportFilter, Store};

use crate::cli::CliResult;
use crate::cli::args::{ExportArgs, FormatArg};
use crate::cli::output::{escape_json_output, event_json, item_json};

/// The columns of `export --events --format csv`.
pub(crate) const EVENT_COLUMNS: [&str; 7] =
    ["id", "item_id", "at", "actor", "os_user", "kind", "detail"];

pub(crate) fn export(s: &mut dyn Store, a: ExportArgs, out: &mut dyn Write) -> CliResult {
    let since = match &a.since {
        Some(t) => Some(super::time_arg("--since", t, s.now()?, Span::Back)?),
        None => None,
    };
    if let Some(q) = &a.queue {
        // An unknown queue is a typo, not an empty export.
        s.queue(q)?;
    }
    let filter = ExportFilter {
        state: a.state,
        queue: a.queue.clone(),
        since,
    };
    // Raw data into a file or pipe (for fidelity); sanitized onto a terminal.
    let to_terminal = std::io::stdout().is_terminal();
    // Text cells: sanitized onto a terminal; in CSV, formula-like ones neutralized.
    let csv = matches!(a.format, FormatArg::Csv);
    let raw = a.raw;
    let cell = |s: &str| -> String {
        let s = if to_terminal {
            sanitize::line(s).into_owned()
        } else {
            s.to_string()
        };
        if csv && !raw {
            neutralize(&s).into_owned()
        } else {
            s
        }
    };
    if a.events {
        return events(s, &filter, a.format, &cell, out);
    }
    let mut left_out: Vec<(i64, String)> = Vec::new();
    let mut written = 0u64;
    match a.format {
        FormatArg::Jsonl => {
            s.export(&filter, &mut |item| {
                if crate::cli::damage::left_out_unreadable(item, &mut left_out) {
                    return Ok(());
                }
                written += 1;
                let json = item_json(item).map_err(std::io::Error::other)?;
                writeln!(out, "{}", escape_json_output(&json.to_string()))
            })?;
        }
        FormatArg::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(Item::COLUMNS)?;
            s.export(&filter, &mut |item| {
                if crate::cli::damage::left_out_unreadable(item, &mut left_out) {
                    return Ok(());
                }
                written += 1;
                w.write_record(csv_row(item, &cell))
                    .map_err(std::io::Error::other)
            })?;
            w.flush()?;
        }
    }
    crate::cli::damage::unreadable_left_out(written, &left_out)
}

/// An item's CSV row, in `Item::COLUMNS` order; `cell` prepares each text cell.
fn csv_row(item: &Item, cell: &dyn Fn(&str) -> String) -> [String; fields::COUNT] {
    item.cells().map(|c| match c {
        Cell::Number(n) => n.to_string(),
        Cell::Text(t) => t.map(cell).unwrap_or_default(),
        Cell::Time(t) => t.map(rfc3339).unwrap_or_default(),
    })
}

/// `export --events`: the audit trail, oldest first.
fn events(
    s: &mut dyn Store,
    filter: &ExportFilter,
    format: FormatArg,
    cell: &dyn Fn(&str) -> String,
    out: &mut dyn Write,
) -> CliResult {
    let id = |e: &Event| if e.id == 0 { None } else { Some(e.id) };
    match format {
        FormatArg::Jsonl => {
            s.export_events(filter, &mut |e| {
                let mut v = event_json(e);
                if id(e).is_none() {
                    // Read from the item row: there is no stored event with an id.
                    v["id"] = serde_json::Value::Null;
                }
                writeln!(out, "{}", escape_json_output(&v.to_string()))
            })?;
        }
        FormatArg::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(EVENT_COLUMNS)?;
            s.export_events(filter, &mut |e| {
                w.write_record([
                    id(e).map(|i| i.to_string()).unwrap_or_default(),
                    e.item_id.to_string(),
                    rfc3339(e.at),
                    cell(&e.actor),
                    cell(&e.os_user),
                    e.kind.as_str().to_string(),
                    cell(&e.detail.to_string()),
                ])
                .map_err(std::io::Error::other)
            })?;
            w.flush()?;
        }
    }
    Ok(())
}
