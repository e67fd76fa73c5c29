//! `caseload demo`: a fresh database filled from the bundled data set with two weeks of
//! history — items arriving every day, five (pretend) people taking, completing, failing,
//! releasing, skipping and abandoning them with realistic handle times, locks taken over
//! after they expired — and a few items being worked right now, so that every screen, the
//! Stats figures and `caseload report` have something to show at once. The history is
//! written through the store itself (each person's clock set back in time), the same on
//! SQLite and PostgreSQL: a fixed seed makes it the same data on both.
//!
//! The pretend people act through the store's own checks like anyone else, so whoever
//! runs the demo must be allowed to use their names: the creator (the database's first
//! supervisor) binds each of them to the login running the demo (the OS login on SQLite,
//! the database role on PostgreSQL) before they act, unless that login may act as anyone
//! anyway (root; a superuser or the tables' owner). Binding rather than writing the
//! history as raw rows keeps every write on the lock protocol's one path, and the audit
//! says truthfully who made them up: `alice (as ux3e)`. It also lets the newcomer try
//! the demo as one of them: `caseload --user bob`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use anyhow::{Context, anyhow, bail};
use serde::Deserialize;

use crate::domain::texts::Purpose;
use crate::domain::{Actor, Millis, NewItem};
use crate::store::clock::system_clock;
use crate::store::postgres::{PgOptions, PgStore};
use crate::store::sqlite::{OpenOptions, SqliteStore};
use crate::store::{AddOptions, ListFilter, Reads, Store, StoreError, TakeNext};

#[path = "demo_texts.rs"]
mod demo_texts;

/// The bundled demo data set.
const DEMO_DATA: &str = include_str!("../assets/demo.jsonl");

/// The clock a demo is written by (the host's; a fixed one for the README's screenshot).
pub type DemoClock = Arc<dyn Fn() -> Millis + Send + Sync>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DemoRow {
    queue: String,
    title: String,
    #[serde(default)]
    body: String,
    #[serde(default)]
    params: Option<serde_json::Value>,
    #[serde(default)]
    priority: i64,
    #[serde(default)]
    due_in_hours: Option<i64>,
    request_id: String,
}

/// The demo rows, with due times relative to `now`.
pub(crate) fn rows(now: Millis) -> Result<Vec<NewItem>, String> {
    DEMO_DATA
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let r: DemoRow = serde_json::from_str(l)
                .map_err(|e| format!("assets/demo.jsonl line {}: {e}", i + 1))?;
            let mut item = NewItem::titled(&r.title);
            item.queue = r.queue;
            item.body = r.body;
            item.params = r.params.map_or_else(|| "{}".into(), |p| p.to_string());
            item.priority = r.priority;
            item.due_at = r.due_in_hours.map(|h| now + h * 3_600_000);
            item.request_id = Some(r.request_id);
            Ok(item)
        })
        .collect()
}

/// Opens the store of one pretend person by name.
type OpenPerson<'a> = dyn FnMut(&str) -> Result<Box<dyn Person>, StoreError> + 'a;

/// One pretend person's store, whose clock can be set back in time.
trait Person {
    fn store(&mut self) -> &mut dyn Store;
    /// From now on, the store's clock runs `back_ms` behind the real one.
    fn travel(&mut self, back_ms: i64);
}

/// On SQLite every person's clock reads one shared setting.
struct SqlitePerson(SqliteStore, Arc<AtomicI64>);

impl Person for SqlitePerson {
    fn store(&mut self) -> &mut dyn Store {
        &mut self.0
    }
    fn travel(&mut self, back_ms: i64) {
        self.1.store(back_ms, Ordering::Relaxed);
    }
}

struct PgPerson(PgStore);

impl Person for PgPerson {
    fn store(&mut self) -> &mut dyn Store {
        &mut self.0
    }
    fn travel(&mut self, back_ms: i64) {
        self.0.set_clock_offset(-back_ms);
    }
}

/// Creates the demo database at `path` (replacing an earlier demo file when `replace`);
/// returns how many items it holds.
pub fn create(path: &Path, creator: &Actor, replace: bool) -> anyhow::Result<usize> {
    create_with_clock(path, creator, replace, Arc::new(system_clock))
}

