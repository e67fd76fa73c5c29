//! Search for words of one or two characters (found through the trigrams that begin with
//! them), search text that looks like index syntax, the plan a list and its count share,
//! and the upgrade of a file indexed by the previous schema. Every answer is compared with
//! the folding rule (`Search::matches`) applied to what the store holds.

use crate::support::backend::Adds;
use crate::support::backend::{Backend, SqliteBackend, add, setup};
use caseload::domain::search::{COUNT_CAP, Search};
use caseload::domain::{Actor, Item, NewItem};
use caseload::store::{ListFilter, Reads, StateFilter, Store, Writes};

conformance!(
    short_words_give_the_rule_s_answer_on_every_plan,
    search_text_never_reaches_the_index_as_syntax,
    words_the_index_cannot_answer_are_found_all_the_same,
);

const STATES: [StateFilter; 4] = [
    StateFilter::Open,
    StateFilter::Done,
    StateFilter::Failed,
    StateFilter::All,
];

/// Every item, whatever its state.
fn everything(s: &mut dyn Store) -> Vec<Item> {
    s.list(&ListFilter {
        state: StateFilter::All,
        limit: 10_000,
        ..ListFilter::default()
    })
    .unwrap()
}

/// Lists and counts `text` over each state and compares both with the rule applied to
/// the items the store holds, in the list's own order.
fn assert_rule(s: &mut dyn Store, searches: &[&str], stage: &str) {
    let items = everything(s);
    for text in searches {
        let rule = Search::parse(text);
        for state in STATES {
            let plain = ListFilter {
                state,
                limit: 10_000,
                ..ListFilter::default()
            };
            let want: Vec<i64> = s
                .list(&plain)
                .unwrap()
                .iter()
                .filter(|listed| {
                    let it = items.iter().find(|i| i.id == listed.id).unwrap();
                    rule.as_ref()
                        .is_none_or(|r| r.id() == Some(it.id) || r.matches(&it.searched_texts()))
                })
                .map(|i| i.id)
                .collect();
            let f = ListFilter {
                text: Some(text.to_string()),
                ..plain
            };
            let got: Vec<i64> = s.list(&f).unwrap().iter().map(|i| i.id).collect();
            assert_eq!(got, want, "{stage}: {text:?} {state:?}");
            assert_eq!(
                s.count(&f).unwrap(),
                (want.len() as u64).min(COUNT_CAP + 1),
                "{stage}: count of {text:?} {state:?}"
            );
        }
    }
}

/// 3,000 items whose titles, bodies and params carry short words at the start, in the
/// middle and at the end of a column, some accented, some in many items (scanned for),
/// some in a few hundred (a walk of the open list with a membership test), some in a few
/// (looked up); finished items whose result or error ends with one (the error is the last
/// column: the very end of the indexed text).
fn short_word_items(s: &mut dyn Store) -> Vec<i64> {
    let n = 3000;
    let letters: Vec<char> = ('a'..='z').collect();
    let items: Vec<NewItem> = (0..n)
        .map(|i| {
            let mut title = format!("Widget {i}");
            if i % 8 == 0 {
                title = format!("Qé {title}");
            }
            if i % 400 == 7 {
                title = format!("Widget Ж {i}");
            }
            if i % 3 == 0 {
                title.push_str(" 3B");
            }
            if i % 40 == 1 {
                // `k` begins a different trigram in nearly every one of these.
                title.push_str(&format!(" k{}{}", letters[i / 40 % 26], i % 10));
            }
            let mut body = format!("Body of {i}");
            if i % 200 == 3 {
                body = format!("Ŋ {body}");
            }
            if i % 97 == 0 {
                body.push_str(" with ÿw inside");
            }
            if i % 50 == 0 {
                body.push_str(" zk");
            }
            let params = if i % 250 == 5 {
                r#"{"code": "Pø"}"#.to_string()
            } else {
                "{}".to_string()
            };
            NewItem {
                body,
                params,
                ..NewItem::titled(&title)
            }
        })
        .collect();
    s.add_batch(&items).unwrap();
    let ids: Vec<i64> = everything(s).iter().map(|i| i.id).collect();
    assert_eq!(ids.len(), n);
    for (k, &i) in [10, 11, 12, 13, 14].iter().enumerate() {
        let it = s.take(ids[i]).unwrap();
        let reason = if k == 4 { "torn ф" } else { "paper jam xq" };
        s.fail(ids[i], it.lock_token, reason).unwrap();
    }
    for i in [20, 21, 22] {
        let it = s.take(ids[i]).unwrap();
        s.complete(ids[i], it.lock_token, Some("sent vq")).unwrap();
    }
    ids
}

