//! Typed fields per queue: supervisors define, change, move and delete a queue's fields
//! (each change audited as `field`, subject `QUEUE.FIELD`, old → new definition with its
//! position); the holder sets values and ticks checklist lines under the lock (one fenced
//! write of the params, one `field_changed` event per change); Complete checks the
//! record's fields first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use siphasher::sip128::{Hasher128, SipHasher13};

use super::dedupe;
use super::holder::explain_loss;
use super::{
    FieldRecord, ItemWrite, Tx, found, known_queue, require_supervisor, require_supervisor_of,
};
use crate::domain::duplicates::has_keys;
use crate::domain::item::check_text;
use crate::domain::queue_fields::{
    Checklist, FieldChange, FieldDef, FieldProblem, FieldType, LineState, check_typed, problems,
    reorder, splice, value_text,
};
use crate::domain::{AuditKind, AuditNote, EventKind, Item, NewItem};
use crate::store::error::{Result, StoreError};
use crate::store::{AddOptions, Added};

/// A definition as its audit records show it: its spec and its position (1 first).
pub(crate) fn field_json(def: &FieldDef, position: usize) -> Value {
    let mut v = def.spec_json();
    v["position"] = json!(position);
    v
}

/// The subject of a field's audit records.
fn subject(queue: &str, name: &str) -> String {
    format!("{queue}.{name}")
}

/// Defines field `name` of `queue`, or changes or moves it (`change`); returns the
/// definition as it is now. Refused when nothing would change.
pub(crate) fn define_field(
    tx: &mut dyn Tx,
    queue: &str,
    name: &str,
    change: &FieldChange,
) -> Result<FieldDef> {
    require_supervisor_of(tx, Some(queue), "define fields")?;
    known_queue(tx, queue)?;
    let defs = tx.fields(queue)?;
    let names: Vec<String> = defs.iter().map(|d| d.name.clone()).collect();
    let at = names.iter().position(|n| n == name);
    let cur = at.map(|i| &defs[i]);
    let def = change.apply(name, cur).map_err(StoreError::Invalid)?;
    let order = reorder(&names, name, change.after.as_deref()).map_err(StoreError::Invalid)?;
    if cur == Some(&def) && order == names {
        return Err(StoreError::Invalid(format!(
            "field {name} of queue '{queue}' is already so; nothing changed"
        )));
    }
    let pos = order.iter().position(|n| n == name).unwrap_or(0) + 1;
    let note = AuditNote {
        kind: AuditKind::Field,
        subject: subject(queue, name),
        old: cur
            .zip(at)
            .map_or(Value::Null, |(c, i)| field_json(c, i + 1)),
        new: field_json(&def, pos),
    };
    tx.put_field(queue, &def, &order, &note)?;
    if dedupe::keys_change(cur, Some(&def)) {
        dedupe::rekey_queue(tx, queue)?;
    }
    tracing::info!(queue = %queue, field = %name, by = %tx.actor().name, "field defined");
    Ok(def)
}

/// Deletes field `name` of `queue`; the items keep their values in params.
pub(crate) fn delete_field(tx: &mut dyn Tx, queue: &str, name: &str) -> Result<()> {
    require_supervisor_of(tx, Some(queue), "delete fields")?;
    known_queue(tx, queue)?;
    let defs = tx.fields(queue)?;
    let Some(i) = defs.iter().position(|d| d.name == name) else {
        return Err(unknown_field(queue, name, &defs));
    };
    let note = AuditNote {
        kind: AuditKind::Field,
        subject: subject(queue, name),
        old: field_json(&defs[i], i + 1),
        new: json!({"deleted": true}),
    };
    tx.drop_field(queue, name, &note)?;
    if dedupe::keys_change(Some(&defs[i]), None) {
        dedupe::rekey_queue(tx, queue)?;
    }
    tracing::info!(queue = %queue, field = %name, by = %tx.actor().name, "field deleted");
    Ok(())
}

