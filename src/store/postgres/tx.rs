//! The lock protocol's primitives on PostgreSQL, inside one short transaction: rows the
//! rules read before writing are held `FOR UPDATE` (items `FOR NO KEY UPDATE`: no write
//! changes an item's id, and the weaker lock lets others insert rows that reference the
//! item, a comment or an event, without a claim skipping it), a claim's candidate is
//! picked with `SKIP LOCKED`, and a claim or an item write is one statement with its event.

use std::sync::Arc;

use postgres::types::ToSql;
use serde_json::Value;

use super::open::{Conn, TxError, TxResult, is_connection_error, is_retryable, map_err};
use super::reads::{PgCells, load_item, load_queue, queues, role_of};
use super::sql::{self, EVENT_COLS, FENCED_UPDATE_TYPES, ITEM_COLS, WIP_LOCK, WIP_LOCK_CLASS};
use crate::domain::duplicates::Pair;
use crate::domain::queue_fields::FieldDef;
use crate::domain::sla::Sla;
use crate::domain::texts::CannedText;
use crate::domain::{
    Access, Actor, AuditNote, Cell, Event, EventKind, Item, Millis, NewItem, QueueSettings, Queues,
    Role, TakeOrder,
};
use crate::store::Added;
use crate::store::TakeNext;
use crate::store::error::Result;
use crate::store::ops::{
    Checked, Claimable, DefsCache, FieldRecord, ItemWrite, Judge, Kept, PassedOver, Tx, TxCtx,
};
use crate::store::rows;
use crate::store::sql::{InsertParam, insert_param, kinds_sql};

/// The value of an item INSERT's parameter `name` (see `store::sql::insert_items`).
fn insert_value(
    name: &str,
    item: &NewItem,
    id: Option<i64>,
    at: Millis,
    actor: &Actor,
) -> Option<Box<dyn ToSql + Sync>> {
    Some(match insert_param(name)? {
        InsertParam::Created("created_at") => Box::new(at),
        InsertParam::Created("created_by") => Box::new(actor.name.clone()),
        InsertParam::Created(_) => Box::new(actor.os_user.clone()),
        InsertParam::Column { field, .. } if field.name == "id" => Box::new(id),
        InsertParam::Column { field, .. } => boxed(item.cell(field.col)?),
    })
}

/// A stored value as the `postgres` crate binds it.
pub(crate) fn boxed(c: Cell<'_>) -> Box<dyn ToSql + Sync> {
    match c {
        Cell::Number(n) => Box::new(n),
        Cell::Text(t) => Box::new(t.map(str::to_owned)),
        Cell::Time(t) | Cell::Id(t) => Box::new(t),
    }
}

fn unbound(names: &[String]) -> crate::store::StoreError {
    crate::store::StoreError::Database(format!(
        "an item INSERT has a parameter caseload cannot bind (one of {})",
        names.join(", ")
    ))
}

/// One write transaction on PostgreSQL.
pub(super) struct PgTx<'c> {
    pub c: &'c mut Conn,
    pub ctx: TxCtx<'c>,
    /// The store's field definitions per queue and version.
    pub defs: &'c DefsCache,
    /// Set when a statement failed in a way that makes running the transaction again
    /// right (a deadlock, a serialisation failure).
    pub retry: bool,
    /// The connection's failure, when it broke mid-transaction (nothing was committed).
    pub lost: Option<postgres::Error>,
}

impl PgTx<'_> {
    /// Maps a step's error, noting what the transaction loop must know of it.
    pub(super) fn lift<T>(&mut self, r: TxResult<T>) -> Result<T> {
        r.map_err(|e| match e {
            TxError::Pg(pe) => {
                self.retry |= is_retryable(&pe);
                let mapped = map_err(&pe);
                if is_connection_error(&pe) {
                    self.lost = Some(pe);
                }
                mapped
            }
            TxError::Store(e) => e,
        })
    }
}

fn lock_item(c: &mut Conn, id: i64) -> TxResult<Option<Item>> {
    c.query_opt(
        &format!("SELECT {ITEM_COLS} FROM items WHERE id = $1 FOR NO KEY UPDATE"),
        &[&id],
    )?
    .map(|r| rows::item_from(&mut PgCells::new(&r)))
    .transpose()
    .map_err(TxError::Store)
}

