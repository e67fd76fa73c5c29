//! An item's comment thread: remarks appended with their author and time, never edited
//! away (a correction is a new comment). The holder's working notes are something else:
//! one field the lock holder rewrites. Also a supervisor's edit of an item's columns.

use serde::Serialize;

use super::fields::{Col, Value};
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

/// A supervisor's change to an open item: the new value of each column given, by
/// column (those a supervisor may set: `Who::Supervisor` in the field table);
/// `Value::Time(None)` clears a time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ItemEdit {
    pub values: Vec<(Col, Value)>,
}

impl ItemEdit {
    /// This edit with `col` set to `v` (replacing a value given before).
    pub fn with(mut self, col: Col, v: Value) -> ItemEdit {
        self.values.retain(|(c, _)| *c != col);
        self.values.push((col, v));
        self
    }

    /// The new value of `col`, if the edit gives one.
    pub fn value(&self, col: Col) -> Option<&Value> {
        self.values.iter().find(|(c, _)| *c == col).map(|(_, v)| v)
    }

    /// True when nothing would change.
    pub(crate) fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}
