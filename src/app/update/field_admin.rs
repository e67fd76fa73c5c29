//! A queue's field definitions in the TUI (supervisors): `F` on the Stats view's selected
//! queue lists its fields; `a` adds one, Enter changes the selected one, `d` deletes it,
//! `K`/`J` move it up or down. Each change is the store's own audited write
//! (`define_field`, `delete_field`) on the worker; the list follows with the next refresh.

use ratatui::crossterm::event::KeyEvent;

use super::supervise::supervisor;
use super::{on_screen, set_error, set_info};
use crate::app::field_admin::{FieldAdmin, define_dialog, parse_define};
use crate::app::keymap::{self, Action, Context};
use crate::app::{Dialog, Effect, Pending, State, SupervisorOp, View};
use crate::domain::queue_fields::{FieldChange, FieldDef};
use crate::domain::sanitize;
use crate::store::StoreError;

/// `F`: the selected queue's fields (Stats view; supervisors).
pub(super) fn open(s: &mut State) -> Vec<Effect> {
    if !supervisor(s, "defining fields") {
        return vec![];
    }
    let queue = match (&s.stats, s.view, &s.detail) {
        (Some(st), View::Stats, None) => st.by_queue.get(s.stats_selected).map(|q| q.queue.clone()),
        _ => None,
    };
    let Some(queue) = queue else {
        set_error(
            s,
            "Select a queue in the Stats view first (press 4, j/k, then F)".into(),
        );
        return vec![];
    };
    s.field_admin = Some(FieldAdmin { queue, selected: 0 });
    vec![]
}

/// The list's queue and its definitions, in order.
fn listed(s: &State) -> Option<(String, Vec<FieldDef>, usize)> {
    let fa = s.field_admin.as_ref()?;
    let defs = s.fields.get(&fa.queue).cloned().unwrap_or_default();
    let sel = fa.selected.min(defs.len().saturating_sub(1));
    Some((fa.queue.clone(), defs, sel))
}

/// A key while the list is open: its own keys, moving, Esc (or q) closes it, `?` helps.
pub(super) fn key(s: &mut State, key: &KeyEvent) -> Vec<Effect> {
    let Some((queue, defs, sel)) = listed(s) else {
        return vec![];
    };
    let selected = defs.get(sel).cloned();
    match keymap::lookup(Context::Fields, key) {
        Some(Action::AddField) => {
            s.dialog = Some(define_dialog(&queue, None));
            return vec![];
        }
        Some(Action::ChangeField) => {
            if let Some(d) = selected {
                s.dialog = Some(define_dialog(&queue, Some(&d)));
            }
            return vec![];
        }
        Some(Action::DeleteField) => {
            if let Some(d) = selected {
                let name = sanitize::line(&d.name).into_owned();
                s.dialog = Some(Dialog::new(
                    format!("Delete field {name}?"),
                    format!(
                        "Field {name} of queue {} goes (audited); items keep their values in params, and the form no longer shows it.",
                        sanitize::line(&queue)
                    ),
                    Pending::DeleteField {
                        queue,
                        name: d.name,
                    },
                ));
            }
            return vec![];
        }
        Some(a @ (Action::MoveFieldUp | Action::MoveFieldDown)) => {
            return move_field(s, &queue, &defs, sel, a == Action::MoveFieldUp);
        }
        _ => {}
    }
    let delta: i64 = match keymap::lookup(Context::Moving, key) {
        Some(Action::Down) => 1,
        Some(Action::Up) => -1,
        Some(Action::Top) => -1_000,
        Some(Action::Bottom) => 1_000,
        _ => 0,
    };
    if delta != 0 {
        let n = defs.len() as i64;
        if let Some(fa) = s.field_admin.as_mut() {
            fa.selected = (sel as i64 + delta).clamp(0, (n - 1).max(0)) as usize;
        }
        return vec![];
    }
    match keymap::lookup(Context::Global, key) {
        Some(Action::Back | Action::Quit) => s.field_admin = None,
        Some(Action::Help) => s.help = Some(0),
        Some(Action::QuitNow) => s.quit = true,
        _ => {}
    }
    vec![]
}

/// `K`/`J`: the selected field one place up or down (a move is a definition change:
/// `after` the field before its new place).
fn move_field(s: &mut State, queue: &str, defs: &[FieldDef], sel: usize, up: bool) -> Vec<Effect> {
    if super::refused(s) {
        return vec![];
    }
    let after = match (up, sel) {
        (true, 0) => return vec![],
        (true, 1) => String::new(),
        (true, i) => defs[i - 2].name.clone(),
        (false, i) if i + 1 >= defs.len() => return vec![],
        (false, i) => defs[i + 1].name.clone(),
    };
    let name = defs[sel].name.clone();
    if let Some(fa) = s.field_admin.as_mut() {
        fa.selected = if up { sel - 1 } else { sel + 1 };
    }
    vec![Effect::Supervise(SupervisorOp::DefineField {
        queue: queue.to_string(),
        name,
        change: FieldChange {
            after: Some(after),
            ..FieldChange::default()
        },
    })]
}

/// The define or delete dialog confirmed: a bad value keeps the dialog open (the field
/// named); else the store is asked, the dialog staying up until it answers.
pub(super) fn confirm(s: &mut State, d: Dialog) -> Vec<Effect> {
    let op = match d.pending.clone() {
        Pending::DefineField { queue, name } => {
            let current = name.as_ref().and_then(|n| {
                s.fields
                    .get(&queue)
                    .and_then(|defs| defs.iter().find(|f| f.name == *n).cloned())
            });
            match parse_define(&d, current.as_ref()) {
                Ok((name, change)) => {
                    s.dialog = Some(Dialog { error: None, ..d });
                    SupervisorOp::DefineField {
                        queue,
                        name,
                        change,
                    }
                }
                Err((focus, error)) => {
                    s.dialog = Some(Dialog {
                        error: Some(error),
                        focus,
                        ..d
                    });
                    return vec![];
                }
            }
        }
        Pending::DeleteField { queue, name } => SupervisorOp::DeleteField { queue, name },
        _ => return vec![],
    };
    vec![Effect::Supervise(op)]
}

/// The store's answer to a definition's change: the dialog closes and the list follows
/// (the refresh after it reads the definitions); a refusal shows in the dialog, values
/// kept.
pub(super) fn answered(s: &mut State, op: &SupervisorOp, result: Result<usize, StoreError>) {
    let open = matches!(
        s.dialog.as_ref().map(|d| &d.pending),
        Some(Pending::DefineField { .. })
    );
    match (op, result) {
        (_, Err(e)) if open => {
            if let Some(d) = s.dialog.as_mut() {
                d.error = Some(on_screen(&e));
            }
        }
        (_, Err(e)) => set_error(s, on_screen(&e)),
        (
            SupervisorOp::DefineField {
                queue,
                name,
                change,
            },
            Ok(_),
        ) => {
            if open {
                s.dialog = None;
            }
            let what = if change.only_moves() {
                "moved"
            } else {
                "saved"
            };
            set_info(
                s,
                format!(
                    "Field {} of queue {} {what}",
                    sanitize::line(name),
                    sanitize::line(queue)
                ),
            );
        }
        (SupervisorOp::DeleteField { queue, name }, Ok(_)) => set_info(
            s,
            format!(
                "Field {} of queue {} deleted; items keep their values",
                sanitize::line(name),
                sanitize::line(queue)
            ),
        ),
        _ => {}
    }
}
