//! PostgreSQL search through the trigram index (issue 32 §4): where pg_trgm is installed,
//! `item_search` holds the fold of each item's searched text and `item_search_trgm`
//! indexes its trigrams (migration 31; a column of `items` from 23 to 29); a search is
//! then a `LIKE` on that stored text, which the index answers for rare words. An item not
//! indexed yet (an import's row before its indexer reached it) is in
//! `item_search_pending` instead, and tested by the scan's own condition. Without the
//! table, search scans (`reads::search_condition`); the answers are the same
//! (tests/store/search_index.rs).
//!
//! The planner has no statistics for a kilobyte-wide text (ANALYZE skips such values),
//! so it takes every `LIKE` for a rare one and would gather all of a common word's rows
//! through the index before sorting out the first screen. So the first screen is first
//! looked for among the first rows in list order (a word in a fifth of the items fills
//! it there), then, with the frequency seen, among more of them, and only then through
//! the index; a count likewise stops once it is past the cap.

use super::open::{Conn, TxResult};
use super::sql::ITEM_COLS;
use crate::domain::search::Search;
use crate::store::list::{ListSql, Param, Window, contains_pattern};
use crate::store::{ListFilter, StateFilter};

/// Whether the server keeps `item_search` (the table is in every schema of version 30;
/// the triggers that fill it only where pg_trgm is, once `caseload_search_index()` ran).
pub(super) const KEPT: &str = "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger \
     WHERE tgrelid = 'items'::regclass AND tgname = 'items_search_insert')";

/// Whether the schema keeps the search index's table (asked once per connection):
/// searches then read it instead of folding each row's text.
pub(super) fn indexed(c: &mut Conn) -> TxResult<bool> {
    if let Some(known) = c.search_indexed {
        return Ok(known);
    }
    let has: bool = c.query_one(KEPT, &[])?.get(0);
    c.search_indexed = Some(has);
    Ok(has)
}

/// Indexes up to `budget` items an import left unindexed (migration 31: their rows in
/// `item_search_pending`) with an id above `above`, the oldest first, in one statement
/// (`caseload_index_search()`: the server folds each item's text as on any insert), so
/// each item is either indexed whole or still pending, whatever stops the program. It
/// locks no row of `items` (a claim never passes over an item for it); pending rows
/// another indexer or a change of the item holds are left for later rather than waited
/// for. Returns how many pending rows it took (0 without the index).
pub(super) fn index_some(c: &mut Conn, above: i64, budget: usize) -> TxResult<usize> {
    if !indexed(c)? {
        return Ok(0);
    }
    let budget = budget.min(i32::MAX as usize) as i32;
    let n: i32 = c
        .query_one(
            "SELECT caseload_index_search($1::bigint, $2::integer)",
            &[&above, &budget],
        )?
        .get(0);
    Ok(n.max(0) as usize)
}

/// True when pg_trgm finds a trigram in `word`'s `LIKE` pattern: a run of three letters
/// or digits (ASCII ones: what is a letter beyond ASCII depends on the database's
/// character type). A pattern without one would make the index read all of itself.
fn has_trigram(word: &str) -> bool {
    let mut run = 0;
    for c in word.chars() {
        run = if c.is_ascii_alphanumeric() {
            run + 1
        } else {
            0
        };
        if run >= 3 {
            return true;
        }
    }
    false
}

/// A search on the stored fold: each word with a trigram as a `LIKE` the index
/// answers, the others as a plain `strpos` on the rows found; an item not indexed yet (in
/// `item_search_pending`: an import's row before its indexer reached it, migration 31) by
/// the scan's own test. This is the test of one row (its search row found by the
/// primary key); [`ListSql::candidates`] is the same search as a set of ids, for the
/// statements that find rows through the index ([`among_candidates`]).
pub(super) fn condition(q: &mut ListSql, s: &Search) -> String {
    let fold = on_the_fold(q, s);
    let scanned = super::reads::search_condition(q, s);
    q.candidates = Some(format!(
        "SELECT item_id FROM item_search WHERE {fold} \
         UNION ALL SELECT item_id FROM item_search_pending"
    ));
    // `id` is the item's: neither search table has a column of that name. Scalar
    // subqueries, not EXISTS: the planner may run an EXISTS as a hashed set of all the
    // table's matches (all of a common word's, for a look at 400 rows), never these.
    format!(
        "(coalesce((SELECT {fold} FROM item_search WHERE item_id = id), false) \
         OR (coalesce((SELECT true FROM item_search_pending WHERE item_id = id), false) \
         AND {scanned}))"
    )
}

