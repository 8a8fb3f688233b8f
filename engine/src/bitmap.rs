//! Roaring bitmaps sharded by the high 16 bits of the id, copy-on-write per shard.
//!
//! A plain `RoaringBitmap` would have to be cloned whole on every commit to keep the published
//! snapshot intact. Sharding at the roaring container boundary (65,536 ids) makes a commit copy only
//! the shards it touches, while set algebra still runs on roaring containers shard by shard.

use roaring::RoaringBitmap;
use std::sync::Arc;

const SHARD_BITS: u32 = 16;

/// A set of dense `u32` ids.
#[derive(Clone, Debug, Default)]
pub struct IdSet {
    shards: Vec<Option<Arc<RoaringBitmap>>>,
}

impl IdSet {
    /// The empty set.
    pub fn new() -> IdSet {
        IdSet::default()
    }

    /// Builds a set from ascending or unordered ids.
    pub fn from_ids(ids: impl IntoIterator<Item = u32>) -> IdSet {
        let mut shards: Vec<RoaringBitmap> = Vec::new();
        for id in ids {
            let s = (id >> SHARD_BITS) as usize;
            if shards.len() <= s {
                shards.resize_with(s + 1, RoaringBitmap::new);
            }
            shards[s].insert(id);
        }
        IdSet { shards: shards.into_iter().map(|b| (!b.is_empty()).then(|| Arc::new(b))).collect() }
    }

    /// Builds a set from strictly ascending ids, shard by shard (much faster than inserting).
    pub fn from_sorted(ids: &[u32]) -> IdSet {
        debug_assert!(ids.windows(2).all(|w| w[0] < w[1]));
        let mut shards: Vec<Option<Arc<RoaringBitmap>>> = Vec::new();
        let mut rest = ids;
        while let Some(&first) = rest.first() {
            let s = (first >> SHARD_BITS) as usize;
            let end = rest.partition_point(|id| (id >> SHARD_BITS) as usize == s);
            let bm = RoaringBitmap::from_sorted_iter(rest[..end].iter().copied()).expect("ids are strictly ascending");
            if shards.len() <= s {
                shards.resize(s + 1, None);
            }
            shards[s] = Some(Arc::new(bm));
            rest = &rest[end..];
        }
        IdSet { shards }
    }

    /// `count` sets over the ids `first..first + rows`: id `first + i` joins set `pick(i)`, if
    /// any. Built shard by shard on rayon, straight into roaring containers: no list of millions
    /// of ids is materialized first.
    pub fn partition(rows: usize, count: usize, first: u32, pick: impl Fn(usize) -> Option<usize> + Sync) -> Vec<IdSet> {
        use rayon::prelude::*;
        let mut sets = vec![IdSet::default(); count];
        let end = u64::from(first) + rows as u64;
        if rows == 0 || count == 0 {
            return sets;
        }
        let shards = (u64::from(first) >> SHARD_BITS)..=((end - 1) >> SHARD_BITS);
        let built: Vec<(usize, Vec<(usize, RoaringBitmap)>)> = shards
            .into_par_iter()
            .map_init(
                || (vec![0u32; count + 1], Vec::new()),
                |(starts, order), s| {
                    let lo = (s << SHARD_BITS).max(u64::from(first));
                    let hi = ((s + 1) << SHARD_BITS).min(end);
                    let rows = (lo - u64::from(first)) as usize..(hi - u64::from(first)) as usize;
                    // A counting sort of the shard's rows by set, stable, so each set's ids
                    // stay ascending.
                    starts.fill(0);
                    for i in rows.clone() {
                        if let Some(k) = pick(i) {
                            starts[k + 1] += 1;
                        }
                    }
                    for k in 0..count {
                        starts[k + 1] += starts[k];
                    }
                    order.clear();
                    order.resize(starts[count] as usize, 0u32);
                    let mut cursor = starts.clone();
                    for i in rows {
                        if let Some(k) = pick(i) {
                            order[cursor[k] as usize] = first + i as u32;
                            cursor[k] += 1;
                        }
                    }
                    let sets = (0..count)
                        .filter(|k| starts[k + 1] > starts[*k])
                        .map(|k| {
                            let ids = order[starts[k] as usize..starts[k + 1] as usize].iter().copied();
                            (k, RoaringBitmap::from_sorted_iter(ids).expect("a stable sort keeps ascending ids ascending"))
                        })
                        .collect();
                    (s as usize, sets)
                },
            )
            .collect();
        for (s, shard_sets) in built {
            for (k, bm) in shard_sets {
                let shards = &mut sets[k].shards;
                if shards.len() <= s {
                    shards.resize(s + 1, None);
                }
                shards[s] = Some(Arc::new(bm));
            }
        }
        sets
    }

