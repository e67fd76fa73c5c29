//! Text and JSON output shared by the subcommands.

use std::io::Write;

use serde_json::{Value, json};

use crate::domain::audit::acting;
use crate::domain::time::{date_hm, local_full, rfc3339, short_duration};
use crate::domain::{AuditEntry, Event, Item, ItemState, sanitize};
use crate::store::Applied;

/// The park grace of an item's queue (the default when the queue is not among `queues`).
pub(crate) fn grace_of(item: &Item, queues: &[crate::domain::QueueSettings]) -> i64 {
    queues
        .iter()
        .find(|q| q.name == item.queue)
        .map_or(crate::domain::park::GRACE_MS, |q| q.park_grace_ms())
}

pub(crate) fn lock_text(item: &Item, queues: &[crate::domain::QueueSettings], now: i64) -> String {
    if let Some(p) = crate::domain::park::Park::of(item, grace_of(item, queues)) {
        return format!(
            "parked by {} until {}",
            truncate(&sanitize::line(&p.by), 10),
            crate::domain::park::when_text(p.until, now)
        );
    }
    let reviewing = item.state == ItemState::Review;
    if reviewing && item.lock_user.is_none() {
        return "waiting for review".into();
    }
    if item.state != ItemState::Open && !reviewing {
        return item.state.as_str().to_string();
    }
    let text = lock_status_text(item, now);
    match reviewing {
        true => format!("in review, {text}"),
        false => text,
    }
}

/// "free", "held by bob (12m left)", "EXPIRED bob (+3m)", "assigned to …".
fn lock_status_text(item: &Item, now: i64) -> String {
    match item.lock() {
        None => "free".into(),
        Some(l) => match l.status(now) {
            crate::domain::LockStatus::Held { user, remaining } => format!(
                "held by {} ({} left)",
                truncate(&sanitize::line(&user), 12),
                short_duration(remaining)
            ),
            crate::domain::LockStatus::Expired { user, overrun } => format!(
                "EXPIRED {} (+{})",
                truncate(&sanitize::line(&user), 10),
                short_duration(overrun)
            ),
            crate::domain::LockStatus::Free => "free".into(),
            crate::domain::LockStatus::Assigned { user } => format!(
                "assigned to {} (not opened yet)",
                truncate(&sanitize::line(&user), 12)
            ),
        },
    }
}

pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

