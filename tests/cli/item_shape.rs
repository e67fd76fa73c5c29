//! The item's shape in every output that writes all its columns (`list --json`,
//! `claim --json`, `export` as JSON Lines and CSV), pinned byte for byte: scripts parse
//! them, so a change to how `Item` is serialized must show up here. And the newest column
//! (`source`, added through the field table's walkthrough) everywhere a column goes.

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
            "--source",
            "crm",
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
         UPDATE items SET notes = 'called, no answer', lock_time = 1764583260000, \
         lock_expires_at = 1764585060000 WHERE id = 1; \
         UPDATE items SET finished_at = 1764583320000 + id WHERE id IN (2, 3); \
         UPDATE items SET params = '\"not an object\"' WHERE id = 3;",
    )
    .unwrap();
    env
}

const ITEM_1: &str = r#"{"body":"line 1\nline 2","created_at":"2025-12-01T10:00:00.001Z","created_by":"producer","due_at":"2026-12-01T10:00:00.000Z","duplicate_of":null,"error":null,"finished_at":null,"finished_by":null,"id":1,"lock_expires_at":"2025-12-01T10:31:00.000Z","lock_time":"2025-12-01T10:01:00.000Z","lock_token":1,"lock_user":"alice","notes":"called, no answer","params":{"a":[2,"x"],"b":1},"park_reason":null,"parked_by":null,"parked_until":null,"priority":3,"queue":"desk","request_id":"r-1","result":null,"source":"crm","state":"open","title":"Reset password"}"#;
const ITEM_2: &str = r#"{"body":"","created_at":"2025-12-01T10:00:00.002Z","created_by":"producer","due_at":null,"duplicate_of":null,"error":null,"finished_at":"2025-12-01T10:02:00.002Z","finished_by":"bob","id":2,"lock_expires_at":null,"lock_time":null,"lock_token":1,"lock_user":null,"notes":"","params":{},"park_reason":null,"parked_by":null,"parked_until":null,"priority":0,"queue":"default","request_id":null,"result":"done, \"quoted\"","source":null,"state":"done","title":"=SUM(A1)"}"#;
const ITEM_3: &str = r#"{"body":"","created_at":"2025-12-01T10:00:00.003Z","created_by":"producer","due_at":null,"duplicate_of":null,"error":"no toner","finished_at":"2025-12-01T10:02:00.003Z","finished_by":"bob","id":3,"lock_expires_at":null,"lock_time":null,"lock_token":1,"lock_user":null,"notes":"","params":"not an object","park_reason":null,"parked_by":null,"parked_until":null,"priority":0,"queue":"default","request_id":null,"result":null,"source":null,"state":"failed","title":"Broken printer"}"#;

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
id,queue,request_id,title,body,params,priority,due_at,state,lock_user,lock_time,lock_token,notes,result,error,created_at,created_by,finished_at,finished_by,source,parked_until,parked_by,park_reason,lock_expires_at,duplicate_of
1,desk,r-1,Reset password,\"line 1\nline 2\",\"{\"\"b\"\": 1, \"\"a\"\": [2, \"\"x\"\"]}\",3,2026-12-01T10:00:00.000Z,open,alice,2025-12-01T10:01:00.000Z,1,\"called, no answer\",,,2025-12-01T10:00:00.001Z,producer,,,crm,,,,2025-12-01T10:31:00.000Z,
2,default,,'=SUM(A1),,{},0,,done,,,1,,\"done, \"\"quoted\"\"\",,2025-12-01T10:00:00.002Z,producer,2025-12-01T10:02:00.002Z,bob,,,,,,
3,default,,Broken printer,,\"\"\"not an object\"\"\",0,,failed,,,1,,,no toner,2025-12-01T10:00:00.003Z,producer,2025-12-01T10:02:00.003Z,bob,,,,,,
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
    let expires = v["lock_expires_at"].as_str().unwrap().to_string();
    let at = |t: &str| {
        chrono::DateTime::parse_from_rfc3339(t)
            .unwrap()
            .timestamp_millis()
    };
    assert_eq!(
        at(&expires) - at(&lock_time),
        1_800_000,
        "the default queue's 30 minutes"
    );
    assert_eq!(
        out,
        format!(
            "{{\"body\":\"\",\"created_at\":\"2025-12-01T10:00:00.001Z\",\"created_by\":\"producer\",\
             \"due_at\":null,\"duplicate_of\":null,\"error\":null,\"finished_at\":null,\"finished_by\":null,\"id\":1,\
             \"lock_expires_at\":\"{expires}\",\"lock_time\":\"{lock_time}\",\"lock_token\":1,\"lock_user\":\"alice\",\"notes\":\"\",\
             \"params\":{{}},\"park_reason\":null,\"parked_by\":null,\"parked_until\":null,\"priority\":0,\"queue\":\"default\",\"request_id\":null,\
             \"result\":null,\"source\":null,\"state\":\"open\",\"title\":\"One\"}}\n"
        )
    );
}