    /// The set `lo..hi`.
    pub fn from_range(lo: u32, hi: u32) -> IdSet {
        let mut shards: Vec<Option<Arc<RoaringBitmap>>> = Vec::new();
        let mut at = lo;
        while at < hi {
            let s = (at >> SHARD_BITS) as usize;
            let shard_end = (((s as u64) + 1) << SHARD_BITS).min(u64::from(hi)) as u32;
            let mut bm = RoaringBitmap::new();
            bm.insert_range(at..shard_end);
            if shards.len() <= s {
                shards.resize(s + 1, None);
            }
            shards[s] = Some(Arc::new(bm));
            at = shard_end;
        }
        IdSet { shards }
    }

    /// Adds `id`; returns whether it was absent.
    pub fn insert(&mut self, id: u32) -> bool {
        let s = (id >> SHARD_BITS) as usize;
        if self.shards.len() <= s {
            self.shards.resize(s + 1, None);
        }
        if self.shards[s].as_ref().is_some_and(|b| b.contains(id)) {
            return false;
        }
        Arc::make_mut(self.shards[s].get_or_insert_with(Default::default)).insert(id)
    }

    /// Removes `id`; returns whether it was present.
    pub fn remove(&mut self, id: u32) -> bool {
        let s = (id >> SHARD_BITS) as usize;
        match self.shards.get_mut(s) {
            Some(Some(shard)) if shard.contains(id) => {
                let removed = Arc::make_mut(shard).remove(id);
                if shard.is_empty() {
                    self.shards[s] = None;
                }
                removed
            }
            _ => false,
        }
    }

    /// Sets membership of `id` to `member`.
    pub fn set(&mut self, id: u32, member: bool) {
        if member {
            self.insert(id);
        } else {
            self.remove(id);
        }
    }

    /// Membership test.
    #[inline]
    pub fn contains(&self, id: u32) -> bool {
        matches!(self.shards.get((id >> SHARD_BITS) as usize), Some(Some(b)) if b.contains(id))
    }

    /// Number of members.
    pub fn len(&self) -> u64 {
        self.shards.iter().flatten().map(|b| b.len()).sum()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.shards.iter().flatten().all(|b| b.is_empty())
    }

