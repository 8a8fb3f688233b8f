//! k-hop expansion from one or many seeds.
//!
//! Level-synchronous BFS. Each level's frontier is expanded into a candidate list of
//! (neighbour, claim) pairs, in frontier order; large frontiers are split into chunks expanded on
//! rayon and concatenated in chunk order, so the candidate list, and therefore the result, is
//! identical to the sequential path. Candidates are then deduplicated against a visited set kept
//! in reusable per-thread scratch (epoch-stamped, never cleared).

use crate::error::ReadError;
use crate::ids::{ClaimId, EntityId};
use crate::index::graph::csr::LIVE_BIT;
use crate::index::graph::hier::{DenseRuns, PredAdjacency, HAS_RUN};
use crate::read::filter::{Compiled, EdgeFilter};
use crate::read::scope::Ticker;
use crate::read::view::WorkspaceView;
use crate::read::visibility::{Vis, Visibility};
use crate::state::{FlatFilter, State};
use rayon::prelude::*;
use std::cell::RefCell;

/// Frontiers at least this large are expanded in parallel.
const PARALLEL_FRONTIER_MIN: usize = 512;
/// Entities per parallel chunk.
const CHUNK: usize = 256;

/// A k-hop query.
#[derive(Clone, Debug, PartialEq)]
pub struct KHopQuery {
    /// Hops to take (0 returns the seeds).
    pub max_depth: u32,
    /// Filter of hop `i` is `hops[min(i, len - 1)]`; empty = any visible edge, both directions.
    pub hops: Vec<EdgeFilter>,
    /// Which claims count.
    pub visibility: Visibility,
    /// Stop after visiting this many entities (seeds included) and set `truncated`;
    /// `None` = the database's `traversal_visited_max` limit.
    pub max_visited: Option<usize>,
    /// Also return, for each entity, the claims that reached it from the previous level.
    pub with_claims: bool,
    /// Expand large frontiers on rayon (the default); `false` forces the sequential path.
    pub parallel: bool,
}

impl Default for KHopQuery {
    fn default() -> Self {
        KHopQuery {
            max_depth: 1,
            hops: Vec::new(),
            visibility: Visibility::default(),
            max_visited: None,
            with_claims: false,
            parallel: true,
        }
    }
}

impl KHopQuery {
    /// `depth` hops over any visible edge, both directions.
    pub fn depth(depth: u32) -> KHopQuery {
        KHopQuery { max_depth: depth, ..KHopQuery::default() }
    }
}

/// An entity reached by a traversal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reached {
    /// The entity.
    pub entity: EntityId,
    /// Its minimum number of hops from a seed.
    pub depth: u32,
}

/// The result of a k-hop expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KHopResult {
    /// Reached entities by depth ascending, seeds first at depth 0. Within a depth the order
    /// follows adjacency and may change when the delta is merged; the set never does.
    pub entities: Vec<Reached>,
    /// With `with_claims`: for each entity (same index), the claims linking it to entities of the
    /// previous level, ascending. Empty otherwise.
    pub via: Vec<Vec<ClaimId>>,
    /// The visited cap stopped the expansion early.
    pub truncated: bool,
}

/// Reusable per-thread visited set: a bitset over entity ids (small enough to stay in cache),
/// cleared after each traversal by unsetting exactly the bits it set, plus the result slot of each
/// visited entity when a traversal collects claims.
#[derive(Default)]
pub(crate) struct Scratch {
    bits: Vec<u64>,
    slot: Vec<u32>,
    /// A closure's queue of entities still to expand, with their depth (kept for its capacity).
    pub todo: Vec<(u32, u32)>,
}

impl Scratch {
    /// Starts a traversal over `n` entities.
    pub fn begin(&mut self, n: usize, with_slots: bool) {
        let words = n.div_ceil(64);
        if self.bits.len() < words {
            self.bits.resize(words, 0);
        }
        if with_slots && self.slot.len() < n {
            self.slot.resize(n, 0);
        }
        debug_assert!(self.bits.iter().all(|w| *w == 0), "scratch left dirty");
    }

    /// Marks `e`; returns true if it was not yet visited.
    #[inline]
    pub fn visit(&mut self, e: u32) -> bool {
        let w = &mut self.bits[(e >> 6) as usize];
        let m = 1u64 << (e & 63);
        let fresh = *w & m == 0;
        *w |= m;
        fresh
    }

    /// The visited bits, for a walk that marks them itself.
    pub fn bits_mut(&mut self) -> &mut [u64] {
        &mut self.bits
    }

