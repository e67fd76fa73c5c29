//! Reading an import file one row at a time: CSV through the `csv` crate behind a guard
//! that bounds a row's size and finds quotes that never close, JSON Lines line by line.

use std::io::{BufRead, BufReader, Read};
use std::sync::{Arc, Mutex};

use super::{Format, ImportFields, LineError, MAX_ROW_BYTES, RawRow, column};
use crate::domain::fields::{Col, Field, Kind, Who};
use crate::domain::{NewItem, sanitize};

/// One checked row of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The line the row starts on.
    pub line: u64,
    /// The item to add; `request_id` is the file's own, if it gave one.
    pub item: NewItem,
    /// The `id` column (an exported file), kept with `--keep-ids` where free.
    pub id: Option<i64>,
    /// The values of the import's fields (by index in its field list) as the file gave
    /// them, not yet joined to `item.params` (rows read [`Rows::unmerged`]; empty once
    /// [`Row::merge`]d).
    pub given: Vec<(usize, serde_json::Value)>,
    /// The fields (by index in the import's field list) whose value breaks their rules,
    /// found by [`Row::merge`].
    pub broken: Vec<usize>,
}

/// What one row of the file is.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    /// A row to add.
    Item(Box<Row>),
    /// An exported row of a finished item (done, failed, cancelled): import creates open
    /// work, so it is left out and counted.
    Finished { line: u64 },
    /// A row that breaks a rule.
    Bad(LineError),
}

/// The rows of a file, one at a time.
pub struct Rows<R: Read> {
    inner: Inner<R>,
    build: Build,
}

/// How a row's item is built.
struct Build {
    default_queue: String,
    /// Validate each item (off for rows the first pass checked, see [`Rows::checked_before`]).
    validate: bool,
    /// Check each row's field values and join them to its params (off: [`Rows::unmerged`]).
    merge: bool,
    /// The fields of the queue the import goes into.
    fields: ImportFields,
}

/// What a CSV column holds: a column of the item, or a field's value.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Column {
    Item(&'static Field),
    Field(usize),
}

enum Inner<R: Read> {
    Csv {
        reader: csv::Reader<Guard<BufReader<R>>>,
        columns: Vec<Column>,
        record: csv::StringRecord,
        fault: Fault,
        done: bool,
    },
    Jsonl {
        reader: BufReader<R>,
        line: u64,
        buf: Vec<u8>,
        done: bool,
    },
}

impl<R: Read> Rows<R> {
    /// Starts reading; a CSV header that names an unknown column (neither the item's nor
    /// one of `fields`, unless they define new ones), names one twice or lacks `title` is
    /// refused here.
    pub fn new(
        source: R,
        format: Format,
        default_queue: &str,
        mut fields: ImportFields,
    ) -> Result<Self, LineError> {
        let mut source = BufReader::with_capacity(64 * 1024, source);
        skip_bom(&mut source).map_err(|e| LineError {
            line: 1,
            message: format!("cannot be read: {e}"),
        })?;
        let inner = match format {
            Format::Csv => {
                let fault = Fault::default();
                let mut reader = csv::ReaderBuilder::new()
                    .has_headers(true)
                    .flexible(false)
                    .from_reader(Guard::new(source, fault.clone()));
                let headers = match reader.headers() {
                    Ok(h) => h.clone(),
                    Err(e) => return Err(csv_error(&e, 1, &fault)),
                };
                let columns = header_columns(&headers, &mut fields)?;
                Inner::Csv {
                    reader,
                    columns,
                    record: csv::StringRecord::new(),
                    fault,
                    done: false,
                }
            }
            Format::Jsonl => Inner::Jsonl {
                reader: source,
                line: 0,
                buf: Vec::new(),
                done: false,
            },
        };
        Ok(Rows {
            inner,
            build: Build {
                default_queue: default_queue.to_string(),
                validate: true,
                merge: true,
                fields,
            },
        })
    }

