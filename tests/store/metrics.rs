//! `caseload metrics`' counters on SQLite and PostgreSQL: the kept per-queue totals
//! (`queue_totals`) equal a recount from the events after a mixed history (finishes,
//! releases, skips, a take-over, a reassignment, a park, a reopen, a move to another queue,
//! a cancel), never go down when an item is reopened, and `check` names a totals row that
//! was changed by hand; `check --repair-figures`' rebuild puts it right. On PostgreSQL, the
//! kept due counts per hour (`due_hours`) follow a random history of writes.

use caseload::domain::fields::{Col, Value};
use caseload::domain::{ItemEdit, NewItem, QueueUpdate};
use caseload::store::Store;
use caseload::store::metrics::QueueMetrics;

use crate::support::MIN;
use crate::support::backend::{Adds, Backend, setup};

conformance!(
    totals_equal_a_recount_from_the_events,
    check_names_a_totals_row_changed_by_hand,
);

/// A queue's counters: (completed, failed, holds, held_ms).
fn totals(s: &mut dyn Store, queue: &str) -> (u64, u64, u64, u64) {
    let q = queue_metrics(s, queue);
    (q.completed, q.failed, q.holds, q.held_ms)
}

fn queue_metrics(s: &mut dyn Store, queue: &str) -> QueueMetrics {
    let m = s.metrics().unwrap();
    m.queues
        .into_iter()
        .find(|q| q.queue == queue)
        .unwrap_or_else(|| panic!("no queue {queue}"))
}

/// The mixed history (minutes from now; queue "default" locks for 60 s). Ends with:
/// default: 4 completed (a, d, e, f), 2 failed (b, a again), 13 holds; other: 1 completed
/// (g), 1 failed (c, moved there), 2 holds; h parked.
fn history(b: &dyn Backend, boss: &mut dyn Store) {
    boss.set_queue("other", &QueueUpdate::default(), true)
        .unwrap();
    let add = |s: &mut dyn Store, title: &str, queue: &str| {
        s.add(&NewItem {
            queue: queue.into(),
            ..NewItem::titled(title)
        })
        .unwrap()
        .id
    };
    let [a, bb, c, d, e, f, h] =
        ["a", "b", "c", "d", "e", "f", "h"].map(|t| add(boss, t, "default"));
    let g = add(boss, "g", "other");
    let at = |user: &str, m: i64| b.open(user, m * MIN);

    let t = at("alice", 0).take(a).unwrap().lock_token;
    at("alice", 5).complete(a, t, None).unwrap();
    let t = at("bob", 0).take(bb).unwrap().lock_token;
    at("bob", 1).fail(bb, t, "broken").unwrap();
    let t = at("alice", 10).take(c).unwrap().lock_token;
    at("alice", 11).release(c, t).unwrap();
    let t = at("carol", 12).take(c).unwrap().lock_token;
    at("carol", 13).skip(c, t).unwrap();
    // Alice's lock on d runs out; bob takes it over.
    at("alice", 20).take(d).unwrap();
    let t = at("bob", 30).take(d).unwrap().lock_token;
    at("bob", 31).complete(d, t, None).unwrap();
    let t = at("alice", 40).take(e).unwrap().lock_token;
    at("boss", 42)
        .reassign(e, Some(t), "carol", "alice is away")
        .unwrap();
    let t = boss.item(e).unwrap().lock_token;
    at("carol", 45).complete(e, t, None).unwrap();
    let t = at("alice", 50).take(f).unwrap().lock_token;
    at("alice", 51)
        .park(f, t, (51 + 120) * MIN + boss.now().unwrap(), "call back")
        .unwrap();
    let t = at("alice", 60).wake(f).unwrap().lock_token;
    at("alice", 61).complete(f, t, None).unwrap();
    // Reopened: its completion stays counted; failed the second time.
    at("boss", 65).reopen(a, "not done").unwrap();
    let t = at("alice", 70).take(a).unwrap().lock_token;
    at("alice", 71).fail(a, t, "still broken").unwrap();
    let t = at("carol", 80).take(g).unwrap().lock_token;
    at("carol", 81).complete(g, t, None).unwrap();
    let to_other = ItemEdit::default().with(Col::Queue, Value::Text(Some("other".into())));
    at("boss", 85).edit(c, &to_other).unwrap();
    let t = at("carol", 90).take(c).unwrap().lock_token;
    at("carol", 91).fail(c, t, "wrong").unwrap();
    at("boss", 95).requeue(bb).unwrap();
    at("alice", 100).take(bb).unwrap();
    at("boss", 101).cancel(bb, "not needed").unwrap();
    let t = at("alice", 110).take(h).unwrap().lock_token;
    at("alice", 111)
        .park(h, t, (111 + 120) * MIN + boss.now().unwrap(), "call back")
        .unwrap();
}