fn insert_event(
    c: &mut Conn,
    tx: (Millis, &Actor),
    id: i64,
    kind: EventKind,
    detail: &Value,
) -> TxResult<()> {
    let (now, actor) = tx;
    c.execute(
        "INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
         VALUES ($1, $2, $3, $4, $5, $6::text::json)",
        &[
            &id,
            &now,
            &actor.name,
            &actor.os_user,
            &kind.as_str(),
            &detail.to_string(),
        ],
    )?;
    Ok(())
}

impl PgTx<'_> {
    /// The candidate `sql` (see [`sql::candidate_in`]) finds for `next`; a WIP-limited
    /// queue's claims by the actor are serialised from here on.
    fn candidate_by(&mut self, sql: &str, next: &TakeNext) -> Result<Option<Claimable>> {
        let (me, now, skip) = (&self.ctx.actor.name, self.ctx.now, &next.skip);
        let r = match &next.queue {
            Some(q) => self.c.query_opt(sql, &[me, &now, &skip, &q]),
            None => self.c.query_opt(sql, &[me, &now, &skip]),
        };
        let Some(row) = self.lift(r)? else {
            return Ok(None);
        };
        let (id, holder, item_queue, limited): (i64, Option<String>, String, bool) =
            (row.get(0), row.get(1), row.get(2), row.get(3));
        if limited {
            self.serialise_claims(&item_queue)?;
        }
        Ok(Some(Claimable {
            id,
            holder,
            due_at: row.get(4),
            priority: row.get(5),
            created_at: row.get(6),
            token: row.get(7),
        }))
    }
}

