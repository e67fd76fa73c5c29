//! The store's own thread. The Session hands it one effect at a time; it runs the effect
//! against the Store (which lives here and nowhere else) and sends the results back as
//! messages, then pokes a pipe so the loop wakes at once. A call that waits for another
//! program's write lock waits here, never on the thread that reads keys and draws.

use std::io::{PipeReader, PipeWriter, Read as _, Write as _};
use std::os::fd::{AsRawFd as _, RawFd};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::Duration;

use crate::app::{
    self, Effect, Finish, LockCheck, Msg, RefreshRequest, Resume, Snapshot, SupervisorOp,
};
use crate::domain::{Millis, SeenLock};
use crate::store::{ListFilter, Reads, StateFilter, Store, StoreError};

/// The worker thread's name (the panic hook tells its panics from the loop's by it).
pub const WORKER_THREAD: &str = "caseload-store";

/// A clock both threads read: the loop for countdowns, the worker to measure how far the
/// store's clock (the server's, on PostgreSQL) is from it.
pub type UiClock = Arc<dyn Fn() -> Millis + Send + Sync>;

/// Search indexing while idle: rows per write transaction (about 10–20 ms of write lock
/// for 1 KiB items), the pause between batches while behind (the write lock stays free
/// most of the time for others), and how often an idle worker looks whether it is behind.
const INDEX_BATCH: usize = 200;
const INDEX_PAUSE: Duration = Duration::from_millis(50);
const INDEX_IDLE: Duration = Duration::from_secs(2);

/// Indexes one batch for search; how long to wait before the next look.
fn index_when_idle(store: &mut dyn Store) -> Duration {
    match catch_unwind(AssertUnwindSafe(|| store.index_search(INDEX_BATCH))) {
        Ok(Ok(0)) => INDEX_IDLE,
        Ok(Ok(_)) => INDEX_PAUSE,
        Ok(Err(e)) => {
            // Busy or read-only: searches scan what is not indexed; try again later.
            tracing::debug!("search indexing: {e}");
            INDEX_IDLE * 5
        }
        Err(_) => {
            tracing::error!("search indexing panicked");
            Duration::MAX
        }
    }
}

/// One effect's results.
pub(super) struct Reply {
    pub msgs: Vec<Msg>,
    /// The store's clock minus the UI clock, measured right after the call.
    pub offset: Option<i64>,
}

/// How a reply wakes the loop out of its wait on the terminal: one byte in a pipe,
/// written only when none is pending, so the pipe never fills even when nobody reads it
/// (the tests' scripted event sources never do).
pub(super) struct Wake {
    pending: AtomicBool,
    read: PipeReader,
    write: PipeWriter,
}

impl Wake {
    fn new() -> std::io::Result<Wake> {
        let (read, write) = std::io::pipe()?;
        Ok(Wake {
            pending: AtomicBool::new(false),
            read,
            write,
        })
    }

    fn notify(&self) {
        if !self.pending.swap(true, Ordering::SeqCst) {
            // A failed write only costs latency: the loop also wakes on its tick.
            let _ = (&self.write).write(&[1]);
        }
    }

    /// The descriptor that becomes readable when a reply is waiting.
    pub(super) fn fd(&self) -> RawFd {
        self.read.as_raw_fd()
    }

    /// Empties the pipe; call only when `fd` polled readable (the read then never blocks).
    pub(super) fn drain(&self) {
        self.pending.store(false, Ordering::SeqCst);
        let mut buf = [0u8; 64];
        let _ = (&self.read).read(&mut buf);
    }
}

/// The handle the Session keeps: a job channel in, a reply channel out.
pub(super) struct Worker {
    jobs: Sender<Effect>,
    replies: Receiver<Reply>,
    pub wake: Arc<Wake>,
}

/// Why no reply came.
pub(super) enum NoReply {
    /// Nothing yet.
    Empty,
    /// The worker thread is gone (it ended after a panic it could not catch).
    Gone,
}

