//! Reviewing in the TUI (issue 29 §1): `n` in the Review view takes the next item the user
//! may review (never their own work: the store's take refuses it), Enter the selected one;
//! on an item taken for review `A` accepts it (an optional comment) and `R` rejects it back
//! to its maker (a reason, with the queue's ready-made reject texts). The holder's other
//! finishes (complete, fail, skip, park) are not a reviewer's: they say what is.

use super::{refused, set_error};
use crate::app::keymap::Action;
use crate::app::{Dialog, Effect, FieldSpec, Finish, Held, Pending, State, View};
use crate::domain::texts::Purpose;
use crate::domain::{ItemState, sanitize};

/// The item the user took for review that the review keys act on: the open detail's, else
/// the Review view's selected row; with its title.
pub(super) fn target(s: &State) -> Option<(Held, String)> {
    let item = match &s.detail {
        Some(d) => &d.item,
        None if matches!(s.view, View::Review | View::Mine) => s.pane(s.view)?.selected_item()?,
        None => return None,
    };
    if item.state != ItemState::Review || !item.is_held_by(&s.me) {
        return None;
    }
    let held = s
        .held
        .get(&item.id)
        .cloned()
        .unwrap_or_else(|| Held::of(item));
    Some((held, sanitize::line(&item.title).into_owned()))
}

/// True when the review keys apply (an item under the user's review is in front of them).
pub(super) fn reviewing(s: &State) -> bool {
    target(s).is_some()
}

/// `n` in the Review view: the next item to review; Enter on a row there: that one (an
/// item the user already reviews opens as it is).
pub(super) fn take(s: &mut State, id: Option<i64>) -> Vec<Effect> {
    if refused(s) {
        return vec![];
    }
    vec![Effect::TakeReview(id)]
}

/// `A` and `R`: the accept or reject dialog.
pub(super) fn act(s: &mut State, a: Action) -> Vec<Effect> {
    let Some((h, title)) = target(s) else {
        set_error(
            s,
            "Take an item for review first (5: Review view, then n or Enter)".into(),
        );
        return vec![];
    };
    let (id, token) = (h.id, h.token);
    s.dialog = Some(match a {
        Action::Accept => Dialog::new(
            format!("Accept #{id}?"),
            title,
            Pending::Accept { id, token },
        )
        .field(FieldSpec::optional("Comment", "Comment (optional)"), "")
        .offering(&h.queue, Purpose::Comment),
        _ => Dialog::new(
            format!("Reject #{id} back to its maker?"),
            title,
            Pending::Reject { id, token },
        )
        .field(FieldSpec::reason("Reason (required)"), "")
        .offering(&h.queue, Purpose::Reject),
    });
    vec![]
}

/// The confirmed accept or reject: the finish, with the draft notes saved first.
pub(super) fn confirmed(s: &mut State, d: &Dialog) -> Vec<Effect> {
    let (id, token, what) = match d.pending {
        Pending::Accept { id, token } => {
            let comment = Some(d.value(0)).filter(|c| !c.is_empty());
            (id, token, Finish::Accept(comment))
        }
        Pending::Reject { id, token } => (id, token, Finish::Reject(d.saying(0))),
        _ => return vec![],
    };
    vec![Effect::Finish {
        id,
        token,
        what,
        notes: s.drafts.get(&id).cloned(),
    }]
}

/// A maker's finish asked of an item under review: refused with what to do instead (true).
pub(super) fn not_a_reviewers(s: &mut State, a: Action) -> bool {
    let makers = matches!(
        a,
        Action::Complete | Action::CompleteNext | Action::Fail | Action::Skip | Action::Park
    );
    let Some((h, _)) = target(s).filter(|_| makers) else {
        return false;
    };
    set_error(
        s,
        format!(
            "#{} waits for your review: A accepts it, R rejects it to its maker, r releases it",
            h.id
        ),
    );
    true
}
