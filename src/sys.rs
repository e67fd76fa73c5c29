//! Every call into C, each behind a safe function: the one module allowed `unsafe`
//! (Cargo.toml's `[lints]` deny it everywhere else). What the kernel says about files
//! and users (access, passwd and group entries, statvfs, the umask), `poll` on the
//! terminal, and SQLite's C interface where rusqlite has no safe call (persistent WAL,
//! the last error's codes).
//!
//! What only Linux offers lives in `linux` (the filesystem's type by its statfs magic;
//! SQLite's `mmap` of the -shm with its blocks allocated first): elsewhere `portable`
//! gives the same functions answering "unknown" and guarding nothing, so caseload builds
//! and runs on other Unix systems, without those two safety nets.
#![allow(unsafe_code)]

use std::ffi::{CStr, CString};
use std::os::raw::{c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rusqlite::{Connection, ffi};

#[cfg(target_os = "linux")]
mod linux;
#[cfg(any(not(target_os = "linux"), test))]
mod portable;

#[cfg(target_os = "linux")]
pub(crate) use linux::{fs_magic, guard_shared_memory, take_shm_no_space};
#[cfg(not(target_os = "linux"))]
pub(crate) use portable::{fs_magic, guard_shared_memory, take_shm_no_space};

pub(super) fn c_path(path: &Path) -> Option<CString> {
    CString::new(path.as_os_str().as_bytes()).ok()
}

/// True when this process, with its effective ids, may access `path` in `mode`
/// (`libc::W_OK` ...), as the kernel decides.
pub(crate) fn may_access(path: &Path, mode: c_int) -> bool {
    let Some(c) = c_path(path) else {
        return false;
    };
    // SAFETY: c is NUL-terminated; faccessat only reads it.
    unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), mode, libc::AT_EACCESS) == 0 }
}

/// The login name of `uid`, if the system has one.
pub(crate) fn user_name(uid: u32) -> Option<String> {
    // SAFETY: getpwuid_r writes only into the buffers we own; the name is read before
    // they go.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut buf = vec![0 as libc::c_char; 4096];
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result);
        if rc == 0 && !result.is_null() && !pwd.pw_name.is_null() {
            return Some(CStr::from_ptr(pwd.pw_name).to_string_lossy().into_owned());
        }
    }
    None
}

/// How `getgrouplist` takes group ids: `int` on macOS, `gid_t` elsewhere.
#[cfg(target_vendor = "apple")]
type GroupListId = c_int;
#[cfg(not(target_vendor = "apple"))]
type GroupListId = libc::gid_t;

/// The groups `uid` is a member of (its primary group first), if the system knows it.
#[allow(clippy::unnecessary_cast)] // getgrouplist's id type differs between systems
pub(crate) fn groups_of(uid: u32) -> Option<Vec<u32>> {
    // SAFETY: getpwuid_r and getgrouplist write only into the buffers we own; the name
    // pointer is used while `buf` lives; `n` bounds the group list.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut buf = vec![0 as libc::c_char; 4096];
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result);
        if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
            return None;
        }
        let mut groups: Vec<GroupListId> = vec![0; 256];
        let mut n = groups.len() as c_int;
        let base = pwd.pw_gid as GroupListId;
        if libc::getgrouplist(pwd.pw_name, base, groups.as_mut_ptr(), &mut n) < 0 {
            groups.resize(n.max(0) as usize, 0);
            if libc::getgrouplist(pwd.pw_name, base, groups.as_mut_ptr(), &mut n) < 0 {
                return None;
            }
        }
        groups.truncate(n.max(0) as usize);
        Some(groups.into_iter().map(|g| g as u32).collect())
    }
}

/// The name of group `gid`, if the system has one.
pub(crate) fn group_name(gid: u32) -> Option<String> {
    // SAFETY: getgrgid_r writes only into the buffers we own; the name is read before
    // they go.
    unsafe {
        let mut grp: libc::group = std::mem::zeroed();
        let mut buf = vec![0 as libc::c_char; 16384];
        let mut result: *mut libc::group = std::ptr::null_mut();
        let rc = libc::getgrgid_r(gid, &mut grp, buf.as_mut_ptr(), buf.len(), &mut result);
        if rc == 0 && !result.is_null() && !grp.gr_name.is_null() {
            return Some(CStr::from_ptr(grp.gr_name).to_string_lossy().into_owned());
        }
    }
    None
}

