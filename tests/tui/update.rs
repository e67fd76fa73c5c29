//! `app::update` with a fixed clock: countdowns, warnings, expiry, renewal, lost locks,
//! resume, skip, and nothing typed ever lost. No terminal, no database.

use caseload::app::{
    Call, Detail, Editor, Effect, Finish, Held, LockCheck, Msg, Pending, Resume, Snapshot, State,
    TextInput, View, update,
};
use caseload::domain::texts::Saying;
use caseload::domain::{Event, EventKind, QueueSettings};
use caseload::store::{StoreError, TakeNext};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::support::MIN;
use crate::support::tui::{T0, item};

pub(crate) fn event(kind: EventKind, actor: &str, at: i64) -> Event {
    Event {
        id: 0,
        item_id: 42,
        at,
        actor: actor.into(),
        os_user: actor.into(),
        kind,
        detail: serde_json::json!({}),
    }
}

/// Alice's state with a 10-minute lock age and a 1-minute warning on queue `q`.
pub(crate) fn state() -> State {
    let mut s = State::new("alice", T0, 100, 30, true);
    s.queues.insert(
        "q".into(),
        QueueSettings {
            lock_seconds: 600,
            warn_seconds: 60,
            ..QueueSettings::new("q")
        },
    );
    s
}

/// Alice holds #42 (token 3, locked at T0) and has it open.
pub(crate) fn holding() -> State {
    let mut s = state();
    let it = item(42, Some("alice"), T0, 3);
    s.held.insert(42, Held::of(&it));
    update(
        &mut s,
        Msg::Opened {
            taken: true,
            result: Ok((it, vec![event(EventKind::Locked, "alice", T0)])),
        },
    );
    s
}

pub(crate) fn key(c: char, now: i64) -> Msg {
    Msg::Key {
        key: KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
        now,
    }
}

pub(crate) fn code(c: KeyCode, now: i64) -> Msg {
    Msg::Key {
        key: KeyEvent::new(c, KeyModifiers::NONE),
        now,
    }
}

#[test]
fn countdown_warning_and_expiry_follow_the_clock() {
    let mut s = holding();
    update(&mut s, Msg::Tick { now: T0 + 2 * MIN });
    let it = item(42, Some("alice"), T0, 3);
    assert_eq!(
        s.lock_status(&it),
        caseload::domain::LockStatus::Held {
            user: "alice".into(),
            remaining: 8 * MIN
        },
        "8 minutes left after 2 of 10"
    );
    assert!(
        s.lock_alerts().is_empty(),
        "no warning 8 minutes before expiry"
    );

    update(
        &mut s,
        Msg::Tick {
            now: T0 + 9 * MIN + 15_000,
        },
    );
    let alerts = s.lock_alerts();
    assert_eq!(alerts.len(), 1);
    assert!(!alerts[0].expired);
    assert_eq!(alerts[0].ms, 45_000, "warning with 45 s left");

    update(
        &mut s,
        Msg::Tick {
            now: T0 + 10 * MIN + 5_000,
        },
    );
    let alerts = s.lock_alerts();
    assert!(alerts[0].expired, "flagged expired once the age passes");
    assert_eq!(alerts[0].ms, 5_000, "overrun");
}

#[test]
fn ticks_ask_for_the_change_marker_and_refresh_only_on_change() {
    let mut s = holding();
    assert_eq!(
        update(&mut s, Msg::Tick { now: T0 + 1000 }),
        vec![Effect::CheckMarker]
    );
    s.marker = Some(7);
    assert!(update(&mut s, Msg::Marker(7)).is_empty(), "nothing changed");
    let fx = update(&mut s, Msg::Marker(8));
    assert!(matches!(&fx[..], [Effect::Refresh(r)] if r.checks == vec![(42, 3)]));
}

