//! Items: the unit of work, their states and the rules for new ones.

use serde::Serialize;

use super::fields::{self, Col, FIELDS, FieldError, Value};
use super::time::{Millis, ser_opt_rfc3339, ser_rfc3339};

/// Longest title, in characters.
pub(crate) const MAX_TITLE_CHARS: usize = 1000;
/// Largest text field (body, params, notes, result, reason), in bytes.
pub(crate) const MAX_FIELD_BYTES: usize = 1024 * 1024;

/// An item's life-cycle state; only `Open` and `Review` items carry a lock (a
/// reviewer's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemState {
    #[default]
    Open,
    Done,
    Failed,
    Cancelled,
    /// Parked by its last holder until a time (a call-back): no lock, and nobody else
    /// may take it until then and for the queue's grace after (`domain::park`).
    Parked,
    /// Completed by its maker and waiting for a second person (`domain::review`), who
    /// accepts it (done) or rejects it (back to the maker).
    Review,
}

impl ItemState {
    pub(crate) const ALL: [ItemState; 6] = [
        ItemState::Open,
        ItemState::Done,
        ItemState::Failed,
        ItemState::Cancelled,
        ItemState::Parked,
        ItemState::Review,
    ];

    /// The state's name as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            ItemState::Open => "open",
            ItemState::Done => "done",
            ItemState::Failed => "failed",
            ItemState::Cancelled => "cancelled",
            ItemState::Parked => "parked",
            ItemState::Review => "review",
        }
    }

    /// Parses a stored state name.
    pub(crate) fn parse(s: &str) -> Option<ItemState> {
        ItemState::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

/// An item as stored. Serialized (the CLI's `--json`, `export --format jsonl`) with the
/// schema's column names, times as RFC 3339 UTC strings and `params` as JSON. Its
/// fields are the columns of [`FIELDS`] (plus what could not be read).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Item {
    pub id: i64,
    pub queue: String,
    pub request_id: Option<String>,
    pub title: String,
    pub body: String,
    /// JSON text (always valid JSON).
    #[serde(serialize_with = "ser_params")]
    pub params: String,
    pub priority: i64,
    #[serde(serialize_with = "ser_opt_rfc3339")]
    pub due_at: Option<Millis>,
    pub state: ItemState,
    pub lock_user: Option<String>,
    #[serde(serialize_with = "ser_opt_rfc3339")]
    pub lock_time: Option<Millis>,
    pub lock_token: i64,
    pub notes: String,
    pub result: Option<String>,
    pub error: Option<String>,
    #[serde(serialize_with = "ser_rfc3339")]
    pub created_at: Millis,
    pub created_by: String,
    #[serde(serialize_with = "ser_opt_rfc3339")]
    pub finished_at: Option<Millis>,
    pub finished_by: Option<String>,
    /// Where the record came from (a producer's word: `crm`, `web-form`).
    pub source: Option<String>,
    /// Parked until this time (state `parked`), by whom and why.
    #[serde(serialize_with = "ser_opt_rfc3339")]
    pub parked_until: Option<Millis>,
    pub parked_by: Option<String>,
    pub park_reason: Option<String>,
    /// When the lock expires: its take (or last renewal) plus the queue's lock age at that
    /// moment, so a later change of the queue's age leaves it alone (an assignment:
    /// [`super::lock::ASSIGNED`]). NULL exactly when nobody holds the item.
    #[serde(serialize_with = "ser_opt_rfc3339")]
    pub lock_expires_at: Option<Millis>,
    /// The item this one was merged into as a duplicate (`caseload merge`): set with its
    /// cancellation, cleared when it is reopened.
    pub duplicate_of: Option<i64>,
    /// Columns whose stored value could not be read (text that is not valid UTF-8,
    /// written by another program or damaged on disk). Their fields hold a lossy
    /// rendering, bad bytes shown as U+FFFD. Empty for every healthy row (and then left
    /// out of the JSON).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<Unreadable>,
}

/// `params` as the JSON it holds (as a string should it ever not be JSON).
fn ser_params<S: serde::Serializer>(params: &str, s: S) -> Result<S::Ok, S::Error> {
    match serde_json::from_str::<serde_json::Value>(params) {
        Ok(v) => v.serialize(s),
        Err(_) => s.serialize_str(params),
    }
}

