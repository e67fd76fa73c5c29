//! Nothing an attacker can steer (issue 10): backups that never write through a planted
//! link, hostile names and paths made inert, an empty database setting refused, usage
//! errors as one line.

use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::os::unix::process::CommandExt;
use std::process::Output;

use crate::support;
use crate::support::cli::{Env, explain};
use crate::support::fault::Users;

#[test]
fn backup_refuses_a_destination_that_is_a_link() {
    let env = Env::init("producer");
    env.add("one");
    let victim = env.dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = env.dir.path().join("copy.db");
    symlink(&victim, &link).unwrap();
    let err = env.fails("x", &["backup", link.to_str().unwrap()], 1);
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A dangling link is refused too (a plain open would create its target).
    let dangling = env.dir.path().join("dangling.db");
    let target = env.dir.path().join("created-by-link");
    symlink(&target, &dangling).unwrap();
    let err = env.fails("x", &["backup", dangling.to_str().unwrap()], 1);
    assert!(err.contains("symbolic link"), "{err}");
    assert!(!target.exists(), "nothing was created through the link");
}

#[test]
fn backup_never_writes_through_planted_temporary_names() {
    let env = Env::init("producer");
    env.add("one");
    let dir = env.dir.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o2777)).unwrap();
    let victim = env.dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    // The names a predictable temporary file would take, for the next PIDs, each a link
    // to the victim (what a member of the group could plant in a 2775 directory).
    let me = std::process::id();
    for pid in me..me + 2000 {
        symlink(&victim, dir.join(format!(".copy.db.partial-{pid}"))).unwrap();
        symlink(&victim, dir.join(format!(".copy.db.partial-{pid}-journal"))).unwrap();
    }
    let dest = dir.join("copy.db");
    let out = env.ok("x", &["backup", dest.to_str().unwrap()]);
    assert!(out.contains("Backed up to"), "{out}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let meta = std::fs::symlink_metadata(&dest).unwrap();
    assert!(
        meta.file_type().is_file(),
        "the backup is a file of its own"
    );
    assert_eq!(
        meta.mode() & 0o777,
        0o600,
        "only its owner may read the copy"
    );
    // Nothing else is left behind: only the planted links and the copy.
    let extra: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "copy.db" && !n.starts_with(".copy.db.partial-"))
        .collect();
    assert!(extra.is_empty(), "left behind: {extra:?}");
    env.ok("x", &["--db", dest.to_str().unwrap(), "check"]);
}

#[test]
fn usage_errors_are_one_line_naming_the_help_to_read() {
    let env = Env::init("alice");
    let cases: &[(&[&str], &str)] = &[
        (&["frobnicate"], "(see caseload --help)"),
        (&["fail", "1"], "(see caseload fail --help)"),
        (
            &["list", "--state", "sideways"],
            "(see caseload list --help)",
        ),
        (
            &["--db", "/x.db", "user", "set", "x", "--role", "king"],
            "(see caseload user set --help)",
        ),
        (
            &["queue", "set", "default"],
            "(see caseload queue set --help)",
        ),
        (&["show", "abc"], "(see caseload show --help)"),
    ];
    for (args, see) in cases {
        let err = env.fails("alice", args, 2);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("caseload: "), "{args:?}: {err}");
        assert!(err.trim_end().ends_with(see), "{args:?}: {err}");
    }
}

#[test]
fn an_empty_database_setting_is_refused_not_replaced_by_the_default() {
    let env = Env::new();
    let err = env.fails("alice", &["--db", "", "init"], 1);
    assert!(err.contains("--db is empty"), "{err}");
    let out = env
        .command("alice", &["init"])
        .env("CASELOAD_DB", "")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("CASELOAD_DB is set but empty"), "{err}");
    // Nothing was created in the per-user default location.
    assert!(!env.dir.path().join("data").exists());
}

#[test]
fn lookalike_user_and_queue_names_are_refused() {
    let env = Env::new();
    env.ok("alice", &["init"]);
    let before = env.fingerprint();
    for bad in ["b\u{200B}ob", "bob\u{202E}", "\u{2066}bob", "b\u{FEFF}ob"] {
        let err = env.fails(bad, &["list"], 1);
        assert!(err.contains("invisible character"), "{err}");
        let err = env.fails(
            "alice",
            &["add", "--title", "t", "--queue", bad, "--create-queue"],
            1,
        );
        assert!(err.contains("invisible character"), "{err}");
        let err = env.fails("alice", &["queue", "set", bad, "--lock-seconds", "60"], 1);
        assert!(err.contains("invisible character"), "{err}");
        let err = env.fails("alice", &["user", "set", bad, "--role", "staff"], 1);
        assert!(err.contains("invisible character"), "{err}");
    }
    assert_eq!(env.fingerprint(), before);
}

