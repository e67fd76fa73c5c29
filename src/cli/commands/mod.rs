//! One small function per subcommand, grouped by who runs it.

pub(crate) mod duplicates;
pub(crate) mod events;
pub(crate) mod export;
pub(crate) mod fields;
pub(crate) mod holder;
mod hooks;
pub(crate) mod metrics;
pub(crate) mod park;
pub(crate) mod produce;
pub(crate) mod read;
pub(crate) mod report;
pub(crate) mod report_fields;
pub(crate) mod report_reasons;
pub(crate) mod review;
pub(crate) mod setup;
pub(crate) mod sla;
pub(crate) mod supervise;
pub(crate) mod texts;
pub(crate) mod undo;
mod wake;
pub(crate) mod work;

use crate::domain::Millis;
use crate::domain::sanitize;
use crate::domain::time::display_zone;
use crate::domain::when::{Span, parse_time};

/// A time flag's value (`--since`, `--until`, `--due`), read the one way every time flag
/// and the TUI's dialogs read one, at `now` in the display zone; a bad value names the
/// flag and what it takes.
pub(crate) fn time_arg(flag: &str, value: &str, now: Millis, span: Span) -> anyhow::Result<Millis> {
    parse_time(value, now, display_zone(), span)
        .map_err(|m| anyhow::anyhow!("{flag}: {}", sanitize::line(&m)))
}
