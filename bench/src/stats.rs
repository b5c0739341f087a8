//! Latency samples and their percentiles.

use std::time::Duration;

use serde_json::{Value, json};

/// Latencies of one kind of request, in microseconds.
#[derive(Default)]
pub struct Latencies {
    micros: Vec<u64>,
}

impl Latencies {
    /// Records one sample.
    pub fn push(&mut self, latency: Duration) {
        self.micros
            .push(u64::try_from(latency.as_micros()).unwrap_or(u64::MAX));
    }

    /// Records one sample given in microseconds.
    pub fn push_micros(&mut self, micros: u64) {
        self.micros.push(micros);
    }

    /// Adds another set of samples.
    pub fn merge(&mut self, other: Latencies) {
        self.micros.extend(other.micros);
    }

    /// How many samples there are.
    pub fn len(&self) -> usize {
        self.micros.len()
    }

    /// The `q`-quantile (0..=1) in milliseconds, by the nearest-rank method.
    pub fn quantile_ms(&mut self, q: f64) -> Option<f64> {
        if self.micros.is_empty() {
            return None;
        }
        self.micros.sort_unstable();
        let rank = ((q * self.micros.len() as f64).ceil() as usize).clamp(1, self.micros.len());
        Some(self.micros[rank - 1] as f64 / 1000.0)
    }

    /// `{"p50_ms", "p99_ms", "max_ms"}`.
    pub fn summary(&mut self) -> Value {
        json!({
            "p50_ms": self.quantile_ms(0.50).map(round3),
            "p99_ms": self.quantile_ms(0.99).map(round3),
            "max_ms": self.quantile_ms(1.0).map(round3),
        })
    }
}

/// Rounds to three decimals, to keep the JSON readable.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let mut latencies = Latencies::default();
        for micros in 1..=100 {
            latencies.push_micros(micros * 1000);
        }
        assert_eq!(latencies.quantile_ms(0.5), Some(50.0));
        assert_eq!(latencies.quantile_ms(0.99), Some(99.0));
        assert_eq!(latencies.quantile_ms(1.0), Some(100.0));
        assert_eq!(Latencies::default().quantile_ms(0.5), None);
    }
}
