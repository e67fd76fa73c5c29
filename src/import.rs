//! Reading `caseload import` files: CSV (with a header row) and JSON Lines.
//!
//! The whole file is parsed and validated before anything is written; every bad line is
//! named. Rows without a `request_id` get one derived from their content (and how many
//! identical rows came before), so importing the same file again, or re-running an import
//! that was killed half-way, adds every row exactly once.

use std::collections::HashMap;

use crate::domain::time::parse_rfc3339;
use crate::domain::{NewItem, sanitize};

/// The file formats `import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Jsonl,
}

impl Format {
    /// Guesses from the file name: `.jsonl`/`.ndjson`/`.json` are JSON Lines, else CSV.
    pub fn from_path(path: &std::path::Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some("jsonl" | "ndjson" | "json") => Format::Jsonl,
            _ => Format::Csv,
        }
    }
}

/// The columns (CSV) or keys (JSON Lines) an import row may have.
pub const COLUMNS: [&str; 7] = [
    "title",
    "queue",
    "body",
    "params",
    "priority",
    "due",
    "request_id",
];

/// Sizes import batches so that each write transaction takes about [`BATCH_TARGET`]:
/// the write lock is never held long, so staff keep claiming during a large import, on
/// a quiet machine and a busy one alike.
#[derive(Debug, Clone)]
pub struct BatchSizer {
    len: usize,
}

/// How long one import transaction should hold the write lock.
pub const BATCH_TARGET: std::time::Duration = std::time::Duration::from_millis(25);
const MIN_BATCH: usize = 50;
const MAX_BATCH: usize = 5000;

impl Default for BatchSizer {
    fn default() -> Self {
        BatchSizer { len: 500 }
    }
}

impl BatchSizer {
    /// How many rows the next batch should hold.
    pub fn next_len(&self) -> usize {
        self.len
    }

    /// Learns from how long a batch of `rows` took: the next one aims at the target,
    /// growing at most twofold, shrinking at once.
    pub fn record(&mut self, rows: usize, took: std::time::Duration) {
        let per_row = took.as_secs_f64() / rows.max(1) as f64;
        let fit = if per_row > 0.0 {
            (BATCH_TARGET.as_secs_f64() / per_row) as usize
        } else {
            MAX_BATCH
        };
        self.len = fit.min(self.len * 2).clamp(MIN_BATCH, MAX_BATCH);
    }
}

/// One bad line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    pub line: u64,
    pub message: String,
}

/// How many bad lines an error report names before summarising.
pub const MAX_REPORTED: usize = 50;

/// Parses and validates a whole file. `Ok` holds every row; `Err` every bad line.
pub fn parse(
    data: &[u8],
    format: Format,
    default_queue: &str,
) -> Result<Vec<NewItem>, Vec<LineError>> {
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    let rows = match format {
        Format::Csv => parse_csv(data, default_queue),
        Format::Jsonl => parse_jsonl(data, default_queue),
    }?;
    Ok(with_request_ids(rows))
}

