//! The SQLite store: one file shared by everyone on a host.
//!
//! WAL, `synchronous=FULL`, foreign keys on, every write in `BEGIN IMMEDIATE` (so a write
//! transaction never fails half-way with SQLITE_BUSY), and a busy handler of short
//! jittered sleeps instead of SQLite's default back-off, which lets one process starve for
//! seconds while others re-take the lock. `now` is read after the write lock is taken, so
//! lock times are ordered like the writes themselves.
//!
//! Files: `txn` (the one transaction guard: every transaction here ends on every path,
//! panics included), `open` (what is decided before SQLite sees a file, and explaining
//! storage faults), `busy` (waiting for the write lock), `tx` (the lock protocol's
//! primitives),
//! `rows` (reading rows another program may have spoiled), `reads`, `stats`, `check`,
//! `migrate`, and `sql` (the statements the benchmark shares).

pub mod busy;
pub mod check;
mod check_history;
mod check_rows;
mod dedupe;
mod feed;
mod figures;
mod insert;
mod metrics;
pub mod migrate;
pub(crate) mod open;
mod postings;
mod reads;
pub(crate) mod rows;
mod search;
mod search_plan;
pub mod sql;
mod stats;
mod tx;
mod txn;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use self::busy::{BUSY_PATIENCE, busy_sleep, retry_busy};
use self::migrate::Migration;
use self::open::Facts;
use self::tx::SqliteTx;
use self::txn::{Failed, Kind, Stage};
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
use crate::store::ops::{Tx, TxCtx};
use crate::store::writes::Backend;
use crate::store::{ExportFilter, ListFilter, LostLock, ReasonCount, Report, ReportQuery, Stats};

/// The size of the -wal past which the last connection to close checkpoints it and
/// truncates it. Short-lived connections (one command) do not checkpoint when they close:
/// that costs three fsyncs and the next writer a fourth. But a connection that opens a
/// file nobody else has open rebuilds the -wal's index from the -wal itself and forgets
/// which frames were already copied, so without another connection open the -wal would
/// only grow; the last one to close past this size cuts it back. Below SQLite's own
/// automatic checkpoint (1000 pages), so that one does not run again in every call.
pub const WAL_BOUND: u64 = 1 << 20;

/// Every connection's page cache, in KiB (an import's peak memory is bounded by it:
/// issue 26 §4, 64 MiB).
const CACHE_KIB: u32 = 30 * 1024;
/// The page cache of the search indexer beside an import (it reads each row once).
const BESIDE_CACHE_KIB: u32 = 1024;
/// The page cache of an import with the search indexer beside it: the indexer's batch
/// (up to ~8 MiB of trigram lists and kept words) and its cache come out of the import's.
const IMPORT_CACHE_KIB: u32 = 18 * 1024;

/// How to open a database file.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Open even on a network filesystem.
    pub allow_network_fs: bool,
    /// Accept an existing empty (0-byte) file as a new database (`caseload init`).
    pub allow_empty: bool,
    /// Create missing parent directories (the default location).
    pub create_dirs: bool,
    /// Never create the file; refuse a missing one.
    pub must_exist: bool,
}

/// The SQLite implementation of the [`crate::store::Store`].
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
    actor: Actor,
    /// The OS user running this process (root is privileged: it can edit the file anyway).
    real: RealIdentity,
    clock: Clock,
    read_only: bool,
    own_commits: u64,
    /// The last search's plan (a list and then a count of it share one).
    plans: search_plan::PlanCache,
    /// The field definitions write transactions read, per queue and version.
    defs: crate::store::ops::DefsCache,
}

impl SqliteStore {
    /// Opens (creating and migrating when needed) the database at `path`.
    pub fn open(path: &Path, actor: Actor, opts: &OpenOptions) -> Result<Self> {
        Self::open_with_clock(path, actor, opts, Box::new(system_clock))
    }

