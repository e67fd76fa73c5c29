//! The detail pane's form (verification work): the fields the item's queue defines, each
//! with its value and whether it keeps its rules, above the raw params. The form is a
//! list of slots (a field, or a line of a checklist field); one has the focus (Tab and
//! the arrows move it), Enter edits a field in place, Space ticks a checklist's line.
//! What the form shows is worked out from the item's params and the queue's definitions
//! whenever it is drawn (a screenful of checks, each cheap), so it never disagrees with
//! the item on screen.

use serde_json::{Map, Value};

use super::{DetailLine, LineKind, State, TextInput};
use crate::domain::Item;
use crate::domain::queue_fields::{
    Checklist, FieldDef, FieldType, LineState, Problem, check_stored, check_typed, value_text,
};

/// Where the form's focus can stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The field at this index of the queue's definitions.
    Field(usize),
    /// Line `1` of the checklist field at index `0`.
    Line(usize, usize),
}

/// The form of the item open in the detail pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    pub item_id: i64,
    /// The focused slot's index.
    pub focus: usize,
    /// A field being edited in place.
    pub edit: Option<FieldEdit>,
    /// A value on its way to the store (shown, marked as saving, until it answers).
    pub saving: Option<(String, String)>,
}

impl Form {
    pub(crate) fn new(item_id: i64, focus: usize) -> Form {
        Form {
            item_id,
            focus,
            edit: None,
            saving: None,
        }
    }
}

/// A field being edited: its name and what is typed so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldEdit {
    pub field: String,
    pub buf: TextInput,
}

/// How a slot stands against its rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    /// Keeps its rules.
    Ok,
    /// What is typed keeps its rules and is stored in this canonical form.
    OkAs(String),
    /// Breaks one: the rule, worded without the value (`does not match ^…$`).
    Broken(String),
    /// A checklist's line.
    Line(LineState),
}

/// One row of the form as drawn (texts not yet sanitized).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub slot: Slot,
    pub label: String,
    pub value: String,
    pub mark: Mark,
    pub focused: bool,
    /// The row is being edited: the value is the text typed, the mark its live check.
    pub editing: bool,
    /// The row's value is being saved.
    pub saving: bool,
}

/// The queue's field definitions (none when it has no fields or they are not loaded).
pub(crate) fn defs<'a>(s: &'a State, queue: &str) -> &'a [FieldDef] {
    s.fields.get(queue).map_or(&[], Vec::as_slice)
}

