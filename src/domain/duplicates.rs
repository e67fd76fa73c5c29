//! Duplicates (issue 27): which items of a queue are possibly the same record.
//!
//! Two ways: a field marked as a duplicate key (`caseload field set … --dedupe-key`)
//! matches when the two values' keys are equal ([`key_of`]: the type's canonical form —
//! an IBAN compact, a phone in E.164 — then folded as search folds, with everything but
//! letters and digits left out, so `DE 123.456` and `de123456` are one key); and text
//! (the title, and fields marked `--dedupe-text`) is similar by trigrams ([`similarity`],
//! the measure of PostgreSQL's `pg_trgm`, computed here so that both backends give the
//! same figure). [`rank`] orders what the store found: key matches first, then
//! similarity; pairs a person said are not the same are never offered.

use std::collections::HashSet;

use serde::Serialize;
use serde_json::Value;

use super::item::ItemState;
use super::queue_fields::{FieldDef, FieldType, canonical_text, value_text};
use super::search::fold;

/// How many candidates `similar` and the detail pane show unless asked for another number.
pub const DEFAULT_LIMIT: usize = 5;

/// The least trigram similarity that makes two texts candidates.
pub const SIMILAR_AT: f64 = 0.5;

/// The longest key kept, in characters (a key is for equality, not for reading).
const MAX_KEY: usize = 200;

/// How a field takes part in finding duplicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dedupe {
    /// Equal keys mean possibly the same record (a VAT number, an e-mail, an IBAN).
    Key,
    /// Its text is compared by similarity, as the title is (a name, an address).
    Text,
}

impl Dedupe {
    /// The name as stored in a field's spec.
    pub fn as_str(self) -> &'static str {
        match self {
            Dedupe::Key => "key",
            Dedupe::Text => "text",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<Dedupe> {
        [Dedupe::Key, Dedupe::Text]
            .into_iter()
            .find(|d| d.as_str() == s)
    }

    /// Refuses a role the field's type cannot have: a checklist has no single value, and
    /// yes/no is the same for half of all records.
    pub fn check(self, kind: FieldType) -> Result<(), String> {
        match kind {
            FieldType::Checklist | FieldType::Bool => Err(format!(
                "a {} field cannot be a duplicate {}",
                kind.as_str(),
                self.as_str()
            )),
            _ => Ok(()),
        }
    }
}

/// The key of a stored value of a key field: its canonical form when the value keeps the
/// type's rules (else as stored: an imported record is not corrected yet), folded, only
/// letters and digits. `None` for an empty value.
pub fn key_of(def: &FieldDef, stored: Option<&Value>) -> Option<String> {
    let v = stored.filter(|v| !v.is_null())?;
    let text = canonical_text(def, Some(v)).unwrap_or_else(|| value_text(v));
    let key: String = fold(&text)
        .chars()
        .filter(|c| c.is_alphanumeric())
        .take(MAX_KEY)
        .collect();
    (!key.is_empty()).then_some(key)
}

/// The keys of a record (`params`, as stored) for its queue's key fields: (field, key).
pub fn keys_of(defs: &[FieldDef], params: &str) -> Vec<(String, String)> {
    let keyed: Vec<&FieldDef> = defs
        .iter()
        .filter(|d| d.dedupe == Some(Dedupe::Key))
        .collect();
    if keyed.is_empty() {
        return Vec::new();
    }
    let Ok(Value::Object(p)) = serde_json::from_str::<Value>(params) else {
        return Vec::new();
    };
    keyed
        .into_iter()
        .filter_map(|d| Some((d.name.clone(), key_of(d, p.get(&d.name))?)))
        .collect()
}

/// True when the queue's fields have a key field.
pub fn has_keys(defs: &[FieldDef]) -> bool {
    defs.iter().any(|d| d.dedupe == Some(Dedupe::Key))
}

/// The trigrams of a text as `pg_trgm` makes them: per word of letters and digits,
/// folded, padded with two spaces before and one after.
pub fn trigrams(text: &str) -> HashSet<[char; 3]> {
    let folded = fold(text);
    let mut out = HashSet::new();
    for word in folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let padded: Vec<char> = "  ".chars().chain(word.chars()).chain([' ']).collect();
        for w in padded.windows(3) {
            out.insert([w[0], w[1], w[2]]);
        }
    }
    out
}

