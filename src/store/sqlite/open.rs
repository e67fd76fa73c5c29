//! Opening an SQLite file, and explaining a storage fault in terms of its real cause.
//!
//! caseload makes no check of its own that SQLite makes itself: a file whose header says
//! more pages than the main file holds is a checkpoint in progress (or one cut short),
//! which SQLite finishes from the WAL on open. Before SQLite sees the file caseload only
//! decides what SQLite cannot: where the file is (missing directory, network filesystem),
//! that it is a regular file, and how a user who may only read opens it without creating
//! files that would lock writers out. After a failure it asks SQLite (extended result
//! code, errno) and the OS (owners, modes, free space) what happened and says so, with
//! the fix, in one line.
//!
//! Two guards keep the shared files healthy:
//! - the -shm file is mapped into memory; on a full filesystem a write into a page the
//!   filesystem never allocated kills the process with SIGBUS. caseload replaces the
//!   unix VFS's `mmap` with one that allocates the region's blocks first (fallocate, then
//!   MADV_POPULATE_WRITE), so a full disk becomes an ordinary "disk full" error;
//! - writers keep the -wal and -shm files when they close (SQLITE_FCNTL_PERSIST_WAL), so
//!   a reader who may not write the database finds them and creates nothing.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, ffi};

use super::OpenOptions;
use crate::store::error::StoreError;
use crate::store::fsfacts::{self, sidecar};
use crate::sys;

/// How SQLite is to open a file.
pub(super) struct Plan {
    /// A path, or a `file:` URI when `flags` include SQLITE_OPEN_URI.
    pub target: String,
    pub flags: OpenFlags,
    /// Opened read-only: writes are refused.
    pub read_only: bool,
}

impl Plan {
    fn writer(path: &Path) -> Plan {
        Plan {
            target: path.display().to_string(),
            flags: OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            read_only: false,
        }
    }

    fn reader(path: &Path) -> Plan {
        Plan {
            target: path.display().to_string(),
            flags: OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            read_only: true,
        }
    }

    /// Nobody may write the file and nobody has it open: SQLite may read it without
    /// locks, a WAL or a -shm (`immutable=1`), creating nothing.
    fn immutable(path: &Path) -> Plan {
        Plan {
            target: format!("file:{}?immutable=1", uri_path(path)),
            flags: OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            read_only: true,
        }
    }
}

