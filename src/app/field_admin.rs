//! A queue's field definitions in the TUI (supervisors, from the Stats view's selected
//! queue): the list, and the dialog that defines or changes one. The writes are the
//! store's own (`define_field`, `delete_field`: checked and audited there, as `caseload
//! field set|delete` are); here the dialog's text becomes a [`FieldChange`].

use super::{Dialog, FieldSpec, Pending};
use crate::domain::queue_fields::{FieldChange, FieldDef, FieldType, split_list, validate_name};
use crate::domain::sanitize;

/// The field list open over the Stats view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldAdmin {
    pub queue: String,
    pub selected: usize,
}

/// The define dialog's fields, as its messages name them.
pub(crate) const NAME: &str = "Name";
pub(crate) const TYPE: &str = "Type";
pub(crate) const REQUIRED: &str = "Required";
pub(crate) const PATTERN: &str = "Pattern";
pub(crate) const RANGE: &str = "Range";
pub(crate) const CHOICES: &str = "Choices";
pub(crate) const LABEL: &str = "Label";
pub(crate) const HELP: &str = "Help";
pub(crate) const COUNTRY: &str = "Country";

/// One line describing a definition's rules: `email · required · "E-mail"`.
pub fn rules_text(d: &FieldDef) -> String {
    let mut parts = vec![d.kind.as_str().to_string()];
    if d.required {
        parts.push("required".into());
    }
    if let Some(p) = &d.pattern {
        parts.push(format!("pattern {p}"));
    }
    match (&d.min, &d.max) {
        (None, None) => {}
        (lo, hi) => parts.push(format!(
            "range {}..{}",
            lo.as_deref().unwrap_or(""),
            hi.as_deref().unwrap_or("")
        )),
    }
    if !d.choices.is_empty() {
        parts.push(format!("choices {}", d.choices.join(", ")));
    }
    if let Some(c) = &d.country {
        parts.push(format!("country {c}"));
    }
    if let Some(l) = &d.label {
        parts.push(format!("\"{l}\""));
    }
    parts.join(" · ")
}

/// The dialog that adds a field to `queue` (`current` none) or changes `current`.
pub(crate) fn define_dialog(queue: &str, current: Option<&FieldDef>) -> Dialog {
    let q = sanitize::line(queue).into_owned();
    let (title, name) = match current {
        Some(d) => (
            format!("Field {} of queue {q}", sanitize::line(&d.name)),
            Some(d.name.clone()),
        ),
        None => (format!("New field of queue {q}"), None),
    };
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let range = current.map_or(String::new(), |d| match (&d.min, &d.max) {
        (None, None) => String::new(),
        (lo, hi) => format!("{}..{}", text(lo), text(hi)),
    });
    let mut dialog = Dialog::new(
        title,
        "Checked and audited as `caseload field set` is.",
        Pending::DefineField {
            queue: queue.to_string(),
            name,
        },
    );
    if current.is_none() {
        dialog = dialog.field(
            FieldSpec::required(NAME, "Name (the key in params: lower case, digits, _)"),
            "",
        );
    }
    dialog
        .field(
            FieldSpec::required(TYPE, format!("Type ({})", FieldType::names())),
            current.map_or("text", |d| d.kind.as_str()),
        )
        .field(
            FieldSpec::optional(
                REQUIRED,
                "Required (yes/no: an empty value refuses Complete)",
            ),
            if current.is_some_and(|d| d.required) {
                "yes"
            } else {
                "no"
            },
        )
        .field(
            FieldSpec::optional(
                PATTERN,
                "Pattern (a regular expression, e.g. ^[A-Z]{2}[0-9]{8,12}$)",
            ),
            &current.map_or(String::new(), |d| text(&d.pattern)),
        )
        .field(
            FieldSpec::optional(
                RANGE,
                "Range MIN..MAX (a number, a date, a length; either side may be empty)",
            ),
            &range,
        )
        .field(
            FieldSpec::optional(
                CHOICES,
                "Choices a, b, c (a choice's; a checklist's fixed lines)",
            ),
            &current.map_or(String::new(), |d| d.choices.join(", ")),
        )
        .field(
            FieldSpec::optional(LABEL, "Label (what the form calls it)"),
            &current.map_or(String::new(), |d| text(&d.label)),
        )
        .field(
            FieldSpec::optional(HELP, "Help (a line shown while editing it)"),
            &current.map_or(String::new(), |d| text(&d.help)),
        )
        .field(
            FieldSpec::optional(
                COUNTRY,
                "Country (a phone field's, e.g. DE: numbers typed without + are of it)",
            ),
            &current.map_or(String::new(), |d| text(&d.country)),
        )
}

