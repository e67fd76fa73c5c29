//! The Queue, Mine and Locks views: a window of rows with each row's lock state.

use crate::domain::Millis;
use crate::domain::sla::{Sla, Urgency, left};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::Theme;
use super::columns::{Col, Plan, fit, plan};
use crate::app::lost::describe_lost;
use crate::app::{ListPane, State, View, layout};
use crate::domain::fields::{Col as FieldCol, field};
use crate::domain::sanitize;
use crate::domain::time::{compact_duration, short_duration};
use crate::domain::{Item, ItemState, LockStatus};

pub(super) fn render(state: &State, view: View, theme: &Theme, frame: &mut Frame, area: Rect) {
    let Some(pane) = state.pane(view) else {
        return;
    };
    let rows_fit = layout::list_rows(state, view);
    let table_area = Rect {
        height: (rows_fit as u16 + 1).min(area.height),
        ..area
    };
    let plan = plan_columns(pane, rows_fit, area.width);
    let header = Row::new(plan.pick(headers().to_vec())).style(theme.header());
    // A newer filter's rows on their way: the older rows answer another filter, so none
    // are shown, and the list says what it waits for (the header says "searching…").
    let asked = state
        .filter_of(view)
        .and_then(|(asked, pending)| pending.then_some(asked));
    let rows: Vec<Row> = match asked {
        Some(_) => Vec::new(),
        None => pane
            .window(rows_fit)
            .map(|(at, item)| {
                let selected = at == pane.selected;
                match item {
                    Some(item) => row(state, item, selected, &plan, theme),
                    None => not_loaded(selected, theme),
                }
            })
            .collect(),
    };
    let widths = plan.constraints();
    if rows.is_empty() {
        frame.render_widget(
            Table::new(Vec::<Row>::new(), widths).header(header),
            table_area,
        );
        let waiting = asked.map(|f| match &f.text {
            Some(t) => format!("Searching for “{}”…", sanitize::line(t)),
            None => "Loading…".to_string(),
        });
        let empty = match view {
            _ if waiting.is_some() => waiting.as_deref().unwrap_or_default(),
            View::Queue if !pane.filter.is_empty() => "Nothing matches the filter (Esc clears it).",
            View::Queue => "No open items.",
            View::Mine => "You hold no items. Press n to take the next one.",
            View::Review => "Nothing waits for review that you may review.",
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

/// The item columns of the lists, in their order on screen (each one's header and widths
/// are the field table's), with the lists' own AGE and LOCK among them.
const SHOWN: [FieldCol; 5] = [
    FieldCol::Id,
    FieldCol::Priority,
    FieldCol::DueAt,
    FieldCol::Queue,
    FieldCol::Title,
];

/// The headers of the list's columns.
fn headers() -> [&'static str; 8] {
    let h = |c: FieldCol| field(c).list.map_or("", |l| l.header);
    let [id, pri, due, queue, title] = SHOWN.map(h);
    ["", id, pri, "AGE", due, queue, title, "LOCK"]
}

/// The layout of item column `c`, `content` wide at most (for one that fits it).
fn item_col(c: FieldCol, content: u16) -> Col {
    let Some(l) = field(c).list else {
        return Col::new(0, 0, Some(0));
    };
    if l.full == 0 {
        return Col::TITLE;
    }
    if !l.fits {
        return Col::new(l.full, l.compact, l.drop);
    }
    let w = content.clamp(Span::raw(l.header).width() as u16, l.full);
    Col::new(w, w.min(l.compact), l.drop)
}

const TITLE: usize = 6;
const QUEUE: usize = 5;
const LOCK: usize = 7;

/// The columns at this width: the title gets room first (up to two fifths of the screen,
/// or all its longest title needs); AGE, QUEUE, PRI and DUE shrink, then go, in that order.
fn plan_columns(pane: &ListPane, rows_fit: usize, width: u16) -> Plan {
    let shown = || pane.window(rows_fit).filter_map(|(_, i)| i);
    let id_w = shown().map(|r| r.id.to_string().len()).max().unwrap_or(0) as u16;
    let queue_w = shown()
        .map(|r| Span::raw(sanitize::line(&r.queue)).width())
        .max()
        .unwrap_or(0) as u16;
    let longest_title = shown()
        .map(|r| Span::raw(sanitize::line(&r.list_title())).width())
        .max()
        .unwrap_or(0) as u16;
    let cols = [
        Col::new(1, 1, None),
        item_col(FieldCol::Id, id_w),
        item_col(FieldCol::Priority, 0),
        Col::new(6, 4, Some(1)),
        item_col(FieldCol::DueAt, 0),
        item_col(FieldCol::Queue, queue_w),
        item_col(FieldCol::Title, 0),
        Col::new(22, 14, None),
    ];
    plan(width, &cols, longest_title.min(width * 2 / 5))
}

/// What the LOCK column says: `free`, `bob, 24m58s left` (`bob 24m` abbreviated),
/// `EXPIRED bob +15m01s` (`EXP bob +15m`), or the state of a finished item.
fn lock_cell(
    state: &State,
    item: &Item,
    compact: bool,
    width: usize,
    theme: &Theme,
) -> (String, Style) {
    // An item waiting for review carries its reviewer's lock as an open item its holder's.
    if !matches!(item.state, ItemState::Open | ItemState::Review) {
        return (item.state.as_str().to_string(), theme.dim());
    }
    let dur = |ms| {
        if compact {
            compact_duration(ms)
        } else {
            short_duration(ms)
        }
    };
    // The holder's name gives way to the time, which always shows.
    let who = |user: &str, rest: &str| {
        let name = if user == state.me {
            "you".to_string()
        } else {
            sanitize::line(user).into_owned()
        };
        fit(&name, width.saturating_sub(Span::raw(rest).width()).max(1))
    };
    match state.lock_status(item) {
        // Waiting for review: whose work it is (the reviewer's first question).
        LockStatus::Free if item.state == ItemState::Review => {
            let by = sanitize::line(item.finished_by.as_deref().unwrap_or("?")).into_owned();
            let text = if compact {
                format!("by {by}")
            } else {
                format!("free, by {by}")
            };
            (fit(&text, width.max(1)), theme.dim())
        }
        LockStatus::Free => ("free".to_string(), theme.dim()),
        LockStatus::Held { user, remaining } => {
            let warn = user == state.me
                && item
                    .lock()
                    .is_some_and(|l| l.in_warning(&state.queue(&item.queue), state.now));
            let mark = if warn { "! " } else { "" };
            let rest = if compact {
                format!(" {}", dur(remaining))
            } else {
                format!(", {} left", dur(remaining))
            };
            let style = match () {
                _ if warn => theme.expired(),
                _ if user == state.me => theme.mine(),
                _ => theme.held(),
            };
            let text = format!("{mark}{}{rest}", who(&user, &format!("{mark}{rest}")));
            (text, style)
        }
        LockStatus::Assigned { user } => {
            let label = if compact { "asgn " } else { "assigned to " };
            let style = if user == state.me {
                theme.mine()
            } else {
                theme.held()
            };
            (format!("{label}{}", who(&user, label)), style)
        }
        LockStatus::Expired { user, overrun } => {
            let label = if compact { "EXP" } else { "EXPIRED" };
            let rest = format!(" +{}", dur(overrun));
            let name = who(&user, &format!("{label} {rest}"));
            (format!("{label} {name}{rest}"), theme.expired())
        }
    }
}

fn row<'a>(state: &State, item: &'a Item, selected: bool, plan: &Plan, theme: &Theme) -> Row<'a> {
    let now = state.now;
    let compact = plan.compact;
    let dur = |ms| {
        if compact {
            compact_duration(ms)
        } else {
            short_duration(ms)
        }
    };
    let (lock, lock_style) = lock_cell(state, item, compact, plan.width(LOCK), theme);
    let sla = state.slas.get(&item.queue);
    let (due, due_style) = match item.due_at {
        // A finished item is neither late nor due.
        _ if item.state != ItemState::Open => ("-".to_string(), Style::default()),
        None => ("-".to_string(), Style::default()),
        // In a queue with an SLA: the working time left, marked as it runs short.
        Some(d) if sla.is_some() => {
            sla.map_or_else(Default::default, |s| sla_cell(s, now, d, theme))
        }
        Some(d) if d > now => (format!("in {}", dur(d - now)), Style::default()),
        Some(d) => (format!("LATE {}", dur(now - d)), theme.late()),
    };
    let cells = vec![
        Cell::from(if selected { ">" } else { " " }),
        Cell::from(item.id.to_string()),
        Cell::from(item.priority.to_string()),
        Cell::from(dur(now - item.created_at)),
        Cell::from(due).style(due_style),
        Cell::from(fit(&sanitize::line(&item.queue), plan.width(QUEUE))),
        Cell::from(fit(&sanitize::line(&item.list_title()), plan.width(TITLE))),
        Cell::from(lock).style(lock_style),
    ];
    let r = Row::new(plan.pick(cells));
    if selected {
        r.style(theme.selected())
    } else {
        r
    }
}

/// The working time left to `due` under `sla`: plain from an hour up, `!45m` (yellow)
/// under an hour, `!!25m` (red) under 30 minutes, `LATE 25m` after; the marks read
/// without colour too.
fn sla_cell(sla: &Sla, now: Millis, due: Millis, theme: &Theme) -> (String, Style) {
    let l = left(sla, now, due);
    match l.urgency {
        Urgency::Plain => (l.text, Style::default()),
        Urgency::Soon => (format!("!{}", l.text), theme.alert(false)),
        Urgency::Urgent => (format!("!!{}", l.text), theme.alert(true)),
        Urgency::Late => (l.text, theme.late()),
    }
}

fn mine_notices(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let mut lines = super::parked::lines(state, theme);
    if state.notices.is_empty() && state.lost_since.is_empty() {
        frame.render_widget(Paragraph::new(lines), area);
        return;
    }
    lines.push(Line::styled("Lost locks", theme.heading()));
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
