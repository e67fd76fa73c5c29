//! The command line: arguments ([`args`]), one small function per subcommand
//! ([`commands`]), shared text and JSON output ([`output`]), `check`'s findings
//! ([`damage`]) and help, completions and man pages ([`help`]). [`run`] only dispatches.
//! Everything printed from the database is sanitized.

pub(crate) mod args;
pub(crate) mod commands;
pub(crate) mod damage;
pub(crate) mod examples;
pub mod help;
pub(crate) mod output;

pub(crate) use args::{Cli, Command, UserCommand};

use commands::{
    duplicates, export, fields, holder, park, produce, read, report, review, setup, supervise,
    texts, undo,
};

use std::io::Write;

use anyhow::{Context, anyhow};

use crate::domain::Actor;
use crate::domain::texts::Said;
use crate::store::location::{Location, Source};
use crate::store::sqlite::OpenOptions;
use crate::store::{SqliteStore, Store, StoreError, exit};

/// An error with its exit code, carried up to `main`.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub error: anyhow::Error,
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Self {
        let error: anyhow::Error = e.into();
        let code = error
            .chain()
            .find_map(|c| c.downcast_ref::<StoreError>())
            .map_or(exit::ERROR, StoreError::exit_code);
        Failure { code, error }
    }
}

/// Result of a subcommand.
pub(crate) type CliResult = Result<(), Failure>;

/// Who runs caseload against which database: everything a subcommand needs from the
/// flags and the environment.
pub(crate) struct Invocation {
    pub location: Location,
    pub source: Source,
    /// The config files' settings (user over system).
    pub config: crate::config::Config,
    pub actor: Actor,
    pub allow_network_fs: bool,
    /// `--create`: a missing database file may be created.
    pub create: bool,
}

/// Resolves user and database from flags and environment.
pub(crate) fn context(cli: &Cli) -> Result<Invocation, Failure> {
    let env_user = std::env::var("CASELOAD_USER").ok();
    let actor = crate::store::identity::resolve(cli.user.as_deref(), env_user.as_deref())
        .map_err(|m| anyhow!(m))?;
    // doctor reports a config file it cannot use (and reads the others) instead of
    // stopping at it.
    let config = match cli.command {
        Some(Command::Doctor { .. }) => crate::config::Config::load_leaving_out_bad_files().0,
        _ => crate::config::Config::load()?,
    };
    let env_db = std::env::var("CASELOAD_DB").ok();
    let (location, source) = config
        .resolve_db(cli.db.as_deref(), env_db.as_deref())
        .map_err(|m| anyhow!(m))?;
    Ok(Invocation {
        location,
        source,
        config,
        actor,
        allow_network_fs: cli.allow_network_fs,
        create: cli.create,
    })
}

/// `history --user NAME` once named whose history; it now acts as NAME, as everywhere
/// else. A login NAME is not bound to is refused (exit 5) with the new spelling named.
fn as_of(
    opened: Result<Box<dyn Store>, Failure>,
    user: Option<&str>,
) -> Result<Box<dyn Store>, Failure> {
    opened.map_err(|f| old_history_spelling(f, user))
}

fn old_history_spelling(mut f: Failure, user: Option<&str>) -> Failure {
    let not_you = f
        .error
        .chain()
        .any(|c| matches!(c.downcast_ref::<StoreError>(), Some(StoreError::NotYou(_))));
    if let (true, Some(name)) = (not_you, user) {
        let name = crate::domain::sanitize::line(name).into_owned();
        f.error = f.error.context(format!(
            "--user {name} acts as {name}; to read {name}'s history as yourself use \
             `caseload history --of {name}`"
        ));
    }
    f
}

/// Opens the store for a subcommand.
pub(crate) fn open_store(ctx: &Invocation, init: bool) -> Result<Box<dyn Store>, Failure> {
    open_store_as(ctx, init, None)
}

/// Opens the store for a client that runs until stopped (the TUI, `claim --wait`): a
/// server that refuses connections (full, starting) is tried again with a growing pause,
/// each wait said on stderr, instead of failing at once.
pub(crate) fn open_store_patiently(ctx: &Invocation) -> Result<Box<dyn Store>, Failure> {
    open_store_as(ctx, false, Some(say_waiting))
}

