//! What the supervisor is told when a supervisor action's answer comes back: the bulk
//! unlock's count to confirm, each operation's outcome, the activity report, and moving
//! through the Stats view's queues.

use super::{on_screen, refresh, set_error, set_info};
use crate::app::{
    DetailLine, Dialog, Effect, FieldSpec, Filter, LineKind, Pending, Report, State, SupervisorOp,
};
use crate::domain::sanitize;
use crate::domain::time::clock_hm_in;
use crate::domain::{Event, Millis, QueueUpdate, SeenLock};
use crate::store::StoreError;

/// The locks a bulk unlock would touch are known: ask, saying how many and whose.
pub(super) fn locks_collected(
    s: &mut State,
    filter: Filter,
    result: Result<Vec<(SeenLock, String)>, StoreError>,
) -> Vec<Effect> {
    let what = if filter.is_empty() {
        "every current lock".to_string()
    } else {
        format!(
            "every lock matching “{}”",
            sanitize::line(&filter.display())
        )
    };
    let locks = match result {
        Ok(l) => l,
        Err(e) => {
            set_error(s, on_screen(&e));
            return vec![];
        }
    };
    if locks.is_empty() {
        set_info(s, format!("Nothing to unlock: no lock matches ({what})"));
        return vec![];
    }
    let mut holders: Vec<(String, usize)> = Vec::new();
    for (_, h) in &locks {
        match holders.iter_mut().find(|(n, _)| n == h) {
            Some(e) => e.1 += 1,
            None => holders.push((h.clone(), 1)),
        }
    }
    holders.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut whose: Vec<String> = holders
        .iter()
        .take(5)
        .map(|(h, n)| format!("{} ({n})", sanitize::line(h)))
        .collect();
    if holders.len() > 5 {
        whose.push(format!("{} more", holders.len() - 5));
    }
    let n = locks.len();
    let message = format!(
        "This touches {n} item{}: {what}, held by {}.\nEach goes back to the pool and its holder is told. A lock that changes before you confirm is left alone.",
        if n == 1 { "" } else { "s" },
        whose.join(", ")
    );
    s.dialog = Some(
        Dialog::new(
            format!("Unlock {n} lock{}?", if n == 1 { "" } else { "s" }),
            message,
            Pending::UnlockMany {
                locks: locks.into_iter().map(|(seen, _)| seen).collect(),
            },
        )
        .field(
            FieldSpec::reason("Reason (required, recorded on every item)"),
            "",
        ),
    );
    vec![]
}

/// A supervisor action's outcome: told in the status line (the queue settings dialog
/// shows a refusal in place), then the screen is refreshed.
pub(super) fn supervised(
    s: &mut State,
    op: SupervisorOp,
    result: Result<usize, StoreError>,
) -> Vec<Effect> {
    let mut fx = Vec::new();
    let settings_open = matches!(
        s.dialog.as_ref().map(|d| &d.pending),
        Some(Pending::QueueSettings { .. })
    );
    match (&op, result) {
        (SupervisorOp::SetQueue { .. }, Err(e)) if settings_open => {
            if let Some(d) = s.dialog.as_mut() {
                d.error = Some(on_screen(&e));
            }
            return vec![];
        }
        (SupervisorOp::DefineField { .. } | SupervisorOp::DeleteField { .. }, result) => {
            super::field_admin::answered(s, &op, result);
        }
        (_, Err(e)) => set_error(s, on_screen(&e)),
        (SupervisorOp::Unlock { seen, .. }, Ok(_)) => {
            set_info(s, format!("Unlocked #{}; it is back in the pool", seen.id))
        }
        (SupervisorOp::Unpark { id }, Ok(_)) => {
            set_info(s, format!("Unparked #{id}; it is back in the pool"))
        }
        (SupervisorOp::Reassign { id, to, .. }, Ok(_)) => {
            set_info(s, format!("Reassigned #{id} to {}", sanitize::line(to)))
        }
        (SupervisorOp::Assign { id, to, .. }, Ok(_)) => set_info(
            s,
            format!(
                "Assigned #{id} to {}; its lock clock starts when they open it",
                sanitize::line(to)
            ),
        ),
        (SupervisorOp::Edit { id, .. }, Ok(_)) => set_info(s, format!("Edited #{id}")),
        (SupervisorOp::UnlockMany { locks, .. }, Ok(n)) => {
            let left = locks.len().saturating_sub(n);
            let text = if left == 0 {
                format!("Unlocked {n} lock{}", if n == 1 { "" } else { "s" })
            } else {
                format!(
                    "Unlocked {n} of {} locks; {left} changed since you looked and were left alone",
                    locks.len()
                )
            };
            set_info(s, text);
        }
        (SupervisorOp::Requeue { id }, Ok(_)) => {
            set_info(s, format!("Requeued #{id}; it is open again"))
        }
        (SupervisorOp::Cancel { id, .. }, Ok(_)) => set_info(s, format!("Cancelled #{id}")),
        (SupervisorOp::SetQueue { name, update }, Ok(_)) => {
            queue_set(s, name, update, settings_open);
        }
    }
    // The open item's history now has the supervisor's event.
    let touched = match &op {
        SupervisorOp::Unlock { seen, .. } => Some(seen.id),
        SupervisorOp::Reassign { id, .. }
        | SupervisorOp::Unpark { id }
        | SupervisorOp::Assign { id, .. }
        | SupervisorOp::Edit { id, .. }
        | SupervisorOp::Requeue { id }
        | SupervisorOp::Cancel { id, .. } => Some(*id),
        _ => None,
    };
    if let Some(id) = touched.filter(|id| s.detail.as_ref().is_some_and(|d| d.item.id == *id)) {
        fx.push(Effect::Open(id));
    }
    fx.push(refresh(s));
    fx
}

