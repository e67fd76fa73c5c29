//! Damaged data, with the real binary: rows whose text is not valid UTF-8 (written by
//! another SQLite client, or bit rot) and random page corruption. One bad row must never
//! stop everyone, and `check` must always finish with its list.

use crate::support;
use crate::support::cli::{Env, explain};

/// Writes bytes that are not UTF-8 into a column of an item, as another client could.
fn spoil(env: &Env, id: i64, column: &str) {
    let c = rusqlite::Connection::open(&env.db).unwrap();
    c.execute(
        &format!("UPDATE items SET {column} = CAST(x'41ff42' AS TEXT) WHERE id = ?1"),
        [id],
    )
    .unwrap();
}

fn no_panic(out: &std::process::Output) {
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !all.contains("panicked")
            && !all.contains("internal error")
            && !all.contains("RUST_BACKTRACE"),
        "{all}"
    );
}

#[test]
fn take_next_passes_over_an_unreadable_first_item() {
    let env = Env::init("producer");
    let bad = env.add("first in take order");
    let good = env.add("second");
    spoil(&env, bad, "title");
    let (id, _) = env.claim("alice", &[]);
    assert_eq!(id, good, "the next readable item is taken");
    let err = env.fails("bob", &["claim"], 4);
    assert!(
        err.contains(&format!("#{bad}")) && err.contains("title is not valid UTF-8"),
        "{err}"
    );
    // The unreadable item is still there, untouched, for someone to deal with.
    assert_eq!(env.show(bad)["lock_user"], serde_json::Value::Null);
}

#[test]
fn listings_mark_an_unreadable_row_and_show_names_the_column() {
    let env = Env::init("producer");
    let bad = env.add("spoiled later");
    env.add("fine");
    spoil(&env, bad, "body");
    let list = env.ok("alice", &["list"]);
    assert!(list.contains("[unreadable: body] spoiled later"), "{list}");
    assert!(list.contains("fine"), "{list}");
    let json: serde_json::Value =
        serde_json::from_str(&env.ok("alice", &["list", "--json"])).unwrap();
    assert_eq!(json[0]["unreadable"][0]["column"], "body");
    assert_eq!(json[0]["body"], "A\u{FFFD}B");
    let show = env.ok("alice", &["show", &bad.to_string()]);
    assert!(
        show.contains("unreadable: body is not valid UTF-8"),
        "{show}"
    );
    // The row can still be dealt with: taken by id and failed with a reason.
    env.ok("alice", &["claim", "--id", &bad.to_string()]);
    env.ok(
        "alice",
        &["fail", &bad.to_string(), "--reason", "body unreadable"],
    );
}

