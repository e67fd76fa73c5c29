//! Supervisor subcommands: reap, unlock, reassign, requeue, cancel, queue and user settings.

use std::io::Write;

use crate::domain::fields::{Col, Value};
use crate::domain::time::{local_full, short_duration};
use crate::domain::when::Span;
use crate::domain::{ItemEdit, QueueUpdate, SeenLock, sanitize};
use crate::store::{ListFilter, StateFilter, Store};

use crate::cli::args::QueueCommand;
use crate::cli::output::{queue_line, write_json};
use crate::cli::{CliResult, bail_usage};

/// After a change of `queue`'s lock age: how many current locks keep the age they were
/// given (a lock's expiry is stored when it is taken or renewed; assignments run no clock
/// and expired locks have nothing to keep).
fn kept_ages(
    s: &mut dyn Store,
    old: &crate::domain::QueueSettings,
    new: &crate::domain::QueueSettings,
    out: &mut dyn Write,
) -> CliResult {
    let now = s.now()?;
    let held = s.list(&ListFilter {
        state: StateFilter::Locked,
        queue: Some(new.name.clone()),
        // Held locks are as many as people at work.
        limit: 1_000_000,
        ..Default::default()
    })?;
    let live = held
        .iter()
        .filter_map(|i| i.lock())
        .filter(|l| !l.is_assignment() && !l.is_expired(now))
        .count();
    let age = |q: &crate::domain::QueueSettings| short_duration(q.lock_seconds * 1000);
    writeln!(
        out,
        "{live} current lock(s) keep the age they were given ({} until now); new locks and \
         renewals get {}",
        age(old),
        age(new)
    )?;
    Ok(())
}

/// `caseload queue set`.
fn set_queue(s: &mut dyn Store, q: QueueCommand, out: &mut dyn Write) -> CliResult {
    let QueueCommand::Set {
        name,
        lock_seconds,
        warn_seconds,
        max_per_user,
        paused,
        order,
        park_grace_seconds,
        undo_seconds,
        review,
        review_new,
        create,
        sla,
    } = q
    else {
        return bail_usage("not queue set");
    };
    let review_percent = review
        .as_deref()
        .map(crate::domain::review::parse_share)
        .transpose()
        .map_err(|m| anyhow::anyhow!("queue {}: {m}", sanitize::line(&name)))?;
    let update = QueueUpdate {
        lock_seconds,
        warn_seconds,
        max_per_user: max_per_user.map(|n| if n == 0 { None } else { Some(n) }),
        paused,
        order,
        park_grace_seconds,
        undo_seconds,
        review_percent,
        review_new,
    };
    if update.is_empty() && !create && sla.is_empty() {
        return bail_usage(
            "nothing to change: give --lock-seconds, --warn-seconds, --max-per-user, \
             --paused, --order, --park-grace-seconds, --undo-seconds, --review, \
             --review-new or --sla",
        );
    }
    // The SLA's flags are read (a file, a zone) before anything is written; with
    // other settings, the SLA is changed in the same transaction (both or neither).
    let sla_update = super::sla::update_of(&sla)?;
    let before = if !update.is_empty() || create {
        s.queues()?.into_iter().find(|q| q.name == name)
    } else {
        None
    };
    let mut unchanged_sla = sla_update.is_none();
    let q = match sla_update {
        Some(u) if !update.is_empty() || create => {
            let sla_before = s.slas()?.into_iter().find(|x| x.queue == name);
            let (q, now) = s.set_queue_and_sla(&name, &update, create, &u)?;
            writeln!(out, "{}", queue_line(&q))?;
            writeln!(out, "{}", super::sla::sla_line(&name, now.as_ref()))?;
            unchanged_sla = sla_before == now;
            q
        }
        Some(u) => return super::sla::set(s, &name, &u, out),
        None => {
            let q = s.set_queue(&name, &update, create).map_err(|e| match e {
                crate::store::StoreError::UnknownQueue { .. } => {
                    anyhow::anyhow!("{e}; give --create to create it")
                }
                e => e.into(),
            })?;
            writeln!(out, "{}", queue_line(&q))?;
            q
        }
    };
    if unchanged_sla && before.as_ref() == Some(&q) {
        writeln!(
            out,
            "nothing changed: queue '{}' had these settings already",
            sanitize::line(&name)
        )?;
    }
    if let Some(old) = before.filter(|b| b.lock_seconds != q.lock_seconds) {
        kept_ages(s, &old, &q, out)?;
    }
    Ok(())
}

pub(crate) fn queue_command(s: &mut dyn Store, q: QueueCommand, out: &mut dyn Write) -> CliResult {
    match q {
        q @ QueueCommand::Set { .. } => set_queue(s, q, out)?,
        QueueCommand::Rename { name, to } => {
            let moved = s.rename_queue(&name, &to)?;
            writeln!(
                out,
                "Renamed queue {} to {} ({moved} item(s) moved)",
                sanitize::line(&name),
                sanitize::line(&to)
            )?;
        }
        QueueCommand::Delete { name } => {
            s.delete_queue(&name)?;
            writeln!(out, "Deleted queue {}", sanitize::line(&name))?;
        }
        QueueCommand::List { json } => {
            let qs = s.queues()?;
            if json {
                write_json(out, &serde_json::to_value(&qs)?)?;
            } else {
                for q in &qs {
                    writeln!(out, "{}", queue_line(q))?;
                }
            }
        }
    }
    Ok(())
}

/// `caseload reap`: marks expired locks; prints how many.
pub(crate) fn reap(s: &mut dyn Store, out: &mut dyn Write) -> CliResult {
    let n = s.reap()?;
    writeln!(out, "{n}")?;
    Ok(())
}

