//! Store tests for the supervisor operations the conformance suite does not cover: the
//! fenced bulk unlock (`unlock_many`), cancel and reassign racing the holder's complete,
//! every late holder write after a reassign, a user's day (`events_by`) and when a lock
//! was taken (`lock_time`, which a renewal leaves alone). Written once against `dyn Store`; SQLite always,
//! PostgreSQL when `CASELOAD_TEST_PG` holds a URL.
//!
//! "boss" opens the database first and so is its supervisor; the others are staff.

use crate::support::MIN;
use crate::support::backend::{Backend, add, assert_code, kinds, race, setup};
use caseload::domain::{EventKind, ItemState, Role, SeenLock};
use caseload::store::exit;

conformance!(
    unlock_many_is_fenced_by_the_token_seen_and_audited,
    unlock_many_is_for_supervisors_only_and_needs_a_reason,
    unlock_many_racing_complete_has_one_winner,
    cancel_racing_complete_has_one_winner,
    after_a_reassign_every_late_holder_write_is_refused,
    events_by_lists_a_users_day_in_order,
    lock_time_is_the_take_and_a_renewal_moves_only_the_expiry,
);

fn unlock_many_is_fenced_by_the_token_seen_and_audited(b: &dyn Backend) {
    let mut boss = setup(b);
    let (x, y, z) = (
        add(&mut *boss, "x"),
        add(&mut *boss, "y"),
        add(&mut *boss, "z"),
    );
    let mut alice = b.open("alice", 0);
    let mut bob = b.open("bob", 0);
    let sx = SeenLock::of(&alice.take(x).unwrap()).unwrap();
    let sy = SeenLock::of(&alice.take(y).unwrap()).unwrap();
    let sz = SeenLock::of(&bob.take(z).unwrap()).unwrap();
    let (tx, ty_seen, tz) = (sx.token, sy.token, sz.token);
    // After the supervisor looked, alice released y and bob took it: a newer lock.
    alice.release(y, ty_seen).unwrap();
    let ty_now = bob.take(y).unwrap().lock_token;
    assert_ne!(ty_now, ty_seen);

    let n = boss.unlock_many(&[sx, sy, sz], "end of shift").unwrap();
    assert_eq!(n, 2, "x and z unlocked; y changed since and is left alone");
    assert_eq!(boss.item(x).unwrap().lock_user, None);
    assert_eq!(boss.item(z).unwrap().lock_user, None);
    let yi = boss.item(y).unwrap();
    assert_eq!(yi.lock_user.as_deref(), Some("bob"));
    assert_eq!(yi.lock_token, ty_now);
    assert_eq!(
        kinds(&mut *boss, y),
        ["created", "locked", "released", "locked"]
    );
    for (id, from) in [(x, "alice"), (z, "bob")] {
        let last = boss.history(id).unwrap().pop().unwrap();
        assert_eq!(last.kind, EventKind::Unlocked);
        assert_eq!(last.actor, "boss");
        assert_eq!(last.detail_str("from"), Some(from));
        assert_eq!(last.detail_str("reason"), Some("end of shift"));
        assert_eq!(
            kinds(&mut *boss, id),
            ["created", "locked", "unlocked"],
            "one event per item"
        );
    }
    // The holders' late writes are refused.
    assert_code(alice.complete(x, tx, None), exit::CONFLICT);
    assert_code(bob.save_notes(z, tz, "late"), exit::CONFLICT);
    // A second run over the same tokens changes nothing.
    assert_eq!(boss.unlock_many(&[sx, sz], "again").unwrap(), 0);
    assert_eq!(kinds(&mut *boss, x), ["created", "locked", "unlocked"]);
}

fn unlock_many_is_for_supervisors_only_and_needs_a_reason(b: &dyn Backend) {
    let mut boss = setup(b);
    let x = add(&mut *boss, "x");
    let mut bob = b.open("bob", 0);
    let seen = SeenLock::of(&bob.take(x).unwrap()).unwrap();
    let mut alice = b.open("alice", 0);
    let e = assert_code(alice.unlock_many(&[seen], "mine"), exit::SUPERVISOR_ONLY);
    assert!(e.to_string().contains("supervisor only"), "{e}");
    assert_code(boss.unlock_many(&[seen], "   "), exit::ERROR);
    assert_eq!(boss.item(x).unwrap().lock_user.as_deref(), Some("bob"));
    assert_eq!(kinds(&mut *boss, x), ["created", "locked"]);
    assert_eq!(boss.unlock_many(&[], "nothing").unwrap(), 0);
}

fn unlock_many_racing_complete_has_one_winner(b: &dyn Backend) {
    let mut boss = setup(b);
    let mut alice = b.open("alice", 0);
    let mut wins = (0, 0);
    for round in 0..15 {
        let id = add(&mut *boss, &format!("race {round}"));
        let seen = SeenLock::of(&alice.take(id).unwrap()).unwrap();
        let t = seen.token;
        let (done, unlocked, a, bo) = race(
            alice,
            boss,
            move |s| s.complete(id, t, Some("mine")),
            move |s| s.unlock_many(&[seen], "bulk release"),
        );
        alice = a;
        boss = bo;
        let item = boss.item(id).unwrap();
        let k = kinds(&mut *boss, id);
        match (&done, &unlocked) {
            (Ok(_), Ok(0)) => {
                wins.0 += 1;
                assert_eq!(item.state, ItemState::Done);
                assert_eq!(k, ["created", "locked", "completed"]);
            }
            (Err(e), Ok(1)) => {
                wins.1 += 1;
                assert_eq!(e.exit_code(), exit::CONFLICT, "{e}");
                assert_eq!(item.state, ItemState::Open);
                assert_eq!(item.lock_user, None);
                assert_eq!(k, ["created", "locked", "unlocked"]);
            }
            other => panic!("round {round}: exactly one must win, got {other:?}"),
        }
    }
    eprintln!("complete won {}, bulk unlock won {}", wins.0, wins.1);
}

