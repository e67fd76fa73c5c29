//! Duplicates on SQLite (issue 27): the keys of items' duplicate-key fields, which items
//! have a key, and the pairs people judged. The rules are `domain::duplicates` and
//! `store::ops::dedupe`; this is their SQL.

use rusqlite::{Connection, OptionalExtension, params};

use crate::domain::duplicates::{Pair, Verdict};
use crate::store::error::Result;

/// Replaces item `id`'s keys with `keys` (field, key).
pub(super) fn put_keys(c: &Connection, id: i64, keys: &[(String, String)]) -> Result<()> {
    c.prepare_cached("DELETE FROM item_keys WHERE item_id = ?1")?
        .execute([id])?;
    let mut ins =
        c.prepare_cached("INSERT INTO item_keys (item_id, field, key) VALUES (?1, ?2, ?3)")?;
    for (field, key) in keys {
        ins.execute(params![id, field, key])?;
    }
    Ok(())
}

/// Replaces the keys of items `ids` with `keys` (item id, field, key).
pub(super) fn replace_keys(
    c: &Connection,
    ids: &[i64],
    keys: &[(i64, String, String)],
) -> Result<()> {
    let mut del = c.prepare_cached("DELETE FROM item_keys WHERE item_id = ?1")?;
    for id in ids {
        del.execute([id])?;
    }
    let mut ins =
        c.prepare_cached("INSERT INTO item_keys (item_id, field, key) VALUES (?1, ?2, ?3)")?;
    for (id, field, key) in keys {
        ins.execute(params![id, field, key])?;
    }
    Ok(())
}

/// Items of `queue` with id above `after` (at most `limit`, by id): id and params.
pub(super) fn queue_params(
    c: &Connection,
    queue: &str,
    after: i64,
    limit: usize,
) -> Result<Vec<(i64, String)>> {
    let mut stmt = c.prepare_cached(
        "SELECT id, params FROM items WHERE queue = ?1 AND id > ?2 ORDER BY id LIMIT CAST(?3 AS INTEGER)",
    )?;
    let rows = stmt.query_map(params![queue, after, limit as i64], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Items of `queue` other than `except` whose key of `field` is `key`, at most `limit`.
pub(super) fn key_matches(
    c: &Connection,
    queue: &str,
    field: &str,
    key: &str,
    except: i64,
    limit: usize,
) -> Result<Vec<i64>> {
    let mut stmt = c.prepare_cached(
        "SELECT k.item_id FROM item_keys k JOIN items i ON i.id = k.item_id \
         WHERE k.field = ?1 AND k.key = ?2 AND i.queue = ?3 AND k.item_id <> ?4 \
         ORDER BY k.item_id LIMIT CAST(?5 AS INTEGER)",
    )?;
    let rows = stmt.query_map(params![field, key, queue, except, limit as i64], |r| {
        r.get(0)
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn pair_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<Pair> {
    let verdict: String = r.get(2)?;
    Ok(Pair {
        low: r.get(0)?,
        high: r.get(1)?,
        verdict: Verdict::parse(&verdict).unwrap_or(Verdict::NotSame),
        actor: r.get(3)?,
        at: r.get(4)?,
    })
}

const PAIR_COLS: &str = "low, high, verdict, actor, at";

/// The pairs item `id` is in, by the other item's id.
pub(super) fn pairs(c: &Connection, id: i64) -> Result<Vec<Pair>> {
    let sql = format!(
        "SELECT {PAIR_COLS} FROM item_pairs WHERE low = ?1 \
         UNION ALL SELECT {PAIR_COLS} FROM item_pairs WHERE high = ?1 ORDER BY 1, 2"
    );
    let mut stmt = c.prepare_cached(&sql)?;
    let rows = stmt.query_map([id], pair_from)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The pair (low, high), if judged.
pub(super) fn pair(c: &Connection, low: i64, high: i64) -> Result<Option<Pair>> {
    let sql = format!("SELECT {PAIR_COLS} FROM item_pairs WHERE low = ?1 AND high = ?2");
    Ok(c.prepare_cached(&sql)?
        .query_row([low, high], pair_from)
        .optional()?)
}

/// Records a judged pair (replacing what was said of it before).
pub(super) fn put_pair(c: &Connection, p: &Pair) -> Result<()> {
    c.prepare_cached(
        "INSERT INTO item_pairs (low, high, verdict, actor, at) VALUES (?1, ?2, ?3, ?4, ?5) \
         ON CONFLICT (low, high) DO UPDATE SET verdict = excluded.verdict, \
         actor = excluded.actor, at = excluded.at",
    )?
    .execute(params![p.low, p.high, p.verdict.as_str(), p.actor, p.at])?;
    Ok(())
}

/// Every judged pair, by ids (for `export --pairs`).
pub(super) fn all_pairs(c: &Connection) -> Result<Vec<Pair>> {
    let sql = format!("SELECT {PAIR_COLS} FROM item_pairs ORDER BY low, high");
    let mut stmt = c.prepare_cached(&sql)?;
    let rows = stmt.query_map([], pair_from)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
