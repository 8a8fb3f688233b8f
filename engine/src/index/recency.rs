//! The recency path: claims by `valid_from`, newest first.
//!
//! A *base* of `(valid_from, claim)` pairs sorted on rayon, built lazily from a copy of the column
//! captured at rebase (a claim's `valid_from` never changes), plus a persistent ordered *delta* of
//! the claims added since. A query walks both downwards from its upper bound, merging, and stops
//! as soon as it has `limit` claims that pass its filter or leaves its window.

use crate::index::cow::CowVec;
use crate::time::Timestamp;
use rayon::prelude::*;
use std::sync::{Arc, OnceLock};

#[derive(Debug, Default)]
struct Base {
    valid_from: CowVec<Timestamp>,
    upto: u32,
    sorted: OnceLock<Vec<(Timestamp, u32)>>,
}

impl Base {
    fn sorted(&self) -> &[(Timestamp, u32)] {
        self.sorted.get_or_init(|| {
            let mut v: Vec<(Timestamp, u32)> = (0..self.upto).into_par_iter().map(|c| (*self.valid_from.get(c as usize), c)).collect();
            v.par_sort_unstable();
            v
        })
    }
}

/// Claims ordered by valid time.
#[derive(Clone, Debug, Default)]
pub struct RecencyIndex {
    base: Arc<Base>,
    delta: imbl::OrdSet<(Timestamp, u32)>,
}

impl RecencyIndex {
    /// An index whose base is claims `0..upto`.
    pub fn over(valid_from: &CowVec<Timestamp>, upto: usize) -> RecencyIndex {
        RecencyIndex {
            base: Arc::new(Base { valid_from: valid_from.clone(), upto: upto as u32, sorted: OnceLock::new() }),
            delta: imbl::OrdSet::new(),
        }
    }

    /// Records a new claim.
    pub fn insert(&mut self, claim: u32, valid_from: Timestamp) {
        self.delta.insert((valid_from, claim));
    }

    /// Builds the lazy base now.
    pub fn prepare(&self) {
        self.base.sorted();
    }

    /// Up to `limit` claims with `after < valid_from <= until` that pass `accept`, by `valid_from`
    /// descending, then claim id descending.
    pub fn newest(&self, after: Timestamp, until: Timestamp, limit: usize, mut accept: impl FnMut(u32) -> bool) -> Vec<(u32, Timestamp)> {
        let mut out = Vec::new();
        if limit == 0 || until <= after {
            return out;
        }
        let base = self.base.sorted();
        let mut b = base.partition_point(|p| *p <= (until, u32::MAX));
        let mut d = self.delta.range(..=(until, u32::MAX)).rev().peekable();
        loop {
            let from_base = b.checked_sub(1).map(|i| base[i]);
            let next = match (from_base, d.peek().copied()) {
                (Some(x), Some(y)) if x > *y => {
                    b -= 1;
                    x
                }
                (_, Some(y)) => {
                    d.next();
                    *y
                }
                (Some(x), None) => {
                    b -= 1;
                    x
                }
                (None, None) => break,
            };
            if next.0 <= after {
                break;
            }
            if accept(next.1) {
                out.push((next.1, next.0));
                if out.len() == limit {
                    break;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn newest_equals_a_sorted_filter(times in prop::collection::vec(0i64..50, 0..300), split in 0usize..300, after in -5i64..55, width in 0i64..60, limit in 0usize..40, m in 1u32..4) {
            let split = split.min(times.len());
            let col = CowVec::from_vec(times.iter().map(|t| Timestamp(*t)).collect());
            let mut idx = RecencyIndex::over(&col, split);
            for (c, t) in times.iter().enumerate().skip(split) {
                idx.insert(c as u32, Timestamp(*t));
            }
            let until = after + width;
            let got = idx.newest(Timestamp(after), Timestamp(until), limit, |c| c.is_multiple_of(m));
            let mut want: Vec<(u32, Timestamp)> = times.iter().enumerate()
                .filter(|(c, t)| **t > after && **t <= until && (*c as u32).is_multiple_of(m))
                .map(|(c, t)| (c as u32, Timestamp(*t))).collect();
            want.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
            want.truncate(limit);
            prop_assert_eq!(got, want);
        }
    }
}
