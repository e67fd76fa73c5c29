//! The store conformance suite: every test is written once against `dyn Store` and runs
//! against SQLite always and against PostgreSQL when `CASELOAD_TEST_PG` holds a URL
//! (`cargo test --test store conformance::`; otherwise the `postgres::` tests are counted as
//! skipped, and the binary's last line says so).
//!
//! In every test, "boss" opens the database first and so is its supervisor; "alice",
//! "bob" and "carol" are staff. Expiry is reached by opening a store whose clock is skewed
//! ahead, never by sleeping.

use crate::support::backend::Adds;
use std::time::Duration;

use crate::support::MIN;
use crate::support::backend::{Backend, BoxStore, add, assert_code, kinds, race, setup};
use caseload::domain::{EventKind, ItemState, NewItem, QueueUpdate, Role, TakeOrder};
use caseload::store::{Applied, ListFilter, StateFilter, Store, StoreError, TakeNext, exit};

conformance!(
    pooled;
    add_is_idempotent_by_request_id,
    a_request_id_reused_for_other_content_is_refused,
    add_batch_skips_known_request_ids,
    add_each_answers_row_by_row_across_statement_chunks,
    take_next_follows_take_order_and_queue_filter,
    take_a_chosen_item,
    second_taker_is_told_who_holds_it,
    an_expired_lock_can_be_taken_over,
    a_taken_over_holder_is_fenced_out,
    renew_extends_the_lock,
    release_returns_the_item,
    skip_releases_and_take_next_skips,
    save_notes_keeps_the_holders_notes,
    complete_with_result,
    fail_needs_a_reason,
    comments_need_no_lock,
    reap_releases_only_expired_locks,
    a_lock_keeps_the_age_it_was_given,
    wip_limit_is_enforced_by_the_claim,
    wip_limit_holds_under_parallel_claims_by_one_user,
    a_paused_queue_gives_nothing,
    staff_may_not_use_supervisor_actions,
    supervisor_unlock_and_reassign,
    supervisor_requeue_cancel_and_roles,
    supervisor_queue_settings,
    unlock_racing_complete_has_one_winner,
    reassign_racing_complete_has_one_winner,
    each_change_writes_exactly_its_events,
    list_and_count_each_state_filter,
    list_filters_and_windows,
    stats_figures,
    lost_locks_name_who_and_how,
    touch_last_seen_returns_the_previous_visit,
    check_is_empty_on_a_healthy_database,
    a_rebuild_of_the_figures_beside_writers_leaves_them_right,
    unknown_ids_are_not_found,
    unknown_queues_are_named,
    now_follows_the_deciding_clock,
    change_marker_moves_on_another_users_change,
    parallel_claims_never_share_an_item,
    every_window_of_a_long_list_matches_the_full_list,
);

// ----- helpers -------------------------------------------------------------------------

fn add_in(s: &mut dyn Store, queue: &str, title: &str, priority: i64) -> i64 {
    s.add(&NewItem {
        queue: queue.into(),
        priority,
        ..NewItem::titled(title)
    })
    .expect("add")
    .id
}

fn next(s: &mut dyn Store) -> Result<i64, StoreError> {
    s.take_next(&TakeNext::default()).map(|i| i.id)
}

fn filter(state: StateFilter) -> ListFilter {
    ListFilter {
        state,
        limit: 1000,
        ..Default::default()
    }
}

fn ids(s: &mut dyn Store, f: &ListFilter) -> Vec<i64> {
    s.list(f).expect("list").iter().map(|i| i.id).collect()
}

// ----- adding --------------------------------------------------------------------------

/// `add`'s rule (`same_content`): a known request id answers with its item for the same
/// title and body only; other content is refused naming the item, and nothing is written
/// (not even a queue the add would have created). An import's rule is unchanged.
fn a_request_id_reused_for_other_content_is_refused(b: &dyn Backend) {
    use caseload::store::AddOptions;
    let mut s = setup(b);
    let add_opts = AddOptions {
        same_content: true,
        ..AddOptions::default()
    };
    let item = NewItem {
        request_id: Some("req-7".into()),
        body: "the body".into(),
        ..NewItem::titled("Reset password")
    };
    let first = s.add_items(std::slice::from_ref(&item), add_opts).unwrap()[0];
    assert!(first.created);
    let again = s.add_items(std::slice::from_ref(&item), add_opts).unwrap()[0];
    assert_eq!((again.id, again.created), (first.id, false), "a retry");
    let before = s.count(&filter(StateFilter::All)).unwrap();
    for (other, differs) in [
        (
            NewItem {
                title: "Reset the password".into(),
                ..item.clone()
            },
            "title",
        ),
        (
            NewItem {
                body: "another body".into(),
                ..item.clone()
            },
            "body",
        ),
        (
            NewItem {
                title: "x".into(),
                body: String::new(),
                ..item.clone()
            },
            "title and body",
        ),
    ] {
        let e = assert_code(
            s.add_items(std::slice::from_ref(&other), add_opts),
            exit::CONFLICT,
        );
        assert_eq!(
            e,
            StoreError::RequestIdReused {
                request_id: "req-7".into(),
                id: first.id,
                differs
            }
        );
        let said = e.to_string();
        assert!(
            said.contains(&format!("#{}", first.id)) && said.contains("req-7"),
            "{said}"
        );
    }
    // In a new queue the add would create: refused before anything is kept.
    let elsewhere = NewItem {
        queue: "brand-new".into(),
        title: "Other".into(),
        ..item.clone()
    };
    let creating = AddOptions {
        create_queues: true,
        ..add_opts
    };
    assert_code(
        s.add_items(std::slice::from_ref(&elsewhere), creating),
        exit::CONFLICT,
    );
    assert!(s.queues().unwrap().iter().all(|q| q.name != "brand-new"));
    assert_eq!(s.count(&filter(StateFilter::All)).unwrap(), before);
    assert_eq!(s.item(first.id).unwrap().title, "Reset password");
    // An import (no same_content) counts it as already there, as before.
    let changed = NewItem {
        title: "Changed".into(),
        ..item
    };
    let imported = s.add_each(std::slice::from_ref(&changed)).unwrap()[0];
    assert_eq!((imported.id, imported.created), (first.id, false));
}

fn add_is_idempotent_by_request_id(b: &dyn Backend) {
    let mut s = setup(b);
    let item = NewItem {
        request_id: Some("req-1".into()),
        params: r#"{"ticket":42}"#.into(),
        body: "line one\nline two".into(),
        priority: 3,
        due_at: Some(1_900_000_000_000),
        ..NewItem::titled("Reset password")
    };
    let first = s.add(&item).unwrap();
    assert!(first.created);
    let again = s.add(&item).unwrap();
    assert_eq!(again.id, first.id);
    assert!(
        !again.created,
        "a known request id returns the existing item"
    );
    let stored = s.item(first.id).unwrap();
    assert_eq!(stored.title, "Reset password");
    assert_eq!(stored.body, "line one\nline two");
    assert_eq!(stored.priority, 3);
    assert_eq!(stored.due_at, Some(1_900_000_000_000));
    assert_eq!(stored.request_id.as_deref(), Some("req-1"));
    assert_eq!(stored.created_by, "boss");
    assert_eq!(stored.state, ItemState::Open);
    assert_eq!(stored.lock_token, 0);
    let params: serde_json::Value = serde_json::from_str(&stored.params).unwrap();
    assert_eq!(params, serde_json::json!({"ticket": 42}));
    assert_eq!(kinds(&mut *s, first.id), ["created"]);
    assert_eq!(s.count(&filter(StateFilter::All)).unwrap(), 1);
    assert_code(s.add(&NewItem::titled("   ")), exit::ERROR);
    assert_code(
        s.add(&NewItem {
            params: "[1]".into(),
            ..NewItem::titled("t")
        }),
        exit::ERROR,
    );
    // A new queue is created on first use, with the default settings.
    let id = add_in(&mut *s, "billing", "invoice", 0);
    assert_eq!(s.item(id).unwrap().queue, "billing");
    assert_eq!(s.queue("billing").unwrap().lock_seconds, 1800);
}

