//! A log-structured sorted multiset: what the key indexes and the keyword index add between
//! rebuilds.
//!
//! New values go to a small unsorted *tail*; a full tail is sorted into a *run*, and runs merge
//! while the newest is at least half the one before it (a binary counter), so there are
//! O(log n) runs, each sorted, and a value is copied O(log n) times in all. Cloning is a few
//! reference counts, and a write after a clone copies at most the tail — a few KB — where a
//! persistent hash map copies a path of trie nodes for every key. That difference is most of a
//! small commit's cost (`bench/README.md`, ingest).

use std::sync::Arc;

/// Values in the tail before it is sorted into a run: small enough that copying it on a
/// snapshot-shared commit is cheap, large enough that runs stay few.
const TAIL_MAX: usize = 256;

/// Sorted runs plus an unsorted tail. Duplicates are allowed; sealing a run drops those it sees.
#[derive(Clone, Debug)]
pub struct Runs<T> {
    /// Sorted, oldest (largest) first.
    sorted: Vec<Arc<[T]>>,
    /// Newest values, unsorted, fewer than [`TAIL_MAX`].
    tail: Arc<Vec<T>>,
    len: usize,
}

impl<T> Default for Runs<T> {
    fn default() -> Self {
        Runs { sorted: Vec::new(), tail: Arc::new(Vec::new()), len: 0 }
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
        if self.tail.contains(&value) {
            return;
        }
        match Arc::get_mut(&mut self.tail) {
            Some(tail) => tail.push(value),
            None => {
                // Shared with a published snapshot: copy once, with room for a full tail.
                let mut tail = Vec::with_capacity(TAIL_MAX);
                tail.extend_from_slice(&self.tail);
                tail.push(value);
                self.tail = Arc::new(tail);
            }
        }
        self.len += 1;
        if self.tail.len() >= TAIL_MAX {
            self.seal();
        }
    }

    fn seal(&mut self) {
        let mut run = std::mem::take(&mut self.tail).as_ref().clone();
        run.sort_unstable();
        run.dedup();
        let mut run: Arc<[T]> = run.into();
        while let Some(prev) = self.sorted.last() {
            if prev.len() > 2 * run.len() {
                break;
            }
            run = merge(prev, &run);
            self.sorted.pop();
        }
        self.sorted.push(run);
    }

    /// Calls `f` with every value in `lo..=hi`: each run's (ascending) from the oldest, then the
    /// tail's in insertion order.
    pub fn for_each_in(&self, lo: &T, hi: &T, mut f: impl FnMut(&T)) {
        for run in &self.sorted {
            let from = run.partition_point(|x| x < lo);
            run[from..].iter().take_while(|x| *x <= hi).for_each(&mut f);
        }
        self.tail.iter().filter(|x| lo <= *x && *x <= hi).for_each(f);
    }

    /// Every value held (in no particular order, possibly with duplicates).
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.sorted.iter().flat_map(|r| r.iter()).chain(self.tail.iter())
    }

    /// Number of sorted runs (for tests: logarithmic in [`Runs::len`]).
    pub fn run_count(&self) -> usize {
        self.sorted.len()
    }
}

/// Merges two ascending runs into one, dropping duplicates.
fn merge<T: Copy + Ord>(a: &[T], b: &[T]) -> Arc<[T]> {
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
    out.into()
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
        ) {
            let mut runs = Runs::default();
            let mut naive = BTreeSet::new();
            let mut clones = Vec::new();
            for (i, v) in values.iter().enumerate() {
                runs.push(*v);
                naive.insert(*v);
                if i % every == 0 {
                    clones.push((runs.clone(), naive.clone()));
                }
            }
            prop_assert!(runs.run_count() <= 2 + (runs.len().max(1) as f64).log2() as usize);
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
