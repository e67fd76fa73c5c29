//! Lock rules: expiry, countdown, warnings, renewal pacing. Pure functions of `now`.

use super::queue::QueueSettings;
use super::time::Millis;

/// A held lock: who, since when (acquisition or last renewal), and its fencing token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lock {
    pub user: String,
    pub time: Millis,
    pub token: i64,
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
}

impl Lock {
    /// When this lock expires under `queue`'s settings.
    pub fn expires_at(&self, queue: &QueueSettings) -> Millis {
        self.time + queue.lock_ms()
    }

    /// True when the lock has expired at `now` (the expiry instant counts as expired).
    pub fn is_expired(&self, queue: &QueueSettings, now: Millis) -> bool {
        now >= self.expires_at(queue)
    }

    /// The lock's status at `now`.
    pub fn status(&self, queue: &QueueSettings, now: Millis) -> LockStatus {
        let left = self.expires_at(queue) - now;
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
    pub fn in_warning(&self, queue: &QueueSettings, now: Millis) -> bool {
        let left = self.expires_at(queue) - now;
        left > 0 && left <= queue.warn_seconds * 1000
    }

    /// True when an active holder's lock should be renewed now: renewal happens at most
    /// every `lock_seconds / 10`, so a busy holder writes rarely.
    pub fn renewal_due(&self, queue: &QueueSettings, now: Millis) -> bool {
        now - self.time >= renew_interval_ms(queue)
    }
}

/// The shortest time between two renewals of one lock.
pub fn renew_interval_ms(queue: &QueueSettings) -> i64 {
    (queue.lock_ms() / 10).max(1000)
}

/// The status of an optional lock.
pub fn status_of(lock: Option<&Lock>, queue: &QueueSettings, now: Millis) -> LockStatus {
    lock.map_or(LockStatus::Free, |l| l.status(queue, now))
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

    fn lock_at(time: Millis) -> Lock {
        Lock {
            user: "alice".into(),
            time,
            token: 1,
        }
    }

    #[test]
    fn a_lock_expires_exactly_at_its_age() {
        let l = lock_at(1_000_000);
        let q = queue();
        assert!(!l.is_expired(&q, 1_000_000 + 599_999));
        assert!(l.is_expired(&q, 1_000_000 + 600_000));
        assert_eq!(
            l.status(&q, 1_000_000 + 600_500),
            LockStatus::Expired {
                user: "alice".into(),
                overrun: 500
            }
        );
        assert_eq!(
            l.status(&q, 1_000_000 + 100_000),
            LockStatus::Held {
                user: "alice".into(),
                remaining: 500_000
            }
        );
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

    #[test]
    fn no_lock_is_free() {
        assert_eq!(status_of(None, &queue(), 5), LockStatus::Free);
    }
}
