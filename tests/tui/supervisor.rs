//! The supervisor's TUI: Locks and Stats snapshots with fixed data and clock, the
//! unlock / reassign / bulk / requeue / cancel / queue-settings actions through the one
//! confirmation dialog, staff refused every one of them, and a user's day.
//!
//! The whole story through the real loop (`tui::run_loop`) on TestBackends, three users on
//! one SQLite file with a stepped clock: alice holds an item, her lock expires, the
//! supervisor's Locks view flags it, the supervisor reassigns it to bob with a reason,
//! alice's TUI tells her who did it and why, bob's Mine view shows the item, and its
//! history shows all of it.
//!
//! "sup" opens each database first and so is its supervisor; everyone else is staff.

use crate::support::backend::Adds;
use crate::support::tui::*;
use caseload::domain::{EventKind, ItemState, NewItem, QueueUpdate};
use caseload::store::{Reads, Writes};
use caseload::tui::Session;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{Event, KeyCode};
use ratatui::style::Color;

use crate::support::MIN;

/// Items and locks at T0 (10:00 UTC):
/// - #1..#4 helpdesk (30 min locks, 2 min warning), #5 verification (10 min locks, WIP
///   limit 2, due 09:30), #6 fulfilment, #7 and #8 helpdesk.
/// - carol took #3 at 09:15 (EXPIRED +15m), alice #4 at 09:31 (1m left: warning),
///   dave #5 at 09:52 (2m left), bob #2 at 09:55 (25m left), bob #7 and #8 at 09:20
///   (both EXPIRED +10m).
/// - completions at 05:10, 07:40, 09:05 and 09:20; #6 failed at 08:00.
fn world() -> (Db, Clock) {
    let db = Db::new();
    let clock = Clock::at(T0 - 6 * 60 * MIN);
    let mut sup = db.store("sup", &clock);
    add_items(
        &mut sup,
        "helpdesk",
        &[
            "Printer on floor 3 jams",
            "VPN drops every 10 minutes",
            "New laptop for Sam",
            "Reset password for Kim",
        ],
    );
    let mut due = NewItem::titled("Verify VAT number DE123456789");
    due.queue = "verification".into();
    due.due_at = Some(T0 - 30 * MIN);
    sup.add(&due).unwrap();
    add_items(&mut sup, "fulfilment", &["Pick & pack order #A-1001"]);
    add_items(
        &mut sup,
        "helpdesk",
        &["Order toner for floor 2", "Badge for new starter"],
    );
    let done: Vec<i64> = (0..4)
        .map(|i| {
            let mut it = NewItem::titled(&format!("Done {i}"));
            it.queue = "helpdesk".into();
            it.priority = -1;
            sup.add(&it).unwrap().id
        })
        .collect();
    sup.set_queue(
        "verification",
        &QueueUpdate {
            lock_seconds: Some(600),
            warn_seconds: Some(60),
            max_per_user: Some(Some(2)),
            ..QueueUpdate::default()
        },
        false,
    )
    .unwrap();
    let mut erin = db.store("erin", &clock);
    for (id, at) in done
        .iter()
        .zip([T0 - 290 * MIN, T0 - 140 * MIN, T0 - 55 * MIN, T0 - 40 * MIN])
    {
        clock.set(at);
        let t = erin.take(*id).unwrap().lock_token;
        erin.complete(*id, t, None).unwrap();
    }
    clock.set(T0 - 120 * MIN);
    let t = erin.take(6).unwrap().lock_token;
    erin.fail(6, t, "address unknown").unwrap();
    let lock = |user: &str, id: i64, at: i64| {
        clock.set(at);
        db.store(user, &clock).take(id).unwrap();
    };
    lock("carol", 3, T0 - 45 * MIN);
    lock("bob", 7, T0 - 40 * MIN);
    lock("bob", 8, T0 - 40 * MIN);
    lock("alice", 4, T0 - 29 * MIN);
    lock("dave", 5, T0 - 8 * MIN);
    lock("bob", 2, T0 - 5 * MIN);
    clock.set(T0);
    (db, clock)
}

fn press(s: &mut Session, keys: &str) {
    type_text(s, keys);
}

fn status(s: &Session) -> String {
    s.state
        .status
        .as_ref()
        .map(|st| st.text.clone())
        .unwrap_or_default()
}

