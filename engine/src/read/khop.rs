//! k-hop expansion from one or many seeds.
//!
//! Level-synchronous BFS. Each level's frontier is expanded into a candidate list of
//! (neighbour, claim) pairs, in frontier order; large frontiers are split into chunks expanded on
//! rayon and concatenated in chunk order, so the candidate list, and therefore the result, is
//! identical to the sequential path. Candidates are then deduplicated against a visited set kept
//! in reusable per-thread scratch (epoch-stamped, never cleared).

use crate::error::ReadError;
use crate::ids::{ClaimId, EntityId};
use crate::read::filter::{Compiled, EdgeFilter};
use crate::read::view::WorkspaceView;
use crate::read::visibility::{Vis, Visibility};
use crate::state::State;
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reached {
    /// The entity.
    pub entity: EntityId,
    /// Its minimum number of hops from a seed.
    pub depth: u32,
    /// With `with_claims`: the claims linking it to entities of the previous level (ascending).
    pub via: Vec<ClaimId>,
}

/// The result of a k-hop expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KHopResult {
    /// Reached entities by depth ascending, seeds first at depth 0. Within a depth the order
    /// follows adjacency and may change when the delta is merged; the set never does.
    pub entities: Vec<Reached>,
    /// The visited cap stopped the expansion early.
    pub truncated: bool,
}

/// Reusable per-thread visited marks: `marks[e] == epoch` means visited in the current traversal;
/// `slot[e]` is its index in the result.
#[derive(Default)]
pub(crate) struct Scratch {
    epoch: u32,
    marks: Vec<u32>,
    slot: Vec<u32>,
}

impl Scratch {
    /// Starts a traversal over `n` entities.
    pub fn begin(&mut self, n: usize) {
        if self.marks.len() < n {
            self.marks.resize(n, 0);
            self.slot.resize(n, 0);
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.marks.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
    }

    /// Marks `e`; returns true if it was not yet visited.
    #[inline]
    pub fn visit(&mut self, e: u32, slot: u32) -> bool {
        let i = e as usize;
        if self.marks[i] == self.epoch {
            return false;
        }
        self.marks[i] = self.epoch;
        self.slot[i] = slot;
        true
    }

    #[inline]
    pub fn slot_of(&self, e: u32) -> Option<u32> {
        let i = e as usize;
        (self.marks[i] == self.epoch).then(|| self.slot[i])
    }
}

thread_local! {
    pub(crate) static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

fn expand(st: &State, vis: &Vis<'_>, filter: &Compiled, frontier: &[u32], out: &mut Vec<(u32, u32)>) {
    for &e in frontier {
        filter.for_each(st, vis, e, |_, edge| out.push((edge.nbr, edge.claim)));
    }
}

impl WorkspaceView<'_> {
    /// Expands from `seeds` (all in this workspace) and returns every entity within
    /// `max_depth` hops with its minimum depth.
    pub fn khop(&self, seeds: &[EntityId], q: &KHopQuery) -> Result<KHopResult, ReadError> {
        for &s in seeds {
            self.check_entity(s)?;
        }
        let cap = q.max_visited.unwrap_or(usize::MAX);
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
            scratch.begin(st.entities.len());
            let mut out: Vec<Reached> = Vec::new();
            let mut truncated = false;
            let mut frontier: Vec<u32> = Vec::new();
            for &s in seeds {
                if out.len() >= cap {
                    truncated = true;
                    break;
                }
                if vis.entity(st, s.0) && scratch.visit(s.0, out.len() as u32) {
                    out.push(Reached { entity: s, depth: 0, via: Vec::new() });
                    frontier.push(s.0);
                }
            }
            let mut candidates: Vec<(u32, u32)> = Vec::new();
            let mut depth = 0;
            while depth < q.max_depth && !frontier.is_empty() && !truncated {
                let filter = &filters[(depth as usize).min(filters.len() - 1)];
                depth += 1;
                candidates.clear();
                if q.parallel && frontier.len() >= PARALLEL_FRONTIER_MIN && rayon::current_num_threads() > 1 {
                    let parts: Vec<Vec<(u32, u32)>> = frontier
                        .par_chunks(CHUNK)
                        .map(|chunk| {
                            let mut v = Vec::new();
                            expand(st, &vis, filter, chunk, &mut v);
                            v
                        })
                        .collect();
                    for p in parts {
                        candidates.extend_from_slice(&p);
                    }
                } else {
                    expand(st, &vis, filter, &frontier, &mut candidates);
                }
                let level_start = out.len();
                frontier.clear();
                for &(nbr, claim) in &candidates {
                    // A visible claim implies visible endpoints (deletion and creation time are
                    // part of claim visibility), so no separate entity test is needed here.
                    if scratch.visit(nbr, out.len() as u32) {
                        out.push(Reached { entity: EntityId(nbr), depth, via: Vec::new() });
                        frontier.push(nbr);
                    }
                    if q.with_claims {
                        if let Some(slot) = scratch.slot_of(nbr) {
                            let slot = slot as usize;
                            if slot >= level_start {
                                out[slot].via.push(ClaimId(claim));
                            }
                        }
                    }
                }
                if out.len() > cap {
                    // Keep the lowest ids of the level that crossed the cap, so the cut depends
                    // on the graph, not on adjacency order (which a merge may change).
                    out[level_start..].sort_unstable_by_key(|r| r.entity);
                    out.truncate(cap);
                    truncated = true;
                }
            }
            if q.with_claims {
                for r in &mut out {
                    r.via.sort_unstable();
                    r.via.dedup();
                }
            }
            Ok(KHopResult { entities: out, truncated })
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
