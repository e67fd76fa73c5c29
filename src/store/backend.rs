//! What a database backend provides — write transactions over [`Tx`] and its own reads —
//! and the one [`Store`] implementation over it: every write operation is the same
//! backend-neutral code of [`super::ops`] on both SQLite and PostgreSQL.

use std::path::Path;

use super::error::{Result, StoreError};
use super::ops::{self, HolderOp, Tx};
use super::{
    Added, AndNext, Applied, ExportFilter, ListFilter, LostLock, Report, ReportQuery, Stats, Store,
    TakeNext,
};
use crate::domain::fields::Col;
use crate::domain::queue::validate_queue_name;
use crate::domain::user::validate_user_name;
use crate::domain::{
    Actor, AuditEntry, Comment, Event, Item, ItemEdit, Millis, NewItem, QueueSettings, QueueUpdate,
    RealIdentity, Role, SeenLock, UserInfo,
};

/// A database backend. Implementing this gives a [`Store`].
pub(crate) trait Backend: Send {
    /// Who is acting.
    fn actor(&self) -> &Actor;
    /// The real identity behind the actor, learnt when the store was opened.
    fn real(&self) -> &RealIdentity;
    /// Now, by the clock that decides expiry.
    fn now(&mut self) -> Result<Millis>;
    /// A value that changes whenever anybody commits a change.
    fn change_marker(&mut self) -> Result<u64>;
    /// False when every change is refused up front (a read-only SQLite file).
    fn writable(&self) -> bool {
        true
    }
    /// Runs `f` in one write transaction: committed when it returns `Ok`, rolled back
    /// otherwise. A backend may run `f` again after a deadlock; `f` must not keep state
    /// across runs other than its result.
    fn transact(&mut self, f: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()>;

    fn item(&mut self, id: i64) -> Result<Item>;
    fn history(&mut self, id: i64) -> Result<Vec<Event>>;
    fn list(&mut self, filter: &ListFilter) -> Result<Vec<Item>>;
    fn count(&mut self, filter: &ListFilter) -> Result<u64>;
    fn takeable(&mut self, queue: Option<&str>, cap: u64) -> Result<u64>;
    fn queues(&mut self) -> Result<Vec<QueueSettings>>;
    fn queue(&mut self, name: &str) -> Result<QueueSettings>;
    fn role(&mut self, user: &str) -> Result<Role>;
    fn users(&mut self) -> Result<Vec<UserInfo>>;
    fn comments(&mut self, id: i64) -> Result<Vec<Comment>>;
    fn audit(&mut self, who: Option<&str>, since: Millis) -> Result<Vec<AuditEntry>>;
    fn stats(&mut self) -> Result<Stats>;
    fn report(&mut self, q: &ReportQuery) -> Result<Report>;
    fn lock_started(&mut self, ids: &[i64]) -> Result<Vec<(i64, Millis)>>;
    fn last_item_id(&mut self) -> Result<i64>;
    fn item_keys(
        &mut self,
        ids: &[i64],
        request_ids: &[&str],
    ) -> Result<Vec<(i64, Option<String>)>>;
    fn events_by(&mut self, actor: &str, since: Millis) -> Result<Vec<Event>>;
    fn lost_locks(&mut self, user: &str, since: Millis) -> Result<Vec<LostLock>>;
    fn check(&mut self) -> Result<Vec<String>>;
    fn backup(&mut self, dest: &Path) -> Result<()>;
    fn export(
        &mut self,
        filter: &ExportFilter,
        each: &mut dyn FnMut(&Item) -> std::io::Result<()>,
    ) -> Result<u64>;
    fn export_events(
        &mut self,
        filter: &ExportFilter,
        each: &mut dyn FnMut(&Event) -> std::io::Result<()>,
    ) -> Result<u64>;
    /// Indexes up to `budget` rows for search in one short write transaction; returns
    /// how many (0 when the index is up to date, or the backend keeps none).
    fn index_search(&mut self, _budget: usize) -> Result<usize> {
        Ok(0)
    }
}

/// Runs `f` in one write transaction of `b` and returns what it gave.
fn write<B: Backend, T>(b: &mut B, mut f: impl FnMut(&mut dyn Tx) -> Result<T>) -> Result<T> {
    let mut out = None;
    b.transact(&mut |tx| {
        out = Some(f(tx)?);
        super::fault::panic_if_asked();
        Ok(())
    })?;
    out.ok_or_else(|| StoreError::Database("the transaction gave no result".into()))
}

/// A holder's write, checked before the transaction starts.
fn holder<B: Backend>(b: &mut B, id: i64, token: i64, op: HolderOp<'_>) -> Result<Applied> {
    let w = op.plan(token)?;
    write(b, |tx| ops::holder_write(tx, id, token, op, &w))
}

fn invalid(e: crate::domain::ValidationError) -> StoreError {
    StoreError::Invalid(e.message)
}

impl<B: Backend> Store for B {
    fn actor(&self) -> &Actor {
        Backend::actor(self)
    }

