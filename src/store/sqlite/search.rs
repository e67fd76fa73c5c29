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

/// Indexes up to `budget` rows (changed ones first, then the tail) as one batch of the
/// index (`postings`), inside the caller's write transaction; returns how many. Refused
/// for an index of another version.
pub(super) fn index_some(c: &Connection, budget: usize) -> Result<usize> {
    same_version(c)?;
    let budget = budget.max(1) as i64;
    let text = indexed_text();
    let mut batch = Batch::default();
    let mut add = |sql: &str, p: &dyn rusqlite::ToSql| -> Result<usize> {
        let mut stmt = c.prepare_cached(sql)?;
        let mut rows = stmt.query([p])?;
        let mut n = 0;
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            match r.get_ref(1)? {
                ValueRef::Text(t) => match std::str::from_utf8(t) {
                    Ok(t) => batch.add(id, t),
                    Err(_) => batch.add(id, &String::from_utf8_lossy(t)),
                },
                _ => batch.add(id, ""),
            }
            n += 1;
        }
        Ok(n)
    };
    // The changed rows (at or below the mark) come before the tail's (above it): the
    // batch's ids increase.
    let dirty: Vec<i64> = c
        .prepare_cached("SELECT id FROM search_dirty ORDER BY id LIMIT ?1")?
        .query_map([budget], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if !dirty.is_empty() {
        let set = format!(
            "[{}]",
            dirty
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        );
        add(
            &format!(
                "SELECT id, {text} FROM items \
                 WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id"
            ),
            &set,
        )?;
        c.prepare_cached("DELETE FROM search_dirty WHERE id IN (SELECT value FROM json_each(?1))")?
            .execute([&set])?;
    }
    let left = budget - dirty.len() as i64;
    let mut added = 0;
    if left > 0 {
        let top: Option<i64> = c
            .prepare_cached(
                "SELECT max(id) FROM (SELECT id FROM items \
                 WHERE id > (SELECT indexed FROM search_meta) ORDER BY id LIMIT ?1)",
            )?
            .query_row([left], |r| r.get(0))?;
        if let Some(top) = top {
            added = add(
                &format!(
                    "SELECT id, {text} FROM items \
                     WHERE id > (SELECT indexed FROM search_meta) AND id <= ?1 ORDER BY id"
                ),
                &top,
            )?;
            c.prepare_cached("UPDATE search_meta SET indexed = ?1")?
                .execute([top])?;
        }
    }
    batch.write(c)?;
    Ok(dirty.len() + added)
}

#[cfg(test)]
mod tests {
    use super::*;

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
