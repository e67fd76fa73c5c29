//! Verification records in and out (issue 26 §3): import into a queue's fields (values
//! that break a rule imported as they are and counted; an unknown column refused, or
//! defined as a text field by a supervisor's `--define-fields`), on SQLite and PostgreSQL.

use serde_json::Value;

use crate::support::backend::PgBackend;
use crate::support::cli::Env;

/// Runs `story` on a fresh SQLite database and, when a server is configured, on a fresh
/// PostgreSQL schema (`sup` created both, so is their first supervisor).
pub(crate) fn on_both(story: impl Fn(&Env)) {
    story(&Env::init("sup"));
    if let Some(pg) = PgBackend::from_env() {
        let env = Env {
            db: pg.url.clone().into(),
            ..Env::new()
        };
        env.ok("sup", &["init"]);
        story(&env);
    }
}

/// Queue `q` with fields vat (required, a pattern), email, phone (Germany) and count.
pub(crate) fn supplier_queue(env: &Env, q: &str) {
    env.ok("sup", &["queue", "set", q, "--create"]);
    let field = |name: &str, rest: &[&str]| {
        env.ok("sup", &[&["field", "set", q, name][..], rest].concat());
    };
    field(
        "vat",
        &[
            "--type",
            "text",
            "--required",
            "--pattern",
            "^[A-Z]{2}[0-9A-Z]{8,12}$",
        ],
    );
    field("email", &["--type", "email"]);
    field("phone", &["--type", "phone", "--country", "DE"]);
    field("count", &["--type", "integer"]);
}

pub(crate) fn write(env: &Env, name: &str, text: &str) -> String {
    let path = env.dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// Every item of queue `q` as exported (JSON Lines), by id.
pub(crate) fn items(env: &Env, q: &str) -> Vec<Value> {
    env.ok("sup", &["export", "--queue", q, "--format", "jsonl"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// What a refused command must leave as it was: the items, the fields, the audit.
fn state(env: &Env, q: &str) -> String {
    let items = env.ok("sup", &["export", "--format", "jsonl"]);
    let fields = env.ok("sup", &["field", "list", q, "--json"]);
    let audit = env.ok("sup", &["history"]);
    format!("{items}\n{fields}\n{audit}")
}

fn params(item: &Value) -> Value {
    match &item["params"] {
        Value::String(s) => serde_json::from_str(s).unwrap(),
        other => other.clone(),
    }
}

#[test]
fn import_fills_the_fields_and_counts_the_values_that_break_a_rule() {
    on_both(|env| {
        supplier_queue(env, "verify");
        let csv = write(
            env,
            "suppliers.csv",
            "title,VAT,email,phone,count\n\
             Good GmbH,DE123456789,a@example.com,030 901820,3\n\
             Typo Kft,HU1181,b@@example,+36 1 234 5678,x\n\
             No vat,,c@example.com,,\n",
        );
        let out = env.ok("alice", &["import", &csv, "--queue", "verify"]);
        assert!(out.contains("Imported 3 new item(s)"), "{out}");
        // vat: one breaks the pattern, one is empty but required; email, count: one each.
        assert!(
            out.contains("breaks a field's rules (imported as they are): vat 2, email 1, count 1"),
            "{out}"
        );
        let got = items(env, "verify");
        let p: Vec<Value> = got.iter().map(params).collect();
        // Good values in their canonical form, as `caseload set` stores them.
        assert_eq!(p[0]["phone"], "+4930901820");
        assert_eq!(p[0]["count"], 3);
        assert_eq!(p[0]["vat"], "DE123456789");
        // Broken ones as they were.
        assert_eq!(p[1]["vat"], "HU1181");
        assert_eq!(p[1]["email"], "b@@example");
        assert_eq!(p[1]["count"], "x");
        // Empty cells set nothing.
        assert!(
            p[2].get("vat").is_none() && p[2].get("phone").is_none(),
            "{}",
            p[2]
        );

        // JSON Lines: keys named like fields, next to params' own keys.
        let jsonl = write(
            env,
            "more.jsonl",
            "{\"title\":\"J\",\"vat\":\"FR12345678901\",\"count\":7,\"params\":{\"note\":\"x\"}}\n",
        );
        let out = env.ok("alice", &["import", &jsonl, "--queue", "verify"]);
        assert!(
            out.contains("Imported 1 new") && !out.contains("breaks"),
            "{out}"
        );
        let p = params(&items(env, "verify")[3]);
        assert_eq!(
            p,
            serde_json::json!({"vat": "FR12345678901", "count": 7, "note": "x"})
        );
    });
}

#[test]
fn an_unknown_column_is_refused_naming_the_fields_unless_a_supervisor_defines_them() {
    on_both(|env| {
        supplier_queue(env, "verify");
        let csv = write(
            env,
            "new.csv",
            "title,vat,postcode,city\nA,DE123456789,10115,Berlin\n",
        );
        let before = state(env, "verify");
        let err = env.fails("alice", &["import", &csv, "--queue", "verify"], 1);
        assert!(
            err.contains("unknown column 'postcode'")
                && err.contains("fields of queue 'verify': vat, email, phone, count")
                && err.contains("--define-fields")
                && err.contains("nothing imported"),
            "{err}"
        );
        // Staff may not define fields.
        let err = env.fails(
            "alice",
            &["import", &csv, "--queue", "verify", "--define-fields"],
            5,
        );
        assert!(err.contains("supervisor only"), "{err}");
        // A column that cannot be a field's name.
        let bad = write(env, "bad.csv", "title,Post Code\nA,1\n");
        let err = env.fails(
            "sup",
            &["import", &bad, "--queue", "verify", "--define-fields"],
            1,
        );
        assert!(err.contains("column 'Post Code'"), "{err}");
        // A JSON key given both ways.
        let twice = write(
            env,
            "twice.jsonl",
            "{\"title\":\"t\",\"vat\":\"DE123456789\",\"params\":{\"vat\":\"x\"}}\n",
        );
        let err = env.fails("sup", &["import", &twice, "--queue", "verify"], 1);
        assert!(
            err.contains("line 1") && err.contains("given twice"),
            "{err}"
        );
        assert_eq!(state(env, "verify"), before, "refusals change nothing");

        let out = env.ok(
            "sup",
            &["import", &csv, "--queue", "verify", "--define-fields"],
        );
        assert!(
            out.contains("Imported 1 new") && out.contains("defined text field(s): postcode, city"),
            "{out}"
        );
        let list = env.ok("sup", &["field", "list", "verify"]);
        let names: Vec<&str> = list
            .lines()
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        assert_eq!(
            names,
            ["vat", "email", "phone", "count", "postcode", "city"]
        );
        let audit = env.ok("sup", &["history"]);
        assert!(
            audit.contains("field verify.postcode") && audit.contains("field verify.city"),
            "{audit}"
        );
        let p = params(&items(env, "verify")[0]);
        assert_eq!(p["postcode"], "10115");
        assert_eq!(p["city"], "Berlin");
        // The fields now exist: the same file again is recognised, nothing defined.
        let again = env.ok("alice", &["import", &csv, "--queue", "verify"]);
        assert!(
            again.contains("Imported 0 new") && !again.contains("defined"),
            "{again}"
        );
        // A first import into a new queue, in one step.
        let out = env.ok(
            "sup",
            &[
                "import",
                &csv,
                "--queue",
                "fresh",
                "--create-queue",
                "--define-fields",
            ],
        );
        assert!(
            out.contains("defined text field(s): vat, postcode, city"),
            "{out}"
        );
    });
}
