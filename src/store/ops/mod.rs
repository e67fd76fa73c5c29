//! The lock protocol's operations, written once for both backends over [`Tx`]: the
//! primitives one write transaction offers. A backend implements the primitives with its
//! own SQL (PostgreSQL folds some into one-round-trip statements); the rules — what may be
//! taken, in which order refusals are given, how a lost lock is explained, which event
//! each change writes — live here.

mod dedupe;
mod fields;
mod holder;
mod park;
mod review;
mod sla;
mod supervise;
mod take;
mod teams;
mod texts;
mod undo;

pub use dedupe::Merged;
pub(crate) use dedupe::{merge, not_duplicate};
pub(crate) use fields::{
    Checked, DefsCache, Judge, check_complete, define_field, delete_field, digest, seal_added,
    set_fields, tick,
};
pub(crate) use holder::HolderOp;
pub(crate) use holder::{check_comment, holder_write, required_reason, save_notes};
pub(crate) use park::{check_until, return_parked, wake};
pub(crate) use review::{accept, reject, route, take_review};
pub(crate) use sla::{change_sla, set_sla};
pub(crate) use supervise::{
    assign, cancel, delete_queue, edit, reassign, rebuild_keys, rename_queue, reopen, requeue,
    set_login, set_queue, set_role, unlock, unlock_many,
};
pub(crate) use take::PassedOver;
pub(crate) use take::{finish_and_next, take, take_next};
pub use teams::{UserChange, UserChanged};
pub(crate) use teams::{change_user, require_eligible, require_supervisor_of};
pub(crate) use texts::{add_text, delete_text, said_text};
pub(crate) use undo::undo;

use std::sync::Arc;

use serde_json::{Value, json};

use super::error::{Result, StoreError};
use super::{AddOptions, Added, TakeNext};
use crate::domain::duplicates::Pair;
use crate::domain::queue::DEFAULT_QUEUE;
use crate::domain::queue_fields::FieldDef;
use crate::domain::sla::Sla;
use crate::domain::texts::CannedText;
use crate::domain::user::may_act_as;
use crate::domain::{
    Access, Actor, AuditNote, Event, EventKind, Item, ItemState, Millis, NewItem, QueueSettings,
    Queues, RealIdentity, Role, TakeOrder,
};

/// The id an imported item keeps, and its creation time: the time the import began, for
/// every item of the import, so that they are taken in the order of their ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kept {
    pub id: i64,
    pub created_at: Millis,
}

/// One write to an item: a SET clause applied where `id` matches and the fence holds,
/// and the event it writes in the same transaction. The SQL fragments come from
/// [`crate::store::sql`]; `:now`, `:me`, `:value` and `:token` are bound by the backend.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ItemWrite<'a> {
    pub set: &'a str,
    pub fence: &'static str,
    pub value: Option<&'a str>,
    /// A number the write uses (`:arg`): a park's wake time, an undo's last event id.
    pub arg: Option<i64>,
    pub kind: EventKind,
    pub detail: Value,
}

/// What a holder's field save works on (see [`Tx::field_record`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldRecord {
    pub queue: String,
    pub params: String,
    /// True while the actor holds the item under the token asked about (open or in their
    /// review): the fence of [`crate::store::sql::FENCE_HOLDER_OR_REVIEWER`].
    pub held: bool,
}

/// What every write transaction knows: its time, read once after the write lock is held
/// (SQLite) or at `BEGIN` from the server's clock (PostgreSQL), who acts, and the real
/// identity behind that name (learnt by the backend, never from a flag).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TxCtx<'a> {
    pub now: Millis,
    pub actor: &'a Actor,
    pub real: &'a RealIdentity,
}

/// An item take-next may claim: its id and its current (expired) holder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Claimable {
    pub id: i64,
    pub holder: Option<String>,
    /// Its lock token now (the claim gives it the next one).
    pub token: i64,
    /// What its place in take order is decided by (across queues of different orders).
    pub due_at: Option<i64>,
    pub priority: i64,
    pub created_at: i64,
}

/// The primitives of one write transaction.
pub(crate) trait Tx {
    /// The transaction's time and actor.
    fn ctx(&self) -> TxCtx<'_>;
    /// The transaction's time.
    fn now(&self) -> Millis {
        self.ctx().now
    }
    /// Who is acting.
    fn actor(&self) -> &Actor {
        self.ctx().actor
    }

