//! One pass over the items and their history for `caseload check`, on both backends.
//!
//! The backend streams four row sets in item order (items by id; events, holds and comments
//! by item and id, each served by its index) and the pass walks them side by side, one
//! item at a time, in memory bounded by the longest history: every rule that concerns one
//! item and its rows is checked there, once, instead of one query per rule over the whole
//! history. That makes the expected holds (`crate::domain::figures::records`, the same
//! definition as [`crate::store::sql::EXPECTED_HOLDS`]) one computation per item compared
//! with the item's kept rows, where SQL compared two full recomputations with EXCEPT.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::domain::figures::{HoldRecord, records};
use crate::domain::{Event, EventKind, ItemState};
use crate::store::error::Result;

use super::{Findings, HOLDS_EXTRA, HOLDS_LACK};

/// What the pass reads of an item.
#[derive(Debug, Clone, Default)]
pub(crate) struct ItemRow {
    pub id: i64,
    pub queue: String,
    /// The stored state, as text (it may be none the program knows).
    pub state: Option<String>,
    pub has_lock_user: bool,
    pub has_lock_time: bool,
    pub has_lock_expiry: bool,
    pub lock_token: Option<i64>,
    pub created_at: i64,
    pub due_at: Option<i64>,
    /// `params` is JSON (always on PostgreSQL).
    pub params_json: bool,
    /// Why the row cannot be read in full (SQLite: text that is not UTF-8).
    pub unreadable: Option<String>,
}

/// What the pass reads of an event. `event.detail` is parsed only for the kinds whose
/// detail matters here (moves, reassignments, comments' notes, a park's end that moved the
/// due time); `Null` otherwise.
#[derive(Debug, Clone)]
pub(crate) struct EventRow {
    /// `None` when the stored item id is not a number.
    pub item_id: Option<i64>,
    /// `None` when the stored kind is none the program knows.
    pub event: Option<Event>,
    pub id: i64,
    pub at: i64,
    /// `detail` is JSON (always on PostgreSQL).
    pub detail_json: bool,
    /// A text column that is not UTF-8 (SQLite), by name.
    pub bad_text: Option<&'static str>,
}

/// A row of the `holds` table, as stored (any column may be missing or odd on a file
/// changed by hand).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct KeptHold {
    pub event_id: i64,
    pub ended: Option<i64>,
    pub item_id: Option<i64>,
    pub queue: Option<String>,
    pub holder: Option<String>,
    pub started: Option<i64>,
    pub how: Option<String>,
    pub handle_ms: Option<i64>,
    pub own_ms: Option<i64>,
    pub wait_ms: Option<i64>,
    pub cycle_ms: Option<i64>,
    pub late_ms: Option<i64>,
}

impl KeptHold {
    /// The row a record gives.
    fn of(r: &HoldRecord) -> KeptHold {
        let f = r.finish;
        KeptHold {
            event_id: r.hold.end_event,
            ended: Some(r.hold.ended),
            item_id: Some(r.item_id),
            queue: Some(r.queue.clone()),
            holder: Some(r.hold.holder.clone()),
            started: Some(r.hold.started),
            how: Some(r.hold.how.as_str().to_string()),
            handle_ms: f.map(|f| f.handle_ms),
            own_ms: f.map(|f| f.own_ms),
            wait_ms: f.map(|f| f.wait_ms),
            cycle_ms: f.map(|f| f.cycle_ms),
            late_ms: f.and_then(|f| f.late_ms),
        }
    }
}

/// A comment, as the pass reads it.
#[derive(Debug, Clone)]
pub(crate) struct CommentRow {
    pub id: i64,
    pub item_id: Option<i64>,
    pub at: i64,
}

/// The four row sets, each in item order; `None` at the end. A backend that skips a set
/// (`check --quick`) gives `None` at once.
pub(crate) trait Source {
    fn item(&mut self) -> Result<Option<ItemRow>>;
    fn event(&mut self) -> Result<Option<EventRow>>;
    fn hold(&mut self) -> Result<Option<KeptHold>>;
    fn comment(&mut self) -> Result<Option<CommentRow>>;
}

/// What the pass found besides its findings: the counts of items by queue and state, and
/// the ids and the count of the rows of the history (for the gaps in them).
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub counts: BTreeMap<(String, String), i64>,
    pub events: IdSpan,
    pub holds_max_event: Option<i64>,
    pub items: u64,
}

/// How many rows a table has and its smallest and largest id.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IdSpan {
    pub rows: u64,
    pub min: Option<i64>,
    pub max: Option<i64>,
}

