//! Helpers shared by the TUI tests: a temp database, stores with a controllable clock,
//! key events and a TestBackend screen.

use crate::support::backend::Adds;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use caseload::app::State;
use caseload::domain::{Actor, Item, NewItem};
use caseload::store::Store;
use caseload::store::sqlite::{OpenOptions, SqliteStore};
use caseload::tui::{EventSource, Session, run_loop};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

/// 2026-11-22T10:00:00Z.
pub const T0: i64 = 1_795_341_600_000;

/// The lock age of queue `q` in the TUI tests (600 s): what [`item`]'s locks were given.
pub const LOCK_AGE: i64 = 10 * super::MIN;

/// An open item of queue `q`, created an hour before T0, held by `holder` (if any) since
/// `lock_time` with `token`, its lock given [`LOCK_AGE`] (an assignment: none).
pub fn item(id: i64, holder: Option<&str>, lock_time: i64, token: i64) -> Item {
    let expires = if lock_time >= caseload::domain::lock::ASSIGNED {
        lock_time
    } else {
        lock_time + LOCK_AGE
    };
    Item {
        id,
        queue: "q".into(),
        title: format!("Item {id}"),
        body: "body".into(),
        params: "{}".into(),
        lock_user: holder.map(str::to_string),
        lock_time: holder.map(|_| lock_time),
        lock_expires_at: holder.map(|_| expires),
        lock_token: token,
        created_at: T0 - 60 * super::MIN,
        created_by: "feeder".into(),
        ..Item::default()
    }
}

/// A clock tests can move.
#[derive(Clone)]
pub struct Clock(pub Arc<AtomicI64>);

impl Clock {
    pub fn at(t: i64) -> Clock {
        Clock(Arc::new(AtomicI64::new(t)))
    }
    pub fn set(&self, t: i64) {
        self.0.store(t, Ordering::SeqCst);
    }
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
    pub fn now(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
    /// The same clock for the TUI's loop.
    pub fn ui(&self) -> caseload::tui::UiClock {
        let c = self.clone();
        Arc::new(move || c.now())
    }
}

/// A session over `store` whose countdowns run on `clock`.
pub fn start(store: SqliteStore, clock: &Clock, width: u16, height: u16, color: bool) -> Session {
    let mut s = Session::start(Box::new(store), clock.ui(), width, height, color).unwrap();
    s.settle(std::time::Duration::from_secs(60));
    s
}

/// A temp database file.
pub struct Db {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl Default for Db {
    fn default() -> Self {
        Self::new()
    }
}

impl Db {
    pub fn new() -> Db {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.db");
        Db { _dir: dir, path }
    }

    /// A store acting as `user` with the shared clock.
    pub fn store(&self, user: &str, clock: &Clock) -> SqliteStore {
        let c = clock.clone();
        SqliteStore::open_with_clock(
            &self.path,
            Actor::new(user, user),
            &OpenOptions::default(),
            Box::new(move || c.now()),
        )
        .unwrap()
    }
}

/// A session over `store` on the host's clock, once it has loaded its first screen.
pub fn live_session(store: impl Store + 'static, width: u16, height: u16, color: bool) -> Session {
    let clock = caseload::tui::system_clock();
    let mut s = Session::start(Box::new(store), clock, width, height, color).unwrap();
    s.settle(std::time::Duration::from_secs(60));
    s
}

/// Adds items titled `titles` (priority by order: first is highest) to queue `q`.
pub fn add_items(store: &mut dyn Store, q: &str, titles: &[&str]) -> Vec<i64> {
    titles
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut it = NewItem::titled(t);
            it.queue = q.to_string();
            it.priority = (titles.len() - i) as i64;
            store.add(&it).unwrap().id
        })
        .collect()
}

pub fn key(c: char) -> Option<Event> {
    Some(Event::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::NONE,
    )))
}

pub fn code(c: KeyCode) -> Option<Event> {
    Some(Event::Key(KeyEvent::new(c, KeyModifiers::NONE)))
}

pub fn ctrl(c: char) -> Option<Event> {
    Some(Event::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::CONTROL,
    )))
}

/// Types a string, one key event per character.
pub fn type_text(s: &mut Session, text: &str) {
    for c in text.chars() {
        s.step(key(c));
    }
}

/// Draws the state into a TestBackend of the state's size and returns the screen text.
pub fn screen(state: &State) -> String {
    let mut t = Terminal::new(TestBackend::new(state.width, state.height)).unwrap();
    caseload::tui::draw(&mut t, state).unwrap();
    buffer_text(t.backend())
}

/// The backend's cells as lines of text (trailing spaces trimmed).
pub fn buffer_text(b: &TestBackend) -> String {
    let buf = b.buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        for x in 0..buf.area.width {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Scripted input: `None` is a poll timeout (a tick).
pub struct Script(pub VecDeque<Option<Event>>);

impl EventSource for Script {
    fn next(&mut self, _timeout: Duration) -> std::io::Result<Option<Event>> {
        Ok(self.0.pop_front().unwrap_or_else(|| key('q')))
    }
    fn lockstep(&self) -> bool {
        true
    }
}

/// Stops the loop when the script is used up even if a popup would swallow the `q`.
pub struct Stop<'a>(pub Script, pub &'a AtomicBool);

impl EventSource for Stop<'_> {
    fn next(&mut self, timeout: Duration) -> std::io::Result<Option<Event>> {
        if self.0.0.is_empty() {
            self.1.store(true, Ordering::SeqCst);
            return Ok(None);
        }
        self.0.next(timeout)
    }
    fn lockstep(&self) -> bool {
        true
    }
}

/// Runs `events` through the real loop (`tui::run_loop`) on `term`, then draws the final
/// state too (the loop draws before each event) and returns the screen text.
pub fn drive(
    term: &mut Terminal<TestBackend>,
    s: &mut Session,
    events: Vec<Option<Event>>,
) -> String {
    s.state.quit = false;
    let stop = AtomicBool::new(false);
    let mut script = Stop(Script(events.into()), &stop);
    run_loop(term, s, &mut script, &stop).unwrap();
    caseload::tui::draw(term, &s.state).unwrap();
    buffer_text(term.backend())
}
