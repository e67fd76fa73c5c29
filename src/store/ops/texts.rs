//! Ready-made texts per queue: supervisors add, change and delete them (each change
//! audited as `text`, subject `QUEUE.CODE`, old → new `{for, text}`); a holder's finish
//! that names a code gets the text it stands for, checked against the item's queue.

use serde_json::{Value, json};

use super::{Tx, found, known_queue, require_supervisor_of};
use crate::domain::queue::DEFAULT_QUEUE;
use crate::domain::texts::{CannedText, Purpose, Said, check_canned, code_for, validate_code};
use crate::domain::{AuditKind, AuditNote};
use crate::store::error::{Result, StoreError};

fn shown(t: &CannedText) -> Value {
    json!({"for": t.purpose.as_str(), "text": t.text})
}

/// Adds a ready-made text to `queue` (`default` is there from its first use, as for
/// items) for `purpose`, under `code` (else one made from the
/// text, unique in the queue); a code the queue has for `purpose` gets the new text.
/// Refused when the code is the queue's for another purpose (it would silently move that
/// text), when the queue already has the same text for the same purpose under another
/// code, or when nothing would change. Returns the text as stored.
pub(crate) fn add_text(
    tx: &mut dyn Tx,
    queue: &str,
    purpose: Purpose,
    text: &str,
    code: Option<&str>,
) -> Result<CannedText> {
    require_supervisor_of(tx, Some(queue), "keep ready-made texts")?;
    if queue == DEFAULT_QUEUE {
        tx.ensure_queue(queue)?;
    }
    known_queue(tx, queue)?;
    let text = check_canned(text).map_err(StoreError::Invalid)?;
    let have = tx.texts(queue)?;
    let same_text = |t: &&CannedText| t.purpose == purpose && t.text == text;
    let code = match code {
        Some(c) => {
            validate_code(c).map_err(StoreError::Invalid)?;
            c.to_string()
        }
        None => match have.iter().find(same_text) {
            Some(t) => t.code.clone(),
            None => free_code(&code_for(text), &have),
        },
    };
    if let Some(t) = have.iter().find(same_text).filter(|t| t.code != code) {
        return Err(StoreError::Invalid(format!(
            "queue '{queue}' already has this {} text, as '{}'",
            purpose.as_str(),
            t.code
        )));
    }
    let old = have.iter().find(|t| t.code == code);
    if let Some(t) = old.filter(|t| t.purpose != purpose) {
        return Err(StoreError::Invalid(format!(
            "queue '{queue}' has code '{code}' for its {} text; a code names one text of a \
             queue: choose another code, or delete that text first",
            t.purpose.as_str()
        )));
    }
    let new = CannedText {
        queue: queue.to_string(),
        purpose,
        code: code.clone(),
        text: text.to_string(),
    };
    if old == Some(&new) {
        return Err(StoreError::Invalid(format!(
            "queue '{queue}' already has text '{code}' so; nothing changed"
        )));
    }
    let note = AuditNote {
        kind: AuditKind::Text,
        subject: format!("{queue}.{code}"),
        old: old.map_or(Value::Null, shown),
        new: shown(&new),
    };
    tx.put_text(&new, &note)?;
    tracing::info!(queue = %queue, code = %code, by = %tx.actor().name, "text kept");
    Ok(new)
}

/// `base`, or `base-2`, `base-3`… : the first that no text of the queue has.
fn free_code(base: &str, have: &[CannedText]) -> String {
    let taken = |c: &str| have.iter().any(|t| t.code == c);
    if !taken(base) {
        return base.to_string();
    }
    (2..)
        .map(|n| {
            let tail = format!("-{n}");
            let keep = crate::domain::texts::MAX_CODE_CHARS - tail.len();
            format!("{}{tail}", &base[..base.len().min(keep)])
        })
        .find(|c| !taken(c))
        .unwrap_or_else(|| base.to_string())
}