impl IdSpan {
    fn add(&mut self, id: i64) {
        self.rows += 1;
        self.min = Some(self.min.map_or(id, |m| m.min(id)));
        self.max = Some(self.max.map_or(id, |m| m.max(id)));
    }
}

/// A row set with one row of look-ahead.
struct Peek<T> {
    next: Option<T>,
}

impl<T> Peek<T> {
    fn new(first: Option<T>) -> Peek<T> {
        Peek { next: first }
    }
}

/// How far a row may be dated before its item without being named: a clock set back a
/// little (a host's clock stepped by NTP, a server's clock) is not a changed history.
const CLOCK_SLACK: i64 = 3_600_000;

/// How often progress is told, in items.
const PROGRESS_EVERY: u64 = 5_000;

/// Walks the rows of `src`; `queues` are the queue names there are; `progress(items
/// done)` is told every few thousand items; returns early (with what it found so far)
/// when `stop` is set.
pub(crate) fn run(
    src: &mut dyn Source,
    queues: &HashSet<String>,
    found: &mut Findings,
    progress: &mut dyn FnMut(u64),
    stop: &AtomicBool,
) -> Result<Tally> {
    let mut tally = Tally::default();
    let mut events = Peek::new(src.event()?);
    let mut holds = Peek::new(src.hold()?);
    let mut comments = Peek::new(src.comment()?);
    while let Some(item) = src.item()? {
        orphans(
            src,
            &mut events,
            &mut holds,
            &mut comments,
            Some(item.id),
            found,
            &mut tally,
        )?;
        let mut evs = Vec::new();
        while let Some(e) = events.next.take_if(|e| e.item_id == Some(item.id)) {
            one_event(&e, found, &mut tally);
            evs.push(e);
            events.next = src.event()?;
        }
        let mut kept = Vec::new();
        while let Some(h) = holds.next.take_if(|h| h.item_id == Some(item.id)) {
            tally.note_hold(&h);
            kept.push(h);
            holds.next = src.hold()?;
        }
        let mut notes = Vec::new();
        while let Some(c) = comments.next.take_if(|c| c.item_id == Some(item.id)) {
            notes.push(c);
            comments.next = src.comment()?;
        }
        one_item(&item, queues, found, &mut tally);
        history(&item, &evs, kept, &notes, found);
        tally.items += 1;
        if tally.items % PROGRESS_EVERY == 0 {
            progress(tally.items);
            if stop.load(Ordering::Relaxed) {
                return Ok(tally);
            }
        }
    }
    orphans(
        src,
        &mut events,
        &mut holds,
        &mut comments,
        None,
        found,
        &mut tally,
    )?;
    progress(tally.items);
    Ok(tally)
}

impl Tally {
    fn note_hold(&mut self, h: &KeptHold) {
        self.holds_max_event = Some(
            self.holds_max_event
                .map_or(h.event_id, |m| m.max(h.event_id)),
        );
    }
}

/// Rows whose item is not there: before item `upto` (all that are left when `None`).
fn orphans(
    src: &mut dyn Source,
    events: &mut Peek<EventRow>,
    holds: &mut Peek<KeptHold>,
    comments: &mut Peek<CommentRow>,
    upto: Option<i64>,
    found: &mut Findings,
    tally: &mut Tally,
) -> Result<()> {
    let before = |id: Option<i64>| upto.is_none_or(|u| id.is_none_or(|i| i < u));
    while let Some(e) = events.next.take_if(|e| before(e.item_id)) {
        one_event(&e, found, tally);
        found.add(
            "fk events",
            format!("events row {} refers to a missing items row", e.id),
        );
        events.next = src.event()?;
    }
    while let Some(h) = holds.next.take_if(|h| before(h.item_id)) {
        tally.note_hold(&h);
        found.add(HOLDS_EXTRA, hold_extra(h.event_id));
        holds.next = src.hold()?;
    }
    while let Some(c) = comments.next.take_if(|c| before(c.item_id)) {
        found.add(
            "fk comments",
            format!("comments row {} refers to a missing items row", c.id),
        );
        comments.next = src.comment()?;
    }
    Ok(())
}

fn hold_extra(event_id: i64) -> String {
    format!(
        "event #{event_id} has a row in the holds table that its history does not give (the \
         figures are wrong; a supervisor's `caseload check --repair-figures` rebuilds them)"
    )
}

fn hold_lacking(event_id: i64) -> String {
    format!(
        "event #{event_id} ends a hold the holds table lacks or records differently (the \
         figures are wrong; a supervisor's `caseload check --repair-figures` rebuilds them)"
    )
}

