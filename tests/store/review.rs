//! Four eyes (issue 29 §1), on both backends: a queue's review setting sends chosen
//! completions to `review` (the same items every time), nobody takes their own work for
//! review — by take-next or by id, also when they only corrected a field — and the
//! reviewer's accept (done) and reject (back to the maker as an assignment) are fenced
//! by their lock. `boss.check()` finds nothing after each story. "boss" opens first and
//! is the supervisor; "alice", "bob" and "carol" are staff.

use crate::support::MIN;
use crate::support::backend::{Backend, BoxStore, add, assert_code, kinds, setup};
use caseload::domain::queue_fields::{FieldChange, FieldType};
use caseload::domain::texts::{Purpose, Said};
use caseload::domain::{ItemState, QueueUpdate};
use caseload::store::{ListFilter, StateFilter, Store, TakeNext, exit};

conformance!(
    a_reviewed_completion_waits_for_someone_else,
    nobody_reviews_their_own_work_by_take_next_or_by_id,
    a_field_corrected_is_work_done,
    a_share_samples_the_same_items_every_time,
    the_first_completions_of_a_person_are_reviewed,
    reject_returns_the_item_to_its_maker,
    accept_and_reject_are_fenced_by_the_reviewer_s_lock,
    a_review_lock_expires_and_is_taken_over_as_any_lock,
    a_reopen_during_a_review_frees_the_item_and_fences_the_reviewer,
    a_verdict_asked_again_answers_as_it_left_the_item,
    a_queue_keeps_reasons_for_rejecting,
);

fn review(boss: &mut dyn Store, percent: i64, new: i64) {
    let u = QueueUpdate {
        review_percent: Some(percent),
        review_new: Some(new),
        ..Default::default()
    };
    boss.set_queue("default", &u, false).unwrap();
}

/// `who` takes `id` and completes it; returns the state it went to.
fn complete(who: &mut dyn Store, id: i64) -> ItemState {
    let token = who.take(id).unwrap().lock_token;
    who.complete(id, token, Some("checked")).unwrap();
    who.item(id).unwrap().state
}

/// A queue reviewing everything, and an item alice completed (waiting for review):
/// (boss, alice, the item).
fn submitted(b: &dyn Backend) -> (BoxStore, BoxStore, i64) {
    let mut boss = setup(b);
    review(&mut *boss, 100, 0);
    let id = add(&mut *boss, "verify");
    let mut alice = b.open("alice", 0);
    assert_eq!(complete(&mut *alice, id), ItemState::Review);
    (boss, alice, id)
}

/// `n` items titled "item 0", "item 1", …
fn many(boss: &mut dyn Store, n: usize) -> Vec<i64> {
    (0..n).map(|i| add(boss, &format!("item {i}"))).collect()
}

/// An item waiting for review whose maker nobody knows any more (made under another name).
fn made_by_nobody_known(b: &dyn Backend, boss: &mut dyn Store) -> i64 {
    let id = add(boss, "ghost's");
    let mut ghost = b.open("ghost", 0);
    complete(&mut *ghost, id);
    b.spoil(&format!(
        "UPDATE items SET finished_by = 'nobody-known' WHERE id = {id}"
    ));
    id
}