fn parse_csv(data: &[u8], default_queue: &str) -> Result<Vec<NewItem>, Vec<LineError>> {
    if let Some(line) = unclosed_quote_line(data) {
        return Err(vec![LineError {
            line,
            message: "a quoted field starts here and is never closed".into(),
        }]);
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(data);
    let headers = match reader.headers() {
        Ok(h) => h.clone(),
        Err(e) => return Err(vec![csv_error(&e, 1)]),
    };
    let index = header_index(&headers)?;
    let mut errors = Vec::new();
    let mut rows = Vec::new();
    let mut record = csv::StringRecord::new();
    loop {
        let line = reader.position().line();
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {
                let line = record.position().map_or(line, |p| p.line());
                if record.iter().all(|f| f.trim().is_empty()) {
                    continue;
                }
                let get = |k: &str| {
                    index
                        .get(k)
                        .and_then(|&i| record.get(i))
                        .map(str::to_string)
                };
                let raw = RawRow {
                    title: get("title"),
                    queue: get("queue"),
                    body: get("body"),
                    params: get("params"),
                    priority: get("priority"),
                    due: get("due"),
                    request_id: get("request_id"),
                };
                match raw.into_item(default_queue) {
                    Ok(item) => rows.push(item),
                    Err(m) => errors.push(LineError { line, message: m }),
                }
            }
            Err(e) => {
                errors.push(csv_error(&e, line));
                if !matches!(
                    e.kind(),
                    csv::ErrorKind::UnequalLengths { .. } | csv::ErrorKind::Utf8 { .. }
                ) {
                    break;
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(rows)
    } else {
        Err(errors)
    }
}

/// The position of each known column in the CSV header; every unknown, repeated or
/// missing column is an error of line 1.
fn header_index(headers: &csv::StringRecord) -> Result<HashMap<String, usize>, Vec<LineError>> {
    let mut errors = Vec::new();
    let mut index = HashMap::new();
    for (i, h) in headers.iter().enumerate() {
        let name = h.trim().to_ascii_lowercase();
        let name = if name == "due_at" {
            "due".to_string()
        } else {
            name
        };
        if !COLUMNS.contains(&name.as_str()) {
            errors.push(LineError {
                line: 1,
                message: format!(
                    "unknown column '{}' (columns: {})",
                    sanitize::line(h),
                    COLUMNS.join(", ")
                ),
            });
        } else if index.insert(name.clone(), i).is_some() {
            errors.push(LineError {
                line: 1,
                message: format!("column '{name}' appears twice"),
            });
        }
    }
    if !index.contains_key("title") {
        errors.push(LineError {
            line: 1,
            message: "the header has no 'title' column".into(),
        });
    }
    if errors.is_empty() {
        Ok(index)
    } else {
        Err(errors)
    }
}

fn csv_error(e: &csv::Error, fallback_line: u64) -> LineError {
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

/// Finds the line of a quote that opens a field and never closes (the csv crate would
/// silently read the rest of the file into that field).
fn unclosed_quote_line(data: &[u8]) -> Option<u64> {
    let mut line = 1u64;
    let mut in_quotes = false;
    let mut opened_at = 0u64;
    let mut at_field_start = true;
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        if in_quotes {
            if b == b'"' {
                if data.get(i + 1) == Some(&b'"') {
                    i += 1;
                } else {
                    in_quotes = false;
                }
            } else if b == b'\n' {
                line += 1;
            }
        } else {
            match b {
                b'"' if at_field_start => {
                    in_quotes = true;
                    opened_at = line;
                }
                b',' => {
                    at_field_start = true;
                    i += 1;
                    continue;
                }
                b'\n' => {
                    line += 1;
                    at_field_start = true;
                    i += 1;
                    continue;
                }
                _ => {}
            }
            at_field_start = false;
        }
        i += 1;
    }
    in_quotes.then_some(opened_at)
}

fn parse_jsonl(data: &[u8], default_queue: &str) -> Result<Vec<NewItem>, Vec<LineError>> {
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    for (i, raw_line) in data.split(|&b| b == b'\n').enumerate() {
        let line = i as u64 + 1;
        let raw_line = raw_line.strip_suffix(b"\r").unwrap_or(raw_line);
        if raw_line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let text = match std::str::from_utf8(raw_line) {
            Ok(t) => t,
            Err(_) => {
                errors.push(LineError {
                    line,
                    message: "is not valid UTF-8".into(),
                });
                continue;
            }
        };
        let value: serde_json::Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                errors.push(LineError {
                    line,
                    message: format!("is not valid JSON: {e}"),
                });
                continue;
            }
        };
        let Some(obj) = value.as_object() else {
            errors.push(LineError {
                line,
                message: "is not a JSON object".into(),
            });
            continue;
        };
        match row_from_json(obj).and_then(|raw| raw.into_item(default_queue)) {
            Ok(item) => rows.push(item),
            Err(m) => errors.push(LineError { line, message: m }),
        }
    }
    if errors.is_empty() {
        Ok(rows)
    } else {
        Err(errors)
    }
}

fn row_from_json(obj: &serde_json::Map<String, serde_json::Value>) -> Result<RawRow, String> {
    use serde_json::Value;
    for k in obj.keys() {
        let k = if k == "due_at" { "due" } else { k.as_str() };
        if !COLUMNS.contains(&k) {
            return Err(format!(
                "unknown key '{}' (keys: {})",
                sanitize::line(k),
                COLUMNS.join(", ")
            ));
        }
    }
    let text = |k: &str| -> Result<Option<String>, String> {
        match obj.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) if k == "priority" || k == "request_id" => {
                Ok(Some(n.to_string()))
            }
            Some(Value::Object(_)) if k == "params" => Ok(obj.get(k).map(|v| v.to_string())),
            Some(_) => Err(format!("'{k}' has the wrong type")),
        }
    };
    Ok(RawRow {
        title: text("title")?,
        queue: text("queue")?,
        body: text("body")?,
        params: text("params")?,
        priority: text("priority")?,
        due: match obj.get("due").or_else(|| obj.get("due_at")) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err("'due' must be an RFC 3339 string".into()),
        },
        request_id: text("request_id")?,
    })
}

/// One row as read, before checking.
struct RawRow {
    title: Option<String>,
    queue: Option<String>,
    body: Option<String>,
    params: Option<String>,
    priority: Option<String>,
    due: Option<String>,
    request_id: Option<String>,
}

impl RawRow {
    fn into_item(self, default_queue: &str) -> Result<NewItem, String> {
        let nonempty = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
        let priority = match nonempty(self.priority) {
            None => 0,
            Some(p) => p
                .trim()
                .parse::<i64>()
                .map_err(|_| format!("priority '{}' is not a whole number", sanitize::line(&p)))?,
        };
        let due_at = match nonempty(self.due) {
            None => None,
            Some(d) => Some(parse_rfc3339(&d).ok_or_else(|| {
                format!(
                    "due '{}' is not an RFC 3339 time (e.g. 2026-12-01T17:00:00Z)",
                    sanitize::line(&d)
                )
            })?),
        };
        let item = NewItem {
            queue: nonempty(self.queue).unwrap_or_else(|| default_queue.to_string()),
            title: self.title.unwrap_or_default(),
            body: self.body.unwrap_or_default(),
            params: nonempty(self.params).unwrap_or_else(|| "{}".into()),
            priority,
            due_at,
            request_id: nonempty(self.request_id),
        };
        item.validate().map_err(|e| e.message)?;
        Ok(item)
    }
}

