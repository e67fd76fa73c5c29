//! The one key table: dispatch and the `?` help screen are both generated from it.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key asks for; `update` decides what it means in the current view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    ViewQueue,
    ViewMine,
    ViewLocks,
    ViewStats,
    NextView,
    Help,
    Quit,
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
    SaveNotes,
    CloseEditor,
    Confirm,
    Cancel,
    NextField,
    PrevField,
    Unlock,
    Reassign,
    UnlockAll,
    Requeue,
    CancelItem,
    QueueSettings,
    Activity,
    FiguresPeriod,
    FiguresSort,
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
}

impl Context {
    /// The heading of the context on the help screen.
    pub fn title(self) -> &'static str {
        match self {
            Context::Global => "Anywhere",
            Context::Moving => "Lists and the detail pane",
            Context::Item => "Working an item you hold",
            Context::Editor => "Notes editor",
            Context::Supervisor => "Supervisors (staff may use t; the rest says supervisor only)",
            Context::Dialog => "Dialogs and the filter prompt",
        }
    }

    pub const ALL: [Context; 6] = [
        Context::Global,
        Context::Moving,
        Context::Item,
        Context::Supervisor,
        Context::Editor,
        Context::Dialog,
    ];
}

/// One key binding.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub code: KeyCode,
    pub ctrl: bool,
    pub context: Context,
    pub action: Action,
    pub help: &'static str,
}

const fn b(code: KeyCode, context: Context, action: Action, help: &'static str) -> Binding {
    Binding {
        code,
        ctrl: false,
        context,
        action,
        help,
    }
}

const fn ctrl(c: char, context: Context, action: Action, help: &'static str) -> Binding {
    Binding {
        code: KeyCode::Char(c),
        ctrl: true,
        context,
        action,
        help,
    }
}

use Action as A;
use Context as C;
use KeyCode as K;

/// Every key the TUI understands.
pub const KEYMAP: &[Binding] = &[
    b(
        K::Char('1'),
        C::Global,
        A::ViewQueue,
        "Queue view: open items in take order",
    ),
    b(
        K::Char('2'),
        C::Global,
        A::ViewMine,
        "Mine view: your locks and lost-lock notices",
    ),
    b(
        K::Char('3'),
        C::Global,
        A::ViewLocks,
        "Locks view: all held locks, oldest first",
    ),
    b(
        K::Char('4'),
        C::Global,
        A::ViewStats,
        "Stats view: counts, completions, lock ages",
    ),
    b(K::Tab, C::Global, A::NextView, "next view"),
    b(
        K::Char('/'),
        C::Global,
        A::Filter,
        "filter: text, queue:Q, state:failed; Locks: holder:U",
    ),
    b(K::Char('n'), C::Global, A::TakeNext, "take the next item"),
    b(
        K::Char('p'),
        C::Global,
        A::FiguresPeriod,
        "Stats: figures by person and queue, today / 7 / 30 days",
    ),
    b(
        K::Char('o'),
        C::Global,
        A::FiguresSort,
        "Stats figures: sort people by done / median / lost",
    ),
    b(K::Char('?'), C::Global, A::Help, "this help"),
    b(K::Esc, C::Global, A::Back, "close the detail pane"),
    b(
        K::Char('q'),
        C::Global,
        A::Quit,
        "quit (your locks stay held; resume next time)",
    ),
    ctrl('c', C::Global, A::Quit, "quit"),
    b(K::Char('j'), C::Moving, A::Down, "down"),
    b(K::Down, C::Moving, A::Down, "down"),
    b(K::Char('k'), C::Moving, A::Up, "up"),
    b(K::Up, C::Moving, A::Up, "up"),
    b(K::PageDown, C::Moving, A::PageDown, "page down"),
    b(K::PageUp, C::Moving, A::PageUp, "page up"),
    b(K::Char('g'), C::Moving, A::Top, "first row"),
    b(K::Home, C::Moving, A::Top, "first row"),
    b(K::Char('G'), C::Moving, A::Bottom, "last row"),
    b(K::End, C::Moving, A::Bottom, "last row"),
    b(
        K::Enter,
        C::Moving,
        A::Open,
        "take the selected item / open your item",
    ),
    b(
        K::Char('c'),
        C::Item,
        A::Complete,
        "complete (confirm, optional result)",
    ),
    b(
        K::Char('C'),
        C::Item,
        A::CompleteNext,
        "complete and take the next, in one step (confirm)",
    ),
    b(K::Char('f'), C::Item, A::Fail, "fail (reason required)"),
    b(
        K::Char('r'),
        C::Item,
        A::Release,
        "release back to the pool",
    ),
    b(
        K::Char('s'),
        C::Item,
        A::Skip,
        "skip: release and take the next",
    ),
    b(K::Char('e'), C::Item, A::EditNotes, "edit notes"),
    ctrl('s', C::Editor, A::SaveNotes, "save notes"),
    b(
        K::Esc,
        C::Editor,
        A::CloseEditor,
        "close the editor (unsaved text is kept)",
    ),
    b(
        K::Char('u'),
        C::Supervisor,
        A::Unlock,
        "unlock the selected lock (reason required)",
    ),
    b(
        K::Char('a'),
        C::Supervisor,
        A::Reassign,
        "reassign the selected lock to another user",
    ),
    b(
        K::Char('U'),
        C::Supervisor,
        A::UnlockAll,
        "unlock all locks the Locks filter shows (count first)",
    ),
    b(
        K::Char('R'),
        C::Supervisor,
        A::Requeue,
        "requeue a failed item (Queue view, / state:failed)",
    ),
    b(
        K::Char('x'),
        C::Supervisor,
        A::CancelItem,
        "cancel the selected open item (reason required)",
    ),
    b(
        K::Char('S'),
        C::Supervisor,
        A::QueueSettings,
        "edit the selected queue's settings (Stats view)",
    ),
    b(
        K::Char('t'),
        C::Supervisor,
        A::Activity,
        "what the selected holder (or you) did today",
    ),
    b(K::Enter, C::Dialog, A::Confirm, "confirm"),
    ctrl(
        'n',
        C::Dialog,
        A::ConfirmNext,
        "in the complete dialog: complete and take the next",
    ),
    b(K::Tab, C::Dialog, A::NextField, "next field"),
    b(K::BackTab, C::Dialog, A::PrevField, "previous field"),
    b(K::Esc, C::Dialog, A::Cancel, "cancel"),
];