/// The screen line of the Locks row holding item `id`.
fn lock_row(screen: &str, id: i64) -> String {
    screen
        .lines()
        .skip(2)
        .find(|l| l.split_whitespace().any(|w| w == id.to_string()) && l.contains("left"))
        .or_else(|| {
            screen
                .lines()
                .skip(2)
                .find(|l| l.split_whitespace().any(|w| w == id.to_string()))
        })
        .unwrap_or_else(|| panic!("no row for #{id} in\n{screen}"))
        .to_string()
}

#[test]
fn locks_view_lists_every_lock_oldest_first_and_flags_stale_ones() {
    let (db, clock) = world();
    let store = db.store("sup", &clock);
    let mut s = start(store, &clock, 100, 16, true);
    s.step(key('3'));
    let text = screen(&s.state);
    insta::assert_snapshot!("locks", text);
    let body: Vec<&str> = text.lines().skip(2).take(6).collect();
    let order: Vec<&str> = body
        .iter()
        .map(|l| {
            l.split_whitespace()
                .find(|w| w.len() > 2 && w.chars().all(char::is_alphabetic))
                .unwrap_or("")
        })
        .collect();
    assert_eq!(
        order,
        ["carol", "bob", "bob", "alice", "dave", "bob"],
        "oldest first:\n{text}"
    );
    let carol = lock_row(&text, 3);
    assert!(
        carol.contains("!!") && carol.contains("EXPIRED +15m00s"),
        "{carol}"
    );
    assert!(carol.contains("45m00s"), "held for: {carol}");
    let alice = lock_row(&text, 4);
    assert!(
        alice.contains("! ") && alice.contains("1m00s left"),
        "{alice}"
    );
    let bob = lock_row(&text, 2);
    assert!(!bob.contains('!') && bob.contains("25m00s left"), "{bob}");
    assert!(text.contains("sup (supervisor)"), "{text}");
    assert!(text.contains("u unlock"), "supervisor keys shown: {text}");
}

/// "Oldest first" is by time held (since the take), which is what the view shows; a
/// renewal moves only a lock's expiry, and a shorter lock age set since leaves the current
/// locks' time left alone (issue 25 §3).
#[test]
fn locks_view_sorts_by_time_held_and_each_lock_keeps_its_age() {
    let (db, clock) = world();
    // carol, who holds the oldest lock, is at work: she renewed it two minutes ago.
    clock.set(T0 - 2 * MIN);
    let mut carol = db.store("carol", &clock);
    let token = carol.item(3).unwrap().lock_token;
    carol.renew(3, token).unwrap();
    clock.set(T0);
    let mut sup = db.store("sup", &clock);
    sup.set_queue(
        "helpdesk",
        &QueueUpdate {
            lock_seconds: Some(60),
            warn_seconds: Some(10),
            ..QueueUpdate::default()
        },
        false,
    )
    .unwrap();
    let mut s = start(sup, &clock, 100, 16, true);
    s.step(key('3'));
    let text = screen(&s.state);
    let first = text.lines().nth(2).unwrap_or_default();
    assert!(first.contains("carol"), "held longest, first:\n{text}");
    let carol = lock_row(&text, 3);
    assert!(
        carol.contains("45m00s") && carol.contains("28m00s left") && !carol.contains('!'),
        "held since the take, live until the renewal's expiry: {carol}"
    );
    let bob = lock_row(&text, 2);
    assert!(
        bob.contains("5m00s") && bob.contains("25m00s left"),
        "{bob}"
    );
    // A lock taken now gets the new minute.
    clock.set(T0 + MIN / 2);
    db.store("erin", &clock).take(1).unwrap();
    clock.set(T0 + MIN);
    s.step(key('1'));
    s.step(key('3'));
    let text = screen(&s.state);
    let erin = lock_row(&text, 1);
    assert!(erin.contains("30s left"), "{erin}\n{text}");
}

#[test]
fn stale_locks_stand_out_in_colour_and_without_it() {
    let (db, clock) = world();
    for color in [true, false] {
        let store = db.store("sup", &clock);
        let mut s = start(store, &clock, 100, 16, color);
        s.step(key('3'));
        let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 16)).unwrap();
        caseload::tui::draw(&mut t, &s.state).unwrap();
        let buf = t.backend().buffer().clone();
        let text = buffer_text(t.backend());
        let y = text
            .lines()
            .position(|l| l.contains("EXPIRED +15m00s"))
            .expect("expired lock shown") as u16;
        let x = text
            .lines()
            .nth(y as usize)
            .unwrap()
            .find("EXPIRED")
            .unwrap() as u16;
        let fg = buf[(x, y)].fg;
        if color {
            assert_eq!(fg, Color::Red, "expired is red");
        } else {
            assert_eq!(fg, Color::Reset, "NO_COLOR: no colour at all");
            assert!(text.lines().nth(y as usize).unwrap().contains("!!"));
        }
    }
}

