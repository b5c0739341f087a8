//! What the protobuf robustness tests share: a small seeded generator, so that a
//! failure names a reproducible case.

#[allow(dead_code)]
pub mod go_bytes;
#[allow(dead_code)]
pub mod random;

/// xorshift64*: small, seeded, good enough to spread bytes and vary shapes.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
