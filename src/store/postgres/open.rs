//! Opening a PostgreSQL connection: options, settings (lock, statement and
//! idle-in-transaction timeouts, UTC), the connection with its statements, and the mapping
//! of the server's errors to the store's, one line each.
//!
//! Two ways to reach the server ([`Pooling`]). Direct: the settings are the session's
//! (set once at connect, the URL's `options` sent at startup) and each statement is
//! prepared once per connection. Through a pooler in transaction mode (PgBouncer
//! `pool_mode = transaction`), a connection is the server's only for one transaction at a
//! time, so nothing may outlive one: every statement runs inside a transaction whose
//! first round trip sets its settings (`set_config(…, true)`, the URL's `options`
//! included, which the pooler would refuse at startup), and statements are unnamed
//! (`query_typed`: parse, bind and execute in one round trip, nothing left on the server).

use std::collections::HashMap;
use std::time::Duration;

use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls, Row, SimpleQueryMessage, Statement};

pub use super::pooling::Pooling;
use super::pooling::typed;
use super::txn::{self, Kind};
use crate::domain::Millis;
use crate::store::error::{Result, StoreError};
use crate::store::location::redact_url;

/// How to open a PostgreSQL store.
#[derive(Debug, Clone)]
pub struct PgOptions {
    /// Tests only: added to the server's clock, so expiry is tested without sleeping.
    pub clock_offset_ms: i64,
    /// `lock_timeout`: the longest a statement waits for a row another user is writing.
    pub lock_timeout: Duration,
    /// `statement_timeout`.
    pub statement_timeout: Duration,
    /// `idle_in_transaction_session_timeout`: a client that stops mid-transaction loses it.
    pub idle_in_transaction_timeout: Duration,
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// Refuse to create caseload's tables where the search path finds none: only `init`,
    /// `demo`, `migrate-to` and `--create` make them, so a URL that lacks the team's
    /// schema is an error, not a private empty caseload.
    pub must_exist: bool,
    /// Direct, or through a pooler in transaction mode.
    pub pool: Pooling,
    /// For a client that runs until stopped (the TUI, `claim --wait`): a server that
    /// refuses the connection (full, starting up, unreachable) is tried again after a
    /// growing pause with jitter (at most [`super::backoff::MAX`]), and this is told each
    /// wait in one line. `None`: fail at once.
    pub waiting: Option<fn(&str)>,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            clock_offset_ms: 0,
            lock_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(30),
            idle_in_transaction_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            must_exist: false,
            pool: Pooling::Direct,
            waiting: None,
        }
    }
}

/// One connection and its statements.
pub(super) struct Conn {
    pub client: Client,
    /// Statements prepared on this connection (direct connections only).
    pub cache: HashMap<String, Statement>,
    /// `SELECT <server now in ms, plus the test offset>`.
    pub now_sql: String,
    /// True while a transaction runs on it (`txn`): a snapshot asked for inside joins it,
    /// and a lost connection is not silently replaced by a new one outside it.
    pub in_txn: bool,
    /// Through a pooler in transaction mode: the settings every transaction starts with
    /// (`SELECT set_config(…, true), …`). `None` on a direct connection.
    pub pooled: Option<String>,
    /// Sent with a write's COMMIT, in the same round trip, to run after it (the change
    /// counter's bump); empty until the schema is known.
    pub after_commit: String,
    /// Whether the schema keeps the searched text folded for the trigram index
    /// (`search::indexed`, asked at the first search).
    pub search_indexed: Option<bool>,
    /// How many the last searched list matched, when its first window held them all.
    pub search_total: Option<super::search::KnownTotal>,
}

impl Conn {
    pub(super) fn new(client: Client, opts: &PgOptions, pooled: Option<String>) -> Conn {
        Conn {
            client,
            cache: HashMap::new(),
            now_sql: super::sql::now(opts.clock_offset_ms),
            in_txn: false,
            pooled,
            after_commit: String::new(),
            search_indexed: None,
            search_total: None,
        }
    }

    pub(super) fn prep(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.cache.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql)?;
        self.cache.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    /// Runs one statement: on a direct connection prepared once (`direct`), through a
    /// pooler unnamed (`pooled`) and inside a transaction (its own when none is open).
    fn statement<T>(
        &mut self,
        direct: impl FnOnce(&mut Client, &Statement) -> Result<T, postgres::Error>,
        pooled: impl FnOnce(&mut Client) -> Result<T, postgres::Error>,
        sql: &str,
    ) -> TxResult<T> {
        if self.pooled.is_none() {
            let s = self.prep(sql)?;
            return Ok(direct(&mut self.client, &s)?);
        }
        self.unnamed(pooled)
    }

