//! The PostgreSQL store: one server shared by a team on many hosts.
//!
//! Same meaning, same events and same errors as the SQLite store. Every write is a short
//! transaction; a claim picks its row with `FOR NO KEY UPDATE SKIP LOCKED` and then makes the
//! conditional UPDATE, so parallel claims do not wait for each other. The lease lives in
//! the columns (`lock_user`, `lock_time`, `lock_token`), never in an open transaction.
//! All lock arithmetic uses the server's clock (the transaction's start, `now()`), read
//! with each write transaction's `BEGIN`, so users on hosts with skewed clocks agree on
//! expiry.
//! Every committed write bumps the schema's change counter in its COMMIT's round trip
//! (`caseload_changed()` after the COMMIT, see `txn`); `change_marker` reads the counter
//! (`caseload_changes()`) at most every [`POLL_EVERY`]. So a store holds one connection,
//! change notices included, and works the same through a pooler in transaction mode
//! (`open`: no session state, unnamed statements), where LISTEN could not.
//!
//! Files: `txn` (the one transaction guard: every transaction here ends on every path,
//! panics included), `open` (connection, settings, error mapping), `pooling` (what a pooler
//! in transaction mode asks), `tx` (the lock protocol's primitives), `reads`, `stats`,
//! `check`, `migrate`, `pgpass`, and `sql` (the statements the benchmark shares).

mod backoff;
mod check;
mod checked;
mod dedupe;
mod feed;
mod figures;
mod metrics;
pub mod migrate;
mod open;
mod pgpass;
mod pooling;
mod reads;
mod repair;
pub mod search;
pub mod sql;
mod stats;
mod tx;
mod txn;

use std::time::{Duration, Instant};

use postgres::Client;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::ToSql;

use self::open::{
    Conn, TxError, TxResult, commit_lost, connect_once, lost_before_commit, name_server, one_line,
};
pub use self::open::{PgOptions, Pooling, connect_url, map_err};
pub(crate) use self::open::{READ_ONLY_FIX, connection_reason, is_connection_error};
use self::tx::PgTx;
pub(crate) use self::tx::boxed;
use self::txn::{Failed, Kind};
use crate::domain::duplicates::Pair;
use crate::domain::queue_fields::FieldDef;
use crate::domain::sla::{Sla, Watched};
use crate::domain::texts::CannedText;
use crate::domain::{
    Actor, AuditEntry, Comment, Event, Item, Millis, QueueSettings, RealIdentity, Role, UserInfo,
};
use crate::store::Reads;
use crate::store::check::CheckRun;
use crate::store::clock::{Clock, system_clock};
use crate::store::error::{Result, StoreError};
use crate::store::list::Window;
use crate::store::ops::{Tx, TxCtx};
use crate::store::writes::Backend;
use crate::store::{ExportFilter, ListFilter, LostLock, ReasonCount, Report, ReportQuery, Stats};

pub use self::migrate::{FoldProblem, LATEST, SCHEMA, STEPS, fold_problem};
pub use self::search::{SearchIndex, search_index};

/// How long a deadlocked or serialisation-failed write is retried.
const RETRY_PATIENCE: Duration = Duration::from_secs(30);

/// How long a read of the change counter is trusted: other users' changes show within
/// about this long (the screen asks every tick, `claim --wait` more often).
const POLL_EVERY: Duration = Duration::from_millis(250);

/// The PostgreSQL implementation of the [`crate::store::Store`].
pub struct PgStore {
    conn: Conn,
    config: postgres::Config,
    /// The URL without its password, for messages.
    shown: String,
    actor: Actor,
    /// The session's database role (`session_user`), learnt at open.
    real: RealIdentity,
    opts: PgOptions,
    /// The field definitions write transactions read, per queue and version.
    defs: crate::store::ops::DefsCache,
    /// `SELECT <schema>.caseload_changes()`: the change counter, read by `change_marker`.
    changes_sql: String,
    /// The counter's last value read, and when.
    changes: Option<(i64, Instant)>,
    own_commits: u64,
    /// The client host's clock: used only to report skew and to tell the time between
    /// round trips, never to decide expiry.
    client_clock: Clock,
    /// The server's clock minus the client's, and when it was last measured: `now()`
    /// for a screen's countdowns needs no round trip (every write measures it anew).
    server_offset: Option<(i64, Instant)>,
    /// After a failed reconnect, when to try again and what the failure said (a screen
    /// ticking while the server is down must not stall on every tick).
    retry_at: Option<(Instant, String)>,
    backoff: backoff::Backoff,
    created: bool,
    /// The server refused changes when this store connected (a standby in recovery, or
    /// read-only by default): found at open and at every reconnect.
    read_only: bool,
}

