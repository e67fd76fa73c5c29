//! Supervisor actions in the TUI: which item a key means, the shared confirmation dialog
//! each one opens, the checks made before the store is asked (role, target, typed values)
//! and what the supervisor is told afterwards. Also the read-only activity report ("what
//! did bob do today"), which anyone may open.

use super::set_error;
use crate::app::keymap::Action;
use crate::app::{Dialog, Effect, FieldSpec, Pending, State, SupervisorOp, View};
use crate::domain::fields::{FieldError, Input};
use crate::domain::sanitize;
use crate::domain::time::{short_duration, start_of_day};
use crate::domain::user::validate_user_name;
use crate::domain::{Item, ItemState, LockStatus, QueueUpdate, SeenLock, Setting, TakeOrder};

/// True for a supervisor or a lead (the store refuses a lead outside their queues);
/// else says why `what` is refused (staff, or a role the database has not told yet) and
/// nothing reaches the store.
pub(super) fn supervisor(s: &mut State, what: &str) -> bool {
    if s.role.supervises() {
        return true;
    }
    let why = match s.role_known {
        true => "you are staff",
        false => "your role could not be read from the database yet",
    };
    set_error(
        s,
        format!("Supervisor only: {what} needs the supervisor role ({why})"),
    );
    false
}

/// Runs a supervisor key. Staff are told "supervisor only" and nothing reaches the store;
/// the activity report is read-only and open to everyone.
pub(super) fn act(s: &mut State, a: Action) -> Vec<Effect> {
    if a == Action::Activity {
        return activity(s);
    }
    let what = match a {
        Action::Unlock => "unlocking",
        Action::Reassign => "reassigning",
        Action::UnlockAll => "unlocking in bulk",
        Action::Requeue => "requeueing",
        Action::CancelItem => "cancelling",
        _ => "changing queue settings",
    };
    if !supervisor(s, what) {
        return vec![];
    }
    match a {
        Action::Unlock => unlock(s),
        Action::Reassign => reassign(s),
        Action::UnlockAll => {
            if s.view != View::Locks || s.detail.is_some() {
                set_error(
                    s,
                    "U unlocks every lock the Locks view shows: press 3, filter with /, then U"
                        .into(),
                );
                return vec![];
            }
            vec![Effect::CollectLocks(s.locks_filter.clone())]
        }
        Action::Requeue => requeue(s),
        Action::CancelItem => cancel(s),
        Action::QueueSettings => queue_settings(s),
        _ => vec![],
    }
}

/// The item a key acts on: the open detail, else the selected row of the list on screen.
fn selected(s: &State) -> Option<Item> {
    if let Some(d) = &s.detail {
        return Some(d.item.clone());
    }
    s.pane(s.view)?.selected_item().cloned()
}

/// How a lock looks now, e.g. "EXPIRED 15m00s ago" or "12m00s left".
fn lock_words(s: &State, item: &Item) -> String {
    match s.lock_status(item) {
        LockStatus::Expired { overrun, .. } => {
            format!("EXPIRED {} ago", short_duration(overrun))
        }
        LockStatus::Held { remaining, .. } => format!("{} left", short_duration(remaining)),
        LockStatus::Free => "free".into(),
        LockStatus::Assigned { .. } => "assigned, not opened yet".into(),
    }
}

fn locked_target(s: &mut State, verb: &str) -> Option<(Item, String)> {
    match selected(s) {
        Some(item) if item.lock_user.is_some() && item.state == ItemState::Open => {
            let holder = sanitize::line(item.lock_user.as_deref().unwrap_or("")).into_owned();
            Some((item, holder))
        }
        Some(item) => {
            set_error(s, format!("#{} is not locked; nothing to {verb}", item.id));
            None
        }
        None => {
            set_error(
                s,
                format!("Select a lock to {verb} first (Locks view: press 3)"),
            );
            None
        }
    }
}

