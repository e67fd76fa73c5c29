//! The TUI as a person reads and types it: local times, narrow screens, keys that match
//! habits. `app::update` with a fixed clock, and screens drawn into a `TestBackend`.

use crate::support::backend::Adds;
use caseload::app::{Effect, Msg, State, update};
use caseload::domain::NewItem;
use caseload::domain::time::Zone;
use caseload::store::Writes;
use chrono::FixedOffset;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::support::MIN;
use crate::support::tui::{
    Clock, Db, T0, add_items, code, item, key as press, screen, start, type_text,
};

const HOUR: i64 = 60 * MIN;

fn key(c: char) -> Msg {
    Msg::Key {
        key: KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
        now: T0,
    }
}

fn zone(hours: i32) -> Zone {
    Zone::Fixed(FixedOffset::east_opt(hours * 3600).unwrap())
}

fn activity_since(s: &mut State) -> i64 {
    update(s, key('3'));
    let effects = update(s, key('t'));
    effects
        .iter()
        .find_map(|e| match e {
            Effect::Activity { since, .. } => Some(*since),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no activity effect in {effects:?}"))
}

#[test]
fn today_is_the_local_day_of_the_screen_zone() {
    // 10:00 UTC is 11:00 in UTC+1 (the day began at 23:00 UTC the evening before) ...
    let mut s = State::new("alice", T0, 100, 30, true);
    assert_eq!(activity_since(&mut s), T0 - 10 * HOUR, "UTC: midnight UTC");
    let mut s = State::new("alice", T0, 100, 30, true);
    s.zone = zone(1);
    assert_eq!(activity_since(&mut s), T0 - 11 * HOUR, "UTC+1");
    // ... and 22:00 on the 21st in UTC-12, whose day began at 12:00 UTC on the 21st.
    let mut s = State::new("alice", T0, 100, 30, true);
    s.zone = zone(-12);
    assert_eq!(activity_since(&mut s), T0 - 22 * HOUR, "UTC-12");
}

#[test]
fn the_detail_pane_shows_local_times() {
    let mut s = State::new("alice", T0, 100, 30, true);
    s.zone = zone(2);
    let it = item(7, Some("alice"), T0, 1);
    update(
        &mut s,
        Msg::Opened {
            taken: true,
            result: Ok((it, vec![])),
        },
    );
    let d = s.detail.as_ref().expect("open");
    let meta = d
        .lines
        .iter()
        .find(|l| l.text.starts_with("created "))
        .expect("a created line");
    // Created 09:00 UTC = 11:00 in UTC+2.
    assert!(meta.text.contains("2026-11-22 11:00"), "{meta:?}");
}

/// Long titles; bob holds #2 (25 minutes left), carol's lock on #3 expired 15 minutes ago,
/// #5 is done and was due an hour ago.
fn narrow_world() -> (Db, Clock) {
    let db = Db::new();
    let clock = Clock::at(T0 - 120 * MIN);
    let mut feeder = db.store("feeder", &clock);
    add_items(
        &mut feeder,
        "helpdesk",
        &[
            "Printer on floor 3 jams when printing double-sided from the finance laptops",
            "VPN drops every 10 minutes for everybody working from the Ghent office",
            "New laptop for Sam, who starts on Monday in the verification team",
        ],
    );
    let mut due = NewItem::titled("Verify VAT number DE123456789 for supplier Nordlicht GmbH");
    due.queue = "verification".into();
    due.due_at = Some(T0 - 30 * MIN);
    feeder.add(&due).unwrap();
    let mut done = NewItem::titled("Pick & pack order #A-1001 (3 items, gift wrapped)");
    done.queue = "fulfilment".into();
    done.due_at = Some(T0 - 60 * MIN);
    let done = feeder.add(&done).unwrap().id;
    let mut dave = db.store("dave", &clock);
    let it = dave.take(done).unwrap();
    dave.complete(done, it.lock_token, None).unwrap();
    clock.set(T0 - 45 * MIN);
    db.store("carol", &clock).take(3).unwrap();
    clock.set(T0 - 5 * MIN);
    db.store("bob", &clock).take(2).unwrap();
    clock.set(T0);
    (db, clock)
}

/// The TITLE cells of a list screen (the text between the QUEUE and LOCK columns'
/// starts, as the header places them).
fn title_width(text: &str) -> usize {
    let header = text.lines().nth(1).unwrap();
    let start = header.find("TITLE").unwrap();
    let end = header.find("LOCK").unwrap();
    end - start - 1
}

#[test]
fn at_80_columns_the_title_gets_the_room_and_the_rest_is_abbreviated() {
    let (db, clock) = narrow_world();
    let s = start(db.store("alice", &clock), &clock, 80, 12, true);
    let text = screen(&s.state);
    insta::assert_snapshot!("queue_80", text);
    assert!(title_width(&text) >= 30, "{text}");
    assert!(text.contains("bob 25m"), "{text}");
    assert!(text.contains("EXP carol +15m"), "{text}");
    assert!(text.contains("LATE 30m"), "{text}");
    assert!(text.contains("Printer on floor 3 jams"), "{text}");
    assert!(text.contains('…'), "a cut title ends in …: {text}");
}

#[test]
fn at_60_columns_the_title_still_shows() {
    let (db, clock) = narrow_world();
    let s = start(db.store("alice", &clock), &clock, 60, 12, true);
    let text = screen(&s.state);
    insta::assert_snapshot!("queue_60", text);
    assert!(title_width(&text) >= 20, "{text}");
    assert!(text.contains("Printer on floor"), "{text}");
    assert!(text.contains("bob 25m"), "{text}");
    for line in text.lines() {
        assert!(line.chars().count() <= 60, "{line}");
    }
    // The key hints leave out what does not fit whole, and keep `? help`.
    let keys = text.lines().last().unwrap();
    assert!(keys.contains("? help"), "{keys}");
    assert!(
        !keys.trim_end().ends_with(" q"),
        "no hint cut in half: {keys}"
    );
    let mut s = s;
    s.step(press('3'));
    let text = screen(&s.state);
    insta::assert_snapshot!("locks_60", text);
    assert!(text.contains("EXP +15m"), "{text}");
    assert!(text.contains("VPN drops"), "{text}");
}

#[test]
fn wide_screens_keep_every_column_at_full_size() {
    let (db, clock) = narrow_world();
    let s = start(db.store("alice", &clock), &clock, 160, 12, true);
    let text = screen(&s.state);
    assert!(text.contains("bob, 25m00s left"), "{text}");
    assert!(text.contains("EXPIRED carol +15m00s"), "{text}");
    assert!(text.contains("AGE") && text.contains("QUEUE"), "{text}");
}

#[test]
fn finished_items_are_neither_free_nor_late() {
    let (db, clock) = narrow_world();
    let mut s = start(db.store("alice", &clock), &clock, 100, 12, true);
    s.step(press('/'));
    type_text(&mut s, "state:done");
    s.step(code(KeyCode::Enter));
    s.settle(std::time::Duration::from_secs(60));
    let text = screen(&s.state);
    let row = text
        .lines()
        .find(|l| l.contains("Pick & pack"))
        .unwrap_or_else(|| panic!("the done item is listed: {text}"));
    assert!(row.trim_end().ends_with("done"), "{row}");
    assert!(!row.contains("LATE") && !row.contains("free"), "{row}");
}

// Keys that match habits: `update` alone, with a fixed clock.

fn at(c: char, now: i64) -> Msg {
    Msg::Key {
        key: KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
        now,
    }
}

fn with(code: KeyCode, mods: KeyModifiers, now: i64) -> Msg {
    Msg::Key {
        key: KeyEvent::new(code, mods),
        now,
    }
}

fn ctrl_at(c: char, now: i64) -> Msg {
    with(KeyCode::Char(c), KeyModifiers::CONTROL, now)
}

/// Alice has just taken #42 and has it open.
fn holding() -> State {
    let mut s = State::new("alice", T0, 100, 30, true);
    update(
        &mut s,
        Msg::Opened {
            taken: true,
            result: Ok((item(42, Some("alice"), T0, 3), vec![])),
        },
    );
    assert!(s.held.contains_key(&42) && s.detail.is_some());
    s
}

fn takes_next(fx: &[Effect]) -> bool {
    fx.iter().any(|e| matches!(e, Effect::TakeNext(_)))
}

#[test]
fn q_backs_out_of_an_item_and_quits_only_from_a_list() {
    let mut s = holding();
    update(&mut s, at('q', T0));
    assert!(s.detail.is_none(), "q closed the item");
    assert!(!s.quit, "... and did not quit");
    update(&mut s, at('q', T0));
    assert!(s.quit, "q in a list quits");
    let mut s = holding();
    update(&mut s, ctrl_at('c', T0));
    assert!(s.quit, "Ctrl-C quits from anywhere");
}

#[test]
fn a_second_n_right_after_a_take_takes_nothing_and_says_so() {
    let mut s = State::new("alice", T0, 100, 30, true);
    assert!(takes_next(&update(&mut s, at('n', T0))));
    update(
        &mut s,
        Msg::Opened {
            taken: true,
            result: Ok((item(42, Some("alice"), T0, 3), vec![])),
        },
    );
    let fx = update(&mut s, at('n', T0 + 400));
    assert!(!takes_next(&fx), "a bounce takes nothing: {fx:?}");
    let st = s.status.as_ref().unwrap();
    assert_eq!(
        st.text,
        "You just took #42; press n again to take another item"
    );
    assert!(
        takes_next(&update(&mut s, at('n', T0 + 600))),
        "a deliberate third n takes the next"
    );
    // After a moment, n takes at once.
    let mut s = holding();
    s.last_take_next = Some(T0);
    assert!(takes_next(&update(&mut s, at('n', T0 + 2_000))));
}

#[test]
fn shift_tab_and_paging_keys() {
    let mut s = State::new("alice", T0, 100, 30, true);
    update(&mut s, with(KeyCode::BackTab, KeyModifiers::SHIFT, T0));
    assert_eq!(s.view, caseload::app::View::Stats, "Shift-Tab goes back");
    update(&mut s, with(KeyCode::BackTab, KeyModifiers::SHIFT, T0));
    assert_eq!(s.view, caseload::app::View::Locks);
    update(&mut s, at('1', T0));
    s.panes.queue.total = 500;
    let page = caseload::app::layout::list_rows(&s, caseload::app::View::Queue);
    update(&mut s, ctrl_at('f', T0));
    assert_eq!(s.panes.queue.selected, page, "Ctrl-F: a page down");
    update(&mut s, ctrl_at('b', T0));
    assert_eq!(s.panes.queue.selected, 0, "Ctrl-B: a page up");
    update(&mut s, ctrl_at('d', T0));
    assert_eq!(s.panes.queue.selected, page / 2, "Ctrl-D: half a page down");
    update(&mut s, ctrl_at('d', T0));
    update(&mut s, ctrl_at('u', T0));
    assert_eq!(s.panes.queue.selected, page / 2, "Ctrl-U: half a page up");
}

#[test]
fn ctrl_z_suspends_from_anywhere_and_keeps_the_typing() {
    let mut s = holding();
    update(&mut s, ctrl_at('z', T0));
    assert!(s.suspend, "from the item");
    s.suspend = false;
    update(&mut s, at('e', T0));
    for c in "call Kim".chars() {
        update(&mut s, at(c, T0));
    }
    update(&mut s, ctrl_at('z', T0));
    assert!(s.suspend, "from the editor");
    assert_eq!(s.editor.as_ref().unwrap().buf.text(), "call Kim");
}

#[test]
fn status_lines_fade_errors_later() {
    let mut s = holding();
    assert!(s.status.is_some(), "Took #42: …");
    update(&mut s, Msg::Tick { now: T0 + 9_000 });
    assert!(s.status.is_some(), "still there after 9 s");
    update(&mut s, Msg::Tick { now: T0 + 10_000 });
    assert!(s.status.is_none(), "gone after 10 s");
    update(
        &mut s,
        Msg::Finished {
            id: 42,
            what: caseload::app::Finish::Release(Default::default()),
            result: Err(caseload::store::StoreError::Database(
                "disk I/O error".into(),
            )),
        },
    );
    update(&mut s, Msg::Tick { now: T0 + 30_000 });
    assert!(
        s.status.as_ref().is_some_and(|st| st.error),
        "errors stay longer"
    );
    update(&mut s, Msg::Tick { now: T0 + 40_000 });
    assert!(s.status.is_none());
}

#[test]
fn release_and_complete_say_when_they_saved_draft_notes() {
    let mut s = holding();
    update(&mut s, at('e', T0));
    for c in "called".chars() {
        update(&mut s, at(c, T0));
    }
    update(&mut s, with(KeyCode::Esc, KeyModifiers::NONE, T0)); // kept as a draft
    update(&mut s, at('r', T0));
    let fx = update(&mut s, with(KeyCode::Enter, KeyModifiers::NONE, T0));
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::Finish { notes: Some(n), .. } if n == "called")),
        "{fx:?}"
    );
    update(
        &mut s,
        Msg::NotesSaved {
            id: 42,
            text: "called".into(),
            result: Ok(()),
        },
    );
    update(
        &mut s,
        Msg::Finished {
            id: 42,
            what: caseload::app::Finish::Release(Default::default()),
            result: Ok(()),
        },
    );
    assert_eq!(
        s.status.unwrap().text,
        "Released #42; your draft notes were saved first — u undo (30 s)"
    );
    // Without a draft, nothing is said about notes.
    let mut s = holding();
    update(&mut s, at('c', T0));
    let fx = update(&mut s, with(KeyCode::Enter, KeyModifiers::NONE, T0));
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::Finish { notes: None, .. })),
        "{fx:?}"
    );
    update(
        &mut s,
        Msg::Finished {
            id: 42,
            what: caseload::app::Finish::Complete(Default::default()),
            result: Ok(()),
        },
    );
    assert_eq!(s.status.unwrap().text, "Completed #42 — u undo (30 s)");
}

