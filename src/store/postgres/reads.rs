//! The PostgreSQL store's reads: items, windows of lists, counts, history, lost locks and
//! export. Each runs on the main connection, reconnecting once when it was lost.

use postgres::Row;
use postgres::types::ToSql;

use super::open::{Conn, TxError, TxResult};
use super::sql::ITEM_COLS;
use crate::domain::fields::{self, Kind};
use crate::domain::queue_fields::FieldDef;
use crate::domain::search::{Search, unfolded_pattern};
use crate::domain::sla::Sla;
use crate::domain::texts::CannedText;
use crate::domain::{
    Access, AuditEntry, Comment, Event, EventKind, Item, Millis, QueueSettings, RealIdentity, Role,
    TakeOrder, Unreadable, UserInfo,
};
use crate::store::error::{Result, StoreError};
use crate::store::list::{
    Dialect, ListSql, OpenOrder, Param, Window, check_qualifiers, contains_pattern, count_limit,
    kept_count, list_sql,
};
use crate::store::rows::{self, Cells};
use crate::store::sql::{QUEUE_OF_COLS, const_join, kinds_sql};
use crate::store::{ListFilter, LostLock};

/// The cells of one PostgreSQL row. The server checks every text against the database
/// encoding, so only a value of an unexpected type can be unreadable here.
pub(super) struct PgCells<'r> {
    row: &'r Row,
    /// The row's column that is the reader's column 0.
    from: usize,
    bad: Vec<Unreadable>,
}

impl<'r> PgCells<'r> {
    pub(super) fn new(row: &'r Row) -> Self {
        PgCells::at(row, 0)
    }

    /// The cells of `row` from its column `from` on (a row that carries two records).
    pub(super) fn at(row: &'r Row, from: usize) -> Self {
        PgCells {
            row,
            from,
            bad: Vec::new(),
        }
    }

    fn get<'a, T: postgres::types::FromSql<'a>>(&'a self, i: usize) -> Result<T> {
        (self.row.try_get(self.from + i)).map_err(|e| super::open::map_err(&e))
    }
}

/// A text cell, or a `json` one as its text (`json` travels as its text, exactly as
/// stored), so the item's select list is the same on both backends.
struct Text(String);

impl<'a> postgres::types::FromSql<'a> for Text {
    fn from_sql(
        ty: &postgres::types::Type,
        raw: &'a [u8],
    ) -> std::result::Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        if *ty == postgres::types::Type::JSON {
            return Ok(Text(std::str::from_utf8(raw)?.to_owned()));
        }
        String::from_sql(ty, raw).map(Text)
    }

    fn accepts(ty: &postgres::types::Type) -> bool {
        *ty == postgres::types::Type::JSON || <String as postgres::types::FromSql>::accepts(ty)
    }
}

impl Cells for PgCells<'_> {
    fn opt_text(&mut self, i: usize, _column: &'static str) -> Result<Option<String>> {
        Ok(self.get::<Option<Text>>(i)?.map(|t| t.0))
    }

    fn opt_int(&mut self, i: usize, _column: &'static str) -> Result<Option<i64>> {
        self.get(i)
    }

    fn flag(&mut self, i: usize, _column: &'static str) -> Result<bool> {
        self.get(i)
    }

    fn mark(&mut self, column: &'static str, problem: &'static str) {
        self.bad.push(Unreadable { column, problem });
    }

    fn marks(&self) -> &[Unreadable] {
        &self.bad
    }
}

/// Reads every row with `read`.
pub(super) fn all<T>(rows: Vec<Row>, read: fn(&mut PgCells) -> Result<T>) -> TxResult<Vec<T>> {
    rows.iter()
        .map(|r| read(&mut PgCells::new(r)))
        .collect::<Result<_>>()
        .map_err(TxError::Store)
}

pub(super) fn load_item(c: &mut Conn, id: i64) -> TxResult<Option<Item>> {
    let rows = c.query(
        &format!("SELECT {ITEM_COLS} FROM items WHERE id = $1"),
        &[&id],
    )?;
    Ok(all(rows, |c| rows::item_from(c))?.pop())
}

