//! Text being typed: the notes editor (many lines) and the one-line prompts (filter,
//! dialog fields), over the `ratatui-textarea` widget. The widget's state lives in the
//! app state and keys are routed to it here, so `update` stays a plain function: a key in,
//! the text and cursor changed.
//!
//! Keys, readline style: Ctrl-A/Home and Ctrl-E/End go to the line's start and end,
//! Ctrl/Alt-Left and Alt-B/F move by word, Ctrl-W and Alt-Backspace delete the word before
//! the cursor, Alt-D the word after, Ctrl-U to the start of the line, Ctrl-K to its end,
//! Ctrl-Y puts back what was deleted, Alt-U (or Ctrl-_) undoes and Ctrl-R redoes. Text
//! from the database or a paste is sanitized on its way in (control characters, escape
//! sequences and bidi overrides become visible), so the widget never draws it raw.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use crate::domain::sanitize;

/// The typing keys, for the `?` screen and the README (the widget's own key table).
pub(crate) const TEXT_KEYS: &[(&str, &str)] = &[
    (
        "Ctrl-A / Home",
        "start of the line (Ctrl-Home: of the notes)",
    ),
    ("Ctrl-E / End", "end of the line (Ctrl-End: of the notes)"),
    (
        "Ctrl/Alt-Left/Right",
        "a word back / forward (also Alt-B / Alt-F)",
    ),
    ("Ctrl-W / Alt-Bksp", "delete the word before the cursor"),
    ("Alt-D / Ctrl-Del", "delete the word after the cursor"),
    (
        "Ctrl-U / Ctrl-K",
        "delete to the start / the end of the line",
    ),
    ("Ctrl-Y", "put back what was deleted"),
    ("Alt-U / Ctrl-R", "undo / redo"),
];

/// How many steps undo goes back.
const UNDO_STEPS: usize = 200;

/// Text being typed, with its cursor, selection-free, undo history and wrapping.
#[derive(Debug, Clone)]
pub struct TextInput {
    area: TextArea<'static>,
    multi_line: bool,
}

impl PartialEq for TextInput {
    fn eq(&self, other: &TextInput) -> bool {
        self.multi_line == other.multi_line
            && self.area.lines() == other.area.lines()
            && self.area.cursor() == other.area.cursor()
    }
}

impl Eq for TextInput {}

impl Default for TextInput {
    fn default() -> TextInput {
        TextInput::line("")
    }
}

impl TextInput {
    /// A one-line field holding `s` (newlines become spaces), cursor at the end.
    pub fn line(s: &str) -> TextInput {
        TextInput::new(vec![clean_line(s)], false)
    }

    /// A multi-line editor holding `s`, cursor at the end, long lines wrapped at words.
    pub(crate) fn multi(s: &str) -> TextInput {
        let text = sanitize::text(s);
        TextInput::new(text.split('\n').map(str::to_string).collect(), true)
    }

    fn new(lines: Vec<String>, multi_line: bool) -> TextInput {
        let mut area = TextArea::new(lines);
        area.set_max_histories(UNDO_STEPS);
        area.set_cursor_line_style(Style::default());
        area.set_cursor_style(Style::default().add_modifier(Modifier::REVERSED));
        area.set_tab_length(4);
        if multi_line {
            area.set_wrap_mode(WrapMode::WordOrGlyph);
        }
        area.move_cursor(CursorMove::Bottom);
        area.move_cursor(CursorMove::End);
        TextInput { area, multi_line }
    }

    /// The whole text, lines joined by `\n`.
    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    /// The lines as typed.
    pub fn lines(&self) -> &[String] {
        self.area.lines()
    }

    /// The cursor as (row, column in characters).
    pub(crate) fn cursor(&self) -> (usize, usize) {
        let c = self.area.cursor();
        (c.0, c.1)
    }

    /// How many terminal cells the cursor's line takes before the cursor (wide
    /// characters count two): where the terminal cursor goes in a one-line prompt.
    pub(crate) fn cursor_cells(&self) -> usize {
        let (row, col) = self.cursor();
        let line = self.lines().get(row).map_or("", String::as_str);
        let before: String = line.chars().take(col).collect();
        Span::raw(before).width()
    }

