//! A small seeded generator (splitmix64): a run is repeatable in its choices from its seed
//! (not in its timing, which the machine decides).

/// Pseudo-random numbers from a seed.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }

    /// A number in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1).max(1) as u64) as i64
    }

    /// True with probability `p` (0..=1).
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    /// One of `items`, chosen with probability proportional to `weight`.
    pub(crate) fn weighted<'a, T>(&mut self, items: &'a [T], weight: impl Fn(&T) -> u32) -> &'a T {
        let total: u64 = items.iter().map(|i| u64::from(weight(i))).sum();
        let mut pick = self.below(total);
        for item in items {
            let w = u64::from(weight(item));
            if pick < w {
                return item;
            }
            pick -= w;
        }
        &items[items.len() - 1]
    }

    /// A fresh generator for a thread, derived from this one.
    pub(crate) fn fork(&mut self) -> Rng {
        Rng(self.next_u64())
    }
}