pub(super) fn load_queue(c: &mut Conn, name: &str) -> TxResult<Option<QueueSettings>> {
    let rows = c.query(
        "SELECT name, lock_seconds, warn_seconds, max_per_user, paused, take_order, \
         park_grace_seconds, undo_seconds, review_percent, review_new FROM queues \
         WHERE name = $1",
        &[&name],
    )?;
    Ok(all(rows, |c| rows::queue_from(c))?.pop())
}

pub(super) fn queues(c: &mut Conn) -> TxResult<Vec<QueueSettings>> {
    let rows = c.query(
        "SELECT name, lock_seconds, warn_seconds, max_per_user, paused, take_order, \
         park_grace_seconds, undo_seconds, review_percent, review_new FROM queues \
         ORDER BY name COLLATE \"C\"",
        &[],
    )?;
    all(rows, |c| rows::queue_from(c))
}

/// Field definitions of `queue` (of every queue when `None`), by queue and in order.
pub(super) fn fields(c: &mut Conn, queue: Option<&str>) -> TxResult<Vec<(String, FieldDef)>> {
    let rows = c.query(
        "SELECT queue, name, spec::text FROM queue_fields \
         WHERE $1::text IS NULL OR queue = $1 ORDER BY queue COLLATE \"C\", position, name",
        &[&queue],
    )?;
    all(rows, |c| rows::field_from(c))
}

/// The SLA of `queue` (of every queue with one when `None`), by queue.
pub(super) fn slas(c: &mut Conn, queue: Option<&str>) -> TxResult<Vec<Sla>> {
    let rows = c.query(
        "SELECT queue, sla_ms, hours, tz, holidays FROM queue_sla \
         WHERE $1::text IS NULL OR queue = $1 ORDER BY queue COLLATE \"C\"",
        &[&queue],
    )?;
    all(rows, |c| rows::sla_from(c))
}

/// Ready-made texts of `queue` (of every queue when `None`), by queue and code.
pub(super) fn texts(c: &mut Conn, queue: Option<&str>) -> TxResult<Vec<CannedText>> {
    let rows = c.query(
        "SELECT queue, code, purpose, text FROM queue_texts \
         WHERE $1::text IS NULL OR queue = $1 ORDER BY queue COLLATE \"C\", code COLLATE \"C\"",
        &[&queue],
    )?;
    all(rows, |c| rows::text_from(c))
}

/// Field definitions of item `id`'s queue, in order.
pub(super) fn item_fields(c: &mut Conn, id: i64) -> TxResult<Vec<FieldDef>> {
    let rows = c.query(
        "SELECT f.queue, f.name, f.spec::text FROM items i \
         JOIN queue_fields f ON f.queue = i.queue WHERE i.id = $1 ORDER BY f.position, f.name",
        &[&id],
    )?;
    Ok(all(rows, |c| rows::field_from(c))?
        .into_iter()
        .map(|(_, d)| d)
        .collect())
}

/// What a complete of item `id` is judged and routed by, in one round trip: the fields of
/// its queue in order, and the queue's settings (none: no such item).
pub(super) fn finishing(c: &mut Conn, id: i64) -> TxResult<(Vec<FieldDef>, Option<QueueSettings>)> {
    const SQL: &str = const_join!(
        &[
            QUEUE_OF_COLS,
            ", f.queue, f.name, f.spec::text FROM items i JOIN queues q ON q.name = i.queue \
             LEFT JOIN queue_fields f ON f.queue = i.queue WHERE i.id = $1 \
             ORDER BY f.position, f.name"
        ],
        ""
    );
    let rows = c.query(SQL, &[&id])?;
    let Some(first) = rows.first() else {
        return Ok((vec![], None));
    };
    let queue = rows::queue_from(&mut PgCells::new(first))?;
    let mut defs = Vec::new();
    for r in rows
        .iter()
        .filter(|r| r.get::<_, Option<String>>(11).is_some())
    {
        defs.push(rows::field_from(&mut PgCells::at(r, 10))?.1);
    }
    Ok((defs, Some(queue)))
}

