//! Each type's canonical form: what a person typed, read as the type and written the one
//! way it is stored (and compared: issue 27's duplicate keys reuse it). `Err` names what
//! the type expects ("a whole number").

use std::str::FromStr;

use serde_json::{Value, json};

use super::{FieldDef, FieldType};

impl FieldType {
    /// `typed` (not empty) in this type's canonical form, as stored in `params`; `Err`
    /// says what the type expects. `def` gives what the type needs of the field (a
    /// choice's choices, a phone's country).
    pub fn canonical(self, typed: &str, def: &FieldDef) -> Result<Value, &'static str> {
        let t = typed.trim();
        match self {
            FieldType::Text => Ok(json!(t)),
            FieldType::Integer => integer(t).map(|n| json!(n)).ok_or("a whole number"),
            FieldType::Decimal => decimal(t)
                .map(Value::String)
                .ok_or("a decimal number (e.g. 12.50)"),
            FieldType::Date => date(t).map(Value::String).ok_or("a date (YYYY-MM-DD)"),
            FieldType::Email => email(t).map(Value::String).ok_or("an e-mail address"),
            FieldType::Phone => phone(t, def.country.as_deref()).map(Value::String).ok_or(
                if def.country.is_some() || t.starts_with('+') {
                    "a phone number"
                } else {
                    "a phone number with its country code (+49 …)"
                },
            ),
            FieldType::Choice => choice(t, &def.choices)
                .map(Value::String)
                .ok_or("one of the choices"),
            FieldType::Bool => yes_no(t).map(Value::Bool).ok_or("yes or no"),
            FieldType::Iban => iban(t)
                .map(Value::String)
                .ok_or("an IBAN (its country format or checksum is wrong)"),
            FieldType::Url => url(t)
                .map(Value::String)
                .ok_or("a web address (http:// or https://)"),
            FieldType::Checklist => Err("a list of lines (tick them with `caseload tick`)"),
        }
    }
}

/// A whole number: digits with an optional sign.
pub(super) fn integer(t: &str) -> Option<i64> {
    t.strip_prefix('+').unwrap_or(t).parse().ok()
}

/// A decimal number as written, with `.` for a `,`: `-12.50`.
pub(super) fn decimal(t: &str) -> Option<String> {
    let t = t.strip_prefix('+').unwrap_or(t).replace(',', ".");
    let digits = t.strip_prefix('-').unwrap_or(&t);
    let (int, frac) = match digits.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (digits, None),
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let ok = all_digits(int) && frac.is_none_or(all_digits);
    ok.then_some(t)
}

/// A decimal's value, for bounds.
pub(super) fn decimal_value(t: &str) -> Option<f64> {
    decimal(t)?.parse().ok()
}

/// A date, `YYYY-MM-DD`.
pub(super) fn date(t: &str) -> Option<String> {
    match canonical_date(t) {
        Some(d) => d.map(|_| t.to_string()),
        None => naive_date(t).map(|d| d.format("%Y-%m-%d").to_string()),
    }
}

/// A date's day (for bounds).
pub(super) fn naive_date(t: &str) -> Option<chrono::NaiveDate> {
    match canonical_date(t) {
        Some(d) => d,
        None => chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d").ok(),
    }
}

/// A date written exactly as its canonical form (`2026-01-31`), read without chrono's
/// format parser (an import reads one per row and field): `Some(None)` when it is no day
/// of the calendar; `None` when it is written otherwise (chrono reads it then).
fn canonical_date(t: &str) -> Option<Option<chrono::NaiveDate>> {
    let b = t.as_bytes();
    let digits = |r: std::ops::Range<usize>| {
        b[r].iter().try_fold(0u32, |n, c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    Some(chrono::NaiveDate::from_ymd_opt(
        i32::try_from(y).ok()?,
        m,
        d,
    ))
}

/// An e-mail address with its domain in lower case.
fn email(t: &str) -> Option<String> {
    let a = email_address::EmailAddress::from_str(t).ok()?;
    if a.display_part() != "" || !t.contains('@') || t.contains('<') {
        return None;
    }
    Some(format!("{}@{}", a.local_part(), a.domain().to_lowercase()))
}

/// A country phonenumber knows, by its ISO 3166 code.
pub(super) fn country(code: &str) -> Result<phonenumber::country::Id, String> {
    phonenumber::country::Id::from_str(&code.to_ascii_uppercase())
        .map_err(|_| format!("--country: '{code}' is not a country code (e.g. DE, GB, US)"))
}

/// A valid phone number in E.164; one without `+` reads in `country`.
fn phone(t: &str, country: Option<&str>) -> Option<String> {
    let region = match country {
        Some(c) => Some(self::country(c).ok()?),
        None if t.starts_with('+') || t.starts_with("00") => None,
        None => return None,
    };
    let t = match t.strip_prefix("00") {
        Some(rest) if region.is_none() => format!("+{rest}"),
        _ => t.to_string(),
    };
    let n = phonenumber::parse(region, &t).ok()?;
    super::phone::valid(&n).then(|| super::phone::e164(&n))
}

/// One of `choices`, ignoring case; the choice as the definition spells it.
fn choice(t: &str, choices: &[String]) -> Option<String> {
    choices
        .iter()
        .find(|c| c.eq_ignore_ascii_case(t) || c.to_lowercase() == t.to_lowercase())
        .cloned()
}

/// Yes or no, in the words people use.
pub(super) fn yes_no(t: &str) -> Option<bool> {
    match t.to_lowercase().as_str() {
        "yes" | "y" | "true" | "1" | "on" | "ja" | "oui" | "si" => Some(true),
        "no" | "n" | "false" | "0" | "off" | "nein" | "non" => Some(false),
        _ => None,
    }
}

/// An IBAN without spaces, in upper case, its checksum and country format checked.
fn iban(t: &str) -> Option<String> {
    let compact: String = t
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .collect::<String>()
        .to_uppercase();
    let i = iban::Iban::from_str(&compact).ok()?;
    use iban::IbanLike;
    Some(i.electronic_str().to_string())
}

/// An http or https address with a host, as the URL standard writes it.
fn url(t: &str) -> Option<String> {
    let u = url::Url::parse(t).ok()?;
    let web = matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty());
    web.then(|| u.to_string())
}
