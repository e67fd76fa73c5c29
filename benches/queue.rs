//! The engine benchmark: caseload's `SqliteStore` (through the `Store` trait) against a
//! raw-rusqlite baseline that runs the same SQL statements with the same settings (WAL,
//! `synchronous=FULL`, `BEGIN IMMEDIATE`, a busy handler of short jittered sleeps) but
//! none of caseload's layers.
//!
//! Run all sections with `cargo bench --bench queue`, or some of them by name:
//! `cargo bench --bench queue -- claim fairness`. Sections: `cycles`, `fairness`, `claim`,
//! `enqueue`, `import`, `screen`, `pg`, `figures` (see `queue/figures.rs`), `next`
//! (complete-and-next against the two-transaction cycle, SQLite and PostgreSQL), `cli` (a
//! process per call, see `queue/cli.rs`), `ceiling` (against `../shared/sqlite-limit`, see
//! `queue/ceiling.rs`), `check` (`caseload check` on big histories, see `queue/check.rs`),
//! `dup` (`caseload similar` at 1M items, see `queue/duplicates.rs`; `dup-sqlite` and `dup-pg`
//! run one backend's half), `metrics` and `follow`
//! (see `queue/plumbing.rs`), `verify` (typed fields against the same work without, see
//! `queue/verify.rs`), `work` (`caseload work` against the raw claim loop, see
//! `queue/work.rs`). Sizes come from environment variables (see `Config`).
//!
//! Section `pg` runs the claim+complete cycles against the PostgreSQL server named by
//! `CASELOAD_TEST_PG` (skipped when unset): caseload's `PgStore` against a raw
//! `postgres`-crate baseline running the store's statements and transactions.
//!
//! Multi-process figures use real OS processes: this binary re-executes itself with the
//! argument `__worker`; workers report over stdout. Big database files and the import
//! CSV are built once and cached under `<target dir>/bench-cache` (override with
//! `CL_BENCH_CACHE`).

// Benchmarks may unwrap (a panic is the failure, with its message), be long, and drive
// the OS directly (kill, mounts, setuid); the product's C calls are all in src/sys.rs.
#![allow(clippy::unwrap_used, clippy::too_many_lines, unsafe_code)]

#[path = "queue/ceiling.rs"]
mod ceiling;
#[path = "queue/check.rs"]
mod check;
#[path = "queue/cli.rs"]
mod cli;
#[path = "common/mod.rs"]
pub mod common;
#[path = "queue/duplicates.rs"]
mod duplicates;
#[path = "queue/eligible.rs"]
mod eligible;
#[path = "queue/figures.rs"]
mod figures;
#[path = "queue/plumbing.rs"]
mod plumbing;
#[path = "queue/verify.rs"]
mod verify;
#[allow(dead_code, unreachable_pub)] // the tests' proxy; the bench counts round trips only
#[path = "../tests/support/wire.rs"]
mod wire;
#[path = "queue/work.rs"]
mod work;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use caseload::domain::{Actor, NewItem};
use caseload::store::postgres::sql as pg_sql;
use caseload::store::postgres::{PgOptions, PgStore};
use caseload::store::sql::{FENCE_HOLDER, SET_COMPLETE};
use caseload::store::sqlite::OpenOptions;
use caseload::store::sqlite::sql::{
    CLAIM as CLAIM_SQL, Creation, ENSURE_QUEUE as QUEUE_SQL, INSERT_EVENT as EVENT_SQL,
    ITEM_BY_REQUEST_ID as RID_SQL, ITEM_COLS, KEPT_COUNT as COUNT_SQL, bind_items, insert_item_sql,
};
use caseload::store::{
    AddOptions, ListFilter, Reads, SqliteStore, StateFilter, Store, StoreError, TakeNext, Writes,
};
use rusqlite::{Connection, OpenFlags, OptionalExtension, named_params, params};

// ---------------------------------------------------------------------------------------
// The SQL the store runs: the very statements of src/store/sqlite/sql.rs (the claim's
// candidate and conditional UPDATE, the event insert, the `complete` holder write, the
// item insert, the kept count), shared with the store so that the baseline cannot drift.

fn candidate_sql() -> String {
    caseload::store::sqlite::sql::candidate(false)
}

fn complete_sql() -> String {
    caseload::store::sqlite::sql::fenced_update(SET_COMPLETE, FENCE_HOLDER)
}

// ---------------------------------------------------------------------------------------
// Configuration

struct Config {
    /// Section 1: items consumed per run.
    cycle_items: usize,
    /// Section 1: process counts and runs per count (the median is reported).
    procs: Vec<usize>,
    cycle_runs: usize,
    /// Section 2: processes and seconds of flat-out claiming.
    flat_procs: usize,
    flat_secs: f64,
    /// Section 3: file sizes and claims measured per file and implementation.
    small: usize,
    big: usize,
    claims: usize,
    /// Section 4: single adds, import rows, import claimer think time.
    adds: usize,
    import_rows: usize,
    /// Section 5: repetitions of the first screen.
    screen_iters: usize,
    /// Section 6 (PostgreSQL): items drained per run, runs per process count.
    pg_items: usize,
    pg_runs: usize,
    cache: PathBuf,
}

fn env_num<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v}: not a number")),
        Err(_) => default,
    }
}

impl Config {
    fn from_env() -> Config {
        let procs = std::env::var("CL_BENCH_PROCS")
            .unwrap_or_else(|_| "1,2,4,8".into())
            .split(',')
            .map(|s| {
                s.trim()
                    .parse()
                    .expect("CL_BENCH_PROCS: comma-separated numbers")
            })
            .collect();
        let cache = std::env::var_os("CL_BENCH_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(default_cache);
        Config {
            cycle_items: env_num("CL_BENCH_CYCLE_ITEMS", 1200),
            procs,
            cycle_runs: env_num("CL_BENCH_CYCLE_RUNS", 3),
            flat_procs: env_num("CL_BENCH_FLAT_PROCS", 8),
            flat_secs: env_num("CL_BENCH_FLAT_SECS", 6.0),
            small: env_num("CL_BENCH_SMALL", 10_000),
            big: env_num("CL_BENCH_BIG", 1_000_000),
            claims: env_num("CL_BENCH_CLAIMS", 1000),
            adds: env_num("CL_BENCH_ADDS", 400),
            import_rows: env_num("CL_BENCH_IMPORT_ROWS", 1_000_000),
            screen_iters: env_num("CL_BENCH_SCREEN_ITERS", 50),
            pg_items: env_num("CL_BENCH_PG_ITEMS", 2000),
            pg_runs: env_num("CL_BENCH_PG_RUNS", 3),
            cache,
        }
    }
}

/// `<target dir>/bench-cache`, found from this executable (`<target>/release/deps/queue-*`).
fn default_cache() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    exe.ancestors()
        .nth(3)
        .map(|t| t.join("bench-cache"))
        .unwrap_or_else(|| std::env::temp_dir().join("caseload-bench-cache"))
}

// ---------------------------------------------------------------------------------------
// Small helpers

