//! One user's TUI over one store: the state, and the effects on their way to the store's
//! worker thread. The Session never waits for the store while the loop runs: it hands
//! the worker one effect at a time, keeps the rest in a queue where repeats collapse (a
//! stuck call never has refreshes piling up behind it), and applies answers as they come.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::Event;

use super::worker::{NoReply, Reply, UiClock, Wake, Worker};
use crate::app::{self, Call, Effect, Msg, State};
use crate::domain::Millis;
use crate::store::{Store, StoreError};

/// One user's TUI over one store: the state and the effects under way.
pub struct Session {
    pub state: State,
    worker: Worker,
    clock: UiClock,
    /// The store's clock minus `clock` (the server's offset on PostgreSQL; 0 on SQLite).
    offset: i64,
    /// Effects not yet handed to the worker.
    queue: VecDeque<Effect>,
    /// The effect the worker is running (kept to answer for it should the worker die).
    in_flight: Option<Effect>,
    /// Where the bell, desktop notices and title go (the terminal; none in tests, which
    /// read `state.alerting`).
    signals: Option<Box<dyn std::io::Write + Send>>,
}

impl Session {
    /// Starts a session on a screen of `width` x `height`: moves the store onto its own
    /// thread and asks it to resume the user's own work and load the first window. `clock`
    /// is the clock countdowns run on between answers (the host's; tests pass theirs).
    pub fn start(
        mut store: Box<dyn Store>,
        clock: UiClock,
        width: u16,
        height: u16,
        color: bool,
    ) -> std::io::Result<Session> {
        let me = store.actor().name.clone();
        let local = clock();
        let now = store.now().unwrap_or(local);
        let worker = Worker::start(store, Arc::clone(&clock))?;
        let mut state = State::new(&me, now, width, height, color);
        state.zone = crate::domain::time::display_zone();
        let mut s = Session {
            state,
            worker,
            clock,
            offset: now - local,
            queue: VecDeque::new(),
            in_flight: None,
            signals: None,
        };
        s.enqueue(vec![Effect::Resume]);
        s.pump();
        Ok(s)
    }

    /// Sends the bell, desktop notices and title to `out` (the terminal) from now on.
    pub(crate) fn signals_to(&mut self, out: Box<dyn std::io::Write + Send>) {
        self.signals = Some(out);
    }

    /// Writes the signals `update` asked for (the loop calls this after drawing).
    pub(crate) fn flush_signals(&mut self) {
        let signals = self.state.alerting.drain();
        if let Some(out) = self.signals.as_mut()
            && !signals.is_empty()
        {
            super::terminal::write_signals(&mut **out, &signals);
        }
    }

    /// Now, by the store's clock, without asking the store.
    pub(crate) fn now(&self) -> Millis {
        (self.clock)() + self.offset
    }

