//! A copy-on-write column of strings packed into shared byte buffers.
//!
//! Each leaf holds 1,024 strings as one byte buffer plus end offsets, so a row costs 4 bytes plus
//! its text instead of a 16-byte pointer and a separate allocation, and a bulk load makes one
//! allocation per leaf instead of one per string. Like `CowVec`, clones share leaves; a write
//! copies only the leaf it touches, and appends go to a short tail (copied cheaply when shared)
//! that moves into the leaves 64 rows at a time. The empty string stands for "absent".

use std::sync::Arc;

/// Separates the strings of one packed list row (an entity's aliases). Control characters are
/// refused in names, so it never occurs inside one.
pub(crate) const ALIAS_SEP: char = '\u{1f}';

const LEAF_BITS: u32 = 10;
const LEAF_LEN: usize = 1 << LEAF_BITS;

/// Up to 1,024 strings in one buffer: row `i` is `bytes[ends[i-1]..ends[i]]`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Leaf {
    bytes: String,
    ends: Vec<u32>,
}

impl Leaf {
    /// Number of rows.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Makes room for `bytes` more bytes of text in `rows` more rows.
    pub(crate) fn reserve(&mut self, bytes: usize, rows: usize) {
        self.bytes.reserve(bytes);
        self.ends.reserve(rows);
    }

    /// The rows so far as a leaf of their exact size; this one is emptied, keeping its buffers.
    pub(crate) fn seal(&mut self) -> Leaf {
        let mut ends = std::mem::replace(&mut self.ends, Vec::with_capacity(LEAF_LEN));
        ends.shrink_to_fit();
        let sealed = Leaf { bytes: self.bytes.as_str().to_owned(), ends };
        self.bytes.clear();
        sealed
    }

    /// Bytes of text.
    pub(crate) fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    pub(crate) fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }

    pub(crate) fn push(&mut self, s: &str) {
        self.bytes.push_str(s);
        self.ends.push(u32::try_from(self.bytes.len()).expect("a leaf of 1,024 strings stays under 4 GiB: strings are size-limited"));
    }

    /// Appends rows `from..to` of `other` as one copy of their bytes.
    fn extend_rows(&mut self, other: &Leaf, from: usize, to: usize) {
        if from == to {
            return;
        }
        let start = if from == 0 { 0 } else { other.ends[from - 1] as usize };
        let end = other.ends[to - 1] as usize;
        let base = self.bytes.len() as u64;
        self.bytes.push_str(&other.bytes[start..end]);
        let shift = |e: &u32| {
            u32::try_from(base + u64::from(*e) - start as u64).expect("a leaf of 1,024 strings stays under 4 GiB: strings are size-limited")
        };
        self.ends.extend(other.ends[from..to].iter().map(shift));
    }
}

const TAIL_MAX: usize = 64;
/// Leaves per group: a clone copies one pointer per 262,144 rows, not one per leaf.
const GROUP_BITS: u32 = 8;
const GROUP_LEN: usize = 1 << GROUP_BITS;

type Group = Arc<Vec<Placed>>;

/// A leaf as its group holds it, with where its offsets and its text were when it was placed
/// and its bytes per row: `prefetch` hands the CPU those addresses at once, beside the leaf's
/// own header, instead of after reading it (a cold lookup waits for one miss fewer). They are
/// hints, never read through: one left stale would cost a useless prefetch, nothing else.
#[derive(Clone, Debug)]
struct Placed {
    leaf: Arc<Leaf>,
    ends_at: usize,
    text_at: usize,
    row_bytes: usize,
}

impl Placed {
    fn new(leaf: Arc<Leaf>) -> Placed {
        let mut placed = Placed { leaf, ends_at: 0, text_at: 0, row_bytes: 0 };
        placed.note();
        placed
    }

    /// Notes where the leaf's buffers are now, and its bytes per row.
    fn note(&mut self) {
        let leaf = &self.leaf;
        (self.ends_at, self.text_at) = (leaf.ends.as_ptr().addr(), leaf.bytes.as_ptr().addr());
        self.row_bytes = leaf.bytes.len() / leaf.len().max(1);
    }
}

