//! The SQLite store's reads: items, windows of lists, counts, history, lost locks and
//! export. Reads run outside any write transaction (WAL: they never wait for writers).

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::rows::{Cols, event_from_row, item_from_row, lossy_opt_text, lossy_text};
use super::search_plan::PlanCache;
use super::sql::{ITEM_COLS, KEPT_COUNT};
use crate::domain::queue_fields::FieldDef;
use crate::domain::sla::Sla;
use crate::domain::texts::CannedText;
use crate::domain::{
    Access, AuditEntry, Comment, Event, EventKind, Item, Millis, QueueSettings, Role, TakeOrder,
    UserInfo,
};
use crate::store::error::{Result, StoreError};
use crate::store::list::{
    Dialect, ListSql, OpenOrder, Param, Window, check_qualifiers, count_limit, kept_count, list_sql,
};
use crate::store::rows;
use crate::store::sql::kinds_sql;
use crate::store::{ExportFilter, ListFilter, LostLock};

/// Runs a query whose rows are read by `read`; its errors (corruption included) end it.
fn collect<T>(
    c: &Connection,
    sql: &str,
    ps: impl rusqlite::Params,
    read: fn(&Row<'_>) -> Result<T>,
) -> Result<Vec<T>> {
    let mut stmt = c.prepare_cached(sql)?;
    let mut rows = stmt.query(ps)?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        out.push(read(r)?);
    }
    Ok(out)
}

pub(super) fn load_item(c: &Connection, id: i64) -> Result<Option<Item>> {
    Ok(collect(
        c,
        &format!("SELECT {ITEM_COLS} FROM items WHERE id = ?1"),
        [id],
        item_from_row,
    )?
    .pop())
}

pub(super) fn load_queue(c: &Connection, name: &str) -> Result<Option<QueueSettings>> {
    Ok(collect(
        c,
        "SELECT name, lock_seconds, warn_seconds, max_per_user, paused, take_order, \
         park_grace_seconds, undo_seconds, review_percent, review_new FROM queues \
         WHERE name = ?1",
        [name],
        |r| rows::queue_from(&mut Cols::new(r)),
    )?
    .pop())
}

pub(super) fn queues(c: &Connection) -> Result<Vec<QueueSettings>> {
    collect(
        c,
        "SELECT name, lock_seconds, warn_seconds, max_per_user, paused, take_order, \
         park_grace_seconds, undo_seconds, review_percent, review_new FROM queues ORDER BY name",
        [],
        |r| rows::queue_from(&mut Cols::new(r)),
    )
}

/// Field definitions of `queue` (of every queue when `None`), by queue and in order.
pub(super) fn fields(c: &Connection, queue: Option<&str>) -> Result<Vec<(String, FieldDef)>> {
    collect(
        c,
        "SELECT queue, name, spec FROM queue_fields WHERE ?1 IS NULL OR queue = ?1 \
         ORDER BY queue, position, name",
        [queue],
        |r| rows::field_from(&mut Cols::new(r)),
    )
}

/// The SLA of `queue` (of every queue with one when `None`), by queue.
pub(super) fn slas(c: &Connection, queue: Option<&str>) -> Result<Vec<Sla>> {
    collect(
        c,
        "SELECT queue, sla_ms, hours, tz, holidays FROM queue_sla \
         WHERE ?1 IS NULL OR queue = ?1 ORDER BY queue",
        [queue],
        |r| rows::sla_from(&mut Cols::new(r)),
    )
}

/// Ready-made texts of `queue` (of every queue when `None`), by queue and code.
pub(super) fn texts(c: &Connection, queue: Option<&str>) -> Result<Vec<CannedText>> {
    collect(
        c,
        "SELECT queue, code, purpose, text FROM queue_texts WHERE ?1 IS NULL OR queue = ?1 \
         ORDER BY queue, code",
        [queue],
        |r| rows::text_from(&mut Cols::new(r)),
    )
}

/// Field definitions of item `id`'s queue, in order.
pub(super) fn item_fields(c: &Connection, id: i64) -> Result<Vec<FieldDef>> {
    let all = collect(
        c,
        "SELECT f.queue, f.name, f.spec FROM items i JOIN queue_fields f ON f.queue = i.queue \
         WHERE i.id = ?1 ORDER BY f.position, f.name",
        [id],
        |r| rows::field_from(&mut Cols::new(r)),
    )?;
    Ok(all.into_iter().map(|(_, d)| d).collect())
}

