//! The verdict: every call's exit code against what the database holds at the end.
//!
//! Every row a run writes names who wrote it and when (events and audit rows their actor,
//! comments their author, items their creator), and each caseload name runs one call at
//! a time, so each row belongs to the one call of its writer whose time span holds it.
//! From that:
//! - **duplicates**: two takes of one lock (item, token), two finishes of an item without a
//!   reopen between them, two exit-0 claims printing the same lock, an imported row twice;
//! - **lost**: exit 0 but its row is not there (a claim's take, a holder's write by its
//!   token, any other write's rows, every row of an imported file);
//! - **failed but applied**: a definite failure (not killed, not exit 6, which says "maybe
//!   applied") that left rows anyway;
//! - **false refusals**: "taken" or "nothing to claim" while an item was free for the whole
//!   call, or "lock lost" while the holder's lock stood for the whole call. Free starts when
//!   the call that freed it ended (its commit may be that late) and ends when the next take
//!   began, so a race is never counted; a take killed part-way (no event) may have locked
//!   the item it chose, and on PostgreSQL its server process keeps that row locked until it
//!   notices the client gone, so a claim within [`KILLED_TAKE_MS`] of such a take in its
//!   scope is not judged (others' claims skip a row a take has locked, `SKIP LOCKED`, as
//!   they skip one a live take is taking); so is a claim beside a take that failed
//!   without taking (its server process terminated, a fault injected, no answer): it too
//!   held the row it chose while it ran, and rolled back;
//! - **errors**: any other exit code that is not the op's documented answer, with no fault
//!   injected (a BUSY, a usage error, a crash); a read that wrote.
//!
//! Also: a finish with a ready-made text's `--code` keeps the code in its event and, with
//! nothing typed, the text as its result or reason (else lost); `complete --override
//! REASON` keeps the reason (else lost), completes a record breaking its rules only for a
//! supervisor (else an error), and is refused to staff (exit 5) only on a record with
//! rules to break (else a false refusal); `events --exec HOOK` ran the hook at least once
//! and in order (see `hooks`).
//!
//! Parks, wakes and undos (the states between held and free):
//! - a parked item is held by nobody but belongs to its owner: nobody else may take it, so
//!   it is not free for others (their refusals are answers), but its owner's `claim --id`
//!   and `wake` must take it, and once its wake time has passed, so must its owner's
//!   take-next (`claim`, `claim --wait`, `complete --next`), which offers it first; a
//!   refusal then is a false refusal. A supervisor's `wake` (its `woke` by supervisor)
//!   returns it to the pool: free from then on; `wake` refused "not parked" while it was
//!   parked throughout, or by its owner "not yours", is a false refusal;
//! - `undone` takes the item back for its actor under a new token (a take), and reverses
//!   what it undid: a complete undone may be followed by another finish (not a duplicate),
//!   and an undone complete --next returns the item it took (a `released` with `undo_of`
//!   at the undo's time; its absence, while that lock stood, is a lost write); `undo`
//!   refused while the item's last event was the caller's own complete, fail, release,
//!   skip or park, well within the undo window, with nothing since, is a false refusal;
//! - every item's row must agree with its history: its state is the one its events lead
//!   to (created open; completed done; failed; cancelled; parked; requeued, woke and undone
//!   open; submitted review; accepted done; rejected open). A row that does not is a lost
//!   write.
//!
//! Four eyes (the review stage, issue 29): a completion the queue samples is `completed`
//! then `submitted`: the item waits in `review`, free for a review take (`claim --review`)
//! by anyone but its maker and whoever corrected a field of it before it went to review —
//! never free for a plain claim. Its reviewer's `accepted` (done) or `rejected` (open again,
//! assigned to the maker, or free when the maker is gone) ends their lock. A review take
//! refused (exit 3/4, or 5 "you worked on it" by id) while an item waited, free and not the
//! caller's work, for the whole call is a false refusal; a review lock given to someone
//! barred from it is counted with the duplicates (two hands on one piece of work).

use std::collections::HashMap;

use crate::backend::{Event, Facts};
use crate::process::{Call, Class, Exit};
use crate::worker::token_kind;

/// Violations found, one line each.
#[derive(Default)]
pub(crate) struct Findings {
    pub(crate) duplicates: Vec<String>,
    pub(crate) lost: Vec<String>,
    pub(crate) failed_applied: Vec<String>,
    pub(crate) false_refusals: Vec<String>,
    pub(crate) lockouts: Vec<String>,
    pub(crate) errors: Vec<String>,
}

/// Kinds that give a lock (the detail's token is the new lock's). (An owner's `woke` is
/// followed by their `locked`, which gives it.)
const TAKES: &[&str] = &["locked", "taken_over", "reassigned", "undone"];
/// Kinds that finish an item.
const FINISHES: &[&str] = &["completed", "failed", "cancelled"];
/// Kinds that leave an open item free (and `woke` but by its owner: see [`frees`]).
const FREES: &[&str] = &["released", "skipped", "expired", "unlocked", "requeued"];
/// The kinds `undo` takes back.
const UNDOABLE: &[&str] = &["completed", "failed", "released", "skipped", "parked"];
/// caseload's undo window (a new queue's, domain::park::UNDO_MS; the run keeps it).
const UNDO_MS: i64 = 30_000;
/// Kinds after which a holder's lock is gone.
const ENDS: &[&str] = &[
    "locked",
    "taken_over",
    "reassigned",
    "released",
    "skipped",
    "expired",
    "unlocked",
    "requeued",
    "completed",
    "failed",
    "cancelled",
    "parked",
    "undone",
    "accepted",
    "rejected",
];

/// True for an event that leaves an open item free: a release and its like, or a park
/// ended by a supervisor (or its grace), which returns the item to the pool.
fn frees(e: &Event) -> bool {
    FREES.contains(&e.kind.as_str()) || (e.kind == "woke" && e.detail["by"] != "owner")
}

/// True for an `undone` that reversed a finish (the item may be finished again).
fn reverses_finish(e: &Event) -> bool {
    e.kind == "undone"
        && e.detail["undid"]
            .as_str()
            .is_some_and(|k| FINISHES.contains(&k))
}

/// A row written by someone at some time.
struct Effect {
    actor: String,
    at: i64,
    what: String,
    item: i64,
}

/// Rows are matched to a call whose span holds them, give or take this (ms rounding).
const SLACK: i64 = 3;

