//! The detail's form (verification work): `update` with a fixed clock (moving between
//! fields, editing in place with the rule checked as typed, saving as one write,
//! checklist ticks, a lock lost while typing), TestBackend snapshots of the form, and a
//! session over a real SQLite file that saves a field and sees ✘ turn ✔.

use caseload::app::{Effect, FieldWrite, Held, Msg, Pending, Snapshot, State, update};
use caseload::domain::queue_fields::{FieldDef, FieldType, LineState};
use caseload::domain::{EventKind, Item, NoLock};
use caseload::store::StoreError;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::support::MIN;
use crate::support::tui::{T0, item, screen};
use crate::update::{code, event, key, lost_snapshot, state};

/// Queue `q`'s fields: a VAT number with a pattern, an e-mail, a required name, a
/// checklist of two lines.
pub(crate) fn defs() -> Vec<(String, FieldDef)> {
    let mut vat = FieldDef::new("vat", FieldType::Text);
    vat.pattern = Some("^[A-Z]{2}[0-9]{8,12}$".into());
    vat.label = Some("VAT number".into());
    let mut email = FieldDef::new("email", FieldType::Email);
    email.label = Some("E-mail".into());
    let mut name = FieldDef::new("name", FieldType::Text);
    name.required = true;
    name.label = Some("Legal name".into());
    let mut checks = FieldDef::new("checks", FieldType::Checklist);
    checks.choices = vec!["Registry checked".into(), "Called back".into()];
    [vat, email, name, checks]
        .into_iter()
        .map(|d| ("q".to_string(), d))
        .collect()
}

/// #42 of queue `q`, held by alice under token 3, with these params.
fn record(params: &str) -> Item {
    let mut it = item(42, Some("alice"), T0, 3);
    it.params = params.into();
    it
}

const BAD: &str =
    r#"{"vat":"HU118166O02","email":"a.b@example,com","name":"Nordlciht GmbH","source":"crm"}"#;

/// Alice holds #42 (a record that breaks two rules) and has it open; the fields are known.
fn working(params: &str) -> State {
    let mut s = state();
    update(
        &mut s,
        Msg::Refreshed(Box::new(Snapshot {
            fields: Some(defs()),
            ..Snapshot::default()
        })),
    );
    let it = record(params);
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

fn ctrl(c: char, now: i64) -> Msg {
    Msg::Key {
        key: KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL),
        now,
    }
}

fn typed(s: &mut State, text: &str) {
    for c in text.chars() {
        update(s, key(c, T0 + 1000));
    }
}

/// The screen's line that starts (after the focus mark) with `label`.
fn row(screen: &str, label: &str) -> String {
    screen
        .lines()
        .find(|l| l.trim_start_matches(['▸', ' ']).starts_with(label))
        .unwrap_or_else(|| panic!("no row {label} in\n{screen}"))
        .to_string()
}

#[test]
fn the_form_shows_each_field_with_a_tick_or_the_rule_it_breaks() {
    let s = working(BAD);
    let text = screen(&s);
    assert!(text.contains("Fields (3 break their rules)"), "{text}");
    let vat = row(&text, "VAT number");
    assert!(vat.contains("HU118166O02"), "{vat}");
    assert!(
        vat.contains("✘ does not match ^[A-Z]{2}[0-9]{8,12}$"),
        "{vat}"
    );
    assert!(row(&text, "E-mail").contains("✘ is not an e-mail address"));
    assert!(row(&text, "Legal name").ends_with('✔'), "{text}");
    assert!(row(&text, "checks").contains("0/2 ticked"), "{text}");
    assert!(row(&text, "[ ] Registry checked").contains("[ ]"));
    // The raw params still show the keys no field defines, and only those.
    let params = &text[text.find("Params").expect("the params section")..];
    assert!(params.contains("\"source\": \"crm\""), "{params}");
    assert!(!params.contains("HU118166O02"), "{params}");
    // The focus starts on the first field that breaks its rules.
    assert!(vat.starts_with('▸'), "{vat}");
    insta::assert_snapshot!("form", text);
}

