//! Headless snapshots: the real session over a temp SQLite file with a fixed clock, drawn
//! into a TestBackend at a fixed size.

use crate::support::backend::Adds;
use crate::support::tui::*;
use caseload::domain::{NewItem, QueueUpdate};
use caseload::store::{Reads, TakeNext, Writes};
use ratatui::crossterm::event::KeyCode;
use ratatui::style::Color;

use crate::support::MIN;

/// A small queue: items created two hours ago; bob holds one (live), carol one (expired).
fn world() -> (Db, Clock) {
    let db = Db::new();
    let clock = Clock::at(T0 - 120 * MIN);
    let mut feeder = db.store("feeder", &clock);
    add_items(
        &mut feeder,
        "helpdesk",
        &[
            "Printer on floor 3 jams",
            "VPN drops every 10 minutes",
            "New laptop for Sam",
        ],
    );
    let mut due = NewItem::titled("Verify VAT number DE123456789");
    due.queue = "verification".into();
    due.due_at = Some(T0 - 30 * MIN);
    due.body = "Customer: Nordlicht GmbH\nCheck the VAT number against VIES.".into();
    due.params = r#"{"country":"DE","vat":"DE123456789"}"#.into();
    feeder.add(&due).unwrap();
    add_items(&mut feeder, "fulfilment", &["Pick & pack order #A-1001"]);
    feeder
        .set_queue(
            "helpdesk",
            &QueueUpdate {
                lock_seconds: Some(1800),
                ..QueueUpdate::default()
            },
            false,
        )
        .ok();
    clock.set(T0 - 45 * MIN);
    let mut carol = db.store("carol", &clock);
    carol.take(3).unwrap();
    clock.set(T0 - 5 * MIN);
    let mut bob = db.store("bob", &clock);
    bob.take(2).unwrap();
    clock.set(T0);
    (db, clock)
}

#[test]
fn queue_view() {
    let (db, clock) = world();
    let store = db.store("alice", &clock);
    let s = start(store, &clock, 100, 14, true);
    let text = screen(&s.state);
    assert!(text.contains("bob, 25m00s left"), "{text}");
    assert!(text.contains("EXPIRED carol +15m00s"), "{text}");
    insta::assert_snapshot!("queue", text);
}

#[test]
fn take_next_opens_the_detail_then_mine_shows_the_countdown() {
    let (db, clock) = world();
    let store = db.store("alice", &clock);
    let mut s = start(store, &clock, 100, 24, true);
    s.step(key('n'));
    let text = screen(&s.state);
    assert!(
        text.contains("#1 "),
        "highest priority free item first: {text}"
    );
    assert!(text.contains("yours, 30m00s left"), "{text}");
    insta::assert_snapshot!("detail", text);

    clock.advance(90_000);
    s.step(code(KeyCode::Esc));
    s.step(key('2'));
    let text = screen(&s.state);
    assert!(text.contains("you, 28m30s left"), "live countdown: {text}");
    insta::assert_snapshot!("mine", text);
}

#[test]
fn help_is_generated_from_the_key_table() {
    let (db, clock) = world();
    let store = db.store("alice", &clock);
    let mut s = start(store, &clock, 100, 110, true);
    s.step(key('?'));
    let text = screen(&s.state);
    for bd in caseload::app::keymap::KEYMAP {
        assert!(text.contains(bd.help), "{} missing", bd.help);
    }
    insta::assert_snapshot!("help", text);
    s.step(key('x'));
    assert!(s.state.help.is_none(), "any key closes the help");
}

#[test]
fn complete_asks_for_confirmation() {
    let (db, clock) = world();
    let store = db.store("alice", &clock);
    let mut s = start(store, &clock, 100, 24, true);
    s.step(key('n'));
    s.step(key('c'));
    type_text(&mut s, "Replaced the fuser");
    insta::assert_snapshot!("confirm", screen(&s.state));
    s.step(code(KeyCode::Esc));
    assert!(s.state.dialog.is_none());
    assert_eq!(s.state.held.len(), 1, "Esc cancels: still held");
}

