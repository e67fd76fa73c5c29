//! Duplicates on PostgreSQL (issue 27): the keys of items' duplicate-key fields, which
//! items have a key, and the pairs people judged. The rules are `domain::duplicates` and
//! `store::ops::dedupe`; this is their SQL.

use super::open::{Conn, TxResult};
use crate::domain::duplicates::{Pair, Verdict};

/// Replaces item `id`'s keys with `keys` (field, key): two statements whatever their
/// number.
pub(super) fn put_keys(c: &mut Conn, id: i64, keys: &[(String, String)]) -> TxResult<()> {
    c.execute("DELETE FROM item_keys WHERE item_id = $1", &[&id])?;
    if keys.is_empty() {
        return Ok(());
    }
    let fields: Vec<&str> = keys.iter().map(|k| k.0.as_str()).collect();
    let values: Vec<&str> = keys.iter().map(|k| k.1.as_str()).collect();
    c.execute(
        "INSERT INTO item_keys (item_id, field, key) \
         SELECT $1, f, k FROM unnest($2::text[], $3::text[]) AS u(f, k)",
        &[&id, &fields, &values],
    )?;
    Ok(())
}

/// Replaces the keys of items `ids` with `keys` (item id, field, key): two statements
/// whatever their number (a rebuild of a queue's keys, a page at a time, was two round
/// trips per item: over 20 minutes for a third of a million items).
pub(super) fn replace_keys(
    c: &mut Conn,
    ids: &[i64],
    keys: &[(i64, String, String)],
) -> TxResult<()> {
    c.execute("DELETE FROM item_keys WHERE item_id = ANY($1)", &[&ids])?;
    if keys.is_empty() {
        return Ok(());
    }
    let items: Vec<i64> = keys.iter().map(|k| k.0).collect();
    let fields: Vec<&str> = keys.iter().map(|k| k.1.as_str()).collect();
    let values: Vec<&str> = keys.iter().map(|k| k.2.as_str()).collect();
    c.execute(
        "INSERT INTO item_keys (item_id, field, key) \
         SELECT i, f, k FROM unnest($1::bigint[], $2::text[], $3::text[]) AS u(i, f, k)",
        &[&items, &fields, &values],
    )?;
    Ok(())
}

/// Items of `queue` with id above `after` (at most `limit`, by id): id and params.
pub(super) fn queue_params(
    c: &mut Conn,
    queue: &str,
    after: i64,
    limit: usize,
) -> TxResult<Vec<(i64, String)>> {
    let rows = c.query(
        "SELECT id, params::text FROM items WHERE queue = $1 AND id > $2 ORDER BY id LIMIT $3",
        &[&queue, &after, &(limit as i64)],
    )?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// Items of `queue` other than `except` whose key of `field` is `key`, at most `limit`.
pub(super) fn key_matches(
    c: &mut Conn,
    queue: &str,
    field: &str,
    key: &str,
    except: i64,
    limit: usize,
) -> TxResult<Vec<i64>> {
    let rows = c.query(
        "SELECT k.item_id FROM item_keys k JOIN items i ON i.id = k.item_id \
         WHERE k.field = $1 AND k.key = $2 AND i.queue = $3 AND k.item_id <> $4 \
         ORDER BY k.item_id LIMIT $5",
        &[&field, &key, &queue, &except, &(limit as i64)],
    )?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

fn pair_from(r: &postgres::Row) -> Pair {
    let verdict: String = r.get(2);
    Pair {
        low: r.get(0),
        high: r.get(1),
        verdict: Verdict::parse(&verdict).unwrap_or(Verdict::NotSame),
        actor: r.get(3),
        at: r.get(4),
    }
}

/// The pairs item `id` is in.
pub(super) fn pairs(c: &mut Conn, id: i64) -> TxResult<Vec<Pair>> {
    let rows = c.query(
        "SELECT low, high, verdict, actor, at FROM item_pairs WHERE low = $1 \
         UNION ALL SELECT low, high, verdict, actor, at FROM item_pairs WHERE high = $1 \
         ORDER BY 1, 2",
        &[&id],
    )?;
    Ok(rows.iter().map(pair_from).collect())
}

/// The pair (low, high), if judged; its row held until the transaction ends.
pub(super) fn pair(c: &mut Conn, low: i64, high: i64) -> TxResult<Option<Pair>> {
    let row = c.query_opt(
        "SELECT low, high, verdict, actor, at FROM item_pairs WHERE low = $1 AND high = $2 \
         FOR UPDATE",
        &[&low, &high],
    )?;
    Ok(row.as_ref().map(pair_from))
}

/// Records a judged pair (replacing what was said of it before).
pub(super) fn put_pair(c: &mut Conn, p: &Pair) -> TxResult<()> {
    c.execute(
        "INSERT INTO item_pairs (low, high, verdict, actor, at) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (low, high) DO UPDATE SET verdict = excluded.verdict, \
         actor = excluded.actor, at = excluded.at",
        &[&p.low, &p.high, &p.verdict.as_str(), &p.actor, &p.at],
    )?;
    Ok(())
}

/// Every judged pair, by ids (for `export --pairs`).
pub(super) fn all_pairs(c: &mut Conn) -> TxResult<Vec<Pair>> {
    let rows = c.query(
        "SELECT low, high, verdict, actor, at FROM item_pairs ORDER BY low, high",
        &[],
    )?;
    Ok(rows.iter().map(pair_from).collect())
}
