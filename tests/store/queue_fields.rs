//! Typed fields per queue (issue 26), on both backends: supervisors define, move and
//! delete a queue's fields (audited); holders correct values under the lock
//! (`field_changed` events); Complete checks every rule. "boss" opens first and is the
//! supervisor; "alice" and "bob" are staff.

use serde_json::{Value, json};

use crate::support::backend::{Adds, Backend, assert_code, kinds, setup};
use caseload::domain::queue_fields::{FieldChange, FieldType, LineState};
use caseload::domain::{AuditKind, EventKind, ItemState, NewItem, QueueUpdate};
use caseload::store::{Store, StoreError, TakeNext, exit};

conformance!(
    supervisors_define_move_and_delete_fields_audited,
    staff_may_not_define_fields,
    a_renamed_queue_keeps_its_fields,
    set_is_fenced_checked_and_writes_one_event_per_change,
    ticks_are_fenced_writes_with_their_events,
    complete_is_refused_on_broken_rules_and_overridden_by_supervisors_only,
    fail_release_and_skip_are_never_blocked_by_rules,
    completed_records_come_with_their_corrections,
    complete_checks_again_whatever_changed_since_the_record_was_checked,
    a_save_changes_its_fields_values_and_leaves_the_rest_of_the_params_as_they_were,
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

/// boss defines vat (required, a pattern), email and phone (DE) on `default`; returns an
/// item with `params` there, taken by alice, and alice's store and token.
fn verified(
    b: &dyn Backend,
    params: Value,
) -> (i64, i64, Box<dyn Store + Send>, Box<dyn Store + Send>) {
    let mut boss = setup(b);
    let vat = FieldChange {
        required: Some(true),
        pattern: Some(Some("^[A-Z]{2}[0-9A-Z]{8,12}$".into())),
        ..typed(FieldType::Text)
    };
    boss.define_field("default", "vat", &vat).unwrap();
    boss.define_field("default", "email", &typed(FieldType::Email))
        .unwrap();
    let phone = FieldChange {
        country: Some(Some("DE".into())),
        ..typed(FieldType::Phone)
    };
    boss.define_field("default", "phone", &phone).unwrap();
    let id = boss
        .add(&NewItem {
            params: params.to_string(),
            ..NewItem::titled("Supplier Danube Components")
        })
        .unwrap()
        .id;
    let mut alice = b.open("alice", 0);
    let token = alice.take(id).unwrap().lock_token;
    (id, token, alice, boss)
}

fn params(s: &mut dyn Store, id: i64) -> Value {
    serde_json::from_str(&s.item(id).unwrap().params).unwrap()
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn set_is_fenced_checked_and_writes_one_event_per_change(b: &dyn Backend) {
    let (id, token, mut alice, _boss) =
        verified(b, json!({"vat": "HU118166O02", "supplier": "Danube"}));
    let before = kinds(&mut *alice, id);
    // A value that breaks its rule: refused, naming field and rule; nothing written.
    let e = assert_code(
        alice.set_fields(
            id,
            token,
            &pairs(&[("email", "a@b.example"), ("vat", "DE12")]),
        ),
        exit::ERROR,
    );
    assert_eq!(
        e.to_string(),
        "vat: \"DE12\" does not match ^[A-Z]{2}[0-9A-Z]{8,12}$"
    );
    assert!(matches!(e, StoreError::BadValue(ref p) if p.field == "vat"));
    assert_eq!(kinds(&mut *alice, id), before);
    assert_eq!(params(&mut *alice, id)["vat"], "HU118166O02");
    // Two changes: one write, one event each, the typed value kept when normalised.
    let changed = alice
        .set_fields(
            id,
            token,
            &pairs(&[("vat", "HU11816602"), ("phone", "030 901820")]),
        )
        .unwrap();
    assert_eq!(changed.len(), 2);
    let p = params(&mut *alice, id);
    assert_eq!(p["vat"], "HU11816602");
    assert_eq!(p["phone"], "+4930901820");
    assert_eq!(p["supplier"], "Danube", "keys no field defines are kept");
    let events: Vec<_> = alice
        .history(id)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == EventKind::FieldChanged)
        .collect();
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].detail["field"], "vat");
    assert_eq!(events[0].detail["from"], "HU118166O02");
    assert_eq!(events[0].detail["to"], "HU11816602");
    assert!(events[0].detail.get("typed").is_none());
    assert_eq!(events[1].detail["typed"], "030 901820");
    assert_eq!(events[1].actor, "alice");
    // The same values again: nothing to write.
    assert!(
        alice
            .set_fields(id, token, &pairs(&[("vat", "HU11816602")]))
            .unwrap()
            .is_empty()
    );
    // An unknown field is named with the queue's fields.
    let e = assert_code(
        alice.set_fields(id, token, &pairs(&[("postcode", "1")])),
        exit::ERROR,
    );
    assert!(e.to_string().contains("vat, email, phone"), "{e}");
    // Fenced: someone else, or an old token, is a conflict and changes nothing.
    let mut bob = b.open("bob", 0);
    assert_code(
        bob.set_fields(id, token, &pairs(&[("vat", "AT12345678")])),
        exit::CONFLICT,
    );
    alice.release(id, token).unwrap();
    assert_code(
        alice.set_fields(id, token, &pairs(&[("vat", "AT12345678")])),
        exit::CONFLICT,
    );
    assert_eq!(params(&mut *alice, id)["vat"], "HU11816602");
}

