//! `caseload check` of the duplicate keys (issue 27): `item_keys` must hold exactly the
//! keys of each item's params for its queue's key fields (`domain::duplicates::keys_of`,
//! computed here as the writes compute them), no more and no less. Written once; each
//! backend gives the rows. `check --repair-figures` rebuilds them (`ops::dedupe`).

use std::collections::BTreeMap;

use crate::domain::duplicates::{has_keys, keys_of};
use crate::domain::queue_fields::FieldDef;
use crate::store::error::Result;

use super::Findings;

/// Items read per page.
pub(crate) const PAGE: usize = 5_000;

/// The kind of finding (counted past the limit).
const KIND: &str = "duplicate keys";

/// The kept keys of queue `$1`'s items with ids in `[$2, $3]`, by id and field.
pub(crate) const KEPT: &str = "SELECT k.item_id, k.field, k.key FROM item_keys k \
     JOIN items i ON i.id = k.item_id WHERE i.queue = $1 AND k.item_id BETWEEN $2 AND $3 \
     ORDER BY k.item_id, k.field";

/// What a backend reads for the check, all in the check's snapshot.
pub(crate) trait KeyRows {
    /// The queues' field definitions: (queue, definition), by queue.
    fn fields(&mut self) -> Result<Vec<(String, FieldDef)>>;
    /// The queues that have items.
    fn queues(&mut self) -> Result<Vec<String>>;
    /// Items of `queue` with an id above `after`, at most `limit`, by id: (id, params).
    fn page(&mut self, queue: &str, after: i64, limit: usize) -> Result<Vec<(i64, String)>>;
    /// The kept keys of `queue`'s items with ids in `[first, last]`: (id, field, key), by
    /// id and field.
    fn kept(&mut self, queue: &str, first: i64, last: i64) -> Result<Vec<(i64, String, String)>>;
}

/// Compares every item's kept keys with its params' keys; a finding per item that
/// differs. Returns how many items were compared.
pub(crate) fn check(rows: &mut dyn KeyRows, found: &mut Findings) -> Result<u64> {
    let mut defs: BTreeMap<String, Vec<FieldDef>> = BTreeMap::new();
    for (queue, def) in rows.fields()? {
        defs.entry(queue).or_default().push(def);
    }
    let none = Vec::new();
    let mut n = 0;
    for queue in rows.queues()? {
        let defs = defs.get(&queue).unwrap_or(&none);
        let keyed = has_keys(defs);
        let mut after = 0;
        loop {
            // A queue without key fields must have no keys at all: one read of its keys.
            if !keyed {
                for (id, field, _) in rows.kept(&queue, i64::MIN, i64::MAX)? {
                    found.add(
                        KIND,
                        finding(
                            id,
                            &queue,
                            &format!(
                                "keeps a key of '{field}', \
                        which is not a key field of its queue"
                            ),
                        ),
                    );
                }
                break;
            }
            let page = rows.page(&queue, after, PAGE)?;
            let (Some(first), Some(last)) = (page.first(), page.last()) else {
                break;
            };
            let mut kept: BTreeMap<i64, Vec<(String, String)>> = BTreeMap::new();
            for (id, field, key) in rows.kept(&queue, first.0, last.0)? {
                kept.entry(id).or_default().push((field, key));
            }
            for (id, params) in &page {
                let mut want = keys_of(defs, params);
                want.sort();
                let mut have = kept.remove(id).unwrap_or_default();
                have.sort();
                if want != have {
                    found.add(KIND, finding(*id, &queue, &differ(&want, &have)));
                }
                n += 1;
            }
            after = last.0;
        }
    }
    Ok(n)
}

fn finding(id: i64, queue: &str, what: &str) -> String {
    format!(
        "duplicate keys: item #{id} (queue '{}') {what} (`caseload similar` and `import \
         --skip-duplicates` miss or wrongly find it; a supervisor's `caseload check \
         --repair-figures` rebuilds the keys)",
        crate::domain::sanitize::line(queue)
    )
}

/// What differs between the keys an item should have (`want`) and the kept ones.
fn differ(want: &[(String, String)], have: &[(String, String)]) -> String {
    let names = |v: Vec<&(String, String)>| -> String {
        v.iter()
            .map(|(f, _)| format!("'{}'", crate::domain::sanitize::line(f)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let lacks: Vec<&(String, String)> = want.iter().filter(|k| !have.contains(k)).collect();
    let extra: Vec<&(String, String)> = have.iter().filter(|k| !want.contains(k)).collect();
    match (lacks.is_empty(), extra.is_empty()) {
        (false, true) => format!("lacks its key of {}", names(lacks)),
        (true, false) => format!(
            "keeps a key of {} that its params do not give",
            names(extra)
        ),
        _ => format!(
            "keeps other keys of {} than its params give",
            names(lacks.into_iter().chain(extra).collect())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::duplicates::Dedupe;
    use crate::domain::queue_fields::FieldType;

    struct Fake {
        items: Vec<(String, i64, String)>,
        keys: Vec<(i64, String, String)>,
    }

    impl KeyRows for Fake {
        fn fields(&mut self) -> Result<Vec<(String, FieldDef)>> {
            let mut d = FieldDef::new("vat", FieldType::Text);
            d.dedupe = Some(Dedupe::Key);
            Ok(vec![("q".into(), d)])
        }
        fn queues(&mut self) -> Result<Vec<String>> {
            Ok(vec!["other".into(), "q".into()])
        }
        fn page(&mut self, queue: &str, after: i64, limit: usize) -> Result<Vec<(i64, String)>> {
            Ok((self.items.iter())
                .filter(|(q, id, _)| q == queue && *id > after)
                .take(limit)
                .map(|(_, id, p)| (*id, p.clone()))
                .collect())
        }
        fn kept(
            &mut self,
            queue: &str,
            first: i64,
            last: i64,
        ) -> Result<Vec<(i64, String, String)>> {
            let ids: Vec<i64> = (self.items.iter())
                .filter(|(q, id, _)| q == queue && (first..=last).contains(id))
                .map(|(_, id, _)| *id)
                .collect();
            Ok((self.keys.iter())
                .filter(|(id, _, _)| ids.contains(id))
                .cloned()
                .collect())
        }
    }

    #[test]
    fn names_items_whose_keys_differ_from_their_params() {
        let item = |q: &str, id, vat: &str| (q.to_string(), id, format!(r#"{{"vat": "{vat}"}}"#));
        let key = |id, k: &str| (id, "vat".to_string(), k.to_string());
        let mut rows = Fake {
            items: vec![
                item("q", 1, "DE 1"),
                item("q", 2, "DE 2"),
                item("q", 3, "DE 3"),
                item("other", 4, "DE 4"),
            ],
            keys: vec![key(1, "de1"), key(2, "de9"), key(4, "de4")],
        };
        let mut found = Findings::default();
        assert_eq!(check(&mut rows, &mut found).unwrap(), 3);
        let lines = found.lines().join("\n");
        assert!(!lines.contains("#1 "), "{lines}");
        assert!(
            lines.contains("#2 (queue 'q') keeps other keys of 'vat'"),
            "{lines}"
        );
        assert!(
            lines.contains("#3 (queue 'q') lacks its key of 'vat'"),
            "{lines}"
        );
        assert!(
            lines.contains("#4 (queue 'other') keeps a key of 'vat', which"),
            "{lines}"
        );
    }
}
