//! Inserting new items: the one-row INSERT of `add` and the multi-row one of an import's
//! batch ([`CHUNK`] rows per statement instead of one INSERT per row, with the same
//! outcome row by row: a known request id gives the existing item). Both statements are
//! `store::sql::insert_items` (the table's columns, named placeholders); every
//! parameter is bound by its name ([`bind_items`]), never by a position kept by hand.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use rusqlite::Statement;
use rusqlite::types::{ToSqlOutput, Value, ValueRef};

use super::sql;
use super::tx::SqliteTx;
use crate::domain::{Cell, Millis, NewItem};
use crate::store::Added;
use crate::store::error::Result;
use crate::store::sql::{InsertParam, insert_items, insert_param};

/// Rows per multi-row INSERT: 3 shared parameters and 7 per row stay far below SQLite's
/// smallest parameter limit (999). Import batches are whole multiples of it.
pub(super) const CHUNK: usize = 50;

/// Who creates items, when, and from which login (the INSERT's shared values).
#[derive(Debug, Clone, Copy)]
pub struct Creation<'a> {
    pub at: Millis,
    pub by: &'a str,
    pub os: &'a str,
}

/// An item INSERT's text and what each of its parameters binds, in SQLite's numbering.
struct ItemInsert {
    sql: String,
    /// Parameter N's name and meaning at N - 1.
    params: Vec<(String, InsertParam)>,
}

impl ItemInsert {
    fn new(sql: String) -> ItemInsert {
        // A name that is no item column is left out: the count then differs from the
        // statement's, and `bind_items` says so.
        let params = parameter_names(&sql)
            .into_iter()
            .filter_map(|n| insert_param(&n).map(|p| (n, p)))
            .collect();
        ItemInsert { sql, params }
    }
}

/// The named parameters of `sql` as SQLite numbers them: by first appearance (a name
/// used again keeps its number). Item INSERTs hold no other colon (no casts on SQLite).
fn parameter_names(sql: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut rest = sql;
    while let Some(at) = rest.find(':') {
        let tail = &rest[at + 1..];
        let len = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let name = format!(":{}", &tail[..len]);
        if !names.contains(&name) {
            names.push(name);
        }
        rest = &tail[len..];
    }
    names
}

fn one_row() -> &'static ItemInsert {
    static INSERT: OnceLock<ItemInsert> = OnceLock::new();
    INSERT.get_or_init(|| {
        ItemInsert::new(format!(
            "{} ON CONFLICT (request_id) DO NOTHING RETURNING id",
            insert_items(1, true, "")
        ))
    })
}

fn chunk() -> &'static ItemInsert {
    static INSERT: OnceLock<ItemInsert> = OnceLock::new();
    INSERT.get_or_init(|| {
        ItemInsert::new(format!(
            "{} ON CONFLICT (request_id) DO NOTHING RETURNING id, request_id",
            insert_items(CHUNK, false, "")
        ))
    })
}

/// The one-row INSERT: the item unless its request id is known (then no row); returns
/// the new id. `:id` NULL gives the next id.
pub fn insert_item_sql() -> &'static str {
    &one_row().sql
}

/// The INSERT of [`CHUNK`] rows; returns each new item's id and request id (SQLite
/// returns them in no promised order, so they are matched by request id).
fn chunk_sql() -> &'static str {
    &chunk().sql
}

