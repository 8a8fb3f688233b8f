//! petgraph's visit traits on a filtered, workspace-scoped view of the graph, so petgraph's
//! algorithms (shortest paths, A*, DFS orders) run on the CSR without copying it.

use crate::error::ReadError;
use crate::ids::{ClaimId, EntityId};
use crate::read::filter::{Compiled, EdgeFilter};
use crate::read::shortest::{bidirectional, End};
use crate::read::view::WorkspaceView;
use crate::read::visibility::{Vis, Visibility};
use petgraph::visit::{Data, EdgeRef, GraphBase, IntoEdgeReferences, IntoEdges, IntoNeighbors, Visitable};
use std::collections::HashSet;

/// A filtered graph view implementing petgraph's visit traits. Edges follow the filter's
/// direction; for `Both`, each claim is an edge from the entity asked about to the other end.
#[derive(Debug)]
pub struct GraphView<'a> {
    view: WorkspaceView<'a>,
    filter: Compiled,
    vis: Vis<'a>,
}

/// One edge of a `GraphView`: a claim seen from `source`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClaimEdge {
    source: EntityId,
    target: EntityId,
    claim: ClaimId,
    confidence: f32,
}

impl EdgeRef for ClaimEdge {
    type NodeId = EntityId;
    type EdgeId = ClaimId;
    type Weight = f32;
    fn source(&self) -> EntityId {
        self.source
    }
    fn target(&self) -> EntityId {
        self.target
    }
    fn weight(&self) -> &f32 {
        &self.confidence
    }
    fn id(&self) -> ClaimId {
        self.claim
    }
}

impl GraphView<'_> {
    fn edges_of(&self, a: EntityId) -> Vec<ClaimEdge> {
        let mut out = Vec::new();
        if self.view.check_entity(a).is_err() {
            return out;
        }
        let st = self.view.st;
        self.filter.for_each(st, &self.vis, a.0, |_, e| {
            out.push(ClaimEdge {
                source: a,
                target: EntityId(e.nbr),
                claim: ClaimId(e.claim),
                confidence: *st.claims.confidence.get(e.claim as usize),
            });
        });
        out
    }
}

impl GraphBase for GraphView<'_> {
    type NodeId = EntityId;
    type EdgeId = ClaimId;
}

impl Data for GraphView<'_> {
    type NodeWeight = ();
    type EdgeWeight = f32;
}

impl IntoNeighbors for &GraphView<'_> {
    type Neighbors = std::vec::IntoIter<EntityId>;
    fn neighbors(self, a: EntityId) -> Self::Neighbors {
        self.edges_of(a).into_iter().map(|e| e.target).collect::<Vec<_>>().into_iter()
    }
}

impl IntoEdges for &GraphView<'_> {
    type Edges = std::vec::IntoIter<ClaimEdge>;
    fn edges(self, a: EntityId) -> Self::Edges {
        self.edges_of(a).into_iter()
    }
}

impl IntoEdgeReferences for &GraphView<'_> {
    type EdgeRef = ClaimEdge;
    type EdgeReferences = std::vec::IntoIter<ClaimEdge>;
    fn edge_references(self) -> Self::EdgeReferences {
        let Some(ents) = self.view.st.bitmaps.entities_by_ws.get(&self.view.ws) else { return Vec::new().into_iter() };
        ents.iter().flat_map(|e| self.edges_of(EntityId(e))).collect::<Vec<_>>().into_iter()
    }
}

impl Visitable for GraphView<'_> {
    type Map = HashSet<EntityId>;
    fn visit_map(&self) -> HashSet<EntityId> {
        HashSet::new()
    }
    fn reset_map(&self, map: &mut HashSet<EntityId>) {
        map.clear();
    }
}

impl<'a> WorkspaceView<'a> {
    /// A petgraph view of this workspace restricted by `filter` and `v`.
    pub fn graph_view(&self, filter: &EdgeFilter, v: &Visibility) -> GraphView<'a> {
        GraphView { view: *self, filter: Compiled::new(filter, self.st), vis: self.vis(v) }
    }

    /// A fewest-hops path from `from` to `to` over edges passing `filter`: the entities along
    /// it, or `None` when unreachable. Searched from both ends at once (`read::shortest`); with
    /// `neighbor_types`, which constrain each step's far end, from the start alone (petgraph's
    /// A* with a zero heuristic on the view). The entities a search reaches count against the
    /// scope's `visited_max`, and its deadline and token are checked per entity expanded.
    pub fn shortest_path(
        &self,
        from: EntityId,
        to: EntityId,
        filter: &EdgeFilter,
        v: &Visibility,
    ) -> Result<Option<Vec<EntityId>>, ReadError> {
        self.check_entity(from)?;
        self.check_entity(to)?;
        if filter.neighbor_types.is_empty() {
            return self.shortest_path_both_ends(from, to, filter, v);
        }
        let g = self.graph_view(filter, v);
        // The search asks `is_goal` once per entity it settles: that is where the scope's deadline,
        // token and `visited_max` are counted; a stop ends the search as if at the goal, and the
        // path found so far is discarded.
        let mut ticker = crate::read::scope::Ticker::new(self.cx);
        let (settled, max) = (std::cell::Cell::new(0usize), self.cx.limits.visited_max);
        let stop: std::cell::RefCell<Option<ReadError>> = std::cell::RefCell::new(None);
        let found = petgraph::algo::astar(
            &g,
            from,
            |n| {
                settled.set(settled.get() + 1);
                if settled.get() > max {
                    *stop.borrow_mut() =
                        Some(ReadError::Limit { name: "visited_max", limit: max as u64, what: "the entities a path search settles" });
                } else if let Err(i) = ticker.tick(1) {
                    *stop.borrow_mut() = Some(ReadError::Interrupted(i));
                }
                n == to || stop.borrow().is_some()
            },
            |_| 1u32,
            |_| 0,
        );
        if let Some(err) = stop.into_inner() {
            return Err(err);
        }
        Ok(found.map(|(_, path)| path))
    }

    fn shortest_path_both_ends(
        &self,
        from: EntityId,
        to: EntityId,
        filter: &EdgeFilter,
        v: &Visibility,
    ) -> Result<Option<Vec<EntityId>>, ReadError> {
        if from == to {
            return Ok(Some(vec![from]));
        }
        let st = self.st;
        let forward = Compiled::new(filter, st);
        let backward = Compiled::new(&EdgeFilter { direction: filter.direction.reversed(), ..filter.clone() }, st);
        let vis = self.vis(v);
        let mut ticker = crate::read::scope::Ticker::new(self.cx);
        let mut edges = |end: End, node: EntityId, emit: &mut dyn FnMut(ClaimId, EntityId)| -> Result<(), ReadError> {
            ticker.tick(1).map_err(ReadError::Interrupted)?;
            if self.check_entity(node).is_err() {
                return Ok(());
            }
            let f = if end == End::Start { &forward } else { &backward };
            f.for_each(st, &vis, node.0, |_, e| emit(ClaimId(e.claim), EntityId(e.nbr)));
            Ok(())
        };
        let max = self.cx.limits.visited_max;
        let over = || ReadError::Limit { name: "visited_max", limit: max as u64, what: "the entities a path search reaches" };
        let found = bidirectional((from, to), None, max, &mut edges, &over)?;
        Ok(found.map(|steps| std::iter::once(from).chain(steps.into_iter().map(|(_, n)| n)).collect()))
    }
}
