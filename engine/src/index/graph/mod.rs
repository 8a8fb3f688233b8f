//! The graph: base CSR in both directions plus the delta overlay, read as one graph.
//!
//! Claims `0..watermark` are in the base; claims from `watermark` on are in the delta. A merge
//! builds a fresh base over all claims from a read snapshot (off the write path), and the writer
//! swaps it in, keeping in the delta only the claims that arrived meanwhile.

pub mod csr;
pub mod delta;
pub mod hier;

use crate::ids::NONE;
use crate::index::bitcol::BitCol;
use csr::{nbr_id, Csr, Edge};
use delta::Delta;
use hier::PredAdjacency;
use std::sync::Arc;

/// Which way to follow claims.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Direction {
    /// Subject → object.
    Out,
    /// Object → subject.
    In,
    /// Either way.
    #[default]
    Both,
}

impl Direction {
    /// The other way (`Both` stays).
    #[must_use]
    pub fn reversed(self) -> Direction {
        match self {
            Direction::Out => Direction::In,
            Direction::In => Direction::Out,
            Direction::Both => Direction::Both,
        }
    }

    /// The directions to scan: 0 = out, 1 = in.
    pub(crate) fn dirs(self) -> &'static [usize] {
        match self {
            Direction::Out => &[0],
            Direction::In => &[1],
            Direction::Both => &[0, 1],
        }
    }
}

/// Base + delta adjacency.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    pub(crate) base: [Arc<Csr>; 2],
    /// Claims below this id are in `base`.
    pub(crate) watermark: u32,
    pub(crate) delta: Delta,
    /// Entities whose base edges' `LIVE_BIT`s may be stale (a claim changed visibility since the
    /// build) or that have time-bounded claims: their edges are checked claim by claim.
    pub(crate) dirty: BitCol,
    /// Per-predicate adjacency (out, in) of the predicates that were transitive at build time.
    pub(crate) hier: Arc<Vec<(u16, [PredAdjacency; 2])>>,
    /// Claims given other endpoints since the base was built (entity merges and their undo):
    /// which of their stored edges are current. Every other edge of such a claim is stale and
    /// skipped; the entities holding its base edges are dirty, so the stored-bit fast path never
    /// reads a stale edge.
    pub(crate) moved: crate::pmap::PMap<u32, Moved>,
}

/// Where a moved claim's current edges are.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Moved {
    /// The delta index of the current out edge (the in edge is the next one), or `NONE` when the
    /// claim is back at its base endpoints and its base edges are current.
    current: u32,
    /// The endpoints the base holds for it (`None` for a claim added after the base).
    base: Option<(u32, u32)>,
}

impl Graph {
    /// A graph with a fresh base over claims `0..watermark` and an empty delta.
    pub fn new(base: Base, watermark: u32, dirty: BitCol) -> Graph {
        Graph { base: base.csr, watermark, delta: Delta::default(), dirty, hier: Arc::new(base.hier), moved: crate::pmap::PMap::default() }
    }

    /// The single-predicate adjacency of `pred` in direction `dir`, if it was built.
    #[inline]
    pub fn pred_adjacency(&self, pred: u16, dir: usize) -> Option<&PredAdjacency> {
        self.hier.iter().find(|(p, _)| *p == pred).map(|(_, adj)| &adj[dir])
    }

    /// Marks entity `e`'s base edges as possibly stale.
    pub fn mark_dirty(&mut self, e: u32) {
        if (e as usize) < self.dirty.len() && !self.dirty.get(e as usize) {
            self.dirty.set(e as usize, true);
        }
    }

    /// Records a new claim (always into the delta).
    pub fn add_claim(&mut self, claim: u32, subject: u32, pred: u16, object: u32) {
        debug_assert!(claim >= self.watermark);
        self.delta.add(claim, subject, pred, object);
    }

    /// Gives `claim` (now `from`) the endpoints `to`: back at its base endpoints its base edges
    /// are current again; anywhere else it gets new delta edges. Its base endpoints become dirty.
    pub fn repoint(&mut self, claim: u32, pred: u16, from: (u32, u32), to: (u32, u32)) {
        let base = match self.moved.get(&claim) {
            Some(m) => m.base,
            None => (claim < self.watermark).then_some(from),
        };
        let current = if base == Some(to) { NONE } else { self.delta.add(claim, to.0, pred, to.1) };
        if let Some((s, o)) = base {
            self.mark_dirty(s);
            self.mark_dirty(o);
        }
        self.moved.insert(claim, Moved { current, base });
    }

    /// Whether a base edge of `claim` is current (not left behind by a move).
    #[inline]
    pub fn base_edge_current(&self, claim: u32) -> bool {
        self.moved.is_empty() || self.moved.get(&claim).is_none_or(|m| m.current == NONE)
    }

    /// Whether the delta edge at index `i` (of `claim`) is current: not left behind by a move.
    #[inline]
    pub fn delta_edge_current(&self, i: u32, claim: u32) -> bool {
        self.moved.is_empty() || self.moved.get(&claim).is_none_or(|m| m.current != NONE && i & !1 == m.current)
    }

