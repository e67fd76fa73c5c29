//! One small function per subcommand, grouped by who runs it.

pub(crate) mod export;
pub(crate) mod holder;
pub(crate) mod produce;
pub(crate) mod read;
pub(crate) mod report;
pub(crate) mod setup;
pub(crate) mod supervise;
