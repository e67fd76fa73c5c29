//! A TCP proxy in front of a PostgreSQL server (or a pooler) that reads the protocol both
//! ways: each `ReadyForQuery` the server sends ends one round trip (a client that does not
//! pipeline waits for it before it sends again), and each client message is noted (a
//! simple query's text, a `Parse` with its statement name and text, a `Bind` of a named
//! statement), so a test can say exactly what one store call sent and how many times it
//! waited for the server.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What went over the wire since the last [`Wire::take`].
#[derive(Debug, Default, Clone)]
pub struct Trips {
    /// `ReadyForQuery` messages from the server: round trips.
    pub round_trips: u64,
    /// The client's requests, one line each (`Q …`, `P name: …`, `B name`).
    pub sent: Vec<String>,
}

impl Trips {
    /// Names of the statements the client prepared by name (none through a pooler in
    /// transaction mode).
    pub fn named_statements(&self) -> Vec<&str> {
        self.sent
            .iter()
            .filter_map(|s| s.strip_prefix("P "))
            .filter(|s| !s.starts_with(':'))
            .collect()
    }
}

/// A running proxy; its threads end when the client or the server closes.
pub struct Wire {
    pub port: u16,
    ready: Arc<AtomicU64>,
    sent: Arc<Mutex<Vec<String>>>,
}

impl Wire {
    /// A proxy to `upstream` (`host:port`).
    pub fn start(upstream: &str) -> Wire {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let ready = Arc::new(AtomicU64::new(0));
        let sent = Arc::new(Mutex::new(Vec::new()));
        let (r, s, upstream) = (ready.clone(), sent.clone(), upstream.to_string());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let server = TcpStream::connect(&upstream).unwrap();
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let (r, s) = (r.clone(), s.clone());
                std::thread::spawn(move || pipe(c2, s2, Side::Client(s)));
                std::thread::spawn(move || pipe(server, client, Side::Server(r)));
            }
        });
        Wire { port, ready, sent }
    }

    /// `url` (`postgres://user@host:port/db?…`) pointed at this proxy.
    pub fn url(&self, url: &str) -> String {
        let (scheme, rest) = url.split_once("://").unwrap();
        let at = rest.find('/').unwrap_or(rest.len());
        let (auth, tail) = rest.split_at(at);
        let user = auth.rsplit_once('@').map(|(u, _)| format!("{u}@"));
        format!(
            "{scheme}://{}127.0.0.1:{}{tail}",
            user.unwrap_or_default(),
            self.port
        )
    }

    /// What went over the wire since the last call.
    pub fn take(&self) -> Trips {
        // Both are counted before the message is passed on, so a call that returned has
        // all of its own counted.
        Trips {
            round_trips: self.ready.swap(0, Ordering::SeqCst),
            sent: std::mem::take(&mut *self.sent.lock().unwrap()),
        }
    }
}

/// `host:port` of a `postgres://user@host:port/db…` URL (port 5432 when none is given).
pub fn host_port(url: &str) -> String {
    let rest = url.split_once("://").unwrap().1;
    let hostport = rest[..rest.find('/').unwrap_or(rest.len())]
        .rsplit_once('@')
        .map_or(&rest[..rest.find('/').unwrap_or(rest.len())], |(_, h)| h);
    match hostport.contains(':') {
        true => hostport.to_string(),
        false => format!("{hostport}:5432"),
    }
}

enum Side {
    Client(Arc<Mutex<Vec<String>>>),
    Server(Arc<AtomicU64>),
}

fn cstr(b: &[u8]) -> (String, &[u8]) {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    let rest = b.get(end + 1..).unwrap_or(&[]);
    (String::from_utf8_lossy(&b[..end]).into_owned(), rest)
}

/// One client message as a line, if it is worth noting (`named`: the statements
/// prepared by name on this connection, so that a `Bind` shows the text it runs).
fn describe(kind: u8, body: &[u8], named: &mut HashMap<String, String>) -> Option<String> {
    match kind {
        b'Q' => Some(format!("Q {}", cstr(body).0)),
        b'P' => {
            let (name, rest) = cstr(body);
            let sql = cstr(rest).0;
            if !name.is_empty() {
                named.insert(name.clone(), sql.clone());
            }
            Some(format!("P {name}: {sql}"))
        }
        b'B' => {
            let (_, rest) = cstr(body);
            let (stmt, _) = cstr(rest);
            let sql = named.get(&stmt).map_or("", String::as_str);
            (!stmt.is_empty()).then(|| format!("B {stmt}: {sql}"))
        }
        _ => None,
    }
}

/// Copies `from` to `to`, reading the messages on the way.
fn pipe(mut from: TcpStream, mut to: TcpStream, side: Side) {
    let _ = from.set_nodelay(true);
    let _ = to.set_nodelay(true);
    let mut buf = [0u8; 64 * 1024];
    let mut pending: Vec<u8> = Vec::new();
    // The client's first message (startup) has no type byte.
    let mut startup = matches!(side, Side::Client(_));
    let mut named = HashMap::new();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        pending.extend_from_slice(&buf[..n]);
        loop {
            let head = if startup { 0 } else { 1 };
            if pending.len() < head + 4 {
                break;
            }
            let len = u32::from_be_bytes(pending[head..head + 4].try_into().unwrap()) as usize;
            if pending.len() < head + len {
                break;
            }
            let msg: Vec<u8> = pending.drain(..head + len).collect();
            if startup {
                startup = false;
                continue;
            }
            match &side {
                Side::Client(sent) => {
                    if let Some(line) = describe(msg[0], &msg[5..], &mut named) {
                        sent.lock().unwrap().push(line);
                    }
                }
                Side::Server(ready) if msg[0] == b'Z' => {
                    ready.fetch_add(1, Ordering::SeqCst);
                }
                Side::Server(_) => {}
            }
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Both);
}
