//! Seeded English-like sentences of a given length, for the embedder benchmarks.

use rand::{Rng, SeedableRng};

const WORDS: [&str; 64] = [
    "the", "service", "streams", "events", "to", "a", "queue", "and", "billing", "reads", "them", "every", "hour", "while", "auth",
    "checks", "user", "tokens", "against", "cache", "database", "replica", "in", "region", "west", "customer", "asked", "about", "refund",
    "for", "order", "shipped", "late", "agent", "opened", "ticket", "with", "priority", "high", "because", "payment", "failed", "twice",
    "on", "card", "team", "moved", "cluster", "kafka", "kinesis", "after", "outage", "last", "week", "latency", "grew", "during", "peak",
    "traffic", "from", "mobile", "clients", "new", "release",
];

/// `n` sentences of `words` words each, from seed `seed`.
pub fn sentences(n: usize, words: usize, seed: u64) -> Vec<String> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n).map(|_| (0..words).map(|_| WORDS[rng.gen_range(0..WORDS.len())]).collect::<Vec<_>>().join(" ")).collect()
}
