//! `caseload migrate-to URL`: copies a whole SQLite database (queues, users, items with
//! their ids, locks and notes, and the full history) into an empty PostgreSQL schema in
//! one transaction, so a team can move without losing its audit trail.

use std::borrow::Cow;

use postgres::types::ToSql;
use rusqlite::Connection;

use super::error::{Result, StoreError};
use super::postgres::sql::numbered;
use super::postgres::{PgStore, boxed, connection_reason, is_connection_error, map_err};
use super::sql::{ITEM_COLS, InsertParam, insert_param, insert_stored_item};
use super::sqlite::rows::item_from_row;
use crate::domain::Item;
use crate::domain::fields::named;

/// What was copied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Copied {
    pub queues: u64,
    pub users: u64,
    pub items: u64,
    pub events: u64,
    pub comments: u64,
    /// Field definitions of the queues.
    pub fields: u64,
    /// Ready-made texts of the queues.
    pub texts: u64,
    /// SLAs of the queues.
    pub slas: u64,
    /// Duplicate keys of items, and judged pairs (issue 27).
    pub keys: u64,
    pub pairs: u64,
}

fn sq(e: rusqlite::Error) -> StoreError {
    super::sqlite::map_err(e)
}

/// How far the copy got, for a message when the connection is lost.
struct Progress<'a> {
    shown: &'a str,
    items_total: i64,
    copied: Copied,
}

impl Progress<'_> {
    /// A server error at this point of the copy. A lost connection is not the fault of
    /// the row being written: it names the server, says nothing was copied (the server
    /// rolls the one transaction back) and how to resume.
    fn failed(&self, e: &postgres::Error) -> StoreError {
        if !is_connection_error(e) {
            return map_err(e);
        }
        let Copied { items, events, .. } = self.copied;
        StoreError::Connection(format!(
            "the connection to {} was lost while copying ({items} of {} items and {events} \
             events sent); nothing was copied: the copy is one transaction and the server \
             rolled it back; run the same `caseload migrate-to` again ({})",
            self.shown,
            self.items_total,
            connection_reason(e)
        ))
    }

    /// The connection was lost while the copy was being committed.
    fn commit_lost(&self, e: &postgres::Error) -> StoreError {
        if !is_connection_error(e) {
            return map_err(e);
        }
        StoreError::OutcomeUnknown(format!(
            "the connection to {shown} was lost while committing the copy of {} items; the \
             server may have applied it: `caseload --db '{shown}' list --state all --limit 1` \
             shows whether the items arrived (then the move is done; check it with \
             `caseload --db '{shown}' check`); if it shows none, run the same `caseload \
             migrate-to` again — it never copies into a database that holds items ({})",
            self.copied.items,
            connection_reason(e),
            shown = self.shown,
        ))
    }
}

/// One table of the copy: the rows read from SQLite and the insert that writes each.
struct Table {
    select: Cow<'static, str>,
    insert: Cow<'static, str>,
}

/// A row's values for the insert, and what to call the row when the server refuses it
/// ("item #7"; `None`: the server's error as it is).
type Values = (Option<String>, Vec<Box<dyn ToSql + Sync>>);

const QUEUES: Table = Table {
    select: Cow::Borrowed(
        "SELECT name, lock_seconds, warn_seconds, max_per_user, paused, take_order, \
         park_grace_seconds, undo_seconds, review_percent, review_new FROM queues",
    ),
    insert: Cow::Borrowed(
        "INSERT INTO queues (name, lock_seconds, warn_seconds, max_per_user, paused, \
         take_order, park_grace_seconds, undo_seconds, review_percent, review_new) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (name) DO UPDATE SET \
         lock_seconds = excluded.lock_seconds, warn_seconds = excluded.warn_seconds, \
         max_per_user = excluded.max_per_user, paused = excluded.paused, \
         take_order = excluded.take_order, park_grace_seconds = excluded.park_grace_seconds, \
         undo_seconds = excluded.undo_seconds, review_percent = excluded.review_percent, \
         review_new = excluded.review_new",
    ),
};

