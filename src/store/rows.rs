//! Reading stored rows into the domain's types, once for both backends. Each backend
//! gives access to one row's cells ([`Cells`]); what the cells mean is decided here.
//!
//! Nothing is silently invented. An item column that cannot be read as its type (text
//! that is not UTF-8, written by another program or damaged on disk; an unknown state)
//! is named in `Item::unreadable` — lists mark the row, take-next passes it over, the
//! lock rules refuse to act on it, `check` reports it. An event whose kind caseload does
//! not know, or whose detail is not JSON, is corruption, reported naming the event and
//! the column.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use super::LostLock;
use super::error::{Result, StoreError};
use crate::domain::fields::{FIELDS, Kind, Value};
use crate::domain::queue_fields::FieldDef;
use crate::domain::sla::{Sla, SlaSpec};
use crate::domain::texts::{CannedText, Purpose};
use crate::domain::{
    AuditEntry, AuditKind, Event, EventKind, Item, LockLoss, QueueSettings, TakeOrder, Unreadable,
};

pub(crate) const NOT_UTF8: &str = "is not valid UTF-8";
pub(crate) const MISSING: &str = "is missing (NULL)";
pub(crate) const NOT_A_NUMBER: &str = "is not a number";
pub(crate) const UNKNOWN_STATE: &str = "is not a known state";

