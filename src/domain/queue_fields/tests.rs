use serde_json::json;

use super::*;

fn def(kind: FieldType) -> FieldDef {
    FieldDef::new("f", kind)
}

fn ok(d: &FieldDef, typed: &str) -> serde_json::Value {
    check_typed(d, typed).unwrap_or_else(|p| panic!("{typed}: {p}"))
}

fn refused(d: &FieldDef, typed: &str) -> String {
    match check_typed(d, typed) {
        Ok(v) => panic!("{typed} was accepted as {v}"),
        Err(p) => p.to_string(),
    }
}

#[test]
fn each_type_has_its_canonical_form() {
    assert_eq!(ok(&def(FieldType::Text), "  Acme  "), json!("Acme"));
    assert_eq!(ok(&def(FieldType::Integer), "+42"), json!(42));
    assert_eq!(ok(&def(FieldType::Decimal), "12,50"), json!("12.50"));
    assert_eq!(ok(&def(FieldType::Date), "2026-02-03"), json!("2026-02-03"));
    assert_eq!(
        ok(&def(FieldType::Email), " Anna.Berg@Example.COM "),
        json!("Anna.Berg@example.com")
    );
    assert_eq!(ok(&def(FieldType::Bool), "Yes"), json!(true));
    assert_eq!(
        ok(&def(FieldType::Iban), "de89 3704 0044 0532 0130 00"),
        json!("DE89370400440532013000")
    );
    assert_eq!(
        ok(&def(FieldType::Url), "https://Example.com/a"),
        json!("https://example.com/a")
    );
    let mut phone = def(FieldType::Phone);
    assert_eq!(ok(&phone, "+49 30 901820"), json!("+4930901820"));
    assert!(refused(&phone, "030 901820").contains("country code"));
    phone.country = Some("DE".into());
    assert_eq!(ok(&phone, "030 901820"), json!("+4930901820"));
    let mut size = def(FieldType::Choice);
    size.choices = vec!["S".into(), "M".into(), "L".into()];
    assert_eq!(ok(&size, "m"), json!("M"));
    assert!(refused(&size, "XL").contains("one of the choices"));
}

#[test]
fn bad_values_are_named_with_what_the_type_expects() {
    assert_eq!(
        refused(&def(FieldType::Integer), "12a"),
        "\"12a\" is not a whole number"
    );
    assert!(refused(&def(FieldType::Date), "2026-02-30").contains("YYYY-MM-DD"));
    assert!(refused(&def(FieldType::Email), "anna(at)example.com").contains("e-mail"));
    assert!(refused(&def(FieldType::Iban), "DE89370400440532013001").contains("checksum"));
    assert!(refused(&def(FieldType::Url), "example.com").contains("http"));
    assert!(refused(&def(FieldType::Bool), "maybe").contains("yes or no"));
    assert!(refused(&def(FieldType::Decimal), "1.2.3").contains("decimal"));
}

#[test]
fn patterns_and_bounds_are_rules_after_the_type() {
    let mut vat = def(FieldType::Text);
    vat.name = "vat".into();
    vat.pattern = Some("^[A-Z]{2}[0-9A-Z]{8,12}$".into());
    assert_eq!(
        FieldProblem {
            field: "vat".into(),
            problem: check_typed(&vat, "DE12").unwrap_err()
        }
        .to_string(),
        "vat: \"DE12\" does not match ^[A-Z]{2}[0-9A-Z]{8,12}$"
    );
    assert_eq!(ok(&vat, "HU11816602"), json!("HU11816602"));
    let mut qty = def(FieldType::Integer);
    qty.min = Some("1".into());
    qty.max = Some("99".into());
    assert!(refused(&qty, "0").contains("less than 1"));
    assert!(refused(&qty, "100").contains("more than 99"));
    let mut name = def(FieldType::Text);
    name.max = Some("3".into());
    assert!(refused(&name, "abcd").contains("longer than 3 characters"));
    let mut when = def(FieldType::Date);
    when.min = Some("2026-01-01".into());
    assert!(refused(&when, "2025-12-31").contains("before 2026-01-01"));
}