pub(super) fn history(c: &Connection, id: i64) -> Result<Vec<Event>> {
    load_item(c, id)?.ok_or(StoreError::NotFound(id))?;
    collect(
        c,
        &crate::store::sql::history("e.detail", "json_object", ""),
        [id],
        event_from_row,
    )
}

/// A comment from its row (id, item_id, at, author, os_user, text).
fn comment_from_row(r: &Row<'_>) -> Result<Comment> {
    Ok(Comment {
        id: r.get(0)?,
        item_id: r.get(1)?,
        at: r.get(2)?,
        author: lossy_text(r, 3)?,
        os_user: lossy_text(r, 4)?,
        text: lossy_text(r, 5)?,
    })
}

/// Every comment on the items `f` selects, oldest first.
pub(super) fn export_comments(
    c: &Connection,
    f: &ExportFilter,
    each: &mut dyn FnMut(&Comment) -> std::io::Result<()>,
) -> Result<u64> {
    let mut stmt = c.prepare_cached(crate::store::sql::EXPORT_COMMENTS)?;
    let mut rows = stmt.query(params![f.state.map(|s| s.as_str()), f.queue, f.since])?;
    let mut n = 0;
    while let Some(r) = rows.next()? {
        let comment = comment_from_row(r)?;
        each(&comment).map_err(|e| StoreError::Database(format!("writing the export: {e}")))?;
        n += 1;
    }
    Ok(n)
}

/// An item's comments, oldest first.
pub(super) fn comments(c: &Connection, id: i64) -> Result<Vec<Comment>> {
    load_item(c, id)?.ok_or(StoreError::NotFound(id))?;
    collect(
        c,
        "SELECT id, item_id, at, author, os_user, text FROM comments WHERE item_id = ?1 \
         ORDER BY id",
        [id],
        comment_from_row,
    )
}

/// Everyone `assign` and `reassign` accept (`sql::USERS_AND_ACTORS`), by name.
pub(super) fn users(c: &Connection) -> Result<Vec<UserInfo>> {
    let users = collect(c, crate::store::sql::USERS_AND_ACTORS, [], |r| {
        Ok(UserInfo {
            name: lossy_text(r, 0)?,
            role: lossy_opt_text(r, 1)?
                .as_deref()
                .and_then(Role::parse)
                .unwrap_or(Role::Staff),
            login: lossy_opt_text(r, 3)?,
            last_seen: r.get(2)?,
            access: Access::default(),
        })
    })?;
    let queues = collect(c, crate::store::sql::ACCESS_QUEUES_ALL, [], |r| {
        Ok((lossy_text(r, 0)?, lossy_text(r, 1)?, lossy_text(r, 2)?))
    })?;
    let accesses = collect(c, crate::store::sql::ACCESS_ALL, [], |r| {
        let name = lossy_text(r, 0)?;
        let left = match r.get::<_, Option<i64>>(3)? {
            Some(at) => Some((at, lossy_opt_text(r, 4)?.unwrap_or_default())),
            None => None,
        };
        let limited = (r.get::<_, i64>(1)? != 0, r.get::<_, i64>(2)? != 0);
        Ok((name, limited, left))
    })?;
    let accesses = (accesses.into_iter())
        .map(|(name, limited, left)| {
            let mine = crate::store::list_of(&queues, &name);
            (name, Access::from_rows(None, limited, left, &mine))
        })
        .collect();
    Ok(crate::store::with_access(users, accesses))
}

const DIALECT: Dialect = Dialect {
    placeholder: |n| format!("?{n}"),
    search: super::search::scan_condition,
    field: super::search::field_condition,
};

/// Binds numbered parameters.
fn bind(stmt: &mut rusqlite::CachedStatement<'_>, ps: &[Param]) -> Result<()> {
    // A search's plan may leave a parameter unused (the scanning condition, when the
    // index's candidates are its answer); SQLite refuses only those past the last one.
    let used = stmt.parameter_count();
    for (i, p) in ps.iter().enumerate().take(used) {
        match p {
            Param::Int(n) => stmt.raw_bind_parameter(i + 1, n)?,
            Param::Text(t) => stmt.raw_bind_parameter(i + 1, t)?,
            Param::Blob(b) => stmt.raw_bind_parameter(i + 1, b)?,
        }
    }
    Ok(())
}

/// The order of the filter's open items: its queue's take order, or all queues'.
fn open_order(c: &Connection, filter: &ListFilter) -> Result<OpenOrder> {
    let due: bool = c
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM queues WHERE take_order = 'due' \
             AND (?1 IS NULL OR name = ?1))",
        )?
        .query_row([&filter.queue], |r| r.get(0))?;
    let orders = if due {
        [TakeOrder::Due]
    } else {
        [TakeOrder::Priority]
    };
    Ok(OpenOrder::of(filter.queue.as_deref(), &orders))
}

