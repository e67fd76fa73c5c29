//! Search on SQLite: the `caseload_match` SQL function (the search's rule of
//! `domain::search`, applied to a row's text), the choice between the trigram index and a
//! walk of the list's own order, and the background indexing behind a high-water mark.
//!
//! Why this shape (BENCHMARKS.md, "Search"): an FTS5 index kept by an insert trigger makes
//! every import and every add pay for tokenizing 1 KiB of text. Here adding an item costs
//! nothing extra: rows above `search_meta.indexed` (the tail) and rows changed since they
//! were indexed (`search_dirty`, filled by an update trigger) are scanned with
//! `caseload_match`, and [`index_some`] moves rows into the index in short write
//! transactions when a TUI is idle. The rarest word of at least three characters is looked
//! up in the trigram index and the others checked on its hits; a search whose words are
//! all common walks the list in its own order
//! instead and stops at the first page (a dense match is found at once that way, and
//! sorting a huge hit list is what would be slow).

use rusqlite::Connection;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::ValueRef;

use crate::domain::search::{Search, fold};
use crate::store::error::Result;
use crate::store::list::{ListSql, Param};

/// Searches with more index hits than this walk the list in order instead.
const DENSE_HITS: i64 = 20_000;

/// The row text the index holds, in the order the matcher reads it.
pub(super) const TEXT_COLS: &str = "title, body, notes, result, params, error";

/// The SQL function name of the matcher.
pub(super) const MATCHER: &str = "caseload_match";

/// The SQL function that folds text as `domain::search::fold` does: the index holds
/// folded text, so that what it finds is exactly what the scan finds (SQLite's own
/// `remove_diacritics` leaves `ł` or `ø` alone, and `wroclaw` would miss `Wrocław`).
pub(super) const FOLD: &str = "caseload_fold";

/// True when `hay` contains `word` (folded), folding `hay` only when it is not ASCII.
fn contains_folded(hay: &str, word: &str) -> bool {
    if hay.is_ascii() && word.is_ascii() {
        let (h, w) = (hay.as_bytes(), word.as_bytes());
        return w.is_empty() || h.windows(w.len()).any(|win| win.eq_ignore_ascii_case(w));
    }
    fold(hay).contains(word)
}

fn matcher(ctx: &Context<'_>) -> rusqlite::Result<bool> {
    let words = match ctx.get_raw(0) {
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        _ => return Ok(false),
    };
    let fields: Vec<std::borrow::Cow<'_, str>> = (1..ctx.len())
        .filter_map(|i| match ctx.get_raw(i) {
            ValueRef::Text(t) => Some(String::from_utf8_lossy(t)),
            _ => None,
        })
        .collect();
    Ok(words
        .split(' ')
        .filter(|w| !w.is_empty())
        .all(|w| fields.iter().any(|f| contains_folded(f, w))))
}

/// Makes `caseload_match(words, title, body, notes, result, params, error)` known to
/// this connection: true when every space-separated (folded) word appears in one of the
/// texts, folded.
/// And `caseload_fold(text)`.
pub(super) fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function(MATCHER, 7, flags, matcher)?;
    conn.create_scalar_function(FOLD, 1, flags, |ctx| {
        Ok(match ctx.get_raw(0) {
            ValueRef::Text(t) => Some(fold(&String::from_utf8_lossy(t))),
            _ => None,
        })
    })
}

/// The scanning condition of a search (the dialect's `search`).
pub(super) fn scan_condition(q: &mut ListSql, s: &Search) -> String {
    let w = q.push(Param::Text(s.joined()));
    format!("{MATCHER}({w}, {TEXT_COLS})")
}

