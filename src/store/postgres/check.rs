//! `caseload check` on PostgreSQL: the one pass over the items and their history
//! ([`crate::store::check::pass`]), the kept counts (by state, and the due counts per hour
//! of `caseload metrics`), the day summary and the schema version
//! (the server itself keeps the pages and the JSON sound). The pass reads four portals of
//! one read-only snapshot side by side, a batch at a time, so the client holds only a
//! batch of each; meanwhile, on a direct connection, a second connection in the same
//! snapshot (exported) runs the day summary's and the queues' totals' comparisons, which
//! are the server's work.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};

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

/// How to open a second connection to the same server and schema: the figures' two
/// comparisons run on it in the check's snapshot (exported), beside the pass.
pub(super) struct Beside {
    pub config: postgres::Config,
    pub shown: String,
    pub opts: super::open::PgOptions,
}

/// The check in one `REPEATABLE READ` transaction (with a pooled connection's settings).
/// Without `--quick`, on a direct connection, the day summary's and the queues' totals'
/// comparisons run on a second connection ([`Beside`]) in the same snapshot while this one
/// reads the pass; when that connection cannot be had (a full server) or is lost, they run
/// here after the pass. Through a pooler they always run here: a second transaction
/// waiting there for a server connection this one holds would never start.
pub(super) fn check(
    c: &mut Conn,
    how: &CheckRun<'_>,
    beside: Option<&Beside>,
) -> TxResult<Vec<String>> {
    let mut found = Findings::default();
    let pooled = c.pooled.clone();
    let beside = beside.filter(|_| pooled.is_none() && !how.quick);
    let mut tx = c
        .client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?;
    if let Some(settings) = &pooled {
        tx.batch_execute(settings)?;
    }
    // The pass's statements run as long as the history is long; and this transaction
    // waits, idle, for the comparisons on the connection beside it when they take longer.
    tx.batch_execute(
        "SET LOCAL statement_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0",
    )?;
    let queues: HashSet<String> = tx
        .query("SELECT name FROM queues", &[])?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let total: i64 = tx.query_one("SELECT count(*) FROM items", &[])?.get(0);
    // The snapshot the connection beside imports (not from a savepoint: the server
    // exports none from a subtransaction). A server that will not export one gets the
    // check again without the connection beside.
    let snapshot = match beside {
        Some(_) => match tx.query_one("SELECT pg_export_snapshot()", &[]) {
            Ok(r) => Some(r.get::<_, String>(0)),
            Err(e) => {
                tracing::debug!("check: no exported snapshot: {e}");
                drop(tx);
                return check(c, how, None);
            }
        },
        None => None,
    };
    let what = if how.quick {
        "the items"
    } else {
        "the items and their history"
    };
    let abandoned = AtomicBool::new(false);
    std::thread::scope(|scope| -> TxResult<()> {
        let (cancel_tx, cancel_rx) = std::sync::mpsc::channel();
        let side = match (beside, &snapshot) {
            (Some(b), Some(snap)) => {
                let abandoned = &abandoned;
                Some(scope.spawn(move || summaries_beside(b, snap, &cancel_tx, abandoned)))
            }
            _ => {
                drop(cancel_tx);
                None
            }
        };
        let tally = run_pass(
            &mut tx,
            how.quick,
            &queues,
            &mut found,
            &mut |done| (how.progress)(what, done, total.max(0) as u64),
            how.stop,
        )?;
        let stopped = how.stop.load(Ordering::Relaxed);
        if tally.is_err() || stopped {
            // Failed or stopped (Ctrl-C): the comparison beside is called off, not waited
            // for (its token comes once it has connected, or never).
            abandoned.store(true, Ordering::SeqCst);
            if let Ok(token) = cancel_rx.recv() {
                let _ = token.cancel_query(postgres::NoTls);
            }
        }
        let tally = tally.map_err(TxError::Store)?;
        if stopped {
            return Ok(());
        }
        after_pass(&mut tx, how, &tally, side, &mut found)
    })?;
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

/// The checks after the pass, in its snapshot: the kept counts, the due counts, the
/// figures' comparisons (from the connection beside, `side`, when it made them) and the
/// duplicate keys.
fn after_pass(
    tx: &mut Transaction<'_>,
    how: &CheckRun<'_>,
    tally: &pass::Tally,
    side: Option<std::thread::ScopedJoinHandle<'_, std::result::Result<Vec<String>, String>>>,
    found: &mut Findings,
) -> TxResult<()> {
    let mut kept = BTreeMap::new();
    for r in tx.query(
        "SELECT queue, state, sum(n)::bigint FROM item_counts GROUP BY queue, state",
        &[],
    )? {
        kept.insert((r.get(0), r.get(1)), r.get(2));
    }
    counts(&tally.counts, &kept, found);
    (how.progress)("the due counts", 0, 0);
    for r in tx.query(&due_hours_check_sql(), &[])? {
        found.push(due_hours_finding(&r.get::<_, String>(0)));
    }
    if !how.quick {
        (how.progress)("the figures summary", 0, 0);
        let lines = match side.map(|h| h.join()) {
            Some(Ok(Ok(lines))) => lines,
            Some(Ok(Err(e))) => {
                tracing::warn!("check: the comparison beside the pass failed ({e}); again here");
                summaries(tx)?
            }
            Some(Err(_)) | None => summaries(tx)?,
        };
        for line in lines {
            found.push(line);
        }
        (how.progress)("the duplicate keys", 0, 0);
        if let Err(e) = keys::check(&mut KeyRowsOf(tx), found) {
            found.push(format!("the duplicate keys could not be checked: {e}"));
        }
    }
    Ok(())
}

/// The day summary against the holds, and the queues' totals against their items: the
/// findings' lines, in that order.
fn summaries<C: postgres::GenericClient>(
    c: &mut C,
) -> std::result::Result<Vec<String>, postgres::Error> {
    let mut lines = Vec::new();
    for r in c.query(&figure_days_sql(SORTED_FINISHES, " COLLATE \"C\""), &[])? {
        let (day, queue, holder): (i64, String, String) = (r.get(0), r.get(1), r.get(2));
        lines.push(figure_day_finding(day, &queue, &holder));
    }
    for r in c.query(&queue_totals_sql(), &[])? {
        lines.push(queue_total_finding(&r.get::<_, String>(0)));
    }
    Ok(lines)
}

/// [`summaries`] on a direct connection of its own, in the snapshot `snap`; its cancel
/// token goes to `cancel` first, so a stopped check (`abandoned`) need not wait for it.
fn summaries_beside(
    b: &Beside,
    snap: &str,
    cancel: &std::sync::mpsc::Sender<postgres::CancelToken>,
    abandoned: &AtomicBool,
) -> std::result::Result<Vec<String>, String> {
    let mut client = match super::open::connect_once(&b.config, &b.shown, &b.opts) {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => return Err(e.to_string()),
        Err((_, why)) => return Err(why),
    };
    let _ = cancel.send(client.cancel_token());
    if abandoned.load(Ordering::SeqCst) {
        return Err("called off".into());
    }
    let mut tx = client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .map_err(|e| e.to_string())?;
    // The snapshot first: nothing may run before it in the transaction.
    let set = format!("SET TRANSACTION SNAPSHOT '{}'", snap.replace('\'', "''"));
    let mut run = || -> std::result::Result<Vec<String>, postgres::Error> {
        tx.batch_execute(&set)?;
        tx.batch_execute("SET LOCAL statement_timeout = 0")?;
        summaries(&mut tx)
    };
    let lines = run().map_err(|e| e.to_string())?;
    tx.commit().map_err(|e| e.to_string())?;
    Ok(lines)
}

const ITEMS: &str = "SELECT id, queue, state, lock_user IS NOT NULL, lock_time IS NOT NULL, \
     lock_token, created_at, due_at, lock_expires_at IS NOT NULL FROM items ORDER BY id";
const EVENTS: &str = "SELECT id, item_id, at, CASE WHEN kind IN ('locked', 'taken_over', 'undone') \
     THEN actor END, kind, CASE WHEN kind IN ('noted', 'reassigned', 'woke') THEN detail::text END \
     FROM events ORDER BY item_id, id";
const HOLDS: &str = "SELECT event_id, ended, item_id, queue, holder, started, how, handle_ms, \
     own_ms, wait_ms, cycle_ms, late_ms FROM holds ORDER BY item_id, event_id";
const COMMENTS: &str = "SELECT id, item_id, at FROM comments ORDER BY item_id, id";

/// Batches read ahead of the pass, per row set.
const AHEAD: usize = 2;

/// One batch of one of the four row sets, decoded.
enum Batch {
    Items(VecDeque<ItemRow>),
    Events(VecDeque<EventRow>),
    Holds(VecDeque<KeptHold>),
    Comments(VecDeque<CommentRow>),
}

/// What the reader ([`read_ahead`]) and the pass share.
#[derive(Default)]
struct Queued {
    batches: [VecDeque<Batch>; 4],
    /// The set has no more rows (its last batch is queued).
    ended: [bool; 4],
    failed: Option<StoreError>,
    /// The pass is over (finished, stopped or failed): the reader stops.
    over: bool,
    /// The reader has returned (or unwound): nothing more will be queued.
    gone: bool,
}

struct Shared {
    queued: Mutex<Queued>,
    changed: Condvar,
}

/// Reads the four row sets' portals on `tx` a batch at a time, decoded, up to [`AHEAD`]
/// batches ahead of the pass, so the server's reading and sending and the client's
/// decoding go on while the pass works; until `shared` says the pass is over.
fn read_ahead(tx: &mut Transaction<'_>, portals: &[Option<Portal>; 4], shared: &Shared) {
    /// Tells the pass the reader is gone, however it returns (a panic included), so that
    /// the pass never waits for a batch that will not come.
    struct Gone<'s>(&'s Shared);
    impl Drop for Gone<'_> {
        fn drop(&mut self) {
            let mut queued = self.0.queued.lock().unwrap_or_else(|e| e.into_inner());
            queued.gone = true;
            self.0.changed.notify_all();
        }
    }
    let _gone = Gone(shared);
    let mut queued = shared.queued.lock().unwrap_or_else(|e| e.into_inner());
    for (k, p) in portals.iter().enumerate() {
        queued.ended[k] = p.is_none();
    }
    loop {
        // The set with the fewest batches waiting that has room and more rows.
        let next = (0..4)
            .filter(|&k| !queued.ended[k] && queued.batches[k].len() < AHEAD)
            .min_by_key(|&k| queued.batches[k].len());
        let k = match next {
            _ if queued.over => return,
            Some(k) => k,
            None if queued.ended.iter().all(|e| *e) => return,
            None => {
                queued = shared
                    .changed
                    .wait(queued)
                    .unwrap_or_else(|e| e.into_inner());
                continue;
            }
        };
        drop(queued);
        let portal = portals[k]
            .as_ref()
            .expect("a set that has not ended has its portal");
        let batch = tx
            .query_portal(portal, BATCH)
            .map_err(|e| super::open::map_err(&e))
            .and_then(|rows| decode(k, &rows));
        queued = shared.queued.lock().unwrap_or_else(|e| e.into_inner());
        match batch {
            Ok(None) => queued.ended[k] = true,
            Ok(Some(b)) => queued.batches[k].push_back(b),
            Err(e) => {
                queued.failed = Some(e);
                queued.ended = [true; 4];
            }
        }
        shared.changed.notify_all();
    }
}

