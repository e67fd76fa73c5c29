//! The supervisors' figures, defined once. A **hold** is one person's span on an item:
//! from the event that gave them its lock (`locked`, `taken_over`, `reassigned`) to the
//! next event that ended it (`completed`, `failed`, `released`, `skipped`, `expired`,
//! `taken_over`, `unlocked`, `reassigned`, `cancelled`). An item's **handle time** at a
//! finish (completed or failed) is the sum of its holds since its previous finish; its
//! **wait time** runs from its creation to its first hold; its **cycle time** from its
//! creation to the finish. Both backends keep these records in a `holds` table (by
//! trigger, in the transaction that writes the ending event) and `caseload check`
//! compares that table with [`records`] over the events.

use std::collections::BTreeMap;

use serde::Serialize;

use super::event::{Event, EventKind};
use super::item::{Item, ItemState};
use super::time::{Millis, Zone, short_duration};

/// Kinds that end a hold and are recorded (a `locked` cannot end a live hold).
pub(crate) const RECORDED_ENDS: &[EventKind] = &[
    EventKind::Released,
    EventKind::Skipped,
    EventKind::Completed,
    EventKind::Failed,
    EventKind::Expired,
    EventKind::TakenOver,
    EventKind::Unlocked,
    EventKind::Reassigned,
    EventKind::Cancelled,
    EventKind::Parked,
];

/// Kinds by which a holder lost the lock to someone else or to the clock ("locks lost";
/// a cancel is not counted as a lost lock).
pub(crate) const LOST: &[EventKind] = &[
    EventKind::Expired,
    EventKind::TakenOver,
    EventKind::Unlocked,
    EventKind::Reassigned,
];

/// One person's span holding one item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    /// The id of the event that ended the hold.
    pub end_event: i64,
    pub holder: String,
    pub started: Millis,
    pub ended: Millis,
    /// The ending event's kind.
    pub how: EventKind,
}

impl Hold {
    /// How long the lock was held.
    pub(crate) fn held_ms(&self) -> i64 {
        self.ended - self.started
    }

    /// True when the hold ended the item (completed or failed).
    pub(crate) fn is_finish(&self) -> bool {
        matches!(self.how, EventKind::Completed | EventKind::Failed)
    }
}

/// The holder an event giving the lock gives it to.
fn taker(e: &Event) -> Option<String> {
    match e.kind {
        EventKind::Reassigned => e.detail_str("to").map(str::to_string),
        EventKind::Locked | EventKind::TakenOver | EventKind::Undone => Some(e.actor.clone()),
        _ => None,
    }
}

/// The item's holds, in order, from its events (oldest first); `open` is the hold still
/// running at the end, if any: `(holder, started)`.
pub(crate) fn holds(events: &[Event]) -> (Vec<Hold>, Option<(String, Millis)>) {
    let mut out = Vec::new();
    let mut cur: Option<(String, Millis)> = None;
    for e in events {
        if e.kind.is_in(EventKind::ENDS_A_HOLD)
            && let Some((holder, started)) = cur.take()
            && e.kind.is_in(RECORDED_ENDS)
        {
            out.push(Hold {
                end_event: e.id,
                holder,
                started,
                ended: e.at,
                how: e.kind,
            });
        }
        if e.kind.is_in(EventKind::TAKES_LOCK) {
            cur = taker(e).map(|h| (h, e.at));
        }
    }
    (out, cur)
}

/// What a finish adds to its hold's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FinishTimes {
    /// Every holder's time since the previous finish.
    pub handle_ms: i64,
    /// The finishing holder's own share of it.
    pub own_ms: i64,
    /// Creation to the earliest start of the item's holds up to this one (its first hold,
    /// unless a later take's transaction began before an earlier hold's).
    pub wait_ms: i64,
    /// Creation to this finish.
    pub cycle_ms: i64,
    /// The finish minus the due time (negative: early), when the item has one.
    pub late_ms: Option<i64>,
}

/// One row of the `holds` table: a hold, and the finish figures when it finished the item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoldRecord {
    pub item_id: i64,
    pub queue: String,
    pub hold: Hold,
    pub finish: Option<FinishTimes>,
}

