//! Compressed sparse row adjacency: one direction of the graph, immutable once built.
//!
//! `offsets[e]..offsets[e + 1]` indexes three parallel arrays (predicate, neighbour, claim) holding
//! entity `e`'s edges sorted by (predicate, claim id). Sorting by predicate turns a predicate filter
//! into a binary search; sorting by claim id within a predicate keeps pagination stable.

use std::ops::Range;

/// Set in a stored neighbour id when the claim was visible by default (live, no time bound) when
/// the CSR was built. Entity ids stay below `2^31`, so the bit is free.
pub const LIVE_BIT: u32 = 1 << 31;

/// Strips `LIVE_BIT` from a stored neighbour id.
#[inline]
pub fn nbr_id(stored: u32) -> u32 {
    stored & !LIVE_BIT
}

/// Key ranges of `2^PARTITION_BITS` entities: a large build places edges range by range.
const PARTITION_BITS: u32 = 12;

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
    /// Builds adjacency for `entity_count` entities: edge `c` goes from `keys[c]` to `nbrs[c]`
    /// with predicate `preds[c]` and claim id `c`. `order` lists the claim ids sorted by
    /// (predicate, claim) (see `pred_order`): placing edges in that order leaves every entity's
    /// segment sorted without sorting it. `fast(c)` says whether claim `c` is visible by default
    /// now; it is stored as `LIVE_BIT` beside the neighbour.
    pub fn build(
        entity_count: usize,
        keys: &[u32],
        nbrs: &[u32],
        preds: &[u16],
        order: &[u32],
        fast: &(dyn Fn(u32) -> bool + Sync),
    ) -> Csr {
        assert!(keys.len() == nbrs.len() && keys.len() == preds.len() && keys.len() == order.len());
        assert!(keys.len() < u32::MAX as usize, "CSR offsets are u32");
        let m = keys.len();
        let mut offsets = vec![0u32; entity_count + 1];
        for &k in keys {
            offsets[k as usize + 1] += 1;
        }
        for i in 0..entity_count {
            offsets[i + 1] += offsets[i];
        }
        let mut out_preds = vec![0u16; m];
        let mut out_nbrs = vec![0u32; m];
        let mut out_claims = vec![0u32; m];
        let stored = |i: usize, c: u32| {
            debug_assert!(nbrs[i] < LIVE_BIT);
            nbrs[i] | if fast(c) { LIVE_BIT } else { 0 }
        };
        if entity_count <= 2 << PARTITION_BITS {
            // Small: one scatter straight to each edge's slot.
            let mut cursor: Vec<u32> = offsets[..entity_count].to_vec();
            for &c in order {
                let i = c as usize;
                let slot = &mut cursor[keys[i] as usize];
                let at = *slot as usize;
                *slot += 1;
                out_preds[at] = preds[i];
                out_nbrs[at] = stored(i, c);
                out_claims[at] = c;
            }
            return Csr { offsets, preds: out_preds, nbrs: out_nbrs, claims: out_claims };
        }
        // Large: a scatter to random slots misses the cache on every edge. First partition the
        // edges (in `order`, so stably) by key range into the ranges' own regions of the output
        // (one sequential write stream per range), then place each region's edges within it,
        // with the region in cache. Same result as the single scatter.
        let ranges = entity_count.div_ceil(1 << PARTITION_BITS);
        let mut fill: Vec<usize> = (0..ranges).map(|r| offsets[r << PARTITION_BITS] as usize).collect();
        let mut low = vec![0u16; m];
        for &c in order {
            let i = c as usize;
            let k = keys[i] as usize;
            let slot = &mut fill[k >> PARTITION_BITS];
            let at = *slot;
            *slot += 1;
            out_preds[at] = preds[i];
            out_nbrs[at] = stored(i, c);
            out_claims[at] = c;
            low[at] = (k & ((1 << PARTITION_BITS) - 1)) as u16;
        }
        let (mut sp, mut sn, mut sc, mut sl) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut cursor: Vec<usize> = Vec::with_capacity(1 << PARTITION_BITS);
        for r in 0..ranges {
            let first = r << PARTITION_BITS;
            let last = ((r + 1) << PARTITION_BITS).min(entity_count);
            let region = offsets[first] as usize..offsets[last] as usize;
            sp.clear();
            sp.extend_from_slice(&out_preds[region.clone()]);
            sn.clear();
            sn.extend_from_slice(&out_nbrs[region.clone()]);
            sc.clear();
            sc.extend_from_slice(&out_claims[region.clone()]);
            sl.clear();
            sl.extend_from_slice(&low[region]);
            cursor.clear();
            cursor.extend(offsets[first..last].iter().map(|o| *o as usize));
            for j in 0..sl.len() {
                let slot = &mut cursor[sl[j] as usize];
                let at = *slot;
                *slot += 1;
                out_preds[at] = sp[j];
                out_nbrs[at] = sn[j];
                out_claims[at] = sc[j];
            }
        }
        Csr { offsets, preds: out_preds, nbrs: out_nbrs, claims: out_claims }
    }

    /// Claim ids `0..preds.len()` sorted by (predicate, claim): a counting sort.
    pub fn pred_order(preds: &[u16]) -> Vec<u32> {
        let mut starts = vec![0usize; usize::from(u16::MAX) + 2];
        for &p in preds {
            starts[usize::from(p) + 1] += 1;
        }
        for i in 0..=usize::from(u16::MAX) {
            starts[i + 1] += starts[i];
        }
        let mut order = vec![0u32; preds.len()];
        for (c, &p) in preds.iter().enumerate() {
            let slot = &mut starts[usize::from(p)];
            order[*slot] = c as u32;
            *slot += 1;
        }
        order
    }

    /// The four arrays (offsets, predicates, stored neighbours, claims), for snapshots.
    pub fn parts(&self) -> (&[u32], &[u16], &[u32], &[u32]) {
        (&self.offsets, &self.preds, &self.nbrs, &self.claims)
    }

    /// A CSR from arrays written by `parts`; `None` when they are inconsistent (lengths, offsets
    /// not ascending, or past the edge arrays).
    pub fn from_parts(offsets: Vec<u32>, preds: Vec<u16>, nbrs: Vec<u32>, claims: Vec<u32>) -> Option<Csr> {
        let m = nbrs.len();
        let ok = preds.len() == m
            && claims.len() == m
            && offsets.first().is_some_and(|o| *o == 0)
            && offsets.last().is_some_and(|o| *o as usize == m)
            && offsets.windows(2).all(|w| w[0] <= w[1]);
        ok.then_some(Csr { offsets, preds, nbrs, claims })
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

    /// Stored neighbours of a range (with `LIVE_BIT`; see `nbr_id`).
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
            let preds: Vec<u16> = list.iter().map(|e| e.pred).collect();
            let nbrs: Vec<u32> = list.iter().map(|e| e.nbr).collect();
            let csr = Csr::build(40, &keys, &nbrs, &preds, &Csr::pred_order(&preds), &|c| c % 3 != 0);
            for e in 0..40u32 {
                let mut naive: Vec<Edge> = list.iter().zip(&keys).filter(|(_, k)| **k == e).map(|(x, _)| *x).collect();
                naive.sort_by_key(|x| (x.pred, x.claim));
                let r = csr.range(e);
                let got: Vec<Edge> = r.clone().map(|i| Edge { pred: csr.preds[i], nbr: nbr_id(csr.nbrs[i]), claim: csr.claims[i] }).collect();
                for i in r.clone() {
                    prop_assert_eq!(csr.nbrs[i] & LIVE_BIT != 0, !csr.claims[i].is_multiple_of(3));
                }
                prop_assert_eq!(&got, &naive);
                for p in 0..5u16 {
                    let pr = csr.pred_range(e, p);
                    let want: Vec<u32> = naive.iter().filter(|x| x.pred == p).map(|x| x.claim).collect();
                    prop_assert_eq!(csr.claims(pr).to_vec(), want);
                }
            }
            prop_assert_eq!(csr.range(1000), 0..0);
        }

        /// Past two key ranges the build partitions first: it must give the single scatter's result.
        #[test]
        fn partitioned_build_equals_the_direct_one(edges in proptest::collection::vec((0u32..20_000, 0u16..4, 0u32..20_000), 0..3000)) {
            let keys: Vec<u32> = edges.iter().map(|e| e.0).collect();
            let preds: Vec<u16> = edges.iter().map(|e| e.1).collect();
            let nbrs: Vec<u32> = edges.iter().map(|e| e.2).collect();
            let order = Csr::pred_order(&preds);
            let fast = |c: u32| !c.is_multiple_of(5);
            let csr = Csr::build(20_000, &keys, &nbrs, &preds, &order, &fast);
            // The reference: every edge in (key, predicate, claim) order.
            let mut want: Vec<(u32, u16, u32)> = (0..keys.len()).map(|c| (keys[c], preds[c], c as u32)).collect();
            want.sort_unstable();
            let got: Vec<(u32, u16, u32)> =
                (0..20_000u32).flat_map(|e| csr.range(e).map(move |i| (e, i))).map(|(e, i)| (e, csr.preds[i], csr.claims[i])).collect();
            prop_assert_eq!(got, want);
            for (i, c) in csr.claims.iter().enumerate() {
                prop_assert_eq!(csr.nbrs[i], nbrs[*c as usize] | if fast(*c) { LIVE_BIT } else { 0 });
            }
        }
    }
}
