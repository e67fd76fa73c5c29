//! The rows `check`'s pass reads from an SQLite file, in item order, each read as raw
//! values (a damaged or hand-edited row is a finding, never an error of the reader).

use rusqlite::types::ValueRef;
use rusqlite::{Row, Rows};

use super::rows::item_from_row;
use crate::domain::{Event, EventKind};
use crate::store::check::pass::{CommentRow, EventRow, ItemRow, KeptHold, Source};
use crate::store::error::Result;

/// The four statements, items first; the item statement's last columns are [`ITEM_EXTRA`].
pub(super) fn statements(quick: bool) -> [Option<String>; 4] {
    let full = |sql: &str| (!quick).then(|| sql.to_string());
    [
        Some(format!(
            "SELECT {}, {ITEM_EXTRA} FROM items ORDER BY id",
            super::sql::ITEM_COLS
        )),
        full(
            "SELECT id, item_id, at, actor, os_user, kind, detail, json_valid(detail) \
             FROM events ORDER BY item_id, id",
        ),
        full(
            "SELECT event_id, ended, item_id, queue, holder, started, how, handle_ms, own_ms, \
             wait_ms, cycle_ms, late_ms FROM holds ORDER BY item_id, event_id",
        ),
        full("SELECT id, item_id, at FROM comments ORDER BY item_id, id"),
    ]
}

/// The raw values the item rules read, after the item's own columns.
const ITEM_EXTRA: &str =
    "state, lock_user IS NOT NULL, lock_time IS NOT NULL, lock_token, json_valid(params)";
const ITEM_EXTRA_COLS: usize = 5;

/// The pass's source over running queries (`None`: a set not read).
pub(super) struct SqliteRows<'s> {
    pub items: Rows<'s>,
    pub events: Option<Rows<'s>>,
    pub holds: Option<Rows<'s>>,
    pub comments: Option<Rows<'s>>,
}

fn step<T>(
    rows: Option<&mut Rows<'_>>,
    read: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
) -> Result<Option<T>> {
    let Some(rows) = rows else {
        return Ok(None);
    };
    match rows.next()? {
        Some(r) => Ok(Some(read(r)?)),
        None => Ok(None),
    }
}

impl Source for SqliteRows<'_> {
    fn item(&mut self) -> Result<Option<ItemRow>> {
        let Some(r) = self.items.next()? else {
            return Ok(None);
        };
        let item = item_from_row(r)?;
        let x = r.as_ref().column_count() - ITEM_EXTRA_COLS;
        Ok(Some(ItemRow {
            id: item.id,
            state: text(r.get_ref(x)?),
            has_lock_user: r.get(x + 1)?,
            has_lock_time: r.get(x + 2)?,
            has_lock_expiry: item.lock_expires_at.is_some(),
            lock_token: int(r.get_ref(x + 3)?),
            params_json: int(r.get_ref(x + 4)?) == Some(1),
            unreadable: item.unreadable_summary(),
            created_at: item.created_at,
            due_at: item.due_at,
            queue: item.queue,
        }))
    }

    fn event(&mut self) -> Result<Option<EventRow>> {
        step(self.events.as_mut(), event_row)
    }

    fn hold(&mut self) -> Result<Option<KeptHold>> {
        step(self.holds.as_mut(), |r| {
            let i = |k: usize| r.get_ref(k).map(int);
            let t = |k: usize| r.get_ref(k).map(text);
            Ok(KeptHold {
                event_id: i(0)?.unwrap_or(i64::MIN),
                ended: i(1)?,
                item_id: i(2)?,
                queue: t(3)?,
                holder: t(4)?,
                started: i(5)?,
                how: t(6)?,
                handle_ms: i(7)?,
                own_ms: i(8)?,
                wait_ms: i(9)?,
                cycle_ms: i(10)?,
                late_ms: i(11)?,
            })
        })
    }

    fn comment(&mut self) -> Result<Option<CommentRow>> {
        step(self.comments.as_mut(), |r| {
            Ok(CommentRow {
                id: r.get(0)?,
                item_id: int(r.get_ref(1)?),
                at: int(r.get_ref(2)?).unwrap_or(i64::MIN),
            })
        })
    }
}

fn int(v: ValueRef<'_>) -> Option<i64> {
    match v {
        ValueRef::Integer(n) => Some(n),
        _ => None,
    }
}

/// Text, lossily when it is not UTF-8 (an unreadable value is found by its own rule).
fn text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Null => None,
        ValueRef::Integer(n) => Some(n.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Text(b) | ValueRef::Blob(b) => Some(String::from_utf8_lossy(b).into_owned()),
    }
}

/// The bytes of a text column that is valid UTF-8; `None` otherwise (or NULL).
fn utf8(v: ValueRef<'_>) -> Option<&str> {
    match v {
        ValueRef::Text(b) | ValueRef::Blob(b) => std::str::from_utf8(b).ok(),
        ValueRef::Integer(_) | ValueRef::Real(_) => Some(""),
        ValueRef::Null => None,
    }
}

/// An event row: only what the rules read is decoded (the actor of the kinds that take a
/// lock, the detail of the kinds whose detail the holds read), the rest only looked at.
fn event_row(r: &Row<'_>) -> rusqlite::Result<EventRow> {
    let id: i64 = r.get(0)?;
    let item_id = int(r.get_ref(1)?);
    let at = int(r.get_ref(2)?).unwrap_or(i64::MIN);
    let cols = [
        ("actor", utf8(r.get_ref(3)?)),
        ("os_user", utf8(r.get_ref(4)?)),
        ("kind", utf8(r.get_ref(5)?)),
        ("detail", utf8(r.get_ref(6)?)),
    ];
    let bad_text = cols
        .iter()
        .find(|(_, v)| v.is_none())
        .map(|(name, _)| *name);
    let [(_, actor), _, (_, kind), (_, detail)] = cols;
    let kind = kind.and_then(EventKind::parse);
    let parsed = match (kind, detail) {
        (Some(EventKind::Noted | EventKind::Reassigned | EventKind::Woke), Some(d)) => {
            serde_json::from_str(d).unwrap_or(serde_json::Value::Null)
        }
        _ => serde_json::Value::Null,
    };
    let detail_json = int(r.get_ref(7)?) == Some(1);
    let event = kind.map(|kind| Event {
        id,
        item_id: item_id.unwrap_or(0),
        at,
        actor: match kind {
            EventKind::Locked | EventKind::TakenOver | EventKind::Undone => {
                actor.unwrap_or_default().to_string()
            }
            _ => String::new(),
        },
        os_user: String::new(),
        kind,
        detail: parsed,
    });
    Ok(EventRow {
        item_id,
        event,
        id,
        at,
        detail_json,
        bad_text,
    })
}
