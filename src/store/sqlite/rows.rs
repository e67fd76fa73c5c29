//! Reading SQLite rows that another program or a damaged disk may have spoiled.
//!
//! SQLite keeps whatever bytes a client stores as TEXT, and rusqlite refuses text that is
//! not UTF-8 ("Conversion error from type Text"), so one bad row would fail every list,
//! export and take-next that reads it. These cells never fail on a value: text is read
//! as bytes and rendered lossily (U+FFFD for each bad sequence), odd types are coerced,
//! and every column that could not be read as its type is marked (see
//! [`crate::store::rows`] for what the marks mean).

use rusqlite::Row;
use rusqlite::types::ValueRef;

use crate::domain::{Event, Item, Unreadable};
use crate::store::error::Result;
use crate::store::rows::{self, Cells, NOT_A_NUMBER, NOT_UTF8};

/// The cells of one SQLite row, collecting what could not be read.
pub(crate) struct Cols<'a, 'r> {
    row: &'a Row<'r>,
    bad: Vec<Unreadable>,
}

impl<'a, 'r> Cols<'a, 'r> {
    pub(crate) fn new(row: &'a Row<'r>) -> Self {
        Cols {
            row,
            bad: Vec::new(),
        }
    }
}

impl Cells for Cols<'_, '_> {
    fn opt_text(&mut self, i: usize, column: &'static str) -> Result<Option<String>> {
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

    fn opt_int(&mut self, i: usize, column: &'static str) -> Result<Option<i64>> {
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

    fn flag(&mut self, i: usize, column: &'static str) -> Result<bool> {
        Ok(self.opt_int(i, column)?.unwrap_or(0) != 0)
    }

    fn mark(&mut self, column: &'static str, problem: &'static str) {
        self.bad.push(Unreadable { column, problem });
    }

    fn marks(&self) -> &[Unreadable] {
        &self.bad
    }
}

/// An item from a row of `ITEM_COLS`; never fails on a stored value.
pub(crate) fn item_from_row(r: &Row<'_>) -> Result<Item> {
    rows::item_from(&mut Cols::new(r))
}

/// An event from a row of `EVENT_COLS`.
pub(super) fn event_from_row(r: &Row<'_>) -> Result<Event> {
    rows::event_from(&mut Cols::new(r))
}

/// Text of column `i`, lossily when it is not UTF-8 (names, titles in summaries).
pub(super) fn lossy_text(r: &Row<'_>, i: usize) -> rusqlite::Result<String> {
    Ok(lossy_opt_text(r, i)?.unwrap_or_default())
}

/// Optional text of column `i`, lossily when it is not UTF-8.
pub(super) fn lossy_opt_text(r: &Row<'_>, i: usize) -> rusqlite::Result<Option<String>> {
    Ok(match r.get_ref(i)? {
        ValueRef::Null => None,
        ValueRef::Integer(n) => Some(n.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Text(b) | ValueRef::Blob(b) => Some(String::from_utf8_lossy(b).into_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(sql: &str) -> Item {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.query_row(sql, [], |r| Ok(item_from_row(r)))
            .unwrap()
            .unwrap()
    }

    /// A healthy row as a SELECT of literals (`title`, `body`, `priority` 1 and state
    /// `open` side by side, for the tests to replace).
    fn good() -> String {
        let row = crate::store::rows::sample_item_row(&[
            ("id", Some("7")),
            ("queue", Some("q")),
            ("title", Some("title")),
            ("body", Some("body")),
            ("priority", Some("1")),
            ("state", Some("open")),
            ("created_at", Some("5")),
            ("created_by", Some("me")),
        ]);
        let literals: Vec<String> = (crate::domain::fields::FIELDS.iter().zip(row))
            .map(|(f, v)| match v {
                None => "NULL".to_string(),
                Some(v) if f.kind.sql_type().0 == "INTEGER" => v,
                Some(v) => format!("'{v}'"),
            })
            .collect();
        format!("SELECT {}", literals.join(", "))
    }

    #[test]
    fn a_healthy_row_reads_as_stored() {
        let item = read(&good());
        assert_eq!((item.id, item.title.as_str()), (7, "title"));
        assert!(item.unreadable.is_empty());
    }

    #[test]
    fn bad_bytes_are_named_and_shown_lossily() {
        let sql = good()
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
        let sql = good()
            .replace("'title'", "NULL")
            .replace(", 1, NULL, 'open'", ", 'high', NULL, 'weird'");
        let item = read(&sql);
        let cols: Vec<&str> = item.unreadable.iter().map(|u| u.column).collect();
        assert_eq!(cols, ["title", "priority", "state"]);
        assert_eq!(item.priority, 0);
    }
}
