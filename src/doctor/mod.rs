//! `caseload doctor`: checks a deployment and prints one line per check, ✔ or ✘ with the
//! fix. Both backends: each config file (nobody but its owner and root may change it).
//! SQLite: the file and its directory (owner, group, mode, setgid), -wal/-shm files
//! others own, the umask, the filesystem, free space, the WAL, the schema and
//! `quick_check`. PostgreSQL: reachability, server version, schema, rights, search's case
//! folding and the clock.
//! Doctor changes nothing; everything it prints from the system is sanitized.

mod postgres;
mod sqlite;

use std::io::Write;

use serde::Serialize;

use crate::domain::sanitize;
use crate::store::location::{Location, Source};

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Check {
    /// What was checked ("directory", "free space", ...).
    pub name: &'static str,
    pub ok: bool,
    /// What was found.
    pub detail: String,
    /// What to do, for a failed check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    /// A passed check.
    pub(crate) fn pass(name: &'static str, detail: impl Into<String>) -> Check {
        Check {
            name,
            ok: true,
            detail: detail.into(),
            fix: None,
        }
    }

    /// A failed check and its fix.
    pub(crate) fn fail(
        name: &'static str,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            name,
            ok: false,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

/// Everything doctor found about one database.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Report {
    pub database: String,
    pub backend: &'static str,
    pub ok: bool,
    pub checks: Vec<Check>,
}

/// Runs every check for the database at `location`, found through `source`.
pub(crate) fn examine(location: &Location, source: &Source, allow_network_fs: bool) -> Report {
    let mut checks = config_checks();
    checks.push(Check::pass(
        "database",
        format!("{} ({})", location.display(), source_text(source)),
    ));
    let backend = match location {
        Location::File(path) => {
            checks.extend(sqlite::checks(path, allow_network_fs));
            "sqlite"
        }
        Location::Postgres(url) => {
            checks.extend(postgres::checks(url));
            "postgres"
        }
    };
    Report {
        database: location.display(),
        backend,
        ok: checks.iter().all(|c| c.ok),
        checks,
    }
}

/// One line per config file there is: who owns it and its mode, or why it is not used
/// (someone other than its owner and root could change it, or it does not parse).
fn config_checks() -> Vec<Check> {
    crate::config::examine_files()
        .into_iter()
        .map(|(path, found)| match found {
            Ok(owner) => Check::pass("config", format!("{} ({owner})", path.display())),
            Err(e) => {
                let fix = e.fix.clone().unwrap_or_else(|| "correct the file".into());
                let e = crate::config::ConfigError { fix: None, ..e };
                Check::fail("config", e.to_string(), fix)
            }
        })
        .collect()
}

/// Where `db` came from, in words.
fn source_text(source: &Source) -> String {
    match source {
        Source::Flag => "from --db".into(),
        Source::Env => "from CASELOAD_DB".into(),
        Source::UserConfig(path) | Source::SystemConfig(path) => {
            format!("db set in {}", path.display())
        }
        Source::Default => "the default location: no --db, CASELOAD_DB or config file".into(),
    }
}

/// Prints the report: one line per check, or one JSON object.
pub(crate) fn print(report: &Report, json: bool, out: &mut dyn Write) -> std::io::Result<()> {
    if json {
        serde_json::to_writer_pretty(&mut *out, report)?;
        return writeln!(out);
    }
    for c in &report.checks {
        let mark = if c.ok { "✔" } else { "✘" };
        let mut line = format!("{mark} {}: {}", c.name, c.detail);
        if let Some(fix) = &c.fix {
            line.push_str(" — fix: ");
            line.push_str(fix);
        }
        writeln!(out, "{}", sanitize::line(&line))?;
    }
    Ok(())
}

/// A size in bytes for people: `512 B`, `3.4 MiB`.
pub(crate) fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_df() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(3 * 1024 * 1024 + 400 * 1024), "3.4 MiB");
    }

    #[test]
    fn a_failed_check_prints_its_fix_on_its_line() {
        let report = Report {
            database: "q.db".into(),
            backend: "sqlite",
            ok: false,
            checks: vec![
                Check::pass("file", "alice:staff 0660"),
                Check::fail("setgid", "not set\u{1b}[2J", "sudo chmod g+s /srv"),
            ],
        };
        let mut out = Vec::new();
        print(&report, false, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "✔ file: alice:staff 0660\n✘ setgid: not set␛[2J — fix: sudo chmod g+s /srv\n"
        );
    }
}
