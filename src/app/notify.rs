//! Told when work arrives: every refresh counts the items the user could take now (their
//! Queue filter's queue, free or expired, queue running); when that goes from none to
//! some, the user is told once — the status line, and the bell and a desktop notice as
//! the `notify` setting says — at most once per [`Alerting::min_gap`]. Never because of
//! the user's own change (a release, a skip), never on the first count. The terminal
//! title follows the count. The loop writes the [`Signal`]s to the terminal.

use crate::domain::{Millis, sanitize};

/// How often at most the bell and desktop notice sound (DESIGN: 30 s by default).
pub(crate) const DEFAULT_MIN_GAP_MS: Millis = 30_000;

/// The most items a refresh counts; past it the title says "1000+".
pub(crate) const COUNT_CAP: u64 = 1000;

/// Something the loop writes to the terminal rather than draws.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signal {
    /// The terminal bell (BEL).
    Bell,
    /// A desktop notification (OSC 9 / OSC 777), its text already sanitized.
    Desktop { title: String, body: String },
    /// The terminal's title.
    Title(String),
}

/// The alert setting and what the alerts have seen so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alerting {
    /// Ring the bell on arrival.
    pub bell: bool,
    /// Send a desktop notification on arrival.
    pub desktop: bool,
    /// At most one bell or notice within this many milliseconds.
    pub min_gap: Millis,
    /// The takeable count of the last refresh (`None` before the first) and its scope.
    pub last: Option<u64>,
    pub scope: Option<String>,
    /// The user's own change was answered since the last count: its effect on the count
    /// is theirs, not news.
    pub own_change: bool,
    /// When the bell or notice last sounded.
    pub last_alert: Option<Millis>,
    /// When the takeable count was last read.
    pub counted_at: Option<Millis>,
    /// Signals for the loop to write.
    pub out: Vec<Signal>,
}

/// How often an empty count is read again (see [`Alerting::recount_due`]).
pub(crate) const RECOUNT_MS: Millis = 5_000;

impl Default for Alerting {
    fn default() -> Self {
        Alerting {
            bell: true,
            desktop: false,
            min_gap: DEFAULT_MIN_GAP_MS,
            last: None,
            scope: None,
            own_change: false,
            last_alert: None,
            counted_at: None,
            out: Vec::new(),
        }
    }
}

impl Alerting {
    /// The `notify` setting: bell, desktop notice, both, or neither (status line only).
    pub fn with(bell: bool, desktop: bool) -> Alerting {
        Alerting {
            bell,
            desktop,
            ..Alerting::default()
        }
    }

    /// Takes the signals for the loop to write.
    pub fn drain(&mut self) -> Vec<Signal> {
        std::mem::take(&mut self.out)
    }

    /// A refresh counted `n` takeable items (capped at [`COUNT_CAP`]) in `scope` (the
    /// Queue filter's queue, or every queue). Returns the status line to show, when this
    /// is news.
    /// While nothing can be taken, work may also arrive without anyone writing: a lock
    /// runs out. No database change announces that, so the count is read again every
    /// [`RECOUNT_MS`] while it is zero (true when that is due at `now`).
    pub(crate) fn recount_due(&self, now: Millis) -> bool {
        self.last == Some(0) && self.counted_at.is_none_or(|at| now - at >= RECOUNT_MS)
    }

    pub(crate) fn counted(&mut self, n: u64, scope: Option<&str>, now: Millis) -> Option<String> {
        self.counted_at = Some(now);
        if self.scope.as_deref() != scope {
            // Another queue filter: its count is not news, whatever it is.
            self.scope = scope.map(str::to_string);
            self.last = None;
        }
        let before = self.last.replace(n);
        let own = std::mem::take(&mut self.own_change);
        if before != Some(n) {
            self.out.push(Signal::Title(title(n)));
        }
        if before != Some(0) || n == 0 || own {
            return None;
        }
        let place = match scope {
            Some(q) => format!("in {}", sanitize::line(q)),
            None => "in your queues".to_string(),
        };
        let what = if n == 1 {
            "1 item".to_string()
        } else {
            format!("{} items", count_text(n))
        };
        let line = format!("New work: {what} to take {place} (n takes the next)");
        let quiet = self
            .last_alert
            .is_some_and(|at| now.saturating_sub(at) < self.min_gap);
        if !quiet && (self.bell || self.desktop) {
            self.last_alert = Some(now);
            if self.bell {
                self.out.push(Signal::Bell);
            }
            if self.desktop {
                self.out.push(Signal::Desktop {
                    title: "caseload".into(),
                    body: format!("{what} to take {place}"),
                });
            }
        }
        Some(line)
    }
}

/// "12", or "1000+" at the cap.
fn count_text(n: u64) -> String {
    if n >= COUNT_CAP {
        format!("{COUNT_CAP}+")
    } else {
        n.to_string()
    }
}

/// The terminal title for `n` takeable items.
pub(crate) fn title(n: u64) -> String {
    format!("caseload · {} open", count_text(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_follows_the_count_and_says_the_cap() {
        assert_eq!(title(12), "caseload · 12 open");
        assert_eq!(title(COUNT_CAP), "caseload · 1000+ open");
    }

    #[test]
    fn a_queue_name_from_the_database_is_sanitized() {
        let mut a = Alerting::with(false, true);
        let evil = Some("evil\u{1b}]0;pwned\u{7}");
        a.counted(0, evil, 0);
        let line = a.counted(1, evil, 1).unwrap();
        assert!(
            !line.contains('\u{1b}') && !line.contains('\u{7}'),
            "{line:?}"
        );
        let body = a.drain().into_iter().find_map(|s| match s {
            Signal::Desktop { body, .. } => Some(body),
            _ => None,
        });
        let body = body.unwrap();
        assert!(
            !body.contains('\u{1b}') && !body.contains('\u{7}'),
            "{body:?}"
        );
    }
}