/// How long after a killed take its row lock may still stand (PostgreSQL: until the server
/// process notices its client gone and rolls back; the 10-minute run at seed 7101 saw a
/// claim skip such a row 32 ms after the kill).
const KILLED_TAKE_MS: i64 = 1000;

struct Index<'a> {
    by_actor: HashMap<&'a str, Vec<&'a Call>>,
}

impl<'a> Index<'a> {
    fn new(calls: &'a [Call]) -> Index<'a> {
        let mut by_actor: HashMap<&str, Vec<&Call>> = HashMap::new();
        for c in calls {
            by_actor.entry(c.actor.as_str()).or_default().push(c);
        }
        for v in by_actor.values_mut() {
            v.sort_by_key(|c| c.start);
        }
        Index { by_actor }
    }

    /// The call of `actor` whose span holds `at`.
    fn call_at(&self, actor: &str, at: i64) -> Option<&'a Call> {
        let calls = self.by_actor.get(actor)?;
        let i = calls.partition_point(|c| c.start - SLACK <= at);
        let mut best: Option<(&Call, i64)> = None;
        for c in calls[i.saturating_sub(2)..i].iter().copied() {
            let d = if at < c.start {
                c.start - at
            } else if at > c.end {
                at - c.end
            } else {
                0
            };
            if d <= SLACK && best.is_none_or(|(_, bd)| d < bd) {
                best = Some((c, d));
            }
        }
        best.map(|(c, _)| c)
    }

    /// The first call of a chain of retries.
    fn root(&self, c: &'a Call) -> usize {
        c.retry_of.unwrap_or(c.id)
    }
}

/// Judges the calls against the database.
pub(crate) fn analyse(calls: &[Call], facts: &Facts, hooked: &Hooked) -> Findings {
    let ix = Index::new(calls);
    let mut f = Findings::default();
    let effects = effects(facts);
    // effects by call, and by chain of retries
    let mut of_call: HashMap<usize, Vec<&Effect>> = HashMap::new();
    let mut of_chain: HashMap<usize, usize> = HashMap::new();
    for e in &effects {
        match ix.call_at(&e.actor, e.at) {
            Some(c) => {
                of_call.entry(c.id).or_default().push(e);
                *of_chain.entry(ix.root(c)).or_default() += 1;
            }
            None => f.failed_applied.push(format!(
                "{} on #{} by {} at {} was written by no call",
                e.what, e.item, e.actor, e.at
            )),
        }
    }
    let events_of = events_by_item(&facts.events);
    judge_calls(&ix, calls, &events_of, &of_call, &of_chain, &mut f);
    duplicates(calls, facts, &events_of, &mut f);
    imports(calls, facts, &mut f);
    codes_kept(calls, &events_of, &mut f);
    overrides(calls, facts, &events_of, &mut f);
    feeds(calls, facts, &mut f);
    hooks(calls, facts, hooked, &mut f);
    false_refusals(&ix, calls, facts, &events_of, &mut f);
    undo_returns_next(facts, &events_of, &mut f);
    own_reviews(&events_of, &mut f);
    rows_agree(facts, &events_of, &mut f);
    for c in calls.iter().filter(|c| c.exit == Exit::Hung) {
        f.lockouts.push(format!("hung for over 90 s: {}", c.line()));
    }
    f
}

fn effects(facts: &Facts) -> Vec<Effect> {
    let mut out: Vec<Effect> = facts
        .events
        .iter()
        .map(|e| Effect {
            actor: e.actor.clone(),
            at: e.at,
            what: e.kind.clone(),
            item: e.item,
        })
        .collect();
    out.extend(facts.items.iter().map(|i| Effect {
        actor: i.created_by.clone(),
        at: i.created_at,
        what: "created".into(),
        item: i.id,
    }));
    out.extend(facts.rows.iter().map(|r| Effect {
        actor: r.actor.clone(),
        at: r.at,
        what: r.what.clone(),
        item: r.item,
    }));
    out
}

/// Who holds the lock a take event gives: the one it names `to` for a reassignment, else
/// its actor.
fn holder_after(e: &Event) -> &str {
    match e.detail["to"].as_str() {
        Some(to) if e.kind == "reassigned" => to,
        _ => &e.actor,
    }
}

fn events_by_item(events: &[Event]) -> HashMap<i64, Vec<&Event>> {
    let mut m: HashMap<i64, Vec<&Event>> = HashMap::new();
    for e in events {
        m.entry(e.item).or_default().push(e);
    }
    m
}

