//! Subcommands that read: list, show, history, stats.

use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::Context;
use serde_json::Value;

use crate::domain::fields::{Col, FIELDS, Field, Kind, Show};
use crate::domain::figures::{ItemFigures, PeriodKind};
use crate::domain::search::COUNT_CAP;
use crate::domain::time::{date_hm, display_zone, local_full, rfc3339, start_of_day};
use crate::domain::when::Span;
use crate::domain::{Cell, Comment, Item, Millis, QueueSettings, sanitize};
use crate::store::{ListFilter, ReportQuery, Store, StoreError};

use crate::cli::args::ListArgs;
use crate::cli::output::{
    audit_json, audit_line, event_json, event_line, indent, item_json, lock_text, truncate,
    write_json,
};
use crate::cli::{CliResult, bail_usage};

pub(crate) fn list(s: &mut dyn Store, a: ListArgs, out: &mut dyn Write) -> CliResult {
    let filter = ListFilter {
        state: a.state,
        queue: a.queue,
        holder: a.mine.then(|| s.actor().name.clone()),
        text: a.search,
        reviewer: None,
        // 0 means every item (i64::MAX: what both databases take as a LIMIT).
        limit: if a.limit == 0 {
            i64::MAX as usize
        } else {
            a.limit
        },
        offset: 0,
    };
    let items = s.list(&filter)?;
    if a.limit != 0 && items.len() >= a.limit {
        let total = s.count(&filter)?;
        // A search counts no further than one past the cap: never shown as exact.
        let capped = filter.text.is_some() && total > COUNT_CAP;
        let shown = items.len() as u64;
        let of = match capped {
            true if shown >= COUNT_CAP => None,
            true => Some(format!("more than {}", thousands(COUNT_CAP))),
            false if total > shown => Some(thousands(total)),
            false => None,
        };
        // On stderr, so that a script reading stdout (or the JSON) is not disturbed.
        match of {
            Some(of) => eprintln!(
                "{} of {of} shown (use --limit N for more, --limit 0 for all)",
                thousands(shown)
            ),
            None if capped => eprintln!(
                "{} shown; more may match (use --limit 0 for all)",
                thousands(shown)
            ),
            None => {}
        }
    }
    if a.json {
        let arr = items
            .iter()
            .map(item_json)
            .collect::<serde_json::Result<_>>()?;
        write_json(out, &Value::Array(arr))?;
        return Ok(());
    }
    let now = s.now()?;
    let queues = s.queues()?;
    for item in &items {
        let mut lock = lock_text(item, &queues, now);
        if a.mine && item.lock_user.is_some() {
            // What a holder needs to carry on (`--token`), e.g. after a lost answer.
            lock = format!("{lock} token {}", item.lock_token);
        }
        let due = item.due_at.map(date_hm).unwrap_or_default();
        writeln!(
            out,
            "{:>7}  {:>3}  {:<28}  {:<16}  {:<12}  {}",
            format!("#{}", item.id),
            item.priority,
            lock,
            due,
            truncate(&sanitize::line(&item.queue), 12),
            truncate(&sanitize::line(&item.list_title()), 100)
        )?;
    }
    Ok(())
}

/// 3412 as "3,412".
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub(crate) fn show(s: &mut dyn Store, id: i64, json: bool, out: &mut dyn Write) -> CliResult {
    let item = s.item(id)?;
    let history = s.history(id)?;
    let comments = s.comments(id)?;
    let figures = ItemFigures::of(&item, &history, s.now()?);
    if json {
        let mut v = item_json(&item)?;
        v["history"] = Value::Array(history.iter().map(event_json).collect());
        v["figures"] = serde_json::to_value(&figures)?;
        v["comments"] = Value::Array(comments.iter().map(comment_json).collect());
        write_json(out, &v)?;
        return Ok(());
    }
    write_item(s, &item, out)?;
    writeln!(out, "figures:    {}", sanitize::line(&figures.sentence()))?;
    if !comments.is_empty() {
        writeln!(out, "comments:")?;
        for c in &comments {
            writeln!(out, "  {}", comment_head(c))?;
            writeln!(out, "{}", indent(&indent(&sanitize::text(&c.text))))?;
        }
    }
    writeln!(out, "history:")?;
    for e in &history {
        writeln!(out, "  {}", event_line(e))?;
    }
    Ok(())
}

