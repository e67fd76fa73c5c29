//! The TUI as a person reads and types it: local times, narrow screens, keys that match
//! habits. `app::update` with a fixed clock, and screens drawn into a `TestBackend`.

use caseload::app::{Effect, Msg, State, update};
use caseload::domain::time::Zone;
use caseload::domain::{Item, ItemState};
use chrono::FixedOffset;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

const T0: i64 = 1_795_341_600_000; // 2026-11-22T10:00:00Z
const MIN: i64 = 60_000;
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
