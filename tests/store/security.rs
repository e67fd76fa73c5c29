//! Supervisor unlocks fenced on the lock the supervisor saw (issue 10, part 3): a lock
//! renewed, or re-taken by its holder, between the listing and the unlock is left alone.

use crate::support::MIN;
use crate::support::backend::{Backend, add, kinds, setup};
use caseload::domain::SeenLock;
use caseload::store::{ListFilter, StateFilter, exit};

conformance!(
    unlock_leaves_alone_a_lock_renewed_after_it_was_listed,
    unlock_leaves_alone_an_expired_lock_its_holder_took_back,
);

/// The expired locks as a supervisor's `unlock --expired` (or the TUI's `U`) lists them.
fn expired_seen(s: &mut dyn caseload::store::Store) -> Vec<SeenLock> {
    let filter = ListFilter {
        state: StateFilter::Expired,
        limit: 100,
        ..ListFilter::default()
    };
    s.list(&filter)
        .unwrap()
        .iter()
        .filter_map(SeenLock::of)
        .collect()
}

fn unlock_leaves_alone_a_lock_renewed_after_it_was_listed(b: &dyn Backend) {
    let mut boss = setup(b);
    let (x, y) = (add(&mut *boss, "x"), add(&mut *boss, "y"));
    // alice took both two minutes ago (the queue's lock lasts 60 s): both expired.
    let mut alice_then = b.open("alice", -2 * MIN);
    let tx = alice_then.take(x).unwrap().lock_token;
    alice_then.take(y).unwrap();
    let seen = expired_seen(&mut *boss);
    assert_eq!(seen.iter().map(|s| s.id).collect::<Vec<_>>(), [x, y]);
    // Between the listing and the unlock, alice comes back and renews x (same token).
    let mut alice = b.open("alice", 0);
    let renewed = alice.renew(x, tx).unwrap();
    assert_eq!(renewed.lock_token, tx, "a renewal keeps the token");
    assert_eq!(boss.unlock_many(&seen, "expired").unwrap(), 1, "only y");
    assert_eq!(boss.item(x).unwrap().lock_user.as_deref(), Some("alice"));
    assert_eq!(boss.item(y).unwrap().lock_user, None);
    assert_eq!(kinds(&mut *boss, x), ["created", "locked", "renewed"]);
    // The single unlock of what was seen is refused the same way (exit 3).
    let e = boss.unlock(x, Some(seen[0]), "expired").unwrap_err();
    assert_eq!(e.exit_code(), exit::CONFLICT, "{e}");
    // alice's work goes through.
    alice.complete(x, tx, Some("done in time")).unwrap();
}

fn unlock_leaves_alone_an_expired_lock_its_holder_took_back(b: &dyn Backend) {
    let mut boss = setup(b);
    let x = add(&mut *boss, "x");
    let t = b.open("alice", -2 * MIN).take(x).unwrap().lock_token;
    let seen = expired_seen(&mut *boss);
    // alice re-takes her own expired lock (resume): same token, a new lock time.
    let again = b.open("alice", 0).take(x).unwrap();
    assert_eq!(again.lock_token, t);
    assert_eq!(boss.unlock_many(&seen, "expired").unwrap(), 0);
    assert_eq!(boss.item(x).unwrap().lock_user.as_deref(), Some("alice"));
}
