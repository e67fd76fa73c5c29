//! Phone numbers: read by the `phonenumber` crate (libphonenumber's parser and metadata),
//! judged valid by the same metadata through patterns compiled once per region.
//!
//! Why not `phonenumber::is_valid` itself: it matches each of a region's ten or so
//! patterns through a process-wide regex cache that locks a mutex, hashes the pattern's
//! text (several KiB for a fixed-line pattern) and reorders an LRU list on every match;
//! that was most of an import's phone check (issue 26 §4, BENCHMARKS.md "Verification
//! work"). [`valid`] asks the very same question of the very same metadata — the crate's
//! `is_valid_with` step by step: the region the number's country code and leading digits
//! select, its general pattern, then any of its number types — with each pattern
//! compiled once. The E.164 text is written here as the crate writes it (`+`, the
//! country code, the national number), without the crate's formatter, which looks up a
//! national format first even for E.164. A test holds both to the crate's answers over
//! every region's example numbers and variants of them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use phonenumber::metadata::{DATABASE, Descriptor};
use phonenumber::{Metadata, PhoneNumber};

/// A pattern of the metadata, compiled as the crate compiles it (free-spacing mode),
/// anchored at the start only: the crate asks for a match that starts at the first digit
/// (`find` at 0), not for one that spans the number.
struct Pattern {
    re: regex::Regex,
    /// The lengths a number of this kind may have (none: any).
    lengths: Vec<u16>,
}

impl Pattern {
    fn new(source: &str, lengths: &[u16]) -> Option<Pattern> {
        // The newline ends a `#` comment free-spacing mode would otherwise run on into
        // the closing parenthesis (the metadata's patterns have none; this keeps it so).
        let re = regex::RegexBuilder::new(&format!("\\A(?:{source}\n)"))
            .ignore_whitespace(true)
            .build()
            .ok()?;
        Some(Pattern {
            re,
            lengths: lengths.to_vec(),
        })
    }

    fn of(d: &Descriptor) -> Option<Pattern> {
        Pattern::new(d.national_number().as_str(), d.possible_length())
    }

    /// `Descriptor::is_match`: the length is one of the kind's, and the pattern matches
    /// from the first digit.
    fn is_match(&self, national: &str) -> bool {
        let len_ok = self.lengths.is_empty()
            || u16::try_from(national.len()).is_ok_and(|l| self.lengths.contains(&l));
        len_ok && self.re.is_match(national)
    }
}

/// A region's patterns, compiled.
struct Region {
    general: Pattern,
    /// Every number type `number_type` tries (premium rate, toll free, shared cost, VoIP,
    /// personal, pager, UAN, voicemail, fixed line, mobile): a number is valid when the
    /// general pattern and any of these match.
    kinds: Vec<Pattern>,
    /// The leading digits that pick this region among those sharing its country code.
    leading: Option<regex::Regex>,
}

impl Region {
    fn of(meta: &Metadata) -> Option<Region> {
        let d = meta.descriptors();
        let kinds = [
            d.premium_rate(),
            d.toll_free(),
            d.shared_cost(),
            d.voip(),
            d.personal_number(),
            d.pager(),
            d.uan(),
            d.voicemail(),
            d.fixed_line(),
            d.mobile(),
        ];
        let leading = match meta.leading_digits() {
            Some(l) => Some(Pattern::new(l.as_str(), &[])?.re),
            None => None,
        };
        Some(Region {
            general: Pattern::of(d.general())?,
            kinds: kinds
                .into_iter()
                .flatten()
                .map(Pattern::of)
                .collect::<Option<_>>()?,
            leading,
        })
    }

    /// `number_type(meta, national) != Type::Unknown`.
    fn knows(&self, national: &str) -> bool {
        self.general.is_match(national) && self.kinds.iter().any(|k| k.is_match(national))
    }
}

/// `meta`'s patterns, compiled on first use (keyed by the metadata's address: the
/// database is a process-wide static).
fn region(meta: &'static Metadata) -> Option<Arc<Region>> {
    static COMPILED: OnceLock<Mutex<HashMap<usize, Option<Arc<Region>>>>> = OnceLock::new();
    let key = std::ptr::from_ref(meta) as usize;
    let map = COMPILED.get_or_init(Default::default);
    if let Some(r) = map.lock().ok()?.get(&key) {
        return r.clone();
    }
    let r = Region::of(meta).map(Arc::new);
    map.lock().ok()?.insert(key, r.clone());
    r
}

