//! Doctor's checks of an SQLite database file and its surroundings.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{Check, human};
use crate::store::fsfacts::{self, describe_owner, shell_quote, sidecar};
use crate::store::location::network_fs_name;
use crate::store::migrate;
use crate::store::sqlite_open::explain_query;

/// A WAL this large means checkpoints are being held back.
const BIG_WAL: u64 = 64 * 1024 * 1024;

/// Every check of the file at `path`.
pub(super) fn checks(path: &Path, allow_network_fs: bool) -> Vec<Check> {
    let mut out = Vec::new();
    let dir = fsfacts::parent_dir(path);
    let meta = std::fs::metadata(path).ok();
    out.push(file_check(path, meta.as_ref()));
    out.extend(directory_checks(&dir));
    if let Some(db) = &meta {
        out.push(sidecar_check(path, db));
    }
    out.push(umask_check(&dir));
    out.push(filesystem_check(&dir, allow_network_fs));
    out.push(space_check(path, meta.as_ref().map_or(0, |m| m.len())));
    out.push(wal_check(path));
    if meta.as_ref().is_some_and(|m| m.is_file()) {
        out.extend(database_checks(path, allow_network_fs));
    }
    out
}

fn file_check(path: &Path, meta: Option<&std::fs::Metadata>) -> Check {
    let Some(m) = meta else {
        return Check::fail(
            "file",
            format!("{} does not exist", path.display()),
            "create it: `caseload init` (as the user who will administer it)",
        );
    };
    if !m.is_file() {
        return Check::fail(
            "file",
            format!(
                "{} is {}, not a database file",
                path.display(),
                fsfacts::kind_of(m)
            ),
            "point --db, CASELOAD_DB or `db =` at the database file",
        );
    }
    let about = format!("{}, {}", describe_owner(m), human(m.len()));
    let me = fsfacts::user_name(fsfacts::euid());
    if m.mode() & 0o222 == 0 {
        return Check::fail(
            "file",
            format!("{about}: nobody may write it (browsing only)"),
            format!("if people work from it: `chmod 660 {}`", shell_quote(path)),
        );
    }
    if !fsfacts::may_write(path) {
        return Check::fail(
            "file",
            format!("{about}: you ({me}) may read it but not write it"),
            format!(
                "to take and complete items you need write access: add {me} to group {} and \
                 `chmod 660 {}`",
                fsfacts::group_name(m.gid()),
                shell_quote(path)
            ),
        );
    }
    Check::pass("file", format!("{about}; you ({me}) may write it"))
}

fn directory_checks(dir: &Path) -> Vec<Check> {
    let Ok(m) = std::fs::metadata(dir) else {
        return vec![Check::fail(
            "directory",
            format!("{} does not exist", dir.display()),
            format!("`mkdir -p {}`", shell_quote(dir)),
        )];
    };
    let about = format!("{} {}", dir.display(), describe_owner(&m));
    let d = shell_quote(dir);
    let group = fsfacts::group_name(m.gid());
    let create = if fsfacts::may_create_in(dir) {
        Check::pass("directory", format!("{about}; you may create files in it"))
    } else {
        Check::fail(
            "directory",
            format!(
                "{about}; you ({}) may not create files in it, and SQLite must create the \
                 -wal and -shm files there when they are missing",
                fsfacts::user_name(fsfacts::euid())
            ),
            format!("`sudo chgrp {group} {d} && sudo chmod 2775 {d}`"),
        )
    };
    let shared = m.mode() & 0o020 != 0;
    let setgid = if m.mode() & 0o2000 != 0 {
        Check::pass("setgid", format!("set: new files get group {group}"))
    } else if shared {
        Check::fail(
            "setgid",
            format!(
                "not set on a group-writable directory: new files get their creator's group, \
                 not {group}"
            ),
            format!("`sudo chmod g+s {d}`"),
        )
    } else {
        Check::pass(
            "setgid",
            "not set; the directory is not shared with a group",
        )
    };
    vec![create, setgid]
}

