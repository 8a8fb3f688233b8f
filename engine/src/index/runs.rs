//! A log-structured sorted multiset: what the key indexes and the keyword index add between
//! rebuilds.
//!
//! New values go to a small sorted *tail*; a full tail becomes a *run*, and runs merge so their
//! sizes grow geometrically by [`FANOUT`]. Two merge policies, as in LSM trees:
//! - *leveled* (the default): runs merge while the one before the newest is at most `FANOUT` times
//!   its size, so there are few runs (four or five for 65,536 values) — for lookups on the write
//!   path (the key indexes), at the price of copying a value about `FANOUT/2` times per level;
//! - *tiered*: `FANOUT` runs of one level merge into one of the next, so a value is copied once
//!   per level, and up to `FANOUT − 1` runs sit at each level — for data written far more often
//!   than read (keyword postings, read by queries only).
//!
//! Cloning is a few reference counts, and a write after a clone copies at most the tail — a few
//! KB — where a persistent hash map copies a path of trie nodes for every key. That difference is
//! most of a small commit's cost (`bench/README.md`, ingest).

use std::sync::Arc;

/// Values in the tail before it becomes a run: small enough that copying it on a snapshot-shared
/// commit, and shifting it on an insert, are cheap.
const TAIL_MAX: usize = 128;

/// Size ratio between run levels (larger: fewer levels, more runs or more copying per level).
const FANOUT: usize = 8;

/// Sorted runs plus a sorted tail. Duplicates across runs are allowed (merging drops them).
#[derive(Clone, Debug)]
pub struct Runs<T> {
    /// Sorted, oldest (largest) first.
    sorted: Vec<Arc<[T]>>,
    /// Under the tiered policy, each run's level (non-increasing); empty when leveled.
    levels: Vec<u8>,
    tiered: bool,
    /// Newest values, ascending, fewer than [`TAIL_MAX`].
    tail: Arc<Vec<T>>,
    len: usize,
}

impl<T> Default for Runs<T> {
    fn default() -> Self {
        Runs { sorted: Vec::new(), levels: Vec::new(), tiered: false, tail: Arc::new(Vec::new()), len: 0 }
    }
}

impl<T> Runs<T> {
    /// An empty multiset under the tiered policy (see the module doc).
    pub fn tiered() -> Self {
        Runs { tiered: true, ..Runs::default() }
    }
}

impl<T: Copy + Ord> Runs<T> {
    /// Values pushed (duplicates dropped by sealing are not subtracted).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds `value`, unless the tail already holds it.
    pub fn push(&mut self, value: T) {
        let Err(at) = self.tail.binary_search(&value) else { return };
        match Arc::get_mut(&mut self.tail) {
            Some(tail) => tail.insert(at, value),
            None => {
                // Shared with a published snapshot: copy once, with room for a full tail.
                let mut tail = Vec::with_capacity(TAIL_MAX);
                tail.extend_from_slice(&self.tail[..at]);
                tail.push(value);
                tail.extend_from_slice(&self.tail[at..]);
                self.tail = Arc::new(tail);
            }
        }
        self.len += 1;
        if self.tail.len() >= TAIL_MAX {
            self.seal();
        }
    }

    fn seal(&mut self) {
        let mut run: Arc<[T]> = std::mem::take(&mut self.tail).as_slice().into();
        if self.tiered {
            self.sorted.push(run);
            self.levels.push(0);
            loop {
                // Levels never increase towards the newest run: equal ends mean equal all along.
                let n = self.levels.len();
                if n < FANOUT || self.levels[n - FANOUT] != self.levels[n - 1] {
                    break;
                }
                let level = self.levels[n - 1];
                // `FANOUT` runs of one level become one of the next: concatenated, then a stable
                // sort, which merges the sorted stretches it finds.
                let mut all: Vec<T> = self.sorted[n - FANOUT..].iter().flat_map(|r| r.iter().copied()).collect();
                all.sort();
                all.dedup();
                self.sorted.truncate(n - FANOUT);
                self.levels.truncate(n - FANOUT);
                self.sorted.push(all.into());
                self.levels.push(level.saturating_add(1));
            }
            return;
        }
        while let Some(prev) = self.sorted.last() {
            if prev.len() > FANOUT * run.len() {
                break;
            }
            run = merge(prev, &run).into();
            self.sorted.pop();
        }
        self.sorted.push(run);
    }