/// [`create`] with the clock the demo is written by: "now" for the last of its history
/// and today's work (tests and the README's screenshot pass a fixed one).
#[doc(hidden)] // a test hook, not part of the library's face
pub fn create_with_clock(
    path: &Path,
    creator: &Actor,
    replace: bool,
    clock: DemoClock,
) -> anyhow::Result<usize> {
    if replace {
        for suffix in ["", "-wal", "-shm"] {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            let _ = std::fs::remove_file(&p);
        }
    }
    let opts = OpenOptions {
        create_dirs: true,
        allow_empty: true,
        ..OpenOptions::default()
    };
    let shown = path.display().to_string();
    let c = Arc::clone(&clock);
    let mut store =
        SqliteStore::open_with_clock(path, creator.clone(), &opts, Box::new(move || c()))
            .context(shown.clone())?;
    refuse_used(&mut store, &shown)?;
    bind_people(&mut store)?;
    let back = Arc::new(AtomicI64::new(0));
    let now = clock();
    let os_user = creator.os_user.clone();
    fill(now, store, &mut |name| {
        let b = Arc::clone(&back);
        let c = Arc::clone(&clock);
        let s = SqliteStore::open_with_clock(
            path,
            Actor::new(name, os_user.as_str()),
            &opts,
            Box::new(move || c() - b.load(Ordering::Relaxed)),
        )?;
        s.fill_without_waiting_for_the_disk()?;
        Ok(Box::new(SqlitePerson(s, Arc::clone(&back))))
    })
}

/// Fills an empty PostgreSQL database at `url` with the demo; returns how many items it
/// holds.
pub fn create_pg(url: &str, creator: &Actor) -> anyhow::Result<usize> {
    let opts = PgOptions::default();
    let mut store = PgStore::open(url, creator.clone(), &opts)?;
    refuse_used(&mut store, "the PostgreSQL database")?;
    bind_people(&mut store)?;
    let now = store.now()?;
    let os_user = creator.os_user.clone();
    fill(now, store, &mut |name| {
        let mut s = PgStore::open(url, Actor::new(name, os_user.as_str()), &opts)?;
        s.fill_without_waiting_for_the_disk()?;
        Ok(Box::new(PgPerson(s)))
    })
}

/// Lets the login running the demo act as each pretend person (see the module's doc):
/// the creator binds their names to it, unless it may act as anyone anyway.
fn bind_people(creator: &mut dyn Store) -> anyhow::Result<()> {
    let real = creator.real().clone();
    if real.privileged {
        return Ok(());
    }
    for (name, _, _) in STAFF {
        if name == real.login {
            continue;
        }
        creator.set_login(name, Some(&real.login)).with_context(|| {
            format!(
                "the demo lets your login ({}) act as its pretend people, which only a                  supervisor of this database may allow",
                real.login
            )
        })?;
    }
    Ok(())
}

fn refuse_used(store: &mut dyn Store, shown: &str) -> anyhow::Result<()> {
    let existing = store.count(&ListFilter {
        state: crate::store::StateFilter::All,
        ..ListFilter::default()
    })?;
    if existing > 0 {
        bail!("{shown} already holds {existing} items; the demo needs a new database");
    }
    Ok(())
}

const MIN: i64 = 60_000;
const HOUR: i64 = 60 * MIN;
const DAY: i64 = 24 * HOUR;
/// Days of history before today.
const DAYS: i64 = 14;

/// The pretend staff: name, queue, and how fast they are (1.0 is the queue's usual pace).
const STAFF: [(&str, &str, f64); 5] = [
    ("alice", "helpdesk", 0.8),
    ("bob", "helpdesk", 1.3),
    ("carol", "fulfilment", 1.0),
    ("dave", "verification", 0.7),
    ("erin", "verification", 1.6),
];

/// A queue's usual handle time.
fn usual_ms(queue: &str) -> f64 {
    match queue {
        "helpdesk" => 14.0 * MIN as f64,
        "verification" => 7.0 * MIN as f64,
        _ => 10.0 * MIN as f64,
    }
}

