//! The supervisors' figures over a period (`caseload report`, the Stats view's figures,
//! `stats --json`'s `figures`), assembled once for both backends from the holds that
//! ended in the period (the day summary's rows for its whole UTC days, the `holds` rows
//! for the edges; see [`super::figure_days`]) and the open items' due times. What a hold
//! is, and what a finish's handle, wait and cycle times are, is defined in
//! [`crate::domain::figures`].

use std::collections::BTreeMap;

use serde::Serialize;

use super::figure_days::{DayCell, Finish};
use crate::domain::figures::{LOST, Period, percentile};
use crate::domain::{EventKind, Millis, QueueSettings};
use crate::store::error::{Result, StoreError};

/// What to report on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportQuery {
    pub period: Period,
    /// Only this queue.
    pub queue: Option<String>,
    /// Read every hold row of the period instead of the day summary for its whole days
    /// (the same figures, slower; tests compare the two).
    pub rows_only: bool,
}

impl ReportQuery {
    /// Refuses an empty period (`Invalid`), before anything is read.
    pub(crate) fn check(&self) -> Result<()> {
        if self.period.since >= self.period.until {
            return Err(StoreError::Invalid(format!(
                "the period is empty: --since ({}) is not before --until ({})",
                crate::domain::time::rfc3339(self.period.since),
                crate::domain::time::rfc3339(self.period.until)
            )));
        }
        Ok(())
    }
}

/// The figures of one period, per person and per queue.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// When the figures were taken.
    #[serde(serialize_with = "ser_time")]
    pub at: Millis,
    #[serde(serialize_with = "ser_time")]
    pub since: Millis,
    #[serde(serialize_with = "ser_time")]
    pub until: Millis,
    /// The width of one entry of each queue's `completed_series`.
    pub slot_ms: i64,
    /// Everyone who held an item in the period, most completions first.
    pub people: Vec<Figures>,
    /// Every queue (or the one asked for), by name.
    pub queues: Vec<QueueFigures>,
}

fn ser_time<S: serde::Serializer>(t: &Millis, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&crate::domain::time::rfc3339(*t))
}

/// The figures of one person or one queue over the period (holds that ended in it).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Figures {
    /// The person or the queue.
    pub name: String,
    pub completed: u64,
    pub failed: u64,
    pub skipped: u64,
    pub released: u64,
    /// Locks that expired, were taken over, unlocked, or reassigned away.
    pub lost: u64,
    /// Time locks were held, all holds that ended in the period.
    pub held_ms: i64,
    /// Per person: their own time on the items they finished; per queue: the items'
    /// handle times (every holder). Nearest-rank median and 90th percentile.
    pub handle_median_ms: Option<i64>,
    pub handle_p90_ms: Option<i64>,
    /// Completions per hour of held time.
    pub completed_per_hour: Option<f64>,
}

/// How often one reason was given: the reasons of fails, skips, releases (and parks)
/// that ended in the period, counted by the ready-made text's code, free texts as
/// `other`, none given as `(none)` ([`crate::domain::texts::reason_group`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReasonCount {
    pub queue: String,
    pub person: String,
    /// The event's kind: failed, skipped, released (parked).
    pub kind: String,
    pub reason: String,
    pub count: u64,
}

/// The review figures of a period (issue 29 §1): per person, the reviews they gave and
/// the rejections of their own work; per queue, what waits for review now and since when.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReviewFigures {
    pub people: Vec<PersonReviews>,
    pub queues: Vec<ReviewBacklog>,
}

/// One person's reviews in a period.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PersonReviews {
    pub person: String,
    /// Items they accepted or rejected.
    pub reviewed: u64,
    /// Items of theirs others rejected.
    pub rejected: u64,
    /// Verdicts (accepts and rejects) on their work.
    pub judged: u64,
    /// The share of those verdicts that rejected it (0 to 1; none without verdicts).
    pub rejection_rate: Option<f64>,
    /// The median time their work waited from its submission to its verdict.
    pub review_wait_median_ms: Option<i64>,
}

