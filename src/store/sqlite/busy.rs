//! Waiting for the write lock: a busy handler of short jittered sleeps (SQLite's default
//! back-off lets one process starve for seconds while others re-take the lock), and a
//! retry for the cases the handler does not cover (WAL recovery).

use std::time::{Duration, Instant};

use super::map_err;
use crate::store::error::Result;

/// How long a busy database is retried before giving up.
pub(super) const BUSY_PATIENCE: Duration = Duration::from_secs(30);

/// The busy handler: short sleeps with jitter so that waiting processes take turns (the
/// benchmark's raw baseline uses it too).
pub fn busy_sleep(attempt: i32) -> bool {
    // ~30 s of patience at an average of ~300 µs a try.
    if attempt > 100_000 {
        return false;
    }
    let jitter = jitter_micros(400);
    std::thread::sleep(Duration::from_micros(100 + jitter));
    true
}

pub(super) fn jitter_micros(max: u64) -> u64 {
    use std::cell::Cell;
    thread_local! {
        static STATE: Cell<u64> = Cell::new(
            (std::process::id() as u64) << 32
                ^ std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.subsec_nanos() as u64)
                    .unwrap_or(7)
                | 1,
        );
    }
    STATE.with(|s| {
        let mut x = s.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.set(x);
        x % max
    })
}

/// Retries `f` while SQLite reports the database busy (cases the handler cannot cover,
/// such as WAL recovery), for up to [`BUSY_PATIENCE`].
pub(super) fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> Result<T> {
    let start = Instant::now();
    loop {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) if is_busy(&e) && start.elapsed() < BUSY_PATIENCE => {
                std::thread::sleep(Duration::from_micros(200 + jitter_micros(800)));
            }
            Err(e) => return Err(map_err(e)),
        }
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}
