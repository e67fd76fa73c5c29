//! Assignments that stick, reopening and editing, comment threads and notes history
//! (issue 15 parts 1–3), on both backends. "boss" opens first and is the supervisor;
//! "alice", "bob" and "carol" are staff. Time passes by opening stores whose clock is
//! skewed ahead, never by sleeping.

use crate::support::MIN;
use crate::support::backend::Adds;
use crate::support::backend::{Backend, add, assert_code, kinds, setup};
use caseload::domain::fields::{Col, Value};
use caseload::domain::lock::ASSIGNED;
use caseload::domain::{EventKind, ItemEdit, ItemState, NewItem, Role};
use caseload::store::{ListFilter, Reads, StateFilter, Store, StoreError, TakeNext, Writes, exit};

conformance!(
    an_assignment_waits_for_its_assignee_without_a_clock,
    the_assignees_first_take_starts_the_clock,
    assigning_a_held_item_fences_out_its_holder,
    unlock_undoes_an_assignment,
    assign_and_reassign_refuse_unknown_users,
    staff_may_not_assign_reopen_or_edit,
    reopen_a_done_item_with_a_reason,
    edit_priority_due_and_queue,
    comments_are_a_thread_of_their_own,
    every_notes_save_keeps_the_text_it_replaces,
    users_are_listed_with_role_and_last_seen,
);

/// Makes `name` a known user (a row in `users`).
fn known(boss: &mut dyn Store, name: &str) {
    boss.set_role(name, Role::Staff).expect("register user");
}

fn locked_by(s: &mut dyn Store, user: &str) -> Vec<i64> {
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

fn an_assignment_waits_for_its_assignee_without_a_clock(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "call the customer back");
    known(&mut *boss, "bob");
    let item = boss.assign(id, None, "bob", "bob knows them").unwrap();
    assert_eq!(item.lock_user.as_deref(), Some("bob"));
    assert_eq!(item.lock_time, Some(ASSIGNED));
    assert_eq!(item.lock_token, 1);
    let last = boss.history(id).unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Reassigned, "the lock changed hands");
    assert_eq!(last.detail["assigned"], true);
    assert_eq!(last.actor, "boss");
    assert_eq!(last.detail_str("to"), Some("bob"));
    assert_eq!(last.detail_str("reason"), Some("bob knows them"));

    // Days later it is still bob's: nobody else may take it, reap leaves it alone.
    let mut alice = b.open("alice", 3 * 24 * 60 * MIN);
    let e = assert_code(alice.take(id), exit::CONFLICT);
    assert!(
        e.to_string().contains("assigned to bob"),
        "the refusal says it is assigned: {e}"
    );
    assert_code(
        alice.take_next(&TakeNext::default()).map(|i| i.id),
        exit::NOTHING,
    );
    assert_eq!(alice.reap().unwrap(), 0);
    assert_eq!(locked_by(&mut *alice, "bob"), [id], "in bob's Mine");
    let expired = alice
        .count(&ListFilter {
            state: StateFilter::Expired,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(expired, 0, "an assignment never shows as expired");
    assert_eq!(alice.stats().unwrap().expired, 0);
}

fn the_assignees_first_take_starts_the_clock(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "assigned");
    known(&mut *boss, "bob");
    let token = boss.assign(id, None, "bob", "yours").unwrap().lock_token;
    let mut bob = b.open("bob", 24 * 60 * MIN);
    let now = bob.now().unwrap();
    let item = bob.take(id).unwrap();
    assert_eq!(
        item.lock_token, token,
        "opening keeps the assignment's token"
    );
    let t = item.lock_time.unwrap();
    assert!((now..now + MIN).contains(&t), "the clock starts now: {t}");
    // From then on it is an ordinary lock: it expires after the queue's lock age.
    let mut carol = b.open("carol", 24 * 60 * MIN + 61 * 1000);
    let taken = carol.take(id).unwrap();
    assert_eq!(taken.lock_user.as_deref(), Some("carol"));
    assert_eq!(
        kinds(&mut *carol, id),
        ["created", "reassigned", "renewed", "taken_over"]
    );
}