/// The define dialog as (name, change), checked against `current`; an error names the
/// dialog's field (index, message).
pub(crate) fn parse_define(
    d: &Dialog,
    current: Option<&FieldDef>,
) -> Result<(String, FieldChange), (usize, String)> {
    let at = |name: &str| d.index_of(name).unwrap_or(0);
    let name = match (&d.pending, current) {
        (_, Some(c)) => c.name.clone(),
        _ => {
            let n = d.value(at(NAME));
            validate_name(&n).map_err(|e| (at(NAME), e))?;
            n
        }
    };
    let typed = d.value(at(TYPE)).to_lowercase();
    let kind = FieldType::parse(&typed).ok_or_else(|| {
        (
            at(TYPE),
            format!(
                "{TYPE}: '{}' is not one of {}",
                sanitize::line(&typed),
                FieldType::names()
            ),
        )
    })?;
    let required = match d.value(at(REQUIRED)).to_lowercase().as_str() {
        "yes" | "y" | "true" | "on" => true,
        "no" | "n" | "false" | "off" | "" => false,
        other => {
            return Err((
                at(REQUIRED),
                format!(
                    "{REQUIRED}: '{}' is neither yes nor no",
                    sanitize::line(other)
                ),
            ));
        }
    };
    let opt = |name: &str| {
        let v = d.value(at(name));
        Some((!v.is_empty()).then_some(v))
    };
    let range = d.value(at(RANGE));
    let (min, max) = match range.split_once("..") {
        _ if range.is_empty() => (None, None),
        Some((lo, hi)) => {
            let side = |s: &str| (!s.trim().is_empty()).then(|| s.trim().to_string());
            (side(lo), side(hi))
        }
        None => {
            return Err((
                at(RANGE),
                format!("{RANGE}: write MIN..MAX (either side may be empty), e.g. 1..99"),
            ));
        }
    };
    let change = FieldChange {
        kind: Some(kind),
        required: Some(required),
        pattern: opt(PATTERN),
        min: Some(min),
        max: Some(max),
        choices: Some(split_list(&d.value(at(CHOICES)))),
        label: opt(LABEL),
        help: opt(HELP),
        country: Some(country(d, kind)?),
        ..FieldChange::default()
    };
    // The store checks it again (and audits it); here a bad rule keeps the dialog open.
    change.apply(&name, current).map_err(|e| rule_error(d, e))?;
    Ok((name, change))
}

/// The dialog's country: none when empty; refused on a field that is not a phone.
fn country(d: &Dialog, kind: FieldType) -> Result<Option<String>, (usize, String)> {
    let Some(at) = d.index_of(COUNTRY) else {
        return Ok(None);
    };
    let c = d.value(at);
    match c.trim() {
        "" => Ok(None),
        _ if kind != FieldType::Phone => Err((
            at,
            format!("{COUNTRY}: only a phone field has one (leave it empty)"),
        )),
        c => Ok(Some(c.to_string())),
    }
}