impl Worker {
    /// Moves `store` onto a new thread.
    pub(super) fn start(mut store: Box<dyn Store>, clock: UiClock) -> std::io::Result<Worker> {
        let (jobs, job_rx) = mpsc::channel::<Effect>();
        let (reply_tx, replies) = mpsc::channel();
        let wake = Arc::new(Wake::new()?);
        let poke = Arc::clone(&wake);
        std::thread::Builder::new()
            .name(WORKER_THREAD.into())
            .spawn(move || {
                let mut idle = INDEX_PAUSE;
                loop {
                    let effect = match job_rx.recv_timeout(idle) {
                        Ok(effect) => effect,
                        Err(RecvTimeoutError::Timeout) => {
                            idle = index_when_idle(&mut *store);
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => break,
                    };
                    let copy = effect.clone();
                    let msgs = match catch_unwind(AssertUnwindSafe(|| run(&mut *store, effect))) {
                        Ok(msgs) => msgs,
                        Err(_) => {
                            tracing::error!("a store call panicked: {}", copy.describe());
                            copy.failed(StoreError::Database(
                                "internal error (see the log); nothing was changed by it".into(),
                            ))
                        }
                    };
                    let offset = store.now().ok().map(|t| t - clock());
                    if reply_tx.send(Reply { msgs, offset }).is_err() {
                        break;
                    }
                    poke.notify();
                }
            })?;
        Ok(Worker {
            jobs,
            replies,
            wake,
        })
    }

    /// Hands over one effect; false when the worker is gone.
    pub(super) fn send(&self, e: Effect) -> bool {
        self.jobs.send(e).is_ok()
    }

    pub(super) fn try_recv(&self) -> Result<Reply, NoReply> {
        self.replies.try_recv().map_err(|e| match e {
            TryRecvError::Empty => NoReply::Empty,
            TryRecvError::Disconnected => NoReply::Gone,
        })
    }

    pub(super) fn recv_timeout(&self, timeout: Duration) -> Result<Reply, NoReply> {
        self.replies.recv_timeout(timeout).map_err(|e| match e {
            RecvTimeoutError::Timeout => NoReply::Empty,
            RecvTimeoutError::Disconnected => NoReply::Gone,
        })
    }
}

/// Runs one effect against the store; its results come back as messages.
fn run(st: &mut dyn Store, e: Effect) -> Vec<Msg> {
    match e {
        Effect::Resume => resume(st),
        Effect::Reacquire(ids) => vec![Msg::Reacquired(
            ids.into_iter().map(|id| (id, reacquire(st, id))).collect(),
        )],
        Effect::CheckMarker => match st.change_marker() {
            Ok(m) => vec![Msg::Marker(m)],
            Err(e) => vec![Msg::Refreshed(Box::new(Snapshot {
                error: Some(e),
                ..Snapshot::default()
            }))],
        },
        Effect::Refresh(req) => vec![Msg::Refreshed(Box::new(refresh(st, req)))],
        e @ (Effect::TakeNext(_)
        | Effect::Take(_)
        | Effect::TakeReview(_)
        | Effect::Open(_)
        | Effect::Undo(_)) => take(st, e),
        Effect::Renew { id, token } => vec![Msg::Renewed {
            id,
            result: st.renew(id, token),
        }],
        Effect::SaveNotes { id, token, text } => {
            let result = st.save_notes(id, token, &text);
            vec![Msg::NotesSaved { id, text, result }]
        }
        Effect::Finish {
            id,
            token,
            what,
            notes,
        } => finish_with_notes(st, id, token, what, notes),
        Effect::Comment { id, text } => vec![Msg::Commented {
            id,
            result: st.comment(id, &text).map(|_| ()),
        }],
        Effect::AddComment { id, text } => vec![Msg::CommentAdded {
            id,
            result: st.comment(id, &text).map(|_| ()),
        }],
        Effect::Supervise(op) => {
            let result = supervise(st, &op);
            vec![Msg::Supervised { op, result }]
        }
        Effect::CollectLocks(filter) => {
            let result = st.list(&app::locks_filter(&filter)).map(|items| {
                items
                    .into_iter()
                    .filter_map(|i| Some((SeenLock::of(&i)?, i.lock_user?)))
                    .collect()
            });
            vec![Msg::LocksCollected { filter, result }]
        }
        Effect::WriteField { id, token, write } => {
            let result = write_field(st, id, token, &write);
            vec![Msg::FieldWritten { id, write, result }]
        }
        Effect::Activity { user, since } => {
            let result = st.events_by(&user, since);
            vec![Msg::Activity {
                user,
                since,
                result,
            }]
        }
        e @ (Effect::Similar(_) | Effect::Merge { .. } | Effect::NotSame { .. }) => {
            duplicates(st, e)
        }
    }
}

/// Takes back one of the user's own locks that expired unclaimed: a review lock as the
/// reviewer's take does (it renews the reviewer's own lock), any other as a take.
fn reacquire(st: &mut dyn Store, id: i64) -> crate::store::Result<crate::domain::Item> {
    match st.item(id)?.state {
        crate::domain::ItemState::Review => st.take_review(None, Some(id)),
        _ => st.take(id),
    }
}

/// A take (next, by id, for review, an undo) or an open: the item and its history, then
/// its comment thread.
fn take(st: &mut dyn Store, e: Effect) -> Vec<Msg> {
    let msg = match e {
        Effect::TakeNext(opts) => opened(st, true, |s| s.take_next(&opts)),
        Effect::Take(id) => opened(st, true, |s| s.take(id)),
        Effect::TakeReview(id) => opened(st, true, |s| s.take_review(None, id)),
        Effect::Undo(id) => opened(st, true, |s| s.undo(id)),
        Effect::Open(id) => opened(st, false, |s| s.item(id)),
        _ => return vec![],
    };
    with_thread(st, msg)
}

/// The "Possibly the same" box's read and writes (issue 27).
fn duplicates(st: &mut dyn Store, e: Effect) -> Vec<Msg> {
    match e {
        Effect::Similar(id) => {
            let limit = crate::domain::duplicates::DEFAULT_LIMIT;
            let result = crate::store::similar::similar(st, id, limit).map(|f| f.candidates);
            vec![Msg::Similar { id, result }]
        }
        Effect::Merge {
            id,
            into,
            token,
            reason,
        } => {
            let result = st.merge(id, into, token, reason.as_deref()).map(|_| ());
            vec![Msg::Merged { id, into, result }]
        }
        Effect::NotSame { id, other } => {
            let result = st.not_duplicate(id, other);
            vec![Msg::NotSame { id, other, result }]
        }
        _ => vec![],
    }
}

/// A holder's write to a field (one fenced write), then the item and its history as they
/// are now.
fn write_field(
    st: &mut dyn Store,
    id: i64,
    token: i64,
    write: &app::FieldWrite,
) -> crate::store::Result<(crate::domain::Item, Vec<crate::domain::Event>)> {
    match write {
        app::FieldWrite::Value { field, typed } => {
            st.set_fields(id, token, &[(field.clone(), typed.clone())])?;
        }
        app::FieldWrite::Tick { field, line, state } => {
            st.tick(id, token, field, line, state)?;
        }
    }
    let item = st.item(id)?;
    let history = st.history(id)?;
    Ok((item, history))
}

/// What the TUI needs at startup: queues, role, own locks, locks lost since last time.
fn resume(st: &mut dyn Store) -> Vec<Msg> {
    let me = st.actor().name.clone();
    let mut r = Resume::default();
    let result = (|| -> crate::store::Result<()> {
        r.last_seen = st.touch_last_seen()?;
        r.queues = st.queues()?;
        r.role = Some(st.role(&me)?);
        r.own = st.list(&ListFilter {
            state: StateFilter::Locked,
            holder: Some(me.clone()),
            limit: 1000,
            ..ListFilter::default()
        })?;
        if let Some(since) = r.last_seen {
            r.lost = st.lost_locks(&me, since)?;
        }
        Ok(())
    })();
    let mut out = vec![Msg::Resumed(Box::new(r))];
    if let Ok(users) = st.users() {
        out.push(Msg::Users(users.into_iter().map(|u| u.name).collect()));
    }
    if let Ok(texts) = st.texts(None) {
        out.push(Msg::Texts(texts));
    }
    if let Err(e) = result {
        out.push(Msg::Refreshed(Box::new(Snapshot {
            error: Some(e),
            ..Snapshot::default()
        })));
    }
    out
}

/// Saves the notes typed (if any) first, then finishes the item; a failed save stops
/// there, so nothing typed is lost.
fn finish_with_notes(
    st: &mut dyn Store,
    id: i64,
    token: i64,
    what: Finish,
    notes: Option<String>,
) -> Vec<Msg> {
    let mut out = Vec::new();
    if let Some(text) = notes {
        let result = st.save_notes(id, token, &text);
        let failed = result.is_err();
        out.push(Msg::NotesSaved {
            id,
            text,
            result: result.clone(),
        });
        if let (true, Err(e)) = (failed, result) {
            out.push(Msg::Finished {
                id,
                what,
                result: Err(e),
            });
            return out;
        }
    }
    let (result, next) = finish(st, id, token, &what);
    out.push(Msg::Finished { id, what, result });
    out.extend(next);
    out
}

/// Runs a supervisor's change; `Ok(n)` is how many items changed. Unlock is fenced by the
/// lock the supervisor saw (token and lock time), reassign by its token: a lock that
/// changed since (renewed, completed, released, taken over) is left alone rather than a
/// holder at work, or someone else's newer lock, removed.
fn supervise(st: &mut dyn Store, op: &SupervisorOp) -> crate::store::Result<usize> {
    match op {
        SupervisorOp::Unlock { seen, reason } => {
            st.unlock(seen.id, Some(*seen), reason).map(|()| 1)
        }
        SupervisorOp::Reassign {
            id,
            token,
            to,
            reason,
        } => st.reassign(*id, Some(*token), to, reason).map(|_| 1),
        SupervisorOp::UnlockMany { locks, reason } => st.unlock_many(locks, reason),
        SupervisorOp::Requeue { id } => st.requeue(*id).map(|()| 1),
        SupervisorOp::Unpark { id } => st.wake(*id).map(|_| 1),
        SupervisorOp::Cancel { id, reason } => st.cancel(*id, reason).map(|()| 1),
        SupervisorOp::SetQueue { name, update } => st.set_queue(name, update, false).map(|_| 1),
        SupervisorOp::Assign {
            id,
            token,
            to,
            reason,
        } => st.assign(*id, *token, to, reason).map(|_| 1),
        SupervisorOp::Edit { id, edit } => st.edit(*id, edit).map(|_| 1),
        SupervisorOp::DefineField {
            queue,
            name,
            change,
        } => st.define_field(queue, name, change).map(|_| 1),
        SupervisorOp::DeleteField { queue, name } => st.delete_field(queue, name).map(|()| 1),
    }
}

/// Runs a finish; the message that follows its answer, if any (the next item taken, or
/// why there was none).
fn finish(
    st: &mut dyn Store,
    id: i64,
    token: i64,
    what: &Finish,
) -> (crate::store::Result<()>, Option<Msg>) {
    let result = match what {
        Finish::Complete(r) => st.complete_said(id, token, r.said(), None),
        Finish::CompleteAnyway { result, reason } => {
            st.complete_said(id, token, result.said(), Some(reason))
        }
        Finish::CompleteNext(r, opts) => {
            return match st.complete_and_next_said(id, token, r.said(), None, opts) {
                Ok(done) => {
                    let next = match done.next {
                        Ok(item) => opened(st, true, |_| Ok(item)),
                        Err(why) => Msg::NothingNext { after: id, why },
                    };
                    (Ok(()), Some(next))
                }
                Err(e) => (Err(e), None),
            };
        }
        Finish::Fail(reason) => st.fail_said(id, token, reason.said()),
        Finish::Release(reason) => st.release_said(id, token, reason.said()),
        Finish::Skip(_, reason) => st.skip_said(id, token, reason.said()),
        Finish::Park { until, reason } => st.park(id, token, *until, reason),
        Finish::Accept(comment) => st
            .accept(id, token, comment.as_deref())
            .map(|_| crate::store::Applied::Now),
        Finish::Reject(reason) => st
            .reject_said(id, token, reason.said())
            .map(|_| crate::store::Applied::Now),
    }
    .map(|_applied| ());
    let next = match (what, &result) {
        (Finish::Skip(opts, _), Ok(())) => Some(opened(st, true, |s| s.take_next(opts))),
        _ => None,
    };
    (result, next)
}

fn opened(
    st: &mut dyn Store,
    taken: bool,
    f: impl FnOnce(&mut dyn Store) -> crate::store::Result<crate::domain::Item>,
) -> Msg {
    let result = f(st).and_then(|item| {
        let history = st.history(item.id)?;
        Ok((item, history))
    });
    Msg::Opened { taken, result }
}

/// An opened item's message, then its comment thread.
fn with_thread(st: &mut dyn Store, opened: Msg) -> Vec<Msg> {
    let id = match &opened {
        Msg::Opened {
            result: Ok((item, _)),
            ..
        } => Some(item.id),
        _ => None,
    };
    let mut out = vec![opened];
    if let Some(id) = id {
        out.push(Msg::Thread {
            id,
            result: st.comments(id),
        });
    }
    out
}

/// Every lock `me` holds now, and for those the screen does not track yet, the event
/// that gave each (so the user is told who gave it).
fn own_locks(
    st: &mut dyn Reads,
    me: &str,
    tracked: &[(i64, i64)],
    snap: &mut Snapshot,
) -> crate::store::Result<()> {
    let own = st.list(&ListFilter {
        state: StateFilter::Locked,
        holder: Some(me.to_string()),
        limit: 1000,
        ..ListFilter::default()
    })?;
    for item in own
        .iter()
        .filter(|i| tracked.iter().all(|(id, _)| *id != i.id))
    {
        let history = st.history(item.id)?;
        if let Some(e) = history
            .into_iter()
            .rev()
            .find(|e| e.kind.is_in(crate::domain::EventKind::TAKES_LOCK))
        {
            snap.given.push(e);
        }
    }
    snap.own = Some(own);
    snap.parked = Some(st.list(&ListFilter {
        state: StateFilter::Parked,
        holder: Some(me.to_string()),
        limit: 100,
        ..ListFilter::default()
    })?);
    Ok(())
}

/// One refresh: every read from one snapshot of the database (on SQLite one read
/// transaction, on PostgreSQL one `REPEATABLE READ` one), so that a count never
/// disagrees with its rows nor a lock check with the list beside it.
fn refresh(st: &mut dyn Store, req: RefreshRequest) -> Snapshot {
    let mut snap = Snapshot::default();
    let result = st.snapshot(&mut |r| {
        // Begun afresh should the snapshot be tried again (a lost connection).
        snap = Snapshot {
            filter: req.filter.clone(),
            ..Snapshot::default()
        };
        read_screen(r, &req, &mut snap)
    });
    match result {
        Err(e) => {
            snap.view = None;
            snap.error = Some(e);
        }
        Ok(()) => snap.read_only = st.read_only().map(|e| e.to_string()),
    }
    snap
}

/// What a refresh reads (see [`refresh`]).
fn read_screen(
    st: &mut dyn Reads,
    req: &RefreshRequest,
    snap: &mut Snapshot,
) -> crate::store::Result<()> {
    let me = st.actor().name.clone();
    snap.marker = Some(st.change_marker()?);
    if req.role {
        // Until the role is known the screen shows why, not a staff screen.
        snap.role = Some(st.role(&me)?);
    }
    snap.queues = st.queues()?;
    snap.slas = Some(st.slas()?);
    snap.texts = Some(st.texts(None)?);
    snap.fields = Some(st.all_fields()?);
    let n = st.takeable(req.takeable.as_deref(), app::notify::COUNT_CAP)?;
    snap.takeable = Some((req.takeable.clone(), n));
    if let Some(f) = &req.list {
        snap.rows = st.list(f)?;
        snap.total = st.count(f)?;
        snap.offset = f.offset;
        snap.view = Some(req.view);
    }
    if req.stats {
        snap.stats = Some(st.stats()?);
        if let Some(slas) = snap.slas.as_deref().filter(|s| !s.is_empty()) {
            let now = st.now()?;
            let today = crate::domain::time::display_zone().start_of_day(now);
            let items = st.sla_items(today)?;
            snap.sla_watch = Some(crate::domain::sla::watch(slas, &items, now, today));
        }
    }
    own_locks(st, &me, &req.checks, snap)?;
    if let Some(k) = req.figures {
        let period = k.period(st.now()?, crate::domain::time::display_zone());
        if period.since < period.until {
            let q = crate::store::ReportQuery {
                period,
                queue: None,
                rows_only: false,
            };
            snap.figures = Some((k, st.report(&q)?));
            let records = st.completed_records(&q)?;
            let defined: Vec<(String, String)> = (st.all_fields()?.into_iter())
                .map(|(queue, f)| (queue, f.name))
                .collect();
            snap.corrections = Some((
                k,
                app::Corrections {
                    records: records.len(),
                    fields: crate::domain::corrections::by_field(&records, &defined),
                    sources: crate::domain::corrections::by_source(&records),
                },
            ));
        }
    }
    for (id, token) in &req.checks {
        let item = st.item(*id);
        let gone = item.as_ref().is_ok_and(|it| !it.held_with(&me, *token));
        let history = if gone { st.history(*id)? } else { vec![] };
        snap.checks.push(LockCheck {
            id: *id,
            item,
            history,
        });
    }
    Ok(())
}
