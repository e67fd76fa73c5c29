//! The one dialog mechanism: a question, optional text fields (Tab moves between them),
//! Enter confirms and Esc cancels; what confirming does is its [`Pending`].

use super::TextInput;
use crate::domain::SeenLock;
use crate::domain::texts::{CannedText, Purpose, Saying};

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
    /// Release, with an optional reason.
    Release {
        id: i64,
        token: i64,
    },
    /// Skip (release as skipped, take the next), with an optional reason.
    Skip {
        id: i64,
        token: i64,
    },
    /// Park the item (fields: until when, why).
    Park {
        id: i64,
        token: i64,
    },
    /// Accept the item under review (field: an optional comment).
    Accept {
        id: i64,
        token: i64,
    },
    /// Reject the item under review back to its maker (field: the reason).
    Reject {
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
    /// Supervisor: return a parked item to the pool (its park ended early).
    Unpark {
        id: i64,
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
    /// Add the typed text to the item's comment thread (field: comment).
    AddComment {
        id: i64,
    },
    /// Supervisor: assign an item (fields: user, reason); `token` fences a held one.
    Assign {
        id: i64,
        token: Option<i64>,
    },
    /// Supervisor: change an open item's columns (fields, one per column a supervisor
    /// may set); the values it had, so that only what changed is sent.
    EditItem {
        id: i64,
        before: Vec<(crate::domain::fields::Col, crate::domain::fields::Value)>,
    },
    /// A supervisor completes a record that breaks its fields' rules (fields: result,
    /// the reason for overriding them).
    CompleteAnyway {
        id: i64,
        token: i64,
    },
    /// Supervisor: define a field of `queue` (`name` none: a new one, named in the
    /// dialog) or change field `name` (fields: the definition's rules).
    DefineField {
        queue: String,
        name: Option<String>,
    },
    /// Supervisor: delete field `name` of `queue`.
    DeleteField {
        queue: String,
        name: String,
    },
    /// Merge open item `id` into `into` as its duplicate (field: an optional reason); the
    /// holder's `token`, or none for a supervisor's merge.
    Merge {
        id: i64,
        into: i64,
        token: Option<i64>,
    },
    /// The holder marks a checklist's line not done (field: reason).
    NotDone {
        id: i64,
        token: i64,
        field: String,
        line: String,
    },
}

/// What a dialog field is: its label, what messages call it, and whether it must be
/// filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSpec {
    /// Shown above the field: "Reason (required, recorded and shown to the holder)".
    pub label: String,
    /// What messages call it: "A reason", "To user", "Lock seconds".
    pub name: &'static str,
    /// Confirming needs it non-empty ("A reason is required").
    pub required: bool,
}

impl FieldSpec {
    /// A field that must be filled in.
    pub(crate) fn required(name: &'static str, label: impl Into<String>) -> FieldSpec {
        FieldSpec {
            label: label.into(),
            name,
            required: true,
        }
    }

    /// A field that may stay empty.
    pub(crate) fn optional(name: &'static str, label: impl Into<String>) -> FieldSpec {
        FieldSpec {
            required: false,
            ..FieldSpec::required(name, label)
        }
    }

    /// The reason a change needs (required).
    pub(crate) fn reason(label: impl Into<String>) -> FieldSpec {
        FieldSpec::required("A reason", label)
    }
}

/// A text field of a dialog: what it is and what was typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub spec: FieldSpec,
    pub buf: TextInput,
    /// The ready-made texts it offers (Tab, Ctrl-Space), when it takes one.
    pub offer: Option<Offer>,
}

/// A field's ready-made texts: which (its queue's, for one kind of dialog), the one
/// chosen (its code goes into the event, even when the text is edited after), and the
/// list of matches while it is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub queue: String,
    pub purpose: Purpose,
    /// The code of the text chosen, kept until the field is emptied.
    pub chosen: Option<String>,
    pub menu: Option<Menu>,
}

/// The ready-made texts matching what is typed, one of them selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Menu {
    pub choices: Vec<CannedText>,
    pub selected: usize,
}

/// The one dialog mechanism: a question, optional text fields (Tab moves between them),
/// Enter/Esc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dialog {
    pub title: String,
    pub message: String,
    /// Text fields, when the dialog asks for text.
    pub inputs: Vec<Field>,
    /// The field being typed in.
    pub focus: usize,
    pub pending: Pending,
    /// Shown after a refused Enter (e.g. "A reason is required").
    pub error: Option<String>,
}

impl Dialog {
    /// A dialog with no fields.
    pub(crate) fn new(
        title: impl Into<String>,
        message: impl Into<String>,
        pending: Pending,
    ) -> Dialog {
        Dialog {
            title: title.into(),
            message: message.into(),
            inputs: Vec::new(),
            focus: 0,
            pending,
            error: None,
        }
    }

    /// Adds a text field holding `value`.
    pub(crate) fn field(mut self, spec: FieldSpec, value: &str) -> Dialog {
        self.inputs.push(Field {
            spec,
            buf: TextInput::line(value),
            offer: None,
        });
        self
    }

    /// The last field added offers `queue`'s ready-made texts for `purpose`.
    pub(crate) fn offering(mut self, queue: &str, purpose: Purpose) -> Dialog {
        if let Some(f) = self.inputs.last_mut() {
            f.offer = Some(Offer {
                queue: queue.to_string(),
                purpose,
                chosen: None,
                menu: None,
            });
        }
        self
    }

    /// What field `i` says: its trimmed text and the code of the ready-made text chosen
    /// for it (none once the field is emptied).
    pub fn saying(&self, i: usize) -> Saying {
        let text = self.value(i);
        let code = (self.inputs.get(i))
            .and_then(|f| f.offer.as_ref())
            .and_then(|o| o.chosen.as_deref())
            .filter(|_| !text.is_empty());
        Saying::of(&text, code)
    }

    /// The trimmed text of field `i` (empty when there is none).
    pub fn value(&self, i: usize) -> String {
        self.inputs
            .get(i)
            .map(|f| f.buf.text().trim().to_string())
            .unwrap_or_default()
    }

    /// The field messages call `name`.
    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
        self.inputs.iter().position(|f| f.spec.name == name)
    }

    /// The first required field left empty, and what to say about it.
    pub(crate) fn missing(&self) -> Option<(usize, String)> {
        let i = (0..self.inputs.len())
            .find(|&i| self.inputs[i].spec.required && self.value(i).is_empty())?;
        Some((i, format!("{} is required", self.inputs[i].spec.name)))
    }

    /// The field being typed in.
    pub(crate) fn focused_mut(&mut self) -> Option<&mut TextInput> {
        let i = self.focus;
        self.inputs.get_mut(i).map(|f| &mut f.buf)
    }
}
