//! The item's shape in every output that writes all its columns (`list --json`,
//! `claim --json`, `export` as JSON Lines and CSV), pinned byte for byte: scripts parse
//! them, so a change to how `Item` is serialized must show up here.

use crate::support::cli::Env;

/// Three items with every column set one way or another (held with notes, done, failed),
/// their times rewritten to fixed values so the output is the same on every run.
fn env() -> Env {
    let env = Env::init("sup");
    let add = |title: &str, extra: &[&str]| {
        let mut args = vec!["add", "--title", title];
        args.extend_from_slice(extra);
        env.ok("producer", &args);
    };
    add(
        "Reset password",
        &[
            "--queue",
            "desk",
            "--create-queue",
            "--body",
            "line 1\nline 2",
            "--params",
            "{\"b\": 1, \"a\": [2, \"x\"]}",
            "--priority",
            "3",
            "--due",
            "2026-12-01T10:00:00Z",
            "--request-id",
            "r-1",
        ],
    );
    add("=SUM(A1)", &[]);
    add("Broken printer", &[]);
    env.ok("alice", &["claim", "--id", "1"]);
    env.ok("bob", &["claim", "--id", "2"]);
    env.ok("bob", &["complete", "2", "--result", "done, \"quoted\""]);
    env.ok("bob", &["claim", "--id", "3"]);
    env.ok("bob", &["fail", "3", "--reason", "no toner"]);
    let c = rusqlite::Connection::open(&env.db).unwrap();
    c.execute_batch(
        "UPDATE items SET created_at = 1764583200000 + id; \
         UPDATE items SET notes = 'called, no answer', lock_time = 1764583260000 WHERE id = 1; \
         UPDATE items SET finished_at = 1764583320000 + id WHERE id IN (2, 3); \
         UPDATE items SET params = '\"not an object\"' WHERE id = 3;",
    )
    .unwrap();
    env
}

const ITEM_1: &str = r#"{"body":"line 1\nline 2","created_at":"2025-12-01T10:00:00.001Z","created_by":"producer","due_at":"2026-12-01T10:00:00.000Z","error":null,"finished_at":null,"finished_by":null,"id":1,"lock_time":"2025-12-01T10:01:00.000Z","lock_token":1,"lock_user":"alice","notes":"called, no answer","params":{"a":[2,"x"],"b":1},"priority":3,"queue":"desk","request_id":"r-1","result":null,"state":"open","title":"Reset password"}"#;
const ITEM_2: &str = r#"{"body":"","created_at":"2025-12-01T10:00:00.002Z","created_by":"producer","due_at":null,"error":null,"finished_at":"2025-12-01T10:02:00.002Z","finished_by":"bob","id":2,"lock_time":null,"lock_token":1,"lock_user":null,"notes":"","params":{},"priority":0,"queue":"default","request_id":null,"result":"done, \"quoted\"","state":"done","title":"=SUM(A1)"}"#;
const ITEM_3: &str = r#"{"body":"","created_at":"2025-12-01T10:00:00.003Z","created_by":"producer","due_at":null,"error":"no toner","finished_at":"2025-12-01T10:02:00.003Z","finished_by":"bob","id":3,"lock_time":null,"lock_token":1,"lock_user":null,"notes":"","params":"not an object","priority":0,"queue":"default","request_id":null,"result":null,"state":"failed","title":"Broken printer"}"#;

#[test]
fn list_json_prints_each_item_with_schema_names_and_rfc3339_times() {
    let env = env();
    let out = env.ok("viewer", &["list", "--state", "all", "--json"]);
    assert_eq!(out, format!("[{ITEM_1},{ITEM_2},{ITEM_3}]\n"));
}

#[test]
fn export_jsonl_prints_one_item_a_line_in_the_same_shape() {
    let env = env();
    let out = env.ok("viewer", &["export", "--format", "jsonl"]);
    assert_eq!(out, format!("{ITEM_1}\n{ITEM_2}\n{ITEM_3}\n"));
}

#[test]
fn export_csv_prints_the_columns_in_schema_order_with_formulas_neutralized() {
    let env = env();
    let out = env.ok("viewer", &["export", "--format", "csv"]);
    let expected = "\
id,queue,request_id,title,body,params,priority,due_at,state,lock_user,lock_time,lock_token,notes,result,error,created_at,created_by,finished_at,finished_by
1,desk,r-1,Reset password,\"line 1\nline 2\",\"{\"\"b\"\": 1, \"\"a\"\": [2, \"\"x\"\"]}\",3,2026-12-01T10:00:00.000Z,open,alice,2025-12-01T10:01:00.000Z,1,\"called, no answer\",,,2025-12-01T10:00:00.001Z,producer,,
2,default,,'=SUM(A1),,{},0,,done,,,1,,\"done, \"\"quoted\"\"\",,2025-12-01T10:00:00.002Z,producer,2025-12-01T10:02:00.002Z,bob
3,default,,Broken printer,,\"\"\"not an object\"\"\",0,,failed,,,1,,,no toner,2025-12-01T10:00:00.003Z,producer,2025-12-01T10:02:00.003Z,bob
";
    assert_eq!(out, expected);
}

#[test]
fn claim_json_prints_the_taken_item_in_the_same_shape() {
    let env = Env::init("sup");
    env.ok("producer", &["add", "--title", "One"]);
    let c = rusqlite::Connection::open(&env.db).unwrap();
    c.execute("UPDATE items SET created_at = 1764583200001", [])
        .unwrap();
    let out = env.ok("alice", &["claim", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let lock_time = v["lock_time"].as_str().unwrap().to_string();
    assert_eq!(
        out,
        format!(
            "{{\"body\":\"\",\"created_at\":\"2025-12-01T10:00:00.001Z\",\"created_by\":\"producer\",\
             \"due_at\":null,\"error\":null,\"finished_at\":null,\"finished_by\":null,\"id\":1,\
             \"lock_time\":\"{lock_time}\",\"lock_token\":1,\"lock_user\":\"alice\",\"notes\":\"\",\
             \"params\":{{}},\"priority\":0,\"queue\":\"default\",\"request_id\":null,\
             \"result\":null,\"state\":\"open\",\"title\":\"One\"}}\n"
        )
    );
}
