//! Label expressions (`:A|B`, `:A&B`, `:!A`, `:%`, parentheses) in node patterns and in `WHERE`,
//! and type expressions in relationship patterns (`[:!A]`, `[:(A|B)&!C]`), against a naive
//! evaluation on random graphs; the forms that stay refused.

use engram::{Database, Params, QueryValue};
use proptest::prelude::*;

fn rows(db: &Database, text: &str) -> Vec<Vec<QueryValue>> {
    db.query("default", text, &Params::new()).unwrap_or_else(|e| panic!("{text}: {e}")).rows
}

fn ints(db: &Database, text: &str) -> Vec<i64> {
    rows(db, text)
        .into_iter()
        .map(|r| match r[0] {
            QueryValue::Int(i) => i,
            ref other => panic!("{text}: {other:?}"),
        })
        .collect()
}

const LABELS: [&str; 3] = ["A", "B", "C"];

/// A label expression and its naive meaning.
#[derive(Clone, Debug)]
enum L {
    Name(usize),
    Any,
    Not(Box<L>),
    And(Vec<L>),
    Or(Vec<L>),
}

impl L {
    fn text(&self) -> String {
        match self {
            L::Name(i) => LABELS[*i].to_owned(),
            L::Any => "%".to_owned(),
            L::Not(e) => format!("!({})", e.text()),
            L::And(items) => items.iter().map(|e| format!("({})", e.text())).collect::<Vec<_>>().join("&"),
            L::Or(items) => items.iter().map(|e| format!("({})", e.text())).collect::<Vec<_>>().join("|"),
        }
    }

    fn holds(&self, labels: [bool; 3]) -> bool {
        match self {
            L::Name(i) => labels[*i],
            L::Any => labels.iter().any(|b| *b),
            L::Not(e) => !e.holds(labels),
            L::And(items) => items.iter().all(|e| e.holds(labels)),
            L::Or(items) => items.iter().any(|e| e.holds(labels)),
        }
    }
}