fn unlock(s: &mut State) -> Vec<Effect> {
    if let Some(item) = selected(s).filter(|i| i.state == ItemState::Parked) {
        return unpark(s, item);
    }
    let Some((item, holder)) = locked_target(s, "unlock") else {
        return vec![];
    };
    let Some(seen) = SeenLock::of(&item) else {
        set_error(s, format!("#{} is not locked; nothing to unlock", item.id));
        return vec![];
    };
    let message = format!(
        "#{} {}\nHeld by {holder} ({}). The item goes back to the pool and {holder} is told.",
        item.id,
        sanitize::line(&item.title),
        lock_words(s, &item)
    );
    s.dialog = Some(
        Dialog::new(
            format!("Unlock #{}?", item.id),
            message,
            Pending::Unlock { seen },
        )
        .field(
            FieldSpec::reason("Reason (required, recorded and shown to the holder)"),
            "",
        ),
    );
    vec![]
}

/// `u` on a parked item (the Locks view's `P` rows): its park ends now and it returns to
/// the pool, its owner told by the item leaving their Parked list (`woke {by:
/// supervisor}`).
fn unpark(s: &mut State, item: Item) -> Vec<Effect> {
    let grace = s.queue(&item.queue).park_grace_ms();
    let park = crate::domain::park::Park::of(&item, grace)
        .map(|p| p.describe(s.now))
        .unwrap_or_else(|| "parked".into());
    let message = format!(
        "#{} {}\nIt is {park}. Its park ends now and it goes back to the pool.",
        item.id,
        sanitize::line(&item.title),
    );
    s.dialog = Some(Dialog::new(
        format!("Unpark #{}?", item.id),
        message,
        Pending::Unpark { id: item.id },
    ));
    vec![]
}

fn reassign(s: &mut State) -> Vec<Effect> {
    // An open item nobody holds is assigned instead.
    if let Some(item) = selected(s).filter(|i| i.state == ItemState::Open && i.lock_user.is_none())
    {
        super::assign::assign_dialog(s, &item);
        return vec![];
    }
    let Some((item, holder)) = locked_target(s, "reassign") else {
        return vec![];
    };
    let message = format!(
        "#{} {}\nHeld by {holder} ({}). The new holder gets a fresh lock; {holder} is told. \
         Assign instead: it waits in their Mine with no lock clock until they open it.",
        item.id,
        sanitize::line(&item.title),
        lock_words(s, &item)
    );
    s.dialog = Some(
        Dialog::new(
            format!("Reassign #{}?", item.id),
            message,
            Pending::Reassign {
                id: item.id,
                token: item.lock_token,
            },
        )
        .field(
            FieldSpec::required(super::assign::TO_USER, "To user (required; Tab completes)"),
            "",
        )
        .field(
            FieldSpec::reason("Reason (required, recorded and shown to the holder)"),
            "",
        )
        .field(
            FieldSpec::required(
                "Assign instead",
                "Assign instead, no lock clock until opened (yes/no)",
            ),
            "no",
        ),
    );
    vec![]
}

fn requeue(s: &mut State) -> Vec<Effect> {
    let Some(item) = selected(s) else {
        set_error(
            s,
            "Select a failed item first (Queue view: / state:failed, then R)".into(),
        );
        return vec![];
    };
    if !matches!(item.state, ItemState::Failed | ItemState::Cancelled) {
        set_error(
            s,
            format!(
                "#{} is {}; only failed or cancelled items can be requeued (/ state:failed lists them)",
                item.id,
                item.state.as_str()
            ),
        );
        return vec![];
    }
    let why = item
        .error
        .as_deref()
        .map(|e| format!(" ({})", sanitize::line(e)))
        .unwrap_or_default();
    let message = format!(
        "#{} {}\nIt is {}{why}. It goes back to its queue as open.",
        item.id,
        sanitize::line(&item.title),
        item.state.as_str()
    );
    s.dialog = Some(Dialog::new(
        format!("Requeue #{}?", item.id),
        message,
        Pending::Requeue { id: item.id },
    ));
    vec![]
}

