//! PostgreSQL search through pg_trgm's index (issue 32 §4, migrations 23 and 30) gives
//! exactly the scan's answers: the same rows, windows and capped counts for random words,
//! over items whose searched text is in every searched column, in any case, with accents;
//! and `caseload_search_index()` adds the index to a schema made before the extension.

use crate::support::backend::{Adds, Backend, PgBackend, setup};
use caseload::domain::NewItem;
use caseload::domain::search::COUNT_CAP;
use caseload::store::{AddOptions, ListFilter, StateFilter, Store};

/// The extension in the test database (CI installs it; a race with another test process
/// creating it at the same moment is fine).
fn with_trgm(b: &PgBackend) {
    let _ = b
        .admin()
        .batch_execute("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public");
}

/// What search uses on `b`'s schema: whether the server keeps `item_search` (its
/// triggers on items), and whether the trigram index exists.
fn shape(b: &PgBackend) -> (bool, bool) {
    let row = b
        .admin()
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'items'::regclass \
             AND tgname = 'items_search_insert'), \
             EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() \
             AND indexname = 'item_search_trgm')",
            &[],
        )
        .unwrap();
    (row.get(0), row.get(1))
}

/// Takes the search index away (a schema made before pg_trgm was installed): searches
/// scan.
const NO_INDEX: &str = "DROP FUNCTION caseload_search_row() CASCADE; \
    DROP INDEX item_search_trgm; TRUNCATE item_search, item_search_pending";

/// A small deterministic generator (no dependency for one test).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn pick<'a>(&mut self, of: &[&'a str]) -> &'a str {
        of[self.next() as usize % of.len()]
    }
}

/// Words of every frequency: `common` in half the items, `often` in a tenth, names in
/// a sixteenth, numbers in one each.
const WORDS: &[&str] = &[
    "Müller",
    "MÜLLER",
    "José",
    "jose",
    "Łódź",
    "Straße",
    "ΣΟΦΙΑ",
    "Kraków",
    "café",
    "Printer",
    "toner",
    "LEDGER",
    "refund",
    "Nordlicht",
    "order#A-69529",
    "x_y%z",
    "back\\slash",
    "東京",
    "Zoë",
    "Ørsted",
];

fn text(r: &mut Rng, i: usize, words: usize) -> String {
    let mut out = Vec::new();
    for _ in 0..words {
        out.push(r.pick(WORDS).to_string());
    }
    if i.is_multiple_of(2) {
        out.push("common".into());
    }
    if i.is_multiple_of(10) {
        out.push("Often".into());
    }
    out.push(format!("n{i:05}"));
    out.join(" ")
}

/// Everything a list and count of `text` over `state` show, through windows of 7 rows
/// at a few offsets as the TUI reads them, and whole.
fn answers(s: &mut dyn Store, state: StateFilter, text: &str) -> Vec<(Vec<i64>, u64)> {
    let mut out = Vec::new();
    for (offset, limit) in [(0, 7), (300, 7), (0, 5000)] {
        let f = ListFilter {
            state,
            text: Some(text.to_string()),
            offset,
            limit,
            ..ListFilter::default()
        };
        let ids = s.list(&f).unwrap().iter().map(|i| i.id).collect();
        out.push((ids, s.count(&f).unwrap()));
    }
    out
}

