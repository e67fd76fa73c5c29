//! Typed fields per queue (verification work): a queue's supervisors define fields
//! ([`FieldDef`]: a name, a [`FieldType`] and rules), and each item's value of a field
//! lives in its `params` under the field's name, so imports, `--params`, producers and
//! search keep working. The holder corrects values under the lock (`caseload set`), each
//! change checked here and brought to its type's canonical form; Complete checks every
//! field of the record ([`problems`]).
//!
//! - [`FieldType`]: the types, each with its canonical form ([`FieldType::canonical`],
//!   `types.rs`): trimmed text, E.164 phone numbers, compact upper-case IBANs …
//! - `rules.rs`: a value against its field's rules ([`check_typed`], [`check_stored`]),
//!   and why one is refused ([`Problem`], [`FieldProblem`]).
//! - `checklist.rs`: a checklist's lines and their ticks ([`Checklist`], [`LineState`]).
//! - [`FieldChange`]: a supervisor's `caseload field set`, applied to a definition.
//!
//! The type checks use crates where one does the job (`email_address` for RFC 5322,
//! `phonenumber` for libphonenumber's metadata, `iban_validate` for checksums and country
//! formats, `url`, `regex` for patterns); integers, decimals, dates (chrono), choices,
//! yes/no and checklists are a few lines each and need none.

mod checklist;
mod phone;
mod rules;
pub(crate) mod splice;
mod types;

use serde::Serialize;
use serde_json::{Map, Value, json};

pub use super::duplicates::Dedupe;
pub use checklist::{Checklist, Line, LineState};
pub use rules::{
    FieldProblem, FieldRules, Problem, canonical_text, change_text, check_stored, check_typed,
    problems, value_text,
};

/// Longest field name, in characters.
pub(crate) const MAX_NAME: usize = 40;

/// A field's type: what its values may be, and their canonical form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    /// Any text (trimmed).
    Text,
    /// A whole number (stored as a JSON number).
    Integer,
    /// A decimal number, kept as written (`12.50`; a comma reads as the point).
    Decimal,
    /// A calendar date, `YYYY-MM-DD`.
    Date,
    /// An e-mail address (RFC 5322; the domain lower-cased).
    Email,
    /// A phone number, stored in E.164 (`+4930123456`); a number without `+` needs the
    /// field's country.
    Phone,
    /// One of the field's choices (as the definition spells it).
    Choice,
    /// Yes or no (stored as a JSON boolean).
    Bool,
    /// An IBAN: checksum and country format checked, stored without spaces, upper case.
    Iban,
    /// A web address (`http://` or `https://`).
    Url,
    /// Lines to tick (each tick a fenced write with its event); Complete needs every line
    /// ticked or a reason for each one that is not.
    Checklist,
}

impl FieldType {
    /// Every type, in the order help lists them.
    pub const ALL: [FieldType; 11] = [
        FieldType::Text,
        FieldType::Integer,
        FieldType::Decimal,
        FieldType::Date,
        FieldType::Email,
        FieldType::Phone,
        FieldType::Choice,
        FieldType::Bool,
        FieldType::Iban,
        FieldType::Url,
        FieldType::Checklist,
    ];

    /// The type's name as typed and stored.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldType::Text => "text",
            FieldType::Integer => "integer",
            FieldType::Decimal => "decimal",
            FieldType::Date => "date",
            FieldType::Email => "email",
            FieldType::Phone => "phone",
            FieldType::Choice => "choice",
            FieldType::Bool => "bool",
            FieldType::Iban => "iban",
            FieldType::Url => "url",
            FieldType::Checklist => "checklist",
        }
    }

    /// Parses a type's name.
    pub fn parse(s: &str) -> Option<FieldType> {
        FieldType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// The names of every type, for messages and help: "text, integer, …".
    pub fn names() -> String {
        let names: Vec<&str> = FieldType::ALL.iter().map(|t| t.as_str()).collect();
        names.join(", ")
    }

    /// True when `--min`/`--max` bound it: numbers by value, dates by date, text-like
    /// types by length in characters.
    fn bounded(self) -> bool {
        !matches!(
            self,
            FieldType::Choice | FieldType::Bool | FieldType::Checklist
        )
    }
}

/// One field of a queue, as its supervisors defined it. The order of a queue's fields
/// (the order on screen) is the order they are read in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldDef {
    /// The key in `params`, the CSV column, the search qualifier (`vat:DE12`).
    pub name: String,
    #[serde(rename = "type")]
    pub kind: FieldType,
    /// An empty value refuses Complete.
    pub required: bool,
    /// A regular expression the canonical value must match (anchor it with `^…$`).
    pub pattern: Option<String>,
    /// Least and most: a number's value, a date, or a text's length in characters.
    pub min: Option<String>,
    pub max: Option<String>,
    /// A choice's choices; a checklist's fixed lines (used when an item brings none).
    pub choices: Vec<String>,
    /// What the TUI calls it (default: the name).
    pub label: Option<String>,
    /// A line of help shown beside it in the form.
    pub help: Option<String>,
    /// A phone field's country (ISO 3166 code, e.g. `DE`), for numbers without `+`.
    pub country: Option<String>,
    /// Its part in finding duplicates (`--dedupe-key`, `--dedupe-text`), if any.
    pub dedupe: Option<Dedupe>,
}

