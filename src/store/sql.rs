//! SQL text both backends share (the same words in both dialects) and the rendering of
//! event-kind sets for `kind IN (…)`. Each backend's own statements are in its `sql.rs`,
//! used by the store and by the benchmark's raw baseline alike, so they cannot drift.
//!
//! In the SET clauses and fences, `:now`, `:me`, `:value` and `:token` stand for the
//! write's time, the acting user, the write's text value and the fencing token, `:json`
//! for the value read as JSON, `:arg` for a number the write uses; each backend binds them
//! its own way.
//!
//! A bound `LIMIT` is written `LIMIT CAST(… AS BIGINT)`, never as a bare parameter: SQLite
//! reads a bare bound `LIMIT` as a number while it plans, and a statement whose plan read
//! a bound value is compiled again before each run after that value is bound (and a
//! cached statement's values are bound anew on every call), whatever the value
//! (`tests/store/reprepare.rs`). The cast changes no result and no plan on either backend.

use crate::domain::fields::{FIELDS, Field, Kind, named};
use crate::domain::{EventKind, Item};

/// The item's columns as one select list, [`Item::COLUMNS`] joined at compile time: the
/// same text on both backends (PostgreSQL's reader takes the JSON of `params` as text).
pub const ITEM_COLS: &str = const_join!(&Item::COLUMNS, ", ");

/// Everyone `assign` and `reassign` accept, by name: the `users` table (roles, bindings,
/// people who opened the screen) and every actor of the audit trail, the latter with no
/// role, login or last visit. The actors are found by skipping through the index on
/// `events (actor, at)` one name at a time (a loose index scan), not by reading every
/// event.
pub(crate) const USERS_AND_ACTORS: &str = "\
    WITH RECURSIVE acted(actor) AS (\
        SELECT MIN(actor) FROM events \
        UNION ALL \
        SELECT (SELECT MIN(e.actor) FROM events e WHERE e.actor > acted.actor) \
        FROM acted WHERE acted.actor IS NOT NULL) \
    SELECT u.name, u.role, u.last_seen, u.login FROM users u \
    UNION ALL \
    SELECT a.actor, NULL, NULL, NULL FROM acted a \
    WHERE a.actor IS NOT NULL AND NOT EXISTS (SELECT 1 FROM users u WHERE u.name = a.actor) \
    ORDER BY 1";

/// A person's `users` row as [`crate::domain::Access::from_rows`] takes it (`$1` the
/// name): role, whether each list applies (0 or 1 in both dialects), when and why they
/// left.
pub(crate) const ACCESS_ROW: &str = const_join!(&[ACCESS_COLS, " FROM users WHERE name = $1"], "");
/// [`ACCESS_ROW`]'s select list.
pub(crate) const ACCESS_COLS: &str = "SELECT role, \
     CASE WHEN take_limited THEN 1 ELSE 0 END, CASE WHEN review_limited THEN 1 ELSE 0 END, \
     left_at, left_reason";
/// A person's queues (`$1` the name): kind, queue.
pub(crate) const ACCESS_QUEUES: &str =
    "SELECT kind, queue FROM user_queues WHERE name = $1 ORDER BY kind, queue";
/// Everyone's limits, for `user list`: name, whether each list applies, when and why they
/// left, from the `users` rows that limit anything.
pub(crate) const ACCESS_ALL: &str = "SELECT name, \
     CASE WHEN take_limited THEN 1 ELSE 0 END, CASE WHEN review_limited THEN 1 ELSE 0 END, \
     left_at, left_reason FROM users \
     WHERE take_limited OR review_limited OR left_at IS NOT NULL";
/// Every person's queues: name, kind, queue.
pub(crate) const ACCESS_QUEUES_ALL: &str =
    "SELECT name, kind, queue FROM user_queues ORDER BY name, kind, queue";
/// The items `$1` holds a lock on (open ones, assignments included, and reviews), by id
/// (the `lock_user` index).
pub(crate) const HELD_BY: &str = const_join!(
    &[
        "SELECT ",
        ITEM_COLS,
        " FROM items WHERE lock_user = $1 ORDER BY id"
    ],
    ""
);

/// Who created an item, when and from which login: the INSERT's columns besides the
/// table's, one value shared by every row of the statement.
pub(crate) const CREATED: [&str; 3] = ["created_at", "created_by", "created_os"];