/// How long a measured server-clock offset is trusted.
const OFFSET_TTL: Duration = Duration::from_secs(10);

/// What opening a store asks of the server: the schema is there (or is made, or brought
/// up to date), who the session's role is, which role the actor's name is bound to, and
/// the schema (quoted, with its dot) that names caseload's functions, and whether the
/// server refuses every change (a standby in recovery, or read-only by default).
fn opening(
    conn: &mut Conn,
    actor: &Actor,
    opts: &PgOptions,
    shown: &str,
) -> TxResult<(bool, RealIdentity, Option<String>, String, bool)> {
    if opts.must_exist {
        migrate::require_schema(conn, shown)?;
    }
    let created = migrate::migrate(conn, actor)?;
    let real = reads::real_identity(conn)?;
    if created && actor.name != real.login {
        // The creator chose their name; the role that created the schema may use it.
        conn.execute(
            "UPDATE users SET login = $1 WHERE name = $2",
            &[&real.login, &actor.name],
        )?;
    }
    let bound = reads::login_of(conn, &actor.name)?;
    let row = conn.query_one(
        &format!("SELECT current_schema()::text, ({})", sql::READ_ONLY_EXPR),
        &[],
    )?;
    let (schema, read_only): (Option<String>, bool) = (row.get(0), row.get(1));
    let schema = schema.map_or(String::new(), |s| {
        format!("\"{}\".", s.replace('"', "\"\""))
    });
    Ok((created, real, bound, schema, read_only))
}

/// Runs a read's statements: through a pooler in one transaction (which carries the
/// settings; one round trip more each side), else as they come.
fn once<T>(c: &mut Conn, wrap: bool, f: &mut impl FnMut(&mut Conn) -> TxResult<T>) -> TxResult<T> {
    if !wrap || c.pooled.is_none() || c.in_txn {
        return f(c);
    }
    txn::run(c, Kind::Read, |c, _| f(c)).map_err(Failed::into_tx)
}

impl PgStore {
    /// Connects to `url` (creating or migrating the schema when needed).
    pub fn open(url: &str, actor: Actor, opts: &PgOptions) -> Result<Self> {
        Self::open_with_clock(url, actor, opts, Box::new(system_clock))
    }

    /// Connects with a given client clock. The client clock never decides expiry (the
    /// server's does); it is only compared with the server's by [`PgStore::clock_skew`].
    #[doc(hidden)] // a test and benchmark hook, not part of the library's face
    pub fn open_with_clock(
        url: &str,
        actor: Actor,
        opts: &PgOptions,
        client_clock: Clock,
    ) -> Result<Self> {
        let (config, shown, client) = connect_url(url, opts)?;
        let mut conn = Conn::new(client, opts, open::pooled_settings(url, opts)?);
        let named = |e: TxError| name_server(e.into_store(), &shown);
        let (created, real, bound, schema, read_only) = if conn.pooled.is_some() {
            // Through a pooler, in one transaction: its settings name the schema.
            txn::run(&mut conn, Kind::Write, |c, _| {
                opening(c, &actor, opts, &shown)
            })
            .map_err(|e| named(e.into_tx()))?
        } else {
            opening(&mut conn, &actor, opts, &shown).map_err(named)?
        };
        crate::domain::user::may_act_as(&actor.name, &real, bound.as_deref())
            .map_err(StoreError::NotYou)?;
        // Named with its schema: through a pooler the statement after COMMIT runs where
        // no transaction's settings name it.
        conn.after_commit = sql::changed(&schema);
        Ok(PgStore {
            conn,
            config,
            shown,
            actor,
            real,
            opts: opts.clone(),
            defs: Default::default(),
            changes_sql: sql::changes(&schema),
            changes: None,
            own_commits: 0,
            client_clock,
            server_offset: None,
            retry_at: None,
            backoff: backoff::Backoff::default(),
            created,
            read_only,
        })
    }

