//! The figures' day summary (`figure_days`) against the holds, on SQLite and PostgreSQL:
//! a period read through the summary for its whole UTC days (and the holds for its edges)
//! gives exactly the figures of the same period read from the holds alone, for periods
//! that cut holds, local days at an offset that is not UTC, and a queue filter; `check`
//! names a summary row that disagrees with the holds.

use crate::support::MIN;
use crate::support::backend::Adds;
use crate::support::backend::{Backend, setup};
use caseload::domain::figures::Period;
use caseload::domain::time::Zone;
use caseload::domain::{ItemEdit, NewItem, QueueUpdate};
use caseload::store::{Report, ReportQuery, Store};

conformance!(
    summary_and_holds_give_the_same_figures,
    check_names_a_summary_row_that_disagrees,
    a_busy_day_gives_the_same_figures,
    moved_items_keep_their_holds_where_they_ended,
);

const DAY: i64 = 24 * 60;

/// Minutes from `t0` to the first UTC midnight at least an hour after it.
fn next_midnight(t0: i64) -> i64 {
    let day_ms = DAY * MIN;
    let m = (t0 + 60 * MIN).div_euclid(day_ms) * day_ms + day_ms;
    (m - t0) / MIN
}

/// Histories around UTC midnights (`d`: minutes from now to the first one), in queues
/// "default" and "other" (locks last 60 s):
/// - A: alice takes at d-30; bob takes it over at d+10 and completes at d+40.
/// - B: alice takes at d+60; boss reassigns it to carol at d+90; carol completes a day
///   later at d+DAY+10.
/// - C (due d+DAY+150): alice takes at d+100, releases at d+120; bob takes at d+DAY+100,
///   completes at d+DAY+200 (late).
/// - D ("other"): bob takes at d+2DAY+5, fails at d+2DAY+50; boss requeues at d+2DAY+60;
///   carol takes at d+2DAY+70 and completes at d+3DAY+1.
/// - E: carol takes at d+30, skips at d+35.
fn histories(b: &dyn Backend, boss: &mut dyn Store, d: i64) {
    let t0 = boss.now().unwrap();
    let add = |s: &mut dyn Store, title: &str, queue: &str, due: Option<i64>| {
        s.add(&NewItem {
            due_at: due,
            queue: queue.into(),
            ..NewItem::titled(title)
        })
        .unwrap()
        .id
    };
    let a = add(boss, "A", "default", None);
    let bb = add(boss, "B", "default", None);
    let c = add(boss, "C", "default", Some(t0 + (d + DAY + 150) * MIN));
    let dd = add(boss, "D", "other", None);
    let e = add(boss, "E", "default", None);
    boss.set_role("carol", caseload::domain::Role::Staff)
        .unwrap();
    let at = |user: &str, m: i64| b.open(user, (d + m) * MIN);

    let ta = at("alice", -30).take(a).unwrap().lock_token;
    let te = at("carol", 30).take(e).unwrap().lock_token;
    at("carol", 35).skip(e, te).unwrap();
    let ta = {
        let t = at("bob", 10).take(a).unwrap().lock_token;
        assert!(t > ta);
        t
    };
    at("bob", 40).complete(a, ta, None).unwrap();
    at("alice", 60).take(bb).unwrap();
    at("boss", 90)
        .reassign(bb, None, "carol", "alice is away")
        .unwrap();
    let tc = at("alice", 100).take(c).unwrap().lock_token;
    at("alice", 120).release(c, tc).unwrap();
    let tb = boss.item(bb).unwrap().lock_token;
    at("carol", DAY + 10).complete(bb, tb, None).unwrap();
    let tc = at("bob", DAY + 100).take(c).unwrap().lock_token;
    at("bob", DAY + 200).complete(c, tc, None).unwrap();
    let td = at("bob", 2 * DAY + 5).take(dd).unwrap().lock_token;
    at("bob", 2 * DAY + 50).fail(dd, td, "broken").unwrap();
    at("boss", 2 * DAY + 60).requeue(dd).unwrap();
    let td = at("carol", 2 * DAY + 70).take(dd).unwrap().lock_token;
    at("carol", 3 * DAY + 1).complete(dd, td, None).unwrap();
}

