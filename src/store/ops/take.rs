//! Taking work: one chosen item, or the next in take order. Each refusal has one answer,
//! decided here in a fixed order (pinned, with exact errors and exit codes, by
//! tests/refusals.rs on both backends).
//!
//! `take(id)`:
//! 0. parked: its owner takes it (`woke`, `locked`); past its grace it returns to the pool
//!    and goes on as a free item; else `Parked` (exit 3), naming owner, time and reason;
//! 1. no such item: `NotFound` (exit 1);
//! 2. done, failed or cancelled: `NotOpen`, naming who finished it (exit 3);
//! 3. the caller's own lock, live or expired but not taken over: renewed and returned;
//! 4. someone else's live lock: `HeldByOther` (exit 3);
//! 5. a queue the caller may not take from, or the caller has left: `NotEligible` (exit 5);
//! 6. its queue paused: `Paused` (exit 4);
//! 7. the caller's limit per user in that queue reached: `WipLimit` (exit 4);
//! 8. otherwise it is claimed (an expired lock is taken over, naming the old holder).
//!
//! `take_next` (queue filter `Q` or none):
//! 0. the caller's own woken parked item (within `Q`), taken for them; parks past their
//!    grace return to the pool;
//! 1. `Q` unknown: `UnknownQueue`; `Q` not one the caller may take from (or the caller
//!    has left): `NotEligible`; `Q` paused: `Paused`;
//! 2. the first takeable item in take order is claimed (`Q`'s own order; without `Q`,
//!    priority order, or when some queue orders by due time the mixed order of
//!    [`TakeOrder::key`] over each queue's first item);
//!    (PostgreSQL passes over rows other transactions are writing: when it found nothing
//!    but a running queue in scope has a takeable item under the caller's limit, someone
//!    is writing that item (a supervisor's edit, a claim that may yet fail); it looks
//!    again after 5, 20, 50 and 100 ms before it answers);
//! 3. else, when a running queue in scope has takeable items but the caller's limit
//!    there is reached: `WipLimit`;
//! 4. else, when paused queues in scope have takeable items: `Paused`, naming them;
//! 5. else, when the caller has left: `NotEligible`; else `NothingToClaim`: "no free
//!    items in queue 'Q'" or "… in any open queue" (only the caller's queues count in
//!    3–5: the candidate search and the claim pass over the others).
//!
//! `finish_and_next` (complete-and-next): the fenced complete, then `take_next`, in the
//! same transaction; when take-next answers with one of its "nothing to claim" refusals
//! (exit 4) the complete still commits. A retry of a complete applied before takes
//! nothing (the first run took the next item).

use super::{Claimable, HolderOp, ItemWrite, Tx, found, holder_write, known_queue, not_open};
use serde_json::json;

use crate::domain::{EventKind, Item, ItemState, QueueSettings, Queues, TakeOrder, Work};
use crate::store::error::{Result, StoreError};
use crate::store::{AndNext, Applied, TakeNext};

/// Takes one chosen item (see the module's table).
pub(crate) fn take(tx: &mut dyn Tx, id: i64) -> Result<Item> {
    let me = tx.actor().name.clone();
    let now = tx.now();
    // A claim refused after every check passed means a queue's settings changed in
    // between (PostgreSQL); the checks are then made again.
    for _ in 0..3 {
        let mut cur = found(id, tx.item_for_update(id)?)?;
        if cur.state == ItemState::Parked {
            if let Some(item) = super::park::take_parked(tx, &cur)? {
                return Ok(item);
            }
            // Its grace had passed: back in the pool now, taken as any free item.
            cur = found(id, tx.item_for_update(id)?)?;
        }
        if cur.state != ItemState::Open {
            return Err(not_open(&cur));
        }
        if cur.is_held_by(&me) {
            let renew = HolderOp::Renew;
            holder_write(tx, id, cur.lock_token, renew, &renew.plan(cur.lock_token)?)?;
            return found(id, tx.item(id)?);
        }
        let q = known_queue(tx, &cur.queue)?;
        if let Some(lock) = cur.lock()
            && !lock.is_expired(now)
        {
            return Err(StoreError::HeldByOther {
                id,
                holder: lock.user,
                since: lock.time,
            });
        }
        super::require_eligible(tx, Work::Take, &q.name)?;
        if q.paused {
            return Err(StoreError::Paused {
                queues: vec![q.name],
            });
        }
        if let Some(max) = q.max_per_user {
            tx.serialise_claims(&q.name)?;
            let held = tx.held_count(&q.name, id)?;
            if held >= max {
                return Err(StoreError::WipLimit {
                    queue: q.name,
                    held,
                });
            }
        }
        if let Some(item) = claim(tx, id, cur.lock_user.as_deref(), cur.lock_token)? {
            return Ok(item);
        }
    }
    Err(StoreError::Busy(format!(
        "#{id} could not be taken: its queue's settings kept changing; try again"
    )))
}

