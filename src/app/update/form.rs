//! The detail's form (`app::form`): moving the focus between fields, editing one in place
//! (the rule checked as typed, a save one fenced write on the worker), ticking a
//! checklist's lines, and the store's answers. What was typed is never dropped: a lock
//! lost while editing or saving keeps it, offered as a comment with the unsaved notes.

use std::collections::BTreeMap;

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::results::keep;
use super::{refused, set_error, set_info};
use crate::app::detail::{build_detail_with, rebuild_detail};
use crate::app::form::{self, FieldEdit, Form, Slot, defs, field_index, params_of, slots};
use crate::app::keymap::{self, Action, Context};
use crate::app::layout;
use crate::app::{
    Dialog, Effect, FieldSpec, FieldWrite, Held, LineKind, Pending, State, TextInput,
};
use crate::domain::queue_fields::{
    Checklist, FieldDef, FieldProblem, LineState, check_typed, problems, value_text,
};
use crate::domain::{Event, Item, sanitize};
use crate::store::StoreError;

/// The field definitions a refresh read: kept by queue; the open detail is rebuilt when
/// they changed (a supervisor defined or moved a field meanwhile).
pub(super) fn fields_loaded(
    s: &mut State,
    fields: Option<Vec<(String, crate::domain::queue_fields::FieldDef)>>,
) {
    let Some(fields) = fields else { return };
    let mut by_queue: BTreeMap<String, Vec<FieldDef>> = BTreeMap::new();
    for (q, d) in fields {
        by_queue.entry(q).or_default().push(d);
    }
    if by_queue != s.fields {
        s.fields = by_queue;
        rebuild_detail(s);
        clamp_focus(s);
    }
}

/// The open item, when its queue has fields (the form is there).
fn open_item(s: &State) -> Option<&Item> {
    let d = s.detail.as_ref()?;
    (!defs(s, &d.item.queue).is_empty()).then_some(&d.item)
}

/// The slots of the open item's form.
fn open_slots(s: &State) -> Vec<Slot> {
    open_item(s).map_or_else(Vec::new, |item| {
        slots(defs(s, &item.queue), &params_of(item))
    })
}

/// The form of the open item, made when first needed.
fn form_mut(s: &mut State) -> Option<&mut Form> {
    let item = open_item(s)?;
    let id = item.id;
    if s.form.as_ref().is_none_or(|f| f.item_id != id) {
        let focus = form::first_broken(defs(s, &item.queue), &params_of(item));
        s.form = Some(Form::new(id, focus));
    }
    s.form.as_mut()
}

/// Keeps the focus on a slot that exists.
fn clamp_focus(s: &mut State) {
    let n = open_slots(s).len();
    if let Some(f) = form_mut(s) {
        f.focus = f.focus.min(n.saturating_sub(1));
    }
}

/// True while a field is being edited in place (keys are text then).
pub(crate) fn editing(s: &State) -> bool {
    let id = s.detail.as_ref().map(|d| d.item.id);
    s.form
        .as_ref()
        .is_some_and(|f| f.edit.is_some() && Some(f.item_id) == id)
}

/// A key on the detail pane of an item with fields: the form's keys act; `None` lets it
/// through to the pane's other keys (scrolling past the form's ends, complete …).
pub(super) fn key(s: &mut State, key: &KeyEvent) -> Option<Vec<Effect>> {
    open_item(s)?;
    let action = keymap::lookup(Context::Form, key)?;
    let n = open_slots(s).len();
    if n == 0 {
        return None;
    }
    let focus = form_mut(s)?.focus;
    let arrow = matches!(key.code, KeyCode::Down | KeyCode::Up);
    match action {
        Action::FieldNext if arrow && focus + 1 >= n => None,
        Action::FieldPrev if arrow && focus == 0 => None,
        Action::FieldNext => Some(focus_on(s, (focus + 1) % n)),
        Action::FieldPrev => Some(focus_on(s, (focus + n - 1) % n)),
        Action::EditField => Some(edit(s)),
        Action::TickLine => Some(tick(s)),
        Action::NotDoneLine => Some(not_done(s)),
        _ => None,
    }
}

