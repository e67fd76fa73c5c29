//! The figures' day summary (`figure_days`): per UTC day × queue × holder, the counts and
//! held time of the holds that ended that day and every finish's figures, kept by a
//! trigger on `holds` in the transaction of the ending event (schema.sql). A period reads
//! the summary rows of its whole UTC days and the `holds` rows of its partial days at the
//! edges, so the answer is the same as from the holds alone, whatever the reader's time
//! zone; [`split`] says which part comes from where.

use crate::domain::Millis;
use crate::store::error::{Result, StoreError};

/// One UTC day.
pub(crate) const DAY: Millis = 86_400_000;

/// Where a period's figures are read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Split {
    /// `[first, end)`: the whole UTC days (starts of days) read from the summary.
    pub days: Option<(Millis, Millis)>,
    /// The partial days at the edges, each `[since, until)`, read from the holds.
    pub edges: Vec<(Millis, Millis)>,
}

/// The start of the UTC day holding `t`.
pub(crate) fn day_of(t: Millis) -> Millis {
    t - t.rem_euclid(DAY)
}

/// Splits `[since, until)` into whole UTC days and the edges around them; every
/// millisecond of the period falls in exactly one part. `rows_only` reads all of it from
/// the holds.
pub(crate) fn split(since: Millis, until: Millis, rows_only: bool) -> Split {
    let first = day_of(since) + if since.rem_euclid(DAY) == 0 { 0 } else { DAY };
    let end = day_of(until);
    if rows_only || first >= end {
        return Split {
            days: None,
            edges: vec![(since, until)],
        };
    }
    let edges = [(since, first), (end, until)]
        .into_iter()
        .filter(|(a, b)| a < b)
        .collect();
    Split {
        days: Some((first, end)),
        edges,
    }
}

/// One finish (a hold that ended its item completed or failed) as the figures use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Finish {
    pub completed: bool,
    pub ended: Millis,
    pub own_ms: i64,
    pub handle_ms: i64,
    pub wait_ms: i64,
    pub cycle_ms: i64,
    pub late_ms: Option<i64>,
}

/// One `figure_days` row, as a backend reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DayCell {
    pub day: Millis,
    pub queue: String,
    pub holder: String,
    pub completed: i64,
    pub failed: i64,
    pub skipped: i64,
    pub released: i64,
    pub lost: i64,
    pub held_ms: i64,
    /// The `finishes` column as stored.
    pub finishes: String,
}

impl DayCell {
    /// The finishes of the row, or `Corrupt` naming the row when its list cannot be read.
    pub(crate) fn finishes(&self) -> Result<Vec<Finish>> {
        parse_list(self.day, self.finishes.as_bytes()).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "the figures summary row of {} for queue '{}' and '{}' cannot be read; \
                 `caseload check` names what disagrees",
                crate::domain::time::rfc3339(self.day),
                crate::domain::sanitize::line(&self.queue),
                crate::domain::sanitize::line(&self.holder),
            ))
        })
    }
}

/// Entries "k,at,own,handle,wait,cycle,late" each followed by `;` (see the schema), read
/// in one pass over the bytes (a 30-day period holds tens of thousands of them).
fn parse_list(day: Millis, b: &[u8]) -> Option<Vec<Finish>> {
    let mut out = Vec::with_capacity(b.len() / 40);
    let mut i = 0;
    while let Some(&k) = b.get(i) {
        i += 1;
        let completed = match k {
            b';' => continue,
            b'c' => true,
            b'f' => false,
            _ => return None,
        };
        let at = number(b, &mut i)?;
        let (own_ms, handle_ms) = (number(b, &mut i)?, number(b, &mut i)?);
        let (wait_ms, cycle_ms) = (number(b, &mut i)?, number(b, &mut i)?);
        let late_ms = match b.get(i + 1) {
            Some(b';') | None if b.get(i) == Some(&b',') => {
                i += 1;
                None
            }
            _ => Some(number(b, &mut i)?),
        };
        if !matches!(b.get(i), Some(b';') | None) || !(0..DAY).contains(&at) {
            return None;
        }
        out.push(Finish {
            completed,
            ended: day + at,
            own_ms,
            handle_ms,
            wait_ms,
            cycle_ms,
            late_ms,
        });
    }
    Some(out)
}

/// `,` then a decimal integer at `b[*i..]`; moves `i` past it.
fn number(b: &[u8], i: &mut usize) -> Option<i64> {
    if b.get(*i) != Some(&b',') {
        return None;
    }
    *i += 1;
    let negative = b.get(*i) == Some(&b'-');
    if negative {
        *i += 1;
    }
    let start = *i;
    let mut n: i64 = 0;
    while let Some(d) = b.get(*i).filter(|d| d.is_ascii_digit()) {
        n = n.checked_mul(10)?.checked_add(i64::from(d - b'0'))?;
        *i += 1;
    }
    if *i == start {
        return None;
    }
    Some(if negative { -n } else { n })
}

/// The entries of a stored `finishes` list in one order (for `check`: the trigger appends
/// in commit order, the expected list is sorted).
pub(crate) fn sorted_entries(list: &str) -> String {
    let mut v: Vec<&str> = list.split(';').filter(|e| !e.is_empty()).collect();
    v.sort_unstable();
    v.join(";")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_period_splits_into_whole_days_and_edges() {
        let h = 3_600_000;
        assert_eq!(
            split(DAY + 5 * h, 4 * DAY + h, false),
            Split {
                days: Some((2 * DAY, 4 * DAY)),
                edges: vec![(DAY + 5 * h, 2 * DAY), (4 * DAY, 4 * DAY + h)],
            }
        );
        assert_eq!(
            split(DAY, 3 * DAY, false),
            Split {
                days: Some((DAY, 3 * DAY)),
                edges: vec![],
            }
        );
        assert_eq!(split(DAY + h, 2 * DAY + h, false).days, None);
        assert_eq!(split(0, 3 * DAY, true).days, None);
        assert_eq!(day_of(-1), -DAY);
    }

    #[test]
    fn entries_parse_exactly_or_not_at_all() {
        let cell = |s: &str| DayCell {
            day: DAY,
            queue: "q".into(),
            holder: "p".into(),
            completed: 1,
            failed: 0,
            skipped: 0,
            released: 0,
            lost: 0,
            held_ms: 0,
            finishes: s.into(),
        };
        let f = cell("c,5,1,2,3,4,-6;f,7,1,2,3,4,;").finishes().unwrap();
        assert_eq!(f[0].ended, DAY + 5);
        assert_eq!(f[0].late_ms, Some(-6));
        assert!(!f[1].completed && f[1].late_ms.is_none());
        for bad in [
            "x,5,1,2,3,4,;",
            "c,5,1,2,3;",
            "c,5,1,2,3,4,,9;",
            "c,86400000,1,2,3,4,;",
        ] {
            assert!(cell(bad).finishes().is_err(), "{bad}");
        }
        assert_eq!(sorted_entries("b;a;;c;"), "a;b;c");
    }
}
