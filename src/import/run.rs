//! The two passes of an import: check every row, then write them in short batches,
//! proving the second pass reads what the first one checked.

use std::cell::RefCell;
use std::fs::File;
use std::io::{Read, Seek};
use std::path::Path;
use std::rc::Rc;
use std::time::{Instant, SystemTime};

use super::keep::{KeptIds, Plan};
use super::{
    BatchSizer, FileIdentity, Fnv128, Format, ImportFields, LineError, MAX_REPORTED, MIN_BATCH,
    Parsed, Rows, derived_key,
};
use crate::domain::fields::Col;
use crate::domain::queue::{DEFAULT_QUEUE, QueueUpdate};
use crate::domain::queue_fields::{FieldChange, FieldType};
use crate::domain::{Millis, NewItem, Role};
use crate::store::{AddOptions, Added, FieldsChecked, Store, StoreError};

/// How to import a file.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    pub format: Format,
    /// The queue of rows that name none.
    pub default_queue: &'a str,
    /// Create the queues rows name that do not exist yet (else the import is refused).
    pub create_queues: bool,
    /// Every row keeps its `id` (a supervisor's action; see [`super::keep`]).
    pub keep_ids: bool,
    /// Define a `text` field of the default queue for each column that names neither a
    /// column of the item nor one of its fields (a supervisor's action).
    pub define_fields: bool,
    /// Leave out rows whose duplicate key equals one of an open item of their queue
    /// (issue 27): counted and named in the summary, not imported.
    pub skip_duplicates: bool,
}

/// How an import is going, for a progress bar.
pub trait Progress {
    /// First pass: `bytes` of `total` read, `rows` checked so far.
    fn checking(&mut self, bytes: u64, total: u64, rows: u64);
    /// Second pass: `rows` of `total` written.
    fn writing(&mut self, rows: u64, total: u64);
    /// After the rows: `rows` of about `total` indexed for search
    /// ([`super::index_new_rows`]).
    fn indexing(&mut self, _rows: u64, _total: u64) {}
}

/// No progress shown.
impl Progress for () {
    fn checking(&mut self, _: u64, _: u64, _: u64) {}
    fn writing(&mut self, _: u64, _: u64) {}
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Rows to add that the file holds.
    pub rows: u64,
    /// Items created.
    pub created: u64,
    /// Rows found already imported: this very file (same bytes, same options) was
    /// imported before, or an import of it was cut short; matched by line.
    pub same_file: u64,
    /// Rows whose own `request_id` was already known (an earlier row or item has it).
    pub known_request_id: u64,
    /// Exported rows of finished items (done, failed, cancelled), left out.
    pub finished: u64,
    /// The file's identity (the first part of its rows' derived request ids).
    pub file_id: String,
    /// The longest write transaction, timed around the store call: an upper bound of
    /// how long the import held the write lock at once (it includes waiting for it).
    pub longest_write: std::time::Duration,
    /// Per field of the queue (in its order; only those with any): how many rows' values
    /// break its rules (imported as they are: fixing them is the work).
    pub broken: Vec<(String, u64)>,
    /// The text fields this import defined (`--define-fields`), in order.
    pub defined: Vec<String>,
    /// Rows added whose duplicate key equals one of an item that was there before the
    /// import (issue 27), by the first key field that matched: (field, rows).
    pub look_alike: Vec<(String, u64)>,
    /// Rows left out by `--skip-duplicates`: how many, and the first [`MAX_REPORTED`] as
    /// (line, the open item they duplicate).
    pub skipped: u64,
    pub skipped_rows: Vec<(u64, i64)>,
}

