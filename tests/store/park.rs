//! Parking for a call-back (issue 28 §1), on both backends: a park releases the lock and
//! keeps the item for its owner, nobody else may take it, it wakes for its owner (their
//! next take offers it first), a supervisor may end it, and past its grace it returns to
//! the pool (by a claim or the reaper). "boss" opens first and is the supervisor;
//! "alice", "bob" and "carol" are staff. Time passes by opening a store whose clock is
//! skewed ahead, never by sleeping.

use crate::support::MIN;
use crate::support::backend::{Adds, Backend, add, assert_code, kinds, setup};
use caseload::domain::park::GRACE_MS;
use caseload::domain::{EventKind, ItemState, NewItem, QueueUpdate};
use caseload::store::{Applied, ListFilter, StateFilter, Store, TakeNext, exit};

conformance!(
    park_blocks_others_and_wakes_for_the_owner,
    grace_returns_it_to_the_pool,
    the_owner_or_a_supervisor_ends_a_park,
    a_park_is_fenced_and_checked,
    figures_count_parked_time_apart,
    undo_puts_each_change_back_within_the_window,
    undo_is_refused_after_the_window_or_anothers_touch,
    undoing_complete_and_next_returns_the_next_item_too,
    an_undo_asked_again_answers_as_it_left_the_item,
    a_queue_sets_its_own_grace_and_undo_window,
);

/// Alice takes `id` and parks it for ten minutes; returns the token she parked under.
fn park_ten_minutes(alice: &mut dyn Store, id: i64) -> i64 {
    let token = alice.take(id).unwrap().lock_token;
    let until = alice.now().unwrap() + 10 * MIN;
    let applied = alice
        .park(id, token, until, "call back Mei Brandt")
        .unwrap();
    assert_eq!(applied, Applied::Now);
    token
}

fn ids(s: &mut dyn Store, state: StateFilter, holder: Option<&str>) -> Vec<i64> {
    let f = ListFilter {
        state,
        holder: holder.map(str::to_string),
        limit: 100,
        ..Default::default()
    };
    s.list(&f).unwrap().iter().map(|i| i.id).collect()
}

fn park_blocks_others_and_wakes_for_the_owner(b: &dyn Backend) {
    let mut boss = setup(b);
    let parked = add(&mut *boss, "call back");
    let other = add(&mut *boss, "other");
    let mut alice = b.open("alice", 0);
    let token = park_ten_minutes(&mut *alice, parked);
    let item = alice.item(parked).unwrap();
    assert_eq!(item.state, ItemState::Parked);
    assert_eq!(item.lock_user, None, "the lock is released");
    assert_eq!(item.parked_by.as_deref(), Some("alice"));
    assert_eq!(item.park_reason.as_deref(), Some("call back Mei Brandt"));
    let last = alice.history(parked).unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Parked);
    assert_eq!(last.detail["reason"], "call back Mei Brandt");
    assert_eq!(last.detail["until"], item.parked_until.unwrap());

    // Nobody else may take it: told whose it is, until when and why.
    let mut bob = b.open("bob", MIN);
    let e = assert_code(bob.take(parked), exit::CONFLICT);
    let msg = e.to_string();
    assert!(
        msg.contains(&format!("#{parked} is parked by alice until"))
            && msg.ends_with(": call back Mei Brandt"),
        "{msg}"
    );
    assert_eq!(bob.take_next(&TakeNext::default()).unwrap().id, other);
    assert_code(bob.take_next(&TakeNext::default()), exit::NOTHING);
    // It left the open items (everyone's Queue view) and is among alice's parked ones.
    assert!(!ids(&mut *bob, StateFilter::Open, None).contains(&parked));
    assert_eq!(ids(&mut *bob, StateFilter::Parked, None), [parked]);
    assert_eq!(ids(&mut *bob, StateFilter::Parked, Some("alice")), [parked]);
    assert!(ids(&mut *bob, StateFilter::Parked, Some("bob")).is_empty());
    assert_eq!(
        bob.count(&ListFilter {
            state: StateFilter::Parked,
            ..Default::default()
        })
        .unwrap(),
        1
    );
    // Alice's old token writes nothing while it is parked.
    assert_code(alice.complete(parked, token, None), exit::CONFLICT);

    // Before its time her next take does not wake it; from its time it is offered first.
    boss.add(&NewItem {
        priority: 9,
        ..NewItem::titled("later, higher")
    })
    .unwrap();
    let mut alice_woken = b.open("alice", 11 * MIN);
    let first = alice_woken.take_next(&TakeNext::default()).unwrap();
    assert_eq!(first.id, parked, "the woken item comes first");
    assert_eq!(first.lock_user.as_deref(), Some("alice"));
    assert_eq!(first.lock_token, token + 1);
    assert_eq!(
        kinds(&mut *alice_woken, parked),
        ["created", "locked", "parked", "woke", "locked"]
    );
    let woke = &alice_woken.history(parked).unwrap()[3];
    assert_eq!(woke.detail["by"], "owner");
    assert_eq!(woke.detail["owner"], "alice");
    alice_woken
        .complete(parked, first.lock_token, Some("called"))
        .unwrap();
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

