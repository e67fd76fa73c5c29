//! Typed fields: `caseload field set|list|delete` (supervisors define a queue's fields),
//! `caseload set` and `caseload tick` (the holder corrects them).

use std::io::Write;

use serde_json::json;

use crate::cli::args::{FieldCommand, FieldSetArgs, HolderArgs};
use crate::cli::commands::holder::token_for;
use crate::cli::output::{item_json, write_json};
use crate::cli::{CliResult, Failure};
use crate::domain::queue_fields::{
    Dedupe, FieldChange, FieldDef, LineState, change_text, split_list,
};
use crate::domain::sanitize;
use crate::store::{Store, exit};

/// `caseload field …`.
pub(crate) fn field_command(s: &mut dyn Store, f: FieldCommand, out: &mut dyn Write) -> CliResult {
    match f {
        FieldCommand::Set(a) => {
            let (queue, name) = (a.queue.clone(), a.name.clone());
            let def = s
                .define_field(&queue, &name, &change_of(a))
                .map_err(|e| match e {
                    crate::store::StoreError::UnknownQueue { .. } => anyhow::anyhow!(
                        "{e}; a supervisor creates it with: caseload queue set {} --create",
                        sanitize::line(&queue)
                    ),
                    e => e.into(),
                })?;
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
        dedupe: match (a.dedupe_key, a.dedupe_text, a.no_dedupe) {
            (true, _, _) => Some(Some(Dedupe::Key)),
            (_, true, _) => Some(Some(Dedupe::Text)),
            (_, _, true) => Some(None),
            _ => None,
        },
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
    if let Some(dd) = d.dedupe {
        parts.push(format!("duplicate {}", dd.as_str()));
    }
    parts.join(", ")
}

/// `NAME=VALUE` as a pair; usage (exit 2) without `=`.
fn pair(v: &str) -> Result<(String, String), Failure> {
    match v.split_once('=') {
        Some((n, value)) if !n.trim().is_empty() => Ok((n.trim().to_string(), value.to_string())),
        _ => Err(Failure {
            code: exit::USAGE,
            error: anyhow::anyhow!(
                "'{}' is not NAME=VALUE (see caseload set --help)",
                sanitize::line(v)
            ),
        }),
    }
}

/// `caseload set ID NAME=VALUE…`: the holder's corrections, in one fenced write.
pub(crate) fn set(
    s: &mut dyn Store,
    h: &HolderArgs,
    values: &[String],
    out: &mut dyn Write,
) -> CliResult {
    let pairs = values
        .iter()
        .map(|v| pair(v))
        .collect::<Result<Vec<_>, _>>()?;
    let token = token_for(s, h)?;
    let changed = s.set_fields(h.id, token, &pairs)?;
    if h.json {
        changed_json(s, h.id, changed, out)?;
    } else if changed.is_empty() {
        writeln!(
            out,
            "Nothing changed on #{}: the values were already so",
            h.id
        )?;
    } else {
        for d in &changed {
            writeln!(out, "#{} {}", h.id, sanitize::line(&change_text(d)))?;
        }
    }
    Ok(())
}

/// `caseload tick …` as parsed: its flags read, then [`tick`].
pub(crate) fn tick_command(
    s: &mut dyn Store,
    c: crate::cli::args::Command,
    out: &mut dyn Write,
) -> CliResult {
    let crate::cli::args::Command::Tick {
        holder,
        field,
        line,
        not_done,
        undo,
    } = c
    else {
        return crate::cli::bail_usage("not the tick command");
    };
    let state = line_state(not_done, undo);
    tick(s, &holder, &field, &line, &state, out)
}

/// A line's state from `tick`'s flags.
pub(crate) fn line_state(not_done: Option<String>, undo: bool) -> LineState {
    match (not_done, undo) {
        (Some(r), _) => LineState::NotDone(r),
        (None, true) => LineState::Todo,
        (None, false) => LineState::Done,
    }
}

/// `caseload tick ID FIELD LINE`: a checklist line ticked (or not done, or back to do).
pub(crate) fn tick(
    s: &mut dyn Store,
    h: &HolderArgs,
    field: &str,
    line: &str,
    state: &LineState,
    out: &mut dyn Write,
) -> CliResult {
    let token = token_for(s, h)?;
    let changed = s.tick(h.id, token, field, line, state)?;
    if h.json {
        return changed_json(s, h.id, changed.into_iter().collect(), out);
    }
    match changed {
        Some(d) => writeln!(out, "#{} {}", h.id, sanitize::line(&change_text(&d)))?,
        None => writeln!(
            out,
            "Nothing changed on #{}: that line was {} already",
            h.id,
            state.as_text()
        )?,
    }
    Ok(())
}

/// `--json` of `set` and `tick`: the item's new state (as `show --json` names its
/// fields) with `changed`, the `field_changed` details written.
fn changed_json(
    s: &mut dyn Store,
    id: i64,
    changed: Vec<serde_json::Value>,
    out: &mut dyn Write,
) -> CliResult {
    let mut v = item_json(&s.item(id)?)?;
    v["changed"] = json!(changed);
    write_json(out, &v)?;
    Ok(())
}
