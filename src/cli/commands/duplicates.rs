//! `caseload similar`, `merge` and `not-duplicate` (issue 27).

use std::io::Write;

use serde_json::{Value, json};

use crate::cli::CliResult;
use crate::cli::args::Command;
use crate::cli::output::write_json;
use crate::domain::duplicates::{Candidate, Pair, Verdict};
use crate::domain::sanitize;
use crate::domain::time::rfc3339;
use crate::store::Store;
use crate::store::similar::similar;

pub(crate) fn command(s: &mut dyn Store, c: Command, out: &mut dyn Write) -> CliResult {
    match c {
        Command::Similar {
            id,
            limit,
            all,
            json,
        } => similar_command(s, id, limit as usize, all, json, out),
        Command::Merge {
            id,
            into,
            reason,
            token,
        } => {
            let m = s.merge(id, into, token, reason.as_deref())?;
            writeln!(
                out,
                "Merged #{} into #{} (#{} is cancelled as its duplicate)",
                m.id, m.into, m.id
            )?;
            Ok(())
        }
        Command::NotDuplicate { id, other } => {
            s.not_duplicate(id, other)?;
            writeln!(
                out,
                "#{id} and #{other} are not the same; they will not be offered again"
            )?;
            Ok(())
        }
        _ => crate::cli::bail_usage("not a command of this group"),
    }
}

fn candidate_json(c: &Candidate) -> Value {
    json!({
        "id": c.id,
        "title": c.title,
        "state": c.state.as_str(),
        "finished_by": c.finished_by,
        "why": c.why(),
        "keys": c.keys,
        "similarity": c.text.as_ref().map(|(what, s)| json!({"of": what, "score": s})),
    })
}

fn pair_json(id: i64, p: &Pair) -> Value {
    json!({
        "other": p.other(id),
        "verdict": p.verdict.as_str(),
        "by": p.actor,
        "at": rfc3339(p.at),
    })
}

fn similar_command(
    s: &mut dyn Store,
    id: i64,
    limit: usize,
    all: bool,
    json: bool,
    out: &mut dyn Write,
) -> CliResult {
    let found = similar(s, id, limit)?;
    if json {
        let mut v = json!({
            "id": id,
            "candidates": found.candidates.iter().map(candidate_json).collect::<Vec<_>>(),
        });
        if all {
            v["pairs"] = found.pairs.iter().map(|p| pair_json(id, p)).collect();
        }
        write_json(out, &v)?;
        return Ok(());
    }
    if found.candidates.is_empty() {
        writeln!(out, "No item looks like #{id}")?;
    }
    for c in &found.candidates {
        let by = match &c.finished_by {
            Some(b) => format!(" by {b}"),
            None => String::new(),
        };
        let line = format!(
            "#{}  {}{by}  {}  ({})",
            c.id,
            c.state.as_str(),
            c.title,
            c.why()
        );
        writeln!(out, "{}", sanitize::line(&line))?;
    }
    if all {
        for p in &found.pairs {
            let said = match p.verdict {
                Verdict::Same => "merged",
                Verdict::NotSame => "not the same",
            };
            let line = format!(
                "#{}  {said} (by {}, {})",
                p.other(id),
                p.actor,
                rfc3339(p.at)
            );
            writeln!(out, "{}", sanitize::line(&line))?;
        }
    }
    Ok(())
}
