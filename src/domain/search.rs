//! Free-text search: what a typed search means, written once for every backend.
//!
//! A search is words; an item matches when every word appears somewhere in its searched
//! columns (`fields::FIELDS`: title, body, params, notes, …), in any order, as part of a
//! word or a whole one, ignoring case and accents (`jose` finds `José`, `69529` finds `order #A-69529`). Both
//! sides are folded the same way ([`fold`]): the accented Latin letters of Latin-1 and
//! Latin Extended-A become their base letter, and everything is lower-cased
//! (Unicode-wide, `müller` finds `MÜLLER`). PostgreSQL runs the same table through
//! `translate()` ([`FOLD_FROM`], [`FOLD_TO`]) and lowers case under a UTF-8 collation
//! even where the database's own character type is C (its migration 9); it finds a
//! search's rows first by [`unfolded_pattern`], then folds only those.

use std::sync::OnceLock;

use super::fold_tables::{UNFOLDS, UNLIKEABLE};

/// Accented letters folded to a base letter, one for one with [`FOLD_TO`].
pub(crate) const FOLD_FROM: &str = "ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöøùúûüýÿ\
ĀāĂăĄąĆćĈĉĊċČčĎďĐđĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĦħĨĩĪīĬĭĮįİıĴĵĶķĹĺĻļĽľĿŀŁłŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŦŧŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽž";

/// The base letter of each letter of [`FOLD_FROM`].
pub(crate) const FOLD_TO: &str = "aaaaaaceeeeiiiinoooooouuuuyaaaaaaceeeeiiiinoooooouuuuyy\
aaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiiijjkkllllllllllnnnnnnoooooorrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzz";

/// How many matches a search counts before it stops ("1,000+").
pub const COUNT_CAP: u64 = 1000;

/// The length of a trigram: a word this long or longer is looked up by its own
/// trigrams; a shorter one (1–2 characters) by the trigrams that begin with it.
pub(crate) const MIN_INDEXED_WORD: usize = 3;

/// [`FOLD_FROM`] and [`FOLD_TO`] as pairs sorted by the accented letter (built once), so
/// that folding a character is a binary search rather than a walk of the table.
fn fold_pairs() -> &'static [(char, char)] {
    static PAIRS: OnceLock<Vec<(char, char)>> = OnceLock::new();
    PAIRS.get_or_init(|| {
        let mut pairs: Vec<(char, char)> = FOLD_FROM.chars().zip(FOLD_TO.chars()).collect();
        pairs.sort_unstable();
        pairs
    })
}

/// The folded form of one character, appended to `out`.
fn fold_char(c: char, out: &mut String) {
    fold_char_by(fold_pairs(), c, out);
}

/// [`fold_char`] with the table at hand.
fn fold_char_by(pairs: &[(char, char)], c: char, out: &mut String) {
    if c.is_ascii() {
        out.push(c.to_ascii_lowercase());
        return;
    }
    if let Ok(i) = pairs.binary_search_by_key(&c, |p| p.0) {
        out.push(pairs[i].1);
        return;
    }
    out.extend(c.to_lowercase());
}

/// Text folded for comparison: lower case, accents of Latin letters removed.
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    fold_into(text, &mut out);
    out
}

/// [`fold`] into a buffer the caller reuses (cleared first): no allocation once the
/// buffer is large enough, and ASCII text is copied and lower-cased in one pass.
pub(crate) fn fold_into(text: &str, out: &mut String) {
    out.clear();
    let pairs = fold_pairs();
    let mut rest = text;
    // Runs of ASCII (most of most text) are copied and lower-cased at once.
    while !rest.is_empty() {
        let run = rest
            .bytes()
            .position(|b| !b.is_ascii())
            .unwrap_or(rest.len());
        let start = out.len();
        out.push_str(&rest[..run]);
        out[start..].make_ascii_lowercase();
        rest = &rest[run..];
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            fold_char_by(pairs, c, out);
            rest = chars.as_str();
        }
    }
}

/// The characters whose fold is `f` but `f` itself ([`UNFOLDS`], written at build time:
/// the tests compute it again from [`fold_char`] over all of Unicode).
fn unfolds_of(f: char) -> &'static [(char, char)] {
    let lo = UNFOLDS.partition_point(|p| p.0 < f);
    let hi = UNFOLDS.partition_point(|p| p.0 <= f);
    &UNFOLDS[lo..hi]
}