#[test]
fn renewal_follows_keys_in_the_item_and_never_idle_time() {
    let mut s = holding();
    // Idle for 5 minutes: ticks never renew.
    for t in 1..=10 {
        let fx = update(
            &mut s,
            Msg::Tick {
                now: T0 + t * 30_000,
            },
        );
        assert!(!fx.iter().any(|e| matches!(e, Effect::Renew { .. })));
    }
    // A key before lock_seconds/10 (60 s) has passed does not renew ...
    let mut s = holding();
    let fx = update(&mut s, key('j', T0 + 59_000));
    assert!(!fx.iter().any(|e| matches!(e, Effect::Renew { .. })));
    // ... a key after it does, once.
    let fx = update(&mut s, key('j', T0 + 61_000));
    assert!(fx.contains(&Effect::Renew { id: 42, token: 3 }));
    let fx = update(&mut s, key('j', T0 + 62_000));
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Renew { .. })),
        "one at a time"
    );
    let mut renewed = item(42, Some("alice"), T0 + 61_000, 3);
    renewed.title = "Item 42".into();
    update(
        &mut s,
        Msg::Renewed {
            id: 42,
            result: Ok(renewed),
        },
    );
    assert_eq!(s.held[&42].lock_time, T0 + 61_000);
    let fx = update(&mut s, key('k', T0 + 100_000));
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Renew { .. })),
        "renewed 39 s ago"
    );
}

pub(crate) fn lost_snapshot(history: Vec<Event>) -> Msg {
    let mut now_held = item(42, Some("bob"), T0 + 11 * MIN, 4);
    now_held.title = "Item 42".into();
    Msg::Refreshed(Box::new(Snapshot {
        checks: vec![LockCheck {
            id: 42,
            item: Ok(now_held),
            history,
        }],
        ..Snapshot::default()
    }))
}

#[test]
fn a_lost_lock_is_told_at_once_with_who_and_when() {
    let mut s = holding();
    s.now = T0 + 12 * MIN;
    update(
        &mut s,
        lost_snapshot(vec![
            event(EventKind::Locked, "alice", T0),
            event(EventKind::TakenOver, "bob", T0 + 11 * MIN),
        ]),
    );
    let expected = "Your lock on #42 expired at 10:10; bob took it at 10:11";
    assert_eq!(s.notices[0].message, expected);
    assert!(!s.held.contains_key(&42), "no longer believed held");
    let d = s.notice.as_ref().expect("a notice, not just a status line");
    assert!(d.message.contains(expected));
    assert_eq!(
        d.pending,
        Pending::Dismiss,
        "nothing typed, nothing to offer"
    );
    // Actions on the lost item are refused instead of reaching the store.
    let now = s.now;
    update(&mut s, code(KeyCode::Enter, now));
    assert!(s.notice.is_none(), "Enter closes the notice");
    let fx = update(&mut s, key('c', now));
    assert!(fx.is_empty() && s.dialog.is_none());
    assert!(s.status.as_ref().unwrap().text.contains("do not hold #42"));
}

#[test]
fn unsaved_notes_of_a_lost_lock_are_kept_and_can_become_a_comment() {
    let mut s = holding();
    update(&mut s, key('e', T0 + 1000));
    for c in "called the customer".chars() {
        update(&mut s, key(c, T0 + 2000));
    }
    update(
        &mut s,
        lost_snapshot(vec![event(EventKind::TakenOver, "bob", T0 + 11 * MIN)]),
    );
    assert!(s.editor.is_none(), "the editor closes: the lock is gone");
    assert_eq!(s.drafts[&42], "called the customer", "typing kept");
    let d = s.notice.clone().unwrap();
    assert_eq!(d.pending, Pending::Comment { id: 42 });
    // Esc keeps the draft; nothing is discarded.
    update(&mut s, code(KeyCode::Esc, T0 + 12 * MIN));
    assert!(s.notice.is_none());
    assert_eq!(s.drafts[&42], "called the customer");
    // Enter on the offer adds the notes as a comment.
    s.notice = Some(d);
    let fx = update(&mut s, code(KeyCode::Enter, T0 + 12 * MIN));
    assert_eq!(
        fx,
        vec![Effect::Comment {
            id: 42,
            text: "called the customer".into()
        }]
    );
    update(
        &mut s,
        Msg::Commented {
            id: 42,
            result: Ok(()),
        },
    );
    assert!(s.drafts.is_empty());
}

