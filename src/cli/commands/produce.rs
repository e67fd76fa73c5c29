//! Subcommands that feed the queue: add and import.

use std::io::{IsTerminal, Write};

use anyhow::anyhow;

use crate::domain::queue::DEFAULT_QUEUE;
use crate::domain::when::Span;
use crate::domain::{NewItem, sanitize};
use crate::import::{self, Format, ImportError};
use crate::store::{AddOptions, Store, StoreError};

use crate::cli::args::{AddArgs, FormatArg, ImportArgs};
use crate::cli::{CliResult, Invocation};

pub(crate) fn add(s: &mut dyn Store, a: AddArgs, out: &mut dyn Write) -> CliResult {
    let due_at = match &a.due {
        Some(d) => Some(super::time_arg("--due", d, s.now()?, Span::Ahead)?),
        None => None,
    };
    let body = match &a.body_file {
        Some(path) => read_body(path)?,
        None => a.body,
    };
    let item = NewItem {
        queue: a.queue.unwrap_or_else(|| DEFAULT_QUEUE.into()),
        title: a.title,
        body,
        params: a.params,
        priority: a.priority,
        due_at,
        request_id: a.request_id,
        source: a.source,
    };
    let added = s
        .add_items(
            std::slice::from_ref(&item),
            AddOptions {
                create_queues: a.create_queue,
                kept: None,
                same_content: true,
                skip_duplicates: false,
                unchecked: false,
                checked: None,
                search_later: false,
            },
        )
        .map_err(create_hint)?;
    let id = added
        .first()
        .map(|a| a.id)
        .ok_or_else(|| anyhow!("the item was not added"))?;
    writeln!(out, "{id}")?;
    Ok(())
}

/// An unknown queue's error, with the flag that creates it.
fn create_hint(e: StoreError) -> anyhow::Error {
    match e {
        StoreError::UnknownQueue { .. } => {
            anyhow!("{e}; give --create-queue to create a new queue")
        }
        e => e.into(),
    }
}

/// The body from `--body-file` (`-`: standard input), read no further than the limit.
fn read_body(path: &std::path::Path) -> Result<String, crate::cli::Failure> {
    use std::io::Read;
    let limit = crate::domain::item::MAX_FIELD_BYTES;
    let shown = if path.as_os_str() == "-" {
        "standard input".to_string()
    } else {
        sanitize::line(&path.display().to_string()).into_owned()
    };
    let mut data = Vec::new();
    let read = if path.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .take(limit as u64 + 1)
            .read_to_end(&mut data)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(limit as u64 + 1).read_to_end(&mut data))
    };
    read.map_err(|e| anyhow!("--body-file {shown}: cannot read: {e}"))?;
    if data.len() > limit {
        return Err(
            anyhow!("--body-file {shown}: is larger than 1 MiB, the limit for a body").into(),
        );
    }
    String::from_utf8(data).map_err(|e| {
        anyhow!(
            "--body-file {shown}: is not valid UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        )
        .into()
    })
}