fn ticks_are_fenced_writes_with_their_events(b: &dyn Backend) {
    let mut boss = setup(b);
    boss.define_field("default", "skus", &typed(FieldType::Checklist))
        .unwrap();
    let id = boss
        .add(&NewItem {
            params: json!({"skus": "NB-A5-DOT; PEN-BLK"}).to_string(),
            ..NewItem::titled("Pick & pack order #H-83088")
        })
        .unwrap()
        .id;
    let mut alice = b.open("alice", 0);
    let token = alice.take(id).unwrap().lock_token;
    let e = assert_code(alice.complete(id, token, None), exit::ERROR);
    assert!(e.to_string().contains("NB-A5-DOT, PEN-BLK"), "{e}");
    let d = alice
        .tick(id, token, "skus", "nb-a5-dot", &LineState::Done)
        .unwrap()
        .unwrap();
    assert_eq!(d["line"], "NB-A5-DOT");
    assert_eq!(
        (d["from"].as_str(), d["to"].as_str()),
        (Some("todo"), Some("done"))
    );
    assert!(
        alice
            .tick(id, token, "skus", "NB-A5-DOT", &LineState::Done)
            .unwrap()
            .is_none()
    );
    assert_code(
        alice.tick(
            id,
            token,
            "skus",
            "PEN-BLK",
            &LineState::NotDone("  ".into()),
        ),
        exit::ERROR,
    );
    assert_code(
        alice.tick(id, token, "skus", "STAPLER", &LineState::Done),
        exit::ERROR,
    );
    let mut bob = b.open("bob", 0);
    assert_code(
        bob.tick(id, token, "skus", "PEN-BLK", &LineState::Done),
        exit::CONFLICT,
    );
    alice
        .tick(
            id,
            token,
            "skus",
            "PEN-BLK",
            &LineState::NotDone("out of stock".into()),
        )
        .unwrap();
    assert_eq!(
        params(&mut *alice, id)["skus"],
        json!([{"line": "NB-A5-DOT", "done": true},
               {"line": "PEN-BLK", "done": false, "reason": "out of stock"}])
    );
    alice.complete(id, token, None).unwrap();
    let k = kinds(&mut *alice, id);
    assert_eq!(k.iter().filter(|k| **k == "field_changed").count(), 2);
}