pub(crate) fn indent(s: &str) -> String {
    s.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One history line, sanitized, its time in the display zone:
/// "2026-11-22 11:42:00 +01:00  alice  locked  {...}".
pub(crate) fn event_line(e: &Event) -> String {
    let detail = match &e.detail {
        d if e.kind == crate::domain::EventKind::FieldChanged => {
            crate::domain::queue_fields::change_text(d)
        }
        Value::Object(m) if m.is_empty() => String::new(),
        Value::Object(m) => m
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                // A park's wake time, as a person reads it.
                Value::Number(n) if k == "until" => {
                    format!("{k}={}", n.as_i64().map_or(n.to_string(), date_hm))
                }
                // An SLA paused while parked: the due time's move.
                Value::Object(d) if k == "due" => due_moved(d),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    };
    sanitize::line(&format!(
        "{}  {}  {}  {}",
        local_full(e.at),
        acting(&e.actor, &e.os_user),
        e.kind.as_str(),
        detail
    ))
    .trim_end()
    .to_string()
}

/// "due 2026-11-30 10:00 (was 2026-11-27 17:00: 2h of working time parked)".
fn due_moved(d: &serde_json::Map<String, Value>) -> String {
    let at = |k: &str| d.get(k).and_then(Value::as_i64);
    match (at("from"), at("to"), at("paused_ms")) {
        (Some(from), Some(to), Some(ms)) => format!(
            "due {} (was {}: {} of working time parked)",
            date_hm(to),
            date_hm(from),
            crate::domain::sla::sla_text(ms)
        ),
        _ => format!("due={}", Value::Object(d.clone())),
    }
}

/// One audit line, sanitized: "2026-11-22 11:42:00 +01:00  sup  role bob: staff → supervisor",
/// the name shown as "sup (as root)" when another login used it.
pub(crate) fn audit_line(a: &AuditEntry) -> String {
    let value = |v: &Value| match v {
        Value::Null => "-".to_string(),
        Value::String(s) => s.clone(),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| match v {
                Value::Null => format!("{k}=none"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    };
    sanitize::line(&format!(
        "{}  {}  {} {}: {} → {}",
        local_full(a.at),
        acting(&a.actor, &a.real),
        a.kind.as_str(),
        a.subject,
        value(&a.old),
        value(&a.new)
    ))
    .into_owned()
}

/// An audit record as JSON (in `history --json`, beside the events: it has no `item_id`).
pub(crate) fn audit_json(a: &AuditEntry) -> Value {
    json!({
        "at": rfc3339(a.at),
        "actor": a.actor,
        "real_user": a.real,
        "kind": a.kind.as_str(),
        "subject": a.subject,
        "old": a.old,
        "new": a.new,
    })
}

/// The token of the caller's current lock on the item, unless one was given.
/// "Completed #5", or "#5 already completed by you" for a retry whose first answer was
/// lost.
pub(crate) fn done_line(id: i64, done: &str, past: &str, applied: Applied) -> String {
    match applied {
        Applied::Now => format!("{done} #{id}"),
        Applied::Already => format!("#{id} already {past} by you"),
    }
}

pub(crate) fn queue_line(q: &crate::domain::QueueSettings) -> String {
    format!(
        "{}: lock {}s, warn {}s, max per user {}, {}, order {}, park grace {}s, undo {}s, \
         review {}{}",
        sanitize::line(&q.name),
        q.lock_seconds,
        q.warn_seconds,
        q.max_per_user.map_or("none".into(), |n| n.to_string()),
        if q.paused { "paused" } else { "running" },
        q.order.as_str(),
        q.park_grace_seconds,
        q.undo_seconds,
        crate::domain::review::share_name(q.review_percent),
        match q.review_new {
            0 => String::new(),
            n => format!(" (and each person's first {n})"),
        }
    )
}

/// An item as JSON (its `Serialize`): schema field names, times as RFC 3339 UTC strings,
/// params as JSON; a `Value`, so keys come out sorted and callers can add to it.
pub(crate) fn item_json(item: &Item) -> serde_json::Result<Value> {
    serde_json::to_value(item)
}

/// An event as JSON.
pub(crate) fn event_json(e: &Event) -> Value {
    json!({
        "id": e.id,
        "item_id": e.item_id,
        "at": rfc3339(e.at),
        "actor": e.actor,
        "os_user": e.os_user,
        "kind": e.kind.as_str(),
        "detail": e.detail,
    })
}

pub(crate) fn write_json(out: &mut dyn Write, v: &Value) -> std::io::Result<()> {
    writeln!(out, "{}", escape_json_output(&v.to_string()))
}

/// serde_json escapes C0 controls but leaves C1 controls, bidi overrides and zero-width
/// characters raw; escape those too so JSON output is safe on a terminal. They can only
/// occur inside strings, where `\uXXXX` means the same character.
pub(crate) fn escape_json_output(s: &str) -> std::borrow::Cow<'_, str> {
    let risky = |c: char| sanitize::line(c.encode_utf8(&mut [0; 4])).len() != c.len_utf8();
    if !s.chars().any(risky) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if risky(c) {
            let mut buf = [0u16; 2];
            for unit in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_output_escapes_terminal_controls() {
        let v = json!({"t": "a\u{1b}[2J\u{9b}b\u{202e}c"});
        let s = escape_json_output(&v.to_string()).into_owned();
        assert!(!s.contains('\u{1b}') && !s.contains('\u{9b}') && !s.contains('\u{202e}'));
        let back: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v, "escaping keeps the data");
    }

    #[test]
    fn a_moved_due_time_reads_as_a_sentence() {
        let e = Event {
            id: 1,
            item_id: 2,
            at: 0,
            actor: "alice".into(),
            os_user: "alice".into(),
            kind: crate::domain::EventKind::Woke,
            detail: json!({"by": "owner", "due": {"from": 0, "to": 7_200_000,
                           "paused_ms": 7_200_000}}),
        };
        let line = event_line(&e);
        assert!(line.contains("by=owner"), "{line}");
        assert!(
            line.contains(&format!(
                "due {} (was {}: 2h of working time parked)",
                date_hm(7_200_000),
                date_hm(0)
            )),
            "{line}"
        );
    }
}
