//! The Stats view's figures page (`p` today / 7 days / 30 days / back to the overview,
//! `o` sorts the people), with fixed data and clock: snapshots, the own row highlighted,
//! and the figures equal to the store's report.
//!
//! T0 is 10:00 UTC. Today: alice completed three helpdesk items (handled 5, 10 and 20
//! minutes), bob one (30 minutes) and lost another to alice, who took it over after his
//! lock expired; billing has an item overdue since 09:00. Three days ago carol completed a
//! billing item (handled 15 minutes).

use crate::support::MIN;
use crate::support::backend::Adds;
use crate::support::tui::*;
use caseload::domain::NewItem;
use caseload::domain::figures::{Period, PeriodKind};
use caseload::store::{Reads, ReportQuery, Writes};

fn world() -> (Db, Clock) {
    let db = Db::new();
    let clock = Clock::at(T0 - 4 * 24 * 60 * MIN);
    let mut sup = db.store("sup", &clock);
    let help = add_items(&mut sup, "helpdesk", &["h1", "h2", "h3", "h4", "h5"]);
    let bill = add_items(&mut sup, "billing", &["b1"]);
    let mut late = NewItem::titled("b2 overdue");
    late.queue = "billing".into();
    late.due_at = Some(T0 - 60 * MIN);
    sup.add(&late).unwrap();
    let work = |user: &str, id: i64, from: i64, mins: i64| {
        clock.set(from);
        let mut s = db.store(user, &clock);
        let t = s.take(id).unwrap().lock_token;
        clock.set(from + mins * MIN);
        s.complete(id, t, None).unwrap();
    };
    work("carol", bill[0], T0 - 3 * 24 * 60 * MIN, 15);
    work("alice", help[0], T0 - 120 * MIN, 5);
    work("alice", help[1], T0 - 100 * MIN, 10);
    work("alice", help[2], T0 - 80 * MIN, 20);
    work("bob", help[3], T0 - 90 * MIN, 30);
    // bob's lock on h5 (30-minute locks) expires; alice takes it over and keeps it.
    clock.set(T0 - 60 * MIN);
    db.store("bob", &clock).take(help[4]).unwrap();
    clock.set(T0 - 20 * MIN);
    db.store("alice", &clock).take(help[4]).unwrap();
    clock.set(T0);
    (db, clock)
}