/// Why an import stopped.
#[derive(Debug)]
pub enum ImportError {
    /// The file cannot be opened or read.
    Read(std::io::Error),
    /// Bad rows: the first [`MAX_REPORTED`] of them and how many in all. Nothing written.
    Bad { errors: Vec<LineError>, total: u64 },
    /// The file changed after it was checked; `written` rows were added before that was
    /// noticed (each of them a row that was checked).
    Changed { what: String, written: u64 },
    /// The database refused or failed; `written` rows were added before.
    Store { error: StoreError, written: u64 },
    /// As `Store`, after the fields `defined` (`--define-fields`) were defined: those
    /// definitions are committed and kept.
    StoreAfterDefining {
        error: Box<StoreError>,
        written: u64,
        defined: Vec<String>,
    },
    /// Rows name queues that do not exist (and creating them was not asked for): the first
    /// as an `UnknownQueue` (naming the closest known one), and how many more; nothing
    /// was written.
    UnknownQueues { first: StoreError, more: usize },
}

/// What identifies the file's content between the passes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    fn of(file: &File) -> std::io::Result<Stamp> {
        let m = file.metadata()?;
        Ok(Stamp {
            len: m.len(),
            modified: m.modified().ok(),
        })
    }
}

/// The bytes of the first pass go through here: counted and hashed into the identity.
struct Tap<'a> {
    file: &'a File,
    seen: Rc<RefCell<FileIdentity>>,
}

impl Read for Tap<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.seen.borrow_mut().bytes(&buf[..n]);
        Ok(n)
    }
}

/// Imports `path`: every row checked first (nothing written when one is bad), then
/// written in batches of at most [`super::BATCH_TARGET`] of write lock each.
pub fn import(
    store: &mut dyn Store,
    path: &Path,
    opts: &Options<'_>,
    progress: &mut dyn Progress,
) -> Result<Summary, ImportError> {
    let file = File::open(path).map_err(ImportError::Read)?;
    if !file.metadata().map_err(ImportError::Read)?.is_file() {
        // A pipe or a device cannot be read twice.
        return Err(ImportError::Read(std::io::Error::other(
            "not a regular file: import reads the file twice (save it to a file first)",
        )));
    }
    let store_err = |error| ImportError::Store { error, written: 0 };
    for (asked, what) in [
        (opts.keep_ids, "import keeping ids"),
        (opts.define_fields, "define fields (--define-fields)"),
    ] {
        // Refused before the file is read (the write checks it again).
        let me = store.actor().name.clone();
        if asked && store.role(&me).map_err(store_err)? == Role::Staff {
            return Err(store_err(StoreError::SupervisorOnly(format!(
                "{me} is staff and may not {what}"
            ))));
        }
    }
    let defs = store.fields(opts.default_queue).map_err(store_err)?;
    let fields = ImportFields::new(opts.default_queue, defs, opts.define_fields);
    let stamp = Stamp::of(&file).map_err(ImportError::Read)?;
    let mut checked = check(store, &file, stamp.len, opts, fields, progress)?;
    if !opts.create_queues {
        // All rows or none: every queue named is known before the first batch is written.
        let known: Vec<String> = store
            .queues()
            .map_err(store_err)?
            .into_iter()
            .map(|q| q.name)
            .collect();
        let unknown: Vec<&String> = checked
            .queues
            .iter()
            .filter(|q| q.as_str() != DEFAULT_QUEUE && !known.contains(q))
            .collect();
        if let Some(first) = unknown.first() {
            return Err(ImportError::UnknownQueues {
                first: StoreError::UnknownQueue {
                    name: first.to_string(),
                    known,
                },
                more: unknown.len() - 1,
            });
        }
    }
    let defined = define_fields(store, opts, &checked.fields)?;
    // Read before the definitions it is compared with: a change between the two reads
    // leaves a version the writes will not find (a new one is random, never the same).
    // A queue without fields gets no digests: its Complete checks nothing, and a field
    // defined later changes the version, which no digest written now would match.
    checked.version = match store.fields_version().map_err(store_err)? {
        Some(v)
            if !checked.fields.defs.is_empty()
                && store.fields(opts.default_queue).map_err(store_err)? == checked.fields.defs =>
        {
            Some(v)
        }
        _ => None,
    };
    // The second pass builds the rows as the first one did (the same definitions).
    let fields = ImportFields::new(opts.default_queue, checked.fields.defs.clone(), false);
    let mut summary = match write(store, &file, &stamp, &checked, opts, fields, progress) {
        Err(ImportError::Store { error, written }) if !defined.is_empty() => {
            return Err(ImportError::StoreAfterDefining {
                error: Box::new(error),
                written,
                defined,
            });
        }
        written => written?,
    };
    summary.defined = defined;
    Ok(summary)
}

