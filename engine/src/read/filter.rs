//! Per-hop edge filters: direction, predicates, neighbour types and minimum confidence, given by
//! name and compiled once per query to interned ids.

use crate::ids::PredicateId;
use crate::index::graph::csr::Edge;
use crate::index::graph::Direction;
use crate::normalize::vocabulary_key_of;
use crate::read::visibility::Vis;
use crate::state::State;

/// Which edges a hop may follow.
#[derive(Clone, Debug, PartialEq)]
pub struct EdgeFilter {
    /// Direction to follow.
    pub direction: Direction,
    /// Predicate names (case-insensitive for ingested names, exact for the query language's);
    /// empty = any predicate.
    pub predicates: Vec<String>,
    /// Predicates by id, followed as well as those `predicates` names (the query language's
    /// type expressions resolve to ids); both empty = any predicate.
    pub predicate_ids: Vec<PredicateId>,
    /// Types the entity at the other end must have; empty = any type.
    pub neighbor_types: Vec<String>,
    /// Claims below this confidence are not followed.
    pub min_confidence: f32,
}

impl Default for EdgeFilter {
    fn default() -> Self {
        EdgeFilter {
            direction: Direction::Both,
            predicates: Vec::new(),
            predicate_ids: Vec::new(),
            neighbor_types: Vec::new(),
            min_confidence: 0.0,
        }
    }
}

impl EdgeFilter {
    /// Any edge in `direction`.
    pub fn new(direction: Direction) -> EdgeFilter {
        EdgeFilter { direction, ..EdgeFilter::default() }
    }

    /// Only these predicates.
    #[must_use]
    pub fn predicates(mut self, names: &[&str]) -> EdgeFilter {
        self.predicates = names.iter().map(|s| (*s).to_owned()).collect();
        self
    }

    /// Only neighbours of these types.
    #[must_use]
    pub fn neighbor_types(mut self, names: &[&str]) -> EdgeFilter {
        self.neighbor_types = names.iter().map(|s| (*s).to_owned()).collect();
        self
    }

    /// Only claims at or above this confidence.
    #[must_use]
    pub fn min_confidence(mut self, c: f32) -> EdgeFilter {
        self.min_confidence = c;
        self
    }
}

/// The ids a name resolves to: the one written with exactly this case (the query language keeps
/// case) and the one the case-insensitive resolution of ingest finds.
fn named(table: &crate::state::Interner, name: &str) -> [Option<u16>; 2] {
    let exact = table.get(name);
    let folded = table.get(&vocabulary_key_of(name)).filter(|f| Some(*f) != exact);
    [exact, folded]
}

/// A compiled filter. `preds: Some(empty)` matches nothing (an unknown predicate name).
#[derive(Clone, Debug)]
pub(crate) struct Compiled {
    pub direction: Direction,
    pub preds: Option<Vec<u16>>,
    pub types: Option<Vec<u16>>,
    pub min_confidence: f32,
}

impl Compiled {
    pub fn new(f: &EdgeFilter, st: &State) -> Compiled {
        let preds = (!f.predicates.is_empty() || !f.predicate_ids.is_empty()).then(|| {
            let mut v: Vec<u16> = f.predicates.iter().flat_map(|p| named(&st.catalog.predicates, p)).flatten().collect();
            v.extend(f.predicate_ids.iter().map(|p| p.0));
            v.sort_unstable();
            v.dedup();
            v
        });
        let types = (!f.neighbor_types.is_empty()).then(|| {
            let mut v: Vec<u16> = f.neighbor_types.iter().flat_map(|t| named(&st.catalog.types, t)).flatten().collect();
            v.sort_unstable();
            v.dedup();
            v
        });
        Compiled { direction: f.direction, preds, types, min_confidence: f.min_confidence }
    }

    /// Any predicate, any neighbour type, any confidence: only direction and visibility apply.
    #[inline]
    pub fn is_plain(&self) -> bool {
        self.preds.is_none() && self.types.is_none() && self.min_confidence <= 0.0
    }

    /// Calls `f(dir, edge)` for every edge of `e` that passes this filter and `vis`, base edges in
    /// (predicate, claim) order first, then the delta's newest first.
    #[inline]
    pub fn for_each(&self, st: &State, vis: &Vis<'_>, e: u32, mut f: impl FnMut(usize, Edge)) {
        let check_conf = self.min_confidence > 0.0;
        let mut accept = |dir: usize, edge: Edge| {
            if !vis.claim(st, edge.claim) {
                return;
            }
            if check_conf && *st.claims.confidence.get(edge.claim as usize) < self.min_confidence {
                return;
            }
            if let Some(types) = &self.types {
                if !types.contains(&st.entities.ty.get(edge.nbr as usize).0) {
                    return;
                }
            }
            f(dir, edge);
        };
        for &dir in self.direction.dirs() {
            match &self.preds {
                None => st.graph.for_each_edge(e, dir, None, |edge| accept(dir, edge)),
                Some(ps) => {
                    for &p in ps {
                        st.graph.for_each_edge(e, dir, Some(p), |edge| accept(dir, edge));
                    }
                }
            }
        }
    }
}