fn assigning_a_held_item_fences_out_its_holder(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "held");
    let mut alice = b.open("alice", 0);
    let t = alice.take(id).unwrap().lock_token;
    known(&mut *boss, "bob");
    let seen = boss.item(id).unwrap().lock_token;
    // Fenced on what the supervisor saw: a stale token is refused.
    assert_code(boss.assign(id, Some(seen + 7), "bob", "x"), exit::CONFLICT);
    let item = boss
        .assign(id, Some(seen), "bob", "alice is off sick")
        .unwrap();
    assert_eq!(item.lock_token, t + 1);
    let e = assert_code(alice.save_notes(id, t, "late"), exit::CONFLICT);
    assert!(
        e.to_string().contains("boss reassigned it to bob"),
        "alice is told who and to whom: {e}"
    );
    let lost = alice.lost_locks("alice", 0).unwrap();
    assert_eq!(lost.len(), 1);
    assert_eq!(lost[0].loss.how, EventKind::Reassigned);
    assert_eq!(lost[0].now_held_by.as_deref(), Some("bob"));
    // A finished item cannot be assigned.
    let done = add(&mut *boss, "done");
    let t = alice.take(done).unwrap().lock_token;
    alice.complete(done, t, None).unwrap();
    assert_code(boss.assign(done, None, "bob", "late"), exit::CONFLICT);
}

fn unlock_undoes_an_assignment(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "assigned by mistake");
    known(&mut *boss, "bob");
    boss.assign(id, None, "bob", "oops").unwrap();
    boss.unlock(id, None, "wrong person").unwrap();
    let item = boss.item(id).unwrap();
    assert_eq!(item.lock_user, None);
    assert_eq!(item.lock_time, None);
    let mut alice = b.open("alice", 0);
    assert_eq!(alice.take(id).unwrap().lock_user.as_deref(), Some("alice"));
    assert_eq!(
        kinds(&mut *alice, id),
        ["created", "reassigned", "unlocked", "locked"]
    );
}

fn assign_and_reassign_refuse_unknown_users(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "typo target");
    let mut alice = b.open("alice", 0);
    alice.touch_last_seen().unwrap(); // she opened the screen: a row in users
    let t = alice.take(id).unwrap().lock_token;
    let e = assert_code(boss.reassign(id, None, "alcie", "typo"), exit::ERROR);
    assert!(matches!(e, StoreError::UnknownUser { .. }), "{e:?}");
    assert!(e.to_string().contains("did you mean alice?"), "{e}");
    assert_code(boss.assign(id, None, "nobody-such", "x"), exit::ERROR);
    // Nothing changed: alice still holds it under her token.
    let item = boss.item(id).unwrap();
    assert_eq!(
        (item.lock_user.as_deref(), item.lock_token),
        (Some("alice"), t)
    );
    assert_eq!(kinds(&mut *boss, id), ["created", "locked"]);
    // Known: a row in users, or anyone the audit trail names (dave only ever used the
    // command line).
    let mut dave = b.open("dave", 0);
    let other = add(&mut *dave, "dave's own");
    let td = dave.take(other).unwrap().lock_token;
    dave.release(other, td).unwrap();
    boss.reassign(id, None, "dave", "dave knows").unwrap();
    known(&mut *boss, "carol");
    boss.assign(id, None, "carol", "carol now").unwrap();
}

fn staff_may_not_assign_reopen_or_edit(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "guarded");
    known(&mut *boss, "bob");
    let mut alice = b.open("alice", 0);
    assert_code(alice.assign(id, None, "bob", "me"), exit::SUPERVISOR_ONLY);
    let edit = ItemEdit::default().with(Col::Priority, Value::Number(9));
    assert_code(alice.edit(id, &edit), exit::SUPERVISOR_ONLY);
    let t = alice.take(id).unwrap().lock_token;
    alice.complete(id, t, Some("ok")).unwrap();
    assert_code(alice.reopen(id, "again"), exit::SUPERVISOR_ONLY);
    assert_eq!(
        kinds(&mut *alice, id),
        ["created", "locked", "completed"],
        "refusals write nothing"
    );
}

fn reopen_a_done_item_with_a_reason(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "closed too soon");
    let mut alice = b.open("alice", 0);
    let t = alice.take(id).unwrap().lock_token;
    alice.complete(id, t, Some("sent the form")).unwrap();
    assert_code(boss.reopen(id, "  "), exit::ERROR);
    boss.reopen(id, "customer wrote back").unwrap();
    let item = boss.item(id).unwrap();
    assert_eq!(item.state, ItemState::Open);
    assert_eq!((item.result, item.finished_at), (None, None));
    let last = boss.history(id).unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Requeued);
    assert_eq!(last.detail_str("was"), Some("done"));
    assert_eq!(last.detail_str("reason"), Some("customer wrote back"));
    assert_eq!(
        last.detail_str("result"),
        Some("sent the form"),
        "the former result is kept in the history"
    );
    assert_code(boss.reopen(id, "twice"), exit::ERROR);
    assert!(matches!(
        boss.reopen(987_654, "x"),
        Err(StoreError::NotFound(987_654))
    ));
    // Open again, it can be taken like any other.
    assert_eq!(alice.take(id).unwrap().state, ItemState::Open);
}