/// The row an exit-0 write promises, and no row from a definite failure.
fn judge_calls(
    ix: &Index<'_>,
    calls: &[Call],
    events_of: &HashMap<i64, Vec<&Event>>,
    of_call: &HashMap<usize, Vec<&Effect>>,
    of_chain: &HashMap<usize, usize>,
    f: &mut Findings,
) {
    let of = |item: i64| events_of.get(&item).map_or(&[][..], |v| v.as_slice());
    let has_event = |item: i64, kind: &str, token: Option<i64>, actor: &str| {
        of(item)
            .iter()
            .any(|e| e.kind == kind && e.token == token && e.actor == actor)
    };
    // The take that gave `actor` the lock under `token`: their own, or a reassignment to
    // them (an assignment or a review's reject to its maker); a claim of an item already
    // theirs answers with that lock (renewed), not a new one.
    let takes = |item: i64, token: i64, actor: &str| {
        of(item).iter().any(|e| {
            TAKES.contains(&e.kind.as_str()) && e.token == Some(token) && holder_after(e) == actor
        })
    };
    for c in calls.iter().filter(|c| c.class != Class::Setup) {
        let mine = of_call.get(&c.id).map_or(&[][..], |v| v.as_slice());
        let chain = of_chain.get(&ix.root(c)).copied().unwrap_or(0);
        if c.class == Class::Work {
            judge_work(c, events_of, mine, f);
            continue;
        }
        let code = match c.exit {
            Exit::Code(6) | Exit::Killed | Exit::Hung | Exit::Signal(_) => continue,
            Exit::Code(code) => code,
        };
        let completed = || {
            c.item
                .is_some_and(|i| has_event(i, "completed", c.token, &c.actor))
        };
        match (c.class, code) {
            (Class::Read, 0) if !mine.is_empty() => {
                f.errors
                    .push(format!("a read wrote {}: {}", mine[0].what, c.line()));
            }
            (Class::Claim, 0) => match c.claimed {
                Some((item, token)) if !takes(item, token, &c.actor) => {
                    f.lost.push(format!(
                        "took #{item} token {token} but no take is recorded: {}",
                        c.line()
                    ));
                }
                None => f
                    .errors
                    .push(format!("exit 0 without an item: {}", c.line())),
                _ => {}
            },
            (Class::CompleteNext, 0 | 4) => {
                if !completed() {
                    f.lost.push(format!(
                        "completed (exit {code}) but no completed event with its token: {}",
                        c.line()
                    ));
                }
                if let Some((item, token)) = c.claimed.filter(|_| code == 0)
                    && !takes(item, token, &c.actor)
                {
                    f.lost.push(format!(
                        "took #{item} token {token} but no take is recorded: {}",
                        c.line()
                    ));
                }
                if code == 4 && mine.iter().any(|e| TAKES.contains(&e.what.as_str())) {
                    f.failed_applied
                        .push(format!("said nothing next but took one: {}", c.line()));
                }
            }
            (Class::Retake, 0) => match c.claimed {
                Some((item, token)) if item == c.item.unwrap_or(item) => {
                    if !takes(item, token, &c.actor) {
                        f.lost.push(format!(
                            "has #{item} token {token} back but no take is recorded: {}",
                            c.line()
                        ));
                    }
                }
                _ => f
                    .errors
                    .push(format!("exit 0 without its item: {}", c.line())),
            },
            (Class::Holder, 0) => {
                let ok = match (token_kind(c.op), c.item) {
                    (Some(kind), Some(item)) => has_event(item, kind, c.token, &c.actor),
                    _ => chain > 0,
                };
                if !ok {
                    f.lost
                        .push(format!("exit 0 but its row is not there: {}", c.line()));
                }
            }
            // (`queue set` of what is set already says "nothing changed" and writes
            // nothing.)
            (Class::Write, 0) if chain == 0 && !c.stdout.contains("nothing changed: ") => {
                f.lost
                    .push(format!("exit 0 but wrote nothing: {}", c.line()));
            }
            (_, 0) => {}
            (_, code) => {
                let partial = c.stderr.contains("stopped part-way");
                if !mine.is_empty() && !partial {
                    let what: Vec<&str> = mine.iter().map(|e| e.what.as_str()).collect();
                    f.failed_applied.push(format!(
                        "exit {code} but wrote {}: {}",
                        what.join(", "),
                        c.line()
                    ));
                }
                if !c.refusals.contains(&code)
                    && c.fault.is_none()
                    && !terminated(c)
                    && !fields_refused(c)
                    && !code_refused(c)
                {
                    f.errors.push(c.finding());
                }
            }
        }
    }
}

/// Kinds a `work` process finishes an item with.
const WORK_ENDS: &[&str] = &["completed", "failed", "released", "accepted", "rejected"];

/// `caseload work --exec`: every item it said it finished ("#N done", "#N failed: …",
/// "#N released (stopped)") has that finish by it (lines printed before a kill count:
/// each was printed after its commit), its summary agrees with its lines, and a process
/// that ended with a definite answer wrote no finish it did not name.
fn judge_work(c: &Call, events_of: &HashMap<i64, Vec<&Event>>, mine: &[&Effect], f: &mut Findings) {
    let review = c.args.iter().any(|a| a == "--review");
    let mut named: Vec<i64> = Vec::new();
    let mut counts = [0usize; 3];
    for line in c.stdout.lines() {
        let Some((id, what)) = line.strip_prefix('#').and_then(|l| l.split_once(' ')) else {
            continue;
        };
        let Ok(id) = id.parse::<i64>() else { continue };
        named.push(id);
        let kind = match what {
            "done" => {
                counts[0] += 1;
                if review { "accepted" } else { "completed" }
            }
            w if w.starts_with("failed: ") => {
                counts[1] += 1;
                if review { "rejected" } else { "failed" }
            }
            "released (stopped)" => {
                counts[2] += 1;
                "released"
            }
            _ => continue, // "not finished: …", "lock lost while CMD ran: …"
        };
        let there = events_of.get(&id).is_some_and(|evs| {
            evs.iter().any(|e| {
                e.kind == kind
                    && e.actor == c.actor
                    && e.at + SLACK >= c.start
                    && e.at <= c.end + SLACK
            })
        });
        if !there {
            f.lost.push(format!(
                "said '#{id} {what}' but #{id} has no {kind} by it: {}",
                c.line()
            ));
        }
    }
    if c.exit == Exit::Code(0) {
        let summary = format!(
            "work: {} done, {} failed, {} released",
            counts[0], counts[1], counts[2]
        );
        if !c.stdout.lines().any(|l| l == summary) {
            f.errors.push(format!(
                "its summary is not its lines ({summary}): {}",
                c.line()
            ));
        }
    }
    // (130: a stop signal while it was stopping already — its slot's error, or a second
    // signal — ends it at once, mid-write: like a kill.)
    if matches!(c.exit, Exit::Code(code) if code != 6 && code != 130) {
        for e in mine
            .iter()
            .filter(|e| WORK_ENDS.contains(&e.what.as_str()) && !named.contains(&e.item))
        {
            f.failed_applied.push(format!(
                "wrote {} on #{} but did not say so: {}",
                e.what,
                e.item,
                c.line()
            ));
        }
    }
    if let Exit::Code(code) = c.exit
        && code != 0
        && code != 6
        && code != 130
        && c.fault.is_none()
        && !terminated(c)
        && !fields_refused(c)
    {
        f.errors.push(c.finding());
    }
}

/// The value after `flag` in a call's arguments.
pub(crate) fn arg<'c>(c: &'c Call, flag: &str) -> Option<&'c str> {
    let i = c.args.iter().position(|a| a == flag)?;
    c.args.get(i + 1).map(String::as_str)
}

/// The text of a ready-made text the run keeps from the start, by its code.
fn ready_text(code: &str) -> Option<&'static str> {
    crate::chaos::READY
        .iter()
        .find(|(_, _, c)| *c == code)
        .map(|(_, t, _)| *t)
        .or((code == "redo").then_some("do it again"))
}

/// The finish a holder's write (exit 0; complete --next also 4) left under its token, if
/// it left one (its absence is judged with the call).
fn finish_of<'e>(c: &Call, events_of: &HashMap<i64, Vec<&'e Event>>) -> Option<&'e Event> {
    let ok = c.exit == Exit::Code(0) || (c.class == Class::CompleteNext && c.exit == Exit::Code(4));
    let (Some(kind), Some(item), true) = (token_kind(c.op), c.item, ok) else {
        return None;
    };
    events_of
        .get(&item)?
        .iter()
        .find(|e| e.kind == kind && e.token == c.token && e.actor == c.actor)
        .copied()
}