fn add_batch_skips_known_request_ids(b: &dyn Backend) {
    let mut s = setup(b);
    let with_rid = |rid: &str| NewItem {
        request_id: Some(rid.into()),
        ..NewItem::titled(rid)
    };
    s.add(&with_rid("a")).unwrap();
    let n = s
        .add_batch(&[with_rid("a"), with_rid("b"), NewItem::titled("plain")])
        .unwrap();
    assert_eq!(n, 2);
    assert_eq!(s.count(&filter(StateFilter::Open)).unwrap(), 3);
    // All or nothing: one bad row refuses the batch.
    assert_code(
        s.add_batch(&[with_rid("c"), NewItem::titled("")]),
        exit::ERROR,
    );
    assert_eq!(s.count(&filter(StateFilter::Open)).unwrap(), 3);
}

/// A batch larger than the rows SQLite inserts per statement: every item's answer is the
/// one a row-by-row insert gives (a request id repeated in the batch, in an earlier chunk
/// or already stored gives the first item; a chunk with a row without a request id), and
/// each new id holds that row's item.
fn add_each_answers_row_by_row_across_statement_chunks(b: &dyn Backend) {
    let mut s = setup(b);
    let known = s
        .add(&NewItem {
            request_id: Some("known".into()),
            ..NewItem::titled("stored before")
        })
        .unwrap()
        .id;
    let rid = |i: usize| match i {
        10 | 30 | 120 => Some("dup-a".to_string()),
        40 | 140 => Some("known".to_string()),
        70 | 155 => Some("dup-b".to_string()),
        80 => None,
        _ => Some(format!("r{i}")),
    };
    let items: Vec<NewItem> = (0..160)
        .map(|i| NewItem {
            queue: ["default", "billing", "returns"][i % 3].into(),
            request_id: rid(i),
            priority: i as i64,
            ..NewItem::titled(&format!("row {i}"))
        })
        .collect();
    let added = s.add_each(&items).unwrap();
    assert_eq!(added.len(), items.len());
    let mut first: std::collections::HashMap<String, i64> =
        std::collections::HashMap::from([("known".to_string(), known)]);
    let mut last_new = known;
    for (i, (it, a)) in items.iter().zip(&added).enumerate() {
        match it.request_id.as_ref().and_then(|r| first.get(r)) {
            Some(&id) => assert_eq!((a.id, a.created), (id, false), "row {i}"),
            None => {
                assert!(a.created && a.id > last_new, "row {i}: {a:?}");
                last_new = a.id;
                let stored = s.item(a.id).unwrap();
                assert_eq!(
                    (stored.title.as_str(), stored.priority),
                    (it.title.as_str(), i as i64)
                );
                assert_eq!(stored.queue, it.queue);
                if let Some(r) = &it.request_id {
                    first.insert(r.clone(), a.id);
                }
            }
        }
    }
    let created = added.iter().filter(|a| a.created).count();
    assert_eq!(created, 160 - 5);
    assert_eq!(
        s.count(&filter(StateFilter::Open)).unwrap(),
        created as u64 + 1
    );
}

// ----- taking --------------------------------------------------------------------------

fn take_next_follows_take_order_and_queue_filter(b: &dyn Backend) {
    let mut boss = setup(b);
    let low = add_in(&mut *boss, "default", "low", 0);
    let high1 = add_in(&mut *boss, "default", "high first", 5);
    let high2 = add_in(&mut *boss, "default", "high second", 5);
    let other = add_in(&mut *boss, "other", "other queue", 9);
    let mut alice = b.open("alice", 0);
    let in_default = TakeNext {
        queue: Some("default".into()),
        skip: vec![],
    };
    let got: Vec<i64> = (0..3)
        .map(|_| alice.take_next(&in_default).unwrap().id)
        .collect();
    assert_eq!(
        got,
        [high1, high2, low],
        "priority DESC, then created_at, then id"
    );
    let e = assert_code(alice.take_next(&in_default), exit::NOTHING);
    assert!(matches!(e, StoreError::NothingToClaim(_)), "{e}");
    let mut bob = b.open("bob", 0);
    assert_eq!(next(&mut *bob).unwrap(), other, "no filter: every queue");
    assert_code(next(&mut *bob), exit::NOTHING);
    let taken = alice.item(high1).unwrap();
    assert_eq!(taken.lock_user.as_deref(), Some("alice"));
    assert_eq!(taken.lock_token, 1);
}

fn take_a_chosen_item(b: &dyn Backend) {
    let mut boss = setup(b);
    let first = add(&mut *boss, "first");
    let chosen = add(&mut *boss, "chosen");
    let mut alice = b.open("alice", 0);
    let item = alice.take(chosen).unwrap();
    assert_eq!(item.id, chosen);
    assert_eq!(item.lock_user.as_deref(), Some("alice"));
    assert_eq!(item.lock_token, 1);
    assert!(item.lock_time.is_some());
    assert_eq!(
        alice.item(first).unwrap().lock_user,
        None,
        "only the chosen one"
    );
    // Taking it again returns it, renewed, with the same token.
    let again = alice.take(chosen).unwrap();
    assert_eq!(again.lock_token, 1);
    assert_eq!(kinds(&mut *alice, chosen), ["created", "locked", "renewed"]);
    let h = alice.history(chosen).unwrap();
    assert_eq!(h[1].actor, "alice");
    assert_eq!(h[1].detail["token"], 1);
}

fn second_taker_is_told_who_holds_it(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "contested");
    let mut alice = b.open("alice", 0);
    let mut bob = b.open("bob", 0);
    alice.take(id).unwrap();
    let e = assert_code(bob.take(id), exit::CONFLICT);
    match &e {
        StoreError::HeldByOther {
            id: eid, holder, ..
        } => {
            assert_eq!(*eid, id);
            assert_eq!(holder, "alice");
        }
        other => panic!("expected HeldByOther, got {other:?}"),
    }
    assert!(e.to_string().contains("alice"), "{e}");
    assert_code(next(&mut *bob), exit::NOTHING);
    let item = bob.item(id).unwrap();
    assert_eq!(item.lock_user.as_deref(), Some("alice"));
    assert_eq!(item.lock_token, 1, "the refused take changed nothing");
    assert_eq!(kinds(&mut *bob, id), ["created", "locked"]);
}

fn an_expired_lock_can_be_taken_over(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "left over");
    let mut alice = b.open("alice", 0);
    alice.take(id).unwrap();
    // 30 s later it is still alice's (not 59 s: on PostgreSQL the server's clock runs on
    // while the test opens connections, over a second on a loaded machine).
    let mut bob_early = b.open("bob", 30 * 1000);
    assert_code(bob_early.take(id), exit::CONFLICT);
    // 61 s later anyone may take it over.
    let mut bob = b.open("bob", 61 * 1000);
    let item = bob.take(id).unwrap();
    assert_eq!(item.lock_user.as_deref(), Some("bob"));
    assert_eq!(item.lock_token, 2);
    let h = bob.history(id).unwrap();
    let last = h.last().unwrap();
    assert_eq!(last.kind, EventKind::TakenOver);
    assert_eq!(last.actor, "bob");
    assert_eq!(last.detail_str("from"), Some("alice"));
    assert_eq!(last.detail["token"], 2);
    // take_next also offers expired items.
    let id2 = add(&mut *boss, "second");
    alice.take(id2).unwrap();
    let mut carol = b.open("carol", 61 * 1000);
    assert_eq!(next(&mut *carol).unwrap(), id2);
    assert_eq!(kinds(&mut *carol, id2), ["created", "locked", "taken_over"]);
    // The same events, with the same details, on both backends.
    let h = carol.history(id2).unwrap();
    assert_eq!(h[1].detail, serde_json::json!({"token": 1}));
    assert_eq!(
        h[2].detail,
        serde_json::json!({"from": "alice", "token": 2})
    );
}