/// `caseload import`. The import's rows are indexed for search beside it, on a second
/// connection, while it writes the next ones ([`import_beside`]).
pub(crate) fn import_file(
    s: &mut dyn Store,
    a: ImportArgs,
    out: &mut dyn Write,
    ctx: &Invocation,
) -> CliResult {
    let shown = sanitize::line(&a.file.display().to_string()).into_owned();
    let format = match a.format {
        Some(FormatArg::Csv) => Format::Csv,
        Some(FormatArg::Jsonl) => Format::Jsonl,
        None => Format::from_path(&a.file),
    };
    let queue = a.queue.unwrap_or_else(|| DEFAULT_QUEUE.into());
    let mut bars = Bars::default();
    let opts = import::Options {
        format,
        default_queue: &queue,
        create_queues: a.create_queue,
        keep_ids: a.keep_ids,
        define_fields: a.define_fields,
        skip_duplicates: a.skip_duplicates,
    };
    let second = (!a.no_index).then(|| crate::cli::second_connection(ctx));
    let (result, beside) = import_beside(s, &a.file, &opts, second.flatten(), &mut bars);
    bars.clear();
    let summary = match result {
        Ok(summary) => summary,
        Err(ImportError::Read(e)) => {
            return Err(anyhow::Error::new(e)
                .context(format!("{shown}: cannot read"))
                .into());
        }
        Err(ImportError::Bad { errors, total }) => {
            let mut msg = format!("{shown}: {total} bad line(s), nothing imported: ");
            let named: Vec<String> = errors
                .iter()
                .map(|e| format!("line {} {}", e.line, sanitize::line(&e.message)))
                .collect();
            msg.push_str(&named.join("; "));
            if total > errors.len() as u64 {
                msg.push_str(&format!("; and {} more", total - errors.len() as u64));
            }
            return Err(anyhow!(msg).into());
        }
        Err(ImportError::UnknownQueues { first, more }) => {
            let more = match more {
                0 => String::new(),
                n => format!(" (and {n} more unknown queue(s))"),
            };
            return Err(anyhow!(
                "{shown}: nothing imported: {first}{more}; give --create-queue to create new \
                 queues"
            )
            .into());
        }
        Err(ImportError::Changed { what, written }) => {
            return Err(anyhow!(
                "{shown}: the file changed after it was checked ({what}); {written} checked \
                 row(s) were added before that was noticed, none after; the changed file is a \
                 new file to import (its rows are not matched with these)"
            )
            .into());
        }
        Err(ImportError::Store { error, written }) => {
            return Err(stopped(&shown, error, written, &[]));
        }
        Err(ImportError::StoreAfterDefining {
            error,
            written,
            defined,
        }) => return Err(stopped(&shown, *error, written, &defined)),
    };
    writeln!(out, "{}", import_summary(&shown, &summary))?;
    if !a.no_index && !beside {
        let indexed = import::index_new_rows(s, summary.created, &mut bars);
        bars.clear();
        if let Err((n, e)) = indexed {
            // The rows are in: the index only makes finding them faster.
            eprintln!(
                "caseload: warning: the search index stopped after {n} row(s) ({e}); searches \
                 scan the rest until the next import or an idle TUI indexes them"
            );
        }
    }
    Ok(())
}

/// Imports `file` with the search indexer beside it on `second` (another connection to
/// the store), when there is one: the import's rows are indexed while it writes the next
/// ones, and this returns once every row it committed is indexed, whatever became of the
/// import; with whether the indexer beside did it all. Without one, or when it failed, the
/// rows are indexed after they are written, on the import's own connection.
fn import_beside(
    s: &mut dyn Store,
    file: &std::path::Path,
    opts: &import::Options<'_>,
    second: Option<Box<dyn Store + Send>>,
    bars: &mut Bars,
) -> (Result<import::Summary, ImportError>, bool) {
    if second.is_some()
        && let Err(e) = s.leave_room_for_an_indexer()
    {
        tracing::warn!("the import could not make room for the search indexer beside it: {e}");
    }
    let beside = second.map(|c| import::index_beside(c, opts.keep_ids));
    let result = import::import(s, file, opts, bars);
    let created = result.as_ref().map_or(0, |r| r.created);
    let done = match beside.map(|b| b.finish(created, bars)) {
        Some(Ok(_)) => true,
        Some(Err((n, e))) => {
            tracing::warn!("the search indexer beside the import stopped after {n} row(s): {e}");
            false
        }
        None => false,
    };
    (result, done)
}

/// Why an import stopped, saying what is in the database: the rows of earlier
/// transactions (`written`, counted from the file's start, whether added now or by an
/// earlier run) are, those of the one the connection broke in are not (or, lost while
/// committing, may be). The fields it `defined` before its first rows are kept, and said.
fn stopped(
    shown: &str,
    error: StoreError,
    written: u64,
    defined: &[String],
) -> crate::cli::Failure {
    let again = "run it again to finish (rows already added are recognised)";
    let message = match (&error, written) {
        (StoreError::NotCommitted { server, reason }, 0) => format!(
            "{shown}: nothing imported: the connection to {server} was lost before the first \
             rows were committed ({reason}); run it again"
        ),
        (StoreError::NotCommitted { server, reason }, n) => format!(
            "{shown}: import stopped part-way: the file's first {n} row(s) are in the \
             database, the rest are not (the connection to {server} was lost before the next \
             rows were committed: {reason}); {again}"
        ),
        (StoreError::CommitLost { server, reason }, 0) => format!(
            "{shown}: import stopped: the connection to {server} was lost while committing \
             its first rows, which may have been added ({reason}); {again}"
        ),
        (StoreError::CommitLost { server, reason }, n) => format!(
            "{shown}: import stopped part-way: the file's first {n} row(s) are in the \
             database, and the next ones may be too (the connection to {server} was lost while \
             committing them: {reason}); {again}"
        ),
        (StoreError::OutcomeUnknown(why), 0) => {
            format!("{shown}: import stopped: its first rows may have been added ({why}); {again}")
        }
        (StoreError::OutcomeUnknown(why), n) => format!(
            "{shown}: import stopped part-way: the file's first {n} row(s) are in the \
             database, and the next ones may be too ({why}); {again}"
        ),
        (_, 0) => format!("{shown}: nothing imported: {error}"),
        (_, n) => format!("{shown}: import stopped part-way after {n} row(s); {again}: {error}"),
    };
    let message = match defined {
        [] => message,
        names => {
            let rest = message
                .strip_prefix(&format!("{shown}: "))
                .unwrap_or(&message);
            format!(
                "{shown}: import stopped part-way: the text field(s) {} it defined first are \
                 kept; {rest}",
                names.join(", ")
            )
        }
    };
    crate::cli::Failure {
        code: error.exit_code(),
        error: anyhow!(message),
    }
}

