//! `caseload migrate-to URL`: copies a whole SQLite database (queues, users, items with
//! their ids, locks and notes, and the full history) into an empty PostgreSQL schema in
//! one transaction, so a team can move without losing its audit trail.

use rusqlite::Connection;

use super::error::{Result, StoreError};
use super::postgres::{PgStore, map_err};

/// What was copied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Copied {
    pub queues: u64,
    pub users: u64,
    pub items: u64,
    pub events: u64,
}

fn sq(e: rusqlite::Error) -> StoreError {
    super::sqlite::map_err(e)
}

/// Copies everything in `src` into `dst`, whose schema must hold no items yet. All or
/// nothing: one PostgreSQL transaction.
pub fn sqlite_to_postgres(src: &Connection, dst: &mut PgStore) -> Result<Copied> {
    let client = dst.client_for_copy()?;
    let mut tx = client.transaction().map_err(|e| map_err(&e))?;
    let pg = |e: postgres::Error| map_err(&e);
    let existing: i64 = tx
        .query_one("SELECT count(*) FROM items", &[])
        .map_err(pg)?
        .get(0);
    if existing > 0 {
        return Err(StoreError::Invalid(format!(
            "the PostgreSQL database already holds {existing} items; migrate-to copies into \
             an empty one only"
        )));
    }
    let mut copied = Copied::default();

    let mut stmt = src
        .prepare("SELECT name, lock_seconds, warn_seconds, max_per_user, paused FROM queues")
        .map_err(sq)?;
    let mut rows = stmt.query([]).map_err(sq)?;
    let ins = tx
        .prepare(
            "INSERT INTO queues (name, lock_seconds, warn_seconds, max_per_user, paused) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO UPDATE SET \
             lock_seconds = excluded.lock_seconds, warn_seconds = excluded.warn_seconds, \
             max_per_user = excluded.max_per_user, paused = excluded.paused",
        )
        .map_err(pg)?;
    while let Some(r) = rows.next().map_err(sq)? {
        let (name, lock, warn, max, paused): (String, i64, i64, Option<i64>, i64) = (
            r.get(0).map_err(sq)?,
            r.get(1).map_err(sq)?,
            r.get(2).map_err(sq)?,
            r.get(3).map_err(sq)?,
            r.get(4).map_err(sq)?,
        );
        tx.execute(&ins, &[&name, &lock, &warn, &max, &(paused != 0)])
            .map_err(pg)?;
        copied.queues += 1;
    }

    // Roles carry over; whoever runs the move stays a supervisor of the new database.
    let mut stmt = src
        .prepare("SELECT name, role, last_seen FROM users")
        .map_err(sq)?;
    let mut rows = stmt.query([]).map_err(sq)?;
    let ins = tx
        .prepare(
            "INSERT INTO users (name, role, last_seen) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen, role = \
             CASE WHEN users.role = 'supervisor' THEN 'supervisor' ELSE excluded.role END",
        )
        .map_err(pg)?;
    while let Some(r) = rows.next().map_err(sq)? {
        let (name, role, seen): (String, String, Option<i64>) = (
            r.get(0).map_err(sq)?,
            r.get(1).map_err(sq)?,
            r.get(2).map_err(sq)?,
        );
        tx.execute(&ins, &[&name, &role, &seen]).map_err(pg)?;
        copied.users += 1;
    }

    let mut stmt = src
        .prepare(
            "SELECT id, queue, request_id, title, body, params, priority, due_at, state, \
             lock_user, lock_time, lock_token, notes, result, error, created_at, created_by, \
             finished_at, finished_by FROM items ORDER BY id",
        )
        .map_err(sq)?;
    let mut rows = stmt.query([]).map_err(sq)?;
    let ins = tx
        .prepare(
            "INSERT INTO items (id, queue, request_id, title, body, params, priority, due_at, \
             state, lock_user, lock_time, lock_token, notes, result, error, created_at, \
             created_by, finished_at, finished_by) VALUES ($1, $2, $3, $4, $5, \
             $6::text::json, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)",
        )
        .map_err(pg)?;
    while let Some(r) = rows.next().map_err(sq)? {
        let id: i64 = r.get(0).map_err(sq)?;
        let queue: String = r.get(1).map_err(sq)?;
        let request_id: Option<String> = r.get(2).map_err(sq)?;
        let title: String = r.get(3).map_err(sq)?;
        let body: String = r.get(4).map_err(sq)?;
        let params: String = r.get(5).map_err(sq)?;
        let priority: i64 = r.get(6).map_err(sq)?;
        let due_at: Option<i64> = r.get(7).map_err(sq)?;
        let state: String = r.get(8).map_err(sq)?;
        let lock_user: Option<String> = r.get(9).map_err(sq)?;
        let lock_time: Option<i64> = r.get(10).map_err(sq)?;
        let lock_token: i64 = r.get(11).map_err(sq)?;
        let notes: String = r.get(12).map_err(sq)?;
        let result: Option<String> = r.get(13).map_err(sq)?;
        let error: Option<String> = r.get(14).map_err(sq)?;
        let created_at: i64 = r.get(15).map_err(sq)?;
        let created_by: String = r.get(16).map_err(sq)?;
        let finished_at: Option<i64> = r.get(17).map_err(sq)?;
        let finished_by: Option<String> = r.get(18).map_err(sq)?;
        tx.execute(
            &ins,
            &[
                &id,
                &queue,
                &request_id,
                &title,
                &body,
                &params,
                &priority,
                &due_at,
                &state,
                &lock_user,
                &lock_time,
                &lock_token,
                &notes,
                &result,
                &error,
                &created_at,
                &created_by,
                &finished_at,
                &finished_by,
            ],
        )
        .map_err(|e| {
            StoreError::Invalid(format!("item #{id} cannot be copied: {}", map_err(&e)))
        })?;
        copied.items += 1;
    }

    let mut stmt = src
        .prepare("SELECT id, item_id, at, actor, os_user, kind, detail FROM events ORDER BY id")
        .map_err(sq)?;
    let mut rows = stmt.query([]).map_err(sq)?;
    let ins = tx
        .prepare(
            "INSERT INTO events (id, item_id, at, actor, os_user, kind, detail) \
             VALUES ($1, $2, $3, $4, $5, $6, $7::text::json)",
        )
        .map_err(pg)?;
    while let Some(r) = rows.next().map_err(sq)? {
        let (id, item_id, at): (i64, i64, i64) = (
            r.get(0).map_err(sq)?,
            r.get(1).map_err(sq)?,
            r.get(2).map_err(sq)?,
        );
        let (actor, os_user, kind, detail): (String, String, String, String) = (
            r.get(3).map_err(sq)?,
            r.get(4).map_err(sq)?,
            r.get(5).map_err(sq)?,
            r.get(6).map_err(sq)?,
        );
        tx.execute(
            &ins,
            &[&id, &item_id, &at, &actor, &os_user, &kind, &detail],
        )
        .map_err(pg)?;
        copied.events += 1;
    }

    // New ids continue after the copied ones.
    tx.batch_execute(
        "SELECT setval(pg_get_serial_sequence('items', 'id'), \
             coalesce((SELECT max(id) FROM items), 0) + 1, false); \
         SELECT setval(pg_get_serial_sequence('events', 'id'), \
             coalesce((SELECT max(id) FROM events), 0) + 1, false); \
         SELECT pg_notify('caseload', coalesce(current_schema(), ''))",
    )
    .map_err(pg)?;
    tx.commit().map_err(pg)?;
    Ok(copied)
}
