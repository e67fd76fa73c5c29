//! The Locks view: every current lock, oldest first, with who holds it, for how long and
//! how much time is left; then the parked items (`P`), with their owner and wake time. Expired and near-expiry locks carry text markers (`!!`, `!`)
//! as well as colour, so they stand out under NO_COLOR too.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Span;
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::Theme;
use super::columns::{Col, Plan, fit, plan};
use crate::app::{State, View, layout};
use crate::domain::park::{Park, ParkStatus, when_text};
use crate::domain::sanitize;
use crate::domain::time::{compact_duration, short_duration};
use crate::domain::{Item, LockStatus};

pub(super) fn render(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let Some(pane) = state.pane(View::Locks) else {
        return;
    };
    let rows_fit = layout::list_rows(state, View::Locks);
    let table_area = Rect {
        height: (rows_fit as u16 + 1).min(area.height),
        ..area
    };
    let shown = || pane.window(rows_fit).filter_map(|(_, i)| i);
    let width = |f: &dyn Fn(&Item) -> usize, min: usize, max: usize| {
        shown().map(f).max().unwrap_or(min).clamp(min, max) as u16
    };
    let holder_w = width(
        &|r| {
            let who = r.lock_user.as_deref().or(r.parked_by.as_deref());
            Span::raw(sanitize::line(who.unwrap_or(""))).width()
        },
        6,
        14,
    );
    let queue_w = width(&|r| Span::raw(sanitize::line(&r.queue)).width(), 5, 12);
    let id_w = width(&|r| r.id.to_string().len(), 2, 10);
    let title_want = width(
        &|r| Span::raw(sanitize::line(&r.list_title())).width(),
        0,
        500,
    )
    .min(area.width * 2 / 5);
    let cols = [
        Col::new(1, 1, None),
        Col::new(2, 2, None),
        Col::new(holder_w, holder_w.min(8), None),
        Col::new(queue_w, queue_w.min(8), Some(1)),
        Col::new(id_w, id_w, None),
        Col::TITLE,
        Col::new(8, 4, Some(2)),
        Col::new(16, 9, None),
    ];
    let plan = plan(area.width, &cols, title_want);
    let header = Row::new(plan.pick(HEADERS.to_vec())).style(theme.header());
    let widths = plan.constraints();
    if pane.total == 0 {
        frame.render_widget(
            Table::new(Vec::<Row>::new(), widths).header(header),
            table_area,
        );
        let empty = if state.locks_filter.is_empty() {
            "Nobody holds a lock or has an item parked."
        } else {
            "Nothing held or parked matches the filter (Esc clears it)."
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
            Some(item) => row(state, item, at == pane.selected, &plan, theme),
            None => super::list::not_loaded(at == pane.selected, theme),
        })
        .collect();
    frame.render_widget(
        Table::new(rows, widths).header(header).column_spacing(1),
        table_area,
    );
}

const HEADERS: [&str; 8] = [
    "",
    "",
    "HOLDER",
    "QUEUE",
    "ID",
    "TITLE",
    "HELD FOR",
    "TIME LEFT",
];

fn row<'a>(state: &State, item: &'a Item, selected: bool, plan: &Plan, theme: &Theme) -> Row<'a> {
    if let Some(p) = Park::of(item, state.queue(&item.queue).park_grace_ms()) {
        return parked_row(state, item, &p, selected, plan, theme);
    }
    let now = state.now;
    let dur = |ms| {
        if plan.compact {
            compact_duration(ms)
        } else {
            short_duration(ms)
        }
    };
    let expired = if plan.compact { "EXP" } else { "EXPIRED" };
    let left_word = if plan.compact { "" } else { " left" };
    let q = state.queue(&item.queue);
    let warn = item.lock().is_some_and(|l| l.in_warning(&q, now));
    let (mark, left, style) = match state.lock_status(item) {
        LockStatus::Expired { overrun, .. } => (
            "!!",
            format!("{expired} +{}", dur(overrun)),
            theme.expired(),
        ),
        LockStatus::Held { remaining, .. } if warn => {
            ("! ", format!("{}{left_word}", dur(remaining)), theme.held())
        }
        LockStatus::Held { remaining, .. } => (
            "  ",
            format!("{}{left_word}", dur(remaining)),
            Style::default(),
        ),
        LockStatus::Free => ("  ", "-".into(), Style::default()),
        LockStatus::Assigned { .. } => ("  ", "assigned".into(), Style::default()),
    };
    // Time held: since the take (`lock_time`; renewals move only the expiry), what the
    // view is sorted by. An assignment has no clock until it is opened.
    let held_for = match item.lock() {
        Some(l) if !l.is_assignment() => dur((now - l.time).max(0)),
        _ => "-".into(),
    };
    let holder = sanitize::line(item.lock_user.as_deref().unwrap_or("")).into_owned();
    let cells = vec![
        Cell::from(if selected { ">" } else { " " }),
        Cell::from(mark).style(style),
        Cell::from(fit(&holder, plan.width(2))),
        Cell::from(fit(&sanitize::line(&item.queue), plan.width(3))),
        Cell::from(item.id.to_string()),
        Cell::from(fit(&sanitize::line(&item.list_title()), plan.width(5))),
        Cell::from(held_for),
        Cell::from(left).style(style),
    ];
    let r = Row::new(plan.pick(cells));
    if selected {
        r.style(theme.selected())
    } else {
        r
    }
}

/// A parked item: `P`, its owner in the holder's column, no time held (no lock), and
/// when it wakes or, woken, when it returns to the pool.
fn parked_row<'a>(
    state: &State,
    item: &'a Item,
    p: &Park,
    selected: bool,
    plan: &Plan,
    theme: &Theme,
) -> Row<'a> {
    let now = state.now;
    let (left, style) = match p.status(now) {
        ParkStatus::Sleeping => (
            format!("wakes {}", when_text(p.until, now)),
            Style::default(),
        ),
        _ => (
            format!("woke, back {}", when_text(p.returns_at(), now)),
            theme.held(),
        ),
    };
    let cells = vec![
        Cell::from(if selected { ">" } else { " " }),
        Cell::from("P ").style(style),
        Cell::from(fit(&sanitize::line(&p.by), plan.width(2))),
        Cell::from(fit(&sanitize::line(&item.queue), plan.width(3))),
        Cell::from(item.id.to_string()),
        Cell::from(fit(&sanitize::line(&item.list_title()), plan.width(5))),
        Cell::from("parked"),
        Cell::from(left).style(style),
    ];
    let r = Row::new(plan.pick(cells));
    if selected {
        r.style(theme.selected())
    } else {
        r
    }
}
