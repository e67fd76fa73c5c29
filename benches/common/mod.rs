//! What the two screen benchmarks share: the 1,000,000-item file, a live session on it
//! key events and timing.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use caseload::domain::{Actor, NewItem};
use caseload::store::sqlite::{OpenOptions, SqliteStore};
use caseload::store::{AddOptions, Reads, Store, Writes};
use caseload::tui::Session;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

/// A session over `store` on the host's clock, once it has loaded its first screen.
pub fn live_session(store: impl Store + 'static, width: u16, height: u16, color: bool) -> Session {
    let clock = caseload::tui::system_clock();
    let mut s = Session::start(Box::new(store), clock, width, height, color).unwrap();
    s.settle(Duration::from_secs(60));
    s
}

/// A key press without modifiers.
pub fn key(c: KeyCode) -> Option<Event> {
    Some(Event::Key(KeyEvent::new(c, KeyModifiers::NONE)))
}

/// The result of `f` and how long it took.
pub fn time<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let r = f();
    (r, t.elapsed())
}

/// The mean time of `n` runs of `f`.
pub fn avg(n: u32, mut f: impl FnMut()) -> Duration {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed() / n
}

/// The benchmarks' file of 1,000,000 open items over three queues
/// (`target/tui-bench-1m.db`, or `CASELOAD_BENCH_DB`), built or topped up on first use.
pub fn million_item_db() -> PathBuf {
    const N: usize = 1_000_000;
    let path = std::env::var_os("CASELOAD_BENCH_DB")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/tui-bench-1m.db")
        });
    let mut s = SqliteStore::open(
        &path,
        Actor::new("feeder", "feeder"),
        &OpenOptions::default(),
    )
    .unwrap();
    let have = s
        .count(&caseload::store::ListFilter {
            state: caseload::store::StateFilter::All,
            ..Default::default()
        })
        .unwrap() as usize;
    let queues = ["helpdesk", "verification", "fulfilment"];
    let mut i = have;
    while i < N {
        let batch: Vec<NewItem> = (i..(i + 10_000).min(N))
            .map(|k| {
                let mut it = NewItem::titled(&format!(
                    "Item {k}: check the thing for customer {}",
                    k % 9973
                ));
                it.queue = queues[k % 3].to_string();
                it.priority = (k % 5) as i64;
                it
            })
            .collect();
        i += batch.len();
        s.add_items(&batch, AddOptions::creating_queues()).unwrap();
    }
    path
}
