//! The supervisors' figures on hand-made histories (a take-over, a reassign, a release and
//! re-take, a failed and requeued item, a skip, items finished late and on time), on
//! SQLite and PostgreSQL through the conformance harness: what `report` gives, what
//! `ItemFigures` says of one item, and that `check` verifies the kept `holds` rows
//! against the events.

use crate::support::MIN;
use crate::support::backend::Adds;
use crate::support::backend::{Backend, setup};
use caseload::domain::figures::{ItemFigures, Period, records};
use caseload::domain::{EventKind, NewItem};
use caseload::store::{Figures, QueueFigures, Reads, Report, ReportQuery, Store, StoreError};

conformance!(
    figures_follow_hand_made_histories,
    check_finds_holds_that_disagree_with_the_events,
    a_take_stamped_before_the_hold_it_follows_keeps_check_and_repair_agreeing,
    an_empty_period_is_refused,
    a_queue_filter_keeps_one_queue,
);

/// Whole minutes (the stores' clocks are offsets of the same real clock; a few real
/// milliseconds pass between calls).
fn mins(ms: Option<i64>) -> Option<i64> {
    ms.map(|m| (m + 30_000).div_euclid(MIN))
}

struct Ids {
    a: i64,
    b: i64,
    c: i64,
    d: i64,
    e: i64,
    f: i64,
    g: i64,
}

/// Builds the histories (minutes after the items were added, all in queue "default",
/// whose lock lasts 60 s):
/// - A: alice takes at 10; bob takes it over at 13 and completes at 16.
/// - B: alice takes at 10; boss reassigns it to carol at 11; carol completes at 15.
/// - C: alice takes at 10, releases at 11; bob takes at 12, completes at 16.
/// - D: alice takes at 10, fails at 12; boss requeues at 13; bob takes at 15, completes at 18.
/// - E: alice takes at 10, skips at 11.
/// - F (due at 20): carol takes at 20, completes at 25 (5 minutes late).
/// - G (due at 60): carol takes at 20, completes at 22 (on time).
/// - H (due 1 minute ago) and I (due in 30 minutes) stay open.
fn histories(b: &dyn Backend, boss: &mut dyn Store) -> (Ids, i64) {
    let t0 = boss.now().unwrap();
    let add = |s: &mut dyn Store, title: &str, due: Option<i64>| {
        s.add(&NewItem {
            due_at: due,
            ..NewItem::titled(title)
        })
        .unwrap()
        .id
    };
    let ids = Ids {
        a: add(boss, "A", None),
        b: add(boss, "B", None),
        c: add(boss, "C", None),
        d: add(boss, "D", None),
        e: add(boss, "E", None),
        f: add(boss, "F", Some(t0 + 20 * MIN)),
        g: add(boss, "G", Some(t0 + 60 * MIN)),
    };
    add(boss, "H", Some(t0 - MIN));
    add(boss, "I", Some(t0 + 30 * MIN));
    boss.set_role("carol", caseload::domain::Role::Staff)
        .unwrap(); // reassign takes a known user
    let at = |user: &str, m: i64| b.open(user, m * MIN);

    let mut alice10 = at("alice", 10);
    let ta = alice10.take(ids.a).unwrap().lock_token;
    alice10.take(ids.b).unwrap();
    let tc = alice10.take(ids.c).unwrap().lock_token;
    let td = alice10.take(ids.d).unwrap().lock_token;
    let te = alice10.take(ids.e).unwrap().lock_token;
    let mut alice11 = at("alice", 11);
    alice11.release(ids.c, tc).unwrap();
    alice11.skip(ids.e, te).unwrap();
    at("boss", 11)
        .reassign(ids.b, None, "carol", "alice is away")
        .unwrap();
    let tc = at("bob", 12).take(ids.c).unwrap().lock_token;
    at("alice", 12).fail(ids.d, td, "broken").unwrap();
    at("boss", 13).requeue(ids.d).unwrap();
    let ta2 = at("bob", 13).take(ids.a).unwrap().lock_token;
    assert!(ta2 > ta);
    let tb = boss.item(ids.b).unwrap().lock_token;
    at("carol", 15).complete(ids.b, tb, None).unwrap();
    let td = at("bob", 15).take(ids.d).unwrap().lock_token;
    let mut bob16 = at("bob", 16);
    bob16.complete(ids.a, ta2, None).unwrap();
    bob16.complete(ids.c, tc, None).unwrap();
    at("bob", 18).complete(ids.d, td, None).unwrap();
    let mut carol20 = at("carol", 20);
    let tf = carol20.take(ids.f).unwrap().lock_token;
    let tg = carol20.take(ids.g).unwrap().lock_token;
    at("carol", 22).complete(ids.g, tg, None).unwrap();
    at("carol", 25).complete(ids.f, tf, None).unwrap();
    (ids, t0)
}