/// A finish with a ready-made text's code (complete, fail, release, skip, reject) keeps the
/// code in its event, and the text as its result or reason when none was typed.
fn codes_kept(calls: &[Call], events_of: &HashMap<i64, Vec<&Event>>, f: &mut Findings) {
    for c in calls.iter().filter(|c| c.class != Class::Setup) {
        let (Some(code), Some(e)) = (arg(c, "--code"), finish_of(c, events_of)) else {
            continue;
        };
        if e.detail["code"] != code {
            f.lost.push(format!(
                "its {} event {} lacks code '{code}': {}",
                e.kind,
                e.id,
                c.line()
            ));
        }
        let key = if e.kind == "completed" {
            "result"
        } else {
            "reason"
        };
        let typed = arg(c, "--result").or(arg(c, "--reason"));
        if let Some(text) = typed.or(ready_text(code))
            && e.detail[key] != text
        {
            f.lost.push(format!(
                "its {} event {} has {key} {}, not '{text}': {}",
                e.kind,
                e.id,
                e.detail[key],
                c.line()
            ));
        }
    }
}

/// The names with a supervisor's role throughout the run.
const SUPERVISORS: &[&str] = &["boss", "drain"];

/// `complete --override REASON`: exit 0 keeps the reason in the completed event, and a
/// record that broke its rules (the event names them) was a supervisor's to complete;
/// refused as staff's (exit 5) only on a record that breaks a rule, and in this run only
/// the checklist queue's records have rules (its lines to tick).
fn overrides(
    calls: &[Call],
    facts: &Facts,
    events_of: &HashMap<i64, Vec<&Event>>,
    f: &mut Findings,
) {
    let queue: HashMap<i64, &str> = facts
        .items
        .iter()
        .map(|i| (i.id, i.queue.as_str()))
        .collect();
    for c in calls.iter().filter(|c| c.class != Class::Setup) {
        let Some(reason) = arg(c, "--override") else {
            continue;
        };
        if let Some(e) = finish_of(c, events_of) {
            if e.detail["override"] != reason {
                f.lost.push(format!(
                    "its completed event {} lacks the override's reason: {}",
                    e.id,
                    c.line()
                ));
            }
            if !e.detail["broken"].is_null() && !SUPERVISORS.contains(&c.actor.as_str()) {
                f.errors.push(format!(
                    "staff completed a record breaking {} (event {}): {}",
                    e.detail["broken"],
                    e.id,
                    c.line()
                ));
            }
        }
        if c.exit == Exit::Code(5)
            && let Some(item) = c.item
            && queue.get(&item).is_some_and(|q| *q != crate::chaos::LISTS)
        {
            f.false_refusals.push(format!(
                "refused an override, but #{item} has no rules to break: {}",
                c.line()
            ));
        }
    }
}

/// What the feed's hook left (`events --exec`): the log's lines, and the id the hook's
/// checkpoint file held at the end (0: none).
#[derive(Default)]
pub(crate) struct Hooked {
    pub(crate) log: String,
    pub(crate) checkpoint: i64,
}

/// `caseload events --exec CMD --checkpoint FILE`, run again and again (and killed), one
/// call at a time: at least once, in order. Each call ran the hook for increasing event ids
/// (a failed run is retried, and appends nothing); a call runs an event an earlier call
/// ran only when it is the last one the call before it ran and that call did not end
/// cleanly (killed between the hook and the checkpoint); every event of the hook's kinds
/// up to the checkpoint's id ran; the hook ran only for events of its kinds, each given
/// its own line on standard input.
fn hooks(calls: &[Call], facts: &Facts, hooked: &Hooked, f: &mut Findings) {
    let mut cs: Vec<&Call> = calls
        .iter()
        .filter(|c| c.op.starts_with("events --exec"))
        .collect();
    if cs.is_empty() {
        return;
    }
    cs.sort_by_key(|c| c.id);
    let kinds: Vec<&str> = arg(cs[0], "--kind").unwrap_or("").split(',').collect();
    // (A call killed before it wrote the line to its hook leaves the hook an empty input.)
    let killed: std::collections::HashSet<String> = cs
        .iter()
        .filter(|c| c.exit.unknown())
        .map(|c| c.id.to_string())
        .collect();
    let mut ran: HashMap<usize, Vec<i64>> = HashMap::new();
    for line in hooked.log.lines() {
        let parts: Vec<&str> = line.split(' ').collect();
        match parts.as_slice() {
            [call, "BAD", _] if killed.contains(*call) => {}
            [call, "BAD", id] => f.errors.push(format!(
                "call {call}'s hook for event {id} was not given that event's line"
            )),
            [call, id, _] => match (call.parse(), id.parse()) {
                (Ok(call), Ok(id)) => ran.entry(call).or_default().push(id),
                _ => f.errors.push(format!("the hook log has '{line}'")),
            },
            _ => f.errors.push(format!("the hook log has '{line}'")),
        }
    }
    let mut seen = std::collections::HashSet::new();
    let mut before: Option<(&Call, i64)> = None;
    for c in cs {
        let ids = ran.get(&c.id).map_or(&[][..], |v| v.as_slice());
        for w in ids.windows(2).filter(|w| w[1] <= w[0]) {
            f.duplicates.push(format!(
                "the hook ran event {} after {} in one call: {}",
                w[1],
                w[0],
                c.line()
            ));
        }
        for &id in ids {
            let again = before.is_some_and(|(b, last)| id == last && b.exit != Exit::Code(0));
            if !seen.insert(id) && !again {
                f.duplicates.push(format!(
                    "the hook ran event {id} again (the call before ended {:?}, its last run {:?}): {}",
                    before.map(|b| b.0.exit),
                    before.map(|b| b.1),
                    c.line()
                ));
            }
        }
        if let Some(&last) = ids.last() {
            before = Some((c, last));
        } else if c.exit == Exit::Code(0) {
            // A clean call that ran nothing stored the checkpoint it had.
            before = before.map(|(_, last)| (c, last));
        }
    }
    let missed: Vec<i64> = facts
        .events
        .iter()
        .filter(|e| e.id <= hooked.checkpoint && kinds.contains(&e.kind.as_str()))
        .filter(|e| !seen.contains(&e.id))
        .map(|e| e.id)
        .collect();
    if !missed.is_empty() {
        f.lost.push(format!(
            "the hook never ran for {} event(s) up to its checkpoint {}, first {:?}",
            missed.len(),
            hooked.checkpoint,
            &missed[..missed.len().min(5)]
        ));
    }
    let wanted: std::collections::HashSet<i64> = facts
        .events
        .iter()
        .filter(|e| kinds.contains(&e.kind.as_str()))
        .map(|e| e.id)
        .collect();
    if let Some(id) = seen.iter().find(|id| !wanted.contains(id)) {
        f.errors.push(format!(
            "the hook ran for event {id}, which is not one of {kinds:?} in the table"
        ));
    }
}

