//! The search index of SQLite (schema 28): for each batch of indexed items and each
//! trigram of their folded words, the sorted ids of the items that hold it, written once
//! per batch (issue 31 §1; BENCHMARKS.md, "Search straight after an import").
//!
//! Why not FTS5 (schema 7 to 26): FTS5 is told every trigram of every item and looks
//! each one up in its table in memory, merges its segments again and again, and no
//! option of it removes that; indexing cost ~3× the import's own rows. Here a batch's
//! trigrams are gathered in a hash map in Rust (each item's id once per trigram), then
//! written as one row per trigram (`search_postings`: `batch`, `tri`, `n`, `ids`), in
//! the order of the table's key, so a batch's rows are appended at the end of the tree
//! and written once.
//!
//! A trigram is three characters of a folded word, the word's end padded with line ends:
//! `müller` gives `mül`, `üll`, `lle`, `ler`, `er\n`, `r\n\n`. So every occurrence of a
//! word of one or two characters begins a trigram, also at the end of a word, and such a
//! word is looked up through the range of trigrams that begin with it.
//!
//! A row changed after it was indexed is indexed again in a later batch; its old entries
//! stay (a search's candidates are a superset of its matches: every word is checked on
//! them, and rows changed since indexing are excluded from the index's hits and scanned).
//! Small batches (the TUI's idle ones) are merged once there are [`MERGE_AT`] of a size
//! tier, so that a lookup reads one row per batch of a bounded number of batches.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use rusqlite::Connection;
use rusqlite::types::ValueRef;

use crate::domain::search::fold_into;
use crate::store::error::Result;

/// A trigram packed into 63 bits: three characters of 21 bits each, the first highest, so
/// that the packed order is the order of the characters (and of their UTF-8 text).
type Tri = u64;

/// The character a word's end is padded with.
const PAD: char = '\n';

fn pack(a: char, b: char, c: char) -> Tri {
    ((a as u64) << 42) | ((b as u64) << 21) | (c as u64)
}

fn unpack(t: Tri, out: &mut String) {
    out.clear();
    for shift in [42, 21, 0] {
        let c = char::from_u32(((t >> shift) & 0x1F_FFFF) as u32).unwrap_or('\u{FFFD}');
        out.push(c);
    }
}

/// A multiplicative hash for packed trigrams (the default SipHash costs more than the
/// rest of indexing a trigram).
#[derive(Default)]
struct TriHash(u64);

