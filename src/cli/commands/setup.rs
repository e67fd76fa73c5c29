//! Subcommands that set up or inspect a deployment: the TUI, init, demo, doctor, migrate-to, backup.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context, anyhow};

use crate::domain::sanitize;
use crate::store::location::{self, Location};
use crate::store::sqlite::OpenOptions;
use crate::store::{Reads, SqliteStore, StoreError};

use crate::cli::{CliResult, Failure, Invocation, bail_usage, open_sqlite, open_store};

/// Opens the TUI (no subcommand); it needs a terminal.
pub(crate) fn tui(ctx: &Invocation, no_notify: bool) -> CliResult {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return bail_usage(
            "the interactive view needs a terminal; use a subcommand (see `caseload --help`)",
        );
    }
    let store = crate::cli::open_store_patiently(ctx)?;
    use crate::config::Notify;
    let notify = if no_notify {
        Notify::Off
    } else {
        ctx.config.notify
    };
    let alerting = crate::app::Alerting::with(
        matches!(notify, Notify::Bell | Notify::Both),
        matches!(notify, Notify::Desktop | Notify::Both),
    );
    crate::tui::run(store, alerting, ctx.config.theme)?;
    Ok(())
}

/// Checks the deployment of `ctx`'s database; fails (exit 1) when a check fails.
pub(crate) fn doctor(ctx: &Invocation, json: bool, out: &mut dyn Write) -> CliResult {
    let report = crate::doctor::examine(&ctx.location, &ctx.source, ctx.allow_network_fs);
    crate::doctor::print(&report, json, out)?;
    let failed = report.checks.iter().filter(|c| !c.ok).count();
    if failed == 0 {
        return Ok(());
    }
    Err(anyhow!("doctor: {failed} check(s) failed; each ✘ line says how to fix it").into())
}

/// Copies the SQLite database of `ctx` into the PostgreSQL database at `url`.
pub(crate) fn migrate_to(ctx: &Invocation, url: &str, out: &mut dyn Write) -> CliResult {
    let Location::File(path) = &ctx.location else {
        return Err(anyhow!("migrate-to copies from an SQLite file; give --db PATH").into());
    };
    if !matches!(Location::parse(url), Location::Postgres(_)) {
        return bail_usage("migrate-to needs a postgres:// URL");
    }
    let opts = OpenOptions {
        allow_network_fs: ctx.allow_network_fs,
        must_exist: true,
        ..OpenOptions::default()
    };
    let src = SqliteStore::open(path, ctx.actor.clone(), &opts)
        .with_context(|| path.display().to_string())?;
    let mut dst = crate::store::postgres::PgStore::open(
        url,
        ctx.actor.clone(),
        &crate::store::postgres::PgOptions::default(),
    )?;
    let c = crate::store::copy::sqlite_to_postgres(src.connection(), &mut dst)?;
    let problems = dst.check()?;
    writeln!(
        out,
        "Copied {} items, {} events, {} comments, {} queues ({} fields, {} texts) and {} users from {} to {}",
        c.items,
        c.events,
        c.comments,
        c.queues,
        c.fields,
        c.texts,
        c.users,
        sanitize::line(&path.display().to_string()),
        sanitize::line(&location::redact_url(url))
    )?;
    for p in &problems {
        writeln!(out, "check: {}", sanitize::line(p))?;
    }
    Ok(())
}

pub(crate) fn init(ctx: &Invocation, out: &mut dyn Write) -> CliResult {
    if let Location::Postgres(url) = &ctx.location {
        return init_postgres(ctx, url, out);
    }
    let store = open_store(ctx, true)?;
    drop(store);
    writeln!(out, "{}", sanitize::line(&ctx.location.display()))?;
    Ok(())
}