fn a_taken_over_holder_is_fenced_out(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "fenced");
    let mut alice = b.open("alice", 0);
    let token_a = alice.take(id).unwrap().lock_token;
    alice.save_notes(id, token_a, "alice's notes").unwrap();
    let mut bob = b.open("bob", 61 * 1000);
    let token_b = bob.take(id).unwrap().lock_token;
    assert_eq!(token_b, token_a + 1);
    bob.save_notes(id, token_b, "bob's notes").unwrap();
    let before = kinds(&mut *bob, id);
    // Every late write by alice is refused with a conflict, whatever token she tries.
    let e = assert_code(alice.complete(id, token_a, Some("done")), exit::CONFLICT);
    assert!(matches!(e, StoreError::LockLost { .. }), "{e:?}");
    assert!(e.to_string().contains("bob"), "the loss names bob: {e}");
    assert_code(alice.save_notes(id, token_a, "overwrite"), exit::CONFLICT);
    assert_code(alice.renew(id, token_a), exit::CONFLICT);
    assert_code(alice.release(id, token_a), exit::CONFLICT);
    assert_code(alice.skip(id, token_a), exit::CONFLICT);
    assert_code(alice.fail(id, token_a, "gave up"), exit::CONFLICT);
    assert_code(alice.complete(id, token_b, None), exit::CONFLICT);
    assert_code(alice.save_notes(id, token_b, "overwrite"), exit::CONFLICT);
    let item = bob.item(id).unwrap();
    assert_eq!(item.state, ItemState::Open);
    assert_eq!(item.lock_user.as_deref(), Some("bob"));
    assert_eq!(item.lock_token, token_b);
    assert_eq!(item.notes, "bob's notes");
    assert_eq!(
        kinds(&mut *bob, id),
        before,
        "refused writes leave no events"
    );
    bob.complete(id, token_b, Some("fixed")).unwrap();
    assert_eq!(bob.item(id).unwrap().finished_by.as_deref(), Some("bob"));
}

fn renew_extends_the_lock(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "long job");
    let mut alice = b.open("alice", 0);
    let taken = alice.take(id).unwrap();
    let mut alice_later = b.open("alice", 30 * 1000);
    let renewed = alice_later.renew(id, taken.lock_token).unwrap();
    assert_eq!(
        renewed.lock_token, taken.lock_token,
        "renewal keeps the token"
    );
    assert_eq!(renewed.lock_time, taken.lock_time, "lock_time is the take");
    assert!(renewed.lock_expires_at.unwrap() >= taken.lock_expires_at.unwrap() + 29_000);
    // 61 s after the take but only 31 s after the renewal: still alice's.
    let mut bob = b.open("bob", 61 * 1000);
    assert_code(bob.take(id), exit::CONFLICT);
    let mut bob_late = b.open("bob", 91 * 1000);
    bob_late.take(id).unwrap();
    assert_eq!(
        kinds(&mut *bob, id),
        ["created", "locked", "renewed", "taken_over"]
    );
    assert_code(alice.renew(id, taken.lock_token), exit::CONFLICT);
}

fn release_returns_the_item(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "returned");
    let mut alice = b.open("alice", 0);
    let t = alice.take(id).unwrap().lock_token;
    alice.release(id, t).unwrap();
    let item = alice.item(id).unwrap();
    assert_eq!(item.lock_user, None);
    assert_eq!(item.lock_time, None);
    assert_eq!(item.state, ItemState::Open);
    // The same release again (its answer lost, say) is acknowledged, not repeated.
    assert_eq!(alice.release(id, t).unwrap(), Applied::Already);
    let mut bob = b.open("bob", 0);
    assert_eq!(bob.take(id).unwrap().lock_token, t + 1);
    assert_eq!(
        kinds(&mut *bob, id),
        ["created", "locked", "released", "locked"]
    );
}

fn skip_releases_and_take_next_skips(b: &dyn Backend) {
    let mut boss = setup(b);
    let a = add_in(&mut *boss, "default", "a", 2);
    let bb = add_in(&mut *boss, "default", "b", 1);
    let mut alice = b.open("alice", 0);
    let item = alice.take_next(&TakeNext::default()).unwrap();
    assert_eq!(item.id, a);
    alice.skip(a, item.lock_token).unwrap();
    assert_eq!(alice.item(a).unwrap().lock_user, None);
    assert_eq!(kinds(&mut *alice, a), ["created", "locked", "skipped"]);
    let skip = TakeNext {
        queue: None,
        skip: vec![a],
    };
    assert_eq!(alice.take_next(&skip).unwrap().id, bb);
    assert_code(alice.take_next(&skip), exit::NOTHING);
    let mut bob = b.open("bob", 0);
    assert_eq!(next(&mut *bob).unwrap(), a, "skipping is per session");
}

fn save_notes_keeps_the_holders_notes(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "noted");
    let mut alice = b.open("alice", 0);
    let t = alice.take(id).unwrap().lock_token;
    alice
        .save_notes(id, t, "called the user — no answer")
        .unwrap();
    alice.save_notes(id, t, "second try ok").unwrap();
    assert_eq!(alice.item(id).unwrap().notes, "second try ok");
    let h = alice.history(id).unwrap();
    assert_eq!(h.len(), 4);
    assert_eq!(h[3].kind, EventKind::Noted);
    assert_eq!(h[3].detail["notes_chars"], 13);
    assert_code(alice.save_notes(id, t, "a\0b"), exit::ERROR);
}

fn complete_with_result(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "finish me");
    let mut alice = b.open("alice", 0);
    let t = alice.take(id).unwrap().lock_token;
    alice.complete(id, t, Some("password reset")).unwrap();
    let item = alice.item(id).unwrap();
    assert_eq!(item.state, ItemState::Done);
    assert_eq!(item.result.as_deref(), Some("password reset"));
    assert_eq!(item.finished_by.as_deref(), Some("alice"));
    assert!(item.finished_at.is_some());
    assert_eq!(item.lock_user, None);
    let last = alice.history(id).unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Completed);
    assert_eq!(last.detail_str("result"), Some("password reset"));
    let e = assert_code(alice.complete(id, t, None), exit::CONFLICT);
    assert!(
        matches!(
            e,
            StoreError::NotOpen {
                state: ItemState::Done,
                ..
            }
        ),
        "{e:?}"
    );
    assert_code(alice.take(id), exit::CONFLICT);
    let mut bob = b.open("bob", 0);
    assert_code(next(&mut *bob), exit::NOTHING);
}

fn fail_needs_a_reason(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "doomed");
    let mut alice = b.open("alice", 0);
    let t = alice.take(id).unwrap().lock_token;
    assert_code(alice.fail(id, t, "   "), exit::ERROR);
    assert_eq!(alice.item(id).unwrap().state, ItemState::Open);
    alice.fail(id, t, "customer unreachable").unwrap();
    let item = alice.item(id).unwrap();
    assert_eq!(item.state, ItemState::Failed);
    assert_eq!(item.error.as_deref(), Some("customer unreachable"));
    assert_eq!(item.lock_user, None);
    let last = alice.history(id).unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Failed);
    assert_eq!(last.detail_str("reason"), Some("customer unreachable"));
}

