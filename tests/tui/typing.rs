//! Stray keys do no harm (`app::typing`), through `update` with the times a person's keys
//! come at: a sentence typed into the list changes nothing and says so once; a paste
//! outside a text field likewise; a command pressed alone acts once it is clear no typing
//! follows; `/` and `:` take what is typed right after them. And the notices ("Work for
//! you", "Lock lost") let keys through, Enter or Esc closing them; a result typed when
//! the lock is lost is offered as a comment.

use caseload::app::{Effect, Finish, Msg, Pending, Snapshot, State, View, update};
use caseload::domain::EventKind;
use caseload::store::StoreError;
use ratatui::crossterm::event::KeyCode;

use crate::support::MIN;
use crate::support::tui::{T0, item};
use crate::update::{code, event, holding, key, lost_snapshot, state};

const HINT: &str = "Typing? Press e to write notes, / to filter";

/// `s` with the typing guard on, as in the terminal, and ten free items listed.
fn guarded(mut s: State) -> State {
    s.typing.guard = true;
    let rows: Vec<_> = (1..=10).map(|id| item(id, None, 0, 0)).collect();
    update(
        &mut s,
        Msg::Refreshed(Box::new(Snapshot {
            view: Some(View::Queue),
            total: rows.len() as u64,
            rows,
            ..Snapshot::default()
        })),
    );
    s
}

/// Feeds `text` as keys from `start`, a key every `gap(i)` ms, with the loop's ticks
/// (every 100 ms) between them, then two quiet seconds; returns every effect and when it
/// ended.
fn type_at(
    s: &mut State,
    text: &str,
    start: i64,
    gap: impl Fn(usize) -> i64,
) -> (Vec<Effect>, i64) {
    let mut fx = Vec::new();
    let mut now = start;
    for (i, c) in text.chars().enumerate() {
        let msg = if c == '\n' {
            code(KeyCode::Enter, now)
        } else {
            key(c, now)
        };
        fx.extend(update(s, msg));
        let next = now + gap(i);
        let mut t = now + 100;
        while t < next {
            fx.extend(update(s, Msg::Tick { now: t }));
            t += 100;
        }
        now = next;
    }
    for t in (now..now + 2000).step_by(100) {
        fx.extend(update(s, Msg::Tick { now: t }));
    }
    (fx, now + 2000)
}

/// What reaches the store beyond looking: takes, writes, renewals.
fn store_effects(fx: &[Effect]) -> Vec<&Effect> {
    fx.iter()
        .filter(|e| !matches!(e, Effect::CheckMarker | Effect::Refresh(_)))
        .collect()
}

/// The audit's day: the clerk, with #42 open and believing the notes editor open, types
/// a sentence (keys 60-260 ms apart, words a little slower) and Enter. It held `s`
/// (skip), `n` (take next), `r` (release), `c`, `f`, `e`, `q`... None acted.
#[test]
fn the_clerks_sentence_typed_into_the_list_changes_nothing() {
    let mut s = guarded(holding());
    let sentence = "spoke to the customer, new address confirmed. resend the invoice friday\n";
    let before = (s.panes.queue.selected, s.detail.as_ref().map(|d| d.item.id));
    let (fx, _) = type_at(&mut s, sentence, T0 + MIN, |i| {
        if sentence.as_bytes().get(i + 1) == Some(&b' ') {
            240
        } else {
            60 + (i as i64 * 37) % 200
        }
    });
    assert_eq!(store_effects(&fx), Vec::<&Effect>::new());
    assert_eq!(s.status.as_ref().map(|st| st.text.as_str()), Some(HINT));
    assert!(s.dialog.is_none() && s.editor.is_none() && s.filter_prompt.is_none());
    assert!(!s.quit && s.skipped.is_empty() && s.drafts.is_empty());
    assert!(s.held.contains_key(&42), "still holding #42");
    assert_eq!(
        (s.panes.queue.selected, s.detail.as_ref().map(|d| d.item.id)),
        before,
        "the item stays open, the selection where it was"
    );
}

/// A sentence typed over the list (no item open), beginning with a moving key: the
/// selection it moved is put back.
#[test]
fn typing_over_the_list_puts_back_what_it_moved() {
    let mut s = guarded(state());
    let (fx, _) = type_at(&mut s, "just checking\n", T0, |_| 90);
    assert_eq!(store_effects(&fx), Vec::<&Effect>::new());
    assert_eq!(s.panes.queue.selected, 0, "the j that began it is undone");
    assert_eq!(s.status.as_ref().unwrap().text, HINT);
}

/// A person pressing `n` alone: it acts once 300 ms passed without typing (the loop
/// comes back then: `wake_at`), and then moving keys act at once.
#[test]
fn a_command_pressed_alone_acts_once_no_typing_follows() {
    let mut s = guarded(state());
    assert!(update(&mut s, key('n', T0)).is_empty(), "held for a moment");
    assert_eq!(s.wake_at(), Some(T0 + 300));
    assert_eq!(
        store_effects(&update(&mut s, Msg::Tick { now: T0 + 299 })),
        Vec::<&Effect>::new()
    );
    let fx = update(&mut s, Msg::Tick { now: T0 + 300 });
    assert!(
        fx.iter().any(|e| matches!(e, Effect::TakeNext(_))),
        "{fx:?}"
    );
    assert_eq!(s.wake_at(), None);
    // A key that is not typing (an arrow) acts at once, after what was held before it.
    update(&mut s, key('2', T0 + 5_000));
    update(&mut s, code(KeyCode::Down, T0 + 5_050));
    assert_eq!(s.view, View::Mine, "the held 2 acted first");
    // Moving keys act at once; a held-down j is one key, not typing.
    update(&mut s, key('1', T0 + 9_000));
    update(&mut s, Msg::Tick { now: T0 + 9_300 });
    for i in 0..6 {
        update(&mut s, key('j', T0 + 10_000 + i * 30));
    }
    assert_eq!(s.panes.queue.selected, 6);
    assert!(s.status.as_ref().is_none_or(|st| st.text != HINT));
}

