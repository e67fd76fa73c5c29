//! What wakes a follower (`caseload events --follow`): the store's change marker, as the
//! TUI's worker and `claim --wait` are woken — `PRAGMA data_version` on SQLite (a read of
//! shared memory, no I/O), the change counter on PostgreSQL (read at most every 250 ms, on
//! the store's one connection, also through a pooler). Kept behind [`Wake`] so that
//! another way replaces it in one place.

use std::time::{Duration, Instant};

use crate::store::Store;
use crate::store::error::Result;

/// How often the marker is looked at: a few microseconds of work 40 times a second.
pub(crate) const POLL: Duration = Duration::from_millis(25);

/// How long a follower waits without any notice before it looks anyway (a notice is a
/// hint that may be lost; looking costs one small query).
const AT_MOST: Duration = Duration::from_secs(5);

/// Waits until the database may have changed.
pub(crate) trait Wake {
    /// Notes the database's state now: a change after this call ends the next `wait`.
    fn arm(&mut self, s: &mut dyn Store) -> Result<()>;
    /// Returns when something may have changed since `arm` (or after a while anyway).
    fn wait(&mut self, s: &mut dyn Store) -> Result<()>;
}

/// [`Wake`] by the store's [`crate::store::Reads::change_marker`].
#[derive(Debug, Default)]
pub(crate) struct ChangeMarker {
    armed: Option<u64>,
}

impl Wake for ChangeMarker {
    fn arm(&mut self, s: &mut dyn Store) -> Result<()> {
        self.armed = Some(s.change_marker()?);
        Ok(())
    }

    fn wait(&mut self, s: &mut dyn Store) -> Result<()> {
        let since = Instant::now();
        while since.elapsed() < AT_MOST {
            std::thread::sleep(POLL);
            if Some(s.change_marker()?) != self.armed {
                break;
            }
        }
        self.armed = None;
        Ok(())
    }
}