fn comments_need_no_lock(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "discussed");
    let mut alice = b.open("alice", 0);
    let mut bob = b.open("bob", 0);
    alice.take(id).unwrap();
    bob.comment(id, "customer called back").unwrap();
    let last = bob.history(id).unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Noted);
    assert!(last.detail["comment_id"].is_i64(), "{:?}", last.detail);
    assert_eq!(last.actor, "bob");
    let thread = bob.comments(id).unwrap();
    assert_eq!(thread[0].text, "customer called back");
    assert_eq!(thread[0].author, "bob");
    assert_eq!(bob.item(id).unwrap().lock_user.as_deref(), Some("alice"));
    assert_code(bob.comment(id, "  "), exit::ERROR);
    assert!(matches!(
        bob.comment(987_654, "x"),
        Err(StoreError::NotFound(987_654))
    ));
}

fn reap_releases_only_expired_locks(b: &dyn Backend) {
    let mut boss = setup(b);
    let old = add(&mut *boss, "old");
    let fresh = add(&mut *boss, "fresh");
    let free = add(&mut *boss, "free");
    let mut alice = b.open("alice", 0);
    alice.take(old).unwrap();
    let mut bob = b.open("bob", 50 * 1000);
    bob.take(fresh).unwrap();
    let mut reaper = b.open("cron", 61 * 1000);
    assert_eq!(reaper.reap().unwrap(), 1);
    assert_eq!(reaper.item(old).unwrap().lock_user, None);
    assert_eq!(
        reaper.item(fresh).unwrap().lock_user.as_deref(),
        Some("bob")
    );
    assert_eq!(reaper.item(free).unwrap().lock_user, None);
    let last = reaper.history(old).unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Expired);
    assert_eq!(last.actor, "cron");
    assert_eq!(last.detail_str("from"), Some("alice"));
    assert_eq!(kinds(&mut *reaper, fresh), ["created", "locked"]);
    assert_eq!(
        reaper.reap().unwrap(),
        0,
        "reaping twice releases nothing more"
    );
    assert_code(alice.complete(old, 1, None), exit::CONFLICT);
}

/// Shortening a queue's lock age applies to new locks and renewals only: every reader of
/// expiry (a take, take-over by take-next, reap, the expired list, the figures) goes by
/// the expiry each lock was given.
fn a_lock_keeps_the_age_it_was_given(b: &dyn Backend) {
    let mut boss = setup(b);
    let age = |secs| QueueUpdate {
        lock_seconds: Some(secs),
        warn_seconds: Some(5),
        ..Default::default()
    };
    boss.set_queue("default", &age(600), false).unwrap();
    let (long, short, spare) = (
        add(&mut *boss, "taken under 10 min"),
        add(&mut *boss, "taken under 1 min"),
        add(&mut *boss, "free"),
    );
    let mut alice = b.open("alice", 0);
    let first = alice.take(long).unwrap();
    let taken_at = first.lock_time.unwrap();
    assert_eq!(first.lock_expires_at, Some(taken_at + 600_000));
    boss.set_queue("default", &age(60), false).unwrap();
    let second = alice.take(short).unwrap();
    assert_eq!(
        second.lock_expires_at.unwrap() - second.lock_time.unwrap(),
        60_000,
        "a new lock gets the new age"
    );
    assert_eq!(
        alice.item(long).unwrap().lock_expires_at,
        Some(taken_at + 600_000),
        "the setting left the current lock alone"
    );

    // Two minutes on: the short lock has expired, the long one has not.
    let mut bob = b.open("bob", 2 * MIN);
    assert_code(bob.take(long), exit::CONFLICT);
    let expired = ListFilter {
        state: StateFilter::Expired,
        limit: 10,
        ..Default::default()
    };
    let ids = |items: Vec<caseload::domain::Item>| items.iter().map(|i| i.id).collect::<Vec<_>>();
    assert_eq!(ids(bob.list(&expired).unwrap()), [short]);
    assert_eq!(bob.stats().unwrap().expired, 1);
    let m = bob.metrics().unwrap();
    let q = m.queues.iter().find(|q| q.queue == "default").unwrap();
    assert_eq!((q.held, q.expired), (2, 1));
    let next = bob.take_next(&TakeNext::default()).unwrap();
    assert_eq!(
        next.id, short,
        "take-next takes the expired lock over first"
    );
    assert_eq!(kinds(&mut *bob, short).last(), Some(&"taken_over"));
    let mut cron = b.open("cron", 2 * MIN);
    assert_eq!(cron.reap().unwrap(), 0, "the long lock is live");

    // A renewal gives the long lock the new age, from the renewal.
    let mut alice_later = b.open("alice", 2 * MIN);
    let renewed = alice_later.renew(long, first.lock_token).unwrap();
    assert_eq!(
        renewed.lock_time,
        Some(taken_at),
        "still held since the take"
    );
    let renewed_at = renewed.lock_expires_at.unwrap() - 60_000;
    assert!(renewed_at >= taken_at + 2 * MIN - 1_000, "{renewed_at}");
    let mut cron_later = b.open("cron", 4 * MIN);
    assert_eq!(cron_later.reap().unwrap(), 2, "the renewed lock and bob's");
    assert_eq!(kinds(&mut *cron_later, long).last(), Some(&"expired"));
    assert_eq!(cron_later.item(long).unwrap().lock_expires_at, None);
    assert_eq!(cron_later.item(spare).unwrap().lock_expires_at, None);
    assert!(cron_later.check().unwrap().is_empty());
}

fn wip_limit_is_enforced_by_the_claim(b: &dyn Backend) {
    let mut boss = setup(b);
    boss.set_queue(
        "default",
        &QueueUpdate {
            max_per_user: Some(Some(2)),
            ..Default::default()
        },
        false,
    )
    .unwrap();
    let ids: Vec<i64> = (0..4)
        .map(|i| add(&mut *boss, &format!("item {i}")))
        .collect();
    let mut alice = b.open("alice", 0);
    let first = alice.take_next(&TakeNext::default()).unwrap();
    alice.take_next(&TakeNext::default()).unwrap();
    let e = assert_code(alice.take_next(&TakeNext::default()), exit::NOTHING);
    assert!(matches!(&e, StoreError::WipLimit { held: 2, .. }), "{e:?}");
    let e = assert_code(
        alice.take_next(&TakeNext {
            queue: Some("default".into()),
            skip: vec![],
        }),
        exit::NOTHING,
    );
    assert!(matches!(e, StoreError::WipLimit { held: 2, .. }), "{e:?}");
    let e = assert_code(alice.take(ids[3]), exit::NOTHING);
    assert!(matches!(e, StoreError::WipLimit { .. }), "{e:?}");
    assert_eq!(alice.item(ids[3]).unwrap().lock_user, None);
    let mut bob = b.open("bob", 0);
    bob.take(ids[3]).unwrap();
    alice.complete(first.id, first.lock_token, None).unwrap();
    alice.take_next(&TakeNext::default()).unwrap();
    assert_eq!(
        alice
            .count(&ListFilter {
                state: StateFilter::Locked,
                holder: Some("alice".into()),
                ..filter(StateFilter::Locked)
            })
            .unwrap(),
        2
    );
}

fn a_paused_queue_gives_nothing(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "paused work");
    boss.set_queue(
        "default",
        &QueueUpdate {
            paused: Some(true),
            ..Default::default()
        },
        false,
    )
    .unwrap();
    let mut alice = b.open("alice", 0);
    let paused =
        |e: &StoreError| matches!(e, StoreError::Paused { queues } if queues == &["default"]);
    let e = assert_code(next(&mut *alice), exit::NOTHING);
    assert!(paused(&e), "{e:?}");
    assert_eq!(e.to_string(), "nothing to claim: queue 'default' is paused");
    let e = assert_code(
        alice.take_next(&TakeNext {
            queue: Some("default".into()),
            skip: vec![],
        }),
        exit::NOTHING,
    );
    assert!(paused(&e), "{e:?}");
    let e = assert_code(alice.take(id), exit::NOTHING);
    assert!(paused(&e), "{e:?}");
    boss.set_queue(
        "default",
        &QueueUpdate {
            paused: Some(false),
            ..Default::default()
        },
        false,
    )
    .unwrap();
    assert_eq!(next(&mut *alice).unwrap(), id);
}

