//! Search on SQLite: the `caseload_match` SQL function (the search's rule of
//! `domain::search`, applied to a row's text), the choice between the trigram index and a
//! walk of the list's own order, and the background indexing behind a high-water mark.
//!
//! Why this shape (BENCHMARKS.md, "Search"): an index kept by an insert trigger makes
//! every import and every add pay for indexing 1 KiB of text. Here adding an item costs
//! nothing extra: rows above `search_meta.indexed` (the tail) and rows changed since they
//! were indexed (`search_dirty`, filled by an update trigger) are scanned with
//! `caseload_match`, and [`index_some`] moves rows into the index (`postings`: caseload's
//! own trigram lists, one row per trigram per batch) in write transactions of their own,
//! after an import's rows and when a TUI is idle. The rarest trigram of the words (for a word of one or
//! two characters, the trigrams that begin with it) is looked up in the index and every
//! word checked on its hits; a search whose words are all common walks the list in its
//! own order instead and stops at the first page (a dense match is found at once that
//! way, and sorting a huge hit list is what would be slow). See `search_plan`.

use rusqlite::Connection;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::ValueRef;

use std::cell::RefCell;
use std::hash::BuildHasher;

use std::sync::OnceLock;

use crate::domain::fields;
use crate::domain::search::{Search, fold, fold_into, like_pattern};

use super::postings::Batch;
use crate::store::error::{Result, StoreError};
use crate::store::list::{ListSql, Param};

/// The row text the index holds, in the order the matcher reads it: the field table's
/// searched columns (`title, body, params, notes, result, error`).
pub(super) fn text_cols() -> &'static str {
    static COLS: OnceLock<String> = OnceLock::new();
    COLS.get_or_init(|| {
        let names: Vec<&str> = fields::searched().map(|f| f.name).collect();
        names.join(", ")
    })
}

/// The text the index is told for a row of `items`: its searched columns joined by line
/// ends (folded and cut into trigrams by `postings::Batch`). The index is of
/// [`fields::search_version`], kept in `search_meta.version`: [`index_some`] adds nothing
/// to an index of another version.
pub(super) fn indexed_text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| format!("concat_ws(char(10), {})", text_cols()))
}

/// The SQL function name of the matcher.
pub(super) const MATCHER: &str = "caseload_match";

/// The SQL function that folds text as `domain::search::fold` does: the index holds
/// folded text, so that what it finds is exactly what the scan finds (SQLite's own
/// `remove_diacritics` leaves `ł` or `ø` alone, and `wroclaw` would miss `Wrocław`).
pub(super) const FOLD: &str = "caseload_fold";

thread_local! {
    /// One folding buffer per text column, reused by every call of the matcher on this
    /// thread (a search calls it once per row: no allocation per row).
    static FOLDED: RefCell<[String; TEXT_COL_COUNT]> = RefCell::new(Default::default());
}

/// How many text columns the matcher receives.
const TEXT_COL_COUNT: usize = fields::SEARCHED_COUNT;

/// The search's words, parsed once per statement (SQLite keeps them as the first
/// argument's auxiliary data while the argument does not change).
fn words_of(v: ValueRef<'_>) -> std::result::Result<Vec<String>, std::convert::Infallible> {
    Ok(match v {
        ValueRef::Text(t) => String::from_utf8_lossy(t)
            .split(' ')
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    })
}

/// How the matcher has read a column of the row so far.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Read {
    /// Not yet.
    No,
    /// All ASCII: its fold is its ASCII lower case, compared as it is written.
    Ascii,
    /// Folded into its buffer.
    Folded,
}

/// True when ASCII text `hay` holds `needle` (ASCII, lower case) in any ASCII case: the
/// fold of ASCII text is its lower case, so this is the fold's answer without folding.
/// Each place the first letter (in either case) is found by `memchr2` is compared.
fn holds_ascii(hay: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    let mut from = 0;
    while let Some(p) = memchr::memchr2(first, first.to_ascii_uppercase(), &hay[from..]) {
        let at = from + p + 1;
        match hay.get(at..at + rest.len()) {
            Some(next) if next.eq_ignore_ascii_case(rest) => return true,
            Some(_) => from = at,
            None => return false,
        }
    }
    false
}

