//! A list query — which items, in which order, which window of them — built once for
//! both backends. Placeholders are numbered (`?1` on SQLite, `$1` on PostgreSQL); the
//! window past the middle of a long list is read from the far end.

use super::{ListFilter, StateFilter, StoreError};
use crate::domain::queue_fields::FieldDef;
use crate::domain::search::{COUNT_CAP, Search};
use crate::domain::{Millis, TakeOrder};
use crate::store::sql::{MAY_REVIEW, ORDER_DUE, ORDER_MIXED, ORDER_PRIORITY, WORKED_ON};

/// A query parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Param {
    Int(i64),
    Text(String),
    /// Bytes (SQLite's search passes a candidate set so).
    Blob(Vec<u8>),
}

/// The SQL words in which the two backends differ here.
pub(crate) struct Dialect {
    /// The `n`th placeholder (from 1).
    pub placeholder: fn(usize) -> String,
    /// The condition that a row matches a search (the row's text scanned), with its
    /// parameters pushed onto the query.
    pub search: fn(&mut ListSql, &Search) -> String,
    /// The condition that a row's value of field `name` (in `params`), folded, contains
    /// the folded `word` (a qualified word, `vat:de123`).
    pub field: fn(&mut ListSql, name: &str, word: &str) -> String,
}

/// A list query's WHERE clause (empty when it has none), ORDER BY and parameters.
pub(crate) struct ListSql {
    pub where_: String,
    pub order: &'static str,
    pub params: Vec<Param>,
    /// The conditions other than the search (for a backend that finds the search's rows
    /// another way).
    pub base: Vec<String>,
    /// The search, and its scanning condition (part of `where_`).
    pub search: Option<(Search, String)>,
    /// A query of ids among which are all the rows the search matches (a backend's
    /// index finds them; set by the dialect's `search`, with the id a search names added).
    pub candidates: Option<String>,
    placeholder: fn(usize) -> String,
}

impl ListSql {
    /// Adds a parameter; returns its placeholder.
    pub(crate) fn push(&mut self, p: Param) -> String {
        self.params.push(p);
        (self.placeholder)(self.params.len())
    }

    /// The ORDER BY that reads `w` (reversed past the middle) and the placeholders of its
    /// LIMIT and OFFSET.
    pub(crate) fn window(&mut self, w: Window) -> (String, String, String) {
        let order = if w.reversed {
            reverse_order(self.order)
        } else {
            self.order.to_string()
        };
        let limit = self.push(Param::Int(w.limit as i64));
        let offset = self.push(Param::Int(w.offset as i64));
        (order, limit, offset)
    }
}

/// How a list of open items is ordered: the take order of its queue, or of all queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpenOrder {
    /// Priority, then age (one queue ordered so, or all queues when none is by due time).
    Priority,
    /// Due time, then priority, then age (one queue ordered so).
    Due,
    /// All queues when some order by due time: their due items first (`ORDER_MIXED`).
    Mixed,
}

impl OpenOrder {
    /// The order of a list over `queue` (all when `None`) whose queues' orders are
    /// `orders` (the one queue's, or every queue's).
    pub(crate) fn of(queue: Option<&str>, orders: &[TakeOrder]) -> OpenOrder {
        let due = orders.contains(&TakeOrder::Due);
        match (queue.is_some(), due) {
            (_, false) => OpenOrder::Priority,
            (true, true) => OpenOrder::Due,
            (false, true) => OpenOrder::Mixed,
        }
    }
}

/// Builds the query of a list filter at `now`; open items in `open_order`.
pub(crate) fn list_sql(f: &ListFilter, now: Millis, d: &Dialect, open_order: OpenOrder) -> ListSql {
    let mut q = ListSql {
        where_: String::new(),
        order: "",
        params: Vec::new(),
        base: Vec::new(),
        search: None,
        candidates: None,
        placeholder: d.placeholder,
    };
    let mut conds: Vec<String> = Vec::new();
    q.order = match f.state {
        StateFilter::Open => {
            conds.push("state = 'open'".into());
            match open_order {
                OpenOrder::Priority => ORDER_PRIORITY,
                OpenOrder::Due => ORDER_DUE,
                OpenOrder::Mixed => ORDER_MIXED,
            }
        }
        StateFilter::Locked => {
            conds.push("lock_user IS NOT NULL".into());
            "lock_time, id"
        }
        StateFilter::Expired => {
            let p = q.push(Param::Int(now));
            conds.push(format!("lock_user IS NOT NULL AND lock_expires_at <= {p}"));
            "lock_expires_at, id"
        }
        StateFilter::Parked => {
            conds.push("state = 'parked'".into());
            "parked_until, id"
        }
        StateFilter::Review => {
            conds.push("state = 'review'".into());
            "finished_at, id"
        }
        StateFilter::Held => {
            conds.push("(lock_user IS NOT NULL OR state = 'parked')".into());
            "CASE WHEN state = 'parked' THEN 1 ELSE 0 END, coalesce(lock_time, parked_until), id"
        }
        StateFilter::Done | StateFilter::Failed | StateFilter::Cancelled => {
            conds.push(format!("state = '{}'", f.state.as_str()));
            "id DESC"
        }
        StateFilter::All => "id",
    };
    if let Some(queue) = &f.queue {
        let p = q.push(Param::Text(queue.clone()));
        conds.push(format!("queue = {p}"));
    }
    if let Some(h) = &f.holder {
        let p = q.push(Param::Text(h.clone()));
        // A parked item has no holder: its owner is who parked it.
        let col = match f.state {
            StateFilter::Parked => "parked_by",
            StateFilter::Held => "coalesce(lock_user, parked_by)",
            _ => "lock_user",
        };
        conds.push(format!("{col} = {p}"));
    }
    if let Some(r) = &f.reviewer {
        let p = q.push(Param::Text(r.clone()));
        conds.push(format!("NOT {}", WORKED_ON.replace("{me}", &p)));
        conds.push(MAY_REVIEW.replace("{me}", &p));
    }
    q.base = conds.clone();
    if let Some(search) = f.text.as_deref().and_then(Search::parse) {
        let cond = search_condition(&mut q, d, &search);
        conds.push(cond.clone());
        q.search = Some((search, cond));
    }
    if !conds.is_empty() {
        q.where_ = format!("WHERE {}", conds.join(" AND "));
    }
    q
}

