//! The PostgreSQL migrator: append-only steps recorded in `caseload_schema`, applied in
//! one transaction under an advisory lock per schema, so that many programs starting at
//! once migrate exactly once (the others wait for the lock and find it done).

use super::open::{Conn, TxResult};
use super::search::{SearchIndex, search_index};
use super::txn::{self, Failed, Kind};
use crate::domain::Actor;
use crate::store::error::StoreError;

/// The whole current schema (`schema.pg.sql`).
pub const SCHEMA: &str = include_str!("../../../schema.pg.sql");

/// Released steps, in order (every file of `migrations/`, listed by `build.rs`); step `i`
/// takes a schema from version `i` to `i + 1`. Never edit one: append (and keep
/// `schema.pg.sql` the whole current schema; a test checks that both roads give the same
/// schema).
pub const STEPS: &[&str] = include!(concat!(env!("OUT_DIR"), "/postgres_steps.rs"));

/// The schema version this program writes.
pub const LATEST: i64 = STEPS.len() as i64;

/// Key of the advisory lock the migrator holds (per schema, see `migrate`).
const MIGRATE_LOCK_CLASS: i32 = 0x4353_4C44; // "CSLD"

/// The table that records which steps were applied (not part of any step).
const VERSIONS_TABLE: &str = "CREATE TABLE caseload_schema (\
     version     INTEGER PRIMARY KEY, \
     applied_at  BIGINT NOT NULL, \
     applied_by  TEXT NOT NULL)";

/// Builds a schema at an older version by applying the first `target` released steps
/// (tests of the migration road), on a connection whose search path names an empty
/// schema.
pub fn create_at_version(client: &mut postgres::Client, target: i64) -> Result<(), StoreError> {
    let pg = |e: postgres::Error| super::open::map_err(&e);
    let mut tx = client.transaction().map_err(pg)?;
    tx.batch_execute(VERSIONS_TABLE).map_err(pg)?;
    for (i, step) in STEPS.iter().take(target as usize).enumerate() {
        tx.batch_execute(step).map_err(pg)?;
        tx.execute(
            "INSERT INTO caseload_schema (version, applied_at, applied_by) \
             VALUES ($1::bigint::int, 0, 'create_at_version')",
            &[&(i as i64 + 1)],
        )
        .map_err(pg)?;
    }
    tx.commit().map_err(pg)
}

/// Brings the schema up to date under an advisory lock held for one transaction; returns
/// whether it created the schema. `creator` becomes the first supervisor of a new one.
pub(super) fn migrate(c: &mut Conn, creator: &Actor) -> TxResult<bool> {
    if let Some(v) = schema_version(c)?
        && v == LATEST
    {
        return Ok(false);
    }
    under_schema_lock(c, |c| migrate_locked(c, creator))
}

/// Runs `f` in one transaction holding the schema's migration lock (one lock per schema:
/// programs on other schemas of the same database do not wait), so that many programs
/// changing the schema at once take turns; rolled back if `f` fails.
fn under_schema_lock<T>(c: &mut Conn, f: impl FnOnce(&mut Conn) -> TxResult<T>) -> TxResult<T> {
    txn::run(c, Kind::Write, |c, _| {
        c.client.execute(
            "SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))",
            &[&MIGRATE_LOCK_CLASS],
        )?;
        f(c)
    })
    .map_err(Failed::into_tx)
}

fn migrate_locked(c: &mut Conn, creator: &Actor) -> TxResult<bool> {
    // Re-read under the lock: another program may have migrated meanwhile.
    let version = schema_version(c)?;
    if version != Some(LATEST) {
        require_utf8(c, version.is_none())?;
    }
    let created = match version {
        Some(v) if v == LATEST => return Ok(false),
        Some(v) if v > LATEST => {
            return Err(StoreError::Unusable(format!(
                "this database was written by a newer caseload (schema version {v}; this \
                 program knows up to {LATEST}); upgrade caseload"
            ))
            .into());
        }
        Some(v) => {
            for (i, step) in STEPS.iter().enumerate().skip(v as usize) {
                c.client.batch_execute(step)?;
                record_version(c, i as i64 + 1, creator)?;
            }
            false
        }
        None => {
            if table_exists(c, "items")? {
                return Err(StoreError::Unusable(
                    "this PostgreSQL schema has an items table but is not a caseload database"
                        .into(),
                )
                .into());
            }
            require_a_schema_to_create_in(c)?;
            c.client.batch_execute(VERSIONS_TABLE)?;
            c.client.batch_execute(SCHEMA)?;
            record_version(c, LATEST, creator)?;
            let now = c.now()?;
            c.client.execute(
                "INSERT INTO users (name, role, last_seen) VALUES ($1, 'supervisor', $2)",
                &[&creator.name, &now],
            )?;
            true
        }
    };
    Ok(created)
}