/// A small deterministic generator (the same history on every run and backend).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// How a hold ends.
#[derive(Clone, Copy)]
enum End {
    Complete,
    Fail,
    Release,
    Skip,
    /// Walks away: the lock expires and someone else takes the item over.
    Abandon,
}

fn end_of(r: f64) -> End {
    match r {
        x if x < 0.84 => End::Complete,
        x if x < 0.89 => End::Fail,
        x if x < 0.93 => End::Release,
        x if x < 0.97 => End::Skip,
        _ => End::Abandon,
    }
}

/// Writes the history and today's work through `creator` (the supervisor, who adds the
/// items) and the people `open` gives; returns how many items were added.
fn fill(
    now: Millis,
    creator: impl Store + 'static,
    open: &mut OpenPerson<'_>,
) -> anyhow::Result<usize> {
    let mut rows = rows(now).map_err(|e| anyhow!(e))?;
    // Arrivals mix the queues: a fixed shuffle by request id.
    rows.sort_by_key(|r| {
        let h = r
            .request_id
            .as_deref()
            .unwrap_or("")
            .bytes()
            .fold(1469598103934665603u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(1099511628211)
            });
        // splitmix64's finaliser: the ids share long prefixes, FNV alone keeps their order.
        let h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        let h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^ (h >> 31)
    });

    let total = rows.len();
    let mut boss = open(&creator.actor().name)?;
    drop(creator);
    let mut people: BTreeMap<&str, Box<dyn Person>> = BTreeMap::new();
    for (name, _, _) in STAFF {
        people.insert(name, open(name)?);
    }
    let mut rng = Rng(0x5EED_CA5E_10AD_0001);
    let today = now - now.rem_euclid(DAY);
    let mut pending = rows.into_iter();
    for d in (1..=DAYS).rev() {
        let day = today - d * DAY;
        // 1970-01-01 was a Thursday (3, counting from Monday as 0).
        let weekend = matches!((day / DAY + 3).rem_euclid(7), 5 | 6);
        // Arrivals at 07:30: fewer at the weekend.
        let arrival = day + 7 * HOUR + 30 * MIN;
        let batch: Vec<NewItem> = pending
            .by_ref()
            .take(if weekend { 6 } else { 24 })
            .map(|mut it| {
                // Due within hours of arriving (the data set's times are relative to now).
                it.due_at = it.due_at.map(|d| arrival + ((d - now).abs() / 6).max(HOUR));
                it
            })
            .collect();
        boss.travel(now - arrival);
        boss.store()
            .add_items(&batch, AddOptions::creating_queues())?;
        if d == DAYS {
            demo_texts::keep(boss.store())?;
        }
        if !weekend {
            work_day(now, day, &mut people, &mut rng)?;
        }
    }
    // Today's arrivals, and work in progress: bob holds two items (one of them for so
    // long that the lock expired) and has parked a third for a call-back, carol holds one
    // and has finished a few this morning.
    let rest: Vec<NewItem> = pending.collect();
    boss.travel(2 * HOUR);
    boss.store()
        .add_items(&rest, AddOptions::creating_queues())?;
    let take_in = |p: &mut Box<dyn Person>, queue: &str| {
        p.store().take_next(&TakeNext {
            queue: Some(queue.into()),
            skip: vec![],
        })
    };
    let carol = people.get_mut("carol").expect("carol is staff");
    for i in 0..4 {
        carol.travel((70 - i * 12) * MIN);
        let item = take_in(carol, "fulfilment")?;
        carol.travel((61 - i * 12) * MIN);
        carol
            .store()
            .complete(item.id, item.lock_token, Some("Shipped"))?;
    }
    carol.travel(5 * MIN);
    take_in(carol, "fulfilment")?;
    let bob = people.get_mut("bob").expect("bob is staff");
    bob.travel(45 * MIN);
    take_in(bob, "helpdesk")?;
    park_a_call_back(bob, now)?;
    bob.travel(5 * MIN);
    take_in(bob, "verification")?;
    demo_texts::sla(boss.store())?;
    define_verification_fields(boss.store())?;
    let reviewed = kyc_reviews(&mut boss, &mut people)?;
    Ok(total + reviewed)
}

