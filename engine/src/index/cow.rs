//! Copy-on-write columns: the structure that lets one writer prepare the next snapshot while
//! readers keep the last one, without copying whole tables.
//!
//! A `CowVec` is a two-level tree of `Arc`ed leaves plus a short `Arc`ed tail. Cloning it copies
//! two pointers (the shared top array and the tail), so a writer clones the published state in
//! microseconds whatever its size. Appends go to the tail (at most 64 rows, so copying it when a
//! snapshot shares it is cheap) and move into the tree 64 at a time; a write to an older row copies
//! that row's leaf once per transaction. Readers pay three dependent loads per access, of which the
//! top two stay in cache.

use std::sync::Arc;

const LEAF_BITS: u32 = 10;
const LEAF_LEN: usize = 1 << LEAF_BITS;
const GROUP_BITS: u32 = 8;
const GROUP_LEN: usize = 1 << GROUP_BITS;
const ROWS_PER_GROUP_BITS: u32 = LEAF_BITS + GROUP_BITS;
/// Rows kept in the tail before they move into the tree.
const TAIL_MAX: usize = 64;

type Leaf<T> = Arc<Vec<T>>;

/// Appends `value` to a tail that a published snapshot may share (copying it first), which has
/// room for it below `capacity`. The tail is allocated at its full capacity once, not grown by
/// doubling: a copy made for a new snapshot, or a fresh tail, would otherwise reallocate six
/// times per 64 rows.
pub(crate) fn push_to_tail<T: Clone>(tail: &mut Arc<Vec<T>>, value: T, capacity: usize) {
    match Arc::get_mut(tail) {
        Some(own) => {
            own.reserve_exact(capacity - own.len());
            own.push(value);
        }
        None => {
            let mut own = Vec::with_capacity(capacity);
            own.extend_from_slice(tail);
            own.push(value);
            *tail = Arc::new(own);
        }
    }
}
type Group<T> = Arc<Vec<Leaf<T>>>;

/// A persistent, chunked column with O(1)-ish clone and copy-on-write updates.
#[derive(Debug)]
pub struct CowVec<T> {
    /// Shared by clones: a clone copies one pointer, and the first write to a group, or a new
    /// group, copies this array once per state (20 pointers per 5M-row column).
    groups: Arc<[Group<T>]>,
    /// Rows in the tree.
    tree_len: usize,
    /// Rows after the tree.
    tail: Arc<Vec<T>>,
}

impl<T> Clone for CowVec<T> {
    fn clone(&self) -> Self {
        CowVec { groups: self.groups.clone(), tree_len: self.tree_len, tail: self.tail.clone() }
    }
}

impl<T> Default for CowVec<T> {
    fn default() -> Self {
        CowVec { groups: Arc::from([]), tree_len: 0, tail: Arc::new(Vec::new()) }
    }
}

impl<T: Clone> CowVec<T> {
    /// An empty column.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds a column from a vector, moving rows into leaves.
    pub fn from_vec(rows: Vec<T>) -> Self {
        let mut groups = Vec::new();
        let len = rows.len();
        let mut iter = rows.into_iter();
        let mut remaining = len;
        while remaining > 0 {
            let mut group = Vec::with_capacity(GROUP_LEN);
            while remaining > 0 && group.len() < GROUP_LEN {
                let take = remaining.min(LEAF_LEN);
                let mut leaf = Vec::with_capacity(LEAF_LEN);
                leaf.extend(iter.by_ref().take(take));
                remaining -= take;
                group.push(Arc::new(leaf));
            }
            groups.push(Arc::new(group));
        }
        CowVec { groups: groups.into(), tree_len: len, tail: Arc::new(Vec::new()) }
    }

    /// Builds `n` rows on rayon, one leaf per task, without an intermediate vector.
    pub fn build_par(n: usize, row: impl Fn(usize) -> T + Sync + Send) -> Self
    where
        T: Send + Sync,
    {
        use rayon::prelude::*;
        let leaves: Vec<Leaf<T>> = (0..n.div_ceil(LEAF_LEN))
            .into_par_iter()
            .map(|l| Arc::new((l * LEAF_LEN..((l + 1) * LEAF_LEN).min(n)).map(&row).collect::<Vec<T>>()))
            .collect();
        let groups = leaves.chunks(GROUP_LEN).map(|g| Arc::new(g.to_vec())).collect();
        CowVec { groups, tree_len: n, tail: Arc::new(Vec::new()) }
    }

