//! `check --repair-figures` on PostgreSQL: the figures' tables (`holds`, the day summary
//! `figure_days`, the queues' totals `queue_totals`, the due counts `due_hours`) repaired
//! from their sources while people go on working.
//!
//! Writers keep these tables in their own transactions (triggers), so a rebuild that
//! empties and refills them at READ COMMITTED counts a write committing in between twice
//! or not at all; holding off every event insert for the whole rebuild (1642635) made it
//! right but kept staff waiting past their lock_timeout on a long history (5.4 s in the
//! 20-minute soak at seed 702: 14 writes refused "busy"). Now in steps:
//!
//! 1. One snapshot (`REPEATABLE READ`, no lock that stops a writer) finds what is wrong:
//!    the items whose holds differ from what their events give, the day summary's cells
//!    and the queues' totals that differ from the holds, the due counts that differ from
//!    the items. Each writer writes a derived row and its source in one transaction, so
//!    in a snapshot they agree wherever the triggers kept them: what differs there is
//!    wrong. On a sound database nothing is, and nothing more is done (no lock at all).
//! 2. The wrong due counts, key by key, are recounted from the items while the writers'
//!    pending changes (`due_changes`) are held off for that moment (`EXCLUSIVE` lock).
//! 3. The wrong items, in batches sized to take ~[`STEP_AIM`] each, each batch in a short
//!    transaction that holds off event inserts (`LOCK TABLE events IN EXCLUSIVE MODE`; readers go
//!    on): their holds deleted and inserted again from their events, the queues' totals
//!    lowered by what was deleted (the insert's triggers add what was inserted), and every
//!    day cell touched (or found wrong) rebuilt from the holds. The first batch also
//!    recounts the wrong queues' totals from the holds.
//!
//! Every step sets rows from their sources as they are under its lock (never adds a
//! difference seen earlier), so two repairs at once, or a repair killed part-way and run
//! again, leave the tables right; a killed step's transaction is rolled back whole. Each
//! lock is asked for with a short lock_timeout and asked for again after a pause: the
//! repair waits, not the people working behind it.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use postgres::error::SqlState;

use super::PgStore;
use super::check::SORTED_FINISHES;
use super::metrics::DUE_HOURS_RECOUNT;
use super::open::{Conn, TxResult};
use super::txn::{self, Failed, Kind};
use crate::store::check::{FINISH_ENTRY, figure_days_disagreeing, queue_totals_disagreeing};
use crate::store::error::{Result, StoreError};
use crate::store::ops::require_supervisor;
use crate::store::sql::{EXPECTED_HOLDS, HOLDS_COLS, kinds_sql};

/// Items repaired by the first transaction of step 3. Each holds off event inserts for as
/// long as it takes to recompute its items' holds and rebuild the day cells they touch
/// (a cell from all its holds: a busy person's day), so the next batch is sized by how
/// long the last one took, aiming at [`STEP_AIM`].
const FIRST_STEP: usize = 50;

/// How long a batch of step 3 should hold off event inserts.
const STEP_AIM: Duration = Duration::from_millis(100);

/// The most items a batch of step 3 repairs.
const MAX_STEP: usize = 2_000;

/// How long a step waits for the writers inside the table it locks before it gives up
/// and tries again: writers arriving meanwhile queue behind the request, so this bounds
/// their wait too.
const LOCK_WAIT: &str = "300ms";

/// How long the repair goes on asking for a lock before it says the database is busy.
const PATIENCE: Duration = Duration::from_secs(60);

/// Finishes per rebuilt day-summary row (the trigger starts a new row at 700 characters
/// of finishes; an entry is ~40-55).
const FINISHES_PER_CHUNK: i64 = 12;

/// A day-summary cell: its UTC day's first millisecond, queue, holder.
type Cell = (i64, String, String);

/// A due count's key: queue, hour, shard.
type DueKey = (String, i64, i32);

/// What the snapshot found wrong, and how many holds the history gives.
#[derive(Default)]
struct Wrong {
    holds: i64,
    items: Vec<i64>,
    cells: Vec<Cell>,
    queues: Vec<String>,
    due: Vec<DueKey>,
}

/// The day an `ended` column falls in (its UTC day's first millisecond), as SQL.
const DAY_OF_ENDED: &str = "ended - (ended % 86400000 + 86400000) % 86400000";

