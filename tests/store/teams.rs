//! Who may take what, team leads, people who leave (issue 29 §2–§4), on both backends:
//! take-next offers only a person's queues, by id and `--queue` they are refused (exit 5)
//! naming why, assign to someone not eligible names who is; a lead is a supervisor in
//! their queues only; a leaver's locks, assignments and parked items go back to the pool
//! in one transaction, each with an event, and the audit gets one row. "boss" opens first
//! and is the supervisor; the others are staff until made otherwise.

use crate::support::MIN;
use crate::support::backend::{Adds, Backend, BoxStore, add, assert_code, kinds, setup};
use caseload::domain::{AuditKind, ItemState, NewItem, QueueUpdate, Queues, Role};
use caseload::store::{ListFilter, StateFilter, Store, StoreError, TakeNext, UserChange, exit};

conformance!(
    take_next_offers_only_the_queues_one_may_take,
    a_limited_take_next_keeps_priority_order_across_one_s_queues,
    by_id_and_by_queue_a_queue_not_one_s_own_is_refused,
    assign_to_someone_not_eligible_names_who_is,
    reviews_follow_their_own_list,
    a_lead_supervises_their_queues_only,
    a_leaver_s_work_returns_to_the_pool_in_one_transaction,
    a_rejected_review_whose_maker_left_goes_to_the_pool,
);

fn item_in(s: &mut dyn Store, queue: &str, title: &str) -> i64 {
    let mut it = NewItem::titled(title);
    it.queue = queue.to_string();
    s.add(&it).unwrap().id
}

fn only(names: &[&str]) -> Queues {
    Queues::Only(names.iter().map(|n| n.to_string()).collect())
}

fn set_queues(boss: &mut dyn Store, who: &str, takes: Queues) {
    let c = UserChange {
        queues: Some(takes),
        ..Default::default()
    };
    boss.change_user(who, &c).unwrap();
}

/// boss, with one item in queue "kyc" and then one in "support": (boss, kyc's, support's).
fn two_queues(b: &dyn Backend) -> (BoxStore, i64, i64) {
    let mut boss = setup(b);
    let kyc = item_in(&mut *boss, "kyc", "check passport");
    let support = item_in(&mut *boss, "support", "printer jam");
    (boss, kyc, support)
}