pub(super) fn list(
    c: &Connection,
    plans: &mut PlanCache,
    filter: &ListFilter,
    now: Millis,
) -> Result<Vec<Item>> {
    if let Some(q) = &filter.queue
        && load_queue(c, q)?.is_none()
    {
        return Err(StoreError::UnknownQueue {
            name: q.clone(),
            known: queues(c)?.into_iter().map(|q| q.name).collect(),
        });
    }
    check_qualifiers(filter, |q| fields(c, q))?;
    let total = if Window::wants_total(filter) {
        Some(count(c, plans, filter, now)?)
    } else {
        None
    };
    let Some(window) = Window::plan(filter, total) else {
        return Ok(Vec::new());
    };
    let order_of_open = open_order(c, filter)?;
    let rows = list_rows(c, filter)?;
    let need = (window.offset as u64).saturating_add(window.limit as u64);
    // A window read from the far end is not the first candidates': all are passed.
    let mut take = match window.reversed {
        false => super::search_plan::first_take(Some(need)),
        true => usize::MAX,
    };
    let mut out = loop {
        let mut q: ListSql = list_sql(filter, now, &DIALECT, order_of_open);
        let (from, where_, cut) =
            super::search_plan::source(c, plans, &mut q, rows, Some(need), take)?;
        let (order, limit, offset) = q.window(window);
        // The inner query reads only the index (id is its rowid): skipping `offset` rows
        // never touches the table.
        let sql = format!(
            "SELECT {ITEM_COLS} FROM items WHERE id IN (SELECT id FROM {from} {where_} \
             ORDER BY {order} LIMIT {limit} OFFSET {offset}) ORDER BY {order}"
        );
        let mut stmt = c.prepare_cached(&sql)?;
        bind(&mut stmt, &q.params)?;
        let mut found = stmt.raw_query();
        let mut out = Vec::new();
        while let Some(r) = found.next()? {
            out.push(item_from_row(r)?);
        }
        // Candidates left out and the window not filled: it may lie past those passed.
        if !cut || out.len() >= window.limit {
            break out;
        }
        take = take.saturating_mul(super::search_plan::MORE_CANDIDATES);
    };
    if window.reversed {
        out.reverse();
    }
    Ok(out)
}

/// How many rows the filter's list has without its search, when the kept counts say (a
/// search's plan depends on it).
fn list_rows(c: &Connection, filter: &ListFilter) -> Result<Option<u64>> {
    if filter.text.is_none() {
        return Ok(None);
    }
    let plain = ListFilter {
        text: None,
        ..filter.clone()
    };
    let Some(state) = kept_count(&plain) else {
        return Ok(None);
    };
    let n: i64 = c
        .prepare_cached(KEPT_COUNT)?
        .query_row(params![state, filter.queue], |r| r.get(0))?;
    Ok(Some(n.max(0) as u64))
}

pub(super) fn count(
    c: &Connection,
    plans: &mut PlanCache,
    filter: &ListFilter,
    now: Millis,
) -> Result<u64> {
    if let Some(state) = kept_count(filter) {
        // Kept by triggers: no scan.
        let n: i64 = c
            .prepare_cached(KEPT_COUNT)?
            .query_row(params![state, filter.queue], |r| r.get(0))?;
        return Ok(n.max(0) as u64);
    }
    check_qualifiers(filter, |q| fields(c, q))?;
    let need = count_limit(filter);
    let rows = list_rows(c, filter)?;
    let mut take = super::search_plan::first_take(need);
    loop {
        let mut q = list_sql(filter, now, &DIALECT, OpenOrder::Priority);
        let (from, where_, cut) = super::search_plan::source(c, plans, &mut q, rows, need, take)?;
        let sql = match need {
            Some(cap) => {
                format!("SELECT count(*) FROM (SELECT 1 FROM {from} {where_} LIMIT {cap})")
            }
            None => format!("SELECT count(*) FROM {from} {where_}"),
        };
        let mut stmt = c.prepare_cached(&sql)?;
        bind(&mut stmt, &q.params)?;
        let mut found = stmt.raw_query();
        let n: i64 = match found.next()? {
            Some(r) => r.get(0)?,
            None => 0,
        };
        let n = n.max(0) as u64;
        // Candidates left out and the cap not reached: more may match past those passed.
        if !cut || need.is_some_and(|cap| n >= cap) {
            return Ok(n);
        }
        take = take.saturating_mul(super::search_plan::MORE_CANDIDATES);
    }
}

