//! Argument definitions: every subcommand, flag and its help.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::domain::queue_fields::FieldType;
use crate::domain::texts::Purpose;
use crate::domain::{EventKind, ItemState, Role, TakeOrder};
use crate::store::StateFilter;

const AFTER_HELP: &str = "\
Database: --db, else CASELOAD_DB, else `db = \"...\"` in the user's ~/.config/caseload/config.toml,
else in /etc/caseload/config.toml, else caseload.db in the user's data directory (created on
first use). User: --user, else CASELOAD_USER, else the OS login name.
Config files: keys `db`, `notify` (bell, desktop, both or off; default bell) and `theme` (auto,
dark or light; default auto); see `man caseload`.
Times: text output shows local time (TZ honoured, e.g. TZ=Europe/Berlin); --json and export
print RFC 3339 UTC.

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
    /// Act as this user (default: CASELOAD_USER, else your OS login name); a name other
    /// than your login's must be bound to it (`user set NAME --login LOGIN`).
    #[arg(long, global = true, value_name = "NAME", help_heading = GLOBAL)]
    pub user: Option<String>,
    /// Open a database on a network filesystem (NFS, SMB, FUSE, 9p) although SQLite's
    /// locking is unreliable there (also CASELOAD_ALLOW_NETWORK_FS=1; default: refuse).
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub allow_network_fs: bool,
    /// Create the database file when it does not exist (default: only `init` and `demo`
    /// create one; anything else refuses a missing file, so a mistyped --db is an error).
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub create: bool,
    /// In the TUI: no bell or desktop notice when work arrives, for this run (the status
    /// line still says it; default: `notify` in the config file, else bell).
    #[arg(long)]
    pub no_notify: bool,
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
        #[arg(long, value_name = "ID", conflicts_with = "wait")]
        id: Option<i64>,
        /// Print the item as one JSON object, with its lock_token.
        #[arg(long)]
        json: bool,
        /// When nothing can be taken (empty, paused, your limit reached), wait until
        /// something can, then take it (default: exit 4 at once).
        #[arg(long)]
        wait: bool,
        /// With --wait: give up after this many seconds, exit 4 (default: wait forever).
        #[arg(long, value_name = "SECS", requires = "wait")]
        timeout: Option<u64>,
        /// Take an item waiting for review (oldest first) instead of open work: never one
        /// you completed or corrected a field of (--id on such an item: exit 5).
        #[arg(long)]
        review: bool,
    },
    /// Renew your lock on an item.
    Renew(HolderArgs),
    /// Release your lock, returning the item to the pool.
    Release {
        #[command(flatten)]
        holder: HolderArgs,
        #[command(flatten)]
        said: ReasonArgs,
    },
    /// Skip an item you hold: release it, recorded as skipped (the TUI's `s` then takes
    /// the next one).
    Skip {
        #[command(flatten)]
        holder: HolderArgs,
        #[command(flatten)]
        said: ReasonArgs,
    },
    /// Complete an item you hold.
    Complete {
        #[command(flatten)]
        holder: HolderArgs,
        /// What was done, kept as the item's result (default: none).
        #[arg(long)]
        result: Option<String>,
        /// The code of one of the queue's ready-made result texts (`text list`): kept in
        /// the event; without --result, its text is the result.
        #[arg(long, value_name = "CODE")]
        code: Option<String>,
        /// Then take the next item, in the same transaction, and print it as `claim`
        /// does (exit 4 after completing when nothing is left to take).
        #[arg(long)]
        next: bool,
        /// With --next: take from this queue only (default: every queue).
        #[arg(long, requires = "next")]
        queue: Option<String>,
        /// Supervisors: complete although fields of the record break their rules, for
        /// this reason (kept in the event with the fields broken; default: such a record
        /// is refused, naming each field).
        #[arg(long = "override", value_name = "REASON")]
        over: Option<String>,
    },
    /// Correct fields of an item you hold: each NAME=VALUE is checked against the queue's
    /// rules and stored in its type's canonical form, in one write under your lock with
    /// one field_changed event per field that changed (old → new). A value that breaks a
    /// rule refuses them all, naming the field and the rule.
    Set {
        #[command(flatten)]
        holder: HolderArgs,
        /// The fields and their values (an empty value clears an optional field).
        #[arg(required = true, value_name = "NAME=VALUE")]
        values: Vec<String>,
    },
    /// Items of the same queue that are possibly the same record (open and finished):
    /// equal duplicate keys first (`field set --dedupe-key`), then similar titles, each
    /// with why, its state and who finished it. Pairs marked not the same are left out.
    Similar {
        /// The item's id.
        id: i64,
        /// How many at most.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=100))]
        limit: u16,
        /// Also list the pairs already judged (merged or not the same).
        #[arg(long)]
        all: bool,
        /// Print one JSON object: the candidates (and with --all the judged pairs).
        #[arg(long)]
        json: bool,
    },
    /// Merge an open item into another as its duplicate: it is cancelled with
    /// duplicate_of, its lock released, an event on both items and a line in the other's
    /// thread. The holder of ID (fenced by the token) or a supervisor.
    Merge {
        /// The duplicate (cancelled by the merge).
        id: i64,
        /// The item it is the same as (kept).
        #[arg(long, value_name = "OTHER")]
        into: i64,
        /// Why (kept in both histories).
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
        /// The lock token (default: your current lock on ID).
        #[arg(long)]
        token: Option<i64>,
    },
    /// Remember that two items are not the same record: the pair is never offered as
    /// possibly the same again, in either order, for anybody.
    NotDuplicate {
        /// One item's id.
        id: i64,
        /// The other's.
        other: i64,
    },
    /// Tick a line of a checklist field of an item you hold (or mark it not done, with a
    /// reason): one write under your lock with its field_changed event.
    Tick {
        #[command(flatten)]
        holder: HolderArgs,
        /// The checklist field.
        field: String,
        /// The line (as the item lists it; case is ignored when nothing matches exactly).
        line: String,
        /// Not done, for this reason (Complete accepts a line given a reason).
        #[arg(long, value_name = "REASON", conflicts_with = "undo")]
        not_done: Option<String>,
        /// Put the line back to do.
        #[arg(long)]
        undo: bool,
    },
    /// Fail an item you hold, with a reason.
    Fail {
        #[command(flatten)]
        holder: HolderArgs,
        /// Why it failed (required unless --code gives a ready-made one; kept as the
        /// item's error and in its history).
        #[arg(long, required_unless_present = "code")]
        reason: Option<String>,
        /// The code of one of the queue's ready-made fail texts (`text list`): kept in the
        /// event, counted by `report --by reason`; without --reason, its text is the reason.
        #[arg(long, value_name = "CODE")]
        code: Option<String>,
    },
    /// Park an item you hold until a time (a call-back, waiting for information): the
    /// lock is released, nobody else may take it, and at that time it wakes for you.
    Park {
        #[command(flatten)]
        holder: HolderArgs,
        /// When it wakes: 14:00, 2h, tomorrow 09:00, a date, a local date and time, or
        /// RFC 3339 (in local time).
        #[arg(long, value_name = "WHEN")]
        until: String,
        /// Why (required; shown to others who try to take it and kept in the history).
        #[arg(long)]
        reason: String,
    },
    /// Accept an item you review (taken with `claim --review`): it is done.
    Accept {
        #[command(flatten)]
        holder: HolderArgs,
        /// A comment kept with the acceptance in the item's history.
        #[arg(long)]
        comment: Option<String>,
    },
    /// Reject an item you review: it goes back to whoever completed it, as an assignment
    /// (to the pool if they are no longer known), with your reason.
    Reject {
        #[command(flatten)]
        holder: HolderArgs,
        /// Why (required unless --code gives a ready-made one; the maker sees it).
        #[arg(long, required_unless_present = "code")]
        reason: Option<String>,
        /// The code of one of the queue's ready-made reject texts (`text list`): kept in
        /// the event, counted by `report --by reason`; without --reason, its text is the
        /// reason.
        #[arg(long, value_name = "CODE")]
        code: Option<String>,
    },
    /// End a park: its owner takes the item now; a supervisor returns it to the pool.
    Wake {
        /// The item's id.
        id: i64,
        /// Print the item's new state as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Undo your own last complete, fail, release, skip or park of an item (within the
    /// queue's undo window, 30 s by default, if nobody touched it since): it is as it
    /// was, locked to you under a new token.
    Undo {
        /// The item's id.
        id: i64,
        /// Print the item's new state as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Release expired locks, and return parked items past their grace to the pool;
    /// prints how many.
    Reap,
    /// Supervisor: return a held item (or, without ID, every lock matching the filters) to
    /// the pool.
    Unlock {
        /// The item's id; without it, every lock that --expired, --holder, --queue and --all
        /// match.
        #[arg(required_unless_present_any = ["expired", "holder", "queue", "all"])]
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
        /// Without ID: only locks in this queue (with --expired, --holder or --all: a whole
        /// queue's live locks are not unlocked by accident).
        #[arg(long, conflicts_with = "id")]
        queue: Option<String>,
        /// Without ID: every lock the other flags match, live ones included (alone: every
        /// lock there is).
        #[arg(long, conflicts_with = "id")]
        all: bool,
    },
    /// What a user did (default: you, today): item events, and role, binding and queue
    /// changes made by or about them.
    History {
        /// Whose actions (default: you), read as yourself. A name nobody is known by
        /// (see `user list`) is refused. (The global --user still means whom you act as.)
        #[arg(long, value_name = "USER")]
        of: Option<String>,
        /// Start time: today, yesterday, a span back from now (90m, 7d), a date
        /// (2026-11-01, local midnight), a local date and time (2026-11-01 08:00) or RFC
        /// 3339 (default: midnight today, local time).
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
    /// Supervisor: assign an item to a user: in their Mine, not takeable by others, its lock
    /// clock starting when they open it. `unlock` undoes it.
    Assign {
        /// The item's id.
        id: i64,
        /// The user who gets the item (a known user: see `caseload user list`).
        #[arg(long, value_name = "USER")]
        to: String,
        /// Why (required; shown to the assignee and kept in the history).
        #[arg(long)]
        reason: String,
    },
    /// Supervisor: reopen a done, failed or cancelled item, with a reason.
    Reopen {
        /// The item's id.
        id: i64,
        /// Why (required; kept in the history with the former result).
        #[arg(long)]
        reason: String,
    },
    /// Supervisor: change an open item's priority, due time or queue.
    Edit {
        /// The item's id.
        id: i64,
        /// The new priority (higher is taken first).
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        priority: Option<i64>,
        /// The new due time, as `add --due` takes it (2h, tomorrow, 2026-12-01 17:00, RFC
        /// 3339), or `none` to clear it.
        #[arg(long, value_name = "TIME")]
        due: Option<String>,
        /// Move it to this queue (an existing one).
        #[arg(long, value_name = "Q")]
        queue: Option<String>,
    },
    /// Add a comment to an item's thread (no lock needed; comments are never edited).
    Comment {
        /// The item's id.
        id: i64,
        /// The comment's text; `-` reads it from standard input.
        #[arg(conflicts_with = "file", required_unless_present = "file")]
        text: Option<String>,
        /// Read the comment from this file.
        #[arg(long, value_name = "FILE")]
        file: Option<PathBuf>,
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
    /// Typed fields of a queue (verification work): define, list, delete.
    #[command(subcommand)]
    Field(FieldCommand),
    /// Ready-made texts of a queue (results, reasons, comments): add, list, delete.
    #[command(subcommand)]
    Text(TextCommand),
    /// Counts, throughput, lock ages and work in progress.
    Stats {
        /// Print one JSON object with the same figures.
        #[arg(long)]
        json: bool,
    },
    /// The supervisors' figures over a period, one row per person or per queue: items
    /// completed, failed, skipped, released, locks lost, median and 90th-percentile handle
    /// time, completions per hour held; per queue also wait, cycle and due-date health.
    Report {
        /// One row per person, per queue, per reason given, per field (how often
        /// completed records were corrected in it), or per source (which feed is dirty).
        #[arg(long, value_enum, default_value = "person")]
        by: ReportBy,
        /// Start of the period: today, yesterday, a span back from now (90m, 12h, 7d,
        /// 2w), a date (2026-11-01, local midnight), a local date and time (2026-11-01
        /// 08:00) or RFC 3339 [default: today].
        #[arg(long, value_name = "TIME")]
        since: Option<String>,
        /// End of the period (not included), in the same forms [default: now].
        #[arg(long, value_name = "TIME")]
        until: Option<String>,
        /// Only this queue.
        #[arg(long, value_name = "QUEUE")]
        queue: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value = "table")]
        format: ReportFormat,
    },
    /// The audit trail as JSON Lines, oldest first, resumable by id with no event skipped
    /// or repeated; --follow keeps going, --exec runs a hook per event.
    Events(crate::cli::commands::events::EventsArgs),
    /// A long-running worker: takes items one after another (waiting when there are
    /// none) and runs CMD for each on one connection per slot; CMD's exit 0 completes
    /// the item with its output as the result, any other fails it with its last line on
    /// standard error. SIGINT or SIGTERM stops CMD and releases the lock.
    Work(crate::cli::commands::work::WorkArgs),
    /// Each queue's figures for a monitoring system (OpenMetrics text by default): open
    /// items, locks, due dates, the oldest open item's age, completion and failure totals.
    Metrics(crate::cli::commands::metrics::MetricsArgs),
    /// Write items (or, with --events, their audit trail) as CSV or JSON Lines to standard
    /// output; `caseload import` reads what it writes.
    Export(ExportArgs),
    /// Check the file's integrity and the schema's invariants, and whether the history was
    /// cut. Shows its progress on a terminal; Ctrl-C stops it at once, changing nothing
    /// (exit 130).
    Check {
        /// First rebuild the figures' tables (holds and the day summary) from the history
        /// and the duplicate keys from the items' fields, the repair for what check finds
        /// wrong in them (supervisors).
        #[arg(long)]
        repair_figures: bool,
        /// Only the checks that stay quick at any size: SQLite's quick_check (every page,
        /// but no index compared with its table), the items' rules, the kept counts, gaps
        /// in the ids; not the history against the figures.
        #[arg(long)]
        quick: bool,
    },
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
        shell: crate::cli::help::Shell,
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
    /// Queue to add to; it must exist (default: `default`).
    #[arg(long)]
    pub queue: Option<String>,
    /// Create the queue when it does not exist yet (default: an unknown queue is refused,
    /// naming the closest known one).
    #[arg(long)]
    pub create_queue: bool,
    /// Body text, shown in the item's detail (default: empty; at most 1 MiB).
    #[arg(
        long,
        default_value = "",
        hide_default_value = true,
        conflicts_with = "body_file"
    )]
    pub body: String,
    /// Read the body from this file, or from standard input when FILE is `-` (UTF-8, at
    /// most 1 MiB; for bodies too long for the command line).
    #[arg(long, value_name = "FILE")]
    pub body_file: Option<PathBuf>,
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
    /// Due time: a span ahead of now (2h, 3d, 1w), tomorrow, a date (2026-12-01, local
    /// midnight), a local date and time (2026-12-01 17:00), a time today (17:00) or RFC
    /// 3339 (default: none).
    #[arg(long, value_name = "TIME")]
    pub due: Option<String>,
    /// The producer's idempotency key: adding a known key again with the same title and
    /// body prints the first item's id and adds nothing; with another title or body it is
    /// refused (exit 3), naming that item (default: none).
    #[arg(long)]
    pub request_id: Option<String>,
    /// Where the record came from, e.g. `crm` or `web-form` (searched, shown, exported;
    /// default: none).
    #[arg(long, value_name = "NAME")]
    pub source: Option<String>,
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
    /// Create the queues rows name that do not exist yet (default: the import is refused,
    /// naming them).
    #[arg(long)]
    pub create_queue: bool,
    /// Every row keeps the `id` the export gave it (supervisor only). Ids must be free
    /// and increase down the file; a taken id refuses the whole import, naming its line
    /// (default: rows get new ids and the file's ids are ignored).
    #[arg(long)]
    pub keep_ids: bool,
    /// Define a `text` field of the queue for each column (or JSON key) that names
    /// neither a column of the item nor one of the queue's fields, before importing
    /// (supervisor only; audited; tighten the types afterwards with `caseload field set`).
    /// Without it such a column refuses the import, listing the queue's fields. A column
    /// named like a field always goes into params under that name.
    #[arg(long)]
    pub define_fields: bool,
    /// Leave out rows whose duplicate key (a field marked `--dedupe-key`) equals one of an
    /// open item of their queue: they are counted and named (line and item), not imported.
    #[arg(long, conflicts_with = "keep_ids")]
    pub skip_duplicates: bool,
    /// Leave the new rows out of the search index (default: indexed after they are
    /// written, in short transactions of their own; on PostgreSQL while they are written,
    /// on a second connection). Searches find them all the same, by scanning them, until
    /// an idle TUI (or, on SQLite, the next import) indexes them.
    #[arg(long)]
    pub no_index: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Only items in this state: open, done, failed or cancelled (default: every item).
    #[arg(long, value_parser = parse_item_state)]
    pub state: Option<ItemState>,
    /// Only items in this queue (default: every queue).
    #[arg(long)]
    pub queue: Option<String>,
    /// Only items created at or after this time (with --events: only events written
    /// since then; default: all): today, yesterday, a span back from now (90m, 7d), a
    /// date, a local date and time (2026-11-01 08:00) or RFC 3339.
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "csv")]
    pub format: FormatArg,
    /// Write the audit trail (every event of the selected items, oldest first) instead of
    /// the items.
    #[arg(long, conflicts_with = "comments")]
    pub events: bool,
    /// With --events: only events of this kind (created, locked, completed, noted,
    /// field_changed …). `--kind field_changed` writes the corrections file: item, field,
    /// from, to, who, when (and a checklist's line, what was typed when normalised).
    #[arg(long, requires = "events", value_parser = parse_event_kind, value_name = "KIND")]
    pub kind: Option<EventKind>,
    /// Write the comment threads of the selected items (item, author, login, time, text;
    /// oldest first; --since: comments written since then) instead of the items.
    #[arg(long)]
    pub comments: bool,
    /// Write the judged pairs instead of the items (issue 27): low id, high id, same or
    /// not_same, who, when — what dedupe tools train on. A merge is `same`.
    #[arg(long, conflicts_with_all = ["events", "comments"])]
    pub pairs: bool,
    /// CSV: write cells that begin with =, +, -, @, tab or CR as they are. By default they
    /// get a leading ' so that a spreadsheet shows them as text instead of running them
    /// as formulas (`caseload import` removes it again).
    #[arg(long)]
    pub raw: bool,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Which items: open (in take order), locked, expired, done, failed, cancelled, parked
    /// (earliest wake first), review (waiting for review, oldest first) or all.
    #[arg(long, value_parser = parse_state_filter, default_value = "open")]
    pub state: StateFilter,
    /// Only items in this queue (default: every queue).
    #[arg(long)]
    pub queue: Option<String>,
    /// Only items you hold.
    #[arg(long)]
    pub mine: bool,
    /// Print at most this many items; 0 prints every item. When more match, stderr says
    /// how many ("100 of 3,412 shown"; a search counts to 1,000: "100 of more than 1,000
    /// shown").
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub limit: usize,
    /// Only items whose title, body, params, notes, result, error or source contain every
    /// word of TEXT, in any order, as part of a word, ignoring case and accents.
    #[arg(long, value_name = "TEXT", value_parser = parse_search)]
    pub search: Option<String>,
    /// Print one JSON array of items instead of text lines.
    #[arg(long)]
    pub json: bool,
}

