//! Losing the connection to PostgreSQL at the worst moments, with the real binary: while a
//! change is committed (the backend terminated from a second connection, or the answer to
//! COMMIT lost on the way back), and at every other message of a claim and a complete.
//!
//! What must hold: a change cut off before COMMIT is reported as not applied (exit 1) and
//! is not applied; a change cut off during COMMIT is reported as possibly applied (exit 6)
//! and its caller can find out (`list --mine` shows ids and tokens); every message names
//! the server; a retry works.

use crate::support;
use crate::support::backend::Adds;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::support::backend::PgBackend;
use caseload::domain::{Actor, NewItem};
use caseload::store::postgres::{PgOptions, PgStore};
use caseload::store::{ListFilter, Reads, StateFilter, Store, Writes, exit};

use crate::support::cli::BIN;

fn caseload(url: &str, user: &str, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(["--db", url, "--user", user])
        .args(args)
        .env_remove("CASELOAD_DB")
        .env_remove("CASELOAD_USER");
    c
}

fn run(url: &str, user: &str, args: &[&str]) -> Output {
    caseload(url, user, args).output().expect("run caseload")
}

fn explain(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The items `user` holds, as `(id, token)`.
fn held(s: &mut dyn Store, user: &str) -> Vec<(i64, i64)> {
    s.list(&ListFilter {
        state: StateFilter::Locked,
        holder: Some(user.into()),
        limit: 1000,
        ..ListFilter::default()
    })
    .unwrap()
    .iter()
    .map(|i| (i.id, i.lock_token))
    .collect()
}

/// `list --mine --json` as `(id, token)` pairs: what a caller who lost an answer runs.
fn list_mine(url: &str, user: &str) -> Vec<(i64, i64)> {
    let out = run(url, user, &["list", "--mine", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|i| (i["id"].as_i64().unwrap(), i["lock_token"].as_i64().unwrap()))
        .collect()
}

/// A key for this test's advisory lock, apart from every other test's.
fn lock_key(b: &PgBackend) -> i64 {
    b.schema
        .bytes()
        .fold(7i64, |h, c| h.wrapping_mul(31).wrapping_add(c as i64))
        & 0x7fff_ffff
}

/// Makes every COMMIT that wrote an item wait for advisory lock `key` (a deferred
/// constraint trigger runs at COMMIT).
fn hold_commits(admin: &mut postgres::Client, key: i64) {
    admin
        .batch_execute(&format!(
            "CREATE FUNCTION hold_commit() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN PERFORM pg_advisory_xact_lock({key}); RETURN NULL; END $$; \
             CREATE CONSTRAINT TRIGGER hold_commit AFTER INSERT OR UPDATE ON items \
             DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION hold_commit();"
        ))
        .unwrap();
}

/// Makes the INSERT of item `id` wait for advisory lock `key`.
fn hold_insert_of(admin: &mut postgres::Client, key: i64, id: i64) {
    admin
        .batch_execute(&format!(
            "CREATE FUNCTION hold_commit() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN IF NEW.id = {id} THEN PERFORM pg_advisory_xact_lock({key}); END IF; \
             RETURN NEW; END $$; \
             CREATE TRIGGER hold_commit BEFORE INSERT ON items \
             FOR EACH ROW EXECUTE FUNCTION hold_commit();"
        ))
        .unwrap();
}

/// Waits until a backend waits for advisory lock `key`; returns its pid.
fn waiting_on(admin: &mut postgres::Client, key: i64) -> i32 {
    let start = Instant::now();
    loop {
        let row = admin
            .query_opt(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted \
                 AND classid = 0 AND objid = $1::bigint::oid AND objsubid = 1",
                &[&key],
            )
            .unwrap();
        if let Some(r) = row {
            return r.get(0);
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "nobody waited for the commit hold"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `cmd` while `hold` makes it wait, terminates its backend at that moment, and
/// returns the output.
fn terminated_while_held(
    b: &PgBackend,
    hold: impl FnOnce(&mut postgres::Client, i64),
    mut cmd: Command,
) -> Output {
    let key = lock_key(b);
    let mut admin = b.admin();
    let mut holder = b.admin();
    hold(&mut admin, key);
    holder
        .execute("SELECT pg_advisory_lock($1)", &[&key])
        .unwrap();
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = waiting_on(&mut admin, key);
    admin
        .execute("SELECT pg_terminate_backend($1)", &[&pid])
        .unwrap();
    let out = child.wait_with_output().unwrap();
    holder
        .execute("SELECT pg_advisory_unlock($1)", &[&key])
        .unwrap();
    admin
        .batch_execute("DROP TRIGGER hold_commit ON items; DROP FUNCTION hold_commit()")
        .unwrap();
    out
}

/// Runs `args` while COMMIT is held, terminates its backend at that moment, and returns
/// the output.
fn terminated_during_commit(b: &PgBackend, user: &str, args: &[&str]) -> Output {
    terminated_while_held(b, hold_commits, caseload(&b.url, user, args))
}

/// The server as messages name it: host, port and database of the URL.
fn server_of(url: &str) -> String {
    let rest = url.split_once("://").unwrap().1;
    let host_db = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
    host_db.split('?').next().unwrap().to_string()
}

#[track_caller]
fn says_outcome_unknown(out: &Output, url: &str) {
    assert_eq!(out.status.code(), Some(exit::UNKNOWN), "{}", explain(out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("was lost while committing")
            && err.contains("may have applied")
            && err.contains("caseload list --mine")
            && err.contains(&server_of(url)),
        "{err}"
    );
}

#[test]
fn a_complete_whose_backend_is_terminated_during_commit_says_so_and_a_retry_works() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    let mut boss =
        PgStore::open(&b.url, Actor::new("boss", "boss"), &PgOptions::default()).unwrap();
    let id = boss.add(&NewItem::titled("Printer on fire")).unwrap().id;
    let token = boss.take(id).unwrap().lock_token;
    let out = terminated_during_commit(&b, "boss", &["complete", &id.to_string()]);
    says_outcome_unknown(&out, &b.url);
    // The caller looks: the server did not apply it (the backend died before COMMIT
    // finished), so the item is still held, with its token.
    assert_eq!(list_mine(&b.url, "boss"), vec![(id, token)]);
    let text = run(&b.url, "boss", &["list", "--mine"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!("#{id}")) && text.contains(&format!("token {token}")),
        "{text}"
    );
    let out = run(&b.url, "boss", &["complete", &id.to_string()]);
    assert_eq!(out.status.code(), Some(0), "the retry: {}", explain(&out));
}

#[test]
fn a_claim_whose_backend_is_terminated_during_commit_says_so_and_a_retry_works() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    let mut boss =
        PgStore::open(&b.url, Actor::new("boss", "boss"), &PgOptions::default()).unwrap();
    let id = boss.add(&NewItem::titled("Toner")).unwrap().id;
    let out = terminated_during_commit(&b, "alice", &["claim"]);
    says_outcome_unknown(&out, &b.url);
    assert_eq!(list_mine(&b.url, "alice"), vec![], "not applied");
    let out = run(&b.url, "alice", &["claim", "--json"]);
    assert_eq!(out.status.code(), Some(0), "the retry: {}", explain(&out));
    assert_eq!(held(&mut boss, "alice").len(), 1);
    assert_eq!(held(&mut boss, "alice")[0].0, id);
}

/// A proxy in front of the server that cuts its first connection just before the server's
/// `cut_at`-th CommandComplete or ReadyForQuery message would reach the client (so the
/// server has done the work and the client never hears of it). Later connections (the
/// client reconnecting) pass untouched.
struct CutProxy {
    port: u16,
    cut: Arc<AtomicBool>,
}

impl CutProxy {
    fn start(upstream: String, cut_at: usize) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let cut2 = cut.clone();
        std::thread::spawn(move || {
            let mut first = true;
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = TcpStream::connect(&upstream) else {
                    return;
                };
                let limit = if first { Some(cut_at) } else { None };
                first = false;
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || copy_plain(c2, s2));
                let cut = cut2.clone();
                std::thread::spawn(move || copy_until_cut(server, client, limit, &cut));
            }
        });
        CutProxy { port, cut }
    }
}

fn copy_plain(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = [0u8; 16 * 1024];
    while let Ok(n) = from.read(&mut buf) {
        if n == 0 || to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// Relays whole server messages; at the `limit`-th 'C' or 'Z' both sides are cut.
fn copy_until_cut(
    mut server: TcpStream,
    mut client: TcpStream,
    limit: Option<usize>,
    cut: &AtomicBool,
) {
    let mut buf = [0u8; 16 * 1024];
    let mut pending: Vec<u8> = Vec::new();
    let mut seen = 0usize;
    loop {
        let n = match server.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        pending.extend_from_slice(&buf[..n]);
        let mut end = 0;
        while pending.len() >= end + 5 {
            let len = u32::from_be_bytes(pending[end + 1..end + 5].try_into().unwrap()) as usize;
            if pending.len() < end + 1 + len {
                break;
            }
            if matches!(pending[end], b'C' | b'Z') {
                seen += 1;
                if Some(seen) == limit {
                    let _ = client.write_all(&pending[..end]);
                    cut.store(true, Ordering::SeqCst);
                    let _ = server.shutdown(Shutdown::Both);
                    let _ = client.shutdown(Shutdown::Both);
                    return;
                }
            }
            end += 1 + len;
        }
        if client.write_all(&pending[..end]).is_err() {
            break;
        }
        pending.drain(..end);
    }
    let _ = client.shutdown(Shutdown::Both);
}

fn upstream_addr(url: &str) -> String {
    let host = server_of(url);
    let host = host.split('/').next().unwrap();
    if host.contains(':') {
        host.to_string()
    } else {
        format!("{host}:5432")
    }
}

/// `url` pointed at the proxy.
fn through(url: &str, port: u16) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (auth, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let user = auth
        .rsplit_once('@')
        .map(|(u, _)| format!("{u}@"))
        .unwrap_or_default();
    format!("{scheme}://{user}127.0.0.1:{port}{tail}")
}

/// Cuts a command at each server answer in turn and checks the outcome against the
/// server: `before` prepares a run and returns what to run, `applied` says whether the
/// change happened, `retried` checks the caller's retry of a run whose outcome was
/// unknown (given its arguments and whether the first run was applied).
fn cut_at_every_answer(
    b: &PgBackend,
    what: &str,
    mut before: impl FnMut() -> Vec<String>,
    mut applied: impl FnMut() -> bool,
    mut retried: impl FnMut(&[&str], bool),
) {
    let mut outcomes = std::collections::BTreeMap::<i32, usize>::new();
    for cut_at in 1..400 {
        let args = before();
        let proxy = CutProxy::start(upstream_addr(&b.base_url), cut_at);
        let url = through(&b.url, proxy.port);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(&url, "alice", &argv);
        let code = out.status.code().unwrap_or(-1);
        let err = String::from_utf8_lossy(&out.stderr);
        let at = format!("{what}, cut at answer {cut_at}: {}", explain(&out));
        if !proxy.cut.load(Ordering::SeqCst) {
            assert_eq!(code, 0, "{at}");
            assert!(applied(), "{at}");
            assert!(cut_at > 10, "{what} needs more than {cut_at} answers");
            eprintln!("{what}: {cut_at} cut points, outcomes by exit code {outcomes:?}");
            return;
        }
        *outcomes.entry(code).or_default() += 1;
        match code {
            0 => assert!(applied(), "exit 0 but not applied: {at}"),
            1 => assert!(!applied(), "exit 1 says not done, but it was: {at}"),
            6 => retried(&argv, applied()),
            _ => panic!("unexpected exit: {at}"),
        }
        if code != 0 {
            assert_eq!(err.trim_end().lines().count(), 1, "{at}");
            assert!(
                err.contains(&format!("127.0.0.1:{}", proxy.port)),
                "names the server: {at}"
            );
            assert!(
                !err.contains("panicked") && !err.contains("internal error"),
                "{at}"
            );
        }
    }
    panic!("{what} never ran to the end");
}

#[test]
fn claim_and_complete_cut_at_every_answer_never_misreport() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    let mut boss =
        PgStore::open(&b.url, Actor::new("boss", "boss"), &PgOptions::default()).unwrap();
    let mut alice =
        PgStore::open(&b.url, Actor::new("alice", "alice"), &PgOptions::default()).unwrap();
    // claim: each run starts with alice holding nothing and one more free item.
    cut_at_every_answer(
        &b,
        "claim",
        || {
            for (id, token) in held(&mut alice, "alice") {
                alice.release(id, token).unwrap();
            }
            boss.add(&NewItem::titled("one more")).unwrap();
            vec!["claim".into(), "--queue".into(), "default".into()]
        },
        || {
            let mut boss =
                PgStore::open(&b.url, Actor::new("x", "x"), &PgOptions::default()).unwrap();
            !held(&mut boss, "alice").is_empty()
        },
        |_, _| {},
    );
    // complete: each run starts with alice holding one item.
    for (id, token) in held(&mut alice, "alice") {
        alice.release(id, token).unwrap();
    }
    let current = std::cell::Cell::new(0i64);
    cut_at_every_answer(
        &b,
        "complete",
        || {
            let id = alice.add(&NewItem::titled("to complete")).unwrap().id;
            alice.take(id).unwrap();
            current.set(id);
            vec!["complete".into(), id.to_string()]
        },
        || {
            let mut s = PgStore::open(&b.url, Actor::new("x", "x"), &PgOptions::default()).unwrap();
            s.item(current.get()).unwrap().state != caseload::domain::ItemState::Open
        },
        // The same complete again, as a caller told "may have applied" would: applied or
        // not, it ends with exit 0, and says which.
        |argv, was_applied| {
            let out = run(&b.url, "alice", argv);
            let said = String::from_utf8_lossy(&out.stdout);
            let want = if was_applied {
                format!("#{} already completed by you", current.get())
            } else {
                format!("Completed #{}", current.get())
            };
            assert_eq!(out.status.code(), Some(0), "retry: {}", explain(&out));
            assert_eq!(said.trim(), want, "retry: {}", explain(&out));
        },
    );
}

/// An SQLite database of `n` items, each with its `created` event.
fn sqlite_source(n: usize) -> support::backend::SqliteBackend {
    let sqlite = support::backend::SqliteBackend::new();
    let mut boss = support::backend::Backend::open(&sqlite, "boss", 0);
    let items: Vec<NewItem> = (0..n)
        .map(|i| NewItem::titled(&format!("item {i}")))
        .collect();
    boss.add_batch(&items).unwrap();
    sqlite
}

fn migrate_to(sqlite: &support::backend::SqliteBackend, url: &str) -> Command {
    let mut c = Command::new(BIN);
    c.args([
        "--db",
        sqlite.path.to_str().unwrap(),
        "--user",
        "boss",
        "migrate-to",
        url,
    ])
    .env_remove("CASELOAD_DB")
    .env_remove("CASELOAD_USER");
    c
}

fn items_on(b: &PgBackend) -> i64 {
    b.admin()
        .query_one("SELECT count(*) FROM items", &[])
        .unwrap()
        .get(0)
}

#[test]
fn migrate_to_cut_by_a_lost_connection_blames_the_connection_and_resumes() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    let sqlite = sqlite_source(200);
    // The schema exists (as after a first attempt), still empty.
    PgStore::open(&b.url, Actor::new("boss", "boss"), &PgOptions::default()).unwrap();
    let out = terminated_while_held(
        &b,
        |c, key| hold_insert_of(c, key, 100),
        migrate_to(&sqlite, &b.url),
    );
    assert_eq!(out.status.code(), Some(exit::ERROR), "{}", explain(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("the connection to ")
            && err.contains(&server_of(&b.url))
            && err.contains("was lost while copying (99 of 200 items")
            && err.contains("nothing was copied")
            && err.contains("run the same `caseload migrate-to` again"),
        "{err}"
    );
    assert!(
        !err.contains("item #100") && !err.contains("cannot be copied"),
        "{err}"
    );
    assert_eq!(items_on(&b), 0, "nothing was copied");
    let out = migrate_to(&sqlite, &b.url).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "the retry: {}", explain(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Copied 200 items"));
    assert_eq!(items_on(&b), 200);
}

#[test]
fn migrate_to_cut_while_committing_says_it_may_have_applied_and_how_to_tell() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    let sqlite = sqlite_source(20);
    PgStore::open(&b.url, Actor::new("boss", "boss"), &PgOptions::default()).unwrap();
    let out = terminated_while_held(&b, hold_commits, migrate_to(&sqlite, &b.url));
    assert_eq!(out.status.code(), Some(exit::UNKNOWN), "{}", explain(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("was lost while committing the copy of 20 items")
            && err.contains("may have applied it")
            && err.contains("list --state all --limit 1")
            && err.contains(&server_of(&b.url)),
        "{err}"
    );
    // Here the server did not: the advice's second branch, and the copy then succeeds.
    assert_eq!(items_on(&b), 0);
    let out = migrate_to(&sqlite, &b.url).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "the retry: {}", explain(&out));
    assert_eq!(items_on(&b), 20);
}

/// Makes the insert of the row titled `title` wait for advisory lock `key`: at once
/// (`BEFORE`), or at its transaction's COMMIT (a deferred constraint trigger).
fn hold_row(admin: &mut postgres::Client, key: i64, title: &str, at_commit: bool) {
    let when = if at_commit {
        "CONSTRAINT TRIGGER hold_commit AFTER INSERT ON items DEFERRABLE INITIALLY DEFERRED"
    } else {
        "TRIGGER hold_commit BEFORE INSERT ON items"
    };
    admin
        .batch_execute(&format!(
            "CREATE FUNCTION hold_commit() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN IF NEW.title = '{title}' THEN PERFORM pg_advisory_xact_lock({key}); \
             END IF; RETURN NEW; END $$; \
             CREATE {when} FOR EACH ROW EXECUTE FUNCTION hold_commit();"
        ))
        .unwrap();
}

/// A JSON Lines file of `n` rows in a temp dir.
fn import_file(n: usize) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.jsonl");
    let rows: String = (0..n)
        .map(|i| format!("{{\"title\": \"row {i}\"}}\n"))
        .collect();
    std::fs::write(&path, rows).unwrap();
    (dir, path.to_str().unwrap().to_string())
}

/// An import whose connection is lost part-way says what is true: the rows of the
/// transactions committed before are in, those of the one cut off are not (lost before
/// its COMMIT) or may be (lost during it) — never "stopped part-way" and "nothing was
/// changed" at once. A rerun finishes it. (The first batch holds 500 rows.)
#[test]
fn an_import_cut_part_way_says_what_was_added() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    PgStore::open(&b.url, Actor::new("boss", "boss"), &PgOptions::default()).unwrap();
    let (_dir, file) = import_file(3000);
    let import = || caseload(&b.url, "boss", &["import", &file]);
    let hold = |title: &'static str, at_commit| {
        move |c: &mut postgres::Client, key| hold_row(c, key, title, at_commit)
    };
    let before = terminated_while_held(&b, hold("row 1200", false), import());
    assert_eq!(
        before.status.code(),
        Some(exit::ERROR),
        "{}",
        explain(&before)
    );
    let err = String::from_utf8_lossy(&before.stderr);
    let added = items_on(&b);
    assert!((500..=1200).contains(&added), "{added}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "import stopped part-way: the file's first {added} row(s) are in the database, \
             the rest are not"
        )) && err.contains(&server_of(&b.url))
            && !err.contains("nothing was changed"),
        "{err}"
    );
    // Cut while committing: the rows of that transaction may be in.
    let during = terminated_while_held(&b, hold("row 2500", true), import());
    assert_eq!(
        during.status.code(),
        Some(exit::UNKNOWN),
        "{}",
        explain(&during)
    );
    let err = String::from_utf8_lossy(&during.stderr);
    let now = items_on(&b);
    assert!(
        err.contains(&format!(
            "import stopped part-way: the file's first {now} row(s) are in the database, and \
             the next ones may be too"
        )) && !err.contains("nothing"),
        "{now}: {err}"
    );
    assert!(now > added && now <= 2500, "{now}");
    let out = import().output().unwrap();
    assert_eq!(out.status.code(), Some(0), "the rerun: {}", explain(&out));
    assert_eq!(items_on(&b), 3000);
}

