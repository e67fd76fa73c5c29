//! The list and the prompts: `/` searches as you type (off the UI thread, a moment after
//! the last key; the list says "Searching for …" until the new rows come, never showing
//! the older filter's rows, and nothing acts on a row meanwhile), Enter keeps the
//! filter and Esc puts back the one there was; a filter the store refuses is not shown
//! over the old rows; at 80 columns a filter leaves room for who you are and what you
//! hold; `s` on the last item not skipped yet takes one skipped before; a released item
//! waits behind the others, as a skipped one does.

use caseload::app::{Effect, Msg, Snapshot, View, update};
use ratatui::crossterm::event::KeyCode;

use crate::support::tui::{Clock, Db, T0, add_items, code, item, key, screen, start, type_text};
use crate::update::{code as code_at, key as key_at, state};

/// Alice's state with ten items listed in the Queue view.
fn listed() -> caseload::app::State {
    let mut s = state();
    let rows: Vec<_> = (1..=10).map(|id| item(id, None, 0, 0)).collect();
    update(
        &mut s,
        Msg::Refreshed(Box::new(Snapshot {
            view: Some(View::Queue),
            total: 10,
            rows,
            ..Snapshot::default()
        })),
    );
    s
}

fn refreshes(fx: &[Effect]) -> Vec<&caseload::app::RefreshRequest> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Refresh(r) => Some(r),
            _ => None,
        })
        .collect()
}

#[test]
fn the_filter_searches_as_you_type_and_esc_puts_back_the_one_there_was() {
    let mut s = listed();
    update(&mut s, key_at('/', T0));
    let mut fx = Vec::new();
    for (i, c) in "prin".chars().enumerate() {
        fx.extend(update(&mut s, key_at(c, T0 + 100 + i as i64 * 80)));
    }
    let last = T0 + 100 + 3 * 80;
    fx.extend(update(&mut s, Msg::Tick { now: last + 249 }));
    assert!(refreshes(&fx).is_empty(), "not while the keys come: {fx:?}");
    assert_eq!(s.wake_at(), Some(last + 250), "the loop comes back for it");
    let fx = update(&mut s, Msg::Tick { now: last + 250 });
    let asked = refreshes(&fx);
    assert_eq!(asked.len(), 1, "{fx:?}");
    assert_eq!(
        asked[0].list.as_ref().unwrap().text.as_deref(),
        Some("prin")
    );
    assert!(s.filter_prompt.is_some(), "still typing");
    // Until the answer comes, the older rows (of another filter) are not shown, nor
    // their position: the list says what it waits for.
    let shown = screen(&s);
    let header = shown.lines().next().unwrap();
    assert!(header.contains("searching…"), "{header}");
    assert!(!header.contains("/10"), "{header}");
    assert!(!shown.contains("Item "), "{shown}");
    assert!(shown.contains("Searching for “prin”…"), "{shown}");
    update(
        &mut s,
        Msg::Refreshed(Box::new(Snapshot {
            view: Some(View::Queue),
            filter: asked[0].filter.clone(),
            total: 1,
            rows: vec![item(3, None, 0, 0)],
            ..Snapshot::default()
        })),
    );
    let header = screen(&s).lines().next().unwrap().to_string();
    assert!(header.contains("filter: prin ·"), "{header}");
    assert!(!header.contains('…'), "{header}");
    // Esc: the filter there was, and its rows again.
    let fx = update(&mut s, code_at(KeyCode::Esc, last + 2_000));
    assert!(s.filter.text.is_none() && s.filter_prompt.is_none());
    assert_eq!(refreshes(&fx).len(), 1);

    // Enter keeps what was typed, at once.
    update(&mut s, key_at('/', T0 + 10_000));
    for c in "toner".chars() {
        update(&mut s, key_at(c, T0 + 10_050));
    }
    let fx = update(&mut s, code_at(KeyCode::Enter, T0 + 10_100));
    assert_eq!(s.filter.text.as_deref(), Some("toner"));
    assert_eq!(refreshes(&fx).len(), 1);
    assert_eq!(s.filter_before, None);
    // Enter again before the rows come takes nothing (the row selected is not on screen).
    let fx = update(&mut s, code_at(KeyCode::Enter, T0 + 10_200));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(screen(&s).contains("Searching…"), "{}", screen(&s));
}

