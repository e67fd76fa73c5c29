//! Digests of checked records on PostgreSQL (schema 28; see `store::ops::fields::digest`):
//! a record's digest counts only for the database role that wrote it, which the server
//! stamps (`items.fields_checked_by`, set by a trigger to `session_user`), so a digest
//! forged in raw SQL passes no other role's Complete. The lookups a field save and a
//! Complete make here are one statement each.

use std::sync::LazyLock;

use postgres::Row;
use postgres::types::Type;

use super::open::{Conn, TxResult};
use super::reads::PgCells;
use super::sql::{self, FENCED_UPDATE_TYPES};
use crate::domain::QueueSettings;
use crate::store::ops::{Checked, FieldRecord};
use crate::store::rows;
use crate::store::sql::{FENCE_HOLDER_OR_REVIEWER, QUEUE_OF_COLS, SET_PARAMS};

/// The select list of what [`Checked`] holds, of item `i`: whether its queue has fields,
/// the definitions' version, and its digest when this session's role wrote it.
const CHECKED_COLS: &str = "EXISTS (SELECT 1 FROM queue_fields f WHERE f.queue = i.queue), \
     (SELECT n FROM fields_version), \
     CASE WHEN i.fields_checked_by = session_user::text THEN i.fields_checked END";

/// [`CHECKED_COLS`] read from `row` at column `at`.
fn checked_at(row: &Row, at: usize) -> Checked {
    let digest: Option<Vec<u8>> = row.get(at + 2);
    Checked {
        has_fields: row.get(at),
        version: row.get(at + 1),
        digest: digest.and_then(|d| <[u8; 16]>::try_from(d.as_slice()).ok()),
    }
}

/// No such item: nothing to check (the fenced write explains).
const NONE: Checked = Checked {
    has_fields: false,
    version: 0,
    digest: None,
};

/// The version of every queue's field definitions.
pub(super) fn fields_version(c: &mut Conn) -> TxResult<i64> {
    Ok(c.query_one("SELECT n FROM fields_version", &[])?.get(0))
}

/// What item `id`'s Complete is judged by.
pub(super) fn fields_checked(c: &mut Conn, id: i64) -> TxResult<Checked> {
    static SQL: LazyLock<String> =
        LazyLock::new(|| format!("SELECT {CHECKED_COLS} FROM items i WHERE i.id = $1"));
    Ok(c.query_opt(&SQL, &[&id])?
        .map_or(NONE, |r| checked_at(&r, 0)))
}

/// What [`judging`] read: the digest, the record (when its queue has fields), the queue.
pub(super) type Judging = (Checked, Option<FieldRecord>, Option<QueueSettings>);

/// What item `id`'s Complete by `me` under `token` is judged and routed by, in one
/// statement: [`fields_checked`], its queue's settings and, when its queue has fields, the
/// record as it is completed (its params, and whether `me` holds it under `token`: the
/// fence of [`FENCE_HOLDER_OR_REVIEWER`]). The row is held for the transaction from here
/// (`FOR NO KEY UPDATE`, as the complete's own write would), so the record checked is the
/// record completed, without a second read of it.
pub(super) fn judging(c: &mut Conn, id: i64, me: &str, token: i64) -> TxResult<Judging> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "{QUEUE_OF_COLS}, {CHECKED_COLS}, i.queue, \
             CASE WHEN EXISTS (SELECT 1 FROM queue_fields f WHERE f.queue = i.queue) \
             THEN i.params::text END, coalesce({}, false) \
             FROM items i JOIN queues q ON q.name = i.queue WHERE i.id = $1 \
             FOR NO KEY UPDATE OF i",
            holder_fence()
        )
    });
    let Some(r) = c.query_opt(&SQL, &[&id, &me, &token])? else {
        return Ok((NONE, None, None));
    };
    let queue = rows::queue_from(&mut PgCells::new(&r))?;
    let checked = checked_at(&r, 10);
    let params: Option<String> = r.get(14);
    let record = params
        .filter(|_| checked.has_fields)
        .map(|params| FieldRecord {
            queue: r.get(13),
            params,
            held: r.get(15),
        });
    Ok((checked, record, Some(queue)))
}

/// [`FENCE_HOLDER_OR_REVIEWER`] on item `i`, `$2` the actor and `$3` the token.
fn holder_fence() -> String {
    FENCE_HOLDER_OR_REVIEWER
        .replace("lock_", "i.lock_")
        .replace("state", "i.state")
        .replace(":me", "$2::text")
        .replace(":token", "$3::bigint")
}

/// What a holder's field save of item `id` under `token` works on, the item held for the
/// transaction (`FOR UPDATE`).
pub(super) fn field_record(
    c: &mut Conn,
    id: i64,
    me: &str,
    token: i64,
) -> TxResult<Option<(FieldRecord, Checked)>> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT i.queue, i.params::text, coalesce({}, false), {CHECKED_COLS} \
             FROM items i WHERE i.id = $1 FOR NO KEY UPDATE OF i",
            holder_fence()
        )
    });
    Ok(c.query_opt(&SQL, &[&id, &me, &token])?.map(|r| {
        let record = FieldRecord {
            queue: r.get(0),
            params: r.get(1),
            held: r.get(2),
        };
        (record, checked_at(&r, 3))
    }))
}

/// The params write of a field save with its digest (`$9`) and its event, in one
/// statement: [`sql::fenced_update`] of [`SET_PARAMS`] under the holder's fence.
pub(super) static WRITE_PARAMS: LazyLock<String> = LazyLock::new(|| {
    sql::fenced_update(
        &format!("{SET_PARAMS}, fields_checked = :digest"),
        FENCE_HOLDER_OR_REVIEWER,
    )
    .replace(":digest", "$9")
});

/// The parameter types of [`WRITE_PARAMS`].
pub(super) fn write_params_types() -> [Type; 9] {
    let mut t = FENCED_UPDATE_TYPES;
    t[8] = Type::BYTEA;
    t
}

/// Writes the digests of items (`ids[i]`'s is `digests[i]`) in one statement (in hex: a
/// pooled connection names each parameter's type from its Rust type, and knows no
/// `bytea[]`).
pub(super) fn put_many(c: &mut Conn, ids: &[i64], digests: &[[u8; 16]]) -> TxResult<()> {
    let hex: Vec<String> = digests
        .iter()
        .map(|d| d.iter().map(|b| format!("{b:02x}")).collect())
        .collect();
    c.execute(
        "UPDATE items i SET fields_checked = decode(d.hex, 'hex') \
         FROM unnest($1::bigint[], $2::text[]) AS d(id, hex) WHERE i.id = d.id",
        &[&ids, &hex],
    )?;
    Ok(())
}
