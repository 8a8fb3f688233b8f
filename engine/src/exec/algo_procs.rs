//! FalkorDB's graph algorithm procedures over what the query sees (the weighted paths in
//! `path_procs`, betweenness and communities in `analytics_procs`): `algo.BFS` (the nodes a
//! breadth-first walk along outgoing relationships reaches, with the edge that reached each),
//! `algo.pageRank` (each node's page rank over the relationships between nodes of a label) and
//! `algo.WCC` (weakly connected components).

use std::sync::Arc;

use engram_query::QueryError;

use super::eval::{read_error, type_error};
use super::graph::Graph;
use super::value::Val;
use crate::error::ReadError;
use crate::ids::EntityId;
use crate::index::graph::Direction;
use crate::read::scope::{ReadContext, Ticker};

type Map<K, V> = foldhash::HashMap<K, V>;

/// The damping factor, convergence tolerance (sum of the changes) and iteration cap of
/// `algo.pageRank`: FalkorDB's.
const DAMPING: f64 = 0.85;
const TOLERANCE: f64 = 1e-4;
const ITERATIONS_MAX: usize = 100;

pub(super) fn stopped(e: crate::error::Interrupted) -> QueryError {
    read_error(&ReadError::Interrupted(e), engram_query::ErrorType::ProcedureError)
}

pub(super) fn over(name: &'static str, limit: usize, what: &'static str) -> QueryError {
    read_error(&ReadError::Limit { name, limit: limit as u64, what }, engram_query::ErrorType::ProcedureError)
}

/// A label or relationship type argument: a name, or null for any.
fn name_or_null<'v>(proc: &str, v: Option<&'v Val>) -> Result<Option<&'v Arc<str>>, QueryError> {
    match v {
        None | Some(Val::Null) => Ok(None),
        Some(Val::Str(s)) => Ok(Some(s)),
        Some(other) => Err(type_error(format!("{proc} takes a name or null, got {}", other.kind()))),
    }
}

/// Runs the `algo.*` procedure `name`.
pub(super) fn call(g: &Graph<'_, '_>, cx: &ReadContext, name: &str, args: &[Val]) -> Result<Vec<Vec<Val>>, QueryError> {
    match name {
        "algo.BFS" => bfs(g, cx, args),
        "algo.pageRank" => page_rank(g, cx, args),
        "algo.WCC" => wcc(g, cx, args),
        "algo.SPpaths" | "algo.SSpaths" => super::path_procs::call(g, cx, name, args),
        "algo.betweenness" => super::analytics_procs::betweenness(g, cx, args),
        "algo.labelPropagation" => super::analytics_procs::label_propagation(g, cx, args),
        "algo.MSF" => super::analytics_procs::spanning_forest(g, cx, args),
        _ => Err(QueryError::runtime(
            engram_query::ErrorType::ProcedureError,
            engram_query::Detail::ProcedureNotFound,
            format!("there is no procedure `{name}`"),
        )),
    }
}

/// `algo.BFS(source, max_level, type)`: one row of the nodes reached from `source` along
/// outgoing relationships (of `type`, or any when null) within `max_level` hops (any number
/// when 0 or less), nearest first, and the relationship that first reached each; no row when
/// none is reached or `source` is null.
pub(super) fn bfs(g: &Graph<'_, '_>, cx: &ReadContext, args: &[Val]) -> Result<Vec<Vec<Val>>, QueryError> {
    const NAME: &str = "algo.BFS";
    let source = match args.first() {
        Some(Val::Null) | None => return Ok(Vec::new()),
        Some(Val::Node(n)) => *n,
        Some(other) => return Err(type_error(format!("{NAME} takes a node, got {}", other.kind()))),
    };
    let max_level = match args.get(1) {
        Some(Val::Int(i)) => *i,
        Some(other) => return Err(type_error(format!("{NAME} takes the maximum level as an integer, got {}", other.kind()))),
        None => 0,
    };
    let types: Vec<Arc<str>> = name_or_null(NAME, args.get(2))?.into_iter().cloned().collect();
    let Some(expander) = g.expander(Direction::Out, &types, None) else { return Ok(Vec::new()) };
    let visited_max = cx.limits.visited_max;
    let mut ticker = Ticker::new(cx);
    let mut seen: foldhash::HashSet<EntityId> = foldhash::HashSet::from_iter([source]);
    let (mut nodes, mut edges) = (Vec::new(), Vec::new());
    let mut frontier = vec![source];
    let mut level = 0i64;
    while !frontier.is_empty() && (max_level <= 0 || level < max_level) {
        level += 1;
        let mut next = Vec::new();
        for &node in &frontier {
            for edge in expander.edges(node) {
                ticker.tick(1).map_err(stopped)?;
                if seen.insert(edge.neighbor) {
                    if seen.len() > visited_max {
                        return Err(over("visited_max", visited_max, "an algo.BFS walk"));
                    }
                    nodes.push(Val::Node(edge.neighbor));
                    edges.push(Val::Rel(edge.claim));
                    next.push(edge.neighbor);
                }
            }
        }
        frontier = next;
    }
    Ok(if nodes.is_empty() { Vec::new() } else { vec![vec![Val::list(nodes), Val::list(edges)]] })
}