/// The schema holds text in any language (the search fold names Greek and Latin letters
/// beyond Latin-1): a database of another encoding would fail half-way with a conversion
/// error, so it is refused first, saying what to do. `SQL_ASCII` stores any bytes but
/// search cannot fold them: a new schema is refused there, an existing one (made by an
/// older caseload) is still upgraded, and `caseload doctor` says what search lacks.
fn require_utf8(c: &mut Conn, creating: bool) -> TxResult<()> {
    let (encoding, name): (String, String) = {
        let row = c.client.query_one(
            "SELECT getdatabaseencoding()::text, current_database()::text",
            &[],
        )?;
        (row.get(0), row.get(1))
    };
    if encoding == "UTF8" || (encoding == "SQL_ASCII" && !creating) {
        return Ok(());
    }
    Err(StoreError::Unusable(format!(
        "database '{}' uses the {} encoding; caseload needs UTF-8: create one with \
         CREATE DATABASE … ENCODING 'UTF8' TEMPLATE template0",
        crate::domain::sanitize::line(&name),
        crate::domain::sanitize::line(&encoding)
    ))
    .into())
}

/// Letters whose case search's fold must lower as Rust does (a Turkish locale lowers `I`
/// to `ı`; Rust keeps a final Σ σ; Cyrillic; a digraph), and their folded form: the
/// probe of `caseload_refold()` (migrations/0009_fold_collation.sql).
pub const FOLD_PROBE: (&str, &str) = ("IΟΔΟΣ Ж Ǆ", "iοδοσ ж ǆ");

/// Why search does not fold case here as on SQLite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FoldProblem {
    /// The database is not UTF-8 (an old `SQL_ASCII` one): nothing can fold its bytes.
    Encoding(String),
    /// Only ASCII letters fold (the database's character type, and no collation of the
    /// server chosen instead).
    AsciiOnly { ctype: String },
    /// ASCII letters fold otherwise than on SQLite (a Turkish character type lowers `I`
    /// to `ı`: `file` does not find `FILE`).
    AsciiDiffers { ctype: String },
    /// The fold fails, e.g. naming a collation the server of a restored schema lacks.
    Fails(String),
}

impl std::fmt::Display for FoldProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FoldProblem::Encoding(e) => write!(
                f,
                "the database's encoding is {e}: search finds and folds ASCII letters only"
            ),
            FoldProblem::AsciiOnly { ctype } => write!(
                f,
                "search folds the case of ASCII letters only (LC_CTYPE {ctype}): `σοφια` \
                 does not find `ΣΟΦΙΑ`"
            ),
            FoldProblem::AsciiDiffers { ctype } => write!(
                f,
                "search folds ASCII letters otherwise than SQLite (LC_CTYPE {ctype} lowers \
                 `I` to `ı`): `file` does not find `FILE`"
            ),
            FoldProblem::Fails(e) => write!(f, "search cannot fold text: {e}"),
        }
    }
}

/// How search folds case on the schema `client` uses (asked outside a transaction):
/// `None` as Rust does.
pub fn fold_problem(client: &mut postgres::Client) -> Result<Option<FoldProblem>, postgres::Error> {
    let row = client.query_one(
        "SELECT getdatabaseencoding()::text, current_setting('lc_ctype')",
        &[],
    )?;
    let (encoding, ctype): (String, String) = (row.get(0), row.get(1));
    if encoding != "UTF8" {
        return Ok(Some(FoldProblem::Encoding(encoding)));
    }
    let folded = client
        .query_one("SELECT caseload_fold($1)", &[&FOLD_PROBE.0])
        .and_then(|r| r.try_get::<_, Option<String>>(0));
    Ok(match folded {
        Ok(Some(f)) if f == FOLD_PROBE.1 => None,
        Ok(Some(f)) if f.starts_with('i') => Some(FoldProblem::AsciiOnly { ctype }),
        Ok(Some(_)) => Some(FoldProblem::AsciiDiffers { ctype }),
        Ok(None) => Some(FoldProblem::Fails(
            "caseload_fold gave no text (NULL)".into(),
        )),
        Err(e) => Some(FoldProblem::Fails(super::open::map_err(&e).to_string())),
    })
}

