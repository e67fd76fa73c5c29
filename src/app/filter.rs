//! The filters of the list views, as typed at `/`, and the store filter of each view's
//! window.

use super::{State, View};
use crate::store::{ListFilter, StateFilter};

/// The filter of a list view, as typed at `/`: the Queue view's and the Locks view's
/// each keep their own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub text: Option<String>,
    pub queue: Option<String>,
    /// Only locks held by this user (`holder:NAME`).
    pub holder: Option<String>,
    /// Another state than the view's own (`state:failed` in Queue, `state:expired` in
    /// Locks).
    pub state: Option<StateFilter>,
}

impl Filter {
    /// Parses what was typed at `/`: `queue:NAME` (or `q:NAME`) picks a queue,
    /// `holder:NAME` (or `h:NAME`) a lock holder, `state:NAME` (or `s:NAME`) a state
    /// (open, locked, expired, done, failed, cancelled, all); the rest is text to search
    /// for. A word that looks like a key with an unknown value stays text.
    pub(crate) fn parse(s: &str) -> Filter {
        let mut f = Filter::default();
        let mut words = Vec::new();
        for w in s.split_whitespace() {
            let value = |keys: &[&str]| keys.iter().find_map(|k| w.strip_prefix(k));
            if let Some(q) = value(&["queue:", "q:"]) {
                if !q.is_empty() {
                    f.queue = Some(q.to_string());
                }
            } else if let Some(h) = value(&["holder:", "h:"]) {
                if !h.is_empty() {
                    f.holder = Some(h.to_string());
                }
            } else if let Some(st) = value(&["state:", "s:"]).and_then(StateFilter::parse) {
                f.state = Some(st);
            } else {
                words.push(w);
            }
        }
        let text = words.join(" ");
        f.text = (!text.is_empty()).then_some(text);
        f
    }

    /// The filter as it would be typed.
    pub(crate) fn display(&self) -> String {
        let mut parts = Vec::new();
        if let Some(h) = &self.holder {
            parts.push(format!("holder:{h}"));
        }
        if let Some(q) = &self.queue {
            parts.push(format!("queue:{q}"));
        }
        if let Some(st) = self.state {
            parts.push(format!("state:{}", st.as_str()));
        }
        if let Some(t) = &self.text {
            parts.push(t.clone());
        }
        parts.join(" ")
    }

    pub(crate) fn is_empty(&self) -> bool {
        *self == Filter::default()
    }
}

/// The list filter of a view's window.
pub(crate) fn list_filter(
    state: &State,
    view: View,
    offset: usize,
    limit: usize,
) -> Option<ListFilter> {
    let base = ListFilter {
        limit,
        offset,
        ..ListFilter::default()
    };
    match view {
        View::Queue => Some(ListFilter {
            state: state.filter.state.unwrap_or(StateFilter::Open),
            queue: state.filter.queue.clone(),
            holder: state.filter.holder.clone(),
            text: state.filter.text.clone(),
            ..base
        }),
        View::Mine => Some(ListFilter {
            state: StateFilter::Locked,
            holder: Some(state.me.clone()),
            ..base
        }),
        View::Locks => Some(ListFilter {
            limit,
            offset,
            ..locks_filter(&state.locks_filter)
        }),
        View::Review => Some(ListFilter {
            state: StateFilter::Review,
            reviewer: Some(state.me.clone()),
            ..base
        }),
        View::Stats => None,
    }
}

/// Every lock and parked item matching the Locks view's filter (no window):
/// `state:expired` narrows to expired locks, `state:locked` to locks, `state:parked` to
/// parked items; any other state is ignored, as the view shows what people hold.
pub(crate) fn locks_filter(f: &Filter) -> ListFilter {
    ListFilter {
        state: match f.state {
            Some(s @ (StateFilter::Expired | StateFilter::Locked | StateFilter::Parked)) => s,
            _ => StateFilter::Held,
        },
        queue: f.queue.clone(),
        holder: f.holder.clone(),
        text: f.text.clone(),
        reviewer: None,
        limit: usize::MAX >> 1,
        offset: 0,
    }
}
