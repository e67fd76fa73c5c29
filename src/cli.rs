//! The command line: argument definitions and one small function per subcommand, each a
//! few lines over the Store. Everything printed from the database is sanitized.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context, anyhow};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Value, json};

use crate::domain::time::{parse_rfc3339, rfc3339, short_duration};
use crate::domain::{Actor, Event, Item, ItemState, NewItem, QueueUpdate, Role, sanitize};
use crate::import::{self, Format};
use crate::store::location::{self, Location, Source};
use crate::store::sqlite::OpenOptions;
use crate::store::{
    Applied, ListFilter, SqliteStore, StateFilter, Store, StoreError, TakeNext, exit,
};

const AFTER_HELP: &str = "\
Database: --db, else CASELOAD_DB, else `db = \"...\"` in the user's ~/.config/caseload/config.toml,
else in /etc/caseload/config.toml, else caseload.db in the user's data directory (created on
first use). User: --user, else CASELOAD_USER, else the OS login name.
Config files: keys `db` and `notify` (bell, desktop, both or off; default bell); see `man caseload`.

Exit codes: 0 done, 1 error (bad input, I/O, corrupt file), 2 usage, 3 conflict (taken by
someone else, lock lost, token mismatch), 4 nothing to claim, 5 supervisor only, 6 outcome
unknown (the connection was lost while committing: see `caseload list --mine`).";

/// The heading of the flags every subcommand takes.
const GLOBAL: &str = "Global options";

