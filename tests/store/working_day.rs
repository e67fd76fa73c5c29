//! Conformance of the working-day operations (complete-and-next), on SQLite always and on
//! PostgreSQL when `CASELOAD_TEST_PG` is set. Same harness and cast as conformance.rs:
//! "boss" is the supervisor, "alice" and "bob" are staff.

use crate::support::backend::Adds;
use crate::support::backend::{Backend, add, kinds, setup};
use caseload::domain::{EventKind, ItemState, NewItem, QueueUpdate};
use caseload::store::{
    AddOptions, Applied, ListFilter, StateFilter, Store, StoreError, TakeNext, exit,
};

conformance!(
    complete_and_next_takes_the_next_in_one_transaction,
    complete_and_next_with_nothing_left_still_completes,
    complete_and_next_obeys_the_wip_limit_pause_and_skips,
    complete_and_next_on_a_lost_lock_changes_nothing,
    complete_and_next_refuses_an_unknown_queue_before_completing,
    adding_to_an_unknown_queue_is_refused_unless_asked,
    renaming_a_queue_moves_its_items_and_locks,
    only_an_empty_queue_is_deleted,
);

fn add_in(s: &mut dyn Store, queue: &str, title: &str, priority: i64) -> i64 {
    s.add(&NewItem {
        queue: queue.into(),
        priority,
        ..NewItem::titled(title)
    })
    .expect("add")
    .id
}

fn in_queue(queue: &str) -> TakeNext {
    TakeNext {
        queue: Some(queue.into()),
        skip: vec![],
    }
}

fn held_by(s: &mut dyn Store, user: &str) -> Vec<i64> {
    s.list(&ListFilter {
        state: StateFilter::Locked,
        holder: Some(user.into()),
        limit: 100,
        ..Default::default()
    })
    .expect("list")
    .iter()
    .map(|i| i.id)
    .collect()
}

#[track_caller]
fn nothing_left<T: std::fmt::Debug>(r: Result<T, StoreError>) -> StoreError {
    match r {
        Ok(v) => panic!("expected a 'nothing to claim' refusal, got Ok({v:?})"),
        Err(e) => {
            assert_eq!(e.exit_code(), exit::NOTHING, "{e}");
            e
        }
    }
}

fn complete_and_next_takes_the_next_in_one_transaction(b: &dyn Backend) {
    let mut boss = setup(b);
    let a = add_in(&mut *boss, "default", "first", 3);
    let bb = add_in(&mut *boss, "default", "second", 2);
    let c = add_in(&mut *boss, "default", "third", 1);
    let mut alice = b.open("alice", 0);
    let t = alice.take_next(&TakeNext::default()).unwrap().lock_token;
    let done = alice
        .complete_and_next(a, t, Some("reset"), &TakeNext::default())
        .unwrap();
    assert_eq!(done.finished, Applied::Now);
    let next = done.next.expect("the next item");
    assert_eq!(next.id, bb, "the next in take order");
    assert_eq!(next.lock_user.as_deref(), Some("alice"));
    let first = alice.item(a).unwrap();
    assert_eq!(first.state, ItemState::Done);
    assert_eq!(first.result.as_deref(), Some("reset"));
    assert_eq!(kinds(&mut *alice, a), ["created", "locked", "completed"]);
    assert_eq!(kinds(&mut *alice, bb), ["created", "locked"]);
    // One transaction: both events carry the transaction's one time.
    let completed = alice.history(a).unwrap().pop().unwrap();
    let locked = alice.history(bb).unwrap().pop().unwrap();
    assert_eq!(completed.at, locked.at, "both events in one transaction");
    assert_eq!(locked.detail["token"], next.lock_token);
    // The token printed is the one that fences the next complete.
    let again = alice
        .complete_and_next(bb, next.lock_token, None, &TakeNext::default())
        .unwrap();
    assert_eq!(again.next.unwrap().id, c);
    assert_eq!(held_by(&mut *alice, "alice"), [c]);
}

fn complete_and_next_with_nothing_left_still_completes(b: &dyn Backend) {
    let mut boss = setup(b);
    let a = add(&mut *boss, "last one");
    let other = add_in(&mut *boss, "elsewhere", "not in my queue", 9);
    let mut alice = b.open("alice", 0);
    let t = alice.take(a).unwrap().lock_token;
    let done = alice
        .complete_and_next(a, t, None, &in_queue("default"))
        .unwrap();
    let e = nothing_left(done.next);
    assert!(
        matches!(&e, StoreError::NothingToClaim(m) if m.contains("default")),
        "{e:?}"
    );
    assert_eq!(alice.item(a).unwrap().state, ItemState::Done);
    assert_eq!(alice.item(other).unwrap().lock_user, None);
    // The same complete again (a retry whose answer was lost) is acknowledged and takes
    // nothing: the first run already took whatever there was.
    let again = alice
        .complete_and_next(a, t, None, &TakeNext::default())
        .unwrap();
    assert_eq!(again.finished, Applied::Already);
    let e = nothing_left(again.next);
    assert_eq!(
        e.to_string(),
        format!(
            "nothing to claim: #{a} was completed by you before, with the next item if there \
             was one (see `caseload list --mine`)"
        )
    );
    assert_eq!(held_by(&mut *alice, "alice"), Vec::<i64>::new());
    assert_eq!(alice.item(other).unwrap().lock_user, None);
}

