//! Real storage for fault tests: tmpfs and loop-mounted ext4 filesystems the test mounts
//! (and unmounts when dropped), OS users and groups, and a WAL reader that finds the newest
//! copy of a page. These tests need root (CI runs as root); without it they skip with a
//! printed reason.

use std::path::{Path, PathBuf};
use std::process::Command;

/// True when the tests may mount filesystems and create users.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// True (and the test counted as skipped, see [`super::skip`]) when the test cannot run
/// here: it needs root.
pub fn skip_unless_root(_test: &str) -> bool {
    if is_root() {
        return false;
    }
    super::skip::skip(super::skip::NOT_ROOT);
    true
}

/// Runs an account command (useradd, groupadd, ...), one at a time in this process and
/// retried while another process holds /etc/passwd's lock.
fn run_account(cmd: &mut Command) {
    if let Err(why) = try_account(cmd) {
        panic!("{cmd:?} failed: {why}");
    }
}

static ACCOUNTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn try_account(cmd: &mut Command) -> Result<(), String> {
    let _one = ACCOUNTS.lock().unwrap_or_else(|e| e.into_inner());
    for _ in 0..50 {
        let out = cmd.output().map_err(|e| e.to_string())?;
        if out.status.success() {
            return Ok(());
        }
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        if !err.contains("lock") {
            return Err(err);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Err("/etc/passwd stayed locked".into())
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A mounted filesystem, unmounted (lazily, so a test failure never leaves it behind)
/// when dropped.
pub struct Mount {
    pub dir: PathBuf,
    image: Option<PathBuf>,
}

impl Mount {
    /// A tmpfs of `size` (e.g. "3M") at `dir`.
    pub fn tmpfs(dir: &Path, size: &str) -> Mount {
        std::fs::create_dir_all(dir).unwrap();
        run(Command::new("mount")
            .args(["-t", "tmpfs", "-o"])
            .arg(format!("size={size},mode=0777"))
            .arg("caseload-test")
            .arg(dir));
        Mount {
            dir: dir.to_path_buf(),
            image: None,
        }
    }

    /// An ext4 filesystem with 1 KiB blocks (mkfs's choice for small filesystems) of
    /// `kib` KiB in an image file beside `dir`, loop-mounted at `dir`.
    pub fn ext4_1k(dir: &Path, kib: u64) -> Mount {
        std::fs::create_dir_all(dir).unwrap();
        let image = dir.with_extension("img");
        let f = std::fs::File::create(&image).unwrap();
        f.set_len(kib * 1024).unwrap();
        drop(f);
        run(Command::new("mkfs.ext4")
            .args(["-q", "-F", "-b", "1024", "-m", "0"])
            .arg(&image));
        run(Command::new("mount")
            .arg("-o")
            .arg("loop")
            .arg(&image)
            .arg(dir));
        run(Command::new("chmod").arg("0777").arg(dir));
        Mount {
            dir: dir.to_path_buf(),
            image: Some(image),
        }
    }

    /// Changes a tmpfs's size (`mount -o remount,size=`).
    pub fn resize(&self, size: &str) {
        run(Command::new("mount")
            .arg("-o")
            .arg(format!("remount,size={size}"))
            .arg(&self.dir));
    }

    /// Bytes free for an unprivileged user.
    pub fn free(&self) -> u64 {
        free_bytes(&self.dir)
    }

    /// Fills the filesystem until `leave` bytes are free, with a file named `name`.
    pub fn fill_to(&self, name: &str, leave: u64) {
        let path = self.dir.join(name);
        let _ = std::fs::remove_file(&path);
        sync_fs(&self.dir);
        let free = self.free();
        if free > leave {
            let f = std::fs::File::create(&path).unwrap();
            // SAFETY: fallocate on a file we own; the length is in range.
            let rc = unsafe {
                libc::fallocate(
                    std::os::fd::AsRawFd::as_raw_fd(&f),
                    0,
                    0,
                    (free - leave) as i64,
                )
            };
            assert_eq!(rc, 0, "fallocate: {}", std::io::Error::last_os_error());
        }
        sync_fs(&self.dir);
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
        if let Some(image) = &self.image {
            let _ = std::fs::remove_file(image);
        }
    }
}

/// Free bytes on the filesystem holding `dir`, as an unprivileged user sees them.
pub fn free_bytes(dir: &Path) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
    // SAFETY: statvfs writes into the zeroed struct we own; c is NUL-terminated.
    unsafe {
        let mut s: libc::statvfs = std::mem::zeroed();
        assert_eq!(libc::statvfs(c.as_ptr(), &mut s), 0);
        s.f_bavail * s.f_frsize
    }
}

fn sync_fs(dir: &Path) {
    if let Ok(f) = std::fs::File::open(dir) {
        // SAFETY: syncfs on a descriptor we own.
        unsafe { libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&f)) };
    }
}

