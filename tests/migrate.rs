//! The migrator: a fresh database (schema.sql) and an old one brought up by the steps end
//! at the same schema, and migrating twice changes nothing.

use caseload::domain::Actor;
use caseload::store::migrate::{self, Migration};
use rusqlite::Connection;

fn shape(conn: &Connection) -> Vec<String> {
    let mut out = Vec::new();
    let mut stmt = conn
        .prepare("SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
        .unwrap();
    let objects: Vec<(String, String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (kind, name, table) in objects {
        out.push(format!("{kind} {name} on {table}"));
        if kind == "table" {
            let mut cols = conn
                .prepare(&format!("PRAGMA table_xinfo({name})"))
                .unwrap();
            for c in cols
                .query_map([], |r| {
                    Ok(format!(
                        "  col {} {} notnull={} default={:?} pk={}",
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, i64>(3)?,
                        r.get::<_, Option<String>>(4)?,
                        r.get::<_, i64>(5)?
                    ))
                })
                .unwrap()
            {
                out.push(c.unwrap());
            }
        }
        if kind == "index" {
            let sql: Option<String> = conn
                .query_row(
                    "SELECT sql FROM sqlite_master WHERE name = ?1",
                    [&name],
                    |r| r.get(0),
                )
                .unwrap();
            out.push(format!("  {}", sql.unwrap_or_default()));
        }
        if kind == "trigger" {
            let sql: String = conn
                .query_row(
                    "SELECT sql FROM sqlite_master WHERE name = ?1",
                    [&name],
                    |r| r.get(0),
                )
                .unwrap();
            out.push(format!(
                "  {}",
                sql.split_whitespace().collect::<Vec<_>>().join(" ")
            ));
        }
    }
    out
}

#[test]
fn fresh_and_migrated_schemas_are_the_same() {
    let actor = Actor::new("admin", "admin");
    let fresh = Connection::open_in_memory().unwrap();
    assert_eq!(
        migrate::migrate(&fresh, &actor, 0).unwrap(),
        Migration::Created
    );
    let old = Connection::open_in_memory().unwrap();
    migrate::create_at_version(&old, 1).unwrap();
    assert_eq!(
        migrate::migrate(&old, &actor, 0).unwrap(),
        Migration::Migrated { from: 1 }
    );
    assert_eq!(shape(&fresh), shape(&old));
    assert!(shape(&fresh).iter().any(|l| l.contains("item_counts")));
}

#[test]
fn migrating_twice_is_a_no_op() {
    let actor = Actor::new("admin", "admin");
    let conn = Connection::open_in_memory().unwrap();
    migrate::migrate(&conn, &actor, 0).unwrap();
    let before = shape(&conn);
    assert_eq!(
        migrate::migrate(&conn, &actor, 0).unwrap(),
        Migration::UpToDate
    );
    assert_eq!(before, shape(&conn));
    let supervisors: i64 = conn
        .query_row(
            "SELECT count(*) FROM users WHERE role = 'supervisor'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(supervisors, 1, "the creator is the first supervisor, once");
}