/// An INSERT of `rows` new items (`INSERT INTO items (…) VALUES (…), …`, to be followed
/// by the statement's own ending): the columns a producer sets (the table's
/// [`Field::produced`] ones) and [`CREATED`], with `id` first when `with_id`. Every
/// value is a named placeholder: `:queue` in a one-row INSERT, `:queue_3` for row 3 of
/// more; `:id` likewise; [`CREATED`] are shared (`:created_at`). A JSON column's
/// placeholder is followed by `json` (PostgreSQL casts: `::text::json`). See
/// [`insert_param`] for what each name stands for.
pub(crate) fn insert_items(rows: usize, with_id: bool, json: &str) -> String {
    let mut cols: Vec<&str> = Vec::new();
    if with_id {
        cols.push("id");
    }
    cols.extend(FIELDS.iter().filter(|f| f.produced()).map(|f| f.name));
    cols.extend(CREATED);
    let tuples: Vec<String> = (0..rows)
        .map(|r| {
            let row = (rows > 1).then_some(r);
            let values: Vec<String> = cols.iter().map(|c| placeholder(c, row, json)).collect();
            format!("({})", values.join(", "))
        })
        .collect();
    format!(
        "INSERT INTO items ({}) VALUES {}",
        cols.join(", "),
        tuples.join(", ")
    )
}

/// An INSERT of one whole stored item (migrate-to's copy): every column of the table and
/// `created_os`, each as `:name` (`json` after a JSON column's).
pub(crate) fn insert_stored_item(json: &str) -> String {
    let values: Vec<String> = (Item::COLUMNS.iter().chain(["created_os"].iter()))
        .map(|c| placeholder(c, None, json))
        .collect();
    format!(
        "INSERT INTO items ({ITEM_COLS}, created_os) VALUES ({})",
        values.join(", ")
    )
}

/// The placeholder of column `col` (of `row` in a multi-row INSERT).
fn placeholder(col: &str, row: Option<usize>, json: &str) -> String {
    let cast = match named(col) {
        Some(f) if f.kind == Kind::Json => json,
        _ => "",
    };
    match row {
        Some(r) if !CREATED.contains(&col) => format!(":{col}_{r}{cast}"),
        _ => format!(":{col}{cast}"),
    }
}

