//! The Stats view's figures page (`p`): per person (sorted by `o`, your own row
//! highlighted) with a bar chart of completions, and per queue with due-date health and a
//! sparkline of completions over the period. The same figures as `caseload report`.

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Bar, BarChart, BarGroup, Block, Borders, Paragraph, Sparkline};

use super::Theme;
use crate::app::Corrections;
use crate::app::State;
use crate::domain::figures::PeriodKind;
use crate::domain::sanitize;
use crate::domain::time::{date_hm_in, short_duration};
use crate::store::{Figures, Report};

/// Next period the `p` key shows, as the hint names it.
fn next_label(k: PeriodKind) -> &'static str {
    match k {
        PeriodKind::Days30 => "overview",
        k => k.next().label(),
    }
}

pub(super) fn render(state: &State, k: PeriodKind, theme: &Theme, frame: &mut Frame, area: Rect) {
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
    let report = state
        .figures
        .as_ref()
        .filter(|(p, _)| *p == k)
        .map(|(_, r)| r);
    let span = report.map_or_else(String::new, |r| {
        format!(
            " ({} to {})",
            date_hm_in(r.since, state.zone),
            date_hm_in(r.until, state.zone)
        )
    });
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(format!("Figures, {}{span}", k.label()), theme.heading()),
            Span::styled(
                format!(
                    "   p: {} · o: sort by {}",
                    next_label(k),
                    state.figures_sort.next().label()
                ),
                theme.dim(),
            ),
        ])),
        head,
    );
    let Some(r) = report else {
        frame.render_widget(Paragraph::new(Line::styled("Loading…", theme.dim())), body);
        return;
    };
    // People first, then a blank line and the queues; what does not fit is cut short
    // ("… N more people").
    let queue_h = (r.queues.len() as u16 + 1).min(body.height / 2).max(2);
    let people_h = (r.people.len() as u16 + 1)
        .max(3)
        .min(body.height.saturating_sub(queue_h + 1));
    let [people_area, _, queue_area, rest] = Layout::vertical([
        Constraint::Length(people_h),
        Constraint::Length(1),
        Constraint::Length(queue_h),
        Constraint::Fill(1),
    ])
    .areas(body);
    let [table, chart] =
        Layout::horizontal([Constraint::Min(60), Constraint::Percentage(30)]).areas(people_area);
    people_table(state, r, theme, frame, table);
    people_chart(state, r, theme, frame, chart);
    queue_table(r, theme, frame, queue_area);
    let corrections = state
        .corrections
        .as_ref()
        .filter(|(p, _)| *p == k)
        .map(|(_, c)| c);
    if let Some(c) = corrections
        && rest.height >= 3
    {
        let [_, area] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(rest);
        corrections_table(c, theme, frame, area);
    }
}

/// Which data was dirty (as `report --by field|source`): the fields corrected, then the
/// sources, dirtiest first; nothing when no completed record had a field or a source.
fn corrections_table(c: &Corrections, theme: &Theme, frame: &mut Frame, area: Rect) {
    let share = |s: Option<f64>| s.map_or_else(|| "-".into(), |s| format!("{:.0}%", s * 100.0));
    let fields: Vec<_> = c.fields.iter().filter(|f| f.records > 0).collect();
    let sources: Vec<_> = c.sources.iter().filter(|s| s.source.is_some()).collect();
    if fields.is_empty() && sources.is_empty() {
        return;
    }
    let mut rows = vec![Line::styled(
        format!(
            "{:<28} {:>7} {:>9} {:>6}  most common ({} records completed)",
            "Corrections", "records", "corrected", "share", c.records
        ),
        theme.heading(),
    )];
    let room = area.height.saturating_sub(1) as usize;
    // Both kinds get a share of the room when both have rows.
    let field_room = if sources.is_empty() {
        room
    } else {
        room.div_ceil(2)
    };
    for f in fields.iter().take(field_room) {
        let name = format!("{}/{}", sanitize::line(&f.queue), sanitize::line(&f.field));
        rows.push(Line::raw(format!(
            "{:<28} {:>7} {:>9} {:>6}  {}",
            name.chars().take(28).collect::<String>(),
            f.records,
            f.corrected,
            share(f.share),
            f.most_common().unwrap_or("-")
        )));
    }
    let left = room.saturating_sub(rows.len() - 1);
    for s in sources.iter().take(left) {
        let name = format!(
            "source {}",
            sanitize::line(s.source.as_deref().unwrap_or(""))
        );
        let top = s.top_field.as_deref().map_or_else(
            || "-".into(),
            |f| format!("most corrected: {}", sanitize::line(f)),
        );
        rows.push(Line::raw(format!(
            "{:<28} {:>7} {:>9} {:>6}  {top}",
            name.chars().take(28).collect::<String>(),
            s.records,
            s.corrected,
            share(s.share),
        )));
    }
    frame.render_widget(Paragraph::new(rows), area);
}

fn dur(ms: Option<i64>) -> String {
    ms.map_or_else(|| "-".into(), short_duration)
}