/// `init` on PostgreSQL: creates or upgrades the schema, and makes search fold case as
/// on SQLite where it does not (a schema restored on another server): only the schema's
/// owner may; what the server cannot do is said on stderr (the database works).
fn init_postgres(ctx: &Invocation, url: &str, out: &mut dyn Write) -> CliResult {
    use crate::store::postgres::{PgOptions, PgStore};
    let opts: PgOptions = crate::cli::pg_options(ctx)?;
    let mut store = PgStore::open(url, ctx.actor.clone(), &opts)?;
    let still = store.repair_fold().context(
        "search does not fold case here and could not be repaired (only the role that owns \
         caseload's tables can)",
    )?;
    let started = std::time::Instant::now();
    let (_, built) = store.add_search_index().context(
        "pg_trgm is installed but this schema has no search index, and it could not be \
         built (only the role that owns caseload's tables can)",
    )?;
    if built {
        eprintln!(
            "caseload: search index built ({:.1} s): searches use pg_trgm from now on",
            started.elapsed().as_secs_f64()
        );
    }
    drop(store);
    if let Some(problem) = still {
        eprintln!(
            "caseload: warning: {}; use a database created with ENCODING 'UTF8' and a \
             UTF-8 LC_CTYPE such as C.UTF-8 (README, PostgreSQL)",
            sanitize::line(&problem.to_string())
        );
    }
    writeln!(out, "{}", sanitize::line(&ctx.location.display()))?;
    Ok(())
}

/// `caseload demo`: a fresh demo database, opened in the TUI on a terminal; says where it
/// is and how to open it again. It goes where `--db` or `CASELOAD_DB` says, like every
/// command; a `db =` of a config file is not used: that is the team's database, no place
/// for made-up work, so without either the demo has its own file in the data directory.
pub(crate) fn demo(ctx: &Invocation, no_notify: bool, out: &mut dyn Write) -> CliResult {
    let given = matches!(ctx.source, location::Source::Flag | location::Source::Env);
    let location = if given {
        ctx.location.clone()
    } else {
        Location::File(demo_path()?)
    };
    let n = match &location {
        // An empty PostgreSQL database gets the same demo (never replaced: a database
        // with items is refused, as is a given file that holds any).
        Location::Postgres(url) => crate::demo::create_pg(url, &ctx.actor)?,
        Location::File(path) => crate::demo::create(path, &ctx.actor, !given)?,
    };
    let shown = sanitize::line(&location.display()).into_owned();
    let again = open_again(&location);
    if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        let ctx = Invocation {
            location,
            source: location::Source::Flag,
            config: ctx.config.clone(),
            actor: ctx.actor.clone(),
            allow_network_fs: ctx.allow_network_fs,
            create: false,
        };
        tui(&ctx, no_notify)?;
        writeln!(
            out,
            "The demo database is {shown}. Open it again with: {again}"
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "Demo database {shown} holds {n} items. Open it with: {again}"
    )?;
    Ok(())
}

/// The command that opens `location` again, quoted for a shell; a password in a URL is
/// shown as `***`, with where to put it instead.
fn open_again(location: &Location) -> String {
    let shown = location.display();
    let quoted = crate::store::fsfacts::shell_quote(std::path::Path::new(&shown));
    let mut line = format!("caseload --db {}", sanitize::line(&quoted));
    if let Location::Postgres(url) = location
        && shown != *url
    {
        line.push_str(" (the password is not shown: put it in ~/.pgpass, or in PGPASSWORD)");
    }
    line
}

pub(crate) fn demo_path() -> Result<PathBuf, Failure> {
    let dirs = location::project_dirs().ok_or_else(|| anyhow!("no home directory; give --db"))?;
    Ok(dirs.data_dir().join("caseload-demo.db"))
}

/// `caseload backup FILE`: a consistent copy of the SQLite file (PostgreSQL has
/// `pg_dump`: refused, once the database was opened as any command opens it).
pub(crate) fn backup(ctx: &Invocation, file: &std::path::Path, out: &mut dyn Write) -> CliResult {
    match &ctx.location {
        Location::File(path) => open_sqlite(ctx, path, false)?.backup(file)?,
        Location::Postgres(url) => {
            open_store(ctx, false)?;
            return Err(StoreError::Invalid(format!(
                "backup copies SQLite files only; for PostgreSQL use pg_dump, e.g. \
                 pg_dump --format=custom --file=caseload.dump '{}'",
                location::redact_url(url)
            ))
            .into());
        }
    }
    writeln!(
        out,
        "Backed up to {}",
        sanitize::line(&file.display().to_string())
    )?;
    Ok(())
}