/// With `--define-fields`, defines the text fields the first pass found columns for
/// (each audited as `caseload field set` is), creating the queue first when asked to.
fn define_fields(
    store: &mut dyn Store,
    opts: &Options<'_>,
    fields: &ImportFields,
) -> Result<Vec<String>, ImportError> {
    let store_err = |error| ImportError::Store { error, written: 0 };
    let new = fields.new_fields();
    if new.is_empty() {
        return Ok(Vec::new());
    }
    let q = opts.default_queue;
    let known = store.queues().map_err(store_err)?;
    if !known.iter().any(|k| k.name == q) {
        if !(opts.create_queues || q == DEFAULT_QUEUE) {
            return Err(store_err(StoreError::UnknownQueue {
                name: q.to_string(),
                known: known.into_iter().map(|k| k.name).collect(),
            }));
        }
        store
            .set_queue(q, &QueueUpdate::default(), true)
            .map_err(store_err)?;
    }
    let change = FieldChange {
        kind: Some(FieldType::Text),
        ..FieldChange::default()
    };
    let mut defined = Vec::new();
    for def in new {
        store
            .define_field(q, &def.name, &change)
            .map_err(store_err)?;
        defined.push(def.name.clone());
    }
    Ok(defined)
}

/// What the first pass learnt.
struct Checked {
    rows: u64,
    finished: u64,
    /// The running row hash after every [`MIN_BATCH`] rows.
    checkpoints: Vec<u128>,
    last: u128,
    file_id: String,
    /// The queues the rows name.
    queues: std::collections::BTreeSet<String>,
    /// With `--keep-ids`: how to keep them.
    kept: Option<Plan>,
    /// The import's fields (those it would define included).
    fields: ImportFields,
    /// The version of the field definitions the second pass checks against (`fields`,
    /// as the store holds them when it begins), when the store keeps digests: rows that
    /// keep every rule are marked checked while it is still the version.
    version: Option<i64>,
}

/// The bad lines found so far: the first [`MAX_REPORTED`], and how many.
#[derive(Default)]
struct BadLines {
    errors: Vec<LineError>,
    total: u64,
}

impl BadLines {
    fn note(&mut self, e: LineError) {
        self.total += 1;
        if self.errors.len() < MAX_REPORTED {
            self.errors.push(e);
        }
    }
}

fn bad_header(e: LineError) -> ImportError {
    ImportError::Bad {
        errors: vec![e],
        total: 1,
    }
}

/// With `--keep-ids`, the check of the ids starts (a CSV file must have the column).
fn keeping<R: Read>(
    store: &mut dyn Store,
    rows: &Rows<R>,
    opts: &Options<'_>,
) -> Result<Option<KeptIds>, ImportError> {
    if !opts.keep_ids {
        return Ok(None);
    }
    if rows.lacks_column(Col::Id) {
        return Err(bad_header(LineError {
            line: 1,
            message: "the header has no 'id' column (--keep-ids keeps the ids `caseload \
                      export` writes)"
                .into(),
        }));
    }
    let kept = KeptIds::new(store).map_err(|error| ImportError::Store { error, written: 0 })?;
    Ok(Some(kept))
}

