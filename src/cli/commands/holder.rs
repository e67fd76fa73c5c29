//! Subcommands of the lock holder: claim, renew, release, complete, fail.

use std::io::Write;
use std::time::{Duration, Instant};

use crate::domain::time::local_full;
use crate::store::{Store, StoreError, TakeNext, exit};

use crate::cli::args::{HolderArgs, ReasonArgs};
use crate::cli::commands::read::write_item;
use crate::cli::output::{done_line, item_json, write_json};
use crate::cli::{CliResult, Failure};
use crate::domain::texts::Said;

/// `caseload claim [--review]`: takes `id`, or the next item (within `queue`).
pub(crate) fn claim(
    s: &mut dyn Store,
    (queue, id, review): (Option<String>, Option<i64>, bool),
    json: bool,
    out: &mut dyn Write,
) -> CliResult {
    let item = match (id, review) {
        (id, true) => s.take_review(queue.as_deref(), id)?,
        (Some(id), false) => s.take(id)?,
        (None, false) => s.take_next(&TakeNext {
            queue,
            skip: vec![],
        })?,
    };
    if json {
        write_json(out, &item_json(&item)?)?;
    } else {
        write_item(s, &item, out)?;
    }
    Ok(())
}

/// How often `claim --wait` looks at the change marker: `PRAGMA data_version` on SQLite
/// (a read of the shared memory, no I/O), on PostgreSQL the change counter, which the
/// store reads at most every 250 ms (one small round trip). Idle, that is a few
/// microseconds of work every 100 ms.
pub(crate) const WAIT_POLL: Duration = Duration::from_millis(100);

/// How often `claim --wait` counts what could be taken without any change: a lock
/// expiring makes an item takeable without anybody writing.
const WAIT_RECOUNT: Duration = Duration::from_secs(2);

/// `caseload claim --wait`: takes the next item, waiting until there is one. Between
/// attempts it only reads: it tries again when the database changed (another user's add,
/// release, unpause…) or a lock expired. A lost or refused connection is waited out too
/// (said on stderr; the store tries again after a growing pause, at most 30 s).
pub(crate) fn claim_wait(
    s: &mut dyn Store,
    (queue, review): (Option<String>, bool),
    timeout: Option<u64>,
    json: bool,
    out: &mut dyn Write,
) -> CliResult {
    let deadline = timeout.map(|t| Instant::now() + Duration::from_secs(t));
    let next = TakeNext {
        queue,
        skip: vec![],
    };
    let pause = &mut |why: &str| pause_until(deadline, timeout, why).map(|()| true);
    let Some(item) = take_waiting(s, &next, review, pause)? else {
        return Ok(());
    };
    if json {
        write_json(out, &item_json(&item)?)?;
    } else {
        write_item(s, &item, out)?;
    }
    Ok(())
}

