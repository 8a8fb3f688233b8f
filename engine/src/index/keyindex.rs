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

/// The sorted keys laid out as a linear-probing table: each key sits at or after its hash's home
/// slot (`hash * homes >> 32`, so homes ascend with hashes), in ascending order, with every slot
/// from a key's home up to the key occupied. A lookup reads from its home slot on: one cache
/// miss, where a directory over a sorted array costs two dependent ones. Eight homes for seven
/// keys (9 bytes per key): a key sits a few slots past its home, and a lookup, found or not,
/// stops at the first key above its hash, never at a free slot, so the load costs little.
#[derive(Debug)]
struct Base {
    /// `hash << 32 | id` or `EMPTY`; the last slot is always `EMPTY`, which ends every scan.
    slots: Vec<u64>,
    /// Home slots: the table's size before its overflow at the end.
    homes: u64,
    /// Keys held.
    len: usize,
}

/// A free slot. No key equals it: ids are row ids, below `u32::MAX`.
const EMPTY: u64 = u64::MAX;

impl Default for Base {
    fn default() -> Base {
        Base { slots: vec![EMPTY], homes: 1, len: 0 }
    }
}

impl Base {
    /// The table of ascending `keys`. A key equal to `EMPTY` (row `u32::MAX`, which no table
    /// has; only a damaged file could hold it) is left out.
    fn new(keys: &[u64]) -> Base {
        let homes = (keys.len() * 8 / 7).max(1);
        let mut slots = vec![EMPTY; homes + 1];
        let (mut next, mut len) = (0, 0);
        for &k in keys.iter().filter(|k| **k != EMPTY) {
            let at = Base::home(homes as u64, (k >> 32) as u32).max(next);
            if at + 1 >= slots.len() {
                slots.resize(at + 2, EMPTY);
            }
            slots[at] = k;
            next = at + 1;
            len += 1;
        }
        Base { slots, homes: homes as u64, len }
    }

    fn home(homes: u64, hash: u32) -> usize {
        ((u64::from(hash) * homes) >> 32) as usize
    }

    /// The keys under `hash`.
    fn range(&self, hash: u32) -> &[u64] {
        let (lo, hi) = (key(hash, 0), key(hash, u32::MAX));
        // Keys of lower hashes pushed past their homes come first; `EMPTY` is above every key.
        let start = self.first_not(Base::home(self.homes, hash), |k| k < lo);
        let end = self.first_not(start, |k| k <= hi && k != EMPTY);
        &self.slots[start..end]
    }

    /// The first slot from `from` on that fails `pass`, which holds for a prefix of the slots
    /// from `from` on and never for `EMPTY`: from a key's home the keys ascend to the first free
    /// slot, and every key after it is above all before. The usual answer is within a slot or
    /// two; a long run (one hash held by many ids) is crossed in doubling steps and a binary
    /// search, so no lookup scans it.
    fn first_not(&self, from: usize, pass: impl Fn(u64) -> bool) -> usize {
        let last = self.slots.len() - 1;
        let (mut lo, mut step) = (from, 1);
        loop {
            // Every slot before `lo` passes.
            let probe = (lo + step - 1).min(last);
            if !pass(self.slots[probe]) {
                return lo + self.slots[lo..probe].partition_point(|k| pass(*k));
            }
            lo = probe + 1;
            step *= 2;
        }
    }

    /// The keys, ascending.
    fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots.iter().copied().filter(|k| *k != EMPTY)
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
        KeyIndex { base: Arc::new(Base::new(&keys)), ..KeyIndex::default() }
    }

    /// How many entries are held (a key added twice may count twice).
    pub fn len(&self) -> usize {
        self.base.len + self.overlay.len()
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.base.len == 0 && self.overlay.is_empty()
    }

    /// Adds `id` under `hash`. Folds the overlay into the base once it reaches a sixteenth of it
    /// (and 8,192 keys): the base answers with one cache miss from its home slot,
    /// while each run costs a binary search, so the overlay is kept small enough to stay in
    /// cache; the fold is one linear merge, a few bytes per key added.
    pub fn insert(&mut self, hash: u32, id: u32) {
        self.overlay.push(key(hash, id));
        if self.overlay.len() >= 8_192 && self.overlay.len() >= self.base.len / 16 {
            self.compact();
        }
    }

    fn compact(&mut self) {
        let mut added: Vec<u64> = self.overlay.iter().copied().collect();
        added.sort_unstable();
        let base: Vec<u64> = self.base.keys().collect();
        *self = KeyIndex::from_sorted_keys(crate::index::runs::merge(&base, &added));
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
    pub fn for_each_key(&self, f: impl FnMut(u64)) {
        self.base.keys().chain(self.overlay.iter().copied()).for_each(f);
    }

    /// Heap bytes.
    pub fn heap_bytes(&self) -> usize {
        (self.base.slots.len() + self.overlay.len()) * 8
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

        /// The base's table: any hashes (clustered or spread, at the extremes, one hash held by
        /// many ids so keys are pushed far past their homes), every lookup and count equals the
        /// naive multimap's, and the keys come back ascending.
        #[test]
        fn base_table_matches_a_naive_multimap(
            pairs in proptest::collection::vec((any::<u32>(), 0u32..100), 0..3000),
            crowds in proptest::collection::vec((any::<u32>(), 1u32..400), 0..4),
            probes in proptest::collection::vec(any::<u32>(), 0..50),
        ) {
            let mut pairs = pairs;
            // Neighbouring hashes and the extremes, so runs of equal hashes meet.
            let extra: Vec<(u32, u32)> = pairs.iter().take(50).map(|(h, id)| (h.wrapping_add(1), *id)).collect();
            pairs.extend(extra);
            pairs.extend([(0, 1), (u32::MAX, 2), (u32::MAX, 3), (u32::MAX - 1, u32::MAX - 1)]);
            for (h, n) in &crowds {
                pairs.extend((0..*n).map(|id| (*h, id)));
            }
            let idx = KeyIndex::from_pairs(pairs.clone());
            let naive: std::collections::BTreeSet<(u32, u32)> = pairs.iter().copied().collect();
            let neighbours = pairs.iter().flat_map(|p| [p.0, p.0.wrapping_sub(1), p.0.wrapping_add(1)]);
            for h in neighbours.chain(probes) {
                let mut got = Vec::new();
                idx.candidates(h, |id| got.push(id));
                let want: Vec<u32> = naive.range((h, 0)..=(h, u32::MAX)).map(|p| p.1).collect();
                prop_assert_eq!(idx.count(h), want.len());
                prop_assert_eq!(got, want);
            }
            let mut keys = Vec::new();
            idx.for_each_key(|k| keys.push(k));
            let want: Vec<u64> = naive.iter().map(|(h, id)| key(*h, *id)).collect();
            prop_assert_eq!(keys, want);
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

    /// The one key the table cannot hold (`EMPTY`, row `u32::MAX`: no table has it, a damaged
    /// snapshot might) is left out; the others are found and the table stays well formed.
    #[test]
    fn a_key_equal_to_the_free_slot_is_left_out() {
        let idx = KeyIndex::from_sorted_keys(vec![key(7, 1), key(u32::MAX, 3), key(u32::MAX, u32::MAX)]);
        assert_eq!(idx.len(), 2);
        let found = |h| {
            let mut v = Vec::new();
            idx.candidates(h, |id| v.push(id));
            v
        };
        assert_eq!((found(7), found(u32::MAX), found(0)), (vec![1], vec![3], vec![]));
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