fn check(
    store: &mut dyn Store,
    file: &File,
    total: u64,
    opts: &Options<'_>,
    fields: ImportFields,
    progress: &mut dyn Progress,
) -> Result<Checked, ImportError> {
    let store_err = |error| ImportError::Store { error, written: 0 };
    let seen = Rc::new(RefCell::new(FileIdentity::new(
        opts.format,
        opts.default_queue,
    )));
    let tap = Tap {
        file,
        seen: seen.clone(),
    };
    progress.checking(0, total, 0);
    // Field values are checked once, by the second pass (`Reader::fill`); this one proves
    // every row can be written with them.
    let mut rows = Rows::new(tap, opts.format, opts.default_queue, fields)
        .map_err(bad_header)?
        .unmerged();
    let mut kept = keeping(store, &rows, opts)?;
    let (mut n, mut finished) = (0u64, 0u64);
    let mut bad = BadLines::default();
    let mut chain = Fnv128::default();
    let mut checkpoints = Vec::new();
    let mut queues = std::collections::BTreeSet::new();
    loop {
        match rows.next_row() {
            Ok(Some(Parsed::Item(r))) => {
                if !queues.contains(&r.item.queue) {
                    queues.insert(r.item.queue.clone());
                }
                chain.row(&r);
                n += 1;
                if n.is_multiple_of(MIN_BATCH as u64) {
                    checkpoints.push(chain.value());
                    if n.is_multiple_of(1000) {
                        progress.checking(seen.borrow().len, total, n);
                    }
                }
                if let Some(k) = &mut kept {
                    k.row(store, *r, &mut |e| bad.note(e)).map_err(store_err)?;
                }
            }
            Ok(Some(Parsed::Finished { .. })) => finished += 1,
            Ok(Some(Parsed::Bad(e))) => bad.note(e),
            Ok(None) => break,
            Err(e) => {
                bad.note(e);
                break;
            }
        }
    }
    let fields = rows.fields().clone();
    drop(rows);
    let file_id = seen.borrow().finish();
    let kept = match kept {
        Some(k) if bad.total == 0 => k
            .finish(store, &file_id, &mut |e| bad.note(e))
            .map_err(store_err)?,
        _ => None,
    };
    if bad.total > 0 {
        return Err(ImportError::Bad {
            errors: bad.errors,
            total: bad.total,
        });
    }
    progress.checking(seen.borrow().len, total, n);
    Ok(Checked {
        rows: n,
        finished,
        checkpoints,
        last: chain.value(),
        file_id,
        queues,
        kept,
        fields,
        version: None,
    })
}

impl Checked {
    /// The first pass's hash of the rows up to `upto`, where it kept one (every
    /// `MIN_BATCH` rows, and at the end).
    fn chain_at(&self, upto: u64) -> Option<u128> {
        if upto == self.rows {
            Some(self.last)
        } else if upto.is_multiple_of(MIN_BATCH as u64) {
            self.checkpoints
                .get((upto / MIN_BATCH as u64) as usize - 1)
                .copied()
        } else {
            None
        }
    }
}

impl Summary {
    /// Counts what a batch's adds did: created, left out as a duplicate (`lines`: each
    /// row's line, to name it), or already there (from this file or by the row's own
    /// request id).
    fn tally(&mut self, added: &[Added], derived: &[bool], lines: &[u64]) {
        for ((a, derived), line) in added.iter().zip(derived).zip(lines) {
            match (a.created, derived) {
                _ if a.skipped => {
                    self.skipped += 1;
                    if self.skipped_rows.len() < MAX_REPORTED {
                        self.skipped_rows.push((*line, a.id));
                    }
                }
                (true, _) => self.created += 1,
                (false, true) => self.same_file += 1,
                (false, false) => self.known_request_id += 1,
            }
        }
    }
}

/// Counts the added rows whose duplicate keys match an item that was there before the
/// import: one lookup per key, only in queues that have key fields.
struct LookAlike {
    /// The largest id before the import.
    before: i64,
    /// Each queue's fields, read once.
    defs: std::collections::BTreeMap<String, Vec<crate::domain::queue_fields::FieldDef>>,
}

impl LookAlike {
    fn new(store: &mut dyn Store) -> Result<LookAlike, ImportError> {
        let before = store
            .last_item_id()
            .map_err(|error| ImportError::Store { error, written: 0 })?;
        Ok(LookAlike {
            before,
            defs: Default::default(),
        })
    }

    /// Counts the rows of one batch (`written`: rows written so far, for an error).
    fn count(
        &mut self,
        store: &mut dyn Store,
        items: &[NewItem],
        added: &[Added],
        out: &mut Vec<(String, u64)>,
        written: u64,
    ) -> Result<(), ImportError> {
        self.count_in(store, items, added, out)
            .map_err(|error| ImportError::Store { error, written })
    }

