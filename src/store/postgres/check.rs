//! `caseload check` on PostgreSQL: the one pass over the items and their history
//! ([`crate::store::check::pass`]), the kept counts (by state, and the due counts per hour
//! of `caseload metrics`), the day summary and the schema version
//! (the server itself keeps the pages and the JSON sound). The pass reads four portals of
//! one read-only snapshot side by side, a batch at a time, so the client holds only a
//! batch of each.

use std::collections::{BTreeMap, HashSet, VecDeque};

use postgres::{IsolationLevel, Portal, Row, Transaction};

use super::metrics::{due_hours_check_sql, due_hours_finding};
use super::migrate::{LATEST, schema_version};
use super::open::{Conn, TxError, TxResult};
use crate::domain::queue_fields::FieldDef;
use crate::domain::{Event, EventKind};
use crate::store::check::pass::{self, CommentRow, EventRow, ItemRow, KeptHold, Source};
use crate::store::check::{
    CheckRun, Findings, counts, figure_day_finding, figure_days_sql, keys, queue_total_finding,
    queue_totals_sql,
};
use crate::store::error::{Result, StoreError};

/// A stored `finishes` list (`{}`) as its entries sorted bytewise, for
/// [`crate::store::check::figure_days_sql`].
pub(super) const SORTED_FINISHES: &str = "(SELECT coalesce(string_agg(x, ';' ORDER BY x \
     COLLATE \"C\"), '') FROM unnest(string_to_array({}, ';')) AS x WHERE x <> '')";

/// Rows fetched from a portal at a time.
const BATCH: i32 = 5_000;

/// The check in one `REPEATABLE READ` transaction (with a pooled connection's settings).
pub(super) fn check(c: &mut Conn, how: &CheckRun<'_>) -> TxResult<Vec<String>> {
    let mut found = Findings::default();
    let pooled = c.pooled.clone();
    let mut tx = c
        .client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?;
    if let Some(settings) = &pooled {
        tx.batch_execute(settings)?;
    }
    // The pass's statements run as long as the history is long.
    tx.batch_execute("SET LOCAL statement_timeout = 0")?;
    let queues: HashSet<String> = tx
        .query("SELECT name FROM queues", &[])?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let total: i64 = tx.query_one("SELECT count(*) FROM items", &[])?.get(0);
    let what = if how.quick {
        "the items"
    } else {
        "the items and their history"
    };
    let tally = {
        let mut rows = PgRows::start(&mut tx, how.quick)?;
        pass::run(
            &mut rows,
            &queues,
            &mut found,
            &mut |done| (how.progress)(what, done, total.max(0) as u64),
            how.stop,
        )
        .map_err(TxError::Store)?
    };
    let mut kept = BTreeMap::new();
    for r in tx.query(
        "SELECT queue, state, sum(n)::bigint FROM item_counts GROUP BY queue, state",
        &[],
    )? {
        kept.insert((r.get(0), r.get(1)), r.get(2));
    }
    counts(&tally.counts, &kept, &mut found);
    (how.progress)("the due counts", 0, 0);
    for r in tx.query(&due_hours_check_sql(), &[])? {
        found.push(due_hours_finding(&r.get::<_, String>(0)));
    }
    if !how.quick {
        (how.progress)("the figures summary", 0, 0);
        for r in tx.query(&figure_days_sql(SORTED_FINISHES, " COLLATE \"C\""), &[])? {
            let (day, queue, holder): (i64, String, String) = (r.get(0), r.get(1), r.get(2));
            found.push(figure_day_finding(day, &queue, &holder));
        }
        (how.progress)("the queues' totals", 0, 0);
        for r in tx.query(&queue_totals_sql(), &[])? {
            found.push(queue_total_finding(&r.get::<_, String>(0)));
        }
        (how.progress)("the duplicate keys", 0, 0);
        if let Err(e) = keys::check(&mut KeyRowsOf(&mut tx), &mut found) {
            found.push(format!("the duplicate keys could not be checked: {e}"));
        }
    }
    tx.commit()?;
    match schema_version(c)? {
        Some(v) if v == LATEST => {}
        v => found.push(format!(
            "schema version is {}, expected {LATEST}",
            v.unwrap_or(0)
        )),
    }
    Ok(found.lines())
}

/// The four row sets of the pass, each a portal read a batch at a time.
struct PgRows<'t, 'c> {
    tx: &'t mut Transaction<'c>,
    portals: [Option<Portal>; 4],
    rows: [VecDeque<Row>; 4],
}

const ITEMS: &str = "SELECT id, queue, state, lock_user IS NOT NULL, lock_time IS NOT NULL, \
     lock_token, created_at, due_at, lock_expires_at IS NOT NULL FROM items ORDER BY id";
const EVENTS: &str = "SELECT id, item_id, at, CASE WHEN kind IN ('locked', 'taken_over', 'undone') \
     THEN actor END, kind, CASE WHEN kind IN ('noted', 'reassigned', 'woke') THEN detail::text END \
     FROM events ORDER BY item_id, id";
const HOLDS: &str = "SELECT event_id, ended, item_id, queue, holder, started, how, handle_ms, \
     own_ms, wait_ms, cycle_ms, late_ms FROM holds ORDER BY item_id, event_id";
const COMMENTS: &str = "SELECT id, item_id, at FROM comments ORDER BY item_id, id";

