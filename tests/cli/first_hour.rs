//! A newcomer's first hour, as ordinary logins (not root, who may act as anyone): the
//! demo, the README's shared-file set-up run from the README's own text, a bot bound to
//! a login, and the message a writer gets when another user's -wal/-shm block it. Real
//! OS users (useradd) and, for the README's block, a private mount namespace with /etc
//! overlaid, so that its `groupadd caseload` and `/etc/caseload/config.toml` touch
//! nothing outside the test. Needs root (CI runs as root).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

use crate::support;
use crate::support::cli::{BIN, Env, explain};
use crate::support::fault::{Users, sidecar};

/// The fenced ```sh block that follows the README line `heading`.
fn readme_block(heading: &str) -> String {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let after = &readme[readme.find(heading).expect("the README's heading")..];
    let start = after.find("```sh\n").expect("a sh block after the heading") + 6;
    let len = after[start..].find("```").expect("the block's end");
    after[start..start + len].to_string()
}

/// A directory every user may enter, holding `caseload` (a link to the binary).
fn bin_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(BIN, dir.path().join("caseload")).unwrap();
    dir
}

/// Runs `script` with `sh -eu` in a private mount namespace: /etc overlaid (users,
/// groups and config files made there vanish with it), /srv and /home fresh tmpfs.
fn in_namespace(script: &str) -> Output {
    let ns = tempfile::tempdir().unwrap();
    let (upper, work) = (ns.path().join("upper"), ns.path().join("work"));
    std::fs::create_dir(&upper).unwrap();
    std::fs::create_dir(&work).unwrap();
    let bin = bin_dir();
    let prelude = format!(
        r#"set -eu
umask 022
mount -t overlay caseload-etc -o lowerdir=/etc,upperdir={u},workdir={w} /etc
[ -d /srv ] || mkdir /srv
mount -t tmpfs -o mode=0755 caseload-srv /srv
mount -t tmpfs -o mode=0755 caseload-home /home
# sudo as the README uses it, for a root shell without sudo installed
sudo() {{ if [ "$1" = -u ]; then u=$2; shift 2; runuser -u "$u" -- "$@"; else "$@"; fi; }}
export PATH={bin}:$PATH
"#,
        u = upper.display(),
        w = work.display(),
        bin = bin.path().display(),
    );
    Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(format!("{prelude}{script}"))
        .env_clear()
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .env("LANG", "C.UTF-8")
        .output()
        .expect("unshare")
}

/// The README's "One shared file on one host" block, run line by line as written (alice
/// and bob ordinary logins, umask 022 as a fresh login has), then the team at work: bob,
/// who did not create the database, adds, takes and completes; alice lists; doctor,
/// run by bob, finds nothing to fix.
#[test]
fn the_readme_shared_file_setup_works_for_ordinary_logins() {
    if support::fault::skip_unless_root("the_readme_shared_file_setup_works") {
        return;
    }
    let block = readme_block("### One shared file on one host");
    let for_each_user = block
        .lines()
        .find(|l| l.contains("usermod") && l.contains("alice"))
        .expect("the README adds each user to the group");
    let script = format!(
        r#"useradd -m -s /bin/sh alice
useradd -m -s /bin/sh bob
# ---- README.md, as written
{block}
# ---- and bob, "for each user"
{bob}
# ---- the team at work
echo "== add"; sudo -u bob caseload add --title 'Call back Mrs Novak'
echo "== claim"; sudo -u bob caseload claim --json
echo "== complete"; sudo -u bob caseload complete 1 --result 'Called'
echo "== list"; sudo -u alice caseload list --state all
echo "== modes"; stat -c '%n %a %U:%G' /srv/caseload/queue.db /srv/caseload/queue.db-wal /srv/caseload/queue.db-shm
echo "== doctor"; sudo -u bob caseload doctor
"#,
        bob = for_each_user.replace("alice", "bob"),
    );
    let out = in_namespace(&script);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        explain("(README)", &[&script], &out, "exit 0")
    );
    let section = |name: &str| -> String {
        text.split(&format!("== {name}\n"))
            .nth(1)
            .unwrap_or_default()
            .split("\n== ")
            .next()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(section("add").trim(), "1", "{text}");
    assert!(section("claim").contains("\"lock_user\":\"bob\""), "{text}");
    assert!(section("list").contains("Call back Mrs Novak"), "{text}");
    for line in section("modes").lines() {
        assert!(line.ends_with(" 660 alice:caseload"), "{line}\n{text}");
    }
    assert!(!section("doctor").contains('✘'), "{text}");
}

