//! `caseload report`: the supervisors' figures over a period, per person or per queue, as
//! a table, CSV or JSON (the figures themselves are the store's, see `store::figures`).

use std::io::{IsTerminal, Write};

use serde_json::{Value, json};

use crate::cli::args::{ReportBy, ReportFormat};
use crate::cli::output::{truncate, write_json};
use crate::cli::{CliResult, Failure};
use crate::domain::figures::Period;
use crate::domain::sanitize;
use crate::domain::time::{date_hm, display_zone, rfc3339, short_duration};
use crate::domain::when::Span;
use crate::domain::{Queues, Role};
use crate::store::figures::ReviewFigures;
use crate::store::{Figures, QueueFigures, Report, ReportQuery, Store};

/// What the command line asked for.
pub(crate) struct Ask {
    pub by: ReportBy,
    pub since: Option<String>,
    pub until: Option<String>,
    pub queue: Option<String>,
    pub format: ReportFormat,
}

/// Parses `--since`/`--until` at `now` (a span goes back from now).
fn when(flag: &str, v: Option<&str>, default: i64, now: i64) -> anyhow::Result<i64> {
    match v {
        Some(v) => super::time_arg(flag, v, now, Span::Back),
        None => Ok(default),
    }
}

/// A lead's report is of their queues (issue 29 §3): `--queue` must be one of them, and
/// without it a lead of one queue gets that queue's; a lead of several names one. Others
/// get what they asked.
fn lead_queue(s: &mut dyn Store, asked: Option<String>) -> Result<Option<String>, Failure> {
    let me = s.actor().name.clone();
    let Some(u) = s.users()?.into_iter().find(|u| u.name == me) else {
        return Ok(asked);
    };
    let (Role::Lead, Queues::Only(mine)) = (u.role, &u.access.takes) else {
        return Ok(asked);
    };
    let refuse = |why: String| Failure {
        code: crate::store::exit::SUPERVISOR_ONLY,
        error: anyhow::anyhow!("not permitted: {}", sanitize::line(&why)),
    };
    match (asked, mine.as_slice()) {
        (Some(q), _) if mine.contains(&q) => Ok(Some(q)),
        (Some(q), _) => Err(refuse(format!(
            "{me} leads {} only; the report of queue '{q}' is a supervisor's",
            mine.join(", ")
        ))),
        (None, [one]) => Ok(Some(one.clone())),
        (None, _) => Err(refuse(format!(
            "{me} leads several queues: name one with --queue ({})",
            mine.join(", ")
        ))),
    }
}

pub(crate) fn report(s: &mut dyn Store, mut ask: Ask, out: &mut dyn Write) -> CliResult {
    ask.queue = lead_queue(s, ask.queue)?;
    let now = s.now()?;
    let zone = display_zone();
    let period = Period {
        since: when("--since", ask.since.as_deref(), zone.start_of_day(now), now)?,
        until: when("--until", ask.until.as_deref(), now, now)?,
    };
    if let Some(q) = &ask.queue {
        // An unknown queue is named, with the known ones, rather than reported as empty.
        s.queue(q)?;
    }
    match ask.by {
        ReportBy::Reason => {
            return super::report_reasons::report(s, period, ask.queue, ask.format, out);
        }
        ReportBy::Field | ReportBy::Source => {
            return super::report_fields::report(s, ask.by, period, ask.queue, ask.format, out);
        }
        ReportBy::Person | ReportBy::Queue => {}
    }
    let query = ReportQuery {
        period,
        queue: ask.queue,
        rows_only: false,
    };
    let r = s.report(&query)?;
    let reviews = s.reviews(&query)?;
    match ask.format {
        ReportFormat::Json => {
            let mut v = as_json(&r, ask.by);
            v["reviews"] = serde_json::to_value(&reviews)?;
            // The backlog's oldest age, as of the report's time.
            if let Some(qs) = v["reviews"]["queues"].as_array_mut() {
                for (j, q) in qs.iter_mut().zip(&reviews.queues) {
                    j["oldest_age_ms"] = json!(q.oldest_at.map(|t| (r.at - t).max(0)));
                }
            }
            write_json(out, &v)?;
        }
        ReportFormat::Csv => csv(&r, ask.by, out)?,
        ReportFormat::Table => {
            table(&r, ask.by, out)?;
            review_lines(&reviews, ask.by, r.at, out)?;
        }
    }
    Ok(())
}

