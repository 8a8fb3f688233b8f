//! `shortestPath` / `allShortestPaths`: the fewest-hop paths between two bound nodes, over the
//! edges passing the hop's relationship tests (its types, direction, property map and inline
//! `WHERE`), searched from both ends at once (`read::shortest`). A WHERE on the path itself is
//! applied to the paths found, not during the search.

use engram_query::ast::Shortest;
use engram_query::plan::Hop;

use super::{engine_dir, limit, second_sight, Fallible, Row, Runner};
use crate::exec::value::Val;
use crate::ids::{ClaimId, EntityId};
use crate::read::expand::Expander;
use crate::read::scope::CHECK_EVERY;
use crate::read::shortest::{all_bidirectional, bidirectional, Edges, End};

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
        // The paths' relationships (the search holds the row: the inline WHERE reads it).
        let mut found = Vec::new();
        self.search(hop, expander, &mut row, |edges, over| {
            let rows_max = self.rows_max();
            let too_many =
                || -> Box<engram_query::QueryError> { limit("rows_max", rows_max, "the shortest paths between two nodes").into() };
            let visited_max = self.cx.limits.visited_max;
            all_bidirectional((from, to), max, (visited_max, rows_max), edges, (over, &too_many), &mut |rels| {
                found.push(rels.to_vec());
                Ok(())
            })
        })?;
        Ok(found.iter().map(|rels| put(&row, rels)).collect())
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
        let visited_max = self.cx.limits.visited_max;
        let found = self.search(hop, forward, row, |edges, over| bidirectional((from, to), max, visited_max, edges, over))?;
        Ok(found.map(|steps| steps.into_iter().map(|(claim, _)| claim).collect()))
    }

    /// Runs `search` with the edges each end of a search from both ends may follow (those
    /// passing the hop's tests; from the goal's end against their direction) and the error of
    /// too many entities reached.
    fn search<T>(
        &self,
        hop: &Hop,
        forward: &Expander<'_>,
        row: &mut Row,
        search: impl FnOnce(&mut Edges<'_, Box<engram_query::QueryError>>, &dyn Fn() -> Box<engram_query::QueryError>) -> Fallible<T>,
    ) -> Fallible<T> {
        let back_dir = engine_dir(hop.direction).reversed();
        let backward = self.graph.expander(back_dir, &hop.types, hop.type_expr.as_ref()).unwrap_or_else(|| self.graph.no_edges(back_dir));
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
        search(&mut edges, &over)
    }
}