/// An ordinary login of the test: its name and a home directory of its own.
struct Login<'a> {
    users: &'a Users,
    name: String,
    home: tempfile::TempDir,
}

impl<'a> Login<'a> {
    fn new(users: &'a Users, i: usize) -> Login<'a> {
        let name = users.names[i].clone();
        let home = tempfile::tempdir().unwrap();
        let (uid, gid) = users.ids(&name);
        std::os::unix::fs::chown(home.path(), Some(uid), Some(gid)).unwrap();
        Login { users, name, home }
    }

    /// The binary run as this login, in its home, with nothing of the test's
    /// environment and a fresh login's umask (022).
    fn command(&self, args: &[&str]) -> Command {
        let (uid, gid) = self.users.ids(&self.name);
        let home = self.home.path();
        let mut c = Command::new(BIN);
        c.args(args)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", home)
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_STATE_HOME", home.join("state"))
            .current_dir(home)
            .uid(uid)
            .gid(gid);
        // SAFETY: umask is async-signal-safe and cannot fail.
        unsafe {
            c.pre_exec(|| {
                libc::umask(0o022);
                Ok(())
            });
        }
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run caseload")
    }

    /// Runs; expects exit 0; returns stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{}",
            explain(&self.name, args, &out, "exit 0")
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs; expects `code`; returns stderr.
    fn fails(&self, args: &[&str], code: i32) -> String {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{}",
            explain(&self.name, args, &out, &format!("exit {code}"))
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }
}

/// `caseload demo`, the README's first command, as an ordinary login: it works, says
/// where the demo is and how to open it again (and that works), the pretend people are
/// bound to the login, so `--user bob` works too; `CASELOAD_DB` is honoured.
#[test]
fn the_demo_works_for_an_ordinary_login() {
    if support::fault::skip_unless_root("the_demo_works_for_an_ordinary_login") {
        return;
    }
    let users = Users::create("fhd", &[("new", false)]);
    let me = Login::new(&users, 0);
    let out = me.ok(&["demo"]);
    let path = me.home.path().join("data/caseload/caseload-demo.db");
    assert_eq!(
        out.trim(),
        format!(
            "Demo database {p} holds 344 items. Open it with: caseload --db {p}",
            p = path.display()
        )
    );
    let p = path.display().to_string();
    let listed: serde_json::Value =
        serde_json::from_str(&me.ok(&["--db", &p, "user", "list", "--json"])).unwrap();
    for person in ["alice", "bob", "carol", "dave", "erin"] {
        let u = listed
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["name"] == person)
            .unwrap_or_else(|| panic!("{person} in {listed}"));
        assert_eq!(u["login"], me.name.as_str(), "{u}");
    }
    assert!(
        me.ok(&["--db", &p, "--user", "bob", "list", "--mine"])
            .contains("bob")
    );
    let shown = me.ok(&["--db", &p, "show", "1", "--json"]);
    assert!(
        shown.contains(&format!("\"os_user\":\"{}\"", me.name)),
        "{shown}"
    );
    // A name the demo did not make up stays refused.
    me.fails(&["--db", &p, "--user", "mallory", "list"], 5);

    // CASELOAD_DB is where the demo goes when set, as for every command.
    let there = me.home.path().join("elsewhere.db");
    let out = me
        .command(&["demo"])
        .env("CASELOAD_DB", &there)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        explain(&me.name, &["demo"], &out, "exit 0")
    );
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.contains(&format!("Demo database {} holds", there.display())),
        "{out}"
    );
    assert_eq!(
        std::fs::metadata(&there).unwrap().uid(),
        users.ids(&me.name).0
    );
}

/// Roles and a schema made for one test on the PostgreSQL server, dropped at the end.
struct PgRoles {
    base: String,
    roles: Vec<String>,
    schema: String,
}

impl PgRoles {
    fn admin(&self) -> postgres::Client {
        postgres::Client::connect(&self.base, postgres::NoTls).unwrap()
    }

    /// The server's URL logged in as `role`, with a password (trust ignores it), on the
    /// schema.
    fn url(&self, role: &str) -> String {
        let (_, rest) = self
            .base
            .split_once('@')
            .expect("a user in CASELOAD_TEST_PG");
        let url = format!("postgres://{role}:s3cret@{rest}");
        support::backend::with_search_path(&url, &self.schema)
    }
}

impl Drop for PgRoles {
    fn drop(&mut self) {
        let mut c = self.admin();
        let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema));
        for r in &self.roles {
            let _ = c.batch_execute(&format!("DROP ROLE IF EXISTS {r}"));
        }
    }
}

