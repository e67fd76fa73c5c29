//! The item's built-in columns, described once: [`FIELDS`] has one row per column of
//! `items`, in schema order, in the style of ripgrep's `FLAGS` and caseload's own
//! `KEYMAP`. Each row says what the column holds ([`Kind`]), who may set it ([`Who`]),
//! whether search looks in it, how `caseload show`, the detail pane and the lists show it,
//! and what the TUI ([`Field::label`]) and the command line ([`Field::flag`]) call it.
//!
//! Derived from it, so never written twice: the select lists and the row reader of both
//! stores, every INSERT of items (named placeholders: `store::sql::insert_items`),
//! `export`'s columns and `import`'s (what it sets, what it reads and ignores, its row
//! hash), `show`, the detail pane, the lists' widths, and the supervisor's edit (the
//! dialog and `ItemEdit`, values by column).
//!
//! # Adding a built-in column
//!
//! A column such as `customer` (set by `add` and `import`, searched, exported, shown)
//! needs these files; the compiler or a test names each one that is missed:
//!
//! 1. `src/domain/fields.rs` (here): a [`Col`] variant and its row in [`FIELDS`], at
//!    the end (`ALTER TABLE … ADD COLUMN` appends; the select list is the table's order).
//! 2. `src/domain/item.rs`: the field of `Item` (and of `NewItem` when a producer sets
//!    it) and its arms in `Item::cell`/`Item::put` and `NewItem::cell`/`NewItem::put`
//!    (exhaustive matches fail the build; `NewItem::put` is held to `cell` by a test).
//! 3. `src/store/sqlite/migrations/NNNN_customer.sql`: `ALTER TABLE items ADD COLUMN`;
//!    for a searched column also the new search index version and the dirty trigger's
//!    columns (a test fails until the latest migration has them).
//! 4. `src/store/postgres/migrations/NNNN_customer.sql`: `ALTER TABLE items ADD COLUMN`.
//! 5. `schema.sql` and 6. `schema.pg.sql`: the same, at the end of `items` (the tests of
//!    both roads compare them; `tests/store/fields.rs` compares types and nullability).
//! 7. `src/cli/args.rs`: the flag on `add` (and on `edit` for a column a supervisor sets)
//!    with its help (`tests/cli/fields.rs` checks every flag the table names).
//! 8. `src/cli/commands/produce.rs` (`add`; `supervise.rs` for `edit`): the flag's value
//!    into the `NewItem` (its struct literal does not build without it).
//! 9. `README.md`: the flag in "Command line", the JSON keys, import's columns, search.
//! 10. `tests/cli/item_shape.rs`: the pinned outputs gain the key (they must: scripts
//!     parse them) and a test of the column end to end (`source`'s is there).
//!
//! Nothing else: the migrators find new steps in their directories (`build.rs`); the
//! INSERTs, select lists, row reader, search (both backends, the SQLite index's version),
//! import (its columns and row hash; what makes a re-import add nothing, the file's
//! identity, hashes the file's bytes, not its columns), export, `--json`, `show`, the
//! detail pane and the edit dialog follow the row. A column the lists show also needs its
//! place in `ui/list.rs`; one with rules of its own (like `title`'s length) gets them in
//! `NewItem::validate`. The columns the next issues need are rows of the same kinds:
//! parked until and by (`OptTime`, `OptText`; `lock_expires_at` came so), the review state
//! (`OptText`); `duplicate_of` (`OptId`: an item's id or NULL, set by a merge) came so.

use super::time::Millis;

/// A built-in column of `items`. Matches on it are exhaustive, so the compiler names
/// every place a new column must be handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Col {
    Id,
    Queue,
    RequestId,
    Title,
    Body,
    Params,
    Priority,
    DueAt,
    State,
    LockUser,
    LockTime,
    LockToken,
    Notes,
    Result,
    Error,
    CreatedAt,
    CreatedBy,
    FinishedAt,
    FinishedBy,
    Source,
    ParkedUntil,
    ParkedBy,
    ParkReason,
    LockExpiresAt,
    DuplicateOf,
}