fn report(s: &mut dyn Store, t0: i64) -> Report {
    s.report(&ReportQuery {
        period: Period {
            since: t0 - 60 * MIN,
            until: t0 + 120 * MIN,
        },
        queue: None,
        rows_only: false,
    })
    .unwrap()
}

fn person<'a>(r: &'a Report, name: &str) -> &'a Figures {
    r.people.iter().find(|p| p.name == name).unwrap()
}

fn queue<'a>(r: &'a Report, name: &str) -> &'a QueueFigures {
    r.queues.iter().find(|q| q.figures.name == name).unwrap()
}

fn counts(f: &Figures) -> (u64, u64, u64, u64, u64) {
    (f.completed, f.failed, f.skipped, f.released, f.lost)
}

fn figures_follow_hand_made_histories(b: &dyn Backend) {
    let mut boss = setup(b);
    let (ids, t0) = histories(b, &mut *boss);
    let r = report(&mut *boss, t0);

    let alice = person(&r, "alice");
    assert_eq!(
        counts(alice),
        (0, 1, 1, 1, 2),
        "taken over and reassigned away"
    );
    assert_eq!(mins(Some(alice.held_ms)), Some(3 + 1 + 1 + 2 + 1));
    assert_eq!(mins(alice.handle_median_ms), Some(2), "her own time on D");
    assert_eq!(alice.completed_per_hour, Some(0.0));

    let bob = person(&r, "bob");
    assert_eq!(counts(bob), (3, 0, 0, 0, 0));
    assert_eq!(mins(bob.handle_median_ms), Some(3), "own times 3, 4, 3");
    assert_eq!(mins(bob.handle_p90_ms), Some(4));
    assert_eq!(mins(Some(bob.held_ms)), Some(10));
    let per_hour = bob.completed_per_hour.unwrap();
    assert!(
        (per_hour - 18.0).abs() < 0.1,
        "3 in 10 minutes held: {per_hour}"
    );

    let carol = person(&r, "carol");
    assert_eq!(counts(carol), (3, 0, 0, 0, 0));
    assert_eq!(mins(carol.handle_median_ms), Some(4), "own times 4, 5, 2");
    assert_eq!(mins(carol.handle_p90_ms), Some(5));
    assert_eq!(r.people[0].completed, 3, "most completions first");

    let q = queue(&r, "default");
    assert_eq!(counts(&q.figures), (6, 1, 1, 1, 2));
    // Handle times of the finishes: A 6, B 5, C 5, D 2 (failed) and 3, F 5, G 2.
    assert_eq!(mins(q.figures.handle_median_ms), Some(5));
    assert_eq!(mins(q.figures.handle_p90_ms), Some(6));
    assert_eq!(mins(q.wait_median_ms), Some(10));
    // Cycle times: 16, 15, 16, 12, 18, 25, 22.
    assert_eq!(mins(q.cycle_median_ms), Some(16));
    assert_eq!((q.overdue, q.due_next_hour), (1, 1));
    assert_eq!(q.on_time_share, Some(0.5), "F late, G on time");
    assert_eq!(mins(q.late_median_ms), Some(5));
    assert_eq!(q.completed_series.iter().sum::<u64>(), 6);

    // One item's figures, from its history: the same definitions.
    let item = boss.item(ids.a).unwrap();
    let hist = boss.history(ids.a).unwrap();
    let fig = ItemFigures::of(&item, &hist, boss.now().unwrap());
    let handled: Vec<(&str, Option<i64>)> = fig
        .handled
        .iter()
        .map(|p| (p.person.as_str(), mins(Some(p.ms))))
        .collect();
    assert_eq!(handled.len(), 2);
    assert!(handled.contains(&("alice", Some(3))) && handled.contains(&("bob", Some(3))));
    assert_eq!(
        (mins(fig.wait_ms), mins(fig.cycle_ms)),
        (Some(10), Some(16))
    );
    let s = fig.sentence();
    assert!(s.starts_with("handled 3m") && s.contains("done 16m"), "{s}");

    // The requeued item: two finishes, each with its own round of holds.
    let d = boss.item(ids.d).unwrap();
    let recs = records(
        d.id,
        &d.queue,
        d.created_at,
        d.due_at,
        &boss.history(ids.d).unwrap(),
    );
    let finishes: Vec<_> = recs.iter().filter_map(|r| r.finish).collect();
    assert_eq!(finishes.len(), 2);
    assert_eq!(mins(Some(finishes[0].handle_ms)), Some(2));
    assert_eq!(mins(Some(finishes[1].handle_ms)), Some(3));
    assert_eq!(mins(Some(finishes[1].wait_ms)), Some(10));
    assert_eq!(recs[0].hold.how, EventKind::Failed);
    let _ = (ids.b, ids.c, ids.e, ids.f, ids.g);

    // The kept rows agree with the events.
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

fn check_finds_holds_that_disagree_with_the_events(b: &dyn Backend) {
    let mut boss = setup(b);
    let (_, _) = histories(b, &mut *boss);
    // (The day summary and the queue's totals, kept from the holds, then disagree with
    // them too.)
    let holds_only = |found: Vec<String>| -> Vec<String> {
        let (summary, rest): (Vec<_>, Vec<_>) = found
            .into_iter()
            .partition(|f| f.starts_with("figures summary:"));
        assert_eq!(summary.len(), 1, "{summary:?}");
        let (totals, rest): (Vec<_>, Vec<_>) = rest
            .into_iter()
            .partition(|f| f.starts_with("metrics totals:"));
        assert_eq!(totals.len(), 1, "{totals:?}");
        rest
    };
    b.spoil("DELETE FROM holds WHERE how = 'skipped'");
    let found = holds_only(boss.check().unwrap());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("the holds table lacks"), "{found:?}");
    b.spoil("UPDATE holds SET handle_ms = handle_ms + 1 WHERE how = 'failed'");
    let found = holds_only(boss.check().unwrap());
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(
        found
            .iter()
            .any(|f| f.contains("that its history does not give")),
        "{found:?}"
    );
}

