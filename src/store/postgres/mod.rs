//! The PostgreSQL store: one server shared by a team on many hosts.
//!
//! Same meaning, same events and same errors as the SQLite store. Every write is a short
//! transaction; a claim picks its row with `FOR UPDATE SKIP LOCKED` and then makes the
//! conditional UPDATE, so parallel claims do not wait for each other. The lease lives in
//! the columns (`lock_user`, `lock_time`, `lock_token`), never in an open transaction.
//! All lock arithmetic uses the server's clock (`clock_timestamp()`), read once at the
//! start of each write transaction, so users on hosts with skewed clocks agree on expiry.
//! Every committed write is followed by `pg_notify('caseload', <schema>)` (see
//! `PgStore::notify` for why not inside it); `change_marker` counts those notifications on
//! a second, listening connection, re-subscribing after a reconnect.

mod pgpass;

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls, Row, SimpleQueryMessage, Statement};
use serde_json::json;

use crate::domain::queue::validate_queue_name;
use crate::domain::time::clock_hm;
use crate::domain::user::validate_user_name;
use crate::domain::{
    Actor, Event, EventKind, Item, ItemState, Millis, NewItem, QueueSettings, QueueUpdate, Role,
};
use crate::store::error::{Result, StoreError};
use crate::store::holder::{HolderOp, check_comment, required_reason};
use crate::store::location::redact_url;
use crate::store::sqlite::{Clock, system_clock};
use crate::store::{
    AGE_BUCKETS, Added, Bucket, ListFilter, LostLock, OldestItem, QueueCount, StateCount,
    StateFilter, Stats, Store, TakeNext, UserWip, Window, reverse_order,
};

/// The whole current schema (`schema.pg.sql`).
pub const SCHEMA: &str = include_str!("../../../schema.pg.sql");

/// Released steps, in order; step `i` takes a schema from version `i` to `i + 1`. Never
/// edit one: append. (When a second step is added, freeze the first into its own file and
/// keep `schema.pg.sql` as the whole current schema.)
pub const STEPS: &[&str] = &[SCHEMA];

/// The schema version this program writes.
pub const LATEST: i64 = STEPS.len() as i64;

/// The channel every write transaction notifies.
pub const CHANNEL: &str = "caseload";

/// Key of the advisory lock the migrator holds (per schema, see `migrate`).
const MIGRATE_LOCK_CLASS: i32 = 0x4353_4C44; // "CSLD"
/// Key class of the advisory lock that serialises one user's claims in a WIP-limited queue.
const WIP_LOCK_CLASS: i32 = 0x4353_4C57; // "CSLW"

/// How long a deadlocked or serialisation-failed write is retried.
const RETRY_PATIENCE: Duration = Duration::from_secs(30);

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
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            clock_offset_ms: 0,
            lock_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(30),
            idle_in_transaction_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
        }
    }
}

const ITEM_COLS: &str = "id, queue, request_id, title, body, params::text, priority, due_at, \
     state, lock_user, lock_time, lock_token, notes, result, error, created_at, created_by, \
     finished_at, finished_by";

const EVENT_COLS: &str = "id, item_id, at, actor, os_user, kind, detail::text";

/// One connection and its prepared statements.
struct Conn {
    client: Client,
    cache: HashMap<String, Statement>,
    /// `SELECT <server now in ms, plus the test offset>`.
    now_sql: String,
}