/// The condition that a row matches `search`: its words, its qualified words, or the id
/// it names (which the dialect's candidates then include too).
fn search_condition(q: &mut ListSql, d: &Dialect, search: &Search) -> String {
    let mut cond = (d.search)(q, search);
    for (name, word) in search.fields() {
        cond = format!("{cond} AND {}", (d.field)(q, name, word));
    }
    if let Some(id) = search.id() {
        let p = q.push(Param::Int(id));
        cond = format!("({cond} OR id = {p})");
        if let Some(c) = &mut q.candidates {
            *c = format!("{c} UNION ALL SELECT {p}::bigint");
        }
    }
    cond
}

/// When the filter's count is kept by triggers (no scan): `Some(state)`, the state being
/// `None` for all states.
pub(crate) fn kept_count(f: &ListFilter) -> Option<Option<&'static str>> {
    let state = match f.state {
        StateFilter::Open
        | StateFilter::Done
        | StateFilter::Failed
        | StateFilter::Cancelled
        | StateFilter::Parked
        | StateFilter::Review => Some(f.state.as_str()),
        StateFilter::All => None,
        StateFilter::Locked | StateFilter::Expired | StateFilter::Held => return None,
    };
    (f.holder.is_none() && f.reviewer.is_none() && searched(f).is_none()).then_some(state)
}

/// The filter's search, if it has one.
pub(crate) fn searched(f: &ListFilter) -> Option<Search> {
    f.text.as_deref().and_then(Search::parse)
}

/// Refuses a search whose qualifiers (`vat:DE12`) name no field of the filter's queue,
/// or of any queue when it names none; `fields` gives them (queue, field), asked only when
/// the search has qualifiers.
pub(crate) fn check_qualifiers<E>(
    f: &ListFilter,
    fields: impl FnOnce(Option<&str>) -> Result<Vec<(String, FieldDef)>, E>,
) -> Result<(), E>
where
    E: From<StoreError>,
{
    let Some(search) = searched(f).filter(|s| !s.fields().is_empty()) else {
        return Ok(());
    };
    let defs = fields(f.queue.as_deref())?;
    let known: Vec<&str> = defs.iter().map(|(_, d)| d.name.as_str()).collect();
    search
        .check_fields(&known)
        .map_err(|e| E::from(StoreError::Invalid(e)))
}

/// What a count stops at: searches count up to one past [`COUNT_CAP`] ("1,000+").
pub(crate) fn count_limit(f: &ListFilter) -> Option<u64> {
    searched(f).map(|_| COUNT_CAP + 1)
}

/// A LIKE pattern that finds `word` anywhere (with `\` as the escape character).
pub(crate) fn contains_pattern(word: &str) -> String {
    let escaped = word
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("%{escaped}%")
}

/// Which rows of the whole list a window reads, and from which end.
///
/// A window past the middle of a long list is read from the far end in reverse order, so
/// that `G` and deep paging walk at most half the index. Knowing where the middle is needs
/// the total, which is O(1) only for filters without holder or text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    pub offset: usize,
    pub limit: usize,
    /// Read in reverse order (then reverse the rows).
    pub reversed: bool,
}

/// Offsets beyond this are worth a count to decide from which end to read.
const DEEP_OFFSET: usize = 2_000;

impl Window {
    /// True when planning this filter's window needs the total.
    pub(crate) fn wants_total(f: &ListFilter) -> bool {
        f.offset > DEEP_OFFSET
            && f.holder.is_none()
            && f.reviewer.is_none()
            && searched(f).is_none()
    }

    /// The window to read; `None` when it lies past the end.
    pub(crate) fn plan(f: &ListFilter, total: Option<u64>) -> Option<Window> {
        let limit = f.limit.max(1);
        let front = Window {
            offset: f.offset,
            limit,
            reversed: false,
        };
        let Some(total) = total.map(|t| t as usize) else {
            return Some(front);
        };
        if f.offset >= total {
            return None;
        }
        if f.offset * 2 <= total {
            return Some(front);
        }
        let end = (f.offset + limit).min(total);
        Some(Window {
            offset: total - end,
            limit: end - f.offset,
            reversed: true,
        })
    }
}

/// The opposite of an ORDER BY list: `priority DESC, created_at, id` becomes
/// `priority, created_at DESC, id DESC`.
pub(crate) fn reverse_order(order: &str) -> String {
    order
        .split(',')
        .map(|term| {
            let term = term.trim();
            match term.strip_suffix(" DESC") {
                Some(col) => col.to_string(),
                None => format!("{term} DESC"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