/// Identity checks a second person reviews (issue 29 §1): a small `kyc` queue that
/// reviews every completion, with its reasons for rejecting, and three checks dave and
/// erin completed this morning waiting for review — which the demo's own user (neither
/// of them) may take: `5` in the TUI, then `n`, or `caseload claim --review`. Returns how
/// many items it added.
fn kyc_reviews(
    boss: &mut Box<dyn Person>,
    people: &mut BTreeMap<&str, Box<dyn Person>>,
) -> anyhow::Result<usize> {
    const CHECKS: [(&str, &str); 4] = [
        (
            "KYC: Mei Brandt, Vandelay Industries",
            "Passport and utility bill uploaded",
        ),
        (
            "KYC: Jon Ortega, Ortega Fresh Produce",
            "ID card uploaded; address by phone",
        ),
        (
            "KYC: Ana Sousa, Lisbon Ceramics",
            "Residence permit and bank statement",
        ),
        (
            "KYC: Lars Eklund, Nordvik Timber",
            "Passport uploaded; address pending",
        ),
    ];
    let items: Vec<NewItem> = CHECKS
        .iter()
        .enumerate()
        .map(|(i, (title, body))| NewItem {
            queue: "kyc".into(),
            title: (*title).into(),
            body: (*body).into(),
            request_id: Some(format!("demo-kyc-{i}")),
            ..NewItem::default()
        })
        .collect();
    boss.travel(100 * MIN);
    boss.store()
        .add_items(&items, AddOptions::creating_queues())?;
    let every = crate::domain::QueueUpdate {
        review_percent: Some(100),
        ..Default::default()
    };
    boss.store().set_queue("kyc", &every, false)?;
    demo_texts::keep_review(boss.store())?;
    for (i, name) in ["dave", "erin", "dave"].into_iter().enumerate() {
        let p = people.get_mut(name).expect("dave and erin are staff");
        let i = i as i64;
        p.travel((90 - i * 20) * MIN);
        let item = p.store().take_next(&TakeNext {
            queue: Some("kyc".into()),
            skip: vec![],
        })?;
        p.travel((80 - i * 20) * MIN);
        let result = "Document and address match";
        p.store().complete(item.id, item.lock_token, Some(result))?;
    }
    Ok(items.len())
}

/// A call-back: bob took a helpdesk item 25 minutes ago and parked it until the afternoon.
fn park_a_call_back(bob: &mut Box<dyn Person>, now: Millis) -> anyhow::Result<()> {
    bob.travel(25 * MIN);
    let call = bob.store().take_next(&TakeNext {
        queue: Some("helpdesk".into()),
        skip: vec![],
    })?;
    bob.travel(20 * MIN);
    let (until, why) = (now + 3 * HOUR, "call back after their 2 pm meeting");
    bob.store().park(call.id, call.lock_token, until, why)?;
    Ok(())
}

/// The verification queue's fields (defined today, after the history: the records were
/// worked before there were rules), so a newcomer sees ✘ beside its imperfect records at
/// once: a VAT number with a letter O for a zero, an e-mail with a comma, a phone without
/// its country code, an IBAN whose checksum is wrong; the checklist every record ends with.
/// The VAT number and IBAN are duplicate keys and the legal name is compared as text, so
/// the box "Possibly the same" shows the other records of the same supplier.
fn define_verification_fields(boss: &mut dyn Store) -> anyhow::Result<()> {
    use crate::domain::queue_fields::{Dedupe, FieldChange, FieldType as T};
    // Name, type, pattern, label, help.
    let fields: [(&str, T, &str, &str, &str); 8] = [
        ("record_id", T::Text, "^[A-Z]{3}-[0-9]{6}$", "Record", ""),
        (
            "entity",
            T::Text,
            "",
            "Legal name",
            "As the registry spells it",
        ),
        (
            "subject",
            T::Text,
            "",
            "Person",
            "As the identity document spells it",
        ),
        (
            "vat_number",
            T::Text,
            "^[A-Z]{2}[0-9]{8,12}$",
            "VAT number",
            "Country code, then 8 to 12 digits, no spaces",
        ),
        ("email", T::Email, "", "E-mail", ""),
        (
            "phone",
            T::Phone,
            "",
            "Phone",
            "With its country code: +49 30 …",
        ),
        ("iban", T::Iban, "", "IBAN", ""),
        ("checks", T::Checklist, "", "Checks", ""),
    ];
    let some = |s: &str| (!s.is_empty()).then(|| Some(s.to_string()));
    for (name, kind, pattern, label, help) in fields {
        let change = FieldChange {
            kind: Some(kind),
            required: Some(name == "record_id"),
            pattern: some(pattern),
            label: some(label),
            help: some(help),
            choices: (kind == T::Checklist).then(|| {
                vec![
                    "Record matches the source document".into(),
                    "Names spelt as in the registry".into(),
                ]
            }),
            // Duplicates (issue 27): the same VAT number or IBAN is the same supplier;
            // the legal names are compared as titles are ("Brightwater Tools Ltd" has
            // seven records).
            dedupe: match name {
                "vat_number" | "iban" => Some(Some(Dedupe::Key)),
                "entity" => Some(Some(Dedupe::Text)),
                _ => None,
            },
            ..FieldChange::default()
        };
        boss.define_field("verification", name, &change)?;
    }
    Ok(())
}