#[test]
fn paths_echoed_on_success_and_the_log_are_sanitized() {
    let env = Env::new();
    let hostile = env.dir.path().join("q\u{1b}]0;owned\u{7}\u{202E}.db");
    let shown = env.ok("alice", &["--db", hostile.to_str().unwrap(), "init"]);
    let copy = env.dir.path().join("c\u{1b}[2J.db");
    let backed = env.ok(
        "alice",
        &[
            "--db",
            hostile.to_str().unwrap(),
            "backup",
            copy.to_str().unwrap(),
        ],
    );
    let rows = env.dir.path().join("rows\u{1b}[31m.jsonl");
    std::fs::write(&rows, "{\"title\": \"t\"}\n").unwrap();
    let imported = env.ok(
        "alice",
        &[
            "--db",
            hostile.to_str().unwrap(),
            "import",
            rows.to_str().unwrap(),
        ],
    );
    for out in [&shown, &backed, &imported] {
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\u{202E}'),
            "{out:?}"
        );
        assert!(out.contains('␛'), "the escape is shown, not sent: {out:?}");
    }
    // A failing command logs its error, hostile path included: the log shows it, inert.
    let missing = env.dir.path().join("no\u{1b}]0;owned\u{7}\u{202E}/q.db");
    env.fails("alice", &["--db", missing.to_str().unwrap(), "list"], 1);
    let log = std::fs::read_to_string(env.dir.path().join("state/caseload/caseload.log")).unwrap();
    assert!(
        log.contains("command failed") && log.contains("no␛]0;owned␇<U+202E>"),
        "{log}"
    );
    assert!(
        !log.contains('\u{1b}') && !log.contains('\u{7}') && !log.contains('\u{202E}'),
        "{log:?}"
    );
}

/// Runs the binary as OS user `name` with umask 002 (the README's shared setup), with
/// `CASELOAD_USER` set to `as_name`.
fn run_as(env: &Env, users: &Users, name: &str, as_name: &str, args: &[&str]) -> Output {
    let (uid, gid) = users.ids(name);
    let mut c = env.command(as_name, args);
    c.uid(uid).gid(gid);
    // SAFETY: umask is async-signal-safe and touches only the child.
    unsafe {
        c.pre_exec(|| {
            libc::umask(0o002);
            Ok(())
        });
    }
    c.output().expect("run caseload")
}

