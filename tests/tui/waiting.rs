//! The screen never waits: a session whose store call is stuck behind another program's
//! write lock (a real second connection holding `BEGIN IMMEDIATE` on the same file) keeps
//! taking keys, says what it waits for, asks for nothing more meanwhile, and carries the
//! action out once the lock is let go.

use crate::support::backend::Adds;
use std::time::Duration;

use crate::support::backend::PgBackend;
use crate::support::tui::*;
use caseload::app::{Pending, View};
use caseload::domain::{Actor, ItemState, NewItem};
use caseload::store::postgres::{PgOptions, PgStore};
use caseload::store::{ListFilter, Reads, StateFilter};
use ratatui::crossterm::event::KeyCode;

/// Another program's connection holding the write lock until dropped or let go.
struct Writer(rusqlite::Connection);

impl Writer {
    fn hold(db: &Db) -> Writer {
        let c = rusqlite::Connection::open(&db.path).unwrap();
        c.execute_batch("BEGIN IMMEDIATE").unwrap();
        Writer(c)
    }
    fn let_go(self) {
        self.0.execute_batch("ROLLBACK").unwrap();
    }
}

#[test]
fn a_take_behind_a_held_write_lock_leaves_the_keys_working_and_happens_when_it_is_let_go() {
    let db = Db::new();
    let clock = Clock::at(T0);
    let mut feeder = db.store("feeder", &clock);
    add_items(&mut feeder, "helpdesk", &["Reset password", "Order toner"]);
    let mut s = start(db.store("alice", &clock), &clock, 100, 20, true);

    let writer = Writer::hold(&db);
    s.handle(key('n'));
    assert!(s.busy(), "the take is under way on the worker");
    assert_eq!(s.state.doing.as_ref().unwrap().what, "taking the next item");

    // Keys work meanwhile: help, views, moving; ticks go on.
    s.handle(key('?'));
    assert!(s.state.help.is_some());
    s.handle(code(KeyCode::Esc));
    s.handle(key('2'));
    assert_eq!(s.state.view, View::Mine);
    s.handle(key('1'));
    for _ in 0..50 {
        clock.advance(200);
        s.handle(None);
        s.handle(key('j'));
        s.handle(key('k'));
    }
    assert!(s.busy(), "still waiting for the lock");
    assert!(
        s.queued() <= 1,
        "ticks and refreshes do not pile up behind the stuck call: {} queued",
        s.queued()
    );
    let text = screen(&s.state);
    assert!(
        text.contains(
            "Taking the next item: waiting for the database — another program holds it (10 s)"
        ),
        "{text}"
    );
    s.handle(key('n'));
    assert_eq!(
        s.state.status.as_ref().unwrap().text,
        "One change at a time"
    );

    writer.let_go();
    assert!(s.settle(Duration::from_secs(30)), "answered once let go");
    assert!(s.state.doing.is_none());
    assert_eq!(
        s.state.status.as_ref().unwrap().text,
        "Took #1: Reset password"
    );
    assert!(!screen(&s.state).contains("waiting for the database"));
    let mut check = db.store("check", &clock);
    let held = check
        .list(&ListFilter {
            state: StateFilter::Locked,
            holder: Some("alice".into()),
            limit: 10,
            ..ListFilter::default()
        })
        .unwrap();
    assert_eq!(held.len(), 1, "one take, not two: {held:?}");
}

#[test]
fn a_completion_waits_and_the_notes_and_result_typed_are_saved_with_it() {
    let db = Db::new();
    let clock = Clock::at(T0);
    let mut feeder = db.store("feeder", &clock);
    let ids = add_items(&mut feeder, "helpdesk", &["Reset password"]);
    let mut s = start(db.store("alice", &clock), &clock, 100, 20, true);
    s.step(key('n'));
    s.step(key('e'));
    type_text(&mut s, "called Kim");
    s.step(code(KeyCode::Esc));

    let writer = Writer::hold(&db);
    s.handle(key('c'));
    for c in "reset done".chars() {
        s.handle(key(c));
    }
    s.handle(code(KeyCode::Enter));
    clock.advance(3_000);
    s.handle(None);
    assert!(
        screen(&s.state)
            .contains("Completing #1: waiting for the database — another program holds it (3 s)"),
        "{}",
        screen(&s.state)
    );
    // Scrolling the detail still works while it waits.
    s.handle(key('j'));
    writer.let_go();
    assert!(s.settle(Duration::from_secs(30)));
    assert_eq!(
        s.state.status.as_ref().unwrap().text,
        "Completed #1; your draft notes were saved first — u undo (30 s)"
    );
    let item = db.store("check", &clock).item(ids[0]).unwrap();
    assert_eq!(item.result.as_deref(), Some("reset done"));
    assert_eq!(item.notes, "called Kim");
}

