//! `update(state, msg) -> effects`: every decision of the TUI, testable without a
//! terminal, a database or a clock. One short function per message: the user's input in
//! `keys` (lists, views, the mouse, pasting) and `modes` (dialogs, the filter prompt, the
//! notes editor), the store's answers in `results`, the supervisor's actions and their
//! answers in `supervise`. The detail pane's text is built in `app/detail.rs`.

mod assign;
mod canned;
mod edit;
mod field_admin;
mod form;
mod keys;
mod modes;
mod park;
mod preview;
mod results;
mod review;
mod similar;
mod sla;
mod supervise;
mod supervised;

use super::layout;
use super::{
    Dialog, Doing, Effect, Msg, RefreshRequest, STATUS_FADE_MS, State, Status, View, list_filter,
};
use crate::store::StoreError;

/// Applies one message to the state; returns what the loop must do next.
///
/// One change at a time: an effect that changes something (see [`Effect::is_change`])
/// marks the state as doing it until its answer comes back, and meanwhile no second one
/// leaves here (the keys that would ask for one say so instead). A change that fails for
/// a reason worth trying again (busy past the store's patience, no connection) brings
/// back the dialog it was confirmed in, with what was typed.
pub fn update(s: &mut State, msg: Msg) -> Vec<Effect> {
    let ended = if msg.ends_change() {
        // What the user's own change does to the takeable count is not news to them.
        s.alerting.own_change = true;
        s.doing.take()
    } else {
        None
    };
    let retry = msg.retryable_error().map(|e| e.to_string());
    let dialog_before = match &msg {
        Msg::Key { .. } => s.dialog.clone(),
        _ => None,
    };
    let busy = s.doing.as_ref().map(|d| d.what.clone());
    let mut fx = apply(s, msg);
    if let (
        Some(err),
        Some(Doing {
            dialog: Some(d), ..
        }),
    ) = (retry, ended)
        && s.dialog.is_none()
    {
        s.dialog = Some(Dialog {
            error: Some(format!("{err} — Enter tries again, Esc cancels")),
            ..d
        });
    }
    if let Some(what) = busy
        && fx.iter().any(Effect::is_change)
    {
        // The keys refuse first (keeping their dialog or editor); this is the backstop.
        fx.retain(|e| !e.is_change());
        let text = still(s, &what);
        set_error(s, text);
    }
    // Draft notes that go with a release, skip, completion or failure: said when it is done.
    if let Some(Effect::Finish { id, .. }) = fx
        .iter()
        .find(|e| matches!(e, Effect::Finish { notes: Some(_), .. }))
    {
        s.finish_notes = Some(*id);
    }
    if s.doing.is_none()
        && let Some(e) = fx.iter().find(|e| e.is_change())
    {
        s.doing = Some(Doing {
            what: e.describe(),
            dialog: dialog_before,
        });
    }
    fx
}

/// Why a second change is refused while one is under way: short when the waiting line
/// beside it already says what is under way.
pub(super) fn still(s: &State, what: &str) -> String {
    if s.waiting().is_some() {
        "One change at a time".to_string()
    } else {
        format!("Not yet: still {what} (one change at a time)")
    }
}

/// Refuses a second change while one is under way (saying so); true when refused.
pub(super) fn refused(s: &mut State) -> bool {
    let Some(d) = &s.doing else {
        return false;
    };
    let text = still(s, &d.what);
    set_error(s, text);
    true
}