/// The report of `[since, until)` read both ways; they must be the same but for the time
/// each was taken.
fn both_ways(s: &mut dyn Store, since: i64, until: i64, queue: Option<&str>) -> Report {
    let ask = |rows_only| ReportQuery {
        period: Period { since, until },
        queue: queue.map(str::to_string),
        rows_only,
    };
    let summary = s.report(&ask(false)).unwrap();
    let mut rows = s.report(&ask(true)).unwrap();
    rows.at = summary.at;
    assert_eq!(summary, rows, "period {since}..{until}, queue {queue:?}");
    summary
}

fn summary_and_holds_give_the_same_figures(b: &dyn Backend) {
    let mut boss = setup(b);
    let t0 = boss.now().unwrap();
    let d = next_midnight(t0);
    histories(b, &mut *boss, d);
    let m = |x: i64| t0 + (d + x) * MIN;

    // Everything: whole UTC days in the middle, partial days at both ends.
    let all = both_ways(&mut *boss, t0 - DAY * MIN, m(4 * DAY), None);
    let bob = all.people.iter().find(|p| p.name == "bob").unwrap();
    assert_eq!((bob.completed, bob.failed, bob.lost), (2, 1, 0));
    let alice = all.people.iter().find(|p| p.name == "alice").unwrap();
    assert_eq!((alice.lost, alice.released, alice.completed), (2, 1, 0));
    assert_eq!((alice.held_ms + 30_000) / MIN, 40 + 30 + 20);
    let dq = all.queues.iter().find(|q| q.figures.name == "default");
    assert_eq!(dq.unwrap().figures.completed, 3);

    // Exactly whole days (no edges), and one whole day with edges cutting holds (A's hold
    // by alice runs over the first midnight; a boundary at d+20 is inside bob's).
    both_ways(&mut *boss, m(0), m(3 * DAY), None);
    both_ways(&mut *boss, m(-10), m(DAY + 150), None);
    both_ways(&mut *boss, m(20), m(2 * DAY + 30), Some("default"));
    both_ways(&mut *boss, m(20), m(3 * DAY + 30), Some("other"));

    // Local days at +05:30 (midnight there is 18:30 UTC): "today" and whole local days.
    let east = Zone::Fixed(chrono::FixedOffset::east_opt(5 * 3600 + 1800).unwrap());
    for k in 0..4 {
        let since = east.start_of_day(m(k * DAY));
        both_ways(&mut *boss, since, since + DAY * MIN, None);
        both_ways(&mut *boss, since, since + 7 * DAY * MIN, None);
    }
    let west = Zone::Fixed(chrono::FixedOffset::west_opt(7 * 3600).unwrap());
    let since = west.start_of_day(m(DAY));
    both_ways(&mut *boss, since, since + 2 * DAY * MIN, None);

    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

fn check_names_a_summary_row_that_disagrees(b: &dyn Backend) {
    let mut boss = setup(b);
    let t0 = boss.now().unwrap();
    let d = next_midnight(t0);
    histories(b, &mut *boss, d);
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
    // One finish's own time off by a millisecond (the lists are compared as sets of
    // entries, whatever their order).
    b.spoil(
        "UPDATE figure_days SET finishes = replace(finishes, 'c,', 'c,1') \
         WHERE holder = 'carol' AND queue = 'other'",
    );
    let found = boss.check().unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("figures summary:") && found[0].contains("'other' and 'carol'"),
        "{found:?}"
    );
    b.spoil("DELETE FROM figure_days WHERE holder = 'alice'");
    b.spoil("UPDATE figure_days SET lost = lost + 1 WHERE holder = 'bob'");
    // Whole days are read from the summary: the spoiled row shows there, not in the holds.
    let period = Period {
        since: t0 - DAY * MIN,
        until: t0 + (d + 4 * DAY) * MIN,
    };
    let t = |s: &mut dyn Store, rows_only| {
        let r = s
            .report(&ReportQuery {
                period,
                queue: None,
                rows_only,
            })
            .unwrap();
        r.people.iter().find(|p| p.name == "bob").unwrap().lost
    };
    assert_eq!(
        (t(&mut *boss, false), t(&mut *boss, true)),
        (3, 0),
        "one more in each of bob's three days"
    );
    let found = boss.check().unwrap();
    assert!(found.len() >= 3, "{found:?}");
    assert!(found.iter().all(|f| f.starts_with("figures summary:")));

    // The repair: staff may not; a supervisor rebuilds both tables from the history.
    let e = b.open("alice", 0).rebuild_figures().unwrap_err();
    assert_eq!(e.exit_code(), 5, "{e}");
    b.spoil("DELETE FROM holds WHERE how = 'skipped'");
    let holds = boss.rebuild_figures().unwrap();
    assert_eq!(holds, 9, "A, B, C and D two holds each, E one");
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
    assert_eq!((t(&mut *boss, false), t(&mut *boss, true)), (0, 0));
}

