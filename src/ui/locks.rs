//! The Locks view: every current lock, oldest first, with who holds it, for how long and
//! how much time is left. Expired and near-expiry locks carry text markers (`!!`, `!`)
//! as well as colour, so they stand out under NO_COLOR too.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::Span;
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::Theme;
use crate::app::{State, View, layout};
use crate::domain::sanitize;
use crate::domain::time::short_duration;
use crate::domain::{Item, LockStatus};

pub fn render(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let Some(pane) = state.pane(View::Locks) else {
        return;
    };
    let rows_fit = layout::list_rows(state, View::Locks);
    let table_area = Rect {
        height: (rows_fit as u16 + 1).min(area.height),
        ..area
    };
    let header = Row::new([
        "",
        "",
        "HOLDER",
        "QUEUE",
        "ID",
        "TITLE",
        "HELD FOR",
        "TIME LEFT",
    ])
    .style(theme.header());
    let width = |f: &dyn Fn(&Item) -> usize, min: usize, max: usize| {
        pane.rows.iter().map(f).max().unwrap_or(min).clamp(min, max) as u16
    };
    let holder_w = width(
        &|r| {
            sanitize::line(r.lock_user.as_deref().unwrap_or(""))
                .chars()
                .count()
        },
        6,
        14,
    );
    let queue_w = width(&|r| sanitize::line(&r.queue).chars().count(), 5, 12);
    let id_w = width(&|r| r.id.to_string().len(), 2, 10);
    let widths = [
        Constraint::Length(1),
        Constraint::Length(2),
        Constraint::Length(holder_w),
        Constraint::Length(queue_w),
        Constraint::Length(id_w),
        Constraint::Fill(1),
        Constraint::Length(8),
        Constraint::Length(16),
    ];
    if pane.total == 0 {
        frame.render_widget(
            Table::new(Vec::<Row>::new(), widths).header(header),
            table_area,
        );
        let empty = if state.locks_filter.is_empty() {
            "Nobody holds a lock."
        } else {
            "No lock matches the filter (Esc clears it)."
        };
        frame.render_widget(
            Paragraph::new(Span::styled(format!("  {empty}"), theme.dim())),
            Rect {
                y: table_area.y + 1,
                height: 1,
                ..table_area
            },
        );
        return;
    }
    let rows: Vec<Row> = pane
        .window(rows_fit)
        .map(|(at, item)| match item {
            Some(item) => row(state, item, at == pane.selected, theme),
            None => super::list::not_loaded(at == pane.selected, theme),
        })
        .collect();
    frame.render_widget(
        Table::new(rows, widths).header(header).column_spacing(1),
        table_area,
    );
}

fn row<'a>(state: &State, item: &'a Item, selected: bool, theme: &Theme) -> Row<'a> {
    let now = state.now;
    let q = state.queue(&item.queue);
    let warn = item.lock().is_some_and(|l| l.in_warning(&q, now));
    let (mark, left, style) = match state.lock_status(item) {
        LockStatus::Expired { overrun, .. } => (
            "!!",
            format!("EXPIRED +{}", short_duration(overrun)),
            theme.expired(),
        ),
        LockStatus::Held { remaining, .. } if warn => (
            "! ",
            format!("{} left", short_duration(remaining)),
            theme.held(),
        ),
        LockStatus::Held { remaining, .. } => (
            "  ",
            format!("{} left", short_duration(remaining)),
            Style::default(),
        ),
        LockStatus::Free => ("  ", "-".into(), Style::default()),
        LockStatus::Assigned { .. } => ("  ", "assigned".into(), Style::default()),
    };
    let since = state
        .lock_since
        .get(&item.id)
        .copied()
        .or(item.lock_time)
        .unwrap_or(now);
    let holder = sanitize::line(item.lock_user.as_deref().unwrap_or("")).into_owned();
    let cells = vec![
        Cell::from(if selected { ">" } else { " " }),
        Cell::from(mark).style(style),
        Cell::from(holder),
        Cell::from(sanitize::line(&item.queue).into_owned()),
        Cell::from(item.id.to_string()),
        Cell::from(sanitize::line(&item.list_title()).into_owned()),
        Cell::from(short_duration(now - since)),
        Cell::from(left).style(style),
    ];
    let r = Row::new(cells);
    if selected {
        r.style(theme.selected())
    } else {
        r
    }
}