/// The members a group entry lists (its supplementary members), if the system has it.
pub(crate) fn group_members(gid: u32) -> Option<Vec<String>> {
    // SAFETY: getgrgid_r writes only into the buffers we own; the member list (a NULL-
    // terminated array of NUL-terminated names inside `buf`) is read before they go.
    unsafe {
        let mut grp: libc::group = std::mem::zeroed();
        let mut buf = vec![0 as libc::c_char; 65536];
        let mut result: *mut libc::group = std::ptr::null_mut();
        let rc = libc::getgrgid_r(gid, &mut grp, buf.as_mut_ptr(), buf.len(), &mut result);
        if rc != 0 || result.is_null() {
            return None;
        }
        let mut members = Vec::new();
        let mut p = grp.gr_mem;
        while !p.is_null() && !(*p).is_null() {
            members.push(CStr::from_ptr(*p).to_string_lossy().into_owned());
            p = p.add(1);
        }
        Some(members)
    }
}

/// The primary group of `uid`, if the system has an entry for it.
pub(crate) fn primary_gid(uid: u32) -> Option<u32> {
    // SAFETY: getpwuid_r writes only into the buffers we own.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut buf = vec![0 as libc::c_char; 4096];
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result);
        (rc == 0 && !result.is_null()).then_some(pwd.pw_gid)
    }
}

/// The real user id of this process.
/// Sends `signal` to every process of the process group `pgid` (a child started in a
/// group of its own); a group already gone is no error.
pub(crate) fn signal_group(pgid: u32, signal: c_int) {
    // SAFETY: kill(2) takes plain integers; no memory is shared.
    unsafe { libc::kill(-(pgid as libc::pid_t), signal) };
}

pub(crate) fn uid() -> u32 {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() }
}

/// The effective user id of this process.
pub(crate) fn euid() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

/// The process's umask (read by setting and restoring it).
pub(crate) fn umask() -> u32 {
    // SAFETY: umask cannot fail; the old mask is put back at once.
    unsafe {
        let old = libc::umask(0o022);
        libc::umask(old);
        old as u32
    }
}

/// What `statvfs` says of a filesystem, in the same types on every system.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FsStats {
    /// Blocks free for an unprivileged user, of `frsize` bytes.
    pub bavail: u64,
    /// Blocks in all, of `frsize` bytes.
    pub blocks: u64,
    pub frsize: u64,
    /// The preferred block size.
    pub bsize: u64,
    pub read_only: bool,
}

/// `statvfs` of the filesystem holding `path`.
#[allow(clippy::unnecessary_cast)] // the field types differ between systems
pub(crate) fn statvfs(path: &Path) -> Option<FsStats> {
    let c = c_path(path)?;
    // SAFETY: statvfs writes into the zeroed struct we own; c is NUL-terminated.
    let s = unsafe {
        let mut s: libc::statvfs = std::mem::zeroed();
        (libc::statvfs(c.as_ptr(), &mut s) == 0).then_some(s)
    }?;
    Some(FsStats {
        bavail: s.f_bavail as u64,
        blocks: s.f_blocks as u64,
        frsize: s.f_frsize as u64,
        bsize: s.f_bsize as u64,
        read_only: s.f_flag as u64 & libc::ST_RDONLY as u64 != 0,
    })
}

/// `poll(2)` on `fds` for up to `ms` milliseconds; the number of ready descriptors.
pub(crate) fn poll(fds: &mut [libc::pollfd], ms: c_int) -> std::io::Result<usize> {
    // SAFETY: the pollfds live in the caller's slice for the whole call.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}

/// Keeps the connection's WAL and -shm files when it closes (SQLITE_FCNTL_PERSIST_WAL).
pub(crate) fn persist_wal(conn: &Connection) {
    let mut persist: c_int = 1;
    // SAFETY: the handle is open; SQLITE_FCNTL_PERSIST_WAL reads and writes one int.
    unsafe {
        ffi::sqlite3_file_control(
            conn.handle(),
            c"main".as_ptr(),
            ffi::SQLITE_FCNTL_PERSIST_WAL,
            (&mut persist as *mut c_int).cast::<c_void>(),
        );
    }
}

/// SQLite's extended result code and the OS errno of the connection's last failure.
pub(crate) fn last_error(conn: &Connection) -> (i32, i32) {
    // SAFETY: the handle is open; both calls only read the connection's state.
    unsafe {
        (
            ffi::sqlite3_extended_errcode(conn.handle()),
            ffi::sqlite3_system_errno(conn.handle()),
        )
    }
}
