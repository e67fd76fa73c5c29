//! Typed fields per queue: supervisors define, change, move and delete a queue's fields
//! (each change audited as `field`, subject `QUEUE.FIELD`, old → new definition with its
//! position).

use serde_json::{Value, json};

use super::{Tx, known_queue, require_supervisor};
use crate::domain::queue_fields::{FieldChange, FieldDef, reorder};
use crate::domain::{AuditKind, AuditNote};
use crate::store::error::{Result, StoreError};

/// A definition as its audit records show it: its spec and its position (1 first).
pub(crate) fn field_json(def: &FieldDef, position: usize) -> Value {
    let mut v = def.spec_json();
    v["position"] = json!(position);
    v
}

/// The subject of a field's audit records.
fn subject(queue: &str, name: &str) -> String {
    format!("{queue}.{name}")
}

/// Defines field `name` of `queue`, or changes or moves it (`change`); returns the
/// definition as it is now. Refused when nothing would change.
pub(crate) fn define_field(
    tx: &mut dyn Tx,
    queue: &str,
    name: &str,
    change: &FieldChange,
) -> Result<FieldDef> {
    require_supervisor(tx, "define fields")?;
    known_queue(tx, queue)?;
    let defs = tx.fields(queue)?;
    let names: Vec<String> = defs.iter().map(|d| d.name.clone()).collect();
    let at = names.iter().position(|n| n == name);
    let cur = at.map(|i| &defs[i]);
    let def = change.apply(name, cur).map_err(StoreError::Invalid)?;
    let order = reorder(&names, name, change.after.as_deref()).map_err(StoreError::Invalid)?;
    if cur == Some(&def) && order == names {
        return Err(StoreError::Invalid(format!(
            "field {name} of queue '{queue}' is already so; nothing changed"
        )));
    }
    let pos = order.iter().position(|n| n == name).unwrap_or(0) + 1;
    let note = AuditNote {
        kind: AuditKind::Field,
        subject: subject(queue, name),
        old: cur
            .zip(at)
            .map_or(Value::Null, |(c, i)| field_json(c, i + 1)),
        new: field_json(&def, pos),
    };
    tx.put_field(queue, &def, &order, &note)?;
    tracing::info!(queue = %queue, field = %name, by = %tx.actor().name, "field defined");
    Ok(def)
}

/// Deletes field `name` of `queue`; the items keep their values in params.
pub(crate) fn delete_field(tx: &mut dyn Tx, queue: &str, name: &str) -> Result<()> {
    require_supervisor(tx, "delete fields")?;
    known_queue(tx, queue)?;
    let defs = tx.fields(queue)?;
    let Some(i) = defs.iter().position(|d| d.name == name) else {
        return Err(unknown_field(queue, name, &defs));
    };
    let note = AuditNote {
        kind: AuditKind::Field,
        subject: subject(queue, name),
        old: field_json(&defs[i], i + 1),
        new: json!({"deleted": true}),
    };
    tx.drop_field(queue, name, &note)?;
    tracing::info!(queue = %queue, field = %name, by = %tx.actor().name, "field deleted");
    Ok(())
}

/// "queue 'q' has no field 'x' (its fields: a, b)".
pub(crate) fn unknown_field(queue: &str, name: &str, defs: &[FieldDef]) -> StoreError {
    let known: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    StoreError::Invalid(format!(
        "queue '{queue}' has no field '{name}' ({})",
        match known.is_empty() {
            true => "it has no fields: `caseload field set` defines them".to_string(),
            false => format!("its fields: {}", known.join(", ")),
        }
    ))
}
