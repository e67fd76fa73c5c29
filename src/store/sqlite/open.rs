//! Opening an SQLite file: the checks before SQLite sees it, the connection's settings
//! (WAL, `synchronous=FULL`, foreign keys, a 32 MiB page cache), the migration, and the
//! busy handler of short jittered sleeps that lets waiting processes take turns.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};

use super::migrate::{self, Migration};
use super::{SqliteStore, map_err};
use crate::domain::{Actor, Millis};
use crate::store::error::{Result, StoreError};

/// A source of "now" in Unix milliseconds; tests pass a fixed or stepped clock.
pub type Clock = Box<dyn Fn() -> Millis + Send>;

/// The host's clock.
pub fn system_clock() -> Millis {
    chrono::Utc::now().timestamp_millis()
}

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

/// How long a busy database is retried before giving up.
pub(super) const BUSY_PATIENCE: Duration = Duration::from_secs(30);

impl SqliteStore {
    /// Opens (creating and migrating when needed) the database at `path`.
    pub fn open(path: &Path, actor: Actor, opts: &OpenOptions) -> Result<Self> {
        Self::open_with_clock(path, actor, opts, Box::new(system_clock))
    }

    /// Opens with a given clock (tests).
    pub fn open_with_clock(
        path: &Path,
        actor: Actor,
        opts: &OpenOptions,
        clock: Clock,
    ) -> Result<Self> {
        let read_only = preflight(path, opts)?;
        let flags = if read_only {
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
        };
        let conn = Connection::open_with_flags(path, flags).map_err(map_err)?;
        conn.busy_handler(Some(busy_sleep)).map_err(map_err)?;
        conn.execute_batch("PRAGMA foreign_keys = ON")
            .map_err(map_err)?;
        // Reading the schema version makes SQLite read the header: not-a-database shows here.
        conn.query_row("PRAGMA schema_version", [], |r| r.get::<_, i64>(0))
            .map_err(map_err)?;
        // A 32 MiB page cache (SQLite's default is 2 MiB): an import batch of 2000 rows on a
        // large file dirties more pages than 2 MiB holds, and SQLite then spills them to the
        // WAL mid-transaction and reads them back (benches/queue.rs, BENCHMARKS.md).
        conn.execute_batch("PRAGMA cache_size = -32768")
            .map_err(map_err)?;
        migrate::check_ours(&conn)?;
        let now = clock();
        let migration = if read_only {
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
            Migration::UpToDate
        } else {
            retry_busy(|| {
                let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
                Ok(mode)
            })?;
            conn.execute_batch("PRAGMA synchronous = FULL")
                .map_err(map_err)?;
            let mut attempt = Instant::now();
            loop {
                match migrate::migrate(&conn, &actor, now) {
                    Err(StoreError::Busy(_)) if attempt.elapsed() < BUSY_PATIENCE => {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Err(e) => return Err(e),
                    Ok(m) => break m,
                }
                if attempt.elapsed() > BUSY_PATIENCE {
                    attempt = Instant::now();
                }
            }
        };
        Ok(SqliteStore::new(
            conn,
            path.to_path_buf(),
            actor,
            clock,
            read_only,
            migration,
        ))
    }
}

/// Checks the file before SQLite sees it; returns whether it must be opened read-only.
fn preflight(path: &Path, opts: &OpenOptions) -> Result<bool> {
    let shown = path.display();
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(StoreError::Unusable(format!("{shown}: {e}"))),
    };
    if meta.is_none() {
        if opts.must_exist {
            return Err(StoreError::Unusable(format!(
                "{shown} does not exist (run `caseload init` to create it)"
            )));
        }
        if !dir.exists() {
            if opts.create_dirs {
                std::fs::create_dir_all(&dir).map_err(|e| {
                    StoreError::Unusable(format!("cannot create {}: {e}", dir.display()))
                })?;
            } else {
                return Err(StoreError::Unusable(format!(
                    "{shown}: directory {} does not exist",
                    dir.display()
                )));
            }
        }
    }
    if !opts.allow_network_fs && std::env::var_os("CASELOAD_ALLOW_NETWORK_FS").is_none() {
        crate::store::location::check_local_fs(&dir).map_err(StoreError::Unusable)?;
    }
    let Some(meta) = meta else {
        return Ok(false);
    };
    if meta.is_dir() {
        return Err(StoreError::Unusable(format!(
            "{shown} is a directory, not a database file"
        )));
    }
    let len = meta.len();
    if len == 0 {
        if opts.allow_empty {
            return Ok(false);
        }
        return Err(StoreError::Unusable(format!(
            "{shown} is an empty file, not a caseload database (run `caseload init` to create \
             the database in it)"
        )));
    }
    let mut header = [0u8; 100];
    let got = read_prefix(path, &mut header)
        .map_err(|e| StoreError::Unusable(format!("{shown}: cannot read: {e}")))?;
    if got < 16 || &header[..16] != b"SQLite format 3\0" {
        return Err(StoreError::Unusable(format!(
            "{shown} is not a caseload database (not an SQLite file)"
        )));
    }
    if got < 100 {
        return Err(StoreError::Corrupt(format!(
            "{shown} is truncated ({len} bytes, shorter than an SQLite header); restore it \
             from a backup"
        )));
    }
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65536u64,
        n => u64::from(n),
    };
    let pages = u64::from(u32::from_be_bytes([
        header[28], header[29], header[30], header[31],
    ]));
    let change = &header[24..28];
    let valid_for = &header[92..96];
    if change == valid_for && pages > 0 && page_size >= 512 && pages * page_size > len {
        return Err(StoreError::Corrupt(format!(
            "{shown} is truncated ({len} bytes, its header says {}); restore it from a backup",
            pages * page_size
        )));
    }
    Ok(meta.permissions().readonly())
}

fn read_prefix(path: &Path, buf: &mut [u8]) -> std::io::Result<usize> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// The busy handler: short sleeps with jitter so that waiting processes take turns.
fn busy_sleep(attempt: i32) -> bool {
    // ~30 s of patience at an average of ~300 µs a try.
    if attempt > 100_000 {
        return false;
    }
    let jitter = jitter_micros(400);
    std::thread::sleep(Duration::from_micros(100 + jitter));
    true
}

pub(super) fn jitter_micros(max: u64) -> u64 {
    use std::cell::Cell;
    thread_local! {
        static STATE: Cell<u64> = Cell::new(
            (std::process::id() as u64) << 32
                ^ std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.subsec_nanos() as u64)
                    .unwrap_or(7)
                | 1,
        );
    }
    STATE.with(|s| {
        let mut x = s.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.set(x);
        x % max
    })
}

/// Retries `f` while SQLite reports the database busy (cases the handler cannot cover,
/// such as WAL recovery), for up to [`BUSY_PATIENCE`].
pub(super) fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> Result<T> {
    let start = Instant::now();
    loop {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) if is_busy(&e) && start.elapsed() < BUSY_PATIENCE => {
                std::thread::sleep(Duration::from_micros(200 + jitter_micros(800)));
            }
            Err(e) => return Err(map_err(e)),
        }
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}