#[test]
fn locks_filter_by_holder_queue_and_expiry() {
    let (db, clock) = world();
    let store = db.store("sup", &clock);
    let mut s = start(store, &clock, 100, 16, false);
    s.step(key('3'));
    s.step(key('/'));
    press(&mut s, "holder:bob state:expired");
    s.step(code(KeyCode::Enter));
    let text = screen(&s.state);
    insta::assert_snapshot!("locks_filtered", text);
    assert!(text.contains("filter: holder:bob state:expired"), "{text}");
    assert_eq!(s.state.panes.locks.total, 2, "{text}");
    assert!(lock_row(&text, 7).contains("EXPIRED"));
    assert!(
        !text.contains("25m00s left"),
        "bob's live lock filtered out: {text}"
    );
    // queue: narrows too; Esc clears.
    s.step(key('/'));
    for _ in 0..40 {
        s.step(code(KeyCode::Backspace));
    }
    press(&mut s, "queue:verification");
    s.step(code(KeyCode::Enter));
    assert_eq!(s.state.panes.locks.total, 1);
    assert_eq!(
        s.state.panes.locks.rows[0].lock_user.as_deref(),
        Some("dave")
    );
    s.step(code(KeyCode::Esc));
    assert_eq!(s.state.panes.locks.total, 6);
}

#[test]
fn stats_view_shows_every_figure() {
    let (db, clock) = world();
    let store = db.store("sup", &clock);
    let mut s = start(store, &clock, 100, 34, true);
    s.step(key('4'));
    let text = screen(&s.state);
    insta::assert_snapshot!("stats", text);
    assert!(text.contains("open 7  (held 6, EXPIRED 3)"), "{text}");
    assert!(text.contains("done 4  failed 1  cancelled 0"), "{text}");
    assert!(text.contains("overdue (past due): 1"), "{text}");
    assert!(text.contains("oldest open: #1 (6h00m old)"), "{text}");
    assert!(text.contains("Completions per hour, last 24h: 4"), "{text}");
    assert!(text.contains("Open items by age (7)"), "{text}");
    assert!(text.contains("Locks by age (6)"), "{text}");
    // The JSON of `caseload stats --json` is the same `Stats`.
    let mut check = db.store("check", &clock);
    let st = check.stats().unwrap();
    assert_eq!(Some(&st), s.state.stats.as_ref());
    let json = serde_json::to_value(&st).unwrap();
    assert_eq!(json["expired"], 3);
    assert_eq!(json["overdue"], 1);
    assert_eq!(json["completed_per_hour"].as_array().unwrap().len(), 24);
}

#[test]
fn supervisor_unlocks_a_stale_lock_with_a_reason() {
    let (db, clock) = world();
    let store = db.store("sup", &clock);
    let mut s = start(store, &clock, 100, 24, true);
    s.step(key('3'));
    assert_eq!(s.state.panes.locks.rows[0].id, 3, "carol's lock is first");
    s.step(key('u'));
    let text = screen(&s.state);
    insta::assert_snapshot!("unlock_dialog", text);
    assert!(
        text.contains("Held by carol (EXPIRED 15m00s ago)"),
        "{text}"
    );
    // No reason: refused in place.
    s.step(code(KeyCode::Enter));
    let d = s.state.dialog.as_ref().expect("still asking");
    assert_eq!(d.error.as_deref(), Some("A reason is required"));
    press(&mut s, "carol is on leave");
    s.step(code(KeyCode::Enter));
    assert!(s.state.dialog.is_none());
    assert_eq!(status(&s), "Unlocked #3; it is back in the pool");
    drop(s);
    let mut check = db.store("check", &clock);
    assert_eq!(check.item(3).unwrap().lock_user, None);
    let last = check.history(3).unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Unlocked);
    assert_eq!(last.actor, "sup");
    assert_eq!(last.detail_str("reason"), Some("carol is on leave"));
}

