//! FalkorDB's weighted path procedures: `algo.SPpaths` (the lightest paths between two nodes)
//! and `algo.SSpaths` (the lightest paths from one node to any other).
//!
//! A path is simple (no node twice) and has at least one relationship. Its weight is the sum of
//! its relationships' `weightProp`, its cost the sum of their `costProp` (a relationship without
//! the property, or with a value that is not a number, counts 1); a path costing more than
//! `maxCost` or longer than `maxLen` is no answer. Paths rank by weight, then cost, then length:
//! `pathCount` 1 (the default) returns the best, n the n best, 0 every path of the least weight.
//!
//! The one lightest path between two nodes is a bidirectional Dijkstra (`lightest`); when it
//! breaks `maxCost` or `maxLen`, and for more paths, the search is a depth-first walk with
//! branch and bound. Weights and costs are never negative
//! (a negative one is an error naming it), so a partial path that already ranks after the worst
//! path kept cannot lead to a better one. Between two nodes, a walk backwards from the target
//! first gives each node a lower bound on the weight, cost and length still to go (ignoring
//! simplicity; each search stops once it reaches the source, so it reads about what one
//! shortest-path search reads): the walk tries the most promising relationship first, so the
//! first path it finds is a lightest one, and no path is looked for when none keeps within the
//! bounds.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::rc::Rc;
use std::sync::Arc;

use engram_query::{Detail, QueryError};

use super::algo_procs::{over, stopped};
use super::eval::{arg_error, type_error};
use super::graph::Graph;
use super::lightest::{lightest, Ask, Rank};
use super::value::{PathVal, Val};
use crate::ids::{ClaimId, EntityId};
use crate::index::graph::Direction;
use crate::read::expand::Expander;
use crate::read::scope::{ReadContext, Ticker};

type Map<K, V> = foldhash::HashMap<K, V>;

/// The configuration keys the procedures take (`targetNode` only for `algo.SPpaths`).
const KEYS: [&str; 9] =
    ["sourceNode", "targetNode", "relTypes", "relDirection", "weightProp", "costProp", "maxCost", "maxLen", "pathCount"];

/// What a call asks for.
struct Config {
    source: EntityId,
    target: Option<EntityId>,
    types: Option<Vec<Arc<str>>>,
    direction: Direction,
    weight: Option<Arc<str>>,
    cost: Option<Arc<str>>,
    max_cost: f64,
    max_len: usize,
    /// 0: every path of the least weight.
    count: usize,
}

/// A path found: its rank, then the order it was found in (so equal ranks keep their order).
struct Found {
    key: Rank,
    seq: usize,
    path: PathVal,
}

impl PartialEq for Found {
    fn eq(&self, other: &Found) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Found {}

impl PartialOrd for Found {
    fn partial_cmp(&self, other: &Found) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Found {
    fn cmp(&self, other: &Found) -> Ordering {
        self.key.cmp(&other.key).then(self.seq.cmp(&other.seq))
    }
}

/// The paths kept so far: the `count` best (a heap whose top is the worst kept), or with
/// `count` 0 every path of the least weight seen.
struct Best {
    count: usize,
    heap: BinaryHeap<Found>,
    seq: usize,
    rows_max: usize,
}

impl Best {
    /// Whether a path ranking at least `lower` could still be kept.
    fn admits(&self, lower: &Rank) -> bool {
        match self.heap.peek() {
            None => true,
            Some(worst) if self.count == 0 => lower.weight <= worst.key.weight,
            Some(worst) => self.heap.len() < self.count || *lower < worst.key,
        }
    }

