//! Verification work from the command line (issue 26): `field set|list|delete`, `set`,
//! `tick` and `complete --override`, with their refusals (one line, the documented exit
//! code, the database unchanged), against the real binary.

use crate::support::cli::Env;

fn verification_queue() -> Env {
    let env = Env::init("sup");
    env.ok("sup", &["queue", "set", "verification", "--create"]);
    env.ok(
        "sup",
        &[
            "field",
            "set",
            "verification",
            "vat",
            "--type",
            "text",
            "--required",
            "--pattern",
            "^[A-Z]{2}[0-9A-Z]{8,12}$",
            "--label",
            "VAT number",
        ],
    );
    env.ok(
        "sup",
        &[
            "field",
            "set",
            "verification",
            "phone",
            "--type",
            "phone",
            "--country",
            "de",
        ],
    );
    env.ok(
        "sup",
        &[
            "field",
            "set",
            "verification",
            "email",
            "--type",
            "email",
            "--after",
            "vat",
        ],
    );
    env
}

fn add_supplier(env: &Env, params: &str) -> i64 {
    env.ok(
        "producer",
        &[
            "add",
            "--queue",
            "verification",
            "--title",
            "Supplier",
            "--params",
            params,
        ],
    )
    .trim()
    .parse()
    .unwrap()
}

#[test]
fn supervisors_define_fields_and_list_them_in_order() {
    let env = verification_queue();
    let list = env.ok("alice", &["field", "list", "verification"]);
    let names: Vec<&str> = list
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(names, ["vat", "email", "phone"], "{list}");
    assert!(list.contains("pattern ^[A-Z]{2}[0-9A-Z]{8,12}$"), "{list}");
    let json: serde_json::Value =
        serde_json::from_str(&env.ok("alice", &["field", "list", "verification", "--json"]))
            .unwrap();
    assert_eq!(json[2]["country"], "DE");
    assert_eq!(json[0]["position"], 1);
    let before = env.fingerprint();
    let err = env.fails(
        "alice",
        &["field", "set", "verification", "fax", "--type", "text"],
        5,
    );
    assert!(err.contains("supervisor only"), "{err}");
    let err = env.fails("sup", &["field", "set", "verification", "fax"], 1);
    assert!(err.contains("--type"), "{err}");
    let err = env.fails(
        "sup",
        &["field", "set", "verification", "fax", "--type", "fax"],
        2,
    );
    assert!(err.contains("--type"), "{err}");
    env.fails("sup", &["field", "delete", "verification", "fax"], 1);
    assert_eq!(env.fingerprint(), before, "refusals change nothing");
    env.ok("sup", &["field", "delete", "verification", "phone"]);
    let history = env.ok("sup", &["history"]);
    assert!(history.contains("field verification.phone"), "{history}");
}

