//! `caseload import`: CSV (with a header row) and JSON Lines files, in bounded memory.
//!
//! An import reads its file twice ([`run`]): the first pass checks every row and names
//! every bad line without writing anything; the second writes the rows in short
//! transactions. Nothing but one row at a time (and a few bytes per fifty rows) is held,
//! whatever the file's size. The second pass proves it reads what the first one checked
//! (the same size, mtime and inode, and the same rows: a running hash compared before each
//! batch is committed).
//!
//! Rows without a `request_id` are keyed by the file's identity (a hash of its bytes and
//! the import's options) and the line the row starts on, so importing the same file
//! again, or re-running an import that was killed half-way, adds every row exactly once,
//! while a row of a different file is never taken for one seen before ([`derived_key`]).

mod index;
mod keep;
mod read;
mod run;

pub use index::{Beside, INDEX_TARGET, index_beside, index_new_rows};
pub use read::{Parsed, Row, Rows};
pub use run::{ImportError, Options, Progress, Summary, import};

use crate::domain::fields::{self, Col, FIELDS, Field, FieldError, Input, Kind, Value, Who};
use crate::domain::queue_fields::{
    Checklist, FieldDef, FieldRules, FieldType, validate_name, value_text,
};
use crate::domain::time::parse_rfc3339;
use crate::domain::{Cell, NewItem, sanitize};

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

    fn as_str(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Jsonl => "jsonl",
        }
    }
}

/// What a CSV column or JSON Lines key names: a column of the table. Those `import`
/// sets ([`Who::Import`]) are known by their key (`due`, `request_id`) and their name
/// (`due_at`, as `export` writes it); every other column `export` writes is read and
/// ignored (`id` is kept with `--keep-ids`, `state` leaves finished rows out), since the
/// lock and the history belong to the database the rows came from.
fn column(name: &str) -> Option<&'static Field> {
    FIELDS
        .iter()
        .find(|f| f.name == name || (f.set_by(Who::Import) && f.key() == name))
}

/// The keys of the columns an import sets, for messages.
fn known_columns() -> String {
    let keys: Vec<&str> = (FIELDS.iter())
        .filter(|f| f.set_by(Who::Import))
        .map(|f| f.key())
        .collect();
    keys.join(", ")
}

/// The fields of the queue an import goes into (`--queue`): a CSV column or JSON Lines
/// key named like one goes into `params[NAME]`. With `define` (a supervisor's
/// `--define-fields`), a column that names neither a column of the item nor a field
/// becomes a new `text` field, which the import defines (audited) before it writes.
#[derive(Debug, Clone, Default)]
pub struct ImportFields {
    /// The queue whose fields these are.
    pub queue: String,
    /// Its fields in their order, then those this import defines.
    pub defs: Vec<FieldDef>,
    /// Their rules, ready (one per def).
    rules: Vec<FieldRules<'static>>,
    /// Define a text field for each unknown column.
    pub define: bool,
    /// How many of `defs` the queue had before (the rest are new).
    had: usize,
}

impl ImportFields {
    /// The fields `defs` of `queue`; `define` adds a text field per unknown column.
    pub fn new(queue: &str, defs: Vec<FieldDef>, define: bool) -> ImportFields {
        ImportFields {
            queue: queue.to_string(),
            had: defs.len(),
            rules: defs.iter().cloned().map(FieldRules::owned).collect(),
            defs,
            define,
        }
    }

    /// The index of field `name` in `defs`.
    fn find(&self, name: &str) -> Option<usize> {
        self.defs.iter().position(|d| d.name == name)
    }

    /// The fields this import defines (unknown columns, with `define`).
    pub fn new_fields(&self) -> &[FieldDef] {
        &self.defs[self.had..]
    }

    /// The field a column or key `name` (`shown` as the file spells it) fills, by its
    /// index in `defs`, defining it when so asked; `Ok(None)` when it names no field
    /// (see [`ImportFields::unknown`]); `Err` when it cannot be defined.
    fn column(&mut self, name: &str, shown: &str, what: &str) -> Result<Option<usize>, String> {
        if let Some(i) = self.find(name) {
            return Ok(Some(i));
        }
        if !self.define {
            return Ok(None);
        }
        validate_name(name).map_err(|e| format!("{what} '{}': {e}", sanitize::line(shown)))?;
        let def = FieldDef::new(name, FieldType::Text);
        self.rules.push(FieldRules::owned(def.clone()));
        self.defs.push(def);
        Ok(Some(self.defs.len() - 1))
    }