#[test]
fn the_index_answers_exactly_as_the_scan() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    with_trgm(&b);
    let mut boss = setup(&b);
    assert_eq!(shape(&b), (true, true), "a new schema has the index");
    let mut r = Rng(32);
    let n = 3000;
    let items: Vec<NewItem> = (0..n)
        .map(|i| NewItem {
            body: text(&mut r, i, 6),
            params: format!("{{\"ref\": \"{}\"}}", r.pick(WORDS).replace('\\', "\\\\")),
            source: (i % 7 == 0).then(|| r.pick(WORDS).to_string()),
            ..NewItem::titled(&text(&mut r, i + 1, 2))
        })
        .collect();
    boss.add_batch(&items).unwrap();
    // Notes, results and failure reasons are searched too.
    for _ in 0..40 {
        let it = boss.take_next(&Default::default()).unwrap();
        let words = text(&mut r, 7, 3);
        boss.save_notes(it.id, it.lock_token, &words).unwrap();
        match it.id % 3 {
            0 => {
                boss.complete(it.id, it.lock_token, Some("Ørsted SÜD"))
                    .unwrap();
            }
            1 => {
                boss.fail(it.id, it.lock_token, "printer ΣΟΦΙΑ jammed")
                    .unwrap();
            }
            _ => {}
        }
    }
    // Whole words, parts of words, two words, words in no item, short words.
    let mut searches: Vec<String> = [
        "common",
        "often",
        "common often",
        "n01234",
        "69529",
        "zzz",
        "er",
        "sofia",
        "σοφια",
        "straße",
        "sud",
        "ørsted",
        "x_y",
        "%z",
        "lash",
        "東京",
        "n0",
        "muller jose",
        "jammed printer",
    ]
    .map(String::from)
    .to_vec();
    for _ in 0..25 {
        let w = r.pick(WORDS).to_lowercase();
        let chars: Vec<char> = w.chars().collect();
        let from = r.next() as usize % chars.len();
        let len = 1 + r.next() as usize % (chars.len() - from);
        let part: String = chars[from..from + len].iter().collect();
        searches.push(match r.next() % 3 {
            0 => part,
            1 => format!("{part} {}", r.pick(WORDS)),
            _ => format!("n{:04}", r.next() % 3000 / 10),
        });
    }
    let states = [StateFilter::Open, StateFilter::All, StateFilter::Done];
    let indexed: Vec<_> = (searches.iter())
        .flat_map(|t| states.map(|st| answers(&mut *boss, st, t)))
        .collect();
    // The same rows without the index: the scan of a schema without the column.
    drop(boss);
    b.admin().batch_execute(NO_INDEX).unwrap();
    assert_eq!(shape(&b), (false, false));
    let mut scan = b.open("boss", 0);
    let scanned: Vec<_> = (searches.iter())
        .flat_map(|t| states.map(|st| answers(&mut *scan, st, t)))
        .collect();
    let mut i = 0;
    for t in &searches {
        for st in states {
            assert_eq!(indexed[i], scanned[i], "{t:?} in {st:?}: index vs scan");
            i += 1;
        }
    }
    // Some searches found many, some few, some none; counts stopped at the cap.
    let counts: Vec<u64> = scanned.iter().map(|a| a[2].1).collect();
    assert!(counts.contains(&(COUNT_CAP + 1)), "{counts:?}");
    assert!(counts.iter().any(|&c| c > 0 && c < 20), "{counts:?}");
    assert!(counts.contains(&0), "{counts:?}");
}

/// Items of the test's texts, numbered from `from` (each carries its own `n{i:05}`).
fn items_from(r: &mut Rng, from: usize, n: usize) -> Vec<NewItem> {
    (from..from + n)
        .map(|i| NewItem {
            body: text(r, i, 6),
            params: format!("{{\"ref\": \"{}\"}}", r.pick(WORDS).replace('\\', "\\\\")),
            source: (i % 7 == 0).then(|| r.pick(WORDS).to_string()),
            ..NewItem::titled(&text(r, i + 1, 2))
        })
        .collect()
}

/// How many items are not indexed yet (in `item_search_pending`).
fn unindexed(b: &PgBackend) -> i64 {
    b.admin()
        .query_one("SELECT count(*) FROM item_search_pending", &[])
        .unwrap()
        .get(0)
}

