//! Parking and undo in `app::update` with a fixed clock (issue 28 §1, §3): `P` asks until
//! when and why and sends the park; a parked item that wakes is told once (status line
//! and bell) and listed in Mine; a finish offers `u` for 30 s, then `u` is what it was.

use caseload::app::Signal;
use caseload::app::{Effect, Finish, Msg, Snapshot, State, View, update};
use caseload::domain::texts::Saying;
use caseload::domain::{Item, ItemState};
use ratatui::crossterm::event::KeyCode;

use crate::support::MIN;
use crate::support::tui::{T0, item, screen};
use crate::update::{code, holding, key, state};

fn typed(s: &mut State, text: &str, now: i64) {
    for c in text.chars() {
        update(s, key(c, now));
    }
}

fn status(s: &State) -> String {
    s.status
        .as_ref()
        .map(|st| st.text.clone())
        .unwrap_or_default()
}

/// #7, parked by alice until `until` for "call back Mei".
fn parked(until: i64) -> Item {
    Item {
        state: ItemState::Parked,
        parked_by: Some("alice".into()),
        parked_until: Some(until),
        park_reason: Some("call back Mei".into()),
        ..item(7, None, T0, 2)
    }
}

fn refreshed(s: &mut State, parked: Vec<Item>) {
    update(
        s,
        Msg::Refreshed(Box::new(Snapshot {
            parked: Some(parked),
            ..Snapshot::default()
        })),
    );
}

#[test]
fn p_asks_until_when_and_why_and_sends_the_park() {
    let mut s = holding();
    assert!(update(&mut s, key('P', T0)).is_empty());
    assert!(s.dialog.as_ref().unwrap().title.contains("Park #42"));
    // Nothing typed: refused in the dialog; not a time: said, the dialog stays.
    assert!(update(&mut s, code(KeyCode::Enter, T0)).is_empty());
    assert!(s.dialog.as_ref().unwrap().error.is_some());
    typed(&mut s, "soonish", T0);
    update(&mut s, code(KeyCode::Tab, T0));
    typed(&mut s, "call back Mei", T0);
    assert!(update(&mut s, code(KeyCode::Enter, T0)).is_empty());
    let error = s.dialog.as_ref().unwrap().error.clone().unwrap();
    assert!(error.contains("Not a time"), "{error}");
    // A time: the park, with the reason.
    let d = s.dialog.as_mut().unwrap();
    d.inputs[0].buf = caseload::app::TextInput::line("2h");
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert_eq!(
        fx,
        vec![Effect::Finish {
            id: 42,
            token: 3,
            what: Finish::Park {
                until: T0 + 120 * MIN,
                reason: "call back Mei".into()
            },
            notes: None,
        }]
    );
    update(
        &mut s,
        Msg::Finished {
            id: 42,
            what: Finish::Park {
                until: T0 + 120 * MIN,
                reason: "call back Mei".into(),
            },
            result: Ok(()),
        },
    );
    assert_eq!(status(&s), "Parked #42 — u undo (30 s)");
    assert!(!s.held.contains_key(&42));
}

#[test]
fn a_parked_item_wakes_once_with_the_bell_and_shows_in_mine() {
    let mut s = state();
    s.view = View::Mine;
    refreshed(&mut s, vec![parked(T0 + 10 * MIN)]);
    let mine = screen(&s);
    assert!(mine.contains("Parked (1"), "{mine}");
    assert!(
        mine.contains("#7  until ") && mine.contains("call back Mei"),
        "{mine}"
    );
    s.alerting.drain();
    update(&mut s, Msg::Tick { now: T0 + 9 * MIN });
    assert!(!status(&s).contains("woke"), "{}", status(&s));
    assert!(s.alerting.drain().is_empty());
    update(&mut s, Msg::Tick { now: T0 + 10 * MIN });
    assert_eq!(
        status(&s),
        "#7 woke for you: call back Mei (n takes it; it is first in Mine)"
    );
    assert!(s.alerting.drain().contains(&Signal::Bell));
    let mine = screen(&s);
    assert!(mine.contains("#7  WOKE "), "{mine}");
    // Told once, however often the screen refreshes.
    update(&mut s, Msg::Tick { now: T0 + 11 * MIN });
    refreshed(&mut s, vec![parked(T0 + 10 * MIN)]);
    assert!(!s.alerting.drain().contains(&Signal::Bell));
    // Taken (or returned): gone from Mine.
    refreshed(&mut s, vec![]);
    assert!(!screen(&s).contains("Parked ("));
}

#[test]
fn u_undoes_a_finish_for_thirty_seconds() {
    let mut s = holding();
    update(
        &mut s,
        Msg::Finished {
            id: 42,
            what: Finish::Complete(Saying::default()),
            result: Ok(()),
        },
    );
    assert_eq!(status(&s), "Completed #42 — u undo (30 s)");
    assert_eq!(
        update(&mut s, key('u', T0 + 20_000)),
        vec![Effect::Undo(42)]
    );
    // Once: a second u has nothing to undo.
    let fx = update(&mut s, key('u', T0 + 21_000));
    assert!(!fx.contains(&Effect::Undo(42)), "{fx:?}");

    // After the window, u is what it was (here: staff, so "supervisor only").
    let mut s = holding();
    update(
        &mut s,
        Msg::Finished {
            id: 42,
            what: Finish::Release(Saying::default()),
            result: Ok(()),
        },
    );
    let fx = update(&mut s, key('u', T0 + 31_000));
    assert!(!fx.contains(&Effect::Undo(42)), "{fx:?}");
}
