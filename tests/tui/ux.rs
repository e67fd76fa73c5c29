//! The TUI as a person reads and types it: local times, narrow screens, keys that match
//! habits. `app::update` with a fixed clock, and screens drawn into a `TestBackend`.

use caseload::app::{Effect, Msg, State, update};
use caseload::domain::NewItem;
use caseload::domain::time::Zone;
use caseload::domain::{Item, ItemState};
use caseload::store::Store;
use chrono::FixedOffset;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::support::MIN;
use crate::support::tui::{Clock, Db, T0, add_items, code, key as press, screen, start, type_text};
const HOUR: i64 = 60 * MIN;

fn item(id: i64, holder: Option<&str>) -> Item {
    Item {
        id,
        queue: "q".into(),
        request_id: None,
        title: format!("Item {id}"),
        body: "body".into(),
        params: "{}".into(),
        priority: 0,
        due_at: None,
        state: ItemState::Open,
        lock_user: holder.map(str::to_string),
        lock_time: holder.map(|_| T0),
        lock_token: 1,
        notes: String::new(),
        result: None,
        error: None,
        created_at: T0 - 60 * MIN,
        created_by: "feeder".into(),
        finished_at: None,
        finished_by: None,
        unreadable: Vec::new(),
    }
}

fn key(c: char) -> Msg {
    Msg::Key {
        key: KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
        now: T0,
    }
}

fn zone(hours: i32) -> Zone {
    Zone::Fixed(FixedOffset::east_opt(hours * 3600).unwrap())
}

