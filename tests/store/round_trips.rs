//! Round trips per claim and per complete on PostgreSQL (issue 32 §2: at most 4 each,
//! the change notice in COMMIT's round trip), counted on the wire by a proxy that reads
//! the protocol (`support::wire`: one round trip per `ReadyForQuery`): direct (warm, the
//! statements prepared) and through a real PgBouncer in transaction mode (no statement
//! prepared by name). A statement added to either path makes this fail, naming what was
//! sent.

use caseload::domain::{Actor, NewItem};
use caseload::store::postgres::{PgOptions, PgStore};
use caseload::store::{TakeNext, Writes};

use crate::support::backend::{Adds, PgBackend, with_search_path};
use crate::support::pooler::{Pooler, pooled};
use crate::support::wire::{Trips, Wire, host_port};

/// At most this many round trips for a claim and for a complete.
const MOST: u64 = 4;

fn shown(what: &str, t: &Trips) -> String {
    format!(
        "{what}: {} round trips, sent:\n  {}",
        t.round_trips,
        t.sent.join("\n  ")
    )
}

/// Claims and completes through `store` (items in queue `default`), the last of `rounds`
/// counted: claim, claim within a queue, complete, complete-and-next within a queue, and
/// complete-and-next across all queues (what `caseload work` runs per item).
fn count(wire: &Wire, store: &mut PgStore, rounds: usize) -> [Trips; 5] {
    let items: Vec<NewItem> = (0..rounds * 6)
        .map(|i| NewItem::titled(&format!("item {i}")))
        .collect();
    store.add_batch(&items).unwrap();
    let mut out: [Trips; 5] = Default::default();
    let in_queue = TakeNext {
        queue: Some("default".into()),
        skip: vec![],
    };
    for _ in 0..rounds {
        wire.take();
        let item = store.take_next(&TakeNext::default()).unwrap();
        out[0] = wire.take();
        store
            .complete(item.id, item.lock_token, Some("ok"))
            .unwrap();
        out[2] = wire.take();
        let item = store.take_next(&in_queue).unwrap();
        out[1] = wire.take();
        let next = store
            .complete_and_next(item.id, item.lock_token, Some("ok"), &in_queue)
            .unwrap();
        out[3] = wire.take();
        let held = next.next.unwrap();
        let next = store
            .complete_and_next(held.id, held.lock_token, None, &TakeNext::default())
            .unwrap();
        out[4] = wire.take();
        let held = next.next.unwrap();
        store.complete(held.id, held.lock_token, None).unwrap();
    }
    out
}

fn check(mode: &str, t: &[Trips; 5]) {
    if std::env::var_os("CL_SHOW_WIRE").is_some() {
        for (what, trips) in [
            "take_next",
            "in a queue",
            "complete",
            "complete-and-next in a queue",
            "complete-and-next",
        ]
        .iter()
        .zip(t)
        {
            eprintln!("{mode}: {}", shown(what, trips));
        }
    }
    for (what, trips) in [("take_next", &t[0]), ("take_next in a queue", &t[1])] {
        assert!(trips.round_trips <= MOST, "{mode}: {}", shown(what, trips));
        assert!(
            trips
                .sent
                .iter()
                .any(|s| s.contains("UPDATE items SET lock_user"))
        );
    }
    assert!(
        t[2].round_trips <= MOST,
        "{mode}: {}",
        shown("complete", &t[2])
    );
    // The change counter's bump rides in COMMIT's round trip, after it.
    for trips in t {
        assert!(
            trips
                .sent
                .iter()
                .any(|s| s.starts_with("Q COMMIT;") && s.contains("caseload_changed()")),
            "{mode}: {}",
            shown("a write", trips)
        );
    }
    eprintln!(
        "{mode}: take_next {}, in a queue {}, complete {}, complete-and-next in a queue {}, \
         across queues {} round trips",
        t[0].round_trips, t[1].round_trips, t[2].round_trips, t[3].round_trips, t[4].round_trips
    );
}

