//! The thin loop: terminal events become messages, `app::update` decides, the effects it
//! returns run here against the Store, and `ui::render` draws. Generic over the ratatui
//! backend, so tests drive the very same loop on a `TestBackend`.
//!
//! Also the terminal's life cycle: raw mode, alternate screen and mouse capture are
//! undone by a guard on every way out (return, error, panic), and on SIGHUP/SIGTERM (a
//! dropped SSH session) the loop stops at once, restores what it can and leaves every lock
//! held so the user can resume.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow};
use ratatui::backend::Backend;
use ratatui::crossterm::event::{self, Event};
use ratatui::{Terminal, crossterm};

use crate::app::{
    self, Effect, Finish, LockCheck, Msg, RefreshRequest, Resume, Snapshot, State, SupervisorOp,
    TICK_MS, View,
};
use crate::store::{ListFilter, StateFilter, Store};

/// One user's TUI over one store: the state and the effect runner.
pub struct Session<'s> {
    pub state: State,
    store: &'s mut dyn Store,
}

impl<'s> Session<'s> {
    /// Starts a session on a screen of `width` x `height`: resumes the user's own work
    /// and loads the first window.
    pub fn start(store: &'s mut dyn Store, width: u16, height: u16, color: bool) -> Self {
        let me = store.actor().name.clone();
        let now = store.now().unwrap_or(0);
        let mut s = Session {
            state: State::new(&me, now, width, height, color),
            store,
        };
        s.run_effects(vec![Effect::Resume]);
        s
    }

    /// Handles one terminal event, or a tick when `None`.
    pub fn handle(&mut self, ev: Option<Event>) {
        let now = self.store.now().unwrap_or(self.state.now);
        let msg = match ev {
            None => Msg::Tick { now },
            Some(Event::Key(key)) => Msg::Key { key, now },
            Some(Event::Mouse(mouse)) => Msg::Mouse { mouse, now },
            Some(Event::Paste(text)) => Msg::Paste { text, now },
            Some(Event::Resize(width, height)) => Msg::Resize { width, height },
            Some(_) => return,
        };
        self.dispatch(msg);
    }

    /// Feeds a message through `update`, running effects until none are left.
    pub fn dispatch(&mut self, msg: Msg) {
        let fx = app::update(&mut self.state, msg);
        self.run_effects(fx);
    }

    fn run_effects(&mut self, fx: Vec<Effect>) {
        let mut todo: VecDeque<Effect> = fx.into();
        // A bound on one key's chain of effects, so that a mistake in `update` shows as a
        // stale screen rather than a hung terminal.
        let mut budget = 100;
        while let Some(e) = todo.pop_front() {
            // Several refreshes queued by one key are one refresh: the latest.
            if matches!(e, Effect::Refresh(_))
                && todo.iter().any(|t| matches!(t, Effect::Refresh(_)))
            {
                continue;
            }
            for m in self.run(e) {
                todo.extend(app::update(&mut self.state, m));
            }
            budget -= 1;
            if budget == 0 {
                tracing::warn!("effect chain cut short");
                break;
            }
        }
    }