#[test]
fn a_lost_lock_is_noticed_without_a_key() {
    let (db, clock) = world();
    let store = db.store("alice", &clock);
    let mut s = start(store, &clock, 100, 24, true);
    s.step(key('n')); // takes #1 at 10:00
    s.step(key('e'));
    type_text(&mut s, "Spoke to Sam");
    s.step(code(KeyCode::Esc)); // kept as a draft, not saved
    clock.set(T0 + 31 * MIN);
    let mut bob_store = db.store("bob", &clock);
    let taken = bob_store.take(1).unwrap();
    assert_eq!(taken.lock_user.as_deref(), Some("bob"));
    clock.advance(1000);
    s.step(None); // a tick: the marker changed, the lock check finds the loss
    let text = screen(&s.state);
    assert!(
        text.contains("Your lock on #1 expired at 10:30; bob took it at 10:31"),
        "{text}"
    );
    insta::assert_snapshot!("lost_lock", text);
    s.step(code(KeyCode::Enter)); // add the notes as a comment
    let thread = bob_store.comments(1).unwrap();
    let last = thread.last().unwrap();
    assert_eq!(last.author, "alice");
    assert_eq!(last.text, "Spoke to Sam");
}

#[test]
fn a_small_terminal_gets_a_message() {
    let (db, clock) = world();
    let store = db.store("alice", &clock);
    let s = start(store, &clock, 40, 8, true);
    insta::assert_snapshot!("too_small", screen(&s.state));
}

#[test]
fn hostile_text_is_shown_harmlessly() {
    let db = Db::new();
    let clock = Clock::at(T0);
    let mut feeder = db.store("feeder", &clock);
    let mut it =
        NewItem::titled("A\u{1b}[2JB\u{1b}]0;pwned\u{7}C\u{9b}31mD\rE\u{202e}cba\u{200b}F");
    it.body = "clip: \u{1b}]52;c;ZWNobyBwd25lZA==\u{7}\nbell\u{7}\u{7}\nreturn\roverwrite\n\u{202e}txt.exe\nzero\u{200b}\u{200d}\u{feff}width"
        .into();
    it.params = r#"{"k":"\u001b[31mred"}"#.into();
    feeder.add(&it).unwrap();
    let store = db.store("alice", &clock);
    let mut s = start(store, &clock, 100, 20, true);
    let list = screen(&s.state);
    s.step(code(KeyCode::Enter));
    let detail = screen(&s.state);
    for text in [&list, &detail] {
        for bad in [
            '\u{1b}', '\u{7}', '\u{9b}', '\r', '\u{202e}', '\u{200b}', '\u{feff}',
        ] {
            assert!(!text.contains(bad), "{bad:?} reached the screen");
        }
    }
    assert!(detail.contains("␛]52;c;ZWNobyBwd25lZA==␇"), "{detail}");
    insta::assert_snapshot!("hostile_list", list);
    insta::assert_snapshot!("hostile_detail", detail);
}

#[test]
fn no_color_is_monochrome_but_shows_every_state() {
    let (db, clock) = world();
    let store = db.store("alice", &clock);
    let mut s = start(store, &clock, 100, 14, false);
    s.step(key('n'));
    s.step(code(KeyCode::Esc));
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 14)).unwrap();
    caseload::tui::draw(&mut t, &s.state).unwrap();
    let buf = t.backend().buffer();
    for cell in buf.content() {
        assert_eq!(cell.fg, Color::Reset, "colour under NO_COLOR");
        assert_eq!(cell.bg, Color::Reset, "colour under NO_COLOR");
    }
    let text = buffer_text(t.backend());
    assert!(text.contains("EXPIRED carol"));
    assert!(text.contains("bob, 25m00s left"));
    assert!(text.contains("you, 30m00s left"));
    assert!(text.contains("free"));
    assert!(text.contains("LATE 30m00s"));
    assert!(
        text.contains("> 1"),
        "selection marked by text, not only by colour"
    );
}