    /// `n` copies of `value` whose full leaves are one shared leaf: a column that a bulk load
    /// fills with one value (no evidence yet, valid forever) costs a single leaf until rows are
    /// written, and a write copies only the leaf it lands in.
    pub fn repeat(n: usize, value: T) -> Self
    where
        T: Send + Sync + PartialEq,
    {
        let row = value.clone();
        CowVec::build_par_sharing(n, value, |_| row.clone())
    }

    /// `build_par` for a column where most rows hold `common` (an end of validity never set, no
    /// evidence yet): every full leaf of only `common` is one shared leaf, as after a bulk load.
    pub fn build_par_sharing(n: usize, common: T, row: impl Fn(usize) -> T + Sync + Send) -> Self
    where
        T: Send + Sync + PartialEq,
    {
        use rayon::prelude::*;
        let shared = Arc::new(vec![common; LEAF_LEN]);
        let common = &shared[0];
        let leaves: Vec<Leaf<T>> = (0..n.div_ceil(LEAF_LEN))
            .into_par_iter()
            .map(|l| {
                let rows = l * LEAF_LEN..((l + 1) * LEAF_LEN).min(n);
                if rows.len() == LEAF_LEN && rows.clone().all(|i| row(i) == *common) {
                    shared.clone()
                } else {
                    Arc::new(rows.map(&row).collect::<Vec<T>>())
                }
            })
            .collect();
        let groups = leaves.chunks(GROUP_LEN).map(|g| Arc::new(g.to_vec())).collect();
        CowVec { groups, tree_len: n, tail: Arc::new(Vec::new()) }
    }

    /// Appends `n` copies of `value` (sharing one leaf when this column is empty).
    pub fn extend_repeat(&mut self, n: usize, value: T)
    where
        T: Send + Sync + PartialEq,
    {
        if self.is_empty() {
            *self = CowVec::repeat(n, value);
        } else {
            for _ in 0..n {
                self.push(value.clone());
            }
        }
    }

    /// Appends `n` rows built on rayon (leaf-parallel when this column is empty).
    pub fn extend_par(&mut self, n: usize, row: impl Fn(usize) -> T + Sync + Send)
    where
        T: Send + Sync,
    {
        if self.is_empty() {
            *self = CowVec::build_par(n, row);
        } else {
            for i in 0..n {
                self.push(row(i));
            }
        }
    }

    /// Number of rows.
    #[inline]
    pub fn len(&self) -> usize {
        self.tree_len + self.tail.len()
    }

    /// True when there are no rows.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The row at `i`. Panics when out of bounds: ids are checked before they reach a column.
    #[inline]
    pub fn get(&self, i: usize) -> &T {
        if i >= self.tree_len {
            return &self.tail[i - self.tree_len];
        }
        &self.groups[i >> ROWS_PER_GROUP_BITS][(i >> LEAF_BITS) & (GROUP_LEN - 1)][i & (LEAF_LEN - 1)]
    }

    /// The row at `i`, or `None` past the end.
    #[inline]
    pub fn try_get(&self, i: usize) -> Option<&T> {
        (i < self.len()).then(|| self.get(i))
    }

    /// A mutable reference to row `i`, copying its leaf (or the tail) if a snapshot shares it.
    pub fn get_mut(&mut self, i: usize) -> &mut T {
        assert!(i < self.len(), "row {i} out of {}", self.len());
        if i >= self.tree_len {
            return &mut Arc::make_mut(&mut self.tail)[i - self.tree_len];
        }
        let group = Arc::make_mut(&mut Arc::make_mut(&mut self.groups)[i >> ROWS_PER_GROUP_BITS]);
        let leaf = Arc::make_mut(&mut group[(i >> LEAF_BITS) & (GROUP_LEN - 1)]);
        &mut leaf[i & (LEAF_LEN - 1)]
    }

    /// Sets row `i`.
    pub fn set(&mut self, i: usize, value: T) {
        *self.get_mut(i) = value;
    }

    /// Appends a row.
    pub fn push(&mut self, value: T) {
        push_to_tail(&mut self.tail, value, TAIL_MAX);
        if self.tail.len() == TAIL_MAX {
            self.flush_tail();
        }
    }

