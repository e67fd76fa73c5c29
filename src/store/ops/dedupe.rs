//! Duplicates (issue 27), written once for both backends: the keys of duplicate-key
//! fields kept with every write of an item's params or queue, a merge (the duplicate
//! cancelled with `duplicate_of`, its lock released, events on both items, a line in the
//! survivor's thread) and "not the same" (a pair never offered again).

use serde_json::json;

use super::holder::explain_loss;
use super::{ItemWrite, Tx, found, require_supervisor};
use crate::domain::duplicates::{Pair, Verdict, has_keys, keys_of, ordered};
use crate::domain::item::check_text;
use crate::domain::queue_fields::FieldDef;
use crate::domain::{EventKind, ItemState, NewItem, Role};
use crate::store::Added;
use crate::store::error::{Result, StoreError};
use crate::store::sql::{FENCE_HOLDER, FENCE_TOKEN, SET_MERGE};

/// How many items a queue's keys are rebuilt for per read.
const REKEY_PAGE: usize = 5000;

/// Writes item `id`'s keys from its params (`defs`: its queue's fields).
pub(crate) fn put_keys_of(tx: &mut dyn Tx, id: i64, defs: &[FieldDef], params: &str) -> Result<()> {
    tx.put_keys(id, &keys_of(defs, params))
}

/// Rebuilds item `id`'s keys from its row (after its queue changed).
pub(crate) fn rekey_item(tx: &mut dyn Tx, id: i64) -> Result<()> {
    let item = found(id, tx.item(id)?)?;
    let defs = tx.fields(&item.queue)?;
    put_keys_of(tx, id, &defs, &item.params)
}

/// The keys of newly added items (`added`, one per item of `items`), for the queues that
/// have key fields; a queue without any costs one read of its fields per call.
pub(crate) fn keys_of_added(tx: &mut dyn Tx, items: &[NewItem], added: &[Added]) -> Result<()> {
    let mut defs_of: Vec<(String, Vec<FieldDef>)> = Vec::new();
    for (item, a) in items.iter().zip(added).filter(|(_, a)| a.created) {
        let i = match defs_of.iter().position(|(q, _)| *q == item.queue) {
            Some(i) => i,
            None => {
                defs_of.push((item.queue.clone(), tx.fields(&item.queue)?));
                defs_of.len() - 1
            }
        };
        let defs = &defs_of[i].1;
        if has_keys(defs) {
            let keys = keys_of(defs, &item.params);
            if !keys.is_empty() {
                tx.put_keys(a.id, &keys)?;
            }
        }
    }
    Ok(())
}

/// Adds `items` but those whose duplicate key equals one of an open item of their queue
/// (`import --skip-duplicates`), in the caller's transaction: for those, the [`Added`]
/// names the open item, `skipped` set. A row whose request id that item already has is a
/// retry (a re-import), not a duplicate: it is added as usual (and found already there).
pub(crate) fn add_skipping_duplicates(tx: &mut dyn Tx, items: &[NewItem]) -> Result<Vec<Added>> {
    let mut defs_of: Vec<(String, Vec<FieldDef>)> = Vec::new();
    let mut open_twin: Vec<Option<i64>> = Vec::with_capacity(items.len());
    for item in items {
        let i = match defs_of.iter().position(|(q, _)| *q == item.queue) {
            Some(i) => i,
            None => {
                defs_of.push((item.queue.clone(), tx.fields(&item.queue)?));
                defs_of.len() - 1
            }
        };
        let mut twin = None;
        'keys: for (field, key) in keys_of(&defs_of[i].1, &item.params) {
            for other in tx.key_matches(&item.queue, &field, &key, 0, SKIP_LOOKS)? {
                let Some(o) = tx.item(other)? else { continue };
                if o.request_id.is_some() && o.request_id == item.request_id {
                    break 'keys;
                }
                if o.state == ItemState::Open {
                    twin = Some(other);
                    break 'keys;
                }
            }
        }
        open_twin.push(twin);
    }
    let kept: Vec<NewItem> = (items.iter().zip(&open_twin))
        .filter(|(_, t)| t.is_none())
        .map(|(i, _)| i.clone())
        .collect();
    let added = tx.insert_items(&kept)?;
    keys_of_added(tx, &kept, &added)?;
    let mut added = added.into_iter();
    let mut out = Vec::with_capacity(items.len());
    for twin in open_twin {
        out.push(match twin {
            Some(id) => Added {
                id,
                created: false,
                skipped: true,
            },
            None => added
                .next()
                .ok_or_else(|| StoreError::Database("an item of the batch was not added".into()))?,
        });
    }
    Ok(out)
}

