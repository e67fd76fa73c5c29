//! `check` tells when a history was changed by hand: on SQLite anyone who may write the
//! file can delete audit rows or add a comment under another name with another client.
//! Each change is a finding, never an error of `check` itself.

use caseload::domain::Role;
use caseload::store::Store;

use crate::support::backend::{Backend, SqliteBackend, setup};

conformance!(a_comment_or_event_added_by_hand_is_named);

/// An item with a comment, taken and completed by alice; returns its id.
fn worked_item(b: &dyn Backend, boss: &mut dyn Store) -> i64 {
    let id = crate::support::backend::add(boss, "worked");
    boss.comment(id, "a note").unwrap();
    let mut alice = b.open("alice", 0);
    let t = alice.take(id).unwrap().lock_token;
    alice.complete(id, t, None).unwrap();
    id
}

fn a_comment_or_event_added_by_hand_is_named(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = worked_item(b, &mut *boss);
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
    // A comment written straight into the table, with no `noted` event beside it.
    b.spoil(&format!(
        "INSERT INTO comments (item_id, at, author, os_user, text) \
         SELECT {id}, created_at + 1, 'boss', 'boss', 'forged' FROM items WHERE id = {id}"
    ));
    let found = boss.check().unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("has no `noted` event naming it"),
        "{found:?}"
    );
    // An event dated long before its item (the comment's note: it ends no hold).
    b.spoil(&format!(
        "UPDATE events SET at = 1000 WHERE item_id = {id} AND kind = 'noted'"
    ));
    let found = boss.check().unwrap();
    assert!(
        found
            .iter()
            .any(|f| f.contains(&format!("is dated before its item #{id} was created"))),
        "{found:?}"
    );
}

/// Deleted rows show as gaps in the ids; a history cut at its end as holds naming events
/// beyond the last; comments under a name nobody used as strangers.
#[test]
fn rows_deleted_with_another_client_are_named_by_their_ids() {
    let b = SqliteBackend::new();
    let mut boss = setup(&b);
    let ids: Vec<i64> = (0..4).map(|_| worked_item(&b, &mut *boss)).collect();
    boss.set_role("carol", Role::Supervisor).unwrap();
    boss.set_role("carol", Role::Staff).unwrap();
    boss.set_role("dave", Role::Supervisor).unwrap();
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());

    // The second item's events (a run in the middle of the ids) and two audit rows.
    b.spoil(&format!("DELETE FROM events WHERE item_id = {}", ids[1]));
    b.spoil("DELETE FROM audit WHERE id IN (1, 2)");
    let found = boss.check().unwrap();
    let has = |s: &str| found.iter().any(|f| f.contains(s));
    assert!(has("history: events rows "), "{found:?}");
    assert!(has("history: audit rows 1–2 are missing"), "{found:?}");
    assert!(!has("could not finish"), "{found:?}");

    // The last item's completion: the holds name an event past the last one.
    b.spoil(&format!(
        "DELETE FROM events WHERE id = (SELECT max(id) FROM events WHERE item_id = {})",
        ids[3]
    ));
    let found = boss.check().unwrap();
    assert!(
        found
            .iter()
            .any(|f| f.contains("the history's last events were deleted")),
        "{found:?}"
    );

    // A comment under a name that never held a role (with its note forged too).
    b.spoil(&format!(
        "INSERT INTO comments (item_id, at, author, os_user, text) \
         SELECT {id}, created_at + 1, 'the ceo', 'mallory', 'approved' FROM items \
         WHERE id = {id}; \
         INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
         SELECT {id}, created_at + 1, 'the ceo', 'mallory', 'noted', \
         json_object('comment_id', (SELECT max(id) FROM comments)) FROM items WHERE id = {id}",
        id = ids[0]
    ));
    let found = boss.check().unwrap();
    assert!(
        found
            .iter()
            .any(|f| f.contains("by 'the ceo', a name that never held a role")),
        "{found:?}"
    );
    // carol and boss hold roles, alice worked: none of them is named.
    assert!(!found.iter().any(|f| f.contains("'alice'")), "{found:?}");
}
