//! Supervisors' writes: unlock, reassign, requeue, cancel, queue settings and roles. Each
//! is refused to staff, fenced by the lock token read under the write lock (or by the one
//! the supervisor saw, when given), and writes one event naming the supervisor and the
//! reason.

use serde_json::{Value, json};

use super::{
    ItemWrite, Tx, found, known_queue, open_item_for_update, require_supervisor,
    require_supervisor_of,
};
use crate::domain::fields::{Col, Field, Value as FieldValue, Who, field};
use crate::domain::{
    AuditKind, AuditNote, EventKind, Item, ItemEdit, ItemState, QueueSettings, QueueUpdate, Role,
    SeenLock,
};
use crate::store::error::{Result, StoreError};
use crate::store::sql::{
    FENCE_TOKEN, SET_ASSIGN, SET_CANCEL, SET_REASSIGN, SET_RELEASE, SET_REOPEN, SET_REQUEUE,
    set_column,
};

/// A supervisor's write fenced by the token read under the write lock: it cannot fail.
fn write_under_lock(tx: &mut dyn Tx, item: &Item, w: &ItemWrite<'_>) -> Result<()> {
    if tx.write_item(item.id, item.lock_token, w)? {
        Ok(())
    } else {
        Err(StoreError::Database(format!(
            "#{} changed while it was held for this change; nothing done",
            item.id
        )))
    }
}

/// Refuses when the lock is not the one the supervisor saw (`expected`, when given).
fn check_expected(item: &Item, expected: Option<i64>) -> Result<()> {
    match expected {
        Some(token) if item.lock_user.is_none() || item.lock_token != token => {
            Err(StoreError::LockChanged {
                id: item.id,
                holder: item.lock_user.clone(),
            })
        }
        _ => Ok(()),
    }
}

/// Returns a held item to the pool; with `seen`, only if it still holds that very lock
/// (not renewed since: a holder at work keeps their lock).
pub(crate) fn unlock(tx: &mut dyn Tx, id: i64, seen: Option<SeenLock>, reason: &str) -> Result<()> {
    require_supervisor_of(tx, None, "unlock items")?;
    let cur = found(id, tx.item_for_update(id)?)?;
    require_supervisor_of(tx, Some(&cur.queue), "unlock items")?;
    if let Some(seen) = seen
        && !seen.still_held(&cur)
    {
        return Err(StoreError::LockChanged {
            id,
            holder: cur.lock_user.clone(),
        });
    }
    let Some(holder) = &cur.lock_user else {
        return Err(StoreError::Invalid(format!("#{id} is not locked")));
    };
    let w = unlock_write(holder, reason, cur.lock_token, false);
    write_under_lock(tx, &cur, &w)
}

fn unlock_write<'a>(holder: &str, reason: &str, token: i64, bulk: bool) -> ItemWrite<'a> {
    let mut detail = json!({"from": holder, "reason": reason, "token": token});
    if bulk {
        detail["bulk"] = json!(true);
    }
    ItemWrite {
        set: SET_RELEASE,
        fence: FENCE_TOKEN,
        value: None,
        arg: None,
        kind: EventKind::Unlocked,
        detail,
    }
}

/// Returns many held items to the pool, each lock as the supervisor saw it. A lock that
/// changed since (renewed, taken over, finished, released) is left alone.
pub(crate) fn unlock_many(tx: &mut dyn Tx, locks: &[SeenLock], reason: &str) -> Result<usize> {
    require_supervisor_of(tx, None, "unlock items")?;
    let mut n = 0;
    for seen in locks {
        let Some(cur) = tx.item_for_update(seen.id)? else {
            continue;
        };
        require_supervisor_of(tx, Some(&cur.queue), "unlock items")?;
        let Some(holder) = cur.lock_user.as_deref().filter(|_| seen.still_held(&cur)) else {
            continue;
        };
        let w = unlock_write(holder, reason, seen.token, locks.len() > 1);
        write_under_lock(tx, &cur, &w)?;
        n += 1;
    }
    Ok(n)
}

/// Gives the item's lock to `to` (a new acquisition: a new token).
pub(crate) fn reassign(
    tx: &mut dyn Tx,
    id: i64,
    expected: Option<i64>,
    to: &str,
    reason: &str,
) -> Result<Item> {
    give(tx, id, expected, to, reason, false)
}

/// Assigns the item to `to`: theirs, not takeable by others, with no lock clock until
/// they open it (a new acquisition: a new token; whoever held it loses it).
pub(crate) fn assign(
    tx: &mut dyn Tx,
    id: i64,
    expected: Option<i64>,
    to: &str,
    reason: &str,
) -> Result<Item> {
    give(tx, id, expected, to, reason, true)
}

