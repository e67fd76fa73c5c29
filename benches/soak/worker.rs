//! A worker: one caseload name claiming and completing through the real CLI as a person
//! (or a script) would, in a loop until the deadline. After an answer it did not get
//! (killed, exit 6, an injected fault) it runs the same write again, as a careful client
//! would, and after a lost claim it looks at its own items (`list --mine`) to carry on.
//! It parks items for a few seconds (they wake for it during the run: its next take
//! offers them first, or it takes one back with `wake` or `claim --id`), and now and then
//! undoes what it just did (a complete, complete --next, fail, release, skip or park),
//! within the undo window; an undo whose answer was lost is not repeated: the worker
//! looks (`list --mine`), as the README says to after exit 6. It also reviews others'
//! work (`claim --review`, by id or take-next): with a review lock it accepts, rejects,
//! corrects a field or renews; its own rejected work comes back to it as an assignment.
//! Its finishes sometimes name a ready-made text by its code (one that the chaos loop
//! deletes now and then: refused, the lock kept), and sometimes complete with
//! `--override` (staff: refused where the record breaks a rule).

use std::sync::atomic::{AtomicI64, Ordering};

use crate::chaos::Seen;
use std::time::{Duration, Instant};

use crate::backend::Kind;
use crate::chaos::{CONFLICT, LISTS, QUEUE};
use crate::process::{self, Call, Class, Exit, Request, Runner};
use crate::rng::Rng;

/// A holder's write: name, only for items of a queue (whose fields it names), how often,
/// whether it ends the lock, whether exit 0 always leaves a row, and its words (split on
/// spaces; `{item}`, `{token}`, `{marker}` and `{until}`, a wake time 3-15 s ahead, filled
/// in).
pub(crate) struct HolderWrite {
    pub(crate) name: &'static str,
    queue: Option<&'static str>,
    weight: u32,
    ends_lock: bool,
    must_write: bool,
    words: &'static str,
}

const fn holder(
    name: &'static str,
    queue: Option<&'static str>,
    weight: u32,
    ends_lock: bool,
    must_write: bool,
    words: &'static str,
) -> HolderWrite {
    HolderWrite {
        name,
        queue,
        weight,
        ends_lock,
        must_write,
        words,
    }
}

impl HolderWrite {
    fn args(&self, item: i64, token: i64, marker: &str, until: &str, other: i64) -> Vec<String> {
        let fill = |w: &str| {
            w.replace("{item}", &item.to_string())
                .replace("{other}", &other.to_string())
                .replace("{token}", &token.to_string())
                .replace("{marker}", marker)
                .replace("{until}", until)
        };
        self.words.split(' ').map(fill).collect()
    }
}