/// The action bound to `key` in `context`, if any.
pub fn lookup(context: Context, key: &KeyEvent) -> Option<Action> {
    let ctrl_held = key.modifiers.contains(KeyModifiers::CONTROL);
    KEYMAP
        .iter()
        .find(|bd| bd.context == context && bd.code == key.code && bd.ctrl == ctrl_held)
        .map(|bd| bd.action)
}

/// How a key is written on the help screen.
pub fn key_name(bd: &Binding) -> String {
    let base = match bd.code {
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
    if bd.ctrl {
        format!("Ctrl-{}", base.to_uppercase())
    } else {
        base
    }
}

/// The help screen's lines: per context, the keys of each action with its description.
pub fn help_sections() -> Vec<(&'static str, Vec<(String, &'static str)>)> {
    Context::ALL
        .iter()
        .map(|ctx| {
            let mut rows: Vec<(String, &'static str, Action)> = Vec::new();
            for bd in KEYMAP.iter().filter(|bd| bd.context == *ctx) {
                match rows.iter_mut().find(|r| r.2 == bd.action) {
                    Some(r) => {
                        r.0.push_str(" / ");
                        r.0.push_str(&key_name(bd));
                    }
                    None => rows.push((key_name(bd), bd.help, bd.action)),
                }
            }
            (
                ctx.title(),
                rows.into_iter().map(|(k, h, _)| (k, h)).collect(),
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
            lookup(
                C::Editor,
                &KeyEvent::new(K::Char('s'), KeyModifiers::CONTROL)
            ),
            Some(A::SaveNotes)
        );
        assert_eq!(lookup(C::Editor, &key('s')), None, "plain s is typed text");
    }

    #[test]
    fn help_lists_every_binding() {
        let sections = help_sections();
        let all: String = sections
            .iter()
            .flat_map(|(_, rows)| rows.iter().map(|(k, h)| format!("{k} {h}\n")))
            .collect();
        for bd in KEYMAP {
            assert!(
                all.contains(&key_name(bd)),
                "{:?} missing from help",
                bd.code
            );
            assert!(all.contains(bd.help));
        }
    }
}