/// What a named placeholder of [`insert_items`] or [`insert_stored_item`] stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InsertParam {
    /// `:created_at`, `:created_by`, `:created_os`.
    Created(&'static str),
    /// A column of the table, of row `row` (0 in a one-row INSERT).
    Column { field: &'static Field, row: usize },
}

/// What the placeholder `name` (with its colon) stands for; `None` for a name no INSERT
/// of items uses.
pub(crate) fn insert_param(name: &str) -> Option<InsertParam> {
    let name = name.strip_prefix(':')?;
    if let Some(c) = CREATED.iter().find(|c| **c == name) {
        return Some(InsertParam::Created(c));
    }
    if let Some(field) = named(name) {
        return Some(InsertParam::Column { field, row: 0 });
    }
    let (col, row) = name.rsplit_once('_')?;
    Some(InsertParam::Column {
        field: named(col)?,
        row: row.parse().ok()?,
    })
}

/// Joins constant strings at compile time into a `&'static str`: `const_join!(&[A, B],
/// ", ")` is `concat!` for named constants (a select list inside a statement).
macro_rules! const_join {
    ($parts:expr, $sep:expr) => {{
        const PARTS: &[&str] = $parts;
        const SEP: &str = $sep;
        const BYTES: [u8; $crate::store::sql::joined_len(PARTS, SEP)] =
            $crate::store::sql::joined(PARTS, SEP);
        match ::std::str::from_utf8(&BYTES) {
            Ok(s) => s,
            Err(_) => panic!("joined strings are UTF-8"),
        }
    }};
}
pub(crate) use const_join;

/// The length of `parts` joined with `sep`.
pub(crate) const fn joined_len(parts: &[&str], sep: &str) -> usize {
    let mut len = 0;
    let mut i = 0;
    while i < parts.len() {
        if i > 0 {
            len += sep.len();
        }
        len += parts[i].len();
        i += 1;
    }
    len
}

/// `parts` joined with `sep`, as bytes (`N` is [`joined_len`]).
pub(crate) const fn joined<const N: usize>(parts: &[&str], sep: &str) -> [u8; N] {
    const fn put<const N: usize>(out: &mut [u8; N], at: &mut usize, s: &str) {
        let b = s.as_bytes();
        let mut k = 0;
        while k < b.len() {
            out[*at] = b[k];
            *at += 1;
            k += 1;
        }
    }
    let mut out = [0u8; N];
    let mut at = 0;
    let mut i = 0;
    while i < parts.len() {
        if i > 0 {
            put(&mut out, &mut at, sep);
        }
        put(&mut out, &mut at, parts[i]);
        i += 1;
    }
    out
}

/// `'locked', 'taken_over'`: a set of kinds as SQL literals (the names are fixed words,
/// never user input).
pub(crate) fn kinds_sql(kinds: &[EventKind]) -> String {
    kinds
        .iter()
        .map(|k| format!("'{}'", k.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// True when the actor (`$me`) may do `$kind` work (`'take'` or `'review'`) on the item
/// `$item` (`items` or its alias): they have not left, and either their list of that kind
/// does not apply or it holds the item's queue (issue 29 §2). One probe of the `users`
/// row by its key and, for a limited person, one of `user_queues` by its key: the same
/// condition in every claim's conditional write and every candidate search.
macro_rules! eligible {
    ($me:literal, $kind:literal, $item:literal) => {
        concat!(
            "NOT EXISTS (SELECT 1 FROM users eu WHERE eu.name = ",
            $me,
            " AND (eu.left_at IS NOT NULL OR (eu.",
            $kind,
            "_limited AND NOT EXISTS (SELECT 1 FROM user_queues eq WHERE eq.name = ",
            $me,
            " AND eq.kind = '",
            $kind,
            "' AND eq.queue = ",
            $item,
            ".queue))))"
        )
    };
}
pub(crate) use eligible;

/// The take order by priority (higher first), then age.
pub(crate) const ORDER_PRIORITY: &str = "priority DESC, created_at, id";
/// The take order by due time (items without one last), then priority, then age; the
/// first term is the expression of the `items_take_due` index.
pub(crate) const ORDER_DUE: &str = "(CASE WHEN due_at IS NULL THEN 9223372036854775807 ELSE due_at END), \
     priority DESC, created_at, id";
/// The order of open items of all queues when some queue orders by due time: due items
/// of those queues first (soonest first), then everything by priority and age (the order
/// of `domain::TakeOrder::key`).
pub(crate) const ORDER_MIXED: &str = "(CASE WHEN due_at IS NOT NULL AND queue IN (SELECT qd.name FROM \
     queues qd WHERE qd.take_order = 'due') THEN due_at ELSE 9223372036854775807 END), \
     priority DESC, created_at, id";

/// A holder's fence: the caller's own lock under the token it gives, on an open item.
/// How many items `:me` could take now (open; free or expired; queue running; a queue
/// they may take from), within one queue (`:queue` NULL: every queue), counting at most
/// `:cap`: the TUI's "work arrived" and title count, and what `claim --wait` looks for.
/// Walks the take-order index.
pub(crate) const COUNT_TAKEABLE: &str = concat!(
    "SELECT count(*) FROM (SELECT 1 FROM items i \
     JOIN queues q ON q.name = i.queue \
     WHERE i.state = 'open' AND NOT q.paused AND (:queue IS NULL OR i.queue = :queue) \
     AND (i.lock_user IS NULL OR i.lock_expires_at <= :now) AND ",
    eligible!(":me", "take", "i"),
    " LIMIT CAST(:cap AS BIGINT)) t"
);

pub const FENCE_HOLDER: &str = "lock_user = :me AND lock_token = :token AND state = 'open'";
/// A supervisor's fence: the lock token read under the write lock (or the one the
/// supervisor saw); any acquisition since changes it.
pub(crate) const FENCE_TOKEN: &str = "lock_token = :token";

/// The item's queue's lock age in ms, now: what a lock taken or renewed now is given
/// (`lock_expires_at = :now + LOCK_AGE`). Stored with the lock, so a later change of the
/// queue's age applies to new locks and renewals only.
pub(crate) const LOCK_AGE: &str =
    "(SELECT qa.lock_seconds * 1000 FROM queues qa WHERE qa.name = items.queue)";
/// Renew: the lock's expiry moves to now plus the queue's age; its time (when it was taken)
/// stays, unless it is an assignment being opened: its clock starts now.
pub(crate) const SET_RENEW: &str = const_join!(
    &[
        "lock_time = CASE WHEN lock_time >= 253402300799999 THEN :now ELSE lock_time END, \
         lock_expires_at = :now + ",
        LOCK_AGE
    ],
    ""
);
/// Release, skip, unlock: the item goes back to the pool.
pub(crate) const SET_RELEASE: &str = "lock_user = NULL, lock_time = NULL, lock_expires_at = NULL";
/// Park until `:arg` for the reason `:value`: the lock released, the item kept for
/// `:me` (see `store::ops::park`).
pub(crate) const SET_PARK: &str = "state = 'parked', lock_user = NULL, lock_time = NULL, \
     lock_expires_at = NULL, parked_until = :arg, parked_by = :me, park_reason = :value";
/// The owner takes their parked item: a new acquisition (a new token), the park ended,
/// the due time moved to `:arg` when given (an SLA paused while it was parked).
pub(crate) const SET_WAKE_TAKE: &str = const_join!(
    &[
        "state = 'open', lock_user = :me, lock_time = :now, \
         lock_token = lock_token + 1, parked_until = NULL, parked_by = NULL, park_reason = NULL, \
         due_at = coalesce(:arg, due_at), lock_expires_at = :now + ",
        LOCK_AGE
    ],
    ""
);
/// A park ends without its owner (grace, a supervisor): the item back in the pool, the
/// due time moved to `:arg` when given.
pub(crate) const SET_UNPARK: &str = "state = 'open', parked_until = NULL, parked_by = NULL, \
     park_reason = NULL, due_at = coalesce(:arg, due_at)";
/// The fence of a park's end: still parked, not changed since it was read.
pub(crate) const FENCE_PARKED: &str = "state = 'parked' AND lock_token = :token";
/// The fence of the owner's end of their park.
pub(crate) const FENCE_PARKED_MINE: &str =
    "state = 'parked' AND parked_by = :me AND lock_token = :token";
/// Parked items whose wake time is at or before `$1` — with `$2`, whose wake time plus
/// their queue's park grace is — of the owner `$3` (every owner when NULL), earliest
/// first, at most `$4` (the `items_parked` index). The parameters appear in the order of
/// their numbers: SQLite numbers `$N` by first appearance.
pub(crate) const PARKED_DUE: &str = const_join!(
    &[
        "SELECT ",
        ITEM_COLS,
        " FROM items WHERE state = 'parked' AND parked_until <= $1 - CASE WHEN $2 THEN \
         coalesce((SELECT q.park_grace_seconds * 1000 FROM queues q \
         WHERE q.name = items.queue), 0) ELSE 0 END \
         AND (CAST($3 AS TEXT) IS NULL OR parked_by = $3) ORDER BY parked_until, id LIMIT CAST($4 AS BIGINT)"
    ],
    ""
);
/// Undo: the item as it was before its holder's complete, fail, release, skip or park
/// (open, no result, no error, not parked), locked to `:me` under a new token.
pub(crate) const SET_UNDO: &str = const_join!(
    &[
        "state = 'open', result = NULL, error = NULL, \
         finished_at = NULL, finished_by = NULL, parked_until = NULL, parked_by = NULL, \
         park_reason = NULL, lock_user = :me, lock_time = :now, lock_token = lock_token + 1, \
         lock_expires_at = :now + ",
        LOCK_AGE
    ],
    ""
);
/// The fence of an undo: the token read, and no event on the item after the one undone
/// (`:arg`, its id): nobody touched it since.
pub(crate) const FENCE_UNDO: &str = "lock_token = :token AND NOT EXISTS (SELECT 1 FROM events \
     ue WHERE ue.item_id = items.id AND ue.id > :arg)";
/// The actor's (`$1`) events at the time `$2` (one transaction's), by id, after the
/// backend's event columns (the `events (actor, at)` index).
pub(crate) const EVENTS_AT: &str = "FROM events WHERE actor = $1 AND at = $2 ORDER BY id";
/// The fence of what a reviewer may do as any holder (renew, release, notes, fields): the
/// caller's own lock under the token it gives, on an open item or one in review.
pub(crate) const FENCE_HOLDER_OR_REVIEWER: &str =
    "lock_user = :me AND lock_token = :token AND state IN ('open', 'review')";
/// A complete that goes to review (`store::ops::review`): as [`SET_COMPLETE`], the state
/// `review` (the maker is `finished_by`).
pub(crate) const SET_SUBMIT: &str = "state = 'review', result = :value, lock_user = NULL, \
     lock_time = NULL, lock_expires_at = NULL, finished_at = :now, finished_by = :me";
/// True when the actor (`{me}`) worked on the item (`items` in the statement): completed
/// it (submitted or not), or corrected a field of it before it last went to review (a
/// reviewer's own corrections do not keep them from taking it back after a release).
macro_rules! worked_on {
    ($me:literal) => {
        concat!(
            "EXISTS (SELECT 1 FROM events w WHERE w.item_id = items.id AND w.actor = ",
            $me,
            " AND (w.kind IN ('completed', 'submitted') OR (w.kind = 'field_changed' \
             AND w.id < (SELECT max(s.id) FROM events s WHERE s.item_id = items.id \
             AND s.kind = 'submitted'))))"
        )
    };
}
/// [`worked_on!`] with the actor left as `{me}`, for a list to put its placeholder in
/// (the Review view lists only what its user may review).
pub(crate) const WORKED_ON: &str = worked_on!("{me}");
/// [`eligible!`] for reviews with the actor left as `{me}` (the Review view lists only the
/// queues its user may review in).
pub(crate) const MAY_REVIEW: &str = eligible!("{me}", "review", "items");
/// The review take's fence: in review, its token still `:token`, free or expired, and not
/// the caller's own work (in the same conditional write as the take).
pub(crate) const FENCE_REVIEW_TAKE: &str = concat!(
    "state = 'review' AND lock_token = :token \
     AND (lock_user IS NULL OR lock_expires_at <= :now) AND NOT ",
    worked_on!(":me"),
    " AND ",
    eligible!(":me", "review", "items")
);
/// The review take: a new acquisition by the caller (a new token).
pub(crate) const SET_REVIEW_TAKE: &str = const_join!(
    &[
        "lock_user = :me, lock_time = :now, lock_token = lock_token + 1, \
         lock_expires_at = :now + ",
        LOCK_AGE
    ],
    ""
);
/// The first item in review the actor `$3` may take (`$1`: within that queue, all when
/// NULL; `$2`: now), oldest submission first; a paused queue's are not offered.
pub(crate) const REVIEWABLE: &str = const_join!(
    &[
        "SELECT ",
        ITEM_COLS,
        " FROM items WHERE state = 'review' AND (CAST($1 AS TEXT) IS NULL OR queue = $1) \
         AND (lock_user IS NULL OR lock_expires_at <= $2) AND NOT EXISTS (SELECT 1 FROM \
         queues qp WHERE qp.name = items.queue AND qp.paused) AND NOT ",
        worked_on!("$3"),
        " AND ",
        eligible!("$3", "review", "items"),
        " ORDER BY finished_at, id LIMIT 1"
    ],
    ""
);
/// How many items of queue `$2` the actor `$1` completed, counting at most `$3` (the
/// queue's `review_new`).
pub(crate) const COMPLETIONS_IN: &str = "SELECT count(*) FROM (SELECT 1 FROM events e \
     JOIN items i ON i.id = e.item_id WHERE e.actor = $1 AND e.kind = 'completed' \
     AND i.queue = $2 LIMIT CAST($3 AS BIGINT)) t";
/// The settings of item `$1`'s queue (the columns `rows::queue_from` reads).
pub(crate) const QUEUE_OF: &str = const_join!(
    &[
        QUEUE_OF_COLS,
        " FROM items i JOIN queues q ON q.name = i.queue WHERE i.id = $1"
    ],
    ""
);
/// [`QUEUE_OF`]'s select list (of queue `q`).
pub(crate) const QUEUE_OF_COLS: &str = "SELECT q.name, q.lock_seconds, q.warn_seconds, \
     q.max_per_user, q.paused, q.take_order, q.park_grace_seconds, q.undo_seconds, \
     q.review_percent, q.review_new";
/// The reviewer's fence: their own lock under the token, on an item in review.
pub(crate) const FENCE_REVIEWER: &str =
    "lock_user = :me AND lock_token = :token AND state = 'review'";
/// Accept: the item is done (its maker stays `finished_by`, at their completion's time).
pub(crate) const SET_ACCEPT: &str =
    "state = 'done', lock_user = NULL, lock_time = NULL, lock_expires_at = NULL";
/// Reject back to the maker `:value`: open again (as a reopen), assigned to them (as
/// [`SET_ASSIGN`]: a new token, the clock starting when they open it).
pub(crate) const SET_REJECT_TO_MAKER: &str = "state = 'open', result = NULL, \
     finished_at = NULL, finished_by = NULL, lock_user = :value, \
     lock_time = 253402300799999, lock_expires_at = 253402300799999, \
     lock_token = lock_token + 1";
/// Reject to the pool (the maker is no longer known): open again, free.
pub(crate) const SET_REJECT_TO_POOL: &str = "state = 'open', result = NULL, \
     finished_at = NULL, finished_by = NULL, lock_user = NULL, lock_time = NULL, \
     lock_expires_at = NULL";
/// Save the holder's notes.
pub(crate) const SET_NOTES: &str = "notes = :value";
/// Save the item's params (a holder's field corrections): `:json` is `:value` read as
/// JSON (PostgreSQL casts it; SQLite's column checks it with `json_valid`).
pub(crate) const SET_PARAMS: &str = "params = :json";
/// Complete with an optional result.
pub const SET_COMPLETE: &str = "state = 'done', result = :value, lock_user = NULL, \
     lock_time = NULL, lock_expires_at = NULL, finished_at = :now, finished_by = :me";
/// Fail with a reason.
pub(crate) const SET_FAIL: &str = "state = 'failed', error = :value, lock_user = NULL, \
     lock_time = NULL, lock_expires_at = NULL, finished_at = :now, finished_by = :me";
/// Cancel with a reason.
pub(crate) const SET_CANCEL: &str = "state = 'cancelled', error = :value, lock_user = NULL, \
     lock_time = NULL, lock_expires_at = NULL, finished_at = :now, finished_by = :me";
/// Merge as a duplicate of item `:arg`: cancelled, naming it (`caseload merge`).
pub(crate) const SET_MERGE: &str = "state = 'cancelled', error = :value, lock_user = NULL, \
     lock_time = NULL, lock_expires_at = NULL, finished_at = :now, finished_by = :me, \
     duplicate_of = :arg";
/// Reopen a failed or cancelled item (a merged one is no longer a duplicate).
pub(crate) const SET_REQUEUE: &str = "state = 'open', error = NULL, result = NULL, \
     finished_at = NULL, finished_by = NULL, duplicate_of = NULL";
/// Give the lock to `:value`: a new acquisition, so a new token.
pub(crate) const SET_REASSIGN: &str = const_join!(
    &[
        "lock_user = :value, lock_time = :now, lock_token = lock_token + 1, \
         lock_expires_at = :now + ",
        LOCK_AGE
    ],
    ""
);

/// Assign to `:value`: a new acquisition (a new token) whose clock starts when the
/// assignee opens it; its lock time and expiry are [`crate::domain::lock::ASSIGNED`].
pub(crate) const SET_ASSIGN: &str = "lock_user = :value, lock_time = 253402300799999, \
     lock_expires_at = 253402300799999, lock_token = lock_token + 1";
/// Reopen a finished item (done, failed or cancelled).
/// A reopen also ends a reviewer's lock on an item in review: the item is open for anyone
/// at once, and the reviewer's verdict, fenced by that lock, finds it gone.
pub(crate) const SET_REOPEN: &str = "state = 'open', error = NULL, result = NULL, \
     finished_at = NULL, finished_by = NULL, duplicate_of = NULL, lock_user = NULL, \
     lock_time = NULL, lock_expires_at = NULL";
/// A supervisor's edit of one column of an open item (`:value` as text, cast to the
/// column's kind).
pub(crate) fn set_column(f: &Field) -> String {
    match f.kind {
        Kind::Int | Kind::Time | Kind::OptTime | Kind::OptId => {
            format!("{} = CAST(:value AS BIGINT)", f.name)
        }
        Kind::Json => format!("{} = :json", f.name),
        Kind::Text | Kind::OptText => format!("{} = :value", f.name),
    }
}

/// The rows the `holds` table must hold, recomputed from the events (the same words in
/// both dialects): the definition of `crate::domain::figures::records` in SQL, which
/// `caseload check` compares with the rows the trigger wrote. A hold counts for the queue
/// its item was in when the hold ended (what the trigger reads from the item row then): the
/// queue named by the item's last move before that event (`edit --queue`, `queue rename`:
/// both write a `noted` event), else the queue its first later move left, else its queue
/// (both moves found by window functions in the same pass over the events). Lateness is
/// measured against the due time when the hold ended (what the trigger read then): the
/// `from` of the first later event that moved it (a park's end, a supervisor's edit: `due:
/// {from, to}` in its detail), else the item's due time.
pub const EXPECTED_HOLDS: &str = "WITH marks AS ( \
    SELECT id, item_id, at, kind, \
        max(CASE WHEN kind IN ('locked', 'taken_over', 'reassigned', 'undone') THEN id END) \
            OVER w AS take_id, \
        max(CASE WHEN kind IN ('locked', 'taken_over', 'expired', 'unlocked', 'reassigned', \
            'released', 'skipped', 'completed', 'failed', 'cancelled', 'parked', 'undone', \
            'accepted', 'rejected') THEN id END) OVER w AS end_id, \
        max(CASE WHEN kind = 'noted' AND (detail ->> 'field' = 'queue' \
            OR detail ->> 'renamed_from' IS NOT NULL) THEN id END) OVER w AS moved_before, \
        min(CASE WHEN kind = 'noted' AND (detail ->> 'field' = 'queue' \
            OR detail ->> 'renamed_from' IS NOT NULL) THEN id END) OVER (PARTITION BY item_id \
            ORDER BY id ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS moved_after, \
        min(CASE WHEN kind IN ('woke', 'noted') AND detail ->> 'due' IS NOT NULL THEN id END) \
            OVER (PARTITION BY item_id ORDER BY id ROWS BETWEEN 1 FOLLOWING \
            AND UNBOUNDED FOLLOWING) AS due_moved_after \
    FROM events \
    WINDOW w AS (PARTITION BY item_id ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING \
        AND 1 PRECEDING) \
), base AS ( \
    SELECT m.at AS ended, m.id AS event_id, m.item_id, \
        coalesce(coalesce(b.detail ->> 'to', b.detail ->> 'queue'), \
            coalesce(a.detail ->> 'from', a.detail ->> 'renamed_from'), i.queue) AS queue, \
        CASE s.kind WHEN 'reassigned' THEN s.detail ->> 'to' ELSE s.actor END AS holder, \
        s.at AS started, m.kind AS how, i.created_at, \
        CASE WHEN d.id IS NULL THEN i.due_at \
            ELSE CAST(d.detail -> 'due' ->> 'from' AS BIGINT) END AS due_at \
    FROM marks m JOIN events s ON s.id = m.take_id JOIN items i ON i.id = m.item_id \
        LEFT JOIN events b ON b.id = m.moved_before LEFT JOIN events a ON a.id = m.moved_after \
        LEFT JOIN events d ON d.id = m.due_moved_after \
    WHERE m.kind IN ('released', 'skipped', 'completed', 'failed', 'expired', 'taken_over', \
        'unlocked', 'reassigned', 'cancelled', 'parked') \
    AND (m.end_id IS NULL OR m.end_id <= m.take_id) \
), kept AS ( \
    SELECT * FROM base WHERE holder IS NOT NULL \
), rounds AS ( \
    SELECT k.*, \
        count(CASE WHEN how IN ('completed', 'failed') THEN 1 END) OVER (PARTITION BY \
            item_id ORDER BY event_id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) \
            AS round, \
        min(started) OVER (PARTITION BY item_id ORDER BY event_id ROWS BETWEEN UNBOUNDED \
            PRECEDING AND CURRENT ROW) AS first_start \
    FROM kept k \
) \
SELECT ended, event_id, item_id, queue, holder, started, how, \
    CASE WHEN how IN ('completed', 'failed') \
        THEN sum(ended - started) OVER (PARTITION BY item_id, round) END AS handle_ms, \
    CASE WHEN how IN ('completed', 'failed') \
        THEN sum(ended - started) OVER (PARTITION BY item_id, round, holder) END AS own_ms, \
    CASE WHEN how IN ('completed', 'failed') THEN first_start - created_at END AS wait_ms, \
    CASE WHEN how IN ('completed', 'failed') THEN ended - created_at END AS cycle_ms, \
    CASE WHEN how IN ('completed', 'failed') THEN ended - due_at END AS late_ms \
FROM rounds";

/// Rebuilds the figures' tables from the events, in one transaction: empties them, then
/// inserts the holds `check` expects, whose triggers fill the day summary and the queues'
/// totals as they do for each new hold. The last statement's row count is the number of
/// holds.
pub fn rebuild_figures() -> [String; 4] {
    [
        "DELETE FROM figure_days".to_string(),
        "DELETE FROM queue_totals".to_string(),
        "DELETE FROM holds".to_string(),
        format!("INSERT INTO holds ({HOLDS_COLS}) SELECT {HOLDS_COLS} FROM ({EXPECTED_HOLDS}) x"),
    ]
}

/// The columns of a `holds` row, in the order of [`EXPECTED_HOLDS`].
pub const HOLDS_COLS: &str = "ended, event_id, item_id, queue, holder, started, how, \
     handle_ms, own_ms, wait_ms, cycle_ms, late_ms";

/// Which items `export` writes: `$1` state, `$2` queue, `$3` created at or after (each
/// NULL for any). The same text on both backends (SQLite numbers `$N` parameters in order
/// of first use).
pub(crate) const EXPORT_WHERE: &str = "(CAST($1 AS TEXT) IS NULL OR state = $1) \
     AND (CAST($2 AS TEXT) IS NULL OR queue = $2) \
     AND (CAST($3 AS BIGINT) IS NULL OR created_at >= $3)";

/// The `created` event read from an item row (`i`), for items that have no stored one
/// (every item since schema 4 / PostgreSQL 3): id 0, so it sorts first. `object` is the
/// dialect's JSON object function, `text` how its result reads as text.
fn created_from_row(object: &str, text: &str) -> String {
    format!(
        "SELECT 0, i.id, i.created_at, i.created_by, coalesce(i.created_os, i.created_by), \
         'created', {object}('request_id', i.request_id){text} FROM items i"
    )
}

const NO_CREATED_EVENT: &str =
    "NOT EXISTS (SELECT 1 FROM events c WHERE c.item_id = i.id AND c.kind = 'created')";

/// The items `Reads::sla_items` weighs (`$1`: since when a late finish counts): queue,
/// created, due, state, finished.
pub(crate) const SLA_ITEMS: &str = "SELECT queue, created_at, due_at, state, finished_at \
     FROM items WHERE due_at IS NOT NULL AND queue IN (SELECT queue FROM queue_sla) \
     AND (state = 'open' OR (state <> 'cancelled' AND due_at >= $1 AND finished_at > due_at))";

/// An item's history (`$1` its id): its stored events, after a `created` event from the
/// row when none is stored. `detail` is how an event's detail reads as text.
pub(crate) fn history(detail: &str, object: &str, text: &str) -> String {
    format!(
        "SELECT e.id, e.item_id, e.at, e.actor, e.os_user, e.kind, {detail} FROM events e \
         WHERE e.item_id = $1 \
         UNION ALL {} WHERE i.id = $1 AND {NO_CREATED_EVENT} ORDER BY 1",
        created_from_row(object, text)
    )
}

/// What `actor` (`$1`) did since `$2`, by time: their stored events, and a `created`
/// event from the row of each item they created that has none stored (served by the
/// `items_created_by` index).
pub(crate) fn events_by(detail: &str, object: &str, text: &str) -> String {
    format!(
        "SELECT e.id, e.item_id, e.at, e.actor, e.os_user, e.kind, {detail} FROM events e \
         WHERE e.actor = $1 AND e.at >= $2 \
         UNION ALL {} WHERE i.created_by = $1 AND i.created_at >= $2 AND {NO_CREATED_EVENT} \
         ORDER BY 3, 1, 2",
        created_from_row(object, text)
    )
}

/// The comments of the items [`EXPORT_WHERE`]'s first two parameters select, `$3`
/// bounding the comments' time, oldest first (`caseload export --comments`).
pub(crate) const EXPORT_COMMENTS: &str = "SELECT c.id, c.item_id, c.at, c.author, \
     c.os_user, c.text FROM comments c JOIN items i ON i.id = c.item_id \
     WHERE (CAST($1 AS TEXT) IS NULL OR i.state = $1) \
     AND (CAST($2 AS TEXT) IS NULL OR i.queue = $2) \
     AND (CAST($3 AS BIGINT) IS NULL OR c.at >= $3) ORDER BY c.at, c.id";

/// The audit trail of the items [`EXPORT_WHERE`]'s parameters select, `$3` bounding the
/// events' time, by time: the stored events, and a `created` event (id 0) read from the
/// row of each item that has none stored. `detail` is how an event's detail reads as
/// text, `object` the dialect's JSON object function.
pub(crate) fn export_events(detail: &str, object: &str, text: &str) -> String {
    let items = "(CAST($1 AS TEXT) IS NULL OR i.state = $1) \
                 AND (CAST($2 AS TEXT) IS NULL OR i.queue = $2)";
    format!(
        "SELECT e.id, e.item_id, e.at, e.actor, e.os_user, e.kind, {detail} \
         FROM events e JOIN items i ON i.id = e.item_id \
         WHERE {items} AND (CAST($3 AS BIGINT) IS NULL OR e.at >= $3) \
         UNION ALL {} \
         WHERE {items} AND (CAST($3 AS BIGINT) IS NULL OR i.created_at >= $3) \
         AND {NO_CREATED_EVENT} ORDER BY 3, 2, 1",
        created_from_row(object, text)
    )
}

/// The event feed's page: stored events with `$1 < id <= $2`, by id, at most `$3`, each
/// with its item's queue and title. `detail` is how an event's detail reads as text.
pub(crate) fn feed(detail: &str) -> String {
    format!(
        "SELECT e.id, e.item_id, e.at, e.actor, e.os_user, e.kind, {detail}, i.queue, i.title \
         FROM events e JOIN items i ON i.id = e.item_id \
         WHERE e.id > $1 AND e.id <= $2 ORDER BY e.id LIMIT CAST($3 AS BIGINT)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_select_lists_are_the_column_list_joined() {
        assert_eq!(ITEM_COLS, Item::COLUMNS.join(", "));
        let sqlite = crate::store::sqlite::sql::CLAIM;
        assert!(
            sqlite.ends_with(&format!("RETURNING {ITEM_COLS}")),
            "{sqlite}"
        );
        let pg = crate::store::postgres::sql::CLAIM;
        assert!(
            pg.contains(&format!("RETURNING {ITEM_COLS}), e AS")),
            "{pg}"
        );
    }

    #[test]
    fn an_assignment_writes_the_domain_s_lock_time() {
        let t = crate::domain::lock::ASSIGNED.to_string();
        assert_eq!(SET_ASSIGN.matches(t.as_str()).count(), 2);
        assert_eq!(SET_RENEW.matches(t.as_str()).count(), 1);
        assert_eq!(SET_REJECT_TO_MAKER.matches(t.as_str()).count(), 2);
    }

    /// The kinds as the schemas list them: `'a', 'b', …` somewhere in the text.
    fn lists_all(schema: &str, kinds: &[&str]) -> bool {
        let squeezed = schema.split_whitespace().collect::<Vec<_>>().join(" ");
        let all: Vec<String> = kinds.iter().map(|k| format!("'{k}'")).collect();
        squeezed.contains(&all.join(", "))
    }

    #[test]
    fn both_schemas_know_every_event_and_audit_kind() {
        let events: Vec<&str> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
        let audit: Vec<&str> = crate::domain::AuditKind::ALL
            .iter()
            .map(|k| k.as_str())
            .collect();
        // The schemas, and the latest migration that changed each list.
        let schemas = [
            include_str!("../../schema.sql"),
            include_str!("../../schema.pg.sql"),
        ];
        for schema in schemas {
            assert!(lists_all(schema, &events), "event kinds in {schema:.60}");
            assert!(lists_all(schema, &audit), "audit kinds in {schema:.60}");
        }
        for step in [
            include_str!("sqlite/migrations/0020_review.sql"),
            include_str!("postgres/migrations/0020_review.sql"),
        ] {
            assert!(lists_all(step, &events), "event kinds in {step:.60}");
        }
        for step in [
            include_str!("sqlite/migrations/0023_teams.sql"),
            include_str!("postgres/migrations/0024_teams.sql"),
        ] {
            assert!(lists_all(step, &audit), "audit kinds in {step:.60}");
        }
    }

    #[test]
    fn kind_sets_render_as_literals() {
        assert_eq!(
            kinds_sql(EventKind::TAKES_LOCK),
            "'locked', 'taken_over', 'reassigned', 'undone'"
        );
    }
}
