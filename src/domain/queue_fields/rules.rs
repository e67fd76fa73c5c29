//! A value against its field's rules: its type, then its pattern and bounds; and why a
//! value (or a record, at Complete) is refused, worded once: the CLI prefixes the field's
//! name (`vat: "DE12" does not match ^[A-Z]{2}…$`), the TUI shows it beside the label.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use super::checklist::Checklist;
use super::types::{decimal_value, integer, naive_date};
use super::{FieldDef, FieldType};

/// Why a field's value is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// Empty, and the field is required.
    Required,
    /// Not a value of the field's type: what was there, and what the type expects.
    NotType {
        value: String,
        expected: &'static str,
    },
    /// The canonical value does not match the field's pattern.
    Pattern { value: String, pattern: String },
    /// Below the field's least: a number's value, a text's length, a date.
    Below {
        value: String,
        min: String,
        kind: FieldType,
    },
    /// Above the field's most.
    Above {
        value: String,
        max: String,
        kind: FieldType,
    },
    /// A checklist's lines neither ticked nor given a reason.
    Unticked { lines: Vec<String> },
    /// A stored value of the wrong shape (a list where text belongs, or the reverse).
    Shape { expected: &'static str },
}

/// At most 60 characters of a value, for messages.
fn shown(v: &str) -> String {
    let mut s: String = v.chars().take(60).collect();
    if v.chars().count() > 60 {
        s.push('…');
    }
    s
}

impl Problem {
    /// The rule broken, without the value (the form shows the value beside it):
    /// `does not match ^[A-Z]{2}…$`, `is not an e-mail address`, `is required`.
    pub fn rule(&self) -> String {
        match self {
            Problem::Required => "is required".into(),
            Problem::NotType { expected, .. } => format!("is not {expected}"),
            Problem::Pattern { pattern, .. } => format!("does not match {pattern}"),
            Problem::Below { min, kind, .. } => match kind {
                FieldType::Integer | FieldType::Decimal => format!("is less than {min}"),
                FieldType::Date => format!("is before {min}"),
                _ => format!("is shorter than {min} characters"),
            },
            Problem::Above { max, kind, .. } => match kind {
                FieldType::Integer | FieldType::Decimal => format!("is more than {max}"),
                FieldType::Date => format!("is after {max}"),
                _ => format!("is longer than {max} characters"),
            },
            Problem::Unticked { lines } => {
                let list: Vec<String> = lines.iter().map(|l| shown(l)).collect();
                format!("not ticked and no reason given: {}", list.join(", "))
            }
            Problem::Shape { expected } => format!("holds a value that is not {expected}"),
        }
    }

    /// The value the problem is about, when it has one.
    fn value(&self) -> Option<&str> {
        match self {
            Problem::NotType { value, .. }
            | Problem::Pattern { value, .. }
            | Problem::Below { value, .. }
            | Problem::Above { value, .. } => Some(value),
            _ => None,
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.value() {
            Some(v) => write!(f, "\"{}\" {}", shown(v), self.rule()),
            None => write!(f, "{}", self.rule()),
        }
    }
}

/// A field's value refused: which field (its name) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldProblem {
    pub field: String,
    pub problem: Problem,
}

impl std::fmt::Display for FieldProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

/// A stored value as text: a string as it is, a number, `yes`/`no`, empty for none, a
/// list or object as JSON.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(true) => "yes".into(),
        Value::Bool(false) => "no".into(),
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

/// A compiled pattern (compiled once per process and pattern: a Complete checks every
/// field of a record, and the form checks as the user types).
pub(super) fn pattern(p: &str) -> Result<Arc<regex::Regex>, String> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<regex::Regex>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(r) = cache.lock().ok().and_then(|c| c.get(p).cloned()) {
        return Ok(r);
    }
    let r = regex::RegexBuilder::new(p)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| match e {
            regex::Error::Syntax(s) => s.lines().last().unwrap_or("bad syntax").to_string(),
            other => other.to_string(),
        })?;
    let r = Arc::new(r);
    if let Ok(mut c) = cache.lock() {
        if c.len() >= 512 {
            c.clear();
        }
        c.insert(p.to_string(), Arc::clone(&r));
    }
    Ok(r)
}