/// Makes search fold as Rust does where it does not: runs `caseload_refold()` again
/// (only the owner of the schema's functions may), which chooses anew among the
/// server's collations; returns what is still wrong afterwards (the server has none that
/// folds, or the database is not UTF-8).
pub(super) fn repair_fold(c: &mut Conn) -> TxResult<Option<FoldProblem>> {
    match fold_problem(&mut c.client)? {
        None | Some(FoldProblem::Encoding(_)) => {}
        Some(_) => {
            // Under the migrator's lock: inits repairing at once take turns (concurrent
            // CREATE OR REPLACE of one function fails "tuple concurrently updated").
            under_schema_lock(c, |c| {
                c.client.query_one("SELECT caseload_refold()", &[])?;
                // The stored fold of the search index was folded the old way.
                if has_search_text(c)? {
                    c.client
                        .query_one("SELECT caseload_search_index(true)", &[])?;
                }
                Ok(())
            })?;
        }
    }
    Ok(fold_problem(&mut c.client)?)
}

/// True when the schema keeps the stored fold of the search index (`item_search`).
fn has_search_text(c: &mut Conn) -> TxResult<bool> {
    Ok(c.client.query_one(super::search::KEPT, &[])?.get(0))
}

/// Adds the search index where pg_trgm is installed and the schema has none yet (it
/// was installed after the schema was made): `caseload_search_index()` under the
/// migrator's lock (only the owner of items may). Returns what search uses afterwards
/// and whether this call built the index.
pub(super) fn add_search_index(c: &mut Conn) -> TxResult<(SearchIndex, bool)> {
    let before = search_index(&mut c.client)?;
    if before != SearchIndex::Missing {
        return Ok((before, false));
    }
    under_schema_lock(c, |c| {
        c.client.query_one("SELECT caseload_search_index()", &[])?;
        Ok(())
    })?;
    Ok((search_index(&mut c.client)?, true))
}

fn record_version(c: &mut Conn, version: i64, by: &Actor) -> TxResult<()> {
    let now = c.now()?;
    c.client.execute(
        "INSERT INTO caseload_schema (version, applied_at, applied_by) VALUES ($1::bigint::int, $2, $3)",
        &[&version, &now, &by.name],
    )?;
    Ok(())
}

/// True when the current schema has a table `name`. An MVCC query over the catalog, not
/// `to_regclass`: a program that waited for the migration lock must see the tables the
/// first program just committed.
fn table_exists(c: &mut Conn, name: &str) -> TxResult<bool> {
    Ok(c.query_one(
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class k \
         JOIN pg_catalog.pg_namespace n ON n.oid = k.relnamespace \
         WHERE n.nspname = current_schema() AND k.relname = $1)",
        &[&name],
    )?
    .get(0))
}

