//! The one key table: dispatch, the `?` help screen and the key-hint line at the bottom
//! are all generated from it.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

pub(crate) use super::hints::Hints;

/// What a key asks for; `update` decides what it means in the current view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    ViewQueue,
    ViewMine,
    ViewLocks,
    ViewStats,
    /// `5`: the Review view (items waiting for review that you may review).
    ViewReview,
    NextView,
    PrevView,
    /// `q`: back out of an item or report; quit from a list.
    Quit,
    /// Ctrl-C: quit from anywhere.
    QuitNow,
    /// Ctrl-Z: suspend to the shell; `fg` comes back.
    Suspend,
    HalfPageDown,
    HalfPageUp,
    Help,
    Back,
    Down,
    Up,
    PageDown,
    PageUp,
    Top,
    Bottom,
    TakeNext,
    Open,
    Filter,
    Complete,
    CompleteNext,
    ConfirmNext,
    Fail,
    Release,
    Skip,
    EditNotes,
    /// `P`: park the item until a time (a call-back).
    Park,
    /// `u`: undo your last complete, fail, release, skip or park (in Locks, and when
    /// there is none, `u` is the supervisor's unlock).
    Undo,
    SaveNotes,
    CloseEditor,
    Confirm,
    Cancel,
    NextField,
    PrevField,
    /// Ctrl-Space in a dialog: the field's ready-made texts (as Tab).
    OfferTexts,
    Unlock,
    Reassign,
    UnlockAll,
    Requeue,
    CancelItem,
    QueueSettings,
    Activity,
    FiguresPeriod,
    FiguresSort,
    Preview,
    GoTo,
    TakePreviewed,
    Comment,
    EditItem,
    /// The detail's form: the next field (or checklist line).
    FieldNext,
    FieldPrev,
    /// Edit the focused field in place.
    EditField,
    /// Tick (or untick) the focused checklist line.
    TickLine,
    /// Mark the focused checklist line not done, with a reason.
    NotDoneLine,
    /// Supervisor: the selected queue's field definitions (Stats view).
    QueueFields,
    AddField,
    ChangeField,
    DeleteField,
    MoveFieldUp,
    MoveFieldDown,
    /// `D`: into (and out of) the "Possibly the same" box.
    FocusSimilar,
    /// Look at the selected candidate, read-only.
    LookAtCandidate,
    /// Merge the open item into the selected candidate (confirm with Enter).
    MergeInto,
    /// The selected candidate is not the same: never offered again.
    NotSame,
    /// `A`: accept the item under review (done).
    Accept,
    /// `R`: reject the item under review back to its maker, for a reason.
    Reject,
}

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// Any view, when no dialog or editor is open.
    Global,
    /// Moving through a list or the detail pane.
    Moving,
    /// Working an item you hold (its detail pane, or a row in Mine).
    Item,
    /// The notes editor.
    Editor,
    /// Supervisor actions (staff are told "supervisor only"), and the read-only
    /// activity report anyone may open.
    Supervisor,
    /// Dialogs and the filter prompt.
    Dialog,
    /// Looking at an item you do not hold (Space, v, `:`).
    Preview,
    /// The detail's form, on an item whose queue defines fields.
    Form,
    /// A queue's field definitions (supervisors, from the Stats view).
    Fields,
    /// The detail's "Possibly the same" box (an item with candidates).
    Similar,
    /// Reviewing an item you took for review (its detail pane, or its row in Review).
    Review,
}