impl Tx for PgTx<'_> {
    fn put_keys(&mut self, id: i64, keys: &[(String, String)]) -> Result<()> {
        let r = super::dedupe::put_keys(self.c, id, keys);
        self.lift(r)
    }

    fn hold_off_key_writes(&mut self) -> Result<()> {
        // EXCLUSIVE: readers go on; INSERT/UPDATE/DELETE of item_keys wait for this
        // transaction, and this lock waits for those in progress.
        let r = self
            .c
            .execute("LOCK TABLE item_keys IN EXCLUSIVE MODE", &[]);
        self.lift(r).map(|_| ())
    }

    fn replace_keys(&mut self, ids: &[i64], keys: &[(i64, String, String)]) -> Result<()> {
        let r = super::dedupe::replace_keys(self.c, ids, keys);
        self.lift(r)
    }

    fn queue_params(&mut self, q: &str, after: i64, limit: usize) -> Result<Vec<(i64, String)>> {
        let r = super::dedupe::queue_params(self.c, q, after, limit);
        self.lift(r)
    }

    fn key_matches(
        &mut self,
        q: &str,
        field: &str,
        key: &str,
        except: i64,
        limit: usize,
    ) -> Result<Vec<i64>> {
        let r = super::dedupe::key_matches(self.c, q, field, key, except, limit);
        self.lift(r)
    }

    fn pair(&mut self, low: i64, high: i64) -> Result<Option<Pair>> {
        let r = super::dedupe::pair(self.c, low, high);
        self.lift(r)
    }

    fn put_pair(&mut self, p: &Pair) -> Result<()> {
        let r = super::dedupe::put_pair(self.c, p);
        self.lift(r)
    }

    fn ctx(&self) -> TxCtx<'_> {
        self.ctx
    }

    fn item(&mut self, id: i64) -> Result<Option<Item>> {
        let r = load_item(self.c, id);
        self.lift(r)
    }

    fn item_for_update(&mut self, id: i64) -> Result<Option<Item>> {
        let r = lock_item(self.c, id);
        self.lift(r)
    }

    fn queue(&mut self, name: &str) -> Result<Option<QueueSettings>> {
        let r = load_queue(self.c, name);
        self.lift(r)
    }

    fn queues(&mut self) -> Result<Vec<QueueSettings>> {
        let r = queues(self.c);
        self.lift(r)
    }

    fn role_of(&mut self, user: &str) -> Result<Role> {
        let r = role_of(self.c, user);
        self.lift(r)
    }

    fn login_of(&mut self, user: &str) -> Result<Option<String>> {
        let r = super::reads::login_of(self.c, user);
        self.lift(r)
    }

    fn access(&mut self, user: &str) -> Result<Access> {
        let r = super::reads::access(self.c, user);
        self.lift(r)
    }

    fn put_access(
        &mut self,
        user: &str,
        takes: &Queues,
        reviews: &Queues,
        _: &AuditNote,
    ) -> Result<()> {
        let list = |q: &Queues| match q {
            Queues::All => None,
            Queues::Only(names) => Some(names.clone()),
        };
        let r = self.c.execute(
            "SELECT caseload_set_access($1, $2, $3, $4)",
            &[&self.ctx.actor.name, &user, &list(takes), &list(reviews)],
        );
        self.lift(r).map(|_| ())
    }

    fn put_leaving(&mut self, user: &str, reason: Option<&str>, note: &AuditNote) -> Result<()> {
        // The server writes who, when, the old value and the reason; of the note it takes
        // only what it cannot know: what was done to the work in this transaction.
        let detail = note.new.to_string();
        let r = self.c.execute(
            "SELECT caseload_set_leaving($1, $2, $3, $4)",
            &[&self.ctx.actor.name, &user, &reason, &detail],
        );
        self.lift(r).map(|_| ())
    }

    fn held_by(&mut self, user: &str) -> Result<Vec<Item>> {
        let sql = format!("{} FOR NO KEY UPDATE", crate::store::sql::HELD_BY);
        let r = (|| -> TxResult<Vec<Item>> {
            let rows = self.c.query(&sql, &[&user])?;
            super::reads::all(rows, |c| rows::item_from(c))
        })();
        self.lift(r)
    }

    fn supervisors_besides(&mut self, user: &str) -> Result<i64> {
        let r = self.c.query(
            "SELECT name FROM users WHERE role = 'supervisor' AND left_at IS NULL \
             AND name <> $1 FOR UPDATE",
            &[&user],
        );
        Ok(self.lift(r)?.len() as i64)
    }

    fn held_count(&mut self, queue: &str, except: i64) -> Result<i64> {
        let r = self.c.query_one(
            "SELECT count(*) FROM items WHERE lock_user = $1 AND queue = $2 AND id <> $3",
            &[&self.ctx.actor.name, &queue, &except],
        );
        Ok(self.lift(r)?.get(0))
    }

    fn has_takeable(&mut self, queue: &QueueSettings, skip: &[i64]) -> Result<bool> {
        let r = self.c.query_one(
            "SELECT EXISTS (SELECT 1 FROM items WHERE queue = $1 AND state = 'open' \
             AND (lock_user IS NULL OR lock_expires_at <= $2) AND NOT (id = ANY($3)))",
            &[&queue.name, &self.ctx.now, &skip],
        );
        Ok(self.lift(r)?.get(0))
    }

    fn last_event(&mut self, id: i64, of: &[EventKind], by: Option<&str>) -> Result<Option<Event>> {
        let sql = format!(
            "SELECT {EVENT_COLS} FROM events WHERE item_id = $1 AND kind IN ({}) \
             AND ($2::text IS NULL OR actor = $2) ORDER BY id DESC LIMIT 1",
            kinds_sql(of)
        );
        let r = self.c.query_opt(&sql, &[&id, &by]);
        self.lift(r)?
            .map(|r| rows::event_from(&mut PgCells::new(&r)))
            .transpose()
    }

    fn events_at(&mut self, at: Millis) -> Result<Vec<Event>> {
        let sql = format!("SELECT {EVENT_COLS} {}", crate::store::sql::EVENTS_AT);
        let r = self.c.query(&sql, &[&self.ctx.actor.name, &at]);
        let rows = self.lift(r)?;
        rows.iter()
            .map(|r| rows::event_from(&mut PgCells::new(r)))
            .collect()
    }

    fn serialise_claims(&mut self, queue: &str) -> Result<()> {
        let key = format!("{}\u{1}{queue}", self.ctx.actor.name);
        let r = self.c.execute(WIP_LOCK, &[&WIP_LOCK_CLASS, &key]);
        self.lift(r).map(|_| ())
    }

    fn candidate(
        &mut self,
        next: &TakeNext,
        order: TakeOrder,
        _: &mut PassedOver,
    ) -> Result<Option<Claimable>> {
        // The server checks every text against the database encoding: nothing to pass over.
        self.candidate_by(&sql::candidate_in(next.queue.is_some(), order), next)
    }

    fn skips_rows_being_written(&self) -> bool {
        true
    }

    fn first_takeable(&mut self, next: &TakeNext) -> Result<Option<Claimable>> {
        static SQL: [std::sync::OnceLock<String>; 2] =
            [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
        let one = next.queue.is_some();
        let sql = SQL[usize::from(one)].get_or_init(|| sql::first_takeable(one));
        self.candidate_by(sql, next)
    }

    fn claim(
        &mut self,
        id: i64,
        token: i64,
        kind: EventKind,
        detail: &Value,
    ) -> Result<Option<Item>> {
        let r = self.c.query_opt(
            sql::CLAIM,
            &[
                &self.ctx.actor.name,
                &self.ctx.now,
                &id,
                &self.ctx.actor.os_user,
                &kind.as_str(),
                &detail.to_string(),
                &token,
            ],
        );
        self.lift(r)?
            .map(|r| rows::item_from(&mut PgCells::new(&r)))
            .transpose()
    }

    fn write_item(&mut self, id: i64, token: i64, w: &ItemWrite<'_>) -> Result<bool> {
        let detail = w.detail.to_string();
        let r = self.c.execute_as(
            &sql::fenced_update(w.set, w.fence),
            &FENCED_UPDATE_TYPES,
            &[
                &id,
                &self.ctx.actor.name,
                &token,
                &self.ctx.now,
                &w.value,
                &self.ctx.actor.os_user,
                &w.kind.as_str(),
                &detail,
                &w.arg,
            ],
        );
        Ok(self.lift(r)? > 0)
    }

    fn insert_comment(&mut self, id: i64, text: &str) -> Result<i64> {
        let r = self.c.query_one(
            "INSERT INTO comments (item_id, at, author, os_user, text) \
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
            &[
                &id,
                &self.ctx.now,
                &self.ctx.actor.name,
                &self.ctx.actor.os_user,
                &text,
            ],
        );
        Ok(self.lift(r)?.get(0))
    }

    fn user_names(&mut self) -> Result<Vec<String>> {
        let r = self.c.query("SELECT name FROM users ORDER BY name", &[]);
        let rows = self.lift(r)?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn has_acted(&mut self, user: &str) -> Result<bool> {
        let r = self.c.query_one(
            "SELECT EXISTS (SELECT 1 FROM events WHERE actor = $1)",
            &[&user],
        );
        Ok(self.lift(r)?.get(0))
    }

    fn insert_event(&mut self, id: i64, kind: EventKind, detail: &Value) -> Result<()> {
        let r = insert_event(self.c, (self.ctx.now, self.ctx.actor), id, kind, detail);
        self.lift(r)
    }

    fn ensure_queue(&mut self, name: &str) -> Result<()> {
        let r = self.c.execute(
            "INSERT INTO queues (name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
            &[&name],
        );
        self.lift(r).map(|_| ())
    }

    fn insert_item(&mut self, item: &NewItem, keep: Option<Kept>) -> Result<Added> {
        let actor = self.ctx.actor;
        let at = keep.map_or(self.ctx.now, |k| k.created_at);
        let (sql, names) = sql::insert_item(keep.is_some());
        let r = (|| -> TxResult<Added> {
            let values = names
                .iter()
                .map(|n| insert_value(n, item, keep.map(|k| k.id), at, actor))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| TxError::Store(unbound(names)))?;
            let params: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v.as_ref()).collect();
            let row = self.c.query_opt(sql, &params)?;
            let Some(row) = row else {
                // A known request id: the producer's retry gets the existing item.
                let id: i64 = self
                    .c
                    .query_one(
                        "SELECT id FROM items WHERE request_id = $1",
                        &[&item.request_id],
                    )?
                    .get(0);
                return Ok(Added {
                    id,
                    created: false,
                    skipped: false,
                });
            };
            // No `created` event: the row's created_at and created_by are the record
            // (history shows them as its first event).
            Ok(Added {
                id: row.get(0),
                created: true,
                skipped: false,
            })
        })();
        self.lift(r)
    }

    fn search_later(&mut self) -> Result<()> {
        // Read by the trigger that keeps item_search (migration 31): this transaction's
        // new rows go to item_search_pending, for the import's indexer.
        let r = self.c.execute(
            "SELECT set_config('caseload.search_later', 'on', true)",
            &[],
        );
        self.lift(r).map(|_| ())
    }

    fn items_above(&mut self, above: i64, ids: (i64, i64)) -> Result<u64> {
        let r = self.c.query_one(
            "SELECT count(*) FROM items WHERE id > $1 AND id BETWEEN $2 AND $3",
            &[&above, &ids.0, &ids.1],
        );
        let n: i64 = self.lift(r)?.get(0);
        Ok(n.max(0) as u64)
    }

    fn move_ids_past(&mut self, max: i64) -> Result<()> {
        // Forward only: an id handed out before (perhaps to a transaction not committed
        // yet) is never handed out again. Needs the right to change the sequence (the
        // owner that ran `init` has it).
        let r = self.c.execute(
            "SELECT setval(s, $1) FROM (SELECT pg_get_serial_sequence('items', 'id')::regclass \
             AS s) q WHERE $1 > coalesce(pg_sequence_last_value(s), 0)",
            &[&max],
        );
        self.lift(r).map(|_| ())
    }

    fn queue_items(&mut self, queue: &str) -> Result<u64> {
        let r = self
            .c
            .query_one("SELECT count(*) FROM items WHERE queue = $1", &[&queue]);
        let n: i64 = self.lift(r)?.get(0);
        Ok(n.max(0) as u64)
    }

    fn move_items(&mut self, from: &str, to: &str, detail: &Value) -> Result<u64> {
        let (now, actor) = (self.ctx.now, self.ctx.actor);
        let detail = detail.to_string();
        let r = (|| -> TxResult<u64> {
            let n = self.c.execute(
                "UPDATE items SET queue = $2 WHERE queue = $1",
                &[&from, &to],
            )?;
            self.c.execute(
                "INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
                 SELECT id, $2, $3, $4, 'noted', $5::text::json FROM items WHERE queue = $1",
                &[&to, &now, &actor.name, &actor.os_user, &detail],
            )?;
            Ok(n)
        })();
        self.lift(r)
    }

    // Roles, bindings and queue settings are written by SECURITY DEFINER functions
    // (migrations/0010_audit_by_the_server.sql) that check the session's role again and
    // write the audit record themselves: the server's time, its `session_user`, the old
    // value as they read it and the new one as they write it. Of the note they take only
    // what the server cannot know: which rename a queue's creation or deletion is part of.
    // A role without a supervisor's name cannot change them even from psql.
    fn drop_queue(&mut self, queue: &str, note: &AuditNote) -> Result<()> {
        let renamed_to = note.new.get("renamed_to").and_then(|v| v.as_str());
        let r = self.c.execute(
            "SELECT caseload_delete_queue($1, $2, $3)",
            &[&self.ctx.actor.name, &queue, &renamed_to],
        );
        self.lift(r).map(|_| ())
    }

    fn put_queue(&mut self, q: &QueueSettings, note: &AuditNote) -> Result<()> {
        let renamed_from = note.old.get("renamed_from").and_then(|v| v.as_str());
        let r = self.c.execute(
            "SELECT caseload_set_queue($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
            &[
                &self.ctx.actor.name,
                &q.name,
                &q.lock_seconds,
                &q.warn_seconds,
                &q.max_per_user,
                &q.paused,
                &q.order.as_str(),
                &renamed_from,
                &q.park_grace_seconds,
                &q.undo_seconds,
                &q.review_percent,
                &q.review_new,
            ],
        );
        self.lift(r).map(|_| ())
    }

    fn fields(&mut self, queue: &str) -> Result<Vec<FieldDef>> {
        let r = super::reads::fields(self.c, Some(queue));
        Ok(self.lift(r)?.into_iter().map(|(_, d)| d).collect())
    }

    fn fields_at(&mut self, queue: &str, version: Option<i64>) -> Result<Arc<[FieldDef]>> {
        let Some(version) = version else {
            return Ok(self.fields(queue)?.into());
        };
        if let Some(defs) = self.defs.get(queue, version) {
            return Ok(defs);
        }
        // Read after the version (in this transaction): the same definitions or newer
        // ones, and a newer version is never read as this one again.
        let defs: Arc<[FieldDef]> = self.fields(queue)?.into();
        self.defs.put(queue, version, &defs);
        Ok(defs)
    }

    fn fields_version(&mut self) -> Result<Option<i64>> {
        let r = super::checked::fields_version(self.c);
        self.lift(r).map(Some)
    }

    fn fields_checked(&mut self, id: i64) -> Result<Option<Checked>> {
        let r = super::checked::fields_checked(self.c, id);
        self.lift(r).map(Some)
    }

    fn put_fields_checked(&mut self, id: i64, digest: &[u8; 16]) -> Result<()> {
        self.put_fields_checked_many(&[(id, *digest)])
    }

    fn put_fields_checked_many(&mut self, marks: &[(i64, [u8; 16])]) -> Result<()> {
        if marks.is_empty() {
            return Ok(());
        }
        let ids: Vec<i64> = marks.iter().map(|m| m.0).collect();
        let digests: Vec<[u8; 16]> = marks.iter().map(|m| m.1).collect();
        let r = super::checked::put_many(self.c, &ids, &digests);
        self.lift(r)
    }

    fn judging(&mut self, id: i64, token: i64) -> Result<(Judge, Option<QueueSettings>)> {
        let r = super::checked::judging(self.c, id, &self.ctx.actor.name, token);
        let (checked, record, queue) = self.lift(r)?;
        let judge = match record {
            Some(record) => Judge::Held(checked, record),
            None => Judge::Checked(checked),
        };
        Ok((judge, queue))
    }

    fn field_record(
        &mut self,
        id: i64,
        token: i64,
    ) -> Result<Option<(FieldRecord, Option<Checked>)>> {
        let r = super::checked::field_record(self.c, id, &self.ctx.actor.name, token);
        Ok(self.lift(r)?.map(|(record, c)| (record, Some(c))))
    }

    fn write_params(
        &mut self,
        id: i64,
        token: i64,
        text: &str,
        digest: Option<&[u8; 16]>,
        detail: &Value,
    ) -> Result<bool> {
        let detail = detail.to_string();
        let digest = digest.map(|d| d.to_vec());
        let r = self.c.execute_as(
            &super::checked::WRITE_PARAMS,
            &super::checked::write_params_types(),
            &[
                &id,
                &self.ctx.actor.name,
                &token,
                &self.ctx.now,
                &Some(text),
                &self.ctx.actor.os_user,
                &EventKind::FieldChanged.as_str(),
                &detail,
                &digest,
            ],
        );
        Ok(self.lift(r)? > 0)
    }

    fn item_fields(&mut self, id: i64) -> Result<Vec<FieldDef>> {
        let r = super::reads::item_fields(self.c, id);
        self.lift(r)
    }

    fn put_field(
        &mut self,
        queue: &str,
        def: &FieldDef,
        order: &[String],
        _: &AuditNote,
    ) -> Result<()> {
        let r = self.c.execute(
            "SELECT caseload_set_field($1, $2, $3, $4, $5)",
            &[
                &self.ctx.actor.name,
                &queue,
                &def.name,
                &def.spec_json().to_string(),
                &order,
            ],
        );
        self.lift(r).map(|_| ())
    }

    fn drop_field(&mut self, queue: &str, name: &str, _: &AuditNote) -> Result<()> {
        let r = self.c.execute(
            "SELECT caseload_delete_field($1, $2, $3)",
            &[&self.ctx.actor.name, &queue, &name],
        );
        self.lift(r).map(|_| ())
    }

    fn sla(&mut self, queue: &str) -> Result<Option<Sla>> {
        let r = super::reads::slas(self.c, Some(queue));
        Ok(self.lift(r)?.pop())
    }

    fn put_sla(&mut self, queue: &str, sla: Option<&Sla>, _: &AuditNote) -> Result<()> {
        let s = sla.map(Sla::spec);
        let r = self.c.execute(
            "SELECT caseload_set_sla($1, $2, $3, $4, $5, $6)",
            &[
                &self.ctx.actor.name,
                &queue,
                &s.as_ref().map(|s| s.sla_ms),
                &s.as_ref().map(|s| s.hours.clone()),
                &s.as_ref().map(|s| s.tz.clone()),
                &s.as_ref().map(|s| s.holidays.join("\n")),
            ],
        );
        self.lift(r).map(|_| ())
    }

    fn texts(&mut self, queue: &str) -> Result<Vec<CannedText>> {
        let r = super::reads::texts(self.c, Some(queue));
        self.lift(r)
    }

    fn put_text(&mut self, t: &CannedText, _: &AuditNote) -> Result<()> {
        let r = self.c.execute(
            "SELECT caseload_put_text($1, $2, $3, $4, $5)",
            &[
                &self.ctx.actor.name,
                &t.queue,
                &t.code,
                &t.purpose.as_str(),
                &t.text,
            ],
        );
        self.lift(r).map(|_| ())
    }

    fn drop_text(&mut self, queue: &str, code: &str, _: &AuditNote) -> Result<()> {
        let r = self.c.execute(
            "SELECT caseload_delete_text($1, $2, $3)",
            &[&self.ctx.actor.name, &queue, &code],
        );
        self.lift(r).map(|_| ())
    }

    fn put_role(&mut self, user: &str, role: Role, _: &AuditNote) -> Result<()> {
        let r = self.c.execute(
            "SELECT caseload_set_role($1, $2, $3)",
            &[&self.ctx.actor.name, &user, &role.as_str()],
        );
        self.lift(r).map(|_| ())
    }

    fn put_login(&mut self, user: &str, login: Option<&str>, _: &AuditNote) -> Result<()> {
        let r = self.c.execute(
            "SELECT caseload_set_login($1, $2, $3)",
            &[&self.ctx.actor.name, &user, &login],
        );
        self.lift(r).map(|_| ())
    }

    fn swap_last_seen(&mut self) -> Result<Option<Millis>> {
        let (now, name) = (self.ctx.now, &self.ctx.actor.name);
        let r = (|| -> TxResult<Option<Millis>> {
            let prev: Option<Option<Millis>> = self
                .c
                .query_opt("SELECT last_seen FROM users WHERE name = $1", &[name])?
                .map(|r| r.get(0));
            self.c.execute(
                "INSERT INTO users (name, last_seen) VALUES ($1, $2) \
                 ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen",
                &[name, &now],
            )?;
            Ok(prev.flatten())
        })();
        self.lift(r)
    }

    fn parked(
        &mut self,
        owner: Option<&str>,
        at: Millis,
        past_grace: bool,
        limit: usize,
    ) -> Result<Vec<Item>> {
        let r = (|| -> TxResult<Vec<Item>> {
            let rows = self.c.query(
                crate::store::sql::PARKED_DUE,
                &[&at, &past_grace, &owner, &(limit as i64)],
            )?;
            super::reads::all(rows, |c| rows::item_from(c))
        })();
        self.lift(r)
    }

    fn finishing(&mut self, id: i64) -> Result<(Vec<FieldDef>, Option<QueueSettings>)> {
        let r = super::reads::finishing(self.c, id);
        self.lift(r)
    }

    fn queue_of(&mut self, id: i64) -> Result<Option<QueueSettings>> {
        let r = (|| -> TxResult<Option<QueueSettings>> {
            let rows = self.c.query(crate::store::sql::QUEUE_OF, &[&id])?;
            Ok(super::reads::all(rows, |c| rows::queue_from(c))?.pop())
        })();
        self.lift(r)
    }

    fn reviewable(&mut self, queue: Option<&str>) -> Result<Option<Item>> {
        let sql = format!(
            "{} FOR NO KEY UPDATE SKIP LOCKED",
            crate::store::sql::REVIEWABLE
        );
        let r = (|| -> TxResult<Option<Item>> {
            let rows = self
                .c
                .query(&sql, &[&queue, &self.ctx.now, &self.ctx.actor.name])?;
            Ok(super::reads::all(rows, |c| rows::item_from(c))?.pop())
        })();
        self.lift(r)
    }

    fn completions_in(&mut self, queue: &str, cap: i64) -> Result<i64> {
        let r = (|| -> TxResult<i64> {
            let row = self.c.query_one(
                crate::store::sql::COMPLETIONS_IN,
                &[&self.ctx.actor.name, &queue, &cap],
            )?;
            Ok(row.get(0))
        })();
        self.lift(r)
    }

    fn reap(&mut self, limit: usize) -> Result<usize> {
        // Rows others are writing are skipped, not waited for.
        let r = self.c.execute(
            "WITH x AS (SELECT i.id, i.lock_user, i.lock_token FROM items i \
                WHERE i.lock_user IS NOT NULL AND i.lock_expires_at <= $1 \
                ORDER BY i.lock_expires_at LIMIT $4 FOR NO KEY UPDATE OF i SKIP LOCKED), \
             u AS (UPDATE items SET lock_user = NULL, lock_time = NULL, \
                lock_expires_at = NULL FROM x \
                WHERE items.id = x.id AND items.lock_token = x.lock_token \
                RETURNING items.id, x.lock_user AS holder, x.lock_token AS token) \
             INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
             SELECT id, $1, $2, $3, 'expired', \
                json_build_object('from', holder, 'token', token) FROM u",
            &[
                &self.ctx.now,
                &self.ctx.actor.name,
                &self.ctx.actor.os_user,
                &(limit as i64),
            ],
        );
        Ok(self.lift(r)? as usize)
    }
}
