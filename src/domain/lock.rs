//! Lock rules: expiry, countdown, warnings, renewal pacing (pure functions of `now`), and
//! the one wording of how a lock was lost, for the store's errors and the TUI alike.

use std::fmt;

use super::event::{Event, EventKind};
use super::queue::QueueSettings;
use super::time::{Millis, clock_hm};

/// The `lock_time` and `lock_expires_at` of an assignment: a lock given to a user by a
/// supervisor that runs no clock until its holder opens it (taking it renews it, which
/// sets both to now and now plus the lock age). 9999-12-31T23:59:59.999Z: later than any
/// lock's expiry, so every expiry rule (claim, reap, warnings) reads an assignment as live
/// without knowing about it, and far enough from `i64::MAX` that adding a lock age cannot
/// overflow.
pub const ASSIGNED: Millis = 253_402_300_799_999;

/// A held lock: who, since when (its acquisition: what the Locks view calls time held),
/// until when (`lock_expires_at`: the acquisition or last renewal plus the queue's lock age
/// then, so shortening the age later leaves it alone), and its fencing token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lock {
    pub user: String,
    pub time: Millis,
    pub expires: Millis,
    pub token: i64,
}

/// A lock as a supervisor saw it when choosing to remove it: an unlock applies only while
/// the item still holds exactly this lock — the same token (not taken over, released or
/// finished since) and the same expiry (not renewed since: a renewal, or re-taking one's
/// own expired lock, keeps the token but moves the expiry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeenLock {
    pub id: i64,
    pub token: i64,
    pub expires: Millis,
}

impl SeenLock {
    /// The item's current lock as seen now (`None` when it holds none).
    pub fn of(item: &super::Item) -> Option<SeenLock> {
        item.lock().map(|l| SeenLock {
            id: item.id,
            token: item.lock_token,
            expires: l.expires,
        })
    }

    /// True when `item` still holds this very lock.
    pub(crate) fn still_held(&self, item: &super::Item) -> bool {
        item.lock()
            .is_some_and(|l| l.token == self.token && l.expires == self.expires)
    }
}

/// What a lock looks like at a moment, as the Queue view shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockStatus {
    /// Nobody holds the item.
    Free,
    /// Held and live; `remaining` ms until it expires.
    Held { user: String, remaining: i64 },
    /// Held past its age; anyone may take it over.
    Expired { user: String, overrun: i64 },
    /// Assigned to `user` by a supervisor: theirs, with no clock until they open it.
    Assigned { user: String },
}

impl Lock {
    /// True when the lock has expired at `now` (the expiry instant counts as expired): the
    /// claim's `lock_expires_at <= now`.
    pub(crate) fn is_expired(&self, now: Millis) -> bool {
        now >= self.expires
    }

    /// True for an assignment (see [`ASSIGNED`]): no clock runs until it is opened.
    pub(crate) fn is_assignment(&self) -> bool {
        self.time >= ASSIGNED
    }

    /// The lock's status at `now`.
    pub(crate) fn status(&self, now: Millis) -> LockStatus {
        if self.is_assignment() {
            return LockStatus::Assigned {
                user: self.user.clone(),
            };
        }
        let left = self.expires - now;
        if left > 0 {
            LockStatus::Held {
                user: self.user.clone(),
                remaining: left,
            }
        } else {
            LockStatus::Expired {
                user: self.user.clone(),
                overrun: -left,
            }
        }
    }

    /// True when the holder should be warned: within `warn_seconds` of expiry, not expired.
    pub(crate) fn in_warning(&self, queue: &QueueSettings, now: Millis) -> bool {
        if self.is_assignment() {
            return false;
        }
        let left = self.expires - now;
        left > 0 && left <= queue.warn_seconds * 1000
    }

    /// True when an active holder's lock should be renewed now: renewal happens at most
    /// every `lock_seconds / 10`, so a busy holder writes rarely. The last renewal is not
    /// stored; under the queue's age now it was at `expires - lock age` (a lock given a
    /// longer age than the queue's now is renewed a little later, a shorter one sooner).
    pub(crate) fn renewal_due(&self, queue: &QueueSettings, now: Millis) -> bool {
        !self.is_assignment() && now - (self.expires - queue.lock_ms()) >= renew_interval_ms(queue)
    }
}

/// The shortest time between two renewals of one lock.
pub(crate) fn renew_interval_ms(queue: &QueueSettings) -> i64 {
    (queue.lock_ms() / 10).max(1000)
}

/// The status of an optional lock.
pub(crate) fn status_of(lock: Option<&Lock>, now: Millis) -> LockStatus {
    lock.map_or(LockStatus::Free, |l| l.status(now))
}

/// How a holder lost an item's lock: the action that ended or moved it, whose, when, to
/// whom and why. Every message about a lost lock is worded here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockLoss {
    /// What happened: one of [`EventKind::ENDS_A_HOLD`].
    pub how: EventKind,
    /// Who did it.
    pub by: String,
    pub at: Millis,
    /// Whom the lock was given to (reassigned).
    pub to: Option<String>,
    /// The reason a supervisor gave (unlocked, reassigned, cancelled).
    pub reason: Option<String>,
}