/// What a column holds, and so how it is stored, read, bound, parsed and shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A whole number, never NULL.
    Int,
    /// Text, never NULL.
    Text,
    /// Text or NULL.
    OptText,
    /// A JSON object (SQLite: text checked by `json_valid`; PostgreSQL: `JSON`).
    Json,
    /// A time (Unix milliseconds, UTC), never NULL.
    Time,
    /// A time or NULL.
    OptTime,
    /// Another item's id or NULL.
    OptId,
}

impl Kind {
    /// The column's type on SQLite and on PostgreSQL (as their catalogues name it).
    pub const fn sql_type(self) -> (&'static str, &'static str) {
        match self {
            Kind::Int | Kind::Time | Kind::OptTime | Kind::OptId => ("INTEGER", "bigint"),
            Kind::Text | Kind::OptText => ("TEXT", "text"),
            Kind::Json => ("TEXT", "json"),
        }
    }

    /// True when the column may be NULL.
    pub const fn nullable(self) -> bool {
        matches!(self, Kind::OptText | Kind::OptTime | Kind::OptId)
    }
}

/// Who may set a column's value (besides the lock protocol, which sets its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// `caseload add` (a flag) and every producer of a `NewItem`.
    Add,
    /// `caseload import` (a CSV column, a JSON Lines key).
    Import,
    /// The lock's holder, under the lock (notes, the result, the failure reason).
    Holder,
    /// A supervisor, on an open item (`caseload edit`, the TUI's edit dialog).
    Supervisor,
}

/// How `caseload show` shows a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Show {
    /// In the heading line (`#12 Title`).
    Heading,
    /// In the line of another column (the lock in the state's line, the name in
    /// `created: … by NAME`).
    With(Col),
    /// A line of its own (`state`, `created`, `finished`), written by `show` itself.
    Own,
    /// `name: value` when it has a value (the name is [`Field::key`]).
    Line,
    /// `name:` and the text indented below it, when not empty (after every line).
    Block,
}

/// How the TUI's detail pane shows a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    /// In the header line (`#12 [queue · pri 3] Title`; a title too long for it gets a
    /// section of its own).
    Header,
    /// In the lock's label, the figures line or the history.
    Elsewhere,
    /// On the first line (`created … by … · due … · request …`): the word, then the
    /// value (`none` for a time without one; nothing at all for text without one).
    Meta(&'static str),
    /// A section under its label; `empty` is what an empty (or NULL) value shows, or
    /// `None` to leave the section out.
    Section { empty: Option<&'static str> },
}

/// A column of the TUI's lists (`ui/list.rs` places it among the lists' own, AGE and
/// LOCK; the title takes what is left).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListCol {
    /// The header (`PRI`).
    pub header: &'static str,
    /// Width at full size and abbreviated; for a column that `fits` its content, the
    /// most it takes (its header's width is the least).
    pub full: u16,
    pub compact: u16,
    /// As wide as the longest value shown (within the bounds above).
    pub fits: bool,
    /// When it goes on a narrow screen: lower ranks first; `None`: never.
    pub drop: Option<u8>,
}

/// One built-in column of `items`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub col: Col,
    /// The name in both schemas, `--json`, `export` and `import`.
    pub name: &'static str,
    pub kind: Kind,
    /// Who may set it; empty: only the lock protocol and the store.
    pub set_by: &'static [Who],
    /// Part of the text search looks in.
    pub searched: bool,
    pub show: Show,
    pub pane: Pane,
    pub list: Option<ListCol>,
    /// What the TUI calls it: dialog fields, section headings, refusals ("Queue: …").
    pub label: &'static str,
    /// Its command-line flag without the dashes (`due`), where it has one: refusals say
    /// "--due: …"; `import` also reads it as a key (with `-` as `_`).
    pub flag: Option<&'static str>,
    /// The edit dialog's hint after the label (for columns a supervisor sets).
    pub hint: &'static str,
}

impl Field {
    /// True when `who` may set it.
    pub fn set_by(&self, who: Who) -> bool {
        self.set_by.contains(&who)
    }