/// caseload: a terminal work queue for people.
#[derive(Debug, Parser)]
#[command(name = "caseload", version, about, after_help = AFTER_HELP)]
pub struct Cli {
    /// Database file, or a postgres:// URL (default: CASELOAD_DB, else `db` in the config
    /// files, else caseload.db in your data directory).
    #[arg(long, global = true, value_name = "PATH|URL", help_heading = GLOBAL)]
    pub db: Option<String>,
    /// Act as this user (default: CASELOAD_USER, else your OS login name).
    #[arg(long, global = true, value_name = "NAME", help_heading = GLOBAL)]
    pub user: Option<String>,
    /// Open a database on a network filesystem (NFS, SMB, FUSE, 9p) although SQLite's
    /// locking is unreliable there (also CASELOAD_ALLOW_NETWORK_FS=1; default: refuse).
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub allow_network_fs: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create or migrate the database and print its location.
    Init,
    /// Fill a fresh demo database from the bundled data set.
    Demo,
    /// Add one item; prints its id (the same id again for a known --request-id).
    Add(AddArgs),
    /// Import items from a CSV or JSON Lines file: all rows or none.
    Import(ImportArgs),
    /// List items.
    List(ListArgs),
    /// Show one item and its history.
    Show {
        /// The item's id (as `list` prints it, without the #).
        id: i64,
        /// Print one JSON object: the item's fields and its `history`.
        #[arg(long)]
        json: bool,
    },
    /// Take the next item (or --id ID); prints it with its lock_token.
    Claim {
        /// Take from this queue only (default: every queue).
        #[arg(long)]
        queue: Option<String>,
        /// Take this item instead of the next one in take order.
        #[arg(long, value_name = "ID")]
        id: Option<i64>,
        /// Print the item as one JSON object, with its lock_token.
        #[arg(long)]
        json: bool,
    },
    /// Renew your lock on an item.
    Renew(HolderArgs),
    /// Release your lock, returning the item to the pool.
    Release(HolderArgs),
    /// Complete an item you hold.
    Complete {
        #[command(flatten)]
        holder: HolderArgs,
        /// What was done, kept as the item's result (default: none).
        #[arg(long)]
        result: Option<String>,
    },
    /// Fail an item you hold, with a reason.
    Fail {
        #[command(flatten)]
        holder: HolderArgs,
        /// Why it failed (required; kept as the item's error and in its history).
        #[arg(long)]
        reason: String,
    },
    /// Release expired locks; prints how many.
    Reap,
    /// Supervisor: return a held item (or, without ID, every lock matching the filters) to
    /// the pool.
    Unlock {
        /// The item's id; without it, every lock that --expired, --holder and --queue match.
        #[arg(required_unless_present_any = ["expired", "holder"])]
        id: Option<i64>,
        /// Why (required; shown to the holder and kept in the history).
        #[arg(long)]
        reason: String,
        /// Without ID: only expired locks.
        #[arg(long, conflicts_with = "id")]
        expired: bool,
        /// Without ID: only locks held by this user.
        #[arg(long, value_name = "USER", conflicts_with = "id")]
        holder: Option<String>,
        /// Without ID: only locks in this queue.
        #[arg(long, conflicts_with = "id")]
        queue: Option<String>,
    },
    /// What a user did (default: you, today).
    History {
        /// Whose actions (default: you).
        #[arg(long, value_name = "USER")]
        user: Option<String>,
        /// Start time, RFC 3339 (default: midnight today, local time).
        #[arg(long, value_name = "TIME")]
        since: Option<String>,
        /// Print one JSON array of events.
        #[arg(long)]
        json: bool,
    },
    /// Supervisor: give an item's lock to another user.
    Reassign {
        /// The item's id.
        id: i64,
        /// The user who gets the lock.
        #[arg(long, value_name = "USER")]
        to: String,
        /// Why (required; shown to both users and kept in the history).
        #[arg(long)]
        reason: String,
    },
    /// Supervisor: reopen a failed or cancelled item.
    Requeue {
        /// The item's id.
        id: i64,
    },
    /// Supervisor: cancel an open item.
    Cancel {
        /// The item's id.
        id: i64,
        /// Why (required; kept in the history).
        #[arg(long)]
        reason: String,
    },
    /// Queue settings.
    #[command(subcommand)]
    Queue(QueueCommand),
    /// User roles.
    #[command(subcommand)]
    User(UserCommand),
    /// Counts, throughput, lock ages and work in progress.
    Stats {
        /// Print one JSON object with the same figures.
        #[arg(long)]
        json: bool,
    },
    /// Write items as CSV or JSON Lines to standard output.
    Export {
        /// Only items in this state: open, done, failed or cancelled (default: every item).
        #[arg(long, value_parser = parse_item_state)]
        state: Option<ItemState>,
        /// Output format.
        #[arg(long, value_enum, default_value = "csv")]
        format: FormatArg,
    },
    /// Check the file's integrity and the schema's invariants.
    Check,
    /// Write a consistent copy of the database to FILE (online, while others work).
    Backup {
        /// Where to write the copy; must not exist yet.
        file: PathBuf,
    },
    /// Check the deployment: permissions, disk, filesystem, schema, server; one line per
    /// check with the fix. Exit 0 when every check passes, 1 otherwise.
    Doctor {
        /// Print one JSON object instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Copy this SQLite database (items, locks, notes, history, queues, roles) into an
    /// empty PostgreSQL database.
    MigrateTo {
        /// The target, postgres://USER@HOST/DB (a password is better kept in ~/.pgpass).
        #[arg(value_name = "URL")]
        url: String,
    },
    /// Print a shell completion script (bash, zsh or fish) to standard output.
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: crate::cli_help::Shell,
    },
    /// Write the manual pages (caseload.1 and caseload-COMMAND.1 for each command) into DIR.
    Man {
        /// The directory to write into (created if missing).
        dir: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// Title shown in lists (required; at most 1000 characters).
    #[arg(long)]
    pub title: String,
    /// Queue to add to (default: `default`; a new queue is created on first use).
    #[arg(long)]
    pub queue: Option<String>,
    /// Body text, shown in the item's detail (default: empty; at most 1 MiB).
    #[arg(long, default_value = "", hide_default_value = true)]
    pub body: String,
    /// Parameters, a JSON object (e.g. '{"order": 42}').
    #[arg(long, default_value = "{}")]
    pub params: String,
    /// Priority, an integer; higher is taken first.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub priority: i64,
    /// Due time, RFC 3339 (e.g. 2026-12-01T17:00:00Z; default: none).
    #[arg(long, value_name = "TIME")]
    pub due: Option<String>,
    /// The producer's idempotency key: adding a known key again prints the first item's id
    /// and adds nothing (default: none).
    #[arg(long)]
    pub request_id: Option<String>,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The CSV (with a header row) or JSON Lines file to import.
    pub file: PathBuf,
    /// File format (default: from the extension; .jsonl/.ndjson are JSON Lines, else CSV).
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Queue for rows that name none (default: `default`).
    #[arg(long)]
    pub queue: Option<String>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Which items: open (in take order), locked, expired, done, failed, cancelled or all.
    #[arg(long, value_parser = parse_state_filter, default_value = "open")]
    pub state: StateFilter,
    /// Only items in this queue (default: every queue).
    #[arg(long)]
    pub queue: Option<String>,
    /// Only items you hold.
    #[arg(long)]
    pub mine: bool,
    /// Print at most this many items.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub limit: usize,
    /// Print one JSON array of items instead of text lines.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HolderArgs {
    /// The item's id.
    pub id: i64,
    /// The lock token (default: your current lock on the item).
    #[arg(long)]
    pub token: Option<i64>,
}

#[derive(Debug, Subcommand)]
pub enum QueueCommand {
    /// Change a queue's settings (shared by every user).
    Set {
        /// The queue's name.
        name: String,
        /// Seconds after which a lock expires, 1 to 604800 (a new queue has 1800).
        #[arg(long, value_name = "SECONDS")]
        lock_seconds: Option<i64>,
        /// Seconds before expiry to warn the holder, less than the lock age (a new queue
        /// has 120).
        #[arg(long, value_name = "SECONDS")]
        warn_seconds: Option<i64>,
        /// Most items one user may hold at once (0 removes the limit; a new queue has none).
        #[arg(long, value_name = "N")]
        max_per_user: Option<i64>,
        /// true stops claims from the queue, false resumes them (also yes/no, on/off, 1/0;
        /// a new queue runs).
        #[arg(long, value_parser = parse_bool, value_name = "BOOL")]
        paused: Option<bool>,
        /// Create the queue if it does not exist yet.
        #[arg(long)]
        create: bool,
    },
    /// List queues and their settings.
    List {
        /// Print one JSON array of queues.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Set a user's role.
    Set {
        /// The user's name (as given by --user, CASELOAD_USER or the OS login).
        name: String,
        /// staff (the default for unknown users) or supervisor.
        #[arg(long, value_parser = parse_role)]
        role: Role,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Comma-separated values with a header row.
    Csv,
    /// One JSON object per line.
    Jsonl,
}

fn parse_state_filter(s: &str) -> Result<StateFilter, String> {
    StateFilter::parse(s)
        .ok_or_else(|| "expected open, locked, expired, done, failed, cancelled or all".to_string())
}

fn parse_item_state(s: &str) -> Result<ItemState, String> {
    ItemState::parse(s).ok_or_else(|| "expected open, done, failed or cancelled".to_string())
}

fn parse_role(s: &str) -> Result<Role, String> {
    Role::parse(s).ok_or_else(|| "expected staff or supervisor".to_string())
}

fn parse_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Ok(true),
        "false" | "no" | "off" | "0" => Ok(false),
        _ => Err("expected true or false".to_string()),
    }
}

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
pub type CliResult = Result<(), Failure>;

/// Who runs caseload against which database: everything a subcommand needs from the
/// flags and the environment.
pub struct Invocation {
    pub location: Location,
    pub source: Source,
    /// The config files' settings (user over system).
    pub config: crate::config::Config,
    pub actor: Actor,
    pub allow_network_fs: bool,
}

/// Resolves user and database from flags and environment.
pub fn context(cli: &Cli) -> Result<Invocation, Failure> {
    let env_user = std::env::var("CASELOAD_USER").ok();
    let actor = crate::store::identity::resolve(cli.user.as_deref(), env_user.as_deref())
        .map_err(|m| anyhow!(m))?;
    let config = crate::config::Config::load()?;
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
    })
}