impl Conn {
    fn prep(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.cache.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql)?;
        self.cache.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    fn prep_typed(&mut self, sql: &str, types: &[Type]) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.cache.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare_typed(sql, types)?;
        self.cache.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    fn query(&mut self, sql: &str, p: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, postgres::Error> {
        let s = self.prep(sql)?;
        self.client.query(&s, p)
    }

    fn query_opt(
        &mut self,
        sql: &str,
        p: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, postgres::Error> {
        let s = self.prep(sql)?;
        self.client.query_opt(&s, p)
    }

    fn query_one(&mut self, sql: &str, p: &[&(dyn ToSql + Sync)]) -> Result<Row, postgres::Error> {
        let s = self.prep(sql)?;
        self.client.query_one(&s, p)
    }

    fn execute(&mut self, sql: &str, p: &[&(dyn ToSql + Sync)]) -> Result<u64, postgres::Error> {
        let s = self.prep(sql)?;
        self.client.execute(&s, p)
    }

    /// The server's now, in Unix ms (plus the test offset).
    fn now(&mut self) -> Result<Millis, postgres::Error> {
        let sql = self.now_sql.clone();
        Ok(self.query_one(&sql, &[])?.get(0))
    }
}

/// What a step inside a transaction can fail with: a refusal of the store, or a database
/// error that the transaction loop may retry (deadlock) or map.
enum TxError {
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
    fn into_store(self) -> StoreError {
        match self {
            TxError::Store(e) => e,
            TxError::Pg(e) => map_err(&e),
        }
    }
}

type TxResult<T> = std::result::Result<T, TxError>;

fn sqlstate(e: &postgres::Error) -> Option<&str> {
    e.as_db_error().map(|d| d.code().code())
}

/// True when the connection itself failed (the server went away, the network broke).
fn is_connection_error(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match sqlstate(e) {
        Some(code) => code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03"),
        None => std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>()),
    }
}

fn is_retryable(e: &postgres::Error) -> bool {
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
                "permission denied: {msg} (the database user needs the rights listed in \
                 docs/postgres.md)"
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

fn one_line(e: &postgres::Error) -> String {
    let mut s = e.to_string();
    if let Some(src) = std::error::Error::source(e) {
        let src = src.to_string();
        if !s.contains(&src) {
            s = format!("{s}: {src}");
        }
    }
    s.replace('\n', " ")
}

/// The listening connection behind `change_marker`.
struct Listener {
    client: Client,
    pid: i32,
    /// Notifications name the schema that changed; others' schemas are not ours.
    schema: String,
}

/// The PostgreSQL implementation of [`Store`].
pub struct PgStore {
    conn: Conn,
    config: postgres::Config,
    /// The URL without its password, for messages.
    shown: String,
    actor: Actor,
    opts: PgOptions,
    listener: Option<Listener>,
    notifications: u64,
    own_commits: u64,
    /// The client host's clock: used only to report skew and to tell the time between
    /// round trips, never to decide expiry.
    client_clock: Clock,
    /// The server's clock minus the client's, and when it was last measured: `now()`
    /// for a screen's countdowns needs no round trip (every write measures it anew).
    server_offset: Option<(i64, Instant)>,
    /// After a failed reconnect, when to try again (a screen ticking while the server is
    /// down must not stall on every tick).
    retry_at: Option<Instant>,
    created: bool,
}

/// How long a measured server-clock offset is trusted.
const OFFSET_TTL: Duration = Duration::from_secs(10);
/// How long to wait after a failed reconnect before the next attempt.
const RECONNECT_PAUSE: Duration = Duration::from_secs(1);

impl PgStore {
    /// Connects to `url` (creating or migrating the schema when needed).
    pub fn open(url: &str, actor: Actor, opts: &PgOptions) -> Result<Self> {
        Self::open_with_clock(url, actor, opts, Box::new(system_clock))
    }

    /// Connects with a given client clock. The client clock never decides expiry (the
    /// server's does); it is only compared with the server's by [`PgStore::clock_skew`].
    pub fn open_with_clock(
        url: &str,
        actor: Actor,
        opts: &PgOptions,
        client_clock: Clock,
    ) -> Result<Self> {
        let shown = redact_url(url);
        let mut config: postgres::Config = url.parse().map_err(|e| {
            StoreError::Unusable(format!("{shown} is not a valid PostgreSQL URL: {e}"))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(opts.connect_timeout);
        }
        if config.get_application_name().is_none() {
            config.application_name("caseload");
        }
        pgpass::fill_password(&mut config);
        let client = connect(&config, &shown, opts)?;
        let mut conn = Conn {
            client,
            cache: HashMap::new(),
            now_sql: now_sql(opts.clock_offset_ms),
        };
        let created = migrate(&mut conn, &actor).map_err(|e| e.into_store())?;
        Ok(PgStore {
            conn,
            config,
            shown,
            actor,
            opts: opts.clone(),
            listener: None,
            notifications: 0,
            own_commits: 0,
            client_clock,
            server_offset: None,
            retry_at: None,
            created,
        })
    }

    /// True when this program created the schema.
    pub fn created_schema(&self) -> bool {
        self.created
    }

    /// The server's clock minus the client's, in ms (positive: the client is behind).
    pub fn clock_skew(&mut self) -> Result<i64> {
        let server = self.now()? - self.opts.clock_offset_ms;
        Ok(server - (self.client_clock)())
    }

    /// The backend process id of the listening connection, once `change_marker` started
    /// it (tests kill it to check reconnection).
    pub fn listener_pid(&self) -> Option<i32> {
        self.listener.as_ref().map(|l| l.pid)
    }

    /// The backend process id of the main connection.
    pub fn backend_pid(&mut self) -> Result<i32> {
        self.read(|c| Ok(c.query_one("SELECT pg_backend_pid()", &[])?.get(0)))
    }

    /// The main connection, for the bulk copy of `caseload migrate-to`.
    pub(crate) fn client_for_copy(&mut self) -> Result<&mut Client> {
        if self.conn.client.is_closed() {
            self.reconnect()?;
        }
        self.conn.cache.clear();
        Ok(&mut self.conn.client)
    }

    fn reconnect(&mut self) -> Result<()> {
        if let Some(at) = self.retry_at
            && Instant::now() < at
        {
            return Err(StoreError::Connection(format!(
                "cannot reach {}; trying again",
                self.shown
            )));
        }
        match connect(&self.config, &self.shown, &self.opts) {
            Ok(client) => {
                self.retry_at = None;
                self.conn.client = client;
                self.conn.cache.clear();
                Ok(())
            }
            Err(e) => {
                self.retry_at = Some(Instant::now() + RECONNECT_PAUSE);
                Err(e)
            }
        }
    }

    /// Remembers how far the server's clock is from the client's.
    fn measured(&mut self, server_now: Millis) {
        self.server_offset = Some((server_now - (self.client_clock)(), Instant::now()));
    }

    /// Runs a read, reconnecting once when the connection was lost.
    fn read<T>(&mut self, f: impl FnMut(&mut Conn) -> TxResult<T>) -> Result<T> {
        let out = self.read_inner(f);
        out.map_err(|e| self.named(e))
    }

    /// A lost connection's message names the server (without its password).
    fn named(&self, e: StoreError) -> StoreError {
        match e {
            StoreError::Connection(m) if !m.contains(&self.shown) => {
                StoreError::Connection(format!("{m} ({})", self.shown))
            }
            e => e,
        }
    }

    fn read_inner<T>(&mut self, mut f: impl FnMut(&mut Conn) -> TxResult<T>) -> Result<T> {
        if self.conn.client.is_closed() {
            self.reconnect()?;
        }
        match f(&mut self.conn) {
            Ok(v) => Ok(v),
            Err(TxError::Pg(e)) if is_connection_error(&e) => {
                tracing::warn!(error = %one_line(&e), "connection lost; reconnecting");
                self.reconnect()?;
                f(&mut self.conn).map_err(TxError::into_store)
            }
            Err(e) => Err(e.into_store()),
        }
    }

    /// Runs `f` in one short transaction with the server's `now`; commits and notifies
    /// listeners on success, rolls back on error. Deadlocks are retried.
    fn write<T>(&mut self, f: impl FnMut(&mut Conn, Millis, &Actor) -> TxResult<T>) -> Result<T> {
        let out = self.write_inner(f);
        out.map_err(|e| self.named(e))
    }

    fn write_inner<T>(
        &mut self,
        mut f: impl FnMut(&mut Conn, Millis, &Actor) -> TxResult<T>,
    ) -> Result<T> {
        let start = Instant::now();
        let mut reconnected = false;
        loop {
            if self.conn.client.is_closed() {
                self.reconnect()?;
            }
            let begin = format!("BEGIN; {}", self.conn.now_sql);
            let now = match self.conn.client.simple_query(&begin) {
                Ok(msgs) => first_i64(&msgs).ok_or_else(|| {
                    StoreError::Database("the server did not say what time it is".into())
                })?,
                Err(e) if is_connection_error(&e) && !reconnected => {
                    // Nothing was done yet: reconnecting and starting again is safe.
                    reconnected = true;
                    self.reconnect()?;
                    continue;
                }
                Err(e) => {
                    let _ = self.conn.client.batch_execute("ROLLBACK");
                    return Err(map_err(&e));
                }
            };
            self.measured(now);
            let out = f(&mut self.conn, now, &self.actor).and_then(|v| {
                self.conn.client.batch_execute("COMMIT")?;
                Ok(v)
            });
            match out {
                Ok(v) => {
                    self.own_commits += 1;
                    self.notify();
                    return Ok(v);
                }
                Err(e) => {
                    if !self.conn.client.is_closed() {
                        let _ = self.conn.client.batch_execute("ROLLBACK");
                    }
                    match e {
                        TxError::Pg(pe)
                            if is_retryable(&pe) && start.elapsed() < RETRY_PATIENCE =>
                        {
                            std::thread::sleep(Duration::from_millis(1));
                            continue;
                        }
                        e => return Err(e.into_store()),
                    }
                }
            }
        }
    }

    /// Tells listeners that something changed, right after a write committed.
    ///
    /// Not inside the write transaction: a transaction that notifies holds a database-wide
    /// lock until its commit is flushed, so every write would wait for every other's disk
    /// flush and parallel claims could not scale. A notification is only a hint, so it
    /// goes in its own transaction without a synchronous flush, and a failure to send it
    /// (say, a full notification queue) never turns a committed write into an error.
    fn notify(&mut self) {
        let sql = format!(
            "BEGIN; SET LOCAL synchronous_commit = off; \
             SELECT pg_notify('{CHANNEL}', coalesce(current_schema(), '')); COMMIT"
        );
        if let Err(e) = self.conn.client.batch_execute(&sql) {
            tracing::warn!(error = %one_line(&e), "change notification not sent");
            if !self.conn.client.is_closed() {
                let _ = self.conn.client.batch_execute("ROLLBACK");
            }
        }
    }

    /// A holder's fenced write: it applies only where the caller still holds the lock
    /// with `token`; otherwise the loss is explained. The update and its event are one
    /// statement: one round trip.
    fn holder_write(&mut self, id: i64, token: i64, op: HolderOp<'_>) -> Result<()> {
        let w = op.plan(token)?;
        let set = w
            .set
            .replace(":now", "$4")
            .replace(":me", "$2")
            .replace(":value", "$5");
        let sql = format!(
            "WITH u AS (UPDATE items SET {set} WHERE id = $1 AND lock_user = $2 \
             AND lock_token = $3 AND state = 'open' RETURNING id) \
             INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
             SELECT id, $4, $2, $6, $7, $8::text::json FROM u"
        );
        let detail = w.detail.to_string();
        let (kind, value) = (w.kind, w.value);
        self.write(|c, now, actor| {
            let stmt = c.prep_typed(
                &sql,
                &[
                    Type::INT8,
                    Type::TEXT,
                    Type::INT8,
                    Type::INT8,
                    Type::TEXT,
                    Type::TEXT,
                    Type::TEXT,
                    Type::TEXT,
                ],
            )?;
            let n = c.client.execute(
                &stmt,
                &[
                    &id,
                    &actor.name,
                    &token,
                    &now,
                    &value,
                    &actor.os_user,
                    &kind.as_str(),
                    &detail,
                ],
            )?;
            if n == 0 {
                return Err(explain_loss(c, id, token, &actor.name)?.into());
            }
            Ok(())
        })
    }

    fn listen(&self) -> Result<Listener> {
        let mut client = connect(&self.config, &self.shown, &self.opts)?;
        client
            .batch_execute(&format!("LISTEN {CHANNEL}"))
            .map_err(|e| map_err(&e))?;
        let row = client
            .query_one(
                "SELECT pg_backend_pid(), coalesce(current_schema(), '')",
                &[],
            )
            .map_err(|e| map_err(&e))?;
        Ok(Listener {
            client,
            pid: row.get(0),
            schema: row.get(1),
        })
    }
}

fn now_sql(offset: i64) -> String {
    format!(
        "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint + ({offset})::bigint"
    )
}

fn first_i64(msgs: &[SimpleQueryMessage]) -> Option<i64> {
    msgs.iter().find_map(|m| match m {
        SimpleQueryMessage::Row(r) => r.get(0).and_then(|s| s.parse().ok()),
        _ => None,
    })
}

/// Connects and sets the session's timeouts.
fn connect(config: &postgres::Config, shown: &str, opts: &PgOptions) -> Result<Client> {
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
        .map_err(|e| map_err(&e))?;
    Ok(client)
}

/// Brings the schema up to date under an advisory lock held for one transaction; returns
/// whether it created the schema. `creator` becomes the first supervisor of a new one.
fn migrate(c: &mut Conn, creator: &Actor) -> TxResult<bool> {
    if let Some(v) = schema_version(c)?
        && v == LATEST
    {
        return Ok(false);
    }
    c.client.batch_execute("BEGIN")?;
    let out = migrate_locked(c, creator);
    match out {
        Ok(created) => {
            c.client.batch_execute("COMMIT")?;
            Ok(created)
        }
        Err(e) => {
            let _ = c.client.batch_execute("ROLLBACK");
            Err(e)
        }
    }
}

fn migrate_locked(c: &mut Conn, creator: &Actor) -> TxResult<bool> {
    // One lock per schema: programs on other schemas of the same database do not wait.
    c.client.execute(
        "SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))",
        &[&MIGRATE_LOCK_CLASS],
    )?;
    // Re-read under the lock: another program may have migrated meanwhile.
    let version = schema_version(c)?;
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
            c.client.batch_execute(
                "CREATE TABLE caseload_schema (\
                     version     INTEGER PRIMARY KEY, \
                     applied_at  BIGINT NOT NULL, \
                     applied_by  TEXT NOT NULL)",
            )?;
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
    Ok(c.client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class k \
             JOIN pg_catalog.pg_namespace n ON n.oid = k.relnamespace \
             WHERE n.nspname = current_schema() AND k.relname = $1)",
            &[&name],
        )?
        .get(0))
}

/// The schema version, or `None` when there is no caseload schema here yet.
fn schema_version(c: &mut Conn) -> TxResult<Option<i64>> {
    if !table_exists(c, "caseload_schema")? {
        return Ok(None);
    }
    let v: Option<i64> = c
        .client
        .query_one("SELECT max(version)::bigint FROM caseload_schema", &[])?
        .get(0);
    Ok(Some(v.unwrap_or(0)))
}

fn item_from_row(r: &Row) -> Item {
    let state: String = r.get(8);
    Item {
        id: r.get(0),
        queue: r.get(1),
        request_id: r.get(2),
        title: r.get(3),
        body: r.get(4),
        params: r.get(5),
        priority: r.get(6),
        due_at: r.get(7),
        state: ItemState::parse(&state).unwrap_or(ItemState::Open),
        lock_user: r.get(9),
        lock_time: r.get(10),
        lock_token: r.get(11),
        notes: r.get(12),
        result: r.get(13),
        error: r.get(14),
        created_at: r.get(15),
        created_by: r.get(16),
        finished_at: r.get(17),
        finished_by: r.get(18),
    }
}

fn event_from_row(r: &Row) -> Event {
    let kind: String = r.get(5);
    let detail: String = r.get(6);
    Event {
        id: r.get(0),
        item_id: r.get(1),
        at: r.get(2),
        actor: r.get(3),
        os_user: r.get(4),
        kind: EventKind::parse(&kind).unwrap_or(EventKind::Noted),
        detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::Null),
    }
}