// ----- supervisors ---------------------------------------------------------------------

fn staff_may_not_use_supervisor_actions(b: &dyn Backend) {
    let mut boss = setup(b);
    let held = add(&mut *boss, "held");
    let mut bob = b.open("bob", 0);
    bob.take(held).unwrap();
    let mut alice = b.open("alice", 0);
    assert_eq!(alice.role("alice").unwrap(), Role::Staff);
    assert_eq!(alice.role("boss").unwrap(), Role::Supervisor);
    assert_eq!(alice.role("nobody-known").unwrap(), Role::Staff);
    let checks: Vec<Result<(), StoreError>> = vec![
        alice.unlock(held, None, "mine now"),
        alice.reassign(held, None, "alice", "mine now").map(|_| ()),
        alice.requeue(held),
        alice.cancel(held, "no"),
        alice
            .set_queue(
                "default",
                &QueueUpdate {
                    paused: Some(true),
                    ..Default::default()
                },
                false,
            )
            .map(|_| ()),
        alice.set_role("alice", Role::Supervisor),
    ];
    for r in checks {
        let e = assert_code(r, exit::SUPERVISOR_ONLY);
        assert!(matches!(e, StoreError::SupervisorOnly(_)), "{e:?}");
    }
    let item = alice.item(held).unwrap();
    assert_eq!(item.lock_user.as_deref(), Some("bob"));
    assert_eq!(kinds(&mut *alice, held), ["created", "locked"]);
    assert!(!alice.queue("default").unwrap().paused);
}

fn supervisor_unlock_and_reassign(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "stuck");
    let mut alice = b.open("alice", 0);
    let t1 = alice.take(id).unwrap().lock_token;
    assert_code(boss.unlock(id, None, "  "), exit::ERROR);
    boss.unlock(id, None, "alice is on leave").unwrap();
    assert_eq!(boss.item(id).unwrap().lock_user, None);
    let last = boss.history(id).unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Unlocked);
    assert_eq!(last.detail_str("from"), Some("alice"));
    assert_eq!(last.detail_str("reason"), Some("alice is on leave"));
    assert_code(boss.unlock(id, None, "again"), exit::ERROR);
    let e = assert_code(alice.complete(id, t1, None), exit::CONFLICT);
    assert!(e.to_string().contains("boss"), "{e}");

    let t2 = alice.take(id).unwrap().lock_token;
    boss.set_role("carol", Role::Staff).unwrap(); // a known user
    let item = boss
        .reassign(id, None, "carol", "carol knows this customer")
        .unwrap();
    assert_eq!(item.lock_user.as_deref(), Some("carol"));
    assert_eq!(item.lock_token, t2 + 1);
    let last = boss.history(id).unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Reassigned);
    assert_eq!(last.detail_str("from"), Some("alice"));
    assert_eq!(last.detail_str("to"), Some("carol"));
    assert_code(alice.save_notes(id, t2, "late"), exit::CONFLICT);
    let mut carol = b.open("carol", 0);
    carol.complete(id, item.lock_token, None).unwrap();
    assert_code(boss.reassign(id, None, "alice", "too late"), exit::CONFLICT);
    assert_code(boss.reassign(id, None, "bad name", "x"), exit::ERROR);
}

fn supervisor_requeue_cancel_and_roles(b: &dyn Backend) {
    let mut boss = setup(b);
    let failed = add(&mut *boss, "failed once");
    let open = add(&mut *boss, "to cancel");
    let mut alice = b.open("alice", 0);
    let t = alice.take(failed).unwrap().lock_token;
    alice.fail(failed, t, "broken").unwrap();
    assert_code(boss.requeue(open), exit::ERROR);
    boss.requeue(failed).unwrap();
    let item = boss.item(failed).unwrap();
    assert_eq!(item.state, ItemState::Open);
    assert_eq!(item.error, None);
    assert_eq!(item.finished_at, None);
    let last = boss.history(failed).unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Requeued);
    assert_eq!(last.detail_str("was"), Some("failed"));

    let t = alice.take(open).unwrap().lock_token;
    assert_code(boss.cancel(open, ""), exit::ERROR);
    boss.cancel(open, "duplicate").unwrap();
    let item = boss.item(open).unwrap();
    assert_eq!(item.state, ItemState::Cancelled);
    assert_eq!(item.lock_user, None);
    assert_eq!(item.error.as_deref(), Some("duplicate"));
    assert_code(alice.complete(open, t, None), exit::CONFLICT);
    assert_code(boss.cancel(open, "again"), exit::CONFLICT);
    boss.requeue(open).unwrap();
    assert_eq!(boss.item(open).unwrap().state, ItemState::Open);

    boss.set_role("alice", Role::Supervisor).unwrap();
    assert_eq!(boss.role("alice").unwrap(), Role::Supervisor);
    alice.cancel(open, "alice may now").unwrap();
    alice.set_role("alice", Role::Staff).unwrap();
    assert_eq!(alice.role("alice").unwrap(), Role::Staff);
    let e = assert_code(boss.set_role("boss", Role::Staff), exit::ERROR);
    assert!(e.to_string().contains("last supervisor"), "{e}");
    assert_eq!(boss.role("boss").unwrap(), Role::Supervisor);
    assert_code(boss.set_role("two words", Role::Staff), exit::ERROR);
}

fn supervisor_queue_settings(b: &dyn Backend) {
    let mut boss = setup(b);
    let q = boss
        .set_queue(
            "urgent",
            &QueueUpdate {
                lock_seconds: Some(300),
                warn_seconds: Some(30),
                max_per_user: Some(Some(1)),
                paused: Some(false),
                order: Some(TakeOrder::Due),
                park_grace_seconds: Some(600),
                undo_seconds: Some(0),
                review_percent: Some(25),
                review_new: Some(3),
            },
            true,
        )
        .unwrap();
    assert_eq!(q.lock_seconds, 300);
    assert_eq!((q.park_grace_seconds, q.undo_seconds), (600, 0));
    assert_eq!((q.review_percent, q.review_new), (25, 3));
    let stored = boss.queue("urgent").unwrap();
    assert_eq!(stored, q);
    let names: Vec<String> = boss.queues().unwrap().into_iter().map(|q| q.name).collect();
    assert_eq!(names, ["default", "urgent"]);
    assert_code(
        boss.set_queue(
            "urgent",
            &QueueUpdate {
                lock_seconds: Some(10),
                ..Default::default()
            },
            false,
        ),
        exit::ERROR,
    );
    assert_eq!(boss.queue("urgent").unwrap().lock_seconds, 300);
    let unlimited = boss
        .set_queue(
            "urgent",
            &QueueUpdate {
                max_per_user: Some(None),
                ..Default::default()
            },
            false,
        )
        .unwrap();
    assert_eq!(unlimited.max_per_user, None);
    assert_eq!(boss.queue("urgent").unwrap().max_per_user, None);
    // Setting what is already set writes nothing: no audit row claims a change.
    let audited = boss.audit(None, 0).unwrap().len();
    let same = boss
        .set_queue(
            "urgent",
            &QueueUpdate {
                lock_seconds: Some(300),
                max_per_user: Some(None),
                ..Default::default()
            },
            false,
        )
        .unwrap();
    assert_eq!(same, unlimited);
    assert_eq!(boss.audit(None, 0).unwrap().len(), audited);
}

