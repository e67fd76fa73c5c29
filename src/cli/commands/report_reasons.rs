//! `caseload report --by reason`: why items were failed, skipped, released and rejected
//! in a period, counted by the ready-made text's code (free texts as `other`, none given as
//! `(none)`), per queue and person, as a table, CSV or JSON.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};

use serde_json::json;

use crate::cli::CliResult;
use crate::cli::args::ReportFormat;
use crate::cli::output::{truncate, write_json};
use crate::domain::figures::Period;
use crate::domain::sanitize;
use crate::domain::time::{date_hm, display_zone, rfc3339};
use crate::store::{ReasonCount, ReportQuery, Store};

pub(crate) fn report(
    s: &mut dyn Store,
    period: Period,
    queue: Option<String>,
    format: ReportFormat,
    out: &mut dyn Write,
) -> CliResult {
    let rows = s.reasons(&ReportQuery {
        period,
        queue: queue.clone(),
        rows_only: false,
    })?;
    match format {
        ReportFormat::Json => write_json(
            out,
            &json!({
                "since": rfc3339(period.since),
                "until": rfc3339(period.until),
                "by": "reason",
                "rows": rows,
            }),
        )?,
        ReportFormat::Csv => csv(&rows, out)?,
        ReportFormat::Table => {
            let texts = s.texts(queue.as_deref())?;
            let text_of = |q: &str, code: &str| {
                texts
                    .iter()
                    .find(|t| t.queue == q && t.code == code)
                    .map(|t| t.text.clone())
            };
            table(&rows, period, &text_of, out)?;
        }
    }
    Ok(())
}

fn csv(rows: &[ReasonCount], out: &mut dyn Write) -> CliResult {
    let to_terminal = std::io::stdout().is_terminal();
    let clean = |s: &str| match to_terminal {
        true => sanitize::line(s).into_owned(),
        false => s.to_string(),
    };
    let mut w = csv::Writer::from_writer(out);
    w.write_record(["queue", "person", "kind", "reason", "count"])?;
    for r in rows {
        w.write_record([
            clean(&r.queue),
            clean(&r.person),
            r.kind.clone(),
            clean(&r.reason),
            r.count.to_string(),
        ])?;
    }
    w.flush()?;
    Ok(())
}

/// How often a reason was given, and by whom how often.
type Tally<'a> = (u64, Vec<(&'a str, u64)>);

/// One line per queue, kind and reason, most given first, with who gave it.
fn table(
    rows: &[ReasonCount],
    period: Period,
    text_of: &dyn Fn(&str, &str) -> Option<String>,
    out: &mut dyn Write,
) -> CliResult {
    let zone = display_zone();
    writeln!(
        out,
        "{} to {} ({}), reasons by queue and person",
        date_hm(period.since),
        date_hm(period.until),
        zone.label(period.until)
    )?;
    if rows.is_empty() {
        writeln!(
            out,
            "no item was failed, skipped, released or rejected in the period"
        )?;
        return Ok(());
    }
    let mut by: BTreeMap<(&str, &str, &str), Tally<'_>> = BTreeMap::new();
    for r in rows {
        let e = by
            .entry((&r.queue, &r.kind, &r.reason))
            .or_insert((0, vec![]));
        e.0 += r.count;
        e.1.push((&r.person, r.count));
    }
    let mut lines: Vec<_> = by.into_iter().collect();
    lines.sort_by(|a, b| (a.0.0, a.0.1, b.1.0, a.0.2).cmp(&(b.0.0, b.0.1, a.1.0, b.0.2)));
    writeln!(
        out,
        "{:<14} {:<8} {:<40} {:>5}  people",
        "queue", "kind", "reason", "count"
    )?;
    for ((queue, kind, reason), (count, mut people)) in lines {
        people.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let who: Vec<String> = people
            .iter()
            .map(|(p, n)| format!("{} {n}", sanitize::line(p)))
            .collect();
        let shown = match text_of(queue, reason) {
            Some(t) => format!("{reason}: {t}"),
            None => reason.to_string(),
        };
        writeln!(
            out,
            "{:<14} {:<8} {:<40} {:>5}  {}",
            truncate(&sanitize::line(queue), 14),
            kind,
            truncate(&sanitize::line(&shown), 40),
            count,
            who.join(", ")
        )?;
    }
    Ok(())
}