/// A session over a real file: `queue:nosuch` is refused by the store, and the header
/// goes on naming the filter its rows answer to.
#[test]
fn a_refused_filter_is_not_shown_over_the_old_rows() {
    let db = Db::new();
    let clock = Clock::at(T0);
    let mut feeder = db.store("feeder", &clock);
    add_items(
        &mut feeder,
        "default",
        &["Printer jam", "Toner low", "Badge"],
    );
    let mut s = start(db.store("alice", &clock), &clock, 100, 20, false);
    s.step(key('/'));
    type_text(&mut s, "toner");
    s.step(code(KeyCode::Enter));
    assert!(
        screen(&s.state)
            .lines()
            .next()
            .unwrap()
            .contains("filter: toner")
    );
    s.step(key('/'));
    for _ in 0..5 {
        s.step(code(KeyCode::Backspace));
    }
    type_text(&mut s, "queue:nosuch");
    s.step(code(KeyCode::Enter));
    let shown = screen(&s.state);
    let header = shown.lines().next().unwrap();
    assert!(
        header.contains("filter: toner") && !header.contains("nosuch"),
        "{shown}"
    );
    assert!(shown.contains("Toner low"), "the old rows: {shown}");
    assert!(shown.contains("unknown queue 'nosuch'"), "{shown}");
    assert_eq!(s.state.filter.text.as_deref(), Some("toner"));
}

/// At 80 columns a long filter is cut short; who you are and what you hold stay.
#[test]
fn at_80_columns_a_filter_leaves_the_name_and_held_count() {
    let db = Db::new();
    let clock = Clock::at(T0);
    let mut feeder = db.store("feeder", &clock);
    add_items(&mut feeder, "default", &["Printer jam on the third floor"]);
    let mut s = start(db.store("alice", &clock), &clock, 80, 20, false);
    s.step(key('n'));
    s.step(key('q'));
    s.step(key('/'));
    type_text(&mut s, "printer jam third floor queue:default");
    s.step(code(KeyCode::Enter));
    let shown = screen(&s.state);
    let header = shown.lines().next().unwrap();
    assert!(header.ends_with("alice · 1 held"), "{header}");
    assert!(header.contains("filter: "), "{header}");
    assert!(header.chars().count() <= 80, "{header}");
}

/// Two free items: `s` on the second, the last not skipped yet, takes the first again
/// (today: "nothing to claim" while there was); it never hands back the item just skipped.
#[test]
fn skip_on_the_last_item_not_skipped_takes_one_skipped_before() {
    let db = Db::new();
    let clock = Clock::at(T0);
    let mut feeder = db.store("feeder", &clock);
    let ids = add_items(&mut feeder, "default", &["First", "Second"]);
    let mut s = start(db.store("alice", &clock), &clock, 100, 20, false);
    s.step(key('n'));
    assert_eq!(s.state.detail.as_ref().unwrap().item.id, ids[0]);
    s.step(key('s'));
    s.step(code(KeyCode::Enter));
    assert_eq!(s.state.detail.as_ref().unwrap().item.id, ids[1]);
    s.step(key('s'));
    s.step(code(KeyCode::Enter));
    let d = s.state.detail.as_ref().expect("an item taken");
    assert_eq!(d.item.id, ids[0], "the other free item");
    let status = &s.state.status.as_ref().unwrap().text;
    assert!(
        status.contains("the item you skipped or released is offered again"),
        "{status}"
    );
    // With one item only, a skip takes nothing back: that item is the one just skipped.
    let db = Db::new();
    let mut feeder = db.store("feeder", &clock);
    add_items(&mut feeder, "default", &["Only"]);
    let mut s = start(db.store("alice", &clock), &clock, 100, 20, false);
    s.step(key('n'));
    s.step(key('s'));
    s.step(code(KeyCode::Enter));
    assert!(s.state.detail.is_none());
    assert!(
        s.state
            .status
            .as_ref()
            .unwrap()
            .text
            .contains("nothing to claim")
    );
}

/// After `r`, `n` does not hand the same item straight back: it waits behind the others.
#[test]
fn a_released_item_waits_behind_the_others() {
    let db = Db::new();
    let clock = Clock::at(T0);
    let mut feeder = db.store("feeder", &clock);
    let ids = add_items(&mut feeder, "default", &["Urgent", "Later"]);
    let mut s = start(db.store("alice", &clock), &clock, 100, 20, false);
    s.step(key('n'));
    assert_eq!(s.state.detail.as_ref().unwrap().item.id, ids[0]);
    s.step(key('r'));
    s.step(code(KeyCode::Enter));
    assert!(s.state.detail.is_none());
    clock.advance(2_000);
    s.step(key('n'));
    assert_eq!(
        s.state.detail.as_ref().unwrap().item.id,
        ids[1],
        "not the item just released"
    );
    // With nothing else left, it is offered again.
    s.step(key('r'));
    s.step(code(KeyCode::Enter));
    clock.advance(2_000);
    s.step(key('n'));
    assert_eq!(s.state.detail.as_ref().unwrap().item.id, ids[0]);
}
