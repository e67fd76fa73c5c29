//! Looking before taking: a read-only view of any item (Space or `v` on a row, `:` or `#`
//! and its id from anywhere), `t` there to take it, and the comment thread (`m`), which
//! needs no lock.

use ratatui::crossterm::event::KeyEvent;

use super::{refused, set_error, set_info};
use crate::app::detail::rebuild_detail;
use crate::app::keymap::{self, Action, Context};
use crate::app::{Dialog, Effect, FieldSpec, Pending, State, TextInput, View};
use crate::domain::{Comment, ItemState, LockStatus, sanitize};
use crate::store::StoreError;

/// Space / `v`: the selected row's item, read-only (whatever its state or holder).
pub(super) fn preview(s: &mut State) -> Vec<Effect> {
    if s.detail.is_some() {
        return vec![];
    }
    match s.pane(s.view).and_then(|p| p.selected_item()) {
        Some(item) => vec![Effect::Open(item.id)],
        None if s.view == View::Stats => {
            set_error(
                s,
                "Pick an item in a list first (1, 2 or 3), or : and its id".into(),
            );
            vec![]
        }
        None => vec![],
    }
}

/// `:` / `#`: asks for an item's id.
pub(super) fn start_goto(s: &mut State) -> Vec<Effect> {
    s.goto_prompt = Some(TextInput::line(""));
    vec![]
}

/// Keys while the id is typed: Enter opens the item read-only, Esc closes the prompt.
pub(super) fn goto_key(s: &mut State, key: KeyEvent) -> Vec<Effect> {
    match keymap::lookup(Context::Dialog, &key) {
        Some(Action::Confirm) => {
            let typed = s.goto_prompt.take().map(|b| b.text()).unwrap_or_default();
            let typed = typed.trim();
            match typed.trim_start_matches('#').parse::<i64>() {
                Ok(id) if id > 0 => {
                    s.report = None;
                    vec![Effect::Open(id)]
                }
                _ if typed.is_empty() => vec![],
                _ => {
                    set_error(
                        s,
                        format!(
                            "'{}' is not an item id (a number, e.g. 42)",
                            sanitize::line(typed)
                        ),
                    );
                    vec![]
                }
            }
        }
        Some(Action::Cancel) => {
            s.goto_prompt = None;
            vec![]
        }
        _ => {
            if let Some(b) = s.goto_prompt.as_mut() {
                b.key(key);
            }
            vec![]
        }
    }
}

/// `t` on an item being looked at: takes it when it can be taken, else says why not.
pub(super) fn take_previewed(s: &mut State) -> Vec<Effect> {
    let Some(item) = s.detail.as_ref().map(|d| d.item.clone()) else {
        return vec![];
    };
    if item.state == ItemState::Review && !item.is_held_by(&s.me) {
        // Taken for review: the take itself refuses the user's own work.
        if super::refused(s) {
            return vec![];
        }
        return vec![Effect::TakeReview(Some(item.id))];
    }
    if item.state != ItemState::Open {
        set_error(
            s,
            format!(
                "#{} is {}; there is nothing to take",
                item.id,
                item.state.as_str()
            ),
        );
        return vec![];
    }
    let why = match s.lock_status(&item) {
        LockStatus::Held { user, .. } if user != s.me => Some(format!("held by {user}")),
        LockStatus::Assigned { user } if user != s.me => Some(format!("assigned to {user}")),
        _ => None,
    };
    if let Some(why) = why {
        set_error(
            s,
            format!(
                "#{} is {}; you can look but not take it",
                item.id,
                sanitize::line(&why)
            ),
        );
        return vec![];
    }
    if refused(s) {
        return vec![];
    }
    vec![Effect::Take(item.id)]
}

/// `m`: a comment on the open item, or on the selected row's.
pub(super) fn start_comment(s: &mut State) -> Vec<Effect> {
    let item = match &s.detail {
        Some(d) => Some(d.item.clone()),
        None => s.pane(s.view).and_then(|p| p.selected_item()).cloned(),
    };
    let Some(item) = item else {
        set_error(s, "Pick an item first (a row, or : and its id)".into());
        return vec![];
    };
    s.dialog = Some(
        Dialog::new(
            format!("Comment on #{}", item.id),
            format!(
                "{}\nComments are kept with your name and the time, for everyone, and are \
                 never edited: a correction is a new comment.",
                sanitize::line(&item.title)
            ),
            Pending::AddComment { id: item.id },
        )
        .field(FieldSpec::required("A comment", "Comment (required)"), "")
        .offering(&item.queue, crate::domain::texts::Purpose::Comment),
    );
    vec![]
}

/// The comment dialog was confirmed.
pub(super) fn comment_confirmed(id: i64, text: String) -> Vec<Effect> {
    vec![Effect::AddComment { id, text }]
}

/// The answer to a typed comment.
pub(super) fn comment_added(s: &mut State, id: i64, result: Result<(), StoreError>) -> Vec<Effect> {
    match result {
        Ok(()) => {
            set_info(s, format!("Comment added to #{id}"));
            if s.detail.as_ref().is_some_and(|d| d.item.id == id) {
                return vec![Effect::Open(id)];
            }
        }
        Err(e) => set_error(s, format!("Comment not added to #{id}: {e}")),
    }
    vec![]
}

/// An opened item's thread arrived.
pub(super) fn thread_loaded(s: &mut State, id: i64, result: Result<Vec<Comment>, StoreError>) {
    let Ok(comments) = result else {
        return;
    };
    if let Some(d) = s.detail.as_mut().filter(|d| d.item.id == id) {
        d.comments = comments;
        rebuild_detail(s);
    }
}
