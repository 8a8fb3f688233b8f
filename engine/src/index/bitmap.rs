//! Roaring bitmaps sharded by the high 16 bits of the id, copy-on-write per shard, plus a short
//! tail of the newest members.
//!
//! A plain `RoaringBitmap` would have to be cloned whole on every commit to keep the published
//! snapshot intact. Sharding at the roaring container boundary (65,536 ids) makes a commit copy only
//! the shards it touches, while set algebra still runs on roaring containers shard by shard.
//! A dense shard is an 8 KB container, and nearly every commit adds the newest claim id to a few
//! sets; so ids above every shard member go to a sorted tail of at most `TAIL_MAX` ids first
//! (copying it costs a commit 256 bytes), and move into their shard when it is full.

use roaring::RoaringBitmap;
use std::borrow::Cow;
use std::sync::Arc;

const SHARD_BITS: u32 = 16;
/// Bytes of a bitset over one shard.
const SHARD_BYTES: usize = 1 << (SHARD_BITS - 3);

/// Shard `s`'s ids (ascending, all in the shard) as a bitmap. A set of more than a few ids is
/// set in `bits` (a zeroed bitset over the shard, left zeroed) and handed to roaring whole, which
/// costs a few instructions per id where a sorted append costs about a hundred.
fn shard_bitmap(s: u64, ids: &[u32], bits: &mut [u8]) -> RoaringBitmap {
    if ids.len() < 64 {
        return RoaringBitmap::from_sorted_iter(ids.iter().copied()).expect("a stable sort keeps ascending ids ascending");
    }
    for &id in ids {
        let at = (id & 0xffff) as usize;
        bits[at >> 3] |= 1 << (at & 7);
    }
    let set = RoaringBitmap::from_lsb0_bytes((s << SHARD_BITS) as u32, bits);
    bits.fill(0);
    set
}

/// Most ids held in the tail.
const TAIL_MAX: usize = 64;

/// A set of dense `u32` ids.
#[derive(Clone, Debug, Default)]
pub struct IdSet {
    /// Shared as a whole too: a clone (one per commit group) copies two pointers, and the
    /// vector of shard pointers is copied only when a shard of the clone first changes (for ids
    /// appended at the top, once per 64 of them, thanks to the tail).
    shards: Arc<Vec<Option<Arc<RoaringBitmap>>>>,
    /// The newest members, ascending, each above every member of `shards`.
    tail: Arc<Vec<u32>>,
}