    /// Moves the tail into the tree, a leaf's worth of rows at a time (the tail never spans
    /// more than two leaves, since it holds fewer rows than a leaf).
    fn flush_tail(&mut self) {
        let tail = std::mem::replace(&mut self.tail, Arc::new(Vec::new()));
        let rows = Arc::try_unwrap(tail).unwrap_or_else(|shared| (*shared).clone());
        let mut rest = &rows[..];
        while !rest.is_empty() {
            let room = LEAF_LEN - (self.tree_len & (LEAF_LEN - 1));
            let (now, later) = rest.split_at(room.min(rest.len()));
            self.extend_tree_leaf(now);
            rest = later;
        }
    }

    /// Appends `rows` (which fit in the last leaf, or start a new one) to the tree.
    fn extend_tree_leaf(&mut self, rows: &[T]) {
        let i = self.tree_len;
        debug_assert!(rows.len() <= LEAF_LEN - (i & (LEAF_LEN - 1)));
        if i & ((1 << ROWS_PER_GROUP_BITS) - 1) == 0 {
            let mut groups = self.groups.to_vec();
            groups.push(Arc::new(Vec::with_capacity(GROUP_LEN)));
            self.groups = groups.into();
        }
        let groups = Arc::make_mut(&mut self.groups);
        let group = Arc::make_mut(groups.last_mut().expect("a group exists after the push above"));
        if i & (LEAF_LEN - 1) == 0 {
            group.push(Arc::new(Vec::with_capacity(LEAF_LEN)));
        }
        let leaf = group.last_mut().expect("a leaf exists after the push above");
        if Arc::get_mut(leaf).is_none() {
            // Shared with a snapshot: copy it once, at its full size (`make_mut` would copy it
            // at its length and the pushes after would reallocate it by doubling).
            let mut own = Vec::with_capacity(LEAF_LEN);
            own.extend_from_slice(leaf);
            *leaf = Arc::new(own);
        }
        Arc::get_mut(leaf).expect("the leaf was made unique above").extend_from_slice(rows);
        self.tree_len += rows.len();
    }

