//! `import --keep-ids`: every row keeps the id `caseload export` wrote for it.
//!
//! The first pass checks, besides the rows themselves, that every row has an id, that the
//! ids increase down the file (as `export` writes them: so an id given twice is found
//! without holding the ids seen), and, against the database, that each id is free or
//! already this very row's item (the same file imported before, or cut short). A row
//! whose own `request_id` is another id's item is refused too: the file and the database
//! disagree about which item it is. Any of these refuses the whole import, naming the
//! lines. The second pass begins by adding the row with the largest id
//! ([`crate::store::Writes::keep_ids`]), so that items added while the import runs get
//! ids above every kept one.

use std::collections::{BTreeMap, HashMap};

use super::{DERIVED_PREFIX, LineError, Row};
use crate::domain::sanitize;
use crate::store::{Store, StoreError};

/// How many rows are looked up in the database at once.
const LOOKUP: usize = 500;

/// A row whose id or request id the database may already hold.
struct Pending {
    id: i64,
    line: u64,
    request_id: Option<String>,
}

/// What the first pass learns about the ids of a `--keep-ids` import.
pub(super) struct KeptIds {
    /// The largest id in the database when the check began: ids above it were free.
    seen: i64,
    /// The previous row's id and line.
    prev: Option<(i64, u64)>,
    first: Option<i64>,
    /// The row with the largest id (the last one).
    last: Option<Row>,
    pending: Vec<Pending>,
    /// Items at a row's id that an import of a file without request ids made from that
    /// same line: the identity of that file, with the first such line and id. Unless it
    /// is this file, the id is taken (known only once the whole file is read).
    imported: BTreeMap<String, (u64, i64)>,
}

/// What the second pass needs to keep the ids.
pub(super) struct Plan {
    /// The row with the largest id, added first.
    pub(super) last: Row,
    /// The smallest and largest kept id.
    pub(super) ids: (i64, i64),
    /// The largest id in the database when the ids were checked.
    pub(super) seen: i64,
}

impl KeptIds {
    /// Starts the check against `store` as it is now.
    pub(super) fn new(store: &mut dyn Store) -> Result<Self, StoreError> {
        Ok(KeptIds {
            seen: store.last_item_id()?,
            prev: None,
            first: None,
            last: None,
            pending: Vec::new(),
            imported: BTreeMap::new(),
        })
    }

    /// Checks one row (kept as the last one); a problem goes to `bad`.
    pub(super) fn row(
        &mut self,
        store: &mut dyn Store,
        r: Row,
        bad: &mut dyn FnMut(LineError),
    ) -> Result<(), StoreError> {
        let line = r.line;
        let Some(id) = r.id else {
            bad(LineError {
                line,
                message: "has no id (--keep-ids keeps the ids `caseload export` writes)".into(),
            });
            return Ok(());
        };
        if let Some((prev, prev_line)) = self.prev
            && id <= prev
        {
            bad(LineError {
                line,
                message: format!(
                    "has id {id}, not above id {prev} of line {prev_line} (--keep-ids needs \
                     the ids in increasing order, as `caseload export` writes them)"
                ),
            });
            return Ok(());
        }
        self.prev = Some((id, line));
        self.first.get_or_insert(id);
        if id <= self.seen || r.item.request_id.is_some() {
            self.pending.push(Pending {
                id,
                line,
                request_id: r.item.request_id.clone(),
            });
            if self.pending.len() >= LOOKUP {
                self.look_up(store, bad)?;
            }
        }
        self.last = Some(r);
        Ok(())
    }

    /// Ends the check once the file's identity is known: what the second pass needs,
    /// or `None` when the file holds no row to add.
    pub(super) fn finish(
        mut self,
        store: &mut dyn Store,
        file_id: &str,
        bad: &mut dyn FnMut(LineError),
    ) -> Result<Option<Plan>, StoreError> {
        self.look_up(store, bad)?;
        for (file, (line, id)) in &self.imported {
            if file != file_id {
                bad(taken(*line, *id, "an item imported from another file"));
            }
        }
        Ok(match (self.last, self.first) {
            (Some(last), Some(first)) => Some(Plan {
                ids: (first, last.id.unwrap_or(first)),
                last,
                seen: self.seen,
            }),
            _ => None,
        })
    }

    /// Looks the pending rows up: each id must be free or its own row's item.
    fn look_up(
        &mut self,
        store: &mut dyn Store,
        bad: &mut dyn FnMut(LineError),
    ) -> Result<(), StoreError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let ids: Vec<i64> = (self.pending.iter())
            .filter(|p| p.id <= self.seen)
            .map(|p| p.id)
            .collect();
        let rids: Vec<&str> = (self.pending.iter())
            .filter_map(|p| p.request_id.as_deref())
            .collect();
        let keys = store.item_keys(&ids, &rids)?;
        let by_id: HashMap<i64, Option<&str>> =
            keys.iter().map(|(i, r)| (*i, r.as_deref())).collect();
        let by_rid: HashMap<&str, i64> = (keys.iter())
            .filter_map(|(i, r)| r.as_deref().map(|r| (r, *i)))
            .collect();
        for p in self.pending.drain(..) {
            let at_id = by_id.get(&p.id).copied();
            match (p.request_id.as_deref(), at_id) {
                (Some(own), _) => match by_rid.get(own) {
                    Some(&other) if other != p.id => bad(LineError {
                        line: p.line,
                        message: format!(
                            "has id {} but its request_id '{}' is item #{other}'s (--keep-ids \
                             keeps an item's id or imports nothing)",
                            p.id,
                            sanitize::line(own)
                        ),
                    }),
                    Some(_) | None if at_id.is_some_and(|r| r != Some(own)) => {
                        bad(taken(p.line, p.id, "another item"));
                    }
                    _ => {}
                },
                (None, None) => {}
                (None, Some(rid)) => match rid.and_then(|r| imported_from(r, p.line)) {
                    Some(file) => {
                        self.imported
                            .entry(file.to_string())
                            .or_insert((p.line, p.id));
                    }
                    None => bad(taken(p.line, p.id, "another item")),
                },
            }
        }
        Ok(())
    }
}

fn taken(line: u64, id: i64, by: &str) -> LineError {
    LineError {
        line,
        message: format!(
            "has id {id}, which {by} already has (--keep-ids keeps only free ids; import \
             without it to give the rows new ids)"
        ),
    }
}

/// The file identity in `request_id` when it is the derived key of line `line`.
fn imported_from(request_id: &str, line: u64) -> Option<&str> {
    let rest = request_id.strip_prefix(DERIVED_PREFIX)?;
    rest.strip_suffix(&format!(":{line:010}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_derived_key_names_its_file_only_for_its_own_line() {
        let key = super::super::derived_key("abc", 12);
        assert_eq!(imported_from(&key, 12), Some("abc"));
        assert_eq!(imported_from(&key, 13), None);
        assert_eq!(imported_from("rid-1", 12), None);
    }
}
