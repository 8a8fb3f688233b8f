//! FalkorDB's whole-graph analytics over what the query sees: `algo.betweenness` (Brandes'
//! betweenness centrality along directed relationships, exact or from a seeded sample of
//! sources), `algo.labelPropagation` (synchronous community detection by label propagation,
//! LDBC Graphalytics' CDLP) and `algo.MSF` (Kruskal's minimum spanning forest). Each runs on a
//! projection: the nodes of `nodeLabels` and the
//! relationships of `relationshipTypes` between them, a relationship from a node to itself left
//! out (and, but for the forest, several between two nodes counted once).

use std::collections::VecDeque;

use engram_query::{Detail, QueryError};
use rand::SeedableRng;
use rayon::prelude::*;

use super::algo_procs::{projection, root, stopped};
use super::eval::{arg_error, type_error};
use super::graph::Graph;
use super::value::Val;
use crate::ids::ClaimId;
use crate::index::graph::Direction;
use crate::read::scope::{ReadContext, Ticker};

/// Sources `algo.betweenness` samples when `samplingSize` is not given: FalkorDB's default.
const SAMPLING_SIZE: usize = 32;
/// Iterations `algo.labelPropagation` runs at most when `maxIterations` is not given:
/// FalkorDB's default.
const MAX_ITERATIONS: usize = 10;

/// A positive integer setting, or `default` when absent.
fn positive(name: &str, key: &str, v: Option<&&Val>, default: usize) -> Result<usize, QueryError> {
    match v {
        None => Ok(default),
        Some(Val::Int(i)) if *i > 0 => Ok(usize::try_from(*i).unwrap_or(usize::MAX)),
        Some(Val::Int(i)) => Err(arg_error(Detail::InvalidArgumentValue, format!("{name}: {key} should be a positive integer, got {i}"))),
        Some(other) => Err(type_error(format!("{name}: {key} should be a positive integer, got {}", other.kind()))),
    }
}

/// `algo.betweenness(config)`: each node with the number of shortest directed paths between
/// other nodes it lies on, each path shared among the shortest ones of its pair (Brandes'
/// dependencies, not normalized). The sources are every node with an outgoing relationship
/// when there are at most `samplingSize` (32) of them, else `samplingSize` of them drawn
/// without repetition by a generator seeded with `samplingSeed` (0): the same call gives the
/// same scores, on any number of threads. Rows in node order.
pub(super) fn betweenness(g: &Graph<'_, '_>, cx: &ReadContext, args: &[Val]) -> Result<Vec<Vec<Val>>, QueryError> {
    const NAME: &str = "algo.betweenness";
    let (proj, extra) = projection(g, NAME, args.first(), &["samplingSize", "samplingSeed"])?;
    let sampling = positive(NAME, "samplingSize", extra.get("samplingSize"), SAMPLING_SIZE)?;
    let seed = match extra.get("samplingSeed") {
        None => 0,
        Some(Val::Int(i)) => *i,
        Some(other) => return Err(type_error(format!("{NAME}: samplingSeed should be an integer, got {}", other.kind()))),
    };
    let out = proj.neighbours(g, Direction::Out, cx)?;
    let mut sources: Vec<usize> = (0..out.len()).filter(|&i| !out[i].is_empty()).collect();
    if sources.len() > sampling {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed as u64);
        let mut picked: Vec<usize> = rand::seq::index::sample(&mut rng, sources.len(), sampling).into_iter().map(|i| sources[i]).collect();
        picked.sort_unstable();
        sources = picked;
    }
    let score = brandes(&out, &sources, cx)?;
    Ok(proj.nodes.iter().zip(score).map(|(n, s)| vec![Val::Node(*n), Val::Float(s)]).collect())
}

/// Sources one parallel task walks from, its dependencies summed alone; the tasks' sums are
/// added in source order, so the scores do not depend on how many threads ran.
const SOURCES_PER_TASK: usize = 4;
/// Tasks run at once: bounds the partial sums held (one score per node each).
const TASKS_PER_ROUND: usize = 8;