/// The newest committed copy of page `pgno` in a WAL file, if any (the WAL's frames are
/// read as SQLite writes them: a 32-byte header, then frames of a 24-byte header and a
/// page; frames of an older WAL generation carry other salts).
pub fn newest_wal_page(wal: &Path, pgno: u32) -> Option<Vec<u8>> {
    let data = std::fs::read(wal).unwrap();
    if data.len() < 32 {
        return None;
    }
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    let page_size = be(&data[8..12]) as usize;
    let salts = &data[16..24];
    let mut newest = None;
    let mut pending = None;
    let mut at = 32;
    while at + 24 + page_size <= data.len() {
        let frame = &data[at..at + 24];
        if &frame[8..16] != salts {
            break;
        }
        if be(&frame[0..4]) == pgno {
            pending = Some(data[at + 24..at + 24 + page_size].to_vec());
        }
        if be(&frame[4..8]) != 0 {
            // A commit frame: everything before it is committed.
            if pending.is_some() {
                newest = pending.clone();
            }
        }
        at += 24 + page_size;
    }
    newest
}

/// A group and users in it for permission tests; deleted when dropped.
pub struct Users {
    pub group: String,
    pub names: Vec<String>,
}

impl Users {
    /// Creates `group` and, for each `(name, in_group)`, a user (in the group or not).
    /// Names are made unique per process so parallel tests never share them.
    pub fn create(group: &str, users: &[(&str, bool)]) -> Users {
        let tag = std::process::id() % 100_000;
        let prefix = group;
        let group = format!("{prefix}{tag}");
        let _ = try_account(Command::new("groupdel").arg(&group));
        run_account(Command::new("groupadd").arg(&group));
        let mut names = Vec::new();
        for (name, in_group) in users {
            let name = format!("{prefix}{name}{tag}");
            let _ = try_account(Command::new("userdel").arg(&name));
            let mut cmd = Command::new("useradd");
            cmd.args(["-M", "-N", "-s", "/bin/sh"]);
            if *in_group {
                cmd.args(["-g", &group]);
            }
            run_account(cmd.arg(&name));
            names.push(name);
        }
        Users { group, names }
    }

    /// uid and gid of a user.
    pub fn ids(&self, name: &str) -> (u32, u32) {
        let c = std::ffi::CString::new(name).unwrap();
        // SAFETY: getpwnam_r writes only into the buffers we own (tests run in parallel
        // threads, so the non-reentrant getpwnam would race).
        unsafe {
            let mut pwd: libc::passwd = std::mem::zeroed();
            let mut buf = vec![0 as libc::c_char; 4096];
            let mut result: *mut libc::passwd = std::ptr::null_mut();
            let rc = libc::getpwnam_r(
                c.as_ptr(),
                &mut pwd,
                buf.as_mut_ptr(),
                buf.len(),
                &mut result,
            );
            assert!(rc == 0 && !result.is_null(), "no user {name}");
            (pwd.pw_uid, pwd.pw_gid)
        }
    }

    /// The group's gid.
    pub fn gid(&self) -> u32 {
        let c = std::ffi::CString::new(self.group.as_str()).unwrap();
        // SAFETY: getgrnam_r writes only into the buffers we own.
        unsafe {
            let mut grp: libc::group = std::mem::zeroed();
            let mut buf = vec![0 as libc::c_char; 16384];
            let mut result: *mut libc::group = std::ptr::null_mut();
            let rc = libc::getgrnam_r(
                c.as_ptr(),
                &mut grp,
                buf.as_mut_ptr(),
                buf.len(),
                &mut result,
            );
            assert!(rc == 0 && !result.is_null(), "no group {}", self.group);
            grp.gr_gid
        }
    }
}

impl Drop for Users {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = try_account(Command::new("userdel").arg(n));
        }
        let _ = try_account(Command::new("groupdel").arg(&self.group));
    }
}

/// Copies what the -wal of `db` holds into the file and removes the -wal and the -shm
/// (a command leaves its commits in the -wal; this connection, the last to close, is not
/// caseload's and keeps no files): for tests that start afresh without them.
pub fn checkpoint_and_remove_sidecars(db: &Path) {
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    drop(c);
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(sidecar(db, suffix));
    }
    assert!(!sidecar(db, "-wal").exists() && !sidecar(db, "-shm").exists());
}

/// `path` with `suffix` appended to its file name.
pub fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// Owner name of a file.
pub fn owner_of(path: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    caseload::store::fsfacts::user_name(std::fs::metadata(path).unwrap().uid())
}