#[track_caller]
fn ok_as(env: &Env, users: &Users, name: &str, as_name: &str, args: &[&str]) -> String {
    let out = run_as(env, users, name, as_name, args);
    assert!(
        out.status.success(),
        "{}",
        explain(name, args, &out, "exit 0")
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[track_caller]
fn refused_as(env: &Env, users: &Users, name: &str, as_name: &str, args: &[&str]) -> String {
    let out = run_as(env, users, name, as_name, args);
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        explain(name, args, &out, "exit 5")
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err
}

/// The attack of issue 10 on the documented shared deployment (a 2775 group directory):
/// a staff member borrowing a supervisor's name, by flag or environment, is refused and
/// changes nothing; a name bound to a login by a supervisor works for that login only;
/// every change of a role, a binding or a queue is audited with the real login.
#[test]
fn a_name_is_bound_to_the_real_os_user() {
    if support::fault::skip_unless_root("a_name_is_bound_to_the_real_os_user") {
        return;
    }
    let users = Users::create("sb", &[("sup", true), ("bob", true), ("svc", true)]);
    let (sup, bob, svc) = (&users.names[0], &users.names[1], &users.names[2]);
    let mut env = Env::new();
    std::fs::set_permissions(env.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = env.dir.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(0), Some(users.gid())).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o2775)).unwrap();
    env.db = dir.join("q.db");
    ok_as(&env, &users, sup, sup, &["init"]);
    // As the README says: the group may write the file and its -wal/-shm.
    for f in std::fs::read_dir(&dir).unwrap() {
        std::fs::set_permissions(f.unwrap().path(), std::fs::Permissions::from_mode(0o660))
            .unwrap();
    }
    ok_as(&env, &users, sup, sup, &["add", "--title", "first"]);
    let before = env.fingerprint();

    // bob, staff, borrows sup's name: by --user, and by CASELOAD_USER.
    let err = refused_as(
        &env,
        &users,
        bob,
        bob,
        &["--user", sup, "user", "set", bob, "--role", "supervisor"],
    );
    assert!(
        err.contains(&format!("{bob} may not act as {sup}")),
        "{err}"
    );
    assert!(err.contains(&format!("--login {bob}")), "{err}");
    let err = refused_as(
        &env,
        &users,
        bob,
        sup,
        &["user", "set", bob, "--role", "supervisor"],
    );
    assert!(err.contains("may not act as"), "{err}");
    let err = refused_as(
        &env,
        &users,
        bob,
        sup,
        &["queue", "set", "default", "--paused", "true"],
    );
    assert!(err.contains("may not act as"), "{err}");
    refused_as(&env, &users, bob, sup, &["claim"]);
    // As himself he is staff.
    let err = refused_as(
        &env,
        &users,
        bob,
        bob,
        &["user", "set", bob, "--role", "supervisor"],
    );
    assert!(err.contains("supervisor only"), "{err}");
    refused_as(
        &env,
        &users,
        bob,
        bob,
        &["user", "set", "importer", "--login", bob],
    );
    assert_eq!(env.fingerprint(), before, "nothing changed");

    // sup binds the bot's name to the service account svc: svc may use it, bob may not.
    ok_as(
        &env,
        &users,
        sup,
        sup,
        &["user", "set", "importer", "--login", svc],
    );
    ok_as(
        &env,
        &users,
        svc,
        "importer",
        &["add", "--title", "from the bot"],
    );
    refused_as(&env, &users, bob, "importer", &["add", "--title", "forged"]);
    // Item history says who really acted when the name is not the login's own.
    let (id, _) = {
        let v: serde_json::Value =
            serde_json::from_str(&ok_as(&env, &users, svc, "importer", &["claim", "--json"]))
                .unwrap();
        (v["id"].as_i64().unwrap(), v["lock_token"].as_i64().unwrap())
    };
    let shown = ok_as(&env, &users, sup, sup, &["show", &id.to_string()]);
    assert!(shown.contains(&format!("importer (as {svc})")), "{shown}");

    // Role and queue changes are audited: who, the real login, old → new.
    ok_as(
        &env,
        &users,
        sup,
        sup,
        &["user", "set", bob, "--role", "supervisor"],
    );
    ok_as(
        &env,
        &users,
        sup,
        sup,
        &["queue", "set", "default", "--lock-seconds", "600"],
    );
    let mine = ok_as(&env, &users, sup, sup, &["history"]);
    assert!(
        mine.contains(&format!("{sup}  login importer: - → {svc}")),
        "{mine}"
    );
    assert!(
        mine.contains(&format!("{sup}  role {bob}: staff → supervisor")),
        "{mine}"
    );
    assert!(
        mine.contains("queue default:") && mine.contains("lock_seconds=600"),
        "{mine}"
    );
    let about_bob = ok_as(&env, &users, bob, bob, &["history"]);
    assert!(
        about_bob.contains("role") && about_bob.contains("staff → supervisor"),
        "{about_bob}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&ok_as(&env, &users, sup, sup, &["history", "--json"])).unwrap();
    let role = v
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "role")
        .expect("the role change is in history --json");
    assert_eq!(role["real_user"], sup.as_str());
    assert_eq!(
        (role["old"].as_str(), role["new"].as_str()),
        (Some("staff"), Some("supervisor"))
    );
    // Now a supervisor, bob still cannot act as sup.
    refused_as(
        &env,
        &users,
        bob,
        sup,
        &["user", "set", sup, "--role", "staff"],
    );
}

/// The least-privilege grants of the README's "What the database user needs", for
/// `schema`, to the group role `staff`.
pub(crate) fn least_privilege_sql(schema: &str, staff: &str) -> String {
    format!(
        "GRANT USAGE ON SCHEMA {schema} TO {staff};
         GRANT SELECT, INSERT, UPDATE ON {schema}.items, {schema}.item_counts TO {staff};
         GRANT SELECT, INSERT ON {schema}.events, {schema}.comments TO {staff};
         GRANT SELECT, INSERT, DELETE ON {schema}.item_keys TO {staff};
         GRANT SELECT, INSERT, UPDATE ON {schema}.item_pairs TO {staff};
         GRANT SELECT ON {schema}.queues, {schema}.users, {schema}.audit, {schema}.holds,
                         {schema}.figure_days, {schema}.queue_totals, {schema}.due_hours, {schema}.queue_fields, {schema}.fields_version, {schema}.queue_texts, {schema}.queue_sla,
                         {schema}.user_queues, {schema}.item_search, {schema}.item_search_pending,
                         {schema}.caseload_schema TO {staff};
         GRANT INSERT (name) ON {schema}.queues TO {staff};
         GRANT INSERT (name, last_seen), UPDATE (last_seen) ON {schema}.users TO {staff};"
    )
}

