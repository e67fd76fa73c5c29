//! `caseload demo`: a fresh database filled from the bundled data set, with a few items
//! already being worked by other (pretend) people so every screen has something to show.

use std::path::Path;

use anyhow::{Context, anyhow, bail};
use serde::Deserialize;

use crate::domain::{Actor, Millis, NewItem};
use crate::store::sqlite::{OpenOptions, SqliteStore, system_clock};
use crate::store::{ListFilter, Store, TakeNext};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DemoRow {
    queue: String,
    title: String,
    #[serde(default)]
    body: String,
    #[serde(default)]
    params: Option<serde_json::Value>,
    #[serde(default)]
    priority: i64,
    #[serde(default)]
    due_in_hours: Option<i64>,
    request_id: String,
}

/// The demo rows, with due times relative to `now`.
pub fn rows(now: Millis) -> Result<Vec<NewItem>, String> {
    crate::cli::commands::setup::DEMO_DATA
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let r: DemoRow = serde_json::from_str(l)
                .map_err(|e| format!("assets/demo.jsonl line {}: {e}", i + 1))?;
            Ok(NewItem {
                queue: r.queue,
                title: r.title,
                body: r.body,
                params: r.params.map_or_else(|| "{}".into(), |p| p.to_string()),
                priority: r.priority,
                due_at: r.due_in_hours.map(|h| now + h * 3_600_000),
                request_id: Some(r.request_id),
            })
        })
        .collect()
}

/// Creates the demo database at `path` (replacing an earlier demo file when `replace`);
/// returns how many items it holds.
pub fn create(path: &Path, creator: &Actor, replace: bool) -> anyhow::Result<usize> {
    if replace {
        for suffix in ["", "-wal", "-shm"] {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            let _ = std::fs::remove_file(&p);
        }
    }
    let opts = OpenOptions {
        create_dirs: true,
        allow_empty: true,
        ..OpenOptions::default()
    };
    let shown = path.display().to_string();
    let mut store = SqliteStore::open(path, creator.clone(), &opts).context(shown.clone())?;
    let existing = store.count(&ListFilter {
        state: crate::store::StateFilter::All,
        ..ListFilter::default()
    })?;
    if existing > 0 {
        bail!("{shown} already holds {existing} items; the demo needs a new file");
    }
    let now = system_clock();
    let rows = rows(now).map_err(|e| anyhow!(e))?;
    store.add_batch(&rows)?;
    drop(store);

    // Others at work: bob holds two items (one of them for so long the lock expired),
    // carol holds one and has finished a few.
    let open_as = |name: &str, offset_ms: i64| -> anyhow::Result<SqliteStore> {
        Ok(SqliteStore::open_with_clock(
            path,
            Actor::new(name, name),
            &opts,
            Box::new(move || system_clock() - offset_ms),
        )?)
    };
    let mut bob_then = open_as("bob", 45 * 60_000)?;
    bob_then.take_next(&TakeNext {
        queue: Some("helpdesk".into()),
        skip: vec![],
    })?;
    let mut bob = open_as("bob", 5 * 60_000)?;
    bob.take_next(&TakeNext {
        queue: Some("verification".into()),
        skip: vec![],
    })?;
    let mut carol = open_as("carol", 0)?;
    for _ in 0..4 {
        let item = carol.take_next(&TakeNext {
            queue: Some("fulfilment".into()),
            skip: vec![],
        })?;
        carol.complete(item.id, item.lock_token, Some("Shipped"))?;
    }
    carol.take_next(&TakeNext {
        queue: Some("fulfilment".into()),
        skip: vec![],
    })?;
    Ok(rows.len())
}