impl Context {
    /// The heading of the context on the help screen.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Context::Global => "Anywhere",
            Context::Moving => "Lists and the detail pane",
            Context::Item => "Working an item you hold",
            Context::Editor => "Notes editor",
            Context::Supervisor => "Supervisors (staff may use t; the rest says supervisor only)",
            Context::Dialog => "Dialogs and the filter prompt",
            Context::Preview => "Looking at an item you do not hold (read-only)",
            Context::Form => "The fields form (an item whose queue defines fields)",
            Context::Fields => "A queue's fields (supervisors: F in the Stats view)",
            Context::Similar => "Possibly the same (the detail's box of likely duplicates)",
            Context::Review => "Reviewing an item (5: Review view; n there takes the next)",
        }
    }

    pub(crate) const ALL: [Context; 11] = [
        Context::Global,
        Context::Moving,
        Context::Preview,
        Context::Item,
        Context::Review,
        Context::Form,
        Context::Similar,
        Context::Supervisor,
        Context::Fields,
        Context::Editor,
        Context::Dialog,
    ];
}

use Action as A;
use Context as C;
use KeyCode as K;

/// A key: its code, with Ctrl held or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
}

impl Key {
    /// True when `event` is this key.
    fn matches(self, event: &KeyEvent) -> bool {
        self.code == event.code && self.ctrl == event.modifiers.contains(KeyModifiers::CONTROL)
    }

    /// How the key is written on the help screen and the key-hint line.
    pub(crate) fn name(self) -> String {
        let base = match self.code {
            K::Char(' ') => "Space".to_string(),
            K::Char(c) => c.to_string(),
            K::Tab => "Tab".into(),
            K::Esc => "Esc".into(),
            K::Enter => "Enter".into(),
            K::Down => "Down".into(),
            K::Up => "Up".into(),
            K::PageDown => "PgDn".into(),
            K::PageUp => "PgUp".into(),
            K::Home => "Home".into(),
            K::End => "End".into(),
            K::BackTab => "Shift-Tab".into(),
            other => format!("{other:?}"),
        };
        if self.ctrl {
            format!("Ctrl-{}", base.to_uppercase())
        } else {
            base
        }
    }
}

/// One row of the key table: every key that does one thing in one context (helix style:
/// `j` and `Down` are one row).
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub keys: &'static [Key],
    pub context: Context,
    pub action: Action,
    pub help: &'static str,
}

impl Binding {
    /// The row's keys as the help screen writes them: "j / Down".
    pub(crate) fn keys_text(&self) -> String {
        let names: Vec<String> = self.keys.iter().map(|k| k.name()).collect();
        names.join(" / ")
    }
}

const fn b(keys: &'static [Key], context: Context, action: Action, help: &'static str) -> Binding {
    Binding {
        keys,
        context,
        action,
        help,
    }
}

const fn k(code: KeyCode) -> Key {
    Key { code, ctrl: false }
}

const fn ch(c: char) -> Key {
    k(KeyCode::Char(c))
}

const fn ctrl(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        ctrl: true,
    }
}

