//! The store test harness: one `Backend` per database kind, so that the same test body runs
//! against SQLite (always) and PostgreSQL (when `CASELOAD_TEST_PG` holds a URL).
//!
//! Expiry is tested without sleeping: every store is opened with a clock offset that skews
//! its "now" (SQLite: the host clock plus the offset; PostgreSQL: the server's clock plus
//! the offset, added in SQL).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use caseload::domain::{Actor, NewItem, QueueUpdate};
use caseload::store::clock::system_clock;
use caseload::store::postgres::{PgOptions, PgStore};
use caseload::store::sqlite::{OpenOptions, SqliteStore};
use caseload::store::{AddOptions, Added, Store, StoreError, Writes};

/// Opens boss (the supervisor: first to open) and gives the default queue a 60 s lock.
pub fn setup(b: &dyn Backend) -> BoxStore {
    let mut boss = b.open("boss", 0);
    boss.set_queue(
        "default",
        &QueueUpdate {
            lock_seconds: Some(60),
            warn_seconds: Some(10),
            ..Default::default()
        },
        true,
    )
    .expect("set queue");
    boss
}

/// The ways the tests add items, over the store's one [`Writes::add_items`] (queues
/// not known yet are created).
pub trait Adds {
    /// Adds one item; a known request id gives the existing item instead.
    fn add(&mut self, item: &NewItem) -> Result<Added, StoreError>;
    /// Adds a batch in one transaction, skipping known request ids; how many were new.
    fn add_batch(&mut self, items: &[NewItem]) -> Result<usize, StoreError>;
    /// Adds a batch in one transaction, skipping known request ids; what each became.
    fn add_each(&mut self, items: &[NewItem]) -> Result<Vec<Added>, StoreError>;
}

impl<S: Writes + ?Sized> Adds for S {
    fn add(&mut self, item: &NewItem) -> Result<Added, StoreError> {
        let added = self.add_each(std::slice::from_ref(item))?;
        Ok(added[0])
    }

    fn add_batch(&mut self, items: &[NewItem]) -> Result<usize, StoreError> {
        Ok(self.add_each(items)?.iter().filter(|a| a.created).count())
    }

    fn add_each(&mut self, items: &[NewItem]) -> Result<Vec<Added>, StoreError> {
        self.add_items(items, AddOptions::creating_queues())
    }
}

/// Adds an item to the default queue; returns its id.
pub fn add(s: &mut dyn Store, title: &str) -> i64 {
    s.add(&NewItem::titled(title)).expect("add").id
}

/// The kinds of an item's events, in order.
pub fn kinds(s: &mut dyn Store, id: i64) -> Vec<&'static str> {
    s.history(id)
        .expect("history")
        .iter()
        .map(|e| e.kind.as_str())
        .collect()
}

/// The error of `r`, which must be an error with exit code `code`.
#[track_caller]
pub fn assert_code<T: std::fmt::Debug>(r: Result<T, StoreError>, code: i32) -> StoreError {
    match r {
        Ok(v) => panic!("expected an error with exit code {code}, got Ok({v:?})"),
        Err(e) => {
            assert_eq!(e.exit_code(), code, "wrong exit code for: {e}");
            e
        }
    }
}

/// Runs `holder_op` and `boss_op` at the same moment on two threads.
pub fn race<A: Send, B: Send>(
    mut holder: BoxStore,
    mut boss: BoxStore,
    holder_op: impl FnOnce(&mut dyn Store) -> A + Send,
    boss_op: impl FnOnce(&mut dyn Store) -> B + Send,
) -> (A, B, BoxStore, BoxStore) {
    let barrier = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            barrier.wait();
            let r = holder_op(&mut *holder);
            (r, holder)
        });
        let bh = s.spawn(|| {
            barrier.wait();
            let r = boss_op(&mut *boss);
            (r, boss)
        });
        let (a, holder) = h.join().expect("holder thread");
        let (b, boss) = bh.join().expect("boss thread");
        (a, b, holder, boss)
    })
}

/// A store able to move to another thread (the race tests).
pub type BoxStore = Box<dyn Store + Send>;

