//! The PostgreSQL store's statements on the lock protocol's hot paths, in one place: the
//! store runs them and the benchmark's raw baseline (benches/queue.rs) runs the very same
//! text, so the two cannot drift apart.

use crate::domain::TakeOrder;
pub(crate) use crate::store::sql::ITEM_COLS;
use crate::store::sql::{const_join, eligible};

/// A statement written with named placeholders (`:queue`, as `store::sql`'s INSERTs
/// are) in PostgreSQL's numbered form: `$1`, `$2`, … and the names in that order (a name
/// used twice keeps its number). Casts (`::text`) are left alone. Callers bind each
/// number by its name, so no position is ever kept by hand.
pub fn numbered(sql: &str) -> (String, Vec<String>) {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = sql.as_bytes();
    let (mut out, mut names) = (String::with_capacity(sql.len()), Vec::<String>::new());
    let mut i = 0;
    while i < bytes.len() {
        let named = bytes[i] == b':'
            && (i == 0 || bytes[i - 1] != b':')
            && bytes
                .get(i + 1)
                .is_some_and(|&b| ident(b) && !b.is_ascii_digit());
        if !named {
            let next = sql[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&sql[i..i + next]);
            i += next;
            continue;
        }
        let end = (i + 1..bytes.len())
            .find(|&k| !ident(bytes[k]))
            .unwrap_or(bytes.len());
        let name = &sql[i..end];
        let n = match names.iter().position(|x| x == name) {
            Some(k) => k + 1,
            None => {
                names.push(name.to_string());
                names.len()
            }
        };
        out.push_str(&format!("${n}"));
        i = end;
    }
    (out, names)
}

/// The event columns, in the order the row reader expects (`detail` as text).
pub(crate) const EVENT_COLS: &str = "id, item_id, at, actor, os_user, kind, detail::text";

/// The server's now in Unix ms, plus a test offset: in a transaction, its start (as
/// `caseload_now_ms()`, which stamps the events and comments of a role that may not
/// choose their time, so that they and the item's lock time agree to the millisecond).
pub(crate) fn now(offset_ms: i64) -> String {
    format!("SELECT floor(extract(epoch FROM now()) * 1000)::bigint + ({offset_ms})::bigint")
}

/// A write transaction's start: `BEGIN` and the server's clock in one simple query (as
/// the store's transaction guard sends it).
pub fn begin(offset_ms: i64) -> String {
    super::txn::begin_sql(super::txn::Kind::Write, &now(offset_ms), None)
}

/// The claim: for `$1` at `$2`, the conditional UPDATE of item `$3` (its token still `$7`,
/// open, free or expired, queue not paused, within the WIP limit, a queue `$1` may take
/// from) and its event (`$4` the
/// OS user, `$5` the kind and `$6` the detail the lock protocol decided) in one
/// statement, returning the item. The row is already held by the caller's transaction.
/// (`queues` shares no column name with `items`, so the item's columns need no prefix.)
pub const CLAIM: &str = const_join!(
    &[
        "WITH u AS (UPDATE items SET lock_user = $1, lock_time = $2, \
         lock_token = lock_token + 1, lock_expires_at = $2 + q.lock_seconds * 1000 \
         FROM queues q \
         WHERE items.id = $3 AND items.lock_token = $7 AND q.name = items.queue \
         AND items.state = 'open' \
         AND (items.lock_user IS NULL OR items.lock_expires_at <= $2) \
         AND NOT q.paused \
         AND (q.max_per_user IS NULL OR q.max_per_user > (SELECT count(*) FROM items h \
              WHERE h.lock_user = $1 AND h.queue = items.queue AND h.id <> items.id)) AND ",
        eligible!("$1", "take", "items"),
        " RETURNING ",
        ITEM_COLS,
        "), e AS (INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
         SELECT u.id, $2, $1, $4, $5::text, $6::text::json FROM u) \
         SELECT * FROM u"
    ],
    ""
);

