//! Keys typed by mistake. A clerk who thinks the notes editor is open types a sentence
//! into the list, where single letters take, skip, release and complete items. A person
//! pressing commands waits for the screen between them; typing does not: a burst of
//! [`BURST_KEYS`] typing keys (printable characters, Enter, Backspace) within
//! [`BURST_MS`], or a paste, outside a text field is typing, and changes nothing.
//!
//! So that the first letters of a sentence cannot act before the burst shows, a key that
//! changes something (anything but moving the selection) is held back for [`BURST_MS`]
//! and acted on only if no burst formed meanwhile; Enter and moving keys act at once
//! unless they complete a burst. Once typing is seen, typing keys are ignored until
//! [`QUIET_MS`] pass without one (Esc ends it at once). Pure: times come with the keys.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::domain::Millis;

/// This many typing keys within [`BURST_MS`] are typing, not commands.
pub(crate) const BURST_KEYS: usize = 3;
/// The burst's window, and how long a key that changes something is held back.
pub(crate) const BURST_MS: Millis = 300;
/// Once typing is seen, typing keys are ignored until this long passes without one.
pub(crate) const QUIET_MS: Millis = 1000;
/// What the status line says when typing is seen.
pub(crate) const TYPING_HINT: &str = "Typing? Press e to write notes, / to filter";

/// Where the list and the item stood when keys began to come, put back if they were
/// typing (a moving key acts at once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Spot {
    pub selected: usize,
    pub offset: usize,
    pub scroll: usize,
}

/// What to do with a key that reached the lists (no text field open).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Act on it now (after the keys held back before it).
    Act,
    /// Held back: acted on when [`Typing::due`] gives it back.
    Held,
    /// Typing: ignore it. `noticed` when this key showed it (say so once).
    Typing { noticed: bool },
}

/// The typing guard's memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Typing {
    /// On in the terminal (`tui::run`). Off in [`super::State::new`]: tests of other
    /// things press keys at one frozen instant, which would look like typing.
    pub guard: bool,
    /// Typing keys of the last [`BURST_MS`] (a held key's repeats count once).
    recent: Vec<(Millis, KeyCode)>,
    /// Keys held back, with when they came.
    held: Vec<(KeyEvent, Millis)>,
    /// Typing was seen: typing keys are ignored until then.
    until: Option<Millis>,
    /// Where things stood when these keys began.
    pub(crate) before: Option<Spot>,
}

/// Printable characters (Shift allowed), Enter and Backspace: what typing is made of.
pub(crate) fn is_typing_key(key: &KeyEvent) -> bool {
    let plain = (key.modifiers - KeyModifiers::SHIFT).is_empty();
    plain
        && matches!(
            key.code,
            KeyCode::Char(_) | KeyCode::Enter | KeyCode::Backspace
        )
}

impl Typing {
    /// True when a key at `now` would begin a new run of keys (none in the last
    /// [`BURST_MS`], no typing under way): the caller notes where things stand.
    pub(crate) fn starting(&self, now: Millis) -> bool {
        !self.typing_at(now) && self.recent.iter().all(|(at, _)| now - at >= BURST_MS)
    }

    fn typing_at(&self, now: Millis) -> bool {
        self.until.is_some_and(|u| now < u)
    }

    /// Decides about `key` at `now`; `at_once` for keys that act at once unless they
    /// complete a burst (moving, Enter).
    pub(crate) fn classify(&mut self, key: &KeyEvent, now: Millis, at_once: bool) -> Verdict {
        if !self.guard {
            return Verdict::Act;
        }
        if !is_typing_key(key) {
            if key.code == KeyCode::Esc {
                self.until = None;
            }
            return Verdict::Act;
        }
        if self.typing_at(now) {
            self.until = Some(now + QUIET_MS);
            return Verdict::Typing { noticed: false };
        }
        self.recent.retain(|(at, _)| now - at < BURST_MS);
        if self.recent.last().map(|(_, c)| *c) != Some(key.code) {
            self.recent.push((now, key.code));
        }
        if self.recent.len() >= BURST_KEYS {
            self.seen(now);
            return Verdict::Typing { noticed: true };
        }
        if at_once {
            return Verdict::Act;
        }
        self.held.push((*key, now));
        Verdict::Held
    }

    /// A paste outside a text field: typing. True when it was not already seen.
    pub(crate) fn pasted(&mut self, now: Millis) -> bool {
        let noticed = !self.typing_at(now);
        self.seen(now);
        noticed
    }

    fn seen(&mut self, now: Millis) {
        self.recent.clear();
        self.held.clear();
        self.until = Some(now + QUIET_MS);
    }

    /// The held keys whose time has come at `now` (no burst formed), in order.
    pub(crate) fn due(&mut self, now: Millis) -> Vec<KeyEvent> {
        let n = self
            .held
            .iter()
            .take_while(|(_, at)| now - at >= BURST_MS)
            .count();
        self.held.drain(..n).map(|(k, _)| k).collect()
    }

    /// Every held key, in order: a key that is not typing came after them.
    pub(crate) fn release_all(&mut self) -> Vec<KeyEvent> {
        self.held.drain(..).map(|(k, _)| k).collect()
    }

    /// When the loop must come back to act on a held key.
    pub fn wake_at(&self) -> Option<Millis> {
        self.held.first().map(|(_, at)| at + BURST_MS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    fn guard() -> Typing {
        Typing {
            guard: true,
            ..Typing::default()
        }
    }

    #[test]
    fn three_keys_within_the_window_are_typing() {
        let mut t = guard();
        assert_eq!(t.classify(&k('s'), 0, false), Verdict::Held);
        assert_eq!(t.classify(&k('o'), 120, false), Verdict::Held);
        assert_eq!(
            t.classify(&k('r'), 250, false),
            Verdict::Typing { noticed: true }
        );
        assert!(t.due(10_000).is_empty(), "nothing held is acted on");
        // Typing goes on being ignored until a quiet second.
        assert_eq!(
            t.classify(&k('n'), 900, false),
            Verdict::Typing { noticed: false }
        );
        assert_eq!(t.classify(&k('n'), 1_950, false), Verdict::Held);
        assert_eq!(t.due(2_250), vec![k('n')]);
    }

    #[test]
    fn a_key_alone_acts_after_the_window_and_a_held_key_repeats_once() {
        let mut t = guard();
        assert_eq!(t.classify(&k('n'), 0, false), Verdict::Held);
        assert_eq!(t.wake_at(), Some(BURST_MS));
        assert!(t.due(BURST_MS - 1).is_empty());
        assert_eq!(t.due(BURST_MS), vec![k('n')]);
        for at in [1_000, 1_030, 1_060, 1_090] {
            assert_eq!(t.classify(&k('j'), at, true), Verdict::Act);
        }
        let enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE);
        assert_eq!(t.classify(&enter, 1_100, true), Verdict::Act);
        let ctrl = KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL);
        assert!(!is_typing_key(&ctrl));
        assert!(is_typing_key(&KeyEvent::new(
            KeyCode::Char('C'),
            KeyModifiers::SHIFT
        )));
    }

    #[test]
    fn off_acts_on_everything_at_once() {
        let mut t = Typing::default();
        for at in [0, 1, 2, 3] {
            assert_eq!(t.classify(&k('n'), at, false), Verdict::Act);
        }
    }
}
