//! `update(state, msg) -> effects`: every decision of the TUI, testable without a
//! terminal, a database or a clock. Keys are handled in `keys.rs`, the detail pane's text
//! is built in `detail.rs`.

use ratatui::crossterm::event::KeyEventKind;

use super::detail::{build_detail, rebuild_detail};
use super::keys::{ensure_visible, on_key, on_mouse};
use super::layout;
use super::lost::{explain, is_lost};
use super::supervise;
use super::{
    Dialog, Doing, Effect, Finish, Held, Msg, Notice, Pending, RefreshRequest, Resume, Snapshot,
    State, Status, View, list_filter,
};
use crate::domain::sanitize;
use crate::domain::{Event, ItemState};
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

fn apply(s: &mut State, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Key { key, now } => {
            s.now = now;
            if key.kind == KeyEventKind::Release {
                return vec![];
            }
            let mut fx = activity(s);
            fx.extend(on_key(s, key));
            fx
        }
        Msg::Mouse { mouse, now } => {
            s.now = now;
            on_mouse(s, mouse)
        }
        Msg::Paste { text, now } => {
            s.now = now;
            if let Some(b) = s.dialog.as_mut().and_then(|d| d.focused_mut()) {
                b.insert_str(&text);
            } else if let Some(p) = s.filter_prompt.as_mut() {
                p.insert_str(&text);
            } else if let Some(e) = s.editor.as_mut() {
                e.buf.insert_str(&text);
            } else {
                return vec![];
            }
            activity(s)
        }
        Msg::Resize { width, height } => {
            s.width = width;
            s.height = height;
            ensure_visible(s, s.view);
            rebuild_detail(s);
            vec![refresh(s)]
        }
        Msg::Tick { now } => {
            s.now = now;
            vec![Effect::CheckMarker]
        }
        Msg::Marker(m) => {
            if s.marker == Some(m) {
                vec![]
            } else {
                vec![refresh(s)]
            }
        }
        Msg::Resumed(r) => resumed(s, *r),
        Msg::Reacquired(results) => {
            for (id, result) in results {
                match result {
                    Ok(item) => {
                        s.held.insert(id, Held::of(&item));
                    }
                    Err(e) => {
                        s.held.remove(&id);
                        let message = format!("Could not re-acquire #{id}: {e}");
                        s.notices.insert(
                            0,
                            Notice {
                                item_id: id,
                                message: message.clone(),
                                at: s.now,
                            },
                        );
                        set_error(s, message);
                    }
                }
            }
            vec![refresh(s)]
        }
        Msg::Refreshed(snap) => refreshed(s, *snap),
        Msg::Opened { taken, result } => match result {
            Ok((item, history)) => {
                if item.is_held_by(&s.me) && item.state == ItemState::Open {
                    s.held.insert(item.id, Held::of(&item));
                }
                if taken {
                    set_info(
                        s,
                        format!("Took #{}: {}", item.id, sanitize::line(&item.title)),
                    );
                }
                let keep = s
                    .detail
                    .as_ref()
                    .filter(|d| !taken && d.item.id == item.id)
                    .map_or(0, |d| d.scroll);
                let mut d = build_detail(s, item, history);
                d.scroll = keep.min(d.lines.len().saturating_sub(1));
                s.detail = Some(d);
                vec![refresh(s)]
            }
            Err(e) => {
                set_error(s, e.to_string());
                vec![refresh(s)]
            }
        },
        Msg::Renewed { id, result } => {
            s.renewing = None;
            match result {
                Ok(item) => {
                    s.held.insert(id, Held::of(&item));
                    if let Some(d) = s.detail.as_mut().filter(|d| d.item.id == id) {
                        d.item.lock_time = item.lock_time;
                        d.item.lock_token = item.lock_token;
                    }
                    vec![]
                }
                Err(e) => {
                    set_error(s, e.to_string());
                    vec![refresh(s)]
                }
            }
        }
        Msg::NotesSaved { id, text, result } => match result {
            Ok(()) => {
                if s.drafts.get(&id) == Some(&text) {
                    s.drafts.remove(&id);
                }
                if let Some(e) = s.editor.as_mut().filter(|e| e.item_id == id) {
                    e.saving = false;
                    e.original = text.clone();
                }
                if let Some(d) = s.detail.as_ref().filter(|d| d.item.id == id) {
                    let mut item = d.item.clone();
                    item.notes = text;
                    let history = d.history.clone();
                    let scroll = d.scroll;
                    let mut nd = build_detail(s, item, history);
                    nd.scroll = scroll;
                    s.detail = Some(nd);
                }
                set_info(s, format!("Notes saved on #{id}"));
                if s.detail.as_ref().is_some_and(|d| d.item.id == id) {
                    vec![Effect::Open(id)]
                } else {
                    vec![]
                }
            }
            Err(e) => {
                if let Some(ed) = s.editor.as_mut() {
                    ed.saving = false;
                }
                set_error(s, format!("Notes not saved ({e}); your text is kept"));
                if e.is_conflict() {
                    vec![refresh(s)]
                } else {
                    vec![]
                }
            }
        },
        Msg::Finished { id, what, result } => match result {
            Ok(()) => {
                s.held.remove(&id);
                s.drafts.remove(&id);
                if s.detail.as_ref().is_some_and(|d| d.item.id == id) {
                    s.detail = None;
                }
                let verb = match what {
                    Finish::Complete(_) => "Completed",
                    Finish::Fail(_) => "Failed",
                    Finish::Release => "Released",
                    Finish::Skip(_) => "Skipped",
                };
                set_info(s, format!("{verb} #{id}"));
                vec![refresh(s)]
            }
            Err(e) => {
                set_error(s, e.to_string());
                vec![refresh(s)]
            }
        },
        Msg::Supervised { op, result } => supervise::supervised(s, op, result),
        Msg::LocksCollected { filter, result } => supervise::locks_collected(s, filter, result),
        Msg::Activity {
            user,
            since,
            result,
        } => supervise::activity_loaded(s, user, since, result),
        Msg::Commented { id, result } => {
            match result {
                Ok(()) => {
                    s.drafts.remove(&id);
                    set_info(s, format!("Your notes were added to #{id} as a comment"));
                }
                Err(e) => set_error(
                    s,
                    format!("Comment not added ({e}); your notes are still kept"),
                ),
            }
            rebuild_detail(s);
            vec![]
        }
        Msg::CommentAdded { id, result } => super::preview::comment_added(s, id, result),
        Msg::Thread { id, result } => {
            super::preview::thread_loaded(s, id, result);
            vec![]
        }
        Msg::Users(names) => {
            s.users = names;
            vec![]
        }
        Msg::Calling(call) => {
            s.call = call;
            vec![]
        }
    }
}