/// `caseload unlock ID`.
pub(crate) fn unlock(s: &mut dyn Store, id: i64, reason: &str, out: &mut dyn Write) -> CliResult {
    s.unlock(id, None, reason)?;
    writeln!(out, "Unlocked #{id}")?;
    Ok(())
}

/// `caseload unlock --expired|--holder|--queue|--all`: each lock is fenced by what was listed.
pub(crate) fn unlock_many(
    s: &mut dyn Store,
    expired: bool,
    holder: Option<String>,
    queue: Option<String>,
    reason: &str,
    out: &mut dyn Write,
) -> CliResult {
    let filter = ListFilter {
        state: if expired {
            StateFilter::Expired
        } else {
            StateFilter::Locked
        },
        queue,
        holder,
        text: None,
        reviewer: None,
        limit: usize::MAX >> 1,
        offset: 0,
    };
    let locks: Vec<SeenLock> = s.list(&filter)?.iter().filter_map(SeenLock::of).collect();
    let n = s.unlock_many(&locks, reason)?;
    writeln!(out, "Unlocked {n} item(s)")?;
    Ok(())
}

/// `caseload reassign ID --to USER`.
pub(crate) fn reassign(
    s: &mut dyn Store,
    id: i64,
    to: &str,
    reason: &str,
    out: &mut dyn Write,
) -> CliResult {
    let item = s.reassign(id, None, to, reason)?;
    writeln!(
        out,
        "Reassigned #{id} to {} (token {})",
        sanitize::line(to),
        item.lock_token
    )?;
    Ok(())
}

/// `caseload assign ID --to USER`.
pub(crate) fn assign(
    s: &mut dyn Store,
    id: i64,
    to: &str,
    reason: &str,
    out: &mut dyn Write,
) -> CliResult {
    let item = s.assign(id, None, to, reason)?;
    writeln!(
        out,
        "Assigned #{id} to {} (token {}; its lock clock starts when they open it)",
        sanitize::line(to),
        item.lock_token
    )?;
    Ok(())
}

/// `caseload reopen ID --reason TEXT`.
pub(crate) fn reopen(s: &mut dyn Store, id: i64, reason: &str, out: &mut dyn Write) -> CliResult {
    s.reopen(id, reason)?;
    writeln!(out, "Reopened #{id}")?;
    Ok(())
}

/// `caseload edit ID [--priority N] [--due T|none] [--queue Q]`.
pub(crate) fn edit(
    s: &mut dyn Store,
    id: i64,
    priority: Option<i64>,
    due: Option<String>,
    queue: Option<String>,
    out: &mut dyn Write,
) -> CliResult {
    let due = match due.as_deref() {
        None => None,
        Some("none") => Some(None),
        Some(d) => Some(Some(super::time_arg("--due", d, s.now()?, Span::Ahead)?)),
    };
    let mut edit = ItemEdit::default();
    if let Some(p) = priority {
        edit = edit.with(Col::Priority, Value::Number(p));
    }
    if let Some(d) = due {
        edit = edit.with(Col::DueAt, Value::Time(d));
    }
    if let Some(q) = queue {
        edit = edit.with(Col::Queue, Value::Text(Some(q)));
    }
    if edit.is_empty() {
        return bail_usage("nothing to change: give --priority, --due or --queue");
    }
    let item = s.edit(id, &edit)?;
    let due = item.due_at.map_or_else(|| "none".to_string(), local_full);
    writeln!(
        out,
        "Edited #{id}: priority {}, due {due}, queue {}",
        item.priority,
        sanitize::line(&item.queue)
    )?;
    Ok(())
}

/// `caseload requeue ID`.
pub(crate) fn requeue(s: &mut dyn Store, id: i64, out: &mut dyn Write) -> CliResult {
    s.requeue(id)?;
    writeln!(out, "Requeued #{id}")?;
    Ok(())
}

/// `caseload cancel ID`.
pub(crate) fn cancel(s: &mut dyn Store, id: i64, reason: &str, out: &mut dyn Write) -> CliResult {
    s.cancel(id, reason)?;
    writeln!(out, "Cancelled #{id}")?;
    Ok(())
}

/// `caseload user set NAME --role ROLE`.
/// `caseload user set NAME [--role R] [--login L | --no-login]`.
pub(crate) fn set_user(
    s: &mut dyn Store,
    name: &str,
    change: &crate::store::UserChange,
    out: &mut dyn Write,
) -> CliResult {
    let shown = sanitize::line(name);
    let done = s.change_user(name, change)?;
    if change.back {
        writeln!(
            out,
            "{shown} is back (bind a login again with --login if needed)"
        )?;
    }
    let words = |q: &crate::domain::Queues| sanitize::line(&q.words()).to_string();
    if let Some(q) = &change.queues {
        writeln!(out, "{shown} may take from: {}", words(q))?;
    }
    if let Some(q) = &change.reviews {
        writeln!(out, "{shown} may review in: {}", words(q))?;
    }
    if let Some(role) = change.role {
        writeln!(out, "{shown} is now {}", role.as_str())?;
    }
    match &change.login {
        Some(Some(l)) => writeln!(out, "{shown} may be used by login {}", sanitize::line(l))?,
        Some(None) => writeln!(out, "{shown} is bound to no login")?,
        None => {}
    }
    if change.leaving.is_some() {
        let ids = |v: &[i64]| match v {
            [] => "none".to_string(),
            v => v
                .iter()
                .map(|i| format!("#{i}"))
                .collect::<Vec<_>>()
                .join(" "),
        };
        writeln!(
            out,
            "{shown} has left: {} lock(s) and assignment(s) returned ({}), {} parked item(s) \
             returned ({}); login binding removed",
            done.released.len(),
            ids(&done.released),
            done.unparked.len(),
            ids(&done.unparked)
        )?;
    }
    Ok(())
}
