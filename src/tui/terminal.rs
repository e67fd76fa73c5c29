//! The terminal's side of the loop: where events come from, and its life cycle. Raw
//! mode, the alternate screen and mouse capture are undone on every way out (return,
//! error, panic), and on SIGHUP/SIGTERM (a dropped SSH session) the loop stops at once,
//! restores what it can and leaves every lock held so the user can resume.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use ratatui::crossterm;
use ratatui::crossterm::event::{self, Event};

use super::worker::Wake;

/// Where terminal events come from: the real terminal, or a script in tests.
pub trait EventSource {
    /// The next event, or `None` when `timeout` passes without one or the store's worker
    /// has answered (the loop then applies the answer and draws).
    fn next(&mut self, timeout: Duration) -> std::io::Result<Option<Event>>;

    /// True for a script (tests): the loop lets every store call be answered before it
    /// asks for the next event, and each `None` is a tick, so a run is deterministic.
    fn lockstep(&self) -> bool {
        false
    }

    /// Ctrl-Z: hands the terminal back to the shell and stops the process until `fg`;
    /// true when it did (the screen must then be drawn afresh), false when there is no
    /// shell to come back to. A script does nothing.
    fn suspend(&mut self) -> std::io::Result<bool> {
        Ok(false)
    }
}

/// Events from the terminal via crossterm.
///
/// The wait happens here, on the terminal's file descriptor and the worker's wake pipe,
/// not inside crossterm: when the terminal goes away (a dropped SSH session, a killed
/// tmux) its descriptor reports hang-up and reads return end-of-file forever, and
/// crossterm 0.29 would spin on that at full CPU without ever returning. Seeing the
/// hang-up here ends the loop instead.
pub struct TerminalEvents {
    wake: Arc<Wake>,
}

impl TerminalEvents {
    pub(super) fn new(wake: Arc<Wake>) -> TerminalEvents {
        TerminalEvents { wake }
    }
}

impl EventSource for TerminalEvents {
    fn suspend(&mut self) -> std::io::Result<bool> {
        if !job_control() {
            return Ok(false);
        }
        restore_terminal();
        // Stops here until the shell's `fg` (SIGCONT); then the screen is taken back.
        signal_hook::low_level::raise(signal_hook::consts::SIGTSTP)?;
        take_over_terminal().map_err(std::io::Error::other)?;
        Ok(true)
    }