/// Reassign or assign: the lock goes to a known user under a new token. Both write a
/// `reassigned` event (an assignment's says `"assigned": true`): either way the lock
/// changed hands, and every reader of the trail (lost locks, figures) reads it so.
fn give(
    tx: &mut dyn Tx,
    id: i64,
    expected: Option<i64>,
    to: &str,
    reason: &str,
    assign: bool,
) -> Result<Item> {
    let verb = if assign {
        "assign items"
    } else {
        "reassign items"
    };
    require_supervisor_of(tx, None, verb)?;
    let cur = open_item_for_update(tx, id)?;
    require_supervisor_of(tx, Some(&cur.queue), verb)?;
    known_user(tx, to)?;
    super::teams::require_assignable(tx, to, &cur.queue)?;
    check_expected(&cur, expected)?;
    let mut detail = json!({"from": cur.lock_user, "to": to, "reason": reason,
                            "token": cur.lock_token + 1});
    if assign {
        detail["assigned"] = json!(true);
    }
    let w = ItemWrite {
        set: if assign { SET_ASSIGN } else { SET_REASSIGN },
        fence: FENCE_TOKEN,
        value: Some(to),
        arg: None,
        kind: EventKind::Reassigned,
        detail,
    };
    write_under_lock(tx, &cur, &w)?;
    found(id, tx.item(id)?)
}

/// Refuses a name nobody is known by: not in `users` (roles, people who opened the
/// screen) and never an actor in the audit trail.
fn known_user(tx: &mut dyn Tx, name: &str) -> Result<()> {
    if is_known(tx, name)? {
        return Ok(());
    }
    let known = tx.user_names()?;
    Err(StoreError::UnknownUser {
        name: name.to_string(),
        known,
    })
}

/// True when someone is known by `name`: in `users`, or an actor of the trail.
pub(super) fn is_known(tx: &mut dyn Tx, name: &str) -> Result<bool> {
    Ok(tx.user_names()?.iter().any(|k| k == name) || tx.has_acted(name)?)
}

/// Reopens a finished item (done, failed or cancelled) or one waiting for review with a
/// reason; its `requeued` event keeps the reason and the former result or error, and the
/// reviewer whose lock it ends (`holder`).
pub(crate) fn reopen(tx: &mut dyn Tx, id: i64, reason: &str) -> Result<()> {
    require_supervisor_of(tx, None, "reopen items")?;
    let cur = found(id, tx.item_for_update(id)?)?;
    require_supervisor_of(tx, Some(&cur.queue), "reopen items")?;
    if cur.state == ItemState::Open {
        return Err(StoreError::Invalid(format!("#{id} is open already")));
    }
    if cur.state == ItemState::Parked {
        return Err(StoreError::Invalid(format!(
            "#{id} is parked, not finished (end the park with `caseload wake {id}`)"
        )));
    }
    let mut w = ItemWrite {
        set: SET_REOPEN,
        fence: FENCE_TOKEN,
        value: None,
        arg: None,
        kind: EventKind::Requeued,
        detail: json!({"was": cur.state.as_str(), "reason": reason, "result": cur.result,
                       "error": cur.error, "finished_by": cur.finished_by}),
    };
    // A reviewer holding it loses the lock (SET_REOPEN): the event names them.
    if let Some(holder) = &cur.lock_user {
        w.detail["holder"] = json!(holder);
    }
    write_under_lock(tx, &cur, &w)
}

