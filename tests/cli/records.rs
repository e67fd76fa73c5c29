//! Verification records in and out (issue 26 §3): import into a queue's fields (values
//! that break a rule imported as they are and counted; an unknown column refused, or
//! defined as a text field by a supervisor's `--define-fields`), on SQLite and PostgreSQL.

use serde_json::Value;

use crate::support::backend::PgBackend;
use crate::support::cli::Env;

/// Runs `story` on a fresh SQLite database and, when a server is configured, on a fresh
/// PostgreSQL schema (`sup` created both, so is their first supervisor).
pub(crate) fn on_both(story: impl Fn(&Env)) {
    on_both_with(|env, _| story(env));
}

/// As [`on_both`], with a maker of more fresh databases of the same backend.
pub(crate) fn on_both_with(story: impl Fn(&Env, &dyn Fn() -> Env)) {
    let sqlite = || Env::init("sup");
    story(&sqlite(), &sqlite);
    if PgBackend::from_env().is_none() {
        return;
    }
    let schemas = std::cell::RefCell::new(Vec::new());
    let pg = || {
        let b = PgBackend::from_env().unwrap();
        let env = Env {
            db: b.url.clone().into(),
            ..Env::new()
        };
        schemas.borrow_mut().push(b);
        env.ok("sup", &["init"]);
        env
    };
    story(&pg(), &pg);
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
        // (`export --queue` writes each field as its own key.)
        let p = items(env, "verify");
        // Good values in their canonical form, as `caseload set` stores them.
        assert_eq!(p[0]["phone"], "+4930901820");
        assert_eq!(p[0]["count"], 3);
        assert_eq!(p[0]["vat"], "DE123456789");
        // Broken ones as they were.
        assert_eq!(p[1]["vat"], "HU1181");
        assert_eq!(p[1]["email"], "b@@example");
        assert_eq!(p[1]["count"], "x");
        // Empty cells set nothing.
        assert!(p[2]["vat"].is_null() && p[2]["phone"].is_null(), "{}", p[2]);

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
        let i = &items(env, "verify")[3];
        assert_eq!(
            (&i["vat"], &i["count"]),
            (&"FR12345678901".into(), &7.into())
        );
        assert_eq!(params(i), serde_json::json!({"note": "x"}));
    });
}

