//! Doctor's checks of a PostgreSQL database: reachable, a supported server, caseload's
//! schema, the rights the everyday role needs, search's case folding, and the clock
//! against this machine's.

use postgres::Client;

use super::Check;
use crate::store::postgres::{
    FoldProblem, LATEST, PgOptions, SearchIndex, connect_url, fold_problem, search_index,
};

/// Beyond this offset, times typed on this machine (`--since`, `--due`) and the server's
/// lock times disagree visibly.
const CLOCK_TOLERANCE_MS: i64 = 10_000;

/// The rights the everyday role needs on each table.
/// What everyday work needs (the README's least-privilege grants): `(table, column or
/// "" for the whole table, rights)`. Roles, bindings and queue settings change through
/// caseload's SECURITY DEFINER functions, so no role needs UPDATE on users or queues.
const RIGHTS: [(&str, &str, &str); 21] = [
    ("items", "", "SELECT, INSERT, UPDATE"),
    ("item_counts", "", "SELECT, INSERT, UPDATE"),
    ("events", "", "SELECT, INSERT"),
    ("holds", "", "SELECT"),
    ("comments", "", "SELECT, INSERT"),
    ("queues", "", "SELECT"),
    ("queues", "name", "INSERT"),
    ("users", "", "SELECT"),
    ("users", "name", "INSERT"),
    ("users", "last_seen", "INSERT, UPDATE"),
    ("audit", "", "SELECT"),
    ("figure_days", "", "SELECT"),
    ("queue_totals", "", "SELECT"),
    ("due_hours", "", "SELECT"),
    ("queue_fields", "", "SELECT"),
    ("fields_version", "", "SELECT"),
    ("queue_texts", "", "SELECT"),
    ("queue_sla", "", "SELECT"),
    ("user_queues", "", "SELECT"),
    ("item_keys", "", "SELECT, INSERT, DELETE"),
    ("item_pairs", "", "SELECT, INSERT, UPDATE"),
];

/// Rights an everyday role must not have: they would let it rewrite the audit trail or
/// the figures directly (the server writes holds and the audit itself).
const NEVER: [(&str, &str); 10] = [
    ("events", "UPDATE, DELETE"),
    ("comments", "UPDATE, DELETE"),
    ("holds", "INSERT, UPDATE, DELETE"),
    ("audit", "INSERT, UPDATE, DELETE"),
    ("queue_fields", "INSERT, UPDATE, DELETE"),
    ("queue_texts", "INSERT, UPDATE, DELETE"),
    ("queue_sla", "INSERT, UPDATE, DELETE"),
    ("user_queues", "INSERT, UPDATE, DELETE"),
    ("due_hours", "INSERT, UPDATE, DELETE"),
    ("fields_version", "INSERT, UPDATE, DELETE"),
];

/// The rights of [`NEVER`] the session's role holds, unless it may change the tables
/// anyway (a superuser or a member of their owner).
fn excess_rights(client: &mut Client) -> Vec<String> {
    let privileged = client
        .query_one("SELECT caseload_privileged()", &[])
        .map(|r| r.get::<_, bool>(0))
        .unwrap_or(true);
    if privileged {
        return Vec::new();
    }
    let mut found = Vec::new();
    for (table, rights) in NEVER {
        for right in rights.split(", ") {
            let has = client
                .query_one(
                    "SELECT has_table_privilege(current_user, $1::text, $2::text)",
                    &[&table, &right],
                )
                .map(|r| r.get::<_, bool>(0));
            if has.unwrap_or(false) {
                found.push(format!("{right} ON {table}"));
            }
        }
    }
    found
}

/// Every check of the database at `url`.
pub(super) fn checks(url: &str) -> Vec<Check> {
    let opts = PgOptions {
        connect_timeout: std::time::Duration::from_secs(5),
        ..PgOptions::default()
    };
    let (shown, mut client) = match connect_url(url, &opts) {
        Ok((_, shown, client)) => (shown, client),
        Err(e) => {
            return vec![Check::fail(
                "server",
                e.to_string(),
                "check the URL, that the server runs and accepts connections from this host \
                 (pg_hba.conf), and the password (~/.pgpass, mode 0600, or PGPASSWORD)",
            )];
        }
    };
    let mut out = vec![Check::pass("server", format!("reachable: {shown}"))];
    out.push(writable_check(&mut client));
    out.push(version_check(&mut client));
    let schema = schema_check(&mut client);
    let (current, has_tables) = (schema.ok, schema.ok || schema.detail.contains("version"));
    out.push(schema);
    if has_tables {
        out.push(rights_check(&mut client));
    }
    if current {
        out.push(fold_check(&mut client));
        out.push(search_index_check(&mut client));
    }
    out.push(clock_check(&mut client));
    out
}