    fn now(&mut self) -> Result<Millis> {
        Backend::now(self)
    }

    fn change_marker(&mut self) -> Result<u64> {
        Backend::change_marker(self)
    }

    fn add(&mut self, item: &NewItem) -> Result<Added> {
        item.validate().map_err(invalid)?;
        let added = write(self, |tx| {
            ops::add_items(tx, std::slice::from_ref(item), true)
        })?;
        added
            .into_iter()
            .next()
            .ok_or_else(|| StoreError::Database("the item was not added".into()))
    }

    fn add_batch(&mut self, items: &[NewItem]) -> Result<usize> {
        let added = self.add_each(items)?;
        Ok(added.iter().filter(|a| a.created).count())
    }

    fn add_each(&mut self, items: &[NewItem]) -> Result<Vec<Added>> {
        for it in items {
            it.validate().map_err(invalid)?;
        }
        write(self, |tx| ops::add_items(tx, items, true))
    }

    fn add_items(&mut self, items: &[NewItem], create_queues: bool) -> Result<Vec<Added>> {
        for it in items {
            it.validate().map_err(invalid)?;
        }
        write(self, |tx| ops::add_items(tx, items, create_queues))
    }

    fn keep_ids(&mut self, last: &NewItem, ids: (i64, i64), seen: i64) -> Result<(Added, Millis)> {
        last.validate().map_err(invalid)?;
        write(self, |tx| ops::keep_ids(tx, last, ids, seen))
    }

    fn add_kept(&mut self, items: &[NewItem], ids: &[i64], at: Millis) -> Result<Vec<Added>> {
        for it in items {
            it.validate().map_err(invalid)?;
        }
        write(self, |tx| ops::add_kept(tx, items, ids, at))
    }

    fn last_item_id(&mut self) -> Result<i64> {
        Backend::last_item_id(self)
    }

    fn item_keys(
        &mut self,
        ids: &[i64],
        request_ids: &[&str],
    ) -> Result<Vec<(i64, Option<String>)>> {
        Backend::item_keys(self, ids, request_ids)
    }

    fn rename_queue(&mut self, from: &str, to: &str) -> Result<u64> {
        validate_queue_name(to).map_err(|m| StoreError::Invalid(format!("new name: {m}")))?;
        write(self, |tx| ops::rename_queue(tx, from, to))
    }

    fn delete_queue(&mut self, name: &str) -> Result<()> {
        write(self, |tx| ops::delete_queue(tx, name))
    }

    fn take_next(&mut self, opts: &TakeNext) -> Result<Item> {
        write(self, |tx| ops::take_next(tx, opts))
    }

    fn take(&mut self, id: i64) -> Result<Item> {
        write(self, |tx| ops::take(tx, id))
    }

    fn renew(&mut self, id: i64, token: i64) -> Result<Item> {
        holder(self, id, token, HolderOp::Renew)?;
        Backend::item(self, id)
    }

    fn release(&mut self, id: i64, token: i64) -> Result<Applied> {
        holder(self, id, token, HolderOp::Release)
    }

