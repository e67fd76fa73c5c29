//! TUI timings on a 1,000,000-item file, in a release build as `cargo bench` makes:
//!
//! ```text
//! cargo bench --bench tui
//! ```
//!
//! The file is built once at `target/tui-bench-1m.db` (or `CASELOAD_BENCH_DB`) and reused.
//! `cargo bench --bench tui -- form` runs only the fields form's section (no file needed):
//! a detail pane with 50 fields against the same pane without them, in the same run.

// Benchmarks may unwrap (a panic is the failure, with its message), be long, and drive
// the OS directly (kill, mounts, setuid); the product's C calls are all in src/sys.rs.
#![allow(clippy::unwrap_used, clippy::too_many_lines, unsafe_code)]

pub mod common;

use caseload::domain::Actor;
use caseload::store::sqlite::{OpenOptions, SqliteStore};
use common::{avg, key, time};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;

const N: usize = 1_000_000;

fn open(user: &str) -> SqliteStore {
    SqliteStore::open(
        &common::million_item_db(),
        Actor::new(user, user),
        &OpenOptions::default(),
    )
    .unwrap()
}

fn main() {
    form_section();
    if std::env::args().any(|a| a == "form") {
        return;
    }
    common::million_item_db();
    let (w, h) = (120, 40);
    let ((), first) = time(|| {
        let store = open("alice");
        let s = common::live_session(store, w, h, true);
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        caseload::tui::draw(&mut t, &s.state).unwrap();
    });
    let store = open("alice");
    let mut s = common::live_session(store, w, h, true);
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    let frame = avg(200, || caseload::tui::draw(&mut t, &s.state).unwrap());
    let total = s.state.panes.queue.total;
    assert_eq!(total as usize, N.max(total as usize));
    let j_in_window = avg(30, || {
        s.step(key(KeyCode::Char('j')));
        caseload::tui::draw(&mut t, &s.state).unwrap();
    });
    // Past the window every j re-queries the window and the count.
    let j_scrolling = avg(100, || {
        s.step(key(KeyCode::Char('j')));
        caseload::tui::draw(&mut t, &s.state).unwrap();
    });
    let pgdn = avg(50, || {
        s.step(key(KeyCode::PageDown));
        caseload::tui::draw(&mut t, &s.state).unwrap();
    });
    let ((), end) = time(|| {
        s.step(key(KeyCode::Char('G')));
        caseload::tui::draw(&mut t, &s.state).unwrap();
    });
    // Deep in the list every window query pays for its OFFSET.
    let up_at_end = avg(40, || {
        s.step(key(KeyCode::PageUp));
        caseload::tui::draw(&mut t, &s.state).unwrap();
    });
    s.step(key(KeyCode::Char('g')));
    for _ in 0..(500_000 / 36) {
        s.state.panes.queue.selected += 36;
    }
    let ((), middle) = time(|| {
        s.step(key(KeyCode::Char('j')));
        caseload::tui::draw(&mut t, &s.state).unwrap();
    });
    s.step(key(KeyCode::Char('g')));
    s.step(key(KeyCode::Char('/')));
    let filter_key = avg(20, || {
        s.step(key(KeyCode::Char('7')));
        caseload::tui::draw(&mut t, &s.state).unwrap();
    });
    for _ in 0..20 {
        s.step(key(KeyCode::Backspace));
    }
    for c in "queue:helpdesk".chars() {
        s.step(key(KeyCode::Char(c)));
    }
    let ((), apply_queue) = time(|| {
        s.step(key(KeyCode::Enter));
        caseload::tui::draw(&mut t, &s.state).unwrap();
    });
    s.step(key(KeyCode::Char('/')));
    for c in " customer 42".chars() {
        s.step(key(KeyCode::Char(c)));
    }
    let ((), apply_text) = time(|| {
        s.step(key(KeyCode::Enter));
        caseload::tui::draw(&mut t, &s.state).unwrap();
    });
    let tick = avg(50, || {
        s.step(None);
        caseload::tui::draw(&mut t, &s.state).unwrap();
    });
    println!("items: {total}");
    println!("first frame (open + resume + first window + draw): {first:?}");
    println!("draw one frame ({w}x{h}, TestBackend): {frame:?}");
    println!("key-to-frame j (within window): {j_in_window:?}");
    println!("key-to-frame j (scrolling, re-query): {j_scrolling:?}");
    println!("key-to-frame PgDn: {pgdn:?}");
    println!("key-to-frame G (last of 1M): {end:?}");
    println!("key-to-frame PgUp near the end (OFFSET ~1M): {up_at_end:?}");
    println!("key-to-frame j jumping to row ~500k (OFFSET ~500k): {middle:?}");
    println!("key-to-frame filter keystroke (typing at /): {filter_key:?}");
    println!("apply filter queue:helpdesk (Enter): {apply_queue:?}");
    println!("apply filter text over 1M (Enter): {apply_text:?}");
    println!("idle tick (marker check + draw): {tick:?}");
}