#[test]
fn resume_reacquires_expired_own_locks_and_opens_on_mine() {
    let mut s = state();
    let live = item(7, Some("alice"), T0 - MIN, 1);
    let expired = item(8, Some("alice"), T0 - 11 * MIN, 2);
    let fx = update(
        &mut s,
        Msg::Resumed(Box::new(Resume {
            own: vec![live, expired],
            queues: vec![],
            lost: vec![caseload::store::LostLock {
                item_id: 9,
                title: "Gone".into(),
                loss: caseload::domain::LockLoss {
                    how: EventKind::TakenOver,
                    by: "bob".into(),
                    at: T0 - 30 * MIN,
                    to: None,
                    reason: None,
                },
                now_held_by: Some("bob".into()),
            }],
            last_seen: Some(T0 - 24 * 60 * MIN),
            role: None,
        })),
    );
    assert_eq!(fx[0], Effect::Reacquire(vec![8]), "only the expired one");
    assert!(matches!(fx[1], Effect::Refresh(_)));
    assert_eq!(s.view, View::Mine);
    assert_eq!(
        s.resume_line.as_deref(),
        Some("You have 2 unfinished items")
    );
    assert_eq!(s.held.len(), 2);
    assert_eq!(
        caseload::app::lost::describe_lost(&s.lost_since[0]),
        "#9 Gone: bob took it over at 09:30"
    );
    // Re-acquired: the lock is fresh again. A failed one becomes a notice.
    update(
        &mut s,
        Msg::Reacquired(vec![(8, Ok(item(8, Some("alice"), T0, 3)))]),
    );
    assert_eq!(s.held[&8].token, 3);
    update(
        &mut s,
        Msg::Reacquired(vec![(
            7,
            Err(StoreError::HeldByOther {
                id: 7,
                holder: "bob".into(),
                since: T0,
            }),
        )]),
    );
    assert!(!s.held.contains_key(&7));
    assert!(s.notices[0].message.contains("held by bob"));
}

#[test]
fn skip_releases_and_never_offers_skipped_items_again() {
    let mut s = holding();
    update(&mut s, key('s', T0 + 1000));
    let fx = update(&mut s, code(KeyCode::Enter, T0 + 1000));
    assert_eq!(
        fx,
        vec![Effect::Finish {
            id: 42,
            token: 3,
            what: Finish::Skip(
                TakeNext {
                    queue: None,
                    skip: vec![42]
                },
                Saying::default()
            ),
            notes: None,
        }]
    );
    update(
        &mut s,
        Msg::Finished {
            id: 42,
            what: Finish::Release(Saying::default()),
            result: Ok(()),
        },
    );
    let next = item(43, Some("alice"), T0 + 1000, 1);
    update(
        &mut s,
        Msg::Opened {
            taken: true,
            result: Ok((next, vec![])),
        },
    );
    update(&mut s, key('s', T0 + 2000));
    let fx = update(&mut s, code(KeyCode::Enter, T0 + 2000));
    assert!(
        matches!(&fx[0], Effect::Finish { id: 43, what: Finish::Skip(t, _), .. } if t.skip == vec![42, 43])
    );
    update(
        &mut s,
        Msg::Finished {
            id: 43,
            what: Finish::Release(Saying::default()),
            result: Ok(()),
        },
    );
    let fx = update(&mut s, key('n', T0 + 3000));
    assert!(matches!(&fx[0], Effect::TakeNext(t) if t.skip == vec![42, 43]));
}