fn complete_is_refused_on_broken_rules_and_overridden_by_supervisors_only(b: &dyn Backend) {
    let (id, token, mut alice, mut boss) = verified(b, json!({"vat": "DE12", "email": "x"}));
    let e = assert_code(alice.complete(id, token, Some("done")), exit::ERROR);
    match &e {
        StoreError::BrokenRules { problems, .. } => {
            let names: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
            assert_eq!(names, ["vat", "email"]);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        e.to_string().contains("vat: \"DE12\" does not match"),
        "{e}"
    );
    // Complete-and-next is refused the same way, and takes nothing.
    boss.add(&NewItem::titled("next one")).unwrap();
    assert_code(
        alice.complete_and_next(id, token, None, &TakeNext::default()),
        exit::ERROR,
    );
    assert_eq!(alice.item(id).unwrap().state, ItemState::Open);
    // Staff may not override.
    assert_code(
        alice.complete_with(id, token, None, Some("checked by phone")),
        exit::SUPERVISOR_ONLY,
    );
    // Corrected, it completes.
    alice
        .set_fields(id, token, &pairs(&[("vat", "DE123456789"), ("email", "")]))
        .unwrap();
    alice.complete(id, token, None).unwrap();
    // A supervisor holding a broken record completes it with a reason, in the event.
    let id2 = boss
        .add(&NewItem {
            params: json!({"email": "nope"}).to_string(),
            ..NewItem::titled("second")
        })
        .unwrap()
        .id;
    let t2 = boss.take(id2).unwrap().lock_token;
    assert_code(boss.complete(id2, t2, None), exit::ERROR);
    assert_code(boss.complete_with(id2, t2, None, Some("  ")), exit::ERROR);
    let next = boss
        .complete_and_next_with(
            id2,
            t2,
            None,
            Some("VAT confirmed by phone"),
            &TakeNext::default(),
        )
        .unwrap();
    assert!(next.next.is_ok());
    let done = boss
        .history(id2)
        .unwrap()
        .into_iter()
        .find(|e| e.kind == EventKind::Completed)
        .unwrap();
    assert_eq!(done.detail["override"], "VAT confirmed by phone");
    assert_eq!(done.detail["broken"], json!(["vat", "email"]));
    // Retried after a lost answer, the override is the same complete.
    assert_eq!(
        boss.complete_with(id2, t2, None, Some("VAT confirmed by phone"))
            .unwrap(),
        caseload::store::Applied::Already
    );
}

fn fail_release_and_skip_are_never_blocked_by_rules(b: &dyn Backend) {
    let (id, token, mut alice, _boss) = verified(b, json!({"vat": "bad"}));
    alice.release(id, token).unwrap();
    let t = alice.take(id).unwrap().lock_token;
    alice.skip(id, t).unwrap();
    let t = alice.take(id).unwrap().lock_token;
    alice.fail(id, t, "supplier unreachable").unwrap();
    assert_eq!(alice.item(id).unwrap().state, ItemState::Failed);
}

/// `report --by field|source`'s read: the records completed in the period and still
/// done, in the queue asked, each with its `field_changed` details, oldest first.
fn completed_records_come_with_their_corrections(b: &dyn Backend) {
    use caseload::domain::figures::Period;
    use caseload::store::ReportQuery;
    let mut boss = setup(b);
    boss.define_field("default", "vat", &typed(FieldType::Text))
        .unwrap();
    let mut alice = b.open("alice", 0);
    let mut record = |source: Option<&str>, fix: Option<&str>, complete: bool| {
        let mut it = NewItem::titled("supplier");
        it.source = source.map(str::to_string);
        it.params = json!({"vat": "de1"}).to_string();
        let id = boss.add(&it).unwrap().id;
        let token = alice.take(id).unwrap().lock_token;
        if let Some(v) = fix {
            alice
                .set_fields(id, token, &[("vat".to_string(), v.to_string())])
                .unwrap();
        }
        if complete {
            alice.complete(id, token, None).unwrap();
        }
        id
    };
    let fixed = record(Some("feed-a"), Some("DE123"), true);
    let clean = record(None, None, true);
    let open = record(Some("feed-a"), Some("DE9"), false);
    let now = boss.now().unwrap();
    let q = |queue: Option<&str>| ReportQuery {
        period: Period {
            since: now - 3_600_000,
            until: now + 1,
        },
        queue: queue.map(str::to_string),
        rows_only: false,
    };
    let got = boss.completed_records(&q(None)).unwrap();
    let ids: Vec<i64> = got.iter().map(|r| r.id).collect();
    assert_eq!(ids, [fixed, clean], "completed ones only, not #{open}");
    assert_eq!(got[0].source.as_deref(), Some("feed-a"));
    assert_eq!(got[0].params["vat"], "DE123");
    assert_eq!(got[0].changes.len(), 1);
    assert_eq!(got[0].changes[0]["from"], "de1");
    assert_eq!(got[0].changes[0]["to"], "DE123");
    assert!(got[1].changes.is_empty() && got[1].source.is_none());
    assert!(
        boss.completed_records(&q(Some("other")))
            .unwrap()
            .is_empty()
    );
}

/// Refused at Complete, naming `fields`.
fn refused(s: &mut dyn Store, id: i64, token: i64, fields: &[&str]) {
    match s.complete(id, token, None) {
        Err(StoreError::BrokenRules { problems, .. }) => {
            let names: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
            assert_eq!(names, fields, "#{id}");
        }
        other => panic!("#{id}: expected broken rules, got {other:?}"),
    }
}

/// Adds a record to `queue` that alice takes: (id, her token, whether it carries a digest
/// of its checked fields: SQLite only).
fn add_taken(
    b: &dyn Backend,
    boss: &mut dyn Store,
    alice: &mut dyn Store,
    queue: &str,
    p: Value,
) -> (i64, i64, bool) {
    let item = NewItem {
        queue: queue.into(),
        params: p.to_string(),
        ..NewItem::titled("Supplier")
    };
    let id = boss.add(&item).unwrap().id;
    let marked = b.texts(&format!(
        "SELECT CASE WHEN fields_checked IS NULL THEN 'none' ELSE 'marked' END FROM items WHERE id = {id}"
    ))[0]
        != "none";
    (id, alice.take(id).unwrap().lock_token, marked)
}

/// A record found to keep every rule when it was added or set (on SQLite it then carries
/// a digest, and its Complete checks nothing again) is checked again at Complete after
/// anything its check depends on changed: its params (raw SQL, a supervisor's edit), its
/// queue, its queue's fields (through caseload or raw SQL). Each case completes a record
/// that broke no rule when it was checked and breaks one now: it fails if a digest were
/// trusted across that change.
fn complete_checks_again_whatever_changed_since_the_record_was_checked(b: &dyn Backend) {
    use caseload::domain::ItemEdit;
    use caseload::domain::fields::{Col, Value as Cell};
    let mut boss = setup(b);
    boss.define_field("default", "vat", &typed(FieldType::Text))
        .unwrap();
    boss.define_field("default", "email", &typed(FieldType::Email))
        .unwrap();
    for q in ["loose", "strict"] {
        boss.set_queue(q, &QueueUpdate::default(), true).unwrap();
    }
    boss.define_field("loose", "vat", &typed(FieldType::Text))
        .unwrap();
    let strict_vat = FieldChange {
        pattern: Some(Some("^[A-Z]{2}[0-9]{9}$".into())),
        ..typed(FieldType::Text)
    };
    boss.define_field("strict", "vat", &strict_vat).unwrap();
    let mut alice = b.open("alice", 0);
    let (boss, alice) = (&mut *boss, &mut *alice);
    let sqlite = b.name() == "sqlite";
    let good = json!({"vat": "DE12", "email": "a@b.example"});
    let recs: Vec<(i64, i64, bool)> = (0..3)
        .map(|_| add_taken(b, boss, alice, "default", good.clone()))
        .collect();
    let moved = add_taken(b, boss, alice, "loose", json!({"vat": "DE12"}));
    let broken = add_taken(
        b,
        boss,
        alice,
        "default",
        json!({"vat": "DE12", "email": "no"}),
    );
    // What makes the cases below mean anything: the good records carry a digest.
    assert!(recs.iter().all(|r| r.2) && moved.2);
    assert!(!broken.2, "a broken record is not marked checked");

    // Params changed by another program (raw SQL) to a broken value.
    b.spoil(&format!(
        "UPDATE items SET params = '{{\"vat\": \"DE12\", \"email\": \"x@\"}}' WHERE id = {}",
        recs[0].0
    ));
    refused(alice, recs[0].0, recs[0].1, &["email"]);
    // … after a valid set (which marks it checked anew), one value changed inside the
    // JSON by the database's own JSON functions.
    alice
        .set_fields(recs[1].0, recs[1].1, &pairs(&[("vat", "DE14")]))
        .unwrap();
    b.spoil(&match sqlite {
        true => format!(
            "UPDATE items SET params = json_set(params, '$.email', 'no') WHERE id = {}",
            recs[1].0
        ),
        false => format!(
            "UPDATE items SET params = jsonb_set(params::jsonb, '{{email}}', '\"no\"')::json \
             WHERE id = {}",
            recs[1].0
        ),
    });
    refused(alice, recs[1].0, recs[1].1, &["email"]);
    // A set on a record that breaks a rule elsewhere does not mark it checked.
    alice
        .set_fields(broken.0, broken.1, &pairs(&[("vat", "DE13")]))
        .unwrap();
    refused(alice, broken.0, broken.1, &["email"]);
    // Moved to a queue whose field of the same name has a rule the value breaks (no
    // field changed since the record was checked: the queue alone must count).
    let to_strict = ItemEdit::default().with(Col::Queue, Cell::Text(Some("strict".into())));
    boss.edit(moved.0, &to_strict).unwrap();
    refused(alice, moved.0, moved.1, &["vat"]);
    // The queue's field given a rule the value breaks, through caseload.
    boss.define_field("default", "vat", &strict_vat).unwrap();
    refused(alice, recs[2].0, recs[2].1, &["vat"]);
    // … through raw SQL (another program: the version changes by trigger) …
    let good = json!({"vat": "DE123456789", "email": "a@b.example"});
    let raw = add_taken(b, boss, alice, "default", good.clone());
    assert!(raw.2);
    b.spoil(
        "UPDATE queue_fields SET spec = '{\"type\": \"text\", \"pattern\": \"^AT\"}' \
         WHERE queue = 'default' AND name = 'vat'",
    );
    refused(alice, raw.0, raw.1, &["vat"]);
    // … and a new required field the record lacks.
    boss.delete_field("default", "vat").unwrap();
    let lacking = add_taken(b, boss, alice, "default", good);
    assert!(lacking.2);
    let iban = FieldChange {
        required: Some(true),
        ..typed(FieldType::Iban)
    };
    boss.define_field("default", "iban", &iban).unwrap();
    refused(alice, lacking.0, lacking.1, &["iban"]);
    // A record checked as it is completes; a valid set keeps it so.
    let ok = add_taken(
        b,
        boss,
        alice,
        "default",
        json!({"email": "a@b.example", "iban": "DE89370400440532013000"}),
    );
    assert!(ok.2);
    let hex = match sqlite {
        true => "hex(fields_checked)",
        false => "encode(fields_checked, 'hex')",
    };
    let digest = || {
        b.texts(&format!(
            "SELECT CASE WHEN fields_checked IS NULL THEN 'none' ELSE {hex} END FROM items WHERE id = {}",
            ok.0
        ))
    };
    let before = digest();
    alice
        .set_fields(ok.0, ok.1, &pairs(&[("email", "c@d.example")]))
        .unwrap();
    assert!(
        digest()[0] != "none" && digest() != before,
        "the set marks it anew"
    );
    alice.complete(ok.0, ok.1, None).unwrap();
}

/// A field save writes the params with only its fields' values changed: the other keys,
/// their order and their spacing as stored (the value is changed in the text), a new
/// field added last; a value cleared removes its key, and params that give a field twice
/// are written as one object (as before: parsed and written whole). Params that are not
/// an object are refused, nothing written.
fn a_save_changes_its_fields_values_and_leaves_the_rest_of_the_params_as_they_were(
    b: &dyn Backend,
) {
    let mut boss = setup(b);
    for f in ["vat", "name"] {
        boss.define_field("default", f, &typed(FieldType::Text))
            .unwrap();
    }
    let mut alice = b.open("alice", 0);
    let (boss, alice) = (&mut *boss, &mut *alice);
    let stored = |id: i64| {
        b.texts(&format!(
            "SELECT CAST(params AS TEXT) FROM items WHERE id = {id}"
        ))[0]
            .clone()
    };
    let add = |boss: &mut dyn Store, alice: &mut dyn Store, params: &str| -> (i64, i64) {
        let id = boss
            .add(&NewItem {
                params: params.into(),
                ..NewItem::titled("Supplier")
            })
            .unwrap()
            .id;
        (id, alice.take(id).unwrap().lock_token)
    };
    let (id, token) = add(
        boss,
        alice,
        "{\"zeta\": 1,  \"vat\": \"DE1\", \"a\": [1, 2]}",
    );
    let changed = alice
        .set_fields(id, token, &pairs(&[("vat", " DE2 "), ("name", "Müller")]))
        .unwrap();
    assert_eq!(changed.len(), 2);
    assert_eq!(
        stored(id),
        "{\"zeta\": 1,  \"vat\": \"DE2\", \"a\": [1, 2],\"name\":\"Müller\"}"
    );
    assert_eq!(changed[0]["from"], "DE1");
    assert_eq!(changed[0]["to"], "DE2");
    // Cleared: the key goes.
    alice.set_fields(id, token, &pairs(&[("vat", "")])).unwrap();
    let v: Value = serde_json::from_str(&stored(id)).unwrap();
    assert_eq!(v, json!({"zeta": 1, "a": [1, 2], "name": "Müller"}));
    // Given twice: the last one counts (as any reader of the JSON takes it), one is kept.
    let (id, token) = add(boss, alice, "{\"vat\": \"X\", \"vat\": \"DE1\"}");
    let changed = alice
        .set_fields(id, token, &pairs(&[("vat", "DE3")]))
        .unwrap();
    assert_eq!(changed[0]["from"], "DE1");
    let v: Value = serde_json::from_str(&stored(id)).unwrap();
    assert_eq!(v, json!({"vat": "DE3"}));
    // Not an object (written by another program): refused, nothing written.
    let (id, token) = add(boss, alice, "{}");
    b.spoil(&format!(
        "UPDATE items SET params = '[1, 2]' WHERE id = {id}"
    ));
    let e = assert_code(
        alice.set_fields(id, token, &pairs(&[("vat", "DE3")])),
        exit::ERROR,
    );
    assert!(e.to_string().contains("not a JSON object"), "{e}");
    assert_eq!(stored(id), "[1, 2]");
}