/// Claims `id`, read with its row held (its lock, expired or none, and its token cannot
/// move before the claim): the event is `locked`, or `taken_over` naming the expired
/// lock's holder, with the token the claim gives.
fn claim(tx: &mut dyn Tx, id: i64, holder: Option<&str>, token: i64) -> Result<Option<Item>> {
    let given = token + 1;
    let (kind, detail) = match holder {
        Some(from) => (EventKind::TakenOver, json!({"from": from, "token": given})),
        None => (EventKind::Locked, json!({"token": given})),
    };
    tx.claim(id, token, kind, &detail)
}

/// How many parks past their grace one take-next returns to the pool before it looks.
const RETURN_ON_TAKE: usize = 16;

/// Takes the next item in take order (see the module's table).
pub(crate) fn take_next(tx: &mut dyn Tx, opts: &TakeNext) -> Result<Item> {
    // The short way, when nothing else is to be done first (see `Tx::first_takeable`):
    // the same candidate the long way would find, claimed the same way. A claim refused
    // (the caller's own parallel claim filled the WIP limit) goes the long way.
    if let Some(c) = tx.first_takeable(opts)?
        && let Some(item) = claim(tx, c.id, c.holder.as_deref(), c.token)?
    {
        return Ok(item);
    }
    if let Some(item) = super::park::take_woken(tx, opts)? {
        return Ok(item);
    }
    // Parks whose grace has passed are free again: returned here as the reaper would.
    super::park::return_parked(tx, RETURN_ON_TAKE)?;
    let scope = match &opts.queue {
        Some(name) => {
            let q = known_queue(tx, name)?;
            super::require_eligible(tx, Work::Take, &q.name)?;
            if q.paused {
                return Err(StoreError::Paused {
                    queues: vec![q.name],
                });
            }
            Some(q)
        }
        None => None,
    };
    let mut next = TakeNext {
        queue: scope.as_ref().map(|q| q.name.clone()),
        skip: opts.skip.clone(),
    };
    // A row another program or the disk spoiled is passed over, not fatal to everyone.
    let mut passed = PassedOver::default();
    let mut waits = SKIPPED_WAITS_MS.iter();
    loop {
        let found = next_candidate(tx, &next, scope.as_ref(), &mut passed)?;
        passed.log();
        let Some(c) = found else {
            if tx.skips_rows_being_written()
                && let Some(&ms) = waits.next()
                && being_written(tx, scope.as_ref(), &next.skip)?
            {
                std::thread::sleep(std::time::Duration::from_millis(ms));
                continue;
            }
            let why = explain_nothing(tx, scope.as_ref(), &next.skip)?;
            return Err(passed.explain(why));
        };
        if let Some(item) = claim(tx, c.id, c.holder.as_deref(), c.token)? {
            return Ok(item);
        }
        // Only the WIP limit can refuse a candidate the transaction holds: the caller's
        // own parallel claim filled it meanwhile (PostgreSQL). Look again; the next
        // candidate search sees that claim and passes over the full queue.
        next.skip.push(c.id);
    }
}

/// How long take-next waits, each time, before it looks again for an item it passed over
/// because another transaction was writing it (at most 175 ms in all).
const SKIPPED_WAITS_MS: [u64; 4] = [5, 20, 50, 100];

