//! Duplicates (issue 27), on both backends: duplicate keys fold case, accents, spacing
//! and punctuation and are kept with every write of the params (add, import, set, a
//! field's definition); candidates come from open and finished items; a merge is one
//! fenced write with events on both items; "not the same" is remembered in either order.
//! "boss" opens first and is the supervisor; "alice" and "bob" are staff.

use crate::support::backend::{Adds, Backend, assert_code, kinds, setup};
use caseload::domain::ItemState;
use caseload::domain::NewItem;
use caseload::domain::duplicates::Verdict;
use caseload::domain::queue_fields::{Dedupe, FieldChange, FieldType};
use caseload::store::similar::similar;
use caseload::store::{Store, exit};

conformance!(
    keys_fold_and_finished_items_are_found,
    keys_follow_sets_and_definitions,
    similar_titles_are_found_without_keys,
    not_the_same_is_never_offered_again,
    a_merge_is_fenced_and_audited_on_both_items,
    refused_merges_change_nothing,
    a_merged_item_names_its_survivor_until_reopened,
    adding_skips_rows_that_duplicate_open_items,
    the_report_counts_merges_per_queue,
    check_finds_wrong_keys_and_the_repair_rebuilds_them,
    merging_across_queues_is_for_supervisors,
    a_definition_keys_items_as_their_writes_do,
);

fn key_field(s: &mut dyn Store, name: &str, kind: FieldType) {
    let c = FieldChange {
        kind: Some(kind),
        dedupe: Some(Some(Dedupe::Key)),
        ..FieldChange::default()
    };
    s.define_field("default", name, &c).unwrap();
}

fn add(s: &mut dyn Store, title: &str, params: &str) -> i64 {
    let it = NewItem {
        params: params.to_string(),
        ..NewItem::titled(title)
    };
    s.add(&it).unwrap().id
}

/// The candidates' ids and why.
fn offered(s: &mut dyn Store, id: i64) -> Vec<(i64, String)> {
    let found = similar(s, id, 5).unwrap();
    found.candidates.iter().map(|c| (c.id, c.why())).collect()
}

