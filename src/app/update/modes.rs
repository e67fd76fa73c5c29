//! The modal inputs: what keys do in a dialog, at the `/` filter prompt and in the notes
//! editor, and what confirming a dialog asks the store to do.

use ratatui::crossterm::event::KeyEvent;

use super::{assign, canned, preview, supervise};
use super::{refresh, refused, set_error, set_info};
use crate::app::detail::rebuild_detail;
use crate::app::keymap::{self, Action, Context};
use crate::app::{Dialog, Effect, Filter, Finish, Pending, State, View};
use crate::store::TakeNext;

pub(super) fn dialog_key(s: &mut State, key: KeyEvent) -> Vec<Effect> {
    if let Some(fx) = canned::offer_key(s, &key) {
        return fx;
    }
    match keymap::lookup(Context::Dialog, &key) {
        Some(Action::Confirm) => confirm(s),
        Some(Action::ConfirmNext) => {
            // Ctrl-N in the complete dialog: the same complete, and the next item with it.
            if let Some(d) = s.dialog.as_mut()
                && let Pending::Complete { id, token } = d.pending
            {
                d.pending = Pending::CompleteNext { id, token };
                return confirm(s);
            }
            vec![]
        }
        Some(Action::NextField) if assign::complete_name(s) => vec![],
        Some(a @ (Action::NextField | Action::PrevField)) => {
            if let Some(d) = s.dialog.as_mut()
                && !d.inputs.is_empty()
            {
                let n = d.inputs.len();
                d.focus = if a == Action::NextField {
                    (d.focus + 1) % n
                } else {
                    (d.focus + n - 1) % n
                };
            }
            vec![]
        }
        Some(Action::Cancel) => {
            if let Some(d) = s.dialog.take()
                && let Pending::Comment { id } = d.pending
            {
                set_info(
                    s,
                    format!("Your notes for #{id} are kept (Mine view); nothing was discarded"),
                );
            }
            vec![]
        }
        _ => {
            if let Some(buf) = s.dialog.as_mut().and_then(|d| d.focused_mut()) {
                buf.key(key);
            }
            vec![]
        }
    }
}

fn confirm(s: &mut State) -> Vec<Effect> {
    let Some(d) = s.dialog.take() else {
        return vec![];
    };
    let text = d.value(0);
    if let Some((i, error)) = d.missing() {
        s.dialog = Some(Dialog {
            error: Some(error),
            focus: i,
            ..d
        });
        return vec![];
    }
    if let Some(doing) = &s.doing
        && !matches!(d.pending, Pending::Quit | Pending::Dismiss)
    {
        // The dialog stays, with what was typed, until the change under way is answered.
        let error = format!("Still {}: Enter again once it is done", doing.what);
        s.dialog = Some(Dialog {
            error: Some(error),
            ..d
        });
        return vec![];
    }
    if let Pending::Park { id, token } = d.pending {
        return super::park::confirmed(s, d, id, token);
    }
    match d.pending {
        Pending::Complete { id, token } => vec![Effect::Finish {
            id,
            token,
            what: Finish::Complete(d.saying(0)),
            notes: s.drafts.get(&id).cloned(),
        }],
        Pending::CompleteNext { id, token } => vec![Effect::Finish {
            id,
            token,
            what: Finish::CompleteNext(
                d.saying(0),
                TakeNext {
                    queue: s.filter.queue.clone(),
                    skip: s.skipped.clone(),
                },
            ),
            notes: s.drafts.get(&id).cloned(),
        }],
        Pending::Fail { id, token } => vec![Effect::Finish {
            id,
            token,
            what: Finish::Fail(d.saying(0)),
            notes: s.drafts.get(&id).cloned(),
        }],
        Pending::Release { id, token } => release(s, id, token, &d, false),
        Pending::Skip { id, token } => release(s, id, token, &d, true),
        Pending::Comment { id } => match s.unsent(id) {
            Some(text) => vec![Effect::Comment { id, text }],
            None => vec![],
        },
        Pending::AddComment { id } => preview::comment_confirmed(id, text),
        Pending::Quit => {
            s.quit = true;
            vec![]
        }
        Pending::Dismiss | Pending::Park { .. } => vec![],
        Pending::Accept { .. } | Pending::Reject { .. } => super::review::confirmed(s, &d),
        Pending::NotDone { .. } | Pending::CompleteAnyway { .. } => super::form::confirmed(s, &d),
        Pending::Merge { .. } => super::similar::confirmed(&d),
        Pending::DefineField { .. } | Pending::DeleteField { .. } => {
            super::field_admin::confirm(s, d)
        }
        Pending::Unlock { .. }
        | Pending::Unpark { .. }
        | Pending::Reassign { .. }
        | Pending::UnlockMany { .. }
        | Pending::Requeue { .. }
        | Pending::Cancel { .. }
        | Pending::QueueSettings { .. }
        | Pending::Assign { .. }
        | Pending::EditItem { .. } => supervise::confirm(s, d),
    }
}

/// Release (or skip: release, then take the next) with the reason the dialog says. The
/// item waits behind the others for this person, as a skipped one.
fn release(s: &mut State, id: i64, token: i64, d: &Dialog, skip: bool) -> Vec<Effect> {
    if !s.skipped.contains(&id) {
        s.skipped.push(id);
    }
    let what = if skip {
        s.skipping = Some(id);
        let next = TakeNext {
            queue: s.filter.queue.clone(),
            skip: s.skipped.clone(),
        };
        Finish::Skip(next, d.saying(0))
    } else {
        Finish::Release(d.saying(0))
    };
    vec![Effect::Finish {
        id,
        token,
        what,
        notes: s.drafts.get(&id).cloned(),
    }]
}