#[test]
fn tab_and_the_arrows_move_between_fields_and_lines() {
    let mut s = working(BAD);
    s.height = 16;
    let focus = |s: &State| s.form.as_ref().map(|f| f.focus);
    update(&mut s, code(KeyCode::Tab, T0));
    assert_eq!(focus(&s), Some(1), "Tab: the e-mail");
    update(&mut s, code(KeyCode::Down, T0));
    update(&mut s, code(KeyCode::Down, T0));
    assert_eq!(focus(&s), Some(3), "the checklist");
    update(&mut s, code(KeyCode::Down, T0));
    update(&mut s, code(KeyCode::Down, T0));
    assert_eq!(focus(&s), Some(5), "its second line, the last slot");
    let scroll = s.detail.as_ref().unwrap().scroll;
    update(&mut s, code(KeyCode::Down, T0));
    assert_eq!(focus(&s), Some(5), "Down past the last scrolls instead");
    assert_eq!(s.detail.as_ref().unwrap().scroll, scroll + 1);
    update(&mut s, code(KeyCode::Tab, T0));
    assert_eq!(focus(&s), Some(0), "Tab goes round");
    update(&mut s, code(KeyCode::BackTab, T0));
    assert_eq!(focus(&s), Some(5));
    assert!(screen(&s).contains("▸   [ ] Called back"), "{}", screen(&s));
}

#[test]
fn a_field_is_edited_in_place_checked_as_typed_and_saved_in_one_write() {
    let mut s = working(BAD);
    update(&mut s, code(KeyCode::Enter, T0));
    let text = screen(&s);
    assert!(
        row(&text, "VAT number").contains("✘ does not match"),
        "{text}"
    );
    assert!(text.contains("Enter save"), "the hint line: {text}");
    // Enter on a value that breaks the rule saves nothing and says why.
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert!(fx.is_empty(), "{fx:?}");
    let said = &s.status.as_ref().unwrap().text;
    assert!(said.contains("VAT number does not match"), "{said}");
    // Ctrl-U clears the line (readline keys); the rule is checked at each key.
    update(&mut s, ctrl('u', T0));
    typed(&mut s, "HU1181");
    assert!(row(&screen(&s), "VAT number").contains("✘ does not match"));
    typed(&mut s, "6602");
    let now = screen(&s);
    assert!(row(&now, "VAT number").contains("HU11816602"), "{now}");
    assert!(row(&now, "VAT number").ends_with('✔'), "{now}");
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert_eq!(
        fx,
        vec![Effect::WriteField {
            id: 42,
            token: 3,
            write: FieldWrite::Value {
                field: "vat".into(),
                typed: "HU11816602".into()
            }
        }]
    );
    assert!(s.doing.is_some(), "one change at a time");
    assert!(row(&screen(&s), "VAT number").contains("saving…"));
    // The store's answer: the item as it is now, with the change in its history.
    let mut after = record(&BAD.replace("HU118166O02", "HU11816602"));
    after.lock_time = Some(T0);
    let mut changed = event(EventKind::FieldChanged, "alice", T0 + 1000);
    changed.detail = serde_json::json!({"field": "vat", "from": "HU118166O02", "to": "HU11816602"});
    update(
        &mut s,
        Msg::FieldWritten {
            id: 42,
            write: FieldWrite::Value {
                field: "vat".into(),
                typed: "HU11816602".into(),
            },
            result: Ok((after, vec![changed])),
        },
    );
    assert!(s.doing.is_none());
    let text = screen(&s);
    assert!(row(&text, "VAT number").ends_with('✔'), "{text}");
    assert!(text.contains("Fields (2 break their rules)"), "{text}");
    assert!(
        text.contains("vat: HU118166O02 → HU11816602"),
        "status and history say it: {text}"
    );
}

#[test]
fn esc_cancels_an_edit_and_a_normalised_value_says_how_it_will_be_stored() {
    let mut s = working(BAD);
    update(&mut s, code(KeyCode::Tab, T0));
    update(&mut s, code(KeyCode::Enter, T0));
    update(&mut s, ctrl('u', T0));
    typed(&mut s, "A.B@EXAMPLE.COM");
    let text = screen(&s);
    assert!(
        row(&text, "E-mail").contains("✔ saved as A.B@example.com"),
        "{text}"
    );
    insta::assert_snapshot!("form_editing", text);
    let fx = update(&mut s, code(KeyCode::Esc, T0));
    assert!(fx.is_empty());
    assert!(row(&screen(&s), "E-mail").contains("a.b@example,com"));
    assert!(s.form.as_ref().unwrap().edit.is_none());
}