/// Brandes' accumulation of dependencies from each source over unweighted directed edges, the
/// sources split into tasks run in parallel (see `SOURCES_PER_TASK`).
fn brandes(out: &[Vec<usize>], sources: &[usize], cx: &ReadContext) -> Result<Vec<f64>, QueryError> {
    let n = out.len();
    let mut score = vec![0.0; n];
    for round in sources.chunks(SOURCES_PER_TASK * TASKS_PER_ROUND) {
        let partials: Vec<Vec<f64>> = round
            .par_chunks(SOURCES_PER_TASK)
            .map_init(|| Scratch::new(n), |scratch, task| scratch.dependencies(out, task, cx))
            .collect::<Result<_, _>>()?;
        for partial in partials {
            for (s, x) in score.iter_mut().zip(partial) {
                *s += x;
            }
        }
    }
    Ok(score)
}

/// One thread's working arrays for Brandes' walks, reset after each.
struct Scratch {
    sigma: Vec<f64>,
    dist: Vec<usize>,
    delta: Vec<f64>,
    preds: Vec<Vec<usize>>,
}

impl Scratch {
    fn new(n: usize) -> Scratch {
        Scratch { sigma: vec![0.0; n], dist: vec![usize::MAX; n], delta: vec![0.0; n], preds: vec![Vec::new(); n] }
    }

    /// The dependencies of every node on the shortest paths from `sources`, summed in order.
    fn dependencies(&mut self, out: &[Vec<usize>], sources: &[usize], cx: &ReadContext) -> Result<Vec<f64>, QueryError> {
        let Scratch { sigma, dist, delta, preds } = self;
        let mut ticker = Ticker::new(cx);
        let mut score = vec![0.0; out.len()];
        for &s in sources {
            let mut order = Vec::new();
            sigma[s] = 1.0;
            dist[s] = 0;
            let mut queue = VecDeque::from([s]);
            while let Some(v) = queue.pop_front() {
                order.push(v);
                for &w in &out[v] {
                    ticker.tick(1).map_err(stopped)?;
                    if dist[w] == usize::MAX {
                        dist[w] = dist[v] + 1;
                        queue.push_back(w);
                    }
                    if dist[w] == dist[v] + 1 {
                        sigma[w] += sigma[v];
                        preds[w].push(v);
                    }
                }
            }
            for &w in order.iter().rev() {
                for &v in &preds[w] {
                    delta[v] += sigma[v] / sigma[w] * (1.0 + delta[w]);
                }
                if w != s {
                    score[w] += delta[w];
                }
            }
            for &v in &order {
                (sigma[v], dist[v], delta[v]) = (0.0, usize::MAX, 0.0);
                preds[v].clear();
            }
        }
        Ok(score)
    }
}

/// `algo.labelPropagation(config)`: each node with its community. Every node starts in its
/// own, named by its id; then, all at once, each node with neighbours (either direction) takes
/// the community most of them are in, the smallest id on a tie; until nothing changes or
/// `maxIterations` (10) rounds ran. Rows in node order.
pub(super) fn label_propagation(g: &Graph<'_, '_>, cx: &ReadContext, args: &[Val]) -> Result<Vec<Vec<Val>>, QueryError> {
    const NAME: &str = "algo.labelPropagation";
    let (proj, extra) = projection(g, NAME, args.first(), &["maxIterations"])?;
    let rounds = positive(NAME, "maxIterations", extra.get("maxIterations"), MAX_ITERATIONS)?;
    let near = proj.neighbours(g, Direction::Both, cx)?;
    // Communities as positions: nodes are ascending, so the smallest position is the smallest id.
    let mut label: Vec<usize> = (0..near.len()).collect();
    for _ in 0..rounds {
        // Each node's next community reads only this round's: the nodes go in parallel, in order.
        let next: Vec<usize> = near
            .par_iter()
            .enumerate()
            .map_init(
                || (Ticker::new(cx), Vec::new()),
                |(ticker, counts), (i, ns)| {
                    ticker.tick(ns.len().max(1) as u32).map_err(stopped)?;
                    counts.clear();
                    counts.extend(ns.iter().map(|&j| label[j]));
                    counts.sort_unstable();
                    // The most frequent, the smallest first among equals (runs are ascending).
                    let mut best = (0usize, label[i]);
                    for run in counts.chunk_by(|a, b| a == b) {
                        if run.len() > best.0 {
                            best = (run.len(), run[0]);
                        }
                    }
                    Ok(best.1)
                },
            )
            .collect::<Result<_, QueryError>>()?;
        if next == label {
            break;
        }
        label = next;
    }
    Ok(proj.nodes.iter().zip(&label).map(|(n, l)| vec![Val::Node(*n), Val::Int(i64::from(proj.nodes[*l].0))]).collect())
}