fn parse_search(s: &str) -> Result<String, String> {
    match crate::domain::search::Search::parse(s) {
        Some(_) => Ok(s.to_string()),
        None => Err("give at least one word to search for".into()),
    }
}

#[derive(Debug, Args)]
pub struct HolderArgs {
    /// The item's id.
    pub id: i64,
    /// The lock token (default: your current lock on the item).
    #[arg(long)]
    pub token: Option<i64>,
    /// Print the item's new state as one JSON object, as `show --json` names its fields
    /// (complete --next: the next item taken, with its lock_token).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum QueueCommand {
    /// Change a queue's settings (shared by every user).
    Set {
        /// The queue's name.
        name: String,
        /// Seconds after which a lock expires, 1 to 604800 (a new queue has 1800). New
        /// locks and renewals get it; current locks keep the age they were given (the
        /// command says how many).
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
        /// Take order: priority (priority, then age; a new queue's) or due (overdue and
        /// soonest due first, then priority, then age; items without a due time last).
        #[arg(long, value_parser = parse_order, value_name = "ORDER")]
        order: Option<TakeOrder>,
        /// Seconds a woken park waits for its owner before it returns to the pool, 60 to
        /// 604800 (a new queue has 3600).
        #[arg(long, value_name = "SECONDS")]
        park_grace_seconds: Option<i64>,
        /// Seconds after a complete, fail, release, skip or park in which its maker may
        /// undo it, 0 (no undo) to 3600 (a new queue has 30).
        #[arg(long, value_name = "SECONDS")]
        undo_seconds: Option<i64>,
        /// Which completions wait for a second person before they are done: none (a new
        /// queue's), all, or a share such as 20% (chosen from the item's id: asking again
        /// chooses the same items).
        #[arg(long, value_name = "none|all|PCT%", allow_hyphen_values = true)]
        review: Option<String>,
        /// Each person's first N completions in the queue always wait for review (0: none).
        #[arg(long, value_name = "N", allow_hyphen_values = true)]
        review_new: Option<i64>,
        /// Create the queue if it does not exist yet.
        #[arg(long)]
        create: bool,
        #[command(flatten)]
        sla: SlaArgs,
    },
    /// Supervisor: rename a queue; its items (and their locks) move with it.
    Rename {
        /// The queue's current name.
        name: String,
        /// The new name (must not exist yet).
        to: String,
    },
    /// Supervisor: delete a queue that holds no items at all.
    Delete {
        /// The queue's name.
        name: String,
    },
    /// List queues and their settings.
    List {
        /// Print one JSON array of queues.
        #[arg(long)]
        json: bool,
    },
}