    fn offer(&mut self, key: Rank, path: impl FnOnce() -> PathVal) -> Result<(), QueryError> {
        if !self.admits(&key) {
            return Ok(());
        }
        if self.count == 0 && self.heap.peek().is_some_and(|w| key.weight < w.key.weight) {
            self.heap.clear();
        }
        if self.count > 0 && self.heap.len() == self.count {
            self.heap.pop();
        }
        self.seq += 1;
        self.heap.push(Found { key, seq: self.seq, path: path() });
        if self.heap.len() > self.rows_max {
            return Err(over("rows_max", self.rows_max, "the paths of least weight"));
        }
        Ok(())
    }
}

/// What one backward search learnt: the distance to the target of each node it settled, and
/// the source's (`radius`), where it stopped; a node it did not settle is at least as far.
struct Bound {
    settled: Map<EntityId, f64>,
    radius: f64,
}

impl Bound {
    fn at(&self, node: EntityId) -> f64 {
        self.settled.get(&node).copied().unwrap_or(self.radius)
    }
}

/// Lower bounds on the weight, cost and length still to go from a node to the target (cost and
/// length only under `maxCost` and `maxLen`: else 0, which is a lower bound too). A measure
/// that counts 1 per relationship (no `weightProp` or `costProp`) shares the length's search.
struct Remaining {
    weight: Rc<Bound>,
    cost: Option<Rc<Bound>>,
    len: Option<Rc<Bound>>,
}

impl Remaining {
    /// The least still to go from `node`.
    fn from(&self, node: EntityId) -> Rank {
        Rank {
            weight: self.weight.at(node),
            cost: self.cost.as_ref().map_or(0.0, |b| b.at(node)),
            len: self.len.as_ref().map_or(0, |b| b.at(node) as usize),
        }
    }
}

/// `algo.SPpaths(config)` (`pair`) or `algo.SSpaths(config)`: rows of `path`, `pathWeight`,
/// `pathCost`, best first. No row when the source (or target) is null.
pub(super) fn call(g: &Graph<'_, '_>, cx: &ReadContext, name: &str, args: &[Val]) -> Result<Vec<Vec<Val>>, QueryError> {
    let pair = name == "algo.SPpaths";
    let Some(config) = config(name, pair, args.first())? else { return Ok(Vec::new()) };
    if config.count > cx.limits.rows_max {
        return Err(over("rows_max", cx.limits.rows_max, "the paths asked for (pathCount)"));
    }
    // `relTypes: []` follows no relationship (`expander` reads no types as any type).
    let types = match &config.types {
        Some(t) if t.is_empty() => return Ok(Vec::new()),
        Some(t) => t.clone(),
        None => Vec::new(),
    };
    let Some(expander) = g.expander(config.direction, &types, None) else { return Ok(Vec::new()) };
    let mut ticker = Ticker::new(cx);
    let amounts = Amounts { g, name, weight: config.weight.as_deref(), cost: config.cost.as_deref() };
    let row = |key: Rank, path: PathVal| vec![Val::Path(Arc::new(path)), Val::Float(key.weight), Val::Float(key.cost)];
    let remaining = match config.target {
        Some(target) => {
            let Some(back) = g.expander(reverse(config.direction), &types, None) else { return Ok(Vec::new()) };
            // The one lightest path: bidirectional Dijkstra; when it keeps within the bounds, it
            // is the answer (the branch and bound below is for the rest).
            if config.count == 1 {
                let amount = |c: ClaimId| amounts.of(c);
                let too_many = || over("visited_max", cx.limits.visited_max, "a weighted path search");
                let ask = Ask { amount: &amount, visited_max: cx.limits.visited_max, over: &too_many, stopped: &stopped };
                match lightest((&expander, &back), (config.source, target), &ask, &mut ticker)? {
                    None => return Ok(Vec::new()),
                    Some((rank, path)) if rank.cost <= config.max_cost && rank.len <= config.max_len => {
                        return Ok(vec![row(rank, path)]);
                    }
                    Some(_) => {}
                }
            }
            let search = Backwards { back: &back, amounts: &amounts, target, source: config.source, visited_max: cx.limits.visited_max };
            match search.bounds(&config, &mut ticker)? {
                Some(r) => Some(r),
                // The target cannot be reached from the source.
                None => return Ok(Vec::new()),
            }
        }
        None => None,
    };
    let mut best = Best { count: config.count, heap: BinaryHeap::new(), seq: 0, rows_max: cx.limits.rows_max };
    let walk = Walk { expander: &expander, amounts: &amounts, config: &config, remaining: remaining.as_ref() };
    walk.run(&mut best, &mut ticker)?;
    Ok(best.heap.into_sorted_vec().into_iter().map(|f| row(f.key, f.path)).collect())
}

fn reverse(d: Direction) -> Direction {
    match d {
        Direction::Out => Direction::In,
        Direction::In => Direction::Out,
        Direction::Both => Direction::Both,
    }
}

/// Reads the configuration map; `None` when the source or the target is null.
fn config(name: &str, pair: bool, arg: Option<&Val>) -> Result<Option<Config>, QueryError> {
    let map = match arg {
        Some(Val::Map(m)) => m,
        other => {
            return Err(type_error(format!("{name} takes a map (sourceNode, …), got {}", other.map_or("nothing", Val::kind))));
        }
    };
    if let Some(unknown) = map.keys().find(|k| !KEYS.contains(&k.as_ref()) || (!pair && k.as_ref() == "targetNode")) {
        return Err(arg_error(Detail::InvalidArgumentValue, format!("{name}: unknown configuration key `{unknown}`")));
    }
    let node = |key: &str| -> Result<Option<EntityId>, QueryError> {
        match map.get(key) {
            Some(Val::Node(n)) => Ok(Some(*n)),
            Some(Val::Null) => Ok(None),
            None => Err(arg_error(Detail::InvalidArgumentValue, format!("{name}: {key} is required"))),
            Some(other) => Err(type_error(format!("{name}: {key} should be a node, got {}", other.kind()))),
        }
    };
    let text = |key: &str| -> Result<Option<Arc<str>>, QueryError> {
        match map.get(key) {
            None | Some(Val::Null) => Ok(None),
            Some(Val::Str(s)) => Ok(Some(s.clone())),
            Some(other) => Err(type_error(format!("{name}: {key} should be a string, got {}", other.kind()))),
        }
    };
    let count = |key: &str, default: usize| -> Result<usize, QueryError> {
        match map.get(key) {
            None | Some(Val::Null) => Ok(default),
            Some(Val::Int(i)) => usize::try_from(*i)
                .map_err(|_| arg_error(Detail::InvalidArgumentValue, format!("{name}: {key} should not be negative, got {i}"))),
            Some(other) => Err(type_error(format!("{name}: {key} should be an integer, got {}", other.kind()))),
        }
    };
    let Some(source) = node("sourceNode")? else { return Ok(None) };
    let target = if pair {
        match node("targetNode")? {
            Some(t) => Some(t),
            None => return Ok(None),
        }
    } else {
        None
    };
    let types = match map.get("relTypes") {
        None | Some(Val::Null) => None,
        Some(Val::List(items)) => Some(
            items
                .iter()
                .map(|v| match v {
                    Val::Str(s) => Ok(s.clone()),
                    other => Err(type_error(format!("{name}: relTypes should be a list of strings, got {} in it", other.kind()))),
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(other) => return Err(type_error(format!("{name}: relTypes should be a list of strings, got {}", other.kind()))),
    };
    let direction = match text("relDirection")?.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("outgoing") => Direction::Out,
        Some("incoming") => Direction::In,
        Some("both") => Direction::Both,
        Some(other) => {
            return Err(arg_error(
                Detail::InvalidArgumentValue,
                format!("{name}: relDirection should be 'outgoing', 'incoming' or 'both', got '{other}'"),
            ))
        }
    };
    let max_cost = match map.get("maxCost") {
        None | Some(Val::Null) => f64::INFINITY,
        Some(Val::Int(i)) => *i as f64,
        Some(Val::Float(f)) if !f.is_nan() => *f,
        Some(other) => return Err(type_error(format!("{name}: maxCost should be a number, got {}", other.kind()))),
    };
    Ok(Some(Config {
        source,
        target,
        types,
        direction,
        weight: text("weightProp")?,
        cost: text("costProp")?,
        max_cost,
        max_len: count("maxLen", usize::MAX)?,
        count: count("pathCount", 1)?,
    }))
}

/// A relationship's weight and cost.
struct Amounts<'g, 'a, 'b> {
    g: &'g Graph<'a, 'b>,
    name: &'g str,
    weight: Option<&'g str>,
    cost: Option<&'g str>,
}

impl Amounts<'_, '_, '_> {
    fn of(&self, c: ClaimId) -> Result<(f64, f64), QueryError> {
        Ok((self.amount(c, self.weight, "weightProp")?, self.amount(c, self.cost, "costProp")?))
    }

    /// The property's value as a number; 1 without the property or when it is no number.
    fn amount(&self, c: ClaimId, key: Option<&str>, what: &str) -> Result<f64, QueryError> {
        let Some(key) = key else { return Ok(1.0) };
        let v = match self.g.rel_prop(c, key) {
            Val::Int(i) => i as f64,
            Val::Float(f) => f,
            _ => return Ok(1.0),
        };
        if v >= 0.0 {
            Ok(v)
        } else {
            Err(arg_error(
                Detail::InvalidArgumentValue,
                format!("{}: {what} `{key}` is {v} on relationship {}; weights and costs must be numbers ≥ 0", self.name, c.0),
            ))
        }
    }
}

/// The searches backwards from the target, each stopping once it settles the source.
struct Backwards<'s, 'g, 'a, 'b> {
    back: &'s Expander<'s>,
    amounts: &'s Amounts<'g, 'a, 'b>,
    target: EntityId,
    source: EntityId,
    visited_max: usize,
}

/// What a backward search measures: a relationship's weight, its cost, or 1 (length).
#[derive(Clone, Copy)]
enum Measure {
    Weight,
    Cost,
    Length,
}

impl Backwards<'_, '_, '_, '_> {
    /// The bounds for the walk; `None` when no path can keep within them (the source cannot
    /// reach the target, or not within `maxCost` or `maxLen`).
    fn bounds(&self, config: &Config, ticker: &mut Ticker<'_>) -> Result<Option<Remaining>, QueryError> {
        let mut unit: Option<Rc<Bound>> = None;
        let mut search = |measure: Measure, counted: bool, limit: f64, ticker: &mut Ticker<'_>| -> Result<Option<Rc<Bound>>, QueryError> {
            if !counted {
                if let Some(b) = &unit {
                    return Ok(Some(b.clone()).filter(|b| b.radius <= limit));
                }
            }
            let found = self.settle(if counted { measure } else { Measure::Length }, limit, ticker)?.map(Rc::new);
            if !counted {
                unit.clone_from(&found);
            }
            Ok(found)
        };
        let Some(weight) = search(Measure::Weight, config.weight.is_some(), f64::INFINITY, ticker)? else { return Ok(None) };
        let len = if config.max_len < usize::MAX {
            match search(Measure::Length, false, config.max_len as f64, ticker)? {
                Some(b) => Some(b),
                None => return Ok(None),
            }
        } else {
            None
        };
        let cost = if config.max_cost.is_finite() {
            match search(Measure::Cost, config.cost.is_some(), config.max_cost, ticker)? {
                Some(b) => Some(b),
                None => return Ok(None),
            }
        } else {
            None
        };
        Ok(Some(Remaining { weight, cost, len }))
    }

