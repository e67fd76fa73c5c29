//! Parking an item for a call-back: its holder releases the lock and keeps the item until
//! a time (state `parked`). Until then nobody else may take it; from then it is awake for
//! its owner (first in their Mine and their next take), and once the grace after it has
//! passed unopened it returns to the pool. The rules here are pure: `now` is a parameter.

use super::item::{Item, ItemState};
use super::sanitize;
use super::time::{Millis, clock_hm, date_hm, display_zone};

/// How long a woken item waits for its owner before it returns to the pool, unless its
/// queue says otherwise (`queue set --park-grace-seconds`).
pub const GRACE_MS: i64 = super::queue::DEFAULT_PARK_GRACE_SECONDS * 1000;

/// How long after a complete, fail, release, skip or park its maker may undo it, unless
/// its queue says otherwise (`queue set --undo-seconds`).
pub const UNDO_MS: i64 = super::queue::DEFAULT_UNDO_SECONDS * 1000;

/// Where a parked item stands at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParkStatus {
    /// Before its wake time: only its owner may take it.
    Sleeping,
    /// Its wake time has come: waiting for its owner, within the grace.
    Awake,
    /// The grace after its wake time has passed: anyone may take it (the reaper returns
    /// it to the pool).
    Returned,
}

/// A parked item's park: who, until when, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Park {
    pub by: String,
    pub until: Millis,
    pub reason: String,
    /// Its queue's grace after `until` (milliseconds).
    pub grace_ms: i64,
}

impl Park {
    /// The item's park, when it is parked (and its row says by whom and until when),
    /// with its queue's grace (`QueueSettings::park_grace_ms`).
    pub fn of(item: &Item, grace_ms: i64) -> Option<Park> {
        if item.state != ItemState::Parked {
            return None;
        }
        Some(Park {
            by: item.parked_by.clone()?,
            until: item.parked_until?,
            reason: item.park_reason.clone().unwrap_or_default(),
            grace_ms,
        })
    }

    /// Where the park stands at `now`.
    pub fn status(&self, now: Millis) -> ParkStatus {
        if now < self.until {
            ParkStatus::Sleeping
        } else if now < self.returns_at() {
            ParkStatus::Awake
        } else {
            ParkStatus::Returned
        }
    }

    /// When it returns to the pool unless its owner opens it.
    pub fn returns_at(&self) -> Millis {
        self.until.saturating_add(self.grace_ms)
    }

    /// "parked by alice until 14:00: call back Mei Brandt" (sanitized).
    pub fn describe(&self, now: Millis) -> String {
        let mut s = format!(
            "parked by {} until {}",
            sanitize::line(&self.by),
            when_text(self.until, now)
        );
        if !self.reason.is_empty() {
            s.push_str(": ");
            s.push_str(&sanitize::line(&self.reason));
        }
        s
    }
}

/// A wake time as a person reads it next to `now`: "14:00" on the same day, else
/// "2026-11-23 09:00" (in the display zone).
pub fn when_text(t: Millis, now: Millis) -> String {
    let zone = display_zone();
    let same_day = zone.start_of_day(t) == zone.start_of_day(now);
    if same_day { clock_hm(t) } else { date_hm(t) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parked(until: Millis) -> Item {
        Item {
            state: ItemState::Parked,
            parked_by: Some("alice".into()),
            parked_until: Some(until),
            park_reason: Some("call back\u{1b}[2J Mei".into()),
            ..Item::default()
        }
    }

    #[test]
    fn a_park_sleeps_wakes_and_returns() {
        let p = Park::of(&parked(10_000_000), GRACE_MS).unwrap();
        assert_eq!(p.status(9_999_999), ParkStatus::Sleeping);
        assert_eq!(p.status(10_000_000), ParkStatus::Awake);
        assert_eq!(p.status(10_000_000 + GRACE_MS - 1), ParkStatus::Awake);
        assert_eq!(p.status(10_000_000 + GRACE_MS), ParkStatus::Returned);
        assert_eq!(Park::of(&Item::default(), GRACE_MS), None);
        // A queue's own grace.
        let short = Park::of(&parked(10_000_000), 60_000).unwrap();
        assert_eq!(short.status(10_000_000 + 60_000), ParkStatus::Returned);
    }

    #[test]
    fn the_description_names_owner_time_and_a_clean_reason() {
        let p = Park::of(&parked(10_000_000), GRACE_MS).unwrap();
        let d = p.describe(10_000_000);
        assert!(d.starts_with("parked by alice until "), "{d}");
        assert!(d.contains("call back") && d.contains("Mei"), "{d}");
        assert!(!d.contains('\u{1b}'), "{d}");
    }
}