/// A -wal or -shm is healthy when everyone who may write the database may write it too:
/// same group and mode as the database, and its owner's or the group's write bit.
fn sidecar_check(path: &Path, db: &std::fs::Metadata) -> Check {
    let mut found = Vec::new();
    let mut bad = Vec::new();
    for suffix in ["-wal", "-shm"] {
        let file = sidecar(path, suffix);
        let Ok(m) = std::fs::metadata(&file) else {
            continue;
        };
        let same = m.gid() == db.gid() && m.mode() & 0o777 == db.mode() & 0o777;
        let others_write = m.uid() == db.uid() || m.mode() & 0o020 != 0;
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        found.push(format!("{name} {}", describe_owner(&m)));
        if !(same && others_write) || (!fsfacts::may_write(&file) && fsfacts::may_write(path)) {
            bad.push(file);
        }
    }
    if found.is_empty() {
        return Check::pass("-wal/-shm", "none yet (created on first use)");
    }
    if bad.is_empty() {
        return Check::pass("-wal/-shm", found.join(", "));
    }
    let files: Vec<String> = bad.iter().map(|f| shell_quote(f)).collect();
    let p = shell_quote(path);
    Check::fail(
        "-wal/-shm",
        format!(
            "{} (the database is {}): writers other than their owner may be locked out",
            found.join(", "),
            describe_owner(db)
        ),
        format!(
            "`sudo chown --reference={p} {f} && sudo chmod --reference={p} {f}` (keeps all data)",
            f = files.join(" ")
        ),
    )
}

/// The umask matters where the directory is group-writable but not setgid: there new
/// files get their creator's mode and group. In a setgid shared directory caseload
/// creates the database 0660 whatever the umask (and SQLite gives the -wal and -shm its
/// mode), so a fresh login's 022 is fine.
fn umask_check(dir: &Path) -> Check {
    let mask = fsfacts::umask();
    let mode = std::fs::metadata(dir).map_or(0, |m| m.mode());
    let shared = mode & 0o020 != 0;
    let setgid = mode & 0o2000 != 0;
    if shared && !setgid && mask & 0o020 != 0 {
        Check::fail(
            "umask",
            format!(
                "{mask:04o}: files you create in the shared directory (a new database) are \
                 not group-writable"
            ),
            "`umask 002` in your shell profile (e.g. ~/.profile), or make the directory \
             setgid (see the setgid check)",
        )
    } else if shared && mask & 0o020 != 0 {
        Check::pass(
            "umask",
            format!(
                "{mask:04o}; caseload creates a database here group-writable (0660) anyway, \
                 the directory being setgid"
            ),
        )
    } else {
        Check::pass("umask", format!("{mask:04o}"))
    }
}

fn filesystem_check(dir: &Path, allow_network_fs: bool) -> Check {
    let Some(magic) = fsfacts::fs_magic(dir) else {
        return Check::fail(
            "filesystem",
            format!("cannot read the filesystem of {}", dir.display()),
            "check that the directory exists and you may enter it",
        );
    };
    let mount = fsfacts::mount_of(&dir.join("x"));
    match network_fs_name(magic) {
        Some(name) if !allow_network_fs => Check::fail(
            "filesystem",
            format!(
                "{name} at {}: a network filesystem, where SQLite's locking is not reliable \
                 and two people could take the same item",
                mount.display()
            ),
            "move the database to a local disk, or use PostgreSQL for teams on several hosts",
        ),
        Some(name) => Check::pass(
            "filesystem",
            format!("{name} at {} (network filesystem allowed)", mount.display()),
        ),
        None => Check::pass(
            "filesystem",
            format!("{} at {}", local_fs_name(magic), mount.display()),
        ),
    }
}

fn local_fs_name(magic: i64) -> String {
    match magic {
        0xEF53 => "ext4".into(),
        0x5846_5342 => "xfs".into(),
        0x9123_683E => "btrfs".into(),
        0x0102_1994 => "tmpfs".into(),
        0x794C_7630 => "overlayfs".into(),
        0x2FC1_2FC1 => "zfs".into(),
        0xF2F5_2010 => "f2fs".into(),
        other => format!("filesystem type {other:#x}"),
    }
}