impl PgStore {
    /// The repair (see the module's doc); returns how many holds the history gives.
    pub(super) fn repair_figures(&mut self) -> Result<u64> {
        // A supervisor's alone: asked before the long read.
        self.write_inner(&mut |tx| require_supervisor(tx, "rebuild the figures"))?;
        let wrong = self.read_inner(false, |c| {
            txn::run(c, Kind::Snapshot, |c, _| find(c)).map_err(Failed::into_tx)
        })?;
        if !wrong.due.is_empty() {
            self.locked_step(&mut |c, missed| recount_due(c, &wrong.due, missed))?;
        }
        let (mut rest, mut size) = (&wrong.items[..], FIRST_STEP);
        let (mut cells, mut queues) = (&wrong.cells[..], &wrong.queues[..]);
        while !(rest.is_empty() && cells.is_empty() && queues.is_empty()) {
            let (items, later) = rest.split_at(size.min(rest.len()));
            let started = Instant::now();
            self.locked_step(&mut |c, missed| fix(c, items, cells, queues, missed))?;
            let took = started.elapsed();
            size = match took {
                t if t < STEP_AIM / 2 => (size * 2).min(MAX_STEP),
                t if t > STEP_AIM => (size / 2).max(1),
                _ => size,
            };
            (rest, cells, queues) = (later, &[], &[]);
        }
        Ok(wrong.holds.max(0) as u64)
    }

    /// Runs `f` in a write transaction of its own (a supervisor's); when `f` could not
    /// take its lock in time (it sets its flag), waits a little and runs it again, for up
    /// to [`PATIENCE`].
    fn locked_step(
        &mut self,
        f: &mut dyn FnMut(&mut Conn, &mut bool) -> TxResult<()>,
    ) -> Result<()> {
        let start = Instant::now();
        loop {
            let mut missed = false;
            let out = self.write_inner(&mut |tx| {
                require_supervisor(tx, "rebuild the figures")?;
                let r = f(tx.c, &mut missed);
                tx.lift(r)
            });
            match out {
                Err(StoreError::Busy(_)) if missed && start.elapsed() < PATIENCE => {
                    std::thread::sleep(Duration::from_millis(200));
                }
                other => return other,
            }
        }
    }
}

/// Step 1: what is wrong, read in the snapshot the caller opened.
fn find(c: &mut Conn) -> TxResult<Wrong> {
    // These statements read the whole history.
    c.client.batch_execute("SET LOCAL statement_timeout = 0")?;
    let row = c.query_one(&wrong_items_sql(), &[])?;
    let mut w = Wrong {
        holds: row.get(0),
        items: row.get(1),
        ..Wrong::default()
    };
    let cells = figure_days_disagreeing(SORTED_FINISHES, " COLLATE \"C\"");
    w.cells = c
        .query(&cells, &[])?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    w.queues = c
        .query(&queue_totals_disagreeing(), &[])?
        .iter()
        .map(|r| r.get(0))
        .collect();
    w.due = c
        .query(&wrong_due_sql(), &[])?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    Ok(w)
}

/// One row: how many holds the events give, and the ids of the items whose kept holds
/// differ from those (a row missing, extra or different in any column).
fn wrong_items_sql() -> String {
    format!(
        "SELECT coalesce(sum(e), 0)::bigint, \
         coalesce(array_agg(DISTINCT item_id) FILTER (WHERE n <> 2 OR a = b), '{{}}') \
         FROM (SELECT item_id, count(*) AS n, min(side) AS a, max(side) AS b, \
         sum(side - 1) AS e FROM (SELECT {HOLDS_COLS}, 1 AS side FROM holds \
         UNION ALL SELECT {HOLDS_COLS}, 2 FROM ({EXPECTED_HOLDS}) x) u \
         GROUP BY {HOLDS_COLS}) g"
    )
}

/// The due counts' keys (queue, hour, shard) whose kept count plus the changes not yet
/// added up differs from a recount of the items, and the kept rows of 0 (the writers'
/// trigger deletes those).
fn wrong_due_sql() -> String {
    format!(
        "SELECT queue, hour, shard FROM ( \
         SELECT queue, hour, shard, n, 0 AS z FROM ({DUE_HOURS_RECOUNT}) r(queue, hour, shard, n) \
         UNION ALL SELECT queue, hour, shard, -n, CASE WHEN n = 0 THEN 1 ELSE 0 END \
         FROM due_hours \
         UNION ALL SELECT queue, hour, shard, -CAST(n AS BIGINT), 0 FROM due_changes) u \
         GROUP BY queue, hour, shard HAVING sum(n) <> 0 OR max(z) = 1"
    )
}

/// [`EXPECTED_HOLDS`] of the items whose ids are in the array `$1` alone (an item's holds
/// depend only on its own events and row).
fn expected_of_items() -> String {
    EXPECTED_HOLDS.replacen(
        "FROM events WINDOW",
        "FROM events WHERE item_id = ANY($1) WINDOW",
        1,
    )
}