/// Whether `n` is a valid number: `phonenumber::is_valid`, with compiled patterns.
pub(super) fn valid(n: &PhoneNumber) -> bool {
    let code = n.country().code();
    let national = n.national().to_string();
    let Some(regions) = DATABASE.region(&code) else {
        return false;
    };
    // `source_for`: one region is the code's; among several, the first whose leading
    // digits start the number, or (a region without leading digits) that knows it.
    let meta = if let [only] = regions[..] {
        if only == "001" {
            DATABASE.by_code(&code).and_then(|m| m.into_iter().next())
        } else if only.parse::<phonenumber::country::Id>().is_ok() {
            DATABASE.by_id(only)
        } else {
            None
        }
    } else {
        let mut found = None;
        for id in regions {
            let Some(meta) = DATABASE.by_id(id) else {
                return false;
            };
            let Some(r) = region(meta) else {
                return phonenumber::is_valid(n);
            };
            let picked = match &r.leading {
                Some(l) => l.is_match(&national),
                None => r.knows(&national),
            };
            if picked {
                found = Some(meta);
                break;
            }
        }
        found
    };
    let Some(meta) = meta else {
        return false;
    };
    match region(meta) {
        Some(r) => r.knows(&national),
        // A pattern this build of `regex` could not compile: the crate's own way.
        None => phonenumber::is_valid(n),
    }
}

/// `n` in E.164 (`+4930901820`), as the crate's formatter writes a valid number.
pub(super) fn e164(n: &PhoneNumber) -> String {
    format!("+{}{}", n.country().code(), n.national())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The crate's own answer: parsed, `is_valid`, formatted by its formatter.
    fn crate_e164(region: Option<phonenumber::country::Id>, t: &str) -> Option<String> {
        let n = phonenumber::parse(region, t).ok()?;
        phonenumber::is_valid(&n).then(|| n.format().mode(phonenumber::Mode::E164).to_string())
    }

    fn ours(region: Option<phonenumber::country::Id>, t: &str) -> Option<String> {
        let n = phonenumber::parse(region, t).ok()?;
        valid(&n).then(|| e164(&n))
    }

    /// Every region's example numbers, and numbers near them (a digit changed, one
    /// dropped, one added, the first ones changed), as E.164 text and as the region's
    /// national text: the crate and this module answer alike, valid or not.
    #[test]
    fn valid_and_e164_agree_with_the_crate_over_every_region() {
        let mut compared = 0usize;
        let mut valid_seen = 0usize;
        let mut invalid_seen = 0usize;
        for meta in DATABASE.iter() {
            let d = meta.descriptors();
            let region: Option<phonenumber::country::Id> = meta.id().parse().ok();
            let examples = [
                Some(d.general()),
                d.fixed_line(),
                d.mobile(),
                d.toll_free(),
                d.premium_rate(),
                d.shared_cost(),
                d.personal_number(),
                d.voip(),
                d.pager(),
                d.uan(),
                d.voicemail(),
                d.no_international(),
            ];
            for ex in examples.into_iter().flatten().filter_map(|d| d.example()) {
                let mut variants = vec![ex.to_string()];
                for (i, c) in ex.char_indices() {
                    let flip = char::from(b'0' + ((c as u8 - b'0' + 3) % 10));
                    let mut v = ex.to_string();
                    v.replace_range(i..i + 1, &flip.to_string());
                    variants.push(v);
                }
                variants.push(ex[..ex.len() - 1].to_string());
                variants.push(format!("{ex}7"));
                variants.push(format!("0{ex}"));
                for lead in ["1", "2", "5", "7", "9"] {
                    variants.push(format!("{lead}{}", &ex[1..]));
                }
                for v in variants {
                    let mut texts = vec![(None, format!("+{} {v}", meta.country_code()))];
                    if region.is_some() {
                        texts.push((region, v.clone()));
                        texts.push((region, format!("0{v}")));
                    }
                    for (r, t) in texts {
                        let want = crate_e164(r, &t);
                        assert_eq!(ours(r, &t), want, "{t} in {:?}", meta.id());
                        match want {
                            Some(_) => valid_seen += 1,
                            None => invalid_seen += 1,
                        }
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 20_000, "{compared} numbers compared");
        assert!(
            valid_seen > 2_000 && invalid_seen > 2_000,
            "{valid_seen} / {invalid_seen}"
        );
    }

    /// Digit strings of every length after every country code: no region's guess differs.
    #[test]
    fn numbers_of_every_length_after_every_country_code_agree() {
        let mut codes: Vec<u16> = DATABASE.iter().map(|m| m.country_code()).collect();
        codes.sort_unstable();
        codes.dedup();
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for code in codes {
            for len in 4..=15 {
                for _ in 0..6 {
                    let digits: String = (0..len)
                        .map(|_| char::from(b'0' + (next() % 10) as u8))
                        .collect();
                    let t = format!("+{code}{digits}");
                    assert_eq!(ours(None, &t), crate_e164(None, &t), "{t}");
                }
            }
        }
    }
}
