//! How a search's rows are found on SQLite: from the trigram index's hits, or by walking
//! the list with the matcher.
//!
//! Each word has keys into the index (`postings`): a word of three or more characters its
//! trigrams, a word of one or two characters the trigrams that begin with it (a range of
//! the index's trigrams; the index pads every word's end with line ends so that every
//! occurrence has one). The rarest key's lists are read, narrowed by the next rare ones;
//! every word is checked on the hits by the matcher. Those hits, the not-yet-indexed
//! tail and the rows changed since they were indexed (both scanned with the matcher) make
//! the search's candidates. Then one of three plans answers, chosen from the index's own
//! figures (each trigram's item count, summed over its batches; the kept counts give the
//! list's length):
//!
//! - **candidates**: each candidate is looked up (`id IN json_each(…)`) and checked against
//!   the list's conditions; cheap when there are few, and for lists in id order (all,
//!   done, …) it stops at the first page because the candidates come in that order (and
//!   only the first ones are passed, more when they do not fill the page);
//! - **walk with a membership test**: the list is walked in its own order through its
//!   index and each row's id is tested against the candidates (`caseload_hit`, a bitmap
//!   passed as one blob), never reading a row that is not a candidate, and stopping once
//!   the page (or the capped count) is full; for lists in another order than the ids'
//!   (open items) when the walk to the page's last match is shorter than looking every
//!   candidate up (a lookup must read them all to sort them);
//! - **scan**: the list is walked in its own order and the matcher runs on each row; for
//!   words in a large part of the items (a dense match fills the first page at once, and
//!   reading a huge hit list is what would be slow) and while more than 20,000 items are
//!   not indexed yet.
//!
//! A list and then a count of the same search (what the TUI asks) share one plan: the
//! connection keeps the last one while nothing has changed ([`PlanCache`]).

use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::functions::Context;
use rusqlite::types::ValueRef;

use crate::domain::search::{Search, trigram_range};
use crate::store::error::Result;
use crate::store::list::{ListSql, Param};

use super::postings;
use super::search::text_condition;

/// The SQL function that tests an id against a candidate set (`caseload_hit(id, set)`).
pub(super) const HIT: &str = "caseload_hit";

/// Below this many hits a word is never scanned for.
const PROBE: i64 = 500;

/// A word estimated to have more hits than this is scanned for, not looked up.
const DENSE_HITS: i64 = 50_000;

/// A word in more than one in this many indexed items is scanned for: the scan finds
/// the count's 1,001 matches within 20 × 1,001 rows.
const DENSE_RATIO: i64 = 20;

/// A tail longer than this (rows not indexed yet) makes the candidates cost a scan of it
/// anyway: the list is scanned in its own order instead.
const LONG_TAIL: i64 = 20_000;

/// Reading a trigram's list to narrow the candidates pays while it is at most this many
/// times as long as they are many.
const NARROW_RATIO: i64 = 20;

/// Looking a candidate up costs about this many steps of a list's index walk.
const LOOKUP_COST: u64 = 8;

/// A short word that begins more distinct trigrams than this is not looked up (each is a
/// list to read), while its matches are found by the other words' keys or by the ordered
/// scan.
const SHORT_WORD_TERMS: usize = 500;

/// True when a word with `hits` estimated hits among `indexed` items is best scanned for.
fn dense(hits: i64, indexed: i64) -> bool {
    hits > DENSE_HITS || (hits > PROBE && hits.saturating_mul(DENSE_RATIO) > indexed)
}

/// One way into the index: the estimated number of hits and the trigrams whose hits
/// (together) hold every match (`None`: the hits are not to be read: a short word found
/// dense before all its trigrams were counted, or one with no trigram at all when the
/// estimate is 0).
type Key = (i64, Option<Vec<String>>);

/// The key of a word of one or two characters: the trigrams that begin with it (a range
/// of the index's trigrams, `postings::range`); the sum of their items is the estimate
/// (an upper bound: an item may hold several of them).
fn short_key(c: &Connection, word: &str, indexed: i64) -> Result<Key> {
    let (lo, hi) = trigram_range(word);
    let Some(terms) = postings::range(c, &lo, &hi, SHORT_WORD_TERMS)? else {
        // Too many trigrams to read all their lists (see the constant): never read.
        return Ok((i64::MAX, None));
    };
    let sum = terms.iter().fold(0i64, |s, (_, n)| s.saturating_add(*n));
    if terms.is_empty() {
        return Ok((0, None));
    }
    if dense(sum, indexed) {
        return Ok((sum, None));
    }
    Ok((sum, Some(terms.into_iter().map(|(t, _)| t).collect())))
}