/// How many items with an equal key are looked at for an open one, per key.
const SKIP_LOOKS: usize = 50;

/// Rebuilds the keys of every item of `queue` (its key fields changed): in pages by id,
/// each page's keys replaced in one go ([`Tx::replace_keys`]), all in the caller's
/// transaction. Returns how many items were rekeyed.
pub(crate) fn rekey_queue(tx: &mut dyn Tx, queue: &str) -> Result<u64> {
    // The params are read unlocked and the keys written a page later: a `set` committing
    // its params and keys in between had its keys replaced by the old params' (found by
    // the 20-minute PostgreSQL soak, seed 7202: `check` found an item's keys stale twice).
    tx.hold_off_key_writes()?;
    let defs = tx.fields(queue)?;
    let (mut after, mut n) = (0, 0u64);
    loop {
        let page = tx.queue_params(queue, after, REKEY_PAGE)?;
        let Some(last) = page.last() else {
            return Ok(n);
        };
        after = last.0;
        let ids: Vec<i64> = page.iter().map(|(id, _)| *id).collect();
        let keys: Vec<(i64, String, String)> = (page.iter())
            .flat_map(|(id, params)| {
                let keys = keys_of(&defs, params);
                keys.into_iter().map(move |(field, key)| (*id, field, key))
            })
            .collect();
        tx.replace_keys(&ids, &keys)?;
        n += page.len() as u64;
    }
}

/// True when a change of a field's definition changes its keys (`before`/`after`: the
/// definition, `None` when there is none).
pub(crate) fn keys_change(before: Option<&FieldDef>, after: Option<&FieldDef>) -> bool {
    use crate::domain::duplicates::Dedupe;
    fn keyed(d: Option<&FieldDef>) -> Option<&FieldDef> {
        d.filter(|d| d.dedupe == Some(Dedupe::Key))
    }
    match (keyed(before), keyed(after)) {
        (None, None) => false,
        (Some(b), Some(a)) => b.kind != a.kind || b.country != a.country || b.choices != a.choices,
        _ => true,
    }
}

/// What a merge did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The duplicate, now cancelled.
    pub id: i64,
    /// The item it went into.
    pub into: i64,
}