#[test]
fn prompts_take_ctrl_u_w_a_and_multi_line_pastes() {
    let mut s = State::new("alice", T0, 100, 30, true);
    update(&mut s, at('/', T0));
    for c in "queue:helpdesk printer jam".chars() {
        update(&mut s, at(c, T0));
    }
    update(&mut s, ctrl_at('w', T0));
    assert_eq!(
        s.filter_prompt.as_ref().unwrap().text(),
        "queue:helpdesk printer "
    );
    update(&mut s, ctrl_at('a', T0));
    update(&mut s, at('x', T0));
    update(&mut s, ctrl_at('e', T0));
    update(&mut s, with(KeyCode::Left, KeyModifiers::CONTROL, T0));
    update(&mut s, ctrl_at('u', T0));
    assert_eq!(s.filter_prompt.as_ref().unwrap().text(), "printer ");
    update(
        &mut s,
        Msg::Paste {
            text: "two\nlines".into(),
            now: T0,
        },
    );
    assert_eq!(
        s.filter_prompt.as_ref().unwrap().text(),
        "two linesprinter "
    );
    // The notes editor keeps pasted lines, and undo takes a paste back.
    let mut s = holding();
    update(&mut s, at('e', T0));
    update(
        &mut s,
        Msg::Paste {
            text: "line one\nline two".into(),
            now: T0,
        },
    );
    assert_eq!(s.editor.as_ref().unwrap().buf.lines().len(), 2);
    update(&mut s, with(KeyCode::Char('u'), KeyModifiers::ALT, T0));
    assert_eq!(s.editor.as_ref().unwrap().buf.text(), "");
}