/// Takes `table`'s `EXCLUSIVE` lock (its writers wait; readers go on), waiting at most
/// [`LOCK_WAIT`] for the writers inside it; `missed` says when that was not enough.
fn lock(c: &mut Conn, table: &str, missed: &mut bool) -> TxResult<()> {
    // No JIT either: compiling the step's statements took longer than running them.
    let sql = format!(
        "SET LOCAL jit = off; SET LOCAL lock_timeout = '{LOCK_WAIT}'; \
         LOCK TABLE {table} IN EXCLUSIVE MODE"
    );
    let r = c.client.batch_execute(&sql);
    if let Err(e) = &r {
        *missed = e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE);
    }
    Ok(r?)
}

/// Step 2: the due counts of `keys` recounted from the items, their pending changes
/// dropped (the recount has them), while no writer adds changes up.
fn recount_due(c: &mut Conn, keys: &[DueKey], missed: &mut bool) -> TxResult<()> {
    lock(c, "due_changes", missed)?;
    let q: Vec<&str> = keys.iter().map(|k| k.0.as_str()).collect();
    let h: Vec<i64> = keys.iter().map(|k| k.1).collect();
    let s: Vec<i32> = keys.iter().map(|k| k.2).collect();
    let keyed = "unnest($1::text[], $2::bigint[], $3::integer[]) k(queue, hour, shard)";
    let same = "d.queue = k.queue AND d.hour = k.hour AND d.shard = k.shard";
    for table in ["due_changes", "due_hours"] {
        c.execute(
            &format!("DELETE FROM {table} d USING {keyed} WHERE {same}"),
            &[&q, &h, &s],
        )?;
    }
    c.execute(
        &format!(
            "INSERT INTO due_hours (queue, hour, shard, n) \
             SELECT k.queue, k.hour, k.shard, count(*) FROM {keyed} \
             CROSS JOIN LATERAL (SELECT 1 FROM items i WHERE i.queue = k.queue \
             AND i.state = 'open' AND i.due_at >= k.hour * 3600000 \
             AND i.due_at < (k.hour + 1) * 3600000 AND i.id % 16 = k.shard OFFSET 0) i \
             GROUP BY 1, 2, 3"
        ),
        &[&q, &h, &s],
    )?;
    Ok(())
}

/// Step 3, one batch: the holds of `items` recomputed, the totals of `queues` recounted
/// and the day cells of `cells` and of every hold deleted or inserted rebuilt, while no
/// event is inserted.
fn fix(
    c: &mut Conn,
    items: &[i64],
    cells: &[Cell],
    queues: &[String],
    missed: &mut bool,
) -> TxResult<()> {
    lock(c, "events", missed)?;
    let mut touched: BTreeSet<Cell> = cells.iter().cloned().collect();
    if !items.is_empty() {
        // Per queue: holds, completed, failed, held ms of the holds deleted.
        let mut gone: BTreeMap<String, [i64; 4]> = BTreeMap::new();
        let deleted = format!(
            "WITH g AS (DELETE FROM holds WHERE item_id = ANY($1) \
             RETURNING ended, queue, holder, how, started) \
             SELECT {DAY_OF_ENDED}, queue, holder, how, ended - started FROM g"
        );
        for r in c.query(&deleted, &[&items])? {
            touched.insert((r.get(0), r.get(1), r.get(2)));
            let how: &str = r.get(3);
            let t = gone.entry(r.get(1)).or_default();
            t[0] += 1;
            t[1] += i64::from(how == "completed");
            t[2] += i64::from(how == "failed");
            t[3] += r.get::<_, i64>(4);
        }
        let inserted = format!(
            "INSERT INTO holds ({HOLDS_COLS}) SELECT {HOLDS_COLS} FROM ({}) x \
             RETURNING {DAY_OF_ENDED}, queue, holder",
            expected_of_items()
        );
        for r in c.query(&inserted, &[&items])? {
            touched.insert((r.get(0), r.get(1), r.get(2)));
        }
        lower_totals(c, &gone)?;
    }
    if !queues.is_empty() {
        c.execute("DELETE FROM queue_totals WHERE queue = ANY($1)", &[&queues])?;
        c.execute(
            "INSERT INTO queue_totals (queue, shard, holds, completed, failed, held_ms) \
             SELECT queue, 0, count(*), count(*) FILTER (WHERE how = 'completed'), \
             count(*) FILTER (WHERE how = 'failed'), sum(ended - started)::bigint \
             FROM holds WHERE queue = ANY($1) GROUP BY queue",
            &[&queues],
        )?;
    }
    rebuild_cells(c, &touched)
}