/// How alike two texts are, 0 to 1: shared trigrams over all trigrams of both
/// (`pg_trgm`'s `similarity`).
pub fn similarity(a: &str, b: &str) -> f64 {
    let (ta, tb) = (trigrams(a), trigrams(b));
    let union = ta.union(&tb).count();
    if union == 0 {
        return 0.0;
    }
    ta.intersection(&tb).count() as f64 / union as f64
}

/// The words a text prefilter looks for (the longest, most telling ones first): the
/// folded words of at least three letters or digits, at most `n`.
pub fn telling_words(text: &str, n: usize) -> Vec<String> {
    let folded = fold(text);
    let mut words: Vec<&str> = folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .collect();
    words.sort_by_key(|w| std::cmp::Reverse(w.chars().count()));
    words.dedup();
    words.into_iter().take(n).map(str::to_owned).collect()
}

/// One item that is possibly the same as another.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    pub id: i64,
    pub title: String,
    pub state: ItemState,
    /// Who finished it (done, failed), if it is finished.
    pub finished_by: Option<String>,
    /// The key fields whose keys are equal.
    pub keys: Vec<String>,
    /// The most similar text: which (`title` or a field's name) and how similar.
    pub text: Option<(String, f64)>,
}

impl Candidate {
    /// Why it is offered: `same vat, same email, title 0.86`.
    pub fn why(&self) -> String {
        let mut parts: Vec<String> = self.keys.iter().map(|k| format!("same {k}")).collect();
        if let Some((what, s)) = &self.text
            && *s >= SIMILAR_AT
        {
            parts.push(format!("{what} {s:.2}"));
        }
        parts.join(", ")
    }

    /// True when it is worth offering: a key matches, or a text is similar enough.
    pub fn offered(&self) -> bool {
        !self.keys.is_empty() || self.text.as_ref().is_some_and(|(_, s)| *s >= SIMILAR_AT)
    }
}

/// The texts of a record compared for similarity: its title, and each `--dedupe-text`
/// field's value: (what, text).
pub fn texts_of(defs: &[FieldDef], title: &str, params: &str) -> Vec<(String, String)> {
    let mut out = vec![("title".to_string(), title.to_string())];
    let texted: Vec<&FieldDef> = defs
        .iter()
        .filter(|d| d.dedupe == Some(Dedupe::Text))
        .collect();
    if texted.is_empty() {
        return out;
    }
    if let Ok(Value::Object(p)) = serde_json::from_str::<Value>(params) {
        for d in texted {
            if let Some(v) = p
                .get(&d.name)
                .map(value_text)
                .filter(|t| !t.trim().is_empty())
            {
                out.push((d.name.clone(), v));
            }
        }
    }
    out
}

/// The best similarity between the texts of two records, pairing each text with the
/// other's text of the same name: (what, similarity).
pub fn best_text(a: &[(String, String)], b: &[(String, String)]) -> Option<(String, f64)> {
    a.iter()
        .filter_map(|(what, ta)| {
            let (_, tb) = b.iter().find(|(w, _)| w == what)?;
            Some((what.clone(), similarity(ta, tb)))
        })
        .max_by(|x, y| x.1.total_cmp(&y.1))
}

/// The candidates worth offering, best first (more keys equal, then more similar, then
/// the older item), at most `limit`.
pub fn rank(mut found: Vec<Candidate>, limit: usize) -> Vec<Candidate> {
    found.retain(Candidate::offered);
    found.sort_by(|a, b| {
        let sim = |c: &Candidate| c.text.as_ref().map_or(0.0, |t| t.1);
        b.keys
            .len()
            .cmp(&a.keys.len())
            .then(sim(b).total_cmp(&sim(a)))
            .then(a.id.cmp(&b.id))
    });
    found.truncate(limit);
    found
}

/// What a person said of two items: the same (a merge) or not the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Same,
    NotSame,
}

impl Verdict {
    /// The name as stored and exported.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::NotSame => "not_same",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<Verdict> {
        [Verdict::Same, Verdict::NotSame]
            .into_iter()
            .find(|v| v.as_str() == s)
    }
}