    /// Opens with a given clock (tests).
    #[doc(hidden)] // a test and benchmark hook, not part of the library's face
    pub fn open_with_clock(
        path: &Path,
        actor: Actor,
        opts: &OpenOptions,
        clock: Clock,
    ) -> Result<Self> {
        let plan = open::plan(path, opts)?;
        let read_only = plan.read_only;
        crate::sys::guard_shared_memory();
        let conn = Connection::open_with_flags(&plan.target, plan.flags)
            .map_err(|e| open::explain(path, Facts::of_error(&e), map_err(e)))?;
        let migration = Self::prepare(&conn, path, read_only, &actor, clock())
            .map_err(|e| open::explain(path, Facts::of(&conn), e))?;
        let real = crate::store::identity::real_os_user();
        if migration == Migration::Created && actor.name != real.login {
            // The creator chose their name; the login that created the file may use it.
            conn.execute(
                "UPDATE users SET login = ?1 WHERE name = ?2",
                rusqlite::params![real.login, actor.name],
            )
            .map_err(map_err)?;
        }
        let bound = tx::login_of(&conn, &actor.name)
            .map_err(|e| open::explain(path, Facts::of(&conn), e))?;
        crate::domain::user::may_act_as(&actor.name, &real, bound.as_deref())
            .map_err(StoreError::NotYou)?;
        Ok(SqliteStore {
            conn,
            path: path.to_path_buf(),
            actor,
            real,
            clock,
            read_only,
            own_commits: 0,
            plans: search_plan::PlanCache::default(),
            defs: crate::store::ops::DefsCache::default(),
        })
    }

    /// Readies a fresh connection: busy handler, pragmas, and the schema (created or
    /// migrated when writable).
    fn prepare(
        conn: &Connection,
        path: &Path,
        read_only: bool,
        actor: &Actor,
        now: Millis,
    ) -> Result<Migration> {
        if !read_only {
            open::prepare_writer(conn);
        }
        conn.busy_handler(Some(busy_sleep)).map_err(map_err)?;
        // Room for every statement a claim, a complete with its field checks, an import
        // batch and the TUI's reads use (rusqlite keeps 16): a statement pushed out is
        // parsed and planned again on its next use.
        conn.set_prepared_statement_cache_capacity(128);
        search::register(conn).map_err(map_err)?;
        conn.execute_batch("PRAGMA foreign_keys = ON")
            .map_err(map_err)?;
        // Reading the schema version makes SQLite read the header: not-a-database shows
        // here, and a WAL left by a crash or a cut-short checkpoint is recovered here.
        conn.query_row("PRAGMA schema_version", [], |r| r.get::<_, i64>(0))
            .map_err(map_err)?;
        // A 30 MiB page cache (SQLite's default is 2 MiB): an import batch of 2000 rows on a
        // large file dirties more pages than 2 MiB holds, and SQLite then spills them to the
        // WAL mid-transaction and reads them back (benches/queue.rs, BENCHMARKS.md). 30, not
        // 32: a 1M-row import with ten typed fields peaked at 64.03 MiB with 32 (issue 26 §4:
        // ≤ 64 MiB), and the import was no slower with 30 (BENCHMARKS.md, "Verification work").
        conn.execute_batch(&format!("PRAGMA cache_size = -{CACHE_KIB}"))
            .map_err(map_err)?;
        migrate::check_ours(conn)?;
        if read_only {
            let v: i64 = conn
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .map_err(map_err)?;
            if v != migrate::LATEST {
                return Err(StoreError::ReadOnly(format!(
                    "the file is read-only and its schema (version {v}) is not this program's \
                     ({}); it cannot be used without write access",
                    migrate::LATEST
                )));
            }
            return Ok(Migration::UpToDate);
        }
        retry_busy(|| {
            let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
            Ok(mode)
        })?;
        open::align_sidecars(path);
        conn.execute_batch("PRAGMA synchronous = FULL")
            .map_err(map_err)?;
        let mut attempt = Instant::now();
        loop {
            match migrate::migrate(conn, actor, now) {
                Err(StoreError::Busy(_)) if attempt.elapsed() < BUSY_PATIENCE => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => return Err(e),
                Ok(m) => return Ok(m),
            }
            if attempt.elapsed() > BUSY_PATIENCE {
                attempt = Instant::now();
            }
        }
    }