fn say_waiting(line: &str) {
    eprintln!("caseload: {}", crate::domain::sanitize::line(line));
}

fn open_store_as(
    ctx: &Invocation,
    init: bool,
    waiting: Option<fn(&str)>,
) -> Result<Box<dyn Store>, Failure> {
    match &ctx.location {
        Location::File(path) => Ok(Box::new(open_sqlite(ctx, path, init)?)),
        Location::Postgres(url) => {
            let opts = crate::store::postgres::PgOptions {
                // As with a file: only init (and demo, migrate-to) or --create make the
                // tables; elsewhere a URL without them is an error, not a new caseload.
                must_exist: !init && !ctx.create,
                waiting,
                ..pg_options(ctx)?
            };
            let store = crate::store::postgres::PgStore::open(url, ctx.actor.clone(), &opts)?;
            Ok(Box::new(store))
        }
    }
}

/// A second connection to the same file or PostgreSQL schema, for the search indexer
/// beside an import; `None` when it cannot be opened (the server refuses one more
/// connection, say: the import then indexes after its rows).
pub(crate) fn second_connection(ctx: &Invocation) -> Option<Box<dyn Store + Send>> {
    let url = match &ctx.location {
        Location::Postgres(url) => url,
        Location::File(path) => {
            return match open_sqlite(ctx, path, false) {
                Ok(s) if s.small_cache().is_ok() => Some(Box::new(s)),
                Ok(_) => None,
                Err(e) => {
                    tracing::warn!("no second connection for the search index: {e:?}");
                    None
                }
            };
        }
    };
    let opts = crate::store::postgres::PgOptions {
        must_exist: true,
        ..pg_options(ctx).ok()?
    };
    match crate::store::postgres::PgStore::open(url, ctx.actor.clone(), &opts) {
        Ok(s) => Some(Box::new(s)),
        Err(e) => {
            tracing::warn!("no second connection for the search index: {e}");
            None
        }
    }
}

/// The PostgreSQL options every command starts from: `CASELOAD_PG_POOL`, else the config
/// files' `pg_pool`.
pub(crate) fn pg_options(ctx: &Invocation) -> Result<crate::store::postgres::PgOptions, Failure> {
    let pool = match std::env::var("CASELOAD_PG_POOL") {
        Ok(v) => crate::store::postgres::Pooling::parse(&v)
            .map_err(|m| anyhow!("CASELOAD_PG_POOL: {}", m.replace("pg_pool = ", "")))?,
        Err(_) => ctx.config.pg_pool.0,
    };
    Ok(crate::store::postgres::PgOptions {
        pool,
        ..Default::default()
    })
}

/// Opens the SQLite file at `path` for a subcommand.
pub(crate) fn open_sqlite(
    ctx: &Invocation,
    path: &std::path::Path,
    init: bool,
) -> Result<SqliteStore, Failure> {
    let opts = OpenOptions {
        allow_network_fs: ctx.allow_network_fs,
        allow_empty: init,
        create_dirs: ctx.source == Source::Default,
        // Only init (and demo, its own way) or an explicit --create make a file: a
        // mistyped --db is an error, not a new empty database.
        must_exist: !init && !ctx.create,
    };
    let store = SqliteStore::open(path, ctx.actor.clone(), &opts)
        .with_context(|| path.display().to_string())?;
    Ok(store)
}

