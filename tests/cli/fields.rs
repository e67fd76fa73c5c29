//! The field table through the real binary: every column a producer or a supervisor sets
//! has its flag (with help) on `add` or `edit`, and a file exported by an earlier caseload
//! (main at a13fde0, before the table grew) imports with the same derived request ids as
//! it did then, so importing it again after an upgrade adds nothing.

use crate::support::cli::Env;
use caseload::domain::fields::{FIELDS, Who};
use serde_json::Value;

#[test]
fn every_column_a_person_sets_has_its_flag_with_help() {
    let env = Env::new();
    let add = env.ok("x", &["add", "--help"]);
    let edit = env.ok("x", &["edit", "--help"]);
    for f in &FIELDS {
        let flag = format!("--{}", f.flag.unwrap_or("(none)"));
        if f.set_by(Who::Add) {
            assert!(add.contains(&flag), "add --help lacks {flag} ({})", f.name);
        }
        if f.set_by(Who::Supervisor) {
            assert!(
                edit.contains(&flag),
                "edit --help lacks {flag} ({})",
                f.name
            );
        }
    }
}

/// The request ids of the items, by title.
fn request_ids(env: &Env) -> Vec<(String, String)> {
    let v: Value = serde_json::from_str(&env.ok(
        "boss",
        &["list", "--state", "all", "--limit", "0", "--json"],
    ))
    .unwrap();
    let mut ids: Vec<(String, String)> = (v.as_array().unwrap().iter())
        .map(|i| {
            (
                i["title"].as_str().unwrap().to_string(),
                i["request_id"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    ids.sort();
    ids
}

#[test]
fn a_file_exported_before_the_table_grew_imports_as_it_did_then() {
    let root = env!("CARGO_MANIFEST_DIR");
    // The file's identity in a13fde0's import and the lines of its rows without a
    // request id (its output, recorded when the file was made; JSON Lines has no header).
    for (file, then, lines) in [
        (
            "export-a13fde0.csv",
            "a4f5f5809d6a44b22390cb6dbe4ba2b3",
            [3, 4],
        ),
        (
            "export-a13fde0.jsonl",
            "2e6484c930c1b8e3614d8dbfc9b676b7",
            [2, 3],
        ),
    ] {
        let env = Env::init("boss");
        let path = format!("{root}/tests/fixtures/{file}");
        let out = env.ok("boss", &["import", &path]);
        assert!(out.contains("Imported 3 new item(s)"), "{file}: {out}");
        // The rows without a request id got the ids a13fde0 gave them: the file's
        // identity is unchanged.
        let key = |line: u64| format!("import:{then}:{line:010}");
        let want: Vec<(String, String)> = vec![
            ("=SUM(A1) looks like a formula".into(), key(lines[1])),
            ("Printer jams on floor 3".into(), key(lines[0])),
            ("Reset password for Ana".into(), "crm-17".into()),
        ];
        assert_eq!(request_ids(&env), want, "{file}");
        let again = env.ok("boss", &["import", &path]);
        assert!(again.contains("Imported 0 new item(s)"), "{file}: {again}");
        assert_eq!(request_ids(&env).len(), 3, "{file}: no duplicates");
    }
}