    /// Why columns (or keys: `what`) that name neither a column of the item nor a field
    /// are refused: which, what the item's columns and the queue's fields are, and how to
    /// define them.
    fn unknown(&self, shown: &[&str], what: &str) -> String {
        let names: Vec<String> = (shown.iter())
            .map(|s| format!("'{}'", sanitize::line(s)))
            .collect();
        let fields = match self.defs.is_empty() {
            true => format!("queue '{}' has no fields", self.queue),
            false => {
                let names: Vec<&str> = self.defs.iter().map(|d| d.name.as_str()).collect();
                format!("fields of queue '{}': {}", self.queue, names.join(", "))
            }
        };
        format!(
            "unknown {what}{} {} (the item's {what}s: {}; {fields}, the queue --queue names; \
             a supervisor's --define-fields defines a text field for each)",
            if names.len() > 1 { "s" } else { "" },
            names.join(", "),
            known_columns(),
        )
    }
}

/// Why a row with field values that names a queue other than `--queue` is refused: the
/// field columns are the fields of `--queue` (they were found, checked and defined there),
/// and the same name in another queue may be another field, or none.
fn other_queue(
    queue: &str,
    default_queue: &str,
    given: &[(usize, serde_json::Value)],
    defs: &[FieldDef],
) -> String {
    let names: Vec<&str> = given.iter().map(|(i, _)| defs[*i].name.as_str()).collect();
    format!(
        "queue '{}' is not '{}', the queue --queue names, whose fields the columns {} fill; \
         import each queue's rows with its own --queue",
        sanitize::line(queue),
        sanitize::line(default_queue),
        names.join(", ")
    )
}

/// What an imported value of field `def` is stored as in `params`: a value of its type in
/// its canonical form (as `caseload set` stores it), or, when it breaks the field's rules,
/// what the file gave as it is (fixing it is the work); `None` for an empty one.
pub fn stored_value(def: &FieldDef, v: serde_json::Value) -> Option<serde_json::Value> {
    stored(&FieldRules::of(def), v).map(|(v, _)| v)
}

/// [`stored_value`] with the field's rules ready, and whether the stored value keeps them
/// (`Some(true)`: its canonical form, which keeps them as `caseload set` stored it;
/// `Some(false)`: the file's value, which breaks them; `None`: not known without a check).
fn stored(
    rules: &FieldRules<'_>,
    v: serde_json::Value,
) -> Option<(serde_json::Value, Option<bool>)> {
    use serde_json::Value as J;
    let def = &rules.def;
    match &v {
        J::Null => return None,
        J::String(s) if s.trim().is_empty() => return None,
        _ => {}
    }
    if def.kind == FieldType::Checklist {
        return Some((
            Checklist::of(def, Some(&v)).map_or(v, |c| c.to_json()),
            None,
        ));
    }
    if matches!(v, J::Array(_) | J::Object(_)) {
        return Some((v, Some(false)));
    }
    match rules.check_typed(&value_text(&v)) {
        Ok(J::Null) => None,
        Ok(c) => Some((c, Some(true))),
        Err(_) => Some((v, Some(false))),
    }
}

/// Puts the row's field values into the item's params (`given`: by index in the import's
/// fields), each checked once. With `broken`, also finds the fields (by index) whose
/// value in the params breaks their rules, as Complete would find them: a value this
/// row gave is known from its one check (a canonical value keeps the rules it was just
/// checked against: a type's canonical form is its own, see the queue fields' tests);
/// any other is checked as stored.
fn merge_fields(
    item: &mut NewItem,
    given: Vec<(usize, serde_json::Value)>,
    fields: &ImportFields,
    broken: Option<&mut Vec<usize>>,
) -> Result<(), String> {
    let mut params = match serde_json::from_str::<serde_json::Value>(&item.params) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => return Err("params is not a JSON object, so field values cannot join it".into()),
    };
    let mut known: Vec<Option<bool>> = vec![None; fields.rules.len()];
    for (i, v) in given {
        let rules = &fields.rules[i];
        let Some((v, keeps)) = stored(rules, v) else {
            continue;
        };
        if params.contains_key(&rules.def.name) {
            return Err(format!(
                "field {} is given twice (as its own column and in params)",
                rules.def.name
            ));
        }
        params.insert(rules.def.name.clone(), v);
        known[i] = keeps;
    }
    if let Some(broken) = broken {
        for (i, rules) in fields.rules.iter().enumerate() {
            let keeps =
                known[i].unwrap_or_else(|| rules.check_stored(params.get(&rules.def.name)).is_ok());
            if !keeps {
                broken.push(i);
            }
        }
    }
    item.params = serde_json::Value::Object(params).to_string();
    Ok(())
}

