//! Popups: the one confirmation dialog and the notes editor.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::Theme;
use crate::app::{Dialog, Editor, Pending, State};
use crate::domain::sanitize;

/// A rectangle of `w` x `h` centred in `area` (clipped to it).
pub(super) fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// Where a popup stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// In the middle: a dialog, which takes the keys.
    Center,
    /// At the bottom, over the list's last rows: a notice, which lets keys through.
    Bottom,
}

pub(super) fn confirm(d: &Dialog, theme: &Theme, frame: &mut Frame, area: Rect) {
    let offers = d.inputs.iter().any(|f| f.offer.is_some());
    let hint = match d.pending {
        _ if menu_open(d) => {
            "Tab/Up/Down: pick · Enter: use it (still editable) · Esc: close the list"
        }
        Pending::Comment { .. } => "Enter: add as comment · Esc: keep them for later",
        Pending::Dismiss => "Enter or Esc: close",
        Pending::Quit => "Enter: quit · Esc: stay",
        Pending::Complete { .. } if offers => {
            "Enter: complete · Ctrl-N: and take next · Tab: texts · Esc: cancel"
        }
        Pending::Complete { .. } => {
            "Enter: complete · Ctrl-N: complete and take next · Esc: cancel"
        }
        Pending::CompleteNext { .. } if offers => {
            "Enter: complete and take the next · Tab: texts · Esc: cancel"
        }
        Pending::CompleteNext { .. } => "Enter: complete and take the next · Esc: cancel",
        _ if d.inputs.len() == 1 && offers => {
            "Enter: confirm · Tab: ready-made texts · Esc: cancel"
        }
        _ if d.inputs.len() > 1 => "Tab: next field · Enter: confirm · Esc: cancel",
        _ => "Enter: confirm · Esc: cancel",
    };
    popup(d, hint, Place::Center, theme, frame, area);
}

/// True while a field's list of ready-made texts is open.
fn menu_open(d: &Dialog) -> bool {
    d.inputs
        .iter()
        .any(|f| f.offer.as_ref().is_some_and(|o| o.menu.is_some()))
}

/// A notice ("Work for you", "Lock lost"): shown at the bottom while keys go on working.
pub(super) fn notice(d: &Dialog, theme: &Theme, frame: &mut Frame, area: Rect) {
    let hint = match d.pending {
        Pending::Comment { .. } => {
            "Enter: add as comment · Esc: keep them for later · other keys work as usual"
        }
        _ => "Enter or Esc: close · other keys work as usual",
    };
    // Above the status and hint lines.
    let above = Rect {
        height: area.height.saturating_sub(2),
        ..area
    };
    popup(d, hint, Place::Bottom, theme, frame, above);
}

fn popup(d: &Dialog, hint: &str, place: Place, theme: &Theme, frame: &mut Frame, area: Rect) {
    let w = area.width.saturating_sub(8).min(72);
    let inner_w = w.saturating_sub(2).max(1) as usize;
    let mut lines: Vec<Line> = Vec::new();
    for l in sanitize::text(&d.message).split('\n') {
        lines.push(Line::raw(l.to_string()));
    }
    let mut cursor = None;
    // A dialog of many fields (a field's definition) leaves out the blank lines.
    let compact = d.inputs.len() > 5;
    for (i, field) in d.inputs.iter().enumerate() {
        let buf = &field.buf;
        if !compact {
            lines.push(Line::raw(""));
        }
        lines.push(Line::styled(field.spec.label.clone(), theme.dim()));
        let text = sanitize::line(&buf.text()).into_owned();
        let focused = i == d.focus;
        if focused {
            cursor = Some((lines.len(), buf));
        }
        lines.push(Line::from(vec![
            Span::styled(if focused { "> " } else { "  " }, theme.key()),
            Span::raw(text),
        ]));
        if let Some(menu) = field.offer.as_ref().and_then(|o| o.menu.as_ref()) {
            lines.extend(menu_lines(menu, theme, inner_w));
        }
    }
    if let Some(e) = &d.error {
        lines.push(Line::styled(e.clone(), theme.error()));
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(hint.to_string(), theme.dim()));
    // Height: wrapped lines, within the screen.
    let heights: Vec<usize> = lines
        .iter()
        .map(|l| l.width().max(1).div_ceil(inner_w))
        .collect();
    let wrapped: usize = heights.iter().sum();
    let mut rect = centered(area, w, wrapped as u16 + 2);
    if place == Place::Bottom {
        rect.y = area.y + area.height - rect.height;
    }
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border())
        .title(Span::styled(
            format!(" {} ", sanitize::line(&d.title)),
            theme.heading(),
        ));
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block),
        rect,
    );
    if let Some((row, buf)) = cursor {
        // Lines before the input are counted wrapped, as drawn.
        let x = rect.x + 3 + buf.cursor_cells() as u16;
        let y = rect.y + 1 + heights[..row].iter().sum::<usize>() as u16;
        if x < rect.x + rect.width - 1 && y < rect.y + rect.height - 1 {
            frame.set_cursor_position((x, y));
        }
    }
}

/// The ready-made texts offered under a field: at most [`MENU_ROWS`] around the one
/// selected, which is marked `›` (and highlighted where there is colour), each `code  text`
/// on one line.
fn menu_lines(menu: &crate::app::Menu, theme: &Theme, width: usize) -> Vec<Line<'static>> {
    let n = menu.choices.len();
    let first = menu
        .selected
        .saturating_sub(MENU_ROWS - 1)
        .min(n.saturating_sub(MENU_ROWS));
    let mut out: Vec<Line<'static>> = Vec::new();
    for (i, t) in menu.choices.iter().enumerate().skip(first).take(MENU_ROWS) {
        let on = i == menu.selected;
        let row = format!(
            "{} {}  {}",
            if on { "  ›" } else { "   " },
            sanitize::line(&t.code),
            sanitize::line(&t.text)
        );
        let row: String = row.chars().take(width).collect();
        out.push(match on {
            true => Line::styled(row, theme.selected()),
            false => Line::styled(row, theme.dim()),
        });
    }
    if n > MENU_ROWS {
        out.push(Line::styled(
            format!("    {} of {n} · type to narrow", menu.selected + 1),
            theme.dim(),
        ));
    }
    out
}

/// How many ready-made texts a field's list shows at once.
const MENU_ROWS: usize = 6;

pub(super) fn editor(state: &State, ed: &Editor, theme: &Theme, frame: &mut Frame, area: Rect) {
    let rect = Rect {
        x: area.x + 2,
        y: area.y + 2,
        width: area.width.saturating_sub(4),
        height: area.height.saturating_sub(4),
    };
    frame.render_widget(Clear, rect);
    let title = format!(
        " Notes on #{}{} — Ctrl-S saves, Esc closes ",
        ed.item_id,
        if ed.saving { " (saving…)" } else { "" }
    );
    let lost = !state.held.contains_key(&ed.item_id);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(if lost {
            theme.expired()
        } else {
            theme.border()
        })
        .title(Span::styled(title, theme.heading()));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    // The widget wraps long lines and draws its own cursor (a reversed cell, right after
    // wide characters too); its text was sanitized on the way in.
    frame.render_widget(ed.buf.widget(), inner);
}
