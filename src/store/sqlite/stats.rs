//! The Stats figures on SQLite: every fact read in one read transaction (one snapshot),
//! each over an index — a refresh never walks a million items.

use rusqlite::{Connection, OptionalExtension, params};

use super::reads::queues;
use super::rows::lossy_text;
use super::txn::{self, Kind};
use crate::domain::Millis;
use crate::store::error::Result;
use crate::store::stats::{StatsFacts, age_ranges, assemble, first_hour};
use crate::store::{OldestItem, Stats};

/// The figures at `now`, from one snapshot.
pub(super) fn stats(c: &Connection, now: Millis) -> Result<Stats> {
    let facts = txn::run(&mut &*c, Kind::Read, |c| facts(c, now)).map_err(|f| f.error)?;
    Ok(assemble(facts))
}

fn facts(c: &Connection, now: Millis) -> Result<StatsFacts> {
    let counts: Vec<(String, String, i64)> = c
        .prepare_cached("SELECT queue, state, n FROM item_counts")?
        .query_map([], |r| {
            Ok((lossy_text(r, 0)?, lossy_text(r, 1)?, r.get(2)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let locks = c
        .prepare_cached(
            "SELECT lock_user, queue, lock_time, lock_expires_at FROM items \
             WHERE lock_user IS NOT NULL",
        )?
        .query_map([], |r| {
            Ok((lossy_text(r, 0)?, lossy_text(r, 1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let overdue: i64 = c
        .prepare_cached("SELECT count(*) FROM items WHERE state = 'open' AND due_at < ?1")?
        .query_row([now], |r| r.get(0))?;
    // events_kind_at: only the last day's completions are read.
    let completions = c
        .prepare_cached(
            "SELECT at / 3600000 - ?1, count(*) FROM events \
             WHERE kind = 'completed' AND at >= ?1 * 3600000 AND at <= ?2 GROUP BY 1",
        )?
        .query_map([first_hour(now), now], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let total_open = counts
        .iter()
        .filter(|(_, s, _)| s == "open")
        .map(|(_, _, n)| *n)
        .sum();
    let oldest_open = c
        .prepare_cached(
            "SELECT id, title, created_at FROM items WHERE state = 'open' \
             ORDER BY created_at, id LIMIT 1",
        )?
        .query_row([], |r| {
            Ok(OldestItem {
                id: r.get(0)?,
                title: lossy_text(r, 1)?,
                created_at: r.get(2)?,
            })
        })
        .optional()?;
    Ok(StatsFacts {
        now,
        queues: queues(c)?,
        open_ages: open_ages(c, now, total_open)?,
        counts,
        locks,
        overdue,
        completions,
        oldest_open,
    })
}

/// Open items by age. Each bucket is counted over the open-age index, but at most
/// `CAP` entries each: a bucket holding more (a million items imported yesterday) is
/// the total open count minus the others, so a refresh never walks a million entries.
fn open_ages(c: &Connection, now: Millis, total_open: i64) -> Result<Vec<i64>> {
    const CAP: i64 = 20_000;
    let ranges = age_ranges(now);
    let mut capped = c.prepare_cached(
        "SELECT count(*) FROM (SELECT 1 FROM items WHERE state = 'open' AND created_at > ?1 \
         AND created_at < ?2 LIMIT CAST(?3 AS INTEGER))",
    )?;
    let mut counts = Vec::with_capacity(ranges.len());
    for &(lower, upper) in &ranges {
        counts.push(capped.query_row(params![lower, upper, CAP + 1], |r| r.get::<_, i64>(0))?);
    }
    let big: Vec<usize> = (0..counts.len()).filter(|&i| counts[i] > CAP).collect();
    if big.len() == 1 {
        // Items created after `now` (another host's clock) are in no bucket.
        let future: i64 = c
            .prepare_cached("SELECT count(*) FROM items WHERE state = 'open' AND created_at > ?1")?
            .query_row([now], |r| r.get(0))?;
        let others: i64 = (0..counts.len())
            .filter(|i| *i != big[0])
            .map(|i| counts[i])
            .sum();
        counts[big[0]] = (total_open - future - others).max(0);
    } else {
        let mut full = c.prepare_cached(
            "SELECT count(*) FROM items WHERE state = 'open' AND created_at > ?1 \
             AND created_at < ?2",
        )?;
        for i in big {
            let (lower, upper) = ranges[i];
            counts[i] = full.query_row([lower, upper], |r| r.get(0))?;
        }
    }
    Ok(counts)
}
