//! `caseload export`: items (with a queue's fields as their own columns), their audit
//! trail (all of it, one kind, or the corrections file of `field_changed` events), or
//! their comment threads, as CSV or JSON Lines.

use std::io::{IsTerminal, Write};

use serde_json::{Map, Value, json};

use crate::domain::queue_fields::{FieldDef, value_text};
use crate::domain::time::rfc3339;
use crate::domain::when::Span;
use crate::domain::{Cell, Event, EventKind, Item, sanitize};
use crate::import::neutralize;
use crate::store::{ExportFilter, Store};

use crate::cli::CliResult;
use crate::cli::args::{ExportArgs, FormatArg};
use crate::cli::output::{escape_json_output, event_json, item_json};

/// The columns of `export --events --format csv`.
pub(crate) const EVENT_COLUMNS: [&str; 7] =
    ["id", "item_id", "at", "actor", "os_user", "kind", "detail"];

/// The columns of the corrections file, `export --events --kind field_changed`.
pub(crate) const CORRECTION_COLUMNS: [&str; 8] = [
    "item", "field", "from", "to", "who", "when", "line", "typed",
];

/// The columns of `export --comments`.
pub(crate) const COMMENT_COLUMNS: [&str; 5] = ["item", "author", "login", "time", "text"];

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
    if a.comments {
        return comments(s, &filter, a.format, &cell, out);
    }
    if a.pairs {
        return pairs(s, a.format, &cell, out);
    }
    if a.events {
        return match a.kind {
            Some(EventKind::FieldChanged) => corrections(s, &filter, a.format, &cell, out),
            kind => events(s, &filter, kind, a.format, &cell, out),
        };
    }
    // One queue's fields are its columns; a mixed export keeps them in params.
    let defs = match &a.queue {
        Some(q) => s.fields(q)?,
        None => Vec::new(),
    };
    let mut left_out: Vec<(i64, String)> = Vec::new();
    let mut written = 0u64;
    match a.format {
        FormatArg::Jsonl => {
            s.export(&filter, &mut |item| {
                if crate::cli::damage::left_out_unreadable(item, &mut left_out) {
                    return Ok(());
                }
                written += 1;
                let (rest, values) = split_fields(item, &defs);
                let mut json =
                    item_json(rest.as_ref().unwrap_or(item)).map_err(std::io::Error::other)?;
                for (d, v) in defs.iter().zip(values) {
                    json[d.name.as_str()] = v;
                }
                writeln!(out, "{}", escape_json_output(&json.to_string()))
            })?;
        }
        FormatArg::Csv => {
            let mut w = csv::Writer::from_writer(out);
            let names = defs.iter().map(|d| d.name.as_str());
            w.write_record(Item::COLUMNS.iter().copied().chain(names))?;
            s.export(&filter, &mut |item| {
                if crate::cli::damage::left_out_unreadable(item, &mut left_out) {
                    return Ok(());
                }
                written += 1;
                let (rest, values) = split_fields(item, &defs);
                let row = csv_row(rest.as_ref().unwrap_or(item), &cell);
                let fields = values.iter().map(|v| cell(&value_text(v)));
                w.write_record(row.into_iter().chain(fields))
                    .map_err(std::io::Error::other)
            })?;
            w.flush()?;
        }
    }
    crate::cli::damage::unreadable_left_out(written, &left_out)
}

/// The item's value of each field (null where it has none), and the item with its params
/// holding the other keys (none when there are no fields or the params are no object:
/// then the item is written as it is and every field is empty).
fn split_fields(item: &Item, defs: &[FieldDef]) -> (Option<Item>, Vec<Value>) {
    if defs.is_empty() {
        return (None, Vec::new());
    }
    let Ok(Value::Object(mut params)) = serde_json::from_str::<Value>(&item.params) else {
        return (None, vec![Value::Null; defs.len()]);
    };
    let values = (defs.iter())
        .map(|d| params.remove(&d.name).unwrap_or(Value::Null))
        .collect();
    let rest = Item {
        params: Value::Object(params).to_string(),
        ..item.clone()
    };
    (Some(rest), values)
}

/// An item's CSV row, in `Item::COLUMNS` order; `cell` prepares each text cell.
fn csv_row(item: &Item, cell: &dyn Fn(&str) -> String) -> Vec<String> {
    item.cells()
        .map(|c| match c {
            Cell::Number(n) => n.to_string(),
            Cell::Text(t) => t.map(cell).unwrap_or_default(),
            Cell::Time(t) => t.map(rfc3339).unwrap_or_default(),
            Cell::Id(t) => t.map(|id| id.to_string()).unwrap_or_default(),
        })
        .to_vec()
}