/// A verdict of the period: who gave it, whose work it judged (the actor of the item's
/// last submission before it), whether it rejected, and how long after that submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub reviewer: String,
    pub maker: String,
    pub rejected: bool,
    pub wait_ms: i64,
}

/// Each person's review figures from the period's verdicts, by name.
pub(crate) fn people_reviews(verdicts: &[Verdict]) -> Vec<PersonReviews> {
    #[derive(Default)]
    struct Acc {
        reviewed: u64,
        rejected: u64,
        waits: Vec<i64>,
    }
    let mut by: std::collections::BTreeMap<&str, Acc> = Default::default();
    for v in verdicts {
        by.entry(&v.reviewer).or_default().reviewed += 1;
        let maker = by.entry(&v.maker).or_default();
        maker.rejected += u64::from(v.rejected);
        maker.waits.push(v.wait_ms.max(0));
    }
    by.into_iter()
        .map(|(person, mut a)| {
            a.waits.sort_unstable();
            let judged = a.waits.len() as u64;
            PersonReviews {
                person: person.to_string(),
                reviewed: a.reviewed,
                rejected: a.rejected,
                judged,
                rejection_rate: (judged > 0).then(|| a.rejected as f64 / judged as f64),
                review_wait_median_ms: crate::domain::figures::percentile(&a.waits, 50),
            }
        })
        .collect()
}

/// What waits for review in one queue now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReviewBacklog {
    pub queue: String,
    pub waiting: u64,
    /// When the oldest of them was submitted.
    #[serde(serialize_with = "crate::domain::time::ser_opt_rfc3339")]
    pub oldest_at: Option<Millis>,
}

/// The verdicts (`accepted`, `rejected`) given in `[$1, $2)` on items of queue `$3` (every
/// queue when null): kind, reviewer, maker (the actor of the item's last `submitted`
/// before the verdict) and the time from that submission to the verdict.
pub(crate) const REVIEW_VERDICTS: &str = "SELECT e.kind, e.actor, s.actor, e.at - s.at \
     FROM events e JOIN items i ON i.id = e.item_id \
     JOIN events s ON s.id = (SELECT max(s2.id) FROM events s2 WHERE s2.item_id = e.item_id \
     AND s2.kind = 'submitted' AND s2.id < e.id) \
     WHERE e.kind IN ('accepted', 'rejected') AND e.at >= $1 AND e.at < $2 \
     AND (CAST($3 AS TEXT) IS NULL OR i.queue = $3) ORDER BY e.id";

/// What waits for review now in queue `$1` (every queue when null), by queue: queue, how
/// many, the oldest submission (the `items_review` index).
pub(crate) const REVIEW_BACKLOG: &str = "SELECT queue, count(*), min(finished_at) FROM items \
     WHERE state = 'review' AND (CAST($1 AS TEXT) IS NULL OR queue = $1) \
     GROUP BY queue ORDER BY queue";

/// The kinds of event whose reasons `report --by reason` counts.
pub(crate) const REASON_KINDS: &[crate::domain::EventKind] = &[
    crate::domain::EventKind::Failed,
    crate::domain::EventKind::Skipped,
    crate::domain::EventKind::Released,
    crate::domain::EventKind::Rejected,
];

/// The reasons given in `[$1, $2)`, in queue `$3` (every queue when null), counted by
/// queue, person, kind and group: one SQL for both backends (`->>` reads the detail's
/// JSON on each).
pub(crate) fn reasons_sql() -> String {
    format!(
        "SELECT i.queue, e.actor, e.kind, \
         CASE WHEN e.detail ->> 'code' IS NOT NULL THEN e.detail ->> 'code' \
              WHEN trim(coalesce(e.detail ->> 'reason', '')) <> '' THEN 'other' \
              ELSE '(none)' END AS reason, \
         count(*) FROM events e JOIN items i ON i.id = e.item_id \
         WHERE e.kind IN ({}) AND e.at >= $1 AND e.at < $2 \
         AND (CAST($3 AS TEXT) IS NULL OR i.queue = $3) \
         GROUP BY 1, 2, 3, 4",
        crate::store::sql::kinds_sql(REASON_KINDS)
    )
}

