//! `RowMap`: a map from row ids to values, held as a copy-on-write column of `Option`s.
//!
//! The rows' typed properties were a hash trie (`PMap`): reading one node's property took four or
//! five dependent cache misses, most of a filter's time over candidates spread across 100,000
//! nodes (a profile of `WHERE n.g = $g AND n.i >= $lo`: 55 % in the trie). A column answers in
//! one or two, and costs one pointer a row up to the highest row that holds a value (nothing
//! while none does); a write copies the leaf it touches, as every column does.

use crate::index::cow::CowVec;

/// Row id → value, for values held by many rows (see the module comment).
#[derive(Clone, Debug)]
pub struct RowMap<V> {
    rows: CowVec<Option<V>>,
    /// Rows holding a value.
    held: usize,
}

impl<V> Default for RowMap<V> {
    fn default() -> Self {
        RowMap { rows: CowVec::default(), held: 0 }
    }
}

impl<V: Clone + Send + Sync + PartialEq> RowMap<V> {
    /// Row `id`'s value.
    #[inline]
    pub fn get(&self, id: u32) -> Option<&V> {
        self.rows.try_get(id as usize)?.as_ref()
    }

    /// Whether row `id` holds a value.
    pub fn contains_key(&self, id: u32) -> bool {
        self.get(id).is_some()
    }

    /// Sets row `id`'s value; gives the one it replaces.
    pub fn insert(&mut self, id: u32, value: V) -> Option<V> {
        let i = id as usize;
        if i >= self.rows.len() {
            self.rows.extend_repeat(i - self.rows.len(), None);
            self.rows.push(Some(value));
            self.held += 1;
            return None;
        }
        let before = self.rows.get_mut(i).replace(value);
        if before.is_none() {
            self.held += 1;
        }
        before
    }

    /// Clears row `id`'s value; gives it.
    pub fn remove(&mut self, id: u32) -> Option<V> {
        if !self.contains_key(id) {
            return None;
        }
        self.held -= 1;
        self.rows.get_mut(id as usize).take()
    }

    /// How many rows hold a value.
    pub fn len(&self) -> usize {
        self.held
    }

    /// Whether no row does.
    pub fn is_empty(&self) -> bool {
        self.held == 0
    }

    /// The rows holding a value, ascending, with it.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &V)> + '_ {
        #[allow(clippy::cast_possible_truncation)] // Reason: rows are indexed by u32 ids.
        self.rows.iter().enumerate().filter_map(|(i, v)| v.as_ref().map(|v| (i as u32, v)))
    }

    /// The rows holding a value, ascending.
    pub fn keys(&self) -> impl Iterator<Item = u32> + '_ {
        self.iter().map(|(id, _)| id)
    }

    /// Heap bytes of the column (not of the values).
    pub fn heap_bytes(&self) -> usize {
        self.rows.heap_bytes()
    }
}

impl<V: Clone + Send + Sync + PartialEq> FromIterator<(u32, V)> for RowMap<V> {
    fn from_iter<I: IntoIterator<Item = (u32, V)>>(items: I) -> Self {
        let mut map = RowMap::default();
        for (id, v) in items {
            map.insert(id, v);
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        /// Equal to a `BTreeMap` under any inserts and removes, clones taken between them unchanged.
        #[test]
        fn equals_a_map(ops in prop::collection::vec((any::<bool>(), 0u32..3000, any::<u8>()), 0..400)) {
            let (mut map, mut want) = (RowMap::default(), BTreeMap::new());
            let mut kept = Vec::new();
            for (k, (insert, id, v)) in ops.into_iter().enumerate() {
                if k % 50 == 0 {
                    kept.push((map.clone(), want.clone()));
                }
                if insert {
                    prop_assert_eq!(map.insert(id, v), want.insert(id, v));
                } else {
                    prop_assert_eq!(map.remove(id), want.remove(&id));
                }
                prop_assert_eq!(map.len(), want.len());
            }
            kept.push((map, want));
            for (map, want) in kept {
                prop_assert_eq!(map.iter().map(|(k, v)| (k, *v)).collect::<Vec<_>>(), want.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>());
                for id in 0..3001 {
                    prop_assert_eq!(map.get(id), want.get(&id));
                }
                prop_assert_eq!(map.is_empty(), want.is_empty());
            }
        }
    }
}
