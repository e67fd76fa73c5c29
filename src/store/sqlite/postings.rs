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

/// A multiplicative hash for packed trigrams and for words (the default SipHash costs more
/// than the rest of indexing a trigram).
#[derive(Default)]
struct TriHash(u64);

impl Hasher for TriHash {
    fn finish(&self) -> u64 {
        let m = u128::from(self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835);
        (m as u64) ^ ((m >> 64) as u64)
    }
    fn write(&mut self, bytes: &[u8]) {
        // Eight bytes at a time (a word's text); each step mixes the whole state.
        for chunk in bytes.chunks(8) {
            let mut v = [0u8; 8];
            v[..chunk.len()].copy_from_slice(chunk);
            self.0 =
                (self.0.rotate_left(5) ^ u64::from_le_bytes(v)).wrapping_mul(0x517C_C1B7_2722_0A95);
        }
    }
    fn write_u8(&mut self, b: u8) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x517C_C1B7_2722_0A95);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
    fn write_u128(&mut self, n: u128) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((n >> 64) as u64);
    }
}

type Fast = BuildHasherDefault<TriHash>;

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
///
/// Words repeat (within an item and from item to item), so each distinct word of up to
/// [`INLINE`] bytes is cut into trigrams once per batch: `words` keeps, keyed by the
/// word's bytes packed into an integer (no pointer to follow, no string to compare), the
/// slots of its trigrams' lists (in `cuts`) and the last item it was added for. An item's
/// repeated word then costs one lookup, a word seen before one lookup and a push per
/// trigram, where cutting it again cost a lookup per trigram (BENCHMARKS.md, "Search
/// straight after an import"). Longer words, and every word once [`WORDS_KEPT`] are kept
/// (memory stays bounded on text of many distinct words), are cut each time, as before.
pub(super) struct Batch {
    /// Each trigram's slot in `lists`.
    slot: HashMap<Tri, u32, Fast>,
    lists: Vec<(Tri, List)>,
    words: HashMap<u128, Word, Fast>,
    /// The slots of the kept words' trigrams, one run per word.
    cuts: Vec<u32>,
    folded: String,
    items: i64,
    /// How many words `words` may keep.
    kept: usize,
}

impl Default for Batch {
    fn default() -> Self {
        Self {
            slot: HashMap::default(),
            lists: Vec::new(),
            words: HashMap::default(),
            cuts: Vec::new(),
            folded: String::new(),
            items: 0,
            kept: WORDS_KEPT,
        }
    }
}

/// A kept word: its trigrams' slots (`cuts[start..start + len]`) and the last item that
/// held it.
struct Word {
    last: i64,
    start: u32,
    len: u32,
}

/// How many distinct words a batch keeps cut ([`Batch`]).
const WORDS_KEPT: usize = 32_768;

/// The longest word (in bytes) kept: its bytes and its length fit in a `u128`.
const INLINE: usize = 15;

/// A word of up to [`INLINE`] bytes as one integer: its bytes, and its length in the top
/// byte (so that no two words of different lengths are the same key). `at` is the word's
/// `len` bytes and at least 16 - `len` more (the folded text is padded: one load of 16
/// bytes, masked, instead of copying the word byte by byte into a buffer that is then
/// read whole, which stalls the load).
fn word_key(at: &[u8], len: usize) -> u128 {
    let mut b = [0u8; 16];
    b.copy_from_slice(&at[..16]);
    let bytes = u128::from_le_bytes(b) & ((1u128 << (8 * len)) - 1);
    bytes | ((len as u128) << 120)
}

/// How many bytes of padding follow the folded text ([`word_key`]).
const PADDING: usize = 16;

/// True for the ASCII characters `char::is_whitespace` is true for.
fn ascii_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ')
}

impl Batch {
    /// Adds item `id`'s text (its searched columns, joined by line ends). Ids must come
    /// in increasing order. The words are the folded text split at whitespace
    /// (`char::is_whitespace`), ASCII looked at byte by byte.
    pub(super) fn add(&mut self, id: i64, text: &str) {
        self.items += 1;
        let mut folded = std::mem::take(&mut self.folded);
        fold_into(text, &mut folded);
        let end = folded.len();
        folded.extend(std::iter::repeat_n('\0', PADDING));
        let bytes = folded.as_bytes();
        let (mut i, mut start) = (0, None);
        while i < end {
            let b = bytes[i];
            let (space, len) = match b {
                ..0x80 => (ascii_space(b), 1),
                _ => {
                    let c = folded[i..].chars().next().unwrap_or(' ');
                    (c.is_whitespace(), c.len_utf8())
                }
            };
            match (space, start) {
                (true, Some(s)) => {
                    self.add_word(id, &folded[s..i], &bytes[s..]);
                    start = None;
                }
                (false, None) => start = Some(i),
                _ => {}
            }
            i += len;
        }
        if let Some(s) = start {
            self.add_word(id, &folded[s..end], &bytes[s..]);
        }
        self.folded = folded;
    }