fn activity_since(s: &mut State) -> i64 {
    update(s, key('3'));
    let effects = update(s, key('t'));
    effects
        .iter()
        .find_map(|e| match e {
            Effect::Activity { since, .. } => Some(*since),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no activity effect in {effects:?}"))
}

#[test]
fn today_is_the_local_day_of_the_screen_zone() {
    // 10:00 UTC is 11:00 in UTC+1 (the day began at 23:00 UTC the evening before) ...
    let mut s = State::new("alice", T0, 100, 30, true);
    assert_eq!(activity_since(&mut s), T0 - 10 * HOUR, "UTC: midnight UTC");
    let mut s = State::new("alice", T0, 100, 30, true);
    s.zone = zone(1);
    assert_eq!(activity_since(&mut s), T0 - 11 * HOUR, "UTC+1");
    // ... and 22:00 on the 21st in UTC-12, whose day began at 12:00 UTC on the 21st.
    let mut s = State::new("alice", T0, 100, 30, true);
    s.zone = zone(-12);
    assert_eq!(activity_since(&mut s), T0 - 22 * HOUR, "UTC-12");
}

#[test]
fn the_detail_pane_shows_local_times() {
    let mut s = State::new("alice", T0, 100, 30, true);
    s.zone = zone(2);
    let it = item(7, Some("alice"));
    update(
        &mut s,
        Msg::Opened {
            taken: true,
            result: Ok((it, vec![])),
        },
    );
    let d = s.detail.as_ref().expect("open");
    let meta = d
        .lines
        .iter()
        .find(|l| l.text.starts_with("created "))
        .expect("a created line");
    // Created 09:00 UTC = 11:00 in UTC+2.
    assert!(meta.text.contains("2026-11-22 11:00"), "{meta:?}");
}

/// Long titles; bob holds #2 (25 minutes left), carol's lock on #3 expired 15 minutes ago,
/// #5 is done and was due an hour ago.
fn narrow_world() -> (Db, Clock) {
    let db = Db::new();
    let clock = Clock::at(T0 - 120 * MIN);
    let mut feeder = db.store("feeder", &clock);
    add_items(
        &mut feeder,
        "helpdesk",
        &[
            "Printer on floor 3 jams when printing double-sided from the finance laptops",
            "VPN drops every 10 minutes for everybody working from the Ghent office",
            "New laptop for Sam, who starts on Monday in the verification team",
        ],
    );
    let mut due = NewItem::titled("Verify VAT number DE123456789 for supplier Nordlicht GmbH");
    due.queue = "verification".into();
    due.due_at = Some(T0 - 30 * MIN);
    feeder.add(&due).unwrap();
    let mut done = NewItem::titled("Pick & pack order #A-1001 (3 items, gift wrapped)");
    done.queue = "fulfilment".into();
    done.due_at = Some(T0 - 60 * MIN);
    let done = feeder.add(&done).unwrap().id;
    let mut dave = db.store("dave", &clock);
    let it = dave.take(done).unwrap();
    dave.complete(done, it.lock_token, None).unwrap();
    clock.set(T0 - 45 * MIN);
    db.store("carol", &clock).take(3).unwrap();
    clock.set(T0 - 5 * MIN);
    db.store("bob", &clock).take(2).unwrap();
    clock.set(T0);
    (db, clock)
}

/// The TITLE cells of a list screen (the text between the QUEUE and LOCK columns'
/// starts, as the header places them).
fn title_width(text: &str) -> usize {
    let header = text.lines().nth(1).unwrap();
    let start = header.find("TITLE").unwrap();
    let end = header.find("LOCK").unwrap();
    end - start - 1
}

#[test]
fn at_80_columns_the_title_gets_the_room_and_the_rest_is_abbreviated() {
    let (db, clock) = narrow_world();
    let s = start(db.store("alice", &clock), &clock, 80, 12, true);
    let text = screen(&s.state);
    insta::assert_snapshot!("queue_80", text);
    assert!(title_width(&text) >= 30, "{text}");
    assert!(text.contains("bob 25m"), "{text}");
    assert!(text.contains("EXP carol +15m"), "{text}");
    assert!(text.contains("LATE 30m"), "{text}");
    assert!(text.contains("Printer on floor 3 jams"), "{text}");
    assert!(text.contains('…'), "a cut title ends in …: {text}");
}

#[test]
fn at_60_columns_the_title_still_shows() {
    let (db, clock) = narrow_world();
    let s = start(db.store("alice", &clock), &clock, 60, 12, true);
    let text = screen(&s.state);
    insta::assert_snapshot!("queue_60", text);
    assert!(title_width(&text) >= 20, "{text}");
    assert!(text.contains("Printer on floor"), "{text}");
    assert!(text.contains("bob 25m"), "{text}");
    for line in text.lines() {
        assert!(line.chars().count() <= 60, "{line}");
    }
    let mut s = s;
    s.step(press('3'));
    let text = screen(&s.state);
    insta::assert_snapshot!("locks_60", text);
    assert!(text.contains("EXP +15m"), "{text}");
    assert!(text.contains("VPN drops"), "{text}");
}

#[test]
fn wide_screens_keep_every_column_at_full_size() {
    let (db, clock) = narrow_world();
    let s = start(db.store("alice", &clock), &clock, 160, 12, true);
    let text = screen(&s.state);
    assert!(text.contains("bob, 25m00s left"), "{text}");
    assert!(text.contains("EXPIRED carol +15m00s"), "{text}");
    assert!(text.contains("AGE") && text.contains("QUEUE"), "{text}");
}

#[test]
fn finished_items_are_neither_free_nor_late() {
    let (db, clock) = narrow_world();
    let mut s = start(db.store("alice", &clock), &clock, 100, 12, true);
    s.step(press('/'));
    type_text(&mut s, "state:done");
    s.step(code(KeyCode::Enter));
    s.settle(std::time::Duration::from_secs(60));
    let text = screen(&s.state);
    let row = text
        .lines()
        .find(|l| l.contains("Pick & pack"))
        .unwrap_or_else(|| panic!("the done item is listed: {text}"));
    assert!(row.trim_end().ends_with("done"), "{row}");
    assert!(!row.contains("LATE") && !row.contains("free"), "{row}");
}