fn queue_from_row(r: &Row) -> QueueSettings {
    QueueSettings {
        name: r.get(0),
        lock_seconds: r.get(1),
        warn_seconds: r.get(2),
        max_per_user: r.get(3),
        paused: r.get(4),
    }
}

fn load_item(c: &mut Conn, id: i64) -> TxResult<Item> {
    let row = c.query_opt(
        &format!("SELECT {ITEM_COLS} FROM items WHERE id = $1"),
        &[&id],
    )?;
    row.map(|r| item_from_row(&r))
        .ok_or(TxError::Store(StoreError::NotFound(id)))
}

/// Loads an item and locks its row for the rest of the transaction.
fn lock_item(c: &mut Conn, id: i64) -> TxResult<Item> {
    let row = c.query_opt(
        &format!("SELECT {ITEM_COLS} FROM items WHERE id = $1 FOR UPDATE"),
        &[&id],
    )?;
    row.map(|r| item_from_row(&r))
        .ok_or(TxError::Store(StoreError::NotFound(id)))
}

/// Locks one item that must still be open (else `NotOpen`, naming who finished it).
fn lock_open_item(c: &mut Conn, id: i64) -> TxResult<Item> {
    let item = lock_item(c, id)?;
    if item.state != ItemState::Open {
        return Err(StoreError::NotOpen {
            id,
            state: item.state,
            by: item.finished_by,
        }
        .into());
    }
    Ok(item)
}

fn load_queue(c: &mut Conn, name: &str) -> TxResult<QueueSettings> {
    let row = c.query_opt(
        "SELECT name, lock_seconds, warn_seconds, max_per_user, paused FROM queues \
         WHERE name = $1",
        &[&name],
    )?;
    match row {
        Some(r) => Ok(queue_from_row(&r)),
        None => Err(StoreError::UnknownQueue {
            name: name.to_string(),
            known: queue_names(c)?,
        }
        .into()),
    }
}

fn queue_names(c: &mut Conn) -> TxResult<Vec<String>> {
    Ok(
        c.query("SELECT name FROM queues ORDER BY name COLLATE \"C\"", &[])?
            .iter()
            .map(|r| r.get(0))
            .collect(),
    )
}

fn insert_event(
    c: &mut Conn,
    item_id: i64,
    at: Millis,
    actor: &Actor,
    kind: EventKind,
    detail: &serde_json::Value,
) -> TxResult<()> {
    c.execute(
        "INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
         VALUES ($1, $2, $3, $4, $5, $6::text::json)",
        &[
            &item_id,
            &at,
            &actor.name,
            &actor.os_user,
            &kind.as_str(),
            &detail.to_string(),
        ],
    )?;
    Ok(())
}

fn role_of(c: &mut Conn, user: &str) -> TxResult<Role> {
    let role: Option<String> = c
        .query_opt("SELECT role FROM users WHERE name = $1", &[&user])?
        .map(|r| r.get(0));
    Ok(role.as_deref().and_then(Role::parse).unwrap_or(Role::Staff))
}

fn require_supervisor(c: &mut Conn, actor: &Actor, action: &str) -> TxResult<()> {
    match role_of(c, &actor.name)? {
        Role::Supervisor => Ok(()),
        Role::Staff => Err(StoreError::SupervisorOnly(format!(
            "{} is staff and may not {action}",
            actor.name
        ))
        .into()),
    }
}