/// The search's keys into the index (each trigram of its longer words, each short word's
/// trigrams) with their estimated hits, rarest first; `None` when there is none or the
/// rarest is dense. Trigrams, not whole words: FTS5 answers a word by reading the lists
/// of all its trigrams (`nordl` reads the huge list of `ord`, from "order"), while here
/// only the rare ones are read.
fn rarest(c: &Connection, s: &Search, indexed: i64) -> Result<Option<Vec<Key>>> {
    let mut all: Vec<Key> = Vec::new();
    for word in s.short_words() {
        let key = short_key(c, word, indexed)?;
        let none = key.0 == 0;
        all.push(key);
        if none {
            break;
        }
    }
    if all.iter().all(|k| k.0 > 0) {
        for tri in s.trigrams() {
            let hits = postings::count(c, &tri)?;
            all.push((hits, Some(vec![tri])));
            if hits == 0 {
                break;
            }
        }
    }
    all.sort();
    Ok(all
        .first()
        .is_some_and(|(hits, _)| !dense(*hits, indexed))
        .then_some(all))
}

/// The indexed items (but those changed since indexing) that have every one of the rare
/// keys: the rarest one's hits, narrowed by each next one whose list is at most
/// [`NARROW_RATIO`] times as long (a row read is worth about that many list entries).
fn indexed_hits(c: &Connection, keys: &[Key], dirty: &[i64]) -> Result<Vec<i64>> {
    let mut ids: Option<Vec<i64>> = None;
    let mut rarest: Option<i64> = None;
    for (est, tris) in keys {
        let Some(tris) = tris else {
            if *est == 0 {
                // A short word no indexed item holds.
                return Ok(Vec::new());
            }
            continue;
        };
        match rarest {
            None => rarest = Some(*est),
            Some(r) if *est > r.saturating_mul(NARROW_RATIO) => break,
            Some(_) => {}
        }
        let hits = postings::ids(c, tris)?;
        ids = Some(match ids {
            None => hits,
            Some(mut have) => {
                let mut at = 0;
                have.retain(|id| {
                    while at < hits.len() && hits[at] < *id {
                        at += 1;
                    }
                    at < hits.len() && hits[at] == *id
                });
                have
            }
        });
        if ids.as_ref().is_some_and(Vec::is_empty) {
            break;
        }
    }
    let mut ids = ids.unwrap_or_default();
    if !dirty.is_empty() {
        ids.retain(|id| dirty.binary_search(id).is_err());
    }
    Ok(ids)
}

