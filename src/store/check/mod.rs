//! What `caseload check` looks for on both backends: the one pass over the items and
//! their history ([`pass`]), the day summary and the queues' totals against the holds,
//! and the findings' limits.

pub(crate) mod keys;
pub(crate) mod pass;

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use crate::store::sql::kinds_sql;

/// At most this many rows are named per finding.
pub(crate) const LIMIT: usize = 20;

/// Prefix of findings about rows whose values cannot be read.
pub(crate) const UNREADABLE: &str = "unreadable:";

/// The kinds of finding about the holds table (counted together).
pub(crate) const HOLDS_LACK: &str = "holds lack";
pub(crate) const HOLDS_EXTRA: &str = "holds extra";

/// How a `check` runs: in full or quick, telling its progress, stopped early on request.
pub struct CheckRun<'a> {
    /// Only the checks that are cheap at any size: SQLite's `quick_check` (no index
    /// compared with its table), the items, the counts; not the history.
    pub quick: bool,
    /// Told what is being checked and how far it got: `(what, done, of)`; `of` is 0 when
    /// unknown.
    pub progress: &'a (dyn Fn(&str, u64, u64) + Sync),
    /// Set (by Ctrl-C) to stop: the check returns what it found so far.
    pub stop: &'a AtomicBool,
}

impl CheckRun<'_> {
    /// A full check that tells nobody and is never stopped.
    pub fn plain<T>(f: impl FnOnce(&CheckRun<'_>) -> T) -> T {
        let stop = AtomicBool::new(false);
        f(&CheckRun {
            quick: false,
            progress: &|_, _, _| {},
            stop: &stop,
        })
    }
}

/// Findings, at most [`LIMIT`] named per kind, the rest counted.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    lines: Vec<String>,
    per: BTreeMap<&'static str, usize>,
}

impl Findings {
    /// Adds a finding of `kind`; past the limit only counts it.
    pub(crate) fn add(&mut self, kind: &'static str, line: String) {
        let n = self.per.entry(kind).or_default();
        *n += 1;
        if *n <= LIMIT {
            self.lines.push(line);
        }
    }

    /// Adds a finding that is never limited.
    pub(crate) fn push(&mut self, line: String) {
        self.lines.push(line);
    }

    /// The findings, each kind past the limit followed by how many more there are.
    pub(crate) fn lines(self) -> Vec<String> {
        let mut out = self.lines;
        for (kind, n) in self.per {
            if n > LIMIT {
                let more = n - LIMIT;
                out.push(match kind.strip_prefix("unreadable ") {
                    Some(what) => {
                        format!("{UNREADABLE} {more} more unreadable {what} row(s) not named here")
                    }
                    None => {
                        format!("{more} more finding(s) of the kind above ({kind}) not named here")
                    }
                });
            }
        }
        out
    }
}

/// The kept counts against the pass's: a finding per queue and state that disagree.
pub(crate) fn counts(
    tally: &BTreeMap<(String, String), i64>,
    kept: &BTreeMap<(String, String), i64>,
    found: &mut Findings,
) {
    let keys: std::collections::BTreeSet<_> = tally.keys().chain(kept.keys()).collect();
    for key in keys {
        let (actual, said) = (
            tally.get(key).copied().unwrap_or(0),
            kept.get(key).copied().unwrap_or(0),
        );
        if actual != said {
            found.push(format!(
                "counts: queue '{}' has {actual} {} items but the kept count says {said}",
                key.0, key.1
            ));
        }
    }
}

/// One finish's entry in a `figure_days` list, from a `holds` row (the schema's trigger
/// writes the same text, with a `;` after each entry).
pub(crate) const FINISH_ENTRY: &str = "CASE WHEN how IN ('completed', 'failed') THEN \
     CASE how WHEN 'completed' THEN 'c' ELSE 'f' END \
     || ',' || CAST((ended % 86400000 + 86400000) % 86400000 AS TEXT) \
     || ',' || CAST(own_ms AS TEXT) || ',' || CAST(handle_ms AS TEXT) \
     || ',' || CAST(wait_ms AS TEXT) || ',' || CAST(cycle_ms AS TEXT) \
     || ',' || coalesce(CAST(late_ms AS TEXT), '') END";

/// The day summary's cells (`day, queue, holder`, all their chunks together) that disagree
/// with the `holds` rows: missing, extra, or with other counts, held time or finishes.
/// `sorted` turns a stored `finishes` column into its entries sorted bytewise and joined
/// by `;` (each dialect has its own way); `collate` makes the dialect's ORDER BY bytewise.
/// Both sides are grouped to one row per cell and compared by one sorted `UNION ALL …
/// GROUP BY` of every column: a cell whose two rows agree forms one group of two (a FULL
/// OUTER JOIN of the two, which SQLite plans as a scan inside a scan, took minutes).
pub(crate) fn figure_days_sql(sorted: &str, collate: &str) -> String {
    format!("{} LIMIT {LIMIT}", figure_days_disagreeing(sorted, collate))
}