    /// Unmarks the given entities (exactly those visited), leaving the scratch clean.
    pub fn end(&mut self, visited: impl Iterator<Item = u32>) {
        for e in visited {
            self.bits[(e >> 6) as usize] = 0;
        }
    }
}

thread_local! {
    pub(crate) static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Calls `f(neighbour, claim)` for every edge of `e` that passes `filter` and `vis`. The default
/// filter under the default visibility takes a tight loop over the base CSR: for an entity whose
/// stored `LIVE_BIT`s are current it reads only the neighbour array (and the claim array when the
/// caller wants claims); otherwise it tests the snapshot's materialized filter per claim.
#[inline]
pub(crate) fn for_each_edge(st: &State, vis: &Vis<'_>, filter: &Compiled, e: u32, need_claims: bool, mut f: impl FnMut(u32, u32)) {
    match vis.flat() {
        Some(flat) if filter.is_plain() => {
            let t = vis.valid_at();
            let clean = flat.clean(e);
            for &dir in filter.direction.dirs() {
                let (nbrs, claims) = st.graph.base_slices(e, dir);
                if clean && !need_claims {
                    for &v in nbrs {
                        if v & LIVE_BIT != 0 {
                            f(v & !LIVE_BIT, 0);
                        }
                    }
                } else if clean {
                    for (&v, &c) in nbrs.iter().zip(claims) {
                        if v & LIVE_BIT != 0 {
                            f(v & !LIVE_BIT, c);
                        }
                    }
                } else {
                    for (&v, &c) in nbrs.iter().zip(claims) {
                        if flat.visible(st, c, t) && st.graph.base_edge_current(c) {
                            f(v & !LIVE_BIT, c);
                        }
                    }
                }
                st.graph.for_each_delta_edge(e, dir, |edge| {
                    if vis.claim(st, edge.claim) {
                        f(edge.nbr, edge.claim);
                    }
                });
            }
        }
        _ => filter.for_each(st, vis, e, |_, edge| f(edge.nbr, edge.claim)),
    }
}

/// Calls `f(neighbour)` for every visible edge of `e` in direction `dir` (0 out, 1 in) with
/// predicate `pred` (see `PredEdges`).
#[inline]
pub(crate) fn for_each_pred_edge(st: &State, vis: &Vis<'_>, e: u32, dir: usize, pred: u16, f: impl FnMut(u32)) {
    PredEdges::new(st, *vis, dir, pred).for_each(e, f);
}

/// The visible edges of one predicate in one direction, resolved once for a walk that asks for
/// many entities' edges: the predicate's own adjacency when it has one (transitive predicates),
/// else the base CSR's predicate range (a binary search); the stored live bits of clean
/// entities, the per-claim test of the others; then the delta.
pub(crate) struct PredEdges<'s> {
    st: &'s State,
    vis: Vis<'s>,
    adj: Option<&'s PredAdjacency>,
    dir: usize,
    pred: u16,
    delta: bool,
    /// Clears a stored neighbour's flag bits.
    mask: u32,
    /// The stored neighbours say which have edges here (`HAS_RUN`) and the delta adds none.
    leaves_known: bool,
}