fn label_expr() -> impl Strategy<Value = L> {
    let leaf = prop_oneof![(0usize..3).prop_map(L::Name), Just(L::Any)];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| L::Not(Box::new(e))),
            prop::collection::vec(inner.clone(), 2..4).prop_map(L::And),
            prop::collection::vec(inner, 2..4).prop_map(L::Or),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// A node pattern's expression, the same in `WHERE`, at the far end of an expansion and in a
    /// comprehension (parenthesised there), all select the nodes a naive evaluation does.
    #[test]
    fn label_expressions_select_what_a_naive_evaluation_does(
        nodes in prop::collection::vec(any::<[bool; 3]>(), 1..24),
        edges in prop::collection::vec((0usize..24, 0usize..24), 0..30),
        e in label_expr(),
    ) {
        let db = Database::in_memory();
        for (i, labels) in nodes.iter().enumerate() {
            let spec: String = LABELS.iter().zip(labels).filter(|(_, on)| **on).map(|(l, _)| [":", l].concat()).collect();
            rows(&db, &format!("CREATE (n{spec} {{i: {i}}})"));
        }
        let edges: Vec<(usize, usize)> = edges.into_iter().map(|(a, b)| (a % nodes.len(), b % nodes.len())).collect();
        for (a, b) in &edges {
            rows(&db, &format!("MATCH (a {{i: {a}}}), (b {{i: {b}}}) CREATE (a)-[:R]->(b)"));
        }
        let text = e.text();
        let want: Vec<i64> = (0..nodes.len()).filter(|i| e.holds(nodes[*i])).map(|i| i as i64).collect();
        prop_assert_eq!(ints(&db, &format!("MATCH (n:{text}) RETURN n.i ORDER BY n.i")), want.clone(), "pattern :{}", text);
        prop_assert_eq!(ints(&db, &format!("MATCH (n) WHERE n:{text} RETURN n.i ORDER BY n.i")), want.clone(), "WHERE n:{}", text);
        prop_assert_eq!(ints(&db, &format!("MATCH (n) WHERE NOT n:{text} RETURN count(n)")), vec![(nodes.len() - want.len()) as i64]);
        prop_assert_eq!(ints(&db, &format!("MATCH (n:{text}) RETURN count(n)")), vec![want.len() as i64]);
        prop_assert_eq!(
            ints(&db, &format!("MATCH (n) WITH collect(n) AS all RETURN size([x IN all WHERE x:({text}) | x.i])")),
            vec![want.len() as i64]
        );
        let mut reached: Vec<i64> = edges.iter().filter(|(_, b)| e.holds(nodes[*b])).map(|(_, b)| *b as i64).collect();
        reached.sort_unstable();
        prop_assert_eq!(ints(&db, &format!("MATCH ()-[:R]->(m:{text}) RETURN m.i ORDER BY m.i")), reached.clone(), "expand to :{}", text);
        prop_assert_eq!(ints(&db, &format!("MATCH (m:{text})<-[:R]-() RETURN m.i ORDER BY m.i")), reached, "scan :{}", text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// A relationship pattern's type expression (each relationship has one of A, B, C), the same
    /// test in `WHERE r:…`, and the expression over a variable length (walked breadth first for
    /// `count(DISTINCT b)`, path by path with a named path), select what a naive evaluation does.
    #[test]
    fn type_expressions_select_what_a_naive_evaluation_does(
        n in 1usize..12,
        edges in prop::collection::vec((0usize..12, 0usize..12, 0usize..3), 0..20),
        e in label_expr(),
    ) {
        let db = Database::in_memory();
        for i in 0..n {
            rows(&db, &format!("CREATE ({{i: {i}}})"));
        }
        let edges: Vec<(usize, usize, usize)> = edges.into_iter().map(|(a, b, t)| (a % n, b % n, t)).collect();
        for (k, (a, b, t)) in edges.iter().enumerate() {
            rows(&db, &format!("MATCH (a {{i: {a}}}), (b {{i: {b}}}) CREATE (a)-[:{} {{i: {k}}}]->(b)", LABELS[*t]));
        }
        let passes = |t: usize| e.holds([t == 0, t == 1, t == 2]);
        let text = e.text();
        let want: Vec<i64> = (0..edges.len()).filter(|k| passes(edges[*k].2)).map(|k| k as i64).collect();
        prop_assert_eq!(ints(&db, &format!("MATCH ()-[r:{text}]->() RETURN r.i ORDER BY r.i")), want.clone(), "pattern :{}", text);
        prop_assert_eq!(ints(&db, &format!("MATCH ()-[r]->() WHERE r:{text} RETURN r.i ORDER BY r.i")), want.clone(), "WHERE r:{}", text);
        prop_assert_eq!(ints(&db, &format!("MATCH ()<-[r:{text}]-() RETURN count(r)")), vec![want.len() as i64]);
        // Reached from node 0 by one hop or more over passing relationships (the start too when a
        // cycle leads back to it), and the fewest hops each needs.
        let mut depth: Vec<Option<usize>> = vec![None; n];
        let mut frontier = vec![0usize];
        for d in 1.. {
            let mut next = Vec::new();
            for x in frontier {
                for (a, b, t) in &edges {
                    if *a == x && passes(*t) && depth[*b].is_none() {
                        depth[*b] = Some(d);
                        next.push(*b);
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        let within = |k: usize| -> Vec<i64> { (0..n).filter(|i| depth[*i].is_some_and(|d| d <= k)).map(|i| i as i64).collect() };
        let want = within(usize::MAX);
        prop_assert_eq!(
            ints(&db, &format!("MATCH (a {{i: 0}})-[:{text}*]->(b) RETURN count(DISTINCT b)")),
            vec![want.len() as i64],
            "reach :{}", text
        );
        prop_assert_eq!(
            ints(&db, &format!("MATCH p = (a {{i: 0}})-[:{text}*1..3]->(b) RETURN DISTINCT b.i ORDER BY b.i")),
            within(3),
            "paths :{}", text
        );
    }
}

#[test]
fn type_expression_forms() {
    let db = Database::in_memory();
    rows(&db, "CREATE (a {i: 1})-[:R {i: 1}]->(b {i: 2})-[:S {i: 2}]->(c {i: 3})-[:T {i: 3}]->(a)");
    for (q, want) in [
        ("MATCH ()-[r:!R]->() RETURN r.i ORDER BY r.i", vec![2, 3]),
        ("MATCH ()-[r:R&S]->() RETURN count(r)", vec![0]),
        ("MATCH ()-[r:%]->() RETURN count(r)", vec![3]),
        ("MATCH ()-[r:!%]->() RETURN count(r)", vec![0]),
        ("MATCH ()-[r:(R|S)&!S]->() RETURN r.i", vec![1]),
        ("MATCH ()-[r:!UNKNOWN]->() RETURN count(r)", vec![3]),
        ("MATCH ()-[r:R|:S]->() RETURN r.i ORDER BY r.i", vec![1, 2]),
        ("MATCH ()-[r]->() WHERE r:S|T RETURN r.i ORDER BY r.i", vec![2, 3]),
        ("MATCH ()-[r]->() WHERE r:R:R RETURN r.i", vec![1]),
        ("MATCH ()-[r]->() WHERE r:R:S RETURN count(r)", vec![0]),
        ("MATCH ()-[r]->() WHERE NOT r:!T RETURN r.i", vec![3]),
        ("MATCH (a {i: 1})-[:!T*]->(b) RETURN b.i ORDER BY b.i", vec![2, 3]),
        ("MATCH (a {i: 1})-[:!T]->{1,2}(b) RETURN b.i ORDER BY b.i", vec![2, 3]),
        ("MATCH p = shortestPath((a {i: 1})-[:!R*]-(b {i: 2})) RETURN length(p)", vec![2]),
        ("MATCH (a {i: 1}) RETURN COUNT { (a)-[:!R]-() }", vec![1]),
        ("MATCH (a {i: 1}) RETURN size([(a)-[:!(S|T)]->(x) | x.i])", vec![1]),
    ] {
        assert_eq!(ints(&db, q), want, "{q}");
    }
    let plan = db.query("default", "EXPLAIN MATCH (a)-[:!(R|S)]->(b) RETURN b", &Params::new()).expect("plans").plan.unwrap_or_default();
    assert!(plan.contains("[:!(R|S)]") || plan.contains(":!(R|S)]"), "{plan}");
    for (q, says) in [
        ("CREATE ()-[:!R]->()", "needs exactly one relationship type"),
        ("MERGE ()-[:R&S]->()", "needs exactly one relationship type"),
        ("MATCH ()-[:R&]->() RETURN 1", "expected a relationship type"),
        ("MATCH ()-[:R:S]->() RETURN 1", "expected"),
    ] {
        let e = db.query("default", q, &Params::new()).expect_err(q).to_string();
        assert!(e.contains(says), "{q}: {e}");
    }
    // A lower-case name (as ingest writes) matches in any case, here as in `[:DEPENDS_ON]`.
    rows(&db, "CREATE ({i: 9})-[:depends_on {i: 9}]->({i: 10})");
    assert_eq!(ints(&db, "MATCH ()-[r:!(R|S|T)]->() RETURN r.i"), vec![9]);
    assert_eq!(ints(&db, "MATCH ()-[r:!DEPENDS_ON]->() RETURN count(r)"), vec![3]);
}

#[test]
fn forms_plans_and_refusals() {
    let db = Database::in_memory();
    rows(&db, "CREATE (:A {i: 1}), (:B {i: 2}), (:A:B {i: 3}), (:C {i: 4}), ({i: 5})");
    for (q, want) in [
        ("MATCH (n:A|B) RETURN n.i ORDER BY n.i", vec![1, 2, 3]),
        ("MATCH (n:A&B) RETURN n.i", vec![3]),
        ("MATCH (n:A:B) RETURN n.i", vec![3]),
        ("MATCH (n:!A) RETURN n.i ORDER BY n.i", vec![2, 4, 5]),
        ("MATCH (n:%) RETURN count(n)", vec![4]),
        ("MATCH (n:!%) RETURN n.i", vec![5]),
        ("MATCH (n:(A|C)&!B) RETURN n.i ORDER BY n.i", vec![1, 4]),
        ("MATCH (n:A|:C) RETURN n.i ORDER BY n.i", vec![1, 3, 4]),
        ("MATCH (n) WHERE n:A|C AND n.i > 1 RETURN n.i ORDER BY n.i", vec![3, 4]),
        // In a comprehension `|` ends the predicate: a label test there is one label, or parenthesised.
        ("MATCH (n) WITH collect(n) AS all RETURN [x IN all WHERE x:A | x.i]", vec![]),
    ] {
        if want.is_empty() {
            assert_eq!(rows(&db, q), vec![vec![QueryValue::List(vec![QueryValue::Int(1), QueryValue::Int(3)])]], "{q}");
        } else {
            assert_eq!(ints(&db, q), want, "{q}");
        }
    }
    let plan = |q: &str| db.query("default", &format!("EXPLAIN {q}"), &Params::new()).expect("plans").plan.unwrap_or_default();
    assert!(plan("MATCH (n:A|B) RETURN n").contains("NodeByLabelScan (n:A|B)"), "{}", plan("MATCH (n:A|B) RETURN n"));
    assert!(plan("MATCH (n:!(A|B)) RETURN n").contains("AllNodesScan (n:!(A|B))"), "{}", plan("MATCH (n:!(A|B)) RETURN n"));
    for (q, says) in [
        ("CREATE (n:A|B)", "CREATE gives a node its labels"),
        ("MERGE (n:!A)", "MERGE gives a node its labels"),
        ("MATCH (n:A:!B) RETURN n", "expected a label"),
        ("MATCH (n:A|B:C) RETURN n", "`:` joins labels"),
        ("MATCH (n:A|) RETURN n", "expected a label"),
        ("MATCH (n) WHERE n:A&(B RETURN n", "expected ')'"),
    ] {
        let e = db.query("default", q, &Params::new()).expect_err(q).to_string();
        assert!(e.contains(says), "{q}: {e}");
    }
}