/// Parked items are in the Locks view too, after the locks, flagged `P` with their owner
/// and wake time; `u` on one ends its park and returns it to the pool (issue 28 §1).
#[test]
fn supervisors_see_parked_items_in_locks_and_unpark_them() {
    let (db, clock) = world();
    let mut alice = db.store("alice", &clock);
    let token = alice.take(1).unwrap().lock_token;
    alice
        .park(1, token, T0 + 60 * MIN, "call back Kim")
        .unwrap();
    let store = db.store("sup", &clock);
    let mut s = start(store, &clock, 100, 24, true);
    s.step(key('3'));
    let text = screen(&s.state);
    let rows: Vec<i64> = s.state.panes.locks.rows.iter().map(|r| r.id).collect();
    assert_eq!(rows.last(), Some(&1), "parked after the locks: {rows:?}");
    let row = lock_row(&text, 1);
    assert!(
        row.contains("P ") && row.contains("alice") && row.contains("parked"),
        "{row}"
    );
    assert!(row.contains("wakes "), "{row}");
    // Select it (the last row) and unpark it.
    for _ in 1..rows.len() {
        s.step(key('j'));
    }
    s.step(key('u'));
    let text = screen(&s.state);
    assert!(text.contains("Unpark #1?"), "{text}");
    assert!(text.contains("It is parked by alice until"), "{text}");
    assert!(text.contains("call back Kim"), "{text}");
    s.step(code(KeyCode::Enter));
    s.settle(std::time::Duration::from_secs(10));
    assert!(s.state.dialog.is_none());
    assert_eq!(status(&s), "Unparked #1; it is back in the pool");
    let ids: Vec<i64> = s.state.panes.locks.rows.iter().map(|r| r.id).collect();
    assert!(!ids.contains(&1), "no longer parked: {ids:?}");
    drop(s);
    let mut check = db.store("check", &clock);
    let item = check.item(1).unwrap();
    assert_eq!((item.state, item.parked_by), (ItemState::Open, None));
    let last = check.history(1).unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Woke);
    assert_eq!(last.detail["by"], "supervisor");
}

#[test]
fn an_unlock_of_a_lock_that_changed_since_does_nothing() {
    let (db, clock) = world();
    let store = db.store("sup", &clock);
    let mut carol = db.store("carol", &clock);
    let mut s = start(store, &clock, 100, 24, true);
    s.step(key('3'));
    s.step(key('u'));
    // Meanwhile carol finishes the item she held.
    let t = carol.item(3).unwrap().lock_token;
    carol.complete(3, t, Some("done after all")).unwrap();
    press(&mut s, "stale");
    s.step(code(KeyCode::Enter));
    assert!(
        status(&s).contains("changed since you looked"),
        "{}",
        status(&s)
    );
    drop(s);
    assert_eq!(carol.item(3).unwrap().state, ItemState::Done);
}

/// The store's refusal of an edited value reaches the screen named by the dialog's field
/// label, never by the command line's flag (issue 24): through the real loop and store.
#[test]
fn an_edit_the_store_refuses_is_named_by_the_field_label() {
    let (db, clock) = world();
    let store = db.store("sup", &clock);
    let mut s = start(store, &clock, 100, 24, true);
    s.step(key('1'));
    s.step(key('E'));
    let d = s.state.dialog.as_ref().expect("the edit dialog");
    let id: i64 = d.title.trim_start_matches("Edit #").parse().unwrap();
    let queue = d.value(0);
    for _ in queue.chars() {
        s.step(code(KeyCode::Backspace));
    }
    press(&mut s, &"q".repeat(101));
    s.step(code(KeyCode::Enter));
    s.settle(std::time::Duration::from_secs(10));
    assert_eq!(status(&s), "Queue: name is longer than 100 characters");
    let text = screen(&s.state);
    assert!(
        text.contains("Queue: name is longer than 100 characters") && !text.contains("--queue"),
        "{text}"
    );
    assert_eq!(db.store("sup", &clock).item(id).unwrap().queue, queue);
}

#[test]
fn reassign_asks_for_the_user_and_the_reason_in_one_dialog() {
    let (db, clock) = world();
    let store = db.store("sup", &clock);
    let mut s = start(store, &clock, 100, 24, true);
    s.step(key('3'));
    s.step(key('a'));
    press(&mut s, "not a name");
    s.step(code(KeyCode::Tab));
    press(&mut s, "carol is away");
    s.step(code(KeyCode::Enter));
    let d = s
        .state
        .dialog
        .as_ref()
        .expect("a bad user name keeps the dialog");
    assert!(d.error.as_deref().unwrap().starts_with("To user:"), "{d:?}");
    assert_eq!(d.value(1), "carol is away", "the reason typed is kept");
    assert_eq!(d.focus, 0, "back on the bad field");
    for _ in 0..10 {
        s.step(code(KeyCode::Backspace));
    }
    press(&mut s, "erin");
    let text = screen(&s.state);
    insta::assert_snapshot!("reassign_dialog", text);
    s.step(code(KeyCode::Enter));
    assert_eq!(status(&s), "Reassigned #3 to erin");
    drop(s);
    let mut check = db.store("check", &clock);
    let item = check.item(3).unwrap();
    assert_eq!(item.lock_user.as_deref(), Some("erin"));
    let last = check.history(3).unwrap().pop().unwrap();
    assert_eq!(last.kind, EventKind::Reassigned);
    assert_eq!(last.detail_str("to"), Some("erin"));
    assert_eq!(last.detail_str("from"), Some("carol"));
    assert_eq!(last.detail_str("reason"), Some("carol is away"));
}