/// Why a fenced holder write changed nothing, in the holder's terms.
fn explain_loss(c: &mut Conn, id: i64, token: i64, me: &str) -> TxResult<StoreError> {
    let item = load_item(c, id)?;
    if item.state != ItemState::Open {
        return Ok(StoreError::NotOpen {
            id,
            state: item.state,
            by: item.finished_by,
        });
    }
    let last = c
        .query_opt(
            &format!(
                "SELECT {EVENT_COLS} FROM events WHERE item_id = $1 AND kind IN ('locked', \
                 'taken_over', 'expired', 'unlocked', 'reassigned', 'released', 'skipped') \
                 ORDER BY id DESC LIMIT 1"
            ),
            &[&id],
        )?
        .map(|r| event_from_row(&r));
    let how = |e: &Event| -> String {
        match e.kind {
            EventKind::TakenOver => format!("{} took it over at {}", e.actor, clock_hm(e.at)),
            EventKind::Locked => format!("{} took it at {}", e.actor, clock_hm(e.at)),
            EventKind::Expired => format!(
                "it expired and {} released it at {}",
                e.actor,
                clock_hm(e.at)
            ),
            EventKind::Unlocked => format!("{} unlocked it at {}", e.actor, clock_hm(e.at)),
            EventKind::Reassigned => format!(
                "{} reassigned it to {} at {}",
                e.actor,
                e.detail_str("to").unwrap_or("?"),
                clock_hm(e.at)
            ),
            _ => format!("{} {} it at {}", e.actor, e.kind.as_str(), clock_hm(e.at)),
        }
    };
    let detail = match (&item.lock_user, last) {
        (Some(holder), _) if holder == me => format!(
            "token {token} does not match your current lock (token {})",
            item.lock_token
        ),
        (None, None) => format!("#{id} is not locked by you"),
        (Some(holder), None) => format!("{holder} holds it now"),
        (_, Some(e)) => how(&e),
    };
    Ok(StoreError::LockLost { id, detail })
}

/// The conditional write that takes an item: free or expired, queue not paused, and within
/// the WIP limit. The row is already locked by the caller's transaction.
const CLAIM_SQL: &str = "WITH u AS (UPDATE items SET lock_user = $1, lock_time = $2, \
     lock_token = lock_token + 1 \
     FROM queues q \
     WHERE items.id = $3 AND q.name = items.queue AND items.state = 'open' \
     AND (items.lock_user IS NULL OR items.lock_time <= $2 - q.lock_seconds * 1000) \
     AND NOT q.paused \
     AND (q.max_per_user IS NULL OR q.max_per_user > (SELECT count(*) FROM items h \
          WHERE h.lock_user = $1 AND h.queue = items.queue AND h.id <> items.id)) \
     RETURNING items.id, items.queue, items.request_id, items.title, items.body, \
     items.params::text, items.priority, items.due_at, items.state, items.lock_user, \
     items.lock_time, items.lock_token, items.notes, items.result, items.error, \
     items.created_at, items.created_by, items.finished_at, items.finished_by), \
     e AS (INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
     SELECT u.id, $2, $1, $4, CASE WHEN $5::text IS NULL THEN 'locked' ELSE 'taken_over' END, \
     CASE WHEN $5::text IS NULL THEN json_build_object('token', u.lock_token) \
     ELSE json_build_object('from', $5::text, 'token', u.lock_token) END FROM u) \
     SELECT * FROM u";

/// The first takeable item in take order (across all queues or within `$4`), locked for
/// this transaction; rows other claims are writing are skipped, not waited for.
fn candidate_sql(one_queue: bool) -> String {
    format!(
        "SELECT i.id, i.lock_user, i.queue, q.max_per_user IS NOT NULL FROM items i \
         JOIN queues q ON q.name = i.queue \
         WHERE i.state = 'open' {} \
         AND (i.lock_user IS NULL OR i.lock_time <= $2 - q.lock_seconds * 1000) \
         AND NOT (i.id = ANY($3)) \
         AND NOT q.paused \
         AND (q.max_per_user IS NULL OR q.max_per_user > (SELECT count(*) FROM items h \
              WHERE h.lock_user = $1 AND h.queue = i.queue AND h.id <> i.id)) \
         ORDER BY i.priority DESC, i.created_at, i.id LIMIT 1 \
         FOR UPDATE OF i SKIP LOCKED",
        if one_queue { "AND i.queue = $4" } else { "" }
    )
}

/// Serialises one user's claims in one WIP-limited queue, so that two parallel claims by
/// the same user cannot both pass the limit.
fn lock_wip(c: &mut Conn, user: &str, queue: &str) -> TxResult<()> {
    let key = format!("{user}\u{1}{queue}");
    c.execute(
        "SELECT pg_advisory_xact_lock($1, hashtext($2))",
        &[&WIP_LOCK_CLASS, &key],
    )?;
    Ok(())
}

/// Takes `id` (whose row the transaction holds) for `actor` if the claim condition holds;
/// writes the event. `prev_holder` is the holder the caller saw when it locked the row.
fn claim(
    c: &mut Conn,
    id: i64,
    prev_holder: Option<String>,
    now: Millis,
    actor: &Actor,
) -> TxResult<Option<Item>> {
    // The conditional update and its event (locked, or taken_over naming the old holder)
    // in one statement.
    Ok(c.query_opt(
        CLAIM_SQL,
        &[&actor.name, &now, &id, &actor.os_user, &prev_holder],
    )?
    .map(|r| item_from_row(&r)))
}

/// Why the caller can claim nothing from `queue` (or anywhere).
fn explain_nothing(c: &mut Conn, queue: Option<&QueueSettings>, me: &str) -> TxResult<StoreError> {
    if let Some(q) = queue
        && let Some(max) = q.max_per_user
    {
        let held: i64 = c
            .query_one(
                "SELECT count(*) FROM items WHERE lock_user = $1 AND queue = $2",
                &[&me, &q.name],
            )?
            .get(0);
        if held >= max {
            return Ok(StoreError::WipLimit {
                queue: q.name.clone(),
                held,
            });
        }
    }
    Ok(StoreError::NothingToClaim(match queue {
        Some(q) => format!("no free items in queue '{}'", q.name),
        None => "no free items in any open queue".into(),
    }))
}

/// Query parameters numbered as they are pushed.
#[derive(Default)]
struct Params {
    vals: Vec<Box<dyn ToSql + Sync>>,
}

impl Params {
    fn push(&mut self, v: impl ToSql + Sync + 'static) -> String {
        self.vals.push(Box::new(v));
        format!("${}", self.vals.len())
    }

    fn refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.vals
            .iter()
            .map(|b| b.as_ref() as &(dyn ToSql + Sync))
            .collect()
    }
}