/// The records completed in `[$1, $2)` and still done, in queue `$3` (every queue when
/// null), by id: id, queue, source, params as JSON text (`report --by field|source`).
pub(crate) const COMPLETED_RECORDS: &str = "SELECT i.id, i.queue, i.source, \
     CAST(i.params AS TEXT) FROM items i WHERE i.state = 'done' AND i.id IN \
     (SELECT e.item_id FROM events e WHERE e.kind = 'completed' AND e.at >= $1 AND e.at < $2) \
     AND (CAST($3 AS TEXT) IS NULL OR i.queue = $3) ORDER BY i.id";

/// The corrections (`field_changed` details as JSON text) of the items completed in
/// `[$1, $2)`, by item and then oldest first.
pub(crate) const COMPLETED_CHANGES: &str = "SELECT f.item_id, CAST(f.detail AS TEXT) \
     FROM events f WHERE f.kind = 'field_changed' AND f.item_id IN \
     (SELECT e.item_id FROM events e WHERE e.kind = 'completed' AND e.at >= $1 AND e.at < $2) \
     ORDER BY f.item_id, f.id";

/// The completed records with their corrections, from the rows of [`COMPLETED_RECORDS`]
/// and [`COMPLETED_CHANGES`] (both in item order). A detail or params that is not JSON
/// (a hand-edited row) reads as empty rather than failing the report.
pub(crate) fn completed_records(
    records: Vec<(i64, String, Option<String>, String)>,
    changes: Vec<(i64, String)>,
) -> Vec<crate::domain::corrections::CompletedRecord> {
    let json = |s: &str| serde_json::from_str(s).unwrap_or(serde_json::Value::Null);
    let mut changes = changes.into_iter().peekable();
    records
        .into_iter()
        .map(|(id, queue, source, params)| {
            while changes.next_if(|(i, _)| *i < id).is_some() {}
            let mut mine = Vec::new();
            while let Some((_, d)) = changes.next_if(|(i, _)| *i == id) {
                mine.push(json(&d));
            }
            crate::domain::corrections::CompletedRecord {
                id,
                queue,
                source,
                params: json(&params),
                changes: mine,
            }
        })
        .collect()
}

/// The reasons' rows in the order both backends give them (byte order, whatever the
/// database's collation): by queue, kind, most given first, reason, person.
pub(crate) fn ordered(mut rows: Vec<ReasonCount>) -> Vec<ReasonCount> {
    rows.sort_by(|a, b| {
        (
            &a.queue,
            &a.kind,
            std::cmp::Reverse(a.count),
            &a.reason,
            &a.person,
        )
            .cmp(&(
                &b.queue,
                &b.kind,
                std::cmp::Reverse(b.count),
                &b.reason,
                &b.person,
            ))
    });
    rows
}

/// A queue's figures, with its waits and its due-date health.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct QueueFigures {
    #[serde(flatten)]
    pub figures: Figures,
    /// Of the items finished in the period: creation to first hold, creation to finish.
    pub wait_median_ms: Option<i64>,
    pub cycle_median_ms: Option<i64>,
    /// Open items past their due time now.
    pub overdue: u64,
    /// Open items due within the next hour.
    pub due_next_hour: u64,
    /// Of the items completed late in the period: the median time past due.
    pub late_median_ms: Option<i64>,
    /// Of the items with a due time completed in the period: the share completed by it.
    pub on_time_share: Option<f64>,
    /// Completions per slot of `slot_ms`, oldest first.
    pub completed_series: Vec<u64>,
    /// Items merged as duplicates in the period (`caseload merge`).
    pub merged: u64,
}

/// One `holds` row, as a backend reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HoldRow {
    pub queue: String,
    pub holder: String,
    pub started: Millis,
    pub ended: Millis,
    pub how: String,
    pub handle_ms: Option<i64>,
    pub own_ms: Option<i64>,
    pub wait_ms: Option<i64>,
    pub cycle_ms: Option<i64>,
    pub late_ms: Option<i64>,
}