/// One stored value of an item, for writers that go column by column (export's CSV, the
/// copy to PostgreSQL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell<'a> {
    Number(i64),
    Text(Option<&'a str>),
    Time(Option<Millis>),
    /// Another item's id, if any (`duplicate_of`).
    Id(Option<i64>),
}

impl Cell<'_> {
    /// The value, owned.
    pub(crate) fn to_value(self) -> Value {
        match self {
            Cell::Number(n) => Value::Number(n),
            Cell::Text(t) => Value::Text(t.map(str::to_owned)),
            Cell::Time(t) => Value::Time(t),
            Cell::Id(t) => Value::Id(t),
        }
    }
}

/// A column of a stored row that could not be read as its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Unreadable {
    /// The column's name in the schema.
    pub column: &'static str,
    /// What is wrong with it, e.g. "is not valid UTF-8".
    pub problem: &'static str,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.column, self.problem)
    }
}

impl Item {
    /// The stored columns, in schema order: the names of [`FIELDS`]. Both stores' select
    /// lists (`store::sql::ITEM_COLS`), the row reader (`store::rows::item_from`),
    /// export's CSV header and [`Item::cells`] follow it.
    pub(crate) const COLUMNS: [&'static str; fields::COUNT] = fields::NAMES;

    /// The stored value of `col`.
    pub(crate) fn cell(&self, col: Col) -> Cell<'_> {
        use Cell::{Id, Number, Text, Time};
        match col {
            Col::Id => Number(self.id),
            Col::Queue => Text(Some(&self.queue)),
            Col::RequestId => Text(self.request_id.as_deref()),
            Col::Title => Text(Some(&self.title)),
            Col::Body => Text(Some(&self.body)),
            Col::Params => Text(Some(&self.params)),
            Col::Priority => Number(self.priority),
            Col::DueAt => Time(self.due_at),
            Col::State => Text(Some(self.state.as_str())),
            Col::LockUser => Text(self.lock_user.as_deref()),
            Col::LockTime => Time(self.lock_time),
            Col::LockToken => Number(self.lock_token),
            Col::Notes => Text(Some(&self.notes)),
            Col::Result => Text(self.result.as_deref()),
            Col::Error => Text(self.error.as_deref()),
            Col::CreatedAt => Time(Some(self.created_at)),
            Col::CreatedBy => Text(Some(&self.created_by)),
            Col::FinishedAt => Time(self.finished_at),
            Col::FinishedBy => Text(self.finished_by.as_deref()),
            Col::Source => Text(self.source.as_deref()),
            Col::ParkedUntil => Time(self.parked_until),
            Col::ParkedBy => Text(self.parked_by.as_deref()),
            Col::ParkReason => Text(self.park_reason.as_deref()),
            Col::LockExpiresAt => Time(self.lock_expires_at),
            Col::DuplicateOf => Id(self.duplicate_of),
        }
    }

    /// Sets `col` from a stored value (`store::rows::item_from`); `Err` for a value the
    /// column cannot hold (a state caseload does not know: the item stays `Open`, which
    /// no rule acts on once the column is marked unreadable).
    pub(crate) fn put(&mut self, col: Col, v: Value) -> Result<(), ()> {
        match col {
            Col::Id => self.id = v.number(),
            Col::Queue => self.queue = v.text(),
            Col::RequestId => self.request_id = v.opt_text(),
            Col::Title => self.title = v.text(),
            Col::Body => self.body = v.text(),
            Col::Params => self.params = v.text(),
            Col::Priority => self.priority = v.number(),
            Col::DueAt => self.due_at = v.time(),
            Col::State => self.state = ItemState::parse(&v.text()).ok_or(())?,
            Col::LockUser => self.lock_user = v.opt_text(),
            Col::LockTime => self.lock_time = v.time(),
            Col::LockToken => self.lock_token = v.number(),
            Col::Notes => self.notes = v.text(),
            Col::Result => self.result = v.opt_text(),
            Col::Error => self.error = v.opt_text(),
            Col::CreatedAt => self.created_at = v.time().unwrap_or_default(),
            Col::CreatedBy => self.created_by = v.text(),
            Col::FinishedAt => self.finished_at = v.time(),
            Col::FinishedBy => self.finished_by = v.opt_text(),
            Col::Source => self.source = v.opt_text(),
            Col::ParkedUntil => self.parked_until = v.time(),
            Col::ParkedBy => self.parked_by = v.opt_text(),
            Col::ParkReason => self.park_reason = v.opt_text(),
            Col::LockExpiresAt => self.lock_expires_at = v.time(),
            Col::DuplicateOf => self.duplicate_of = v.id(),
        }
        Ok(())
    }

