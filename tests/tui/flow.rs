//! Two users on one SQLite file, each driven through the real loop (`tui::run_loop`) on a
//! TestBackend: alice takes, bob sees it held without pressing a key, alice completes,
//! the database has the item done with its events.

use crate::support::tui::*;
use caseload::domain::{EventKind, ItemState};
use caseload::store::Reads;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;

fn row_of(screen: &str, id: i64) -> Option<String> {
    screen
        .lines()
        .skip(2) // tab bar and column header
        .find(|l| {
            l.get(..9).is_some_and(|p| {
                p.trim_start_matches(['>', ' '])
                    .starts_with(&format!("{id} "))
            })
        })
        .map(str::to_string)
}

#[test]
fn alice_takes_bob_sees_it_alice_completes() {
    let db = Db::new();
    let clock = Clock::at(T0);
    let mut feeder = db.store("feeder", &clock);
    let ids = add_items(&mut feeder, "helpdesk", &["Reset password", "Order toner"]);
    let alice_store = db.store("alice", &clock);
    let bob_store = db.store("bob", &clock);
    let mut alice_term = Terminal::new(TestBackend::new(100, 20)).unwrap();
    let mut bob_term = Terminal::new(TestBackend::new(100, 20)).unwrap();
    let mut alice = start(alice_store, &clock, 100, 20, true);
    let mut bob = start(bob_store, &clock, 100, 20, true);

    drive(&mut bob_term, &mut bob, vec![]);
    let before = buffer_text(bob_term.backend());
    assert!(
        row_of(&before, ids[0]).unwrap().ends_with("free"),
        "{before}"
    );

    clock.advance(1000);
    drive(&mut alice_term, &mut alice, vec![key('n')]);
    let a = buffer_text(alice_term.backend());
    assert!(a.contains("#1 [helpdesk"), "alice sees the taken item: {a}");

    // Bob presses nothing: one tick later his screen shows alice's lock.
    clock.advance(1000);
    drive(&mut bob_term, &mut bob, vec![None]);
    let after = buffer_text(bob_term.backend());
    let row = row_of(&after, ids[0]).unwrap();
    assert!(row.contains("alice, 29m59s left"), "{after}");

    // Bob tries to take it anyway: told who has it.
    drive(&mut bob_term, &mut bob, vec![code(KeyCode::Enter)]);
    let told = buffer_text(bob_term.backend());
    assert!(told.contains("#1 is held by alice (since 10:00)"), "{told}");

    clock.advance(60_000);
    drive(
        &mut alice_term,
        &mut alice,
        vec![key('c'), key('o'), key('k'), code(KeyCode::Enter)],
    );
    let a = buffer_text(alice_term.backend());
    assert!(a.contains("Completed #1"), "{a}");

    let mut check = db.store("check", &clock);
    let item = check.item(ids[0]).unwrap();
    assert_eq!(item.state, ItemState::Done);
    assert_eq!(item.finished_by.as_deref(), Some("alice"));
    assert_eq!(item.result.as_deref(), Some("ok"));
    let kinds: Vec<EventKind> = check
        .history(ids[0])
        .unwrap()
        .iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        kinds,
        vec![EventKind::Created, EventKind::Locked, EventKind::Completed]
    );

    clock.advance(1000);
    drive(&mut bob_term, &mut bob, vec![None]);
    let gone = buffer_text(bob_term.backend());
    assert!(
        row_of(&gone, ids[0]).is_none(),
        "done items leave the queue: {gone}"
    );
}