fn unlock_racing_complete_has_one_winner(b: &dyn Backend) {
    let mut boss = setup(b);
    let mut alice = b.open("alice", 0);
    // The plain order first: after the unlock, the holder's late write is refused.
    let id = add(&mut *boss, "plain");
    let t = alice.take(id).unwrap().lock_token;
    boss.unlock(id, None, "reset").unwrap();
    assert_code(alice.complete(id, t, None), exit::CONFLICT);
    assert_eq!(boss.item(id).unwrap().state, ItemState::Open);
    let (mut alice, mut boss) = (alice, boss);
    let mut wins = (0, 0);
    for round in 0..15 {
        let id = add(&mut *boss, &format!("race {round}"));
        let t = alice.take(id).unwrap().lock_token;
        let (done, unlocked, a, bo) = race(
            alice,
            boss,
            move |s| s.complete(id, t, Some("mine")),
            move |s| s.unlock(id, None, "taking it back"),
        );
        alice = a;
        boss = bo;
        let item = boss.item(id).unwrap();
        let k = kinds(&mut *boss, id);
        match (&done, &unlocked) {
            (Ok(_), Err(e)) => {
                wins.0 += 1;
                assert_eq!(e.exit_code(), exit::ERROR, "not locked any more: {e}");
                assert_eq!(item.state, ItemState::Done);
                assert_eq!(k, ["created", "locked", "completed"]);
            }
            (Err(e), Ok(())) => {
                wins.1 += 1;
                assert_eq!(e.exit_code(), exit::CONFLICT, "{e}");
                assert_eq!(item.state, ItemState::Open);
                assert_eq!(item.lock_user, None);
                assert_eq!(k, ["created", "locked", "unlocked"]);
            }
            other => panic!("round {round}: exactly one must win, got {other:?}"),
        }
    }
    eprintln!("complete won {}, unlock won {}", wins.0, wins.1);
}

fn reassign_racing_complete_has_one_winner(b: &dyn Backend) {
    let mut boss = setup(b);
    boss.set_role("carol", Role::Staff).unwrap(); // a known user
    let mut alice = b.open("alice", 0);
    for round in 0..15 {
        let id = add(&mut *boss, &format!("race {round}"));
        let t = alice.take(id).unwrap().lock_token;
        let (done, moved, a, bo) = race(
            alice,
            boss,
            move |s| s.complete(id, t, None),
            move |s| {
                s.reassign(id, None, "carol", "carol takes over")
                    .map(|i| i.lock_token)
            },
        );
        alice = a;
        boss = bo;
        let item = boss.item(id).unwrap();
        let k = kinds(&mut *boss, id);
        match (&done, &moved) {
            (Ok(_), Err(e)) => {
                assert_eq!(e.exit_code(), exit::CONFLICT, "{e}");
                assert_eq!(item.state, ItemState::Done);
                assert_eq!(k, ["created", "locked", "completed"]);
            }
            (Err(e), Ok(token)) => {
                assert_eq!(e.exit_code(), exit::CONFLICT, "{e}");
                assert_eq!(item.state, ItemState::Open);
                assert_eq!(item.lock_user.as_deref(), Some("carol"));
                assert_eq!(item.lock_token, *token);
                assert_eq!(k, ["created", "locked", "reassigned"]);
            }
            other => panic!("round {round}: exactly one must win, got {other:?}"),
        }
    }
}

// ----- the audit trail -----------------------------------------------------------------

fn each_change_writes_exactly_its_events(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "lifecycle");
    let mut alice = b.open("alice", 0);
    let t = alice.take(id).unwrap().lock_token;
    alice.save_notes(id, t, "n").unwrap();
    alice.renew(id, t).unwrap();
    alice.release(id, t).unwrap();
    let t = alice.take(id).unwrap().lock_token;
    alice.skip(id, t).unwrap();
    let mut bob = b.open("bob", 0);
    let t = bob.take(id).unwrap().lock_token;
    let mut carol = b.open("carol", 61 * 1000);
    let t2 = carol.take(id).unwrap().lock_token;
    assert_eq!(t2, t + 1);
    boss.reassign(id, None, "bob", "back to bob").unwrap();
    boss.unlock(id, None, "free it").unwrap();
    bob.comment(id, "a comment").unwrap();
    let t = bob.take(id).unwrap().lock_token;
    bob.fail(id, t, "no").unwrap();
    boss.requeue(id).unwrap();
    let t = bob.take(id).unwrap().lock_token;
    bob.complete(id, t, None).unwrap();
    let h = boss.history(id).unwrap();
    let k: Vec<&str> = h.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        k,
        [
            "created",
            "locked",
            "noted",
            "renewed",
            "released",
            "locked",
            "skipped",
            "locked",
            "taken_over",
            "reassigned",
            "unlocked",
            "noted",
            "locked",
            "failed",
            "requeued",
            "locked",
            "completed"
        ]
    );
    let actors: Vec<&str> = h.iter().map(|e| e.actor.as_str()).collect();
    assert_eq!(
        actors,
        [
            "boss", "alice", "alice", "alice", "alice", "alice", "alice", "bob", "carol", "boss",
            "boss", "bob", "bob", "bob", "boss", "bob", "bob"
        ]
    );
    assert!(h.iter().all(|e| e.os_user == "tester" && e.item_id == id));
    assert!(h.windows(2).all(|w| w[0].id < w[1].id), "events in order");
    // The final lock token counts every acquisition: 6 takes and one reassignment.
    assert_eq!(boss.item(id).unwrap().lock_token, 7);
    // Reads and refused writes write nothing.
    let before = h.len();
    let _ = boss.list(&filter(StateFilter::All)).unwrap();
    let _ = boss.stats().unwrap();
    assert_code(alice.complete(id, 1, None), exit::CONFLICT);
    assert_code(alice.take(id), exit::CONFLICT);
    assert_eq!(boss.history(id).unwrap().len(), before);
    let by_alice = boss.events_by("alice", 0).unwrap();
    assert_eq!(by_alice.len(), 6);
    assert!(by_alice.iter().all(|e| e.actor == "alice"));
}

// ----- reading -------------------------------------------------------------------------

/// One item in each state: free, held, expired, done, failed, cancelled.
struct Fixture {
    free: i64,
    held: i64,
    expired: i64,
    done: i64,
    failed: i64,
    cancelled: i64,
}

fn fixture(b: &dyn Backend, boss: &mut dyn Store) -> Fixture {
    let expired = add_in(boss, "default", "expired", 3);
    let held = add_in(boss, "default", "held", 2);
    let free = add_in(boss, "default", "free", 1);
    let done = add(boss, "done");
    let failed = add(boss, "failed");
    let cancelled = add_in(boss, "other", "cancelled", 0);
    let mut past = b.open("alice", -2 * MIN);
    past.take(expired).unwrap();
    let mut alice = b.open("alice", 0);
    alice.take(held).unwrap();
    let mut bob = b.open("bob", 0);
    let t = bob.take(done).unwrap().lock_token;
    bob.complete(done, t, Some("ok")).unwrap();
    let t = bob.take(failed).unwrap().lock_token;
    bob.fail(failed, t, "broken").unwrap();
    boss.cancel(cancelled, "dup").unwrap();
    Fixture {
        free,
        held,
        expired,
        done,
        failed,
        cancelled,
    }
}

fn list_and_count_each_state_filter(b: &dyn Backend) {
    let mut boss = setup(b);
    let f = fixture(b, &mut *boss);
    let cases: [(StateFilter, Vec<i64>); 7] = [
        (StateFilter::Open, vec![f.expired, f.held, f.free]),
        (StateFilter::Locked, vec![f.expired, f.held]),
        (StateFilter::Expired, vec![f.expired]),
        (StateFilter::Done, vec![f.done]),
        (StateFilter::Failed, vec![f.failed]),
        (StateFilter::Cancelled, vec![f.cancelled]),
        (
            StateFilter::All,
            vec![f.expired, f.held, f.free, f.done, f.failed, f.cancelled],
        ),
    ];
    for (state, want) in cases {
        assert_eq!(ids(&mut *boss, &filter(state)), want, "list {state:?}");
        assert_eq!(
            boss.count(&filter(state)).unwrap(),
            want.len() as u64,
            "count {state:?}"
        );
    }
    let open = boss.list(&filter(StateFilter::Open)).unwrap();
    assert_eq!(open[0].lock_user.as_deref(), Some("alice"));
    assert_eq!(open[2].lock_user, None);
}