fn space_check(path: &Path, db_len: u64) -> Check {
    let probe = if path.exists() {
        path.to_path_buf()
    } else {
        fsfacts::parent_dir(path)
    };
    let Some(s) = fsfacts::space(&probe) else {
        return Check::fail(
            "free space",
            "cannot read the filesystem's free space",
            "check that the directory exists",
        );
    };
    let mount = fsfacts::mount_of(path);
    let pct = (s.free * 100).checked_div(s.total).unwrap_or(100);
    let detail = format!(
        "{} of {} free ({pct}%) on {}, block size {} B; the database is {}",
        human(s.free),
        human(s.total),
        mount.display(),
        s.block,
        human(db_len)
    );
    if s.read_only {
        return Check::fail(
            "free space",
            format!("{detail}; mounted read-only"),
            "remount it read-write (after a filesystem error: have it checked first)",
        );
    }
    if pct < 10 || s.free < 2 * db_len {
        return Check::fail(
            "free space",
            format!("{detail}: below 10% or below twice the database's size"),
            format!(
                "free space on {} (a full disk stops every change; `caseload backup` needs \
                 room for a copy)",
                mount.display()
            ),
        );
    }
    Check::pass("free space", detail)
}

fn wal_check(path: &Path) -> Check {
    let len = std::fs::metadata(sidecar(path, "-wal")).map_or(0, |m| m.len());
    if len > BIG_WAL {
        Check::fail(
            "WAL",
            format!("{}: checkpoints are being held back", human(len)),
            "close long-running readers of the file (e.g. an open `sqlite3` shell); caseload \
             checkpoints by itself once they are gone",
        )
    } else {
        Check::pass("WAL", human(len))
    }
}

/// The checks that read the database: its schema version and `quick_check`.
fn database_checks(path: &Path, allow_network_fs: bool) -> Vec<Check> {
    let conn = match crate::store::sqlite_open::inspect(path, allow_network_fs) {
        Ok(c) => c,
        Err(e) => {
            return vec![Check::fail(
                "schema",
                format!("cannot open it: {e}"),
                "fix the problems above, then run doctor again",
            )];
        }
    };
    let versions = conn
        .query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
        .and_then(|v| {
            conn.query_row("PRAGMA application_id", [], |r| r.get::<_, i64>(0))
                .map(|a| (v, a))
        });
    let schema = match versions {
        Err(e) => Check::fail(
            "schema",
            format!("cannot read it: {}", explain_query(path, &conn, e)),
            "fix the problems above, then run doctor again",
        ),
        Ok((v, a)) if v > 0 && a != migrate::APPLICATION_ID => Check::fail(
            "schema",
            "an SQLite database, but not caseload's",
            "point --db, CASELOAD_DB or `db =` at the caseload database",
        ),
        Ok((v, _)) if v == migrate::LATEST => {
            Check::pass("schema", format!("version {v} (this program's)"))
        }
        Ok((v, _)) if v > migrate::LATEST => Check::fail(
            "schema",
            format!("version {v}, newer than this program's {}", migrate::LATEST),
            "upgrade caseload",
        ),
        Ok((v, _)) => Check::fail(
            "schema",
            format!("version {v}, older than this program's {}", migrate::LATEST),
            "run `caseload init` as a user who may write the file (it migrates in place)",
        ),
    };
    let integrity = quick_check(path, &conn);
    vec![schema, integrity]
}

fn quick_check(path: &Path, conn: &rusqlite::Connection) -> Check {
    let lines: rusqlite::Result<Vec<String>> = conn
        .prepare("PRAGMA quick_check(20)")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect());
    match lines {
        Ok(l) if l.len() == 1 && l[0] == "ok" => Check::pass("quick_check", "ok"),
        Ok(l) => Check::fail(
            "quick_check",
            format!(
                "{} problem(s), first: {}",
                l.len(),
                l.first().cloned().unwrap_or_default()
            ),
            "run `caseload check`; `caseload backup NEW.db` copies what can be read (keep the \
             file and its -wal as they are)",
        ),
        Err(e) => Check::fail(
            "quick_check",
            format!("could not run: {}", explain_query(path, conn, e)),
            "run `caseload check`; `caseload backup NEW.db` copies what can be read",
        ),
    }
}