fn clean(boss: &mut dyn Store) {
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

fn in_review(s: &mut dyn Store) -> Vec<i64> {
    let f = ListFilter {
        state: StateFilter::Review,
        limit: 100,
        ..Default::default()
    };
    s.list(&f).unwrap().iter().map(|i| i.id).collect()
}

fn a_reviewed_completion_waits_for_someone_else(b: &dyn Backend) {
    let mut boss = setup(b);
    review(&mut *boss, 100, 0);
    let id = add(&mut *boss, "verify Mei Brandt");
    let mut alice = b.open("alice", 0);
    assert_eq!(complete(&mut *alice, id), ItemState::Review);
    let item = alice.item(id).unwrap();
    assert_eq!(item.finished_by.as_deref(), Some("alice"));
    assert_eq!(item.lock_user, None);
    assert_eq!(item.result.as_deref(), Some("checked"));
    assert_eq!(
        kinds(&mut *alice, id),
        ["created", "locked", "completed", "submitted"]
    );
    let submitted = alice.history(id).unwrap().pop().unwrap();
    assert_eq!(submitted.detail["why"], "sample");
    assert_eq!(submitted.detail["share"], "all");
    // Not open work: plain take-next offers nothing; the review list shows it.
    assert_code(alice.take_next(&TakeNext::default()), exit::NOTHING);
    assert_eq!(in_review(&mut *alice), [id]);
    // The maker's part counts as their completion in the figures.
    clean(&mut *boss);

    let mut bob = b.open("bob", MIN);
    let taken = bob.take_review(None, None).unwrap();
    assert_eq!((taken.id, taken.state), (id, ItemState::Review));
    assert_eq!(taken.lock_user.as_deref(), Some("bob"));
    let last = bob.history(id).unwrap().pop().unwrap();
    assert_eq!(
        (last.kind.as_str(), last.detail["review"].as_bool()),
        ("locked", Some(true))
    );
    // Complete, fail or skip are not the reviewer's: accept or reject.
    let token = taken.lock_token;
    let e = assert_code(bob.complete(id, token, None), exit::CONFLICT);
    assert!(e.to_string().contains("in review"), "{e}");
    // A reviewer renews, saves notes and releases as any holder.
    bob.renew(id, token).unwrap();
    bob.save_notes(id, token, "looked at the passport").unwrap();
    let done = bob.accept(id, token, Some("fine")).unwrap();
    assert_eq!(done.state, ItemState::Done);
    assert_eq!(
        done.finished_by.as_deref(),
        Some("alice"),
        "completed by its maker"
    );
    assert_eq!(done.lock_user, None);
    let last = bob.history(id).unwrap().pop().unwrap();
    assert_eq!(
        (last.kind.as_str(), last.detail["comment"].as_str()),
        ("accepted", Some("fine"))
    );
    assert!(in_review(&mut *bob).is_empty());
    clean(&mut *boss);
}

fn nobody_reviews_their_own_work_by_take_next_or_by_id(b: &dyn Backend) {
    let mut boss = setup(b);
    review(&mut *boss, 100, 0);
    let mine = add(&mut *boss, "alice's");
    let theirs = add(&mut *boss, "bob's");
    let mut alice = b.open("alice", 0);
    let mut bob = b.open("bob", 0);
    complete(&mut *alice, mine);
    complete(&mut *bob, theirs);
    // The Review view's list: only what each may review, and its count.
    let may_review = |s: &mut dyn Store, who: &str| {
        let f = ListFilter {
            state: StateFilter::Review,
            reviewer: Some(who.into()),
            limit: 100,
            ..Default::default()
        };
        let ids: Vec<i64> = s.list(&f).unwrap().iter().map(|i| i.id).collect();
        assert_eq!(s.count(&f).unwrap(), ids.len() as u64);
        ids
    };
    assert_eq!(may_review(&mut *alice, "alice"), [theirs]);
    assert_eq!(may_review(&mut *alice, "bob"), [mine]);
    assert_eq!(may_review(&mut *alice, "carol"), [mine, theirs]);
    // Take-next passes over her own submission (the older one) to bob's.
    let got = alice.take_review(None, None).unwrap();
    assert_eq!(got.id, theirs);
    alice.release(theirs, got.lock_token).unwrap();
    assert_eq!(
        alice.item(theirs).unwrap().state,
        ItemState::Review,
        "released to review"
    );
    // By id: exit 5, in the words; nothing changed.
    let e = assert_code(alice.take_review(None, Some(mine)), exit::SUPERVISOR_ONLY);
    assert_eq!(
        e.to_string(),
        format!("you worked on #{mine}; someone else must review it")
    );
    assert_eq!(alice.item(mine).unwrap().lock_user, None);
    // Within a queue too; and with only her own left, nothing to claim.
    let got = alice.take_review(Some("default"), None).unwrap();
    assert_eq!(got.id, theirs);
    alice.accept(theirs, got.lock_token, None).unwrap();
    let e = assert_code(alice.take_review(Some("default"), None), exit::NOTHING);
    assert!(e.to_string().contains("review"), "{e}");
    // An open item is not a review item.
    let open = add(&mut *boss, "open");
    let e = assert_code(alice.take_review(None, Some(open)), exit::CONFLICT);
    assert!(e.to_string().contains("not waiting for review"), "{e}");
    clean(&mut *boss);
}

fn a_field_corrected_is_work_done(b: &dyn Backend) {
    let mut boss = setup(b);
    let vat = FieldChange {
        kind: Some(FieldType::Text),
        ..FieldChange::default()
    };
    boss.define_field("default", "vat", &vat).unwrap();
    review(&mut *boss, 100, 0);
    let id = add(&mut *boss, "company");
    // Carol corrects a field and releases; alice completes it.
    let mut carol = b.open("carol", 0);
    let token = carol.take(id).unwrap().lock_token;
    carol
        .set_fields(id, token, &[("vat".into(), "DE123456789".into())])
        .unwrap();
    carol.release(id, token).unwrap();
    let mut alice = b.open("alice", 0);
    assert_eq!(complete(&mut *alice, id), ItemState::Review);
    assert_code(carol.take_review(None, None), exit::NOTHING);
    assert_code(carol.take_review(None, Some(id)), exit::SUPERVISOR_ONLY);
    // Bob may; he corrects it too before accepting (audited as his), and may take it
    // back after a release: his own corrections in review are the reviewer's.
    let mut bob = b.open("bob", 0);
    let t = bob.take_review(None, Some(id)).unwrap().lock_token;
    let changed = bob
        .set_fields(id, t, &[("vat".into(), "DE987654321".into())])
        .unwrap();
    assert_eq!(changed[0]["from"], "DE123456789");
    bob.release(id, t).unwrap();
    let t = bob.take_review(None, None).unwrap().lock_token;
    bob.accept(id, t, None).unwrap();
    let who: Vec<String> = (bob.history(id).unwrap().into_iter())
        .filter(|e| e.kind.as_str() == "field_changed")
        .map(|e| e.actor)
        .collect();
    assert_eq!(who, ["carol", "bob"]);
    clean(&mut *boss);
}

fn a_share_samples_the_same_items_every_time(b: &dyn Backend) {
    let mut boss = setup(b);
    review(&mut *boss, 30, 0);
    let ids = many(&mut *boss, 40);
    let mut alice = b.open("alice", 0);
    let mut chosen = Vec::new();
    for &id in &ids {
        if complete(&mut *alice, id) == ItemState::Review {
            chosen.push(id);
        }
    }
    assert!(!chosen.is_empty() && chosen.len() < ids.len(), "{chosen:?}");
    // Reopened and completed again, the same items go to review: the choice is the item's.
    for &id in &ids {
        if !chosen.contains(&id) {
            boss.reopen(id, "again").unwrap();
        }
    }
    for &id in &ids {
        if !chosen.contains(&id) {
            assert_eq!(complete(&mut *alice, id), ItemState::Done, "#{id}");
        }
    }
    let mut sorted = in_review(&mut *alice);
    sorted.sort_unstable();
    assert_eq!(sorted, chosen);
    clean(&mut *boss);
}

fn the_first_completions_of_a_person_are_reviewed(b: &dyn Backend) {
    let mut boss = setup(b);
    review(&mut *boss, 0, 2);
    let ids = many(&mut *boss, 4);
    let mut alice = b.open("alice", 0);
    let states: Vec<ItemState> = ids.iter().map(|&id| complete(&mut *alice, id)).collect();
    use ItemState::{Done, Review};
    assert_eq!(states, [Review, Review, Done, Done]);
    assert_eq!(
        alice.history(ids[0]).unwrap().pop().unwrap().detail["why"],
        "new"
    );
    // complete --next goes the same road.
    let more: Vec<i64> = (0..2)
        .map(|i| add(&mut *boss, &format!("bob {i}")))
        .collect();
    let mut bob = b.open("bob", 0);
    let t = bob.take(more[0]).unwrap().lock_token;
    let next = bob
        .complete_and_next(more[0], t, None, &TakeNext::default())
        .unwrap();
    assert_eq!(bob.item(more[0]).unwrap().state, Review);
    assert_eq!(next.next.unwrap().id, more[1]);
    clean(&mut *boss);
}

fn reject_returns_the_item_to_its_maker(b: &dyn Backend) {
    let (mut boss, mut alice, id) = submitted(b);
    let mut bob = b.open("bob", MIN);
    let t = bob.take_review(None, None).unwrap().lock_token;
    assert_code(bob.reject(id, t, "  "), exit::ERROR);
    let back = bob.reject(id, t, "passport expired").unwrap();
    assert_eq!(back.state, ItemState::Open);
    assert_eq!(
        back.lock_user.as_deref(),
        Some("alice"),
        "assigned to its maker"
    );
    assert_eq!(back.lock_token, t + 1);
    assert_eq!((back.finished_by, back.result), (None, None));
    let h = bob.history(id).unwrap();
    let tail: Vec<&str> = h[h.len() - 2..].iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(tail, ["rejected", "reassigned"]);
    assert_eq!(h[h.len() - 2].detail["reason"], "passport expired");
    assert_eq!(h[h.len() - 1].detail["to"], "alice");
    // In alice's hands again: she opens it (renew), completes, it goes to review again.
    let t = alice.take(id).unwrap().lock_token;
    alice.complete(id, t, Some("new passport")).unwrap();
    assert_eq!(alice.item(id).unwrap().state, ItemState::Review);
    // Bob reviewed it before: he may again (he did not work on it).
    let t = bob.take_review(None, Some(id)).unwrap().lock_token;
    bob.accept(id, t, None).unwrap();
    clean(&mut *boss);

    // A maker nobody knows any more (an item made under another name): to the pool.
    let id = made_by_nobody_known(b, &mut *boss);
    let t = bob.take_review(None, Some(id)).unwrap().lock_token;
    let back = bob.reject(id, t, "wrong person").unwrap();
    assert_eq!((back.state, back.lock_user), (ItemState::Open, None));
}

fn accept_and_reject_are_fenced_by_the_reviewer_s_lock(b: &dyn Backend) {
    let (mut boss, mut alice, id) = submitted(b);
    // Nobody holds it: no accept, no reject.
    let mut bob = b.open("bob", 0);
    let token = bob.item(id).unwrap().lock_token;
    assert_code(bob.accept(id, token, None), exit::CONFLICT);
    let t = bob.take_review(None, None).unwrap().lock_token;
    // A stale token, another person, the maker: refused, nothing changed.
    assert_code(bob.accept(id, t - 1, None), exit::CONFLICT);
    let mut carol = b.open("carol", 0);
    let e = assert_code(carol.reject(id, t, "no"), exit::CONFLICT);
    assert!(e.to_string().contains("bob"), "{e}");
    assert_code(alice.accept(id, t, None), exit::CONFLICT);
    // A locked review item is not open: held by bob for everyone else.
    assert_code(carol.take_review(None, Some(id)), exit::CONFLICT);
    let item = bob.item(id).unwrap();
    assert_eq!(
        (item.state, item.lock_user.as_deref()),
        (ItemState::Review, Some("bob"))
    );
    bob.accept(id, t, None).unwrap();
    // Accepted: a second verdict is refused.
    let e = assert_code(bob.reject(id, t, "late"), exit::CONFLICT);
    assert!(e.to_string().contains("not waiting for review"), "{e}");
    clean(&mut *boss);
}

/// A supervisor's reopen of an item a reviewer holds (found by the soak: the item went
/// back to open with the reviewer's lock still on it, so nobody could take it until the
/// lock expired, and every claim meanwhile said "nothing to claim").
fn a_reopen_during_a_review_frees_the_item_and_fences_the_reviewer(b: &dyn Backend) {
    let (mut boss, _alice, id) = submitted(b);
    let mut bob = b.open("bob", 0);
    let t = bob.take_review(None, None).unwrap().lock_token;
    boss.reopen(id, "look again").unwrap();
    let item = boss.item(id).unwrap();
    assert_eq!(
        (item.state, item.lock_user.as_deref()),
        (ItemState::Open, None)
    );
    // Free for anyone at once, and bob's verdict finds his lock gone.
    let mut carol = b.open("carol", 0);
    let got = carol.take_next(&TakeNext::default()).unwrap();
    assert_eq!(got.id, id);
    assert_code(bob.accept(id, t, None), exit::CONFLICT);
    assert_eq!(
        boss.history(id)
            .unwrap()
            .iter()
            .rev()
            .nth(1)
            .unwrap()
            .detail["holder"],
        "bob"
    );
    clean(&mut *boss);
}

fn a_review_lock_expires_and_is_taken_over_as_any_lock(b: &dyn Backend) {
    let (mut boss, _alice, id) = submitted(b);
    let mut bob = b.open("bob", 0);
    let old = bob.take_review(None, None).unwrap().lock_token;
    // Two minutes later (the lock is 60 s) carol takes it over.
    let mut carol: BoxStore = b.open("carol", 2 * MIN);
    let got = carol.take_review(None, None).unwrap();
    assert_eq!((got.id, got.lock_token), (id, old + 1));
    assert_eq!(
        carol.history(id).unwrap().pop().unwrap().detail["from"],
        "bob"
    );
    // Bob's late accept finds his lock gone, and says who took it.
    let e = assert_code(bob.accept(id, old, None), exit::CONFLICT);
    assert!(e.to_string().contains("carol"), "{e}");
    // The reaper releases an expired review lock back to review.
    let mut later = b.open("boss", 4 * MIN);
    assert_eq!(later.reap().unwrap(), 1);
    let item = later.item(id).unwrap();
    assert_eq!((item.state, item.lock_user), (ItemState::Review, None));
    clean(&mut *boss);
}

/// An accept or reject whose answer was lost (the call killed, the connection dropped) is
/// asked again with the same token: it answers with the item as the verdict left it and
/// writes nothing; once the item moved on, or from anyone else, it is refused.
fn a_verdict_asked_again_answers_as_it_left_the_item(b: &dyn Backend) {
    let (mut boss, mut alice, id) = submitted(b);
    let mut bob = b.open("bob", MIN);
    let t = bob.take_review(None, None).unwrap().lock_token;
    bob.accept(id, t, Some("fine")).unwrap();
    let events = kinds(&mut *boss, id).len();
    let mut bob_later = b.open("bob", 10 * MIN);
    let again = bob_later.accept(id, t, Some("fine")).unwrap();
    assert_eq!((again.state, again.lock_token), (ItemState::Done, t));
    assert_eq!(
        kinds(&mut *boss, id).len(),
        events,
        "a retry writes nothing"
    );
    // Not a retry: another person's, another token, the other verdict.
    let mut carol = b.open("carol", MIN);
    assert_code(carol.accept(id, t, None), exit::CONFLICT);
    assert_code(bob.accept(id, t + 1, None), exit::CONFLICT);
    assert_code(bob.reject(id, t, "late"), exit::CONFLICT);

    // A reject asked again: still assigned to its maker under the next token.
    let id = add(&mut *boss, "second");
    assert_eq!(complete(&mut *alice, id), ItemState::Review);
    let t = bob.take_review(None, Some(id)).unwrap().lock_token;
    let first = bob.reject(id, t, "passport expired").unwrap();
    let events = kinds(&mut *boss, id).len();
    let again = bob_later.reject(id, t, "passport expired").unwrap();
    assert_eq!(again.lock_user.as_deref(), Some("alice"));
    assert_eq!(
        (again.state, again.lock_token),
        (ItemState::Open, first.lock_token)
    );
    assert_eq!(
        kinds(&mut *boss, id).len(),
        events,
        "a retry writes nothing"
    );
    assert_code(bob.accept(id, t, None), exit::CONFLICT);
    // Once its maker completed it again, the old reject is no longer asked again.
    assert_eq!(complete(&mut *alice, id), ItemState::Review);
    assert_code(bob.reject(id, t, "passport expired"), exit::CONFLICT);
    assert_eq!(alice.item(id).unwrap().state, ItemState::Review);

    // Rejected to the pool (its maker unknown): free under the same token.
    let id = made_by_nobody_known(b, &mut *boss);
    let t = bob.take_review(None, Some(id)).unwrap().lock_token;
    bob.reject(id, t, "wrong person").unwrap();
    let again = bob_later.reject(id, t, "wrong person").unwrap();
    assert_eq!(
        (again.state, again.lock_user, again.lock_token),
        (ItemState::Open, None, t)
    );
}

/// Ready-made texts for rejecting (issue 29 §1: the reject dialog offers them): kept per
/// queue as the other purposes are, read back under `reject`, and the reason chosen is the
/// reject's.
fn a_queue_keeps_reasons_for_rejecting(b: &dyn Backend) {
    let (mut boss, _alice, id) = submitted(b);
    let t = boss
        .add_text("default", Purpose::Reject, "The document has expired", None)
        .unwrap();
    assert_eq!(
        (t.purpose, t.code.as_str()),
        (Purpose::Reject, "the-document-has-expired")
    );
    let mut bob = b.open("bob", MIN);
    let texts = bob.texts(Some("default")).unwrap();
    assert_eq!(
        texts.iter().map(|t| t.purpose.as_str()).collect::<Vec<_>>(),
        ["reject"]
    );
    let tok = bob.take_review(None, Some(id)).unwrap().lock_token;
    // A code the queue has no reject text for: refused, nothing written.
    let events = kinds(&mut *boss, id).len();
    let nosuch = Said::NOTHING.coded(Some("nosuch"));
    let e = assert_code(bob.reject_said(id, tok, nosuch), exit::ERROR);
    assert!(
        e.to_string().contains("no reject text with code 'nosuch'"),
        "{e}"
    );
    assert_eq!(kinds(&mut *boss, id).len(), events);
    // The code alone: its text is the reason, the code kept in the event.
    let code = Said::NOTHING.coded(Some(texts[0].code.as_str()));
    let back = bob.reject_said(id, tok, code).unwrap();
    assert_eq!(back.lock_user.as_deref(), Some("alice"));
    let h = bob.history(id).unwrap();
    let rejected = h.iter().rev().find(|e| e.kind.as_str() == "rejected");
    let rejected = rejected.unwrap();
    assert_eq!(rejected.detail["reason"], "The document has expired");
    assert_eq!(rejected.detail["code"], "the-document-has-expired");
    clean(&mut *boss);
}