fn complete_and_next_obeys_the_wip_limit_pause_and_skips(b: &dyn Backend) {
    let mut boss = setup(b);
    let limit = |n| QueueUpdate {
        max_per_user: Some(Some(n)),
        ..Default::default()
    };
    boss.set_queue("default", &limit(2), false).unwrap();
    let a = add_in(&mut *boss, "default", "a", 5);
    let bb = add_in(&mut *boss, "default", "b", 4);
    let skipped = add_in(&mut *boss, "default", "skipped", 3);
    let c = add_in(&mut *boss, "default", "c", 2);
    let mut alice = b.open("alice", 0);
    let ta = alice.take(a).unwrap().lock_token;
    alice.take(bb).unwrap();
    // At her limit of 2: the complete frees the place the take then uses.
    let skip = TakeNext {
        queue: None,
        skip: vec![skipped],
    };
    let next = alice.complete_and_next(a, ta, None, &skip).unwrap().next;
    assert_eq!(next.unwrap().id, c, "skipped items are not offered");
    assert_eq!(alice.item(skipped).unwrap().lock_user, None);

    // A full limit in the queue asked for: completed, and the limit named.
    boss.set_queue("wip", &limit(1), true).unwrap();
    let w1 = add_in(&mut *boss, "wip", "w1", 1);
    add_in(&mut *boss, "wip", "w2", 1);
    alice.take(w1).unwrap();
    let tc = alice.item(c).unwrap().lock_token;
    let done = alice
        .complete_and_next(c, tc, None, &in_queue("wip"))
        .unwrap();
    let e = nothing_left(done.next);
    assert!(matches!(e, StoreError::WipLimit { held: 1, .. }), "{e:?}");
    assert_eq!(alice.item(c).unwrap().state, ItemState::Done);

    // A paused queue: completed, and the pause named.
    let pause = QueueUpdate {
        paused: Some(true),
        ..Default::default()
    };
    boss.set_queue("default", &pause, false).unwrap();
    let tb = alice.item(bb).unwrap().lock_token;
    let done = alice
        .complete_and_next(bb, tb, None, &in_queue("default"))
        .unwrap();
    let e = nothing_left(done.next);
    assert!(matches!(e, StoreError::Paused { .. }), "{e:?}");
    assert_eq!(alice.item(bb).unwrap().state, ItemState::Done);
    assert_eq!(alice.item(skipped).unwrap().lock_user, None);
}

fn complete_and_next_on_a_lost_lock_changes_nothing(b: &dyn Backend) {
    let mut boss = setup(b);
    let a = add_in(&mut *boss, "default", "taken over", 2);
    let spare = add_in(&mut *boss, "default", "spare", 1);
    let mut alice = b.open("alice", 0);
    let t = alice.take(a).unwrap().lock_token;
    let mut bob = b.open("bob", 61 * 1000);
    bob.take(a).unwrap();
    let e = alice
        .complete_and_next(a, t, Some("late"), &TakeNext::default())
        .unwrap_err();
    assert_eq!(e.exit_code(), exit::CONFLICT, "{e}");
    assert!(matches!(e, StoreError::LockLost { .. }), "{e:?}");
    assert_eq!(alice.item(a).unwrap().state, ItemState::Open);
    assert_eq!(alice.item(spare).unwrap().lock_user, None, "nothing taken");
    assert_eq!(kinds(&mut *alice, spare), ["created"]);
}

fn complete_and_next_refuses_an_unknown_queue_before_completing(b: &dyn Backend) {
    let mut boss = setup(b);
    let a = add(&mut *boss, "kept open");
    let mut alice = b.open("alice", 0);
    let t = alice.take(a).unwrap().lock_token;
    let e = alice
        .complete_and_next(a, t, None, &in_queue("defualt"))
        .unwrap_err();
    assert!(matches!(e, StoreError::UnknownQueue { .. }), "{e:?}");
    let item = alice.item(a).unwrap();
    assert_eq!(item.state, ItemState::Open, "the complete was not applied");
    assert_eq!(item.lock_user.as_deref(), Some("alice"));
    let last = alice.history(a).unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Locked);
}