/// An import with `--define-fields` whose connection is lost after the definitions were
/// committed and before its first rows were (found by scripts/soak, seed 302: it said
/// "nothing imported" while the new field was defined): it says that the fields are kept,
/// as a part-way stop, and a rerun imports into them.
#[test]
fn an_import_cut_after_defining_its_fields_says_they_are_kept() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    PgStore::open(&b.url, Actor::new("boss", "boss"), &PgOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.jsonl");
    let rows: String = (0..20)
        .map(|i| format!("{{\"title\": \"row {i}\", \"extra\": \"v{i}\"}}\n"))
        .collect();
    std::fs::write(&path, rows).unwrap();
    let file = path.to_str().unwrap();
    let import = || caseload(&b.url, "boss", &["import", file, "--define-fields"]);
    let hold = |c: &mut postgres::Client, key| hold_row(c, key, "row 3", false);
    let out = terminated_while_held(&b, hold, import());
    assert_eq!(out.status.code(), Some(exit::ERROR), "{}", explain(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(items_on(&b), 0);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(
            "import stopped part-way: the text field(s) extra it defined first are kept; \
             nothing imported: the connection"
        ),
        "{err}"
    );
    let fields = run(&b.url, "boss", &["field", "list", "default"]);
    assert!(
        String::from_utf8_lossy(&fields.stdout).contains("extra"),
        "{}",
        explain(&fields)
    );
    let out = import().output().unwrap();
    assert_eq!(out.status.code(), Some(0), "the rerun: {}", explain(&out));
    assert_eq!(items_on(&b), 20);
}
