//! The migrator: a fresh database (schema.sql) and an old one brought up by the steps end
//! at the same schema, and migrating twice changes nothing.

use crate::support;
use caseload::domain::Actor;
use caseload::store::Reads;
use caseload::store::migrate::{self, Migration};
use rusqlite::Connection;

fn shape(conn: &Connection) -> Vec<String> {
    let mut out = Vec::new();
    let mut stmt = conn
        .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
        .unwrap();
    let objects: Vec<(String, String, String, Option<String>)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let one_line =
        |sql: &str| format!("  {}", sql.split_whitespace().collect::<Vec<_>>().join(" "));
    for (kind, name, table, sql) in objects {
        out.push(format!("{kind} {name} on {table}"));
        let sql = sql.unwrap_or_default();
        if kind == "table" {
            // A virtual table's arguments (an index's tokenizer) are in its SQL only.
            if sql.starts_with("CREATE VIRTUAL TABLE") {
                out.push(one_line(&sql));
            }
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
            out.push(format!("  {sql}"));
        }
        if kind == "trigger" {
            out.push(one_line(&sql));
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
    assert!(
        shape(&fresh).iter().any(|l| l.contains("search_postings")),
        "the shape holds the search index's key"
    );
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

/// Every object of a PostgreSQL schema, as text that does not depend on the schema's name.
fn pg_shape(client: &mut postgres::Client, schema: &str) -> Vec<String> {
    let queries = [
        "SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || \
         ' null=' || is_nullable || ' default=' || coalesce(column_default, '-') || \
         ' identity=' || is_identity FROM information_schema.columns \
         WHERE table_schema = $1 AND table_name <> 'caseload_schema'",
        "SELECT 'index ' || indexname || ': ' || indexdef FROM pg_indexes \
         WHERE schemaname = $1 AND tablename <> 'caseload_schema'",
        "SELECT 'constraint ' || k.relname || '.' || c.conname || ': ' || \
         pg_get_constraintdef(c.oid) FROM pg_constraint c \
         JOIN pg_class k ON k.oid = c.conrelid JOIN pg_namespace n ON n.oid = k.relnamespace \
         WHERE n.nspname = $1 AND k.relname <> 'caseload_schema'",
        "SELECT 'trigger ' || t.tgname || ': ' || pg_get_triggerdef(t.oid) FROM pg_trigger t \
         JOIN pg_class k ON k.oid = t.tgrelid JOIN pg_namespace n ON n.oid = k.relnamespace \
         WHERE n.nspname = $1 AND NOT t.tgisinternal",
        "SELECT 'function ' || p.proname || ': ' || p.prosrc FROM pg_proc p \
         JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1",
        "SELECT 'table ' || c.relname || ' ' || coalesce(array_to_string(c.reloptions, ','), '') \
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = $1 AND c.relkind = 'r'",
    ];
    let mut out: Vec<String> = Vec::new();
    for q in queries {
        for row in client.query(q, &[&schema]).unwrap() {
            let line: String = row.get(0);
            out.push(
                line.replace(&format!("{schema}."), "")
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
    }
    out.sort();
    out
}

#[test]
fn postgres_fresh_and_migrated_schemas_are_the_same() {
    use caseload::store::postgres::{LATEST, PgOptions, PgStore, STEPS, migrate};
    let (Some(fresh), Some(old)) = (
        support::backend::PgBackend::from_env(),
        support::backend::PgBackend::from_env(),
    ) else {
        return;
    };
    let actor = Actor::new("admin", "admin");
    let mut store = PgStore::open(&fresh.url, actor.clone(), &PgOptions::default()).unwrap();
    assert!(store.created_schema());
    // The road of an old database: the first released step, then the migrator.
    assert_eq!(STEPS.len() as i64, LATEST);
    migrate::create_at_version(&mut old.admin(), 1).unwrap();
    let mut migrated = PgStore::open(&old.url, actor, &PgOptions::default()).unwrap();
    assert!(!migrated.created_schema());
    assert!(migrated.check().unwrap().is_empty());
    assert!(store.check().unwrap().is_empty());
    let mut admin = fresh.admin();
    let (a, b) = (
        pg_shape(&mut admin, &fresh.schema),
        pg_shape(&mut admin, &old.schema),
    );
    assert!(a.iter().any(|l| l.contains("item_counts")), "{a:?}");
    assert!(a.len() > 40, "the shape reads the schema: {a:?}");
    let only_fresh: Vec<&String> = a.iter().filter(|l| !b.contains(l)).collect();
    let only_old: Vec<&String> = b.iter().filter(|l| !a.contains(l)).collect();
    assert!(
        only_fresh.is_empty() && only_old.is_empty(),
        "schema.pg.sql and the released steps disagree:\n only fresh: {only_fresh:#?}\n only migrated: {only_old:#?}"
    );
}

#[test]
fn postgres_upgrade_lets_whoever_reads_the_holds_read_their_summary() {
    use caseload::store::postgres::migrate;
    let Some(b) = support::backend::PgBackend::from_env() else {
        return;
    };
    let role = format!("cl_fig_reader_{}", std::process::id());
    let mut admin = b.admin();
    let _ = admin.batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE IF EXISTS {role}"));
    admin
        .batch_execute(&format!("CREATE ROLE {role} NOLOGIN"))
        .unwrap();
    migrate::create_at_version(&mut admin, 7).unwrap();
    admin
        .batch_execute(&format!(
            "GRANT SELECT, INSERT ON holds TO {role}; GRANT SELECT ON holds TO PUBLIC"
        ))
        .unwrap();
    let actor = Actor::new("admin", "admin");
    let opts = caseload::store::postgres::PgOptions::default();
    drop(caseload::store::postgres::PgStore::open(&b.url, actor, &opts).unwrap());
    let may: bool = admin
        .query_one(
            &format!(
                "SELECT has_table_privilege('{role}', '{}.figure_days', 'SELECT')",
                b.schema
            ),
            &[],
        )
        .unwrap()
        .get(0);
    let _ = admin.batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE IF EXISTS {role}"));
    assert!(may, "the upgrade grants SELECT on figure_days to {role}");
}

/// Upgrading a database set up with the grants of an earlier README: the audit trail is
/// then written by the server for everyday roles too (a forged actor refused, the time and
/// role stamped), INSERT on holds is taken back, and the functions that took the audit's
/// time and old value from the caller are gone.
#[test]
fn postgres_upgrade_makes_the_server_write_who_and_when() {
    use caseload::store::postgres::migrate;
    let Some(b) = support::backend::PgBackend::from_env() else {
        return;
    };
    let role = format!("cl_old_staff_{}", std::process::id());
    let mut admin = b.admin();
    let _ = admin.batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE IF EXISTS {role}"));
    admin
        .batch_execute(&format!("CREATE ROLE {role} NOLOGIN"))
        .unwrap();
    migrate::create_at_version(&mut admin, 9).unwrap();
    admin
        .batch_execute(&format!(
            "GRANT USAGE ON SCHEMA {s} TO {role}; \
             GRANT SELECT, INSERT, UPDATE ON items, item_counts TO {role}; \
             GRANT SELECT, INSERT ON events, holds, comments TO {role}; \
             GRANT SELECT ON queues, users, audit, figure_days TO {role}; \
             INSERT INTO queues (name) VALUES ('default'); \
             INSERT INTO items (queue, title, created_at, created_by) \
             VALUES ('default', 't', 0, 'boss');",
            s = b.schema
        ))
        .unwrap();
    let actor = Actor::new("admin", "admin");
    let opts = caseload::store::postgres::PgOptions::default();
    drop(caseload::store::postgres::PgStore::open(&b.url, actor, &opts).unwrap());
    let one = |admin: &mut postgres::Client, sql: &str| -> bool {
        admin.query_one(sql, &[]).unwrap().get(0)
    };
    assert!(!one(
        &mut admin,
        &format!("SELECT has_table_privilege('{role}', 'holds', 'INSERT')")
    ));
    assert!(one(
        &mut admin,
        &format!("SELECT has_table_privilege('{role}', 'holds', 'SELECT')")
    ));
    assert!(one(
        &mut admin,
        "SELECT to_regprocedure('caseload_put_role(text, bigint, text, text, text, text)') \
         IS NULL AND to_regprocedure('caseload_set_role(text, text, text)') IS NOT NULL"
    ));
    // As the old staff role (its session, as a login of its own would have).
    admin
        .batch_execute(&format!("SET SESSION AUTHORIZATION {role}"))
        .unwrap();
    let forged = admin.batch_execute(
        "INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
         VALUES (1, 0, 'boss', 'boss', 'unlocked', '{}')",
    );
    assert_eq!(
        forged.unwrap_err().code(),
        Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE)
    );
    admin
        .batch_execute(&format!(
            "INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
             VALUES (1, 0, '{role}', 'boss', 'noted', '{{}}')"
        ))
        .unwrap();
    let row = admin
        .query_one(
            "SELECT at, os_user, floor(extract(epoch FROM now()) * 1000)::bigint FROM events",
            &[],
        )
        .unwrap();
    let (at, os_user, now): (i64, String, i64) = (row.get(0), row.get(1), row.get(2));
    assert_eq!(os_user, role);
    assert!((now - at).abs() < 60_000, "at {at}, now {now}");
    admin.batch_execute("RESET SESSION AUTHORIZATION").unwrap();
    let _ = admin.batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE IF EXISTS {role}"));
}

#[test]
fn an_old_database_takes_the_parked_state_on_every_connection() {
    // Schema 13 widens the state's CHECK by editing the table's text in place (SQLite
    // cannot ALTER a CHECK): the migrating connection and a second one both accept it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let actor = Actor::new("admin", "admin");
    let other = Connection::open(&path).unwrap();
    let conn = Connection::open(&path).unwrap();
    migrate::create_at_version(&conn, 12).unwrap();
    conn.execute("INSERT INTO queues (name) VALUES ('default'); ", [])
        .unwrap();
    let add = "INSERT INTO items (queue, title, created_at, created_by) \
               VALUES ('default', 'old', 0, 'admin')";
    conn.execute(add, []).unwrap();
    let park = "UPDATE items SET state = 'parked', parked_by = 'alice', parked_until = 1";
    assert!(
        other
            .execute("UPDATE items SET state = 'parked'", [])
            .is_err()
    );
    assert_eq!(
        migrate::migrate(&conn, &actor, 0).unwrap(),
        Migration::Migrated { from: 12 }
    );
    assert_eq!(conn.execute(park, []).unwrap(), 1);
    assert_eq!(other.execute(park, []).unwrap(), 1);
    let bad = other.execute("UPDATE items SET state = 'lost'", []);
    assert!(bad.is_err(), "the CHECK still refuses other states");
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}

/// A history written before schema 16: two items, three holds (a release, a completion, a
/// failure), in the statements both dialects take.
const HOLDS_BEFORE_16: [&str; 8] = [
    "INSERT INTO queues (name) VALUES ('default')",
    "INSERT INTO items (queue, title, created_at, created_by) VALUES ('default', 'one', 0, 'admin')",
    "INSERT INTO items (queue, title, created_at, created_by) VALUES ('default', 'two', 0, 'admin')",
    "INSERT INTO events (item_id, at, actor, os_user, kind) \
     SELECT id, 1000, 'alice', 'alice', 'locked' FROM items WHERE title = 'one'",
    "INSERT INTO events (item_id, at, actor, os_user, kind) \
     SELECT id, 4000, 'alice', 'alice', 'released' FROM items WHERE title = 'one'",
    "INSERT INTO events (item_id, at, actor, os_user, kind) \
     SELECT id, 5000, 'bob', 'bob', 'locked' FROM items WHERE title = 'one'",
    "INSERT INTO events (item_id, at, actor, os_user, kind) \
     SELECT id, 9000, 'bob', 'bob', 'completed' FROM items WHERE title = 'one'",
    "INSERT INTO events (item_id, at, actor, os_user, kind) \
     SELECT id, 6000, 'alice', 'alice', 'locked' FROM items WHERE title = 'two'",
];
const FAIL_BEFORE_16: &str = "INSERT INTO events (item_id, at, actor, os_user, kind) \
     SELECT id, 8000, 'alice', 'alice', 'failed' FROM items WHERE title = 'two'";
/// The kept totals: (holds, completed, failed, held_ms).
const TOTALS_16: &str = "SELECT CAST(sum(holds) AS BIGINT), CAST(sum(completed) AS BIGINT), \
     CAST(sum(failed) AS BIGINT), CAST(sum(held_ms) AS BIGINT) FROM queue_totals \
     WHERE queue = 'default'";

#[test]
fn upgrading_to_16_fills_the_queue_totals_from_the_holds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let conn = Connection::open(&path).unwrap();
    migrate::create_at_version(&conn, 15).unwrap();
    for sql in HOLDS_BEFORE_16.iter().chain([&FAIL_BEFORE_16]) {
        conn.execute(sql, []).unwrap();
    }
    let holds: i64 = conn
        .query_row("SELECT count(*) FROM holds", [], |r| r.get(0))
        .unwrap();
    assert_eq!(holds, 3, "the old schema kept the holds");
    let actor = Actor::new("admin", "admin");
    assert_eq!(
        migrate::migrate(&conn, &actor, 0).unwrap(),
        Migration::Migrated { from: 15 }
    );
    let totals = |c: &Connection| -> (i64, i64, i64, i64) {
        c.query_row(TOTALS_16, [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .unwrap()
    };
    assert_eq!(totals(&conn), (3, 1, 1, 3000 + 4000 + 2000));
    // Kept from then on by the trigger.
    conn.execute(
        "INSERT INTO events (item_id, at, actor, os_user, kind) \
         SELECT id, 9500, 'carol', 'carol', 'locked' FROM items WHERE title = 'one'",
        [],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO events (item_id, at, actor, os_user, kind) \
         SELECT id, 9600, 'carol', 'carol', 'completed' FROM items WHERE title = 'one'",
        [],
    )
    .unwrap();
    assert_eq!(totals(&conn), (4, 2, 1, 9100));
}

#[test]
fn postgres_upgrading_to_16_fills_the_queue_totals_from_the_holds() {
    use caseload::store::postgres::migrate;
    let Some(b) = support::backend::PgBackend::from_env() else {
        return;
    };
    let mut admin = b.admin();
    migrate::create_at_version(&mut admin, 15).unwrap();
    for sql in HOLDS_BEFORE_16.iter().chain([&FAIL_BEFORE_16]) {
        admin.execute(*sql, &[]).unwrap();
    }
    let actor = Actor::new("admin", "admin");
    let opts = caseload::store::postgres::PgOptions::default();
    drop(caseload::store::postgres::PgStore::open(&b.url, actor, &opts).unwrap());
    let r = admin.query_one(TOTALS_16, &[]).unwrap();
    let totals: (i64, i64, i64, i64) = (r.get(0), r.get(1), r.get(2), r.get(3));
    assert_eq!(totals, (3, 1, 1, 3000 + 4000 + 2000));
}

/// Rows of schema 17 with locks: a lock renewed after its take, an assignment, a free item.
const LOCKS_AT_17: &str = "\
    INSERT INTO queues (name, lock_seconds) VALUES ('desk', 600); \
    INSERT INTO items (id, queue, title, created_at, created_by, lock_user, lock_time, lock_token) \
    VALUES (1, 'desk', 'renewed', 0, 'admin', 'alice', 1000000, 1), \
           (2, 'desk', 'assigned', 0, 'admin', 'bob', 253402300799999, 1), \
           (3, 'desk', 'free', 0, 'admin', NULL, NULL, 0); \
    INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
    VALUES (1, 900000, 'alice', 'alice', 'locked', '{\"token\": 1}')";

/// (id, lock_time, lock_expires_at) of every item, by id.
const LOCK_COLUMNS: &str = "SELECT id, lock_time, lock_expires_at FROM items ORDER BY id";

/// Schema 18 gives current locks the expiry they had (last renewal plus the queue's age),
/// makes `lock_time` the take, and holds every later write to "both or neither".
#[test]
fn an_old_database_keeps_its_locks_expiry() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let actor = Actor::new("admin", "admin");
    let other = Connection::open(&path).unwrap();
    let conn = Connection::open(&path).unwrap();
    migrate::create_at_version(&conn, 17).unwrap();
    conn.execute_batch(LOCKS_AT_17).unwrap();
    assert_eq!(
        migrate::migrate(&conn, &actor, 0).unwrap(),
        Migration::Migrated { from: 17 }
    );
    let rows: Vec<(i64, Option<i64>, Option<i64>)> = conn
        .prepare(LOCK_COLUMNS)
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let far = caseload::domain::lock::ASSIGNED;
    assert_eq!(
        rows,
        [
            (1, Some(900_000), Some(1_600_000)),
            (2, Some(far), Some(far)),
            (3, None, None)
        ]
    );
    // A holder without an expiry is refused, on the migrating connection and another.
    let no_expiry = "UPDATE items SET lock_user = 'x', lock_time = 1 WHERE id = 3";
    assert!(conn.execute(no_expiry, []).is_err());
    assert!(other.execute(no_expiry, []).is_err());
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}

#[test]
fn postgres_upgrade_keeps_its_locks_expiry() {
    use caseload::store::postgres::{PgOptions, PgStore, migrate};
    let Some(b) = support::backend::PgBackend::from_env() else {
        return;
    };
    let mut admin = b.admin();
    migrate::create_at_version(&mut admin, 17).unwrap();
    admin.batch_execute(LOCKS_AT_17).unwrap();
    let taken: i64 = admin
        .query_one("SELECT at FROM events WHERE item_id = 1", &[])
        .unwrap()
        .get(0);
    let actor = Actor::new("admin", "admin");
    let mut store = PgStore::open(&b.url, actor, &PgOptions::default()).unwrap();
    assert!(store.check().unwrap().is_empty());
    let rows: Vec<(i64, Option<i64>, Option<i64>)> = admin
        .query(LOCK_COLUMNS, &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let far = caseload::domain::lock::ASSIGNED;
    // The server stamps an event's time itself; the take is the stamped one, when it is
    // not after the lock's time (else the lock's time stays).
    let take = if taken <= 1_000_000 { taken } else { 1_000_000 };
    assert_eq!(
        rows,
        [
            (1, Some(take), Some(1_600_000)),
            (2, Some(far), Some(far)),
            (3, None, None)
        ]
    );
    let no_expiry = admin.execute(
        "UPDATE items SET lock_user = 'x', lock_time = 1 WHERE id = 3",
        &[],
    );
    assert!(no_expiry.is_err());
}
