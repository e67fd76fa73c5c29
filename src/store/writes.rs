//! [`Writes`]: every change to the queue, and its one implementation, for every
//! [`Backend`]: each write checks its input, then runs the backend-neutral code of
//! [`super::ops`] in one write transaction, the same on SQLite and PostgreSQL.

use super::error::{Result, StoreError};
use super::ops::Merged;
use super::ops::{self, HolderOp, ItemWrite, Tx};
use super::{AddOptions, Added, AndNext, Applied, Reads, TakeNext};
use crate::domain::fields::{Col, FieldError, Input};
use crate::domain::queue::validate_queue_name;
use crate::domain::queue_fields::{FieldChange, FieldDef, LineState, validate_name};
use crate::domain::sla::{Sla, SlaUpdate};
use crate::domain::texts::{CannedText, Purpose, Said};
use crate::domain::user::validate_user_name;
use crate::domain::{Item, ItemEdit, Millis, NewItem, QueueSettings, QueueUpdate, Role, SeenLock};
use serde_json::Value;

/// What a backend adds to its [`Reads`] to be a [`super::Store`]: write transactions
/// over [`Tx`] (the primitives [`super::ops`] is written over).
pub(crate) trait Backend: Reads {
    /// Why every change will be refused, when that is known up front (a read-only
    /// SQLite file, a PostgreSQL standby); `None` when changes may go through.
    fn refuses_writes(&self) -> Option<StoreError> {
        None
    }
    /// False when every change is refused up front.
    fn writable(&self) -> bool {
        self.refuses_writes().is_none()
    }
    /// Runs `f` in one write transaction: committed when it returns `Ok`, rolled back
    /// on every other path. A backend may run `f` again after a deadlock; `f` must not
    /// keep state across runs other than its result.
    fn transact(&mut self, f: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()>;
    /// Rebuilds the figures' tables (`holds`, the day summary, the queues' totals, the
    /// due counts) from the history: the repair for what `caseload check` finds wrong in
    /// them (derived tables only). Supervisors only. Returns how many holds.
    fn rebuild_figure_tables(&mut self) -> Result<u64>;
    /// Indexes up to `budget` rows for search in one short write transaction; returns
    /// how many (0 when the index is up to date, or the backend keeps none). A backend
    /// that indexes on insert (PostgreSQL) indexes only rows with an id above `above`.
    fn index_batch(&mut self, _above: i64, _budget: usize) -> Result<usize> {
        Ok(0)
    }
    /// How the search indexer beside an import paces itself here: the most rows per
    /// batch, and how long it waits once it has caught up with the rows committed.
    fn beside_pace(&self) -> (usize, std::time::Duration) {
        (500, std::time::Duration::from_millis(50))
    }
    /// Makes room for the search indexer beside an import, on the import's connection
    /// (SQLite: a smaller page cache, so that the process's memory stays what an import's
    /// was with the indexer after it).
    fn leave_room_for_an_indexer(&mut self) -> Result<()> {
        Ok(())
    }
}

/// Every change to the queue: the lock protocol's operations of [`super::ops`], each in
/// one write transaction with its events. Written once, for every backend (see
/// [`Backend`]).
pub trait Writes {
    /// Why every change will be refused, when known up front (a read-only file, a
    /// standby in recovery found at connect): a screen says so instead of offering work.
    fn read_only(&self) -> Option<StoreError>;
    /// Takes the next free (or expired) item in take order.
    fn take_next(&mut self, opts: &TakeNext) -> Result<Item>;
    /// Takes one chosen item; an item the caller already holds is returned (and its lock
    /// renewed).
    fn take(&mut self, id: i64) -> Result<Item>;
    /// Renews the caller's lock.
    fn renew(&mut self, id: i64, token: i64) -> Result<Item>;
    /// Returns the item to the pool.
    fn release(&mut self, id: i64, token: i64) -> Result<Applied>;
    /// Releases the item, recorded as skipped.
    fn skip(&mut self, id: i64, token: i64) -> Result<Applied>;
    /// Returns the item to the pool as [`Writes::release`] does, the reason given (if
    /// any) kept in the event with the code of the ready-made text chosen (a code the
    /// item's queue has no `release` text for is refused; with a code and no text, the
    /// ready-made text is the reason).
    fn release_said(&mut self, id: i64, token: i64, said: Said<'_>) -> Result<Applied>;
    /// Skips the item as [`Writes::skip`] does, with a reason as
    /// [`Writes::release_said`] takes one (`skip` texts).
    fn skip_said(&mut self, id: i64, token: i64, said: Said<'_>) -> Result<Applied>;
    /// Fails the item as [`Writes::fail`] does, with a reason as [`Writes::release_said`]
    /// takes one (`fail` texts; a reason is required, typed or ready-made).
    fn fail_said(&mut self, id: i64, token: i64, said: Said<'_>) -> Result<Applied>;
    /// Completes the item as [`Writes::complete_with`] does, the result as
    /// [`Writes::release_said`] takes a reason (`result` texts).
    fn complete_said(
        &mut self,
        id: i64,
        token: i64,
        result: Said<'_>,
        over: Option<&str>,
    ) -> Result<Applied>;
    /// Complete-and-next as [`Writes::complete_and_next_with`], the result as
    /// [`Writes::complete_said`] takes it.
    fn complete_and_next_said(
        &mut self,
        id: i64,
        token: i64,
        result: Said<'_>,
        over: Option<&str>,
        next: &TakeNext,
    ) -> Result<AndNext>;
    /// Saves the holder's working notes.
    fn save_notes(&mut self, id: i64, token: i64, notes: &str) -> Result<()>;
    /// Completes the item with an optional result. The same complete again (same token,
    /// same result) by the same holder is `Applied::Already`: a retry whose answer was
    /// lost.
    fn complete(&mut self, id: i64, token: i64, result: Option<&str>) -> Result<Applied>;
    /// Completes the item (fenced by `token`, as [`Writes::complete`]) and takes the next
    /// one `next` allows (as [`Writes::take_next`]) in ONE transaction: one commit, both
    /// events. Nothing left to take still completes (see [`AndNext`]).
    fn complete_and_next(
        &mut self,
        id: i64,
        token: i64,
        result: Option<&str>,
        next: &TakeNext,
    ) -> Result<AndNext>;
    /// Completes the item as [`Writes::complete`] does, after checking its fields: a
    /// record that breaks a rule is refused (`BrokenRules`, naming each field) unless a
    /// supervisor gives `over`, a reason recorded in the event with the fields broken.
    fn complete_with(
        &mut self,
        id: i64,
        token: i64,
        result: Option<&str>,
        over: Option<&str>,
    ) -> Result<Applied>;
    /// Complete-and-next as [`Writes::complete_and_next`], the fields checked as
    /// [`Writes::complete_with`] does.
    fn complete_and_next_with(
        &mut self,
        id: i64,
        token: i64,
        result: Option<&str>,
        over: Option<&str>,
        next: &TakeNext,
    ) -> Result<AndNext>;
    /// The holder sets fields (name, what was typed): each checked against its type and
    /// rules and stored in its canonical form, in one fenced write with one
    /// `field_changed` event per field that changed; returns those events' details
    /// (empty when every value was already so). A value that breaks a rule refuses them
    /// all (`BadValue`).
    fn set_fields(
        &mut self,
        id: i64,
        token: i64,
        values: &[(String, String)],
    ) -> Result<Vec<Value>>;
    /// The holder ticks a checklist's line (or marks it not done for a reason, or back to
    /// do): one fenced write with its `field_changed` event; `None` when it was so.
    fn tick(
        &mut self,
        id: i64,
        token: i64,
        field: &str,
        line: &str,
        state: &LineState,
    ) -> Result<Option<Value>>;
    /// Takes an item waiting for review (issue 29 §1): `id`, or the oldest submission
    /// (within `queue`) the caller may review — never one they completed or corrected a
    /// field of (`OwnWork` for such an `id`).
    fn take_review(&mut self, queue: Option<&str>, id: Option<i64>) -> Result<Item>;
    /// The reviewer accepts the item (fenced by `token`): done, with an optional comment.
    fn accept(&mut self, id: i64, token: i64, comment: Option<&str>) -> Result<Item>;
    /// The reviewer rejects the item (fenced by `token`) for a reason: back to its maker
    /// as an assignment (to the pool when the maker is no longer known).
    fn reject(&mut self, id: i64, token: i64, reason: &str) -> Result<Item>;
    /// Rejects as [`Writes::reject`] does, the reason as [`Writes::release_said`] takes
    /// one (`reject` texts: the chosen text's code is kept in the event; a reason is
    /// required, typed or ready-made).
    fn reject_said(&mut self, id: i64, token: i64, said: Said<'_>) -> Result<Item>;
    /// Parks the item until `until` for `reason` (a call-back): the lock released, the
    /// item kept for the caller (see `store::ops::park`). A retry of the same park is
    /// `Applied::Already`.
    fn park(&mut self, id: i64, token: i64, until: Millis, reason: &str) -> Result<Applied>;
    /// Ends a park: its owner takes the item (locked to them, returned); a supervisor
    /// returns it to the pool; anyone else is refused.
    fn wake(&mut self, id: i64) -> Result<Item>;
    /// Undoes the caller's own last complete, fail, release, skip or park of the item within
    /// the undo window, if nobody touched it since: the item as it was, locked to them
    /// under a new token (see `store::ops::undo`); else `UndoRefused`.
    fn undo(&mut self, id: i64) -> Result<Item>;
    /// Fails the item with a reason (a retry of the same fail is `Applied::Already`).
    fn fail(&mut self, id: i64, token: i64, reason: &str) -> Result<Applied>;
    /// Adds a comment to an item's thread (no lock needed, any state); returns its id.
    fn comment(&mut self, id: i64, text: &str) -> Result<i64>;
    /// Releases every expired lock, and returns every park whose grace has passed to the
    /// pool; returns how many of both.
    fn reap(&mut self) -> Result<usize>;
    /// Supervisor: returns a held item to the pool. With `seen`, only if its lock is
    /// still the one the supervisor saw, not even renewed since (else `LockChanged`);
    /// without, whatever lock it holds when the write lock is taken.
    fn unlock(&mut self, id: i64, seen: Option<SeenLock>, reason: &str) -> Result<()>;
    /// Supervisor: returns many held items to the pool in one transaction. Each entry is
    /// a lock as the supervisor saw it; an item whose lock changed since (renewed, taken
    /// over, completed, released) is left alone. Returns how many were unlocked.
    fn unlock_many(&mut self, locks: &[SeenLock], reason: &str) -> Result<usize>;
    /// Supervisor: gives the item's lock to another user; with `token`, only if its lock
    /// is still the one the supervisor saw (else `LockChanged`).
    fn reassign(&mut self, id: i64, token: Option<i64>, to: &str, reason: &str) -> Result<Item>;
    /// Supervisor: assigns the item to a known user: in their Mine, not takeable by
    /// others, no lock clock until they open it (take it); with `token`, only if its lock
    /// is still the one the supervisor saw (else `LockChanged`). Undone by `unlock`.
    fn assign(&mut self, id: i64, token: Option<i64>, to: &str, reason: &str) -> Result<Item>;
    /// Supervisor: reopens a done, failed or cancelled item, with a reason.
    fn reopen(&mut self, id: i64, reason: &str) -> Result<()>;
    /// Supervisor: changes an open item's priority, due time or queue.
    fn edit(&mut self, id: i64, edit: &ItemEdit) -> Result<Item>;
    /// Supervisor: reopens a failed (or cancelled) item.
    fn requeue(&mut self, id: i64) -> Result<()>;
    /// Supervisor: cancels an open item.
    fn cancel(&mut self, id: i64, reason: &str) -> Result<()>;
    /// Merges open item `id` into `into` as a duplicate: its holder (fenced by `token`;
    /// without one, the caller's current lock) or a supervisor. See `ops::merge`.
    fn merge(
        &mut self,
        id: i64,
        into: i64,
        token: Option<i64>,
        reason: Option<&str>,
    ) -> Result<Merged>;
    /// Remembers that `a` and `b` are not the same, so the pair is never offered again.
    fn not_duplicate(&mut self, a: i64, b: i64) -> Result<()>;
    /// Supervisor: changes a queue's settings (creating the queue when `create`).
    fn set_queue(
        &mut self,
        name: &str,
        update: &QueueUpdate,
        create: bool,
    ) -> Result<QueueSettings>;
    /// Supervisor: defines field `name` of `queue`, or changes or moves it (audited);
    /// returns the definition as it is now.
    fn define_field(&mut self, queue: &str, name: &str, change: &FieldChange) -> Result<FieldDef>;
    /// Supervisor: deletes field `name` of `queue` (audited); items keep their values.
    fn delete_field(&mut self, queue: &str, name: &str) -> Result<()>;
    /// Supervisor: adds a ready-made text to `queue` for `purpose` under `code` (else one
    /// made from the text), or gives a code the queue has a new text (audited); returns
    /// it as stored.
    fn add_text(
        &mut self,
        queue: &str,
        purpose: Purpose,
        text: &str,
        code: Option<&str>,
    ) -> Result<CannedText>;
    /// Supervisor: deletes the ready-made text of `queue` whose code (else text) is `key`
    /// (audited); returns what was deleted.
    fn delete_text(&mut self, queue: &str, key: &str) -> Result<CannedText>;
    /// Supervisor: changes a queue's SLA and its calendar (audited); returns it as it is
    /// now (`None`: removed).
    fn set_sla(&mut self, queue: &str, update: &SlaUpdate) -> Result<Option<Sla>>;
    /// Supervisor: changes a queue's settings (creating it when `create`) and its SLA in
    /// one transaction: both or neither. An SLA already as `sla` asks is left as it is
    /// (the settings still change); returns both as they are now.
    fn set_queue_and_sla(
        &mut self,
        name: &str,
        update: &QueueUpdate,
        create: bool,
        sla: &SlaUpdate,
    ) -> Result<(QueueSettings, Option<Sla>)>;
    /// Supervisor: renames a queue, moving its settings and items (locks stay held);
    /// returns how many items moved.
    fn rename_queue(&mut self, from: &str, to: &str) -> Result<u64>;
    /// Supervisor: deletes a queue that holds no items at all.
    fn delete_queue(&mut self, name: &str) -> Result<()>;
    /// Adds items in one short transaction; returns what each became, in order (a known
    /// request id gives the existing item, `created: false`). A queue not known yet is
    /// created when `opts.create_queues` (and `default`, where items without a queue go,
    /// always), else the whole batch is refused (`UnknownQueue`). With `opts.kept`, each
    /// item keeps its id (see [`Writes::keep_ids`]).
    fn add_items(&mut self, items: &[NewItem], opts: AddOptions<'_>) -> Result<Vec<Added>>;
    /// Supervisor: starts an import that keeps the ids `ids.0..=ids.1` by adding `last`
    /// (which keeps `ids.1`, the largest), so that items added meanwhile get ids above
    /// them; refused when an item got an id in the range after `seen` (the largest id
    /// when the file's ids were checked). Returns what `last` became and the time the
    /// import began.
    fn keep_ids(&mut self, last: &NewItem, ids: (i64, i64), seen: i64) -> Result<(Added, Millis)>;
    /// Supervisor: sets a user's role (audited: who, real identity, old and new role).
    fn set_role(&mut self, user: &str, role: Role) -> Result<()>;
    /// Supervisor: binds the user name `user` to a login (OS login on SQLite, database
    /// role on PostgreSQL) that may then use it, or unbinds it (`None`); audited.
    fn set_login(&mut self, user: &str, login: Option<&str>) -> Result<()>;
    /// Supervisor: changes a person in one transaction (issue 29 §2–§4): which queues they
    /// may take from and review in, their role (a lead needs a list of queues), their
    /// login binding, leaving (their locks, assignments and parked items back to the pool,
    /// each with an event; the binding removed; marked as left) or back. Each part
    /// audited.
    fn change_user(&mut self, user: &str, change: &ops::UserChange) -> Result<ops::UserChanged>;
    /// Records that the caller is here now; returns when they were last seen.
    fn touch_last_seen(&mut self) -> Result<Option<Millis>>;
    /// Rebuilds the figures' tables (`holds`, the day summary, the queues' totals, the
    /// due counts) from the history ([`Backend::rebuild_figure_tables`]), then the
    /// duplicate keys from the items' params, in a transaction of their own; returns how
    /// many holds. Supervisors only.
    fn rebuild_figures(&mut self) -> Result<u64>;
    /// Brings the search index closer to date: indexes up to `budget` items added or
    /// changed since it was last brought up to date, in one short write transaction;
    /// returns how many (0 when it is up to date, the file is read-only or the backend
    /// keeps no such index). Searches are right either way: what is not indexed yet is
    /// scanned.
    fn index_search(&mut self, budget: usize) -> Result<usize>;
    /// [`Writes::index_search`] of the items with an id above `above` only (an import's
    /// own rows, for its indexer beside it; rows others left unindexed are an idle
    /// TUI's).
    fn index_search_above(&mut self, above: i64, budget: usize) -> Result<usize>;
    /// How the search indexer beside an import paces itself on this backend: the most
    /// rows per batch, and how long it waits once it has caught up with the rows
    /// committed (`crate::import::index_beside`).
    fn beside_pace(&self) -> (usize, std::time::Duration);
    /// Makes room for the search indexer beside an import (`crate::import::index_beside`)
    /// on this, the import's connection.
    fn leave_room_for_an_indexer(&mut self) -> Result<()>;
}

/// A value refused for `field`, typed (see [`StoreError::Field`]).
fn field_error(field: Input, problem: String) -> StoreError {
    StoreError::Field(FieldError::new(field, problem))
}

/// Runs `f` in one write transaction of `b` and returns what it gave.
fn write<B: Backend, T>(b: &mut B, mut f: impl FnMut(&mut dyn Tx) -> Result<T>) -> Result<T> {
    let mut out = None;
    b.transact(&mut |tx| {
        out = Some(f(tx)?);
        super::fault::panic_if_asked();
        Ok(())
    })?;
    out.ok_or_else(|| StoreError::Database("the transaction gave no result".into()))
}

/// A holder's write, checked before the transaction starts.
fn holder<B: Backend>(b: &mut B, id: i64, token: i64, op: HolderOp<'_>) -> Result<Applied> {
    let w = op.plan(token)?;
    write(b, |tx| ops::holder_write(tx, id, token, op, &w))
}

/// The holder's finish that says something for `purpose` (release, skip, fail).
fn said_op(purpose: Purpose, said: Said<'_>) -> HolderOp<'_> {
    match purpose {
        Purpose::Skip => HolderOp::Skip(said),
        Purpose::Fail => HolderOp::Fail(said),
        _ => HolderOp::Release(said),
    }
}

/// A holder's release, skip or fail that says something: with a ready-made text's code,
/// the text is learnt (and the code checked) in the transaction.
fn said<B: Backend>(
    b: &mut B,
    id: i64,
    token: i64,
    purpose: Purpose,
    said: Said<'_>,
) -> Result<Applied> {
    if said.code.is_none() {
        return holder(b, id, token, said_op(purpose, said));
    }
    if said.text.is_some() {
        said_op(purpose, said).plan(token)?;
    }
    write(b, |tx| {
        let text = ops::said_text(tx, id, purpose, said)?;
        let op = said_op(
            purpose,
            Said {
                text: text.as_deref(),
                code: said.code,
            },
        );
        let w = op.plan(token)?;
        ops::holder_write(tx, id, token, op, &w)
    })
}

/// A complete (its result checked first), in one write transaction: the result's text
/// learnt from its code, the record's fields checked (`over`: a supervisor's reason to
/// complete all the same), then `then` writes it.
fn completing<B: Backend, T>(
    b: &mut B,
    id: i64,
    token: i64,
    result: Said<'_>,
    over: Option<&str>,
    then: impl Fn(&mut dyn Tx, HolderOp<'_>, &ItemWrite<'_>) -> Result<T>,
) -> Result<T> {
    HolderOp::Complete(result).plan(token)?;
    write(b, |tx| {
        let text = ops::said_text(tx, id, Purpose::Result, result)?;
        let op = HolderOp::Complete(Said {
            text: text.as_deref(),
            code: result.code,
        });
        let w = op.plan(token)?;
        let (judge, queue) = tx.judging(id, token)?;
        let w = ops::check_complete(tx, id, token, &w, over, judge)?;
        let (op, w) = ops::route(tx, id, op, w, queue)?;
        then(tx, op, &w)
    })
}

impl<B: Backend> Writes for B {
    fn read_only(&self) -> Option<StoreError> {
        self.refuses_writes()
    }

    fn add_items(&mut self, items: &[NewItem], opts: AddOptions<'_>) -> Result<Vec<Added>> {
        for it in items {
            it.validate().map_err(StoreError::Field)?;
        }
        write(self, |tx| ops::add_items(tx, items, opts))
    }

    fn keep_ids(&mut self, last: &NewItem, ids: (i64, i64), seen: i64) -> Result<(Added, Millis)> {
        last.validate().map_err(StoreError::Field)?;
        write(self, |tx| ops::keep_ids(tx, last, ids, seen))
    }

    fn rename_queue(&mut self, from: &str, to: &str) -> Result<u64> {
        validate_queue_name(to).map_err(|m| StoreError::Invalid(format!("the new {m}")))?;
        write(self, |tx| ops::rename_queue(tx, from, to))
    }

    fn delete_queue(&mut self, name: &str) -> Result<()> {
        write(self, |tx| ops::delete_queue(tx, name))
    }

    fn take_next(&mut self, opts: &TakeNext) -> Result<Item> {
        write(self, |tx| ops::take_next(tx, opts))
    }

    fn take(&mut self, id: i64) -> Result<Item> {
        write(self, |tx| ops::take(tx, id))
    }

    fn take_review(&mut self, queue: Option<&str>, id: Option<i64>) -> Result<Item> {
        write(self, |tx| ops::take_review(tx, queue, id))
    }

    fn accept(&mut self, id: i64, token: i64, comment: Option<&str>) -> Result<Item> {
        if let Some(c) = comment {
            ops::check_comment(c)?;
        }
        write(self, |tx| ops::accept(tx, id, token, comment))
    }

    fn reject(&mut self, id: i64, token: i64, reason: &str) -> Result<Item> {
        let reason = ops::required_reason(reason)?;
        write(self, |tx| ops::reject(tx, id, token, reason, None))
    }

    fn reject_said(&mut self, id: i64, token: i64, said: Said<'_>) -> Result<Item> {
        if said.code.is_none() {
            return self.reject(id, token, said.text.unwrap_or_default());
        }
        if let Some(t) = said.text {
            ops::required_reason(t)?;
        }
        write(self, |tx| {
            let text = ops::said_text(tx, id, Purpose::Reject, said)?;
            let reason = ops::required_reason(text.as_deref().unwrap_or_default())?;
            ops::reject(tx, id, token, reason, said.code)
        })
    }

    fn renew(&mut self, id: i64, token: i64) -> Result<Item> {
        holder(self, id, token, HolderOp::Renew)?;
        self.item(id)
    }

    fn release(&mut self, id: i64, token: i64) -> Result<Applied> {
        self.release_said(id, token, Said::NOTHING)
    }

    fn skip(&mut self, id: i64, token: i64) -> Result<Applied> {
        self.skip_said(id, token, Said::NOTHING)
    }

    fn release_said(&mut self, id: i64, token: i64, s: Said<'_>) -> Result<Applied> {
        said(self, id, token, Purpose::Release, s)
    }

    fn skip_said(&mut self, id: i64, token: i64, s: Said<'_>) -> Result<Applied> {
        said(self, id, token, Purpose::Skip, s)
    }

    fn fail_said(&mut self, id: i64, token: i64, s: Said<'_>) -> Result<Applied> {
        said(self, id, token, Purpose::Fail, s)
    }

    fn save_notes(&mut self, id: i64, token: i64, notes: &str) -> Result<()> {
        let w = HolderOp::SaveNotes(notes).plan(token)?;
        write(self, |tx| ops::save_notes(tx, id, token, &w))
    }

    fn complete(&mut self, id: i64, token: i64, result: Option<&str>) -> Result<Applied> {
        self.complete_with(id, token, result, None)
    }

    fn complete_with(
        &mut self,
        id: i64,
        token: i64,
        result: Option<&str>,
        over: Option<&str>,
    ) -> Result<Applied> {
        let said = Said {
            text: result,
            code: None,
        };
        self.complete_said(id, token, said, over)
    }

    fn complete_said(
        &mut self,
        id: i64,
        token: i64,
        result: Said<'_>,
        over: Option<&str>,
    ) -> Result<Applied> {
        let over = over.map(ops::required_reason).transpose()?;
        completing(self, id, token, result, over, |tx, op, w| {
            ops::holder_write(tx, id, token, op, w)
        })
    }

    fn complete_and_next(
        &mut self,
        id: i64,
        token: i64,
        result: Option<&str>,
        next: &TakeNext,
    ) -> Result<AndNext> {
        self.complete_and_next_with(id, token, result, None, next)
    }

    fn complete_and_next_with(
        &mut self,
        id: i64,
        token: i64,
        result: Option<&str>,
        over: Option<&str>,
        next: &TakeNext,
    ) -> Result<AndNext> {
        let said = Said {
            text: result,
            code: None,
        };
        self.complete_and_next_said(id, token, said, over, next)
    }

    fn complete_and_next_said(
        &mut self,
        id: i64,
        token: i64,
        result: Said<'_>,
        over: Option<&str>,
        next: &TakeNext,
    ) -> Result<AndNext> {
        let over = over.map(ops::required_reason).transpose()?;
        completing(self, id, token, result, over, |tx, op, w| {
            ops::finish_and_next(tx, id, token, op, w, next)
        })
    }

    fn set_fields(
        &mut self,
        id: i64,
        token: i64,
        values: &[(String, String)],
    ) -> Result<Vec<Value>> {
        if values.is_empty() {
            return Err(StoreError::Invalid(
                "nothing to set: give NAME=VALUE".into(),
            ));
        }
        for (_, v) in values {
            crate::domain::item::check_text("value", v).map_err(StoreError::Invalid)?;
        }
        write(self, |tx| ops::set_fields(tx, id, token, values))
    }

    fn tick(
        &mut self,
        id: i64,
        token: i64,
        field: &str,
        line: &str,
        state: &LineState,
    ) -> Result<Option<Value>> {
        let state = match state {
            LineState::NotDone(r) => LineState::NotDone(ops::required_reason(r)?.to_string()),
            other => other.clone(),
        };
        write(self, |tx| ops::tick(tx, id, token, field, line, &state))
    }

    fn fail(&mut self, id: i64, token: i64, reason: &str) -> Result<Applied> {
        let s = Said {
            text: Some(reason),
            code: None,
        };
        self.fail_said(id, token, s)
    }

    fn park(&mut self, id: i64, token: i64, until: Millis, reason: &str) -> Result<Applied> {
        let op = HolderOp::Park { until, reason };
        let w = op.plan(token)?;
        write(self, |tx| {
            ops::check_until(tx, until)?;
            ops::holder_write(tx, id, token, op, &w)
        })
    }

    fn wake(&mut self, id: i64) -> Result<Item> {
        write(self, |tx| ops::wake(tx, id))
    }

    fn undo(&mut self, id: i64) -> Result<Item> {
        write(self, |tx| ops::undo(tx, id))
    }

    fn comment(&mut self, id: i64, text: &str) -> Result<i64> {
        ops::check_comment(text)?;
        write(self, |tx| ops::comment(tx, id, text))
    }

    fn reap(&mut self) -> Result<usize> {
        const BATCH: usize = 500;
        let mut total = 0;
        loop {
            // Short transactions: others keep claiming between them.
            let n = write(self, |tx| {
                Ok(tx.reap(BATCH)? + ops::return_parked(tx, BATCH)?)
            })?;
            total += n;
            if n < BATCH {
                return Ok(total);
            }
        }
    }

    fn unlock(&mut self, id: i64, seen: Option<SeenLock>, reason: &str) -> Result<()> {
        let reason = ops::required_reason(reason)?;
        write(self, |tx| ops::unlock(tx, id, seen, reason))
    }

    fn unlock_many(&mut self, locks: &[SeenLock], reason: &str) -> Result<usize> {
        let reason = ops::required_reason(reason)?;
        write(self, |tx| ops::unlock_many(tx, locks, reason))
    }

    fn reassign(&mut self, id: i64, token: Option<i64>, to: &str, reason: &str) -> Result<Item> {
        let reason = ops::required_reason(reason)?;
        validate_user_name(to).map_err(|m| field_error(Input::To, m))?;
        write(self, |tx| ops::reassign(tx, id, token, to, reason))
    }

    fn assign(&mut self, id: i64, token: Option<i64>, to: &str, reason: &str) -> Result<Item> {
        let reason = ops::required_reason(reason)?;
        validate_user_name(to).map_err(|m| field_error(Input::To, m))?;
        write(self, |tx| ops::assign(tx, id, token, to, reason))
    }

    fn reopen(&mut self, id: i64, reason: &str) -> Result<()> {
        let reason = ops::required_reason(reason)?;
        write(self, |tx| ops::reopen(tx, id, reason))
    }

    fn edit(&mut self, id: i64, edit: &ItemEdit) -> Result<Item> {
        if edit.is_empty() {
            return Err(StoreError::Invalid(
                "nothing to change: give --priority, --due or --queue".into(),
            ));
        }
        if let Some(crate::domain::fields::Value::Text(Some(q))) = edit.value(Col::Queue) {
            validate_queue_name(q).map_err(|m| field_error(Input::Col(Col::Queue), m))?;
        }
        write(self, |tx| ops::edit(tx, id, edit))
    }

    fn requeue(&mut self, id: i64) -> Result<()> {
        write(self, |tx| ops::requeue(tx, id))
    }

    fn rebuild_figures(&mut self) -> Result<u64> {
        // The keys after the figures, in a transaction of their own: on PostgreSQL the
        // figures' repair holds off event inserts for moments, and writers held off that
        // way may hold their items' rows, which the keys' inserts lock (their foreign
        // key): one transaction was a deadlock.
        let holds = self.rebuild_figure_tables()?;
        write(self, ops::rebuild_keys)?;
        Ok(holds)
    }

    fn cancel(&mut self, id: i64, reason: &str) -> Result<()> {
        let reason = ops::required_reason(reason)?;
        write(self, |tx| ops::cancel(tx, id, reason))
    }

    fn merge(
        &mut self,
        id: i64,
        into: i64,
        token: Option<i64>,
        reason: Option<&str>,
    ) -> Result<Merged> {
        write(self, |tx| ops::merge(tx, id, into, token, reason))
    }

    fn not_duplicate(&mut self, a: i64, b: i64) -> Result<()> {
        write(self, |tx| ops::not_duplicate(tx, a, b))
    }

    fn set_queue(
        &mut self,
        name: &str,
        update: &QueueUpdate,
        create: bool,
    ) -> Result<QueueSettings> {
        validate_queue_name(name).map_err(|m| StoreError::Invalid(format!("queue {m}")))?;
        write(self, |tx| ops::set_queue(tx, name, update, create))
    }

    fn define_field(&mut self, queue: &str, name: &str, change: &FieldChange) -> Result<FieldDef> {
        validate_name(name).map_err(StoreError::Invalid)?;
        write(self, |tx| ops::define_field(tx, queue, name, change))
    }

    fn delete_field(&mut self, queue: &str, name: &str) -> Result<()> {
        write(self, |tx| ops::delete_field(tx, queue, name))
    }

    fn add_text(
        &mut self,
        queue: &str,
        purpose: Purpose,
        text: &str,
        code: Option<&str>,
    ) -> Result<CannedText> {
        crate::domain::texts::check_canned(text).map_err(StoreError::Invalid)?;
        if let Some(c) = code {
            crate::domain::texts::validate_code(c).map_err(StoreError::Invalid)?;
        }
        write(self, |tx| ops::add_text(tx, queue, purpose, text, code))
    }

    fn set_sla(&mut self, queue: &str, update: &SlaUpdate) -> Result<Option<Sla>> {
        if update.is_empty() {
            return Err(StoreError::Invalid("nothing to change in the SLA".into()));
        }
        write(self, |tx| ops::set_sla(tx, queue, update))
    }

    fn set_queue_and_sla(
        &mut self,
        name: &str,
        update: &QueueUpdate,
        create: bool,
        sla: &SlaUpdate,
    ) -> Result<(QueueSettings, Option<Sla>)> {
        validate_queue_name(name).map_err(StoreError::Invalid)?;
        if sla.is_empty() {
            return Err(StoreError::Invalid("nothing to change in the SLA".into()));
        }
        write(self, |tx| {
            let q = ops::set_queue(tx, name, update, create)?;
            let s = ops::change_sla(tx, name, sla)?;
            Ok((q, s))
        })
    }

    fn delete_text(&mut self, queue: &str, key: &str) -> Result<CannedText> {
        write(self, |tx| ops::delete_text(tx, queue, key))
    }

    fn set_role(&mut self, user: &str, role: Role) -> Result<()> {
        validate_user_name(user).map_err(|m| StoreError::Invalid(format!("user {m}")))?;
        write(self, |tx| ops::set_role(tx, user, role))
    }

    fn change_user(&mut self, user: &str, c: &ops::UserChange) -> Result<ops::UserChanged> {
        validate_user_name(user).map_err(|m| StoreError::Invalid(format!("user {m}")))?;
        if let Some(Some(l)) = &c.login {
            validate_user_name(l).map_err(|m| field_error(Input::Login, m))?;
        }
        if let Some(why) = &c.leaving {
            ops::required_reason(why)?;
        }
        write(self, |tx| ops::change_user(tx, user, c))
    }

    fn set_login(&mut self, user: &str, login: Option<&str>) -> Result<()> {
        validate_user_name(user).map_err(|m| StoreError::Invalid(format!("user {m}")))?;
        if let Some(l) = login {
            validate_user_name(l).map_err(|m| field_error(Input::Login, m))?;
        }
        write(self, |tx| ops::set_login(tx, user, login))
    }

    fn touch_last_seen(&mut self) -> Result<Option<Millis>> {
        if !self.writable() {
            return Ok(None);
        }
        write(self, |tx| tx.swap_last_seen())
    }

    fn index_search(&mut self, budget: usize) -> Result<usize> {
        self.index_search_above(0, budget)
    }

    fn index_search_above(&mut self, above: i64, budget: usize) -> Result<usize> {
        if !self.writable() {
            return Ok(0);
        }
        self.index_batch(above, budget)
    }

    fn beside_pace(&self) -> (usize, std::time::Duration) {
        Backend::beside_pace(self)
    }

    fn leave_room_for_an_indexer(&mut self) -> Result<()> {
        Backend::leave_room_for_an_indexer(self)
    }
}