/// Sizes import batches so that each write transaction takes about [`BATCH_TARGET`]:
/// the write lock is never held long, so staff keep claiming during a large import, on
/// a quiet machine and a busy one alike.
#[derive(Debug, Clone)]
pub struct BatchSizer {
    len: usize,
    target: std::time::Duration,
    max: usize,
}

/// How long one import transaction should hold the write lock.
pub const BATCH_TARGET: std::time::Duration = std::time::Duration::from_millis(25);
/// Batches are whole multiples of this many rows (the second pass's check interval).
pub(crate) const MIN_BATCH: usize = 50;
const MAX_BATCH: usize = 5000;

impl Default for BatchSizer {
    fn default() -> Self {
        BatchSizer::aiming_at(BATCH_TARGET, 500, MAX_BATCH)
    }
}

impl BatchSizer {
    /// Batches of `len` rows to begin with, then sized to take about `target` each, at
    /// most `max` rows.
    pub fn aiming_at(target: std::time::Duration, len: usize, max: usize) -> BatchSizer {
        BatchSizer { len, target, max }
    }

    /// How many rows the next batch should hold (a multiple of [`MIN_BATCH`]).
    pub fn next_len(&self) -> usize {
        self.len
    }

    /// Learns from how long a batch of `rows` took: the next one aims at the target,
    /// growing at most twofold, shrinking at once.
    pub fn record(&mut self, rows: usize, took: std::time::Duration) {
        let per_row = took.as_secs_f64() / rows.max(1) as f64;
        let fit = if per_row > 0.0 {
            (self.target.as_secs_f64() / per_row) as usize
        } else {
            self.max
        };
        let len = fit.min(self.len * 2).clamp(MIN_BATCH, self.max);
        self.len = len / MIN_BATCH * MIN_BATCH;
    }
}

/// One bad line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    pub line: u64,
    pub message: String,
}

/// How many bad lines an error report names before summarising.
pub(crate) const MAX_REPORTED: usize = 50;

/// The largest row read (a CSV record or a JSON line): every text field may hold 1 MiB,
/// and CSV quoting doubles quotes. A longer row is a broken file (an unclosed quote) and
/// stops the import before it can fill memory.
pub(crate) const MAX_ROW_BYTES: usize = 16 * 1024 * 1024;

/// One row as read, before checking: the text of each column the file gives, and the
/// values of the queue's fields (by index in the import's field list).
struct RawRow {
    values: [Option<String>; fields::COUNT],
    fields: Vec<(usize, serde_json::Value)>,
}

impl Default for RawRow {
    fn default() -> Self {
        RawRow {
            values: std::array::from_fn(|_| None),
            fields: Vec::new(),
        }
    }
}

impl RawRow {
    fn set(&mut self, f: &Field, value: String) {
        self.values[f.col as usize] = Some(value);
    }

    fn take(&mut self, col: Col) -> Option<String> {
        self.values[col as usize].take()
    }