/// A queue's settings, or `UnknownQueue` naming the known ones.
pub(super) fn known_queue(c: &mut Conn, name: &str) -> TxResult<QueueSettings> {
    match load_queue(c, name)? {
        Some(q) => Ok(q),
        None => Err(StoreError::UnknownQueue {
            name: name.to_string(),
            known: queues(c)?.into_iter().map(|q| q.name).collect(),
        }
        .into()),
    }
}

pub(super) fn role_of(c: &mut Conn, user: &str) -> TxResult<Role> {
    let role: Option<String> = c
        .query_opt("SELECT role FROM users WHERE name = $1", &[&user])?
        .map(|r| r.get(0));
    Ok(role.as_deref().and_then(Role::parse).unwrap_or(Role::Staff))
}

pub(super) fn history(c: &mut Conn, id: i64) -> TxResult<Vec<Event>> {
    load_item(c, id)?.ok_or(StoreError::NotFound(id))?;
    let rows = c.query(
        &crate::store::sql::history("e.detail::text", "json_build_object", "::text"),
        &[&id],
    )?;
    all(rows, |c| rows::event_from(c))
}

/// An item's comments, oldest first.
pub(super) fn comments(c: &mut Conn, id: i64) -> TxResult<Vec<Comment>> {
    load_item(c, id)?.ok_or(StoreError::NotFound(id))?;
    let rows = c.query(
        "SELECT id, item_id, at, author, os_user, text FROM comments WHERE item_id = $1 \
         ORDER BY id",
        &[&id],
    )?;
    Ok(rows.iter().map(comment_from).collect())
}

/// A comment from its row (id, item_id, at, author, os_user, text).
pub(super) fn comment_from(r: &postgres::Row) -> Comment {
    Comment {
        id: r.get(0),
        item_id: r.get(1),
        at: r.get(2),
        author: r.get(3),
        os_user: r.get(4),
        text: r.get(5),
    }
}

/// Everyone `assign` and `reassign` accept (`sql::USERS_AND_ACTORS`), by name.
pub(super) fn users(c: &mut Conn) -> TxResult<Vec<UserInfo>> {
    let rows = c.query(crate::store::sql::USERS_AND_ACTORS, &[])?;
    let users = rows
        .iter()
        .map(|r| UserInfo {
            name: r.get(0),
            role: r
                .get::<_, Option<&str>>(1)
                .and_then(Role::parse)
                .unwrap_or(Role::Staff),
            login: r.get(3),
            last_seen: r.get(2),
            access: Access::default(),
        })
        .collect();
    Ok(crate::store::with_access(users, accesses(c)?))
}

const DIALECT: Dialect = Dialect {
    placeholder: |n| format!("${n}"),
    search: search_condition,
    field: field_condition,
};

/// [`DIALECT`] where the schema keeps the folded text for the trigram index.
const INDEXED: Dialect = Dialect {
    search: super::search::condition,
    ..DIALECT
};

/// Whether the filter searches through the trigram index, and the dialect that does.
fn dialect(c: &mut Conn, filter: &ListFilter) -> TxResult<(bool, &'static Dialect)> {
    if filter.text.is_none() || !super::search::indexed(c)? {
        return Ok((false, &DIALECT));
    }
    Ok((true, &INDEXED))
}

/// A qualified word's condition (`vat:de123`): the row's value of the field, folded,
/// contains the word (a number or a list as its JSON text; no value, nothing).
fn field_condition(q: &mut ListSql, name: &str, word: &str) -> String {
    let n = q.push(Param::Text(name.to_string()));
    let w = q.push(Param::Text(word.to_string()));
    format!("strpos(caseload_fold(coalesce(params ->> {n}::text, '')), {w}::text) > 0")
}