/// A bound of a field of type `kind` as a number to compare with: a number's value, a
/// date's day, a length.
pub(super) fn bound(kind: FieldType, b: &str) -> Result<f64, String> {
    let b = b.trim();
    match kind {
        FieldType::Integer => integer(b)
            .map(|n| n as f64)
            .ok_or_else(|| format!("'{b}' is not a whole number")),
        FieldType::Decimal => decimal_value(b).ok_or_else(|| format!("'{b}' is not a number")),
        FieldType::Date => day(b).ok_or_else(|| format!("'{b}' is not a date (YYYY-MM-DD)")),
        _ => b
            .parse::<u32>()
            .map(f64::from)
            .map_err(|_| format!("'{b}' is not a length in characters")),
    }
}

/// A date's day number.
fn day(t: &str) -> Option<f64> {
    let d = naive_date(t)?;
    Some(f64::from(chrono::Datelike::num_days_from_ce(&d)))
}

/// What a value of type `kind` measures against its bounds.
fn measure(kind: FieldType, v: &Value) -> Option<f64> {
    let t = value_text(v);
    match kind {
        FieldType::Integer | FieldType::Decimal => decimal_value(&t),
        FieldType::Date => day(&t),
        _ => Some(t.chars().count() as f64),
    }
}

/// A field's rules made ready to check many values: its pattern compiled and its bounds
/// read once (an import checks every row against the same fields, a Complete every field
/// of the record). A pattern or bound that cannot be read (a definition written by
/// another version) is no rule, as before.
#[derive(Debug, Clone)]
pub struct FieldRules<'a> {
    pub def: Cow<'a, FieldDef>,
    pattern: Option<Arc<regex::Regex>>,
    min: Option<f64>,
    max: Option<f64>,
}

impl FieldRules<'_> {
    /// `def`'s rules, ready.
    pub fn of(def: &FieldDef) -> FieldRules<'_> {
        FieldRules::ready(Cow::Borrowed(def))
    }

    /// `def`'s rules, ready, holding the definition.
    pub fn owned(def: FieldDef) -> FieldRules<'static> {
        FieldRules::ready(Cow::Owned(def))
    }

    fn ready(def: Cow<'_, FieldDef>) -> FieldRules<'_> {
        let read = |b: &Option<String>| b.as_ref().and_then(|b| bound(def.kind, b).ok());
        FieldRules {
            pattern: def.pattern.as_ref().and_then(|p| pattern(p).ok()),
            min: read(&def.min),
            max: read(&def.max),
            def,
        }
    }

    /// A canonical value against the field's pattern and bounds.
    fn rules(&self, v: &Value) -> Result<(), Problem> {
        let def = &self.def;
        let text = value_text(v);
        if let (Some(p), Some(re)) = (&def.pattern, &self.pattern)
            && !re.is_match(&text)
        {
            return Err(Problem::Pattern {
                value: text,
                pattern: p.clone(),
            });
        }
        if self.min.is_none() && self.max.is_none() {
            return Ok(());
        }
        let Some(m) = measure(def.kind, v) else {
            return Ok(());
        };
        if let (Some(min), Some(b)) = (&def.min, self.min)
            && m < b
        {
            return Err(Problem::Below {
                value: text,
                min: min.clone(),
                kind: def.kind,
            });
        }
        if let (Some(max), Some(b)) = (&def.max, self.max)
            && m > b
        {
            return Err(Problem::Above {
                value: text,
                max: max.clone(),
                kind: def.kind,
            });
        }
        Ok(())
    }

    /// What someone typed, checked against the field's type and rules: its canonical
    /// value (`Null` for an empty value: the field is cleared), or why it is refused.
    pub fn check_typed(&self, typed: &str) -> Result<Value, Problem> {
        let def = &self.def;
        if typed.trim().is_empty() {
            return match def.required {
                true => Err(Problem::Required),
                false => Ok(Value::Null),
            };
        }
        let v = def
            .kind
            .canonical(typed, def)
            .map_err(|expected| Problem::NotType {
                value: typed.trim().to_string(),
                expected,
            })?;
        self.rules(&v)?;
        Ok(v)
    }

    /// A stored value (none when `params` has no such key) against the field's type and
    /// rules, as Complete checks it.
    pub fn check_stored(&self, stored: Option<&Value>) -> Result<(), Problem> {
        let def = &self.def;
        if def.kind == FieldType::Checklist {
            let list = Checklist::of(def, stored).ok_or(Problem::Shape {
                expected: "a list of lines",
            })?;
            return list.check(def.required);
        }
        match stored {
            None | Some(Value::Null) => self.check_typed("").map(|_| ()),
            Some(Value::Array(_) | Value::Object(_)) => Err(Problem::Shape {
                expected: "a single value",
            }),
            Some(v) => self.check_typed(&value_text(v)).map(|_| ()),
        }
    }
}