impl Hasher for TriHash {
    fn finish(&self) -> u64 {
        let m = u128::from(self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835);
        (m as u64) ^ ((m >> 64) as u64)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// One trigram's ids in a batch: LEB128 varints of the differences from the previous id
/// (the first from 0). Ids come in increasing order within a batch.
#[derive(Default)]
struct List {
    last: i64,
    n: i64,
    bytes: Vec<u8>,
}

impl List {
    fn push(&mut self, id: i64) {
        if self.n > 0 && id <= self.last {
            return;
        }
        let mut d = (id - if self.n > 0 { self.last } else { 0 }) as u64;
        loop {
            let b = (d & 0x7F) as u8;
            d >>= 7;
            if d == 0 {
                self.bytes.push(b);
                break;
            }
            self.bytes.push(b | 0x80);
        }
        self.last = id;
        self.n += 1;
    }
}

/// Decodes a list written by [`List`] onto `out`.
fn decode(bytes: &[u8], out: &mut Vec<i64>) {
    let (mut id, mut d, mut shift) = (0i64, 0u64, 0u32);
    for &b in bytes {
        d |= u64::from(b & 0x7F) << shift;
        if b & 0x80 != 0 {
            shift += 7;
            continue;
        }
        id = id.wrapping_add(d as i64);
        out.push(id);
        d = 0;
        shift = 0;
    }
}

/// A list's bytes (none for anything but a blob: the index writes only blobs).
fn blob(v: ValueRef<'_>) -> &[u8] {
    match v {
        ValueRef::Blob(b) => b,
        _ => &[],
    }
}

/// A batch being indexed: every trigram's ids so far.
#[derive(Default)]
pub(super) struct Batch {
    lists: HashMap<Tri, List, BuildHasherDefault<TriHash>>,
    folded: String,
    word: Vec<char>,
    items: i64,
}

impl Batch {
    /// Adds item `id`'s text (its searched columns, joined by line ends). Ids must come
    /// in increasing order.
    pub(super) fn add(&mut self, id: i64, text: &str) {
        self.items += 1;
        let mut folded = std::mem::take(&mut self.folded);
        fold_into(text, &mut folded);
        for w in folded.split(char::is_whitespace).filter(|w| !w.is_empty()) {
            self.word.clear();
            self.word.extend(w.chars());
            let n = self.word.len();
            for i in 0..n {
                let b = self.word.get(i + 1).copied().unwrap_or(PAD);
                let c = self.word.get(i + 2).copied().unwrap_or(PAD);
                self.lists
                    .entry(pack(self.word[i], b, c))
                    .or_default()
                    .push(id);
            }
        }
        self.folded = folded;
    }

    /// Writes the batch as a new one of the index (merging small ones: [`MERGE_AT`]);
    /// returns how many items it held.
    pub(super) fn write(self, c: &Connection) -> Result<i64> {
        if self.items == 0 {
            return Ok(0);
        }
        let batch: i64 = c
            .prepare_cached("SELECT coalesce(max(batch), 0) + 1 FROM search_batches")?
            .query_row([], |r| r.get(0))?;
        c.prepare_cached("INSERT INTO search_batches (batch, items) VALUES (?1, ?2)")?
            .execute([batch, self.items])?;
        let mut lists: Vec<(Tri, List)> = self.lists.into_iter().collect();
        lists.sort_unstable_by_key(|(t, _)| *t);
        let mut ins = c.prepare_cached(
            "INSERT INTO search_postings (batch, tri, n, ids) VALUES (?1, ?2, ?3, ?4)",
        )?;
        let mut tri = String::new();
        for (t, list) in &lists {
            unpack(*t, &mut tri);
            ins.execute(rusqlite::params![batch, tri, list.n, list.bytes])?;
        }
        merge_small(c)?;
        Ok(self.items)
    }
}

/// How many batches of one size tier make a merge.
const MERGE_AT: usize = 8;

/// The size tier of a batch of `items` (0: under 1,000 items, 1: under 16,000, 2: the
/// rest, never merged).
fn tier(items: i64) -> i64 {
    match items {
        ..1_000 => 0,
        1_000..16_000 => 1,
        _ => 2,
    }
}

/// Merges the batches of a tier that has [`MERGE_AT`] of them into one (its trigrams in
/// order, one at a time: memory holds one trigram's ids).
fn merge_small(c: &Connection) -> Result<()> {
    for t in 0..2 {
        let batches: Vec<(i64, i64)> = c
            .prepare_cached("SELECT batch, items FROM search_batches ORDER BY batch")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?
            .into_iter()
            .filter(|(_, n)| tier(*n) == t)
            .collect();
        if batches.len() < MERGE_AT {
            continue;
        }
        let ids: Vec<String> = batches.iter().map(|(b, _)| b.to_string()).collect();
        let set = format!("[{}]", ids.join(","));
        let items: i64 = batches.iter().map(|(_, n)| n).sum();
        let into: i64 = c
            .prepare_cached("SELECT max(batch) + 1 FROM search_batches")?
            .query_row([], |r| r.get(0))?;
        {
            let mut stmt = c.prepare_cached(
                "SELECT tri, ids FROM search_postings \
                 WHERE batch IN (SELECT value FROM json_each(?1)) ORDER BY tri, batch",
            )?;
            let mut q = stmt.query([&set])?;
            let mut ins = c.prepare_cached(
                "INSERT INTO search_postings (batch, tri, n, ids) VALUES (?1, ?2, ?3, ?4)",
            )?;
            let mut cur: Option<String> = None;
            let mut all: Vec<i64> = Vec::new();
            let mut flush = |tri: &str, all: &mut Vec<i64>| -> Result<()> {
                all.sort_unstable();
                all.dedup();
                let mut list = List::default();
                for &id in all.iter() {
                    list.push(id);
                }
                ins.execute(rusqlite::params![into, tri, list.n, list.bytes])?;
                all.clear();
                Ok(())
            };
            while let Some(r) = q.next()? {
                let tri: String = r.get(0)?;
                if cur.as_deref() != Some(tri.as_str()) {
                    if let Some(prev) = cur.take() {
                        flush(&prev, &mut all)?;
                    }
                    cur = Some(tri);
                }
                decode(blob(r.get_ref(1)?), &mut all);
            }
            if let Some(prev) = cur.take() {
                flush(&prev, &mut all)?;
            }
        }
        c.prepare_cached(
            "DELETE FROM search_postings WHERE batch IN (SELECT value FROM json_each(?1))",
        )?
        .execute([&set])?;
        c.prepare_cached(
            "DELETE FROM search_batches WHERE batch IN (SELECT value FROM json_each(?1))",
        )?
        .execute([&set])?;
        c.prepare_cached("INSERT INTO search_batches (batch, items) VALUES (?1, ?2)")?
            .execute([into, items])?;
    }
    Ok(())
}

/// How many items hold trigram `tri` (an upper bound: an item indexed again counts
/// again).
pub(super) fn count(c: &Connection, tri: &str) -> Result<i64> {
    Ok(c.prepare_cached(
        "SELECT coalesce(sum(n), 0) FROM search_postings \
         WHERE batch IN (SELECT batch FROM search_batches) AND tri = ?1",
    )?
    .query_row([tri], |r| r.get(0))?)
}

/// The sorted ids (no repeats) of the items that hold any of `tris`.
pub(super) fn ids(c: &Connection, tris: &[String]) -> Result<Vec<i64>> {
    let mut stmt = c.prepare_cached(
        "SELECT ids FROM search_postings \
         WHERE batch IN (SELECT batch FROM search_batches) AND tri = ?1",
    )?;
    let mut out: Vec<i64> = Vec::new();
    let mut sorted = true;
    for tri in tris {
        let mut rows = stmt.query([tri])?;
        while let Some(r) = rows.next()? {
            let before = out.len();
            decode(blob(r.get_ref(0)?), &mut out);
            if before > 0 && out.len() > before && out[before] <= out[before - 1] {
                sorted = false;
            }
        }
    }
    if !sorted {
        out.sort_unstable();
        out.dedup();
    }
    Ok(out)
}

/// The trigrams from `lo` to `hi` (both included) and how many items hold each,
/// in order; `None` when there are more than `cap` of them.
pub(super) fn range(
    c: &Connection,
    lo: &str,
    hi: &str,
    cap: usize,
) -> Result<Option<Vec<(String, i64)>>> {
    let batches: Vec<i64> = c
        .prepare_cached("SELECT batch FROM search_batches ORDER BY batch")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut stmt = c.prepare_cached(
        "SELECT tri, n FROM search_postings WHERE batch = ?1 AND tri >= ?2 AND tri <= ?3 \
         ORDER BY tri LIMIT ?4",
    )?;
    let mut all: std::collections::BTreeMap<String, i64> = Default::default();
    for b in batches {
        let mut rows = stmt.query(rusqlite::params![b, lo, hi, cap as i64 + 1])?;
        while let Some(r) = rows.next()? {
            *all.entry(r.get(0)?).or_default() += r.get::<_, i64>(1)?;
        }
        if all.len() > cap {
            return Ok(None);
        }
    }
    Ok(Some(all.into_iter().collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_round_trip_and_trigrams_pack_in_order() {
        let mut l = List::default();
        let ids = [1i64, 2, 3, 130, 131, 1 << 20, (1 << 40) + 7];
        for &id in &ids {
            l.push(id);
            l.push(id);
        }
        assert_eq!(l.n, ids.len() as i64);
        let mut out = Vec::new();
        decode(&l.bytes, &mut out);
        assert_eq!(out, ids);
        let mut s = String::new();
        let t = pack('m', 'ü', '\u{10FFFF}');
        unpack(t, &mut s);
        assert_eq!(s, "mü\u{10FFFF}");
        assert!(pack('a', '\n', '\n') < pack('a', 'a', 'a'));
        assert!(pack('a', 'ÿ', 'a') < pack('b', '\n', '\n'));
    }

    #[test]
    fn a_word_s_end_is_padded() {
        let mut b = Batch::default();
        b.add(5, "Müller\tx");
        let mut got: Vec<String> = b
            .lists
            .keys()
            .map(|&t| {
                let mut s = String::new();
                unpack(t, &mut s);
                s
            })
            .collect();
        got.sort();
        assert_eq!(got, ["er\n", "ler", "lle", "mul", "r\n\n", "ull", "x\n\n"]);
    }
}