impl HoldRow {
    /// The hold's figures when it finished the item.
    fn finish(&self) -> Option<Finish> {
        let completed = match self.how.as_str() {
            "completed" => true,
            "failed" => false,
            _ => return None,
        };
        Some(Finish {
            completed,
            ended: self.ended,
            own_ms: self.own_ms?,
            handle_ms: self.handle_ms?,
            wait_ms: self.wait_ms?,
            cycle_ms: self.cycle_ms?,
            late_ms: self.late_ms,
        })
    }
}

/// What a backend reads, in one snapshot, for a [`Report`].
pub(crate) struct ReportFacts {
    pub now: Millis,
    pub queues: Vec<QueueSettings>,
    /// The holds that ended in the period's edges (all of it without whole UTC days; see
    /// [`super::figure_days::split`]), in the queue asked for.
    pub rows: Vec<HoldRow>,
    /// The day summary's rows of the period's whole UTC days, in the queue asked for.
    pub cells: Vec<DayCell>,
    /// Per queue: open items overdue now, and due within the next hour.
    pub due: Vec<(String, i64, i64)>,
    /// Per queue: items merged as duplicates in the period ([`MERGED`]).
    pub merged: Vec<(String, i64)>,
}

/// Items merged as duplicates (`duplicate_of` set) with their cancellation in
/// `[$1, $2)`, per queue: one range of the `items_merged` index.
pub(crate) const MERGED: &str = "SELECT queue, count(*) FROM items \
     WHERE duplicate_of IS NOT NULL AND finished_at >= $1 AND finished_at < $2 GROUP BY queue";

/// The most entries a series has.
const MAX_SLOTS: i64 = 120;

/// The width of one series entry: hours for up to two days, else days, widened so that
/// no series has more than [`MAX_SLOTS`] entries.
pub(crate) fn slot_ms(period: Period) -> i64 {
    let len = (period.until - period.since).max(1);
    let base = if len <= 2 * 86_400_000 {
        3_600_000
    } else {
        86_400_000
    };
    base.max((len + MAX_SLOTS - 1) / MAX_SLOTS)
}

#[derive(Default)]
struct Acc {
    f: Figures,
    handle: Vec<i64>,
    wait: Vec<i64>,
    cycle: Vec<i64>,
    late: Vec<i64>,
    with_due: u64,
    series: Vec<u64>,
}

impl Acc {
    /// One hold's counts and held time.
    fn count(&mut self, r: &HoldRow) {
        let f = &mut self.f;
        f.held_ms += r.ended - r.started;
        match EventKind::parse(&r.how) {
            Some(EventKind::Completed) => f.completed += 1,
            Some(EventKind::Failed) => f.failed += 1,
            Some(EventKind::Skipped) => f.skipped += 1,
            Some(EventKind::Released) => f.released += 1,
            Some(k) if k.is_in(LOST) => f.lost += 1,
            _ => {}
        }
    }

    /// A day summary row's counts and held time (the same sums over its holds).
    fn count_cell(&mut self, c: &DayCell) {
        let f = &mut self.f;
        let n = |v: i64| v.max(0) as u64;
        f.held_ms += c.held_ms;
        f.completed += n(c.completed);
        f.failed += n(c.failed);
        f.skipped += n(c.skipped);
        f.released += n(c.released);
        f.lost += n(c.lost);
    }

    /// A finish, for a queue: its handle, wait and cycle times, its slot, its lateness.
    fn queue_finish(&mut self, x: &Finish, since: Millis, slot: i64, slots: usize) {
        self.handle.push(x.handle_ms);
        self.wait.push(x.wait_ms);
        self.cycle.push(x.cycle_ms);
        if !x.completed {
            return;
        }
        if self.series.is_empty() {
            self.series = vec![0; slots];
        }
        let i = ((x.ended - since).max(0) / slot) as usize;
        if let Some(n) = self.series.get_mut(i.min(slots.saturating_sub(1))) {
            *n += 1;
        }
        if let Some(l) = x.late_ms {
            self.with_due += 1;
            if l > 0 {
                self.late.push(l);
            }
        }
    }