/// Runs a subcommand.
pub fn run(cli: Cli, out: &mut dyn Write) -> CliResult {
    // Completions and man pages need no database, user or config file.
    match &cli.command {
        Some(Command::Completions { shell }) => return help::completions(*shell, out),
        Some(Command::Man { dir }) => return help::man(dir, out),
        _ => {}
    }
    let ctx = context(&cli)?;
    let Some(command) = cli.command else {
        return setup::tui(&ctx, cli.no_notify);
    };
    let patient = matches!(command, Command::Claim { wait: true, .. });
    let store = || open_store_as(&ctx, false, patient.then_some(say_waiting as fn(&str)));
    match command {
        Command::Demo => setup::demo(&ctx, cli.no_notify, out),
        Command::Add(a) => produce::add(&mut *store()?, a, out),
        Command::Import(a) => produce::import_file(&mut *store()?, a, out, &ctx),
        Command::List(a) => read::list(&mut *store()?, a, out),
        Command::Show { id, json } => read::show(&mut *store()?, id, json, out),
        Command::Claim { .. }
        | Command::Renew(_)
        | Command::Release { .. }
        | Command::Skip { .. }
        | Command::Complete { .. }
        | Command::Fail { .. }
        | Command::Park { .. }
        | Command::Accept { .. }
        | Command::Reject { .. }
        | Command::Wake { .. }
        | Command::Undo { .. } => holder_command(&mut *store()?, command, out),
        Command::History { of, since, json } => {
            let s = &mut *as_of(store(), cli.user.as_deref())?;
            read::history(s, of, since, json, out)
        }
        Command::Comment { id, text, file } => read::comment(&mut *store()?, id, text, file, out),
        Command::Reap
        | Command::Unlock { .. }
        | Command::Reassign { .. }
        | Command::Assign { .. }
        | Command::Reopen { .. }
        | Command::Edit { .. }
        | Command::Requeue { .. }
        | Command::Cancel { .. }
        | Command::Queue(_) => supervisor_command(&mut *store()?, command, out),
        Command::User(u) => user_command(&mut *store()?, u, out),
        Command::Field(f) => fields::field_command(&mut *store()?, f, out),
        Command::Text(t) => texts::text_command(&mut *store()?, t, out),
        Command::Set { holder, values } => fields::set(&mut *store()?, &holder, &values, out),
        c @ Command::Tick { .. } => fields::tick_command(&mut *store()?, c, out),
        c @ (Command::Similar { .. } | Command::Merge { .. } | Command::NotDuplicate { .. }) => {
            duplicates::command(&mut *store()?, c, out)
        }
        Command::Stats { json } => read::stats(&mut *store()?, json, out),
        Command::Report {
            by,
            since,
            until,
            queue,
            format,
        } => report::report(
            &mut *store()?,
            report::Ask {
                by,
                since,
                until,
                queue,
                format,
            },
            out,
        ),
        Command::Export(a) => export::export(&mut *store()?, a, out),
        Command::Events(a) => commands::events::events(&mut *store()?, &a, out),
        Command::Metrics(a) => commands::metrics::metrics(&mut *store()?, &a, out),
        c @ (Command::Init
        | Command::Check { .. }
        | Command::MigrateTo { .. }
        | Command::Doctor { .. }
        | Command::Backup { .. }
        | Command::Work(_)) => own_connection_command(&ctx, c, out),
        // Answered above, before the config files are read.
        Command::Completions { .. } | Command::Man { .. } => Ok(()),
    }
}

/// The commands that open the database their own way (or several times).
fn own_connection_command(ctx: &Invocation, command: Command, out: &mut dyn Write) -> CliResult {
    match command {
        Command::Init => setup::init(ctx, out),
        Command::Check {
            repair_figures,
            quick,
        } => damage::check(ctx, repair_figures, quick, out),
        Command::MigrateTo { url } => setup::migrate_to(ctx, &url, out),
        Command::Doctor { json } => setup::doctor(ctx, json, out),
        Command::Backup { file } => setup::backup(ctx, &file, out),
        Command::Work(a) => commands::work::work(ctx, &a, out),
        // `run` sends only the commands above here.
        _ => bail_usage("not a command of this group"),
    }
}

