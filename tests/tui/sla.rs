//! SLAs in the TUI (issue 28 §4), through `app::update` and the drawn screen: rows of a
//! queue with an SLA show the working time left (`!45m` under an hour, `!!25m` under 30
//! minutes, `LATE 25m` after, readable without colour), and the holder is told once when
//! 75 % of an item's SLA is spent.

use caseload::app::{Held, Msg, Snapshot, View, update};
use caseload::domain::sla::{Hours, Sla, parse_zone};

use crate::support::MIN;
use crate::support::tui::{T0, item, screen};
use crate::update::state;

const H: i64 = 60 * MIN;

/// Queue `q` has a 4-hour SLA, round the clock, in UTC.
fn with_sla() -> Snapshot {
    Snapshot {
        slas: Some(vec![Sla {
            queue: "q".into(),
            ms: 4 * H,
            hours: Hours::ALWAYS,
            zone: parse_zone("UTC").unwrap(),
            holidays: Default::default(),
        }]),
        ..Snapshot::default()
    }
}

#[test]
fn rows_show_working_time_left_with_marks_that_read_without_colour() {
    let mut s = state();
    let due = |id, d| {
        let mut it = item(id, None, 0, 0);
        it.due_at = Some(d);
        it
    };
    update(
        &mut s,
        Msg::Refreshed(Box::new(Snapshot {
            view: Some(View::Queue),
            total: 4,
            rows: vec![
                due(1, T0 + 3 * H),
                due(2, T0 + 45 * MIN),
                due(3, T0 + 25 * MIN),
                due(4, T0 - 25 * MIN),
            ],
            ..with_sla()
        })),
    );
    update(&mut s, Msg::Tick { now: T0 });
    let text = screen(&s);
    let row = |id: i64| {
        text.lines()
            .find(|l| l.contains(&format!("Item {id}")))
            .unwrap_or_else(|| panic!("row {id} in {text}"))
            .to_string()
    };
    assert!(row(1).contains("3h00m"), "{}", row(1));
    assert!(
        row(2).contains("!45m") && !row(2).contains("!!"),
        "{}",
        row(2)
    );
    assert!(row(3).contains("!!25m"), "{}", row(3));
    assert!(row(4).contains("LATE 25m"), "{}", row(4));
}

#[test]
fn the_holder_is_warned_once_at_75_percent_of_the_sla() {
    let mut s = state();
    update(&mut s, Msg::Refreshed(Box::new(with_sla())));
    // (Locked a minute before the last tick: no lock warning gets in the way.)
    let mut it = item(42, Some("alice"), T0 + 3 * H - MIN, 3);
    it.created_at = T0;
    it.due_at = Some(T0 + 4 * H);
    s.held.insert(42, Held::of(&it));
    update(&mut s, Msg::Tick { now: T0 + 2 * H });
    assert!(s.sla_warned.is_empty(), "half spent: no warning yet");
    update(&mut s, Msg::Tick { now: T0 + 3 * H });
    let status = s.status.as_ref().unwrap().text.clone();
    assert_eq!(
        status,
        "#42: 75 % of its SLA spent, 1h00m of working time left"
    );
    s.status = None;
    update(
        &mut s,
        Msg::Tick {
            now: T0 + 3 * H + MIN,
        },
    );
    assert!(s.status.is_none(), "once only");
}