fn list_filters_and_windows(b: &dyn Backend) {
    let mut boss = setup(b);
    let f = fixture(b, &mut *boss);
    let in_other = ListFilter {
        queue: Some("other".into()),
        ..filter(StateFilter::All)
    };
    assert_eq!(ids(&mut *boss, &in_other), [f.cancelled]);
    assert_eq!(boss.count(&in_other).unwrap(), 1);
    let in_default_open = ListFilter {
        queue: Some("default".into()),
        ..filter(StateFilter::Open)
    };
    assert_eq!(boss.count(&in_default_open).unwrap(), 3);
    let mine = ListFilter {
        holder: Some("alice".into()),
        ..filter(StateFilter::Open)
    };
    assert_eq!(ids(&mut *boss, &mine), [f.expired, f.held]);
    assert_eq!(boss.count(&mine).unwrap(), 2);
    let text = ListFilter {
        text: Some("FAIL".into()),
        ..filter(StateFilter::All)
    };
    assert_eq!(
        ids(&mut *boss, &text),
        [f.failed],
        "text is case-insensitive"
    );
    assert_eq!(boss.count(&text).unwrap(), 1);
    let by_id = ListFilter {
        text: Some(format!("#{}", f.done)),
        ..filter(StateFilter::All)
    };
    assert_eq!(ids(&mut *boss, &by_id), [f.done]);
    let percent = ListFilter {
        text: Some("%".into()),
        ..filter(StateFilter::All)
    };
    assert!(ids(&mut *boss, &percent).is_empty(), "% is literal");
    let window = ListFilter {
        limit: 2,
        offset: 1,
        ..filter(StateFilter::All)
    };
    assert_eq!(ids(&mut *boss, &window), [f.held, f.free]);
    assert_eq!(boss.count(&window).unwrap(), 6, "count ignores the window");
    let e = boss.list(&ListFilter {
        queue: Some("nope".into()),
        ..filter(StateFilter::Open)
    });
    assert!(matches!(e, Err(StoreError::UnknownQueue { .. })), "{e:?}");
    let mut exported = Vec::new();
    let n = boss
        .export(
            &caseload::store::ExportFilter {
                state: Some(ItemState::Done),
                ..Default::default()
            },
            &mut |i| {
                exported.push(i.id);
                Ok(())
            },
        )
        .unwrap();
    assert_eq!((n, exported), (1, vec![f.done]));
    let n = boss.export(&Default::default(), &mut |_| Ok(())).unwrap();
    assert_eq!(n, 6);
}

fn stats_figures(b: &dyn Backend) {
    let mut boss = setup(b);
    let f = fixture(b, &mut *boss);
    boss.add(&NewItem {
        due_at: Some(1_000),
        ..NewItem::titled("overdue")
    })
    .unwrap();
    let s = boss.stats().unwrap();
    let state = |st: ItemState| s.by_state.iter().find(|c| c.state == st).unwrap().count;
    assert_eq!(state(ItemState::Open), 4);
    assert_eq!(state(ItemState::Done), 1);
    assert_eq!(state(ItemState::Failed), 1);
    assert_eq!(state(ItemState::Cancelled), 1);
    let default = s.by_queue.iter().find(|q| q.queue == "default").unwrap();
    assert_eq!(
        (
            default.open,
            default.locked,
            default.done,
            default.failed,
            default.cancelled
        ),
        (4, 2, 1, 1, 0)
    );
    let other = s.by_queue.iter().find(|q| q.queue == "other").unwrap();
    assert_eq!((other.open, other.cancelled), (0, 1));
    assert_eq!(s.locked, 2);
    assert_eq!(s.expired, 1);
    assert_eq!(s.overdue, 1);
    assert_eq!(s.completed_per_hour.len(), 24);
    assert_eq!(s.completed_per_hour.iter().sum::<u64>(), 1);
    let recent: u64 = s.completed_per_hour[22..].iter().sum();
    assert_eq!(recent, 1, "completed this hour (or, at its turn, the last)");
    assert_eq!(s.open_ages.iter().map(|b| b.count).sum::<u64>(), 4);
    assert_eq!(s.open_ages[0].count, 4, "all younger than 5 minutes");
    assert_eq!(s.lock_ages.iter().map(|b| b.count).sum::<u64>(), 2);
    assert_eq!(s.wip.len(), 1);
    assert_eq!((s.wip[0].user.as_str(), s.wip[0].held), ("alice", 2));
    assert_eq!(s.oldest_open.as_ref().map(|o| o.id), Some(f.expired));
    let now = boss.now().unwrap();
    assert!((s.at - now).abs() < 10_000);
    let _ = (f.free, f.held);
}

fn lost_locks_name_who_and_how(b: &dyn Backend) {
    let mut boss = setup(b);
    let a = add(&mut *boss, "taken over");
    let c = add(&mut *boss, "unlocked");
    let mut alice = b.open("alice", 0);
    let since = alice.now().unwrap() - 1000;
    alice.take(a).unwrap();
    alice.take(c).unwrap();
    let mut bob = b.open("bob", 61 * 1000);
    bob.take(a).unwrap();
    let mut boss_later = b.open("boss", 62 * 1000);
    boss_later.unlock(c, None, "reset").unwrap();
    let lost = alice.lost_locks("alice", since).unwrap();
    assert_eq!(lost.len(), 2, "{lost:?}");
    assert_eq!(lost[0].item_id, c, "newest first");
    assert_eq!(lost[0].loss.how, EventKind::Unlocked);
    assert_eq!(lost[0].loss.by, "boss");
    assert_eq!(lost[0].now_held_by, None);
    assert_eq!(lost[1].item_id, a);
    assert_eq!(lost[1].loss.how, EventKind::TakenOver);
    assert_eq!(lost[1].loss.by, "bob");
    assert_eq!(lost[1].title, "taken over");
    assert_eq!(lost[1].now_held_by.as_deref(), Some("bob"));
    assert!(alice.lost_locks("bob", since).unwrap().is_empty());
    assert!(
        alice
            .lost_locks("alice", since + 10 * MIN)
            .unwrap()
            .is_empty()
    );
}

fn touch_last_seen_returns_the_previous_visit(b: &dyn Backend) {
    let _boss = setup(b);
    let mut alice = b.open("alice", 0);
    assert_eq!(alice.touch_last_seen().unwrap(), None, "first visit");
    let now = alice.now().unwrap();
    let mut later = b.open("alice", 5 * MIN);
    let prev = later.touch_last_seen().unwrap().expect("a previous visit");
    assert!((prev - now).abs() < 10_000, "prev {prev} vs now {now}");
    let prev2 = alice.touch_last_seen().unwrap().expect("a previous visit");
    assert!(prev2 >= prev + 4 * MIN, "the later visit was recorded");
    assert_eq!(
        alice.role("alice").unwrap(),
        Role::Staff,
        "a visit grants nothing"
    );
}

