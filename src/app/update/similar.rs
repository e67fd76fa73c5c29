//! The detail's "Possibly the same" box (issue 27): the open item's candidates, read by
//! the store worker after the item opened (the screen never waits for them); `D` moves
//! into the box, Space/v looks at a candidate read-only, `M` merges the open item into it
//! (confirmed with Enter), `N` says it is not the same (never offered again).

use ratatui::crossterm::event::KeyEvent;

use super::{on_screen, refresh, set_error, set_info};
use crate::app::detail::rebuild_detail;
use crate::app::keymap::{self, Action, Context};
use crate::app::layout;
use crate::app::{Dialog, Effect, FieldSpec, LineKind, Pending, SimilarBox, State};
use crate::domain::duplicates::Candidate;
use crate::domain::sanitize;
use crate::store::StoreError;

/// The read of the candidates of the item just opened (the box of another item goes).
pub(super) fn request(s: &mut State, id: i64) -> Effect {
    if s.similar.as_ref().is_some_and(|b| b.item_id != id) {
        s.similar = None;
    }
    Effect::Similar(id)
}

/// The candidates arrived: shown when their item is still open.
pub(super) fn loaded(s: &mut State, id: i64, result: Result<Vec<Candidate>, StoreError>) {
    if s.detail.as_ref().is_none_or(|d| d.item.id != id) {
        return;
    }
    let Ok(candidates) = result else {
        // Only a help: a failed read leaves the pane as it is.
        return;
    };
    let focus = s
        .similar
        .as_ref()
        .filter(|b| b.item_id == id)
        .and_then(|b| b.focus)
        .map(|f| f.min(candidates.len().saturating_sub(1)))
        .filter(|_| !candidates.is_empty());
    s.similar = Some(SimilarBox {
        item_id: id,
        candidates,
        focus,
    });
    rebuild_detail(s);
}

/// The open item's box, when it has candidates.
fn open_box(s: &State) -> Option<&SimilarBox> {
    let id = s.detail.as_ref()?.item.id;
    s.similar
        .as_ref()
        .filter(|b| b.item_id == id && !b.candidates.is_empty())
}

/// A key on the detail pane: `D` moves into the box (when there is one); while it has
/// the focus, its keys act. `None` lets the key through.
pub(super) fn key(s: &mut State, key: &KeyEvent) -> Option<Vec<Effect>> {
    let b = open_box(s)?;
    let n = b.candidates.len();
    let action = keymap::lookup(Context::Similar, key)?;
    let Some(at) = b.focus else {
        return (action == Action::FocusSimilar).then(|| focus(s, Some(0)));
    };
    let selected = b.candidates[at].clone();
    Some(match action {
        Action::FocusSimilar | Action::Back => focus(s, None),
        Action::Down => focus(s, Some((at + 1).min(n - 1))),
        Action::Up => focus(s, Some(at.saturating_sub(1))),
        Action::LookAtCandidate => vec![Effect::Open(selected.id)],
        Action::MergeInto => merge_dialog(s, &selected),
        Action::NotSame => {
            let id = s.detail.as_ref().map_or(0, |d| d.item.id);
            vec![Effect::NotSame {
                id,
                other: selected.id,
            }]
        }
        _ => return None,
    })
}

/// Puts the box's selection on `at` (none: out of the box) and scrolls it into view.
fn focus(s: &mut State, at: Option<usize>) -> Vec<Effect> {
    if let Some(b) = s.similar.as_mut() {
        b.focus = at;
    }
    let rows = layout::detail_rows(s);
    if let (Some(i), Some(d)) = (at, s.detail.as_mut())
        && let Some(line) = d
            .lines
            .iter()
            .position(|l| l.kind == LineKind::Candidate(i))
    {
        if line < d.scroll {
            d.scroll = line.saturating_sub(1);
        } else if line >= d.scroll + rows {
            d.scroll = line + 1 - rows;
        }
    }
    vec![]
}

/// `M`: asks to merge the open item into `into` (Enter merges, with an optional reason).
fn merge_dialog(s: &mut State, into: &Candidate) -> Vec<Effect> {
    let Some(item) = s.detail.as_ref().map(|d| d.item.clone()) else {
        return vec![];
    };
    let token = s.held.get(&item.id).map(|h| h.token);
    let message = format!(
        "#{} is cancelled as a duplicate of #{} {} ({}); its lock is released and #{} \
         gets a line pointing to it.",
        item.id,
        into.id,
        sanitize::line(&into.title),
        into.why(),
        into.id
    );
    s.dialog = Some(
        Dialog::new(
            format!("Merge #{} into #{}?", item.id, into.id),
            message,
            Pending::Merge {
                id: item.id,
                into: into.id,
                token,
            },
        )
        .field(FieldSpec::optional("A reason", "Reason (optional)"), ""),
    );
    vec![]
}

/// The merge dialog was confirmed: the merge, with the reason typed (if any).
pub(super) fn confirmed(d: &Dialog) -> Vec<Effect> {
    let Pending::Merge { id, into, token } = d.pending else {
        return vec![];
    };
    let reason = Some(d.value(0)).filter(|r| !r.is_empty());
    vec![Effect::Merge {
        id,
        into,
        token,
        reason,
    }]
}

/// The merge's answer: the item is gone from the user's work; the one it went into opens.
pub(super) fn merged(
    s: &mut State,
    id: i64,
    into: i64,
    result: Result<(), StoreError>,
) -> Vec<Effect> {
    if let Err(e) = result {
        set_error(s, on_screen(&e));
        return vec![refresh(s)];
    }
    s.held.remove(&id);
    s.similar = None;
    set_info(s, format!("Merged #{id} into #{into} as its duplicate"));
    vec![Effect::Open(into), refresh(s)]
}

/// "Not the same" was remembered: the candidate leaves the box.
pub(super) fn not_same(
    s: &mut State,
    id: i64,
    other: i64,
    result: Result<(), StoreError>,
) -> Vec<Effect> {
    if let Err(e) = result {
        set_error(s, on_screen(&e));
        return vec![];
    }
    if let Some(b) = s.similar.as_mut().filter(|b| b.item_id == id) {
        b.candidates.retain(|c| c.id != other);
        b.focus = match (b.focus, b.candidates.len()) {
            (_, 0) => None,
            (f, n) => f.map(|f| f.min(n - 1)),
        };
    }
    rebuild_detail(s);
    set_info(
        s,
        format!("#{id} and #{other} are not the same: not offered again"),
    );
    vec![]
}
