//! The Linux-only calls (see the parent module): the filesystem's type by its statfs
//! magic number, and SQLite's `mmap` of the -shm with the region's blocks allocated first.

use std::cell::Cell;
use std::os::raw::{c_int, c_void};
use std::path::Path;
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};

use rusqlite::ffi;

use super::c_path;

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