fn v(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

/// The holder's writes, one line each (`complete --next` is the worker's own step, as it
/// also claims).
#[rustfmt::skip]
pub(crate) const HOLDER: &[HolderWrite] = &[
    holder("complete", None, 30, true, true, "complete {item} --token {token} --result {marker}"),
    holder("fail", None, 4, true, true, "fail {item} --token {token} --reason {marker}"),
    holder("release", None, 3, true, true, "release {item} --token {token}"),
    holder("release", None, 2, true, true, "release {item} --token {token} --reason {marker}"),
    holder("skip", None, 3, true, true, "skip {item} --token {token} --reason {marker}"),
    holder("park", None, 5, true, true, "park {item} --token {token} --until {until} --reason {marker}"),
    holder("renew", None, 8, false, true, "renew {item} --token {token}"),
    holder("set", Some(QUEUE), 8, false, true, "set {item} note={marker} --token {token}"),
    holder("tick", Some(LISTS), 4, false, false, "tick {item} steps a --token {token}"),
    holder("tick --undo", Some(LISTS), 3, false, false, "tick {item} steps a --undo --token {token}"),
    holder("tick --not-done", Some(LISTS), 2, false, false, "tick {item} steps b --not-done {marker} --token {token}"),
    // The holder merges its item into another it has seen (issue 27): exit 1 into itself
    // or into an item merged already, 5 into another queue's (a supervisor's call).
    holder("merge", Some(QUEUE), 1, true, true, "merge {item} --into {other} --token {token} --reason {marker}"),
    // Ready-made texts by their codes (`ok`, `nodata`, `later`, `notmine`: the main and
    // the checklist queue's from the start, their text the result or reason when none is
    // typed); `gone-*` come and go with the chaos loop's `code text` in the main queue
    // only (exit 1 while gone, nothing written, the lock kept).
    holder("complete --code", None, 4, true, true, "complete {item} --token {token} --code ok"),
    holder("complete --code", None, 2, true, true, "complete {item} --token {token} --code gone-result --result {marker}"),
    holder("fail --code", None, 2, true, true, "fail {item} --token {token} --code nodata"),
    holder("fail --code", None, 1, true, true, "fail {item} --token {token} --code gone-fail --reason {marker}"),
    holder("release --code", None, 2, true, true, "release {item} --token {token} --code later"),
    holder("release --code", None, 1, true, true, "release {item} --token {token} --code gone-release"),
    holder("skip --code", None, 2, true, true, "skip {item} --token {token} --code notmine --reason {marker}"),
    holder("skip --code", None, 1, true, true, "skip {item} --token {token} --code gone-skip"),
    // A staff member's override: kept in the event when nothing is broken; refused (exit
    // 5, the lock kept) when a rule is (the checklist's lines not ticked).
    holder("complete --override", None, 3, true, true, "complete {item} --token {token} --override {marker}"),
];

/// The reviewer's writes on an item in review (taken with `claim --review`).
#[rustfmt::skip]
pub(crate) const REVIEWER: &[HolderWrite] = &[
    holder("accept", None, 12, true, true, "accept {item} --token {token} --comment {marker}"),
    holder("accept", None, 4, true, true, "accept {item} --token {token}"),
    holder("reject", None, 6, true, true, "reject {item} --token {token} --reason {marker}"),
    // A ready-made reason by its code (issue 29 §1): `redo` is the queue's from the start;
    // `maybe` comes and goes with the chaos loop's `reject text` (exit 1 while it is gone,
    // nothing written).
    holder("reject --code", None, 3, true, true, "reject {item} --token {token} --code redo"),
    holder("reject --code", None, 2, true, true, "reject {item} --token {token} --code maybe --reason {marker}"),
    holder("release", None, 2, true, true, "release {item} --token {token}"),
    holder("renew", None, 3, false, true, "renew {item} --token {token}"),
    holder("set", Some(QUEUE), 3, false, true, "set {item} note={marker} --token {token}"),
];

/// The event kind a holder write with a token leaves (checked by token, so a retry's
/// "already done" finds the first try's row).
pub(crate) fn token_kind(op: &str) -> Option<&'static str> {
    match op {
        "complete" | "complete --next" | "complete --code" | "complete --override" => {
            Some("completed")
        }
        "fail" | "fail --code" => Some("failed"),
        "release" | "release --code" => Some("released"),
        "skip" | "skip --code" => Some("skipped"),
        "renew" => Some("renewed"),
        "park" => Some("parked"),
        "accept" => Some("accepted"),
        "reject" | "reject --code" => Some("rejected"),
        "merge" => Some("cancelled"),
        _ => None,
    }
}

/// How often a worker undoes what it just did (complete, fail, release, skip, park).
const UNDO_RATE: f64 = 0.12;

/// One worker's loop.
pub(crate) struct Worker<'a> {
    pub(crate) runner: &'a Runner,
    pub(crate) name: String,
    pub(crate) rng: Rng,
    pub(crate) kind: Kind,
    pub(crate) fault_rate: f64,
    pub(crate) deadline: Instant,
    pub(crate) seen: &'a Seen,
    pub(crate) backlog: &'a AtomicI64,
    /// Items parked by anyone (for the supervisor's `wake` and the workers' looks).
    pub(crate) parks: &'a Seen,
    held: Option<(i64, i64)>,
    /// This worker's own parked items, as far as it knows.
    parked: Vec<i64>,
    /// The held item's queue.
    queue: String,
    /// The held lock is a review lock (the item waits in review).
    review: bool,
    candidates: Vec<i64>,
    /// Items seen waiting for review, free (for `claim --review --id`).
    reviews: Vec<i64>,
    since_sync: u32,
}

