//! Many new items in one statement: an import's batch goes in [`CHUNK`] rows at a time
//! instead of one INSERT per row, with the same outcome row by row as
//! [`super::sql::INSERT_ITEM`] (a known request id gives the existing item).

use std::collections::HashMap;
use std::sync::OnceLock;

use rusqlite::types::ValueRef;

use super::sql;
use super::tx::SqliteTx;
use crate::domain::NewItem;
use crate::store::Added;
use crate::store::error::Result;

/// Rows per multi-row INSERT: 3 shared parameters and 7 per row stay far below SQLite's
/// smallest parameter limit (999). Import batches are whole multiples of it.
pub(super) const CHUNK: usize = 50;

/// Parameters each row binds after the 3 shared ones (created_at, created_by, created_os).
const PER_ROW: usize = 7;

/// The INSERT of [`CHUNK`] rows; returns each new item's id and request id (SQLite
/// returns them in no promised order, so they are matched by request id).
fn chunk_sql() -> &'static str {
    static SQL: OnceLock<String> = OnceLock::new();
    SQL.get_or_init(|| {
        let mut s = String::from(
            "INSERT INTO items (queue, request_id, title, body, params, priority, due_at, \
             created_at, created_by, created_os) VALUES ",
        );
        for r in 0..CHUNK {
            let p = 4 + r * PER_ROW;
            if r > 0 {
                s.push_str(", ");
            }
            s.push_str(&format!(
                "(?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?1, ?2, ?3)",
                p,
                p + 1,
                p + 2,
                p + 3,
                p + 4,
                p + 5,
                p + 6
            ));
        }
        s.push_str(" ON CONFLICT (request_id) DO NOTHING RETURNING id, request_id");
        s
    })
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
        stmt.raw_bind_parameter(1, tx.ctx.now)?;
        stmt.raw_bind_parameter(2, &tx.ctx.actor.name)?;
        stmt.raw_bind_parameter(3, &tx.ctx.actor.os_user)?;
        for (r, it) in items.iter().enumerate() {
            let p = 4 + r * PER_ROW;
            stmt.raw_bind_parameter(p, &it.queue)?;
            stmt.raw_bind_parameter(p + 1, &it.request_id)?;
            stmt.raw_bind_parameter(p + 2, &it.title)?;
            stmt.raw_bind_parameter(p + 3, &it.body)?;
            stmt.raw_bind_parameter(p + 4, &it.params)?;
            stmt.raw_bind_parameter(p + 5, it.priority)?;
            stmt.raw_bind_parameter(p + 6, it.due_at)?;
        }
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
            Some(id) => Added { id, created: true },
            None => {
                // A known request id: the producer's retry gets the existing item.
                let known: i64 =
                    tx.c.prepare_cached(sql::ITEM_BY_REQUEST_ID)?
                        .query_row([&it.request_id], |r| r.get(0))?;
                Added {
                    id: known,
                    created: false,
                }
            }
        });
    }
    Ok(added)
}
