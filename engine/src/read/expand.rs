//! The executor's edge walk: one entity's visible edges as an iterator of
//! `(claim, predicate, neighbour, direction)`, allocating nothing per edge.
//!
//! An `Expander` binds a visibility, a direction and a predicate set once per query step; its
//! `edges(e)` walks the base CSR (one predicate range per predicate, a binary search each) and then
//! the delta overlay. For an entity whose stored live bits can be trusted under the default
//! visibility, a base edge costs one bit test; any other read tests each claim. Order: per
//! direction (out, then in), base edges in (predicate, claim) order, then the delta's newest first.

use crate::ids::{ClaimId, EntityId, PredicateId, NONE};
use crate::index::graph::csr::{nbr_id, LIVE_BIT};
use crate::index::graph::Direction;
use crate::read::view::WorkspaceView;
use crate::read::visibility::{Vis, Visibility};
use crate::state::State;

/// One edge of an expand: the claim, its predicate, the entity at the other end, and whether the
/// expanded entity is the claim's subject (`Out`) or object (`In`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EdgeRow {
    /// The claim making the edge.
    pub claim: ClaimId,
    /// Its predicate.
    pub predicate: PredicateId,
    /// The entity at the other end.
    pub neighbor: EntityId,
    /// `Out` when the expanded entity is the subject, `In` when it is the object.
    pub direction: Direction,
}

/// A visibility, direction and predicate set bound to one view, reused for every entity a query
/// step expands.
#[derive(Clone, Debug)]
pub struct Expander<'a> {
    st: &'a State,
    vis: Vis<'a>,
    ws: crate::ids::WorkspaceId,
    dirs: &'static [usize],
    /// Sorted and deduplicated; `None` = any predicate, empty = none.
    preds: Option<Vec<u16>>,
}

impl<'a> WorkspaceView<'a> {
    /// An expander following `direction` over the claims visible under `visibility`, only those
    /// with one of `predicates` when given (an empty slice follows nothing).
    pub fn expander(&self, direction: Direction, predicates: Option<&[PredicateId]>, visibility: &Visibility) -> Expander<'a> {
        let preds = predicates.map(|ps| {
            let mut v: Vec<u16> = ps.iter().map(|p| p.0).collect();
            v.sort_unstable();
            v.dedup();
            v
        });
        Expander { st: self.st, vis: self.vis(visibility), ws: self.ws, dirs: direction.dirs(), preds }
    }
}

impl<'a> Expander<'a> {
    /// The visible edges of `e`; none when `e` is not a visible entity of the view's workspace.
    pub fn edges(&self, e: EntityId) -> Edges<'_, 'a> {
        let st = self.st;
        let ok = st.entities.ws.try_get(e.index()).is_some_and(|w| *w == self.ws) && self.vis.entity(st, e.0);
        let mut it = Edges {
            ex: self,
            entity: e.0,
            d: if ok { 0 } else { self.dirs.len() },
            next_pred: 0,
            in_delta: false,
            preds_run: &[],
            nbrs: &[],
            claims: &[],
            i: 0,
            pred: 0,
            clean: false,
            delta: NONE,
        };
        if ok {
            it.clean = self.vis.flat().is_some_and(|f| f.clean(e.0));
            it.start_direction();
        }
        it
    }

    /// The edges claim `c` makes at its end `from`, as `edges(from)` gives them: none when
    /// either is not visible here or its predicate is not followed, two for a loop followed both
    /// ways. What a lookup of the claim by property expands instead of all of `from`'s edges.
    pub fn edges_of_claim(&self, c: ClaimId, from: EntityId) -> Vec<EdgeRow> {
        let st = self.st;
        let seen = st.entities.ws.try_get(from.index()).is_some_and(|w| *w == self.ws) && self.vis.entity(st, from.0);
        if !seen || c.index() >= st.claims.len() || !self.vis.claim(st, c.0) {
            return Vec::new();
        }
        let pred = *st.claims.pred.get(c.index());
        if self.preds.as_ref().is_some_and(|ps| ps.binary_search(&pred).is_err()) {
            return Vec::new();
        }
        let (s, o) = (*st.claims.subject.get(c.index()), *st.claims.object.get(c.index()));
        let row = |neighbor: u32, direction| EdgeRow { claim: c, predicate: PredicateId(pred), neighbor: EntityId(neighbor), direction };
        self.dirs
            .iter()
            .filter_map(|d| match d {
                0 if s == from.0 => Some(row(o, Direction::Out)),
                1 if o == from.0 => Some(row(s, Direction::In)),
                _ => None,
            })
            .collect()
    }

    /// How many visible edges `e` has (for estimates and `size()`-like questions).
    pub fn degree(&self, e: EntityId) -> usize {
        self.edges(e).count()
    }
}

/// The edges of one entity (see `Expander::edges`).
#[derive(Debug)]
pub struct Edges<'x, 'a> {
    ex: &'x Expander<'a>,
    entity: u32,
    /// Index into the expander's directions; past the end when done.
    d: usize,
    /// The next predicate of the set whose base range to load.
    next_pred: usize,
    in_delta: bool,
    /// The current base run: predicates (empty when the run has one predicate, `pred`),
    /// stored neighbours and claims.
    preds_run: &'a [u16],
    nbrs: &'a [u32],
    claims: &'a [u32],
    i: usize,
    pred: u16,
    /// The entity's stored live bits can be trusted (default visibility, not dirty).
    clean: bool,
    /// The next delta edge index, `NONE` when done.
    delta: u32,
}

