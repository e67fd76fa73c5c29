//! Drawing: `render(&state, frame)` and one file per view or widget. No I/O, no clock:
//! everything shown comes from the state, and every database string is sanitized here.

mod columns;
mod detail;
mod detail_fields;
mod dialog;
mod field_admin;
mod figures;
mod help;
mod list;
mod locks;
mod parked;
mod report;
mod stats;
mod theme;

use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use crate::app::keymap::Hints;
use crate::app::layout::{self, MIN_HEIGHT, MIN_WIDTH};
use crate::app::{State, View};
use crate::domain::time::short_duration;
use crate::domain::{Role, sanitize};
pub(crate) use theme::Theme;

/// Draws the whole screen.
pub(crate) fn render(state: &State, frame: &mut Frame) {
    let area = frame.area();
    let theme = Theme::new(state.color, state.palette);
    if !layout::fits(state) || area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        too_small(frame, area);
        return;
    }
    tab_bar(state, &theme, frame, Rect { height: 1, ..area });
    let main = Rect {
        y: 1,
        height: area.height - 3,
        ..area
    };
    match (&state.report, &state.detail, state.view) {
        (Some(r), _, _) => report::render(r, &theme, frame, main),
        (None, Some(d), _) => detail::render(state, d, &theme, frame, main),
        (None, None, View::Stats) => stats::render(state, &theme, frame, main),
        (None, None, View::Locks) => locks::render(state, &theme, frame, main),
        (None, None, view) => list::render(state, view, &theme, frame, main),
    }
    if let Some(fa) = &state.field_admin {
        field_admin::render(state, fa, &theme, frame, main);
    }
    status_line(
        state,
        &theme,
        frame,
        Rect {
            y: area.height - 2,
            height: 1,
            ..area
        },
    );
    key_line(
        state,
        &theme,
        frame,
        Rect {
            y: area.height - 1,
            height: 1,
            ..area
        },
    );
    if let Some(ed) = &state.editor {
        dialog::editor(state, ed, &theme, frame, area);
    }
    if let Some(d) = &state.dialog {
        dialog::confirm(d, &theme, frame, area);
    } else if let Some(n) = state.notice.as_ref().filter(|_| state.editor.is_none()) {
        dialog::notice(n, &theme, frame, area);
    }
    if let Some(top) = state.help {
        help::render(state, top, &theme, frame, area);
    }
}

/// How the Queue view is ordered, when it is not by priority: one queue's due order, or
/// the mixed order of all queues (due items of due-ordered queues first, then priority).
fn order_note(state: &State, filter: &crate::app::Filter) -> Option<&'static str> {
    use crate::domain::TakeOrder;
    use crate::store::StateFilter;
    if filter.state.is_some_and(|s| s != StateFilter::Open) {
        return None;
    }
    match &filter.queue {
        Some(q) => (state.queue(q).order == TakeOrder::Due).then_some("order: due"),
        None => state
            .queues
            .values()
            .any(|q| q.order == TakeOrder::Due)
            .then_some("order: due first, then priority"),
    }
}

fn too_small(frame: &mut Frame, area: Rect) {
    let msg = format!(
        "Terminal too small ({}x{}). caseload needs at least {MIN_WIDTH}x{MIN_HEIGHT}: enlarge the window, or press q to quit.",
        area.width, area.height
    );
    frame.render_widget(
        Paragraph::new(msg)
            .wrap(Wrap { trim: true })
            .alignment(Alignment::Left),
        area,
    );
}

