//! The open path trusts SQLite: no check of caseload's own refuses a file SQLite can open.
//! A checkpoint in progress (page 1 written, the file not yet extended), a checkpoint cut
//! short by kill -9, and a disk that filled up during an import are all states SQLite
//! finishes or recovers on open; every user carries on with no manual step.

use crate::support;
use crate::support::backend::Adds;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::cli::Env;
use caseload::domain::{Actor, NewItem};
use caseload::store::SqliteStore;
use caseload::store::sqlite::OpenOptions;

const ADDER_DB: &str = "CASELOAD_TEST_ADDER_DB";

/// Not a test on its own: the adding process of
/// `lists_during_checkpoints_are_never_refused` (it re-runs this test binary).
#[test]
fn adder_process() {
    let Ok(db) = std::env::var(ADDER_DB) else {
        return;
    };
    let mut store = SqliteStore::open(
        std::path::Path::new(&db),
        Actor::new("adder", "adder"),
        &OpenOptions::default(),
    )
    .expect("open");
    // Checkpoint ten times as often as usual: more checkpoints for the lists to meet.
    store
        .connection()
        .execute_batch("PRAGMA wal_autocheckpoint = 100")
        .unwrap();
    let body = "b".repeat(3000);
    // At least 3,000 adds, then on until the lister has met enough of them (its stop file),
    // so that a slow machine's lists still run beside the checkpoints; at most 30,000.
    let stop = std::path::PathBuf::from(format!("{db}.stop"));
    for i in 0..30_000 {
        if i >= 3000 && stop.exists() {
            break;
        }
        store
            .add(&NewItem {
                body: body.clone(),
                ..NewItem::titled(&format!("item {i}"))
            })
            .expect("add");
    }
}

