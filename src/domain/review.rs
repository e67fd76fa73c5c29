//! Four eyes: which completions wait for a second person (issue 29 §1). A queue reviews
//! none, all or a share of its items, and each person's first completions in it; the
//! share is chosen from a hash of the queue's name and the item's id, so the same items
//! are chosen however often it is asked (a re-run never samples a different set).

use serde_json::{Value, json};

use super::queue::QueueSettings;

/// Parses `--review`: `none` (0), `all` (100) or a share `PCT%` (0 to 100).
pub(crate) fn parse_share(s: &str) -> Result<i64, String> {
    let t = s.trim();
    match t.to_ascii_lowercase().as_str() {
        "none" => return Ok(0),
        "all" => return Ok(100),
        _ => {}
    }
    let bad = || format!("--review takes none, all or a share such as 20%, not '{s}'");
    let pct = t.strip_suffix('%').ok_or_else(bad)?;
    let n: i64 = pct.trim().parse().map_err(|_| bad())?;
    if !(0..=100).contains(&n) {
        return Err(format!(
            "--review's share must be between 0% and 100%, not {n}%"
        ));
    }
    Ok(n)
}

/// How a share reads: `none`, `all` or `20%`.
pub(crate) fn share_name(percent: i64) -> String {
    match percent {
        0 => "none".into(),
        100 => "all".into(),
        p => format!("{p}%"),
    }
}

/// The item's place among 100 (0 to 99): FNV-1a over the queue's name, a zero byte and
/// the id's decimal digits. Fixed here for good: changing it would re-sample.
pub(crate) fn bucket(queue: &str, id: i64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let id = id.to_string();
    for b in queue.bytes().chain([0]).chain(id.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h % 100
}

/// Why a completion goes to review.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// One of the maker's first `first` completions in the queue.
    New { first: i64 },
    /// Chosen by the queue's share (percent).
    Sample { percent: i64 },
}

impl Why {
    /// The `submitted` event's detail: `{why: new, first}` or `{why: sample, share}`.
    pub(crate) fn detail(self) -> Value {
        match self {
            Why::New { first } => json!({"why": "new", "first": first}),
            Why::Sample { percent } => json!({"why": "sample", "share": share_name(percent)}),
        }
    }
}

/// Why a completion of item `id` goes to review; `None` when it does not. `done_before`
/// is how many items the maker completed in the queue before (counted up to the queue's
/// `review_new`).
pub(crate) fn why_review(q: &QueueSettings, id: i64, done_before: i64) -> Option<Why> {
    if done_before < q.review_new {
        return Some(Why::New {
            first: q.review_new,
        });
    }
    if q.review_percent > 0 && bucket(&q.name, id) < q.review_percent as u64 {
        return Some(Why::Sample {
            percent: q.review_percent,
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_parse_and_bad_ones_say_what_is_wanted() {
        assert_eq!(parse_share("none"), Ok(0));
        assert_eq!(parse_share("ALL"), Ok(100));
        assert_eq!(parse_share("20%"), Ok(20));
        assert!(
            parse_share("150%")
                .unwrap_err()
                .contains("between 0% and 100%")
        );
        assert!(
            parse_share("20")
                .unwrap_err()
                .contains("none, all or a share")
        );
        assert!(parse_share("-5%").unwrap_err().contains("not -5%"));
        assert_eq!(share_name(35), "35%");
    }

    #[test]
    fn a_share_samples_about_that_share_and_always_the_same_items() {
        let mut q = QueueSettings::new("kyc");
        q.review_percent = 20;
        let chosen: Vec<i64> = (1..=1000)
            .filter(|&id| why_review(&q, id, 0).is_some())
            .collect();
        assert!((150..=250).contains(&chosen.len()), "{}", chosen.len());
        let again: Vec<i64> = (1..=1000)
            .filter(|&id| why_review(&q, id, 0).is_some())
            .collect();
        assert_eq!(chosen, again);
        // Another queue samples other items.
        q.name = "kyc2".into();
        let other: Vec<i64> = (1..=1000)
            .filter(|&id| why_review(&q, id, 0).is_some())
            .collect();
        assert_ne!(chosen, other);
        // A pinned value: the hash is part of the stored data's meaning.
        assert_eq!([bucket("kyc", 42), bucket("kyc", 43)], [0, 11]);
    }

    #[test]
    fn the_first_completions_of_a_person_are_always_reviewed() {
        let mut q = QueueSettings::new("kyc");
        q.review_new = 2;
        assert_eq!(why_review(&q, 7, 0), Some(Why::New { first: 2 }));
        assert_eq!(why_review(&q, 7, 1).unwrap().detail()["why"], "new");
        assert!(why_review(&q, 7, 2).is_none());
        q.review_percent = 100;
        assert_eq!(why_review(&q, 7, 5).unwrap().detail()["share"], "all");
    }
}