#[test]
fn bulk_unlock_releases_all_expired_locks_of_bob_after_saying_how_many() {
    let (db, clock) = world();
    let store = db.store("sup", &clock);
    let mut s = start(store, &clock, 100, 24, true);
    s.step(key('3'));
    s.step(key('/'));
    press(&mut s, "holder:bob state:expired");
    s.step(code(KeyCode::Enter));
    s.step(key('U'));
    let text = screen(&s.state);
    insta::assert_snapshot!("bulk_dialog", text);
    let d = s.state.dialog.as_ref().expect("asks first");
    assert_eq!(d.title, "Unlock 2 locks?");
    assert!(d.message.contains("This touches 2 items"), "{}", d.message);
    assert!(d.message.contains("held by bob (2)"), "{}", d.message);
    press(&mut s, "bob went home");
    s.step(code(KeyCode::Enter));
    assert_eq!(status(&s), "Unlocked 2 locks");
    assert_eq!(
        s.state.panes.locks.total, 0,
        "the filtered view is empty now"
    );
    drop(s);
    let mut check = db.store("check", &clock);
    for id in [7, 8] {
        assert_eq!(check.item(id).unwrap().lock_user, None);
        let last = check.history(id).unwrap().pop().unwrap();
        assert_eq!(
            (last.kind, last.actor.as_str()),
            (EventKind::Unlocked, "sup")
        );
        assert_eq!(last.detail_str("reason"), Some("bob went home"));
    }
    assert_eq!(
        check.item(2).unwrap().lock_user.as_deref(),
        Some("bob"),
        "bob's live lock stays"
    );
    assert_eq!(check.item(3).unwrap().lock_user.as_deref(), Some("carol"));
}

#[test]
fn requeue_a_failed_item_and_cancel_an_open_one() {
    let (db, clock) = world();
    let store = db.store("sup", &clock);
    let mut s = start(store, &clock, 100, 24, true);
    s.step(key('/'));
    press(&mut s, "state:failed");
    s.step(code(KeyCode::Enter));
    assert_eq!(s.state.panes.queue.rows[0].id, 6);
    s.step(key('R'));
    let d = s.state.dialog.as_ref().expect("confirm first");
    assert!(
        d.message.contains("It is failed (address unknown)"),
        "{}",
        d.message
    );
    s.step(code(KeyCode::Enter));
    assert_eq!(status(&s), "Requeued #6; it is open again");
    assert_eq!(s.state.panes.queue.total, 0, "no failed items left");
    // Cancel the open item #1 from the Queue view.
    s.step(code(KeyCode::Esc));
    s.step(key('x'));
    s.step(code(KeyCode::Enter));
    assert_eq!(
        s.state.dialog.as_ref().unwrap().error.as_deref(),
        Some("A reason is required")
    );
    press(&mut s, "duplicate of #2");
    s.step(code(KeyCode::Enter));
    assert_eq!(status(&s), "Cancelled #1");
    drop(s);
    let mut check = db.store("check", &clock);
    assert_eq!(check.item(6).unwrap().state, ItemState::Open);
    let item = check.item(1).unwrap();
    assert_eq!(item.state, ItemState::Cancelled);
    assert_eq!(item.error.as_deref(), Some("duplicate of #2"));
    let kinds: Vec<(EventKind, String)> = check
        .history(6)
        .unwrap()
        .into_iter()
        .map(|e| (e.kind, e.actor))
        .collect();
    assert_eq!(
        kinds.last().unwrap(),
        &(EventKind::Requeued, "sup".to_string())
    );
}

