//! TUI timings on a 1,000,000-item file, in a release build as `cargo bench` makes:
//!
//! ```text
//! cargo bench --bench tui
//! ```
//!
//! The file is built once at `target/tui-bench-1m.db` (or `CASELOAD_BENCH_DB`) and reused.

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