/// A search on PostgreSQL: the row's text folded by `caseload_fold` (the same table as
/// `domain::search::fold`) must contain every folded word. Folding costs ~0.25 ms per
/// KiB of accented text, so rows are first found by regular expressions over the text as
/// written ([`unfolded_pattern`]: a class of what folds to each character), which pass
/// every row the fold would (and few others); the fold decides on those (`CASE` keeps
/// that order). Not in an old `SQL_ASCII` database, whose regular expressions see bytes.
pub(super) fn search_condition(q: &mut ListSql, s: &Search) -> String {
    let text = searched_text();
    let words: Vec<String> = s
        .words()
        .iter()
        .map(|w| format!("{}::text", q.push(Param::Text(contains_pattern(w)))))
        .collect();
    let found: Vec<String> = first_pass(s.words())
        .iter()
        .map(|w| format!("{}::text", q.push(Param::Text(unfolded_pattern(w)))))
        .collect();
    format!(
        "CASE WHEN getdatabaseencoding() <> 'UTF8' OR {text} ~ ALL (ARRAY[{}]) \
         THEN caseload_fold({text}) LIKE ALL (ARRAY[{}]) ELSE false END",
        found.join(", "),
        words.join(", ")
    )
}

/// A row's text search looks in: the field table's searched columns, one line each
/// (JSON as its text).
fn searched_text() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let cols: Vec<String> = fields::searched()
            .map(|f| match f.kind {
                Kind::Json => format!("{}::text", f.name),
                _ => f.name.to_string(),
            })
            .collect();
        format!("concat_ws(chr(10), {})", cols.join(", "))
    })
}

/// What the first pass looks for: the longest (most telling) two distinct words, each cut
/// to its first characters. Any part of a word is found wherever the word is, so the pass
/// still keeps every row the fold would; the bounds keep PostgreSQL's regular expressions
/// small and within its cache of 32 compiled ones (a pasted sentence of 33 words
/// recompiled each for every row and hit the statement timeout; 30,000 distinct CJK
/// characters in one word ran the regular expression engine out of memory).
fn first_pass(words: &[String]) -> Vec<String> {
    const WORDS: usize = 2;
    const CHARS: usize = 32;
    let mut cut: Vec<String> = words
        .iter()
        .map(|w| w.chars().take(CHARS).collect())
        .collect();
    cut.sort_by(|a: &String, b: &String| {
        b.chars()
            .count()
            .cmp(&a.chars().count())
            .then_with(|| a.cmp(b))
    });
    cut.dedup();
    cut.truncate(WORDS);
    cut
}

/// The parameters as the `postgres` crate takes them.
pub(super) fn params(ps: &[Param]) -> Vec<Box<dyn ToSql + Sync>> {
    ps.iter()
        .map(|p| -> Box<dyn ToSql + Sync> {
            match p {
                Param::Int(n) => Box::new(*n),
                Param::Text(t) => Box::new(t.clone()),
                Param::Blob(b) => Box::new(b.clone()),
            }
        })
        .collect()
}

pub(super) fn refs(ps: &[Box<dyn ToSql + Sync>]) -> Vec<&(dyn ToSql + Sync)> {
    ps.iter()
        .map(|b| b.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

/// One window of a list, read at `now` (the total, when the window needs it, is given).
pub(super) fn list(
    c: &mut Conn,
    filter: &ListFilter,
    window: Window,
    now: Millis,
) -> TxResult<Vec<Item>> {
    if let Some(q) = &filter.queue {
        known_queue(c, q)?;
    }
    check_qualifiers(filter, |q| fields(c, q))?;
    let due: bool = c
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM queues WHERE take_order = 'due' \
             AND ($1::text IS NULL OR name = $1))",
            &[&filter.queue],
        )?
        .get(0);
    let orders = if due {
        [TakeOrder::Due]
    } else {
        [TakeOrder::Priority]
    };
    let open_order = OpenOrder::of(filter.queue.as_deref(), &orders);
    let (indexed, d) = dialect(c, filter)?;
    let mut q: ListSql = list_sql(filter, now, d, open_order);
    let (order, limit, offset) = q.window(window);
    if let (true, Some((_, cond))) = (indexed, &q.search) {
        let rows = super::search::list_first(c, filter, &q, cond, window, &order, &limit, &offset)?;
        let mut items = all(rows, |c| rows::item_from(c))?;
        if window.reversed {
            items.reverse();
        }
        return Ok(items);
    }
    let sql = format!(
        "SELECT {ITEM_COLS} FROM items {} ORDER BY {order} LIMIT {limit} OFFSET {offset}",
        q.where_
    );
    let ps = params(&q.params);
    let mut items = all(c.query(&sql, &refs(&ps))?, |c| rows::item_from(c))?;
    if window.reversed {
        items.reverse();
    }
    Ok(items)
}

