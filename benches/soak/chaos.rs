//! The chaos loop's table: every write path (and the reads beside them) that one
//! supervisor, "boss", runs at random while the workers claim and complete. Adding a write
//! path is one line in `CHAOS` (or in `worker::HOLDER` for a holder's write): its name, how
//! often, its class (what the analysis expects of it), the exit codes that are answers
//! rather than errors, and its arguments.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use crate::backend::Kind;
use crate::process::{Class, Exit, Request, Runner};
use crate::rng::Rng;

/// The run's main queue (a text field `note` for `set`).
pub(crate) const QUEUE: &str = "q";
/// A queue whose items carry a checklist (`steps`: a, b, c), ticked before Complete.
pub(crate) const LISTS: &str = "lists";
/// The holders' ready-made texts in the main and the checklist queue from the start:
/// purpose, text, code (a finish by code alone takes the text as its result or reason).
pub(crate) const READY: [(&str, &str, &str); 4] = [
    ("result", "all good", "ok"),
    ("fail", "no data", "nodata"),
    ("release", "later", "later"),
    ("skip", "not mine", "notmine"),
];
/// Exit 3: the item was not in a state for it (held, finished...).
pub(crate) const CONFLICT: &[i32] = &[3];
/// Exit 1 or 3: reopen, requeue, unlock and edit say "open already", "not locked",
/// "already has those values" with exit 1; merge "into itself", "cancelled already",
/// "was itself merged into".
const STATE: &[i32] = &[1, 3];
const NONE: &[i32] = &[];
/// Exit 1: "has no field 'extra'", "has no ready-made text", "already has that SLA",
/// "already marked not the same", "the same item as itself", "has left already".
const ABSENT: &[i32] = &[1];

/// What a chaos entry needs to build its arguments.
pub(crate) struct Ctx<'a> {
    pub(crate) rng: Rng,
    pub(crate) kind: Kind,
    pub(crate) dir: PathBuf,
    pub(crate) workers: Vec<String>,
    /// Items known to exist (chaos picks among them).
    pub(crate) seen: &'a Seen,
    /// Items added but not yet finished by a worker (about): imports wait while it is high,
    /// so the queue runs empty now and then (and "nothing to claim" is judged too).
    pub(crate) backlog: &'a AtomicI64,
    /// Items the workers parked (the supervisor's `wake` picks among them).
    pub(crate) parks: &'a Seen,
    /// Ready-made texts added so far (`text delete` deletes one of them).
    pub(crate) texts: Vec<String>,
    /// The call's id, for markers.
    pub(crate) call: usize,
    /// Import files written so far.
    pub(crate) files: Vec<PathBuf>,
    /// Where `migrate-to` makes its target databases (SQLite runs; None: no server).
    pub(crate) pg_admin: Option<String>,
    /// The run's tag (names the targets).
    pub(crate) tag: String,
    /// What a chaos entry that judges on the spot found (`migrate-to`'s target).
    pub(crate) found: &'a Mutex<crate::analysis::Findings>,
}

impl Ctx<'_> {
    /// Text unique to this call, so that its write can be found in the database.
    pub(crate) fn marker(&self) -> String {
        format!("soak-{}", self.call)
    }
    fn item(&mut self) -> String {
        let pick = self.rng.next_u64();
        self.seen.pick(pick).max(1).to_string()
    }
    fn parked(&mut self) -> String {
        let pick = self.rng.next_u64();
        match self.parks.pick(pick) {
            0 => self.item(),
            id => id.to_string(),
        }
    }
    fn worker(&mut self) -> String {
        let i = self.rng.below(self.workers.len() as u64) as usize;
        self.workers[i].clone()
    }
}

/// The ids of the last thousand items seen (claimed or added), for picking one.
pub(crate) struct Seen(Mutex<(Vec<i64>, usize)>);

impl Seen {
    pub(crate) fn new(ids: impl Iterator<Item = i64>) -> Seen {
        Seen(Mutex::new((ids.collect(), 0)))
    }

