//! Queue settings shared by every user of a database.

use serde::Serialize;

/// Default lock age: a lock not renewed for this long expires.
pub(crate) const DEFAULT_LOCK_SECONDS: i64 = 1800;
/// Default warning time before expiry.
pub(crate) const DEFAULT_WARN_SECONDS: i64 = 120;
/// Default park grace: how long a woken park waits for its owner before it returns to
/// the pool.
pub(crate) const DEFAULT_PARK_GRACE_SECONDS: i64 = 3600;
/// Default undo window: how long after a complete, fail, release, skip or park its maker
/// may undo it.
pub(crate) const DEFAULT_UNDO_SECONDS: i64 = 30;
/// The queue items go to when none is named.
pub(crate) const DEFAULT_QUEUE: &str = "default";

/// The order in which a queue's items are taken (and listed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TakeOrder {
    /// Priority (higher first), then age: the default.
    #[default]
    Priority,
    /// Due time (overdue and soonest first; items without one after those with one),
    /// then priority, then age.
    Due,
}

impl TakeOrder {
    /// The name stored and typed (`priority`, `due`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TakeOrder::Priority => "priority",
            TakeOrder::Due => "due",
        }
    }

    /// Parses the stored or typed name.
    pub(crate) fn parse(s: &str) -> Option<TakeOrder> {
        match s {
            "priority" => Some(TakeOrder::Priority),
            "due" => Some(TakeOrder::Due),
            _ => None,
        }
    }

    /// The sort key of an item under this order, smallest first: comparing keys of items
    /// from queues with different orders gives the mixed order (due items of due-ordered
    /// queues first, soonest first; then everything by priority and age).
    pub(crate) fn key(
        self,
        due_at: Option<i64>,
        priority: i64,
        created_at: i64,
        id: i64,
    ) -> TakeKey {
        let due = match self {
            TakeOrder::Due => due_at.unwrap_or(i64::MAX),
            TakeOrder::Priority => i64::MAX,
        };
        (due, priority.saturating_neg(), created_at, id)
    }
}

/// A take-order sort key (see [`TakeOrder::key`]).
pub(crate) type TakeKey = (i64, i64, i64, i64);

/// One queue's settings, as stored in `queues`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueueSettings {
    pub name: String,
    pub lock_seconds: i64,
    pub warn_seconds: i64,
    pub max_per_user: Option<i64>,
    pub paused: bool,
    /// The take order (`order` in JSON).
    #[serde(rename = "order")]
    pub order: TakeOrder,
    /// How long a woken park waits for its owner before it returns to the pool.
    pub park_grace_seconds: i64,
    /// How long after a complete, fail, release, skip or park its maker may undo it (0:
    /// no undo).
    pub undo_seconds: i64,
    /// The share of completions that wait for a second person, 0 (none) to 100 (all),
    /// chosen by `domain::review::bucket`.
    pub review_percent: i64,
    /// Each person's first this many completions in the queue always wait for review.
    pub review_new: i64,
}

impl QueueSettings {
    /// A queue with the default settings.
    pub fn new(name: &str) -> Self {
        QueueSettings {
            name: name.to_string(),
            lock_seconds: DEFAULT_LOCK_SECONDS,
            warn_seconds: DEFAULT_WARN_SECONDS,
            max_per_user: None,
            paused: false,
            order: TakeOrder::Priority,
            park_grace_seconds: DEFAULT_PARK_GRACE_SECONDS,
            undo_seconds: DEFAULT_UNDO_SECONDS,
            review_percent: 0,
            review_new: 0,
        }
    }

    /// The park grace in milliseconds.
    pub(crate) fn park_grace_ms(&self) -> i64 {
        self.park_grace_seconds.saturating_mul(1000)
    }

    /// The undo window in milliseconds.
    pub(crate) fn undo_ms(&self) -> i64 {
        self.undo_seconds.saturating_mul(1000)
    }

    /// Lock age in milliseconds.
    pub(crate) fn lock_ms(&self) -> i64 {
        self.lock_seconds * 1000
    }
}

/// A change to a queue's settings; `None` leaves a setting as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueUpdate {
    pub lock_seconds: Option<i64>,
    pub warn_seconds: Option<i64>,
    /// `Some(None)` removes the limit, `Some(Some(n))` sets it.
    pub max_per_user: Option<Option<i64>>,
    pub paused: Option<bool>,
    pub order: Option<TakeOrder>,
    pub park_grace_seconds: Option<i64>,
    pub undo_seconds: Option<i64>,
    /// The share reviewed, 0 to 100 (`--review none|all|PCT%`).
    pub review_percent: Option<i64>,
    pub review_new: Option<i64>,
}

/// A queue setting, as `caseload queue set` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    LockSeconds,
    WarnSeconds,
    MaxPerUser,
    Paused,
    ParkGrace,
    UndoSeconds,
    Review,
    ReviewNew,
}

impl Setting {}

/// A refused queue setting: which one, and why (the message names it too).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{msg}")]
pub struct SettingError {
    pub field: Setting,
    pub msg: String,
}

fn refuse(field: Setting, msg: String) -> SettingError {
    SettingError { field, msg }
}

