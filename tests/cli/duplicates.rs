//! Duplicates from the command line (issue 27): `field set --dedupe-key`, `similar`,
//! `merge` and `not-duplicate`, with their refusals (one line, the documented exit code,
//! the database unchanged), against the real binary.

use crate::support::cli::Env;

fn suppliers() -> (Env, Vec<i64>) {
    let env = Env::init("sup");
    env.ok("sup", &["queue", "set", "v", "--create"]);
    env.ok(
        "sup",
        &["field", "set", "v", "vat", "--type", "text", "--dedupe-key"],
    );
    let add = |title: &str, params: &str| -> i64 {
        env.ok(
            "producer",
            &["add", "--queue", "v", "--title", title, "--params", params],
        )
        .trim()
        .parse()
        .unwrap()
    };
    let ids = vec![
        add("Brightwater Tools Ltd", r#"{"vat": "GB 123 456 789"}"#),
        add("BRIGHTWATER TOOLS", r#"{"vat": "gb123456789"}"#),
        add("Brightwater Tools Ltd.", r#"{"vat": "GB999"}"#),
        add("Harbour Paper Co", r#"{"vat": "GB555"}"#),
    ];
    (env, ids)
}

#[test]
fn field_list_says_which_fields_are_keys() {
    let (env, _) = suppliers();
    let list = env.ok("alice", &["field", "list", "v"]);
    assert!(list.contains("duplicate key"), "{list}");
    let err = env.fails(
        "sup",
        &["field", "set", "v", "ok", "--type", "bool", "--dedupe-key"],
        1,
    );
    assert!(err.contains("cannot be a duplicate key"), "{err}");
}

#[test]
fn similar_lists_key_matches_first_with_why() {
    let (env, ids) = suppliers();
    let out = env.ok("alice", &["similar", &ids[0].to_string()]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with(&format!("#{}  open", ids[1])), "{out}");
    assert!(lines[0].contains("(same vat"), "{out}");
    assert!(lines[1].starts_with(&format!("#{}", ids[2])), "{out}");
    assert!(lines[1].contains("(title 1.00)"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&env.ok(
        "alice",
        &["similar", &ids[0].to_string(), "--json", "--limit", "1"],
    ))
    .unwrap();
    let c = v["candidates"].as_array().unwrap();
    assert_eq!(c.len(), 1);
    assert_eq!(c[0]["id"], ids[1]);
    assert_eq!(c[0]["keys"][0], "vat");
    let out = env.ok("alice", &["similar", &ids[3].to_string()]);
    assert!(out.contains("No item looks like"), "{out}");
}

#[test]
fn not_duplicate_is_remembered_in_either_order() {
    let (env, ids) = suppliers();
    let (a, b) = (ids[0].to_string(), ids[1].to_string());
    env.ok("alice", &["not-duplicate", &b, &a]);
    let out = env.ok("bob", &["similar", &a]);
    assert!(!out.contains(&format!("#{b} ")), "{out}");
    let out = env.ok("bob", &["similar", &a, "--all"]);
    assert!(
        out.contains(&format!("#{b}  not the same (by alice")),
        "{out}"
    );
    let before = env.fingerprint();
    let err = env.fails("bob", &["not-duplicate", &a, &b], 1);
    assert!(err.contains("already marked not the same"), "{err}");
    env.fails("bob", &["not-duplicate", &a, &a], 1);
    env.fails("bob", &["not-duplicate", &a, "999"], 1);
    assert_eq!(env.fingerprint(), before);
}

#[test]
fn merge_by_the_holder_with_its_token_and_refusals() {
    let (env, ids) = suppliers();
    let (keep, dup) = (ids[0].to_string(), ids[1].to_string());
    let (id, token) = env.claim("alice", &["--queue", "v", "--id", &dup]);
    assert_eq!(id, ids[1]);
    let before = env.fingerprint();
    // Not the holder: exit 3; bad input: exit 1; nothing written either way.
    env.fails("bob", &["merge", &dup, "--into", &keep], 3);
    let stale = (token - 1).to_string();
    env.fails(
        "alice",
        &["merge", &dup, "--into", &keep, "--token", &stale],
        3,
    );
    env.fails("alice", &["merge", &dup, "--into", &dup], 1);
    env.fails("alice", &["merge", &dup, "--into", "999"], 1);
    assert_eq!(env.fingerprint(), before);
    let out = env.ok(
        "alice",
        &[
            "merge",
            &dup,
            "--into",
            &keep,
            "--reason",
            "same VAT",
            "--token",
            &token.to_string(),
        ],
    );
    assert!(
        out.contains(&format!("Merged #{dup} into #{keep}")),
        "{out}"
    );
    let shown = env.show(ids[1]);
    assert_eq!(shown["state"], "cancelled");
    assert_eq!(shown["duplicate_of"], ids[0]);
    assert_eq!(env.show(ids[0])["duplicate_of"], serde_json::Value::Null);
    let text = env.ok("viewer", &["show", &dup]);
    assert!(text.contains(&format!("duplicate_of: #{keep}")), "{text}");
    // Export names it too (CSV column, JSON Lines key).
    let csv = env.ok("viewer", &["export", "--state", "cancelled"]);
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = head
        .iter()
        .position(|h| *h == "duplicate_of")
        .expect("a duplicate_of column");
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row[col], keep, "{csv}");
    let jsonl = env.ok(
        "viewer",
        &["export", "--state", "cancelled", "--format", "jsonl"],
    );
    let first: serde_json::Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    assert_eq!(first["duplicate_of"], ids[0]);
    let shown = env.ok("viewer", &["show", &keep]);
    assert!(
        shown.contains(&format!("#{dup} was merged into this item")),
        "{shown}"
    );
    // Into the merged item: refused, naming the survivor.
    let third = ids[2].to_string();
    let err = env.fails("sup", &["merge", &third, "--into", &dup], 1);
    assert!(err.contains(&format!("merge into #{keep}")), "{err}");
}

#[test]
fn export_pairs_writes_what_people_judged() {
    let (env, ids) = suppliers();
    let (a, b, c) = (ids[0].to_string(), ids[1].to_string(), ids[2].to_string());
    env.ok("alice", &["not-duplicate", &c, &a]);
    env.ok("sup", &["merge", &b, "--into", &a]);
    let csv = env.ok("viewer", &["export", "--pairs"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "a,b,verdict,by,time");
    assert!(lines[1].starts_with(&format!("{a},{b},same,sup,")), "{csv}");
    assert!(
        lines[2].starts_with(&format!("{a},{c},not_same,alice,")),
        "{csv}"
    );
    let jsonl = env.ok("viewer", &["export", "--pairs", "--format", "jsonl"]);
    let first: serde_json::Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    assert_eq!(first["verdict"], "same");
    env.fails("viewer", &["export", "--pairs", "--events"], 2);
}

#[test]
fn import_says_how_many_rows_look_like_existing_items() {
    let (env, _) = suppliers();
    let file = env.dir.path().join("more.csv");
    std::fs::write(
        &file,
        "title,vat\nBrightwater again,GB-123-456-789\nNew supplier,FR111\nHarbour again,gb555\n",
    )
    .unwrap();
    let out = env.ok("sup", &["import", file.to_str().unwrap(), "--queue", "v"]);
    assert!(
        out.contains("2 row(s) look like existing items (same vat): see caseload similar"),
        "{out}"
    );
}

#[test]
fn import_skips_rows_that_duplicate_open_items_and_names_them() {
    let (env, ids) = suppliers();
    // One supplier is finished: a row like it is imported all the same.
    let harbour = ids[3].to_string();
    let (_, token) = env.claim("alice", &["--queue", "v", "--id", &harbour]);
    env.ok(
        "alice",
        &["complete", &harbour, "--token", &token.to_string()],
    );
    let file = env.dir.path().join("more.csv");
    std::fs::write(
        &file,
        "title,vat\nBrightwater again,GB-123-456-789\nNew supplier,FR111\nHarbour again,gb555\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let out = env.ok("sup", &["import", f, "--queue", "v", "--skip-duplicates"]);
    assert!(out.starts_with("Imported 2 new item(s)"), "{out}");
    assert!(
        out.contains(&format!(
            "left out 1 row(s) whose duplicate key equals an open item's \
             (--skip-duplicates): line 2 like #{}",
            ids[0]
        )),
        "{out}"
    );
    let listed = env.ok(
        "viewer",
        &["list", "--queue", "v", "--state", "all", "--json"],
    );
    assert!(!listed.contains("Brightwater again"), "{listed}");
    assert!(listed.contains("Harbour again"), "{listed}");
    env.fails(
        "sup",
        &[
            "import",
            f,
            "--queue",
            "v",
            "--skip-duplicates",
            "--keep-ids",
        ],
        2,
    );
}
