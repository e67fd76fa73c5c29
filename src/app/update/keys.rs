//! What keys, the mouse and pasting do outside the modal inputs (see `modes`): the key
//! table's actions on the lists, the views and the item open, as changes to the state
//! and effects.

use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind,
};

use super::modes::{dialog_key, editor_key, notice_key, prompt_key};
use super::park;
use super::{edit, preview, review, supervise};
use super::{refresh, refused, set_error, set_info};
use crate::app::detail::rebuild_detail;
use crate::app::keymap::{self, Action, Context};
use crate::app::layout::{self, LIST_TOP};
use crate::app::typing::{Spot, TYPING_HINT, Verdict};
use crate::app::{
    DOUBLE_TAKE_MS, Dialog, Editor, Effect, FieldSpec, Filter, Held, Pending, State, TextInput,
    View,
};
use crate::domain::figures::PeriodKind;
use crate::domain::texts::Purpose;
use crate::domain::{Millis, sanitize};
use crate::store::TakeNext;

/// A key: keys held back by the typing guard whose time has come act first; then the
/// key itself, unless it is typing (see `app::typing`) or held back.
pub(super) fn key(s: &mut State, key: KeyEvent, now: Millis) -> Vec<Effect> {
    s.now = now;
    if key.kind == KeyEventKind::Release {
        return vec![];
    }
    let mut fx = held_due(s);
    if in_text_field(s) {
        fx.extend(press(s, key));
        return fx;
    }
    let starting = s.typing.starting(now);
    if starting {
        s.typing.before = Some(spot(s));
    }
    match s.typing.classify(&key, now, acts_at_once(&key, starting)) {
        Verdict::Act => {
            for held in s.typing.release_all() {
                fx.extend(press(s, held));
            }
            fx.extend(press(s, key));
        }
        Verdict::Held => {}
        Verdict::Typing { noticed: true } => fx.extend(typing_seen(s)),
        Verdict::Typing { noticed: false } => {
            // The one line stays while the typing goes on (it would fade after 10 s).
            if s.status.as_ref().is_none_or(|st| st.text == TYPING_HINT) {
                set_info(s, TYPING_HINT.to_string());
            }
        }
    }
    fx
}

/// The keys held back whose time has come (no typing formed around them), acted on in
/// the order they came.
pub(super) fn held_due(s: &mut State) -> Vec<Effect> {
    let mut fx = Vec::new();
    for held in s.typing.due(s.now) {
        fx.extend(press(s, held));
    }
    fx
}

/// A key acted on: renews the lock of the item being worked when that is due, then acts.
fn press(s: &mut State, key: KeyEvent) -> Vec<Effect> {
    let mut fx = activity(s);
    fx.extend(on_key(s, key));
    fx
}

/// Keys here are text, not commands: a dialog's field, a prompt, the notes editor.
fn in_text_field(s: &State) -> bool {
    s.dialog.as_ref().is_some_and(|d| !d.inputs.is_empty())
        || super::form::editing(s)
        || s.filter_prompt.is_some()
        || s.goto_prompt.is_some()
        || s.editor.is_some()
}

/// Moving the selection, and Enter, act at once unless they complete a burst of typing;
/// so do the keys that open a field to type in (`/`, `:`, `e`) when they begin a run of
/// keys: what follows them quickly is meant for the field (`/printer`, `:42`). Every
/// other key changes something and is held back (`app::typing`).
fn acts_at_once(key: &KeyEvent, starting: bool) -> bool {
    let opens_field = [Context::Global, Context::Item].iter().any(|&c| {
        matches!(
            keymap::lookup(c, key),
            Some(Action::Filter | Action::GoTo | Action::EditNotes)
        )
    });
    key.code == KeyCode::Enter
        || (starting && opens_field)
        || matches!(
            keymap::lookup(Context::Moving, key),
            Some(
                Action::Down
                    | Action::Up
                    | Action::PageDown
                    | Action::PageUp
                    | Action::HalfPageDown
                    | Action::HalfPageUp
                    | Action::Top
                    | Action::Bottom
            )
        )
}