/// A database kind the conformance suite runs against.
pub trait Backend {
    /// Opens a store on this test's database as `user`, its "now" skewed by
    /// `clock_offset_ms`. The first user to open becomes the database's supervisor.
    fn open(&self, user: &str, clock_offset_ms: i64) -> BoxStore;
    /// "sqlite" or "postgres".
    fn name(&self) -> &'static str;
    /// What `--db` takes to reach this test's database (a file path or a URL), for the
    /// real binary.
    fn location(&self) -> String;
    /// Another, empty database of the same kind (for tests that need one per case).
    fn fresh(&self) -> Box<dyn Backend + Send>;
    /// Runs SQL on the test database directly, with the schema's CHECK constraints off:
    /// how another program (or a damaged disk) could leave a row caseload cannot read.
    fn spoil(&self, sql: &str);
    /// The first column of `sql`'s rows as text, read directly from the test database
    /// (what a table holds, beside what caseload shows of it).
    fn texts(&self, sql: &str) -> Vec<String>;
}

/// A fresh SQLite file in its own temporary directory.
pub struct SqliteBackend {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl Default for SqliteBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl SqliteBackend {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("queue.db");
        SqliteBackend { _dir: dir, path }
    }
}

impl Backend for SqliteBackend {
    fn open(&self, user: &str, clock_offset_ms: i64) -> BoxStore {
        let opts = OpenOptions {
            allow_network_fs: true,
            ..OpenOptions::default()
        };
        let store = SqliteStore::open_with_clock(
            &self.path,
            Actor::new(user, "tester"),
            &opts,
            Box::new(move || system_clock() + clock_offset_ms),
        )
        .unwrap_or_else(|e| panic!("open {}: {e}", self.path.display()));
        Box::new(store)
    }

    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn fresh(&self) -> Box<dyn Backend + Send> {
        Box::new(SqliteBackend::new())
    }

    fn spoil(&self, sql: &str) {
        let c = rusqlite::Connection::open(&self.path).expect("open the test file");
        // The kinds of events and audit records are checked by triggers: another program
        // could drop them as easily as it ignores a CHECK.
        let checks: Vec<(String, String)> = c
            .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%_kind_%'")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for (name, _) in &checks {
            c.execute_batch(&format!("DROP TRIGGER {name}")).unwrap();
        }
        c.execute_batch(&format!("PRAGMA ignore_check_constraints = ON; {sql}"))
            .expect("spoil");
        for (_, sql) in &checks {
            c.execute_batch(sql).unwrap();
        }
    }

    fn texts(&self, sql: &str) -> Vec<String> {
        let c = rusqlite::Connection::open(&self.path).expect("open the test file");
        let mut stmt = c.prepare(sql).expect("prepare");
        stmt.query_map([], |r| r.get(0))
            .expect("query")
            .map(Result::unwrap)
            .collect()
    }
}

/// The PostgreSQL server of `CASELOAD_TEST_PG`; without one, the test is counted as
/// skipped (see [`super::skip`]) and returns.
pub fn pg_url_or_skip() -> Option<String> {
    let url = pg_url();
    if url.is_none() {
        super::skip::skip(super::skip::NO_POSTGRES);
    }
    url
}

/// The PostgreSQL server of `CASELOAD_TEST_PG`, if one is given.
pub fn pg_url() -> Option<String> {
    std::env::var("CASELOAD_TEST_PG")
        .ok()
        .filter(|u| !u.trim().is_empty())
}

/// A fresh, uniquely named schema on the test server (dropped at the end), so that tests
/// run in parallel without seeing each other.
pub struct PgBackend {
    pub base_url: String,
    pub schema: String,
    /// The URL that points caseload at the schema (via `options=-c search_path=...`).
    pub url: String,
}

static SCHEMA_SEQ: AtomicU64 = AtomicU64::new(0);

impl PgBackend {
    /// A backend on a new schema, or `None` (with a note) when no server is configured.
    pub fn from_env() -> Option<Self> {
        let base_url = pg_url_or_skip()?;
        Some(Self::on(base_url))
    }

    /// A backend on a new schema of the database at `base_url`.
    pub fn on(base_url: String) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let schema = format!(
            "cl_test_{}_{}_{}",
            std::process::id(),
            SCHEMA_SEQ.fetch_add(1, Ordering::Relaxed),
            nanos
        );
        let mut admin = postgres::Client::connect(&base_url, postgres::NoTls)
            .unwrap_or_else(|e| panic!("connect to CASELOAD_TEST_PG: {e}"));
        admin
            .batch_execute(&format!("CREATE SCHEMA {schema}"))
            .expect("create test schema");
        let url = with_search_path(&base_url, &schema);
        PgBackend {
            base_url,
            schema,
            url,
        }
    }

    /// A direct connection to the test schema (for tests that poke at the server).
    pub fn admin(&self) -> postgres::Client {
        postgres::Client::connect(&self.url, postgres::NoTls).expect("connect")
    }
}

