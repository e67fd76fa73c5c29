//! The SQLite store: one file shared by everyone on a host.
//!
//! WAL, `synchronous=FULL`, foreign keys on, every write in `BEGIN IMMEDIATE` (so a write
//! transaction never fails half-way with SQLITE_BUSY), and a busy handler of short
//! jittered sleeps instead of SQLite's default back-off, which lets one process starve for
//! seconds while others re-take the lock. `now` is read after the write lock is taken, so
//! lock times are ordered like the writes themselves.
//!
//! Files: `open` (checks, settings, busy handling), `tx` (the lock protocol's primitives),
//! `reads`, `stats`, `check`, `migrate`, and `sql` (the statements the benchmark shares).

mod check;
pub mod migrate;
mod open;
mod reads;
pub mod sql;
mod stats;
mod tx;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

use self::migrate::Migration;
use self::open::retry_busy;
pub use self::open::{Clock, OpenOptions, system_clock};
use self::tx::SqliteTx;
use crate::domain::{Actor, Event, Item, ItemState, Millis, QueueSettings, Role};
use crate::store::backend::Backend;
use crate::store::error::{Result, StoreError};
use crate::store::ops::Tx;
use crate::store::{ListFilter, LostLock, Stats};

/// The SQLite implementation of the [`crate::store::Store`].
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
    actor: Actor,
    clock: Clock,
    read_only: bool,
    migration: Migration,
    own_commits: u64,
}

impl SqliteStore {
    fn new(
        conn: Connection,
        path: PathBuf,
        actor: Actor,
        clock: Clock,
        read_only: bool,
        migration: Migration,
    ) -> Self {
        SqliteStore {
            conn,
            path,
            actor,
            clock,
            read_only,
            migration,
            own_commits: 0,
        }
    }

    /// Replaces the clock (tests).
    pub fn set_clock(&mut self, clock: Clock) {
        self.clock = clock;
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True when the file was opened read-only (its permissions allow no writes).
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// What opening did to the schema.
    pub fn migration(&self) -> Migration {
        self.migration
    }

    /// The raw connection (benchmarks and tests).
    pub fn connection(&self) -> &Connection {
        &self.conn
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
                    "the database is corrupt ({text}); run `caseload check` and restore from \
                     a backup"
                )),
                C::ReadOnly => StoreError::ReadOnly(format!("{text}; changes are refused")),
                C::DatabaseBusy | C::DatabaseLocked => StoreError::Busy(format!(
                    "{text} (another program held the write lock too long)"
                )),
                C::CannotOpen => StoreError::Unusable(format!("cannot open the database: {text}")),
                C::DiskFull => StoreError::Database(format!("the disk is full: {text}")),
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

impl Backend for SqliteStore {
    fn actor(&self) -> &Actor {
        &self.actor
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

    fn writable(&self) -> bool {
        !self.read_only
    }

    /// `BEGIN IMMEDIATE`, with `now` read after the write lock is held; commits on
    /// success, rolls back on error.
    fn transact(&mut self, f: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()> {
        if self.read_only {
            return Err(StoreError::ReadOnly(format!(
                "{} cannot be written (its permissions are read-only); browsing works, changes \
                 are refused",
                self.path.display()
            )));
        }
        retry_busy(|| self.conn.execute_batch("BEGIN IMMEDIATE"))?;
        let mut tx = SqliteTx {
            c: &self.conn,
            now: (self.clock)(),
            actor: &self.actor,
        };
        match f(&mut tx) {
            Ok(()) => match self.conn.execute_batch("COMMIT") {
                Ok(()) => {
                    self.own_commits += 1;
                    Ok(())
                }
                Err(e) => {
                    let _ = self.conn.execute_batch("ROLLBACK");
                    Err(map_err(e))
                }
            },
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    fn item(&mut self, id: i64) -> Result<Item> {
        reads::load_item(&self.conn, id)?.ok_or(StoreError::NotFound(id))
    }

    fn history(&mut self, id: i64) -> Result<Vec<Event>> {
        reads::history(&self.conn, id)
    }

    fn list(&mut self, filter: &ListFilter) -> Result<Vec<Item>> {
        reads::list(&self.conn, filter, (self.clock)())
    }

    fn count(&mut self, filter: &ListFilter) -> Result<u64> {
        reads::count(&self.conn, filter, (self.clock)())
    }

    fn queues(&mut self) -> Result<Vec<QueueSettings>> {
        reads::queues(&self.conn)
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

    fn stats(&mut self) -> Result<Stats> {
        stats::stats(&self.conn, (self.clock)())
    }

    fn lock_started(&mut self, ids: &[i64]) -> Result<Vec<(i64, Millis)>> {
        reads::lock_started(&self.conn, ids)
    }

    fn events_by(&mut self, actor: &str, since: Millis) -> Result<Vec<Event>> {
        reads::events_by(&self.conn, actor, since)
    }

    fn lost_locks(&mut self, user: &str, since: Millis) -> Result<Vec<LostLock>> {
        reads::lost_locks(&self.conn, user, since)
    }

    fn check(&mut self) -> Result<Vec<String>> {
        check::check(&self.conn)
    }

    fn backup(&mut self, dest: &Path) -> Result<()> {
        if dest.exists() {
            return Err(StoreError::Invalid(format!(
                "{} exists already; choose a new file name",
                dest.display()
            )));
        }
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "backup".into());
        let tmp = dir.join(format!(".{name}.partial-{}", std::process::id()));
        let run = || -> Result<()> {
            let mut dst = Connection::open(&tmp)?;
            {
                let b = rusqlite::backup::Backup::new(&self.conn, &mut dst)?;
                b.run_to_completion(1024, Duration::from_millis(0), None)?;
            }
            dst.execute_batch("PRAGMA journal_mode = DELETE")?;
            drop(dst);
            std::fs::rename(&tmp, dest)
                .map_err(|e| StoreError::Database(format!("cannot write {}: {e}", dest.display())))
        };
        let out = run();
        if out.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        out
    }

    fn export(
        &mut self,
        state: Option<ItemState>,
        each: &mut dyn FnMut(&Item) -> std::io::Result<()>,
    ) -> Result<u64> {
        reads::export(&self.conn, state, each)
    }
}