    /// Calls `f` for every current delta edge of `entity` in direction `dir`, newest first.
    #[inline]
    pub fn for_each_delta_edge(&self, entity: u32, dir: usize, mut f: impl FnMut(Edge)) {
        if self.delta.is_empty() {
            return;
        }
        if self.moved.is_empty() {
            self.delta.for_each(entity, dir, f);
            return;
        }
        self.delta.for_each_indexed(entity, dir, |i, e| {
            if self.delta_edge_current(i, e.claim) {
                f(e);
            }
        });
    }

    /// Calls `f` for every edge of `entity` in direction `dir` (0 out, 1 in), optionally only those
    /// of one predicate. Base edges come first in (predicate, claim) order, then delta edges.
    #[inline]
    pub fn for_each_edge(&self, entity: u32, dir: usize, pred: Option<u16>, mut f: impl FnMut(Edge)) {
        let base = &self.base[dir];
        let r = match pred {
            Some(p) => base.pred_range(entity, p),
            None => base.range(entity),
        };
        let (preds, nbrs, claims) = (base.preds(r.clone()), base.nbrs(r.clone()), base.claims(r));
        for i in 0..nbrs.len() {
            if self.base_edge_current(claims[i]) {
                f(Edge { pred: preds[i], nbr: nbr_id(nbrs[i]), claim: claims[i] });
            }
        }
        self.for_each_delta_edge(entity, dir, |e| {
            if pred.is_none_or(|p| p == e.pred) {
                f(e);
            }
        });
    }

    /// Base edge slices of `entity` in direction `dir`: (stored neighbours with `LIVE_BIT`,
    /// claims). Hot traversal loops read these directly and then visit the delta separately.
    #[inline]
    pub fn base_slices(&self, entity: u32, dir: usize) -> (&[u32], &[u32]) {
        let base = &self.base[dir];
        let r = base.range(entity);
        (base.nbrs(r.clone()), base.claims(r))
    }

    /// Delta overlay.
    #[inline]
    pub fn delta(&self) -> &Delta {
        &self.delta
    }

    /// Edges in the delta (two per claim).
    pub fn delta_len(&self) -> usize {
        self.delta.len()
    }

    /// Heap bytes of the base CSRs.
    pub fn base_heap_bytes(&self) -> usize {
        self.base[0].heap_bytes() + self.base[1].heap_bytes()
    }
}

/// A freshly built base: the CSR in both directions and the per-predicate adjacency of the
/// transitive predicates.
pub struct Base {
    pub(crate) csr: [Arc<Csr>; 2],
    pub(crate) hier: Vec<(u16, [PredAdjacency; 2])>,
}

/// A base from two CSRs read back from a snapshot; the hierarchy adjacency of `transitive` is
/// rebuilt from the claim columns (it is small).
pub fn base_from_csr(
    out: Csr,
    inn: Csr,
    subjects: &[u32],
    preds: &[u16],
    objects: &[u32],
    fast: &(dyn Fn(u32) -> bool + Sync),
    transitive: &[u16],
) -> Base {
    let hier = transitive
        .iter()
        .map(|&p| {
            let claims: Vec<u32> = (0..preds.len() as u32).filter(|c| preds[*c as usize] == p).collect();
            (p, hierarchy(subjects, objects, &claims, fast))
        })
        .collect();
    Base { csr: [Arc::new(out), Arc::new(inn)], hier }
}

/// Both directions of one predicate's adjacency over its claims.
fn hierarchy(subjects: &[u32], objects: &[u32], claims: &[u32], fast: &(dyn Fn(u32) -> bool + Sync)) -> [PredAdjacency; 2] {
    [PredAdjacency::build(subjects, objects, claims, fast), PredAdjacency::build(objects, subjects, claims, fast)]
}

/// Builds both base directions over claims `0..claim_count` from the claim columns, the two
/// directions in parallel; `fast(c)` is claim `c`'s default visibility at build time;
/// `transitive` lists the predicates that also get their own adjacency.
pub fn build_base(
    entity_count: usize,
    subjects: &[u32],
    preds: &[u16],
    objects: &[u32],
    fast: &(dyn Fn(u32) -> bool + Sync),
    transitive: &[u16],
) -> Base {
    let order = Csr::pred_order(preds);
    let (out, inn) = rayon::join(
        || Csr::build(entity_count, subjects, objects, preds, &order, fast),
        || Csr::build(entity_count, objects, subjects, preds, &order, fast),
    );
    let hier = transitive
        .iter()
        .map(|&p| {
            let lo = order.partition_point(|c| preds[*c as usize] < p);
            let hi = order.partition_point(|c| preds[*c as usize] <= p);
            (p, hierarchy(subjects, objects, &order[lo..hi], fast))
        })
        .collect();
    Base { csr: [Arc::new(out), Arc::new(inn)], hier }
}

/// The dirty set of a fresh base: the endpoints of the claims that are live but time-bounded.
pub fn initial_dirty(entity_count: usize, timed_live: impl Iterator<Item = (u32, u32)>) -> BitCol {
    let mut bits = vec![false; entity_count];
    for (s, o) in timed_live {
        bits[s as usize] = true;
        bits[o as usize] = true;
    }
    BitCol::from_bits(bits.into_iter())
}
