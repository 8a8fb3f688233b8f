//! The hash of a property's value, for the index from `(workspace, key, value)` to the elements
//! holding it (`Entities::by_prop`): what makes `MATCH (n:L {k: $v})` a lookup, not a scan.
//!
//! Two values the language calls equal hash alike: a float with an integral value hashes as that
//! integer (`1 = 1.0`), and a temporal value as its text (equal temporal values are the same
//! value). Lists, maps and NaN are not indexed (a lookup by one scans). Entries are candidates:
//! the caller tests each one's value, so a stale entry (a value overwritten) is harmless.

use crate::ids::WorkspaceId;
use crate::index::keyindex::KeyIndex;
use crate::index::order::{order_word, packed, Ordered};
pub use crate::index::scalar::Scalar;
use crate::value::Properties;

/// `prop_hash` → element ids, with a count of the entries that went stale (a value overwritten
/// or removed): once they outnumber the live ones (and pass `REBUILD_STALE`), the owner builds it
/// again from the current properties, so a value updated over and over does not grow it for ever.
#[derive(Clone, Debug, Default)]
pub struct PropIndex {
    keys: KeyIndex,
    /// The same values in the language's order, for ranges.
    ordered: Ordered,
    stale: usize,
}

/// Stale entries tolerated before a rebuild is due, whatever the index's size.
const REBUILD_STALE: usize = 65_536;

impl PropIndex {
    /// Notes that element `id` of `ws` went from `before` to `after`: each value new under its key
    /// is added. Returns whether the stale entries now call for a rebuild (`rebuild`).
    pub fn note(&mut self, ws: WorkspaceId, id: u32, before: Option<&Properties>, after: Option<&Properties>) -> bool {
        for (k, v) in after.into_iter().flatten() {
            if before.is_some_and(|b| b.get(k) == Some(v)) {
                continue;
            }
            if let Some(s) = Scalar::of_value(v) {
                let seed = key_seed(ws, k);
                self.keys.insert(value_hash(seed, s), id);
                if let Some((class, word)) = order_word(s) {
                    self.ordered.insert(packed(order_prefix(seed, class), word, id));
                }
            }
        }
        for (k, v) in before.into_iter().flatten() {
            if after.is_none_or(|a| a.get(k) != Some(v)) && Scalar::of_value(v).is_some() {
                self.stale += 1;
            }
        }
        self.stale > REBUILD_STALE && self.stale * 2 > self.keys.len()
    }

    /// The index of exactly `items` (element, its workspace, its properties).
    pub fn rebuild<'a>(&mut self, items: impl Iterator<Item = (u32, WorkspaceId, &'a Properties)>) {
        let (mut pairs, mut ordered) = (Vec::new(), Vec::new());
        for (id, ws, p) in items {
            for (k, v) in p {
                let Some(s) = Scalar::of_value(v) else { continue };
                let seed = key_seed(ws, k);
                pairs.push((value_hash(seed, s), id));
                if let Some((class, word)) = order_word(s) {
                    ordered.push(packed(order_prefix(seed, class), word, id));
                }
            }
        }
        // None held: no directory either (an index that never held a key costs nothing).
        let keys = if pairs.is_empty() { KeyIndex::default() } else { KeyIndex::from_pairs(pairs) };
        *self = PropIndex { keys, ordered: Ordered::from_keys(ordered), stale: 0 };
    }

    /// The candidates for `key` holding `value` in `ws` that `keep` keeps (the owner's own
    /// checks: the element's workspace, not erased), ascending, each once.
    pub fn find(&self, ws: WorkspaceId, key: &str, value: Scalar<'_>, keep: impl Fn(u32) -> bool) -> Vec<u32> {
        let mut out = Vec::new();
        self.keys.candidates(prop_hash(ws, key, value), |id| {
            if keep(id) {
                out.push(id);
            }
        });
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The candidates for `key` in `ws` whose value is of `class` with an order word in
    /// `lo..=hi` (`order::order_word`) that `keep` keeps, ascending, each once: every element
    /// whose value lies in a range of that class between values of those words, and perhaps a
    /// few more (the caller tests each).
    pub fn range(&self, ws: WorkspaceId, key: &str, (class, lo, hi): (u8, u64, u64), keep: impl Fn(u32) -> bool) -> Vec<u32> {
        let prefix = order_prefix(key_seed(ws, key), class);
        let mut out = Vec::new();
        self.ordered.range(packed(prefix, lo, 0), packed(prefix, hi, u32::MAX), |id| {
            if keep(id) {
                out.push(id);
            }
        });
        out.sort_unstable();
        out.dedup();
        out
    }

    /// How many entries `find` reads for `key` holding `value` in `ws` (before `keep`, each
    /// as often as it is held): counted in the index, not read.
    pub fn count(&self, ws: WorkspaceId, key: &str, value: Scalar<'_>) -> usize {
        self.keys.count(prop_hash(ws, key, value))
    }

    /// How many entries `range` reads for these words (as `count`).
    pub fn count_range(&self, ws: WorkspaceId, key: &str, (class, lo, hi): (u8, u64, u64)) -> usize {
        let prefix = order_prefix(key_seed(ws, key), class);
        self.ordered.count(packed(prefix, lo, 0), packed(prefix, hi, u32::MAX))
    }

    /// The entries for `key` in `ws` whose value is of `class` with an order word in `lo..=hi`,
    /// as `(word, id)` in the words' order (ascending, or descending): candidates as `range`
    /// gives them, unfiltered, read as they are needed (an id may come more than once, and
    /// under a word its value no longer has).
    pub fn in_order(
        &self,
        ws: WorkspaceId,
        key: &str,
        (class, lo, hi): (u8, u64, u64),
        descending: bool,
    ) -> impl Iterator<Item = (u64, u32)> + '_ {
        let prefix = order_prefix(key_seed(ws, key), class);
        #[allow(clippy::cast_possible_truncation)] // Reason: the word and the id are the key's middle and low bits.
        self.ordered.in_order(packed(prefix, lo, 0), packed(prefix, hi, u32::MAX), descending).map(|k| ((k >> 32) as u64, k as u32))
    }

    /// Heap bytes.
    pub fn heap_bytes(&self) -> usize {
        self.keys.heap_bytes() + self.ordered.heap_bytes()
    }
}