#[test]
fn what_was_typed_survives_a_lock_lost_while_editing_and_a_refused_save() {
    let mut s = working(BAD);
    update(&mut s, code(KeyCode::Enter, T0));
    update(&mut s, ctrl('u', T0));
    typed(&mut s, "HU11816602");
    s.now = T0 + 12 * MIN;
    update(
        &mut s,
        lost_snapshot(vec![event(EventKind::TakenOver, "bob", T0 + 11 * MIN)]),
    );
    assert!(s.form.as_ref().unwrap().edit.is_none(), "the edit closes");
    assert_eq!(s.kept[&42], "vat: HU11816602", "what was typed is kept");
    assert_eq!(
        s.notice.as_ref().map(|n| n.pending.clone()),
        Some(Pending::Comment { id: 42 }),
        "offered as a comment"
    );

    // A save the store refuses because the lock went: kept too.
    let mut s = working(BAD);
    update(&mut s, code(KeyCode::Enter, T0));
    update(&mut s, ctrl('u', T0));
    typed(&mut s, "DE123456789");
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    let Effect::WriteField { write, .. } = fx[0].clone() else {
        panic!("{fx:?}")
    };
    update(
        &mut s,
        Msg::FieldWritten {
            id: 42,
            write,
            result: Err(StoreError::LockLost {
                id: 42,
                why: NoLock::HeldBy("bob".into()),
            }),
        },
    );
    assert_eq!(s.kept[&42], "vat: DE123456789");
    // A value refused for another reason goes back into the field, as typed.
    let mut s = working(BAD);
    update(&mut s, code(KeyCode::Enter, T0));
    let fx = update(&mut s, code(KeyCode::Esc, T0));
    assert!(fx.is_empty());
    s.form.as_mut().unwrap().saving = Some(("vat".into(), "DE1".into()));
    update(
        &mut s,
        Msg::FieldWritten {
            id: 42,
            write: FieldWrite::Value {
                field: "vat".into(),
                typed: "DE1".into(),
            },
            result: Err(StoreError::Busy("the database is busy".into())),
        },
    );
    let f = s.form.as_ref().unwrap();
    assert_eq!(f.edit.as_ref().map(|e| e.buf.text()), Some("DE1".into()));
    assert!(f.saving.is_none());
}

#[test]
fn space_ticks_a_checklist_line_and_x_asks_why_it_is_not_done() {
    let mut s = working(BAD);
    for _ in 0..3 {
        update(&mut s, code(KeyCode::Tab, T0));
    }
    // On the checklist's own row Space says where to go.
    assert!(update(&mut s, key(' ', T0)).is_empty());
    update(&mut s, code(KeyCode::Tab, T0));
    let fx = update(&mut s, key(' ', T0));
    assert_eq!(
        fx,
        vec![Effect::WriteField {
            id: 42,
            token: 3,
            write: FieldWrite::Tick {
                field: "checks".into(),
                line: "Registry checked".into(),
                state: LineState::Done
            }
        }]
    );
    update(
        &mut s,
        Msg::FieldWritten {
            id: 42,
            write: FieldWrite::Tick {
                field: "checks".into(),
                line: "Registry checked".into(),
                state: LineState::Done,
            },
            result: Ok((
                record(
                    r#"{"vat":"HU118166O02","checks":[{"line":"Registry checked","done":true},{"line":"Called back","done":false}]}"#,
                ),
                vec![],
            )),
        },
    );
    let text = screen(&s);
    assert!(text.contains("[x] Registry checked"), "{text}");
    assert!(row(&text, "checks").contains("1/2 ticked"), "{text}");
    update(&mut s, code(KeyCode::Tab, T0));
    update(&mut s, key('X', T0));
    let d = s.dialog.clone().expect("the reason dialog");
    assert!(d.title.contains("Called back"), "{}", d.title);
    assert!(
        update(&mut s, code(KeyCode::Enter, T0)).is_empty(),
        "a reason is required"
    );
    typed(&mut s, "nobody answered");
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert_eq!(
        fx,
        vec![Effect::WriteField {
            id: 42,
            token: 3,
            write: FieldWrite::Tick {
                field: "checks".into(),
                line: "Called back".into(),
                state: LineState::NotDone("nobody answered".into())
            }
        }]
    );
}