/// Every key the TUI understands.
pub const KEYMAP: &[Binding] = &[
    b(
        &[ch('1')],
        C::Global,
        A::ViewQueue,
        "Queue view: open items in take order",
    ),
    b(
        &[ch('2')],
        C::Global,
        A::ViewMine,
        "Mine view: your locks and lost-lock notices",
    ),
    b(
        &[ch('3')],
        C::Global,
        A::ViewLocks,
        "Locks view: all held locks, oldest first",
    ),
    b(
        &[ch('4')],
        C::Global,
        A::ViewStats,
        "Stats view: counts, completions, lock ages",
    ),
    b(
        &[ch('5')],
        C::Global,
        A::ViewReview,
        "Review view: work waiting for review (never your own)",
    ),
    b(&[k(K::Tab)], C::Global, A::NextView, "next view"),
    b(&[k(K::BackTab)], C::Global, A::PrevView, "previous view"),
    b(
        &[ch('/')],
        C::Global,
        A::Filter,
        "filter: text, queue:Q, state:failed; Locks: holder:U",
    ),
    b(
        &[ch('n')],
        C::Global,
        A::TakeNext,
        "take the next item (in Review: the next to review)",
    ),
    b(
        &[ch(':'), ch('#')],
        C::Global,
        A::GoTo,
        "go to an item by its id",
    ),
    b(
        &[ch('p')],
        C::Global,
        A::FiguresPeriod,
        "Stats: figures by person and queue, today / 7 / 30 days",
    ),
    b(
        &[ch('o')],
        C::Global,
        A::FiguresSort,
        "Stats figures: sort people by done / median / lost",
    ),
    b(&[ch('?')], C::Global, A::Help, "this help"),
    b(&[k(K::Esc)], C::Global, A::Back, "close the detail pane"),
    b(
        &[ch('q')],
        C::Global,
        A::Quit,
        "back from an item; quit from a list (your locks stay held)",
    ),
    b(&[ctrl('c')], C::Global, A::QuitNow, "quit from anywhere"),
    b(
        &[ctrl('z')],
        C::Global,
        A::Suspend,
        "suspend to the shell (fg comes back)",
    ),
    b(&[ch('j'), k(K::Down)], C::Moving, A::Down, "down"),
    b(&[ch('k'), k(K::Up)], C::Moving, A::Up, "up"),
    b(
        &[k(K::PageDown), ctrl('f')],
        C::Moving,
        A::PageDown,
        "page down",
    ),
    b(&[k(K::PageUp), ctrl('b')], C::Moving, A::PageUp, "page up"),
    b(&[ctrl('d')], C::Moving, A::HalfPageDown, "half a page down"),
    b(&[ctrl('u')], C::Moving, A::HalfPageUp, "half a page up"),
    b(&[ch('g'), k(K::Home)], C::Moving, A::Top, "first row"),
    b(&[ch('G'), k(K::End)], C::Moving, A::Bottom, "last row"),
    b(
        &[k(K::Enter)],
        C::Moving,
        A::Open,
        "take the selected item / open your item",
    ),
    b(
        &[ch(' '), ch('v')],
        C::Moving,
        A::Preview,
        "look at the selected item (read-only; takes nothing)",
    ),
    b(
        &[ch('m')],
        C::Moving,
        A::Comment,
        "add a comment to the item's thread (no lock needed)",
    ),
    b(
        &[ch('t')],
        C::Preview,
        A::TakePreviewed,
        "take the item you are looking at, if it is free",
    ),
    b(
        &[ch('c')],
        C::Item,
        A::Complete,
        "complete (confirm, optional result)",
    ),
    b(
        &[ch('C')],
        C::Item,
        A::CompleteNext,
        "complete and take the next, in one step (confirm)",
    ),
    b(&[ch('f')], C::Item, A::Fail, "fail (reason required)"),
    b(
        &[ch('r')],
        C::Item,
        A::Release,
        "release back to the pool (asks an optional reason)",
    ),
    b(
        &[ch('s')],
        C::Item,
        A::Skip,
        "skip: release and take the next (asks an optional reason)",
    ),
    b(&[ch('e')], C::Item, A::EditNotes, "edit notes"),
    b(
        &[ch('u')],
        C::Item,
        A::Undo,
        "undo your last finish, release, skip or park (soon after)",
    ),
    b(
        &[ch('P')],
        C::Item,
        A::Park,
        "park until a time (a call-back; the lock is released)",
    ),
    b(
        &[ch('A')],
        C::Review,
        A::Accept,
        "accept: done (confirm, optional comment)",
    ),
    b(
        &[ch('R')],
        C::Review,
        A::Reject,
        "reject back to its maker (reason required; Tab: texts)",
    ),
    b(
        &[k(K::Tab), k(K::Down)],
        C::Form,
        A::FieldNext,
        "next field or checklist line (past the last: scrolls)",
    ),
    b(
        &[k(K::BackTab), k(K::Up)],
        C::Form,
        A::FieldPrev,
        "previous field or checklist line",
    ),
    b(
        &[k(K::Enter)],
        C::Form,
        A::EditField,
        "edit the field in place (Enter saves, Esc cancels)",
    ),
    b(
        &[ch(' ')],
        C::Form,
        A::TickLine,
        "tick the checklist line (again: back to do)",
    ),
    b(
        &[ch('X')],
        C::Form,
        A::NotDoneLine,
        "mark the checklist line not done, with a reason",
    ),
    b(
        &[ch('D')],
        C::Similar,
        A::FocusSimilar,
        "into the Possibly the same box (again, or Esc: out of it)",
    ),
    b(
        &[ch('j'), k(K::Down)],
        C::Similar,
        A::Down,
        "next candidate",
    ),
    b(
        &[ch('k'), k(K::Up)],
        C::Similar,
        A::Up,
        "previous candidate",
    ),
    b(
        &[ch(' '), ch('v')],
        C::Similar,
        A::LookAtCandidate,
        "look at the selected candidate (read-only)",
    ),
    b(
        &[ch('M')],
        C::Similar,
        A::MergeInto,
        "merge this item into the candidate (confirm with Enter)",
    ),
    b(
        &[ch('N')],
        C::Similar,
        A::NotSame,
        "not the same: never offered again, for anybody",
    ),
    b(&[k(K::Esc)], C::Similar, A::Back, "out of the box"),
    b(&[ctrl('s')], C::Editor, A::SaveNotes, "save notes"),
    b(
        &[k(K::Esc)],
        C::Editor,
        A::CloseEditor,
        "close the editor (unsaved text is kept)",
    ),
    b(
        &[ch('u')],
        C::Supervisor,
        A::Unlock,
        "unlock the selected lock (reason required); on P: unpark",
    ),
    b(
        &[ch('a')],
        C::Supervisor,
        A::Reassign,
        "reassign a lock, or assign an open item to someone",
    ),
    b(
        &[ch('E')],
        C::Supervisor,
        A::EditItem,
        "edit an open item: priority, due time, queue",
    ),
    b(
        &[ch('U')],
        C::Supervisor,
        A::UnlockAll,
        "unlock all locks the Locks filter shows (count first)",
    ),
    b(
        &[ch('R')],
        C::Supervisor,
        A::Requeue,
        "requeue a failed item (Queue view, / state:failed)",
    ),
    b(
        &[ch('x')],
        C::Supervisor,
        A::CancelItem,
        "cancel the selected open item (reason required)",
    ),
    b(
        &[ch('S')],
        C::Supervisor,
        A::QueueSettings,
        "edit the selected queue's settings (Stats view)",
    ),
    b(
        &[ch('F')],
        C::Supervisor,
        A::QueueFields,
        "the selected queue's fields: add, change, move (Stats)",
    ),
    b(&[ch('a')], C::Fields, A::AddField, "add a field"),
    b(
        &[k(K::Enter)],
        C::Fields,
        A::ChangeField,
        "change the selected field's type and rules",
    ),
    b(
        &[ch('d')],
        C::Fields,
        A::DeleteField,
        "delete the selected field (items keep their values)",
    ),
    b(
        &[ch('K')],
        C::Fields,
        A::MoveFieldUp,
        "move the selected field up",
    ),
    b(
        &[ch('J')],
        C::Fields,
        A::MoveFieldDown,
        "move the selected field down",
    ),
    b(
        &[ch('t')],
        C::Supervisor,
        A::Activity,
        "what the selected holder (or you) did today",
    ),
    b(&[k(K::Enter)], C::Dialog, A::Confirm, "confirm"),
    b(
        &[ctrl('n')],
        C::Dialog,
        A::ConfirmNext,
        "in the complete dialog: complete and take the next",
    ),
    b(
        &[k(K::Tab)],
        C::Dialog,
        A::NextField,
        "next field; ready-made texts in a result or reason field",
    ),
    b(
        &[ctrl(' ')],
        C::Dialog,
        A::OfferTexts,
        "the ready-made texts, as Tab",
    ),
    b(&[k(K::BackTab)], C::Dialog, A::PrevField, "previous field"),
    b(&[k(K::Esc)], C::Dialog, A::Cancel, "cancel"),
];