fn tab_bar(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    let mut spans = vec![Span::raw(" ")];
    for (i, v) in state.views().iter().enumerate() {
        let text = format!(" {} {} ", i + 1, v.title());
        if *v == state.view && state.detail.is_none() {
            spans.push(Span::styled(text, theme.tab_active()));
        } else {
            spans.push(Span::styled(text, theme.tab()));
        }
    }
    let left_w: usize = spans.iter().map(|s| s.width()).sum();
    let right = header_right(state, (area.width as usize).saturating_sub(left_w + 1));
    let pad = (area.width as usize).saturating_sub(left_w + cells(&right) + 1);
    spans.push(Span::raw(" ".repeat(pad)));
    spans.push(Span::styled(right, theme.dim()));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The header's right side in `room` columns. Who you are and what you hold always show;
/// then, as room allows, the connection, the position in the list, the filter (cut short
/// rather than pushing the rest off) and the take order. The filter shown is the one the
/// rows answer to; "searching…" while a newer one is on its way.
fn header_right(state: &State, room: usize) -> String {
    let me = sanitize::line(&state.me).into_owned();
    let held = format!("{} held", state.held.len());
    // Parts right to left: each goes in front of those already there, if it fits.
    let mut parts: Vec<String> = vec![held, me];
    let used = |parts: &[String]| parts.iter().map(|p| cells(p) + 3).sum::<usize>() - 3;
    let fits = |more: &str, parts: &[String]| cells(more) + 3 + used(parts) <= room;
    if state.offline && fits("reconnecting…", &parts) {
        parts.push("reconnecting…".into());
    }
    // The position answers the rows on screen: none while a newer filter's are coming.
    let pending = state.filter_of(state.view).is_some_and(|(_, p)| p);
    if let (None, Some(p), false) = (&state.detail, state.pane(state.view), pending) {
        let at = if p.total == 0 { 0 } else { p.selected + 1 };
        // A search counts up to a cap: past it the total reads "1,000+".
        let total = if p.filter.text.is_some() {
            crate::domain::search::count_text(p.total)
        } else {
            p.total.to_string()
        };
        let pos = format!("{at}/{total}");
        if fits(&pos, &parts) {
            parts.push(pos);
        }
    }
    if let Some(part) = filter_part(state) {
        let left = room.saturating_sub(used(&parts) + 3);
        if left >= 10 {
            parts.push(columns::fit(&part, left).trim_end().to_string());
        }
    }
    if state.view == View::Queue
        && state.detail.is_none()
        && let Some(note) = order_note(state, &state.filter)
        && fits(note, &parts)
    {
        parts.push(note.to_string());
    }
    // The role shows when there is room left (a filter cut short takes it first).
    let role = match state.role {
        Role::Lead => " (lead)",
        _ => " (supervisor)",
    };
    if state.role.supervises() && used(&parts) + role.len() <= room {
        parts[1].push_str(role);
    }
    parts.reverse();
    parts.join(" · ")
}

/// "filter: …" for the rows on screen, "(searching…)" while a newer filter's are coming.
fn filter_part(state: &State) -> Option<String> {
    let (asked, pending) = state.filter_of(state.view)?;
    let shown = &state.pane(state.view)?.filter;
    let mut part = if shown.is_empty() {
        String::new()
    } else {
        format!("filter: {}", sanitize::line(&shown.display()))
    };
    if pending {
        let what = if asked.is_empty() { "all" } else { "searching" };
        part = if part.is_empty() {
            format!("{what}…")
        } else {
            format!("{part} ({what}…)")
        };
    }
    (!part.is_empty()).then_some(part)
}

/// Terminal cells `s` takes (wide characters count two).
fn cells(s: &str) -> usize {
    Span::raw(s).width()
}

fn status_line(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    if let Some(p) = &state.goto_prompt {
        let label = "Go to item # (Enter opens it read-only, Esc cancels): ";
        let line = Line::from(vec![
            Span::styled(label, theme.dim()),
            Span::raw(sanitize::line(&p.text()).into_owned()),
        ]);
        let cursor_x = (Span::raw(label).width() + p.cursor_cells()) as u16;
        frame.render_widget(Paragraph::new(line), area);
        frame.set_cursor_position((area.x + cursor_x.min(area.width - 1), area.y));
        return;
    }
    if let Some(p) = &state.filter_prompt {
        let text: String = p.text();
        let full = if state.view == View::Locks {
            "Filter locks (holder:U queue:Q state:expired words; Enter keeps, Esc undoes): "
        } else {
            "Filter (words, queue:Q, state:failed; Enter keeps, Esc undoes): "
        };
        // The typed text keeps room on a narrow screen.
        let label = if cells(full) + 24 > area.width as usize {
            "Filter: "
        } else {
            full
        };
        let line = Line::from(vec![
            Span::styled(label, theme.dim()),
            Span::raw(sanitize::line(&text).into_owned()),
        ]);
        let cursor_x = (Span::raw(label).width() + p.cursor_cells()) as u16;
        frame.render_widget(Paragraph::new(line), area);
        frame.set_cursor_position((area.x + cursor_x.min(area.width - 1), area.y));
        return;
    }
    let mut spans = read_only_banner(state, theme, area);
    if let Some(a) = state.lock_alerts().first() {
        let text = if a.expired {
            format!(
                " EXPIRED: your lock on #{} ran out {} ago; press a key in its view to renew ",
                a.id,
                short_duration(a.ms)
            )
        } else {
            format!(
                " ! Your lock on #{} expires in {} (keys in its view renew it) ",
                a.id,
                short_duration(a.ms)
            )
        };
        spans.push(Span::styled(text, theme.alert(a.expired)));
        spans.push(Span::raw(" "));
    }
    if let Some(w) = state.waiting() {
        // Shorter beside a lock alert, so both fit on one line.
        let text = if spans.is_empty() {
            w
        } else {
            w.split_once(": ")
                .map_or(w.clone(), |(_, rest)| rest.to_string())
        };
        spans.push(Span::styled(format!(" {text} "), theme.waiting()));
        spans.push(Span::raw(" "));
    }
    if let Some(st) = &state.status {
        let style = if st.error {
            theme.error()
        } else {
            theme.info()
        };
        let used: usize = spans.iter().map(Span::width).sum();
        let room = (area.width as usize).saturating_sub(used);
        spans.push(Span::styled(
            columns::fit(&sanitize::line(&st.text), room),
            style,
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// A store that refuses every change (a standby): the list is there, read-only, and the
/// status line says so first (why, when nothing else is said).
fn read_only_banner(state: &State, theme: &Theme, area: Rect) -> Vec<Span<'static>> {
    let Some(why) = &state.read_only else {
        return Vec::new();
    };
    let mut spans = vec![
        Span::styled(" READ-ONLY ", theme.alert(true)),
        Span::raw(" "),
    ];
    if state.status.is_none() && state.waiting().is_none() {
        let room = (area.width as usize).saturating_sub(12);
        let why = why.strip_prefix("database is read-only: ").unwrap_or(why);
        spans.push(Span::styled(
            columns::fit(&sanitize::line(why), room),
            theme.error(),
        ));
    }
    spans
}

/// The key-hint line: what the screen shows picks the entries, the key table their keys.
fn key_line(state: &State, theme: &Theme, frame: &mut Frame, area: Rect) {
    // On a narrow screen a hint that does not fit whole is left out (never cut in the
    // middle), and room is kept for `? help`, which lists everything.
    let entries: Vec<(String, &str)> = hints(state).entries().iter().map(|h| h.parts()).collect();
    let width = |k: &str, what: &str| Span::raw(format!(" {k} {what} ")).width();
    let help_w = entries
        .iter()
        .find(|(k, _)| k == "?")
        .map_or(0, |(k, w)| width(k, w));
    let mut room = (area.width as usize).saturating_sub(help_w);
    let mut spans = Vec::new();
    for (keys, what) in &entries {
        let w = width(keys, what);
        if keys == "?" {
            room += help_w;
        }
        if w > room {
            continue;
        }
        room -= w;
        spans.push(Span::styled(format!(" {keys}"), theme.key()));
        spans.push(Span::styled(format!(" {what} "), theme.dim()));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// Which hint line fits what the screen shows.
fn hints(state: &State) -> Hints {
    let sup = state.role.supervises();
    if state.editor.is_some() {
        Hints::Editor
    } else if let Some(d) = &state.dialog {
        if d.inputs.len() > 1 {
            Hints::DialogFields
        } else {
            Hints::Dialog
        }
    } else if state.field_admin.is_some() {
        Hints::FieldAdmin
    } else if state.report.is_some() {
        Hints::Report
    } else if let Some(d) = &state.detail {
        let lost = state.notices.iter().any(|n| n.item_id == d.item.id);
        let form = !crate::app::form::defs(state, &d.item.queue).is_empty();
        if crate::app::form::form_of(state, d.item.id).is_some_and(|f| f.edit.is_some()) {
            Hints::FieldEdit
        } else if d.item.state == crate::domain::ItemState::Review
            && state.held.contains_key(&d.item.id)
        {
            Hints::DetailReview
        } else if form && state.held.contains_key(&d.item.id) {
            Hints::DetailForm
        } else if state.held.contains_key(&d.item.id) {
            Hints::DetailHeld
        } else if d.item.state == crate::domain::ItemState::Open && !lost {
            Hints::DetailOpen
        } else {
            Hints::Detail
        }
    } else {
        match (state.view, sup) {
            (View::Locks, true) => Hints::LocksSupervisor,
            (View::Locks, false) => Hints::LocksReadOnly,
            (View::Stats, true) => Hints::StatsSupervisor,
            (View::Stats, false) => Hints::StatsReadOnly,
            (View::Mine, _) => Hints::Mine,
            (View::Queue, _) => Hints::Queue,
            (View::Review, _) => Hints::Review,
        }
    }
}
