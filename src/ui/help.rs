//! The `?` screen, generated from the key table the program dispatches from.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::Theme;
use super::dialog::centered;
use crate::app::State;
use crate::app::keymap::help_sections;
use crate::app::textinput::TEXT_KEYS;

pub(super) fn render(state: &State, top: u16, theme: &Theme, frame: &mut Frame, area: Rect) {
    let mut lines = Vec::new();
    for (title, rows) in help_sections() {
        if !lines.is_empty() {
            lines.push(Line::raw(""));
        }
        lines.push(Line::styled(title, theme.heading()));
        for (keys, what) in rows {
            lines.push(Line::from(vec![
                Span::styled(format!("  {keys:<16}"), theme.key()),
                Span::raw(what),
            ]));
        }
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        "Typing (prompts and the notes editor)",
        theme.heading(),
    ));
    for (keys, what) in TEXT_KEYS {
        lines.push(Line::from(vec![
            Span::styled(format!("  {keys:<20}"), theme.key()),
            Span::raw(*what),
        ]));
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        "Mouse: wheel scrolls, click selects a row or a view.",
        theme.dim(),
    ));
    lines.push(Line::styled(
        format!(
            "Times are shown in {} (set TZ to change).",
            state.zone.label(state.now)
        ),
        theme.dim(),
    ));
    if state.read_only.is_some() {
        lines.push(Line::styled(
            "READ-ONLY: this database takes no changes (a standby, a read-only file): \
             browse only.",
            theme.dim(),
        ));
    }
    let rect = centered(area, 78, lines.len() as u16 + 2);
    let fits = rect.height as usize >= lines.len() + 2;
    let top = if fits {
        0
    } else {
        top.min((lines.len() + 2 - rect.height as usize) as u16)
    };
    let title = if fits {
        " Keys (any key closes) ".to_string()
    } else {
        " Keys (j/k scroll, any other key closes) ".to_string()
    };
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border())
        .title(Span::styled(title, theme.heading()));
    frame.render_widget(Paragraph::new(lines).block(block).scroll((top, 0)), rect);
}