/// A standby (or a session read-only by default) lists items but refuses every change.
fn writable_check(client: &mut Client) -> Check {
    let row = client.query_one(
        "SELECT pg_is_in_recovery(), current_setting('default_transaction_read_only') = 'on'",
        &[],
    );
    match row {
        Ok(r) if r.get::<_, bool>(0) => Check::fail(
            "writable",
            "a standby in recovery: it refuses every change",
            crate::store::postgres::READ_ONLY_FIX,
        ),
        Ok(r) if r.get::<_, bool>(1) => Check::fail(
            "writable",
            "default_transaction_read_only is on: every change is refused",
            crate::store::postgres::READ_ONLY_FIX,
        ),
        Ok(_) => Check::pass("writable", "the primary: it takes changes"),
        Err(e) => Check::fail(
            "writable",
            format!("cannot ask: {}", asked(&e)),
            "check the server",
        ),
    }
}

fn version_check(client: &mut Client) -> Check {
    let row = client.query_one(
        "SELECT current_setting('server_version'), \
         current_setting('server_version_num')::int",
        &[],
    );
    match row {
        Ok(r) => {
            let (text, num): (String, i32) = (r.get(0), r.get(1));
            if num >= 120_000 {
                Check::pass("version", format!("PostgreSQL {text}"))
            } else {
                Check::fail(
                    "version",
                    format!("PostgreSQL {text}"),
                    "caseload needs PostgreSQL 12 or later",
                )
            }
        }
        Err(e) => Check::fail(
            "version",
            format!("cannot ask: {}", asked(&e)),
            "check the server",
        ),
    }
}

fn schema_check(client: &mut Client) -> Check {
    let found = client.query_one(
        "SELECT current_schema()::text, to_regclass('caseload_schema') IS NOT NULL",
        &[],
    );
    let (schema, exists): (Option<String>, bool) = match found {
        Ok(r) => (r.get(0), r.get(1)),
        Err(e) => {
            return Check::fail(
                "schema",
                format!("cannot ask: {}", asked(&e)),
                "check the server",
            );
        }
    };
    let schema = schema.unwrap_or_else(|| "(none: the search_path is empty)".into());
    if !exists && let Ok(Some(fix)) = crate::store::postgres::migrate::grants_lost(client) {
        return Check::fail(
            "schema",
            format!("no caseload tables in schema {schema}"),
            fix,
        );
    }
    if !exists {
        return Check::fail(
            "schema",
            format!("no caseload tables in schema {schema}"),
            "`caseload init` as the role that should own the tables",
        );
    }
    let v: Result<Option<i64>, _> = client
        .query_one("SELECT max(version)::bigint FROM caseload_schema", &[])
        .map(|r| r.get(0));
    match v {
        Ok(Some(v)) if v == LATEST => {
            Check::pass("schema", format!("{schema}, version {v} (this program's)"))
        }
        Ok(Some(v)) if v > LATEST => Check::fail(
            "schema",
            format!("{schema}, version {v}, newer than this program's {LATEST}"),
            "upgrade caseload",
        ),
        Ok(v) => Check::fail(
            "schema",
            format!(
                "{schema}, version {}, older than this program's {LATEST}",
                v.unwrap_or(0)
            ),
            "`caseload init` as the role that owns the tables (it migrates in place)",
        ),
        // Tables without their grants (restored with --no-acl): the fix is the grants.
        Err(e) if e.code() == Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) => {
            Check::fail(
                "schema",
                format!("{schema}: cannot read its version: {}", asked(&e)),
                "as the tables' owner, re-apply the grants of the README's \"What the database \
                 user needs\" (they are lost by pg_restore --no-acl); not `caseload init`",
            )
        }
        Err(e) => Check::fail(
            "schema",
            format!("cannot read it: {}", asked(&e)),
            "check the server",
        ),
    }
}

/// Search folds case as on SQLite: needs a UTF-8 database, and where its character type
/// folds ASCII only (C, POSIX) or wrongly (Turkish `I`), a collation of the server that
/// `caseload_refold()` chose (migration 9); a restored schema may name one its new server
/// lacks, which `caseload init` chooses again.
fn fold_check(client: &mut Client) -> Check {
    match fold_problem(client) {
        Ok(None) => {
            let ctype = client
                .query_one("SELECT current_setting('lc_ctype')", &[])
                .map(|r| r.get::<_, String>(0))
                .unwrap_or_default();
            Check::pass(
                "search",
                format!("folds case as SQLite does (LC_CTYPE {ctype})"),
            )
        }
        Ok(Some(p @ FoldProblem::Encoding(_))) => Check::fail(
            "search",
            p.to_string(),
            "move to a database created with ENCODING 'UTF8' (README, PostgreSQL)",
        ),
        Ok(Some(p)) => Check::fail(
            "search",
            p.to_string(),
            "run `caseload init` as the role that owns caseload's tables (it chooses a \
             collation of this server that folds); if this check still fails, the server \
             has no UTF-8 locale: use a database created with a UTF-8 LC_CTYPE such as \
             C.UTF-8 (README, PostgreSQL)",
        ),
        Err(e) => Check::fail(
            "search",
            format!("cannot ask: {}", asked(&e)),
            "check the server",
        ),
    }
}