/// The first item `$1` may take at `$2`, in take order (across all queues, or within
/// `$4`), other than the ids in `$3`: its id, holder, queue and whether the queue has a
/// limit per user. The row is held for the transaction; rows other claims are writing
/// are skipped, not waited for.
pub fn candidate(one_queue: bool) -> String {
    candidate_in(one_queue, TakeOrder::Priority)
}

/// [`candidate`] in a take order (`Due` within one queue: the `items_take_due` index).
pub(crate) fn candidate_in(one_queue: bool, order: TakeOrder) -> String {
    candidate_where(one_queue, order, "")
}

/// [`candidate`] for a take that needs nothing else done first (the common case, and
/// `ops::take`'s short way: a claim in four round trips): the same row, but only when
/// no park of `$1`'s has woken and no park's grace has passed (either is dealt with
/// before a candidate is looked for), and the take order is one walk by priority (within
/// `$4`: that queue's own order; across queues: every queue's, and `$1` may take from
/// all). Otherwise no row, and the take goes the long way. The conditions name no column
/// of the candidate: the server decides them once per statement.
pub(crate) fn first_takeable(one_queue: bool) -> String {
    let order = match one_queue {
        true => "AND q.take_order IS DISTINCT FROM 'due'",
        false => {
            "AND NOT EXISTS (SELECT 1 FROM queues qd WHERE qd.take_order = 'due') \
             AND NOT EXISTS (SELECT 1 FROM users lu WHERE lu.name = $1 AND lu.take_limited)"
        }
    };
    candidate_where(
        one_queue,
        TakeOrder::Priority,
        &format!(
            "{order} AND NOT EXISTS (SELECT 1 FROM items p WHERE p.state = 'parked' \
             AND p.parked_until <= $2 AND (p.parked_by = $1 OR p.parked_until <= $2 - \
             coalesce((SELECT g.park_grace_seconds * 1000 FROM queues g \
             WHERE g.name = p.queue), 0)))"
        ),
    )
}

/// [`candidate_in`] with `extra` conditions.
fn candidate_where(one_queue: bool, order: TakeOrder, extra: &str) -> String {
    format!(
        "SELECT i.id, i.lock_user, i.queue, q.max_per_user IS NOT NULL, i.due_at, i.priority, \
         i.created_at, i.lock_token FROM items i \
         JOIN queues q ON q.name = i.queue \
         WHERE i.state = 'open' {} \
         AND (i.lock_user IS NULL OR i.lock_expires_at <= $2) \
         AND NOT (i.id = ANY($3)) \
         AND NOT q.paused \
         AND (q.max_per_user IS NULL OR q.max_per_user > (SELECT count(*) FROM items h \
              WHERE h.lock_user = $1 AND h.queue = i.queue AND h.id <> i.id)) \
         AND {} {extra} \
         ORDER BY {} LIMIT 1 \
         FOR NO KEY UPDATE OF i SKIP LOCKED",
        // Within one queue by priority, the queue is a range of one value and the first
        // sort key: a plain `i.queue = $4` lets the planner take the order from
        // `items_take_all` (no queue) and filter, walking past every row of other queues
        // ranked higher (1.2 s for one take at 1M items, measured); as a range it must
        // read `items_take` from the queue's first row (0.1 ms).
        match (one_queue, order) {
            (true, TakeOrder::Priority) => "AND i.queue >= $4 AND i.queue <= $4",
            (true, TakeOrder::Due) => "AND i.queue = $4",
            (false, _) => "",
        },
        eligible!("$1", "take", "i"),
        match (one_queue, order) {
            (true, TakeOrder::Priority) => "i.queue, i.priority DESC, i.created_at, i.id",
            (false, TakeOrder::Priority) => "i.priority DESC, i.created_at, i.id",
            (_, TakeOrder::Due) => {
                "(CASE WHEN i.due_at IS NULL THEN 9223372036854775807 ELSE i.due_at END), \
                 i.priority DESC, i.created_at, i.id"
            }
        }
    )
}

/// Key class of the advisory lock that serialises one user's claims in a WIP-limited queue.
pub const WIP_LOCK_CLASS: i32 = 0x4353_4C57; // "CSLW"

