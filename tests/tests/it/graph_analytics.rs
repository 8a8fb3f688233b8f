//! FalkorDB's whole-graph analytics, `algo.betweenness`, `algo.labelPropagation` and
//! `algo.MSF`, against naive references on random graphs: betweenness from the definition (for
//! each ordered pair, the share of its shortest directed paths through each node, counted by
//! breadth-first distances), label propagation as its rounds are defined, the spanning forest
//! by its components and Prim's weight; each on the projection of labels and types asked for.

use engram::{Database, Params, QueryValue};
use proptest::prelude::*;
use std::collections::VecDeque;

fn rows(db: &Database, text: &str) -> Vec<Vec<QueryValue>> {
    db.query("default", text, &Params::new()).unwrap_or_else(|e| panic!("{text}: {e}")).rows
}

/// A random graph: nodes `n: 0..n`, those in `labelled` also `:P`; relationships of type A or B.
fn graph(n: usize, labelled: &[bool], rels: &[(usize, usize, bool)]) -> Database {
    let db = Database::in_memory();
    rows(&db, &format!("UNWIND range(0, {}) AS i CREATE (:N {{n: i}})", n - 1));
    for (i, p) in labelled.iter().take(n).enumerate() {
        if *p {
            rows(&db, &format!("MATCH (v {{n: {i}}}) SET v:P"));
        }
    }
    for (a, b, t) in rels {
        rows(&db, &format!("MATCH (a {{n: {}}}), (b {{n: {}}}) CREATE (a)-[:{}]->(b)", a % n, b % n, if *t { "A" } else { "B" }));
    }
    db
}

/// What the call projects: which nodes take part and the directed adjacency between them.
fn projection(n: usize, labelled: &[bool], rels: &[(usize, usize, bool)], only_p: bool, only_a: bool) -> (Vec<usize>, Vec<Vec<bool>>) {
    let nodes: Vec<usize> = (0..n).filter(|&i| !only_p || labelled.get(i).copied().unwrap_or(false)).collect();
    let mut adj = vec![vec![false; n]; n];
    for (a, b, t) in rels {
        let (a, b) = (a % n, b % n);
        if a != b && (!only_a || *t) && nodes.contains(&a) && nodes.contains(&b) {
            adj[a][b] = true;
        }
    }
    (nodes, adj)
}

/// Breadth-first distances and shortest-path counts from `s`.
fn bfs(n: usize, adj: &[Vec<bool>], s: usize) -> (Vec<Option<usize>>, Vec<f64>) {
    let (mut dist, mut sigma) = (vec![None; n], vec![0.0; n]);
    dist[s] = Some(0);
    sigma[s] = 1.0;
    let mut queue = VecDeque::from([s]);
    while let Some(v) = queue.pop_front() {
        let next = dist[v].expect("queued nodes have a distance") + 1;
        for w in 0..n {
            if adj[v][w] {
                if dist[w].is_none() {
                    dist[w] = Some(next);
                    queue.push_back(w);
                }
                if dist[w] == Some(next) {
                    sigma[w] += sigma[v];
                }
            }
        }
    }
    (dist, sigma)
}

/// Betweenness from the definition, summed over the sources `sources`.
fn betweenness(n: usize, adj: &[Vec<bool>], sources: &[usize]) -> Vec<f64> {
    let from: Vec<_> = (0..n).map(|s| bfs(n, adj, s)).collect();
    let mut score = vec![0.0; n];
    for &s in sources {
        for t in 0..n {
            let Some(st) = from[s].0[t] else { continue };
            if t == s {
                continue;
            }
            for v in 0..n {
                if v == s || v == t {
                    continue;
                }
                if let (Some(sv), Some(vt)) = (from[s].0[v], from[v].0[t]) {
                    if sv + vt == st {
                        score[v] += from[s].1[v] * from[v].1[t] / from[s].1[t];
                    }
                }
            }
        }
    }
    score
}