/// Percent-encodes a path for a `file:` URI.
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/._-~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decides how to open `path`; refuses only what SQLite cannot sensibly be given.
pub(super) fn plan(path: &Path, opts: &OpenOptions) -> Result<Plan, StoreError> {
    let shown = path.display();
    let dir = fsfacts::parent_dir(path);
    let meta = match std::fs::metadata(path) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(os_fault(path, "cannot reach", &e)),
    };
    if meta.is_none() {
        if opts.must_exist {
            return Err(StoreError::Unusable(format!(
                "{shown} does not exist (run `caseload init` to create it, or give --create)"
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
        create_shared(path, &dir)?;
        return Ok(Plan::writer(path));
    };
    if meta.is_dir() {
        return Err(StoreError::Unusable(format!(
            "{shown} is a directory, not a database file"
        )));
    }
    if !meta.is_file() {
        return Err(StoreError::Unusable(format!(
            "{shown} is not a regular file but {}; give the path of a caseload database file",
            fsfacts::kind_of(&meta)
        )));
    }
    if let Some(fs) = fsfacts::fs_magic(path).and_then(fsfacts::pseudo_fs_name) {
        return Err(StoreError::Unusable(format!(
            "{shown} is not a regular file but a file of the kernel's {fs} filesystem; give \
             the path of a caseload database file"
        )));
    }
    let wal_len = std::fs::metadata(sidecar(path, "-wal")).map_or(0, |m| m.len());
    if meta.len() == 0 && wal_len == 0 {
        if opts.allow_empty {
            return Ok(Plan::writer(path));
        }
        return Err(StoreError::Unusable(format!(
            "{shown} is an empty file, not a caseload database (run `caseload init` to create \
             the database in it)"
        )));
    }
    let nobody_writes = meta.permissions().mode() & 0o222 == 0;
    if !nobody_writes && fsfacts::may_write(path) {
        return Ok(Plan::writer(path));
    }
    reader_plan(path, &meta, nobody_writes)
}

/// The mode of a new database in a shared directory (see [`create_shared`]).
pub(crate) const SHARED_MODE: u32 = 0o660;

/// In a shared directory — setgid and group-writable, the README's set-up — a new
/// database is created group-writable, readable and writable by the group and nobody
/// else (0660), whatever the creator's umask (a fresh login's is 022). Everyone in the
/// group must write the database and its -wal and -shm, and SQLite creates those two
/// with the database's own mode (and so keeps them usable by the group); the group is the
/// team, and others get nothing, because the queue holds the team's work. Elsewhere (a
/// personal file) the umask decides, as for any file.
fn create_shared(path: &Path, dir: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::OpenOptionsExt;
    let shared = std::fs::metadata(dir).is_ok_and(|m| m.mode() & 0o2020 == 0o2020);
    if !shared {
        return Ok(());
    }
    let file = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(SHARED_MODE)
        .open(path)
    {
        Ok(f) => f,
        // Created by another process first (SQLite opens theirs), or not allowed here:
        // SQLite tries for itself, and its failure is explained as any other.
        Err(_) => return Ok(()),
    };
    // The umask took bits off the mode asked for; the file is ours and empty.
    file.set_permissions(std::fs::Permissions::from_mode(SHARED_MODE))
        .map_err(|e| os_fault(path, "cannot set the mode of", &e))
}

/// Opens `path` for reading only, as `caseload doctor` does: never creates or migrates
/// the file, and (like any reader) creates no -wal or -shm that writers could not use.
pub(crate) fn inspect(path: &Path, allow_network_fs: bool) -> Result<Connection, StoreError> {
    let opts = OpenOptions {
        allow_network_fs,
        must_exist: true,
        ..OpenOptions::default()
    };
    let plan = plan(path, &opts)?;
    let flags = if plan.read_only {
        plan.flags
    } else {
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
    };
    sys::guard_shared_memory();
    let conn = Connection::open_with_flags(&plan.target, flags)
        .map_err(|e| explain(path, Facts::of_error(&e), super::map_err(e)))?;
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(super::map_err)?;
    Ok(conn)
}

/// Explains a failed statement on an inspection connection.
pub(crate) fn explain_query(path: &Path, conn: &Connection, e: rusqlite::Error) -> StoreError {
    explain(path, Facts::of(conn), super::map_err(e))
}

/// A user who may not write the file must not create its -wal or -shm: files they own
/// would lock out every writer. So they open only when the files are there already
/// (writers keep them), or when nobody at all may write the file.
fn reader_plan(
    path: &Path,
    meta: &std::fs::Metadata,
    nobody_writes: bool,
) -> Result<Plan, StoreError> {
    let wal = sidecar(path, "-wal");
    let shm = sidecar(path, "-shm");
    let (has_wal, has_shm) = (wal.exists(), shm.exists());
    if has_wal && has_shm {
        return Ok(Plan::reader(path));
    }
    if nobody_writes {
        return Ok(if has_wal {
            Plan::reader(path)
        } else {
            Plan::immutable(path)
        });
    }
    let missing = if has_wal { shm } else { wal };
    Err(StoreError::ReadOnly(format!(
        "{}: you may read but not write it ({}), and {} is missing; caseload will not create \
         it for you, because a file you own there would lock out everyone who writes the \
         database. Ask someone who may write it to run any caseload command once (the file \
         then stays), or ask for write access",
        path.display(),
        fsfacts::describe_owner(meta),
        missing.display()
    )))
}

/// Sets up a writer's connection: its WAL and -shm stay when it closes.
pub(super) fn prepare_writer(conn: &Connection) {
    sys::persist_wal(conn);
    // A persistent WAL is truncated to zero by the last writer to close, and a WAL that
    // a large import grew is cut back to this size when it restarts.
    let _ = conn.execute_batch("PRAGMA journal_size_limit = 67108864");
    let _ = conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true);
}

/// Before a writer's connection closes: when the -wal has grown past [`super::WAL_BOUND`], the
/// last connection to close checkpoints it and truncates it (SQLite does so only when no
/// other connection is open; otherwise a later one will).
pub(super) fn before_close(conn: &Connection, path: &Path) {
    let wal = std::fs::metadata(sidecar(path, "-wal")).map_or(0, |m| m.len());
    if wal >= super::WAL_BOUND {
        let _ = conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, false);
    }
}

/// Gives this user's -wal and -shm the database file's group and mode (SQLite gives them
/// these when it creates them; a later `chmod` of the database would leave them behind).
pub(super) fn align_sidecars(path: &Path) {
    let Ok(db) = std::fs::metadata(path) else {
        return;
    };
    let me = fsfacts::euid();
    for suffix in ["-wal", "-shm"] {
        let file = sidecar(path, suffix);
        let Ok(m) = std::fs::metadata(&file) else {
            continue;
        };
        if m.uid() != me && me != 0 {
            continue;
        }
        if m.gid() != db.gid() || (me == 0 && m.uid() != db.uid()) {
            let owner = if me == 0 { Some(db.uid()) } else { None };
            let _ = std::os::unix::fs::chown(&file, owner, Some(db.gid()));
        }
        if m.mode() & 0o777 != db.mode() & 0o777 {
            let _ =
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(db.mode() & 0o777));
        }
    }
}