/// "Imported 3 new item(s) from F (2 already present: …)".
fn import_summary(shown: &str, s: &import::Summary) -> String {
    let mut line = format!("Imported {} new item(s) from {shown}", s.created);
    let present = s.same_file + s.known_request_id;
    if present > 0 {
        let mut why = Vec::new();
        if s.same_file > 0 {
            why.push(format!(
                "{} imported before from this same file (same content, same line)",
                s.same_file
            ));
        }
        if s.known_request_id > 0 {
            why.push(format!(
                "{} whose request_id was already known",
                s.known_request_id
            ));
        }
        line.push_str(&format!(" ({present} already present: {})", why.join("; ")));
    }
    if s.finished > 0 {
        line.push_str(&format!(
            "; left out {} finished row(s) (done, failed or cancelled)",
            s.finished
        ));
    }
    if !s.defined.is_empty() {
        line.push_str(&format!(
            "; defined text field(s): {}",
            s.defined.join(", ")
        ));
    }
    if !s.broken.is_empty() {
        let per: Vec<String> = (s.broken.iter()).map(|(f, n)| format!("{f} {n}")).collect();
        line.push_str(&format!(
            "; rows whose value breaks a field's rules (imported as they are): {}",
            per.join(", ")
        ));
    }
    if s.skipped > 0 {
        let named: Vec<String> = (s.skipped_rows.iter())
            .map(|(line, id)| format!("line {line} like #{id}"))
            .collect();
        let more = s.skipped - s.skipped_rows.len() as u64;
        line.push_str(&format!(
            "; left out {} row(s) whose duplicate key equals an open item's (--skip-duplicates): {}{}",
            s.skipped,
            named.join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        ));
    }
    if !s.look_alike.is_empty() {
        let n: u64 = s.look_alike.iter().map(|(_, n)| n).sum();
        let why: Vec<String> = (s.look_alike.iter())
            .map(|(f, _)| format!("same {f}"))
            .collect();
        line.push_str(&format!(
            "; {n} row(s) look like existing items ({}): see caseload similar",
            why.join(", ")
        ));
    }
    line
}

/// The two passes' progress bars on stderr (none when stderr is not a terminal).
#[derive(Default)]
struct Bars {
    check: Option<indicatif::ProgressBar>,
    write: Option<indicatif::ProgressBar>,
    index: Option<indicatif::ProgressBar>,
}

impl Bars {
    fn clear(&self) {
        for b in self.check.iter().chain(&self.write).chain(&self.index) {
            b.finish_and_clear();
        }
    }
}

impl import::Progress for Bars {
    fn checking(&mut self, bytes: u64, total: u64, rows: u64) {
        let bar = self.check.get_or_insert_with(|| {
            styled(
                total,
                "checking {bar:30} {bytes}/{total_bytes}, {msg} rows ({eta} left)",
            )
        });
        bar.set_position(bytes);
        bar.set_message(rows.to_string());
    }

    fn writing(&mut self, rows: u64, total: u64) {
        if let Some(c) = self.check.take() {
            c.finish_and_clear();
        }
        let bar = self.write.get_or_insert_with(|| {
            styled(
                total,
                "writing  {bar:30} {pos}/{len} rows ({per_sec}, {eta} left)",
            )
        });
        bar.set_position(rows);
    }

    fn indexing(&mut self, rows: u64, total: u64) {
        if let Some(w) = self.write.take() {
            w.finish_and_clear();
        }
        let bar = self.index.get_or_insert_with(|| {
            styled(
                total,
                "indexing {bar:30} {pos}/{len} rows for search ({per_sec}, {eta} left)",
            )
        });
        bar.set_length(total);
        bar.set_position(rows);
    }
}

fn styled(len: u64, template: &str) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}