    /// Moves this store's clock to the server's plus `ms` from now on (the demo writes
    /// its two weeks of history this way; tests skew clocks with `PgOptions`).
    pub(crate) fn set_clock_offset(&mut self, ms: i64) {
        self.opts.clock_offset_ms = ms;
        self.conn.now_sql = sql::now(ms);
    }

    /// For a bulk fill of made-up data only (the demo): commits on this session no longer
    /// wait for the server's disk (`synchronous_commit = off`: never a damaged database,
    /// at worst the last commits lost to a crash, and the demo is simply made again).
    pub(crate) fn fill_without_waiting_for_the_disk(&mut self) -> Result<()> {
        if self.conn.pooled.is_some() {
            return Ok(()); // a session setting: none through a pooler
        }
        self.conn
            .client
            .batch_execute("SET synchronous_commit = off")
            .map_err(|e| map_err(&e))
    }

    /// Makes search fold case as on SQLite where it does not (a schema restored on
    /// another server, or whose database's character type folds ASCII only): chooses
    /// again how (`caseload_refold()`, the schema owner only; `caseload init` runs it).
    /// Returns what is still wrong.
    pub fn repair_fold(&mut self) -> Result<Option<FoldProblem>> {
        let shown = self.shown.clone();
        let out = match self.conn.pooled.is_some() {
            true => txn::run(&mut self.conn, Kind::Write, |c, _| migrate::repair_fold(c))
                .map_err(Failed::into_tx),
            false => migrate::repair_fold(&mut self.conn),
        };
        out.map_err(|e| name_server(e.into_store(), &shown))
    }

    /// Adds the search's trigram index where pg_trgm is installed and this schema has
    /// none yet (`caseload init`; the owner of the tables only). Returns what search
    /// uses afterwards, and whether this call built the index.
    pub fn add_search_index(&mut self) -> Result<(SearchIndex, bool)> {
        let shown = self.shown.clone();
        let out = match self.conn.pooled.is_some() {
            true => txn::run(&mut self.conn, Kind::Write, |c, _| {
                migrate::add_search_index(c)
            })
            .map_err(Failed::into_tx),
            false => migrate::add_search_index(&mut self.conn),
        };
        self.conn.search_indexed = None;
        out.map_err(|e| name_server(e.into_store(), &shown))
    }

    /// True when this program created the schema.
    pub fn created_schema(&self) -> bool {
        self.created
    }

    /// The server's clock minus the client's, in ms (positive: the client is behind).
    #[doc(hidden)] // a test and benchmark hook, not part of the library's face
    pub fn clock_skew(&mut self) -> Result<i64> {
        let server = self.now()? - self.opts.clock_offset_ms;
        Ok(server - (self.client_clock)())
    }

    /// The backend process id of the main connection.
    #[doc(hidden)] // a test and benchmark hook, not part of the library's face
    pub fn backend_pid(&mut self) -> Result<i32> {
        self.read(|c| Ok(c.query_one("SELECT pg_backend_pid()", &[])?.get(0)))
    }

    /// The server as messages name it: the URL without its password.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// The main connection, for the bulk copy of `caseload migrate-to`.
    pub(crate) fn client_for_copy(&mut self) -> Result<&mut Client> {
        if self.conn.client.is_closed() {
            self.reconnect()?;
        }
        self.conn.cache.clear();
        Ok(&mut self.conn.client)
    }

    /// A new connection in place of a lost one. After a refusal the next attempt waits
    /// for a growing pause with jitter ([`backoff`]); meanwhile every call fails at once
    /// with the refusal's line, which says when it tries again.
    fn reconnect(&mut self) -> Result<()> {
        if let Some((at, why)) = &self.retry_at
            && Instant::now() < *at
        {
            return Err(StoreError::Connection(why.clone()));
        }
        match connect_once(&self.config, &self.shown, &self.opts) {
            Ok(Ok(client)) => {
                self.backoff.reset();
                self.retry_at = None;
                self.conn.client = client;
                self.conn.cache.clear();
                // A multi-host URL may land elsewhere now (a promoted standby).
                let asked = once(&mut self.conn, true, &mut |c: &mut Conn| {
                    Ok(c.query_one(sql::READ_ONLY, &[])?.get::<_, bool>(0))
                });
                if let Ok(r) = asked {
                    self.read_only = r;
                }
                Ok(())
            }
            Ok(Err(e)) => Err(e),
            Err((_, why)) => {
                let pause = self.backoff.next();
                let why = format!("{why}; trying again in {} s", pause.as_secs().max(1));
                self.retry_at = Some((Instant::now() + pause, why.clone()));
                Err(StoreError::Connection(why))
            }
        }
    }