/// What SQLite said about the last failure on a connection.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Facts {
    /// SQLite's extended result code.
    pub code: i32,
    /// The OS error behind an I/O or open error (0 when none).
    pub errno: i32,
}

impl Facts {
    /// Reads the facts of the connection's last failure; call before anything else runs
    /// on it.
    pub(super) fn of(conn: &Connection) -> Facts {
        let (code, errno) = sys::last_error(conn);
        Facts { code, errno }
    }

    /// The facts a failed open leaves (no connection to ask: the code only).
    pub(super) fn of_error(e: &rusqlite::Error) -> Facts {
        match e {
            rusqlite::Error::SqliteFailure(f, _) => Facts {
                code: f.extended_code,
                errno: 0,
            },
            _ => Facts::default(),
        }
    }

    fn primary(self) -> i32 {
        self.code & 0xff
    }
}

/// Rewrites a storage failure on `path` to name the real cause and the fix; other errors
/// pass unchanged.
pub(super) fn explain(path: &Path, facts: Facts, e: StoreError) -> StoreError {
    let no_space = sys::take_shm_no_space();
    match e {
        StoreError::Storage { code, message } => {
            let errno = if matches!(facts.primary(), ffi::SQLITE_IOERR | ffi::SQLITE_CANTOPEN) {
                facts.errno
            } else {
                0
            };
            if code & 0xff == ffi::SQLITE_FULL
                || no_space
                || errno == libc::ENOSPC
                || errno == libc::EDQUOT
            {
                return disk_full(path);
            }
            match errno {
                libc::EIO => io_error(path),
                libc::EROFS => read_only_fs(path),
                _ => StoreError::Storage {
                    code,
                    message: format!(
                        "{message} on {} ({})",
                        fsfacts::mount_of(path).display(),
                        path.display()
                    ),
                },
            }
        }
        StoreError::ReadOnly(text) => blocked_writer(path).unwrap_or(StoreError::ReadOnly(text)),
        StoreError::Unusable(text) if facts.primary() == ffi::SQLITE_CANTOPEN => {
            cannot_open(path).unwrap_or(StoreError::Unusable(text))
        }
        other => other,
    }
}