    fn finish(mut self) -> (Figures, Acc) {
        self.handle.sort_unstable();
        self.f.handle_median_ms = percentile(&self.handle, 50);
        self.f.handle_p90_ms = percentile(&self.handle, 90);
        self.f.completed_per_hour = (self.f.held_ms > 0)
            .then(|| self.f.completed as f64 * 3_600_000.0 / self.f.held_ms as f64);
        (std::mem::take(&mut self.f), self)
    }
}

/// Adds the edges' hold rows and the whole days' summary rows to each person's and each
/// queue's accumulator; `at` is the period's start, its slot width and slot count.
fn add_facts(
    f: &ReportFacts,
    at: (Millis, i64, usize),
    people: &mut BTreeMap<String, Acc>,
    queues: &mut BTreeMap<String, Acc>,
) -> Result<()> {
    let (since, slot, slots) = at;
    for r in &f.rows {
        let finish = r.finish();
        let p = people.entry(r.holder.clone()).or_default();
        p.count(r);
        p.handle.extend(finish.map(|x| x.own_ms));
        let qa = queues.entry(r.queue.clone()).or_default();
        qa.count(r);
        if let Some(x) = finish {
            qa.queue_finish(&x, since, slot, slots);
        }
    }
    for c in &f.cells {
        let finishes = c.finishes()?;
        let p = people.entry(c.holder.clone()).or_default();
        p.count_cell(c);
        p.handle.extend(finishes.iter().map(|x| x.own_ms));
        let qa = queues.entry(c.queue.clone()).or_default();
        qa.count_cell(c);
        for x in &finishes {
            qa.queue_finish(x, since, slot, slots);
        }
    }
    Ok(())
}