/// A paste outside a text field changes nothing, says so once, and the Enter that
/// follows it is typing too.
#[test]
fn a_paste_outside_a_text_field_changes_nothing() {
    let mut s = guarded(holding());
    let fx = update(
        &mut s,
        Msg::Paste {
            text: "Customer called back: the new address is fine".into(),
            now: T0 + MIN,
        },
    );
    assert!(fx.is_empty());
    assert_eq!(s.status.as_ref().unwrap().text, HINT);
    let fx = update(&mut s, code(KeyCode::Enter, T0 + MIN + 200));
    assert_eq!(store_effects(&fx), Vec::<&Effect>::new());
    assert!(s.dialog.is_none());
}

/// `/` and `:` begin a field: what is typed right after them goes into it.
#[test]
fn a_filter_or_an_id_typed_fast_goes_into_its_prompt() {
    let mut s = guarded(state());
    let (fx, end) = type_at(&mut s, "/printer\n", T0, |_| 40);
    assert_eq!(s.filter.text.as_deref(), Some("printer"), "{fx:?}");
    assert!(s.status.as_ref().is_none_or(|st| st.text != HINT));
    let (fx, _) = type_at(&mut s, ":7\n", end + 5_000, |_| 40);
    assert!(fx.iter().any(|e| matches!(e, Effect::Open(7))), "{fx:?}");
}

/// "Work for you" shows while keys go on working; Enter or Esc closes it.
#[test]
fn notices_let_keys_through_and_enter_or_esc_closes_them() {
    let mut s = state();
    let rows: Vec<_> = (1..=5).map(|id| item(id, None, 0, 0)).collect();
    let mut given = item(84, Some("alice"), T0, 2);
    given.title = "Item 84".into();
    let mut by_sup = event(EventKind::Reassigned, "sup", T0);
    by_sup.item_id = 84;
    by_sup.detail = serde_json::json!({"to": "alice", "reason": "bob is off sick"});
    update(
        &mut s,
        Msg::Refreshed(Box::new(Snapshot {
            view: Some(View::Queue),
            total: 5,
            rows,
            own: Some(vec![given]),
            given: vec![by_sup],
            ..Snapshot::default()
        })),
    );
    assert_eq!(s.notice.as_ref().unwrap().title, "Work for you");
    assert!(s.dialog.is_none(), "not a dialog: keys are not taken");
    update(&mut s, key('j', T0));
    update(&mut s, key('j', T0));
    assert_eq!(s.panes.queue.selected, 2, "keys work under the notice");
    update(&mut s, key('2', T0));
    assert_eq!(s.view, View::Mine);
    let shown = s.notice.clone();
    assert!(shown.is_some(), "it stays until closed");
    update(&mut s, code(KeyCode::Esc, T0));
    assert!(s.notice.is_none());
    // Enter closes it too, and does nothing else.
    s.notice = shown;
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert!(s.notice.is_none() && fx.is_empty(), "{fx:?}");
}

/// A result typed in the Complete dialog when the lock is lost is not dropped: offered
/// as a comment, like unsaved notes; so is one sent when the store answers "lock lost".
#[test]
fn a_result_typed_as_the_lock_is_lost_is_offered_as_a_comment() {
    let mut s = holding();
    update(&mut s, key('c', T0 + MIN));
    for c in "Replaced the fuser".chars() {
        update(&mut s, key(c, T0 + MIN));
    }
    update(
        &mut s,
        lost_snapshot(vec![event(EventKind::TakenOver, "bob", T0 + 11 * MIN)]),
    );
    assert!(s.dialog.is_none(), "the dialog cannot finish it any more");
    let n = s.notice.clone().expect("the lost-lock notice");
    assert_eq!(n.pending, Pending::Comment { id: 42 });
    assert!(
        n.message.contains("What you typed in the dialog is kept"),
        "{}",
        n.message
    );
    let fx = update(&mut s, code(KeyCode::Enter, T0 + 12 * MIN));
    assert_eq!(
        fx,
        vec![Effect::Comment {
            id: 42,
            text: "Result: Replaced the fuser".into()
        }]
    );

    // Sent, and refused because the lock was lost meanwhile.
    let mut s = holding();
    update(
        &mut s,
        Msg::Finished {
            id: 42,
            what: Finish::Complete(caseload::domain::texts::Saying::of(
                "Called the customer",
                None,
            )),
            result: Err(StoreError::LockLost {
                id: 42,
                why: caseload::domain::NoLock::HeldBy("bob".into()),
            }),
        },
    );
    update(
        &mut s,
        lost_snapshot(vec![event(EventKind::TakenOver, "bob", T0 + 11 * MIN)]),
    );
    assert_eq!(
        s.notice.as_ref().unwrap().pending,
        Pending::Comment { id: 42 }
    );
    assert_eq!(s.unsent(42).as_deref(), Some("Result: Called the customer"));
}