fn grace_returns_it_to_the_pool(b: &dyn Backend) {
    let mut boss = setup(b);
    let by_claim = add(&mut *boss, "returned by a claim");
    let by_reaper = add(&mut *boss, "returned by the reaper");
    let mut alice = b.open("alice", 0);
    park_ten_minutes(&mut *alice, by_claim);
    park_ten_minutes(&mut *alice, by_reaper);

    // Awake, within the grace: still alice's.
    let mut bob_in_grace = b.open("bob", 10 * MIN + GRACE_MS / 2);
    assert_code(bob_in_grace.take(by_claim), exit::CONFLICT);
    assert_code(bob_in_grace.take_next(&TakeNext::default()), exit::NOTHING);
    assert_eq!(bob_in_grace.reap().unwrap(), 0);

    // Past it: a claim returns it to the pool and takes it.
    let past = 10 * MIN + GRACE_MS + MIN;
    let mut bob = b.open("bob", past);
    let item = bob.take(by_claim).unwrap();
    assert_eq!(item.lock_user.as_deref(), Some("bob"));
    assert_eq!(item.parked_by, None);
    assert_eq!(
        kinds(&mut *bob, by_claim),
        ["created", "locked", "parked", "woke", "locked"]
    );
    let woke = &bob.history(by_claim).unwrap()[3];
    assert_eq!(woke.detail["by"], "grace");
    assert_eq!(woke.detail["owner"], "alice");

    // The reaper returns the other one (once).
    let mut cron = b.open("cron", past);
    assert_eq!(cron.reap().unwrap(), 1);
    assert_eq!(cron.reap().unwrap(), 0);
    let back = cron.item(by_reaper).unwrap();
    assert_eq!(back.state, ItemState::Open);
    assert_eq!((back.lock_user, back.parked_by), (None, None));
    assert_eq!(
        kinds(&mut *cron, by_reaper),
        ["created", "locked", "parked", "woke"]
    );
    let mut carol = b.open("carol", past);
    assert_eq!(carol.take_next(&TakeNext::default()).unwrap().id, by_reaper);

    // A take-next past the grace returns parks as it looks (no reaper needed).
    let third = add(&mut *boss, "third");
    park_ten_minutes(&mut *alice, third);
    let mut dave = b.open("dave", past);
    assert_eq!(dave.take_next(&TakeNext::default()).unwrap().id, third);
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

fn the_owner_or_a_supervisor_ends_a_park(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "wake me");
    let mut alice = b.open("alice", 0);
    let token = park_ten_minutes(&mut *alice, id);
    // Early, by its owner: locked to her under a new token.
    let item = alice.wake(id).unwrap();
    assert_eq!(item.state, ItemState::Open);
    assert_eq!(item.lock_user.as_deref(), Some("alice"));
    assert_eq!(item.lock_token, token + 1);
    let until = alice.now().unwrap() + 10 * MIN;
    alice.park(id, token + 1, until, "again").unwrap();
    // Not by another staff member; a supervisor returns it to the pool.
    let mut bob = b.open("bob", 0);
    let e = assert_code(bob.wake(id), exit::SUPERVISOR_ONLY);
    assert!(e.to_string().contains("alice"), "{e}");
    let item = boss.wake(id).unwrap();
    assert_eq!(item.state, ItemState::Open);
    assert_eq!((item.lock_user, item.parked_by), (None, None));
    let last = boss.history(id).unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Woke);
    assert_eq!(last.detail["by"], "supervisor");
    assert_eq!(last.detail["owner"], "alice");
    // Not parked any more.
    assert_code(boss.wake(id), exit::ERROR);
    assert_eq!(bob.take(id).unwrap().lock_user.as_deref(), Some("bob"));
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