/// The condition that an item is among the search's candidates: its id in the set the
/// index gives (an initial plan: the items are then read by their primary key). With the
/// row's own test after it, the rows a search matches, found through the index.
fn among_candidates(q: &ListSql) -> String {
    let cands = q.candidates.as_deref().unwrap_or("SELECT NULL::bigint");
    format!("id = ANY (ARRAY({cands}))")
}

fn on_the_fold(q: &mut ListSql, s: &Search) -> String {
    let conds: Vec<String> = s
        .words()
        .iter()
        .map(|w| match has_trigram(w) {
            true => format!(
                "search_text LIKE {}::text",
                q.push(Param::Text(contains_pattern(w)))
            ),
            false => format!(
                "strpos(search_text, {}::text) > 0",
                q.push(Param::Text(w.clone()))
            ),
        })
        .collect();
    format!("({})", conds.join(" AND "))
}

/// The WHERE clause of the conditions other than the search.
fn base_where(q: &ListSql) -> String {
    match q.base.is_empty() {
        true => String::new(),
        false => format!("WHERE {}", q.base.join(" AND ")),
    }
}

/// How many rows in list order the first look reads at least: twice the rows of a first
/// screen (200), and twice the rows wanted. A word in half the rows or more fills the
/// window there; a rare word, found nowhere in it, goes to the index after it, so its size
/// is most of a rare word's time (reading each row's stored fold means decompressing it:
/// 1,000 rows were ~35 ms of a rare word's ~44 at 1M items).
const FIRST_LOOK: usize = 400;
/// How far a look may read, as a multiple of [`LOOK_UNIT`] or five times the rows wanted.
const SECOND_LOOK_FACTOR: usize = 20;
const LOOK_UNIT: usize = 1000;

/// A window of a searched list: from the first rows in list order when the search's
/// words are common enough to fill it there, else through the index. `order`, `limit`
/// and `offset` are the window's (their parameters already pushed onto `q`).
pub(super) fn list_window(
    c: &mut Conn,
    q: &ListSql,
    cond: &str,
    window: Window,
    order: &str,
    limit: &str,
    offset: &str,
) -> TxResult<Vec<postgres::Row>> {
    let wanted = window.offset.saturating_add(window.limit);
    let params = super::reads::params(&q.params);
    let refs = super::reads::refs(&params);
    // A window that wants more than the looks read (`--limit 0`: all), or read from the
    // end, goes to the planner as it is.
    let looked = !window.reversed && wanted <= SECOND_LOOK_FACTOR * LOOK_UNIT;
    // The first look found no match at all (a rare word, or one of other rows).
    let mut none_found = false;
    if looked {
        let look = |c: &mut Conn, rows: usize| -> TxResult<(Vec<postgres::Row>, usize)> {
            let sql = format!(
                "SELECT {ITEM_COLS}, seen FROM (SELECT *, count(*) OVER () AS seen FROM \
                 (SELECT * FROM items {} ORDER BY {order} LIMIT {rows}) AS first) AS first \
                 WHERE {cond} ORDER BY {order} LIMIT {limit} OFFSET {offset}",
                base_where(q)
            );
            let got = c.query_unnamed(&sql, &refs)?;
            let seen: i64 = got.first().map(|r| r.get("seen")).unwrap_or(0);
            Ok((got, seen as usize))
        };
        let first = FIRST_LOOK.max(2 * wanted);
        let (rows, seen) = look(c, first)?;
        if rows.len() == window.limit {
            return Ok(rows);
        }
        none_found = rows.is_empty() && window.offset == 0;
        // A first look that found some but not enough: all its matches past the offset
        // are here, so their frequency says how far a second look must read (none
        // found: a rare word, for the index; a short list costs the index little).
        if !rows.is_empty() {
            if seen < first {
                return Ok(rows); // It read every row there is.
            }
            let matches = window.offset + rows.len();
            // Twice the rows the frequency seen says the window needs.
            let second = (2 * wanted * first / matches).max(first);
            if second <= SECOND_LOOK_FACTOR * LOOK_UNIT.max(5 * wanted) {
                let (rows, seen) = look(c, second)?;
                if rows.len() == window.limit || (!rows.is_empty() && seen < second) {
                    return Ok(rows);
                }
            }
        }
    }
    let from = match looked {
        true if none_found && few_in_all(c, q, &refs)? => through_the_index_alone(q, cond),
        true => through_the_index(q),
        false => format!("items {} AND {}", q.where_, among_candidates(q)),
    };
    let sql =
        format!("SELECT {ITEM_COLS} FROM {from} ORDER BY {order} LIMIT {limit} OFFSET {offset}");
    c.query_unnamed(&sql, &refs)
}