/// A new lock age in the settings form says that held locks keep theirs; dave's lock on
/// #5 (taken 8 minutes ago under 10) still has 2 minutes, not the new age's none.
#[test]
fn a_new_lock_age_in_the_settings_form_leaves_held_locks_alone() {
    let (db, clock) = world();
    let store = db.store("sup", &clock);
    let mut s = start(store, &clock, 100, 34, true);
    s.step(key('4'));
    let v = (s.state.stats.as_ref().unwrap().by_queue.iter())
        .position(|q| q.queue == "verification")
        .unwrap();
    for _ in 0..v {
        s.step(key('j'));
    }
    s.step(key('S'));
    for _ in 0..3 {
        s.step(code(KeyCode::Backspace));
    }
    press(&mut s, "300");
    s.step(code(KeyCode::Enter));
    assert!(s.state.dialog.is_none(), "{:?}", s.state.dialog);
    assert!(
        status(&s).ends_with(
            "lock 300s, warning 60s, WIP limit 2, running, order priority (locks held now \
             keep their age; new locks and renewals get the new one)"
        ),
        "{}",
        status(&s)
    );
    s.step(key('3'));
    let dave = lock_row(&screen(&s.state), 5);
    assert!(
        dave.contains("2m00s left") && !dave.contains("EXPIRED"),
        "{dave}"
    );
}

#[test]
fn queue_settings_are_edited_with_the_clis_validation_and_keep_typed_values() {
    let (db, clock) = world();
    let store = db.store("sup", &clock);
    let mut s = start(store, &clock, 100, 34, true);
    s.step(key('4'));
    let names: Vec<String> = s
        .state
        .stats
        .as_ref()
        .unwrap()
        .by_queue
        .iter()
        .map(|q| q.queue.clone())
        .collect();
    let v = names.iter().position(|n| n == "verification").unwrap();
    for _ in 0..v {
        s.step(key('j'));
    }
    s.step(key('S'));
    let d = s.state.dialog.as_ref().expect("the settings form");
    assert_eq!(
        (0..5).map(|i| d.value(i)).collect::<Vec<_>>(),
        ["600", "60", "2", "no", "priority"],
        "prefilled with the queue's settings"
    );
    // Warning 700 s with a 600 s lock: QueueUpdate::apply refuses, as the CLI does.
    s.step(code(KeyCode::Tab));
    for _ in 0..5 {
        s.step(code(KeyCode::Backspace));
    }
    press(&mut s, "700");
    s.step(code(KeyCode::Tab));
    s.step(code(KeyCode::Tab));
    for _ in 0..5 {
        s.step(code(KeyCode::Backspace));
    }
    press(&mut s, "yes");
    s.step(code(KeyCode::Enter));
    let text = screen(&s.state);
    insta::assert_snapshot!("queue_settings_refused", text);
    let d = s.state.dialog.as_ref().expect("kept open");
    assert_eq!(
        d.error.as_deref(),
        Some("warn-seconds (700) must be less than lock-seconds (600)")
    );
    assert_eq!(d.value(1), "700", "typed values kept");
    assert_eq!(d.value(3), "yes");
    assert_eq!(d.focus, 1, "the cursor is put on the field to fix");
    // Not a number: named.
    press(&mut s, "x");
    s.step(code(KeyCode::Enter));
    assert_eq!(
        s.state.dialog.as_ref().unwrap().error.as_deref(),
        Some("Warning seconds: '700x' is not a whole number")
    );
    for _ in 0..4 {
        s.step(code(KeyCode::Backspace));
    }
    press(&mut s, "90");
    // The take order: a word it does not know is named, `due` is taken.
    for _ in 0..3 {
        s.step(code(KeyCode::Tab));
    }
    for _ in 0..8 {
        s.step(code(KeyCode::Backspace));
    }
    press(&mut s, "soonest");
    s.step(code(KeyCode::Enter));
    assert_eq!(
        s.state.dialog.as_ref().unwrap().error.as_deref(),
        Some("Take order: 'soonest' is neither priority nor due")
    );
    for _ in 0..7 {
        s.step(code(KeyCode::Backspace));
    }
    press(&mut s, "due");
    s.step(code(KeyCode::Enter));
    assert!(s.state.dialog.is_none(), "{:?}", s.state.dialog);
    assert_eq!(
        status(&s),
        "Queue verification: lock 600s, warning 90s, WIP limit 2, paused, order due"
    );
    drop(s);
    let mut check = db.store("check", &clock);
    let q = check.queue("verification").unwrap();
    assert_eq!(
        (
            q.lock_seconds,
            q.warn_seconds,
            q.max_per_user,
            q.paused,
            q.order
        ),
        (600, 90, Some(2), true, caseload::domain::TakeOrder::Due)
    );
}