    /// The texts search looks in: the field table's searched columns, in its order
    /// (NULL as empty).
    pub fn searched_texts(&self) -> Vec<&str> {
        fields::searched()
            .map(|f| match self.cell(f.col) {
                Cell::Text(t) => t.unwrap_or(""),
                Cell::Number(_) | Cell::Time(_) | Cell::Id(_) => "",
            })
            .collect()
    }

    /// The stored values in [`Item::COLUMNS`] order.
    pub(crate) fn cells(&self) -> [Cell<'_>; fields::COUNT] {
        FIELDS.map(|f| self.cell(f.col))
    }

    /// "title is not valid UTF-8, notes is not valid UTF-8" for a row with unreadable
    /// columns; `None` for a healthy one.
    pub fn unreadable_summary(&self) -> Option<String> {
        if self.unreadable.is_empty() {
            return None;
        }
        Some(
            self.unreadable
                .iter()
                .map(Unreadable::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        )
    }

    /// The title as listings show it: a row with unreadable columns is marked
    /// "[unreadable: title, body] " in front of its (lossy) title.
    pub(crate) fn list_title(&self) -> std::borrow::Cow<'_, str> {
        if self.unreadable.is_empty() {
            return std::borrow::Cow::Borrowed(&self.title);
        }
        let cols: Vec<&str> = self.unreadable.iter().map(|u| u.column).collect();
        std::borrow::Cow::Owned(format!("[unreadable: {}] {}", cols.join(", "), self.title))
    }

    /// The current lock, if the item is held (expired or not).
    pub(crate) fn lock(&self) -> Option<super::Lock> {
        match (&self.lock_user, self.lock_time) {
            (Some(user), Some(time)) => Some(super::Lock {
                user: user.clone(),
                time,
                // Never NULL beside a holder (both schemas' CHECK); read as expired if it were.
                expires: self.lock_expires_at.unwrap_or(time),
                token: self.lock_token,
            }),
            _ => None,
        }
    }

    /// True when `user` holds the item's lock (expired or not).
    pub(crate) fn is_held_by(&self, user: &str) -> bool {
        self.lock_user.as_deref() == Some(user)
    }

    /// True while `user` still holds the item's lock under `token` (the item open or in
    /// their review, the lock neither taken over, moved nor renewed into a newer token):
    /// the one test of "is my lock gone?".
    pub(crate) fn held_with(&self, user: &str, token: i64) -> bool {
        matches!(self.state, ItemState::Open | ItemState::Review)
            && self.is_held_by(user)
            && self.lock_token == token
    }
}

/// A new item, as a producer gives it: the columns of [`FIELDS`] that `add` or
/// `import` set ([`fields::Field::produced`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewItem {
    pub queue: String,
    pub title: String,
    pub body: String,
    /// JSON text.
    pub params: String,
    pub priority: i64,
    pub due_at: Option<Millis>,
    pub request_id: Option<String>,
    /// Where the record came from.
    pub source: Option<String>,
}

impl Default for NewItem {
    /// An item of the default queue, with no title yet.
    fn default() -> Self {
        NewItem {
            queue: super::queue::DEFAULT_QUEUE.to_string(),
            title: String::new(),
            body: String::new(),
            params: "{}".to_string(),
            priority: 0,
            due_at: None,
            request_id: None,
            source: None,
        }
    }
}

impl NewItem {
    /// A new item with only a title, in the default queue.
    pub fn titled(title: &str) -> Self {
        NewItem {
            title: title.to_string(),
            ..NewItem::default()
        }
    }