/// The records the `holds` table must hold for one item, given its events (oldest first)
/// and its queue now. A hold counts for the queue the item was in when the hold ended:
/// the queue named by the item's last move before that event (`edit --queue` and `queue
/// rename` write a `noted` event), else the queue its first later move left, else its
/// queue now. A finish is late (or early) against the due time when it happened: the one
/// the first later move of the due time moved on from (a park's end or a supervisor's
/// edit: `due: {from, to}` in its detail), else `due_at`.
pub fn records(
    item_id: i64,
    queue: &str,
    created_at: Millis,
    due_at: Option<Millis>,
    events: &[Event],
) -> Vec<HoldRecord> {
    let (hs, _) = holds(events);
    let moves: Vec<&Event> = events.iter().filter(|e| is_move(e)).collect();
    // The earliest start of the holds so far: a take whose transaction began before the
    // previous holder's release committed (PostgreSQL stamps an event with its
    // transaction's start) starts before the hold it follows.
    let mut first_start: Option<Millis> = None;
    let mut since_finish: Vec<&Hold> = Vec::new();
    let mut out = Vec::with_capacity(hs.len());
    for h in &hs {
        first_start = Some(first_start.map_or(h.started, |f| f.min(h.started)));
        since_finish.push(h);
        let finish = h.is_finish().then(|| {
            let handle_ms = since_finish.iter().map(|x| x.held_ms()).sum();
            let own_ms = since_finish
                .iter()
                .filter(|x| x.holder == h.holder)
                .map(|x| x.held_ms())
                .sum();
            FinishTimes {
                handle_ms,
                own_ms,
                wait_ms: first_start.unwrap_or(h.started) - created_at,
                cycle_ms: h.ended - created_at,
                late_ms: due_when_ended(events, h.end_event)
                    .unwrap_or(due_at)
                    .map(|d| h.ended - d),
            }
        });
        if finish.is_some() {
            since_finish.clear();
        }
        out.push(HoldRecord {
            item_id,
            queue: queue_when_ended(&moves, h.end_event).unwrap_or_else(|| queue.to_string()),
            hold: h.clone(),
            finish,
        });
    }
    out
}

/// The queue an item was in at its event `end` (see [`records`]), when one of its moves
/// (in event order) says.
fn queue_when_ended(moves: &[&Event], end: i64) -> Option<String> {
    let at = moves.partition_point(|e| e.id < end);
    let before = at.checked_sub(1).map(|i| moves[i]);
    let after = moves[at..].iter().find(|e| e.id > end);
    before
        .and_then(|b| detail_text(b, "to").or_else(|| detail_text(b, "queue")))
        .or_else(|| {
            after.and_then(|a| detail_text(a, "from").or_else(|| detail_text(a, "renamed_from")))
        })
}

/// The due time an item had at its event `end` (`None`: none), when a later event moved
/// it (a park's end, a supervisor's edit: `due: {from, to}`).
fn due_when_ended(events: &[Event], end: i64) -> Option<Option<Millis>> {
    events
        .iter()
        .filter(|e| e.id > end && matches!(e.kind, EventKind::Woke | EventKind::Noted))
        .find_map(|e| e.detail.get("due").filter(|d| !d.is_null()))
        .map(|d| d.get("from").and_then(serde_json::Value::as_i64))
}

/// A `noted` event that moved the item to another queue.
fn is_move(e: &Event) -> bool {
    e.kind == EventKind::Noted
        && (e.detail_str("field") == Some("queue")
            || e.detail.get("renamed_from").is_some_and(|v| !v.is_null()))
}

/// A detail field as the SQL definition reads it (`->>`): text, numbers as their digits.
fn detail_text(e: &Event, key: &str) -> Option<String> {
    match e.detail.get(key)? {
        serde_json::Value::Null => None,
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Bool(b) => Some(u8::from(*b).to_string()),
        v => Some(v.to_string()),
    }
}

/// One item's figures, as the detail pane and `caseload show` give them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ItemFigures {
    /// Time each person held the item, over its whole history (the running hold up to
    /// now included), most first.
    pub handled: Vec<PersonTime>,
    /// Creation to the first hold; `None` while never taken.
    pub wait_ms: Option<i64>,
    /// Creation to the finish (done, failed or cancelled); `None` while open.
    pub cycle_ms: Option<i64>,
    /// Time spent parked (a call-back), counted apart: neither handle time nor wait time;
    /// a park still running counts up to now. 0 when never parked.
    pub parked_ms: i64,
    /// Who holds it now, since when.
    #[serde(skip)]
    pub holding: Option<String>,
    #[serde(skip)]
    state: Option<ItemState>,
    #[serde(skip)]
    age_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PersonTime {
    pub person: String,
    pub ms: i64,
}