    fn count_in(
        &mut self,
        store: &mut dyn Store,
        items: &[NewItem],
        added: &[Added],
        out: &mut Vec<(String, u64)>,
    ) -> crate::store::Result<()> {
        for (item, a) in items.iter().zip(added).filter(|(_, a)| a.created) {
            if !self.defs.contains_key(&item.queue) {
                let defs = store.fields(&item.queue)?;
                self.defs.insert(item.queue.clone(), defs);
            }
            let defs = &self.defs[&item.queue];
            for (field, key) in crate::domain::duplicates::keys_of(defs, &item.params) {
                let first = store.key_matches(&item.queue, &field, &key, a.id, 1)?;
                if first.first().is_some_and(|&id| id <= self.before) {
                    match out.iter_mut().find(|(f, _)| *f == field) {
                        Some((_, n)) => *n += 1,
                        None => out.push((field, 1)),
                    }
                    break;
                }
            }
        }
        Ok(())
    }
}

/// One batch of the second pass.
#[derive(Default)]
struct Batch {
    items: Vec<NewItem>,
    /// Whether each item's request id is derived (the row gave none).
    derived: Vec<bool>,
    /// With `--keep-ids`: each item's id.
    ids: Vec<i64>,
    /// Each item's line in the file.
    lines: Vec<u64>,
    /// Whether each item keeps every rule of the import's fields.
    ok: Vec<bool>,
    /// Per field (by index): the batch's rows whose value breaks its rules.
    broken: Vec<u64>,
    /// The rows read for it, the one added first with `--keep-ids` included.
    rows: u64,
}

/// How the second pass reads the file.
struct Reader<'a, R: Read> {
    rows: Rows<R>,
    chain: Fnv128,
    checked: &'a Checked,
}

impl<R: Read> Reader<'_, R> {
    /// Reads up to `len` rows into `b`; `Err` names what differs from the first pass.
    fn fill(&mut self, b: &mut Batch, len: usize, finished: &mut u64) -> Result<(), &'static str> {
        b.items.clear();
        b.derived.clear();
        b.ids.clear();
        b.lines.clear();
        b.ok.clear();
        b.broken.clear();
        b.rows = 0;
        let first = self.checked.kept.as_ref().map(|k| k.last.line);
        while b.rows < len as u64 {
            match self.rows.next_row() {
                Ok(Some(Parsed::Item(mut r))) => {
                    self.chain.row(&r);
                    b.rows += 1;
                    if first == Some(r.line) {
                        continue; // added first, see `super::keep`
                    }
                    if first.is_some() {
                        b.ids.push(r.id.ok_or("a row lost its id")?);
                    }
                    // The row's one check of its field values.
                    r.merge(self.rows.fields())
                        .map_err(|_| "a row that was good is bad now")?;
                    count_broken(&mut b.broken, &r.broken);
                    let mut item = r.item;
                    b.lines.push(r.line);
                    b.ok.push(r.broken.is_empty());
                    b.derived.push(item.request_id.is_none());
                    if item.request_id.is_none() {
                        item.request_id = Some(derived_key(&self.checked.file_id, r.line));
                    }
                    b.items.push(item);
                }
                Ok(Some(Parsed::Finished { .. })) => *finished += 1,
                Ok(None) => break,
                Ok(Some(Parsed::Bad(_))) | Err(_) => return Err("a row that was good is bad now"),
            }
        }
        Ok(())
    }
}

/// Adds a row's broken fields (by index) to the counts per field.
fn count_broken(counts: &mut Vec<u64>, broken: &[usize]) {
    for &i in broken {
        if counts.len() <= i {
            counts.resize(i + 1, 0);
        }
        counts[i] += 1;
    }
}

/// Adds counts per field (by index) to others.
fn add_counts(to: &mut Vec<u64>, add: &[u64]) {
    if to.len() < add.len() {
        to.resize(add.len(), 0);
    }
    for (n, a) in to.iter_mut().zip(add) {
        *n += a;
    }
}

