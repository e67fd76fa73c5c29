//! A queue's fields in the TUI's queue settings (supervisors): `F` on the Stats view's
//! selected queue lists them; adding, changing, moving and deleting one go through the
//! store's own writes (checked and audited as `caseload field set|delete`), on a real
//! SQLite file; staff are told it is for supervisors.

use crate::support::backend::Adds;
use crate::support::tui::*;
use caseload::domain::NewItem;
use caseload::domain::queue_fields::FieldType;
use caseload::store::Reads;
use caseload::tui::Session;
use ratatui::crossterm::event::KeyCode;

/// A database whose creator (`sup`, its supervisor) added one record to `verification`.
fn world() -> (Db, Clock) {
    let db = Db::new();
    let clock = Clock::at(T0);
    let mut sup = db.store("sup", &clock);
    let mut it = NewItem::titled("Verify VAT number HU118166O02");
    it.queue = "verification".into();
    it.params = r#"{"vat":"HU118166O02"}"#.into();
    sup.add(&it).unwrap();
    (db, clock)
}

/// The Stats view with `queue` selected.
fn stats_on(s: &mut Session, queue: &str) {
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
    let at = names.iter().position(|n| n == queue).unwrap();
    for _ in 0..at {
        s.step(key('j'));
    }
}

fn status(s: &Session) -> String {
    s.state
        .status
        .as_ref()
        .map(|st| st.text.clone())
        .unwrap_or_default()
}

/// Clears the dialog's focused field and types `text` into it.
fn retype(s: &mut Session, text: &str) {
    s.step(ctrl('u'));
    type_text(s, text);
}

#[test]
fn a_supervisor_adds_changes_moves_and_deletes_fields_in_the_tui() {
    let (db, clock) = world();
    let mut s = start(db.store("sup", &clock), &clock, 110, 40, true);
    stats_on(&mut s, "verification");
    s.step(key('F'));
    let text = screen(&s.state);
    assert!(text.contains("Fields of queue verification"), "{text}");
    assert!(text.contains("No fields yet: a adds one"), "{text}");
    assert!(text.contains("a add"), "the hint line: {text}");

    // a: a new field, typed in the dialog; Enter defines it through the store.
    s.step(key('a'));
    type_text(&mut s, "vat");
    s.step(code(KeyCode::Tab)); // Type: text (prefilled)
    s.step(code(KeyCode::Tab)); // Required: no
    s.step(code(KeyCode::Tab));
    type_text(&mut s, "^[A-Z]{2}[0-9]{8,12}$");
    for _ in 0..3 {
        s.step(code(KeyCode::Tab)); // Range, Choices, Label
    }
    type_text(&mut s, "VAT number");
    s.step(code(KeyCode::Enter));
    assert!(s.state.dialog.is_none(), "{:?}", s.state.dialog);
    assert_eq!(status(&s), "Field vat of queue verification saved");
    let mut check = db.store("sup", &clock);
    let defs = check.fields("verification").unwrap();
    assert_eq!(defs.len(), 1);
    assert_eq!(defs[0].pattern.as_deref(), Some("^[A-Z]{2}[0-9]{8,12}$"));
    assert_eq!(defs[0].label(), "VAT number");
    let text = screen(&s.state);
    assert!(
        text.contains("vat  text · pattern ^[A-Z]{2}[0-9]{8,12}$ · \"VAT number\""),
        "{text}"
    );

    // A bad value keeps the dialog open on its field, with everything typed.
    s.step(key('a'));
    type_text(&mut s, "email");
    s.step(code(KeyCode::Tab));
    retype(&mut s, "mail");
    s.step(code(KeyCode::Enter));
    let d = s.state.dialog.as_ref().expect("still open");
    assert_eq!(d.focus, 1);
    assert!(d.error.as_deref().unwrap().contains("'mail' is not one of"));
    retype(&mut s, "email");
    s.step(code(KeyCode::Tab));
    retype(&mut s, "yes");
    s.step(code(KeyCode::Enter));
    assert!(s.state.dialog.is_none(), "{:?}", s.state.dialog);

    // K moves the selected field up.
    s.step(key('j'));
    s.step(key('K'));
    assert_eq!(status(&s), "Field email of queue verification moved");
    let names: Vec<String> = check
        .fields("verification")
        .unwrap()
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(names, ["email", "vat"]);

    // Enter changes the selected field (email, now first): its rules prefilled.
    s.step(code(KeyCode::Enter));
    let d = s.state.dialog.as_ref().expect("the change dialog");
    assert_eq!(d.title, "Field email of queue verification");
    assert_eq!(d.value(1), "yes", "required, as defined");
    s.step(code(KeyCode::Tab));
    retype(&mut s, "no");
    s.step(code(KeyCode::Enter));
    let email = check.fields("verification").unwrap().remove(0);
    assert_eq!((email.kind, email.required), (FieldType::Email, false));

    // d deletes the selected field, after asking; the items keep their values.
    s.step(key('j'));
    s.step(key('d'));
    assert_eq!(
        s.state.dialog.as_ref().map(|d| d.title.as_str()),
        Some("Delete field vat?")
    );
    s.step(code(KeyCode::Enter));
    let names: Vec<String> = check
        .fields("verification")
        .unwrap()
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(names, ["email"]);
    assert!(check.item(1).unwrap().params.contains("HU118166O02"));
    // Each change is audited, as the CLI's are.
    let audit = check.audit(None, 0).unwrap();
    let fields: Vec<&str> = audit
        .iter()
        .filter(|a| a.subject.starts_with("verification."))
        .map(|a| a.subject.as_str())
        .collect();
    assert_eq!(fields.len(), 5, "{audit:?}");
    s.step(code(KeyCode::Esc));
    assert!(s.state.field_admin.is_none());
}

#[test]
fn staff_are_told_fields_are_for_supervisors() {
    let (db, clock) = world();
    let mut s = start(db.store("alice", &clock), &clock, 110, 30, true);
    stats_on(&mut s, "verification");
    s.step(key('F'));
    assert!(s.state.field_admin.is_none());
    assert!(status(&s).starts_with("Supervisor only"), "{}", status(&s));
}