/// `caseload comment ID TEXT|-|--file F`.
pub(crate) fn comment(
    s: &mut dyn Store,
    id: i64,
    text: Option<String>,
    file: Option<PathBuf>,
    out: &mut dyn Write,
) -> CliResult {
    let text = match (text, file) {
        (_, Some(f)) => std::fs::read_to_string(&f)
            .with_context(|| format!("--file {}", sanitize::line(&f.display().to_string())))?,
        (Some(t), None) if t == "-" => {
            let mut buf = String::new();
            std::io::stdin()
                .read_to_string(&mut buf)
                .context("reading the comment from standard input")?;
            buf
        }
        (Some(t), None) => t,
        (None, None) => return bail_usage("give the comment's TEXT, `-` or --file FILE"),
    };
    let text = text.trim_end_matches(['\n', '\r']);
    let cid = s.comment(id, text)?;
    writeln!(out, "Commented on #{id} (comment {cid})")?;
    Ok(())
}

/// `caseload user list [--json]`.
pub(crate) fn users(s: &mut dyn Store, json: bool, all: bool, out: &mut dyn Write) -> CliResult {
    let users: Vec<_> = (s.users()?.into_iter())
        .filter(|u| all || u.access.left.is_none())
        .collect();
    if json {
        let arr: Vec<Value> = users
            .iter()
            .map(|u| {
                serde_json::json!({
                    "name": u.name,
                    "role": u.role.as_str(),
                    "login": u.login,
                    "last_seen": u.last_seen.map(rfc3339),
                    "queues": u.access.takes,
                    "reviews": u.access.reviews,
                    "left_at": u.access.left.as_ref().map(|(at, _)| rfc3339(*at)),
                    "left_reason": u.access.left.as_ref().map(|(_, why)| why),
                })
            })
            .collect();
        write_json(out, &Value::Array(arr))?;
        return Ok(());
    }
    writeln!(
        out,
        "{:<24}  {:<10}  {:<16}  {:<20}  {:<20}  LAST SEEN",
        "NAME", "ROLE", "LOGIN", "QUEUES", "REVIEWS"
    )?;
    for u in &users {
        let role = match &u.access.left {
            Some(_) => "left",
            None => u.role.as_str(),
        };
        writeln!(
            out,
            "{:<24}  {:<10}  {:<16}  {:<20}  {:<20}  {}",
            truncate(&sanitize::line(&u.name), 24),
            role,
            truncate(&sanitize::line(u.login.as_deref().unwrap_or("-")), 16),
            truncate(&sanitize::line(&u.access.takes.words()), 20),
            truncate(&sanitize::line(&u.access.reviews.words()), 20),
            u.last_seen.map_or_else(|| "never".to_string(), local_full)
        )?;
    }
    Ok(())
}

/// "2026-11-23T10:47:00.000Z  bob (comment 3)".
fn comment_head(c: &Comment) -> String {
    sanitize::line(&format!(
        "{}  {}  (comment {})",
        local_full(c.at),
        c.author,
        c.id
    ))
    .into_owned()
}

fn comment_json(c: &Comment) -> Value {
    serde_json::json!({
        "id": c.id,
        "at": rfc3339(c.at),
        "author": c.author,
        "os_user": c.os_user,
        "text": c.text,
    })
}

