//! After an import's rows: the search index brought up to date in write transactions of
//! its own (issue 31 §1), so that a search right after an import reads the index instead
//! of scanning every new row. Each batch is one short transaction (sized to take about
//! [`INDEX_TARGET`]), so other writers and claims get the write lock between them, and
//! holds no more than one batch's text in memory. An import cut short before or during
//! this leaves its rows searchable all the same: a search scans what the index has not
//! reached, and the next import, or a TUI left idle, indexes it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{BatchSizer, Progress};
use crate::store::{Store, StoreError};

/// How long one indexing transaction should hold the write lock. Far longer than a batch
/// of rows ([`super::BATCH_TARGET`]): the index writes one row per trigram per
/// transaction (src/store/sqlite/postings.rs), so fewer and larger transactions write
/// fewer rows and a lookup reads fewer of them; a claim made meanwhile waits for at most
/// one of them, well within the busy patience.
pub const INDEX_TARGET: Duration = Duration::from_secs(1);

/// The most rows one indexing transaction takes (the trigram lists of 20,000 items of
/// 1 KiB held in memory: ~10 MB), and the first batch's size.
const MAX_ROWS: usize = 20_000;
const FIRST_ROWS: usize = 2_000;

/// Indexes every row the search index is behind on (the rows just imported, and any
/// others: rows changed since they were indexed, a tail left by an earlier import), in
/// batches; `expected` is how many the progress line counts on. Returns how many rows
/// were indexed, or, when a batch fails, how many were before it and why (what the
/// batches before it indexed stays indexed).
pub fn index_new_rows(
    store: &mut dyn Store,
    expected: u64,
    progress: &mut dyn Progress,
) -> Result<u64, (u64, StoreError)> {
    let mut sizer = BatchSizer::aiming_at(INDEX_TARGET, FIRST_ROWS, MAX_ROWS);
    let mut done = 0u64;
    progress.indexing(0, expected);
    loop {
        let started = Instant::now();
        let n = (store.index_search(sizer.next_len())).map_err(|e| (done, e))?;
        if n == 0 {
            return Ok(done);
        }
        sizer.record(n, started.elapsed());
        done += n as u64;
        progress.indexing(done, expected.max(done));
    }
}

/// How often the indexer beside looks whether the import is done while it waits.
const BESIDE_LOOK: Duration = Duration::from_millis(50);

/// The search indexer beside an import (issue 31 §1, issue 32 §4): on a connection of its
/// own, it indexes the rows the import's batches have committed ([`Store::index_search`])
/// while the import writes the next ones, so that the import takes about as long as the
/// slower of the two instead of their sum. Its pace is the backend's
/// ([`Store::beside_pace`]): on PostgreSQL batches of 500 rows, one statement that locks
/// no item (a change of one of its items waits for it, ~0.25 s on a quiet machine); on
/// SQLite batches of up to 20,000, read and cut into trigrams outside the write lock,
/// so that only their writing takes turns with the import's. [`Beside::finish`] waits for it to index
/// every row committed before it was called.
pub struct Beside {
    done: Arc<AtomicBool>,
    indexed: Arc<AtomicU64>,
    thread: JoinHandle<Result<u64, (u64, StoreError)>>,
}

/// Starts indexing beside an import on `store` (a second connection): the rows added
/// after it started (`all`: every row left unindexed, for an import that keeps ids,
/// which may be below the others). Rows others left unindexed are not its own: an idle
/// TUI indexes them.
pub fn index_beside(mut store: Box<dyn Store + Send>, all: bool) -> Beside {
    let done = Arc::new(AtomicBool::new(false));
    let indexed = Arc::new(AtomicU64::new(0));
    let (stop, count) = (done.clone(), indexed.clone());
    let thread = std::thread::spawn(move || {
        let above = match all {
            true => 0,
            false => store.last_item_id().map_err(|e| (0, e))?,
        };
        let (most, idle) = store.beside_pace();
        let mut total = 0u64;
        loop {
            // Read before the batch: once the import has said it is done, a batch that
            // finds nothing has seen every row it committed.
            let last = stop.load(Ordering::SeqCst);
            match store.index_search_above(above, most) {
                Ok(0) if last => return Ok(total),
                Ok(n) => {
                    total += n as u64;
                    count.store(total, Ordering::Relaxed);
                    if n < most && !last {
                        // Caught up: let the import commit more (a larger batch next),
                        // looking meanwhile whether it is done.
                        let until = Instant::now() + idle;
                        while Instant::now() < until && !stop.load(Ordering::SeqCst) {
                            std::thread::sleep(BESIDE_LOOK.min(idle));
                        }
                    }
                }
                Err(e) => return Err((total, e)),
            }
        }
    });
    Beside {
        done,
        indexed,
        thread,
    }
}

impl Beside {
    /// Tells the indexer the import wrote its last rows and waits until it has indexed
    /// them all (`expected` is what the progress line counts on). Returns how many rows
    /// it indexed, or how many before it failed and why.
    pub fn finish(
        self,
        expected: u64,
        progress: &mut dyn Progress,
    ) -> Result<u64, (u64, StoreError)> {
        self.done.store(true, Ordering::SeqCst);
        while !self.thread.is_finished() {
            let n = self.indexed.load(Ordering::Relaxed);
            progress.indexing(n, expected.max(n));
            std::thread::sleep(Duration::from_millis(100));
        }
        match self.thread.join() {
            Ok(out) => out,
            Err(_) => Err((
                self.indexed.load(Ordering::Relaxed),
                StoreError::Invalid("the search indexer stopped (panicked)".into()),
            )),
        }
    }
}
