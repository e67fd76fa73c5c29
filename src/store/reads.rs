//! [`Reads`]: every read of the queue, implemented by each backend directly (SQLite's
//! and PostgreSQL's `mod.rs`, over their own `reads`, `stats`, `figures` and `check`).

use super::check::CheckRun;
use super::error::Result;
use super::feed::{FeedEvent, FeedMark};
use super::metrics::Metrics;
use super::{ExportFilter, ListFilter, LostLock, ReasonCount, Report, ReportQuery, Stats};
use crate::domain::duplicates::Pair;
use crate::domain::queue_fields::FieldDef;
use crate::domain::sla::{Sla, Watched};
use crate::domain::texts::CannedText;
use crate::domain::{
    Actor, AuditEntry, Comment, Event, Item, Millis, QueueSettings, RealIdentity, Role, UserInfo,
};

/// Every read of the queue, and who is reading. Each backend implements it directly; the
/// same conformance tests run against each. `Send`: the TUI runs its store on a thread of
/// its own.
pub trait Reads: Send {
    /// Who is acting.
    fn actor(&self) -> &Actor;
    /// The real identity behind the actor (OS login or database role).
    fn real(&self) -> &RealIdentity;
    /// Now, by the clock that decides expiry (the host's on SQLite, the server's on
    /// PostgreSQL).
    fn now(&mut self) -> Result<Millis>;
    /// A value that changes whenever anybody commits a change (for live refresh).
    fn change_marker(&mut self) -> Result<u64>;
    /// Runs `f`, whose reads of the store all see one snapshot of the database (one read
    /// transaction, ended on every path): a screen's count never disagrees with its rows.
    /// Reads that take a snapshot of their own (`stats`, `report`) join it.
    fn snapshot(&mut self, f: &mut dyn FnMut(&mut dyn Reads) -> Result<()>) -> Result<()>;
    /// One item.
    fn item(&mut self, id: i64) -> Result<Item>;
    /// An item's events, oldest first.
    fn history(&mut self, id: i64) -> Result<Vec<Event>>;
    /// A window of items.
    fn list(&mut self, filter: &ListFilter) -> Result<Vec<Item>>;
    /// How many items match (ignoring limit and offset).
    fn count(&mut self, filter: &ListFilter) -> Result<u64>;
    /// How many items the caller could take now — open, free or expired, their queue
    /// running — in `queue` (every queue when `None`), counting at most `cap`.
    fn takeable(&mut self, queue: Option<&str>, cap: u64) -> Result<u64>;
    /// Every queue's settings.
    fn queues(&mut self) -> Result<Vec<QueueSettings>>;
    /// One queue's settings.
    fn queue(&mut self, name: &str) -> Result<QueueSettings>;
    /// A queue's field definitions in their order on screen (none for a queue without
    /// fields, or an unknown one).
    fn fields(&mut self, queue: &str) -> Result<Vec<FieldDef>>;
    /// The version of every queue's field definitions now (a new one with each change to
    /// any of them), or `None` when the backend keeps no digests of checked records. Read
    /// it before the definitions a check uses: a record checked against them may be
    /// marked checked at that version only (see [`crate::store::FieldsChecked`]).
    fn fields_version(&mut self) -> Result<Option<i64>> {
        Ok(None)
    }
    /// Every queue's field definitions: (queue, field), by queue, each queue's in order.
    fn all_fields(&mut self) -> Result<Vec<(String, FieldDef)>>;
    /// Every queue's SLA, by queue (only queues that have one).
    fn slas(&mut self) -> Result<Vec<Sla>>;
    /// The items of queues with an SLA that the Stats view weighs (see
    /// [`crate::domain::sla::watch`]): every open one with a due time, and those finished
    /// after a due time at or after `since`.
    fn sla_items(&mut self, since: Millis) -> Result<Vec<Watched>>;
    /// Ready-made texts of `queue` (of every queue when `None`), by queue and code.
    fn texts(&mut self, queue: Option<&str>) -> Result<Vec<CannedText>>;
    /// A user's role (staff when unknown).
    fn role(&mut self, user: &str) -> Result<Role>;
    /// Everyone `assign` and `reassign` accept, by name: the `users` table and every
    /// actor of the audit trail (with no role, login or last visit on record).
    fn users(&mut self) -> Result<Vec<UserInfo>>;
    /// An item's comments, oldest first.
    fn comments(&mut self, id: i64) -> Result<Vec<Comment>>;
    /// Audit records of roles, login bindings and queue settings since a time, oldest
    /// first; with `who`, only those made by that user or about them.
    fn audit(&mut self, who: Option<&str>, since: Millis) -> Result<Vec<AuditEntry>>;
    /// The figures of the Stats view.
    fn stats(&mut self) -> Result<Stats>;
    /// The supervisors' figures over a period, per person and per queue (from the holds
    /// that ended in it; see [`crate::domain::figures`]). An empty period is `Invalid`.
    fn report(&mut self, q: &ReportQuery) -> Result<Report>;
    /// The reasons given for fails, skips and releases that happened in the period (in
    /// `q.queue` only, when given), counted by queue, person, kind and code (see
    /// [`ReasonCount`]). An empty period is `Invalid`.
    fn reasons(&mut self, q: &ReportQuery) -> Result<Vec<ReasonCount>>;
    /// The review figures of the period (in `q.queue` only, when given): reviews given
    /// and rejections of each person's work, and what waits for review now.
    fn reviews(&mut self, q: &ReportQuery) -> Result<crate::store::figures::ReviewFigures>;
    /// The records completed in the period and still done (in `q.queue` only, when
    /// given), with their corrections (`report --by field|source`). An empty period is
    /// `Invalid`.
    fn completed_records(
        &mut self,
        q: &ReportQuery,
    ) -> Result<Vec<crate::domain::corrections::CompletedRecord>>;
    /// The largest item id (0 when there are none).
    fn last_item_id(&mut self) -> Result<i64>;
    /// The id and request id of every item that has one of `ids` or `request_ids`.
    fn item_keys(
        &mut self,
        ids: &[i64],
        request_ids: &[&str],
    ) -> Result<Vec<(i64, Option<String>)>>;
    /// Events by one actor since a time, oldest first.
    /// Items of `queue` other than `except` whose duplicate key of `field` is `key`
    /// (`domain::duplicates::key_of`), at most `limit`, by id.
    fn key_matches(
        &mut self,
        queue: &str,
        field: &str,
        key: &str,
        except: i64,
        limit: usize,
    ) -> Result<Vec<i64>>;
    /// The judged pairs item `id` is in.
    fn pairs(&mut self, id: i64) -> Result<Vec<Pair>>;
    /// Every judged pair (`export --pairs`).
    fn all_pairs(&mut self) -> Result<Vec<Pair>>;
    fn events_by(&mut self, actor: &str, since: Millis) -> Result<Vec<Event>>;
    /// Locks `user` lost to others since a time, newest first.
    fn lost_locks(&mut self, user: &str, since: Millis) -> Result<Vec<LostLock>>;
    /// Integrity and invariant problems (empty when all is well).
    fn check(&mut self) -> Result<Vec<String>> {
        CheckRun::plain(|how| self.check_with(how))
    }
    /// [`Reads::check`] as `how` says: quick or full, telling its progress, stoppable.
    fn check_with(&mut self, how: &CheckRun<'_>) -> Result<Vec<String>>;
    /// Calls `each` for every item `filter` selects, by id.
    fn export(
        &mut self,
        filter: &ExportFilter,
        each: &mut dyn FnMut(&Item) -> std::io::Result<()>,
    ) -> Result<u64>;
    /// Calls `each` for every event of the items `filter` selects (`since` applies to the
    /// event's time), by time: the audit trail. Items without a stored `created` event
    /// get one from their row (with id 0).
    fn export_events(
        &mut self,
        filter: &ExportFilter,
        each: &mut dyn FnMut(&Event) -> std::io::Result<()>,
    ) -> Result<u64>;
    /// Calls `each` for every comment on the items `filter` selects (`since` applies to
    /// the comment's time), oldest first.
    fn export_comments(
        &mut self,
        filter: &ExportFilter,
        each: &mut dyn FnMut(&Comment) -> std::io::Result<()>,
    ) -> Result<u64>;
    /// The event feed's facts in one snapshot: the largest event id and, on PostgreSQL,
    /// the transactions then writing events ([`crate::store::feed`] says why that is exact).
    fn feed_mark(&mut self) -> Result<FeedMark>;
    /// Stored events with `after < id <= upto`, by id, at most `limit`, each with its
    /// item's queue and title.
    fn feed(&mut self, after: i64, upto: i64, limit: usize) -> Result<Vec<FeedEvent>>;
    /// The figures of `caseload metrics`, per queue, from one snapshot.
    fn metrics(&mut self) -> Result<Metrics>;
}
