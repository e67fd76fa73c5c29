//! Failover (issue 32 §3), with real servers: a primary and a streaming standby made with
//! `pg_basebackup` (synchronous, so an acknowledged commit is on both), started on free
//! ports of 127.0.0.1 from this machine's PostgreSQL binaries and removed afterwards.
//! caseload reaches them through one multi-host URL with
//! `target_session_attrs=read-write`. The standby alone lists but refuses changes; a
//! `caseload work` runs across the primary's death and the standby's promotion: no item
//! lost, none completed twice, the held lock still the holder's on the new primary.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support;
use crate::support::cli::{BIN, explain};

/// The newest PostgreSQL server binaries installed (Debian's layout), if any.
fn server_bin() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| Some(e.ok()?.path().join("bin")))
        .filter(|b| b.join("initdb").exists() && b.join("pg_basebackup").exists())
        .collect();
    dirs.sort_by_key(|d| {
        d.parent()
            .and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok())
            .unwrap_or(0)
    });
    dirs.pop()
}

/// The `postgres` OS account's uid and gid (initdb refuses to run as root).
fn postgres_ids() -> Option<(u32, u32)> {
    let id = |flag: &str| -> Option<u32> {
        let out = Command::new("id").args([flag, "postgres"]).output().ok()?;
        String::from_utf8(out.stdout).ok()?.trim().parse().ok()
    };
    Some((id("-u")?, id("-g")?))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Two clusters in a temp dir; both stopped (immediately) when dropped.
struct Pair {
    bin: PathBuf,
    ids: (u32, u32),
    dir: tempfile::TempDir,
    ports: [u16; 2],
}

impl Pair {
    fn data(&self, i: usize) -> PathBuf {
        self.dir.path().join(["primary", "standby"][i])
    }

    /// A server tool run as the `postgres` account; panics with its output on failure.
    fn tool(&self, name: &str, args: &[&str]) {
        let out = Command::new(self.bin.join(name))
            .args(args)
            .uid(self.ids.0)
            .gid(self.ids.1)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn pg_ctl(&self, i: usize, args: &[&str]) {
        let data = self.data(i).display().to_string();
        let log = self
            .dir
            .path()
            .join(format!("{i}.log"))
            .display()
            .to_string();
        self.tool(
            "pg_ctl",
            &[&["-D", &data, "-l", &log, "-w"][..], args].concat(),
        );
    }

    fn start() -> Pair {
        let bin = server_bin().expect("server binaries");
        let ids = postgres_ids().expect("the postgres account");
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::chown(dir.path(), Some(ids.0), Some(ids.1)).unwrap();
        let pair = Pair {
            bin,
            ids,
            dir,
            ports: [free_port(), free_port()],
        };
        let primary = pair.data(0).display().to_string();
        pair.tool(
            "initdb",
            &[
                "-D",
                &primary,
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
            ],
        );
        let conf = format!(
            "port = {}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\n\
             max_connections = 30\nshared_buffers = 16MB\nwal_level = replica\n\
             max_wal_senders = 4\nhot_standby = on\nsynchronous_standby_names = '*'\n",
            pair.ports[0],
            pair.dir.path().display()
        );
        append(&pair.data(0).join("postgresql.conf"), &conf);
        pair.pg_ctl(0, &["start"]);
        let standby = pair.data(1).display().to_string();
        let port = pair.ports[0].to_string();
        pair.tool(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-D",
                &standby,
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
            ],
        );
        append(
            &pair.data(1).join("postgresql.conf"),
            &format!("port = {}\nsynchronous_standby_names = ''\n", pair.ports[1]),
        );
        pair.pg_ctl(1, &["start"]);
        pair
    }

    fn url(&self, ports: &[u16]) -> String {
        let hosts: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
        format!(
            "postgres://postgres@{}/postgres?target_session_attrs=read-write&connect_timeout=2",
            hosts.join(",")
        )
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        for i in 0..2 {
            let data = self.data(i);
            if data.join("postmaster.pid").exists() {
                let _ = Command::new(self.bin.join("pg_ctl"))
                    .args([
                        "-D",
                        &data.display().to_string(),
                        "-m",
                        "immediate",
                        "-w",
                        "stop",
                    ])
                    .uid(self.ids.0)
                    .gid(self.ids.1)
                    .output();
            }
        }
    }
}

fn append(file: &Path, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

fn caseload(url: &str, user: &str, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    let home = std::env::temp_dir();
    c.arg("--db")
        .arg(url)
        .args(args)
        .env_remove("CASELOAD_DB")
        .env_remove("CASELOAD_PG_POOL")
        .env("CASELOAD_USER", user)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join("caseload-failover-no-config"));
    c
}

fn ok(url: &str, user: &str, args: &[&str]) -> String {
    let out: Output = caseload(url, user, args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        explain(user, args, &out, "exit 0")
    );
    String::from_utf8(out.stdout).unwrap()
}

fn list(url: &str) -> Vec<Value> {
    serde_json::from_str(&ok(
        url,
        "viewer",
        &["list", "--state", "all", "--limit", "0", "--json"],
    ))
    .unwrap()
}

#[test]
fn failover_to_a_promoted_standby_through_a_multi_host_url() {
    if support::fault::skip_unless_root("failover") {
        return;
    }
    if server_bin().is_none() || postgres_ids().is_none() {
        support::skip::skip("no PostgreSQL server binaries (initdb, pg_basebackup) here");
        return;
    }
    let pair = Pair::start();
    let both = pair.url(&pair.ports);
    let standby = pair.url(&pair.ports[1..]).replace("read-write", "any");
    ok(&both, "boss", &["init"]);
    ok(
        &both,
        "boss",
        &[
            "queue",
            "set",
            "work",
            "--create",
            "--lock-seconds",
            "3",
            "--warn-seconds",
            "0",
        ],
    );
    for i in 0..40 {
        ok(
            &both,
            "producer",
            &["add", "--queue", "work", "--title", &format!("item {i}")],
        );
    }
    // alice holds one item of another queue (the default lock time) through it all.
    ok(
        &both,
        "producer",
        &[
            "add",
            "--create-queue",
            "--queue",
            "desk",
            "--title",
            "held",
        ],
    );
    let held: Value =
        serde_json::from_str(&ok(&both, "alice", &["claim", "--queue", "desk", "--json"])).unwrap();
    let (held_id, token) = (
        held["id"].as_i64().unwrap(),
        held["lock_token"].as_i64().unwrap(),
    );

    // The standby alone: it lists (synchronous replication: it has every commit) but
    // refuses changes in one line; doctor fails its writable check.
    assert_eq!(list(&standby).len(), 41);
    let out = caseload(&standby, "alice", &["claim"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("read-only standby") && err.trim_end().lines().count() == 1,
        "{err}"
    );
    let doc = caseload(&standby, "boss", &["doctor"]).output().unwrap();
    assert!(String::from_utf8_lossy(&doc.stdout).contains("✘ writable"));

    // A worker runs through the failover.
    let worker = caseload(
        &both,
        "bot",
        &[
            "work",
            "--queue",
            "work",
            "--exec",
            "sleep 0.2",
            "--idle-exit",
            "8",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    let done = || list(&both).iter().filter(|i| i["state"] == "done").count();
    while done() < 10 {
        assert!(Instant::now() < until, "the worker did not get going");
        std::thread::sleep(Duration::from_millis(100));
    }
    pair.pg_ctl(0, &["-m", "immediate", "stop"]);
    // The primary died with work left (the standby has every acknowledged commit).
    let before = list(&standby)
        .iter()
        .filter(|i| i["state"] == "done")
        .count();
    assert!(before < 40, "the worker was done before the failover");
    pair.pg_ctl(1, &["promote"]);
    let out = worker.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        explain("bot", &["work"], &out, "exit 0")
    );

    // On the new primary: every item the worker said was done is done, every item but
    // alice's is done, none was completed twice.
    let items = list(&both);
    assert_eq!(items.len(), 41);
    for line in text.lines().filter(|l| l.ends_with(" done")) {
        let id: i64 = line[1..line.len() - 5].parse().unwrap();
        let item = items.iter().find(|i| i["id"] == id).unwrap();
        assert_eq!(item["state"], "done", "{line}: {item}");
    }
    for item in &items {
        let id = item["id"].as_i64().unwrap();
        if id == held_id {
            continue;
        }
        assert_eq!(item["state"], "done", "{item}\n{text}");
        let shown: Value =
            serde_json::from_str(&ok(&both, "viewer", &["show", &id.to_string(), "--json"]))
                .unwrap();
        let completed = shown["history"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "completed")
            .count();
        assert_eq!(completed, 1, "#{id} completed {completed} times");
    }
    // alice's lock came through the failover with its token.
    ok(
        &both,
        "alice",
        &[
            "complete",
            &held_id.to_string(),
            "--token",
            &token.to_string(),
        ],
    );
    assert!(!ok(&both, "boss", &["check"]).is_empty());
}