fn matcher(ctx: &Context<'_>) -> rusqlite::Result<bool> {
    let words = ctx.get_or_create_aux(0, words_of)?;
    if words.is_empty() {
        return Ok(false);
    }
    let mut raw: [Option<&[u8]>; TEXT_COL_COUNT] = [None; TEXT_COL_COUNT];
    for (k, r) in raw.iter_mut().enumerate() {
        if let ValueRef::Text(t) = ctx.get_raw(k + 1) {
            *r = Some(t);
        }
    }
    FOLDED.with(|cell| {
        let mut folded = cell.borrow_mut();
        // Each column is read at most once, when a word first looks at it.
        let mut read = [Read::No; TEXT_COL_COUNT];
        for word in words.iter() {
            let ascii = word.is_ascii();
            let mut found = false;
            for (k, buf) in folded.iter_mut().enumerate() {
                let Some(t) = raw[k] else {
                    continue;
                };
                if read[k] == Read::No {
                    read[k] = if t.is_ascii() {
                        Read::Ascii
                    } else {
                        match std::str::from_utf8(t) {
                            Ok(text) => fold_into(text, buf),
                            Err(_) => fold_into(&String::from_utf8_lossy(t), buf),
                        }
                        Read::Folded
                    };
                }
                found = match read[k] {
                    // The fold of ASCII text is ASCII: it cannot hold another word.
                    Read::Ascii => ascii && holds_ascii(t, word.as_bytes()),
                    _ => buf.contains(word.as_str()),
                };
                if found {
                    break;
                }
            }
            if !found {
                return Ok(false);
            }
        }
        Ok(true)
    })
}

/// Makes `caseload_match(words, <the searched columns>)` known to this connection: true
/// when every space-separated (folded) word appears in one of the texts, folded.
/// And `caseload_fold(text)`.
pub(super) fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function(MATCHER, 1 + TEXT_COL_COUNT as i32, flags, matcher)?;
    conn.create_scalar_function(super::search_plan::HIT, 2, flags, super::search_plan::hit)?;
    conn.create_scalar_function(FOLD, 1, flags, |ctx| {
        Ok(match ctx.get_raw(0) {
            ValueRef::Text(t) => Some(fold(&String::from_utf8_lossy(t))),
            _ => None,
        })
    })
}

/// The scanning condition of a search (the dialect's `search`): see [`text_condition`].
pub(super) fn scan_condition(q: &mut ListSql, s: &Search) -> String {
    text_condition(s, |v| q.push(Param::Text(v)))
}

/// The condition that a row's text holds every word of `s`, its parameters' values
/// given to `param`, which names them. SQLite's own `LIKE` on the columns as written
/// rejects rows first, for each word that has a pattern ([`like_pattern`]: every row
/// whose fold holds the word matches it); the matcher decides on the rest. `LIKE` finds
/// a pattern's first character with `strcspn` and stops at its first match, where the
/// matcher folds every column of every row it is given (BENCHMARKS.md, "Search").
pub(super) fn text_condition(s: &Search, mut param: impl FnMut(String) -> String) -> String {
    let mut conds: Vec<String> = Vec::new();
    for word in s.words() {
        let Some(pattern) = like_pattern(word) else {
            continue;
        };
        let p = param(pattern);
        let any: Vec<String> = fields::searched()
            .map(|f| format!("{} LIKE {p} ESCAPE '\\'", f.name))
            .collect();
        conds.push(format!("({})", any.join(" OR ")));
    }
    let w = param(s.joined());
    conds.push(format!("{MATCHER}({w}, {})", text_cols()));
    format!("({})", conds.join(" AND "))
}

/// A qualified word's condition (`vat:de123`): the row's value of the field, folded,
/// contains the word (a number or a list as its JSON text; no value, nothing).
pub(super) fn field_condition(q: &mut ListSql, name: &str, word: &str) -> String {
    let path = q.push(Param::Text(format!("$.\"{name}\"")));
    let w = q.push(Param::Text(word.to_string()));
    format!("instr({FOLD}(coalesce(CAST(json_extract(params, {path}) AS TEXT), '')), {w}) > 0")
}

/// How much of the search index is behind: rows in the tail or changed since indexed.
pub(super) fn behind(c: &Connection) -> Result<bool> {
    let behind: bool = c
        .prepare_cached(
            "SELECT coalesce((SELECT max(id) FROM items), 0) > (SELECT indexed FROM search_meta) \
             OR EXISTS (SELECT 1 FROM search_dirty)",
        )?
        .query_row([], |r| r.get(0))?;
    Ok(behind)
}