/// Takes the next item (or review), waiting until there is one: between attempts it only
/// reads, trying again when the database changed or (every few seconds) something became
/// takeable without a write (a lock expiring). `pause(why)` is called instead of each
/// poll's sleep: it sleeps and returns true to go on waiting, false to give up (`None`),
/// or fails. A lost or refused connection is waited out (said once on stderr).
pub(crate) fn take_waiting(
    s: &mut dyn Store,
    next: &TakeNext,
    review: bool,
    pause: &mut dyn FnMut(&str) -> Result<bool, Failure>,
) -> Result<Option<crate::domain::Item>, Failure> {
    let mut said = None;
    loop {
        // The marker first: a change between it and the attempt is seen by the wait below.
        let marker = match s.change_marker() {
            Err(e) if offline(&e, &mut said) => {
                if !pause("the server is not reachable")? {
                    return Ok(None);
                }
                continue;
            }
            m => m?,
        };
        let taken = match review {
            true => s.take_review(next.queue.as_deref(), None),
            false => s.take_next(next),
        };
        let why = match taken {
            Ok(item) => return Ok(Some(item)),
            Err(e) if e.exit_code() == exit::NOTHING => e.to_string(),
            Err(e) if offline(&e, &mut said) => "the server is not reachable".to_string(),
            Err(e) => return Err(e.into()),
        };
        let mut counted = Instant::now();
        loop {
            if !pause(&why)? {
                return Ok(None);
            }
            match s.change_marker() {
                Ok(m) if m != marker => break,
                Ok(_) => {}
                Err(e) if offline(&e, &mut said) => continue,
                Err(e) => return Err(e.into()),
            }
            if counted.elapsed() >= WAIT_RECOUNT {
                counted = Instant::now();
                // A review lock expiring is looked for by trying again.
                if review {
                    break;
                }
                match s.takeable(next.queue.as_deref(), 1) {
                    Ok(n) if n > 0 => break,
                    Ok(_) => {}
                    Err(e) if offline(&e, &mut said) => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
    }
}

/// Sleeps one poll, or fails with exit 4 when `--timeout` has run out (`why`: what was
/// waited for).
fn pause_until(deadline: Option<Instant>, timeout: Option<u64>, why: &str) -> CliResult {
    let left = match deadline {
        Some(d) => d.saturating_duration_since(Instant::now()),
        None => WAIT_POLL,
    };
    if left.is_zero() {
        return Err(Failure {
            code: exit::NOTHING,
            error: anyhow::anyhow!(
                "still {why} after waiting {} s",
                timeout.unwrap_or_default()
            ),
        });
    }
    std::thread::sleep(left.min(WAIT_POLL));
    Ok(())
}

/// True when `e` is a lost or refused connection, which a waiting claim waits out; its
/// line is said on stderr once (the store's next attempt says when it tries again).
pub(crate) fn offline(e: &StoreError, said: &mut Option<String>) -> bool {
    if !matches!(e, StoreError::Connection(_)) {
        return false;
    }
    let line = e.to_string();
    if said.as_ref() != Some(&line) {
        eprintln!("caseload: {}", crate::domain::sanitize::line(&line));
        *said = Some(line);
    }
    true
}

/// The token a holder command applies to: `--token`, else the item's current one. The
/// store decides with it: the caller's own lock is written; anything else is explained
/// (who took it and when) or, for a retried complete, fail or release whose answer was
/// lost, acknowledged as already done.
pub(crate) fn token_for(s: &mut dyn Store, h: &HolderArgs) -> Result<i64, Failure> {
    match h.token {
        Some(t) => Ok(t),
        None => Ok(s.item(h.id)?.lock_token),
    }
}

/// `--json`: the item as it is now, after the holder's write.
fn new_state(s: &mut dyn Store, id: i64, out: &mut dyn Write) -> CliResult {
    let item = s.item(id)?;
    write_json(out, &item_json(&item)?)?;
    Ok(())
}

/// `caseload renew`: extends the holder's lock.
pub(crate) fn renew(s: &mut dyn Store, h: &HolderArgs, out: &mut dyn Write) -> CliResult {
    let token = token_for(s, h)?;
    let item = s.renew(h.id, token)?;
    if h.json {
        write_json(out, &item_json(&item)?)?;
        return Ok(());
    }
    let until = item.lock_expires_at.unwrap_or(0);
    writeln!(out, "Renewed #{} until {}", item.id, local_full(until))?;
    Ok(())
}

/// `caseload release` (and `skip`, recorded as skipped): gives the item back to the
/// queue, with the reason given, if any.
pub(crate) fn release(
    s: &mut dyn Store,
    h: &HolderArgs,
    r: &ReasonArgs,
    skip: bool,
    out: &mut dyn Write,
) -> CliResult {
    let token = token_for(s, h)?;
    let said = Said::text(r.reason.as_deref()).coded(r.code.as_deref());
    let applied = match skip {
        true => s.skip_said(h.id, token, said)?,
        false => s.release_said(h.id, token, said)?,
    };
    if h.json {
        return new_state(s, h.id, out);
    }
    let line = match skip {
        true => done_line(h.id, "Skipped", "skipped", applied),
        false => done_line(h.id, "Released", "released", applied),
    };
    writeln!(out, "{line}")?;
    Ok(())
}

/// `caseload complete`: finishes the item.
pub(crate) fn complete(
    s: &mut dyn Store,
    h: &HolderArgs,
    result: Said<'_>,
    over: Option<&str>,
    out: &mut dyn Write,
) -> CliResult {
    let token = token_for(s, h)?;
    let applied = s.complete_said(h.id, token, result, over)?;
    if h.json {
        return new_state(s, h.id, out);
    }
    let line = done_line(h.id, "Completed", "completed", applied);
    writeln!(out, "{line}{}", super::review::waits(s, h.id)?)?;
    Ok(())
}

/// `caseload complete --next`: finishes the item and takes the next one in the same
/// transaction, printed as `claim` prints it. When nothing is left the complete still
/// happened: it is said on stdout (text) and the refusal exits 4.
pub(crate) fn complete_next(
    s: &mut dyn Store,
    h: &HolderArgs,
    (result, over): (Said<'_>, Option<&str>),
    queue: Option<String>,
    out: &mut dyn Write,
) -> CliResult {
    let json = h.json;
    let token = token_for(s, h)?;
    let next = TakeNext {
        queue,
        skip: vec![],
    };
    let done = s.complete_and_next_said(h.id, token, result, over, &next)?;
    if !json {
        let line = done_line(h.id, "Completed", "completed", done.finished);
        writeln!(out, "{line}{}", super::review::waits(s, h.id)?)?;
    }
    let item = done.next.map_err(|e| Failure {
        code: e.exit_code(),
        error: anyhow::anyhow!("completed #{}; {e}", h.id),
    })?;
    if json {
        write_json(out, &item_json(&item)?)?;
    } else {
        write_item(s, &item, out)?;
    }
    Ok(())
}

/// `caseload fail`: finishes the item as failed, with a reason.
pub(crate) fn fail(
    s: &mut dyn Store,
    h: &HolderArgs,
    reason: Said<'_>,
    out: &mut dyn Write,
) -> CliResult {
    let token = token_for(s, h)?;
    let applied = s.fail_said(h.id, token, reason)?;
    if h.json {
        return new_state(s, h.id, out);
    }
    writeln!(out, "{}", done_line(h.id, "Failed", "failed", applied))?;
    Ok(())
}
