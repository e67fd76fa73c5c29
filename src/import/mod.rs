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
    let checked = match &v {
        J::String(s) => rules.check_typed(s),
        other => rules.check_typed(&value_text(other)),
    };
    match checked {
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
    if item.params.trim() == "{}" {
        return merge_into_empty(item, given, fields, broken);
    }
    let mut params = match serde_json::from_str::<serde_json::Value>(&item.params) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => return Err(NOT_AN_OBJECT.into()),
    };
    let mut known: Vec<Option<bool>> = vec![None; fields.rules.len()];
    for (i, v) in given {
        let rules = &fields.rules[i];
        let Some((v, keeps)) = stored(rules, v) else {
            continue;
        };
        if params.contains_key(&rules.def.name) {
            return Err(given_twice(&rules.def.name));
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
    // Written as `Value`'s `Display` writes it, without its formatter's detour.
    item.params = serde_json::to_string(&params).map_err(|e| e.to_string())?;
    Ok(())
}

/// [`merge_fields`] into a row without params of its own (an import's usual row): the
/// params written straight from the stored values, in the order (and the very text) of
/// the map `merge_fields` would write, without building the map.
fn merge_into_empty(
    item: &mut NewItem,
    given: Vec<(usize, serde_json::Value)>,
    fields: &ImportFields,
    broken: Option<&mut Vec<usize>>,
) -> Result<(), String> {
    let mut known: Vec<Option<bool>> = vec![None; fields.rules.len()];
    let mut pairs: Vec<(usize, serde_json::Value)> = Vec::with_capacity(given.len());
    for (i, v) in given {
        if let Some((v, keeps)) = stored(&fields.rules[i], v) {
            known[i] = keeps;
            pairs.push((i, v));
        }
    }
    // A map's order: its keys' (a field's name is given once: a CSV column and a JSON key
    // are each given once, and field names differ).
    let name = |i: usize| fields.rules[i].def.name.as_str();
    pairs.sort_by(|a, b| name(a.0).cmp(name(b.0)));
    if let Some(broken) = broken {
        for (i, rules) in fields.rules.iter().enumerate() {
            let keeps = known[i].unwrap_or_else(|| {
                let v = pairs.iter().find(|(j, _)| *j == i).map(|(_, v)| v);
                rules.check_stored(v).is_ok()
            });
            if !keeps {
                broken.push(i);
            }
        }
    }
    let mut out = Vec::with_capacity(2 + pairs.len() * 32);
    out.push(b'{');
    for (k, (i, v)) in pairs.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, name(*i)).map_err(|e| e.to_string())?;
        out.push(b':');
        serde_json::to_writer(&mut out, v).map_err(|e| e.to_string())?;
    }
    out.push(b'}');
    item.params = String::from_utf8(out).map_err(|e| e.to_string())?;
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
    /// that an import leaves out. The item is validated when `validate`; `fields` are the
    /// import's fields. With `merge` the row's field values are checked and joined to its
    /// params here ([`Row::merge`]); without, the row keeps them as the file gave them
    /// (`Row::given`) and, when `validate`, is only proven to be mergeable (see
    /// [`fits_unmerged`]): an import checks each value once, in its second pass.
    fn into_parsed(
        mut self,
        line: u64,
        default_queue: &str,
        (validate, merge): (bool, bool),
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
        if !given.is_empty() && item.queue != default_queue {
            return Err(other_queue(
                &item.queue,
                default_queue,
                &given,
                &fields.defs,
            ));
        }
        let mut row = Row {
            line,
            item,
            id,
            given,
            broken: Vec::new(),
        };
        if merge {
            row.merge(fields)?;
        } else if validate {
            fits_unmerged(&row.item, &row.given, fields)?;
        }
        if validate {
            row.item.validate().map_err(|e| in_file(&e))?;
        }
        Ok(Parsed::Item(Box::new(row)))
    }
}

impl Row {
    /// Checks the row's field values (`given`, as the file gave them) and joins them to its
    /// params, each in its canonical form (or as given when it breaks its rules: fixing it
    /// is the work), and finds the fields whose value breaks their rules (`broken`), as
    /// Complete would find them. Each value is checked once.
    pub fn merge(&mut self, fields: &ImportFields) -> Result<(), String> {
        let given = std::mem::take(&mut self.given);
        if !given.is_empty() {
            return merge_fields(&mut self.item, given, fields, Some(&mut self.broken));
        }
        if !fields.rules.is_empty() {
            // Params given as JSON into a queue with fields: their values as stored.
            let params: serde_json::Value =
                serde_json::from_str(&self.item.params).unwrap_or(serde_json::Value::Null);
            (fields.rules.iter().enumerate())
                .filter(|(_, r)| r.check_stored(params.get(&r.def.name)).is_err())
                .for_each(|(i, _)| self.broken.push(i));
        }
        Ok(())
    }
}

