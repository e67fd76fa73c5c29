//! Ready-made texts in dialogs: Tab (or Ctrl-Space) in a field that takes a result or a
//! reason lists its queue's texts for it, filtered by what is typed so far; Tab/Down and
//! Shift-Tab/Up move, Enter fills the field with the one selected (still editable: its
//! code goes into the event all the same), Esc closes the list, typing filters it again.

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use crate::app::keymap::{self, Action, Context};
use crate::app::{Effect, Menu, State, TextInput};
use crate::domain::texts::{CannedText, matching};

/// Handles `key` when the focused dialog field offers ready-made texts and the key is
/// theirs; `None` lets the dialog handle it as usual.
pub(super) fn offer_key(s: &mut State, key: &KeyEvent) -> Option<Vec<Effect>> {
    let texts = &s.texts;
    let d = s.dialog.as_mut()?;
    let field = d.inputs.get_mut(d.focus)?;
    let offer = field.offer.as_mut()?;
    let action = keymap::lookup(Context::Dialog, key);
    let Some(menu) = offer.menu.as_mut() else {
        if action.is_none() {
            // Typing: a field emptied forgets the text chosen for it.
            field.buf.key(*key);
            if field.buf.text().trim().is_empty() {
                offer.chosen = None;
            }
            return Some(vec![]);
        }
        if !matches!(action, Some(Action::NextField | Action::OfferTexts)) {
            return None;
        }
        let choices = choices(texts, &offer.queue, offer.purpose, &field.buf.text());
        d.error = None;
        if choices.is_empty() {
            d.error = Some(none_match(texts, &offer.queue, offer.purpose.as_str()));
        } else {
            offer.menu = Some(Menu {
                choices,
                selected: 0,
            });
        }
        return Some(vec![]);
    };
    let n = menu.choices.len().max(1);
    match (key.code, action) {
        (KeyCode::Down, _) | (_, Some(Action::NextField | Action::OfferTexts)) => {
            menu.selected = (menu.selected + 1) % n;
        }
        (KeyCode::Up, _) | (_, Some(Action::PrevField)) => {
            menu.selected = (menu.selected + n - 1) % n;
        }
        (_, Some(Action::Confirm)) => {
            if let Some(t) = menu.choices.get(menu.selected) {
                field.buf = TextInput::line(&t.text);
                offer.chosen = Some(t.code.clone());
            }
            offer.menu = None;
        }
        (_, Some(Action::Cancel)) => offer.menu = None,
        (_, Some(_)) => {
            // Another dialog key (Ctrl-N): the list closes and the dialog has it.
            offer.menu = None;
            return None;
        }
        (_, None) => {
            field.buf.key(*key);
            let typed = field.buf.text();
            if typed.trim().is_empty() {
                offer.chosen = None;
            }
            let choices = choices(texts, &offer.queue, offer.purpose, &typed);
            offer.menu = (!choices.is_empty()).then_some(Menu {
                choices,
                selected: 0,
            });
        }
    }
    Some(vec![])
}

/// The queue's texts for `purpose` matching `typed`, best first.
fn choices(
    texts: &[CannedText],
    queue: &str,
    purpose: crate::domain::texts::Purpose,
    typed: &str,
) -> Vec<CannedText> {
    let of_queue: Vec<CannedText> = texts.iter().filter(|t| t.queue == queue).cloned().collect();
    matching(&of_queue, purpose, typed)
        .into_iter()
        .cloned()
        .collect()
}

/// Why Tab offered nothing.
fn none_match(texts: &[CannedText], queue: &str, purpose: &str) -> String {
    let q = crate::domain::sanitize::line(queue);
    match texts
        .iter()
        .any(|t| t.queue == queue && t.purpose.as_str() == purpose)
    {
        true => format!("No ready-made {purpose} text of {q} matches what is typed"),
        false => format!(
            "Queue {q} has no ready-made {purpose} texts (a supervisor adds them: caseload \
             text add)"
        ),
    }
}