impl FieldDef {
    /// A field of a type with no rules.
    pub fn new(name: &str, kind: FieldType) -> FieldDef {
        FieldDef {
            name: name.to_string(),
            kind,
            required: false,
            pattern: None,
            min: None,
            max: None,
            choices: Vec::new(),
            label: None,
            help: None,
            country: None,
            dedupe: None,
        }
    }

    /// What the form calls it: its label, else its name.
    pub fn label(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.name)
    }

    /// The definition as stored (everything but the name), and as the audit shows it.
    pub fn spec_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), json!(self.kind.as_str()));
        if self.required {
            m.insert("required".into(), json!(true));
        }
        let opt = [
            ("pattern", &self.pattern),
            ("min", &self.min),
            ("max", &self.max),
            ("label", &self.label),
            ("help", &self.help),
            ("country", &self.country),
        ];
        for (k, v) in opt {
            if let Some(v) = v {
                m.insert(k.into(), json!(v));
            }
        }
        if !self.choices.is_empty() {
            m.insert("choices".into(), json!(self.choices));
        }
        if let Some(d) = self.dedupe {
            m.insert("dedupe".into(), json!(d.as_str()));
        }
        Value::Object(m)
    }

    /// A stored definition (its `spec` and name); an error says what cannot be read.
    pub fn from_spec(name: &str, spec: &Value) -> Result<FieldDef, String> {
        let text = |k: &str| spec.get(k).and_then(Value::as_str).map(str::to_owned);
        let kind = text("type")
            .as_deref()
            .and_then(FieldType::parse)
            .ok_or_else(|| format!("field {name} has no type caseload knows"))?;
        let choices = match spec.get("choices") {
            Some(Value::Array(a)) => a
                .iter()
                .map(|c| c.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| format!("field {name} has choices that are not text"))?,
            _ => Vec::new(),
        };
        Ok(FieldDef {
            name: name.to_string(),
            kind,
            required: spec.get("required").and_then(Value::as_bool) == Some(true),
            pattern: text("pattern"),
            min: text("min"),
            max: text("max"),
            choices,
            label: text("label"),
            help: text("help"),
            country: text("country"),
            dedupe: text("dedupe").as_deref().and_then(Dedupe::parse),
        })
    }

    /// Checks the definition itself: rules its type can have, a pattern that compiles,
    /// bounds of its type, choices a choice needs, a country phonenumber knows.
    pub fn validate(&self) -> Result<(), String> {
        validate_name(&self.name)?;
        let t = self.kind.as_str();
        if (self.min.is_some() || self.max.is_some()) && !self.kind.bounded() {
            return Err(format!("a {t} field takes no --min or --max"));
        }
        if self.pattern.is_some() && matches!(self.kind, FieldType::Bool | FieldType::Checklist) {
            return Err(format!("a {t} field takes no --pattern"));
        }
        if let Some(p) = &self.pattern {
            rules::pattern(p).map_err(|e| format!("--pattern: {e}"))?;
        }
        for (flag, b) in [("--min", &self.min), ("--max", &self.max)] {
            if let Some(b) = b {
                rules::bound(self.kind, b).map_err(|e| format!("{flag}: {e}"))?;
            }
        }
        if let (Some(lo), Some(hi)) = (&self.min, &self.max)
            && rules::bound(self.kind, lo)? > rules::bound(self.kind, hi)?
        {
            return Err(format!("--min {lo} is above --max {hi}"));
        }
        match self.kind {
            FieldType::Choice if self.choices.is_empty() => {
                return Err("a choice field needs --choices a,b,c".into());
            }
            FieldType::Choice | FieldType::Checklist => {}
            _ if !self.choices.is_empty() => {
                return Err(format!(
                    "a {t} field takes no --choices (choice and checklist fields do)"
                ));
            }
            _ => {}
        }
        for c in &self.choices {
            check_label_text("--choices", c)?;
        }
        match (&self.country, self.kind) {
            (Some(c), FieldType::Phone) => {
                types::country(c)?;
            }
            (Some(_), _) => return Err(format!("a {t} field takes no --country")),
            _ => {}
        }
        if let Some(d) = self.dedupe {
            d.check(self.kind)?;
        }
        for (flag, v) in [("--label", &self.label), ("--help", &self.help)] {
            if let Some(v) = v {
                check_label_text(flag, v)?;
            }
        }
        Ok(())
    }
}