/// `caseload events --checkpoint FILE`, run again and again (and killed) on one file:
/// what its calls printed, in order, is the events table (of the kinds asked for) up to
/// the last id printed — none skipped, and none repeated but the lines a killed call
/// printed after it last stored its checkpoint.
fn feeds(calls: &[Call], facts: &Facts, f: &mut Findings) {
    let mut by_file: HashMap<&str, Vec<&Call>> = HashMap::new();
    for c in calls
        .iter()
        .filter(|c| c.op.starts_with("events") && !c.op.starts_with("events --exec"))
    {
        if let Some(i) = c.args.iter().position(|a| a == "--checkpoint")
            && let Some(file) = c.args.get(i + 1)
        {
            by_file.entry(file.as_str()).or_default().push(c);
        }
    }
    for (file, mut cs) in by_file {
        cs.sort_by_key(|c| c.id);
        let kinds: Option<Vec<&str>> = cs[0]
            .args
            .iter()
            .position(|a| a == "--kind")
            .and_then(|i| cs[0].args.get(i + 1))
            .map(|k| k.split(',').collect());
        let wanted = |e: &Event| kinds.as_ref().is_none_or(|k| k.contains(&e.kind.as_str()));
        let mut printed = std::collections::HashSet::new();
        let mut last = 0;
        let mut clean = true;
        for c in cs {
            for w in c.ids.windows(2).filter(|w| w[1] <= w[0]) {
                f.duplicates.push(format!(
                    "the feed printed event {} after {}: {}",
                    w[1],
                    w[0],
                    c.line()
                ));
            }
            if let Some(&first) = c.ids.first()
                && first <= last
                && clean
            {
                f.duplicates.push(format!(
                    "the feed repeated event {first} (the call before it, which ended \
                     cleanly, printed up to {last}): {}",
                    c.line()
                ));
            }
            for &id in &c.ids {
                printed.insert(id);
                last = last.max(id);
            }
            clean = c.exit == Exit::Code(0);
        }
        let missed: Vec<i64> = facts
            .events
            .iter()
            .filter(|e| e.id <= last && wanted(e) && !printed.contains(&e.id))
            .map(|e| e.id)
            .collect();
        if !missed.is_empty() {
            f.lost.push(format!(
                "the feed on {file} skipped {} event(s) below {last} it printed, first {:?}",
                missed.len(),
                &missed[..missed.len().min(5)]
            ));
        }
        let known: std::collections::HashSet<i64> = facts.events.iter().map(|e| e.id).collect();
        if let Some(id) = printed.iter().find(|id| !known.contains(id)) {
            f.errors.push(format!(
                "the feed on {file} printed event {id}, which is not in the table"
            ));
        }
    }
}

/// A complete refused because the item's fields break their rules (exit 1, documented).
fn fields_refused(c: &Call) -> bool {
    c.exit == Exit::Code(1) && c.stderr.contains("cannot be completed")
}

/// A finish refused for its ready-made text's code, which the item's queue does not
/// have for that purpose (exit 1, documented; nothing written).
pub(crate) fn code_refused(c: &Call) -> bool {
    c.exit == Exit::Code(1) && c.stderr.contains("text with code")
}

/// A PostgreSQL call whose server process was terminated under it (the run does that).
fn terminated(c: &Call) -> bool {
    let e = c.stderr.to_lowercase();
    e.contains("terminat") || e.contains("connection")
}

/// Two takes of one lock, two finishes without a reopen between, one lock printed to two
/// claims, a title twice.
fn duplicates(
    calls: &[Call],
    facts: &Facts,
    events_of: &HashMap<i64, Vec<&Event>>,
    f: &mut Findings,
) {
    let mut takes: HashMap<(i64, i64), usize> = HashMap::new();
    for e in facts
        .events
        .iter()
        .filter(|e| TAKES.contains(&e.kind.as_str()))
    {
        *takes.entry((e.item, e.token.unwrap_or(-1))).or_default() += 1;
    }
    for ((item, token), n) in takes.into_iter().filter(|(_, n)| *n > 1) {
        f.duplicates
            .push(format!("#{item} token {token} was taken {n} times"));
    }
    for (item, evs) in events_of {
        let mut finishes = 0;
        for e in evs {
            if e.kind == "requeued" || e.kind == "rejected" || reverses_finish(e) {
                finishes = 0;
            } else if FINISHES.contains(&e.kind.as_str()) {
                finishes += 1;
                if finishes == 2 {
                    f.duplicates.push(format!(
                        "#{item} finished twice without a reopen or an undo (event {} {})",
                        e.id, e.kind
                    ));
                }
            }
        }
    }
    // (Claiming an item you hold gives you your own lock again: not a second holder.)
    let mut printed: HashMap<(i64, i64), Vec<&Call>> = HashMap::new();
    for c in calls.iter().filter(|c| c.exit == Exit::Code(0)) {
        if let Some(lock) = c.claimed {
            printed.entry(lock).or_default().push(c);
        }
    }
    for ((item, token), cs) in printed {
        if cs.iter().any(|c| c.actor != cs[0].actor) {
            let who: Vec<String> = cs
                .iter()
                .map(|c| format!("{} (call {})", c.actor, c.id))
                .collect();
            f.duplicates.push(format!(
                "#{item} token {token} was given to {}",
                who.join(", ")
            ));
        }
    }
    let mut titles: HashMap<&str, usize> = HashMap::new();
    for i in facts.items.iter().filter(|i| i.title.starts_with("soak-f")) {
        *titles.entry(i.title.as_str()).or_default() += 1;
    }
    for (t, n) in titles.into_iter().filter(|(_, n)| *n > 1) {
        f.duplicates
            .push(format!("imported row {t} is there {n} times"));
    }
}

