//! Bad input: each gets one clear line naming what and where, the documented exit code,
//! and leaves the database exactly as it was. No panic reaches the user.

use std::os::unix::fs::PermissionsExt;

use crate::support::cli::Env;

fn no_panic(err: &str) {
    assert!(
        !err.contains("panicked") && !err.contains("internal error"),
        "{err}"
    );
}

#[test]
fn a_file_that_is_not_a_database() {
    let env = Env::new();
    std::fs::write(&env.db, "name,phone\nalice,123\n").unwrap();
    let err = env.fails("a", &["list"], 1);
    assert!(
        err.contains("queue.db") && err.contains("not a caseload database"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&env.db).unwrap(),
        "name,phone\nalice,123\n"
    );
    env.fails("a", &["add", "--title", "x"], 1);
    no_panic(&err);
}

#[test]
fn an_sqlite_database_of_another_program() {
    let env = Env::new();
    let conn = rusqlite::Connection::open(&env.db).unwrap();
    conn.execute_batch("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('x');")
        .unwrap();
    drop(conn);
    let before = env.fingerprint_raw();
    let err = env.fails("a", &["list"], 1);
    assert!(err.contains("not a caseload database"), "{err}");
    assert!(
        before == env.fingerprint_raw(),
        "the other program's file was changed"
    );
}

#[test]
fn an_empty_file_is_refused_except_by_init() {
    let env = Env::new();
    std::fs::write(&env.db, "").unwrap();
    let err = env.fails("a", &["list"], 1);
    assert!(
        err.contains("empty file") && err.contains("caseload init"),
        "{err}"
    );
    assert_eq!(std::fs::metadata(&env.db).unwrap().len(), 0);
    env.ok("a", &["init"]);
    env.ok("a", &["list"]);
}

#[test]
fn a_truncated_file() {
    let env = Env::init("p");
    for i in 0..200 {
        env.ok(
            "p",
            &[
                "add",
                "--title",
                &format!("item {i}"),
                "--body",
                &"x".repeat(500),
            ],
        );
    }
    // Fold the WAL into the file, then cut the file in half.
    let conn = rusqlite::Connection::open(&env.db).unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;")
        .unwrap();
    drop(conn);
    let len = std::fs::metadata(&env.db).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&env.db)
        .unwrap();
    f.set_len(len / 2).unwrap();
    drop(f);
    // SQLite itself finds the damage; the advice keeps the data.
    let err = env.fails("a", &["list"], 1);
    assert!(
        err.contains("damaged") && err.contains("queue.db") && err.contains("caseload backup"),
        "{err}"
    );
    assert!(!err.contains("restore") && !err.contains("delete"), "{err}");
    assert_eq!(std::fs::metadata(&env.db).unwrap().len(), len / 2);
    // A file shorter than the SQLite header.
    std::fs::write(&env.db, b"SQLite format 3\0\x10\x00").unwrap();
    let err = env.fails("a", &["list"], 1);
    assert!(err.contains("queue.db") && err.contains("not"), "{err}");
    assert_eq!(
        std::fs::read(&env.db).unwrap(),
        b"SQLite format 3\0\x10\x00"
    );
}

