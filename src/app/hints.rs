//! The key-hint line at the bottom: which entries each screen shows; their keys come from
//! the key table (`super::keymap::KEYMAP`), as the `?` help's do.

use ratatui::crossterm::event::KeyCode as K;

use super::keymap::{Action, Action as A, Key, first_key};

/// One entry of the key-hint line at the bottom: the first key of each of its actions, as
/// the key table binds them, and what they do together ("j/k scroll", "1-4 views"). An
/// entry without actions is a plain word ("read-only").
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hint {
    pub actions: &'static [Action],
    pub what: &'static str,
}

impl Hint {
    /// The keys as the hint line writes them ("j/k", "1-4", "Ctrl-S") and what they do.
    pub(crate) fn parts(&self) -> (String, &'static str) {
        if self.actions.is_empty() {
            return (self.what.to_string(), "");
        }
        let keys: Vec<Key> = self.actions.iter().filter_map(|a| first_key(*a)).collect();
        let digits: Vec<u32> = keys
            .iter()
            .filter_map(|k| match k.code {
                K::Char(c) if !k.ctrl => c.to_digit(10),
                _ => None,
            })
            .collect();
        if digits.len() > 2
            && digits.len() == keys.len()
            && digits.windows(2).all(|w| w[1] == w[0] + 1)
        {
            return (
                format!("{}-{}", digits[0], digits[digits.len() - 1]),
                self.what,
            );
        }
        let names: Vec<String> = keys.iter().map(|k| k.name()).collect();
        (names.join("/"), self.what)
    }
}

const fn h(actions: &'static [Action], what: &'static str) -> Hint {
    Hint { actions, what }
}

const SCROLL: &[Action] = &[A::Down, A::Up];
const VIEWS: Hint = h(
    &[A::ViewQueue, A::ViewMine, A::ViewLocks, A::ViewStats],
    "views",
);
const HELP: Hint = h(&[A::Help], "help");
const QUIT: Hint = h(&[A::Quit], "quit");
const BACK: Hint = h(&[A::Back], "back");
const FILTER: Hint = h(&[A::Filter], "filter");
const TAKE_NEXT: Hint = h(&[A::TakeNext], "take next");
const READ_ONLY: Hint = h(&[], "read-only");
const HOLDERS_DAY: Hint = h(&[A::Activity], "holder's day");

/// What the screen shows, as far as the key-hint line is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hints {
    Editor,
    /// A dialog with several fields.
    DialogFields,
    Dialog,
    Report,
    /// The detail pane of an item you hold.
    DetailHeld,
    /// The detail pane of an item you hold whose queue defines fields (the form).
    DetailForm,
    /// A field of the form being edited.
    FieldEdit,
    /// A queue's field definitions (supervisors).
    FieldAdmin,
    /// The detail pane of an open item you do not hold (looking before taking).
    DetailOpen,
    Detail,
    LocksSupervisor,
    LocksReadOnly,
    StatsSupervisor,
    StatsReadOnly,
    Mine,
    Queue,
    /// The Review view's list.
    Review,
    /// The detail pane of an item you took for review.
    DetailReview,
}

impl Hints {
    /// The entries of the hint line.
    pub(crate) fn entries(self) -> &'static [Hint] {
        HINTS
            .iter()
            .find(|(set, _)| *set == self)
            .map_or(&[], |(_, entries)| entries)
    }

    #[cfg(test)]
    pub(crate) const ALL: [Hints; 18] = [
        Hints::Review,
        Hints::DetailReview,
        Hints::Editor,
        Hints::FieldAdmin,
        Hints::DetailForm,
        Hints::FieldEdit,
        Hints::DialogFields,
        Hints::Dialog,
        Hints::Report,
        Hints::DetailHeld,
        Hints::DetailOpen,
        Hints::Detail,
        Hints::LocksSupervisor,
        Hints::LocksReadOnly,
        Hints::StatsSupervisor,
        Hints::StatsReadOnly,
        Hints::Mine,
        Hints::Queue,
    ];
}

