//! A read-only text report over the list (what a user did today); j/k scroll, Esc closes.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::Theme;
use crate::app::{LineKind, Report};
use crate::domain::sanitize;

pub(super) fn render(r: &Report, theme: &Theme, frame: &mut Frame, area: Rect) {
    let mut lines = vec![Line::styled(
        sanitize::line(&r.title).into_owned(),
        theme.header(),
    )];
    for l in r.lines.iter().skip(r.scroll).take(area.height as usize) {
        let style = match l.kind {
            LineKind::Heading => theme.heading(),
            LineKind::Text => ratatui::style::Style::default(),
            LineKind::Dim | LineKind::Field(_) | LineKind::Candidate(_) => theme.dim(),
        };
        lines.push(Line::styled(l.text.clone(), style));
    }
    frame.render_widget(Paragraph::new(lines), area);
}
