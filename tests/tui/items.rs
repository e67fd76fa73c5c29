//! `app::update` for issue 15 parts 1–3: every own lock tracked however it was taken,
//! "sup gave you #84" at once, assigned items opened by taking them, the read-only look
//! (Space, `v`, `:`/`#`) and `t` there, the comment thread (`m`), name completion and
//! assignment in the reassign dialog, and `E`. No terminal, no database.

use caseload::app::{Effect, Held, Msg, Pending, Snapshot, State, SupervisorOp, View, update};
use caseload::domain::fields::{Col, Value};
use caseload::domain::lock::ASSIGNED;
use caseload::domain::{Comment, Event, EventKind, Item, ItemEdit, ItemState, QueueSettings, Role};
use caseload::store::StoreError;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::support::MIN;
use crate::support::tui::{T0, item};

fn state(me: &str) -> State {
    let mut s = State::new(me, T0, 100, 30, true);
    s.queues.insert(
        "q".into(),
        QueueSettings {
            lock_seconds: 600,
            warn_seconds: 60,
            ..QueueSettings::new("q")
        },
    );
    s
}

fn key(c: char) -> Msg {
    Msg::Key {
        key: KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
        now: T0,
    }
}

fn code(c: KeyCode) -> Msg {
    Msg::Key {
        key: KeyEvent::new(c, KeyModifiers::NONE),
        now: T0,
    }
}

fn typed(s: &mut State, text: &str) {
    for c in text.chars() {
        update(s, key(c));
    }
}

/// The Queue view showing `rows`, the first selected.
fn listing(s: &mut State, rows: Vec<Item>) {
    let total = rows.len() as u64;
    update(
        s,
        Msg::Refreshed(Box::new(Snapshot {
            view: Some(View::Queue),
            rows,
            total,
            ..Snapshot::default()
        })),
    );
}

fn given(kind: EventKind, id: i64, actor: &str, reason: &str) -> Event {
    Event {
        id: 9,
        item_id: id,
        at: T0,
        actor: actor.into(),
        os_user: actor.into(),
        kind,
        detail: serde_json::json!({"from": null, "to": "bob", "reason": reason,
                                   "assigned": kind == EventKind::Reassigned}),
    }
}

fn opened(s: &mut State, it: Item) {
    update(
        s,
        Msg::Opened {
            taken: false,
            result: Ok((it, vec![])),
        },
    );
}

#[test]
fn a_lock_given_by_a_supervisor_is_tracked_and_told_at_once() {
    let mut s = state("bob");
    let assigned = item(84, Some("bob"), ASSIGNED, 2);
    let elsewhere = item(85, Some("bob"), T0 - MIN, 1);
    update(
        &mut s,
        Msg::Refreshed(Box::new(Snapshot {
            own: Some(vec![assigned.clone(), elsewhere.clone()]),
            given: vec![
                given(EventKind::Reassigned, 84, "sup", "alice is off sick"),
                given(EventKind::Locked, 85, "bob", ""),
            ],
            ..Snapshot::default()
        })),
    );
    assert_eq!(
        s.held.keys().copied().collect::<Vec<_>>(),
        [84, 85],
        "both locks are tracked: the header's count is Mine's"
    );
    let d = s.notice.as_ref().expect("told at once");
    assert!(
        d.message
            .contains("sup gave you #84 “Item 84”: alice is off sick (assigned"),
        "{}",
        d.message
    );
    assert!(d.message.contains("#85"), "{}", d.message);
    assert!(s.lock_alerts().is_empty(), "an assignment never warns");
    // The next refresh tells nothing again.
    update(&mut s, code(KeyCode::Enter));
    update(
        &mut s,
        Msg::Refreshed(Box::new(Snapshot {
            own: Some(vec![assigned, elsewhere]),
            ..Snapshot::default()
        })),
    );
    assert!(s.notice.is_none());
}