fn a_park_is_fenced_and_checked(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "check me");
    let mut alice = b.open("alice", 0);
    let token = alice.take(id).unwrap().lock_token;
    let now = alice.now().unwrap();
    // A time that has passed, an empty reason: refused, nothing written.
    let e = assert_code(alice.park(id, token, now - MIN, "late"), exit::ERROR);
    assert!(e.to_string().contains("--until"), "{e}");
    let e = assert_code(alice.park(id, token, now + MIN, "  "), exit::ERROR);
    assert!(e.to_string().contains("--reason"), "{e}");
    assert_code(alice.park(id, token, now + MIN, "a\0b"), exit::ERROR);
    assert_eq!(kinds(&mut *alice, id), ["created", "locked"]);
    // Not by someone who does not hold it.
    let mut bob = b.open("bob", 0);
    assert_code(bob.park(id, token, now + MIN, "mine now"), exit::CONFLICT);
    // The same park again (its answer lost) is acknowledged, not refused.
    let until = now + 10 * MIN;
    assert_eq!(alice.park(id, token, until, "wait").unwrap(), Applied::Now);
    assert_eq!(
        alice.park(id, token, until, "wait").unwrap(),
        Applied::Already
    );
    assert_eq!(kinds(&mut *alice, id), ["created", "locked", "parked"]);
    // A supervisor cannot reopen it as if it were finished.
    assert_code(boss.reopen(id, "why not"), exit::ERROR);
}

fn figures_count_parked_time_apart(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "timed");
    let mut alice = b.open("alice", 0);
    park_ten_minutes(&mut *alice, id);
    // Woken after an hour and worked for two minutes (by the clocks of the stores).
    let mut later = b.open("alice", 60 * MIN);
    let item = later.take(id).unwrap();
    let mut done = b.open("alice", 62 * MIN);
    done.complete(id, item.lock_token, None).unwrap();
    let show = caseload::domain::figures::ItemFigures::of(
        &done.item(id).unwrap(),
        &done.history(id).unwrap(),
        done.now().unwrap(),
    );
    let handle: i64 = show.handled.iter().map(|p| p.ms).sum();
    // Two minutes and the moment before the park; never the hour parked.
    assert!((2 * MIN..10 * MIN).contains(&handle), "handle {handle} ms");
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

