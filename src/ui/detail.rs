//! The item detail pane: title and lock, then body, params, notes and history, scrolled.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::Theme;
use crate::app::{Detail, LineKind, State};
use crate::domain::sanitize;
use crate::domain::time::short_duration;
use crate::domain::{Item, ItemState, LockStatus};

pub(super) fn render(state: &State, d: &Detail, theme: &Theme, frame: &mut Frame, area: Rect) {
    let item = &d.item;
    let lock = lock_label(state, item, theme);
    let lock_w = Span::raw(&lock.0).width() as u16 + 2;
    let id = Span::styled(format!("#{} ", item.id), theme.heading());
    let tag = Span::styled(
        format!("[{} · pri {}] ", sanitize::line(&item.queue), item.priority),
        theme.dim(),
    );
    // The title gets what is left beside the lock, cut with `…`.
    let room =
        (area.width.saturating_sub(lock_w) as usize).saturating_sub(id.width() + tag.width());
    let head = Line::from(vec![
        id,
        tag,
        Span::raw(super::columns::fit(&sanitize::line(&item.title), room)),
    ]);
    frame.render_widget(
        Paragraph::new(head),
        Rect {
            height: 1,
            width: area.width.saturating_sub(lock_w),
            ..area
        },
    );
    frame.render_widget(
        Paragraph::new(Span::styled(format!(" {}", lock.0), lock.1)),
        Rect {
            x: area.x + area.width.saturating_sub(lock_w),
            width: lock_w.min(area.width),
            height: 1,
            ..area
        },
    );
    let body = Rect {
        y: area.y + 1,
        height: area.height.saturating_sub(1),
        ..area
    };
    let form = super::detail_fields::Form::of(state, d);
    // Only a screenful of lines is handed to the wrapper, however long the text.
    let lines: Vec<Line> = d
        .lines
        .iter()
        .skip(d.scroll)
        .take(body.height as usize)
        .map(|l| {
            let style = match l.kind {
                LineKind::Heading => theme.heading(),
                LineKind::Dim => theme.dim(),
                LineKind::Text => Default::default(),
                LineKind::Field(i) => return form.line(i, theme, body.width as usize),
                LineKind::Candidate(i) => match state.similar.as_ref().and_then(|b| b.focus) {
                    Some(f) if f == i => theme.selected(),
                    _ => Default::default(),
                },
            };
            Line::styled(l.text.as_str(), style)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), body);
    super::detail_fields::place_cursor(&form, state, d, frame, body);
}

/// What the header says about the item's lock, and its style.
fn lock_label(state: &State, item: &Item, theme: &Theme) -> (String, Style) {
    let held = state.held.get(&item.id);
    match (held, item.state) {
        (None, ItemState::Review) if item.lock_user.is_none() => ("IN REVIEW".into(), theme.dim()),
        // An item in review carries its reviewer's lock: shown as any lock.
        (_, s) if !matches!(s, ItemState::Open | ItemState::Review) => {
            (s.as_str().to_uppercase(), theme.dim())
        }
        (Some(h), _) => {
            let q = state.queue(&item.queue);
            let l = h.lock(&state.me);
            match l.status(state.now) {
                LockStatus::Expired { overrun, .. } => (
                    format!(
                        "EXPIRED +{} (yours until someone takes it)",
                        short_duration(overrun)
                    ),
                    theme.expired(),
                ),
                LockStatus::Held { remaining, .. } if l.in_warning(&q, state.now) => (
                    format!("! yours, {} left", short_duration(remaining)),
                    theme.expired(),
                ),
                LockStatus::Held { remaining, .. } => (
                    format!("yours, {} left", short_duration(remaining)),
                    theme.mine(),
                ),
                LockStatus::Free => ("free".into(), theme.dim()),
                LockStatus::Assigned { .. } => (
                    "assigned to you: take it (Enter) to start its clock".into(),
                    theme.mine(),
                ),
            }
        }
        (None, _) if state.notices.iter().any(|n| n.item_id == item.id) => {
            ("LOCK LOST".into(), theme.expired())
        }
        (None, _) => match state.lock_status(item) {
            LockStatus::Free => ("not yours (free)".into(), theme.dim()),
            LockStatus::Held { user, .. } => {
                (format!("held by {}", sanitize::line(&user)), theme.held())
            }
            LockStatus::Expired { user, .. } => (
                format!("EXPIRED, held by {}", sanitize::line(&user)),
                theme.expired(),
            ),
            LockStatus::Assigned { user } => (
                format!("assigned to {}", sanitize::line(&user)),
                theme.held(),
            ),
        },
    }
}