/// The candidates of a search: the index's hits of its rare trigrams (except rows changed
/// since they were indexed), and the tail's and the changed rows' matches; sorted, no
/// repeats.
fn candidates(c: &Connection, s: &Search, keys: &[Key], indexed: i64) -> Result<Vec<i64>> {
    let dirty: Vec<i64> = c
        .prepare_cached("SELECT id FROM search_dirty ORDER BY id")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut ids = indexed_hits(c, keys, &dirty)?;
    let mut values: Vec<rusqlite::types::Value> = vec![indexed.into()];
    let has = text_condition(s, |v| {
        values.push(v.into());
        format!("?{}", values.len())
    });
    let scanned = format!(
        "SELECT id FROM items WHERE id > ?1 AND {has} UNION ALL \
         SELECT id FROM items WHERE id IN (SELECT id FROM search_dirty) AND {has}"
    );
    let mut stmt = c.prepare_cached(&scanned)?;
    let more = stmt.query_map(rusqlite::params_from_iter(values), |r| r.get(0))?;
    for id in more {
        ids.push(id?);
    }
    ids.extend(s.id());
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

/// A candidate set as one blob for [`HIT`]: a bitmap over `[first, last]` when that is
/// small, else the sorted ids. Byte 0 says which (0 bitmap, 1 ids), bytes 1..9 hold the
/// first id (bitmap) and the rest the bits or the ids, little-endian.
pub(super) fn encode(ids: &[i64]) -> Vec<u8> {
    let (Some(&first), Some(&last)) = (ids.first(), ids.last()) else {
        return vec![1];
    };
    let span = last.abs_diff(first) / 8 + 1;
    if span <= (ids.len() as u64) * 8 + 4096 {
        let mut out = vec![0u8; 9 + span as usize];
        out[1..9].copy_from_slice(&first.to_le_bytes());
        for &id in ids {
            let bit = id.abs_diff(first);
            out[9 + (bit / 8) as usize] |= 1 << (bit % 8);
        }
        return out;
    }
    let mut out = Vec::with_capacity(1 + ids.len() * 8);
    out.push(1);
    for &id in ids {
        out.extend_from_slice(&id.to_le_bytes());
    }
    out
}

/// True when `id` is in a set made by [`encode`].
pub(super) fn contains(set: &[u8], id: i64) -> bool {
    match set.split_first() {
        Some((0, rest)) if rest.len() >= 8 => {
            let mut first = [0u8; 8];
            first.copy_from_slice(&rest[..8]);
            let first = i64::from_le_bytes(first);
            if id < first {
                return false;
            }
            let bit = id.abs_diff(first);
            rest.get(8 + (bit / 8) as usize)
                .is_some_and(|b| b & (1 << (bit % 8)) != 0)
        }
        Some((1, rest)) => {
            let n = rest.len() / 8;
            let at = |i: usize| {
                let mut b = [0u8; 8];
                b.copy_from_slice(&rest[i * 8..i * 8 + 8]);
                i64::from_le_bytes(b)
            };
            let (mut lo, mut hi) = (0, n);
            while lo < hi {
                let mid = (lo + hi) / 2;
                match at(mid).cmp(&id) {
                    std::cmp::Ordering::Less => lo = mid + 1,
                    std::cmp::Ordering::Greater => hi = mid,
                    std::cmp::Ordering::Equal => return true,
                }
            }
            false
        }
        _ => false,
    }
}

/// `caseload_hit(id, set)`: true when the id is in the set.
pub(super) fn hit(ctx: &Context<'_>) -> rusqlite::Result<bool> {
    Ok(match (ctx.get_raw(0), ctx.get_raw(1)) {
        (ValueRef::Integer(id), ValueRef::Blob(set)) => contains(set, id),
        _ => false,
    })
}

/// What planning a search found: scan the list, or these candidates (none: nothing
/// matches).
#[derive(Debug, Clone)]
enum Plan {
    Scan,
    /// The candidates, and the highest id in the file when they were found (how many
    /// items they are among, for the walk's estimate).
    Candidates(Arc<[i64]>, i64),
}

/// What a cached plan is valid for: the same words, nobody's commit since (this
/// connection's changes and, through `PRAGMA data_version`, everyone else's) and the same
/// index mark.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PlanKey {
    words: Vec<String>,
    data_version: i64,
    changes: u64,
    indexed: i64,
}

/// The last search's plan on one connection. The TUI asks for a search's first page and
/// then for its count: the second is answered from the first's candidates instead of
/// probing the index and scanning the tail again. Used only outside a transaction
/// (inside one, this connection's uncommitted changes would not show in the key).
#[derive(Debug, Default)]
pub(super) struct PlanCache {
    last: Option<(PlanKey, Plan)>,
}

impl PlanCache {
    /// The plan of `search`, from the cache when nothing changed since it was made.
    fn plan(&mut self, c: &Connection, search: &Search) -> Result<Plan> {
        let (indexed, top): (i64, i64) = c
            .prepare_cached(
                "SELECT indexed, coalesce((SELECT max(id) FROM items), 0) FROM search_meta",
            )?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let key = if c.is_autocommit() {
            let data_version: i64 = c
                .prepare_cached("PRAGMA data_version")?
                .query_row([], |r| r.get(0))?;
            Some(PlanKey {
                words: search.words().to_vec(),
                data_version,
                changes: c.total_changes(),
                indexed,
            })
        } else {
            None
        };
        if let (Some(key), Some((last, plan))) = (&key, &self.last)
            && key == last
        {
            return Ok(plan.clone());
        }
        let plan = plan_afresh(c, search, indexed, top)?;
        if let Some(key) = key {
            self.last = Some((key, plan.clone()));
        }
        Ok(plan)
    }
}