/// "queue 'q' has no field 'x' (its fields: a, b)".
pub(crate) fn unknown_field(queue: &str, name: &str, defs: &[FieldDef]) -> StoreError {
    let known: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    StoreError::Invalid(format!(
        "queue '{queue}' has no field '{name}' ({})",
        match known.is_empty() {
            true => "it has no fields: `caseload field set` defines them".to_string(),
            false => format!("its fields: {}", known.join(", ")),
        }
    ))
}

/// The digest of a record whose every field keeps its rules: a keyed 128-bit SipHash of
/// the field definitions' `version` (see [`Tx::fields_version`]), the record's `queue`
/// and its `params` text as stored. Written when a record was found to keep every rule
/// (add, set), compared by Complete, which checks the fields only when it differs. It
/// is a function of what the check depends on and nothing else, so nothing ever has to
/// clear it: other params (any writer, raw SQL included), another queue, any change to
/// any queue's fields (a new version), or another caseload (whose checks may differ: its
/// version is in the key) give another digest. The key is no secret: on SQLite whoever
/// can write the file can as well complete a record with raw SQL; on PostgreSQL, where a
/// staff role may write `items` (state `done` included) but must not get a colleague's
/// Complete past the check, the server stamps each digest with the session's role and a
/// Complete trusts only its own role's (PostgreSQL step 28).
pub(crate) fn digest(version: i64, queue: &str, params: &str) -> [u8; 16] {
    const KEY: (u64, u64) = (0x6361_7365_6c6f_6164, 0x6669_656c_6473_2131);
    let mut h = SipHasher13::new_with_keys(KEY.0, KEY.1);
    let mut field = |b: &[u8]| {
        std::hash::Hasher::write(&mut h, &(b.len() as u64).to_le_bytes());
        std::hash::Hasher::write(&mut h, b);
    };
    field(env!("CARGO_PKG_VERSION").as_bytes());
    field(&version.to_le_bytes());
    field(queue.as_bytes());
    field(params.as_bytes());
    h.finish128().as_bytes()
}

/// The field definitions a store's write transactions read, per queue, with the version
/// of the definitions they were read at (`fields_version`, which every change to any
/// queue's fields replaces by a new random number, raw SQL included): a `set` or an add
/// reads one number instead of every field's row while nothing changed, and the
/// definitions are handed out shared, not copied.
#[derive(Debug, Clone, Default)]
pub(crate) struct DefsCache(Arc<Mutex<HashMap<String, Versioned>>>);

/// A queue's field definitions and the version they were read at.
type Versioned = (i64, Arc<[FieldDef]>);

/// The definitions of a queue, shared.
type Defs = Arc<[FieldDef]>;

impl DefsCache {
    /// `queue`'s definitions as read at `version`, if kept.
    pub(crate) fn get(&self, queue: &str, version: i64) -> Option<Arc<[FieldDef]>> {
        let c = self.0.lock().ok()?;
        c.get(queue)
            .filter(|(v, _)| *v == version)
            .map(|(_, d)| Arc::clone(d))
    }

    /// Keeps `queue`'s definitions as read at `version`.
    pub(crate) fn put(&self, queue: &str, version: i64, defs: &Arc<[FieldDef]>) {
        if let Ok(mut c) = self.0.lock() {
            if c.len() >= 256 {
                c.clear();
            }
            c.insert(queue.to_string(), (version, Arc::clone(defs)));
        }
    }
}

/// What a backend that keeps digests knows of a record before its Complete (in one
/// lookup): whether its queue has fields, the definitions' version, its digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Checked {
    pub has_fields: bool,
    pub version: i64,
    pub digest: Option<[u8; 16]>,
}

impl Checked {
    /// True when the digest says the record, as `queue` and `params` are now, keeps every
    /// rule of its fields.
    fn holds(&self, queue: &str, params: &str) -> bool {
        self.digest == Some(digest(self.version, queue, params))
    }
}

/// What a Complete judges the record's fields by: the definitions (read with the
/// queue's settings), or what [`Tx::fields_checked`] read.
pub(crate) enum Judge {
    Defs(Vec<FieldDef>),
    Checked(Checked),
    /// The digest and the record itself, read (and held for the transaction) in the same
    /// lookup when its queue has fields (PostgreSQL: no second read of the item).
    Held(Checked, FieldRecord),
}