    /// Iterates rows in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.leaves().flat_map(<[T]>::iter)
    }

    /// Rows `range` in order, read a leaf slice at a time (a scan without `get`'s three lookups
    /// per row).
    pub fn rows(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = &T> + '_ {
        let (mut at, end) = (range.start, range.end.min(self.len()));
        std::iter::from_fn(move || {
            if at >= end {
                return None;
            }
            let slice = if at >= self.tree_len {
                &self.tail[at - self.tree_len..end - self.tree_len]
            } else {
                let leaf = &self.groups[at >> ROWS_PER_GROUP_BITS][(at >> LEAF_BITS) & (GROUP_LEN - 1)];
                let from = at & (LEAF_LEN - 1);
                &leaf[from..leaf.len().min(from + end - at)]
            };
            at += slice.len().max(1);
            Some(slice)
        })
        .flatten()
    }

    /// The leaves (then the tail) as slices, in order: for scans that want contiguous memory.
    pub fn leaves(&self) -> impl Iterator<Item = &[T]> + '_ {
        self.groups.iter().flat_map(|g| g.iter()).map(|l| l.as_slice()).chain(std::iter::once(self.tail.as_slice()))
    }

    /// Approximate heap bytes held by this column (leaf payloads, a shared leaf once, and
    /// pointer arrays).
    pub fn heap_bytes(&self) -> usize {
        let mut seen = std::collections::HashSet::new();
        let leaves = self.groups.iter().flat_map(|g| g.iter());
        let rows: usize = leaves.clone().filter(|l| seen.insert(Arc::as_ptr(l))).map(|l| l.len()).sum::<usize>() + self.tail.len();
        rows * size_of::<T>() + leaves.count() * 8 + self.groups.len() * 8 * GROUP_LEN
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Past one group (262,144 rows): a clone shares the group array; pushes that start a new
    /// group, writes on both sides of a group boundary and in the tail land where they belong,
    /// and clones taken before each keep their rows.
    #[test]
    fn rows_across_groups_stay_where_they_were_written() {
        let per_group = GROUP_LEN * LEAF_LEN;
        let n = per_group + 2 * LEAF_LEN + 5;
        let mut column = CowVec::build_par(n, |i| i as u64);
        assert_eq!(column.groups.len(), 2);
        let before = column.clone();
        assert!(Arc::ptr_eq(&before.groups, &column.groups), "a clone shares the group array");
        let mut want: Vec<u64> = (0..n as u64).collect();
        for i in [0, per_group - 1, per_group, n - 1] {
            column.set(i, u64::MAX - i as u64);
            want[i] = u64::MAX - i as u64;
        }
        assert!(!Arc::ptr_eq(&before.groups, &column.groups), "a write copies the group array");
        let middle = column.clone();
        let middle_want = want.clone();
        // Appends up to and past the next group boundary.
        for k in 0..per_group as u64 {
            column.push(k);
            want.push(k);
        }
        assert_eq!(column.groups.len(), 3);
        column.set(n + 3, 1);
        want[n + 3] = 1;
        let last = want.len() - 1;
        column.set(last, 2);
        want[last] = 2;
        assert_eq!(column.iter().copied().collect::<Vec<_>>(), want);
        assert!(want.iter().enumerate().step_by(997).all(|(i, w)| column.get(i) == w));
        assert_eq!(middle.iter().copied().collect::<Vec<_>>(), middle_want);
        assert_eq!(before.iter().copied().collect::<Vec<_>>(), (0..n as u64).collect::<Vec<_>>());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
        #[test]
        fn behaves_like_a_vec(ops in proptest::collection::vec((0u8..3, 0usize..5000, any::<u32>()), 0..3000), ops_ends in (0usize..4000, 0usize..4000)) {
            let mut reference: Vec<u32> = Vec::new();
            let mut column = CowVec::new();
            let mut snapshots = Vec::new();
            for (kind, at, value) in ops {
                match kind {
                    0 => { reference.push(value); column.push(value); }
                    1 if !reference.is_empty() => {
                        let i = at % reference.len();
                        reference[i] = value;
                        column.set(i, value);
                    }
                    _ => snapshots.push((reference.clone(), column.clone())),
                }
            }
            prop_assert_eq!(column.len(), reference.len());
            prop_assert_eq!(column.iter().copied().collect::<Vec<_>>(), reference.clone());
            // Any range of rows, across leaves and into the tail (an end past the rows stops there).
            let lo = ops_ends.0 % (reference.len() + 1);
            let hi = lo + ops_ends.1 % (reference.len() + 40);
            let want = reference[lo..hi.min(reference.len())].to_vec();
            prop_assert_eq!(column.rows(lo..hi).copied().collect::<Vec<_>>(), want);
            // Earlier clones never see later writes.
            for (r, c) in snapshots {
                prop_assert_eq!(c.iter().copied().collect::<Vec<_>>(), r);
            }
            prop_assert_eq!(CowVec::from_vec(reference.clone()).iter().copied().collect::<Vec<_>>(), reference.clone());
            prop_assert_eq!(CowVec::build_par(reference.len(), |i| reference[i]).iter().copied().collect::<Vec<_>>(), reference.clone());
            // Built from rows that are mostly one value: the same rows, fewer leaves.
            let n = 3 * LEAF_LEN + reference.len();
            let sparse: Vec<u32> = (0..n).map(|i| if i == 7 || i >= 3 * LEAF_LEN { reference.get(i % 3000).copied().unwrap_or(1) } else { 0 }).collect();
            let built = CowVec::build_par_sharing(n, 0, |i| sparse[i]);
            prop_assert_eq!(built.iter().copied().collect::<Vec<_>>(), sparse.clone());
            // Leaves 1 and 2 hold only zeros: one of them is stored.
            prop_assert!(built.heap_bytes() + LEAF_LEN * 4 <= CowVec::from_vec(sparse.clone()).heap_bytes());
            // A repeated column shares its leaves, yet writes and appends land in one row only.
            let mut repeated = CowVec::repeat(reference.len(), 7u32);
            let mut want = vec![7u32; reference.len()];
            let before = repeated.clone();
            for (k, r) in reference.iter().enumerate().step_by(97) {
                repeated.set(k, *r);
                want[k] = *r;
            }
            repeated.push(1);
            want.push(1);
            prop_assert_eq!(repeated.iter().copied().collect::<Vec<_>>(), want);
            prop_assert!(before.iter().all(|v| *v == 7) && before.len() == reference.len());
            let long = CowVec::repeat(n, 7u32);
            prop_assert!(long.heap_bytes() + 2 * LEAF_LEN * 4 <= CowVec::from_vec(vec![7u32; n]).heap_bytes());
            // A column built in bulk (tree length not a multiple of anything) keeps appending correctly.
            let mut bulk = CowVec::from_vec(reference.iter().copied().take(1000).collect());
            let mut want: Vec<u32> = reference.iter().copied().take(1000).collect();
            for k in 0..200u32 {
                bulk.push(k);
                want.push(k);
            }
            prop_assert_eq!(bulk.iter().copied().collect::<Vec<_>>(), want);
        }
    }
}
