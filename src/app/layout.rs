//! Screen geometry shared by `update` (mouse clicks, page size) and `ui` (drawing).

use super::{State, View};

/// The smallest screen the layout fits.
pub(crate) const MIN_WIDTH: u16 = 60;
pub(crate) const MIN_HEIGHT: u16 = 12;

/// Screen row of the first list row (after the tab bar and the column header).
pub(crate) const LIST_TOP: u16 = 2;

/// True when the screen is big enough for the layout.
pub(crate) fn fits(state: &State) -> bool {
    state.width >= MIN_WIDTH && state.height >= MIN_HEIGHT
}

/// Rows of notices under the Mine list: the items you parked, then lost locks (each
/// block with its heading).
pub(crate) fn mine_notice_rows(state: &State) -> u16 {
    let block = |n: usize| if n == 0 { 0 } else { n + 1 };
    let lost = block(state.notices.len() + state.lost_since.len());
    let parked = block(state.parked.len());
    ((lost + parked) as u16).min(state.height / 3)
}

/// How many list rows fit on screen in `view`: the screen minus the tab bar, the column
/// header, the status line and the key line (and notices in Mine).
pub fn list_rows(state: &State, view: View) -> usize {
    let extra = if view == View::Mine {
        mine_notice_rows(state)
    } else {
        0
    };
    state.height.saturating_sub(4 + extra).max(1) as usize
}

/// Rows of the detail pane's scrolling text (tab bar, item line, status, keys).
pub(crate) fn detail_rows(state: &State) -> usize {
    state.height.saturating_sub(4).max(1) as usize
}
