//! Work given to people: every lock the user holds is tracked however it was acquired
//! (this screen, another one, the command line, a supervisor), with a notice at once when
//! a supervisor gives them an item; and the supervisor's side: assigning an item, names
//! completed from the known users.

use super::set_info;
use crate::app::{Dialog, FieldSpec, Held, Pending, State};
use crate::domain::{Event, EventKind, Item, ItemState, sanitize};

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