    /// Runs an unnamed statement inside a transaction: the one open, else its own.
    fn unnamed<T>(
        &mut self,
        f: impl FnOnce(&mut Client) -> Result<T, postgres::Error>,
    ) -> TxResult<T> {
        if self.in_txn {
            return Ok(f(&mut self.client)?);
        }
        txn::run(self, Kind::Read, |c, _| Ok(f(&mut c.client)?)).map_err(txn::Failed::into_tx)
    }

    pub(super) fn query(&mut self, sql: &str, p: &[&(dyn ToSql + Sync)]) -> TxResult<Vec<Row>> {
        self.statement(|c, s| c.query(s, p), |c| c.query_typed(sql, &typed(p)), sql)
    }

    /// [`Conn::query`] as an unnamed statement on a direct connection too: planned for
    /// its parameters each time (a search's plan depends on its words) and not kept.
    pub(super) fn query_unnamed(
        &mut self,
        sql: &str,
        p: &[&(dyn ToSql + Sync)],
    ) -> TxResult<Vec<Row>> {
        if self.pooled.is_none() {
            return Ok(self.client.query_typed(sql, &typed(p))?);
        }
        self.unnamed(|c| c.query_typed(sql, &typed(p)))
    }

    pub(super) fn query_opt(
        &mut self,
        sql: &str,
        p: &[&(dyn ToSql + Sync)],
    ) -> TxResult<Option<Row>> {
        self.statement(
            |c, s| c.query_opt(s, p),
            |c| c.query_typed_opt(sql, &typed(p)),
            sql,
        )
    }

    pub(super) fn query_one(&mut self, sql: &str, p: &[&(dyn ToSql + Sync)]) -> TxResult<Row> {
        self.statement(
            |c, s| c.query_one(s, p),
            |c| c.query_typed_one(sql, &typed(p)),
            sql,
        )
    }

    pub(super) fn execute(&mut self, sql: &str, p: &[&(dyn ToSql + Sync)]) -> TxResult<u64> {
        self.statement(
            |c, s| c.execute(s, p),
            |c| c.execute_typed(sql, &typed(p)),
            sql,
        )
    }

    /// [`Conn::query_one`] of a statement that names the schema of all it uses: through a
    /// pooler it needs no transaction for the settings, so it is one round trip.
    pub(super) fn query_one_qualified(&mut self, sql: &str) -> TxResult<Row> {
        match self.pooled {
            Some(_) => Ok(self.client.query_typed_one(sql, &[])?),
            None => self.query_one(sql, &[]),
        }
    }

    /// [`Conn::execute`] with the parameters' types given (a statement whose parameters
    /// the server cannot all infer).
    pub(super) fn execute_as(
        &mut self,
        sql: &str,
        types: &[Type],
        p: &[&(dyn ToSql + Sync)],
    ) -> TxResult<u64> {
        if self.pooled.is_none() {
            let s = match self.cache.get(sql) {
                Some(s) => s.clone(),
                None => {
                    let s = self.client.prepare_typed(sql, types)?;
                    self.cache.insert(sql.to_string(), s.clone());
                    s
                }
            };
            return Ok(self.client.execute(&s, p)?);
        }
        let params: Vec<_> = p.iter().copied().zip(types.iter().cloned()).collect();
        self.unnamed(|c| c.execute_typed(sql, &params))
    }

    /// The server's now, in Unix ms (plus the test offset).
    pub(super) fn now(&mut self) -> TxResult<Millis> {
        let sql = self.now_sql.clone();
        Ok(self.query_one(&sql, &[])?.get(0))
    }
}

/// What a step inside a transaction can fail with: a refusal of the store, or a database
/// error that the transaction loop may retry (deadlock) or map.
pub(super) enum TxError {
    Store(StoreError),
    Pg(postgres::Error),
}

impl From<StoreError> for TxError {
    fn from(e: StoreError) -> Self {
        TxError::Store(e)
    }
}

impl From<postgres::Error> for TxError {
    fn from(e: postgres::Error) -> Self {
        TxError::Pg(e)
    }
}

impl TxError {
    pub(super) fn into_store(self) -> StoreError {
        match self {
            TxError::Store(e) => e,
            TxError::Pg(e) => map_err(&e),
        }
    }
}

pub(super) type TxResult<T> = std::result::Result<T, TxError>;

fn sqlstate(e: &postgres::Error) -> Option<&str> {
    e.as_db_error().map(|d| d.code().code())
}

/// True when the connection itself failed (the server went away, the network broke).
pub(crate) fn is_connection_error(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match sqlstate(e) {
        Some(code) => code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03"),
        None => std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>()),
    }
}