/// Rows of set `k` decoded; `None` for none (the set has ended).
fn decode(k: usize, rows: &[Row]) -> Result<Option<Batch>> {
    if rows.is_empty() {
        return Ok(None);
    }
    fn all<T>(rows: &[Row], f: fn(&Row) -> Result<T>) -> Result<VecDeque<T>> {
        rows.iter().map(f).collect()
    }
    Ok(Some(match k {
        0 => Batch::Items(all(rows, item_row)?),
        1 => Batch::Events(all(rows, event_row)?),
        2 => Batch::Holds(all(rows, hold_row)?),
        _ => Batch::Comments(all(rows, comment_row)?),
    }))
}

/// The pass's side of [`read_ahead`]: the batch in use of each set.
struct PgRows<'s> {
    shared: &'s Shared,
    items: VecDeque<ItemRow>,
    events: VecDeque<EventRow>,
    holds: VecDeque<KeptHold>,
    comments: VecDeque<CommentRow>,
}

impl PgRows<'_> {
    /// The next batch of set `k`, waiting for the reader; `None` once the set has ended.
    fn batch(&mut self, k: usize) -> Result<Option<Batch>> {
        let mut queued = self.shared.queued.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(e) = queued.failed.take() {
                return Err(e);
            }
            if let Some(b) = queued.batches[k].pop_front() {
                self.shared.changed.notify_all();
                return Ok(Some(b));
            }
            if queued.ended[k] {
                return Ok(None);
            }
            if queued.gone {
                return Err(StoreError::Database(
                    "check: the reader of the history stopped".into(),
                ));
            }
            queued = self
                .shared
                .changed
                .wait(queued)
                .unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Tells the reader the pass is over, however it ends.
impl Drop for PgRows<'_> {
    fn drop(&mut self) {
        let mut queued = self.shared.queued.lock().unwrap_or_else(|e| e.into_inner());
        queued.over = true;
        self.shared.changed.notify_all();
    }
}