fn totals_equal_a_recount_from_the_events(b: &dyn Backend) {
    let mut boss = setup(b);
    history(b, &mut *boss);
    let default = totals(&mut *boss, "default");
    let other = totals(&mut *boss, "other");
    assert_eq!((default.0, default.1, default.2), (4, 2, 13), "{default:?}");
    assert_eq!((other.0, other.1, other.2), (1, 1, 2), "{other:?}");
    // The holds' minutes (clocks skewed by whole minutes; each call adds a few ms).
    let minutes = |ms: u64| (ms + 30_000) / MIN as u64;
    assert_eq!(
        minutes(default.3),
        5 + 1 + 1 + 1 + 10 + 1 + 2 + 3 + 1 + 1 + 1 + 1 + 1
    );
    assert_eq!(minutes(other.3), 1 + 1);
    let q = queue_metrics(&mut *boss, "default");
    assert_eq!((q.parked, q.held), (1, 0), "{q:?}");
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());

    // The recount: the holds computed again from the events (not by the triggers), and
    // the totals from them.
    assert_eq!(boss.rebuild_figures().unwrap(), 15);
    assert_eq!(totals(&mut *boss, "default"), default);
    assert_eq!(totals(&mut *boss, "other"), other);
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

fn check_names_a_totals_row_changed_by_hand(b: &dyn Backend) {
    let mut boss = setup(b);
    history(b, &mut *boss);
    let default = totals(&mut *boss, "default");
    let other = totals(&mut *boss, "other");
    b.spoil("UPDATE queue_totals SET completed = completed + 1 WHERE queue = 'default'");
    assert!(totals(&mut *boss, "default").0 > default.0);
    let found = boss.check().unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("metrics totals:")
            && found[0].contains("queue 'default'")
            && found[0].contains("--repair-figures"),
        "{found:?}"
    );
    b.spoil("DELETE FROM queue_totals WHERE queue = 'other'");
    let found = boss.check().unwrap();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[1].contains("queue 'other'"), "{found:?}");
    assert_eq!(totals(&mut *boss, "other"), (0, 0, 0, 0));

    let e = b.open("alice", 0).rebuild_figures().unwrap_err();
    assert_eq!(e.exit_code(), 5, "{e}");
    boss.rebuild_figures().unwrap();
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
    assert_eq!(totals(&mut *boss, "default"), default);
    assert_eq!(totals(&mut *boss, "other"), other);
}

/// Every statement of `caseload metrics` on SQLite reads an index or a small table: no
/// scan of the items, no sort. (`$N` parameters are bound as NULL: the plan is the same.)
#[test]
fn metrics_read_indexes_not_the_items() {
    use caseload::store::metrics::{COUNTS, DUE, LOCKS, OLDEST_OPEN, TOTALS};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.db");
    drop(
        caseload::store::SqliteStore::open(
            &path,
            caseload::domain::Actor::new("boss", "boss"),
            &caseload::store::sqlite::OpenOptions::default(),
        )
        .unwrap(),
    );
    let c = rusqlite::Connection::open(&path).unwrap();
    for (sql, reads) in [
        (COUNTS, vec!["item_counts"]),
        (TOTALS, vec!["queue_totals"]),
        (LOCKS, vec!["USING COVERING INDEX items_held (queue=?)"]),
        (
            DUE,
            vec!["USING COVERING INDEX items_queue_due (queue=? AND due_at"],
        ),
        (
            OLDEST_OPEN,
            vec!["USING COVERING INDEX items_take (queue=?"],
        ),
    ] {
        let mut stmt = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let mut plan = Vec::new();
        let nulls = vec![rusqlite::types::Null; stmt.parameter_count()];
        let mut rows = stmt.query(rusqlite::params_from_iter(nulls)).unwrap();
        while let Some(r) = rows.next().unwrap() {
            plan.push(r.get::<_, String>(3).unwrap());
        }
        let plan = plan.join("\n");
        for step in reads {
            assert!(plan.contains(step), "{sql}\nreads:\n{plan}");
        }
        assert!(
            !plan.lines().any(|l| l.trim() == "SCAN items"),
            "{sql}\nscans the items:\n{plan}"
        );
        assert!(
            !plan.contains("USE TEMP B-TREE FOR ORDER BY"),
            "{sql}\nsorts:\n{plan}"
        );
    }
}