/// `export --events`: the audit trail (of one kind, when given), oldest first.
fn events(
    s: &mut dyn Store,
    filter: &ExportFilter,
    kind: Option<EventKind>,
    format: FormatArg,
    cell: &dyn Fn(&str) -> String,
    out: &mut dyn Write,
) -> CliResult {
    let id = |e: &Event| if e.id == 0 { None } else { Some(e.id) };
    let wanted = |e: &Event| kind.is_none_or(|k| e.kind == k);
    match format {
        FormatArg::Jsonl => {
            s.export_events(filter, &mut |e| {
                if !wanted(e) {
                    return Ok(());
                }
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
                if !wanted(e) {
                    return Ok(());
                }
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

/// `export --events --kind field_changed`: one row per correction, oldest first.
fn corrections(
    s: &mut dyn Store,
    filter: &ExportFilter,
    format: FormatArg,
    cell: &dyn Fn(&str) -> String,
    out: &mut dyn Write,
) -> CliResult {
    match format {
        FormatArg::Jsonl => {
            s.export_events(filter, &mut |e| match correction(e) {
                Some(v) => writeln!(out, "{}", escape_json_output(&v.to_string())),
                None => Ok(()),
            })?;
        }
        FormatArg::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(CORRECTION_COLUMNS)?;
            s.export_events(filter, &mut |e| match correction(e) {
                Some(v) => w
                    .write_record(CORRECTION_COLUMNS.map(|k| cell(&value_text(&v[k]))))
                    .map_err(std::io::Error::other),
                None => Ok(()),
            })?;
            w.flush()?;
        }
    }
    Ok(())
}

/// A `field_changed` event as a row of the corrections file (`line` and `typed` only
/// where the event has them); `None` for any other event.
fn correction(e: &Event) -> Option<Value> {
    if e.kind != EventKind::FieldChanged {
        return None;
    }
    let d = &e.detail;
    let get = |k: &str| d.get(k).cloned().unwrap_or(Value::Null);
    let mut m = Map::new();
    m.insert("item".into(), json!(e.item_id));
    for k in ["field", "from", "to"] {
        m.insert(k.into(), get(k));
    }
    m.insert("who".into(), json!(e.actor));
    m.insert("when".into(), json!(rfc3339(e.at)));
    for k in ["line", "typed"] {
        if let Some(v) = d.get(k) {
            m.insert(k.into(), v.clone());
        }
    }
    Some(Value::Object(m))
}

/// `export --comments`: every comment on the selected items, oldest first.
fn comments(
    s: &mut dyn Store,
    filter: &ExportFilter,
    format: FormatArg,
    cell: &dyn Fn(&str) -> String,
    out: &mut dyn Write,
) -> CliResult {
    match format {
        FormatArg::Jsonl => {
            s.export_comments(filter, &mut |c| {
                let v = json!({"item": c.item_id, "author": c.author, "login": c.os_user,
                               "time": rfc3339(c.at), "text": c.text});
                writeln!(out, "{}", escape_json_output(&v.to_string()))
            })?;
        }
        FormatArg::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(COMMENT_COLUMNS)?;
            s.export_comments(filter, &mut |c| {
                w.write_record([
                    c.item_id.to_string(),
                    cell(&c.author),
                    cell(&c.os_user),
                    rfc3339(c.at),
                    cell(&c.text),
                ])
                .map_err(std::io::Error::other)
            })?;
            w.flush()?;
        }
    }
    Ok(())
}

/// `export --pairs`: every judged pair (merged as the same, or marked not the same).
fn pairs(
    s: &mut dyn Store,
    format: FormatArg,
    cell: &dyn Fn(&str) -> String,
    out: &mut dyn Write,
) -> CliResult {
    let all = s.all_pairs()?;
    match format {
        FormatArg::Jsonl => {
            for p in &all {
                let v = json!({"a": p.low, "b": p.high, "verdict": p.verdict.as_str(),
                               "by": p.actor, "time": rfc3339(p.at)});
                writeln!(out, "{}", escape_json_output(&v.to_string()))?;
            }
        }
        FormatArg::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(["a", "b", "verdict", "by", "time"])?;
            for p in &all {
                w.write_record([
                    p.low.to_string(),
                    p.high.to_string(),
                    p.verdict.as_str().to_string(),
                    cell(&p.actor),
                    rfc3339(p.at),
                ])?;
            }
            w.flush()?;
        }
    }
    Ok(())
}