/// Builds the WHERE clause and ORDER BY of a list query, pushing its parameters.
fn list_sql(f: &ListFilter, now: Millis, ps: &mut Params) -> (String, &'static str) {
    let mut conds: Vec<String> = Vec::new();
    let order = match f.state {
        StateFilter::Open => {
            conds.push("state = 'open'".into());
            "priority DESC, created_at, id"
        }
        StateFilter::Locked => {
            conds.push("lock_user IS NOT NULL".into());
            "lock_time, id"
        }
        StateFilter::Expired => {
            let p = ps.push(now);
            conds.push(format!(
                "lock_user IS NOT NULL AND lock_time <= {p} - (SELECT q.lock_seconds * 1000 \
                 FROM queues q WHERE q.name = items.queue)"
            ));
            "lock_time, id"
        }
        StateFilter::Done => {
            conds.push("state = 'done'".into());
            "id DESC"
        }
        StateFilter::Failed => {
            conds.push("state = 'failed'".into());
            "id DESC"
        }
        StateFilter::Cancelled => {
            conds.push("state = 'cancelled'".into());
            "id DESC"
        }
        StateFilter::All => "id",
    };
    if let Some(q) = &f.queue {
        let p = ps.push(q.clone());
        conds.push(format!("queue = {p}"));
    }
    if let Some(h) = &f.holder {
        let p = ps.push(h.clone());
        conds.push(format!("lock_user = {p}"));
    }
    if let Some(t) = f.text.as_ref().filter(|t| !t.is_empty()) {
        let escaped = t
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        let like = ps.push(format!("%{escaped}%"));
        let exact = ps.push(t.trim_start_matches('#').to_string());
        conds.push(format!(
            "(title ILIKE {like} ESCAPE '\\' OR body ILIKE {like} ESCAPE '\\' \
             OR id::text = {exact})"
        ));
    }
    let where_ = if conds.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", conds.join(" AND "))
    };
    (where_, order)
}

fn bucket_counts(ages_ms: &[i64]) -> Vec<Bucket> {
    let mut counts = [0u64; AGE_BUCKETS.len()];
    for &age in ages_ms {
        let i = AGE_BUCKETS
            .iter()
            .position(|(_, lim)| age < *lim)
            .unwrap_or(AGE_BUCKETS.len() - 1);
        counts[i] += 1;
    }
    AGE_BUCKETS
        .iter()
        .zip(counts)
        .map(|((label, _), count)| Bucket {
            label: label.to_string(),
            count,
        })
        .collect()
}

fn insert_item(c: &mut Conn, item: &NewItem, now: Millis, actor: &Actor) -> TxResult<Added> {
    c.execute(
        "INSERT INTO queues (name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
        &[&item.queue],
    )?;
    let row = c.query_opt(
        "INSERT INTO items (queue, request_id, title, body, params, priority, due_at, \
         created_at, created_by) VALUES ($1, $2, $3, $4, $5::text::json, $6, $7, $8, $9) \
         ON CONFLICT (request_id) DO NOTHING RETURNING id",
        &[
            &item.queue,
            &item.request_id,
            &item.title,
            &item.body,
            &item.params,
            &item.priority,
            &item.due_at,
            &now,
            &actor.name,
        ],
    )?;
    let Some(row) = row else {
        // A known request id: the producer's retry gets the existing item.
        let id: i64 = c
            .query_one(
                "SELECT id FROM items WHERE request_id = $1",
                &[&item.request_id],
            )?
            .get(0);
        return Ok(Added { id, created: false });
    };
    let id: i64 = row.get(0);
    insert_event(
        c,
        id,
        now,
        actor,
        EventKind::Created,
        &json!({"request_id": item.request_id}),
    )?;
    Ok(Added { id, created: true })
}

impl Store for PgStore {
    fn actor(&self) -> &Actor {
        &self.actor
    }

    fn now(&mut self) -> Result<Millis> {
        if let Some((offset, at)) = self.server_offset
            && at.elapsed() < OFFSET_TTL
        {
            return Ok((self.client_clock)() + offset);
        }
        let now = self.read(|c| Ok(c.now()?))?;
        self.measured(now);
        Ok(now)
    }

    fn change_marker(&mut self) -> Result<u64> {
        if self.listener.is_none() {
            self.listener = Some(self.listen()?);
            // A (re)started listener may have missed changes: make the marker move.
            self.notifications += 1;
        }
        let mut lost = false;
        if let Some(l) = self.listener.as_mut() {
            {
                let mut n = l.client.notifications();
                // Not `iter()`: it never lets the client's runtime read the socket, so it
                // would see nothing new. A short wait does.
                let mut it = n.timeout_iter(Duration::from_millis(1));
                loop {
                    match it.next() {
                        Ok(Some(n)) => {
                            if n.payload() == l.schema {
                                self.notifications += 1;
                            }
                        }
                        Ok(None) => break,
                        Err(e) => {
                            tracing::warn!(error = %one_line(&e), "listener lost; reconnecting");
                            lost = true;
                            break;
                        }
                    }
                }
            }
            lost |= l.client.is_closed();
        }
        if lost {
            self.listener = None;
            self.listener = Some(self.listen()?);
            self.notifications += 1;
        }
        Ok(self.notifications ^ (self.own_commits << 32))
    }

    fn add(&mut self, item: &NewItem) -> Result<Added> {
        item.validate()
            .map_err(|e| StoreError::Invalid(e.message))?;
        self.write(|c, now, actor| insert_item(c, item, now, actor))
    }

    fn add_batch(&mut self, items: &[NewItem]) -> Result<usize> {
        for it in items {
            it.validate().map_err(|e| StoreError::Invalid(e.message))?;
        }
        self.write(|c, now, actor| {
            let mut created = 0;
            for it in items {
                if insert_item(c, it, now, actor)?.created {
                    created += 1;
                }
            }
            Ok(created)
        })
    }

    fn take_next(&mut self, opts: &TakeNext) -> Result<Item> {
        self.write(|c, now, actor| {
            let queue = match &opts.queue {
                Some(name) => {
                    let q = load_queue(c, name)?;
                    if q.paused {
                        return Err(StoreError::NothingToClaim(format!(
                            "queue '{name}' is paused"
                        ))
                        .into());
                    }
                    Some(q)
                }
                None => None,
            };
            let sql = candidate_sql(queue.is_some());
            let mut skip = opts.skip.clone();
            loop {
                let row = match &queue {
                    Some(q) => c.query_opt(&sql, &[&actor.name, &now, &skip, &q.name])?,
                    None => c.query_opt(&sql, &[&actor.name, &now, &skip])?,
                };
                let Some(row) = row else {
                    return Err(explain_nothing(c, queue.as_ref(), &actor.name)?.into());
                };
                let id: i64 = row.get(0);
                let prev: Option<String> = row.get(1);
                let item_queue: String = row.get(2);
                let limited: bool = row.get(3);
                if limited {
                    lock_wip(c, &actor.name, &item_queue)?;
                }
                if let Some(item) = claim(c, id, prev, now, actor)? {
                    return Ok(item);
                }
                // Only the WIP limit can refuse a row this transaction holds: the user's
                // own parallel claim filled it meanwhile. Look again; the next candidate
                // query sees that claim and passes over the full queue.
                skip.push(id);
            }
        })
    }

    fn take(&mut self, id: i64) -> Result<Item> {
        self.write(|c, now, actor| {
            let cur = lock_open_item(c, id)?;
            if cur.is_held_by(&actor.name) {
                // Already mine (perhaps expired but not taken over): renew quietly.
                c.execute(
                    "UPDATE items SET lock_time = $1 WHERE id = $2 AND lock_user = $3 \
                     AND lock_token = $4",
                    &[&now, &id, &actor.name, &cur.lock_token],
                )?;
                insert_event(
                    c,
                    id,
                    now,
                    actor,
                    EventKind::Renewed,
                    &json!({"token": cur.lock_token}),
                )?;
                return load_item(c, id);
            }
            let q = load_queue(c, &cur.queue)?;
            if q.max_per_user.is_some() {
                lock_wip(c, &actor.name, &q.name)?;
            }
            if let Some(item) = claim(c, id, cur.lock_user.clone(), now, actor)? {
                return Ok(item);
            }
            if let (Some(holder), Some(since)) = (&cur.lock_user, cur.lock_time) {
                return Err(StoreError::HeldByOther {
                    id,
                    holder: holder.clone(),
                    since,
                }
                .into());
            }
            if q.paused {
                return Err(
                    StoreError::NothingToClaim(format!("queue '{}' is paused", q.name)).into(),
                );
            }
            Err(explain_nothing(c, Some(&q), &actor.name)?.into())
        })
    }