    fn skip(&mut self, id: i64, token: i64) -> Result<Applied> {
        holder(self, id, token, HolderOp::Skip)
    }

    fn save_notes(&mut self, id: i64, token: i64, notes: &str) -> Result<()> {
        let w = HolderOp::SaveNotes(notes).plan(token)?;
        write(self, |tx| ops::save_notes(tx, id, token, &w))
    }

    fn complete(&mut self, id: i64, token: i64, result: Option<&str>) -> Result<Applied> {
        holder(self, id, token, HolderOp::Complete(result))
    }

    fn complete_and_next(
        &mut self,
        id: i64,
        token: i64,
        result: Option<&str>,
        next: &TakeNext,
    ) -> Result<AndNext> {
        let op = HolderOp::Complete(result);
        let w = op.plan(token)?;
        write(self, |tx| ops::finish_and_next(tx, id, token, op, &w, next))
    }

    fn fail(&mut self, id: i64, token: i64, reason: &str) -> Result<Applied> {
        holder(self, id, token, HolderOp::Fail(reason))
    }

    fn comment(&mut self, id: i64, text: &str) -> Result<i64> {
        ops::check_comment(text)?;
        write(self, |tx| ops::comment(tx, id, text))
    }

    fn comments(&mut self, id: i64) -> Result<Vec<Comment>> {
        Backend::comments(self, id)
    }

    fn reap(&mut self) -> Result<usize> {
        const BATCH: usize = 500;
        let mut total = 0;
        loop {
            // Short transactions: others keep claiming between them.
            let n = write(self, |tx| tx.reap(BATCH))?;
            total += n;
            if n < BATCH {
                return Ok(total);
            }
        }
    }

    fn unlock(&mut self, id: i64, seen: Option<SeenLock>, reason: &str) -> Result<()> {
        let reason = ops::required_reason(reason)?;
        write(self, |tx| ops::unlock(tx, id, seen, reason))
    }

    fn unlock_many(&mut self, locks: &[SeenLock], reason: &str) -> Result<usize> {
        let reason = ops::required_reason(reason)?;
        write(self, |tx| ops::unlock_many(tx, locks, reason))
    }

    fn reassign(&mut self, id: i64, token: Option<i64>, to: &str, reason: &str) -> Result<Item> {
        let reason = ops::required_reason(reason)?;
        validate_user_name(to).map_err(|m| StoreError::Invalid(format!("--to: {m}")))?;
        write(self, |tx| ops::reassign(tx, id, token, to, reason))
    }

    fn assign(&mut self, id: i64, token: Option<i64>, to: &str, reason: &str) -> Result<Item> {
        let reason = ops::required_reason(reason)?;
        validate_user_name(to).map_err(|m| StoreError::Invalid(format!("--to: {m}")))?;
        write(self, |tx| ops::assign(tx, id, token, to, reason))
    }

    fn reopen(&mut self, id: i64, reason: &str) -> Result<()> {
        let reason = ops::required_reason(reason)?;
        write(self, |tx| ops::reopen(tx, id, reason))
    }

    fn edit(&mut self, id: i64, edit: &ItemEdit) -> Result<Item> {
        if edit.is_empty() {
            return Err(StoreError::Invalid(
                "nothing to change: give --priority, --due or --queue".into(),
            ));
        }
        if let Some(crate::domain::fields::Value::Text(Some(q))) = edit.value(Col::Queue) {
            validate_queue_name(q).map_err(|m| StoreError::Invalid(format!("--queue: {m}")))?;
        }
        write(self, |tx| ops::edit(tx, id, edit))
    }

    fn requeue(&mut self, id: i64) -> Result<()> {
        write(self, |tx| ops::requeue(tx, id))
    }

    fn rebuild_figures(&mut self) -> Result<u64> {
        write(self, ops::rebuild_figures)
    }

    fn cancel(&mut self, id: i64, reason: &str) -> Result<()> {
        let reason = ops::required_reason(reason)?;
        write(self, |tx| ops::cancel(tx, id, reason))
    }