/// A queue's SLA on business hours (`queue set`).
#[derive(Debug, Args, Default)]
pub struct SlaArgs {
    /// Working time a new item gets (4h, 90m, 1h30m; none removes the SLA): an item
    /// added without --due is due when that much of the queue's working time has passed.
    #[arg(long, value_name = "DURATION")]
    pub sla: Option<String>,
    /// The SLA's working hours: 'Mon-Fri 08:00-17:00', several parts joined by commas
    /// ('Mon-Fri 08:00-17:00, Sat 09:00-12:00'), or always (a new SLA: Mon-Fri
    /// 08:00-17:00).
    #[arg(long, value_name = "HOURS")]
    pub hours: Option<String>,
    /// The zone the hours are in, an IANA name (Europe/Berlin; a new SLA: TZ, else the
    /// host's zone, else UTC).
    #[arg(long, value_name = "ZONE")]
    pub tz: Option<String>,
    /// A file of holidays, one date (YYYY-MM-DD) per line, # comments; stored in the
    /// database (an empty file clears them).
    #[arg(long, value_name = "FILE")]
    pub holidays: Option<std::path::PathBuf>,
}

impl SlaArgs {
    /// True when no SLA flag was given.
    pub fn is_empty(&self) -> bool {
        self.sla.is_none() && self.hours.is_none() && self.tz.is_none() && self.holidays.is_none()
    }
}