/// Opens the store for a subcommand.
pub fn open_store(ctx: &Invocation, init: bool) -> Result<Box<dyn Store>, Failure> {
    match &ctx.location {
        Location::File(path) => {
            let opts = OpenOptions {
                allow_network_fs: ctx.allow_network_fs,
                allow_empty: init,
                create_dirs: ctx.source == Source::Default,
                must_exist: false,
            };
            let store = SqliteStore::open(path, ctx.actor.clone(), &opts)
                .with_context(|| path.display().to_string())?;
            Ok(Box::new(store))
        }
        Location::Postgres(url) => {
            let opts = crate::store::postgres::PgOptions::default();
            let store = crate::store::postgres::PgStore::open(url, ctx.actor.clone(), &opts)?;
            Ok(Box::new(store))
        }
    }
}

/// Runs a subcommand.
pub fn run(cli: Cli, out: &mut dyn Write) -> CliResult {
    // Completions and man pages need no database, user or config file.
    match &cli.command {
        Some(Command::Completions { shell }) => {
            return crate::cli_help::completions(*shell, out);
        }
        Some(Command::Man { dir }) => return crate::cli_help::man(dir, out),
        _ => {}
    }
    let ctx = context(&cli)?;
    let Some(command) = cli.command else {
        return tui(&ctx);
    };
    match command {
        Command::Init => init(&ctx, out),
        Command::Demo => demo(&ctx, cli.db.is_some(), out),
        Command::Add(a) => add(&mut *open_store(&ctx, false)?, a, out),
        Command::Import(a) => import_file(&mut *open_store(&ctx, false)?, a, out),
        Command::List(a) => list(&mut *open_store(&ctx, false)?, a, out),
        Command::Show { id, json } => show(&mut *open_store(&ctx, false)?, id, json, out),
        Command::Claim { queue, id, json } => {
            claim(&mut *open_store(&ctx, false)?, queue, id, json, out)
        }
        Command::Renew(h) => {
            let mut s = open_store(&ctx, false)?;
            let token = token_for(&mut *s, &h)?;
            let item = s.renew(h.id, token)?;
            let q = s.queue(&item.queue)?;
            let until = item.lock_time.unwrap_or(0) + q.lock_ms();
            writeln!(out, "Renewed #{} until {}", item.id, rfc3339(until))?;
            Ok(())
        }
        Command::Release(h) => {
            let mut s = open_store(&ctx, false)?;
            let token = token_for(&mut *s, &h)?;
            let applied = s.release(h.id, token)?;
            writeln!(out, "{}", done_line(h.id, "Released", "released", applied))?;
            Ok(())
        }
        Command::Complete { holder, result } => {
            let mut s = open_store(&ctx, false)?;
            let token = token_for(&mut *s, &holder)?;
            let applied = s.complete(holder.id, token, result.as_deref())?;
            writeln!(
                out,
                "{}",
                done_line(holder.id, "Completed", "completed", applied)
            )?;
            Ok(())
        }
        Command::Fail { holder, reason } => {
            let mut s = open_store(&ctx, false)?;
            let token = token_for(&mut *s, &holder)?;
            let applied = s.fail(holder.id, token, &reason)?;
            writeln!(out, "{}", done_line(holder.id, "Failed", "failed", applied))?;
            Ok(())
        }
        Command::Reap => {
            let n = open_store(&ctx, false)?.reap()?;
            writeln!(out, "{n}")?;
            Ok(())
        }
        Command::Unlock {
            id: Some(id),
            reason,
            ..
        } => {
            open_store(&ctx, false)?.unlock(id, None, &reason)?;
            writeln!(out, "Unlocked #{id}")?;
            Ok(())
        }
        Command::Unlock {
            id: None,
            reason,
            expired,
            holder,
            queue,
        } => {
            let mut s = open_store(&ctx, false)?;
            let filter = ListFilter {
                state: if expired {
                    StateFilter::Expired
                } else {
                    StateFilter::Locked
                },
                queue,
                holder,
                text: None,
                limit: usize::MAX >> 1,
                offset: 0,
            };
            let locks: Vec<(i64, i64)> = s
                .list(&filter)?
                .iter()
                .map(|i| (i.id, i.lock_token))
                .collect();
            let n = s.unlock_many(&locks, &reason)?;
            writeln!(out, "Unlocked {n} item(s)")?;
            Ok(())
        }
        Command::History { user, since, json } => {
            history(&mut *open_store(&ctx, false)?, user, since, json, out)
        }
        Command::Reassign { id, to, reason } => {
            let item = open_store(&ctx, false)?.reassign(id, None, &to, &reason)?;
            writeln!(
                out,
                "Reassigned #{id} to {} (token {})",
                sanitize::line(&to),
                item.lock_token
            )?;
            Ok(())
        }
        Command::Requeue { id } => {
            open_store(&ctx, false)?.requeue(id)?;
            writeln!(out, "Requeued #{id}")?;
            Ok(())
        }
        Command::Cancel { id, reason } => {
            open_store(&ctx, false)?.cancel(id, &reason)?;
            writeln!(out, "Cancelled #{id}")?;
            Ok(())
        }
        Command::Queue(q) => queue_command(&mut *open_store(&ctx, false)?, q, out),
        Command::User(UserCommand::Set { name, role }) => {
            open_store(&ctx, false)?.set_role(&name, role)?;
            writeln!(out, "{} is now {}", sanitize::line(&name), role.as_str())?;
            Ok(())
        }
        Command::Stats { json } => stats(&mut *open_store(&ctx, false)?, json, out),
        Command::Export { state, format } => {
            export(&mut *open_store(&ctx, false)?, state, format, out)
        }
        Command::Check => crate::cli_damage::check(&ctx, out),
        Command::MigrateTo { url } => migrate_to(&ctx, &url, out),
        Command::Doctor { json } => doctor(&ctx, json, out),
        Command::Backup { file } => {
            open_store(&ctx, false)?.backup(&file)?;
            writeln!(out, "Backed up to {}", file.display())?;
            Ok(())
        }
        // Answered above, before the config files are read.
        Command::Completions { .. } | Command::Man { .. } => Ok(()),
    }
}