fn check_is_empty_on_a_healthy_database(b: &dyn Backend) {
    let mut boss = setup(b);
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
    fixture(b, &mut *boss);
    let mut reaper = b.open("cron", 10 * MIN);
    reaper.reap().unwrap();
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

/// `check --repair-figures` while people work: every take and complete that commits
/// during the rebuild is in the figures once (found by the soak on PostgreSQL: a rebuild
/// at READ COMMITTED beside writers whose holds' triggers ran in between).
fn a_rebuild_of_the_figures_beside_writers_leaves_them_right(b: &dyn Backend) {
    let mut boss = setup(b);
    let ids: Vec<i64> = (0..120)
        .map(|n| add(&mut *boss, &format!("r{n}")))
        .collect();
    let mut alice = b.open("alice", 0);
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let worker = s.spawn(|| {
            for id in &ids {
                let t = alice.take(*id).unwrap().lock_token;
                alice.complete(*id, t, Some("ok")).unwrap();
            }
            done.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        let mut rebuilds = 0;
        while !done.load(std::sync::atomic::Ordering::SeqCst) || rebuilds < 3 {
            boss.rebuild_figures().unwrap();
            rebuilds += 1;
        }
        worker.join().unwrap();
    });
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

fn unknown_ids_are_not_found(b: &dyn Backend) {
    let mut boss = setup(b);
    let missing = 424_242;
    let nf = |r: Result<(), StoreError>| {
        assert!(
            matches!(r, Err(StoreError::NotFound(id)) if id == missing),
            "{r:?}"
        )
    };
    nf(boss.item(missing).map(|_| ()));
    nf(boss.history(missing).map(|_| ()));
    nf(boss.take(missing).map(|_| ()));
    nf(boss.complete(missing, 1, None).map(|_| ()));
    nf(boss.renew(missing, 1).map(|_| ()));
    nf(boss.unlock(missing, None, "r"));
    nf(boss.reassign(missing, None, "bob", "r").map(|_| ()));
    nf(boss.requeue(missing));
    nf(boss.cancel(missing, "r"));
    let e = boss.item(missing).unwrap_err();
    assert_eq!(e.exit_code(), exit::ERROR);
    assert!(e.to_string().contains("#424242"), "{e}");
}

fn unknown_queues_are_named(b: &dyn Backend) {
    let mut boss = setup(b);
    add_in(&mut *boss, "billing", "x", 0);
    let e = boss
        .take_next(&TakeNext {
            queue: Some("nope".into()),
            skip: vec![],
        })
        .unwrap_err();
    match &e {
        StoreError::UnknownQueue { name, known } => {
            assert_eq!(name, "nope");
            assert_eq!(known, &["billing", "default"]);
        }
        other => panic!("expected UnknownQueue, got {other:?}"),
    }
    assert_eq!(e.exit_code(), exit::ERROR);
    assert!(matches!(
        boss.queue("nope"),
        Err(StoreError::UnknownQueue { .. })
    ));
    assert!(matches!(
        boss.set_queue("nope", &QueueUpdate::default(), false),
        Err(StoreError::UnknownQueue { .. })
    ));
}

fn now_follows_the_deciding_clock(b: &dyn Backend) {
    let _boss = setup(b);
    let host = chrono::Utc::now().timestamp_millis();
    let mut s = b.open("alice", 0);
    let now = s.now().unwrap();
    assert!((now - host).abs() < 10_000, "{now} vs host {host}");
    let mut ahead = b.open("alice", 3_600_000);
    let later = ahead.now().unwrap();
    assert!((later - now - 3_600_000).abs() < 10_000);
}

fn change_marker_moves_on_another_users_change(b: &dyn Backend) {
    let mut boss = setup(b);
    let mut watcher = b.open("alice", 0);
    let m0 = watcher.change_marker().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let m0b = watcher.change_marker().unwrap();
    assert_eq!(m0, m0b, "nothing changed, the marker stays");
    add(&mut *boss, "news");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let m = watcher.change_marker().unwrap();
        if m != m0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "marker never moved");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Its own change moves it too.
    let m1 = watcher.change_marker().unwrap();
    watcher.comment(1, "mine").unwrap();
    assert_ne!(watcher.change_marker().unwrap(), m1);
}

fn parallel_claims_never_share_an_item(b: &dyn Backend) {
    let mut boss = setup(b);
    let n_items = 60;
    let items: Vec<NewItem> = (0..n_items)
        .map(|i| NewItem::titled(&format!("item {i}")))
        .collect();
    assert_eq!(boss.add_batch(&items).unwrap(), n_items);
    let stores: Vec<BoxStore> = (0..4).map(|w| b.open(&format!("worker{w}"), 0)).collect();
    let done: Vec<Vec<i64>> = std::thread::scope(|s| {
        let handles: Vec<_> = stores
            .into_iter()
            .map(|mut st| {
                s.spawn(move || {
                    let mut mine = Vec::new();
                    loop {
                        match st.take_next(&TakeNext::default()) {
                            Ok(item) => {
                                st.complete(item.id, item.lock_token, None).unwrap();
                                mine.push(item.id);
                            }
                            Err(e) if e.exit_code() == exit::NOTHING => return mine,
                            Err(e) => panic!("claim failed: {e}"),
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all: Vec<i64> = done.concat();
    all.sort();
    let len = all.len();
    all.dedup();
    assert_eq!(len, all.len(), "an item was completed twice");
    assert_eq!(len, n_items);
    assert_eq!(
        boss.count(&filter(StateFilter::Done)).unwrap(),
        n_items as u64
    );
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

fn wip_limit_holds_under_parallel_claims_by_one_user(b: &dyn Backend) {
    let mut boss = setup(b);
    boss.set_queue(
        "default",
        &QueueUpdate {
            max_per_user: Some(Some(2)),
            ..Default::default()
        },
        false,
    )
    .unwrap();
    let items: Vec<NewItem> = (0..20).map(|i| NewItem::titled(&format!("w{i}"))).collect();
    boss.add_batch(&items).unwrap();
    let stores: Vec<BoxStore> = (0..4).map(|_| b.open("alice", 0)).collect();
    let barrier = std::sync::Barrier::new(stores.len());
    let taken: usize = std::thread::scope(|s| {
        let hs: Vec<_> = stores
            .into_iter()
            .map(|mut st| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    (0..5)
                        .filter(|_| match st.take_next(&TakeNext::default()) {
                            Ok(_) => true,
                            Err(e) => {
                                assert_eq!(e.exit_code(), exit::NOTHING, "{e}");
                                false
                            }
                        })
                        .count()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(
        taken, 2,
        "four sessions of one user hold no more than the limit"
    );
    let held = ListFilter {
        holder: Some("alice".into()),
        ..filter(StateFilter::Locked)
    };
    assert_eq!(boss.count(&held).unwrap(), 2);
}

/// Windows anywhere in a long list (deep ones are read from the far end) give exactly the
/// rows of the full list at that position.
fn every_window_of_a_long_list_matches_the_full_list(b: &dyn Backend) {
    let mut boss = setup(b);
    let items: Vec<NewItem> = (0..6000)
        .map(|i| NewItem {
            priority: (i * 7 % 5) as i64,
            queue: if i % 3 == 0 { "a".into() } else { "b".into() },
            ..NewItem::titled(&format!("item {i}"))
        })
        .collect();
    for chunk in items.chunks(2000) {
        boss.add_batch(chunk).unwrap();
    }
    for _ in 0..100 {
        let it = boss.take_next(&TakeNext::default()).unwrap();
        boss.complete(it.id, it.lock_token, None).unwrap();
    }
    for (state, queue) in [
        (StateFilter::Open, None),
        (StateFilter::Open, Some("b".to_string())),
        (StateFilter::All, None),
    ] {
        let base = ListFilter {
            state,
            queue: queue.clone(),
            limit: 100_000,
            ..ListFilter::default()
        };
        let full: Vec<i64> = boss.list(&base).unwrap().iter().map(|i| i.id).collect();
        assert_eq!(full.len() as u64, boss.count(&base).unwrap());
        for offset in [0, 1999, 2001, 2999, 3001, 3950, 5999, 6000, 7000] {
            for limit in [1, 40] {
                let window = ListFilter {
                    offset,
                    limit,
                    ..base.clone()
                };
                let got: Vec<i64> = boss.list(&window).unwrap().iter().map(|i| i.id).collect();
                let want: Vec<i64> = full.iter().skip(offset).take(limit).copied().collect();
                assert_eq!(
                    got, want,
                    "{state:?} {queue:?} offset {offset} limit {limit}"
                );
            }
        }
    }
}