/// The cells of one result row, by position. A cell that cannot be read as asked is
/// given as well as it can be (text lossily, a number as 0) and marked with its column.
pub(crate) trait Cells {
    /// Text, `None` for NULL.
    fn opt_text(&mut self, i: usize, column: &'static str) -> Result<Option<String>>;
    /// A whole number, `None` for NULL.
    fn opt_int(&mut self, i: usize, column: &'static str) -> Result<Option<i64>>;
    /// A boolean (SQLite stores 0/1, PostgreSQL a BOOLEAN).
    fn flag(&mut self, i: usize, column: &'static str) -> Result<bool>;
    /// Notes a column that could not be read.
    fn mark(&mut self, column: &'static str, problem: &'static str);
    /// The columns marked so far.
    fn marks(&self) -> &[Unreadable];

    /// Text that may not be NULL.
    fn text(&mut self, i: usize, column: &'static str) -> Result<String> {
        let v = self.opt_text(i, column)?;
        Ok(v.unwrap_or_else(|| {
            self.mark(column, MISSING);
            String::new()
        }))
    }

    /// A whole number that may not be NULL.
    fn int(&mut self, i: usize, column: &'static str) -> Result<i64> {
        let v = self.opt_int(i, column)?;
        Ok(v.unwrap_or_else(|| {
            self.mark(column, MISSING);
            0
        }))
    }
}

fn corrupt(what: String) -> StoreError {
    StoreError::Corrupt(format!(
        "{what}; the database was changed outside caseload or is damaged (run `caseload check`)"
    ))
}

/// An item from the columns of `ITEM_COLS` (the table's order, each cell read as its
/// column's kind); never fails on a stored value (see the module's notes).
pub(crate) fn item_from(c: &mut impl Cells) -> Result<Item> {
    let mut item = Item::default();
    for (i, f) in FIELDS.iter().enumerate() {
        let v = match f.kind {
            Kind::Int => Value::Number(c.int(i, f.name)?),
            Kind::Time => Value::Time(Some(c.int(i, f.name)?)),
            Kind::OptTime => Value::Time(c.opt_int(i, f.name)?),
            Kind::OptId => Value::Id(c.opt_int(i, f.name)?),
            Kind::Text | Kind::Json => Value::Text(Some(c.text(i, f.name)?)),
            Kind::OptText => Value::Text(c.opt_text(i, f.name)?),
        };
        if item.put(f.col, v).is_err() && !c.marks().iter().any(|u| u.column == f.name) {
            // Not a claim that it is open: `unreadable` names the state, and no rule
            // acts on such an item.
            c.mark(f.name, UNKNOWN_STATE);
        }
    }
    item.unreadable = c.marks().to_vec();
    let order = |col: &str| Item::COLUMNS.iter().position(|c| *c == col);
    item.unreadable.sort_by_key(|u| order(u.column));
    Ok(item)
}

/// An event from `id, item_id, at, actor, os_user, kind, detail` (detail as JSON text).
/// Names are read lossily; an unknown kind or a detail that is not JSON is corruption.
pub(crate) fn event_from(c: &mut impl Cells) -> Result<Event> {
    let (id, item_id) = (c.int(0, "id")?, c.int(1, "item_id")?);
    let kind = c.text(5, "kind")?;
    let detail = c.text(6, "detail")?;
    let named = |what: String| corrupt(format!("event #{id} of item #{item_id}: {what}"));
    Ok(Event {
        id,
        item_id,
        at: c.int(2, "at")?,
        actor: c.text(3, "actor")?,
        os_user: c.text(4, "os_user")?,
        kind: EventKind::parse(&kind).ok_or_else(|| {
            named(format!(
                "column kind holds '{kind}', which is not an event kind caseload knows"
            ))
        })?,
        detail: serde_json::from_str(&detail)
            .map_err(|e| named(format!("column detail is not JSON ({e})")))?,
    })
}

/// An audit record from `id, at, actor, real_user, kind, subject, old_value, new_value`
/// (the values as JSON text).
pub(crate) fn audit_from(c: &mut impl Cells) -> Result<AuditEntry> {
    let id = c.int(0, "id")?;
    let kind = c.text(4, "kind")?;
    let named = |what: String| corrupt(format!("audit record #{id}: {what}"));
    let json = |t: &str| -> Result<serde_json::Value> {
        serde_json::from_str(t).map_err(|e| named(format!("a value is not JSON ({e})")))
    };
    let old = c.opt_text(6, "old_value")?;
    let new = c.text(7, "new_value")?;
    Ok(AuditEntry {
        id,
        at: c.int(1, "at")?,
        actor: c.text(2, "actor")?,
        real: c.text(3, "real_user")?,
        kind: AuditKind::parse(&kind)
            .ok_or_else(|| named(format!("kind '{kind}' is not one caseload knows")))?,
        subject: c.text(5, "subject")?,
        old: old.as_deref().map_or(Ok(serde_json::Value::Null), json)?,
        new: json(&new)?,
    })
}

/// The audit columns, in the order [`audit_from`] reads them (PostgreSQL casts the JSON).
pub(crate) const AUDIT_COLS: &str = "id, at, actor, real_user, kind, subject, old_value, new_value";

/// A lost lock from the event columns (as [`event_from`]) followed by the item's title
/// and current holder.
pub(crate) fn lost_lock_from(c: &mut impl Cells) -> Result<LostLock> {
    let e = event_from(c)?;
    let loss = LockLoss::from_event(&e).ok_or_else(|| {
        corrupt(format!(
            "event #{} of item #{}: a '{}' event cannot end a lock",
            e.id,
            e.item_id,
            e.kind.as_str()
        ))
    })?;
    Ok(LostLock {
        item_id: e.item_id,
        title: c.text(7, "title")?,
        loss,
        now_held_by: c.opt_text(8, "lock_user")?,
    })
}

/// Queue settings from `name, lock_seconds, warn_seconds, max_per_user, paused,
/// take_order, park_grace_seconds, undo_seconds, review_percent, review_new` (an order this program does not know
/// reads as priority).
pub(crate) fn queue_from(c: &mut impl Cells) -> Result<QueueSettings> {
    Ok(QueueSettings {
        name: c.text(0, "name")?,
        lock_seconds: c.int(1, "lock_seconds")?,
        warn_seconds: c.int(2, "warn_seconds")?,
        max_per_user: c.opt_int(3, "max_per_user")?,
        paused: c.flag(4, "paused")?,
        order: c
            .opt_text(5, "take_order")?
            .as_deref()
            .and_then(TakeOrder::parse)
            .unwrap_or_default(),
        park_grace_seconds: c.int(6, "park_grace_seconds")?,
        undo_seconds: c.int(7, "undo_seconds")?,
        review_percent: c.int(8, "review_percent")?,
        review_new: c.int(9, "review_new")?,
    })
}

/// A queue's SLA from `queue, sla_ms, hours, tz, holidays`; one that cannot be read is
/// corruption, named.
pub(crate) fn sla_from(c: &mut impl Cells) -> Result<Sla> {
    let spec = SlaSpec {
        queue: c.text(0, "queue")?,
        sla_ms: c.int(1, "sla_ms")?,
        hours: c.text(2, "hours")?,
        tz: c.text(3, "tz")?,
        holidays: c.text(4, "holidays")?.lines().map(str::to_string).collect(),
    };
    if !c.marks().is_empty() {
        return Err(corrupt(format!(
            "the SLA of queue {}: a column is not valid UTF-8",
            spec.queue
        )));
    }
    Sla::from_spec(&spec).map_err(|e| corrupt(format!("the SLA of queue {}: {e}", spec.queue)))
}

/// A ready-made text from `queue, code, purpose, text`; one that cannot be read is
/// corruption, named.
pub(crate) fn text_from(c: &mut impl Cells) -> Result<CannedText> {
    let queue = c.text(0, "queue")?;
    let code = c.text(1, "code")?;
    let purpose = c.text(2, "purpose")?;
    let text = c.text(3, "text")?;
    let named = |what: String| corrupt(format!("text {code} of queue {queue}: {what}"));
    if !c.marks().is_empty() {
        return Err(named("a column is not valid UTF-8".into()));
    }
    let purpose = Purpose::parse(&purpose).map_err(named)?;
    Ok(CannedText {
        queue,
        purpose,
        code,
        text,
    })
}

/// A field definition from `queue, name, spec` (the spec as JSON text); one that cannot
/// be read is corruption, named.
pub(crate) fn field_from(c: &mut impl Cells) -> Result<(String, FieldDef)> {
    let queue = c.text(0, "queue")?;
    let name = c.text(1, "name")?;
    let spec = c.text(2, "spec")?;
    let named = |what: String| corrupt(format!("field {name} of queue {queue}: {what}"));
    if !c.marks().is_empty() {
        return Err(named("a column is not valid UTF-8".into()));
    }
    let def = parsed_field(&name, &spec).map_err(named)?;
    Ok((queue, def))
}

/// Field `name` from its stored spec. The rows are read in each transaction that needs
/// them (a Complete judges the record by the definitions its own transaction sees); only
/// the parse of a spec is done once per process and spec text, since a Complete reads
/// every field of its queue.
fn parsed_field(name: &str, spec: &str) -> std::result::Result<FieldDef, String> {
    type Parsed = HashMap<(String, String), FieldDef>;
    static SEEN: OnceLock<Mutex<Parsed>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    let key = (name.to_string(), spec.to_string());
    if let Some(d) = seen.lock().ok().and_then(|s| s.get(&key).cloned()) {
        return Ok(d);
    }
    let v: serde_json::Value =
        serde_json::from_str(spec).map_err(|e| format!("its spec is not JSON ({e})"))?;
    let def = FieldDef::from_spec(name, &v)?;
    if let Ok(mut s) = seen.lock() {
        if s.len() >= 1024 {
            s.clear();
        }
        s.insert(key, def.clone());
    }
    Ok(def)
}

/// Refuses an item the lock rules cannot be applied to: one whose state, queue or lock
/// columns cannot be read.
pub(crate) fn ruled(item: Item) -> Result<Item> {
    const RULED: [&str; 5] = ["state", "queue", "lock_user", "lock_time", "lock_token"];
    match item.unreadable.iter().find(|u| RULED.contains(&u.column)) {
        None => Ok(item),
        Some(u) => Err(corrupt(format!(
            "item #{}: column {} {}, so nothing can be done to it",
            item.id, u.column, u.problem
        ))),
    }
}

/// A stored row of `items` for tests, in the field table's order: each column's value by
/// its kind (0, time 1, empty text, `{}`, NULL where it may be), or as `set` names it
/// (`None`: NULL).
#[cfg(test)]
pub(crate) fn sample_item_row(set: &[(&str, Option<&str>)]) -> Vec<Option<String>> {
    use crate::domain::fields::Kind;
    FIELDS
        .iter()
        .map(|f| match set.iter().find(|(n, _)| *n == f.name) {
            Some((_, v)) => v.map(str::to_owned),
            None => match f.kind {
                Kind::Int => Some("0".into()),
                Kind::Time => Some("1".into()),
                Kind::Text => Some(String::new()),
                Kind::Json => Some("{}".into()),
                Kind::OptText | Kind::OptTime | Kind::OptId => None,
            },
        })
        .collect()
}

/// A plain row of readable cells, for tests.
#[cfg(test)]
pub(crate) struct Plain {
    pub cells: Vec<Option<String>>,
    pub bad: Vec<Unreadable>,
}

#[cfg(test)]
impl Cells for Plain {
    fn opt_text(&mut self, i: usize, _: &'static str) -> Result<Option<String>> {
        Ok(self.cells[i].clone())
    }
    fn opt_int(&mut self, i: usize, column: &'static str) -> Result<Option<i64>> {
        let parsed = self.cells[i].as_deref().map(str::parse::<i64>);
        Ok(parsed.map(|n| {
            n.unwrap_or_else(|_| {
                self.mark(column, NOT_A_NUMBER);
                0
            })
        }))
    }
    fn flag(&mut self, i: usize, _: &'static str) -> Result<bool> {
        Ok(self.cells[i].as_deref() == Some("1"))
    }
    fn mark(&mut self, column: &'static str, problem: &'static str) {
        self.bad.push(Unreadable { column, problem });
    }
    fn marks(&self) -> &[Unreadable] {
        &self.bad
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[&str]) -> Plain {
        Plain {
            cells: cells
                .iter()
                .map(|c| (*c != "NULL").then(|| c.to_string()))
                .collect(),
            bad: Vec::new(),
        }
    }

    #[test]
    fn an_unknown_event_kind_is_corruption_naming_event_and_column() {
        let e = event_from(&mut row(&["3", "7", "0", "a", "o", "vanished", "{}"])).unwrap_err();
        assert!(matches!(e, StoreError::Corrupt(_)));
        let m = e.to_string();
        assert!(
            m.contains("event #3 of item #7") && m.contains("column kind"),
            "{m}"
        );
        let m = event_from(&mut row(&["3", "7", "0", "a", "o", "noted", "{oops"]))
            .unwrap_err()
            .to_string();
        assert!(m.contains("column detail"), "{m}");
    }

    #[test]
    fn an_unknown_state_is_named_and_ruled_out() {
        let cells = sample_item_row(&[
            ("id", Some("5")),
            ("queue", Some("q")),
            ("title", Some("t")),
            ("state", Some("exploded")),
            ("created_by", Some("p")),
        ]);
        let mut plain = Plain {
            cells,
            bad: Vec::new(),
        };
        let item = item_from(&mut plain).unwrap();
        assert_eq!(
            item.unreadable_summary().as_deref(),
            Some("state is not a known state")
        );
        let m = ruled(item).unwrap_err().to_string();
        assert!(m.contains("item #5") && m.contains("column state"), "{m}");
    }
}
