//! Diagnostics go to a log file in the user's state (or cache) directory, never onto a
//! screen the TUI owns. `CASELOAD_LOG` sets the level (default `info`).

use std::fs::OpenOptions;
use std::path::PathBuf;
use std::sync::Mutex;

/// The log file's location, if the platform has a state or cache directory.
pub fn log_path() -> Option<PathBuf> {
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
        .with_writer(Mutex::new(file))
        .with_ansi(false)
        .with_max_level(level)
        .finish();
    tracing::subscriber::set_global_default(subscriber).ok()?;
    Some(path)
}