fn keys_fold_and_finished_items_are_found(b: &dyn Backend) {
    let mut boss = setup(b);
    key_field(&mut *boss, "vat", FieldType::Text);
    key_field(&mut *boss, "iban", FieldType::Iban);
    let a = add(&mut *boss, "Acme", r#"{"vat": "DE 123.456-789"}"#);
    let c = add(
        &mut *boss,
        "Zeta Holdings",
        r#"{"vat": "de123456789", "iban": "DE89 3704 0044 0532 0130 00"}"#,
    );
    let d = add(&mut *boss, "Omega", r#"{"iban": "de89370400440532013000"}"#);
    add(&mut *boss, "Other", r#"{"vat": "DE999"}"#);
    // Finished last month, still the most useful match: found with who finished it.
    let mut alice = b.open("alice", 0);
    let t = alice.take(a).unwrap().lock_token;
    alice.complete(a, t, None).unwrap();
    let found = similar(&mut *boss, c, 5).unwrap();
    let ids: Vec<i64> = found.candidates.iter().map(|x| x.id).collect();
    assert_eq!(ids, [a, d], "{:?}", found.candidates);
    assert_eq!(found.candidates[0].why(), "same vat");
    assert_eq!(found.candidates[0].state, ItemState::Done);
    assert_eq!(found.candidates[0].finished_by.as_deref(), Some("alice"));
    assert_eq!(found.candidates[1].why(), "same iban");
}

fn keys_follow_sets_and_definitions(b: &dyn Backend) {
    let mut boss = setup(b);
    // Items before the field is a key: its definition keys them.
    let a = add(&mut *boss, "Acme", r#"{"email": "Anna@Example.com"}"#);
    let c = add(&mut *boss, "Zeta", r#"{"email": "bob@example.com"}"#);
    assert!(offered(&mut *boss, a).is_empty());
    key_field(&mut *boss, "email", FieldType::Email);
    assert!(offered(&mut *boss, a).is_empty());
    // A holder's correction moves the key.
    let mut alice = b.open("alice", 0);
    let t = alice.take(c).unwrap().lock_token;
    alice
        .set_fields(c, t, &[("email".into(), " anna@EXAMPLE.com".into())])
        .unwrap();
    assert_eq!(offered(&mut *boss, a), [(c, "same email".to_string())]);
    // No longer a key: nothing matches on it.
    let off = FieldChange {
        dedupe: Some(None),
        ..FieldChange::default()
    };
    boss.define_field("default", "email", &off).unwrap();
    assert!(offered(&mut *boss, a).is_empty());
}

fn similar_titles_are_found_without_keys(b: &dyn Backend) {
    let mut boss = setup(b);
    let a = add(&mut *boss, "Brightwater Tools Ltd", "{}");
    let c = add(&mut *boss, "Brightwater Tools Limited", "{}");
    add(&mut *boss, "Harbour Paper Co", "{}");
    let found = offered(&mut *boss, a);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, c);
    assert!(found[0].1.starts_with("title 0."), "{found:?}");
}

fn not_the_same_is_never_offered_again(b: &dyn Backend) {
    let mut boss = setup(b);
    let a = add(&mut *boss, "Brightwater Tools Ltd", "{}");
    let c = add(&mut *boss, "Brightwater Tools Ltd.", "{}");
    assert_eq!(offered(&mut *boss, a).len(), 1);
    let mut bob = b.open("bob", 0);
    bob.not_duplicate(c, a).unwrap();
    // For anybody, in either order.
    assert!(offered(&mut *boss, a).is_empty());
    assert!(offered(&mut *boss, c).is_empty());
    let pairs = boss.pairs(a).unwrap();
    assert_eq!(pairs.len(), 1);
    assert_eq!((pairs[0].low, pairs[0].high), (a, c));
    assert_eq!(pairs[0].verdict, Verdict::NotSame);
    assert_eq!(pairs[0].actor, "bob");
    assert_eq!(kinds(&mut *boss, a).last(), Some(&"noted"));
    let e = assert_code(boss.not_duplicate(a, c), exit::ERROR);
    assert!(
        e.to_string().contains("already marked not the same by bob"),
        "{e}"
    );
    assert_code(boss.not_duplicate(a, a), exit::ERROR);
    assert_code(boss.not_duplicate(a, 9999), exit::ERROR);
}

fn a_merge_is_fenced_and_audited_on_both_items(b: &dyn Backend) {
    let mut boss = setup(b);
    let keep = add(&mut *boss, "Brightwater Tools Ltd", "{}");
    let dup = add(&mut *boss, "Brightwater Tools Ltd", "{}");
    let mut alice = b.open("alice", 0);
    let mut bob = b.open("bob", 0);
    let t = alice.take(dup).unwrap().lock_token;
    // Not the holder: refused as any holder write is.
    assert_code(bob.merge(dup, keep, None, None), exit::CONFLICT);
    assert_code(bob.merge(dup, keep, Some(t), None), exit::CONFLICT);
    // A stale token: refused, even for the holder.
    assert_code(alice.merge(dup, keep, Some(t - 1), None), exit::CONFLICT);
    let m = alice
        .merge(dup, keep, Some(t), Some("same supplier"))
        .unwrap();
    assert_eq!((m.id, m.into), (dup, keep));
    let d = boss.item(dup).unwrap();
    assert_eq!(d.state, ItemState::Cancelled);
    assert!(d.lock_user.is_none());
    let ev = boss.history(dup).unwrap();
    let last = ev.last().unwrap();
    assert_eq!(last.kind.as_str(), "cancelled");
    assert_eq!(last.actor, "alice");
    assert_eq!(last.detail["duplicate_of"], keep);
    assert_eq!(last.detail["reason"], "same supplier");
    let ev = boss.history(keep).unwrap();
    assert_eq!(ev.last().unwrap().detail["merged_in"], dup);
    let thread = boss.comments(keep).unwrap();
    assert!(
        thread[0].text.contains(&format!("#{dup} was merged")),
        "{thread:?}"
    );
    assert_eq!(boss.pairs(keep).unwrap()[0].verdict, Verdict::Same);
    // The merged item is no longer offered; merging into it names its survivor.
    let third = add(&mut *boss, "Brightwater Tools Ltd", "{}");
    assert_eq!(offered(&mut *boss, third).len(), 1);
    let e = assert_code(boss.merge(third, dup, None, None), exit::ERROR);
    assert!(
        e.to_string().contains(&format!("merge into #{keep}")),
        "{e}"
    );
    // A supervisor merges what nobody holds.
    boss.merge(third, keep, None, None).unwrap();
    assert_eq!(boss.item(third).unwrap().state, ItemState::Cancelled);
}

fn refused_merges_change_nothing(b: &dyn Backend) {
    let mut boss = setup(b);
    let a = add(&mut *boss, "Acme", "{}");
    let c = add(&mut *boss, "Acme", "{}");
    let mut alice = b.open("alice", 0);
    let before = (
        boss.history(a).unwrap().len(),
        boss.history(c).unwrap().len(),
    );
    assert_code(boss.merge(a, a, None, None), exit::ERROR);
    assert_code(boss.merge(a, 9999, None, None), exit::ERROR);
    assert_code(boss.merge(9999, a, None, None), exit::ERROR);
    // Staff who hold nothing may not merge; nor may anyone merge a finished item.
    assert_code(alice.merge(a, c, None, None), exit::CONFLICT);
    let t = alice.take(a).unwrap().lock_token;
    alice.complete(a, t, None).unwrap();
    assert_code(boss.merge(a, c, None, None), exit::CONFLICT);
    let after = (
        boss.history(a).unwrap().len(),
        boss.history(c).unwrap().len(),
    );
    assert_eq!(after.1, before.1, "nothing written to #{c}");
    assert_eq!(after.0, before.0 + 2, "only the take and the complete");
    assert!(boss.pairs(a).unwrap().is_empty());
    assert!(boss.comments(c).unwrap().is_empty());
}

fn a_merged_item_names_its_survivor_until_reopened(b: &dyn Backend) {
    let mut boss = setup(b);
    let keep = add(&mut *boss, "Brightwater Tools Ltd", "{}");
    let dup = add(&mut *boss, "Brightwater Tools Ltd", "{}");
    assert_eq!(boss.item(dup).unwrap().duplicate_of, None);
    boss.merge(dup, keep, None, Some("same")).unwrap();
    assert_eq!(boss.item(dup).unwrap().duplicate_of, Some(keep));
    assert_eq!(boss.item(keep).unwrap().duplicate_of, None);
    // Reopened, it is no longer anybody's duplicate (and may be merged again).
    boss.requeue(dup).unwrap();
    let d = boss.item(dup).unwrap();
    assert_eq!((d.state, d.duplicate_of), (ItemState::Open, None));
    // A plain cancel names nobody.
    let other = add(&mut *boss, "Other", "{}");
    boss.cancel(other, "not needed").unwrap();
    assert_eq!(boss.item(other).unwrap().duplicate_of, None);
    assert!(boss.check().unwrap().is_empty());
}

fn adding_skips_rows_that_duplicate_open_items(b: &dyn Backend) {
    use caseload::store::AddOptions;
    let mut boss = setup(b);
    key_field(&mut *boss, "vat", FieldType::Text);
    let open = add(&mut *boss, "Acme", r#"{"vat": "DE 1"}"#);
    let done = add(&mut *boss, "Zeta", r#"{"vat": "DE 2"}"#);
    let mut alice = b.open("alice", 0);
    let t = alice.take(done).unwrap().lock_token;
    alice.complete(done, t, None).unwrap();
    let row = |title: &str, vat: &str, rid: &str| NewItem {
        params: format!(r#"{{"vat": "{vat}"}}"#),
        request_id: Some(rid.to_string()),
        ..NewItem::titled(title)
    };
    let rows = [
        row("Acme again", "de-1", "r1"),
        row("Zeta again", "DE2", "r2"),
        row("New", "DE 3", "r3"),
    ];
    let skipping = AddOptions {
        skip_duplicates: true,
        ..AddOptions::creating_queues()
    };
    let before = boss.count(&Default::default()).unwrap();
    let added = boss.add_items(&rows, skipping).unwrap();
    // Like an open item: left out, naming it. Like a finished one only: added.
    assert!(added[0].skipped && !added[0].created, "{added:?}");
    assert_eq!(added[0].id, open);
    assert!(added[1].created && !added[1].skipped, "{added:?}");
    assert!(added[2].created && !added[2].skipped, "{added:?}");
    assert_eq!(boss.count(&Default::default()).unwrap(), before + 2);
    // The same rows again: already there by request id, not "duplicates" of themselves.
    let again = boss.add_items(&rows[1..], skipping).unwrap();
    assert!(again.iter().all(|a| !a.created && !a.skipped), "{again:?}");
    assert_eq!((again[0].id, again[1].id), (added[1].id, added[2].id));
    assert!(boss.check().unwrap().is_empty());
}

fn the_report_counts_merges_per_queue(b: &dyn Backend) {
    use caseload::domain::figures::Period;
    use caseload::store::ReportQuery;
    let mut boss = setup(b);
    let keep = add(&mut *boss, "Acme", "{}");
    let dup = add(&mut *boss, "Acme", "{}");
    let dup2 = add(&mut *boss, "Acme", "{}");
    let other = add(&mut *boss, "Other", "{}");
    boss.merge(dup, keep, None, None).unwrap();
    boss.merge(dup2, keep, None, None).unwrap();
    boss.cancel(other, "no").unwrap();
    let now = boss.now().unwrap();
    let report = |s: &mut dyn Store, since, until| {
        s.report(&ReportQuery {
            period: Period { since, until },
            queue: None,
            rows_only: false,
        })
        .unwrap()
    };
    let r = report(&mut *boss, now - 3_600_000, now + 60_000);
    let q = r
        .queues
        .iter()
        .find(|q| q.figures.name == "default")
        .unwrap();
    assert_eq!(q.merged, 2);
    let r = report(&mut *boss, now - 7_200_000, now - 3_600_000);
    let q = r
        .queues
        .iter()
        .find(|q| q.figures.name == "default")
        .unwrap();
    assert_eq!(q.merged, 0, "merged outside the period");
}

fn check_finds_wrong_keys_and_the_repair_rebuilds_them(b: &dyn Backend) {
    let mut boss = setup(b);
    key_field(&mut *boss, "vat", FieldType::Text);
    let a = add(&mut *boss, "Acme", r#"{"vat": "DE 1"}"#);
    let c = add(&mut *boss, "Zeta", r#"{"vat": "DE 2"}"#);
    add(&mut *boss, "Omega", r#"{"vat": "DE 3"}"#);
    assert!(boss.check().unwrap().is_empty());
    b.spoil(&format!(
        "UPDATE item_keys SET key = 'de9' WHERE item_id = {a}; \
         DELETE FROM item_keys WHERE item_id = {c}"
    ));
    let found = boss.check().unwrap().join("\n");
    assert!(
        found.contains(&format!(
            "item #{a} (queue 'default') keeps other keys of 'vat'"
        )),
        "{found}"
    );
    assert!(
        found.contains(&format!(
            "item #{c} (queue 'default') lacks its key of 'vat'"
        )),
        "{found}"
    );
    assert!(found.contains("--repair-figures"), "{found}");
    // Staff may not repair; a supervisor's repair rebuilds the keys.
    assert_code(b.open("alice", 0).rebuild_figures(), exit::SUPERVISOR_ONLY);
    boss.rebuild_figures().unwrap();
    assert!(boss.check().unwrap().is_empty());
    let d = add(&mut *boss, "Quux", r#"{"vat": "de1"}"#);
    assert_eq!(offered(&mut *boss, d)[0], (a, "same vat".to_string()));
}

fn merging_across_queues_is_for_supervisors(b: &dyn Backend) {
    use caseload::domain::QueueUpdate;
    let mut boss = setup(b);
    boss.set_queue("other", &QueueUpdate::default(), true)
        .unwrap();
    let here = add(&mut *boss, "Acme", "{}");
    let there = boss
        .add(&NewItem {
            queue: "other".into(),
            ..NewItem::titled("Acme")
        })
        .unwrap()
        .id;
    let mut alice = b.open("alice", 0);
    let t = alice.take(here).unwrap().lock_token;
    let e = assert_code(
        alice.merge(here, there, Some(t), None),
        exit::SUPERVISOR_ONLY,
    );
    assert!(
        e.to_string().contains("another queue") || e.to_string().contains("queue 'other'"),
        "{e}"
    );
    assert_eq!(boss.item(here).unwrap().state, ItemState::Open);
    assert!(boss.comments(there).unwrap().is_empty());
    alice.release(here, t).unwrap();
    boss.merge(here, there, None, Some("same customer"))
        .unwrap();
    assert_eq!(boss.item(here).unwrap().duplicate_of, Some(there));
}

/// A value of one of the four key fields, drawn by `r`: the same few records spelt with
/// other case, accents, spacing and punctuation, in canonical and raw forms, valid and
/// not (an imported record is not corrected yet), numbers, empty and missing values.
fn spelling(field: &str, r: u64) -> Option<serde_json::Value> {
    use serde_json::json;
    let pick = |v: &[&str]| json!(v[(r / 7) as usize % v.len()]);
    Some(match (field, r % 7) {
        (_, 0) => return None,
        (_, 1) => json!(""),
        ("vat", 2) => json!(123_456_789),
        ("vat", _) => pick(&[
            "DE 123.456-789",
            "de123456789",
            " De-123 456 789 ",
            "DÉ123456789",
            "dé 123/456/789",
            "ÄÖÜ ß 12",
            "äöü SS 12",
            "FR 99!",
            "fr99",
        ]),
        ("email", _) => pick(&[
            "Anna@Example.com",
            " anna@EXAMPLE.com",
            "Ánna@Example.com",
            "anna.b@example.com",
            "not an e-mail",
            "ANNA@example.COM ",
        ]),
        ("iban", _) => pick(&[
            "DE89 3704 0044 0532 0130 00",
            "de89370400440532013000",
            "DE89-3704-0044-0532-0130-00",
            "DE00 1234 5678",
            "GB82 WEST 1234 5698 7654 32",
            "gb82west12345698765432",
        ]),
        (_, _) => pick(&[
            "+49 30 123456",
            "030 123456",
            "(030) 12-34-56",
            "+4930123456",
            "+1 (202) 555-0143",
            "12",
            "phone me",
        ]),
    })
}

/// The keys of the items of `queue` as the table holds them: "title|field|key", sorted.
fn kept_keys(b: &dyn Backend, queue: &str) -> Vec<String> {
    b.texts(&format!(
        "SELECT i.title || '|' || k.field || '|' || k.key FROM item_keys k \
         JOIN items i ON i.id = k.item_id WHERE i.queue = '{queue}' ORDER BY 1"
    ))
}

/// A queue's keys rebuilt by a field's definition (a page of items at a time) are the
/// keys each item's own write gives (one item at a time), on random records.
fn a_definition_keys_items_as_their_writes_do(b: &dyn Backend) {
    let mut boss = setup(b);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    let mut r = seed;
    let mut next = || {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        r
    };
    let fields = [
        ("vat", FieldType::Text, None),
        ("email", FieldType::Email, None),
        ("iban", FieldType::Iban, None),
        ("phone", FieldType::Phone, Some("DE")),
    ];
    let define = |s: &mut dyn Store, queue: &str| {
        for (name, kind, country) in fields {
            let c = FieldChange {
                kind: Some(kind),
                country: Some(country.map(str::to_string)),
                dedupe: Some(Some(Dedupe::Key)),
                ..FieldChange::default()
            };
            s.define_field(queue, name, &c).unwrap();
        }
    };
    // "each" is keyed as its items are written; "later" by the definitions after them.
    boss.add_batch(&[NewItem {
        queue: "each".into(),
        ..NewItem::titled("first")
    }])
    .unwrap();
    define(&mut *boss, "each");
    let n = 5_003; // more than a page of the rebuild
    let records: Vec<NewItem> = (0..n)
        .map(|i| {
            let mut p = serde_json::Map::new();
            for (name, ..) in fields {
                if let Some(v) = spelling(name, next()) {
                    p.insert(name.to_string(), v);
                }
            }
            NewItem {
                params: serde_json::Value::Object(p).to_string(),
                ..NewItem::titled(&format!("record {i}"))
            }
        })
        .collect();
    let into = |queue: &str| -> Vec<NewItem> {
        (records.iter())
            .map(|it| NewItem {
                queue: queue.into(),
                ..it.clone()
            })
            .collect()
    };
    for chunk in into("each").chunks(1000) {
        boss.add_batch(chunk).unwrap();
    }
    boss.add_batch(&into("later")).unwrap();
    assert!(kept_keys(b, "later").is_empty(), "no key fields yet");
    define(&mut *boss, "later");
    let each = kept_keys(b, "each");
    let later = kept_keys(b, "later");
    assert!(each.len() > n, "seed {seed}: {} keys", each.len());
    assert_eq!(each, later, "seed {seed}");
    // The folding and the canonical forms were exercised: one key for many spellings.
    for (field, key) in [
        ("vat", "de123456789"),
        ("email", "annaexamplecom"),
        ("iban", "de89370400440532013000"),
        ("phone", "4930123456"),
    ] {
        let spelt = (later.iter())
            .filter(|k| k.ends_with(&format!("|{field}|{key}")))
            .count();
        assert!(
            spelt > n / 40,
            "seed {seed}: {spelt} items keyed {field} {key}"
        );
    }
    // And the repair, which rebuilds every queue's keys the same way, changes nothing.
    boss.rebuild_figures().unwrap();
    assert_eq!(kept_keys(b, "each"), each, "seed {seed}");
    assert!(boss.check().unwrap().is_empty());
}