impl<'s> PredEdges<'s> {
    pub fn new(st: &'s State, vis: Vis<'s>, dir: usize, pred: u16) -> PredEdges<'s> {
        let delta = !st.graph.delta().is_empty();
        let adj = st.graph.pred_adjacency(pred, dir);
        let mask = adj.map_or(!LIVE_BIT, PredAdjacency::id_mask);
        let leaves_known = !delta && adj.is_some_and(PredAdjacency::marks_runs);
        PredEdges { st, vis, adj, dir, pred, delta, mask, leaves_known }
    }

    /// The predicate's dense adjacency with its flat filter, when a walk may read the stored
    /// neighbours directly: leaves are known (no delta), the visibility is the default one. The
    /// walk must still send entities that are not `clean` through `for_each_marked`.
    pub fn dense_walk(&self) -> Option<(DenseRuns<'s>, &'s FlatFilter, u32)> {
        match (self.leaves_known, self.adj.and_then(PredAdjacency::dense), self.vis.flat()) {
            (true, Some(d), Some(flat)) => Some((d, flat, self.mask)),
            _ => None,
        }
    }

    /// Calls `f(neighbour)` for each visible edge of `e`.
    #[inline]
    pub fn for_each(&self, e: u32, mut f: impl FnMut(u32)) {
        self.for_each_marked(e, |n, _| f(n));
    }

    /// Calls `f(neighbour, may_have_edges)` for each visible edge of `e`; `may_have_edges` is
    /// false only for a neighbour known to have no edge of the predicate in this direction, so a
    /// walk need not expand it.
    #[inline]
    pub fn for_each_marked(&self, e: u32, mut f: impl FnMut(u32, bool)) {
        let st = self.st;
        let (nbrs, claims) = match self.adj {
            Some(adj) => adj.get(e),
            None => {
                let base = &st.graph.base[self.dir];
                let r = base.pred_range(e, self.pred);
                (base.nbrs(r.clone()), base.claims(r))
            }
        };
        let (mask, known) = (self.mask, self.leaves_known);
        match self.vis.flat() {
            Some(flat) if flat.clean(e) => {
                for &v in nbrs {
                    if v & LIVE_BIT != 0 {
                        f(v & mask, !known || v & HAS_RUN != 0);
                    }
                }
            }
            _ => {
                for (&v, &c) in nbrs.iter().zip(claims) {
                    if self.vis.claim(st, c) && st.graph.base_edge_current(c) {
                        f(v & mask, !known || v & HAS_RUN != 0);
                    }
                }
            }
        }
        if self.delta {
            st.graph.for_each_delta_edge(e, self.dir, |edge| {
                if edge.pred == self.pred && self.vis.claim(st, edge.claim) {
                    f(edge.nbr, true);
                }
            });
        }
    }
}

fn expand(st: &State, vis: &Vis<'_>, filter: &Compiled, frontier: &[u32], with_claims: bool, out: &mut Vec<(u32, u32)>) {
    for &e in frontier {
        for_each_edge(st, vis, filter, e, with_claims, |nbr, claim| out.push((nbr, claim)));
    }
}

/// The traversal's growing result.
struct Walk {
    out: Vec<Reached>,
    via: Vec<Vec<ClaimId>>,
    next: Vec<u32>,
    with_claims: bool,
    level_start: usize,
    /// False on the last level: its entities are not expanded, so need no frontier.
    expand_next: bool,
}

impl Walk {
    /// Adds a seed (depth 0, reached by no claim).
    fn seed(&mut self, scratch: &mut Scratch, e: u32) {
        if scratch.visit(e) {
            if self.with_claims {
                scratch.slot[e as usize] = self.out.len() as u32;
                self.via.push(Vec::new());
            }
            self.out.push(Reached { entity: EntityId(e), depth: 0 });
            self.next.push(e);
        }
    }

    #[inline]
    fn reach(&mut self, scratch: &mut Scratch, nbr: u32, claim: u32, depth: u32) {
        if scratch.visit(nbr) {
            if self.with_claims {
                scratch.slot[nbr as usize] = self.out.len() as u32;
                self.via.push(Vec::new());
            }
            self.out.push(Reached { entity: EntityId(nbr), depth });
            if self.expand_next {
                self.next.push(nbr);
            }
        }
        if self.with_claims {
            let slot = scratch.slot[nbr as usize] as usize;
            if slot >= self.level_start {
                self.via[slot].push(ClaimId(claim));
            }
        }
    }
}