fn undo_puts_each_change_back_within_the_window(b: &dyn Backend) {
    let mut boss = setup(b);
    let mut alice = b.open("alice", 0);
    for what in ["completed", "failed", "released", "skipped", "parked"] {
        let id = add(&mut *boss, what);
        let token = alice.take(id).unwrap().lock_token;
        alice.save_notes(id, token, "my notes").unwrap();
        let until = alice.now().unwrap() + 10 * MIN;
        match what {
            "completed" => alice.complete(id, token, Some("done")).map(|_| ()),
            "failed" => alice.fail(id, token, "no answer").map(|_| ()),
            "released" => alice.release(id, token).map(|_| ()),
            "skipped" => alice.skip(id, token).map(|_| ()),
            _ => alice.park(id, token, until, "call back").map(|_| ()),
        }
        .unwrap();
        let mut later = b.open("alice", 20_000);
        let item = later.undo(id).unwrap();
        assert_eq!(item.state, ItemState::Open, "{what}");
        assert_eq!(item.lock_user.as_deref(), Some("alice"), "{what}");
        assert_eq!(item.lock_token, token + 1, "{what}");
        assert_eq!((item.result, item.error), (None, None), "{what}");
        assert_eq!((item.finished_at, item.parked_by), (None, None), "{what}");
        assert_eq!(item.notes, "my notes", "{what}");
        let last = later.history(id).unwrap().pop().unwrap();
        assert_eq!(last.kind, EventKind::Undone, "{what}");
        assert_eq!(last.detail["undid"], what);
        assert_eq!(last.detail["token"], token + 1);
        // Her new token works; the old one does not.
        assert_code(later.complete(id, token, None), exit::CONFLICT);
        later.complete(id, token + 1, None).unwrap();
    }
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

fn undo_is_refused_after_the_window_or_anothers_touch(b: &dyn Backend) {
    let mut boss = setup(b);
    let mut alice = b.open("alice", 0);
    // Too late.
    let late = add(&mut *boss, "late");
    let token = alice.take(late).unwrap().lock_token;
    alice.complete(late, token, None).unwrap();
    let mut alice_late = b.open("alice", 40_000);
    let e = assert_code(alice_late.undo(late), exit::CONFLICT);
    let msg = e.to_string();
    assert!(
        msg.contains(&format!(
            "#{late} cannot be undone: the 30 s to undo it ended"
        )) && msg.ends_with(&format!("ask a supervisor to reopen #{late}")),
        "{msg}"
    );
    // Someone else took it since.
    let taken = add(&mut *boss, "taken");
    let token = alice.take(taken).unwrap().lock_token;
    alice.release(taken, token).unwrap();
    let mut bob = b.open("bob", 0);
    bob.take(taken).unwrap();
    let e = assert_code(alice.undo(taken), exit::CONFLICT);
    assert!(e.to_string().contains("bob locked it"), "{e}");
    // Someone else commented since.
    let noted = add(&mut *boss, "noted");
    let token = alice.take(noted).unwrap().lock_token;
    alice.fail(noted, token, "gone").unwrap();
    bob.comment(noted, "I know them").unwrap();
    assert_code(alice.undo(noted), exit::CONFLICT);
    // Not hers to undo, and nothing of hers.
    let never = add(&mut *boss, "never");
    assert_code(alice.undo(never), exit::CONFLICT);
    let token = alice.take(never).unwrap().lock_token;
    alice.complete(never, token, None).unwrap();
    assert_code(bob.undo(never), exit::CONFLICT);
    assert_eq!(kinds(&mut *boss, late).last(), Some(&"completed"));
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

fn undoing_complete_and_next_returns_the_next_item_too(b: &dyn Backend) {
    let mut boss = setup(b);
    let first = add(&mut *boss, "first");
    let second = add(&mut *boss, "second");
    let mut alice = b.open("alice", 0);
    let token = alice.take(first).unwrap().lock_token;
    let done = alice
        .complete_and_next(first, token, None, &TakeNext::default())
        .unwrap();
    assert_eq!(done.next.unwrap().id, second);
    let item = alice.undo(first).unwrap();
    assert_eq!(item.lock_user.as_deref(), Some("alice"));
    let next = alice.item(second).unwrap();
    assert_eq!(next.lock_user, None, "the next item is back in the pool");
    let last = alice.history(second).unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Released);
    assert_eq!(last.detail["undo_of"], first);
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

/// An undo whose answer was lost (the call killed, the connection dropped) is asked again:
/// the retry answers with the item locked to its maker under the token the undo gave, and
/// writes nothing; once the item moved on (completed again, taken by another), it is refused.
fn an_undo_asked_again_answers_as_it_left_the_item(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "slip");
    let mut alice = b.open("alice", 0);
    let token = alice.take(id).unwrap().lock_token;
    alice.complete(id, token, Some("done")).unwrap();
    let first = alice.undo(id).unwrap();
    let events = kinds(&mut *boss, id).len();
    // Asked again, also after the window: the same answer, nothing written.
    let mut alice_later = b.open("alice", 10 * MIN);
    let again = alice_later.undo(id).unwrap();
    assert_eq!(again.lock_token, first.lock_token);
    assert_eq!(again.lock_user.as_deref(), Some("alice"));
    assert_eq!(again.state, ItemState::Open);
    assert_eq!(
        kinds(&mut *boss, id).len(),
        events,
        "a retry writes nothing"
    );
    // Bob's undo of it is no retry of his.
    let mut bob = b.open("bob", 0);
    assert_code(bob.undo(id), exit::CONFLICT);
    // Completed again: the undo's retry is over; a new undo undoes the new complete.
    alice.complete(id, first.lock_token, None).unwrap();
    let undone = alice.undo(id).unwrap();
    assert_eq!(undone.lock_token, first.lock_token + 1);
    // Released and taken by Bob since: refused.
    alice.release(id, undone.lock_token).unwrap();
    bob.take(id).unwrap();
    assert_code(alice.undo(id), exit::CONFLICT);
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

/// `queue set --park-grace-seconds / --undo-seconds`: the queue's own grace decides when
/// a woken park returns to the pool, its own window how long an undo is offered (0: none).
fn a_queue_sets_its_own_grace_and_undo_window(b: &dyn Backend) {
    let mut boss = setup(b);
    let settings = |grace, undo| QueueUpdate {
        park_grace_seconds: Some(grace),
        undo_seconds: Some(undo),
        ..QueueUpdate::default()
    };
    let q = boss.set_queue("default", &settings(120, 0), true).unwrap();
    assert_eq!((q.park_grace_seconds, q.undo_seconds), (120, 0));
    // Out of range: refused, nothing changed.
    assert_code(
        boss.set_queue("default", &settings(10, 0), false),
        exit::ERROR,
    );
    assert_code(
        boss.set_queue("default", &settings(120, 4000), false),
        exit::ERROR,
    );
    assert_eq!(boss.queue("default").unwrap().park_grace_seconds, 120);

    // A two-minute grace: one minute after the wake it is still alice's, three minutes
    // after it is anyone's (the default hour would still keep it).
    let parked = add(&mut *boss, "call back");
    let mut alice = b.open("alice", 0);
    park_ten_minutes(&mut *alice, parked);
    let mut bob = b.open("bob", 11 * MIN);
    assert_code(bob.take(parked), exit::CONFLICT);
    let mut bob = b.open("bob", 13 * MIN);
    assert_eq!(bob.take(parked).unwrap().lock_user.as_deref(), Some("bob"));

    // No undo in this queue.
    let done = add(&mut *boss, "done");
    let token = alice.take(done).unwrap().lock_token;
    alice.complete(done, token, None).unwrap();
    let e = assert_code(alice.undo(done), exit::CONFLICT);
    assert!(e.to_string().contains("offers no undo"), "{e}");
    // A two-minute window: a minute later the undo still works (30 s would have ended).
    boss.set_queue("default", &settings(120, 120), false)
        .unwrap();
    let slip = add(&mut *boss, "slip");
    let token = alice.take(slip).unwrap().lock_token;
    alice.complete(slip, token, None).unwrap();
    let mut alice_later = b.open("alice", MIN);
    let back = alice_later.undo(slip).unwrap();
    assert_eq!(back.lock_user.as_deref(), Some("alice"));
    // The settings are audited with the rest.
    let audit = boss.audit(None, 0).unwrap();
    let last = audit.iter().rev().find(|a| a.subject == "default").unwrap();
    assert_eq!(last.new["undo_seconds"], 120, "{:?}", last.new);
    assert_eq!(last.old["undo_seconds"], 0, "{:?}", last.old);
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}