/// The demo into an empty PostgreSQL database as a plain role, run by an ordinary login:
/// a role that owns its schema ("simplest" in the README), and a person's staff role of
/// the least-privilege set-up; the hint names the real URL, its password shown as `***`.
#[test]
fn the_demo_works_on_postgres_with_a_plain_role() {
    if support::fault::skip_unless_root("the_demo_works_on_postgres_with_a_plain_role") {
        return;
    }
    let Some(base) = support::backend::pg_url_or_skip() else {
        return;
    };
    let users = Users::create("fhp", &[("new", false)]);
    let me = Login::new(&users, 0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let tag = format!("{}_{nanos}", std::process::id());
    let (own, staff, person) = (
        format!("fh_own_{tag}"),
        format!("fh_staff_{tag}"),
        format!("fh_person_{tag}"),
    );
    let pg = PgRoles {
        base,
        roles: vec![person.clone(), staff.clone(), own.clone()],
        schema: format!("fh_{tag}"),
    };
    let schema = pg.schema.clone();
    pg.admin()
        .batch_execute(&format!(
            "CREATE ROLE {own} LOGIN; CREATE SCHEMA {schema} AUTHORIZATION {own};
             CREATE ROLE {staff} NOLOGIN; CREATE ROLE {person} LOGIN IN ROLE {staff};"
        ))
        .unwrap();

    // The role owning its schema.
    let url = pg.url(&own);
    let out = me.ok(&["--db", &url, "demo"]);
    let shown = url.replace(":s3cret@", ":***@");
    assert!(
        out.contains("holds 344 items")
            && out.contains(&format!("caseload --db '{shown}'"))
            && !out.contains("s3cret"),
        "{out}"
    );

    // A person's staff role, after the owner ran init with the person's name and gave
    // the README's grants.
    pg.admin()
        .batch_execute(&format!(
            "DROP SCHEMA {schema} CASCADE; CREATE SCHEMA {schema} AUTHORIZATION {own};"
        ))
        .unwrap();
    me.ok(&["--db", &url, "--user", &person, "init"]);
    let mut owner = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    owner
        .batch_execute(&crate::security::least_privilege_sql(&schema, &staff))
        .unwrap();
    drop(owner);
    let as_person = pg.url(&person);
    let out = me.ok(&["--db", &as_person, "--user", &person, "demo"]);
    assert!(out.contains("holds 344 items"), "{out}");
    let bob = me.ok(&["--db", &as_person, "--user", "bob", "list", "--mine"]);
    assert!(bob.contains("bob"), "{bob}");
}

/// A bot: a service login bound to a caseload name acts under that name, and under no
/// other; its events record the service login.
#[test]
fn a_bot_bound_to_a_login_acts_as_its_name_only() {
    if support::fault::skip_unless_root("a_bot_bound_to_a_login_acts_as_its_name_only") {
        return;
    }
    let users = Users::create("fhb", &[("svc", true)]);
    let bot = Login::new(&users, 0);
    let env = shared_db(&users);
    env.ok("boss", &["init"]);
    env.ok("boss", &["user", "set", "importer", "--login", &bot.name]);
    let db = env.db.display().to_string();
    bot.ok(&[
        "--db",
        &db,
        "--user",
        "importer",
        "add",
        "--title",
        "From the bot",
    ]);
    let err = bot.fails(
        &["--db", &db, "--user", "boss", "add", "--title", "Not mine"],
        5,
    );
    assert!(
        err.contains(&format!("{} may not act as boss", bot.name)),
        "{err}"
    );
    bot.ok(&["--db", &db, "add", "--title", "As myself"]);
    assert_eq!(env.show(1)["created_by"], "importer");
    assert_eq!(env.show(2)["created_by"], bot.name.as_str());
    bot.ok(&["--db", &db, "--user", "importer", "claim", "--id", "1"]);
    let events = env.ok("boss", &["show", "1", "--json"]);
    assert!(
        events.contains(&format!("\"os_user\":\"{}\"", bot.name)),
        "{events}"
    );
    // `history --of NAME` reads NAME's history as oneself.
    let h = bot.ok(&["--db", &db, "history", "--of", "importer"]);
    assert!(h.contains("locked"), "{h}");
    bot.ok(&["--db", &db, "history", "--of", "boss"]);
    // `history --user NAME` acts as NAME, as the global flag does everywhere: refused for a
    // name the login is not bound to, in one line naming the spelling for whose history.
    let err = bot.fails(&["--db", &db, "history", "--user", "boss"], 5);
    assert!(
        err.contains("caseload history --of boss") && err.trim_end().lines().count() == 1,
        "{err}"
    );
    let h = bot.ok(&["--db", &db, "--user", "importer", "history"]);
    assert!(h.contains("locked"), "{h}");
}

/// A database path in a directory shared by the group of `users` as the README sets it
/// up: setgid, group-writable.
fn shared_db(users: &Users) -> Env {
    let mut env = Env::new();
    std::fs::set_permissions(env.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = env.dir.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(0), Some(users.gid())).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o2775)).unwrap();
    env.db = dir.join("q.db");
    env
}

