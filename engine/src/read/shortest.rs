//! A fewest-hop path between two entities, searched from both ends at once: the end with the
//! smaller frontier takes the next level, so a graph with hubs is explored to about half the
//! distance from each side instead of all of it from one (on the M data, 30 seed pairs: tens of
//! microseconds instead of most of a second). Callers say which edges a side may follow.

use crate::ids::{ClaimId, EntityId};

type Map<K, V> = foldhash::HashMap<K, V>;

/// Calls its callback with each edge (claim, far end) a side may follow from an entity.
pub(crate) type Edges<'f, E> = dyn FnMut(End, EntityId, &mut dyn FnMut(ClaimId, EntityId)) -> Result<(), E> + 'f;

/// Which end a search step walks from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// From the start, along the edges.
    Start,
    /// From the goal, against them.
    Goal,
}

/// One side: each entity reached, its level and the edge into it from the level before (the
/// first one found).
struct Side {
    reached: Map<EntityId, (u32, ClaimId, EntityId)>,
    frontier: Vec<EntityId>,
    level: u32,
}

impl Side {
    fn new(start: EntityId) -> Side {
        let mut reached = Map::default();
        reached.insert(start, (0, ClaimId(u32::MAX), start));
        Side { reached, frontier: vec![start], level: 0 }
    }

    /// The steps from this side's start to `node`: each edge and the entity it reaches.
    fn steps_to(&self, mut node: EntityId) -> Vec<(ClaimId, EntityId)> {
        let mut out = Vec::new();
        while let Some(&(level, claim, prev)) = self.reached.get(&node) {
            if level == 0 {
                break;
            }
            out.push((claim, node));
            node = prev;
        }
        out.reverse();
        out
    }
}

/// The steps (each edge and the entity it reaches) of one fewest-hop path from `start` to
/// `goal` (distinct), at most `max_hops` long; `None` when there is none. `edges(end, node,
/// emit)` calls `emit(claim, neighbour)` for each edge a side may follow from `node` (against
/// the edges' direction from the goal's end). More than `visited_max` entities reached is the
/// error `limit` makes.
pub(crate) fn bidirectional<E>(
    (start, goal): (EntityId, EntityId),
    max_hops: Option<u64>,
    visited_max: usize,
    edges: &mut Edges<'_, E>,
    limit: &dyn Fn() -> E,
) -> Result<Option<Vec<(ClaimId, EntityId)>>, E> {
    let mut sides = [Side::new(start), Side::new(goal)];
    loop {
        let (a, b) = (&sides[0], &sides[1]);
        if a.frontier.is_empty() || b.frontier.is_empty() || max_hops.is_some_and(|m| u64::from(a.level + b.level) >= m) {
            return Ok(None);
        }
        let s = usize::from(b.frontier.len() < a.frontier.len());
        let end = if s == 0 { End::Start } else { End::Goal };
        let frontier = std::mem::take(&mut sides[s].frontier);
        sides[s].level += 1;
        let level = sides[s].level;
        let mut next = Vec::new();
        let (mut meet, mut over) = (None, false);
        for &node in &frontier {
            let (x, y) = sides.split_at_mut(1);
            let (this, other) = if s == 0 { (&mut x[0], &mut y[0]) } else { (&mut y[0], &mut x[0]) };
            edges(end, node, &mut |claim, n| {
                if meet.is_some() || over || this.reached.contains_key(&n) {
                    return;
                }
                if this.reached.len() + other.reached.len() >= visited_max {
                    over = true;
                    return;
                }
                this.reached.insert(n, (level, claim, node));
                next.push(n);
                // The first meeting is a shortest path: before this level no entity was reached
                // from both ends, so the two levels added up to less than the distance, and
                // every meeting now is one longer than they do.
                if other.reached.contains_key(&n) {
                    meet = Some(n);
                }
            })?;
            if over {
                return Err(limit());
            }
            if let Some(n) = meet {
                let mut steps = sides[0].steps_to(n);
                // The goal's side walked against the edges: from the meeting, each edge into a
                // node reaches the node it was found from, up to the goal.
                let mut node = n;
                while let Some(&(level, claim, prev)) = sides[1].reached.get(&node) {
                    if level == 0 {
                        break;
                    }
                    steps.push((claim, prev));
                    node = prev;
                }
                return Ok(Some(steps));
            }
        }
        sides[s].frontier = next;
    }
}
