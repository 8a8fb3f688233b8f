//! Adjacency of one predicate alone, for transitive predicates (hierarchies).
//!
//! Closure queries follow one predicate through nodes that often have many other edges (a popular
//! concept is the object of thousands of ordinary claims). In the main CSR that costs a binary
//! search over each node's predicates; here each node's edges of the predicate are one lookup
//! away. Built with the base CSR, for the predicates declared transitive at that time; edges carry
//! the same `LIVE_BIT` and obey the same dirty set.

use crate::ids::NONE;
use crate::index::graph::csr::LIVE_BIT;

/// Set in a stored neighbour that has a run of its own in the same adjacency: a walk learns
/// which of the nodes it reaches are leaves (most of a hierarchy's nodes) without looking them up.
/// Only used when every neighbour id is below it (see `PredAdjacency::id_mask`).
pub const HAS_RUN: u32 = 1 << 30;

/// One direction of one predicate's adjacency.
#[derive(Debug)]
pub struct PredAdjacency {
    runs: Runs,
    nbrs: Vec<u32>,
    claims: Vec<u32>,
    /// Clears the flag bits of a stored neighbour: `LIVE_BIT`, and `HAS_RUN` when the
    /// neighbours carry it.
    id_mask: u32,
}

impl Default for PredAdjacency {
    fn default() -> PredAdjacency {
        PredAdjacency { runs: Runs::default(), nbrs: Vec::new(), claims: Vec::new(), id_mask: !LIVE_BIT }
    }
}

/// Where each entity's run of edges lies in `nbrs` / `claims`.
#[derive(Debug)]
enum Runs {
    /// Offsets over the window of entity ids from the smallest key to the largest: entity
    /// `first + i` owns `offsets[i]..offsets[i + 1]`. Chosen when the window is at most a few
    /// times the edges: a hierarchy's concepts are usually consecutive ids (an ontology is
    /// imported at once), and then one offset pair, in cache, answers every node, leaves included.
    Dense { first: u32, offsets: Vec<u32> },
    /// Open addressing on the entity id, `(entity, start, end)` with `entity == NONE` empty, for
    /// keys scattered over many entities; `present` holds one bit per entity up to the largest
    /// key so that leaves (most nodes of a walk) need no probe.
    Hashed { slots: Vec<(u32, u32, u32)>, present: Vec<u64> },
}

impl Default for Runs {
    fn default() -> Runs {
        Runs::Dense { first: 0, offsets: Vec::new() }
    }
}

/// The dense window may take at most this many offsets per edge (plus `DENSE_SLACK`), so it never
/// costs more than 16 bytes per edge; past that the keys are hashed.
const DENSE_OFFSETS_PER_EDGE: usize = 4;
const DENSE_SLACK: usize = 64;

#[inline]
fn hash(e: u32) -> usize {
    (e.wrapping_mul(0x9E37_79B1) >> 7) as usize
}

impl PredAdjacency {
    /// Builds from the predicate's claims (ascending): edge `c` goes from `keys[c]` to `nbrs[c]`.
    pub fn build(keys: &[u32], nbrs: &[u32], claims: &[u32], fast: &(dyn Fn(u32) -> bool + Sync)) -> PredAdjacency {
        let mut edges: Vec<(u32, u32)> = claims.iter().map(|&c| (keys[c as usize], c)).collect();
        edges.sort_unstable();
        let runs = match (edges.first(), edges.last()) {
            (Some(lo), Some(hi)) if ((hi.0 - lo.0) as usize) < edges.len() * DENSE_OFFSETS_PER_EDGE + DENSE_SLACK => {
                Runs::dense(&edges, lo.0, hi.0)
            }
            (Some(_), Some(hi)) => Runs::hashed(&edges, hi.0),
            _ => Runs::default(),
        };
        let marks = edges.iter().all(|&(_, c)| nbrs[c as usize] < HAS_RUN);
        let mut out = PredAdjacency { runs, nbrs: Vec::new(), claims: edges.iter().map(|&(_, c)| c).collect(), id_mask: !LIVE_BIT };
        out.nbrs = edges
            .iter()
            .map(|&(_, c)| {
                let n = nbrs[c as usize];
                let run = if marks && out.has_run(n) { HAS_RUN } else { 0 };
                n | run | if fast(c) { LIVE_BIT } else { 0 }
            })
            .collect();
        if marks {
            out.id_mask = !(LIVE_BIT | HAS_RUN);
        }
        out
    }

