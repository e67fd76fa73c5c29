//! Supervisor timings on a 1,000,000-item file with 10,000 current locks (run in
//! release, as `cargo bench` does):
//!
//! ```text
//! cargo bench --bench supervisor
//! ```
//!
//! Starts from the 1M file of `benches/tui.rs` (`target/tui-bench-1m.db`, built here
//! the same way when missing) and works on a copy, `target/supervisor-bench-1m.db`, so the
//! other benchmark's file keeps no locks. Measures the Locks and Stats views (query and
//! draw, through the real session), and a bulk release of 1,000 locks via `unlock_many`
//! while another connection claims in a loop, reporting that claimer's worst latency.

// Benchmarks may unwrap (a panic is the failure, with its message), be long, and drive
// the OS directly (kill, mounts, setuid); the product's C calls are all in src/sys.rs.
#![allow(clippy::unwrap_used, clippy::too_many_lines, unsafe_code)]

pub mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use caseload::domain::{Actor, Role, SeenLock};
use caseload::store::sqlite::{OpenOptions, SqliteStore};
use caseload::store::{ListFilter, Reads, StateFilter, TakeNext, Writes};
use common::{avg, key};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;

const N: usize = 1_000_000;
const LOCKS: usize = 10_000;
const BULK: usize = 1_000;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target")
}

fn base_path() -> PathBuf {
    common::million_item_db()
}

fn bench_path() -> PathBuf {
    root().join("supervisor-bench-1m.db")
}

fn open_at(path: &Path, user: &str) -> SqliteStore {
    SqliteStore::open(path, Actor::new(user, user), &OpenOptions::default()).unwrap()
}

/// A copy of the base file with exactly 10,000 locks held by 50 users, taken over the
/// last hour (so about half are expired under the 30-minute default), each with its
/// `locked` event.
fn prepare() -> SqliteStore {
    let path = bench_path();
    {
        // A consistent copy even if the base is in WAL mode.
        let mut base = open_at(&base_path(), "feeder");
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(path.with_extension("db-wal"));
        let _ = std::fs::remove_file(path.with_extension("db-shm"));
        base.backup(&path).unwrap();
    }
    let mut feeder = open_at(&path, "feeder");
    feeder.set_role("sup", Role::Supervisor).ok();
    let now = feeder.now().unwrap();
    let c = feeder.connection();
    c.execute_batch("BEGIN IMMEDIATE").unwrap();
    c.execute(
        "UPDATE items SET lock_user = NULL, lock_time = NULL, lock_expires_at = NULL \
         WHERE lock_user IS NOT NULL",
        [],
    )
    .unwrap();
    c.execute(
        "CREATE TEMP TABLE bench_locks AS SELECT id FROM items WHERE state = 'open' \
         ORDER BY id LIMIT ?1",
        [LOCKS as i64],
    )
    .unwrap();
    c.execute(
        "UPDATE items SET lock_user = 'user' || (id % 50), \
         lock_time = ?1 - (id % 3600) * 1000, lock_token = lock_token + 1, \
         lock_expires_at = ?1 - (id % 3600) * 1000 + 1800000 \
         WHERE id IN (SELECT id FROM bench_locks)",
        [now],
    )
    .unwrap();
    c.execute(
        "INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
         SELECT id, lock_time, lock_user, lock_user, 'locked', '{}' FROM items \
         WHERE id IN (SELECT id FROM bench_locks)",
        [],
    )
    .unwrap();
    c.execute_batch("DROP TABLE bench_locks; COMMIT").unwrap();
    feeder
}