/// Merges open item `id` into `into` (the holder of `id`, fenced by `token`; or a
/// supervisor, whoever holds it): in one transaction `id` becomes cancelled with
/// `duplicate_of` set (and in its `cancelled` event) (its lock released, its hold ended), `into`'s
/// thread gets a line naming it with a `noted` event `{merged_in, comment_id}`, and the
/// pair is remembered as the same. Refused: itself, an item that was itself merged (its
/// survivor named), another queue (supervisors only), a finished `id`, a non-holder.
pub(crate) fn merge(
    tx: &mut dyn Tx,
    id: i64,
    into: i64,
    token: Option<i64>,
    reason: Option<&str>,
) -> Result<Merged> {
    let reason = reason.map(str::trim).filter(|r| !r.is_empty());
    if let Some(r) = reason {
        check_text("reason", r).map_err(StoreError::Invalid)?;
    }
    if id == into {
        return Err(StoreError::Invalid(format!(
            "#{id} cannot be merged into itself"
        )));
    }
    let item = found(id, tx.item_for_update(id)?)?;
    let other = found(into, tx.item_for_update(into)?)?;
    if let Some(next) = other.duplicate_of {
        return Err(StoreError::Invalid(format!(
            "#{into} was itself merged into #{next}: merge into #{next} instead \
             (caseload merge {id} --into {next})"
        )));
    }
    if item.state != ItemState::Open {
        return Err(super::not_open(&item));
    }
    let me = tx.actor().name.clone();
    let holder = match token {
        Some(t) if item.held_with(&me, t) => Some(t),
        Some(t) => return Err(explain_loss(tx, id, t)?),
        None if item.lock_user.as_deref() == Some(me.as_str()) => Some(item.lock_token),
        None => None,
    };
    if holder.is_none() {
        if tx.role_of(&me)? == Role::Staff {
            return Err(explain_loss(tx, id, item.lock_token)?);
        }
        require_supervisor(tx, "merge items they do not hold")?;
    }
    if other.queue != item.queue {
        require_supervisor(tx, "merge into an item of another queue").map_err(|_| {
            StoreError::SupervisorOnly(format!(
                "#{into} is in queue '{}', #{id} in '{}': only a supervisor merges across queues",
                other.queue, item.queue
            ))
        })?;
    }
    let error = match reason {
        Some(r) => format!("duplicate of #{into}: {r}"),
        None => format!("duplicate of #{into}"),
    };
    let w = ItemWrite {
        set: SET_MERGE,
        fence: if holder.is_some() {
            FENCE_HOLDER
        } else {
            FENCE_TOKEN
        },
        value: Some(&error),
        arg: Some(into),
        kind: EventKind::Cancelled,
        detail: json!({"from": item.lock_user, "reason": reason, "duplicate_of": into,
                       "token": holder}),
    };
    if !tx.write_item(id, holder.unwrap_or(item.lock_token), &w)? {
        return Err(match holder {
            Some(t) => explain_loss(tx, id, t)?,
            None => StoreError::Database(format!(
                "#{id} changed while it was held for the merge; nothing done"
            )),
        });
    }
    let line = match reason {
        Some(r) => format!("#{id} was merged into this item as a duplicate by {me}: {r}"),
        None => format!("#{id} was merged into this item as a duplicate by {me}"),
    };
    let cid = tx.insert_comment(into, &line)?;
    tx.insert_event(
        into,
        EventKind::Noted,
        &json!({"merged_in": id, "reason": reason, "comment_id": cid}),
    )?;
    judge(tx, id, into, Verdict::Same)?;
    tracing::info!(id, into, by = %me, "merged as a duplicate");
    Ok(Merged { id, into })
}

fn judge(tx: &mut dyn Tx, a: i64, b: i64, verdict: Verdict) -> Result<()> {
    let (low, high) = ordered(a, b);
    let pair = Pair {
        low,
        high,
        verdict,
        actor: tx.actor().name.clone(),
        at: tx.now(),
    };
    tx.put_pair(&pair)
}

/// Remembers that items `a` and `b` are not the same (either order), so the pair is
/// never offered again, for anybody; a `noted` event `{not_same}` on each. Refused for
/// an item with itself, a pair already judged.
pub(crate) fn not_duplicate(tx: &mut dyn Tx, a: i64, b: i64) -> Result<()> {
    if a == b {
        return Err(StoreError::Invalid(format!(
            "#{a} is the same item as itself; name two items"
        )));
    }
    found(a, tx.item(a)?)?;
    found(b, tx.item(b)?)?;
    let (low, high) = ordered(a, b);
    if let Some(p) = tx.pair(low, high)? {
        let said = match p.verdict {
            Verdict::Same => "merged as the same",
            Verdict::NotSame => "marked not the same",
        };
        return Err(StoreError::Invalid(format!(
            "#{a} and #{b} were already {said} by {}; nothing changed",
            p.actor
        )));
    }
    judge(tx, a, b, Verdict::NotSame)?;
    tx.insert_event(a, EventKind::Noted, &json!({"not_same": b}))?;
    tx.insert_event(b, EventKind::Noted, &json!({"not_same": a}))?;
    Ok(())
}
