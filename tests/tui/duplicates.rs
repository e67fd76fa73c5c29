//! The detail's "Possibly the same" box (issue 27): `update` with a fixed clock (the
//! candidates asked of the store worker when an item opens, `D` into the box, Space
//! looks, `M` asks before merging, `N` says not the same), the box on a TestBackend
//! screen, and a session over a real SQLite file that merges from the box.

use std::time::Duration;

use caseload::app::{Effect, Held, Msg, Pending, State, update};
use caseload::domain::duplicates::Candidate;
use caseload::domain::{EventKind, ItemState};
use caseload::store::{Reads, Writes};
use ratatui::crossterm::event::KeyCode;

use crate::support::backend::Adds;
use crate::support::tui::{self as tui, Clock, Db, T0, add_items, item, screen, start};
use crate::update::{code, event, key, state};

fn candidate(id: i64, title: &str, keys: &[&str], sim: f64) -> Candidate {
    Candidate {
        id,
        title: title.into(),
        state: ItemState::Done,
        finished_by: Some("bob".into()),
        keys: keys.iter().map(|k| k.to_string()).collect(),
        text: Some(("title".into(), sim)),
    }
}

/// Alice holds #42 and has it open; returns the effects of opening it.
fn working() -> (State, Vec<Effect>) {
    let mut s = state();
    let it = item(42, Some("alice"), T0, 3);
    s.held.insert(42, Held::of(&it));
    let fx = update(
        &mut s,
        Msg::Opened {
            taken: true,
            result: Ok((it, vec![event(EventKind::Locked, "alice", T0)])),
        },
    );
    (s, fx)
}

fn with_candidates() -> State {
    let (mut s, _) = working();
    update(
        &mut s,
        Msg::Similar {
            id: 42,
            result: Ok(vec![
                candidate(7, "Brightwater Tools Ltd", &["vat"], 0.9),
                candidate(9, "Brightwater Tools Limited", &[], 0.66),
            ]),
        },
    );
    s
}

#[test]
fn opening_an_item_asks_the_worker_for_its_candidates() {
    let (s, fx) = working();
    assert!(fx.contains(&Effect::Similar(42)), "{fx:?}");
    // Nothing is shown until they come; none is shown when there are none.
    assert!(!screen(&s).contains("Possibly the same"));
    let mut s = s;
    update(
        &mut s,
        Msg::Similar {
            id: 42,
            result: Ok(vec![]),
        },
    );
    assert!(!screen(&s).contains("Possibly the same"));
    // Candidates of an item no longer open are dropped.
    update(
        &mut s,
        Msg::Similar {
            id: 41,
            result: Ok(vec![candidate(7, "x", &["vat"], 0.9)]),
        },
    );
    assert!(!screen(&s).contains("Possibly the same"));
}

#[test]
fn the_box_shows_under_the_fields_with_why_state_and_who() {
    let s = with_candidates();
    let text = screen(&s);
    assert!(
        text.contains("Possibly the same (2)  D to choose one"),
        "{text}"
    );
    assert!(
        text.contains("#7  done by bob  Brightwater Tools Ltd  (same vat, title 0.90)"),
        "{text}"
    );
    assert!(text.contains("#9  done by bob  Brightwater Tools Limited  (title 0.66)"));
}

#[test]
fn keys_move_into_the_box_look_merge_and_say_not_the_same() {
    let mut s = with_candidates();
    // Space outside the box is not the box's.
    assert!(s.similar.as_ref().unwrap().focus.is_none());
    update(&mut s, key('D', T0));
    assert_eq!(s.similar.as_ref().unwrap().focus, Some(0));
    update(&mut s, code(KeyCode::Down, T0));
    assert_eq!(s.similar.as_ref().unwrap().focus, Some(1));
    update(&mut s, code(KeyCode::Down, T0));
    assert_eq!(
        s.similar.as_ref().unwrap().focus,
        Some(1),
        "stays on the last"
    );
    update(&mut s, key('k', T0));
    // Space looks at the candidate read-only.
    let fx = update(&mut s, key(' ', T0));
    assert_eq!(fx, vec![Effect::Open(7)]);
    // M asks first; Enter merges with the holder's token and the reason typed.
    let fx = update(&mut s, key('M', T0));
    assert!(fx.is_empty(), "{fx:?}");
    let d = s.dialog.as_ref().expect("a confirmation");
    assert_eq!(
        d.pending,
        Pending::Merge {
            id: 42,
            into: 7,
            token: Some(3)
        }
    );
    assert!(screen(&s).contains("Merge #42 into #7?"));
    for c in "same vat".chars() {
        update(&mut s, key(c, T0));
    }
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert_eq!(
        fx,
        vec![Effect::Merge {
            id: 42,
            into: 7,
            token: Some(3),
            reason: Some("same vat".into()),
        }]
    );
    let fx = update(
        &mut s,
        Msg::Merged {
            id: 42,
            into: 7,
            result: Ok(()),
        },
    );
    assert!(fx.contains(&Effect::Open(7)), "the survivor opens: {fx:?}");
    assert!(!s.held.contains_key(&42));
}