/// Deletes the ready-made text of `queue` whose code is `key`, else whose text is `key`
/// (ignoring case; refused when several purposes share it, naming their codes). Events
/// that kept its code keep it. Returns what was deleted.
pub(crate) fn delete_text(tx: &mut dyn Tx, queue: &str, key: &str) -> Result<CannedText> {
    require_supervisor_of(tx, Some(queue), "keep ready-made texts")?;
    known_queue(tx, queue)?;
    let have = tx.texts(queue)?;
    let key = key.trim();
    let by_text: Vec<&CannedText> = have
        .iter()
        .filter(|t| t.text.to_lowercase() == key.to_lowercase())
        .collect();
    let t = match (have.iter().find(|t| t.code == key), by_text.as_slice()) {
        (Some(t), _) => t.clone(),
        (None, [t]) => (*t).clone(),
        (None, []) => return Err(no_such(queue, key, &have)),
        (None, many) => {
            let codes: Vec<&str> = many.iter().map(|t| t.code.as_str()).collect();
            return Err(StoreError::Invalid(format!(
                "queue '{queue}' has that text under several codes ({}); delete by code",
                codes.join(", ")
            )));
        }
    };
    let note = AuditNote {
        kind: AuditKind::Text,
        subject: format!("{queue}.{}", t.code),
        old: shown(&t),
        new: json!({"deleted": true}),
    };
    tx.drop_text(queue, &t.code, &note)?;
    tracing::info!(queue = %queue, code = %t.code, by = %tx.actor().name, "text deleted");
    Ok(t)
}

fn no_such(queue: &str, key: &str, have: &[CannedText]) -> StoreError {
    let codes: Vec<&str> = have.iter().map(|t| t.code.as_str()).collect();
    StoreError::Invalid(format!(
        "queue '{queue}' has no ready-made text '{}' ({})",
        crate::domain::sanitize::line(key),
        match codes.is_empty() {
            true => "it has none: `caseload text add` adds them".to_string(),
            false => format!("its codes: {}", codes.join(", ")),
        }
    ))
}

/// The text a finish of item `id` says: what was typed, else (with a code only) the
/// ready-made text itself. A code must be one of the item's queue's texts for `purpose`
/// (else `Invalid`, naming the codes it has for it).
pub(crate) fn said_text(
    tx: &mut dyn Tx,
    id: i64,
    purpose: Purpose,
    said: Said<'_>,
) -> Result<Option<String>> {
    let Some(code) = said.code else {
        return Ok(said.text.map(str::to_string));
    };
    let item = found(id, tx.item(id)?)?;
    let have = tx.texts(&item.queue)?;
    match have.iter().find(|t| t.code == code && t.purpose == purpose) {
        Some(t) => Ok(Some(said.text.unwrap_or(&t.text).to_string())),
        None => {
            let codes: Vec<&str> = (have.iter().filter(|t| t.purpose == purpose))
                .map(|t| t.code.as_str())
                .collect();
            Err(StoreError::Invalid(format!(
                "queue '{}' has no {} text with code '{}' ({})",
                item.queue,
                purpose.as_str(),
                crate::domain::sanitize::line(code),
                match codes.is_empty() {
                    true => "it has none for that".to_string(),
                    false => format!("its codes for that: {}", codes.join(", ")),
                }
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_made_code_that_is_taken_gets_a_number() {
        let t = |code: &str| CannedText {
            queue: "q".into(),
            purpose: Purpose::Fail,
            code: code.into(),
            text: "x".into(),
        };
        assert_eq!(free_code("no-answer", &[]), "no-answer");
        let have = [t("no-answer"), t("no-answer-2")];
        assert_eq!(free_code("no-answer", &have), "no-answer-3");
        let long = "x".repeat(32);
        let c = free_code(&long, &[t(&long)]);
        assert_eq!(c.len(), 32);
        assert!(c.ends_with("-2"));
    }
}
