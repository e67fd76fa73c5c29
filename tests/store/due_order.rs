//! Per-queue take order (`order = "priority" | "due"`) on both backends: take-next and the
//! list follow the queue's order; without a queue filter the mixed order puts due items of
//! due-ordered queues first; the setting is a supervisor's and round-trips.

use crate::support::backend::Adds;
use crate::support::backend::{Backend, setup};
use caseload::domain::{NewItem, QueueUpdate, TakeOrder};
use caseload::store::{ListFilter, StateFilter, Store, StoreError, TakeNext, exit};

conformance!(
    a_new_queue_takes_by_priority,
    a_due_queue_takes_overdue_and_soonest_first,
    the_list_of_a_due_queue_is_in_take_order,
    across_queues_due_items_of_due_queues_come_first,
    only_supervisors_set_the_order,
);

const H: i64 = 3_600_000;

fn add(s: &mut dyn Store, queue: &str, title: &str, priority: i64, due: Option<i64>) -> i64 {
    s.add(&NewItem {
        queue: queue.into(),
        priority,
        due_at: due,
        ..NewItem::titled(title)
    })
    .unwrap()
    .id
}

fn set_order(s: &mut dyn Store, queue: &str, order: TakeOrder) {
    let q = s
        .set_queue(
            queue,
            &QueueUpdate {
                order: Some(order),
                ..Default::default()
            },
            true,
        )
        .unwrap();
    assert_eq!(q.order, order);
}

/// Takes everything `who` can take in `queue` (all when `None`), in order; each completed.
fn drain(s: &mut dyn Store, queue: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    loop {
        match s.take_next(&TakeNext {
            queue: queue.map(str::to_string),
            ..TakeNext::default()
        }) {
            Ok(it) => {
                out.push(it.title.clone());
                s.complete(it.id, it.lock_token, None).unwrap();
            }
            Err(e) if e.exit_code() == exit::NOTHING => return out,
            Err(e) => panic!("take next: {e}"),
        }
    }
}

fn titles(s: &mut dyn Store, queue: Option<&str>) -> Vec<String> {
    s.list(&ListFilter {
        state: StateFilter::Open,
        queue: queue.map(str::to_string),
        limit: 100,
        ..ListFilter::default()
    })
    .unwrap()
    .into_iter()
    .map(|i| i.title)
    .collect()
}

/// A queue of five: two due (one overdue), one high priority without a due time, two
/// plain ones.
fn five(s: &mut dyn Store, queue: &str) {
    let now = s.now().unwrap();
    add(s, queue, "plain old", 0, None);
    add(s, queue, "urgent, no due", 5, None);
    add(s, queue, "due tomorrow", 0, Some(now + 24 * H));
    add(s, queue, "overdue 6h", 0, Some(now - 6 * H));
    add(s, queue, "plain new", 0, None);
}

fn a_new_queue_takes_by_priority(b: &dyn Backend) {
    let mut boss = setup(b);
    five(&mut *boss, "default");
    assert_eq!(boss.queue("default").unwrap().order, TakeOrder::Priority);
    let want = [
        "urgent, no due",
        "plain old",
        "due tomorrow",
        "overdue 6h",
        "plain new",
    ];
    assert_eq!(titles(&mut *boss, Some("default")), want);
    assert_eq!(drain(&mut *boss, Some("default")), want);
}

fn a_due_queue_takes_overdue_and_soonest_first(b: &dyn Backend) {
    let mut boss = setup(b);
    set_order(&mut *boss, "default", TakeOrder::Due);
    five(&mut *boss, "default");
    let want = [
        "overdue 6h",
        "due tomorrow",
        "urgent, no due",
        "plain old",
        "plain new",
    ];
    assert_eq!(drain(&mut *boss, Some("default")), want);
    // Back to priority: the next items follow it again.
    set_order(&mut *boss, "default", TakeOrder::Priority);
    five(&mut *boss, "default");
    assert_eq!(drain(&mut *boss, None)[0], "urgent, no due");
}