/// Changes the columns of an open item that a supervisor may set (priority, due time,
/// queue: the field table's [`Who::Supervisor`] ones; a queue must be known); one
/// `noted` event per column that changes, naming it (`field`) with its old and new value
/// (`from`, `to`; times as RFC 3339). Returns the item as it is now.
pub(crate) fn edit(tx: &mut dyn Tx, id: i64, e: &ItemEdit) -> Result<Item> {
    require_supervisor_of(tx, None, "edit items")?;
    let cur = open_item_for_update(tx, id)?;
    require_supervisor_of(tx, Some(&cur.queue), "edit items")?;
    if let Some(FieldValue::Text(Some(q))) = e.value(Col::Queue) {
        known_queue(tx, q)?;
        require_supervisor_of(tx, Some(q), "move items")?;
    }
    // (column, SET clause, value as text, the event's detail)
    let mut changes: Vec<(&Field, String, Option<String>, serde_json::Value)> = Vec::new();
    for (col, new) in &e.values {
        let f = field(*col);
        if !f.set_by(Who::Supervisor) {
            return Err(StoreError::Invalid(format!(
                "{} is not a column a supervisor edits",
                f.name
            )));
        }
        let old = cur.cell(*col).to_value();
        if old == *new {
            continue;
        }
        let text = match new.clone() {
            FieldValue::Number(n) => Some(n.to_string()),
            FieldValue::Time(t) | FieldValue::Id(t) => t.map(|t| t.to_string()),
            FieldValue::Text(t) => t,
        };
        let mut detail = json!({"field": f.name, "from": shown(&old), "to": shown(new)});
        if let (Col::DueAt, FieldValue::Time(from), FieldValue::Time(to)) = (*col, &old, new) {
            // In ms, as a park's end records the due time it moves: a finish's lateness
            // is against the due time it had then (domain::figures::records).
            detail["due"] = json!({"from": from, "to": to});
        }
        changes.push((f, set_column(f), text, detail));
    }
    if changes.is_empty() {
        return Err(StoreError::Invalid(format!(
            "#{id} already has those values; nothing changed"
        )));
    }
    for (_, set, value, detail) in &changes {
        let w = ItemWrite {
            set,
            fence: FENCE_TOKEN,
            value: value.as_deref(),
            arg: None,
            kind: EventKind::Noted,
            detail: detail.clone(),
        };
        write_under_lock(tx, &cur, &w)?;
    }
    if (changes.iter()).any(|(f, ..)| matches!(f.col, Col::Queue | Col::Params)) {
        // Its keys are of its queue's key fields.
        super::dedupe::rekey_item(tx, id)?;
    }
    found(id, tx.item(id)?)
}

/// A column's value as an edit's event shows it (a time as RFC 3339).
fn shown(v: &FieldValue) -> serde_json::Value {
    match v {
        FieldValue::Number(n) => json!(n),
        FieldValue::Time(t) => json!(t.map(crate::domain::time::rfc3339)),
        FieldValue::Text(t) => json!(t),
        FieldValue::Id(t) => json!(t),
    }
}

/// Reopens a failed or cancelled item.
pub(crate) fn requeue(tx: &mut dyn Tx, id: i64) -> Result<()> {
    require_supervisor_of(tx, None, "requeue items")?;
    let cur = found(id, tx.item_for_update(id)?)?;
    require_supervisor_of(tx, Some(&cur.queue), "requeue items")?;
    if !matches!(cur.state, ItemState::Failed | ItemState::Cancelled) {
        return Err(StoreError::Invalid(format!(
            "#{id} is {}; only failed or cancelled items can be requeued",
            cur.state.as_str()
        )));
    }
    let w = ItemWrite {
        set: SET_REQUEUE,
        fence: FENCE_TOKEN,
        value: None,
        arg: None,
        kind: EventKind::Requeued,
        detail: json!({"was": cur.state.as_str(), "error": cur.error}),
    };
    write_under_lock(tx, &cur, &w)
}

/// Cancels an open item (held or not).
pub(crate) fn cancel(tx: &mut dyn Tx, id: i64, reason: &str) -> Result<()> {
    require_supervisor_of(tx, None, "cancel items")?;
    let cur = open_item_for_update(tx, id)?;
    require_supervisor_of(tx, Some(&cur.queue), "cancel items")?;
    let w = ItemWrite {
        set: SET_CANCEL,
        fence: FENCE_TOKEN,
        value: Some(reason),
        arg: None,
        kind: EventKind::Cancelled,
        detail: json!({"from": cur.lock_user, "reason": reason}),
    };
    write_under_lock(tx, &cur, &w)
}

/// Changes a queue's settings (creating the queue when `create`).
pub(crate) fn set_queue(
    tx: &mut dyn Tx,
    name: &str,
    update: &QueueUpdate,
    create: bool,
) -> Result<QueueSettings> {
    require_supervisor_of(tx, Some(name), "change queue settings")?;
    let cur = match tx.queue(name)? {
        Some(q) => q,
        None if create => QueueSettings::new(name),
        None => known_queue(tx, name)?,
    };
    let existed = tx.queue(name)?.is_some();
    let next = update.apply(&cur).map_err(|e| StoreError::Invalid(e.msg))?;
    if existed && next == cur {
        // Nothing changes: no write, no audit row claiming a change that did not happen.
        return Ok(cur);
    }
    let note = AuditNote {
        kind: AuditKind::Queue,
        subject: name.to_string(),
        old: if existed {
            settings_json(&cur)
        } else {
            Value::Null
        },
        new: settings_json(&next),
    };
    tx.put_queue(&next, &note)?;
    tracing::info!(queue = %name, by = %tx.actor().name, ?next, "queue settings changed");
    Ok(next)
}

