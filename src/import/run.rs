//! The two passes of an import: check every row, then write them in short batches,
//! proving the second pass reads what the first one checked.

use std::cell::RefCell;
use std::fs::File;
use std::io::{Read, Seek};
use std::path::Path;
use std::rc::Rc;
use std::time::{Instant, SystemTime};

use super::{
    BatchSizer, FileIdentity, Fnv128, Format, LineError, MAX_REPORTED, MIN_BATCH, Parsed, Rows,
    derived_key,
};
use crate::domain::NewItem;
use crate::store::ops::DEFAULT_QUEUE;
use crate::store::{Added, Store, StoreError};

/// How an import is going, for a progress bar.
pub trait Progress {
    /// First pass: `bytes` of `total` read, `rows` checked so far.
    fn checking(&mut self, bytes: u64, total: u64, rows: u64);
    /// Second pass: `rows` of `total` written.
    fn writing(&mut self, rows: u64, total: u64);
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
    format: Format,
    default_queue: &str,
    create_queues: bool,
    progress: &mut dyn Progress,
) -> Result<Summary, ImportError> {
    let file = File::open(path).map_err(ImportError::Read)?;
    if !file.metadata().map_err(ImportError::Read)?.is_file() {
        // A pipe or a device cannot be read twice.
        return Err(ImportError::Read(std::io::Error::other(
            "not a regular file: import reads the file twice (save it to a file first)",
        )));
    }
    let stamp = Stamp::of(&file).map_err(ImportError::Read)?;
    let checked = check(&file, stamp.len, format, default_queue, progress)?;
    if !create_queues {
        // All rows or none: every queue named is known before the first batch is written.
        let known: Vec<String> = store
            .queues()
            .map_err(|error| ImportError::Store { error, written: 0 })?
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
    write(
        store,
        &file,
        &stamp,
        &checked,
        format,
        default_queue,
        progress,
    )
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
}

fn check(
    file: &File,
    total: u64,
    format: Format,
    default_queue: &str,
    progress: &mut dyn Progress,
) -> Result<Checked, ImportError> {
    let seen = Rc::new(RefCell::new(FileIdentity::new(format, default_queue)));
    let tap = Tap {
        file,
        seen: seen.clone(),
    };
    let mut rows = match Rows::new(tap, format, default_queue) {
        Ok(r) => r,
        Err(e) => {
            return Err(ImportError::Bad {
                errors: vec![e],
                total: 1,
            });
        }
    };
    let (mut n, mut finished, mut bad) = (0u64, 0u64, 0u64);
    let mut errors = Vec::new();
    let mut chain = Fnv128::default();
    let mut checkpoints = Vec::new();
    let mut queues = std::collections::BTreeSet::new();
    let mut note = |e: LineError, bad: &mut u64| {
        *bad += 1;
        if errors.len() < MAX_REPORTED {
            errors.push(e);
        }
    };
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
            }
            Ok(Some(Parsed::Finished { .. })) => finished += 1,
            Ok(Some(Parsed::Bad(e))) => note(e, &mut bad),
            Ok(None) => break,
            Err(e) => {
                note(e, &mut bad);
                break;
            }
        }
    }
    drop(rows);
    if bad > 0 {
        return Err(ImportError::Bad { errors, total: bad });
    }
    let seen = seen.borrow();
    progress.checking(seen.len, total, n);
    Ok(Checked {
        rows: n,
        finished,
        checkpoints,
        last: chain.value(),
        file_id: seen.finish(),
        queues,
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
    /// Counts what a batch's adds did: created, or already there (from this file or by
    /// the row's own request id).
    fn tally(&mut self, added: &[Added], derived: &[bool]) {
        for (a, derived) in added.iter().zip(derived) {
            match (a.created, derived) {
                (true, _) => self.created += 1,
                (false, true) => self.same_file += 1,
                (false, false) => self.known_request_id += 1,
            }
        }
    }
}

fn write(
    store: &mut dyn Store,
    mut file: &File,
    stamp: &Stamp,
    checked: &Checked,
    format: Format,
    default_queue: &str,
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
    let mut rows =
        Rows::new(file, format, default_queue).map_err(|_| changed("its header changed", 0))?;
    let mut chain = Fnv128::default();
    let mut sizer = BatchSizer::default();
    let mut batch: Vec<NewItem> = Vec::new();
    let mut derived: Vec<bool> = Vec::new();
    let mut written = 0u64;
    progress.writing(0, checked.rows);
    loop {
        batch.clear();
        derived.clear();
        while batch.len() < sizer.next_len() {
            match rows.next_row() {
                Ok(Some(Parsed::Item(r))) => {
                    chain.row(&r);
                    let mut item = r.item;
                    derived.push(item.request_id.is_none());
                    if item.request_id.is_none() {
                        item.request_id = Some(derived_key(&checked.file_id, r.line));
                    }
                    batch.push(item);
                }
                Ok(Some(Parsed::Finished { .. })) => summary.finished += 1,
                Ok(None) => break,
                Ok(Some(Parsed::Bad(_))) | Err(_) => {
                    return Err(changed("a row that was good is bad now", written));
                }
            }
        }
        if batch.is_empty() {
            break;
        }
        // Every row about to be written is one the first pass checked.
        let upto = written + batch.len() as u64;
        if checked.chain_at(upto) != Some(chain.value()) {
            return Err(changed("its rows differ from the ones checked", written));
        }
        unchanged(file, written)?;
        let started = Instant::now();
        let added = store
            .add_each(&batch)
            .map_err(|error| ImportError::Store { error, written })?;
        sizer.record(batch.len(), started.elapsed());
        summary.tally(&added, &derived);
        written = upto;
        progress.writing(written, checked.rows);
    }
    if written != checked.rows || summary.finished != checked.finished {
        return Err(changed("it holds other rows than were checked", written));
    }
    Ok(summary)
}