#[test]
fn not_the_same_takes_the_candidate_out_of_the_box() {
    let mut s = with_candidates();
    update(&mut s, key('D', T0));
    let fx = update(&mut s, key('N', T0));
    assert_eq!(fx, vec![Effect::NotSame { id: 42, other: 7 }]);
    update(
        &mut s,
        Msg::NotSame {
            id: 42,
            other: 7,
            result: Ok(()),
        },
    );
    let text = screen(&s);
    assert!(text.contains("Possibly the same (1)"), "{text}");
    assert!(!text.contains("#7  done"), "{text}");
    assert_eq!(s.similar.as_ref().unwrap().focus, Some(0));
    // Esc leaves the box; the pane's keys are the pane's again.
    update(&mut s, code(KeyCode::Esc, T0));
    assert!(s.similar.as_ref().unwrap().focus.is_none());
    assert!(s.detail.is_some(), "Esc left the box, not the item");
}

#[test]
fn help_lists_the_boxs_keys() {
    let mut s = with_candidates();
    update(&mut s, key('?', T0));
    let mut all = String::new();
    for _ in 0..40 {
        all.push_str(&screen(&s));
        update(&mut s, code(KeyCode::PageDown, T0));
    }
    assert!(all.contains("Possibly the same"), "{all}");
    assert!(all.contains("merge this item into the candidate"), "{all}");
    assert!(all.contains("not the same: never offered again"), "{all}");
}

/// Over a real SQLite file: alice takes a supplier whose VAT number another record has,
/// sees the box, merges into it from the box; the store has both events.
#[test]
fn a_session_merges_from_the_box() {
    let db = Db::new();
    let clock = Clock::at(T0);
    let mut sup = db.store("sup", &clock);
    sup.set_queue("q", &Default::default(), true).unwrap();
    let key_field = caseload::domain::queue_fields::FieldChange {
        kind: Some(caseload::domain::queue_fields::FieldType::Text),
        dedupe: Some(Some(caseload::domain::duplicates::Dedupe::Key)),
        ..Default::default()
    };
    sup.define_field("q", "vat", &key_field).unwrap();
    let ids = add_items(&mut sup, "q", &["Brightwater Tools Ltd", "Harbour Paper"]);
    let mut dup = caseload::domain::NewItem::titled("BRIGHTWATER TOOLS");
    dup.queue = "q".into();
    dup.params = r#"{"vat": "gb 123"}"#.into();
    let dup = sup.add(&dup).unwrap().id;
    // The first supplier gets the same VAT number under bob's lock.
    let mut bob = db.store("bob", &clock);
    let t = bob.take(ids[0]).unwrap().lock_token;
    bob.set_fields(ids[0], t, &[("vat".into(), "GB-123".into())])
        .unwrap();
    bob.complete(ids[0], t, None).unwrap();

    let mut s = start(db.store("alice", &clock), &clock, 110, 30, true);
    s.step(tui::key(':'));
    tui::type_text(&mut s, &dup.to_string());
    s.step(tui::code(KeyCode::Enter));
    s.settle(Duration::from_secs(60));
    s.step(tui::key('t'));
    s.settle(Duration::from_secs(60));
    let text = screen(&s.state);
    assert!(text.contains("Possibly the same (1)"), "{text}");
    assert!(
        text.contains("done by bob  Brightwater Tools Ltd  (same vat"),
        "{text}"
    );
    s.step(tui::key('D'));
    s.step(tui::key('M'));
    s.step(tui::code(KeyCode::Enter));
    s.settle(Duration::from_secs(60));
    let gone = sup.item(dup).unwrap();
    assert_eq!(gone.state, ItemState::Cancelled);
    let last = sup.history(dup).unwrap().pop().unwrap();
    assert_eq!(last.detail["duplicate_of"], ids[0]);
    assert_eq!(last.actor, "alice");
    let kept = sup.history(ids[0]).unwrap().pop().unwrap();
    assert_eq!(kept.detail["merged_in"], dup);
    let text = screen(&s.state);
    assert!(
        text.contains(&format!("Merged #{dup} into #{}", ids[0])),
        "{text}"
    );
}
