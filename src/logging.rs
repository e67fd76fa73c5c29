//! Diagnostics go to a log file in the user's state (or cache) directory, never onto a
//! screen the TUI owns. `CASELOAD_LOG` sets the level (default `info`). Every line is
//! sanitized on its way to the file: names and messages from the database or from other
//! users (queue and user names, item text in errors) may hold escape sequences, bidi
//! overrides or newlines that would otherwise reach whoever reads the log.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

/// The log file's location, if the platform has a state or cache directory.
pub(crate) fn log_path() -> Option<PathBuf> {
    let dirs = crate::store::location::project_dirs()?;
    let dir = dirs
        .state_dir()
        .map(|d| d.to_path_buf())
        .unwrap_or_else(|| dirs.cache_dir().to_path_buf());
    Some(dir.join("caseload.log"))
}

/// Starts logging to the log file; quietly does nothing when the file cannot be opened.
pub fn init() -> Option<PathBuf> {
    let path = log_path()?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).ok()?;
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .ok()?;
    let level = std::env::var("CASELOAD_LOG")
        .ok()
        .and_then(|l| l.parse::<tracing::Level>().ok())
        .unwrap_or(tracing::Level::INFO);
    let subscriber = tracing_subscriber::fmt()
        .with_writer(Mutex::new(Sanitized(file)))
        .with_ansi(false)
        .with_max_level(level)
        .finish();
    tracing::subscriber::set_global_default(subscriber).ok()?;
    Some(path)
}

/// A writer that makes each log line safe ([`crate::domain::sanitize::line`]): a record
/// arrives as one write ending in a newline, and a newline inside it is shown, not kept,
/// so nobody can forge a line of the log.
pub(crate) struct Sanitized<W: Write>(pub W);

impl<W: Write> Write for Sanitized<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let (body, newline) = match text.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (&text[..], ""),
        };
        let clean = crate::domain::sanitize::line(body);
        self.0.write_all(clean.as_bytes())?;
        self.0.write_all(newline.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_lines_are_made_safe() {
        let mut w = Sanitized(Vec::new());
        w.write_all(b"queue \x1b]0;owned\x07 by b\xe2\x80\x8bob\nforged line\n")
            .unwrap();
        let out = String::from_utf8(w.0).unwrap();
        assert_eq!(out.matches('\n').count(), 1, "{out:?}");
        assert!(out.ends_with('\n'));
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\u{200b}'));
        assert!(out.contains("U+200B"), "{out:?}");
    }
}