impl WorkspaceView<'_> {
    /// The claims a hop under `filter` follows from one of `entities` to another (a claim from one
    /// to itself too), ascending: what `khop` lists for none, since they reach no entity of a
    /// later level. Checks the view's deadline and cancel token before each entity.
    pub fn claims_between(&self, entities: &[EntityId], filter: &EdgeFilter, visibility: &Visibility) -> Result<Vec<ClaimId>, ReadError> {
        let vis = self.vis(visibility);
        let compiled = Compiled::new(filter, self.st);
        let mut set: Vec<u32> = entities.iter().map(|e| e.0).collect();
        set.sort_unstable();
        set.dedup();
        let mut out = Vec::new();
        for &e in &set {
            self.cx.check().map_err(ReadError::Interrupted)?;
            if (e as usize) < self.st.entities.len() && vis.entity(self.st, e) {
                for_each_edge(self.st, &vis, &compiled, e, true, |nbr, claim| {
                    if set.binary_search(&nbr).is_ok() {
                        out.push(ClaimId(claim));
                    }
                });
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// Expands from `seeds` (all in this workspace) and returns every entity within
    /// `max_depth` hops with its minimum depth.
    pub fn khop(&self, seeds: &[EntityId], q: &KHopQuery) -> Result<KHopResult, ReadError> {
        for &s in seeds {
            self.check_entity(s)?;
        }
        // The scope's limit caps what a query asks for.
        let cap = q.max_visited.unwrap_or(usize::MAX).min(self.cx.limits.visited_max);
        if cap == 0 {
            return Err(ReadError::InvalidParameter { name: "max_visited", reason: "must be at least 1" });
        }
        let vis = self.vis(&q.visibility);
        let default_filter = [EdgeFilter::default()];
        let hops = if q.hops.is_empty() { &default_filter[..] } else { &q.hops[..] };
        let filters: Vec<Compiled> = hops.iter().map(|f| Compiled::new(f, self.st)).collect();
        let st = self.st;
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            scratch.begin(st.entities.len(), q.with_claims);
            let mut walk =
                Walk { out: Vec::new(), via: Vec::new(), next: Vec::new(), with_claims: q.with_claims, level_start: 0, expand_next: true };
            let mut truncated = false;
            for &s in seeds {
                if walk.out.len() >= cap {
                    truncated = true;
                    break;
                }
                if vis.entity(st, s.0) {
                    walk.seed(&mut scratch, s.0);
                }
            }
            let mut frontier: Vec<u32> = std::mem::take(&mut walk.next);
            let mut depth = 0;
            let mut ticker = Ticker::new(self.cx);
            let mut stopped = None;
            while depth < q.max_depth && !frontier.is_empty() && !truncated && stopped.is_none() {
                let filter = &filters[(depth as usize).min(filters.len() - 1)];
                depth += 1;
                walk.level_start = walk.out.len();
                walk.expand_next = depth < q.max_depth;
                // A visible claim implies visible endpoints (deletion and creation time are part
                // of claim visibility), so reached entities need no separate test.
                if q.parallel && frontier.len() >= PARALLEL_FRONTIER_MIN && rayon::current_num_threads() > 1 {
                    let cx = self.cx;
                    let parts: Result<Vec<Vec<(u32, u32)>>, _> = frontier
                        .par_chunks(CHUNK)
                        .map(|chunk| {
                            // One check per chunk: CHUNK entities at most between checks.
                            cx.check()?;
                            let mut v = Vec::new();
                            expand(st, &vis, filter, chunk, q.with_claims, &mut v);
                            Ok(v)
                        })
                        .collect();
                    match parts {
                        Ok(parts) => {
                            for p in parts {
                                for (nbr, claim) in p {
                                    walk.reach(&mut scratch, nbr, claim, depth);
                                }
                            }
                        }
                        Err(e) => stopped = Some(e),
                    }
                } else {
                    for &e in &frontier {
                        if let Err(why) = ticker.tick(1) {
                            stopped = Some(why);
                            break;
                        }
                        for_each_edge(st, &vis, filter, e, q.with_claims, |nbr, claim| walk.reach(&mut scratch, nbr, claim, depth));
                    }
                }
                frontier = std::mem::take(&mut walk.next);
                if walk.out.len() > cap {
                    // Keep the lowest ids of the level that crossed the cap, so the cut depends
                    // on the graph, not on adjacency order (which a merge may change).
                    let start = walk.level_start;
                    if q.with_claims {
                        let mut level: Vec<(Reached, Vec<ClaimId>)> = walk.out.drain(start..).zip(walk.via.drain(start..)).collect();
                        level.sort_unstable_by_key(|r| r.0.entity);
                        for (r, v) in level {
                            walk.out.push(r);
                            walk.via.push(v);
                        }
                        walk.via.truncate(cap);
                    } else {
                        walk.out[start..].sort_unstable_by_key(|r| r.entity);
                    }
                    // Unmark the cut entities before truncating, so the scratch stays clean.
                    scratch.end(walk.out[cap..].iter().map(|r| r.entity.0));
                    walk.out.truncate(cap);
                    truncated = true;
                }
            }
            scratch.end(walk.out.iter().map(|r| r.entity.0));
            if let Some(why) = stopped {
                return Err(ReadError::Interrupted(why));
            }
            for v in &mut walk.via {
                v.sort_unstable();
                v.dedup();
            }
            Ok(KHopResult { entities: walk.out, via: walk.via, truncated })
        })
    }
    /// Runs `khop` from each seed separately, seeds in parallel on rayon; results in seed order.
    pub fn khop_each(&self, seeds: &[EntityId], q: &KHopQuery) -> Result<Vec<KHopResult>, ReadError> {
        if q.parallel {
            seeds.par_iter().map(|s| self.khop(std::slice::from_ref(s), q)).collect()
        } else {
            seeds.iter().map(|s| self.khop(std::slice::from_ref(s), q)).collect()
        }
    }
}