/// `source`, the column added through the field table's walkthrough: `add --source`,
/// import's column or key, export (CSV and JSON Lines), every `--json`, search (scanned
/// and indexed), `show` and the detail pane.
#[test]
fn source_goes_wherever_a_column_goes() {
    use serde_json::Value;
    let env = Env::init("boss");
    let id = env.ok("boss", &["add", "--title", "Call back", "--source", "crm"]);
    let id = id.trim();
    let plain = env.ok("boss", &["add", "--title", "No source"]);
    let shown = env.ok("boss", &["show", id]);
    assert!(shown.contains("\nsource:     crm\n"), "{shown}");
    assert!(!env.ok("boss", &["show", plain.trim()]).contains("source:"));
    let v: Value = serde_json::from_str(&env.ok("boss", &["show", id, "--json"])).unwrap();
    assert_eq!(v["source"], "crm");
    let list: Value = serde_json::from_str(&env.ok("boss", &["list", "--json"])).unwrap();
    let sources: Vec<&Value> = (list.as_array().unwrap().iter())
        .map(|i| &i["source"])
        .collect();
    assert_eq!(sources, [&Value::from("crm"), &Value::Null]);
    let claimed: Value =
        serde_json::from_str(&env.ok("boss", &["claim", "--id", id, "--json"])).unwrap();
    assert_eq!(claimed["source"], "crm");
    // Searched (a new row is scanned on SQLite; indexed further down).
    let found: Value =
        serde_json::from_str(&env.ok("boss", &["list", "--search", "CRM", "--json"])).unwrap();
    assert_eq!(found.as_array().unwrap().len(), 1);
    assert_eq!(found[0]["id"].to_string(), id);

    // Import (CSV column, JSON Lines key) and export, both ways.
    let dir = env.dir.path();
    let csv = dir.join("in.csv");
    std::fs::write(&csv, "title,source\nFrom the web,web-form\nFrom nowhere,\n").unwrap();
    env.ok("boss", &["import", csv.to_str().unwrap()]);
    let jsonl = dir.join("in.jsonl");
    std::fs::write(&jsonl, "{\"title\": \"By mail\", \"source\": \"mail\"}\n").unwrap();
    env.ok("boss", &["import", jsonl.to_str().unwrap()]);
    let out = env.ok("boss", &["export", "--format", "csv"]);
    let mut rows = csv::Reader::from_reader(out.as_bytes());
    let header = rows.headers().unwrap().clone();
    let at = header.iter().position(|h| h == "source").unwrap();
    let got: Vec<String> = rows.records().map(|r| r.unwrap()[at].to_string()).collect();
    assert_eq!(got, ["crm", "", "web-form", "", "mail"]);
    let lines = env.ok("boss", &["export", "--format", "jsonl"]);
    let last: Value = serde_json::from_str(lines.lines().last().unwrap()).unwrap();
    assert_eq!(last["source"], "mail");
    let back = Env::init("boss");
    let file = back.dir.path().join("out.csv");
    std::fs::write(&file, &out).unwrap();
    back.ok("boss", &["import", file.to_str().unwrap()]);
    let round: Value = serde_json::from_str(&back.ok("boss", &["list", "--json"])).unwrap();
    assert_eq!(
        round[0]["source"], "crm",
        "an exported source imports again"
    );

    // Indexed for search, and the detail pane.
    let item = {
        use caseload::store::{Reads, Writes};
        let opts = caseload::store::sqlite::OpenOptions {
            allow_network_fs: true,
            ..Default::default()
        };
        let actor = caseload::domain::Actor::new("boss", "boss");
        let mut s = caseload::store::sqlite::SqliteStore::open(&env.db, actor, &opts).unwrap();
        while s.index_search(1000).unwrap() > 0 {}
        s.item(id.parse().unwrap()).unwrap()
    };
    let found: Value =
        serde_json::from_str(&env.ok("boss", &["list", "--search", "web-f", "--json"])).unwrap();
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    let mut state = caseload::app::State::new("boss", 0, 120, 40, true);
    caseload::app::update(
        &mut state,
        caseload::app::Msg::Opened {
            taken: false,
            result: Ok((item, Vec::new())),
        },
    );
    let first = &state.detail.as_ref().unwrap().lines[0].text;
    assert!(first.ends_with("· source crm"), "{first}");
}