/// Refuses to index when the index holds another version's text (a caseload older or
/// newer than this database's schema: it would add rows with other columns).
fn same_version(c: &Connection) -> Result<()> {
    let stored: String = c
        .prepare_cached("SELECT version FROM search_meta")?
        .query_row([], |r| r.get(0))?;
    let own = fields::search_version();
    if stored == own {
        return Ok(());
    }
    Err(StoreError::Unusable(format!(
        "the search index holds version '{stored}' and this caseload indexes '{own}': a \
         caseload of another version set it up; searches scan instead of using the index \
         (run the caseload that matches the database)"
    )))
}

/// A batch of the index read and cut ([`read_batch`]), to be written by [`write_batch`].
pub(super) struct Prepared {
    /// `search_meta.indexed` when it was read.
    mark: i64,
    /// The last id of the tail it read (above the mark), if any.
    top: Option<i64>,
    /// The changed rows it read (`search_dirty`).
    dirty: Vec<i64>,
    /// How many rows of the tail it read.
    added: usize,
    /// Every row read, in id order, and a keyed hash of the text it was cut from.
    seen: Vec<(i64, u64)>,
    keys: std::hash::RandomState,
    batch: Batch,
}

/// Reads and cuts up to `budget` rows (changed ones first, then the tail) into a batch of
/// the index, writing nothing. Read in one snapshot (the caller's transaction, a read or
/// a write); refused for an index of another version.
pub(super) fn read_batch(c: &Connection, budget: usize) -> Result<Prepared> {
    same_version(c)?;
    let budget = budget.max(1) as i64;
    let text = indexed_text();
    let mut p = Prepared {
        mark: c
            .prepare_cached("SELECT indexed FROM search_meta")?
            .query_row([], |r| r.get(0))?,
        top: None,
        dirty: Vec::new(),
        added: 0,
        seen: Vec::new(),
        keys: std::hash::RandomState::new(),
        batch: Batch::default(),
    };
    // The changed rows (at or below the mark) come before the tail's (above it): the
    // batch's ids increase.
    p.dirty = c
        .prepare_cached("SELECT id FROM search_dirty ORDER BY id LIMIT CAST(?1 AS BIGINT)")?
        .query_map([budget], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if !p.dirty.is_empty() {
        let set = id_set(&p.dirty);
        let sql = format!(
            "SELECT id, {text} FROM items \
             WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id"
        );
        rows_of(c, &sql, &[&set], |id, t| {
            p.batch.add(id, &utf8(t));
            p.seen.push((id, p.keys.hash_one(t)));
        })?;
    }
    let left = budget - p.dirty.len() as i64;
    if left > 0 {
        p.top = c
            .prepare_cached(
                "SELECT max(id) FROM (SELECT id FROM items WHERE id > ?1 ORDER BY id \
                 LIMIT CAST(?2 AS BIGINT))",
            )?
            .query_row([p.mark, left], |r| r.get(0))?;
        if let Some(top) = p.top {
            let sql =
                format!("SELECT id, {text} FROM items WHERE id > ?1 AND id <= ?2 ORDER BY id");
            p.added = rows_of(c, &sql, &[&p.mark, &top], |id, t| {
                p.batch.add(id, &utf8(t));
                p.seen.push((id, p.keys.hash_one(t)));
            })?;
        }
    }
    Ok(p)
}

/// Writes a batch [`read_batch`] read, inside the caller's write transaction; returns how
/// many rows it indexed, or `None` when the index moved since it was read (another
/// indexer wrote its batch: the caller reads again).
///
/// `recheck`: the batch was read in an earlier transaction (outside the write lock), so
/// its rows may have changed since; each is read again and a row whose text is not the
/// text it was cut from (or a row added in its range meanwhile, by an import that keeps
/// ids) is left in `search_dirty`: scanned by searches and indexed again later, as any
/// row changed after it was indexed. Its entries from the older text stay, as those of
/// every changed row do (a search's candidates are a superset of its matches).
pub(super) fn write_batch(c: &Connection, p: Prepared, recheck: bool) -> Result<Option<usize>> {
    same_version(c)?;
    let mark: i64 = c
        .prepare_cached("SELECT indexed FROM search_meta")?
        .query_row([], |r| r.get(0))?;
    if mark != p.mark {
        return Ok(None);
    }
    let mut changed: Vec<i64> = Vec::new();
    if recheck {
        let text = indexed_text();
        let mut check = |id: i64, t: &[u8]| match p.seen.binary_search_by_key(&id, |s| s.0) {
            Ok(i) if p.seen[i].1 == p.keys.hash_one(t) => {}
            _ => changed.push(id),
        };
        if !p.dirty.is_empty() {
            let sql = format!(
                "SELECT id, {text} FROM items \
                 WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id"
            );
            rows_of(c, &sql, &[&id_set(&p.dirty)], &mut check)?;
        }
        if let Some(top) = p.top {
            let sql =
                format!("SELECT id, {text} FROM items WHERE id > ?1 AND id <= ?2 ORDER BY id");
            rows_of(c, &sql, &[&p.mark, &top], &mut check)?;
        }
    }
    if !p.dirty.is_empty() {
        c.prepare_cached("DELETE FROM search_dirty WHERE id IN (SELECT value FROM json_each(?1))")?
            .execute([id_set(&p.dirty)])?;
    }
    if !changed.is_empty() {
        c.prepare_cached(
            "INSERT OR IGNORE INTO search_dirty (id) SELECT value FROM json_each(?1)",
        )?
        .execute([id_set(&changed)])?;
    }
    if let Some(top) = p.top {
        c.prepare_cached("UPDATE search_meta SET indexed = ?1")?
            .execute([top])?;
    }
    p.batch.write(c)?;
    Ok(Some(p.dirty.len() + p.added))
}

/// Indexes up to `budget` rows (changed ones first, then the tail) as one batch of the
/// index (`postings`), inside the caller's write transaction; returns how many. Refused
/// for an index of another version.
pub(super) fn index_some(c: &Connection, budget: usize) -> Result<usize> {
    let p = read_batch(c, budget)?;
    Ok(write_batch(c, p, false)?.unwrap_or(0))
}

/// Text as SQLite gave it: as it is when it is UTF-8 (checked at the speed of
/// `str::from_utf8`), else with replacement characters.
fn utf8(t: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(t) {
        Ok(s) => s.into(),
        Err(_) => String::from_utf8_lossy(t),
    }
}

/// `ids` as a JSON array (for `json_each`).
fn id_set(ids: &[i64]) -> String {
    let all: Vec<String> = ids.iter().map(i64::to_string).collect();
    format!("[{}]", all.join(","))
}

/// Runs `sql` (rows of id and text) with `params`, giving each row to `each` (a NULL text
/// as empty); returns how many rows.
fn rows_of(
    c: &Connection,
    sql: &str,
    params: &[&dyn rusqlite::ToSql],
    mut each: impl FnMut(i64, &[u8]),
) -> Result<usize> {
    let mut stmt = c.prepare_cached(sql)?;
    let mut rows = stmt.query(params)?;
    let mut n = 0;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        match r.get_ref(1)? {
            ValueRef::Text(t) | ValueRef::Blob(t) => each(id, t),
            _ => each(id, b""),
        }
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    mod batches {
        use super::*;
        use crate::domain::{Actor, NewItem};
        use crate::store::sqlite::SqliteStore;
        use crate::store::{ListFilter, Reads, StateFilter, Writes};

        pub(super) fn store(dir: &std::path::Path) -> SqliteStore {
            let opts = crate::store::sqlite::OpenOptions {
                allow_empty: true,
                ..Default::default()
            };
            SqliteStore::open(&dir.join("q.db"), Actor::new("boss", "boss"), &opts).unwrap()
        }

        pub(super) fn add(s: &mut SqliteStore, title: &str) -> i64 {
            let opts = crate::store::AddOptions::creating_queues();
            s.add_items(&[NewItem::titled(title)], opts).unwrap()[0].id
        }

        pub(super) fn found(s: &mut SqliteStore, w: &str) -> Vec<i64> {
            let f = ListFilter {
                state: StateFilter::All,
                text: Some(w.to_string()),
                limit: 1000,
                ..ListFilter::default()
            };
            s.list(&f).unwrap().iter().map(|i| i.id).collect()
        }

        pub(super) fn dirty(s: &SqliteStore) -> Vec<i64> {
            let c = s.connection();
            let mut st = c
                .prepare("SELECT id FROM search_dirty ORDER BY id")
                .unwrap();
            st.query_map([], |r| r.get(0))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        }

        pub(super) fn mark(s: &SqliteStore) -> i64 {
            s.connection()
                .query_row("SELECT indexed FROM search_meta", [], |r| r.get(0))
                .unwrap()
        }

        /// Writes `p` in a write transaction of its own.
        pub(super) fn write(s: &SqliteStore, p: Prepared) -> Option<usize> {
            let kind = crate::store::sqlite::txn::Kind::Write;
            crate::store::sqlite::txn::run(&mut s.connection(), kind, |c| write_batch(c, p, true))
                .map_err(|f| f.error)
                .unwrap()
        }

        pub(super) fn change(s: &SqliteStore, id: i64, title: &str) {
            s.connection()
                .execute("UPDATE items SET title = ?2 WHERE id = ?1", (id, title))
                .unwrap();
        }

        pub(super) fn index(s: &mut SqliteStore, n: usize) -> usize {
            s.index_search(n).unwrap()
        }
    }

    /// A batch read outside the write lock ([`read_batch`]) and written after some of
    /// the rows it read changed ([`write_batch`]): those rows stay in `search_dirty`
    /// (scanned, indexed again by the next batch) whether they were in the tail or
    /// already dirty, the mark moves past the rest, and every search answers as the rule
    /// does throughout; a batch read before another indexer wrote one is not written.
    #[test]
    fn rows_changed_between_reading_and_writing_a_batch_stay_dirty() {
        use batches::{add, change, dirty, found, index, mark, store, write};
        let dir = tempfile::tempdir().unwrap();
        let mut s = store(dir.path());
        let ids: Vec<i64> = ["Parcel to Kraków", "Parcel to Gdańsk", "Parcel to Poznań"]
            .iter()
            .map(|t| add(&mut s, t))
            .collect();
        // The tail: the second row changes between reading and writing.
        let p = read_batch(s.connection(), 100).unwrap();
        change(&s, ids[1], "Parcel to Wrocław");
        assert_eq!(write(&s, p), Some(3));
        assert_eq!(dirty(&s), [ids[1]]);
        assert_eq!(mark(&s), ids[2]);
        assert_eq!(found(&mut s, "wroclaw"), [ids[1]]);
        assert!(found(&mut s, "gdansk").is_empty());
        assert_eq!(found(&mut s, "parcel"), ids);
        assert_eq!(index(&mut s, 100), 1);
        assert!(dirty(&s).is_empty());
        assert_eq!(found(&mut s, "wroclaw"), [ids[1]]);
        // A dirty row read, then changed again before the batch is written.
        change(&s, ids[0], "Parcel to Łódź");
        assert_eq!(dirty(&s), [ids[0]]);
        let p = read_batch(s.connection(), 100).unwrap();
        change(&s, ids[0], "Parcel to Toruń");
        assert_eq!(write(&s, p), Some(1));
        assert_eq!(
            dirty(&s),
            [ids[0]],
            "changed after it was read: still dirty"
        );
        assert_eq!(found(&mut s, "torun"), [ids[0]]);
        assert!(found(&mut s, "lodz").is_empty());
        assert!(found(&mut s, "krakow").is_empty());
        assert_eq!(index(&mut s, 100), 1);
        assert!(dirty(&s).is_empty());
        assert_eq!(found(&mut s, "torun"), [ids[0]]);
        // Another indexer wrote a batch in between: this one is not written.
        let d = add(&mut s, "Parcel to Sopot");
        let p = read_batch(s.connection(), 100).unwrap();
        assert_eq!(index(&mut s, 100), 1);
        assert_eq!(write(&s, p), None);
        assert_eq!(found(&mut s, "sopot"), [d]);
        assert_eq!(index(&mut s, 100), 0, "up to date");
    }

    /// The scan's `LIKE` patterns keep every row the fold keeps, in SQLite's own `LIKE`:
    /// every word of one to five characters cut from tricky texts (accents, `ß` and
    /// `ẞ`, Turkish `İ` and `ı`, the Kelvin and Angstrom signs, Greek, Cyrillic, CJK,
    /// `LIKE`'s own `%`, `_` and `\`) against every text; and they do reject rows.
    #[test]
    fn a_word_s_like_pattern_keeps_every_row_the_fold_keeps() {
        let c = Connection::open_in_memory().unwrap();
        let texts = [
            "José MÜLLER, Łódź",
            "Straße STRASSE ẞ",
            "İstanbul ISTANBUL ıi",
            "20 \u{212A}elvin, \u{212B}ngström Ångström",
            "東京都 大阪",
            "ΣΊΣΥΦΟΣ σίσυφος ς",
            "Жук жук",
            "order #A-69529: 100% off_line \\ done",
            "Ǆemal ǅ ǆ Ĳssel",
            "ÿ Ÿ ŉ ſ",
        ];
        let mut words: Vec<String> = Vec::new();
        for t in texts {
            let chars: Vec<char> = fold(t).chars().collect();
            for i in 0..chars.len() {
                for n in 1..=5.min(chars.len() - i) {
                    let w: String = chars[i..i + n].iter().collect();
                    if !w.contains(char::is_whitespace) {
                        words.push(w);
                    }
                }
            }
        }
        let mut like = c.prepare("SELECT ?1 LIKE ?2 ESCAPE '\\'").unwrap();
        let (mut kept, mut rejected) = (0, 0);
        for w in &words {
            let Some(p) = like_pattern(w) else { continue };
            for t in texts {
                let hit: bool = like.query_row([t, p.as_str()], |r| r.get(0)).unwrap();
                if fold(t).contains(w.as_str()) {
                    assert!(hit, "{w:?} is in {t:?} folded, but {p:?} rejects it");
                    kept += 1;
                } else if !hit {
                    rejected += 1;
                }
            }
        }
        assert!(
            kept > 100 && rejected > 100,
            "{kept} kept, {rejected} rejected"
        );
    }

    /// The matcher (ASCII columns compared as written, others folded) gives the fold's
    /// answer: every word of one to five characters cut from each text, against each.
    #[test]
    fn the_matcher_is_the_fold_s_answer() {
        let c = Connection::open_in_memory().unwrap();
        register(&c).unwrap();
        let nulls = ["NULL"; TEXT_COL_COUNT - 1].join(", ");
        let mut stmt = c
            .prepare(&format!("SELECT {MATCHER}(?1, ?2, {nulls})"))
            .unwrap();
        let texts = [
            "Order #A-69529 for JOSE",
            "José MÜLLER ledger",
            "aaab AAAB aAb",
            "zebr",
            "İstanbul \u{212A}elvin Straße",
            "東京 x",
            "",
        ];
        let mut seen = 0;
        for t in texts {
            for from in texts {
                let chars: Vec<char> = fold(from).chars().collect();
                for i in 0..chars.len() {
                    for n in 1..=5.min(chars.len() - i) {
                        let w: String = chars[i..i + n].iter().collect();
                        if w.contains(' ') {
                            continue;
                        }
                        let got: bool = stmt.query_row([&w, t], |r| r.get(0)).unwrap();
                        assert_eq!(got, fold(t).contains(&w), "{w:?} in {t:?}");
                        seen += got as usize;
                    }
                }
            }
        }
        assert!(seen > 100);
        assert!(holds_ascii(b"xxAaAB", b"aab") && !holds_ascii(b"xxAaA", b"aab"));
    }

    /// The latest migration that sets the index's version sets the field table's: a
    /// searched column added without a migration that rebuilds the index fails here. It
    /// also names the columns whose change marks a row for indexing again (the trigger),
    /// as the whole schema does.
    #[test]
    fn the_latest_search_migration_is_the_field_table_s() {
        let version = fields::search_version();
        let latest = crate::store::sqlite::migrate::STEPS
            .iter()
            .rev()
            .find(|s| s.contains("UPDATE search_meta SET version = "))
            .expect("a migration sets the search index's version");
        let schema = crate::store::sqlite::migrate::SCHEMA;
        let trigger = format!("AFTER UPDATE OF {}\nON items", text_cols());
        for (what, sql) in [
            ("the latest search migration", *latest),
            ("schema.sql", schema),
        ] {
            assert!(
                sql.contains(&format!("'{version}'")),
                "{what} does not set the search index's version to '{version}' (the field \
                 table's searched columns): add a migration that rebuilds the index"
            );
            assert!(sql.contains(&trigger), "{what} lacks `{trigger}`");
        }
        assert!(indexed_text().contains(text_cols()));
    }
}