#[test]
fn a_lock_taken_elsewhere_is_tracked_with_its_countdown_and_loss() {
    let mut s = state("alice");
    let it = item(7, Some("alice"), T0 - 9 * MIN - 30_000, 4);
    update(
        &mut s,
        Msg::Refreshed(Box::new(Snapshot {
            own: Some(vec![it.clone()]),
            given: vec![given(EventKind::Locked, 7, "alice", "")],
            ..Snapshot::default()
        })),
    );
    assert!(s.dialog.is_none(), "your own take elsewhere needs no popup");
    assert!(s.status.as_ref().unwrap().text.contains("#7"));
    assert_eq!(s.held.get(&7).map(|h| h.token), Some(4));
    assert_eq!(s.lock_alerts().len(), 1, "warned: 30 s left of 10 min");
    // Its next refresh checks it like any other lock: a loss is noticed.
    let fx = update(&mut s, Msg::Tick { now: T0 });
    assert_eq!(fx, [Effect::CheckMarker]);
}

#[test]
fn enter_on_an_assigned_item_takes_it_to_start_its_clock() {
    let mut s = state("bob");
    let it = item(84, Some("bob"), ASSIGNED, 2);
    s.held.insert(84, Held::of(&it));
    update(&mut s, key('2'));
    update(
        &mut s,
        Msg::Refreshed(Box::new(Snapshot {
            view: Some(View::Mine),
            rows: vec![it],
            total: 1,
            ..Snapshot::default()
        })),
    );
    let fx = update(&mut s, code(KeyCode::Enter));
    assert_eq!(fx, [Effect::Take(84)]);
}

#[test]
fn space_and_v_look_without_taking_and_t_takes() {
    let mut s = state("alice");
    let free = item(1, None, 0, 0);
    let held = item(2, Some("bob"), T0, 1);
    listing(&mut s, vec![free.clone(), held.clone()]);
    assert_eq!(update(&mut s, key(' ')), [Effect::Open(1)]);
    opened(&mut s, free);
    assert!(s.held.is_empty(), "looking takes nothing");
    assert_eq!(update(&mut s, key('t')), [Effect::Take(1)]);

    let mut s = state("alice");
    listing(&mut s, vec![held.clone()]);
    assert_eq!(update(&mut s, key('v')), [Effect::Open(2)]);
    opened(&mut s, held);
    assert!(update(&mut s, key('t')).is_empty());
    let st = s.status.as_ref().unwrap();
    assert!(st.error && st.text.contains("held by bob"), "{}", st.text);
    // Holder actions are refused on an item you only look at.
    assert!(update(&mut s, key('c')).is_empty());
    assert!(s.dialog.is_none());

    let mut done = item(3, None, 0, 0);
    done.state = ItemState::Done;
    let mut s = state("alice");
    opened(&mut s, done);
    assert!(update(&mut s, key('t')).is_empty());
    assert!(s.status.as_ref().unwrap().text.contains("is done"));
}

#[test]
fn colon_or_hash_goes_to_an_item_by_id_from_any_view() {
    for (view, start) in [('4', ':'), ('3', '#'), ('1', ':')] {
        let mut s = state("alice");
        update(&mut s, key(view));
        update(&mut s, key(start));
        typed(&mut s, "#42");
        assert_eq!(update(&mut s, code(KeyCode::Enter)), [Effect::Open(42)]);
        assert!(s.goto_prompt.is_none());
    }
    let mut s = state("alice");
    update(&mut s, key(':'));
    typed(&mut s, "abc");
    assert!(update(&mut s, code(KeyCode::Enter)).is_empty());
    assert!(
        s.status
            .as_ref()
            .unwrap()
            .text
            .contains("'abc' is not an item id")
    );
    update(&mut s, key(':'));
    typed(&mut s, "12");
    assert!(update(&mut s, code(KeyCode::Esc)).is_empty());
    assert!(s.goto_prompt.is_none(), "Esc closes the prompt");
}

#[test]
fn the_full_title_and_the_comment_thread_are_in_the_detail() {
    let mut s = state("alice");
    let mut long = item(5, None, 0, 0);
    long.title = "word ".repeat(198).trim_end().to_string();
    opened(&mut s, long);
    update(
        &mut s,
        Msg::Thread {
            id: 5,
            result: Ok(vec![Comment {
                id: 1,
                item_id: 5,
                at: T0,
                author: "bob".into(),
                os_user: "bob".into(),
                text: "called back".into(),
            }]),
        },
    );
    let d = s.detail.as_ref().unwrap();
    let text: Vec<&str> = d.lines.iter().map(|l| l.text.as_str()).collect();
    let shown: usize = text
        .iter()
        .skip_while(|l| **l != "Title")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.matches("word").count())
        .sum();
    assert_eq!(shown, 198, "every word of a 990-character title");
    let at = text
        .iter()
        .position(|l| l.starts_with("Comments (1)"))
        .unwrap();
    assert!(text[at + 1].contains("bob"));
    assert_eq!(text[at + 2], "called back");
}