impl<'a> Worker<'a> {
    pub(crate) fn new(
        runner: &'a Runner,
        name: String,
        rng: Rng,
        kind: Kind,
        fault_rate: f64,
        deadline: Instant,
        seen: &'a Seen,
        backlog: &'a AtomicI64,
        parks: &'a Seen,
    ) -> Worker<'a> {
        Worker {
            runner,
            name,
            rng,
            kind,
            fault_rate,
            deadline,
            seen,
            backlog,
            parks,
            held: None,
            parked: Vec::new(),
            queue: String::new(),
            review: false,
            candidates: Vec::new(),
            reviews: Vec::new(),
            since_sync: 0,
        }
    }

    pub(crate) fn run(mut self) {
        while Instant::now() < self.deadline {
            if self.held.is_none() {
                self.take();
            } else {
                self.work();
            }
            let pause = self.rng.below(15);
            std::thread::sleep(Duration::from_millis(pause));
        }
    }

    fn call(
        &mut self,
        op: &'static str,
        class: Class,
        args: Vec<String>,
        target: Option<(i64, i64)>,
    ) -> Call {
        let id = self.runner.next_id();
        self.call_with(id, op, class, args, target, None)
    }

    fn call_with(
        &mut self,
        id: usize,
        op: &'static str,
        class: Class,
        args: Vec<String>,
        target: Option<(i64, i64)>,
        retry_of: Option<usize>,
    ) -> Call {
        let mut req = Request::new(&self.name, op, class, args);
        req.refusals = match class {
            // "you worked on #N; someone else must review it"
            Class::Claim if op == "claim --review --id" => &[3, 4, 5],
            Class::Claim | Class::CompleteNext => &[3, 4],
            // "#N is not parked" (a supervisor woke it, a take gave it back already), or
            // "may not wake #N, which w2 parked" (then someone else took and parked it)
            Class::Retake if op == "wake" => &[1, 5],
            _ if op == "merge" => &[1, 3, 5],
            // "w1 is staff and may not complete a record that breaks its fields' rules"
            _ if op == "complete --override" => &[3, 5],
            _ if target.is_some() => CONFLICT,
            _ => &[],
        };
        req.item = target.map(|t| t.0);
        req.token = target.map(|t| t.1).filter(|&t| t > 0);
        req.retry_of = retry_of;
        if retry_of.is_none() && class != Class::Read && self.rng.chance(self.fault_rate) {
            req.fault = Some(fault(&mut self.rng, self.kind));
        }
        let call = self.runner.run(id, req);
        if let Some((item, _)) = call.claimed {
            self.seen.add(item);
        }
        self.since_sync += 1;
        if call.exit == Exit::Code(0) && matches!(op, "complete" | "complete --next" | "fail") {
            self.backlog.fetch_sub(1, Ordering::Relaxed);
        }
        call
    }

    /// A call whose answer was lost is run again (same arguments, no fault) until it has one.
    fn until_known(&mut self, mut call: Call) -> Call {
        let first = call.id;
        for _ in 0..5 {
            if !lost_answer(&call) {
                break;
            }
            let id = self.runner.next_id();
            let (op, class, args) = (call.op, call.class, call.args.clone());
            let target = call.item.map(|i| (i, call.token.unwrap_or(0)));
            call = self.call_with(id, op, class, args, target, Some(first));
        }
        call
    }

    fn take(&mut self) {
        if self.since_sync > 20 {
            self.sync();
            if self.held.is_some() {
                return;
            }
        }
        if !self.parked.is_empty() && self.rng.chance(0.15) {
            self.take_back();
            return;
        }
        let pick = self.rng.below(100);
        let call = if pick < 20 && !self.candidates.is_empty() {
            let i = self.rng.below(self.candidates.len() as u64) as usize;
            let id = self.candidates.swap_remove(i);
            let args = v(&["claim", "--id", &id.to_string(), "--json"]);
            self.call("claim --id", Class::Claim, args, Some((id, 0)))
        } else if pick < 30 {
            self.call(
                "claim --wait",
                Class::Claim,
                v(&["claim", "--wait", "--timeout", "2", "--json"]),
                None,
            )
        } else if pick < 40 {
            self.look();
            return;
        } else if pick < 48 && !self.reviews.is_empty() {
            let i = self.rng.below(self.reviews.len() as u64) as usize;
            let id = self.reviews.swap_remove(i);
            let args = v(&["claim", "--review", "--id", &id.to_string(), "--json"]);
            self.call("claim --review --id", Class::Claim, args, Some((id, 0)))
        } else if pick < 55 {
            let mut args = v(&["claim", "--review", "--json"]);
            if self.rng.chance(0.5) {
                args.extend(v(&["--queue", QUEUE]));
            }
            self.call("claim --review", Class::Claim, args, None)
        } else if pick < 70 {
            self.call(
                "claim",
                Class::Claim,
                v(&["claim", "--queue", QUEUE, "--json"]),
                None,
            )
        } else {
            self.call("claim", Class::Claim, v(&["claim", "--json"]), None)
        };
        match call.exit {
            Exit::Code(0) => self.hold(&call),
            Exit::Code(4) => std::thread::sleep(Duration::from_millis(50 + self.rng.below(200))),
            e if e.unknown() || call.fault.is_some() => self.sync(),
            _ => {}
        }
    }

    /// Takes one of its own parked items back before its time, by `wake` or `claim --id`
    /// (either way it is locked to this worker).
    fn take_back(&mut self) {
        let i = self.rng.below(self.parked.len() as u64) as usize;
        let item = self.parked[i];
        let id = item.to_string();
        let call = if self.rng.chance(0.5) {
            let args = v(&["wake", &id, "--json"]);
            self.call("wake", Class::Retake, args, Some((item, 0)))
        } else {
            let args = v(&["claim", "--id", &id, "--json"]);
            self.call("claim --id", Class::Claim, args, Some((item, 0)))
        };
        match call.exit {
            Exit::Code(0) => self.hold(&call),
            // Not parked any more (a supervisor woke it, or a take gave it back already),
            // or parked again by someone else since.
            Exit::Code(1 | 3 | 5) => {
                self.parked.swap_remove(i);
            }
            _ => self.sync(),
        }
    }

    /// Undoes this worker's last change to `item` (just acknowledged): exit 0 gives the
    /// item back, locked to it (an undone complete --next also returns the item it took,
    /// which the worker then no longer holds). Not repeated when the answer is lost.
    fn undo(&mut self, item: i64) {
        let args = v(&["undo", &item.to_string(), "--json"]);
        let call = self.call("undo", Class::Retake, args, Some((item, 0)));
        match call.exit {
            Exit::Code(0) => self.hold(&call),
            _ if lost_answer(&call) => self.sync(),
            _ => {}
        }
    }

    /// Holds what an exit-0 claim printed.
    fn hold(&mut self, call: &Call) {
        self.held = call.claimed;
        if let Some((item, _)) = call.claimed {
            self.parked.retain(|&p| p != item);
        }
        let item: serde_json::Value = serde_json::from_str(call.stdout.trim()).unwrap_or_default();
        self.queue = item["queue"].as_str().unwrap_or_default().to_string();
        self.review = item["state"] == "review";
    }

    /// Looks at the queue as the TUI's list does, to pick an item by id later.
    fn look(&mut self) {
        let pick = self.rng.below(10);
        let args = if pick < 3 {
            v(&["list", "--state", "parked", "--limit", "30", "--json"])
        } else if pick < 5 {
            v(&["list", "--state", "review", "--limit", "30", "--json"])
        } else {
            v(&["list", "--limit", "30", "--json"])
        };
        let call = self.call("list", Class::Read, args, None);
        if let Ok(serde_json::Value::Array(items)) = serde_json::from_str(&call.stdout) {
            let ids = items
                .iter()
                .filter(|i| i["lock_user"].is_null())
                .filter_map(|i| i["id"].as_i64())
                .collect();
            if (3..5).contains(&pick) {
                self.reviews = ids;
            } else {
                self.candidates = ids;
            }
        }
    }

    /// Finds this worker's own lock (after a lost claim, or an assignment by a supervisor).
    fn sync(&mut self) {
        self.since_sync = 0;
        let call = self.call(
            "list --mine",
            Class::Read,
            v(&["list", "--mine", "--json"]),
            None,
        );
        if call.exit != Exit::Code(0) {
            return;
        }
        if let Ok(serde_json::Value::Array(items)) = serde_json::from_str(&call.stdout) {
            let mine = items
                .iter()
                .find(|i| i["lock_user"].as_str() == Some(self.name.as_str()));
            self.held = mine.and_then(|i| Some((i["id"].as_i64()?, i["lock_token"].as_i64()?)));
            self.queue = mine
                .and_then(|i| i["queue"].as_str())
                .unwrap_or_default()
                .to_string();
            self.review = mine.is_some_and(|i| i["state"] == "review");
        }
    }

    fn work(&mut self) {
        let Some((item, token)) = self.held else {
            return;
        };
        let (i, t) = (item.to_string(), token.to_string());
        if !self.review && self.rng.below(100) < 20 {
            let id = self.runner.next_id();
            let m = format!("soak-{id}");
            let mut args = v(&[
                "complete", &i, "--token", &t, "--result", &m, "--next", "--json",
            ]);
            if self.rng.chance(0.5) {
                args.extend(v(&["--queue", QUEUE]));
            }
            if self.rng.chance(0.25) {
                args.extend(v(&["--code", "ok"]));
            }
            let call = self.call_with(
                id,
                "complete --next",
                Class::CompleteNext,
                args,
                Some((item, token)),
                None,
            );
            let call = self.until_known(call);
            if self.tick_all_if_refused(&call) || crate::analysis::code_refused(&call) {
                return;
            }
            self.held = None;
            if call.exit == Exit::Code(0) {
                self.hold(&call);
            }
            if call.exit == Exit::Code(0) && call.claimed.is_none() {
                self.sync();
            }
            if matches!(call.exit, Exit::Code(0 | 4)) && self.rng.chance(UNDO_RATE) {
                self.undo(item);
            }
            return;
        }
        let queue = self.queue.clone();
        let table = if self.review { REVIEWER } else { HOLDER };
        let w = self.rng.weighted(table, |h| {
            if h.queue.is_none_or(|q| q == queue) {
                h.weight
            } else {
                0
            }
        });
        let id = self.runner.next_id();
        let wakes = process::now_ms() + 3_000 + self.rng.below(12_000) as i64;
        let until = chrono::DateTime::from_timestamp_millis(wakes)
            .unwrap_or_default()
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let other = self.seen.pick(self.rng.next_u64()).max(1);
        let args = w.args(item, token, &format!("soak-{id}"), &until, other);
        let class = if w.must_write {
            Class::Holder
        } else {
            Class::MayWrite
        };
        let call = self.call_with(id, w.name, class, args, Some((item, token)), None);
        let call = self.until_known(call);
        if self.tick_all_if_refused(&call) {
            return;
        }
        let kept = crate::analysis::code_refused(&call)
            || (w.name == "merge" && matches!(call.exit, Exit::Code(1 | 5)))
            || (w.name == "complete --override" && call.exit == Exit::Code(5));
        if (w.ends_lock && !kept) || call.exit == Exit::Code(3) || lost_answer(&call) {
            self.held = None;
        }
        if w.name == "park" && call.exit == Exit::Code(0) {
            self.parked.push(item);
            self.parks.add(item);
        }
        if w.ends_lock && !self.review && call.exit == Exit::Code(0) && self.rng.chance(UNDO_RATE) {
            self.undo(item);
        }
    }

    /// A complete refused for the checklist's lines: ticks them all (keeping the lock, to
    /// complete on a later turn). True when it was such a refusal.
    fn tick_all_if_refused(&mut self, call: &Call) -> bool {
        if !(call.exit == Exit::Code(1) && call.stderr.contains("cannot be completed")) {
            return false;
        }
        let Some((item, token)) = self.held else {
            return true;
        };
        for line in ["a", "b", "c"] {
            let args = v(&[
                "tick",
                &item.to_string(),
                "steps",
                line,
                "--token",
                &token.to_string(),
            ]);
            let c = self.call("tick", Class::MayWrite, args, Some((item, token)));
            let c = self.until_known(c);
            if c.exit != Exit::Code(0) {
                self.held = None;
                break;
            }
        }
        true
    }
}

