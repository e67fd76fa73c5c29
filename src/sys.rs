//! Every call into C, each behind a safe function: the one module allowed `unsafe`
//! (Cargo.toml's `[lints]` deny it everywhere else). What the kernel says about files
//! and users (access, passwd and group entries, statvfs/statfs, the umask), `poll` on the
//! terminal, and SQLite's C interface where rusqlite has no safe call (persistent WAL,
//! the last error's codes, the unix VFS's `mmap`).
#![allow(unsafe_code)]

use std::cell::Cell;
use std::ffi::{CStr, CString};
use std::os::raw::{c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};

use rusqlite::{Connection, ffi};

fn c_path(path: &Path) -> Option<CString> {
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

/// The groups `uid` is a member of (its primary group first), if the system knows it.
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
        let mut groups: Vec<libc::gid_t> = vec![0; 256];
        let mut n = groups.len() as c_int;
        if libc::getgrouplist(pwd.pw_name, pwd.pw_gid, groups.as_mut_ptr(), &mut n) < 0 {
            groups.resize(n.max(0) as usize, 0);
            if libc::getgrouplist(pwd.pw_name, pwd.pw_gid, groups.as_mut_ptr(), &mut n) < 0 {
                return None;
            }
        }
        groups.truncate(n.max(0) as usize);
        Some(groups)
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

/// `statvfs` of the filesystem holding `path`.
pub(crate) fn statvfs(path: &Path) -> Option<libc::statvfs> {
    let c = c_path(path)?;
    // SAFETY: statvfs writes into the zeroed struct we own; c is NUL-terminated.
    unsafe {
        let mut s: libc::statvfs = std::mem::zeroed();
        (libc::statvfs(c.as_ptr(), &mut s) == 0).then_some(s)
    }
}

/// The filesystem type's magic number (statfs `f_type`) of the filesystem holding `path`.
pub(crate) fn fs_magic(path: &Path) -> Option<i64> {
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

type MmapFn = unsafe extern "C" fn(
    *mut c_void,
    libc::size_t,
    c_int,
    c_int,
    c_int,
    libc::off_t,
) -> *mut c_void;

static REAL_MMAP: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static SHM_NO_SPACE: Cell<bool> = const { Cell::new(false) };
}

/// True (once) when the -shm guard refused a mapping on this thread for lack of space.
pub(crate) fn take_shm_no_space() -> bool {
    SHM_NO_SPACE.with(|c| c.replace(false))
}

/// SQLite's `mmap` for the -shm file, with the region's blocks allocated first. SQLite
/// extends the -shm by writing one byte per 4 KiB page; on a filesystem with 1 KiB blocks
/// the rest of each page is a hole, and the first write into it through the mapping, on
/// a full disk, is a SIGBUS. Allocating the region up front turns that into ENOSPC, which
/// SQLite reports as an error.
unsafe extern "C" fn mmap_allocated(
    addr: *mut c_void,
    len: libc::size_t,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: libc::off_t,
) -> *mut c_void {
    // SAFETY: REAL_MMAP holds the VFS's own mmap (stored before this one was installed).
    let real: MmapFn = unsafe { std::mem::transmute(REAL_MMAP.load(Ordering::Acquire)) };
    let shared_write = prot & libc::PROT_WRITE != 0 && flags & libc::MAP_SHARED != 0 && fd >= 0;
    if !shared_write {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe { real(addr, len, prot, flags, fd, off) };
    }
    // SAFETY: fallocate on SQLite's open descriptor, within the region it is mapping;
    // KEEP_SIZE never changes the file's length, and allocating a hole keeps its zeros.
    let rc = unsafe { libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, off, len as libc::off_t) };
    if rc != 0 {
        let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        if e == libc::ENOSPC || e == libc::EDQUOT {
            return refuse_mapping();
        }
    }
    // SAFETY: the caller's arguments, passed on unchanged.
    let p = unsafe { real(addr, len, prot, flags, fd, off) };
    if p != libc::MAP_FAILED {
        // Filesystems without fallocate: fault every page in writable now; a page that
        // cannot be backed fails here with EFAULT instead of a SIGBUS later.
        // SAFETY: p..p+len is the mapping just made.
        let rc = unsafe { libc::madvise(p, len, libc::MADV_POPULATE_WRITE) };
        if rc != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EFAULT) {
            // SAFETY: unmapping the mapping just made, which nobody has seen.
            unsafe { libc::munmap(p, len) };
            return refuse_mapping();
        }
    }
    p
}

fn refuse_mapping() -> *mut c_void {
    SHM_NO_SPACE.with(|c| c.set(true));
    // SAFETY: errno is this thread's; SQLite reads it to report the failure.
    unsafe { *libc::__errno_location() = libc::ENOSPC };
    libc::MAP_FAILED
}

/// Installs [`mmap_allocated`] in SQLite's unix VFS (once per process, before the first
/// connection opens).
pub(crate) fn guard_shared_memory() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: the unix VFS's system-call table is SQLite's documented override point
        // (xSetSystemCall); the replacement has mmap's exact signature and calls the
        // original, stored before the swap.
        unsafe {
            let vfs = ffi::sqlite3_vfs_find(c"unix".as_ptr());
            if vfs.is_null() {
                return;
            }
            let (Some(get), Some(set)) = ((*vfs).xGetSystemCall, (*vfs).xSetSystemCall) else {
                return;
            };
            let Some(real) = get(vfs, c"mmap".as_ptr()) else {
                return;
            };
            REAL_MMAP.store(real as usize, Ordering::Release);
            let ours: MmapFn = mmap_allocated;
            let ours: unsafe extern "C" fn() = std::mem::transmute(ours);
            set(vfs, c"mmap".as_ptr(), Some(ours));
        }
    });
}
