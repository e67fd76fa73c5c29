//! Mine's "Parked" block: the items you parked, woken ones first ("WOKE", with when they
//! return to the pool), then by wake time, each with its reason.

use ratatui::text::Line;

use super::Theme;
use crate::app::State;
use crate::domain::park::{Park, ParkStatus, when_text};
use crate::domain::{Item, sanitize};

/// The user's parked items in Mine's order: woken first (earliest first), then the rest
/// by wake time.
fn in_order(state: &State) -> Vec<(&Item, Park)> {
    let mut out: Vec<(&Item, Park)> = state
        .parked
        .iter()
        .filter_map(|i| Park::of(i, state.queue(&i.queue).park_grace_ms()).map(|p| (i, p)))
        .collect();
    out.sort_by_key(|(i, p)| (p.status(state.now) == ParkStatus::Sleeping, p.until, i.id));
    out
}

/// The block's lines (none when nothing is parked): its heading, then one line per item.
pub(super) fn lines(state: &State, theme: &Theme) -> Vec<Line<'static>> {
    let parked = in_order(state);
    if parked.is_empty() {
        return Vec::new();
    }
    let mut out = vec![Line::styled(
        format!("Parked ({}; n takes a woken one first)", parked.len()),
        theme.heading(),
    )];
    for (item, p) in parked {
        let reason = sanitize::line(&p.reason);
        let title = sanitize::line(&item.title);
        let line = match p.status(state.now) {
            ParkStatus::Sleeping => Line::raw(format!(
                "  #{}  until {} · {reason} · {title}",
                item.id,
                when_text(p.until, state.now)
            )),
            _ => Line::styled(
                format!(
                    "  #{}  WOKE {} (back to the pool at {} unless you take it) · {reason} · {title}",
                    item.id,
                    when_text(p.until, state.now),
                    when_text(p.returns_at(), state.now)
                ),
                theme.alert(false),
            ),
        };
        out.push(line);
    }
    out
}
