//! Pauses between attempts to reach a server that refused a connection (full, starting
//! up, unreachable): doubling from one second to [`MAX`], each drawn at random from the
//! upper half of its range, so that the hundreds of clients a full server turned away at
//! once do not all come back at once.

use std::time::Duration;

/// The longest pause.
pub(super) const MAX: Duration = Duration::from_secs(30);
const FIRST: Duration = Duration::from_secs(1);

/// The pauses of one run of failed attempts.
#[derive(Debug, Default)]
pub(super) struct Backoff {
    failures: u32,
    seed: u64,
}

impl Backoff {
    /// The pause after one more failed attempt.
    pub(super) fn next(&mut self) -> Duration {
        let cap = FIRST.saturating_mul(1 << self.failures.min(5)).min(MAX);
        self.failures += 1;
        let half = cap / 2;
        half + half.mul_f64(self.random())
    }

    /// An attempt succeeded: the next failure starts from the shortest pause again.
    pub(super) fn reset(&mut self) {
        self.failures = 0;
    }

    /// A number in [0, 1): xorshift, seeded from the clock and the process id.
    fn random(&mut self) -> f64 {
        if self.seed == 0 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            self.seed = (nanos ^ (u64::from(std::process::id()) << 32)) | 1;
        }
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        (self.seed >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_to_thirty_seconds_each_in_the_upper_half() {
        let mut b = Backoff::default();
        let caps = [1, 2, 4, 8, 16, 30, 30, 30];
        for cap in caps {
            let p = b.next();
            let cap = Duration::from_secs(cap);
            assert!(
                p >= cap / 2 && p <= cap,
                "{p:?} outside {:?}..{cap:?}",
                cap / 2
            );
        }
        b.reset();
        assert!(b.next() <= FIRST);
    }
}