/// A take stamped before the hold it follows (the 20-minute PostgreSQL soak at seed
/// 7401: w4's take began, its transaction's start being the event's time, before w3's
/// take and release of the item committed): the `holds` trigger, `check` and the repair
/// give the finish the same wait (to the earliest start so far). Before, the trigger left
/// the finishing hold's own start out and `check` found two problems until a repair.
fn a_take_stamped_before_the_hold_it_follows_keeps_check_and_repair_agreeing(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = boss.add(&NewItem::titled("raced")).unwrap().id;
    let at = |user: &str, m: i64| b.open(user, m * MIN);
    let t3 = at("w3", 10).take(id).unwrap().lock_token;
    at("w3", 11).release(id, t3).unwrap();
    let t4 = at("w4", 9).take(id).unwrap().lock_token;
    at("w4", 12).complete(id, t4, None).unwrap();
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
    let holds = "SELECT CAST(event_id AS TEXT) || ':' || coalesce(CAST(wait_ms AS TEXT), '-') \
                 || ':' || coalesce(CAST(handle_ms AS TEXT), '-') FROM holds ORDER BY event_id";
    let kept = b.texts(holds);
    boss.rebuild_figures().unwrap();
    assert_eq!(
        b.texts(holds),
        kept,
        "the repair writes what the trigger wrote"
    );
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

fn an_empty_period_is_refused(b: &dyn Backend) {
    let mut boss = setup(b);
    let e = boss
        .report(&ReportQuery {
            period: Period {
                since: 10_000,
                until: 10_000,
            },
            queue: None,
            rows_only: false,
        })
        .unwrap_err();
    assert!(matches!(e, StoreError::Invalid(_)), "{e:?}");
    assert!(e.to_string().contains("--since"), "{e}");
}

fn a_queue_filter_keeps_one_queue(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = boss
        .add(&NewItem {
            queue: "other".into(),
            ..NewItem::titled("x")
        })
        .unwrap()
        .id;
    let t0 = boss.now().unwrap();
    let tok = boss.take(id).unwrap().lock_token;
    boss.complete(id, tok, None).unwrap();
    let mut q = ReportQuery {
        period: Period {
            since: t0 - MIN,
            until: t0 + MIN,
        },
        queue: Some("default".into()),
        rows_only: false,
    };
    let r = boss.report(&q).unwrap();
    assert_eq!(r.queues.len(), 1);
    assert_eq!(r.queues[0].figures.completed, 0);
    assert!(r.people.is_empty());
    q.queue = Some("other".into());
    let r = boss.report(&q).unwrap();
    assert_eq!(r.queues[0].figures.completed, 1);
    assert_eq!(r.people[0].name, "boss");
}

/// The history of an old database (before the `holds` table): A taken over and completed,
/// B released, re-taken and completed, C reassigned (unheld) and failed.
const OLD_HISTORY: &str = "
    INSERT INTO queues (name) VALUES ('default');
    INSERT INTO items (id, queue, title, state, lock_token, created_at, created_by, finished_at, finished_by)
        VALUES (1, 'default', 'A', 'done', 2, 0, 'x', 500000, 'bob'),
               (2, 'default', 'B', 'done', 2, 0, 'x', 400000, 'bob'),
               (3, 'default', 'C', 'failed', 1, 0, 'x', 300000, 'carol');
    INSERT INTO events (id, item_id, at, actor, os_user, kind, detail) VALUES
        (1, 1, 0, 'x', 'x', 'created', '{}'),
        (2, 2, 0, 'x', 'x', 'created', '{}'),
        (3, 3, 0, 'x', 'x', 'created', '{}'),
        (4, 1, 60000, 'alice', 'a', 'locked', '{}'),
        (5, 1, 180000, 'bob', 'b', 'taken_over', '{\"from\": \"alice\"}'),
        (6, 1, 500000, 'bob', 'b', 'completed', '{}'),
        (7, 2, 100000, 'alice', 'a', 'locked', '{}'),
        (8, 2, 160000, 'alice', 'a', 'released', '{}'),
        (9, 2, 200000, 'bob', 'b', 'locked', '{}'),
        (10, 2, 400000, 'bob', 'b', 'completed', '{}'),
        (11, 3, 120000, 'boss', 'b', 'reassigned', '{\"from\": null, \"to\": \"carol\"}'),
        (12, 3, 300000, 'carol', 'c', 'failed', '{}');";

/// The first UTC day: read from the day summary the migration filled.
fn old_history_report(s: &mut dyn Store) -> Report {
    s.report(&ReportQuery {
        period: Period {
            since: 0,
            until: 86_400_000,
        },
        queue: None,
        rows_only: false,
    })
    .unwrap()
}

fn assert_backfilled(r: &Report) {
    let bob = person(r, "bob");
    assert_eq!(counts(bob), (2, 0, 0, 0, 0));
    // Bob's own times: 320 s on A, 200 s on B.
    assert_eq!(bob.handle_median_ms, Some(200_000));
    assert_eq!(bob.handle_p90_ms, Some(320_000));
    assert_eq!(counts(person(r, "alice")), (0, 0, 0, 1, 1));
    assert_eq!(counts(person(r, "carol")), (0, 1, 0, 0, 0));
    let q = queue(r, "default");
    // Handle times: A 440 s, B 260 s, C 180 s.
    assert_eq!(q.figures.handle_median_ms, Some(260_000));
    assert_eq!(q.wait_median_ms, Some(100_000));
    assert_eq!(q.cycle_median_ms, Some(400_000));
}

#[test]
fn sqlite_migration_fills_holds_from_the_history() {
    let b = crate::support::backend::SqliteBackend::new();
    {
        let c = rusqlite::Connection::open(&b.path).unwrap();
        caseload::store::migrate::create_at_version(&c, 2).unwrap();
        c.execute_batch(OLD_HISTORY).unwrap();
    }
    let mut s = b.open("boss", 0);
    assert_eq!(s.check().unwrap(), Vec::<String>::new());
    assert_backfilled(&old_history_report(&mut *s));
}

#[test]
fn postgres_migration_fills_holds_from_the_history() {
    let Some(b) = crate::support::backend::PgBackend::from_env() else {
        return;
    };
    caseload::store::postgres::migrate::create_at_version(&mut b.admin(), 1).unwrap();
    b.admin().batch_execute(OLD_HISTORY).unwrap();
    let mut s = b.open("boss", 0);
    assert_eq!(s.check().unwrap(), Vec::<String>::new());
    assert_backfilled(&old_history_report(&mut *s));
}

/// The demo's two weeks of history: people with completions, failures, releases, skips
/// and lost locks, overdue items, a clean check; the same figures on PostgreSQL.
#[test]
fn the_demo_has_a_living_history_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.db");
    let boss = caseload::domain::Actor::new("boss", "boss");
    let n = caseload::demo::create(&path, &boss, false).unwrap();
    assert_eq!(n, 344, "340 from the data set, 4 identity checks");
    let mut s = caseload::store::SqliteStore::open(
        &path,
        boss.clone(),
        &caseload::store::sqlite::OpenOptions::default(),
    )
    .unwrap();
    let fortnight = |s: &mut dyn Store| {
        let now = s.now().unwrap();
        s.report(&ReportQuery {
            period: Period {
                since: now - 16 * 24 * 60 * MIN,
                until: now + MIN,
            },
            queue: None,
            rows_only: false,
        })
        .unwrap()
    };
    let r = fortnight(&mut s);
    assert_eq!(s.check().unwrap(), Vec::<String>::new());
    let names: Vec<&str> = r.people.iter().map(|p| p.name.as_str()).collect();
    for who in ["alice", "bob", "carol", "dave", "erin"] {
        assert!(names.contains(&who), "{who} in {names:?}");
    }
    let total = |f: fn(&caseload::store::Figures) -> u64| r.people.iter().map(f).sum::<u64>();
    assert!(total(|p| p.completed) >= 80, "{:?}", r.people);
    for (what, n) in [
        ("failed", total(|p| p.failed)),
        ("released", total(|p| p.released)),
        ("skipped", total(|p| p.skipped)),
        ("lost", total(|p| p.lost)),
    ] {
        assert!(n > 0, "someone {what} an item: {:?}", r.people);
    }
    assert!(r.queues.iter().any(|q| q.overdue > 0));
    assert!(
        r.people
            .iter()
            .all(|p| p.handle_median_ms.unwrap_or(0) < 60 * MIN)
    );
    let today = s.stats().unwrap();
    assert!(
        today.locked >= 3 && today.expired >= 1,
        "work in progress today"
    );
    // Three identity checks dave and erin completed wait for someone else's review: the
    // demo's own user may take them, one of their makers may not take their own.
    let review = caseload::store::ListFilter {
        state: caseload::store::StateFilter::Review,
        limit: 10,
        ..Default::default()
    };
    let waiting = s.list(&review).unwrap();
    assert_eq!(waiting.len(), 3, "{waiting:?}");
    assert!(waiting.iter().all(|i| i.queue == "kyc"));
    let makers: Vec<&str> = (waiting.iter())
        .filter_map(|i| i.finished_by.as_deref())
        .collect();
    assert_eq!(makers, ["dave", "erin", "dave"]);

    let Some(pg) = crate::support::backend::PgBackend::from_env() else {
        return;
    };
    assert_eq!(caseload::demo::create_pg(&pg.url, &boss).unwrap(), 344);
    let mut p = pg.open("boss", 0);
    assert_eq!(p.check().unwrap(), Vec::<String>::new());
    let counts = |r: &Report| -> Vec<String> {
        r.people
            .iter()
            .map(|p| format!("{} {:?}", p.name, counts(p)))
            .collect()
    };
    assert_eq!(
        counts(&fortnight(&mut *p)),
        counts(&r),
        "the same history on both"
    );
}
