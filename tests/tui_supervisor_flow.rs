//! The supervisor story through the real loop (`tui::run_loop`) on TestBackends, three
//! users on one SQLite file with a stepped clock: alice holds an item, her lock expires,
//! the supervisor's Locks view flags it, the supervisor reassigns it to bob with a reason,
//! alice's TUI tells her who did it and why, bob's Mine view shows the item, and its
//! history shows all of it.

mod tui_support;

use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use caseload::domain::EventKind;
use caseload::store::Store;
use caseload::tui::{EventSource, Session, run_loop};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{Event, KeyCode};
use tui_support::*;

const MIN: i64 = 60_000;

/// Scripted input: `None` is a poll timeout (a tick).
struct Script(VecDeque<Option<Event>>);

impl EventSource for Script {
    fn next(&mut self, _timeout: Duration) -> std::io::Result<Option<Event>> {
        Ok(self.0.pop_front().unwrap_or_else(|| key('q')))
    }
    fn lockstep(&self) -> bool {
        true
    }
}

/// Stops the loop when the script is used up even if a popup would swallow the `q`.
struct Stop<'a>(Script, &'a AtomicBool);

impl EventSource for Stop<'_> {
    fn next(&mut self, timeout: Duration) -> std::io::Result<Option<Event>> {
        if self.0.0.is_empty() {
            self.1.store(true, std::sync::atomic::Ordering::SeqCst);
            return Ok(None);
        }
        self.0.next(timeout)
    }
    fn lockstep(&self) -> bool {
        true
    }
}

fn drive(term: &mut Terminal<TestBackend>, s: &mut Session, events: Vec<Option<Event>>) -> String {
    s.state.quit = false;
    let stop = AtomicBool::new(false);
    let mut script = Stop(Script(events.into()), &stop);
    run_loop(term, s, &mut script, &stop).unwrap();
    caseload::tui::draw(term, &s.state).unwrap();
    buffer_text(term.backend())
}

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