/// Takes the deleted holds' share out of their queues' totals (the triggers of the holds
/// inserted in their place added theirs); a queue left with nothing has no rows, as the
/// trigger would have left it.
fn lower_totals(c: &mut Conn, gone: &BTreeMap<String, [i64; 4]>) -> TxResult<()> {
    if gone.is_empty() {
        return Ok(());
    }
    let q: Vec<&str> = gone.keys().map(String::as_str).collect();
    let col = |k: usize| -> Vec<i64> { gone.values().map(|t| -t[k]).collect() };
    c.execute(
        "INSERT INTO queue_totals (queue, shard, holds, completed, failed, held_ms) \
         SELECT q, 0, h, c, f, ms FROM unnest($1::text[], $2::bigint[], $3::bigint[], \
         $4::bigint[], $5::bigint[]) k(q, h, c, f, ms) \
         ON CONFLICT (queue, shard) DO UPDATE SET holds = queue_totals.holds + excluded.holds, \
         completed = queue_totals.completed + excluded.completed, \
         failed = queue_totals.failed + excluded.failed, \
         held_ms = queue_totals.held_ms + excluded.held_ms",
        &[&q, &col(0), &col(1), &col(2), &col(3)],
    )?;
    c.execute(
        "DELETE FROM queue_totals WHERE queue IN (SELECT queue FROM queue_totals \
         WHERE queue = ANY($1) GROUP BY queue HAVING sum(holds) = 0 \
         AND sum(completed) = 0 AND sum(failed) = 0 AND sum(held_ms) = 0)",
        &[&q],
    )?;
    Ok(())
}

/// Rebuilds the day-summary cells `cells` from the holds, as the trigger would have built
/// them (a cell's finishes in rows of [`FINISHES_PER_CHUNK`] holds). Each cell's holds are
/// read by a range of the holds' primary key (`OFFSET 0` keeps the planner from merging
/// the cells with every hold by queue and holder instead: 4.5 s for 300 cells of a
/// 30,000-hold history, 0.16 s this way).
fn rebuild_cells(c: &mut Conn, cells: &BTreeSet<Cell>) -> TxResult<()> {
    if cells.is_empty() {
        return Ok(());
    }
    let d: Vec<i64> = cells.iter().map(|k| k.0).collect();
    let q: Vec<&str> = cells.iter().map(|k| k.1.as_str()).collect();
    let h: Vec<&str> = cells.iter().map(|k| k.2.as_str()).collect();
    let keyed = "unnest($1::bigint[], $2::text[], $3::text[]) k(day, queue, holder)";
    c.execute(
        &format!(
            "DELETE FROM figure_days d USING {keyed} \
             WHERE d.day = k.day AND d.queue = k.queue AND d.holder = k.holder"
        ),
        &[&d, &q, &h],
    )?;
    let count = |kinds: &str| format!("count(*) FILTER (WHERE how IN ({kinds}))");
    c.execute(
        &format!(
            "INSERT INTO figure_days (day, queue, holder, chunk, holds, completed, failed, \
             skipped, released, lost, held_ms, finishes) \
             SELECT day, queue, holder, chunk, count(*), {}, {}, {}, {}, {}, \
             sum(ended - started)::bigint, \
             coalesce(string_agg(({FINISH_ENTRY}) || ';', '' ORDER BY ended, event_id), '') \
             FROM (SELECT k.day, h.*, (row_number() OVER (PARTITION BY k.day, h.queue, \
             h.holder ORDER BY h.ended, h.event_id) - 1) / {FINISHES_PER_CHUNK} AS chunk \
             FROM {keyed} CROSS JOIN LATERAL (SELECT * FROM holds h \
             WHERE h.ended >= k.day AND h.ended < k.day + 86400000 \
             AND h.queue = k.queue AND h.holder = k.holder OFFSET 0) h) x \
             GROUP BY day, queue, holder, chunk",
            count("'completed'"),
            count("'failed'"),
            count("'skipped'"),
            count("'released'"),
            count(&kinds_sql(crate::domain::figures::LOST)),
        ),
        &[&d, &q, &h],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The filter lands where the events are read, before their per-item windows.
    #[test]
    fn the_expected_holds_of_some_items_read_only_their_events() {
        let of = expected_of_items();
        assert_ne!(of, EXPECTED_HOLDS);
        assert!(of.contains("FROM events WHERE item_id = ANY($1) WINDOW w AS"));
    }
}