impl QueueUpdate {
    /// Applies the change to `current`, checking the result; the error names the setting.
    pub(crate) fn apply(&self, current: &QueueSettings) -> Result<QueueSettings, SettingError> {
        let mut next = current.clone();
        if let Some(v) = self.lock_seconds {
            if !(1..=7 * 86_400).contains(&v) {
                return Err(refuse(
                    Setting::LockSeconds,
                    format!("lock-seconds must be between 1 and 604800 (a week), not {v}"),
                ));
            }
            next.lock_seconds = v;
        }
        if let Some(v) = self.warn_seconds {
            if v < 0 {
                return Err(refuse(
                    Setting::WarnSeconds,
                    format!("warn-seconds must not be negative, not {v}"),
                ));
            }
            next.warn_seconds = v;
        }
        if let Some(v) = self.max_per_user {
            if let Some(n) = v
                && n < 1
            {
                return Err(refuse(
                    Setting::MaxPerUser,
                    format!("max-per-user must be at least 1 (or 0 for no limit), not {n}"),
                ));
            }
            next.max_per_user = v;
        }
        if let Some(p) = self.paused {
            next.paused = p;
        }
        if let Some(o) = self.order {
            next.order = o;
        }
        if let Some(v) = self.park_grace_seconds {
            if !(60..=7 * 86_400).contains(&v) {
                return Err(refuse(
                    Setting::ParkGrace,
                    format!("park-grace-seconds must be between 60 and 604800 (a week), not {v}"),
                ));
            }
            next.park_grace_seconds = v;
        }
        if let Some(v) = self.undo_seconds {
            if !(0..=3600).contains(&v) {
                return Err(refuse(
                    Setting::UndoSeconds,
                    format!("undo-seconds must be between 0 (no undo) and 3600, not {v}"),
                ));
            }
            next.undo_seconds = v;
        }
        self.apply_review(&mut next)?;
        if next.warn_seconds >= next.lock_seconds {
            return Err(refuse(
                Setting::WarnSeconds,
                format!(
                    "warn-seconds ({}) must be less than lock-seconds ({})",
                    next.warn_seconds, next.lock_seconds
                ),
            ));
        }
        Ok(next)
    }

    /// The review settings' part of [`QueueUpdate::apply`].
    fn apply_review(&self, next: &mut QueueSettings) -> Result<(), SettingError> {
        if let Some(v) = self.review_percent {
            if !(0..=100).contains(&v) {
                let msg = format!("review must be between 0% and 100%, not {v}%");
                return Err(refuse(Setting::Review, msg));
            }
            next.review_percent = v;
        }
        if let Some(v) = self.review_new {
            if !(0..=1000).contains(&v) {
                let msg = format!("review-new must be between 0 and 1000, not {v}");
                return Err(refuse(Setting::ReviewNew, msg));
            }
            next.review_new = v;
        }
        Ok(())
    }

    /// True when the update changes nothing.
    pub(crate) fn is_empty(&self) -> bool {
        *self == QueueUpdate::default()
    }
}

/// The known queue a mistyped `name` most likely meant: the same name in another case, or
/// one within two edits (`helpdsk` → `helpdesk`), or one it starts (`help` → `helpdesk`);
/// `None` when nothing is that close.
pub(crate) fn closest<'a>(name: &str, known: &'a [String]) -> Option<&'a str> {
    let lower = name.to_lowercase();
    let limit = if name.chars().count() <= 3 { 1 } else { 2 };
    known
        .iter()
        .filter_map(|k| {
            let kl = k.to_lowercase();
            let d = if kl == lower {
                0
            } else if kl.starts_with(&lower) && lower.chars().count() >= 3 {
                1
            } else {
                edit_distance(&lower, &kl)
            };
            (d <= limit).then_some((d, k.as_str()))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Checks a queue name; the problem names it "name" ("name is empty"), so that each
/// caller says whose (`--queue: …`, `Queue: …`, `queue …`).
pub(crate) fn validate_queue_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("name is empty".into());
    }
    if name.chars().count() > 100 {
        return Err("name is longer than 100 characters".into());
    }
    if name.chars().any(|c| c.is_control()) {
        return Err("name contains control characters".into());
    }
    if let Some(c) = name
        .chars()
        .find(|&c| super::sanitize::is_invisible_format(c))
    {
        return Err(format!(
            "name contains the invisible character U+{:04X} (bidi or zero-width); a \
             name must look like what it is",
            c as u32
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mistyped_queue_name_finds_the_one_meant() {
        let known: Vec<String> = ["helpdesk", "verification", "fulfilment"]
            .map(String::from)
            .to_vec();
        assert_eq!(closest("helpdsk", &known), Some("helpdesk"));
        assert_eq!(closest("HelpDesk", &known), Some("helpdesk"));
        assert_eq!(closest("verfication", &known), Some("verification"));
        assert_eq!(closest("help", &known), Some("helpdesk"));
        assert_eq!(closest("billing", &known), None);
        assert_eq!(closest("x", &known), None);
    }

    #[test]
    fn updates_are_validated_against_the_result() {
        let q = QueueSettings::new("a");
        let ok = QueueUpdate {
            lock_seconds: Some(600),
            max_per_user: Some(Some(3)),
            ..Default::default()
        }
        .apply(&q)
        .unwrap();
        assert_eq!(ok.lock_seconds, 600);
        assert_eq!(ok.max_per_user, Some(3));
        let too_short = QueueUpdate {
            lock_seconds: Some(60),
            ..Default::default()
        };
        let e = too_short.apply(&q).unwrap_err();
        assert_eq!(e.field, Setting::WarnSeconds);
        assert!(e.msg.contains("warn-seconds"), "{e}");
        let zero = QueueUpdate {
            lock_seconds: Some(0),
            ..Default::default()
        };
        assert!(zero.apply(&q).is_err());
        let unlimited = QueueUpdate {
            max_per_user: Some(None),
            ..Default::default()
        };
        assert_eq!(unlimited.apply(&ok).unwrap().max_per_user, None);
    }
}