/// A regular expression (PostgreSQL's ARE) that finds, in text as it was written, every
/// place whose fold is the folded `word`: each of its characters becomes the class of the
/// characters that fold to it (`e` → `[eEèÈéÉ…]`), written as `\uXXXX` escapes, so that
/// nothing in it is syntax. A search's rows can then be found without folding each row's
/// text (PostgreSQL's `translate()` costs ~0.25 ms per KiB of accented text); the fold
/// still decides, on the rows this finds.
#[doc(hidden)] // used by PostgreSQL's search, and its tests
pub fn unfolded_pattern(word: &str) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(word.len() * 8);
    let mut buf = String::new();
    for w in word.chars() {
        buf.clear();
        fold_char(w, &mut buf);
        let others = unfolds_of(w);
        // `w` itself when it folds to itself, or when nothing folds to it (no row can
        // match then; the fold, which decides, finds nothing either).
        let itself = buf.chars().eq(std::iter::once(w)) || others.is_empty();
        out.push('[');
        for c in itself
            .then_some(w)
            .into_iter()
            .chain(others.iter().map(|p| p.1))
        {
            let _ = write!(out, "\\U{:08X}", c as u32);
        }
        out.push(']');
    }
    out
}

/// True when a `LIKE` pattern may not name `c` as itself: more than itself and its ASCII
/// other case fold to it (`e`: `é`, `È`, …; `k`: the Kelvin sign; `å`: only the Angstrom
/// sign, as `å` itself folds to `a`). [`UNLIKEABLE`] is written at build time (it cost
/// 4-5 ms of every search from the command line to compute); the tests compute it again
/// from [`fold_char`] over all of Unicode.
fn unlikeable(c: char) -> bool {
    UNLIKEABLE.binary_search(&c).is_ok()
}

/// How many characters of a word its `LIKE` pattern looks at (SQLite refuses patterns
/// over 50,000 bytes; a word's first characters are in every row the word is).
const LIKE_CHARS: usize = 64;

/// A `LIKE … ESCAPE '\'` pattern that every text whose fold contains the folded `word`
/// matches, for SQLite to reject rows with before the fold decides: each character that
/// only itself (or its ASCII other case, which `LIKE` ignores) folds to is named, every
/// other one is `_` (one character: the fold maps one character to one). `None` when it
/// would name no character. The leading and trailing `_` are dropped (any text around
/// the rest would do).
pub(crate) fn like_pattern(word: &str) -> Option<String> {
    let mut out = String::from("%");
    let mut named = false;
    let mut pending = 0;
    for c in word.chars().take(LIKE_CHARS) {
        if unlikeable(c) {
            pending += named as usize;
            continue;
        }
        out.extend(std::iter::repeat_n('_', pending));
        pending = 0;
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
        named = true;
    }
    out.push('%');
    named.then_some(out)
}

/// A parsed search: its folded words (never empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    words: Vec<String>,
    /// The item id the text names, when it is one number (`42` or `#42`).
    id: Option<i64>,
    /// The qualified words (`vat:DE123`): a field's name and the folded word its value
    /// must contain (that word is among `words` too, so that whatever finds a row's
    /// words finds its candidates; the field's own condition decides).
    fields: Vec<(String, String)>,
}

/// A qualified word's field name and value: `name:value`, the name as a field's name
/// is written (a letter, then letters, digits or `_`), the value not empty and not a
/// URL's `//…` (`https://…` is a word).
fn qualifier(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once(':')?;
    let named = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    (named && !value.is_empty() && !value.starts_with("//")).then_some((name, value))
}

impl Search {
    /// The search typed as `text`; `None` when it has no words.
    pub fn parse(text: &str) -> Option<Search> {
        // A NUL separates words too: PostgreSQL text cannot hold one, and FTS5 would end
        // its query there.
        let mut words: Vec<String> = Vec::new();
        let mut fields = Vec::new();
        for w in text
            .split(|c: char| c.is_whitespace() || c == '\0')
            .filter(|w| !w.is_empty())
            .map(fold)
        {
            match qualifier(&w) {
                Some((name, value)) => {
                    fields.push((name.to_string(), value.to_string()));
                    words.push(value.to_string());
                }
                None => words.push(w),
            }
        }
        if words.is_empty() {
            return None;
        }
        let id = match (words.as_slice(), fields.is_empty()) {
            ([one], true) => one.trim_start_matches('#').parse::<i64>().ok(),
            _ => None,
        };
        Some(Search { words, id, fields })
    }