    fn renew(&mut self, id: i64, token: i64) -> Result<Item> {
        self.holder_write(id, token, HolderOp::Renew)?;
        self.read(|c| load_item(c, id))
    }

    fn release(&mut self, id: i64, token: i64) -> Result<()> {
        self.holder_write(id, token, HolderOp::Release)
    }

    fn skip(&mut self, id: i64, token: i64) -> Result<()> {
        self.holder_write(id, token, HolderOp::Skip)
    }

    fn save_notes(&mut self, id: i64, token: i64, notes: &str) -> Result<()> {
        self.holder_write(id, token, HolderOp::SaveNotes(notes))
    }

    fn complete(&mut self, id: i64, token: i64, result: Option<&str>) -> Result<()> {
        self.holder_write(id, token, HolderOp::Complete(result))
    }

    fn fail(&mut self, id: i64, token: i64, reason: &str) -> Result<()> {
        self.holder_write(id, token, HolderOp::Fail(reason))
    }

    fn comment(&mut self, id: i64, text: &str) -> Result<()> {
        check_comment(text)?;
        self.write(|c, now, actor| {
            load_item(c, id)?;
            insert_event(
                c,
                id,
                now,
                actor,
                EventKind::Noted,
                &json!({"comment": text}),
            )
        })
    }

    fn reap(&mut self) -> Result<usize> {
        let mut total = 0;
        loop {
            // Short batches; rows others are writing are skipped, not waited for.
            let n = self.write(|c, now, actor| {
                let n = c.execute(
                    "WITH x AS (SELECT i.id, i.lock_user, i.lock_token FROM items i \
                        JOIN queues q ON q.name = i.queue \
                        WHERE i.lock_user IS NOT NULL \
                        AND i.lock_time <= $1 - q.lock_seconds * 1000 \
                        ORDER BY i.lock_time LIMIT 500 FOR UPDATE OF i SKIP LOCKED), \
                     u AS (UPDATE items SET lock_user = NULL, lock_time = NULL FROM x \
                        WHERE items.id = x.id AND items.lock_token = x.lock_token \
                        RETURNING items.id, x.lock_user AS holder, x.lock_token AS token) \
                     INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
                     SELECT id, $1, $2, $3, 'expired', \
                        json_build_object('from', holder, 'token', token) FROM u",
                    &[&now, &actor.name, &actor.os_user],
                )?;
                Ok(n as usize)
            })?;
            total += n;
            if n < 500 {
                return Ok(total);
            }
        }
    }

    fn unlock(&mut self, id: i64, reason: &str) -> Result<()> {
        let reason = required_reason(reason)?;
        self.write(|c, now, actor| {
            require_supervisor(c, actor, "unlock items")?;
            let cur = lock_item(c, id)?;
            let Some(holder) = cur.lock_user.clone() else {
                return Err(StoreError::Invalid(format!("#{id} is not locked")).into());
            };
            c.execute(
                "UPDATE items SET lock_user = NULL, lock_time = NULL \
                 WHERE id = $1 AND lock_token = $2",
                &[&id, &cur.lock_token],
            )?;
            insert_event(
                c,
                id,
                now,
                actor,
                EventKind::Unlocked,
                &json!({"from": holder, "reason": reason, "token": cur.lock_token}),
            )
        })
    }

    fn unlock_many(&mut self, locks: &[(i64, i64)], reason: &str) -> Result<usize> {
        let reason = required_reason(reason)?;
        self.write(|c, now, actor| {
            require_supervisor(c, actor, "unlock items")?;
            let mut n = 0;
            for &(id, token) in locks {
                // Fenced by the token the supervisor saw: a lock that changed since stays.
                let Some(row) = c.query_opt(
                    "UPDATE items i SET lock_user = NULL, lock_time = NULL \
                     FROM (SELECT id, lock_user FROM items WHERE id = $1 AND lock_token = $2 \
                           AND lock_user IS NOT NULL FOR UPDATE) old \
                     WHERE i.id = old.id RETURNING old.lock_user",
                    &[&id, &token],
                )?
                else {
                    continue;
                };
                let holder: String = row.get(0);
                let detail = if locks.len() > 1 {
                    json!({"from": holder, "reason": reason, "token": token, "bulk": true})
                } else {
                    json!({"from": holder, "reason": reason, "token": token})
                };
                insert_event(c, id, now, actor, EventKind::Unlocked, &detail)?;
                n += 1;
            }
            Ok(n)
        })
    }

    fn lock_started(&mut self, ids: &[i64]) -> Result<Vec<(i64, Millis)>> {
        self.read(|c| {
            Ok(c.query(
                "SELECT item_id, max(at) FROM events WHERE item_id = ANY($1) \
                 AND kind IN ('locked', 'taken_over', 'reassigned') GROUP BY item_id",
                &[&ids],
            )?
            .iter()
            .map(|r| (r.get::<_, i64>(0), r.get::<_, i64>(1)))
            .collect())
        })
    }

    fn reassign(&mut self, id: i64, to: &str, reason: &str) -> Result<Item> {
        let reason = required_reason(reason)?;
        validate_user_name(to).map_err(|m| StoreError::Invalid(format!("--to: {m}")))?;
        self.write(|c, now, actor| {
            require_supervisor(c, actor, "reassign items")?;
            let cur = lock_open_item(c, id)?;
            let item = item_from_row(&c.query_one(
                &format!(
                    "UPDATE items SET lock_user = $1, lock_time = $2, \
                     lock_token = lock_token + 1 WHERE id = $3 AND lock_token = $4 \
                     RETURNING {ITEM_COLS}"
                ),
                &[&to, &now, &id, &cur.lock_token],
            )?);
            insert_event(
                c,
                id,
                now,
                actor,
                EventKind::Reassigned,
                &json!({"from": cur.lock_user, "to": to, "reason": reason, "token": item.lock_token}),
            )?;
            Ok(item)
        })
    }

    fn requeue(&mut self, id: i64) -> Result<()> {
        self.write(|c, now, actor| {
            require_supervisor(c, actor, "requeue items")?;
            let cur = lock_item(c, id)?;
            if !matches!(cur.state, ItemState::Failed | ItemState::Cancelled) {
                return Err(StoreError::Invalid(format!(
                    "#{id} is {}; only failed or cancelled items can be requeued",
                    cur.state.as_str()
                ))
                .into());
            }
            c.execute(
                "UPDATE items SET state = 'open', error = NULL, result = NULL, \
                 finished_at = NULL, finished_by = NULL WHERE id = $1",
                &[&id],
            )?;
            insert_event(
                c,
                id,
                now,
                actor,
                EventKind::Requeued,
                &json!({"was": cur.state.as_str(), "error": cur.error}),
            )
        })
    }

    fn cancel(&mut self, id: i64, reason: &str) -> Result<()> {
        let reason = required_reason(reason)?;
        self.write(|c, now, actor| {
            require_supervisor(c, actor, "cancel items")?;
            let cur = lock_open_item(c, id)?;
            c.execute(
                "UPDATE items SET state = 'cancelled', error = $1, lock_user = NULL, \
                 lock_time = NULL, finished_at = $2, finished_by = $3 \
                 WHERE id = $4 AND lock_token = $5",
                &[&reason, &now, &actor.name, &id, &cur.lock_token],
            )?;
            insert_event(
                c,
                id,
                now,
                actor,
                EventKind::Cancelled,
                &json!({"from": cur.lock_user, "reason": reason}),
            )
        })
    }