/// The table's review figures, when there are any: reviews given and work rejected per
/// person, or what waits for review per queue (and for how long).
fn review_lines(f: &ReviewFigures, by: ReportBy, now: i64, out: &mut dyn Write) -> CliResult {
    if by == ReportBy::Queue {
        for q in &f.queues {
            let age = q.oldest_at.map(|t| short_duration((now - t).max(0)));
            writeln!(
                out,
                "waiting for review in {}: {} (oldest {})",
                sanitize::line(&q.queue),
                q.waiting,
                age.unwrap_or_else(|| "-".into())
            )?;
        }
        return Ok(());
    }
    if f.people.is_empty() {
        return Ok(());
    }
    // Reviews given; and of each person's own work: verdicts, rejected, the share rejected
    // and the median wait from submission to verdict.
    writeln!(
        out,
        "{:<16} {:>8} {:>6} {:>8} {:>8} {:>11}",
        "reviews", "reviewed", "judged", "rejected", "rej.rate", "review wait"
    )?;
    for p in &f.people {
        let share = p
            .rejection_rate
            .map_or_else(|| "-".into(), |r| format!("{:.0}%", r * 100.0));
        writeln!(
            out,
            "{:<16} {:>8} {:>6} {:>8} {:>8} {:>11}",
            truncate(&sanitize::line(&p.person), 16),
            p.reviewed,
            p.judged,
            p.rejected,
            share,
            dur(p.review_wait_median_ms)
        )?;
    }
    Ok(())
}

fn as_json(r: &Report, by: ReportBy) -> Value {
    let rows = match by {
        // (By reason is answered before the figures are read.)
        ReportBy::Person | ReportBy::Reason | ReportBy::Field | ReportBy::Source => {
            serde_json::to_value(&r.people)
        }
        ReportBy::Queue => serde_json::to_value(&r.queues),
    }
    .unwrap_or(Value::Null);
    json!({
        "at": rfc3339(r.at),
        "since": rfc3339(r.since),
        "until": rfc3339(r.until),
        "by": match by { ReportBy::Queue => "queue", _ => "person" },
        "slot_ms": r.slot_ms,
        "rows": rows,
    })
}

fn dur(ms: Option<i64>) -> String {
    ms.map_or_else(|| "-".into(), short_duration)
}

fn secs(ms: Option<i64>) -> String {
    ms.map(|m| format!("{:.1}", m as f64 / 1000.0))
        .unwrap_or_default()
}

fn rate(r: Option<f64>) -> String {
    r.map_or_else(|| "-".into(), |r| format!("{r:.1}"))
}

const PERSON_COLS: [&str; 10] = [
    "person",
    "completed",
    "failed",
    "skipped",
    "released",
    "lost",
    "handle_median_s",
    "handle_p90_s",
    "completed_per_hour",
    "held_s",
];

const QUEUE_EXTRA: [&str; 7] = [
    "wait_median_s",
    "cycle_median_s",
    "overdue",
    "due_next_hour",
    "late_median_s",
    "on_time_share",
    "merged",
];

fn csv_cells(f: &Figures, name: String) -> Vec<String> {
    vec![
        name,
        f.completed.to_string(),
        f.failed.to_string(),
        f.skipped.to_string(),
        f.released.to_string(),
        f.lost.to_string(),
        secs(f.handle_median_ms),
        secs(f.handle_p90_ms),
        f.completed_per_hour
            .map(|r| format!("{r:.2}"))
            .unwrap_or_default(),
        secs(Some(f.held_ms)),
    ]
}