pub(super) fn is_retryable(e: &postgres::Error) -> bool {
    matches!(sqlstate(e), Some("40P01" | "40001"))
}

/// What to do about a server that takes no writes: a standby in recovery (the URL or its
/// DNS name still points there after a failover), or a session read-only by default.
pub(crate) const READ_ONLY_FIX: &str = "this server is a read-only standby (or read-only by \
     default); point caseload at the primary or use target_session_attrs=read-write";

/// Maps PostgreSQL's errors to the store's, one line each.
pub fn map_err(e: &postgres::Error) -> StoreError {
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        let msg = db.message();
        return match code {
            "40P01" | "40001" => StoreError::Busy(format!("{msg} (retried too long)")),
            "55P03" => StoreError::Busy(format!(
                "{msg} (another user held the row longer than lock_timeout)"
            )),
            "57014" => StoreError::Busy(format!("{msg} (the statement took too long)")),
            "25P03" => StoreError::Connection(format!(
                "the server closed the connection: {msg} (the transaction was idle too long)"
            )),
            "28P01" | "28000" => StoreError::Connection(format!("authentication failed: {msg}")),
            "3D000" => StoreError::Connection(msg.to_string()),
            "42501" => StoreError::Database(format!(
                "{msg} (the database user needs the rights the README's PostgreSQL section \
                 lists; `caseload doctor` checks them)"
            )),
            "53100" => StoreError::Database(format!("the server's disk is full: {msg}")),
            "25006" => StoreError::ReadOnly(format!("{READ_ONLY_FIX} ({msg})")),
            c if c.starts_with("23") => StoreError::Invalid(format!("refused: {msg}")),
            c if c.starts_with("08") || matches!(c, "57P01" | "57P02" | "57P03") => {
                StoreError::Connection(format!("connection to the server lost: {msg}"))
            }
            _ => StoreError::Database(msg.to_string()),
        };
    }
    if is_connection_error(e) {
        return StoreError::Connection(format!("connection to the server lost: {}", one_line(e)));
    }
    StoreError::Database(one_line(e))
}

/// A connection error's message names the server (`shown`: the URL without password).
pub(crate) fn name_server(e: StoreError, shown: &str) -> StoreError {
    match e {
        StoreError::Connection(m) if !m.contains(shown) => {
            StoreError::Connection(format!("{m} ({shown})"))
        }
        e => e,
    }
}

/// The connection broke after COMMIT was sent and before its answer came: the server may
/// have applied the change or not.
pub(super) fn commit_lost(shown: &str, e: &postgres::Error) -> StoreError {
    tracing::warn!(error = %one_line(e), server = %shown, "connection lost while committing");
    StoreError::CommitLost {
        server: shown.to_string(),
        reason: connection_reason(e),
    }
}

/// The connection broke inside a write transaction, before COMMIT: the server rolls the
/// transaction back, so nothing was changed.
pub(super) fn lost_before_commit(shown: &str, e: &postgres::Error) -> StoreError {
    StoreError::NotCommitted {
        server: shown.to_string(),
        reason: connection_reason(e),
    }
}

/// Why a connection broke, in a few words.
pub(crate) fn connection_reason(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => one_line(e),
    }
}

pub(super) fn one_line(e: &postgres::Error) -> String {
    let mut s = e.to_string();
    if let Some(src) = std::error::Error::source(e) {
        let src = src.to_string();
        if !s.contains(&src) {
            s = format!("{s}: {src}");
        }
    }
    s.replace('\n', " ")
}

pub(super) fn first_i64(msgs: &[SimpleQueryMessage]) -> Option<i64> {
    msgs.iter().find_map(|m| match m {
        SimpleQueryMessage::Row(r) => r.get(0).and_then(|s| s.parse().ok()),
        _ => None,
    })
}

/// Connects to `url` as every caseload command does (password from `~/.pgpass` or
/// `PGPASSWORD`, the session timeouts) without touching the schema; returns the config,
/// the URL as shown to users (no password) and the client. `caseload doctor` inspects a
/// server with it. Through a pooler, the URL's `options` are not sent (see
/// [`pooled_settings`]).
pub fn connect_url(url: &str, opts: &PgOptions) -> Result<(postgres::Config, String, Client)> {
    let shown = redact_url(url);
    let url = match opts.pool {
        Pooling::Direct => url.to_string(),
        Pooling::Transaction => super::pooling::without_options(url)?.0,
    };
    let mut config: postgres::Config = url
        .parse()
        .map_err(|e| StoreError::Unusable(format!("{shown} is not a valid PostgreSQL URL: {e}")))?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(opts.connect_timeout);
    }
    if config.get_application_name().is_none() {
        config.application_name("caseload");
    }
    super::pgpass::fill_password(&mut config);
    let client = connect(&config, &shown, opts)?;
    Ok((config, shown, client))
}

