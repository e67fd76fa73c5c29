//! Doctor's checks of a PostgreSQL database: reachable, a supported server, caseload's
//! schema, the rights the everyday role needs, search's case folding, and the clock
//! against this machine's.

use postgres::Client;

use super::Check;
use crate::store::postgres::{LATEST, PgOptions, connect_url};

/// Beyond this offset, times typed on this machine (`--since`, `--due`) and the server's
/// lock times disagree visibly.
const CLOCK_TOLERANCE_MS: i64 = 10_000;

/// The rights the everyday role needs on each table.
/// What everyday work needs (the README's least-privilege grants): `(table, column or
/// "" for the whole table, rights)`. Roles, bindings and queue settings change through
/// caseload's SECURITY DEFINER functions, so no role needs UPDATE on users or queues.
const RIGHTS: [(&str, &str, &str); 12] = [
    ("items", "", "SELECT, INSERT, UPDATE"),
    ("item_counts", "", "SELECT, INSERT, UPDATE"),
    ("events", "", "SELECT, INSERT"),
    ("holds", "", "SELECT, INSERT"),
    ("comments", "", "SELECT, INSERT"),
    ("queues", "", "SELECT"),
    ("queues", "name", "INSERT"),
    ("users", "", "SELECT"),
    ("users", "name", "INSERT"),
    ("users", "last_seen", "INSERT, UPDATE"),
    ("audit", "", "SELECT"),
    ("figure_days", "", "SELECT"),
];

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
    out.push(version_check(&mut client));
    let schema = schema_check(&mut client);
    let (current, has_tables) = (schema.ok, schema.ok || schema.detail.contains("version"));
    out.push(schema);
    if has_tables {
        out.push(rights_check(&mut client));
    }
    if current {
        out.push(fold_check(&mut client));
    }
    out.push(clock_check(&mut client));
    out
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
        Err(e) => Check::fail("version", format!("cannot ask: {e}"), "check the server"),
    }
}

fn schema_check(client: &mut Client) -> Check {
    let found = client.query_one(
        "SELECT current_schema()::text, to_regclass('caseload_schema') IS NOT NULL",
        &[],
    );
    let (schema, exists): (Option<String>, bool) = match found {
        Ok(r) => (r.get(0), r.get(1)),
        Err(e) => return Check::fail("schema", format!("cannot ask: {e}"), "check the server"),
    };
    let schema = schema.unwrap_or_else(|| "(none: the search_path is empty)".into());
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
        Err(e) => Check::fail("schema", format!("cannot read it: {e}"), "check the server"),
    }
}

/// Letters beyond ASCII whose case search folds on both backends (`ΟΔΟΣ` keeps its σ:
/// the fold goes letter by letter), and their folded form.
const FOLD_PROBE: (&str, &str) = ("ΟΔΟΣ Ж Ǆ", "οδοσ ж ǆ");

/// Search folds case beyond ASCII, as on SQLite: under a database whose `LC_CTYPE` is C
/// or POSIX that needs a UTF-8 collation of the server (migration 0009).
fn fold_check(client: &mut Client) -> Check {
    let row = client.query_one(
        "SELECT caseload_fold($1), current_setting('lc_ctype')",
        &[&FOLD_PROBE.0],
    );
    match row {
        Ok(r) => {
            let (folded, ctype): (String, String) = (r.get(0), r.get(1));
            if folded == FOLD_PROBE.1 {
                Check::pass(
                    "search",
                    format!("folds case beyond ASCII (LC_CTYPE {ctype})"),
                )
            } else {
                Check::fail(
                    "search",
                    format!(
                        "folds the case of ASCII letters only (LC_CTYPE {ctype}, and the \
                         server had no UTF-8 collation when caseload set up the schema): \
                         `σοφια` does not find `ΣΟΦΙΑ`"
                    ),
                    "use a database created with a UTF-8 LC_CTYPE such as C.UTF-8 (README, \
                     PostgreSQL)",
                )
            }
        }
        Err(e) => Check::fail("search", format!("cannot ask: {e}"), "check the server"),
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
                Err(e) => missing.push(format!("{what} ({e})")),
            }
        }
    }
    let user: String = client
        .query_one("SELECT current_user::text", &[])
        .map(|r| r.get(0))
        .unwrap_or_else(|_| "this role".into());
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
        Err(e) => return Check::fail("clock", format!("cannot ask: {e}"), "check the server"),
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