fn csv(r: &Report, by: ReportBy, out: &mut dyn Write) -> CliResult {
    // Raw names into a file or pipe (for fidelity); sanitized onto a terminal.
    let to_terminal = std::io::stdout().is_terminal();
    let clean = |s: &str| -> String {
        if to_terminal {
            sanitize::line(s).into_owned()
        } else {
            s.to_string()
        }
    };
    let mut w = csv::Writer::from_writer(out);
    match by {
        ReportBy::Person | ReportBy::Reason | ReportBy::Field | ReportBy::Source => {
            w.write_record(PERSON_COLS)?;
            for p in &r.people {
                w.write_record(csv_cells(p, clean(&p.name)))?;
            }
        }
        ReportBy::Queue => {
            let mut head: Vec<&str> = PERSON_COLS.to_vec();
            head[0] = "queue";
            head.extend(QUEUE_EXTRA);
            w.write_record(head)?;
            for q in &r.queues {
                let mut cells = csv_cells(&q.figures, clean(&q.figures.name));
                cells.extend([
                    secs(q.wait_median_ms),
                    secs(q.cycle_median_ms),
                    q.overdue.to_string(),
                    q.due_next_hour.to_string(),
                    secs(q.late_median_ms),
                    q.on_time_share
                        .map(|s| format!("{s:.3}"))
                        .unwrap_or_default(),
                    q.merged.to_string(),
                ]);
                w.write_record(cells)?;
            }
        }
    }
    w.flush()?;
    Ok(())
}

fn table(r: &Report, by: ReportBy, out: &mut dyn Write) -> CliResult {
    let zone = display_zone();
    writeln!(
        out,
        "{} to {} ({}), by {}",
        date_hm(r.since),
        date_hm(r.until),
        zone.label(r.at),
        match by {
            ReportBy::Queue => "queue",
            _ => "person",
        }
    )?;
    let head = |first: &str| {
        format!(
            "{first:<16} {:>5} {:>6} {:>7} {:>8} {:>4} {:>7} {:>7} {:>6}",
            "done", "failed", "skipped", "released", "lost", "median", "p90", "done/h"
        )
    };
    let cells = |f: &Figures| {
        format!(
            "{:<16} {:>5} {:>6} {:>7} {:>8} {:>4} {:>7} {:>7} {:>6}",
            truncate(&sanitize::line(&f.name), 16),
            f.completed,
            f.failed,
            f.skipped,
            f.released,
            f.lost,
            dur(f.handle_median_ms),
            dur(f.handle_p90_ms),
            rate(f.completed_per_hour)
        )
    };
    match by {
        ReportBy::Person | ReportBy::Reason | ReportBy::Field | ReportBy::Source => {
            if r.people.is_empty() {
                writeln!(
                    out,
                    "nobody finished, released or lost an item in this period"
                )?;
                return Ok(());
            }
            writeln!(out, "{}", head("person"))?;
            for p in &r.people {
                writeln!(out, "{}", cells(p))?;
            }
        }
        ReportBy::Queue => {
            writeln!(
                out,
                "{} {:>7} {:>7} {:>7} {:>6} {:>7} {:>7} {:>6}",
                head("queue"),
                "wait",
                "cycle",
                "overdue",
                "due<1h",
                "late",
                "on time",
                "merged"
            )?;
            for q in &r.queues {
                writeln!(out, "{} {}", cells(&q.figures), due_cells(q))?;
            }
        }
    }
    Ok(())
}

fn due_cells(q: &QueueFigures) -> String {
    format!(
        "{:>7} {:>7} {:>7} {:>6} {:>7} {:>7} {:>6}",
        dur(q.wait_median_ms),
        dur(q.cycle_median_ms),
        q.overdue,
        q.due_next_hour,
        dur(q.late_median_ms),
        q.on_time_share
            .map_or_else(|| "-".into(), |s| format!("{:.0}%", s * 100.0)),
        q.merged
    )
}