/// `algo.pageRank(label, type)`: a row per node of `label` (every node when null) with its
/// page rank over the relationships of `type` (any when null) between such nodes, highest
/// first. Several relationships between two nodes count once; a node without outgoing ones
/// spreads its rank over all. The ranks sum to 1.
pub(super) fn page_rank(g: &Graph<'_, '_>, cx: &ReadContext, args: &[Val]) -> Result<Vec<Vec<Val>>, QueryError> {
    const NAME: &str = "algo.pageRank";
    let label = name_or_null(NAME, args.first())?;
    let types: Vec<Arc<str>> = name_or_null(NAME, args.get(1))?.into_iter().cloned().collect();
    let nodes = match label {
        Some(l) => g.nodes_with_label(l),
        None => g.nodes(),
    };
    let Some(expander) = g.expander(Direction::Out, &types, None) else { return Ok(Vec::new()) };
    if nodes.is_empty() {
        return Ok(Vec::new());
    }
    let index: Map<EntityId, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut ticker = Ticker::new(cx);
    // Each node's distinct successors among the ranked nodes.
    let mut out: Vec<Vec<usize>> = Vec::with_capacity(nodes.len());
    for &n in &nodes {
        let mut next: Vec<usize> = Vec::new();
        for edge in expander.edges(n) {
            ticker.tick(1).map_err(stopped)?;
            if let Some(&j) = index.get(&edge.neighbor) {
                next.push(j);
            }
        }
        next.sort_unstable();
        next.dedup();
        out.push(next);
    }
    let count = nodes.len() as f64;
    let mut rank = vec![1.0 / count; nodes.len()];
    for _ in 0..ITERATIONS_MAX {
        let dangling: f64 = out.iter().zip(&rank).filter(|(o, _)| o.is_empty()).map(|(_, r)| r).sum();
        let mut next = vec![(1.0 - DAMPING) / count + DAMPING * dangling / count; nodes.len()];
        for (i, succ) in out.iter().enumerate() {
            ticker.tick(succ.len().max(1) as u32).map_err(stopped)?;
            let share = DAMPING * rank[i] / succ.len().max(1) as f64;
            for &j in succ {
                next[j] += share;
            }
        }
        let change: f64 = next.iter().zip(&rank).map(|(a, b)| (a - b).abs()).sum();
        rank = next;
        if change < TOLERANCE {
            break;
        }
    }
    let mut rows: Vec<(EntityId, f64)> = nodes.into_iter().zip(rank).collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(rows.into_iter().map(|(n, r)| vec![Val::Node(n), Val::Float(r)]).collect())
}

/// `algo.WCC(config)`: each node of the labels in `config.nodeLabels` (any label when absent)
/// with its weakly connected component over the relationships of `config.relationshipTypes`
/// (any type when absent) between such nodes, in either direction. A component's id is the
/// smallest node id in it. `config` may be null or left out; another key is refused by name.
pub(super) fn wcc(g: &Graph<'_, '_>, cx: &ReadContext, args: &[Val]) -> Result<Vec<Vec<Val>>, QueryError> {
    let Projection { nodes, index, types } = projection(g, "algo.WCC", args.first(), &[])?.0;
    // Union-find over the nodes' positions (ascending ids, so a root kept smallest is the
    // component's smallest id).
    let mut parent: Vec<usize> = (0..nodes.len()).collect();
    if let Some(expander) = g.expander(Direction::Out, &types, None) {
        let mut ticker = Ticker::new(cx);
        for (i, &n) in nodes.iter().enumerate() {
            for edge in expander.edges(n) {
                ticker.tick(1).map_err(stopped)?;
                if let Some(&j) = index.get(&edge.neighbor) {
                    let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                    if a != b {
                        parent[a.max(b)] = a.min(b);
                    }
                }
            }
        }
    }
    Ok((0..nodes.len())
        .map(|i| {
            let r = root(&mut parent, i);
            vec![Val::Node(nodes[i]), Val::Int(i64::from(nodes[r].0))]
        })
        .collect())
}