/// A remembered pair: `low` < `high`, what was said, by whom and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pair {
    pub low: i64,
    pub high: i64,
    pub verdict: Verdict,
    pub actor: String,
    pub at: i64,
}

impl Pair {
    /// The other item of the pair, seen from `id`.
    pub fn other(&self, id: i64) -> i64 {
        if self.low == id { self.high } else { self.low }
    }
}

/// The pair's ids in stored order (low, high).
pub fn ordered(a: i64, b: i64) -> (i64, i64) {
    (a.min(b), a.max(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(kind: FieldType, dedupe: Dedupe) -> FieldDef {
        let mut d = FieldDef::new("vat", kind);
        d.dedupe = Some(dedupe);
        d
    }

    #[test]
    fn keys_fold_case_accents_spaces_and_punctuation() {
        let d = field(FieldType::Text, Dedupe::Key);
        let k = |s: &str| key_of(&d, Some(&json!(s)));
        assert_eq!(k("DE 123.456-789"), k("de123456789"));
        assert_eq!(k("Müller GmbH"), k("muller gmbh"));
        assert_ne!(k("DE123"), k("DE124"));
        assert_eq!(k("  "), None);
        assert_eq!(key_of(&d, None), None);
    }

    #[test]
    fn keys_use_the_types_canonical_form() {
        let iban = field(FieldType::Iban, Dedupe::Key);
        assert_eq!(
            key_of(&iban, Some(&json!("de89 3704 0044 0532 0130 00"))),
            key_of(&iban, Some(&json!("DE89370400440532013000")))
        );
        let mut phone = field(FieldType::Phone, Dedupe::Key);
        phone.country = Some("DE".into());
        assert_eq!(
            key_of(&phone, Some(&json!("030 1234567"))),
            key_of(&phone, Some(&json!("+49 30 1234567")))
        );
    }

    #[test]
    fn only_key_fields_give_keys() {
        let mut defs = vec![field(FieldType::Text, Dedupe::Key)];
        defs.push(FieldDef::new("name", FieldType::Text));
        let keys = keys_of(&defs, r#"{"vat": "HU 1181", "name": "x"}"#);
        assert_eq!(keys, vec![("vat".to_string(), "hu1181".to_string())]);
        assert!(keys_of(&defs, "not json").is_empty());
    }

    #[test]
    fn similarity_is_pg_trgms() {
        assert_eq!(
            similarity("Brightwater Tools Ltd", "brightwater tools ltd"),
            1.0
        );
        let s = similarity("Brightwater Tools Ltd", "Brightwater Tools Limited");
        assert!(s > SIMILAR_AT && s < 1.0, "{s}");
        assert!(similarity("Brightwater Tools Ltd", "Harbour Paper Co") < 0.2);
        // pg_trgm: similarity('word', 'two words') = 0.36363637
        assert!((similarity("word", "two words") - 4.0 / 11.0).abs() < 1e-6);
    }

    #[test]
    fn ranks_keys_first_then_similarity_and_drops_the_unlike() {
        let c = |id, keys: &[&str], sim| Candidate {
            id,
            title: String::new(),
            state: ItemState::Open,
            finished_by: None,
            keys: keys.iter().map(|k| k.to_string()).collect(),
            text: Some(("title".into(), sim)),
        };
        let ranked = rank(
            vec![
                c(1, &[], 0.9),
                c(2, &["vat"], 0.1),
                c(3, &[], 0.2),
                c(4, &[], 0.7),
            ],
            5,
        );
        let ids: Vec<i64> = ranked.iter().map(|c| c.id).collect();
        assert_eq!(ids, vec![2, 1, 4]);
        assert_eq!(ranked[0].why(), "same vat");
        assert_eq!(ranked[1].why(), "title 0.90");
        assert_eq!(rank(vec![c(1, &[], 0.9), c(4, &[], 0.7)], 1).len(), 1);
    }

    #[test]
    fn telling_words_are_the_longest() {
        assert_eq!(
            telling_words("Brightwater Tools Ltd, 2 of", 2),
            vec!["brightwater".to_string(), "tools".to_string()]
        );
    }
}