fn edit_priority_due_and_queue(b: &dyn Backend) {
    let mut boss = setup(b);
    boss.set_queue("billing", &Default::default(), true)
        .unwrap();
    let id = boss
        .add(&NewItem {
            priority: 1,
            ..NewItem::titled("re-prioritised")
        })
        .unwrap()
        .id;
    let mut alice = b.open("alice", 0);
    let t = alice.take(id).unwrap().lock_token;
    let due = 1_800_000_000_000;
    let item = boss
        .edit(
            id,
            &ItemEdit::default()
                .with(Col::Priority, Value::Number(7))
                .with(Col::DueAt, Value::Time(Some(due)))
                .with(Col::Queue, Value::Text(Some("billing".into()))),
        )
        .unwrap();
    assert_eq!(
        (item.priority, item.due_at, item.queue.as_str()),
        (7, Some(due), "billing")
    );
    let h = boss.history(id).unwrap();
    let edits: Vec<_> = h
        .iter()
        .filter(|e| e.kind == EventKind::Noted && e.detail.get("field").is_some())
        .collect();
    assert_eq!(edits.len(), 3, "one event per field: {h:?}");
    assert_eq!(edits[0].detail_str("field"), Some("priority"));
    assert_eq!(edits[0].detail["from"], 1);
    assert_eq!(edits[0].detail["to"], 7);
    assert_eq!(edits[2].detail_str("from"), Some("default"));
    // The holder's lock is untouched by an edit.
    alice.save_notes(id, t, "still mine").unwrap();
    // Clearing the due time; the same values again change nothing and say so.
    let cleared = boss
        .edit(id, &ItemEdit::default().with(Col::DueAt, Value::Time(None)))
        .unwrap();
    assert_eq!(cleared.due_at, None);
    assert_code(
        boss.edit(
            id,
            &ItemEdit::default().with(Col::Priority, Value::Number(7)),
        ),
        exit::ERROR,
    );
    let e = assert_code(
        boss.edit(
            id,
            &ItemEdit::default().with(Col::Queue, Value::Text(Some("biling".into()))),
        ),
        exit::ERROR,
    );
    assert!(matches!(e, StoreError::UnknownQueue { .. }), "{e:?}");
    assert_code(boss.edit(id, &ItemEdit::default()), exit::ERROR);
    alice.complete(id, t, None).unwrap();
    let e = assert_code(
        boss.edit(
            id,
            &ItemEdit::default().with(Col::Priority, Value::Number(1)),
        ),
        exit::CONFLICT,
    );
    assert!(e.to_string().contains("done"), "{e}");
}

fn comments_are_a_thread_of_their_own(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "discussed");
    let mut alice = b.open("alice", 0);
    let mut bob = b.open("bob", 0);
    let t = alice.take(id).unwrap().lock_token;
    let c1 = bob.comment(id, "customer called back").unwrap();
    let c2 = alice
        .comment(id, "correction: it was the\nmanager")
        .unwrap();
    assert!(c2 > c1);
    alice.complete(id, t, None).unwrap();
    let c3 = bob.comment(id, "closed, noted for the record").unwrap();
    let thread = boss.comments(id).unwrap();
    let who: Vec<(&str, &str)> = thread
        .iter()
        .map(|c| (c.author.as_str(), c.text.as_str()))
        .collect();
    assert_eq!(
        who,
        [
            ("bob", "customer called back"),
            ("alice", "correction: it was the\nmanager"),
            ("bob", "closed, noted for the record"),
        ]
    );
    assert_eq!(thread[2].id, c3);
    assert!(thread.windows(2).all(|w| w[0].at <= w[1].at));
    let h = boss.history(id).unwrap();
    let commented: Vec<i64> = h
        .iter()
        .filter(|e| e.kind == EventKind::Noted)
        .filter_map(|e| e.detail["comment_id"].as_i64())
        .collect();
    assert_eq!(commented, [c1, c2, c3], "each comment is audited");
    assert_code(bob.comment(id, " \n "), exit::ERROR);
    assert!(matches!(
        bob.comment(987_654, "x"),
        Err(StoreError::NotFound(987_654))
    ));
    assert!(matches!(
        bob.comments(987_654),
        Err(StoreError::NotFound(987_654))
    ));
    assert_eq!(boss.comments(id).unwrap().len(), 3, "refusals add nothing");
}