const SHORT_SEARCHES: &[&str] = &[
    "qé",
    "QE",
    "3b",
    "ж",
    "k",
    "zk",
    "yw",
    "Ŋ",
    "po",
    "xq",
    "ф",
    "vq",
    "uq",
    "hj",
    "e",
    "of",
    "7",
    "qe 3b",
    "zk widget",
    "ж 0",
    "k 3b",
    "xq jam",
    "3b hj",
];

fn short_words_give_the_rule_s_answer_on_every_plan(b: &dyn Backend) {
    let mut boss = setup(b);
    let ids = short_word_items(&mut *boss);
    // Each of these has something to find (the rule's answer is not trivially empty).
    for text in ["qé", "3b", "ж", "k", "zk", "yw", "ŋ", "po", "xq", "ф", "vq"] {
        let f = ListFilter {
            state: StateFilter::All,
            text: Some(text.into()),
            ..ListFilter::default()
        };
        assert!(boss.count(&f).unwrap() > 0, "{text:?}");
    }
    assert_rule(&mut *boss, SHORT_SEARCHES, "not indexed");
    boss.index_search(ids.len() / 2).unwrap();
    assert_rule(&mut *boss, SHORT_SEARCHES, "half indexed");
    while boss.index_search(1000).unwrap() > 0 {}
    // A short word at the very end of the text (`xq`, `ф` end the error) is found here
    // only through the index.
    assert_rule(&mut *boss, SHORT_SEARCHES, "indexed");
    for i in [30, 31, 700] {
        let it = boss.take(ids[i]).unwrap();
        boss.save_notes(ids[i], it.lock_token, "Üq later").unwrap();
    }
    let it = boss.take(ids[40]).unwrap();
    boss.fail(ids[40], it.lock_token, "lost ф").unwrap();
    assert_rule(&mut *boss, SHORT_SEARCHES, "edited after indexing");
    while boss.index_search(1000).unwrap() > 0 {}
    assert_rule(&mut *boss, SHORT_SEARCHES, "re-indexed");
}

/// Text that FTS5 would read as syntax is searched for as text, on every plan: no error
/// reaches the user, and the answer is the rule's.
fn search_text_never_reaches_the_index_as_syntax(b: &dyn Backend) {
    let mut boss = setup(b);
    let items: Vec<NewItem> = (0..60)
        .map(|i| NewItem::titled(&format!("Row {i} said \"OR\" - NEAR ^x* a\u{1}b Ж")))
        .collect();
    boss.add_batch(&items).unwrap();
    add(&mut *boss, "plain");
    let searches = [
        "\"", "\"\"", "*", "OR", "or", "NEAR", "NEAR(", "^", "-", "- -", "\u{1}", "a\u{1}b",
        "\u{7f}", "\t", "a\u{0}b", "\u{0}", "ж", "é", "   ", "\"or", "x*", "AND NOT", "(", ")",
        ":", "{}", "+",
    ];
    assert_rule(&mut *boss, &searches, "not indexed");
    while boss.index_search(1000).unwrap() > 0 {}
    assert_rule(&mut *boss, &searches, "indexed");
}

/// Words the index cannot answer by their trigrams are found all the same: U+FFFE and
/// U+FFFF (the trigram tokenizer indexes both as U+FFFD) and a one-character word that
/// begins more distinct trigrams than one lookup joins (found by the scan, or through
/// the other word's key).
fn words_the_index_cannot_answer_are_found_all_the_same(b: &dyn Backend) {
    let mut boss = setup(b);
    let mut items = vec![
        NewItem::titled("code \u{FFFF} here"),
        NewItem::titled("x\u{FFFE}y tail"),
        NewItem::titled("ends in x\u{FFFF}"),
        NewItem::titled("replacement \u{FFFD} char"),
    ];
    // `k` followed by 700 different characters, some of the items also `blue`.
    items.extend((0..700u32).map(|i| {
        let c = char::from_u32(0x4E00 + i).unwrap();
        let colour = if i % 7 == 0 { "blue" } else { "grey" };
        NewItem::titled(&format!("k{c} {colour} item {i}"))
    }));
    boss.add_batch(&items).unwrap();
    let searches = [
        "\u{FFFF}",
        "\u{FFFE}",
        "x\u{FFFF}",
        "\u{FFFE}y",
        "x\u{FFFE}y",
        "\u{FFFD}",
        "k",
        "k blue",
        "blue k",
        "k item",
        "k\u{4E07}",
    ];
    assert_rule(&mut *boss, &searches, "not indexed");
    while boss.index_search(1000).unwrap() > 0 {}
    assert_rule(&mut *boss, &searches, "indexed");
    for (text, n) in [
        ("\u{FFFF}", 2),
        ("\u{FFFE}", 1),
        ("k", 700),
        ("k blue", 100),
    ] {
        let f = ListFilter {
            state: StateFilter::All,
            text: Some(text.into()),
            limit: 1000,
            ..ListFilter::default()
        };
        assert_eq!(boss.list(&f).unwrap().len(), n, "{text:?}");
    }
}