fn people_table(state: &State, r: &Report, theme: &Theme, frame: &mut Frame, area: Rect) {
    let mut lines = vec![Line::styled(
        format!(
            "{:<14} {:>5} {:>6} {:>4} {:>4} {:>4} {:>7} {:>7} {:>6}",
            format!(
                "People ({})",
                state.figures_sort.label().split(' ').next().unwrap_or("")
            ),
            "done",
            "failed",
            "skip",
            "rel",
            "lost",
            "median",
            "p90",
            "done/h"
        ),
        theme.heading(),
    )];
    if r.people.is_empty() {
        lines.push(Line::styled(
            "  nobody finished, released or lost an item in this period",
            theme.dim(),
        ));
    }
    let mut people: Vec<&Figures> = r.people.iter().collect();
    state.figures_sort.sort(&mut people);
    let room = area.height.saturating_sub(1) as usize;
    for (i, p) in people.iter().enumerate() {
        if i + 1 == room && people.len() > room {
            lines.push(Line::styled(
                format!("  … {} more people", people.len() - i),
                theme.dim(),
            ));
            break;
        }
        let me = p.name == state.me;
        // Your own row: marked (for NO_COLOR) and drawn in your colour.
        let name: String = sanitize::line(&p.name).chars().take(12).collect();
        let name = format!("{}{name}", if me { "* " } else { "  " });
        let text = format!(
            "{name:<14} {:>5} {:>6} {:>4} {:>4} {:>4} {:>7} {:>7} {:>6}",
            p.completed,
            p.failed,
            p.skipped,
            p.released,
            p.lost,
            dur(p.handle_median_ms),
            dur(p.handle_p90_ms),
            p.completed_per_hour
                .map_or_else(|| "-".into(), |r| format!("{r:.1}"))
        );
        lines.push(if me {
            Line::styled(text, theme.mine().add_modifier(Modifier::BOLD))
        } else {
            Line::raw(text)
        });
    }
    frame.render_widget(Paragraph::new(lines), area);
}

fn people_chart(state: &State, r: &Report, theme: &Theme, frame: &mut Frame, area: Rect) {
    let mut people: Vec<&Figures> = r.people.iter().collect();
    // The chart always shows the most completions first, whatever the table's order.
    crate::app::PeopleSort::Done.sort(&mut people);
    let bars: Vec<Bar> = people
        .iter()
        .take(area.height.saturating_sub(1) as usize)
        .map(|p| {
            let name: String = sanitize::line(&p.name).chars().take(8).collect();
            let bar = Bar::default()
                .value(p.completed)
                .label(Line::from(format!("{name:>8}")))
                .text_value(p.completed.to_string());
            if p.name == state.me {
                bar.style(theme.mine())
            } else {
                bar
            }
        })
        .collect();
    frame.render_widget(
        BarChart::default()
            .block(
                Block::default()
                    .borders(Borders::TOP)
                    .title(Span::styled("Completions per person", theme.heading())),
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

fn queue_table(r: &Report, theme: &Theme, frame: &mut Frame, area: Rect) {
    let slot = if r.slot_ms == 3_600_000 {
        "per hour".to_string()
    } else if r.slot_ms == 86_400_000 {
        "per day".to_string()
    } else {
        format!("per {}", short_duration(r.slot_ms))
    };
    let head = format!(
        "{:<14} {:>5} {:>6} {:>4} {:>7} {:>7} {:>7} {:>7} {:>6} {:>7} {:>7}  done {slot}",
        "Queues",
        "done",
        "failed",
        "lost",
        "median",
        "p90",
        "cycle",
        "overdue",
        "due<1h",
        "late",
        "on time"
    );
    let width = head.chars().count() as u16 - slot.chars().count() as u16 - 6;
    let mut rows = vec![Line::styled(head, theme.heading())];
    let room = area.height.saturating_sub(1) as usize;
    for q in r.queues.iter().take(room) {
        let f = &q.figures;
        let name: String = sanitize::line(&f.name).chars().take(14).collect();
        let text = format!(
            "{name:<14} {:>5} {:>6} {:>4} {:>7} {:>7} {:>7} {:>7} {:>6} {:>7} {:>7}",
            f.completed,
            f.failed,
            f.lost,
            dur(f.handle_median_ms),
            dur(f.handle_p90_ms),
            dur(q.cycle_median_ms),
            q.overdue,
            q.due_next_hour,
            dur(q.late_median_ms),
            q.on_time_share
                .map_or_else(|| "-".into(), |s| format!("{:.0}%", s * 100.0))
        );
        rows.push(if q.overdue > 0 {
            Line::styled(text, theme.late())
        } else {
            Line::raw(text)
        });
    }
    frame.render_widget(Paragraph::new(rows), area);
    // One sparkline per queue row, right of its figures.
    let spark_x = area.x + width + 2;
    let spark_w = area.width.saturating_sub(width + 2);
    if spark_w < 4 {
        return;
    }
    for (i, q) in r.queues.iter().take(room).enumerate() {
        let series = &q.completed_series;
        let data: Vec<u64> = if series.len() > spark_w as usize {
            // Fold neighbouring slots so the whole period fits.
            let per = series.len().div_ceil(spark_w as usize);
            series.chunks(per).map(|c| c.iter().sum()).collect()
        } else {
            series.clone()
        };
        frame.render_widget(
            Sparkline::default().data(&data).style(theme.mine()),
            Rect {
                x: spark_x,
                y: area.y + 1 + i as u16,
                width: spark_w.min(data.len() as u16),
                height: 1,
            },
        );
    }
}
