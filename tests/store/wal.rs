//! The -wal of a database used only from the command line stays bounded: a short-lived
//! connection does not checkpoint when it closes (that would cost three more fsyncs per
//! call), but the last one to close checkpoints and truncates a -wal past the bound.

use crate::support::backend::Adds;
use caseload::domain::{Actor, NewItem};
use caseload::store::sqlite::OpenOptions;
use caseload::store::sqlite::WAL_BOUND;
use caseload::store::{Reads, SqliteStore, TakeNext, Writes};

fn wal_len(db: &std::path::Path) -> u64 {
    std::fs::metadata(format!("{}-wal", db.display())).map_or(0, |m| m.len())
}

fn open(db: &std::path::Path) -> SqliteStore {
    SqliteStore::open(db, Actor::new("ann", "ann"), &OpenOptions::default()).unwrap()
}

/// The command line's life cycle, in process: every claim and every complete opens the
/// file, writes one transaction and closes it, with no other connection open.
#[test]
fn one_connection_per_call_keeps_the_wal_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    let cycles = 150;
    {
        let mut s = open(&db);
        let items: Vec<NewItem> = (0..cycles)
            .map(|i| NewItem::titled(&format!("item {i}")))
            .collect();
        s.add_batch(&items).unwrap();
    }
    let (mut largest, mut grew) = (0, 0);
    let mut after_close = Vec::new();
    for _ in 0..cycles {
        let item = open(&db).take_next(&TakeNext::default()).unwrap();
        after_close.push(wal_len(&db));
        open(&db).complete(item.id, item.lock_token, None).unwrap();
        let len = wal_len(&db);
        after_close.push(len);
        grew += u64::from(len > largest);
        largest = largest.max(len);
    }
    // A transaction is a few pages: the -wal passes the bound by at most one of them.
    assert!(
        largest <= WAL_BOUND + 256 * 1024,
        "the -wal grew to {largest} bytes (bound {WAL_BOUND})"
    );
    // And it is not simply truncated on every close (that is the cost being saved).
    let kept = after_close.iter().filter(|&&l| l > 0).count();
    assert!(
        kept > after_close.len() / 2,
        "the -wal was empty after {} of {} calls",
        after_close.len() - kept,
        after_close.len()
    );
    assert!(grew > 0);
    let mut s = open(&db);
    assert_eq!(
        s.count(&caseload::store::ListFilter {
            state: caseload::store::StateFilter::Done,
            ..Default::default()
        })
        .unwrap(),
        cycles as u64
    );
}