/// Queue settings changed: the dialog closes and the new settings are said.
fn queue_set(s: &mut State, name: &str, update: &QueueUpdate, settings_open: bool) {
    if settings_open {
        s.dialog = None;
    }
    let before = s.queue(name);
    let q = update.apply(&before).unwrap_or_else(|_| before.clone());
    s.queues.insert(name.to_string(), q.clone());
    // A lock keeps the age it was given: say so, so nobody expects held locks to move.
    let kept = if q.lock_seconds == before.lock_seconds {
        ""
    } else {
        " (locks held now keep their age; new locks and renewals get the new one)"
    };
    set_info(
        s,
        format!(
            "Queue {}: lock {}s, warning {}s, WIP limit {}, {}, order {}{kept}",
            sanitize::line(name),
            q.lock_seconds,
            q.warn_seconds,
            q.max_per_user.map_or("none".into(), |n| n.to_string()),
            if q.paused { "paused" } else { "running" },
            q.order.as_str()
        ),
    );
}

/// What `user` did since `since` (midnight in the display zone), as a report over the list.
pub(super) fn activity_loaded(
    s: &mut State,
    user: String,
    since: Millis,
    result: Result<Vec<Event>, StoreError>,
) -> Vec<Effect> {
    let events = match result {
        Ok(e) => e,
        Err(e) => {
            set_error(s, on_screen(&e));
            return vec![];
        }
    };
    let who = sanitize::line(&user).into_owned();
    let mut counts: Vec<(&'static str, usize)> = Vec::new();
    for e in &events {
        let k = e.kind.as_str();
        match counts.iter_mut().find(|(n, _)| *n == k) {
            Some(c) => c.1 += 1,
            None => counts.push((k, 1)),
        }
    }
    let mut lines = vec![DetailLine {
        kind: LineKind::Heading,
        text: if events.is_empty() {
            format!(
                "{who} has done nothing since {} {} today",
                clock_hm_in(since, s.zone),
                s.zone.short(since)
            )
        } else {
            format!(
                "{} event{} since {} {}: {}",
                events.len(),
                if events.len() == 1 { "" } else { "s" },
                clock_hm_in(since, s.zone),
                s.zone.short(since),
                counts
                    .iter()
                    .map(|(k, n)| format!("{k} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
    }];
    for e in &events {
        let extra = ["from", "to", "reason", "result", "comment"]
            .iter()
            .filter_map(|k| e.detail_str(k).map(|v| format!("{k}: {v}")))
            .collect::<Vec<_>>()
            .join(", ");
        let line = format!(
            "{}  {:<11} #{:<8}{}",
            clock_hm_in(e.at, s.zone),
            e.kind.as_str(),
            e.item_id,
            if extra.is_empty() {
                String::new()
            } else {
                format!(" ({extra})")
            }
        );
        lines.push(DetailLine {
            kind: LineKind::Text,
            text: sanitize::line(&line).into_owned(),
        });
    }
    s.report = Some(Report {
        title: format!("What {who} did today"),
        lines,
        scroll: 0,
    });
    vec![]
}

/// Moves the Stats view's queue selection.
pub(super) fn move_stats(s: &mut State, delta: i64) {
    let n = s.stats.as_ref().map_or(0, |st| st.by_queue.len());
    if n == 0 {
        return;
    }
    s.stats_selected = (s.stats_selected as i64)
        .saturating_add(delta)
        .clamp(0, n as i64 - 1) as usize;
}