/// A database of the test server whose `LC_CTYPE` is C (lower() folds only ASCII there),
/// created once and kept; its URL.
pub fn database_with_ctype_c(base: &str) -> String {
    extra_database(base, "caseload_test_ctype_c", "ENCODING 'UTF8'")
        .expect("a UTF-8 database with LC_CTYPE C")
}

/// A database of the test server named `name`, created once (with `options`, from
/// template0, LC_COLLATE and LC_CTYPE C) and kept; its URL, or `None` (with a note) when
/// the server cannot create it (e.g. it was built without ICU).
pub fn extra_database(base: &str, name: &str, options: &str) -> Option<String> {
    let mut admin = postgres::Client::connect(base, postgres::NoTls).expect("connect");
    // Another test process may create it at the same moment: either way it exists after.
    let made = admin.batch_execute(&format!(
        "CREATE DATABASE {name} TEMPLATE template0 {options} LC_COLLATE 'C' LC_CTYPE 'C'"
    ));
    let exists: bool = admin
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)",
            &[&name],
        )
        .expect("ask for the database")
        .get(0);
    if !exists {
        let why = format!("the server cannot create database {name} ({made:?})");
        super::skip::skip(&why);
        return None;
    }
    let (head, query) = base.split_once('?').unwrap_or((base, ""));
    let (server, _) = head
        .rsplit_once('/')
        .filter(|(s, _)| s.contains("://") && !s.ends_with('/'))
        .expect("CASELOAD_TEST_PG is a postgres:// URL naming a database");
    let url = format!("{server}/{name}");
    Some(if query.is_empty() {
        url
    } else {
        format!("{url}?{query}")
    })
}

/// `url` with `options=-c search_path=SCHEMA` added.
pub fn with_search_path(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-c%20search_path%3D{schema}")
}

impl Drop for PgBackend {
    fn drop(&mut self) {
        if let Ok(mut admin) = postgres::Client::connect(&self.base_url, postgres::NoTls) {
            let _ = admin.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema));
        }
    }
}

impl Backend for PgBackend {
    fn open(&self, user: &str, clock_offset_ms: i64) -> BoxStore {
        let opts = PgOptions {
            clock_offset_ms,
            ..PgOptions::default()
        };
        let store = PgStore::open(&self.url, Actor::new(user, "tester"), &opts)
            .unwrap_or_else(|e| panic!("open postgres schema {}: {e}", self.schema));
        Box::new(store)
    }

    fn name(&self) -> &'static str {
        "postgres"
    }

    fn location(&self) -> String {
        self.url.clone()
    }

    fn fresh(&self) -> Box<dyn Backend + Send> {
        Box::new(PgBackend::from_env().expect("CASELOAD_TEST_PG is set"))
    }

    fn spoil(&self, sql: &str) {
        self.admin()
            .batch_execute(&format!(
                "ALTER TABLE items DROP CONSTRAINT IF EXISTS items_state_check; \
                 ALTER TABLE events DROP CONSTRAINT IF EXISTS events_kind_check; {sql}"
            ))
            .expect("spoil");
    }

    fn texts(&self, sql: &str) -> Vec<String> {
        let rows = self.admin().query(sql, &[]).expect("query");
        rows.iter().map(|r| r.get(0)).collect()
    }
}

/// Generates one `#[test]` per (case, backend): `sqlite::case` always runs,
/// `postgres::case` runs when `CASELOAD_TEST_PG` is set, and is otherwise counted as
/// skipped (the binary's last line says so; see `skip`).
#[macro_export]
macro_rules! conformance {
    (pooled; $($case:ident),* $(,)?) => {
        conformance!($($case),*);
        /// The same cases through a real PgBouncer in transaction mode (issue 32 §1).
        mod pooled {
            $(
                #[test]
                fn $case() {
                    if let Some(b) = $crate::support::pooler::PooledBackend::from_env() {
                        super::$case(&b);
                    }
                }
            )*
        }
    };
    ($($case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[test]
                fn $case() {
                    let b = $crate::support::backend::SqliteBackend::new();
                    super::$case(&b);
                }
            )*
        }
        mod postgres {
            $(
                #[test]
                fn $case() {
                    if let Some(b) = $crate::support::backend::PgBackend::from_env() {
                        super::$case(&b);
                    }
                }
            )*
        }
    };
}