/// The fields (by name, in their order) with a count above 0.
fn per_field(fields: &ImportFields, counts: &[u64]) -> Vec<(String, u64)> {
    (fields.defs.iter())
        .zip(counts)
        .filter(|(_, n)| **n > 0)
        .map(|(d, n)| (d.name.clone(), *n))
        .collect()
}

/// A batch the reader built, or what differs from the first pass; with the hash of the
/// rows read so far and the finished rows it passed over.
struct Filled {
    batch: Result<(Batch, u128), &'static str>,
    finished: u64,
}

/// The second pass's reading thread: a batch of each asked length, until the rows end
/// (an empty batch) or one differs from the first pass, or the writer stops asking.
fn read_ahead<R: Read>(
    mut reader: Reader<'_, R>,
    asked: &std::sync::mpsc::Receiver<usize>,
    give: &std::sync::mpsc::SyncSender<Filled>,
) {
    while let Ok(len) = asked.recv() {
        let mut batch = Batch::default();
        let mut finished = 0;
        let read = reader.fill(&mut batch, len, &mut finished);
        let end = read.is_err() || batch.rows == 0;
        let filled = Filled {
            batch: read.map(|()| (batch, reader.chain.value())),
            finished,
        };
        if give.send(filled).is_err() || end {
            return;
        }
    }
}

/// With `--keep-ids`, adds the row with the largest id first (see `super::keep`).
/// Returns the rows it added (0 without `--keep-ids`) and the time the import began,
/// every kept item's `created_at`.
fn keep_first(
    store: &mut dyn Store,
    checked: &Checked,
    fields: &ImportFields,
    (summary, broken): (&mut Summary, &mut Vec<u64>),
) -> Result<(u64, Millis), ImportError> {
    let Some(plan) = &checked.kept else {
        return Ok((0, 0));
    };
    let file_id = &checked.file_id;
    let mut row = plan.last.clone();
    row.merge(fields).map_err(|_| ImportError::Changed {
        what: "a row that was good is bad now".into(),
        written: 0,
    })?;
    count_broken(broken, &row.broken);
    let mut last = row.item;
    let derived = last.request_id.is_none();
    if derived {
        last.request_id = Some(derived_key(file_id, plan.last.line));
    }
    let started = Instant::now();
    let (added, began) = store
        .keep_ids(&last, plan.ids, plan.seen)
        .map_err(|error| ImportError::Store { error, written: 0 })?;
    summary.longest_write = started.elapsed();
    summary.tally(&[added], &[derived], &[plan.last.line]);
    Ok((1, began))
}

/// Where a batch goes: the rows written before it, and (with `--keep-ids`) when the
/// import began.
#[derive(Clone, Copy)]
struct Written {
    before: u64,
    began: Millis,
    /// `--skip-duplicates`.
    skip: bool,
}

impl Written {
    fn new(before: u64, began: Millis, skip: bool) -> Written {
        Written {
            before,
            began,
            skip,
        }
    }
}

/// Writes one batch of the second pass and counts what it added; returns how long the
/// write transaction took.
fn add_batch(
    store: &mut dyn Store,
    batch: &Batch,
    checked: &Checked,
    at: Written,
    summary: &mut Summary,
    alike: &mut LookAlike,
) -> Result<std::time::Duration, ImportError> {
    let started = Instant::now();
    // With `--keep-ids` each item keeps its id; else queues are created and, when asked,
    // duplicates of open items left out.
    // The rows' fields were checked as they were built: those that keep every rule are
    // marked so (see `Checked::version`), without a check again.
    let fields_checked = checked.version.map(|version| FieldsChecked {
        version,
        queue: &checked.fields.queue,
        ok: &batch.ok,
    });
    let opts = match checked.kept {
        Some(_) => AddOptions::keeping(&batch.ids, at.began),
        None => AddOptions {
            skip_duplicates: at.skip,
            ..AddOptions::creating_queues()
        },
    };
    // Indexed for search beside the import (`caseload import` runs the indexer on a
    // second connection), not inside its transactions.
    let opts = AddOptions {
        unchecked: true,
        checked: fields_checked,
        search_later: true,
        ..opts
    };
    let added = (store.add_items(&batch.items, opts)).map_err(|error| ImportError::Store {
        error,
        written: at.before,
    })?;
    let took = started.elapsed();
    summary.longest_write = summary.longest_write.max(took);
    summary.tally(&added, &batch.derived, &batch.lines);
    let done = at.before + batch.rows;
    alike.count(store, &batch.items, &added, &mut summary.look_alike, done)?;
    Ok(took)
}