    /// The import's fields: the queue's, then those it would define (found so far).
    pub fn fields(&self) -> &ImportFields {
        &self.build.fields
    }

    /// For the second pass, over rows the first one validated: items are built without
    /// validating them again. The caller proves the rows are the ones checked (the
    /// running row hash, which covers every field an item is built from) before writing
    /// any of them.
    pub fn checked_before(mut self) -> Self {
        self.build.validate = false;
        self
    }

    /// Rows with their field values as the file gave them (`Row::given`), neither checked
    /// nor joined to the params: the caller merges each row once ([`Row::merge`]). A
    /// validated row is still proven to be mergeable into an item that validates.
    pub fn unmerged(mut self) -> Self {
        self.build.merge = false;
        self
    }

    /// True when the file is CSV and its header has no column `col`.
    pub(crate) fn lacks_column(&self, col: Col) -> bool {
        match &self.inner {
            Inner::Csv { columns, .. } => !columns
                .iter()
                .any(|c| matches!(c, Column::Item(f) if f.col == col)),
            Inner::Jsonl { .. } => false,
        }
    }

    /// The next row; `Ok(None)` at the end. `Err` is a fault after which nothing more
    /// can be read (an unclosed quote, a runaway row, a read error).
    pub fn next_row(&mut self) -> Result<Option<Parsed>, LineError> {
        let q = &mut self.build;
        match &mut self.inner {
            Inner::Csv {
                reader,
                columns,
                record,
                fault,
                done,
            } => loop {
                if *done {
                    return Ok(None);
                }
                let line = reader.position().line();
                match reader.read_record(record) {
                    Ok(false) => {
                        *done = true;
                        return Ok(None);
                    }
                    Ok(true) => {
                        let line = record.position().map_or(line, |p| p.line());
                        if record.iter().all(|f| f.trim().is_empty()) {
                            continue;
                        }
                        let mut raw = RawRow::default();
                        for (c, v) in columns.iter().zip(record.iter()) {
                            // A cell `export` neutralized reads as what it stood for.
                            let v = super::restore(v).to_string();
                            match c {
                                Column::Item(f) => raw.set(f, v),
                                Column::Field(i) => {
                                    raw.fields.push((*i, serde_json::Value::String(v)))
                                }
                            }
                        }
                        return Ok(Some(checked(raw, line, q)));
                    }
                    Err(e) => {
                        let recoverable = matches!(
                            e.kind(),
                            csv::ErrorKind::UnequalLengths { .. } | csv::ErrorKind::Utf8 { .. }
                        );
                        let err = csv_error(&e, line, fault);
                        if recoverable {
                            return Ok(Some(Parsed::Bad(err)));
                        }
                        *done = true;
                        return Err(err);
                    }
                }
            },
            Inner::Jsonl {
                reader,
                line,
                buf,
                done,
            } => next_jsonl(reader, line, buf, done, q),
        }
    }
}

/// The next JSON Lines row (see [`Rows::next_row`]).
fn next_jsonl<R: Read>(
    reader: &mut BufReader<R>,
    line: &mut u64,
    buf: &mut Vec<u8>,
    done: &mut bool,
    q: &mut Build,
) -> Result<Option<Parsed>, LineError> {
    loop {
        if *done {
            return Ok(None);
        }
        buf.clear();
        *line += 1;
        let n = reader
            .by_ref()
            .take(MAX_ROW_BYTES as u64 + 1)
            .read_until(b'\n', buf)
            .map_err(|e| {
                *done = true;
                LineError {
                    line: *line,
                    message: format!("cannot be read: {e}"),
                }
            })?;
        if n == 0 {
            *done = true;
            return Ok(None);
        }
        if buf.len() > MAX_ROW_BYTES {
            *done = true;
            return Err(LineError {
                line: *line,
                message: format!(
                    "is longer than {} MiB; the import stops here",
                    MAX_ROW_BYTES >> 20
                ),
            });
        }
        let text = buf.strip_suffix(b"\n").unwrap_or(buf);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        return Ok(Some(json_row(text, *line, q)));
    }
}

