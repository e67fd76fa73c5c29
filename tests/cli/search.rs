//! `caseload list --search`: the real binary, every list flag with it, JSON, bad input.

use crate::support::cli::Env;

#[test]
fn list_search_finds_parts_of_words_ignoring_case_and_accents() {
    let env = Env::new();
    env.ok("boss", &["init"]);
    let order = env.add("Pick & pack order #A-69529");
    let jose = env.add("Callback for José");
    env.add("Printer on floor 3");
    let out = env.ok("viewer", &["list", "--search", "69529"]);
    assert!(out.contains(&format!("#{order}")), "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");
    let out = env.ok("viewer", &["list", "--search", "JOSE callb", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ids: Vec<i64> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [jose]);
}

#[test]
fn list_search_combines_with_state_queue_mine_and_limit() {
    let env = Env::new();
    env.ok("boss", &["init"]);
    let done = env.add("Refund Nordlicht 1");
    env.ok(
        "producer",
        &[
            "add",
            "--title",
            "Refund Nordlicht 2",
            "--queue",
            "billing",
            "--create-queue",
        ],
    );
    let open = env.add("Refund Nordlicht 3");
    let (id, token) = env.claim("alice", &["--id", &done.to_string()]);
    env.ok(
        "alice",
        &["complete", &id.to_string(), "--token", &token.to_string()],
    );
    let titles = |user: &str, args: &[&str]| -> Vec<String> {
        let out = env.ok(user, args);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .map(|i| i["title"].as_str().unwrap().to_string())
            .collect()
    };
    let s = ["list", "--search", "nordlicht", "--json"];
    assert_eq!(
        titles("viewer", &s),
        ["Refund Nordlicht 2", "Refund Nordlicht 3"]
    );
    let all = [&s[..], &["--state", "all"]].concat();
    assert_eq!(titles("viewer", &all).len(), 3);
    let done_only = [&s[..], &["--state", "done"]].concat();
    assert_eq!(titles("viewer", &done_only), ["Refund Nordlicht 1"]);
    let billing = [&s[..], &["--queue", "billing"]].concat();
    assert_eq!(titles("viewer", &billing), ["Refund Nordlicht 2"]);
    let limited = [&s[..], &["--limit", "1"]].concat();
    assert_eq!(titles("viewer", &limited).len(), 1);
    env.claim("bob", &["--id", &open.to_string()]);
    let mine = [&s[..], &["--mine"]].concat();
    assert_eq!(titles("bob", &mine), ["Refund Nordlicht 3"]);
    assert!(titles("alice", &mine).is_empty());
}

#[test]
fn an_empty_search_is_a_usage_error_and_changes_nothing() {
    let env = Env::new();
    env.ok("boss", &["init"]);
    env.add("Something");
    let before = env.fingerprint();
    let err = env.fails("viewer", &["list", "--search", "   "], 2);
    assert!(err.contains("--search"), "{err}");
    assert!(err.contains("at least one word"), "{err}");
    assert_eq!(env.fingerprint(), before);
}

/// The search index's high-water mark and the last item's id (`None`: no item).
fn mark(env: &Env) -> (i64, Option<i64>) {
    let c =
        rusqlite::Connection::open_with_flags(&env.db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    c.query_row(
        "SELECT indexed, (SELECT max(id) FROM items) FROM search_meta",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap_or((0, None))
}

/// A CSV of `n` rows: row i is titled `Case i` with the word `w<i>x` in its body.
fn csv(env: &Env, n: usize) -> String {
    let mut text = String::from("title,body\n");
    for i in 0..n {
        text.push_str(&format!("Case {i},Call Frau Müller about w{i}x\n"));
    }
    let path = env.dir.path().join(format!("rows-{n}.csv"));
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// `caseload import PATH` started as its own process, its output dropped.
fn import_in_background(env: &Env, path: &str) -> std::process::Child {
    env.command("p", &["import", path])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn found(env: &Env, word: &str) -> Vec<i64> {
    let out = env.ok(
        "viewer",
        &["list", "--state", "all", "--search", word, "--json"],
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    (v.as_array().unwrap().iter())
        .map(|i| i["id"].as_i64().unwrap())
        .collect()
}

/// An import indexes what it added: right after it the index's mark is at the last row
/// (a search reads the index, no tail is left to scan), and searches find the rows.
/// With --no-index the rows are left to the scan, found all the same; the next import
/// indexes them too. No progress line when stderr is not a terminal.
#[test]
fn import_indexes_what_it_added_for_search() {
    let env = Env::init("boss");
    let out = env
        .command("p", &["import", &csv(&env, 300)])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mark(&env), (300, Some(300)), "indexed up to the last row");
    assert_eq!(found(&env, "w17x"), [18]);
    assert_eq!(found(&env, "MULLER w299x"), [300]);
    let later = env.dir.path().join("later.csv");
    std::fs::write(&later, "title\nLate one\nLate two\n").unwrap();
    env.ok("p", &["import", "--no-index", later.to_str().unwrap()]);
    assert_eq!(mark(&env), (300, Some(302)), "left to the scan");
    assert_eq!(found(&env, "late"), [301, 302]);
    env.ok("p", &["import", &csv(&env, 1)]);
    assert_eq!(
        mark(&env),
        (303, Some(303)),
        "the next import indexes what was left"
    );
    assert_eq!(found(&env, "late two"), [302]);
}

/// An import whose indexing fails (here: the index holds another version's text, as
/// when a caseload of another version set it up) keeps its rows, says why on stderr and
/// exits 0; the rows are found by the scan and check is ok.
#[test]
fn an_import_whose_indexing_fails_keeps_its_rows_searchable() {
    let env = Env::init("boss");
    let c = rusqlite::Connection::open(&env.db).unwrap();
    c.execute("UPDATE search_meta SET version = 'other'", [])
        .unwrap();
    drop(c);
    let out = env
        .command("p", &["import", &csv(&env, 50)])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("the search index stopped after 0 row(s)")
            && err.contains("searches scan the rest"),
        "{err}"
    );
    assert_eq!(mark(&env), (0, Some(50)));
    assert_eq!(found(&env, "w42x"), [43]);
    assert_eq!(env.ok("boss", &["check"]).trim(), "ok");
}

/// An import killed while it indexes (beside its rows, so part-way through writing them
/// too) leaves every row it wrote searchable, those in the index and those past its mark
/// alike; check is ok; running it again adds the rest and indexes everything.
#[test]
fn an_import_killed_while_indexing_leaves_every_row_searchable() {
    let env = Env::init("boss");
    let rows = 60_000;
    let path = csv(&env, rows);
    let mut child = import_in_background(&env, &path);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    loop {
        if mark(&env).0 > 0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "nothing indexed");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let (indexed, last) = mark(&env);
    let last = last.unwrap();
    assert!(indexed > 0 && indexed <= last, "{indexed} of {last}");
    assert_eq!(found(&env, "w0x"), [1], "in the index");
    assert_eq!(
        found(&env, &format!("w{}x", last - 1)),
        [last],
        "the last row written"
    );
    assert_eq!(env.ok("boss", &["check"]).trim(), "ok");
    let out = env.ok("p", &["import", &path]);
    let added = rows as i64 - last;
    assert!(
        out.contains(&format!("Imported {added} new item(s)")),
        "{out}"
    );
    assert_eq!(mark(&env), (rows as i64, Some(rows as i64)));
    assert_eq!(found(&env, &format!("w{}x", rows - 1)), [rows as i64]);
}

/// Rows changed while an import indexes them beside it (here their notes, by another
/// connection, as a holder's save does: the newest row written and one well before it,
/// again and again) are found by their new text once the import is done, whether a change
/// came before the indexer read the row, between its reading and its writing, or after.
#[test]
fn rows_changed_while_an_import_indexes_them_are_found_by_their_new_text() {
    let env = Env::init("boss");
    let rows = 60_000;
    let path = csv(&env, rows);
    let mut child = import_in_background(&env, &path);
    let c = rusqlite::Connection::open(&env.db).unwrap();
    c.busy_timeout(std::time::Duration::from_secs(60)).unwrap();
    let mut latest: std::collections::BTreeMap<i64, u64> = Default::default();
    let mut k = 0u64;
    while child.try_wait().unwrap().is_none() {
        let last: Option<i64> = c
            .query_row("SELECT max(id) FROM items", [], |r| r.get(0))
            .unwrap();
        for id in last.into_iter().flat_map(|l| [l, (l / 2).max(1)]) {
            k += 1;
            c.execute(
                "UPDATE items SET notes = ?2 WHERE id = ?1",
                (id, format!("changed zz{k}q")),
            )
            .unwrap();
            latest.insert(id, k);
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert!(child.wait().unwrap().success());
    assert!(
        latest.len() > 2,
        "changed while importing: {}",
        latest.len()
    );
    assert_eq!(mark(&env), (rows as i64, Some(rows as i64)));
    let changed: Vec<i64> = latest.keys().copied().collect();
    let all_found = |env: &Env| -> Vec<i64> {
        let out = env.ok(
            "viewer",
            &[
                "list", "--state", "all", "--search", "changed", "--limit", "0", "--json",
            ],
        );
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let mut ids: Vec<i64> = (v.as_array().unwrap().iter())
            .map(|i| i["id"].as_i64().unwrap())
            .collect();
        ids.sort_unstable();
        ids
    };
    assert_eq!(all_found(&env), changed);
    let (id, k) = latest.iter().next_back().unwrap();
    assert_eq!(found(&env, &format!("zz{k}q")), [*id]);
    // Indexed again from what is dirty (by the next import): the same answers.
    env.ok("p", &["import", &csv(&env, 1)]);
    let next = rows as i64 + 1;
    assert_eq!(mark(&env), (next, Some(next)));
    assert_eq!(all_found(&env), changed);
    assert_eq!(env.ok("boss", &["check"]).trim(), "ok");
}

/// A search counts no further than one past 1,000: `list` says "100 of more than 1,000
/// shown", never a capped count as if exact, on both backends; an unsearched list's
/// count is exact.
#[test]
fn a_capped_count_is_never_shown_as_exact() {
    let pg = crate::support::backend::PgBackend::from_env();
    let mut dbs: Vec<Env> = vec![Env::new()];
    if let Some(pg) = &pg {
        dbs.push(Env {
            db: pg.url.clone().into(),
            ..Env::new()
        });
    }
    for env in dbs {
        env.ok("boss", &["init"]);
        let mut text = String::from("title\n");
        for i in 0..1234 {
            text.push_str(&format!("Refund {i}\n"));
        }
        let path = env.dir.path().join("many.csv");
        std::fs::write(&path, text).unwrap();
        env.ok("boss", &["import", path.to_str().unwrap()]);
        let said = |args: &[&str]| {
            let out = env.run("viewer", args);
            assert!(out.status.success(), "{out:?}");
            String::from_utf8_lossy(&out.stderr).trim().to_string()
        };
        assert_eq!(
            said(&["list", "--search", "refund"]),
            "100 of more than 1,000 shown (use --limit N for more, --limit 0 for all)"
        );
        assert_eq!(
            said(&["list", "--search", "refund", "--limit", "1100"]),
            "1,100 shown; more may match (use --limit 0 for all)"
        );
        assert_eq!(
            said(&["list", "--search", "refund 2"]),
            "100 of 343 shown (use --limit N for more, --limit 0 for all)"
        );
        assert_eq!(
            said(&["list"]),
            "100 of 1,234 shown (use --limit N for more, --limit 0 for all)"
        );
        assert_eq!(said(&["list", "--search", "refund", "--limit", "0"]), "");
    }
}