    /// What `show` and `import` call it: for a column a producer sets, its flag with
    /// `_` for `-` (`due`, `request_id`); else the column's name.
    pub fn key(&self) -> &'static str {
        match self.flag {
            Some("request-id") if self.produced() => "request_id",
            Some(f) if self.produced() => f,
            _ => self.name,
        }
    }

    /// A producer gives it (`add` or `import`): a column of every INSERT of new items.
    pub fn produced(&self) -> bool {
        self.set_by(Who::Add) || self.set_by(Who::Import)
    }
}

/// A row of [`FIELDS`] with the defaults of a column nobody but the store sets.
const fn stored(col: Col, name: &'static str, kind: Kind, label: &'static str) -> Field {
    Field {
        col,
        name,
        kind,
        set_by: &[],
        searched: false,
        show: Show::Line,
        pane: Pane::Elsewhere,
        list: None,
        label,
        flag: None,
        hint: "",
    }
}

use Who::{Add, Holder, Import, Supervisor};

/// Every built-in column of `items`, in schema order (new ones at the end).
pub const FIELDS: [Field; 25] = [
    Field {
        show: Show::Heading,
        pane: Pane::Header,
        list: Some(ListCol {
            header: "ID",
            full: 20,
            compact: 20,
            fits: true,
            drop: None,
        }),
        ..stored(Col::Id, "id", Kind::Int, "Id")
    },
    Field {
        set_by: &[Add, Import, Supervisor],
        pane: Pane::Header,
        list: Some(ListCol {
            header: "QUEUE",
            full: 12,
            compact: 8,
            fits: true,
            drop: Some(2),
        }),
        flag: Some("queue"),
        hint: "an existing one",
        ..stored(Col::Queue, "queue", Kind::Text, "Queue")
    },
    Field {
        set_by: &[Add, Import],
        pane: Pane::Meta("request"),
        flag: Some("request-id"),
        ..stored(Col::RequestId, "request_id", Kind::OptText, "Request id")
    },
    Field {
        set_by: &[Add, Import],
        searched: true,
        show: Show::Heading,
        pane: Pane::Header,
        list: Some(ListCol {
            header: "TITLE",
            full: 0,
            compact: 0,
            fits: false,
            drop: None,
        }),
        flag: Some("title"),
        ..stored(Col::Title, "title", Kind::Text, "Title")
    },
    Field {
        set_by: &[Add, Import],
        searched: true,
        show: Show::Block,
        pane: Pane::Section {
            empty: Some("(empty)"),
        },
        flag: Some("body"),
        ..stored(Col::Body, "body", Kind::Text, "Body")
    },
    Field {
        set_by: &[Add, Import],
        searched: true,
        show: Show::Block,
        pane: Pane::Section { empty: None },
        flag: Some("params"),
        ..stored(Col::Params, "params", Kind::Json, "Params")
    },
    Field {
        set_by: &[Add, Import, Supervisor],
        pane: Pane::Header,
        list: Some(ListCol {
            header: "PRI",
            full: 3,
            compact: 3,
            fits: false,
            drop: Some(3),
        }),
        flag: Some("priority"),
        hint: "higher is taken first",
        ..stored(Col::Priority, "priority", Kind::Int, "Priority")
    },
    Field {
        set_by: &[Add, Import, Supervisor],
        pane: Pane::Meta("due"),
        list: Some(ListCol {
            header: "DUE",
            full: 11,
            compact: 8,
            fits: false,
            drop: Some(4),
        }),
        flag: Some("due"),
        hint: "2026-12-01 17:00, tomorrow, 2h, 3d or RFC 3339; empty: none",
        ..stored(Col::DueAt, "due_at", Kind::OptTime, "Due")
    },
    Field {
        show: Show::Own,
        ..stored(Col::State, "state", Kind::Text, "State")
    },
    Field {
        show: Show::With(Col::State),
        ..stored(Col::LockUser, "lock_user", Kind::OptText, "Holder")
    },
    Field {
        show: Show::With(Col::State),
        ..stored(Col::LockTime, "lock_time", Kind::OptTime, "Locked at")
    },
    Field {
        show: Show::Own,
        ..stored(Col::LockToken, "lock_token", Kind::Int, "Lock token")
    },
    Field {
        set_by: &[Holder],
        searched: true,
        show: Show::Block,
        pane: Pane::Section {
            empty: Some("(none)"),
        },
        ..stored(Col::Notes, "notes", Kind::Text, "Notes")
    },
    Field {
        set_by: &[Holder],
        searched: true,
        pane: Pane::Section { empty: None },
        flag: Some("result"),
        ..stored(Col::Result, "result", Kind::OptText, "Result")
    },
    Field {
        set_by: &[Holder],
        searched: true,
        pane: Pane::Section { empty: None },
        flag: Some("reason"),
        ..stored(Col::Error, "error", Kind::OptText, "Failure reason")
    },
    Field {
        show: Show::Own,
        ..stored(Col::CreatedAt, "created_at", Kind::Time, "Created")
    },
    Field {
        show: Show::With(Col::CreatedAt),
        ..stored(Col::CreatedBy, "created_by", Kind::Text, "Created by")
    },
    Field {
        show: Show::Own,
        ..stored(Col::FinishedAt, "finished_at", Kind::OptTime, "Finished")
    },
    Field {
        show: Show::With(Col::FinishedAt),
        ..stored(Col::FinishedBy, "finished_by", Kind::OptText, "Finished by")
    },
    Field {
        set_by: &[Add, Import],
        searched: true,
        pane: Pane::Meta("source"),
        flag: Some("source"),
        ..stored(Col::Source, "source", Kind::OptText, "Source")
    },
    Field {
        show: Show::With(Col::State),
        ..stored(
            Col::ParkedUntil,
            "parked_until",
            Kind::OptTime,
            "Parked until",
        )
    },
    Field {
        show: Show::With(Col::State),
        ..stored(Col::ParkedBy, "parked_by", Kind::OptText, "Parked by")
    },
    Field {
        show: Show::With(Col::State),
        ..stored(Col::ParkReason, "park_reason", Kind::OptText, "Park reason")
    },
    Field {
        show: Show::With(Col::State),
        ..stored(
            Col::LockExpiresAt,
            "lock_expires_at",
            Kind::OptTime,
            "Lock expires",
        )
    },
    Field {
        pane: Pane::Meta("duplicate of"),
        ..stored(
            Col::DuplicateOf,
            "duplicate_of",
            Kind::OptId,
            "Duplicate of",
        )
    },
];

