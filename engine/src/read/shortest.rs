//! Fewest-hop paths between two entities, searched from both ends at once: the end with the
//! smaller frontier takes the next level, so a graph with hubs is explored to about half the
//! distance from each side instead of all of it from one (on the M data, 30 seed pairs: tens of
//! microseconds instead of most of a second). `bidirectional` finds one path, `all_bidirectional`
//! every one. Callers say which edges a side may follow.

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

/// One side of the search for every path: each entity reached, its level, and every edge into
/// it from the level before (towards this side's end).
struct Levels {
    level_of: Map<EntityId, u32>,
    parents: Map<EntityId, Vec<(ClaimId, EntityId)>>,
    frontier: Vec<EntityId>,
    level: u32,
}

impl Levels {
    fn new(end: EntityId) -> Levels {
        let mut level_of = Map::default();
        level_of.insert(end, 0);
        Levels { level_of, parents: Map::default(), frontier: vec![end], level: 0 }
    }

    /// Every chain of edges from `node` back to this side's end (each edge in the order walked
    /// from `node`), more than `max` of them being `None`.
    fn chains(&self, node: EntityId, max: usize) -> Option<Vec<Vec<ClaimId>>> {
        let mut out = Vec::new();
        let mut trail: Vec<ClaimId> = Vec::new();
        let mut stack: Vec<(EntityId, usize)> = vec![(node, 0)];
        while let Some((at, i)) = stack.pop() {
            if self.level_of.get(&at) == Some(&0) {
                if out.len() >= max {
                    return None;
                }
                out.push(trail.clone());
                trail.pop();
                continue;
            }
            match self.parents.get(&at).and_then(|p| p.get(i)) {
                Some(&(claim, prev)) => {
                    stack.push((at, i + 1));
                    stack.push((prev, 0));
                    trail.push(claim);
                }
                None => {
                    trail.pop();
                }
            }
        }
        Some(out)
    }
}

/// Every fewest-hop path from `start` to `goal` (distinct), at most `max_hops` long, passed to
/// `emit` as its edges in order from `start`; none when there is none. As `bidirectional`, but a
/// level is always finished: the entities it reaches that the other side had reached are where
/// every shortest path crosses from one side to the other (each at the same distance from
/// both ends), and each such path is one chain back to the start times one on to the goal.
/// More than `visited_max` entities reached is the error `limit` makes, more than `paths_max`
/// paths the error `too_many` makes.
pub(crate) fn all_bidirectional<E>(
    (start, goal): (EntityId, EntityId),
    max_hops: Option<u64>,
    (visited_max, paths_max): (usize, usize),
    edges: &mut Edges<'_, E>,
    (limit, too_many): (&dyn Fn() -> E, &dyn Fn() -> E),
    emit: &mut dyn FnMut(&[ClaimId]) -> Result<(), E>,
) -> Result<(), E> {
    let mut sides = [Levels::new(start), Levels::new(goal)];
    let meets = loop {
        let (a, b) = (&sides[0], &sides[1]);
        if a.frontier.is_empty() || b.frontier.is_empty() || max_hops.is_some_and(|m| u64::from(a.level + b.level) >= m) {
            return Ok(());
        }
        let s = usize::from(b.frontier.len() < a.frontier.len());
        let end = if s == 0 { End::Start } else { End::Goal };
        let frontier = std::mem::take(&mut sides[s].frontier);
        sides[s].level += 1;
        let level = sides[s].level;
        let (mut next, mut meets, mut over) = (Vec::new(), Vec::new(), false);
        for &node in &frontier {
            let (x, y) = sides.split_at_mut(1);
            let (this, other) = if s == 0 { (&mut x[0], &mut y[0]) } else { (&mut y[0], &mut x[0]) };
            edges(end, node, &mut |claim, n| {
                if over {
                    return;
                }
                match this.level_of.get(&n) {
                    None => {
                        if this.level_of.len() + other.level_of.len() >= visited_max {
                            over = true;
                            return;
                        }
                        this.level_of.insert(n, level);
                        this.parents.insert(n, vec![(claim, node)]);
                        next.push(n);
                        if other.level_of.contains_key(&n) {
                            meets.push(n);
                        }
                    }
                    Some(&l) if l == level => this.parents.entry(n).or_default().push((claim, node)),
                    Some(_) => {}
                }
            })?;
            if over {
                return Err(limit());
            }
        }
        sides[s].frontier = next;
        if !meets.is_empty() {
            break meets;
        }
    };
    let mut emitted = 0usize;
    let mut path = Vec::new();
    for m in meets {
        let (Some(back), Some(on)) = (sides[0].chains(m, paths_max), sides[1].chains(m, paths_max)) else { return Err(too_many()) };
        for b in &back {
            for o in &on {
                if emitted >= paths_max {
                    return Err(too_many());
                }
                emitted += 1;
                path.clear();
                path.extend(b.iter().rev());
                path.extend(o);
                emit(&path)?;
            }
        }
    }
    Ok(())
}