    /// The dense layout's parts, when the runs are dense: for a walk's own tight loop.
    #[inline]
    pub fn dense(&self) -> Option<DenseRuns<'_>> {
        match &self.runs {
            Runs::Dense { first, offsets } => Some(DenseRuns { first: *first, offsets, nbrs: &self.nbrs }),
            Runs::Hashed { .. } => None,
        }
    }

    /// What clears a stored neighbour's flags, leaving its id.
    #[inline]
    pub fn id_mask(&self) -> u32 {
        self.id_mask
    }

    /// Whether stored neighbours carry `HAS_RUN`: absent, the neighbour is known to be a leaf.
    #[inline]
    pub fn marks_runs(&self) -> bool {
        self.id_mask & HAS_RUN == 0
    }

    fn has_run(&self, e: u32) -> bool {
        self.runs.run(e).is_some_and(|(s, t)| s < t)
    }

    /// Stored neighbours (with `LIVE_BIT`, and `HAS_RUN` when `marks_runs`) and claims of entity `e`.
    #[inline]
    pub fn get(&self, e: u32) -> (&[u32], &[u32]) {
        match self.runs.run(e) {
            Some((s, t)) => (&self.nbrs[s..t], &self.claims[s..t]),
            None => (&[], &[]),
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        let runs = match &self.runs {
            Runs::Dense { offsets, .. } => offsets.len() * 4,
            Runs::Hashed { slots, present } => slots.len() * 12 + present.len() * 8,
        };
        runs + self.nbrs.len() * 8
    }
}

/// A dense adjacency's arrays: entity `first + i` has the stored neighbours
/// `nbrs[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Copy)]
pub struct DenseRuns<'a> {
    first: u32,
    offsets: &'a [u32],
    nbrs: &'a [u32],
}

impl<'a> DenseRuns<'a> {
    /// The stored neighbours of `e` (empty outside the window).
    #[inline]
    pub fn get(&self, e: u32) -> &'a [u32] {
        dense_run(self.first, self.offsets, e).and_then(|(s, t)| self.nbrs.get(s..t)).unwrap_or(&[])
    }
}

/// The run of `e` in a dense window starting at entity `first`, if `e` lies in the window.
#[inline]
fn dense_run(first: u32, offsets: &[u32], e: u32) -> Option<(usize, usize)> {
    let i = e.wrapping_sub(first) as usize;
    match (offsets.get(i), offsets.get(i + 1)) {
        (Some(&s), Some(&t)) => Some((s as usize, t as usize)),
        _ => None,
    }
}

impl Runs {
    /// The run of `e` (possibly empty), or `None` when `e` has none.
    #[inline]
    fn run(&self, e: u32) -> Option<(usize, usize)> {
        match self {
            Runs::Dense { first, offsets } => dense_run(*first, offsets, e),
            Runs::Hashed { slots, present } => probe(slots, present, e),
        }
    }

    /// Offsets over `lo..=hi` for `edges` sorted by key.
    fn dense(edges: &[(u32, u32)], lo: u32, hi: u32) -> Runs {
        let mut offsets = vec![0u32; (hi - lo) as usize + 2];
        for &(k, _) in edges {
            offsets[(k - lo) as usize + 1] += 1;
        }
        for i in 1..offsets.len() {
            offsets[i] += offsets[i - 1];
        }
        Runs::Dense { first: lo, offsets }
    }

    /// The hash table of each key's run for `edges` sorted by key, `hi` the largest key.
    fn hashed(edges: &[(u32, u32)], hi: u32) -> Runs {
        let groups = edges.chunk_by(|a, b| a.0 == b.0).count();
        let cap = (groups * 2).next_power_of_two().max(8);
        let mut slots = vec![(NONE, 0, 0); cap];
        let mut present = vec![0u64; hi as usize / 64 + 1];
        let mut start = 0u32;
        for run in edges.chunk_by(|a, b| a.0 == b.0) {
            let key = run[0].0;
            let end = start + run.len() as u32;
            let mut i = hash(key) & (cap - 1);
            while slots[i].0 != NONE {
                i = (i + 1) & (cap - 1);
            }
            slots[i] = (key, start, end);
            present[key as usize / 64] |= 1 << (key % 64);
            start = end;
        }
        Runs::Hashed { slots, present }
    }
}