#[test]
fn set_corrects_fields_under_the_lock_and_refuses_a_broken_rule() {
    let env = verification_queue();
    let id = add_supplier(&env, r#"{"vat":"HU118166O02","phone":"030 901820"}"#);
    let (_, token) = env.claim("alice", &["--queue", "verification"]);
    let sid = id.to_string();
    let before = env.fingerprint();
    let err = env.fails("alice", &["set", &sid, "vat=DE12"], 1);
    assert_eq!(
        err.trim(),
        "caseload: vat: \"DE12\" does not match ^[A-Z]{2}[0-9A-Z]{8,12}$"
    );
    env.fails("alice", &["set", &sid, "novalue"], 2);
    env.fails("bob", &["set", &sid, "vat=HU11816602"], 3);
    assert_eq!(env.fingerprint(), before);
    let out = env.ok(
        "alice",
        &[
            "set",
            &sid,
            "vat=HU11816602",
            "phone=030 901820",
            "--token",
            &token.to_string(),
        ],
    );
    assert!(out.contains("vat: HU118166O02 → HU11816602"), "{out}");
    assert!(
        out.contains("phone: 030 901820 → +4930901820 (typed 030 901820)"),
        "{out}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&env.ok("alice", &["set", &sid, "email=A@Example.COM", "--json"]))
            .unwrap();
    assert_eq!(json["changed"][0]["to"], "A@example.com");
    assert_eq!(
        json["params"]["email"], "A@example.com",
        "the item's new state"
    );
    let show = env.ok("alice", &["show", &sid]);
    assert!(
        show.contains("field_changed  vat: HU118166O02 → HU11816602"),
        "{show}"
    );
    let events = env.ok("alice", &["export", "--events", "--format", "jsonl"]);
    assert_eq!(events.matches("\"field_changed\"").count(), 3, "{events}");
}

#[test]
fn complete_names_each_broken_field_and_only_supervisors_override() {
    let env = verification_queue();
    let id = add_supplier(&env, r#"{"vat":"DE12","email":"nope"}"#);
    let sid = id.to_string();
    env.claim("alice", &["--queue", "verification"]);
    let before = env.fingerprint();
    let err = env.fails("alice", &["complete", &sid], 1);
    assert!(err.contains("vat: \"DE12\" does not match"), "{err}");
    assert!(
        err.contains("email: \"nope\" is not an e-mail address"),
        "{err}"
    );
    env.fails("alice", &["complete", &sid, "--next"], 1);
    env.fails(
        "alice",
        &["complete", &sid, "--override", "checked by phone"],
        5,
    );
    assert_eq!(env.fingerprint(), before);
    env.ok("alice", &["release", &sid]);
    env.claim("sup", &["--id", &sid]);
    env.ok("sup", &["complete", &sid, "--override", "checked by phone"]);
    let show = env.show(id);
    let done = show["history"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "completed")
        .unwrap()
        .clone();
    assert_eq!(done["detail"]["override"], "checked by phone");
    assert_eq!(
        done["detail"]["broken"],
        serde_json::json!(["vat", "email"])
    );
}

#[test]
fn checklist_lines_are_ticked_one_write_each() {
    let env = Env::init("sup");
    env.ok("sup", &["queue", "set", "fulfilment", "--create"]);
    env.ok(
        "sup",
        &["field", "set", "fulfilment", "skus", "--type", "checklist"],
    );
    let id: i64 = env
        .ok(
            "producer",
            &[
                "add",
                "--queue",
                "fulfilment",
                "--title",
                "Order",
                "--params",
                r#"{"skus":"NB-A5-DOT; PEN-BLK"}"#,
            ],
        )
        .trim()
        .parse()
        .unwrap();
    let sid = id.to_string();
    env.claim("alice", &[]);
    let err = env.fails("alice", &["complete", &sid], 1);
    assert!(err.contains("NB-A5-DOT, PEN-BLK"), "{err}");
    let out = env.ok("alice", &["tick", &sid, "skus", "NB-A5-DOT"]);
    assert!(out.contains("skus [NB-A5-DOT]: todo → done"), "{out}");
    env.fails("alice", &["tick", &sid, "skus", "STAPLER"], 1);
    env.fails("alice", &["set", &sid, "skus=x"], 1);
    env.ok(
        "alice",
        &[
            "tick",
            &sid,
            "skus",
            "PEN-BLK",
            "--not-done",
            "out of stock",
        ],
    );
    env.ok("alice", &["complete", &sid]);
}

/// Adds a supplier record from `source`.
fn add_from(env: &Env, source: &str, params: &str) -> String {
    env.ok(
        "producer",
        &[
            "add",
            "--queue",
            "verification",
            "--title",
            "Supplier",
            "--source",
            source,
            "--params",
            params,
        ],
    )
    .trim()
    .to_string()
}

#[test]
fn report_by_field_and_by_source_show_which_data_was_dirty() {
    let env = verification_queue();
    // feed-a: a misspelt VAT number corrected, an e-mail filled in.
    let dirty = add_from(&env, "feed-a", r#"{"vat": "de123456789"}"#);
    env.claim("alice", &["--id", &dirty]);
    env.ok(
        "alice",
        &["set", &dirty, "vat=DE123456789", "email=info@example.com"],
    );
    env.ok("alice", &["complete", &dirty]);
    // feed-a and feed-b: clean records, completed as they came.
    for (source, vat) in [("feed-a", "FR12345678901"), ("feed-b", "NL123456789B01")] {
        let id = add_from(&env, source, &format!(r#"{{"vat": "{vat}"}}"#));
        env.claim("alice", &["--id", &id]);
        env.ok("alice", &["complete", &id]);
    }
    // Corrected but not completed: not counted.
    let open = add_from(&env, "feed-b", r#"{"vat": "xx"}"#);
    env.claim("bob", &["--id", &open]);
    env.ok("bob", &["set", &open, "vat=NL123456789B02"]);

    let out = env.ok(
        "boss",
        &["report", "--by", "field", "--queue", "verification"],
    );
    assert!(out.contains("3 record(s) completed"), "{out}");
    let vat = out.lines().find(|l| l.contains(" vat ")).expect(&out);
    let cols: Vec<&str> = vat.split_whitespace().collect();
    assert_eq!(
        &cols[..6],
        ["verification", "vat", "3", "1", "33", "%"],
        "{out}"
    );
    assert!(vat.contains("value → value"), "{vat}");
    let email = out.lines().find(|l| l.contains(" email ")).expect(&out);
    assert!(email.contains("empty → value"), "{email}");

    let json: serde_json::Value =
        serde_json::from_str(&env.ok("boss", &["report", "--by", "field", "--format", "json"]))
            .unwrap();
    assert_eq!(json["by"], "field");
    let rows = json["rows"].as_array().unwrap();
    let vat = rows.iter().find(|r| r["field"] == "vat").unwrap();
    assert_eq!(
        (vat["records"].as_u64(), vat["corrected"].as_u64()),
        (Some(3), Some(1))
    );
    assert_eq!(vat["changed"], 1);

    let out = env.ok("boss", &["report", "--by", "source"]);
    let first = out.lines().nth(2).expect(&out);
    assert!(first.starts_with("feed-a "), "dirtiest first:\n{out}");
    let cols: Vec<&str> = first.split_whitespace().collect();
    assert_eq!(&cols[..6], ["feed-a", "2", "1", "50", "%", "2"], "{out}");
    let csv = env.ok("boss", &["report", "--by", "source", "--format", "csv"]);
    assert!(
        csv.starts_with("source,records,corrected,share,corrections,top_field\n")
            && csv.contains("feed-a,2,1,0.5000,2,")
            && csv.contains("feed-b,1,0,0.0000,0,\n"),
        "{csv}"
    );
}
