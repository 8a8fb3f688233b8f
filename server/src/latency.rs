//! Request latency as a Prometheus histogram kept as counts: per interface, how many requests
//! ended within each bucket, and their sum. Recording one is an index and an add into the
//! connection's own counts (`Counts`), folded into the shared ones per batch; the Prometheus
//! exporter's histogram kept every sample, with a clock read, until its upkeep, which cost a
//! pipelined `PING` more than the command itself.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

/// The buckets' upper bounds in microseconds (inclusive, as Prometheus's `le`): 50 µs to 10 s.
pub const BUCKETS_MICROS: [u64; 14] =
    [50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 500_000, 1_000_000, 10_000_000];

/// The interfaces requests arrive on, in the order the histograms keep them.
pub const INTERFACES: [&str; 3] = ["resp", "http", "mcp"];

/// The family's name and help.
const NAME: &str = "engram_request_duration_seconds";
const HELP: &str = "Request latency, by interface.";

/// One interface's requests by bucket (the last: above every bound) and their sum.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Counts {
    /// Requests per bucket, not cumulative; the last counts those above every bound.
    pub buckets: [u64; BUCKETS_MICROS.len() + 1],
    /// Their total time.
    pub sum_micros: u64,
}

impl Counts {
    /// Counts one request that took `micros`.
    pub fn add(&mut self, micros: u64) {
        let i = BUCKETS_MICROS.partition_point(|&b| b < micros);
        self.buckets[i] += 1;
        self.sum_micros = self.sum_micros.saturating_add(micros);
    }
}

/// The server's histograms, one per interface.
#[derive(Debug, Default)]
pub struct Latencies {
    per_interface: [Shared; INTERFACES.len()],
}

#[derive(Debug, Default)]
struct Shared {
    buckets: [AtomicU64; BUCKETS_MICROS.len() + 1],
    sum_micros: AtomicU64,
}

impl Latencies {
    /// Adds `counts` of `interface` (one of `INTERFACES`; another is ignored).
    pub fn add(&self, interface: &str, counts: &Counts) {
        let Some(h) = INTERFACES.iter().position(|i| *i == interface).map(|i| &self.per_interface[i]) else { return };
        for (shared, &n) in h.buckets.iter().zip(&counts.buckets) {
            if n > 0 {
                shared.fetch_add(n, Ordering::Relaxed);
            }
        }
        h.sum_micros.fetch_add(counts.sum_micros, Ordering::Relaxed);
    }

    /// The family in Prometheus's text format: cumulative buckets, `+Inf`, sum and count.
    pub fn text(&self) -> String {
        let mut out = format!("# HELP {NAME} {HELP}\n# TYPE {NAME} histogram\n");
        for (interface, h) in INTERFACES.iter().zip(&self.per_interface) {
            let mut cumulative = 0;
            for (i, n) in h.buckets.iter().enumerate() {
                cumulative += n.load(Ordering::Relaxed);
                let le = BUCKETS_MICROS.get(i).map_or_else(|| "+Inf".to_owned(), |&b| (b as f64 / 1e6).to_string());
                let _ = writeln!(out, "{NAME}_bucket{{interface=\"{interface}\",le=\"{le}\"}} {cumulative}");
            }
            let sum = h.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
            let _ = writeln!(out, "{NAME}_sum{{interface=\"{interface}\"}} {sum}");
            let _ = writeln!(out, "{NAME}_count{{interface=\"{interface}\"}} {cumulative}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_falls_in_the_first_bucket_whose_bound_it_does_not_pass() {
        let mut c = Counts::default();
        for micros in [0, 50, 51, 100, 10_000_000, 10_000_001] {
            c.add(micros);
        }
        assert_eq!(c.buckets[0], 2, "0 and 50 µs are ≤ 50 µs");
        assert_eq!(c.buckets[1], 2, "51 and 100 µs");
        assert_eq!(c.buckets[BUCKETS_MICROS.len() - 1], 1, "10 s exactly");
        assert_eq!(c.buckets[BUCKETS_MICROS.len()], 1, "above every bound");
        assert_eq!(c.sum_micros, 20_000_202);
    }

    #[test]
    fn the_text_is_cumulative_with_sum_and_count() {
        let l = Latencies::default();
        let mut c = Counts::default();
        for micros in [10, 70, 70, 2_000_000] {
            c.add(micros);
        }
        l.add("http", &c);
        l.add("elsewhere", &c);
        let text = l.text();
        assert!(text.contains("engram_request_duration_seconds_bucket{interface=\"http\",le=\"0.00005\"} 1\n"), "{text}");
        assert!(text.contains("engram_request_duration_seconds_bucket{interface=\"http\",le=\"0.0001\"} 3\n"), "{text}");
        assert!(text.contains("engram_request_duration_seconds_bucket{interface=\"http\",le=\"1\"} 3\n"), "{text}");
        assert!(text.contains("engram_request_duration_seconds_bucket{interface=\"http\",le=\"10\"} 4\n"), "{text}");
        assert!(text.contains("engram_request_duration_seconds_bucket{interface=\"http\",le=\"+Inf\"} 4\n"), "{text}");
        assert!(text.contains("engram_request_duration_seconds_sum{interface=\"http\"} 2.00015\n"), "{text}");
        assert!(text.contains("engram_request_duration_seconds_count{interface=\"http\"} 4\n"), "{text}");
        assert!(text.contains("engram_request_duration_seconds_count{interface=\"resp\"} 0\n"), "{text}");
    }
}
