//! The Stats view: counts by state, the queues with their settings (a supervisor selects
//! one and presses S to change it), work in progress per user, the oldest open item,
//! overdue items, bar charts of open-item ages and lock ages, and completions per hour
//! over the last 24 hours as a sparkline. The same `Stats` is `caseload stats --json`.

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Bar, BarChart, BarGroup, Block, Borders, Paragraph, Sparkline};

use super::Theme;
use crate::app::State;
use crate::domain::ItemState;
use crate::domain::sanitize;
use crate::domain::time::short_duration;
use crate::store::{Bucket, Stats};

pub(super) fn render(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    if let Some(k) = state.figures_period {
        return super::figures::render(state, k, theme, frame, area);
    }
    let Some(st) = &state.stats else {
        frame.render_widget(Paragraph::new(Line::styled("Loading…", theme.dim())), area);
        return;
    };
    let queue_rows = st.by_queue.len().min(8) as u16 + 1;
    let [top, queues, charts, spark] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(queue_rows + 1),
        Constraint::Length(8),
        Constraint::Length(5),
    ])
    .areas(area);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(top);

    items_panel(st, state.sla_watch, theme, frame, left);

    wip_panel(st, theme, frame, right);

    queue_table(state, theme, frame, queues);

    let [open_area, lock_area] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(charts);
    age_chart("Open items by age", &st.open_ages, theme, frame, open_area);
    age_chart("Locks by age", &st.lock_ages, theme, frame, lock_area);

    completions(state, st, theme, frame, spark);
}

/// Items by state, overdue and the oldest open item.
fn items_panel(
    st: &Stats,
    sla: Option<crate::domain::sla::SlaWatch>,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let count = |s: ItemState| {
        st.by_state
            .iter()
            .find(|c| c.state == s)
            .map_or(0, |c| c.count)
    };
    let mut l = vec![Line::styled("Items", theme.heading())];
    l.push(Line::raw(format!(
        "  open {}  (held {}, EXPIRED {})",
        count(ItemState::Open),
        st.locked,
        st.expired
    )));
    l.push(Line::raw(format!(
        "  done {}  failed {}  cancelled {}",
        count(ItemState::Done),
        count(ItemState::Failed),
        count(ItemState::Cancelled)
    )));
    let overdue = format!("  overdue (past due): {}", st.overdue);
    l.push(if st.overdue > 0 {
        Line::styled(format!("{overdue}  LATE"), theme.late())
    } else {
        Line::raw(overdue)
    });
    // Queues with an SLA: breaches today and items with 75 % of their time spent.
    if let Some(w) = sla {
        let line = format!(
            "  SLA: {} breached today, {} at risk",
            w.breaches_today, w.at_risk
        );
        l.push(match (w.breaches_today, w.at_risk) {
            (0, 0) => Line::raw(line),
            (0, _) => Line::styled(format!("{line}  !"), theme.alert(false)),
            _ => Line::styled(format!("{line}  !!"), theme.late()),
        });
    }
    match &st.oldest_open {
        Some(o) => {
            l.push(Line::raw(format!(
                "  oldest open: #{} ({} old)",
                o.id,
                short_duration(st.at - o.created_at)
            )));
            l.push(Line::raw(format!("    {}", sanitize::line(&o.title))));
        }
        None => l.push(Line::raw("  oldest open: none")),
    }
    frame.render_widget(Paragraph::new(l), area);
}

/// Who holds how many locks, most first.
fn wip_panel(st: &Stats, theme: &Theme, frame: &mut Frame, area: Rect) {
    let mut r = vec![Line::styled(
        "Work in progress (locks held)",
        theme.heading(),
    )];
    if st.wip.is_empty() {
        r.push(Line::styled("  nobody holds a lock", theme.dim()));
    }
    let room = area.height.saturating_sub(1) as usize;
    let mut wip: Vec<_> = st.wip.iter().collect();
    wip.sort_by(|a, b| b.held.cmp(&a.held).then(a.user.cmp(&b.user)));
    for (i, w) in wip.iter().enumerate() {
        if i + 1 == room && wip.len() > room {
            r.push(Line::styled(
                format!("  … {} more users", wip.len() - i),
                theme.dim(),
            ));
            break;
        }
        let name: String = sanitize::line(&w.user).chars().take(20).collect();
        r.push(Line::raw(format!("  {name:<20} {:>6}", w.held)));
    }
    frame.render_widget(Paragraph::new(r), area);
}