impl ItemFigures {
    /// The figures of `item` from its events (oldest first) at `now`.
    pub fn of(item: &Item, events: &[Event], now: Millis) -> ItemFigures {
        let (hs, running) = holds(events);
        let mut by: BTreeMap<&str, i64> = BTreeMap::new();
        for h in &hs {
            *by.entry(h.holder.as_str()).or_default() += h.held_ms();
        }
        if let Some((holder, started)) = &running {
            *by.entry(holder.as_str()).or_default() += (now - started).max(0);
        }
        let mut handled: Vec<PersonTime> = by
            .into_iter()
            .map(|(p, ms)| PersonTime {
                person: p.to_string(),
                ms,
            })
            .collect();
        handled.sort_by(|a, b| b.ms.cmp(&a.ms).then(a.person.cmp(&b.person)));
        let first = hs
            .first()
            .map(|h| h.started)
            .or(running.as_ref().map(|r| r.1));
        ItemFigures {
            handled,
            wait_ms: first.map(|t| t - item.created_at),
            cycle_ms: item.finished_at.map(|t| t - item.created_at),
            parked_ms: parked_ms(events, now),
            holding: running.map(|r| r.0),
            state: Some(item.state),
            age_ms: now - item.created_at,
        }
    }

    /// One line: "handled 12m by alice, 3m by bob; waited 2h; done 2h15m after creation".
    /// Names are as stored: the caller sanitizes before a terminal.
    pub fn sentence(&self) -> String {
        let mut parts = Vec::new();
        if self.handled.is_empty() {
            parts.push("never handled".to_string());
        } else {
            let who: Vec<String> = self
                .handled
                .iter()
                .map(|p| {
                    let now = if self.holding.as_deref() == Some(p.person.as_str()) {
                        " (holding)"
                    } else {
                        ""
                    };
                    format!("{} by {}{now}", short_duration(p.ms), p.person)
                })
                .collect();
            parts.push(format!("handled {}", who.join(", ")));
        }
        match self.wait_ms {
            Some(w) => parts.push(format!("waited {}", short_duration(w))),
            None if matches!(self.state, Some(ItemState::Open | ItemState::Parked)) => {
                parts.push(format!("waiting {}", short_duration(self.age_ms)))
            }
            None => {}
        }
        if self.parked_ms > 0 {
            let now = if self.state == Some(ItemState::Parked) {
                " (parked now)"
            } else {
                ""
            };
            parts.push(format!("parked {}{now}", short_duration(self.parked_ms)));
        }
        if let (Some(c), Some(st)) = (self.cycle_ms, self.state) {
            let word = match st {
                ItemState::Done => "done",
                ItemState::Failed => "failed",
                ItemState::Cancelled => "cancelled",
                ItemState::Review => "submitted for review",
                ItemState::Open | ItemState::Parked => "finished",
            };
            parts.push(format!("{word} {} after creation", short_duration(c)));
        }
        parts.join("; ")
    }
}

/// The time an item spent parked: each `parked` event to the event that ended the park
/// (`woke`, `undone`, or anything that moved it on: a reopen, a cancel), a park still
/// running up to `now`.
fn parked_ms(events: &[Event], now: Millis) -> i64 {
    let mut total = 0;
    let mut since: Option<Millis> = None;
    for e in events {
        match e.kind {
            EventKind::Parked => since = since.or(Some(e.at)),
            EventKind::Noted | EventKind::FieldChanged => {}
            _ => {
                if let Some(t) = since.take() {
                    total += (e.at - t).max(0);
                }
            }
        }
    }
    total + since.map_or(0, |t| (now - t).max(0))
}

/// The nearest-rank percentile `p` (0–100) of sorted values: the smallest value with at
/// least p% of the values at or below it (the median of an even count is the lower
/// middle). `None` when there are none.
pub(crate) fn percentile(sorted: &[i64], p: u32) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (sorted.len() * p as usize).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