/// An optional reason, typed or ready-made (release, skip).
#[derive(Debug, Args)]
pub struct ReasonArgs {
    /// Why (optional; kept in the event, counted by `report --by reason`).
    #[arg(long)]
    pub reason: Option<String>,
    /// The code of one of the queue's ready-made texts for this (`text list`): kept in
    /// the event; without --reason, its text is the reason.
    #[arg(long, value_name = "CODE")]
    pub code: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum TextCommand {
    /// Supervisor: add a ready-made text to a queue (audited). The TUI offers it with Tab
    /// in the dialog it is for; the event keeps its code. A code the queue has gets the
    /// new text.
    Add {
        /// The queue (an existing one).
        queue: String,
        /// The dialog it is for: result, fail, skip, release, park, comment or reject (a
        /// reviewer's reason for rejecting).
        #[arg(long = "for", value_name = "KIND", value_parser = parse_purpose)]
        purpose: Purpose,
        /// The text (one line, at most 200 characters).
        text: String,
        /// Its code, unique in the queue: 1 to 32 of a-z, 0-9, - and _ (default: made from
        /// the text's first words).
        #[arg(long, value_name = "CODE")]
        code: Option<String>,
    },
    /// List a queue's ready-made texts, by kind and code.
    List {
        /// The queue.
        queue: String,
        /// Print one JSON array of texts (queue, for, code, text).
        #[arg(long)]
        json: bool,
    },
    /// Supervisor: delete a ready-made text of a queue, by its code or its text (audited;
    /// events keep the code they were given).
    Delete {
        /// The queue.
        queue: String,
        /// The text's code, or the text itself.
        #[arg(value_name = "CODE|TEXT")]
        key: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum FieldCommand {
    /// Supervisor: define a field of a queue, or change or move one (audited). A field's
    /// value lives in each item's params under its name; the holder corrects it with
    /// `caseload set` or in the detail pane's form, and Complete checks every rule.
    Set(FieldSetArgs),
    /// List a queue's fields in their order on screen, with their rules.
    List {
        /// The queue.
        queue: String,
        /// Print one JSON array of fields (name, type, rules, position).
        #[arg(long)]
        json: bool,
    },
    /// Supervisor: delete a field of a queue (audited; items keep their values in params).
    Delete {
        /// The queue.
        queue: String,
        /// The field's name.
        name: String,
    },
}

#[derive(Debug, Args)]
pub struct FieldSetArgs {
    /// The queue (an existing one).
    pub queue: String,
    /// The field's name: the key in params, the CSV column, the search word (`vat:DE12`);
    /// a lower-case letter, then lower-case letters, digits or _.
    pub name: String,
    /// The type (required for a new field): text, integer, decimal, date, email, phone,
    /// choice, bool, iban, url or checklist.
    #[arg(long = "type", value_name = "TYPE", value_parser = parse_field_type)]
    pub kind: Option<FieldType>,
    /// An empty value refuses Complete (`--required false` makes it optional again).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true",
          value_parser = parse_bool)]
    pub required: Option<bool>,
    /// A regular expression the value must match, e.g. '^[A-Z]{2}[0-9A-Z]{8,12}$' (empty:
    /// none).
    #[arg(long, value_name = "REGEX")]
    pub pattern: Option<String>,
    /// The least value: a number, a date (YYYY-MM-DD), or for text-like types the fewest
    /// characters (empty: none).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub min: Option<String>,
    /// The most: a number, a date, or the most characters (empty: none).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub max: Option<String>,
    /// A choice field's choices, or a checklist's fixed lines, comma-separated.
    #[arg(long, value_name = "A,B,C")]
    pub choices: Option<String>,
    /// What the TUI's form calls it (default: its name; empty: back to the name).
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// A line of help shown beside it in the form (empty: none). (Not `--help`, which
    /// shows this text.)
    #[arg(long, value_name = "TEXT")]
    pub help_text: Option<String>,
    /// A phone field's country (ISO code, e.g. DE): numbers without + are read there, and
    /// every number is stored in E.164 (empty: none).
    #[arg(long, value_name = "CC")]
    pub country: Option<String>,
    /// A duplicate key: items of the queue whose values of it are equal (case, accents,
    /// spaces and punctuation aside; in the type's canonical form) are possibly the same
    /// record (`caseload similar`).
    #[arg(long, conflicts_with_all = ["dedupe_text", "no_dedupe"])]
    pub dedupe_key: bool,
    /// Compared by text similarity for duplicates, as the title is (a name, an address).
    #[arg(long, conflicts_with = "no_dedupe")]
    pub dedupe_text: bool,
    /// No part in finding duplicates any more.
    #[arg(long)]
    pub no_dedupe: bool,
    /// Put it after this field on screen ("" puts it first; default: a new field goes
    /// last, an existing one stays where it is).
    #[arg(long, value_name = "NAME")]
    pub after: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// List the known users: role, login binding, queues and when last seen (people who
    /// left only with --all).
    List {
        /// Print one JSON array.
        #[arg(long)]
        json: bool,
        /// Also list the people who left.
        #[arg(long)]
        all: bool,
    },
    /// Set a user's role, which login may use the name, which queues they may take from
    /// and review in, or mark them as leaving (supervisors; audited).
    #[command(group(clap::ArgGroup::new("change").required(true).multiple(true)
        .args(["role", "login", "no_login", "queues", "reviews", "leaving", "back"])))]
    Set {
        /// The user's name (as given by --user, CASELOAD_USER or the OS login).
        name: String,
        /// staff (the default for unknown users), supervisor, or lead: a supervisor for
        /// the queues they may take from only (give them --queues).
        #[arg(long, value_parser = parse_role)]
        role: Option<Role>,
        /// The queues they may take from (a lead: the queues they lead): a,b or all
        /// [new users: all]. Take-next offers only these; others are refused (exit 5).
        #[arg(long, value_name = "a,b|all")]
        queues: Option<String>,
        /// The queues they may review in: a,b, all or none [new users: all].
        #[arg(long, value_name = "a,b|all|none")]
        reviews: Option<String>,
        /// Mark them as leaving (needs --reason): their locks, assignments and parked
        /// items go back to the pool, their login binding is removed, they take no more
        /// work and are hidden from `user list`.
        #[arg(long, requires = "reason", conflicts_with = "back")]
        leaving: bool,
        /// Why they are leaving (kept in the audit and on each item's event).
        #[arg(long, value_name = "TEXT", requires = "leaving")]
        reason: Option<String>,
        /// Undo the leaving mark (the login binding is not restored: use --login).
        #[arg(long)]
        back: bool,
        /// Let this login use the name: an OS login on SQLite, a database role on
        /// PostgreSQL (e.g. a service account acting as a bot's name). Without a binding
        /// only the login of the same name may use it.
        #[arg(long, value_name = "LOGIN", conflicts_with = "no_login")]
        login: Option<String>,
        /// Remove the name's login binding.
        #[arg(long)]
        no_login: bool,
    },
}

