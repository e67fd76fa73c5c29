//! What the operating system says about a database's files: who owns them, who may write
//! them, which filesystem and mount they are on and how much room is left. The open path
//! and `caseload doctor` use these facts to explain a fault; none of them is a check that
//! refuses a file SQLite itself would open.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The directory holding `path` (`.` for a bare file name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `path` with `suffix` appended to its file name (`q.db` -> `q.db-wal`).
pub fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

fn c_path(path: &Path) -> Option<CString> {
    CString::new(path.as_os_str().as_bytes()).ok()
}

/// True when this process (its effective ids) may write `path`, as the kernel decides.
pub fn may_write(path: &Path) -> bool {
    may(path, libc::W_OK)
}

/// True when this process may create files in directory `dir`.
pub fn may_create_in(dir: &Path) -> bool {
    may(dir, libc::W_OK | libc::X_OK)
}

fn may(path: &Path, mode: libc::c_int) -> bool {
    let Some(c) = c_path(path) else {
        return false;
    };
    // SAFETY: c is NUL-terminated; faccessat only reads it.
    unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), mode, libc::AT_EACCESS) == 0 }
}

/// The login name of `uid`, or `uid N` when the system has none.
pub fn user_name(uid: u32) -> String {
    // SAFETY: getpwuid_r writes only into the buffers we own.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut buf = vec![0 as libc::c_char; 4096];
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result);
        if rc == 0 && !result.is_null() && !pwd.pw_name.is_null() {
            return std::ffi::CStr::from_ptr(pwd.pw_name)
                .to_string_lossy()
                .into_owned();
        }
    }
    format!("uid {uid}")
}

/// The name of group `gid`, or `gid N` when the system has none.
pub fn group_name(gid: u32) -> String {
    // SAFETY: getgrgid_r writes only into the buffers we own.
    unsafe {
        let mut grp: libc::group = std::mem::zeroed();
        let mut buf = vec![0 as libc::c_char; 16384];
        let mut result: *mut libc::group = std::ptr::null_mut();
        let rc = libc::getgrgid_r(gid, &mut grp, buf.as_mut_ptr(), buf.len(), &mut result);
        if rc == 0 && !result.is_null() && !grp.gr_name.is_null() {
            return std::ffi::CStr::from_ptr(grp.gr_name)
                .to_string_lossy()
                .into_owned();
        }
    }
    format!("gid {gid}")
}

/// The effective user id of this process.
pub fn euid() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

/// The process's umask (read by setting and restoring it).
pub fn umask() -> u32 {
    // SAFETY: umask cannot fail; the old mask is put back at once.
    unsafe {
        let old = libc::umask(0o022);
        libc::umask(old);
        old as u32
    }
}

/// Owner, group and permission bits of a file, as `alice:caseload 0640`.
pub fn describe_owner(meta: &std::fs::Metadata) -> String {
    format!(
        "{}:{} {:04o}",
        user_name(meta.uid()),
        group_name(meta.gid()),
        meta.mode() & 0o7777
    )
}

/// Space on the filesystem holding a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
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
pub fn space(path: &Path) -> Option<Space> {
    let c = c_path(path)?;
    // SAFETY: statvfs writes into the zeroed struct we own; c is NUL-terminated.
    unsafe {
        let mut s: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut s) != 0 {
            return None;
        }
        Some(Space {
            free: s.f_bavail.saturating_mul(s.f_frsize),
            total: s.f_blocks.saturating_mul(s.f_frsize),
            block: s.f_bsize,
            read_only: s.f_flag & libc::ST_RDONLY != 0,
        })
    }
}

/// The filesystem type's magic number (statfs `f_type`).
pub fn fs_magic(path: &Path) -> Option<i64> {
    let c = c_path(path)?;
    // SAFETY: statfs writes into the zeroed struct we own; c is NUL-terminated.
    unsafe {
        let mut s: libc::statfs = std::mem::zeroed();
        if libc::statfs(c.as_ptr(), &mut s) == 0 {
            #[allow(clippy::unnecessary_cast)]
            Some(s.f_type as i64)
        } else {
            None
        }
    }
}

/// Kernel interface filesystems whose files only look like regular files.
pub fn pseudo_fs_name(magic: i64) -> Option<&'static str> {
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
pub fn mount_of(path: &Path) -> PathBuf {
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
pub fn kind_of(meta: &std::fs::Metadata) -> &'static str {
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
pub fn shell_quote(path: &Path) -> String {
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