/// Every row of a file an import said it imported (exit 0) is there, but the rows it said
/// it left out as duplicates (`--skip-duplicates`, counted from its summary); a row it
/// said it left out must not have been written by it, and the item it was like exists.
fn imports(calls: &[Call], facts: &Facts, f: &mut Findings) {
    for c in calls
        .iter()
        .filter(|c| c.op.contains("import") && c.exit == Exit::Code(0))
    {
        let Some(name) = c.args.get(1).and_then(|p| p.rsplit('/').next()) else {
            continue;
        };
        let Some((n, rows)) = name
            .trim_start_matches('f')
            .trim_end_matches(".csv")
            .trim_end_matches(".jsonl")
            .trim_end_matches(".skip")
            .split_once('-')
        else {
            continue;
        };
        let rows: usize = rows.parse().unwrap_or(0);
        let prefix = format!("soak-f{n}-r");
        let there = facts
            .items
            .iter()
            .filter(|i| i.title.starts_with(&prefix))
            .count();
        let (skipped, named) = skipped_rows(&c.stdout);
        if there + skipped < rows {
            f.lost.push(format!(
                "{there} of {rows} rows are there ({skipped} left out as duplicates): {}",
                c.line()
            ));
        }
        for (line, like) in named {
            let title = format!("soak-f{n}-r{}", line - 1);
            if facts.items.iter().any(|i| {
                i.title == title
                    && i.created_by == c.actor
                    && i.created_at + SLACK >= c.start
                    && i.created_at <= c.end + SLACK
            }) {
                f.failed_applied.push(format!(
                    "said it left out line {line} ({title}) but wrote it: {}",
                    c.line()
                ));
            }
            if !facts.items.iter().any(|i| i.id == like) {
                f.errors.push(format!(
                    "left out line {line} as like #{like}, which does not exist: {}",
                    c.line()
                ));
            }
        }
    }
}

/// How many rows an import's summary says `--skip-duplicates` left out, and the ones it
/// names (line, the open item it was like).
pub(crate) fn skipped_rows(stdout: &str) -> (usize, Vec<(usize, i64)>) {
    const SAID: &str = " row(s) whose duplicate key equals an open item's (--skip-duplicates): ";
    let Some(at) = stdout.find(SAID) else {
        return (0, Vec::new());
    };
    let count = stdout[..at]
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let rest = &stdout[at + SAID.len()..];
    let rest = rest
        .split(';')
        .next()
        .unwrap_or("")
        .lines()
        .next()
        .unwrap_or("");
    let named = rest
        .split(", ")
        .filter_map(|part| {
            let part = part.split(" and ").next()?;
            let (line, like) = part.strip_prefix("line ")?.split_once(" like #")?;
            Some((line.parse().ok()?, like.trim().parse().ok()?))
        })
        .collect();
    (count, named)
}

/// Refusals while the item was free (claims) or the lock stood (holders), for the whole call.
fn false_refusals(
    ix: &Index<'_>,
    calls: &[Call],
    facts: &Facts,
    events_of: &HashMap<i64, Vec<&Event>>,
    f: &mut Findings,
) {
    // When a row became visible to others: when the call that wrote it ended.
    let visible = |actor: &str, at: i64| ix.call_at(actor, at).map_or(at + 1000, |c| c.end);
    let (free, review) = free_spans(facts, events_of, &visible);
    // Any item (of a queue, or of all) free over a span.
    let mut spans: HashMap<&str, Spans> = HashMap::new();
    for item in &facts.items {
        for &span in &free[&item.id] {
            spans.entry(item.queue.as_str()).or_default().all.push(span);
            spans.entry("").or_default().all.push(span);
        }
    }
    spans.values_mut().for_each(Spans::sort);
    let parks = parks(facts, events_of, &visible);
    // Takes that failed part-way: each held the row it chose while it ran (a killed one
    // a while after its end), and took nothing.
    let killed_takes: Vec<&Call> = (calls.iter())
        .filter(|k| match k.exit {
            Exit::Killed | Exit::Hung | Exit::Signal(_) | Exit::Code(6) => true,
            Exit::Code(0 | 3 | 4 | 5) => false,
            Exit::Code(_) => terminated(k) || k.fault.is_some(),
        })
        .filter(|k| matches!(k.class, Class::Claim | Class::CompleteNext))
        .collect();
    let beside_killed_take = |c: &Call| {
        killed_takes.iter().any(|k| {
            k.start <= c.end
                && k.end + KILLED_TAKE_MS >= c.start
                && match (c.item, k.item) {
                    (Some(item), Some(other)) => item == other,
                    (Some(_), None) => true,
                    (None, _) => {
                        let (a, b) = (queue_of(c), queue_of(k));
                        a.is_empty() || b.is_empty() || a == b
                    }
                }
        })
    };
    for c in calls.iter().filter(|c| c.class != Class::Setup) {
        retake_refused(c, &parks, events_of, f);
        let code = match c.exit {
            Exit::Code(code @ (3 | 4)) => code,
            // "you worked on #N; someone else must review it"
            Exit::Code(5) if c.op == "claim --review --id" => 5,
            _ => continue,
        };
        let claims = c.class == Class::Claim || (c.class == Class::CompleteNext && code == 4);
        if c.op.starts_with("claim --review") {
            if review.iter().any(|s| s.free_for(c)) {
                f.false_refusals.push(format!(
                    "an item waited for review, free and not the caller's work, throughout: {}",
                    c.line()
                ));
            }
        } else if claims {
            let was_free = match c.item {
                Some(item) => free
                    .get(&item)
                    .is_some_and(|v| v.iter().any(|&(a, b)| a <= c.start && b >= c.end)),
                None => spans
                    .get(queue_of(c))
                    .is_some_and(|s| s.any_free(c.start, c.end)),
            };
            // Its owner takes a parked item by id whenever they like, and by take-next
            // once it has woken (take-next offers it first).
            let mut own = parks.iter().filter(|p| p.owner == c.actor);
            let own_park = match c.item {
                Some(item) => own.any(|p| p.item == item && p.throughout(c)),
                None => own.any(|p| {
                    (queue_of(c).is_empty() || queue_of(c) == p.queue)
                        && p.until + SLACK <= c.start
                        && p.throughout(c)
                }),
            };
            if was_free && !beside_killed_take(c) {
                f.false_refusals
                    .push(format!("an item was free throughout: {}", c.line()));
            } else if own_park {
                f.false_refusals.push(format!(
                    "the caller's own parked item was theirs to take throughout: {}",
                    c.line()
                ));
            }
        } else if let (Some(item), Some(token), 3) = (c.item, c.token, code)
            && lock_stood(events_of.get(&item), token, c, &visible)
        {
            f.false_refusals
                .push(format!("the lock stood throughout: {}", c.line()));
        }
    }
}

