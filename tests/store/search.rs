//! Search (`list --search`, the `/` filter) on both backends: case- and accent-insensitive,
//! parts of words, every word in any order, over title, body, notes, result, params and
//! error; finished items with `state: all`; counts that stop past 1,000; and the same
//! answers whether an item is in the search index, in the not-yet-indexed tail, or changed
//! since it was indexed.

use crate::support::backend::Adds;
use crate::support::backend::{Backend, add, setup};
use caseload::domain::NewItem;
use caseload::domain::search::COUNT_CAP;
use caseload::store::{ListFilter, StateFilter, Store, TakeNext};

conformance!(
    pooled;
    search_ignores_case_and_accents_and_finds_parts_of_words,
    every_word_must_match_in_any_order_and_field,
    finished_items_are_found_with_their_state,
    search_is_the_same_indexed_or_not,
    counts_of_a_search_stop_past_the_cap,
    a_number_finds_the_item_with_that_id,
    search_text_is_data_not_syntax,
    a_rare_word_beside_a_common_one_finds_exactly_both,
    every_plan_of_a_search_gives_the_rule_s_answer,
    every_window_of_a_middle_word_is_the_rule_s,
    a_qualified_word_finds_its_field_only_indexed_or_not,
    tricky_words_find_what_the_rule_finds_indexed_or_not,
);

fn search(state: StateFilter, text: &str) -> ListFilter {
    ListFilter {
        state,
        text: Some(text.to_string()),
        limit: 1000,
        ..ListFilter::default()
    }
}

fn found(s: &mut dyn Store, state: StateFilter, text: &str) -> Vec<i64> {
    let f = search(state, text);
    let ids: Vec<i64> = s.list(&f).unwrap().iter().map(|i| i.id).collect();
    assert_eq!(
        s.count(&f).unwrap(),
        ids.len() as u64,
        "count agrees with the list for {text:?}"
    );
    ids
}

fn open(s: &mut dyn Store, text: &str) -> Vec<i64> {
    found(s, StateFilter::Open, text)
}

fn add_full(s: &mut dyn Store, title: &str, body: &str, params: &str) -> i64 {
    s.add(&NewItem {
        body: body.into(),
        params: params.into(),
        ..NewItem::titled(title)
    })
    .unwrap()
    .id
}

fn search_ignores_case_and_accents_and_finds_parts_of_words(b: &dyn Backend) {
    let mut boss = setup(b);
    let order = add(&mut *boss, "Pick & pack order #A-69529");
    let nord = add(&mut *boss, "Invoice for Nordlicht GmbH");
    let jose = add_full(&mut *boss, "Callback", "Customer José Álvarez called", "{}");
    let muller = add(&mut *boss, "Frau MÜLLER wants a refund");
    let _other = add(&mut *boss, "Printer on floor 3");
    assert_eq!(open(&mut *boss, "69529"), [order]);
    assert_eq!(open(&mut *boss, "nordl"), [nord]);
    assert_eq!(open(&mut *boss, "NORDL"), [nord]);
    assert_eq!(open(&mut *boss, "jose"), [jose]);
    assert_eq!(open(&mut *boss, "JOSÉ alv"), [jose]);
    assert_eq!(open(&mut *boss, "müller"), [muller]);
    assert_eq!(open(&mut *boss, "muller"), [muller]);
    assert_eq!(open(&mut *boss, "Müller"), [muller]);
    assert!(open(&mut *boss, "zebra").is_empty());
}

fn every_word_must_match_in_any_order_and_field(b: &dyn Backend) {
    let mut boss = setup(b);
    let both = add_full(
        &mut *boss,
        "Refund for Nordlicht",
        "charged twice",
        r#"{"customer": "Schröder"}"#,
    );
    let one = add(&mut *boss, "Refund for Sonnenschein");
    assert_eq!(open(&mut *boss, "nordlicht refund"), [both]);
    assert_eq!(
        open(&mut *boss, "twice schroder"),
        [both],
        "body and params"
    );
    assert_eq!(open(&mut *boss, "refund"), [both, one]);
    assert!(open(&mut *boss, "refund zebra").is_empty());
    // Notes, result and error are searched too.
    let mut alice = b.open("alice", 0);
    let it = alice
        .take_next(&TakeNext {
            queue: None,
            skip: vec![],
        })
        .unwrap();
    assert_eq!(it.id, both);
    alice
        .save_notes(it.id, it.lock_token, "called Herr Øster")
        .unwrap();
    assert_eq!(open(&mut *boss, "oster"), [both]);
    alice
        .complete(it.id, it.lock_token, Some("credited 12,50 €"))
        .unwrap();
    assert!(open(&mut *boss, "credited").is_empty(), "done: not open");
    assert_eq!(found(&mut *boss, StateFilter::Done, "credited"), [both]);
    let it = alice.take_next(&TakeNext::default()).unwrap();
    alice.fail(it.id, it.lock_token, "address unknown").unwrap();
    assert_eq!(found(&mut *boss, StateFilter::Failed, "unknown"), [one]);
}