    /// The checked row: an item to add, or a finished row (state done/failed/cancelled)
    /// that an import leaves out. The item is validated (and its fields' rules checked)
    /// when `validate`; `fields` are the import's fields.
    fn into_parsed(
        mut self,
        line: u64,
        default_queue: &str,
        validate: bool,
        fields: &ImportFields,
    ) -> Result<Parsed, String> {
        let nonempty = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
        match nonempty(self.take(Col::State)).as_deref().map(str::trim) {
            None | Some("open") => {}
            Some("done" | "failed" | "cancelled") => return Ok(Parsed::Finished { line }),
            Some(other) => {
                return Err(format!(
                    "state '{}' is not open, done, failed or cancelled",
                    sanitize::line(other)
                ));
            }
        }
        let id = match nonempty(self.take(Col::Id)) {
            None => None,
            Some(s) => match s.trim().parse::<i64>() {
                Ok(n) if n > 0 => Some(n),
                _ => {
                    return Err(format!(
                        "id '{}' is not a positive whole number",
                        sanitize::line(&s)
                    ));
                }
            },
        };
        let mut item = NewItem {
            queue: default_queue.to_string(),
            ..NewItem::default()
        };
        for f in FIELDS.iter().filter(|f| f.set_by(Who::Import)) {
            if let Some(v) = parsed(f, nonempty(self.take(f.col)))? {
                item.put(f.col, v);
            }
        }
        let given = std::mem::take(&mut self.fields);
        let mut broken = Vec::new();
        if !given.is_empty() {
            if item.queue != default_queue {
                return Err(other_queue(
                    &item.queue,
                    default_queue,
                    &given,
                    &fields.defs,
                ));
            }
            merge_fields(&mut item, given, fields, Some(&mut broken))?;
        } else if !fields.rules.is_empty() {
            // (Both passes: the first counts them, the second marks the rows that keep
            // every rule checked, see `run::add_batch`.)
            let params: serde_json::Value =
                serde_json::from_str(&item.params).unwrap_or(serde_json::Value::Null);
            (fields.rules.iter().enumerate())
                .filter(|(_, r)| r.check_stored(params.get(&r.def.name)).is_err())
                .for_each(|(i, _)| broken.push(i));
        }
        if validate {
            item.validate().map_err(|e| in_file(&e))?;
        }
        Ok(Parsed::Item(Row {
            line,
            item,
            id,
            broken,
        }))
    }
}

/// A refused value as a row's error says it: by the file's column (`queue: name is
/// longer than 100 characters`).
fn in_file(e: &FieldError) -> String {
    match e.field {
        Input::Col(c) => format!("{}: {}", fields::field(c).key(), e.problem),
        _ => e.with_label(),
    }
}

/// A column's value from its text, as its kind reads; a blank or missing cell (`None`)
/// keeps the new item's default (the default queue, no due time, empty text, `{}`).
fn parsed(f: &Field, text: Option<String>) -> Result<Option<Value>, String> {
    let Some(t) = text else {
        return Ok(None);
    };
    Ok(Some(match f.kind {
        Kind::Int => {
            Value::Number(t.trim().parse::<i64>().map_err(|_| {
                format!("{} '{}' is not a whole number", f.key(), sanitize::line(&t))
            })?)
        }
        Kind::Time | Kind::OptTime => Value::Time(Some(parse_rfc3339(&t).ok_or_else(|| {
            format!(
                "{} '{}' is not an RFC 3339 time (e.g. 2026-12-01T17:00:00Z)",
                f.key(),
                sanitize::line(&t)
            )
        })?)),
        Kind::OptId => Value::Id(Some(t.trim().parse::<i64>().map_err(|_| {
            format!("{} '{}' is not an item's id", f.key(), sanitize::line(&t))
        })?)),
        Kind::Text | Kind::OptText | Kind::Json => Value::Text(Some(t)),
    }))
}

/// 128-bit FNV-1a, fed with length-prefixed fields so that field boundaries count
/// (`"a\x1fb" + ""` and `"a" + "b\x1f"` differ). Not a cryptographic hash: it tells files
/// and rows apart, it does not withstand someone who forges collisions (who could as well
/// leave the rows out of the file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fnv128(u128);

impl Default for Fnv128 {
    fn default() -> Self {
        Fnv128(0x6c62272e07bb014262b821756295c58d)
    }
}

impl Fnv128 {
    const PRIME: u128 = 0x0000000001000000000000000000013B;

    /// Adds raw bytes (a stream, e.g. a file's content).
    pub(crate) fn bytes(&mut self, data: &[u8]) {
        let mut h = self.0;
        for &b in data {
            h ^= u128::from(b);
            h = h.wrapping_mul(Self::PRIME);
        }
        self.0 = h;
    }

    /// Adds one field: its length first, then its bytes.
    pub fn field(&mut self, data: &[u8]) {
        self.bytes(&(data.len() as u64).to_le_bytes());
        self.bytes(data);
    }

    /// The hash so far.
    pub fn value(&self) -> u128 {
        self.0
    }

