//! Ready-made texts: `caseload text add|list|delete` (supervisors keep a queue's texts;
//! everyone may list them).

use std::io::Write;

use crate::cli::CliResult;
use crate::cli::args::TextCommand;
use crate::cli::output::write_json;
use crate::domain::sanitize;
use crate::domain::texts::CannedText;
use crate::store::Store;

/// `caseload text …`.
pub(crate) fn text_command(s: &mut dyn Store, t: TextCommand, out: &mut dyn Write) -> CliResult {
    match t {
        TextCommand::Add {
            queue,
            purpose,
            text,
            code,
        } => {
            let had = s.texts(Some(&queue))?;
            let t = s.add_text(&queue, purpose, &text, code.as_deref())?;
            let verb = match had.iter().any(|h| h.code == t.code) {
                true => "Changed",
                false => "Added",
            };
            writeln!(out, "{verb} {} text {}", t.purpose.as_str(), shown(&t))?;
        }
        TextCommand::List { queue, json } => {
            s.queue(&queue)?;
            let list = in_order(s.texts(Some(&queue))?);
            if json {
                write_json(out, &serde_json::to_value(&list)?)?;
            } else if list.is_empty() {
                writeln!(
                    out,
                    "queue {q} has no ready-made texts (add one: caseload text add {q} --for \
                     fail 'no answer after 3 calls')",
                    q = sanitize::line(&queue)
                )?;
            } else {
                for t in &list {
                    writeln!(out, "{:<8} {}", t.purpose.as_str(), shown(t))?;
                }
            }
        }
        TextCommand::Delete { queue, key } => {
            let t = s.delete_text(&queue, &key)?;
            writeln!(out, "Deleted {} text {}", t.purpose.as_str(), shown(&t))?;
        }
    }
    Ok(())
}

/// `code: text`, sanitized.
fn shown(t: &CannedText) -> String {
    format!("{}: {}", sanitize::line(&t.code), sanitize::line(&t.text))
}

/// By kind (result, fail, skip, release, park, comment), then code.
fn in_order(mut list: Vec<CannedText>) -> Vec<CannedText> {
    list.sort_by(|a, b| (a.purpose, &a.code).cmp(&(b.purpose, &b.code)));
    list
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::texts::Purpose;

    #[test]
    fn texts_list_by_kind_then_code() {
        let t = |p, c: &str| CannedText {
            queue: "q".into(),
            purpose: p,
            code: c.into(),
            text: "x".into(),
        };
        let list = in_order(vec![
            t(Purpose::Skip, "a"),
            t(Purpose::Fail, "b"),
            t(Purpose::Fail, "a"),
        ]);
        let got: Vec<_> = list.iter().map(|t| (t.purpose, t.code.as_str())).collect();
        assert_eq!(
            got,
            [
                (Purpose::Fail, "a"),
                (Purpose::Fail, "b"),
                (Purpose::Skip, "a")
            ]
        );
    }
}
