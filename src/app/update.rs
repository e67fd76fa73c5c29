//! `update(state, msg) -> effects`: every decision of the TUI, testable without a
//! terminal, a database or a clock.

use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

use super::keymap::{self, Action, Context};
use super::layout::{self, LIST_TOP};
use super::lost::{explain, is_lost};
use super::supervise;
use super::{
    Detail, DetailLine, Dialog, Editor, Effect, Filter, Finish, Held, LineKind, Msg, Notice,
    Pending, RefreshRequest, Resume, Snapshot, State, Status, TextBuf, View, list_filter,
};
use crate::domain::sanitize;
use crate::domain::{Event, Item, ItemState};
use crate::store::{StoreError, TakeNext};

/// Applies one message to the state; returns what the loop must do next.
pub fn update(s: &mut State, msg: Msg) -> Vec<Effect> {
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

fn on_key(s: &mut State, key: KeyEvent) -> Vec<Effect> {
    if let Some(top) = s.help {
        s.help = match keymap::lookup(Context::Moving, &key) {
            Some(Action::Down) => Some(top.saturating_add(1)),
            Some(Action::Up) => Some(top.saturating_sub(1)),
            Some(Action::PageDown) => Some(top.saturating_add(10)),
            Some(Action::PageUp) => Some(top.saturating_sub(10)),
            _ => None,
        };
        return vec![];
    }
    if s.dialog.is_some() {
        return dialog_key(s, key);
    }
    if s.filter_prompt.is_some() {
        return prompt_key(s, key);
    }
    if s.editor.is_some() {
        return editor_key(s, key);
    }
    for ctx in [
        Context::Global,
        Context::Moving,
        Context::Item,
        Context::Supervisor,
    ] {
        if let Some(a) = keymap::lookup(ctx, &key) {
            return act(s, a);
        }
    }
    vec![]
}

fn switch_view(s: &mut State, v: View) -> Vec<Effect> {
    s.view = v;
    s.detail = None;
    s.report = None;
    ensure_visible(s, v);
    vec![refresh(s)]
}

fn act(s: &mut State, a: Action) -> Vec<Effect> {
    match a {
        Action::ViewQueue => switch_view(s, View::Queue),
        Action::ViewMine => switch_view(s, View::Mine),
        Action::ViewLocks => switch_view(s, View::Locks),
        Action::ViewStats => switch_view(s, View::Stats),
        Action::NextView => {
            let i = View::ALL.iter().position(|v| *v == s.view).unwrap_or(0);
            switch_view(s, View::ALL[(i + 1) % View::ALL.len()])
        }
        Action::Help => {
            s.help = Some(0);
            vec![]
        }
        Action::Quit => {
            if s.drafts.is_empty() {
                s.quit = true;
            } else {
                let ids: Vec<String> = s.drafts.keys().map(|i| format!("#{i}")).collect();
                s.dialog = Some(Dialog {
                    title: "Quit?".into(),
                    message: format!(
                        "You have unsaved notes on {}. Quit anyway? The notes will be lost.",
                        ids.join(", ")
                    ),
                    inputs: Vec::new(),
                    focus: 0,
                    required: false,
                    pending: Pending::Quit,
                    error: None,
                });
            }
            vec![]
        }
        Action::Back => {
            if s.report.take().is_some() {
                vec![]
            } else if s.detail.take().is_some() {
                vec![refresh(s)]
            } else if s.view == View::Queue && !s.filter.is_empty() {
                s.filter = Filter::default();
                s.panes[0].selected = 0;
                s.panes[0].offset = 0;
                vec![refresh(s)]
            } else if s.view == View::Locks && !s.locks_filter.is_empty() {
                s.locks_filter = Filter::default();
                s.panes[2].selected = 0;
                s.panes[2].offset = 0;
                vec![refresh(s)]
            } else {
                vec![]
            }
        }
        Action::Down => move_by(s, 1),
        Action::Up => move_by(s, -1),
        Action::PageDown => {
            let page = page_size(s);
            move_by(s, page)
        }
        Action::PageUp => {
            let page = page_size(s);
            move_by(s, -page)
        }
        Action::Top => move_by(s, i64::MIN / 2),
        Action::Bottom => move_by(s, i64::MAX / 2),
        Action::TakeNext => vec![Effect::TakeNext(TakeNext {
            queue: s.filter.queue.clone(),
            skip: s.skipped.clone(),
        })],
        Action::Open => {
            if s.detail.is_some() {
                return vec![];
            }
            let Some(item) = s.pane(s.view).and_then(|p| p.selected_item()) else {
                return vec![];
            };
            if item.is_held_by(&s.me) {
                vec![Effect::Open(item.id)]
            } else {
                vec![Effect::Take(item.id)]
            }
        }
        Action::Filter => {
            s.report = None;
            if s.view == View::Locks {
                s.detail = None;
                s.filter_prompt = Some(TextBuf::line(&s.locks_filter.display()));
                return vec![];
            }
            if s.view != View::Queue {
                s.view = View::Queue;
                s.detail = None;
            }
            s.filter_prompt = Some(TextBuf::line(&s.filter.display()));
            vec![]
        }
        Action::Complete | Action::Fail | Action::Release | Action::Skip | Action::EditNotes => {
            item_action(s, a)
        }
        Action::Unlock
        | Action::Reassign
        | Action::UnlockAll
        | Action::Requeue
        | Action::CancelItem
        | Action::QueueSettings
        | Action::Activity => supervise::act(s, a),
        // Editor and dialog actions are handled in their own modes.
        Action::SaveNotes
        | Action::CloseEditor
        | Action::Confirm
        | Action::Cancel
        | Action::NextField
        | Action::PrevField => vec![],
    }
}

/// The held item c/f/r/s/e act on: the open detail, else the selected row of Mine.
fn target(s: &mut State) -> Option<Held> {
    if let Some(d) = &s.detail {
        return s.held.get(&d.item.id).cloned();
    }
    if s.view == View::Mine {
        let item = s.panes[1].selected_item()?.clone();
        if !item.is_held_by(&s.me) {
            return None;
        }
        let h = s
            .held
            .entry(item.id)
            .or_insert_with(|| Held::of(&item))
            .clone();
        return Some(h);
    }
    None
}

fn item_action(s: &mut State, a: Action) -> Vec<Effect> {
    let Some(h) = target(s) else {
        // A lost item whose notes were kept: offer them as a comment again.
        if let Some(id) = s.detail.as_ref().map(|d| d.item.id)
            && s.drafts.contains_key(&id)
        {
            s.dialog = Some(Dialog {
                title: format!("You no longer hold #{id}"),
                message: "Your unsaved notes are kept. Add them to the item as a comment?".into(),
                inputs: Vec::new(),
                focus: 0,
                required: false,
                pending: Pending::Comment { id },
                error: None,
            });
            return vec![];
        }
        let why = match &s.detail {
            Some(d) => format!(
                "You do not hold #{}; take it first (Enter in a list)",
                d.item.id
            ),
            None => "Open an item you hold first (n, or Enter on a row)".to_string(),
        };
        set_error(s, why);
        return vec![];
    };
    let (id, token) = (h.id, h.token);
    let title = sanitize::line(&h.title).into_owned();
    let notes = s.drafts.get(&id).cloned();
    match a {
        Action::Complete => {
            s.dialog = Some(Dialog {
                title: format!("Complete #{id}?"),
                message: title,
                inputs: vec![("Result (optional)".into(), TextBuf::line(""))],
                focus: 0,
                required: false,
                pending: Pending::Complete { id, token },
                error: None,
            });
            vec![]
        }
        Action::Fail => {
            s.dialog = Some(Dialog {
                title: format!("Fail #{id}?"),
                message: title,
                inputs: vec![("Reason (required)".into(), TextBuf::line(""))],
                focus: 0,
                required: true,
                pending: Pending::Fail { id, token },
                error: None,
            });
            vec![]
        }
        Action::Release => vec![Effect::Finish {
            id,
            token,
            what: Finish::Release,
            notes,
        }],
        Action::Skip => {
            if !s.skipped.contains(&id) {
                s.skipped.push(id);
            }
            vec![Effect::Finish {
                id,
                token,
                what: Finish::Skip(TakeNext {
                    queue: s.filter.queue.clone(),
                    skip: s.skipped.clone(),
                }),
                notes,
            }]
        }
        Action::EditNotes => {
            let saved = match &s.detail {
                Some(d) if d.item.id == id => d.item.notes.clone(),
                _ => s.panes[1]
                    .rows
                    .iter()
                    .find(|r| r.id == id)
                    .map(|r| r.notes.clone())
                    .unwrap_or_default(),
            };
            let text = s.drafts.get(&id).cloned().unwrap_or_else(|| saved.clone());
            s.editor = Some(Editor {
                item_id: id,
                buf: TextBuf::multi(&text),
                original: saved,
                saving: false,
            });
            if s.detail.as_ref().is_none_or(|d| d.item.id != id) {
                vec![Effect::Open(id)]
            } else {
                vec![]
            }
        }
        _ => vec![],
    }
}

fn page_size(s: &State) -> i64 {
    if s.detail.is_some() {
        layout::detail_rows(s) as i64
    } else {
        layout::list_rows(s, s.view) as i64
    }
}

fn move_by(s: &mut State, delta: i64) -> Vec<Effect> {
    let page = layout::detail_rows(s);
    if let Some(r) = s.report.as_mut() {
        let max = r.lines.len().saturating_sub(page.saturating_sub(1)) as i64;
        r.scroll = (r.scroll as i64).saturating_add(delta).clamp(0, max) as usize;
        return vec![];
    }
    if s.view == View::Stats && s.detail.is_none() {
        supervise::move_stats(s, delta);
        return vec![];
    }
    if let Some(d) = s.detail.as_mut() {
        let max = d.lines.len().saturating_sub(page.saturating_sub(1)) as i64;
        d.scroll = (d.scroll as i64).saturating_add(delta).clamp(0, max) as usize;
        return vec![];
    }
    let view = s.view;
    let Some(p) = s.pane_mut(view) else {
        return vec![];
    };
    let max = p.total.saturating_sub(1) as i64;
    p.selected = (p.selected as i64)
        .saturating_add(delta)
        .clamp(0, max.max(0)) as usize;
    if ensure_visible(s, view) {
        vec![refresh(s)]
    } else {
        vec![]
    }
}

/// Moves the window so the selection is on screen; true when the window moved.
fn ensure_visible(s: &mut State, view: View) -> bool {
    let rows = layout::list_rows(s, view);
    let Some(p) = s.pane_mut(view) else {
        return false;
    };
    let before = p.offset;
    if p.selected < p.offset {
        p.offset = p.selected;
    } else if p.selected >= p.offset + rows {
        p.offset = p.selected + 1 - rows;
    }
    p.offset != before
}

fn edit_line(buf: &mut TextBuf, key: KeyEvent) {
    match key.code {
        KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => buf.insert(c),
        KeyCode::Backspace => buf.backspace(),
        KeyCode::Delete => buf.delete(),
        KeyCode::Left => buf.left(),
        KeyCode::Right => buf.right(),
        KeyCode::Home => buf.home(),
        KeyCode::End => buf.end(),
        _ => {}
    }
}

fn dialog_key(s: &mut State, key: KeyEvent) -> Vec<Effect> {
    match keymap::lookup(Context::Dialog, &key) {
        Some(Action::Confirm) => confirm(s),
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
                edit_line(buf, key);
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
    if d.required
        && let Some(i) = (0..d.inputs.len()).find(|i| d.value(*i).is_empty())
    {
        let error = match d.inputs[i].0.split(" (").next().unwrap_or("A value") {
            "Reason" => "A reason is required".to_string(),
            what => format!("{what} is required"),
        };
        s.dialog = Some(Dialog {
            error: Some(error),
            focus: i,
            ..d
        });
        return vec![];
    }
    match d.pending {
        Pending::Complete { id, token } => vec![Effect::Finish {
            id,
            token,
            what: Finish::Complete((!text.is_empty()).then_some(text)),
            notes: s.drafts.get(&id).cloned(),
        }],
        Pending::Fail { id, token } => vec![Effect::Finish {
            id,
            token,
            what: Finish::Fail(text),
            notes: s.drafts.get(&id).cloned(),
        }],
        Pending::Comment { id } => match s.drafts.get(&id) {
            Some(t) => vec![Effect::Comment {
                id,
                text: t.clone(),
            }],
            None => vec![],
        },
        Pending::Quit => {
            s.quit = true;
            vec![]
        }
        Pending::Dismiss => vec![],
        Pending::Unlock { .. }
        | Pending::Reassign { .. }
        | Pending::UnlockMany { .. }
        | Pending::Requeue { .. }
        | Pending::Cancel { .. }
        | Pending::QueueSettings { .. } => supervise::confirm(s, d),
    }
}

fn prompt_key(s: &mut State, key: KeyEvent) -> Vec<Effect> {
    match keymap::lookup(Context::Dialog, &key) {
        Some(Action::Confirm) => {
            let typed = s.filter_prompt.take().map(|b| b.text()).unwrap_or_default();
            let (filter, pane) = if s.view == View::Locks {
                (&mut s.locks_filter, 2)
            } else {
                (&mut s.filter, 0)
            };
            *filter = Filter::parse(&typed);
            s.panes[pane].selected = 0;
            s.panes[pane].offset = 0;
            vec![refresh(s)]
        }
        Some(Action::Cancel) => {
            s.filter_prompt = None;
            vec![]
        }
        _ => {
            if let Some(b) = s.filter_prompt.as_mut() {
                edit_line(b, key);
            }
            vec![]
        }
    }
}

fn editor_key(s: &mut State, key: KeyEvent) -> Vec<Effect> {
    let Some(ed) = s.editor.as_mut() else {
        return vec![];
    };
    match keymap::lookup(Context::Editor, &key) {
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
            let b = &mut ed.buf;
            match key.code {
                KeyCode::Enter => b.insert('\n'),
                KeyCode::Tab => b.insert_str("    "),
                KeyCode::Up => b.up(),
                KeyCode::Down => b.down(),
                _ => edit_line(b, key),
            }
            vec![]
        }
    }
}

fn on_mouse(s: &mut State, m: MouseEvent) -> Vec<Effect> {
    if s.help.is_some() || s.dialog.is_some() || s.editor.is_some() || s.filter_prompt.is_some() {
        return vec![];
    }
    match m.kind {
        MouseEventKind::ScrollDown => move_by(s, 3),
        MouseEventKind::ScrollUp => move_by(s, -3),
        MouseEventKind::Down(MouseButton::Left) => {
            if m.row == 0 {
                // The tab bar: " 1 Queue  2 Mine  3 Locks  4 Stats".
                let mut x = 1u16;
                for v in View::ALL {
                    let w = v.title().len() as u16 + 4;
                    if m.column >= x && m.column < x + w {
                        return switch_view(s, v);
                    }
                    x += w;
                }
                return vec![];
            }
            if s.detail.is_some() || m.row < LIST_TOP {
                return vec![];
            }
            let view = s.view;
            let rows = layout::list_rows(s, view);
            let Some(p) = s.pane_mut(view) else {
                return vec![];
            };
            let i = (m.row - LIST_TOP) as usize;
            if i < rows && p.offset + i < p.total as usize {
                p.selected = p.offset + i;
            }
            vec![]
        }
        _ => vec![],
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

fn rebuild_detail(s: &mut State) {
    if let Some(d) = s.detail.take() {
        let scroll = d.scroll;
        let mut nd = build_detail(s, d.item, d.history);
        nd.scroll = scroll.min(nd.lines.len().saturating_sub(1));
        s.detail = Some(nd);
    }
}

/// Wraps text to `width` characters at spaces (hard-splitting longer words), once, when
/// the detail is built: drawing then only handles a screenful of short lines, so a 1 MiB
/// one-line body scrolls as fast as a short one.
fn push_text(lines: &mut Vec<DetailLine>, width: usize, text: &str, kind: LineKind) {
    let clean = sanitize::text(text);
    for l in clean.split('\n') {
        if l.len() <= width {
            lines.push(DetailLine {
                kind,
                text: l.to_string(),
            });
            continue;
        }
        let mut cur = String::new();
        let mut cur_n = 0;
        for word in l.split_inclusive(' ') {
            let n = word.chars().count();
            if cur_n + n > width && cur_n > 0 {
                lines.push(DetailLine {
                    kind,
                    text: std::mem::take(&mut cur),
                });
                cur_n = 0;
            }
            if n > width {
                let chars: Vec<char> = word.chars().collect();
                let mut chunks = chars.chunks(width).peekable();
                while let Some(c) = chunks.next() {
                    if chunks.peek().is_some() {
                        lines.push(DetailLine {
                            kind,
                            text: c.iter().collect(),
                        });
                    } else {
                        cur = c.iter().collect();
                        cur_n = c.len();
                    }
                }
            } else {
                cur.push_str(word);
                cur_n += n;
            }
        }
        if cur_n > 0 {
            lines.push(DetailLine { kind, text: cur });
        }
    }
}

fn heading(lines: &mut Vec<DetailLine>, text: &str) {
    if !lines.is_empty() {
        lines.push(DetailLine {
            kind: LineKind::Text,
            text: String::new(),
        });
    }
    lines.push(DetailLine {
        kind: LineKind::Heading,
        text: text.to_string(),
    });
}

fn when(t: crate::domain::Millis) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(t)
        .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| "?".into())
}

/// The detail pane's text: body, params, notes (and any unsaved draft), history.
fn build_detail(s: &State, item: Item, history: Vec<Event>) -> Detail {
    let w = (s.width as usize).max(20);
    let mut lines = Vec::new();
    let due = item.due_at.map_or_else(|| "none".to_string(), when);
    let meta = format!(
        "created {} by {} · due {due}{}",
        when(item.created_at),
        item.created_by,
        item.request_id
            .as_ref()
            .map(|r| format!(" · request {r}"))
            .unwrap_or_default()
    );
    push_text(&mut lines, w, &sanitize::line(&meta), LineKind::Dim);
    if let Some(why) = item.unreadable_summary() {
        let note = format!("unreadable: {why} (bad bytes shown as \u{FFFD})");
        push_text(&mut lines, w, &note, LineKind::Heading);
    }
    heading(&mut lines, "Body");
    if item.body.is_empty() {
        push_text(&mut lines, w, "(empty)", LineKind::Dim);
    } else {
        push_text(&mut lines, w, &item.body, LineKind::Text);
    }
    heading(&mut lines, "Params");
    let pretty = serde_json::from_str::<serde_json::Value>(&item.params)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| item.params.clone());
    push_text(&mut lines, w, &pretty, LineKind::Text);
    heading(&mut lines, "Notes");
    if item.notes.is_empty() {
        push_text(&mut lines, w, "(none)", LineKind::Dim);
    } else {
        push_text(&mut lines, w, &item.notes, LineKind::Text);
    }
    if let Some(d) = s.drafts.get(&item.id) {
        heading(&mut lines, "Unsaved notes (kept; e edits, Ctrl-S saves)");
        push_text(&mut lines, w, d, LineKind::Text);
    }
    if let Some(r) = &item.result {
        heading(&mut lines, "Result");
        push_text(&mut lines, w, r, LineKind::Text);
    }
    if let Some(r) = &item.error {
        heading(&mut lines, "Failure reason");
        push_text(&mut lines, w, r, LineKind::Text);
    }
    heading(&mut lines, "History");
    for e in &history {
        let extra = ["result", "reason", "comment", "to", "from"]
            .iter()
            .filter_map(|k| e.detail_str(k).map(|v| format!("{k}: {v}")))
            .collect::<Vec<_>>()
            .join(", ");
        let line = format!(
            "{}  {:<10} {}{}",
            when(e.at),
            e.kind.as_str(),
            e.actor,
            if extra.is_empty() {
                String::new()
            } else {
                format!("  ({extra})")
            }
        );
        push_text(&mut lines, w, &sanitize::line(&line), LineKind::Dim);
    }
    Detail {
        item,
        history,
        lines,
        scroll: 0,
    }
}
