//! FalkorDB's weighted path procedures, `algo.SPpaths` and `algo.SSpaths`: the lightest simple
//! paths (between two nodes, or from one), by weight, then cost, then length, within `maxCost`
//! and `maxLen`. Checked against a naive enumeration of every simple path on random graphs with
//! random weights, costs, types and directions; the documented example and the refusals fixed.

use engram::{Database, Params, Principal, QueryValue, ReadLimits};
use proptest::prelude::*;
use std::sync::Arc;

fn rows(db: &Database, text: &str) -> Vec<Vec<QueryValue>> {
    db.query("default", text, &Params::new()).unwrap_or_else(|e| panic!("{text}: {e}")).rows
}

fn float(v: &QueryValue) -> f64 {
    match v {
        QueryValue::Float(f) => *f,
        other => panic!("not a float: {other:?}"),
    }
}

/// A relationship of the random graph: from, to, type A (else B), weight (absent when None),
/// cost (absent when None).
type Rel = (usize, usize, bool, Option<u8>, Option<u8>);

fn graph(n: usize, rels: &[Rel]) -> Database {
    let db = Database::in_memory();
    rows(&db, &format!("UNWIND range(0, {}) AS i CREATE (:N {{n: i}})", n - 1));
    for (i, (a, b, t, w, c)) in rels.iter().enumerate() {
        let mut props = vec![format!("k: {i}")];
        props.extend(w.map(|w| format!("w: {w}")));
        props.extend(c.map(|c| format!("c: {c}.5")));
        rows(
            &db,
            &format!(
                "MATCH (a {{n: {}}}), (b {{n: {}}}) CREATE (a)-[:{} {{{}}}]->(b)",
                a % n,
                b % n,
                if *t { "A" } else { "B" },
                props.join(", ")
            ),
        );
    }
    db
}

/// A path found: its rank (weight, cost, length) and its relationships by `k`.
#[derive(Clone, Debug, PartialEq)]
struct Path {
    weight: f64,
    cost: f64,
    rels: Vec<usize>,
}

impl Path {
    fn rank(&self) -> (f64, f64, usize) {
        (self.weight, self.cost, self.rels.len())
    }
}

/// What the search is asked.
#[derive(Clone, Debug)]
struct Ask {
    source: usize,
    target: Option<usize>,
    only_a: bool,
    direction: &'static str,
    max_len: Option<usize>,
    max_cost: Option<f64>,
    count: usize,
}

/// Every simple path from the source (to the target) by depth-first enumeration, weighed as
/// the procedures say (1 for an absent property).
fn every_path(n: usize, rels: &[Rel], ask: &Ask) -> Vec<Path> {
    let mut out = Vec::new();
    let mut on = vec![false; n];
    on[ask.source % n] = true;
    let mut path = Vec::new();
    walk(n, rels, ask, ask.source % n, &mut on, &mut path, &mut out);
    out
}

fn walk(n: usize, rels: &[Rel], ask: &Ask, at: usize, on: &mut Vec<bool>, path: &mut Vec<usize>, out: &mut Vec<Path>) {
    if ask.max_len.is_some_and(|m| path.len() >= m) || (!path.is_empty() && ask.target.is_some_and(|t| t % n == at)) {
        return;
    }
    for (k, (a, b, t, _, _)) in rels.iter().enumerate() {
        if ask.only_a && !t {
            continue;
        }
        let (a, b) = (a % n, b % n);
        let mut next = Vec::new();
        if a == at && ask.direction != "incoming" {
            next.push(b);
        }
        if b == at && ask.direction != "outgoing" {
            next.push(a);
        }
        for to in next {
            if on[to] {
                continue;
            }
            on[to] = true;
            path.push(k);
            let weight = path.iter().map(|&k| rels[k].3.map_or(1.0, f64::from)).sum();
            let cost = path.iter().map(|&k| rels[k].4.map_or(1.0, |c| f64::from(c) + 0.5)).sum::<f64>();
            if ask.target.is_none_or(|t| t % n == to) && ask.max_cost.is_none_or(|m| cost <= m) {
                out.push(Path { weight, cost, rels: path.clone() });
            }
            walk(n, rels, ask, to, on, path, out);
            path.pop();
            on[to] = false;
        }
    }
}