/// Synchronous label propagation as defined: the most frequent neighbouring label, the
/// smallest on a tie, until nothing changes or `rounds` ran.
fn propagate(nodes: &[usize], adj: &[Vec<bool>], rounds: usize) -> Vec<usize> {
    let n = adj.len();
    let mut label: Vec<usize> = (0..n).collect();
    for _ in 0..rounds {
        let mut next = label.clone();
        for &v in nodes {
            let mut count = vec![0usize; n];
            for &w in nodes {
                if w != v && (adj[v][w] || adj[w][v]) {
                    count[label[w]] += 1;
                }
            }
            if let Some(most) = count.iter().copied().max().filter(|m| *m > 0) {
                next[v] = count.iter().position(|c| *c == most).expect("the most frequent label is counted");
            }
        }
        if next == label {
            break;
        }
        label = next;
    }
    label
}

fn config(only_p: bool, only_a: bool, extra: &str) -> String {
    let mut parts = Vec::new();
    if only_p {
        parts.push("nodeLabels: ['P']".to_owned());
    }
    if only_a {
        parts.push("relationshipTypes: ['A']".to_owned());
    }
    if !extra.is_empty() {
        parts.push(extra.to_owned());
    }
    format!("{{{}}}", parts.join(", "))
}

fn scores(db: &Database, text: &str) -> Vec<(usize, f64)> {
    rows(db, text)
        .iter()
        .map(|r| match (&r[0], &r[1]) {
            (QueryValue::Int(n), QueryValue::Float(s)) => (*n as usize, *s),
            (QueryValue::Int(n), QueryValue::Int(c)) => (*n as usize, *c as f64),
            other => panic!("{other:?}"),
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(64), ..ProptestConfig::default() })]

    /// Exact betweenness (every source) equals the definition; a sample of sources gives at
    /// most the exact score of each node (dependencies are never negative), the same for the
    /// same seed.
    #[test]
    fn betweenness_equals_the_definition(
        n in 1usize..9,
        labelled in prop::collection::vec(any::<bool>(), 9),
        rels in prop::collection::vec((0usize..9, 0usize..9, any::<bool>()), 0..20),
        only_p in any::<bool>(),
        only_a in any::<bool>(),
        sample in 1usize..4,
        seed in 0i64..5,
    ) {
        let db = graph(n, &labelled, &rels);
        let (nodes, adj) = projection(n, &labelled, &rels, only_p, only_a);
        let exact = betweenness(n, &adj, &nodes);
        let got = scores(&db, &format!("CALL algo.betweenness({}) YIELD node, score RETURN node.n, score", config(only_p, only_a, "")));
        prop_assert_eq!(got.iter().map(|(v, _)| *v).collect::<Vec<_>>(), nodes.clone());
        for (v, s) in &got {
            prop_assert!((s - exact[*v]).abs() < 1e-9, "node {}: {} against {}", v, s, exact[*v]);
        }
        let text = format!(
            "CALL algo.betweenness({}) YIELD node, score RETURN node.n, score",
            config(only_p, only_a, &format!("samplingSize: {sample}, samplingSeed: {seed}"))
        );
        let sampled = scores(&db, &text);
        prop_assert_eq!(&sampled, &scores(&db, &text), "the same seed, the same scores");
        for (v, s) in &sampled {
            prop_assert!(*s <= exact[*v] + 1e-9 && *s >= 0.0, "node {}: {} over {}", v, s, exact[*v]);
        }
        // Sources are nodes with an outgoing relationship: when there are at most `sample` of
        // them, the sample is all of them.
        if nodes.iter().filter(|&&v| adj[v].iter().any(|x| *x)).count() <= sample {
            prop_assert_eq!(&sampled, &got);
        }
    }

    /// Label propagation equals its definition, run for the rounds asked.
    #[test]
    fn label_propagation_equals_the_definition(
        n in 1usize..9,
        labelled in prop::collection::vec(any::<bool>(), 9),
        rels in prop::collection::vec((0usize..9, 0usize..9, any::<bool>()), 0..20),
        only_p in any::<bool>(),
        only_a in any::<bool>(),
        rounds in prop::option::of(1usize..4),
    ) {
        let db = graph(n, &labelled, &rels);
        let (nodes, adj) = projection(n, &labelled, &rels, only_p, only_a);
        let want = propagate(&nodes, &adj, rounds.unwrap_or(10));
        let extra = rounds.map(|r| format!("maxIterations: {r}")).unwrap_or_default();
        let got = scores(&db, &format!(
            "CALL algo.labelPropagation({}) YIELD node, communityId RETURN node.n, communityId",
            config(only_p, only_a, &extra)
        ));
        // Node n is the n-th created, so its id is n: a community's id is its node's `n`.
        let want: Vec<(usize, f64)> = nodes.iter().map(|&v| (v, want[v] as f64)).collect();
        prop_assert_eq!(got, want);
    }
}