#[test]
fn required_fields_refuse_empty_values_and_optional_ones_clear() {
    let mut d = def(FieldType::Text);
    assert_eq!(ok(&d, "  "), serde_json::Value::Null);
    d.required = true;
    assert_eq!(check_typed(&d, "").unwrap_err(), Problem::Required);
    assert_eq!(check_stored(&d, None).unwrap_err(), Problem::Required);
    assert_eq!(
        check_stored(&d, Some(&json!([1]))).unwrap_err().to_string(),
        "holds a value that is not a single value"
    );
}

#[test]
fn a_record_lists_each_broken_field_in_order() {
    let mut vat = FieldDef::new("vat", FieldType::Text);
    vat.pattern = Some("^[A-Z]{2}".into());
    let mut mail = FieldDef::new("email", FieldType::Email);
    mail.required = true;
    let qty = FieldDef::new("qty", FieldType::Integer);
    let params = json!({"vat": "de1", "qty": 3, "other": "x"});
    let p = problems(&[vat, mail, qty], &params);
    let names: Vec<&str> = p.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(names, ["vat", "email"]);
    assert_eq!(p[1].to_string(), "email: is required");
}

#[test]
fn checklists_need_every_line_ticked_or_a_reason() {
    let mut kyc = FieldDef::new("checks", FieldType::Checklist);
    kyc.choices = vec!["passport".into(), "address".into()];
    let fixed = Checklist::of(&kyc, None).unwrap();
    assert_eq!(fixed.lines.len(), 2);
    assert!(matches!(fixed.check(false), Err(Problem::Unticked { .. })));
    let stored = json!([
        {"line": "passport", "done": true},
        {"line": "address", "done": false, "reason": "moved abroad"}
    ]);
    assert_eq!(check_stored(&kyc, Some(&stored)), Ok(()));
    let imported = Checklist::from_text("NB-A5-DOT; PEN-BLK\nCLIP-9").unwrap();
    assert_eq!(imported.lines.len(), 3);
    assert_eq!(imported.summary(), "0/3 ticked");
    let back = Checklist::of(&kyc, Some(&imported.to_json())).unwrap();
    assert_eq!(back, imported, "stored lines read back");
    assert_eq!(
        LineState::NotDone("out of stock".into()).as_text(),
        "not done: out of stock"
    );
    let mut req = FieldDef::new("skus", FieldType::Checklist);
    req.required = true;
    assert_eq!(check_stored(&req, None), Err(Problem::Required));
}

#[test]
fn definitions_are_checked_and_round_trip_through_their_spec() {
    let change = FieldChange {
        kind: Some(FieldType::Text),
        required: Some(true),
        pattern: Some(Some("^[A-Z]".into())),
        label: Some(Some("VAT number".into())),
        ..FieldChange::default()
    };
    let d = change.apply("vat", None).unwrap();
    let back = FieldDef::from_spec("vat", &d.spec_json()).unwrap();
    assert_eq!(back, d);
    assert_eq!(d.label(), "VAT number");
    let bad = |c: FieldChange, name: &str| c.apply(name, None).unwrap_err();
    assert!(bad(FieldChange::default(), "vat").contains("--type"));
    let typed = |k| FieldChange {
        kind: Some(k),
        ..FieldChange::default()
    };
    assert!(bad(typed(FieldType::Choice), "size").contains("--choices"));
    assert!(bad(typed(FieldType::Text), "title").contains("taken"));
    assert!(bad(typed(FieldType::Text), "Vat").contains("lower-case"));
    let pat = FieldChange {
        pattern: Some(Some("([".into())),
        ..typed(FieldType::Text)
    };
    assert!(bad(pat, "vat").starts_with("--pattern"));
    let bounds = FieldChange {
        min: Some(Some("5".into())),
        max: Some(Some("2".into())),
        ..typed(FieldType::Integer)
    };
    assert!(bad(bounds, "qty").contains("above"));
    let country = FieldChange {
        country: Some(Some("XX".into())),
        ..typed(FieldType::Phone)
    };
    assert!(bad(country, "tel").contains("country code"));
    // An existing field keeps what a change does not name.
    let moved = FieldChange {
        after: Some("name".into()),
        ..FieldChange::default()
    };
    assert!(moved.only_moves());
    assert_eq!(moved.apply("vat", Some(&d)).unwrap(), d);
}

