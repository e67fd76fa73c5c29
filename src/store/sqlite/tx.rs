//! The lock protocol's primitives on SQLite, inside one `BEGIN IMMEDIATE` transaction:
//! the write lock is held from the start, so every read here already sees what the write
//! will change, and nothing needs locking row by row.

use std::sync::{Arc, LazyLock};

use rusqlite::{Connection, OptionalExtension, named_params, params};
use serde_json::{Value, json};

use super::insert;
use super::reads::{load_item, load_queue};
use super::rows::{event_from_row, item_from_row, lossy_opt_text, lossy_text};
use super::sql;
use crate::domain::duplicates::Pair;
use crate::domain::queue_fields::FieldDef;
use crate::domain::sla::Sla;
use crate::domain::texts::CannedText;
use crate::domain::{
    Access, AuditNote, Event, EventKind, Item, Millis, NewItem, QueueSettings, Queues, Role,
    TakeOrder,
};
use crate::store::Added;
use crate::store::TakeNext;
use crate::store::error::Result;
use crate::store::ops::{
    Checked, Claimable, DefsCache, FieldRecord, ItemWrite, Kept, PassedOver, Tx, TxCtx,
};
use crate::store::sql::{
    FENCE_HOLDER_OR_REVIEWER, FENCE_TOKEN, SET_PARAMS, SET_RELEASE, kinds_sql,
};

/// One write transaction on SQLite.
pub(super) struct SqliteTx<'c> {
    pub c: &'c Connection,
    pub ctx: TxCtx<'c>,
    pub defs: &'c DefsCache,
}

/// The version of every queue's field definitions.
fn fields_version(c: &Connection) -> Result<i64> {
    Ok(c.prepare_cached("SELECT n FROM fields_version")?
        .query_row([], |r| r.get(0))?)
}

/// Executes `sql` binding only those of the named parameters it uses.
fn execute_named(
    c: &Connection,
    sql: &str,
    ps: &[(&str, rusqlite::types::Value)],
) -> rusqlite::Result<usize> {
    let mut stmt = c.prepare_cached(sql)?;
    for (name, v) in ps {
        if let Some(i) = stmt.parameter_index(name)? {
            stmt.raw_bind_parameter(i, v)?;
        }
    }
    stmt.raw_execute()
}

/// A user's role (staff when unknown).
pub(super) fn role_of(c: &Connection, user: &str) -> Result<Role> {
    let role: Option<String> = c
        .prepare_cached("SELECT role FROM users WHERE name = ?1")?
        .query_row([user], |r| lossy_opt_text(r, 0))
        .optional()?
        .flatten();
    Ok(role.as_deref().and_then(Role::parse).unwrap_or(Role::Staff))
}