    /// Remembers how far the server's clock is from the client's.
    fn measured(&mut self, server_now: Millis) {
        self.server_offset = Some((server_now - (self.client_clock)(), Instant::now()));
    }

    /// Runs a read, reconnecting once when the connection was lost.
    fn read<T>(&mut self, f: impl FnMut(&mut Conn) -> TxResult<T>) -> Result<T> {
        let out = self.read_inner(true, f);
        out.map_err(|e| self.named(e))
    }

    /// A lost connection's message names the server (without its password).
    fn named(&self, e: StoreError) -> StoreError {
        name_server(e, &self.shown)
    }

    /// [`PgStore::read`]; `wrap`: through a pooler, in a transaction of its own.
    fn read_inner<T>(
        &mut self,
        wrap: bool,
        mut f: impl FnMut(&mut Conn) -> TxResult<T>,
    ) -> Result<T> {
        // Inside a snapshot, a new connection would read outside it: the snapshot as a
        // whole is tried again instead.
        let in_snapshot = self.conn.in_txn;
        if self.conn.client.is_closed() && !in_snapshot {
            self.reconnect()?;
        }
        match once(&mut self.conn, wrap, &mut f) {
            Ok(v) => Ok(v),
            Err(TxError::Pg(e)) if is_connection_error(&e) && !in_snapshot => {
                tracing::warn!(error = %one_line(&e), "connection lost; reconnecting");
                self.reconnect()?;
                once(&mut self.conn, wrap, &mut f).map_err(TxError::into_store)
            }
            Err(e) => Err(e.into_store()),
        }
    }