/// Gives rows without a request id one derived from their content, so that re-importing
/// the same rows finds them again.
fn with_request_ids(mut rows: Vec<NewItem>) -> Vec<NewItem> {
    let mut seen: HashMap<u128, u32> = HashMap::new();
    for row in rows.iter_mut().filter(|r| r.request_id.is_none()) {
        let h = content_hash(row);
        let n = seen.entry(h).or_insert(0);
        *n += 1;
        row.request_id = Some(format!("import:{h:032x}:{n}"));
    }
    rows
}

/// 128-bit FNV-1a over the row's fields, separated so that field boundaries count.
fn content_hash(row: &NewItem) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    let mut h = OFFSET;
    let due = row.due_at.map(|d| d.to_string()).unwrap_or_default();
    let prio = row.priority.to_string();
    for field in [
        row.queue.as_str(),
        &row.title,
        &row.body,
        &row.params,
        &prio,
        &due,
    ] {
        for &b in field.as_bytes().iter().chain(&[0x1f]) {
            h ^= u128::from(b);
            h = h.wrapping_mul(PRIME);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_with_bom_and_crlf_simply_works() {
        let data = b"\xEF\xBB\xBFtitle,priority\r\nFirst,2\r\nSecond,\r\n";
        let rows = parse(data, Format::Csv, "q").unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].title, "First");
        assert_eq!(rows[0].priority, 2);
        assert_eq!(rows[1].queue, "q");
    }

    #[test]
    fn every_bad_line_is_named() {
        let data = b"title,priority\nok,1\nbad,x\nalso ok,2\n,3\n";
        let errs = parse(data, Format::Csv, "q").unwrap_err();
        let lines: Vec<u64> = errs.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![3, 5]);
        assert!(errs[0].message.contains("priority"));
    }

    #[test]
    fn wrong_field_count_and_unclosed_quote() {
        let errs = parse(b"title,body\na,b\nc\n", Format::Csv, "q").unwrap_err();
        assert_eq!(errs[0].line, 3);
        assert!(errs[0].message.contains("1 fields"));
        let errs = parse(b"title,body\na,b\n\"c,d\ne,f\n", Format::Csv, "q").unwrap_err();
        assert_eq!(errs[0].line, 3);
        assert!(errs[0].message.contains("never closed"));
        let ok = parse(
            b"title,body\n\"multi\nline\",\"say \"\"hi\"\"\"\n",
            Format::Csv,
            "q",
        )
        .unwrap();
        assert_eq!(ok[0].title, "multi\nline");
        assert_eq!(ok[0].body, "say \"hi\"");
    }

    #[test]
    fn invalid_utf8_is_named() {
        let errs = parse(b"title\nok\nbad \xff\n", Format::Csv, "q").unwrap_err();
        assert_eq!(errs[0].line, 3);
        assert!(errs[0].message.contains("UTF-8"));
    }

    #[test]
    fn jsonl_lines_are_checked() {
        let data = b"{\"title\":\"a\",\"params\":{\"k\":1}}\n\n{oops\n{\"title\":\"b\",\"x\":1}\n";
        let errs = parse(data, Format::Jsonl, "q").unwrap_err();
        assert_eq!(errs.iter().map(|e| e.line).collect::<Vec<_>>(), vec![3, 4]);
        let rows = parse(
            b"{\"title\":\"a\",\"params\":{\"k\":1}}\n",
            Format::Jsonl,
            "q",
        )
        .unwrap();
        assert_eq!(rows[0].params, "{\"k\":1}");
    }

    #[test]
    fn batches_aim_at_the_time_target() {
        let mut b = BatchSizer::default();
        let start = b.next_len();
        // Fast rows: grow, but at most twofold per batch.
        b.record(start, std::time::Duration::from_millis(4));
        assert_eq!(b.next_len(), start * 2);
        // Slower rows (0.1 ms each): shrink at once to what fits the target.
        b.record(1000, std::time::Duration::from_millis(100));
        assert_eq!(b.next_len(), 250);
        // Never below the floor, however slow.
        b.record(250, std::time::Duration::from_secs(10));
        assert_eq!(b.next_len(), MIN_BATCH);
    }

    #[test]
    fn derived_request_ids_are_stable_and_distinct() {
        let data = b"title\nsame\nsame\nother\n";
        let a = parse(data, Format::Csv, "q").unwrap();
        let b = parse(data, Format::Csv, "q").unwrap();
        assert_eq!(a, b);
        assert_ne!(
            a[0].request_id, a[1].request_id,
            "identical rows stay two rows"
        );
        let c = parse(data, Format::Csv, "other-queue").unwrap();
        assert_ne!(a[0].request_id, c[0].request_id);
    }
}
