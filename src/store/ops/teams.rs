//! Who may take what, team leads, people who leave (issue 29 §2–§4).
//!
//! * Eligibility: a person takes (reviews) only in their queues (`user set NAME --queues
//!   a,b|all --reviews a,b|all|none`). The claim's conditional write holds the condition
//!   itself ([`crate::store::sql::eligible!`]), so no take slips past it; the checks here
//!   only give the refusal its reason first (exit 5), and let `assign` name who may.
//! * Leads: a lead has a supervisor's rights in the queues they may take from, and no
//!   others ([`require_supervisor_of`]).
//! * Leavers: one transaction returns a leaver's locks, assignments and parked items to
//!   the pool (an event on each), removes their login binding and marks them as left
//!   (one audit record); pending reviews of their work stay for someone else.

use serde_json::json;

use super::{ItemWrite, Tx, known_queue, require_supervisor};
use crate::domain::user::may_act_as;
use crate::domain::{AuditKind, AuditNote, EventKind, ItemState, Queues, Role, Work};
use crate::store::error::{Result, StoreError};
use crate::store::sql::{FENCE_TOKEN, SET_RELEASE};

/// What `user set` changes in one transaction (each part when given).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserChange {
    pub role: Option<Role>,
    /// `Some(None)` removes the binding.
    pub login: Option<Option<String>>,
    pub queues: Option<Queues>,
    pub reviews: Option<Queues>,
    /// Marks them as leaving, for this reason.
    pub leaving: Option<String>,
    /// Undoes the leaving mark.
    pub back: bool,
}

/// What `user set` did, for its answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserChanged {
    /// Items whose lock or assignment a leaver lost (returned to the pool or to review).
    pub released: Vec<i64>,
    /// A leaver's parked items returned to the pool.
    pub unparked: Vec<i64>,
}

/// Applies `change` to `user` (supervisors only), in order: leaving or back, queues,
/// role, login.
pub(crate) fn change_user(tx: &mut dyn Tx, user: &str, c: &UserChange) -> Result<UserChanged> {
    require_supervisor(tx, "change people")?;
    let mut done = UserChanged::default();
    if c.back {
        back(tx, user)?;
    }
    if c.queues.is_some() || c.reviews.is_some() {
        set_access(tx, user, c.queues.as_ref(), c.reviews.as_ref())?;
    }
    if let Some(role) = c.role {
        super::supervise::set_role(tx, user, role)?;
    }
    if let Some(login) = &c.login {
        super::supervise::set_login(tx, user, login.as_deref())?;
    }
    if let Some(why) = &c.leaving {
        done = leave(tx, user, why)?;
    }
    Ok(done)
}

/// Sets the queues `user` may take from and review in (the other list kept when `None`);
/// every queue named must exist.
fn set_access(
    tx: &mut dyn Tx,
    user: &str,
    queues: Option<&Queues>,
    reviews: Option<&Queues>,
) -> Result<()> {
    for list in [queues, reviews].into_iter().flatten() {
        if let Queues::Only(names) = list {
            for q in names {
                known_queue(tx, q)?;
            }
        }
    }
    let cur = tx.access(user)?;
    let takes = queues.unwrap_or(&cur.takes).clone();
    let reviews = reviews.unwrap_or(&cur.reviews).clone();
    if cur.role == Role::Lead && takes == Queues::All {
        return Err(StoreError::Invalid(format!(
            "{user} is a lead: a lead leads the queues they may take from, so they need a \
             list (--queues a,b), not all; make them a supervisor to supervise everything"
        )));
    }
    let note = AuditNote {
        kind: AuditKind::Access,
        subject: user.to_string(),
        old: json!({"queues": cur.takes, "reviews": cur.reviews}),
        new: json!({"queues": takes, "reviews": reviews}),
    };
    tx.put_access(user, &takes, &reviews, &note)?;
    tracing::info!(user = %user, queues = %takes.words(), reviews = %reviews.words(),
                   by = %tx.actor().name, "queues changed");
    Ok(())
}

/// A lead needs a list of queues (set before, or in the same `user set`).
pub(super) fn check_lead(tx: &mut dyn Tx, user: &str) -> Result<()> {
    if tx.access(user)?.takes == Queues::All {
        return Err(StoreError::Invalid(format!(
            "a lead supervises the queues they may take from: give {user} their queues \
             (`caseload user set {user} --role lead --queues a,b`)"
        )));
    }
    Ok(())
}