/// A list and then a count of the same search share one plan on a connection; a change
/// by this connection or another one is seen at once all the same.
#[test]
fn a_search_s_shared_plan_sees_every_change() {
    let b = SqliteBackend::new();
    let mut a = setup(&b);
    let items: Vec<NewItem> = (0..300)
        .map(|i| {
            NewItem::titled(&if i % 30 == 0 {
                format!("Crate {i} zk")
            } else {
                format!("Crate {i}")
            })
        })
        .collect();
    a.add_batch(&items).unwrap();
    while a.index_search(1000).unwrap() > 0 {}
    // One search throughout: the plan kept from the step before would answer it.
    let searches = ["zk"];
    assert_rule(&mut *a, &searches, "indexed");
    // This connection: an added item (the tail), notes on an indexed one.
    add(&mut *a, "New zk crate");
    assert_rule(&mut *a, &searches, "added here");
    let mine = a.take(5).unwrap();
    a.save_notes(5, mine.lock_token, "zk now").unwrap();
    assert_rule(&mut *a, &searches, "noted here");
    // Another connection: the same, and indexing (the mark moves).
    let mut other = b.open("alice", 0);
    add(&mut *other, "Zk from alice");
    assert_rule(&mut *a, &searches, "added by another");
    let it = other.take(6).unwrap();
    other.save_notes(6, it.lock_token, "zk too").unwrap();
    assert_rule(&mut *a, &searches, "noted by another");
    other.release(6, it.lock_token).unwrap();
    while other.index_search(1000).unwrap() > 0 {}
    assert_rule(&mut *a, &searches, "indexed by another");
    a.save_notes(5, mine.lock_token, "").unwrap();
    assert_rule(&mut *a, &searches, "notes cleared here");
}

/// A file of schema version 8 with a search index of the old form (no terminator, a
/// case-folding tokenizer) is upgraded without indexing (the mark goes back to 0), and
/// answers by the rule before and after the index is built again.
#[test]
fn a_version_8_file_searches_right_before_and_after_re_indexing() {
    use caseload::store::migrate::{self, LATEST};
    use caseload::store::sqlite::{OpenOptions, SqliteStore};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        migrate::create_at_version(&c, 8).unwrap();
        c.execute_batch(
            "INSERT INTO queues (name) VALUES ('default'); \
             INSERT INTO users (name, role) VALUES ('boss', 'supervisor'); \
             INSERT INTO items (id, queue, title, body, created_at, created_by) VALUES \
                 (1, 'default', 'Order 3b', 'Body', 1000, 'boss'), \
                 (2, 'default', 'Refund for Müller', 'call back', 1000, 'boss'), \
                 (3, 'default', 'Printer', 'tray 3B jams', 1000, 'boss'); \
             INSERT INTO items (id, queue, title, body, state, error, created_at, \
                 created_by, finished_at, finished_by) VALUES \
                 (4, 'default', 'Label', 'Body', 'failed', 'jam xq', 1000, 'boss', 2000, \
                  'boss'); \
             INSERT INTO item_search (rowid, text) SELECT id, lower(concat_ws(char(10), \
                 title, body, notes, result, params, error)) FROM items; \
             UPDATE search_meta SET indexed = 4;",
        )
        .unwrap();
    }
    let opts = OpenOptions {
        allow_network_fs: true,
        ..OpenOptions::default()
    };
    let mut s = SqliteStore::open(&path, Actor::new("boss", "x"), &opts).unwrap();
    let (version, indexed, terms): (i64, i64, i64) = s
        .connection()
        .query_row(
            "SELECT (SELECT user_version FROM pragma_user_version), \
             (SELECT indexed FROM search_meta), (SELECT count(*) FROM search_postings)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(
        (version, indexed, terms),
        (LATEST, 0, 0),
        "nothing indexed yet"
    );
    let searches = ["3b", "xq", "muller", "jam", "b", "q", "zz"];
    assert_rule(&mut s, &searches, "upgraded, not indexed");
    // A caseload of schema 8 still running (a TUI open over the upgrade) indexes with
    // its own statement, which knows no terminators: it must fail and change nothing.
    let old_indexing = "INSERT INTO item_search (rowid, text) SELECT id, \
         caseload_fold(concat_ws(char(10), title, body, notes, result, params, error)) \
         FROM items WHERE id > (SELECT indexed FROM search_meta) AND id <= 4";
    let err = s.connection().execute(old_indexing, []).unwrap_err();
    assert!(
        err.to_string().contains("no such table: item_search"),
        "{err}"
    );
    let terms: i64 = s
        .connection()
        .query_row("SELECT count(*) FROM search_postings", [], |r| r.get(0))
        .unwrap();
    assert_eq!(terms, 0, "the old statement indexed nothing");
    while s.index_search(100).unwrap() > 0 {}
    let ends: i64 = s
        .connection()
        .query_row(
            "SELECT count(*) FROM search_postings WHERE tri = 'xq' || char(10)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(ends, 1, "the error's last word begins a trigram");
    assert_rule(&mut s, &searches, "re-indexed");
    assert_eq!(s.check().unwrap(), Vec::<String>::new());
}