    /// Calls `f` with every value in `lo..=hi`: each run's (ascending) from the oldest, then the
    /// tail's.
    pub fn for_each_in(&self, lo: &T, hi: &T, mut f: impl FnMut(&T)) {
        for run in self.sorted.iter().map(|r| &r[..]).chain(std::iter::once(&self.tail[..])) {
            let from = run.partition_point(|x| x < lo);
            run[from..].iter().take_while(|x| *x <= hi).for_each(&mut f);
        }
    }

    /// The stretch of each run (and of the tail) within `lo..=hi`, each ascending.
    pub fn stretches(&self, lo: &T, hi: &T) -> impl Iterator<Item = &[T]> + '_ {
        let (lo, hi) = (*lo, *hi);
        self.sorted.iter().map(|r| &r[..]).chain(std::iter::once(&self.tail[..])).map(move |run| {
            let from = run.partition_point(|x| *x < lo);
            let to = from + run[from..].partition_point(|x| *x <= hi);
            &run[from..to]
        })
    }

    /// How many values lie in `lo..=hi` (a value held twice counts twice).
    pub fn count_in(&self, lo: &T, hi: &T) -> usize {
        self.stretches(lo, hi).map(<[T]>::len).sum()
    }

    /// Every value held (in no particular order, possibly with duplicates).
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.sorted.iter().flat_map(|r| r.iter()).chain(self.tail.iter())
    }

    #[cfg(test)]
    /// Number of sorted runs (for tests: logarithmic in [`Runs::len`]).
    pub fn run_count(&self) -> usize {
        self.sorted.len()
    }
}

/// Merges two ascending runs into one, dropping duplicates.
pub(crate) fn merge<T: Copy + Ord>(a: &[T], b: &[T]) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        i += usize::from(a[i] == x);
        j += usize::from(b[j] == x);
        out.push(x);
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
        /// Ranges equal a naive ordered set's, in every clone taken along the way (clones share
        /// tails and runs, and later pushes must not leak into them).
        #[test]
        fn ranges_match_a_naive_set(
            values in proptest::collection::vec(0u32..3000, 0..4000),
            every in 1usize..500,
            queries in proptest::collection::vec((0u32..3000, 0u32..200), 1..20),
            tiered in any::<bool>(),
        ) {
            let mut runs = if tiered { Runs::tiered() } else { Runs::default() };
            let mut naive = BTreeSet::new();
            let mut clones = Vec::new();
            for (i, v) in values.iter().enumerate() {
                runs.push(*v);
                naive.insert(*v);
                if i % every == 0 {
                    clones.push((runs.clone(), naive.clone()));
                }
            }
            // Leveled: sizes grow by more than FANOUT from one run to the one before it.
            // Tiered: fewer than FANOUT runs per level.
            let levels = 2 + (runs.len() as f64 / TAIL_MAX as f64).max(1.0).log(FANOUT as f64) as usize;
            let most = if tiered { (FANOUT - 1) * levels } else { levels };
            prop_assert!(runs.run_count() <= most, "{} runs", runs.run_count());
            clones.push((runs, naive));
            for (runs, naive) in &clones {
                for (lo, w) in &queries {
                    let hi = lo + w;
                    let mut got = Vec::new();
                    runs.for_each_in(lo, &hi, |x| got.push(*x));
                    got.sort_unstable();
                    got.dedup();
                    let want: Vec<u32> = naive.range(lo..=&hi).copied().collect();
                    prop_assert_eq!(got, want);
                }
                let mut all: Vec<u32> = runs.iter().copied().collect();
                all.sort_unstable();
                all.dedup();
                prop_assert_eq!(all, naive.iter().copied().collect::<Vec<_>>());
            }
        }
    }
}