/// Opens the TUI (no subcommand); it needs a terminal.
fn tui(ctx: &Invocation) -> CliResult {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return bail_usage(
            "the interactive view needs a terminal; use a subcommand (see `caseload --help`)",
        );
    }
    let store = open_store(ctx, false)?;
    crate::tui::run(store)?;
    Ok(())
}

/// Checks the deployment of `ctx`'s database; fails (exit 1) when a check fails.
fn doctor(ctx: &Invocation, json: bool, out: &mut dyn Write) -> CliResult {
    let report = crate::doctor::examine(&ctx.location, &ctx.source, ctx.allow_network_fs);
    crate::doctor::print(&report, json, out)?;
    let failed = report.checks.iter().filter(|c| !c.ok).count();
    if failed == 0 {
        return Ok(());
    }
    Err(anyhow!("doctor: {failed} check(s) failed; each ✘ line says how to fix it").into())
}

/// Copies the SQLite database of `ctx` into the PostgreSQL database at `url`.
fn migrate_to(ctx: &Invocation, url: &str, out: &mut dyn Write) -> CliResult {
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
        "Copied {} items, {} events, {} queues and {} users from {} to {}",
        c.items,
        c.events,
        c.queues,
        c.users,
        path.display(),
        location::redact_url(url)
    )?;
    for p in &problems {
        writeln!(out, "check: {}", sanitize::line(p))?;
    }
    Ok(())
}

fn bail_usage(msg: &str) -> CliResult {
    Err(Failure {
        code: exit::USAGE,
        error: anyhow!(msg.to_string()),
    })
}

fn init(ctx: &Invocation, out: &mut dyn Write) -> CliResult {
    let store = open_store(ctx, true)?;
    drop(store);
    writeln!(out, "{}", ctx.location.display())?;
    Ok(())
}

/// The bundled demo data set.
pub const DEMO_DATA: &str = include_str!("../assets/demo.jsonl");