/// Proves, without checking a value, that the row's field values (`given`) can join its
/// params as [`Row::merge`] joins them: the params are an object, no field is given twice
/// (as a column and in params), and the merged params stay within the size of any text
/// ([`check_text`]) — by a bound of each value's stored size ([`stored_bound`]) or, when
/// the bound is too large (a row near the limit, a checklist, a list), by merging a copy.
fn fits_unmerged(
    item: &NewItem,
    given: &[(usize, serde_json::Value)],
    fields: &ImportFields,
) -> Result<(), String> {
    if given.is_empty() {
        return Ok(());
    }
    let params = match serde_json::from_str::<serde_json::Value>(&item.params) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => return Err(NOT_AN_OBJECT.into()),
    };
    let mut bound = Some(item.params.len());
    for (i, v) in given {
        let rules = &fields.rules[*i];
        if empty_value(v) {
            continue;
        }
        if params.contains_key(&rules.def.name) {
            return Err(given_twice(&rules.def.name));
        }
        bound = bound.zip(stored_bound(rules, v)).map(|(a, b)| a + b);
    }
    if bound.is_some_and(|b| b <= crate::domain::item::MAX_FIELD_BYTES) {
        return Ok(());
    }
    let mut merged = item.clone();
    merge_fields(&mut merged, given.to_vec(), fields, None)?;
    crate::domain::item::check_text("params", &merged.params)
        .map_err(|m| in_file(&FieldError::col(Col::Params, m)))
}

/// An upper bound of the bytes value `v` of a field (`rules`) adds to a row's params
/// when [`merge_fields`] stores it: its key and its stored value as JSON (every character
/// escaped at most sixfold), a comma. `None` when there is no simple bound (a checklist,
/// a list or object). A text is stored trimmed; a URL as the URL standard writes it
/// (percent-encoding triples a byte, an international domain name's mapping and Punycode
/// grow it more: bounded by 128 bytes per byte); a choice as the definition spells it;
/// every other type's canonical form is at most three bytes per byte (an e-mail
/// domain's lower case) or a short text of its own (a number, a date, E.164, an IBAN).
fn stored_bound(rules: &FieldRules<'_>, v: &serde_json::Value) -> Option<usize> {
    let def = &rules.def;
    let len = match v {
        serde_json::Value::String(s) => s.len(),
        serde_json::Value::Number(_) | serde_json::Value::Bool(_) => value_text(v).len(),
        _ => return None,
    };
    let value = match def.kind {
        FieldType::Checklist => return None,
        FieldType::Text => len,
        FieldType::Url => 128 * len + 64,
        FieldType::Choice => len.max(def.choices.iter().map(String::len).max().unwrap_or(0)),
        _ => 3 * len + 64,
    };
    // Key and value quoted and escaped, a colon and a comma.
    Some(6 * (def.name.len() + value) + 6)
}