#[test]
fn export_writes_every_readable_row_and_reports_the_rest() {
    let env = Env::init("producer");
    let ids: Vec<i64> = (0..4).map(|i| env.add(&format!("item {i}"))).collect();
    spoil(&env, ids[1], "notes");
    for format in ["csv", "jsonl"] {
        let out = env.run("alice", &["export", "--format", format]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            explain("alice", &["export"], &out, "exit 1")
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        for (i, id) in ids.iter().enumerate() {
            let shown = stdout.contains(&format!("item {i}"));
            assert_eq!(shown, *id != ids[1], "item {i} in {format}:\n{stdout}");
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains("wrote 3 item(s)")
                && err.contains(&format!("#{} (notes is not valid UTF-8)", ids[1])),
            "{err}"
        );
    }
}

#[test]
fn check_names_unreadable_rows() {
    let env = Env::init("producer");
    let id = env.add("x");
    spoil(&env, id, "title");
    let out = env.run("alice", &["check"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("item #{id}: title is not valid UTF-8")),
        "{stdout}"
    );
}

#[test]
fn check_names_an_unreadable_comment() {
    let env = Env::init("producer");
    let id = env.add("x");
    // Comments are never edited (a trigger refuses it): another client adds a bad one.
    let c = rusqlite::Connection::open(&env.db).unwrap();
    c.execute(
        "INSERT INTO comments (item_id, at, author, os_user, text) \
         VALUES (?1, 0, 'alice', 'alice', CAST(x'41ff42' AS TEXT))",
        [id],
    )
    .unwrap();
    let out = env.run("alice", &["check"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("comments row 1: text is not valid UTF-8"),
        "{stdout}"
    );
}

#[test]
fn the_tui_marks_an_unreadable_row_and_takes_the_next_readable_one() {
    let db = support::tui::Db::new();
    let clock = support::tui::Clock::at(support::tui::T0);
    let mut feeder = db.store("feeder", &clock);
    let ids = support::tui::add_items(&mut feeder, "helpdesk", &["Spoiled", "Order toner"]);
    rusqlite::Connection::open(&db.path)
        .unwrap()
        .execute(
            "UPDATE items SET title = CAST(x'5370ff696c6564' AS TEXT) WHERE id = ?1",
            [ids[0]],
        )
        .unwrap();
    let mut s = support::tui::start(db.store("alice", &clock), &clock, 100, 20, false);
    s.step(None);
    let screen = support::tui::screen(&s.state);
    assert!(
        screen.contains("[unreadable: title] Sp\u{FFFD}iled"),
        "{screen}"
    );
    s.step(support::tui::key('n'));
    s.step(None);
    let screen = support::tui::screen(&s.state);
    assert!(screen.contains("Order toner"), "{screen}");
    let mut look = db.store("look", &clock);
    use caseload::store::Reads;
    assert_eq!(
        look.item(ids[1]).unwrap().lock_user.as_deref(),
        Some("alice")
    );
    assert_eq!(look.item(ids[0]).unwrap().lock_user, None);
}

/// A small xorshift generator: the corruptions are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn check_always_finishes_on_random_page_corruption() {
    let env = Env::init("producer");
    // A small database with every table used: items with bodies and notes, locks, events,
    // finished items, two queues.
    for i in 0..40 {
        let q = if i % 2 == 0 { "a" } else { "b" };
        let body = format!("body of item {i} ").repeat(20);
        env.ok(
            "producer",
            &[
                "add",
                "--title",
                &format!("item {i}"),
                "--queue",
                q,
                "--body",
                &body,
                "--create-queue",
            ],
        );
    }
    for _ in 0..6 {
        let (id, _) = env.claim("alice", &[]);
        env.ok("alice", &["complete", &id.to_string(), "--result", "done"]);
    }
    env.claim("bob", &[]);
    {
        let c = rusqlite::Connection::open(&env.db).unwrap();
        c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    }
    let clean = std::fs::read(&env.db).unwrap();
    let page = 4096usize;
    let pages = clean.len() / page;
    assert!(pages >= 8, "the test database has {pages} pages");
    let mut rng = Rng(0x5eed_cafe_f00d);
    let runs = 120;
    let mut found_problems = 0;
    for run in 0..runs {
        let mut bytes = clean.clone();
        let p = (rng.next() as usize) % pages;
        let start = p * page;
        // Half the runs overwrite the whole page, half a short stretch of it.
        let len = if run % 2 == 0 {
            page
        } else {
            16 + (rng.next() as usize) % 256
        };
        let at = start
            + if len == page {
                0
            } else {
                (rng.next() as usize) % (page - len)
            };
        for b in &mut bytes[at..at + len] {
            *b = rng.next() as u8;
        }
        std::fs::write(&env.db, &bytes).unwrap();
        let _ = std::fs::remove_file(env.db.with_extension("db-wal"));
        let _ = std::fs::remove_file(env.db.with_extension("db-shm"));
        let out = env.run("alice", &["check"]);
        let what = format!("run {run}: page {p} bytes {at}..{}", at + len);
        let code = out.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "{what}{}",
            explain("alice", &["check"], &out, "exit 0 or 1")
        );
        no_panic(&out);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if code == Some(1) {
            found_problems += 1;
            assert_eq!(stderr.trim_end().lines().count(), 1, "{what}: {stderr}");
            // A list of findings, or for a file SQLite does not recognise at all, the one
            // line that says so.
            let listed = !stdout.trim().is_empty() && stderr.contains("check found");
            let not_sqlite = stdout.trim().is_empty() && stderr.contains("not an SQLite file");
            assert!(
                listed || not_sqlite,
                "{what}: exit 1 needs a list{}",
                explain("alice", &["check"], &out, "a list")
            );
            // Advice keeps data: never restore over it, delete or replace files.
            for bad in ["restore", "delete the", "remove the", "replace the"] {
                assert!(
                    !stdout.contains(bad) && !stderr.contains(bad),
                    "{what}: {stdout}{stderr}"
                );
            }
            eprintln!("{what}: {}", stdout.lines().next().unwrap_or(&stderr));
        } else {
            assert_eq!(stdout.trim(), "ok", "{what}");
        }
    }
    assert!(
        found_problems > runs / 4,
        "only {found_problems} of {runs} corruptions were found"
    );
}

/// `check --quick` looks at the items, not at the figures kept from the history: a row
/// of the holds edited by hand is found by the full check only.
#[test]
fn check_quick_finds_broken_items_but_leaves_the_history_to_the_full_check() {
    let env = Env::init("producer");
    let id = env.add("x");
    let (taken, _) = env.claim("alice", &[]);
    assert_eq!(taken, id);
    env.ok("alice", &["complete", &id.to_string()]);
    assert_eq!(env.ok("alice", &["check", "--quick"]).trim(), "ok");
    let c = rusqlite::Connection::open(&env.db).unwrap();
    c.execute_batch("UPDATE holds SET holder = 'mallory'")
        .unwrap();
    assert_eq!(env.ok("alice", &["check", "--quick"]).trim(), "ok");
    let out = env.run("alice", &["check"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("holds table"));
    c.execute_batch("PRAGMA ignore_check_constraints = ON; UPDATE items SET state = 'lost'")
        .unwrap();
    let out = env.run("alice", &["check", "--quick"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("item #{id} has an unknown state")),
        "{stdout}"
    );
    assert!(!stdout.contains("holds table"), "{stdout}");
}