/// A column of strings.
#[derive(Clone, Debug, Default)]
pub struct StrVec {
    /// Full groups of `GROUP_LEN` leaves, the last one possibly partial; every leaf but the
    /// last holds `LEAF_LEN` rows. Shared by clones, and copied once per state by the first
    /// write to a group or a new group, as in `CowVec`.
    groups: Arc<[Group]>,
    /// Rows in `groups`.
    len: usize,
    /// Rows after the leaves.
    tail: Arc<Leaf>,
}

impl StrVec {
    /// An empty column.
    pub fn new() -> StrVec {
        StrVec::default()
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len + self.tail.ends.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i` (empty when absent).
    #[inline]
    pub fn get(&self, i: usize) -> &str {
        debug_assert!(i < self.len());
        if i >= self.len {
            return self.tail.get(i - self.len);
        }
        self.leaf_of(i).get(i & (LEAF_LEN - 1))
    }

    /// The leaf holding row `i` (one in the leaves).
    #[inline]
    fn leaf_of(&self, i: usize) -> &Leaf {
        &self.placed(i).leaf
    }

    /// The group entry of the leaf holding row `i` (one in the leaves).
    #[inline]
    fn placed(&self, i: usize) -> &Placed {
        &self.groups[i >> (LEAF_BITS + GROUP_BITS)][(i >> LEAF_BITS) & (GROUP_LEN - 1)]
    }

    /// Asks the CPU to start loading row `i`'s leaf header, end offsets and text, the text's
    /// place guessed as if every row of its leaf were equally long. `get` reads the three one
    /// after the other (the offsets' place is in the header, the text's in the offsets); a
    /// lookup about to compare a row overlaps the three misses when the guess lands, as it does
    /// for rows of one shape (numbered ids, UUIDs). A hint: nothing is read through it.
    #[inline]
    pub fn prefetch(&self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        if i < self.len {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let placed = self.placed(i);
            let row = i & (LEAF_LEN - 1);
            let text = std::ptr::without_provenance::<i8>(placed.text_at.wrapping_add(placed.row_bytes.wrapping_mul(row)));
            let ends = std::ptr::without_provenance::<i8>(placed.ends_at.wrapping_add(4 * row));
            // Safety: SSE, which `_mm_prefetch` needs, is part of every x86_64 CPU; a prefetch
            // reads nothing into the program and never faults, whatever the address (the guess
            // may point past the buffer, and a placed address may be stale: none is read).
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(Arc::as_ptr(&placed.leaf).cast());
                _mm_prefetch::<_MM_HINT_T0>(ends);
                _mm_prefetch::<_MM_HINT_T0>(text);
            }
        }
    }

    /// The leaves, in row order.
    fn leaves(&self) -> impl Iterator<Item = &Arc<Leaf>> {
        self.groups.iter().flat_map(|g| g.iter().map(|p| &p.leaf))
    }

    /// Appends a full or last leaf after the others.
    fn push_leaf(&mut self, leaf: Arc<Leaf>) {
        debug_assert_eq!(self.len & (LEAF_LEN - 1), 0);
        if (self.len >> LEAF_BITS) & (GROUP_LEN - 1) == 0 {
            let mut groups = self.groups.to_vec();
            groups.push(Arc::new(Vec::with_capacity(GROUP_LEN)));
            self.groups = groups.into();
        }
        self.len += leaf.len();
        Arc::make_mut(Arc::make_mut(&mut self.groups).last_mut().expect("pushed above")).push(Placed::new(leaf));
    }

    /// Appends a row.
    pub fn push(&mut self, s: &str) {
        // One uniqueness check per push: an owned tail with room takes the row in place.
        if let Some(tail) = Arc::get_mut(&mut self.tail).filter(|t| t.ends.capacity() > 0) {
            tail.push(s);
        } else {
            // A fresh tail, or one a snapshot shares: (copied and) given room for all its rows
            // at once, not regrown by doubling on the next pushes.
            let rows = self.tail.ends.len();
            let needed = self.tail.bytes.len() + s.len();
            // Room for 64 rows as long as the ones so far, up to 16 KB (long texts grow as needed).
            let bytes = (needed.div_ceil(rows + 1).max(8) * TAIL_MAX).min(1 << 14).max(needed);
            let mut own = Leaf { bytes: String::with_capacity(bytes), ends: Vec::with_capacity(TAIL_MAX) };
            own.extend_rows(&self.tail, 0, rows);
            own.push(s);
            self.tail = Arc::new(own);
        }
        if self.tail.ends.len() == TAIL_MAX {
            self.flush_tail();
        }
    }

    /// Moves the tail into the leaves.
    fn flush_tail(&mut self) {
        let tail = std::mem::take(&mut self.tail);
        let mut k = 0;
        while k < tail.ends.len() {
            if self.len & (LEAF_LEN - 1) == 0 {
                self.push_leaf(Arc::new(Leaf { bytes: String::new(), ends: Vec::with_capacity(LEAF_LEN) }));
            }
            let take = (LEAF_LEN - (self.len & (LEAF_LEN - 1))).min(tail.ends.len() - k);
            let start = if k == 0 { 0 } else { tail.ends[k - 1] as usize };
            let added = tail.ends[k + take - 1] as usize - start;
            // The group is copied (256 entries) when a snapshot shares it, once per clone.
            let group = Arc::make_mut(Arc::make_mut(&mut self.groups).last_mut().expect("a leaf was pushed"));
            let placed = group.last_mut().expect("a leaf was pushed");
            let leaf = &mut placed.leaf;
            if Arc::get_mut(leaf).is_none() {
                // Shared with a snapshot: copy it once, with room for a full leaf at its current
                // bytes per row (`make_mut` would copy it at its length, then regrow it).
                let rows = leaf.ends.len() + take;
                let bytes = (leaf.bytes.len() + added).div_ceil(rows) * LEAF_LEN;
                let mut own = Leaf { bytes: String::with_capacity(bytes), ends: Vec::with_capacity(LEAF_LEN) };
                own.bytes.push_str(&leaf.bytes);
                own.ends.extend_from_slice(&leaf.ends);
                *leaf = Arc::new(own);
            }
            Arc::get_mut(leaf).expect("the leaf was made unique above").extend_rows(&tail, k, k + take);
            // Its buffers may have moved as they grew.
            placed.note();
            self.len += take;
            k += take;
        }
    }

    /// Replaces row `i`, rebuilding its leaf (or the tail).
    pub fn set(&mut self, i: usize, s: &str) {
        assert!(i < self.len());
        let rebuilt = |leaf: &Leaf, j: usize| {
            let mut rebuilt = Leaf { bytes: String::with_capacity(leaf.bytes.len() + s.len()), ends: Vec::with_capacity(leaf.ends.len()) };
            for k in 0..leaf.ends.len() {
                rebuilt.push(if k == j { s } else { leaf.get(k) });
            }
            Arc::new(rebuilt)
        };
        if i >= self.len {
            self.tail = rebuilt(&self.tail, i - self.len);
        } else {
            let group = Arc::make_mut(&mut Arc::make_mut(&mut self.groups)[i >> (LEAF_BITS + GROUP_BITS)]);
            let placed = &mut group[(i >> LEAF_BITS) & (GROUP_LEN - 1)];
            *placed = Placed::new(rebuilt(&placed.leaf, i & (LEAF_LEN - 1)));
        }
    }

    /// Builds a column from rows, filling leaves in parallel-friendly chunks.
    pub fn collect_from<'a>(rows: impl IntoIterator<Item = &'a str>) -> StrVec {
        let mut out = StrVec::new();
        for s in rows {
            out.push(s);
        }
        out
    }

    /// Builds a column of `n` rows on rayon, one leaf per task; `row(i, buf)` appends row `i`'s
    /// text to `buf`.
    pub fn build_par(n: usize, row: impl Fn(usize, &mut String) + Sync + Send) -> StrVec {
        use rayon::prelude::*;
        // Each task writes its leaves' text into one scratch buffer it keeps, then copies it out at
        // its exact size: no leaf grows by doubling or is shrunk by a second copy.
        // A full leaf of empty rows (no claim text, no aliases) is one leaf shared by all of them.
        let empty = Arc::new(Leaf { bytes: String::new(), ends: vec![0; LEAF_LEN] });
        let leaves: Vec<Arc<Leaf>> = (0..n.div_ceil(LEAF_LEN))
            .into_par_iter()
            .map_init(String::new, |scratch, l| {
                let rows = l * LEAF_LEN..((l + 1) * LEAF_LEN).min(n);
                let full = rows.len() == LEAF_LEN;
                let mut ends = Vec::with_capacity(rows.len());
                scratch.clear();
                for i in rows {
                    row(i, scratch);
                    ends.push(u32::try_from(scratch.len()).expect("a leaf of 1,024 size-limited strings stays under 4 GiB"));
                }
                if full && scratch.is_empty() {
                    return empty.clone();
                }
                Arc::new(Leaf { bytes: scratch.as_str().to_owned(), ends })
            })
            .collect();
        StrVec::from_leaves(leaves)
    }

    /// A column over shared leaves: every leaf but the last holds exactly 1,024 rows.
    pub(crate) fn from_leaves(mut leaves: Vec<Arc<Leaf>>) -> StrVec {
        // An empty last leaf would sit where the next push expects a new one.
        leaves.retain(|l| l.len() > 0);
        debug_assert!(leaves.iter().rev().skip(1).all(|l| l.len() == LEAF_LEN));
        let len = leaves.iter().map(|l| l.len()).sum();
        let groups = leaves.chunks(GROUP_LEN).map(|g| Arc::new(g.iter().cloned().map(Placed::new).collect())).collect();
        StrVec { groups, len, tail: Arc::default() }
    }

    /// Appends another column's rows (used by bulk loads that build leaves on several threads).
    pub fn extend_from(&mut self, other: &StrVec) {
        if self.tail.ends.is_empty() && self.len & (LEAF_LEN - 1) == 0 {
            // Aligned: share the other column's leaves directly.
            for leaf in other.leaves() {
                self.push_leaf(leaf.clone());
            }
            for k in 0..other.tail.ends.len() {
                self.push(other.tail.get(k));
            }
            return;
        }
        for i in 0..other.len() {
            self.push(other.get(i));
        }
    }

    /// Heap bytes: offsets and text (a leaf shared by several positions counted once).
    pub fn heap_bytes(&self) -> (usize, usize) {
        let mut seen = std::collections::HashSet::new();
        let distinct = self.leaves().filter(|l| seen.insert(Arc::as_ptr(l)));
        let (rows, text) = distinct.fold((self.tail.ends.len(), self.tail.bytes.len()), |(r, t), l| (r + l.ends.len(), t + l.bytes.len()));
        let leaves = self.len.div_ceil(LEAF_LEN);
        (rows * 4 + leaves * 64 + self.groups.len() * GROUP_LEN * size_of::<Placed>(), text)
    }

    /// `n` empty rows whose full leaves are one shared leaf (a bulk load without claim text).
    pub fn empty_rows(n: usize) -> StrVec {
        StrVec::build_par(n, |_, _| ())
    }
}

/// Rows per leaf: bulk builders split work on this boundary so `extend_from` can share leaves.
pub const STRVEC_LEAF_LEN: usize = LEAF_LEN;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `prefetch` is a hint: any row, past the end and on an empty column, leaves every row as
    /// it was (its guessed address may lie outside the leaf, which must not matter).
    #[test]
    fn prefetch_reads_nothing_and_changes_nothing() {
        let empty = StrVec::new();
        empty.prefetch(0);
        empty.prefetch(usize::MAX);
        let rows: Vec<String> = (0..3 * LEAF_LEN + 70).map(|i| "x".repeat(i % 97)).collect();
        let column = StrVec::collect_from(rows.iter().map(String::as_str));
        for i in 0..rows.len() + 5 {
            column.prefetch(i);
        }
        column.prefetch(usize::MAX);
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(column.get(i), r);
        }
    }

    /// Every way a leaf is placed or changed (a build, appends into a leaf a snapshot shares,
    /// a write, another column's leaves) leaves its group entry noting where its buffers are
    /// now: a stale note would not be wrong, but each prefetch through it would be wasted.
    #[test]
    fn placed_addresses_follow_their_leaves() {
        let noted_right = |c: &StrVec| {
            c.groups.iter().flat_map(|g| g.iter()).all(|p| {
                (p.ends_at, p.text_at, p.row_bytes)
                    == (p.leaf.ends.as_ptr().addr(), p.leaf.bytes.as_ptr().addr(), p.leaf.bytes.len() / p.leaf.len().max(1))
            })
        };
        let mut column = StrVec::build_par(3 * LEAF_LEN + 100, |i, b| b.push_str(&"row".repeat(i % 7 + 1)));
        assert!(noted_right(&column));
        let mut snapshots = Vec::new();
        for k in 0..2 * LEAF_LEN {
            if k % 200 == 0 {
                snapshots.push(column.clone());
            }
            column.push(&format!("pushed row {k}"));
            assert!(noted_right(&column), "after push {k}");
        }
        for i in [0, 5, LEAF_LEN + 1, column.len() - 1] {
            column.set(i, "a longer text than any row had");
            assert!(noted_right(&column), "after setting row {i}");
        }
        let mut joined = StrVec::new();
        joined.extend_from(&column);
        assert!(noted_right(&joined));
        assert!(snapshots.iter().all(noted_right));
    }

    /// Past one group of leaves (262,144 rows): pushes, writes and appends of another column
    /// land in the right group, and a clone taken before keeps its rows.
    #[test]
    fn rows_across_groups_stay_where_they_were_written() {
        let n = GROUP_LEN * LEAF_LEN + 3 * LEAF_LEN + 17;
        let row = |i: usize| format!("r{i}");
        let mut column = StrVec::build_par(n, |i, b| b.push_str(&row(i)));
        assert_eq!(column.groups.len(), 2);
        let before = column.clone();
        assert!(Arc::ptr_eq(&before.groups, &column.groups), "a clone shares the group array");
        let mut want: Vec<String> = (0..n).map(row).collect();
        for k in 0..2 * LEAF_LEN {
            column.push(&format!("p{k}"));
            want.push(format!("p{k}"));
        }
        for i in [0, LEAF_LEN * GROUP_LEN - 1, LEAF_LEN * GROUP_LEN, n - 1, n + 5] {
            column.set(i, "set");
            want[i] = "set".to_owned();
        }
        let mut joined = StrVec::collect_from(want.iter().take(LEAF_LEN * GROUP_LEN).map(String::as_str));
        let rest = StrVec::collect_from(want.iter().skip(LEAF_LEN * GROUP_LEN).map(String::as_str));
        joined.extend_from(&rest);
        assert_eq!((column.len(), joined.len()), (want.len(), want.len()));
        for (i, w) in want.iter().enumerate() {
            assert_eq!(column.get(i), w, "row {i}");
            assert_eq!(joined.get(i), w, "joined row {i}");
        }
        assert_eq!(before.len(), n);
        for i in 0..n {
            assert_eq!(before.get(i), row(i), "the clone's row {i}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
        #[test]
        fn behaves_like_a_vec_of_strings(ops in proptest::collection::vec((any::<bool>(), 0usize..3000, "[a-zé]{0,6}"), 0..2500)) {
            let mut reference: Vec<String> = Vec::new();
            let mut column = StrVec::new();
            let mut snaps = Vec::new();
            for (push, at, s) in ops {
                if push || reference.is_empty() {
                    if at % 29 == 0 {
                        // A snapshot shares the leaves the next pushes fill.
                        snaps.push((reference.clone(), column.clone()));
                    }
                    reference.push(s.clone());
                    column.push(&s);
                } else {
                    let i = at % reference.len();
                    if at % 64 == 0 {
                        snaps.push((reference.clone(), column.clone()));
                    }
                    reference[i] = s.clone();
                    column.set(i, &s);
                }
            }
            prop_assert_eq!(column.len(), reference.len());
            for (i, r) in reference.iter().enumerate() { prop_assert_eq!(column.get(i), r.as_str()); }
            for (r, c) in snaps { for (i, s) in r.iter().enumerate() { prop_assert_eq!(c.get(i), s.as_str()); } }
            let built = StrVec::build_par(reference.len(), |i, buf| buf.push_str(&reference[i]));
            for (i, r) in reference.iter().enumerate() { prop_assert_eq!(built.get(i), r.as_str()); }
            let mut a = StrVec::collect_from(reference.iter().take(LEAF_LEN).map(String::as_str));
            let b = StrVec::collect_from(reference.iter().skip(LEAF_LEN).map(String::as_str));
            a.extend_from(&b);
            for (i, r) in reference.iter().enumerate() { prop_assert_eq!(a.get(i), r.as_str()); }
            // Empty rows share a leaf, yet a write or an append changes one row only.
            let mut empty = StrVec::empty_rows(reference.len());
            let mut want = vec![String::new(); reference.len()];
            for (k, r) in reference.iter().enumerate().step_by(211) {
                empty.set(k, r);
                want[k] = r.clone();
            }
            empty.push("end");
            want.push("end".to_owned());
            prop_assert_eq!(empty.len(), want.len());
            for (i, w) in want.iter().enumerate() { prop_assert_eq!(empty.get(i), w.as_str()); }
        }
    }
}
