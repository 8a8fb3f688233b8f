//! A compact hashed index from string keys to row ids, for external ids and entity names.
//!
//! The base is a sorted array of `(hash, id)` pairs (8 bytes per key, built in parallel by a bulk
//! load or a compaction); keys added since live in a small persistent overlay. Entries are
//! candidates only: callers verify each against the row (key text and workspace), which also makes
//! stale entries (a removed alias, an erased workspace) harmless, so nothing is ever deleted here.

use crate::ids::WorkspaceId;
use crate::index::runs::Runs;
use rayon::prelude::*;
use std::sync::Arc;

/// The 32-bit hash of `key` within workspace `ws`.
pub fn key_hash(ws: WorkspaceId, key: &str) -> u32 {
    key_hash_bytes(ws, key.as_bytes())
}

/// `key_hash` of a key held as bytes.
pub fn key_hash_bytes(ws: WorkspaceId, key: &[u8]) -> u32 {
    let mut h = xxhash_rust::xxh3::xxh3_64_with_seed(key, u64::from(ws.0));
    h ^= h >> 32;
    h as u32
}

/// Sorts `hash << 32 | id` keys. Hashes are uniform, so scattering by the top bits into buckets
/// and sorting each small bucket in parallel beats a comparison sort of the whole array.
pub fn sort_hashed_keys(keys: Vec<u64>) -> Vec<u64> {
    const BITS: u32 = 12;
    let n = keys.len();
    if n < 1 << 16 {
        let mut keys = keys;
        keys.sort_unstable();
        return keys;
    }
    let bucket = |k: u64| (k >> (64 - BITS)) as usize;
    let mut starts = vec![0usize; (1 << BITS) + 1];
    for &k in &keys {
        starts[bucket(k) + 1] += 1;
    }
    for i in 0..1 << BITS {
        starts[i + 1] += starts[i];
    }
    let mut out = vec![0u64; n];
    let mut cursor = starts.clone();
    for &k in &keys {
        let b = bucket(k);
        out[cursor[b]] = k;
        cursor[b] += 1;
    }
    drop(keys);
    let mut slices: Vec<&mut [u64]> = Vec::with_capacity(1 << BITS);
    let mut rest: &mut [u64] = &mut out;
    for i in 0..1 << BITS {
        let (head, tail) = rest.split_at_mut(starts[i + 1] - starts[i]);
        slices.push(head);
        rest = tail;
    }
    slices.par_iter_mut().for_each(|s| s.sort_unstable());
    out
}

/// Hash → candidate ids: a sorted base plus the keys added since, in [`Runs`] (a write copies a
/// few KB when a published snapshot shares them, instead of a path of trie nodes per key).
#[derive(Clone, Debug, Default)]
pub struct KeyIndex {
    base: Arc<Base>,
    overlay: Runs<u64>,
}

/// The sorted keys with a directory over their hashes' top bits: hashes are uniform, so a bucket
/// holds a handful of keys and a lookup costs one or two cache misses instead of a binary search
/// across the whole array (half a byte per key).
#[derive(Debug, Default)]
struct Base {
    /// `hash << 32 | id`, ascending.
    keys: Vec<u64>,
    /// `dir[b]` = the first key whose hash's top `bits` bits are at least `b`; `2^bits + 1` entries.
    dir: Vec<u32>,
    bits: u32,
}

impl Base {
    fn new(keys: Vec<u64>) -> Base {
        // About eight keys per bucket.
        let bits = (keys.len() / 8).max(1).ilog2().min(24);
        let mut dir = vec![0u32; (1usize << bits) + 1];
        for k in &keys {
            dir[Base::bucket(bits, (k >> 32) as u32) + 1] += 1;
        }
        for b in 1..dir.len() {
            dir[b] += dir[b - 1];
        }
        Base { keys, dir, bits }
    }

    fn bucket(bits: u32, hash: u32) -> usize {
        if bits == 0 {
            0
        } else {
            (hash >> (32 - bits)) as usize
        }
    }

    /// The keys under `hash`.
    fn range(&self, hash: u32) -> &[u64] {
        if self.keys.is_empty() {
            return &[];
        }
        let b = Base::bucket(self.bits, hash);
        let bucket = &self.keys[self.dir[b] as usize..self.dir[b + 1] as usize];
        let lo = bucket.partition_point(|k| (k >> 32) < u64::from(hash));
        let n = bucket[lo..].partition_point(|k| (k >> 32) <= u64::from(hash));
        &bucket[lo..lo + n]
    }
}