    /// One item, as stored.
    fn item(&mut self, id: i64) -> Result<Option<Item>>;
    /// One item, its row held until the transaction ends (PostgreSQL `FOR UPDATE`; on
    /// SQLite the write lock already holds everything).
    fn item_for_update(&mut self, id: i64) -> Result<Option<Item>>;
    /// One queue's settings.
    fn queue(&mut self, name: &str) -> Result<Option<QueueSettings>>;
    /// Every queue's settings, by name.
    fn queues(&mut self) -> Result<Vec<QueueSettings>>;
    /// A user's role (staff when unknown).
    fn role_of(&mut self, user: &str) -> Result<Role>;
    /// What a user may do and where (staff taking from every queue when unknown).
    fn access(&mut self, user: &str) -> Result<Access>;
    /// Writes which queues `user` may take from and review in (creating the row), with its
    /// audit record. PostgreSQL writes both through a function that checks the session's
    /// role again.
    fn put_access(
        &mut self,
        user: &str,
        takes: &Queues,
        reviews: &Queues,
        note: &AuditNote,
    ) -> Result<()>;
    /// Marks `user` as leaving for `reason` (their login binding removed), or back (`None`),
    /// with one audit record (`note.new` says what was done to their work).
    fn put_leaving(&mut self, user: &str, reason: Option<&str>, note: &AuditNote) -> Result<()>;
    /// The items `user` holds a lock on (open, assignments included, or in review), by id;
    /// PostgreSQL holds their rows.
    fn held_by(&mut self, user: &str) -> Result<Vec<Item>>;
    /// The login (OS login or database role) a user name is bound to, if any.
    fn login_of(&mut self, user: &str) -> Result<Option<String>>;
    /// How many supervisors there are besides `user`; on PostgreSQL their rows are held,
    /// so two supervisors demoting themselves at once cannot leave none.
    fn supervisors_besides(&mut self, user: &str) -> Result<i64>;
    /// How many items the actor holds in `queue`, not counting item `except`.
    fn held_count(&mut self, queue: &str, except: i64) -> Result<i64>;
    /// True when `queue` has an open item that is free or whose lock has expired, other
    /// than those in `skip` (whatever its pause or the actor's limit).
    fn has_takeable(&mut self, queue: &QueueSettings, skip: &[i64]) -> Result<bool>;
    /// The item's latest event of one of the kinds `of` (by `by` when given).
    fn last_event(&mut self, id: i64, of: &[EventKind], by: Option<&str>) -> Result<Option<Event>>;

