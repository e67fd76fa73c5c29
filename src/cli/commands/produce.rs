//! Subcommands that feed the queue: add and import.

use std::io::{IsTerminal, Write};

use anyhow::{Context, anyhow};

use crate::domain::time::parse_rfc3339;
use crate::domain::{NewItem, sanitize};
use crate::import::{self, Format};
use crate::store::Store;

use crate::cli::CliResult;
use crate::cli::args::{AddArgs, FormatArg, ImportArgs};

pub(crate) fn add(s: &mut dyn Store, a: AddArgs, out: &mut dyn Write) -> CliResult {
    let due_at = match &a.due {
        Some(d) => Some(parse_rfc3339(d).ok_or_else(|| {
            anyhow!(
                "--due '{}' is not an RFC 3339 time (e.g. 2026-12-01T17:00:00Z)",
                sanitize::line(d)
            )
        })?),
        None => None,
    };
    let item = NewItem {
        queue: a.queue.unwrap_or_else(|| "default".into()),
        title: a.title,
        body: a.body,
        params: a.params,
        priority: a.priority,
        due_at,
        request_id: a.request_id,
    };
    if let Err(e) = item.validate() {
        return Err(anyhow!("--{}: {}", e.field.replace('_', "-"), e.message).into());
    }
    let added = s.add(&item)?;
    writeln!(out, "{}", added.id)?;
    Ok(())
}

pub(crate) fn import_file(s: &mut dyn Store, a: ImportArgs, out: &mut dyn Write) -> CliResult {
    let shown = sanitize::line(&a.file.display().to_string()).into_owned();
    let data = std::fs::read(&a.file).with_context(|| format!("{shown}: cannot read"))?;
    let format = match a.format {
        Some(FormatArg::Csv) => Format::Csv,
        Some(FormatArg::Jsonl) => Format::Jsonl,
        None => Format::from_path(&a.file),
    };
    let queue = a.queue.unwrap_or_else(|| "default".into());
    let rows = match import::parse(&data, format, &queue) {
        Ok(rows) => rows,
        Err(errors) => {
            let mut msg = format!("{shown}: {} bad line(s), nothing imported: ", errors.len());
            let named: Vec<String> = errors
                .iter()
                .take(import::MAX_REPORTED)
                .map(|e| format!("line {} {}", e.line, sanitize::line(&e.message)))
                .collect();
            msg.push_str(&named.join("; "));
            if errors.len() > import::MAX_REPORTED {
                msg.push_str(&format!(
                    "; and {} more",
                    errors.len() - import::MAX_REPORTED
                ));
            }
            return Err(anyhow!(msg).into());
        }
    };
    let bar = progress_bar(rows.len() as u64);
    let mut created = 0usize;
    // Short batches: the write lock is never held long, so staff keep claiming.
    let mut sizer = import::BatchSizer::default();
    let mut rest = &rows[..];
    while !rest.is_empty() {
        let (chunk, tail) = rest.split_at(sizer.next_len().min(rest.len()));
        let started = std::time::Instant::now();
        created += s
            .add_batch(chunk)
            .with_context(|| format!("{shown}: import stopped part-way; run it again to finish"))?;
        sizer.record(chunk.len(), started.elapsed());
        bar.inc(chunk.len() as u64);
        rest = tail;
    }
    bar.finish_and_clear();
    writeln!(
        out,
        "Imported {created} new item(s) from {shown} ({} already present)",
        rows.len() - created
    )?;
    Ok(())
}

pub(crate) fn progress_bar(len: u64) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} rows ({per_sec}, {eta} left)")
    {
        bar.set_style(style);
    }
    bar
}