/// Database roles made for one test; dropped (with their grants) when it ends.
struct PgRoles {
    admin_url: String,
    names: Vec<String>,
}

impl Drop for PgRoles {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.admin_url, postgres::NoTls) {
            let all = self.names.join(", ");
            let _ = c.batch_execute(&format!("DROP OWNED BY {all}; DROP ROLE IF EXISTS {all}"));
        }
    }
}

/// On PostgreSQL with per-person database roles holding only the README's grants, a
/// staff role cannot make itself supervisor: not through caseload under a borrowed
/// name, and not from a plain SQL session (psql) by writing the tables or calling the
/// functions, not even with a temporary table shadowing `users`. Its everyday work goes
/// through; the supervisor's change is audited with the server's session role.
#[test]
fn postgres_staff_roles_cannot_change_roles_or_queues_even_with_sql() {
    let Some(b) = support::backend::PgBackend::from_env() else {
        return;
    };
    let tag = std::process::id();
    let (staff, sup, bob) = (
        format!("cl_sec_staff_{tag}"),
        format!("cl_sec_sup_{tag}"),
        format!("cl_sec_bob_{tag}"),
    );
    let mut admin = b.admin();
    let roles = PgRoles {
        admin_url: b.base_url.clone(),
        names: vec![sup.clone(), bob.clone(), staff.clone()],
    };
    let _ = admin.batch_execute(&format!(
        "DROP OWNED BY {sup}, {bob}, {staff}; DROP ROLE IF EXISTS {sup}, {bob}, {staff}"
    ));
    admin
        .batch_execute(&format!(
            "CREATE ROLE {staff} NOLOGIN; CREATE ROLE {sup} LOGIN IN ROLE {staff}; \
             CREATE ROLE {bob} LOGIN IN ROLE {staff};"
        ))
        .unwrap();
    let env = Env::new();
    let as_role = |role: &str| b.url.replacen("://postgres@", &format!("://{role}@"), 1);
    let owner = b.url.clone();
    // With pg_trgm, the schema gets the search index (its trigger, its indexer).
    let _ = admin.batch_execute("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public");
    // The owner (here a superuser) creates the schema; boss is its first supervisor and
    // makes the sup role's own name a supervisor.
    env.ok("boss", &["--db", &owner, "init"]);
    env.ok(
        "boss",
        &["--db", &owner, "user", "set", &sup, "--role", "supervisor"],
    );
    admin
        .batch_execute(&least_privilege_sql(&b.schema, &staff))
        .unwrap();
    let bob_db = as_role(&bob);
    let sup_db = as_role(&sup);

    // bob's everyday work goes through with these grants.
    env.ok(
        &bob,
        &[
            "--db",
            &bob_db,
            "add",
            "--title",
            "t",
            "--queue",
            "new-queue",
            "--create-queue",
        ],
    );
    let v: serde_json::Value =
        serde_json::from_str(&env.ok(&bob, &["--db", &bob_db, "claim", "--json"])).unwrap();
    let id = v["id"].as_i64().unwrap().to_string();
    env.ok(&bob, &["--db", &bob_db, "complete", &id]);
    env.ok(&bob, &["--db", &bob_db, "list", "--state", "all"]);
    // bob imports: the rows are indexed for search beside the import, by bob's own second
    // connection (the README's grants cover it), before the command returns.
    let csv = env.dir.path().join("rows.csv");
    let rows: String = (0..300).map(|i| format!("Row {i} quagga{i}\n")).collect();
    std::fs::write(&csv, format!("title\n{rows}")).unwrap();
    env.ok(&bob, &["--db", &bob_db, "import", csv.to_str().unwrap()]);
    let waiting: i64 = admin
        .query_one(
            &format!("SELECT count(*) FROM {}.item_search_pending", b.schema),
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(waiting, 0, "every imported row indexed when import returns");
    let found = env.ok(&bob, &["--db", &bob_db, "list", "--search", "quagga217"]);
    assert!(found.contains("Row 217 "), "{found}");
    env.ok(&bob, &["--db", &bob_db, "history"]);
    // The figures read the day summary (whole days of a 3-day period), which the
    // completion wrote through the trigger's SECURITY DEFINER function.
    let report = env.ok(
        &bob,
        &["--db", &bob_db, "report", "--by", "person", "--since", "3d"],
    );
    assert!(report.contains(bob.as_str()), "{report}");
    // doctor finds the grants enough.
    let doc = env.run(&bob, &["--db", &bob_db, "doctor"]);
    let doc = String::from_utf8_lossy(&doc.stdout).into_owned();
    let rights = doc
        .lines()
        .find(|l| l.contains("rights"))
        .unwrap_or_default();
    assert!(rights.contains("may read and write"), "{doc}");
    // A grant of an earlier README (INSERT on holds) would let bob forge the figures:
    // doctor says so.
    admin
        .batch_execute(&format!("GRANT INSERT ON holds TO {staff}"))
        .unwrap();
    let doc = env.run(&bob, &["--db", &bob_db, "doctor"]);
    let doc = String::from_utf8_lossy(&doc.stdout).into_owned();
    assert!(
        doc.contains("may also INSERT ON holds") && doc.contains("REVOKE INSERT ON holds"),
        "{doc}"
    );
    admin
        .batch_execute(&format!("REVOKE INSERT ON holds FROM {staff}"))
        .unwrap();

    // Through caseload: a borrowed name is refused, his own is staff.
    let err = env.fails(
        &sup,
        &["--db", &bob_db, "user", "set", &bob, "--role", "supervisor"],
        5,
    );
    assert!(
        err.contains(&format!("{bob} may not act as {sup}")),
        "{err}"
    );
    env.fails(
        "boss",
        &[
            "--db", &bob_db, "queue", "set", "default", "--paused", "true",
        ],
        5,
    );
    let err = env.fails(
        &bob,
        &["--db", &bob_db, "user", "set", &bob, "--role", "supervisor"],
        5,
    );
    assert!(err.contains("supervisor only"), "{err}");

    // Through SQL, as psql would: every way in is refused by the server.
    let mut psql = postgres::Client::connect(&bob_db, postgres::NoTls).unwrap();
    let attempts = [
        "UPDATE users SET role = 'supervisor' WHERE name = current_user".to_string(),
        format!("INSERT INTO users (name, role) VALUES ('{bob}x', 'supervisor')"),
        format!("UPDATE users SET login = '{bob}' WHERE name = 'boss'"),
        "UPDATE queues SET paused = true".to_string(),
        "INSERT INTO queues (name, paused) VALUES ('q2', true)".to_string(),
        "INSERT INTO audit (at, actor, real_user, kind, subject, new_value) \
         VALUES (0, 'x', 'x', 'role', 'x', '1')"
            .to_string(),
        "DELETE FROM events".to_string(),
        format!("SELECT caseload_set_role('{sup}', '{bob}', 'supervisor')"),
        format!("SELECT caseload_set_role('{bob}', '{bob}', 'supervisor')"),
        format!("SELECT caseload_set_login('boss', 'boss', '{bob}')"),
        "SELECT caseload_set_queue('boss', 'default', 1, 0, NULL, true, 'due', NULL, 60, 0, 0, 0)"
            .to_string(),
        "SELECT caseload_delete_queue('boss', 'new-queue', NULL)".to_string(),
        "DELETE FROM queues WHERE name = 'new-queue'".to_string(),
        // The audit trail of items: another's name, or the figures' table.
        "INSERT INTO comments (item_id, at, author, os_user, text) \
         VALUES (1, 0, 'boss', 'boss', 'forged')"
            .to_string(),
        "INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
         VALUES (1, 0, 'boss', 'boss', 'unlocked', '{}')"
            .to_string(),
        format!(
            "INSERT INTO holds (ended, event_id, item_id, queue, holder, started, how) \
             VALUES (0, 1, 1, 'default', '{bob}', 0, 'completed')"
        ),
    ];
    for sql in &attempts {
        let e = psql.batch_execute(sql).expect_err(sql);
        assert_eq!(
            e.code(),
            Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE),
            "{sql}: {e}"
        );
    }
    // Under his own name, what bob writes in raw SQL carries the server's who and when,
    // whatever he gives: his database role and the server's clock.
    psql.batch_execute(&format!(
        "INSERT INTO comments (item_id, at, author, os_user, text) \
         VALUES ({id}, 0, '{bob}', 'boss', 'dated 1970'); \
         INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
         VALUES ({id}, 0, '{bob}', 'boss', 'noted', '{{}}')"
    ))
    .unwrap();
    let now_ms: i64 = admin
        .query_one(
            "SELECT floor(extract(epoch FROM now()) * 1000)::bigint",
            &[],
        )
        .unwrap()
        .get(0);
    for table in ["comments", "events"] {
        let row = admin
            .query_one(
                &format!("SELECT at, os_user FROM {table} ORDER BY id DESC LIMIT 1"),
                &[],
            )
            .unwrap();
        let (at, os_user): (i64, String) = (row.get(0), row.get(1));
        assert_eq!(os_user, bob.as_str(), "{table}");
        assert!(
            (now_ms - at).abs() < 60_000,
            "{table}: at {at}, now {now_ms}"
        );
    }
    let shown = env.ok(&bob, &["--db", &bob_db, "show", &id]);
    assert!(
        shown.contains("dated 1970") && !shown.contains("1970-01-01") && !shown.contains("boss"),
        "{shown}"
    );
    // A temporary table named users that says bob is a supervisor changes nothing: the
    // functions read the schema's own table.
    psql.batch_execute(&format!(
        "CREATE TEMP TABLE users (name TEXT, role TEXT, last_seen BIGINT, login TEXT); \
         INSERT INTO pg_temp.users VALUES ('{bob}', 'supervisor', NULL, NULL); \
         SET search_path = pg_temp, {};",
        b.schema
    ))
    .unwrap();
    let e = psql
        .batch_execute(&format!(
            "SELECT {}.caseload_set_role('{bob}', '{bob}', 'supervisor')",
            b.schema
        ))
        .unwrap_err();
    assert_eq!(
        e.code(),
        Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE),
        "{e}"
    );
    drop(psql);
    let role: String = admin
        .query_one("SELECT role FROM users WHERE name = $1", &[&bob])
        .map(|r| r.get(0))
        .unwrap_or_else(|_| "staff".into());
    assert_eq!(role, "staff");

    // The supervisor's own role may; the audit names the session's role.
    env.ok(
        &sup,
        &["--db", &sup_db, "user", "set", &bob, "--role", "supervisor"],
    );
    let v: serde_json::Value =
        serde_json::from_str(&env.ok(&sup, &["--db", &sup_db, "history", "--json"])).unwrap();
    let change = v
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "role" && e["subject"] == bob.as_str())
        .expect("audited");
    assert_eq!(change["real_user"], sup.as_str());
    assert_eq!(change["actor"], sup.as_str());
    // Its time and old value are the server's, read inside the function.
    assert_eq!(
        (change["old"].as_str(), change["new"].as_str()),
        (Some("staff"), Some("supervisor"))
    );
    let at = chrono::DateTime::parse_from_rfc3339(change["at"].as_str().unwrap()).unwrap();
    assert!(
        (chrono::Utc::now().timestamp_millis() - at.timestamp_millis()).abs() < 60_000,
        "{change}"
    );

    // The queue changes that came later go through the same kind of function: the
    // supervisor's least-privilege role sets a take order, creates, renames and deletes
    // a queue; staff comment on an item with these grants.
    let sup_ok = |args: &[&str]| {
        let mut all = vec!["--db", sup_db.as_str()];
        all.extend_from_slice(args);
        env.ok(&sup, &all)
    };
    sup_ok(&["queue", "set", "new-queue", "--order", "due"]);
    sup_ok(&["queue", "set", "spare", "--create"]);
    sup_ok(&["queue", "rename", "spare", "spare2"]);
    sup_ok(&["queue", "delete", "spare2"]);
    let queues = sup_ok(&["queue", "list", "--json"]);
    assert!(!queues.contains("spare"), "{queues}");
    assert!(queues.contains("\"due\""), "{queues}");
    env.ok(
        &bob,
        &["--db", &bob_db, "comment", &id, "checked with the customer"],
    );
    let shown = env.ok(&bob, &["--db", &bob_db, "show", &id]);
    assert!(shown.contains("checked with the customer"), "{shown}");
    drop(admin);
    drop(roles);
}

