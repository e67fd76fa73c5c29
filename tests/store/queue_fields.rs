//! Typed fields per queue (issue 26), on both backends: supervisors define, move and
//! delete a queue's fields (audited); holders correct values under the lock
//! (`field_changed` events); Complete checks every rule. "boss" opens first and is the
//! supervisor; "alice" and "bob" are staff.

use crate::support::backend::{Backend, assert_code, setup};
use caseload::domain::queue_fields::{FieldChange, FieldType};
use caseload::domain::{AuditKind, QueueUpdate};
use caseload::store::{Store, exit};

conformance!(
    supervisors_define_move_and_delete_fields_audited,
    staff_may_not_define_fields,
    a_renamed_queue_keeps_its_fields,
);

fn typed(kind: FieldType) -> FieldChange {
    FieldChange {
        kind: Some(kind),
        ..FieldChange::default()
    }
}

fn names(s: &mut dyn Store, q: &str) -> Vec<String> {
    s.fields(q).unwrap().into_iter().map(|d| d.name).collect()
}

fn supervisors_define_move_and_delete_fields_audited(b: &dyn Backend) {
    let mut boss = setup(b);
    let vat = FieldChange {
        required: Some(true),
        pattern: Some(Some("^[A-Z]{2}[0-9A-Z]{8,12}$".into())),
        label: Some(Some("VAT number".into())),
        ..typed(FieldType::Text)
    };
    boss.define_field("default", "vat", &vat).unwrap();
    boss.define_field("default", "email", &typed(FieldType::Email))
        .unwrap();
    boss.define_field("default", "phone", &typed(FieldType::Phone))
        .unwrap();
    assert_eq!(names(&mut *boss, "default"), ["vat", "email", "phone"]);
    let moved = FieldChange {
        after: Some("vat".into()),
        ..FieldChange::default()
    };
    boss.define_field("default", "phone", &moved).unwrap();
    assert_eq!(names(&mut *boss, "default"), ["vat", "phone", "email"]);
    let d = &boss.fields("default").unwrap()[0];
    assert!(d.required && d.label() == "VAT number");
    // The same definition again changes nothing and says so.
    let e = assert_code(boss.define_field("default", "phone", &moved), exit::ERROR);
    assert!(e.to_string().contains("nothing changed"), "{e}");
    boss.delete_field("default", "vat").unwrap();
    assert_eq!(names(&mut *boss, "default"), ["phone", "email"]);
    let e = assert_code(boss.delete_field("default", "vat"), exit::ERROR);
    assert!(e.to_string().contains("phone, email"), "{e}");
    // Each change is one audit record, old → new, the definition with its position.
    let audit: Vec<_> = boss
        .audit(None, 0)
        .unwrap()
        .into_iter()
        .filter(|a| a.kind == AuditKind::Field)
        .collect();
    assert_eq!(audit.len(), 5, "{audit:?}");
    assert_eq!(audit[0].subject, "default.vat");
    assert!(audit[0].old.is_null());
    assert_eq!(audit[0].new["pattern"], "^[A-Z]{2}[0-9A-Z]{8,12}$");
    assert_eq!(audit[0].new["position"], 1);
    assert_eq!(audit[3].subject, "default.phone");
    assert_eq!(audit[3].old["position"], 3);
    assert_eq!(audit[3].new["position"], 2);
    assert_eq!(audit[4].new, serde_json::json!({"deleted": true}));
    assert_eq!(audit[4].old["label"], "VAT number");
    // A bad definition is refused before anything is written.
    let bad = FieldChange {
        pattern: Some(Some("([".into())),
        ..typed(FieldType::Text)
    };
    let e = assert_code(boss.define_field("default", "ref", &bad), exit::ERROR);
    assert!(e.to_string().contains("--pattern"), "{e}");
    assert_code(
        boss.define_field("nosuch", "ref", &typed(FieldType::Text)),
        exit::ERROR,
    );
    assert_eq!(boss.all_fields().unwrap().len(), 2);
}

fn staff_may_not_define_fields(b: &dyn Backend) {
    let mut boss = setup(b);
    boss.define_field("default", "vat", &typed(FieldType::Text))
        .unwrap();
    let mut alice = b.open("alice", 0);
    assert_code(
        alice.define_field("default", "email", &typed(FieldType::Email)),
        exit::SUPERVISOR_ONLY,
    );
    assert_code(alice.delete_field("default", "vat"), exit::SUPERVISOR_ONLY);
    assert_eq!(names(&mut *alice, "default"), ["vat"], "staff read them");
}

fn a_renamed_queue_keeps_its_fields(b: &dyn Backend) {
    let mut boss = setup(b);
    boss.set_queue("intake", &QueueUpdate::default(), true)
        .unwrap();
    boss.define_field("intake", "vat", &typed(FieldType::Text))
        .unwrap();
    boss.rename_queue("intake", "suppliers").unwrap();
    assert_eq!(names(&mut *boss, "suppliers"), ["vat"]);
    assert!(names(&mut *boss, "intake").is_empty());
    boss.delete_queue("suppliers").unwrap();
    assert!(boss.all_fields().unwrap().is_empty(), "gone with its queue");
}