/// `algo.MSF(config)`: the minimum (or, with `objective: 'maximize'`, maximum) spanning forest
/// of the projection taken as undirected, one row per connected component: `edges`, the
/// relationships of its tree in the order Kruskal's algorithm takes them, and `nodes`, its
/// nodes ascending (a node without relationships is a tree of its own). A relationship weighs
/// its `weightAttribute` (1 where absent or not a number, and every one without the setting);
/// equal weights go by relationship id. Rows by their smallest node.
pub(super) fn spanning_forest(g: &Graph<'_, '_>, cx: &ReadContext, args: &[Val]) -> Result<Vec<Vec<Val>>, QueryError> {
    const NAME: &str = "algo.MSF";
    let (proj, extra) = projection(g, NAME, args.first(), &["weightAttribute", "objective"])?;
    let weight = match extra.get("weightAttribute") {
        None => None,
        Some(Val::Str(s)) => Some(s.clone()),
        Some(other) => return Err(type_error(format!("{NAME}: weightAttribute should be a string, got {}", other.kind()))),
    };
    let maximize = match extra.get("objective") {
        None => false,
        Some(Val::Str(s)) if s.eq_ignore_ascii_case("minimize") => false,
        Some(Val::Str(s)) if s.eq_ignore_ascii_case("maximize") => true,
        Some(other) => {
            return Err(arg_error(
                Detail::InvalidArgumentValue,
                format!("{NAME}: objective should be 'minimize' or 'maximize', got {other:?}"),
            ))
        }
    };
    // Every relationship between two nodes of the projection, once (from its subject's side).
    let mut edges: Vec<(f64, ClaimId, usize, usize)> = Vec::new();
    if let Some(expander) = g.expander(Direction::Out, &proj.types, None) {
        let mut ticker = Ticker::new(cx);
        for (i, &n) in proj.nodes.iter().enumerate() {
            for edge in expander.edges(n) {
                ticker.tick(1).map_err(stopped)?;
                match proj.index.get(&edge.neighbor) {
                    Some(&j) if j != i => {
                        let w = match weight.as_deref().map(|k| g.rel_prop(edge.claim, k)) {
                            Some(Val::Int(x)) => x as f64,
                            Some(Val::Float(x)) if !x.is_nan() => x,
                            _ => 1.0,
                        };
                        edges.push((if maximize { -w } else { w }, edge.claim, i, j));
                    }
                    _ => {}
                }
            }
        }
    }
    // A total order (a relationship is listed once), so any sort gives the same forest.
    edges.par_sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut parent: Vec<usize> = (0..proj.nodes.len()).collect();
    let mut taken: Vec<(ClaimId, usize)> = Vec::new();
    for (_, claim, i, j) in edges {
        let (a, b) = (root(&mut parent, i), root(&mut parent, j));
        if a != b {
            parent[a.max(b)] = a.min(b);
            taken.push((claim, i));
        }
    }
    // Trees by their root, which is their smallest node (roots are kept smallest).
    let mut trees: std::collections::BTreeMap<usize, (Vec<Val>, Vec<Val>)> = std::collections::BTreeMap::new();
    for i in 0..proj.nodes.len() {
        let r = root(&mut parent, i);
        trees.entry(r).or_default().1.push(Val::Node(proj.nodes[i]));
    }
    for (claim, i) in taken {
        let r = root(&mut parent, i);
        trees.entry(r).or_default().0.push(Val::Rel(claim));
    }
    Ok(trees.into_values().map(|(edges, nodes)| vec![Val::list(edges), Val::list(nodes)]).collect())
}