    /// Handles one terminal event, or a tick when `None`. Never waits for the store.
    pub fn handle(&mut self, ev: Option<Event>) {
        let now = self.now();
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

    /// Feeds a message through `update` and sends on the effects it returns.
    pub(crate) fn dispatch(&mut self, msg: Msg) {
        let fx = app::update(&mut self.state, msg);
        self.enqueue(fx);
        self.pump();
    }

    /// Handles an event and waits until every effect it caused has been answered (tests
    /// and benchmarks: the synchronous view of the same session).
    pub fn step(&mut self, ev: Option<Event>) {
        self.handle(ev);
        self.settle(Duration::from_secs(120));
    }

    /// True while the worker runs a call.
    pub fn busy(&self) -> bool {
        self.in_flight.is_some()
    }

    /// How many effects wait behind the call under way.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Applies every answer that has arrived; true if there was one.
    pub(crate) fn poll(&mut self) -> bool {
        let mut any = false;
        loop {
            match self.worker.try_recv() {
                Ok(r) => {
                    self.took(r);
                    any = true;
                }
                Err(NoReply::Empty) => break,
                Err(NoReply::Gone) => {
                    any |= self.gone();
                    break;
                }
            }
        }
        any
    }

    /// Waits until every effect has been answered, at most `patience`; true when idle.
    pub fn settle(&mut self, patience: Duration) -> bool {
        self.wait_while(patience, |s| s.in_flight.is_some())
    }

    /// Waits until the change under way (if any) has been answered, at most `patience`;
    /// true when there is none left.
    pub fn settle_change(&mut self, patience: Duration) -> bool {
        self.wait_while(patience, |s| s.state.doing.is_some())
    }

    fn wait_while(&mut self, patience: Duration, pending: impl Fn(&Session) -> bool) -> bool {
        let deadline = Instant::now() + patience;
        self.poll();
        while pending(self) {
            if self.in_flight.is_none() {
                // Nothing under way can answer (a bug in update); do not wait for it.
                return false;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            match self.worker.recv_timeout(left) {
                Ok(r) => self.took(r),
                Err(NoReply::Empty) => return false,
                Err(NoReply::Gone) => {
                    self.gone();
                }
            }
        }
        true
    }

    /// The pipe that becomes readable when an answer arrives.
    pub(super) fn wake(&self) -> Arc<Wake> {
        Arc::clone(&self.worker.wake)
    }

    fn took(&mut self, r: Reply) {
        self.in_flight = None;
        if let Some(o) = r.offset {
            self.offset = o;
        }
        self.answer(r.msgs);
        self.pump();
    }

    /// The worker thread is gone: the call it was running gets a failure as its answer.
    fn gone(&mut self) -> bool {
        let Some(e) = self.in_flight.take() else {
            return false;
        };
        self.answer(e.failed(worker_gone()));
        self.pump();
        true
    }

    fn answer(&mut self, msgs: Vec<Msg>) {
        for m in msgs {
            let fx = app::update(&mut self.state, m);
            self.enqueue(fx);
        }
    }

    /// Queues effects. A look for changes is pointless while anything else is under way or
    /// waiting (that will show the changes); a newer refresh replaces a waiting one; an
    /// effect already waiting is not queued twice.
    fn enqueue(&mut self, fx: Vec<Effect>) {
        for e in fx {
            match &e {
                Effect::CheckMarker if self.in_flight.is_some() || !self.queue.is_empty() => {
                    continue;
                }
                Effect::Refresh(_) => {
                    self.queue.retain(|q| !matches!(q, Effect::Refresh(_)));
                    self.queue.retain(|q| !matches!(q, Effect::CheckMarker));
                }
                _ if self.queue.contains(&e) => continue,
                _ => {}
            }
            self.queue.push_back(e);
        }
    }

    /// Hands the next effect to the worker when it is free; tells `update` what is under
    /// way (the waiting line) or that nothing is.
    fn pump(&mut self) {
        // Effects answered at once with a failure (no worker) may queue more; a bound keeps a
        // mistake in `update` from spinning here.
        let mut budget = 100;
        while self.in_flight.is_none() {
            let Some(e) = self.queue.pop_front() else {
                break;
            };
            let call = Call {
                what: e.describe(),
                writes: e.writes(),
                since: self.now(),
            };
            if self.worker.send(e.clone()) {
                self.in_flight = Some(e);
                let fx = app::update(&mut self.state, Msg::Calling(Some(call)));
                self.enqueue(fx);
            } else {
                self.answer(e.failed(worker_gone()));
                budget -= 1;
                if budget == 0 {
                    tracing::warn!("effects dropped: the store's worker is gone");
                    self.queue.clear();
                }
            }
        }
        if self.in_flight.is_none() && self.state.call.is_some() {
            let fx = app::update(&mut self.state, Msg::Calling(None));
            self.enqueue(fx);
        }
    }
}

fn worker_gone() -> StoreError {
    StoreError::Database(
        "the database connection stopped after an internal error (see the log); restart caseload"
            .into(),
    )
}