fn cancel_racing_complete_has_one_winner(b: &dyn Backend) {
    let mut boss = setup(b);
    let mut alice = b.open("alice", 0);
    for round in 0..15 {
        let id = add(&mut *boss, &format!("race {round}"));
        let seen = SeenLock::of(&alice.take(id).unwrap()).unwrap();
        let t = seen.token;
        let (done, cancelled, a, bo) = race(
            alice,
            boss,
            move |s| s.complete(id, t, None),
            move |s| s.cancel(id, "duplicate"),
        );
        alice = a;
        boss = bo;
        let item = boss.item(id).unwrap();
        let k = kinds(&mut *boss, id);
        match (&done, &cancelled) {
            (Ok(_), Err(e)) => {
                assert_eq!(e.exit_code(), exit::CONFLICT, "{e}");
                assert_eq!(item.state, ItemState::Done);
                assert_eq!(k, ["created", "locked", "completed"]);
            }
            (Err(e), Ok(())) => {
                assert_eq!(e.exit_code(), exit::CONFLICT, "{e}");
                assert_eq!(item.state, ItemState::Cancelled);
                assert_eq!(item.finished_by.as_deref(), Some("boss"));
                assert_eq!(k, ["created", "locked", "cancelled"]);
            }
            other => panic!("round {round}: exactly one must win, got {other:?}"),
        }
    }
}

fn after_a_reassign_every_late_holder_write_is_refused(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "moved");
    let mut alice = b.open("alice", 0);
    let t = alice.take(id).unwrap().lock_token;
    alice.save_notes(id, t, "alice's notes").unwrap();
    boss.set_role("bob", Role::Staff).unwrap(); // a known user
    let moved = boss
        .reassign(id, None, "bob", "bob knows the customer")
        .unwrap();
    for (what, r) in [
        ("renew", alice.renew(id, t).map(|_| ())),
        ("save_notes", alice.save_notes(id, t, "late")),
        ("release", alice.release(id, t).map(|_| ())),
        ("skip", alice.skip(id, t).map(|_| ())),
        ("fail", alice.fail(id, t, "late").map(|_| ())),
        ("complete", alice.complete(id, t, None).map(|_| ())),
    ] {
        let e = assert_code(r, exit::CONFLICT);
        assert!(
            e.to_string().contains("boss"),
            "{what}: the refusal names the supervisor: {e}"
        );
    }
    let item = boss.item(id).unwrap();
    assert_eq!(item.lock_user.as_deref(), Some("bob"));
    assert_eq!(
        item.notes, "alice's notes",
        "nothing of alice's late writes"
    );
    let mut bob = b.open("bob", 0);
    bob.complete(id, moved.lock_token, Some("done by bob"))
        .unwrap();
    assert_eq!(
        kinds(&mut *boss, id),
        ["created", "locked", "noted", "reassigned", "completed"]
    );
}

fn events_by_lists_a_users_day_in_order(b: &dyn Backend) {
    let mut boss = setup(b);
    let start = boss.now().unwrap();
    let (x, y) = (add(&mut *boss, "x"), add(&mut *boss, "y"));
    let mut alice = b.open("alice", 0);
    let tx = alice.take(x).unwrap().lock_token;
    alice.complete(x, tx, Some("ok")).unwrap();
    alice.take(y).unwrap();
    boss.unlock(y, None, "alice went home").unwrap();
    let day: Vec<(i64, &str)> = alice
        .events_by("alice", start)
        .unwrap()
        .iter()
        .map(|e| (e.item_id, e.kind.as_str()))
        .collect();
    assert_eq!(day, [(x, "locked"), (x, "completed"), (y, "locked")]);
    let boss_day: Vec<(i64, &str)> = alice
        .events_by("boss", start)
        .unwrap()
        .iter()
        .map(|e| (e.item_id, e.kind.as_str()))
        .collect();
    assert_eq!(boss_day, [(x, "created"), (y, "created"), (y, "unlocked")]);
    let later = alice.now().unwrap() + MIN;
    assert!(alice.events_by("alice", later).unwrap().is_empty());
}

fn lock_time_is_the_take_and_a_renewal_moves_only_the_expiry(b: &dyn Backend) {
    let mut boss = setup(b);
    let x = add(&mut *boss, "x");
    let mut alice = b.open("alice", 0);
    let taken = alice.take(x).unwrap();
    let taken_at = taken.lock_time.unwrap();
    let age = boss.queue("default").unwrap().lock_seconds * 1000;
    assert_eq!(taken.lock_expires_at, Some(taken_at + age));
    // Half a lock age later (a store whose clock is ahead) alice renews.
    let mut alice_later = b.open("alice", age / 2);
    let renewed = alice_later.renew(x, taken.lock_token).unwrap();
    assert_eq!(
        renewed.lock_time,
        Some(taken_at),
        "the take, not the renewal"
    );
    let expires = renewed.lock_expires_at.unwrap();
    assert!(
        expires >= taken_at + age / 2 - 1_000 + age,
        "the renewal's time plus the age: {expires} vs {taken_at}"
    );
    let shown = boss.item(x).unwrap();
    assert_eq!(
        (shown.lock_time, shown.lock_expires_at),
        (Some(taken_at), Some(expires))
    );
}