#[test]
fn take_next_skips_what_was_skipped_this_session() {
    let (db, clock) = world();
    let store = db.store("alice", &clock);
    let mut s = start(store, &clock, 100, 24, true);
    s.step(key('n'));
    assert_eq!(s.state.detail.as_ref().unwrap().item.id, 1);
    s.step(key('s'));
    s.step(code(KeyCode::Enter));
    let next = s.state.detail.as_ref().unwrap().item.id;
    assert_ne!(next, 1);
    s.step(key('r'));
    s.step(code(KeyCode::Enter));
    s.step(key('n'));
    let again = s.state.detail.as_ref().unwrap().item.id;
    assert_ne!(again, 1, "the skipped item is not offered again");
    let _ = TakeNext::default();
}

#[test]
fn a_one_mebibyte_body_scrolls_without_freezing() {
    let db = Db::new();
    let clock = Clock::at(T0);
    let mut feeder = db.store("feeder", &clock);
    let mut it = NewItem::titled("Huge");
    let line = "0123456789 abcdefghij ".repeat(4);
    it.body = std::iter::repeat_n(line.as_str(), (1 << 20) / line.len() - 1)
        .collect::<Vec<_>>()
        .join("");
    assert!(it.body.len() < 1 << 20);
    feeder.add(&it).unwrap();
    let store = db.store("alice", &clock);
    let mut s = start(store, &clock, 100, 30, true);
    s.step(code(KeyCode::Enter));
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 30)).unwrap();
    let start = std::time::Instant::now();
    for _ in 0..200 {
        s.step(code(KeyCode::PageDown));
        caseload::tui::draw(&mut t, &s.state).unwrap();
    }
    s.step(key('G'));
    caseload::tui::draw(&mut t, &s.state).unwrap();
    let took = start.elapsed();
    assert!(
        took < std::time::Duration::from_secs(5),
        "200 pages of a 1 MiB body took {took:?}"
    );
    let text = buffer_text(t.backend());
    assert!(text.contains("History"), "G reaches the end: {text}");
}

#[test]
fn resume_at_startup_reacquires_and_lists_lost_locks() {
    let (db, clock) = world();
    {
        let store = db.store("alice", &clock);
        let mut s = start(store, &clock, 100, 20, true);
        // Esc between: a second n right after one that took an item takes nothing.
        s.step(key('n')); // #1
        s.step(code(KeyCode::Esc));
        s.step(key('n')); // #3, carol's expired lock, taken over
        s.step(code(KeyCode::Esc));
        s.step(key('n')); // #5
        assert_eq!(s.state.held.len(), 3);
    } // alice's terminal closes with the locks held
    clock.set(T0 + 31 * MIN); // all three expired
    let mut bob = db.store("bob", &clock);
    bob.take(5).unwrap(); // bob takes one over
    clock.advance(MIN);
    let store = db.store("alice", &clock);
    let s = start(store, &clock, 100, 20, true);
    let text = screen(&s.state);
    assert_eq!(s.state.view, caseload::app::View::Mine, "opens on Mine");
    assert!(text.contains("You have 2 unfinished items"), "{text}");
    assert!(
        text.contains("you, 30m00s left"),
        "expired own locks re-acquired: {text}"
    );
    assert!(!text.contains("EXPIRED you"), "{text}");
    assert!(
        text.contains("#5 Pick & pack order #A-1001: bob took it over at 10:31"),
        "{text}"
    );
    insta::assert_snapshot!("resume", text);
}

#[test]
fn the_screen_warns_before_expiry_and_flags_it_after() {
    let (db, clock) = world();
    let store = db.store("alice", &clock);
    let mut s = start(store, &clock, 100, 20, false);
    s.step(key('n'));
    clock.advance(29 * MIN + 15_000); // helpdesk: 30-minute locks, 2-minute warning
    s.step(None);
    let text = screen(&s.state);
    assert!(text.contains("! yours, 45s left"), "{text}");
    assert!(text.contains("! Your lock on #1 expires in 45s"), "{text}");
    clock.advance(50_000);
    s.step(None);
    let text = screen(&s.state);
    assert!(text.contains("EXPIRED +5s"), "{text}");
    assert!(
        text.contains("EXPIRED: your lock on #1 ran out 5s ago"),
        "{text}"
    );
    // A key in the item's view renews it (nobody took it over).
    s.step(key('j'));
    let text = screen(&s.state);
    assert!(text.contains("yours, 30m00s left"), "{text}");
}