/// Refuses a connection whose search path does not lead to caseload's tables (the first
/// schema of the path holds none), saying where it looked and what to set: a command
/// other than `init` must not create a private, empty caseload in whatever schema the
/// role happens to own (`"$user"` in the default search path).
pub(super) fn require_schema(c: &mut Conn, shown: &str) -> TxResult<()> {
    if schema_version(c)?.is_some() {
        return Ok(());
    }
    let row = c.client.query_one(
        "SELECT current_setting('search_path'), \
         coalesce(array_to_string(current_schemas(false), ', '), ''), current_schema()::text, \
         (SELECT string_agg(n.nspname::text, ', ' ORDER BY n.nspname) \
          FROM pg_catalog.pg_class k JOIN pg_catalog.pg_namespace n ON n.oid = k.relnamespace \
          WHERE k.relname = 'caseload_schema' AND k.relkind = 'r' \
          AND has_schema_privilege(n.oid, 'USAGE'))",
        &[],
    )?;
    let (path, schemas, first, found): (String, String, Option<String>, Option<String>) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    if found.is_none()
        && let Some(fix) = grants_lost(&mut c.client)?
    {
        return Err(StoreError::Unusable(format!("no caseload database at {shown}: {fix}")).into());
    }
    let line = |t: &str| crate::domain::sanitize::line(t).into_owned();
    let set = |schema: &str| match shown.contains("search_path") {
        true => format!("set search_path={} in the URL's options", line(schema)),
        false => format!(
            "name it in the URL: {shown}{}options=-c%20search_path%3D{}",
            if shown.contains('?') { '&' } else { '?' },
            line(schema)
        ),
    };
    let looked = match &first {
        Some(first) => format!(
            "looked in schema {} (the first of the search path {}, which finds {}), which \
             holds no caseload tables",
            line(first),
            line(&path),
            line(&schemas)
        ),
        None => format!(
            "the search path {} names no schema that exists",
            line(&path)
        ),
    };
    let what = match (found, &first) {
        (Some(found), _) => format!(
            "caseload's tables are in schema {}: {}",
            line(&found),
            set(found.split(", ").next().unwrap_or_default())
        ),
        (None, Some(_)) => format!(
            "if the team's caseload is in another schema, {}; to make a new one here, run \
             `caseload init`",
            set("SCHEMA")
        ),
        (None, None) => format!(
            "if the team's caseload is in another schema, {}; to make a new one, create a \
             schema and run `caseload init`",
            set("SCHEMA")
        ),
    };
    Err(StoreError::Unusable(format!("no caseload database at {shown}: {looked}; {what}")).into())
}

/// Where caseload's tables are in a schema of the search path that this role may not use
/// (no USAGE: the grants were lost, as `pg_restore --no-acl` loses them): says so and
/// what to re-apply, rather than advise `init`, which would start an empty caseload
/// elsewhere.
pub(crate) fn grants_lost(c: &mut postgres::Client) -> Result<Option<String>, postgres::Error> {
    let row = c.query_one(
        "SELECT (SELECT string_agg(n.nspname::text, ', ' ORDER BY n.nspname) \
          FROM pg_catalog.pg_class k JOIN pg_catalog.pg_namespace n ON n.oid = k.relnamespace \
          WHERE k.relname = 'caseload_schema' AND k.relkind = 'r' \
          AND NOT has_schema_privilege(n.oid, 'USAGE') \
          AND n.nspname = ANY (SELECT btrim(replace(p, '$user', current_user), ' \"') \
            FROM unnest(string_to_array(current_setting('search_path'), ',')) p)), \
         current_user::text",
        &[],
    )?;
    let (hidden, user): (Option<String>, String) = (row.get(0), row.get(1));
    Ok(hidden.map(|schemas| {
        let line = |t: &str| crate::domain::sanitize::line(t).into_owned();
        let first = schemas.split(", ").next().unwrap_or_default().to_string();
        format!(
            "caseload's tables are in schema {}, which role {} may not use (no USAGE on it: \
             its grants were lost, e.g. by pg_restore --no-acl); as the tables' owner, re-apply \
             the grants of the README's \"What the database user needs\" (GRANT USAGE ON SCHEMA \
             {} TO …, then the table grants); do not run `caseload init`",
            line(&schemas),
            line(&user),
            line(&first)
        )
    }))
}

/// `init` where the search path names no schema that exists (PostgreSQL would say only
/// "no schema has been selected to create in"): says which path and what to do.
fn require_a_schema_to_create_in(c: &mut Conn) -> TxResult<()> {
    let row = c.client.query_one(
        "SELECT current_schema() IS NOT NULL, current_setting('search_path')",
        &[],
    )?;
    if row.get(0) {
        return Ok(());
    }
    let path: String = row.get(1);
    Err(StoreError::Unusable(format!(
        "cannot create caseload's tables: the search path {} names no schema that exists; \
         create one (CREATE SCHEMA caseload AUTHORIZATION <owner role>) and name it in the URL \
         (…?options=-c%20search_path%3Dcaseload)",
        crate::domain::sanitize::line(&path)
    ))
    .into())
}

/// The schema version, or `None` when there is no caseload schema here yet.
pub(super) fn schema_version(c: &mut Conn) -> TxResult<Option<i64>> {
    if !table_exists(c, "caseload_schema")? {
        return Ok(None);
    }
    let v: Option<i64> = c
        .query_one("SELECT max(version)::bigint FROM caseload_schema", &[])?
        .get(0);
    Ok(Some(v.unwrap_or(0)))
}