    /// Adds one checked row: its line, every column an import sets (the table's, in
    /// its order; a missing value as an empty field, a present optional one behind a
    /// marker) and its id. The hash lives for one import only (the second pass proves it
    /// reads the rows the first one checked); what a re-import is matched by is the
    /// file's identity ([`FileIdentity`]), which hashes the file, not its columns.
    fn row(&mut self, row: &Row) {
        self.field(&row.line.to_le_bytes());
        for f in FIELDS.iter().filter(|f| f.set_by(Who::Import)) {
            match row.item.cell(f.col) {
                Some(Cell::Number(n)) => self.field(&n.to_le_bytes()),
                Some(Cell::Text(Some(t))) if f.kind.nullable() => {
                    self.field(b"+");
                    self.field(t.as_bytes());
                }
                Some(Cell::Text(Some(t))) => self.field(t.as_bytes()),
                Some(Cell::Time(Some(t)) | Cell::Id(Some(t))) => self.field(&t.to_le_bytes()),
                Some(Cell::Text(None) | Cell::Time(None) | Cell::Id(None)) | None => {
                    self.field(b"")
                }
            }
        }
        match row.id {
            Some(id) => self.field(&id.to_le_bytes()),
            None => self.field(b""),
        }
    }
}

/// The identity of one import: its options and the file's bytes, hashed in
/// [`Fnv128::field`] form (the bytes' length comes last, so every input is unambiguous).
#[derive(Debug, Clone)]
pub struct FileIdentity {
    hash: Fnv128,
    len: u64,
}

impl FileIdentity {
    /// Starts the identity of importing a file in `format` with `default_queue`.
    pub fn new(format: Format, default_queue: &str) -> Self {
        let mut hash = Fnv128::default();
        hash.field(b"caseload import 1");
        hash.field(format.as_str().as_bytes());
        hash.field(default_queue.as_bytes());
        FileIdentity { hash, len: 0 }
    }

    /// Adds file bytes as read.
    pub fn bytes(&mut self, data: &[u8]) {
        self.hash.bytes(data);
        self.len += data.len() as u64;
    }

    /// The finished identity, as 32 hex digits.
    pub fn finish(&self) -> String {
        let mut h = self.hash;
        h.field(&self.len.to_le_bytes());
        format!("{:032x}", h.value())
    }
}

/// The request id of a row that has none: the file's identity and the line the row
/// starts on (zero-padded, so that one file's keys sort in file order and land next to
/// each other in the request-id index).
pub fn derived_key(file: &str, line: u64) -> String {
    format!("{DERIVED_PREFIX}{file}:{line:010}")
}

/// True when a spreadsheet would run a cell with this text as a formula (OWASP's list:
/// `=`, `+`, `-`, `@`, tab, carriage return), or when it is such a text behind one `'`
/// (so that [`neutralize`] and [`restore`] undo each other for every text).
fn formula_like(s: &str) -> bool {
    match s.as_bytes().first() {
        Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r') => true,
        Some(b'\'') => formula_like(&s[1..]),
        _ => false,
    }
}