impl Edges<'_, '_> {
    fn dir(&self) -> usize {
        self.ex.dirs[self.d]
    }

    fn start_direction(&mut self) {
        self.next_pred = 0;
        self.in_delta = false;
        self.delta = NONE;
        self.load_run();
    }

    /// Loads the next base run of this direction; at the end of the runs, starts the delta.
    fn load_run(&mut self) -> bool {
        let base = &self.ex.st.graph.base[self.dir()];
        let range = match &self.ex.preds {
            None if self.next_pred == 0 => {
                let r = base.range(self.entity);
                self.preds_run = base.preds(r.clone());
                Some(r)
            }
            Some(ps) if self.next_pred < ps.len() => {
                self.pred = ps[self.next_pred];
                self.preds_run = &[];
                Some(base.pred_range(self.entity, self.pred))
            }
            _ => None,
        };
        match range {
            Some(r) => {
                self.next_pred += 1;
                self.nbrs = base.nbrs(r.clone());
                self.claims = base.claims(r);
                self.i = 0;
                true
            }
            None => {
                self.nbrs = &[];
                self.claims = &[];
                self.i = 0;
                self.in_delta = true;
                self.delta = self.ex.st.graph.delta().head(self.entity, self.dir());
                false
            }
        }
    }

    /// The next visible delta edge of this direction.
    fn next_delta(&mut self) -> Option<EdgeRow> {
        let st = self.ex.st;
        while self.delta != NONE {
            let i = self.delta;
            let (edge, next) = st.graph.delta().step(i);
            self.delta = next;
            let wanted = self.ex.preds.as_ref().is_none_or(|ps| ps.binary_search(&edge.pred).is_ok());
            if wanted && st.graph.delta_edge_current(i, edge.claim) && self.ex.vis.claim(st, edge.claim) {
                return Some(self.row(edge.claim, edge.pred, edge.nbr));
            }
        }
        None
    }

    fn row(&self, claim: u32, pred: u16, nbr: u32) -> EdgeRow {
        EdgeRow {
            claim: ClaimId(claim),
            predicate: PredicateId(pred),
            neighbor: EntityId(nbr),
            direction: if self.dir() == 0 { Direction::Out } else { Direction::In },
        }
    }
}

impl Iterator for Edges<'_, '_> {
    type Item = EdgeRow;

    /// Internal iteration (`for_each`, `count`, `fold`): each base run in one tight loop, without
    /// the state machine of `next` per edge.
    fn fold<B, F: FnMut(B, EdgeRow) -> B>(mut self, init: B, mut f: F) -> B {
        let st = self.ex.st;
        let mut acc = init;
        while self.d < self.ex.dirs.len() {
            let direction = if self.dir() == 0 { Direction::Out } else { Direction::In };
            let (nbrs, claims, preds) = (&self.nbrs[self.i..], &self.claims[self.i..], self.preds_run.get(self.i..).unwrap_or(&[]));
            let row = |k: usize, v: u32| EdgeRow {
                claim: ClaimId(claims[k]),
                predicate: PredicateId(preds.get(k).copied().unwrap_or(self.pred)),
                neighbor: EntityId(nbr_id(v)),
                direction,
            };
            if self.clean {
                for (k, &v) in nbrs.iter().enumerate() {
                    if v & LIVE_BIT != 0 {
                        acc = f(acc, row(k, v));
                    }
                }
            } else {
                for (k, (&v, &c)) in nbrs.iter().zip(claims).enumerate() {
                    if self.ex.vis.claim(st, c) && st.graph.base_edge_current(c) {
                        acc = f(acc, row(k, v));
                    }
                }
            }
            self.i = self.nbrs.len();
            if !self.in_delta && self.load_run() {
                continue;
            }
            while let Some(edge) = self.next_delta() {
                acc = f(acc, edge);
            }
            self.d += 1;
            if self.d < self.ex.dirs.len() {
                self.start_direction();
            }
        }
        acc
    }

    fn next(&mut self) -> Option<EdgeRow> {
        let st = self.ex.st;
        while self.d < self.ex.dirs.len() {
            while self.i < self.nbrs.len() {
                let k = self.i;
                self.i += 1;
                let (v, c) = (self.nbrs[k], self.claims[k]);
                let visible = if self.clean { v & LIVE_BIT != 0 } else { self.ex.vis.claim(st, c) && st.graph.base_edge_current(c) };
                if visible {
                    let pred = self.preds_run.get(k).copied().unwrap_or(self.pred);
                    return Some(self.row(c, pred, nbr_id(v)));
                }
            }
            if !self.in_delta && self.load_run() {
                continue;
            }
            if let Some(edge) = self.next_delta() {
                return Some(edge);
            }
            self.d += 1;
            if self.d < self.ex.dirs.len() {
                self.start_direction();
            }
        }
        None
    }
}