/// The report from the facts; `Corrupt` when a summary row cannot be read.
pub(crate) fn assemble(q: &ReportQuery, f: ReportFacts) -> Result<Report> {
    let slot = slot_ms(q.period);
    let len = (q.period.until - q.period.since).max(1);
    let slots = ((len + slot - 1) / slot) as usize;
    let mut people: BTreeMap<String, Acc> = BTreeMap::new();
    let mut queues: BTreeMap<String, Acc> = f
        .queues
        .iter()
        .filter(|s| q.queue.as_ref().is_none_or(|n| n == &s.name))
        .map(|s| (s.name.clone(), Acc::default()))
        .collect();
    let at = (q.period.since, slot, slots);
    add_facts(&f, at, &mut people, &mut queues)?;
    let mut people: Vec<Figures> = people
        .into_iter()
        .map(|(name, a)| {
            let (mut f, _) = a.finish();
            f.name = name;
            f
        })
        .collect();
    people.sort_by(|a, b| b.completed.cmp(&a.completed).then(a.name.cmp(&b.name)));
    let due: BTreeMap<&str, (i64, i64)> = f
        .due
        .iter()
        .map(|(q, o, s)| (q.as_str(), (*o, *s)))
        .collect();
    let queues = queues
        .into_iter()
        .map(|(name, a)| {
            let (mut figures, mut a) = a.finish();
            figures.name = name;
            for v in [&mut a.wait, &mut a.cycle, &mut a.late] {
                v.sort_unstable();
            }
            let (overdue, soon) = due.get(figures.name.as_str()).copied().unwrap_or((0, 0));
            let merged = (f.merged.iter())
                .find(|(q, _)| *q == figures.name)
                .map_or(0, |(_, n)| (*n).max(0) as u64);
            let on_time = a.with_due - a.late.len() as u64;
            QueueFigures {
                wait_median_ms: percentile(&a.wait, 50),
                cycle_median_ms: percentile(&a.cycle, 50),
                overdue: overdue.max(0) as u64,
                due_next_hour: soon.max(0) as u64,
                late_median_ms: percentile(&a.late, 50),
                merged,
                on_time_share: (a.with_due > 0).then(|| on_time as f64 / a.with_due as f64),
                completed_series: if a.series.is_empty() {
                    vec![0; slots]
                } else {
                    a.series
                },
                figures,
            }
        })
        .collect();
    Ok(Report {
        at: f.now,
        since: q.period.since,
        until: q.period.until,
        slot_ms: slot,
        people,
        queues,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(queue: &str, holder: &str, how: &str, ended: i64, held: i64) -> HoldRow {
        let fin = matches!(how, "completed" | "failed");
        HoldRow {
            queue: queue.into(),
            holder: holder.into(),
            started: ended - held,
            ended,
            how: how.into(),
            handle_ms: fin.then_some(held * 2),
            own_ms: fin.then_some(held),
            wait_ms: fin.then_some(1000),
            cycle_ms: fin.then_some(5000),
            late_ms: None,
        }
    }

    #[test]
    fn counts_and_percentiles_per_person_and_queue() {
        let q = ReportQuery {
            period: Period {
                since: 0,
                until: 3_600_000,
            },
            queue: None,
            rows_only: false,
        };
        let mut late = row("a", "bob", "completed", 3000, 1000);
        late.late_ms = Some(500);
        let mut early = row("a", "bob", "completed", 3500, 1000);
        early.late_ms = Some(-500);
        let facts = ReportFacts {
            now: 3_600_000,
            queues: vec![QueueSettings::new("a"), QueueSettings::new("b")],
            rows: vec![
                row("a", "alice", "completed", 1000, 600_000),
                row("a", "alice", "released", 2000, 100),
                row("a", "alice", "taken_over", 2500, 100),
                late,
                early,
            ],
            due: vec![("b".into(), 2, 1)],
            merged: vec![("b".into(), 4)],
            cells: vec![],
        };
        let r = assemble(&q, facts).unwrap();
        assert_eq!(r.people[0].name, "bob");
        assert_eq!(r.people[0].completed, 2);
        let alice = &r.people[1];
        assert_eq!((alice.completed, alice.released, alice.lost), (1, 1, 1));
        assert_eq!(alice.handle_median_ms, Some(600_000));
        assert_eq!(alice.held_ms, 600_200);
        let a = &r.queues[0];
        assert_eq!(a.figures.completed, 3);
        assert_eq!(a.on_time_share, Some(0.5));
        assert_eq!(a.late_median_ms, Some(500));
        assert_eq!(a.completed_series, vec![3]);
        assert_eq!((r.queues[1].overdue, r.queues[1].due_next_hour), (2, 1));
        assert_eq!((r.queues[0].merged, r.queues[1].merged), (0, 4));
        assert_eq!(r.queues[1].figures.completed_per_hour, None);
    }

    #[test]
    fn series_slots_stay_few() {
        let p = |days: i64| Period {
            since: 0,
            until: days * 86_400_000,
        };
        assert_eq!(slot_ms(p(1)), 3_600_000);
        assert_eq!(slot_ms(p(30)), 86_400_000);
        assert!(3650 * 86_400_000 / slot_ms(p(3650)) <= MAX_SLOTS);
    }

    #[test]
    fn review_figures_count_verdicts_given_and_on_ones_work() {
        let v = |reviewer: &str, maker: &str, rejected, wait_ms| Verdict {
            reviewer: reviewer.into(),
            maker: maker.into(),
            rejected,
            wait_ms,
        };
        let people = people_reviews(&[
            v("bob", "alice", true, 30),
            v("bob", "alice", false, 10),
            v("carol", "alice", false, 20),
            v("alice", "dave", false, 5),
        ]);
        let row = |n: &str| people.iter().find(|p| p.person == n).unwrap().clone();
        let alice = row("alice");
        assert_eq!((alice.reviewed, alice.judged, alice.rejected), (1, 3, 1));
        assert_eq!(alice.rejection_rate, Some(1.0 / 3.0));
        assert_eq!(alice.review_wait_median_ms, Some(20));
        let bob = row("bob");
        assert_eq!((bob.reviewed, bob.judged, bob.rejected), (2, 0, 0));
        assert_eq!(
            (bob.rejection_rate, bob.review_wait_median_ms),
            (None, None)
        );
        let names: Vec<&str> = people.iter().map(|p| p.person.as_str()).collect();
        assert_eq!(names, ["alice", "bob", "carol", "dave"]);
    }
}
