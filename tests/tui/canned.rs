//! Ready-made texts and reasons in the TUI (issue 28 §2), through `app::update`: release
//! and skip ask for an optional reason (Enter goes ahead without one); Tab (or
//! Ctrl-Space) in a result or reason field lists the queue's texts for it, filtered by
//! what is typed; choosing one fills the field, still editable, and its code goes with the
//! finish.

use caseload::app::{Effect, Finish, Msg, Pending, update};
use caseload::domain::texts::{CannedText, Purpose, Saying};
use caseload::store::TakeNext;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::support::tui::T0;
use crate::update::{code, holding, key};

fn text(queue: &str, purpose: Purpose, code: &str, text: &str) -> CannedText {
    CannedText {
        queue: queue.into(),
        purpose,
        code: code.into(),
        text: text.into(),
    }
}

/// Alice holds #42 of queue `q`, whose ready-made texts are loaded (and one of another
/// queue, which is never offered).
fn with_texts() -> caseload::app::State {
    let mut s = holding();
    update(
        &mut s,
        Msg::Texts(vec![
            text("q", Purpose::Skip, "spanish", "Needs a Spanish speaker"),
            text("q", Purpose::Skip, "docs", "Waiting for documents"),
            text("q", Purpose::Fail, "no-answer", "No answer after 3 calls"),
            text(
                "q",
                Purpose::Release,
                "call-back",
                "Customer asked for a call-back",
            ),
            text("other", Purpose::Skip, "elsewhere", "Not this queue's"),
        ]),
    );
    s
}

fn typed(s: &mut caseload::app::State, t: &str) {
    for c in t.chars() {
        update(s, key(c, T0));
    }
}

fn menu(s: &caseload::app::State) -> Option<Vec<String>> {
    let d = s.dialog.as_ref()?;
    let m = d.inputs[d.focus].offer.as_ref()?.menu.as_ref()?;
    Some(m.choices.iter().map(|t| t.code.clone()).collect())
}

#[test]
fn release_asks_for_a_reason_and_enter_goes_ahead_without_one() {
    let mut s = with_texts();
    let fx = update(&mut s, key('r', T0));
    assert_eq!(fx, vec![]);
    let d = s.dialog.as_ref().expect("a dialog");
    assert_eq!(d.pending, Pending::Release { id: 42, token: 3 });
    assert!(d.inputs[0].spec.label.contains("optional"));
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert_eq!(
        fx,
        vec![Effect::Finish {
            id: 42,
            token: 3,
            what: Finish::Release(Saying::default()),
            notes: None,
        }]
    );
    // Esc: nothing released, and the item is not put behind the others.
    let mut s = with_texts();
    update(&mut s, key('s', T0));
    update(&mut s, code(KeyCode::Esc, T0));
    assert!(s.dialog.is_none());
    let fx = update(&mut s, key('n', T0));
    assert!(
        matches!(&fx[..], [Effect::TakeNext(t)] if t.skip.is_empty()),
        "{fx:?}"
    );
}

#[test]
fn tab_offers_the_queue_s_texts_filtered_and_enter_fills_the_field() {
    let mut s = with_texts();
    update(&mut s, key('s', T0));
    update(&mut s, code(KeyCode::Tab, T0));
    assert_eq!(
        menu(&s).unwrap(),
        ["spanish", "docs"],
        "skip texts of q only"
    );
    // Typing narrows the list; Tab moves, Enter fills the field and closes the list.
    typed(&mut s, "wait");
    assert_eq!(menu(&s).unwrap(), ["docs"]);
    update(&mut s, code(KeyCode::Backspace, T0));
    update(&mut s, code(KeyCode::Backspace, T0));
    update(&mut s, code(KeyCode::Backspace, T0));
    update(&mut s, code(KeyCode::Backspace, T0));
    assert_eq!(menu(&s).unwrap(), ["spanish", "docs"]);
    update(&mut s, code(KeyCode::Down, T0));
    update(&mut s, code(KeyCode::Up, T0));
    update(&mut s, code(KeyCode::Enter, T0));
    assert!(menu(&s).is_none(), "closed");
    let d = s
        .dialog
        .as_ref()
        .expect("still open: the text can be edited");
    assert_eq!(d.value(0), "Needs a Spanish speaker");
    // Still editable; the code stays with the edited text.
    typed(&mut s, " (Chile)");
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    let said = Saying {
        text: Some("Needs a Spanish speaker (Chile)".into()),
        code: Some("spanish".into()),
    };
    assert_eq!(
        fx,
        vec![Effect::Finish {
            id: 42,
            token: 3,
            what: Finish::Skip(
                TakeNext {
                    queue: None,
                    skip: vec![42]
                },
                said
            ),
            notes: None,
        }]
    );
}

#[test]
fn ctrl_space_opens_the_list_esc_closes_only_it_and_an_emptied_field_drops_the_code() {
    let mut s = with_texts();
    update(&mut s, key('f', T0));
    let ctrl_space = Msg::Key {
        key: KeyEvent::new(KeyCode::Char(' '), KeyModifiers::CONTROL),
        now: T0,
    };
    update(&mut s, ctrl_space);
    assert_eq!(menu(&s).unwrap(), ["no-answer"]);
    update(&mut s, code(KeyCode::Esc, T0));
    assert!(menu(&s).is_none());
    assert!(s.dialog.is_some(), "Esc closed the list, not the dialog");
    update(&mut s, code(KeyCode::Tab, T0));
    update(&mut s, code(KeyCode::Enter, T0));
    assert_eq!(
        s.dialog.as_ref().unwrap().value(0),
        "No answer after 3 calls"
    );
    // Emptied and typed anew: a free text, no code.
    for _ in 0.."No answer after 3 calls".len() {
        update(&mut s, code(KeyCode::Backspace, T0));
    }
    typed(&mut s, "printer gone");
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert!(
        matches!(&fx[..], [Effect::Finish { what: Finish::Fail(r), .. }]
            if r.text.as_deref() == Some("printer gone") && r.code.is_none()),
        "{fx:?}"
    );
}

#[test]
fn no_text_to_offer_says_why_and_the_dialog_stays() {
    let mut s = with_texts();
    update(&mut s, key('c', T0));
    update(&mut s, code(KeyCode::Tab, T0));
    let d = s.dialog.as_ref().unwrap();
    let e = d.error.as_deref().unwrap();
    assert!(e.contains("Queue q has no ready-made result texts"), "{e}");
    let mut s = with_texts();
    update(&mut s, key('s', T0));
    typed(&mut s, "zzz");
    update(&mut s, code(KeyCode::Tab, T0));
    let e = s.dialog.as_ref().unwrap().error.clone().unwrap();
    assert!(e.contains("No ready-made skip text of q matches"), "{e}");
    assert_eq!(s.dialog.as_ref().unwrap().value(0), "zzz", "nothing lost");
}

#[test]
fn the_comment_dialog_offers_the_queue_s_comment_texts() {
    let mut s = with_texts();
    update(
        &mut s,
        Msg::Texts(vec![text(
            "q",
            Purpose::Comment,
            "address",
            "Address confirmed",
        )]),
    );
    update(&mut s, key('m', T0));
    update(&mut s, code(KeyCode::Tab, T0));
    assert_eq!(menu(&s).unwrap(), ["address"]);
    update(&mut s, code(KeyCode::Enter, T0));
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert!(
        matches!(&fx[..], [Effect::AddComment { id: 42, text }] if text == "Address confirmed"),
        "{fx:?}"
    );
}