fn adding_to_an_unknown_queue_is_refused_unless_asked(b: &dyn Backend) {
    let mut boss = setup(b);
    boss.set_queue("helpdesk", &QueueUpdate::default(), true)
        .unwrap();
    let item = NewItem {
        queue: "helpdsk".into(),
        ..NewItem::titled("typo")
    };
    let e = boss
        .add_items(std::slice::from_ref(&item), AddOptions::default())
        .unwrap_err();
    assert!(
        matches!(&e, StoreError::UnknownQueue { name, .. } if name == "helpdsk"),
        "{e:?}"
    );
    assert!(e.to_string().contains("did you mean helpdesk?"), "{e}");
    assert!(boss.queue("helpdsk").is_err(), "no queue was created");
    // `default` is always created on first use; asked, any queue is.
    let plain = NewItem::titled("plain");
    boss.add_items(std::slice::from_ref(&plain), AddOptions::default())
        .unwrap();
    let added = boss
        .add_items(&[item], AddOptions::creating_queues())
        .unwrap();
    assert_eq!(boss.item(added[0].id).unwrap().queue, "helpdsk");
}

fn renaming_a_queue_moves_its_items_and_locks(b: &dyn Backend) {
    let mut boss = setup(b);
    let held = add_in(&mut *boss, "helpdsk", "held", 2);
    let free = add_in(&mut *boss, "helpdsk", "free", 1);
    let mut alice = b.open("alice", 0);
    let t = alice.take(held).unwrap().lock_token;
    let e = alice.rename_queue("helpdsk", "helpdesk").unwrap_err();
    assert_eq!(e.exit_code(), exit::SUPERVISOR_ONLY, "{e}");
    let e = boss.rename_queue("helpdsk", "default").unwrap_err();
    assert!(e.to_string().contains("exists already"), "{e}");
    assert_eq!(boss.rename_queue("helpdsk", "helpdesk").unwrap(), 2);
    // Audited: the new queue (from which name) and the old one (to which).
    let audit = boss.audit(None, 0).unwrap();
    let about = |q: &str| audit.iter().rev().find(|a| a.subject == q).cloned();
    let new = about("helpdesk").expect("an audit record of the new name");
    assert_eq!(new.actor, "boss");
    assert_eq!(new.old["renamed_from"], "helpdsk");
    assert_eq!(about("helpdsk").unwrap().new["renamed_to"], "helpdesk");
    assert!(boss.queue("helpdsk").is_err());
    assert_eq!(boss.queue("helpdesk").unwrap().lock_seconds, 1800);
    let item = boss.item(held).unwrap();
    assert_eq!(item.queue, "helpdesk");
    assert_eq!(item.lock_user.as_deref(), Some("alice"));
    assert_eq!(kinds(&mut *boss, free), ["created", "noted"]);
    let last = boss.history(free).unwrap().pop().unwrap();
    assert_eq!(last.actor, "boss");
    assert_eq!(last.detail_str("renamed_from"), Some("helpdsk"));
    // The kept counts follow (the Queue view's total and Stats read them).
    let open = ListFilter {
        state: StateFilter::Open,
        queue: Some("helpdesk".into()),
        limit: 10,
        ..Default::default()
    };
    assert_eq!(boss.count(&open).unwrap(), 2);
    let old = ListFilter {
        queue: Some("helpdsk".into()),
        ..open.clone()
    };
    assert_eq!(boss.count(&old).unwrap(), 0);
    // The holder's token still holds; the next take comes from the new name.
    alice.complete(held, t, None).unwrap();
    assert_eq!(alice.take_next(&in_queue("helpdesk")).unwrap().id, free);
}

fn only_an_empty_queue_is_deleted(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add_in(&mut *boss, "old", "finished long ago", 1);
    boss.set_queue("spare", &QueueUpdate::default(), true)
        .unwrap();
    let mut alice = b.open("alice", 0);
    let t = alice.take(id).unwrap().lock_token;
    alice.complete(id, t, None).unwrap();
    let e = boss.delete_queue("old").unwrap_err();
    assert!(e.to_string().contains("holds 1 item(s)"), "{e}");
    assert_eq!(
        alice.delete_queue("spare").unwrap_err().exit_code(),
        exit::SUPERVISOR_ONLY
    );
    boss.delete_queue("spare").unwrap();
    let audit = boss.audit(None, 0).unwrap();
    let last = audit.iter().rev().find(|a| a.subject == "spare").unwrap();
    assert_eq!(last.new["deleted"], true);
    assert_eq!(last.old["lock_seconds"], 1800);
    assert!(matches!(
        boss.queue("spare"),
        Err(StoreError::UnknownQueue { .. })
    ));
    assert!(matches!(
        boss.delete_queue("spare"),
        Err(StoreError::UnknownQueue { .. })
    ));
    let names: Vec<String> = boss.queues().unwrap().into_iter().map(|q| q.name).collect();
    assert_eq!(names, ["default", "old"]);
}
