//! `app::update` for the working day: told once when work arrives (never on one's own
//! change, rate-limited, the setting honoured, the title following the count), and `C`
//! (complete and take the next in one step). No terminal, no database, a fixed clock.

use caseload::app::{
    Alerting, Effect, Finish, Held, Msg, Pending, Signal, Snapshot, State, update,
};
use caseload::domain::{Event, EventKind, Item, QueueSettings};
use caseload::store::{StoreError, TakeNext};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::support::tui::T0;
const SEC: i64 = 1000;

/// The shared fixture, held since T0 and created a minute before it.
fn item(id: i64, holder: Option<&str>, token: i64) -> Item {
    Item {
        created_at: T0 - 60 * SEC,
        ..crate::support::tui::item(id, holder, T0, token)
    }
}

fn state(alerting: Alerting) -> State {
    let mut s = State::new("alice", T0, 100, 30, true);
    s.queues.insert("q".into(), QueueSettings::new("q"));
    s.alerting = alerting;
    s
}

fn key(c: char, now: i64) -> Msg {
    Msg::Key {
        key: KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
        now,
    }
}

fn ctrl(c: char, now: i64) -> Msg {
    Msg::Key {
        key: KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL),
        now,
    }
}

fn enter(now: i64) -> Msg {
    Msg::Key {
        key: KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
        now,
    }
}

/// A refresh answering that `n` items could be taken in every queue, at `now`.
fn counted(s: &mut State, n: u64, now: i64) -> Vec<Signal> {
    update(s, Msg::Tick { now });
    update(
        s,
        Msg::Refreshed(Box::new(Snapshot {
            takeable: Some((None, n)),
            ..Snapshot::default()
        })),
    );
    s.alerting.drain()
}

fn status(s: &State) -> String {
    s.status
        .as_ref()
        .map(|st| st.text.clone())
        .unwrap_or_default()
}

#[test]
fn work_arriving_in_an_empty_queue_is_told_once() {
    let mut s = state(Alerting::default());
    // The first count is not news, whatever it is; the title follows it.
    assert_eq!(
        counted(&mut s, 0, T0),
        [Signal::Title("caseload · 0 open".into())]
    );
    assert_eq!(counted(&mut s, 0, T0 + SEC), []);
    assert_eq!(status(&s), "");
    let signals = counted(&mut s, 2, T0 + 2 * SEC);
    assert_eq!(
        signals,
        [Signal::Title("caseload · 2 open".into()), Signal::Bell]
    );
    assert_eq!(
        status(&s),
        "New work: 2 items to take in your queues (n takes the next)"
    );
    // More work while some is there already is not a new alert; the title still moves.
    assert_eq!(
        counted(&mut s, 3, T0 + 3 * SEC),
        [Signal::Title("caseload · 3 open".into())]
    );
    assert_eq!(counted(&mut s, 3, T0 + 4 * SEC), [], "not on every refresh");
}

#[test]
fn alerts_are_rate_limited_to_one_per_30_seconds() {
    let mut s = state(Alerting::default());
    counted(&mut s, 0, T0);
    assert!(counted(&mut s, 1, T0 + SEC).contains(&Signal::Bell));
    counted(&mut s, 0, T0 + 2 * SEC);
    let again = counted(&mut s, 1, T0 + 10 * SEC);
    assert!(!again.contains(&Signal::Bell), "within 30 s: no bell");
    assert!(
        status(&s).starts_with("New work"),
        "the status line still says it"
    );
    counted(&mut s, 0, T0 + 20 * SEC);
    assert!(counted(&mut s, 1, T0 + 32 * SEC).contains(&Signal::Bell));
}

#[test]
fn the_users_own_change_is_not_news() {
    let mut s = state(Alerting::default());
    let it = item(42, Some("alice"), 3);
    s.held.insert(42, Held::of(&it));
    counted(&mut s, 0, T0);
    // Alice releases #42: the queue goes from nothing to one item, by her own hand.
    update(
        &mut s,
        Msg::Finished {
            id: 42,
            what: Finish::Release(Default::default()),
            result: Ok(()),
        },
    );
    let signals = counted(&mut s, 1, T0 + SEC);
    assert!(!signals.contains(&Signal::Bell), "{signals:?}");
    assert_eq!(status(&s), "Released #42 — u undo (30 s)");
    // Someone else's release after that is news again.
    counted(&mut s, 0, T0 + 2 * SEC);
    assert!(counted(&mut s, 1, T0 + 3 * SEC).contains(&Signal::Bell));
}

#[test]
fn the_setting_decides_bell_desktop_both_or_only_the_status_line() {
    let desktop = |a: &[Signal]| a.iter().any(|s| matches!(s, Signal::Desktop { .. }));
    for (bell, desk) in [(true, false), (false, true), (true, true), (false, false)] {
        let mut s = state(Alerting::with(bell, desk));
        counted(&mut s, 0, T0);
        let signals = counted(&mut s, 1, T0 + SEC);
        assert_eq!(signals.contains(&Signal::Bell), bell, "{signals:?}");
        assert_eq!(desktop(&signals), desk, "{signals:?}");
        assert_eq!(
            status(&s),
            "New work: 1 item to take in your queues (n takes the next)"
        );
    }
}

#[test]
fn another_queue_filter_is_not_news() {
    let mut s = state(Alerting::default());
    update(
        &mut s,
        Msg::Refreshed(Box::new(Snapshot {
            takeable: Some((None, 0)),
            ..Snapshot::default()
        })),
    );
    // The user filters to a queue with work in it: a new scope, not an arrival.
    update(
        &mut s,
        Msg::Refreshed(Box::new(Snapshot {
            takeable: Some((Some("helpdesk".into()), 4)),
            ..Snapshot::default()
        })),
    );
    let signals = s.alerting.drain();
    assert!(!signals.contains(&Signal::Bell), "{signals:?}");
}