/// A database created in a shared directory under umask 022 is group-writable, and so
/// are the -wal and -shm SQLite makes beside it; another member then works at once.
/// Elsewhere the umask decides.
#[test]
fn a_database_in_a_shared_directory_is_the_groups_whatever_the_umask() {
    if support::fault::skip_unless_root("a_database_in_a_shared_directory_is_the_groups") {
        return;
    }
    let users = Users::create("fhm", &[("own", true), ("mbr", true)]);
    let (alice, bob) = (Login::new(&users, 0), Login::new(&users, 1));
    let env = shared_db(&users);
    let db = env.db.display().to_string();
    alice.ok(&["--db", &db, "init"]);
    for f in [
        env.db.clone(),
        sidecar(&env.db, "-wal"),
        sidecar(&env.db, "-shm"),
    ] {
        let m = std::fs::metadata(&f).unwrap();
        assert_eq!(m.mode() & 0o7777, 0o660, "{}", f.display());
        assert_eq!(m.gid(), users.gid(), "{}", f.display());
    }
    bob.ok(&["--db", &db, "add", "--title", "first"]);
    bob.ok(&["--db", &db, "claim"]);
    let own = alice.home.path().join("mine.db");
    alice.ok(&["--db", own.to_str().unwrap(), "init"]);
    assert_eq!(std::fs::metadata(&own).unwrap().mode() & 0o777, 0o644);
}

/// A writer blocked by -wal/-shm their creator left without group write (made before the
/// database was group-writable) is told who left them, truly, and that any caseload
/// command by that user fixes it; it does.
#[test]
fn a_blocked_writer_is_told_truly_who_left_the_files() {
    if support::fault::skip_unless_root("a_blocked_writer_is_told_truly_who_left_the_files") {
        return;
    }
    let users = Users::create("fhw", &[("own", true), ("mbr", true)]);
    let (alice, bob) = (Login::new(&users, 0), Login::new(&users, 1));
    let env = shared_db(&users);
    let db = env.db.display().to_string();
    alice.ok(&["--db", &db, "init"]);
    // What an older caseload (or the old README) left: -wal/-shm 0644, the database made
    // group-writable after them.
    for f in [sidecar(&env.db, "-wal"), sidecar(&env.db, "-shm")] {
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let err = bob.fails(&["--db", &db, "add", "--title", "blocked"], 1);
    assert!(
        err.contains(&format!(
            "{}, who may write the database, created them",
            alice.name
        )) && err.contains(&format!("any caseload command {} runs", alice.name))
            && !err.contains("may only read"),
        "{err}"
    );
    // As it says: alice runs any command, and bob can write.
    alice.ok(&["--db", &db, "list"]);
    bob.ok(&["--db", &db, "add", "--title", "unblocked"]);
}

/// The README says what other SQLite tools can do with the file: since schema 28 the
/// search index is two ordinary tables (no FTS5 table, whose `contentless_delete` option
/// needed SQLite 3.43), so an older shell such as Debian 12's 3.40 reads and checks it;
/// a fresh file's schema has no virtual table, and the step to schema 28 drops the FTS5
/// one an older file had.
#[test]
fn the_readme_names_the_sqlite_other_tools_need() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(
        readme.contains("`sqlite3` 3.40") && readme.contains("`caseload check`"),
        "README says what other tools read, and how to inspect"
    );
    assert!(
        !readme.contains("contentless_delete"),
        "nothing of FTS5 is left"
    );
    let schema = std::fs::read_to_string(root.join("schema.sql")).unwrap();
    assert!(
        !schema.to_lowercase().contains("virtual table"),
        "a fresh file has no virtual table"
    );
    let step =
        std::fs::read_to_string(root.join("src/store/sqlite/migrations/0028_search_postings.sql"))
            .unwrap();
    assert!(
        step.contains("DROP TABLE item_search;"),
        "an upgraded file loses its FTS5 table"
    );
}