fn demo(ctx: &Invocation, db_given: bool, out: &mut dyn Write) -> CliResult {
    let path = match (&ctx.location, db_given) {
        (Location::File(p), true) => p.clone(),
        (Location::Postgres(_), true) => {
            return Err(anyhow!("demo needs a file database (give --db PATH)").into());
        }
        _ => demo_path()?,
    };
    let n = crate::demo::create(&path, &ctx.actor, !db_given)?;
    if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        let ctx = Invocation {
            location: Location::File(path.clone()),
            source: location::Source::Flag,
            config: ctx.config.clone(),
            actor: ctx.actor.clone(),
            allow_network_fs: ctx.allow_network_fs,
        };
        return tui(&ctx);
    }
    writeln!(
        out,
        "Demo database {} holds {n} items. Open it with: caseload --db {}",
        path.display(),
        path.display()
    )?;
    Ok(())
}

fn demo_path() -> Result<PathBuf, Failure> {
    let dirs = location::project_dirs().ok_or_else(|| anyhow!("no home directory; give --db"))?;
    Ok(dirs.data_dir().join("caseload-demo.db"))
}

fn add(s: &mut dyn Store, a: AddArgs, out: &mut dyn Write) -> CliResult {
    let due_at = match &a.due {
        Some(d) => Some(parse_rfc3339(d).ok_or_else(|| {
            anyhow!(
                "--due '{}' is not an RFC 3339 time (e.g. 2026-12-01T17:00:00Z)",
                sanitize::line(d)
            )
        })?),
        None => None,
    };
    let item = NewItem {
        queue: a.queue.unwrap_or_else(|| "default".into()),
        title: a.title,
        body: a.body,
        params: a.params,
        priority: a.priority,
        due_at,
        request_id: a.request_id,
    };
    if let Err(e) = item.validate() {
        return Err(anyhow!("--{}: {}", e.field.replace('_', "-"), e.message).into());
    }
    let added = s.add(&item)?;
    writeln!(out, "{}", added.id)?;
    Ok(())
}

fn import_file(s: &mut dyn Store, a: ImportArgs, out: &mut dyn Write) -> CliResult {
    let shown = a.file.display().to_string();
    let data = std::fs::read(&a.file).with_context(|| format!("{shown}: cannot read"))?;
    let format = match a.format {
        Some(FormatArg::Csv) => Format::Csv,
        Some(FormatArg::Jsonl) => Format::Jsonl,
        None => Format::from_path(&a.file),
    };
    let queue = a.queue.unwrap_or_else(|| "default".into());
    let rows = match import::parse(&data, format, &queue) {
        Ok(rows) => rows,
        Err(errors) => {
            let mut msg = format!("{shown}: {} bad line(s), nothing imported: ", errors.len());
            let named: Vec<String> = errors
                .iter()
                .take(import::MAX_REPORTED)
                .map(|e| format!("line {} {}", e.line, sanitize::line(&e.message)))
                .collect();
            msg.push_str(&named.join("; "));
            if errors.len() > import::MAX_REPORTED {
                msg.push_str(&format!(
                    "; and {} more",
                    errors.len() - import::MAX_REPORTED
                ));
            }
            return Err(anyhow!(msg).into());
        }
    };
    let bar = progress_bar(rows.len() as u64);
    let mut created = 0usize;
    // Short batches: the write lock is never held long, so staff keep claiming.
    let mut sizer = import::BatchSizer::default();
    let mut rest = &rows[..];
    while !rest.is_empty() {
        let (chunk, tail) = rest.split_at(sizer.next_len().min(rest.len()));
        let started = std::time::Instant::now();
        created += s
            .add_batch(chunk)
            .with_context(|| format!("{shown}: import stopped part-way; run it again to finish"))?;
        sizer.record(chunk.len(), started.elapsed());
        bar.inc(chunk.len() as u64);
        rest = tail;
    }
    bar.finish_and_clear();
    writeln!(
        out,
        "Imported {created} new item(s) from {shown} ({} already present)",
        rows.len() - created
    )?;
    Ok(())
}

fn progress_bar(len: u64) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} rows ({per_sec}, {eta} left)")
    {
        bar.set_style(style);
    }
    bar
}

fn list(s: &mut dyn Store, a: ListArgs, out: &mut dyn Write) -> CliResult {
    let filter = ListFilter {
        state: a.state,
        queue: a.queue,
        holder: a.mine.then(|| s.actor().name.clone()),
        text: None,
        limit: a.limit.max(1),
        offset: 0,
    };
    let items = s.list(&filter)?;
    if a.json {
        let arr: Vec<Value> = items.iter().map(item_json).collect();
        write_json(out, &Value::Array(arr))?;
        return Ok(());
    }
    let now = s.now()?;
    let queues = s.queues()?;
    for item in &items {
        let mut lock = lock_text(item, &queues, now);
        if a.mine && item.lock_user.is_some() {
            // What a holder needs to carry on (`--token`), e.g. after a lost answer.
            lock = format!("{lock} token {}", item.lock_token);
        }
        let due = item
            .due_at
            .map(|d| rfc3339(d)[..16].to_string())
            .unwrap_or_default();
        writeln!(
            out,
            "{:>7}  {:>3}  {:<28}  {:<16}  {:<12}  {}",
            format!("#{}", item.id),
            item.priority,
            lock,
            due,
            truncate(&sanitize::line(&item.queue), 12),
            truncate(&sanitize::line(&item.list_title()), 100)
        )?;
    }
    Ok(())
}