/// Where a list's rows come from: `items` itself with the list's WHERE (a walk in the
/// list's order), or the union of index hits, the unindexed tail and the changed rows
/// (with the columns every list order uses).
pub(super) fn source(c: &Connection, q: &mut ListSql) -> Result<(String, String)> {
    let walk = ("items".to_string(), q.where_.clone());
    let Some((search, cond)) = q.search.clone() else {
        return Ok(walk);
    };
    // The rarest indexed word is looked up; the other words are checked on its hits (an
    // FTS5 AND would read the whole list of a common word).
    let mut rarest: Option<(i64, String)> = None;
    for word in search.fts_words() {
        let hits: i64 = c
            .prepare_cached(&format!(
                "SELECT count(*) FROM (SELECT 1 FROM item_search WHERE item_search MATCH ?1 \
                 LIMIT {})",
                DENSE_HITS + 1
            ))?
            .query_row([&word], |r| r.get(0))?;
        if rarest.as_ref().is_none_or(|(h, _)| hits < *h) {
            rarest = Some((hits, word));
        }
        if hits == 0 {
            break;
        }
    }
    let Some((hits, fts)) = rarest else {
        return Ok(walk);
    };
    if hits > DENSE_HITS {
        return Ok(walk);
    }
    let f = q.push(Param::Text(fts));
    let mut base = q.base.join(" AND ");
    if base.is_empty() {
        base = "1".into();
    }
    let cols = "SELECT id, priority, created_at, lock_time, due_at, queue FROM items";
    let indexed = "(SELECT indexed FROM search_meta)";
    // Every word but the one looked up (short ones included: the index has no trigram
    // for them) is checked on the row.
    let also = if search.words().len() == 1 {
        String::new()
    } else {
        format!(" AND {cond}")
    };
    let mut union = format!(
        "{cols} WHERE id IN (SELECT rowid FROM item_search WHERE item_search MATCH {f}) \
         AND id <= {indexed} AND id NOT IN (SELECT id FROM search_dirty) AND {base}{also} \
         UNION {cols} WHERE id > {indexed} AND {base} AND {cond} \
         UNION {cols} WHERE id IN (SELECT id FROM search_dirty) AND {base} AND {cond}"
    );
    if let Some(id) = search.id() {
        let p = q.push(Param::Int(id));
        union.push_str(&format!(" UNION {cols} WHERE id = {p} AND {base}"));
    }
    Ok((format!("({union})"), String::new()))
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

/// Indexes up to `budget` rows (changed ones first, then the tail), inside the caller's
/// write transaction; returns how many.
pub(super) fn index_some(c: &Connection, budget: usize) -> Result<usize> {
    let budget = budget.max(1) as i64;
    let text = format!("{FOLD}(concat_ws(char(10), {TEXT_COLS}))");
    let dirty = "SELECT id FROM search_dirty ORDER BY id LIMIT ?1";
    c.prepare_cached(&format!("DELETE FROM item_search WHERE rowid IN ({dirty})"))?
        .execute([budget])?;
    let redone = c
        .prepare_cached(&format!(
            "INSERT INTO item_search (rowid, text) SELECT id, {text} FROM items \
             WHERE id IN ({dirty})"
        ))?
        .execute([budget])?;
    let cleared = c
        .prepare_cached(&format!("DELETE FROM search_dirty WHERE id IN ({dirty})"))?
        .execute([budget])?;
    let left = budget - cleared as i64;
    let mut added = 0;
    if left > 0 {
        let top: Option<i64> = c
            .prepare_cached(
                "SELECT max(id) FROM (SELECT id FROM items \
                 WHERE id > (SELECT indexed FROM search_meta) ORDER BY id LIMIT ?1)",
            )?
            .query_row([left], |r| r.get(0))?;
        if let Some(top) = top {
            added = c
                .prepare_cached(&format!(
                    "INSERT INTO item_search (rowid, text) SELECT id, {text} FROM items \
                     WHERE id > (SELECT indexed FROM search_meta) AND id <= ?1"
                ))?
                .execute([top])?;
            c.prepare_cached("UPDATE search_meta SET indexed = ?1")?
                .execute([top])?;
        }
    }
    Ok(redone.max(cleared) + added)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_and_folded_containment_agree() {
        assert!(contains_folded("Pick & pack order #A-69529", "69529"));
        assert!(contains_folded("NORDLICHT", "nordl"));
        assert!(contains_folded("Frau MÜLLER", "muller"));
        assert!(!contains_folded("Frau Meier", "muller"));
        assert!(contains_folded("José", "jose"));
    }
}