/// Moves the focus to slot `i` and scrolls the pane so it shows.
pub(super) fn focus_on(s: &mut State, i: usize) -> Vec<Effect> {
    if let Some(f) = form_mut(s) {
        f.focus = i;
    }
    let rows = layout::detail_rows(s);
    if let Some(d) = s.detail.as_mut()
        && let Some(at) = d.lines.iter().position(|l| l.kind == LineKind::Field(i))
    {
        if at < d.scroll {
            d.scroll = at.saturating_sub(1);
        } else if at >= d.scroll + rows {
            d.scroll = at + 1 - rows;
        }
    }
    vec![]
}

/// The focused slot, its field's definition, and the item's lock if held.
fn focused(s: &State) -> Option<(Slot, FieldDef, Option<Held>)> {
    let item = open_item(s)?;
    let slots = open_slots(s);
    let focus = form::form_of(s, item.id).map_or(0, |f| f.focus);
    let slot = *slots.get(focus)?;
    let def = defs(s, &item.queue).get(field_index(slot))?.clone();
    Some((slot, def, s.held.get(&item.id).cloned()))
}

/// Says why the form cannot be changed: the item is not held.
fn not_held(s: &mut State) -> Vec<Effect> {
    let id = s.detail.as_ref().map_or(0, |d| d.item.id);
    set_error(
        s,
        format!("You do not hold #{id}; take it first to correct its fields (t)"),
    );
    vec![]
}

/// Enter: edits the focused field in place (on a checklist's line: ticks it).
fn edit(s: &mut State) -> Vec<Effect> {
    let Some((slot, def, held)) = focused(s) else {
        return vec![];
    };
    if matches!(slot, Slot::Line(..)) {
        return tick(s);
    }
    if held.is_none() {
        return not_held(s);
    }
    if def.kind == crate::domain::queue_fields::FieldType::Checklist {
        set_info(
            s,
            format!(
                "{} is a checklist: move to a line (Down) and tick it with Space",
                def.label()
            ),
        );
        return vec![];
    }
    let current = open_item(s)
        .map(|i| {
            params_of(i)
                .get(&def.name)
                .map(value_text)
                .unwrap_or_default()
        })
        .unwrap_or_default();
    if let Some(f) = form_mut(s) {
        f.edit = Some(FieldEdit {
            field: def.name.clone(),
            buf: TextInput::line(&current),
        });
    }
    let help = def
        .help
        .as_deref()
        .map(|h| format!(" · {}", sanitize::line(h)))
        .unwrap_or_default();
    set_info(
        s,
        format!(
            "Editing {}: Enter saves, Esc cancels{help}",
            sanitize::line(def.label())
        ),
    );
    vec![]
}

/// A key while a field is edited: Enter saves (when the value keeps its rules), Esc
/// cancels, the rest is typing (readline keys).
pub(super) fn edit_key(s: &mut State, key: KeyEvent) -> Vec<Effect> {
    match keymap::lookup(Context::Dialog, &key) {
        Some(Action::Confirm) => save(s),
        Some(Action::Cancel) => {
            if let Some(f) = s.form.as_mut() {
                f.edit = None;
            }
            set_info(s, "Not changed".into());
            vec![]
        }
        Some(Action::NextField | Action::PrevField) => vec![],
        _ => {
            if let Some(e) = s.form.as_mut().and_then(|f| f.edit.as_mut()) {
                e.buf.key(key);
            }
            vec![]
        }
    }
}

/// Pasted text while a field is edited goes into it; false when no field is edited.
pub(super) fn paste(s: &mut State, text: &str) -> bool {
    if !editing(s) {
        return false;
    }
    if let Some(e) = s.form.as_mut().and_then(|f| f.edit.as_mut()) {
        e.buf.insert_str(text);
    }
    true
}