fn cancel(s: &mut State) -> Vec<Effect> {
    let Some(item) = selected(s) else {
        set_error(s, "Select an open item to cancel first".into());
        return vec![];
    };
    if item.state != ItemState::Open {
        set_error(
            s,
            format!(
                "#{} is {}; only open items can be cancelled",
                item.id,
                item.state.as_str()
            ),
        );
        return vec![];
    }
    let held = match &item.lock_user {
        Some(h) => format!(
            "\nHeld by {} ({}); they are told.",
            sanitize::line(h),
            lock_words(s, &item)
        ),
        None => String::new(),
    };
    let message = format!(
        "#{} {}\nThe item is closed as cancelled.{held}",
        item.id,
        sanitize::line(&item.title)
    );
    s.dialog = Some(
        Dialog::new(
            format!("Cancel #{}?", item.id),
            message,
            Pending::Cancel { id: item.id },
        )
        .field(FieldSpec::reason("Reason (required)"), ""),
    );
    vec![]
}

fn queue_settings(s: &mut State) -> Vec<Effect> {
    let name = match (&s.stats, s.view, &s.detail) {
        (Some(st), View::Stats, None) => st.by_queue.get(s.stats_selected).map(|q| q.queue.clone()),
        _ => None,
    };
    let Some(name) = name else {
        set_error(
            s,
            "Select a queue in the Stats view first (press 4, j/k, then S)".into(),
        );
        return vec![];
    };
    let q = s.queue(&name);
    let wip = q.max_per_user.map(|n| n.to_string()).unwrap_or_default();
    s.dialog = Some(
        Dialog::new(
            format!("Settings of queue {}", sanitize::line(&name)),
            "Shared by every user of this database; checked as `caseload queue set` checks them.",
            Pending::QueueSettings { name },
        )
        .field(
            FieldSpec::optional(
                LOCK_SECONDS,
                "Lock seconds (a lock not renewed for this long expires)",
            ),
            &q.lock_seconds.to_string(),
        )
        .field(
            FieldSpec::optional(WARN_SECONDS, "Warning seconds (before expiry)"),
            &q.warn_seconds.to_string(),
        )
        .field(
            FieldSpec::optional(WIP_LIMIT, "WIP limit per user (empty or 0: none)"),
            &wip,
        )
        .field(
            FieldSpec::optional(PAUSED, "Paused (yes/no)"),
            if q.paused { "yes" } else { "no" },
        )
        .field(
            FieldSpec::optional(
                TAKE_ORDER,
                "Take order (priority, or due: soonest due first)",
            ),
            q.order.as_str(),
        )
        .field(
            FieldSpec::optional(
                PARK_GRACE,
                "Park grace seconds (a woken park waits this long for its owner)",
            ),
            &q.park_grace_seconds.to_string(),
        )
        .field(
            FieldSpec::optional(UNDO_SECONDS, "Undo seconds (0: no undo)"),
            &q.undo_seconds.to_string(),
        ),
    );
    vec![]
}

fn activity(s: &mut State) -> Vec<Effect> {
    let user = selected(s)
        .and_then(|i| i.lock_user)
        .unwrap_or_else(|| s.me.clone());
    let since = start_of_day(s.now, s.zone);
    vec![Effect::Activity { user, since }]
}

