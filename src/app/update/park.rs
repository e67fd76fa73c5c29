//! Parking in the TUI (see `store::ops::park`): `P` on an item you hold asks until when
//! and why; Mine lists your parked items on top (woken ones first); when one wakes you
//! are told as for new work (status line, bell, desktop notice) and `n` offers it first.

use super::set_info;
use crate::app::dialog::{Dialog, FieldSpec, Pending};
use crate::app::notify::Signal;
use crate::app::{Effect, Finish, State};
use crate::domain::park::{Park, ParkStatus, when_text};
use crate::domain::when::{Span, TIME_WORDS, parse_time};
use crate::domain::{Item, sanitize};

/// `P`: the park dialog for the item you hold.
pub(super) fn ask(s: &mut State, id: i64, token: i64, title: String) -> Vec<Effect> {
    s.dialog = Some(
        Dialog::new(
            format!("Park #{id}?"),
            format!(
                "{title}\nThe lock is released; nobody else may take it until then, and at \
                 that time it wakes for you."
            ),
            Pending::Park { id, token },
        )
        .field(
            FieldSpec::required("A wake time", "Until (14:00, 2h, tomorrow 09:00)"),
            "",
        )
        .field(
            FieldSpec::reason("Reason (required: who to call back, what you wait for)"),
            "",
        ),
    );
    vec![]
}

/// Enter in the park dialog: the wake time read as every time field reads one; a time
/// that is not one, or has passed, keeps the dialog open and says so.
pub(super) fn confirmed(s: &mut State, d: Dialog, id: i64, token: i64) -> Vec<Effect> {
    let until = match parse_time(&d.value(0), s.now, s.zone, Span::Ahead) {
        Ok(t) if t > s.now => t,
        Ok(t) => return again(s, d, format!("{} has passed", when_text(t, s.now))),
        Err(_) => return again(s, d, format!("Not a time: use {TIME_WORDS}")),
    };
    vec![Effect::Finish {
        id,
        token,
        what: Finish::Park {
            until,
            reason: d.value(1),
        },
        notes: s.drafts.get(&id).cloned(),
    }]
}

fn again(s: &mut State, d: Dialog, error: String) -> Vec<Effect> {
    s.dialog = Some(Dialog {
        error: Some(error),
        focus: 0,
        ..d
    });
    vec![]
}

/// A refresh read the user's parked items (`ok`: without an error): kept for Mine, woken
/// ones told once.
pub(super) fn read(s: &mut State, parked: Option<Vec<Item>>, ok: bool) {
    let Some(parked) = parked.filter(|_| ok) else {
        return;
    };
    s.parked = parked;
    s.woke.retain(|id| s.parked.iter().any(|i| i.id == *id));
    tell_woken(s);
}

/// Tells the user once about each of their parked items whose time has come.
pub(super) fn tell_woken(s: &mut State) {
    let now = s.now;
    let woken: Vec<(i64, String)> = s
        .parked
        .iter()
        .filter_map(|i| Park::of(i, s.queue(&i.queue).park_grace_ms()).map(|p| (i, p)))
        .filter(|(i, p)| p.status(now) != ParkStatus::Sleeping && !s.woke.contains(&i.id))
        .map(|(i, p)| (i.id, sanitize::line(&p.reason).into_owned()))
        .collect();
    for (id, reason) in woken {
        s.woke.insert(id);
        set_info(
            s,
            format!("#{id} woke for you: {reason} (n takes it; it is first in Mine)"),
        );
        if s.alerting.bell {
            s.alerting.out.push(Signal::Bell);
        }
        if s.alerting.desktop {
            s.alerting.out.push(Signal::Desktop {
                title: "caseload".into(),
                body: format!("#{id} woke for you: {reason}"),
            });
        }
    }
}

/// `u`: undoes the user's last change while its window lasts (not in Locks, where `u` is
/// the supervisor's unlock, as it is when there is nothing to undo).
pub(super) fn undo(s: &mut State) -> Vec<Effect> {
    let live = s
        .undo
        .as_ref()
        .filter(|u| s.now - u.at <= u.window_ms)
        .map(|u| u.id);
    match live {
        Some(id) if s.view != crate::app::View::Locks => {
            s.undo = None;
            vec![Effect::Undo(id)]
        }
        _ => super::supervise::act(s, crate::app::keymap::Action::Unlock),
    }
}