/// Enter in an edited field: refused with the rule while the value breaks it; else one
/// fenced write on the worker, the field shown as saving meanwhile.
fn save(s: &mut State) -> Vec<Effect> {
    let Some((_, def, held)) = focused(s) else {
        return vec![];
    };
    let Some(typed) = s
        .form
        .as_ref()
        .and_then(|f| f.edit.as_ref())
        .map(|e| e.buf.text())
    else {
        return vec![];
    };
    if let Err(p) = check_typed(&def, &typed) {
        set_error(
            s,
            format!(
                "{} {}: fix it, or Esc to leave it as it was",
                sanitize::line(def.label()),
                p.rule()
            ),
        );
        return vec![];
    }
    let Some(h) = held else {
        // The lock went while typing: what was typed is kept, offered as a comment.
        let id = s.detail.as_ref().map_or(0, |d| d.item.id);
        keep(s, id, &def.name, &typed);
        if let Some(f) = s.form.as_mut() {
            f.edit = None;
        }
        set_error(
            s,
            format!("You no longer hold #{id}; what you typed is kept (offered as a comment)"),
        );
        rebuild_detail(s);
        return vec![];
    };
    if refused(s) {
        return vec![];
    }
    if let Some(f) = s.form.as_mut() {
        f.edit = None;
        f.saving = Some((def.name.clone(), typed.clone()));
    }
    vec![Effect::WriteField {
        id: h.id,
        token: h.token,
        write: FieldWrite::Value {
            field: def.name,
            typed,
        },
    }]
}

/// The focused checklist line, with its lock and state.
fn focused_line(s: &mut State) -> Option<(FieldDef, String, LineState, Held)> {
    let (slot, def, held) = focused(s)?;
    let Slot::Line(_, j) = slot else {
        set_info(
            s,
            "Space ticks a checklist's line: move to one first (Tab, arrows)".into(),
        );
        return None;
    };
    let Some(held) = held else {
        not_held(s);
        return None;
    };
    let params = open_item(s).map(params_of).unwrap_or_default();
    let line = Checklist::of(&def, params.get(&def.name))?
        .lines
        .into_iter()
        .nth(j)?;
    Some((def, line.line, line.state, held))
}

/// Space: ticks the focused line (done), or puts a done one back to do.
fn tick(s: &mut State) -> Vec<Effect> {
    let Some((def, line, state, h)) = focused_line(s) else {
        return vec![];
    };
    if refused(s) {
        return vec![];
    }
    let to = match state {
        LineState::Done => LineState::Todo,
        _ => LineState::Done,
    };
    vec![Effect::WriteField {
        id: h.id,
        token: h.token,
        write: FieldWrite::Tick {
            field: def.name,
            line,
            state: to,
        },
    }]
}

/// `X`: the focused line is not done, for a reason (asked in a dialog).
fn not_done(s: &mut State) -> Vec<Effect> {
    let Some((def, line, _, h)) = focused_line(s) else {
        return vec![];
    };
    s.dialog = Some(
        Dialog::new(
            format!("Not done: {}", sanitize::line(&line)),
            format!(
                "{} of #{}: why is this line not done?",
                sanitize::line(def.label()),
                h.id
            ),
            Pending::NotDone {
                id: h.id,
                token: h.token,
                field: def.name,
                line,
            },
        )
        .field(
            FieldSpec::reason("Reason (required, kept in the history)"),
            "",
        ),
    );
    vec![]
}

/// The form's dialogs confirmed: a line not done (its reason), a supervisor's complete
/// anyway (the result, the reason).
pub(super) fn confirmed(s: &State, d: &Dialog) -> Vec<Effect> {
    match d.pending.clone() {
        Pending::NotDone {
            id,
            token,
            field,
            line,
        } => vec![Effect::WriteField {
            id,
            token,
            write: FieldWrite::Tick {
                field,
                line,
                state: LineState::NotDone(d.value(0)),
            },
        }],
        Pending::CompleteAnyway { id, token } => vec![Effect::Finish {
            id,
            token,
            what: crate::app::Finish::CompleteAnyway {
                result: d.saying(0),
                reason: d.value(1),
            },
            notes: s.drafts.get(&id).cloned(),
        }],
        _ => vec![],
    }
}

