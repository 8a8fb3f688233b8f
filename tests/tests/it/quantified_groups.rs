//! Quantified path patterns (Neo4j 5, GQL): `(a) ((x:A)-[r:R]->(y) WHERE …){1,3} (b)`, and of
//! several relationships, `((x)-[r:R]->(y)-[s:S]->(z)){1,2}`. Each repetition's elements pass
//! their tests and the group's WHERE; outside, the group's variables are the lists of each
//! repetition's. Checked against a naive enumeration of trails on random graphs (a group of one
//! relationship walked from either end); the forms refused say why.

use engram::{Database, Params, QueryValue};
use proptest::prelude::*;

fn rows(db: &Database, text: &str) -> Vec<Vec<QueryValue>> {
    db.query("default", text, &Params::new()).unwrap_or_else(|e| panic!("{text}: {e}")).rows
}

fn int(v: &QueryValue) -> i64 {
    match v {
        QueryValue::Int(i) => *i,
        other => panic!("not an integer: {other:?}"),
    }
}

fn ints(v: &QueryValue) -> Vec<i64> {
    match v {
        QueryValue::List(items) => items.iter().map(int).collect(),
        other => panic!("not a list: {other:?}"),
    }
}

/// Each row as integers and lists of integers, sorted.
fn table(db: &Database, text: &str) -> Vec<Vec<Vec<i64>>> {
    let mut out: Vec<Vec<Vec<i64>>> = rows(db, text)
        .iter()
        .map(|r| r.iter().map(|v| if let QueryValue::List(_) = v { ints(v) } else { vec![int(v)] }).collect())
        .collect();
    out.sort();
    out
}

fn line(db: &Database) {
    rows(db, "CREATE (:S {n: 1})-[:NEXT {d: 1}]->(:S {n: 2})-[:NEXT {d: 2}]->(:S {n: 3})-[:NEXT {d: 3}]->(:X {n: 4})");
}

#[test]
fn groups_test_each_repetition_and_bind_lists() {
    let db = Database::in_memory();
    line(&db);
    let cases: Vec<(&str, Vec<Vec<Vec<i64>>>)> = vec![
        ("MATCH (a {n: 1}) ((x:S)-[:NEXT]->(y:S)){1,3} (b) RETURN b.n", vec![vec![vec![2]], vec![vec![3]]]),
        ("MATCH (a {n: 1}) ((x)-[:NEXT]->(y)){0,1} (b) RETURN b.n", vec![vec![vec![1]], vec![vec![2]]]),
        (
            "MATCH (a {n: 1}) ((x)-[r:NEXT]->(y)){2} (b) RETURN [n IN x | n.n], [n IN y | n.n], [e IN r | e.d]",
            vec![vec![vec![1, 2], vec![2, 3], vec![1, 2]]],
        ),
        ("MATCH (a {n: 1}) ((x)-[r]->(y) WHERE y.n > x.n AND r.d < 3)+ (b) RETURN b.n", vec![vec![vec![2]], vec![vec![3]]]),
        ("MATCH ((x)-[:NEXT]->(y))+ RETURN count(*)", vec![vec![vec![6]]]),
        (
            "MATCH (a) ((x)-[:NEXT]->(y)){2,} (b) RETURN a.n, b.n",
            vec![vec![vec![1], vec![3]], vec![vec![1], vec![4]], vec![vec![2], vec![4]]],
        ),
        // Matched from the labelled end, leftwards: the lists stay in the pattern's order.
        (
            "MATCH (a) ((x)-[:NEXT]->(y))+ (b:X) RETURN a.n, [n IN x | n.n], [n IN y | n.n]",
            vec![vec![vec![1], vec![1, 2, 3], vec![2, 3, 4]], vec![vec![2], vec![2, 3], vec![3, 4]], vec![vec![3], vec![3], vec![4]]],
        ),
        (
            "MATCH (b:X)<-[:NEXT]-(a) ((x)<-[:NEXT]-(y:S))+ (c) WHERE c.n = 1 RETURN [n IN x | n.n], [n IN y | n.n]",
            vec![vec![vec![3, 2], vec![2, 1]]],
        ),
        ("MATCH p = (a {n: 1}) ((x)-->(y)){3} (b) RETURN length(p), [n IN nodes(p) | n.n]", vec![vec![vec![3], vec![1, 2, 3, 4]]]),
        ("MATCH (a {n: 1}) ((x)--(y)){2} (b) RETURN b.n", vec![vec![vec![3]]]),
        ("MATCH (a {n: 2}) ((x)-[:NEXT]->(y))+ -->(c) RETURN c.n", vec![vec![vec![4]]]),
        ("MATCH (a {n: 1}) ((x)-[:NEXT]->(y) WHERE x.n >= 2)+ (b) RETURN count(b)", vec![vec![vec![0]]]),
        ("MATCH (a {n: 1}) RETURN COUNT { (a) ((x)-->(y)){1,2} (b) }", vec![vec![vec![2]]]),
        // Several relationships: a match is whole repetitions, the lists one entry per repetition.
        (
            "MATCH (a {n: 1}) ((x)-[r:NEXT]->(y)-[s]->(z)){1} (b) RETURN [n IN x | n.n], [n IN y | n.n], [n IN z | n.n], [e IN r | e.d], [e IN s | e.d], b.n",
            vec![vec![vec![1], vec![2], vec![3], vec![1], vec![2], vec![3]]],
        ),
        ("MATCH ((x)-->(y)-->(z))+ RETURN count(*)", vec![vec![vec![2]]]),
        ("MATCH p = (a {n: 1}) ((x)-->(y)-->(z))+ (b) RETURN length(p), b.n", vec![vec![vec![2], vec![3]]]),
        ("MATCH (a) ((x)-[r]->(y)-[s]->(z) WHERE s.d > r.d AND z:S) + (b) RETURN a.n, b.n", vec![vec![vec![1], vec![3]]]),
        ("MATCH (a) ((x)-[:NEXT]->(:S)<-[:NEXT]-(z))+ (b) RETURN count(*)", vec![vec![vec![0]]]),
        // A node bound after the group is checked when reached: the walk starts left of it.
        ("MATCH (b:X) MATCH (a) ((x)-->(y)-->(z))+ (b) RETURN a.n", vec![vec![vec![2]]]),
    ];
    for (q, want) in cases {
        assert_eq!(table(&db, q), want, "{q}");
    }
    let plan = db.query("default", "EXPLAIN MATCH (a {n: 1}) ((x:S)-[:NEXT]->(y) WHERE y.n > 1){1,3} (b) RETURN b", &Params::new());
    let plan = plan.expect("plans").plan.unwrap_or_default();
    assert!(plan.contains("VarLengthExpand") && plan.contains("((:S)-[") && plan.contains("WHERE …){1,3}"), "{plan}");
}

