//! The one dialog mechanism: a question, optional text fields (Tab moves between them),
//! Enter confirms and Esc cancels; what confirming does is its [`Pending`].

use super::TextBuf;
use crate::domain::SeenLock;

/// What a confirmation dialog does when confirmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pending {
    Complete {
        id: i64,
        token: i64,
    },
    /// Complete, then take the next item (queue filter, skips) in the same transaction.
    CompleteNext {
        id: i64,
        token: i64,
    },
    Fail {
        id: i64,
        token: i64,
    },
    /// Add the kept notes of a lost item as a comment.
    Comment {
        id: i64,
    },
    /// Quit although notes are unsaved (they are kept nowhere else).
    Quit,
    /// Nothing: an information popup.
    Dismiss,
    /// Supervisor: return a held item to the pool (fenced by the lock seen).
    Unlock {
        seen: SeenLock,
    },
    /// Supervisor: give a held item to another user (fields: user, reason).
    Reassign {
        id: i64,
        token: i64,
    },
    /// Supervisor: unlock every lock matching a filter, as seen.
    UnlockMany {
        locks: Vec<SeenLock>,
    },
    /// Supervisor: reopen a failed or cancelled item.
    Requeue {
        id: i64,
    },
    /// Supervisor: cancel an open item (field: reason).
    Cancel {
        id: i64,
    },
    /// Supervisor: change a queue's settings (fields: lock, warning, WIP limit, paused,
    /// take order).
    QueueSettings {
        name: String,
    },
}

/// The one dialog mechanism: a question, optional text fields (Tab moves between them),
/// Enter/Esc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dialog {
    pub title: String,
    pub message: String,
    /// Text fields and their labels, when the dialog asks for text.
    pub inputs: Vec<(String, TextBuf)>,
    /// The field being typed in.
    pub focus: usize,
    /// Confirming needs every field non-empty.
    pub required: bool,
    pub pending: Pending,
    /// Shown after a refused Enter (e.g. "a reason is required").
    pub error: Option<String>,
}

impl Dialog {
    /// A dialog with no fields.
    pub fn new(title: impl Into<String>, message: impl Into<String>, pending: Pending) -> Dialog {
        Dialog {
            title: title.into(),
            message: message.into(),
            inputs: Vec::new(),
            focus: 0,
            required: false,
            pending,
            error: None,
        }
    }

    /// Adds a text field.
    pub fn field(mut self, label: impl Into<String>, value: &str) -> Dialog {
        self.inputs.push((label.into(), TextBuf::line(value)));
        self
    }

    /// Every field must be filled in.
    pub fn required(mut self) -> Dialog {
        self.required = true;
        self
    }

    /// The trimmed text of field `i` (empty when there is none).
    pub fn value(&self, i: usize) -> String {
        self.inputs
            .get(i)
            .map(|(_, b)| b.text().trim().to_string())
            .unwrap_or_default()
    }

    /// The field being typed in.
    pub fn focused_mut(&mut self) -> Option<&mut TextBuf> {
        let i = self.focus;
        self.inputs.get_mut(i).map(|(_, b)| b)
    }
}
