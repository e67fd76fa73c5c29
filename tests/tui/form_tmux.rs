//! The fields form in the real binary in a real terminal (tmux): a record whose VAT
//! number breaks its pattern shows ✘ with the rule; the holder edits it in place, sees
//! ✔ as soon as the typed value keeps the rule, saves, and the database has the value
//! and its field_changed event.

use crate::support::cli::BIN;
use crate::support::tmux::{Tmux, caseload};

#[test]
fn editing_a_field_turns_its_cross_into_a_tick() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    caseload(&db, "feeder", &["init"]);
    caseload(&db, "feeder", &["queue", "set", "verification", "--create"]);
    caseload(
        &db,
        "feeder",
        &[
            "field",
            "set",
            "verification",
            "vat",
            "--type",
            "text",
            "--pattern",
            "^[A-Z]{2}[0-9]{8,12}$",
            "--label",
            "VAT number",
        ],
    );
    caseload(
        &db,
        "feeder",
        &[
            "add",
            "--queue",
            "verification",
            "--title",
            "Verify Danube Components Kft.",
            "--params",
            r#"{"vat":"HU118166O02","source":"vies"}"#,
        ],
    );
    let Some(t) = Tmux::start("form") else {
        return;
    };
    t.wait_for("the shell prompt", |s| s.contains("READY$"));
    t.send(&[
        &format!("clear; {BIN} --db {} --user alice", db.display()),
        "Enter",
    ]);
    t.wait_for("the queue", |s| s.contains("Verify Danube"));
    t.send(&["n"]);
    let s = t.wait_for("the form", |s| s.contains("VAT number"));
    let vat = |s: &str| {
        s.lines()
            .find(|l| l.contains("VAT number"))
            .unwrap_or_default()
            .to_string()
    };
    assert!(vat(&s).contains("✘ does not match"), "{s}");
    assert!(vat(&s).contains("HU118166O02"), "{s}");
    t.send(&["Enter"]);
    t.wait_for("the edit", |s| s.contains("Editing VAT number"));
    t.send(&["C-u"]);
    t.send(&["HU1181660"]);
    t.wait_for("the rule checked as typed", |s| {
        vat(s).contains("HU1181660") && vat(s).contains('✘')
    });
    t.send(&["2"]);
    t.wait_for("✔ as typed", |s| {
        vat(s).contains("HU11816602") && vat(s).contains('✔') && !vat(s).contains('✘')
    });
    t.send(&["Enter"]);
    let s = t.wait_for("the save", |s| s.contains("vat: HU118166O02 → HU11816602"));
    assert!(vat(&s).contains('✔') && !vat(&s).contains('✘'), "{s}");
    assert!(s.contains("Fields (all keep their rules)"), "{s}");
    let shown = caseload(&db, "feeder", &["show", "1", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(v["params"]["vat"], "HU11816602", "{shown}");
    assert_eq!(v["history"][2]["kind"], "field_changed", "{shown}");
    let history = caseload(&db, "feeder", &["show", "1"]);
    assert!(
        history.contains("vat: HU118166O02 → HU11816602"),
        "{history}"
    );
    t.send(&["Escape"]);
    t.send(&["q"]);
}
