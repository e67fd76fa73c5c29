//! The detail pane's review lines (issue 29 §1): what a reviewer looks at first on an item
//! waiting for review (who completed it, why it was chosen, the result, every field change
//! as from → to with who), and the banner a maker sees first on an item rejected back to
//! them ("Rejected by bob: VAT number wrong").

use serde_json::Value;

use super::detail::{heading, push_text};
use super::{DetailLine, LineKind, State};
use crate::domain::queue_fields::change_text;
use crate::domain::time::date_hm_in;
use crate::domain::{Event, EventKind, Item, ItemState, sanitize};

/// The reason an open item was rejected for, when its last verdict since its last
/// submission is a reject: "Rejected by bob: VAT number wrong".
pub fn rejection(item: &Item, history: &[Event]) -> Option<String> {
    if item.state != ItemState::Open {
        return None;
    }
    let last = history
        .iter()
        .rev()
        .find(|e| matches!(e.kind, EventKind::Rejected | EventKind::Submitted))?;
    if last.kind != EventKind::Rejected {
        return None;
    }
    let reason = last.detail.get("reason").and_then(Value::as_str);
    Some(match reason {
        Some(r) => format!("Rejected by {}: {r}", last.actor),
        None => format!("Rejected by {}", last.actor),
    })
}

/// The banner of a rejected item, as the detail's first line.
pub(super) fn push_banner(lines: &mut Vec<DetailLine>, w: usize, item: &Item, history: &[Event]) {
    if let Some(b) = rejection(item, history) {
        push_text(lines, w, &sanitize::line(&b), LineKind::Heading);
    }
}

/// "For review": on an item waiting for review, who completed it when and why it was
/// chosen, its result, and every field change (from → to, who, when).
pub(super) fn push_review(
    lines: &mut Vec<DetailLine>,
    w: usize,
    s: &State,
    item: &Item,
    history: &[Event],
) {
    if item.state != ItemState::Review {
        return;
    }
    heading(lines, "For review (A accepts, R rejects to its maker)");
    let when = |t| date_hm_in(t, s.zone);
    let submitted = history
        .iter()
        .rev()
        .find(|e| e.kind == EventKind::Submitted);
    let maker = item.finished_by.as_deref().unwrap_or("?");
    let mut made = format!("Completed by {maker}");
    if let Some(at) = item.finished_at {
        made.push_str(&format!(" at {}", when(at)));
    }
    if let Some(why) = submitted.map(|e| chosen(&e.detail, maker)) {
        made.push_str(&format!(" ({why})"));
    }
    push_text(lines, w, &sanitize::line(&made), LineKind::Text);
    let result = item.result.as_deref().filter(|r| !r.trim().is_empty());
    let result = format!("Result: {}", result.unwrap_or("(none given)"));
    push_text(lines, w, &result, LineKind::Text);
    let changes: Vec<&Event> = history
        .iter()
        .filter(|e| e.kind == EventKind::FieldChanged)
        .collect();
    if changes.is_empty() {
        push_text(lines, w, "No field was changed.", LineKind::Dim);
        return;
    }
    push_text(
        lines,
        w,
        &format!("Field changes ({}):", changes.len()),
        LineKind::Text,
    );
    for e in changes {
        let line = format!(
            "  {}  ({}, {})",
            change_text(&e.detail),
            e.actor,
            when(e.at)
        );
        push_text(lines, w, &sanitize::line(&line), LineKind::Text);
    }
}

/// Why the queue chose the item for review, from its `submitted` event.
fn chosen(detail: &Value, maker: &str) -> String {
    match detail.get("why").and_then(Value::as_str) {
        Some("new") => {
            let n = detail.get("first").and_then(Value::as_i64).unwrap_or(0);
            format!("one of {maker}'s first {n} in the queue")
        }
        _ => match detail.get("share").and_then(Value::as_str) {
            Some(share) => format!("sampled: the queue reviews {share}"),
            None => "sampled".into(),
        },
    }
}