/// The holder's commands: claim, renew, release, complete, fail.
fn holder_command(store: &mut dyn Store, command: Command, out: &mut dyn Write) -> CliResult {
    match command {
        Command::Claim {
            queue,
            id,
            json,
            wait: false,
            review,
            ..
        } => holder::claim(store, (queue, id, review), json, out),
        Command::Claim {
            queue,
            json,
            wait: true,
            timeout,
            review,
            ..
        } => holder::claim_wait(store, (queue, review), timeout, json, out),
        Command::Renew(h) => holder::renew(store, &h, out),
        Command::Release { holder: h, said } => holder::release(store, &h, &said, false, out),
        Command::Skip { holder: h, said } => holder::release(store, &h, &said, true, out),
        Command::Complete {
            holder: h,
            result,
            code,
            next: false,
            over,
            ..
        } => {
            let said = Said::text(result.as_deref()).coded(code.as_deref());
            holder::complete(store, &h, said, over.as_deref(), out)
        }
        Command::Complete {
            holder: h,
            result,
            code,
            next: true,
            queue,
            over,
        } => {
            let said = Said::text(result.as_deref()).coded(code.as_deref());
            holder::complete_next(store, &h, (said, over.as_deref()), queue, out)
        }
        Command::Fail {
            holder: h,
            reason,
            code,
        } => {
            let said = Said::text(reason.as_deref()).coded(code.as_deref());
            holder::fail(store, &h, said, out)
        }
        Command::Park {
            holder: h,
            until,
            reason,
        } => park::park(store, &h, &until, &reason, out),
        Command::Accept { holder: h, comment } => review::accept(store, &h, comment, out),
        Command::Reject {
            holder: h,
            reason,
            code,
        } => {
            let said = Said::text(reason.as_deref()).coded(code.as_deref());
            review::reject(store, &h, said, out)
        }
        Command::Wake { id, json } => park::wake(store, id, json, out),
        Command::Undo { id, json } => undo::undo(store, id, json, out),
        // `run` sends only the commands above here.
        _ => bail_usage("not a command of this group"),
    }
}

/// The supervisor's commands (and `reap`, which anyone may run).
fn supervisor_command(store: &mut dyn Store, command: Command, out: &mut dyn Write) -> CliResult {
    match command {
        Command::Reap => supervise::reap(store, out),
        Command::Unlock {
            id: Some(id),
            reason,
            ..
        } => supervise::unlock(store, id, &reason, out),
        Command::Unlock {
            id: None,
            expired: false,
            holder: None,
            all: false,
            ..
        } => bail_usage(
            "unlock --queue Q would unlock its live locks too: add --expired (the expired ones) \
             or --all (every lock in Q)",
        ),
        Command::Unlock {
            id: None,
            reason,
            expired,
            holder: h,
            queue,
            ..
        } => supervise::unlock_many(store, expired, h, queue, &reason, out),
        Command::Reassign { id, to, reason } => supervise::reassign(store, id, &to, &reason, out),
        Command::Assign { id, to, reason } => supervise::assign(store, id, &to, &reason, out),
        Command::Reopen { id, reason } => supervise::reopen(store, id, &reason, out),
        Command::Edit {
            id,
            priority,
            due,
            queue,
        } => supervise::edit(store, id, priority, due, queue, out),
        Command::Requeue { id } => supervise::requeue(store, id, out),
        Command::Cancel { id, reason } => supervise::cancel(store, id, &reason, out),
        Command::Queue(q) => supervise::queue_command(store, q, out),
        // `run` sends only the commands above here.
        _ => bail_usage("not a command of this group"),
    }
}

/// `caseload user ...`.
fn user_command(store: &mut dyn Store, command: UserCommand, out: &mut dyn Write) -> CliResult {
    match command {
        UserCommand::List { json, all } => read::users(store, json, all, out),
        UserCommand::Set {
            name,
            role,
            login,
            no_login,
            queues,
            reviews,
            leaving,
            reason,
            back,
        } => {
            let login = match (login, no_login) {
                (Some(l), _) => Some(Some(l)),
                (None, true) => Some(None),
                (None, false) => None,
            };
            let list = |flag: &str, v: Option<String>| -> std::result::Result<_, Failure> {
                v.map(|v| crate::domain::Queues::parse(&v))
                    .transpose()
                    .map_err(|e| Failure {
                        code: exit::ERROR,
                        error: anyhow!("--{flag}: {e}"),
                    })
            };
            let change = crate::store::UserChange {
                role,
                login,
                queues: list("queues", queues)?,
                reviews: list("reviews", reviews)?,
                leaving: if leaving { reason } else { None },
                back,
            };
            supervise::set_user(store, &name, &change, out)
        }
    }
}

pub(crate) fn bail_usage(msg: &str) -> CliResult {
    Err(Failure {
        code: exit::USAGE,
        error: anyhow!(msg.to_string()),
    })
}