#[test]
fn lists_during_checkpoints_are_never_refused() {
    let env = Env::new();
    env.ok("boss", &["init"]);
    let start_len = std::fs::metadata(&env.db).unwrap().len();
    let mut adder = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "open_path::adder_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ADDER_DB, &env.db)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lists = 0;
    let mut refused = Vec::new();
    let started = Instant::now();
    loop {
        let done = adder.try_wait().unwrap().is_some();
        let out = env.run("viewer", &["list", "--limit", "1"]);
        lists += 1;
        if lists == 150 {
            std::fs::write(format!("{}.stop", env.db.display()), "").unwrap();
        }
        if !out.status.success() {
            refused.push(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        if done {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(300), "adder hangs");
    }
    let out = adder.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let grown = std::fs::metadata(&env.db).unwrap().len();
    assert!(
        grown > start_len + 4_000_000,
        "checkpoints moved the adds into the file ({start_len} -> {grown} bytes)"
    );
    assert!(
        refused.is_empty(),
        "{} of {lists} lists refused, e.g. {}",
        refused.len(),
        refused[0]
    );
    assert!(lists > 100, "only {lists} lists ran beside the adder");
    assert_eq!(env.ok("x", &["check"]).trim(), "ok");
}

/// Copies the database as a crash leaves it in the middle of a checkpoint: the WAL (synced
/// before a checkpoint starts) intact, and of the main file only page 1 rewritten — a
/// checkpoint writes pages in ascending order, so page 1, with the new page count, comes
/// before the pages that extend the file.
fn checkpoint_cut_after_page_1(env: &Env, into: &std::path::Path) {
    std::fs::create_dir_all(into).unwrap();
    for suffix in ["", "-wal", "-shm"] {
        let from = format!("{}{suffix}", env.db.display());
        std::fs::copy(
            &from,
            format!("{}{suffix}", into.join("queue.db").display()),
        )
        .unwrap();
    }
    let wal = into.join("queue.db-wal");
    let page1 = support::fault::newest_wal_page(&wal, 1).expect("page 1 is in the WAL");
    use std::io::{Seek, Write};
    let mut main = std::fs::OpenOptions::new()
        .write(true)
        .open(into.join("queue.db"))
        .unwrap();
    main.seek(std::io::SeekFrom::Start(0)).unwrap();
    main.write_all(&page1).unwrap();
    main.sync_all().unwrap();
}

#[test]
fn a_checkpoint_killed_after_writing_page_1_is_finished_by_the_next_command() {
    let env = Env::init("producer");
    for i in 0..3 {
        env.add(&format!("before {i}"));
    }
    // Hold the file open so that no command's close checkpoints the WAL.
    let holder = rusqlite::Connection::open(&env.db).unwrap();
    holder
        .execute_batch("PRAGMA wal_autocheckpoint = 0")
        .unwrap();
    let _: i64 = holder
        .query_row("SELECT count(*) FROM items", [], |r| r.get(0))
        .unwrap();
    let csv = env.dir.path().join("rows.csv");
    let mut text = String::from("title,body\n");
    for i in 0..200 {
        text.push_str(&format!("row {i},{}\n", "x".repeat(3000)));
    }
    std::fs::write(&csv, text).unwrap();
    env.ok("producer", &["import", csv.to_str().unwrap()]);
    let crashed = env.dir.path().join("crashed");
    checkpoint_cut_after_page_1(&env, &crashed);
    drop(holder);

    let db = crashed.join("queue.db");
    let mut env = env;
    env.db = db.clone();
    let header = std::fs::read(&db).unwrap();
    let pages = u32::from_be_bytes([header[28], header[29], header[30], header[31]]) as u64;
    let page_size = u16::from_be_bytes([header[16], header[17]]) as u64;
    assert!(
        pages * page_size > header.len() as u64,
        "the header says more pages ({pages}) than the main file holds ({} bytes)",
        header.len()
    );
    let listed: serde_json::Value =
        serde_json::from_str(&env.ok("alice", &["list", "--json", "--limit", "1000"])).unwrap();
    assert_eq!(
        listed.as_array().unwrap().len(),
        203,
        "every committed row is there"
    );
    assert_eq!(env.ok("x", &["check"]).trim(), "ok");
    let claimed: serde_json::Value =
        serde_json::from_str(&env.ok("alice", &["claim", "--json"])).unwrap();
    let id = claimed["id"].as_i64().unwrap().to_string();
    env.ok("alice", &["complete", &id]);
    env.ok("bob", &["add", "--title", "after"]);
    env.ok("bob", &["show", "1"]);
    env.ok("bob", &["stats"]);
    let backup = env.dir.path().join("copy.db");
    env.ok("bob", &["backup", backup.to_str().unwrap()]);
    env.ok("bob", &["--db", backup.to_str().unwrap(), "check"]);
    assert_eq!(env.ok("x", &["check"]).trim(), "ok");
}

#[test]
fn a_disk_that_fills_during_an_import_recovers_once_space_is_freed() {
    if support::fault::skip_unless_root("a_disk_that_fills_during_an_import_recovers") {
        return;
    }
    let mut env = Env::new();
    let mnt = support::fault::Mount::tmpfs(&env.dir.path().join("small"), "3M");
    let db = mnt.dir.join("q.db");
    env.db = db.clone();
    env.ok("producer", &["init"]);
    for i in 0..3 {
        env.ok("p", &["add", "--title", &format!("item {i}")]);
    }
    let csv = env.dir.path().join("rows.csv");
    let mut text = String::from("title,body\n");
    for i in 0..20_000 {
        text.push_str(&format!("row {i},{}\n", "y".repeat(200)));
    }
    std::fs::write(&csv, text).unwrap();
    let err = env.fails("p", &["import", csv.to_str().unwrap()], 1);
    assert!(
        err.contains(&format!("disk full on {}", mnt.dir.display())) && err.contains("free space"),
        "{err}"
    );
    // Meanwhile, reading still works; a backup onto the full disk says so and leaves
    // nothing behind.
    env.ok("viewer", &["list", "--limit", "1"]);
    let copy = mnt.dir.join("copy.db");
    let err = env.fails("viewer", &["backup", copy.to_str().unwrap()], 1);
    assert!(
        err.contains(&format!("disk full on {}", mnt.dir.display())),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(&mnt.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("q.db"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // Room for the rows (~11.5 MB) and, while the import runs, for its -wal: the search
    // indexer reads beside the rows, so under load the -wal cannot restart until both are
    // done and grows to about the rows' size (measured: 11.4 MB), checkpointed and
    // truncated when the last one closes. With 20M that checkpoint found the disk full
    // again and left the -wal behind (the next command said so: correct, but not the
    // recovery this test is about).
    mnt.resize("40M");
    // No manual step: the same commands simply work again.
    env.ok("viewer", &["list", "--limit", "1"]);
    assert_eq!(env.ok("x", &["check"]).trim(), "ok");
    env.ok("p", &["import", csv.to_str().unwrap()]);
    let n: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT count(*) FROM items", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 20_003, "every row once, none twice");
    let (id, _) = {
        let v: serde_json::Value =
            serde_json::from_str(&env.ok("alice", &["claim", "--json"])).unwrap();
        (v["id"].as_i64().unwrap(), v["lock_token"].as_i64().unwrap())
    };
    env.ok("alice", &["complete", &id.to_string()]);
    assert_eq!(env.ok("x", &["check"]).trim(), "ok");
}
