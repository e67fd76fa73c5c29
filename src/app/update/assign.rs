//! Work given to people: every lock the user holds is tracked however it was acquired
//! (this screen, another one, the command line, a supervisor), with a notice at once when
//! a supervisor gives them an item; and the supervisor's side: assigning an item, names
//! completed from the known users, editing an open item (`E`).

use super::{set_error, set_info};
use crate::app::{Dialog, Effect, FieldSpec, Held, Pending, State, SupervisorOp};
use crate::domain::time::{parse_rfc3339, rfc3339};
use crate::domain::{Event, EventKind, Item, ItemEdit, ItemState, Role, sanitize};

/// The name of a dialog field that takes a user's name (Tab completes it).
pub(super) const TO_USER: &str = "To user";

/// Adds the locks the user holds but this screen did not know of; tells them at once
/// when a supervisor gave one ("sup gave you #84: reason …").
pub(super) fn track_own(s: &mut State, own: Vec<Item>, given: &[Event]) {
    let mut told = Vec::new();
    for item in own {
        if s.held.contains_key(&item.id) || item.state != ItemState::Open || !item.is_held_by(&s.me)
        {
            continue;
        }
        s.held.insert(item.id, Held::of(&item));
        let how = given.iter().rev().find(|e| e.item_id == item.id);
        let title = sanitize::line(&item.title).into_owned();
        let text = match how {
            Some(e) if e.actor != s.me && e.kind == EventKind::Reassigned => {
                let reason = e
                    .detail_str("reason")
                    .map(|r| format!(": {}", sanitize::line(r)))
                    .unwrap_or_default();
                let assigned = e.detail.get("assigned") == Some(&serde_json::Value::Bool(true));
                let clock = if assigned {
                    " (assigned: its lock clock starts when you open it)"
                } else {
                    " (your lock is running)"
                };
                format!(
                    "{} gave you #{} “{title}”{reason}{clock}",
                    sanitize::line(&e.actor),
                    item.id
                )
            }
            _ => format!(
                "#{} “{title}” is yours (taken elsewhere); it is in Mine",
                item.id
            ),
        };
        told.push(text);
    }
    let Some(last) = told.last().cloned() else {
        return;
    };
    set_info(s, last);
    let given_by_someone = told.iter().any(|t| t.contains(" gave you #"));
    if given_by_someone {
        s.notice = Some(Dialog::new(
            "Work for you",
            told.join("\n"),
            Pending::Dismiss,
        ));
    }
}

/// Tab in a name field: completes the typed start of a known user's name (as far as the
/// matches agree, listing them when several). False when there is nothing to complete,
/// so Tab moves to the next field.
pub(super) fn complete_name(s: &mut State) -> bool {
    let users = s.users.clone();
    let Some(d) = s.dialog.as_mut() else {
        return false;
    };
    let Some(field) = d.inputs.get_mut(d.focus) else {
        return false;
    };
    if field.spec.name != TO_USER {
        return false;
    }
    let typed = field.buf.text().trim().to_string();
    if typed.is_empty() || users.contains(&typed) {
        return false;
    }
    let matches: Vec<&String> = users.iter().filter(|u| u.starts_with(&typed)).collect();
    let Some(first) = matches.first() else {
        // Not a known name's start: Tab moves on; the store names the known ones if
        // the name is confirmed.
        return false;
    };
    let common: String = matches.iter().skip(1).fold(first.to_string(), |acc, m| {
        acc.chars()
            .zip(m.chars())
            .take_while(|(a, b)| a == b)
            .map(|(a, _)| a)
            .collect()
    });
    if common.chars().count() > typed.chars().count() {
        field.buf = crate::app::TextInput::line(&common);
    }
    d.error = (matches.len() > 1).then(|| {
        let names: Vec<String> = matches
            .iter()
            .take(8)
            .map(|m| sanitize::line(m).into_owned())
            .collect();
        format!("Matches: {}", names.join(", "))
    });
    true
}

/// `a` on an open item nobody holds: assign it to a person (no lock clock until they
/// open it).
pub(super) fn assign_dialog(s: &mut State, item: &Item) {
    s.dialog = Some(
        Dialog::new(
            format!("Assign #{}?", item.id),
            format!(
                "#{} {}\nIt goes to their Mine as assigned: nobody else can take it, and its \
                 lock clock starts when they open it. u in Locks undoes it.",
                item.id,
                sanitize::line(&item.title)
            ),
            Pending::Assign {
                id: item.id,
                token: None,
            },
        )
        .field(
            FieldSpec::required(TO_USER, "To user (required; Tab completes)"),
            "",
        )
        .field(
            FieldSpec::reason("Reason (required, recorded and shown to them)"),
            "",
        ),
    );
}

/// `E`: the selected open item's priority, due time and queue in one dialog.
pub(super) fn edit_item(s: &mut State) -> Vec<Effect> {
    if s.role != Role::Supervisor {
        set_error(
            s,
            "Supervisor only: editing items needs the supervisor role (you are staff)".into(),
        );
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
    let due = item.due_at.map(rfc3339).unwrap_or_default();
    s.dialog = Some(
        Dialog::new(
            format!("Edit #{}", item.id),
            sanitize::line(&item.title).into_owned(),
            Pending::EditItem {
                id: item.id,
                priority: item.priority,
                due: item.due_at,
                queue: item.queue.clone(),
            },
        )
        .field(
            FieldSpec::required("Priority", "Priority (higher is taken first)"),
            &item.priority.to_string(),
        )
        .field(
            FieldSpec::optional(
                "Due",
                "Due (RFC 3339, e.g. 2026-12-01T17:00:00Z; empty: none)",
            ),
            &due,
        )
        .field(
            FieldSpec::required("Queue", "Queue (an existing one)"),
            &item.queue,
        ),
    );
    vec![]
}

/// The edit dialog's values as the changes they make; an error names the field.
pub(super) fn edit_op(d: &Dialog) -> Result<SupervisorOp, (usize, String)> {
    let Pending::EditItem {
        id,
        priority,
        due,
        queue,
    } = d.pending.clone()
    else {
        return Err((0, "not an edit".into()));
    };
    let p = d.value(0);
    let new_priority = p.parse::<i64>().map_err(|_| {
        (
            0,
            format!("Priority: '{}' is not a whole number", sanitize::line(&p)),
        )
    })?;
    let t = d.value(1);
    let new_due = if t.is_empty() {
        None
    } else {
        Some(parse_rfc3339(&t).ok_or_else(|| {
            (
                1,
                format!(
                    "Due: '{}' is not an RFC 3339 time (e.g. 2026-12-01T17:00:00Z)",
                    sanitize::line(&t)
                ),
            )
        })?)
    };
    let new_queue = d.value(2);
    let edit = ItemEdit {
        priority: (new_priority != priority).then_some(new_priority),
        due: (new_due != due).then_some(new_due),
        queue: (!new_queue.is_empty() && new_queue != queue).then_some(new_queue),
    };
    if edit.is_empty() {
        return Err((0, "Nothing changed: change a value, or Esc".into()));
    }
    Ok(SupervisorOp::Edit { id, edit })
}
