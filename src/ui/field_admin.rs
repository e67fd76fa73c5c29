//! A queue's field definitions, listed over the Stats view (supervisors): each field's
//! name, label and rules in their order on screen, the selected one reversed.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::Theme;
use super::columns::fit;
use crate::app::State;
use crate::app::field_admin::{FieldAdmin, rules_text};
use crate::domain::sanitize;

pub(super) fn render(state: &State, fa: &FieldAdmin, theme: &Theme, frame: &mut Frame, area: Rect) {
    let defs = state.fields.get(&fa.queue).map_or(&[][..], Vec::as_slice);
    let rect = Rect {
        x: area.x + 2,
        y: area.y + 1,
        width: area.width.saturating_sub(4),
        height: area.height.saturating_sub(2),
    };
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border())
        .title(Span::styled(
            format!(" Fields of queue {} ", sanitize::line(&fa.queue)),
            theme.heading(),
        ));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let w = inner.width as usize;
    let name_w = defs
        .iter()
        .map(|d| d.name.chars().count())
        .max()
        .unwrap_or(0)
        .min(24);
    let mut lines: Vec<Line> = Vec::new();
    if defs.is_empty() {
        lines.push(Line::styled(
            "No fields yet: a adds one (its values live in each item's params under its name).",
            theme.dim(),
        ));
    }
    let sel = fa.selected.min(defs.len().saturating_sub(1));
    let room = (inner.height as usize).saturating_sub(2).max(1);
    let first = sel.saturating_sub(room - 1);
    for (i, d) in defs.iter().enumerate().skip(first).take(room) {
        let text = format!(
            "{:>2}  {:<name_w$}  {}",
            i + 1,
            fit(&sanitize::line(&d.name), name_w),
            sanitize::line(&rules_text(d))
        );
        let style = if i == sel {
            theme.selected()
        } else {
            Default::default()
        };
        lines.push(Line::styled(fit(&text, w), style));
    }
    let body = Rect {
        height: inner.height.saturating_sub(1),
        ..inner
    };
    frame.render_widget(Paragraph::new(lines), body);
    let hint = "a add · Enter change · d delete · K/J move up/down · Esc close";
    frame.render_widget(
        Paragraph::new(Line::styled(fit(hint, w), theme.dim())),
        Rect {
            y: inner.y + inner.height.saturating_sub(1),
            height: 1,
            ..inner
        },
    );
}