/// The field columns are the fields of --queue: a row naming another queue is refused,
/// with or without --define-fields (which defined them on --queue while the rows went
/// elsewhere, unchecked), and nothing is written.
#[test]
fn a_row_of_another_queue_with_field_values_is_refused() {
    on_both(|env| {
        supplier_queue(env, "verify");
        env.ok("sup", &["queue", "set", "other", "--create"]);
        let known = write(
            env,
            "known.csv",
            "title,queue,vat\nGood GmbH,verify,DE123456789\nElsewhere,other,DE123456789\n",
        );
        let new = write(
            env,
            "new.csv",
            "title,queue,vat,note\nGood GmbH,verify,DE123456789,x\nElsewhere,other,DE1234567,y\n",
        );
        let before = state(env, "verify");
        for (csv, extra, names) in [
            (&known, None, "columns vat fill"),
            (&new, Some("--define-fields"), "columns vat, note fill"),
        ] {
            let mut args = vec!["import", csv.as_str(), "--queue", "verify"];
            args.extend(extra);
            let err = env.fails("sup", &args, 1);
            assert!(
                err.contains("line 3")
                    && err.contains("queue 'other' is not 'verify', the queue --queue names")
                    && err.contains(names),
                "{err}"
            );
            assert_eq!(state(env, "verify"), before);
        }
        let other = env.ok("sup", &["field", "list", "other"]);
        assert!(other.contains("has no fields"), "{other}");
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
            err.contains("unknown columns 'postcode', 'city'")
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
        let p = &items(env, "verify")[0];
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

/// Each item's title and field values, from an export of queue `q`.
fn field_values(env: &Env, q: &str) -> Vec<Value> {
    items(env, q)
        .iter()
        .map(|i| serde_json::json!([i["title"], i["vat"], i["email"], i["phone"], i["count"]]))
        .collect()
}

#[test]
fn export_writes_each_field_as_a_column_and_a_round_trip_keeps_the_values() {
    on_both_with(|env, fresh| {
        supplier_queue(env, "verify");
        let csv = write(
            env,
            "suppliers.csv",
            "title,vat,email,phone,count,params\n\
             Good GmbH,DE123456789,a@example.com,030 901820,3,\"{\"\"note\"\":\"\"keep\"\"}\"\n\
             Typo Kft,HU1181,=cmd@@example,,x,\n",
        );
        env.ok("sup", &["import", &csv, "--queue", "verify"]);
        // A correction under the lock.
        let (id, _) = env.claim("alice", &["--queue", "verify"]);
        assert_eq!(id, 1);
        env.ok("alice", &["set", "1", "phone=+49 30 901821"]);
        let (id, _) = env.claim("alice", &["--queue", "verify"]);
        env.ok(
            "alice",
            &["set", &id.to_string(), "vat=HU11816602", "count=4"],
        );
        env.ok("alice", &["release", &id.to_string()]);

        // CSV: the fields are the last columns, params keeps the other keys.
        let out = env.ok("sup", &["export", "--queue", "verify"]);
        let mut lines = out.lines();
        let header = lines.next().unwrap();
        assert!(header.ends_with(",vat,email,phone,count"), "{header}");
        let first = lines.next().unwrap();
        assert!(
            first.contains("DE123456789,a@example.com,'+4930901821,3")
                && first.contains(r#""{""note"":""keep""}""#),
            "{first}"
        );
        // A formula-like value is neutralized as any cell is.
        assert!(out.contains(",'=cmd@@example,"), "{out}");
        // JSON Lines: a key per field, null where the record has none.
        let got = items(env, "verify");
        assert_eq!(got[0]["vat"], "DE123456789");
        assert_eq!(got[0]["params"], serde_json::json!({"note": "keep"}));
        assert_eq!(got[1]["phone"], Value::Null);
        assert_eq!(got[1]["count"], 4);

        let want = field_values(env, "verify");
        for format in ["csv", "jsonl"] {
            let path = env.dir.path().join(format!("out.{format}"));
            let text = env.ok("sup", &["export", "--queue", "verify", "--format", format]);
            std::fs::write(&path, text).unwrap();
            let copy = fresh();
            supplier_queue(&copy, "verify");
            let out = copy.ok(
                "sup",
                &["import", path.to_str().unwrap(), "--queue", "verify"],
            );
            // The broken values come back as they were, counted again.
            assert!(
                out.contains("Imported 2 new") && out.contains("email 1"),
                "{format}: {out}"
            );
            assert_eq!(field_values(&copy, "verify"), want, "{format}");
            assert_eq!(
                params(&items(&copy, "verify")[0])["note"],
                "keep",
                "{format}"
            );
        }
    });
}

#[test]
fn the_corrections_file_and_the_comments() {
    on_both(|env| {
        supplier_queue(env, "verify");
        env.ok(
            "producer",
            &[
                "add",
                "--queue",
                "verify",
                "--title",
                "Typo Kft",
                "--params",
                r#"{"vat":"HU1181"}"#,
            ],
        );
        env.claim("alice", &["--queue", "verify"]);
        env.ok(
            "alice",
            &["set", "1", "vat=HU11816602", "phone=030 901820", "count=+7"],
        );
        env.ok("bob", &["comment", "1", "called them: =the new number"]);

        let csv = env.ok("sup", &["export", "--events", "--kind", "field_changed"]);
        let rows: Vec<&str> = csv.lines().collect();
        assert_eq!(rows[0], "item,field,from,to,who,when,line,typed");
        assert_eq!(rows.len(), 4, "{csv}");
        assert!(
            rows[1].starts_with("1,vat,HU1181,HU11816602,alice,") && rows[1].ends_with(",,"),
            "{csv}"
        );
        assert!(
            rows[2].starts_with("1,phone,,'+4930901820,alice,")
                && rows[2].ends_with(",,030 901820"),
            "{csv}"
        );
        assert!(rows[3].starts_with("1,count,,7,alice,"), "{csv}");
        let jsonl = env.ok(
            "sup",
            &[
                "export",
                "--events",
                "--kind",
                "field_changed",
                "--format",
                "jsonl",
            ],
        );
        let all: Vec<Value> = jsonl
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(all[0]["field"], "vat");
        assert_eq!(all[0]["from"], "HU1181");
        assert_eq!(all[0]["who"], "alice");
        assert!(all[0].get("typed").is_none(), "{}", all[0]);
        assert_eq!(all[1]["to"], "+4930901820");
        assert_eq!(all[1]["typed"], "030 901820");
        assert_eq!(all[2]["to"], 7);
        // Any other kind filters the ordinary trail.
        let locked = env.ok("sup", &["export", "--events", "--kind", "locked"]);
        assert_eq!(locked.lines().count(), 2, "{locked}");
        let err = env.fails("sup", &["export", "--events", "--kind", "typo"], 2);
        assert!(err.contains("field_changed"), "{err}");
        env.fails("sup", &["export", "--kind", "locked"], 2);

        let comments = env.ok("sup", &["export", "--comments", "--queue", "verify"]);
        let rows: Vec<&str> = comments.lines().collect();
        assert_eq!(rows[0], "item,author,login,time,text");
        assert!(
            rows[1].starts_with("1,bob,") && rows[1].ends_with(",called them: =the new number"),
            "{comments}"
        );
        let jsonl = env.ok("sup", &["export", "--comments", "--format", "jsonl"]);
        let c: Value = serde_json::from_str(jsonl.trim()).unwrap();
        assert_eq!(c["item"], 1);
        assert_eq!(c["author"], "bob");
        assert_eq!(c["text"], "called them: =the new number");
        assert!(c["login"].is_string() && c["time"].is_string(), "{c}");
        let none = env.ok("sup", &["export", "--comments", "--since", "2999-01-01"]);
        assert_eq!(none.lines().count(), 1, "{none}");
    });
}

/// The ids `list --search TEXT` finds (all states, every queue unless `extra` names one).
fn found(env: &Env, text: &str, extra: &[&str]) -> Vec<i64> {
    let args = [
        &["list", "--state", "all", "--search", text, "--json"][..],
        extra,
    ]
    .concat();
    let out: Value = serde_json::from_str(&env.ok("alice", &args)).unwrap();
    let mut ids: Vec<i64> = (out.as_array().unwrap().iter())
        .map(|i| i["id"].as_i64().unwrap())
        .collect();
    ids.sort_unstable();
    ids
}

#[test]
fn a_qualified_word_searches_its_field_only_and_an_unknown_qualifier_is_refused() {
    on_both(|env| {
        supplier_queue(env, "verify");
        env.ok(
            "sup",
            &["field", "set", "verify", "contact", "--type", "text"],
        );
        let add = |title: &str, params: &str| {
            env.ok(
                "producer",
                &[
                    "add", "--queue", "verify", "--title", title, "--params", params,
                ],
            );
        };
        add(
            "Good GmbH",
            r#"{"vat":"DE123456789","contact":"José Müller"}"#,
        );
        add(
            "Mentions DE123 in its title",
            r#"{"vat":"FR999","contact":"de123"}"#,
        );
        add("Another", r#"{"vat":"de1234","count":1234}"#);
        env.ok("producer", &["add", "--title", "elsewhere de123"]);

        // The word alone is found anywhere; qualified, in that field only.
        assert_eq!(found(env, "de123", &[]), [1, 2, 3, 4]);
        assert_eq!(found(env, "vat:de123", &[]), [1, 3]);
        assert_eq!(found(env, "VAT:DE123", &["--queue", "verify"]), [1, 3]);
        // Case and accents fold as elsewhere; qualified and free words combine.
        assert_eq!(found(env, "contact:JOSE", &[]), [1]);
        assert_eq!(found(env, "contact:muller good", &[]), [1]);
        assert_eq!(found(env, "contact:muller another", &[]), Vec::<i64>::new());
        // A number's value is its text.
        assert_eq!(found(env, "count:234", &[]), [3]);
        // A URL or a time is a word, not a qualifier.
        assert_eq!(found(env, "https://nowhere", &[]), Vec::<i64>::new());
        assert_eq!(found(env, "10:42", &[]), Vec::<i64>::new());

        let err = env.fails("alice", &["list", "--search", "postcode:99999"], 1);
        assert!(
            err.contains("unknown qualifier 'postcode:'")
                && err.contains("known: contact: count: email: phone: vat:"),
            "{err}"
        );
        // A queue without fields knows none.
        env.ok("sup", &["queue", "set", "plain", "--create"]);
        let err = env.fails(
            "alice",
            &["list", "--search", "vat:de123", "--queue", "plain"],
            1,
        );
        assert!(err.contains("no queue searched has fields"), "{err}");
    });
}

/// An import marks the rows that keep every rule as checked (on SQLite: their digest, so
/// that their Complete checks nothing again), and only those; with `--define-fields` too
/// (the rows are checked against the fields as defined). A marked row changed afterwards
/// by another program is checked again at Complete. Rows of a queue without fields get
/// no digest.
#[test]
fn import_marks_the_rows_that_keep_every_rule_checked() {
    let env = Env::init("sup");
    supplier_queue(&env, "verify");
    let csv = write(
        &env,
        "suppliers.csv",
        "title,vat,email,note\n\
         Good GmbH,DE123456789,a@example.com,first\n\
         Typo Kft,HU1181,b@example.com,second\n",
    );
    let out = env.ok(
        "sup",
        &["import", &csv, "--queue", "verify", "--define-fields"],
    );
    assert!(out.contains("Imported 2 new item(s)"), "{out}");
    let db = rusqlite::Connection::open(&env.db).unwrap();
    let marked: Vec<(String, bool)> = db
        .prepare("SELECT title, fields_checked IS NOT NULL FROM items ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        marked,
        [
            ("Good GmbH".to_string(), true),
            ("Typo Kft".to_string(), false)
        ]
    );
    // Another program breaks the marked one's e-mail: its Complete finds it.
    db.execute(
        "UPDATE items SET params = json_set(params, '$.email', 'nope') WHERE title = 'Good GmbH'",
        [],
    )
    .unwrap();
    let (id, token) = env.claim("alice", &["--queue", "verify"]);
    let err = env.fails(
        "alice",
        &["complete", &id.to_string(), "--token", &token.to_string()],
        1,
    );
    assert!(err.contains("email"), "{err}");
    // A queue without fields: its rows get no digest (nothing is checked at their
    // Complete, and a field defined later would not match one).
    env.ok("sup", &["queue", "set", "plain", "--create"]);
    let csv = write(
        &env,
        "plain.csv",
        "title,params\nPlain one,\"{\"\"vat\"\": \"\"DE1\"\"}\"\n",
    );
    env.ok("sup", &["import", &csv, "--queue", "plain"]);
    let marked: i64 = db
        .query_row(
            "SELECT count(*) FROM items WHERE queue = 'plain' AND fields_checked IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(marked, 0);
    let plain: i64 = db
        .query_row(
            "SELECT count(*) FROM items WHERE queue = 'plain'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(plain, 1);
}