    /// The value of `col`, for the columns a producer sets (`None` for the others).
    pub(crate) fn cell(&self, col: Col) -> Option<Cell<'_>> {
        use Cell::{Number, Text, Time};
        Some(match col {
            Col::Queue => Text(Some(&self.queue)),
            Col::RequestId => Text(self.request_id.as_deref()),
            Col::Title => Text(Some(&self.title)),
            Col::Body => Text(Some(&self.body)),
            Col::Params => Text(Some(&self.params)),
            Col::Priority => Number(self.priority),
            Col::DueAt => Time(self.due_at),
            Col::Source => Text(self.source.as_deref()),
            Col::Id
            | Col::State
            | Col::LockUser
            | Col::LockTime
            | Col::LockToken
            | Col::Notes
            | Col::Result
            | Col::Error
            | Col::CreatedAt
            | Col::CreatedBy
            | Col::FinishedAt
            | Col::FinishedBy
            | Col::ParkedUntil
            | Col::ParkedBy
            | Col::ParkReason
            | Col::LockExpiresAt
            | Col::DuplicateOf => return None,
        })
    }

    /// Sets `col` (an import row's value); false for a column a producer does not set
    /// (a test checks that every column it sets has its arm here, as in [`Self::cell`]).
    pub(crate) fn put(&mut self, col: Col, v: Value) -> bool {
        match col {
            Col::Queue => self.queue = v.text(),
            Col::RequestId => self.request_id = v.opt_text(),
            Col::Title => self.title = v.text(),
            Col::Body => self.body = v.text(),
            Col::Params => self.params = v.text(),
            Col::Priority => self.priority = v.number(),
            Col::DueAt => self.due_at = v.time(),
            Col::Source => self.source = v.opt_text(),
            _ => return false,
        }
        true
    }

    /// Checks every field; the first problem found is returned, naming the field.
    pub(crate) fn validate(&self) -> Result<(), FieldError> {
        super::queue::validate_queue_name(&self.queue)
            .map_err(|m| FieldError::col(Col::Queue, m))?;
        let title = self.title.trim();
        if title.is_empty() {
            return Err(FieldError::col(Col::Title, "title is empty"));
        }
        let n = self.title.chars().count();
        if n > MAX_TITLE_CHARS {
            return Err(FieldError::col(
                Col::Title,
                format!("title is {n} characters long; the limit is {MAX_TITLE_CHARS}"),
            ));
        }
        // Every text a producer gives: at most 1 MiB, no NUL byte.
        for f in FIELDS.iter().filter(|f| f.produced()) {
            if let Some(Cell::Text(Some(t))) = self.cell(f.col) {
                check_text(f.name, t).map_err(|m| FieldError::col(f.col, m))?;
            }
        }
        match serde_json::from_str::<serde_json::Value>(&self.params) {
            Ok(serde_json::Value::Object(_)) => {}
            Ok(_) => {
                return Err(FieldError::col(
                    Col::Params,
                    "params must be a JSON object, e.g. {\"key\": \"value\"}",
                ));
            }
            Err(e) => {
                return Err(FieldError::col(
                    Col::Params,
                    format!("params is not valid JSON: {e}"),
                ));
            }
        }
        if let Some(r) = &self.request_id {
            if r.is_empty() {
                return Err(FieldError::col(Col::RequestId, "request id is empty"));
            }
            if r.len() > 1000 {
                return Err(FieldError::col(
                    Col::RequestId,
                    "request id is longer than 1000 bytes",
                ));
            }
        }
        Ok(())
    }
}

