//! `shortestPath` / `allShortestPaths`: the fewest-hop paths between two bound nodes, over the
//! edges passing the hop's relationship tests (its types, direction, property map and inline
//! `WHERE`). One path is searched from both ends at once (`read::shortest`); all of them breadth
//! first from the start, level by level, keeping every edge into each level. A WHERE on the path
//! itself is applied to the paths found, not during the search.

use engram_query::ast::Shortest;
use engram_query::plan::Hop;

use super::{engine_dir, limit, second_sight, Fallible, Row, Runner};
use crate::exec::value::Val;
use crate::ids::{ClaimId, EntityId};
use crate::read::expand::Expander;
use crate::read::scope::CHECK_EVERY;
use crate::read::shortest::{bidirectional, End};

type Map<K, V> = foldhash::HashMap<K, V>;

impl Runner<'_, '_, '_> {
    /// The rows of `row` extended by each shortest path from its `hop.from` to its `hop.to` (one
    /// at most for `shortestPath`): the relationships in `hop.rel` (a list for a variable length).
    /// None when `to` is out of reach within the bounds, and none from a node to itself but the
    /// empty path a lower bound of 0 allows.
    pub(super) fn shortest(&self, hop: &Hop, expander: &Expander<'_>, mut row: Row) -> Fallible<Vec<Row>> {
        let (Val::Node(from), Val::Node(to)) = (&row[hop.from], &row[hop.to]) else { return Ok(Vec::new()) };
        let (from, to) = (*from, *to);
        let (min, max) = hop.length.unwrap_or((1, Some(1)));
        let all = hop.shortest == Some(Shortest::All);
        let put = |row: &Row, rels: &[ClaimId]| -> Row {
            let mut r = row.clone();
            r[hop.rel] = match (hop.length, rels) {
                (None, [one]) => Val::Rel(*one),
                _ => Val::list(rels.iter().map(|c| Val::Rel(*c)).collect()),
            };
            r
        };
        if from == to {
            return Ok(if min == 0 { vec![put(&row, &[])] } else { Vec::new() });
        }
        if !all {
            let found = self.shortest_one(hop, expander, &mut row, (from, to), max)?;
            return Ok(found.map(|rels| vec![put(&row, &rels)]).unwrap_or_default());
        }
        let used = Self::used_rels(hop, &row);
        let visited_max = self.cx.limits.visited_max;
        // Each node reached: its level, and every edge into it from the level before.
        let mut level_of: Map<EntityId, u32> = Map::default();
        level_of.insert(from, 0);
        let mut parents: Map<EntityId, Vec<(ClaimId, EntityId)>> = Map::default();
        let mut frontier = vec![from];
        let (mut level, mut seen, mut found) = (0u32, 0usize, false);
        while !found && !frontier.is_empty() && max.is_none_or(|m| u64::from(level) < m) {
            level += 1;
            let mut next = Vec::new();
            for &node in &frontier {
                for edge in expander.edges(node) {
                    seen += 1;
                    if seen.is_multiple_of(CHECK_EVERY as usize) {
                        self.check()?;
                    }
                    if second_sight(hop, node, &edge) || used.contains(&edge.claim) || !self.rel_passes(edge.claim, hop, &mut row)? {
                        continue;
                    }
                    let n = edge.neighbor;
                    match level_of.get(&n) {
                        None => {
                            if level_of.len() >= visited_max {
                                return Err(limit("visited_max", visited_max, "a shortest-path search").into());
                            }
                            level_of.insert(n, level);
                            parents.insert(n, vec![(edge.claim, node)]);
                            next.push(n);
                            // The level is finished: every edge into `to` from the one before counts.
                            found |= n == to;
                        }
                        Some(&l) if l == level => parents.entry(n).or_default().push((edge.claim, node)),
                        Some(_) => {}
                    }
                }
            }
            frontier = next;
        }
        if !found {
            return Ok(Vec::new());
        }
        // Every path back from `to` through the recorded edges.
        let rows_max = self.rows_max();
        let mut out = Vec::new();
        let mut trail: Vec<ClaimId> = Vec::new();
        let mut stack: Vec<(EntityId, usize)> = vec![(to, 0)];
        while let Some((node, i)) = stack.pop() {
            if node == from {
                let mut rels = trail.clone();
                rels.reverse();
                if out.len() >= rows_max {
                    return Err(limit("rows_max", rows_max, "the shortest paths between two nodes").into());
                }
                out.push(put(&row, &rels));
                trail.pop();
                continue;
            }
            match parents.get(&node).and_then(|p| p.get(i)) {
                Some(&(claim, prev)) => {
                    stack.push((node, i + 1));
                    stack.push((prev, 0));
                    trail.push(claim);
                }
                None => {
                    trail.pop();
                }
            }
        }
        Ok(out)
    }

    /// One fewest-hop path from `from` to `to` (distinct nodes), searched from both ends at
    /// once (`read::shortest`), each edge passing the hop's tests: its relationships in order
    /// from `from`; `None` when there is none within `max` hops.
    fn shortest_one(
        &self,
        hop: &Hop,
        forward: &Expander<'_>,
        row: &mut Row,
        (from, to): (EntityId, EntityId),
        max: Option<u64>,
    ) -> Fallible<Option<Vec<ClaimId>>> {
        let back_dir = engine_dir(hop.direction).reversed();
        let backward = self.graph.expander(back_dir, &hop.types).unwrap_or_else(|| self.graph.no_edges(back_dir));
        let used = Self::used_rels(hop, row);
        let visited_max = self.cx.limits.visited_max;
        let mut seen = 0usize;
        let mut edges = |end: End, node: EntityId, emit: &mut dyn FnMut(ClaimId, EntityId)| -> Fallible<()> {
            let expander = if end == End::Start { forward } else { &backward };
            for edge in expander.edges(node) {
                seen += 1;
                if seen.is_multiple_of(CHECK_EVERY as usize) {
                    self.check()?;
                }
                if second_sight(hop, node, &edge) || used.contains(&edge.claim) || !self.rel_passes(edge.claim, hop, row)? {
                    continue;
                }
                emit(edge.claim, edge.neighbor);
            }
            Ok(())
        };
        let over = || -> Box<engram_query::QueryError> { limit("visited_max", visited_max, "a shortest-path search").into() };
        let found = bidirectional((from, to), max, visited_max, &mut edges, &over)?;
        Ok(found.map(|steps| steps.into_iter().map(|(claim, _)| claim).collect()))
    }
}
