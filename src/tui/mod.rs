//! The thin loop: terminal events become messages, `app::update` decides, the effects it
//! returns go to the store's worker thread (`worker.rs`) through the [`Session`]
//! (`session.rs`), their answers come back as messages, and `ui::render` draws. The loop
//! never waits for the database: a call stuck behind another program's write lock waits
//! on the worker while keys, views, help and countdowns carry on, and the status bar says
//! what is waiting and for how long. Generic over the ratatui backend, so tests drive the
//! very same loop on a `TestBackend`. The terminal's life cycle is in `terminal.rs`.

mod session;
mod terminal;
mod worker;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow};
use ratatui::Terminal;
use ratatui::backend::Backend;

use crate::app::{State, TICK_MS};
use crate::domain::sanitize;
use crate::store::Store;
pub use session::Session;
pub use terminal::{EventSource, TerminalEvents, restore_terminal};
use terminal::{
    HANGUP, TerminalGuard, install_signal_handlers, start_hangup_watchdog, take_over_terminal,
};
pub use worker::{UiClock, WORKER_THREAD};

/// How long a scripted run (tests) waits for the store to answer before going on.
const LOCKSTEP_PATIENCE: Duration = Duration::from_secs(120);

/// How long quitting waits, silently, for a change under way before saying so.
const QUIT_QUIET: Duration = Duration::from_millis(500);

/// How long quitting waits for a change under way at most (beyond the store's own
/// patience, so its answer, success or failure, is what the user is told).
const QUIT_PATIENCE: Duration = Duration::from_secs(90);

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
/// [`TICK_MS`]: countdowns move and other users' changes appear without a key, whatever
/// the store is doing.
pub fn run_loop<B: Backend>(
    terminal: &mut Terminal<B>,
    session: &mut Session,
    events: &mut dyn EventSource,
    stop: &AtomicBool,
) -> anyhow::Result<()>
where
    B::Error: Send + Sync + 'static,
{
    let tick = Duration::from_millis(TICK_MS);
    let lockstep = events.lockstep();
    let mut last_tick = Instant::now();
    loop {
        session.poll();
        if lockstep {
            session.settle(LOCKSTEP_PATIENCE);
        }
        if session.state.quit || stop.load(Ordering::SeqCst) {
            return Ok(());
        }
        if std::mem::take(&mut session.state.suspend) {
            if events.suspend()? {
                // Back from the shell: the terminal may have another size, and its screen
                // holds whatever the shell printed.
                terminal.clear().context("clearing the terminal")?;
                let size = terminal.size().context("reading the terminal size")?;
                let resized = ratatui::crossterm::event::Event::Resize(size.width, size.height);
                session.handle(Some(resized));
            } else {
                session.dispatch(crate::app::Msg::Said(
                    "Ctrl-Z: no shell to come back to here (caseload was not started from \
                     an interactive shell), so it keeps running"
                        .into(),
                ));
            }
        }
        draw(terminal, &session.state)?;
        session.flush_signals();
        let mut timeout = tick.saturating_sub(last_tick.elapsed());
        // A key the typing guard held back acts when its time comes, not at the next tick.
        let wake = session.state.wake_at();
        if let Some(at) = wake {
            let left = u64::try_from(at.saturating_sub(session.now())).unwrap_or(0);
            timeout = timeout.min(Duration::from_millis(left));
        }
        match events.next(timeout) {
            Ok(Some(ev)) => session.handle(Some(ev)),
            Ok(None) if lockstep => {
                last_tick = Instant::now();
                session.handle(None);
            }
            // A timeout, or the worker answered: the top of the loop applies and draws.
            Ok(None) => {}
            // Interrupted by a signal: the stop flag says whether to go.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("reading the terminal"),
        }
        let woken = wake.is_some_and(|at| session.now() >= at);
        if last_tick.elapsed() >= tick || woken {
            last_tick = Instant::now();
            session.handle(None);
        }
    }
}

/// The host's clock, as the UI reads it.
pub fn system_clock() -> UiClock {
    Arc::new(crate::store::clock::system_clock)
}

/// Opens the TUI on `store` in the real terminal and runs it until the user quits.
pub(crate) fn run(
    store: Box<dyn Store>,
    alerting: crate::app::Alerting,
    palette: crate::config::Palette,
) -> anyhow::Result<()> {
    install_signal_handlers();
    start_hangup_watchdog();
    // The panic hook restores the terminal before the message is printed, so the message
    // is readable; the guard below covers every other way out. A panic on the store's
    // worker is caught there and answered as an error: the screen stays, so it is logged
    // rather than printed over the screen.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().name() == Some(WORKER_THREAD) {
            tracing::error!("{info}");
            return;
        }
        restore_terminal();
        previous(info);
    }));
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let _guard = TerminalGuard;
    take_over_terminal()?;
    let backend = ratatui::backend::CrosstermBackend::new(std::io::stdout());
    let mut terminal = Terminal::new(backend).context("setting up the terminal")?;
    terminal.clear().context("clearing the terminal")?;
    let size = terminal.size().context("reading the terminal size")?;
    let mut session = Session::start(store, system_clock(), size.width, size.height, color)
        .context("starting the database thread")?;
    session.state.alerting = alerting;
    session.signals_to(Box::new(std::io::stdout()));
    session.state.palette = palette;
    // Keys typed by mistake change nothing (`app::typing`); on wherever a person types.
    session.state.typing.guard = true;
    let mut events = TerminalEvents::new(session.wake());
    let result = run_loop(&mut terminal, &mut session, &mut events, &HANGUP);
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
        return result;
    }
    if result.is_ok() {
        restore_terminal();
        leave(&mut session);
    }
    result
}

/// Quitting while a change is under way (say a completion waiting for another program's
/// write lock): the screen is gone at once, but the process stays until the change is
/// answered and prints how it ended, so a change that commits is never one the user does
/// not hear about. Ctrl-C leaves at once; a change still waiting for the lock is then not
/// made (nothing is half-done: its transaction never began or is rolled back).
fn leave(session: &mut Session) {
    let Some(what) = session.state.doing.as_ref().map(|d| d.what.clone()) else {
        return;
    };
    let before = session.state.status.clone();
    if !session.settle_change(QUIT_QUIET) {
        eprintln!(
            "caseload: waiting for the database to finish {what} (another program holds it); \
             Ctrl-C leaves now"
        );
        if !session.settle_change(QUIT_PATIENCE) {
            eprintln!(
                "caseload: no answer after {} s; {what} may or may not have been done: \
                 check with `caseload list --mine`",
                QUIT_PATIENCE.as_secs()
            );
            return;
        }
    }
    if let Some(st) = session
        .state
        .status
        .as_ref()
        .filter(|s| Some(*s) != before.as_ref())
    {
        eprintln!("caseload: {}", sanitize::line(&st.text));
    }
}
