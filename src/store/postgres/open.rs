//! Opening a PostgreSQL connection: options, session settings (lock, statement and
//! idle-in-transaction timeouts, UTC), the connection with its prepared statements, and
//! the mapping of the server's errors to the store's, one line each.

use std::collections::HashMap;
use std::time::Duration;

use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls, Row, SimpleQueryMessage, Statement};

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
        }
    }
}

/// One connection and its prepared statements.
pub(super) struct Conn {
    pub client: Client,
    pub cache: HashMap<String, Statement>,
    /// `SELECT <server now in ms, plus the test offset>`.
    pub now_sql: String,
    /// True while a transaction runs on it (`txn`): a snapshot asked for inside joins it,
    /// and a lost connection is not silently replaced by a new one outside it.
    pub in_txn: bool,
}

impl Conn {
    pub(super) fn prep(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.cache.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql)?;
        self.cache.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    pub(super) fn prep_typed(
        &mut self,
        sql: &str,
        types: &[Type],
    ) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.cache.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare_typed(sql, types)?;
        self.cache.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    pub(super) fn query(
        &mut self,
        sql: &str,
        p: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, postgres::Error> {
        let s = self.prep(sql)?;
        self.client.query(&s, p)
    }

    pub(super) fn query_opt(
        &mut self,
        sql: &str,
        p: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, postgres::Error> {
        let s = self.prep(sql)?;
        self.client.query_opt(&s, p)
    }

    pub(super) fn query_one(
        &mut self,
        sql: &str,
        p: &[&(dyn ToSql + Sync)],
    ) -> Result<Row, postgres::Error> {
        let s = self.prep(sql)?;
        self.client.query_one(&s, p)
    }

    pub(super) fn execute(
        &mut self,
        sql: &str,
        p: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, postgres::Error> {
        let s = self.prep(sql)?;
        self.client.execute(&s, p)
    }

    /// The server's now, in Unix ms (plus the test offset).
    pub(super) fn now(&mut self) -> Result<Millis, postgres::Error> {
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
/// server with it.
pub fn connect_url(url: &str, opts: &PgOptions) -> Result<(postgres::Config, String, Client)> {
    let shown = redact_url(url);
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

/// Connects and sets the session's timeouts.
pub(super) fn connect(config: &postgres::Config, shown: &str, opts: &PgOptions) -> Result<Client> {
    let mut client = config.connect(NoTls).map_err(|e| {
        let why = match e.as_db_error() {
            Some(db) if matches!(db.code().code(), "28P01" | "28000") => {
                format!("authentication failed: {}", db.message())
            }
            Some(db) => db.message().to_string(),
            None => one_line(&e),
        };
        StoreError::Connection(format!("cannot connect to {shown}: {why}"))
    })?;
    client
        .batch_execute(&format!(
            "SET lock_timeout = {}; SET statement_timeout = {}; \
             SET idle_in_transaction_session_timeout = {}; SET TIME ZONE 'UTC'",
            opts.lock_timeout.as_millis(),
            opts.statement_timeout.as_millis(),
            opts.idle_in_transaction_timeout.as_millis()
        ))
        .map_err(|e| name_server(map_err(&e), shown))?;
    Ok(client)
}
