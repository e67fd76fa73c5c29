//! The detail pane's form: one row per field (label, value, ✔ or ✘ with the rule it
//! breaks) and per checklist line ([x] done, [ ] to do, [-] not done with its reason).
//! The focused row is marked `▸` and shown reversed; a field being edited shows what is
//! typed, checked as typed, with the cursor in it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::Theme;
use super::columns::fit;
use crate::app::form::{Mark, Row, Slot};
use crate::app::{Detail, LineKind, State};
use crate::domain::queue_fields::LineState;
use crate::domain::sanitize;

/// Widest label column.
const LABEL_MAX: usize = 24;
/// Narrowest value column.
const MIN_VALUE: usize = 24;

/// The form's rows, worked out once per frame (see `app::form::rows`).
pub(super) struct Form {
    rows: Vec<Row>,
    label_w: usize,
    /// The widest value (a value column no wider than its values keeps ✔ near them).
    value_w: usize,
}

impl Form {
    pub(super) fn of(state: &State, d: &Detail) -> Form {
        let rows = crate::app::form::rows(state, &d.item);
        let label_w = rows
            .iter()
            .filter(|r| matches!(r.slot, Slot::Field(_)))
            .map(|r| cells(&sanitize::line(&r.label)))
            .max()
            .unwrap_or(0)
            .min(LABEL_MAX);
        let value_w = rows
            .iter()
            .filter(|r| matches!(r.slot, Slot::Field(_)))
            .map(|r| cells(&sanitize::line(&r.value)).max(7))
            .max()
            .unwrap_or(0);
        Form {
            rows,
            label_w,
            value_w,
        }
    }

    /// The line of slot `i`, `width` cells wide at most.
    pub(super) fn line(&self, i: usize, theme: &Theme, width: usize) -> Line<'static> {
        let Some(r) = self.rows.get(i) else {
            return Line::raw("");
        };
        let pointer = if r.focused { "▸ " } else { "  " };
        let mut spans = vec![Span::styled(pointer, theme.heading())];
        let row_style = if r.focused && !r.editing {
            theme.selected()
        } else {
            Style::default()
        };
        match (r.slot, &r.mark) {
            (Slot::Line(..), Mark::Line(state)) => {
                let (tick, words) = match state {
                    LineState::Done => ("[x] ", String::new()),
                    LineState::Todo => ("[ ] ", String::new()),
                    LineState::NotDone(why) => ("[-] ", format!("  not done: {why}")),
                };
                let text = format!("  {tick}{}", sanitize::line(&r.label));
                let room = width.saturating_sub(2);
                let text = fit(&text, room);
                let rest = room.saturating_sub(cells(&text));
                spans.push(Span::styled(text, row_style));
                spans.push(Span::styled(
                    fit(&sanitize::line(&words), rest),
                    theme.dim(),
                ));
            }
            _ => {
                let label = pad(&fit(&sanitize::line(&r.label), self.label_w), self.label_w);
                spans.push(Span::styled(format!("{label}  "), row_style));
                let rest = width.saturating_sub(2 + self.label_w + 2);
                let (mark, mark_style) = mark_text(&r.mark, r.saving, theme);
                // The values' column is as wide as they are (room to type in while
                // editing), at most what the mark leaves, and at least half the room.
                let want = if r.editing {
                    rest
                } else {
                    self.value_w.max(MIN_VALUE)
                };
                let value_w = want
                    .min(rest.saturating_sub(cells(&mark) + 2))
                    .max(rest / 2)
                    .min(rest);
                let shown = if r.value.is_empty() && !r.editing {
                    "(empty)".to_string()
                } else {
                    sanitize::line(&r.value).into_owned()
                };
                let value = pad(&fit(&shown, value_w), value_w);
                let value_style = match (r.editing, r.value.is_empty()) {
                    (true, _) => theme.selected(),
                    (false, true) => theme.dim().patch(row_style),
                    (false, false) => row_style,
                };
                spans.push(Span::styled(value, value_style));
                let mark_room = rest.saturating_sub(value_w + 2);
                spans.push(Span::raw("  "));
                spans.push(Span::styled(fit(&mark, mark_room), mark_style));
            }
        }
        Line::from(spans)
    }

    /// Where the cursor stands in the field being edited, if it is on screen.
    pub(super) fn cursor(&self, state: &State, d: &Detail, body: Rect) -> Option<(u16, u16)> {
        let f = crate::app::form::form_of(state, d.item.id)?;
        let e = f.edit.as_ref()?;
        let at = d
            .lines
            .iter()
            .position(|l| l.kind == LineKind::Field(f.focus))?;
        let row = at.checked_sub(d.scroll)?;
        if row >= body.height as usize {
            return None;
        }
        let x = 2 + self.label_w + 2 + e.buf.cursor_cells();
        Some((
            body.x + (x as u16).min(body.width.saturating_sub(1)),
            body.y + row as u16,
        ))
    }
}

/// The mark after a value: ✔, ✔ with the form it will be stored in, ✘ with the rule.
fn mark_text(mark: &Mark, saving: bool, theme: &Theme) -> (String, Style) {
    if saving {
        return ("saving…".into(), theme.dim());
    }
    match mark {
        Mark::Ok => ("✔".into(), theme.mine()),
        Mark::OkAs(canon) => (
            format!("✔ saved as {}", sanitize::line(canon)),
            theme.mine(),
        ),
        Mark::Broken(rule) => (format!("✘ {}", sanitize::line(rule)), theme.expired()),
        Mark::Line(_) => (String::new(), theme.dim()),
    }
}

/// Terminal cells `s` takes.
fn cells(s: &str) -> usize {
    Span::raw(s).width()
}

/// `s` padded with spaces to `w` cells.
fn pad(s: &str, w: usize) -> String {
    let n = cells(s);
    format!("{s}{}", " ".repeat(w.saturating_sub(n)))
}

/// Draws the form's cursor when a field is being edited.
pub(super) fn place_cursor(form: &Form, state: &State, d: &Detail, frame: &mut Frame, body: Rect) {
    if let Some(pos) = form.cursor(state, d, body) {
        frame.set_cursor_position(pos);
    }
}