/// How many built-in columns there are.
pub const COUNT: usize = FIELDS.len();

/// The row of `col`.
pub fn field(col: Col) -> &'static Field {
    // Rows are in `Col` order (a test checks), so this is an index.
    &FIELDS[col as usize]
}

/// The row named `name`.
pub fn named(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.name == name)
}

/// The column names in schema order.
pub const NAMES: [&str; COUNT] = {
    let mut out = [""; COUNT];
    let mut i = 0;
    while i < COUNT {
        out[i] = FIELDS[i].name;
        i += 1;
    }
    out
};

/// The columns search looks in, in schema order.
pub fn searched() -> impl Iterator<Item = &'static Field> {
    FIELDS.iter().filter(|f| f.searched)
}

/// How many columns search looks in.
pub const SEARCHED_COUNT: usize = {
    let (mut n, mut i) = (0, 0);
    while i < COUNT {
        if FIELDS[i].searched {
            n += 1;
        }
        i += 1;
    }
    n
};

/// The version of the text the SQLite search index holds: which columns, in which
/// order. The indexer refuses to add to an index of another version (a program older or
/// newer than the schema would leave out or add columns), and the migration that changes
/// the searched columns sets the new one (a test checks that the latest migration does).
pub fn search_version() -> String {
    let names: Vec<&str> = searched().map(|f| f.name).collect();
    format!("1:{}", names.join(","))
}

/// What a refused value was given for: a column of the item (its flag and label are in
/// [`FIELDS`]) or another value a write takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Col(Col),
    /// The user an item is given to (reassign, assign).
    To,
    /// The login (OS login or database role) a user name is bound to.
    Login,
    /// When a parked item wakes.
    Until,
    /// Why (a park's, a fail's reason).
    Reason,
}