/// The kept due counts as a recount of the items gives them, bucketed here:
/// (queue, hour, shard, n) for the open items with a due time.
fn due_recount(admin: &mut ::postgres::Client) -> Vec<(String, i64, i32, i64)> {
    let mut counts = std::collections::BTreeMap::new();
    for r in admin
        .query(
            "SELECT queue, id, due_at FROM items WHERE state = 'open' AND due_at IS NOT NULL",
            &[],
        )
        .unwrap()
    {
        let (queue, id, due): (String, i64, i64) = (r.get(0), r.get(1), r.get(2));
        *counts
            .entry((queue, due.div_euclid(3_600_000), (id % 16) as i32))
            .or_insert(0i64) += 1;
    }
    counts
        .into_iter()
        .map(|((q, h, s), n)| (q, h, s, n))
        .collect()
}

/// The kept due counts equal the recount, and `metrics`' overdue and due-soon figures a
/// direct count of the items at the time it read.
fn due_counts_agree(admin: &mut ::postgres::Client, s: &mut dyn Store, when: &str) {
    let kept: Vec<(String, i64, i32, i64)> = admin
        .query(
            "SELECT queue, hour, shard, n FROM due_hours ORDER BY queue COLLATE \"C\", hour, shard",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    assert_eq!(kept, due_recount(admin), "kept due counts after {when}");
    let m = s.metrics().unwrap();
    for q in &m.queues {
        let r = admin
            .query_one(
                "SELECT count(*) FILTER (WHERE due_at < $2), \
                 count(*) FILTER (WHERE due_at >= $2 AND due_at < $2 + 86400000) \
                 FROM items WHERE queue = $1 AND state = 'open'",
                &[&q.queue, &m.at],
            )
            .unwrap();
        let (overdue, soon): (i64, i64) = (r.get(0), r.get(1));
        assert_eq!(
            (q.overdue, q.due_soon),
            (overdue as u64, soon as u64),
            "queue {} after {when}",
            q.queue
        );
    }
}

/// PostgreSQL keeps the open items with a due time counted per queue and hour
/// (`due_hours`, what `metrics` sums for overdue and due soon) by triggers on the items:
/// after every few steps of a random history of adds, imports (a batch due in one hour),
/// takes, completions, failures, releases, parks and wakes, due times changed and
/// cleared, moves to another queue, cancels, merges, reopens, a queue renamed and rows
/// deleted by another program, the kept counts equal a recount and `metrics` equals a
/// direct count. `check` then names a count changed by hand, and `check
/// --repair-figures`' rebuild puts it right.
#[test]
fn due_counts_follow_random_writes_on_postgres() {
    use crate::support::Rand;
    let Some(b) = crate::support::backend::PgBackend::from_env() else {
        return;
    };
    let mut boss = setup(&b);
    boss.set_queue("other", &QueueUpdate::default(), true)
        .unwrap();
    let mut alice = b.open("alice", 0);
    let mut admin = b.admin();
    let now = boss.now().unwrap();
    let mut r = Rand::seeded(33);
    // ±30 h around now, to the minute; a quarter without a due time.
    let due = |r: &mut Rand| -> Option<i64> {
        (r.below(4) > 0).then(|| now + (r.below(60 * 60) as i64 - 30 * 60) * MIN)
    };
    let mut ids: Vec<i64> = Vec::new();
    let mut queues = vec!["default".to_string(), "other".to_string()];
    let mut done = [0usize; 12];
    for step in 0..360 {
        let pick = |r: &mut Rand, ids: &[i64]| ids[r.below(ids.len() as u64) as usize];
        let kind = if ids.len() < 5 {
            0
        } else {
            r.below(12) as usize
        };
        let ok = match kind {
            0 => {
                let item = NewItem {
                    queue: queues[r.below(queues.len() as u64) as usize].clone(),
                    due_at: due(&mut r),
                    ..NewItem::titled("one")
                };
                let a = boss.add(&item);
                a.map(|a| ids.push(a.id)).is_ok()
            }
            1 => {
                // An import: one transaction, half of it due in the same hour.
                let same = due(&mut r).unwrap_or(now);
                let batch: Vec<NewItem> = (0..20)
                    .map(|i| NewItem {
                        due_at: if i % 2 == 0 {
                            Some(same + i)
                        } else {
                            due(&mut r)
                        },
                        ..NewItem::titled("imported")
                    })
                    .collect();
                let added = boss.add_each(&batch);
                added.map(|a| ids.extend(a.iter().map(|a| a.id))).is_ok()
            }
            2..=4 => {
                let id = pick(&mut r, &ids);
                match alice.take(id) {
                    Ok(it) => {
                        let t = it.lock_token;
                        match (kind, r.below(3)) {
                            (2, _) => alice.complete(id, t, None).is_ok(),
                            (3, 0) => alice.fail(id, t, "broken").is_ok(),
                            (3, 1) => alice.release(id, t).is_ok(),
                            (3, _) => alice.skip(id, t).is_ok(),
                            _ => alice.park(id, t, now + 3 * 60 * MIN, "later").is_ok(),
                        }
                    }
                    Err(_) => alice.wake(id).is_ok(),
                }
            }
            5 | 6 => {
                let id = pick(&mut r, &ids);
                let edit = ItemEdit::default().with(Col::DueAt, Value::Time(due(&mut r)));
                boss.edit(id, &edit).is_ok()
            }
            7 => {
                let id = pick(&mut r, &ids);
                let q = queues[r.below(queues.len() as u64) as usize].clone();
                let edit = ItemEdit::default().with(Col::Queue, Value::Text(Some(q)));
                boss.edit(id, &edit).is_ok()
            }
            8 => {
                let (id, into) = (pick(&mut r, &ids), pick(&mut r, &ids));
                match r.below(2) {
                    0 => boss.cancel(id, "not needed").is_ok(),
                    _ => boss.merge(id, into, None, Some("same")).is_ok(),
                }
            }
            9 => {
                let id = pick(&mut r, &ids);
                match r.below(2) {
                    0 => boss.reopen(id, "again").is_ok(),
                    _ => boss.requeue(id).is_ok(),
                }
            }
            10 => {
                // Another program deletes an item nobody has touched yet.
                let id = pick(&mut r, &ids);
                admin
                    .execute(
                        "DELETE FROM items WHERE id = $1 \
                         AND NOT EXISTS (SELECT 1 FROM events WHERE item_id = $1)",
                        &[&id],
                    )
                    .unwrap()
                    == 1
            }
            _ => {
                let from = queues.pop().unwrap();
                let to = format!("q{step}");
                let ok = boss.rename_queue(&from, &to).is_ok();
                queues.push(if ok { to } else { from });
                ok
            }
        };
        if ok {
            done[kind] += 1;
        }

        if step % 12 == 11 {
            due_counts_agree(&mut admin, &mut *boss, &format!("step {step} ({done:?})"));
        }
    }
    // Every kind of step changed something.
    assert!(done.iter().all(|&n| n > 0), "{done:?}");
    let kept: i64 = admin
        .query_one("SELECT coalesce(sum(n), 0)::bigint FROM due_hours", &[])
        .unwrap()
        .get(0);
    assert!(kept > 50, "{kept} open items due");
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());

    let r = admin
        .query_one(
            "SELECT min(queue COLLATE \"C\"), max(queue COLLATE \"C\") FROM due_hours",
            &[],
        )
        .unwrap();
    let (qa, qb): (String, String) = (r.get(0), r.get(1));
    assert_ne!(qa, qb, "two queues with due items");
    b.spoil(&format!(
        "UPDATE due_hours SET n = n + 1 WHERE queue = '{qa}' \
         AND hour = (SELECT min(hour) FROM due_hours WHERE queue = '{qa}')"
    ));
    b.spoil(&format!("DELETE FROM due_hours WHERE queue = '{qb}'"));
    let found = boss.check().unwrap();
    assert_eq!(found.len(), 2, "{found:?}");
    for (f, q) in found.iter().zip([&qa, &qb]) {
        assert!(
            f.starts_with("metrics due counts:")
                && f.contains(&format!("queue '{q}'"))
                && f.contains("--repair-figures"),
            "{found:?}"
        );
    }
    boss.rebuild_figures().unwrap();
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
    due_counts_agree(&mut admin, &mut *boss, "the rebuild");
}