/// Enter or Esc on a notice (which lets every other key through: `None`). Enter does
/// what it offers (adds the kept notes as a comment), Esc closes it.
pub(super) fn notice_key(s: &mut State, key: &KeyEvent) -> Option<Vec<Effect>> {
    let action = keymap::lookup(Context::Dialog, key)?;
    let Some(Pending::Comment { id }) = s.notice.as_ref().map(|n| n.pending.clone()) else {
        return matches!(action, Action::Confirm | Action::Cancel).then(|| {
            s.notice = None;
            vec![]
        });
    };
    match action {
        Action::Confirm if refused(s) => Some(vec![]),
        Action::Confirm => {
            s.notice = None;
            Some(
                s.unsent(id)
                    .map(|text| vec![Effect::Comment { id, text }])
                    .unwrap_or_default(),
            )
        }
        Action::Cancel => {
            s.notice = None;
            set_info(
                s,
                format!("Your notes for #{id} are kept (Mine view); nothing was discarded"),
            );
            Some(vec![])
        }
        _ => None,
    }
}

/// The `/` prompt: it searches as you type (the view's rows follow a moment after the
/// last key, [`crate::app::FILTER_DEBOUNCE_MS`]); Enter keeps the filter, Esc puts back
/// the one there was.
pub(super) fn prompt_key(s: &mut State, key: KeyEvent) -> Vec<Effect> {
    match keymap::lookup(Context::Dialog, &key) {
        Some(Action::Confirm) => {
            let typed = s.filter_prompt.take().map(|b| b.text()).unwrap_or_default();
            s.filter_before = None;
            s.filter_typed = None;
            apply_filter(s, &typed)
        }
        Some(Action::Cancel) => {
            s.filter_prompt = None;
            s.filter_typed = None;
            let Some(before) = s.filter_before.take() else {
                return vec![];
            };
            let filter = if s.view == View::Locks {
                &mut s.locks_filter
            } else {
                &mut s.filter
            };
            if *filter == before {
                return vec![];
            }
            *filter = before;
            vec![refresh(s)]
        }
        _ => {
            if let Some(b) = s.filter_prompt.as_mut() {
                let was = b.text();
                b.key(key);
                if b.text() != was {
                    s.filter_typed = Some(s.now);
                }
            }
            vec![]
        }
    }
}

/// Makes `typed` the view's filter (from the top of the list) and asks for its rows; the
/// rows on screen stay, marked as older, until they come.
fn apply_filter(s: &mut State, typed: &str) -> Vec<Effect> {
    let (filter, pane) = if s.view == View::Locks {
        (&mut s.locks_filter, &mut s.panes.locks)
    } else {
        (&mut s.filter, &mut s.panes.queue)
    };
    let new = Filter::parse(typed);
    if *filter == new && pane.filter == new {
        return vec![];
    }
    *filter = new;
    pane.selected = 0;
    pane.offset = 0;
    vec![refresh(s)]
}

/// A tick: the search typed at `/` starts once the keys paused.
pub(super) fn search_as_typed(s: &mut State) -> Vec<Effect> {
    let Some(at) = s.filter_typed else {
        return vec![];
    };
    if s.now - at < crate::app::FILTER_DEBOUNCE_MS {
        return vec![];
    }
    s.filter_typed = None;
    let typed = s
        .filter_prompt
        .as_ref()
        .map(|b| b.text())
        .unwrap_or_default();
    apply_filter(s, &typed)
}

pub(super) fn editor_key(s: &mut State, key: KeyEvent) -> Vec<Effect> {
    let Some(ed) = s.editor.as_mut() else {
        return vec![];
    };
    match keymap::lookup(Context::Editor, &key) {
        Some(Action::SaveNotes) if s.doing.is_some() => {
            // The text stays in the editor; Ctrl-S again once the change is answered.
            refused(s);
            vec![]
        }
        Some(Action::SaveNotes) => {
            let id = ed.item_id;
            let text = ed.buf.text();
            s.drafts.insert(id, text.clone());
            match s.held.get(&id) {
                Some(h) => {
                    let token = h.token;
                    if let Some(ed) = s.editor.as_mut() {
                        ed.saving = true;
                    }
                    vec![Effect::SaveNotes { id, token, text }]
                }
                None => {
                    set_error(
                        s,
                        format!(
                            "You no longer hold #{id}; your notes are kept (Esc, then see Mine)"
                        ),
                    );
                    vec![]
                }
            }
        }
        Some(Action::CloseEditor) => {
            let id = ed.item_id;
            let text = ed.buf.text();
            if text != ed.original {
                s.drafts.insert(id, text);
                set_info(
                    s,
                    format!(
                        "Notes on #{id} not saved yet: kept as a draft (e to go on, Ctrl-S saves)"
                    ),
                );
            } else {
                s.drafts.remove(&id);
            }
            s.editor = None;
            rebuild_detail(s);
            vec![]
        }
        _ => {
            ed.buf.key(key);
            vec![]
        }
    }
}