/// Through a pooler in transaction mode: the statement that gives each transaction the
/// settings a direct connection gives its session (the URL's `options`, then the
/// timeouts and UTC). `None` on a direct connection.
pub(super) fn pooled_settings(url: &str, opts: &PgOptions) -> Result<Option<String>> {
    if opts.pool == Pooling::Direct {
        return Ok(None);
    }
    let (_, mut settings) = super::pooling::without_options(url)?;
    for (name, ms) in [
        ("lock_timeout", opts.lock_timeout),
        ("statement_timeout", opts.statement_timeout),
        (
            "idle_in_transaction_session_timeout",
            opts.idle_in_transaction_timeout,
        ),
    ] {
        settings.push((name.to_string(), ms.as_millis().to_string()));
    }
    settings.push(("TimeZone".to_string(), "UTC".to_string()));
    Ok(Some(super::pooling::settings_sql(&settings)))
}

/// Why a connection was refused, in one line naming the server; for a full server, where
/// the README says how to size it.
fn refused_why(e: &postgres::Error, shown: &str) -> String {
    let why = match e.as_db_error() {
        Some(db) if matches!(db.code().code(), "28P01" | "28000") => {
            format!("authentication failed: {}", db.message())
        }
        Some(db) if db.message().contains("unsupported startup parameter") => format!(
            "{} (a pooler in transaction mode: set CASELOAD_PG_POOL=transaction or \
             pg_pool = \"transaction\"; see the README's \"A team of hundreds\")",
            db.message()
        ),
        Some(db) if is_full(e) => format!(
            "{} (the server has no connection to spare: see the README's \"A team of \
             hundreds\" for connections per client and pool sizes)",
            db.message()
        ),
        Some(db) => db.message().to_string(),
        None => one_line(e),
    };
    format!("cannot connect to {shown}: {why}")
}

/// True when the server (or a pooler) turned the connection away for want of room:
/// `too_many_connections`, or PgBouncer's "no more connections allowed".
fn is_full(e: &postgres::Error) -> bool {
    e.as_db_error().is_some_and(|db| {
        db.code().code() == "53300" || db.message().contains("no more connections allowed")
    })
}

/// True when trying again later may work: the server is full, starting up or shutting
/// down, or was not reached at all; not a refusal of who we are or what we asked for.
fn worth_waiting_for(e: &postgres::Error) -> bool {
    match e.as_db_error() {
        Some(db) => is_full(e) || matches!(db.code().code(), "57P03" | "57P01" | "08006"),
        None => true,
    }
}

/// Connects; for a client that waits ([`PgOptions::waiting`]), tries again after a
/// refusal worth waiting for, saying so each time.
pub(super) fn connect(config: &postgres::Config, shown: &str, opts: &PgOptions) -> Result<Client> {
    let mut backoff = super::backoff::Backoff::default();
    loop {
        match connect_once(config, shown, opts) {
            Err((e, why)) if opts.waiting.is_some() && worth_waiting_for(&e) => {
                let pause = backoff.next();
                if let Some(say) = opts.waiting {
                    say(&format!(
                        "{why}; trying again in {} s",
                        pause.as_secs().max(1)
                    ));
                }
                std::thread::sleep(pause);
            }
            Err((_, why)) => return Err(StoreError::Connection(why)),
            Ok(client) => return client,
        }
    }
}

/// Connects once and, on a direct connection, sets the session's timeouts; a refusal
/// comes back with its one line.
pub(super) fn connect_once(
    config: &postgres::Config,
    shown: &str,
    opts: &PgOptions,
) -> std::result::Result<Result<Client>, (postgres::Error, String)> {
    let mut client = match config.connect(NoTls) {
        Ok(c) => c,
        Err(e) => {
            let why = refused_why(&e, shown);
            return Err((e, why));
        }
    };
    Ok(session(&mut client, shown, opts).map(|()| client))
}

/// A direct connection's session settings (none through a pooler).
fn session(client: &mut Client, shown: &str, opts: &PgOptions) -> Result<()> {
    if opts.pool == Pooling::Transaction {
        return Ok(());
    }
    client
        .batch_execute(&format!(
            "SET lock_timeout = {}; SET statement_timeout = {}; \
             SET idle_in_transaction_session_timeout = {}; SET TIME ZONE 'UTC'",
            opts.lock_timeout.as_millis(),
            opts.statement_timeout.as_millis(),
            opts.idle_in_transaction_timeout.as_millis()
        ))
        .map_err(|e| name_server(map_err(&e), shown))
}
