//! Reviewing in the TUI (issue 29 §1), the real session over a temp SQLite file with a
//! fixed clock: the Review view lists what waits for review that the user may review
//! (never their own work), `n` there takes the next, the detail shows who completed it,
//! the result and the field changes (from → to, who); `A` accepts, `R` rejects with a
//! reason (the queue's ready-made reject texts offered), and the maker, opening the
//! rejected item from Mine, reads the reason first.

use crate::support::tui::*;
use caseload::app::View;
use caseload::domain::ItemState;
use caseload::domain::QueueUpdate;
use caseload::domain::queue_fields::{FieldChange, FieldType};
use caseload::domain::texts::Purpose;
use caseload::store::{Reads, Writes};
use ratatui::crossterm::event::KeyCode;

use crate::support::MIN;

/// A `kyc` queue reviewing every completion, with a field `vat` and reject texts: alice
/// completed #1 (correcting its VAT number) at 09:20, carol #2 at 09:30, bob #3 at 09:40;
/// #4 is still open.
fn world() -> (Db, Clock) {
    let db = Db::new();
    let clock = Clock::at(T0 - 60 * MIN);
    let mut boss = db.store("boss", &clock);
    add_items(
        &mut boss,
        "kyc",
        &[
            "KYC: Mei Brandt",
            "KYC: Jon Ortega",
            "KYC: Ana Sousa",
            "KYC: Lars Eklund",
        ],
    );
    let vat = FieldChange {
        kind: Some(FieldType::Text),
        ..FieldChange::default()
    };
    boss.define_field("kyc", "vat", &vat).unwrap();
    let every = QueueUpdate {
        review_percent: Some(100),
        ..QueueUpdate::default()
    };
    boss.set_queue("kyc", &every, false).unwrap();
    boss.add_text(
        "kyc",
        Purpose::Reject,
        "The document has expired",
        Some("expired"),
    )
    .unwrap();
    boss.add_text("kyc", Purpose::Reject, "VAT number wrong", Some("vat"))
        .unwrap();
    for (who, at, id) in [("alice", 40, 1), ("carol", 30, 2), ("bob", 20, 3)] {
        clock.set(T0 - at * MIN);
        let mut s = db.store(who, &clock);
        let token = s.take(id).unwrap().lock_token;
        if who == "alice" {
            s.set_fields(id, token, &[("vat".into(), "DE123456789".into())])
                .unwrap();
        }
        s.complete(id, token, Some("Passport matches")).unwrap();
    }
    clock.set(T0);
    (db, clock)
}

fn state_of(db: &Db, clock: &Clock, id: i64) -> caseload::domain::Item {
    db.store("boss", clock).item(id).unwrap()
}

#[test]
fn the_review_view_lists_only_what_the_user_may_review_and_n_takes_the_oldest() {
    let (db, clock) = world();
    let mut s = start(db.store("bob", &clock), &clock, 100, 20, true);
    s.step(key('5'));
    assert_eq!(s.state.view, View::Review);
    let text = screen(&s.state);
    assert!(text.contains("5 Review"), "the tab shows: {text}");
    assert!(
        text.contains("KYC: Mei Brandt") && text.contains("KYC: Jon Ortega"),
        "{text}"
    );
    assert!(!text.contains("KYC: Ana Sousa"), "bob's own work: {text}");
    assert!(!text.contains("KYC: Lars Eklund"), "not in review: {text}");
    assert!(text.contains("free, by alice"), "whose work it is: {text}");
    insta::assert_snapshot!("review_view", text);

    // n: the oldest submission bob may review, locked to him, its review shown first.
    s.step(key('n'));
    let item = state_of(&db, &clock, 1);
    assert_eq!(
        (item.state, item.lock_user.as_deref()),
        (ItemState::Review, Some("bob"))
    );
    let text = screen(&s.state);
    assert!(
        text.contains("Completed by alice at 2026-11-22 09:20"),
        "{text}"
    );
    assert!(text.contains("Result: Passport matches"), "{text}");
    assert!(
        text.contains("vat: (empty) → DE123456789  (alice, 2026-11-22 09:20)"),
        "the maker's change as from → to, who: {text}"
    );
    insta::assert_snapshot!("review_detail", text);
}

#[test]
fn a_accepts_with_an_optional_comment() {
    let (db, clock) = world();
    let mut s = start(db.store("bob", &clock), &clock, 100, 24, true);
    s.step(key('5'));
    s.step(key('n'));
    // A maker's finish is not the reviewer's: said, nothing sent.
    s.step(key('c'));
    assert!(s.state.dialog.is_none());
    let said = s.state.status.as_ref().unwrap().text.clone();
    assert!(said.contains("A accepts"), "{said}");
    s.step(key('A'));
    type_text(&mut s, "fine");
    insta::assert_snapshot!("review_accept", screen(&s.state));
    s.step(code(KeyCode::Enter));
    s.settle_change(std::time::Duration::from_secs(60));
    let item = state_of(&db, &clock, 1);
    assert_eq!(item.state, ItemState::Done);
    assert_eq!(item.finished_by.as_deref(), Some("alice"));
    let last = db.store("boss", &clock).history(1).unwrap().pop().unwrap();
    assert_eq!(
        (last.kind.as_str(), last.detail["comment"].as_str()),
        ("accepted", Some("fine"))
    );
    assert_eq!(s.state.status.as_ref().unwrap().text, "Accepted #1: done");
    assert!(s.state.detail.is_none());
}