/// An item as `show` prints it: the heading, then a line per column the field table
/// shows as a line (`name: value`, in the table's order), then its blocks of text.
pub(crate) fn write_item(s: &mut dyn Store, item: &Item, out: &mut dyn Write) -> CliResult {
    let now = s.now()?;
    let queues = s.queues()?;
    writeln!(out, "#{} {}", item.id, sanitize::line(&item.title))?;
    if let Some(why) = item.unreadable_summary() {
        writeln!(
            out,
            "unreadable: {why} (another program or a damaged disk wrote it; bad bytes show \
             as \u{FFFD}; see `caseload check`)"
        )?;
    }
    for f in FIELDS.iter() {
        let line = match f.show {
            Show::Line => line_value(item, f).map(|v| (f.key(), v)),
            Show::Own => own_line(item, f, &queues, now),
            Show::Heading | Show::With(_) | Show::Block => None,
        };
        if let Some((name, value)) = line {
            writeln!(out, "{:<11} {value}", format!("{name}:"))?;
        }
    }
    for f in FIELDS.iter().filter(|f| f.show == Show::Block) {
        let text = match item.cell(f.col) {
            Cell::Text(Some(t)) if f.kind == Kind::Json && t != "{}" => pretty_json(t),
            Cell::Text(Some(t)) if f.kind != Kind::Json && !t.is_empty() => t.to_string(),
            _ => continue,
        };
        writeln!(out, "{}:\n{}", f.key(), indent(&sanitize::text(&text)))?;
    }
    Ok(())
}

/// A column's value on one line, sanitized (`None` when it has none).
fn line_value(item: &Item, f: &Field) -> Option<String> {
    Some(match item.cell(f.col) {
        Cell::Number(n) => n.to_string(),
        Cell::Text(Some(t)) if f.kind == Kind::Json => pretty_json(t),
        Cell::Text(Some(t)) => sanitize::line(t).into_owned(),
        Cell::Time(Some(t)) => local_full(t),
        Cell::Id(Some(id)) => format!("#{id}"),
        Cell::Text(None) | Cell::Time(None) | Cell::Id(None) => return None,
    })
}

/// The lines `show` writes itself: the state with the lock, the lock's token while it is
/// held, who created and who finished the item.
fn own_line(
    item: &Item,
    f: &Field,
    queues: &[QueueSettings],
    now: Millis,
) -> Option<(&'static str, String)> {
    let by = |at: Millis, who: &str| format!("{} by {}", local_full(at), sanitize::line(who));
    match f.col {
        Col::State => Some((
            "state",
            match crate::domain::park::Park::of(item, crate::cli::output::grace_of(item, queues)) {
                Some(p) => p.describe(now),
                None => lock_text(item, queues, now),
            },
        )),
        Col::LockToken => item
            .lock_user
            .is_some()
            .then(|| ("lock_token", item.lock_token.to_string())),
        Col::CreatedAt => Some(("created", by(item.created_at, &item.created_by))),
        Col::FinishedAt => match (item.finished_at, &item.finished_by) {
            (Some(at), Some(who)) => Some(("finished", by(at, who))),
            _ => None,
        },
        _ => line_value(item, f).map(|v| (f.key(), v)),
    }
}

/// JSON text pretty-printed (as it is when it is not JSON).
fn pretty_json(t: &str) -> String {
    serde_json::from_str::<Value>(t)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| t.to_string())
}

/// `name` if anyone is known by it (as `user list` lists them), else `UnknownUser`.
fn known_user(s: &mut dyn Store, name: String) -> Result<String, StoreError> {
    let known: Vec<String> = s.users()?.into_iter().map(|u| u.name).collect();
    if known.contains(&name) {
        Ok(name)
    } else {
        Err(StoreError::UnknownUser { name, known })
    }
}

