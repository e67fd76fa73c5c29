//! A small text buffer with a cursor, for the notes editor (multi-line) and for the
//! filter and dialog prompts (one line). Pure: keys in, text out.

/// Text being typed, as lines, with the cursor at (`row`, `col`) in characters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TextBuf {
    lines: Vec<String>,
    row: usize,
    col: usize,
    multi_line: bool,
}

impl TextBuf {
    /// A one-line buffer holding `s` (newlines become spaces), cursor at the end.
    pub fn line(s: &str) -> Self {
        let mut b = TextBuf {
            lines: vec![s.replace(['\n', '\r'], " ")],
            ..TextBuf::default()
        };
        b.end();
        b
    }

    /// A multi-line buffer holding `s`, cursor at the end of the text.
    pub fn multi(s: &str) -> Self {
        let mut lines: Vec<String> = s.split('\n').map(str::to_string).collect();
        if lines.is_empty() {
            lines.push(String::new());
        }
        let row = lines.len() - 1;
        let col = lines[row].chars().count();
        TextBuf {
            lines,
            row,
            col,
            multi_line: true,
        }
    }

    /// The whole text, lines joined by `\n`.
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// The lines as typed.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The cursor as (row, column in characters).
    pub fn cursor(&self) -> (usize, usize) {
        (self.row, self.col)
    }

    fn byte_at(&self, col: usize) -> usize {
        let l = &self.lines[self.row];
        l.char_indices().nth(col).map_or(l.len(), |(i, _)| i)
    }

    fn line_chars(&self) -> usize {
        self.lines[self.row].chars().count()
    }

    /// Inserts a character at the cursor (a newline splits the line when multi-line).
    pub fn insert(&mut self, c: char) {
        if c == '\n' || c == '\r' {
            if self.multi_line {
                self.newline();
            }
            return;
        }
        let at = self.byte_at(self.col);
        self.lines[self.row].insert(at, c);
        self.col += 1;
    }

    /// Inserts text (pasted), character by character.
    pub fn insert_str(&mut self, s: &str) {
        for c in s.chars() {
            self.insert(c);
        }
    }

    fn newline(&mut self) {
        let at = self.byte_at(self.col);
        let rest = self.lines[self.row].split_off(at);
        self.lines.insert(self.row + 1, rest);
        self.row += 1;
        self.col = 0;
    }

    /// Deletes the character before the cursor (joining lines at a line start).
    pub fn backspace(&mut self) {
        if self.col > 0 {
            let at = self.byte_at(self.col - 1);
            self.lines[self.row].remove(at);
            self.col -= 1;
        } else if self.row > 0 {
            let cur = self.lines.remove(self.row);
            self.row -= 1;
            self.col = self.line_chars();
            self.lines[self.row].push_str(&cur);
        }
    }

    /// Deletes the character under the cursor.
    pub fn delete(&mut self) {
        if self.col < self.line_chars() {
            let at = self.byte_at(self.col);
            self.lines[self.row].remove(at);
        } else if self.row + 1 < self.lines.len() {
            let next = self.lines.remove(self.row + 1);
            self.lines[self.row].push_str(&next);
        }
    }

    pub fn left(&mut self) {
        if self.col > 0 {
            self.col -= 1;
        } else if self.row > 0 {
            self.row -= 1;
            self.col = self.line_chars();
        }
    }

    pub fn right(&mut self) {
        if self.col < self.line_chars() {
            self.col += 1;
        } else if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.col = 0;
        }
    }

    pub fn up(&mut self) {
        if self.row > 0 {
            self.row -= 1;
            self.col = self.col.min(self.line_chars());
        }
    }

    pub fn down(&mut self) {
        if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.col = self.col.min(self.line_chars());
        }
    }

    pub fn home(&mut self) {
        self.col = 0;
    }

    pub fn end(&mut self) {
        self.col = self.line_chars();
    }

    /// True when nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.lines.iter().all(String::is_empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typing_and_editing_across_lines() {
        let mut b = TextBuf::multi("ab");
        b.insert('\n');
        b.insert_str("cd");
        assert_eq!(b.text(), "ab\ncd");
        b.home();
        b.backspace();
        assert_eq!(b.text(), "abcd");
        assert_eq!(b.cursor(), (0, 2));
        b.delete();
        assert_eq!(b.text(), "abd");
        let mut one = TextBuf::line("x");
        one.insert('\n');
        one.insert('é');
        one.left();
        one.backspace();
        assert_eq!(one.text(), "é");
    }
}
