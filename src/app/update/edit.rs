//! `E`: a supervisor's edit of an open item, one dialog field per column a supervisor may
//! set (the field table's `Who::Supervisor` columns, in its order, each with its label
//! and hint); only what changed is sent, each value read as its column's kind.

use super::set_error;
use crate::app::{Dialog, Effect, FieldSpec, Pending, State, SupervisorOp};
use crate::domain::Millis;
use crate::domain::fields::{FIELDS, Field, Kind, Value, Who};
use crate::domain::time::{Zone, rfc3339};
use crate::domain::when::{Span, parse_time};
use crate::domain::{ItemEdit, ItemState, sanitize};

/// The columns the dialog edits.
fn editable() -> impl Iterator<Item = &'static Field> {
    FIELDS.iter().filter(|f| f.set_by(Who::Supervisor))
}

/// A value as the dialog shows it.
fn as_text(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        Value::Time(t) => t.map(rfc3339).unwrap_or_default(),
        Value::Text(t) => t.clone().unwrap_or_default(),
        Value::Id(t) => t.map(|id| id.to_string()).unwrap_or_default(),
    }
}

/// `E`: the selected open item's editable columns in one dialog.
pub(super) fn edit_item(s: &mut State) -> Vec<Effect> {
    if !super::supervise::supervisor(s, "editing items") {
        return vec![];
    }
    let item = match &s.detail {
        Some(d) => Some(d.item.clone()),
        None => s.pane(s.view).and_then(|p| p.selected_item()).cloned(),
    };
    let Some(item) = item else {
        set_error(s, "Select an item to edit first".into());
        return vec![];
    };
    if item.state != ItemState::Open {
        set_error(
            s,
            format!(
                "#{} is {}; only open items can be edited",
                item.id,
                item.state.as_str()
            ),
        );
        return vec![];
    }
    let before: Vec<_> = editable()
        .map(|f| (f.col, item.cell(f.col).to_value()))
        .collect();
    let mut d = Dialog::new(
        format!("Edit #{}", item.id),
        sanitize::line(&item.title).into_owned(),
        Pending::EditItem {
            id: item.id,
            before: before.clone(),
        },
    );
    for (f, (_, v)) in editable().zip(&before) {
        let label = format!("{} ({})", f.label, f.hint);
        let spec = match f.kind.nullable() {
            true => FieldSpec::optional(f.label, label),
            false => FieldSpec::required(f.label, label),
        };
        d = d.field(spec, &as_text(v));
    }
    s.dialog = Some(d);
    vec![]
}

/// The edit dialog's values (each field found by its column's label) as the changes
/// they make; an error names the field (its index and a message starting with its label).
/// Times are read as the command line reads them (`domain::when`), at `now` in `zone`.
pub(super) fn edit_op(
    d: &Dialog,
    now: Millis,
    zone: Zone,
) -> Result<SupervisorOp, (usize, String)> {
    let Pending::EditItem { id, before } = &d.pending else {
        return Err((0, "not an edit".into()));
    };
    let mut edit = ItemEdit::default();
    for (col, old) in before {
        let f = crate::domain::fields::field(*col);
        let Some(i) = d.index_of(f.label) else {
            continue;
        };
        let new = read(f, &d.value(i), now, zone).map_err(|m| (i, m))?;
        if let Some(new) = new.filter(|n| n != old) {
            edit = edit.with(*col, new);
        }
    }
    if edit.is_empty() {
        return Err((0, "Nothing changed: change a value, or Esc".into()));
    }
    Ok(SupervisorOp::Edit { id: *id, edit })
}

/// What was typed for column `f`, as its kind reads it; `None`: no value (an emptied
/// text field keeps what the item has).
fn read(f: &Field, t: &str, now: Millis, zone: Zone) -> Result<Option<Value>, String> {
    let bad = |what: &str| format!("{}: '{}' is not {what}", f.label, sanitize::line(t));
    Ok(Some(match f.kind {
        Kind::Int => Value::Number(t.parse::<i64>().map_err(|_| bad("a whole number"))?),
        Kind::Time | Kind::OptTime if t.is_empty() => Value::Time(None),
        Kind::Time | Kind::OptTime => Value::Time(Some(
            parse_time(t, now, zone, Span::Ahead)
                .map_err(|m| format!("{}: {}", f.label, sanitize::line(&m)))?,
        )),
        Kind::OptId if t.is_empty() => Value::Id(None),
        Kind::OptId => Value::Id(Some(
            t.trim_start_matches('#')
                .parse::<i64>()
                .map_err(|_| bad("an item's id"))?,
        )),
        Kind::Text | Kind::OptText | Kind::Json if t.is_empty() => return Ok(None),
        Kind::Text | Kind::OptText | Kind::Json => Value::Text(Some(t.to_string())),
    }))
}