pub(super) fn count(c: &mut Conn, filter: &ListFilter) -> TxResult<u64> {
    if let Some(state) = kept_count(filter) {
        // Kept by the trigger: no scan.
        let n: i64 = c
            .query_one(
                "SELECT coalesce(sum(n), 0)::bigint FROM item_counts \
                 WHERE ($1::text IS NULL OR state = $1) AND ($2::text IS NULL OR queue = $2)",
                &[&state, &filter.queue],
            )?
            .get(0);
        return Ok(n.max(0) as u64);
    }
    check_qualifiers(filter, |q| fields(c, q))?;
    let now = c.now()?;
    let (indexed, d) = dialect(c, filter)?;
    let q = list_sql(filter, now, d, OpenOrder::Priority);
    if let (true, Some(cap), Some((_, cond))) = (indexed, count_limit(filter), &q.search) {
        if let Some(n) = super::search::known_count(c, filter, cap)? {
            return Ok(n);
        }
        return super::search::count(c, &q, cond, cap);
    }
    let ps = params(&q.params);
    let sql = match count_limit(filter) {
        Some(cap) => format!(
            "SELECT count(*) FROM (SELECT 1 FROM items {} LIMIT {cap}) AS hits",
            q.where_
        ),
        None => format!("SELECT count(*) FROM items {}", q.where_),
    };
    let n: i64 = c.query_one(&sql, &refs(&ps))?.get(0);
    Ok(n as u64)
}

pub(super) fn takeable(c: &mut Conn, me: &str, queue: Option<&str>, cap: u64) -> TxResult<u64> {
    let now = c.now()?;
    let sql = crate::store::sql::COUNT_TAKEABLE
        .replace(":queue", "$1::text")
        .replace(":now", "$2::bigint")
        .replace(":cap", "$3::bigint")
        .replace(":me", "$4::text");
    let n: i64 = c
        .query_one(&sql, &[&queue, &now, &(cap as i64), &me])?
        .get(0);
    Ok(n.max(0) as u64)
}

pub(super) fn last_item_id(c: &mut Conn) -> TxResult<i64> {
    Ok(
        c.query_one("SELECT coalesce(max(id), 0)::bigint FROM items", &[])?
            .get(0),
    )
}