#[test]
fn n_after_skipping_everything_offers_the_skipped_items_again_with_a_note() {
    let mut s = holding();
    s.skipped = vec![42, 43];
    s.detail = None;
    // A skip that finds nothing else does not bring back what was just skipped.
    update(
        &mut s,
        Msg::Opened {
            taken: true,
            result: Err(StoreError::NothingToClaim("no free items".into())),
        },
    );
    assert_eq!(s.skipped, vec![42, 43]);
    // `n` that finds nothing but skipped items: the list is cleared and taken from again.
    let fx = update(&mut s, key('n', T0 + 3000));
    assert!(matches!(&fx[0], Effect::TakeNext(t) if t.skip == vec![42, 43]));
    let fx = update(
        &mut s,
        Msg::Opened {
            taken: true,
            result: Err(StoreError::NothingToClaim("no free items".into())),
        },
    );
    assert!(
        matches!(&fx[..], [Effect::TakeNext(t)] if t.skip.is_empty()),
        "{fx:?}"
    );
    assert!(s.skipped.is_empty());
    let again = item(42, Some("alice"), T0 + 3000, 4);
    update(
        &mut s,
        Msg::Opened {
            taken: true,
            result: Ok((again, vec![])),
        },
    );
    let status = s.status.as_ref().unwrap();
    assert!(
        status
            .text
            .contains("the 2 items you skipped or released are offered again"),
        "{status:?}"
    );
    // When even those are gone, `n` says so plainly (and does not loop).
    let fx = update(&mut s, key('n', T0 + 10_000));
    assert!(matches!(&fx[0], Effect::TakeNext(t) if t.skip.is_empty()));
    let fx = update(
        &mut s,
        Msg::Opened {
            taken: true,
            result: Err(StoreError::NothingToClaim("no free items".into())),
        },
    );
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::TakeNext(_))),
        "{fx:?}"
    );
    assert!(s.status.as_ref().unwrap().error);
}

#[test]
fn someone_else_first_says_who_and_refreshes() {
    let mut s = state();
    let fx = update(
        &mut s,
        Msg::Opened {
            taken: true,
            result: Err(StoreError::HeldByOther {
                id: 5,
                holder: "bob".into(),
                since: T0,
            }),
        },
    );
    assert!(matches!(fx[..], [Effect::Refresh(_)]));
    let st = s.status.unwrap();
    assert!(st.error);
    assert_eq!(st.text, "#5 is held by bob (since 10:00)");
    assert!(s.detail.is_none(), "nothing stale shown");
}

#[test]
fn complete_confirms_with_optional_result_and_fail_needs_a_reason() {
    let mut s = holding();
    update(&mut s, key('c', T0));
    assert!(matches!(
        s.dialog.as_ref().unwrap().pending,
        Pending::Complete { id: 42, token: 3 }
    ));
    update(&mut s, code(KeyCode::Esc, T0));
    assert!(s.dialog.is_none(), "Esc cancels");
    update(&mut s, key('c', T0));
    for c in "done".chars() {
        update(&mut s, key(c, T0));
    }
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert_eq!(
        fx,
        vec![Effect::Finish {
            id: 42,
            token: 3,
            what: Finish::Complete(Saying::of("done", None)),
            notes: None
        }]
    );
    update(
        &mut s,
        Msg::Finished {
            id: 42,
            what: Finish::Complete(Saying::of("done", None)),
            result: Err(StoreError::Invalid("refused".into())),
        },
    );
    update(&mut s, key('f', T0));
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert!(fx.is_empty());
    assert_eq!(
        s.dialog.as_ref().unwrap().error.as_deref(),
        Some("A reason is required")
    );
    update(&mut s, key('x', T0));
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert!(
        matches!(&fx[0], Effect::Finish { what: Finish::Fail(r), .. } if r.text.as_deref() == Some("x"))
    );
}

#[test]
fn a_database_error_keeps_the_typing() {
    let mut s = holding();
    update(&mut s, key('e', T0));
    for c in "abc".chars() {
        update(&mut s, key(c, T0));
    }
    let fx = update(
        &mut s,
        Msg::Key {
            key: KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL),
            now: T0,
        },
    );
    assert_eq!(
        fx,
        vec![Effect::SaveNotes {
            id: 42,
            token: 3,
            text: "abc".into()
        }]
    );
    update(
        &mut s,
        Msg::NotesSaved {
            id: 42,
            text: "abc".into(),
            result: Err(StoreError::Database("disk I/O error".into())),
        },
    );
    let ed: &Editor = s.editor.as_ref().unwrap();
    assert_eq!(ed.buf.text(), "abc", "the editor still holds the text");
    assert_eq!(s.drafts[&42], "abc");
    assert!(s.status.as_ref().unwrap().text.contains("disk I/O error"));
    // Quitting with unsaved notes asks first.
    update(&mut s, code(KeyCode::Esc, T0));
    update(&mut s, key('q', T0)); // back out of the item
    assert!(s.detail.is_none() && !s.quit);
    update(&mut s, key('q', T0));
    assert!(!s.quit);
    assert_eq!(s.dialog.as_ref().unwrap().pending, Pending::Quit);
}