/// Where the selection and the item's scroll stand.
fn spot(s: &State) -> Spot {
    let pane = s.pane(s.view);
    Spot {
        selected: pane.map_or(0, |p| p.selected),
        offset: pane.map_or(0, |p| p.offset),
        scroll: s.detail.as_ref().map_or(0, |d| d.scroll),
    }
}

/// Typing was seen: say so once, and put back what its moving keys moved.
fn typing_seen(s: &mut State) -> Vec<Effect> {
    set_info(s, TYPING_HINT.to_string());
    let Some(before) = s.typing.before.take() else {
        return vec![];
    };
    if let Some(d) = s.detail.as_mut() {
        d.scroll = before.scroll;
    }
    let view = s.view;
    let Some(p) = s.pane_mut(view) else {
        return vec![];
    };
    let moved = p.offset != before.offset;
    p.selected = before.selected;
    p.offset = before.offset;
    if moved { vec![refresh(s)] } else { vec![] }
}

/// Pasted text goes where typing would go; it counts as activity. Outside a text field
/// it is typing: nothing changes, the status line says so.
pub(super) fn paste(s: &mut State, text: &str, now: Millis) -> Vec<Effect> {
    s.now = now;
    if let Some(b) = s.dialog.as_mut().and_then(|d| d.focused_mut()) {
        b.insert_str(text);
    } else if let Some(p) = s.filter_prompt.as_mut() {
        p.insert_str(text);
        s.filter_typed = Some(now);
    } else if let Some(p) = s.goto_prompt.as_mut() {
        p.insert_str(text);
    } else if let Some(e) = s.editor.as_mut() {
        e.buf.insert_str(text);
    } else if !super::form::paste(s, text) {
        if s.typing.pasted(now) {
            set_info(s, TYPING_HINT.to_string());
        }
        return vec![];
    }
    activity(s)
}