impl<'t, 'c> PgRows<'t, 'c> {
    fn start(tx: &'t mut Transaction<'c>, quick: bool) -> TxResult<PgRows<'t, 'c>> {
        let mut portals: [Option<Portal>; 4] = Default::default();
        for (k, sql) in [ITEMS, EVENTS, HOLDS, COMMENTS].into_iter().enumerate() {
            if k == 0 || !quick {
                portals[k] = Some(tx.bind(sql, &[])?);
            }
        }
        Ok(PgRows {
            tx,
            portals,
            rows: Default::default(),
        })
    }

    /// The next row of set `k`, fetching its next batch when the last is used up.
    fn next(&mut self, k: usize) -> Result<Option<Row>> {
        if self.rows[k].is_empty() {
            let Some(portal) = &self.portals[k] else {
                return Ok(None);
            };
            let batch = self
                .tx
                .query_portal(portal, BATCH)
                .map_err(|e| super::open::map_err(&e))?;
            if batch.is_empty() {
                self.portals[k] = None;
            }
            self.rows[k].extend(batch);
        }
        Ok(self.rows[k].pop_front())
    }
}

fn got<T>(r: std::result::Result<T, postgres::Error>) -> Result<T> {
    r.map_err(|e| StoreError::Database(format!("check: {e}")))
}

impl Source for PgRows<'_, '_> {
    fn item(&mut self) -> Result<Option<ItemRow>> {
        let Some(r) = self.next(0)? else {
            return Ok(None);
        };
        Ok(Some(ItemRow {
            id: got(r.try_get(0))?,
            queue: got(r.try_get(1))?,
            state: got(r.try_get(2))?,
            has_lock_user: got(r.try_get(3))?,
            has_lock_time: got(r.try_get(4))?,
            lock_token: got(r.try_get(5))?,
            created_at: got(r.try_get(6))?,
            due_at: got(r.try_get(7))?,
            has_lock_expiry: got(r.try_get(8))?,
            params_json: true,
            unreadable: None,
        }))
    }

    fn event(&mut self) -> Result<Option<EventRow>> {
        let Some(r) = self.next(1)? else {
            return Ok(None);
        };
        let id: i64 = got(r.try_get(0))?;
        let item_id: i64 = got(r.try_get(1))?;
        let at: i64 = got(r.try_get(2))?;
        let actor: Option<String> = got(r.try_get(3))?;
        let kind: String = got(r.try_get(4))?;
        let detail: Option<String> = got(r.try_get(5))?;
        let event = EventKind::parse(&kind).map(|kind| Event {
            id,
            item_id,
            at,
            actor: actor.unwrap_or_default(),
            os_user: String::new(),
            kind,
            detail: detail
                .and_then(|d| serde_json::from_str(&d).ok())
                .unwrap_or(serde_json::Value::Null),
        });
        Ok(Some(EventRow {
            item_id: Some(item_id),
            event,
            id,
            at,
            detail_json: true,
            bad_text: None,
        }))
    }

    fn hold(&mut self) -> Result<Option<KeptHold>> {
        let Some(r) = self.next(2)? else {
            return Ok(None);
        };
        Ok(Some(KeptHold {
            event_id: got(r.try_get(0))?,
            ended: got(r.try_get(1))?,
            item_id: got(r.try_get(2))?,
            queue: got(r.try_get(3))?,
            holder: got(r.try_get(4))?,
            started: got(r.try_get(5))?,
            how: got(r.try_get(6))?,
            handle_ms: got(r.try_get(7))?,
            own_ms: got(r.try_get(8))?,
            wait_ms: got(r.try_get(9))?,
            cycle_ms: got(r.try_get(10))?,
            late_ms: got(r.try_get(11))?,
        }))
    }

    fn comment(&mut self) -> Result<Option<CommentRow>> {
        let Some(r) = self.next(3)? else {
            return Ok(None);
        };
        Ok(Some(CommentRow {
            id: got(r.try_get(0))?,
            item_id: got(r.try_get(1))?,
            at: got(r.try_get(2))?,
        }))
    }
}

/// The rows of the duplicate keys' check, in the check's snapshot.
struct KeyRowsOf<'t, 'c>(&'t mut Transaction<'c>);

impl keys::KeyRows for KeyRowsOf<'_, '_> {
    fn fields(&mut self) -> Result<Vec<(String, FieldDef)>> {
        let rows = got(self.0.query(
            "SELECT queue, name, spec::text FROM queue_fields ORDER BY queue, position, name",
            &[],
        ))?;
        rows.iter()
            .map(|r| crate::store::rows::field_from(&mut super::reads::PgCells::new(r)))
            .collect()
    }

    fn queues(&mut self) -> Result<Vec<String>> {
        let rows = got(self.0.query("SELECT name FROM queues ORDER BY name", &[]))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn page(&mut self, queue: &str, after: i64, limit: usize) -> Result<Vec<(i64, String)>> {
        let rows = got(self.0.query(
            "SELECT id, params::text FROM items WHERE queue = $1 AND id > $2 ORDER BY id LIMIT $3",
            &[&queue, &after, &(limit as i64)],
        ))?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    fn kept(&mut self, queue: &str, first: i64, last: i64) -> Result<Vec<(i64, String, String)>> {
        let rows = got(self.0.query(keys::KEPT, &[&queue, &first, &last]))?;
        Ok(rows
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect())
    }
}