    /// Dijkstra backwards from the target by `measure` until it settles the source; `None` when
    /// it cannot, or only beyond `limit`.
    fn settle(&self, measure: Measure, limit: f64, ticker: &mut Ticker<'_>) -> Result<Option<Bound>, QueryError> {
        let mut settled: Map<EntityId, f64> = Map::default();
        let mut tentative: Map<EntityId, f64> = Map::from_iter([(self.target, 0.0)]);
        let mut queue = BinaryHeap::from([Near(0.0, self.target)]);
        while let Some(Near(d, node)) = queue.pop() {
            if d > limit {
                return Ok(None);
            }
            // A node settles once, at its least distance (later entries are stale).
            if settled.contains_key(&node) {
                continue;
            }
            settled.insert(node, d);
            if node == self.source {
                return Ok(Some(Bound { settled, radius: d }));
            }
            for edge in self.back.edges(node) {
                ticker.tick(1).map_err(stopped)?;
                let amount = match measure {
                    Measure::Weight => self.amounts.of(edge.claim)?.0,
                    Measure::Cost => self.amounts.of(edge.claim)?.1,
                    Measure::Length => 1.0,
                };
                let next = d + amount;
                if tentative.get(&edge.neighbor).is_none_or(|old| next < *old) {
                    tentative.insert(edge.neighbor, next);
                    if tentative.len() > self.visited_max {
                        return Err(over("visited_max", self.visited_max, "a weighted path search"));
                    }
                    queue.push(Near(next, edge.neighbor));
                }
            }
        }
        Ok(None)
    }
}

/// A queue entry of the backward walk, nearest first.
struct Near(f64, EntityId);

impl PartialEq for Near {
    fn eq(&self, other: &Near) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Near {}

impl PartialOrd for Near {
    fn partial_cmp(&self, other: &Near) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Near {
    fn cmp(&self, other: &Near) -> Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

/// The depth-first search.
struct Walk<'w, 'g, 'a, 'b> {
    expander: &'w Expander<'w>,
    amounts: &'w Amounts<'g, 'a, 'b>,
    config: &'w Config,
    remaining: Option<&'w Remaining>,
}

/// A step the walk may take from the node it is at: the rank of the path through it (with the
/// lower bound of what is still to go, between two nodes), the rank of the path ending there,
/// the relationship and the node.
type Step = (Rank, Rank, ClaimId, EntityId);

impl Walk<'_, '_, '_, '_> {
    fn run(&self, best: &mut Best, ticker: &mut Ticker<'_>) -> Result<(), QueryError> {
        let source = self.config.source;
        // A path never comes back to its start.
        if self.config.target == Some(source) {
            return Ok(());
        }
        let mut on_path: foldhash::HashSet<EntityId> = foldhash::HashSet::from_iter([source]);
        let mut steps: Vec<(ClaimId, EntityId)> = Vec::new();
        // Each level's steps, best last (taken by `pop`).
        let mut levels: Vec<Vec<Step>> = vec![self.steps(source, Rank::ZERO, &on_path, ticker)?];
        while let Some(level) = levels.last_mut() {
            let Some((through, key, claim, node)) = level.pop() else {
                levels.pop();
                if let Some((_, left)) = steps.pop() {
                    on_path.remove(&left);
                }
                continue;
            };
            if !best.admits(&through) {
                continue;
            }
            steps.push((claim, node));
            if self.config.target.is_none_or(|t| t == node) {
                best.offer(key, || PathVal { start: source, steps: steps.clone() })?;
            }
            if key.len < self.config.max_len && self.config.target != Some(node) {
                on_path.insert(node);
                levels.push(self.steps(node, key, &on_path, ticker)?);
            } else {
                // Nothing to go on to: step back at once.
                steps.pop();
            }
        }
        Ok(())
    }

    /// The steps from `node`, reached with rank `at`, that keep within the bounds: best last.
    fn steps(
        &self,
        node: EntityId,
        at: Rank,
        on_path: &foldhash::HashSet<EntityId>,
        ticker: &mut Ticker<'_>,
    ) -> Result<Vec<Step>, QueryError> {
        let mut out: Vec<Step> = Vec::new();
        for edge in self.expander.edges(node) {
            ticker.tick(1).map_err(stopped)?;
            if on_path.contains(&edge.neighbor) {
                continue;
            }
            let (w, c) = self.amounts.of(edge.claim)?;
            let key = at.plus(Rank::step(w, c));
            let rest = self.remaining.map_or(Rank::ZERO, |r| r.from(edge.neighbor));
            let through = key.plus(rest);
            if through.cost > self.config.max_cost || through.len > self.config.max_len {
                continue;
            }
            out.push((through, key, edge.claim, edge.neighbor));
        }
        out.sort_by_key(|s| std::cmp::Reverse(s.0));
        Ok(out)
    }
}