#[test]
fn staff_see_locks_and_stats_read_only_and_every_supervisor_key_is_refused() {
    let (db, clock) = world();
    let mut check = db.store("check", &clock);
    let events_before: usize = (1..=12).map(|id| check.history(id).unwrap().len()).sum();
    let queues_before = check.queues().unwrap();
    let store = db.store("erin", &clock);
    let mut s = start(store, &clock, 100, 24, true);
    s.step(key('3'));
    let text = screen(&s.state);
    assert!(text.contains("read-only"), "{text}");
    assert!(text.contains("EXPIRED"), "staff see the locks: {text}");
    let mut tried = Vec::new();
    for (view, k) in [
        ('3', 'u'),
        ('3', 'a'),
        ('3', 'U'),
        ('3', 'x'),
        ('1', 'x'),
        ('1', 'R'),
        ('4', 'S'),
    ] {
        s.step(key(view));
        if view == '1' {
            s.step(key('/'));
            press(&mut s, "state:failed");
            s.step(code(KeyCode::Enter));
        }
        s.step(key(k));
        assert!(s.state.dialog.is_none(), "{k}: no dialog for staff");
        let st = status(&s);
        assert!(st.starts_with("Supervisor only"), "{k}: {st}");
        tried.push(k);
        s.state.status = None;
    }
    let text = screen(&s.state);
    assert!(text.contains("read-only"), "Stats is read-only: {text}");
    drop(s);
    let events_after: usize = (1..=12).map(|id| check.history(id).unwrap().len()).sum();
    assert_eq!(events_before, events_after, "nothing reached the store");
    assert_eq!(queues_before, check.queues().unwrap());
    assert_eq!(tried.len(), 7);
}

#[test]
fn what_a_holder_did_today() {
    let (db, clock) = world();
    let store = db.store("sup", &clock);
    let mut s = start(store, &clock, 100, 20, true);
    s.step(key('3'));
    // Select bob's first lock (#7) and ask for his day.
    s.step(key('j'));
    s.step(key('t'));
    let text = screen(&s.state);
    insta::assert_snapshot!("activity", text);
    let r = s.state.report.as_ref().expect("a report");
    assert_eq!(r.title, "What bob did today");
    assert!(
        r.lines[0]
            .text
            .starts_with("3 events since 00:00 UTC: locked 3"),
        "{:?}",
        r.lines[0]
    );
    assert!(text.contains("09:20  locked      #7"), "{text}");
    assert!(text.contains("09:55  locked      #2"), "{text}");
    s.step(code(KeyCode::Esc));
    assert!(s.state.report.is_none());
}

// ----- the whole story through the real loop ------------------------------------------

fn typed(text: &str) -> Vec<Option<Event>> {
    text.chars().map(key).collect()
}

