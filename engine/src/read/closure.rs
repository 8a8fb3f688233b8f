//! Transitive closure over a transitive predicate: ancestors and descendants with their distance,
//! and the hierarchy paths between two entities. All cycle-safe.
//!
//! Direction follows the claim: for `child SUBCLASS_OF parent`, ancestors walk subject → object
//! and descendants walk object → subject.

use crate::error::ReadError;
use crate::ids::{EntityId, PredicateId};
use crate::index::graph::csr::LIVE_BIT;
use crate::index::graph::hier::{DenseRuns, HAS_RUN};
use crate::index::graph::Direction;
use crate::normalize::vocabulary_key_of;
use crate::read::filter::{Compiled, EdgeFilter};
use crate::read::khop::{PredEdges, SCRATCH};
use crate::read::scope::Ticker;
use crate::read::view::WorkspaceView;
use crate::read::visibility::Visibility;
use crate::state::FlatFilter;
use std::collections::HashSet;

/// The most entries the buffer a thread keeps for counted closures may hold on to (a walk that
/// reached more gives its buffer back to the allocator).
const COUNTED_KEPT_MAX: usize = 1 << 16;

thread_local! {
    /// The buffer `closure_count_by_id` walks into, kept between calls.
    static COUNTED: std::cell::RefCell<Vec<(EntityId, u32)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Longest hierarchy path followed by `hierarchy_paths`, in hops (the search is recursive).
pub const HIERARCHY_PATH_HOPS_MAX: usize = 4096;

impl WorkspaceView<'_> {
    /// The interned id of `predicate`, which must be declared transitive here.
    fn transitive_pred(&self, predicate: &str) -> Result<u16, ReadError> {
        let key = vocabulary_key_of(predicate);
        match self.st.catalog.predicates.get(&key) {
            Some(p) if self.st.catalog.predicate_defs.get(&(self.ws, PredicateId(p))).is_some_and(|d| d.transitive) => Ok(p),
            _ => Err(ReadError::NotTransitive(key.into_owned())),
        }
    }

    fn transitive_filter(&self, predicate: &str, direction: Direction) -> Result<Compiled, ReadError> {
        self.transitive_pred(predicate)?;
        Ok(Compiled::new(&EdgeFilter::new(direction).predicates(&[predicate]), self.st))
    }

    fn closure(&self, entity: EntityId, predicate: &str, direction: Direction, v: &Visibility) -> Result<Vec<(EntityId, u32)>, ReadError> {
        self.check_entity(entity)?;
        let pred = self.transitive_pred(predicate)?;
        let dir = usize::from(direction == Direction::In);
        self.closure_over_edges(entity, &[PredEdges::new(self.st, self.vis(v), dir, pred)], false)
    }

    /// The closure over predicate `p` in `direction` (`Out`: ancestors, `In`: descendants) with
    /// the predicate already resolved (what an executor holds): every entity reached with its
    /// minimum distance, nearest first. The start is left out, or, with `start_on_cycle`, is in
    /// when a cycle leads back to it (a walk in Cypher may end where it began). `None` when `p`
    /// is not declared transitive in this workspace.
    pub fn closure_by_id(
        &self,
        entity: EntityId,
        p: PredicateId,
        direction: Direction,
        v: &Visibility,
        start_on_cycle: bool,
    ) -> Result<Option<Vec<(EntityId, u32)>>, ReadError> {
        let Some(edges) = self.transitive_edges(entity, p, direction, v)? else { return Ok(None) };
        self.closure_over_edges(entity, &[edges], start_on_cycle).map(Some)
    }

    /// The edges `closure_by_id` walks: `p`'s in `direction` under `v`, once `entity` is known
    /// here; `None` when `p` is not declared transitive in this workspace.
    fn transitive_edges(
        &self,
        entity: EntityId,
        p: PredicateId,
        direction: Direction,
        v: &Visibility,
    ) -> Result<Option<PredEdges<'_>>, ReadError> {
        self.check_entity(entity)?;
        if !self.st.catalog.predicate_defs.get(&(self.ws, p)).is_some_and(|d| d.transitive) {
            return Ok(None);
        }
        let dir = usize::from(direction == Direction::In);
        Ok(Some(PredEdges::new(self.st, self.vis(v), dir, p.0)))
    }

    /// Breadth-first closure from `entity` over the predicates `preds` in direction `dir` (0 out,
    /// 1 in), with the thread's reusable visited set: every entity reached with its shortest
    /// distance, nearest first, the start excluded. Cycle-safe.
    pub(crate) fn closure_over_preds(
        &self,
        entity: EntityId,
        preds: &[u16],
        dir: usize,
        v: &Visibility,
    ) -> Result<Vec<(EntityId, u32)>, ReadError> {
        let vis = self.vis(v);
        let edges: Vec<PredEdges<'_>> = preds.iter().map(|&p| PredEdges::new(self.st, vis, dir, p)).collect();
        self.closure_over_edges(entity, &edges, false)
    }

    /// `closure_over_preds` over edges already resolved. Stops with an error naming the limit
    /// past the scope's `visited_max`, and when the scope's deadline or token says so. The start
    /// is reached like any entity when `start_on_cycle` (it is not marked visited first).
    fn closure_over_edges(
        &self,
        entity: EntityId,
        edges: &[PredEdges<'_>],
        start_on_cycle: bool,
    ) -> Result<Vec<(EntityId, u32)>, ReadError> {
        self.closure_into(entity, edges, start_on_cycle, Vec::with_capacity(16))
    }

    /// `closure_by_id`'s count, and whether the start is among those reached, without handing
    /// them over: the walk fills a buffer the thread keeps (a count pays no allocation).
    pub fn closure_count_by_id(
        &self,
        entity: EntityId,
        p: PredicateId,
        direction: Direction,
        v: &Visibility,
        start_on_cycle: bool,
    ) -> Result<Option<(usize, bool)>, ReadError> {
        let Some(edges) = self.transitive_edges(entity, p, direction, v)? else { return Ok(None) };
        let buffer = COUNTED.with(|b| b.try_borrow_mut().map(|mut b| std::mem::take(&mut *b)).unwrap_or_default());
        let mut out = self.closure_into(entity, &[edges], start_on_cycle, buffer)?;
        let counted = (out.len(), out.iter().any(|(e, _)| *e == entity));
        if out.capacity() <= COUNTED_KEPT_MAX {
            out.clear();
            COUNTED.with(|b| {
                if let Ok(mut b) = b.try_borrow_mut() {
                    *b = out;
                }
            });
        }
        Ok(Some(counted))
    }

    /// The walk of `closure_over_edges`, into `out` (empty).
    fn closure_into(
        &self,
        entity: EntityId,
        edges: &[PredEdges<'_>],
        start_on_cycle: bool,
        out: Vec<(EntityId, u32)>,
    ) -> Result<Vec<(EntityId, u32)>, ReadError> {
        let st = self.st;
        let mut walk = Bounds { ticker: Ticker::new(self.cx), visited_max: self.cx.limits.visited_max, stop: None };
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            scratch.begin(st.entities.len(), false);
            let mut todo = std::mem::take(&mut scratch.todo);
            let mut out = out;
            // With one predicate the stored neighbours say which nodes are leaves: they join the
            // result without being expanded. The expansion order, hence the result, is the same.
            let bits = scratch.bits_mut();
            if !start_on_cycle {
                bits[(entity.0 >> 6) as usize] |= 1 << (entity.0 & 63);
            }
            match edges {
                [pe] => match pe.dense_walk() {
                    Some(dense) => (todo, out) = breadth_first_dense(pe, dense, entity.0, bits, todo, out, &mut walk),
                    None => breadth_first(edges, true, entity.0, bits, &mut todo, &mut out, &mut walk),
                },
                _ => breadth_first(edges, false, entity.0, bits, &mut todo, &mut out, &mut walk),
            }
            todo.clear();
            scratch.todo = todo;
            // The visited marks are cleared whether the walk finished or stopped.
            scratch.end(out.iter().map(|(e, _)| e.0).chain([entity.0]));
            match walk.stop {
                Some(err) => Err(err),
                None => Ok(out),
            }
        })
    }

    /// All transitive ancestors of `entity` over `predicate` (declared transitive), each with its
    /// minimum distance, in BFS order.
    pub fn ancestors(&self, entity: EntityId, predicate: &str, v: &Visibility) -> Result<Vec<(EntityId, u32)>, ReadError> {
        self.closure(entity, predicate, Direction::Out, v)
    }

    /// All transitive descendants of `entity` over `predicate`, with minimum distance, BFS order.
    pub fn descendants(&self, entity: EntityId, predicate: &str, v: &Visibility) -> Result<Vec<(EntityId, u32)>, ReadError> {
        self.closure(entity, predicate, Direction::In, v)
    }

    /// The hierarchy paths from `from` up to its ancestor `to` (each path lists entities from
    /// `from` to `to`), at most `max_paths` of them, shortest first. Empty when `to` is not an
    /// ancestor.
    pub fn hierarchy_paths(
        &self,
        from: EntityId,
        to: EntityId,
        predicate: &str,
        max_paths: usize,
        v: &Visibility,
    ) -> Result<Vec<Vec<EntityId>>, ReadError> {
        self.check_entity(from)?;
        self.check_entity(to)?;
        // Only entities that can still reach `to` are worth exploring: `to`'s descendants.
        let mut useful: HashSet<u32> = self.descendants(to, predicate, v)?.into_iter().map(|(e, _)| e.0).collect();
        useful.insert(to.0);
        if !useful.contains(&from.0) || max_paths == 0 {
            return Ok(Vec::new());
        }
        let up = self.transitive_filter(predicate, Direction::Out)?;
        let vis = self.vis(v);
        let mut paths = Vec::new();
        let mut path = vec![from.0];
        let mut on_path: HashSet<u32> = HashSet::from([from.0]);
        let mut walk = Bounds { ticker: Ticker::new(self.cx), visited_max: self.cx.limits.visited_max, stop: None };
        let mut steps = 0usize;
        self.paths_dfs(&up, &vis, to.0, &useful, &mut path, &mut on_path, &mut paths, max_paths, &mut walk, &mut steps);
        if let Some(err) = walk.stop {
            return Err(err);
        }
        paths.sort_by_key(Vec::len);
        Ok(paths.into_iter().map(|p| p.into_iter().map(EntityId).collect()).collect())
    }

    #[allow(clippy::too_many_arguments)] // Reason: private recursion helper; a struct would only rename the same state.
    fn paths_dfs(
        &self,
        up: &Compiled,
        vis: &crate::read::visibility::Vis<'_>,
        to: u32,
        useful: &HashSet<u32>,
        path: &mut Vec<u32>,
        on_path: &mut HashSet<u32>,
        paths: &mut Vec<Vec<u32>>,
        max_paths: usize,
        walk: &mut Bounds<'_>,
        steps: &mut usize,
    ) {
        // Every step of the search counts against the scope's `visited_max` and deadline.
        *steps += 1;
        if walk.stop.is_some() || walk.stopped(*steps) {
            return;
        }
        let last = *path.last().expect("path starts non-empty");
        if last == to {
            paths.push(path.clone());
            return;
        }
        if path.len() > HIERARCHY_PATH_HOPS_MAX {
            // A hierarchy this deep is a data problem; stop rather than exhaust the stack.
            return;
        }
        let mut next = Vec::new();
        up.for_each(self.st, vis, last, |_, e| next.push(e.nbr));
        next.sort_unstable();
        next.dedup();
        for n in next {
            if paths.len() >= max_paths {
                return;
            }
            if !useful.contains(&n) || !on_path.insert(n) {
                continue;
            }
            path.push(n);
            self.paths_dfs(up, vis, to, useful, path, on_path, paths, max_paths, walk, steps);
            path.pop();
            on_path.remove(&n);
        }
    }
}