    /// Runs `f` in one write transaction (`BEGIN IMMEDIATE`, see [`txn`]), given the
    /// connection and the transaction's context, whose `now` is read after the write lock
    /// is held: committed when it returns `Ok`, rolled back on every other path.
    fn immediate<T>(&mut self, f: impl FnOnce(&Connection, TxCtx<'_>) -> Result<T>) -> Result<T> {
        if self.read_only {
            return Err(open::read_only_error(&self.path));
        }
        let (clock, actor, real) = (&self.clock, &self.actor, &self.real);
        let out = txn::run(&mut &self.conn, Kind::Write, |c| {
            let now = clock();
            f(c, TxCtx { now, actor, real })
        });
        match out {
            Ok(v) => {
                self.own_commits += 1;
                Ok(v)
            }
            Err(Failed {
                stage: Stage::Commit,
                facts,
                error,
            }) => Err(open::explain_commit(&self.path, facts, error)),
            Err(Failed { facts, error, .. }) => Err(open::explain(&self.path, facts, error)),
        }
    }

    /// For a bulk fill of made-up data only (the demo): commits on this connection no
    /// longer wait for the disk (`synchronous = NORMAL`; in WAL mode the file cannot be
    /// corrupted by it, only the last commits lost to a power cut, and the demo is simply
    /// made again). Everyone else keeps `synchronous = FULL`.
    pub(crate) fn fill_without_waiting_for_the_disk(&self) -> Result<()> {
        self.conn
            .execute_batch("PRAGMA synchronous = NORMAL")
            .map_err(map_err)
    }

    /// For a connection that reads rows once, in order (the search indexer beside an
    /// import): a page cache of [`BESIDE_CACHE_KIB`] instead of [`CACHE_KIB`].
    pub(crate) fn small_cache(&self) -> Result<()> {
        self.conn
            .execute_batch(&format!("PRAGMA cache_size = -{BESIDE_CACHE_KIB}"))
            .map_err(map_err)
    }

    /// The raw connection (benchmarks and tests).
    #[doc(hidden)] // a test and benchmark hook, not part of the library's face
    pub fn connection(&self) -> &Connection {
        &self.conn
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        if !self.read_only {
            open::before_close(&self.conn, &self.path);
        }
    }
}

/// Maps SQLite's errors to the store's.
pub fn map_err(e: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode as C;
    match &e {
        rusqlite::Error::SqliteFailure(f, msg) => {
            let text = msg.clone().unwrap_or_else(|| f.to_string());
            match f.code {
                C::NotADatabase => StoreError::Unusable(
                    "the file is not a caseload database (not an SQLite file)".into(),
                ),
                C::DatabaseCorrupt => StoreError::Corrupt(format!(
                    "the database is damaged (SQLite: {text}); keep the file and any -wal \
                     beside it as they are, run `caseload check` to see what is affected, and \
                     copy what can be read with `caseload backup NEW.db`"
                )),
                C::ReadOnly => StoreError::ReadOnly(format!("{text}; changes are refused")),
                C::DatabaseBusy | C::DatabaseLocked => StoreError::Busy(format!(
                    "{text} (another program held the write lock too long)"
                )),
                C::CannotOpen => StoreError::Unusable(format!("cannot open the database: {text}")),
                C::DiskFull => StoreError::Storage {
                    code: f.extended_code,
                    message: "disk full: free space on the database's filesystem, then retry"
                        .into(),
                },
                // Growing the -shm fails for want of space (SQLite's own extension or
                // caseload's allocation guard): a full disk, whatever errno said.
                C::SystemIoFailure
                    if f.extended_code == rusqlite::ffi::SQLITE_IOERR_SHMSIZE
                        || crate::sys::take_shm_no_space() =>
                {
                    StoreError::Storage {
                        code: rusqlite::ffi::SQLITE_FULL,
                        message: "disk full: free space on the database's filesystem, then retry"
                            .into(),
                    }
                }
                C::SystemIoFailure => StoreError::Storage {
                    code: f.extended_code,
                    message: format!("I/O error ({text})"),
                },
                C::ConstraintViolation => StoreError::Invalid(format!("refused: {text}")),
                _ => StoreError::Database(text),
            }
        }
        _ => StoreError::Database(e.to_string()),
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        map_err(e)
    }
}

impl Reads for SqliteStore {
    fn actor(&self) -> &Actor {
        &self.actor
    }