/// True when a candidate search that found nothing passed over a takeable item: a running
/// queue in scope the caller may take from, under their limit there, has an open item
/// that is free or expired (other than `skip`). Only a row another transaction is writing
/// is passed over so (PostgreSQL).
fn being_written(tx: &mut dyn Tx, scope: Option<&QueueSettings>, skip: &[i64]) -> Result<bool> {
    let me = tx.actor().name.clone();
    let access = tx.access(&me)?;
    if access.left.is_some() {
        return Ok(false);
    }
    let queues = match scope {
        Some(q) => vec![q.clone()],
        None => tx.queues()?,
    };
    for q in queues
        .iter()
        .filter(|q| !q.paused && access.takes.has(&q.name))
    {
        if let Some(max) = q.max_per_user
            && tx.held_count(&q.name, 0)? >= max
        {
            continue;
        }
        if tx.has_takeable(q, skip)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The first takeable item in take order: within one queue by its own order; across
/// queues by priority, unless some queue orders by due time or the caller may take from
/// some queues only: then each running queue's (each of theirs) first item (one index walk
/// each) and the smallest of their [`TakeOrder::key`]s.
fn next_candidate(
    tx: &mut dyn Tx,
    next: &TakeNext,
    scope: Option<&QueueSettings>,
    passed: &mut PassedOver,
) -> Result<Option<Claimable>> {
    if let Some(q) = scope {
        return tx.candidate(next, q.order, passed);
    }
    let queues = tx.queues()?;
    // A person limited to some queues walks each of theirs (one index walk each): one walk
    // across all queues would pass over every row of the others first, on every take.
    let me = tx.actor().name.clone();
    let takes = tx.access(&me)?.takes;
    let limited = takes != Queues::All;
    if !limited && queues.iter().all(|q| q.order == TakeOrder::Priority) {
        return tx.candidate(next, TakeOrder::Priority, passed);
    }
    let mut best: Option<(crate::domain::queue::TakeKey, Claimable)> = None;
    for q in (queues.iter()).filter(|q| !q.paused && takes.has(&q.name)) {
        let one = TakeNext {
            queue: Some(q.name.clone()),
            ..next.clone()
        };
        if let Some(c) = tx.candidate(&one, q.order, passed)? {
            let key = q.order.key(c.due_at, c.priority, c.created_at, c.id);
            if best.as_ref().is_none_or(|(k, _)| key < *k) {
                best = Some((key, c));
            }
        }
    }
    Ok(best.map(|(_, c)| c))
}

/// The unreadable items take-next passed over: how many, and the first for messages.
#[derive(Debug, Default)]
pub(crate) struct PassedOver {
    count: usize,
    first: Option<Item>,
    logged: usize,
}

impl PassedOver {
    /// Notes an item whose columns cannot be read.
    pub(crate) fn add(&mut self, item: Item) {
        self.count += 1;
        self.first.get_or_insert(item);
    }

    /// One log line per take, however many were passed over.
    fn log(&mut self) {
        if let Some(first) = &self.first
            && self.count > self.logged
        {
            tracing::warn!(
                count = self.count,
                first = first.id,
                problem = %first.unreadable_summary().unwrap_or_default(),
                "take-next passed over unreadable items"
            );
            self.logged = self.count;
        }
    }

    /// Why nothing could be taken, adding what was passed over.
    fn explain(&self, why: StoreError) -> StoreError {
        let Some(first) = &self.first else {
            return why;
        };
        let also = format!(
            "; passed over {} unreadable item(s), e.g. #{}: {} (see `caseload check`)",
            self.count,
            first.id,
            first.unreadable_summary().unwrap_or_default()
        );
        match why {
            StoreError::NothingToClaim(m) => StoreError::NothingToClaim(format!("{m}{also}")),
            other => other,
        }
    }
}

/// Why the caller can take nothing from `scope` (one queue, or all).
fn explain_nothing(
    tx: &mut dyn Tx,
    scope: Option<&QueueSettings>,
    skip: &[i64],
) -> Result<StoreError> {
    let me = tx.actor().name.clone();
    let access = tx.access(&me)?;
    if let Some((_, why)) = &access.left {
        return Ok(StoreError::NotEligible(format!(
            "{me} has left ({why}) and takes no work"
        )));
    }
    let queues = match scope {
        Some(q) => vec![q.clone()],
        None => tx.queues()?,
    };
    let queues = queues.into_iter().filter(|q| access.takes.has(&q.name));
    let mut paused = Vec::new();
    for q in queues {
        // A running queue without a limit would have given a candidate.
        if q.paused {
            if tx.has_takeable(&q, skip)? {
                paused.push(q.name.clone());
            }
        } else if let Some(max) = q.max_per_user {
            let held = tx.held_count(&q.name, 0)?;
            if held >= max && tx.has_takeable(&q, skip)? {
                return Ok(StoreError::WipLimit {
                    queue: q.name.clone(),
                    held,
                });
            }
        }
    }
    if !paused.is_empty() {
        return Ok(StoreError::Paused { queues: paused });
    }
    Ok(StoreError::NothingToClaim(match scope {
        Some(q) => format!("no free items in queue '{}'", q.name),
        None => "no free items in any open queue".into(),
    }))
}

/// Finishes the caller's item (a fenced holder write, `op` planned as `w`) and takes the
/// next one `next` allows, in one transaction: one commit for both, each with its event.
/// When nothing can be taken (nothing free, paused, the WIP limit) the finish still
/// commits and the refusal comes back beside it; any other refusal (a lost lock, an
/// unknown queue) changes nothing.
pub(crate) fn finish_and_next(
    tx: &mut dyn Tx,
    id: i64,
    token: i64,
    op: HolderOp<'_>,
    w: &ItemWrite<'_>,
    next: &TakeNext,
) -> Result<AndNext> {
    if let Some(name) = &next.queue {
        // A mistyped queue, or one the caller may not take from, is refused before
        // anything is written.
        known_queue(tx, name)?;
        super::require_eligible(tx, Work::Take, name)?;
    }
    let finished = holder_write(tx, id, token, op, w)?;
    if finished == Applied::Already {
        // A retry whose first answer was lost: that first run took the next item already,
        // so taking another would leave the caller holding two.
        return Ok(AndNext {
            finished,
            next: Err(StoreError::NothingToClaim(format!(
                "#{id} was completed by you before, with the next item if there was one \
                 (see `caseload list --mine`)"
            ))),
        });
    }
    let next = match take_next(tx, next) {
        Ok(item) => Ok(item),
        Err(e) if e.exit_code() == crate::store::exit::NOTHING => Err(e),
        Err(e) => return Err(e),
    };
    Ok(AndNext { finished, next })
}