/// The confirmed dialog of a supervisor action: checks what was typed (a bad value keeps
/// the dialog open with everything typed), then asks the store.
pub(super) fn confirm(s: &mut State, d: Dialog) -> Vec<Effect> {
    let op = match d.pending.clone() {
        Pending::Unlock { seen } => SupervisorOp::Unlock {
            seen,
            reason: d.value(0),
        },
        Pending::Unpark { id } => SupervisorOp::Unpark { id },
        Pending::Reassign { id, token } => {
            let to = d.value(0);
            if let Err(m) = validate_user_name(&to) {
                return reopen(s, d, 0, FieldError::new(Input::To, m).with_label());
            }
            let assign = match d.value(2).to_lowercase().as_str() {
                "" | "no" | "n" => false,
                "yes" | "y" => true,
                other => {
                    let m = format!(
                        "Assign instead: '{}' is not yes or no",
                        sanitize::line(other)
                    );
                    return reopen(s, d, 2, m);
                }
            };
            if assign {
                SupervisorOp::Assign {
                    id,
                    token: Some(token),
                    to,
                    reason: d.value(1),
                }
            } else {
                SupervisorOp::Reassign {
                    id,
                    token,
                    to,
                    reason: d.value(1),
                }
            }
        }
        Pending::Assign { id, token } => {
            let to = d.value(0);
            if let Err(m) = validate_user_name(&to) {
                return reopen(s, d, 0, FieldError::new(Input::To, m).with_label());
            }
            SupervisorOp::Assign {
                id,
                token,
                to,
                reason: d.value(1),
            }
        }
        Pending::EditItem { .. } => match super::edit::edit_op(&d, s.now, s.zone) {
            Ok(op) => op,
            Err((field, m)) => return reopen(s, d, field, m),
        },
        Pending::UnlockMany { locks } => SupervisorOp::UnlockMany {
            locks,
            reason: d.value(0),
        },
        Pending::Requeue { id } => SupervisorOp::Requeue { id },
        Pending::Cancel { id } => SupervisorOp::Cancel {
            id,
            reason: d.value(0),
        },
        Pending::QueueSettings { name } => {
            let update = match parse_settings(&d) {
                Ok(u) => u,
                Err((field, m)) => return reopen(s, d, field, m),
            };
            if let Err(e) = update.apply(&s.queue(&name)) {
                let field = d.index_of(settings_field(e.field)).unwrap_or(0);
                return reopen(s, d, field, e.msg);
            }
            // The dialog stays up until the store answers, so a refusal keeps the values.
            s.dialog = Some(Dialog { error: None, ..d });
            SupervisorOp::SetQueue { name, update }
        }
        _ => return vec![],
    };
    vec![Effect::Supervise(op)]
}

fn reopen(s: &mut State, d: Dialog, focus: usize, error: String) -> Vec<Effect> {
    s.dialog = Some(Dialog {
        error: Some(error),
        focus,
        ..d
    });
    vec![]
}

/// The queue settings dialog's fields, as its messages name them.
const LOCK_SECONDS: &str = "Lock seconds";
const WARN_SECONDS: &str = "Warning seconds";
const WIP_LIMIT: &str = "WIP limit";
const PAUSED: &str = "Paused";
const TAKE_ORDER: &str = "Take order";
const PARK_GRACE: &str = "Park grace seconds";
const UNDO_SECONDS: &str = "Undo seconds";

/// The queue settings dialog's field of a setting.
fn settings_field(setting: Setting) -> &'static str {
    match setting {
        Setting::LockSeconds => LOCK_SECONDS,
        Setting::WarnSeconds => WARN_SECONDS,
        Setting::MaxPerUser => WIP_LIMIT,
        Setting::Paused => PAUSED,
        Setting::ParkGrace => PARK_GRACE,
        Setting::UndoSeconds => UNDO_SECONDS,
        // Not in the dialog (`caseload queue set --review`): never refused from it.
        Setting::Review | Setting::ReviewNew => LOCK_SECONDS,
    }
}