    /// Runs one effect against the store; its results come back as messages.
    fn run(&mut self, e: Effect) -> Vec<Msg> {
        let st = &mut *self.store;
        match e {
            Effect::Resume => {
                let me = st.actor().name.clone();
                let mut r = Resume::default();
                let result = (|| -> crate::store::Result<()> {
                    r.last_seen = st.touch_last_seen()?;
                    r.queues = st.queues()?;
                    r.role = st.role(&me).ok();
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
                if let Err(e) = result {
                    out.push(Msg::Refreshed(Box::new(Snapshot {
                        error: Some(e),
                        ..Snapshot::default()
                    })));
                }
                out
            }
            Effect::Reacquire(ids) => vec![Msg::Reacquired(
                ids.into_iter().map(|id| (id, st.take(id))).collect(),
            )],
            Effect::CheckMarker => match st.change_marker() {
                Ok(m) => vec![Msg::Marker(m)],
                Err(e) => vec![Msg::Refreshed(Box::new(Snapshot {
                    error: Some(e),
                    ..Snapshot::default()
                }))],
            },
            Effect::Refresh(req) => vec![Msg::Refreshed(Box::new(refresh(st, req)))],
            Effect::TakeNext(opts) => vec![opened(st, true, |s| s.take_next(&opts))],
            Effect::Take(id) => vec![opened(st, true, |s| s.take(id))],
            Effect::Open(id) => vec![opened(st, false, |s| s.item(id))],
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
            } => {
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
                let result = match &what {
                    Finish::Complete(r) => st.complete(id, token, r.as_deref()),
                    Finish::Fail(reason) => st.fail(id, token, reason),
                    Finish::Release => st.release(id, token),
                    Finish::Skip(_) => st.skip(id, token),
                }
                .map(|_applied| ());
                let next = match (&what, &result) {
                    (Finish::Skip(opts), Ok(())) => Some(opened(st, true, |s| s.take_next(opts))),
                    _ => None,
                };
                out.push(Msg::Finished { id, what, result });
                out.extend(next);
                out
            }
            Effect::Comment { id, text } => vec![Msg::Commented {
                id,
                result: st.comment(id, &text),
            }],
            Effect::Supervise(op) => {
                let result = supervise(st, &op);
                vec![Msg::Supervised { op, result }]
            }
            Effect::CollectLocks(filter) => {
                let result = st.list(&app::locks_filter(&filter)).map(|items| {
                    items
                        .into_iter()
                        .filter_map(|i| i.lock_user.map(|h| (i.id, i.lock_token, h)))
                        .collect()
                });
                vec![Msg::LocksCollected { filter, result }]
            }
            Effect::Activity { user, since } => {
                let result = st.events_by(&user, since);
                vec![Msg::Activity {
                    user,
                    since,
                    result,
                }]
            }
        }
    }
}

/// Runs a supervisor's change; `Ok(n)` is how many items changed. Unlock and reassign
/// are fenced by the lock token the supervisor saw: a lock that changed since (completed,
/// released, taken over) is left alone rather than someone else's newer lock removed.
fn supervise(st: &mut dyn Store, op: &SupervisorOp) -> crate::store::Result<usize> {
    match op {
        SupervisorOp::Unlock { id, token, reason } => {
            st.unlock(*id, Some(*token), reason).map(|()| 1)
        }
        SupervisorOp::Reassign {
            id,
            token,
            to,
            reason,
        } => st.reassign(*id, Some(*token), to, reason).map(|_| 1),
        SupervisorOp::UnlockMany { locks, reason } => st.unlock_many(locks, reason),
        SupervisorOp::Requeue { id } => st.requeue(*id).map(|()| 1),
        SupervisorOp::Cancel { id, reason } => st.cancel(*id, reason).map(|()| 1),
        SupervisorOp::SetQueue { name, update } => st.set_queue(name, update, false).map(|_| 1),
    }
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

fn refresh(st: &mut dyn Store, req: RefreshRequest) -> Snapshot {
    let mut snap = Snapshot::default();
    let me = st.actor().name.clone();
    let result = (|| -> crate::store::Result<()> {
        snap.marker = Some(st.change_marker()?);
        snap.queues = st.queues()?;
        if let Some(f) = &req.list {
            snap.rows = st.list(f)?;
            snap.total = st.count(f)?;
            if req.view == View::Locks {
                let ids: Vec<i64> = snap.rows.iter().map(|i| i.id).collect();
                snap.lock_since = st.lock_started(&ids)?;
            }
            snap.offset = f.offset;
            snap.view = Some(req.view);
        }
        if req.stats {
            snap.stats = Some(st.stats()?);
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
    })();
    if let Err(e) = result {
        snap.view = None;
        snap.error = Some(e);
    }
    snap
}

/// Where terminal events come from: the real terminal, or a script in tests.
pub trait EventSource {
    /// The next event, or `None` when `timeout` passes without one.
    fn next(&mut self, timeout: Duration) -> std::io::Result<Option<Event>>;
}

/// Events from the terminal via crossterm.
///
/// The wait happens here, on the terminal's file descriptor, not inside crossterm: when
/// the terminal goes away (a dropped SSH session, a killed tmux) its descriptor reports
/// hang-up and reads return end-of-file forever, and crossterm 0.29 would spin on that
/// at full CPU without ever returning. Seeing the hang-up here ends the loop instead.
pub struct TerminalEvents;

impl EventSource for TerminalEvents {
    fn next(&mut self, timeout: Duration) -> std::io::Result<Option<Event>> {
        // Events crossterm has already parsed come first.
        if event::poll(Duration::ZERO)? {
            return Ok(Some(event::read()?));
        }
        match wait_for_terminal(timeout)? {
            TerminalWait::Input => {
                if event::poll(Duration::ZERO)? {
                    Ok(Some(event::read()?))
                } else {
                    Ok(None)
                }
            }
            TerminalWait::Timeout => Ok(None),
            TerminalWait::HungUp => Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the terminal went away",
            )),
        }
    }
}

enum TerminalWait {
    Input,
    Timeout,
    HungUp,
}

/// Waits up to `timeout` for input on standard input (the terminal).
fn wait_for_terminal(timeout: Duration) -> std::io::Result<TerminalWait> {
    let mut fd = libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: one pollfd that lives on this stack frame for the whole call.
    let n = unsafe { libc::poll(&mut fd, 1, ms) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if n == 0 {
        return Ok(TerminalWait::Timeout);
    }
    if fd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
        return Ok(TerminalWait::HungUp);
    }
    Ok(TerminalWait::Input)
}

/// Draws the state.
pub fn draw<B: Backend>(terminal: &mut Terminal<B>, state: &State) -> anyhow::Result<()>
where
    B::Error: Send + Sync + 'static,
{
    terminal
        .draw(|f| crate::ui::render(state, f))
        .map(|_| ())
        .map_err(|e| anyhow!("drawing the screen: {e}"))
}

/// Runs the loop until the user quits or `stop` is set (a hang-up). Ticks every
/// [`TICK_MS`] while idle: countdowns move and other users' changes appear without a key.
pub fn run_loop<B: Backend>(
    terminal: &mut Terminal<B>,
    session: &mut Session<'_>,
    events: &mut dyn EventSource,
    stop: &AtomicBool,
) -> anyhow::Result<()>
where
    B::Error: Send + Sync + 'static,
{
    let tick = Duration::from_millis(TICK_MS);
    let mut last_tick = Instant::now();
    loop {
        if session.state.quit || stop.load(Ordering::SeqCst) {
            return Ok(());
        }
        draw(terminal, &session.state)?;
        let timeout = tick.saturating_sub(last_tick.elapsed());
        match events.next(timeout) {
            Ok(Some(ev)) => session.handle(Some(ev)),
            Ok(None) => {
                last_tick = Instant::now();
                session.handle(None);
            }
            // Interrupted by a signal: the stop flag says whether to go.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("reading the terminal"),
        }
        if last_tick.elapsed() >= tick {
            last_tick = Instant::now();
            session.handle(None);
        }
    }
}

static HANGUP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_hangup(_sig: libc::c_int) {
    HANGUP.store(true, Ordering::SeqCst);
}

/// After a hang-up the loop has two seconds to leave on its own (restoring what it can);
/// if it is stuck in a read of a dead terminal, the process ends anyway. Locks stay held
/// either way: nothing is released on the way out, so the user can resume.
fn start_hangup_watchdog() {
    std::thread::spawn(|| {
        loop {
            std::thread::sleep(Duration::from_millis(200));
            if HANGUP.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_secs(2));
                tracing::warn!("hang-up: the loop did not stop; exiting");
                // SAFETY: _exit ends the process at once; SQLite and PostgreSQL both
                // survive an abrupt end (an open transaction is rolled back).
                unsafe { libc::_exit(129) };
            }
        }
    });
}