/// Like [`explain`], for a failed COMMIT. After an I/O error there, or any failed fsync
/// (whatever its errno: ENOSPC too), the commit record may already be in the -wal, where
/// the next opener finds it: the outcome is unknown (exit 6, as a connection lost while
/// committing on PostgreSQL), and the caller must check before retrying. Only a full disk
/// while writing (SQLITE_FULL, before the commit record is complete) changed nothing.
pub(super) fn explain_commit(path: &Path, facts: Facts, e: StoreError) -> StoreError {
    let synced = matches!(
        facts.code,
        ffi::SQLITE_IOERR_FSYNC | ffi::SQLITE_IOERR_DIR_FSYNC
    );
    match explain(path, facts, e) {
        StoreError::Storage { code, message } if synced || code & 0xff != ffi::SQLITE_FULL => {
            StoreError::OutcomeUnknown(format!(
                "{}; the change may have been saved: check (`caseload list --mine`, \
                 `caseload show ID`) before retrying",
                message.trim_end_matches(" (nothing was lost)")
            ))
        }
        other => other,
    }
}

/// "disk full on <mount>: free space then retry".
pub(super) fn disk_full(path: &Path) -> StoreError {
    let mount = fsfacts::mount_of(path);
    StoreError::Storage {
        code: ffi::SQLITE_FULL,
        message: format!(
            "disk full on {}: free space then retry (nothing was lost)",
            mount.display()
        ),
    }
}

fn io_error(path: &Path) -> StoreError {
    StoreError::Storage {
        code: ffi::SQLITE_IOERR,
        message: format!(
            "I/O error on {} using {}: the disk or its filesystem failed; have an \
             administrator check it (the system log, dmesg) and keep {} and its -wal file as \
             they are until then",
            fsfacts::mount_of(path).display(),
            path.display(),
            path.display()
        ),
    }
}

fn read_only_fs(path: &Path) -> StoreError {
    StoreError::ReadOnly(format!(
        "{} is mounted read-only, so {} cannot be changed; remount it read-write (after a \
         filesystem error: have an administrator check it first)",
        fsfacts::mount_of(path).display(),
        path.display()
    ))
}

/// An OS error reaching or opening the file itself.
fn os_fault(path: &Path, doing: &str, e: &std::io::Error) -> StoreError {
    match e.raw_os_error() {
        Some(libc::EIO) => io_error(path),
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => disk_full(path),
        Some(libc::EROFS) => read_only_fs(path),
        _ => StoreError::Storage {
            code: ffi::SQLITE_CANTOPEN,
            message: format!("{doing} {}: {e}", path.display()),
        },
    }
}

/// Explains why a writer cannot write: the -wal or -shm belongs to someone else, the
/// directory does not let it create them, or the filesystem is read-only.
pub(super) fn blocked_writer(path: &Path) -> Option<StoreError> {
    if fsfacts::space(path).is_some_and(|s| s.read_only) {
        return Some(read_only_fs(path));
    }
    let mut blocked = Vec::new();
    let mut owners = Vec::new();
    for suffix in ["-wal", "-shm"] {
        let file = sidecar(path, suffix);
        if let Ok(m) = std::fs::metadata(&file)
            && !fsfacts::may_write(&file)
        {
            blocked.push(file);
            if !owners
                .iter()
                .any(|o: &std::fs::Metadata| o.uid() == m.uid())
            {
                owners.push(m);
            }
        }
    }
    if !blocked.is_empty() {
        let files: Vec<String> = blocked.iter().map(|f| fsfacts::shell_quote(f)).collect();
        let names: Vec<String> = blocked.iter().map(|f| f.display().to_string()).collect();
        let db = fsfacts::shell_quote(path);
        let whose: Vec<String> = owners.iter().map(fsfacts::describe_owner).collect();
        let how = std::fs::metadata(path)
            .map(|db| left_by(&owners, &db))
            .unwrap_or_default();
        return Some(StoreError::ReadOnly(format!(
            "{} cannot be written because {} {} owned by {} and you ({}) may not write {}; \
             {how}. Fix (keeps all data): `sudo chown --reference={db} {f} && sudo chmod \
             --reference={db} {f}`",
            path.display(),
            names.join(" and "),
            if names.len() == 1 { "is" } else { "are" },
            whose.join(", "),
            fsfacts::user_name(fsfacts::euid()),
            if names.len() == 1 { "it" } else { "them" },
            f = files.join(" "),
        )));
    }
    cannot_open(path)
}