/// Marks `user` as leaving: their locks (assignments included) go back to the pool, or
/// to review for a review they held, each with an `unlocked` event; their parked items
/// back to the pool (`woke {by: leaving}`); their login binding removed; one audit
/// record saying what was returned.
fn leave(tx: &mut dyn Tx, user: &str, reason: &str) -> Result<UserChanged> {
    if user == tx.actor().name {
        return Err(StoreError::Invalid(
            "you cannot mark yourself as leaving; ask another supervisor".into(),
        ));
    }
    let cur = tx.access(user)?;
    if let Some((_, why)) = &cur.left {
        return Err(StoreError::Invalid(format!(
            "{user} has left already ({why}); `--back` undoes it"
        )));
    }
    if cur.role == Role::Supervisor && tx.supervisors_besides(user)? == 0 {
        return Err(StoreError::Invalid(format!(
            "{user} is the last supervisor; make someone else supervisor first"
        )));
    }
    let mut done = UserChanged::default();
    for item in tx.held_by(user)? {
        let detail = json!({"from": user, "reason": reason, "token": item.lock_token,
                            "leaving": true,
                            "assigned": item.lock().is_some_and(|l| l.is_assignment())});
        let w = ItemWrite {
            set: SET_RELEASE,
            fence: FENCE_TOKEN,
            value: None,
            arg: None,
            kind: EventKind::Unlocked,
            detail,
        };
        if tx.write_item(item.id, item.lock_token, &w)? {
            done.released.push(item.id);
        }
    }
    for item in tx.parked(Some(user), i64::MAX, false, i64::MAX as usize)? {
        if item.state == ItemState::Parked && super::park::return_for_leaver(tx, &item)? {
            done.unparked.push(item.id);
        }
    }
    let note = AuditNote {
        kind: AuditKind::Leaving,
        subject: user.to_string(),
        old: json!({"left": false, "login": tx.login_of(user)?}),
        new: json!({"left": true, "reason": reason, "released": done.released,
                    "unparked": done.unparked}),
    };
    tx.put_leaving(user, Some(reason), &note)?;
    tracing::info!(user = %user, released = done.released.len(), unparked = done.unparked.len(),
                   by = %tx.actor().name, "marked as leaving");
    Ok(done)
}

/// Undoes `user`'s leaving mark (their login binding stays removed).
fn back(tx: &mut dyn Tx, user: &str) -> Result<()> {
    let cur = tx.access(user)?;
    if cur.left.is_none() {
        return Err(StoreError::Invalid(format!("{user} has not left")));
    }
    let note = AuditNote {
        kind: AuditKind::Leaving,
        subject: user.to_string(),
        old: json!({"left": true, "reason": cur.left.map(|(_, why)| why)}),
        new: json!({"left": false}),
    };
    tx.put_leaving(user, None, &note)
}

/// Refuses the actor `work` in `queue` when they have left or it is not one of theirs
/// (`NotEligible`, exit 5, naming the reason).
pub(crate) fn require_eligible(tx: &mut dyn Tx, work: Work, queue: &str) -> Result<()> {
    let me = tx.actor().name.clone();
    tx.access(&me)?
        .may(&me, work, queue)
        .map_err(StoreError::NotEligible)
}

/// Refuses to give an item of `queue` to `to` when they may not take from it, naming who
/// may (everyone known who may take from it and has not left).
pub(crate) fn require_assignable(tx: &mut dyn Tx, to: &str, queue: &str) -> Result<()> {
    let Err(why) = tx.access(to)?.may(to, Work::Take, queue) else {
        return Ok(());
    };
    let mut who = Vec::new();
    for name in tx.user_names()? {
        if tx.access(&name)?.may(&name, Work::Take, queue).is_ok() {
            who.push(name);
        }
    }
    let who = match who.is_empty() {
        true => "nobody known".to_string(),
        false => who.join(", "),
    };
    Err(StoreError::NotEligible(format!(
        "{why}; who may take from queue '{queue}': {who}"
    )))
}

/// Refuses the actor a supervisor's `action` in `queue` unless they are a supervisor or
/// a lead of that queue (and their real identity may use the name). With no queue (the
/// item is not read yet), a lead of any queue passes: call it again with the queue.
pub(crate) fn require_supervisor_of(
    tx: &mut dyn Tx,
    queue: Option<&str>,
    action: &str,
) -> Result<()> {
    let me = tx.actor().name.clone();
    let access = tx.access(&me)?;
    let lead_somewhere = queue.is_none() && access.role == Role::Lead && access.left.is_none();
    if !lead_somewhere && !access.supervises(queue) {
        let why = match (access.role, &access.left, queue) {
            (_, Some(_), _) => format!("{me} has left and may not {action}"),
            (Role::Lead, None, Some(q)) => format!(
                "{me} leads {} only and may not {action} in queue '{q}'",
                access.takes.words()
            ),
            _ => format!("{me} is staff and may not {action}"),
        };
        return Err(StoreError::SupervisorOnly(why));
    }
    let real = tx.ctx().real.clone();
    let bound = tx.login_of(&me)?;
    may_act_as(&me, &real, bound.as_deref()).map_err(StoreError::NotYou)
}