fn lock_text(item: &Item, queues: &[crate::domain::QueueSettings], now: i64) -> String {
    if item.state != ItemState::Open {
        return item.state.as_str().to_string();
    }
    let q = queues
        .iter()
        .find(|q| q.name == item.queue)
        .cloned()
        .unwrap_or_else(|| crate::domain::QueueSettings::new(&item.queue));
    match item.lock() {
        None => "free".into(),
        Some(l) => match l.status(&q, now) {
            crate::domain::LockStatus::Held { user, remaining } => format!(
                "held by {} ({} left)",
                truncate(&sanitize::line(&user), 12),
                short_duration(remaining)
            ),
            crate::domain::LockStatus::Expired { user, overrun } => format!(
                "EXPIRED {} (+{})",
                truncate(&sanitize::line(&user), 10),
                short_duration(overrun)
            ),
            crate::domain::LockStatus::Free => "free".into(),
        },
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

fn show(s: &mut dyn Store, id: i64, json: bool, out: &mut dyn Write) -> CliResult {
    let item = s.item(id)?;
    let history = s.history(id)?;
    if json {
        let mut v = item_json(&item);
        v["history"] = Value::Array(history.iter().map(event_json).collect());
        write_json(out, &v)?;
        return Ok(());
    }
    write_item(s, &item, out)?;
    writeln!(out, "history:")?;
    for e in &history {
        writeln!(out, "  {}", event_line(e))?;
    }
    Ok(())
}

fn write_item(s: &mut dyn Store, item: &Item, out: &mut dyn Write) -> CliResult {
    let now = s.now()?;
    let queues = s.queues()?;
    writeln!(out, "#{} {}", item.id, sanitize::line(&item.title))?;
    if let Some(why) = item.unreadable_summary() {
        writeln!(
            out,
            "unreadable: {why} (another program or a damaged disk wrote it; bad bytes show \
             as \u{FFFD}; see `caseload check`)"
        )?;
    }
    writeln!(out, "queue:      {}", sanitize::line(&item.queue))?;
    writeln!(out, "state:      {}", lock_text(item, &queues, now))?;
    if item.lock_user.is_some() {
        writeln!(out, "lock_token: {}", item.lock_token)?;
    }
    writeln!(out, "priority:   {}", item.priority)?;
    if let Some(d) = item.due_at {
        writeln!(out, "due:        {}", rfc3339(d))?;
    }
    writeln!(
        out,
        "created:    {} by {}",
        rfc3339(item.created_at),
        sanitize::line(&item.created_by)
    )?;
    if let (Some(at), Some(by)) = (item.finished_at, &item.finished_by) {
        writeln!(out, "finished:   {} by {}", rfc3339(at), sanitize::line(by))?;
    }
    if let Some(r) = &item.request_id {
        writeln!(out, "request_id: {}", sanitize::line(r))?;
    }
    if let Some(r) = &item.result {
        writeln!(out, "result:     {}", sanitize::line(r))?;
    }
    if let Some(e) = &item.error {
        writeln!(out, "error:      {}", sanitize::line(e))?;
    }
    if !item.body.is_empty() {
        writeln!(out, "body:\n{}", indent(&sanitize::text(&item.body)))?;
    }
    if item.params != "{}" {
        let pretty = serde_json::from_str::<Value>(&item.params)
            .ok()
            .and_then(|v| serde_json::to_string_pretty(&v).ok())
            .unwrap_or_else(|| item.params.clone());
        writeln!(out, "params:\n{}", indent(&sanitize::text(&pretty)))?;
    }
    if !item.notes.is_empty() {
        writeln!(out, "notes:\n{}", indent(&sanitize::text(&item.notes)))?;
    }
    Ok(())
}

fn indent(s: &str) -> String {
    s.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One history line, sanitized: "2026-11-22T10:42:00.000Z  alice  locked  {...}".
pub fn event_line(e: &Event) -> String {
    let detail = match &e.detail {
        Value::Object(m) if m.is_empty() => String::new(),
        Value::Object(m) => m
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    };
    sanitize::line(&format!(
        "{}  {}  {}  {}",
        rfc3339(e.at),
        e.actor,
        e.kind.as_str(),
        detail
    ))
    .trim_end()
    .to_string()
}

fn history(
    s: &mut dyn Store,
    user: Option<String>,
    since: Option<String>,
    json: bool,
    out: &mut dyn Write,
) -> CliResult {
    let user = user.unwrap_or_else(|| s.actor().name.clone());
    let since = match since {
        Some(t) => parse_rfc3339(&t).ok_or_else(|| {
            anyhow!(
                "--since '{}' is not an RFC 3339 time (e.g. 2026-12-01T08:00:00Z)",
                sanitize::line(&t)
            )
        })?,
        None => start_of_today(),
    };
    let events = s.events_by(&user, since)?;
    if json {
        write_json(out, &Value::Array(events.iter().map(event_json).collect()))?;
        return Ok(());
    }
    for e in &events {
        writeln!(out, "#{:<6} {}", e.item_id, event_line(e))?;
    }
    Ok(())
}

/// Local midnight today, in Unix milliseconds.
fn start_of_today() -> i64 {
    use chrono::{Local, TimeZone};
    let today = Local::now().date_naive();
    today
        .and_hms_opt(0, 0, 0)
        .and_then(|t| Local.from_local_datetime(&t).earliest())
        .map_or(0, |t| t.timestamp_millis())
}

fn claim(
    s: &mut dyn Store,
    queue: Option<String>,
    id: Option<i64>,
    json: bool,
    out: &mut dyn Write,
) -> CliResult {
    let item = match id {
        Some(id) => s.take(id)?,
        None => s.take_next(&TakeNext {
            queue,
            skip: vec![],
        })?,
    };
    if json {
        write_json(out, &item_json(&item))?;
    } else {
        write_item(s, &item, out)?;
    }
    Ok(())
}

/// The token of the caller's current lock on the item, unless one was given.
/// "Completed #5", or "#5 already completed by you" for a retry whose first answer was
/// lost.
fn done_line(id: i64, done: &str, past: &str, applied: Applied) -> String {
    match applied {
        Applied::Now => format!("{done} #{id}"),
        Applied::Already => format!("#{id} already {past} by you"),
    }
}

/// The token a holder command applies to: `--token`, else the item's current one. The
/// store decides with it: the caller's own lock is written; anything else is explained
/// (who took it and when) or, for a retried complete, fail or release whose answer was
/// lost, acknowledged as already done.
fn token_for(s: &mut dyn Store, h: &HolderArgs) -> Result<i64, Failure> {
    match h.token {
        Some(t) => Ok(t),
        None => Ok(s.item(h.id)?.lock_token),
    }
}

fn queue_command(s: &mut dyn Store, q: QueueCommand, out: &mut dyn Write) -> CliResult {
    match q {
        QueueCommand::Set {
            name,
            lock_seconds,
            warn_seconds,
            max_per_user,
            paused,
            create,
        } => {
            let update = QueueUpdate {
                lock_seconds,
                warn_seconds,
                max_per_user: max_per_user.map(|n| if n == 0 { None } else { Some(n) }),
                paused,
            };
            if update.is_empty() && !create {
                return bail_usage(
                    "nothing to change: give --lock-seconds, --warn-seconds, --max-per-user or --paused",
                );
            }
            let q = s.set_queue(&name, &update, create)?;
            writeln!(out, "{}", queue_line(&q))?;
        }
        QueueCommand::List { json } => {
            let qs = s.queues()?;
            if json {
                write_json(out, &serde_json::to_value(&qs)?)?;
            } else {
                for q in &qs {
                    writeln!(out, "{}", queue_line(q))?;
                }
            }
        }
    }
    Ok(())
}

fn queue_line(q: &crate::domain::QueueSettings) -> String {
    format!(
        "{}: lock {}s, warn {}s, max per user {}, {}",
        sanitize::line(&q.name),
        q.lock_seconds,
        q.warn_seconds,
        q.max_per_user.map_or("none".into(), |n| n.to_string()),
        if q.paused { "paused" } else { "running" }
    )
}

fn stats(s: &mut dyn Store, json: bool, out: &mut dyn Write) -> CliResult {
    let st = s.stats()?;
    if json {
        write_json(out, &serde_json::to_value(&st)?)?;
        return Ok(());
    }
    writeln!(out, "items by state:")?;
    for c in &st.by_state {
        writeln!(out, "  {:<10} {}", c.state.as_str(), c.count)?;
    }
    writeln!(
        out,
        "locks: {} held, {} expired; {} overdue open items",
        st.locked, st.expired, st.overdue
    )?;
    writeln!(out, "by queue:")?;
    for q in &st.by_queue {
        writeln!(
            out,
            "  {:<16} open {} (locked {}), done {}, failed {}, cancelled {}{}",
            truncate(&sanitize::line(&q.queue), 16),
            q.open,
            q.locked,
            q.done,
            q.failed,
            q.cancelled,
            if q.paused { ", paused" } else { "" }
        )?;
    }
    let total: u64 = st.completed_per_hour.iter().sum();
    writeln!(
        out,
        "completed in the last 24h: {total} (per hour, oldest first: {})",
        st.completed_per_hour
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    )?;
    let buckets = |b: &[crate::store::Bucket]| {
        b.iter()
            .map(|b| format!("{} {}", b.label, b.count))
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(out, "open items by age: {}", buckets(&st.open_ages))?;
    writeln!(out, "locks by age: {}", buckets(&st.lock_ages))?;
    if !st.wip.is_empty() {
        writeln!(out, "work in progress:")?;
        for w in &st.wip {
            writeln!(
                out,
                "  {:<16} {}",
                truncate(&sanitize::line(&w.user), 16),
                w.held
            )?;
        }
    }
    if let Some(o) = &st.oldest_open {
        writeln!(
            out,
            "oldest open item: #{} {} (created {})",
            o.id,
            truncate(&sanitize::line(&o.title), 60),
            rfc3339(o.created_at)
        )?;
    }
    Ok(())
}

fn export(
    s: &mut dyn Store,
    state: Option<ItemState>,
    format: FormatArg,
    out: &mut dyn Write,
) -> CliResult {
    // Raw data into a file or pipe (for fidelity); sanitized onto a terminal.
    let to_terminal = std::io::stdout().is_terminal();
    let clean = |s: &str| -> String {
        if to_terminal {
            sanitize::line(s).into_owned()
        } else {
            s.to_string()
        }
    };
    let mut left_out: Vec<(i64, String)> = Vec::new();
    let mut written = 0u64;
    match format {
        FormatArg::Jsonl => {
            s.export(state, &mut |item| {
                if crate::cli_damage::left_out_unreadable(item, &mut left_out) {
                    return Ok(());
                }
                written += 1;
                writeln!(out, "{}", escape_json_output(&item_json(item).to_string()))
            })?;
        }
        FormatArg::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(Item::COLUMNS)?;
            s.export(state, &mut |item| {
                if crate::cli_damage::left_out_unreadable(item, &mut left_out) {
                    return Ok(());
                }
                written += 1;
                let t = |v: Option<i64>| v.map(rfc3339).unwrap_or_default();
                let o = |v: &Option<String>| v.as_deref().map(clean).unwrap_or_default();
                w.write_record([
                    item.id.to_string(),
                    clean(&item.queue),
                    o(&item.request_id),
                    clean(&item.title),
                    clean(&item.body),
                    clean(&item.params),
                    item.priority.to_string(),
                    t(item.due_at),
                    item.state.as_str().to_string(),
                    o(&item.lock_user),
                    t(item.lock_time),
                    item.lock_token.to_string(),
                    clean(&item.notes),
                    o(&item.result),
                    o(&item.error),
                    rfc3339(item.created_at),
                    clean(&item.created_by),
                    t(item.finished_at),
                    o(&item.finished_by),
                ])
                .map_err(std::io::Error::other)
            })?;
            w.flush()?;
        }
    }
    crate::cli_damage::unreadable_left_out(written, &left_out)
}

/// An item as JSON: schema field names, times as RFC 3339 UTC strings, params as JSON.
pub fn item_json(item: &Item) -> Value {
    let t = |v: Option<i64>| v.map_or(Value::Null, |t| Value::String(rfc3339(t)));
    let mut v = json!({
        "id": item.id,
        "queue": item.queue,
        "request_id": item.request_id,
        "title": item.title,
        "body": item.body,
        "params": serde_json::from_str::<Value>(&item.params).unwrap_or(Value::String(item.params.clone())),
        "priority": item.priority,
        "due_at": t(item.due_at),
        "state": item.state.as_str(),
        "lock_user": item.lock_user,
        "lock_time": t(item.lock_time),
        "lock_token": item.lock_token,
        "notes": item.notes,
        "result": item.result,
        "error": item.error,
        "created_at": rfc3339(item.created_at),
        "created_by": item.created_by,
        "finished_at": t(item.finished_at),
        "finished_by": item.finished_by,
    });
    if !item.unreadable.is_empty() {
        v["unreadable"] = item
            .unreadable
            .iter()
            .map(|u| json!({"column": u.column, "problem": u.problem}))
            .collect();
    }
    v
}

/// An event as JSON.
pub fn event_json(e: &Event) -> Value {
    json!({
        "id": e.id,
        "item_id": e.item_id,
        "at": rfc3339(e.at),
        "actor": e.actor,
        "os_user": e.os_user,
        "kind": e.kind.as_str(),
        "detail": e.detail,
    })
}

fn write_json(out: &mut dyn Write, v: &Value) -> std::io::Result<()> {
    writeln!(out, "{}", escape_json_output(&v.to_string()))
}

/// serde_json escapes C0 controls but leaves C1 controls, bidi overrides and zero-width
/// characters raw; escape those too so JSON output is safe on a terminal. They can only
/// occur inside strings, where `\uXXXX` means the same character.
pub fn escape_json_output(s: &str) -> std::borrow::Cow<'_, str> {
    let risky = |c: char| sanitize::line(c.encode_utf8(&mut [0; 4])).len() != c.len_utf8();
    if !s.chars().any(risky) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if risky(c) {
            let mut buf = [0u16; 2];
            for unit in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_output_escapes_terminal_controls() {
        let v = json!({"t": "a\u{1b}[2J\u{9b}b\u{202e}c"});
        let s = escape_json_output(&v.to_string()).into_owned();
        assert!(!s.contains('\u{1b}') && !s.contains('\u{9b}') && !s.contains('\u{202e}'));
        let back: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v, "escaping keeps the data");
    }

    #[test]
    fn parse_bool_accepts_common_words() {
        assert_eq!(parse_bool("yes"), Ok(true));
        assert_eq!(parse_bool("0"), Ok(false));
        assert!(parse_bool("maybe").is_err());
    }
}