/// After an add: each new record of a queue with fields gets its digest (on a backend
/// that keeps them) when it keeps every rule: checked here, or, for an import
/// (`opts.unchecked`), as the import found it (`opts.checked`) while the definitions
/// are still those it checked against.
pub(crate) fn seal_added(
    tx: &mut dyn Tx,
    items: &[NewItem],
    added: &[Added],
    opts: &AddOptions<'_>,
) -> Result<()> {
    let Some(version) = tx.fields_version()? else {
        return Ok(());
    };
    let created = items.iter().zip(added).enumerate();
    if opts.unchecked {
        let Some(c) = opts.checked.filter(|c| c.version == version) else {
            return Ok(());
        };
        let marks: Vec<(i64, [u8; 16])> = created
            .filter(|(i, (item, a))| {
                a.created && !a.skipped && item.queue == c.queue && c.ok.get(*i) == Some(&true)
            })
            .map(|(_, (item, a))| (a.id, digest(version, &item.queue, &item.params)))
            .collect();
        return tx.put_fields_checked_many(&marks);
    }
    let mut defs: Vec<(&str, Arc<[FieldDef]>)> = Vec::new();
    let mut marks = Vec::new();
    for (_, (item, a)) in created.filter(|(_, (_, a))| a.created && !a.skipped) {
        let at = match defs.iter().position(|(q, _)| *q == item.queue) {
            Some(i) => i,
            None => {
                defs.push((
                    item.queue.as_str(),
                    tx.fields_at(&item.queue, Some(version))?,
                ));
                defs.len() - 1
            }
        };
        let fields = &defs[at].1;
        if fields.is_empty() {
            continue;
        }
        let params = serde_json::from_str::<Value>(&item.params).unwrap_or(Value::Null);
        if problems(fields, &params).is_empty() {
            marks.push((a.id, digest(version, &item.queue, &item.params)));
        }
    }
    tx.put_fields_checked_many(&marks)
}

/// The item held under `token` by the actor (for update), its params as a JSON object,
/// and its queue's fields; a lock that is gone is explained as for any holder write.
fn held_record(tx: &mut dyn Tx, id: i64, token: i64) -> Result<(Item, Map<String, Value>, Defs)> {
    let me = tx.actor().name.clone();
    let item = found(id, tx.item_for_update(id)?)?;
    if !item.held_with(&me, token) {
        return Err(explain_loss(tx, id, token)?);
    }
    let params = params_object(id, &item.params)?;
    let defs = tx.fields_at(&item.queue, None)?;
    Ok((item, params, defs))
}

/// Item `id`'s params as a JSON object (refused when they are not one).
fn params_object(id: i64, text: &str) -> Result<Map<String, Value>> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(StoreError::Invalid(format!(
            "#{id}'s params are not a JSON object; a supervisor must correct them first"
        ))),
    }
}

/// Writes the changed params under the holder's lock, one `field_changed` event per
/// detail (the first with the write itself), and the record's digest when it is known to
/// keep every rule (`digest`).
fn write_params(
    tx: &mut dyn Tx,
    id: i64,
    token: i64,
    text: &str,
    digest: Option<&[u8; 16]>,
    details: &[Value],
) -> Result<()> {
    check_text("params", text).map_err(StoreError::Invalid)?;
    let Some((first, rest)) = details.split_first() else {
        return Ok(());
    };
    // A reviewer may correct fields before accepting (audited as theirs).
    if !tx.write_params(id, token, text, digest, first)? {
        return Err(explain_loss(tx, id, token)?);
    }
    for d in rest {
        tx.insert_event(id, EventKind::FieldChanged, d)?;
    }
    Ok(())
}

/// A record's params while a save changes them: their text, each key changed in place
/// ([`splice`]), or — when the text cannot be spliced (the key given twice, a value
/// removed) — the object parsed once and written back whole.
enum Edit {
    Text(String),
    Map(Map<String, Value>),
}