/// Draws `s` and returns the screen and where the terminal cursor is.
fn draw(s: &State) -> (String, Option<(u16, u16)>) {
    use ratatui::Terminal;
    use ratatui::backend::{Backend, TestBackend};
    let mut t = Terminal::new(TestBackend::new(s.width, s.height)).unwrap();
    caseload::tui::draw(&mut t, s).unwrap();
    let text = crate::support::tui::buffer_text(t.backend());
    let cursor = t
        .backend_mut()
        .get_cursor_position()
        .ok()
        .map(|p| (p.x, p.y));
    (text, cursor)
}

#[test]
fn the_cursor_sits_right_after_wide_characters_in_every_prompt() {
    // The filter prompt.
    let mut s = State::new("alice", T0, 100, 20, true);
    update(&mut s, at('/', T0));
    for c in "東京 printer".chars() {
        update(&mut s, at(c, T0));
    }
    update(&mut s, with(KeyCode::Left, KeyModifiers::CONTROL, T0));
    let (text, cursor) = draw(&s);
    let row = text.lines().nth(18).unwrap();
    // (The screen text shows a wide character's second cell as a space.)
    let label = row.find('東').unwrap();
    let label_cells = row[..label].chars().count() as u16;
    // "東京 " is five cells wide: the cursor is on the p of printer.
    assert_eq!(cursor, Some((label_cells + 5, 18)), "{text}");
    // A dialog field.
    let mut s = holding();
    update(&mut s, at('f', T0));
    for c in "顧客不在".chars() {
        update(&mut s, at(c, T0));
    }
    let (text, cursor) = draw(&s);
    let (x, y) = cursor.expect("a cursor in the dialog");
    let line: Vec<char> = text.lines().nth(y as usize).unwrap().chars().collect();
    let field = text.lines().nth(y as usize).unwrap();
    assert!(field.contains("> 顧"), "{text}");
    let start = line.iter().position(|c| *c == '顧').unwrap() as u16;
    assert_eq!(x, start + 8, "four wide characters: eight cells");
}