#[test]
fn m_adds_a_comment_without_a_lock_and_keeps_it_on_failure() {
    let mut s = state("alice");
    listing(&mut s, vec![item(1, Some("bob"), T0, 1)]);
    update(&mut s, key('m'));
    assert!(matches!(
        s.dialog.as_ref().map(|d| &d.pending),
        Some(Pending::AddComment { id: 1 })
    ));
    typed(&mut s, "customer called");
    let fx = update(&mut s, code(KeyCode::Enter));
    assert_eq!(
        fx,
        [Effect::AddComment {
            id: 1,
            text: "customer called".into()
        }]
    );
    // The database was busy past its patience: the dialog comes back as typed.
    update(
        &mut s,
        Msg::CommentAdded {
            id: 1,
            result: Err(StoreError::Busy("busy".into())),
        },
    );
    let d = s.dialog.as_ref().expect("the dialog is back");
    assert_eq!(d.value(0), "customer called");
    let fx = update(&mut s, code(KeyCode::Enter));
    assert_eq!(fx.len(), 1);
    update(
        &mut s,
        Msg::CommentAdded {
            id: 1,
            result: Ok(()),
        },
    );
    assert_eq!(s.status.as_ref().unwrap().text, "Comment added to #1");
    // Empty comments are refused in the dialog.
    update(&mut s, key('m'));
    assert!(update(&mut s, code(KeyCode::Enter)).is_empty());
    assert!(s.dialog.as_ref().unwrap().error.is_some());
}

fn supervisor() -> State {
    let mut s = state("sup");
    s.role = Role::Supervisor;
    update(
        &mut s,
        Msg::Users(vec!["alice".into(), "albert".into(), "bob".into()]),
    );
    s
}

#[test]
fn the_reassign_dialog_completes_names_and_can_assign_instead() {
    let mut s = supervisor();
    listing(&mut s, vec![item(3, Some("carol"), T0, 5)]);
    update(&mut s, key('a'));
    typed(&mut s, "b");
    update(&mut s, code(KeyCode::Tab));
    let d = s.dialog.as_ref().unwrap();
    assert_eq!(
        (d.value(0).as_str(), d.focus),
        ("bob", 0),
        "completed in place"
    );
    update(&mut s, code(KeyCode::Tab));
    assert_eq!(
        s.dialog.as_ref().unwrap().focus,
        1,
        "a full name: Tab moves on"
    );
    update(&mut s, code(KeyCode::BackTab));
    for _ in 0..3 {
        update(&mut s, code(KeyCode::Backspace));
    }
    typed(&mut s, "a");
    update(&mut s, code(KeyCode::Tab));
    let d = s.dialog.as_ref().unwrap();
    assert_eq!(d.value(0), "al", "as far as the matches agree");
    assert_eq!(d.error.as_deref(), Some("Matches: alice, albert"));
    typed(&mut s, "i");
    update(&mut s, code(KeyCode::Tab));
    assert_eq!(s.dialog.as_ref().unwrap().value(0), "alice");
    update(&mut s, code(KeyCode::Tab));
    typed(&mut s, "carol is away");
    update(&mut s, code(KeyCode::Tab));
    for _ in 0..2 {
        update(&mut s, code(KeyCode::Backspace));
    }
    typed(&mut s, "yes");
    let fx = update(&mut s, code(KeyCode::Enter));
    assert_eq!(
        fx,
        [Effect::Supervise(SupervisorOp::Assign {
            id: 3,
            token: Some(5),
            to: "alice".into(),
            reason: "carol is away".into(),
        })]
    );
}