fn every_notes_save_keeps_the_text_it_replaces(b: &dyn Backend) {
    let mut boss = setup(b);
    let id = add(&mut *boss, "noted");
    let mut alice = b.open("alice", 0);
    let t = alice.take(id).unwrap().lock_token;
    alice.save_notes(id, t, "alice's findings").unwrap();
    alice.save_notes(id, t, "alice's findings").unwrap();
    alice.release(id, t).unwrap();
    let mut bob = b.open("bob", 0);
    let t = bob.take(id).unwrap().lock_token;
    bob.save_notes(id, t, "bob's rewrite").unwrap();
    let noted: Vec<_> = boss
        .history(id)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == EventKind::Noted)
        .collect();
    assert_eq!(noted.len(), 3);
    assert_eq!(
        noted[0].detail_str("previous"),
        None,
        "nothing was replaced"
    );
    assert_eq!(noted[1].detail_str("previous"), None, "the same text again");
    assert_eq!(noted[2].detail_str("previous"), Some("alice's findings"));
    assert_eq!(boss.item(id).unwrap().notes, "bob's rewrite");
    // A fenced-out save writes nothing, previous text included.
    assert_code(alice.save_notes(id, t - 1, "late"), exit::CONFLICT);
    assert_eq!(
        kinds(&mut *boss, id)
            .iter()
            .filter(|k| **k == "noted")
            .count(),
        3
    );
}

fn users_are_listed_with_role_and_last_seen(b: &dyn Backend) {
    let mut boss = setup(b);
    known(&mut *boss, "carol");
    let mut bob = b.open("bob", 0);
    assert_eq!(bob.touch_last_seen().unwrap(), None);
    let users = boss.users().unwrap();
    let rows: Vec<(&str, Role, bool)> = users
        .iter()
        .map(|u| (u.name.as_str(), u.role, u.last_seen.is_some()))
        .collect();
    assert_eq!(
        rows,
        [
            ("bob", Role::Staff, true),
            ("boss", Role::Supervisor, true),
            ("carol", Role::Staff, false),
        ]
    );
}

/// A database of the previous schema with a comment kept the old way (a `noted` event)
/// gains the comment in its thread when migrated.
#[test]
fn migrating_moves_old_comments_into_the_thread() {
    use caseload::domain::Actor;
    use caseload::store::sqlite::{OpenOptions, SqliteStore};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        caseload::store::migrate::create_at_version(&c, 2).unwrap();
        c.execute_batch(
            "INSERT INTO queues (name) VALUES ('default'); \
             INSERT INTO users (name, role) VALUES ('boss', 'supervisor'); \
             INSERT INTO items (id, queue, title, created_at, created_by) \
                 VALUES (1, 'default', 'old', 1000, 'boss'); \
             INSERT INTO events (item_id, at, actor, os_user, kind, detail) VALUES \
                 (1, 1000, 'boss', 'x', 'created', '{}'), \
                 (1, 2000, 'bob', 'bobx', 'noted', '{\"comment\":\"kept from 0.1\"}'), \
                 (1, 3000, 'bob', 'bobx', 'noted', '{\"token\":1,\"notes_chars\":3}');",
        )
        .unwrap();
    }
    let opts = OpenOptions {
        allow_network_fs: true,
        ..OpenOptions::default()
    };
    let mut s = SqliteStore::open(&path, Actor::new("boss", "x"), &opts).unwrap();
    let thread = s.comments(1).unwrap();
    assert_eq!(thread.len(), 1, "{thread:?}");
    assert_eq!(
        (
            thread[0].author.as_str(),
            thread[0].at,
            thread[0].text.as_str()
        ),
        ("bob", 2000, "kept from 0.1")
    );
    assert_eq!(
        kinds(&mut s, 1),
        ["created", "noted", "noted"],
        "history kept"
    );
    s.comment(1, "new").unwrap();
    assert_eq!(s.comments(1).unwrap().len(), 2);
}

/// A comment is never edited away, even by SQL against the file.
#[test]
fn the_file_refuses_to_edit_a_comment() {
    let b = crate::support::backend::SqliteBackend::new();
    let mut boss = setup(&b);
    let id = add(&mut *boss, "x");
    boss.comment(id, "said once").unwrap();
    let c = rusqlite::Connection::open(&b.path).unwrap();
    let e = c
        .execute("UPDATE comments SET text = 'rewritten'", [])
        .unwrap_err();
    assert!(e.to_string().contains("never edited"), "{e}");
    assert_eq!(boss.comments(id).unwrap()[0].text, "said once");
}