pub(crate) fn history(
    s: &mut dyn Store,
    user: Option<String>,
    since: Option<String>,
    json: bool,
    out: &mut dyn Write,
) -> CliResult {
    let me = s.actor().name.clone();
    let user = match user {
        // A name nobody is known by is a typo, not someone who did nothing: the same
        // names `assign` accepts (`user list`).
        Some(u) if u != me => known_user(s, u)?,
        u => u.unwrap_or(me),
    };
    let now = s.now()?;
    let since = match since {
        Some(t) => super::time_arg("--since", &t, now, Span::Back)?,
        None => start_of_day(now, display_zone()),
    };
    let events = s.events_by(&user, since)?;
    let audit = s.audit(Some(&user), since)?;
    // Item events and audit records (roles, bindings, queue settings), merged by time.
    let mut rows: Vec<(Millis, Value, String)> = events
        .iter()
        .map(|e| {
            (
                e.at,
                event_json(e),
                format!("#{:<6} {}", e.item_id, event_line(e)),
            )
        })
        .collect();
    rows.extend(
        audit
            .iter()
            .map(|a| (a.at, audit_json(a), format!("{:<7} {}", "", audit_line(a)))),
    );
    rows.sort_by_key(|r| r.0);
    if json {
        write_json(out, &Value::Array(rows.into_iter().map(|r| r.1).collect()))?;
        return Ok(());
    }
    for (_, _, line) in &rows {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

pub(crate) fn stats(s: &mut dyn Store, json: bool, out: &mut dyn Write) -> CliResult {
    let st = s.stats()?;
    let today = ReportQuery {
        period: PeriodKind::Today.period(st.at, display_zone()),
        queue: None,
        rows_only: false,
    };
    if json {
        let mut v = serde_json::to_value(&st)?;
        if today.period.since < today.period.until {
            v["figures"] = serde_json::to_value(s.report(&today)?)?;
        }
        write_json(out, &v)?;
        return Ok(());
    }
    stats_counts(&st, out)?;
    if !st.wip.is_empty() {
        writeln!(out, "work in progress:")?;
        for w in &st.wip {
            writeln!(
                out,
                "  {:<16} {}",
                truncate(&sanitize::line(&w.user), 16),
                w.held
            )?;
        }
    }
    if let Some(o) = &st.oldest_open {
        writeln!(
            out,
            "oldest open item: #{} {} (created {})",
            o.id,
            truncate(&sanitize::line(&o.title), 60),
            local_full(o.created_at)
        )?;
    }
    if today.period.since < today.period.until {
        let r = s.report(&today)?;
        let sum = |f: fn(&crate::store::QueueFigures) -> u64| r.queues.iter().map(f).sum::<u64>();
        writeln!(
            out,
            "today: {} completed, {} failed, {} locks lost, by {} people \
             (caseload report --by person)",
            sum(|q| q.figures.completed),
            sum(|q| q.figures.failed),
            sum(|q| q.figures.lost),
            r.people.len()
        )?;
    }
    Ok(())
}

/// The counts of `caseload stats`: by state, locks, by queue, completions, ages.
fn stats_counts(st: &crate::store::Stats, out: &mut dyn Write) -> CliResult {
    writeln!(out, "items by state:")?;
    for c in &st.by_state {
        writeln!(out, "  {:<10} {}", c.state.as_str(), c.count)?;
    }
    writeln!(
        out,
        "locks: {} held, {} expired; {} overdue open items",
        st.locked, st.expired, st.overdue
    )?;
    writeln!(out, "by queue:")?;
    for q in &st.by_queue {
        writeln!(
            out,
            "  {:<16} open {} (locked {}), done {}, failed {}, cancelled {}{}{}",
            truncate(&sanitize::line(&q.queue), 16),
            q.open,
            q.locked,
            q.done,
            q.failed,
            q.cancelled,
            match q.review {
                0 => String::new(),
                n => format!(", waiting for review {n}"),
            },
            if q.paused { ", paused" } else { "" }
        )?;
    }
    let total: u64 = st.completed_per_hour.iter().sum();
    writeln!(
        out,
        "completed in the last 24h: {total} (per hour, oldest first: {})",
        st.completed_per_hour
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    )?;
    let buckets = |b: &[crate::store::Bucket]| {
        b.iter()
            .map(|b| format!("{} {}", b.label, b.count))
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(out, "open items by age: {}", buckets(&st.open_ages))?;
    writeln!(out, "locks by age: {}", buckets(&st.lock_ages))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_are_grouped() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(3412), "3,412");
        assert_eq!(super::thousands(1_000_000), "1,000,000");
    }
}
