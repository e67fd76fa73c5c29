//! The Stats view: counts by state and queue, completions per hour, lock ages, WIP.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Sparkline};

use super::Theme;
use crate::app::State;
use crate::domain::sanitize;

pub fn render(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let Some(st) = &state.stats else {
        frame.render_widget(Paragraph::new(Line::styled("Loading…", theme.dim())), area);
        return;
    };
    let [top, spark] = Layout::vertical([Constraint::Fill(1), Constraint::Length(4)]).areas(area);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(top);
    let mut l = vec![Line::styled("By state", theme.heading())];
    for s in &st.by_state {
        l.push(Line::raw(format!(
            "  {:<10} {:>9}",
            s.state.as_str(),
            s.count
        )));
    }
    l.push(Line::raw(format!(
        "  locked {}  expired {}  overdue {}",
        st.locked, st.expired, st.overdue
    )));
    l.push(Line::raw(""));
    l.push(Line::styled(
        format!(
            "{:<14} {:>7} {:>6} {:>7} {:>6}",
            "Queue", "open", "held", "done", "failed"
        ),
        theme.heading(),
    ));
    for q in &st.by_queue {
        let name: String = sanitize::line(&q.queue).chars().take(14).collect();
        l.push(Line::raw(format!(
            "{name:<14} {:>7} {:>6} {:>7} {:>6}{}",
            q.open,
            q.locked,
            q.done,
            q.failed,
            if q.paused { " PAUSED" } else { "" }
        )));
    }
    frame.render_widget(Paragraph::new(l), left);
    let mut r = vec![Line::styled("Lock ages", theme.heading())];
    for b in &st.lock_ages {
        r.push(Line::raw(format!("  {:<6} {:>7}", b.label, b.count)));
    }
    r.push(Line::raw(""));
    r.push(Line::styled("Work in progress", theme.heading()));
    for w in &st.wip {
        let name: String = sanitize::line(&w.user).chars().take(20).collect();
        r.push(Line::raw(format!("  {name:<20} {:>5}", w.held)));
    }
    if let Some(o) = &st.oldest_open {
        r.push(Line::raw(""));
        r.push(Line::styled("Oldest open", theme.heading()));
        r.push(Line::raw(format!(
            "  #{} {}",
            o.id,
            sanitize::line(&o.title)
        )));
    }
    frame.render_widget(Paragraph::new(r), right);
    let total: u64 = st.completed_per_hour.iter().sum();
    frame.render_widget(
        Sparkline::default()
            .block(Block::default().borders(Borders::TOP).title(format!(
                "Completions per hour (last {}h: {total})",
                st.completed_per_hour.len()
            )))
            .data(&st.completed_per_hour)
            .style(theme.mine()),
        spark,
    );
}