/// The detail's form at 50 fields: drawing the detail of an item whose queue defines 50
/// fields of every type (a third of the values breaking their rules, each checked as the
/// frame is drawn) against drawing the same item with no fields defined.
fn form_section() {
    use caseload::app::{Held, Msg, Snapshot, State, update};
    use caseload::domain::queue_fields::{FieldDef, FieldType};
    let (w, h) = (120, 64);
    let mut defs = Vec::new();
    let mut params = serde_json::Map::new();
    for i in 0..50 {
        let name = format!("f{i:02}");
        let (kind, good, bad) = match i % 8 {
            0 => (FieldType::Text, "HU11816602", "HU118166O02"),
            1 => (FieldType::Email, "a.b@example.com", "a.b@example,com"),
            2 => (FieldType::Phone, "+49 30 901820", "030 901820"),
            3 => (
                FieldType::Iban,
                "DE44500105175407324931",
                "DE44500105175407324932",
            ),
            4 => (FieldType::Decimal, "12.50", "12,5x"),
            5 => (FieldType::Date, "2026-11-27", "27.11.2026"),
            6 => (FieldType::Url, "https://example.com/a", "example dot com"),
            _ => (FieldType::Integer, "42", "forty-two"),
        };
        let mut d = FieldDef::new(&name, kind);
        d.label = Some(format!("Field number {i}"));
        if kind == FieldType::Text {
            d.pattern = Some("^[A-Z]{2}[0-9]{8,12}$".into());
        }
        params.insert(name, (if i % 3 == 0 { bad } else { good }).into());
        defs.push(("q".to_string(), d));
    }
    let mut item = caseload::domain::Item {
        id: 42,
        queue: "q".into(),
        title: "A record with 50 fields".into(),
        body: "Check every field.".into(),
        params: serde_json::Value::Object(params).to_string(),
        lock_user: Some("alice".into()),
        lock_time: Some(0),
        lock_expires_at: Some(1_800_000),
        lock_token: 1,
        ..caseload::domain::Item::default()
    };
    item.created_by = "feeder".into();
    let state = |fields: Vec<(String, FieldDef)>| {
        let mut s = State::new("alice", 0, w, h, true);
        update(
            &mut s,
            Msg::Refreshed(Box::new(Snapshot {
                fields: Some(fields),
                ..Snapshot::default()
            })),
        );
        s.held.insert(42, Held::of(&item));
        update(
            &mut s,
            Msg::Opened {
                taken: true,
                result: Ok((item.clone(), vec![])),
            },
        );
        s
    };
    let with = state(defs);
    let without = state(Vec::new());
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    caseload::tui::draw(&mut t, &with).unwrap();
    let shown = (0..h)
        .map(|y| {
            (0..w)
                .map(|x| t.backend().buffer()[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .filter(|l| l.contains("Field number"))
        .count();
    assert_eq!(shown, 50, "every field on screen in one frame");
    // Alternate blocks so that a busy machine weighs on both alike.
    let (mut a, mut b) = (std::time::Duration::ZERO, std::time::Duration::ZERO);
    for _ in 0..10 {
        a += avg(50, || caseload::tui::draw(&mut t, &with).unwrap());
        b += avg(50, || caseload::tui::draw(&mut t, &without).unwrap());
    }
    let (a, b) = (a / 10, b / 10);
    println!("draw the detail with a 50-field form ({w}x{h}): {a:?}");
    println!("draw the same detail without fields: {b:?}");
    println!(
        "form at 50 fields / no form: {:.2}x",
        a.as_secs_f64() / b.as_secs_f64()
    );
}