impl Edit {
    /// Sets `name` to `to` (`Null` removes it) unless `same(from, to)`; returns the value
    /// it had when it changed.
    fn set(
        &mut self,
        id: i64,
        name: &str,
        to: Value,
        same: impl Fn(&Value, &Value) -> bool,
    ) -> Result<Option<Value>> {
        if let Edit::Text(text) = self {
            if let Some(slot) = splice::locate(text, name) {
                let from = splice::value_at(text, &slot);
                if same(&from, &to) {
                    return Ok(None);
                }
                if !to.is_null() {
                    *text = splice::put(text, name, &slot, &to);
                    return Ok(Some(from));
                }
            }
            *self = Edit::Map(params_object(id, text)?);
        }
        let Edit::Map(m) = self else {
            unreachable!("a text edit became a map above")
        };
        let from = m.get(name).cloned().unwrap_or(Value::Null);
        if same(&from, &to) {
            return Ok(None);
        }
        match to {
            Value::Null => m.remove(name),
            v => m.insert(name.to_string(), v),
        };
        Ok(Some(from))
    }

    fn into_text(self) -> String {
        match self {
            Edit::Text(t) => t,
            Edit::Map(m) => Value::Object(m).to_string(),
        }
    }
}

/// The holder sets fields of item `id` (`name`, what was typed), each checked against
/// its type and rules and stored in its canonical form: one fenced write, one
/// `field_changed` event per field that changes (`{field, from, to}`, `typed` when
/// normalised). Returns the events' details (empty: every value was already so). A
/// value that breaks a rule refuses the whole write (`BadValue`, naming the field).
pub(crate) fn set_fields(
    tx: &mut dyn Tx,
    id: i64,
    token: i64,
    values: &[(String, String)],
) -> Result<Vec<Value>> {
    // The record and whether it kept every rule before (its digest, read with it, before
    // the write): then it still does after values that were each checked, and needs no
    // other check.
    let (record, checked) = tx
        .field_record(id, token)?
        .ok_or(StoreError::NotFound(id))?;
    if !record.held {
        return Err(explain_loss(tx, id, token)?);
    }
    let defs = tx.fields_at(&record.queue, checked.map(|c| c.version))?;
    let kept_before = checked.is_some_and(|c| c.holds(&record.queue, &record.params));
    let mut params = Edit::Text(record.params);
    let mut details = Vec::new();
    for (name, typed) in values {
        let Some(def) = defs.iter().find(|d| d.name == *name) else {
            return Err(unknown_field(&record.queue, name, &defs));
        };
        if def.kind == FieldType::Checklist {
            return Err(StoreError::Invalid(format!(
                "{name} is a checklist: tick its lines with `caseload tick {id} {name} LINE`"
            )));
        }
        let to = check_typed(def, typed).map_err(|problem| {
            StoreError::BadValue(FieldProblem {
                field: name.clone(),
                problem,
            })
        })?;
        let same =
            |from: &Value, to: &Value| from == to || (value_text(from).is_empty() && to.is_null());
        let Some(from) = params.set(id, name, to.clone(), same)? else {
            continue;
        };
        let mut d = json!({"field": name, "from": from, "to": to, "token": token});
        if value_text(&to) != typed.trim() {
            d["typed"] = json!(typed);
        }
        details.push(d);
    }
    if details.is_empty() {
        return Ok(details);
    }
    let text = params.into_text();
    let keeps = |text: &str| {
        let params = serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
        problems(&defs, &params).is_empty()
    };
    let digest = checked
        .filter(|_| kept_before || keeps(&text))
        .map(|c| digest(c.version, &record.queue, &text));
    write_params(tx, id, token, &text, digest.as_ref(), &details)?;
    if has_keys(&defs) {
        dedupe::put_keys_of(tx, id, &defs, &text)?;
    }
    Ok(details)
}