    /// The folded words.
    pub(crate) fn words(&self) -> &[String] {
        &self.words
    }

    /// The qualified words: (field name, folded word its value must contain).
    pub fn fields(&self) -> &[(String, String)] {
        &self.fields
    }

    /// Refuses qualifiers that name none of `known` (the fields of the queue searched,
    /// or of every queue): an unknown one would find nothing, silently.
    pub fn check_fields(&self, known: &[&str]) -> Result<(), String> {
        let unknown: Vec<&str> = (self.fields.iter())
            .map(|(n, _)| n.as_str())
            .filter(|n| !known.contains(n))
            .collect();
        let Some(first) = unknown.first() else {
            return Ok(());
        };
        let mut names: Vec<&str> = known.to_vec();
        names.sort_unstable();
        names.dedup();
        let known = match names.is_empty() {
            true => "no queue searched has fields".to_string(),
            false => {
                let q: Vec<String> = names.iter().map(|n| format!("{n}:")).collect();
                format!("known: {}", q.join(" "))
            }
        };
        Err(format!(
            "search: unknown qualifier '{}:' ({known}; a field's name before ':' searches \
             that field only)",
            super::sanitize::line(first)
        ))
    }

    /// The item id a one-number search also finds.
    pub fn id(&self) -> Option<i64> {
        self.id
    }

    /// The words joined by one space (how the SQLite matcher receives them).
    pub(crate) fn joined(&self) -> String {
        self.words.join(" ")
    }

    /// Each distinct run of three characters of the words long enough for a trigram
    /// index: an item has a word only if it has every one of its trigrams, so the rarest
    /// trigram's hits hold every match.
    pub(crate) fn trigrams(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for w in &self.words {
            let chars: Vec<char> = w.chars().collect();
            for t in chars.windows(MIN_INDEXED_WORD) {
                let t: String = t.iter().collect();
                if !out.contains(&t) {
                    out.push(t);
                }
            }
        }
        out
    }

    /// The distinct words shorter than a trigram (one or two characters).
    pub(crate) fn short_words(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for w in &self.words {
            if w.chars().count() < MIN_INDEXED_WORD && !out.contains(&w.as_str()) {
                out.push(w);
            }
        }
        out
    }

    /// True when every word appears in one of `fields` (folded here).
    pub fn matches(&self, fields: &[&str]) -> bool {
        let folded: Vec<String> = fields.iter().map(|f| fold(f)).collect();
        self.words
            .iter()
            .all(|w| folded.iter().any(|f| f.contains(w.as_str())))
    }
}

/// The range of trigrams that begin with a short word `w`: from `w` itself to `w`
/// followed by the highest character up to a trigram's length (both ends included; in
/// UTF-8 byte order, which is the order of the characters).
pub(crate) fn trigram_range(w: &str) -> (String, String) {
    let pad = MIN_INDEXED_WORD.saturating_sub(w.chars().count());
    let mut top = w.to_string();
    top.extend(std::iter::repeat_n(char::MAX, pad));
    (w.to_string(), top)
}