// Roles carry over; whoever runs the move stays a supervisor of the new database.
const USERS: Table = Table {
    select: Cow::Borrowed("SELECT name, role, last_seen FROM users"),
    insert: Cow::Borrowed(
        "INSERT INTO users (name, role, last_seen) VALUES ($1, $2, $3) \
         ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen, role = \
         CASE WHEN users.role = 'supervisor' THEN 'supervisor' ELSE excluded.role END",
    ),
};

/// The items: their columns (`ITEM_COLS`) and the creator's OS login, which no field of
/// `Item` holds; the insert's placeholders are named and numbered by `numbered`, and
/// [`read_item`] gives the values in the order of those names.
fn items_table() -> (Table, Vec<String>) {
    let (insert, names) = numbered(&insert_stored_item("::text::json"));
    (
        Table {
            select: format!("SELECT {ITEM_COLS}, created_os FROM items ORDER BY id").into(),
            insert: insert.into(),
        },
        names,
    )
}

const EVENTS: Table = Table {
    select: Cow::Borrowed(
        "SELECT id, item_id, at, actor, os_user, kind, detail FROM events ORDER BY id",
    ),
    insert: Cow::Borrowed(
        "INSERT INTO events (id, item_id, at, actor, os_user, kind, detail) \
         VALUES ($1, $2, $3, $4, $5, $6, $7::text::json)",
    ),
};