/// `$field`'s next row, taking the next batch (of variant `$v`, set `$k`) when it is used
/// up.
macro_rules! next_of {
    ($self:ident, $field:ident, $k:expr, $v:ident) => {{
        loop {
            if let Some(r) = $self.$field.pop_front() {
                return Ok(Some(r));
            }
            match $self.batch($k)? {
                Some(Batch::$v(rows)) => $self.$field = rows,
                Some(_) => unreachable!("each set's batches are of its own rows"),
                None => return Ok(None),
            }
        }
    }};
}

impl Source for PgRows<'_> {
    fn item(&mut self) -> Result<Option<ItemRow>> {
        next_of!(self, items, 0, Items)
    }

    fn event(&mut self) -> Result<Option<EventRow>> {
        next_of!(self, events, 1, Events)
    }

    fn hold(&mut self) -> Result<Option<KeptHold>> {
        next_of!(self, holds, 2, Holds)
    }

    fn comment(&mut self) -> Result<Option<CommentRow>> {
        next_of!(self, comments, 3, Comments)
    }
}

/// The pass over the four row sets, read ahead on another thread; the portals are bound
/// here (only the items' for `quick`).
fn run_pass(
    tx: &mut Transaction<'_>,
    quick: bool,
    queues: &HashSet<String>,
    found: &mut Findings,
    progress: &mut dyn FnMut(u64),
    stop: &AtomicBool,
) -> TxResult<Result<pass::Tally>> {
    let mut portals: [Option<Portal>; 4] = Default::default();
    for (k, sql) in [ITEMS, EVENTS, HOLDS, COMMENTS].into_iter().enumerate() {
        if k == 0 || !quick {
            portals[k] = Some(tx.bind(sql, &[])?);
        }
    }
    let shared = Shared {
        queued: Mutex::default(),
        changed: Condvar::new(),
    };
    Ok(std::thread::scope(|s| {
        let (portals, shared_ref) = (&portals, &shared);
        s.spawn(move || read_ahead(tx, portals, shared_ref));
        let mut rows = PgRows {
            shared: &shared,
            items: VecDeque::new(),
            events: VecDeque::new(),
            holds: VecDeque::new(),
            comments: VecDeque::new(),
        };
        pass::run(&mut rows, queues, found, progress, stop)
    }))
}