/// The run of `e` in a hashed table, if it has one.
#[inline]
fn probe(slots: &[(u32, u32, u32)], present: &[u64], e: u32) -> Option<(usize, usize)> {
    if present.get(e as usize / 64).is_none_or(|w| w >> (e % 64) & 1 == 0) {
        return None;
    }
    let mask = slots.len() - 1;
    let mut i = hash(e) & mask;
    loop {
        let (k, s, t) = slots[i];
        if k == e {
            return Some((s as usize, t as usize));
        }
        if k == NONE {
            return None;
        }
        i = (i + 1) & mask;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Checks every entity in `probes` against a scan of the edge list.
    fn assert_matches_scan(keys: &[u32], nbrs: &[u32], claims: &[u32], probes: impl Iterator<Item = u32>) -> Result<(), TestCaseError> {
        let adj = PredAdjacency::build(keys, nbrs, claims, &|c| c % 3 == 0);
        let marks = claims.iter().all(|&c| nbrs[c as usize] < HAS_RUN);
        prop_assert_eq!(adj.marks_runs(), marks);
        let has_run = |n: u32| marks && claims.iter().any(|&c| keys[c as usize] == n);
        for e in probes {
            let want: Vec<(u32, u32)> = claims
                .iter()
                .filter(|&&c| keys[c as usize] == e)
                .map(|&c| {
                    let n = nbrs[c as usize];
                    (n | if c % 3 == 0 { LIVE_BIT } else { 0 } | if has_run(n) { HAS_RUN } else { 0 }, c)
                })
                .collect();
            let (n, c) = adj.get(e);
            let got: Vec<(u32, u32)> = n.iter().copied().zip(c.iter().copied()).collect();
            prop_assert_eq!(got, want, "entity {}", e);
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn matches_naive_lists(
            edges in proptest::collection::vec((0u32..60, 0u32..60), 0..200),
            // Offsetting every key moves the window; scattering some forces the hashed table.
            shift in prop_oneof![Just(0u32), 1u32..1_000_000],
            scattered in proptest::collection::vec(0u32..5_000_000, 0..4),
            big_nbr in proptest::bool::weighted(0.2),
        ) {
            let mut keys: Vec<u32> = edges.iter().map(|e| e.0 + shift).collect();
            // Neighbours overlap the keys (so some have runs), unless one is too large to carry a mark.
            let mut nbrs: Vec<u32> = edges.iter().map(|e| e.1 + shift).collect();
            keys.extend(&scattered);
            nbrs.extend(scattered.iter().map(|k| k % 60 + if big_nbr { HAS_RUN } else { 0 }));
            let claims: Vec<u32> = (0..keys.len() as u32).filter(|c| c % 4 != 1).collect();
            let probes = (shift.saturating_sub(3)..shift + 70)
                .chain(scattered.iter().flat_map(|&k| [k.saturating_sub(1), k, k + 1]))
                .chain([u32::MAX]);
            assert_matches_scan(&keys, &nbrs, &claims, probes)?;
        }
    }

    #[test]
    fn consecutive_keys_are_dense_and_scattered_keys_hashed() {
        let dense = PredAdjacency::build(&[10, 11, 13, 11], &[1, 2, 3, 4], &[0, 1, 2, 3], &|_| true);
        assert!(matches!(dense.runs, Runs::Dense { first: 10, .. }));
        assert_eq!(dense.get(11).0, &[LIVE_BIT + 2, LIVE_BIT + 4]);
        assert_eq!(dense.get(10).0, &[LIVE_BIT + 1]);
        let marked = PredAdjacency::build(&[10, 11, 13], &[11, 20, 10], &[0, 1, 2], &|_| false);
        assert_eq!((marked.get(10).0, marked.get(11).0, marked.get(13).0), (&[HAS_RUN + 11][..], &[20][..], &[HAS_RUN + 10][..]));
        assert_eq!(marked.id_mask() & (HAS_RUN + LIVE_BIT + 11), 11);
        assert_eq!(dense.get(12).0, &[] as &[u32]);
        assert_eq!(dense.get(9).0, &[] as &[u32]);
        let hashed = PredAdjacency::build(&[10, 4_000_000], &[1, 2], &[0, 1], &|_| false);
        assert!(matches!(hashed.runs, Runs::Hashed { .. }));
        assert_eq!(hashed.get(4_000_000).0, &[2]);
        assert_eq!(hashed.get(11).0, &[] as &[u32]);
    }
}