#[test]
fn refused_group_forms_say_why() {
    let db = Database::in_memory();
    line(&db);
    for (q, says) in [
        ("MATCH ((x)-[r]->(y)-[r]->(z))+ RETURN 1", "twice"),
        ("MATCH ((x)-->(y)-->(x))+ RETURN 1", "twice"),
        ("MATCH ((x)-[y]->(y))+ RETURN 1", "twice"),
        ("MATCH (((x)-->(y))+)+ RETURN 1", "no length of its own"),
        ("MATCH (x) ((x)-->(y))+ RETURN 1", "already defined"),
        ("MATCH ((x)-->(x))+ RETURN 1", "`x` twice"),
        ("MATCH (a) ((x)-->(y)) (b) RETURN 1", "needs a quantifier"),
        ("MATCH (a) ((x)-->(y) WHERE x.n > 1) RETURN 1", "add a quantifier"),
        ("MATCH ((x)-[*2]->(y))+ RETURN 1", "no length of its own"),
        ("CREATE (a) ((x)-[:R]->(y)){2} (b)", "variable-length"),
        ("MATCH p = shortestPath((a) ((x)-->(y))+ (b)) RETURN p", "shortestPath"),
        ("MATCH (a) ((x)-->(y))+ (b) RETURN x.n", "x"),
    ] {
        let e = db.query("default", q, &Params::new()).expect_err(q).to_string();
        assert!(e.contains(says), "{q}: {e}");
    }
}

/// A node: labelled A, its k, labelled B.
type Node = (bool, i64, bool);
/// A relationship: from, to, weight.
type Edge = (usize, usize, i64);