#[test]
fn an_item_not_held_shows_its_form_read_only() {
    let mut s = working(BAD);
    s.held.clear();
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert!(fx.is_empty());
    assert!(s.form.as_ref().is_none_or(|f| f.edit.is_none()));
    let said = &s.status.as_ref().unwrap().text;
    assert!(said.contains("take it first"), "{said}");
}

#[test]
fn complete_on_a_record_that_breaks_rules_lists_them_and_moves_the_cursor() {
    let mut s = working(BAD);
    update(&mut s, code(KeyCode::Tab, T0));
    update(&mut s, code(KeyCode::Tab, T0));
    let fx = update(&mut s, key('c', T0));
    assert!(fx.is_empty(), "{fx:?}");
    let d = s.dialog.clone().expect("a dialog");
    assert_eq!(d.title, "#42 cannot be completed yet");
    assert!(
        d.message.contains("✘ VAT number does not match"),
        "{}",
        d.message
    );
    assert!(d.message.contains("✘ E-mail is not an e-mail address"));
    assert!(
        d.message.contains("✘ checks 2 lines") || d.message.contains("✘ checks not ticked"),
        "{}",
        d.message
    );
    assert_eq!(d.pending, Pending::Dismiss, "staff cannot override");
    assert_eq!(s.form.as_ref().unwrap().focus, 0, "the cursor on the first");
    insta::assert_snapshot!("complete_refused", screen(&s));
    update(&mut s, code(KeyCode::Esc, T0));
    assert!(s.dialog.is_none());
    // Enter now edits the first broken field.
    update(&mut s, code(KeyCode::Enter, T0));
    assert_eq!(
        s.form
            .as_ref()
            .unwrap()
            .edit
            .as_ref()
            .map(|e| e.field.as_str()),
        Some("vat")
    );
}

#[test]
fn a_supervisor_may_complete_a_broken_record_anyway_with_a_reason() {
    let mut s = working(BAD);
    s.role = caseload::domain::Role::Supervisor;
    update(&mut s, key('c', T0));
    let d = s.dialog.clone().expect("a dialog");
    assert_eq!(d.title, "Complete #42 anyway?");
    assert_eq!(d.inputs.len(), 2);
    // Its result offers the queue's ready-made results (Tab), as Complete's does.
    let offer = d.inputs[0].offer.as_ref().expect("ready-made results");
    assert_eq!(offer.purpose, caseload::domain::texts::Purpose::Result);
    assert!(
        d.inputs[1].offer.is_none(),
        "the override reason is the supervisor's own"
    );
    assert!(
        update(&mut s, code(KeyCode::Enter, T0)).is_empty(),
        "the reason is required"
    );
    assert_eq!(s.dialog.as_ref().unwrap().focus, 1);
    typed(&mut s, "registry is down; checked by phone");
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert_eq!(
        fx,
        vec![Effect::Finish {
            id: 42,
            token: 3,
            what: caseload::app::Finish::CompleteAnyway {
                result: Default::default(),
                reason: "registry is down; checked by phone".into()
            },
            notes: None,
        }]
    );
}

#[test]
fn a_complete_the_store_refuses_for_broken_rules_shows_them() {
    use caseload::domain::queue_fields::{FieldProblem, Problem};
    // The screen thought the record fine (its fields were not loaded yet).
    let mut s = working(
        r#"{"vat":"DE123456789","email":"a@b.example","name":"X","checks":[{"line":"Registry checked","done":true},{"line":"Called back","done":true}]}"#,
    );
    let fx = update(&mut s, key('c', T0));
    assert!(fx.is_empty());
    assert_eq!(
        s.dialog.as_ref().map(|d| d.title.as_str()),
        Some("Complete #42?"),
        "a record that keeps its rules gets the usual dialog"
    );
    let fx = update(&mut s, code(KeyCode::Enter, T0));
    assert!(matches!(fx[0], Effect::Finish { .. }), "{fx:?}");
    update(
        &mut s,
        Msg::Finished {
            id: 42,
            what: caseload::app::Finish::Complete(Default::default()),
            result: Err(StoreError::BrokenRules {
                id: 42,
                problems: vec![FieldProblem {
                    field: "vat".into(),
                    problem: Problem::Required,
                }],
            }),
        },
    );
    let d = s.dialog.as_ref().expect("the refusal, as a dialog");
    assert!(
        d.message.contains("✘ VAT number is required"),
        "{}",
        d.message
    );
    assert!(s.held.contains_key(&42), "still held");
}
