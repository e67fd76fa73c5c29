//! The SQLite migrator: append-only steps tracked by `PRAGMA user_version`, applied in one
//! IMMEDIATE transaction so that many programs opening an old file at once migrate it
//! exactly once (the first takes the write lock; the others then find it up to date).

use rusqlite::Connection;

use super::txn::Kind;
use crate::domain::{Actor, Millis};
use crate::store::error::{Result, StoreError};

/// The whole current schema, used to create a fresh database.
pub const SCHEMA: &str = include_str!("../../../schema.sql");

/// Released steps, in order (every file of `migrations/`, listed by `build.rs`); step `i`
/// takes a database from version `i` to `i + 1`.
/// Never edit one: append.
pub const STEPS: &[&str] = include!(concat!(env!("OUT_DIR"), "/sqlite_steps.rs"));

/// The schema version this program writes.
pub const LATEST: i64 = STEPS.len() as i64;

/// Marks a file as caseload's (`PRAGMA application_id`, "CSLD").
pub(crate) const APPLICATION_ID: i64 = 0x4353_4C44;

/// What opening did to the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Migration {
    UpToDate,
    Created,
    Migrated { from: i64 },
}

/// Refuses, before anything is written, a file that is another program's SQLite
/// database or comes from a newer caseload.
pub(crate) fn check_ours(conn: &Connection) -> Result<()> {
    let (version, app_id) = versions(conn)?;
    check_version(version, app_id)?;
    if version == 0 {
        let tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(super::map_err)?;
        if tables > 0 {
            return Err(StoreError::Unusable(
                "this is an SQLite database, but not a caseload database".into(),
            ));
        }
    }
    Ok(())
}

/// Brings the database up to date. `creator` is recorded as the first supervisor of a
/// fresh database.
pub fn migrate(conn: &Connection, creator: &Actor, now: Millis) -> Result<Migration> {
    let (version, app_id) = versions(conn)?;
    if version == LATEST && app_id == APPLICATION_ID {
        return Ok(Migration::UpToDate);
    }
    check_ours(conn)?;
    super::txn::run(&mut &*conn, Kind::Write, |c| {
        migrate_locked(c, creator, now)
    })
    .map_err(|f| f.error)
}

fn migrate_locked(conn: &Connection, creator: &Actor, now: Millis) -> Result<Migration> {
    // Re-read under the write lock: another program may have migrated meanwhile.
    check_ours(conn)?;
    let (version, _) = versions(conn)?;
    let outcome = if version == 0 {
        conn.execute_batch(SCHEMA).map_err(super::map_err)?;
        conn.execute(
            "INSERT INTO users (name, role, last_seen) VALUES (?1, 'supervisor', ?2)",
            rusqlite::params![creator.name, now],
        )
        .map_err(super::map_err)?;
        Migration::Created
    } else if version == LATEST {
        return Ok(Migration::UpToDate);
    } else {
        for step in &STEPS[version as usize..] {
            conn.execute_batch(step).map_err(super::map_err)?;
        }
        Migration::Migrated { from: version }
    };
    conn.execute_batch(&format!(
        "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {LATEST};"
    ))
    .map_err(super::map_err)?;
    Ok(outcome)
}

fn versions(conn: &Connection) -> Result<(i64, i64)> {
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(super::map_err)?;
    let a: i64 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(super::map_err)?;
    Ok((v, a))
}

fn check_version(version: i64, app_id: i64) -> Result<()> {
    if version > 0 && app_id != APPLICATION_ID {
        return Err(StoreError::Unusable(
            "this is an SQLite database, but not a caseload database".into(),
        ));
    }
    if version > LATEST {
        return Err(StoreError::Unusable(format!(
            "this database was written by a newer caseload (schema version {version}; this \
             program knows up to {LATEST}); upgrade caseload"
        )));
    }
    Ok(())
}

/// Builds a database at an older schema version by applying the first `target` steps
/// (for tests of migration).
pub fn create_at_version(conn: &Connection, target: i64) -> Result<()> {
    super::txn::run(&mut &*conn, Kind::Write, |c| {
        for step in &STEPS[..target as usize] {
            c.execute_batch(step).map_err(super::map_err)?;
        }
        c.execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {target};"
        ))
        .map_err(super::map_err)
    })
    .map_err(|f| f.error)
}