/// Renames a queue: its settings and every item (each with a `noted` event saying from
/// which queue it came) move to the new name, which must not be taken; locks stay held.
pub(crate) fn rename_queue(tx: &mut dyn Tx, from: &str, to: &str) -> Result<u64> {
    require_supervisor(tx, "rename queues")?;
    let cur = known_queue(tx, from)?;
    if from == to {
        return Err(StoreError::Invalid(format!(
            "queue '{from}' has that name already"
        )));
    }
    if tx.queue(to)?.is_some() {
        return Err(StoreError::Invalid(format!(
            "queue '{to}' exists already; choose another name"
        )));
    }
    let next = QueueSettings {
        name: to.to_string(),
        ..cur.clone()
    };
    let created = AuditNote {
        kind: AuditKind::Queue,
        subject: to.to_string(),
        old: json!({"renamed_from": from}),
        new: settings_json(&next),
    };
    tx.put_queue(&next, &created)?;
    let moved = tx.move_items(from, to, &json!({"queue": to, "renamed_from": from}))?;
    let gone = AuditNote {
        kind: AuditKind::Queue,
        subject: from.to_string(),
        old: settings_json(&cur),
        new: json!({"renamed_to": to}),
    };
    tx.drop_queue(from, &gone)?;
    tracing::info!(from = %from, to = %to, moved, by = %tx.actor().name, "queue renamed");
    Ok(moved)
}

/// Deletes an empty queue (no items in any state: finished items keep their history).
pub(crate) fn delete_queue(tx: &mut dyn Tx, name: &str) -> Result<()> {
    require_supervisor(tx, "delete queues")?;
    let cur = known_queue(tx, name)?;
    let n = tx.queue_items(name)?;
    if n > 0 {
        return Err(StoreError::Invalid(format!(
            "queue '{name}' holds {n} item(s), finished ones included; only an empty queue can \
             be deleted (rename it instead)"
        )));
    }
    let note = AuditNote {
        kind: AuditKind::Queue,
        subject: name.to_string(),
        old: settings_json(&cur),
        new: json!({"deleted": true}),
    };
    tx.drop_queue(name, &note)?;
    tracing::info!(queue = %name, by = %tx.actor().name, "queue deleted");
    Ok(())
}

/// Sets a user's role; the last supervisor cannot step down.
pub(crate) fn set_role(tx: &mut dyn Tx, user: &str, role: Role) -> Result<()> {
    require_supervisor(tx, "change roles")?;
    if role == Role::Lead {
        super::teams::check_lead(tx, user)?;
    }
    if role != Role::Supervisor && user == tx.actor().name && tx.supervisors_besides(user)? == 0 {
        return Err(StoreError::Invalid(
            "you are the last supervisor; make someone else supervisor first".into(),
        ));
    }
    let note = AuditNote {
        kind: AuditKind::Role,
        subject: user.to_string(),
        old: json!(tx.role_of(user)?.as_str()),
        new: json!(role.as_str()),
    };
    tx.put_role(user, role, &note)?;
    tracing::info!(user = %user, role = role.as_str(), by = %tx.actor().name, "role changed");
    Ok(())
}

/// Binds the caseload name `user` to a login (an OS login on SQLite, a database role on
/// PostgreSQL) that may then use it, or removes the binding.
pub(crate) fn set_login(tx: &mut dyn Tx, user: &str, login: Option<&str>) -> Result<()> {
    require_supervisor(tx, "bind user names to logins")?;
    let note = AuditNote {
        kind: AuditKind::Login,
        subject: user.to_string(),
        old: json!(tx.login_of(user)?),
        new: json!(login),
    };
    tx.put_login(user, login, &note)?;
    tracing::info!(user = %user, login = ?login, by = %tx.actor().name, "login binding changed");
    Ok(())
}

/// A queue's settings as its audit records show them.
fn settings_json(q: &QueueSettings) -> Value {
    json!({
        "lock_seconds": q.lock_seconds,
        "warn_seconds": q.warn_seconds,
        "max_per_user": q.max_per_user,
        "paused": q.paused,
        "order": q.order.as_str(),
        "park_grace_seconds": q.park_grace_seconds,
        "undo_seconds": q.undo_seconds,
        "review_percent": q.review_percent,
        "review_new": q.review_new,
    })
}

/// Rebuilds the duplicate keys from the items' params, queue by queue (the repair for
/// what `caseload check` finds wrong in them). Supervisors only. In a transaction of its
/// own, after the figures' (`Backend::rebuild_figure_tables`): on PostgreSQL those hold
/// off event inserts for moments, and a writer held off that way may hold the item rows
/// the keys' inserts lock.
pub(crate) fn rebuild_keys(tx: &mut dyn Tx) -> Result<()> {
    require_supervisor(tx, "rebuild the duplicate keys")?;
    for q in tx.queues()? {
        super::dedupe::rekey_queue(tx, &q.name)?;
    }
    Ok(())
}
