//! A real PgBouncer in transaction mode for the tests that go through a pooler: started by
//! the test on a free port in a temp dir, in front of the `CASELOAD_TEST_PG` server (which
//! must be at 127.0.0.1:5432 or as its URL says), with a small pool. Its server
//! connections carry the application name given to it, so a test can count them in
//! `pg_stat_activity`.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use caseload::store::postgres::{PgOptions, Pooling};

/// Why the pooled cases skip.
pub const NO_PGBOUNCER: &str = "pgbouncer is not installed (Debian package pgbouncer)";

/// A running PgBouncer; stopped when dropped.
pub struct Pooler {
    child: Child,
    _dir: tempfile::TempDir,
    pub port: u16,
    /// Server connections the pooler may open (`default_pool_size` = `max_db_connections`).
    pub pool_size: u32,
}

fn pgbouncer() -> Option<PathBuf> {
    [
        "/usr/sbin/pgbouncer",
        "/usr/bin/pgbouncer",
        "/usr/local/bin/pgbouncer",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// The host, port, database and user of a `postgres://user@host:port/db…` URL.
fn parts(url: &str) -> (String, u16, String, String) {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.split_once('?').map_or(rest, |(r, _)| r);
    let (auth, hostdb) = rest.rsplit_once('@').unwrap_or(("postgres", rest));
    let user = auth.split(':').next().unwrap_or("postgres").to_string();
    let (hostport, db) = hostdb.split_once('/').unwrap_or((hostdb, "postgres"));
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) => (h.to_string(), p.parse().expect("a port")),
        None => (hostport.to_string(), 5432),
    };
    (host, port, db.to_string(), user)
}

impl Pooler {
    /// Starts a PgBouncer in transaction mode with `pool_size` server connections in front
    /// of the server of `base_url`, or `None` (a skip) when PgBouncer is not installed.
    pub fn start(base_url: &str, pool_size: u32) -> Option<Pooler> {
        Pooler::start_limited(base_url, pool_size, 1000)
    }

    /// [`Pooler::start`] taking at most `max_clients` client connections at once.
    pub fn start_limited(base_url: &str, pool_size: u32, max_clients: u32) -> Option<Pooler> {
        let Some(bin) = pgbouncer() else {
            super::skip::skip(NO_PGBOUNCER);
            return None;
        };
        let (host, port, db, user) = parts(base_url);
        let dir = tempfile::tempdir().expect("temp dir");
        let free = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let listen = free.local_addr().expect("its address").port();
        drop(free);
        let ini = dir.path().join("pgbouncer.ini");
        let users = dir.path().join("users.txt");
        std::fs::write(&users, format!("\"{user}\" \"\"\n")).expect("users file");
        let mut f = std::fs::File::create(&ini).expect("ini");
        write!(
            f,
            "[databases]\n{db} = host={host} port={port} dbname={db}\n\
             [pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {listen}\n\
             unix_socket_dir =\nauth_type = trust\nauth_file = {users}\n\
             pool_mode = transaction\ndefault_pool_size = {pool_size}\n\
             max_db_connections = {pool_size}\nmax_client_conn = {max_clients}\n\
             reserve_pool_size = 0\nserver_lifetime = 3600\nlogfile =\npidfile =\n\
             admin_users = {user}\n",
            users = users.display()
        )
        .expect("write ini");
        drop(f);
        let mut cmd = Command::new(bin);
        // PgBouncer will not run as root: it switches to the server's user instead.
        if unsafe { libc::geteuid() } == 0 {
            use std::os::unix::fs::PermissionsExt;
            for p in [dir.path(), ini.as_path(), users.as_path()] {
                let mode = if p.is_dir() { 0o755 } else { 0o644 };
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
            }
            cmd.args(["-u", "postgres"]);
        }
        let child = cmd
            .arg(&ini)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start pgbouncer");
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", listen)).is_err() {
            assert!(
                Instant::now() < deadline,
                "pgbouncer did not start listening"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Pooler {
            child,
            _dir: dir,
            port: listen,
            pool_size,
        })
    }

    /// `base_url` pointed at this pooler (same user, database and parameters).
    pub fn url(&self, base_url: &str) -> String {
        let (host, port, ..) = parts(base_url);
        base_url
            .replacen(
                &format!("@{host}:{port}/"),
                &format!("@127.0.0.1:{}/", self.port),
                1,
            )
            .replacen(
                &format!("@{host}/"),
                &format!("@127.0.0.1:{}/", self.port),
                1,
            )
    }
}

impl Drop for Pooler {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The options of a store that goes through a pooler in transaction mode.
pub fn pooled(clock_offset_ms: i64) -> PgOptions {
    PgOptions {
        clock_offset_ms,
        pool: Pooling::Transaction,
        ..PgOptions::default()
    }
}

/// One pooler shared by the tests of this binary that need just any (the conformance
/// suite through a pooler): started by the first, stopped with the process.
pub fn shared(base_url: &str) -> Option<&'static Pooler> {
    static SHARED: OnceLock<Option<Pooler>> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            let p = Pooler::start(base_url, 4)?;
            SHARED_PID.store(p.child.id() as i32, Ordering::SeqCst);
            // SAFETY: registers a plain `extern "C"` function that only signals a process.
            unsafe { libc::atexit(stop_shared) };
            Some(p)
        })
        .as_ref()
}

/// The shared pooler's process, stopped at exit (a static is never dropped).
static SHARED_PID: AtomicI32 = AtomicI32::new(0);

extern "C" fn stop_shared() {
    let pid = SHARED_PID.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: signals the one process this module started.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
}

/// A test schema reached through the shared pooler: the conformance suite's third
/// backend.
pub struct PooledBackend {
    pub direct: super::backend::PgBackend,
    /// The pooler's URL for the schema (`options=-c search_path=…`, which caseload turns
    /// into a setting of each transaction).
    pub url: String,
}

impl PooledBackend {
    /// A new schema behind the shared pooler, or `None` (a skip) without a server or
    /// without PgBouncer.
    pub fn from_env() -> Option<PooledBackend> {
        let direct = super::backend::PgBackend::from_env()?;
        let pooler = shared(&direct.base_url)?;
        let url = super::backend::with_search_path(&pooler.url(&direct.base_url), &direct.schema);
        Some(PooledBackend { direct, url })
    }
}

impl super::backend::Backend for PooledBackend {
    fn open(&self, user: &str, clock_offset_ms: i64) -> super::backend::BoxStore {
        let actor = caseload::domain::Actor::new(user, "tester");
        let store =
            caseload::store::postgres::PgStore::open(&self.url, actor, &pooled(clock_offset_ms))
                .unwrap_or_else(|e| panic!("open {} through the pooler: {e}", self.direct.schema));
        Box::new(store)
    }

    fn name(&self) -> &'static str {
        "postgres"
    }

    fn location(&self) -> String {
        self.url.clone()
    }

    fn fresh(&self) -> Box<dyn super::backend::Backend + Send> {
        Box::new(PooledBackend::from_env().expect("a server and a pooler"))
    }

    fn spoil(&self, sql: &str) {
        self.direct.spoil(sql);
    }

    fn texts(&self, sql: &str) -> Vec<String> {
        self.direct.texts(sql)
    }
}