/// The FROM and WHERE of a search's rows, as a subquery the planner plans on its own
/// (`OFFSET 0` keeps it from being merged into the query around it, which orders and
/// limits), named `items` as the conditions expect. For words the looks found rare
/// (common ones are answered by the looks in list order): asked for the first rows in
/// list order, the planner, which takes every `LIKE` for a middling one, may walk the
/// list's order and test each row (for a word in no item, every row: `zebra` took 264 ms
/// at 200k items, 0.06 ms through the index at 1M). The list's other conditions stay
/// inside, for their own indexes: with them outside, a count of a word in 2 % of the items
/// fetched every state's matches to find the open ones (`nordl`, open: 6.1 s at 1M).
fn through_the_index(q: &ListSql) -> String {
    format!(
        "(SELECT * FROM items {} AND {} OFFSET 0) AS items",
        q.where_,
        among_candidates(q)
    )
}

/// How many rows a search may match in all (whatever the list's other conditions) for
/// its rows to be found through the search index alone.
const FEW: usize = 5000;

/// Whether the search has fewer than [`FEW`] candidates in all, asked of the index (a
/// rare word: well under a millisecond at 1M items; items not indexed yet count as
/// candidates). Only for a list with other conditions: it
/// is asked when the first look found no match, which may also be a word common among
/// the rows the other conditions leave out (done items, of a list of open ones).
fn few_in_all(
    c: &mut Conn,
    q: &ListSql,
    refs: &[&(dyn postgres::types::ToSql + Sync)],
) -> TxResult<bool> {
    if q.base.is_empty() {
        return Ok(false);
    }
    let Some(cands) = &q.candidates else {
        return Ok(false);
    };
    let sql = format!("SELECT count(*) FROM (SELECT 1 FROM ({cands}) AS c LIMIT {FEW}) AS hits");
    let n: i64 = c.query_unnamed(&sql, refs)?[0].get(0);
    Ok((n as usize) < FEW)
}

/// The rows of a search that matches few rows in all ([`few_in_all`]): found through the
/// search index alone, the list's other conditions tested on them. With those inside
/// ([`through_the_index`]) the planner joins the index's few rows with a bitmap of every
/// row the other conditions keep (all 100,000 open ones' at 1M items: 17-25 ms of a rare
/// word's 18-34).
fn through_the_index_alone(q: &ListSql, cond: &str) -> String {
    format!(
        "(SELECT * FROM (SELECT * FROM items WHERE {} AND {cond} OFFSET 0) AS items {}) \
         AS items",
        among_candidates(q),
        base_where(q)
    )
}

/// The number of matches of the last searched list read on a connection, known when its
/// first window held them all: the count that follows it (the TUI's, the bench's first
/// screen) is then answered without a sample, as long as no caseload write has bumped
/// the change counter since the list read it.
#[derive(Debug)]
pub(super) struct KnownTotal {
    /// The list's filter without its window.
    filter: ListFilter,
    /// The change counter before the list was read.
    changes: i64,
    total: u64,
}

/// The change counter (`caseload_changes()`, migration 21).
fn changes(c: &mut Conn) -> TxResult<i64> {
    Ok(c.query_unnamed("SELECT caseload_changes()", &[])?[0].get(0))
}

fn unwindowed(filter: &ListFilter) -> ListFilter {
    ListFilter {
        limit: 0,
        offset: 0,
        ..filter.clone()
    }
}

/// A searched list's first window, remembering how many match when it held them all.
#[allow(clippy::too_many_arguments)]
pub(super) fn list_first(
    c: &mut Conn,
    filter: &ListFilter,
    q: &ListSql,
    cond: &str,
    window: Window,
    order: &str,
    limit: &str,
    offset: &str,
) -> TxResult<Vec<postgres::Row>> {
    c.search_total = None;
    // (Which locks have expired changes with the clock alone.)
    if window.offset != 0 || window.reversed || filter.state == StateFilter::Expired {
        return list_window(c, q, cond, window, order, limit, offset);
    }
    let before = changes(c)?;
    let rows = list_window(c, q, cond, window, order, limit, offset)?;
    if rows.len() < window.limit {
        c.search_total = Some(KnownTotal {
            filter: unwindowed(filter),
            changes: before,
            total: rows.len() as u64,
        });
    }
    Ok(rows)
}