/// A naive evaluation: every trail (no relationship twice) of 1 to 3 steps from an `s` to a `t`,
/// each step's first node labelled A and its relationship's weight at least that node's k,
/// with its nodes.
fn naive(n: usize, nodes: &[Node], edges: &[Edge]) -> Vec<Vec<Vec<i64>>> {
    fn walk(at: usize, trail: &mut Vec<usize>, path: &mut Vec<usize>, (nodes, edges): (&[Node], &[Edge]), out: &mut Vec<Vec<Vec<i64>>>) {
        if !trail.is_empty() && nodes[at].2 {
            let ids = |v: &[usize]| v.iter().map(|i| *i as i64).collect::<Vec<_>>();
            let k = path.len() - 1;
            out.push(vec![vec![path[0] as i64], vec![at as i64], ids(&path[..k]), ids(&path[1..])]);
        }
        if trail.len() == 3 {
            return;
        }
        for (e, (a, b, w)) in edges.iter().enumerate() {
            if *a == at && !trail.contains(&e) && nodes[at].0 && *w >= nodes[at].1 {
                trail.push(e);
                path.push(*b);
                walk(*b, trail, path, (nodes, edges), out);
                trail.pop();
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    for s in 0..n {
        walk(s, &mut Vec::new(), &mut vec![s], (nodes, edges), &mut out);
    }
    out.sort();
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// The group's matches equal the naive trails, matched from the start (`s` bound by its
    /// property first) and from the labelled end (walked leftwards).
    #[test]
    fn groups_match_what_a_naive_enumeration_does(
        nodes in prop::collection::vec((any::<bool>(), 0i64..3, any::<bool>()), 1..8),
        edges in prop::collection::vec((0usize..8, 0usize..8, 0i64..3), 0..14),
    ) {
        let n = nodes.len();
        let db = Database::in_memory();
        for (i, (a, k, b)) in nodes.iter().enumerate() {
            let labels = format!("{}{}", if *a { ":A" } else { "" }, if *b { ":B" } else { "" });
            rows(&db, &format!("CREATE (n{labels} {{i: {i}, k: {k}}})"));
        }
        let edges: Vec<Edge> = edges.into_iter().map(|(a, b, w)| (a % n, b % n, w)).collect();
        for (a, b, w) in &edges {
            rows(&db, &format!("MATCH (a {{i: {a}}}), (b {{i: {b}}}) CREATE (a)-[:R {{w: {w}}}]->(b)"));
        }
        let want = naive(n, &nodes, &edges);
        let group = "((x:A)-[r:R]->(y) WHERE r.w >= x.k){1,3}";
        let columns = "s.i, t.i, [v IN x | v.i], [v IN y | v.i]";
        // `t:B` is the only label outside the group: the match starts from it, leftwards.
        prop_assert_eq!(table(&db, &format!("MATCH (s) {group} (t:B) RETURN {columns}")), want.clone());
        let mut from_start = Vec::new();
        for s in 0..n {
            from_start.extend(table(&db, &format!("MATCH (s {{i: {s}}}) {group} (t) WHERE t:B RETURN {columns}")));
        }
        from_start.sort();
        prop_assert_eq!(from_start, want);
    }
}

/// The naive trails for the group `((x:A)-[r:R]->(y)-[s:S]->(z) WHERE s.w >= r.w){1,2}` from
/// each node: (start, end, each repetition's x, z, and s's weight).
fn naive_pairs(n: usize, labelled: &[bool], edges: &[(usize, usize, usize, i64)]) -> Vec<Vec<Vec<i64>>> {
    let mut out = Vec::new();
    // (node, trail of edge indexes)
    let mut stack: Vec<(usize, Vec<usize>)> = (0..n).map(|s| (s, Vec::new())).collect();
    while let Some((at, trail)) = stack.pop() {
        if !trail.is_empty() && trail.len() % 2 == 0 {
            let start = edges[trail[0]].0 as i64;
            let reps = trail.len() / 2;
            let xs: Vec<i64> = (0..reps).map(|i| edges[trail[2 * i]].0 as i64).collect();
            let zs: Vec<i64> = (0..reps).map(|i| edges[trail[2 * i + 1]].1 as i64).collect();
            let ws: Vec<i64> = (0..reps).map(|i| edges[trail[2 * i + 1]].3).collect();
            out.push(vec![vec![start], vec![at as i64], xs, zs, ws]);
        }
        if trail.len() == 4 {
            continue;
        }
        let j = trail.len() % 2;
        for (e, (a, b, t, w)) in edges.iter().enumerate() {
            let ok = *a == at
                && *t == j
                && !trail.contains(&e)
                && (j == 1 || labelled[at])
                && (j == 0 || *w >= edges[*trail.last().unwrap_or(&e)].3);
            if ok {
                let mut next = trail.clone();
                next.push(e);
                stack.push((*b, next));
            }
        }
    }
    out.sort();
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// A group of two relationships (R then S, the second no lighter than the first) matches the
    /// naive trails of whole repetitions.
    #[test]
    fn groups_of_two_relationships_match_a_naive_enumeration(
        labelled in prop::collection::vec(any::<bool>(), 1..7),
        edges in prop::collection::vec((0usize..7, 0usize..7, 0usize..2, 0i64..3), 0..14),
    ) {
        let n = labelled.len();
        let db = Database::in_memory();
        for (i, a) in labelled.iter().enumerate() {
            rows(&db, &format!("CREATE (n{} {{i: {i}}})", if *a { ":A" } else { "" }));
        }
        let edges: Vec<(usize, usize, usize, i64)> = edges.into_iter().map(|(a, b, t, w)| (a % n, b % n, t, w)).collect();
        for (a, b, t, w) in &edges {
            let ty = ["R", "S"][*t];
            rows(&db, &format!("MATCH (a {{i: {a}}}), (b {{i: {b}}}) CREATE (a)-[:{ty} {{w: {w}}}]->(b)"));
        }
        let got = table(
            &db,
            "MATCH (p) ((x:A)-[r:R]->(y)-[s:S]->(z) WHERE s.w >= r.w){1,2} (q) \
             RETURN p.i, q.i, [v IN x | v.i], [v IN z | v.i], [e IN s | e.w]",
        );
        prop_assert_eq!(got, naive_pairs(n, &labelled, &edges));
    }
}