fn key(hash: u32, id: u32) -> u64 {
    u64::from(hash) << 32 | u64::from(id)
}

impl KeyIndex {
    /// Builds an index from `(hash, id)` pairs.
    pub fn from_pairs(pairs: Vec<(u32, u32)>) -> KeyIndex {
        let keys: Vec<u64> = pairs.into_iter().map(|(h, id)| key(h, id)).collect();
        KeyIndex::from_sorted_keys(sort_hashed_keys(keys))
    }

    /// Builds an index from ascending `hash << 32 | id` keys (duplicates are dropped).
    pub fn from_sorted_keys(mut keys: Vec<u64>) -> KeyIndex {
        debug_assert!(keys.windows(2).all(|w| w[0] <= w[1]));
        keys.dedup();
        KeyIndex { base: Arc::new(Base::new(keys)), ..KeyIndex::default() }
    }

    /// How many entries are held (a key added twice may count twice).
    pub fn len(&self) -> usize {
        self.base.keys.len() + self.overlay.len()
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.base.keys.is_empty() && self.overlay.is_empty()
    }

    /// Adds `id` under `hash`. Folds the overlay into the base once it reaches a sixteenth of it
    /// (and 8,192 keys): the base answers with one or two cache misses through its directory,
    /// while each run costs a binary search, so the overlay is kept small enough to stay in
    /// cache; the fold is one linear merge, a few bytes per key added.
    pub fn insert(&mut self, hash: u32, id: u32) {
        self.overlay.push(key(hash, id));
        if self.overlay.len() >= 8_192 && self.overlay.len() >= self.base.keys.len() / 16 {
            self.compact();
        }
    }

    fn compact(&mut self) {
        let mut added: Vec<u64> = self.overlay.iter().copied().collect();
        added.sort_unstable();
        *self = KeyIndex::from_sorted_keys(crate::index::runs::merge(&self.base.keys, &added));
    }

    /// Calls `f` with each candidate id for `hash`: base first, then the overlay oldest first.
    /// An id may be reported more than once.
    pub fn candidates(&self, hash: u32, mut f: impl FnMut(u32)) {
        self.base.range(hash).iter().for_each(|k| f(*k as u32));
        self.overlay.for_each_in(&key(hash, 0), &key(hash, u32::MAX), |k| f(*k as u32));
    }

    /// How many candidates `candidates` gives for `hash` (counted, not read: two binary searches
    /// per run), what a planner weighs one lookup against another by.
    pub fn count(&self, hash: u32) -> usize {
        self.base.range(hash).len() + self.overlay.count_in(&key(hash, 0), &key(hash, u32::MAX))
    }

    /// The first candidate satisfying `verify`.
    pub fn find(&self, hash: u32, mut verify: impl FnMut(u32) -> bool) -> Option<u32> {
        let mut found = None;
        self.candidates(hash, |id| {
            if found.is_none() && verify(id) {
                found = Some(id);
            }
        });
        found
    }

    /// Calls `f` for every `hash << 32 | id` key held (possibly more than once).
    pub fn for_each_key(&self, mut f: impl FnMut(u64)) {
        self.base.keys.iter().chain(self.overlay.iter()).for_each(|k| f(*k));
    }