/// A file of schema version 9 (its index's column `folded`, no version) is upgraded to
/// an index with an explicit version, rebuilt behind the mark. A caseload of schema 9 still
/// running indexes with its own statement, which must fail and change nothing; a caseload
/// of another version (the index's version not its own) adds nothing either, and searches
/// answer by the rule all along.
#[test]
fn the_index_takes_rows_only_from_a_caseload_of_its_version() {
    use caseload::domain::fields::search_version;
    use caseload::store::migrate;
    use caseload::store::sqlite::{OpenOptions, SqliteStore};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nine.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        migrate::create_at_version(&c, 9).unwrap();
        c.execute_batch(
            "INSERT INTO queues (name) VALUES ('default'); \
             INSERT INTO users (name, role) VALUES ('boss', 'supervisor'); \
             INSERT INTO items (id, queue, title, body, params, created_at, created_by) VALUES \
                 (1, 'default', 'Order 3b', 'Body', '{\"sku\": \"zq-1\"}', 1000, 'boss'), \
                 (2, 'default', 'Refund for Müller', 'call back', '{}', 1000, 'boss');",
        )
        .unwrap();
    }
    let opts = OpenOptions {
        allow_network_fs: true,
        ..OpenOptions::default()
    };
    let mut s = SqliteStore::open(&path, Actor::new("boss", "x"), &opts).unwrap();
    let meta = |s: &SqliteStore| -> (i64, String, i64) {
        s.connection()
            .query_row(
                "SELECT indexed, version, (SELECT count(*) FROM search_postings) \
                 FROM search_meta",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap()
    };
    assert_eq!(meta(&s), (0, search_version(), 0), "upgraded, not indexed");
    let searches = ["3b", "zq", "muller", "b", "nothing"];
    assert_rule(&mut s, &searches, "upgraded, not indexed");
    let nine = "INSERT INTO item_search (rowid, folded) SELECT id, caseload_fold(concat_ws(\
         char(10), title, body, notes, result, params, error)) || char(10) || char(10) \
         FROM items WHERE id > (SELECT indexed FROM search_meta) AND id <= 2";
    let err = s.connection().execute(nine, []).unwrap_err();
    assert!(
        err.to_string().contains("no such table: item_search"),
        "{err}"
    );
    assert_eq!(meta(&s).2, 0, "schema 9's statement indexed nothing");
    // Another version's index: this caseload adds nothing to it, and says why.
    s.connection()
        .execute("UPDATE search_meta SET version = '1:title'", [])
        .unwrap();
    let err = s.index_search(100).unwrap_err().to_string();
    assert!(
        err.contains("version '1:title'") && err.contains(&search_version()),
        "{err}"
    );
    assert_eq!(meta(&s), (0, "1:title".to_string(), 0), "nothing indexed");
    assert_rule(&mut s, &searches, "another version's index");
    s.connection()
        .execute("UPDATE search_meta SET version = ?1", [search_version()])
        .unwrap();
    while s.index_search(100).unwrap() > 0 {}
    assert_eq!(meta(&s).0, 2, "indexed");
    assert_rule(&mut s, &searches, "indexed");
    assert_eq!(s.check().unwrap(), Vec::<String>::new());
}