    fn set_queue(
        &mut self,
        name: &str,
        update: &QueueUpdate,
        create: bool,
    ) -> Result<QueueSettings> {
        validate_queue_name(name).map_err(StoreError::Invalid)?;
        write(self, |tx| ops::set_queue(tx, name, update, create))
    }

    fn set_role(&mut self, user: &str, role: Role) -> Result<()> {
        validate_user_name(user).map_err(StoreError::Invalid)?;
        write(self, |tx| ops::set_role(tx, user, role))
    }

    fn set_login(&mut self, user: &str, login: Option<&str>) -> Result<()> {
        validate_user_name(user).map_err(StoreError::Invalid)?;
        if let Some(l) = login {
            validate_user_name(l).map_err(|m| {
                StoreError::Invalid(format!("--login: {}", m.replace("user name", "login")))
            })?;
        }
        write(self, |tx| ops::set_login(tx, user, login))
    }

    fn audit(&mut self, who: Option<&str>, since: Millis) -> Result<Vec<AuditEntry>> {
        Backend::audit(self, who, since)
    }

    fn real(&self) -> &RealIdentity {
        Backend::real(self)
    }

    fn item(&mut self, id: i64) -> Result<Item> {
        Backend::item(self, id)
    }

    fn history(&mut self, id: i64) -> Result<Vec<Event>> {
        Backend::history(self, id)
    }

    fn list(&mut self, filter: &ListFilter) -> Result<Vec<Item>> {
        Backend::list(self, filter)
    }

    fn count(&mut self, filter: &ListFilter) -> Result<u64> {
        Backend::count(self, filter)
    }

    fn takeable(&mut self, queue: Option<&str>, cap: u64) -> Result<u64> {
        Backend::takeable(self, queue, cap)
    }

    fn queues(&mut self) -> Result<Vec<QueueSettings>> {
        Backend::queues(self)
    }

    fn queue(&mut self, name: &str) -> Result<QueueSettings> {
        Backend::queue(self, name)
    }

    fn role(&mut self, user: &str) -> Result<Role> {
        Backend::role(self, user)
    }

    fn users(&mut self) -> Result<Vec<UserInfo>> {
        Backend::users(self)
    }

    fn stats(&mut self) -> Result<Stats> {
        Backend::stats(self)
    }

    fn report(&mut self, q: &ReportQuery) -> Result<Report> {
        if q.period.since >= q.period.until {
            return Err(StoreError::Invalid(format!(
                "the period is empty: --since ({}) is not before --until ({})",
                crate::domain::time::rfc3339(q.period.since),
                crate::domain::time::rfc3339(q.period.until)
            )));
        }
        Backend::report(self, q)
    }

    fn lock_started(&mut self, ids: &[i64]) -> Result<Vec<(i64, Millis)>> {
        Backend::lock_started(self, ids)
    }

    fn events_by(&mut self, actor: &str, since: Millis) -> Result<Vec<Event>> {
        Backend::events_by(self, actor, since)
    }

    fn lost_locks(&mut self, user: &str, since: Millis) -> Result<Vec<LostLock>> {
        Backend::lost_locks(self, user, since)
    }

    fn touch_last_seen(&mut self) -> Result<Option<Millis>> {
        if !self.writable() {
            return Ok(None);
        }
        write(self, |tx| tx.swap_last_seen())
    }

    fn check(&mut self) -> Result<Vec<String>> {
        Backend::check(self)
    }

    fn backup(&mut self, dest: &Path) -> Result<()> {
        Backend::backup(self, dest)
    }

    fn export(
        &mut self,
        filter: &ExportFilter,
        each: &mut dyn FnMut(&Item) -> std::io::Result<()>,
    ) -> Result<u64> {
        Backend::export(self, filter, each)
    }

    fn export_events(
        &mut self,
        filter: &ExportFilter,
        each: &mut dyn FnMut(&Event) -> std::io::Result<()>,
    ) -> Result<u64> {
        Backend::export_events(self, filter, each)
    }

    fn index_search(&mut self, budget: usize) -> Result<usize> {
        if !self.writable() {
            return Ok(0);
        }
        Backend::index_search(self, budget)
    }
}