fn got<T>(r: std::result::Result<T, postgres::Error>) -> Result<T> {
    r.map_err(|e| StoreError::Database(format!("check: {e}")))
}

fn item_row(r: &Row) -> Result<ItemRow> {
    Ok(ItemRow {
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
    })
}

fn event_row(r: &Row) -> Result<EventRow> {
    let id: i64 = got(r.try_get(0))?;
    let item_id: i64 = got(r.try_get(1))?;
    let at: i64 = got(r.try_get(2))?;
    let actor: Option<String> = got(r.try_get(3))?;
    let kind: &str = got(r.try_get(4))?;
    let detail: Option<&str> = got(r.try_get(5))?;
    let event = EventKind::parse(kind).map(|kind| Event {
        id,
        item_id,
        at,
        actor: actor.unwrap_or_default(),
        os_user: String::new(),
        kind,
        detail: detail
            .and_then(|d| serde_json::from_str(d).ok())
            .unwrap_or(serde_json::Value::Null),
    });
    Ok(EventRow {
        item_id: Some(item_id),
        event,
        id,
        at,
        detail_json: true,
        bad_text: None,
    })
}

fn hold_row(r: &Row) -> Result<KeptHold> {
    Ok(KeptHold {
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
    })
}

fn comment_row(r: &Row) -> Result<CommentRow> {
    Ok(CommentRow {
        id: got(r.try_get(0))?,
        item_id: got(r.try_get(1))?,
        at: got(r.try_get(2))?,
    })
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