/// An item in review, free for a review take over a span, and who may not take it then:
/// whoever completed or submitted it, and whoever corrected a field of it before it last
/// went to review (the take's own condition, `worked_on` in the store's SQL).
struct ReviewSpan<'a> {
    item: i64,
    queue: &'a str,
    from: i64,
    until: i64,
    barred: Vec<&'a str>,
}

impl ReviewSpan<'_> {
    /// True when the review take `c` could have taken this item throughout the call.
    fn free_for(&self, c: &Call) -> bool {
        let q = queue_of(c);
        c.item.is_none_or(|i| i == self.item)
            && (q.is_empty() || q == self.queue)
            && self.from <= c.start
            && self.until >= c.end
            && !self.barred.contains(&c.actor.as_str())
    }
}

/// Each item's spans `(from, until)` free for a plain claim.
type FreeSpans = HashMap<i64, Vec<(i64, i64)>>;

/// Each item's spans free for a plain claim, and the spans items waited in review free
/// for a review take (a take or an end of review closes a span; a release, expiry or
/// unlock while in review opens one; a rejection to nobody frees the item for all). A
/// review lock given to someone barred from it is a violation (`own`).
fn free_spans<'a>(
    facts: &'a Facts,
    events_of: &HashMap<i64, Vec<&'a Event>>,
    visible: &dyn Fn(&str, i64) -> i64,
) -> (FreeSpans, Vec<ReviewSpan<'a>>) {
    let mut free = HashMap::new();
    let mut review = Vec::new();
    for item in &facts.items {
        let mut spans = Vec::new();
        let mut since = Some(visible(&item.created_by, item.created_at));
        // Who worked on it (completed or submitted it), and who corrected a field when.
        let mut makers: Vec<&str> = Vec::new();
        let mut fields: Vec<&str> = Vec::new();
        // Who may not review it now (set at its last `submitted`), and the open review span.
        let mut barred: Option<Vec<&str>> = None;
        let mut rsince: Option<i64> = None;
        for e in events_of.get(&item.id).map_or(&[][..], |v| v.as_slice()) {
            let k = e.kind.as_str();
            match k {
                "completed" | "submitted" => makers.push(&e.actor),
                "field_changed" => fields.push(&e.actor),
                _ => {}
            }
            let ends_review = TAKES.contains(&k)
                || FINISHES.contains(&k)
                || matches!(k, "accepted" | "rejected" | "requeued");
            if ends_review && let Some(s) = rsince.take() {
                review.push(ReviewSpan {
                    item: item.id,
                    queue: &item.queue,
                    from: s,
                    until: e.at,
                    barred: barred.clone().unwrap_or_default(),
                });
            }
            if k == "submitted" {
                let mut b = makers.clone();
                b.extend(&fields);
                barred = Some(b);
                rsince = Some(visible(&e.actor, e.at));
                continue;
            }
            if matches!(k, "accepted" | "rejected" | "requeued") || FINISHES.contains(&k) {
                barred = None;
            }
            if TAKES.contains(&k) || FINISHES.contains(&k) {
                if let Some(s) = since.take() {
                    spans.push((s, e.at));
                }
            } else if barred.is_some() {
                // In review: a lock ended frees it for reviewers only.
                if frees(e) && rsince.is_none() {
                    rsince = Some(visible(&e.actor, e.at));
                }
            } else if (frees(e) || (k == "rejected" && e.detail["to"].is_null())) && since.is_none()
            {
                since = Some(visible(&e.actor, e.at));
            }
        }
        if let Some(s) = since {
            spans.push((s, i64::MAX));
        }
        if let Some(s) = rsince {
            review.push(ReviewSpan {
                item: item.id,
                queue: &item.queue,
                from: s,
                until: i64::MAX,
                barred: barred.unwrap_or_default(),
            });
        }
        free.insert(item.id, spans);
    }
    (free, review)
}

/// A review lock given to someone who may not review the item (its maker, or a field's
/// corrector before it went to review), by a review take or by a supervisor's
/// (re)assignment while it waited in review.
fn own_reviews(events_of: &HashMap<i64, Vec<&Event>>, f: &mut Findings) {
    for (item, evs) in events_of {
        let mut makers: Vec<&str> = Vec::new();
        let mut fields: Vec<&str> = Vec::new();
        let mut barred: Option<Vec<&str>> = None;
        for e in evs {
            let k = e.kind.as_str();
            match k {
                "completed" | "submitted" => makers.push(&e.actor),
                "field_changed" => fields.push(&e.actor),
                _ => {}
            }
            if k == "submitted" {
                let mut b = makers.clone();
                b.extend(&fields);
                barred = Some(b);
            } else if matches!(k, "accepted" | "rejected" | "requeued") || FINISHES.contains(&k) {
                barred = None;
            } else if TAKES.contains(&k)
                && let Some(b) = &barred
            {
                let to = e.detail["to"].as_str().unwrap_or(&e.actor);
                if b.contains(&to) {
                    f.duplicates.push(format!(
                        "#{item}: {to} got the review lock (event {} {}) of their own work",
                        e.id, e.kind
                    ));
                }
            }
        }
    }
}

/// A park: its item (and queue), its owner, when others could see it, its wake time, and
/// the time of the event that ended it.
struct Park<'a> {
    item: i64,
    queue: &'a str,
    owner: &'a str,
    from: i64,
    until: i64,
    to: i64,
}

impl Park<'_> {
    /// True when the item was parked throughout the call.
    fn throughout(&self, c: &Call) -> bool {
        self.from <= c.start && self.to >= c.end
    }
}

/// Every park of the run, from its `parked` to the event that ended it (a wake, an undo,
/// or anything that takes or finishes the item).
fn parks<'a>(
    facts: &'a Facts,
    events_of: &HashMap<i64, Vec<&'a Event>>,
    visible: &dyn Fn(&str, i64) -> i64,
) -> Vec<Park<'a>> {
    let mut out = Vec::new();
    for item in &facts.items {
        let mut open: Option<Park<'a>> = None;
        for e in events_of.get(&item.id).map_or(&[][..], |v| v.as_slice()) {
            let k = e.kind.as_str();
            if k == "parked" {
                open = Some(Park {
                    item: item.id,
                    queue: &item.queue,
                    owner: &e.actor,
                    from: visible(&e.actor, e.at),
                    until: e.detail["until"].as_i64().unwrap_or(i64::MAX / 2),
                    to: i64::MAX,
                });
            } else if (k == "woke"
                || k == "requeued"
                || TAKES.contains(&k)
                || FINISHES.contains(&k))
                && let Some(mut p) = open.take()
            {
                p.to = e.at;
                out.push(p);
            }
        }
        out.extend(open);
    }
    out
}