#[test]
fn scrolling_behind_a_stuck_take_moves_at_once_and_shows_unread_rows_as_not_loaded() {
    let db = Db::new();
    let clock = Clock::at(T0);
    let mut feeder = db.store("feeder", &clock);
    let titles: Vec<String> = (1..=40).map(|i| format!("Item {i}")).collect();
    let titles: Vec<&str> = titles.iter().map(String::as_str).collect();
    add_items(&mut feeder, "helpdesk", &titles);
    let mut s = start(db.store("alice", &clock), &clock, 100, 20, true);
    let writer = Writer::hold(&db);
    s.handle(key('n'));
    for _ in 0..30 {
        s.handle(key('j'));
    }
    let text = screen(&s.state);
    assert!(text.contains("31/40"), "{text}");
    let selected = text.lines().find(|l| l.starts_with('>')).unwrap();
    assert_eq!(selected.trim_end(), "> …", "{text}");
    assert!(
        !text.contains("Item 31"),
        "nothing read yet is shown: {text}"
    );
    writer.let_go();
    assert!(s.settle(Duration::from_secs(30)));
    s.step(code(KeyCode::Esc));
    let text = screen(&s.state);
    let selected = text.lines().find(|l| l.starts_with('>')).unwrap();
    assert!(selected.contains("Item 31"), "{text}");
}

#[test]
fn on_postgres_a_completion_behind_a_locked_row_fails_after_the_patience_and_keeps_the_result() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    let opts = PgOptions {
        lock_timeout: Duration::from_millis(1500),
        ..PgOptions::default()
    };
    let mut feeder = PgStore::open(&b.url, Actor::new("feeder", "feeder"), &opts).unwrap();
    let id = feeder.add(&NewItem::titled("Printer on fire")).unwrap().id;
    let alice = PgStore::open(&b.url, Actor::new("alice", "alice"), &opts).unwrap();
    let mut s = live_session(alice, 100, 20, false);
    s.step(key('n'));
    assert!(s.state.held.contains_key(&id));

    // A suspended laptop: another session locked the row and went quiet.
    let mut other = b.admin();
    let mut tx = other.transaction().unwrap();
    tx.query("SELECT id FROM items WHERE id = $1 FOR UPDATE", &[&id])
        .unwrap();
    s.handle(key('c'));
    for c in "new toner".chars() {
        s.handle(key(c));
    }
    s.handle(code(KeyCode::Enter));
    assert_eq!(
        s.state.doing.as_ref().unwrap().what,
        format!("completing #{id}")
    );
    s.handle(key('?'));
    assert!(s.state.help.is_some(), "keys work while it waits");
    s.handle(code(KeyCode::Esc));

    // The store's patience (lock_timeout) runs out: said so, and the dialog is back as typed.
    assert!(s.settle(Duration::from_secs(30)));
    assert!(s.state.doing.is_none());
    let d = s.state.dialog.as_ref().expect("the dialog is back");
    assert!(matches!(d.pending, Pending::Complete { .. }));
    assert_eq!(d.value(0), "new toner");
    let err = d.error.as_deref().unwrap();
    assert!(err.contains("lock_timeout"), "{err}");
    assert!(err.ends_with("Enter tries again, Esc cancels"), "{err}");

    // The other session lets go; Enter tries again and it goes through.
    tx.rollback().unwrap();
    s.step(code(KeyCode::Enter));
    assert_eq!(
        s.state.status.as_ref().unwrap().text,
        format!("Completed #{id} — u undo (30 s)")
    );
    let item = feeder.item(id).unwrap();
    assert_eq!(item.state, ItemState::Done);
    assert_eq!(item.result.as_deref(), Some("new toner"));
}