/// Prim's minimum (or, `sign` -1, maximum) total weight of a spanning tree of each component
/// of the undirected projection, and the components.
fn prim(n: usize, nodes: &[usize], edges: &[(usize, usize, f64)], sign: f64) -> (f64, Vec<Vec<usize>>) {
    let mut seen = vec![false; n];
    let (mut total, mut components) = (0.0, Vec::new());
    for &start in nodes {
        if seen[start] {
            continue;
        }
        seen[start] = true;
        let mut component = vec![start];
        loop {
            let best = edges.iter().filter(|(a, b, _)| seen[*a] != seen[*b]).min_by(|x, y| (sign * x.2).total_cmp(&(sign * y.2)));
            let Some(&(a, b, w)) = best else { break };
            let new = if seen[a] { b } else { a };
            seen[new] = true;
            component.push(new);
            total += w;
        }
        component.sort_unstable();
        components.push(component);
    }
    (total, components)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(64), ..ProptestConfig::default() })]

    /// `algo.MSF` gives one tree per connected component (the component's nodes, one
    /// relationship fewer, joining them all), of Prim's total weight, minimum or maximum.
    #[test]
    fn spanning_forest_is_a_lightest_forest_of_the_components(
        n in 1usize..8,
        labelled in prop::collection::vec(any::<bool>(), 8),
        rels in prop::collection::vec((0usize..8, 0usize..8, any::<bool>(), prop::option::of(0u8..6)), 0..16),
        only_p in any::<bool>(),
        only_a in any::<bool>(),
        maximize in any::<bool>(),
    ) {
        let db = graph(n, &labelled, &[]);
        for (k, (a, b, t, w)) in rels.iter().enumerate() {
            let w = w.map(|w| format!(", w: {w}")).unwrap_or_default();
            let t = if *t { "A" } else { "B" };
            rows(&db, &format!("MATCH (a {{n: {}}}), (b {{n: {}}}) CREATE (a)-[:{t} {{k: {k}{w}}}]->(b)", a % n, b % n));
        }
        let (nodes, _) = projection(n, &labelled, &[], only_p, only_a);
        let weight = |k: usize| rels[k].3.map_or(1.0, f64::from);
        let edges: Vec<(usize, usize, f64)> = rels
            .iter()
            .enumerate()
            .filter(|(_, (a, b, t, _))| a % n != b % n && (!only_a || *t) && nodes.contains(&(a % n)) && nodes.contains(&(b % n)))
            .map(|(k, (a, b, _, _))| (a % n, b % n, weight(k)))
            .collect();
        let (want_total, want_components) = prim(n, &nodes, &edges, if maximize { -1.0 } else { 1.0 });
        let objective = if maximize { "objective: 'maximize', " } else { "" };
        let text = format!(
            "CALL algo.MSF({}) YIELD edges, nodes RETURN [e IN edges | e.k], [x IN nodes | x.n]",
            config(only_p, only_a, &format!("{objective}weightAttribute: 'w'"))
        );
        let mut total = 0.0;
        let mut components = Vec::new();
        for r in rows(&db, &text) {
            let ints = |v: &QueryValue| -> Vec<usize> {
                let QueryValue::List(items) = v else { panic!("{v:?}") };
                items.iter().map(|x| if let QueryValue::Int(i) = x { *i as usize } else { panic!("{x:?}") }).collect()
            };
            let (tree, members) = (ints(&r[0]), ints(&r[1]));
            prop_assert_eq!(tree.len() + 1, members.len(), "a tree has one relationship fewer than nodes");
            // Its relationships join all its nodes (so, being one fewer, without a cycle).
            let mut joined = vec![members[0]];
            let mut grew = true;
            while grew {
                grew = false;
                for &k in &tree {
                    let (a, b) = (rels[k].0 % n, rels[k].1 % n);
                    prop_assert!(members.contains(&a) && members.contains(&b));
                    if joined.contains(&a) != joined.contains(&b) {
                        joined.push(if joined.contains(&a) { b } else { a });
                        grew = true;
                    }
                }
            }
            prop_assert_eq!(joined.len(), members.len());
            total += tree.iter().map(|&k| weight(k)).sum::<f64>();
            components.push(members);
        }
        components.sort();
        let mut want_components = want_components;
        want_components.sort();
        prop_assert_eq!(components, want_components);
        prop_assert!((total - want_total).abs() < 1e-9, "{} against Prim's {}", total, want_total);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(24), ..ProptestConfig::default() })]

    /// The analytics run in parallel (betweenness's sources, label propagation's nodes, the
    /// forest's sort): on one thread and on four, the answers are the same to the last bit.
    #[test]
    fn analytics_on_one_thread_equal_on_four(
        n in 20usize..60,
        rels in prop::collection::vec((0usize..60, 0usize..60, any::<bool>()), 40..200),
    ) {
        let db = graph(n, &[], &rels);
        for text in [
            "CALL algo.betweenness({samplingSize: 64}) YIELD node, score RETURN node.n, score",
            "CALL algo.labelPropagation() YIELD node, communityId RETURN node.n, communityId",
            "CALL algo.MSF() YIELD edges, nodes RETURN [e IN edges | id(e)], [x IN nodes | x.n]",
        ] {
            let on = |threads: usize| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
                pool.install(|| rows(&db, text))
            };
            let one = on(1);
            prop_assert!(!one.is_empty());
            prop_assert_eq!(one, on(4), "{}", text);
        }
    }
}

