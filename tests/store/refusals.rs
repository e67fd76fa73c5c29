//! One answer per refusal, on both backends: every way a take, a holder's write or a
//! supervisor's write can be refused, each case on a fresh database, with the exact error
//! and exit code it must give (the decision table of src/store/ops/take.rs). Runs against
//! SQLite always and PostgreSQL when `CASELOAD_TEST_PG` is set.
//!
//! "boss" opens each database first and is its supervisor; "alice" and "bob" are staff.
//! The default queue has a 60 s lock; "+61s" stores see every lock taken at 0 expired.

use crate::support::backend::Adds;
use crate::support::backend::{Backend, BoxStore, add, setup};
use caseload::domain::fields::{Col, FieldError, Input, Value};
use caseload::domain::{ItemEdit, NewItem, NoLock, QueueUpdate, Role, SeenLock};
use caseload::store::{Applied, ListFilter, StateFilter, Store, StoreError, TakeNext};

conformance!(
    every_refusal_gives_its_one_answer,
    a_refused_value_names_its_field,
    unreadable_words_are_never_guessed
);

/// A case's outcome, as compared: "ok: …" or "exit N: Variant details".
fn outcome<T>(r: Result<T, StoreError>, ok: impl FnOnce(T) -> String) -> String {
    match r {
        Ok(v) => format!("ok: {}", ok(v)),
        Err(e) => format!("exit {}: {}", e.exit_code(), kind(&e)),
    }
}

fn kind(e: &StoreError) -> String {
    match e {
        StoreError::NotFound(id) => format!("NotFound #{id}"),
        StoreError::NotOpen { state, by, .. } => {
            format!(
                "NotOpen {} by {}",
                state.as_str(),
                by.as_deref().unwrap_or("-")
            )
        }
        StoreError::HeldByOther { holder, .. } => format!("HeldByOther {holder}"),
        StoreError::Paused { queues } => format!("Paused {}", queues.join(",")),
        StoreError::WipLimit { queue, held } => format!("WipLimit {queue} {held}"),
        StoreError::NothingToClaim(m) => format!("NothingToClaim {m}"),
        StoreError::UnknownQueue { name, .. } => format!("UnknownQueue {name}"),
        StoreError::LockLost { why, .. } => match why {
            NoLock::Lost(l) => format!("LockLost {} by {}", l.how.as_str(), l.by),
            NoLock::OtherToken { given, current } => format!("LockLost token {given}/{current}"),
            NoLock::HeldBy(h) => format!("LockLost held by {h}"),
            NoLock::NotHeld => "LockLost not held".into(),
            NoLock::Reopened { by, .. } => format!("LockLost reopened by {by}"),
        },
        StoreError::LockChanged { holder, .. } => {
            format!("LockChanged {}", holder.as_deref().unwrap_or("-"))
        }
        StoreError::SupervisorOnly(_) => "SupervisorOnly".into(),
        StoreError::Invalid(m) => format!("Invalid {m}"),
        other => format!("{other:?}"),
    }
}

fn took(s: &mut dyn Store) -> impl FnOnce(caseload::domain::Item) -> String + '_ {
    move |item| {
        let last = s.history(item.id).unwrap().pop().unwrap();
        format!(
            "{} holds #{} token {} ({})",
            item.lock_user.as_deref().unwrap_or("-"),
            item.id,
            item.lock_token,
            last.kind.as_str()
        )
    }
}

fn applied(a: Applied) -> String {
    format!("{a:?}")
}

fn queue(boss: &mut dyn Store, name: &str, update: QueueUpdate) {
    boss.set_queue(name, &update, true).unwrap();
}

fn paused() -> QueueUpdate {
    QueueUpdate {
        paused: Some(true),
        ..Default::default()
    }
}

fn limit(n: i64) -> QueueUpdate {
    QueueUpdate {
        max_per_user: Some(Some(n)),
        ..Default::default()
    }
}

fn next_in(q: &str) -> TakeNext {
    TakeNext {
        queue: Some(q.into()),
        skip: vec![],
    }
}

/// One case: builds its scenario on a fresh database and gives the outcome.
type Case = fn(&dyn Backend, &mut BoxStore) -> String;