    /// Heap bytes.
    pub fn heap_bytes(&self) -> usize {
        (self.base.keys.len() + self.overlay.len()) * 8 + self.base.dir.len() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        #[test]
        fn bucket_sort_sorts(keys in proptest::collection::vec(any::<u64>(), 0..5000), big in any::<bool>()) {
            let mut keys = keys;
            if big {
                // Cross the bucket threshold with spread-out keys.
                keys.extend((0..70_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
            }
            let mut want = keys.clone();
            want.sort_unstable();
            prop_assert_eq!(sort_hashed_keys(keys), want);
        }

        #[test]
        fn finds_every_inserted_key(keys in proptest::collection::vec("[a-c]{1,3}", 0..300), split in 0usize..300) {
            let ws = WorkspaceId(1);
            let split = split.min(keys.len());
            let mut idx = KeyIndex::from_pairs(keys[..split].iter().enumerate().map(|(i, k)| (key_hash(ws, k), i as u32)).collect());
            for (i, k) in keys.iter().enumerate().skip(split) {
                idx.insert(key_hash(ws, k), i as u32);
            }
            for (i, k) in keys.iter().enumerate() {
                let mut all = Vec::new();
                idx.candidates(key_hash(ws, k), |id| all.push(id));
                prop_assert!(all.contains(&(i as u32)));
                // Every candidate whose key matches is reported: the naive reference.
                let want: Vec<u32> = keys.iter().enumerate().filter(|(_, x)| *x == k).map(|(j, _)| j as u32).collect();
                for w in want { prop_assert!(all.contains(&w)); }
            }
        }

        /// The base's directory over hash bits: any hashes (clustered or spread, at bucket
        /// edges), every lookup equals the naive multimap's.
        #[test]
        fn base_directory_matches_a_naive_multimap(
            pairs in proptest::collection::vec((any::<u32>(), 0u32..100), 0..3000),
            probes in proptest::collection::vec(any::<u32>(), 0..50),
        ) {
            let mut pairs = pairs;
            // Neighbouring hashes and the extremes, so buckets split runs of equal hashes.
            let extra: Vec<(u32, u32)> = pairs.iter().take(50).map(|(h, id)| (h.wrapping_add(1), *id)).collect();
            pairs.extend(extra);
            pairs.extend([(0, 1), (u32::MAX, 2), (u32::MAX, 3)]);
            let idx = KeyIndex::from_pairs(pairs.clone());
            let naive: std::collections::BTreeSet<(u32, u32)> = pairs.iter().copied().collect();
            for h in pairs.iter().map(|p| p.0).chain(probes) {
                let mut got = Vec::new();
                idx.candidates(h, |id| got.push(id));
                let want: Vec<u32> = naive.range((h, 0)..=(h, u32::MAX)).map(|p| p.1).collect();
                prop_assert_eq!(got, want);
            }
        }

        /// Many tails sealed into runs, runs merged, repeated inserts, snapshots taken between
        /// inserts (shared tails), and a compaction: candidates equal the naive multimap's set,
        /// in every snapshot.
        #[test]
        fn overlay_runs_match_a_naive_multimap(
            ops in proptest::collection::vec((0u32..64, 0u32..5000), 0..3000),
            base in proptest::collection::vec((0u32..64, 0u32..5000), 0..200),
            every in 1usize..400,
        ) {
            let mut idx = KeyIndex::from_pairs(base.clone());
            let mut naive: std::collections::BTreeSet<(u32, u32)> = base.into_iter().collect();
            let mut snaps = Vec::new();
            for (i, (h, id)) in ops.into_iter().enumerate() {
                idx.insert(h, id);
                naive.insert((h, id));
                if i % every == 0 {
                    snaps.push((idx.clone(), naive.clone()));
                }
            }
            snaps.push((idx, naive));
            for (idx, naive) in &snaps {
                for h in 0..64 {
                    let mut got = Vec::new();
                    idx.candidates(h, |id| got.push(id));
                    got.sort_unstable();
                    got.dedup();
                    let want: Vec<u32> = naive.range((h, 0)..=(h, u32::MAX)).map(|p| p.1).collect();
                    prop_assert_eq!(got, want);
                }
                let mut keys = Vec::new();
                idx.for_each_key(|k| keys.push(k));
                keys.sort_unstable();
                keys.dedup();
                prop_assert_eq!(keys.len(), naive.len());
            }
        }
    }

    #[test]
    fn compaction_folds_the_overlay_into_the_base() {
        let mut idx = KeyIndex::default();
        let mut before = None;
        for i in 0..70_000u32 {
            idx.insert(i.wrapping_mul(2_654_435_761), i);
            if i == 8_000 {
                before = Some(idx.clone()); // shares runs that a later fold replaces
            }
        }
        assert!(idx.overlay.len() < 8_192, "compacted each time it reached 8,192");
        for i in (0..70_000u32).step_by(97) {
            assert_eq!(idx.find(i.wrapping_mul(2_654_435_761), |id| id == i), Some(i));
        }
        let before = before.expect("taken at 8,000");
        for i in (0..10_000u32).step_by(7) {
            assert_eq!(before.find(i.wrapping_mul(2_654_435_761), |id| id == i), (i <= 8_000).then_some(i));
        }
        let mut keys = Vec::new();
        idx.for_each_key(|k| keys.push(k));
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), 70_000);
    }
}