pub(super) fn set_info(s: &mut State, text: String) {
    s.status = Some(Status { text, error: false });
}

pub(super) fn set_error(s: &mut State, text: String) {
    s.status = Some(Status { text, error: true });
}

/// The refresh of what is on screen, plus a check of every lock we believe we hold.
pub(super) fn refresh(s: &State) -> Effect {
    let list = s
        .pane(s.view)
        .and_then(|p| list_filter(s, s.view, p.offset, layout::list_rows(s, s.view)));
    Effect::Refresh(RefreshRequest {
        view: s.view,
        list,
        stats: s.view == View::Stats,
        checks: s.held.values().map(|h| (h.id, h.token)).collect(),
    })
}

/// A key pressed while working a held item renews its lock when renewal is due.
fn activity(s: &mut State) -> Vec<Effect> {
    let id = match (&s.editor, &s.detail) {
        (Some(e), _) => e.item_id,
        (None, Some(d)) => d.item.id,
        _ => return vec![],
    };
    let Some(h) = s.held.get(&id) else {
        return vec![];
    };
    if s.renewing.is_some() {
        return vec![];
    }
    let q = s.queue(&h.queue);
    if h.lock(&s.me).renewal_due(&q, s.now) {
        s.renewing = Some(id);
        vec![Effect::Renew { id, token: h.token }]
    } else {
        vec![]
    }
}

fn resumed(s: &mut State, r: Resume) -> Vec<Effect> {
    for q in r.queues {
        s.queues.insert(q.name.clone(), q);
    }
    if let Some(role) = r.role {
        s.role = role;
    }
    let mut expired = Vec::new();
    for item in &r.own {
        let h = Held::of(item);
        if h.lock(&s.me).is_expired(&s.queue(&h.queue), s.now) {
            expired.push(h.id);
        }
        s.held.insert(h.id, h);
    }
    let n = r.own.len();
    if n > 0 {
        let line = format!(
            "You have {n} unfinished item{}",
            if n == 1 { "" } else { "s" }
        );
        s.resume_line = Some(line.clone());
        set_info(s, line);
    }
    s.lost_since = r.lost;
    if n > 0 || !s.lost_since.is_empty() {
        s.view = View::Mine;
    }
    let mut fx = Vec::new();
    if !expired.is_empty() {
        fx.push(Effect::Reacquire(expired));
    }
    fx.push(refresh(s));
    fx
}

