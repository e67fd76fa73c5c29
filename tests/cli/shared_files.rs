//! Several OS users sharing one database file: a user who may only read never leaves a
//! -wal or -shm that locks writers out; a writer blocked by such files (left by another
//! tool or an older caseload) is told which files, whose, and the fix; a directory
//! writers cannot create files in is named with its fix. Real users (useradd), real
//! permissions; needs root.

use crate::support;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::cli::Env;
use crate::support::fault::{Users, sidecar};

/// Runs the binary as OS user `name` (its primary group, no supplementary groups).
fn run_as(env: &Env, users: &Users, name: &str, args: &[&str]) -> Output {
    let (uid, gid) = users.ids(name);
    let mut c = env.command(name, args);
    c.uid(uid).gid(gid);
    c.output().expect("run caseload")
}

fn ok_as(env: &Env, users: &Users, name: &str, args: &[&str]) -> String {
    let out = run_as(env, users, name, args);
    assert!(
        out.status.success(),
        "{}",
        support::cli::explain(name, args, &out, "exit 0")
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fails_as(env: &Env, users: &Users, name: &str, args: &[&str]) -> String {
    let out = run_as(env, users, name, args);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        support::cli::explain(name, args, &out, "exit 1")
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err
}

/// A directory others may enter, owned by `uid:gid` with `mode`.
fn shared_dir(env: &Env, name: &str, uid: u32, gid: u32, mode: u32) -> PathBuf {
    std::fs::set_permissions(env.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = env.dir.path().join(name);
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
    dir
}

/// Every file in `dir` with its owner's uid.
fn owners(dir: &Path) -> Vec<(String, u32)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().uid(),
            )
        })
        .collect();
    v.sort();
    v
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_reader_never_locks_writers_out() {
    if support::fault::skip_unless_root("a_reader_never_locks_writers_out") {
        return;
    }
    let users = Users::create("cq", &[("own", true), ("rdr", true)]);
    let (alice, bob) = (users.names[0].clone(), users.names[1].clone());
    let (alice_uid, _) = users.ids(&alice);
    let (bob_uid, _) = users.ids(&bob);
    let mut env = Env::new();
    let dir = shared_dir(&env, "shared", 0, users.gid(), 0o2775);
    env.db = dir.join("q.db");
    ok_as(&env, &users, &alice, &["init"]);
    chmod(&env.db, 0o640); // the group may read, only alice may write
    ok_as(&env, &users, &alice, &["add", "--title", "first"]);

    // bob may only read: browsing works and leaves nothing of his behind.
    assert!(ok_as(&env, &users, &bob, &["list"]).contains("first"));
    ok_as(&env, &users, &bob, &["stats"]);
    ok_as(&env, &users, &bob, &["check"]);
    assert!(
        owners(&dir).iter().all(|(_, uid)| *uid != bob_uid),
        "bob left files: {:?}",
        owners(&dir)
    );
    let err = fails_as(&env, &users, &bob, &["add", "--title", "nope"]);
    assert!(err.contains("read-only for you"), "{err}");
    // alice, the writer, carries on.
    ok_as(&env, &users, &alice, &["add", "--title", "second"]);
    ok_as(&env, &users, &alice, &["claim"]);

    // With no -wal/-shm (deleted by another tool's last close), bob is refused rather
    // than creating files that would lock alice out.
    let wal = sidecar(&env.db, "-wal");
    let shm = sidecar(&env.db, "-shm");
    crate::support::fault::checkpoint_and_remove_sidecars(&env.db);
    let err = fails_as(&env, &users, &bob, &["list"]);
    assert!(
        err.contains("q.db-wal is missing") && err.contains("lock out"),
        "{err}"
    );
    let err = fails_as(&env, &users, &bob, &["check"]);
    assert!(err.contains("q.db-wal is missing"), "{err}");
    let out = run_as(&env, &users, &bob, &["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!wal.exists() && !shm.exists(), "bob created nothing");
    ok_as(&env, &users, &alice, &["list"]);
    assert!(ok_as(&env, &users, &bob, &["list"]).contains("second"));

    // Nobody may write the file (an archive): bob reads it without any -wal or -shm.
    std::fs::remove_file(&wal).unwrap();
    std::fs::remove_file(&shm).unwrap();
    chmod(&env.db, 0o444);
    assert!(ok_as(&env, &users, &bob, &["list"]).contains("second"));
    assert!(!wal.exists() && !shm.exists(), "bob created nothing");
    chmod(&env.db, 0o640);
    assert_eq!(owners(&dir).len(), 1);
    let _ = alice_uid;
}

#[test]
fn a_writer_blocked_by_anothers_files_is_told_whose_and_the_fix() {
    if support::fault::skip_unless_root("a_writer_blocked_by_anothers_files") {
        return;
    }
    let users = Users::create("cw", &[("own", true), ("rdr", true)]);
    let (alice, bob) = (users.names[0].clone(), users.names[1].clone());
    let (bob_uid, _) = users.ids(&bob);
    let mut env = Env::new();
    let dir = shared_dir(&env, "shared", 0, users.gid(), 0o2775);
    env.db = dir.join("q.db");
    ok_as(&env, &users, &alice, &["init"]);
    chmod(&env.db, 0o640);
    ok_as(&env, &users, &alice, &["add", "--title", "first"]);
    // (Taken first: SQLite run by root gives the -wal and -shm back to the database's
    // owner whenever it opens them.)
    let before = env.fingerprint();
    // What an older caseload or another SQLite tool run by bob leaves: the -wal and -shm
    // his, readable by the group only.
    for f in [sidecar(&env.db, "-wal"), sidecar(&env.db, "-shm")] {
        std::os::unix::fs::chown(&f, Some(bob_uid), None).unwrap();
        chmod(&f, 0o640);
    }
    let err = fails_as(&env, &users, &alice, &["add", "--title", "blocked"]);
    assert!(
        err.contains("q.db-wal")
            && err.contains("q.db-shm")
            && err.contains(&bob)
            && err.contains("chown --reference=")
            && !err.contains("rm "),
        "{err}"
    );
    // Reading still works for her, and nothing changed.
    assert!(ok_as(&env, &users, &alice, &["list"]).contains("first"));
    assert!(!ok_as(&env, &users, &alice, &["list"]).contains("blocked"));
    // The advised fix, run by root, is all it takes.
    let fix = err
        .split('`')
        .nth(1)
        .expect("the fix is quoted")
        .replace("sudo ", "");
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(&fix)
        .status()
        .unwrap();
    assert!(status.success(), "{fix}");
    assert_eq!(before, env.fingerprint());
    ok_as(&env, &users, &alice, &["add", "--title", "unblocked"]);
    assert_eq!(ok_as(&env, &users, &alice, &["check"]).trim(), "ok");
}

#[test]
fn a_directory_writers_cannot_create_files_in_is_named_with_its_fix() {
    if support::fault::skip_unless_root("a_directory_writers_cannot_create_files_in") {
        return;
    }
    let users = Users::create("cd", &[("own", true), ("mbr", true)]);
    let (alice, bob) = (users.names[0].clone(), users.names[1].clone());
    let (alice_uid, _) = users.ids(&alice);
    let mut env = Env::new();
    // alice's directory, not group-writable; the database itself is the group's to write.
    let dir = shared_dir(&env, "hers", alice_uid, users.gid(), 0o755);
    env.db = dir.join("q.db");
    ok_as(&env, &users, &alice, &["init"]);
    chmod(&env.db, 0o660);
    ok_as(&env, &users, &alice, &["add", "--title", "first"]);
    // While the -wal and -shm are there, bob works although he cannot create files.
    ok_as(&env, &users, &bob, &["add", "--title", "by bob"]);
    assert!(ok_as(&env, &users, &bob, &["list"]).contains("by bob"));
    // Without them, he is told what to change.
    crate::support::fault::checkpoint_and_remove_sidecars(&env.db);
    let err = fails_as(&env, &users, &bob, &["list"]);
    assert!(
        err.contains(&dir.display().to_string())
            && err.contains("chmod 2775")
            && err.contains(&users.group)
            && !err.contains("read-only"),
        "{err}"
    );
    // check says the same, and does not call the file damaged.
    let err = fails_as(&env, &users, &bob, &["check"]);
    assert!(
        err.contains("chmod 2775") && !err.contains("damaged"),
        "{err}"
    );
    chmod(&dir, 0o2775);
    ok_as(&env, &users, &bob, &["list"]);
}