/// The nodes an algorithm runs over and the relationship types it follows.
pub(super) struct Projection {
    /// The nodes of the labels asked for (every node when none were), ascending.
    pub nodes: Vec<EntityId>,
    /// Each node's position in `nodes`.
    pub index: Map<EntityId, usize>,
    /// The types asked for; empty: any type.
    pub types: Vec<Arc<str>>,
}

impl Projection {
    /// Each node's distinct neighbours among the nodes (by position, ascending, itself left
    /// out) along the types in `direction`; none when none of the types exists.
    pub(super) fn neighbours(&self, g: &Graph<'_, '_>, direction: Direction, cx: &ReadContext) -> Result<Vec<Vec<usize>>, QueryError> {
        let Some(expander) = g.expander(direction, &self.types, None) else { return Ok(vec![Vec::new(); self.nodes.len()]) };
        let mut ticker = Ticker::new(cx);
        let mut out = Vec::with_capacity(self.nodes.len());
        for (i, &n) in self.nodes.iter().enumerate() {
            let mut next: Vec<usize> = Vec::new();
            for edge in expander.edges(n) {
                ticker.tick(1).map_err(stopped)?;
                if let Some(&j) = self.index.get(&edge.neighbor) {
                    if j != i {
                        next.push(j);
                    }
                }
            }
            next.sort_unstable();
            next.dedup();
            out.push(next);
        }
        Ok(out)
    }
}

/// Reads an algorithm's configuration (a map, null or nothing): `nodeLabels` and
/// `relationshipTypes` (lists of names; absent, any), and the keys of `extra` (returned by
/// name); another key is refused by name.
pub(super) fn projection<'v>(
    g: &Graph<'_, '_>,
    name: &str,
    config: Option<&'v Val>,
    extra: &[&str],
) -> Result<(Projection, std::collections::BTreeMap<&'v str, &'v Val>), QueryError> {
    let config = match config {
        None | Some(Val::Null) => None,
        Some(Val::Map(m)) => Some(m),
        Some(other) => return Err(type_error(format!("{name} takes a map of nodeLabels and relationshipTypes, got {}", other.kind()))),
    };
    let names = |key: &str| -> Result<Option<Vec<Arc<str>>>, QueryError> {
        match config.and_then(|m| m.get(key)) {
            None => Ok(None),
            Some(Val::List(items)) => items
                .iter()
                .map(|v| match v {
                    Val::Str(s) => Ok(s.clone()),
                    other => Err(type_error(format!("{name}: {key} should be a list of strings, got {} in it", other.kind()))),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(other) => Err(type_error(format!("{name}: {key} should be a list of strings, got {}", other.kind()))),
        }
    };
    let mut rest = std::collections::BTreeMap::new();
    for (k, v) in config.iter().flat_map(|m| m.iter()) {
        if extra.contains(&k.as_ref()) {
            rest.insert(k.as_ref(), v);
        } else if !matches!(k.as_ref(), "nodeLabels" | "relationshipTypes") {
            let takes = ["nodeLabels", "relationshipTypes"].iter().chain(extra).copied().collect::<Vec<_>>().join(", ");
            return Err(super::eval::arg_error(
                engram_query::Detail::InvalidArgumentValue,
                format!("{name}: unknown configuration key `{k}` (it takes {takes})"),
            ));
        }
    }
    let mut nodes: Vec<EntityId> = match names("nodeLabels")? {
        None => g.nodes(),
        Some(ls) => ls.iter().flat_map(|l| g.nodes_with_label(l)).collect(),
    };
    nodes.sort_unstable();
    nodes.dedup();
    let index: Map<EntityId, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    Ok((Projection { nodes, index, types: names("relationshipTypes")?.unwrap_or_default() }, rest))
}

/// The representative of `i`'s set in a union-find forest, halving the path on the way.
pub(super) fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}
