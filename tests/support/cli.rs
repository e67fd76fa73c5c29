//! Running the real `caseload` binary in a fresh temp dir; failures print the command,
//! its output and its exit code (ripgrep's tests/util.rs style).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_caseload");

/// A temp dir with a database path and an isolated home.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub db: PathBuf,
}

impl Default for Env {
    fn default() -> Self {
        Self::new()
    }
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("queue.db");
        Env { dir, db }
    }

    /// A fresh temp dir whose database `user` created with `caseload init` (so `user` is
    /// its first supervisor): only init, demo or --create make a database.
    pub fn init(user: &str) -> Env {
        let env = Env::new();
        env.ok(user, &["init"]);
        env
    }

    /// A command for the binary as `user`, with the environment isolated.
    pub fn command(&self, user: &str, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .env_remove("CASELOAD_DB")
            .env_remove("CASELOAD_USER")
            .env_remove("NO_COLOR")
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            .env("XDG_CACHE_HOME", self.dir.path().join("cache"))
            .env("CASELOAD_DB", &self.db)
            .env("CASELOAD_USER", user)
            .current_dir(self.dir.path());
        c
    }

    /// Runs and returns the output, whatever the exit code.
    pub fn run(&self, user: &str, args: &[&str]) -> Output {
        self.command(user, args).output().expect("run caseload")
    }

    /// Runs, expects exit 0, returns stdout.
    pub fn ok(&self, user: &str, args: &[&str]) -> String {
        let out = self.run(user, args);
        if !out.status.success() {
            panic!("{}", explain(user, args, &out, "exit 0"));
        }
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs, expects `code`, returns stderr (which must be exactly one line).
    pub fn fails(&self, user: &str, args: &[&str], code: i32) -> String {
        let out = self.run(user, args);
        if out.status.code() != Some(code) {
            panic!("{}", explain(user, args, &out, &format!("exit {code}")));
        }
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        if code != 2 {
            assert_eq!(
                err.trim_end().lines().count(),
                1,
                "an error is one line: {}",
                explain(user, args, &out, "one line on stderr")
            );
        }
        err
    }

    /// Creates queue `queue` (as `user`) with locks that expire after one second and no
    /// warning before: the CLI tests that need an expired lock sleep just over a second.
    pub fn one_second_locks(&self, user: &str, queue: &str) {
        let one_second = ["--lock-seconds", "1", "--warn-seconds", "0"];
        self.ok(
            user,
            &[&["queue", "set", queue, "--create"][..], &one_second].concat(),
        );
    }

    /// Adds an item titled `title`; returns its id.
    pub fn add(&self, title: &str) -> i64 {
        self.ok("producer", &["add", "--title", title])
            .trim()
            .parse()
            .expect("add prints an id")
    }

    /// Claims the next item as `user`; returns (id, token).
    pub fn claim(&self, user: &str, extra: &[&str]) -> (i64, i64) {
        let mut args = vec!["claim", "--json"];
        args.extend_from_slice(extra);
        let v: serde_json::Value =
            serde_json::from_str(&self.ok(user, &args)).expect("claim --json prints JSON");
        (v["id"].as_i64().unwrap(), v["lock_token"].as_i64().unwrap())
    }

    /// `show --json` of an item.
    pub fn show(&self, id: i64) -> serde_json::Value {
        serde_json::from_str(&self.ok("viewer", &["show", &id.to_string(), "--json"])).unwrap()
    }

    /// Everything in the database as text, to prove a refused command changed nothing.
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.db)
    }
}

/// A dump of every row of every caseload table, plus the schema version.
pub fn fingerprint(db: &Path) -> String {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open for fingerprint");
    let mut out = String::new();
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    out.push_str(&format!("v{v}\n"));
    for table in [
        "queues",
        "items",
        "events",
        "users",
        "audit",
        "queue_fields",
        "queue_texts",
        "queue_sla",
    ] {
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM {table} ORDER BY 1"))
            .unwrap();
        let n = stmt.column_count();
        let mut rows = stmt.query([]).unwrap();
        while let Some(r) = rows.next().unwrap() {
            for i in 0..n {
                let v: rusqlite::types::Value = r.get(i).unwrap();
                out.push_str(&format!("{v:?}|"));
            }
            out.push('\n');
        }
    }
    out
}

pub fn explain(user: &str, args: &[&str], out: &Output, expected: &str) -> String {
    format!(
        "\n\ncommand: CASELOAD_USER={user} caseload {}\nexpected: {expected}\nexit: {:?}\n--- stdout\n{}\n--- stderr\n{}\n",
        args.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