/// The queue settings form as a `QueueUpdate`; an error names the field (index, message).
fn parse_settings(d: &Dialog) -> Result<QueueUpdate, (usize, String)> {
    let field = |name: &str| d.index_of(name).unwrap_or(usize::MAX);
    let number = |name: &str| -> Result<i64, (usize, String)> {
        let v = d.value(field(name));
        v.parse::<i64>().map_err(|_| {
            (
                field(name),
                format!("{name}: '{}' is not a whole number", sanitize::line(&v)),
            )
        })
    };
    let lock = number(LOCK_SECONDS)?;
    let warn = number(WARN_SECONDS)?;
    let wip = match d.value(field(WIP_LIMIT)).to_lowercase().as_str() {
        "" | "0" | "none" => None,
        _ => Some(number(WIP_LIMIT)?),
    };
    let paused = match d.value(field(PAUSED)).to_lowercase().as_str() {
        "yes" | "y" | "true" | "on" => true,
        "no" | "n" | "false" | "off" | "" => false,
        other => {
            return Err((
                field(PAUSED),
                format!(
                    "{PAUSED}: '{}' is neither yes nor no",
                    sanitize::line(other)
                ),
            ));
        }
    };
    let typed = d.value(field(TAKE_ORDER)).trim().to_lowercase();
    let order = match typed.as_str() {
        "" => TakeOrder::Priority,
        o => TakeOrder::parse(o).ok_or_else(|| {
            (
                field(TAKE_ORDER),
                format!(
                    "{TAKE_ORDER}: '{}' is neither priority nor due",
                    sanitize::line(o)
                ),
            )
        })?,
    };
    Ok(QueueUpdate {
        lock_seconds: Some(lock),
        warn_seconds: Some(warn),
        max_per_user: Some(wip),
        paused: Some(paused),
        order: Some(order),
        // Fields a form may lack (one made by an older dialog): kept as they are.
        park_grace_seconds: match d.index_of(PARK_GRACE) {
            Some(_) => Some(number(PARK_GRACE)?),
            None => None,
        },
        undo_seconds: match d.index_of(UNDO_SECONDS) {
            Some(_) => Some(number(UNDO_SECONDS)?),
            None => None,
        },
        // Set by `caseload queue set --review` only.
        review_percent: None,
        review_new: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::Filter;
    use crate::store::StateFilter;

    #[test]
    fn the_locks_filter_parses_holder_queue_state_and_text() {
        let f = Filter::parse("holder:bob q:helpdesk state:expired printer");
        assert_eq!(f.holder.as_deref(), Some("bob"));
        assert_eq!(f.queue.as_deref(), Some("helpdesk"));
        assert_eq!(f.state, Some(StateFilter::Expired));
        assert_eq!(f.text.as_deref(), Some("printer"));
        assert_eq!(
            f.display(),
            "holder:bob queue:helpdesk state:expired printer"
        );
        assert_eq!(Filter::parse(&f.display()), f);
        // An unknown state stays text rather than silently meaning something else.
        assert_eq!(
            Filter::parse("state:lost").text.as_deref(),
            Some("state:lost")
        );
    }

    #[test]
    fn queue_settings_form_reads_grace_and_undo() {
        let form = |grace: &str, undo: &str| {
            let names = [LOCK_SECONDS, WARN_SECONDS, PARK_GRACE, UNDO_SECONDS];
            names.iter().zip(["600", "60", grace, undo]).fold(
                Dialog::new("t", "m", Pending::QueueSettings { name: "q".into() }),
                |d, (name, v)| d.field(FieldSpec::optional(name, "label"), v),
            )
        };
        let ok = parse_settings(&form("900", "0")).unwrap();
        assert_eq!(
            (ok.park_grace_seconds, ok.undo_seconds),
            (Some(900), Some(0))
        );
        let (at, msg) = parse_settings(&form("an hour", "0")).unwrap_err();
        assert_eq!(at, 2);
        assert!(msg.starts_with("Park grace seconds: 'an hour'"), "{msg}");
        assert_eq!(settings_field(Setting::UndoSeconds), UNDO_SECONDS);
    }

    #[test]
    fn queue_settings_form_names_the_bad_field() {
        let form = |vals: [&str; 4]| {
            let names = [LOCK_SECONDS, WARN_SECONDS, WIP_LIMIT, PAUSED];
            names.iter().zip(vals).fold(
                Dialog::new("t", "m", Pending::QueueSettings { name: "q".into() }),
                |d, (name, v)| d.field(FieldSpec::optional(name, "label"), v),
            )
        };
        let ok = parse_settings(&form(["600", "60", "", "yes"])).unwrap();
        assert_eq!(ok.max_per_user, Some(None), "empty: no limit");
        assert_eq!(ok.paused, Some(true));
        assert_eq!(
            parse_settings(&form(["600", "60", "0", "no"]))
                .unwrap()
                .max_per_user,
            Some(None),
            "0: no limit, as the CLI's --max-per-user 0"
        );
        assert_eq!(
            parse_settings(&form(["ten", "60", "", "no"]))
                .unwrap_err()
                .0,
            0
        );
        assert_eq!(
            parse_settings(&form(["600", "60", "two", "no"]))
                .unwrap_err()
                .0,
            2
        );
        assert_eq!(
            parse_settings(&form(["600", "60", "", "maybe"]))
                .unwrap_err()
                .0,
            3
        );
    }
}
