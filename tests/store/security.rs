//! Who may do what (issue 10): supervisor unlocks fenced on the lock the supervisor saw (a
//! lock renewed, or re-taken by its holder, between the listing and the unlock is left
//! alone), and the audit of roles, login bindings and queue settings on both backends.

use crate::support::MIN;
use crate::support::backend::{Backend, add, kinds, setup};
use caseload::domain::{Actor, AuditKind, Role, SeenLock};
use caseload::store::{ListFilter, Reads, StateFilter, Writes, exit};

conformance!(
    unlock_leaves_alone_a_lock_renewed_after_it_was_listed,
    unlock_leaves_alone_an_expired_lock_its_holder_took_back,
    role_and_queue_changes_are_audited,
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

/// Role and queue changes write their audit record (who, the real identity, old → new)
/// in the same transaction, on both backends; a refused change writes none.
fn role_and_queue_changes_are_audited(b: &dyn Backend) {
    let mut boss = setup(b); // set_queue("default", lock 60 s, warn 10 s), creating it
    boss.set_role("alice", Role::Supervisor).unwrap();
    boss.set_login("importer", Some("svc")).unwrap();
    let mut bob = b.open("bob", 0);
    assert!(bob.set_role("bob", Role::Supervisor).is_err());
    let all = boss.audit(None, 0).unwrap();
    let kinds: Vec<_> = all.iter().map(|a| (a.kind, a.subject.as_str())).collect();
    assert_eq!(
        kinds,
        [
            (AuditKind::Queue, "default"),
            (AuditKind::Role, "alice"),
            (AuditKind::Login, "importer")
        ]
    );
    assert!(
        all.iter()
            .all(|a| a.actor == "boss" && a.real == boss.real().login)
    );
    assert_eq!(all[0].old, serde_json::Value::Null, "the queue was created");
    assert_eq!(all[0].new["lock_seconds"], 60);
    assert_eq!(
        (all[1].old.as_str(), all[1].new.as_str()),
        (Some("staff"), Some("supervisor"))
    );
    assert_eq!(
        (all[2].old.as_str(), all[2].new.as_str()),
        (None, Some("svc"))
    );
    // A queue's settings, its rename and deletion read the same on both backends (on
    // PostgreSQL the server writes them, from the rows it reads and writes).
    let settings = serde_json::json!({
        "lock_seconds": 60, "warn_seconds": 10, "max_per_user": null, "paused": false,
        "order": "priority", "park_grace_seconds": 3600, "undo_seconds": 30,
        "review_percent": 0, "review_new": 0
    });
    assert_eq!(all[0].new, settings);
    boss.rename_queue("default", "main").unwrap();
    boss.set_queue("spare", &caseload::domain::QueueUpdate::default(), true)
        .unwrap();
    boss.delete_queue("spare").unwrap();
    let later: Vec<_> = boss
        .audit(None, 0)
        .unwrap()
        .into_iter()
        .skip(3)
        .map(|a| (a.subject, a.old, a.new))
        .collect();
    let spare = serde_json::json!({
        "lock_seconds": 1800, "warn_seconds": 120, "max_per_user": null, "paused": false,
        "order": "priority", "park_grace_seconds": 3600, "undo_seconds": 30,
        "review_percent": 0, "review_new": 0
    });
    assert_eq!(
        later,
        [
            (
                "main".to_string(),
                serde_json::json!({"renamed_from": "default"}),
                settings.clone()
            ),
            (
                "default".to_string(),
                settings,
                serde_json::json!({"renamed_to": "main"})
            ),
            ("spare".to_string(), serde_json::Value::Null, spare.clone()),
            (
                "spare".to_string(),
                spare,
                serde_json::json!({"deleted": true})
            ),
        ]
    );
    // By or about a user.
    assert_eq!(boss.audit(Some("alice"), 0).unwrap().len(), 1);
    assert_eq!(boss.audit(Some("bob"), 0).unwrap().len(), 0);
    assert_eq!(boss.audit(Some("boss"), 0).unwrap().len(), 7);
}

#[test]
fn migrate_to_copies_the_audit() {
    let Some(pg) = crate::support::backend::PgBackend::from_env() else {
        return;
    };
    let lite = crate::support::backend::SqliteBackend::new();
    let mut boss = setup(&lite);
    boss.set_role("alice", Role::Supervisor).unwrap();
    drop(boss);
    let src = caseload::store::SqliteStore::open(
        &lite.path,
        Actor::new("boss", "tester"),
        &caseload::store::sqlite::OpenOptions::default(),
    )
    .unwrap();
    let mut dst = caseload::store::postgres::PgStore::open(
        &pg.url,
        Actor::new("boss", "tester"),
        &caseload::store::postgres::PgOptions::default(),
    )
    .unwrap();
    caseload::store::copy::sqlite_to_postgres(src.connection(), &mut dst).unwrap();
    let copied = dst.audit(None, 0).unwrap();
    assert_eq!(copied.len(), 2);
    assert_eq!(copied[1].subject, "alice");
    // Later records continue after the copied ids.
    dst.set_role("bob", Role::Supervisor).unwrap();
    assert_eq!(dst.audit(None, 0).unwrap().len(), 3);
}