impl LockLoss {
    /// The loss an event records; `None` for kinds that leave a holder's hold alone.
    pub(crate) fn from_event(e: &Event) -> Option<LockLoss> {
        if !e.kind.is_in(EventKind::ENDS_A_HOLD) {
            return None;
        }
        let gives_reason = matches!(
            e.kind,
            EventKind::Unlocked | EventKind::Reassigned | EventKind::Cancelled
        );
        Some(LockLoss {
            how: e.kind,
            by: e.actor.clone(),
            at: e.at,
            to: e.detail_str("to").map(str::to_string),
            reason: e
                .detail_str("reason")
                .filter(|_| gives_reason)
                .map(str::to_string),
        })
    }

    /// The latest loss in an item's history (oldest event first).
    pub(crate) fn last_in(history: &[Event]) -> Option<LockLoss> {
        history.iter().rev().find_map(LockLoss::from_event)
    }

    /// What `me`, who held the lock on `id` until it expired (or would have) at
    /// `expires_at`, is told, e.g. "Your lock on #42 expired at 10:42; bob took it at 10:47".
    pub(crate) fn told_to(&self, me: &str, id: i64, expires_at: Millis) -> String {
        let (by, at) = (&self.by, clock_hm(self.at));
        let mine = by == me;
        let expired = clock_hm(expires_at);
        let text = match self.how {
            EventKind::TakenOver | EventKind::Locked if mine => {
                format!("Your lock on #{id} was replaced by a newer one of yours at {at}")
            }
            EventKind::TakenOver | EventKind::Locked if self.at >= expires_at => {
                format!("Your lock on #{id} expired at {expired}; {by} took it at {at}")
            }
            EventKind::TakenOver | EventKind::Locked => {
                format!("Your lock on #{id} was lost; {by} took it at {at}")
            }
            EventKind::Expired => {
                format!("Your lock on #{id} expired at {expired}; {by} released it at {at}")
            }
            EventKind::Unlocked => {
                format!("{by} unlocked #{id} at {at} (you held it; it is back in the pool)")
            }
            EventKind::Reassigned => format!(
                "{by} reassigned #{id} from you to {} at {at}",
                self.to.as_deref().unwrap_or("someone else")
            ),
            EventKind::Released | EventKind::Skipped if mine => {
                format!("You released #{id} elsewhere at {at}")
            }
            how => {
                let by = if mine { "you (elsewhere)" } else { by.as_str() };
                format!("#{id} was {} by {by} at {at}", past_tense(how))
            }
        };
        format!("{text}{}", self.reason_suffix())
    }

    fn reason_suffix(&self) -> String {
        self.reason
            .as_ref()
            .map(|r| format!(", reason: “{r}”"))
            .unwrap_or_default()
    }
}

/// "bob took it over at 10:47", "it expired and cron released it at 10:40", "sup
/// reassigned it to carol at 10:32, reason: “off sick”".
impl fmt::Display for LockLoss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (by, at) = (&self.by, clock_hm(self.at));
        match self.how {
            EventKind::TakenOver => write!(f, "{by} took it over at {at}"),
            EventKind::Locked => write!(f, "{by} took it at {at}"),
            EventKind::Expired => write!(f, "it expired and {by} released it at {at}"),
            EventKind::Reassigned => write!(
                f,
                "{by} reassigned it to {} at {at}",
                self.to.as_deref().unwrap_or("someone else")
            ),
            how => write!(f, "{by} {} it at {at}", past_tense(how)),
        }?;
        f.write_str(&self.reason_suffix())
    }
}

fn past_tense(kind: EventKind) -> &'static str {
    match kind {
        EventKind::Failed => "marked failed",
        other => other.as_str(),
    }
}

/// Why a holder's fenced write found no lock of theirs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoLock {
    /// Someone's action ended or moved it.
    Lost(LockLoss),
    /// The caller holds the item, under another token.
    OtherToken { given: i64, current: i64 },
    /// Someone else holds it, with no change of lock on record.
    HeldBy(String),
    /// Nobody holds it, and no change of lock is on record.
    NotHeld,
    /// A supervisor reopened (or requeued) the finished item since; nobody holds it.
    Reopened { by: String, at: Millis },
}

