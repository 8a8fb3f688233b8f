//! The delta overlay: edges of claims added since the base CSR was built.
//!
//! Edges live in one copy-on-write column; each entity's edges in each direction form a linked
//! list through `next`, headed from a persistent map, so adding an edge costs O(1) and cloning the
//! overlay for a new snapshot costs O(1) too. Lists run newest first.

use crate::ids::NONE;
use crate::index::cow::CowVec;
use crate::index::graph::csr::Edge;

#[derive(Clone, Copy, Debug)]
struct DeltaEdge {
    edge: Edge,
    next: u32,
}

/// Recent edges, both directions.
#[derive(Clone, Debug, Default)]
pub struct Delta {
    edges: CowVec<DeltaEdge>,
    /// entity → [head of out list, head of in list].
    heads: crate::pmap::PMap<u32, [u32; 2]>,
}

impl Delta {
    /// Records claim `claim = subject pred object`; returns the index of its out edge (its in
    /// edge is the next one).
    pub fn add(&mut self, claim: u32, subject: u32, pred: u16, object: u32) -> u32 {
        let out = self.edges.len() as u32;
        self.link(subject, 0, Edge { pred, nbr: object, claim });
        self.link(object, 1, Edge { pred, nbr: subject, claim });
        out
    }

    fn link(&mut self, key: u32, dir: usize, edge: Edge) {
        let idx = self.edges.len() as u32;
        let head = self.heads.entry(key).or_insert([NONE, NONE]);
        let next = head[dir];
        head[dir] = idx;
        self.edges.push(DeltaEdge { edge, next });
    }

    /// Number of edges held (two per claim).
    pub fn len(&self) -> usize {
        self.edges.len()
    }

    /// True when the overlay holds nothing: traversals then skip it entirely.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    /// The index of `entity`'s newest delta edge in direction `dir` (`NONE` when it has none): the
    /// start of a walk with `step`, for iterators that cannot take a closure.
    #[inline]
    pub fn head(&self, entity: u32, dir: usize) -> u32 {
        if self.heads.is_empty() {
            return NONE;
        }
        self.heads.get(&entity).map_or(NONE, |h| h[dir])
    }

    /// The edge at index `i` (from `head` or a previous `step`) and the index of the next older one.
    #[inline]
    pub fn step(&self, i: u32) -> (Edge, u32) {
        let e = self.edges.get(i as usize);
        (e.edge, e.next)
    }

    /// Calls `f` for each delta edge of `entity` in direction `dir` (0 = out, 1 = in), newest first.
    #[inline]
    pub fn for_each(&self, entity: u32, dir: usize, mut f: impl FnMut(Edge)) {
        self.for_each_indexed(entity, dir, |_, e| f(e));
    }

    /// `for_each` with each edge's index.
    #[inline]
    pub fn for_each_indexed(&self, entity: u32, dir: usize, mut f: impl FnMut(u32, Edge)) {
        if self.heads.is_empty() {
            return;
        }
        let Some(head) = self.heads.get(&entity) else { return };
        let mut i = head[dir];
        while i != NONE {
            let e = self.edges.get(i as usize);
            f(i, e.edge);
            i = e.next;
        }
    }
}