/// A rule the store's check refused, at the dialog's field it names; a CLI flag at the
/// start of the message ("--country: 'XX' is not …") reads as the field's label.
fn rule_error(d: &Dialog, e: String) -> (usize, String) {
    let field = [
        ("--pattern", PATTERN),
        ("--min", RANGE),
        ("--max", RANGE),
        ("--choices", CHOICES),
        ("--label", LABEL),
        ("--help", HELP),
        ("--country", COUNTRY),
    ]
    .into_iter()
    .find(|(flag, _)| e.contains(flag));
    let e = match field {
        Some((flag, label)) if e.starts_with(&format!("{flag}:")) => {
            format!("{label}{}", &e[flag.len()..])
        }
        _ => e,
    };
    let at = field.and_then(|(_, f)| d.index_of(f)).unwrap_or(d.focus);
    (at, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(values: &[(&str, &str)], current: Option<&FieldDef>) -> Dialog {
        let mut d = define_dialog("q", current);
        for (name, v) in values {
            let i = d.index_of(name).unwrap();
            d.inputs[i].buf = crate::app::TextInput::line(v);
        }
        d
    }

    #[test]
    fn the_define_dialog_becomes_a_checked_change() {
        let d = filled(
            &[
                (NAME, "vat"),
                (TYPE, "Text"),
                (REQUIRED, "yes"),
                (PATTERN, "^[A-Z]{2}[0-9]{8,12}$"),
                (RANGE, "..14"),
                (LABEL, "VAT number"),
            ],
            None,
        );
        let (name, c) = parse_define(&d, None).unwrap();
        assert_eq!(name, "vat");
        let def = c.apply(&name, None).unwrap();
        assert_eq!(def.kind, FieldType::Text);
        assert!(def.required);
        assert_eq!(def.max.as_deref(), Some("14"));
        assert_eq!(def.min, None);
        assert_eq!(def.label(), "VAT number");
        assert_eq!(
            rules_text(&def),
            "text · required · pattern ^[A-Z]{2}[0-9]{8,12}$ · range ..14 · \"VAT number\""
        );
        // Each bad value names its field.
        let err = |vals: &[(&str, &str)]| parse_define(&filled(vals, None), None).unwrap_err();
        assert_eq!(err(&[(NAME, "Bad Name")]).0, 0);
        assert_eq!(err(&[(NAME, "x"), (TYPE, "colour")]).0, 1);
        assert_eq!(err(&[(NAME, "x"), (REQUIRED, "maybe")]).0, 2);
        assert_eq!(err(&[(NAME, "x"), (PATTERN, "([")]).0, 3);
        assert_eq!(err(&[(NAME, "x"), (RANGE, "5")]).0, 4);
        assert_eq!(
            err(&[(NAME, "x"), (TYPE, "choice")]).1,
            "a choice field needs --choices a,b,c"
        );
    }

    #[test]
    fn a_phone_field_takes_its_country_in_the_dialog() {
        let d = filled(&[(NAME, "tel"), (TYPE, "phone"), (COUNTRY, "de")], None);
        let (name, c) = parse_define(&d, None).unwrap();
        let def = c.apply(&name, None).unwrap();
        assert_eq!(def.country.as_deref(), Some("DE"));
        let d = filled(&[(NAME, "tel"), (TYPE, "phone"), (COUNTRY, "XX")], None);
        let (at, msg) = parse_define(&d, None).unwrap_err();
        assert_eq!(d.inputs[at].spec.name, COUNTRY);
        assert!(
            msg.starts_with("Country: 'XX' is not a country code"),
            "{msg}"
        );
        let d = filled(&[(NAME, "x"), (TYPE, "text"), (COUNTRY, "DE")], None);
        let (at, msg) = parse_define(&d, None).unwrap_err();
        assert_eq!(d.inputs[at].spec.name, COUNTRY);
        assert!(msg.contains("only a phone field"), "{msg}");
        // Changing a phone field shows its country.
        let mut cur = FieldDef::new("tel", FieldType::Phone);
        cur.country = Some("GB".into());
        let d = define_dialog("q", Some(&cur));
        assert_eq!(d.value(d.index_of(COUNTRY).unwrap()), "GB");
    }

    #[test]
    fn changing_a_field_starts_from_its_definition() {
        let mut cur = FieldDef::new("email", FieldType::Email);
        cur.required = true;
        cur.label = Some("E-mail".into());
        let d = define_dialog("q", Some(&cur));
        assert!(d.index_of(NAME).is_none(), "the name is in the title");
        assert_eq!(d.value(d.index_of(REQUIRED).unwrap()), "yes");
        let (name, c) = parse_define(&d, Some(&cur)).unwrap();
        assert_eq!(name, "email");
        assert_eq!(
            c.apply(&name, Some(&cur)).unwrap(),
            cur,
            "unchanged as shown"
        );
    }
}