/// Rows an import leaves for its indexer beside it (migration 31: in
/// `item_search_pending` until a second connection indexes them) are found exactly as the
/// scan finds them: before the indexer starts, when it has done part of them, and after;
/// a note saved on such a row indexes it; a text changed by hand is folded again by the
/// server.
#[test]
fn rows_not_indexed_yet_are_found_as_the_scan_finds_them() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    with_trgm(&b);
    let mut boss = setup(&b);
    let mut r = Rng(28);
    boss.add_batch(&items_from(&mut r, 0, 1500)).unwrap();
    let later = AddOptions {
        search_later: true,
        ..AddOptions::creating_queues()
    };
    for chunk in 0..3 {
        let rows = items_from(&mut r, 1500 + chunk * 500, 500);
        boss.add_items(&rows, later).unwrap();
    }
    assert_eq!(unindexed(&b), 1500, "an import's rows wait for the indexer");
    // Rare words among the indexed rows and among the others, common ones, short ones.
    let searches = [
        "common",
        "often",
        "common often",
        "n00123",
        "n02345",
        "n02999",
        "n0299",
        "69529",
        "zzz",
        "er",
        "σοφια",
        "straße",
        "ørsted",
        "x_y",
        "%z",
        "東京",
        "muller jose",
        "n01",
    ];
    let states = [StateFilter::Open, StateFilter::All];
    let all = |s: &mut dyn Store| -> Vec<_> {
        (searches.iter())
            .flat_map(|t| states.map(|st| answers(s, st, t)))
            .collect()
    };
    let before = all(&mut *boss);
    // A second connection indexes some of them, as the import's indexer does.
    let mut indexer = b.open("boss", 0);
    assert_eq!(indexer.index_search(1000).unwrap(), 1000);
    assert_eq!(unindexed(&b), 500);
    let part = all(&mut *boss);
    // A note on a row not indexed yet: the row is indexed with it.
    let last: i64 = b
        .admin()
        .query_one("SELECT max(item_id) FROM item_search_pending", &[])
        .unwrap()
        .get(0);
    let it = boss.take(last).unwrap();
    boss.save_notes(it.id, it.lock_token, "wombat Kraków")
        .unwrap();
    boss.release(it.id, it.lock_token).unwrap();
    assert_eq!(unindexed(&b), 499);
    let noted = all(&mut *boss);
    while indexer.index_search(200).unwrap() > 0 {}
    assert_eq!(unindexed(&b), 0);
    let after = all(&mut *boss);
    // A title changed by hand (not through caseload): the server folds it again.
    b.admin()
        .batch_execute(
            "UPDATE items SET title = title || ' wombat Kraków' \
             WHERE id = (SELECT min(id) FROM items)",
        )
        .unwrap();
    let (kept, folded): (String, String) = b
        .admin()
        .query_one(
            "SELECT s.search_text, caseload_fold(coalesce(title, '') || E'\\n' || \
             coalesce(body, '') || E'\\n' || coalesce(params::text, '') || E'\\n' || \
             coalesce(notes, '') || E'\\n' || coalesce(result, '') || E'\\n' || \
             coalesce(error, '') || E'\\n' || coalesce(source, '')) \
             FROM items JOIN item_search s ON s.item_id = id \
             WHERE id = (SELECT min(id) FROM items)",
            &[],
        )
        .map(|r| (r.get(0), r.get(1)))
        .unwrap();
    assert_eq!(kept, folded);
    assert!(kept.contains("wombat krakow"), "{kept}");
    // The same rows by the scan.
    drop((boss, indexer));
    b.admin().batch_execute(NO_INDEX).unwrap();
    let mut scan = b.open("boss", 0);
    let scanned = all(&mut *scan);
    let mut i = 0;
    for t in &searches {
        for st in states {
            assert_eq!(
                before[i], scanned[i],
                "{t:?} in {st:?}: none indexed vs scan"
            );
            assert_eq!(part[i], scanned[i], "{t:?} in {st:?}: part indexed vs scan");
            assert_eq!(after[i], scanned[i], "{t:?} in {st:?}: all indexed vs scan");
            i += 1;
        }
    }
    // The note changed only what `wombat` and `krakow` find, which none of the searches ask.
    assert_eq!(noted, after);
    assert!(
        scanned.iter().any(|a| (1..=2).contains(&a[2].0.len())),
        "a rare word found (in one body and one title)"
    );
}