const COMMENTS: Table = Table {
    select: Cow::Borrowed(
        "SELECT id, item_id, at, author, os_user, text FROM comments ORDER BY id",
    ),
    insert: Cow::Borrowed(
        "INSERT INTO comments (id, item_id, at, author, os_user, text) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    ),
};

const FIELDS: Table = Table {
    select: Cow::Borrowed("SELECT queue, name, position, spec FROM queue_fields"),
    insert: Cow::Borrowed(
        "INSERT INTO queue_fields (queue, name, position, spec) VALUES ($1, $2, $3, $4::text::json)",
    ),
};

const KEYS: Table = Table {
    select: Cow::Borrowed("SELECT item_id, field, key FROM item_keys"),
    insert: Cow::Borrowed("INSERT INTO item_keys (item_id, field, key) VALUES ($1, $2, $3)"),
};

fn read_key(r: &rusqlite::Row<'_>) -> Result<Values> {
    Ok((
        None,
        vec![
            Box::new(r.get::<_, i64>(0).map_err(sq)?),
            Box::new(r.get::<_, String>(1).map_err(sq)?),
            Box::new(r.get::<_, String>(2).map_err(sq)?),
        ],
    ))
}

const PAIRS: Table = Table {
    select: Cow::Borrowed("SELECT low, high, verdict, actor, at FROM item_pairs"),
    insert: Cow::Borrowed(
        "INSERT INTO item_pairs (low, high, verdict, actor, at) VALUES ($1, $2, $3, $4, $5)",
    ),
};

fn read_pair(r: &rusqlite::Row<'_>) -> Result<Values> {
    let text = |i| r.get::<_, String>(i).map_err(sq);
    Ok((
        None,
        vec![
            Box::new(r.get::<_, i64>(0).map_err(sq)?),
            Box::new(r.get::<_, i64>(1).map_err(sq)?),
            Box::new(text(2)?),
            Box::new(text(3)?),
            Box::new(r.get::<_, i64>(4).map_err(sq)?),
        ],
    ))
}

/// Copies every row of one table, counting each in `count`.
fn copy_table(
    src: &Connection,
    tx: &mut postgres::Transaction<'_>,
    at: &mut Progress<'_>,
    table: &Table,
    read: &dyn Fn(&rusqlite::Row<'_>) -> Result<Values>,
    count: fn(&mut Copied) -> &mut u64,
) -> Result<()> {
    let mut stmt = src.prepare(&table.select).map_err(sq)?;
    let mut rows = stmt.query([]).map_err(sq)?;
    let ins = tx.prepare(&table.insert).map_err(|e| at.failed(&e))?;
    while let Some(r) = rows.next().map_err(sq)? {
        let (what, values) = read(r)?;
        let params: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v.as_ref()).collect();
        tx.execute(&ins, &params)
            .map_err(|e| match (at.failed(&e), &what) {
                (lost @ StoreError::Connection(_), _) | (lost, None) => lost,
                (other, Some(what)) => {
                    StoreError::Invalid(format!("{what} cannot be copied: {other}"))
                }
            })?;
        *count(&mut at.copied) += 1;
    }
    Ok(())
}

fn read_queue(r: &rusqlite::Row<'_>) -> Result<Values> {
    let paused: i64 = r.get(4).map_err(sq)?;
    Ok((
        None,
        vec![
            Box::new(r.get::<_, String>(0).map_err(sq)?),
            Box::new(r.get::<_, i64>(1).map_err(sq)?),
            Box::new(r.get::<_, i64>(2).map_err(sq)?),
            Box::new(r.get::<_, Option<i64>>(3).map_err(sq)?),
            Box::new(paused != 0),
            Box::new(r.get::<_, String>(5).map_err(sq)?),
            Box::new(r.get::<_, i64>(6).map_err(sq)?),
            Box::new(r.get::<_, i64>(7).map_err(sq)?),
            Box::new(r.get::<_, i64>(8).map_err(sq)?),
            Box::new(r.get::<_, i64>(9).map_err(sq)?),
        ],
    ))
}

const TEXTS: Table = Table {
    select: Cow::Borrowed("SELECT queue, code, purpose, text FROM queue_texts"),
    insert: Cow::Borrowed(
        "INSERT INTO queue_texts (queue, code, purpose, text) VALUES ($1, $2, $3, $4)",
    ),
};

const SLAS: Table = Table {
    select: Cow::Borrowed("SELECT queue, sla_ms, hours, tz, holidays FROM queue_sla"),
    insert: Cow::Borrowed(
        "INSERT INTO queue_sla (queue, sla_ms, hours, tz, holidays) VALUES ($1, $2, $3, $4, $5)",
    ),
};

fn read_sla(r: &rusqlite::Row<'_>) -> Result<Values> {
    let text = |i| r.get::<_, String>(i).map_err(sq);
    Ok((
        None,
        vec![
            Box::new(text(0)?),
            Box::new(r.get::<_, i64>(1).map_err(sq)?),
            Box::new(text(2)?),
            Box::new(text(3)?),
            Box::new(text(4)?),
        ],
    ))
}

fn read_text(r: &rusqlite::Row<'_>) -> Result<Values> {
    let text = |i| r.get::<_, String>(i).map_err(sq);
    Ok((
        None,
        vec![
            Box::new(text(0)?),
            Box::new(text(1)?),
            Box::new(text(2)?),
            Box::new(text(3)?),
        ],
    ))
}

fn read_field(r: &rusqlite::Row<'_>) -> Result<Values> {
    Ok((
        None,
        vec![
            Box::new(r.get::<_, String>(0).map_err(sq)?),
            Box::new(r.get::<_, String>(1).map_err(sq)?),
            Box::new(r.get::<_, i64>(2).map_err(sq)?),
            Box::new(r.get::<_, String>(3).map_err(sq)?),
        ],
    ))
}

fn read_user(r: &rusqlite::Row<'_>) -> Result<Values> {
    Ok((
        None,
        vec![
            Box::new(r.get::<_, String>(0).map_err(sq)?),
            Box::new(r.get::<_, String>(1).map_err(sq)?),
            Box::new(r.get::<_, Option<i64>>(2).map_err(sq)?),
        ],
    ))
}

/// An item, refused whole when a column cannot be read (nothing is copied then); its
/// values in the order of `names` (the insert's parameters, see [`items_table`]).
fn read_item(r: &rusqlite::Row<'_>, names: &[String]) -> Result<Values> {
    let it = item_from_row(r)?;
    // After the item's columns: the creator's OS login.
    let created_os: Option<String> = r.get(Item::COLUMNS.len()).map_err(sq)?;
    if let Some(why) = it.unreadable_summary() {
        return Err(StoreError::Invalid(format!(
            "item #{} cannot be copied: {why}; nothing was copied (`caseload show {}` \
             shows what is readable, `caseload check` lists every such item)",
            it.id, it.id
        )));
    }
    let mut values: Vec<Box<dyn ToSql + Sync>> = Vec::with_capacity(names.len());
    for n in names {
        values.push(match insert_param(n) {
            Some(InsertParam::Column { field, .. }) => boxed(it.cell(field.col)),
            // `created_at` and `created_by` are the item's; `created_os` no field holds.
            Some(InsertParam::Created(c)) => match named(c) {
                Some(f) => boxed(it.cell(f.col)),
                None => Box::new(created_os.clone()),
            },
            None => {
                return Err(StoreError::Database(format!(
                    "the copy's item insert has a parameter {n} caseload cannot bind"
                )));
            }
        });
    }
    Ok((Some(format!("item #{}", it.id)), values))
}

/// A row of the history, an event or a comment (`what`): its id, its item, its time, then
/// `texts` text columns; a column that cannot be read is named with the row and its item.
fn read_history(r: &rusqlite::Row<'_>, what: &str, texts: usize) -> Result<Values> {
    let (id, item_id, when): (i64, i64, i64) = (
        r.get(0).map_err(sq)?,
        r.get(1).map_err(sq)?,
        r.get(2).map_err(sq)?,
    );
    let named = format!("{what} #{id} of item #{item_id}");
    let mut values: Vec<Box<dyn ToSql + Sync>> =
        vec![Box::new(id), Box::new(item_id), Box::new(when)];
    for i in 3..3 + texts {
        let text: String = r.get(i).map_err(|e| {
            StoreError::Invalid(format!(
                "{named} cannot be copied: {}; nothing was copied (`caseload check` lists \
                 unreadable rows)",
                sq(e)
            ))
        })?;
        values.push(Box::new(text));
    }
    Ok((Some(named), values))
}

fn read_event(r: &rusqlite::Row<'_>) -> Result<Values> {
    read_history(r, "event", 4)
}

fn read_comment(r: &rusqlite::Row<'_>) -> Result<Values> {
    read_history(r, "comment", 3)
}

/// Copies the audit of roles, bindings and queue settings. Login bindings do not come
/// along: on SQLite they name OS logins, on PostgreSQL database roles.
fn copy_audit(
    src: &Connection,
    tx: &mut postgres::Transaction<'_>,
    at: &Progress<'_>,
) -> Result<()> {
    let mut stmt = src
        .prepare(&format!(
            "SELECT {} FROM audit ORDER BY id",
            super::rows::AUDIT_COLS
        ))
        .map_err(sq)?;
    let mut rows = stmt.query([]).map_err(sq)?;
    let ins = tx
        .prepare(
            "INSERT INTO audit (id, at, actor, real_user, kind, subject, old_value, new_value) \
             VALUES ($1, $2, $3, $4, $5, $6, $7::text::json, $8::text::json)",
        )
        .map_err(|e| at.failed(&e))?;
    while let Some(r) = rows.next().map_err(sq)? {
        let a = super::rows::audit_from(&mut super::sqlite::rows::Cols::new(r))?;
        let old = (!a.old.is_null()).then(|| a.old.to_string());
        tx.execute(
            &ins,
            &[
                &a.id,
                &a.at,
                &a.actor,
                &a.real,
                &a.kind.as_str(),
                &a.subject,
                &old,
                &a.new.to_string(),
            ],
        )
        .map_err(|e| at.failed(&e))?;
    }

    Ok(())
}

/// Copies everything in `src` (one moment of it) into `dst`, whose schema must hold no
/// items yet. All or nothing: one PostgreSQL transaction.
pub fn sqlite_to_postgres(src: &Connection, dst: &mut PgStore) -> Result<Copied> {
    // One moment of the file, though others may go on writing to it: every table is read
    // in one read transaction (its snapshot is taken by the first read, below), else the
    // keys of an item added meanwhile arrive without their item.
    let _snapshot = src.unchecked_transaction().map_err(sq)?;
    let items_total: i64 = src
        .query_row("SELECT count(*) FROM items", [], |r| r.get(0))
        .map_err(sq)?;
    let shown = dst.shown().to_string();
    let mut at = Progress {
        shown: &shown,
        items_total,
        copied: Copied::default(),
    };
    let client = dst.client_for_copy()?;
    let mut tx = client.transaction().map_err(|e| at.failed(&e))?;
    let existing: i64 = tx
        .query_one("SELECT count(*) FROM items", &[])
        .map_err(|e| at.failed(&e))?
        .get(0);
    if existing > 0 {
        return Err(StoreError::Invalid(format!(
            "the PostgreSQL database already holds {existing} items; migrate-to copies into \
             an empty one only"
        )));
    }

    copy_table(src, &mut tx, &mut at, &QUEUES, &read_queue, |c| {
        &mut c.queues
    })?;
    copy_table(src, &mut tx, &mut at, &FIELDS, &read_field, |c| {
        &mut c.fields
    })?;
    copy_table(src, &mut tx, &mut at, &TEXTS, &read_text, |c| &mut c.texts)?;
    copy_table(src, &mut tx, &mut at, &SLAS, &read_sla, |c| &mut c.slas)?;
    copy_table(src, &mut tx, &mut at, &USERS, &read_user, |c| &mut c.users)?;
    let (items, names) = items_table();
    copy_table(
        src,
        &mut tx,
        &mut at,
        &items,
        &|r| read_item(r, &names),
        |c| &mut c.items,
    )?;
    copy_table(src, &mut tx, &mut at, &EVENTS, &read_event, |c| {
        &mut c.events
    })?;
    copy_table(src, &mut tx, &mut at, &COMMENTS, &read_comment, |c| {
        &mut c.comments
    })?;
    copy_table(src, &mut tx, &mut at, &KEYS, &read_key, |c| &mut c.keys)?;
    copy_table(src, &mut tx, &mut at, &PAIRS, &read_pair, |c| &mut c.pairs)?;

    copy_audit(src, &mut tx, &at)?;

    // The holds the events' trigger made as each was inserted measured every finish
    // against the item row as it is at the end (a due time moved later by a park or an
    // edit, say); the figures are the history's, as `check` defines them: made again.
    for sql in super::sql::rebuild_figures() {
        tx.execute(sql.as_str(), &[]).map_err(|e| at.failed(&e))?;
    }

    // New ids continue after the copied ones.
    tx.batch_execute(
        "SELECT setval(pg_get_serial_sequence('items', 'id'), \
             coalesce((SELECT max(id) FROM items), 0) + 1, false); \
         SELECT setval(pg_get_serial_sequence('events', 'id'), \
             coalesce((SELECT max(id) FROM events), 0) + 1, false); \
         SELECT setval(pg_get_serial_sequence('audit', 'id'), \
             coalesce((SELECT max(id) FROM audit), 0) + 1, false); \
         SELECT setval(pg_get_serial_sequence('comments', 'id'), \
             coalesce((SELECT max(id) FROM comments), 0) + 1, false); \
         SELECT caseload_changed()",
    )
    .map_err(|e| at.failed(&e))?;
    tx.commit().map_err(|e| at.commit_lost(&e))?;
    Ok(at.copied)
}