pub(super) fn item_keys(
    c: &mut Conn,
    ids: &[i64],
    request_ids: &[&str],
) -> TxResult<Vec<(i64, Option<String>)>> {
    let rows = c.query(
        "SELECT id, request_id FROM items WHERE id = ANY($1) OR request_id = ANY($2)",
        &[&ids, &request_ids],
    )?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

pub(super) fn events_by(c: &mut Conn, actor: &str, since: Millis) -> TxResult<Vec<Event>> {
    let rows = c.query(
        &crate::store::sql::events_by("e.detail::text", "json_build_object", "::text"),
        &[&actor, &since],
    )?;
    all(rows, |c| rows::event_from(c))
}

pub(super) fn lost_locks(c: &mut Conn, user: &str, since: Millis) -> TxResult<Vec<LostLock>> {
    let rows = c.query(
        &format!(
            "SELECT e.id, e.item_id, e.at, e.actor, e.os_user, e.kind, e.detail::text, \
             i.title, i.lock_user FROM events e JOIN items i ON i.id = e.item_id \
             WHERE e.at >= $2 AND e.kind IN ({}) AND e.detail->>'from' = $1 \
             AND e.actor <> $1 ORDER BY e.at DESC, e.id DESC",
            kinds_sql(EventKind::ENDS_ANOTHERS_LOCK)
        ),
        &[&user, &since],
    )?;
    all(rows, |c| rows::lost_lock_from(c))
}

/// The login (database role) a user name is bound to, if any.
/// What a user may do and where.
pub(super) fn access(c: &mut Conn, user: &str) -> TxResult<Access> {
    // ACCESS_ROW with the person's queues (ACCESS_QUEUES) as two arrays: one round trip.
    const SQL: &str = const_join!(
        &[
            crate::store::sql::ACCESS_COLS,
            ", ARRAY(SELECT kind FROM user_queues q WHERE q.name = $1 ORDER BY kind, queue), \
             ARRAY(SELECT queue FROM user_queues q WHERE q.name = $1 ORDER BY kind, queue) \
             FROM users WHERE name = $1"
        ],
        ""
    );
    let Some(row) = c.query_opt(SQL, &[&user])? else {
        return Ok(Access::default());
    };
    let role: Option<String> = row.get(0);
    let left = (row.get::<_, Option<i64>>(3)).map(|at| {
        let why: Option<String> = row.get(4);
        (at, why.unwrap_or_default())
    });
    let limited = (row.get::<_, i32>(1) != 0, row.get::<_, i32>(2) != 0);
    let (kinds, queues): (Vec<String>, Vec<String>) = (row.get(5), row.get(6));
    let rows: Vec<(String, String)> = kinds.into_iter().zip(queues).collect();
    Ok(Access::from_rows(role.as_deref(), limited, left, &rows))
}

/// Every limited or departed person's access, by name (the others may do anything their
/// role allows).
pub(super) fn accesses(c: &mut Conn) -> TxResult<Vec<(String, Access)>> {
    let queues: Vec<(String, String, String)> = c
        .query(crate::store::sql::ACCESS_QUEUES_ALL, &[])?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let rows = c.query(crate::store::sql::ACCESS_ALL, &[])?;
    Ok(rows
        .iter()
        .map(|r| {
            let name: String = r.get(0);
            let left = (r.get::<_, Option<i64>>(3)).map(|at| {
                let why: Option<String> = r.get(4);
                (at, why.unwrap_or_default())
            });
            let limited = (r.get::<_, i32>(1) != 0, r.get::<_, i32>(2) != 0);
            let mine = crate::store::list_of(&queues, &name);
            (name.clone(), Access::from_rows(None, limited, left, &mine))
        })
        .collect())
}

pub(super) fn login_of(c: &mut Conn, user: &str) -> TxResult<Option<String>> {
    Ok(
        c.query_opt("SELECT login FROM users WHERE name = $1", &[&user])?
            .and_then(|r| r.get(0)),
    )
}

/// The session's database role and whether it could change the tables directly anyway
/// (a superuser or a member of the tables' owner; see `caseload_privileged()`).
pub(super) fn real_identity(c: &mut Conn) -> TxResult<RealIdentity> {
    let row = c.query_one("SELECT session_user::text, caseload_privileged()", &[])?;
    Ok(RealIdentity {
        login: row.get(0),
        privileged: row.get(1),
    })
}

/// Audit records since `since`, oldest first; with `who`, those by or about that user.
pub(super) fn audit(c: &mut Conn, who: Option<&str>, since: Millis) -> TxResult<Vec<AuditEntry>> {
    let rows = c.query(
        "SELECT id, at, actor, real_user, kind, subject, old_value::text, new_value::text \
         FROM audit WHERE at >= $1 AND ($2::text IS NULL OR actor = $2 OR \
         (subject = $2 AND kind IN ('role', 'login'))) ORDER BY at, id",
        &[&since, &who],
    )?;
    all(rows, |c| rows::audit_from(c))
}

#[cfg(test)]
mod tests {
    use super::first_pass;

    #[test]
    fn the_first_pass_takes_the_longest_two_distinct_words_cut_short() {
        let words: Vec<String> = ["to", "parcel", "the", "delivery", "parcel", "a", "business"]
            .iter()
            .map(|w| w.to_string())
            .collect();
        assert_eq!(first_pass(&words), ["business", "delivery"]);
        let long = "日".repeat(40_000);
        assert_eq!(first_pass(&[long]), ["日".repeat(32)]);
        assert!(first_pass(&[]).is_empty());
    }
}