    fn real(&self) -> &RealIdentity {
        &self.real
    }

    fn now(&mut self) -> Result<Millis> {
        Ok((self.clock)())
    }

    fn change_marker(&mut self) -> Result<u64> {
        let v: i64 = self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))?;
        Ok((v as u64) ^ (self.own_commits << 32))
    }

    fn snapshot(&mut self, f: &mut dyn FnMut(&mut dyn Reads) -> Result<()>) -> Result<()> {
        txn::run(self, Kind::Read, |s| f(s)).map_err(|e| e.error)
    }

    fn item(&mut self, id: i64) -> Result<Item> {
        reads::load_item(&self.conn, id)?.ok_or(StoreError::NotFound(id))
    }

    fn history(&mut self, id: i64) -> Result<Vec<Event>> {
        reads::history(&self.conn, id)
    }

    fn list(&mut self, filter: &ListFilter) -> Result<Vec<Item>> {
        reads::list(&self.conn, &mut self.plans, filter, (self.clock)())
    }

    fn count(&mut self, filter: &ListFilter) -> Result<u64> {
        reads::count(&self.conn, &mut self.plans, filter, (self.clock)())
    }

    fn takeable(&mut self, queue: Option<&str>, cap: u64) -> Result<u64> {
        reads::takeable(&self.conn, &self.actor.name, queue, cap, (self.clock)())
    }

    fn queues(&mut self) -> Result<Vec<QueueSettings>> {
        reads::queues(&self.conn)
    }

    fn fields_version(&mut self) -> Result<Option<i64>> {
        let n = self
            .conn
            .query_row("SELECT n FROM fields_version", [], |r| r.get(0))
            .map_err(map_err)?;
        Ok(Some(n))
    }

    fn fields(&mut self, queue: &str) -> Result<Vec<FieldDef>> {
        Ok(reads::fields(&self.conn, Some(queue))?
            .into_iter()
            .map(|(_, d)| d)
            .collect())
    }

    fn all_fields(&mut self) -> Result<Vec<(String, FieldDef)>> {
        reads::fields(&self.conn, None)
    }

    fn texts(&mut self, queue: Option<&str>) -> Result<Vec<CannedText>> {
        reads::texts(&self.conn, queue)
    }

    fn slas(&mut self) -> Result<Vec<Sla>> {
        reads::slas(&self.conn, None)
    }

    fn sla_items(&mut self, since: Millis) -> Result<Vec<Watched>> {
        let mut st = self.conn.prepare(crate::store::sql::SLA_ITEMS)?;
        let rows = st.query_map([since], |r| {
            Ok(Watched {
                queue: r.get(0)?,
                created_at: r.get(1)?,
                due_at: r.get(2)?,
                open: r.get::<_, String>(3)? == "open",
                finished_at: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn queue(&mut self, name: &str) -> Result<QueueSettings> {
        match reads::load_queue(&self.conn, name)? {
            Some(q) => Ok(q),
            None => Err(StoreError::UnknownQueue {
                name: name.to_string(),
                known: reads::queues(&self.conn)?
                    .into_iter()
                    .map(|q| q.name)
                    .collect(),
            }),
        }
    }

    fn role(&mut self, user: &str) -> Result<Role> {
        tx::role_of(&self.conn, user)
    }

    fn users(&mut self) -> Result<Vec<UserInfo>> {
        reads::users(&self.conn)
    }

    fn comments(&mut self, id: i64) -> Result<Vec<Comment>> {
        reads::comments(&self.conn, id)
    }

    fn audit(&mut self, who: Option<&str>, since: Millis) -> Result<Vec<AuditEntry>> {
        reads::audit(&self.conn, who, since)
    }

    fn stats(&mut self) -> Result<Stats> {
        stats::stats(&self.conn, (self.clock)())
    }

    fn report(&mut self, q: &ReportQuery) -> Result<Report> {
        q.check()?;
        figures::report(&self.conn, (self.clock)(), q)
    }

    fn reasons(&mut self, q: &ReportQuery) -> Result<Vec<ReasonCount>> {
        q.check()?;
        let mut st = self.conn.prepare(&crate::store::figures::reasons_sql())?;
        let rows = st.query_map(
            rusqlite::params![q.period.since, q.period.until, q.queue],
            |r| {
                Ok(ReasonCount {
                    queue: r.get(0)?,
                    person: r.get(1)?,
                    kind: r.get(2)?,
                    reason: r.get(3)?,
                    count: r.get::<_, i64>(4)?.max(0) as u64,
                })
            },
        )?;
        let rows = rows.collect::<rusqlite::Result<_>>()?;
        Ok(crate::store::figures::ordered(rows))
    }

    fn reviews(&mut self, q: &ReportQuery) -> Result<crate::store::figures::ReviewFigures> {
        use crate::store::figures::{
            REVIEW_BACKLOG, REVIEW_VERDICTS, ReviewBacklog, ReviewFigures, Verdict, people_reviews,
        };
        q.check()?;
        let count = |r: &rusqlite::Row<'_>, i| r.get::<_, i64>(i).map(|n| n.max(0) as u64);
        let mut st = self.conn.prepare(REVIEW_VERDICTS)?;
        let verdicts: Vec<Verdict> = st
            .query_map(
                rusqlite::params![q.period.since, q.period.until, q.queue],
                |r| {
                    Ok(Verdict {
                        rejected: r.get::<_, String>(0)? == "rejected",
                        reviewer: r.get(1)?,
                        maker: r.get(2)?,
                        wait_ms: r.get(3)?,
                    })
                },
            )?
            .collect::<rusqlite::Result<_>>()?;
        let people = people_reviews(&verdicts);
        let mut st = self.conn.prepare(REVIEW_BACKLOG)?;
        let queues = st
            .query_map([&q.queue], |r| {
                Ok(ReviewBacklog {
                    queue: r.get(0)?,
                    waiting: count(r, 1)?,
                    oldest_at: r.get(2)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(ReviewFigures { people, queues })
    }

    fn completed_records(
        &mut self,
        q: &ReportQuery,
    ) -> Result<Vec<crate::domain::corrections::CompletedRecord>> {
        use crate::store::figures::{COMPLETED_CHANGES, COMPLETED_RECORDS, completed_records};
        q.check()?;
        // One read transaction: the records and their corrections from one snapshot.
        txn::run(self, Kind::Read, |s| {
            let records = s
                .conn
                .prepare(COMPLETED_RECORDS)?
                .query_map(
                    rusqlite::params![q.period.since, q.period.until, q.queue],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let changes = s
                .conn
                .prepare(COMPLETED_CHANGES)?
                .query_map(rusqlite::params![q.period.since, q.period.until], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(completed_records(records, changes))
        })
        .map_err(|e| e.error)
    }

    fn last_item_id(&mut self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("SELECT coalesce(max(id), 0) FROM items", [], |r| r.get(0))?)
    }

    fn item_keys(
        &mut self,
        ids: &[i64],
        request_ids: &[&str],
    ) -> Result<Vec<(i64, Option<String>)>> {
        reads::item_keys(&self.conn, ids, request_ids)
    }

    fn key_matches(
        &mut self,
        queue: &str,
        field: &str,
        key: &str,
        except: i64,
        limit: usize,
    ) -> Result<Vec<i64>> {
        dedupe::key_matches(&self.conn, queue, field, key, except, limit)
    }

    fn pairs(&mut self, id: i64) -> Result<Vec<Pair>> {
        dedupe::pairs(&self.conn, id)
    }

    fn all_pairs(&mut self) -> Result<Vec<Pair>> {
        dedupe::all_pairs(&self.conn)
    }

    fn events_by(&mut self, actor: &str, since: Millis) -> Result<Vec<Event>> {
        reads::events_by(&self.conn, actor, since)
    }

    fn lost_locks(&mut self, user: &str, since: Millis) -> Result<Vec<LostLock>> {
        reads::lost_locks(&self.conn, user, since)
    }

    fn check_with(&mut self, how: &CheckRun<'_>) -> Result<Vec<String>> {
        Ok(check::run(&self.conn, Some(&self.path), how))
    }

    fn export(
        &mut self,
        filter: &ExportFilter,
        each: &mut dyn FnMut(&Item) -> std::io::Result<()>,
    ) -> Result<u64> {
        reads::export(&self.conn, filter, each)
    }

    fn export_events(
        &mut self,
        filter: &ExportFilter,
        each: &mut dyn FnMut(&Event) -> std::io::Result<()>,
    ) -> Result<u64> {
        reads::export_events(&self.conn, filter, each)
    }

    fn export_comments(
        &mut self,
        filter: &ExportFilter,
        each: &mut dyn FnMut(&Comment) -> std::io::Result<()>,
    ) -> Result<u64> {
        reads::export_comments(&self.conn, filter, each)
    }

    fn feed_mark(&mut self) -> Result<crate::store::feed::FeedMark> {
        feed::feed_mark(&self.conn)
    }

    fn feed(
        &mut self,
        after: i64,
        upto: i64,
        limit: usize,
    ) -> Result<Vec<crate::store::feed::FeedEvent>> {
        feed::feed(&self.conn, after, upto, limit)
    }

    fn metrics(&mut self) -> Result<crate::store::metrics::Metrics> {
        metrics::metrics(&self.conn, (self.clock)())
    }
}

impl txn::OnConnection for SqliteStore {
    fn connection(&self) -> &Connection {
        &self.conn
    }
}

impl Backend for SqliteStore {
    /// In one write transaction (SQLite has one writer at a time): the figures' tables
    /// emptied and filled again from the history ([`crate::store::sql::rebuild_figures`]).
    fn rebuild_figure_tables(&mut self) -> Result<u64> {
        let defs = self.defs.clone();
        self.immediate(|c, ctx| {
            let mut tx = SqliteTx {
                c,
                ctx,
                defs: &defs,
            };
            crate::store::ops::require_supervisor(&mut tx, "rebuild the figures")?;
            let mut n = 0;
            for sql in crate::store::sql::rebuild_figures() {
                n = c.execute(&sql, [])?;
            }
            Ok(n as u64)
        })
    }

    /// Skips the write lock altogether when nothing is behind (the usual idle tick). The
    /// rows are read and cut into trigrams in a read transaction, outside the write lock
    /// (an import beside it keeps writing meanwhile); the write transaction checks that
    /// nothing it read changed and writes the batch ([`search::write_batch`]). When
    /// another indexer wrote a batch in between, the batch is read again inside the write
    /// transaction.
    fn index_batch(&mut self, _above: i64, budget: usize) -> Result<usize> {
        if self.read_only || !search::behind(&self.conn)? {
            return Ok(0);
        }
        let read = txn::run(&mut &self.conn, Kind::Read, |c| {
            search::read_batch(c, budget)
        })
        .map_err(|f| f.error)?;
        if let Some(n) = self.immediate(|c, _| search::write_batch(c, read, true))? {
            return Ok(n);
        }
        self.immediate(|c, _| search::index_some(c, budget))
    }

    /// Batches of up to 20,000 rows, a second apart while the import writes: the index
    /// writes one row per trigram per batch, so fewer, larger batches write less and a
    /// lookup reads fewer rows ([`crate::import::INDEX_TARGET`]).
    fn beside_pace(&self) -> (usize, Duration) {
        (20_000, Duration::from_secs(1))
    }

    /// The import's page cache shrinks by what the indexer beside it holds (its batch,
    /// its own small cache): [`IMPORT_CACHE_KIB`].
    fn leave_room_for_an_indexer(&mut self) -> Result<()> {
        self.conn
            .execute_batch(&format!("PRAGMA cache_size = -{IMPORT_CACHE_KIB}"))
            .map_err(map_err)
    }

    fn refuses_writes(&self) -> Option<StoreError> {
        self.read_only.then(|| open::read_only_error(&self.path))
    }

    /// One write transaction ([`SqliteStore::immediate`]).
    fn transact(&mut self, f: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()> {
        let defs = self.defs.clone();
        self.immediate(|c, ctx| {
            f(&mut SqliteTx {
                c,
                ctx,
                defs: &defs,
            })
        })
    }
}

impl SqliteStore {
    /// Writes a consistent copy of the database to `dest`, a new file (`caseload
    /// backup`; PostgreSQL has `pg_dump`).
    pub fn backup(&mut self, dest: &Path) -> Result<()> {
        let run = || -> Result<()> {
            let tmp = backup_tempfile(dest)?;
            let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
                | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW
                | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
            let mut dst = Connection::open_with_flags(tmp.path(), flags)?;
            {
                let b = rusqlite::backup::Backup::new(&self.conn, &mut dst)?;
                b.run_to_completion(1024, Duration::from_millis(0), None)?;
            }
            dst.execute_batch("PRAGMA journal_mode = DELETE")?;
            drop(dst);
            same_file(&tmp)?;
            // Fails rather than replace a file (or a link) created at `dest` meanwhile.
            tmp.persist_noclobber(dest).map_err(|e| {
                StoreError::Invalid(format!(
                    "{}: cannot put the backup there ({}); nothing was written there",
                    dest.display(),
                    e.error
                ))
            })?;
            Ok(())
        };
        // Failures here concern the copy: a full disk is the copy's disk. A failed copy's
        // temporary file is removed when `tmp` drops.
        run().map_err(|e| match e {
            StoreError::Invalid(_) => e,
            e => open::explain(dest, Facts::default(), e),
        })
    }
}

/// The temporary file a backup is written to before it is renamed to `dest`: created
/// beside `dest` with a random name, exclusively and never through a link (`O_CREAT |
/// O_EXCL`, mode 0600), so that nobody who may write the directory can steer the copy
/// into another file by planting links. `dest` itself must not exist, not even as a link.
fn backup_tempfile(dest: &Path) -> Result<tempfile::NamedTempFile> {
    match std::fs::symlink_metadata(dest) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(StoreError::Invalid(format!(
                "{} is a symbolic link; give the backup a new file name",
                dest.display()
            )));
        }
        Ok(_) => {
            return Err(StoreError::Invalid(format!(
                "{} exists already; choose a new file name",
                dest.display()
            )));
        }
        Err(_) => {}
    }
    let dir = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "backup".into());
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".partial")
        .tempfile_in(&dir)
        .map_err(|e| {
            StoreError::Invalid(format!(
                "{}: cannot create the backup's temporary file there: {e}",
                dir.display()
            ))
        })
}

/// Refuses a temporary file that was swapped for another while the copy was written
/// (its name now names a different file than the one created).
fn same_file(tmp: &tempfile::NamedTempFile) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let named = std::fs::symlink_metadata(tmp.path());
    let ours = tmp.as_file().metadata();
    let same =
        matches!((&ours, &named), (Ok(a), Ok(b)) if (a.dev(), a.ino()) == (b.dev(), b.ino()));
    if !same {
        return Err(StoreError::Invalid(format!(
            "{}: the backup's temporary file was replaced while it was written; nothing was \
             backed up (someone else may write that directory)",
            tmp.path().display()
        )));
    }
    Ok(())
}