    /// The widget, for drawing the editor.
    pub(crate) fn widget(&self) -> &TextArea<'static> {
        &self.area
    }

    /// Inserts pasted or given text at the cursor, sanitized; in a one-line field,
    /// newlines become spaces.
    pub(crate) fn insert_str(&mut self, s: &str) {
        let text = if self.multi_line {
            sanitize::text(&s.replace("\r\n", "\n").replace('\r', "\n")).into_owned()
        } else {
            clean_line(s)
        };
        self.area.insert_str(text);
    }

    /// Applies an editing key; false when the key is not one (the caller's to handle:
    /// Enter in a one-line field, Esc, Tab, Ctrl-S ...).
    pub(crate) fn key(&mut self, key: KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let a = &mut self.area;
        match key.code {
            KeyCode::Char(c) if !ctrl && !alt => {
                let s = c.to_string();
                if sanitize::line(&s) == s.as_str() {
                    a.insert_char(c);
                } else {
                    a.insert_str(sanitize::line(&s));
                }
            }
            KeyCode::Char('a') if ctrl => a.move_cursor(CursorMove::Head),
            KeyCode::Char('e') if ctrl => a.move_cursor(CursorMove::End),
            KeyCode::Char('b') if ctrl => a.move_cursor(CursorMove::Back),
            KeyCode::Char('f') if ctrl => a.move_cursor(CursorMove::Forward),
            KeyCode::Char('b') if alt => a.move_cursor(CursorMove::WordBack),
            KeyCode::Char('f') if alt => a.move_cursor(CursorMove::WordForward),
            KeyCode::Char('w') if ctrl => {
                a.delete_word();
            }
            KeyCode::Char('h') if ctrl => {
                a.delete_char();
            }
            KeyCode::Char('d') if ctrl => {
                a.delete_next_char();
            }
            KeyCode::Char('d') if alt => {
                a.delete_next_word();
            }
            KeyCode::Char('u') if ctrl => {
                a.delete_line_by_head();
            }
            KeyCode::Char('k') if ctrl => {
                a.delete_line_by_end();
            }
            KeyCode::Char('y') if ctrl => {
                a.paste();
            }
            KeyCode::Char('u') if alt => {
                a.undo();
            }
            KeyCode::Char('_' | '7' | '/') if ctrl => {
                a.undo();
            }
            KeyCode::Char('r') if ctrl => {
                a.redo();
            }
            KeyCode::Backspace if ctrl || alt => {
                a.delete_word();
            }
            KeyCode::Backspace => {
                a.delete_char();
            }
            KeyCode::Delete if ctrl || alt => {
                a.delete_next_word();
            }
            KeyCode::Delete => {
                a.delete_next_char();
            }
            KeyCode::Left if ctrl || alt => a.move_cursor(CursorMove::WordBack),
            KeyCode::Right if ctrl || alt => a.move_cursor(CursorMove::WordForward),
            KeyCode::Left => a.move_cursor(CursorMove::Back),
            KeyCode::Right => a.move_cursor(CursorMove::Forward),
            KeyCode::Home if ctrl && self.multi_line => a.move_cursor(CursorMove::Top),
            KeyCode::End if ctrl && self.multi_line => a.move_cursor(CursorMove::Bottom),
            KeyCode::Home => a.move_cursor(CursorMove::Head),
            KeyCode::End => a.move_cursor(CursorMove::End),
            _ if self.multi_line => return self.multi_line_key(key),
            _ => return false,
        }
        true
    }

    fn multi_line_key(&mut self, key: KeyEvent) -> bool {
        let a = &mut self.area;
        match key.code {
            KeyCode::Enter => a.insert_newline(),
            KeyCode::Tab => {
                a.insert_str("    ");
            }
            KeyCode::Up => a.move_cursor(CursorMove::Up),
            KeyCode::Down => a.move_cursor(CursorMove::Down),
            KeyCode::PageUp => {
                for _ in 0..10 {
                    a.move_cursor(CursorMove::Up);
                }
            }
            KeyCode::PageDown => {
                for _ in 0..10 {
                    a.move_cursor(CursorMove::Down);
                }
            }
            _ => return false,
        }
        true
    }
}