fn apply(s: &mut State, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Key { key, now } => keys::key(s, key, now),
        Msg::Said(text) => {
            set_info(s, text);
            vec![]
        }
        Msg::Mouse { mouse, now } => {
            s.now = now;
            keys::on_mouse(s, mouse)
        }
        Msg::Paste { text, now } => keys::paste(s, &text, now),
        Msg::Resize { width, height } => keys::resize(s, width, height),
        Msg::Tick { now } => {
            s.now = now;
            sla::warn(s);
            let mut fx = keys::held_due(s);
            fx.extend(modes::search_as_typed(s));
            fade_status(s);
            park::tell_woken(s);
            if s.alerting.recount_due(now) {
                // Nothing to take, and an expiring lock writes nothing: count again.
                s.alerting.counted_at = Some(now);
                fx.push(refresh(s));
            } else {
                fx.push(Effect::CheckMarker);
            }
            fx
        }
        Msg::Marker(m) if s.marker == Some(m) => vec![],
        Msg::Marker(_) => vec![refresh(s)],
        Msg::Resumed(r) => results::resumed(s, *r),
        Msg::Reacquired(reacquired) => results::reacquired(s, reacquired),
        Msg::Refreshed(snap) => results::refreshed(s, *snap),
        Msg::Opened { taken, result } => results::opened(s, taken, result),
        Msg::Renewed { id, result } => results::renewed(s, id, result),
        Msg::NotesSaved { id, text, result } => results::notes_saved(s, id, text, result),
        Msg::Finished { id, what, result } => results::finished(s, id, what, result),
        Msg::Commented { id, result } => results::commented(s, id, result),
        Msg::Supervised { op, result } => supervised::supervised(s, op, result),
        Msg::LocksCollected { filter, result } => supervised::locks_collected(s, filter, result),
        Msg::Activity {
            user,
            since,
            result,
        } => supervised::activity_loaded(s, user, since, result),
        Msg::NothingNext { after, why } => results::nothing_next(s, after, &why),
        Msg::CommentAdded { id, result } => preview::comment_added(s, id, result),
        Msg::Similar { id, result } => {
            similar::loaded(s, id, result);
            vec![]
        }
        Msg::Merged { id, into, result } => similar::merged(s, id, into, result),
        Msg::NotSame { id, other, result } => similar::not_same(s, id, other, result),
        Msg::Thread { id, result } => {
            preview::thread_loaded(s, id, result);
            vec![]
        }
        Msg::Users(names) => {
            s.users = names;
            vec![]
        }
        Msg::Texts(texts) => {
            s.texts = texts;
            vec![]
        }
        Msg::Calling(call) => {
            s.call = call;
            vec![]
        }
        Msg::FieldWritten { id, write, result } => form::written(s, id, write, result),
    }
}

pub(super) fn set_info(s: &mut State, text: String) {
    let at = s.now;
    s.status = Some(Status {
        text,
        error: false,
        at,
    });
}

/// A store's refusal as the TUI says it: a value refused for a field named by the
/// field's label ("Queue: name is longer than 100 characters"), never by the command
/// line's flag.
pub(super) fn on_screen(e: &StoreError) -> String {
    match e {
        StoreError::Field(f) => f.with_label(),
        other => other.to_string(),
    }
}

pub(super) fn set_error(s: &mut State, text: String) {
    let at = s.now;
    s.status = Some(Status {
        text,
        error: true,
        at,
    });
}

/// A status line older than [`STATUS_FADE_MS`] (errors: three times that) goes.
fn fade_status(s: &mut State) {
    if let Some(st) = &s.status {
        let keep = if st.error { 3 } else { 1 } * STATUS_FADE_MS;
        if s.now.saturating_sub(st.at) >= keep {
            s.status = None;
        }
    }
}

/// The refresh of what is on screen, plus a check of every lock we believe we hold.
pub(super) fn refresh(s: &State) -> Effect {
    let list = s
        .pane(s.view)
        .and_then(|p| list_filter(s, s.view, p.offset, layout::list_rows(s, s.view)));
    let filter = match s.view {
        View::Queue => Some(s.filter.clone()),
        View::Locks => Some(s.locks_filter.clone()),
        _ => None,
    };
    Effect::Refresh(RefreshRequest {
        view: s.view,
        list,
        filter,
        stats: s.view == View::Stats,
        figures: s.figures_period.filter(|_| s.view == View::Stats),
        checks: s.held.values().map(|h| (h.id, h.token)).collect(),
        takeable: s.filter.queue.clone(),
        role: !s.role_known,
    })
}