/// The rules of one event on its own.
fn one_event(e: &EventRow, found: &mut Findings, tally: &mut Tally) {
    tally.events.add(e.id);
    if e.event.is_none() {
        found.add(
            "kind",
            format!("event #{} has an unknown kind (column kind)", e.id),
        );
    }
    if !e.detail_json {
        found.add(
            "detail",
            format!(
                "event #{} has a detail that is not JSON (column detail)",
                e.id
            ),
        );
    }
    if let Some(col) = e.bad_text {
        found.add(
            "unreadable events",
            format!(
                "{} events row {}: {col} is not valid UTF-8 text",
                super::UNREADABLE,
                e.id
            ),
        );
    }
}

/// The lock and state rules of one item, its queue, and its count.
fn one_item(item: &ItemRow, queues: &HashSet<String>, found: &mut Findings, tally: &mut Tally) {
    let id = item.id;
    let known = item
        .state
        .as_deref()
        .is_some_and(|s| ItemState::ALL.iter().any(|k| k.as_str() == s));
    let rules = [
        (
            item.has_lock_user != item.has_lock_time,
            "lock_user and lock_time disagree",
        ),
        (
            item.has_lock_user != item.has_lock_expiry,
            "lock_user and lock_expires_at disagree (a lock without an expiry never expires)",
        ),
        (
            !matches!(item.state.as_deref(), Some("open" | "review")) && item.has_lock_user,
            "is neither open nor in review but carries a lock",
        ),
        (!known, "has an unknown state (column state)"),
        (
            item.has_lock_user && item.lock_token.is_none_or(|t| t < 1),
            "is locked with no lock token",
        ),
        (
            !item.params_json,
            "has params that are not JSON (column params)",
        ),
    ];
    for (broken, what) in rules {
        if broken {
            found.add(what, format!("item #{id} {what}"));
        }
    }
    if !queues.contains(&item.queue) {
        found.add(
            "fk items",
            format!("items row {id} refers to a missing queues row"),
        );
    }
    if let Some(why) = &item.unreadable {
        found.add(
            "unreadable items",
            format!(
                "{} item #{id}: {why} (take-next passes it over, export leaves it out)",
                super::UNREADABLE
            ),
        );
    }
    let state = item.state.clone().unwrap_or_default();
    *tally.counts.entry((item.queue.clone(), state)).or_default() += 1;
}

/// One item's history: dated after the item, its kept holds those its events give, and
/// every comment named by a `noted` event.
fn history(
    item: &ItemRow,
    evs: &[EventRow],
    mut kept: Vec<KeptHold>,
    notes: &[CommentRow],
    found: &mut Findings,
) {
    let before = item.created_at.saturating_sub(CLOCK_SLACK);
    for e in evs.iter().filter(|e| e.at < before) {
        found.add(
            "before item",
            format!(
                "history: event #{} is dated before its item #{} was created (changed outside \
                 caseload)",
                e.id, item.id
            ),
        );
    }
    let known: Vec<Event> = evs.iter().filter_map(|e| e.event.clone()).collect();
    let mut want: Vec<KeptHold> =
        records(item.id, &item.queue, item.created_at, item.due_at, &known)
            .iter()
            .map(KeptHold::of)
            .collect();
    want.sort();
    kept.sort();
    let (mut w, mut k) = (want.iter().peekable(), kept.iter().peekable());
    loop {
        match (w.peek(), k.peek()) {
            (Some(a), Some(b)) if a == b => {
                w.next();
                k.next();
            }
            (Some(a), Some(b)) if a < b => {
                found.add(HOLDS_LACK, hold_lacking(a.event_id));
                w.next();
            }
            (Some(a), None) => {
                found.add(HOLDS_LACK, hold_lacking(a.event_id));
                w.next();
            }
            (_, Some(b)) => {
                found.add(HOLDS_EXTRA, hold_extra(b.event_id));
                k.next();
            }
            (None, None) => break,
        }
    }
    let named: HashSet<i64> = known
        .iter()
        .filter(|e| e.kind == EventKind::Noted)
        .filter_map(|e| {
            e.detail
                .get("comment_id")
                .and_then(serde_json::Value::as_i64)
        })
        .collect();
    for c in notes {
        if !named.contains(&c.id) {
            found.add(
                "comment event",
                format!(
                    "history: comment #{} on item #{} has no `noted` event naming it (written \
                     outside caseload, or its history was cut)",
                    c.id, item.id
                ),
            );
        }
        if c.at < before {
            found.add(
                "comment before item",
                format!(
                    "history: comment #{} is dated before its item #{} was created (changed \
                     outside caseload)",
                    c.id, item.id
                ),
            );
        }
    }
}