    fn next(&mut self, timeout: Duration) -> std::io::Result<Option<Event>> {
        // Events crossterm has already parsed come first.
        if event::poll(Duration::ZERO)? {
            return Ok(Some(event::read()?));
        }
        match wait_for_terminal(timeout, &self.wake)? {
            TerminalWait::Input => {
                if event::poll(Duration::ZERO)? {
                    Ok(Some(event::read()?))
                } else {
                    Ok(None)
                }
            }
            TerminalWait::Woken => {
                self.wake.drain();
                Ok(None)
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
    Woken,
    Timeout,
    HungUp,
}

/// Waits up to `timeout` for input on standard input (the terminal) or an answer from the
/// store's worker.
fn wait_for_terminal(timeout: Duration, wake: &Wake) -> std::io::Result<TerminalWait> {
    let mut fds = [
        libc::pollfd {
            fd: libc::STDIN_FILENO,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: wake.fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    if crate::sys::poll(&mut fds, ms)? == 0 {
        return Ok(TerminalWait::Timeout);
    }
    let [tty, woken] = fds;
    if tty.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
        return Ok(TerminalWait::HungUp);
    }
    if tty.revents & libc::POLLIN != 0 {
        return Ok(TerminalWait::Input);
    }
    if woken.revents != 0 {
        return Ok(TerminalWait::Woken);
    }
    Ok(TerminalWait::Timeout)
}

/// Set by SIGHUP and SIGTERM (and by the loop when the terminal is gone).
pub(super) static HANGUP: LazyLock<Arc<AtomicBool>> =
    LazyLock::new(|| Arc::new(AtomicBool::new(false)));

/// After a hang-up the loop has two seconds to leave on its own (restoring what it can);
/// if it is stuck in a read of a dead terminal, the process ends anyway. Locks stay held
/// either way: nothing is released on the way out, so the user can resume.
pub(super) fn start_hangup_watchdog() {
    std::thread::spawn(|| {
        loop {
            std::thread::sleep(Duration::from_millis(200));
            if HANGUP.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_secs(2));
                tracing::warn!("hang-up: the loop did not stop; exiting");
                // _exit ends the process at once; SQLite and PostgreSQL both survive an
                // abrupt end (an open transaction is rolled back).
                signal_hook::low_level::exit(129);
            }
        }
    });
}

/// SIGHUP and SIGTERM set [`HANGUP`] (the handler only stores to an atomic).
pub(super) fn install_signal_handlers() {
    for signal in [signal_hook::consts::SIGHUP, signal_hook::consts::SIGTERM] {
        if let Err(e) = signal_hook::flag::register(signal, Arc::clone(&HANGUP)) {
            tracing::warn!("cannot watch signal {signal}: {e}");
        }
    }
}

/// Whether a shell with job control can bring a stopped caseload back with `fg`: our
/// process group is not orphaned, i.e. going up from us past the processes of our own
/// group, the first one outside it is in our session (the shell that made the job). A
/// program started directly by sshd or login leads its own session, and nobody could
/// continue it: stopping it would leave the terminal frozen. Read from /proc on Linux;
/// elsewhere assumed.
fn job_control() -> bool {
    // /proc/PID/stat: "pid (comm) state ppid pgrp session ..."; comm may hold spaces.
    let stat = |pid: &str| -> Option<(i64, i64, i64)> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let rest = &text[text.rfind(')')? + 2..];
        let f: Vec<i64> = rest
            .split_whitespace()
            .skip(1)
            .take(3)
            .filter_map(|f| f.parse().ok())
            .collect();
        Some((*f.first()?, *f.get(1)?, *f.get(2)?))
    };
    let Some((mut parent, group, session)) = stat("self") else {
        return true;
    };
    for _ in 0..64 {
        if parent <= 1 {
            return false;
        }
        let Some((grandparent, their_group, their_session)) = stat(&parent.to_string()) else {
            return false;
        };
        if their_group != group {
            return their_session == session;
        }
        parent = grandparent;
    }
    false
}

/// The terminal is in the TUI's modes (raw, alternate screen, mouse capture).
static TAKEN_OVER: AtomicBool = AtomicBool::new(false);

/// Puts the terminal in the TUI's modes: raw, the alternate screen, mouse capture and
/// bracketed paste.
pub(super) fn take_over_terminal() -> anyhow::Result<()> {
    use anyhow::Context as _;
    crossterm::terminal::enable_raw_mode().context("switching the terminal to raw mode")?;
    TAKEN_OVER.store(true, Ordering::SeqCst);
    crossterm::execute!(
        std::io::stdout(),
        crossterm::terminal::EnterAlternateScreen,
        crossterm::event::EnableMouseCapture,
        crossterm::event::EnableBracketedPaste,
        crossterm::style::Print(PUSH_TITLE)
    )
    .context("setting up the terminal")
}

/// Saves the terminal's title on its title stack (XTWINOPS 22), so the title the TUI sets
/// ("caseload · 12 open") can be put back on the way out (23).
const PUSH_TITLE: &str = "\x1b[22;0t";
const POP_TITLE: &str = "\x1b[23;0t";

/// Writes the app's terminal signals: the bell, a desktop notification (OSC 777 where
/// the terminal is known to want it — foot and VTE-based ones — else OSC 9, which kitty,
/// WezTerm, iTerm2 and Windows Terminal show and other terminals ignore), the title.
/// Their text is sanitized by the app already.
pub(super) fn write_signals(out: &mut dyn Write, signals: &[crate::app::Signal]) {
    use crate::app::Signal;
    let osc777 = std::env::var("TERM").is_ok_and(|t| t.starts_with("foot"))
        || std::env::var_os("VTE_VERSION").is_some();
    for s in signals {
        let _ = match s {
            Signal::Bell => out.write_all(b"\x07"),
            Signal::Desktop { title, body } if osc777 => {
                write!(out, "\x1b]777;notify;{title};{body}\x1b\\")
            }
            Signal::Desktop { title, body } => write!(out, "\x1b]9;{title}: {body}\x1b\\"),
            Signal::Title(t) => write!(out, "\x1b]2;{t}\x1b\\"),
        };
    }
    let _ = out.flush();
}

/// Puts the terminal back: leaves the alternate screen, stops mouse capture, ends raw
/// mode, shows the cursor. Does it once however often it is called (leaving the alternate
/// screen twice would move the cursor back over what was printed since); errors are
/// ignored (after a hang-up there may be no terminal left to write to).
pub fn restore_terminal() {
    if !TAKEN_OVER.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = std::io::stdout();
    let _ = crossterm::execute!(
        out,
        crossterm::event::DisableMouseCapture,
        crossterm::event::DisableBracketedPaste,
        crossterm::terminal::LeaveAlternateScreen,
        crossterm::cursor::Show,
        crossterm::style::Print(POP_TITLE)
    );
    let _ = crossterm::terminal::disable_raw_mode();
    let _ = out.flush();
}

/// Restores the terminal when dropped: on return, on error and while unwinding a panic.
pub(super) struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}