/// Whether search uses the trigram index (pg_trgm, migration 23). Without the extension
/// search scans every row and still works: that passes, saying how to get the index.
fn search_index_check(client: &mut Client) -> Check {
    match search_index(client) {
        Ok(SearchIndex::Index) => {
            Check::pass("search index", "searches use the trigram index (pg_trgm)")
        }
        Ok(SearchIndex::Missing) => Check::fail(
            "search index",
            "pg_trgm is installed but this schema has no search index: searches scan",
            "run `caseload init` as the role that owns caseload's tables (it builds the \
             index; at 1M items, minutes, during which items cannot be changed)",
        ),
        Ok(SearchIndex::NoExtension { available }) => Check::pass(
            "search index",
            format!(
                "none: searches scan every item (fine for tens of thousands); for an index, \
                 a superuser runs `CREATE EXTENSION pg_trgm;` in this database{}, then \
                 `caseload init` (README, Search with an index)",
                if available {
                    ""
                } else {
                    " (the server lacks it: install the postgresql-contrib package)"
                }
            ),
        ),
        Err(e) => Check::fail(
            "search index",
            format!("cannot ask: {}", asked(&e)),
            "check the server",
        ),
    }
}

/// A failed question's cause: the server's own message where it gave one.
fn asked(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => e.to_string(),
    }
}

fn rights_check(client: &mut Client) -> Check {
    let mut missing = Vec::new();
    for (table, column, rights) in RIGHTS {
        for right in rights.split(", ") {
            let ok = if column.is_empty() {
                client.query_one(
                    "SELECT has_table_privilege(current_user, $1::text, $2::text)",
                    &[&table, &right],
                )
            } else {
                client.query_one(
                    "SELECT has_column_privilege(current_user, $1::text, $2::text, $3::text)",
                    &[&table, &column, &right],
                )
            }
            .map(|r| r.get::<_, bool>(0));
            let what = if column.is_empty() {
                format!("{right} on {table}")
            } else {
                format!("{right} ({column}) on {table}")
            };
            match ok {
                Ok(true) => {}
                Ok(false) => missing.push(what),
                Err(e) => missing.push(format!("{what} ({})", asked(&e))),
            }
        }
    }
    let user: String = client
        .query_one("SELECT current_user::text", &[])
        .map(|r| r.get(0))
        .unwrap_or_else(|_| "this role".into());
    let excess = excess_rights(client);
    if missing.is_empty() && !excess.is_empty() {
        return Check::fail(
            "rights",
            format!(
                "{user} may also {}: it could rewrite the audit trail or the figures",
                excess.join(", ")
            ),
            format!(
                "as the tables' owner, revoke them from the role that has them ({}); caseload \
                 writes those rows itself",
                excess
                    .iter()
                    .map(|e| format!("`REVOKE {e} FROM …`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    if missing.is_empty() {
        Check::pass(
            "rights",
            format!("{user} may read and write items, events, queues and users"),
        )
    } else {
        Check::fail(
            "rights",
            format!("{user} lacks {}", missing.join(", ")),
            format!(
                "as the tables' owner, grant {user} what the README's \"What the database user \
                 needs\" lists (e.g. `GRANT SELECT, INSERT, UPDATE ON items, item_counts TO \
                 {user}`)"
            ),
        )
    }
}

fn clock_check(client: &mut Client) -> Check {
    let local = || chrono::Utc::now().timestamp_millis();
    let before = local();
    let server = client
        .query_one(
            "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
            &[],
        )
        .map(|r| r.get::<_, i64>(0));
    let after = local();
    let server = match server {
        Ok(s) => s,
        Err(e) => {
            return Check::fail(
                "clock",
                format!("cannot ask: {}", asked(&e)),
                "check the server",
            );
        }
    };
    let offset = server - (before + after) / 2;
    let detail = format!(
        "the server's clock is {} this machine's (±{} ms)",
        offset_text(offset),
        (after - before) / 2 + 1
    );
    if offset.abs() > CLOCK_TOLERANCE_MS {
        Check::fail(
            "clock",
            detail,
            "synchronise the clocks (chrony or systemd-timesyncd); locks expire by the \
             server's clock, but times you type are read by this machine's",
        )
    } else {
        Check::pass("clock", detail)
    }
}

fn offset_text(ms: i64) -> String {
    if ms == 0 {
        return "equal to".into();
    }
    let dir = if ms > 0 { "ahead of" } else { "behind" };
    format!("{} ms {dir}", ms.abs())
}
