//! Service levels: supervisors set a queue's SLA and its calendar (audited as `queue`,
//! `{sla: …}` before and after); a new item without a due time in a queue with an SLA is
//! due when the SLA's working time has passed ([`crate::domain::sla`]).

use std::borrow::Cow;

use serde_json::{Value, json};

use super::{Tx, known_queue, require_supervisor_of};
use crate::domain::sla::{Sla, SlaUpdate};
use crate::domain::{AuditKind, AuditNote, NewItem};
use crate::store::error::{Result, StoreError};

fn shown(sla: Option<&Sla>) -> Value {
    json!({"sla": sla.map(|s| {
        let spec = s.spec();
        json!({"sla_ms": spec.sla_ms, "hours": spec.hours, "tz": spec.tz,
               "holidays": spec.holidays.join("\n")})
    })})
}

/// Changes queue `queue`'s SLA as `update` says; returns it as it is now (`None`: it
/// has none). Refused when nothing would change.
pub(crate) fn set_sla(tx: &mut dyn Tx, queue: &str, update: &SlaUpdate) -> Result<Option<Sla>> {
    sla_write(tx, queue, update, true)
}

/// As [`set_sla`], but an SLA already as `update` asks is left as it is (the change
/// comes with other settings of the queue, in the same transaction).
pub(crate) fn change_sla(tx: &mut dyn Tx, queue: &str, update: &SlaUpdate) -> Result<Option<Sla>> {
    sla_write(tx, queue, update, false)
}

fn sla_write(
    tx: &mut dyn Tx,
    queue: &str,
    update: &SlaUpdate,
    refuse_same: bool,
) -> Result<Option<Sla>> {
    require_supervisor_of(tx, Some(queue), "change queue settings")?;
    if queue == crate::domain::queue::DEFAULT_QUEUE {
        // There from its first use, as for items and texts.
        tx.ensure_queue(queue)?;
    }
    known_queue(tx, queue)?;
    let cur = tx.sla(queue)?;
    let new = update
        .apply(queue, cur.as_ref())
        .map_err(StoreError::Invalid)?;
    if new == cur && !refuse_same {
        return Ok(new);
    }
    if new == cur {
        return Err(StoreError::Invalid(format!(
            "queue '{queue}' already has that SLA; nothing changed"
        )));
    }
    let note = AuditNote {
        kind: AuditKind::Queue,
        subject: queue.to_string(),
        old: shown(cur.as_ref()),
        new: shown(new.as_ref()),
    };
    tx.put_sla(queue, new.as_ref(), &note)?;
    tracing::info!(queue = %queue, by = %tx.actor().name, "SLA set");
    Ok(new)
}

/// The items as they are added: one without a due time, in a queue with an SLA, is due
/// when the SLA's working time has passed from now. Borrowed when no SLA applies.
pub(crate) fn with_due<'i>(tx: &mut dyn Tx, items: &'i [NewItem]) -> Result<Cow<'i, [NewItem]>> {
    if items.iter().all(|i| i.due_at.is_some()) {
        return Ok(Cow::Borrowed(items));
    }
    let queues: std::collections::BTreeSet<&str> = (items.iter())
        .filter(|i| i.due_at.is_none())
        .map(|i| i.queue.as_str())
        .collect();
    let mut slas = Vec::new();
    for q in queues {
        if let Some(s) = tx.sla(q)? {
            slas.push(s);
        }
    }
    if slas.is_empty() {
        return Ok(Cow::Borrowed(items));
    }
    let now = tx.now();
    let mut out = items.to_vec();
    for it in out.iter_mut().filter(|i| i.due_at.is_none()) {
        if let Some(s) = slas.iter().find(|s| s.queue == it.queue) {
            it.due_at = s.due(now);
        }
    }
    Ok(Cow::Owned(out))
}