#[test]
fn figures_page_switches_periods_and_sorts_people() {
    let (db, clock) = world();
    let mut s = start(db.store("alice", &clock), &clock, 110, 30, true);
    s.step(key('4'));
    assert!(screen(&s.state).contains("p: figures per person and queue"));
    s.step(key('p'));
    s.settle(std::time::Duration::from_secs(60));
    let today = screen(&s.state);
    insta::assert_snapshot!("figures_today", today);
    let row = |text: &str, name: &str| -> Vec<String> {
        text.lines()
            .find(|l| l.trim_start_matches(['*', ' ']).starts_with(name))
            .unwrap_or_else(|| panic!("no row {name} in\n{text}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        row(&today, "alice")[..4],
        ["*", "alice", "3", "0"],
        "{today}"
    );
    assert_eq!(
        row(&today, "bob")[..7],
        ["bob", "1", "0", "0", "0", "1", "30m00s"]
    );
    assert!(
        !today.contains("carol"),
        "carol's work was three days ago: {today}"
    );
    let billing = row(&today, "billing");
    assert_eq!(billing[1], "0");
    assert!(today.contains("Completions per person"), "{today}");

    // The same figures as the store's report for the same period.
    let mut check = db.store("sup", &clock);
    let r = check
        .report(&ReportQuery {
            period: PeriodKind::Today.period(T0, caseload::domain::time::Zone::Utc),
            queue: None,
            rows_only: false,
        })
        .unwrap();
    assert_eq!(Some(&(PeriodKind::Today, r)), s.state.figures.as_ref());

    // o: by median handle time (alice's 10m before bob's 30m), then by locks lost.
    s.step(key('o'));
    let by_median = screen(&s.state);
    assert!(
        by_median.contains("people sorted by median handle time"),
        "{by_median}"
    );
    let line_of = |text: &str, start: &str| text.lines().position(|l| l.starts_with(start));
    assert!(
        line_of(&by_median, "* alice") < line_of(&by_median, "  bob"),
        "{by_median}"
    );
    s.step(key('o'));
    let by_lost = screen(&s.state);
    assert!(
        line_of(&by_lost, "  bob") < line_of(&by_lost, "* alice"),
        "{by_lost}"
    );

    s.step(key('p'));
    s.settle(std::time::Duration::from_secs(60));
    let week = screen(&s.state);
    insta::assert_snapshot!("figures_7_days", week);
    assert!(week.contains("Figures, 7 days"), "{week}");
    assert_eq!(row(&week, "carol")[1], "1", "{week}");
    s.step(key('p'));
    s.settle(std::time::Duration::from_secs(60));
    assert!(screen(&s.state).contains("Figures, 30 days"));
    s.step(key('p'));
    assert!(
        screen(&s.state).contains("Open items by age"),
        "back to the overview"
    );
}

#[test]
fn own_row_stands_out_with_and_without_colour() {
    let (db, clock) = world();
    for color in [true, false] {
        let mut s = start(db.store("bob", &clock), &clock, 110, 30, color);
        type_text(&mut s, "4p");
        s.settle(std::time::Duration::from_secs(60));
        let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(110, 30)).unwrap();
        caseload::tui::draw(&mut t, &s.state).unwrap();
        let buf = t.backend().buffer().clone();
        let text = buffer_text(t.backend());
        let y = text
            .lines()
            .position(|l| l.starts_with("* bob"))
            .expect("bob's row marked");
        let x = 2;
        let cell = &buf[(x, y as u16)];
        assert!(cell.modifier.contains(ratatui::style::Modifier::BOLD));
        // The default theme marks it by weight alone (colour only with `theme = dark|light`).
        let alice = text.lines().position(|l| l.starts_with("  alice")).unwrap();
        assert!(
            !buf[(2, alice as u16)]
                .modifier
                .contains(ratatui::style::Modifier::BOLD)
        );
    }
}

#[test]
fn p_and_o_elsewhere_only_explain() {
    let (db, clock) = world();
    let mut s = start(db.store("alice", &clock), &clock, 110, 30, true);
    s.step(key('p'));
    let st = s
        .state
        .status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default();
    assert!(st.contains("press 4 first"), "{st}");
    assert_eq!(s.state.figures_period, None);
    s.step(key('4'));
    s.step(key('o'));
    let st = s
        .state
        .status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default();
    assert!(st.contains("then p"), "{st}");
    let _ = Period { since: 0, until: 1 };
}

/// The figures page shows which data was dirty, as `report --by field|source` does: the
/// fields corrected in the records completed in the period, and the sources.
#[test]
fn figures_page_shows_corrections_by_field_and_source() {
    use caseload::domain::queue_fields::{FieldChange, FieldType};
    let (db, clock) = world();
    let mut sup = db.store("sup", &clock);
    let vat = FieldChange {
        kind: Some(FieldType::Text),
        ..FieldChange::default()
    };
    sup.define_field("billing", "vat", &vat).unwrap();
    clock.set(T0 - 30 * MIN);
    let mut alice = db.store("alice", &clock);
    for (source, fix) in [("feed-a", Some("DE123456789")), ("feed-b", None)] {
        let mut it = NewItem::titled("supplier");
        it.queue = "billing".into();
        it.source = Some(source.into());
        it.params = r#"{"vat": "de1"}"#.into();
        let id = sup.add(&it).unwrap().id;
        let token = alice.take(id).unwrap().lock_token;
        if let Some(v) = fix {
            alice
                .set_fields(id, token, &[("vat".into(), v.into())])
                .unwrap();
        }
        alice.complete(id, token, None).unwrap();
    }
    clock.set(T0);
    let mut s = start(db.store("sup", &clock), &clock, 110, 40, true);
    s.step(key('4'));
    s.step(key('p'));
    s.settle(std::time::Duration::from_secs(60));
    let text = screen(&s.state);
    let line = |start: &str| -> Vec<String> {
        text.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no line {start} in\n{text}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    assert!(text.contains("Corrections"), "{text}");
    assert_eq!(
        line("billing/vat")[..4],
        ["billing/vat", "2", "1", "50%"],
        "{text}"
    );
    assert_eq!(line("source feed-a")[2..5], ["1", "1", "100%"], "{text}");
    assert_eq!(line("source feed-b")[2..5], ["1", "0", "0%"], "{text}");
}