/// The holder ticks a checklist's line (`state`: done, not done for a reason, or back to
/// do): one fenced write with its `field_changed` event (`{field, line, from, to}`, the
/// states in words). `None` when the line was already so.
pub(crate) fn tick(
    tx: &mut dyn Tx,
    id: i64,
    token: i64,
    field: &str,
    line: &str,
    state: &LineState,
) -> Result<Option<Value>> {
    let (item, mut params, defs) = held_record(tx, id, token)?;
    let Some(def) = defs.iter().find(|d| d.name == field) else {
        return Err(unknown_field(&item.queue, field, &defs));
    };
    if def.kind != FieldType::Checklist {
        return Err(StoreError::Invalid(format!(
            "{field} is a {} field, not a checklist: `caseload set {id} {field}=VALUE`",
            def.kind.as_str()
        )));
    }
    let mut list = Checklist::of(def, params.get(field))
        .ok_or_else(|| StoreError::Invalid(format!("#{id}'s {field} is not a list of lines")))?;
    let Some(i) = list.find(line) else {
        let lines: Vec<&str> = list.lines.iter().map(|l| l.line.as_str()).collect();
        return Err(StoreError::Invalid(format!(
            "{field} of #{id} has no line '{}' (its lines: {})",
            crate::domain::sanitize::line(line),
            lines.join(", ")
        )));
    };
    let from = list.lines[i].state.clone();
    if from == *state {
        return Ok(None);
    }
    list.lines[i].state = state.clone();
    let detail = json!({"field": field, "line": list.lines[i].line, "from": from.as_text(),
                        "to": state.as_text(), "token": token});
    params.insert(field.to_string(), list.to_json());
    let text = Value::Object(params).to_string();
    write_params(tx, id, token, &text, None, std::slice::from_ref(&detail))?;
    Ok(Some(detail))
}

/// Complete's check of the record's fields (`w` the complete's write): unchanged when
/// the item's queue has no fields or every field keeps its rules; refused
/// (`BrokenRules`, each field named) when one breaks them, unless a supervisor
/// completes anyway (`over`, the reason: recorded in the event with the fields it
/// broke). An item not held under `token` is left to the fenced write to explain.
/// `judge`: the fields of the item's queue as [`Tx::finishing`] read them, or what
/// [`Tx::fields_checked`] read: then a record whose digest still holds is not checked
/// again, and the definitions are needed (the store's, at the version read) only when it
/// does not.
pub(crate) fn check_complete<'a>(
    tx: &mut dyn Tx,
    id: i64,
    token: i64,
    w: &ItemWrite<'a>,
    over: Option<&str>,
    judge: Judge,
) -> Result<ItemWrite<'a>> {
    let mut w = w.clone();
    if let Some(reason) = over {
        // Recorded either way, so a retry after a lost answer is the same write.
        w.detail["override"] = json!(reason);
    }
    match &judge {
        Judge::Defs(defs) if defs.is_empty() => return Ok(w),
        Judge::Checked(c) | Judge::Held(c, _) if !c.has_fields => return Ok(w),
        _ => {}
    }
    let (item, judge) = match judge {
        Judge::Held(c, record) => (record, Judge::Checked(c)),
        judge => {
            let me = tx.actor().name.clone();
            let Some(item) = tx.item_for_update(id)? else {
                return Ok(w);
            };
            let held = item.held_with(&me, token);
            let record = FieldRecord {
                queue: item.queue,
                params: item.params,
                held,
            };
            (record, judge)
        }
    };
    // Not the holder's: the fenced write refuses it and says why.
    if !item.held {
        return Ok(w);
    }
    let defs: Arc<[FieldDef]> = match judge {
        Judge::Defs(defs) => defs.into(),
        Judge::Checked(c) | Judge::Held(c, _) if c.holds(&item.queue, &item.params) => {
            return Ok(w);
        }
        // The definitions at the version read with the digest: kept by the store.
        Judge::Checked(c) | Judge::Held(c, _) => tx.fields_at(&item.queue, Some(c.version))?,
    };
    let params = serde_json::from_str::<Value>(&item.params).unwrap_or(Value::Null);
    let broken = problems(&defs, &params);
    if broken.is_empty() {
        return Ok(w);
    }
    if over.is_none() {
        return Err(StoreError::BrokenRules {
            id,
            problems: broken,
        });
    }
    require_supervisor(tx, "complete a record that breaks its fields' rules")?;
    let names: Vec<&str> = broken.iter().map(|p| p.field.as_str()).collect();
    w.detail["broken"] = json!(names);
    Ok(w)
}