#[test]
fn a_claim_and_a_complete_take_at_most_four_round_trips_each() {
    let Some(pg) = PgBackend::from_env() else {
        return;
    };
    let wire = Wire::start(&host_port(&pg.base_url));
    let mut s = PgStore::open(
        &wire.url(&pg.url),
        Actor::new("alice", "tester"),
        &PgOptions::default(),
    )
    .unwrap();
    // Warm: the statements are prepared in the first rounds and reused after.
    let direct = count(&wire, &mut s, 3);
    check("direct", &direct);
    for (what, t) in ["claim", "claim in a queue", "complete"]
        .iter()
        .zip(&direct)
    {
        assert!(
            t.named_statements().is_empty(),
            "direct, warm: {what} prepared again: {}",
            shown(what, t)
        );
    }

    let Some(pooler) = Pooler::start(&pg.base_url, 2) else {
        return;
    };
    let wire = Wire::start(&format!("127.0.0.1:{}", pooler.port));
    let url = with_search_path(&wire.url(&pooler.url(&pg.base_url)), &pg.schema);
    let mut s = PgStore::open(&url, Actor::new("bob", "tester"), &pooled(0)).unwrap();
    let through = count(&wire, &mut s, 2);
    check("through the pooler", &through);
    for (what, t) in ["claim", "claim in a queue", "complete"]
        .iter()
        .zip(&through)
    {
        assert!(
            t.named_statements().is_empty(),
            "through the pooler: {what} prepared a named statement: {}",
            shown(what, t)
        );
    }
}

/// A field save costs the round trips of a notes save, and a Complete of a record with
/// twenty fields (checked by this role when it was added) those of a Complete without
/// fields (issue 26 §4): the digest rides in the lookups and writes they make anyway.
#[test]
fn a_field_save_and_a_complete_with_fields_take_no_more_round_trips_than_without() {
    use caseload::domain::QueueUpdate;
    use caseload::domain::queue_fields::{FieldChange, FieldType};
    let Some(pg) = PgBackend::from_env() else {
        return;
    };
    let wire = Wire::start(&host_port(&pg.base_url));
    let mut s = PgStore::open(
        &wire.url(&pg.url),
        Actor::new("alice", "tester"),
        &PgOptions::default(),
    )
    .unwrap();
    let text = FieldChange {
        kind: Some(FieldType::Text),
        ..FieldChange::default()
    };
    let email = FieldChange {
        kind: Some(FieldType::Email),
        ..FieldChange::default()
    };
    for q in ["checked", "plain"] {
        s.set_queue(q, &QueueUpdate::default(), true).unwrap();
    }
    let mut params = serde_json::Map::new();
    for i in 0..20 {
        let (name, def, value) = if i % 2 == 0 {
            (format!("name{i}"), &text, format!("Supplier {i}"))
        } else {
            (format!("mail{i}"), &email, format!("buyer{i}@example.com"))
        };
        s.define_field("checked", &name, def).unwrap();
        params.insert(name, value.into());
    }
    let params = serde_json::Value::Object(params).to_string();
    let mut items = Vec::new();
    for q in ["checked", "plain"] {
        for i in 0..4 {
            items.push(NewItem {
                queue: q.into(),
                params: params.clone(),
                ..NewItem::titled(&format!("{q} {i}"))
            });
        }
    }
    store_add(&mut s, &items);
    let mut trips = |q: &str, field: bool| -> (Trips, Trips) {
        let next = TakeNext {
            queue: Some(q.into()),
            skip: vec![],
        };
        let it = s.take_next(&next).unwrap();
        wire.take();
        if field {
            s.set_fields(
                it.id,
                it.lock_token,
                &[("name0".into(), "Supplier B".into())],
            )
            .unwrap();
        } else {
            s.save_notes(it.id, it.lock_token, "called").unwrap();
        }
        let save = wire.take();
        s.complete(it.id, it.lock_token, Some("ok")).unwrap();
        (save, wire.take())
    };
    // Warm (statements prepared), then counted.
    for _ in 0..2 {
        trips("checked", true);
        trips("plain", false);
    }
    let (field_save, with) = trips("checked", true);
    let (notes_save, without) = trips("plain", false);
    if std::env::var_os("CL_SHOW_WIRE").is_some() {
        for (what, t) in [
            ("field save", &field_save),
            ("notes save", &notes_save),
            ("complete, 20 fields", &with),
            ("complete, no fields", &without),
        ] {
            eprintln!("{}", shown(what, t));
        }
    }
    assert!(
        field_save.round_trips <= notes_save.round_trips,
        "{}\n{}",
        shown("field save", &field_save),
        shown("notes save", &notes_save)
    );
    assert!(
        with.round_trips <= without.round_trips,
        "{}\n{}",
        shown("complete, 20 fields", &with),
        shown("complete, no fields", &without)
    );
    eprintln!(
        "field save {} / notes save {}, complete with 20 fields {} / without {} round trips",
        field_save.round_trips, notes_save.round_trips, with.round_trips, without.round_trips
    );
}

fn store_add(s: &mut PgStore, items: &[NewItem]) {
    s.add_batch(items).unwrap();
}