    fn set_queue(
        &mut self,
        name: &str,
        update: &QueueUpdate,
        create: bool,
    ) -> Result<QueueSettings> {
        validate_queue_name(name).map_err(StoreError::Invalid)?;
        self.write(|c, _now, actor| {
            require_supervisor(c, actor, "change queue settings")?;
            let cur = match load_queue(c, name) {
                Ok(q) => q,
                Err(TxError::Store(StoreError::UnknownQueue { .. })) if create => {
                    QueueSettings::new(name)
                }
                Err(e) => return Err(e),
            };
            let next = update.apply(&cur).map_err(StoreError::Invalid)?;
            c.execute(
                "INSERT INTO queues (name, lock_seconds, warn_seconds, max_per_user, paused) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO UPDATE SET \
                 lock_seconds = excluded.lock_seconds, warn_seconds = excluded.warn_seconds, \
                 max_per_user = excluded.max_per_user, paused = excluded.paused",
                &[
                    &next.name,
                    &next.lock_seconds,
                    &next.warn_seconds,
                    &next.max_per_user,
                    &next.paused,
                ],
            )?;
            tracing::info!(queue = %name, by = %actor.name, ?next, "queue settings changed");
            Ok(next)
        })
    }

    fn set_role(&mut self, user: &str, role: Role) -> Result<()> {
        validate_user_name(user).map_err(StoreError::Invalid)?;
        self.write(|c, _now, actor| {
            require_supervisor(c, actor, "change roles")?;
            if role == Role::Staff && user == actor.name {
                // Lock the supervisors' rows so two supervisors demoting themselves at
                // once cannot leave none.
                let others = c
                    .query(
                        "SELECT name FROM users WHERE role = 'supervisor' AND name <> $1 \
                         FOR UPDATE",
                        &[&user],
                    )?
                    .len();
                if others == 0 {
                    return Err(StoreError::Invalid(
                        "you are the last supervisor; make someone else supervisor first".into(),
                    )
                    .into());
                }
            }
            c.execute(
                "INSERT INTO users (name, role) VALUES ($1, $2) \
                 ON CONFLICT (name) DO UPDATE SET role = excluded.role",
                &[&user, &role.as_str()],
            )?;
            tracing::info!(user = %user, role = role.as_str(), by = %actor.name, "role changed");
            Ok(())
        })
    }

    fn item(&mut self, id: i64) -> Result<Item> {
        self.read(|c| load_item(c, id))
    }

    fn history(&mut self, id: i64) -> Result<Vec<Event>> {
        self.read(|c| {
            load_item(c, id)?;
            Ok(c.query(
                &format!("SELECT {EVENT_COLS} FROM events WHERE item_id = $1 ORDER BY id"),
                &[&id],
            )?
            .iter()
            .map(event_from_row)
            .collect())
        })
    }

    fn list(&mut self, filter: &ListFilter) -> Result<Vec<Item>> {
        let total = if Window::wants_total(filter) {
            Some(self.count(filter)?)
        } else {
            None
        };
        let Some(window) = Window::plan(filter, total) else {
            return Ok(Vec::new());
        };
        self.read(|c| {
            let now = c.now()?;
            if let Some(q) = &filter.queue {
                load_queue(c, q)?;
            }
            let mut ps = Params::default();
            let (where_, order) = list_sql(filter, now, &mut ps);
            let order = if window.reversed {
                reverse_order(order)
            } else {
                order.to_string()
            };
            let limit = ps.push(window.limit as i64);
            let offset = ps.push(window.offset as i64);
            let sql = format!(
                "SELECT {ITEM_COLS} FROM items {where_} ORDER BY {order} \
                 LIMIT {limit} OFFSET {offset}"
            );
            let mut items: Vec<Item> = c
                .query(&sql, &ps.refs())?
                .iter()
                .map(item_from_row)
                .collect();
            if window.reversed {
                items.reverse();
            }
            Ok(items)
        })
    }

    fn count(&mut self, filter: &ListFilter) -> Result<u64> {
        let simple_state = match filter.state {
            StateFilter::Open => Some(Some("open")),
            StateFilter::Done => Some(Some("done")),
            StateFilter::Failed => Some(Some("failed")),
            StateFilter::Cancelled => Some(Some("cancelled")),
            StateFilter::All => Some(None),
            _ => None,
        };
        self.read(|c| {
            if let Some(state) = simple_state
                && filter.holder.is_none()
                && filter.text.as_deref().is_none_or(str::is_empty)
            {
                // Kept by the trigger: no scan.
                let n: i64 = c
                    .query_one(
                        "SELECT coalesce(sum(n), 0)::bigint FROM item_counts \
                         WHERE ($1::text IS NULL OR state = $1) \
                         AND ($2::text IS NULL OR queue = $2)",
                        &[&state, &filter.queue],
                    )?
                    .get(0);
                return Ok(n.max(0) as u64);
            }
            let now = c.now()?;
            let mut ps = Params::default();
            let (where_, _) = list_sql(filter, now, &mut ps);
            let n: i64 = c
                .query_one(&format!("SELECT count(*) FROM items {where_}"), &ps.refs())?
                .get(0);
            Ok(n as u64)
        })
    }

    fn queues(&mut self) -> Result<Vec<QueueSettings>> {
        self.read(|c| {
            Ok(c.query(
                "SELECT name, lock_seconds, warn_seconds, max_per_user, paused FROM queues \
                 ORDER BY name COLLATE \"C\"",
                &[],
            )?
            .iter()
            .map(queue_from_row)
            .collect())
        })
    }

    fn queue(&mut self, name: &str) -> Result<QueueSettings> {
        self.read(|c| load_queue(c, name))
    }

    fn role(&mut self, user: &str) -> Result<Role> {
        self.read(|c| role_of(c, user))
    }

    fn stats(&mut self) -> Result<Stats> {
        let queues = self.queues()?;
        self.read(|c| stats(c, &queues))
    }

    fn events_by(&mut self, actor: &str, since: Millis) -> Result<Vec<Event>> {
        self.read(|c| {
            Ok(c.query(
                &format!(
                    "SELECT {EVENT_COLS} FROM events WHERE actor = $1 AND at >= $2 \
                     ORDER BY at, id"
                ),
                &[&actor, &since],
            )?
            .iter()
            .map(event_from_row)
            .collect())
        })
    }

    fn lost_locks(&mut self, user: &str, since: Millis) -> Result<Vec<LostLock>> {
        self.read(|c| {
            Ok(c.query(
                "SELECT e.item_id, i.title, e.kind, e.actor, e.at, i.lock_user FROM events e \
                 JOIN items i ON i.id = e.item_id \
                 WHERE e.at >= $2 AND e.kind IN ('taken_over', 'expired', 'unlocked', \
                 'reassigned', 'cancelled') AND e.detail->>'from' = $1 AND e.actor <> $1 \
                 ORDER BY e.at DESC, e.id DESC",
                &[&user, &since],
            )?
            .iter()
            .map(|r| {
                let kind: String = r.get(2);
                LostLock {
                    item_id: r.get(0),
                    title: r.get(1),
                    how: EventKind::parse(&kind).unwrap_or(EventKind::Expired),
                    by: r.get(3),
                    at: r.get(4),
                    now_held_by: r.get(5),
                }
            })
            .collect())
        })
    }

    fn touch_last_seen(&mut self) -> Result<Option<Millis>> {
        self.write(|c, now, actor| {
            let prev: Option<Option<Millis>> = c
                .query_opt(
                    "SELECT last_seen FROM users WHERE name = $1",
                    &[&actor.name],
                )?
                .map(|r| r.get(0));
            c.execute(
                "INSERT INTO users (name, role, last_seen) VALUES ($1, 'staff', $2) \
                 ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen",
                &[&actor.name, &now],
            )?;
            Ok(prev.flatten())
        })
    }