/// The count of `filter` when the list just read on this connection knows it.
pub(super) fn known_count(c: &mut Conn, filter: &ListFilter, cap: u64) -> TxResult<Option<u64>> {
    let Some(known) = c.search_total.take() else {
        return Ok(None);
    };
    if known.filter != unwindowed(filter) || changes(c)? != known.changes {
        return Ok(None);
    }
    let n = known.total.min(cap);
    c.search_total = Some(known);
    Ok(Some(n))
}

/// What the first `rows` rows of the list (of its conditions other than the search, in
/// list order) hold.
struct Sample {
    /// Rows read (fewer than asked: all there are).
    seen: usize,
    /// Of those, how many the search keeps.
    matches: usize,
}

fn count_in_first(c: &mut Conn, q: &ListSql, cond: &str, rows: usize) -> TxResult<Sample> {
    let params = super::reads::params(&q.params);
    let refs = super::reads::refs(&params);
    let sql = format!(
        "SELECT count(*), count(*) FILTER (WHERE {cond}) FROM \
         (SELECT * FROM items {} ORDER BY {} LIMIT {rows}) AS first",
        base_where(q),
        q.order
    );
    let row = c.query_unnamed(&sql, &refs)?;
    let (seen, matches): (i64, i64) = row.first().map(|r| (r.get(0), r.get(1))).unwrap_or((0, 0));
    Ok(Sample {
        seen: seen as usize,
        matches: matches as usize,
    })
}

/// A searched count, stopped at `cap`: from a sample of rows when the words are common
/// enough to reach the cap there (or the sample is every row), else through the index.
pub(super) fn count(c: &mut Conn, q: &ListSql, cond: &str, cap: u64) -> TxResult<u64> {
    let cap = cap as usize;
    let first = 2 * cap;
    let found = count_in_first(c, q, cond, first)?;
    if found.matches >= cap || found.seen < first {
        return Ok(found.matches.min(cap) as u64);
    }
    let params = super::reads::params(&q.params);
    let refs = super::reads::refs(&params);
    if let Some(second) = (2 * cap * first).checked_div(found.matches)
        && second <= SECOND_LOOK_FACTOR * first
    {
        let sql = format!(
            "SELECT count(*) FROM (SELECT 1 FROM (SELECT * FROM items {} ORDER BY {} \
             LIMIT {second}) AS first WHERE {cond} LIMIT {cap}) AS hits",
            base_where(q),
            q.order
        );
        let n: i64 = c.query_unnamed(&sql, &refs)?[0].get(0);
        if n as usize >= cap {
            return Ok(cap as u64);
        }
    }
    let sql = format!(
        "SELECT count(*) FROM (SELECT 1 FROM {} LIMIT {cap}) AS hits",
        through_the_index(q)
    );
    let n: i64 = c.query_unnamed(&sql, &refs)?[0].get(0);
    Ok(n as u64)
}

/// What search uses on a schema, for `doctor` and `init`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchIndex {
    /// The stored fold and its trigram index: searches use the index.
    Index,
    /// pg_trgm is installed but the schema has no index yet (`caseload init` adds it).
    Missing,
    /// pg_trgm is not installed (a DBA runs `CREATE EXTENSION pg_trgm`): searches scan.
    NoExtension {
        /// The server has the extension's files (`pg_available_extensions`).
        available: bool,
    },
}

/// What search uses on the schema `client` uses (asked outside a transaction).
pub fn search_index(client: &mut postgres::Client) -> Result<SearchIndex, postgres::Error> {
    let row = client.query_one(
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'pg_trgm'), \
         EXISTS (SELECT 1 FROM pg_catalog.pg_available_extensions WHERE name = 'pg_trgm'), \
         EXISTS (SELECT 1 FROM pg_catalog.pg_index i \
                 JOIN pg_catalog.pg_class k ON k.oid = i.indexrelid \
                 WHERE k.relname = 'item_search_trgm' AND i.indisvalid \
                 AND k.relnamespace = current_schema()::regnamespace)",
        &[],
    )?;
    let (installed, available, index): (bool, bool, bool) = (row.get(0), row.get(1), row.get(2));
    Ok(match (installed, index) {
        (_, true) => SearchIndex::Index,
        (true, false) => SearchIndex::Missing,
        (false, false) => SearchIndex::NoExtension { available },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trigram_needs_three_ascii_letters_or_digits_in_a_row() {
        for w in ["abc", "69529", "#a-69529", "muller", "x.abc"] {
            assert!(has_trigram(w), "{w}");
        }
        for w in ["er", "3b", "a-b-c", "łódź", "σοφια", "ab.cd", "東京都"] {
            assert!(!has_trigram(w), "{w}");
        }
    }
}
