//! Which data was dirty: the corrections made to records before they were completed
//! (`report --by field`, `report --by source`). Pure: the records come from the store,
//! with their `field_changed` events.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::queue_fields::value_text;

/// A record completed in a report's period, as it is now, with the corrections made to it
/// (its `field_changed` events' details, oldest first).
#[derive(Debug, Clone, PartialEq)]
pub struct CompletedRecord {
    pub id: i64,
    pub queue: String,
    pub source: Option<String>,
    pub params: Value,
    pub changes: Vec<Value>,
}

/// What kind of correction a change was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum ChangeKind {
    /// empty → value
    Filled,
    /// value → value
    Changed,
    /// value → empty
    Cleared,
}

fn kind_of(change: &Value) -> ChangeKind {
    let empty = |k: &str| {
        change
            .get(k)
            .is_none_or(|v| v.is_null() || value_text(v).trim().is_empty())
    };
    match (empty("from"), empty("to")) {
        (true, _) => ChangeKind::Filled,
        (false, true) => ChangeKind::Cleared,
        (false, false) => ChangeKind::Changed,
    }
}

/// One field of one queue over a period's completed records.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldFigure {
    pub queue: String,
    pub field: String,
    /// Completed records that had a value in it (now, or before a correction).
    pub records: u64,
    /// Of those, records where it was corrected at least once.
    pub corrected: u64,
    /// corrected / records (`None` when no record had it).
    pub share: Option<f64>,
    /// Corrections by kind: empty → value, value → value, value → empty.
    pub filled: u64,
    pub changed: u64,
    pub cleared: u64,
}

impl FieldFigure {
    /// The most common kind of correction, as a person reads it ("empty → value").
    pub fn most_common(&self) -> Option<&'static str> {
        let kinds = [
            (self.filled, "empty → value"),
            (self.changed, "value → value"),
            (self.cleared, "value → empty"),
        ];
        // Ties go to the first listed.
        let best = kinds
            .iter()
            .fold(None, |best: Option<(u64, &str)>, &(n, k)| match best {
                Some((b, _)) if b >= n => best,
                _ if n == 0 => best,
                _ => Some((n, k)),
            });
        best.map(|(_, k)| k)
    }
}

/// Per queue and field: how many completed records had it, how many were corrected, how.
/// `defined` lists each queue's fields in their order; a field no definition names but
/// that was corrected is reported after them.
pub fn by_field(records: &[CompletedRecord], defined: &[(String, String)]) -> Vec<FieldFigure> {
    type Figs = BTreeMap<(String, String), FieldFigure>;
    fn entry(figs: &mut Figs, order: &mut Vec<(String, String)>, queue: &str, field: &str) {
        let key = (queue.to_string(), field.to_string());
        if let std::collections::btree_map::Entry::Vacant(e) = figs.entry(key.clone()) {
            order.push(key);
            e.insert(FieldFigure {
                queue: queue.to_string(),
                field: field.to_string(),
                records: 0,
                corrected: 0,
                share: None,
                filled: 0,
                changed: 0,
                cleared: 0,
            });
        }
    }
    let mut order: Vec<(String, String)> = Vec::new();
    let mut figs: Figs = BTreeMap::new();
    let queues: std::collections::BTreeSet<&str> =
        records.iter().map(|r| r.queue.as_str()).collect();
    for (q, f) in defined.iter().filter(|(q, _)| queues.contains(q.as_str())) {
        entry(&mut figs, &mut order, q, f);
    }
    for r in records {
        let mut changed: BTreeMap<&str, Vec<ChangeKind>> = BTreeMap::new();
        for c in &r.changes {
            if let Some(f) = c.get("field").and_then(Value::as_str) {
                changed.entry(f).or_default().push(kind_of(c));
            }
        }
        for f in changed.keys() {
            entry(&mut figs, &mut order, &r.queue, f);
        }
        for (key, fig) in figs.iter_mut().filter(|((q, _), _)| *q == r.queue) {
            let field = key.1.as_str();
            let kinds = changed.get(field);
            let has_now = r
                .params
                .get(field)
                .is_some_and(|v| !value_text(v).trim().is_empty());
            if !has_now && kinds.is_none() {
                continue;
            }
            fig.records += 1;
            if let Some(kinds) = kinds {
                fig.corrected += 1;
                for k in kinds {
                    match k {
                        ChangeKind::Filled => fig.filled += 1,
                        ChangeKind::Changed => fig.changed += 1,
                        ChangeKind::Cleared => fig.cleared += 1,
                    }
                }
            }
        }
    }
    order
        .into_iter()
        .filter_map(|k| figs.remove(&k))
        .map(|mut f| {
            f.share = (f.records > 0).then(|| f.corrected as f64 / f.records as f64);
            f
        })
        .collect()
}

