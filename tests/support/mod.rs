//! What the three test binaries share: the store backends the conformance suite runs on
//! (`backend`), the real binary in a temp dir (`cli`), real filesystems and OS users for
//! fault tests (`fault`), a real PgBouncer (`pooler`), a protocol-reading proxy that counts round trips (`wire`), skips that say so (`skip`), sessions, clocks and screens for the TUI tests (`tui`), and a private tmux for the real
//! terminal (`tmux`).
//!
//! Each binary declares `pub mod support;` so that what one binary does not use is not
//! reported as dead code.

#[macro_use]
pub mod backend;
pub mod cli;
pub mod fault;
pub mod pooler;
pub mod skip;
pub mod tmux;
pub mod tui;
pub mod wire;

/// One minute in milliseconds (clock offsets and countdowns).
pub const MIN: i64 = 60_000;

/// A small deterministic pseudo-random source (xorshift64) for tests that act at
/// "random" points and must fail the same way when run again.
pub struct Rand(u64);

impl Rand {
    pub fn seeded(seed: u64) -> Rand {
        Rand(seed | 1)
    }

    /// A number below `m`.
    pub fn below(&mut self, m: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % m
    }
}
