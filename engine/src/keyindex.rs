//! A compact hashed index from string keys to row ids, for external ids and entity names.
//!
//! The base is a sorted array of `(hash, id)` pairs (8 bytes per key, built in parallel by a bulk
//! load or a compaction); keys added since live in a small persistent overlay. Entries are
//! candidates only: callers verify each against the row (key text and workspace), which also makes
//! stale entries (a removed alias, an erased workspace) harmless, so nothing is ever deleted here.

use crate::ids::WorkspaceId;
use rayon::prelude::*;
use std::sync::Arc;

/// The 32-bit hash of `key` within workspace `ws`.
pub fn key_hash(ws: WorkspaceId, key: &str) -> u32 {
    let mut h = xxhash_rust::xxh3::xxh3_64_with_seed(key.as_bytes(), u64::from(ws.0));
    h ^= h >> 32;
    h as u32
}

/// Hash → candidate ids.
#[derive(Clone, Debug, Default)]
pub struct KeyIndex {
    base: Arc<Vec<(u32, u32)>>,
    overlay: imbl::HashMap<u32, Arc<[u32]>>,
    overlay_len: usize,
}

impl KeyIndex {
    /// Builds an index from `(hash, id)` pairs.
    pub fn from_pairs(mut pairs: Vec<(u32, u32)>) -> KeyIndex {
        pairs.par_sort_unstable();
        pairs.dedup();
        KeyIndex { base: Arc::new(pairs), overlay: imbl::HashMap::new(), overlay_len: 0 }
    }

    /// Adds `id` under `hash`. Folds the overlay into the base once it reaches a quarter of it
    /// (and 65,536 entries), so lookups stay one binary search plus one small map probe.
    pub fn insert(&mut self, hash: u32, id: u32) {
        let list = self.overlay.entry(hash).or_insert_with(|| Arc::from(Vec::new()));
        if list.contains(&id) {
            return;
        }
        let mut v = list.to_vec();
        v.push(id);
        *list = Arc::from(v);
        self.overlay_len += 1;
        if self.overlay_len >= 65_536 && self.overlay_len >= self.base.len() / 4 {
            self.compact();
        }
    }

    fn compact(&mut self) {
        let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(self.base.len() + self.overlay_len);
        pairs.extend_from_slice(&self.base);
        for (h, ids) in &self.overlay {
            pairs.extend(ids.iter().map(|id| (*h, *id)));
        }
        *self = KeyIndex::from_pairs(pairs);
    }

    /// Calls `f` with each candidate id for `hash` (base first, then overlay).
    pub fn candidates(&self, hash: u32, mut f: impl FnMut(u32)) {
        let lo = self.base.partition_point(|p| p.0 < hash);
        for p in &self.base[lo..] {
            if p.0 != hash {
                break;
            }
            f(p.1);
        }
        if let Some(ids) = self.overlay.get(&hash) {
            ids.iter().for_each(|id| f(*id));
        }
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

    /// Calls `f` for every `(hash, id)` pair held.
    pub fn for_each_pair(&self, mut f: impl FnMut(u32, u32)) {
        self.base.iter().for_each(|p| f(p.0, p.1));
        for (h, ids) in &self.overlay {
            ids.iter().for_each(|id| f(*h, *id));
        }
    }

    /// Heap bytes (base array; the overlay is small by construction).
    pub fn heap_bytes(&self) -> usize {
        self.base.len() * 8 + self.overlay_len * 48
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
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
    }
}
