//! The event feed (`caseload events`): read by id, resumed from the last id processed, it
//! gives every event exactly once and in id order, also while writers commit out of id
//! order (PostgreSQL) and the reader restarts at any point.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::support::backend::{Backend, PgBackend, add, setup};
use caseload::store::feed::{Feed, FeedEvent};
use caseload::store::{Reads, StoreError, TakeNext};

conformance!(
    the_feed_gives_every_event_by_id_with_its_items_queue_and_title,
    a_follower_restarting_anywhere_under_concurrent_writers_reproduces_the_table
);

/// Every stored event, by id, read directly (the table the feed must reproduce).
fn table(s: &mut (impl Reads + ?Sized)) -> Vec<FeedEvent> {
    let last = s.feed_mark().unwrap().last_id;
    s.feed(0, last, usize::MAX >> 1).unwrap()
}

/// One poll of `feed`, appending what it gives to `out`.
fn poll(feed: &mut Feed, s: &mut (impl Reads + ?Sized), out: &mut Vec<i64>) {
    feed.poll(s, &mut |page| -> Result<(), StoreError> {
        out.extend(page.iter().map(|e| e.event.id));
        Ok(())
    })
    .unwrap();
}

/// Polls a feed resumed after the last id in `out` until no mark waits for a transaction
/// (other tests' transactions on the same server may hold it back for a while).
fn drain(s: &mut (impl Reads + ?Sized), out: &mut Vec<i64>) {
    let mut feed = Feed::after(out.last().copied().unwrap_or(0));
    drain_feed(&mut feed, s, out);
}

fn drain_feed(feed: &mut Feed, s: &mut (impl Reads + ?Sized), out: &mut Vec<i64>) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    poll(feed, s, out);
    while feed.waiting() {
        assert!(
            std::time::Instant::now() < deadline,
            "a transaction stayed open"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
        poll(feed, s, out);
    }
}

fn the_feed_gives_every_event_by_id_with_its_items_queue_and_title(b: &dyn Backend) {
    let mut boss = setup(b);
    let one = add(&mut *boss, "first thing");
    add(&mut *boss, "second thing");
    let item = boss.take_next(&TakeNext::default()).unwrap();
    assert_eq!(item.id, one);
    boss.complete(one, item.lock_token, Some("ok")).unwrap();
    let all = table(&mut *boss);
    let kinds: Vec<&str> = all.iter().map(|e| e.event.kind.as_str()).collect();
    assert_eq!(kinds, ["locked", "completed"]);
    assert!(
        all.iter()
            .all(|e| e.queue == "default" && e.title == "first thing")
    );
    let mut feed = Feed::paged(0, 1);
    let mut got = Vec::new();
    drain_feed(&mut feed, &mut *boss, &mut got);
    assert_eq!(got, all.iter().map(|e| e.event.id).collect::<Vec<_>>());
    // Resumed after the first: only the second.
    let mut feed = Feed::after(all[0].event.id);
    let mut rest = Vec::new();
    drain_feed(&mut feed, &mut *boss, &mut rest);
    assert_eq!(rest, [all[1].event.id]);
    assert_eq!(feed.cursor(), all[1].event.id);
}

/// Four writers add, take and complete items while a follower reads, restarting from the
/// last id it processed at pseudo-random points: what it gave is the table, in order,
/// without a gap or a repeat.
fn a_follower_restarting_anywhere_under_concurrent_writers_reproduces_the_table(b: &dyn Backend) {
    let _boss = setup(b);
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..4 {
        let mut s = b.open(&format!("writer{w}"), 0);
        let stop = stop.clone();
        writers.push(std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) && n < 60 {
                let id = add(&mut *s, &format!("w{w} #{n}"));
                let item = s.take(id).unwrap();
                if n % 3 == 0 {
                    s.release(id, item.lock_token).unwrap();
                } else {
                    s.complete(id, item.lock_token, None).unwrap();
                }
                n += 1;
            }
        }));
    }
    let mut reader = b.open("boss", 0);
    let mut rng = crate::support::Rand::seeded(0x2545_f491_4f6c_dd1d);
    let mut next = move |m: u64| rng.below(m);
    let mut got: Vec<i64> = Vec::new();
    let mut restarts = 0;
    while writers.iter().any(|w| !w.is_finished()) {
        // A restart: a new feed (and, sometimes, a new connection) after the last id.
        let mut feed = Feed::paged(got.last().copied().unwrap_or(0), 1 + next(5) as usize);
        if next(3) == 0 {
            reader = b.open("boss", 0);
        }
        restarts += 1;
        for _ in 0..next(4) {
            poll(&mut feed, &mut *reader, &mut got);
            std::thread::sleep(std::time::Duration::from_millis(next(3)));
        }
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    drain(&mut *reader, &mut got);
    let want: Vec<i64> = table(&mut *reader).iter().map(|e| e.event.id).collect();
    assert!(restarts > 10, "the follower restarted {restarts} times");
    assert_eq!(
        want.len(),
        4 * 60 * 2,
        "every write's event is in the table"
    );
    assert_eq!(got, want, "the follower's events are the table's, in order");
}

/// PostgreSQL hands out ids before commit: 42 may commit before 41. The follower holds
/// 42 back until 41's transaction ends, so a consumer resuming after 42 never misses 41;
/// also when the later id's transaction had the older transaction id (the case a filter
/// on the snapshot's xmin alone gets wrong).
#[test]
fn postgres_a_later_id_committing_first_waits_for_the_earlier() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    let mut boss = setup(&b);
    // The feed relies on ids being handed out in order: one at a time, no cache per
    // connection.
    let cache: i64 = b
        .admin()
        .query_one(
            "SELECT seqcache FROM pg_sequence \
             WHERE seqrelid = pg_get_serial_sequence('events', 'id')::regclass",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(cache, 1);
    let item = add(&mut *boss, "shared");
    let insert = format!(
        "INSERT INTO events (item_id, at, actor, os_user, kind) \
         VALUES ({item}, 0, 'raw', 'raw', 'noted') RETURNING id"
    );
    let mut got = Vec::new();
    for round in 0..6 {
        let (mut a, mut c) = (b.admin(), b.admin());
        let mut ta = a.transaction().unwrap();
        let mut tc = c.transaction().unwrap();
        if round % 2 == 1 {
            // The later id's writer gets its transaction id first.
            tc.query_one("SELECT pg_current_xact_id()::text", &[])
                .unwrap();
            ta.query_one("SELECT pg_current_xact_id()::text", &[])
                .unwrap();
        }
        let early: i64 = ta.query_one(&insert, &[]).unwrap().get(0);
        let late: i64 = tc.query_one(&insert, &[]).unwrap().get(0);
        assert!(late > early);
        tc.commit().unwrap();
        // The follower, restarted after each poll, sees `late` committed and `early` not.
        for _ in 0..3 {
            let mut feed = Feed::after(got.last().copied().unwrap_or(0));
            poll(&mut feed, &mut *boss, &mut got);
            assert!(
                !got.contains(&late),
                "round {round}: {late} given while {early} may still commit"
            );
            assert!(feed.waiting());
        }
        let rolled_back = round == 4;
        if rolled_back {
            ta.rollback().unwrap();
        } else {
            ta.commit().unwrap();
        }
        drain(&mut *boss, &mut got);
        let want: &[i64] = if rolled_back { &[late] } else { &[early, late] };
        assert_eq!(&got[got.len() - want.len()..], want, "round {round}");
    }
    let want: Vec<i64> = table(&mut *boss).iter().map(|e| e.event.id).collect();
    assert_eq!(got, want);
}