/// What someone typed for a field, checked against its type and rules: its canonical
/// value (`Null` for an empty value: the field is cleared), or why it is refused. (Many
/// values of one field: [`FieldRules`].)
pub fn check_typed(def: &FieldDef, typed: &str) -> Result<Value, Problem> {
    FieldRules::of(def).check_typed(typed)
}

/// A stored value (none when `params` has no such key) against its field's type and
/// rules, as Complete checks it.
pub fn check_stored(def: &FieldDef, stored: Option<&Value>) -> Result<(), Problem> {
    FieldRules::of(def).check_stored(stored)
}

/// Every field of a record that breaks its rules, in the fields' order: what Complete
/// refuses (`params` is the item's params as JSON).
pub fn problems(defs: &[FieldDef], params: &Value) -> Vec<FieldProblem> {
    defs.iter()
        .filter_map(|d| {
            FieldRules::of(d)
                .check_stored(params.get(&d.name))
                .err()
                .map(|problem| FieldProblem {
                    field: d.name.clone(),
                    problem,
                })
        })
        .collect()
}

/// A stored value in its type's canonical form, as text: `None` when it is empty or not
/// a value of the type (what duplicate keys compare: `+49 30 123456` and `030 123456`
/// of a German phone field are one number).
pub fn canonical_text(def: &FieldDef, stored: Option<&Value>) -> Option<String> {
    let t = value_text(stored?);
    if t.trim().is_empty() || def.kind == FieldType::Checklist {
        return None;
    }
    def.kind.canonical(&t, def).ok().map(|v| value_text(&v))
}

/// A `field_changed` event's detail in words: `vat: HU118166O02 → HU11816602`, with
/// `(typed …)` when the value was normalised, and a checklist's line in brackets
/// (`skus [NB-A5-DOT]: todo → done`). History, `show` and the review diff read it so.
pub fn change_text(detail: &Value) -> String {
    let text = |k: &str| match detail.get(k) {
        Some(v) if !v.is_null() && !value_text(v).is_empty() => value_text(v),
        _ => "(empty)".to_string(),
    };
    let field = detail.get("field").and_then(Value::as_str).unwrap_or("?");
    let line = match detail.get("line").and_then(Value::as_str) {
        Some(l) => format!(" [{l}]"),
        None => String::new(),
    };
    let typed = match detail.get("typed").and_then(Value::as_str) {
        Some(t) => format!(" (typed {t})"),
        None => String::new(),
    };
    format!("{field}{line}: {} → {}{typed}", text("from"), text("to"))
}