/// A staff role whose URL lacks the search path, and which owns a schema of its own
/// (`"$user"` comes first in PostgreSQL's default search path), used to get a private,
/// empty caseload there from `list` or `add`, unseen by the team. Only `init` (and demo,
/// migrate-to, --create) may create caseload's tables; every other command says where it
/// looked and what to set, and creates nothing.
#[test]
fn postgres_a_url_without_the_teams_schema_is_refused_not_a_new_caseload() {
    let Some(b) = support::backend::PgBackend::from_env() else {
        return;
    };
    let tag = std::process::id();
    let (staff, own, plain) = (
        format!("cl_sp_staff_{tag}"),
        format!("cl_sp_own_{tag}"),
        format!("cl_sp_plain_{tag}"),
    );
    let mut admin = b.admin();
    let roles = PgRoles {
        admin_url: b.base_url.clone(),
        names: vec![own.clone(), plain.clone(), staff.clone()],
    };
    let _ = admin.batch_execute(&format!(
        "DROP OWNED BY {own}, {plain}, {staff}; DROP ROLE IF EXISTS {own}, {plain}, {staff}"
    ));
    admin
        .batch_execute(&format!(
            "CREATE ROLE {staff} NOLOGIN; CREATE ROLE {own} LOGIN IN ROLE {staff}; \
             CREATE ROLE {plain} LOGIN IN ROLE {staff}; CREATE SCHEMA {own} AUTHORIZATION {own};"
        ))
        .unwrap();
    let env = Env::new();
    env.ok("boss", &["--db", &b.url, "init"]);
    env.ok("boss", &["--db", &b.url, "add", "--title", "team work"]);
    admin
        .batch_execute(&least_privilege_sql(&b.schema, &staff))
        .unwrap();
    let role_url = |url: &str, role: &str| url.replacen("://postgres@", &format!("://{role}@"), 1);
    let tables_in = |admin: &mut postgres::Client, schema: &str| -> i64 {
        admin
            .query_one(
                "SELECT count(*) FROM pg_tables WHERE schemaname = $1",
                &[&schema],
            )
            .unwrap()
            .get(0)
    };
    for (role, looked) in [
        (&own, format!("schema {own} (the first of the search path")),
        (
            &plain,
            "schema public (the first of the search path".to_string(),
        ),
    ] {
        let url = role_url(&b.base_url, role);
        for args in [
            &["list"][..],
            &["add", "--title", "lost work"],
            &["claim"],
            &["user", "list"],
        ] {
            let mut all = vec!["--db", url.as_str()];
            all.extend_from_slice(args);
            let err = env.fails(role, &all, 1);
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
            assert!(
                err.contains("no caseload database at")
                    && err.contains(&looked)
                    && err.contains(&format!("caseload's tables are in schema {}", b.schema))
                    && err.contains(&format!("options=-c%20search_path%3D{}", b.schema))
                    && !err.contains("no schema has been selected"),
                "{role} {args:?}: {err}"
            );
        }
        assert_eq!(tables_in(&mut admin, role), 0, "nothing created for {role}");
    }
    // With the team's schema named, the same role works on the team's caseload.
    let own_db = role_url(&b.url, &own);
    assert!(
        env.ok(&own, &["--db", &own_db, "list"])
            .contains("team work")
    );
    // A search path naming no schema that exists: every command says so; init too.
    let nowhere = support::backend::with_search_path(&role_url(&b.base_url, &plain), "nowhere");
    let err = env.fails(&plain, &["--db", &nowhere, "list"], 1);
    assert!(
        err.contains("the search path nowhere names no schema that exists"),
        "{err}"
    );
    let err = env.fails(&plain, &["--db", &nowhere, "init"], 1);
    assert!(
        err.contains("names no schema that exists") && err.contains("CREATE SCHEMA"),
        "{err}"
    );
    // init may create a caseload in the role's own schema: asked for, it is no accident.
    env.ok(&own, &["--db", &role_url(&b.base_url, &own), "init"]);
    assert!(tables_in(&mut admin, &own) > 0);
    drop(admin);
    drop(roles);
}