/// Serialises the claims of one key (user and queue) until the transaction ends.
pub const WIP_LOCK: &str = "SELECT pg_advisory_xact_lock($1, hashtext($2))";

/// The INSERT of one new item (with its `id` when `with_id`, else the identity's next),
/// unless its request id is known (then no row); returns the new id. Numbered
/// ([`numbered`]): the names say what each parameter is.
pub fn insert_item(with_id: bool) -> &'static (String, Vec<String>) {
    use std::sync::OnceLock;
    static SQL: [OnceLock<(String, Vec<String>)>; 2] = [OnceLock::new(), OnceLock::new()];
    SQL[usize::from(with_id)].get_or_init(|| {
        numbered(&format!(
            "{} ON CONFLICT (request_id) DO NOTHING RETURNING id",
            crate::store::sql::insert_items(1, with_id, "::text::json")
        ))
    })
}

/// An item write with its event in one statement: `set` where the item is `$1` and
/// `fence` holds; `$2` the actor, `$3` the token, `$4` now, `$5` the value, `$6` the OS
/// user, `$7` the event's kind, `$8` its detail (JSON text), `$9` a number it uses (`:arg`). It inserts one event per
/// row written, so its row count says whether the fence held. (`set` and `fence` are
/// written with `:me`, `:token`, `:now` and `:value`; see [`crate::store::sql`].)
pub fn fenced_update(set: &str, fence: &str) -> String {
    let bind = |s: &str| {
        s.replace(":json", "$5::json")
            .replace(":me", "$2")
            .replace(":token", "$3")
            .replace(":now", "$4")
            .replace(":value", "$5")
            .replace(":arg", "$9")
    };
    format!(
        "WITH u AS (UPDATE items SET {} WHERE id = $1 AND {} RETURNING id) \
         INSERT INTO events (item_id, at, actor, os_user, kind, detail) \
         SELECT id, $4, $2, $6, $7, $8::text::json FROM u",
        bind(set),
        bind(fence)
    )
}

/// The parameter types of [`fenced_update`] (the value may go unused, so PostgreSQL
/// cannot infer them all).
pub const FENCED_UPDATE_TYPES: [postgres::types::Type; 9] = {
    use postgres::types::Type;
    [
        Type::INT8,
        Type::TEXT,
        Type::INT8,
        Type::INT8,
        Type::TEXT,
        Type::TEXT,
        Type::TEXT,
        Type::TEXT,
        Type::INT8,
    ]
};

/// Sent with every write's COMMIT, in its round trip, to run after it: the change
/// counter's bump. `schema` is the quoted schema with its dot (`"cl".`), or empty where
/// the session's search path finds it.
pub fn changed(schema: &str) -> String {
    format!("SELECT {schema}caseload_changed()")
}

/// The change counter's value (see [`changed`]).
pub fn changes(schema: &str) -> String {
    format!("SELECT {schema}caseload_changes()")
}

/// True where the server refuses every change: a standby in recovery, or a session
/// read-only by default (asked at connect, beside the schema).
pub(super) const READ_ONLY_EXPR: &str =
    "pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on'";

/// [`READ_ONLY_EXPR`] on its own (after a reconnect).
pub(super) const READ_ONLY: &str = const_join!(&["SELECT ", READ_ONLY_EXPR], "");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_placeholders_are_numbered_by_first_use_and_casts_kept() {
        let (sql, names) = numbered("VALUES (:a, :b_1::text::json, :a, 'x', :c)");
        assert_eq!(sql, "VALUES ($1, $2::text::json, $1, 'x', $3)");
        assert_eq!(names, [":a", ":b_1", ":c"]);
        let (sql, names) = insert_item(true);
        assert!(!sql.contains(':') || sql.contains("::text::json"), "{sql}");
        assert_eq!(names[0], ":id");
        assert!(names.contains(&":created_os".to_string()));
        assert_eq!(sql.matches('$').count(), names.len());
    }
}
