//! The SLA's warning: once 75 % of a held item's working time to its due time is spent,
//! its holder is told once, in the status line ("#42: 75 % of its SLA spent, 1h00m of
//! working time left").

use super::set_error;
use crate::app::State;
use crate::domain::sla::{AT_RISK, left, spent};

/// Warns the holder of each held item that has just reached 75 % of its SLA.
pub(super) fn warn(s: &mut State) {
    let now = s.now;
    let mut told = None;
    for h in s.held.values() {
        let (Some(due), Some(sla)) = (h.due_at, s.slas.get(&h.queue)) else {
            continue;
        };
        if s.sla_warned.contains(&h.id) || now >= due {
            continue;
        }
        if spent(sla, h.created_at, due, now) >= AT_RISK {
            let l = left(sla, now, due);
            told = Some((
                h.id,
                format!(
                    "#{}: 75 % of its SLA spent, {} of working time left",
                    h.id, l.text
                ),
            ));
            break;
        }
    }
    if let Some((id, text)) = told {
        s.sla_warned.insert(id);
        set_error(s, text);
    }
}