/// Completions per hour over the last day, with its time axis.
fn completions(state: &State, st: &Stats, theme: &Theme, frame: &mut Frame, spark: Rect) {
    let total: u64 = st.completed_per_hour.iter().sum();
    let peak = st.completed_per_hour.iter().max().copied().unwrap_or(0);
    let hours = st.completed_per_hour.len().max(1);
    let [spark_area, axis] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(1)]).areas(spark);
    // Each hour gets the same number of columns, so the chart fills the width.
    let per_hour = (spark_area.width as usize / hours).max(1);
    let data: Vec<u64> = st
        .completed_per_hour
        .iter()
        .flat_map(|n| std::iter::repeat_n(*n, per_hour))
        .collect();
    frame.render_widget(
        Sparkline::default()
            .block(Block::default().borders(Borders::TOP).title(format!(
                "Completions per hour, last {hours}h: {total} (peak {peak}/h) · p: figures per person and queue"
            )))
            .data(&data)
            .style(theme.mine()),
        spark_area,
    );
    let start = crate::domain::time::clock_hm_in(
        (st.at.div_euclid(3_600_000) - (hours as i64 - 1)) * 3_600_000,
        state.zone,
    );
    let left = format!("{start} ({}h ago)", hours - 1);
    let right = "this hour";
    let width = (per_hour * hours).min(axis.width as usize);
    let pad = width.saturating_sub(left.chars().count() + right.len());
    frame.render_widget(
        Paragraph::new(Line::styled(
            format!("{left}{}{right}", " ".repeat(pad)),
            theme.dim(),
        )),
        axis,
    );
}

fn queue_table(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let Some(st) = &state.stats else {
        return;
    };
    let sup = state.role.supervises();
    let mut lines = vec![Line::styled(
        format!(
            "  {:<14} {:>8} {:>6} {:>8} {:>6} {:>6} {:>5} {:>4}  {}",
            "Queue",
            "open",
            "held",
            "done",
            "failed",
            "lock",
            "warn",
            "wip",
            if sup { "(j/k select, S edit)" } else { "" }
        ),
        theme.heading(),
    )];
    let first = state
        .stats_selected
        .saturating_sub(area.height.saturating_sub(2) as usize);
    for (i, q) in st.by_queue.iter().enumerate().skip(first) {
        let settings = state.queue(&q.queue);
        let name: String = sanitize::line(&q.queue).chars().take(14).collect();
        let selected = sup && i == state.stats_selected;
        let text = format!(
            "{} {name:<14} {:>8} {:>6} {:>8} {:>6} {:>6} {:>5} {:>4}  {}",
            if selected { ">" } else { " " },
            q.open,
            q.locked,
            q.done,
            q.failed,
            format!("{}s", settings.lock_seconds),
            format!("{}s", settings.warn_seconds),
            settings
                .max_per_user
                .map_or("-".to_string(), |n| n.to_string()),
            if q.paused { "PAUSED" } else { "" }
        );
        lines.push(if selected {
            Line::styled(text, theme.selected())
        } else {
            Line::raw(text)
        });
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// A count as it fits next to a bar: 999, 12.3k, 1.0M.
fn compact(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

fn age_chart(title: &str, buckets: &[Bucket], theme: &Theme, frame: &mut Frame, area: Rect) {
    let bars: Vec<Bar> = buckets
        .iter()
        .map(|b| {
            Bar::default()
                .value(b.count)
                .label(Line::from(format!("{:>5}", b.label)))
                .text_value(compact(b.count))
        })
        .collect();
    let total: u64 = buckets.iter().map(|b| b.count).sum();
    frame.render_widget(
        BarChart::default()
            .block(
                Block::default()
                    .borders(Borders::TOP)
                    .title(Span::styled(format!("{title} ({total})"), theme.heading())),
            )
            .direction(Direction::Horizontal)
            .bar_width(1)
            .bar_gap(0)
            .bar_style(theme.held())
            .value_style(theme.header())
            .data(BarGroup::default().bars(&bars)),
        area,
    );
}
