//! `caseload doctor` of the real binary: one line per check with ✔/✘ and the fix, exit 0
//! when all pass and 1 otherwise, `--json`; SQLite files (healthy, and with each problem
//! made real: a shared directory without setgid, another user's -wal/-shm, a nearly full
//! filesystem, an old schema, a damaged page) and PostgreSQL (before and after init, and
//! a role without rights).

use crate::support;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::process::Output;

use crate::support::cli::Env;

const SQLITE_CHECKS: [&str; 11] = [
    "database",
    "file",
    "directory",
    "setgid",
    "-wal/-shm",
    "umask",
    "filesystem",
    "free space",
    "WAL",
    "schema",
    "quick_check",
];

/// Runs doctor with the umask fixed at `umask`.
fn doctor(env: &Env, extra: &[&str], umask: u32) -> Output {
    let mut args = vec!["doctor"];
    args.extend_from_slice(extra);
    let mut c = env.command("doc", &args);
    // SAFETY: umask is async-signal-safe and cannot fail.
    unsafe {
        c.pre_exec(move || {
            libc::umask(umask as libc::mode_t);
            Ok(())
        });
    }
    c.output().unwrap()
}

/// The check lines, as (passed, name, whole line).
fn lines(out: &Output) -> Vec<(bool, String, String)> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let ok = l.starts_with('✔');
            assert!(ok || l.starts_with('✘'), "every line is a check: {l}");
            let name = l[l.find(' ').unwrap() + 1..]
                .split(':')
                .next()
                .unwrap()
                .to_string();
            (ok, name, l.to_string())
        })
        .collect()
}

fn failed(out: &Output) -> Vec<String> {
    lines(out)
        .into_iter()
        .filter(|(ok, _, _)| !ok)
        .map(|(_, name, _)| name)
        .collect()
}

fn line<'a>(all: &'a [(bool, String, String)], name: &str) -> &'a str {
    &all.iter().find(|(_, n, _)| n == name).unwrap().2
}

/// An Env whose database lies on a filesystem of its own with plenty of room (a tmpfs,
/// when root): the checks then do not depend on how full the machine's disk is.
fn roomy_env() -> (Env, Option<support::fault::Mount>) {
    let mut env = Env::new();
    if !support::fault::is_root() {
        return (env, None);
    }
    let mnt = support::fault::Mount::tmpfs(&env.dir.path().join("fs"), "64M");
    let dir = mnt.dir.join("data");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    env.db = dir.join("queue.db");
    (env, Some(mnt))
}

#[test]
fn a_healthy_file_passes_every_check() {
    let (env, _mnt) = roomy_env();
    env.ok("producer", &["init"]);
    env.add("one");
    let out = doctor(&env, &[], 0o002);
    let all = lines(&out);
    let names: Vec<&str> = all.iter().map(|(_, n, _)| n.as_str()).collect();
    assert_eq!(names, SQLITE_CHECKS);
    assert!(failed(&out).is_empty(), "{all:#?}");
    assert_eq!(out.status.code(), Some(0));
    assert!(line(&all, "database").contains("from CASELOAD_DB"));
    assert!(line(&all, "quick_check").ends_with(": ok"));
    let json: serde_json::Value =
        serde_json::from_slice(&doctor(&env, &["--json"], 0o002).stdout).unwrap();
    assert_eq!(json["ok"], true);
    assert_eq!(json["backend"], "sqlite");
    assert_eq!(
        json["checks"].as_array().unwrap().len(),
        SQLITE_CHECKS.len()
    );
}

#[test]
fn doctor_names_the_config_file_that_set_db_and_a_missing_file() {
    let (env, _mnt) = roomy_env();
    let cfg = env.dir.path().join("config").join("caseload");
    std::fs::create_dir_all(&cfg).unwrap();
    let db = env.db.with_file_name("elsewhere.db");
    std::fs::write(
        cfg.join("config.toml"),
        format!("db = \"{}\"\n", db.display()),
    )
    .unwrap();
    let out = env
        .command("doc", &["doctor"])
        .env_remove("CASELOAD_DB")
        .output()
        .unwrap();
    let all = lines(&out);
    assert!(
        line(&all, "database")
            .contains(&format!("db set in {}", cfg.join("config.toml").display())),
        "{all:#?}"
    );
    assert_eq!(failed(&out), ["file"], "{all:#?}");
    assert!(line(&all, "file").contains("fix: create it: `caseload init`"));
    assert_eq!(out.status.code(), Some(1));
    assert!(!db.exists(), "doctor creates nothing");
}