#[test]
fn a_read_only_database_can_be_browsed_but_not_written() {
    let env = Env::init("producer");
    let id = env.add("a");
    env.ok("x", &["check"]);
    let before = env.fingerprint();
    std::fs::set_permissions(&env.db, std::fs::Permissions::from_mode(0o444)).unwrap();
    assert!(env.ok("a", &["list"]).contains("#1"));
    env.ok("a", &["show", &id.to_string()]);
    env.ok("a", &["stats"]);
    let err = env.fails("a", &["add", "--title", "b"], 1);
    assert!(err.contains("read-only"), "{err}");
    let err = env.fails("a", &["claim"], 1);
    assert!(err.contains("read-only"), "{err}");
    std::fs::set_permissions(&env.db, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(before, env.fingerprint());
}

#[test]
fn a_database_from_a_newer_caseload() {
    let env = Env::init("producer");
    env.add("a");
    let conn = rusqlite::Connection::open(&env.db).unwrap();
    conn.execute_batch("PRAGMA user_version = 99").unwrap();
    drop(conn);
    let before = env.fingerprint();
    let err = env.fails("a", &["list"], 1);
    assert!(
        err.contains("newer caseload") && err.contains("99"),
        "{err}"
    );
    assert_eq!(before, env.fingerprint());
}

#[test]
fn params_that_are_not_json_and_other_bad_fields() {
    let env = Env::init("producer");
    env.add("a");
    let before = env.fingerprint();
    let err = env.fails("a", &["add", "--title", "x", "--params", "{oops"], 1);
    assert!(
        err.contains("--params") && err.contains("not valid JSON"),
        "{err}"
    );
    let err = env.fails("a", &["add", "--title", "x", "--params", "[1,2]"], 1);
    assert!(err.contains("JSON object"), "{err}");
    let long = "t".repeat(1001);
    let err = env.fails("a", &["add", "--title", &long], 1);
    assert!(
        err.contains("--title") && err.contains("1001 characters"),
        "{err}"
    );
    let err = env.fails("a", &["add", "--title", "x", "--due", "whenever"], 1);
    assert!(err.contains("--due") && err.contains("RFC 3339"), "{err}");
    let err = env.fails("a", &["add", "--title", ""], 1);
    assert!(err.contains("title is empty"), "{err}");
    assert_eq!(before, env.fingerprint());
}

/// A value refused for a field is said with its flag (the store's typed `{field,
/// problem}`, issue 24): exactly one line, exit 1, nothing written.
#[test]
fn a_refused_value_is_named_by_its_flag() {
    let env = Env::init("producer");
    let id = env.add("a").to_string();
    let before = env.fingerprint();
    let long = "q".repeat(101);
    let err = env.fails("producer", &["edit", &id, "--queue", &long], 1);
    assert_eq!(
        err.trim_end(),
        "caseload: --queue: name is longer than 100 characters"
    );
    let err = env.fails("producer", &["add", "--title", "b", "--queue", &long], 1);
    assert_eq!(
        err.trim_end(),
        "caseload: --queue: name is longer than 100 characters"
    );
    let err = env.fails(
        "producer",
        &["reassign", &id, "--to", "not a name", "--reason", "away"],
        1,
    );
    assert_eq!(
        err.trim_end(),
        "caseload: --to: name contains spaces or control characters"
    );
    assert_eq!(before, env.fingerprint());
}

#[test]
fn unknown_ids_tokens_and_queues() {
    let env = Env::init("producer");
    let id = env.add("a");
    env.claim("alice", &[]);
    let before = env.fingerprint();
    let err = env.fails("alice", &["show", "4242"], 1);
    assert!(err.contains("#4242 does not exist"), "{err}");
    env.fails("alice", &["complete", "4242"], 1);
    env.fails("alice", &["claim", "--id", "4242"], 1);
    let err = env.fails("alice", &["complete", &id.to_string(), "--token", "7"], 3);
    assert!(
        err.contains(&format!(
            "token 7 is not your current lock on #{id} (yours is 1)"
        )),
        "{err}"
    );
    let err = env.fails("alice", &["list", "--queue", "nope"], 1);
    assert!(err.contains("unknown queue 'nope'"), "{err}");
    env.fails("alice", &["claim", "--queue", "nope"], 1);
    env.fails("alice", &["show", "abc"], 2);
    assert_eq!(before, env.fingerprint());
}

fn import_fails(env: &Env, name: &str, content: &[u8], expect: &[&str]) {
    let path = env.dir.path().join(name);
    std::fs::write(&path, content).unwrap();
    let before = env.fingerprint();
    let err = env.fails("p", &["import", path.to_str().unwrap()], 1);
    assert!(
        err.contains(name) && err.contains("nothing imported"),
        "{err}"
    );
    for e in expect {
        assert!(err.contains(e), "expected {e:?} in {err}");
    }
    assert_eq!(before, env.fingerprint(), "{name} changed the database");
}

#[test]
fn bad_import_files_import_nothing_and_name_every_bad_line() {
    let env = Env::init("producer");
    env.add("existing");
    import_fails(
        &env,
        "count.csv",
        b"title,body\nok,1\nbad\nok,2\nalso,bad,line\n",
        &["line 3", "line 5", "2 bad line(s)"],
    );
    import_fails(
        &env,
        "quote.csv",
        b"title,body\nok,1\n\"never closed,2\nmore,3\n",
        &["line 3", "never closed"],
    );
    import_fails(
        &env,
        "utf8.csv",
        b"title\nok\nbad \xff\xfe\n",
        &["line 3", "UTF-8"],
    );
    import_fails(
        &env,
        "column.csv",
        b"titel\nx\n",
        &["unknown column 'titel'"],
    );
    import_fails(
        &env,
        "json.jsonl",
        b"{\"title\":\"ok\"}\n{\"title\":\n{\"title\":\"x\",\"params\":\"{oops\"}\n",
        &["line 2", "line 3"],
    );
    import_fails(
        &env,
        "nul.jsonl",
        b"{\"title\":\"a\\u0000b\"}\n",
        &["line 1", "NUL"],
    );
    import_fails(&env, "nul.csv", b"title\na\x00b\n", &["line 2", "NUL"]);
    let big = format!(
        "{{\"title\":\"big\",\"body\":\"{}\"}}\n",
        "x".repeat(1024 * 1024 + 1)
    );
    import_fails(&env, "big.jsonl", big.as_bytes(), &["line 1", "1 MiB"]);
    let long = format!("title\n{}\n", "t".repeat(1001));
    import_fails(
        &env,
        "long.csv",
        long.as_bytes(),
        &["line 2", "1001 characters"],
    );
    let err = env.fails("p", &["import", "/nonexistent/file.csv"], 1);
    assert!(err.contains("/nonexistent/file.csv"), "{err}");
}

#[test]
fn bom_and_crlf_simply_work() {
    let env = Env::init("p");
    let path = env.dir.path().join("excel.csv");
    std::fs::write(
        &path,
        b"\xEF\xBB\xBFtitle,priority\r\nFrom Excel,3\r\nSecond,1\r\n",
    )
    .unwrap();
    env.ok("p", &["import", path.to_str().unwrap()]);
    let v = env.show(1);
    assert_eq!(v["title"], "From Excel");
    assert_eq!(v["priority"], 3);
    assert_eq!(env.show(2)["title"], "Second");
}

#[test]
fn hostile_text_never_reaches_the_terminal() {
    let env = Env::init("p");
    let evil =
        "Hi\u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}]52;c;ZXZpbA==\u{7}\u{9b}31m\r\u{202e}gnp.exe\u{200b}";
    let id: i64 = env
        .ok("p", &["add", "--title", evil, "--body", evil])
        .trim()
        .parse()
        .unwrap();
    let bad = |s: &str| {
        s.chars().any(|c| {
            c.is_control() && c != '\n'
                || ('\u{80}'..='\u{9f}').contains(&c)
                || c == '\u{202e}'
                || c == '\u{200b}'
        })
    };
    for args in [
        vec!["list"],
        vec!["show", &id.to_string()],
        vec!["list", "--json"],
        vec!["show", "1", "--json"],
        vec!["stats"],
        vec!["export", "--format", "jsonl"],
    ] {
        let out = env.ok("x", &args);
        assert!(
            !bad(&out),
            "{args:?} printed raw control characters: {out:?}"
        );
    }
    assert!(env.ok("x", &["list"]).contains("␛[2J"));
    // JSON keeps the data exactly (escaped), so scripts lose nothing.
    let v = env.show(id);
    assert_eq!(v["title"], evil);
    let err = env.fails(
        "p",
        &[
            "add",
            "--title",
            "x",
            "--queue",
            "q\u{1b}[1m",
            "--create-queue",
        ],
        1,
    );
    assert!(err.contains("control characters") && !bad(&err), "{err:?}");
    // Errors that quote data are sanitized too.
    let out = env.run("x", &["list", "--queue", "\u{1b}[2Jnope"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!bad(&err) && err.contains("␛[2Jnope"), "{err:?}");
}

#[test]
fn a_bad_user_name_is_refused() {
    let env = Env::new();
    let err = env.fails("bad name", &["list"], 1);
    assert!(err.contains("CASELOAD_USER"), "{err}");
    let err = env.fails("a", &["--user", "x\u{1b}y", "list"], 1);
    assert!(err.contains("--user"), "{err}");
}

#[test]
fn a_missing_directory_is_named() {
    let env = Env::new();
    let err = env.fails("a", &["--db", "/nonexistent/dir/q.db", "list"], 1);
    assert!(err.contains("/nonexistent/dir"), "{err}");
}

trait RawFingerprint {
    fn fingerprint_raw(&self) -> Vec<u8>;
}

impl RawFingerprint for Env {
    fn fingerprint_raw(&self) -> Vec<u8> {
        std::fs::read(&self.db).unwrap()
    }
}

/// Unmounts a FUSE mount when dropped.
struct Mount(std::path::PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("fusermount")
            .arg("-u")
            .arg(&self.0)
            .status();
    }
}

#[test]
fn a_database_on_a_network_filesystem_is_refused() {
    // bindfs gives a real FUSE mount (.ci/run installs it).
    let env = Env::new();
    let src = env.dir.path().join("src");
    let mnt = env.dir.path().join("mnt");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    let status = std::process::Command::new("bindfs")
        .arg(&src)
        .arg(&mnt)
        .status()
        .expect("bindfs is installed (see .ci/run)");
    assert!(status.success(), "bindfs could not mount");
    let _mount = Mount(mnt.clone());
    let db = mnt.join("q.db");
    let err = env.fails("a", &["--db", db.to_str().unwrap(), "init"], 1);
    assert!(
        err.contains("network filesystem (FUSE)") && err.contains("--allow-network-fs"),
        "{err}"
    );
    assert!(!src.join("q.db").exists(), "nothing was created");
    env.ok(
        "a",
        &["--db", db.to_str().unwrap(), "--allow-network-fs", "init"],
    );
}