/// Plans a search from the index's figures (see the module's comment).
fn plan_afresh(c: &Connection, search: &Search, indexed: i64, top: i64) -> Result<Plan> {
    if top - indexed > LONG_TAIL {
        // Most of what a search needs is not indexed yet (a big import with no TUI
        // running): walking the list in order at least stops early for common words.
        return Ok(Plan::Scan);
    }
    let Some(keys) = rarest(c, search, indexed)? else {
        return Ok(Plan::Scan);
    };
    Ok(Plan::Candidates(
        candidates(c, search, &keys, indexed)?.into(),
        top,
    ))
}

/// How long the list of a filter is, when the kept counts say (`None`: a list that is
/// not counted, such as held locks, which is short).
pub(super) type ListRows = Option<u64>;

/// How many of the list's matches a query reads before it stops: a page's offset and
/// limit, a capped count's cap (`None`: all of them, an uncapped count or list).
pub(super) type Need = Option<u64>;

/// True when looking each candidate up (and sorting them into the list's order) costs
/// less than walking the list (`rows` long, in an order other than the ids') with the
/// membership test until `need` matches are found. A lookup reads every candidate: in
/// another order than the list's, the first page is known only once all are sorted. The
/// walk stops at the `need`th match: the candidates taken as spread evenly over the
/// `items` ids, it meets one in every `items / candidates` rows of the list (never more
/// than the list). A middle-band word straight after an import (25,000 of 1M open items)
/// walks ~8,000 index entries for a page of 200 where the lookup read and checked all
/// 25,000 rows (BENCHMARKS.md, "Search straight after an import").
fn lookup_is_cheaper(candidates: u64, rows: u64, need: Need, items: u64) -> bool {
    let lookup = candidates.saturating_mul(LOOKUP_COST);
    let walk = match need {
        Some(need) => (need.saturating_mul(items.max(1)) / candidates.max(1)).min(rows),
        None => rows,
    };
    lookup < walk
}

/// Where a list's rows come from (always `items`), its WHERE clause, and whether
/// candidates were left out (below), for a search planned as above; `rows` is the length
/// of the list without the search.
///
/// A list in id order (all items, done, …) looks its candidates up in that order, so its
/// first `need` matches are among the first candidates: at most `take` of them are passed
/// (each one passed costs SQLite a step of building the `IN` list, ~0.2 µs, however few
/// are read: 25,000 for `müller` at 1M items). The third value is true when some were left
/// out: a query that found fewer than it needed among those must be asked again with a
/// larger `take` (every match lies among the candidates, in the same order, so one that
/// found what it needed has its answer).
pub(super) fn source(
    c: &Connection,
    plans: &mut PlanCache,
    q: &mut ListSql,
    rows: ListRows,
    need: Need,
    take: usize,
) -> Result<(String, String, bool)> {
    let scan = ("items".to_string(), q.where_.clone(), false);
    let Some((search, cond)) = q.search.clone() else {
        return Ok(scan);
    };
    let (ids, items) = match plans.plan(c, &search)? {
        Plan::Scan => return Ok(scan),
        Plan::Candidates(ids, top) => (ids, top.max(0) as u64),
    };
    if ids.is_empty() {
        return Ok(scan_nothing());
    }
    let mut conds: Vec<String> = q.base.clone();
    let by_id = matches!(q.order, "id" | "id DESC");
    let lookup = rows.is_some_and(|n| by_id || lookup_is_cheaper(ids.len() as u64, n, need, items));
    let mut cut = false;
    if lookup {
        let mut passed: &[i64] = &ids;
        if by_id && passed.len() > take {
            cut = true;
            passed = match q.order {
                "id" => &passed[..take],
                _ => &passed[passed.len() - take..],
            };
        }
        let list = passed
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let p = q.push(Param::Text(format!("[{list}]")));
        conds.insert(0, format!("id IN (SELECT value FROM json_each({p}))"));
    } else {
        let p = q.push(Param::Blob(encode(&ids)));
        conds.push(format!("{HIT}(id, {p})"));
    }
    // The candidates hold an item for each of the rarest key's hits: every word is
    // checked on them (only on those, the condition comes last).
    conds.push(cond);
    Ok((
        "items".to_string(),
        format!("WHERE {}", conds.join(" AND ")),
        cut,
    ))
}

/// How many candidates a list in id order is first given for `need` matches: twice as
/// many and a few more (most of a search's candidates match); each retry gives
/// [`MORE_CANDIDATES`] times as many.
pub(super) fn first_take(need: Need) -> usize {
    need.map_or(usize::MAX, |n| {
        usize::try_from(n.saturating_mul(2).saturating_add(64)).unwrap_or(usize::MAX)
    })
}