/// An item's params as a JSON object (empty when they are not one).
pub(crate) fn params_of(item: &Item) -> Map<String, Value> {
    match serde_json::from_str::<Value>(&item.params) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// The slots of a form: each field, and after a checklist field each of its lines.
pub fn slots(defs: &[FieldDef], params: &Map<String, Value>) -> Vec<Slot> {
    let mut out = Vec::new();
    for (i, d) in defs.iter().enumerate() {
        out.push(Slot::Field(i));
        if d.kind == FieldType::Checklist
            && let Some(list) = Checklist::of(d, params.get(&d.name))
        {
            out.extend((0..list.lines.len()).map(|j| Slot::Line(i, j)));
        }
    }
    out
}

/// The form open on `item`, if its queue has fields.
pub(crate) fn form_of(s: &State, item_id: i64) -> Option<&Form> {
    s.form.as_ref().filter(|f| f.item_id == item_id)
}

/// The detail lines of the form (one per slot, drawn from the state), pushed before the
/// raw params; nothing when the item's queue has no fields.
pub(crate) fn push_lines(lines: &mut Vec<DetailLine>, s: &State, item: &Item) {
    let defs = defs(s, &item.queue);
    if defs.is_empty() {
        return;
    }
    let params = params_of(item);
    let n = slots(defs, &params).len();
    if !lines.is_empty() {
        lines.push(DetailLine {
            kind: LineKind::Text,
            text: String::new(),
        });
    }
    let broken = defs
        .iter()
        .filter(|d| check_stored(d, params.get(&d.name)).is_err())
        .count();
    let head = match broken {
        0 => "Fields (all keep their rules)".to_string(),
        1 => "Fields (1 breaks its rules)".to_string(),
        n => format!("Fields ({n} break their rules)"),
    };
    lines.push(DetailLine {
        kind: LineKind::Heading,
        text: head,
    });
    lines.extend((0..n).map(|i| DetailLine {
        kind: LineKind::Field(i),
        text: String::new(),
    }));
}

/// The raw params without the keys the form shows (pretty-printed), when the queue has
/// fields: `None` leaves the params section as it is.
pub(crate) fn other_params(s: &State, item: &Item) -> Option<Option<String>> {
    let defs = defs(s, &item.queue);
    if defs.is_empty() {
        return None;
    }
    let Ok(Value::Object(mut m)) = serde_json::from_str::<Value>(&item.params) else {
        return None;
    };
    for d in defs {
        m.remove(&d.name);
    }
    if m.is_empty() {
        return Some(None);
    }
    Some(serde_json::to_string_pretty(&Value::Object(m)).ok())
}

/// The rows of the form on `item` as they stand now (its params, what is typed, what is
/// being saved).
pub fn rows(s: &State, item: &Item) -> Vec<Row> {
    let defs = defs(s, &item.queue);
    if defs.is_empty() {
        return Vec::new();
    }
    let params = params_of(item);
    let form = form_of(s, item.id);
    let focus = form.map_or_else(|| first_broken(defs, &params), |f| f.focus);
    slots(defs, &params)
        .into_iter()
        .enumerate()
        .map(|(i, slot)| {
            let mut r = row(slot, defs, &params);
            r.focused = i == focus;
            if let Some(f) = form {
                let name = &defs[field_index(slot)].name;
                if let (Some(e), Slot::Field(_)) = (&f.edit, slot)
                    && e.field == *name
                {
                    r.editing = true;
                    r.value = e.buf.text();
                    r.mark = live(&defs[field_index(slot)], &r.value);
                }
                if let (Some((field, typed)), Slot::Field(_)) = (&f.saving, slot)
                    && field == name
                {
                    r.saving = true;
                    r.value = typed.clone();
                }
            }
            r
        })
        .collect()
}

/// Where the focus starts: the first field that breaks its rules (else the first).
pub fn first_broken(defs: &[FieldDef], params: &Map<String, Value>) -> usize {
    slots(defs, params)
        .iter()
        .position(|slot| match *slot {
            Slot::Field(i) => check_stored(&defs[i], params.get(&defs[i].name)).is_err(),
            Slot::Line(..) => false,
        })
        .unwrap_or(0)
}

/// The field a slot belongs to.
pub(crate) fn field_index(slot: Slot) -> usize {
    match slot {
        Slot::Field(i) | Slot::Line(i, _) => i,
    }
}

/// A value being typed, checked as typed: the mark, with the canonical form when the
/// store would write it otherwise (`✔ → +4930123456`).
fn live(def: &FieldDef, typed: &str) -> Mark {
    match check_typed(def, typed) {
        Ok(v) => {
            let canon = value_text(&v);
            if canon != typed.trim() && !canon.is_empty() {
                Mark::OkAs(canon)
            } else {
                Mark::Ok
            }
        }
        Err(p) => Mark::Broken(p.rule()),
    }
}

/// One slot's row, from the stored params.
fn row(slot: Slot, defs: &[FieldDef], params: &Map<String, Value>) -> Row {
    let base = |label: String, value: String, mark: Mark| Row {
        slot,
        label,
        value,
        mark,
        focused: false,
        editing: false,
        saving: false,
    };
    match slot {
        Slot::Field(i) => {
            let d = &defs[i];
            let stored = params.get(&d.name);
            let mark = match check_stored(d, stored) {
                Ok(()) => Mark::Ok,
                // The lines are listed below it.
                Err(Problem::Unticked { lines }) => Mark::Broken(match lines.len() {
                    1 => "1 line to tick or give a reason (X)".to_string(),
                    n => format!("{n} lines to tick or give a reason (X)"),
                }),
                Err(p) => Mark::Broken(p.rule()),
            };
            let value = match (d.kind, stored) {
                (FieldType::Checklist, _) => Checklist::of(d, stored)
                    .map(|l| l.summary())
                    .unwrap_or_else(|| stored.map(value_text).unwrap_or_default()),
                (_, Some(v)) => value_text(v),
                (_, None) => String::new(),
            };
            base(d.label().to_string(), value, mark)
        }
        Slot::Line(i, j) => {
            let d = &defs[i];
            let line =
                Checklist::of(d, params.get(&d.name)).and_then(|l| l.lines.into_iter().nth(j));
            match line {
                Some(l) => base(l.line, String::new(), Mark::Line(l.state)),
                None => base(String::new(), String::new(), Mark::Ok),
            }
        }
    }
}