/// What each parameter of `stmt` binds: one of the two item INSERTs' (known by their
/// parameters' count and last name) or else asked of SQLite name by name. Not asked for
/// every bind: SQLite finds a parameter's name by walking the statement's list of them,
/// which made a 50-row INSERT's binding quadratic (issue 24, BENCHMARKS.md).
fn params_of(stmt: &Statement<'_>) -> Cow<'static, [(String, InsertParam)]> {
    let n = stmt.parameter_count();
    let last = stmt.parameter_name(n).unwrap_or_default();
    for known in [one_row(), chunk()] {
        if known.params.len() == n && known.params.last().is_some_and(|(l, _)| l == last) {
            return Cow::Borrowed(&known.params);
        }
    }
    Cow::Owned(
        (1..=n)
            .filter_map(|i| {
                let name = stmt.parameter_name(i).unwrap_or_default();
                insert_param(name).map(|p| (name.to_string(), p))
            })
            .collect(),
    )
}

/// Binds every parameter of an item INSERT by its name: row R's columns from
/// `items[R]`, `:id` from `id`, the creation from `created`.
pub fn bind_items(
    stmt: &mut Statement<'_>,
    items: &[NewItem],
    id: Option<i64>,
    created: Creation<'_>,
) -> rusqlite::Result<()> {
    let params = params_of(stmt);
    if params.len() != stmt.parameter_count() {
        return Err(unknown("(a parameter that is not an item column)"));
    }
    for (i, (name, p)) in params.iter().enumerate() {
        let v: ToSqlOutput<'_> = match *p {
            InsertParam::Created("created_at") => created.at.into(),
            InsertParam::Created("created_by") => created.by.into(),
            InsertParam::Created(_) => created.os.into(),
            InsertParam::Column { field, .. } if field.name == "id" => match id {
                Some(id) => id.into(),
                None => ToSqlOutput::Owned(Value::Null),
            },
            InsertParam::Column { field, row } => {
                match items.get(row).and_then(|it| it.cell(field.col)) {
                    Some(c) => cell_value(c),
                    None => return Err(unknown(name)),
                }
            }
        };
        stmt.raw_bind_parameter(i + 1, v)?;
    }
    Ok(())
}

fn unknown(name: &str) -> rusqlite::Error {
    rusqlite::Error::InvalidParameterName(name.to_string())
}

