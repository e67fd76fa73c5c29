//! Reading SQLite rows that another program or a damaged disk may have spoiled.
//!
//! SQLite keeps whatever bytes a client stores as TEXT, and rusqlite refuses text that is
//! not UTF-8 ("Conversion error from type Text"), so one bad row would fail every list,
//! export and take-next that reads it. These readers never fail on a value: text is read
//! as bytes and rendered lossily (U+FFFD for each bad sequence), odd types are coerced,
//! and every column that could not be read as its type is named in `Item::unreadable`.
//! Callers decide what a damaged row means: take-next skips it, listings mark it, export
//! leaves it out and reports it, `check` lists it.

use rusqlite::Row;
use rusqlite::types::ValueRef;

use super::error::StoreError;
use crate::domain::{Event, EventKind, Item, ItemState, Unreadable};

const NOT_UTF8: &str = "is not valid UTF-8";
const MISSING: &str = "is missing (NULL)";
const NOT_A_NUMBER: &str = "is not a number";
const UNKNOWN_STATE: &str = "is not a known state";

/// Reads the columns of one row, collecting what could not be read.
struct Cols<'a, 'r> {
    row: &'a Row<'r>,
    bad: Vec<Unreadable>,
}

impl<'a, 'r> Cols<'a, 'r> {
    fn new(row: &'a Row<'r>) -> Self {
        Cols {
            row,
            bad: Vec::new(),
        }
    }

    fn mark(&mut self, column: &'static str, problem: &'static str) {
        self.bad.push(Unreadable { column, problem });
    }

    fn opt_text(&mut self, i: usize, column: &'static str) -> rusqlite::Result<Option<String>> {
        Ok(match self.row.get_ref(i)? {
            ValueRef::Null => None,
            ValueRef::Integer(n) => Some(n.to_string()),
            ValueRef::Real(f) => Some(f.to_string()),
            ValueRef::Text(b) | ValueRef::Blob(b) => Some(match std::str::from_utf8(b) {
                Ok(s) => s.to_string(),
                Err(_) => {
                    self.mark(column, NOT_UTF8);
                    String::from_utf8_lossy(b).into_owned()
                }
            }),
        })
    }

    fn text(&mut self, i: usize, column: &'static str) -> rusqlite::Result<String> {
        match self.opt_text(i, column)? {
            Some(s) => Ok(s),
            None => {
                self.mark(column, MISSING);
                Ok(String::new())
            }
        }
    }

    fn opt_int(&mut self, i: usize, column: &'static str) -> rusqlite::Result<Option<i64>> {
        Ok(match self.row.get_ref(i)? {
            ValueRef::Null => None,
            ValueRef::Integer(n) => Some(n),
            ValueRef::Real(f) => Some(f as i64),
            ValueRef::Text(b) | ValueRef::Blob(b) => {
                match std::str::from_utf8(b)
                    .ok()
                    .and_then(|s| s.trim().parse().ok())
                {
                    Some(n) => Some(n),
                    None => {
                        self.mark(column, NOT_A_NUMBER);
                        Some(0)
                    }
                }
            }
        })
    }

    fn int(&mut self, i: usize, column: &'static str) -> rusqlite::Result<i64> {
        match self.opt_int(i, column)? {
            Some(n) => Ok(n),
            None => {
                self.mark(column, MISSING);
                Ok(0)
            }
        }
    }
}

/// An item from a row of `ITEM_COLS`; never fails on a stored value.
pub(crate) fn item_from_row(r: &Row<'_>) -> rusqlite::Result<Item> {
    let mut c = Cols::new(r);
    let state_text = c.text(8, "state")?;
    let state = match ItemState::parse(&state_text) {
        Some(s) => s,
        None => {
            if !c.bad.iter().any(|u| u.column == "state") {
                c.mark("state", UNKNOWN_STATE);
            }
            ItemState::Open
        }
    };
    let mut item = Item {
        id: c.int(0, "id")?,
        queue: c.text(1, "queue")?,
        request_id: c.opt_text(2, "request_id")?,
        title: c.text(3, "title")?,
        body: c.text(4, "body")?,
        params: c.text(5, "params")?,
        priority: c.int(6, "priority")?,
        due_at: c.opt_int(7, "due_at")?,
        state,
        lock_user: c.opt_text(9, "lock_user")?,
        lock_time: c.opt_int(10, "lock_time")?,
        lock_token: c.int(11, "lock_token")?,
        notes: c.text(12, "notes")?,
        result: c.opt_text(13, "result")?,
        error: c.opt_text(14, "error")?,
        created_at: c.int(15, "created_at")?,
        created_by: c.text(16, "created_by")?,
        finished_at: c.opt_int(17, "finished_at")?,
        finished_by: c.opt_text(18, "finished_by")?,
        unreadable: Vec::new(),
    };
    // In schema order, as `check` and messages name them.
    let order = |col: &str| COLUMNS.iter().position(|c| *c == col).unwrap_or(usize::MAX);
    c.bad.sort_by_key(|u| order(u.column));
    item.unreadable = c.bad;
    Ok(item)
}