/// Alice completes 80 items in the hour after a UTC midnight (her day's list outgrows one
/// summary row); returns the minutes from now to that midnight.
fn busy_day(b: &dyn Backend, boss: &mut dyn Store) -> i64 {
    let t0 = boss.now().unwrap();
    let d = next_midnight(t0);
    let mut alice = b.open("alice", (d + 10) * MIN);
    for i in 0..80 {
        let id = boss.add(&NewItem::titled(&format!("item {i}"))).unwrap().id;
        let t = alice.take(id).unwrap().lock_token;
        alice.complete(id, t, None).unwrap();
    }
    d
}

fn a_busy_day_gives_the_same_figures(b: &dyn Backend) {
    let mut boss = setup(b);
    let t0 = boss.now().unwrap();
    let d = busy_day(b, &mut *boss);
    let r = both_ways(&mut *boss, t0, t0 + (d + 2 * DAY) * MIN, None);
    assert_eq!(r.people[0].completed, 80);
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

#[test]
fn a_busy_day_is_kept_in_several_small_rows() {
    let b = crate::support::backend::SqliteBackend::new();
    let mut boss = setup(&b);
    busy_day(&b, &mut *boss);
    let c = rusqlite::Connection::open(&b.path).unwrap();
    let (rows, longest): (i64, i64) = c
        .query_row(
            "SELECT count(*), max(length(finishes)) FROM figure_days WHERE holder = 'alice'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(
        rows >= 2 && longest < 1600,
        "{rows} rows, longest {longest}"
    );
}

/// An item moved to another queue (`edit --queue`) and a renamed queue: each hold counts
/// for the queue its item was in when the hold ended, the way the trigger wrote it, so
/// `check` finds nothing to repair and a repair gives the same figures (it once named
/// every moved item's holds as wrong).
fn moved_items_keep_their_holds_where_they_ended(b: &dyn Backend) {
    let mut boss = setup(b);
    let t0 = boss.now().unwrap();
    boss.set_queue("other", &QueueUpdate::default(), true)
        .unwrap();
    let id = boss.add(&NewItem::titled("moved")).unwrap().id;
    let mut alice = b.open("alice", 0);
    let t = alice.take(id).unwrap().lock_token;
    alice.release(id, t).unwrap();
    let to_other = ItemEdit::default().with(
        caseload::domain::fields::Col::Queue,
        caseload::domain::fields::Value::Text(Some("other".into())),
    );
    boss.edit(id, &to_other).unwrap();
    let t = alice.take(id).unwrap().lock_token;
    boss.rename_queue("other", "renamed").unwrap();
    alice.complete(id, t, None).unwrap();
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());

    let by_queue = |s: &mut dyn Store| {
        let r = s
            .report(&ReportQuery {
                period: Period {
                    since: t0 - DAY * MIN,
                    until: t0 + DAY * MIN,
                },
                queue: None,
                rows_only: false,
            })
            .unwrap();
        let mut q: Vec<(String, u64, u64)> = r
            .queues
            .iter()
            .filter(|q| q.figures.released + q.figures.completed > 0)
            .map(|q| {
                (
                    q.figures.name.clone(),
                    q.figures.released,
                    q.figures.completed,
                )
            })
            .collect();
        q.sort();
        q
    };
    let want = vec![("default".to_string(), 1, 0), ("renamed".to_string(), 0, 1)];
    assert_eq!(
        by_queue(&mut *boss),
        want,
        "the release in default, the finish after the rename"
    );
    assert_eq!(boss.rebuild_figures().unwrap(), 2);
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
    assert_eq!(by_queue(&mut *boss), want);
}