#[test]
fn an_old_schema_and_a_damaged_page_are_found() {
    let (env, _mnt) = roomy_env();
    {
        let conn = rusqlite::Connection::open(&env.db).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL").unwrap();
        caseload::store::migrate::create_at_version(&conn, 1).unwrap();
    }
    let out = doctor(&env, &[], 0o002);
    let all = lines(&out);
    assert_eq!(failed(&out), ["schema"], "{all:#?}");
    let schema = line(&all, "schema");
    assert!(
        schema.contains("older") && schema.contains("caseload init"),
        "{schema}"
    );
    let v: i64 = rusqlite::Connection::open(&env.db)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 1, "doctor changes nothing");

    // A damaged index page (a file of many items, folded out of its WAL).
    let (env, _mnt2) = roomy_env();
    let csv = env.dir.path().join("rows.csv");
    let mut text = String::from("title,body\n");
    for i in 0..400 {
        text.push_str(&format!("row {i},{}\n", "x".repeat(300)));
    }
    std::fs::write(&csv, text).unwrap();
    env.ok("p", &["init"]);
    env.ok("p", &["import", csv.to_str().unwrap()]);
    let conn = rusqlite::Connection::open(&env.db).unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    let page: i64 = conn
        .query_row(
            "SELECT rootpage FROM sqlite_master WHERE name = 'items_take'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    drop(conn);
    let mut bytes = std::fs::read(&env.db).unwrap();
    let at = (page as usize - 1) * 4096;
    for b in &mut bytes[at + 8..at + 4000] {
        *b = 0x5A;
    }
    std::fs::write(&env.db, bytes).unwrap();
    let out = doctor(&env, &[], 0o002);
    let all = lines(&out);
    assert_eq!(failed(&out), ["quick_check"], "{all:#?}");
    assert!(line(&all, "quick_check").contains("caseload backup"));
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn permission_and_space_problems_each_get_a_fix() {
    if support::fault::skip_unless_root("permission_and_space_problems_each_get_a_fix") {
        return;
    }
    let users = support::fault::Users::create("cdr", &[("oth", false)]);
    let (other, _) = users.ids(&users.names[0]);
    let mut env = Env::new();
    let mnt = support::fault::Mount::tmpfs(&env.dir.path().join("small"), "4M");
    let dir = mnt.dir.join("shared");
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::chown(&dir, None, Some(users.gid())).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o775)).unwrap();
    env.db = dir.join("q.db");
    env.ok("producer", &["init"]);
    env.add("one");
    std::fs::set_permissions(&env.db, std::fs::Permissions::from_mode(0o660)).unwrap();
    env.ok("x", &["list"]);
    for f in ["q.db-wal", "q.db-shm"] {
        let f = dir.join(f);
        std::os::unix::fs::chown(&f, Some(other), None).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    mnt.fill_to("fill", 200 * 1024);
    let out = doctor(&env, &[], 0o022);
    let all = lines(&out);
    assert_eq!(
        failed(&out),
        ["setgid", "-wal/-shm", "umask", "free space"],
        "{all:#?}"
    );
    assert!(line(&all, "setgid").contains(&format!("chmod g+s {}", dir.display())));
    let sidecars = line(&all, "-wal/-shm");
    assert!(
        sidecars.contains(&users.names[0]) && sidecars.contains("chown --reference="),
        "{sidecars}"
    );
    assert!(line(&all, "umask").contains("umask 002"));
    let space = line(&all, "free space");
    assert!(
        space.contains(&mnt.dir.display().to_string()) && space.contains("block size"),
        "{space}"
    );
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value =
        serde_json::from_slice(&doctor(&env, &["--json"], 0o022).stdout).unwrap();
    assert_eq!(json["ok"], false);
    let fixes = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ok"] == false)
        .all(|c| c["fix"].as_str().is_some_and(|f| !f.is_empty()));
    assert!(fixes, "every failed check has a fix: {json}");
}

