//! `caseload queue set Q --sla DURATION [--hours …] [--tz ZONE] [--holidays FILE]`: a
//! queue's SLA on business hours (see [`crate::domain::sla`]).

use std::io::Write;

use anyhow::Context;

use crate::cli::CliResult;
use crate::cli::args::SlaArgs;
use crate::domain::sanitize;
use crate::domain::sla::{Hours, Sla, SlaUpdate, parse_holidays, parse_sla, parse_zone, sla_text};
use crate::store::Store;

/// The change the flags ask for (`None`: no SLA flag), read and checked before anything
/// is written: a bad duration, hours, zone or holidays file is named.
pub(crate) fn update_of(a: &SlaArgs) -> anyhow::Result<Option<SlaUpdate>> {
    if a.is_empty() {
        return Ok(None);
    }
    let ms = a.sla.as_deref().map(parse_sla).transpose();
    let holidays = match &a.holidays {
        None => None,
        Some(path) => {
            let shown = sanitize::line(&path.display().to_string()).into_owned();
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--holidays {shown}: cannot read it"))?;
            Some(parse_holidays(&text).map_err(|e| anyhow::anyhow!("--holidays {shown}: {e}"))?)
        }
    };
    Ok(Some(SlaUpdate {
        ms: ms.map_err(|e| anyhow::anyhow!("--sla: {e}"))?,
        hours: (a.hours.as_deref().map(Hours::parse).transpose())
            .map_err(|e| anyhow::anyhow!("--hours: {e}"))?,
        zone: (a.tz.as_deref().map(parse_zone).transpose())
            .map_err(|e| anyhow::anyhow!("--tz: {e}"))?,
        holidays,
        default_zone: own_zone(),
    }))
}

/// The zone of whoever sets a new SLA: `TZ` if it names one, else the host's
/// (`/etc/timezone`, or the zone `/etc/localtime` links to).
fn own_zone() -> Option<chrono_tz::Tz> {
    let named = |s: &str| parse_zone(s.trim().trim_start_matches(':')).ok();
    if let Some(z) = std::env::var("TZ").ok().as_deref().and_then(named) {
        return Some(z);
    }
    if let Some(z) = std::fs::read_to_string("/etc/timezone")
        .ok()
        .as_deref()
        .and_then(named)
    {
        return Some(z);
    }
    let link = std::fs::read_link("/etc/localtime").ok()?;
    let s = link.to_string_lossy();
    let i = s.find("zoneinfo/")?;
    named(&s[i + "zoneinfo/".len()..])
}

/// Writes the change and says what the queue's SLA is now.
pub(crate) fn set(s: &mut dyn Store, queue: &str, u: &SlaUpdate, out: &mut dyn Write) -> CliResult {
    let now = s.set_sla(queue, u)?;
    writeln!(out, "{}", sla_line(queue, now.as_ref()))?;
    Ok(())
}

/// "Queue helpdesk: SLA 4h of working time, Mon-Fri 08:00-17:00 (Europe/Berlin), 2 holidays".
pub(crate) fn sla_line(queue: &str, sla: Option<&Sla>) -> String {
    let q = sanitize::line(queue);
    match sla {
        None => format!("Queue {q}: no SLA (due times only as given)"),
        Some(s) => format!(
            "Queue {q}: SLA {} of working time, {} ({}), {} holiday(s)",
            sla_text(s.ms),
            s.hours.text(),
            s.zone.name(),
            s.holidays.len()
        ),
    }
}