/// The indexer beside an import locks no item (migration 31): while its transaction holds
/// a batch of the import's rows, a claim takes them all the same (schema 29's indexer
/// updated the rows of `items`, and a claim's `SKIP LOCKED` passed over them: "nothing to
/// claim" with a free item in the queue); and the item is searchable throughout.
#[test]
fn a_claim_takes_an_item_the_indexer_is_indexing() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    with_trgm(&b);
    let mut boss = setup(&b);
    let later = AddOptions {
        search_later: true,
        ..AddOptions::creating_queues()
    };
    boss.add_items(&[NewItem::titled("Only quagga")], later)
        .unwrap();
    assert_eq!(unindexed(&b), 1);
    let mut admin = b.admin();
    let mut indexer = admin.transaction().unwrap();
    let n: i32 = indexer
        .query_one("SELECT caseload_index_search(0, 100)", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
    let found = |s: &mut dyn Store| {
        let f = ListFilter {
            text: Some("quagga".into()),
            limit: 10,
            ..ListFilter::default()
        };
        s.list(&f).unwrap().len()
    };
    assert_eq!(
        found(&mut *boss),
        1,
        "found by the scan while being indexed"
    );
    let it = boss.take_next(&Default::default()).unwrap();
    assert_eq!(it.title, "Only quagga");
    indexer.commit().unwrap();
    assert_eq!(unindexed(&b), 0);
    assert_eq!(found(&mut *boss), 1, "found through the index");
    boss.complete(it.id, it.lock_token, Some("zebu")).unwrap();
    let mut f = ListFilter {
        text: Some("zebu".into()),
        state: StateFilter::All,
        limit: 10,
        ..ListFilter::default()
    };
    assert_eq!(boss.list(&f).unwrap().len(), 1, "the result is searched");
    f.text = Some("quagga zebu".into());
    assert_eq!(boss.count(&f).unwrap(), 1);
}

/// A schema made before pg_trgm was installed searches by scanning; the extension's
/// function adds the column and index later (as `caseload init` does), and the rows
/// added meanwhile are found through it.
#[test]
fn an_index_added_later_finds_the_rows_added_before() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    with_trgm(&b);
    let mut boss = setup(&b);
    b.admin().batch_execute(NO_INDEX).unwrap();
    for t in ["Refund for Müller", "Printer jams", "Müller again"] {
        boss.add(&NewItem::titled(t)).unwrap();
    }
    let f = ListFilter {
        text: Some("MULLER".into()),
        limit: 100,
        ..ListFilter::default()
    };
    let before: Vec<String> = boss
        .list(&f)
        .unwrap()
        .into_iter()
        .map(|i| i.title)
        .collect();
    let built: String = b
        .admin()
        .query_one("SELECT caseload_search_index()", &[])
        .unwrap()
        .get(0);
    assert_eq!(built, "index");
    assert_eq!(shape(&b), (true, true));
    let mut again = b.open("boss", 0);
    let after: Vec<String> = again
        .list(&f)
        .unwrap()
        .into_iter()
        .map(|i| i.title)
        .collect();
    assert_eq!(before, ["Refund for Müller", "Müller again"]);
    assert_eq!(after, before);
    // A second call changes nothing.
    let again_built: String = b
        .admin()
        .query_one("SELECT caseload_search_index()", &[])
        .unwrap()
        .get(0);
    assert_eq!(again_built, "index");
}

/// A count that follows a list whose first window held every match is answered from that
/// list, but never after a change: another user's new item, this user's own note, or a
/// different search.
#[test]
fn a_count_after_a_short_list_follows_every_change() {
    let Some(b) = PgBackend::from_env() else {
        return;
    };
    with_trgm(&b);
    let mut boss = setup(&b);
    let mut other = b.open("boss", 0);
    boss.add(&NewItem::titled("Quokka sighting")).unwrap();
    let f = |text: &str| ListFilter {
        text: Some(text.into()),
        limit: 7,
        ..ListFilter::default()
    };
    let ids = |s: &mut dyn Store, t: &str| -> Vec<i64> {
        s.list(&f(t)).unwrap().iter().map(|i| i.id).collect()
    };
    assert_eq!(ids(&mut *boss, "quokka").len(), 1);
    assert_eq!(boss.count(&f("quokka")).unwrap(), 1);
    // Another connection adds a match between the list and the count.
    assert_eq!(ids(&mut *boss, "quokka").len(), 1);
    other.add(&NewItem::titled("Second quokka")).unwrap();
    assert_eq!(boss.count(&f("quokka")).unwrap(), 2);
    // This connection's own write (a note that matches).
    let it = boss.take_next(&Default::default()).unwrap();
    assert_eq!(ids(&mut *boss, "wombat"), Vec::<i64>::new());
    boss.save_notes(it.id, it.lock_token, "a wombat too")
        .unwrap();
    assert_eq!(boss.count(&f("wombat")).unwrap(), 1);
    // Another search's count is its own.
    assert_eq!(ids(&mut *boss, "quokka").len(), 2);
    assert_eq!(boss.count(&f("sighting")).unwrap(), 1);
    assert_eq!(boss.count(&f("quokka")).unwrap(), 2);
}