/// Every refusal path, and its one answer.
const TABLE: &[(&str, Case, &str)] = &[
    // ----- take(id) -------------------------------------------------------------------
    (
        "take: no such item",
        |b, _| outcome(b.open("alice", 0).take(424_242), |_| "?".into()),
        "exit 1: NotFound #424242",
    ),
    (
        "take: finished",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            alice.complete(id, t, None).unwrap();
            outcome(b.open("bob", 0).take(id), |_| "?".into())
        },
        "exit 3: NotOpen done by alice",
    ),
    (
        "take: own lock is renewed",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            alice.take(id).unwrap();
            let r = alice.take(id);
            outcome(r, took(&mut *alice))
        },
        "ok: alice holds #1 token 1 (renewed)",
    ),
    (
        "take: held by another",
        |b, boss| {
            let id = add(&mut **boss, "x");
            b.open("bob", 0).take(id).unwrap();
            outcome(b.open("alice", 0).take(id), |_| "?".into())
        },
        "exit 3: HeldByOther bob",
    ),
    (
        "take: held by another in a paused queue",
        |b, boss| {
            let id = add(&mut **boss, "x");
            b.open("bob", 0).take(id).unwrap();
            queue(&mut **boss, "default", paused());
            outcome(b.open("alice", 0).take(id), |_| "?".into())
        },
        "exit 3: HeldByOther bob",
    ),
    (
        "take: expired lock in a paused queue",
        |b, boss| {
            let id = add(&mut **boss, "x");
            b.open("bob", 0).take(id).unwrap();
            queue(&mut **boss, "default", paused());
            outcome(b.open("alice", 61_000).take(id), |_| "?".into())
        },
        "exit 4: Paused default",
    ),
    (
        "take: expired lock, the taker's limit reached",
        |b, boss| {
            queue(&mut **boss, "default", limit(1));
            let mine = add(&mut **boss, "mine");
            let id = add(&mut **boss, "x");
            b.open("bob", 0).take(id).unwrap();
            let mut alice = b.open("alice", 61_000);
            alice.take(mine).unwrap();
            outcome(alice.take(id), |_| "?".into())
        },
        "exit 4: WipLimit default 1",
    ),
    (
        "take: free item in a paused queue",
        |b, boss| {
            let id = add(&mut **boss, "x");
            queue(&mut **boss, "default", paused());
            outcome(b.open("alice", 0).take(id), |_| "?".into())
        },
        "exit 4: Paused default",
    ),
    (
        "take: free item, the taker's limit reached",
        |b, boss| {
            queue(&mut **boss, "default", limit(1));
            let mine = add(&mut **boss, "mine");
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            alice.take(mine).unwrap();
            outcome(alice.take(id), |_| "?".into())
        },
        "exit 4: WipLimit default 1",
    ),
    (
        "take: an expired lock is taken over",
        |b, boss| {
            let id = add(&mut **boss, "x");
            b.open("bob", 0).take(id).unwrap();
            let mut alice = b.open("alice", 61_000);
            let r = alice.take(id);
            outcome(r, took(&mut *alice))
        },
        "ok: alice holds #1 token 2 (taken_over)",
    ),
    // ----- take_next --------------------------------------------------------------------
    (
        "next: unknown queue",
        |b, _| {
            outcome(b.open("alice", 0).take_next(&next_in("nosuch")), |_| {
                "?".into()
            })
        },
        "exit 1: UnknownQueue nosuch",
    ),
    (
        "next: a named paused queue",
        |b, boss| {
            queue(&mut **boss, "default", paused());
            outcome(b.open("alice", 0).take_next(&next_in("default")), |_| {
                "?".into()
            })
        },
        "exit 4: Paused default",
    ),
    (
        "next: a named queue, the taker's limit reached",
        |b, boss| {
            queue(&mut **boss, "default", limit(1));
            add(&mut **boss, "mine");
            add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            alice.take_next(&next_in("default")).unwrap();
            outcome(alice.take_next(&next_in("default")), |_| "?".into())
        },
        "exit 4: WipLimit default 1",
    ),
    (
        "next: a named queue with nothing free",
        |b, boss| {
            let id = add(&mut **boss, "x");
            b.open("bob", 0).take(id).unwrap();
            outcome(b.open("alice", 0).take_next(&next_in("default")), |_| {
                "?".into()
            })
        },
        "exit 4: NothingToClaim no free items in queue 'default'",
    ),
    (
        "next: all queues, the only one paused",
        |b, boss| {
            add(&mut **boss, "x");
            queue(&mut **boss, "default", paused());
            outcome(b.open("alice", 0).take_next(&TakeNext::default()), |_| {
                "?".into()
            })
        },
        "exit 4: Paused default",
    ),
    (
        "next: all queues, the limit reached where the work is",
        |b, boss| {
            queue(&mut **boss, "default", limit(1));
            add(&mut **boss, "mine");
            add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            alice.take_next(&TakeNext::default()).unwrap();
            outcome(alice.take_next(&TakeNext::default()), |_| "?".into())
        },
        "exit 4: WipLimit default 1",
    ),
    (
        "next: all queues, work only in a paused one",
        |b, boss| {
            add(&mut **boss, "x");
            boss.add(&NewItem {
                queue: "p".into(),
                ..NewItem::titled("in p")
            })
            .unwrap();
            let t = b.open("bob", 0).take(1).unwrap().lock_token;
            assert_eq!(t, 1);
            queue(&mut **boss, "p", paused());
            outcome(b.open("alice", 0).take_next(&TakeNext::default()), |_| {
                "?".into()
            })
        },
        "exit 4: Paused p",
    ),
    (
        "next: all queues, a paused one with nothing free",
        |b, boss| {
            let id = add(&mut **boss, "x");
            b.open("bob", 0).take(id).unwrap();
            queue(&mut **boss, "default", paused());
            outcome(b.open("alice", 0).take_next(&TakeNext::default()), |_| {
                "?".into()
            })
        },
        "exit 4: NothingToClaim no free items in any open queue",
    ),
    (
        "next: all queues, everything held",
        |b, boss| {
            let id = add(&mut **boss, "x");
            b.open("bob", 0).take(id).unwrap();
            outcome(b.open("alice", 0).take_next(&TakeNext::default()), |_| {
                "?".into()
            })
        },
        "exit 4: NothingToClaim no free items in any open queue",
    ),
    (
        "next: all queues, only skipped items left",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let skip = TakeNext {
                queue: None,
                skip: vec![id],
            };
            outcome(b.open("alice", 0).take_next(&skip), |_| "?".into())
        },
        "exit 4: NothingToClaim no free items in any open queue",
    ),
    // ----- a holder's writes --------------------------------------------------------------
    (
        "complete: taken over meanwhile",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            b.open("bob", 61_000).take(id).unwrap();
            outcome(alice.complete(id, t, None), applied)
        },
        "exit 3: LockLost taken_over by bob",
    ),
    (
        "complete: unlocked by a supervisor",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let taken = alice.take(id).unwrap();
            let t = taken.lock_token;
            boss.unlock(id, SeenLock::of(&taken), "reset").unwrap();
            outcome(alice.complete(id, t, None), applied)
        },
        "exit 3: LockLost unlocked by boss",
    ),
    (
        "complete: after releasing it",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            alice.release(id, t).unwrap();
            outcome(alice.complete(id, t, None), applied)
        },
        "exit 3: LockLost released by alice",
    ),
    (
        "complete: another token of one's own lock",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            alice.take(id).unwrap();
            outcome(alice.complete(id, 7, None), applied)
        },
        "exit 3: LockLost token 7/1",
    ),
    (
        "complete: finished by another",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            let mut bob = b.open("bob", 61_000);
            let t2 = bob.take(id).unwrap().lock_token;
            bob.complete(id, t2, None).unwrap();
            outcome(alice.complete(id, t, None), applied)
        },
        "exit 3: NotOpen done by bob",
    ),
    (
        "complete: the same complete again",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            alice.complete(id, t, Some("fixed")).unwrap();
            outcome(alice.complete(id, t, Some("fixed")), applied)
        },
        "ok: Already",
    ),
    (
        "complete: again with another result",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            alice.complete(id, t, Some("fixed")).unwrap();
            outcome(alice.complete(id, t, Some("other")), applied)
        },
        "exit 3: NotOpen done by alice",
    ),
    (
        "complete: the same complete by another user",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            alice.complete(id, t, None).unwrap();
            outcome(b.open("bob", 0).complete(id, t, None), applied)
        },
        "exit 3: NotOpen done by alice",
    ),
    // A retry of a complete is recognised only while that completion is the item's last
    // word: after a supervisor's reopen it is refused, naming what is true now.
    (
        "complete: retried after a reopen, item free",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            alice.complete(id, t, None).unwrap();
            boss.reopen(id, "customer wrote back").unwrap();
            outcome(alice.complete(id, t, None), applied)
        },
        "exit 3: LockLost reopened by boss",
    ),
    (
        "complete: retried after a reopen, item re-taken by the completer",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            alice.complete(id, t, None).unwrap();
            boss.reopen(id, "customer wrote back").unwrap();
            alice.take(id).unwrap();
            outcome(alice.complete(id, t, None), applied)
        },
        "exit 3: LockLost token 1/2",
    ),
    (
        "complete: retried after a reopen, item taken by another",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            alice.complete(id, t, None).unwrap();
            boss.reopen(id, "customer wrote back").unwrap();
            b.open("bob", 0).take(id).unwrap();
            outcome(alice.complete(id, t, None), applied)
        },
        "exit 3: LockLost locked by bob",
    ),
    (
        "complete: retried after a reopen and another's complete",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            alice.complete(id, t, None).unwrap();
            boss.reopen(id, "customer wrote back").unwrap();
            let mut bob = b.open("bob", 0);
            let t2 = bob.take(id).unwrap().lock_token;
            bob.complete(id, t2, None).unwrap();
            outcome(alice.complete(id, t, None), applied)
        },
        "exit 3: NotOpen done by bob",
    ),
    (
        "complete: retried after a reopen and one's own new complete",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            alice.complete(id, t, None).unwrap();
            boss.reopen(id, "customer wrote back").unwrap();
            let t2 = alice.take(id).unwrap().lock_token;
            alice.complete(id, t2, None).unwrap();
            outcome(alice.complete(id, t, None), applied)
        },
        "exit 3: NotOpen done by alice",
    ),
    (
        "fail: retried after a requeue",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            alice.fail(id, t, "no answer").unwrap();
            boss.requeue(id).unwrap();
            outcome(alice.fail(id, t, "no answer"), applied)
        },
        "exit 3: LockLost reopened by boss",
    ),
    (
        "fail: the same fail again",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            alice.fail(id, t, "no answer").unwrap();
            outcome(alice.fail(id, t, "no answer"), applied)
        },
        "ok: Already",
    ),
    (
        "fail: after completing",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            alice.complete(id, t, None).unwrap();
            outcome(alice.fail(id, t, "no answer"), applied)
        },
        "exit 3: NotOpen done by alice",
    ),
    (
        "release: the same release again",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            alice.release(id, t).unwrap();
            b.open("bob", 0).take(id).unwrap();
            outcome(alice.release(id, t), applied)
        },
        "ok: Already",
    ),
    (
        "renew: taken over meanwhile",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            b.open("bob", 61_000).take(id).unwrap();
            outcome(alice.renew(id, t), |_| "?".into())
        },
        "exit 3: LockLost taken_over by bob",
    ),
    // ----- supervisors ------------------------------------------------------------------
    (
        "unlock: by staff",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let seen = SeenLock::of(&b.open("bob", 0).take(id).unwrap());
            outcome(b.open("alice", 0).unlock(id, seen, "mine"), |()| "?".into())
        },
        "exit 5: SupervisorOnly",
    ),
    (
        "unlock: nothing locked",
        |_, boss| {
            let id = add(&mut **boss, "x");
            outcome(boss.unlock(id, None, "why"), |()| "?".into())
        },
        "exit 1: Invalid #1 is not locked",
    ),
    (
        "unlock: the lock changed since the supervisor looked",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let seen = SeenLock::of(&b.open("alice", 0).take(id).unwrap());
            b.open("bob", 61_000).take(id).unwrap();
            outcome(boss.unlock(id, seen, "stale"), |()| "?".into())
        },
        "exit 3: LockChanged bob",
    ),
    (
        "unlock: released since the supervisor looked",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let seen = SeenLock::of(&alice.take(id).unwrap()).unwrap();
            alice.release(id, seen.token).unwrap();
            outcome(boss.unlock(id, Some(seen), "stale"), |()| "?".into())
        },
        "exit 3: LockChanged -",
    ),
    (
        "reassign: the lock changed since the supervisor looked",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let seen = b.open("alice", 0).take(id).unwrap().lock_token;
            b.open("bob", 61_000).take(id).unwrap();
            boss.set_role("carol", Role::Staff).unwrap();
            outcome(boss.reassign(id, Some(seen), "carol", "stale"), |_| {
                "?".into()
            })
        },
        "exit 3: LockChanged bob",
    ),
    (
        "reassign: as seen",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let seen = b.open("alice", 0).take(id).unwrap().lock_token;
            boss.set_role("carol", Role::Staff).unwrap();
            let r = boss.reassign(id, Some(seen), "carol", "carol knows");
            outcome(r, took(&mut **boss))
        },
        "ok: carol holds #1 token 2 (reassigned)",
    ),
    (
        "reassign: finished",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            alice.complete(id, t, None).unwrap();
            boss.set_role("carol", Role::Staff).unwrap();
            outcome(boss.reassign(id, None, "carol", "late"), |_| "?".into())
        },
        "exit 3: NotOpen done by alice",
    ),
    (
        "cancel: finished",
        |b, boss| {
            let id = add(&mut **boss, "x");
            let mut alice = b.open("alice", 0);
            let t = alice.take(id).unwrap().lock_token;
            alice.fail(id, t, "broken").unwrap();
            outcome(boss.cancel(id, "late"), |()| "?".into())
        },
        "exit 3: NotOpen failed by alice",
    ),
    (
        "requeue: an open item",
        |_, boss| {
            let id = add(&mut **boss, "x");
            outcome(boss.requeue(id), |()| "?".into())
        },
        "exit 1: Invalid #1 is open; only failed or cancelled items can be requeued",
    ),
];