fn finished_items_are_found_with_their_state(b: &dyn Backend) {
    let mut boss = setup(b);
    let done = add(&mut *boss, "Toner for printer 7");
    let open_one = add(&mut *boss, "Printer 9 jams");
    let it = boss.take(done).unwrap();
    boss.complete(done, it.lock_token, None).unwrap();
    assert_eq!(open(&mut *boss, "printer"), [open_one]);
    assert_eq!(found(&mut *boss, StateFilter::Done, "printer"), [done]);
    assert_eq!(
        found(&mut *boss, StateFilter::All, "printer"),
        [done, open_one]
    );
    let mut alice = b.open("alice", 0);
    let held = alice.take(open_one).unwrap();
    assert_eq!(found(&mut *boss, StateFilter::Locked, "jams"), [held.id]);
    assert!(found(&mut *boss, StateFilter::Locked, "toner").is_empty());
}

/// What the search index holds, what it has not reached yet and what changed after it
/// was indexed all answer alike (on PostgreSQL, which keeps no such index, trivially).
fn search_is_the_same_indexed_or_not(b: &dyn Backend) {
    let mut boss = setup(b);
    let a = add(&mut *boss, "Parcel to Kraków");
    let c = add(&mut *boss, "Parcel to Gdańsk");
    assert_eq!(open(&mut *boss, "krakow"), [a], "tail, not indexed yet");
    let indexed = boss.index_search(1).unwrap();
    assert!(indexed <= 1);
    assert_eq!(open(&mut *boss, "krakow"), [a], "half indexed");
    assert_eq!(open(&mut *boss, "gdansk"), [c], "half indexed");
    while boss.index_search(100).unwrap() > 0 {}
    assert_eq!(open(&mut *boss, "parcel"), [a, c], "all indexed");
    // Changed after indexing: the old text no longer finds it, the new text does.
    let it = boss.take(a).unwrap();
    boss.save_notes(a, it.lock_token, "rerouted via Wrocław")
        .unwrap();
    assert_eq!(open(&mut *boss, "wroclaw"), [a]);
    boss.complete(a, it.lock_token, Some("delivered")).unwrap();
    assert!(open(&mut *boss, "krakow").is_empty());
    assert_eq!(found(&mut *boss, StateFilter::Done, "delivered"), [a]);
    while boss.index_search(100).unwrap() > 0 {}
    assert_eq!(found(&mut *boss, StateFilter::Done, "wroclaw"), [a]);
    assert_eq!(found(&mut *boss, StateFilter::All, "parcel"), [a, c]);
    // Added after indexing: the tail.
    let d = add(&mut *boss, "Parcel to Łódź");
    assert_eq!(found(&mut *boss, StateFilter::All, "parcel"), [a, c, d]);
    assert_eq!(open(&mut *boss, "lodz"), [d]);
    assert_eq!(
        boss.index_search(100).unwrap(),
        usize::from(b.name() == "sqlite")
    );
    assert_eq!(boss.index_search(100).unwrap(), 0, "up to date");
    assert_eq!(open(&mut *boss, "lodz"), [d]);
    assert_eq!(boss.check().unwrap(), Vec::<String>::new());
}

