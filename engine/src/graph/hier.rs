//! Adjacency of one predicate alone, for transitive predicates (hierarchies).
//!
//! Closure queries follow one predicate through nodes that often have many other edges (a popular
//! concept is the object of thousands of ordinary claims). In the main CSR that costs a binary
//! search over each node's predicates; here each node's edges of the predicate are one hash probe
//! away. Built with the base CSR, for the predicates declared transitive at that time; edges carry
//! the same `LIVE_BIT` and obey the same dirty set.

use crate::graph::csr::LIVE_BIT;
use crate::ids::NONE;

/// One direction of one predicate's adjacency.
#[derive(Debug, Default)]
pub struct PredAdjacency {
    /// Open addressing on the entity id: `(entity, start, end)`; `entity == NONE` is empty.
    slots: Vec<(u32, u32, u32)>,
    /// One bit per entity id up to the largest key: set when the entity has edges here. Most
    /// nodes of a hierarchy walk are leaves; the bit (an eighth of a byte per entity, in cache)
    /// answers them without a probe of the table.
    present: Vec<u64>,
    nbrs: Vec<u32>,
    claims: Vec<u32>,
}

#[inline]
fn hash(e: u32) -> usize {
    (e.wrapping_mul(0x9E37_79B1) >> 7) as usize
}

impl PredAdjacency {
    /// Builds from the predicate's claims (ascending): edge `c` goes from `keys[c]` to `nbrs[c]`.
    pub fn build(keys: &[u32], nbrs: &[u32], claims: &[u32], fast: &(dyn Fn(u32) -> bool + Sync)) -> PredAdjacency {
        let mut edges: Vec<(u32, u32)> = claims.iter().map(|&c| (keys[c as usize], c)).collect();
        edges.sort_unstable();
        let groups = edges.chunk_by(|a, b| a.0 == b.0).count();
        let cap = (groups * 2).next_power_of_two().max(8);
        let words = edges.last().map_or(0, |e| e.0 as usize / 64 + 1);
        let mut out = PredAdjacency {
            slots: vec![(NONE, 0, 0); cap],
            present: vec![0u64; words],
            nbrs: Vec::with_capacity(edges.len()),
            claims: Vec::with_capacity(edges.len()),
        };
        for run in edges.chunk_by(|a, b| a.0 == b.0) {
            let start = out.nbrs.len() as u32;
            for &(_, c) in run {
                out.nbrs.push(nbrs[c as usize] | if fast(c) { LIVE_BIT } else { 0 });
                out.claims.push(c);
            }
            let mut i = hash(run[0].0) & (cap - 1);
            while out.slots[i].0 != NONE {
                i = (i + 1) & (cap - 1);
            }
            out.slots[i] = (run[0].0, start, out.nbrs.len() as u32);
            out.present[run[0].0 as usize / 64] |= 1 << (run[0].0 % 64);
        }
        out
    }

    /// Stored neighbours (with `LIVE_BIT`) and claims of entity `e`.
    #[inline]
    pub fn get(&self, e: u32) -> (&[u32], &[u32]) {
        let mask = self.slots.len().wrapping_sub(1);
        if self.present.get(e as usize / 64).is_none_or(|w| w >> (e % 64) & 1 == 0) {
            return (&[], &[]);
        }
        let mut i = hash(e) & mask;
        loop {
            let (k, s, t) = self.slots[i];
            if k == e {
                return (&self.nbrs[s as usize..t as usize], &self.claims[s as usize..t as usize]);
            }
            if k == NONE {
                return (&[], &[]);
            }
            i = (i + 1) & mask;
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.slots.len() * 12 + self.nbrs.len() * 8 + self.present.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn matches_naive_lists(edges in proptest::collection::vec((0u32..60, 0u32..60), 0..200)) {
            let keys: Vec<u32> = edges.iter().map(|e| e.0).collect();
            let nbrs: Vec<u32> = edges.iter().map(|e| e.1).collect();
            let claims: Vec<u32> = (0..edges.len() as u32).filter(|c| c % 4 != 1).collect();
            let adj = PredAdjacency::build(&keys, &nbrs, &claims, &|c| c % 3 == 0);
            for e in 0..70u32 {
                let want: Vec<(u32, u32)> = claims.iter().filter(|&&c| keys[c as usize] == e)
                    .map(|&c| (nbrs[c as usize] | if c % 3 == 0 { LIVE_BIT } else { 0 }, c)).collect();
                let (n, c) = adj.get(e);
                let got: Vec<(u32, u32)> = n.iter().copied().zip(c.iter().copied()).collect();
                prop_assert_eq!(got, want);
            }
        }
    }
}
