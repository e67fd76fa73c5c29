//! The Linux-only calls of `linux`, on other systems: the filesystem's type is unknown
//! (so no network filesystem is recognised and refused), and SQLite maps its -shm
//! itself (so a full disk under a filesystem with small blocks can still end a process
//! with SIGBUS there). Compiled on Linux too, for its tests.

use std::path::Path;

/// The filesystem's type is not known here.
pub(crate) fn fs_magic(_path: &Path) -> Option<i64> {
    None
}

/// SQLite's own `mmap` is left in place.
pub(crate) fn guard_shared_memory() {}

/// Nothing refuses a mapping here, so nothing is ever reported.
pub(crate) fn take_shm_no_space() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without the Linux calls: no filesystem is taken for a network one, and a store
    /// opens and writes with SQLite's own mapping of the -shm.
    #[test]
    fn the_fallback_knows_nothing_and_guards_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(fs_magic(dir.path()), None);
        let verdict = crate::store::location::local_fs_verdict(dir.path(), fs_magic(dir.path()));
        assert!(verdict.is_ok());
        // Where Linux names the filesystem, the same verdict refuses NFS.
        let nfs = crate::store::location::local_fs_verdict(dir.path(), Some(0x6969));
        assert!(nfs.unwrap_err().contains("network filesystem"));
        guard_shared_memory();
        let conn = rusqlite::Connection::open(dir.path().join("q.db")).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        assert!(!take_shm_no_space());
    }
}
