//! `caseload metrics`: each queue's figures for a monitoring system, in OpenMetrics text
//! (`# HELP`, `# TYPE`, `# EOF`), the Prometheus text format node_exporter's textfile
//! collector reads, or JSON.

use std::fmt::Write as _;
use std::io::Write;

use clap::{Args, ValueEnum};
use serde_json::json;

use crate::cli::CliResult;
use crate::cli::output::write_json;
use crate::domain::time::rfc3339;
use crate::store::Store;
use crate::store::metrics::{Metrics, QueueMetrics};

/// `caseload metrics`'s flags.
#[derive(Debug, Args)]
pub struct MetricsArgs {
    /// Output format: OpenMetrics text, the Prometheus text format (node_exporter's
    /// textfile collector), or one JSON object.
    #[arg(long, value_enum, default_value = "openmetrics")]
    pub format: MetricsFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MetricsFormat {
    /// OpenMetrics 1.0 text, ending with `# EOF`.
    Openmetrics,
    /// The Prometheus text format 0.0.4 (for node_exporter's textfile collector).
    Prometheus,
    /// One JSON object.
    Json,
}

pub(crate) fn metrics(s: &mut dyn Store, a: &MetricsArgs, out: &mut dyn Write) -> CliResult {
    let m = s.metrics()?;
    match a.format {
        MetricsFormat::Json => write_json(out, &as_json(&m))?,
        MetricsFormat::Openmetrics => out.write_all(text(&m, true).as_bytes())?,
        MetricsFormat::Prometheus => out.write_all(text(&m, false).as_bytes())?,
    }
    Ok(())
}

fn as_json(m: &Metrics) -> serde_json::Value {
    let queues: Vec<_> = m
        .queues
        .iter()
        .map(|q| {
            let items: serde_json::Map<_, _> = q
                .states
                .iter()
                .map(|(state, n)| (state.clone(), json!(n)))
                .collect();
            json!({
                "queue": q.queue,
                "items": items,
                "open": q.open,
                "held_locks": q.held,
                "expired_locks": q.expired,
                "assigned": q.assigned,
                "parked": q.parked,
                "oldest_open_age_seconds": q.oldest_open_ms.map(|ms| ms as f64 / 1000.0),
                "due_soon": q.due_soon,
                "overdue": q.overdue,
                "completed_total": q.completed,
                "failed_total": q.failed,
                "holds_total": q.holds,
                "held_seconds_total": q.held_ms as f64 / 1000.0,
            })
        })
        .collect();
    json!({ "at": rfc3339(m.at), "queues": queues })
}

/// A count read from a queue's figures.
type Figure = fn(&QueueMetrics) -> u64;

/// What a family reads from a queue's figures.
enum Value {
    Count(Figure),
    Seconds(fn(&QueueMetrics) -> Option<i64>),
}

/// The gauges, one sample per queue: name, help, value.
const GAUGES: &[(&str, &str, Value)] = &[
    (
        "caseload_open_items",
        "Open items (held ones included).",
        Value::Count(|q| q.open),
    ),
    (
        "caseload_held_locks",
        "Locks held with their clock running, expired ones included.",
        Value::Count(|q| q.held),
    ),
    (
        "caseload_expired_locks",
        "Held locks older than the queue's lock time (anyone may take the item over).",
        Value::Count(|q| q.expired),
    ),
    (
        "caseload_assigned_items",
        "Items assigned to someone who has not opened them yet.",
        Value::Count(|q| q.assigned),
    ),
    (
        "caseload_parked_items",
        "Items parked by their holder until a call-back time (no lock held).",
        Value::Count(|q| q.parked),
    ),
    // In-review items: as their state lands it appears in caseload_items (by state) at
    // once; a gauge of its own goes here.
    (
        "caseload_due_soon_items",
        "Open items due within the next 24 hours, not yet overdue.",
        Value::Count(|q| q.due_soon),
    ),
    (
        "caseload_overdue_items",
        "Open items past their due time.",
        Value::Count(|q| q.overdue),
    ),
    (
        "caseload_oldest_open_item_age_seconds",
        "Age of the queue's oldest open item (0 when nothing is open).",
        Value::Seconds(|q| Some(q.oldest_open_ms.unwrap_or(0))),
    ),
];

/// The counters (monotonic, from the holds the audit trail ended): family, help, value.
const COUNTERS: &[(&str, &str, Figure)] = &[
    (
        "caseload_completions",
        "Items completed, since the database began.",
        |q| q.completed,
    ),
    (
        "caseload_failures",
        "Items failed, since the database began.",
        |q| q.failed,
    ),
];

/// A label value as both text formats write it: backslash, double quote and newline
/// escaped.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn seconds(ms: i64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// The text exposition: OpenMetrics (`open`: counters' family without `_total`, `# EOF`)
/// or the Prometheus text format.
fn text(m: &Metrics, open: bool) -> String {
    let mut t = String::new();
    let q_label = |q: &QueueMetrics| format!("queue=\"{}\"", label(&q.queue));
    let _ = writeln!(
        t,
        "# HELP caseload_items Items by queue and state (every state the database knows)."
    );
    let _ = writeln!(t, "# TYPE caseload_items gauge");
    for q in &m.queues {
        for (state, n) in &q.states {
            let _ = writeln!(
                t,
                "caseload_items{{{},state=\"{}\"}} {n}",
                q_label(q),
                label(state)
            );
        }
    }
    for (name, help, value) in GAUGES {
        let _ = writeln!(t, "# HELP {name} {help}");
        let _ = writeln!(t, "# TYPE {name} gauge");
        if open && name.ends_with("_seconds") {
            let _ = writeln!(t, "# UNIT {name} seconds");
        }
        for q in &m.queues {
            let v = match value {
                Value::Count(f) => f(q).to_string(),
                Value::Seconds(f) => seconds(f(q).unwrap_or(0)),
            };
            let _ = writeln!(t, "{name}{{{}}} {v}", q_label(q));
        }
    }
    for (family, help, value) in COUNTERS {
        let typed = if open {
            family.to_string()
        } else {
            format!("{family}_total")
        };
        let _ = writeln!(t, "# HELP {typed} {help}");
        let _ = writeln!(t, "# TYPE {typed} counter");
        for q in &m.queues {
            let _ = writeln!(t, "{family}_total{{{}}} {}", q_label(q), value(q));
        }
    }
    let name = "caseload_hold_duration_seconds";
    let _ = writeln!(
        t,
        "# HELP {name} How long holds lasted (from taking an item to releasing, skipping, \
         losing or finishing it), since the database began."
    );
    let _ = writeln!(t, "# TYPE {name} summary");
    if open {
        let _ = writeln!(t, "# UNIT {name} seconds");
    }
    for q in &m.queues {
        let _ = writeln!(t, "{name}_count{{{}}} {}", q_label(q), q.holds);
        let _ = writeln!(
            t,
            "{name}_sum{{{}}} {}",
            q_label(q),
            seconds(q.held_ms as i64)
        );
    }
    if open {
        let _ = writeln!(t, "# EOF");
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped_and_the_text_ends_with_eof() {
        let m = Metrics {
            at: 0,
            queues: vec![QueueMetrics {
                queue: "a\"b\\c".into(),
                states: vec![("open".into(), 2)],
                open: 2,
                oldest_open_ms: Some(1_500),
                completed: 3,
                holds: 4,
                held_ms: 12_345,
                ..QueueMetrics::default()
            }],
        };
        let t = text(&m, true);
        assert!(
            t.contains("caseload_items{queue=\"a\\\"b\\\\c\",state=\"open\"} 2\n"),
            "{t}"
        );
        assert!(t.contains("# TYPE caseload_completions counter\n"), "{t}");
        assert!(
            t.contains("caseload_completions_total{queue=\"a\\\"b\\\\c\"} 3\n"),
            "{t}"
        );
        assert!(t.contains("caseload_oldest_open_item_age_seconds{queue=\"a\\\"b\\\\c\"} 1.500\n"));
        assert!(t.contains("caseload_hold_duration_seconds_sum{queue=\"a\\\"b\\\\c\"} 12.345\n"));
        assert!(t.ends_with("# EOF\n"));
        let p = text(&m, false);
        assert!(p.contains("# TYPE caseload_completions_total counter\n") && !p.contains("# EOF"));
    }
}