/// The item columns in schema order.
const COLUMNS: [&str; 19] = [
    "id",
    "queue",
    "request_id",
    "title",
    "body",
    "params",
    "priority",
    "due_at",
    "state",
    "lock_user",
    "lock_time",
    "lock_token",
    "notes",
    "result",
    "error",
    "created_at",
    "created_by",
    "finished_at",
    "finished_by",
];

/// An event from `id, item_id, at, actor, os_user, kind, detail`; never fails on a stored
/// value (unreadable text is shown lossily, an unreadable detail as null).
pub(crate) fn event_from_row(r: &Row<'_>) -> rusqlite::Result<Event> {
    let mut c = Cols::new(r);
    let kind = c.text(5, "kind")?;
    let detail = c.text(6, "detail")?;
    Ok(Event {
        id: c.int(0, "id")?,
        item_id: c.int(1, "item_id")?,
        at: c.int(2, "at")?,
        actor: c.text(3, "actor")?,
        os_user: c.text(4, "os_user")?,
        kind: EventKind::parse(&kind).unwrap_or(EventKind::Noted),
        detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::Null),
    })
}

/// Text of column `i`, lossily when it is not UTF-8 (names, titles in summaries).
pub(crate) fn lossy_text(r: &Row<'_>, i: usize) -> rusqlite::Result<String> {
    Cols::new(r).text(i, "")
}

/// Optional text of column `i`, lossily when it is not UTF-8.
pub(crate) fn lossy_opt_text(r: &Row<'_>, i: usize) -> rusqlite::Result<Option<String>> {
    Cols::new(r).opt_text(i, "")
}

/// The unreadable items take-next passed over: how many, and the first for messages.
#[derive(Default)]
pub(crate) struct PassedOver {
    count: usize,
    first: Option<Item>,
}

impl PassedOver {
    pub(crate) fn add(&mut self, item: Item) {
        self.count += 1;
        self.first.get_or_insert(item);
    }

    /// One log line per take, however many were passed over.
    pub(crate) fn log(&self) {
        if let Some(first) = &self.first {
            tracing::warn!(
                count = self.count,
                first = first.id,
                problem = %first.unreadable_summary().unwrap_or_default(),
                "take-next passed over unreadable items"
            );
        }
    }

    /// Why nothing could be taken, adding what was passed over.
    pub(crate) fn explain(&self, why: StoreError) -> StoreError {
        let Some(first) = &self.first else {
            return why;
        };
        let also = format!(
            "; passed over {} unreadable item(s), e.g. #{}: {} (see `caseload check`)",
            self.count,
            first.id,
            first.unreadable_summary().unwrap_or_default()
        );
        match why {
            StoreError::NothingToClaim(m) => StoreError::NothingToClaim(format!("{m}{also}")),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(sql: &str) -> Item {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.query_row(sql, [], item_from_row).unwrap()
    }

    const GOOD: &str = "SELECT 7, 'q', NULL, 'title', 'body', '{}', 1, NULL, 'open', NULL, \
        NULL, 0, '', NULL, NULL, 5, 'me', NULL, NULL";

    #[test]
    fn a_healthy_row_reads_as_stored() {
        let item = read(GOOD);
        assert_eq!((item.id, item.title.as_str()), (7, "title"));
        assert!(item.unreadable.is_empty());
    }

    #[test]
    fn bad_bytes_are_named_and_shown_lossily() {
        let sql = GOOD
            .replace("'title'", "CAST(x'41ff42' AS TEXT)")
            .replace("'body'", "x'c3'");
        let item = read(&sql);
        assert_eq!(item.title, "A\u{FFFD}B");
        assert_eq!(item.body, "\u{FFFD}");
        assert_eq!(
            item.unreadable_summary().as_deref(),
            Some("title is not valid UTF-8, body is not valid UTF-8")
        );
    }

    #[test]
    fn odd_types_and_nulls_are_named_not_fatal() {
        let sql = GOOD
            .replace("'title'", "NULL")
            .replace(", 1, NULL, 'open'", ", 'high', NULL, 'weird'");
        let item = read(&sql);
        let cols: Vec<&str> = item.unreadable.iter().map(|u| u.column).collect();
        assert_eq!(cols, ["title", "priority", "state"]);
        assert_eq!(item.priority, 0);
    }
}