/// Steps over a UTF-8 byte order mark (Excel writes one).
fn skip_bom(r: &mut impl BufRead) -> std::io::Result<()> {
    let mut seen = 0;
    while seen < 3 {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        let n = (3 - seen).min(buf.len());
        if buf[..n] != b"\xEF\xBB\xBF"[seen..seen + n] {
            if seen > 0 {
                // A partial mark: cannot be put back, and is not text either.
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "starts with a broken byte order mark",
                ));
            }
            return Ok(());
        }
        r.consume(n);
        seen += n;
    }
    Ok(())
}

fn checked(raw: RawRow, line: u64, build: &Build) -> Parsed {
    raw.into_parsed(
        line,
        &build.default_queue,
        (build.validate, build.merge),
        &build.fields,
    )
    .unwrap_or_else(|message| Parsed::Bad(LineError { line, message }))
}

fn header_columns(
    headers: &csv::StringRecord,
    fields: &mut ImportFields,
) -> Result<Vec<Column>, LineError> {
    let mut problems = Vec::new();
    let mut unknown = Vec::new();
    let mut columns: Vec<Column> = Vec::new();
    for h in headers.iter() {
        let name = h.trim().trim_start_matches('\u{feff}').to_ascii_lowercase();
        let c = match column(&name) {
            Some(f) => Column::Item(f),
            None => match fields.column(&name, h, "column") {
                Ok(Some(i)) => Column::Field(i),
                Ok(None) => {
                    unknown.push(h);
                    continue;
                }
                Err(e) => {
                    problems.push(e);
                    continue;
                }
            },
        };
        if columns.contains(&c) {
            problems.push(format!("column '{}' appears twice", sanitize::line(&name)));
        } else {
            columns.push(c);
        }
    }
    if !unknown.is_empty() {
        problems.insert(0, fields.unknown(&unknown, "column"));
    }
    let title = |c: &Column| matches!(c, Column::Item(f) if f.col == Col::Title);
    if !columns.iter().any(title) {
        problems.push("the header has no 'title' column".into());
    }
    if problems.is_empty() {
        Ok(columns)
    } else {
        Err(LineError {
            line: 1,
            message: problems.join("; "),
        })
    }
}

fn json_row(text: &[u8], line: u64, build: &mut Build) -> Parsed {
    let bad = |message: String| Parsed::Bad(LineError { line, message });
    let Ok(text) = std::str::from_utf8(text) else {
        return bad("is not valid UTF-8".into());
    };
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return bad(format!("is not valid JSON: {e}")),
    };
    let Some(obj) = value.as_object() else {
        return bad("is not a JSON object".into());
    };
    match raw_from_json(obj, &mut build.fields) {
        Ok(raw) => checked(raw, line, build),
        Err(m) => bad(m),
    }
}

fn raw_from_json(
    obj: &serde_json::Map<String, serde_json::Value>,
    fields: &mut ImportFields,
) -> Result<RawRow, String> {
    use serde_json::Value;
    let mut raw = RawRow::default();
    let mut seen: Vec<&Field> = Vec::new();
    for (k, v) in obj {
        let Some(f) = column(k) else {
            // A JSON object's keys are distinct: a field is given once.
            match fields.column(k, k, "key")? {
                Some(i) => raw.fields.push((i, v.clone())),
                None => {
                    let unknown: Vec<&str> = (obj.keys())
                        .filter(|k| column(k).is_none() && fields.find(k).is_none())
                        .map(String::as_str)
                        .collect();
                    return Err(fields.unknown(&unknown, "key"));
                }
            }
            continue;
        };
        let c = f.key();
        if seen.contains(&f) {
            return Err(format!("'{c}' is given twice (as {c} and {})", f.name));
        }
        seen.push(f);
        // What `import` sets, and the columns it reads itself (`id`, `state`).
        let read = f.set_by(Who::Import) || matches!(f.col, Col::Id | Col::State);
        let text = match v {
            Value::Null => continue,
            Value::String(s) => s.clone(),
            Value::Number(n) if f.kind == Kind::Int || f.col == Col::RequestId => n.to_string(),
            Value::Object(_) if f.kind == Kind::Json => v.to_string(),
            _ if !read => continue,
            _ if matches!(f.kind, Kind::Time | Kind::OptTime) => {
                return Err(format!("'{c}' must be an RFC 3339 string"));
            }
            _ => return Err(format!("'{c}' has the wrong type")),
        };
        raw.set(f, text);
    }
    Ok(raw)
}

