//! A screen's refresh reads from one snapshot: what another program commits while it
//! reads shows in the next refresh, never half in this one (a count that disagrees with
//! its rows, Stats that disagree with the list).

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::support::backend::{Adds, Backend, add, setup};
use caseload::domain::{ItemState, NewItem};
use caseload::store::ListFilter;

conformance!(
    a_snapshot_reads_one_state_of_the_database,
    a_snapshot_ends_on_every_path
);

/// The open items Stats counts (its type is not named outside the crate).
macro_rules! open_count {
    ($stats:expr) => {
        $stats
            .by_state
            .iter()
            .filter(|c| c.state == ItemState::Open)
            .map(|c| c.count)
            .sum::<u64>()
    };
}

fn a_snapshot_reads_one_state_of_the_database(b: &dyn Backend) {
    let mut boss = setup(b);
    let mut other = b.open("alice", 0);
    add(&mut *boss, "one");
    add(&mut *boss, "two");
    let all = ListFilter {
        limit: 10,
        ..ListFilter::default()
    };
    let mut seen = None;
    boss.snapshot(&mut |r| {
        let rows = r.list(&all)?.len();
        // Another connection commits while the snapshot reads.
        other.add(&NewItem::titled("three")).unwrap();
        let total = r.count(&all)?;
        let stats = open_count!(r.stats()?);
        let again = r.list(&all)?.len();
        seen = Some((rows, total, stats, again));
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, Some((2, 2, 2, 2)), "{}", b.name());
    // The snapshot ended: the next read sees the new item.
    assert_eq!(boss.count(&all).unwrap(), 3);
    assert_eq!(open_count!(boss.stats().unwrap()), 3);
}

fn a_snapshot_ends_on_every_path(b: &dyn Backend) {
    let mut boss = setup(b);
    add(&mut *boss, "one");
    let all = ListFilter {
        limit: 10,
        ..ListFilter::default()
    };
    // An error inside: the error comes out, and the snapshot is over.
    let e = boss
        .snapshot(&mut |r| {
            r.item(999)?;
            Ok(())
        })
        .unwrap_err();
    assert_eq!(e.exit_code(), caseload::store::exit::ERROR, "{e}");
    // A panic inside: the snapshot is over all the same; the store reads and writes on.
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        boss.snapshot(&mut |r| {
            r.list(&all)?;
            panic!("a bug in a screen's refresh");
        })
    }));
    assert!(panicked.is_err());
    let mut other = b.open("alice", 0);
    add(&mut *other, "two");
    assert_eq!(boss.count(&all).unwrap(), 2, "{}: a new snapshot", b.name());
    add(&mut *boss, "three");
    assert_eq!(other.count(&all).unwrap(), 3);
}