/// One source over a period's completed records.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceFigure {
    /// The records' `source`; `None`: records without one.
    pub source: Option<String>,
    pub records: u64,
    /// Records with at least one correction.
    pub corrected: u64,
    pub share: Option<f64>,
    /// Corrections in all.
    pub corrections: u64,
    /// The field corrected most often (ties: the first by name).
    pub top_field: Option<String>,
}

/// Per source: how many completed records came from it, how many needed a correction,
/// and which field most often; the dirtiest sources first.
pub fn by_source(records: &[CompletedRecord]) -> Vec<SourceFigure> {
    type Tally = (u64, u64, u64, BTreeMap<String, u64>);
    let mut by: BTreeMap<Option<String>, Tally> = BTreeMap::new();
    for r in records {
        let t = by.entry(r.source.clone()).or_default();
        t.0 += 1;
        if !r.changes.is_empty() {
            t.1 += 1;
        }
        t.2 += r.changes.len() as u64;
        for c in &r.changes {
            if let Some(f) = c.get("field").and_then(Value::as_str) {
                *t.3.entry(f.to_string()).or_default() += 1;
            }
        }
    }
    let mut out: Vec<SourceFigure> = by
        .into_iter()
        .map(|(source, (records, corrected, corrections, fields))| {
            let top_field = fields
                .iter()
                .fold(None, |best: Option<(&String, u64)>, (f, &n)| match best {
                    Some((_, b)) if b >= n => best,
                    _ => Some((f, n)),
                })
                .map(|(f, _)| f.clone());
            SourceFigure {
                source,
                records,
                corrected,
                share: (records > 0).then(|| corrected as f64 / records as f64),
                corrections,
                top_field,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.share
            .unwrap_or(0.0)
            .total_cmp(&a.share.unwrap_or(0.0))
            .then(b.records.cmp(&a.records))
            .then(a.source.cmp(&b.source))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(id: i64, source: Option<&str>, params: Value, changes: Vec<Value>) -> CompletedRecord {
        CompletedRecord {
            id,
            queue: "verify".into(),
            source: source.map(str::to_string),
            params,
            changes,
        }
    }

    fn records() -> Vec<CompletedRecord> {
        vec![
            // vat corrected (value → value), email filled (empty → value).
            rec(
                1,
                Some("feed-a"),
                json!({"vat": "DE123456789", "email": "a@example.com"}),
                vec![
                    json!({"field": "vat", "from": "DE12", "to": "DE123456789"}),
                    json!({"field": "email", "from": null, "to": "a@example.com"}),
                ],
            ),
            // vat as it came: had it, not corrected.
            rec(2, Some("feed-a"), json!({"vat": "FR12345678901"}), vec![]),
            // Clean record from another feed.
            rec(3, Some("feed-b"), json!({"vat": "NL123456789B01"}), vec![]),
            // A phone cleared: had it before, empty now.
            rec(
                4,
                None,
                json!({"vat": "", "phone": ""}),
                vec![json!({"field": "phone", "from": "12", "to": ""})],
            ),
        ]
    }

    #[test]
    fn fields_count_records_corrections_and_their_kinds() {
        let defined = [
            ("verify".to_string(), "vat".to_string()),
            ("verify".to_string(), "email".to_string()),
            ("other".to_string(), "unused".to_string()),
        ];
        let f = by_field(&records(), &defined);
        let names: Vec<&str> = f.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(names, ["vat", "email", "phone"], "defined first, in order");
        let vat = &f[0];
        assert_eq!((vat.records, vat.corrected, vat.changed), (3, 1, 1));
        assert_eq!(vat.share, Some(1.0 / 3.0));
        assert_eq!(vat.most_common(), Some("value → value"));
        assert_eq!((f[1].records, f[1].corrected, f[1].filled), (1, 1, 1));
        assert_eq!(f[1].most_common(), Some("empty → value"));
        assert_eq!(
            (f[2].records, f[2].cleared),
            (1, 1),
            "had it before the correction"
        );
        assert_eq!(
            by_field(&[], &defined),
            vec![],
            "no records: nothing to say"
        );
    }

    #[test]
    fn sources_dirtiest_first() {
        let s = by_source(&records());
        assert_eq!(s[0].source, None);
        assert_eq!((s[0].records, s[0].corrected), (1, 1));
        assert_eq!(s[1].source.as_deref(), Some("feed-a"));
        assert_eq!((s[1].records, s[1].corrected, s[1].corrections), (2, 1, 2));
        assert_eq!(s[1].share, Some(0.5));
        assert_eq!(
            s[1].top_field.as_deref(),
            Some("email"),
            "ties: first by name"
        );
        assert_eq!(s[2].source.as_deref(), Some("feed-b"));
        assert_eq!((s[2].corrected, s[2].share), (0, Some(0.0)));
    }
}
