//! The store's answers: what the state becomes when a take, renewal, save, finish,
//! comment, resume or refresh comes back, and how a lost lock is told.

use crate::app::detail::{build_detail, rebuild_detail};
use crate::app::layout;
use crate::app::lost::{explain, is_lost};
use crate::app::{
    Dialog, Effect, Finish, Held, LockCheck, Notice, Pending, Resume, Snapshot, State, View,
};
use crate::domain::sanitize;
use crate::domain::{Event, Item, ItemState, Role};
use crate::store::{StoreError, TakeNext};

use super::{on_screen, refresh, set_error, set_info};

pub(super) fn reacquired(
    s: &mut State,
    results: Vec<(i64, Result<Item, StoreError>)>,
) -> Vec<Effect> {
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

/// An item was taken (`taken`) or opened, with its history.
pub(super) fn opened(
    s: &mut State,
    taken: bool,
    result: Result<(Item, Vec<Event>), StoreError>,
) -> Vec<Effect> {
    let by_key = std::mem::take(&mut s.next_by_key);
    let skipping = s.skipping.take();
    let reoffered = std::mem::take(&mut s.reoffered);
    let (item, history) = match result {
        Ok(r) => r,
        Err(StoreError::NothingToClaim(_))
            if (by_key || skipping.is_some())
                && taken
                && s.skipped.iter().any(|id| Some(*id) != skipping) =>
        {
            // Nothing left but what was skipped or released: those are offered again (a
            // skip is "not now", not "never"), all but the item just skipped.
            let before = std::mem::take(&mut s.skipped);
            s.skipped = skipping.into_iter().collect();
            s.reoffered = Some(before.len() - s.skipped.len());
            return vec![Effect::TakeNext(TakeNext {
                queue: s.filter.queue.clone(),
                skip: s.skipped.clone(),
            })];
        }
        Err(e) => {
            set_error(s, on_screen(&e));
            return vec![refresh(s)];
        }
    };
    if item.is_held_by(&s.me) && matches!(item.state, ItemState::Open | ItemState::Review) {
        s.held.insert(item.id, Held::of(&item));
    }
    if taken {
        let note = match reoffered {
            Some(1) => {
                " (nothing new: the item you skipped or released is offered again)".to_string()
            }
            Some(n) => {
                format!(" (nothing new: the {n} items you skipped or released are offered again)")
            }
            None => String::new(),
        };
        let undone = history
            .last()
            .is_some_and(|e| e.kind == crate::domain::EventKind::Undone && e.actor == s.me);
        let did = if undone {
            "Undone: yours again,"
        } else {
            "Took"
        };
        set_info(
            s,
            format!("{did} #{}: {}{note}", item.id, sanitize::line(&item.title)),
        );
    }
    let keep = s
        .detail
        .as_ref()
        .filter(|d| !taken && d.item.id == item.id)
        .map_or(0, |d| d.scroll);
    let id = item.id;
    let mut d = build_detail(s, item, history);
    d.scroll = keep.min(d.lines.len().saturating_sub(1));
    s.detail = Some(d);
    let similar = super::similar::request(s, id);
    vec![refresh(s), similar]
}

pub(super) fn renewed(s: &mut State, id: i64, result: Result<Item, StoreError>) -> Vec<Effect> {
    s.renewing = None;
    match result {
        Ok(item) => {
            s.held.insert(id, Held::of(&item));
            if let Some(d) = s.detail.as_mut().filter(|d| d.item.id == id) {
                d.item.lock_time = item.lock_time;
                d.item.lock_expires_at = item.lock_expires_at;
                d.item.lock_token = item.lock_token;
            }
            vec![]
        }
        Err(e) => {
            set_error(s, on_screen(&e));
            vec![refresh(s)]
        }
    }
}

pub(super) fn notes_saved(
    s: &mut State,
    id: i64,
    text: String,
    result: Result<(), StoreError>,
) -> Vec<Effect> {
    if let Err(e) = result {
        if let Some(ed) = s.editor.as_mut() {
            ed.saving = false;
        }
        set_error(s, format!("Notes not saved ({e}); your text is kept"));
        return if e.is_conflict() {
            vec![refresh(s)]
        } else {
            vec![]
        };
    }
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

pub(super) fn finished(
    s: &mut State,
    id: i64,
    what: Finish,
    result: Result<(), StoreError>,
) -> Vec<Effect> {
    if let Err(StoreError::BrokenRules { problems, .. }) = &result {
        s.finish_notes = None;
        return super::form::complete_refused(s, id, &what, problems);
    }
    if let Err(e) = result {
        s.finish_notes = None;
        if matches!(what, Finish::Skip(..)) {
            s.skipping = None;
        }
        if matches!(e, StoreError::LockLost { .. } | StoreError::NotFound(_)) {
            // The result or reason typed for it is not dropped: the lost-lock notice the
            // refresh brings offers it as a comment.
            if let Some((label, text)) = typed(&what) {
                keep(s, id, label, &text);
            }
        }
        set_error(s, on_screen(&e));
        return vec![refresh(s)];
    }
    let queue = s.held.remove(&id).map(|h| h.queue);
    // Draft notes went with the change (saved just before it).
    s.drafts.remove(&id);
    let saved_draft = s.finish_notes.take() == Some(id);
    if s.detail.as_ref().is_some_and(|d| d.item.id == id) {
        s.detail = None;
    }
    let verb = match what {
        Finish::Complete(_) | Finish::CompleteNext(..) => "Completed",
        Finish::CompleteAnyway { .. } => "Completed (rules overridden)",
        Finish::Fail(_) => "Failed",
        Finish::Release(_) => "Released",
        Finish::Skip(..) => "Skipped",
        Finish::Park { .. } => "Parked",
        Finish::Accept(_) => "Accepted",
        Finish::Reject(_) => "Rejected",
    };
    let notes = if saved_draft {
        "; your draft notes were saved first"
    } else {
        ""
    };
    // A verdict is not undone: the item has left the reviewer (done, or back to its maker).
    if matches!(what, Finish::Accept(_) | Finish::Reject(_)) {
        s.undo = None;
        let after = match what {
            Finish::Accept(_) => ": done",
            _ => ": back to its maker",
        };
        set_info(s, format!("{verb} #{id}{after}{notes}"));
        return vec![refresh(s)];
    }
    let window_ms = queue.map_or(crate::domain::park::UNDO_MS, |q| s.queue(&q).undo_ms());
    if window_ms == 0 {
        s.undo = None;
        set_info(s, format!("{verb} #{id}{notes}"));
        return vec![refresh(s)];
    }
    s.undo = Some(crate::app::UndoOffer {
        id,
        at: s.now,
        verb,
        window_ms,
    });
    let undo = window_ms / 1000;
    set_info(s, format!("{verb} #{id}{notes} — u undo ({undo} s)"));
    vec![refresh(s)]
}

pub(super) fn commented(s: &mut State, id: i64, result: Result<(), StoreError>) -> Vec<Effect> {
    match result {
        Ok(()) => {
            s.drafts.remove(&id);
            s.kept.remove(&id);
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

pub(super) fn resumed(s: &mut State, r: Resume) -> Vec<Effect> {
    for q in r.queues {
        s.queues.insert(q.name.clone(), q);
    }
    learnt_role(s, r.role);
    let mut expired = Vec::new();
    for item in &r.own {
        let h = Held::of(item);
        if h.lock(&s.me).is_expired(s.now) {
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

/// Every lock we believe we hold, as the database shows it now: a lost one is told at
/// once. Returns the lost items whose detail is open (to be re-read).
fn check_locks(s: &mut State, checks: Vec<LockCheck>) -> Vec<i64> {
    let mut reopen = Vec::new();
    for c in checks {
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
            Err(e) => set_error(s, on_screen(&e)),
        }
    }
    reopen
}

/// A filter the store refused (`queue:nosuch`): the view goes back to the filter its
/// rows answer to, so the header never names a filter over rows it did not select.
fn refused_filter(s: &mut State, snap: &Snapshot) {
    let (Some(e), Some(f)) = (&snap.error, &snap.filter) else {
        return;
    };
    let refused = matches!(
        e,
        StoreError::UnknownQueue { .. } | StoreError::UnknownUser { .. } | StoreError::Invalid(_)
    );
    if refused && s.filter == *f {
        s.filter = s.panes.queue.filter.clone();
    }
    if refused && s.locks_filter == *f {
        s.locks_filter = s.panes.locks.filter.clone();
    }
}

/// The role, once the store told it.
fn learnt_role(s: &mut State, role: Option<Role>) {
    if let Some(role) = role {
        s.role = role;
        s.role_known = true;
    }
}

/// The figures page's figures and corrections, kept when they are of the period shown.
fn figures_loaded(
    s: &mut State,
    figures: Option<(crate::domain::figures::PeriodKind, crate::store::Report)>,
    corrections: Option<(crate::domain::figures::PeriodKind, crate::app::Corrections)>,
) {
    if let Some((k, r)) = figures
        && s.figures_period == Some(k)
    {
        s.figures = Some((k, r));
    }
    if let Some((k, c)) = corrections
        && s.figures_period == Some(k)
    {
        s.corrections = Some((k, c));
    }
}

pub(super) fn refreshed(s: &mut State, snap: Snapshot) -> Vec<Effect> {
    refused_filter(s, &snap);
    learnt_role(s, snap.role);
    match &snap.error {
        Some(StoreError::Connection(m)) => {
            // Nothing on screen is thrown away (typing, drafts, dialogs); the next tick tries
            // again, and the first good refresh re-reads everything.
            s.offline = true;
            s.marker = None;
            set_error(s, format!("reconnecting… {m}"));
        }
        Some(e) => set_error(s, on_screen(e)),
        None if s.offline => {
            s.offline = false;
            set_info(s, "Reconnected".into());
        }
        None => {}
    }
    if snap.error.is_none() {
        s.read_only = snap.read_only.clone();
    }
    if snap.marker.is_some() {
        s.marker = snap.marker;
    }
    if let Some((scope, n)) = snap.takeable
        && let Some(line) = s.alerting.counted(n, scope.as_deref(), s.now)
    {
        set_info(s, line);
    }
    for q in snap.queues {
        s.queues.insert(q.name.clone(), q);
    }
    super::form::fields_loaded(s, snap.fields);
    figures_loaded(s, snap.figures, snap.corrections);
    if let Some(texts) = snap.texts {
        s.texts = texts;
    }
    if let Some(slas) = snap.slas {
        s.slas = slas.into_iter().map(|x| (x.queue.clone(), x)).collect();
    }
    if snap.stats.is_some() {
        s.sla_watch = snap.sla_watch;
        s.stats = snap.stats;
        let n = s.stats.as_ref().map_or(0, |st| st.by_queue.len());
        s.stats_selected = s.stats_selected.min(n.saturating_sub(1));
    }
    let mut moved = false;
    if let Some(view) = snap.view
        && snap.error.is_none()
    {
        let rows_fit = layout::list_rows(s, view);
        if let Some(p) = s.pane_mut(view) {
            p.filter = snap.filter.unwrap_or_default();
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
    let reopen = check_locks(s, snap.checks);
    if let Some(own) = snap.own
        && snap.error.is_none()
    {
        super::assign::track_own(s, own, &snap.given);
    }
    super::park::read(s, snap.parked, snap.error.is_none());
    // The detail of a lost item is re-read so its history shows what happened.
    let mut fx: Vec<Effect> = reopen.into_iter().map(Effect::Open).collect();
    if moved {
        fx.push(refresh(s));
    }
    fx
}

/// Tells the user at once that a lock is gone; keeps whatever they typed: unsaved notes,
/// and a result or reason typed in the dialog that would have finished it.
fn lose(s: &mut State, held: &Held, history: &[Event]) {
    let id = held.id;
    let message = explain(&s.me, held, history);
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
    super::form::lock_lost(s, id);
    if let Some(d) = s.dialog.take_if(|d| finishing(&d.pending) == Some(id)) {
        let text = d.value(0);
        if let (false, Some(label)) = (text.is_empty(), label_of(&d.pending)) {
            keep(s, id, label, &text);
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
    let what = match (s.drafts.contains_key(&id), s.kept.contains_key(&id)) {
        (true, true) => Some("Your unsaved notes and what you typed in the dialog are kept"),
        (true, false) => Some("Your unsaved notes are kept"),
        (false, true) => Some("What you typed in the dialog is kept"),
        (false, false) => None,
    };
    s.notice = Some(match what.filter(|_| s.unsent(id).is_some()) {
        Some(what) => Dialog::new(
            "Lock lost",
            format!("{message}.\n{what}. Add them to #{id} as a comment?"),
            Pending::Comment { id },
        ),
        None => Dialog::new("Lock lost", format!("{message}."), Pending::Dismiss),
    });
    set_error(s, message);
    rebuild_detail(s);
}

/// The item a dialog would finish (complete, complete-and-next, fail).
fn finishing(p: &Pending) -> Option<i64> {
    match p {
        Pending::Complete { id, .. }
        | Pending::CompleteNext { id, .. }
        | Pending::CompleteAnyway { id, .. }
        | Pending::Fail { id, .. }
        | Pending::Release { id, .. }
        | Pending::Skip { id, .. }
        | Pending::Park { id, .. }
        | Pending::NotDone { id, .. } => Some(*id),
        _ => None,
    }
}

/// What a finishing dialog's text is.
fn label_of(p: &Pending) -> Option<&'static str> {
    match p {
        Pending::Complete { .. }
        | Pending::CompleteNext { .. }
        | Pending::CompleteAnyway { .. } => Some("Result"),
        Pending::Fail { .. } => Some("Reason for failing"),
        Pending::Release { .. } => Some("Reason for releasing"),
        Pending::Skip { .. } => Some("Reason for skipping"),
        Pending::NotDone { .. } => Some("Reason a line is not done"),
        _ => None,
    }
}

/// The text a finish carried, with what it was.
fn typed(what: &Finish) -> Option<(&'static str, String)> {
    if let Finish::Park { reason, .. } = what {
        return Some(("Reason for parking", reason.clone())).filter(|(_, t)| !t.trim().is_empty());
    }
    match what {
        Finish::Complete(r)
        | Finish::CompleteNext(r, _)
        | Finish::CompleteAnyway { result: r, .. } => Some(("Result", r)),
        Finish::Fail(r) => Some(("Reason for failing", r)),
        Finish::Release(r) => Some(("Reason for releasing", r)),
        Finish::Skip(_, r) => Some(("Reason for skipping", r)),
        Finish::Reject(r) => Some(("Reason for rejecting", r)),
        Finish::Park { .. } | Finish::Accept(_) => None,
    }
    .and_then(|(label, r)| Some((label, r.text.clone()?)))
    .filter(|(_, t)| !t.trim().is_empty())
}

/// Keeps text typed for item `id` that could not be used, to offer as a comment.
pub(super) fn keep(s: &mut State, id: i64, label: &str, text: &str) {
    let line = format!("{label}: {text}");
    let kept = s.kept.entry(id).or_default();
    if !kept.contains(&line) {
        if !kept.is_empty() {
            kept.push('\n');
        }
        kept.push_str(&line);
    }
}

/// Complete-and-next completed `after` and found nothing to take.
pub(super) fn nothing_next(s: &mut State, after: i64, why: &StoreError) -> Vec<Effect> {
    let why = why.to_string();
    let why = why.strip_prefix("nothing to claim: ").unwrap_or(&why);
    set_info(s, format!("Completed #{after} · queue empty: {why}"));
    vec![]
}