    /// Runs `f` in one short transaction ([`txn`]) with the server's `now`; commits and
    /// notifies listeners on success, rolls back on every other path. Deadlocks and
    /// serialisation failures are retried; a connection lost before anything was done is
    /// replaced once.
    fn write_inner(&mut self, f: &mut dyn FnMut(&mut PgTx<'_>) -> Result<()>) -> Result<()> {
        let start = Instant::now();
        let mut reconnected = false;
        loop {
            if self.conn.client.is_closed() {
                self.reconnect()?;
            }
            let (actor, real, defs) = (&self.actor, &self.real, &self.defs);
            let (mut began, mut retry, mut lost) = (None, false, None);
            let out = txn::run(&mut self.conn, Kind::Write, |c, now| {
                began = Some(now);
                let mut tx = PgTx {
                    c,
                    ctx: TxCtx { now, actor, real },
                    defs,
                    retry: false,
                    lost: None,
                };
                let out = f(&mut tx);
                (retry, lost) = (tx.retry, tx.lost.take());
                Ok(out?)
            });
            if let Some(now) = began {
                self.measured(now);
            }
            let e = match out {
                Ok(()) => {
                    self.own_commits += 1;
                    return Ok(());
                }
                Err(Failed::Begin(TxError::Pg(e))) if is_connection_error(&e) && !reconnected => {
                    // Nothing was done yet: reconnecting and starting again is safe.
                    reconnected = true;
                    self.reconnect()?;
                    continue;
                }
                Err(Failed::Begin(e)) => e.into_store(),
                Err(Failed::Body(e)) => match lost {
                    Some(pe) => return Err(lost_before_commit(&self.shown, &pe)),
                    None => e.into_store(),
                },
                Err(Failed::Commit(e)) if is_connection_error(&e) => {
                    return Err(commit_lost(&self.shown, &e));
                }
                Err(Failed::Commit(e)) => {
                    retry |= open::is_retryable(&e);
                    map_err(&e)
                }
            };
            if retry && start.elapsed() < RETRY_PATIENCE {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            return Err(e);
        }
    }
}

impl Reads for PgStore {
    fn actor(&self) -> &Actor {
        &self.actor
    }

    fn real(&self) -> &RealIdentity {
        &self.real
    }

    fn now(&mut self) -> Result<Millis> {
        if let Some((offset, at)) = self.server_offset
            && at.elapsed() < OFFSET_TTL
        {
            return Ok((self.client_clock)() + offset);
        }
        let now = self.read(|c| c.now())?;
        self.measured(now);
        Ok(now)
    }

    fn change_marker(&mut self) -> Result<u64> {
        // Inside a snapshot the value read before it is kept: one read now could count a
        // change committed after the snapshot began, which the screen would then miss.
        let due = self
            .changes
            .is_none_or(|(_, at)| at.elapsed() >= POLL_EVERY);
        if due && !self.conn.in_txn {
            let sql = self.changes_sql.clone();
            let n: i64 = self.read_inner(false, |c| Ok(c.query_one_qualified(&sql)?.get(0)))?;
            self.changes = Some((n, Instant::now()));
        }
        let n = self.changes.map_or(0, |(n, _)| n as u64);
        Ok(n ^ (self.own_commits << 32))
    }

    fn snapshot(&mut self, f: &mut dyn FnMut(&mut dyn Reads) -> Result<()>) -> Result<()> {
        let mut once = || {
            if self.conn.client.is_closed() {
                self.reconnect()?;
            }
            txn::run(self, Kind::Snapshot, |s, _| Ok(f(s)?)).map_err(Failed::into_tx)
        };
        let out = match once() {
            Err(TxError::Pg(e)) if is_connection_error(&e) => {
                tracing::warn!(error = %one_line(&e), "connection lost; reconnecting");
                once()
            }
            out => out,
        };
        out.map_err(|e| self.named(e.into_store()))
    }

    fn item(&mut self, id: i64) -> Result<Item> {
        self.read(|c| reads::load_item(c, id)?.ok_or(StoreError::NotFound(id).into()))
    }

    fn history(&mut self, id: i64) -> Result<Vec<Event>> {
        self.read(|c| reads::history(c, id))
    }

    fn list(&mut self, filter: &ListFilter) -> Result<Vec<Item>> {
        let total = if Window::wants_total(filter) {
            Some(Reads::count(self, filter)?)
        } else {
            None
        };
        let Some(window) = Window::plan(filter, total) else {
            return Ok(Vec::new());
        };
        self.read(|c| {
            let now = c.now()?;
            reads::list(c, filter, window, now)
        })
    }

    fn count(&mut self, filter: &ListFilter) -> Result<u64> {
        self.read(|c| reads::count(c, filter))
    }

    fn takeable(&mut self, queue: Option<&str>, cap: u64) -> Result<u64> {
        let me = self.actor.name.clone();
        self.read(|c| reads::takeable(c, &me, queue, cap))
    }

    fn queues(&mut self) -> Result<Vec<QueueSettings>> {
        self.read(reads::queues)
    }

    fn fields(&mut self, queue: &str) -> Result<Vec<FieldDef>> {
        let all = self.read(|c| reads::fields(c, Some(queue)))?;
        Ok(all.into_iter().map(|(_, d)| d).collect())
    }

    fn fields_version(&mut self) -> Result<Option<i64>> {
        self.read(checked::fields_version).map(Some)
    }

    fn all_fields(&mut self) -> Result<Vec<(String, FieldDef)>> {
        self.read(|c| reads::fields(c, None))
    }

    fn texts(&mut self, queue: Option<&str>) -> Result<Vec<CannedText>> {
        self.read(|c| reads::texts(c, queue))
    }

    fn slas(&mut self) -> Result<Vec<Sla>> {
        self.read(|c| reads::slas(c, None))
    }

    fn sla_items(&mut self, since: Millis) -> Result<Vec<Watched>> {
        self.read(|c| {
            let rows = c.query(crate::store::sql::SLA_ITEMS, &[&since])?;
            Ok(rows
                .iter()
                .map(|r| Watched {
                    queue: r.get(0),
                    created_at: r.get(1),
                    due_at: r.get(2),
                    open: r.get::<_, String>(3) == "open",
                    finished_at: r.get(4),
                })
                .collect())
        })
    }

    fn queue(&mut self, name: &str) -> Result<QueueSettings> {
        self.read(|c| reads::known_queue(c, name))
    }

    fn role(&mut self, user: &str) -> Result<Role> {
        self.read(|c| reads::role_of(c, user))
    }

    fn users(&mut self) -> Result<Vec<UserInfo>> {
        self.read(reads::users)
    }

    fn comments(&mut self, id: i64) -> Result<Vec<Comment>> {
        self.read(|c| reads::comments(c, id))
    }

    fn audit(&mut self, who: Option<&str>, since: Millis) -> Result<Vec<AuditEntry>> {
        self.read(|c| reads::audit(c, who, since))
    }

    fn stats(&mut self) -> Result<Stats> {
        let facts = self.read(stats::facts)?;
        Ok(crate::store::stats::assemble(facts))
    }

    fn report(&mut self, q: &ReportQuery) -> Result<Report> {
        q.check()?;
        let facts = self.read(|c| figures::facts(c, q))?;
        crate::store::figures::assemble(q, facts)
    }

    fn reasons(&mut self, q: &ReportQuery) -> Result<Vec<ReasonCount>> {
        q.check()?;
        self.read(|c| {
            let rows = c.query(
                &crate::store::figures::reasons_sql(),
                &[&q.period.since, &q.period.until, &q.queue],
            )?;
            Ok(rows
                .iter()
                .map(|r| ReasonCount {
                    queue: r.get(0),
                    person: r.get(1),
                    kind: r.get(2),
                    reason: r.get(3),
                    count: r.get::<_, i64>(4).max(0) as u64,
                })
                .collect())
        })
        .map(crate::store::figures::ordered)
    }

    fn reviews(&mut self, q: &ReportQuery) -> Result<crate::store::figures::ReviewFigures> {
        use crate::store::figures::{
            REVIEW_BACKLOG, REVIEW_VERDICTS, ReviewBacklog, ReviewFigures, Verdict, people_reviews,
        };
        q.check()?;
        self.read(|c| {
            let count = |r: &postgres::Row, i| r.get::<_, i64>(i).max(0) as u64;
            let verdicts: Vec<Verdict> = c
                .query(
                    REVIEW_VERDICTS,
                    &[&q.period.since, &q.period.until, &q.queue],
                )?
                .iter()
                .map(|r| Verdict {
                    rejected: r.get::<_, String>(0) == "rejected",
                    reviewer: r.get(1),
                    maker: r.get(2),
                    wait_ms: r.get(3),
                })
                .collect();
            let people = people_reviews(&verdicts);
            let queues = c
                .query(REVIEW_BACKLOG, &[&q.queue])?
                .iter()
                .map(|r| ReviewBacklog {
                    queue: r.get(0),
                    waiting: count(r, 1),
                    oldest_at: r.get(2),
                })
                .collect();
            Ok(ReviewFigures { people, queues })
        })
    }

    fn completed_records(
        &mut self,
        q: &ReportQuery,
    ) -> Result<Vec<crate::domain::corrections::CompletedRecord>> {
        use crate::store::figures::{COMPLETED_CHANGES, COMPLETED_RECORDS, completed_records};
        q.check()?;
        self.read(|c| {
            let records = c
                .query(
                    COMPLETED_RECORDS,
                    &[&q.period.since, &q.period.until, &q.queue],
                )?
                .iter()
                .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
                .collect();
            let changes = c
                .query(COMPLETED_CHANGES, &[&q.period.since, &q.period.until])?
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
            Ok(completed_records(records, changes))
        })
    }

    fn last_item_id(&mut self) -> Result<i64> {
        self.read(reads::last_item_id)
    }

    fn item_keys(&mut self, ids: &[i64], rids: &[&str]) -> Result<Vec<(i64, Option<String>)>> {
        self.read(|c| reads::item_keys(c, ids, rids))
    }

    fn key_matches(
        &mut self,
        queue: &str,
        field: &str,
        key: &str,
        except: i64,
        limit: usize,
    ) -> Result<Vec<i64>> {
        self.read(|c| dedupe::key_matches(c, queue, field, key, except, limit))
    }

    fn pairs(&mut self, id: i64) -> Result<Vec<Pair>> {
        self.read(|c| dedupe::pairs(c, id))
    }

    fn all_pairs(&mut self) -> Result<Vec<Pair>> {
        self.read(dedupe::all_pairs)
    }

    fn events_by(&mut self, actor: &str, since: Millis) -> Result<Vec<Event>> {
        self.read(|c| reads::events_by(c, actor, since))
    }

    fn lost_locks(&mut self, user: &str, since: Millis) -> Result<Vec<LostLock>> {
        self.read(|c| reads::lost_locks(c, user, since))
    }

    fn check_with(&mut self, how: &CheckRun<'_>) -> Result<Vec<String>> {
        // The check runs its own transaction (for its portals): not inside another one.
        let beside = check::Beside {
            config: self.config.clone(),
            shown: self.shown.clone(),
            opts: self.opts.clone(),
        };
        let out = self.read_inner(false, |c| check::check(c, how, Some(&beside)));
        out.map_err(|e| self.named(e))
    }

    fn export(
        &mut self,
        filter: &ExportFilter,
        each: &mut dyn FnMut(&Item) -> std::io::Result<()>,
    ) -> Result<u64> {
        let sql = format!(
            "SELECT {} FROM items WHERE {} ORDER BY id",
            sql::ITEM_COLS,
            crate::store::sql::EXPORT_WHERE
        );
        self.stream(&sql, filter, &mut |r| {
            let item = crate::store::rows::item_from(&mut reads::PgCells::new(r))?;
            each(&item).map_err(|e| StoreError::Database(format!("writing the export: {e}")))
        })
    }

    fn export_events(
        &mut self,
        filter: &ExportFilter,
        each: &mut dyn FnMut(&Event) -> std::io::Result<()>,
    ) -> Result<u64> {
        let sql = crate::store::sql::export_events("e.detail::text", "json_build_object", "::text");
        self.stream(&sql, filter, &mut |r| {
            let event = crate::store::rows::event_from(&mut reads::PgCells::new(r))?;
            each(&event).map_err(|e| StoreError::Database(format!("writing the export: {e}")))
        })
    }

    fn export_comments(
        &mut self,
        filter: &ExportFilter,
        each: &mut dyn FnMut(&Comment) -> std::io::Result<()>,
    ) -> Result<u64> {
        self.stream(crate::store::sql::EXPORT_COMMENTS, filter, &mut |r| {
            let comment = reads::comment_from(r);
            each(&comment).map_err(|e| StoreError::Database(format!("writing the export: {e}")))
        })
    }

    fn feed_mark(&mut self) -> Result<crate::store::feed::FeedMark> {
        self.read(feed::feed_mark)
    }

    fn feed(
        &mut self,
        after: i64,
        upto: i64,
        limit: usize,
    ) -> Result<Vec<crate::store::feed::FeedEvent>> {
        self.read(|c| feed::feed(c, after, upto, limit))
    }

    fn metrics(&mut self) -> Result<crate::store::metrics::Metrics> {
        let facts = self.read(metrics::facts)?;
        Ok(crate::store::metrics::assemble(facts))
    }
}

impl txn::OnConn for PgStore {
    fn conn(&mut self) -> &mut Conn {
        &mut self.conn
    }
}

impl Backend for PgStore {
    fn rebuild_figure_tables(&mut self) -> Result<u64> {
        let out = self.repair_figures();
        out.map_err(|e| self.named(e))
    }

    fn refuses_writes(&self) -> Option<StoreError> {
        self.read_only
            .then(|| StoreError::ReadOnly(open::READ_ONLY_FIX.to_string()))
    }

    fn transact(&mut self, f: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()> {
        let out = self.write_inner(&mut |tx| f(tx));
        out.map_err(|e| self.named(e))
    }

    /// Indexes rows an import left for later: one statement, committed on its own; no
    /// change is counted (searches answer the same before and after).
    fn index_batch(&mut self, above: i64, budget: usize) -> Result<usize> {
        self.read(|c| search::index_some(c, above, budget))
    }
}

impl PgStore {
    /// Streams the rows of an export query with the filter's three parameters.
    fn stream(
        &mut self,
        sql: &str,
        f: &ExportFilter,
        each: &mut dyn FnMut(&postgres::Row) -> Result<()>,
    ) -> Result<u64> {
        if self.conn.client.is_closed() {
            self.reconnect()?;
        }
        let state = f.state.map(|s| s.as_str());
        let params: [&(dyn ToSql + Sync); 3] = [&state, &f.queue, &f.since];
        let pooled = self.conn.pooled.is_some();
        let mut go = |c: &mut Conn| -> TxResult<u64> {
            let mut rows = match pooled {
                true => c.client.query_typed_raw(sql, pooling::typed(&params))?,
                false => c.client.query_raw(sql, params.iter().copied())?,
            };
            let mut n = 0;
            while let Some(r) = rows.next()? {
                each(&r)?;
                n += 1;
            }
            Ok(n)
        };
        let out = match pooled {
            true => txn::run(&mut self.conn, Kind::Read, |c, _| go(c)).map_err(Failed::into_tx),
            false => go(&mut self.conn),
        };
        out.map_err(|e| self.named(e.into_store()))
    }
}