fn install_signal_handlers() {
    let handler = on_hangup as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGHUP, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

/// Puts the terminal back: leaves the alternate screen, stops mouse capture, ends raw
/// mode, shows the cursor. Safe to call more than once; errors are ignored (after a
/// hang-up there may be no terminal left to write to).
pub fn restore_terminal() {
    let mut out = std::io::stdout();
    let _ = crossterm::execute!(
        out,
        crossterm::event::DisableMouseCapture,
        crossterm::event::DisableBracketedPaste,
        crossterm::terminal::LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = crossterm::terminal::disable_raw_mode();
    let _ = out.flush();
}

/// Restores the terminal when dropped: on return, on error and while unwinding a panic.
struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// Opens the TUI on `store` in the real terminal and runs it until the user quits.
pub fn run(store: &mut dyn Store) -> anyhow::Result<()> {
    install_signal_handlers();
    start_hangup_watchdog();
    // The panic hook restores the terminal before the message is printed, so the message
    // is readable; the guard below covers every other way out.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        previous(info);
    }));
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    crossterm::terminal::enable_raw_mode().context("switching the terminal to raw mode")?;
    let _guard = TerminalGuard;
    crossterm::execute!(
        std::io::stdout(),
        crossterm::terminal::EnterAlternateScreen,
        crossterm::event::EnableMouseCapture,
        crossterm::event::EnableBracketedPaste
    )
    .context("setting up the terminal")?;
    let backend = ratatui::backend::CrosstermBackend::new(std::io::stdout());
    let mut terminal = Terminal::new(backend).context("setting up the terminal")?;
    terminal.clear().context("clearing the terminal")?;
    let size = terminal.size().context("reading the terminal size")?;
    let mut session = Session::start(store, size.width, size.height, color);
    let result = run_loop(&mut terminal, &mut session, &mut TerminalEvents, &HANGUP);
    let hung_up = matches!(&result, Err(e) if e.chain().any(|c| c
        .downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)));
    if hung_up {
        HANGUP.store(true, Ordering::SeqCst);
        tracing::info!("the terminal went away: leaving with locks held");
        return Ok(());
    }
    if HANGUP.load(Ordering::SeqCst) {
        // The session is gone; locks stay held for the user to resume. Nothing to print.
        tracing::info!("hang-up: leaving with locks held");
    }
    result
}