/// Alice holds #42 (token 3) and has it open.
fn holding() -> State {
    let mut s = state(Alerting::default());
    let it = item(42, Some("alice"), 3);
    s.held.insert(42, Held::of(&it));
    update(
        &mut s,
        Msg::Opened {
            taken: true,
            result: Ok((
                it,
                vec![Event {
                    id: 0,
                    item_id: 42,
                    at: T0,
                    actor: "alice".into(),
                    os_user: "alice".into(),
                    kind: EventKind::Locked,
                    detail: serde_json::json!({}),
                }],
            )),
        },
    );
    s
}

#[test]
fn shift_c_completes_and_takes_the_next_in_one_effect() {
    let mut s = holding();
    s.skipped = vec![7];
    update(&mut s, key('C', T0));
    let d = s.dialog.as_ref().expect("a confirmation");
    assert_eq!(d.title, "Complete #42 and take the next?");
    assert!(matches!(
        d.pending,
        Pending::CompleteNext { id: 42, token: 3 }
    ));
    for c in "ok".chars() {
        update(&mut s, key(c, T0));
    }
    let fx = update(&mut s, enter(T0));
    assert_eq!(
        fx,
        vec![Effect::Finish {
            id: 42,
            token: 3,
            what: Finish::CompleteNext(
                caseload::domain::texts::Saying::of("ok", None),
                TakeNext {
                    queue: None,
                    skip: vec![7],
                }
            ),
            notes: None,
        }]
    );
    // The answer: completed, then the next item opens.
    update(
        &mut s,
        Msg::Finished {
            id: 42,
            what: Finish::CompleteNext(Default::default(), TakeNext::default()),
            result: Ok(()),
        },
    );
    assert!(!s.held.contains_key(&42));
    let next = item(43, Some("alice"), 1);
    update(
        &mut s,
        Msg::Opened {
            taken: true,
            result: Ok((next, vec![])),
        },
    );
    assert_eq!(s.detail.as_ref().unwrap().item.id, 43);
    assert!(s.held.contains_key(&43));
}

#[test]
fn ctrl_n_in_the_complete_dialog_also_takes_the_next() {
    let mut s = holding();
    update(&mut s, key('c', T0));
    let fx = update(&mut s, ctrl('n', T0));
    assert!(
        matches!(
            &fx[..],
            [Effect::Finish {
                id: 42,
                what: Finish::CompleteNext(r, _),
                ..
            }] if r.text.is_none()
        ),
        "{fx:?}"
    );
    assert!(s.dialog.is_none());
    // Ctrl-N means nothing in another dialog (fail needs its reason).
    let mut s = holding();
    update(&mut s, key('f', T0));
    assert!(update(&mut s, ctrl('n', T0)).is_empty());
    assert!(s.dialog.is_some());
}

#[test]
fn an_empty_queue_after_complete_and_next_says_so_and_keeps_nothing_open() {
    let mut s = holding();
    update(&mut s, key('C', T0));
    update(&mut s, enter(T0));
    update(
        &mut s,
        Msg::Finished {
            id: 42,
            what: Finish::CompleteNext(Default::default(), TakeNext::default()),
            result: Ok(()),
        },
    );
    update(
        &mut s,
        Msg::NothingNext {
            after: 42,
            why: StoreError::NothingToClaim("no free items in any open queue".into()),
        },
    );
    let st = s.status.as_ref().unwrap();
    assert!(!st.error);
    assert_eq!(
        st.text,
        "Completed #42 · queue empty: no free items in any open queue"
    );
    assert!(s.detail.is_none());
    assert!(s.held.is_empty());
    // A refused complete (lock lost) says why and takes nothing.
    let mut s = holding();
    update(&mut s, key('C', T0));
    update(&mut s, enter(T0));
    update(
        &mut s,
        Msg::Finished {
            id: 42,
            what: Finish::CompleteNext(Default::default(), TakeNext::default()),
            result: Err(StoreError::NotFound(42)),
        },
    );
    assert!(s.status.as_ref().unwrap().error);
}

/// A lock running out writes nothing to the database, so no change marker announces it:
/// while nothing can be taken, the count is read again every few seconds, and the
/// expired lock is told like any other arrival.
#[test]
fn a_lock_running_out_is_told_while_nothing_else_can_be_taken() {
    let mut s = state(Alerting::default());
    assert_eq!(
        counted(&mut s, 0, T0),
        [caseload::app::Signal::Title("caseload · 0 open".into())]
    );
    let fx = update(&mut s, Msg::Tick { now: T0 + 2 * SEC });
    assert!(
        fx.iter().all(|e| matches!(e, Effect::CheckMarker)),
        "within the interval only the cheap change check: {fx:?}"
    );
    let fx = update(&mut s, Msg::Tick { now: T0 + 6 * SEC });
    assert!(
        fx.iter().any(|e| matches!(e, Effect::Refresh(_))),
        "nothing to take for 5 s: counted again: {fx:?}"
    );
    // That count finds the expired lock: told, as a new item would be.
    update(
        &mut s,
        Msg::Refreshed(Box::new(Snapshot {
            takeable: Some((None, 1)),
            ..Snapshot::default()
        })),
    );
    assert!(s.alerting.drain().contains(&Signal::Bell));
    // With something to take, ticks are back to the change check alone.
    let fx = update(&mut s, Msg::Tick { now: T0 + 20 * SEC });
    assert!(
        fx.iter().all(|e| matches!(e, Effect::CheckMarker)),
        "{fx:?}"
    );
}
