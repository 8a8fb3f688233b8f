//! The one lightest path between two nodes by bidirectional Dijkstra: a path ranks by its
//! weight, then its cost, then its length (each relationship adds a weight and a cost, never
//! negative, and 1 to the length). Both searches grow from their end, each step the side whose
//! next node is nearer (on a tie, the one with fewer nodes queued), and stop once the two nearest nodes together are no better than the best
//! meeting found: what two balls of half the distance read, not one of the whole.
//!
//! The rank only grows along a path and a cycle adds at least 1 to the length, so the lightest
//! walk is a simple path.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use engram_query::QueryError;

use super::value::PathVal;
use crate::ids::{ClaimId, EntityId};
use crate::read::expand::Expander;
use crate::read::scope::Ticker;

type Map<K, V> = foldhash::HashMap<K, V>;

/// A path's rank: weight, then cost, then length (every part only grows as a path goes on).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Rank {
    pub weight: f64,
    pub cost: f64,
    pub len: usize,
}

impl Rank {
    pub const ZERO: Rank = Rank { weight: 0.0, cost: 0.0, len: 0 };

    /// One relationship's: its weight and cost, length 1.
    pub fn step(weight: f64, cost: f64) -> Rank {
        Rank { weight, cost, len: 1 }
    }

    pub fn plus(self, o: Rank) -> Rank {
        Rank { weight: self.weight + o.weight, cost: self.cost + o.cost, len: self.len + o.len }
    }
}

impl Eq for Rank {}

impl PartialOrd for Rank {
    fn partial_cmp(&self, other: &Rank) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Rank {
    fn cmp(&self, other: &Rank) -> Ordering {
        self.weight.total_cmp(&other.weight).then(self.cost.total_cmp(&other.cost)).then(self.len.cmp(&other.len))
    }
}

/// One side's search: the best rank known to each node, the step that gave it, what is settled.
struct Side<'e> {
    expander: &'e Expander<'e>,
    best: Map<EntityId, (Rank, Option<(ClaimId, EntityId)>)>,
    settled: foldhash::HashSet<EntityId>,
    queue: BinaryHeap<Reverse<(Rank, EntityId)>>,
}

impl<'e> Side<'e> {
    fn new(expander: &'e Expander<'e>, from: EntityId) -> Side<'e> {
        Side {
            expander,
            best: Map::from_iter([(from, (Rank::ZERO, None))]),
            settled: foldhash::HashSet::default(),
            queue: BinaryHeap::from([Reverse((Rank::ZERO, from))]),
        }
    }

    /// The rank of the nearest node not settled yet (dropping entries a better one replaced).
    fn top(&mut self) -> Option<Rank> {
        while let Some(Reverse((r, n))) = self.queue.peek().copied() {
            if self.settled.contains(&n) {
                self.queue.pop();
            } else {
                return Some(r);
            }
        }
        None
    }
}

/// What the search needs besides the two ends: each relationship's weight and cost, the work
/// counter and the bound on the nodes it may hold.
pub(super) struct Ask<'a> {
    pub amount: &'a dyn Fn(ClaimId) -> Result<(f64, f64), QueryError>,
    pub visited_max: usize,
    pub over: &'a dyn Fn() -> QueryError,
    pub stopped: &'a dyn Fn(crate::error::Interrupted) -> QueryError,
}

/// The lightest path from `source` to `target`, `forward` following relationships from the
/// source's side and `backward` the same ones from the target's; `None` when there is none (or
/// the two are the same node: a path has at least one relationship and no node twice).
pub(super) fn lightest(
    (forward, backward): (&Expander<'_>, &Expander<'_>),
    (source, target): (EntityId, EntityId),
    ask: &Ask<'_>,
    ticker: &mut Ticker<'_>,
) -> Result<Option<(Rank, PathVal)>, QueryError> {
    if source == target {
        return Ok(None);
    }
    let mut sides = [Side::new(forward, source), Side::new(backward, target)];
    // The best meeting so far: its rank and the node where the two sides meet.
    let mut met: Option<(Rank, EntityId)> = None;
    while let (Some(a), Some(b)) = (sides[0].top(), sides[1].top()) {
        if met.is_some_and(|(m, _)| a.plus(b) >= m) {
            break;
        }
        // The side whose next node is nearer grows, on a tie the one with fewer nodes queued: a
        // hub on one side is left for the other to reach.
        let (qa, qb) = (sides[0].queue.len(), sides[1].queue.len());
        let i = usize::from(b < a || (b == a && qb < qa));
        let Some(Reverse((rank, node))) = sides[i].queue.pop() else { break };
        sides[i].settled.insert(node);
        for edge in sides[i].expander.edges(node) {
            ticker.tick(1).map_err(ask.stopped)?;
            let (w, c) = (ask.amount)(edge.claim)?;
            let next = rank.plus(Rank::step(w, c));
            let side = &mut sides[i];
            if side.settled.contains(&edge.neighbor) || side.best.get(&edge.neighbor).is_some_and(|(r, _)| *r <= next) {
                continue;
            }
            side.best.insert(edge.neighbor, (next, Some((edge.claim, node))));
            side.queue.push(Reverse((next, edge.neighbor)));
            if sides[0].best.len() + sides[1].best.len() > ask.visited_max {
                return Err((ask.over)());
            }
            if let Some((there, _)) = sides[1 - i].best.get(&edge.neighbor) {
                let total = next.plus(*there);
                if met.is_none_or(|(m, _)| total < m) {
                    met = Some((total, edge.neighbor));
                }
            }
        }
    }
    let Some((rank, middle)) = met else { return Ok(None) };
    // From the meeting back to the source, then on to the target.
    let mut steps = Vec::new();
    let mut at = middle;
    while let Some((_, Some((claim, prev)))) = sides[0].best.get(&at) {
        steps.push((*claim, at));
        at = *prev;
    }
    steps.reverse();
    let mut at = middle;
    while let Some((_, Some((claim, next)))) = sides[1].best.get(&at) {
        steps.push((*claim, *next));
        at = *next;
    }
    Ok(Some((rank, PathVal { start: source, steps })))
}