/// `wake` refused "not parked" while the item was parked throughout the call (its owner's
/// wake takes it; a supervisor's returns it to the pool), or refused "not yours" while it
/// was the caller's park throughout, and `undo` refused while the
/// item's last event was the caller's own change that undo takes back, made well within
/// the undo window, with nothing on the item since.
fn retake_refused(
    c: &Call,
    parks: &[Park<'_>],
    events_of: &HashMap<i64, Vec<&Event>>,
    f: &mut Findings,
) {
    let item = c
        .item
        .or_else(|| c.args.get(1).and_then(|a| a.parse().ok()));
    let Some(item) = item else { return };
    match (c.op, c.exit) {
        // (Exit 1 is also a lost connection or an injected fault: judged by its words.)
        ("wake", Exit::Code(code @ (1 | 5)))
            if c.stderr.contains("is not parked") || c.stderr.contains("may not wake") =>
        {
            let mine = |p: &Park<'_>| code == 1 || p.owner == c.actor;
            if parks
                .iter()
                .any(|p| p.item == item && p.throughout(c) && mine(p))
            {
                f.false_refusals
                    .push(format!("the item was parked throughout: {}", c.line()));
            }
        }
        ("undo", Exit::Code(3)) => {
            let evs = events_of.get(&item).map_or(&[][..], |v| v.as_slice());
            let Some(pos) = evs.iter().rposition(|e| e.at + SLACK < c.start) else {
                return;
            };
            let last = evs[pos];
            let untouched = evs[pos + 1..].iter().all(|e| e.at > c.end + SLACK);
            if untouched
                && last.actor == c.actor
                && UNDOABLE.contains(&last.kind.as_str())
                && c.end - last.at < UNDO_MS - 2_000
            {
                f.false_refusals.push(format!(
                    "its last change ({} event {}) was the caller's, {} ms before: {}",
                    last.kind,
                    last.id,
                    c.start - last.at,
                    c.line()
                ));
            }
        }
        _ => {}
    }
}

/// An undone complete --next returns the item that complete took: where that lock still
/// stood at the undo, its next end must be the undo's `released` (with `undo_of`).
fn undo_returns_next(facts: &Facts, events_of: &HashMap<i64, Vec<&Event>>, f: &mut Findings) {
    let by_id: HashMap<i64, &Event> = facts.events.iter().map(|e| (e.id, e)).collect();
    let undos = facts
        .events
        .iter()
        .filter(|e| e.kind == "undone" && e.detail["undid"] == "completed");
    for u in undos {
        let Some(done) = u.detail["event"].as_i64().and_then(|id| by_id.get(&id)) else {
            continue;
        };
        let Some(next) = facts.events.iter().find(|e| {
            e.actor == done.actor
                && e.at == done.at
                && e.item != done.item
                && e.id > done.id
                && TAKES.contains(&e.kind.as_str())
        }) else {
            continue;
        };
        let evs = events_of.get(&next.item).map_or(&[][..], |v| v.as_slice());
        let ended = evs
            .iter()
            .find(|e| e.id > next.id && ENDS.contains(&e.kind.as_str()));
        let returned = ended.is_some_and(|e| {
            e.kind == "released" && e.actor == u.actor && e.detail["undo_of"] == done.item
        });
        let stood = ended.is_none_or(|e| e.at >= u.at + SLACK);
        if stood && !returned {
            f.lost.push(format!(
                "the undo (event {}) of #{}'s complete --next left #{} (token {:?}) held",
                u.id, done.item, next.item, next.token
            ));
        }
    }
}

/// Every item's state is the one its history leads to.
fn rows_agree(facts: &Facts, events_of: &HashMap<i64, Vec<&Event>>, f: &mut Findings) {
    for item in &facts.items {
        let mut state = ("open", None);
        for e in events_of.get(&item.id).map_or(&[][..], |v| v.as_slice()) {
            state.0 = match e.kind.as_str() {
                "completed" => "done",
                "failed" => "failed",
                "cancelled" => "cancelled",
                "parked" => "parked",
                "requeued" | "woke" | "undone" | "rejected" => "open",
                "submitted" => "review",
                "accepted" => "done",
                _ => continue,
            };
            state.1 = Some(e.id);
        }
        if state.0 != item.state {
            f.lost.push(format!(
                "#{} is {} but its history (event {:?}) leaves it {}",
                item.id, item.state, state.1, state.0
            ));
        }
    }
}

/// True when the lock `token` on the call's item was taken before the call and nothing
/// ended it before the call ended.
fn lock_stood(
    evs: Option<&Vec<&Event>>,
    token: i64,
    c: &Call,
    visible: &dyn Fn(&str, i64) -> i64,
) -> bool {
    let Some(evs) = evs else { return false };
    let Some(pos) = evs
        .iter()
        .position(|e| TAKES.contains(&e.kind.as_str()) && e.token == Some(token))
    else {
        return false;
    };
    let take = evs[pos];
    if visible(&take.actor, take.at) > c.start {
        return false;
    }
    let ended = evs[pos + 1..]
        .iter()
        .find(|e| ENDS.contains(&e.kind.as_str()))
        .map_or(i64::MAX, |e| e.at);
    ended > c.end
}

/// Free spans `(from, until)` sorted by `from`, with the latest `until` so far: "was any
/// item free throughout (s, e)" is one binary search.
#[derive(Default)]
struct Spans {
    all: Vec<(i64, i64)>,
    latest: Vec<i64>,
}

impl Spans {
    fn sort(&mut self) {
        self.all.sort_unstable();
        let mut m = i64::MIN;
        self.latest = self
            .all
            .iter()
            .map(|&(_, e)| {
                m = m.max(e);
                m
            })
            .collect();
    }

    fn any_free(&self, s: i64, e: i64) -> bool {
        let i = self.all.partition_point(|&(from, _)| from <= s);
        i > 0 && self.latest[i - 1] >= e
    }
}

/// The queue a claim names with --queue ("" for any queue).
fn queue_of(c: &Call) -> &str {
    c.args
        .iter()
        .position(|a| a == "--queue")
        .and_then(|i| c.args.get(i + 1))
        .map_or("", String::as_str)
}