/// How much more a retry of a list in id order takes (see [`source`]).
pub(super) const MORE_CANDIDATES: usize = 8;

/// A search with no candidates at all finds nothing.
fn scan_nothing() -> (String, String, bool) {
    ("items".to_string(), "WHERE 0".to_string(), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidate_sets_answer_membership_in_both_encodings() {
        for ids in [
            vec![],
            vec![5],
            vec![1, 2, 3, 64, 65, 1000],
            vec![7, 1_000_000_000],
            (0..500).map(|i| i * 37 + 3).collect::<Vec<i64>>(),
            vec![-3, 0, 9_000_000_000],
        ] {
            let set = encode(&ids);
            for probe in -5..20_000 {
                assert_eq!(
                    contains(&set, probe),
                    ids.contains(&probe),
                    "{ids:?} {probe}"
                );
            }
            for &id in &ids {
                assert!(contains(&set, id), "{id}");
            }
            assert!(!contains(&set, i64::MAX));
            assert!(!contains(&set, i64::MIN));
        }
        assert_eq!(encode(&[1, 2, 3])[0], 0, "dense: a bitmap");
        assert_eq!(encode(&[1, 1 << 40])[0], 1, "sparse: the ids");
    }

    /// A short word's key is up to [`SHORT_WORD_TERMS`] trigrams, exactly those that
    /// begin with the word, over every batch of the index (small ones merged on the way);
    /// a word beginning more trigrams than that is never read (its key sorts last).
    #[test]
    fn a_short_word_s_key_is_its_trigrams_up_to_a_cap() {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE search_batches (batch INTEGER PRIMARY KEY, items INTEGER NOT NULL); \
             CREATE TABLE search_postings (batch INTEGER NOT NULL, tri TEXT NOT NULL, \
             n INTEGER NOT NULL, ids BLOB NOT NULL, PRIMARY KEY (batch, tri));",
        )
        .unwrap();
        let cap = SHORT_WORD_TERMS as u32;
        let mut batch = postings::Batch::default();
        for i in 0..3000u32 {
            let c1 = char::from_u32(0x4E00 + i).unwrap();
            // `m` begins exactly the cap's number of trigrams, `k` six times as many.
            let m = char::from_u32(0x4E00 + i % cap).unwrap();
            batch.add(i64::from(i) + 1, &format!("j K{c1}\nm{m} x\u{FFFF}"));
            if i % 300 == 299 {
                std::mem::take(&mut batch).write(&c).unwrap();
            }
        }
        let batches: i64 = c
            .query_row("SELECT count(*) FROM search_batches", [], |r| r.get(0))
            .unwrap();
        assert_eq!(batches, 3, "eight batches of 300 merged into one");
        assert_eq!(
            short_key(&c, "k", 1_000_000_000).unwrap(),
            (i64::MAX, None),
            "past the cap"
        );
        let (hits, tris) = short_key(&c, "m", 1_000_000_000).unwrap();
        assert_eq!(hits, 3000);
        let tris = tris.unwrap();
        assert_eq!(tris.len(), SHORT_WORD_TERMS);
        assert!(tris.iter().all(|t| t.starts_with('m') && t.ends_with('\n')));
        assert_eq!(
            postings::ids(&c, &tris).unwrap(),
            (1..=3000).collect::<Vec<i64>>()
        );
        assert_eq!(short_key(&c, "q", 1_000_000_000).unwrap(), (0, None));
        assert_eq!(
            short_key(&c, "j", 1_000_000_000).unwrap(),
            (3000, Some(vec!["j\n\n".to_string()]))
        );
        // Among 3,000 items the word is dense past 500 hits.
        assert_eq!(short_key(&c, "m", 3000).unwrap(), (3000, None), "dense");
        assert_eq!(
            short_key(&c, "\u{FFFF}", 1_000_000_000).unwrap(),
            (3000, Some(vec!["\u{FFFF}\n\n".to_string()]))
        );
    }

    #[test]
    fn dense_words_are_scanned_for() {
        assert!(!dense(0, 1_000_000));
        assert!(!dense(PROBE, 1_000));
        assert!(dense(PROBE + 1, 1_000), "half of the items");
        assert!(!dense(25_000, 1_000_000), "2.5 %: looked up");
        assert!(dense(60_000, 10_000_000), "past the absolute cap");
        assert!(dense(10_000, 100_000), "10 %: scanned");
    }
}