/// The settings refused, each by name; null or no configuration means every node and type.
#[test]
fn settings_are_checked() {
    let db = graph(3, &[true, false, true], &[(0, 1, true), (1, 2, false)]);
    for (text, want) in [
        ("CALL algo.betweenness({samplingSize: 0})", "samplingSize should be a positive integer"),
        ("CALL algo.betweenness({samplingSeed: 'x'})", "samplingSeed should be an integer"),
        ("CALL algo.betweenness({maxIterations: 3})", "unknown configuration key `maxIterations`"),
        ("CALL algo.labelPropagation({maxIterations: -2})", "maxIterations should be a positive integer"),
        ("CALL algo.labelPropagation({nodeLabels: 'P'})", "nodeLabels should be a list of strings"),
        ("CALL algo.labelPropagation(3)", "takes a map"),
        ("CALL algo.MSF({objective: 'smallest'})", "objective should be 'minimize' or 'maximize'"),
        ("CALL algo.MSF({weightAttribute: 3})", "weightAttribute should be a string"),
    ] {
        let e = db.query("default", text, &Params::new()).expect_err(text).to_string();
        assert!(e.contains(want), "{text}: {e}");
    }
    for text in
        ["CALL algo.betweenness()", "CALL algo.betweenness(null)", "CALL algo.labelPropagation(null)", "CALL algo.labelPropagation({})"]
    {
        assert_eq!(rows(&db, text).len(), 3, "{text}");
    }
    assert_eq!(scores(&db, "CALL algo.betweenness() YIELD node, score RETURN node.n, score"), [(0, 0.0), (1, 1.0), (2, 0.0)]);
    // Only nodes with an outgoing relationship are drawn as sources: beside 30 nodes without
    // one, a sample of two is the chain's two sources, whatever the seed.
    let db = graph(33, &[], &[(0, 1, true), (1, 2, true)]);
    for seed in 0..8 {
        let text = format!("CALL algo.betweenness({{samplingSize: 2, samplingSeed: {seed}}}) YIELD node, score RETURN node.n, score");
        assert_eq!(scores(&db, &text)[..3], [(0, 0.0), (1, 1.0), (2, 0.0)], "{text}");
    }
}
