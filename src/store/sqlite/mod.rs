//! The SQLite store: one file shared by everyone on a host.
//!
//! WAL, `synchronous=FULL`, foreign keys on, every write in `BEGIN IMMEDIATE` (so a write
//! transaction never fails half-way with SQLITE_BUSY), and a busy handler of short
//! jittered sleeps instead of SQLite's default back-off, which lets one process starve for
//! seconds while others re-take the lock. `now` is read after the write lock is taken, so
//! lock times are ordered like the writes themselves.

pub mod migrate;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, params};
use serde_json::json;

use self::migrate::Migration;
use crate::domain::queue::validate_queue_name;
use crate::domain::time::clock_hm;
use crate::domain::user::validate_user_name;
use crate::domain::{
    Actor, Event, EventKind, Item, ItemState, Millis, NewItem, QueueSettings, QueueUpdate, Role,
};
use crate::store::error::{Result, StoreError};
use crate::store::holder::{HolderOp, check_comment, required_reason};
use crate::store::{
    AGE_BUCKETS, Added, Bucket, ListFilter, LostLock, OldestItem, QueueCount, StateCount,
    StateFilter, Stats, Store, TakeNext, UserWip, Window, reverse_order,
};

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
const BUSY_PATIENCE: Duration = Duration::from_secs(30);

const ITEM_COLS: &str = "id, queue, request_id, title, body, params, priority, due_at, state, \
     lock_user, lock_time, lock_token, notes, result, error, created_at, created_by, \
     finished_at, finished_by";

/// Condition: the row's lock has expired at ?now (parameter name given).
const EXPIRED: &str =
    "lock_time <= :now - (SELECT q.lock_seconds * 1000 FROM queues q WHERE q.name = items.queue)";

