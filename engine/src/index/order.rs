//! The ordered half of the property index (`PropIndex`): what makes `WHERE n.k > $x` a range
//! read, not a scan.
//!
//! Values of different classes never compare in the language (`1 < 'a'` is null; a date and a
//! date-time neither), so a range is an interval of one class. Each value is placed by an
//! *order word*, a `u64` that never decreases as the value grows within its class: numbers as
//! floats (integers rounded: equal or adjacent words for integers beyond 2^53), strings by their
//! first eight bytes, temporal values by their instant clamped to 64 bits. An interval of words
//! therefore holds every value in the range, and perhaps some just outside its ends that share a
//! word with a bound: entries are candidates, which the caller tests, as with the hash half.

use std::sync::Arc;

use crate::index::runs::{merge, Runs};
use crate::index::scalar::Scalar;

/// The class of numbers (integers and floats compare with each other).
const NUMBER: u8 = 1;
/// The class of strings.
const STRING: u8 = 2;
/// The class of booleans.
const BOOLEAN: u8 = 3;
/// The first of the temporal classes, one per kind (`Temporal::order_key`'s rank added).
const TEMPORAL: u8 = 4;

/// A value's class and order word; `None` for what has no order here (a duration).
pub fn order_word(value: Scalar<'_>) -> Option<(u8, u64)> {
    Some(match value {
        #[allow(clippy::cast_precision_loss)] // Reason: rounding keeps the order (see the module doc).
        Scalar::Int(i) => (NUMBER, float_word(i as f64)),
        Scalar::Float(bits) => (NUMBER, float_word(f64::from_bits(bits))),
        Scalar::Bool(b) => (BOOLEAN, u64::from(b)),
        Scalar::Str(s) => {
            let mut head = [0u8; 8];
            let n = s.len().min(8);
            head[..n].copy_from_slice(&s.as_bytes()[..n]);
            (STRING, u64::from_be_bytes(head))
        }
        Scalar::Temporal(t) => {
            let (rank, instant) = t.order_key()?;
            #[allow(clippy::cast_possible_truncation)] // Reason: clamped to the i64 range first.
            let clamped = instant.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
            (TEMPORAL + rank, (clamped as u64) ^ (1 << 63))
        }
    })
}

/// A float's place in the numbers' order (not NaN: `Scalar` holds none); `-0.0` is `0.0`.
fn float_word(f: f64) -> u64 {
    let bits = if f == 0.0 { 0 } else { f.to_bits() };
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// `prefix << 96 | word << 32 | id` keys, ascending: a sorted base and the keys added since in
/// [`Runs`] (cheap to clone for a snapshot, as the hash half's overlay). The prefix names the
/// workspace, the key and the class (hashed: a collision adds candidates only).
#[derive(Clone, Debug, Default)]
pub struct Ordered {
    base: Arc<Vec<u128>>,
    overlay: Runs<u128>,
}

/// The key of element `id` at `word` under `prefix`.
pub fn packed(prefix: u32, word: u64, id: u32) -> u128 {
    u128::from(prefix) << 96 | u128::from(word) << 32 | u128::from(id)
}

impl Ordered {
    /// The index of exactly `keys` (any order, duplicates dropped).
    pub fn from_keys(mut keys: Vec<u128>) -> Ordered {
        keys.sort_unstable();
        keys.dedup();
        Ordered { base: Arc::new(keys), overlay: Runs::default() }
    }

    /// Adds a key. Folds the keys added into the base once they reach a sixteenth of it (and
    /// 8,192), as `KeyIndex` does.
    pub fn insert(&mut self, key: u128) {
        self.overlay.push(key);
        if self.overlay.len() >= 8_192 && self.overlay.len() >= self.base.len() / 16 {
            let mut added: Vec<u128> = self.overlay.iter().copied().collect();
            added.sort_unstable();
            *self = Ordered { base: Arc::new(merge(&self.base, &added)), overlay: Runs::default() };
        }
    }

    /// Calls `f` with the id of every key in `lo..=hi` (an id may come more than once).
    pub fn range(&self, lo: u128, hi: u128, mut f: impl FnMut(u32)) {
        let from = self.base.partition_point(|k| *k < lo);
        #[allow(clippy::cast_possible_truncation)] // Reason: the id is the low 32 bits.
        self.base[from..].iter().take_while(|k| **k <= hi).for_each(|k| f(*k as u32));
        #[allow(clippy::cast_possible_truncation)]
        self.overlay.for_each_in(&lo, &hi, |k| f(*k as u32));
    }

    /// The keys in `lo..=hi` one at a time, ascending or (`descending`) descending: the base's
    /// stretch and each run's, merged as they are read, so a reader that stops early pays for
    /// what it read (a key added twice may come twice).
    pub fn in_order(&self, lo: u128, hi: u128, descending: bool) -> InOrder<'_> {
        let from = self.base.partition_point(|k| *k < lo);
        let to = from + self.base[from..].partition_point(|k| *k <= hi);
        let mut stretches = vec![&self.base[from..to]];
        stretches.extend(self.overlay.stretches(&lo, &hi));
        stretches.retain(|s| !s.is_empty());
        InOrder { stretches, descending }
    }

    /// How many keys `range` gives for `lo..=hi`, counted by binary searches.
    pub fn count(&self, lo: u128, hi: u128) -> usize {
        let from = self.base.partition_point(|k| *k < lo);
        let to = from + self.base[from..].partition_point(|k| *k <= hi);
        to - from + self.overlay.count_in(&lo, &hi)
    }

    /// How many keys are held (a key added twice may count twice).
    pub fn len(&self) -> usize {
        self.base.len() + self.overlay.len()
    }

    /// Heap bytes.
    pub fn heap_bytes(&self) -> usize {
        self.len() * 16
    }
}

