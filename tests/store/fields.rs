//! The field table is the schema: every built-in column of `items`, in order, with its
//! type and nullability, on SQLite and on PostgreSQL (fresh and migrated alike: the
//! migration tests compare those roads).

use crate::support::backend::{Backend, PgBackend, SqliteBackend};
use caseload::domain::fields::FIELDS;

/// The table's columns as `name type nullable`, in order.
fn expected(pg: bool) -> Vec<String> {
    FIELDS
        .iter()
        .map(|f| {
            let (sqlite, postgres) = f.kind.sql_type();
            let ty = if pg { postgres } else { sqlite };
            // SQLite's INTEGER PRIMARY KEY is NOT NULL without saying so.
            let null = f.kind.nullable() || (!pg && f.name == "id");
            format!("{} {ty} {null}", f.name)
        })
        .collect()
}

/// The columns as read, with `created_os` (which no field holds: the creator's login,
/// written by the store) checked and taken out.
fn without_created_os(mut got: Vec<String>, pg: bool) -> Vec<String> {
    let os = format!("created_os {} true", if pg { "text" } else { "TEXT" });
    let at = got.iter().position(|c| *c == os).expect("items.created_os");
    got.remove(at);
    got
}

#[test]
fn sqlite_items_has_the_field_table_s_columns() {
    let b = SqliteBackend::new();
    drop(b.open("boss", 0));
    let c = rusqlite::Connection::open(&b.path).unwrap();
    let mut stmt = c.prepare("PRAGMA table_info(items)").unwrap();
    let got: Vec<String> = stmt
        .query_map([], |r| {
            Ok(format!(
                "{} {} {}",
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)? == 0
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // Nor does `fields_checked`: the digest of a record whose fields were found to keep
    // their rules, written by the store (src/store/ops/fields.rs).
    let mut got = without_created_os(got, false);
    let at = (got.iter().position(|c| c == "fields_checked BLOB true")).expect("fields_checked");
    got.remove(at);
    assert_eq!(got, expected(false));
}

#[test]
fn postgres_items_has_the_field_table_s_columns() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    drop(b.open("boss", 0));
    let got: Vec<String> = b
        .admin()
        .query(
            "SELECT column_name, data_type, is_nullable = 'YES' FROM information_schema.columns \
             WHERE table_schema = $1 AND table_name = 'items' \
             ORDER BY ordinal_position",
            &[&b.schema],
        )
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{} {} {}",
                r.get::<_, String>(0),
                r.get::<_, String>(1),
                r.get::<_, bool>(2)
            )
        })
        .collect();
    // Nor do `fields_checked` and `fields_checked_by` (the digest of a record whose fields
    // were found to keep their rules, and the role that wrote it, stamped by the server).
    let mut got = without_created_os(got, true);
    for col in ["fields_checked bytea true", "fields_checked_by text true"] {
        let at = got.iter().position(|c| c == col).expect(col);
        got.remove(at);
    }
    assert_eq!(got, expected(true));
}