/// A definition's text (a label, help, a choice): one line of at most 200 characters.
fn check_label_text(flag: &str, v: &str) -> Result<(), String> {
    if v.trim().is_empty() {
        return Err(format!("{flag}: empty"));
    }
    if v.chars().count() > 200 {
        return Err(format!("{flag}: longer than 200 characters"));
    }
    if v.chars().any(char::is_control) {
        return Err(format!("{flag}: contains a control character"));
    }
    Ok(())
}

/// Names a field may not have: the item's own columns, the keys `import` reads, the
/// search's qualifiers.
fn reserved(name: &str) -> bool {
    super::fields::named(name).is_some()
        || super::fields::FIELDS.iter().any(|f| f.key() == name)
        || [
            "queue",
            "holder",
            "state",
            "id",
            "due",
            "created_os",
            "source",
        ]
        .contains(&name)
}

/// A field's name: a lower-case letter, then lower-case letters, digits and `_`, at most
/// [`MAX_NAME`] characters; not a column of the item or a search qualifier.
pub fn validate_name(name: &str) -> Result<(), String> {
    let ok = name.len() <= MAX_NAME
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ok {
        return Err(format!(
            "field name '{}': use a lower-case letter, then lower-case letters, digits or _ \
             (at most {MAX_NAME})",
            crate::domain::sanitize::line(name)
        ));
    }
    if reserved(name) {
        return Err(format!(
            "field name '{name}' is taken by the item's own column or a search word; choose \
             another"
        ));
    }
    Ok(())
}

/// A change to a field's definition (`caseload field set`, the TUI's field dialog):
/// `None` leaves a rule as it is; `Some(None)` removes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldChange {
    pub kind: Option<FieldType>,
    pub required: Option<bool>,
    pub pattern: Option<Option<String>>,
    pub min: Option<Option<String>>,
    pub max: Option<Option<String>>,
    pub choices: Option<Vec<String>>,
    pub label: Option<Option<String>>,
    pub help: Option<Option<String>>,
    pub country: Option<Option<String>>,
    /// Its part in finding duplicates; `Some(None)`: none.
    pub dedupe: Option<Option<Dedupe>>,
    /// Move it after this field (`""`: first); a new field goes last without it.
    pub after: Option<String>,
}

impl FieldChange {
    /// The definition `current` (none: a new field) becomes, checked.
    pub fn apply(&self, name: &str, current: Option<&FieldDef>) -> Result<FieldDef, String> {
        let mut d = match (current, self.kind) {
            (Some(c), _) => c.clone(),
            (None, Some(k)) => FieldDef::new(name, k),
            (None, None) => {
                return Err(format!(
                    "field {name} is new: give its --type ({})",
                    FieldType::names()
                ));
            }
        };
        if let Some(k) = self.kind {
            d.kind = k;
        }
        if let Some(r) = self.required {
            d.required = r;
        }
        let set = |slot: &mut Option<String>, v: &Option<Option<String>>| {
            if let Some(v) = v {
                *slot = v.clone().filter(|s| !s.is_empty());
            }
        };
        set(&mut d.pattern, &self.pattern);
        set(&mut d.min, &self.min);
        set(&mut d.max, &self.max);
        set(&mut d.label, &self.label);
        set(&mut d.help, &self.help);
        set(&mut d.country, &self.country);
        if let Some(c) = &self.choices {
            d.choices = c.clone();
        }
        if let Some(dd) = self.dedupe {
            d.dedupe = dd;
        }
        if let Some(c) = &d.country {
            d.country = Some(c.to_ascii_uppercase());
        }
        d.validate()?;
        Ok(d)
    }

    /// True when it changes nothing but (perhaps) the position.
    pub fn only_moves(&self) -> bool {
        FieldChange {
            after: None,
            ..self.clone()
        } == FieldChange::default()
    }
}

/// The order of a queue's fields once `name` is defined or moved: `current` is their
/// order now; `after` puts it after that field (`""`: first); without it a new field goes
/// last and an existing one stays where it is.
pub fn reorder(current: &[String], name: &str, after: Option<&str>) -> Result<Vec<String>, String> {
    let mut order: Vec<String> = current.to_vec();
    let at = order.iter().position(|n| n == name);
    match (after, at) {
        (None, Some(_)) => return Ok(order),
        (None, None) => {
            order.push(name.to_string());
            return Ok(order);
        }
        _ => {}
    }
    order.retain(|n| n != name);
    let i = match after {
        Some("") | None => 0,
        Some(a) if a == name => return Err(format!("--after {a}: a field cannot follow itself")),
        Some(a) => match order.iter().position(|n| n == a) {
            Some(i) => i + 1,
            None => {
                return Err(format!(
                    "--after {a}: the queue has no such field (it has: {})",
                    if order.is_empty() {
                        "none".into()
                    } else {
                        order.join(", ")
                    }
                ));
            }
        },
    };
    order.insert(i, name.to_string());
    Ok(order)
}

/// `a, b ,c` as the list `[a, b, c]` (empty parts left out).
pub fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests;