/// One shard's container from its strictly ascending ids: run by run when they mostly come in
/// runs (a replay's newest claims are one run per set), else value by value.
fn shard_of_sorted(ids: &[u32]) -> RoaringBitmap {
    let runs = 1 + ids.windows(2).filter(|w| w[1] != w[0] + 1).count();
    if runs * 8 > ids.len() {
        return RoaringBitmap::from_sorted_iter(ids.iter().copied()).expect("ids are strictly ascending");
    }
    let mut bm = RoaringBitmap::new();
    let mut start = 0;
    for i in 1..=ids.len() {
        if i == ids.len() || ids[i] != ids[i - 1] + 1 {
            bm.insert_range(ids[start]..=ids[i - 1]);
            start = i;
        }
    }
    bm
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
        IdSet { shards: Arc::new(shards.into_iter().map(|b| (!b.is_empty()).then(|| Arc::new(b))).collect()), tail: Arc::default() }
    }

    /// Builds a set from strictly ascending ids, shard by shard (much faster than inserting).
    pub fn from_sorted(ids: &[u32]) -> IdSet {
        debug_assert!(ids.windows(2).all(|w| w[0] < w[1]));
        let mut shards: Vec<Option<Arc<RoaringBitmap>>> = Vec::new();
        let mut rest = ids;
        while let Some(&first) = rest.first() {
            let s = (first >> SHARD_BITS) as usize;
            let end = rest.partition_point(|id| (id >> SHARD_BITS) as usize == s);
            let bm = shard_of_sorted(&rest[..end]);
            if shards.len() <= s {
                shards.resize(s + 1, None);
            }
            shards[s] = Some(Arc::new(bm));
            rest = &rest[end..];
        }
        IdSet { shards: Arc::new(shards), tail: Arc::default() }
    }

    /// `count` sets over the ids `first..first + rows`: id `first + i` joins set `pick(i)`, if
    /// any. Built shard by shard on rayon, straight into roaring containers: no list of millions
    /// of ids is materialized first.
    pub fn partition(rows: usize, count: usize, first: u32, pick: impl Fn(usize) -> Option<usize> + Sync) -> Vec<IdSet> {
        IdSet::partition_rows(rows, count, first, |r| r.map(&pick))
    }

    /// `partition` with the sets of a range of rows asked at once: `picks(range)` yields the set
    /// of each row of the range, in order (so columns can be scanned instead of indexed).
    pub fn partition_rows<I: Iterator<Item = Option<usize>>>(
        rows: usize,
        count: usize,
        first: u32,
        picks_of: impl Fn(std::ops::Range<usize>) -> I + Sync,
    ) -> Vec<IdSet> {
        use rayon::prelude::*;
        /// A row in no set.
        const NONE: u32 = u32::MAX;
        let mut sets = vec![IdSet::default(); count];
        debug_assert!(count < NONE as usize, "set numbers fit below NONE");
        let end = u64::from(first) + rows as u64;
        if rows == 0 || count == 0 {
            return sets;
        }
        let shards = (u64::from(first) >> SHARD_BITS)..=((end - 1) >> SHARD_BITS);
        let built: Vec<(usize, Vec<(usize, RoaringBitmap)>)> = shards
            .into_par_iter()
            .map_init(
                || (vec![0u32; count + 1], Vec::new(), Vec::new(), vec![0u8; SHARD_BYTES]),
                |(starts, picks, order, bits), s| {
                    let lo = (s << SHARD_BITS).max(u64::from(first));
                    let hi = ((s + 1) << SHARD_BITS).min(end);
                    let rows = (lo - u64::from(first)) as usize..(hi - u64::from(first)) as usize;
                    // A counting sort of the shard's rows by set, stable, so each set's ids
                    // stay ascending; `pick` runs once per row.
                    starts.fill(0);
                    picks.clear();
                    picks.extend(picks_of(rows.clone()).map(|pick| {
                        pick.map_or(NONE, |k| {
                            starts[k + 1] += 1;
                            k as u32
                        })
                    }));
                    debug_assert_eq!(picks.len(), rows.len(), "one pick per row");
                    for k in 0..count {
                        starts[k + 1] += starts[k];
                    }
                    order.clear();
                    order.resize(starts[count] as usize, 0u32);
                    let mut cursor = starts.clone();
                    for (id, &k) in (lo as u32..).zip(picks.iter()).filter(|(_, k)| **k != NONE) {
                        order[cursor[k as usize] as usize] = id;
                        cursor[k as usize] += 1;
                    }
                    let sets = (0..count)
                        .filter(|k| starts[k + 1] > starts[*k])
                        .map(|k| (k, shard_bitmap(s, &order[starts[k] as usize..starts[k + 1] as usize], bits)))
                        .collect();
                    (s as usize, sets)
                },
            )
            .collect();
        for (s, shard_sets) in built {
            for (k, bm) in shard_sets {
                let shards = Arc::make_mut(&mut sets[k].shards);
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
        IdSet { shards: Arc::new(shards), tail: Arc::default() }
    }

    /// Adds `id`; returns whether it was absent.
    pub fn insert(&mut self, id: u32) -> bool {
        // The common case, a commit adding the newest id: append to the tail, no lookup.
        let newest = match self.tail.last() {
            Some(&last) => id > last,
            None => self.above_shards(id),
        };
        if newest && self.tail.len() < TAIL_MAX {
            self.tail_push(id);
            return true;
        }
        if self.contains(id) {
            return false;
        }
        let mut tail_side = self.tail.first().map_or_else(|| self.above_shards(id), |&first| id > first);
        if tail_side && self.tail.len() >= TAIL_MAX {
            self.flush_tail();
            tail_side = self.above_shards(id);
        }
        if tail_side {
            self.tail_insert(id);
            return true;
        }
        self.shard_insert(id)
    }

    /// Appends `id` (above every member, tail included) to the tail, which has room for it.
    fn tail_push(&mut self, id: u32) {
        crate::index::cow::push_to_tail(&mut self.tail, id, TAIL_MAX);
    }

    /// Adds `id` (absent, above every shard member) to the tail, which has room for it.
    fn tail_insert(&mut self, id: u32) {
        match Arc::get_mut(&mut self.tail) {
            Some(tail) => {
                let at = tail.partition_point(|t| *t < id);
                tail.insert(at, id);
            }
            None => {
                // Shared with a published version: copy it once, with room to grow to its limit.
                let mut own = Vec::with_capacity(TAIL_MAX);
                let at = self.tail.partition_point(|t| *t < id);
                own.extend_from_slice(&self.tail[..at]);
                own.push(id);
                own.extend_from_slice(&self.tail[at..]);
                self.tail = Arc::new(own);
            }
        }
    }

    /// Adds `id` to its shard.
    fn shard_insert(&mut self, id: u32) -> bool {
        let s = (id >> SHARD_BITS) as usize;
        let shards = Arc::make_mut(&mut self.shards);
        if shards.len() <= s {
            shards.resize(s + 1, None);
        }
        Arc::make_mut(shards[s].get_or_insert_with(Default::default)).insert(id)
    }

    /// The largest member of the shards.
    fn shards_max(&self) -> Option<u32> {
        self.shards.iter().rev().flatten().find_map(|b| b.max())
    }

    /// Whether `id` is above every member of the shards.
    fn above_shards(&self, id: u32) -> bool {
        self.shards_max().is_none_or(|m| id > m)
    }

    /// Moves the tail's ids into their shards.
    fn flush_tail(&mut self) {
        let tail = std::mem::take(&mut self.tail);
        let mut rest = &tail[..];
        while let Some(&first) = rest.first() {
            // The tail is ascending and above every shard member: append it shard by shard.
            let s = (first >> SHARD_BITS) as usize;
            let end = rest.partition_point(|id| (id >> SHARD_BITS) as usize == s);
            let shards = Arc::make_mut(&mut self.shards);
            if shards.len() <= s {
                shards.resize(s + 1, None);
            }
            let shard = Arc::make_mut(shards[s].get_or_insert_with(Default::default));
            if shard.append(rest[..end].iter().copied()).is_err() {
                // Unreachable while the invariant holds; inserting keeps the set right regardless.
                shard.extend(rest[..end].iter().copied());
            }
            rest = &rest[end..];
        }
    }

    /// The set with its tail moved into the shards (for set algebra, shard by shard).
    fn flushed(&self) -> Cow<'_, IdSet> {
        if self.tail.is_empty() {
            Cow::Borrowed(self)
        } else {
            let mut all = self.clone();
            all.flush_tail();
            Cow::Owned(all)
        }
    }

    /// Removes `id`; returns whether it was present.
    pub fn remove(&mut self, id: u32) -> bool {
        if let Ok(at) = self.tail.binary_search(&id) {
            Arc::make_mut(&mut self.tail).remove(at);
            return true;
        }
        let s = (id >> SHARD_BITS) as usize;
        if !matches!(self.shards.get(s), Some(Some(shard)) if shard.contains(id)) {
            return false;
        }
        let slot = &mut Arc::make_mut(&mut self.shards)[s];
        let shard = Arc::make_mut(slot.as_mut().expect("checked above"));
        let removed = shard.remove(id);
        if shard.is_empty() {
            *slot = None;
        }
        removed
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
        if self.tail.first().is_some_and(|f| id >= *f) {
            return self.tail.binary_search(&id).is_ok();
        }
        matches!(self.shards.get((id >> SHARD_BITS) as usize), Some(Some(b)) if b.contains(id))
    }

    /// Number of members.
    pub fn len(&self) -> u64 {
        self.shards.iter().flatten().map(|b| b.len()).sum::<u64>() + self.tail.len() as u64
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.tail.is_empty() && self.shards.iter().flatten().all(|b| b.is_empty())
    }

    /// Ascending members.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.shards.iter().flatten().flat_map(|b| b.iter()).chain(self.tail.iter().copied())
    }

    /// The members of `self` that `old` lacks, ascending. Meant for `old` an earlier version of
    /// the same set: shards the two still share (untouched since) are skipped unread, so the
    /// cost is that of the shards that changed (and of the tails).
    pub fn added_since(&self, old: &IdSet) -> Vec<u32> {
        let mut out = Vec::new();
        for (s, shard) in self.shards.iter().enumerate() {
            let Some(shard) = shard else { continue };
            match old.shards.get(s).and_then(Option::as_ref) {
                Some(o) if Arc::ptr_eq(o, shard) => {}
                // Ids that moved from `old`'s tail into this shard are not new.
                Some(o) => out.extend((shard.as_ref() - o.as_ref()).iter().filter(|id| old.tail.binary_search(id).is_err())),
                None => out.extend(shard.iter().filter(|id| old.tail.binary_search(id).is_err())),
            }
        }
        out.extend(self.tail.iter().copied().filter(|id| !old.contains(*id)));
        out
    }

    /// `self ∩ other`.
    #[must_use]
    pub fn and(&self, other: &IdSet) -> IdSet {
        let (a, b) = (self.flushed(), other.flushed());
        let (this, other) = (a.as_ref(), b.as_ref());
        let shards = this
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
        IdSet { shards: Arc::new(shards), tail: Arc::default() }
    }

    /// `self ∪ other`.
    #[must_use]
    pub fn or(&self, other: &IdSet) -> IdSet {
        let (a, b) = (self.flushed(), other.flushed());
        let (this, other) = (a.as_ref(), b.as_ref());
        let n = this.shards.len().max(other.shards.len());
        let shards = (0..n)
            .map(|i| match (this.shards.get(i).cloned().flatten(), other.shards.get(i).cloned().flatten()) {
                (Some(a), Some(b)) => Some(Arc::new(a.as_ref() | b.as_ref())),
                (Some(a), None) | (None, Some(a)) => Some(a),
                (None, None) => None,
            })
            .collect();
        IdSet { shards: Arc::new(shards), tail: Arc::default() }
    }

    /// `self \ other`.
    #[must_use]
    pub fn and_not(&self, other: &IdSet) -> IdSet {
        let (a, b) = (self.flushed(), other.flushed());
        let (this, other) = (a.as_ref(), b.as_ref());
        let shards = this
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
        IdSet { shards: Arc::new(shards), tail: Arc::default() }
    }

    /// Approximate heap bytes (roaring serialized size is a good proxy for its footprint).
    pub fn heap_bytes(&self) -> usize {
        self.shards.iter().flatten().map(|b| b.serialized_size()).sum::<usize>() + self.shards.len() * 8 + self.tail.capacity() * 4
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

        /// Partitions of many rows (sets of every density per shard, so array and bitmap
        /// containers both come from the shard bitset) match filtering the rows one set at a time.
        #[test]
        fn dense_partitions_match_filtering(first in 0u32..140_000, rows in 0usize..200_000, sets in 1usize..6, seed in 0u64..1_000) {
            let pick = |i: usize| {
                let h = (i as u64 ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
                // Set k takes about 1 row in 2^k; some rows join none.
                (0..sets).find(|k| h % (1 << (k + 1)) < 1 << k)
            };
            let parts = IdSet::partition(rows, sets, first, pick);
            for (k, part) in parts.iter().enumerate() {
                let want: Vec<u32> = (0..rows).filter(|i| pick(*i) == Some(k)).map(|i| first + i as u32).collect();
                prop_assert_eq!(part.len(), want.len() as u64);
                prop_assert_eq!(part.iter().collect::<Vec<_>>(), want);
            }
        }

        /// Ids that come in runs (as a replay's newest rows do) build the same set as one by one.
        #[test]
        fn sorted_runs_build_the_same_set(runs in proptest::collection::vec((0u32..70_000, 1u32..3_000), 0..40)) {
            let want: BTreeSet<u32> = runs.iter().flat_map(|&(at, len)| at..at + len).collect();
            let sorted: Vec<u32> = want.iter().copied().collect();
            prop_assert_eq!(IdSet::from_sorted(&sorted).iter().collect::<Vec<_>>(), sorted.clone());
            prop_assert_eq!(IdSet::from_sorted(&sorted).len(), sorted.len() as u64);
        }

        /// Mostly ascending ids, as commits add them, exercise the tail: appends, inserts and
        /// removals around it, flushes into shards, and set algebra and `added_since` across them.
        #[test]
        fn the_tail_matches_a_btreeset(ops in proptest::collection::vec((0u8..10, 0u32..200), 0..600)) {
            let (mut set, mut reference) = (IdSet::new(), BTreeSet::new());
            let mut versions = vec![(set.clone(), reference.clone())];
            let mut next = 65_400u32; // crosses a shard boundary
            for (kind, x) in ops {
                match kind {
                    0..=5 => { next += 1 + x % 3; prop_assert_eq!(set.insert(next), reference.insert(next)); }
                    6 => { let id = next.saturating_sub(x); prop_assert_eq!(set.insert(id), reference.insert(id)); }
                    7 | 8 => { let id = next.saturating_sub(x % 80); prop_assert_eq!(set.remove(id), reference.remove(&id)); }
                    _ => versions.push((set.clone(), reference.clone())),
                }
                if let (Some(first), Some(max)) = (set.tail.first(), set.shards_max()) {
                    prop_assert!(*first > max, "the tail stays above the shards");
                }
                prop_assert!(set.tail.len() <= TAIL_MAX);
            }
            prop_assert_eq!(set.iter().collect::<Vec<_>>(), reference.iter().copied().collect::<Vec<_>>());
            prop_assert_eq!(set.len(), reference.len() as u64);
            prop_assert_eq!(set.is_empty(), reference.is_empty());
            for id in 65_000..next + 2 {
                prop_assert_eq!(set.contains(id), reference.contains(&id), "{}", id);
            }
            for (old, old_ref) in &versions {
                // The older versions are untouched by later writes.
                prop_assert_eq!(old.iter().collect::<Vec<_>>(), old_ref.iter().copied().collect::<Vec<_>>());
                prop_assert_eq!(set.added_since(old), reference.difference(old_ref).copied().collect::<Vec<_>>());
                prop_assert_eq!(set.and(old).iter().collect::<Vec<_>>(), reference.intersection(old_ref).copied().collect::<Vec<_>>());
                prop_assert_eq!(set.or(old).iter().collect::<Vec<_>>(), reference.union(old_ref).copied().collect::<Vec<_>>());
                prop_assert_eq!(set.and_not(old).iter().collect::<Vec<_>>(), reference.difference(old_ref).copied().collect::<Vec<_>>());
                prop_assert_eq!(old.and_not(&set).iter().collect::<Vec<_>>(), old_ref.difference(&reference).copied().collect::<Vec<_>>());
            }
        }
    }
}