    pub(crate) fn add(&self, id: i64) {
        let mut g = self.0.lock().expect("seen");
        let (ids, next) = &mut *g;
        if ids.len() < 1000 {
            ids.push(id);
        } else {
            ids[*next % 1000] = id;
            *next += 1;
        }
    }

    pub(crate) fn pick(&self, r: u64) -> i64 {
        let g = self.0.lock().expect("seen");
        if g.0.is_empty() {
            0
        } else {
            g.0[(r % g.0.len() as u64) as usize]
        }
    }
}

/// One call of a chaos entry: its arguments, and the database if not the run's own.
pub(crate) struct Step {
    pub(crate) args: Vec<String>,
    pub(crate) db: Option<String>,
}

/// How a chaos entry makes its calls.
pub(crate) enum Build {
    /// One call: words split on spaces, with `{item}` (an item seen), `{parked}` (an item
    /// a worker parked), `{worker}` (a worker's name), `{marker}` (text unique to the
    /// call) and `{n}` (-5..=5) filled in.
    Args(&'static str),
    /// Calls made by a function (None: not on this backend).
    With(fn(&mut Ctx<'_>) -> Option<Vec<Step>>),
    /// A function that runs its own calls and judges them on the spot (its findings go
    /// to `Ctx::found`).
    Run(fn(&Runner, &mut Ctx<'_>, f64)),
}

/// One entry of the chaos loop.
pub(crate) struct Chaos {
    pub(crate) name: &'static str,
    pub(crate) weight: u32,
    pub(crate) class: Class,
    pub(crate) refusals: &'static [i32],
    pub(crate) build: Build,
}

impl Chaos {
    /// The calls to run now (None: not on this backend).
    pub(crate) fn steps(&self, c: &mut Ctx<'_>) -> Option<Vec<Step>> {
        match self.build {
            Build::With(f) => f(c),
            Build::Run(_) => None,
            Build::Args(words) => {
                let args = words
                    .split(' ')
                    .map(|w| match w {
                        "{item}" => c.item(),
                        "{parked}" => c.parked(),
                        "{worker}" => c.worker(),
                        "{marker}" => c.marker(),
                        "{n}" => c.rng.range(-5, 5).to_string(),
                        w => w.to_string(),
                    })
                    .collect();
                Some(vec![Step { args, db: None }])
            }
        }
    }
}

const fn chaos(
    name: &'static str,
    weight: u32,
    class: Class,
    refusals: &'static [i32],
    build: Build,
) -> Chaos {
    Chaos {
        name,
        weight,
        class,
        refusals,
        build,
    }
}

use Build::{Args, Run, With};

/// The chaos loop: one line per write path (and the reads that run beside them). A new
/// write path is one more line: its name, how often, its class (what the analysis expects
/// of it), the exit codes that answer rather than fail, and its arguments.
#[rustfmt::skip]
pub(crate) const CHAOS: &[Chaos] = &[
    // producers
    chaos("import", 6, Class::Write, NONE, With(import_new)),
    chaos("re-import", 2, Class::MayWrite, NONE, With(import_again)),
    chaos("import --skip-duplicates", 3, Class::MayWrite, NONE, With(import_dups)),
    chaos("add", 3, Class::Write, NONE, Args("add --queue q --title {marker} --request-id {marker} --source soak")),
    chaos("add --due", 1, Class::Write, NONE, Args("add --queue q --title {marker} --priority {n} --due 2h --body {marker} --params {\"note\":\"same\"}")),
    chaos("init", 1, Class::MayWrite, NONE, Args("init")),
    chaos("comment --file", 1, Class::Write, NONE, With(comment_file)),
    chaos("add spare", 1, Class::Write, ABSENT, With(add_spare)),
    // supervisors
    chaos("reap", 2, Class::MayWrite, NONE, Args("reap")),
    chaos("unlock --expired", 2, Class::MayWrite, NONE, Args("unlock --expired --reason {marker}")),
    chaos("unlock", 2, Class::Write, STATE, Args("unlock {item} --reason {marker}")),
    chaos("unlock --holder", 1, Class::MayWrite, NONE, Args("unlock --holder {worker} --reason {marker}")),
    chaos("unlock --queue", 1, Class::MayWrite, NONE, Args("unlock --queue lists --all --reason {marker}")),
    chaos("complete --override", 2, Class::Read, NONE, Run(supervisor_override)),
    chaos("reassign", 2, Class::Write, CONFLICT, Args("reassign {item} --to {worker} --reason {marker}")),
    chaos("assign", 2, Class::Write, CONFLICT, Args("assign {item} --to {worker} --reason {marker}")),
    chaos("reopen", 3, Class::Write, STATE, Args("reopen {item} --reason {marker}")),
    chaos("requeue", 1, Class::Write, STATE, Args("requeue {item}")),
    chaos("cancel", 1, Class::Write, CONFLICT, Args("cancel {item} --reason {marker}")),
    chaos("edit", 2, Class::Write, STATE, Args("edit {item} --priority {n}")),
    chaos("edit --due", 1, Class::Write, STATE, With(edit_due)),
    chaos("comment", 3, Class::Write, NONE, Args("comment {item} {marker}")),
    chaos("wake", 3, Class::Write, STATE, Args("wake {parked}")),
    chaos("merge", 2, Class::Write, STATE, Args("merge {item} --into {item} --reason {marker}")),
    chaos("not-duplicate", 1, Class::Write, ABSENT, Args("not-duplicate {item} {item}")),
    chaos("text add", 1, Class::Write, NONE, With(text_add)),
    chaos("text delete", 1, Class::Write, ABSENT, With(text_delete)),
    chaos("reject text", 2, Class::Write, ABSENT, With(reject_text)),
    chaos("code text", 2, Class::Write, ABSENT, With(code_text)),
    chaos("check --repair-figures", 1, Class::MayWrite, NONE, With(repair_figures)),
    chaos("migrate-to", 2, Class::Read, NONE, Run(migrate)),
    chaos("field set", 1, Class::Write, NONE, Args("field set q extra --type text --label {marker}")),
    chaos("field delete", 1, Class::Write, ABSENT, Args("field delete q extra")),
    chaos("queue set", 2, Class::Write, ABSENT, With(queue_set)),
    chaos("user set", 2, Class::Write, ABSENT, With(user_set)),
    chaos("queue rename", 1, Class::Write, ABSENT, With(queue_rename)),
    chaos("queue delete", 1, Class::Write, NONE, With(queue_delete)),
    // reads beside them
    chaos("check", 1, Class::Read, NONE, Args("check")),
    chaos("backup + check", 1, Class::Read, NONE, With(backup_and_check)),
    chaos("stats", 2, Class::Read, NONE, Args("stats --json")),
    chaos("list --search", 1, Class::Read, NONE, Args("list --search soak --limit 20")),
    chaos("list --search", 1, Class::Read, NONE, Args("list --search f1-r2 --limit 20")),
    chaos("export", 1, Class::Read, NONE, Args("export --format jsonl")),
    chaos("export --events", 1, Class::Read, NONE, Args("export --events --format jsonl")),
    chaos("report", 1, Class::Read, NONE, Args("report --by queue")),
    chaos("show", 2, Class::Read, NONE, Args("show {item} --json")),
    chaos("similar", 1, Class::Read, NONE, Args("similar {item} --json")),
    chaos("history", 1, Class::Read, NONE, Args("history --of {worker}")),
    chaos("metrics", 1, Class::Read, NONE, Args("metrics")),
    chaos("metrics --format json", 1, Class::Read, NONE, Args("metrics --format json")),
];

/// One call on the run's database.
fn one(args: &[&str]) -> Option<Vec<Step>> {
    let args = args.iter().map(|s| s.to_string()).collect();
    Some(vec![Step { args, db: None }])
}

/// A new due time for an item (or none): the figures measure a finish before it against
/// the due time it had then.
fn edit_due(c: &mut Ctx<'_>) -> Option<Vec<Step>> {
    let item = c.item();
    let due = ["tomorrow", "90m", "none"][c.rng.below(3) as usize];
    one(&["edit", &item, "--due", due])
}

/// A ready-made text for Complete (its code is made from the marker).
fn text_add(c: &mut Ctx<'_>) -> Option<Vec<Step>> {
    let m = c.marker();
    c.texts.push(m.clone());
    one(&["text", "add", QUEUE, "--for", "result", &m])
}

/// Deletes one of the texts added (by its text, which is also its code).
fn text_delete(c: &mut Ctx<'_>) -> Option<Vec<Step>> {
    if c.texts.is_empty() {
        return None;
    }
    let i = c.rng.below(c.texts.len() as u64) as usize;
    let t = c.texts.swap_remove(i);
    one(&["text", "delete", QUEUE, &t])
}

/// A queue setting: the warning, the take order, the share reviewed by a second person
/// and each person's first completions reviewed, an SLA on business hours (or none), the
/// lock age as it is (the locks stay 30 s, so a killed call's lock expires in the run),
/// the park grace (the least, 60 s, so that parks not taken back return to the pool in
/// the run, or an hour) with the undo window as it is (30 s: the analysis judges by it).
fn queue_set(c: &mut Ctx<'_>) -> Option<Vec<Step>> {
    let warn = c.rng.range(3, 9).to_string();
    let grace = ["60", "3600"][c.rng.below(2) as usize];
    match c.rng.below(8) {
        6 => {
            let share = ["none", "30%", "all", "30%"][c.rng.below(4) as usize];
            one(&["queue", "set", QUEUE, "--review", share])
        }
        7 => {
            let n = c.rng.below(3).to_string();
            one(&["queue", "set", QUEUE, "--review-new", &n])
        }
        5 => one(&[
            "queue",
            "set",
            LISTS,
            "--park-grace-seconds",
            grace,
            "--undo-seconds",
            "30",
        ]),
        0 => one(&["queue", "set", QUEUE, "--warn-seconds", &warn]),
        1 => one(&["queue", "set", QUEUE, "--order", "due"]),
        2 => one(&["queue", "set", QUEUE, "--order", "priority"]),
        3 => one(&["queue", "set", LISTS, "--sla", "4h", "--hours", "always"]),
        _ => one(&[
            "queue",
            "set",
            LISTS,
            "--sla",
            "none",
            "--lock-seconds",
            "30",
        ]),
    }
}

/// A role change, a login binding made or removed, who may take and review what, a team
/// lead's queues, or a leave and a return, of a name nobody uses in the run (exit 1: "has
/// left already", "has not left", a lead given all queues).
fn user_set(c: &mut Ctx<'_>) -> Option<Vec<Step>> {
    let m = c.marker();
    match c.rng.below(9) {
        0 => one(&["user", "set", "spare", "--role", "staff"]),
        1 => one(&["user", "set", "spare", "--role", "supervisor"]),
        2 => one(&["user", "set", "spare", "--login", "nobody"]),
        3 => one(&["user", "set", "spare", "--no-login"]),
        4 => {
            let queues = ["q", "q,lists", "all"][c.rng.below(3) as usize];
            one(&["user", "set", "spare", "--queues", queues])
        }
        5 => {
            let reviews = ["none", "all", "q"][c.rng.below(3) as usize];
            one(&["user", "set", "spare", "--reviews", reviews])
        }
        6 => one(&["user", "set", "spare", "--role", "lead", "--queues", "q"]),
        7 => one(&["user", "set", "spare", "--leaving", "--reason", &m]),
        _ => one(&["user", "set", "spare", "--back"]),
    }
}

/// The spare queue's two names: `queue rename` moves it (its items and the workers' locks
/// on them with it) from one to the other; the direction not possible now is refused
/// (exit 1, unknown queue).
const SPARE: [&str; 2] = ["spare", "spare2"];

/// An item for the spare queue, under either of its names (exit 1 under the other).
fn add_spare(c: &mut Ctx<'_>) -> Option<Vec<Step>> {
    let q = SPARE[c.rng.below(2) as usize];
    let m = c.marker();
    one(&["add", "--queue", q, "--title", &m, "--request-id", &m])
}

/// Renames the spare queue while workers may hold its items.
fn queue_rename(c: &mut Ctx<'_>) -> Option<Vec<Step>> {
    let from = c.rng.below(2) as usize;
    one(&["queue", "rename", SPARE[from], SPARE[1 - from]])
}

/// A queue created and deleted again (only an empty queue can be deleted).
fn queue_delete(c: &mut Ctx<'_>) -> Option<Vec<Step>> {
    let name = format!("gone{}", c.call);
    Some(vec![
        Step {
            args: ["queue", "set", &name, "--create"]
                .map(String::from)
                .to_vec(),
            db: None,
        },
        Step {
            args: ["queue", "delete", &name].map(String::from).to_vec(),
            db: None,
        },
    ])
}

/// Imports wait while about this many items are open.
const BACKLOG: i64 = 30;

/// A new CSV file of 10-80 rows (every other file with request ids, the others keyed by
/// the file's identity; one in four to the checklist queue), titled `soak-fN-rROW`; its
/// name carries its row count for the analysis (`fN-ROWS.csv`).
fn import_new(c: &mut Ctx<'_>) -> Option<Vec<Step>> {
    if c.backlog.load(Ordering::Relaxed) > BACKLOG {
        return None;
    }
    let n = c.files.len() + 1;
    let rows = c.rng.range(10, 80);
    c.backlog.fetch_add(rows, Ordering::Relaxed);
    let path = c.dir.join(format!("f{n}-{rows}.csv"));
    let with_ids = n.is_multiple_of(2);
    let queue = if n % 4 == 3 { LISTS } else { QUEUE };
    // One in three of the main queue's files fills its field `note`; one in six of those
    // also has a column `extra`, which a supervisor's --define-fields defines as a field
    // when `field delete` took it away.
    let fields = match (queue == QUEUE, n % 6) {
        (true, 1) => ",note,extra",
        (true, 4) => ",note",
        _ => "",
    };
    let mut text = format!(
        "title,queue,priority{}{fields}\n",
        match with_ids {
            true => ",request_id",
            false => "",
        }
    );
    for r in 1..=rows {
        let p = c.rng.range(0, 3);
        text.push_str(&format!("soak-f{n}-r{r},{queue},{p}"));
        if with_ids {
            text.push_str(&format!(",req-f{n}-r{r}"));
        }
        for _ in fields.split(',').skip(1) {
            text.push_str(&format!(",v-f{n}-r{r}"));
        }
        text.push('\n');
    }
    // One in five files without fields is JSON Lines (`fN-ROWS.jsonl`), the same rows.
    let (path, text) = match fields.is_empty() && n.is_multiple_of(5) {
        true => (path.with_extension("jsonl"), to_jsonl(&text)),
        false => (path, text),
    };
    let mut f = std::fs::File::create(&path).ok()?;
    f.write_all(text.as_bytes()).ok()?;
    c.files.push(path.clone());
    let mut args = vec!["import".to_string(), path.display().to_string()];
    // One in four leaves the search index to later (the search scans what is not in it).
    if c.rng.chance(0.25) {
        args.push("--no-index".into());
    }
    if !fields.is_empty() {
        args.extend(["--queue", QUEUE].map(String::from));
    }
    if fields.contains("extra") {
        args.push("--define-fields".into());
    }
    Some(vec![Step { args, db: None }])
}

/// A CSV text of plain columns (no commas or quotes in values) as JSON Lines; numbers
/// stay numbers.
fn to_jsonl(csv: &str) -> String {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let mut out = String::new();
    for l in lines {
        let mut row = serde_json::Map::new();
        for (k, v) in header.iter().zip(l.split(',')) {
            let v = match v.parse::<i64>() {
                Ok(n) => serde_json::Value::from(n),
                Err(_) => serde_json::Value::from(v),
            };
            row.insert((*k).to_string(), v);
        }
        out.push_str(&serde_json::Value::Object(row).to_string());
        out.push('\n');
    }
    out
}

/// An earlier file again: every row is there once whatever happened to the first try.
fn import_again(c: &mut Ctx<'_>) -> Option<Vec<Step>> {
    if c.files.is_empty() {
        return None;
    }
    let i = c.rng.below(c.files.len() as u64) as usize;
    let path = c.files[i].display().to_string();
    // The same arguments as the first time (a file with field columns names its queue).
    let header = std::fs::read_to_string(&c.files[i]).ok()?;
    let header = header.lines().next()?;
    let mut args = vec!["import", &path];
    if header.contains(",note") {
        args.extend(["--queue", QUEUE]);
    }
    if header.contains(",extra") {
        args.push("--define-fields");
    }
    if path.ends_with(".skip.csv") {
        args.push("--skip-duplicates");
    }
    one(&args)
}

/// A backup, and `check` of the backup (SQLite only: PostgreSQL has pg_dump).
fn backup_and_check(c: &mut Ctx<'_>) -> Option<Vec<Step>> {
    if c.kind != Kind::Sqlite {
        return None;
    }
    let path = c.dir.join(format!("backup-{}.db", c.call));
    let p = path.display().to_string();
    Some(vec![
        Step {
            args: vec!["backup".into(), p.clone()],
            db: None,
        },
        Step {
            args: vec!["check".into()],
            db: Some(p),
        },
    ])
}

/// The main queue's ready-made reject reason `maybe` added or deleted: a reviewer's
/// `reject --code maybe` is refused (exit 1, nothing written) while it is gone.
fn reject_text(c: &mut Ctx<'_>) -> Option<Vec<Step>> {
    match c.rng.chance(0.5) {
        true => one(&[
            "text",
            "add",
            QUEUE,
            "--for",
            "reject",
            "look again",
            "--code",
            "maybe",
        ]),
        false => one(&["text", "delete", QUEUE, "maybe"]),
    }
}

/// A comment read from a file.
fn comment_file(c: &mut Ctx<'_>) -> Option<Vec<Step>> {
    let path = c.dir.join(format!("comment-{}.txt", c.call));
    std::fs::write(&path, format!("{}\nfrom a file\n", c.marker())).ok()?;
    let item = c.item();
    one(&["comment", &item, "--file", &path.display().to_string()])
}

/// A supervisor's override (issue 26 §2): `boss` takes a checklist item (`claim --queue
/// lists`) and completes it at once with `--override REASON`, its lines not ticked. Judged
/// with the rest (the take and the complete as any holder's; `analysis::overrides`); an
/// answer lost is asked again, as a worker does; a lock left behind the drain unlocks.
fn supervisor_override(runner: &Runner, c: &mut Ctx<'_>, fault_rate: f64) {
    let args = ["claim", "--queue", LISTS, "--json"]
        .map(String::from)
        .to_vec();
    let mut req = Request::new("boss", "claim", Class::Claim, args);
    req.refusals = &[3, 4];
    if c.rng.chance(fault_rate) {
        req.fault = Some(crate::worker::fault(&mut c.rng, c.kind));
    }
    let Some((item, token)) = runner.run(c.call, req).claimed else {
        return;
    };
    let (i, t, m) = (item.to_string(), token.to_string(), c.marker());
    let args = ["complete", &i, "--token", &t, "--override", &m, "--json"].map(String::from);
    let mut first = None;
    for _ in 0..5 {
        let mut req = Request::new("boss", "complete --override", Class::Holder, args.to_vec());
        req.refusals = CONFLICT;
        req.item = Some(item);
        req.token = Some(token);
        req.retry_of = first;
        if first.is_none() && c.rng.chance(fault_rate) {
            req.fault = Some(crate::worker::fault(&mut c.rng, c.kind));
        }
        let id = runner.next_id();
        let call = runner.run(id, req);
        first.get_or_insert(id);
        if !crate::worker::lost_answer(&call) {
            break;
        }
    }
}

/// One of the main queue's ready-made texts `gone-result`, `gone-fail`, `gone-release`,
/// `gone-skip` added or deleted: a holder's finish with that code is refused (exit 1,
/// nothing written, the lock kept) while it is gone.
fn code_text(c: &mut Ctx<'_>) -> Option<Vec<Step>> {
    let purpose = ["result", "fail", "release", "skip"][c.rng.below(4) as usize];
    let code = format!("gone-{purpose}");
    match c.rng.chance(0.5) {
        true => one(&[
            "text",
            "add",
            QUEUE,
            "--for",
            purpose,
            "soon gone",
            "--code",
            &code,
        ]),
        false => one(&["text", "delete", QUEUE, &code]),
    }
}

/// A new file for the main queue whose `note` (a duplicate key) repeats, in most rows, the
/// note of a row of an earlier file (`import --skip-duplicates` leaves out the rows like an
/// open item, and says which); named `fN-ROWS.skip.csv` (the analysis counts what it left
/// out from its summary).
fn import_dups(c: &mut Ctx<'_>) -> Option<Vec<Step>> {
    if c.backlog.load(Ordering::Relaxed) > BACKLOG {
        return None;
    }
    let with_notes: Vec<&PathBuf> = c
        .files
        .iter()
        .filter(|f| {
            std::fs::read_to_string(f)
                .ok()
                .and_then(|t| t.lines().next().map(|h| h.contains(",note")))
                .unwrap_or(false)
        })
        .collect();
    if with_notes.is_empty() {
        return None;
    }
    let from = with_notes[c.rng.below(with_notes.len() as u64) as usize].clone();
    let earlier = std::fs::read_to_string(&from).ok()?;
    let col = earlier
        .lines()
        .next()?
        .split(',')
        .position(|h| h == "note")?;
    let notes: Vec<String> = earlier
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').nth(col).map(str::to_string))
        .collect();
    let n = c.files.len() + 1;
    let rows = c.rng.range(5, 40);
    c.backlog.fetch_add(rows, Ordering::Relaxed);
    let path = c.dir.join(format!("f{n}-{rows}.skip.csv"));
    let mut text = "title,queue,priority,note\n".to_string();
    let start = c.rng.below(notes.len() as u64) as usize;
    for r in 1..=rows {
        let i = start + r as usize;
        let note = match (c.rng.chance(0.7), notes.get(i % notes.len().max(1))) {
            (true, Some(n)) if i < start + notes.len() => n.clone(),
            _ => format!("v-f{n}-r{r}"),
        };
        let p = c.rng.range(0, 3);
        text.push_str(&format!("soak-f{n}-r{r},{QUEUE},{p},{note}\n"));
    }
    let mut f = std::fs::File::create(&path).ok()?;
    f.write_all(text.as_bytes()).ok()?;
    c.files.push(path.clone());
    let p = path.display().to_string();
    one(&["import", &p, "--queue", QUEUE, "--skip-duplicates"])
}

/// `migrate-to` (SQLite runs, with a server to copy to): the live file, while the workers
/// go on, into a fresh PostgreSQL database; half the time the first try is killed at a
/// random message to the server (strace), and a try that did not finish is run again.
/// Judged here: the target holds nothing or a whole copy (as many items as the file held
/// at some moment of the copy, the number the command printed) and its `check` passes;
/// a try killed before its commit leaves nothing and a rerun completes.
fn migrate(runner: &Runner, c: &mut Ctx<'_>, _fault_rate: f64) {
    let (Kind::Sqlite, Some(admin)) = (c.kind, c.pg_admin.clone()) else {
        return;
    };
    let name = format!("soak_{}_m{}", c.tag, c.call);
    let url = match crate::backend::create_database(&admin, &name) {
        Ok(url) => url,
        Err(e) => {
            eprintln!("soak: migrate-to: no target database ({e:#}); not run this time");
            return;
        }
    };
    let source = c.dir.join("soak.db").display().to_string();
    let mut problems: Vec<(bool, String)> = Vec::new();
    let mut copied = false;
    for attempt in 0..4 {
        let before = crate::backend::count_items(&source).unwrap_or(0);
        let args = vec!["migrate-to".to_string(), url.clone()];
        let mut req = Request::new("boss", "migrate-to", Class::Read, args);
        if attempt == 0 && c.rng.chance(0.5) {
            let n = c.rng.range(3, 600);
            req.fault = Some(format!("inject=sendto:signal=KILL:when={n}"));
        }
        // The first try may be killed (by strace or the killer); a rerun must finish.
        req.spared = attempt > 0;
        let id = if attempt == 0 {
            c.call
        } else {
            runner.next_id()
        };
        let call = runner.run(id, req);
        let after = crate::backend::count_items(&source).unwrap_or(i64::MAX);
        let there = match crate::backend::count_items(&url) {
            Ok(n) => n,
            Err(e) => {
                problems.push((false, format!("cannot count the target's items: {e}")));
                break;
            }
        };
        let said: Option<i64> = call
            .stdout
            .strip_prefix("Copied ")
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse().ok());
        for l in call.stdout.lines().filter(|l| l.starts_with("check:")) {
            problems.push((false, format!("the copy's own check: {l}: {}", call.line())));
        }
        let whole = (before..=after).contains(&there);
        match call.exit {
            Exit::Code(0) => {
                if said != Some(there) || !whole {
                    problems.push((
                        true,
                        format!(
                            "said {said:?} items copied; the target holds {there} (the file held \
                             {before}..{after} during the copy): {}",
                            call.line()
                        ),
                    ));
                }
                copied = true;
                break;
            }
            _ if there == 0 => continue,
            _ => {
                // Committed, the answer lost: it must be whole.
                if !whole {
                    problems.push((
                        true,
                        format!(
                            "a try that did not finish left {there} items in the target (the \
                             file held {before}..{after}): {}",
                            call.line()
                        ),
                    ));
                }
                copied = true;
                break;
            }
        }
    }
    if !copied && problems.is_empty() {
        problems.push((false, "a rerun of migrate-to did not finish".into()));
    }
    if copied {
        let mut req = Request::new(
            "boss",
            "migrate-to: check",
            Class::Read,
            vec!["check".into()],
        );
        req.db = Some(url.clone());
        let call = runner.run(runner.next_id(), req);
        if call.exit != Exit::Code(0) && !call.exit.unknown() {
            problems.push((false, format!("check of the target: {}", call.finding())));
        }
    }
    let mut found = c.found.lock().expect("found");
    for (lost, p) in &problems {
        let p = format!("migrate-to {name}: {p}");
        match lost {
            true => found.lost.push(p),
            false => found.errors.push(p),
        }
    }
    drop(found);
    if problems.is_empty() {
        let _ = crate::backend::drop_database(&admin, &name);
    } else {
        eprintln!("soak: migrate-to: kept the target database {name}");
    }
}

/// `check --repair-figures` while the workers write, on both backends (on PostgreSQL it
/// holds off event inserts only for short moments: RELIABILITY.md, seed 702 and after).
fn repair_figures(_: &mut Ctx<'_>) -> Option<Vec<Step>> {
    one(&["check", "--repair-figures"])
}
