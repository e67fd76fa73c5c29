//! What the operating system says about a database's files: who owns them, who may write
//! them, which filesystem and mount they are on and how much room is left. The open path
//! and `caseload doctor` use these facts to explain a fault; none of them is a check that
//! refuses a file SQLite itself would open.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::sys;

/// The directory holding `path` (`.` for a bare file name).
pub(crate) fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `path` with `suffix` appended to its file name (`q.db` -> `q.db-wal`).
pub(crate) fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// True when this process (its effective ids) may write `path`, as the kernel decides.
pub(crate) fn may_write(path: &Path) -> bool {
    may(path, libc::W_OK)
}

/// True when this process may create files in directory `dir`.
pub(crate) fn may_create_in(dir: &Path) -> bool {
    may(dir, libc::W_OK | libc::X_OK)
}

fn may(path: &Path, mode: libc::c_int) -> bool {
    sys::may_access(path, mode)
}

/// Whether the user `uid` may write a file of `meta`'s owner, group and mode, by its
/// permission bits (no ACLs): what a message may say about another user. `None` when the
/// system does not know the user.
pub(crate) fn may_write_as(uid: u32, meta: &std::fs::Metadata) -> Option<bool> {
    let mode = meta.mode();
    if uid == 0 {
        return Some(true);
    }
    if uid == meta.uid() {
        return Some(mode & 0o200 != 0);
    }
    let groups = sys::groups_of(uid)?;
    Some(if groups.contains(&meta.gid()) {
        mode & 0o020 != 0
    } else {
        mode & 0o002 != 0
    })
}

/// The login name of `uid`, or `uid N` when the system has none.
pub fn user_name(uid: u32) -> String {
    sys::user_name(uid).unwrap_or_else(|| format!("uid {uid}"))
}

/// The name of group `gid`, or `gid N` when the system has none.
pub(crate) fn group_name(gid: u32) -> String {
    sys::group_name(gid).unwrap_or_else(|| format!("gid {gid}"))
}

/// True when group `gid` is `uid`'s own private group (the user-private-group scheme:
/// the user's primary group, named after the user, listing nobody else), so that its
/// write bit lets nobody but that user write.
pub(crate) fn is_private_group(gid: u32, uid: u32) -> bool {
    let Some(name) = sys::user_name(uid) else {
        return false;
    };
    sys::primary_gid(uid) == Some(gid)
        && sys::group_name(gid).as_deref() == Some(name.as_str())
        && sys::group_members(gid).is_some_and(|m| m.iter().all(|n| *n == name))
}

/// The effective user id of this process.
pub(crate) fn euid() -> u32 {
    sys::euid()
}

/// The process's umask.
pub(crate) fn umask() -> u32 {
    sys::umask()
}

/// Owner, group and permission bits of a file, as `alice:caseload 0640`.
pub(crate) fn describe_owner(meta: &std::fs::Metadata) -> String {
    format!(
        "{}:{} {:04o}",
        user_name(meta.uid()),
        group_name(meta.gid()),
        meta.mode() & 0o7777
    )
}

/// Space on the filesystem holding a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Space {
    /// Bytes an unprivileged user may still use.
    pub free: u64,
    /// Size of the filesystem in bytes.
    pub total: u64,
    /// The filesystem's block size.
    pub block: u64,
    /// Mounted read-only.
    pub read_only: bool,
}

/// Free space and block size of the filesystem holding `path`.
pub(crate) fn space(path: &Path) -> Option<Space> {
    let s = sys::statvfs(path)?;
    Some(Space {
        free: s.bavail.saturating_mul(s.frsize),
        total: s.blocks.saturating_mul(s.frsize),
        block: s.bsize,
        read_only: s.read_only,
    })
}

/// The filesystem type's magic number (statfs `f_type`).
pub(crate) fn fs_magic(path: &Path) -> Option<i64> {
    sys::fs_magic(path)
}

/// Kernel interface filesystems whose files only look like regular files.
pub(crate) fn pseudo_fs_name(magic: i64) -> Option<&'static str> {
    Some(match magic {
        0x9fa0 => "proc",
        0x6265_6572 => "sysfs",
        0x6462_6720 => "debugfs",
        0x7472_6163 => "tracefs",
        0x7363_6673 => "securityfs",
        0x2762_0b05 | 0x6367_7270 => "cgroup",
        0x6265_6570 => "configfs",
        0x1cd1 => "devpts",
        _ => return None,
    })
}

/// The mount point of the filesystem holding `path`: the highest ancestor of its
/// directory on the same device.
pub(crate) fn mount_of(path: &Path) -> PathBuf {
    let dir = parent_dir(path);
    let start = std::fs::canonicalize(&dir).unwrap_or(dir);
    let Ok(dev) = std::fs::metadata(&start).map(|m| m.dev()) else {
        return start;
    };
    let mut mount = start.clone();
    let mut at = start.as_path();
    while let Some(up) = at.parent() {
        match std::fs::metadata(up) {
            Ok(m) if m.dev() == dev => {
                mount = up.to_path_buf();
                at = up;
            }
            _ => break,
        }
    }
    mount
}

/// A file's kind in words, for "not a regular file" messages.
pub(crate) fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a named pipe (FIFO)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a regular file"
    }
}

/// Quotes a path for a shell command shown to the user.
pub(crate) fn shell_quote(path: &Path) -> String {
    let s = path.display().to_string();
    if s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@%".contains(&b))
    {
        s
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sidecars_and_parents() {
        assert_eq!(
            sidecar(Path::new("/a/q.db"), "-wal"),
            Path::new("/a/q.db-wal")
        );
        assert_eq!(parent_dir(Path::new("q.db")), Path::new("."));
        assert_eq!(parent_dir(Path::new("/a/q.db")), Path::new("/a"));
    }

    #[test]
    fn the_root_filesystem_is_its_own_mount() {
        assert_eq!(mount_of(Path::new("/x")), Path::new("/"));
        assert!(space(Path::new("/")).is_some());
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote(Path::new("/srv/q.db")), "/srv/q.db");
        assert_eq!(shell_quote(Path::new("/a b/it's")), r"'/a b/it'\''s'");
    }
}