/// Checks a free-text value (`what` names it in the message): no NUL bytes, at most 1 MiB.
pub(crate) fn check_text(what: &str, text: &str) -> Result<(), String> {
    if text.len() > MAX_FIELD_BYTES {
        return Err(format!(
            "{what} is {} bytes; the limit is {MAX_FIELD_BYTES} (1 MiB)",
            text.len()
        ));
    }
    if text.contains('\0') {
        return Err(format!("{what} contains a NUL byte"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::fields::Input;

    #[test]
    fn new_items_are_checked_field_by_field() {
        assert!(NewItem::titled("Reset password").validate().is_ok());
        let long = NewItem::titled(&"x".repeat(1001));
        assert_eq!(long.validate().unwrap_err().field, Input::Col(Col::Title));
        assert!(NewItem::titled(&"é".repeat(1000)).validate().is_ok());
        let nul = NewItem {
            body: "a\0b".into(),
            ..NewItem::titled("t")
        };
        assert!(nul.validate().unwrap_err().problem.contains("NUL"));
        let big = NewItem {
            body: "x".repeat(MAX_FIELD_BYTES + 1),
            ..NewItem::titled("t")
        };
        assert_eq!(big.validate().unwrap_err().field, Input::Col(Col::Body));
        let bad_json = NewItem {
            params: "{oops".into(),
            ..NewItem::titled("t")
        };
        assert_eq!(
            bad_json.validate().unwrap_err().field,
            Input::Col(Col::Params)
        );
        let array = NewItem {
            params: "[1]".into(),
            ..NewItem::titled("t")
        };
        assert!(array.validate().is_err());
        assert!(NewItem::titled("   ").validate().is_err());
        let long_queue = NewItem {
            queue: "q".repeat(101),
            ..NewItem::titled("t")
        };
        let e = long_queue.validate().unwrap_err();
        assert_eq!(e.field, Input::Col(Col::Queue));
        assert_eq!(e.with_flag(), "--queue: name is longer than 100 characters");
        assert_eq!(e.with_label(), "Queue: name is longer than 100 characters");
    }

    pub(crate) fn test_item() -> Item {
        Item {
            id: 1,
            queue: "default".into(),
            title: "t".into(),
            params: "{}".into(),
            created_by: "p".into(),
            ..Item::default()
        }
    }

    #[test]
    fn json_keys_cells_and_positions_follow_the_column_list() {
        let mut item = test_item();
        let v = serde_json::to_value(&item).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let mut columns = Item::COLUMNS.to_vec();
        columns.sort_unstable();
        assert_eq!(keys, columns, "JSON keys are the columns");
        assert_eq!(v["created_at"], "1970-01-01T00:00:00.000Z");
        assert_eq!(v["params"], serde_json::json!({}));
        assert_eq!(item.cells()[Col::State as usize], Cell::Text(Some("open")));
        assert_eq!(item.cells()[Col::LockToken as usize], Cell::Number(0));
        // Every column reads back what it holds.
        let mut back = Item::default();
        for f in &FIELDS {
            back.put(f.col, item.cell(f.col).to_value()).unwrap();
        }
        assert_eq!(back, item);
        item.unreadable = vec![Unreadable {
            column: "title",
            problem: "is not valid UTF-8",
        }];
        let v = serde_json::to_value(&item).unwrap();
        assert_eq!(
            v["unreadable"],
            serde_json::json!([{"column": "title", "problem": "is not valid UTF-8"}])
        );
    }

    #[test]
    fn a_new_item_holds_every_column_a_producer_sets() {
        let item = NewItem {
            request_id: Some("r".into()),
            due_at: Some(5),
            priority: 3,
            ..NewItem::titled("t")
        };
        let mut back = NewItem::default();
        for f in &FIELDS {
            let cell = item.cell(f.col);
            assert_eq!(cell.is_some(), f.produced(), "{}", f.name);
            if let Some(c) = cell {
                assert!(back.put(f.col, c.to_value()), "{}", f.name);
            }
        }
        assert_eq!(back, item);
    }

    #[test]
    fn unreadable_rows_are_marked_in_listings() {
        let mut item = test_item();
        assert_eq!(item.list_title(), "t");
        assert_eq!(item.unreadable_summary(), None);
        item.unreadable = vec![
            Unreadable {
                column: "title",
                problem: "is not valid UTF-8",
            },
            Unreadable {
                column: "notes",
                problem: "is not valid UTF-8",
            },
        ];
        assert_eq!(item.list_title(), "[unreadable: title, notes] t");
        assert_eq!(
            item.unreadable_summary().unwrap(),
            "title is not valid UTF-8, notes is not valid UTF-8"
        );
    }
}