/// The count of a search as shown: `1,000+` past the cap.
pub fn count_text(n: u64) -> String {
    if n > COUNT_CAP {
        format!("{}+", thousands(COUNT_CAP))
    } else {
        thousands(n)
    }
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables written at build time ([`UNLIKEABLE`], [`UNFOLDS`]) are what the fold
    /// gives over all of Unicode: fails when the toolchain's Unicode tables change a case
    /// (write the tables again from what this computes).
    #[test]
    fn the_written_tables_are_the_fold_s() {
        let mut unlikeable: Vec<char> = Vec::new();
        let mut unfolds: Vec<(char, char)> = Vec::new();
        let mut buf = String::new();
        for x in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            buf.clear();
            fold_char(x, &mut buf);
            let mut folded = buf.chars();
            match (folded.next(), folded.next()) {
                (Some(f), None) => {
                    if f != x {
                        unfolds.push((f, x));
                    }
                    if !(x == f || (f.is_ascii() && x.eq_ignore_ascii_case(&f))) {
                        unlikeable.push(f);
                    }
                }
                // Not one character: nothing it folds to is named.
                _ => unlikeable.extend(buf.chars()),
            }
        }
        unlikeable.sort_unstable();
        unlikeable.dedup();
        unfolds.sort_unstable();
        let first_difference = |a: &[char], b: &[char]| a.iter().zip(b).position(|(x, y)| x != y);
        assert_eq!(
            unlikeable.len(),
            UNLIKEABLE.len(),
            "UNLIKEABLE: first difference at {:?}",
            first_difference(&unlikeable, &UNLIKEABLE)
        );
        assert_eq!(unlikeable, UNLIKEABLE);
        assert_eq!(unfolds, UNFOLDS);
    }

    #[test]
    fn the_fold_table_is_one_for_one() {
        assert_eq!(FOLD_FROM.chars().count(), FOLD_TO.chars().count());
        for (f, t) in FOLD_FROM.chars().zip(FOLD_TO.chars()) {
            assert!(t.is_ascii_lowercase(), "{f} folds to {t}");
        }
    }

    #[test]
    fn folding_ignores_case_and_accents() {
        assert_eq!(fold("José MÜLLER Łódź"), "jose muller lodz");
        assert_eq!(fold("ΣΟΦΙΑ"), "σοφια");
        assert_eq!(fold("Straße"), "straße");
    }

    /// The fast fold (a sorted table, an ASCII pass) gives what the table says, for every
    /// character of the Basic Multilingual Plane.
    #[test]
    fn the_fast_fold_is_the_table() {
        let from: Vec<char> = FOLD_FROM.chars().collect();
        let to: Vec<char> = FOLD_TO.chars().collect();
        let mut buf = String::new();
        for c in (0..=0xFFFFu32).filter_map(char::from_u32) {
            let want: String = match from.iter().position(|&f| f == c) {
                Some(i) => to[i].to_string(),
                None => c.to_lowercase().collect(),
            };
            assert_eq!(fold(&c.to_string()), want, "{c:?}");
            fold_into(&format!("Ab{c}"), &mut buf);
            assert_eq!(buf, format!("ab{want}"), "{c:?} in a word");
        }
    }

    /// The pattern's classes are exactly the characters that fold to each of the word's.
    #[test]
    fn an_unfolded_pattern_names_what_folds_to_each_character() {
        let e = unfolded_pattern("e");
        for c in ['e', 'E', 'é', 'É', 'ě', 'Ě', 'ë'] {
            assert!(e.contains(&format!("\\U{:08X}", c as u32)), "{c} in {e}");
        }
        assert!(!e.contains(&format!("\\U{:08X}", 'f' as u32)));
        assert_eq!(e.matches("\\U").count(), 1 + unfolds_of('e').len());
        let k = unfolded_pattern("k");
        assert!(k.contains("\\U0000212A"), "the Kelvin sign folds to k: {k}");
        // U+212B (Angstrom sign) folds to å, not a: only it is in å's class.
        assert!(!unfolded_pattern("a").contains("\\U0000212B"));
        assert_eq!(unfolded_pattern("å"), "[\\U0000212B]");
        assert_eq!(unfolded_pattern("σ").matches("\\U").count(), 2);
        assert_eq!(
            unfolded_pattern("-]\\"),
            "[\\U0000002D][\\U0000005D][\\U0000005C]"
        );
    }

    /// A character is named in a `LIKE` pattern only when nothing but itself and its
    /// ASCII other case folds to it; the rest are `_`, and the pattern names at least one.
    #[test]
    fn a_like_pattern_names_only_what_folds_to_itself_alone() {
        assert_eq!(like_pattern("69529").as_deref(), Some("%69529%"));
        assert_eq!(like_pattern("#a-69529").as_deref(), Some("%#_-69529%"));
        // Every letter of `jose` has accented forms (`ĵ`, `ó`, `š`, `é`).
        assert_eq!(like_pattern("jose"), None);
        assert_eq!(like_pattern("muller").as_deref(), Some("%m%"));
        assert_eq!(like_pattern("zebra").as_deref(), Some("%b%"));
        assert_eq!(like_pattern("bob").as_deref(), Some("%b_b%"));
        assert_eq!(like_pattern("x%_\\y").as_deref(), Some("%x\\%\\_\\\\%"));
        assert_eq!(like_pattern("東京").as_deref(), Some("%東京%"));
        // `ß` is also the fold of `ẞ`, `k` of the Kelvin sign, `å` only of the Angstrom
        // sign, `σ` of `Σ`: LIKE knows none of them.
        for w in ["ß", "k", "å", "σ", "ж"] {
            assert_eq!(like_pattern(w), None, "{w}");
        }
        let long = "1".repeat(1000);
        assert_eq!(like_pattern(&long).unwrap().len(), LIKE_CHARS + 2);
    }

    #[test]
    fn every_word_must_appear_in_any_order_and_field() {
        let s = Search::parse("  müller  69529 ").unwrap();
        assert_eq!(s.words(), ["muller", "69529"]);
        assert!(s.matches(&["Pick & pack order #A-69529", "for Frau MÜLLER"]));
        assert!(s.matches(&["Müller 69529", ""]));
        assert!(!s.matches(&["Pick & pack order #A-69529", "for Frau Meier"]));
        assert!(Search::parse("nordl").unwrap().matches(&["Nordlicht GmbH"]));
        assert!(Search::parse("jose").unwrap().matches(&["José"]));
        assert!(Search::parse(" \t ").is_none());
        let q = Search::parse("VAT:DE123 müller https://x.example 10:42").unwrap();
        assert_eq!(q.fields(), [("vat".to_string(), "de123".to_string())]);
        assert_eq!(
            q.words(),
            ["de123", "muller", "https://x.example", "10:42"].map(String::from)
        );
        assert_eq!(Search::parse("vat:42").unwrap().id(), None);
        assert!(q.check_fields(&["email", "vat"]).is_ok());
        let err = Search::parse("postcode:99999")
            .unwrap()
            .check_fields(&["vat", "email", "vat"])
            .unwrap_err();
        assert!(
            err.contains("'postcode:'") && err.contains("email: vat:"),
            "{err}"
        );
        assert!(Search::parse("\0").is_none());
        assert_eq!(Search::parse("a\0b").unwrap().words(), ["a", "b"]);
    }

    #[test]
    fn one_number_also_names_an_id() {
        assert_eq!(Search::parse("#42").unwrap().id(), Some(42));
        assert_eq!(Search::parse("42").unwrap().id(), Some(42));
        assert_eq!(Search::parse("42 43").unwrap().id(), None);
        assert_eq!(Search::parse("printer").unwrap().id(), None);
    }

    #[test]
    fn trigrams_are_not_repeated() {
        let s = Search::parse("Nordl hi \"abc\" nor").unwrap();
        assert_eq!(s.trigrams(), ["nor", "ord", "rdl", "\"ab", "abc", "bc\""]);
        assert!(Search::parse("hi 3b").unwrap().trigrams().is_empty());
    }

    #[test]
    fn short_words_are_those_under_a_trigram_and_not_repeated() {
        let s = Search::parse("3B er nordl É er ab\"").unwrap();
        assert_eq!(s.short_words(), ["3b", "er", "e"]);
        assert!(Search::parse("nordl").unwrap().short_words().is_empty());
    }

    /// Every trigram that begins with the word lies in its range, and nothing else does
    /// (byte order of UTF-8 is character order).
    #[test]
    fn a_short_word_s_range_holds_exactly_its_trigrams() {
        for w in ["e", "er", "é", "ж", "\u{10FFFF}"] {
            let (lo, hi) = trigram_range(w);
            let inside = |t: &str| lo.as_str() <= t && t <= hi.as_str();
            for tail in [
                "\n\n",
                "\u{0}\u{0}",
                "zz",
                "\u{10FFFF}\u{10FFFF}",
                "é\u{10FFFF}",
            ] {
                let t: String = format!("{w}{tail}").chars().take(3).collect();
                assert!(inside(&t), "{w:?} {t:?}");
            }
            for other in [
                "d\u{10FFFF}\u{10FFFF}",
                "f\n\n",
                "eq\u{10FFFF}",
                "es\n",
                "ё\n\n",
            ] {
                if !other.starts_with(w) {
                    assert!(!inside(other), "{w:?} {other:?}");
                }
            }
        }
    }

    #[test]
    fn counts_stop_at_the_cap() {
        assert_eq!(count_text(999), "999");
        assert_eq!(count_text(1000), "1,000");
        assert_eq!(count_text(1001), "1,000+");
    }
}