/// The keys of a range in order (`Ordered::in_order`): the next is the least (greatest) of the
/// stretches' heads; there are few stretches (the base and a handful of runs).
#[derive(Debug)]
pub struct InOrder<'a> {
    stretches: Vec<&'a [u128]>,
    descending: bool,
}

impl Iterator for InOrder<'_> {
    type Item = u128;

    fn next(&mut self) -> Option<u128> {
        let pick = if self.descending {
            (0..self.stretches.len()).max_by_key(|&i| self.stretches[i].last())?
        } else {
            (0..self.stretches.len()).min_by_key(|&i| self.stretches[i].first())?
        };
        let s = self.stretches[pick];
        let (key, rest) = if self.descending {
            let (last, rest) = s.split_last()?;
            (*last, rest)
        } else {
            let (first, rest) = s.split_first()?;
            (*first, rest)
        };
        if rest.is_empty() {
            self.stretches.swap_remove(pick);
        } else {
            self.stretches[pick] = rest;
        }
        Some(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::temporal::Temporal;
    use proptest::prelude::*;
    use std::cmp::Ordering;

    /// The language's comparison of two scalars (`Val::compare`'s, on the indexed kinds).
    fn compare(a: Scalar<'_>, b: Scalar<'_>) -> Option<Ordering> {
        let number = |s: Scalar<'_>| match s {
            #[allow(clippy::cast_precision_loss)]
            Scalar::Int(i) => Some((Some(i), i as f64)),
            Scalar::Float(bits) => Some((None, f64::from_bits(bits))),
            _ => None,
        };
        match (a, b) {
            (Scalar::Int(x), Scalar::Int(y)) => Some(x.cmp(&y)),
            (Scalar::Str(x), Scalar::Str(y)) => Some(x.cmp(y)),
            (Scalar::Bool(x), Scalar::Bool(y)) => Some(x.cmp(&y)),
            (Scalar::Temporal(x), Scalar::Temporal(y)) => x.compare(y),
            _ => match (number(a), number(b)) {
                // Integers beyond 2^53 compared as floats are close enough for this test's range.
                (Some((_, x)), Some((_, y))) => x.partial_cmp(&y),
                _ => None,
            },
        }
    }

    fn scalar_strategy() -> impl Strategy<Value = (u8, i64, String)> {
        (0u8..6, -3000i64..3000, "[a-c]{0,10}")
    }

    fn temporal(which: u8, n: i64) -> Temporal {
        match which % 3 {
            0 => Temporal::Date(n),
            1 => Temporal::DateTime { secs: n * 3600, nanos: 0, offset: (n % 5) as i32 * 3600 },
            _ => Temporal::LocalTime(n.rem_euclid(86_400) * 1_000_000_000),
        }
    }

    proptest! {
        /// Whenever the language orders two values, their words are in the same class and do
        /// not order them the other way round; values it does not compare are in other classes.
        #[test]
        fn words_keep_the_order(a in scalar_strategy(), b in scalar_strategy()) {
            let (ta, tb) = (temporal(a.0, a.1), temporal(b.0, b.1));
            let make = |(kind, n, s): &(u8, i64, String), t: &'static Temporal| -> Scalar<'static> {
                match kind {
                    0 => Scalar::Int(*n),
                    1 => Scalar::float(*n as f64 / 7.0).unwrap_or(Scalar::Int(0)),
                    2 => Scalar::Str(Box::leak(s.clone().into_boxed_str())),
                    3 => Scalar::Bool(*n % 2 == 0),
                    _ => Scalar::Temporal(t),
                }
            };
            let (x, y) = (make(&a, Box::leak(Box::new(ta))), make(&b, Box::leak(Box::new(tb))));
            let (wx, wy) = (order_word(x), order_word(y));
            match compare(x, y) {
                Some(o) => {
                    let ((cx, wx), (cy, wy)) = (wx.expect("ordered"), wy.expect("ordered"));
                    prop_assert_eq!(cx, cy);
                    match o {
                        Ordering::Less => prop_assert!(wx <= wy),
                        Ordering::Greater => prop_assert!(wx >= wy),
                        Ordering::Equal => prop_assert_eq!(wx, wy),
                    }
                }
                None => prop_assert!(wx.is_none() || wy.is_none() || wx.map(|w| w.0) != wy.map(|w| w.0)),
            }
        }

        /// A range gives exactly the ids a naive filter of the keys gives, through inserts and
        /// the folds of the overlay into the base.
        #[test]
        fn ranges_equal_a_filter(
            keys in proptest::collection::vec((0u32..3, 0u64..500, 0u32..50), 0..3000),
            lo in 0u64..500,
            len in 0u64..200,
        ) {
            let mut idx = Ordered::default();
            for (p, w, id) in &keys {
                idx.insert(packed(*p, *w, *id));
            }
            let mut got = Vec::new();
            idx.range(packed(1, lo, 0), packed(1, lo + len, u32::MAX), |id| got.push(id));
            got.sort_unstable();
            got.dedup();
            let mut want: Vec<u32> = keys.iter().filter(|(p, w, _)| *p == 1 && (lo..=lo + len).contains(w)).map(|k| k.2).collect();
            want.sort_unstable();
            want.dedup();
            prop_assert_eq!(got, want);
        }

        /// Reading a range in order gives the keys a naive sort of the filtered keys gives, each
        /// in its place (a key held twice may come twice), either way, through inserts, the
        /// overlay's runs and its folds into the base, and a base made at once.
        #[test]
        fn in_order_equals_a_sort(
            keys in proptest::collection::vec((0u32..3, 0u64..500, 0u32..50), 0..3000),
            built in 0usize..3000,
            lo in 0u64..500,
            len in 0u64..200,
            descending in any::<bool>(),
        ) {
            let built = built.min(keys.len());
            let mut idx = Ordered::from_keys(keys[..built].iter().map(|(p, w, id)| packed(*p, *w, *id)).collect());
            for (p, w, id) in &keys[built..] {
                idx.insert(packed(*p, *w, *id));
            }
            let (from, to) = (packed(1, lo, 0), packed(1, lo + len, u32::MAX));
            let got: Vec<u128> = idx.in_order(from, to, descending).collect();
            let mut steps = got.clone();
            if descending {
                steps.reverse();
            }
            prop_assert!(steps.windows(2).all(|w| w[0] <= w[1]), "out of order");
            let mut dedup = steps;
            dedup.dedup();
            let mut want: Vec<u128> = keys.iter().map(|(p, w, id)| packed(*p, *w, *id)).filter(|k| (from..=to).contains(k)).collect();
            want.sort_unstable();
            want.dedup();
            prop_assert_eq!(dedup, want);
        }
    }
}