/// A period of the figures: `[since, until)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Period {
    pub since: Millis,
    pub until: Millis,
}

/// The periods the Stats view switches between with `p`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PeriodKind {
    #[default]
    Today,
    Days7,
    Days30,
}

impl PeriodKind {
    pub(crate) fn label(self) -> &'static str {
        match self {
            PeriodKind::Today => "today",
            PeriodKind::Days7 => "7 days",
            PeriodKind::Days30 => "30 days",
        }
    }

    /// The period ending at `now`; "today" starts at midnight in `zone`.
    pub fn period(self, now: Millis, zone: Zone) -> Period {
        let since = match self {
            PeriodKind::Today => zone.start_of_day(now),
            PeriodKind::Days7 => now - 7 * DAY,
            PeriodKind::Days30 => now - 30 * DAY,
        };
        Period { since, until: now }
    }

    /// The next period of the `p` switch.
    pub(crate) fn next(self) -> PeriodKind {
        match self {
            PeriodKind::Today => PeriodKind::Days7,
            PeriodKind::Days7 => PeriodKind::Days30,
            PeriodKind::Days30 => PeriodKind::Today,
        }
    }
}

const DAY: i64 = 86_400_000;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(id: i64, at: Millis, actor: &str, kind: EventKind, detail: serde_json::Value) -> Event {
        Event {
            id,
            item_id: 1,
            at,
            actor: actor.into(),
            os_user: actor.into(),
            kind,
            detail,
        }
    }

    const M: i64 = 60_000;

    #[test]
    fn parked_time_is_counted_apart_from_handle_and_wait_time() {
        use EventKind::*;
        let es = [
            ev(1, 0, "x", Created, json!({})),
            ev(2, 10 * M, "alice", Locked, json!({})),
            ev(3, 15 * M, "alice", Parked, json!({})),
            ev(4, 75 * M, "alice", Woke, json!({"by": "owner"})),
            ev(5, 75 * M, "alice", Locked, json!({})),
            ev(6, 80 * M, "alice", Parked, json!({})),
        ];
        let item = Item {
            state: ItemState::Parked,
            created_at: 0,
            ..Item::default()
        };
        let f = ItemFigures::of(&item, &es, 100 * M);
        assert_eq!(f.parked_ms, 60 * M + 20 * M, "one park ended, one running");
        assert_eq!(
            f.handled[0].ms,
            10 * M,
            "parked time is no one's handle time"
        );
        assert_eq!(f.wait_ms, Some(10 * M));
        let line = f.sentence();
        assert!(line.contains("parked 1h20m (parked now)"), "{line}");
    }

    #[test]
    fn a_take_over_splits_the_handle_time() {
        use EventKind::*;
        let es = [
            ev(1, 0, "x", Created, json!({})),
            ev(2, 10 * M, "alice", Locked, json!({})),
            ev(3, 11 * M, "alice", Renewed, json!({})),
            ev(4, 40 * M, "bob", TakenOver, json!({"from": "alice"})),
            ev(5, 45 * M, "bob", Completed, json!({})),
        ];
        let r = records(1, "q", 0, Some(44 * M), &es);
        assert_eq!(r.len(), 2);
        assert_eq!(
            (
                r[0].hold.holder.as_str(),
                r[0].hold.held_ms(),
                r[0].hold.how
            ),
            ("alice", 30 * M, TakenOver)
        );
        assert_eq!(r[0].finish, None);
        assert_eq!(
            r[1].finish,
            Some(FinishTimes {
                handle_ms: 35 * M,
                own_ms: 5 * M,
                wait_ms: 10 * M,
                cycle_ms: 45 * M,
                late_ms: Some(M),
            })
        );
    }

    #[test]
    fn a_hold_counts_for_the_queue_of_its_end() {
        use EventKind::*;
        let moved = |id, from: &str, to: &str| {
            ev(
                id,
                id * M,
                "boss",
                Noted,
                json!({"field": "queue", "from": from, "to": to}),
            )
        };
        let es = [
            ev(1, 0, "x", Created, json!({})),
            ev(2, M, "alice", Locked, json!({})),
            ev(3, 3 * M, "alice", Released, json!({})),
            moved(4, "a", "b"),
            ev(5, 5 * M, "bob", Locked, json!({})),
            ev(6, 6 * M, "bob", Released, json!({})),
            ev(
                7,
                7 * M,
                "boss",
                Noted,
                json!({"queue": "c", "renamed_from": "b"}),
            ),
            ev(8, 8 * M, "cy", Locked, json!({})),
            ev(9, 9 * M, "cy", Completed, json!({})),
        ];
        let r = records(1, "now", 0, None, &es);
        let queues: Vec<&str> = r.iter().map(|r| r.queue.as_str()).collect();
        assert_eq!(queues, ["a", "b", "c"]);
        assert_eq!(records(1, "now", 0, None, &es[..3])[0].queue, "now");
    }

    /// The 20-minute PostgreSQL soak at seed 7401: w4's take began (its transaction's
    /// start, the event's time) before w3's take and release of the item committed, so its
    /// hold starts before the hold it follows. The wait counts to the earliest start so
    /// far, which is what the `holds` trigger can know when the finish is written.
    #[test]
    fn a_take_stamped_before_the_hold_it_follows_waits_to_the_earliest_start_so_far() {
        use EventKind::*;
        let es = [
            ev(1, 0, "x", Created, json!({})),
            ev(2, 419, "w3", Locked, json!({})),
            ev(3, 489, "w3", Released, json!({})),
            ev(4, 409, "w4", Locked, json!({})),
            ev(5, 703, "w4", Completed, json!({})),
            ev(6, 900, "boss", Requeued, json!({})),
            ev(7, 100, "w1", Locked, json!({})),
            ev(8, 950, "w1", Completed, json!({})),
        ];
        let f: Vec<_> = records(1, "q", 0, None, &es)
            .iter()
            .filter_map(|r| r.finish)
            .collect();
        assert_eq!(f[0].wait_ms, 409, "to w4's start, before w3's");
        assert_eq!(f[0].handle_ms, 70 + 294);
        assert_eq!(
            f[1].wait_ms, 100,
            "a later round's earlier start counts from then on"
        );
    }

    #[test]
    fn a_requeued_item_starts_a_new_round() {
        use EventKind::*;
        let es = [
            ev(1, 0, "x", Created, json!({})),
            ev(2, M, "alice", Locked, json!({})),
            ev(3, 3 * M, "alice", Failed, json!({})),
            ev(4, 10 * M, "boss", Requeued, json!({})),
            ev(
                5,
                20 * M,
                "boss",
                Reassigned,
                json!({"from": null, "to": "bob"}),
            ),
            ev(6, 24 * M, "bob", Completed, json!({})),
        ];
        let r = records(1, "q", 0, None, &es);
        let f: Vec<_> = r.iter().map(|r| r.finish.unwrap()).collect();
        assert_eq!(f[0].handle_ms, 2 * M);
        assert_eq!(f[1].handle_ms, 4 * M);
        assert_eq!(f[1].wait_ms, M, "wait is to the first hold ever");
        assert_eq!(f[1].cycle_ms, 24 * M);
        assert_eq!(r[1].hold.holder, "bob");
    }

    #[test]
    fn an_unheld_cancel_or_reassign_ends_nothing() {
        use EventKind::*;
        let es = [
            ev(1, 0, "x", Created, json!({})),
            ev(2, M, "alice", Locked, json!({})),
            ev(3, 2 * M, "alice", Released, json!({})),
            ev(4, 3 * M, "boss", Cancelled, json!({"from": null})),
        ];
        let (hs, running) = holds(&es);
        assert_eq!(hs.len(), 1);
        assert_eq!(running, None);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        assert_eq!(percentile(&[], 50), None);
        assert_eq!(percentile(&[5], 90), Some(5));
        assert_eq!(percentile(&[1, 2, 3, 4], 50), Some(2));
        assert_eq!(percentile(&[1, 2, 3, 4, 5], 50), Some(3));
        let v: Vec<i64> = (1..=10).collect();
        assert_eq!(percentile(&v, 90), Some(9));
    }

    #[test]
    fn periods_of_the_figures_page() {
        let utc = Zone::Utc;
        let now = 100 * DAY + 5 * 3_600_000;
        assert_eq!(
            PeriodKind::Days7.period(now, utc),
            Period {
                since: now - 7 * DAY,
                until: now
            }
        );
    }
}