/// The action bound to `key` in `context`, if any.
pub(crate) fn lookup(context: Context, key: &KeyEvent) -> Option<Action> {
    KEYMAP
        .iter()
        .find(|bd| bd.context == context && bd.keys.iter().any(|k| k.matches(key)))
        .map(|bd| bd.action)
}

/// The first key the table binds to `action` (the one the key-hint line shows).
pub(crate) fn first_key(action: Action) -> Option<Key> {
    KEYMAP
        .iter()
        .find(|bd| bd.action == action)
        .and_then(|bd| bd.keys.first().copied())
}

/// The help screen's lines: per context, each row's keys with its description.
pub(crate) fn help_sections() -> Vec<(&'static str, Vec<(String, &'static str)>)> {
    Context::ALL
        .iter()
        .map(|ctx| {
            let rows = KEYMAP.iter().filter(|bd| bd.context == *ctx);
            (
                ctx.title(),
                rows.map(|bd| (bd.keys_text(), bd.help)).collect(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_dispatch_from_the_table() {
        let key = |c| KeyEvent::new(K::Char(c), KeyModifiers::NONE);
        assert_eq!(lookup(C::Global, &key('n')), Some(A::TakeNext));
        assert_eq!(
            lookup(C::Moving, &KeyEvent::new(K::Char('G'), KeyModifiers::SHIFT)),
            Some(A::Bottom)
        );
        assert_eq!(
            lookup(C::Moving, &KeyEvent::new(K::Down, KeyModifiers::NONE)),
            Some(A::Down),
            "the second key of a row"
        );
        assert_eq!(
            lookup(
                C::Editor,
                &KeyEvent::new(K::Char('s'), KeyModifiers::CONTROL)
            ),
            Some(A::SaveNotes)
        );
        assert_eq!(lookup(C::Editor, &key('s')), None, "plain s is typed text");
    }

    #[test]
    fn help_lists_every_key_of_every_row() {
        let sections = help_sections();
        let all: String = sections
            .iter()
            .flat_map(|(_, rows)| rows.iter().map(|(k, h)| format!("{k} {h}\n")))
            .collect();
        for bd in KEYMAP {
            for key in bd.keys {
                assert!(all.contains(&key.name()), "{key:?} missing from help");
            }
            assert!(all.contains(bd.help));
        }
        assert!(all.contains("j / Down down\n"), "one row for j and Down");
    }

    #[test]
    fn one_row_per_action_and_context() {
        for (i, bd) in KEYMAP.iter().enumerate() {
            assert!(!bd.keys.is_empty(), "{:?} has no key", bd.action);
            let twin = KEYMAP[i + 1..]
                .iter()
                .any(|o| o.context == bd.context && o.action == bd.action);
            assert!(!twin, "{:?} has two rows in {:?}", bd.action, bd.context);
        }
    }

    #[test]
    fn every_hint_comes_from_the_key_table() {
        for set in Hints::ALL {
            assert!(!set.entries().is_empty(), "{set:?} has no hint line");
            for hint in set.entries() {
                for a in hint.actions {
                    assert!(first_key(*a).is_some(), "{a:?} in {set:?} has no key");
                }
            }
        }
        let line = |set: Hints| -> Vec<String> {
            set.entries()
                .iter()
                .map(|h| {
                    let (k, w) = h.parts();
                    format!("{k} {w}")
                })
                .collect()
        };
        assert_eq!(
            line(Hints::Mine),
            [
                "Enter open",
                "c/f/r/s/e act on row",
                "n take next",
                "1-4 views",
                "? help",
                "q quit"
            ]
        );
        assert_eq!(
            line(Hints::Editor),
            ["Ctrl-S save", "Esc close (text kept)"]
        );
        assert_eq!(line(Hints::StatsReadOnly)[0], "read-only ");
    }
}
