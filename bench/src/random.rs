//! A small, fast pseudo-random generator for picking objects (xorshift64*); the
//! quality needed is "spread over the working set", nothing more.

use std::hash::{BuildHasher, Hasher};

/// One worker's generator.
pub struct Rng(u64);

impl Rng {
    /// A generator seeded from the process's random hash keys.
    pub fn new() -> Self {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(0x9e37_79b9_7f4a_7c15);
        Self(hasher.finish() | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}