fn refreshed(s: &mut State, snap: Snapshot) -> Vec<Effect> {
    match &snap.error {
        Some(StoreError::Connection(m)) => {
            // Nothing on screen is thrown away (typing, drafts, dialogs); the next tick tries
            // again, and the first good refresh re-reads everything.
            s.offline = true;
            s.marker = None;
            set_error(s, format!("reconnecting… {m}"));
        }
        Some(e) => set_error(s, e.to_string()),
        None if s.offline => {
            s.offline = false;
            s.status = Some(Status {
                text: "Reconnected".into(),
                error: false,
            });
        }
        None => {}
    }
    if snap.marker.is_some() {
        s.marker = snap.marker;
    }
    for q in snap.queues {
        s.queues.insert(q.name.clone(), q);
    }
    if snap.stats.is_some() {
        s.stats = snap.stats;
        let n = s.stats.as_ref().map_or(0, |st| st.by_queue.len());
        s.stats_selected = s.stats_selected.min(n.saturating_sub(1));
    }
    if snap.view == Some(View::Locks) && snap.error.is_none() {
        s.lock_since = snap.lock_since.iter().copied().collect();
    }
    let mut moved = false;
    if let Some(view) = snap.view
        && snap.error.is_none()
    {
        let rows_fit = layout::list_rows(s, view);
        if let Some(p) = s.pane_mut(view) {
            p.rows = snap.rows;
            p.total = snap.total;
            p.offset = snap.offset;
            p.rows_at = snap.offset;
            let max = p.total.saturating_sub(1) as usize;
            if p.selected > max {
                p.selected = max;
                if p.selected < p.offset || p.selected >= p.offset + rows_fit {
                    p.offset = p.selected.saturating_sub(rows_fit.saturating_sub(1));
                    moved = true;
                }
            }
        }
    }
    let mut reopen = Vec::new();
    for c in snap.checks {
        let Some(held) = s.held.get(&c.id).cloned() else {
            continue;
        };
        match c.item {
            Ok(item) if !is_lost(&s.me, &held, &item) => {
                s.held.insert(c.id, Held::of(&item));
            }
            Ok(_) | Err(StoreError::NotFound(_)) => {
                lose(s, &held, &c.history);
                if s.detail.as_ref().is_some_and(|d| d.item.id == c.id) {
                    reopen.push(c.id);
                }
            }
            Err(e) => set_error(s, e.to_string()),
        }
    }
    if let Some(own) = snap.own
        && snap.error.is_none()
    {
        super::assign::track_own(s, own, &snap.given);
    }
    // The detail of a lost item is re-read so its history shows what happened.
    let mut fx: Vec<Effect> = reopen.into_iter().map(Effect::Open).collect();
    if moved {
        fx.push(refresh(s));
    }
    fx
}

/// Tells the user at once that a lock is gone; keeps whatever they typed.
fn lose(s: &mut State, held: &Held, history: &[Event]) {
    let id = held.id;
    let message = explain(&s.me, held, &s.queue(&held.queue), history);
    s.held.remove(&id);
    if s.renewing == Some(id) {
        s.renewing = None;
    }
    if let Some(ed) = s.editor.take_if(|e| e.item_id == id) {
        let text = ed.buf.text();
        if text != ed.original {
            s.drafts.insert(id, text);
        }
    }
    s.notices.insert(
        0,
        Notice {
            item_id: id,
            message: message.clone(),
            at: s.now,
        },
    );
    let has_draft = s.drafts.get(&id).is_some_and(|d| !d.trim().is_empty());
    s.dialog = Some(if has_draft {
        Dialog {
            title: "Lock lost".into(),
            message: format!(
                "{message}.\nYour unsaved notes are kept. Add them to #{id} as a comment?"
            ),
            inputs: Vec::new(),
            focus: 0,
            required: false,
            pending: Pending::Comment { id },
            error: None,
        }
    } else {
        Dialog {
            title: "Lock lost".into(),
            message: format!("{message}."),
            inputs: Vec::new(),
            focus: 0,
            required: false,
            pending: Pending::Dismiss,
            error: None,
        }
    });
    set_error(s, message);
    rebuild_detail(s);
}