fn write(
    store: &mut dyn Store,
    mut file: &File,
    stamp: &Stamp,
    checked: &Checked,
    opts: &Options<'_>,
    fields: ImportFields,
    progress: &mut dyn Progress,
) -> Result<Summary, ImportError> {
    let mut summary = Summary {
        rows: checked.rows,
        file_id: checked.file_id.clone(),
        ..Summary::default()
    };
    let changed = |what: &str, written: u64| ImportError::Changed {
        what: what.to_string(),
        written,
    };
    let unchanged = |file: &File, written: u64| -> Result<(), ImportError> {
        match Stamp::of(file) {
            Ok(s) if s == *stamp => Ok(()),
            Ok(_) => Err(changed("its size or modification time changed", written)),
            Err(e) => Err(ImportError::Read(e)),
        }
    };
    unchanged(file, 0)?;
    file.rewind().map_err(ImportError::Read)?;
    let mut alike = LookAlike::new(store)?;
    let rows = Rows::new(file, opts.format, opts.default_queue, fields)
        .map_err(|_| changed("its header changed", 0))?
        .checked_before()
        .unmerged();
    // Per field (by index): rows whose value breaks its rules.
    let mut broken: Vec<u64> = Vec::new();
    // Rows added before the batches (the one `--keep-ids` adds first).
    let (first, began) = keep_first(store, checked, rows.fields(), (&mut summary, &mut broken))?;
    let reader = Reader {
        rows,
        chain: Fnv128::default(),
        checked,
    };
    let mut sizer = BatchSizer::default();
    let mut written = 0u64;
    progress.writing(0, checked.rows);
    std::thread::scope(|scope| -> Result<(), ImportError> {
        // The next batch is read and built (its fields' checks) on a thread of its own
        // while this one writes the last (issue 26 §4), asked for by its length, one
        // ahead, so batches keep the sizer's time target.
        let (ask, asked) = std::sync::mpsc::sync_channel::<usize>(2);
        let (give, given) = std::sync::mpsc::sync_channel::<Filled>(1);
        scope.spawn(move || read_ahead(reader, &asked, &give));
        for _ in 0..2 {
            let _ = ask.send(sizer.next_len());
        }
        loop {
            let filled = (given.recv())
                .map_err(|_| changed("it could not be read again", written + first))?;
            let (batch, chain) = filled
                .batch
                .map_err(|what| changed(what, written + first))?;
            summary.finished += filled.finished;
            if batch.rows == 0 {
                return Ok(());
            }
            // Every row about to be written is one the first pass checked.
            let upto = written + batch.rows;
            if checked.chain_at(upto) != Some(chain) {
                return Err(changed(
                    "its rows differ from the ones checked",
                    written + first,
                ));
            }
            unchanged(file, written + first)?;
            add_counts(&mut broken, &batch.broken);
            if !batch.items.is_empty() {
                let at = Written::new(written + first, began, opts.skip_duplicates);
                let took = add_batch(store, &batch, checked, at, &mut summary, &mut alike)?;
                sizer.record(batch.items.len(), took);
            }
            written = upto;
            progress.writing(written, checked.rows);
            let _ = ask.send(sizer.next_len());
        }
        // Leaving drops `ask` and `given`: the reader's next send or receive fails and it
        // ends, and the scope waits for it.
    })?;
    if written != checked.rows || summary.finished != checked.finished {
        return Err(changed(
            "it holds other rows than were checked",
            written + first,
        ));
    }
    summary.broken = per_field(&checked.fields, &broken);
    Ok(summary)
}