/// True when the caller does not know what happened: killed, exit 6, or an injected fault
/// that made it fail.
pub(crate) fn lost_answer(call: &Call) -> bool {
    call.exit.unknown()
        || (call.fault.is_some()
            && call.exit != Exit::Code(0)
            && !call.refusals.contains(&exit_code(call.exit)))
}

fn exit_code(e: Exit) -> i32 {
    match e {
        Exit::Code(c) => c,
        _ => -1,
    }
}

/// An strace fault for one call: an I/O error, a full disk or a SIGKILL at the Nth write
/// or fsync (SQLite), or at the Nth message to or from the server (PostgreSQL).
pub(crate) fn fault(rng: &mut Rng, kind: Kind) -> String {
    let n = rng.range(1, 30);
    let s = rng.range(1, 2);
    match (kind, rng.below(6)) {
        (Kind::Sqlite, 0) => format!("inject=pwrite64:error=EIO:when={n}"),
        (Kind::Sqlite, 1) => format!("inject=pwrite64:error=ENOSPC:when={n}"),
        (Kind::Sqlite, 2) => format!("inject=fsync,fdatasync:error=EIO:when={s}"),
        (Kind::Sqlite, 3) => format!("inject=fsync,fdatasync:error=ENOSPC:when={s}"),
        (Kind::Sqlite, 4) => format!("inject=pwrite64:signal=KILL:when={n}"),
        (Kind::Sqlite, _) => format!("inject=fsync,fdatasync:signal=KILL:when={s}"),
        (Kind::Postgres, 0) => format!("inject=sendto:error=EPIPE:when={n}"),
        (Kind::Postgres, 1) => format!("inject=recvfrom:error=ECONNRESET:when={n}"),
        (Kind::Postgres, 2) => format!("inject=sendto:error=EIO:when={n}"),
        (Kind::Postgres, 3) => format!("inject=recvfrom:signal=KILL:when={n}"),
        (Kind::Postgres, 4) => format!("inject=sendto:signal=KILL:when={n}"),
        (Kind::Postgres, _) => format!("inject=recvfrom:error=ETIMEDOUT:when={n}"),
    }
}