/// `vat:de123` looks in field vat only, through the index (SQLite) as through a scan; a
/// qualifier no queue defines is refused, naming the ones known.
fn a_qualified_word_finds_its_field_only_indexed_or_not(b: &dyn Backend) {
    use caseload::domain::queue_fields::{FieldChange, FieldType};
    let mut boss = setup(b);
    let text = FieldChange {
        kind: Some(FieldType::Text),
        ..FieldChange::default()
    };
    boss.define_field("default", "vat", &text).unwrap();
    let a = add_full(&mut *boss, "Supplier", "", r#"{"vat":"DE123456789"}"#);
    let b2 = add_full(&mut *boss, "DE123 in the title", "", r#"{"vat":"FR1"}"#);
    let c = add_full(&mut *boss, "Another", "de1234 too", r#"{"other":"DE123"}"#);
    assert_eq!(open(&mut *boss, "de123"), [a, b2, c]);
    assert_eq!(open(&mut *boss, "vat:de123"), [a], "tail, not indexed yet");
    while boss.index_search(100).unwrap() > 0 {}
    assert_eq!(open(&mut *boss, "vat:DE123"), [a], "indexed");
    assert_eq!(open(&mut *boss, "vat:de supplier"), [a]);
    let err = boss
        .list(&search(StateFilter::Open, "postcode:1"))
        .unwrap_err();
    assert!(err.to_string().contains("known: vat:"), "{err}");
    assert!(
        boss.count(&search(StateFilter::Open, "postcode:1"))
            .is_err()
    );
}

fn counts_of_a_search_stop_past_the_cap(b: &dyn Backend) {
    let mut boss = setup(b);
    let items: Vec<NewItem> = (0..COUNT_CAP + 50)
        .map(|i| NewItem::titled(&format!("Widget order {i}")))
        .collect();
    boss.add_batch(&items).unwrap();
    add(&mut *boss, "Gadget order");
    for _ in 0..2 {
        let f = search(StateFilter::Open, "widget");
        assert_eq!(boss.count(&f).unwrap(), COUNT_CAP + 1, "1,000+");
        let first = boss.list(&ListFilter { limit: 200, ..f }).unwrap();
        assert_eq!(first.len(), 200);
        assert_eq!(first[0].title, "Widget order 0", "take order");
        assert_eq!(first[199].title, "Widget order 199");
        let few = search(StateFilter::Open, "gadget");
        assert_eq!(boss.count(&few).unwrap(), 1);
        while boss.index_search(500).unwrap() > 0 {}
    }
}

fn a_number_finds_the_item_with_that_id(b: &dyn Backend) {
    let mut boss = setup(b);
    let ids: Vec<i64> = (0..13)
        .map(|i| add(&mut *boss, &format!("Filler {i}")))
        .collect();
    assert_eq!(ids[0], 1, "a fresh database numbers from 1");
    for _ in 0..2 {
        // Id 12 is "Filler 11"; "Filler 12" (id 13) has 12 in its text.
        assert_eq!(open(&mut *boss, "12"), [12, 13]);
        assert_eq!(open(&mut *boss, "#12"), [12]);
        assert_eq!(open(&mut *boss, "filler 12"), [13], "two words: no id");
        while boss.index_search(100).unwrap() > 0 {}
    }
}

fn search_text_is_data_not_syntax(b: &dyn Backend) {
    let mut boss = setup(b);
    let pct = add(&mut *boss, "Discount 100% off_sale \"quoted\" a\\b");
    let _plain = add(&mut *boss, "Discount 100 off sale");
    for _ in 0..2 {
        assert_eq!(open(&mut *boss, "100%"), [pct]);
        assert_eq!(open(&mut *boss, "off_sale"), [pct]);
        assert_eq!(open(&mut *boss, "\"quoted\""), [pct]);
        assert_eq!(open(&mut *boss, "a\\b"), [pct]);
        assert!(open(&mut *boss, "NEAR(discount").is_empty());
        assert!(open(&mut *boss, "discount*").is_empty());
        assert!(open(&mut *boss, "' OR 1=1 --").is_empty());
        while boss.index_search(100).unwrap() > 0 {}
    }
}

fn a_rare_word_beside_a_common_one_finds_exactly_both(b: &dyn Backend) {
    let mut boss = setup(b);
    let items: Vec<NewItem> = (0..40)
        .map(|i| NewItem::titled(&format!("Refund request {i}")))
        .collect();
    boss.add_batch(&items).unwrap();
    let both = add(&mut *boss, "Refund for Frau Müller");
    add(&mut *boss, "Address change for Müller");
    for _ in 0..2 {
        assert_eq!(open(&mut *boss, "refund müller"), [both]);
        assert_eq!(open(&mut *boss, "MULLER refund"), [both]);
        assert_eq!(open(&mut *boss, "refund müller zz"), Vec::<i64>::new());
        assert_eq!(open(&mut *boss, "müller").len(), 2);
        while boss.index_search(100).unwrap() > 0 {}
    }
}

/// Enough items for every way SQLite finds a search's rows (a word in every item scanned
/// for, a rare one looked up, a middling one tested against the open list's walk, short
/// words, several words), compared with the folding rule applied to the titles, before
/// indexing, half indexed, indexed, and after edits.
fn every_plan_of_a_search_gives_the_rule_s_answer(b: &dyn Backend) {
    use caseload::domain::search::Search;
    let mut boss = setup(b);
    let n = 3000;
    let title = |i: usize| {
        let mut t = format!("Widget {i}");
        // 375 of 3000: too many to look up against the open list, too few to scan for.
        if i.is_multiple_of(8) {
            t.push_str(" Cög");
        }
        if i.is_multiple_of(50) {
            t.push_str(" GIZMO");
        }
        t
    };
    let titles: Vec<String> = (0..n).map(title).collect();
    let items: Vec<NewItem> = titles.iter().map(|t| NewItem::titled(t)).collect();
    boss.add_batch(&items).unwrap();
    let all = ListFilter {
        state: StateFilter::All,
        limit: 5000,
        ..ListFilter::default()
    };
    let ids: Vec<i64> = boss.list(&all).unwrap().iter().map(|i| i.id).collect();
    assert_eq!(ids.len(), n);
    let mut done = vec![false; n];
    for i in (0..600).step_by(3) {
        let it = boss.take(ids[i]).unwrap();
        boss.complete(ids[i], it.lock_token, None).unwrap();
        done[i] = true;
    }
    let searches = [
        "widget",
        "cog",
        "gizmo",
        "cog gizmo",
        "gizmo 5",
        "7",
        "zebra cog",
    ];
    let mut notes: Vec<String> = vec![String::new(); n];
    let check = |boss: &mut dyn Store, notes: &[String], stage: &str| {
        for text in searches {
            let s = Search::parse(text).unwrap();
            for state in [StateFilter::Open, StateFilter::Done, StateFilter::All] {
                let mut want: Vec<i64> = (0..n)
                    .filter(|&i| match state {
                        StateFilter::Open => !done[i],
                        StateFilter::Done => done[i],
                        _ => true,
                    })
                    .filter(|&i| s.matches(&[&titles[i], &notes[i]]) || s.id() == Some(ids[i]))
                    .map(|i| ids[i])
                    .collect();
                if state == StateFilter::Done {
                    want.reverse();
                }
                let f = ListFilter {
                    limit: 5000,
                    ..search(state, text)
                };
                let got: Vec<i64> = boss.list(&f).unwrap().iter().map(|i| i.id).collect();
                assert_eq!(got, want, "{stage}: {text:?} {state:?}");
                let count = boss.count(&f).unwrap();
                assert_eq!(
                    count,
                    (want.len() as u64).min(COUNT_CAP + 1),
                    "{stage}: {text:?}"
                );
            }
        }
    };
    check(&mut *boss, &notes, "not indexed");
    boss.index_search(n / 2).unwrap();
    check(&mut *boss, &notes, "half indexed");
    while boss.index_search(1000).unwrap() > 0 {}
    check(&mut *boss, &notes, "indexed");
    // Notes saved after indexing: the changed rows are scanned, not read from the index.
    for i in [11, 20, 700] {
        let it = boss.take(ids[i]).unwrap();
        boss.save_notes(ids[i], it.lock_token, "Gizmo swapped")
            .unwrap();
        notes[i] = "Gizmo swapped".into();
    }
    check(&mut *boss, &notes, "notes saved after indexing");
}

/// A word in one item of seven (written `Müller` or `MÜLLER`), alone and beside a word in
/// one of three whose keys the index is not asked for (so that most of the candidates do
/// not match), and a rare one, read through windows from one row to all: each window and
/// count is the folding rule's, for open items (walked in their order or looked up,
/// chosen by how many matches the window needs) and for lists in id order (all, done:
/// given their first candidates, then more when those do not fill the window).
fn every_window_of_a_middle_word_is_the_rule_s(b: &dyn Backend) {
    use caseload::domain::search::Search;
    let mut boss = setup(b);
    let n = 3000;
    let title = |i: usize| {
        let mut t = format!("Part {i}");
        if i.is_multiple_of(7) {
            t.push_str(if i.is_multiple_of(2) {
                " Müller"
            } else {
                " MÜLLER"
            });
        }
        if i.is_multiple_of(3) {
            t.push_str(" Zeta");
        }
        if i.is_multiple_of(97) {
            t.push_str(" Łódź");
        }
        t
    };
    let titles: Vec<String> = (0..n).map(title).collect();
    let items: Vec<NewItem> = titles.iter().map(|t| NewItem::titled(t)).collect();
    boss.add_batch(&items).unwrap();
    let all = ListFilter {
        state: StateFilter::All,
        limit: 5000,
        ..ListFilter::default()
    };
    let ids: Vec<i64> = boss.list(&all).unwrap().iter().map(|i| i.id).collect();
    assert_eq!(ids.len(), n);
    let mut done = vec![false; n];
    for i in (0..1400).step_by(5) {
        let it = boss.take(ids[i]).unwrap();
        boss.complete(ids[i], it.lock_token, None).unwrap();
        done[i] = true;
    }
    let searches = [
        "muller zeta",
        "MÜLLER",
        "müller ZETA",
        "zeta muller",
        "lodz",
        "łódź zeta",
    ];
    let windows = [
        (0, 1),
        (0, 7),
        (0, 40),
        (0, 60),
        (0, 100),
        (20, 100),
        (130, 7),
        (140, 7),
        (300, 7),
        (0, 5000),
    ];
    let mut checked = 0;
    for stage in ["not indexed", "indexed"] {
        for text in searches {
            let s = Search::parse(text).unwrap();
            for state in [StateFilter::Open, StateFilter::Done, StateFilter::All] {
                let mut want: Vec<i64> = (0..n)
                    .filter(|&i| match state {
                        StateFilter::Open => !done[i],
                        StateFilter::Done => done[i],
                        _ => true,
                    })
                    .filter(|&i| s.matches(&[&titles[i]]))
                    .map(|i| ids[i])
                    .collect();
                if state == StateFilter::Done {
                    want.reverse();
                }
                for (offset, limit) in windows {
                    let f = ListFilter {
                        offset,
                        limit,
                        ..search(state, text)
                    };
                    let got: Vec<i64> = boss.list(&f).unwrap().iter().map(|i| i.id).collect();
                    let from = offset.min(want.len());
                    let to = (offset + limit).min(want.len());
                    assert_eq!(
                        got,
                        want[from..to],
                        "{stage}: {text:?} {state:?} {offset}+{limit}"
                    );
                    checked += got.len();
                }
                let count = boss.count(&search(state, text)).unwrap();
                assert_eq!(
                    count,
                    (want.len() as u64).min(COUNT_CAP + 1),
                    "{stage}: {text:?} {state:?}"
                );
            }
        }
        while boss.index_search(1000).unwrap() > 0 {}
    }
    assert!(checked > 1000, "{checked}");
}

/// Words whose scan is narrowed first by SQLite's `LIKE` on the text as written (digits,
/// `b`, CJK, `%`, `_`, `\`), or not at all (accented letters, `ß`, Turkish `i`, the
/// Kelvin sign, Greek), over texts in every case and with accents: the same items as the
/// folding rule, scanned and then indexed.
fn tricky_words_find_what_the_rule_finds_indexed_or_not(b: &dyn Backend) {
    use caseload::domain::search::Search;
    let mut boss = setup(b);
    let texts = [
        ("Order #A-69529 for José", "STRASSE 12, Łódź"),
        ("Straße 12", "BOB's ẞ-Bau, 東京都"),
        ("İSTANBUL office", "ıi dotless; 100% off_line a\\b"),
        ("20 \u{212A}elvin", "ΣΊΣΥΦΟΣ and σίσυφος"),
        ("bob", "Bb 1 2 東京"),
        ("Ångström \u{212B}", "ǅemal Ĳssel ÿ"),
    ];
    let ids: Vec<i64> = texts
        .iter()
        .map(|(t, body)| add_full(&mut *boss, t, body, "{}"))
        .collect();
    let words = [
        "69529",
        "a-69529",
        "b",
        "bob",
        "bb",
        "東京",
        "東京都",
        "100%",
        "off_line",
        "a\\b",
        "12",
        "1",
        "strasse",
        "straße",
        "ß",
        "istanbul",
        "i",
        "ı",
        "kelvin",
        "k",
        "σισυφος",
        "lodz",
        "jose 69529",
        "ångström",
        "å",
        "angstrom",
        "dz",
        "ijssel",
        "y",
        "%",
        "_",
    ];
    for stage in ["scanned", "indexed"] {
        for w in words {
            let s = Search::parse(w).unwrap();
            let want: Vec<i64> = (texts.iter().zip(&ids))
                .filter(|((t, body), _)| s.matches(&[t, body]))
                .map(|(_, id)| *id)
                .collect();
            assert_eq!(open(&mut *boss, w), want, "{stage}: {w:?}");
        }
        while boss.index_search(100).unwrap() > 0 {}
    }
}