/// One working day: each person starts some time in the morning and works a few items
/// of their queue, one at a time, in the order of the clock.
fn work_day(
    now: Millis,
    day: Millis,
    people: &mut BTreeMap<&str, Box<dyn Person>>,
    rng: &mut Rng,
) -> anyhow::Result<()> {
    struct Shift {
        next_at: Millis,
        left: u32,
        holding: Option<(i64, i64, End)>,
    }
    let mut shifts: BTreeMap<&str, Shift> = STAFF
        .iter()
        .map(|(name, _, _)| {
            let start = day + 8 * HOUR + (rng.next() * 150.0) as i64 * MIN;
            let left = 2 + (rng.next() * 4.0) as u32;
            (
                *name,
                Shift {
                    next_at: start,
                    left,
                    holding: None,
                },
            )
        })
        .collect();
    while let Some((&name, _)) = shifts
        .iter()
        .filter(|(_, s)| s.left > 0 || s.holding.is_some())
        .min_by_key(|(_, s)| s.next_at)
    {
        let (_, queue, pace) = STAFF.iter().find(|s| s.0 == name).copied().expect("staff");
        let shift = shifts.get_mut(name).expect("shift");
        let p = people.get_mut(name).expect("person");
        p.travel(now - shift.next_at);
        if let Some((id, token, end)) = shift.holding.take() {
            let s = p.store();
            match end {
                End::Complete => {
                    s.complete(id, token, None)?;
                }
                End::Fail => {
                    s.fail_said(id, token, demo_texts::pick(queue, Purpose::Fail, id))?;
                }
                End::Release => {
                    s.release_said(id, token, demo_texts::pick(queue, Purpose::Release, id))?;
                }
                End::Skip => {
                    s.skip_said(id, token, demo_texts::pick(queue, Purpose::Skip, id))?;
                }
                End::Abandon => {}
            }
            shift.next_at += (1.0 + rng.next() * 6.0) as i64 * MIN;
            continue;
        }
        let taken = p.store().take_next(&TakeNext {
            queue: Some(queue.into()),
            skip: vec![],
        });
        let item = match taken {
            Ok(item) => item,
            Err(StoreError::NothingToClaim(_) | StoreError::UnknownQueue { .. }) => {
                shift.left = 0;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        // Handle times spread around the queue's usual time, slower or faster by person.
        let spread = 0.45 + rng.next() * rng.next() * 2.6;
        let end = match end_of(rng.next()) {
            // Nobody else works fulfilment to take an abandoned item over.
            End::Abandon if queue == "fulfilment" => End::Complete,
            e => e,
        };
        let held = match end {
            End::Abandon => 45 * MIN,
            End::Release | End::Skip => (usual_ms(queue) * pace * 0.3 * spread) as i64,
            _ => (usual_ms(queue) * pace * spread) as i64,
        };
        shift.holding = Some((item.id, item.lock_token, end));
        shift.left -= 1;
        shift.next_at += held.max(MIN / 2);
    }
    Ok(())
}