/// The rows of `caseload report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportBy {
    /// One row per person who held an item in the period.
    Person,
    /// One row per queue, with its due-date health.
    Queue,
    /// The reasons given for fails, skips and releases, counted by the ready-made text's
    /// code (free texts as "other"), per queue and person.
    Reason,
    /// Per queue and field, of the records completed in the period: how many had it, how
    /// many were corrected, the share, and the kinds of correction (empty → value,
    /// value → value, value → empty).
    Field,
    /// Per source (where records came from): records completed, how many needed a
    /// correction, the share, corrections in all and the field corrected most.
    Source,
}

/// The output of `caseload report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// Aligned columns for a terminal or a mail.
    Table,
    /// Comma-separated values with a header row (times in seconds).
    Csv,
    /// One JSON object (the period, and the rows with times in milliseconds).
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Comma-separated values with a header row.
    Csv,
    /// One JSON object per line.
    Jsonl,
}

fn parse_state_filter(s: &str) -> Result<StateFilter, String> {
    StateFilter::parse(s).ok_or_else(|| {
        "expected open, locked, expired, done, failed, cancelled, parked, review or all".to_string()
    })
}

fn parse_event_kind(s: &str) -> Result<EventKind, String> {
    EventKind::parse(s).ok_or_else(|| format!("expected one of {}", EventKind::names()))
}

fn parse_item_state(s: &str) -> Result<ItemState, String> {
    ItemState::parse(s).ok_or_else(|| "expected open, done, failed or cancelled".to_string())
}

fn parse_purpose(s: &str) -> Result<Purpose, String> {
    Purpose::parse(s)
}

fn parse_field_type(s: &str) -> Result<FieldType, String> {
    FieldType::parse(&s.to_ascii_lowercase())
        .ok_or_else(|| format!("expected one of {}", FieldType::names()))
}

fn parse_role(s: &str) -> Result<Role, String> {
    Role::parse(s).ok_or_else(|| "expected staff, supervisor or lead".to_string())
}

fn parse_order(s: &str) -> Result<TakeOrder, String> {
    TakeOrder::parse(&s.to_ascii_lowercase()).ok_or_else(|| "use priority or due".to_string())
}

fn parse_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Ok(true),
        "false" | "no" | "off" | "0" => Ok(false),
        _ => Err("expected true or false".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_bool_accepts_common_words() {
        assert_eq!(parse_bool("yes"), Ok(true));
        assert_eq!(parse_bool("0"), Ok(false));
        assert!(parse_bool("maybe").is_err());
    }
}