/// The hash of `key` in workspace `ws`, which seeds its values' (`value_hash`, `order_prefix`).
fn key_seed(ws: WorkspaceId, key: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(key.as_bytes(), u64::from(ws.0))
}

/// The ordered keys' prefix for a key's values of one class: 24 bits of the key's hash and the
/// class (a collision of two keys adds candidates only).
fn order_prefix(seed: u64, class: u8) -> u32 {
    #[allow(clippy::cast_possible_truncation)] // Reason: 24 bits of the hash kept.
    let high = (seed >> 40) as u32;
    high << 8 | u32::from(class)
}

/// The 32-bit hash of `key` holding `value` in workspace `ws`: the key's hash seeds the value's
/// (nothing is copied or allocated but a temporal value's text).
pub fn prop_hash(ws: WorkspaceId, key: &str, value: Scalar<'_>) -> u32 {
    value_hash(key_seed(ws, key), value)
}

/// `prop_hash` given the key's seed.
fn value_hash(seed: u64, value: Scalar<'_>) -> u32 {
    use xxhash_rust::xxh3::xxh3_64_with_seed as h;
    let v = match value {
        Scalar::Int(i) => h(&i.to_le_bytes(), seed ^ 1),
        Scalar::Float(bits) => h(&bits.to_le_bytes(), seed ^ 2),
        Scalar::Bool(b) => h(&[u8::from(b)], seed ^ 3),
        Scalar::Str(s) => h(s.as_bytes(), seed ^ 4),
        Scalar::Temporal(t) => h(t.to_string().as_bytes(), seed ^ 5),
    };
    #[allow(clippy::cast_possible_truncation)] // Reason: both halves folded into 32 bits.
    let folded = (v ^ (v >> 32)) as u32;
    folded
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;
    use proptest::prelude::*;

    /// A value overwritten again and again does not grow the index for ever: the stale entries
    /// call for a rebuild (which the owner makes from its current properties), and the current
    /// value is still found.
    #[test]
    fn overwrites_are_rebuilt_away() {
        let ws = WorkspaceId(1);
        let mut idx = PropIndex::default();
        let mut current: std::collections::BTreeMap<u32, Properties> = std::collections::BTreeMap::new();
        let mut rebuilds = 0;
        for i in 0..300_000i64 {
            let id = (i % 3) as u32;
            let after = Properties::from([(std::sync::Arc::from("seen"), Value::Int(i))]);
            let due = idx.note(ws, id, current.get(&id), Some(&after));
            current.insert(id, after);
            if due {
                rebuilds += 1;
                idx.rebuild(current.iter().map(|(id, p)| (*id, ws, p)));
            }
        }
        assert!(rebuilds >= 2, "{rebuilds}");
        assert!(idx.keys.len() <= 2 * REBUILD_STALE + 3, "{}", idx.keys.len());
        assert_eq!(idx.find(ws, "seen", Scalar::Int(299_999), |_| true), vec![2]);
    }

    proptest! {
        /// Equal numbers hash alike: an integer and the float of its value where one exists.
        #[test]
        fn equal_numbers_hash_alike(i in any::<i64>(), f in any::<f64>()) {
            let ws = WorkspaceId(1);
            let h = |s: Option<Scalar<'_>>| s.map(|s| prop_hash(ws, "k", s));
            #[allow(clippy::cast_precision_loss)] // Reason: the point of the test.
            let as_float = i as f64;
            // The float equals the integer exactly only when converting it back gives the integer.
            #[allow(clippy::cast_possible_truncation)]
            if as_float.fract() == 0.0 && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&as_float) && as_float as i64 == i {
                prop_assert_eq!(h(Some(Scalar::Int(i))), h(Scalar::float(as_float)));
            }
            prop_assert_eq!(h(Scalar::float(0.0)), h(Scalar::float(-0.0)));
            prop_assert_eq!(h(Scalar::float(f)), h(Scalar::float(f)));
            prop_assert!(Scalar::float(f64::NAN).is_none());
        }
    }
}