/// What a user may do and where.
pub(super) fn access(c: &Connection, user: &str) -> Result<Access> {
    let row = c
        .prepare_cached(crate::store::sql::ACCESS_ROW)?
        .query_row([user], |r| {
            let left = match (r.get::<_, Option<i64>>(3)?, lossy_opt_text(r, 4)?) {
                (Some(at), why) => Some((at, why.unwrap_or_default())),
                (None, _) => None,
            };
            Ok((
                lossy_opt_text(r, 0)?,
                r.get::<_, i64>(1)? != 0,
                r.get::<_, i64>(2)? != 0,
                left,
            ))
        })
        .optional()?;
    let Some((role, takes, reviews, left)) = row else {
        return Ok(Access::default());
    };
    let mut stmt = c.prepare_cached(crate::store::sql::ACCESS_QUEUES)?;
    let rows = stmt
        .query_map([user], |r| Ok((lossy_text(r, 0)?, lossy_text(r, 1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(Access::from_rows(
        role.as_deref(),
        (takes, reviews),
        left,
        &rows,
    ))
}

/// The login a user name is bound to, if any.
pub(super) fn login_of(c: &Connection, user: &str) -> Result<Option<String>> {
    let login: Option<String> = c
        .prepare_cached("SELECT login FROM users WHERE name = ?1")?
        .query_row([user], |r| lossy_opt_text(r, 0))
        .optional()?
        .flatten();
    Ok(login)
}

/// Appends an audit record for `note`, naming the actor and the OS login behind it.
fn insert_audit(tx: &SqliteTx<'_>, note: &AuditNote) -> Result<()> {
    let old = (!note.old.is_null()).then(|| note.old.to_string());
    tx.c.prepare_cached(
        "INSERT INTO audit (at, actor, real_user, kind, subject, old_value, new_value) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        tx.ctx.now,
        tx.ctx.actor.name,
        tx.ctx.real.login,
        note.kind.as_str(),
        note.subject,
        old,
        note.new.to_string()
    ])?;
    Ok(())
}

impl Tx for SqliteTx<'_> {
    fn put_keys(&mut self, id: i64, keys: &[(String, String)]) -> Result<()> {
        super::dedupe::put_keys(self.c, id, keys)
    }

    fn replace_keys(&mut self, ids: &[i64], keys: &[(i64, String, String)]) -> Result<()> {
        super::dedupe::replace_keys(self.c, ids, keys)
    }

    fn queue_params(&mut self, q: &str, after: i64, limit: usize) -> Result<Vec<(i64, String)>> {
        super::dedupe::queue_params(self.c, q, after, limit)
    }

    fn key_matches(
        &mut self,
        q: &str,
        field: &str,
        key: &str,
        except: i64,
        limit: usize,
    ) -> Result<Vec<i64>> {
        super::dedupe::key_matches(self.c, q, field, key, except, limit)
    }

    fn pair(&mut self, low: i64, high: i64) -> Result<Option<Pair>> {
        super::dedupe::pair(self.c, low, high)
    }

    fn put_pair(&mut self, p: &Pair) -> Result<()> {
        super::dedupe::put_pair(self.c, p)
    }

    fn ctx(&self) -> TxCtx<'_> {
        self.ctx
    }

    fn item(&mut self, id: i64) -> Result<Option<Item>> {
        load_item(self.c, id)
    }

    fn item_for_update(&mut self, id: i64) -> Result<Option<Item>> {
        load_item(self.c, id)
    }

    fn queue(&mut self, name: &str) -> Result<Option<QueueSettings>> {
        load_queue(self.c, name)
    }

    fn queues(&mut self) -> Result<Vec<QueueSettings>> {
        super::reads::queues(self.c)
    }

    fn role_of(&mut self, user: &str) -> Result<Role> {
        role_of(self.c, user)
    }

    fn login_of(&mut self, user: &str) -> Result<Option<String>> {
        login_of(self.c, user)
    }

    fn access(&mut self, user: &str) -> Result<Access> {
        access(self.c, user)
    }

    fn put_access(
        &mut self,
        user: &str,
        takes: &Queues,
        reviews: &Queues,
        note: &AuditNote,
    ) -> Result<()> {
        let limited = |q: &Queues| i64::from(matches!(q, Queues::Only(_)));
        self.c
            .prepare_cached(
                "INSERT INTO users (name, take_limited, review_limited) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (name) DO UPDATE SET take_limited = excluded.take_limited, \
                 review_limited = excluded.review_limited",
            )?
            .execute(params![user, limited(takes), limited(reviews)])?;
        self.c
            .prepare_cached("DELETE FROM user_queues WHERE name = ?1")?
            .execute([user])?;
        let mut add = self
            .c
            .prepare_cached("INSERT INTO user_queues (name, kind, queue) VALUES (?1, ?2, ?3)")?;
        for (kind, qs) in [("take", takes), ("review", reviews)] {
            if let Queues::Only(names) = qs {
                for q in names {
                    add.execute(params![user, kind, q])?;
                }
            }
        }
        insert_audit(self, note)
    }

    fn put_leaving(&mut self, user: &str, reason: Option<&str>, note: &AuditNote) -> Result<()> {
        match reason {
            Some(why) => self
                .c
                .prepare_cached(
                    "INSERT INTO users (name, left_at, left_reason, login) \
                     VALUES (?1, ?2, ?3, NULL) ON CONFLICT (name) DO UPDATE SET \
                     left_at = excluded.left_at, left_reason = excluded.left_reason, \
                     login = NULL",
                )?
                .execute(params![user, self.ctx.now, why])?,
            None => self
                .c
                .prepare_cached(
                    "UPDATE users SET left_at = NULL, left_reason = NULL WHERE name = ?1",
                )?
                .execute([user])?,
        };
        insert_audit(self, note)
    }

    fn held_by(&mut self, user: &str) -> Result<Vec<Item>> {
        let mut stmt = self.c.prepare_cached(crate::store::sql::HELD_BY)?;
        let mut rows = stmt.query([user])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(item_from_row(r)?);
        }
        Ok(out)
    }

    fn supervisors_besides(&mut self, user: &str) -> Result<i64> {
        Ok(self
            .c
            .prepare_cached(
                "SELECT count(*) FROM users WHERE role = 'supervisor' AND left_at IS NULL \
                 AND name <> ?1",
            )?
            .query_row([user], |r| r.get(0))?)
    }

    fn held_count(&mut self, queue: &str, except: i64) -> Result<i64> {
        Ok(self
            .c
            .prepare_cached(
                "SELECT count(*) FROM items WHERE lock_user = ?1 AND queue = ?2 AND id <> ?3",
            )?
            .query_row(params![self.ctx.actor.name, queue, except], |r| r.get(0))?)
    }

    fn has_takeable(&mut self, queue: &QueueSettings, skip: &[i64]) -> Result<bool> {
        let skip = serde_json::to_string(skip).unwrap_or_else(|_| "[]".into());
        Ok(self
            .c
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM items WHERE queue = ?1 AND state = 'open' \
                 AND (lock_user IS NULL OR lock_expires_at <= ?2) \
                 AND id NOT IN (SELECT value FROM json_each(?3)))",
            )?
            .query_row(params![queue.name, self.ctx.now, skip], |r| r.get(0))?)
    }

    fn last_event(&mut self, id: i64, of: &[EventKind], by: Option<&str>) -> Result<Option<Event>> {
        let sql = format!(
            "SELECT {} FROM events WHERE item_id = ?1 AND kind IN ({}) \
             AND (?2 IS NULL OR actor = ?2) ORDER BY id DESC LIMIT 1",
            sql::EVENT_COLS,
            kinds_sql(of)
        );
        let row = self
            .c
            .prepare_cached(&sql)?
            .query_row(params![id, by], |r| Ok(event_from_row(r)))
            .optional()?;
        row.transpose()
    }

    fn serialise_claims(&mut self, _queue: &str) -> Result<()> {
        // The write lock serialises every claim already.
        Ok(())
    }

    fn candidate(
        &mut self,
        next: &TakeNext,
        order: TakeOrder,
        passed: &mut PassedOver,
    ) -> Result<Option<Claimable>> {
        let skip = serde_json::to_string(&next.skip).unwrap_or_else(|_| "[]".into());
        let mut stmt = self
            .c
            .prepare_cached(&sql::candidate_in(next.queue.is_some(), order))?;
        let mut ps: Vec<(&str, rusqlite::types::Value)> = vec![
            (":now", self.ctx.now.into()),
            (":skip", skip.into()),
            (":me", self.ctx.actor.name.clone().into()),
        ];
        if let Some(q) = &next.queue {
            ps.push((":queue", q.clone().into()));
        }
        for (name, v) in &ps {
            if let Some(i) = stmt.parameter_index(name)? {
                stmt.raw_bind_parameter(i, v)?;
            }
        }
        // Rows are read one at a time: the usual case reads one.
        let mut rows = stmt.raw_query();
        while let Some(r) = rows.next()? {
            // The row is read for its lock anyway; reading all of it checks it is readable.
            let item = item_from_row(r)?;
            if item.unreadable.is_empty() {
                return Ok(Some(Claimable {
                    id: item.id,
                    holder: item.lock_user,
                    token: item.lock_token,
                    due_at: item.due_at,
                    priority: item.priority,
                    created_at: item.created_at,
                }));
            }
            passed.add(item);
        }
        Ok(None)
    }

    fn claim(
        &mut self,
        id: i64,
        token: i64,
        kind: EventKind,
        detail: &Value,
    ) -> Result<Option<Item>> {
        let params = rusqlite::named_params! {
            ":me": self.ctx.actor.name, ":now": self.ctx.now, ":id": id, ":token": token
        };
        let row = self
            .c
            .prepare_cached(sql::CLAIM)?
            .query_row(params, |r| Ok(item_from_row(r)))
            .optional()?;
        let Some(item) = row.transpose()? else {
            return Ok(None);
        };
        self.insert_event(id, kind, detail)?;
        Ok(Some(item))
    }

    fn write_item(&mut self, id: i64, token: i64, w: &ItemWrite<'_>) -> Result<bool> {
        use rusqlite::types::Value as V;
        let n = execute_named(
            self.c,
            &sql::fenced_update(w.set, w.fence),
            &[
                (":id", V::Integer(id)),
                (":me", V::Text(self.ctx.actor.name.clone())),
                (":token", V::Integer(token)),
                (":now", V::Integer(self.ctx.now)),
                (
                    ":value",
                    w.value.map_or(V::Null, |s| V::Text(s.to_string())),
                ),
                (":arg", w.arg.map_or(V::Null, V::Integer)),
            ],
        )?;
        if n == 0 {
            return Ok(false);
        }
        self.insert_event(id, w.kind, &w.detail)?;
        Ok(true)
    }

    fn insert_comment(&mut self, id: i64, text: &str) -> Result<i64> {
        Ok(self
            .c
            .prepare_cached(
                "INSERT INTO comments (item_id, at, author, os_user, text) \
                 VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
            )?
            .query_row(
                params![
                    id,
                    self.ctx.now,
                    self.ctx.actor.name,
                    self.ctx.actor.os_user,
                    text
                ],
                |r| r.get(0),
            )?)
    }

    fn user_names(&mut self) -> Result<Vec<String>> {
        let mut stmt = self
            .c
            .prepare_cached("SELECT name FROM users ORDER BY name")?;
        let names = stmt
            .query_map([], |r| lossy_text(r, 0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        Ok(names)
    }

    fn has_acted(&mut self, user: &str) -> Result<bool> {
        Ok(self
            .c
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM events WHERE actor = ?1)")?
            .query_row([user], |r| r.get(0))?)
    }

    fn insert_event(&mut self, id: i64, kind: EventKind, detail: &Value) -> Result<()> {
        self.c.prepare_cached(sql::INSERT_EVENT)?.execute(params![
            id,
            self.ctx.now,
            self.ctx.actor.name,
            self.ctx.actor.os_user,
            kind.as_str(),
            detail.to_string()
        ])?;
        Ok(())
    }

    fn ensure_queue(&mut self, name: &str) -> Result<()> {
        self.c.prepare_cached(sql::ENSURE_QUEUE)?.execute([name])?;
        Ok(())
    }

    fn insert_item(&mut self, item: &NewItem, keep: Option<Kept>) -> Result<Added> {
        let at = keep.map_or(self.ctx.now, |k| k.created_at);
        let id = insert::insert_one(self, item, keep.map(|k| k.id), at)?;
        let Some(id) = id else {
            // A known request id: the producer's retry gets the existing item.
            let known: i64 = self
                .c
                .prepare_cached(sql::ITEM_BY_REQUEST_ID)?
                .query_row([&item.request_id], |r| r.get(0))?;
            return Ok(Added {
                id: known,
                created: false,
                skipped: false,
            });
        };
        if keep.is_some() {
            // A kept id at or below the search index's high-water mark is neither in the
            // index nor in the scanned tail: mark it changed, so that search scans it.
            self.c
                .prepare_cached(
                    "INSERT OR IGNORE INTO search_dirty (id) \
                     SELECT ?1 WHERE ?1 <= (SELECT indexed FROM search_meta)",
                )?
                .execute([id])?;
        }
        // No `created` event: the row's created_at and created_by are the record (history
        // shows them as its first event).
        Ok(Added {
            id,
            created: true,
            skipped: false,
        })
    }

    fn insert_items(&mut self, items: &[NewItem]) -> Result<Vec<Added>> {
        let mut added = Vec::with_capacity(items.len());
        let mut chunks = items.chunks_exact(insert::CHUNK);
        for chunk in &mut chunks {
            // Rows without a request id cannot be matched to the ids the INSERT returns.
            if chunk.iter().all(|it| it.request_id.is_some()) {
                added.extend(insert::insert_chunk(self, chunk)?);
            } else {
                for it in chunk {
                    added.push(self.insert_item(it, None)?);
                }
            }
        }
        for it in chunks.remainder() {
            added.push(self.insert_item(it, None)?);
        }
        Ok(added)
    }

    fn items_above(&mut self, above: i64, ids: (i64, i64)) -> Result<u64> {
        let n: i64 = self
            .c
            .prepare_cached("SELECT count(*) FROM items WHERE id > ?1 AND id BETWEEN ?2 AND ?3")?
            .query_row(params![above, ids.0, ids.1], |r| r.get(0))?;
        Ok(n.max(0) as u64)
    }

    fn move_ids_past(&mut self, _max: i64) -> Result<()> {
        // A new item's id is one above the largest id in the table (the table has no
        // AUTOINCREMENT counter): adding the item with id `max`, as the caller does in
        // the same transaction, is what moves it.
        Ok(())
    }

    fn queue_items(&mut self, queue: &str) -> Result<u64> {
        let n: i64 = self
            .c
            .prepare_cached("SELECT count(*) FROM items WHERE queue = ?1")?
            .query_row([queue], |r| r.get(0))?;
        Ok(n.max(0) as u64)
    }

    fn move_items(&mut self, from: &str, to: &str, detail: &Value) -> Result<u64> {
        let n = self
            .c
            .prepare_cached("UPDATE items SET queue = ?2 WHERE queue = ?1")?
            .execute(params![from, to])?;
        self.c
            .prepare_cached(
                "INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
                 SELECT id, ?2, ?3, ?4, 'noted', ?5 FROM items WHERE queue = ?1",
            )?
            .execute(params![
                to,
                self.ctx.now,
                self.ctx.actor.name,
                self.ctx.actor.os_user,
                detail.to_string()
            ])?;
        Ok(n as u64)
    }

    fn drop_queue(&mut self, queue: &str, note: &AuditNote) -> Result<()> {
        // A queue's fields, texts and SLA go to the queue it was renamed to, or with it.
        for table in ["queue_fields", "queue_texts", "queue_sla", "user_queues"] {
            match note.new.get("renamed_to").and_then(|v| v.as_str()) {
                Some(to) => self
                    .c
                    .prepare_cached(&format!("UPDATE {table} SET queue = ?2 WHERE queue = ?1"))?
                    .execute(params![queue, to])?,
                None => self
                    .c
                    .prepare_cached(&format!("DELETE FROM {table} WHERE queue = ?1"))?
                    .execute([queue])?,
            };
        }
        self.c
            .prepare_cached("DELETE FROM item_counts WHERE queue = ?1")?
            .execute([queue])?;
        self.c
            .prepare_cached("DELETE FROM queues WHERE name = ?1")?
            .execute([queue])?;
        insert_audit(self, note)
    }

    fn put_queue(&mut self, q: &QueueSettings, note: &AuditNote) -> Result<()> {
        self.c
            .prepare_cached(
                "INSERT INTO queues (name, lock_seconds, warn_seconds, max_per_user, paused, \
                 take_order, park_grace_seconds, undo_seconds, review_percent, review_new) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT (name) DO UPDATE SET \
                 lock_seconds = excluded.lock_seconds, warn_seconds = excluded.warn_seconds, \
                 max_per_user = excluded.max_per_user, paused = excluded.paused, \
                 take_order = excluded.take_order, \
                 park_grace_seconds = excluded.park_grace_seconds, \
                 undo_seconds = excluded.undo_seconds, \
                 review_percent = excluded.review_percent, review_new = excluded.review_new",
            )?
            .execute(params![
                q.name,
                q.lock_seconds,
                q.warn_seconds,
                q.max_per_user,
                q.paused as i64,
                q.order.as_str(),
                q.park_grace_seconds,
                q.undo_seconds,
                q.review_percent,
                q.review_new
            ])?;
        insert_audit(self, note)
    }

    fn fields(&mut self, queue: &str) -> Result<Vec<FieldDef>> {
        Ok(self.fields_at(queue, None)?.to_vec())
    }

    fn fields_at(&mut self, queue: &str, version: Option<i64>) -> Result<Arc<[FieldDef]>> {
        let version = match version {
            Some(v) => v,
            None => fields_version(self.c)?,
        };
        if let Some(defs) = self.defs.get(queue, version) {
            return Ok(defs);
        }
        let defs: Arc<[FieldDef]> = super::reads::fields(self.c, Some(queue))?
            .into_iter()
            .map(|(_, d)| d)
            .collect();
        self.defs.put(queue, version, &defs);
        Ok(defs)
    }

    fn fields_version(&mut self) -> Result<Option<i64>> {
        fields_version(self.c).map(Some)
    }

    fn fields_checked(&mut self, id: i64) -> Result<Option<Checked>> {
        let row = self
            .c
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM queue_fields f WHERE f.queue = i.queue), \
                 (SELECT n FROM fields_version), i.fields_checked FROM items i WHERE i.id = ?1",
            )?
            .query_row([id], |r| {
                let digest = match r.get_ref(2)? {
                    rusqlite::types::ValueRef::Blob(b) => <[u8; 16]>::try_from(b).ok(),
                    _ => None,
                };
                Ok(Checked {
                    has_fields: r.get(0)?,
                    version: r.get(1)?,
                    digest,
                })
            })
            .optional()?;
        // No such item: nothing to check (the fenced write explains).
        Ok(Some(row.unwrap_or(Checked {
            has_fields: false,
            version: 0,
            digest: None,
        })))
    }

    fn field_record(
        &mut self,
        id: i64,
        token: i64,
    ) -> Result<Option<(FieldRecord, Option<Checked>)>> {
        // One statement for what a save needs (a notes save reads the whole item): the
        // holder's fence as a test, the queue, the params, and the digest lookup.
        static SQL: LazyLock<String> = LazyLock::new(|| {
            format!(
                "SELECT i.queue, i.params, coalesce({}, 0), \
                 EXISTS (SELECT 1 FROM queue_fields f WHERE f.queue = i.queue), \
                 (SELECT n FROM fields_version), i.fields_checked FROM items i WHERE i.id = :id",
                FENCE_HOLDER_OR_REVIEWER
                    .replace("lock_", "i.lock_")
                    .replace("state", "i.state")
            )
        });
        let row = self
            .c
            .prepare_cached(&SQL)?
            .query_row(
                named_params! {":id": id, ":me": self.ctx.actor.name, ":token": token},
                |r| {
                    let digest = match r.get_ref(5)? {
                        rusqlite::types::ValueRef::Blob(b) => <[u8; 16]>::try_from(b).ok(),
                        _ => None,
                    };
                    let record = FieldRecord {
                        queue: lossy_text(r, 0)?,
                        params: lossy_text(r, 1)?,
                        held: r.get(2)?,
                    };
                    let checked = Checked {
                        has_fields: r.get(3)?,
                        version: r.get(4)?,
                        digest,
                    };
                    Ok((record, Some(checked)))
                },
            )
            .optional()?;
        Ok(row)
    }

    fn write_params(
        &mut self,
        id: i64,
        token: i64,
        text: &str,
        digest: Option<&[u8; 16]>,
        detail: &Value,
    ) -> Result<bool> {
        // The params and the digest in one statement (a stale digest is cleared: the
        // params it was of are gone).
        static SQL: LazyLock<String> = LazyLock::new(|| {
            sql::fenced_update(
                &format!("{SET_PARAMS}, fields_checked = :digest"),
                FENCE_HOLDER_OR_REVIEWER,
            )
        });
        let n = self.c.prepare_cached(&SQL)?.execute(named_params! {
            ":id": id,
            ":me": self.ctx.actor.name,
            ":token": token,
            ":value": text,
            ":digest": digest.map(|d| &d[..]),
        })?;
        if n == 0 {
            return Ok(false);
        }
        self.insert_event(id, EventKind::FieldChanged, detail)?;
        Ok(true)
    }

    fn put_fields_checked(&mut self, id: i64, digest: &[u8; 16]) -> Result<()> {
        self.c
            .prepare_cached("UPDATE items SET fields_checked = ?2 WHERE id = ?1")?
            .execute(params![id, &digest[..]])?;
        Ok(())
    }

    fn item_fields(&mut self, id: i64) -> Result<Vec<FieldDef>> {
        super::reads::item_fields(self.c, id)
    }

    fn put_field(
        &mut self,
        queue: &str,
        def: &FieldDef,
        order: &[String],
        note: &AuditNote,
    ) -> Result<()> {
        self.c
            .prepare_cached(
                "INSERT INTO queue_fields (queue, name, position, spec) VALUES (?1, ?2, 0, ?3) \
                 ON CONFLICT (queue, name) DO UPDATE SET spec = excluded.spec",
            )?
            .execute(params![queue, def.name, def.spec_json().to_string()])?;
        for (i, name) in order.iter().enumerate() {
            self.c
                .prepare_cached(
                    "UPDATE queue_fields SET position = ?3 WHERE queue = ?1 AND name = ?2 \
                     AND position <> ?3",
                )?
                .execute(params![queue, name, i as i64 + 1])?;
        }
        insert_audit(self, note)
    }

    fn drop_field(&mut self, queue: &str, name: &str, note: &AuditNote) -> Result<()> {
        let pos: i64 = self
            .c
            .prepare_cached(
                "DELETE FROM queue_fields WHERE queue = ?1 AND name = ?2 RETURNING position",
            )?
            .query_row(params![queue, name], |r| r.get(0))?;
        self.c
            .prepare_cached(
                "UPDATE queue_fields SET position = position - 1 WHERE queue = ?1 AND position > ?2",
            )?
            .execute(params![queue, pos])?;
        insert_audit(self, note)
    }

    fn sla(&mut self, queue: &str) -> Result<Option<Sla>> {
        Ok(super::reads::slas(self.c, Some(queue))?.pop())
    }

    fn put_sla(&mut self, queue: &str, sla: Option<&Sla>, note: &AuditNote) -> Result<()> {
        match sla.map(Sla::spec) {
            Some(s) => self
                .c
                .prepare_cached(
                    "INSERT INTO queue_sla (queue, sla_ms, hours, tz, holidays) \
                     VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (queue) DO UPDATE SET \
                     sla_ms = excluded.sla_ms, hours = excluded.hours, tz = excluded.tz, \
                     holidays = excluded.holidays",
                )?
                .execute(params![
                    queue,
                    s.sla_ms,
                    s.hours,
                    s.tz,
                    s.holidays.join("\n")
                ])?,
            None => self
                .c
                .prepare_cached("DELETE FROM queue_sla WHERE queue = ?1")?
                .execute([queue])?,
        };
        insert_audit(self, note)
    }

    fn texts(&mut self, queue: &str) -> Result<Vec<CannedText>> {
        super::reads::texts(self.c, Some(queue))
    }

    fn put_text(&mut self, t: &CannedText, note: &AuditNote) -> Result<()> {
        self.c
            .prepare_cached(
                "INSERT INTO queue_texts (queue, code, purpose, text) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (queue, code) DO UPDATE SET purpose = excluded.purpose, \
                 text = excluded.text",
            )?
            .execute(params![t.queue, t.code, t.purpose.as_str(), t.text])?;
        insert_audit(self, note)
    }

    fn drop_text(&mut self, queue: &str, code: &str, note: &AuditNote) -> Result<()> {
        self.c
            .prepare_cached("DELETE FROM queue_texts WHERE queue = ?1 AND code = ?2")?
            .execute(params![queue, code])?;
        insert_audit(self, note)
    }

    fn put_role(&mut self, user: &str, role: Role, note: &AuditNote) -> Result<()> {
        self.c
            .prepare_cached(
                "INSERT INTO users (name, role) VALUES (?1, ?2) \
                 ON CONFLICT (name) DO UPDATE SET role = excluded.role",
            )?
            .execute(params![user, role.as_str()])?;
        insert_audit(self, note)
    }

    fn put_login(&mut self, user: &str, login: Option<&str>, note: &AuditNote) -> Result<()> {
        self.c
            .prepare_cached(
                "INSERT INTO users (name, login) VALUES (?1, ?2) \
                 ON CONFLICT (name) DO UPDATE SET login = excluded.login",
            )?
            .execute(params![user, login])?;
        insert_audit(self, note)
    }

    fn swap_last_seen(&mut self) -> Result<Option<Millis>> {
        let prev: Option<Option<Millis>> = self
            .c
            .prepare_cached("SELECT last_seen FROM users WHERE name = ?1")?
            .query_row([&self.ctx.actor.name], |r| r.get(0))
            .optional()?;
        self.c
            .prepare_cached(
                "INSERT INTO users (name, last_seen) VALUES (?1, ?2) \
                 ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen",
            )?
            .execute(params![self.ctx.actor.name, self.ctx.now])?;
        Ok(prev.flatten())
    }

    fn parked(
        &mut self,
        owner: Option<&str>,
        at: Millis,
        past_grace: bool,
        limit: usize,
    ) -> Result<Vec<Item>> {
        let mut stmt = self.c.prepare_cached(crate::store::sql::PARKED_DUE)?;
        let mut rows = stmt.query(params![at, past_grace, owner, limit as i64])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(item_from_row(r)?);
        }
        Ok(out)
    }

    fn queue_of(&mut self, id: i64) -> Result<Option<QueueSettings>> {
        let mut stmt = self.c.prepare_cached(crate::store::sql::QUEUE_OF)?;
        let mut rows = stmt.query([id])?;
        match rows.next()? {
            Some(r) => Ok(Some(crate::store::rows::queue_from(
                &mut super::rows::Cols::new(r),
            )?)),
            None => Ok(None),
        }
    }

    fn reviewable(&mut self, queue: Option<&str>) -> Result<Option<Item>> {
        let mut stmt = self.c.prepare_cached(crate::store::sql::REVIEWABLE)?;
        let mut rows = stmt.query(params![queue, self.ctx.now, self.ctx.actor.name])?;
        match rows.next()? {
            Some(r) => Ok(Some(item_from_row(r)?)),
            None => Ok(None),
        }
    }

    fn completions_in(&mut self, queue: &str, cap: i64) -> Result<i64> {
        Ok(self
            .c
            .prepare_cached(crate::store::sql::COMPLETIONS_IN)?
            .query_row(params![self.ctx.actor.name, queue, cap], |r| r.get(0))?)
    }

    fn events_at(&mut self, at: Millis) -> Result<Vec<Event>> {
        let sql = format!(
            "SELECT {} {}",
            sql::EVENT_COLS,
            crate::store::sql::EVENTS_AT
        );
        let mut stmt = self.c.prepare_cached(&sql)?;
        let mut rows = stmt.query(params![self.ctx.actor.name, at])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(event_from_row(r)?);
        }
        Ok(out)
    }

    fn reap(&mut self, limit: usize) -> Result<usize> {
        let expired: Vec<(i64, String, i64)> = self
            .c
            .prepare_cached(&format!(
                "SELECT id, lock_user, lock_token FROM items \
                 WHERE lock_user IS NOT NULL AND {} ORDER BY lock_expires_at LIMIT CAST(:limit AS INTEGER)",
                sql::EXPIRED
            ))?
            .query_map(
                rusqlite::named_params! {":now": self.ctx.now, ":limit": limit as i64},
                |r| Ok((r.get(0)?, lossy_text(r, 1)?, r.get(2)?)),
            )?
            .collect::<rusqlite::Result<_>>()?;
        for (id, holder, token) in &expired {
            self.c
                .prepare_cached(&sql::fenced_update(SET_RELEASE, FENCE_TOKEN))?
                .execute(rusqlite::named_params! {":id": id, ":token": token})?;
            self.insert_event(
                *id,
                EventKind::Expired,
                &json!({"from": holder, "token": token}),
            )?;
        }
        Ok(expired.len())
    }
}
