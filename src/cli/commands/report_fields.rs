//! `caseload report --by field` and `--by source`: which data was dirty. Of the records
//! completed in a period (and still done): per queue and field, how many had it, how many
//! were corrected and how; per source, how many needed a correction (the figures are
//! [`crate::domain::corrections`]'s).

use std::io::{IsTerminal, Write};

use serde_json::json;

use crate::cli::CliResult;
use crate::cli::args::{ReportBy, ReportFormat};
use crate::cli::output::{truncate, write_json};
use crate::domain::corrections::{self, FieldFigure, SourceFigure};
use crate::domain::figures::Period;
use crate::domain::sanitize;
use crate::domain::time::{date_hm, display_zone, rfc3339};
use crate::store::{ReportQuery, Store};

pub(crate) fn report(
    s: &mut dyn Store,
    by: ReportBy,
    period: Period,
    queue: Option<String>,
    format: ReportFormat,
    out: &mut dyn Write,
) -> CliResult {
    let records = s.completed_records(&ReportQuery {
        period,
        queue: queue.clone(),
        rows_only: false,
    })?;
    let heading = format!(
        "{} to {} ({}), {} record(s) completed",
        date_hm(period.since),
        date_hm(period.until),
        display_zone().label(period.until),
        records.len()
    );
    if by == ReportBy::Source {
        let rows = corrections::by_source(&records);
        return match format {
            ReportFormat::Json => json_doc(period, "source", &rows, out),
            ReportFormat::Csv => source_csv(&rows, out),
            ReportFormat::Table => source_table(&heading, &rows, out),
        };
    }
    let defined: Vec<(String, String)> = s
        .all_fields()?
        .into_iter()
        .map(|(q, f)| (q, f.name))
        .collect();
    let rows = corrections::by_field(&records, &defined);
    match format {
        ReportFormat::Json => json_doc(period, "field", &rows, out),
        ReportFormat::Csv => field_csv(&rows, out),
        ReportFormat::Table => field_table(&heading, &rows, out),
    }
}

fn json_doc<T: serde::Serialize>(
    period: Period,
    by: &str,
    rows: &T,
    out: &mut dyn Write,
) -> CliResult {
    write_json(
        out,
        &json!({
            "since": rfc3339(period.since),
            "until": rfc3339(period.until),
            "by": by,
            "rows": rows,
        }),
    )?;
    Ok(())
}

/// Names as stored go to a file as they are and to a terminal sanitized.
fn cleaner() -> impl Fn(&str) -> String {
    let to_terminal = std::io::stdout().is_terminal();
    move |s: &str| match to_terminal {
        true => sanitize::line(s).into_owned(),
        false => s.to_string(),
    }
}

fn share(s: Option<f64>) -> String {
    s.map_or("-".into(), |s| format!("{:.0} %", s * 100.0))
}

fn field_table(heading: &str, rows: &[FieldFigure], out: &mut dyn Write) -> CliResult {
    writeln!(out, "{heading}, corrections by field")?;
    if rows.is_empty() {
        writeln!(
            out,
            "no completed record had a field or a correction in the period"
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "{:<14} {:<20} {:>7} {:>9} {:>6}  most common",
        "queue", "field", "records", "corrected", "share"
    )?;
    for r in rows {
        let kinds = format!(
            "{} (filled {}, changed {}, cleared {})",
            r.most_common().unwrap_or("-"),
            r.filled,
            r.changed,
            r.cleared
        );
        writeln!(
            out,
            "{:<14} {:<20} {:>7} {:>9} {:>6}  {}",
            truncate(&sanitize::line(&r.queue), 14),
            truncate(&sanitize::line(&r.field), 20),
            r.records,
            r.corrected,
            share(r.share),
            if r.corrected == 0 {
                "-".to_string()
            } else {
                kinds
            }
        )?;
    }
    Ok(())
}

fn field_csv(rows: &[FieldFigure], out: &mut dyn Write) -> CliResult {
    let clean = cleaner();
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "queue",
        "field",
        "records",
        "corrected",
        "share",
        "filled",
        "changed",
        "cleared",
    ])?;
    for r in rows {
        w.write_record([
            clean(&r.queue),
            clean(&r.field),
            r.records.to_string(),
            r.corrected.to_string(),
            r.share.map_or(String::new(), |s| format!("{s:.4}")),
            r.filled.to_string(),
            r.changed.to_string(),
            r.cleared.to_string(),
        ])?;
    }
    w.flush()?;
    Ok(())
}

fn source_name(s: &Option<String>) -> String {
    s.as_deref()
        .map_or("(none)".into(), |s| sanitize::line(s).into_owned())
}

fn source_table(heading: &str, rows: &[SourceFigure], out: &mut dyn Write) -> CliResult {
    writeln!(out, "{heading}, corrections by source (dirtiest first)")?;
    if rows.is_empty() {
        writeln!(out, "no record was completed in the period")?;
        return Ok(());
    }
    writeln!(
        out,
        "{:<20} {:>7} {:>9} {:>6} {:>11}  most corrected",
        "source", "records", "corrected", "share", "corrections"
    )?;
    for r in rows {
        writeln!(
            out,
            "{:<20} {:>7} {:>9} {:>6} {:>11}  {}",
            truncate(&source_name(&r.source), 20),
            r.records,
            r.corrected,
            share(r.share),
            r.corrections,
            r.top_field
                .as_deref()
                .map_or("-".into(), |f| sanitize::line(f).into_owned())
        )?;
    }
    Ok(())
}

fn source_csv(rows: &[SourceFigure], out: &mut dyn Write) -> CliResult {
    let clean = cleaner();
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "source",
        "records",
        "corrected",
        "share",
        "corrections",
        "top_field",
    ])?;
    for r in rows {
        w.write_record([
            r.source.as_deref().map(&clean).unwrap_or_default(),
            r.records.to_string(),
            r.corrected.to_string(),
            r.share.map_or(String::new(), |s| format!("{s:.4}")),
            r.corrections.to_string(),
            r.top_field.as_deref().map(&clean).unwrap_or_default(),
        ])?;
    }
    w.flush()?;
    Ok(())
}