fn call(db: &Database, n: usize, ask: &Ask) -> Vec<Path> {
    let mut config = vec![
        "sourceNode: s".to_owned(),
        "weightProp: 'w'".to_owned(),
        "costProp: 'c'".to_owned(),
        format!("relDirection: '{}'", ask.direction),
        format!("pathCount: {}", ask.count),
    ];
    if ask.only_a {
        config.push("relTypes: ['A']".to_owned());
    }
    config.extend(ask.max_len.map(|m| format!("maxLen: {m}")));
    config.extend(ask.max_cost.map(|m| format!("maxCost: {m}")));
    let (matched, name) = match ask.target {
        Some(t) => {
            config.push("targetNode: t".to_owned());
            (format!("MATCH (s {{n: {}}}), (t {{n: {}}})", ask.source % n, t % n), "algo.SPpaths")
        }
        None => (format!("MATCH (s {{n: {}}})", ask.source % n), "algo.SSpaths"),
    };
    let text = format!(
        "{matched} CALL {name}({{{}}}) YIELD path, pathWeight, pathCost \
         RETURN pathWeight, pathCost, [r IN relationships(path) | r.k], [x IN nodes(path) | x.n]",
        config.join(", ")
    );
    rows(db, &text)
        .iter()
        .map(|r| {
            let ints = |v: &QueryValue| -> Vec<usize> {
                let QueryValue::List(items) = v else { panic!("{v:?}") };
                items.iter().map(|x| if let QueryValue::Int(i) = x { *i as usize } else { panic!("{x:?}") }).collect()
            };
            let (rels, nodes) = (ints(&r[2]), ints(&r[3]));
            assert_eq!(nodes.len(), rels.len() + 1, "{text}");
            Path { weight: float(&r[0]), cost: float(&r[1]), rels }
        })
        .collect()
}

/// Whether `p` is one of the simple paths `every` lists (same relationships, same rank).
fn listed(p: &Path, every: &[Path]) -> bool {
    every.iter().any(|q| q.rels == p.rels && q.rank() == p.rank())
}

fn direction() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("outgoing"), Just("incoming"), Just("both")]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(96), ..ProptestConfig::default() })]

    /// The procedures return exactly what ranking every simple path gives: with `pathCount` k,
    /// k paths whose ranks are the k best, each a real simple path with its sums; with 0, every
    /// path of the least weight; best first.
    #[test]
    fn weighted_paths_equal_the_best_of_every_simple_path(
        n in 1usize..7,
        rels in prop::collection::vec((0usize..7, 0usize..7, any::<bool>(), prop::option::of(0u8..5), prop::option::of(0u8..4)), 0..12),
        source in 0usize..7,
        target in prop::option::of(0usize..7),
        only_a in any::<bool>(),
        direction in direction(),
        max_len in prop::option::of(0usize..4),
        max_cost in prop::option::of(0u8..9),
        count in 0usize..4,
    ) {
        let db = graph(n, &rels);
        let ask = Ask { source, target, only_a, direction, max_len, max_cost: max_cost.map(f64::from), count };
        let got = call(&db, n, &ask);
        let mut every = every_path(n, &rels, &ask);
        every.sort_by(|a, b| a.rank().partial_cmp(&b.rank()).expect("finite"));
        for p in &got {
            prop_assert!(listed(p, &every), "{:?} is no simple path of {:?}", p, ask);
        }
        prop_assert!(got.windows(2).all(|w| w[0].rank() <= w[1].rank()), "best first: {:?}", got);
        let ranks = |ps: &[Path]| ps.iter().map(Path::rank).collect::<Vec<_>>();
        if count == 0 {
            let least = every.first().map(|p| p.weight);
            let mut want: Vec<Vec<usize>> = every.iter().filter(|p| Some(p.weight) == least).map(|p| p.rels.clone()).collect();
            let mut have: Vec<Vec<usize>> = got.iter().map(|p| p.rels.clone()).collect();
            want.sort();
            have.sort();
            prop_assert_eq!(have, want, "{:?}", ask);
        } else {
            prop_assert_eq!(ranks(&got), ranks(&every[..every.len().min(count)]), "{:?}", ask);
        }
    }
}