/// A value an import leaves out (an empty cell).
fn empty_value(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Null => true,
        serde_json::Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

const NOT_AN_OBJECT: &str = "params is not a JSON object, so field values cannot join it";

fn given_twice(name: &str) -> String {
    format!("field {name} is given twice (as its own column and in params)")
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
    /// marker), its id and its field values not yet merged. The hash lives for one import only (the second pass proves it
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
        // Field values not yet merged: how many, then each by its field and as given (a
        // string's text, any other value as JSON, each behind its marker).
        self.field(&(row.given.len() as u64).to_le_bytes());
        for (i, v) in &row.given {
            self.field(&(*i as u64).to_le_bytes());
            match v {
                serde_json::Value::String(s) => {
                    self.field(b"s");
                    self.field(s.as_bytes());
                }
                other => {
                    self.field(b"j");
                    self.field(other.to_string().as_bytes());
                }
            }
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

    /// The first pass proves a row's fields fit its params by [`stored_bound`] instead of
    /// storing them: the bound must hold for every type, values that grow when stored
    /// included (a URL's percent-encoding, its international domain name's mapping, an
    /// IPv4 host written short, an e-mail domain's lower case, escaped control characters).
    #[test]
    fn a_stored_value_is_never_longer_than_its_bound() {
        let kinds = [
            (FieldType::Text, vec!["  x  ", "\u{1}\u{2}\"\\", "ünïcödé"]),
            (FieldType::Integer, vec!["+0", "-9223372036854775808", "1"]),
            (FieldType::Decimal, vec!["+1,5", "-0.5", "7"]),
            (FieldType::Date, vec!["2024-1-5", "2024-01-05", "99999-1-1"]),
            (FieldType::Email, vec!["a@İİİİ.COM", "x@ẞ.de", "\u{1}@x.de"]),
            (
                FieldType::Phone,
                vec!["030 901820", "+1 2", "0049 30 901820"],
            ),
            (FieldType::Choice, vec!["m", "Medium-long", "x"]),
            (FieldType::Bool, vec!["y", "ja", "1"]),
            (FieldType::Iban, vec!["de89 3704 0044 0532 0130 00", "x"]),
            (
                FieldType::Url,
                vec![
                    "http://1",
                    "http://0x1/",
                    "http://\u{FDFA}\u{FDFA}.ex/",
                    "http://\u{FDFA}.\u{FDFA}.\u{FDFA}/",
                    "https://ä.example/ä ä?ä\"#ä\"",
                    "http://[::1]",
                    "http://a\u{1}b/\u{1}",
                    "http://ß.ﬃ.example/",
                ],
            ),
        ];
        for (kind, values) in kinds {
            let mut def = FieldDef::new("f", kind);
            def.country = Some("DE".into());
            def.choices = vec!["S".into(), "Medium-long".into()];
            let fields = ImportFields::new("q", vec![def], false);
            for v in values {
                let value = serde_json::Value::String(v.to_string());
                let bound = stored_bound(&fields.rules[0], &value).unwrap();
                let mut item = NewItem::titled("t");
                merge_fields(&mut item, vec![(0, value)], &fields, None).unwrap();
                let grew = item.params.len() - "{}".len();
                assert!(grew <= bound, "{kind:?} {v:?}: {} > {bound}", item.params);
            }
        }
    }

    /// A row without params of its own gets, without the map, the very params (and broken
    /// fields) the map gives a row whose params are `{"other": 1}` less that key.
    #[test]
    fn params_written_without_the_map_are_the_maps() {
        let mut defs: Vec<FieldDef> = ["vat", "a", "Zed", "é", "b_2", "list"]
            .iter()
            .map(|n| FieldDef::new(n, FieldType::Text))
            .collect();
        defs[0].pattern = Some("^[A-Z]{2}[0-9]+$".into());
        defs[1].required = true;
        defs[5].kind = FieldType::Checklist;
        let fields = ImportFields::new("q", defs, false);
        let s = |t: &str| serde_json::Value::String(t.into());
        for given in [
            vec![(0, s("DE1")), (2, s(" z ")), (3, s("\"é\"\n")), (4, s(""))],
            vec![(4, s("x")), (0, s("bad")), (1, s("a"))],
            vec![(5, s("one\ntwo")), (1, serde_json::json!(12))],
            vec![],
        ] {
            let mut fast = NewItem::titled("t");
            let mut fast_broken = Vec::new();
            merge_fields(&mut fast, given.clone(), &fields, Some(&mut fast_broken)).unwrap();
            let mut slow = NewItem::titled("t");
            slow.params = r#"{"~other":1}"#.into();
            let mut slow_broken = Vec::new();
            merge_fields(&mut slow, given, &fields, Some(&mut slow_broken)).unwrap();
            let mut map: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&slow.params).unwrap();
            map.remove("~other");
            assert_eq!(fast.params, serde_json::to_string(&map).unwrap());
            assert_eq!(fast_broken, slow_broken);
        }
    }

    /// A row's field values are checked once, in the second pass; the first proves each
    /// row can take them: a field given twice or a row whose params would outgrow the
    /// limit is refused by it as when it merged them.
    #[test]
    fn the_first_pass_refuses_what_a_merge_would() {
        let fields = |kind| ImportFields::new("q", vec![FieldDef::new("f", kind)], false);
        let first = |data: &[u8], fields: ImportFields| {
            let mut rows = Rows::new(data, Format::Csv, "q", fields)
                .unwrap()
                .unmerged();
            match rows.next_row() {
                Ok(Some(Parsed::Item(r))) => Ok(r),
                other => Err(format!("{other:?}")),
            }
        };
        let twice = first(
            b"title,params,f\nt,\"{\"\"f\"\":1}\",x\n",
            fields(FieldType::Text),
        );
        assert!(twice.unwrap_err().contains("given twice"));
        // Near the limit: the bound is too large, and the merged copy decides.
        let long = "x".repeat(crate::domain::item::MAX_FIELD_BYTES / 2);
        let data = format!("title,params,f\nt,\"{{\"\"k\"\":\"\"{long}\"\"}}\",{long}\n");
        let over = first(data.as_bytes(), fields(FieldType::Text));
        assert!(over.unwrap_err().contains("1 MiB"));
        let data = format!("title,params,f\nt,\"{{\"\"k\"\":\"\"{long}\"\"}}\",x\n");
        let mut row = first(data.as_bytes(), fields(FieldType::Url)).unwrap();
        assert_eq!(row.given.len(), 1);
        row.merge(&fields(FieldType::Url)).unwrap();
        assert_eq!(row.broken, vec![0]);
        assert!(
            row.item.params.ends_with(",\"f\":\"x\"}") || row.item.params.contains("\"f\":\"x\"")
        );
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