    /// Adds word `w` of item `id`; `at` is its bytes and the text after it (padded).
    fn add_word(&mut self, id: i64, w: &str, at: &[u8]) {
        let key = (w.len() <= INLINE).then(|| word_key(at, w.len()));
        if let Some(word) = key.and_then(|k| self.words.get_mut(&k)) {
            if word.last != id {
                word.last = id;
                let run = word.start as usize..(word.start + word.len) as usize;
                for &s in &self.cuts[run] {
                    self.lists[s as usize].1.push(id);
                }
            }
            return;
        }
        let start = self.cuts.len();
        self.cut_word(w);
        for &s in &self.cuts[start..] {
            self.lists[s as usize].1.push(id);
        }
        match key {
            Some(k) if self.words.len() < self.kept => {
                let len = (self.cuts.len() - start) as u32;
                let start = start as u32;
                self.words.insert(
                    k,
                    Word {
                        last: id,
                        start,
                        len,
                    },
                );
            }
            _ => self.cuts.truncate(start),
        }
    }

    /// Cuts `w` into its trigrams (the end padded with [`PAD`]), their slots appended to
    /// `cuts`.
    fn cut_word(&mut self, w: &str) {
        let mut chars = w.chars().chain([PAD, PAD]);
        let (Some(mut a), Some(mut b)) = (chars.next(), chars.next()) else {
            return;
        };
        for c in chars {
            let t = pack(a, b, c);
            let lists = &mut self.lists;
            let s = *self.slot.entry(t).or_insert_with(|| {
                lists.push((t, List::default()));
                (lists.len() - 1) as u32
            });
            self.cuts.push(s);
            (a, b) = (b, c);
        }
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
        let mut lists = self.lists;
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
         ORDER BY tri LIMIT CAST(?4 AS BIGINT)",
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
            .iter()
            .map(|&(t, _)| {
                let mut s = String::new();
                unpack(t, &mut s);
                s
            })
            .collect();
        got.sort();
        assert_eq!(got, ["er\n", "ler", "lle", "mul", "r\n\n", "ull", "x\n\n"]);
    }

    /// The batch's lists, decoded: trigram → ids.
    fn decoded(b: Batch) -> Vec<(String, Vec<i64>)> {
        let mut out: Vec<(String, Vec<i64>)> = b
            .lists
            .into_iter()
            .map(|(t, l)| {
                let (mut s, mut ids) = (String::new(), Vec::new());
                unpack(t, &mut s);
                decode(&l.bytes, &mut ids);
                assert_eq!(ids.len() as i64, l.n);
                (s, ids)
            })
            .collect();
        out.sort();
        out
    }

    /// The word cache changes nothing: the lists are those of every word of every item
    /// (split by `char::is_whitespace`) cut into trigrams one character at a time, whether
    /// words are kept or not (a cache of none, of three words, of all), on texts whose
    /// words repeat within and across items: one- and two-character words, accents, a
    /// word of one repeated letter, words of 15 and 16 bytes and longer (not kept), and
    /// words apart by Unicode whitespace.
    #[test]
    fn kept_words_give_the_lists_of_every_trigram_cut_one_by_one() {
        let words = [
            "a",
            "ab",
            "müller",
            "aaaa",
            "ledger",
            "x9",
            "ÉCOLE",
            "ecole",
            "ßtraße",
            "zz",
            "fifteen-bytes!!",
            "sixteen-bytes!!!",
            "{\"vat\":\"de123\",\"email\":\"a@b.example\"}",
            "ünïcödé-längér-wörd",
        ];
        let gaps = [
            " ", "\n\t", "\u{a0}", "\u{3000}", "\u{0b}", "  \r\n", "\u{2029}",
        ];
        let texts: Vec<String> = (0..60)
            .map(|i| {
                (0..(i % 13 + 1))
                    .map(|k| words[(i * 7 + k * k * 3) % words.len()])
                    .collect::<Vec<_>>()
                    .join(gaps[i % gaps.len()])
            })
            .collect();
        let mut naive: std::collections::BTreeMap<String, Vec<i64>> = Default::default();
        for (i, text) in texts.iter().enumerate() {
            let id = i as i64 * 3 + 1;
            let folded = crate::domain::search::fold(text);
            for w in folded.split(char::is_whitespace).filter(|w| !w.is_empty()) {
                let cs: Vec<char> = w.chars().collect();
                for k in 0..cs.len() {
                    let tri: String = [
                        cs[k],
                        cs.get(k + 1).copied().unwrap_or(PAD),
                        cs.get(k + 2).copied().unwrap_or(PAD),
                    ]
                    .into_iter()
                    .collect();
                    let ids = naive.entry(tri).or_default();
                    if ids.last() != Some(&id) {
                        ids.push(id);
                    }
                }
            }
        }
        let naive: Vec<(String, Vec<i64>)> = naive.into_iter().collect();
        for kept in [0, 3, WORDS_KEPT] {
            let mut b = Batch {
                kept,
                ..Batch::default()
            };
            for (i, text) in texts.iter().enumerate() {
                b.add(i as i64 * 3 + 1, text);
            }
            assert_eq!(b.items, texts.len() as i64);
            assert!(b.words.len() <= kept);
            assert_eq!(decoded(b), naive, "words kept: {kept}");
        }
    }
}