fn main() {
    let (_, setup) = {
        let t = Instant::now();
        (prepare(), t.elapsed())
    };
    let path = bench_path();
    let (w, h) = (120, 40);
    let mut store = open_at(&path, "sup");
    let held = store
        .count(&ListFilter {
            state: StateFilter::Locked,
            ..ListFilter::default()
        })
        .unwrap();
    assert_eq!(held as usize, LOCKS);
    let mut s = common::live_session(store, w, h, true);
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();

    // Locks view: switching to it queries the window, the count and the lock starts.
    let mut worst_locks = Duration::ZERO;
    let locks_view = avg(20, || {
        s.step(key(KeyCode::Char('1')));
        let t0 = Instant::now();
        s.step(key(KeyCode::Char('3')));
        caseload::tui::draw(&mut t, &s.state).unwrap();
        worst_locks = worst_locks.max(t0.elapsed());
    });
    assert_eq!(s.state.panes.locks.total as usize, LOCKS);
    let locks_pgdn = avg(20, || {
        s.step(key(KeyCode::PageDown));
        caseload::tui::draw(&mut t, &s.state).unwrap();
    });
    s.step(key(KeyCode::Char('/')));
    for c in "holder:user7 state:expired".chars() {
        s.step(key(KeyCode::Char(c)));
    }
    let t0 = Instant::now();
    s.step(key(KeyCode::Enter));
    caseload::tui::draw(&mut t, &s.state).unwrap();
    let locks_filtered = t0.elapsed();

    // Stats view: the whole `stats()` query plus the draw.
    // The first load in a session counts the last 24 hours' completions from scratch;
    // later refreshes read only the events since (see `CompletionCounts` in sqlite.rs).
    s.step(key(KeyCode::Char('1')));
    let t0 = Instant::now();
    s.step(key(KeyCode::Char('4')));
    caseload::tui::draw(&mut t, &s.state).unwrap();
    let stats_first = t0.elapsed();
    let mut worst_stats = Duration::ZERO;
    let stats_view = avg(10, || {
        s.step(key(KeyCode::Char('1')));
        let t0 = Instant::now();
        s.step(key(KeyCode::Char('4')));
        caseload::tui::draw(&mut t, &s.state).unwrap();
        worst_stats = worst_stats.max(t0.elapsed());
    });
    let stats = s.state.stats.clone().unwrap();
    assert_eq!(stats.locked as usize, LOCKS);
    drop(s);
    let mut store = open_at(&path, "sup");

    // Bulk release of 1,000 locks while another connection claims in a loop.
    let locks: Vec<SeenLock> = store
        .list(&ListFilter {
            state: StateFilter::Locked,
            limit: BULK,
            ..ListFilter::default()
        })
        .unwrap()
        .iter()
        .filter_map(SeenLock::of)
        .collect();
    assert_eq!(locks.len(), BULK);
    let running = Arc::new(AtomicBool::new(true));
    let epoch = Instant::now();
    let claimer = {
        let running = running.clone();
        let path = path.clone();
        std::thread::spawn(move || {
            let mut c = open_at(&path, "claimer");
            // (start, end) of every claim, from `epoch`.
            let mut claims = Vec::new();
            while running.load(Ordering::SeqCst) {
                let t0 = epoch.elapsed();
                let item = c
                    .take_next(&TakeNext {
                        queue: Some("helpdesk".into()),
                        skip: vec![],
                    })
                    .unwrap();
                claims.push((t0, epoch.elapsed()));
                c.release(item.id, item.lock_token).unwrap();
            }
            claims
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let bulk_from = epoch.elapsed();
    let released = store.unlock_many(&locks, "benchmark bulk release").unwrap();
    let bulk_to = epoch.elapsed();
    let bulk = bulk_to - bulk_from;
    std::thread::sleep(Duration::from_millis(300));
    running.store(false, Ordering::SeqCst);
    let all = claimer.join().unwrap();
    let claims = all.len();
    let worst_claim = all.iter().map(|(a, b)| *b - *a).max().unwrap_or_default();
    // Claims whose wait overlapped the bulk transaction.
    let during: Vec<Duration> = all
        .iter()
        .filter(|(a, b)| *b >= bulk_from && *a <= bulk_to)
        .map(|(a, b)| *b - *a)
        .collect();
    let worst_claim_during = during.iter().max().copied().unwrap_or_default();
    let claims_during = during.len();
    assert_eq!(released, BULK);

    println!("items: {N}, current locks: {held}");
    println!("setup (copy + 10k locks): {setup:?}");
    println!(
        "Locks view (switch: window + count + lock starts + draw, {w}x{h}): avg {locks_view:?}, worst {worst_locks:?}"
    );
    println!("Locks view PgDn (next window + draw): avg {locks_pgdn:?}");
    println!("Locks view filter holder:user7 state:expired (Enter): {locks_filtered:?}");
    println!("Stats view, first in the session (stats() from scratch + draw): {stats_first:?}");
    println!(
        "Stats view, later (switch: stats() + draw): avg {stats_view:?}, worst {worst_stats:?}"
    );
    println!("bulk release of {BULK} locks via unlock_many (one transaction): {bulk:?}");
    println!(
        "claimer: {claims} claims, worst claim latency {worst_claim:?}; {claims_during} overlapped the bulk, worst of those {worst_claim_during:?}"
    );
}
