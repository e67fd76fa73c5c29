//! Typed fields: `caseload field set|list|delete` (supervisors define a queue's fields).

use std::io::Write;

use serde_json::json;

use crate::cli::CliResult;
use crate::cli::args::{FieldCommand, FieldSetArgs};
use crate::cli::output::write_json;
use crate::domain::queue_fields::{FieldChange, FieldDef, split_list};
use crate::domain::sanitize;
use crate::store::Store;

/// `caseload field …`.
pub(crate) fn field_command(s: &mut dyn Store, f: FieldCommand, out: &mut dyn Write) -> CliResult {
    match f {
        FieldCommand::Set(a) => {
            let (queue, name) = (a.queue.clone(), a.name.clone());
            let def = s.define_field(&queue, &name, &change_of(a))?;
            let list = s.fields(&queue)?;
            let pos = list.iter().position(|d| d.name == def.name).unwrap_or(0) + 1;
            writeln!(
                out,
                "Field {} of queue {}: {}",
                sanitize::line(&name),
                sanitize::line(&queue),
                rules_text(&def, pos)
            )?;
        }
        FieldCommand::List { queue, json } => {
            s.queue(&queue)?;
            let list = s.fields(&queue)?;
            if json {
                let rows: Vec<_> = list
                    .iter()
                    .enumerate()
                    .map(|(i, d)| {
                        let mut v = json!({"name": d.name, "position": i + 1});
                        if let (Some(m), serde_json::Value::Object(spec)) =
                            (v.as_object_mut(), d.spec_json())
                        {
                            m.extend(spec);
                        }
                        v
                    })
                    .collect();
                write_json(out, &serde_json::Value::Array(rows))?;
            } else if list.is_empty() {
                writeln!(
                    out,
                    "queue {} has no fields (define one: caseload field set {} NAME --type TYPE)",
                    sanitize::line(&queue),
                    sanitize::line(&queue)
                )?;
            } else {
                for (i, d) in list.iter().enumerate() {
                    writeln!(
                        out,
                        "{}",
                        sanitize::line(&format!("{}  {}", d.name, rules_text(d, i + 1)))
                    )?;
                }
            }
        }
        FieldCommand::Delete { queue, name } => {
            s.delete_field(&queue, &name)?;
            writeln!(
                out,
                "Deleted field {} of queue {} (items keep their values in params)",
                sanitize::line(&name),
                sanitize::line(&queue)
            )?;
        }
    }
    Ok(())
}

/// The flags as a change: an empty text removes a rule.
fn change_of(a: FieldSetArgs) -> FieldChange {
    let opt = |v: Option<String>| v.map(|t| Some(t).filter(|t| !t.trim().is_empty()));
    FieldChange {
        kind: a.kind,
        required: a.required,
        pattern: opt(a.pattern),
        min: opt(a.min),
        max: opt(a.max),
        choices: a.choices.as_deref().map(split_list),
        label: opt(a.label),
        help: opt(a.help_text),
        country: opt(a.country),
        after: a.after,
    }
}

/// "#2 text, required, pattern ^[A-Z]{2}…, label “VAT number”".
pub(crate) fn rules_text(d: &FieldDef, position: usize) -> String {
    let mut parts = vec![format!("#{position} {}", d.kind.as_str())];
    if d.required {
        parts.push("required".into());
    }
    let opt = [
        ("pattern", &d.pattern),
        ("min", &d.min),
        ("max", &d.max),
        ("country", &d.country),
        ("label", &d.label),
        ("help", &d.help),
    ];
    for (k, v) in opt {
        if let Some(v) = v {
            parts.push(format!("{k} {v}"));
        }
    }
    if !d.choices.is_empty() {
        parts.push(format!("choices {}", d.choices.join(", ")));
    }
    parts.join(", ")
}