#[test]
fn the_filter_prompt_parses_text_and_queue() {
    let mut s = state();
    update(&mut s, key('/', T0));
    for c in "queue:helpdesk printer".chars() {
        update(&mut s, key(c, T0));
    }
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert_eq!(s.filter.queue.as_deref(), Some("helpdesk"));
    assert_eq!(s.filter.text.as_deref(), Some("printer"));
    match &fx[..] {
        [Effect::Refresh(r)] => {
            let f = r.list.as_ref().unwrap();
            assert_eq!(f.queue.as_deref(), Some("helpdesk"));
            assert_eq!(f.text.as_deref(), Some("printer"));
            assert_eq!(f.limit, 26, "only the visible window");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn moving_past_the_window_queries_the_next_window_only() {
    let mut s = state();
    s.panes.queue.total = 1_000_000;
    update(
        &mut s,
        Msg::Refreshed(Box::new(Snapshot {
            view: Some(View::Queue),
            rows: (1..=26).map(|i| item(i, None, 0, 0)).collect(),
            total: 1_000_000,
            offset: 0,
            ..Snapshot::default()
        })),
    );
    for _ in 0..25 {
        assert!(update(&mut s, key('j', T0)).is_empty(), "within the window");
    }
    let fx = update(&mut s, key('j', T0));
    assert!(matches!(&fx[..], [Effect::Refresh(r)] if r.list.as_ref().unwrap().offset == 1));
    let fx = update(&mut s, key('G', T0));
    assert!(
        matches!(&fx[..], [Effect::Refresh(r)] if r.list.as_ref().unwrap().offset == 1_000_000 - 26)
    );
    assert_eq!(s.panes.queue.selected, 999_999);
}

#[test]
fn detail_text_is_sanitized_and_a_huge_body_is_split() {
    let mut s = state();
    let mut it = item(1, None, 0, 0);
    it.body = format!("\u{1b}]52;c;aGk=\u{7}{}", "x".repeat(1 << 20));
    update(
        &mut s,
        Msg::Opened {
            taken: false,
            result: Ok((it, vec![])),
        },
    );
    let d: &Detail = s.detail.as_ref().unwrap();
    assert!(
        d.lines
            .iter()
            .all(|l| !l.text.contains('\u{1b}') && !l.text.contains('\u{7}'))
    );
    assert!(d.lines.iter().any(|l| l.text.starts_with("␛]52;c;aGk=␇")));
    assert!(
        d.lines.iter().all(|l| l.text.chars().count() <= 100),
        "wrapped to the screen width"
    );
    let _ = TextInput::line("");
}

#[test]
fn mouse_wheel_scrolls_and_a_click_selects() {
    use ratatui::crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    let mut s = state();
    update(
        &mut s,
        Msg::Refreshed(Box::new(Snapshot {
            view: Some(View::Queue),
            rows: (1..=26).map(|i| item(i, None, 0, 0)).collect(),
            total: 100,
            offset: 0,
            ..Snapshot::default()
        })),
    );
    let mouse_at = |kind, column, row| Msg::Mouse {
        mouse: MouseEvent {
            kind,
            column,
            row,
            modifiers: KeyModifiers::NONE,
        },
        now: T0,
    };
    let mouse = |kind, row| mouse_at(kind, 20, row);
    update(&mut s, mouse(MouseEventKind::ScrollDown, 5));
    assert_eq!(s.panes.queue.selected, 3);
    update(
        &mut s,
        mouse(MouseEventKind::Down(MouseButton::Left), 2 + 7),
    );
    assert_eq!(
        s.panes.queue.selected, 7,
        "the clicked row (screen row 9 = 8th row)"
    );
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert_eq!(fx, vec![Effect::Take(8)], "Enter takes the clicked item");
    // The tab bar: " 1 Queue  2 Mine  3 Locks  4 Stats".
    update(
        &mut s,
        mouse_at(MouseEventKind::Down(MouseButton::Left), 12, 0),
    );
    assert_eq!(s.view, View::Mine);
    update(
        &mut s,
        mouse_at(MouseEventKind::Down(MouseButton::Left), 3, 0),
    );
    assert_eq!(s.view, View::Queue);
}

#[test]
fn pasted_text_goes_into_the_editor_and_counts_as_activity() {
    let mut s = holding();
    update(&mut s, key('e', T0));
    let fx = update(
        &mut s,
        Msg::Paste {
            text: "line one\nline two".into(),
            now: T0 + 2 * MIN,
        },
    );
    assert_eq!(s.editor.as_ref().unwrap().buf.text(), "line one\nline two");
    assert_eq!(fx, vec![Effect::Renew { id: 42, token: 3 }]);
    // A paste with nowhere to go changes nothing and does not block later renewals.
    update(
        &mut s,
        Msg::Renewed {
            id: 42,
            result: Ok(item(42, Some("alice"), T0 + 2 * MIN, 3)),
        },
    );
    update(&mut s, code(KeyCode::Esc, T0 + 2 * MIN));
    update(&mut s, code(KeyCode::Esc, T0 + 2 * MIN));
    s.detail = None;
    let fx = update(
        &mut s,
        Msg::Paste {
            text: "x".into(),
            now: T0 + 3 * MIN,
        },
    );
    assert!(fx.is_empty());
    assert_eq!(s.renewing, None);
}

fn ctrl(c: char, now: i64) -> Msg {
    Msg::Key {
        key: KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL),
        now,
    }
}

/// The loop's report that it handed `effect` to its worker at `since`.
fn calling(effect: &Effect, since: i64) -> Msg {
    Msg::Calling(Some(Call {
        what: effect.describe(),
        writes: effect.writes(),
        since,
    }))
}

fn busy() -> StoreError {
    StoreError::Busy("database is locked (another program held the write lock too long)".into())
}

#[test]
fn a_change_under_way_refuses_another_while_views_help_and_scrolling_go_on() {
    let mut s = holding();
    update(&mut s, key('c', T0));
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert!(matches!(&fx[..], [Effect::Finish { id: 42, .. }]));
    assert_eq!(s.doing.as_ref().unwrap().what, "completing #42");
    update(&mut s, calling(&fx[0], T0));

    // A second change is refused, and says why.
    for c in ['n', 'r', 's'] {
        assert_eq!(update(&mut s, key(c, T0 + 100)), vec![], "{c}");
        assert_eq!(
            s.status.as_ref().unwrap().text,
            "Not yet: still completing #42 (one change at a time)"
        );
    }
    // Confirming another dialog keeps it open, with what was typed.
    update(&mut s, key('f', T0 + 200));
    for c in "no toner".chars() {
        update(&mut s, key(c, T0 + 200));
    }
    assert_eq!(update(&mut s, code(KeyCode::Enter, T0 + 300)), vec![]);
    let d = s.dialog.as_ref().unwrap();
    assert_eq!(d.value(0), "no toner");
    assert_eq!(
        d.error.as_deref(),
        Some("Still completing #42: Enter again once it is done")
    );
    update(&mut s, code(KeyCode::Esc, T0 + 300));

    // Everything else works: scrolling, views, help.
    let fx = update(&mut s, key('2', T0 + 500));
    assert_eq!(s.view, View::Mine);
    assert!(matches!(&fx[..], [Effect::Refresh(_)]), "{fx:?}");
    update(&mut s, key('?', T0 + 600));
    update(&mut s, key('j', T0 + 650));
    assert_eq!(s.help, Some(1), "help opens and scrolls");
    update(&mut s, code(KeyCode::Esc, T0 + 700));
    assert!(s.help.is_none());

    // The answer ends it; the next change goes out.
    update(
        &mut s,
        Msg::Finished {
            id: 42,
            what: Finish::Complete(Saying::default()),
            result: Ok(()),
        },
    );
    assert!(s.doing.is_none());
    let fx = update(&mut s, key('n', T0 + 800));
    assert!(matches!(&fx[..], [Effect::TakeNext(_)]), "{fx:?}");
    assert_eq!(s.doing.as_ref().unwrap().what, "taking the next item");
}

#[test]
fn the_waiting_line_says_what_waits_on_what_and_for_how_long() {
    let mut s = holding();
    update(&mut s, key('r', T0));
    update(&mut s, code(KeyCode::Enter, T0));
    let release = Effect::Finish {
        id: 42,
        token: 3,
        what: Finish::Release(Saying::default()),
        notes: None,
    };
    update(&mut s, calling(&release, T0));
    update(&mut s, Msg::Tick { now: T0 + 900 });
    assert_eq!(s.waiting(), None, "quick calls are not announced");
    update(&mut s, Msg::Tick { now: T0 + 12_400 });
    assert_eq!(
        s.waiting().as_deref(),
        Some("Releasing #42: waiting for the database — another program holds it (12 s)")
    );
    // A refusal beside it is short: the line already says what is under way.
    update(&mut s, key('n', T0 + 12_500));
    assert_eq!(s.status.as_ref().unwrap().text, "One change at a time");

    // A read does not wait for a writer's lock; it just says how long.
    let mut r = state();
    let refresh = Effect::Refresh(caseload::app::RefreshRequest {
        view: View::Queue,
        list: None,
        filter: None,
        stats: false,
        figures: None,
        checks: vec![],
        takeable: None,
        role: false,
    });
    update(&mut r, calling(&refresh, T0));
    update(&mut r, Msg::Tick { now: T0 + 3_000 });
    assert_eq!(
        r.waiting().as_deref(),
        Some("Refreshing the screen: waiting for the database (3 s)")
    );
    update(&mut r, Msg::Calling(None));
    assert_eq!(r.waiting(), None);
}

#[test]
fn countdowns_and_warnings_keep_ticking_while_a_call_waits() {
    let mut s = holding();
    let fx = update(&mut s, key('n', T0));
    update(&mut s, calling(&fx[0], T0));
    update(
        &mut s,
        Msg::Tick {
            now: T0 + 9 * MIN + 30_000,
        },
    );
    let alerts = s.lock_alerts();
    assert_eq!(alerts.len(), 1);
    assert_eq!(alerts[0].ms, 30_000, "the warning counts down meanwhile");
    assert_eq!(
        s.waiting().as_deref(),
        Some("Taking the next item: waiting for the database — another program holds it (570 s)")
    );
    update(
        &mut s,
        Msg::Tick {
            now: T0 + 10 * MIN + 1_000,
        },
    );
    assert!(s.lock_alerts()[0].expired, "and expiry is flagged");
}

#[test]
fn a_change_that_fails_after_the_patience_brings_back_its_dialog_as_typed() {
    let mut s = holding();
    update(&mut s, key('f', T0));
    for c in "printer gone".chars() {
        update(&mut s, key(c, T0));
    }
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert!(s.dialog.is_none());
    let Effect::Finish { what, .. } = fx[0].clone() else {
        panic!("{fx:?}")
    };
    update(
        &mut s,
        Msg::Finished {
            id: 42,
            what,
            result: Err(busy()),
        },
    );
    assert!(s.doing.is_none());
    let d = s.dialog.as_ref().expect("the dialog is back");
    assert!(matches!(d.pending, Pending::Fail { id: 42, token: 3 }));
    assert_eq!(d.value(0), "printer gone", "with the reason as typed");
    assert!(
        d.error
            .as_deref()
            .unwrap()
            .contains("another program held the write lock too long")
            && d.error
                .as_deref()
                .unwrap()
                .ends_with("Enter tries again, Esc cancels"),
        "{:?}",
        d.error
    );
    let fx = update(&mut s, code(KeyCode::Enter, T0 + 1000));
    assert!(
        matches!(&fx[..], [Effect::Finish { id: 42, what: Finish::Fail(r), .. }] if r.text.as_deref() == Some("printer gone")),
        "Enter tries again: {fx:?}"
    );

    // A refusal (the lock was lost meanwhile) is not worth retrying: no dialog.
    update(
        &mut s,
        Msg::Finished {
            id: 42,
            what: Finish::Fail(Saying::of("printer gone", None)),
            result: Err(StoreError::LockLost {
                id: 42,
                why: caseload::domain::NoLock::HeldBy("bob".into()),
            }),
        },
    );
    assert!(s.dialog.is_none());
    assert!(s.status.as_ref().unwrap().text.contains("bob holds it now"));
}

#[test]
fn notes_typed_while_a_save_waits_are_kept_when_it_fails() {
    let mut s = holding();
    update(&mut s, key('e', T0));
    for c in "called".chars() {
        update(&mut s, key(c, T0));
    }
    let fx = update(&mut s, ctrl('s', T0));
    assert!(matches!(&fx[..], [Effect::SaveNotes { text, .. }] if text == "called"));
    update(&mut s, calling(&fx[0], T0));
    // The editor takes more typing while the save waits; a second save is refused.
    for c in " back".chars() {
        update(&mut s, key(c, T0 + 500));
    }
    assert_eq!(update(&mut s, ctrl('s', T0 + 600)), vec![]);
    assert_eq!(s.editor.as_ref().unwrap().buf.text(), "called back");
    update(
        &mut s,
        Msg::NotesSaved {
            id: 42,
            text: "called".into(),
            result: Err(busy()),
        },
    );
    let st = s.status.as_ref().unwrap();
    assert!(st.error && st.text.ends_with("your text is kept"), "{st:?}");
    let ed = s.editor.as_ref().unwrap();
    assert_eq!(ed.buf.text(), "called back");
    assert!(!ed.saving);
    assert_eq!(s.drafts.get(&42).map(String::as_str), Some("called"));
    // Ctrl-S now saves all of it.
    let fx = update(&mut s, ctrl('s', T0 + 700));
    assert!(matches!(&fx[..], [Effect::SaveNotes { text, .. }] if text == "called back"));
}

#[test]
fn a_failed_call_is_answered_for_every_effect() {
    // What the loop sends back when its worker cannot run an effect: each one ends in the
    // message its screen state waits for, so nothing stays "under way" for ever.
    let mut s = holding();
    let fx = update(&mut s, key('n', T0));
    for m in fx[0].clone().failed(busy()) {
        update(&mut s, m);
    }
    assert!(s.doing.is_none());
    assert!(s.status.as_ref().unwrap().error);
}

#[test]
fn a_window_moved_before_its_rows_arrive_shows_nothing_stale_and_takes_nothing() {
    let mut s = state();
    update(
        &mut s,
        Msg::Refreshed(Box::new(Snapshot {
            view: Some(View::Queue),
            rows: (1..=26).map(|i| item(i, None, 0, 0)).collect(),
            total: 100,
            offset: 0,
            ..Snapshot::default()
        })),
    );
    for _ in 0..26 {
        update(&mut s, key('j', T0));
    }
    // The window moved one row; the refresh for it has not been answered.
    let p = &s.panes.queue;
    assert_eq!((p.offset, p.rows_at, p.selected), (1, 0, 26));
    let window: Vec<Option<i64>> = p.window(26).map(|(_, i)| i.map(|i| i.id)).collect();
    assert_eq!(window[0], Some(2), "loaded rows stay where they belong");
    assert_eq!(window[25], None, "the new row is not shown as another");
    assert_eq!(p.selected_item(), None);
    assert_eq!(update(&mut s, code(KeyCode::Enter, T0)), vec![]);
    assert_eq!(
        s.status.as_ref().unwrap().text,
        "That row is not loaded yet"
    );
    update(&mut s, key('k', T0));
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert_eq!(fx, vec![Effect::Take(26)], "a loaded row is taken as shown");
}

#[test]
fn the_detail_history_shows_who_really_used_a_name() {
    let mut s = state();
    let mut borrowed = event(EventKind::Locked, "importer", T0);
    borrowed.os_user = "svc".into();
    let own = event(EventKind::Noted, "alice", T0);
    update(
        &mut s,
        Msg::Opened {
            taken: false,
            result: Ok((item(42, None, 0, 0), vec![borrowed, own])),
        },
    );
    let d: &Detail = s.detail.as_ref().unwrap();
    assert!(
        d.lines
            .iter()
            .any(|l| l.text.contains("locked     importer (as svc)"))
    );
    assert!(
        d.lines
            .iter()
            .any(|l| l.text.contains("noted      alice") && !l.text.contains("(as"))
    );
}