#[test]
fn r_rejects_with_a_ready_made_reason_and_the_maker_reads_it_first() {
    let (db, clock) = world();
    let mut s = start(db.store("bob", &clock), &clock, 100, 24, true);
    s.step(key('5'));
    s.step(key('n'));
    s.step(key('R'));
    let d = s.state.dialog.as_ref().expect("the reject dialog");
    assert!(d.title.contains("Reject #1"), "{}", d.title);
    // Tab offers the queue's reject texts; typing narrows them, Enter takes one.
    type_text(&mut s, "VAT");
    s.step(code(KeyCode::Tab));
    insta::assert_snapshot!("review_reject", screen(&s.state));
    s.step(code(KeyCode::Enter));
    s.step(code(KeyCode::Enter));
    s.settle_change(std::time::Duration::from_secs(60));
    let item = state_of(&db, &clock, 1);
    assert_eq!(
        (item.state, item.lock_user.as_deref()),
        (ItemState::Open, Some("alice"))
    );
    assert_eq!(
        s.state.status.as_ref().unwrap().text,
        "Rejected #1: back to its maker"
    );
    let h = db.store("boss", &clock).history(1).unwrap();
    let rejected = h.iter().rev().find(|e| e.kind.as_str() == "rejected");
    let rejected = rejected.unwrap();
    assert_eq!(rejected.detail["reason"], "VAT number wrong");
    assert_eq!(rejected.detail["code"], "vat", "the ready-made text's code");

    // Alice opens it from Mine: the reason comes first.
    clock.set(T0 + 5 * MIN);
    let mut a = start(db.store("alice", &clock), &clock, 100, 20, true);
    assert_eq!(
        a.state.view,
        View::Mine,
        "an assignment of hers: Mine first"
    );
    a.step(code(KeyCode::Enter));
    let text = screen(&a.state);
    let first = text.lines().nth(2).unwrap_or_default();
    assert!(
        first.contains("Rejected by bob: VAT number wrong"),
        "the detail's first line: {text}"
    );
    insta::assert_snapshot!("review_rejected_banner", text);
    // Completed again, it goes back to review and the banner is gone for good.
    let token = a.state.held.get(&1).unwrap().token;
    let mut alice = db.store("alice", &clock);
    alice.complete(1, token, Some("VAT corrected")).unwrap();
    let again = alice.item(1).unwrap();
    let history = alice.history(1).unwrap();
    assert_eq!(again.state, ItemState::Review);
    assert!(caseload::app::review::rejection(&again, &history).is_none());
}

#[test]
fn n_in_review_with_nothing_to_review_says_so() {
    let (db, clock) = world();
    let mut bob = db.store("bob", &clock);
    for _ in 0..2 {
        let it = bob.take_review(None, None).unwrap();
        bob.accept(it.id, it.lock_token, None).unwrap();
    }
    let mut s = start(db.store("bob", &clock), &clock, 100, 16, true);
    s.step(key('5'));
    let text = screen(&s.state);
    assert!(
        text.contains("Nothing waits for review that you may review."),
        "{text}"
    );
    s.step(key('n'));
    let said = s.state.status.as_ref().unwrap().text.clone();
    assert!(said.contains("nothing waits for review"), "{said}");
    assert!(s.state.detail.is_none());
}

#[test]
fn a_review_lock_that_expired_unclaimed_is_taken_back_at_startup() {
    let (db, clock) = world();
    let mut bob = db.store("bob", &clock);
    let token = bob.take_review(None, Some(1)).unwrap().lock_token;
    // Thirty-five minutes later (the lock is 30): nobody took it over.
    clock.set(T0 + 35 * MIN);
    let s = start(db.store("bob", &clock), &clock, 100, 20, true);
    let status = s.state.status.as_ref().map(|st| st.text.clone());
    assert!(
        s.state.notices.is_empty(),
        "{:?} {status:?}",
        s.state.notices
    );
    let item = state_of(&db, &clock, 1);
    assert_eq!(
        (item.state, item.lock_user.as_deref(), item.lock_token),
        (ItemState::Review, Some("bob"), token)
    );
    assert!(item.lock_expires_at.unwrap() > T0 + 35 * MIN, "renewed");
    assert!(s.state.held.contains_key(&1));
}