pub(super) fn resize(s: &mut State, width: u16, height: u16) -> Vec<Effect> {
    s.width = width;
    s.height = height;
    ensure_visible(s, s.view);
    rebuild_detail(s);
    vec![refresh(s)]
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
    // Ctrl-Z suspends from anywhere, typing included; the loop does it and comes back.
    if keymap::lookup(Context::Global, &key) == Some(Action::Suspend) {
        s.suspend = true;
        return vec![];
    }
    if let Some(top) = s.help {
        s.help = match keymap::lookup(Context::Moving, &key) {
            Some(Action::Down) => Some(top.saturating_add(1)),
            Some(Action::Up) => Some(top.saturating_sub(1)),
            Some(Action::PageDown) => Some(top.saturating_add(10)),
            Some(Action::PageUp) => Some(top.saturating_sub(10)),
            Some(Action::HalfPageDown) => Some(top.saturating_add(5)),
            Some(Action::HalfPageUp) => Some(top.saturating_sub(5)),
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
    if s.goto_prompt.is_some() {
        return preview::goto_key(s, key);
    }
    if s.editor.is_some() {
        return editor_key(s, key);
    }
    if super::form::editing(s) {
        return super::form::edit_key(s, key);
    }
    if s.field_admin.is_some() {
        return super::field_admin::key(s, &key);
    }
    if s.notice.is_some()
        && let Some(fx) = notice_key(s, &key)
    {
        return fx;
    }
    if let Some(fx) = super::similar::key(s, &key) {
        return fx;
    }
    if let Some(fx) = super::form::key(s, &key) {
        return fx;
    }
    // Looking at an item one does not hold, `t` takes it (elsewhere it is the holder's day).
    let previewing = s
        .detail
        .as_ref()
        .is_some_and(|d| !s.held.contains_key(&d.item.id));
    // An item under the user's review: `A` and `R` are the reviewer's (else `R` requeues).
    let contexts = [Context::Global, Context::Moving]
        .into_iter()
        .chain(previewing.then_some(Context::Preview))
        .chain(review::reviewing(s).then_some(Context::Review))
        .chain([Context::Item, Context::Supervisor]);
    for ctx in contexts {
        if let Some(a) = keymap::lookup(ctx, &key) {
            return act(s, a);
        }
    }
    vec![]
}

/// A second `n` right after one that took an item (a key bounce, or a habit from another
/// tool) takes nothing: the user is told, and the next `n` takes the next item.
fn double_take(s: &mut State) -> bool {
    let Some(at) = s.last_take_next.take() else {
        return false;
    };
    let Some(id) = s.detail.as_ref().map(|d| d.item.id) else {
        return false;
    };
    if s.now.saturating_sub(at) >= DOUBLE_TAKE_MS || !s.held.contains_key(&id) {
        return false;
    }
    set_info(
        s,
        format!("You just took #{id}; press n again to take another item"),
    );
    true
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
        Action::ViewQueue
        | Action::ViewMine
        | Action::ViewLocks
        | Action::ViewStats
        | Action::ViewReview
        | Action::NextView
        | Action::PrevView => change_view(s, a),
        Action::FiguresPeriod => figures_period(s),
        Action::FiguresSort => figures_sort(s),
        Action::Suspend => {
            s.suspend = true;
            vec![]
        }
        Action::Help => {
            s.help = Some(0);
            vec![]
        }
        // `q` backs out of an item or a report first, as in mutt and tig.
        Action::Quit if s.report.is_some() || s.detail.is_some() => back(s),
        Action::Quit | Action::QuitNow => quit(s),
        Action::Back => back(s),
        Action::Down
        | Action::Up
        | Action::PageDown
        | Action::PageUp
        | Action::HalfPageDown
        | Action::HalfPageUp
        | Action::Top
        | Action::Bottom => movement(s, a),
        a if acts_on_a_row(a) && rows_on_their_way(s) => vec![],
        Action::TakeNext if refused(s) => vec![],
        Action::TakeNext if double_take(s) => vec![],
        Action::TakeNext if s.view == View::Review && s.detail.is_none() => {
            s.last_take_next = Some(s.now);
            review::take(s, None)
        }
        Action::TakeNext => {
            s.last_take_next = Some(s.now);
            s.next_by_key = true;
            vec![Effect::TakeNext(TakeNext {
                queue: s.filter.queue.clone(),
                skip: s.skipped.clone(),
            })]
        }
        Action::Open => open(s),
        Action::Filter => open_filter(s),
        Action::Release | Action::Skip if refused(s) => vec![],
        _ if review::not_a_reviewers(s, a) => vec![],
        Action::Accept | Action::Reject => review::act(s, a),
        Action::Complete
        | Action::CompleteNext
        | Action::Fail
        | Action::Release
        | Action::Skip
        | Action::Park
        | Action::EditNotes => item_action(s, a),
        Action::Unlock
        | Action::Reassign
        | Action::UnlockAll
        | Action::Requeue
        | Action::CancelItem
        | Action::QueueSettings
        | Action::Activity => supervise::act(s, a),
        Action::QueueFields => super::field_admin::open(s),
        Action::Preview => preview::preview(s),
        Action::GoTo => preview::start_goto(s),
        Action::TakePreviewed => preview::take_previewed(s),
        Action::Comment => preview::start_comment(s),
        Action::EditItem => edit::edit_item(s),
        Action::Undo => park::undo(s),
        // Editor, dialog, form and field-list actions are handled in their own modes.
        _ => vec![],
    }
}

/// Actions on the selected row of a list.
fn acts_on_a_row(a: Action) -> bool {
    matches!(
        a,
        Action::Open
            | Action::Preview
            | Action::Complete
            | Action::CompleteNext
            | Action::Fail
            | Action::Release
            | Action::Park
            | Action::EditNotes
            | Action::Unlock
            | Action::Reassign
            | Action::Requeue
            | Action::CancelItem
            | Action::Comment
            | Action::EditItem
    )
}

/// True (and says so) while a new filter's rows are on their way: the list shows none
/// (the older rows answer another filter), so nothing acts on a row not on screen.
fn rows_on_their_way(s: &mut State) -> bool {
    let pending = s.detail.is_none() && s.filter_of(s.view).is_some_and(|(_, p)| p);
    if pending {
        set_info(s, "Searching… (the list is on its way)".into());
    }
    pending
}

/// 1-5, Tab and Shift-Tab (through the views the tab bar shows).
fn change_view(s: &mut State, a: Action) -> Vec<Effect> {
    let views = s.views();
    let n = views.len();
    let i = views.iter().position(|v| *v == s.view).unwrap_or(0);
    let v = match a {
        Action::ViewQueue => View::Queue,
        Action::ViewMine => View::Mine,
        Action::ViewLocks => View::Locks,
        Action::ViewStats => View::Stats,
        Action::ViewReview => View::Review,
        Action::NextView => views[(i + 1) % n],
        _ => views[(i + n - 1) % n],
    };
    switch_view(s, v)
}

fn figures_period(s: &mut State) -> Vec<Effect> {
    if s.view != View::Stats {
        set_info(
            s,
            "p switches the Stats view's figures (press 4 first)".into(),
        );
        return vec![];
    }
    s.figures_period = match s.figures_period {
        None => Some(PeriodKind::Today),
        Some(PeriodKind::Days30) => None,
        Some(k) => Some(k.next()),
    };
    vec![refresh(s)]
}

fn figures_sort(s: &mut State) -> Vec<Effect> {
    if s.view != View::Stats || s.figures_period.is_none() {
        set_info(
            s,
            "o sorts the Stats view's figures (press 4, then p)".into(),
        );
        return vec![];
    }
    s.figures_sort = s.figures_sort.next();
    set_info(s, format!("people sorted by {}", s.figures_sort.label()));
    vec![]
}

/// Quits, asking first when notes are unsaved (they are kept nowhere else).
fn quit(s: &mut State) -> Vec<Effect> {
    let unsent: std::collections::BTreeSet<&i64> = s.drafts.keys().chain(s.kept.keys()).collect();
    if unsent.is_empty() {
        s.quit = true;
    } else {
        let ids: Vec<String> = unsent.iter().map(|i| format!("#{i}")).collect();
        s.dialog = Some(Dialog::new(
            "Quit?",
            format!(
                "You have unsaved notes on {}. Quit anyway? The notes will be lost.",
                ids.join(", ")
            ),
            Pending::Quit,
        ));
    }
    vec![]
}

/// Esc: closes the report or the item, else clears the view's filter.
fn back(s: &mut State) -> Vec<Effect> {
    if s.report.take().is_some() {
        vec![]
    } else if s.detail.take().is_some() {
        vec![refresh(s)]
    } else if s.view == View::Queue && !s.filter.is_empty() {
        s.filter = Filter::default();
        s.panes.queue.selected = 0;
        s.panes.queue.offset = 0;
        vec![refresh(s)]
    } else if s.view == View::Locks && !s.locks_filter.is_empty() {
        s.locks_filter = Filter::default();
        s.panes.locks.selected = 0;
        s.panes.locks.offset = 0;
        vec![refresh(s)]
    } else {
        vec![]
    }
}

fn movement(s: &mut State, a: Action) -> Vec<Effect> {
    let page = page_size(s);
    let half = (page / 2).max(1);
    let delta = match a {
        Action::Down => 1,
        Action::Up => -1,
        Action::PageDown => page,
        Action::PageUp => -page,
        Action::HalfPageDown => half,
        Action::HalfPageUp => -half,
        Action::Top => i64::MIN / 2,
        _ => i64::MAX / 2,
    };
    move_by(s, delta)
}

/// Enter on a row: takes the item, or opens it when it is yours.
fn open(s: &mut State) -> Vec<Effect> {
    if s.detail.is_some() {
        return vec![];
    }
    let Some(item) = s.pane(s.view).and_then(|p| p.selected_item()) else {
        if s.pane(s.view)
            .is_some_and(|p| (p.selected as u64) < p.total)
        {
            set_info(s, "That row is not loaded yet".into());
        }
        return vec![];
    };
    // Opening an assignment starts its lock clock: it is taken (renewed).
    let assigned = item.lock().is_some_and(|l| l.is_assignment());
    if item.is_held_by(&s.me) && !assigned {
        vec![Effect::Open(item.id)]
    } else if s.view == View::Review {
        let id = item.id;
        review::take(s, Some(id))
    } else {
        let id = item.id;
        if refused(s) {
            return vec![];
        }
        vec![Effect::Take(id)]
    }
}

/// `/`: the filter prompt of the Locks view, else of the Queue view.
fn open_filter(s: &mut State) -> Vec<Effect> {
    s.report = None;
    if s.view == View::Locks {
        s.detail = None;
        s.filter_prompt = Some(TextInput::line(&s.locks_filter.display()));
        s.filter_before = Some(s.locks_filter.clone());
        return vec![];
    }
    let mut fx = vec![];
    if s.view != View::Queue {
        s.view = View::Queue;
        s.detail = None;
        fx.push(refresh(s));
    }
    s.filter_prompt = Some(TextInput::line(&s.filter.display()));
    s.filter_before = Some(s.filter.clone());
    fx
}

/// The held item c/f/r/s/e act on: the open detail, else the selected row of Mine.
fn target(s: &mut State) -> Option<Held> {
    if let Some(d) = &s.detail {
        return s.held.get(&d.item.id).cloned();
    }
    if s.view == View::Mine {
        let item = s.panes.mine.selected_item()?.clone();
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
        return no_target(s);
    };
    let (id, token) = (h.id, h.token);
    let title = sanitize::line(&h.title).into_owned();
    if matches!(a, Action::Complete | Action::CompleteNext)
        && let Some(fx) = super::form::complete_checked(s, id, token)
    {
        return fx;
    }
    match a {
        Action::Complete => {
            s.dialog = Some(
                Dialog::new(
                    format!("Complete #{id}?"),
                    title,
                    Pending::Complete { id, token },
                )
                .field(FieldSpec::optional("Result", "Result (optional)"), "")
                .offering(&h.queue, Purpose::Result),
            );
            vec![]
        }
        Action::CompleteNext => {
            s.dialog = Some(
                Dialog::new(
                    format!("Complete #{id} and take the next?"),
                    title,
                    Pending::CompleteNext { id, token },
                )
                .field(FieldSpec::optional("Result", "Result (optional)"), "")
                .offering(&h.queue, Purpose::Result),
            );
            vec![]
        }
        Action::Fail => {
            s.dialog = Some(
                Dialog::new(format!("Fail #{id}?"), title, Pending::Fail { id, token })
                    .field(FieldSpec::reason("Reason (required)"), "")
                    .offering(&h.queue, Purpose::Fail),
            );
            vec![]
        }
        Action::Release | Action::Skip => {
            let (verb, pending, purpose) = match a {
                Action::Skip => ("Skip", Pending::Skip { id, token }, Purpose::Skip),
                _ => ("Release", Pending::Release { id, token }, Purpose::Release),
            };
            let label = "Reason (optional: Enter without one goes ahead)";
            s.dialog = Some(
                Dialog::new(format!("{verb} #{id}?"), title, pending)
                    .field(FieldSpec::optional("A reason", label), "")
                    .offering(&h.queue, purpose),
            );
            vec![]
        }
        Action::EditNotes => edit_notes(s, id),
        Action::Park => park::ask(s, id, token, title),
        _ => vec![],
    }
}

/// An item key with no item of yours to act on: says why, or offers the kept notes of
/// a lost item as a comment again.
fn no_target(s: &mut State) -> Vec<Effect> {
    if let Some(id) = s.detail.as_ref().map(|d| d.item.id)
        && s.unsent(id).is_some()
    {
        s.dialog = Some(Dialog::new(
            format!("You no longer hold #{id}"),
            "Your unsaved notes are kept. Add them to the item as a comment?",
            Pending::Comment { id },
        ));
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
    vec![]
}

/// `e`: the notes editor on the item, starting from its draft or its saved notes.
fn edit_notes(s: &mut State, id: i64) -> Vec<Effect> {
    let saved = match &s.detail {
        Some(d) if d.item.id == id => d.item.notes.clone(),
        _ => s
            .panes
            .mine
            .rows
            .iter()
            .find(|r| r.id == id)
            .map(|r| r.notes.clone())
            .unwrap_or_default(),
    };
    let text = s.drafts.get(&id).cloned().unwrap_or_else(|| saved.clone());
    s.editor = Some(Editor {
        item_id: id,
        buf: TextInput::multi(&text),
        original: saved,
        saving: false,
    });
    if s.detail.as_ref().is_none_or(|d| d.item.id != id) {
        vec![Effect::Open(id)]
    } else {
        vec![]
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
        super::supervised::move_stats(s, delta);
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
pub(super) fn ensure_visible(s: &mut State, view: View) -> bool {
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

pub(super) fn on_mouse(s: &mut State, m: MouseEvent) -> Vec<Effect> {
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
                for v in s.views() {
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
