//! An item's comment thread: remarks appended with their author and time, never edited
//! away (a correction is a new comment). The holder's working notes are something else:
//! one field the lock holder rewrites.

use serde::Serialize;

use super::time::Millis;

/// One comment on an item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Comment {
    pub id: i64,
    pub item_id: i64,
    pub at: Millis,
    /// The name the author acted under.
    pub author: String,
    /// The author's OS login.
    pub os_user: String,
    pub text: String,
}

/// A supervisor's change to an open item: each field given is set (`due: Some(None)`
/// clears the due time).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ItemEdit {
    pub priority: Option<i64>,
    pub due: Option<Option<Millis>>,
    pub queue: Option<String>,
}

impl ItemEdit {
    /// True when nothing would change.
    pub(crate) fn is_empty(&self) -> bool {
        self.priority.is_none() && self.due.is_none() && self.queue.is_none()
    }
}