/// The hint lines, by what the screen shows.
const HINTS: &[(Hints, &[Hint])] = &[
    (
        Hints::Editor,
        &[
            h(&[A::SaveNotes], "save"),
            h(&[A::CloseEditor], "close (text kept)"),
        ],
    ),
    (
        Hints::DialogFields,
        &[
            h(&[A::NextField], "next field"),
            h(&[A::Confirm], "confirm"),
            h(&[A::Cancel], "cancel"),
        ],
    ),
    (
        Hints::Dialog,
        &[h(&[A::Confirm], "confirm"), h(&[A::Cancel], "cancel")],
    ),
    (Hints::Report, &[h(SCROLL, "scroll"), BACK, HELP]),
    (
        Hints::DetailHeld,
        &[
            h(&[A::Complete], "complete"),
            h(&[A::CompleteNext], "complete+next"),
            h(&[A::Fail], "fail"),
            h(&[A::Release], "release"),
            h(&[A::Skip], "skip"),
            h(&[A::EditNotes], "notes"),
            h(SCROLL, "scroll"),
            BACK,
            HELP,
        ],
    ),
    (
        Hints::DetailForm,
        &[
            h(&[A::Complete], "complete"),
            h(&[A::Fail], "fail"),
            h(&[A::Release], "release"),
            h(&[A::FieldNext, A::FieldPrev], "fields"),
            h(&[A::EditField], "edit"),
            h(&[A::TickLine], "tick"),
            h(&[A::EditNotes], "notes"),
            BACK,
            HELP,
        ],
    ),
    (
        Hints::FieldAdmin,
        &[
            h(&[A::AddField], "add"),
            h(&[A::ChangeField], "change"),
            h(&[A::DeleteField], "delete"),
            h(&[A::MoveFieldUp, A::MoveFieldDown], "move"),
            BACK,
            HELP,
        ],
    ),
    (
        Hints::FieldEdit,
        &[h(&[A::Confirm], "save"), h(&[A::Cancel], "cancel")],
    ),
    (
        Hints::DetailOpen,
        &[
            READ_ONLY,
            h(&[A::TakePreviewed], "take it"),
            h(&[A::Comment], "comment"),
            h(SCROLL, "scroll"),
            BACK,
            HELP,
        ],
    ),
    (Hints::Detail, &[h(SCROLL, "scroll"), BACK, TAKE_NEXT, HELP]),
    (
        Hints::LocksSupervisor,
        &[
            h(&[A::Unlock], "unlock/unpark"),
            h(&[A::Reassign], "reassign"),
            h(&[A::UnlockAll], "unlock all shown"),
            h(&[A::CancelItem], "cancel"),
            HOLDERS_DAY,
            FILTER,
            HELP,
        ],
    ),
    (
        Hints::LocksReadOnly,
        &[READ_ONLY, HOLDERS_DAY, FILTER, VIEWS, HELP, QUIT],
    ),
    (
        Hints::StatsSupervisor,
        &[
            h(SCROLL, "select queue"),
            h(&[A::QueueSettings], "queue settings"),
            h(&[A::QueueFields], "fields"),
            VIEWS,
            HELP,
            QUIT,
        ],
    ),
    (Hints::StatsReadOnly, &[READ_ONLY, VIEWS, HELP, QUIT]),
    (
        Hints::Mine,
        &[
            h(&[A::Open], "open"),
            h(
                &[A::Complete, A::Fail, A::Release, A::Skip, A::EditNotes],
                "act on row",
            ),
            TAKE_NEXT,
            VIEWS,
            HELP,
            QUIT,
        ],
    ),
    (
        Hints::Review,
        &[
            h(&[A::TakeNext], "review next"),
            h(&[A::Open], "take/open"),
            h(&[A::Preview], "look"),
            VIEWS,
            HELP,
            QUIT,
        ],
    ),
    (
        Hints::DetailReview,
        &[
            h(&[A::Accept], "accept"),
            h(&[A::Reject], "reject"),
            h(&[A::Release], "release"),
            h(&[A::EditNotes], "notes"),
            h(SCROLL, "scroll"),
            BACK,
            HELP,
        ],
    ),
    (
        Hints::Queue,
        &[
            TAKE_NEXT,
            h(&[A::Open], "take/open"),
            FILTER,
            VIEWS,
            HELP,
            QUIT,
        ],
    ),
];