    fn check(&mut self) -> Result<Vec<String>> {
        self.read(|c| {
            let mut problems = Vec::new();
            let checks: [(&str, &str); 5] = [
                (
                    "SELECT id FROM items WHERE (lock_user IS NULL) <> (lock_time IS NULL) \
                     LIMIT 20",
                    "lock_user and lock_time disagree",
                ),
                (
                    "SELECT id FROM items WHERE state <> 'open' AND lock_user IS NOT NULL \
                     LIMIT 20",
                    "is not open but carries a lock",
                ),
                (
                    "SELECT id FROM items WHERE state NOT IN ('open','done','failed','cancelled') \
                     LIMIT 20",
                    "has an unknown state",
                ),
                (
                    "SELECT id FROM items WHERE lock_user IS NOT NULL AND lock_token < 1 LIMIT 20",
                    "is locked with no lock token",
                ),
                (
                    "SELECT i.id FROM items i WHERE NOT EXISTS \
                     (SELECT 1 FROM events e WHERE e.item_id = i.id AND e.kind = 'created') \
                     LIMIT 20",
                    "has no 'created' event",
                ),
            ];
            for (sql, what) in checks {
                for r in c.client.query(sql, &[])? {
                    let id: i64 = r.get(0);
                    problems.push(format!("item #{id} {what}"));
                }
            }
            for r in c.client.query(
                "SELECT coalesce(a.queue, k.queue), coalesce(a.state, k.state), \
                 coalesce(a.n, 0)::bigint, coalesce(k.n, 0)::bigint \
                 FROM (SELECT queue, state, count(*) AS n FROM items GROUP BY queue, state) a \
                 FULL OUTER JOIN (SELECT queue, state, sum(n) AS n FROM item_counts \
                 GROUP BY queue, state) k ON k.queue = a.queue AND k.state = a.state \
                 WHERE coalesce(a.n, 0) <> coalesce(k.n, 0)",
                &[],
            )? {
                let (q, s, actual, kept): (String, String, i64, i64) =
                    (r.get(0), r.get(1), r.get(2), r.get(3));
                problems.push(format!(
                    "counts: queue '{q}' has {actual} {s} items but the kept count says {kept}"
                ));
            }
            match schema_version(c)? {
                Some(v) if v == LATEST => {}
                v => problems.push(format!(
                    "schema version is {}, expected {LATEST}",
                    v.unwrap_or(0)
                )),
            }
            Ok(problems)
        })
    }

    fn backup(&mut self, _dest: &Path) -> Result<()> {
        Err(StoreError::Invalid(format!(
            "backup copies SQLite files only; for PostgreSQL use pg_dump, e.g. \
             pg_dump --format=custom --file=caseload.dump '{}'",
            self.shown
        )))
    }

    fn export(
        &mut self,
        state: Option<ItemState>,
        each: &mut dyn FnMut(&Item) -> std::io::Result<()>,
    ) -> Result<u64> {
        if self.conn.client.is_closed() {
            self.reconnect()?;
        }
        let state = state.map(|s| s.as_str());
        let sql = format!(
            "SELECT {ITEM_COLS} FROM items WHERE $1::text IS NULL OR state = $1 ORDER BY id"
        );
        let params: [&(dyn ToSql + Sync); 1] = [&state];
        let mut rows = self
            .conn
            .client
            .query_raw(sql.as_str(), params.iter().copied())
            .map_err(|e| map_err(&e))?;
        let mut n = 0;
        while let Some(r) = rows.next().map_err(|e| map_err(&e))? {
            each(&item_from_row(&r))
                .map_err(|e| StoreError::Database(format!("writing the export: {e}")))?;
            n += 1;
        }
        Ok(n)
    }
}

fn stats(c: &mut Conn, queues: &[QueueSettings]) -> TxResult<Stats> {
    let now = c.now()?;
    let mut by_state: Vec<StateCount> = ItemState::ALL
        .iter()
        .map(|s| StateCount {
            state: *s,
            count: 0,
        })
        .collect();
    let mut by_queue: Vec<QueueCount> = queues
        .iter()
        .map(|q| QueueCount {
            queue: q.name.clone(),
            open: 0,
            locked: 0,
            done: 0,
            failed: 0,
            cancelled: 0,
            paused: q.paused,
        })
        .collect();
    for r in c.query(
        "SELECT queue, state, sum(n)::bigint FROM item_counts GROUP BY queue, state",
        &[],
    )? {
        let (queue, state, n): (String, String, i64) = (r.get(0), r.get(1), r.get(2));
        let n = n.max(0) as u64;
        let Some(st) = ItemState::parse(&state) else {
            continue;
        };
        if let Some(sc) = by_state.iter_mut().find(|s| s.state == st) {
            sc.count += n;
        }
        if let Some(qc) = by_queue.iter_mut().find(|q| q.queue == queue) {
            match st {
                ItemState::Open => qc.open += n,
                ItemState::Done => qc.done += n,
                ItemState::Failed => qc.failed += n,
                ItemState::Cancelled => qc.cancelled += n,
            }
        }
    }
    let mut locks: Vec<(String, String, i64, i64)> = c
        .query(
            "SELECT i.lock_user, i.queue, i.lock_time, q.lock_seconds FROM items i \
             JOIN queues q ON q.name = i.queue WHERE i.lock_user IS NOT NULL",
            &[],
        )?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    locks.sort();
    let mut wip: Vec<UserWip> = Vec::new();
    let mut expired = 0u64;
    let mut lock_ages = Vec::with_capacity(locks.len());
    for (user, queue, time, secs) in &locks {
        if let Some(qc) = by_queue.iter_mut().find(|q| &q.queue == queue) {
            qc.locked += 1;
        }
        match wip.last_mut() {
            Some(w) if &w.user == user => w.held += 1,
            _ => wip.push(UserWip {
                user: user.clone(),
                held: 1,
            }),
        }
        if now >= time + secs * 1000 {
            expired += 1;
        }
        lock_ages.push(now - time);
    }
    let overdue: i64 = c
        .query_one(
            "SELECT count(*) FROM items WHERE state = 'open' AND due_at < $1",
            &[&now],
        )?
        .get(0);
    let hour = 3_600_000;
    let start = (now / hour - 23) * hour;
    let mut completed_per_hour = vec![0u64; 24];
    for r in c.query(
        "SELECT (at - $1) / 3600000, count(*) FROM events \
         WHERE kind = 'completed' AND at >= $1 AND at <= $2 GROUP BY 1",
        &[&start, &now],
    )? {
        let (h, n): (i64, i64) = (r.get(0), r.get(1));
        if (0..24).contains(&h) {
            completed_per_hour[h as usize] = n as u64;
        }
    }
    let mut open_ages = Vec::new();
    let mut prev = now + 1;
    for (label, lim) in AGE_BUCKETS {
        let lower = if lim == i64::MAX { i64::MIN } else { now - lim };
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM items WHERE state = 'open' AND created_at > $1 \
                 AND created_at < $2",
                &[&lower, &prev],
            )?
            .get(0);
        open_ages.push(Bucket {
            label: label.to_string(),
            count: n as u64,
        });
        prev = lower + 1;
    }
    let oldest_open = c
        .query_opt(
            "SELECT id, title, created_at FROM items WHERE state = 'open' \
             ORDER BY created_at, id LIMIT 1",
            &[],
        )?
        .map(|r| OldestItem {
            id: r.get(0),
            title: r.get(1),
            created_at: r.get(2),
        });
    Ok(Stats {
        at: now,
        by_state,
        by_queue,
        locked: locks.len() as u64,
        expired,
        overdue: overdue as u64,
        completed_per_hour,
        open_ages,
        lock_ages: bucket_counts(&lock_ages),
        wip,
        oldest_open,
    })
}