fn epoch_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// Median time of a 4 KiB write + fsync in `dir`: every commit pays at least one of these
/// (WAL, `synchronous=FULL`), so it bounds every latency and rate below.
fn fsync_probe(dir: &Path) -> f64 {
    use std::os::unix::fs::FileExt;
    let path = dir.join("fsync-probe");
    let f = std::fs::File::create(&path).unwrap();
    let buf = [0u8; 4096];
    let mut t: Vec<f64> = (0..50)
        .map(|i| {
            let s = Instant::now();
            f.write_all_at(&buf, (i % 8) * 4096).unwrap();
            f.sync_data().unwrap();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let _ = std::fs::remove_file(&path);
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// The 1/5/15-minute load averages (other work on the machine skews every figure).
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn now_ms() -> i64 {
    (epoch_us() / 1000) as i64
}

fn actor(name: &str) -> Actor {
    Actor::new(name, "bench")
}

fn open_store(path: &Path, user: &str) -> SqliteStore {
    SqliteStore::open(path, actor(user), &OpenOptions::default()).expect("open store")
}

/// Percentile (0..=100) of sorted values.
fn pct(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}

/// The baseline's connection: WAL, synchronous=FULL, foreign keys, the busy handler.
fn open_raw(path: &Path) -> Connection {
    let c = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .expect("open raw");
    // The store's own busy handler: the same short jittered sleeps.
    c.busy_handler(Some(caseload::store::sqlite::busy::busy_sleep))
        .unwrap();
    c.execute_batch("PRAGMA foreign_keys = ON").unwrap();
    let mode: String = c
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    c.execute_batch("PRAGMA synchronous = FULL").unwrap();
    // The store's page cache size (src/store/sqlite/mod.rs), so that only its layers differ.
    c.execute_batch("PRAGMA cache_size = -32768").unwrap();
    c
}

// ---------------------------------------------------------------------------------------
// The raw baseline's operations

/// What a claim attempt gave.
enum Claimed {
    Item(i64, i64),
    Nothing,
}

/// Any error, with busy ones told apart.
#[derive(Debug)]
enum OpError {
    Busy(String),
    Other(String),
}

fn raw_err(e: rusqlite::Error) -> OpError {
    if is_busy(&e) {
        OpError::Busy(e.to_string())
    } else {
        OpError::Other(e.to_string())
    }
}

fn store_err(e: StoreError) -> OpError {
    match e {
        StoreError::Busy(m) => OpError::Busy(m),
        e => OpError::Other(e.to_string()),
    }
}

fn raw_txn<T>(
    c: &Connection,
    f: impl FnOnce(&Connection, i64) -> rusqlite::Result<T>,
) -> Result<T, OpError> {
    c.execute_batch("BEGIN IMMEDIATE").map_err(raw_err)?;
    let now = now_ms();
    match f(c, now) {
        Ok(v) => match c.execute_batch("COMMIT") {
            Ok(()) => Ok(v),
            Err(e) => {
                let _ = c.execute_batch("ROLLBACK");
                Err(raw_err(e))
            }
        },
        Err(e) => {
            let _ = c.execute_batch("ROLLBACK");
            Err(raw_err(e))
        }
    }
}

fn raw_take_next(c: &Connection, me: &str, cand: &str) -> Result<Claimed, OpError> {
    raw_txn(c, |c, now| {
        let row: Option<(i64, Option<String>, i64)> = c
            .prepare_cached(cand)?
            .query_row(named_params! {":now": now, ":skip": "[]", ":me": me}, |r| {
                Ok((r.get("id")?, r.get("lock_user")?, r.get("lock_token")?))
            })
            .optional()?;
        let Some((id, prev, held)) = row else {
            return Ok(Claimed::Nothing);
        };
        let token: Option<i64> = c
            .prepare_cached(CLAIM_SQL)?
            .query_row(
                named_params! {":me": me, ":now": now, ":id": id, ":token": held},
                |r| r.get(11),
            )
            .optional()?;
        let Some(token) = token else {
            return Ok(Claimed::Nothing);
        };
        let (kind, detail) = match prev {
            Some(from) => (
                "taken_over",
                format!(r#"{{"from":"{from}","token":{token}}}"#),
            ),
            None => ("locked", format!(r#"{{"token":{token}}}"#)),
        };
        c.prepare_cached(EVENT_SQL)?
            .execute(params![id, now, me, "bench", kind, detail])?;
        Ok(Claimed::Item(id, token))
    })
}

fn raw_complete(c: &Connection, me: &str, id: i64, token: i64) -> Result<(), OpError> {
    raw_txn(c, |c, now| {
        let n = c.prepare_cached(&complete_sql())?.execute(named_params! {
            ":value": None::<String>, ":now": now, ":me": me, ":id": id, ":token": token
        })?;
        if n != 1 {
            return Err(rusqlite::Error::StatementChangedRows(n));
        }
        c.prepare_cached(EVENT_SQL)?.execute(params![
            id,
            now,
            me,
            "bench",
            "completed",
            format!(r#"{{"token":{token},"result":null}}"#)
        ])?;
        Ok(())
    })
}

fn raw_insert(c: &Connection, it: &NewItem, now: i64, me: &str) -> rusqlite::Result<bool> {
    let mut stmt = c.prepare_cached(insert_item_sql())?;
    let by = Creation {
        at: now,
        by: me,
        os: "bench",
    };
    bind_items(&mut stmt, std::slice::from_ref(it), None, by)?;
    let id: Option<i64> = match stmt.raw_query().next()? {
        Some(r) => Some(r.get(0)?),
        None => None,
    };
    if id.is_none() {
        c.prepare_cached(RID_SQL)?
            .query_row([&it.request_id], |r| r.get::<_, i64>(0))?;
        return Ok(false);
    }
    // No `created` event: the store writes none (the item row records it).
    Ok(true)
}

/// The `created` event the store wrote per item until issue 11 (diagnostics only).
fn raw_created_event(c: &Connection, it: &NewItem, now: i64, me: &str) -> rusqlite::Result<()> {
    let detail = match &it.request_id {
        Some(r) => format!(r#"{{"request_id":"{r}"}}"#),
        None => r#"{"request_id":null}"#.to_string(),
    };
    let id = c.last_insert_rowid();
    c.prepare_cached(EVENT_SQL)?
        .execute(params![id, now, me, "bench", "created", detail])?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The PostgreSQL baseline: the statements and transactions of src/store/postgres/
// (`transact`'s `BEGIN; <server now>` … `COMMIT`, the candidate, the claim, the `complete`
// holder write, the change counter's bump after COMMIT), from src/store/postgres/sql.rs —
// the very text the store runs — executed with the `postgres` crate directly.

/// The raw baseline's connection: the store's session settings (`connect()` with the
/// default `PgOptions`) and its statements prepared once.
struct PgRaw {
    client: postgres::Client,
    me: String,
    notify: bool,
    cand: postgres::Statement,
    claim: postgres::Statement,
    complete: postgres::Statement,
}

fn pg_err(e: postgres::Error) -> OpError {
    OpError::Other(match e.as_db_error() {
        Some(d) => format!("{}: {}", d.code().code(), d.message()),
        None => e.to_string(),
    })
}

impl PgRaw {
    fn open(url: &str, me: &str, notify: bool) -> PgRaw {
        let mut client = postgres::Client::connect(url, postgres::NoTls).expect("connect raw");
        client
            .batch_execute(
                "SET lock_timeout = 5000; SET statement_timeout = 30000; \
                 SET idle_in_transaction_session_timeout = 60000; SET TIME ZONE 'UTC'",
            )
            .unwrap();
        let cand = client.prepare(&pg_sql::candidate(false)).unwrap();
        let claim = client.prepare(pg_sql::CLAIM).unwrap();
        let complete = client
            .prepare_typed(
                &pg_sql::fenced_update(SET_COMPLETE, FENCE_HOLDER),
                &pg_sql::FENCED_UPDATE_TYPES,
            )
            .unwrap();
        PgRaw {
            client,
            me: me.to_string(),
            notify,
            cand,
            claim,
            complete,
        }
    }

    /// `write()`: BEGIN with the server's clock, `f`, COMMIT (ROLLBACK on error or when
    /// `f` gives `None`), with the change counter's bump in COMMIT's round trip if this
    /// baseline sends it (as the store does).
    fn txn<T>(
        &mut self,
        f: impl FnOnce(&mut PgRaw, i64) -> Result<Option<T>, postgres::Error>,
    ) -> Result<Option<T>, OpError> {
        let msgs = self
            .client
            .simple_query(&pg_sql::begin(0))
            .map_err(pg_err)?;
        let now: i64 = msgs
            .iter()
            .find_map(|m| match m {
                postgres::SimpleQueryMessage::Row(r) => r.get(0).and_then(|s| s.parse().ok()),
                _ => None,
            })
            .expect("server clock");
        match f(self, now) {
            Ok(Some(v)) => {
                let commit = match self.notify {
                    true => format!("COMMIT; {}", pg_sql::changed("")),
                    false => "COMMIT".to_string(),
                };
                self.client.batch_execute(&commit).map_err(pg_err)?;
                Ok(Some(v))
            }
            Ok(None) => {
                let _ = self.client.batch_execute("ROLLBACK");
                Ok(None)
            }
            Err(e) => {
                let _ = self.client.batch_execute("ROLLBACK");
                Err(pg_err(e))
            }
        }
    }

    fn take_next(&mut self) -> Result<Claimed, OpError> {
        let got = self.txn(|r, now| {
            let skip: Vec<i64> = Vec::new();
            let Some(row) = r.client.query_opt(&r.cand, &[&r.me, &now, &skip])? else {
                return Ok(None);
            };
            let id: i64 = row.get(0);
            let prev: Option<String> = row.get(1);
            let queue: String = row.get(2);
            let limited: bool = row.get(3);
            if limited {
                let key = format!("{}\u{1}{queue}", r.me);
                r.client
                    .execute(pg_sql::WIP_LOCK, &[&pg_sql::WIP_LOCK_CLASS, &key])?;
            }
            let held: i64 = row.get(7);
            let (kind, detail) = match prev {
                Some(from) => (
                    "taken_over",
                    format!(r#"{{"from":"{from}","token":{}}}"#, held + 1),
                ),
                None => ("locked", format!(r#"{{"token":{}}}"#, held + 1)),
            };
            let claimed = r.client.query_opt(
                &r.claim,
                &[&r.me, &now, &id, &"bench", &kind, &detail, &held],
            )?;
            Ok(claimed.map(|row| (id, row.get::<_, i64>(11))))
        })?;
        Ok(match got {
            Some((id, token)) => Claimed::Item(id, token),
            None => Claimed::Nothing,
        })
    }

    fn complete(&mut self, id: i64, token: i64) -> Result<(), OpError> {
        let detail = format!(r#"{{"result":null,"token":{token}}}"#);
        let got = self.txn(|r, now| {
            let n = r.client.execute(
                &r.complete,
                &[
                    &id,
                    &r.me,
                    &token,
                    &now,
                    &None::<&str>,
                    &"bench",
                    &"completed",
                    &detail,
                    &None::<i64>,
                ],
            )?;
            Ok((n == 1).then_some(()))
        })?;
        got.ok_or_else(|| OpError::Other(format!("lost the lock on #{id}")))
    }
}

/// One implementation behind a common face, so the same loops drive both.
enum Engine {
    Store(Box<SqliteStore>),
    Raw {
        conn: Box<Connection>,
        me: String,
        cand: String,
    },
    /// caseload's `PgStore` (the "db" argument is the URL).
    Pg(Box<PgStore>),
    /// The raw `postgres`-crate baseline.
    PgRaw(Box<PgRaw>),
    /// caseload's complete-and-next (SQLite or PostgreSQL): each complete takes the next
    /// item in its own transaction, which the following `take_next` hands out.
    Next {
        store: Box<dyn Store>,
        next: Option<Claimed>,
    },
}

impl Engine {
    fn open(kind: &str, path: &Path, user: &str) -> Engine {
        match kind {
            "store" => {
                let s = open_store(path, user);
                diag_pragmas(s.connection());
                Engine::Store(Box::new(s))
            }
            "raw" => {
                let conn = open_raw(path);
                diag_pragmas(&conn);
                Engine::Raw {
                    conn: Box::new(conn),
                    me: user.to_string(),
                    cand: candidate_sql(),
                }
            }
            "pgstore" => Engine::Pg(Box::new(
                PgStore::open(pg_url_arg(path), actor(user), &PgOptions::default())
                    .expect("open PgStore"),
            )),
            "pgraw" => Engine::PgRaw(Box::new(PgRaw::open(pg_url_arg(path), user, false))),
            "pgrawn" => Engine::PgRaw(Box::new(PgRaw::open(pg_url_arg(path), user, true))),
            "storenext" => {
                let s = open_store(path, user);
                diag_pragmas(s.connection());
                Engine::Next {
                    store: Box::new(s),
                    next: None,
                }
            }
            "pgnext" => Engine::Next {
                store: Box::new(
                    PgStore::open(pg_url_arg(path), actor(user), &PgOptions::default())
                        .expect("open PgStore"),
                ),
                next: None,
            },
            _ => panic!("unknown engine {kind}"),
        }
    }

    fn take_next(&mut self) -> Result<Claimed, OpError> {
        match self {
            Engine::Store(s) => match s.take_next(&TakeNext::default()) {
                Ok(item) => Ok(Claimed::Item(item.id, item.lock_token)),
                Err(StoreError::NothingToClaim(_)) => Ok(Claimed::Nothing),
                Err(e) => Err(store_err(e)),
            },
            Engine::Raw { conn, me, cand } => raw_take_next(conn, me, cand),
            Engine::Pg(s) => match s.take_next(&TakeNext::default()) {
                Ok(item) => Ok(Claimed::Item(item.id, item.lock_token)),
                Err(StoreError::NothingToClaim(_)) => Ok(Claimed::Nothing),
                Err(e) => Err(store_err(e)),
            },
            Engine::PgRaw(r) => r.take_next(),
            Engine::Next { store, next } => match next.take() {
                Some(c) => Ok(c),
                None => match store.take_next(&TakeNext::default()) {
                    Ok(item) => Ok(Claimed::Item(item.id, item.lock_token)),
                    Err(StoreError::NothingToClaim(_)) => Ok(Claimed::Nothing),
                    Err(e) => Err(store_err(e)),
                },
            },
        }
    }

    fn complete(&mut self, id: i64, token: i64) -> Result<(), OpError> {
        match self {
            Engine::Store(s) => s.complete(id, token, None).map(|_| ()).map_err(store_err),
            Engine::Raw { conn, me, .. } => raw_complete(conn, me, id, token),
            Engine::Pg(s) => s.complete(id, token, None).map(|_| ()).map_err(store_err),
            Engine::PgRaw(r) => r.complete(id, token),
            Engine::Next { store, next } => {
                let done = store
                    .complete_and_next(id, token, None, &TakeNext::default())
                    .map_err(store_err)?;
                *next = Some(match done.next {
                    Ok(item) => Claimed::Item(item.id, item.lock_token),
                    Err(StoreError::NothingToClaim(_)) => Claimed::Nothing,
                    Err(e) => return Err(store_err(e)),
                });
                Ok(())
            }
        }
    }

    fn add(&mut self, it: &NewItem) -> Result<(), OpError> {
        match self {
            Engine::Store(s) => s
                .add_items(std::slice::from_ref(it), AddOptions::creating_queues())
                .map(|_| ())
                .map_err(store_err),
            Engine::Raw { conn, me, .. } => {
                let me = me.clone();
                raw_txn(conn, |c, now| {
                    c.prepare_cached(QUEUE_SQL)?.execute([&it.queue])?;
                    raw_insert(c, it, now, &me)
                })
                .map(|_| ())
            }
            Engine::Pg(_) | Engine::PgRaw(_) | Engine::Next { .. } => {
                unimplemented!("the enqueue sections run on the store and raw engines only")
            }
        }
    }

    /// The first screen: 200 open items in take order, the open count and the total.
    fn first_screen(&mut self) -> (usize, u64, u64) {
        match self {
            Engine::Store(s) => {
                let open = ListFilter {
                    state: StateFilter::Open,
                    limit: 200,
                    ..ListFilter::default()
                };
                let rows = s.list(&open).unwrap().len();
                let n_open = s.count(&open).unwrap();
                let all = ListFilter {
                    state: StateFilter::All,
                    ..ListFilter::default()
                };
                (rows, n_open, s.count(&all).unwrap())
            }
            Engine::Raw { conn, .. } => {
                let sql = format!(
                    "SELECT {ITEM_COLS} FROM items WHERE state = 'open' ORDER BY priority DESC, \
                     created_at, id LIMIT :limit OFFSET :offset"
                );
                let mut stmt = conn.prepare_cached(&sql).unwrap();
                let mut rows = stmt
                    .query(named_params! {":limit": 200i64, ":offset": 0i64})
                    .unwrap();
                let mut n = 0;
                while let Some(r) = rows.next().unwrap() {
                    // Read every column, as the store does.
                    for i in 0..19 {
                        let _: rusqlite::types::Value = r.get(i).unwrap();
                    }
                    n += 1;
                }
                let mut cs = conn.prepare_cached(COUNT_SQL).unwrap();
                let n_open: i64 = cs
                    .query_row(params![Some("open"), None::<String>], |r| r.get(0))
                    .unwrap();
                let all: i64 = cs
                    .query_row(params![None::<String>, None::<String>], |r| r.get(0))
                    .unwrap();
                (n, n_open as u64, all as u64)
            }
            Engine::Pg(_) | Engine::PgRaw(_) | Engine::Next { .. } => {
                unimplemented!("the enqueue sections run on the store and raw engines only")
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Workers (child processes)

/// `__worker cycle <engine> <db> <user> <mode> <value>`: loops take_next + complete.
/// mode `drain`: until nothing is left; `secs`: for `value` seconds; `stop`: until the
/// parent writes STOP. Prints READY, waits for GO, then prints one RESULT line and one
/// LAT line (claim latencies in µs).
fn worker(args: &[String]) {
    let [kind, db, user, mode, value] = args else {
        panic!("worker args: {args:?}");
    };
    let mut eng = Engine::open(kind, Path::new(db), user);
    let stdin = std::io::stdin();
    let mut line = String::new();
    println!("READY");
    std::io::stdout().flush().unwrap();
    stdin.lock().read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "GO");
    let stop = Arc::new(AtomicBool::new(false));
    if mode == "stop" {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut l = String::new();
            let _ = std::io::stdin().lock().read_line(&mut l);
            stop.store(true, Ordering::Relaxed);
        });
    }
    let deadline = if mode == "secs" {
        Some(Instant::now() + Duration::from_secs_f64(value.parse().unwrap()))
    } else {
        None
    };
    let think_us: u64 = if mode == "stop" {
        value.parse().unwrap()
    } else {
        0
    };
    let start = epoch_us();
    let mut lat = Vec::with_capacity(4096);
    let (mut cycles, mut busy, mut other) = (0u64, 0u64, 0u64);
    let mut first_err = String::new();
    loop {
        if stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let t = Instant::now();
        let r = eng.take_next();
        let l = t.elapsed().as_micros() as u64;
        match r {
            Ok(Claimed::Item(id, token)) => {
                lat.push(l);
                match eng.complete(id, token) {
                    Ok(()) => cycles += 1,
                    Err(OpError::Busy(m)) => {
                        busy += 1;
                        first_err.get_or_insert_with_str(&m);
                    }
                    Err(OpError::Other(m)) => {
                        other += 1;
                        first_err.get_or_insert_with_str(&m);
                    }
                }
            }
            Ok(Claimed::Nothing) => {
                if mode == "drain" {
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(OpError::Busy(m)) => {
                busy += 1;
                first_err.get_or_insert_with_str(&m);
            }
            Err(OpError::Other(m)) => {
                other += 1;
                first_err.get_or_insert_with_str(&m);
                if other > 100 {
                    break;
                }
            }
        }
        if think_us > 0 {
            std::thread::sleep(Duration::from_micros(think_us));
        }
    }
    let end = epoch_us();
    println!(
        "RESULT {start} {end} {cycles} {busy} {other} {}",
        first_err.replace(['\n', ' '], "_")
    );
    let lats: Vec<String> = lat.iter().map(u64::to_string).collect();
    println!("LAT {}", lats.join(" "));
}

trait StrExt {
    fn get_or_insert_with_str(&mut self, m: &str);
}
impl StrExt for String {
    fn get_or_insert_with_str(&mut self, m: &str) {
        if self.is_empty() {
            self.push_str(m);
        }
    }
}

struct Worker {
    child: Child,
    stdin: ChildStdin,
    out: BufReader<ChildStdout>,
}

#[derive(Debug, Default)]
struct WorkerResult {
    start: u64,
    end: u64,
    cycles: u64,
    busy: u64,
    other: u64,
    err: String,
    lat: Vec<u64>,
}

fn spawn_worker(engine: &str, db: &Path, user: &str, mode: &str, value: &str) -> Worker {
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args([
            "__worker",
            "cycle",
            engine,
            db.to_str().unwrap(),
            user,
            mode,
            value,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn worker");
    let stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "READY", "worker did not start");
    Worker { child, stdin, out }
}

fn go(ws: &mut [Worker]) {
    for w in ws.iter_mut() {
        w.stdin.write_all(b"GO\n").unwrap();
        w.stdin.flush().unwrap();
    }
}

fn collect(w: Worker) -> WorkerResult {
    let Worker {
        mut child,
        stdin,
        mut out,
    } = w;
    drop(stdin);
    let mut r = WorkerResult::default();
    let mut line = String::new();
    loop {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 {
            break;
        }
        let mut parts = line.split_whitespace();
        match parts.next() {
            Some("RESULT") => {
                let v: Vec<&str> = parts.collect();
                r.start = v[0].parse().unwrap();
                r.end = v[1].parse().unwrap();
                r.cycles = v[2].parse().unwrap();
                r.busy = v[3].parse().unwrap();
                r.other = v[4].parse().unwrap();
                r.err = v.get(5).unwrap_or(&"").to_string();
            }
            Some("LAT") => r.lat = parts.map(|s| s.parse().unwrap()).collect(),
            _ => {}
        }
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "worker failed: {status}");
    r
}

/// Runs `n` workers together; returns their results.
fn run_workers(engine: &str, db: &Path, n: usize, mode: &str, value: &str) -> Vec<WorkerResult> {
    let mut ws: Vec<Worker> = (0..n)
        .map(|i| spawn_worker(engine, db, &format!("w{i}"), mode, value))
        .collect();
    go(&mut ws);
    ws.into_iter().map(collect).collect()
}

// ---------------------------------------------------------------------------------------
// Building databases

const QUEUES: [&str; 3] = ["default", "billing", "returns"];

/// A fresh caseload file (schema applied by the store itself).
fn fresh_db(path: &Path) {
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
    }
    drop(open_store(path, "bench"));
}

/// Fills a fresh file with `n` items, the last `open` of them open (the rest done), with
/// their created (and completed) events, in one transaction of raw inserts. The item
/// counts are kept by the schema's triggers.
fn fill(path: &Path, n: usize, open: usize) {
    fresh_db(path);
    let c = Connection::open(path).unwrap();
    c.execute_batch("PRAGMA synchronous = OFF; PRAGMA cache_size = -400000; BEGIN")
        .unwrap();
    for q in QUEUES {
        c.execute(QUEUE_SQL, [q]).unwrap();
    }
    let base = now_ms() - 30 * 86_400_000;
    {
        let mut ins = c
            .prepare(
                "INSERT INTO items (id, queue, title, body, params, priority, state, created_at, \
                 created_by, finished_at, finished_by) VALUES (?1, ?2, ?3, ?4, '{}', ?5, ?6, ?7, \
                 'producer', ?8, ?9)",
            )
            .unwrap();
        let mut ev = c
            .prepare(
                "INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
                 VALUES (?1, ?2, ?3, 'bench', ?4, ?5)",
            )
            .unwrap();
        for i in 1..=n {
            let id = i as i64;
            let created = base + id * 2;
            let done = i <= n - open;
            let prio = if i % 10 == 0 { (i % 3) as i64 } else { 0 };
            let title = format!("Customer request {i}: check the invoice and reply");
            let body = format!(
                "Order {} was charged twice. Please verify against the ledger and refund.",
                i * 7919 % 1_000_003
            );
            let (state, fin_at, fin_by) = if done {
                ("done", Some(created + 60_000), Some("w0"))
            } else {
                ("open", None, None)
            };
            ins.execute(params![
                id,
                QUEUES[i % 3],
                title,
                body,
                prio,
                state,
                created,
                fin_at,
                fin_by
            ])
            .unwrap();
            ev.execute(params![
                id,
                created,
                "producer",
                "created",
                r#"{"request_id":null}"#
            ])
            .unwrap();
            if let Some(at) = fin_at {
                ev.execute(params![
                    id,
                    at,
                    "w0",
                    "completed",
                    r#"{"token":1,"result":null}"#
                ])
                .unwrap();
            }
        }
    }
    c.execute_batch("COMMIT; PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
}

/// A cached filled file copied to `dest` (built on first use).
fn filled_copy(cfg: &Config, n: usize, open: usize, dest: &Path) {
    filled_copy_of(cfg, &format!("items-{n}-open-{open}-v2.db"), dest, |p| {
        fill(p, n, open)
    });
}

/// The cached file `name` (built by `build` on first use) copied to `dest`.
fn filled_copy_of(cfg: &Config, name: &str, dest: &Path, build: impl FnOnce(&Path)) {
    std::fs::create_dir_all(&cfg.cache).unwrap();
    let cached = cfg.cache.join(name);
    if !cached.exists() {
        let t = Instant::now();
        let tmp = cfg.cache.join("building.db");
        build(&tmp);
        std::fs::rename(&tmp, &cached).unwrap();
        eprintln!(
            "  (built {} in {:.1} s)",
            cached.display(),
            t.elapsed().as_secs_f64()
        );
    }
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", dest.display()));
    }
    std::fs::copy(&cached, dest).unwrap();
}

// ---------------------------------------------------------------------------------------
// Reporting

struct Row {
    section: &'static str,
    metric: String,
    store: String,
    raw: String,
    ratio: String,
    target: String,
    met: String,
}

#[derive(Default)]
struct Report {
    rows: Vec<Row>,
    /// The `cycles` section's medians (processes, caseload, raw), for the `pg` section.
    sqlite_cycles: Vec<(usize, f64, f64)>,
}

fn yes(b: bool) -> String {
    if b { "yes".into() } else { "**NO**".into() }
}

impl Report {
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        section: &'static str,
        metric: impl Into<String>,
        store: impl Into<String>,
        raw: impl Into<String>,
        ratio: impl Into<String>,
        target: impl Into<String>,
        met: impl Into<String>,
    ) {
        let r = Row {
            section,
            metric: metric.into(),
            store: store.into(),
            raw: raw.into(),
            ratio: ratio.into(),
            target: target.into(),
            met: met.into(),
        };
        println!(
            "  {:<48} caseload {:>12}  raw {:>12}  ratio {:>6}  target {:<14} met {}",
            r.metric, r.store, r.raw, r.ratio, r.target, r.met
        );
        self.rows.push(r);
    }

    fn print_markdown(&self) {
        println!();
        println!("| section | metric | caseload | raw | caseload/raw | target | met |");
        println!("|---|---|---:|---:|---:|---|---|");
        for r in &self.rows {
            println!(
                "| {} | {} | {} | {} | {} | {} | {} |",
                r.section, r.metric, r.store, r.raw, r.ratio, r.target, r.met
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Sections

/// 1. claim+complete cycles/s with 1, 2, 4, 8 processes draining a fixed item count.
fn sec_cycles(cfg: &Config, dir: &Path, rep: &mut Report) {
    println!(
        "\n== cycles: take_next + complete, {} items drained per run, median of {} runs ==",
        cfg.cycle_items, cfg.cycle_runs
    );
    let template = dir.join("cycles-template.db");
    fill(&template, cfg.cycle_items, cfg.cycle_items);
    for &p in &cfg.procs {
        let mut rates: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        let mut errs = [0u64; 2];
        // Runs alternate between the two so that load from elsewhere hits both alike.
        for _ in 0..cfg.cycle_runs {
            for (k, engine) in ["store", "raw"].iter().enumerate() {
                let db = dir.join(format!("cycles-{engine}-{p}.db"));
                for ext in ["-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
                }
                std::fs::copy(&template, &db).unwrap();
                let rs = run_workers(engine, &db, p, "drain", "0");
                let start = rs.iter().map(|r| r.start).min().unwrap();
                let end = rs.iter().map(|r| r.end).max().unwrap();
                let cycles: u64 = rs.iter().map(|r| r.cycles).sum();
                errs[k] += rs.iter().map(|r| r.busy + r.other).sum::<u64>();
                assert_eq!(
                    cycles as usize, cfg.cycle_items,
                    "{engine}: not all drained"
                );
                rates[k].push(cycles as f64 / ((end - start) as f64 / 1e6));
                for r in rs.iter().filter(|r| !r.err.is_empty()) {
                    println!("  {engine} error: {}", r.err);
                }
            }
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        println!(
            "  {p} process(es): caseload runs {:.0?}, raw runs {:.0?} cycles/s",
            rates[0], rates[1]
        );
        let rate = [median(&mut rates[0]), median(&mut rates[1])];
        let ratio = rate[0] / rate[1];
        rep.sqlite_cycles.push((p, rate[0], rate[1]));
        rep.add(
            "1 cycles",
            format!("cycles/s, {p} process(es)"),
            format!("{:.0}", rate[0]),
            format!("{:.0}", rate[1]),
            format!("{ratio:.2}"),
            "≥0.7 of raw",
            yes(ratio >= 0.7 && errs[0] == 0),
        );
    }
}

/// Section 7: complete-and-next (one transaction per item) against the two-transaction cycle
/// (complete, then take next), both through caseload's store, 1, 2, 4, 8 processes
/// draining a fixed item count; SQLite, and PostgreSQL when `CASELOAD_TEST_PG` is set.
fn sec_next(cfg: &Config, dir: &Path, rep: &mut Report) {
    println!(
        "\n== next: complete-and-next vs complete + take_next, {} items drained per run, \
         median of {} runs ==",
        cfg.cycle_items, cfg.cycle_runs
    );
    let template = dir.join("next-template.db");
    fill(&template, cfg.cycle_items, cfg.cycle_items);
    let pg = std::env::var("CASELOAD_TEST_PG")
        .ok()
        .filter(|u| !u.trim().is_empty());
    let mut backends = vec![("SQLite", ["storenext", "store"])];
    if pg.is_some() {
        backends.push(("PostgreSQL", ["pgnext", "pgstore"]));
    }
    for (backend, engines) in backends {
        for &p in &cfg.procs {
            let mut rates: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
            let mut errs = [0u64; 2];
            // Runs alternate between the two so that load from elsewhere hits both alike.
            for _ in 0..cfg.cycle_runs {
                for (k, engine) in engines.iter().enumerate() {
                    let (rs, schema) = if let Some(base) = &pg
                        && backend == "PostgreSQL"
                    {
                        let (schema, url) = pg_fresh_schema(base, cfg.cycle_items);
                        (
                            run_workers(engine, Path::new(&url), p, "drain", "0"),
                            Some(schema),
                        )
                    } else {
                        let db = dir.join(format!("next-{engine}-{p}.db"));
                        for ext in ["-wal", "-shm"] {
                            let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
                        }
                        std::fs::copy(&template, &db).unwrap();
                        (run_workers(engine, &db, p, "drain", "0"), None)
                    };
                    if let (Some(base), Some(schema)) = (&pg, schema) {
                        pg_drop_schema(base, &schema);
                    }
                    let start = rs.iter().map(|r| r.start).min().unwrap();
                    let end = rs.iter().map(|r| r.end).max().unwrap();
                    let cycles: u64 = rs.iter().map(|r| r.cycles).sum();
                    errs[k] += rs.iter().map(|r| r.busy + r.other).sum::<u64>();
                    for r in rs.iter().filter(|r| !r.err.is_empty()) {
                        println!("  {engine} error: {}", r.err);
                    }
                    assert_eq!(
                        cycles as usize, cfg.cycle_items,
                        "{engine}: not all drained"
                    );
                    rates[k].push(cycles as f64 / ((end - start) as f64 / 1e6));
                }
            }
            println!(
                "  {backend}, {p} process(es): complete-and-next runs {:.0?}, two transactions \
                 runs {:.0?} cycles/s; load average {}",
                rates[0],
                rates[1],
                loadavg()
            );
            let median = |v: &mut Vec<f64>| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            let rate = [median(&mut rates[0]), median(&mut rates[1])];
            let ratio = rate[0] / rate[1];
            let (target, met) = match (backend, p) {
                ("SQLite", 1) => ("≥1.5×", yes(ratio >= 1.5 && errs[0] == 0)),
                ("SQLite", 8) => ("≥1.3×", yes(ratio >= 1.3 && errs[0] == 0)),
                _ => ("(reported)", "-".to_string()),
            };
            rep.add(
                "7 next",
                format!("{backend} cycles/s, {p} process(es): next vs two txns"),
                format!("{:.0}", rate[0]),
                format!("{:.0}", rate[1]),
                format!("{ratio:.2}"),
                target,
                met,
            );
        }
    }
}

/// 2. 8 processes claiming flat out: latency tail, fairness, busy errors.
fn sec_fairness(cfg: &Config, dir: &Path, rep: &mut Report) {
    let p = cfg.flat_procs;
    println!(
        "\n== fairness: {p} processes claim+complete flat out for {} s ==",
        cfg.flat_secs
    );
    // Enough items that nobody runs dry.
    let n = 40_000;
    let template = dir.join("flat-template.db");
    filled_copy(cfg, n, n, &template);
    let mut res = Vec::new();
    for engine in ["store", "raw"] {
        let db = dir.join(format!("flat-{engine}.db"));
        std::fs::copy(&template, &db).unwrap();
        let rs = run_workers(engine, &db, p, "secs", &cfg.flat_secs.to_string());
        let mut lat: Vec<u64> = rs.iter().flat_map(|r| r.lat.iter().copied()).collect();
        lat.sort_unstable();
        let counts: Vec<u64> = rs.iter().map(|r| r.lat.len() as u64).collect();
        let fair = *counts.iter().min().unwrap() as f64 / *counts.iter().max().unwrap() as f64;
        let busy: u64 = rs.iter().map(|r| r.busy).sum();
        let other: u64 = rs.iter().map(|r| r.other).sum();
        for r in rs.iter().filter(|r| !r.err.is_empty()) {
            println!("  {engine} error: {}", r.err);
        }
        println!(
            "  {engine}: claims per process {counts:?}, p50 {:.2} ms, other errors {other}",
            ms(pct(&lat, 50.0))
        );
        res.push((
            pct(&lat, 99.0),
            *lat.last().unwrap_or(&0),
            fair,
            busy,
            other,
        ));
    }
    let (s, r) = (res[0], res[1]);
    rep.add(
        "2 fairness",
        format!("p99 claim latency, {p} procs (ms)"),
        format!("{:.2}", ms(s.0)),
        format!("{:.2}", ms(r.0)),
        format!("{:.2}", s.0 as f64 / r.0.max(1) as f64),
        "≤10 ms",
        yes(s.0 <= 10_000),
    );
    rep.add(
        "2 fairness",
        format!("worst claim latency, {p} procs (ms)"),
        format!("{:.1}", ms(s.1)),
        format!("{:.1}", ms(r.1)),
        format!("{:.2}", s.1 as f64 / r.1.max(1) as f64),
        "≤100 ms",
        yes(s.1 <= 100_000),
    );
    rep.add(
        "2 fairness",
        "fairness (fewest claims / most)",
        format!("{:.2}", s.2),
        format!("{:.2}", r.2),
        format!("{:.2}", s.2 / r.2),
        "≥0.5",
        yes(s.2 >= 0.5),
    );
    rep.add(
        "2 fairness",
        "busy errors surfaced (other errors)",
        format!("{} ({})", s.3, s.4),
        format!("{} ({})", r.3, r.4),
        "-",
        "0",
        yes(s.3 == 0 && s.4 == 0),
    );
}

/// Measures `k` claims (take_next only; each followed by an untimed complete) in one
/// process; every 50 claims the completed items are reopened (untimed) so the open count
/// stays as built.
fn claim_latencies(engine: &str, db: &Path, k: usize) -> Vec<u64> {
    let mut eng = Engine::open(engine, db, "w0");
    let fixer = open_raw(db);
    let mut lat = Vec::with_capacity(k);
    let mut done = Vec::new();
    let mut warm = 10;
    while lat.len() < k {
        let t = Instant::now();
        let r = eng.take_next();
        let l = t.elapsed().as_micros() as u64;
        match r {
            Ok(Claimed::Item(id, token)) => {
                // The first claims on a fresh connection load the schema and pages.
                if warm > 0 {
                    warm -= 1;
                } else {
                    lat.push(l);
                }
                eng.complete(id, token).unwrap();
                done.push(id);
            }
            Ok(Claimed::Nothing) => panic!("{engine}: ran dry"),
            Err(e) => panic!("{engine}: {e:?}"),
        }
        if done.len() >= 50 {
            fixer.execute_batch("BEGIN IMMEDIATE").unwrap();
            for id in done.drain(..) {
                fixer
                    .execute(
                        "UPDATE items SET state = 'open', result = NULL, finished_at = NULL, \
                         finished_by = NULL WHERE id = ?1",
                        [id],
                    )
                    .unwrap();
            }
            fixer.execute_batch("COMMIT").unwrap();
        }
    }
    lat.sort_unstable();
    lat
}

/// Diagnostics only: `CL_BENCH_PRAGMAS="PRAGMA ...; PRAGMA ..."` is run on every measured
/// connection (store and raw alike), e.g. to show what checkpoints or the page cache cost.
fn diag_pragmas(c: &Connection) {
    if let Ok(sql) = std::env::var("CL_BENCH_PRAGMAS") {
        c.execute_batch(&sql).unwrap();
    }
    if let Ok(name) = std::env::var("CL_BENCH_BUSY") {
        c.busy_handler(Some(busy_variant(&name))).unwrap();
    }
}

/// Diagnostics only: `CL_BENCH_BUSY=<name>` puts another busy handler on every measured
/// connection, to compare ways of handing the write lock over (BENCHMARKS.md).
fn busy_variant(name: &str) -> fn(i32) -> bool {
    fn sleep_us(us: u64) -> bool {
        std::thread::sleep(Duration::from_micros(us));
        true
    }
    fn jitter(max: u64) -> u64 {
        (epoch_us() ^ (std::process::id() as u64).wrapping_mul(0x9E37_79B9)) % max.max(1)
    }
    match name {
        "product" => caseload::store::sqlite::busy::busy_sleep,
        // The ceiling's fair variant: 50 µs every time.
        "spin50" => |n| n < 600_000 && sleep_us(50),
        // Shorter sleeps with jitter: 20–100 µs.
        "short" => |n| n < 300_000 && sleep_us(20 + jitter(80)),
        // Aging: the longer a process has waited, the more often it looks (first 300 µs,
        // down by 10 µs a try to 20 µs), with a little jitter.
        "aging" => |n| n < 300_000 && sleep_us(20 + (280 - (n as u64 * 10).min(280)) + jitter(40)),
        other => panic!("CL_BENCH_BUSY={other}: product, spin50, short or aging"),
    }
}

/// 3. claim latency on small and big files, 10 % open and 100 open.
fn sec_claim(cfg: &Config, dir: &Path, rep: &mut Report) {
    println!(
        "\n== claim: take_next latency, one process, {} claims per case ==",
        cfg.claims
    );
    let mut p99s = std::collections::HashMap::new();
    for &n in &[cfg.small, cfg.big] {
        for open in [n / 10, 100.min(n)] {
            let mut res = Vec::new();
            for engine in ["store", "raw"] {
                // A fresh copy each, so both start from the same file and an empty WAL.
                let db = dir.join("claim.db");
                filled_copy(cfg, n, open, &db);
                let lat = claim_latencies(engine, &db, cfg.claims);
                let over = lat.iter().filter(|&&l| l > 2000).count();
                println!(
                    "  {engine}: {n} items, {open} open: p50 {:.3} p90 {:.3} p99 {:.3} max {:.3} ms, \
                     {over} of {} claims over 2 ms",
                    ms(pct(&lat, 50.0)),
                    ms(pct(&lat, 90.0)),
                    ms(pct(&lat, 99.0)),
                    ms(*lat.last().unwrap()),
                    lat.len()
                );
                res.push((pct(&lat, 50.0), pct(&lat, 99.0), *lat.last().unwrap()));
            }
            let (s, r) = (res[0], res[1]);
            p99s.insert((n, open), s.1);
            rep.add(
                "3 claim",
                format!("p50 claim, {n} items, {open} open (ms)"),
                format!("{:.3}", ms(s.0)),
                format!("{:.3}", ms(r.0)),
                format!("{:.2}", s.0 as f64 / r.0.max(1) as f64),
                "-",
                "-",
            );
            let vs_small = if n == cfg.big {
                let small = p99s.get(&(cfg.small, if open == 100 { 100 } else { cfg.small / 10 }));
                small.map(|&sm| s.1 as f64 / sm.max(1) as f64)
            } else {
                None
            };
            let (target, met) = match vs_small {
                Some(x) => (
                    "≤2 ms; ≤2× small".to_string(),
                    format!("{} ({x:.2}× small)", yes(s.1 <= 2000 && x <= 2.0)),
                ),
                None => ("≤2 ms".to_string(), yes(s.1 <= 2000)),
            };
            rep.add(
                "3 claim",
                format!("p99 claim, {n} items, {open} open (ms)"),
                format!("{:.3}", ms(s.1)),
                format!("{:.3}", ms(r.1)),
                format!("{:.2}", s.1 as f64 / r.1.max(1) as f64),
                target,
                met,
            );
        }
    }
}

/// 3b. Claim latency with every queue ordered by due time against priority order, on the
/// big file (10 % open; two thirds of the open items get a due time spread over ±5 days).
/// Without a queue filter a due order takes each queue's first item by its own index walk
/// and the soonest of them (`ops::take`), so this is the slowest take-next path. The two
/// orders run on two copies of the file, alternately in rounds.
fn sec_due(cfg: &Config, dir: &Path, rep: &mut Report) {
    let n = cfg.big;
    let open = n / 10;
    println!(
        "\n== due: take_next latency by take order, {n} items, {open} open, {} claims ==",
        cfg.claims
    );
    let orders = ["priority", "due"];
    let dbs: Vec<PathBuf> = orders
        .iter()
        .map(|order| {
            let db = dir.join(format!("due-{order}.db"));
            filled_copy(cfg, n, open, &db);
            // The store migrates the cached file (take_order, items_take_due) when it
            // opens it.
            drop(open_store(&db, "setup"));
            let c = open_raw(&db);
            c.execute_batch(&format!(
                "BEGIN; UPDATE items SET due_at = created_at + (id * 7919 % 864000000) - \
                 432000000 WHERE state = 'open' AND id % 3 <> 0; \
                 UPDATE queues SET take_order = '{order}'; COMMIT; \
                 PRAGMA wal_checkpoint(TRUNCATE)"
            ))
            .unwrap();
            db
        })
        .collect();
    // Interleaved in rounds (priority, due, priority, …) so that a burst of load on a
    // shared machine falls on both orders alike.
    let rounds = 5;
    let mut lats: Vec<Vec<u64>> = vec![Vec::new(); 2];
    for _ in 0..rounds {
        for (k, db) in dbs.iter().enumerate() {
            lats[k].extend(claim_latencies("store", db, cfg.claims.div_ceil(rounds)));
        }
    }
    let mut res = Vec::new();
    for (order, lat) in orders.iter().zip(lats.iter_mut()) {
        lat.sort_unstable();
        println!(
            "  order {order}: p50 {:.3} p90 {:.3} p99 {:.3} max {:.3} ms",
            ms(pct(lat, 50.0)),
            ms(pct(lat, 90.0)),
            ms(pct(lat, 99.0)),
            ms(*lat.last().unwrap())
        );
        res.push((pct(lat, 50.0), pct(lat, 99.0)));
    }
    let ((p50p, p99p), (p50d, p99d)) = (res[0], res[1]);
    let x = p99d as f64 / p99p.max(1) as f64;
    rep.add(
        "3b due",
        format!("p50 / p99 claim, {n} items, order due (ms)"),
        format!("{:.3} / {:.3}", ms(p50d), ms(p99d)),
        format!("{:.3} / {:.3} (priority)", ms(p50p), ms(p99p)),
        format!("{x:.2}"),
        "p99 ≤2× priority",
        yes(x <= 2.0),
    );
}

fn new_item(i: usize) -> NewItem {
    NewItem {
        queue: QUEUES[i % 3].to_string(),
        body: format!("Order {} was charged twice.", i * 7919 % 1_000_003),
        priority: (i % 3) as i64,
        ..NewItem::titled(&format!(
            "Customer request {i}: check the invoice and reply"
        ))
    }
}

/// 4a. enqueue one at a time.
fn sec_enqueue(cfg: &Config, dir: &Path, rep: &mut Report) {
    println!("\n== enqueue: {} single adds ==", cfg.adds);
    let mut rates = Vec::new();
    for engine in ["store", "raw"] {
        let db = dir.join(format!("enqueue-{engine}.db"));
        filled_copy(cfg, cfg.small, cfg.small / 10, &db);
        let mut eng = Engine::open(engine, &db, "producer");
        let t = Instant::now();
        for i in 0..cfg.adds {
            eng.add(&new_item(i)).unwrap();
        }
        rates.push(cfg.adds as f64 / t.elapsed().as_secs_f64());
    }
    let ratio = rates[0] / rates[1];
    rep.add(
        "4 enqueue",
        "adds/s, one at a time (add_items of one)",
        format!("{:.0}", rates[0]),
        format!("{:.0}", rates[1]),
        format!("{ratio:.2}"),
        "≥0.5 of raw",
        yes(ratio >= 0.5),
    );
}

/// The import CSV (cached).
/// Rows per transaction in the import diagnostics (fixed, so runs compare).
const DIAG_BATCH: usize = 2000;

fn import_csv(cfg: &Config) -> PathBuf {
    std::fs::create_dir_all(&cfg.cache).unwrap();
    let path = cfg.cache.join(format!("import-{}.csv", cfg.import_rows));
    if !path.exists() {
        let tmp = cfg.cache.join("import-building.csv");
        let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp).unwrap());
        writeln!(w, "title,queue,body,priority").unwrap();
        for i in 0..cfg.import_rows {
            writeln!(
                w,
                "\"Imported order {i}: verify address\",{},\"Row {i}, batch {}\",{}",
                QUEUES[i % 3],
                i / 1000,
                i % 3
            )
            .unwrap();
        }
        w.flush().unwrap();
        drop(w);
        std::fs::rename(&tmp, &path).unwrap();
    }
    path
}

/// The rows of the import CSV, streamed and checked as `caseload import` reads them, each
/// with the request id `caseload import` derives (file identity + line).
fn for_each_import_row(csv: &Path, mut each: impl FnMut(NewItem)) {
    let mut id = caseload::import::FileIdentity::new(caseload::import::Format::Csv, "default");
    id.bytes(&std::fs::read(csv).unwrap());
    let file_id = id.finish();
    let f = std::fs::File::open(csv).unwrap();
    let mut rows = caseload::import::Rows::new(
        f,
        caseload::import::Format::Csv,
        "default",
        caseload::import::ImportFields::default(),
    )
    .unwrap();
    while let Some(p) = rows.next_row().unwrap() {
        let caseload::import::Parsed::Item(r) = p else {
            panic!("a bad row in the bench CSV: {p:?}")
        };
        let mut item = r.item;
        item.request_id = Some(caseload::import::derived_key(&file_id, r.line));
        each(item);
    }
}

/// Tracks the longest gap between two progress reports of the second pass: one batch
/// (reading and checking its rows, and its transaction).
#[derive(Default)]
struct BatchClock {
    /// When the first pass began and when the second began.
    start: Option<Instant>,
    second: Option<Duration>,
    last: Option<Instant>,
    worst: Duration,
}

impl caseload::import::Progress for BatchClock {
    fn checking(&mut self, _: u64, _: u64, _: u64) {
        self.start.get_or_insert_with(Instant::now);
    }
    fn writing(&mut self, _: u64, _: u64) {
        if let Some(l) = self.last {
            self.worst = self.worst.max(l.elapsed());
        }
        if self.second.is_none() {
            self.second = self.start.map(|s| s.elapsed());
        }
        self.last = Some(Instant::now());
    }
}

/// 4b. import through the real path (`import::import`: both passes), with a claimer
/// process running alongside; the raw side streams the same rows into the same SQL.
fn sec_import(cfg: &Config, dir: &Path, rep: &mut Report) {
    println!(
        "\n== import: {} CSV rows, batches sized to ~{} ms ==",
        cfg.import_rows,
        caseload::import::BATCH_TARGET.as_millis()
    );
    let csv = import_csv(cfg);
    let mut res = Vec::new();
    for engine in ["store", "raw"] {
        let db = dir.join(format!("import-{engine}.db"));
        // A working queue of 10 000 items (10 % open) for the claimer.
        filled_copy(cfg, cfg.small, cfg.small / 10, &db);
        let mut claimer = spawn_worker(engine, &db, "claimer", "stop", "2000");
        go(std::slice::from_mut(&mut claimer));
        std::thread::sleep(Duration::from_millis(200));
        let mut eng = Engine::open(engine, &db, "importer");
        let t = Instant::now();
        let (created, worst, hold) = match &mut eng {
            Engine::Store(s) => {
                let mut clock = BatchClock::default();
                let opts = caseload::import::Options {
                    format: caseload::import::Format::Csv,
                    default_queue: "default",
                    create_queues: true,
                    keep_ids: false,
                    define_fields: false,
                    skip_duplicates: false,
                };
                let sum = caseload::import::import(s.as_mut(), &csv, &opts, &mut clock)
                    .unwrap_or_else(|e| panic!("import: {e:?}"));
                println!(
                    "  store: first pass (check) {:.2} s; longest write transaction {:.1} ms",
                    clock.second.unwrap_or_default().as_secs_f64(),
                    sum.longest_write.as_secs_f64() * 1e3
                );
                (sum.created as usize, clock.worst, sum.longest_write)
            }
            Engine::Raw { conn, .. } => {
                // The same batch sizing as `caseload import`, the same streamed rows.
                let mut sizer = caseload::import::BatchSizer::default();
                let mut batch = Vec::new();
                let (mut created, mut worst) = (0, Duration::ZERO);
                let mut flush = |batch: &mut Vec<NewItem>| {
                    let b = Instant::now();
                    created += raw_batch(conn, batch, None);
                    sizer.record(batch.len(), b.elapsed());
                    worst = worst.max(b.elapsed());
                    batch.clear();
                    sizer.next_len()
                };
                let mut want = sizer_start();
                for_each_import_row(&csv, |item| {
                    batch.push(item);
                    if batch.len() >= want {
                        want = flush(&mut batch);
                    }
                });
                if !batch.is_empty() {
                    flush(&mut batch);
                }
                // Each raw batch is one transaction: its longest is also its longest hold.
                (created, worst, worst)
            }
            Engine::Pg(_) | Engine::PgRaw(_) | Engine::Next { .. } => {
                unreachable!("SQLite engines only")
            }
        };
        let total = t.elapsed();
        claimer.stdin.write_all(b"STOP\n").unwrap();
        let cr = collect(claimer);
        assert_eq!(created, cfg.import_rows);
        let mut lat = cr.lat.clone();
        lat.sort_unstable();
        println!(
            "  {engine}: total {:.2} s, claimer {} claims (busy {}, other {})",
            total.as_secs_f64(),
            lat.len(),
            cr.busy,
            cr.other
        );
        res.push((
            cfg.import_rows as f64 / total.as_secs_f64(),
            worst,
            *lat.last().unwrap_or(&0),
            pct(&lat, 99.0),
            hold,
        ));
    }
    let (s, r) = (res[0], res[1]);
    rep.add(
        "4 import",
        format!(
            "import rows/s ({} rows; caseload: both passes, raw: one)",
            cfg.import_rows
        ),
        format!("{:.0}", s.0),
        format!("{:.0}", r.0),
        format!("{:.2}", s.0 / r.0),
        "≥0.5 of raw",
        yes(s.0 / r.0 >= 0.5),
    );
    rep.add(
        "4 import",
        "longest batch (ms; caseload: read + check + transaction)",
        format!("{:.1}", s.1.as_secs_f64() * 1e3),
        format!("{:.1}", r.1.as_secs_f64() * 1e3),
        format!("{:.2}", s.1.as_secs_f64() / r.1.as_secs_f64()),
        "≤100 ms",
        yes(s.1 <= Duration::from_millis(100)),
    );
    rep.add(
        "4 import",
        "write lock held at most (ms; longest write transaction, lock wait included)",
        format!("{:.1}", s.4.as_secs_f64() * 1e3),
        format!("{:.1}", r.4.as_secs_f64() * 1e3),
        format!("{:.2}", s.4.as_secs_f64() / r.4.as_secs_f64()),
        "≤100 ms",
        yes(s.4 <= Duration::from_millis(100)),
    );
    rep.add(
        "4 import",
        "concurrent claimer p99 / worst claim (ms)",
        format!("{:.1} / {:.1}", ms(s.3), ms(s.2)),
        format!("{:.1} / {:.1}", ms(r.3), ms(r.2)),
        format!("{:.2}", s.2 as f64 / r.2.max(1) as f64),
        "(reported)",
        "-",
    );
}

fn sizer_start() -> usize {
    caseload::import::BatchSizer::default().next_len()
}

/// One raw import batch in one transaction; `event` also writes the `created` event the
/// store wrote before issue 11 (diagnostics).
fn raw_batch(conn: &Connection, batch: &[NewItem], event: Option<()>) -> usize {
    raw_txn(conn, |c, now| {
        let queues: std::collections::BTreeSet<&str> =
            batch.iter().map(|i| i.queue.as_str()).collect();
        for q in queues {
            c.prepare_cached(QUEUE_SQL)?.execute([q])?;
        }
        let mut n = 0;
        for it in batch {
            let created = raw_insert(c, it, now, "importer")?;
            if created && event.is_some() {
                raw_created_event(c, it, now, "importer")?;
            }
            n += created as usize;
        }
        Ok(n)
    })
    .unwrap()
}

/// 4c. `caseload import FILE` as a user runs it — this build's binary against the one
/// named by `CL_BENCH_IMPORT_BEFORE` (e.g. built from the commit before), one after the
/// other into a fresh database each creates: wall time and peak RSS (`/usr/bin/time`).
fn sec_import_bin(cfg: &Config, dir: &Path, rep: &mut Report) {
    let csv = import_csv(cfg);
    let now = PathBuf::from(env!("CARGO_BIN_EXE_caseload"));
    let before = std::env::var_os("CL_BENCH_IMPORT_BEFORE").map(PathBuf::from);
    println!(
        "\n== import-bin: `caseload import` of {} CSV rows ({} MB), before = {} ==",
        cfg.import_rows,
        std::fs::metadata(&csv).unwrap().len() / 1_000_000,
        before
            .as_ref()
            .map_or("(CL_BENCH_IMPORT_BEFORE unset)".into(), |p| p
                .display()
                .to_string())
    );
    let mut runs: Vec<(&str, PathBuf)> = vec![("now", now)];
    if let Some(b) = before {
        runs.insert(0, ("before", b));
    }
    let mut res = Vec::new();
    for (name, exe) in &runs {
        // A fresh file each binary creates itself (the two schemas differ).
        let db = dir.join(format!("import-bin-{name}.db"));
        let init = Command::new(exe)
            .args(["--user", "importer", "--db"])
            .arg(&db)
            .arg("init")
            .output()
            .expect("init");
        assert!(init.status.success(), "{name} init: {init:?}");
        let t = Instant::now();
        let out = Command::new("/usr/bin/time")
            .arg("-f")
            .arg("MAXRSS_KB %M")
            .arg(exe)
            .arg("--db")
            .arg(&db)
            .arg("--user")
            .arg("importer")
            .arg("import")
            .arg(&csv)
            // Today's binary refuses queues nobody created (issue 15); the CSV names new
            // ones. The binary of before creates them unasked and has no such flag.
            .args(if *name == "now" {
                &["--create-queue"][..]
            } else {
                &[][..]
            })
            .output()
            .expect("run /usr/bin/time");
        let secs = t.elapsed().as_secs_f64();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {err}");
        let kb: u64 = err
            .lines()
            .find_map(|l| l.strip_prefix("MAXRSS_KB "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no RSS in {err}"));
        println!(
            "  {name}: {:.1} s, {:.0} rows/s, peak RSS {:.1} MiB — {}",
            secs,
            cfg.import_rows as f64 / secs,
            kb as f64 / 1024.0,
            String::from_utf8_lossy(&out.stdout).trim()
        );
        res.push((*name, cfg.import_rows as f64 / secs, kb as f64 / 1024.0));
        drop_db(&db);
    }
    let (_, rate, rss) = res[res.len() - 1];
    let (b_rate, b_rss) = if res.len() == 2 {
        (format!("{:.0}", res[0].1), format!("{:.1}", res[0].2))
    } else {
        ("-".into(), "-".into())
    };
    let ratio = |x: f64, i: usize| {
        if res.len() == 2 {
            format!("{:.2}", x / [res[0].1, res[0].2][i])
        } else {
            "-".into()
        }
    };
    rep.add(
        "4 import",
        format!(
            "`caseload import` rows/s, {} rows (now / before)",
            cfg.import_rows
        ),
        format!("{rate:.0}"),
        b_rate,
        ratio(rate, 0),
        "≥2× before",
        if res.len() == 2 {
            yes(rate >= 2.0 * res[0].1)
        } else {
            "-".into()
        },
    );
    rep.add(
        "4 import",
        format!(
            "`caseload import` peak RSS MiB, {} rows (now / before)",
            cfg.import_rows
        ),
        format!("{rss:.1}"),
        b_rss,
        ratio(rss, 1),
        "≤64 MiB",
        yes(rss <= 64.0),
    );
}

/// 5. the first screen at the big size.
fn sec_screen(cfg: &Config, dir: &Path, rep: &mut Report) {
    println!(
        "\n== screen: first 200 open items + counts, {} items, 10% open ==",
        cfg.big
    );
    let db = dir.join("screen.db");
    filled_copy(cfg, cfg.big, cfg.big / 10, &db);
    let mut res = Vec::new();
    for engine in ["store", "raw"] {
        // The first call on a fresh connection is what a user starting the TUI waits for.
        let mut eng = Engine::open(engine, &db, "viewer");
        let t = Instant::now();
        let (rows, open, all) = eng.first_screen();
        let first = t.elapsed().as_micros() as u64;
        assert_eq!(rows, 200.min(cfg.big / 10));
        assert_eq!(open as usize, cfg.big / 10);
        assert_eq!(all as usize, cfg.big);
        let mut lat = Vec::new();
        for _ in 0..cfg.screen_iters {
            let t = Instant::now();
            eng.first_screen();
            lat.push(t.elapsed().as_micros() as u64);
        }
        lat.sort_unstable();
        res.push((first, pct(&lat, 50.0), pct(&lat, 99.0)));
    }
    let (s, r) = (res[0], res[1]);
    rep.add(
        "5 screen",
        "first screen, fresh connection (ms)",
        format!("{:.2}", ms(s.0)),
        format!("{:.2}", ms(r.0)),
        format!("{:.2}", s.0 as f64 / r.0.max(1) as f64),
        "≤20 ms",
        yes(s.0 <= 20_000),
    );
    rep.add(
        "5 screen",
        "first screen, repeated p50 / p99 (ms)",
        format!("{:.2} / {:.2}", ms(s.1), ms(s.2)),
        format!("{:.2} / {:.2}", ms(r.1), ms(r.2)),
        format!("{:.2}", s.2 as f64 / r.2.max(1) as f64),
        "≤20 ms",
        yes(s.2 <= 20_000),
    );
}

/// The PostgreSQL URL a worker got in place of a database path.
fn pg_url_arg(path: &Path) -> &str {
    path.to_str().expect("URL")
}

/// `url` pointed at `schema` (`options=-c search_path=<schema>`).
fn pg_schema_url(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-c%20search_path%3D{schema}")
}

/// A fresh schema with `n` open items (one multi-row INSERT each for the queues, items and
/// their `created` events), created by `PgStore::open`; returns its name and URL.
fn pg_fresh_schema(base: &str, n: usize) -> (String, String) {
    let schema = format!("bench_{}_{}", std::process::id(), epoch_us());
    let url = pg_filled_schema(base, &schema, n);
    (schema, url)
}

/// Schema `schema` (new) with `n` open items, as [`pg_fresh_schema`] makes it; its URL.
fn pg_filled_schema(base: &str, schema: &str, n: usize) -> String {
    let mut admin = postgres::Client::connect(base, postgres::NoTls).expect("connect");
    admin
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
        ))
        .unwrap();
    let url = pg_schema_url(base, schema);
    drop(PgStore::open(&url, actor("bench"), &PgOptions::default()).expect("create schema"));
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let base_ms = now_ms() - 86_400_000;
    // The per-row triggers are off for the bulk load (a replica's session): the kept
    // counts' trigger upserts one of a queue's 64 rows per item, and a row updated
    // thousands of times in one transaction makes each update walk all its versions
    // (a million items took over 15 minutes). The counts are then filled in one go, as
    // the trigger would have left them; the `created` events end no hold.
    c.batch_execute(&format!(
        "BEGIN; \
         SET LOCAL session_replication_role = replica; \
         INSERT INTO queues (name) VALUES ('default'), ('billing'), ('returns') \
         ON CONFLICT (name) DO NOTHING; \
         INSERT INTO items (queue, title, body, priority, created_at, created_by) \
         SELECT (ARRAY['default', 'billing', 'returns'])[g % 3 + 1], \
         'Customer request ' || g || ': check the invoice and reply', \
         'Order ' || (g::bigint * 7919 % 1000003) || ' was charged twice.', \
         CASE WHEN g % 10 = 0 THEN g % 3 ELSE 0 END, {base_ms} + g * 2, 'producer' \
         FROM generate_series(1, {n}) g; \
         INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
         SELECT id, created_at, 'producer', 'bench', 'created', '{{\"request_id\":null}}' \
         FROM items; \
         INSERT INTO item_counts (queue, state, shard, n) \
         SELECT queue, state, 0, count(*) FROM items GROUP BY queue, state \
         ON CONFLICT (queue, state, shard) DO UPDATE SET n = item_counts.n + excluded.n; \
         COMMIT"
    ))
    .unwrap();
    // Fresh statistics and visibility map for both sides alike (no autovacuum mid-run).
    c.batch_execute("VACUUM ANALYZE").unwrap();
    url
}

fn pg_drop_schema(base: &str, schema: &str) {
    let mut admin = postgres::Client::connect(base, postgres::NoTls).expect("connect");
    admin
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .unwrap();
}

/// Section 6, PostgreSQL: claim+complete cycles/s with 1, 2, 4, 8 processes draining a
/// fixed item count, caseload's `PgStore` against the raw `postgres`-crate baseline (with
/// and without the change counter's bump after COMMIT).
fn sec_pg(cfg: &Config, _dir: &Path, rep: &mut Report) {
    let Some(base) = std::env::var("CASELOAD_TEST_PG")
        .ok()
        .filter(|u| !u.trim().is_empty())
    else {
        println!("\n== pg: skipped (set CASELOAD_TEST_PG to a PostgreSQL URL) ==");
        return;
    };
    println!(
        "\n== pg: take_next + complete on PostgreSQL, {} items drained per run, median of {} \
         runs ==",
        cfg.pg_items, cfg.pg_runs
    );
    {
        let mut c = postgres::Client::connect(&base, postgres::NoTls).expect("connect");
        let v: String = c.query_one("SHOW server_version", &[]).unwrap().get(0);
        let sc: String = c.query_one("SHOW synchronous_commit", &[]).unwrap().get(0);
        println!("  server {v}, synchronous_commit {sc}");
    }
    const ENGINES: [&str; 3] = ["pgstore", "pgrawn", "pgraw"];
    let mut store_rates = Vec::new();
    for &p in &cfg.procs {
        let mut rates: [Vec<f64>; 3] = Default::default();
        let mut errs = [0u64; 3];
        // Runs alternate between the engines so that load from elsewhere hits all alike.
        for _ in 0..cfg.pg_runs {
            for (k, engine) in ENGINES.iter().enumerate() {
                let (schema, url) = pg_fresh_schema(&base, cfg.pg_items);
                let rs = run_workers(engine, Path::new(&url), p, "drain", "0");
                pg_drop_schema(&base, &schema);
                let start = rs.iter().map(|r| r.start).min().unwrap();
                let end = rs.iter().map(|r| r.end).max().unwrap();
                let cycles: u64 = rs.iter().map(|r| r.cycles).sum();
                errs[k] += rs.iter().map(|r| r.busy + r.other).sum::<u64>();
                for r in rs.iter().filter(|r| !r.err.is_empty()) {
                    println!("  {engine} error: {}", r.err);
                }
                assert_eq!(cycles as usize, cfg.pg_items, "{engine}: not all drained");
                rates[k].push(cycles as f64 / ((end - start) as f64 / 1e6));
            }
        }
        println!(
            "  {p} process(es): caseload runs {:.0?}, raw+bump runs {:.0?}, raw runs {:.0?} \
             cycles/s; load average {}",
            rates[0],
            rates[1],
            rates[2],
            loadavg()
        );
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let rate = [
            median(&mut rates[0]),
            median(&mut rates[1]),
            median(&mut rates[2]),
        ];
        store_rates.push((p, rate[0]));
        let ratio = rate[0] / rate[1];
        rep.add(
            "6 pg",
            format!("cycles/s, {p} process(es), raw with the bump"),
            format!("{:.0}", rate[0]),
            format!("{:.0}", rate[1]),
            format!("{ratio:.2}"),
            "≥0.7 of raw",
            yes(ratio >= 0.7 && errs[0] == 0),
        );
        rep.add(
            "6 pg",
            format!("cycles/s, {p} process(es), raw without the bump"),
            format!("{:.0}", rate[0]),
            format!("{:.0}", rate[2]),
            format!("{:.2}", rate[0] / rate[2]),
            "(reported)",
            "-",
        );
        if let Some(&(_, sc, sr)) = rep.sqlite_cycles.iter().find(|c| c.0 == p) {
            println!(
                "  SQLite (cycles section, same run), {p} process(es): caseload {sc:.0}, raw \
                 {sr:.0} cycles/s"
            );
        }
    }
    if let (Some(&(p1, r1)), Some(&(pn, rn))) = (store_rates.first(), store_rates.last())
        && pn > p1
    {
        let rising = store_rates.windows(2).all(|w| w[1].1 >= w[0].1);
        rep.add(
            "6 pg",
            format!("caseload scaling, {pn} vs {p1} process(es)"),
            format!("{:.2}×", rn / r1),
            "-",
            "-",
            "rises 1→8",
            format!("{} (monotonic: {rising})", yes(rn > r1)),
        );
    }
}

/// `__diag_import <rows>`: what each part of an import row costs. The raw import alone
/// (one process, batches of a fixed size, the store's SQL) into fresh copies of the
/// 10k-item file, once per variant: as before issue 11 (random content-hash request ids
/// and a `created` event per row), with line-keyed ids, without the event (today), and
/// today's minus one index or trigger at a time. Not part of the figures.
fn diag_import(cfg: &Config, dir: &Path, rows_n: usize) {
    let cfg2 = Config {
        import_rows: rows_n,
        cache: cfg.cache.clone(),
        ..Config::from_env()
    };
    let csv = import_csv(&cfg2);
    let mut rows = Vec::new();
    for_each_import_row(&csv, |it| rows.push(it));
    let hashed: Vec<NewItem> = rows
        .iter()
        .map(|it| {
            let mut h = caseload::import::Fnv128::default();
            for f in [&it.queue, &it.title, &it.body, &it.params] {
                h.field(f.as_bytes());
            }
            NewItem {
                request_id: Some(format!("import:{:032x}:1", h.value())),
                ..it.clone()
            }
        })
        .collect();
    let variants: [(&str, &[NewItem], bool, &str); 10] = [
        (
            "before: content-hash ids + created event",
            &hashed,
            true,
            "",
        ),
        ("line-keyed ids + created event", &rows, true, ""),
        ("line-keyed ids, no event (now)", &rows, false, ""),
        (
            "now, without items_take",
            &rows,
            false,
            "DROP INDEX items_take",
        ),
        (
            "now, without items_take_all",
            &rows,
            false,
            "DROP INDEX items_take_all",
        ),
        (
            "now, without items_open_age",
            &rows,
            false,
            "DROP INDEX items_open_age",
        ),
        (
            "now, without items_take_due",
            &rows,
            false,
            "DROP INDEX items_take_due",
        ),
        (
            "now, without items_created_by",
            &rows,
            false,
            "DROP INDEX items_created_by",
        ),
        (
            "now, without the count trigger",
            &rows,
            false,
            "DROP TRIGGER items_count_insert",
        ),
        (
            "now, without any of those",
            &rows,
            false,
            "DROP INDEX items_take; DROP INDEX items_take_all; DROP INDEX items_open_age; \
             DROP TRIGGER items_count_insert",
        ),
    ];
    for (name, items, event, drop) in variants {
        let db = dir.join("diag-import.db");
        filled_copy(cfg, cfg.small, cfg.small / 10, &db);
        let conn = open_raw(&db);
        diag_pragmas(&conn);
        conn.execute_batch(drop).unwrap();
        let t = Instant::now();
        let mut n = 0;
        for chunk in items.chunks(DIAG_BATCH) {
            n += raw_batch(&conn, chunk, event.then_some(()));
        }
        assert_eq!(n, rows_n);
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{name:45} {rows_n} rows in {secs:6.2} s: {:7.0} rows/s",
            rows_n as f64 / secs
        );
        drop_db(&db);
    }
}

fn drop_db(db: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = db.as_os_str().to_owned();
        p.push(suffix);
        std::fs::remove_file(PathBuf::from(p)).ok();
    }
}

// ---------------------------------------------------------------------------------------

type Section = fn(&Config, &Path, &mut Report);

const SECTIONS: [(&str, Section); 22] = [
    ("cycles", sec_cycles),
    ("fairness", sec_fairness),
    ("claim", sec_claim),
    ("due", sec_due),
    ("eligible", eligible::sec_eligible),
    ("enqueue", sec_enqueue),
    ("import", sec_import),
    ("import-bin", sec_import_bin),
    ("screen", sec_screen),
    ("pg", sec_pg),
    ("figures", figures::sec_figures),
    ("next", sec_next),
    ("cli", cli::sec_cli),
    ("ceiling", ceiling::sec_ceiling),
    ("check", check::sec_check),
    ("metrics", plumbing::sec_metrics),
    ("follow", plumbing::sec_follow),
    ("dup", duplicates::sec_duplicates),
    ("dup-sqlite", duplicates::sec_dup_sqlite),
    ("dup-pg", duplicates::sec_dup_pg),
    ("verify", verify::sec_verify),
    ("work", work::sec_work),
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("__raw_call") {
        cli::raw_call(&args[1..]);
        return;
    }
    if args.first().map(String::as_str) == Some("__worker") {
        let rest = &args[1..];
        assert_eq!(rest.first().map(String::as_str), Some("cycle"));
        worker(&rest[1..]);
        return;
    }
    // cargo bench passes --bench; names select sections.
    let wanted: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .take_while(|a| !a.starts_with("__"))
        .collect();
    for w in &wanted {
        assert!(
            SECTIONS.iter().any(|(n, _)| n == w),
            "unknown section {w}; sections: {}",
            SECTIONS.map(|(n, _)| n).join(", ")
        );
    }
    let cfg = Config::from_env();
    let tmp = tempfile::Builder::new()
        .prefix("caseload-bench-")
        .tempdir()
        .unwrap();
    if args.first().map(String::as_str) == Some("__diag_import") {
        let n = args.get(1).map_or(200_000, |s| s.parse().unwrap());
        diag_import(&cfg, tmp.path(), n);
        return;
    }
    println!(
        "caseload engine benchmark — work dir {}, cache {}, load average {}",
        tmp.path().display(),
        cfg.cache.display(),
        loadavg()
    );
    println!(
        "fsync probe: {:.3} ms per 4 KiB write + fdatasync (median of 50)",
        fsync_probe(tmp.path())
    );
    if let Ok(p) = std::env::var("CL_BENCH_PRAGMAS") {
        println!("DIAGNOSTIC RUN: every measured connection also runs `{p}`");
    }
    let started = Instant::now();
    let mut rep = Report::default();
    for (name, f) in SECTIONS {
        if wanted.is_empty() || wanted.contains(&name) {
            let t = Instant::now();
            f(&cfg, tmp.path(), &mut rep);
            println!(
                "  ({name}: {:.1} s; load average now {})",
                t.elapsed().as_secs_f64(),
                loadavg()
            );
        }
    }
    rep.print_markdown();
    println!("\ntotal {:.1} s", started.elapsed().as_secs_f64());
}