/// On PostgreSQL a record's digest of checked fields (which lets a Complete skip the
/// check) counts only for the database role that wrote it, which the server stamps: a
/// staff role that forges one in raw SQL — over params it broke, in another's name — does
/// not get a colleague's Complete past the check. What the digest cannot stop, and the
/// check at Complete never stopped either: the grants every staff role holds let it finish
/// a broken record in raw SQL outright.
#[test]
fn postgres_a_digest_forged_by_one_staff_role_passes_no_other_roles_complete() {
    let Some(b) = support::backend::PgBackend::from_env() else {
        return;
    };
    let tag = std::process::id();
    let (staff, alice, mallory) = (
        format!("cl_fd_staff_{tag}"),
        format!("cl_fd_alice_{tag}"),
        format!("cl_fd_mallory_{tag}"),
    );
    let mut admin = b.admin();
    let _roles = PgRoles {
        admin_url: b.base_url.clone(),
        names: vec![alice.clone(), mallory.clone(), staff.clone()],
    };
    let _ = admin.batch_execute(&format!(
        "DROP OWNED BY {alice}, {mallory}, {staff}; \
         DROP ROLE IF EXISTS {alice}, {mallory}, {staff}"
    ));
    admin
        .batch_execute(&format!(
            "CREATE ROLE {staff} NOLOGIN; CREATE ROLE {alice} LOGIN IN ROLE {staff}; \
             CREATE ROLE {mallory} LOGIN IN ROLE {staff};"
        ))
        .unwrap();
    let env = Env::new();
    let owner = b.url.clone();
    env.ok("boss", &["--db", &owner, "init"]);
    env.ok(
        "boss",
        &["--db", &owner, "queue", "set", "default", "--create"],
    );
    env.ok(
        "boss",
        &[
            "--db", &owner, "field", "set", "default", "email", "--type", "email",
        ],
    );
    admin
        .batch_execute(&least_privilege_sql(&b.schema, &staff))
        .unwrap();
    let as_role = |role: &str| b.url.replacen("://postgres@", &format!("://{role}@"), 1);
    let (alice_db, mallory_db) = (as_role(&alice), as_role(&mallory));
    let add = |params: &str| -> i64 {
        env.ok(
            &alice,
            &[
                "--db", &alice_db, "add", "--title", "Supplier", "--params", params,
            ],
        )
        .trim()
        .parse()
        .unwrap()
    };
    let claim = |id: i64| {
        env.ok(
            &alice,
            &["--db", &alice_db, "claim", "--id", &id.to_string()],
        );
    };
    let stamp = |admin: &mut postgres::Client, id: i64| -> Option<String> {
        admin
            .query_one(
                &format!(
                    "SELECT fields_checked_by FROM {}.items WHERE id = $1",
                    b.schema
                ),
                &[&id],
            )
            .unwrap()
            .get(0)
    };

    // alice's own records: added valid (marked by her role), one corrected by her `set`
    // (marked anew); both complete without a check, as before.
    let own = add(r#"{"email": "a@b.example"}"#);
    assert_eq!(stamp(&mut admin, own), Some(alice.clone()));
    claim(own);
    env.ok(
        &alice,
        &[
            "--db",
            &alice_db,
            "set",
            &own.to_string(),
            "email=c@d.example",
        ],
    );
    assert_eq!(stamp(&mut admin, own), Some(alice.clone()));
    env.ok(&alice, &["--db", &alice_db, "complete", &own.to_string()]);

    // mallory, in psql, breaks the e-mail of a record alice holds and writes the digest of
    // the broken params (the key is in caseload's source), naming alice as its writer.
    let held = add(r#"{"email": "a@b.example"}"#);
    claim(held);
    let mut psql = postgres::Client::connect(&mallory_db, postgres::NoTls).unwrap();
    let version: i64 = psql
        .query_one("SELECT n FROM fields_version", &[])
        .unwrap()
        .get(0);
    let broken = r#"{"email": "not an address"}"#;
    let forged = caseload::store::fields_digest(version, "default", broken).to_vec();
    let n = psql
        .execute(
            "UPDATE items SET params = $2::text::json, fields_checked = $3, \
             fields_checked_by = $4 WHERE id = $1",
            &[&held, &broken, &forged, &alice],
        )
        .unwrap();
    assert_eq!(n, 1, "staff roles may write items");
    assert_eq!(
        stamp(&mut admin, held),
        Some(mallory.clone()),
        "the server names who wrote the digest, whatever the statement said"
    );
    // … and again, the stamp alone.
    psql.execute(
        "UPDATE items SET fields_checked_by = $2 WHERE id = $1",
        &[&held, &alice],
    )
    .unwrap();
    assert_eq!(stamp(&mut admin, held), Some(mallory.clone()));
    let err = env.fails(
        &alice,
        &["--db", &alice_db, "complete", &held.to_string()],
        1,
    );
    assert!(
        err.contains("email"),
        "alice's Complete checks the record: {err}"
    );
    let state = item_state(&mut admin, &b.schema, held);
    assert_eq!(state, "open", "not completed");

    // What no check at Complete could stop: mallory's grants let her finish a broken
    // record herself, in raw SQL.
    let free = add(r#"{"email": "a@b.example"}"#);
    let n = psql
        .execute(
            "UPDATE items SET params = '{\"email\": \"no\"}', state = 'done' WHERE id = $1",
            &[&free],
        )
        .unwrap();
    assert_eq!(n, 1);
}

/// Item `id`'s state as stored.
fn item_state(admin: &mut postgres::Client, schema: &str, id: i64) -> String {
    admin
        .query_one(
            &format!("SELECT state FROM {schema}.items WHERE id = $1"),
            &[&id],
        )
        .unwrap()
        .get(0)
}