#[test]
fn postgres_reachability_schema_rights_and_clock() {
    let Some(pg) = support::backend::PgBackend::from_env() else {
        return;
    };
    let env = Env::new();
    let run = |url: &str| {
        env.command("doc", &["--db", url, "doctor"])
            .output()
            .unwrap()
    };
    let out = run(&pg.url);
    let all = lines(&out);
    let names: Vec<&str> = all.iter().map(|(_, n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "database", "server", "writable", "version", "schema", "clock"
        ]
    );
    assert_eq!(failed(&out), ["schema"]);
    assert!(line(&all, "schema").contains("caseload init"));
    assert_eq!(out.status.code(), Some(1));

    env.ok("boss", &["--db", &pg.url, "init"]);
    let out = run(&pg.url);
    let all = lines(&out);
    assert!(failed(&out).is_empty(), "{all:#?}");
    assert!(line(&all, "rights").contains("may read and write"));
    assert!(line(&all, "clock").contains("the server's clock"));
    assert!(line(&all, "search").contains("folds case as SQLite does"));
    assert_eq!(out.status.code(), Some(0));

    // A role that may only read.
    let role = format!("{}_ro", pg.schema);
    let mut admin = pg.admin();
    admin
        .batch_execute(&format!(
            "CREATE ROLE {role} NOLOGIN; GRANT USAGE ON SCHEMA {s} TO {role}; \
             GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {role};",
            s = pg.schema
        ))
        .unwrap();
    let url = format!("{}%20-c%20role%3D{role}", pg.url);
    let out = run(&url);
    let all = lines(&out);
    assert_eq!(failed(&out), ["rights"], "{all:#?}");
    let rights = line(&all, "rights");
    assert!(
        rights.contains("INSERT on items")
            && rights.contains("UPDATE on items")
            && rights.contains("GRANT"),
        "{rights}"
    );
    let json: serde_json::Value = serde_json::from_slice(
        &env.command("doc", &["--db", &url, "doctor", "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(json["backend"], "postgres");
    assert!(!json["database"].as_str().unwrap().contains("password"));
    admin
        .batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE {role};"))
        .unwrap();

    // An unreachable server is one failed check, named.
    let out = run("postgres://nobody@127.0.0.1:1/none");
    assert_eq!(failed(&out), ["server"]);
    assert!(lines(&out)[1].2.contains("127.0.0.1:1"));
}

/// A server that takes no writes (a standby after a failover; here a session read-only by
/// default, which refuses writes the same way): reads work, every change is refused in one
/// line saying what to do, and doctor fails with the same fix (issue 32 §3).
#[test]
fn postgres_a_read_only_server_lists_but_refuses_changes_in_one_line() {
    let Some(pg) = support::backend::PgBackend::from_env() else {
        return;
    };
    let env = Env::new();
    env.ok("boss", &["--db", &pg.url, "init"]);
    env.ok(
        "boss",
        &["--db", &pg.url, "add", "--title", "Printer on fire"],
    );
    let ro = format!("{}%20-c%20default_transaction_read_only%3Don", pg.url);
    assert!(
        env.ok("boss", &["--db", &ro, "list"])
            .contains("Printer on fire")
    );
    let out = env
        .command("boss", &["--db", &ro, "claim"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("point caseload at the primary"), "{err}");
    assert!(err.contains("target_session_attrs=read-write"), "{err}");
    let doc = env
        .command("doc", &["--db", &ro, "doctor"])
        .output()
        .unwrap();
    assert_eq!(failed(&doc), ["writable"]);
    assert!(line(&lines(&doc), "writable").contains("target_session_attrs=read-write"));
    assert_eq!(doc.status.code(), Some(1));
}

/// A schema whose search folds ASCII only (restored from a database whose own lower()
/// folded, into one whose `LC_CTYPE` is C: simulated by putting that function back):
/// doctor says so and that `caseload init` repairs it; init does (it chooses a collation
/// of this server); doctor then passes.
#[test]
fn postgres_doctor_tells_when_search_folds_only_ascii_and_init_repairs_it() {
    let Some(base) = support::backend::pg_url_or_skip() else {
        return;
    };
    let pg = support::backend::PgBackend::on(support::backend::database_with_ctype_c(&base));
    let env = Env::new();
    env.ok("boss", &["--db", &pg.url, "init"]);
    let doctor = || {
        env.command("doc", &["--db", &pg.url, "doctor"])
            .output()
            .unwrap()
    };
    let out = doctor();
    assert!(failed(&out).is_empty(), "{:#?}", lines(&out));
    assert!(line(&lines(&out), "search").contains("LC_CTYPE C)"));
    pg.admin()
        .batch_execute(
            "CREATE OR REPLACE FUNCTION caseload_fold(t text) RETURNS text \
             LANGUAGE sql IMMUTABLE AS $$ SELECT lower(t) $$",
        )
        .unwrap();
    let out = doctor();
    assert_eq!(failed(&out), ["search"], "{:#?}", lines(&out));
    let all = lines(&out);
    let search = line(&all, "search");
    assert!(
        search.contains("ASCII letters only") && search.contains("caseload init"),
        "{search}"
    );
    assert_eq!(out.status.code(), Some(1));
    let init = env
        .command("boss", &["--db", &pg.url, "init"])
        .output()
        .unwrap();
    assert!(init.status.success(), "{init:?}");
    assert!(
        init.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    let out = doctor();
    assert!(failed(&out).is_empty(), "{:#?}", lines(&out));
}

/// Tables restored without their grants (`pg_restore --no-acl`): a staff role cannot use
/// the schema. doctor and every other command say to re-apply the grants, never to run
/// `caseload init` (issue 32 §5).
#[test]
fn postgres_lost_grants_are_named_not_mistaken_for_a_missing_database() {
    let Some(pg) = support::backend::PgBackend::from_env() else {
        return;
    };
    let env = Env::new();
    env.ok("boss", &["--db", &pg.url, "init"]);
    let role = format!("{}_nogrants", pg.schema);
    let mut admin = pg.admin();
    admin
        .batch_execute(&format!("CREATE ROLE {role} NOLOGIN"))
        .unwrap();
    let url = format!("{}%20-c%20role%3D{role}", pg.url);
    let out = env
        .command("doc", &["--db", &url, "doctor"])
        .output()
        .unwrap();
    let all = lines(&out);
    assert!(failed(&out).contains(&"schema".to_string()), "{all:#?}");
    let schema = line(&all, "schema");
    assert!(
        schema.contains("re-apply the grants")
            && schema.contains(&format!("GRANT USAGE ON SCHEMA {}", pg.schema))
            && schema.contains("pg_restore --no-acl"),
        "{schema}"
    );
    let err = env.fails("alice", &["--db", &url, "list"], 1);
    assert!(
        err.contains("re-apply the grants") && err.contains(&pg.schema),
        "{err}"
    );
    admin
        .batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE {role};"))
        .unwrap();
}

/// Doctor says whether search uses pg_trgm's index; a schema without it where the
/// extension is installed (made before it was) fails with the fix, `caseload init`
/// builds the index, and doctor passes again (issue 32 §4).
#[test]
fn doctor_says_whether_search_uses_the_trigram_index() {
    let Some(pg) = support::backend::PgBackend::from_env() else {
        return;
    };
    let _ = pg
        .admin()
        .batch_execute("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public");
    let env = Env::new();
    let run = |url: &str| {
        env.command("doc", &["--db", url, "doctor"])
            .output()
            .unwrap()
    };
    env.ok("boss", &["--db", &pg.url, "init"]);
    let out = run(&pg.url);
    let all = lines(&out);
    assert!(failed(&out).is_empty(), "{all:#?}");
    assert!(
        line(&all, "search index").contains("trigram index"),
        "{all:#?}"
    );
    pg.admin()
        .batch_execute("DROP FUNCTION caseload_search_row() CASCADE; DROP INDEX item_search_trgm")
        .unwrap();
    let out = run(&pg.url);
    let all = lines(&out);
    assert_eq!(failed(&out), ["search index"]);
    assert!(
        line(&all, "search index").contains("caseload init"),
        "{all:#?}"
    );
    let init = env
        .command("boss", &["--db", &pg.url, "init"])
        .output()
        .unwrap();
    assert!(init.status.success());
    assert!(
        String::from_utf8_lossy(&init.stderr).contains("search index built"),
        "{init:?}"
    );
    let out = run(&pg.url);
    assert!(failed(&out).is_empty(), "{:#?}", lines(&out));
}