/// The store answered a field's write: the item as it is now (its history with the
/// change), or why not. A refused value goes back into the field, as typed; a lock lost
/// keeps it, offered as a comment.
pub(super) fn written(
    s: &mut State,
    id: i64,
    write: FieldWrite,
    result: Result<(Item, Vec<Event>), StoreError>,
) -> Vec<Effect> {
    if let Some(f) = s.form.as_mut().filter(|f| f.item_id == id) {
        f.saving = None;
    }
    match result {
        Ok((item, history)) => {
            if item.is_held_by(&s.me) {
                s.held.insert(id, Held::of(&item));
            }
            let said = match &write {
                FieldWrite::Value { field, .. } => history
                    .iter()
                    .rev()
                    .find(|e| {
                        e.kind == crate::domain::EventKind::FieldChanged
                            && e.detail.get("field").and_then(|v| v.as_str()) == Some(field)
                    })
                    .map(|e| crate::domain::queue_fields::change_text(&e.detail))
                    .unwrap_or_else(|| format!("{field}: saved")),
                FieldWrite::Tick { field, line, state } => {
                    format!("{field} [{line}]: {}", state.as_text())
                }
            };
            set_info(s, format!("#{id} {}", sanitize::line(&said)));
            if let Some(d) = s.detail.as_ref().filter(|d| d.item.id == id) {
                let (scroll, comments) = (d.scroll, d.comments.clone());
                let mut nd = build_detail_with(s, item, history, comments);
                nd.scroll = scroll.min(nd.lines.len().saturating_sub(1));
                s.detail = Some(nd);
                clamp_focus(s);
            }
            // A corrected key or name may match other records now (issue 27).
            match &write {
                FieldWrite::Value { .. } => vec![super::similar::request(s, id)],
                FieldWrite::Tick { .. } => vec![],
            }
        }
        Err(e) => {
            let lost = matches!(e, StoreError::LockLost { .. } | StoreError::NotFound(_));
            match (&write, lost) {
                (FieldWrite::Value { field, typed }, true) => {
                    keep(s, id, field, typed);
                    set_error(
                        s,
                        format!("{e}; what you typed for {field} is kept (offered as a comment)"),
                    );
                }
                (
                    FieldWrite::Tick {
                        field,
                        line,
                        state: LineState::NotDone(r),
                    },
                    true,
                ) => {
                    keep(s, id, &format!("{field} [{line}] not done"), r);
                    set_error(
                        s,
                        format!("{e}; your reason is kept (offered as a comment)"),
                    );
                }
                (FieldWrite::Value { field, typed }, false) => {
                    // Back into the field, as typed, to correct or try again.
                    let field = field.clone();
                    let typed = typed.clone();
                    if let Some(f) = s.form.as_mut().filter(|f| f.item_id == id) {
                        f.edit = Some(FieldEdit {
                            field,
                            buf: TextInput::line(&typed),
                        });
                    }
                    set_error(s, format!("Not saved: {e}"));
                }
                (FieldWrite::Tick { .. }, _) => set_error(s, format!("Not ticked: {e}")),
            }
            rebuild_detail(s);
            vec![super::refresh(s)]
        }
    }
}

/// The lock on `id` was lost: a value being typed in its form is kept, offered as a
/// comment with the unsaved notes.
pub(super) fn lock_lost(s: &mut State, id: i64) {
    let Some(e) = s
        .form
        .as_mut()
        .filter(|f| f.item_id == id)
        .and_then(|f| f.edit.take())
    else {
        return;
    };
    let typed = e.buf.text();
    let stored = s.detail.as_ref().filter(|d| d.item.id == id).map(|d| {
        params_of(&d.item)
            .get(&e.field)
            .map(value_text)
            .unwrap_or_default()
    });
    if stored.as_deref() != Some(typed.as_str()) {
        keep(s, id, &e.field, &typed);
    }
}

