//! The Queue, Mine and Locks views: a window of rows with each row's lock state.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::Theme;
use crate::app::lost::describe_lost;
use crate::app::{State, View, layout};
use crate::domain::sanitize;
use crate::domain::time::short_duration;
use crate::domain::{Item, LockStatus};

pub fn render(state: &State, view: View, theme: &Theme, frame: &mut Frame, area: Rect) {
    let Some(pane) = state.pane(view) else {
        return;
    };
    let rows_fit = layout::list_rows(state, view);
    let table_area = Rect {
        height: (rows_fit as u16 + 1).min(area.height),
        ..area
    };
    let header =
        Row::new(["", "ID", "PRI", "AGE", "DUE", "QUEUE", "TITLE", "LOCK"]).style(theme.header());
    let rows: Vec<Row> = pane
        .window(rows_fit)
        .map(|(at, item)| {
            let selected = at == pane.selected;
            match item {
                Some(item) => row(state, item, selected, theme),
                None => not_loaded(selected, theme),
            }
        })
        .collect();
    // ID and QUEUE are as wide as what is on screen; TITLE gets the rest.
    let id_w = pane
        .rows
        .iter()
        .map(|r| r.id.to_string().len())
        .max()
        .unwrap_or(2)
        .max(2);
    let queue_w = pane
        .rows
        .iter()
        .map(|r| sanitize::line(&r.queue).chars().count())
        .max()
        .unwrap_or(5)
        .clamp(5, 12);
    let widths = [
        Constraint::Length(1),
        Constraint::Length(id_w as u16),
        Constraint::Length(3),
        Constraint::Length(6),
        Constraint::Length(11),
        Constraint::Length(queue_w as u16),
        Constraint::Fill(1),
        Constraint::Length(22),
    ];
    if rows.is_empty() {
        frame.render_widget(
            Table::new(Vec::<Row>::new(), widths).header(header),
            table_area,
        );
        let empty = match view {
            View::Queue if !state.filter.is_empty() => {
                "Nothing matches the filter (Esc clears it)."
            }
            View::Queue => "No open items.",
            View::Mine => "You hold no items. Press n to take the next one.",
            _ => "Nobody holds a lock.",
        };
        frame.render_widget(
            Paragraph::new(Span::styled(format!("  {empty}"), theme.dim())),
            Rect {
                y: table_area.y + 1,
                height: 1,
                ..table_area
            },
        );
    } else {
        frame.render_widget(
            Table::new(rows, widths).header(header).column_spacing(1),
            table_area,
        );
    }
    if view == View::Mine {
        let n = layout::mine_notice_rows(state);
        if n > 0 {
            let notices = Rect {
                y: area.y + area.height - n,
                height: n,
                ..area
            };
            mine_notices(state, theme, frame, notices);
        }
    }
}

/// A row of the window whose item has not been read yet (the database is busy).
pub(super) fn not_loaded(selected: bool, theme: &Theme) -> Row<'static> {
    let r = Row::new([
        Cell::from(if selected { ">" } else { " " }),
        Cell::from("…").style(theme.dim()),
    ]);
    if selected {
        r.style(theme.selected())
    } else {
        r
    }
}

fn row<'a>(state: &State, item: &'a Item, selected: bool, theme: &Theme) -> Row<'a> {
    let now = state.now;
    let (lock, lock_style) = match state.lock_status(item) {
        LockStatus::Free => ("free".to_string(), Style::default()),
        LockStatus::Assigned { user } if user == state.me => {
            ("assigned to you".to_string(), theme.mine())
        }
        LockStatus::Assigned { user } => {
            (format!("assigned: {}", sanitize::line(&user)), theme.held())
        }
        LockStatus::Held { user, remaining } if user == state.me => {
            let warn = item
                .lock()
                .is_some_and(|l| l.in_warning(&state.queue(&item.queue), now));
            let mark = if warn { "! " } else { "" };
            (
                format!("{mark}you, {} left", short_duration(remaining)),
                if warn { theme.expired() } else { theme.mine() },
            )
        }
        LockStatus::Held { user, remaining } => (
            format!(
                "{}, {} left",
                sanitize::line(&user),
                short_duration(remaining)
            ),
            theme.held(),
        ),
        LockStatus::Expired { user, overrun } => (
            format!(
                "EXPIRED {} +{}",
                if user == state.me {
                    "you".to_string()
                } else {
                    sanitize::line(&user).into_owned()
                },
                short_duration(overrun)
            ),
            theme.expired(),
        ),
    };
    let (due, due_style) = match item.due_at {
        None => ("-".to_string(), Style::default()),
        Some(d) if d > now => (format!("in {}", short_duration(d - now)), Style::default()),
        Some(d) => (format!("LATE {}", short_duration(now - d)), theme.late()),
    };
    let cells = vec![
        Cell::from(if selected { ">" } else { " " }),
        Cell::from(item.id.to_string()),
        Cell::from(item.priority.to_string()),
        Cell::from(short_duration(now - item.created_at)),
        Cell::from(due).style(due_style),
        Cell::from(sanitize::line(&item.queue).into_owned()),
        Cell::from(sanitize::line(&item.list_title()).into_owned()),
        Cell::from(lock).style(lock_style),
    ];
    let r = Row::new(cells);
    if selected {
        r.style(theme.selected())
    } else {
        r
    }
}

fn mine_notices(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let mut lines = vec![Line::styled("Lost locks", theme.heading())];
    for n in &state.notices {
        lines.push(Line::styled(
            format!("  {}", sanitize::line(&n.message)),
            theme.error(),
        ));
    }
    for l in &state.lost_since {
        lines.push(Line::raw(format!(
            "  since your last visit: {}",
            sanitize::line(&describe_lost(l))
        )));
    }
    frame.render_widget(Paragraph::new(lines), area);
}