/// The least rank from `source` to `target` by a plain one-sided Dijkstra over (weight, cost,
/// length), the rank ordered lexicographically; `None` when the target is not reached.
fn dijkstra(n: usize, rels: &[Rel], ask: &Ask) -> Option<(f64, f64, usize)> {
    let (source, target) = (ask.source % n, ask.target? % n);
    if source == target {
        return None;
    }
    let mut best: Vec<Option<(f64, f64, usize)>> = vec![None; n];
    let mut done = vec![false; n];
    best[source] = Some((0.0, 0.0, 0));
    loop {
        let next = (0..n).filter(|&v| !done[v] && best[v].is_some()).min_by(|&a, &b| best[a].partial_cmp(&best[b]).expect("finite"));
        let v = next?;
        if v == target {
            return best[v];
        }
        done[v] = true;
        let (w0, c0, l0) = best[v].expect("reached");
        for (a, b, t, w, c) in rels {
            let (a, b) = (a % n, b % n);
            if ask.only_a && !t {
                continue;
            }
            let mut to = Vec::new();
            if a == v && ask.direction != "incoming" {
                to.push(b);
            }
            if b == v && ask.direction != "outgoing" {
                to.push(a);
            }
            for u in to {
                let rank = (w0 + w.map_or(1.0, f64::from), c0 + c.map_or(1.0, |c| f64::from(c) + 0.5), l0 + 1);
                if !done[u] && best[u].is_none_or(|old| rank < old) {
                    best[u] = Some(rank);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(96), ..ProptestConfig::default() })]

    /// The one lightest path between two nodes (the bidirectional search) ranks as a one-sided
    /// Dijkstra's optimum, on graphs larger than the exhaustive check reaches.
    #[test]
    fn the_lightest_path_ranks_as_dijkstras_optimum(
        n in 2usize..40,
        rels in prop::collection::vec((0usize..40, 0usize..40, any::<bool>(), prop::option::of(0u8..9), prop::option::of(0u8..4)), 0..120),
        source in 0usize..40,
        target in 0usize..40,
        only_a in any::<bool>(),
        direction in direction(),
    ) {
        let db = graph(n, &rels);
        let ask = Ask { source, target: Some(target), only_a, direction, max_len: None, max_cost: None, count: 1 };
        let got = call(&db, n, &ask);
        let want = dijkstra(n, &rels, &ask);
        prop_assert_eq!(got.iter().map(Path::rank).collect::<Vec<_>>(), want.into_iter().collect::<Vec<_>>(), "{:?}", ask);
        for p in &got {
            // A real path: each relationship joins the last node reached to the next.
            let mut at = source % n;
            for &k in &p.rels {
                let (a, b) = (rels[k].0 % n, rels[k].1 % n);
                at = if a == at && direction != "incoming" { b } else { prop_assert!(b == at && direction != "outgoing"); a };
            }
            prop_assert_eq!(at, target % n);
        }
    }
}

/// FalkorDB's documented road network: the shortest path by distance, the cheapest by time
/// within a distance budget, and every path from A within 10 km ordered by distance.
#[test]
fn the_documented_road_network() {
    let db = Database::in_memory();
    rows(
        &db,
        "CREATE (a:City {name: 'A'}), (b:City {name: 'B'}), (c:City {name: 'C'}), (d:City {name: 'D'}), (e:City {name: 'E'}), \
         (f:City {name: 'F'}), (g:City {name: 'G'}), \
         (a)-[:Road {dist: 3, time: 4}]->(b), (a)-[:Road {dist: 2, time: 12}]->(d), (a)-[:Road {dist: 8, time: 3}]->(c), \
         (d)-[:Road {dist: 4, time: 1}]->(c), (d)-[:Road {dist: 5, time: 2}]->(e), (b)-[:Road {dist: 5, time: 6}]->(d), \
         (b)-[:Road {dist: 7, time: 2}]->(e), (c)-[:Road {dist: 2, time: 5}]->(f), (e)-[:Road {dist: 4, time: 3}]->(g), \
         (f)-[:Road {dist: 5, time: 4}]->(g)",
    );
    let names = |text: &str| -> Vec<(f64, Vec<String>)> {
        rows(&db, text)
            .iter()
            .map(|r| {
                let QueryValue::List(ns) = &r[1] else { panic!("{r:?}") };
                (float(&r[0]), ns.iter().map(|n| if let QueryValue::String(s) = n { s.clone() } else { panic!("{n:?}") }).collect())
            })
            .collect()
    };
    let path = |ns: &str| ns.chars().map(String::from).collect::<Vec<_>>();
    assert_eq!(
        names(
            "MATCH (a:City {name: 'A'}), (g:City {name: 'G'}) \
             CALL algo.SPpaths({sourceNode: a, targetNode: g, relTypes: ['Road'], weightProp: 'dist'}) YIELD path, pathWeight \
             RETURN pathWeight, [n IN nodes(path) | n.name]"
        ),
        [(11.0, path("ADEG"))]
    );
    assert_eq!(
        names(
            "MATCH (a:City {name: 'A'}), (g:City {name: 'G'}) \
             CALL algo.SPpaths({sourceNode: a, targetNode: g, relTypes: ['Road'], weightProp: 'time', costProp: 'dist', maxCost: 14, pathCount: 0}) \
             YIELD path, pathWeight RETURN pathWeight, [n IN nodes(path) | n.name]"
        ),
        [(9.0, path("ABEG"))]
    );
    assert_eq!(
        names(
            "MATCH (a:City {name: 'A'}) CALL algo.SSpaths({sourceNode: a, relTypes: ['Road'], costProp: 'dist', maxCost: 10, pathCount: 1000}) \
             YIELD path, pathCost RETURN pathCost, [n IN nodes(path) | n.name] ORDER BY pathCost, size(nodes(path))"
        ),
        [
            (2.0, path("AD")),
            (3.0, path("AB")),
            (6.0, path("ADC")),
            (7.0, path("ADE")),
            (8.0, path("AC")),
            (8.0, path("ABD")),
            (8.0, path("ADCF")),
            (10.0, path("ABE")),
            (10.0, path("ACF")),
        ]
    );
}

/// What the procedures refuse, each naming what is wrong; a null source is no row.
#[test]
fn refusals_name_what_is_wrong() {
    let db = Database::in_memory();
    rows(&db, "CREATE (:N {n: 0})-[:A {w: -1}]->(:N {n: 1})");
    let cases = [
        ("CALL algo.SSpaths(1) YIELD path RETURN path", "takes a map"),
        ("MATCH (s {n: 0}) CALL algo.SSpaths({sourceNode: s, colour: 'red'}) YIELD path RETURN path", "unknown configuration key `colour`"),
        ("MATCH (s {n: 0}) CALL algo.SSpaths({sourceNode: s, targetNode: s}) YIELD path RETURN path", "`targetNode`"),
        ("MATCH (s {n: 0}) CALL algo.SPpaths({sourceNode: s}) YIELD path RETURN path", "targetNode is required"),
        ("CALL algo.SSpaths({sourceNode: 1}) YIELD path RETURN path", "sourceNode should be a node"),
        ("MATCH (s {n: 0}) CALL algo.SSpaths({sourceNode: s, relDirection: 'up'}) YIELD path RETURN path", "relDirection"),
        ("MATCH (s {n: 0}) CALL algo.SSpaths({sourceNode: s, pathCount: -1}) YIELD path RETURN path", "pathCount should not be negative"),
        ("MATCH (s {n: 0}) CALL algo.SSpaths({sourceNode: s, maxLen: 'x'}) YIELD path RETURN path", "maxLen should be an integer"),
        ("MATCH (s {n: 0}) CALL algo.SSpaths({sourceNode: s, relTypes: 'A'}) YIELD path RETURN path", "relTypes should be a list"),
        ("MATCH (s {n: 0}) CALL algo.SSpaths({sourceNode: s, weightProp: 'w'}) YIELD path RETURN path", "weightProp `w` is -1"),
    ];
    for (text, want) in cases {
        let e = db.query("default", text, &Params::new()).expect_err(text).to_string();
        assert!(e.contains(want), "{text}: {e}");
    }
    assert!(rows(&db, "CALL algo.SSpaths({sourceNode: null}) YIELD path RETURN path").is_empty());
    assert!(rows(&db, "MATCH (s {n: 0}) CALL algo.SPpaths({sourceNode: s, targetNode: null}) YIELD path RETURN path").is_empty());
    assert!(rows(&db, "MATCH (s {n: 0}) CALL algo.SSpaths({sourceNode: s, relTypes: []}) YIELD path RETURN path").is_empty());
    assert_eq!(
        rows(&db, "MATCH (s {n: 0}) CALL algo.SSpaths({sourceNode: s}) YIELD pathWeight RETURN pathWeight"),
        [[QueryValue::Float(1.0)]]
    );
}

/// A scope's limits bound the procedures: the paths asked for and kept by `rows_max`, the
/// backward walk by `visited_max`; the error names the limit.
#[test]
fn limits_name_themselves() {
    let db = Database::in_memory();
    // A star of 30 leaves: 30 one-hop paths of the least weight.
    rows(&db, "CREATE (h:H {n: 0}) WITH h UNWIND range(1, 30) AS i CREATE (h)-[:A]->(:N {n: i})");
    let small = db.scope(Arc::new(Principal::root())).with_limits(ReadLimits { rows_max: 10, visited_max: 5, ..ReadLimits::default() });
    let run = |text: &str| small.query(engram::DEFAULT_WORKSPACE, text, &Params::new());
    let err = run("MATCH (h:H) CALL algo.SSpaths({sourceNode: h, pathCount: 11}) YIELD path RETURN path").unwrap_err();
    assert!(err.to_string().contains("rows_max = 10"), "{err}");
    let err = run("MATCH (h:H) CALL algo.SSpaths({sourceNode: h, pathCount: 0}) YIELD path RETURN path").unwrap_err();
    assert!(err.to_string().contains("rows_max = 10"), "{err}");
    // The bidirectional search for the one lightest path holds the hub's leaves when it grows
    // from the hub, not when it meets the hub from a leaf; the branch and bound for two paths
    // first bounds what is left from every node near the target (the hub).
    let sp = |from: &str, to: &str, more: &str| {
        format!("MATCH (h:H), (t {{n: 7}}) CALL algo.SPpaths({{sourceNode: {from}, targetNode: {to}, relDirection: 'both'{more}}}) YIELD path RETURN length(path)")
    };
    for text in [sp("h", "t", ""), sp("t", "h", ", pathCount: 2")] {
        let err = run(&text).unwrap_err();
        assert!(err.to_string().contains("visited_max = 5"), "{text}: {err}");
    }
    // Within them the same scope answers.
    assert_eq!(run("MATCH (h:H) CALL algo.SSpaths({sourceNode: h, pathCount: 10}) YIELD path RETURN path").unwrap().rows.len(), 10);
    assert_eq!(run(&sp("t", "h", "")).unwrap().rows, [[QueryValue::Int(1)]]);
}