#[test]
fn a_on_a_free_item_assigns_it() {
    let mut s = supervisor();
    listing(&mut s, vec![item(4, None, 0, 0)]);
    update(&mut s, key('a'));
    assert!(matches!(
        s.dialog.as_ref().map(|d| &d.pending),
        Some(Pending::Assign { id: 4, token: None })
    ));
    typed(&mut s, "bob");
    update(&mut s, code(KeyCode::Tab));
    typed(&mut s, "knows them");
    let fx = update(&mut s, code(KeyCode::Enter));
    assert_eq!(
        fx,
        [Effect::Supervise(SupervisorOp::Assign {
            id: 4,
            token: None,
            to: "bob".into(),
            reason: "knows them".into(),
        })]
    );
    update(
        &mut s,
        Msg::Supervised {
            op: SupervisorOp::Assign {
                id: 4,
                token: None,
                to: "bob".into(),
                reason: "knows them".into(),
            },
            result: Ok(1),
        },
    );
    assert!(
        s.status
            .as_ref()
            .unwrap()
            .text
            .starts_with("Assigned #4 to bob")
    );
}

#[test]
fn e_edits_only_what_changed_and_checks_what_was_typed() {
    let mut staff = state("alice");
    listing(&mut staff, vec![item(6, None, 0, 0)]);
    assert!(update(&mut staff, key('E')).is_empty());
    assert!(
        staff
            .status
            .as_ref()
            .unwrap()
            .text
            .starts_with("Supervisor only")
    );

    let mut s = supervisor();
    listing(&mut s, vec![item(6, None, 0, 0)]);
    update(&mut s, key('E'));
    assert!(s.dialog.is_some());
    // The fields follow the field table: queue, priority, due.
    let labels: Vec<&str> = (s.dialog.as_ref().unwrap().inputs.iter())
        .map(|f| f.spec.name)
        .collect();
    assert_eq!(labels, ["Queue", "Priority", "Due"]);
    // Nothing changed: said so, the dialog stays.
    assert!(update(&mut s, code(KeyCode::Enter)).is_empty());
    assert!(
        s.dialog
            .as_ref()
            .unwrap()
            .error
            .as_deref()
            .unwrap()
            .starts_with("Nothing changed")
    );
    update(&mut s, code(KeyCode::Tab));
    update(&mut s, code(KeyCode::Backspace));
    typed(&mut s, "x");
    assert!(update(&mut s, code(KeyCode::Enter)).is_empty());
    assert!(
        s.dialog
            .as_ref()
            .unwrap()
            .error
            .as_deref()
            .unwrap()
            .starts_with("Priority:")
    );
    update(&mut s, code(KeyCode::Backspace));
    typed(&mut s, "5");
    update(&mut s, code(KeyCode::Tab));
    typed(&mut s, "2026-12-01T17:00:00Z");
    let fx = update(&mut s, code(KeyCode::Enter));
    assert_eq!(
        fx,
        [Effect::Supervise(SupervisorOp::Edit {
            id: 6,
            edit: ItemEdit::default()
                .with(Col::Priority, Value::Number(5))
                .with(Col::DueAt, Value::Time(Some(1_796_144_400_000))),
        })]
    );
}

/// The edit dialog reads a due time as `--due` does (`domain::when`): words, spans ahead,
/// local dates and times; anything else is said, naming the field and the forms.
#[test]
fn e_reads_the_due_time_as_the_command_line_does() {
    let due_after = |typed_due: &str| -> Result<Vec<Effect>, String> {
        let mut s = supervisor();
        listing(&mut s, vec![item(6, None, 0, 0)]);
        update(&mut s, key('E'));
        update(&mut s, code(KeyCode::Tab));
        update(&mut s, code(KeyCode::Tab));
        typed(&mut s, typed_due);
        let fx = update(&mut s, code(KeyCode::Enter));
        match s.dialog.as_ref().and_then(|d| d.error.clone()) {
            Some(e) => Err(e),
            None => Ok(fx),
        }
    };
    let edit_due = |due: i64| {
        vec![Effect::Supervise(SupervisorOp::Edit {
            id: 6,
            edit: ItemEdit::default().with(Col::DueAt, Value::Time(Some(due))),
        })]
    };
    // T0 is 2026-11-22 10:00 UTC (the state's zone).
    assert_eq!(due_after("tomorrow"), Ok(edit_due(T0 + 14 * 60 * MIN)));
    assert_eq!(due_after("2h"), Ok(edit_due(T0 + 2 * 60 * MIN)));
    assert_eq!(
        due_after("2026-11-22 17:30"),
        Ok(edit_due(T0 + 7 * 60 * MIN + 30 * MIN))
    );
    let e = due_after("next week").unwrap_err();
    assert!(
        e.starts_with("Due: 'next week' is not a time") && e.contains("tomorrow"),
        "{e}"
    );
}