/// [`figure_days_sql`] without a limit: every cell that disagrees, by day, queue and
/// holder (`check --repair-figures` rebuilds them).
pub(crate) fn figure_days_disagreeing(sorted: &str, collate: &str) -> String {
    let count = |how: &str| format!("sum(CASE WHEN how IN ({how}) THEN 1 ELSE 0 END)");
    let expected = format!(
        "SELECT ended - (ended % 86400000 + 86400000) % 86400000, queue, holder, \
         count(*), {}, {}, {}, {}, {}, sum(ended - started), \
         coalesce(string_agg({FINISH_ENTRY}, ';' ORDER BY {FINISH_ENTRY}{collate}), ''), 2 \
         FROM holds GROUP BY 1, 2, 3",
        count("'completed'"),
        count("'failed'"),
        count("'skipped'"),
        count("'released'"),
        count(&kinds_sql(crate::domain::figures::LOST)),
    );
    let cols = "d, q, h, holds, completed, failed, skipped, released, lost, held_ms, finishes";
    format!(
        "SELECT DISTINCT d, q, h FROM (SELECT {cols} FROM ( \
         SELECT day AS d, queue AS q, holder AS h, sum(holds) AS holds, \
         sum(completed) AS completed, sum(failed) AS failed, sum(skipped) AS skipped, \
         sum(released) AS released, sum(lost) AS lost, sum(held_ms) AS held_ms, \
         {} AS finishes, 1 AS side FROM figure_days GROUP BY day, queue, holder \
         UNION ALL {expected}) u GROUP BY {cols} HAVING count(*) <> 2 OR min(side) = max(side)) x \
         ORDER BY d, q, h",
        sorted.replace("{}", "string_agg(finishes, '')")
    )
}

/// The finding for a summary cell that disagrees with the holds, and how to repair it.
pub(crate) fn figure_day_finding(day: i64, queue: &str, holder: &str) -> String {
    format!(
        "figures summary: the row of {} (UTC day) for queue '{}' and '{}' disagrees with the \
         holds (report and Stats figures for periods over that day are wrong; a supervisor's \
         `caseload check --repair-figures` rebuilds it)",
        crate::domain::time::rfc3339(day),
        crate::domain::sanitize::line(queue),
        crate::domain::sanitize::line(holder),
    )
}

/// The queues whose kept totals (`queue_totals`, all of a queue's rows together) disagree
/// with the holds: missing, extra, or with other counts or held time. Compared as
/// [`figure_days_sql`] compares the day summary (one `UNION ALL … GROUP BY`).
pub(crate) fn queue_totals_sql() -> String {
    format!("{} LIMIT {LIMIT}", queue_totals_disagreeing())
}

/// [`queue_totals_sql`] without a limit: every queue whose totals disagree
/// (`check --repair-figures` recounts them).
pub(crate) fn queue_totals_disagreeing() -> String {
    let count =
        |how: &str| format!("CAST(sum(CASE WHEN how = '{how}' THEN 1 ELSE 0 END) AS BIGINT)");
    let cols = "q, holds, completed, failed, held_ms";
    format!(
        "SELECT DISTINCT q FROM (SELECT {cols} FROM ( \
         SELECT queue AS q, CAST(sum(holds) AS BIGINT) AS holds, \
         CAST(sum(completed) AS BIGINT) AS completed, CAST(sum(failed) AS BIGINT) AS failed, \
         CAST(sum(held_ms) AS BIGINT) AS held_ms, 1 AS side FROM queue_totals GROUP BY queue \
         UNION ALL SELECT queue, CAST(count(*) AS BIGINT), {}, {}, \
         CAST(sum(ended - started) AS BIGINT), 2 FROM holds GROUP BY queue) u \
         GROUP BY {cols} HAVING count(*) <> 2 OR min(side) = max(side)) x \
         ORDER BY q",
        count("completed"),
        count("failed"),
    )
}

/// The finding for a queue whose kept totals disagree with the holds, and how to repair it.
pub(crate) fn queue_total_finding(queue: &str) -> String {
    format!(
        "metrics totals: the kept totals of queue '{}' disagree with the holds (`caseload \
         metrics` counts its completions, failures or hold time wrong; a supervisor's \
         `caseload check --repair-figures` rebuilds them)",
        crate::domain::sanitize::line(queue),
    )
}