    /// Serialises the actor's claims in a WIP-limited `queue` until the transaction ends
    /// (PostgreSQL: an advisory lock; SQLite: the write lock already does).
    fn serialise_claims(&mut self, queue: &str) -> Result<()>;
    /// The first item the actor may take, in take order, within `next`'s queue (all when
    /// none) and other than its skipped ones. Items whose columns cannot be read are
    /// stepped past and added to `passed` (SQLite: text another program stored;
    /// PostgreSQL checks every text it stores). PostgreSQL holds the row and skips rows
    /// others are writing.
    /// `order` is the queue's take order (`Due` only with a queue).
    fn candidate(
        &mut self,
        next: &TakeNext,
        order: TakeOrder,
        passed: &mut PassedOver,
    ) -> Result<Option<Claimable>>;
    /// [`Tx::candidate`] for `next` in one lookup when the take needs nothing else done
    /// first: no park of the actor's has woken, no park's grace has passed, and the take
    /// order is one walk by priority (`next`'s queue orders so; without one, every queue
    /// does and the actor may take from all). `None` otherwise, or when nothing is
    /// takeable: [`take::take_next`] then goes the long way, which decides and explains.
    /// For a backend where every lookup is a round trip to a server (PostgreSQL); the
    /// default always answers `None`.
    fn first_takeable(&mut self, next: &TakeNext) -> Result<Option<Claimable>> {
        let _ = next;
        Ok(None)
    }
    /// True when [`Tx::candidate`] skips rows other transactions are writing (PostgreSQL's
    /// `SKIP LOCKED`) rather than waiting for them: a search that found nothing may then
    /// have passed over a free item someone was editing, and looks again after a moment.
    /// (SQLite has one writer at a time: nothing is ever skipped, and a transaction must
    /// never sleep while it holds the write lock.)
    fn skips_rows_being_written(&self) -> bool {
        false
    }
    /// The claim: one conditional UPDATE (open, free or expired, its token still `token`,
    /// queue not paused, within the WIP limit) that gives it the token `token + 1`, and
    /// the event [`take`] decided (`kind`, `detail`). `None` when the condition does not
    /// hold (nothing written).
    fn claim(
        &mut self,
        id: i64,
        token: i64,
        kind: EventKind,
        detail: &Value,
    ) -> Result<Option<Item>>;
    /// Applies `w` to item `id` where its fence holds for `token`, with its event; false
    /// when the fence did not hold (nothing written).
    fn write_item(&mut self, id: i64, token: i64, w: &ItemWrite<'_>) -> Result<bool>;
    /// Appends a comment by the actor to item `id`'s thread; returns its id.
    fn insert_comment(&mut self, id: i64, text: &str) -> Result<i64>;
    /// The names in `users`, sorted.
    fn user_names(&mut self) -> Result<Vec<String>>;
    /// True when `user` is an actor of any event.
    fn has_acted(&mut self, user: &str) -> Result<bool>;
    /// Appends an event.
    fn insert_event(&mut self, id: i64, kind: EventKind, detail: &Value) -> Result<()>;
    /// Creates the queue row on first use, with the default settings.
    fn ensure_queue(&mut self, name: &str) -> Result<()>;
    /// Inserts an item (its queue exists), with a new id and created now, or as `keep`
    /// says (an import that keeps ids; the id must be free); a known request id gives the
    /// existing item instead. No `created` event is written: the row records who created
    /// it, when and from which OS login, and history shows that as the item's first event.
    fn insert_item(&mut self, item: &NewItem, keep: Option<Kept>) -> Result<Added>;
    /// Inserts new items as [`Tx::insert_item`] with no `keep` does, in order, with the
    /// same outcome for each; a backend may do it in fewer statements (SQLite does).
    fn insert_items(&mut self, items: &[NewItem]) -> Result<Vec<Added>> {
        items.iter().map(|it| self.insert_item(it, None)).collect()
    }
    /// The items this transaction inserts from now on are left out of the search index
    /// until [`crate::store::Writes::index_search`] reaches them (searches scan them
    /// meanwhile); a backend that indexes on insert (PostgreSQL) stops doing so.
    fn search_later(&mut self) -> Result<()> {
        Ok(())
    }
    /// How many items have an id above `above` and within `ids`.
    fn items_above(&mut self, above: i64, ids: (i64, i64)) -> Result<u64>;
    /// Moves the counter new ids come from so that the next new item's id is above `max`
    /// (never back).
    fn move_ids_past(&mut self, max: i64) -> Result<()>;
    /// Writes a queue's settings (creating the row) with its audit record. PostgreSQL
    /// writes both through a function that checks the session's role again.
    fn put_queue(&mut self, q: &QueueSettings, note: &AuditNote) -> Result<()>;
    /// A queue's field definitions, in their order on screen.
    fn fields(&mut self, queue: &str) -> Result<Vec<FieldDef>>;
    /// [`Tx::fields`], `version` being the definitions' version this transaction read
    /// ([`Tx::fields_checked`]), if it read it; shared, so that a backend that keeps them
    /// (SQLite) hands them out without copying twenty definitions per save.
    fn fields_at(&mut self, queue: &str, version: Option<i64>) -> Result<Arc<[FieldDef]>> {
        let _ = version;
        Ok(self.fields(queue)?.into())
    }
    /// The field definitions of item `id`'s queue, in order (none when it has none, or
    /// there is no such item): one lookup, so that completing an item of a queue without
    /// fields costs one query and no more.
    fn item_fields(&mut self, id: i64) -> Result<Vec<FieldDef>>;
    /// Writes field `def` of `queue` (creating it), every field of the queue placed as
    /// `order` names them (positions 1, 2, …), with its audit record. PostgreSQL writes
    /// both through a function that checks the session's role again.
    fn put_field(
        &mut self,
        queue: &str,
        def: &FieldDef,
        order: &[String],
        note: &AuditNote,
    ) -> Result<()>;
    /// Deletes field `name` of `queue` (the fields after it move up one), with its audit
    /// record.
    fn drop_field(&mut self, queue: &str, name: &str, note: &AuditNote) -> Result<()>;
    /// A queue's SLA, if it has one.
    fn sla(&mut self, queue: &str) -> Result<Option<Sla>>;
    /// Writes queue `queue`'s SLA (`None` removes it) with its audit record. PostgreSQL
    /// writes both through a function that checks the session's role again.
    fn put_sla(&mut self, queue: &str, sla: Option<&Sla>, note: &AuditNote) -> Result<()>;
    /// A queue's ready-made texts, by code.
    fn texts(&mut self, queue: &str) -> Result<Vec<CannedText>>;
    /// Writes ready-made text `t` (creating it, or changing the text under its code) with
    /// its audit record. PostgreSQL writes both through a function that checks the
    /// session's role again.
    fn put_text(&mut self, t: &CannedText, note: &AuditNote) -> Result<()>;
    /// Deletes ready-made text `code` of `queue` with its audit record.
    fn drop_text(&mut self, queue: &str, code: &str, note: &AuditNote) -> Result<()>;
    /// Writes a user's role (creating the row) with its audit record.
    fn put_role(&mut self, user: &str, role: Role, note: &AuditNote) -> Result<()>;
    /// Binds a user name to a login, or unbinds it (`None`), with its audit record.
    fn put_login(&mut self, user: &str, login: Option<&str>, note: &AuditNote) -> Result<()>;
    /// How many items, in any state, are in `queue`.
    fn queue_items(&mut self, queue: &str) -> Result<u64>;
    /// Moves every item of queue `from` (which must exist, as must `to`) into `to`, each
    /// with a `noted` event carrying `detail`; returns how many moved.
    fn move_items(&mut self, from: &str, to: &str, detail: &Value) -> Result<u64>;
    /// Deletes an empty queue's row (and its kept counts) with its audit record; its field
    /// definitions go to the queue `note.new` says it was renamed to, else are deleted.
    fn drop_queue(&mut self, queue: &str, note: &AuditNote) -> Result<()>;
    /// Records the actor as seen now; returns when they were seen before.
    fn swap_last_seen(&mut self) -> Result<Option<Millis>>;
    /// Parked items (of `owner` when given) whose wake time is at or before `at` — with
    /// `past_grace`, whose wake time plus their queue's park grace is — earliest first,
    /// at most `limit`.
    fn parked(
        &mut self,
        owner: Option<&str>,
        at: Millis,
        past_grace: bool,
        limit: usize,
    ) -> Result<Vec<Item>>;
    /// The settings of item `id`'s queue (`None`: no such item), in one lookup.
    fn queue_of(&mut self, id: i64) -> Result<Option<QueueSettings>>;
    /// The version of every queue's field definitions now (it changes with each change to
    /// any of them), or `None` when the backend keeps no digests of checked records (see
    /// [`fields::digest`]).
    fn fields_version(&mut self) -> Result<Option<i64>> {
        Ok(None)
    }
    /// What item `id`'s Complete is judged by on a backend that keeps digests: whether its
    /// queue has fields, the definitions' version and the item's digest (on PostgreSQL only
    /// one this session's role wrote), in one lookup (`None`: the backend keeps none,
    /// [`Tx::finishing`] reads the definitions).
    fn fields_checked(&mut self, id: i64) -> Result<Option<Checked>> {
        let _ = id;
        Ok(None)
    }
    /// What a holder's field save of item `id` under `token` works on, and what
    /// [`Tx::fields_checked`] reads, in one lookup where the backend can (SQLite); the item
    /// is held for the transaction as by [`Tx::item_for_update`]. `None`: no such item.
    fn field_record(
        &mut self,
        id: i64,
        token: i64,
    ) -> Result<Option<(FieldRecord, Option<Checked>)>> {
        let checked = self.fields_checked(id)?;
        let me = self.actor().name.clone();
        let Some(item) = self.item_for_update(id)? else {
            return Ok(None);
        };
        let item = found(id, Some(item))?;
        let held = item.held_with(&me, token);
        let record = FieldRecord {
            queue: item.queue,
            params: item.params,
            held,
        };
        Ok(Some((record, checked)))
    }
    /// Writes item `id`'s params `text` under the holder's fence
    /// ([`crate::store::sql::FENCE_HOLDER_OR_REVIEWER`], token `token`) with a
    /// `field_changed` event (`detail`), and its digest of checked fields (`None`: not
    /// known to keep every rule) on a backend that keeps them; false when the fence did not
    /// hold (nothing written). SQLite writes params and digest in one statement.
    fn write_params(
        &mut self,
        id: i64,
        token: i64,
        text: &str,
        digest: Option<&[u8; 16]>,
        detail: &Value,
    ) -> Result<bool> {
        let w = ItemWrite {
            set: crate::store::sql::SET_PARAMS,
            fence: crate::store::sql::FENCE_HOLDER_OR_REVIEWER,
            value: Some(text),
            arg: None,
            kind: EventKind::FieldChanged,
            detail: detail.clone(),
        };
        if !self.write_item(id, token, &w)? {
            return Ok(false);
        }
        if let Some(d) = digest {
            self.put_fields_checked(id, d)?;
        }
        Ok(true)
    }
    /// Writes item `id`'s digest of its checked fields (a backend that keeps none ignores
    /// it).
    fn put_fields_checked(&mut self, id: i64, digest: &[u8; 16]) -> Result<()> {
        let _ = (id, digest);
        Ok(())
    }
    /// Writes the digests of many items at once ([`Tx::put_fields_checked`] for each; a
    /// backend may do it in one statement: PostgreSQL does).
    fn put_fields_checked_many(&mut self, marks: &[(i64, [u8; 16])]) -> Result<()> {
        for (id, digest) in marks {
            self.put_fields_checked(*id, digest)?;
        }
        Ok(())
    }
    /// What a complete of item `id` is judged and routed by: what [`Tx::fields_checked`]
    /// reads on a backend that keeps digests, else its queue's definitions
    /// ([`Tx::finishing`]); and its queue's settings. PostgreSQL reads either in one
    /// lookup, with the record itself (held for the transaction, as the actor's under
    /// `token` or not) when its queue has fields ([`Judge::Held`]).
    fn judging(&mut self, id: i64, token: i64) -> Result<(Judge, Option<QueueSettings>)> {
        let _ = token;
        match self.fields_checked(id)? {
            Some(c) => Ok((Judge::Checked(c), self.queue_of(id)?)),
            None => {
                let (defs, queue) = self.finishing(id)?;
                Ok((Judge::Defs(defs), queue))
            }
        }
    }
    /// What a complete of item `id` is judged and routed by: [`Tx::item_fields`] and
    /// [`Tx::queue_of`] (PostgreSQL: both in one lookup).
    fn finishing(&mut self, id: i64) -> Result<(Vec<FieldDef>, Option<QueueSettings>)> {
        Ok((self.item_fields(id)?, self.queue_of(id)?))
    }
    /// The first item in review (within `queue`, all when `None`) the actor may take:
    /// free or expired, in a running queue, not their own work, oldest submission first
    /// ([`crate::store::sql::REVIEWABLE`]). PostgreSQL holds the row and skips rows others
    /// are writing.
    fn reviewable(&mut self, queue: Option<&str>) -> Result<Option<Item>>;
    /// How many items of `queue` the actor completed, counting at most `cap`.
    fn completions_in(&mut self, queue: &str, cap: i64) -> Result<i64>;
    /// The actor's events at exactly `at` (those of one transaction of theirs), by id.
    fn events_at(&mut self, at: Millis) -> Result<Vec<Event>>;
    /// Releases up to `limit` expired locks, each with its `expired` event naming the
    /// holder; returns how many.
    fn reap(&mut self, limit: usize) -> Result<usize>;
    /// Replaces item `id`'s duplicate keys with `keys` (field, key).
    fn put_keys(&mut self, id: i64, keys: &[(String, String)]) -> Result<()>;
    /// Holds off every other transaction's key writes until this one ends, after waiting
    /// for those that wrote keys already: a rebuild of keys from params it reads then
    /// writes nothing a concurrent `set` replaced. (SQLite: a write transaction holds
    /// off every other writer already.)
    fn hold_off_key_writes(&mut self) -> Result<()> {
        Ok(())
    }
    /// Replaces the duplicate keys of the items `ids` with `keys` (item id, field, key;
    /// each of an item of `ids`), as [`Tx::put_keys`] for each of them would: a few
    /// statements for the lot (a queue's keys rebuilt a page at a time).
    fn replace_keys(&mut self, ids: &[i64], keys: &[(i64, String, String)]) -> Result<()>;
    /// Items of `queue` other than `except` whose key of `field` is `key`, at most
    /// `limit`, by id.
    fn key_matches(
        &mut self,
        queue: &str,
        field: &str,
        key: &str,
        except: i64,
        limit: usize,
    ) -> Result<Vec<i64>>;
    /// Items of `queue` with an id above `after`, at most `limit`, by id: (id, params).
    fn queue_params(&mut self, queue: &str, after: i64, limit: usize)
    -> Result<Vec<(i64, String)>>;
    /// The judged pair (`low`, `high`), if any (PostgreSQL holds its row).
    fn pair(&mut self, low: i64, high: i64) -> Result<Option<Pair>>;
    /// Records a judged pair (replacing what was said of it).
    fn put_pair(&mut self, p: &Pair) -> Result<()>;
}

/// The item, or `NotFound`; an item whose state or lock cannot be read is refused (see
/// [`crate::store::rows`]).
pub(crate) fn found(id: i64, item: Option<Item>) -> Result<Item> {
    crate::store::rows::ruled(item.ok_or(StoreError::NotFound(id))?)
}

/// The item held for this transaction; it must still be open (else `NotOpen`, naming
/// who finished it).
pub(crate) fn open_item_for_update(tx: &mut dyn Tx, id: i64) -> Result<Item> {
    let item = found(id, tx.item_for_update(id)?)?;
    if item.state != ItemState::Open {
        return Err(not_open(&item));
    }
    Ok(item)
}

fn not_open(item: &Item) -> StoreError {
    let by = match item.state {
        ItemState::Parked => item.parked_by.clone(),
        _ => item.finished_by.clone(),
    };
    StoreError::NotOpen {
        id: item.id,
        state: item.state,
        by,
    }
}

/// A queue's settings, or `UnknownQueue` naming the known ones.
pub(crate) fn known_queue(tx: &mut dyn Tx, name: &str) -> Result<QueueSettings> {
    match tx.queue(name)? {
        Some(q) => Ok(q),
        None => Err(StoreError::UnknownQueue {
            name: name.to_string(),
            known: tx.queues()?.into_iter().map(|q| q.name).collect(),
        }),
    }
}

/// Refuses staff, leads (see [`teams::require_supervisor_of`] for their queues' actions),
/// people who left, and a supervisor's name used by a login it is not bound to: a
/// supervisor action needs the real identity to hold the role.
pub(crate) fn require_supervisor(tx: &mut dyn Tx, action: &str) -> Result<()> {
    let me = tx.actor().name.clone();
    let access = tx.access(&me)?;
    if !access.supervises(None) {
        return Err(StoreError::SupervisorOnly(
            match (access.role, &access.left) {
                (_, Some(_)) => format!("{me} has left and may not {action}"),
                (Role::Lead, None) => format!(
                    "{me} is a lead (of {}) and may not {action}: a supervisor's alone",
                    access.takes.words()
                ),
                _ => format!("{me} is staff and may not {action}"),
            },
        ));
    }
    let real = tx.ctx().real.clone();
    let bound = tx.login_of(&me)?;
    may_act_as(&me, &real, bound.as_deref()).map_err(StoreError::NotYou)
}

/// Adds checked items as `opts` says (see [`crate::store::Writes::add_items`]); returns
/// what each became. A queue not known yet is created with the default settings when
/// asked (and `default`, where items without a queue go, always), else refused
/// (`UnknownQueue`, naming the closest known one): a mistyped queue name does not quietly
/// start a queue nobody reads.
pub(crate) fn add_items(
    tx: &mut dyn Tx,
    items: &[NewItem],
    opts: AddOptions<'_>,
) -> Result<Vec<Added>> {
    let create = opts.create_queues || opts.kept.is_some();
    let queues: std::collections::BTreeSet<&str> = items.iter().map(|i| i.queue.as_str()).collect();
    for q in queues {
        if create || q == DEFAULT_QUEUE {
            tx.ensure_queue(q)?;
        } else {
            known_queue(tx, q)?;
        }
    }
    let items = sla::with_due(tx, items)?;
    let items = items.as_ref();
    if opts.search_later {
        tx.search_later()?;
    }
    let Some(kept) = opts.kept else {
        let added = if opts.skip_duplicates {
            dedupe::add_skipping_duplicates(tx, items)?
        } else {
            let added = tx.insert_items(items)?;
            if opts.same_content {
                same_content(tx, items, &added)?;
            }
            dedupe::keys_of_added(tx, items, &added)?;
            added
        };
        seal_added(tx, items, &added, &opts)?;
        return Ok(added);
    };
    if items.len() != kept.ids.len() {
        return Err(StoreError::Invalid("every kept item needs its id".into()));
    }
    let keep = |&id| Kept {
        id,
        created_at: kept.at,
    };
    let added = (items.iter().zip(kept.ids))
        .map(|(it, id)| tx.insert_item(it, Some(keep(id))))
        .collect::<Result<Vec<_>>>()?;
    dedupe::keys_of_added(tx, items, &added)?;
    seal_added(tx, items, &added, &opts)?;
    Ok(added)
}

/// Refuses an item whose request id another item of other content has (title or body):
/// only a retry of the same content is answered with the existing item.
fn same_content(tx: &mut dyn Tx, items: &[NewItem], added: &[Added]) -> Result<()> {
    for (item, a) in items.iter().zip(added).filter(|(_, a)| !a.created) {
        let (Some(rid), Some(cur)) = (&item.request_id, tx.item(a.id)?) else {
            continue;
        };
        let differs = match (cur.title != item.title, cur.body != item.body) {
            (false, false) => continue,
            (true, false) => "title",
            (false, true) => "body",
            (true, true) => "title and body",
        };
        return Err(StoreError::RequestIdReused {
            request_id: rid.clone(),
            id: a.id,
            differs,
        });
    }
    Ok(())
}

/// Starts an import that keeps the ids `ids.0..=ids.1` (a supervisor's action: it
/// decides the database's numbering) by adding `last`, the row with the largest of them,
/// `ids.1`. Refused when an item got an id in that range after `seen` (the largest id
/// when the file's ids were checked), since it may hold one of them. Once this commits,
/// items added while the import runs get ids above `ids.1`: on PostgreSQL the identity
/// sequence is moved past it, on SQLite new ids follow the largest one, `last`'s.
/// Returns what `last` became and the time the import began (every item's `created_at`;
/// `last`'s, when an earlier run of it added `last`).
pub(crate) fn keep_ids(
    tx: &mut dyn Tx,
    last: &NewItem,
    ids: (i64, i64),
    seen: i64,
) -> Result<(Added, Millis)> {
    require_supervisor(tx, "import keeping ids")?;
    let added = tx.items_above(seen, ids)?;
    if added > 0 {
        return Err(StoreError::Invalid(format!(
            "{added} item(s) got ids between {} and {} while the file was checked; nothing \
             imported (run the import again)",
            ids.0, ids.1
        )));
    }
    tx.move_ids_past(ids.1)?;
    let now = tx.now();
    let last_id = [ids.1];
    let opts = AddOptions::keeping(&last_id, now);
    let added = add_items(tx, std::slice::from_ref(last), opts)?
        .pop()
        .ok_or_else(|| StoreError::Database("the item was not added".into()))?;
    // Run again after being cut short: the rest joins the first run's items, in id order.
    let began = match added.created {
        true => now,
        false => tx.item(added.id)?.map_or(now, |i| i.created_at),
    };
    Ok((added, began))
}

/// Adds a comment to an item's thread (no lock needed; any state), with its `noted`
/// event naming the comment; returns the comment's id.
pub(crate) fn comment(tx: &mut dyn Tx, id: i64, text: &str) -> Result<i64> {
    found(id, tx.item(id)?)?;
    let cid = tx.insert_comment(id, text)?;
    let detail = json!({"comment_id": cid, "chars": text.chars().count()});
    tx.insert_event(id, EventKind::Noted, &detail)?;
    Ok(cid)
}