fn the_list_of_a_due_queue_is_in_take_order(b: &dyn Backend) {
    let mut boss = setup(b);
    set_order(&mut *boss, "default", TakeOrder::Due);
    five(&mut *boss, "default");
    let want = [
        "overdue 6h",
        "due tomorrow",
        "urgent, no due",
        "plain old",
        "plain new",
    ];
    assert_eq!(titles(&mut *boss, Some("default")), want);
    // Same rows whichever end a window is read from.
    let last_two: Vec<String> = boss
        .list(&ListFilter {
            queue: Some("default".into()),
            offset: 3,
            limit: 2,
            ..ListFilter::default()
        })
        .unwrap()
        .into_iter()
        .map(|i| i.title)
        .collect();
    assert_eq!(last_two, want[3..]);
    // Equal due times: priority, then age.
    let now = boss.now().unwrap();
    add(&mut *boss, "b", "b low", 0, Some(now + H));
    add(&mut *boss, "b", "b high", 3, Some(now + H));
    set_order(&mut *boss, "b", TakeOrder::Due);
    assert_eq!(titles(&mut *boss, Some("b")), ["b high", "b low"]);
}

fn across_queues_due_items_of_due_queues_come_first(b: &dyn Backend) {
    let mut boss = setup(b);
    let now = boss.now().unwrap();
    add(&mut *boss, "prio", "prio urgent", 9, None);
    add(
        &mut *boss,
        "prio",
        "prio due soon (not a due queue)",
        0,
        Some(now + H),
    );
    add(&mut *boss, "ship", "ship plain", 0, None);
    add(&mut *boss, "ship", "ship due in 2h", 0, Some(now + 2 * H));
    add(&mut *boss, "ship", "ship overdue", 0, Some(now - H));
    set_order(&mut *boss, "ship", TakeOrder::Due);
    let want = [
        "ship overdue",
        "ship due in 2h",
        "prio urgent",
        "prio due soon (not a due queue)",
        "ship plain",
    ];
    assert_eq!(titles(&mut *boss, None), want, "the mixed list");
    let mut alice = b.open("alice", 0);
    assert_eq!(drain(&mut *alice, None), want, "take next follows the list");
    // A paused due queue gives nothing; the others go on by priority.
    add(&mut *boss, "ship", "ship overdue 2", 0, Some(now - H));
    add(&mut *boss, "prio", "prio next", 1, None);
    boss.set_queue(
        "ship",
        &QueueUpdate {
            paused: Some(true),
            ..Default::default()
        },
        false,
    )
    .unwrap();
    assert_eq!(drain(&mut *alice, None), ["prio next"]);
}

fn only_supervisors_set_the_order(b: &dyn Backend) {
    let mut boss = setup(b);
    let mut alice = b.open("alice", 0);
    let e: StoreError = alice
        .set_queue(
            "default",
            &QueueUpdate {
                order: Some(TakeOrder::Due),
                ..Default::default()
            },
            false,
        )
        .unwrap_err();
    assert_eq!(e.exit_code(), exit::SUPERVISOR_ONLY);
    assert_eq!(boss.queue("default").unwrap().order, TakeOrder::Priority);
    set_order(&mut *boss, "default", TakeOrder::Due);
    let all = alice.queues().unwrap();
    let d = all.iter().find(|q| q.name == "default").unwrap();
    assert_eq!(d.order, TakeOrder::Due, "everyone sees it");
    assert_eq!(
        serde_json::to_value(d).unwrap()["order"],
        serde_json::json!("due")
    );
}

/// The due-order claim is an index walk like the priority one: no sort (SQLite's plan).
#[test]
fn the_due_order_candidate_walks_an_index() {
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
    for (order, index) in [
        (TakeOrder::Due, "items_take_due"),
        (TakeOrder::Priority, "items_take"),
    ] {
        let sql = caseload::store::sqlite::sql::candidate_in(true, order);
        let mut stmt = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let mut plan = Vec::new();
        let mut rows = stmt
            .query(rusqlite::named_params! {":now": 0, ":skip": "[]", ":me": "a", ":queue": "q"})
            .unwrap();
        while let Some(r) = rows.next().unwrap() {
            plan.push(r.get::<_, String>(3).unwrap());
        }
        let plan = plan.join("\n");
        assert!(
            plan.contains(&format!("USING INDEX {index} ")),
            "{order:?}: {plan}"
        );
        assert!(!plan.contains("TEMP B-TREE"), "{order:?} sorts: {plan}");
    }
}