/// Who left a -wal or -shm that blocks a writer, and how, as far as the OS can tell: a
/// user who may write the database made them without write access for the group (the
/// umask of a fresh login, or before the database was made group-writable: caseload,
/// run by them again, gives its own files the database's mode), or a user who may only
/// read it made them (another SQLite tool; caseload never does).
fn left_by(owners: &[std::fs::Metadata], db: &std::fs::Metadata) -> String {
    let Some(first) = owners.first() else {
        return String::new();
    };
    let who = fsfacts::user_name(first.uid());
    match fsfacts::may_write_as(first.uid(), db) {
        Some(true) => format!(
            "{who}, who may write the database, created them without write access for the \
             group (under a umask such as 022, or before the database was made \
             group-writable); any caseload command {who} runs gives them the database's mode"
        ),
        Some(false) => format!(
            "they were left by {who}, who may only read the database (with another SQLite \
             tool: caseload never creates them for a reader)"
        ),
        None => format!("their owner, {who}, is not a user this system knows"),
    }
}

/// Explains a failure to open or create the database's files from what the OS says.
fn cannot_open(path: &Path) -> Option<StoreError> {
    if let Err(e) = std::fs::File::open(path)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        return Some(os_fault(path, "cannot open", &e));
    }
    let dir = fsfacts::parent_dir(path);
    let missing: Vec<_> = ["-wal", "-shm"]
        .iter()
        .map(|s| sidecar(path, s))
        .filter(|f| !f.exists())
        .collect();
    if !missing.is_empty() && !fsfacts::may_create_in(&dir) {
        let about = std::fs::metadata(&dir)
            .map(|m| fsfacts::describe_owner(&m))
            .unwrap_or_default();
        let group = std::fs::metadata(path)
            .map(|m| fsfacts::group_name(m.gid()))
            .unwrap_or_else(|_| "GROUP".into());
        let d = fsfacts::shell_quote(&dir);
        return Some(StoreError::Storage {
            code: ffi::SQLITE_CANTOPEN,
            message: format!(
                "{} cannot be used: SQLite must create {} beside it, and you ({}) may not \
                 create files in {} ({about}). Fix: `sudo chgrp {group} {d} && sudo chmod \
                 2775 {d}` so everyone in group {group} may",
                path.display(),
                missing
                    .iter()
                    .map(|f| f.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" and "),
                fsfacts::user_name(fsfacts::euid()),
                dir.display(),
            ),
        });
    }
    if let Err(e) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        && fsfacts::may_write(path)
    {
        return Some(os_fault(path, "cannot write", &e));
    }
    None
}

/// The message for a write on a store opened read-only.
pub(super) fn read_only_error(path: &Path) -> StoreError {
    let meta = std::fs::metadata(path).ok();
    let nobody = meta
        .as_ref()
        .is_some_and(|m| m.permissions().mode() & 0o222 == 0);
    if nobody || meta.is_none() {
        return StoreError::ReadOnly(format!(
            "{} cannot be written (its permissions are read-only); browsing works, changes \
             are refused",
            path.display()
        ));
    }
    let about = meta
        .as_ref()
        .map(fsfacts::describe_owner)
        .unwrap_or_default();
    StoreError::ReadOnly(format!(
        "{} is read-only for you ({}, {about}); browsing works, changes are refused — ask \
         its owner for write access",
        path.display(),
        fsfacts::user_name(fsfacts::euid())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_paths_are_escaped() {
        assert_eq!(uri_path(Path::new("/a b/q?.db")), "/a%20b/q%3F.db");
        assert_eq!(uri_path(Path::new("rel/q.db")), "rel/q.db");
    }
}