/// One line of text, sanitized, with line breaks as spaces.
fn clean_line(s: &str) -> String {
    sanitize::line(&s.replace("\r\n", " ").replace(['\n', '\r'], " ")).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }
    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }
    fn alt(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT)
    }
    fn typed(t: &mut TextInput, s: &str) {
        for c in s.chars() {
            assert!(t.key(k(KeyCode::Char(c))));
        }
    }

    #[test]
    fn readline_keys_in_a_one_line_field() {
        let mut t = TextInput::line("holder:bob queue:helpdesk");
        assert_eq!(t.cursor(), (0, 25));
        t.key(ctrl('w'));
        assert_eq!(t.text(), "holder:bob queue:");
        t.key(ctrl('a'));
        typed(&mut t, "x ");
        assert_eq!(t.text(), "x holder:bob queue:");
        t.key(ctrl('e'));
        typed(&mut t, "printer");
        t.key(KeyEvent::new(KeyCode::Left, KeyModifiers::CONTROL));
        t.key(ctrl('u'));
        assert_eq!(t.text(), "printer");
        assert_eq!(t.cursor(), (0, 0));
        t.key(ctrl('k'));
        assert_eq!(t.text(), "");
        t.key(ctrl('y'));
        assert_eq!(t.text(), "printer", "Ctrl-Y puts back what Ctrl-K took");
        // Enter and Tab are the caller's in a one-line field.
        assert!(!t.key(k(KeyCode::Enter)));
        assert!(!t.key(k(KeyCode::Tab)));
        assert_eq!(t.lines().len(), 1);
    }

    #[test]
    fn undo_and_redo() {
        let mut t = TextInput::multi("");
        typed(&mut t, "first");
        t.key(ctrl('w'));
        assert_eq!(t.text(), "");
        t.key(alt('u'));
        assert_eq!(t.text(), "first");
        t.key(ctrl('r'));
        assert_eq!(t.text(), "");
    }

    #[test]
    fn words_move_and_delete() {
        let mut t = TextInput::multi("call the customer back");
        t.key(alt('b'));
        t.key(alt('b'));
        assert_eq!(t.cursor(), (0, 9));
        t.key(alt('d'));
        assert_eq!(t.text(), "call the  back");
        t.key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::ALT));
        assert_eq!(t.text(), "call  back");
        t.key(k(KeyCode::Home));
        t.key(KeyEvent::new(KeyCode::Right, KeyModifiers::CONTROL));
        assert_eq!(t.cursor(), (0, 6), "the start of the next word");
    }

    #[test]
    fn wide_and_combining_characters_keep_the_cursor_right_after_them() {
        let mut t = TextInput::line("");
        typed(&mut t, "東京");
        assert_eq!(t.cursor(), (0, 2));
        assert_eq!(t.cursor_cells(), 4, "two wide characters take four cells");
        typed(&mut t, "e\u{301}");
        assert_eq!(t.text(), "東京e\u{301}");
        assert_eq!(t.cursor_cells(), 5, "a combining accent takes no cell");
        t.key(k(KeyCode::Backspace));
        t.key(k(KeyCode::Backspace));
        t.key(k(KeyCode::Backspace));
        assert_eq!(t.text(), "東");
        assert_eq!(t.cursor_cells(), 2);
    }

    #[test]
    fn pasted_lines_and_hostile_text_are_made_safe() {
        let mut t = TextInput::multi("notes\x1b[2J");
        assert_eq!(t.text(), "notes␛[2J");
        t.insert_str("\nline two\r\nline three\u{202E}");
        assert_eq!(t.lines().len(), 3);
        assert_eq!(t.lines()[2], "line three<U+202E>");
        let mut one = TextInput::line("");
        one.insert_str("a\nb\r\nc");
        assert_eq!(one.text(), "a b c");
    }
}