fn clean(boss: &mut dyn Store) {
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

fn take_next_offers_only_the_queues_one_may_take(b: &dyn Backend) {
    let (mut boss, kyc, support) = two_queues(b);
    set_queues(&mut *boss, "alice", only(&["support"]));
    let mut alice = b.open("alice", 0);
    // What `claim --wait` and the TUI's "work arrived" count: hers only.
    assert_eq!(alice.takeable(None, 10).unwrap(), 1);
    assert_eq!(boss.takeable(None, 10).unwrap(), 2);
    // The kyc item is first in take order; alice's take passes over it.
    let got = alice.take_next(&TakeNext::default()).unwrap();
    assert_eq!(got.id, support);
    // Nothing else she may take: nothing to claim, though kyc's item is free.
    let e = assert_code(alice.take_next(&TakeNext::default()), exit::NOTHING);
    assert!(e.to_string().contains("no free items"), "{e}");
    assert_eq!(boss.item(kyc).unwrap().lock_user, None);
    // Back to all: she takes it.
    set_queues(&mut *boss, "alice", Queues::All);
    assert_eq!(alice.take_next(&TakeNext::default()).unwrap().id, kyc);
    // The audit says who changed what, from and to.
    let audit = boss.audit(Some("boss"), 0).unwrap();
    let access: Vec<_> = (audit.iter())
        .filter(|a| a.kind == AuditKind::Access)
        .collect();
    assert_eq!(access.len(), 2, "{audit:?}");
    assert_eq!(access[0].subject, "alice");
    assert_eq!(access[0].new["queues"], serde_json::json!(["support"]));
    assert_eq!(access[1].old["queues"], serde_json::json!(["support"]));
    assert_eq!(access[1].new["queues"], "all");
    clean(&mut *boss);
}

fn by_id_and_by_queue_a_queue_not_one_s_own_is_refused(b: &dyn Backend) {
    let (mut boss, kyc, _) = two_queues(b);
    set_queues(&mut *boss, "alice", only(&["support"]));
    let mut alice = b.open("alice", 0);
    let e = assert_code(alice.take(kyc), exit::SUPERVISOR_ONLY);
    assert!(matches!(e, StoreError::NotEligible(_)), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("alice may not take from queue 'kyc'") && msg.contains("theirs: support"),
        "{msg}"
    );
    let next = TakeNext {
        queue: Some("kyc".into()),
        ..Default::default()
    };
    let e = assert_code(alice.take_next(&next), exit::SUPERVISOR_ONLY);
    assert!(e.to_string().contains("queue 'kyc'"), "{e}");
    // Nothing was written.
    assert_eq!(boss.item(kyc).unwrap().lock_user, None);
    assert_eq!(kinds(&mut *boss, kyc), ["created"]);
    // An unknown queue is still named as unknown, first.
    let next = TakeNext {
        queue: Some("nope".into()),
        ..Default::default()
    };
    assert_code(alice.take_next(&next), exit::ERROR);
    clean(&mut *boss);
}

fn assign_to_someone_not_eligible_names_who_is(b: &dyn Backend) {
    let (mut boss, kyc, support) = two_queues(b);
    set_queues(&mut *boss, "alice", only(&["support"]));
    set_queues(&mut *boss, "bob", only(&["kyc", "support"]));
    let e = assert_code(
        boss.assign(kyc, None, "alice", "she knows it"),
        exit::SUPERVISOR_ONLY,
    );
    let msg = e.to_string();
    assert!(msg.contains("alice may not take from queue 'kyc'"), "{msg}");
    assert!(
        msg.contains("who may take from queue 'kyc': bob, boss"),
        "{msg}"
    );
    assert_code(
        boss.reassign(kyc, None, "alice", "cover"),
        exit::SUPERVISOR_ONLY,
    );
    assert_eq!(boss.item(kyc).unwrap().lock_user, None);
    // In her queue, she may be given it.
    let given = boss.assign(support, None, "alice", "hers").unwrap();
    assert_eq!(given.lock_user.as_deref(), Some("alice"));
    clean(&mut *boss);
}

fn reviews_follow_their_own_list(b: &dyn Backend) {
    let (mut boss, kyc, _) = two_queues(b);
    let all = QueueUpdate {
        review_percent: Some(100),
        ..Default::default()
    };
    boss.set_queue("kyc", &all, false).unwrap();
    let mut alice = b.open("alice", 0);
    let token = alice.take(kyc).unwrap().lock_token;
    alice.complete(kyc, token, None).unwrap();
    assert_eq!(boss.item(kyc).unwrap().state, ItemState::Review);
    // bob takes from every queue but reviews none.
    let c = UserChange {
        reviews: Some(Queues::Only(vec![])),
        ..Default::default()
    };
    boss.change_user("bob", &c).unwrap();
    let mut bob = b.open("bob", 0);
    let review_list = |s: &mut dyn Store, who: &str| -> Vec<i64> {
        let f = ListFilter {
            state: StateFilter::Review,
            reviewer: Some(who.into()),
            limit: 100,
            ..Default::default()
        };
        s.list(&f).unwrap().iter().map(|i| i.id).collect()
    };
    assert!(
        review_list(&mut *bob, "bob").is_empty(),
        "the Review view lists none"
    );
    assert_code(bob.take_review(None, None), exit::NOTHING);
    let e = assert_code(bob.take_review(None, Some(kyc)), exit::SUPERVISOR_ONLY);
    assert!(
        e.to_string().contains("bob may not review in queue 'kyc'"),
        "{e}"
    );
    assert_code(bob.take_review(Some("kyc"), None), exit::SUPERVISOR_ONLY);
    // carol reviews kyc.
    let c = UserChange {
        reviews: Some(only(&["kyc"])),
        ..Default::default()
    };
    boss.change_user("carol", &c).unwrap();
    let mut carol = b.open("carol", 0);
    assert_eq!(review_list(&mut *carol, "carol"), [kyc]);
    assert_eq!(carol.take_review(None, None).unwrap().id, kyc);
    clean(&mut *boss);
}

fn a_lead_supervises_their_queues_only(b: &dyn Backend) {
    let (mut boss, kyc, support) = two_queues(b);
    // A lead needs their queues.
    let c = UserChange {
        role: Some(Role::Lead),
        ..Default::default()
    };
    assert_code(boss.change_user("carol", &c), exit::ERROR);
    let c = UserChange {
        role: Some(Role::Lead),
        queues: Some(only(&["kyc"])),
        ..Default::default()
    };
    boss.change_user("carol", &c).unwrap();
    assert_eq!(boss.role("carol").unwrap(), Role::Lead);
    let mut alice = b.open("alice", 0);
    let a = alice.take(kyc).unwrap();
    let s = alice.take(support).unwrap();
    let mut carol = b.open("carol", 0);
    // In kyc: unlock, queue settings, reopen are hers.
    carol.unlock(kyc, None, "stuck").unwrap();
    let paused = QueueUpdate {
        lock_seconds: Some(300),
        ..Default::default()
    };
    carol.set_queue("kyc", &paused, false).unwrap();
    carol.assign(kyc, None, "carol", "mine now").unwrap();
    // Elsewhere: exit 5, naming her queues.
    let e = assert_code(carol.unlock(support, None, "stuck"), exit::SUPERVISOR_ONLY);
    let msg = e.to_string();
    assert!(
        msg.contains("carol leads kyc only and may not unlock items in queue 'support'"),
        "{msg}"
    );
    assert_code(
        carol.set_queue("support", &paused, false),
        exit::SUPERVISOR_ONLY,
    );
    assert_code(
        carol.assign(support, None, "bob", "x"),
        exit::SUPERVISOR_ONLY,
    );
    // Nor a supervisor's own: roles, people.
    let e = assert_code(
        carol.change_user(
            "alice",
            &UserChange {
                role: Some(Role::Supervisor),
                ..Default::default()
            },
        ),
        exit::SUPERVISOR_ONLY,
    );
    assert!(e.to_string().contains("carol is a lead (of kyc)"), "{e}");
    assert_eq!(boss.item(support).unwrap().lock_token, s.lock_token);
    assert_ne!(boss.item(kyc).unwrap().lock_token, a.lock_token);
    // The role change is audited as every role change.
    let audit = boss.audit(Some("boss"), 0).unwrap();
    assert!(
        audit
            .iter()
            .any(|r| r.kind == AuditKind::Role && r.subject == "carol" && r.new == "lead"),
        "{audit:?}"
    );
    clean(&mut *boss);
}

fn a_leaver_s_work_returns_to_the_pool_in_one_transaction(b: &dyn Backend) {
    let mut boss = setup(b);
    let held = add(&mut *boss, "held by bob");
    let assigned = add(&mut *boss, "assigned to bob");
    let parked = add(&mut *boss, "parked by bob");
    let other = add(&mut *boss, "alice's");
    let mut bob = b.open("bob", 0);
    bob.take(held).unwrap();
    boss.assign(assigned, None, "bob", "his customer").unwrap();
    let t = bob.take(parked).unwrap().lock_token;
    let until = bob.now().unwrap() + 60 * MIN;
    bob.park(parked, t, until, "waiting for the customer")
        .unwrap();
    let mut alice = b.open("alice", 0);
    alice.take(other).unwrap();
    boss.change_user(
        "bob",
        &UserChange {
            login: Some(Some("bobby".into())),
            ..Default::default()
        },
    )
    .unwrap();

    let c = UserChange {
        leaving: Some("moved to sales".into()),
        ..Default::default()
    };
    let done = boss.change_user("bob", &c).unwrap();
    assert_eq!(done.released, [held, assigned]);
    assert_eq!(done.unparked, [parked]);
    for id in [held, assigned, parked] {
        let it = boss.item(id).unwrap();
        assert_eq!(
            (it.state, it.lock_user.as_deref()),
            (ItemState::Open, None),
            "#{id}"
        );
        let last = boss.history(id).unwrap().pop().unwrap();
        assert_eq!(last.actor, "boss");
        match id {
            id if id == parked => {
                assert_eq!(
                    (last.kind.as_str(), last.detail["by"].as_str()),
                    ("woke", Some("leaving"))
                )
            }
            _ => {
                assert_eq!(last.kind.as_str(), "unlocked");
                assert_eq!(last.detail["reason"], "moved to sales");
                assert_eq!(last.detail["leaving"], true);
            }
        }
    }
    // Alice's work is hers still.
    assert_eq!(
        boss.item(other).unwrap().lock_user.as_deref(),
        Some("alice")
    );
    // One audit row; the binding is gone; he is hidden from the list, takes nothing and
    // is assigned nothing.
    let audit = boss.audit(Some("boss"), 0).unwrap();
    let rows: Vec<_> = (audit.iter())
        .filter(|a| a.kind == AuditKind::Leaving)
        .collect();
    assert_eq!(rows.len(), 1, "{audit:?}");
    assert_eq!(rows[0].new["reason"], "moved to sales");
    assert_eq!(rows[0].old["login"], "bobby");
    let bob_now = (boss.users().unwrap().into_iter())
        .find(|u| u.name == "bob")
        .unwrap();
    assert_eq!(bob_now.login, None);
    assert!(bob_now.access.left.is_some());
    let e = assert_code(bob.take_next(&TakeNext::default()), exit::SUPERVISOR_ONLY);
    assert!(
        e.to_string().contains("bob has left (moved to sales)"),
        "{e}"
    );
    assert_code(bob.take(held), exit::SUPERVISOR_ONLY);
    assert_code(
        boss.assign(held, None, "bob", "again"),
        exit::SUPERVISOR_ONLY,
    );
    // Twice is refused; back undoes the mark.
    assert_code(boss.change_user("bob", &c), exit::ERROR);
    boss.change_user(
        "bob",
        &UserChange {
            back: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(bob.take(held).unwrap().lock_user.as_deref(), Some("bob"));
    clean(&mut *boss);
}

fn a_rejected_review_whose_maker_left_goes_to_the_pool(b: &dyn Backend) {
    let mut boss = setup(b);
    let all = QueueUpdate {
        review_percent: Some(100),
        ..Default::default()
    };
    boss.set_queue("default", &all, false).unwrap();
    let id = add(&mut *boss, "verify");
    let carols = add(&mut *boss, "carol's");
    let mut bob = b.open("bob", 0);
    let t = bob.take(id).unwrap().lock_token;
    bob.complete(id, t, Some("ok")).unwrap();
    let mut carol = b.open("carol", 0);
    let t = carol.take(carols).unwrap().lock_token;
    carol.complete(carols, t, Some("ok")).unwrap();
    // bob is reviewing carol's item when he leaves.
    assert_eq!(bob.take_review(None, None).unwrap().id, carols);
    let c = UserChange {
        leaving: Some("left the company".into()),
        ..Default::default()
    };
    let done = boss.change_user("bob", &c).unwrap();
    // The review he held waits for someone else; the pending review of his work stays.
    assert_eq!(done.released, [carols]);
    let waiting = boss.item(carols).unwrap();
    assert_eq!(
        (waiting.state, waiting.lock_user),
        (ItemState::Review, None)
    );
    assert_eq!(boss.item(id).unwrap().state, ItemState::Review);
    let mut alice = b.open("alice", 0);
    let t = alice.take_review(None, None).unwrap().lock_token;
    let back = alice.reject(id, t, "wrong address").unwrap();
    assert_eq!((back.state, back.lock_user), (ItemState::Open, None));
    let last = alice.history(id).unwrap().pop().unwrap();
    assert_eq!(last.kind.as_str(), "rejected");
    assert!(last.detail["to"].is_null(), "{:?}", last.detail);
    clean(&mut *boss);
}

/// On PostgreSQL a lead's rights hold against raw SQL too: a database role bound to a lead
/// of kyc may change kyc's settings through `caseload_set_queue` from psql, and is refused
/// (42501) for support's, for people's queues and for leaving; a staff role is refused all.
#[test]
fn postgres_a_lead_s_rights_hold_in_the_server_s_functions() {
    use crate::support::backend::PgBackend;
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    let (mut boss, _, _) = two_queues(&b);
    let role = format!("{}_carol", b.schema);
    let mut admin = b.admin();
    admin
        .batch_execute(&format!(
            "CREATE ROLE {role} NOLOGIN; GRANT USAGE ON SCHEMA {s} TO {role}; \
             GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {role};",
            s = b.schema
        ))
        .unwrap();
    let c = UserChange {
        role: Some(Role::Lead),
        queues: Some(only(&["kyc"])),
        login: Some(Some(role.clone())),
        ..Default::default()
    };
    boss.change_user("carol", &c).unwrap();
    let mut carol = b.admin();
    carol
        .batch_execute(&format!("SET SESSION AUTHORIZATION {role}"))
        .unwrap();
    let set = |c: &mut ::postgres::Client, queue: &str| {
        c.execute(
            "SELECT caseload_set_queue('carol', $1, 900, 60, NULL, false, 'priority', NULL, \
             3600, 30, 0, 0)",
            &[&queue],
        )
        .map(|_| ())
        .map_err(|e| e.code().map(|s| s.code().to_string()))
    };
    assert_eq!(set(&mut carol, "kyc"), Ok(()));
    assert_eq!(set(&mut carol, "support"), Err(Some("42501".into())));
    let access = carol
        .execute(
            "SELECT caseload_set_access('carol', 'carol', NULL, NULL)",
            &[],
        )
        .unwrap_err();
    assert_eq!(access.code().map(|s| s.code()), Some("42501"));
    let leave = carol
        .execute(
            "SELECT caseload_set_leaving('carol', 'boss', 'x', NULL)",
            &[],
        )
        .unwrap_err();
    assert_eq!(leave.code().map(|s| s.code()), Some("42501"));
    carol.batch_execute("RESET SESSION AUTHORIZATION").unwrap();
    // Marked as leaving, the lead is one no more, even for kyc.
    boss.change_user(
        "carol",
        &UserChange {
            leaving: Some("gone".into()),
            ..Default::default()
        },
    )
    .unwrap();
    boss.change_user(
        "carol",
        &UserChange {
            login: Some(Some(role.clone())),
            ..Default::default()
        },
    )
    .unwrap();
    carol
        .batch_execute(&format!("SET SESSION AUTHORIZATION {role}"))
        .unwrap();
    assert_eq!(set(&mut carol, "kyc"), Err(Some("42501".into())));
    carol.batch_execute("RESET SESSION AUTHORIZATION").unwrap();
    let kyc = boss.queue("kyc").unwrap();
    assert_eq!(kyc.lock_seconds, 900, "her change to kyc stands");
    assert_ne!(boss.queue("support").unwrap().lock_seconds, 900);
    admin
        .batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE {role}"))
        .unwrap();
}

fn a_limited_take_next_keeps_priority_order_across_one_s_queues(b: &dyn Backend) {
    let mut boss = setup(b);
    let mut add_p = |q: &str, title: &str, priority: i64| -> i64 {
        let mut it = NewItem::titled(title);
        it.queue = q.to_string();
        it.priority = priority;
        boss.add(&it).unwrap().id
    };
    let old_low = add_p("support", "old, low", 0);
    let urgent_other = add_p("billing", "urgent, not hers", 9);
    let high = add_p("kyc", "high", 5);
    set_queues(&mut *boss, "alice", only(&["kyc", "support"]));
    let mut alice = b.open("alice", 0);
    let first = alice.take_next(&TakeNext::default()).unwrap().id;
    let second = alice.take_next(&TakeNext::default()).unwrap().id;
    assert_eq!([first, second], [high, old_low]);
    assert_code(alice.take_next(&TakeNext::default()), exit::NOTHING);
    assert_eq!(boss.item(urgent_other).unwrap().lock_user, None);
    clean(&mut *boss);
}