/// A fault the reader under the CSV parser found (a runaway row), for the parser's error
/// to name; shared so that the second pass may read on a thread of its own.
type Fault = Arc<Mutex<Option<LineError>>>;

fn csv_error(e: &csv::Error, fallback_line: u64, fault: &Fault) -> LineError {
    if let Some(f) = fault.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return f;
    }
    let line = e.position().map_or(fallback_line, |p| p.line());
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("has {len} fields; the header has {expected_len}"),
        csv::ErrorKind::Utf8 { .. } => "is not valid UTF-8".to_string(),
        _ => format!("cannot be read: {e}"),
    };
    LineError { line, message }
}

/// Watches the bytes the CSV reader gets: a quoted field that never closes (the csv crate
/// would silently read the rest of the file into it) and a row longer than
/// [`MAX_ROW_BYTES`] are faults, reported through `fault` with the line they start on.
struct Guard<R> {
    inner: R,
    fault: Fault,
    line: u64,
    in_quotes: bool,
    at_field_start: bool,
    quote_pending: bool,
    opened_at: u64,
    row_start: u64,
    row_bytes: usize,
}

impl<R: Read> Guard<R> {
    fn new(inner: R, fault: Fault) -> Self {
        Guard {
            inner,
            fault,
            line: 1,
            in_quotes: false,
            at_field_start: true,
            quote_pending: false,
            opened_at: 0,
            row_start: 1,
            row_bytes: 0,
        }
    }

    fn fail(&self, line: u64, message: String) -> std::io::Error {
        *self.fault.lock().unwrap_or_else(|p| p.into_inner()) = Some(LineError {
            line,
            message: message.clone(),
        });
        std::io::Error::new(std::io::ErrorKind::InvalidData, message)
    }

    fn watch(&mut self, data: &[u8]) -> std::io::Result<()> {
        for &b in data {
            self.row_bytes += 1;
            if self.row_bytes > MAX_ROW_BYTES {
                return Err(self.fail(
                    self.row_start,
                    format!(
                        "is longer than {} MiB (a quote that never closes?); the import stops here",
                        MAX_ROW_BYTES >> 20
                    ),
                ));
            }
            if self.in_quotes {
                if !self.quote_pending {
                    if b == b'"' {
                        self.quote_pending = true;
                    } else if b == b'\n' {
                        self.line += 1;
                    }
                    continue;
                }
                // The quote before closed the field, unless this is its escaped pair.
                self.quote_pending = false;
                if b == b'"' {
                    continue;
                }
                self.in_quotes = false;
            }
            match b {
                b'"' if self.at_field_start => {
                    self.in_quotes = true;
                    self.opened_at = self.line;
                    self.at_field_start = false;
                }
                b',' => self.at_field_start = true,
                b'\n' => {
                    self.line += 1;
                    self.at_field_start = true;
                    self.row_start = self.line;
                    self.row_bytes = 0;
                }
                _ => self.at_field_start = false,
            }
        }
        Ok(())
    }
}

impl<R: Read> Read for Guard<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 {
            if self.in_quotes && !self.quote_pending {
                return Err(self.fail(
                    self.opened_at,
                    "a quoted field starts here and is never closed".into(),
                ));
            }
            return Ok(0);
        }
        self.watch(&buf[..n])?;
        Ok(n)
    }
}