#[test]
fn canonical_text_is_what_duplicates_compare() {
    let mut tel = FieldDef::new("tel", FieldType::Phone);
    tel.country = Some("DE".into());
    let a = canonical_text(&tel, Some(&json!("030 901820")));
    let b = canonical_text(&tel, Some(&json!("+49 (30) 901820")));
    assert_eq!(a, Some("+4930901820".into()));
    assert_eq!(a, b);
    assert_eq!(canonical_text(&tel, Some(&json!("nonsense"))), None);
}

#[test]
fn fields_are_ordered_as_defined_and_moved_after_another() {
    let cur: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    assert_eq!(reorder(&cur, "d", None).unwrap(), ["a", "b", "c", "d"]);
    assert_eq!(reorder(&cur, "b", None).unwrap(), ["a", "b", "c"]);
    assert_eq!(reorder(&cur, "a", Some("c")).unwrap(), ["b", "c", "a"]);
    assert_eq!(reorder(&cur, "c", Some("")).unwrap(), ["c", "a", "b"]);
    assert_eq!(reorder(&cur, "d", Some("a")).unwrap(), ["a", "d", "b", "c"]);
    assert!(
        reorder(&cur, "a", Some("x"))
            .unwrap_err()
            .contains("no such field")
    );
}

/// An import checks a value once and trusts its canonical form to keep the rules it was
/// checked against (`import::merge_fields`): so each type's canonical form must be its own
/// canonical form, passing the same rules.
#[test]
fn a_canonical_form_is_its_own_and_keeps_its_rules() {
    let mut phone = def(FieldType::Phone);
    phone.country = Some("DE".into());
    let mut size = def(FieldType::Choice);
    size.choices = vec!["S".into(), "M".into()];
    let mut since = def(FieldType::Date);
    since.min = Some("2000-01-01".into());
    let mut vat = def(FieldType::Text);
    vat.pattern = Some("^[A-Z]{2}[0-9]{9}$".into());
    vat.max = Some("11".into());
    let cases: [(&FieldDef, &[&str]); 11] = [
        (&vat, &["  DE123456789 "]),
        (&def(FieldType::Integer), &["+42", "-7", "0"]),
        (&def(FieldType::Decimal), &["12,50", "+3", "-0.5"]),
        (&since, &["2026-02-03", "2026-2-3", "2000-01-01"]),
        (&def(FieldType::Email), &[" Anna.Berg@Example.COM "]),
        (&phone, &["030 901820", "+49 30 901820", "0049 30 901820"]),
        (&size, &["m", "S"]),
        (&def(FieldType::Bool), &["Yes", "0", "nein", "on"]),
        (&def(FieldType::Iban), &["de89 3704 0044 0532 0130 00"]),
        (
            &def(FieldType::Url),
            &["https://Example.com", "http://a.example/x y?q=1#f"],
        ),
        (&def(FieldType::Text), &["  Acme  ", "x"]),
    ];
    for (d, inputs) in cases {
        let rules = FieldRules::of(d);
        for typed in inputs {
            let c = rules.check_typed(typed).unwrap();
            let again = rules.check_typed(&value_text(&c));
            assert_eq!(again, Ok(c.clone()), "{:?} {typed}", d.kind);
            assert_eq!(rules.check_stored(Some(&c)), Ok(()), "{:?} {typed}", d.kind);
        }
    }
}

#[test]
fn dates_read_the_same_with_and_without_the_fast_path() {
    let d = def(FieldType::Date);
    assert_eq!(ok(&d, "2024-02-29"), json!("2024-02-29"));
    assert_eq!(ok(&d, "2024-2-9"), json!("2024-02-09"));
    for bad in [
        "2023-02-29",
        "2024-13-01",
        "2024-00-10",
        "2024-01-32",
        "20x4-01-01",
    ] {
        assert!(refused(&d, bad).contains("YYYY-MM-DD"), "{bad}");
    }
    let mut since = def(FieldType::Date);
    since.min = Some("2024-1-31".into());
    assert!(refused(&since, "2024-01-30").contains("before"));
    assert_eq!(ok(&since, "2024-01-31"), json!("2024-01-31"));
}