fn every_refusal_gives_its_one_answer(b: &dyn Backend) {
    // Each case on its own database; the cases run side by side.
    let got: Vec<(String, String)> = std::thread::scope(|s| {
        let runs: Vec<_> = TABLE
            .iter()
            .map(|&(name, case, _)| {
                let db = b.fresh();
                s.spawn(move || {
                    let mut boss = setup(&*db);
                    (name.to_string(), case(&*db, &mut boss))
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().expect("case")).collect()
    });
    let mut wrong = Vec::new();
    for ((name, got), (_, _, want)) in got.iter().zip(TABLE) {
        if got != want {
            wrong.push(format!("{name}:\n    want {want}\n    got  {got}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases on {} gave another answer:\n{}",
        wrong.len(),
        TABLE.len(),
        b.name(),
        wrong.join("\n")
    );
}

/// A value that breaks a rule is refused typed, `{field, problem}` (issue 24): the field
/// is the item's column or the write's other input, the problem names neither flag nor
/// label (the command line and the TUI each add theirs), exit 1, and nothing is written.
fn a_refused_value_names_its_field(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "x");
    let before = (boss.item(id).unwrap(), boss.history(id).unwrap().len());
    let refused = |r: Result<String, StoreError>| match r {
        Err(StoreError::Field(f)) => {
            assert_eq!(StoreError::Field(f.clone()).exit_code(), 1);
            f
        }
        other => panic!("not a field's refusal: {other:?}"),
    };
    let long = "q".repeat(101);
    let too_long = FieldError::col(Col::Queue, "name is longer than 100 characters");

    let edit = ItemEdit::default().with(Col::Queue, Value::Text(Some(long.clone())));
    let e = refused(boss.edit(id, &edit).map(|i| i.queue));
    assert_eq!(e, too_long);
    assert_eq!(
        e.to_string(),
        "--queue: name is longer than 100 characters",
        "Display is the command line's wording"
    );
    assert_eq!(e.with_label(), "Queue: name is longer than 100 characters");

    let item = NewItem {
        queue: long,
        ..NewItem::titled("y")
    };
    assert_eq!(refused(boss.add(&item).map(|a| a.id.to_string())), too_long);
    let untitled = NewItem::titled(" ");
    let e = refused(boss.add(&untitled).map(|a| a.id.to_string()));
    assert_eq!(e, FieldError::col(Col::Title, "title is empty"));

    let e = refused(
        boss.reassign(id, None, "not a name", "why")
            .map(|i| i.queue),
    );
    assert_eq!(e.field, Input::To);
    assert_eq!(
        e.with_label(),
        "To user: name contains spaces or control characters"
    );

    let e = refused(boss.set_login("carol", Some("")).map(|()| String::new()));
    assert_eq!(e, FieldError::new(Input::Login, "name is empty"));

    let mut alice = b.open("alice", 0);
    let token = alice.take(id).unwrap().lock_token;
    let now = alice.now().unwrap();
    let e = refused(
        alice
            .park(id, token, now + 3_600_000, "  ")
            .map(|a| format!("{a:?}")),
    );
    assert_eq!(e.field, Input::Reason);
    assert_eq!(e.to_string(), format!("--reason: {}", e.problem));
    let e = refused(
        alice
            .park(id, token, now - 60_000, "call back")
            .map(|a| format!("{a:?}")),
    );
    assert_eq!(e.field, Input::Until);
    assert!(
        e.problem.ends_with("has passed; park until a later time"),
        "{e}"
    );

    // Nothing of any of it was written: the item is alice's take, no more.
    let mut after = boss.item(id).unwrap();
    assert_eq!(
        boss.history(id).unwrap().len(),
        before.1 + 1,
        "only the take"
    );
    assert_eq!(after.lock_user.take().as_deref(), Some("alice"));
    assert_eq!((after.queue, after.title), (before.0.queue, before.0.title));
    let all = ListFilter {
        state: StateFilter::All,
        limit: 100,
        ..Default::default()
    };
    assert_eq!(boss.list(&all).unwrap().len(), 1, "nothing added");
}

/// A row caseload cannot read is never read as a plausible value: an unknown state is
/// named and no rule acts on the item; an unknown event kind is an error naming the event;
/// `check` reports both.
fn unreadable_words_are_never_guessed(b: &dyn Backend) {
    let mut boss = setup(b);
    let odd = add(&mut *boss, "odd state");
    let noted = add(&mut *boss, "odd event");
    let fine = add(&mut *boss, "fine");
    // An item has no stored event until something happens to it.
    boss.comment(noted, "a note").unwrap();
    b.spoil(&format!(
        "UPDATE items SET state = 'exploded' WHERE id = {odd}; \
         UPDATE events SET kind = 'vanished' WHERE item_id = {noted}"
    ));
    let mut alice = b.open("alice", 0);
    let item = alice.item(odd).unwrap();
    assert_eq!(
        item.unreadable_summary().as_deref(),
        Some("state is not a known state"),
        "the state is named, not read as open"
    );
    for r in [
        alice.take(odd).map(|_| ()),
        boss.cancel(odd, "odd").map(|_| ()),
        boss.requeue(odd),
    ] {
        match r {
            Err(StoreError::Corrupt(m)) => {
                assert!(
                    m.contains(&format!("item #{odd}")) && m.contains("column state"),
                    "{m}"
                )
            }
            other => panic!("an item in an unknown state must be refused: {other:?}"),
        }
    }
    match alice.history(noted) {
        Err(StoreError::Corrupt(m)) => assert!(
            m.contains(&format!("of item #{noted}")) && m.contains("column kind"),
            "{m}"
        ),
        other => panic!("an unknown event kind must not be read as another: {other:?}"),
    }
    assert_eq!(alice.take_next(&TakeNext::default()).unwrap().id, noted);
    assert_eq!(alice.take_next(&TakeNext::default()).unwrap().id, fine);
    let found = boss.check().unwrap().join("\n");
    assert!(
        found.contains(&format!("item #{odd} has an unknown state")),
        "{found}"
    );
    assert!(
        found.contains("has an unknown kind (column kind)"),
        "{found}"
    );
}
