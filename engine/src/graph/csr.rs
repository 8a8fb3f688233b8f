//! Compressed sparse row adjacency: one direction of the graph, immutable once built.
//!
//! `offsets[e]..offsets[e + 1]` indexes three parallel arrays (predicate, neighbour, claim) holding
//! entity `e`'s edges sorted by (predicate, claim id). Sorting by predicate turns a predicate filter
//! into a binary search; sorting by claim id within a predicate keeps pagination stable.

use rayon::prelude::*;
use std::ops::Range;

/// One direction of adjacency over the claims `0..watermark`.
#[derive(Debug, Default)]
pub struct Csr {
    offsets: Vec<u32>,
    preds: Vec<u16>,
    nbrs: Vec<u32>,
    claims: Vec<u32>,
}

/// One edge as stored in a `Csr` or the delta: the predicate, the entity at the other end and the
/// claim that makes the edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    /// Interned predicate.
    pub pred: u16,
    /// The entity at the other end.
    pub nbr: u32,
    /// The claim.
    pub claim: u32,
}

impl Csr {
    /// Builds adjacency for `entity_count` entities from `(key entity, edge)` pairs given in
    /// ascending claim order. Runs the per-entity sorts on rayon.
    pub fn build(entity_count: usize, keys: &[u32], edges: &[Edge]) -> Csr {
        assert_eq!(keys.len(), edges.len());
        assert!(edges.len() < u32::MAX as usize, "CSR offsets are u32");
        let mut offsets = vec![0u32; entity_count + 1];
        for &k in keys {
            offsets[k as usize + 1] += 1;
        }
        for i in 0..entity_count {
            offsets[i + 1] += offsets[i];
        }
        let mut placed: Vec<Edge> = vec![Edge { pred: 0, nbr: 0, claim: 0 }; edges.len()];
        let mut cursor: Vec<u32> = offsets[..entity_count].to_vec();
        for (&k, &edge) in keys.iter().zip(edges) {
            let slot = &mut cursor[k as usize];
            placed[*slot as usize] = edge;
            *slot += 1;
        }
        drop(cursor);
        // Split into per-entity segments and sort those not already in (pred, claim) order.
        let mut segments: Vec<&mut [Edge]> = Vec::with_capacity(entity_count);
        let mut rest: &mut [Edge] = &mut placed;
        for i in 0..entity_count {
            let len = (offsets[i + 1] - offsets[i]) as usize;
            let (head, tail) = rest.split_at_mut(len);
            if len > 1 {
                segments.push(head);
            }
            rest = tail;
        }
        segments.par_iter_mut().for_each(|seg| {
            if !seg.is_sorted_by_key(|e| (e.pred, e.claim)) {
                seg.sort_unstable_by_key(|e| (e.pred, e.claim));
            }
        });
        drop(segments);
        let preds = placed.par_iter().map(|e| e.pred).collect();
        let nbrs = placed.par_iter().map(|e| e.nbr).collect();
        let claims = placed.par_iter().map(|e| e.claim).collect();
        Csr { offsets, preds, nbrs, claims }
    }

    /// Number of entities covered (entities created later have no base edges).
    pub fn entity_count(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        self.nbrs.len()
    }

    /// The edge index range of entity `e` (empty past the covered entities).
    #[inline]
    pub fn range(&self, e: u32) -> Range<usize> {
        let e = e as usize;
        if e + 1 >= self.offsets.len() {
            return 0..0;
        }
        self.offsets[e] as usize..self.offsets[e + 1] as usize
    }

    /// The part of entity `e`'s edges with predicate `pred` (binary search).
    #[inline]
    pub fn pred_range(&self, e: u32, pred: u16) -> Range<usize> {
        let r = self.range(e);
        let preds = &self.preds[r.clone()];
        let lo = preds.partition_point(|&p| p < pred);
        let hi = preds.partition_point(|&p| p <= pred);
        r.start + lo..r.start + hi
    }

    /// Predicates of a range.
    #[inline]
    pub fn preds(&self, r: Range<usize>) -> &[u16] {
        &self.preds[r]
    }

    /// Neighbours of a range.
    #[inline]
    pub fn nbrs(&self, r: Range<usize>) -> &[u32] {
        &self.nbrs[r]
    }

    /// Claims of a range.
    #[inline]
    pub fn claims(&self, r: Range<usize>) -> &[u32] {
        &self.claims[r]
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.offsets.len() * 4 + self.preds.len() * 2 + self.nbrs.len() * 4 + self.claims.len() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn matches_naive_adjacency(edges in proptest::collection::vec((0u32..40, 0u16..5, 0u32..40), 0..300)) {
            let keys: Vec<u32> = edges.iter().map(|e| e.0).collect();
            let list: Vec<Edge> = edges.iter().enumerate().map(|(i, e)| Edge { pred: e.1, nbr: e.2, claim: i as u32 }).collect();
            let csr = Csr::build(40, &keys, &list);
            for e in 0..40u32 {
                let mut naive: Vec<Edge> = list.iter().zip(&keys).filter(|(_, k)| **k == e).map(|(x, _)| *x).collect();
                naive.sort_by_key(|x| (x.pred, x.claim));
                let r = csr.range(e);
                let got: Vec<Edge> = r.clone().map(|i| Edge { pred: csr.preds[i], nbr: csr.nbrs[i], claim: csr.claims[i] }).collect();
                prop_assert_eq!(&got, &naive);
                for p in 0..5u16 {
                    let pr = csr.pred_range(e, p);
                    let want: Vec<u32> = naive.iter().filter(|x| x.pred == p).map(|x| x.claim).collect();
                    prop_assert_eq!(csr.claims(pr).to_vec(), want);
                }
            }
            prop_assert_eq!(csr.range(1000), 0..0);
        }
    }
}