impl fmt::Display for NoLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoLock::Lost(loss) => loss.fmt(f),
            NoLock::OtherToken { given, current } => write!(
                f,
                "token {given} does not match your current lock (token {current})"
            ),
            NoLock::HeldBy(holder) => write!(f, "{holder} holds it now"),
            NoLock::NotHeld => f.write_str("you do not hold it"),
            NoLock::Reopened { by, at } => write!(
                f,
                "{by} reopened it at {}; it is open and nobody holds it",
                clock_hm(*at)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue() -> QueueSettings {
        QueueSettings {
            lock_seconds: 600,
            warn_seconds: 60,
            ..QueueSettings::new("q")
        }
    }

    /// A lock taken at `time` in [`queue`] (600 s).
    fn lock_at(time: Millis) -> Lock {
        Lock {
            user: "alice".into(),
            time,
            expires: time + 600_000,
            token: 1,
        }
    }

    #[test]
    fn a_lock_expires_exactly_at_its_age() {
        let l = lock_at(1_000_000);
        assert!(!l.is_expired(1_000_000 + 599_999));
        assert!(l.is_expired(1_000_000 + 600_000));
        assert_eq!(
            l.status(1_000_000 + 600_500),
            LockStatus::Expired {
                user: "alice".into(),
                overrun: 500
            }
        );
        assert_eq!(
            l.status(1_000_000 + 100_000),
            LockStatus::Held {
                user: "alice".into(),
                remaining: 500_000
            }
        );
    }

    #[test]
    fn a_lock_keeps_the_age_it_was_given() {
        // Taken under 600 s; the queue's age is now 60 s: the lock still runs 600 s, and
        // activity renews it (to 60 s) only near its end: 6 s (a tenth of the new age)
        // after 540 s, where a 60 s lock ending with it would have been renewed.
        let l = lock_at(0);
        let short = QueueSettings {
            lock_seconds: 60,
            warn_seconds: 10,
            ..QueueSettings::new("q")
        };
        assert!(!l.is_expired(300_000));
        assert!(!l.in_warning(&short, 300_000));
        assert!(l.in_warning(&short, 590_000));
        assert!(!l.renewal_due(&short, 545_999));
        assert!(l.renewal_due(&short, 546_000));
        // A longer age now: the next activity renews it (to the longer age).
        let long = QueueSettings {
            lock_seconds: 3600,
            ..QueueSettings::new("q")
        };
        assert!(l.renewal_due(&long, 1_000));
    }

    #[test]
    fn warning_starts_warn_seconds_before_expiry() {
        let l = lock_at(0);
        let q = queue();
        assert!(!l.in_warning(&q, 539_999));
        assert!(l.in_warning(&q, 540_000));
        assert!(l.in_warning(&q, 599_999));
        assert!(!l.in_warning(&q, 600_000), "expired is not a warning");
    }

    #[test]
    fn renewal_is_paced_at_a_tenth_of_the_lock_age() {
        let l = lock_at(0);
        let q = queue();
        assert!(!l.renewal_due(&q, 59_999));
        assert!(l.renewal_due(&q, 60_000));
        let short = QueueSettings {
            lock_seconds: 5,
            warn_seconds: 1,
            ..QueueSettings::new("s")
        };
        assert_eq!(
            renew_interval_ms(&short),
            1000,
            "never more than once a second"
        );
    }

    fn event(kind: EventKind, actor: &str, at: Millis, detail: serde_json::Value) -> Event {
        Event {
            id: 1,
            item_id: 42,
            at,
            actor: actor.into(),
            os_user: "x".into(),
            kind,
            detail,
        }
    }

    #[test]
    fn a_loss_is_worded_once_for_the_store_and_the_holder() {
        let ten_47 = 10 * 3_600_000 + 47 * 60_000;
        let took = LockLoss::from_event(&event(
            EventKind::TakenOver,
            "bob",
            ten_47,
            serde_json::json!({"from": "alice"}),
        ))
        .unwrap();
        assert_eq!(took.to_string(), "bob took it over at 10:47");
        assert_eq!(
            took.told_to("alice", 42, ten_47 - 5 * 60_000),
            "Your lock on #42 expired at 10:42; bob took it at 10:47"
        );
        let moved = LockLoss::from_event(&event(
            EventKind::Reassigned,
            "sup",
            ten_47,
            serde_json::json!({"from": "alice", "to": "carol", "reason": "off sick"}),
        ))
        .unwrap();
        assert_eq!(
            moved.to_string(),
            "sup reassigned it to carol at 10:47, reason: “off sick”"
        );
        assert_eq!(
            moved.told_to("alice", 42, 0),
            "sup reassigned #42 from you to carol at 10:47, reason: “off sick”"
        );
        assert!(
            LockLoss::from_event(&event(EventKind::Renewed, "a", 0, serde_json::json!({})))
                .is_none()
        );
    }

    #[test]
    fn an_assignment_runs_no_clock() {
        let a = Lock {
            user: "bob".into(),
            time: ASSIGNED,
            expires: ASSIGNED,
            token: 2,
        };
        let q = queue();
        let years_later = 4_000_000_000_000;
        assert!(a.is_assignment());
        assert!(!a.is_expired(years_later));
        assert!(!a.in_warning(&q, years_later));
        assert!(!a.renewal_due(&q, years_later));
        assert_eq!(
            a.status(years_later),
            LockStatus::Assigned { user: "bob".into() }
        );
        assert!(!lock_at(years_later).is_assignment());
    }

    #[test]
    fn no_lock_is_free() {
        assert_eq!(status_of(None, 5), LockStatus::Free);
    }
}