#[test]
fn the_notes_editor_wraps_long_lines_and_shows_wide_text() {
    let mut s = holding();
    s.width = 60;
    s.height = 14;
    update(&mut s, at('e', T0));
    update(
        &mut s,
        Msg::Paste {
            text: "Called the customer about the printer on floor three; \
                   it jams on double-sided jobs from the finance laptops.\n\
                   お客様に電話しました。"
                .into(),
            now: T0,
        },
    );
    let (text, _) = draw(&s);
    insta::assert_snapshot!("notes_editor", text);
    assert!(
        text.contains("finance laptops."),
        "wrapped, not cut: {text}"
    );
    assert!(
        text.lines()
            .any(|l| l.replace(' ', "").contains("お客様に電話しました。")),
        "{text}"
    );
}

#[test]
fn at_60_columns_the_detail_title_and_the_status_line_end_in_an_ellipsis() {
    let (db, clock) = narrow_world();
    let mut s = start(db.store("alice", &clock), &clock, 60, 16, true);
    s.step(press('n'));
    let text = screen(&s.state);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[1].starts_with("#1 [helpdesk · pri 3] Printer"),
        "{text}"
    );
    assert!(lines[1].contains("… yours, 30m00s left"), "{text}");
    assert!(
        lines[14].starts_with("Took #1: Printer") && lines[14].ends_with('…'),
        "{text}"
    );
}

#[test]
fn ctrl_z_without_a_shell_to_come_back_to_keeps_running_and_says_why() {
    use crate::support::tui::{ctrl, drive};
    let (db, clock) = narrow_world();
    let mut s = start(db.store("alice", &clock), &clock, 100, 16, true);
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 16)).unwrap();
    // A script has no shell behind it, as a program started directly by sshd has none.
    let text = drive(&mut term, &mut s, vec![press('n'), ctrl('z')]);
    assert!(!s.state.suspend && !s.state.quit);
    assert!(text.contains("Ctrl-Z: no shell to come back to"), "{text}");
    assert!(
        text.contains("yours, 30m00s left"),
        "still working the item: {text}"
    );
}