impl Input {
    /// Its command-line flag without the dashes (`queue`, `to`), where it has one.
    pub fn flag(self) -> Option<&'static str> {
        match self {
            Input::Col(c) => field(c).flag,
            Input::To => Some("to"),
            Input::Login => Some("login"),
            Input::Until => Some("until"),
            Input::Reason => Some("reason"),
        }
    }

    /// What the TUI calls it (`Queue`, `To user`).
    pub fn label(self) -> &'static str {
        match self {
            Input::Col(c) => field(c).label,
            Input::To => "To user",
            Input::Login => "Login",
            Input::Until => "Until",
            Input::Reason => "Reason",
        }
    }
}

/// A value refused by a rule: what it was given for and the problem, which names neither
/// the flag nor the label ("name is longer than 100 characters"), so that the command
/// line words it with its flag ([`FieldError::with_flag`], also its `Display`) and the
/// TUI with its label ([`FieldError::with_label`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.with_flag())]
pub struct FieldError {
    pub field: Input,
    pub problem: String,
}

impl FieldError {
    pub fn new(field: Input, problem: impl Into<String>) -> FieldError {
        FieldError {
            field,
            problem: problem.into(),
        }
    }

    /// Of column `col`.
    pub fn col(col: Col, problem: impl Into<String>) -> FieldError {
        FieldError::new(Input::Col(col), problem)
    }

    /// As the command line says it: "--queue: name is longer than 100 characters" (a
    /// column without a flag by its name: "notes: …").
    pub fn with_flag(&self) -> String {
        match (self.field.flag(), self.field) {
            (Some(f), _) => format!("--{f}: {}", self.problem),
            (None, Input::Col(c)) => format!("{}: {}", field(c).name, self.problem),
            (None, other) => format!("{}: {}", other.label(), self.problem),
        }
    }

    /// As the TUI says it: "Queue: name is longer than 100 characters".
    pub fn with_label(&self) -> String {
        format!("{}: {}", self.field.label(), self.problem)
    }
}

/// One value of a column, owned: what an import row or a stored row gives a column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Number(i64),
    Text(Option<String>),
    Time(Option<Millis>),
    /// Another item's id, if any.
    Id(Option<i64>),
}

impl Value {
    /// The number (0 for another kind of value).
    pub(crate) fn number(self) -> i64 {
        match self {
            Value::Number(n) => n,
            _ => 0,
        }
    }

    /// The text, if any.
    pub(crate) fn opt_text(self) -> Option<String> {
        match self {
            Value::Text(t) => t,
            _ => None,
        }
    }

    /// The text (empty for NULL).
    pub(crate) fn text(self) -> String {
        self.opt_text().unwrap_or_default()
    }

    /// The time, if any.
    pub(crate) fn time(self) -> Option<Millis> {
        match self {
            Value::Time(t) => t,
            _ => None,
        }
    }

    /// The item id, if any.
    pub(crate) fn id(self) -> Option<i64> {
        match self {
            Value::Id(t) => t,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_in_column_order_with_unique_names() {
        for (i, f) in FIELDS.iter().enumerate() {
            assert_eq!(f.col as usize, i, "{} out of place", f.name);
            assert_eq!(named(f.name), Some(f));
            assert!(!f.label.is_empty(), "{} has no label", f.name);
        }
        let mut names = NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COUNT);
    }

    #[test]
    fn shown_with_names_a_column_shown_on_its_own() {
        for f in &FIELDS {
            if let Show::With(c) = f.show {
                assert_eq!(field(c).show, Show::Own, "{}", f.name);
            }
            if f.set_by(Who::Supervisor) {
                assert!(!f.hint.is_empty() && f.flag.is_some(), "{}", f.name);
            }
            if f.produced() {
                assert!(f.flag.is_some(), "{} has no flag for add", f.name);
            }
        }
    }

    #[test]
    fn the_search_version_names_the_searched_columns() {
        assert_eq!(
            search_version(),
            "1:title,body,params,notes,result,error,source"
        );
    }
}