/// A CSV cell a spreadsheet shows as text: a formula-like text gets a leading `'`.
pub(crate) fn neutralize(s: &str) -> std::borrow::Cow<'_, str> {
    if formula_like(s) {
        std::borrow::Cow::Owned(format!("'{s}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// The text a [`neutralize`]d CSV cell stood for.
pub(crate) fn restore(s: &str) -> &str {
    match s.strip_prefix('\'') {
        Some(rest) if formula_like(rest) => rest,
        _ => s,
    }
}

/// How derived request ids begin.
pub(crate) const DERIVED_PREFIX: &str = "import:";

#[cfg(test)]
mod tests {
    use super::*;

    /// Every parsed row of `data`, or every bad line.
    fn parse(data: &[u8], format: Format, q: &str) -> Result<Vec<NewItem>, Vec<LineError>> {
        let mut rows = match Rows::new(data, format, q, ImportFields::default()) {
            Ok(r) => r,
            Err(e) => return Err(vec![e]),
        };
        let (mut items, mut errors) = (Vec::new(), Vec::new());
        loop {
            match rows.next_row() {
                Ok(Some(Parsed::Item(r))) => items.push(r.item),
                Ok(Some(Parsed::Finished { .. })) => {}
                Ok(Some(Parsed::Bad(e))) => errors.push(e),
                Ok(None) => break,
                Err(e) => {
                    errors.push(e);
                    break;
                }
            }
        }
        if errors.is_empty() {
            Ok(items)
        } else {
            Err(errors)
        }
    }

    #[test]
    fn formula_cells_are_neutralized_and_restored_exactly() {
        for s in [
            "=HYPERLINK(\"http://x\")",
            "=cmd|' /C calc'!A0",
            "+1",
            "-2",
            "@SUM(A1)",
            "\tx",
            "'=already quoted",
            "''=twice",
            "'plain",
            "plain",
            "",
            "a=b",
        ] {
            let n = neutralize(s);
            assert!(
                !matches!(
                    n.as_bytes().first(),
                    Some(b'=' | b'+' | b'-' | b'@' | b'\t')
                ),
                "{n}"
            );
            assert_eq!(restore(&n), s, "round trip of {s:?}");
        }
        assert_eq!(neutralize("=1+1"), "'=1+1");
        assert_eq!(neutralize("'plain"), "'plain");
    }

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
        assert_eq!(errs.last().unwrap().line, 3);
        assert!(errs.last().unwrap().message.contains("never closed"));
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
    fn a_runaway_row_stops_the_read_instead_of_filling_memory() {
        let mut data = b"title,body\nok,1\n\"open".to_vec();
        data.extend(std::iter::repeat_n(b'x', MAX_ROW_BYTES + 10));
        data.extend(b"\nmore,2\n");
        let errs = parse(&data, Format::Csv, "q").unwrap_err();
        assert_eq!(errs.last().unwrap().line, 3);
        assert!(
            errs.last().unwrap().message.contains("longer than"),
            "{errs:?}"
        );
        let mut line = b"{\"title\":\"".to_vec();
        line.extend(std::iter::repeat_n(b'x', MAX_ROW_BYTES + 10));
        let errs = parse(&line, Format::Jsonl, "q").unwrap_err();
        assert_eq!(errs[0].line, 1);
        assert!(errs[0].message.contains("longer than"), "{errs:?}");
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
    fn exported_columns_are_read_and_finished_rows_left_out() {
        let data = b"id,queue,request_id,title,state,due_at,created_at,lock_token\n\
            7,q,,open one,open,2026-12-01T00:00:00.000Z,2026-01-01T00:00:00.000Z,3\n\
            8,q,,done one,done,,2026-01-01T00:00:00.000Z,1\n";
        let mut rows = Rows::new(&data[..], Format::Csv, "d", ImportFields::default()).unwrap();
        let Ok(Some(Parsed::Item(r))) = rows.next_row() else {
            panic!("an item")
        };
        assert_eq!((r.id, r.item.title.as_str()), (Some(7), "open one"));
        assert!(r.item.due_at.is_some());
        assert!(matches!(
            rows.next_row(),
            Ok(Some(Parsed::Finished { line: 3 }))
        ));
        assert!(matches!(rows.next_row(), Ok(None)));
    }

    #[test]
    fn batches_aim_at_the_time_target_in_whole_check_intervals() {
        let mut b = BatchSizer::default();
        let start = b.next_len();
        // Fast rows: grow, but at most twofold per batch.
        b.record(start, std::time::Duration::from_millis(4));
        assert_eq!(b.next_len(), start * 2);
        // Slower rows (0.1 ms each): shrink at once to what fits the target.
        b.record(1000, std::time::Duration::from_millis(100));
        assert_eq!(b.next_len(), 250);
        b.record(1000, std::time::Duration::from_millis(130));
        assert_eq!(b.next_len() % MIN_BATCH, 0);
        // Never below the floor, however slow.
        b.record(250, std::time::Duration::from_secs(10));
        assert_eq!(b.next_len(), MIN_BATCH);
    }

    #[test]
    fn hashed_fields_cannot_run_into_each_other() {
        let hash = |fields: &[&str]| {
            let mut h = Fnv128::default();
            for f in fields {
                h.field(f.as_bytes());
            }
            h.value()
        };
        assert_ne!(hash(&["a\x1fb", ""]), hash(&["a", "b\x1f"]));
        assert_ne!(hash(&["ab", ""]), hash(&["a", "b"]));
        let id = |data: &[u8], q: &str| {
            let mut f = FileIdentity::new(Format::Csv, q);
            f.bytes(data);
            f.finish()
        };
        assert_eq!(id(b"title\nx\n", "q"), id(b"title\nx\n", "q"));
        assert_ne!(id(b"title\nx\n", "q"), id(b"title\nx\n", "other"));
        assert_ne!(id(b"title\nx\n", "q"), id(b"title\nx\n\n", "q"));
        assert_eq!(derived_key("ab", 7), "import:ab:0000000007");
    }
}