/// The closure's walk from `start`, marking `bits` (one per entity; the caller marks `start`
/// first unless a cycle back to it belongs in the result): each
/// entity reached goes to `out` with its depth, and to `todo` unless `trust_marks` (one predicate)
/// and its mark says it is a leaf.
fn breadth_first(
    edges: &[PredEdges<'_>],
    trust_marks: bool,
    start: u32,
    bits: &mut [u64],
    todo: &mut Vec<(u32, u32)>,
    out: &mut Vec<(EntityId, u32)>,
    walk: &mut Bounds<'_>,
) {
    let (mut e, mut d) = (start, 0);
    let mut head = 0;
    loop {
        for pe in edges {
            pe.for_each_marked(e, |n, may_have_edges| reach(bits, n, may_have_edges || !trust_marks, d + 1, todo, out));
        }
        if walk.stopped(out.len()) {
            break;
        }
        let Some(&next) = todo.get(head) else { break };
        (e, d) = next;
        head += 1;
    }
}

/// A walk's queue of entities to expand and its result.
type WalkQueues = (Vec<(u32, u32)>, Vec<(EntityId, u32)>);

/// `breadth_first` for one predicate with a dense adjacency (`PredEdges::dense_walk`), the
/// common case of an ontology query, as one tight loop over the stored neighbours; entities that
/// are not `clean` take the general per-claim path. The queues are taken and given back by value
/// so that they live in registers.
fn breadth_first_dense(
    pe: &PredEdges<'_>,
    (runs, flat, mask): (DenseRuns<'_>, &FlatFilter, u32),
    start: u32,
    bits: &mut [u64],
    mut todo: Vec<(u32, u32)>,
    mut out: Vec<(EntityId, u32)>,
    walk: &mut Bounds<'_>,
) -> WalkQueues {
    let (mut e, mut d) = (start, 0);
    let mut head = 0;
    loop {
        if flat.clean(e) {
            for &v in runs.get(e) {
                if v & LIVE_BIT != 0 {
                    reach(bits, v & mask, v & HAS_RUN != 0, d + 1, &mut todo, &mut out);
                }
            }
        } else {
            pe.for_each_marked(e, |n, expand| reach(bits, n, expand, d + 1, &mut todo, &mut out));
        }
        if walk.stopped(out.len()) {
            break;
        }
        let Some(&next) = todo.get(head) else { break };
        (e, d) = next;
        head += 1;
    }
    (todo, out)
}

/// What stops a closure walk: the scope's deadline or token, checked every `CHECK_EVERY`
/// entities expanded, and its `visited_max`.
struct Bounds<'a> {
    ticker: Ticker<'a>,
    visited_max: usize,
    stop: Option<ReadError>,
}

impl Bounds<'_> {
    /// Counts one entity expanded; true (with `stop` set) when the walk must end.
    #[inline]
    fn stopped(&mut self, reached: usize) -> bool {
        if reached > self.visited_max {
            self.stop =
                Some(ReadError::Limit { name: "visited_max", limit: self.visited_max as u64, what: "the entities a closure reaches" });
        } else if let Err(i) = self.ticker.tick(1) {
            self.stop = Some(ReadError::Interrupted(i));
        }
        self.stop.is_some()
    }
}

/// A walk reaches `n` at depth `d`: unless already visited, it is marked, added to the result,
/// and queued for expansion when `expand`.
#[inline]
fn reach(bits: &mut [u64], n: u32, expand: bool, d: u32, todo: &mut Vec<(u32, u32)>, out: &mut Vec<(EntityId, u32)>) {
    let (w, m) = ((n >> 6) as usize, 1u64 << (n & 63));
    if bits[w] & m == 0 {
        bits[w] |= m;
        out.push((EntityId(n), d));
        if expand {
            todo.push((n, d));
        }
    }
}
