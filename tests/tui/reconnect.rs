//! Losing the PostgreSQL server: a TCP proxy in front of the real server is cut and
//! restored. The TUI says "reconnecting…", keeps what the user typed, and carries on when
//! the server is back; the CLI fails with exit 1 and one line.

use crate::support;
use crate::support::backend::Adds;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::backend::PgBackend;
use caseload::domain::{Actor, NewItem};
use caseload::store::postgres::{PgOptions, PgStore};
use ratatui::crossterm::event::KeyCode;

/// A proxy to the server's port that can drop every connection and refuse new ones.
struct Proxy {
    port: u16,
    up: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Proxy {
    fn start(upstream: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = Arc::new(AtomicBool::new(true));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (up2, open2, upstream) = (up.clone(), open.clone(), upstream.to_string());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if !up2.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                let mut guard = open2.lock().unwrap();
                guard.push(client.try_clone().unwrap());
                guard.push(server.try_clone().unwrap());
                drop(guard);
                pipe(client.try_clone().unwrap(), server.try_clone().unwrap());
                pipe(server, client);
            }
        });
        Proxy { port, up, open }
    }

    fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        for s in self.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if to.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = to.shutdown(Shutdown::Both);
    });
}

/// The backend's URL with its host and port replaced by the proxy's.
fn through(url: &str, port: u16) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (auth, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let user = auth
        .rsplit_once('@')
        .map(|(u, _)| format!("{u}@"))
        .unwrap_or_default();
    format!("{scheme}://{user}127.0.0.1:{port}{tail}")
}

fn upstream_addr(url: &str) -> String {
    let rest = url.split_once("://").unwrap().1;
    let auth = &rest[..rest.find('/').unwrap_or(rest.len())];
    let host = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
    if host.contains(':') {
        host.to_string()
    } else {
        format!("{host}:5432")
    }
}

#[test]
fn the_tui_reconnects_and_keeps_the_users_typing() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    let proxy = Proxy::start(&upstream_addr(&b.base_url));
    let url = through(&b.url, proxy.port);
    let opts = PgOptions {
        connect_timeout: Duration::from_secs(2),
        ..PgOptions::default()
    };
    let mut feeder = PgStore::open(&b.url, Actor::new("feeder", "feeder"), &opts).unwrap();
    feeder.add(&NewItem::titled("Printer on fire")).unwrap();
    let alice = PgStore::open(&url, Actor::new("alice", "alice"), &opts).unwrap();
    let mut s = support::tui::live_session(alice, 100, 20, false);
    s.step(None);
    assert!(support::tui::screen(&s.state).contains("Printer on fire"));

    // The user is typing a filter when the server goes away.
    s.step(support::tui::key('/'));
    support::tui::type_text(&mut s, "print");
    proxy.cut();
    // The next read of the change counter (at most every 250 ms) meets the cut.
    std::thread::sleep(Duration::from_millis(300));
    s.step(None);
    let screen = support::tui::screen(&s.state);
    assert!(s.state.offline, "the session knows it is offline");
    assert!(screen.contains("reconnecting…"), "{screen}");
    // Ticks while the server is down neither stall nor lose anything.
    let t = std::time::Instant::now();
    for _ in 0..5 {
        s.step(None);
    }
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "ticks stalled: {:?}",
        t.elapsed()
    );
    assert!(
        support::tui::screen(&s.state).contains("print"),
        "the typing is still there"
    );

    // Meanwhile someone else adds an item; when the server is back it shows.
    feeder
        .add(&NewItem::titled("Printer out of toner"))
        .unwrap();
    proxy.restore();
    std::thread::sleep(Duration::from_millis(1100));
    s.step(None);
    s.step(None);
    assert!(!s.state.offline, "back online");
    s.step(support::tui::code(KeyCode::Enter));
    s.step(None);
    let screen = support::tui::screen(&s.state);
    assert!(
        screen.contains("Printer out of toner") && screen.contains("Printer on fire"),
        "{screen}"
    );
    assert!(screen.contains("filter: print"), "{screen}");
}

#[test]
fn the_cli_fails_with_one_line_when_the_server_is_gone() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    let proxy = Proxy::start(&upstream_addr(&b.base_url));
    let url = through(&b.url, proxy.port);
    // Create the schema first, then cut.
    PgStore::open(&url, Actor::new("boss", "boss"), &PgOptions::default()).unwrap();
    proxy.cut();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_caseload"))
        .args(["--db", &url, "--user", "alice", "list"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("127.0.0.1:{}", proxy.port)),
        "names the server: {err}"
    );
}

/// A server that takes no writes (a standby after a failover; here a session read-only by
/// default, which PostgreSQL treats alike): the list is shown, under a READ-ONLY banner
/// saying what to do, and taking an item is refused in the status line (issue 32 §3).
#[test]
fn the_tui_on_a_read_only_server_lists_under_a_banner() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    let opts = PgOptions::default();
    let mut feeder = PgStore::open(&b.url, Actor::new("feeder", "feeder"), &opts).unwrap();
    feeder.add(&NewItem::titled("Printer on fire")).unwrap();
    let ro = format!("{}%20-c%20default_transaction_read_only%3Don", b.url);
    let alice = PgStore::open(&ro, Actor::new("alice", "alice"), &opts).unwrap();
    let mut s = support::tui::live_session(alice, 120, 20, false);
    s.step(None);
    let screen = support::tui::screen(&s.state);
    assert!(screen.contains("Printer on fire"), "{screen}");
    assert!(
        screen.contains("READ-ONLY") && screen.contains("point caseload at the primary"),
        "{screen}"
    );
    s.step(support::tui::key('n'));
    s.settle(Duration::from_secs(30));
    let screen = support::tui::screen(&s.state);
    assert!(screen.contains("READ-ONLY"), "{screen}");
    assert!(screen.contains("read-only"), "{screen}");
    assert!(s.state.held.is_empty(), "nothing taken");

    // The same server writable again (a new connection, as after a failover to the
    // primary): no banner.
    let bob = PgStore::open(&b.url, Actor::new("bob", "bob"), &opts).unwrap();
    let mut s = support::tui::live_session(bob, 120, 20, false);
    s.step(None);
    assert!(!support::tui::screen(&s.state).contains("READ-ONLY"));
}