/// The SQLite implementation of [`Store`].
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
        Ok(SqliteStore {
            conn,
            path: path.to_path_buf(),
            actor,
            clock,
            read_only,
            migration,
            own_commits: 0,
        })
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

    /// Runs `f` inside `BEGIN IMMEDIATE`, with `now` read after the lock is held; commits
    /// on success, rolls back on error.
    fn write<T>(&mut self, f: impl FnOnce(&Connection, Millis, &Actor) -> Result<T>) -> Result<T> {
        if self.read_only {
            return Err(StoreError::ReadOnly(format!(
                "{} cannot be written (its permissions are read-only); browsing works, changes \
                 are refused",
                self.path.display()
            )));
        }
        retry_busy(|| self.conn.execute_batch("BEGIN IMMEDIATE"))?;
        let now = (self.clock)();
        let out = f(&self.conn, now, &self.actor);
        match out {
            Ok(v) => match self.conn.execute_batch("COMMIT") {
                Ok(()) => {
                    self.own_commits += 1;
                    Ok(v)
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

    /// A holder's fenced write: it applies only where the caller still holds the lock
    /// with `token`; otherwise the loss is explained.
    fn holder_write(&mut self, id: i64, token: i64, op: HolderOp<'_>) -> Result<()> {
        let w = op.plan(token)?;
        let sql = format!(
            "UPDATE items SET {} WHERE id = :id AND lock_user = :me AND lock_token = :token \
             AND state = 'open'",
            w.set
        );
        self.write(|c, now, actor| {
            let n = execute_named_subset(c, &sql, id, &actor.name, token, now, w.value)?;
            if n == 0 {
                return Err(explain_loss(c, id, token, &actor.name)?);
            }
            insert_event(c, id, now, actor, w.kind, &w.detail)
        })
    }
}

/// Executes `sql` binding only the named parameters it uses.
fn execute_named_subset(
    c: &Connection,
    sql: &str,
    id: i64,
    me: &str,
    token: i64,
    now: Millis,
    value: Option<&str>,
) -> rusqlite::Result<usize> {
    let mut stmt = c.prepare_cached(sql)?;
    for (name, v) in [
        (":id", rusqlite::types::Value::Integer(id)),
        (":me", rusqlite::types::Value::Text(me.to_string())),
        (":token", rusqlite::types::Value::Integer(token)),
        (":now", rusqlite::types::Value::Integer(now)),
        (
            ":value",
            value.map_or(rusqlite::types::Value::Null, |s| {
                rusqlite::types::Value::Text(s.to_string())
            }),
        ),
    ] {
        if let Some(i) = stmt.parameter_index(name)? {
            stmt.raw_bind_parameter(i, v)?;
        }
    }
    stmt.raw_execute()
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

fn jitter_micros(max: u64) -> u64 {
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
fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> Result<T> {
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

fn item_from_row(r: &Row<'_>) -> rusqlite::Result<Item> {
    let state: String = r.get(8)?;
    Ok(Item {
        id: r.get(0)?,
        queue: r.get(1)?,
        request_id: r.get(2)?,
        title: r.get(3)?,
        body: r.get(4)?,
        params: r.get(5)?,
        priority: r.get(6)?,
        due_at: r.get(7)?,
        state: ItemState::parse(&state).unwrap_or(ItemState::Open),
        lock_user: r.get(9)?,
        lock_time: r.get(10)?,
        lock_token: r.get(11)?,
        notes: r.get(12)?,
        result: r.get(13)?,
        error: r.get(14)?,
        created_at: r.get(15)?,
        created_by: r.get(16)?,
        finished_at: r.get(17)?,
        finished_by: r.get(18)?,
    })
}

fn event_from_row(r: &Row<'_>) -> rusqlite::Result<Event> {
    let kind: String = r.get(5)?;
    let detail: String = r.get(6)?;
    Ok(Event {
        id: r.get(0)?,
        item_id: r.get(1)?,
        at: r.get(2)?,
        actor: r.get(3)?,
        os_user: r.get(4)?,
        kind: EventKind::parse(&kind).unwrap_or(EventKind::Noted),
        detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::Null),
    })
}

fn load_item(c: &Connection, id: i64) -> Result<Item> {
    c.prepare_cached(&format!("SELECT {ITEM_COLS} FROM items WHERE id = ?1"))?
        .query_row([id], item_from_row)
        .optional()?
        .ok_or(StoreError::NotFound(id))
}

/// One item that must still be open (else `NotOpen`, naming who finished it).
fn load_open_item(c: &Connection, id: i64) -> Result<Item> {
    let item = load_item(c, id)?;
    if item.state != ItemState::Open {
        return Err(StoreError::NotOpen {
            id,
            state: item.state,
            by: item.finished_by,
        });
    }
    Ok(item)
}

fn load_queue(c: &Connection, name: &str) -> Result<QueueSettings> {
    let q = c
        .prepare_cached(
            "SELECT name, lock_seconds, warn_seconds, max_per_user, paused FROM queues \
             WHERE name = ?1",
        )?
        .query_row([name], queue_from_row)
        .optional()?;
    match q {
        Some(q) => Ok(q),
        None => Err(StoreError::UnknownQueue {
            name: name.to_string(),
            known: queue_names(c)?,
        }),
    }
}

fn queue_names(c: &Connection) -> Result<Vec<String>> {
    let mut stmt = c.prepare_cached("SELECT name FROM queues ORDER BY name")?;
    let names = stmt
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(names)
}

fn queue_from_row(r: &Row<'_>) -> rusqlite::Result<QueueSettings> {
    Ok(QueueSettings {
        name: r.get(0)?,
        lock_seconds: r.get(1)?,
        warn_seconds: r.get(2)?,
        max_per_user: r.get(3)?,
        paused: r.get::<_, i64>(4)? != 0,
    })
}

fn insert_event(
    c: &Connection,
    item_id: i64,
    at: Millis,
    actor: &Actor,
    kind: EventKind,
    detail: &serde_json::Value,
) -> Result<()> {
    c.prepare_cached(
        "INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        item_id,
        at,
        actor.name,
        actor.os_user,
        kind.as_str(),
        detail.to_string()
    ])?;
    Ok(())
}

fn role_of(c: &Connection, user: &str) -> Result<Role> {
    let role: Option<String> = c
        .prepare_cached("SELECT role FROM users WHERE name = ?1")?
        .query_row([user], |r| r.get(0))
        .optional()?;
    Ok(role.as_deref().and_then(Role::parse).unwrap_or(Role::Staff))
}

fn require_supervisor(c: &Connection, actor: &Actor, action: &str) -> Result<()> {
    match role_of(c, &actor.name)? {
        Role::Supervisor => Ok(()),
        Role::Staff => Err(StoreError::SupervisorOnly(format!(
            "{} is staff and may not {action}",
            actor.name
        ))),
    }
}

/// Why a fenced holder write changed nothing, in the holder's terms.
fn explain_loss(c: &Connection, id: i64, token: i64, me: &str) -> Result<StoreError> {
    let item = match load_open_item(c, id) {
        Ok(item) => item,
        Err(e @ StoreError::NotOpen { .. }) => return Ok(e),
        Err(e) => return Err(e),
    };
    let last = last_lock_change(c, id)?;
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

fn last_lock_change(c: &Connection, id: i64) -> Result<Option<Event>> {
    Ok(c.prepare_cached(
        "SELECT id, item_id, at, actor, os_user, kind, detail FROM events \
             WHERE item_id = ?1 AND kind IN ('locked', 'taken_over', 'expired', 'unlocked', \
             'reassigned', 'released', 'skipped') ORDER BY id DESC LIMIT 1",
    )?
    .query_row([id], event_from_row)
    .optional()?)
}

/// The conditional write that takes an item: free, or expired, and within the WIP limit.
const CLAIM_SQL: &str = "UPDATE items SET lock_user = :me, lock_time = :now, \
     lock_token = lock_token + 1 \
     WHERE id = :id AND state = 'open' \
     AND (lock_user IS NULL OR lock_time <= :now - \
          (SELECT q.lock_seconds * 1000 FROM queues q WHERE q.name = items.queue)) \
     AND NOT EXISTS (SELECT 1 FROM queues q WHERE q.name = items.queue AND (q.paused = 1 OR \
          (q.max_per_user IS NOT NULL AND q.max_per_user <= (SELECT count(*) FROM items h \
           WHERE h.lock_user = :me AND h.queue = items.queue AND h.id <> items.id)))) \
     RETURNING id, queue, request_id, title, body, params, priority, due_at, state, \
     lock_user, lock_time, lock_token, notes, result, error, created_at, created_by, \
     finished_at, finished_by";

/// The first takeable item in take order, across all queues or within one.
fn candidate_sql(one_queue: bool) -> String {
    format!(
        "SELECT id, lock_user FROM items \
         WHERE state = 'open' {} \
         AND (lock_user IS NULL OR {EXPIRED}) \
         AND id NOT IN (SELECT value FROM json_each(:skip)) \
         AND NOT EXISTS (SELECT 1 FROM queues q WHERE q.name = items.queue AND (q.paused = 1 OR \
              (q.max_per_user IS NOT NULL AND q.max_per_user <= (SELECT count(*) FROM items h \
               WHERE h.lock_user = :me AND h.queue = items.queue AND h.id <> items.id)))) \
         ORDER BY priority DESC, created_at, id LIMIT 1",
        if one_queue { "AND queue = :queue" } else { "" }
    )
}

/// Takes `id` for `actor` if the claim condition holds; writes the event.
fn claim(
    c: &Connection,
    id: i64,
    prev_holder: Option<String>,
    now: Millis,
    actor: &Actor,
) -> Result<Option<Item>> {
    let item = c
        .prepare_cached(CLAIM_SQL)?
        .query_row(
            rusqlite::named_params! {":me": actor.name, ":now": now, ":id": id},
            item_from_row,
        )
        .optional()?;
    if let Some(item) = &item {
        match prev_holder {
            Some(from) => insert_event(
                c,
                id,
                now,
                actor,
                EventKind::TakenOver,
                &json!({"from": from, "token": item.lock_token}),
            )?,
            None => insert_event(
                c,
                id,
                now,
                actor,
                EventKind::Locked,
                &json!({"token": item.lock_token}),
            )?,
        }
    }
    Ok(item)
}

/// Why the caller can claim nothing from `queue` (or anywhere): a WIP limit reached or a
/// paused queue holding free items, else simply no free items.
fn explain_nothing(c: &Connection, queue: Option<&QueueSettings>, me: &str) -> Result<StoreError> {
    let queues = match queue {
        Some(q) => vec![q.clone()],
        None => c
            .prepare_cached(
                "SELECT name, lock_seconds, warn_seconds, max_per_user, paused FROM queues \
                 WHERE paused = 1 OR max_per_user IS NOT NULL ORDER BY name",
            )?
            .query_map([], queue_from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?,
    };
    let mut paused = Vec::new();
    for q in &queues {
        let has_free: bool = c
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM items WHERE queue = ?1 AND state = 'open' \
                 AND lock_user IS NULL)",
            )?
            .query_row([&q.name], |r| r.get(0))?;
        if !has_free {
            continue;
        }
        if q.paused {
            paused.push(q.name.clone());
            continue;
        }
        if let Some(max) = q.max_per_user {
            let held: i64 = c
                .prepare_cached("SELECT count(*) FROM items WHERE lock_user = ?1 AND queue = ?2")?
                .query_row(params![me, q.name], |r| r.get(0))?;
            if held >= max {
                return Ok(StoreError::WipLimit {
                    queue: q.name.clone(),
                    held,
                });
            }
        }
    }
    Ok(StoreError::NothingToClaim(
        match (queue, paused.is_empty()) {
            (_, false) => format!("queue '{}' is paused", paused.join("', '")),
            (Some(q), true) => format!("no free items in queue '{}'", q.name),
            (None, true) => "no free items in any open queue".into(),
        },
    ))
}

/// Builds the WHERE clause and ORDER BY of a list query, with its parameters.
fn list_sql(
    f: &ListFilter,
    now: Millis,
) -> (String, String, Vec<(&'static str, rusqlite::types::Value)>) {
    use rusqlite::types::Value;
    let mut conds: Vec<String> = Vec::new();
    let mut ps: Vec<(&'static str, Value)> = Vec::new();
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
            conds.push(format!("lock_user IS NOT NULL AND {EXPIRED}"));
            ps.push((":now", Value::Integer(now)));
            "lock_time, id"
        }
        StateFilter::Done | StateFilter::Failed | StateFilter::Cancelled => {
            let s = match f.state {
                StateFilter::Done => "done",
                StateFilter::Failed => "failed",
                _ => "cancelled",
            };
            conds.push(format!("state = '{s}'"));
            "id DESC"
        }
        StateFilter::All => "id",
    };
    if let Some(q) = &f.queue {
        conds.push("queue = :queue".into());
        ps.push((":queue", Value::Text(q.clone())));
    }
    if let Some(h) = &f.holder {
        conds.push("lock_user = :holder".into());
        ps.push((":holder", Value::Text(h.clone())));
    }
    if let Some(t) = f.text.as_ref().filter(|t| !t.is_empty()) {
        let escaped = t
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        conds.push(
            "(title LIKE :text ESCAPE '\\' OR body LIKE :text ESCAPE '\\' OR CAST(id AS TEXT) = :exact)"
                .into(),
        );
        ps.push((":text", Value::Text(format!("%{escaped}%"))));
        ps.push((":exact", Value::Text(t.trim_start_matches('#').to_string())));
    }
    let where_ = if conds.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", conds.join(" AND "))
    };
    (where_, order.to_string(), ps)
}

fn bind_named(
    stmt: &mut rusqlite::CachedStatement<'_>,
    ps: &[(&'static str, rusqlite::types::Value)],
) -> Result<()> {
    for (name, v) in ps {
        if let Some(i) = stmt.parameter_index(name)? {
            stmt.raw_bind_parameter(i, v.clone())?;
        }
    }
    Ok(())
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

impl SqliteStore {
    fn stats_in_snapshot(&mut self) -> Result<Stats> {
        let now = (self.clock)();
        let mut by_state: Vec<StateCount> = ItemState::ALL
            .iter()
            .map(|s| StateCount {
                state: *s,
                count: 0,
            })
            .collect();
        let mut by_queue: Vec<QueueCount> = self
            .queues()?
            .into_iter()
            .map(|q| QueueCount {
                queue: q.name,
                open: 0,
                locked: 0,
                done: 0,
                failed: 0,
                cancelled: 0,
                paused: q.paused,
            })
            .collect();
        let c2 = &self.conn;
        let mut stmt = c2.prepare_cached("SELECT queue, state, n FROM item_counts")?;
        let rows: Vec<(String, String, i64)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        for (queue, state, n) in rows {
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
        let mut locks: Vec<(String, String, i64, i64)> = c2
            .prepare_cached(
                "SELECT i.lock_user, i.queue, i.lock_time, q.lock_seconds FROM items i \
                 JOIN queues q ON q.name = i.queue WHERE i.lock_user IS NOT NULL",
            )?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<rusqlite::Result<_>>()?;
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
        let overdue: i64 = c2
            .prepare_cached("SELECT count(*) FROM items WHERE state = 'open' AND due_at < ?1")?
            .query_row([now], |r| r.get(0))?;
        // events_kind_at: only the last day's completions are read.
        let first_hour = now.div_euclid(3_600_000) - 23;
        let mut completed_per_hour = vec![0u64; 24];
        let mut stmt = c2.prepare_cached(
            "SELECT at / 3600000 - ?1, count(*) FROM events \
             WHERE kind = 'completed' AND at >= ?1 * 3600000 AND at <= ?2 GROUP BY 1",
        )?;
        for row in stmt.query_map([first_hour, now], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
        })? {
            let (h, n) = row?;
            if let Some(slot) = usize::try_from(h)
                .ok()
                .and_then(|h| completed_per_hour.get_mut(h))
            {
                *slot = n as u64;
            }
        }
        let c2 = &self.conn;
        let total_open = by_state
            .iter()
            .find(|s| s.state == ItemState::Open)
            .map_or(0, |s| s.count);
        let open_ages = open_age_buckets(c2, now, total_open)?;
        let oldest_open = c2
            .prepare_cached(
                "SELECT id, title, created_at FROM items WHERE state = 'open' \
                 ORDER BY created_at, id LIMIT 1",
            )?
            .query_row([], |r| {
                Ok(OldestItem {
                    id: r.get(0)?,
                    title: r.get(1)?,
                    created_at: r.get(2)?,
                })
            })
            .optional()?;
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
}

/// Open items by age. Each bucket is counted over the open-age index, but at most
/// `CAP` entries each: a bucket holding more (a million items imported yesterday) is
/// the total open count minus the others, so a refresh never walks a million entries.
fn open_age_buckets(c: &Connection, now: Millis, total_open: u64) -> Result<Vec<Bucket>> {
    const CAP: i64 = 20_000;
    let mut counts = Vec::with_capacity(AGE_BUCKETS.len());
    let mut ranges = Vec::with_capacity(AGE_BUCKETS.len());
    let mut prev = now + 1;
    for (_, lim) in AGE_BUCKETS {
        let lower = if lim == i64::MAX { i64::MIN } else { now - lim };
        ranges.push((lower, prev));
        prev = lower + 1;
    }
    let mut capped = c.prepare_cached(
        "SELECT count(*) FROM (SELECT 1 FROM items WHERE state = 'open' AND created_at > ?1 \
         AND created_at < ?2 LIMIT ?3)",
    )?;
    for &(lower, upper) in &ranges {
        counts.push(capped.query_row(params![lower, upper, CAP + 1], |r| r.get::<_, i64>(0))?);
    }
    let big: Vec<usize> = (0..counts.len()).filter(|&i| counts[i] > CAP).collect();
    if big.len() == 1 {
        // Items created after `now` (another host's clock) are in no bucket.
        let future: i64 = c
            .prepare_cached("SELECT count(*) FROM items WHERE state = 'open' AND created_at > ?1")?
            .query_row([now], |r| r.get(0))?;
        let others: i64 = (0..counts.len())
            .filter(|i| *i != big[0])
            .map(|i| counts[i])
            .sum();
        counts[big[0]] = (total_open as i64 - future - others).max(0);
    } else {
        let mut full = c.prepare_cached(
            "SELECT count(*) FROM items WHERE state = 'open' AND created_at > ?1 \
             AND created_at < ?2",
        )?;
        for i in big {
            let (lower, upper) = ranges[i];
            counts[i] = full.query_row([lower, upper], |r| r.get(0))?;
        }
    }
    Ok(AGE_BUCKETS
        .iter()
        .zip(counts)
        .map(|((label, _), n)| Bucket {
            label: label.to_string(),
            count: n.max(0) as u64,
        })
        .collect())
}

impl Store for SqliteStore {
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

    fn add(&mut self, item: &NewItem) -> Result<Added> {
        item.validate()
            .map_err(|e| StoreError::Invalid(e.message))?;
        self.write(|c, now, actor| {
            ensure_queue(c, &item.queue)?;
            insert_item(c, item, now, actor)
        })
    }

    fn add_batch(&mut self, items: &[NewItem]) -> Result<usize> {
        for it in items {
            it.validate().map_err(|e| StoreError::Invalid(e.message))?;
        }
        self.write(|c, now, actor| {
            let queues: std::collections::BTreeSet<&str> =
                items.iter().map(|i| i.queue.as_str()).collect();
            for q in queues {
                ensure_queue(c, q)?;
            }
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
        let skip = serde_json::to_string(&opts.skip).unwrap_or_else(|_| "[]".into());
        self.write(|c, now, actor| {
            let queue = match &opts.queue {
                Some(name) => {
                    let q = load_queue(c, name)?;
                    if q.paused {
                        return Err(StoreError::NothingToClaim(format!(
                            "queue '{name}' is paused"
                        )));
                    }
                    Some(q)
                }
                None => None,
            };
            let sql = candidate_sql(queue.is_some());
            let mut stmt = c.prepare_cached(&sql)?;
            let mut ps: Vec<(&'static str, rusqlite::types::Value)> = vec![
                (":now", now.into()),
                (":skip", skip.clone().into()),
                (":me", actor.name.clone().into()),
            ];
            if let Some(q) = &queue {
                ps.push((":queue", q.name.clone().into()));
            }
            bind_named(&mut stmt, &ps)?;
            let candidate = {
                let mut rows = stmt.raw_query();
                match rows.next()? {
                    Some(r) => Some((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?)),
                    None => None,
                }
            };
            let Some((id, prev)) = candidate else {
                return Err(explain_nothing(c, queue.as_ref(), &actor.name)?);
            };
            match claim(c, id, prev, now, actor)? {
                Some(item) => Ok(item),
                // Cannot happen under the write lock; report rather than guess.
                None => Err(StoreError::NothingToClaim(format!(
                    "#{id} could not be taken"
                ))),
            }
        })
    }

    fn take(&mut self, id: i64) -> Result<Item> {
        self.write(|c, now, actor| {
            let cur = load_open_item(c, id)?;
            if cur.is_held_by(&actor.name) {
                // Already mine (perhaps expired but not taken over): renew quietly.
                c.prepare_cached(
                    "UPDATE items SET lock_time = ?1 WHERE id = ?2 AND lock_user = ?3 \
                     AND lock_token = ?4",
                )?
                .execute(params![now, id, actor.name, cur.lock_token])?;
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
            if let Some(item) = claim(c, id, cur.lock_user.clone(), now, actor)? {
                return Ok(item);
            }
            if let Some(lock) = cur.lock()
                && !lock.is_expired(&q, now)
            {
                return Err(StoreError::HeldByOther {
                    id,
                    holder: lock.user,
                    since: lock.time,
                });
            }
            if q.paused {
                return Err(StoreError::NothingToClaim(format!(
                    "queue '{}' is paused",
                    q.name
                )));
            }
            Err(explain_nothing(c, Some(&q), &actor.name)?)
        })
    }

    fn renew(&mut self, id: i64, token: i64) -> Result<Item> {
        self.holder_write(id, token, HolderOp::Renew)?;
        load_item(&self.conn, id)
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
            // Short batches: other users keep claiming between them.
            let n = self.write(|c, now, actor| {
                let expired: Vec<(i64, String, i64)> = c
                    .prepare_cached(&format!(
                        "SELECT id, lock_user, lock_token FROM items \
                         WHERE lock_user IS NOT NULL AND {EXPIRED} ORDER BY lock_time LIMIT 500"
                    ))?
                    .query_map(rusqlite::named_params! {":now": now}, |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                    })?
                    .collect::<rusqlite::Result<_>>()?;
                for (id, holder, token) in &expired {
                    c.prepare_cached(
                        "UPDATE items SET lock_user = NULL, lock_time = NULL \
                         WHERE id = ?1 AND lock_token = ?2",
                    )?
                    .execute(params![id, token])?;
                    insert_event(
                        c,
                        *id,
                        now,
                        actor,
                        EventKind::Expired,
                        &json!({"from": holder, "token": token}),
                    )?;
                }
                Ok(expired.len())
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
            let cur = load_item(c, id)?;
            let Some(holder) = cur.lock_user.clone() else {
                return Err(StoreError::Invalid(format!("#{id} is not locked")));
            };
            c.prepare_cached(
                "UPDATE items SET lock_user = NULL, lock_time = NULL \
                 WHERE id = ?1 AND lock_token = ?2",
            )?
            .execute(params![id, cur.lock_token])?;
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
                let holder: Option<String> = c
                    .prepare_cached(
                        "SELECT lock_user FROM items WHERE id = ?1 AND lock_token = ?2 \
                         AND lock_user IS NOT NULL",
                    )?
                    .query_row(params![id, token], |r| r.get(0))
                    .optional()?;
                let Some(holder) = holder else {
                    continue;
                };
                c.prepare_cached(
                    "UPDATE items SET lock_user = NULL, lock_time = NULL \
                     WHERE id = ?1 AND lock_token = ?2",
                )?
                .execute(params![id, token])?;
                insert_event(
                    c,
                    id,
                    now,
                    actor,
                    EventKind::Unlocked,
                    &if locks.len() > 1 {
                        json!({"from": holder, "reason": reason, "token": token, "bulk": true})
                    } else {
                        json!({"from": holder, "reason": reason, "token": token})
                    },
                )?;
                n += 1;
            }
            Ok(n)
        })
    }

    fn reassign(&mut self, id: i64, to: &str, reason: &str) -> Result<Item> {
        let reason = required_reason(reason)?;
        validate_user_name(to).map_err(|m| StoreError::Invalid(format!("--to: {m}")))?;
        self.write(|c, now, actor| {
            require_supervisor(c, actor, "reassign items")?;
            let cur = load_open_item(c, id)?;
            let item = c
                .prepare_cached(&format!(
                    "UPDATE items SET lock_user = ?1, lock_time = ?2, lock_token = lock_token + 1 \
                     WHERE id = ?3 AND lock_token = ?4 RETURNING {ITEM_COLS}"
                ))?
                .query_row(params![to, now, id, cur.lock_token], item_from_row)?;
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
            let cur = load_item(c, id)?;
            if !matches!(cur.state, ItemState::Failed | ItemState::Cancelled) {
                return Err(StoreError::Invalid(format!(
                    "#{id} is {}; only failed or cancelled items can be requeued",
                    cur.state.as_str()
                )));
            }
            c.prepare_cached(
                "UPDATE items SET state = 'open', error = NULL, result = NULL, \
                 finished_at = NULL, finished_by = NULL WHERE id = ?1",
            )?
            .execute([id])?;
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
            let cur = load_open_item(c, id)?;
            c.prepare_cached(
                "UPDATE items SET state = 'cancelled', error = ?1, lock_user = NULL, \
                 lock_time = NULL, finished_at = ?2, finished_by = ?3 \
                 WHERE id = ?4 AND lock_token = ?5",
            )?
            .execute(params![reason, now, actor.name, id, cur.lock_token])?;
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
                Err(StoreError::UnknownQueue { .. }) if create => QueueSettings::new(name),
                Err(e) => return Err(e),
            };
            let next = update.apply(&cur).map_err(StoreError::Invalid)?;
            c.prepare_cached(
                "INSERT INTO queues (name, lock_seconds, warn_seconds, max_per_user, paused) \
                 VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (name) DO UPDATE SET \
                 lock_seconds = excluded.lock_seconds, warn_seconds = excluded.warn_seconds, \
                 max_per_user = excluded.max_per_user, paused = excluded.paused",
            )?
            .execute(params![
                next.name,
                next.lock_seconds,
                next.warn_seconds,
                next.max_per_user,
                next.paused as i64
            ])?;
            tracing::info!(queue = %name, by = %actor.name, ?next, "queue settings changed");
            Ok(next)
        })
    }

    fn set_role(&mut self, user: &str, role: Role) -> Result<()> {
        validate_user_name(user).map_err(StoreError::Invalid)?;
        self.write(|c, _now, actor| {
            require_supervisor(c, actor, "change roles")?;
            if role == Role::Staff && user == actor.name {
                let others: i64 = c.query_row(
                    "SELECT count(*) FROM users WHERE role = 'supervisor' AND name <> ?1",
                    [user],
                    |r| r.get(0),
                )?;
                if others == 0 {
                    return Err(StoreError::Invalid(
                        "you are the last supervisor; make someone else supervisor first".into(),
                    ));
                }
            }
            c.prepare_cached(
                "INSERT INTO users (name, role) VALUES (?1, ?2) \
                 ON CONFLICT (name) DO UPDATE SET role = excluded.role",
            )?
            .execute(params![user, role.as_str()])?;
            tracing::info!(user = %user, role = role.as_str(), by = %actor.name, "role changed");
            Ok(())
        })
    }

    fn item(&mut self, id: i64) -> Result<Item> {
        load_item(&self.conn, id)
    }

    fn history(&mut self, id: i64) -> Result<Vec<Event>> {
        load_item(&self.conn, id)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, item_id, at, actor, os_user, kind, detail FROM events \
             WHERE item_id = ?1 ORDER BY id",
        )?;
        let events = stmt
            .query_map([id], event_from_row)?
            .collect::<rusqlite::Result<_>>()?;
        Ok(events)
    }

    fn list(&mut self, filter: &ListFilter) -> Result<Vec<Item>> {
        let now = (self.clock)();
        if let Some(q) = &filter.queue {
            load_queue(&self.conn, q)?;
        }
        let (where_, order, mut ps) = list_sql(filter, now);
        let total = if Window::wants_total(filter) {
            Some(self.count(filter)?)
        } else {
            None
        };
        let Some(window) = Window::plan(filter, total) else {
            return Ok(Vec::new());
        };
        let order = if window.reversed {
            reverse_order(&order)
        } else {
            order
        };
        // The inner query reads only the index (id is its rowid): skipping `offset` rows
        // never touches the table.
        let sql = format!(
            "SELECT {ITEM_COLS} FROM items WHERE id IN (SELECT id FROM items {where_} \
             ORDER BY {order} LIMIT :limit OFFSET :offset) ORDER BY {order}"
        );
        ps.push((":limit", (window.limit as i64).into()));
        ps.push((":offset", (window.offset as i64).into()));
        let mut stmt = self.conn.prepare_cached(&sql)?;
        bind_named(&mut stmt, &ps)?;
        let mut rows = stmt.raw_query();
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(item_from_row(r)?);
        }
        if window.reversed {
            out.reverse();
        }
        Ok(out)
    }

    fn count(&mut self, filter: &ListFilter) -> Result<u64> {
        let now = (self.clock)();
        let simple_state = match filter.state {
            StateFilter::Open => Some(Some("open")),
            StateFilter::Done => Some(Some("done")),
            StateFilter::Failed => Some(Some("failed")),
            StateFilter::Cancelled => Some(Some("cancelled")),
            StateFilter::All => Some(None),
            _ => None,
        };
        if let Some(state) = simple_state
            && filter.holder.is_none()
            && filter.text.as_deref().is_none_or(str::is_empty)
        {
            // Kept by triggers: no scan.
            let n: i64 = self
                .conn
                .prepare_cached(
                    "SELECT coalesce(sum(n), 0) FROM item_counts \
                 WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR queue = ?2)",
                )?
                .query_row(params![state, filter.queue], |r| r.get(0))?;
            return Ok(n.max(0) as u64);
        }
        let (where_, _, ps) = list_sql(filter, now);
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT count(*) FROM items {where_}"))?;
        bind_named(&mut stmt, &ps)?;
        let mut rows = stmt.raw_query();
        let n: i64 = match rows.next()? {
            Some(r) => r.get(0)?,
            None => 0,
        };
        Ok(n as u64)
    }

    fn queues(&mut self) -> Result<Vec<QueueSettings>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT name, lock_seconds, warn_seconds, max_per_user, paused FROM queues ORDER BY name",
        )?;
        let qs = stmt
            .query_map([], queue_from_row)?
            .collect::<rusqlite::Result<_>>()?;
        Ok(qs)
    }

    fn queue(&mut self, name: &str) -> Result<QueueSettings> {
        load_queue(&self.conn, name)
    }

    fn role(&mut self, user: &str) -> Result<Role> {
        role_of(&self.conn, user)
    }

    fn stats(&mut self) -> Result<Stats> {
        // One read transaction: every figure comes from the same snapshot.
        self.conn.execute_batch("BEGIN")?;
        let out = self.stats_in_snapshot();
        let _ = self
            .conn
            .execute_batch(if out.is_ok() { "COMMIT" } else { "ROLLBACK" });
        out
    }

    fn lock_started(&mut self, ids: &[i64]) -> Result<Vec<(i64, Millis)>> {
        // One indexed probe per item (events_item): a screenful of locks, never a scan.
        let mut stmt = self.conn.prepare_cached(
            "SELECT max(at) FROM events WHERE item_id = ?1 \
             AND kind IN ('locked', 'taken_over', 'reassigned')",
        )?;
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            let at: Option<i64> = stmt.query_row([id], |r| r.get(0))?;
            if let Some(at) = at {
                out.push((id, at));
            }
        }
        Ok(out)
    }

    fn events_by(&mut self, actor: &str, since: Millis) -> Result<Vec<Event>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, item_id, at, actor, os_user, kind, detail FROM events \
             WHERE actor = ?1 AND at >= ?2 ORDER BY at, id",
        )?;
        let events = stmt
            .query_map(params![actor, since], event_from_row)?
            .collect::<rusqlite::Result<_>>()?;
        Ok(events)
    }

    fn lost_locks(&mut self, user: &str, since: Millis) -> Result<Vec<LostLock>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT e.item_id, i.title, e.kind, e.actor, e.at, i.lock_user FROM events e \
             JOIN items i ON i.id = e.item_id \
             WHERE e.at >= ?2 AND e.kind IN ('taken_over', 'expired', 'unlocked', 'reassigned', \
             'cancelled') AND json_extract(e.detail, '$.from') = ?1 AND e.actor <> ?1 \
             ORDER BY e.at DESC, e.id DESC",
        )?;
        let lost = stmt
            .query_map(params![user, since], |r| {
                let kind: String = r.get(2)?;
                Ok(LostLock {
                    item_id: r.get(0)?,
                    title: r.get(1)?,
                    how: EventKind::parse(&kind).unwrap_or(EventKind::Expired),
                    by: r.get(3)?,
                    at: r.get(4)?,
                    now_held_by: r.get(5)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(lost)
    }

    fn touch_last_seen(&mut self) -> Result<Option<Millis>> {
        if self.read_only {
            return Ok(None);
        }
        self.write(|c, now, actor| {
            let prev: Option<Option<Millis>> = c
                .prepare_cached("SELECT last_seen FROM users WHERE name = ?1")?
                .query_row([&actor.name], |r| r.get(0))
                .optional()?;
            c.prepare_cached(
                "INSERT INTO users (name, role, last_seen) VALUES (?1, 'staff', ?2) \
                 ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen",
            )?
            .execute(params![actor.name, now])?;
            Ok(prev.flatten())
        })
    }

    fn check(&mut self) -> Result<Vec<String>> {
        let c = &self.conn;
        let mut problems = Vec::new();
        let mut stmt = c.prepare("PRAGMA integrity_check")?;
        for row in stmt.query_map([], |r| r.get::<_, String>(0))? {
            let line = row?;
            if line != "ok" {
                problems.push(format!("integrity: {line}"));
            }
        }
        let mut stmt = c.prepare("PRAGMA foreign_key_check")?;
        for row in stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<i64>>(1)?,
                r.get::<_, String>(2)?,
            ))
        })? {
            let (table, rowid, parent) = row?;
            problems.push(format!(
                "{table} row {} refers to a missing {parent} row",
                rowid.map_or("?".into(), |r| r.to_string())
            ));
        }
        let checks: [(&str, &str); 6] = [
            (
                "SELECT id FROM items WHERE (lock_user IS NULL) <> (lock_time IS NULL) LIMIT 20",
                "lock_user and lock_time disagree",
            ),
            (
                "SELECT id FROM items WHERE state <> 'open' AND lock_user IS NOT NULL LIMIT 20",
                "is not open but carries a lock",
            ),
            (
                "SELECT id FROM items WHERE state NOT IN ('open','done','failed','cancelled') LIMIT 20",
                "has an unknown state",
            ),
            (
                "SELECT id FROM items WHERE NOT json_valid(params) LIMIT 20",
                "has params that are not JSON",
            ),
            (
                "SELECT id FROM items WHERE lock_user IS NOT NULL AND lock_token < 1 LIMIT 20",
                "is locked with no lock token",
            ),
            (
                "SELECT i.id FROM items i WHERE NOT EXISTS \
                 (SELECT 1 FROM events e WHERE e.item_id = i.id AND e.kind = 'created') LIMIT 20",
                "has no 'created' event",
            ),
        ];
        for (sql, what) in checks {
            let mut stmt = c.prepare(sql)?;
            for id in stmt.query_map([], |r| r.get::<_, i64>(0))? {
                problems.push(format!("item #{} {what}", id?));
            }
        }
        let mut stmt = c.prepare(
            "SELECT coalesce(a.queue, k.queue), coalesce(a.state, k.state), coalesce(a.n, 0), \
             coalesce(k.n, 0) FROM (SELECT queue, state, count(*) AS n FROM items \
             GROUP BY queue, state) a FULL OUTER JOIN item_counts k \
             ON k.queue = a.queue AND k.state = a.state WHERE coalesce(a.n, 0) <> coalesce(k.n, 0)",
        )?;
        for row in stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })? {
            let (q, s, actual, kept) = row?;
            problems.push(format!(
                "counts: queue '{q}' has {actual} {s} items but the kept count says {kept}"
            ));
        }
        let v: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if v != migrate::LATEST {
            problems.push(format!(
                "schema version is {v}, expected {}",
                migrate::LATEST
            ));
        }
        Ok(problems)
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
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {ITEM_COLS} FROM items WHERE ?1 IS NULL OR state = ?1 ORDER BY id"
        ))?;
        let mut rows = stmt.query([state.map(|s| s.as_str())])?;
        let mut n = 0;
        while let Some(r) = rows.next()? {
            let item = item_from_row(r)?;
            each(&item).map_err(|e| StoreError::Database(format!("writing the export: {e}")))?;
            n += 1;
        }
        Ok(n)
    }
}

/// Creates the queue row on first use, with the default settings.
fn ensure_queue(c: &Connection, name: &str) -> Result<()> {
    c.prepare_cached("INSERT INTO queues (name) VALUES (?1) ON CONFLICT (name) DO NOTHING")?
        .execute([name])?;
    Ok(())
}

/// Inserts one item (its queue exists) with its `created` event; a known request id
/// gives the existing item instead.
fn insert_item(c: &Connection, item: &NewItem, now: Millis, actor: &Actor) -> Result<Added> {
    let id: Option<i64> = c
        .prepare_cached(
            "INSERT INTO items (queue, request_id, title, body, params, priority, due_at, \
             created_at, created_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
             ON CONFLICT (request_id) DO NOTHING RETURNING id",
        )?
        .query_row(
            params![
                item.queue,
                item.request_id,
                item.title,
                item.body,
                item.params,
                item.priority,
                item.due_at,
                now,
                actor.name
            ],
            |r| r.get(0),
        )
        .optional()?;
    let Some(id) = id else {
        let known: i64 = c
            .prepare_cached("SELECT id FROM items WHERE request_id = ?1")?
            .query_row([&item.request_id], |r| r.get(0))?;
        return Ok(Added {
            id: known,
            created: false,
        });
    };
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