pub(super) fn takeable(
    c: &Connection,
    me: &str,
    queue: Option<&str>,
    cap: u64,
    now: Millis,
) -> Result<u64> {
    let sql = crate::store::sql::COUNT_TAKEABLE
        .replace(":queue", "?1")
        .replace(":now", "?2")
        .replace(":cap", "?3")
        .replace(":me", "?4");
    let n: i64 = c
        .prepare_cached(&sql)?
        .query_row(params![queue, now, cap as i64, me], |r| r.get(0))?;
    Ok(n.max(0) as u64)
}

/// The id and request id of the items with one of `ids` or `request_ids` (one indexed
/// probe each).
pub(super) fn item_keys(
    c: &Connection,
    ids: &[i64],
    request_ids: &[&str],
) -> Result<Vec<(i64, Option<String>)>> {
    let mut out = Vec::new();
    let mut by_id = c.prepare_cached("SELECT id, request_id FROM items WHERE id = ?1")?;
    for &id in ids {
        if let Some(k) = by_id
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?
        {
            out.push(k);
        }
    }
    let mut by_rid = c.prepare_cached("SELECT id, request_id FROM items WHERE request_id = ?1")?;
    for rid in request_ids {
        if let Some(k) = by_rid
            .query_row([rid], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?
        {
            out.push(k);
        }
    }
    Ok(out)
}

pub(super) fn export_events(
    c: &Connection,
    f: &ExportFilter,
    each: &mut dyn FnMut(&Event) -> std::io::Result<()>,
) -> Result<u64> {
    let mut stmt = c.prepare_cached(&crate::store::sql::export_events(
        "e.detail",
        "json_object",
        "",
    ))?;
    let mut rows = stmt.query(params![f.state.map(|s| s.as_str()), f.queue, f.since])?;
    let mut n = 0;
    while let Some(r) = rows.next()? {
        let event = event_from_row(r)?;
        each(&event).map_err(|e| StoreError::Database(format!("writing the export: {e}")))?;
        n += 1;
    }
    Ok(n)
}

pub(super) fn events_by(c: &Connection, actor: &str, since: Millis) -> Result<Vec<Event>> {
    collect(
        c,
        &crate::store::sql::events_by("e.detail", "json_object", ""),
        params![actor, since],
        event_from_row,
    )
}

pub(super) fn lost_locks(c: &Connection, user: &str, since: Millis) -> Result<Vec<LostLock>> {
    collect(
        c,
        &format!(
            "SELECT e.id, e.item_id, e.at, e.actor, e.os_user, e.kind, e.detail, i.title, \
             i.lock_user FROM events e JOIN items i ON i.id = e.item_id \
             WHERE e.at >= ?2 AND e.kind IN ({}) AND json_extract(e.detail, '$.from') = ?1 \
             AND e.actor <> ?1 ORDER BY e.at DESC, e.id DESC",
            kinds_sql(EventKind::ENDS_ANOTHERS_LOCK)
        ),
        params![user, since],
        |r| rows::lost_lock_from(&mut Cols::new(r)),
    )
}

pub(super) fn export(
    c: &Connection,
    f: &ExportFilter,
    each: &mut dyn FnMut(&Item) -> std::io::Result<()>,
) -> Result<u64> {
    let mut stmt = c.prepare_cached(&format!(
        "SELECT {ITEM_COLS} FROM items WHERE {} ORDER BY id",
        crate::store::sql::EXPORT_WHERE
    ))?;
    let mut rows = stmt.query(params![f.state.map(|s| s.as_str()), f.queue, f.since])?;
    let mut n = 0;
    while let Some(r) = rows.next()? {
        let item = item_from_row(r)?;
        each(&item).map_err(|e| StoreError::Database(format!("writing the export: {e}")))?;
        n += 1;
    }
    Ok(n)
}

/// Audit records since `since`, oldest first; with `who`, those by or about that user.
pub(super) fn audit(c: &Connection, who: Option<&str>, since: Millis) -> Result<Vec<AuditEntry>> {
    collect(
        c,
        &format!(
            "SELECT {} FROM audit WHERE at >= ?1 AND (?2 IS NULL OR actor = ?2 OR \
             (subject = ?2 AND kind IN ('role', 'login'))) ORDER BY at, id",
            rows::AUDIT_COLS
        ),
        params![since, who],
        |r| rows::audit_from(&mut Cols::new(r)),
    )
}
