//! The clock a store reads: the host's, or one a test or benchmark gives. On SQLite it
//! decides expiry; on PostgreSQL the server's does, and the host's only measures skew
//! and the time between round trips.

use crate::domain::Millis;

/// A source of "now" in Unix milliseconds; tests pass a fixed or stepped clock.
pub(crate) type Clock = Box<dyn Fn() -> Millis + Send>;

/// The host's clock.
pub fn system_clock() -> Millis {
    chrono::Utc::now().timestamp_millis()
}