/// The record's fields that break their rules, as the screen knows it (the open item, or
/// the row of Mine).
fn broken_of(s: &State, id: i64) -> Vec<FieldProblem> {
    let item = match &s.detail {
        Some(d) if d.item.id == id => Some(&d.item),
        _ => s.panes.mine.rows.iter().find(|r| r.id == id),
    };
    let Some(item) = item else { return vec![] };
    let params = serde_json::Value::Object(params_of(item));
    problems(defs(s, &item.queue), &params)
}

/// `c` or `C` on a record that breaks its fields' rules: instead of the complete dialog,
/// one that lists the broken fields (the form's focus moves to the first); a supervisor
/// may complete anyway with a reason. `None`: the record keeps its rules (as far as the
/// screen knows; the store checks again).
pub(super) fn complete_checked(s: &mut State, id: i64, token: i64) -> Option<Vec<Effect>> {
    let broken = broken_of(s, id);
    if broken.is_empty() {
        return None;
    }
    Some(broken_dialog(s, id, token, &broken))
}

/// The store refused a complete: fields break their rules (the screen did not know yet).
pub(super) fn complete_refused(
    s: &mut State,
    id: i64,
    _what: &crate::app::Finish,
    problems: &[FieldProblem],
) -> Vec<Effect> {
    let token = s.held.get(&id).map_or(0, |h| h.token);
    let mut fx = broken_dialog(s, id, token, problems);
    fx.push(super::refresh(s));
    fx
}

/// The dialog listing the broken fields, the focus moved to the first of them.
fn broken_dialog(s: &mut State, id: i64, token: i64, broken: &[FieldProblem]) -> Vec<Effect> {
    let queue = s.held.get(&id).map(|h| h.queue.clone()).unwrap_or_default();
    let label = |name: &str| -> String {
        defs(s, &queue)
            .iter()
            .find(|d| d.name == name)
            .map_or(name, FieldDef::label)
            .to_string()
    };
    let lines: Vec<String> = broken
        .iter()
        .map(|p| {
            format!(
                "  ✘ {} {}",
                sanitize::line(&label(&p.field)),
                sanitize::line(&p.problem.rule())
            )
        })
        .collect();
    let n = broken.len();
    let head = format!(
        "{n} field{} of #{id} break{} {} rules:",
        if n == 1 { "" } else { "s" },
        if n == 1 { "s" } else { "" },
        if n == 1 { "its" } else { "their" }
    );
    // The focus moves to the first broken field, so Esc lands on it.
    if s.detail.as_ref().is_some_and(|d| d.item.id == id)
        && let Some(first) = broken.first()
    {
        let slots = open_slots(s);
        let at = defs(s, &queue)
            .iter()
            .position(|d| d.name == first.field)
            .and_then(|i| slots.iter().position(|sl| *sl == Slot::Field(i)));
        if let Some(at) = at {
            focus_on(s, at);
        }
    }
    let supervisor = s.role.supervises();
    s.dialog = Some(if supervisor {
        Dialog::new(
            format!("Complete #{id} anyway?"),
            format!(
                "{head}\n{}\nEsc goes back to correct them. As a supervisor you may complete it anyway: give the reason (recorded with the fields broken).",
                lines.join("\n")
            ),
            Pending::CompleteAnyway { id, token },
        )
        .field(FieldSpec::optional("Result", "Result (optional)"), "")
        .offering(&queue, crate::domain::texts::Purpose::Result)
        .field(
            FieldSpec::reason("Reason for completing anyway (required, recorded)"),
            "",
        )
    } else {
        Dialog::new(
            format!("#{id} cannot be completed yet"),
            format!(
                "{head}\n{}\nCorrect them first (the cursor is on the first), or ask a supervisor to complete it anyway.",
                lines.join("\n")
            ),
            Pending::Dismiss,
        )
    });
    vec![]
}