/// A value as SQLite binds it.
fn cell_value(c: Cell<'_>) -> ToSqlOutput<'_> {
    match c {
        Cell::Number(n) => n.into(),
        Cell::Text(Some(t)) => t.into(),
        Cell::Time(Some(t)) | Cell::Id(Some(t)) => t.into(),
        Cell::Text(None) | Cell::Time(None) | Cell::Id(None) => ToSqlOutput::Owned(Value::Null),
    }
}

/// Inserts one item (with `id` when it keeps one), created at `at`; its new id, or
/// `None` when its request id is known.
pub(super) fn insert_one(
    tx: &SqliteTx<'_>,
    item: &NewItem,
    id: Option<i64>,
    at: Millis,
) -> Result<Option<i64>> {
    let mut stmt = tx.c.prepare_cached(insert_item_sql())?;
    bind_items(&mut stmt, std::slice::from_ref(item), id, creation(tx, at))?;
    let mut rows = stmt.raw_query();
    Ok(match rows.next()? {
        Some(r) => Some(r.get(0)?),
        None => None,
    })
}

fn creation<'a>(tx: &'a SqliteTx<'_>, at: Millis) -> Creation<'a> {
    Creation {
        at,
        by: &tx.ctx.actor.name,
        os: &tx.ctx.actor.os_user,
    }
}

/// Inserts [`CHUNK`] items, each with a request id, in one statement; what each became,
/// in order. Of items sharing a request id only the first can be new (as one by one).
pub(super) fn insert_chunk(tx: &SqliteTx<'_>, items: &[NewItem]) -> Result<Vec<Added>> {
    debug_assert_eq!(items.len(), CHUNK);
    // The first item with each request id: the one a new row is for.
    let mut first: HashMap<&[u8], usize> = HashMap::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        if let Some(r) = &it.request_id {
            first.entry(r.as_bytes()).or_insert(i);
        }
    }
    let mut ids: Vec<Option<i64>> = vec![None; items.len()];
    {
        let mut stmt = tx.c.prepare_cached(chunk_sql())?;
        bind_items(&mut stmt, items, None, creation(tx, tx.ctx.now))?;
        let mut rows = stmt.raw_query();
        while let Some(row) = rows.next()? {
            let id: i64 = row.get(0)?;
            let ValueRef::Text(request_id) = row.get_ref(1)? else {
                continue;
            };
            if let Some(&i) = first.get(request_id) {
                ids[i] = Some(id);
            }
        }
    }
    let mut added = Vec::with_capacity(items.len());
    for (it, id) in items.iter().zip(ids) {
        added.push(match id {
            Some(id) => Added {
                id,
                created: true,
                skipped: false,
            },
            None => {
                // A known request id: the producer's retry gets the existing item.
                let known: i64 =
                    tx.c.prepare_cached(sql::ITEM_BY_REQUEST_ID)?
                        .query_row([&it.request_id], |r| r.get(0))?;
                Added {
                    id: known,
                    created: false,
                    skipped: false,
                }
            }
        });
    }
    Ok(added)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The binding plans read from the INSERTs' text number their parameters as SQLite
    /// does (checked over the same placeholders as a select list: no table needed).
    #[test]
    fn the_plans_number_parameters_as_sqlite_does() {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        for known in [one_row(), chunk()] {
            let sql = &known.sql;
            let values = &sql[sql.find("VALUES").unwrap() + 6..sql.find(" ON CONFLICT").unwrap()];
            let list = values.replace("), (", ", ").replace(['(', ')'], "");
            let stmt = c.prepare(&format!("SELECT {list}")).unwrap();
            let sqlite: Vec<&str> = (1..=stmt.parameter_count())
                .map(|i| stmt.parameter_name(i).unwrap())
                .collect();
            let ours: Vec<&str> = known.params.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(ours, sqlite);
            assert!(
                matches!(params_of(&stmt), Cow::Borrowed(_)),
                "the plan is used"
            );
        }
        // Any other statement is asked name by name, as before.
        let other = c.prepare("SELECT :title, :created_at").unwrap();
        assert!(matches!(params_of(&other), Cow::Owned(ref p) if p.len() == 2));
    }

    #[test]
    fn every_placeholder_is_named_and_bound_by_its_name() {
        let one = insert_item_sql();
        assert!(!one.contains('?'), "{one}");
        assert!(one.contains(":queue") && one.contains(":created_os") && one.contains(":id"));
        let c = rusqlite::Connection::open_in_memory().unwrap();
        // The chunk's placeholders, in the order they appear, as a select list (no table
        // needed): column k of the row is placeholder k.
        let sql = chunk_sql();
        let values = &sql[sql.find("VALUES").unwrap() + 6..sql.find(" ON CONFLICT").unwrap()];
        let list = values.replace("), (", ", ").replace(['(', ')'], "");
        let names: Vec<String> = list.split(", ").map(|n| n.trim().to_string()).collect();
        let mut stmt = c.prepare(&format!("SELECT {list}")).unwrap();
        let items: Vec<NewItem> = (0..CHUNK)
            .map(|i| NewItem {
                priority: i as i64,
                request_id: Some(format!("r{i}")),
                ..NewItem::titled(&format!("t{i}"))
            })
            .collect();
        let created = Creation {
            at: 7,
            by: "me",
            os: "login",
        };
        bind_items(&mut stmt, &items, None, created).unwrap();
        let mut rows = stmt.raw_query();
        let row = rows.next().unwrap().unwrap();
        let mut checked = 0;
        // Each column's value is the one its name says.
        for (i, n) in names.iter().enumerate() {
            let v: rusqlite::types::Value = row.get(i).unwrap();
            let want: rusqlite::types::Value = match n.as_str() {
                ":created_at" => 7.into(),
                ":created_by" => "me".to_string().into(),
                ":created_os" => "login".to_string().into(),
                _ if n.starts_with(":priority_") => n[10..].parse::<i64>().unwrap().into(),
                _ if n.starts_with(":title_") => format!("t{}", &n[7..]).into(),
                _ if n.starts_with(":request_id_") => format!("r{}", &n[12..]).into(),
                _ => continue,
            };
            assert_eq!(v, want, "{n}");
            checked += 1;
        }
        assert_eq!(checked, CHUNK * 6);
    }
}
