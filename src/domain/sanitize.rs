//! Untrusted text made safe for a terminal, a log or CLI output.
//!
//! Everything read from the database or a file passes through here before it is shown:
//! control characters (C0, DEL, C1 such as the 8-bit CSI 0x9B) become visible symbols,
//! so an escape sequence in an item can neither clear the screen, set the title nor write
//! the clipboard (OSC 52); bidi overrides and zero-width characters are shown as
//! `<U+202E>` instead of reordering or hiding text.

use std::borrow::Cow;

/// Makes one line of untrusted text safe: every control character, newlines included,
/// becomes visible.
pub fn line(s: &str) -> Cow<'_, str> {
    clean(s, false)
}

/// Makes multi-line untrusted text safe: newlines are kept, tabs become spaces, every
/// other control character becomes visible.
pub(crate) fn text(s: &str) -> Cow<'_, str> {
    clean(s, true)
}

fn clean(s: &str, keep_newlines: bool) -> Cow<'_, str> {
    if s.chars().all(|c| is_plain(c, keep_newlines)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if is_plain(c, keep_newlines) {
            out.push(c);
        } else if keep_newlines && c == '\t' {
            out.push_str("    ");
        } else {
            push_visible(&mut out, c);
        }
    }
    Cow::Owned(out)
}

fn is_plain(c: char, keep_newlines: bool) -> bool {
    if keep_newlines && c == '\n' {
        return true;
    }
    !(c.is_control() || is_invisible_format(c))
}

/// Characters that change how text around them is shown without being seen themselves
/// (bidi controls, zero-width characters, invisible fillers): names may not contain them.
pub(crate) fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{180E}'
        | '\u{200B}'..='\u{200F}'
        | '\u{2028}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}'
        | '\u{3164}' | '\u{FEFF}' | '\u{FFA0}'
        | '\u{FFF9}'..='\u{FFFB}'
        | '\u{E0000}'..='\u{E007F}')
}

fn push_visible(out: &mut String, c: char) {
    let code = c as u32;
    match code {
        // C0 controls have their own visible pictures (U+2400..U+241F): ESC shows as ␛.
        0x00..=0x1F => out.push(char::from_u32(0x2400 + code).unwrap_or('?')),
        0x7F => out.push('\u{2421}'),
        _ => {
            out.push_str(&format!("<U+{code:04X}>"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_become_visible() {
        assert_eq!(line("\u{1b}[2Jhi"), "␛[2Jhi");
        assert_eq!(
            line("\u{1b}]52;c;aGk=\u{7}"),
            "␛]52;c;aGk=␇",
            "OSC 52 cannot reach the clipboard"
        );
        assert_eq!(line("a\u{9b}31mb"), "a<U+009B>31mb", "8-bit CSI");
        assert_eq!(line("x\ry"), "x␍y");
        assert_eq!(line("del\u{7f}"), "del␡");
    }

    #[test]
    fn bidi_and_zero_width_are_shown() {
        assert_eq!(line("abc\u{202E}fed"), "abc<U+202E>fed");
        assert_eq!(line("pay\u{200B}pal"), "pay<U+200B>pal");
        assert_eq!(line("\u{FEFF}bom"), "<U+FEFF>bom");
    }

    #[test]
    fn newlines_are_kept_only_in_text() {
        assert_eq!(line("a\nb"), "a␊b");
        assert_eq!(text("a\nb\tc"), "a\nb    c");
        assert!(matches!(line("plain ünïcode 日本"), Cow::Borrowed(_)));
    }
}
