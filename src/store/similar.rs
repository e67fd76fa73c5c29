//! `caseload similar` and the detail pane's "Possibly the same" box (issue 27): the
//! candidates of one item, written once over [`Reads`] for both backends.
//!
//! Key matches are index lookups (`item_keys`, one per key of the item). Similar text is
//! found in two steps: a prefilter — the queue's items, in any state, that contain one of
//! the item's longest words, through each backend's own search (SQLite: its trigram
//! index; PostgreSQL: its folded `LIKE` search), at most [`PREFILTER`] per word — and
//! then `domain::duplicates::similarity` (pg_trgm's measure) over those, in Rust, so that
//! no extension is needed on PostgreSQL and both backends give the same figures.
//! Pairs a person judged, the item itself and cancelled items (a merged duplicate is
//! found through its survivor) are never offered.

use std::collections::BTreeMap;

use super::error::Result;
use super::{ListFilter, Reads, StateFilter};
use crate::domain::duplicates::{
    Candidate, Pair, best_text, keys_of, rank, telling_words, texts_of,
};
use crate::domain::{Item, ItemState};

/// How many items each prefilter word brings at most.
pub const PREFILTER: usize = 50;

/// How many of a text's words the prefilter looks for.
const WORDS: usize = 2;

/// How many items one key brings at most.
const PER_KEY: usize = 50;

/// An item's candidates.
#[derive(Debug, Clone)]
pub struct Similar {
    pub item: Item,
    /// Best first, at most the limit asked for.
    pub candidates: Vec<Candidate>,
    /// The pairs it is in that a person judged.
    pub pairs: Vec<Pair>,
}

/// The candidates of item `id`, at most `limit`.
pub fn similar(r: &mut dyn Reads, id: i64, limit: usize) -> Result<Similar> {
    let item = r.item(id)?;
    let defs = r.fields(&item.queue)?;
    let pairs = r.pairs(id)?;
    let judged: Vec<i64> = pairs.iter().map(|p| p.other(id)).collect();
    let mut keys: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for (field, key) in keys_of(&defs, &item.params) {
        for other in r.key_matches(&item.queue, &field, &key, id, PER_KEY)? {
            keys.entry(other).or_default().push(field.clone());
        }
    }
    let texts = texts_of(&defs, &item.title, &item.params);
    let mut found: BTreeMap<i64, Item> = BTreeMap::new();
    for other in keys.keys() {
        found.insert(*other, r.item(*other)?);
    }
    let offered =
        |o: &Item| o.id != id && o.state != ItemState::Cancelled && !judged.contains(&o.id);
    // Key matches rank before any match by text alone: when they fill the limit, no text
    // match could be shown, and the text step (the costly half) is left out.
    if found.values().filter(|o| offered(o)).count() < limit {
        let mut words: Vec<String> = texts
            .iter()
            .flat_map(|(_, t)| telling_words(t, WORDS))
            .collect();
        words.dedup();
        for word in words {
            let filter = ListFilter {
                state: StateFilter::All,
                queue: Some(item.queue.clone()),
                text: Some(word),
                limit: PREFILTER,
                ..ListFilter::default()
            };
            for other in r.list(&filter)? {
                found.entry(other.id).or_insert(other);
            }
        }
    }
    let candidates = found
        .into_values()
        .filter(|o| offered(o))
        .map(|o| Candidate {
            keys: keys.remove(&o.id).unwrap_or_default(),
            text: best_text(&texts, &texts_of(&defs, &o.title, &o.params)),
            finished_by: match o.state {
                ItemState::Done | ItemState::Failed => o.finished_by.clone(),
                _ => None,
            },
            id: o.id,
            title: o.title,
            state: o.state,
        })
        .collect();
    Ok(Similar {
        item,
        candidates: rank(candidates, limit),
        pairs,
    })
}