    /// Ascending members.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.shards.iter().flatten().flat_map(|b| b.iter())
    }

    /// The members of `self` that `old` lacks, ascending. Meant for `old` an earlier version of
    /// the same set: shards the two still share (untouched since) are skipped unread, so the
    /// cost is that of the shards that changed.
    pub fn added_since(&self, old: &IdSet) -> Vec<u32> {
        let mut out = Vec::new();
        for (s, shard) in self.shards.iter().enumerate() {
            let Some(shard) = shard else { continue };
            match old.shards.get(s).and_then(Option::as_ref) {
                Some(o) if Arc::ptr_eq(o, shard) => {}
                Some(o) => out.extend((shard.as_ref() - o.as_ref()).iter()),
                None => out.extend(shard.iter()),
            }
        }
        out
    }

    /// `self ∩ other`.
    #[must_use]
    pub fn and(&self, other: &IdSet) -> IdSet {
        let shards = self
            .shards
            .iter()
            .zip(other.shards.iter())
            .map(|(a, b)| match (a, b) {
                (Some(a), Some(b)) => {
                    let r = a.as_ref() & b.as_ref();
                    (!r.is_empty()).then(|| Arc::new(r))
                }
                _ => None,
            })
            .collect();
        IdSet { shards }
    }

    /// `self ∪ other`.
    #[must_use]
    pub fn or(&self, other: &IdSet) -> IdSet {
        let n = self.shards.len().max(other.shards.len());
        let shards = (0..n)
            .map(|i| match (self.shards.get(i).cloned().flatten(), other.shards.get(i).cloned().flatten()) {
                (Some(a), Some(b)) => Some(Arc::new(a.as_ref() | b.as_ref())),
                (Some(a), None) | (None, Some(a)) => Some(a),
                (None, None) => None,
            })
            .collect();
        IdSet { shards }
    }

    /// `self \ other`.
    #[must_use]
    pub fn and_not(&self, other: &IdSet) -> IdSet {
        let shards = self
            .shards
            .iter()
            .enumerate()
            .map(|(i, a)| match (a, other.shards.get(i).and_then(Option::as_ref)) {
                (Some(a), Some(b)) => {
                    let r = a.as_ref() - b.as_ref();
                    (!r.is_empty()).then(|| Arc::new(r))
                }
                (a, _) => a.clone(),
            })
            .collect();
        IdSet { shards }
    }

    /// Approximate heap bytes (roaring serialized size is a good proxy for its footprint).
    pub fn heap_bytes(&self) -> usize {
        self.shards.iter().flatten().map(|b| b.serialized_size()).sum::<usize>() + self.shards.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn ids() -> impl Strategy<Value = Vec<(bool, u32)>> {
        proptest::collection::vec((any::<bool>(), prop_oneof![0u32..300, 0u32..400_000]), 0..400)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        #[test]
        fn matches_a_btreeset(a in ids(), b in ids()) {
            let (mut sa, mut ra) = (IdSet::new(), BTreeSet::new());
            for (ins, id) in a { sa.set(id, ins); if ins { ra.insert(id); } else { ra.remove(&id); } }
            let (mut sb, mut rb) = (IdSet::new(), BTreeSet::new());
            for (ins, id) in b { sb.set(id, ins); if ins { rb.insert(id); } else { rb.remove(&id); } }
            prop_assert_eq!(sa.iter().collect::<Vec<_>>(), ra.iter().copied().collect::<Vec<_>>());
            prop_assert_eq!(sa.len(), ra.len() as u64);
            prop_assert_eq!(sa.and(&sb).iter().collect::<Vec<_>>(), ra.intersection(&rb).copied().collect::<Vec<_>>());
            prop_assert_eq!(sa.or(&sb).iter().collect::<Vec<_>>(), ra.union(&rb).copied().collect::<Vec<_>>());
            prop_assert_eq!(sa.and_not(&sb).iter().collect::<Vec<_>>(), ra.difference(&rb).copied().collect::<Vec<_>>());
            prop_assert_eq!(sa.added_since(&sb), ra.difference(&rb).copied().collect::<Vec<_>>());
            // Against an earlier version of itself: only what was added since.
            let earlier = sa.clone();
            let mut later = sa.clone();
            let mut want = BTreeSet::new();
            for id in rb.iter().take(30) {
                if later.insert(*id) {
                    want.insert(*id);
                }
            }
            prop_assert_eq!(later.added_since(&earlier), want.into_iter().collect::<Vec<_>>());
            for id in ra.iter().take(20) { prop_assert!(sa.contains(*id)); }
            let sorted: Vec<u32> = ra.iter().copied().collect();
            prop_assert_eq!(IdSet::from_sorted(&sorted).iter().collect::<Vec<_>>(), sorted.clone());
            // Partitioning rows by a key matches filtering them one set at a time.
            let first = sorted.first().copied().unwrap_or(0);
            let rows = sorted.last().map_or(0, |l| (l - first) as usize + 1);
            let pick = |i: usize| ra.contains(&(first + i as u32)).then_some(i % 3);
            let parts = IdSet::partition(rows, 3, first, pick);
            for (k, part) in parts.iter().enumerate() {
                let want: Vec<u32> = (0..rows).filter(|i| pick(*i) == Some(k)).map(|i| first + i as u32).collect();
                prop_assert_eq!(part.iter().collect::<Vec<_>>(), want);
            }
            if let (Some(lo), Some(hi)) = (ra.first(), ra.last()) {
                prop_assert_eq!(IdSet::from_range(*lo, *hi).iter().collect::<Vec<_>>(), (*lo..*hi).collect::<Vec<_>>());
            }
        }
    }
}