#[test]
fn an_expired_lock_is_reassigned_and_everyone_sees_it() {
    let db = Db::new();
    let clock = Clock::at(T0);
    let mut sup_store = db.store("sup", &clock);
    let ids = add_items(&mut sup_store, "helpdesk", &["Reset password for Kim"]);
    let id = ids[0];
    sup_store
        .set_role("bob", caseload::domain::Role::Staff)
        .unwrap(); // bob is a known user

    // Alice takes the item and then leaves her terminal alone.
    let alice_store = db.store("alice", &clock);
    let mut alice_term = Terminal::new(TestBackend::new(100, 20)).unwrap();
    let mut alice = start(alice_store, &clock, 100, 20, true);
    let a = drive(&mut alice_term, &mut alice, vec![key('n')]);
    assert!(a.contains(&format!("#{id} [helpdesk")), "{a}");

    // 31 minutes later her 30-minute lock has expired.
    clock.advance(31 * MIN);
    let mut sup_term = Terminal::new(TestBackend::new(100, 20)).unwrap();
    let mut sup = start(sup_store, &clock, 100, 20, true);
    let locks = drive(&mut sup_term, &mut sup, vec![key('3')]);
    let row = locks
        .lines()
        .find(|l| l.contains("Reset password for Kim"))
        .unwrap_or_else(|| panic!("the lock is listed:\n{locks}"));
    assert!(row.contains("!!"), "flagged: {row}");
    assert!(row.contains("alice"), "{row}");
    assert!(row.contains("EXPIRED +1m00s"), "{row}");

    // The supervisor reassigns it to bob, with a reason, through the one dialog.
    clock.advance(MIN);
    let mut keys = vec![key('a')];
    keys.extend(typed("bob"));
    keys.push(code(KeyCode::Tab));
    keys.extend(typed("alice is off sick"));
    keys.push(code(KeyCode::Enter));
    let after = drive(&mut sup_term, &mut sup, keys);
    assert!(
        after.contains(&format!("Reassigned #{id} to bob")),
        "{after}"
    );
    let row = after
        .lines()
        .find(|l| l.contains("Reset password for Kim"))
        .unwrap();
    assert!(row.contains("bob") && row.contains("30m00s left"), "{row}");

    // Alice's TUI, on its next tick, says what happened and who did it.
    clock.advance(1000);
    let told = drive(&mut alice_term, &mut alice, vec![None]);
    assert!(told.contains("Lock lost"), "{told}");
    let expected =
        format!("sup reassigned #{id} from you to bob at 10:32, reason: “alice is off sick”");
    assert_eq!(alice.state.notices[0].message, expected);
    assert!(
        told.contains(&format!("sup reassigned #{id} from you to bob")),
        "{told}"
    );
    assert!(told.contains("alice is off sick"), "{told}");
    assert!(alice.state.held.is_empty());
    // In her Mine view too, after the popup.
    let mine = drive(
        &mut alice_term,
        &mut alice,
        vec![code(KeyCode::Enter), key('2')],
    );
    assert!(mine.contains("Lost locks"), "{mine}");
    assert!(
        mine.contains(&format!("sup reassigned #{id} from you to bob")),
        "{mine}"
    );

    // Bob opens caseload: his Mine view has the item.
    let bob_store = db.store("bob", &clock);
    let mut bob_term = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let mut bob = start(bob_store, &clock, 100, 30, true);
    let bob_mine = drive(&mut bob_term, &mut bob, vec![]);
    assert!(
        bob_mine.contains("You have 1 unfinished item"),
        "{bob_mine}"
    );
    assert!(
        bob_mine
            .lines()
            .any(|l| l.contains("Reset password for Kim") && l.contains("you, 29m")),
        "{bob_mine}"
    );

    // The history (bob's detail pane) shows all of it.
    let detail = drive(&mut bob_term, &mut bob, vec![code(KeyCode::Enter)]);
    let history: Vec<&str> = detail
        .lines()
        .skip_while(|l| !l.contains("History"))
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .take(3)
        .collect();
    assert_eq!(history.len(), 3, "{detail}");
    assert!(
        history[0].contains("2026-11-22 10:00  created    sup"),
        "{detail}"
    );
    assert!(
        history[1].contains("2026-11-22 10:00  locked     alice"),
        "{detail}"
    );
    assert!(
        history[2].contains("2026-11-22 10:32  reassigned sup")
            && history[2].contains("reason: alice is off sick")
            && history[2].contains("to: bob")
            && history[2].contains("from: alice"),
        "{detail}"
    );

    // And the store agrees: one event per action, with the supervisor's name.
    let mut check = db.store("check", &clock);
    let events = check.history(id).unwrap();
    let kinds: Vec<(EventKind, &str)> = events.iter().map(|e| (e.kind, e.actor.as_str())).collect();
    assert_eq!(
        &kinds[..3],
        [
            (EventKind::Created, "sup"),
            (EventKind::Locked, "alice"),
            (EventKind::Reassigned, "sup"),
        ]
    );
    assert_eq!(check.item(id).unwrap().lock_user.as_deref(), Some("bob"));
}

/// A supervisor whose role the database does not answer for (here its column is gone for
/// a while) is told so, and a supervisor key says why it is refused: never a staff
/// screen that looks like the truth. Once the database answers, the role is learnt.
#[test]
fn a_role_that_cannot_be_read_shows_as_an_error_not_as_staff() {
    let db = Db::new();
    let clock = Clock::at(T0);
    let mut sup_store = db.store("sup", &clock);
    let ids = add_items(&mut sup_store, "helpdesk", &["Reset password"]);
    db.store("alice", &clock).take(ids[0]).unwrap();
    let raw = rusqlite::Connection::open(&db.path).unwrap();
    raw.execute_batch("ALTER TABLE users RENAME COLUMN role TO role_hidden")
        .unwrap();
    let mut s = start(sup_store, &clock, 100, 20, false);
    let text = screen(&s.state);
    assert!(!s.state.role_known);
    assert!(text.contains("no such column: role"), "{text}");
    s.step(key('3'));
    s.step(key('u'));
    assert!(s.state.dialog.is_none(), "no unlock dialog");
    assert_eq!(
        status(&s),
        "Supervisor only: unlocking needs the supervisor role (your role could not be read \
         from the database yet)"
    );

    raw.execute_batch("ALTER TABLE users RENAME COLUMN role_hidden TO role")
        .unwrap();
    clock.advance(1000);
    s.step(None);
    s.settle(std::time::Duration::from_secs(60));
    assert!(s.state.role_known);
    assert_eq!(s.state.role, caseload::domain::Role::Supervisor);
}
