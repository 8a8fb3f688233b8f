//! Forms newer Cypher (Neo4j 5, GQL) brought that programs and models write: type predicates
//! (`IS :: INTEGER`) and `valueType()`, `OPTIONAL CALL`, `FINISH`, `OFFSET`, quantified
//! relationships (`-[:R]->{1,3}`), `btrim` and trims of given characters, `normalize`.

use engram::{Database, Params, QueryValue};
use proptest::prelude::*;

fn rows(db: &Database, text: &str) -> Vec<Vec<QueryValue>> {
    db.query("default", text, &Params::new()).unwrap_or_else(|e| panic!("{text}: {e}")).rows
}

fn one(db: &Database, text: &str) -> QueryValue {
    let r = rows(db, text);
    assert_eq!(r.len(), 1, "{text}: {r:?}");
    r[0][0].clone()
}

fn s(v: &str) -> QueryValue {
    QueryValue::String(v.to_owned())
}

#[test]
fn type_predicates_and_value_types() {
    let db = Database::in_memory();
    rows(&db, "CREATE (:P {i: 1})-[:R]->(:P {i: 2})");
    let t = QueryValue::Bool(true);
    let f = QueryValue::Bool(false);
    for (q, want) in [
        ("RETURN 1 IS :: INTEGER", t.clone()),
        ("RETURN 1 IS :: INTEGER NOT NULL", t.clone()),
        ("RETURN null IS :: INTEGER", t.clone()),
        ("RETURN null IS :: INTEGER NOT NULL", f.clone()),
        ("RETURN 1.0 IS :: INTEGER", f.clone()),
        ("RETURN 'x' IS NOT :: STRING", f.clone()),
        ("RETURN 'x' :: STRING", t.clone()),
        ("RETURN 1 IS TYPED INT", t.clone()),
        ("RETURN 2.5 IS :: INTEGER | FLOAT", t.clone()),
        ("RETURN 'a' IS :: ANY<INTEGER | FLOAT>", f.clone()),
        ("RETURN [1, 2] IS :: LIST<INTEGER>", t.clone()),
        ("RETURN [1, 'a'] IS :: LIST<INTEGER>", f.clone()),
        ("RETURN [1, 'a'] IS :: LIST<INTEGER | STRING>", t.clone()),
        ("RETURN [1, null] IS :: LIST<INTEGER NOT NULL>", f.clone()),
        ("RETURN [] IS :: LIST<NOTHING>", t.clone()),
        ("RETURN [[1]] IS :: LIST<LIST<INTEGER>>", t.clone()),
        ("RETURN [1, [2]] IS :: PROPERTY VALUE", f.clone()),
        ("RETURN [1, 2] IS :: PROPERTY VALUE", t.clone()),
        ("RETURN {a: 1} IS :: MAP", t.clone()),
        ("RETURN date('2024-01-01') IS :: ANY NOT NULL AND duration('P1D') IS :: ANY VALUE", t.clone()),
        ("RETURN null IS :: NULL", t.clone()),
        ("RETURN 1 IS :: NULL", f.clone()),
        ("RETURN null IS :: NOTHING", f.clone()),
        ("RETURN date('2024-01-01') IS :: DATE", t.clone()),
        ("RETURN datetime('2024-01-01T00:00[Europe/Paris]') IS :: TIMESTAMP WITH TIME ZONE", t.clone()),
        ("RETURN localtime('10:00') IS :: TIME WITHOUT TIME ZONE", t.clone()),
        ("RETURN time('10:00Z') IS :: ZONED TIME", t.clone()),
        ("RETURN duration('P1D') IS :: DURATION", t.clone()),
        ("MATCH (a)-[r]->(b) RETURN a IS :: NODE AND r IS :: RELATIONSHIP AND NOT a IS :: RELATIONSHIP", t.clone()),
        ("MATCH p = ()-->() RETURN p IS :: PATH", t.clone()),
        ("RETURN valueType(1)", s("INTEGER NOT NULL")),
        ("RETURN valueType(null)", s("NULL")),
        ("RETURN valueType(1.5)", s("FLOAT NOT NULL")),
        ("RETURN valueType([1, null])", s("LIST<INTEGER> NOT NULL")),
        ("RETURN valueType([])", s("LIST<NOTHING> NOT NULL")),
        ("RETURN valueType([null])", s("LIST<NULL> NOT NULL")),
        ("RETURN valueType([1, 'a'])", s("LIST<STRING NOT NULL | INTEGER NOT NULL> NOT NULL")),
        ("RETURN valueType(datetime('2024-01-01T00:00Z'))", s("ZONED DATETIME NOT NULL")),
        ("MATCH (a)-[r]->() RETURN valueType(a) + ',' + valueType(r)", s("NODE NOT NULL,RELATIONSHIP NOT NULL")),
        // A comprehension's `|` ends its predicate; a union there is written `ANY<…>`.
        ("RETURN [x IN [1, 'a', 2.0] WHERE x IS :: INTEGER | x]", QueryValue::List(vec![QueryValue::Int(1)])),
        (
            "RETURN [x IN [1, 'a', 2.0] WHERE x :: ANY<INTEGER | FLOAT> | x]",
            QueryValue::List(vec![QueryValue::Int(1), QueryValue::Float(2.0)]),
        ),
        ("RETURN size([x IN [1, 'a', null] WHERE x IS NOT :: STRING NOT NULL])", QueryValue::Int(2)),
    ] {
        assert_eq!(one(&db, q), want, "{q}");
    }
    for (q, says) in [
        ("RETURN 1 IS :: INTEGR", "expected a type such as INTEGER"),
        ("RETURN 1 IS :: LIST<INTEGER", "expected '>'"),
        ("RETURN 1 :: ", "expected a type"),
    ] {
        let e = db.query("default", q, &Params::new()).expect_err(q).to_string();
        assert!(e.contains(says), "{q}: {e}");
    }
}

/// Values of every kind the generator below makes, as Cypher text.
fn value_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        any::<bool>().prop_map(|b| b.to_string()),
        (-5i64..5).prop_map(|i| i.to_string()),
        (-5i64..5).prop_map(|i| format!("{i}.5")),
        "[a-c]{0,2}".prop_map(|s| format!("'{s}'")),
        Just("date('2024-05-06')".to_owned()),
        Just("duration('PT1S')".to_owned()),
        Just("{k: 1}".to_owned()),
    ];
    leaf.prop_recursive(2, 8, 4, |inner| prop::collection::vec(inner, 0..4).prop_map(|items| format!("[{}]", items.join(", "))))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// A value is of the type `valueType()` names for it, of every type that holds that one (its
    /// nullable form, `ANY`), and of a scalar type exactly when its kind says so.
    #[test]
    fn a_value_is_of_its_value_type(v in value_text()) {
        let db = Database::in_memory();
        let QueryValue::String(ty) = one(&db, &format!("RETURN valueType({v})")) else { panic!("a string") };
        prop_assert_eq!(one(&db, &format!("RETURN {v} IS :: {ty}")), QueryValue::Bool(true), "{} :: {}", v, ty);
        let nullable = ty.strip_suffix(" NOT NULL").unwrap_or(&ty);
        prop_assert_eq!(one(&db, &format!("RETURN {v} IS :: {nullable}")), QueryValue::Bool(true));
        prop_assert_eq!(one(&db, &format!("RETURN {v} IS :: ANY")), QueryValue::Bool(true));
        let kind = one(&db, &format!("RETURN CASE WHEN {v} IS NULL THEN 'NULL' ELSE typeOf({v}) END"));
        for (name, typeof_name) in [("INTEGER", "Integer"), ("FLOAT", "Float"), ("STRING", "String"), ("BOOLEAN", "Boolean"), ("MAP", "Map")] {
            let is = one(&db, &format!("RETURN {v} IS :: {name} NOT NULL"));
            prop_assert_eq!(is, QueryValue::Bool(kind == s(typeof_name)), "{} :: {} NOT NULL ({:?})", v, name, kind);
        }
    }
}

#[test]
fn optional_call_finish_and_offset() {
    let db = Database::in_memory();
    rows(&db, "CREATE (:P {i: 1})-[:R]->(:P {i: 2}), (:P {i: 3})");
    let ints = |q: &str| -> Vec<Vec<QueryValue>> { rows(&db, q) };
    let (i, n) = (QueryValue::Int, QueryValue::Null);
    assert_eq!(
        ints("MATCH (p:P) OPTIONAL CALL (p) { MATCH (p)-[:R]->(q) RETURN q.i AS next } RETURN p.i, next ORDER BY p.i"),
        vec![vec![i(1), i(2)], vec![i(2), n.clone()], vec![i(3), n.clone()]]
    );
    assert_eq!(ints("MATCH (p:P) CALL (p) { MATCH (p)-[:R]->(q) RETURN q.i AS next } RETURN p.i, next"), vec![vec![i(1), i(2)]]);
    assert_eq!(
        ints("UNWIND ['P', 'Q'] AS l OPTIONAL CALL db.labels() YIELD label WHERE label = l RETURN l, label"),
        vec![vec![s("P"), s("P")], vec![s("Q"), n.clone()]]
    );
    // A subquery that writes, optional: rows it writes nothing for go on.
    assert_eq!(
        ints("UNWIND [1, 2] AS x OPTIONAL CALL (x) { WITH x WHERE x > 1 CREATE (t:T {x: x}) RETURN t.x AS made } RETURN x, made"),
        vec![vec![i(1), n.clone()], vec![i(2), i(2)]]
    );
    assert_eq!(one(&db, "MATCH (t:T) RETURN count(t)"), i(1));
    // FINISH: the query runs (and writes), nothing is returned.
    let r = db.query("default", "UNWIND range(1, 3) AS x CREATE (:F {x: x}) FINISH", &Params::new()).expect("runs");
    assert!(r.rows.is_empty() && r.columns.is_empty(), "{r:?}");
    assert_eq!(r.stats.nodes_created, 3);
    assert!(rows(&db, "MATCH (n) WITH n FINISH").is_empty());
    assert!(db.query("default", "MATCH (n) FINISH RETURN n", &Params::new()).is_err());
    // OFFSET is SKIP.
    assert_eq!(ints("UNWIND range(1, 5) AS x RETURN x ORDER BY x OFFSET 2 LIMIT 2"), vec![vec![i(3)], vec![i(4)]]);
    assert_eq!(
        ints("UNWIND range(1, 5) AS x WITH x ORDER BY x DESC OFFSET 3 RETURN collect(x)"),
        vec![vec![QueryValue::List(vec![i(2), i(1)])]]
    );
}

/// A quantifier after a relationship pattern is its variable length: the same rows as `*m..n`.
#[test]
fn quantified_relationships_are_variable_lengths() {
    let db = Database::in_memory();
    rows(&db, "CREATE (a:N {i: 0})-[:R]->(:N {i: 1})-[:R]->(:N {i: 2})-[:R]->(:N {i: 3}), (a)-[:S]->(:N {i: 9})");
    let ends = |q: &str| -> Vec<Vec<QueryValue>> { rows(&db, &format!("MATCH (a:N {{i: 0}}){q}(b) RETURN b.i ORDER BY b.i")) };
    for (quantified, starred) in [
        ("-[:R]->{1,2}", "-[:R*1..2]->"),
        ("-[:R]->{2}", "-[:R*2]->"),
        ("-[:R]->{2,}", "-[:R*2..]->"),
        ("-[:R]->{,2}", "-[:R*0..2]->"),
        ("-[:R]->+", "-[:R*1..]->"),
        ("-[:R]->*", "-[:R*0..]->"),
        ("-->{1,3}", "-[*1..3]->"),
        ("<-[:R]-{1,2}", "<-[:R*1..2]-"),
    ] {
        let (a, b) = (ends(quantified), ends(starred));
        assert!(!a.is_empty() || quantified.starts_with('<'), "{quantified}");
        assert_eq!(a, b, "{quantified} against {starred}");
    }
    assert_eq!(rows(&db, "MATCH (:N {i: 0})-[r:R]->{3}(b) RETURN size(r), b.i"), vec![vec![QueryValue::Int(3), QueryValue::Int(3)]]);
    for (q, says) in [
        ("MATCH (a)-[:R*1..2]->{1,2}(b) RETURN b", "one length"),
        ("MATCH (a)-[:R]->{3,1}(b) RETURN b", "the wrong way round"),
        ("MATCH (a)-[:R]->{}(b) RETURN b", "a number in the quantifier"),
    ] {
        let e = db.query("default", q, &Params::new()).expect_err(q).to_string();
        assert!(e.contains(says), "{q}: {e}");
    }
}

#[test]
fn trims_and_normal_forms() {
    let db = Database::in_memory();
    for (q, want) in [
        ("RETURN btrim('  a  ')", s("a")),
        ("RETURN btrim('xxhixx', 'x')", s("hi")),
        ("RETURN ltrim('xyxhi', 'xy')", s("hi")),
        ("RETURN rtrim('hi..', '.')", s("hi")),
        ("RETURN ltrim('  a ')", s("a ")),
        ("RETURN btrim('a', null)", QueryValue::Null),
        ("RETURN normalize('e' + '\\u0301') = '\\u00e9'", QueryValue::Bool(true)),
        ("RETURN normalize('\\ufb01', NFKC)", s("fi")),
        ("RETURN size(normalize('\\u00e9', 'nfd'))", QueryValue::Int(2)),
    ] {
        assert_eq!(one(&db, q), want, "{q}");
    }
    let e = db.query("default", "RETURN normalize('a', 'NFX')", &Params::new()).expect_err("a bad form").to_string();
    assert!(e.contains("NFC, NFD, NFKC or NFKD"), "{e}");
}

#[test]
fn concatenation_with_double_bars() {
    let db = Database::in_memory();
    assert_eq!(one(&db, "RETURN 'Alpha' || 'bet' || '!'"), s("Alphabet!"));
    assert_eq!(one(&db, "RETURN [1, 2] || [3] || []"), QueryValue::List(vec![QueryValue::Int(1), QueryValue::Int(2), QueryValue::Int(3)]));
    assert_eq!(one(&db, "RETURN 'a' || null"), QueryValue::Null);
    // As `+` binds: `1 + 2` first, then the string; a comprehension's `|` is still its own.
    assert_eq!(one(&db, "RETURN toString(1 + 2) || 'x'"), s("3x"));
    assert_eq!(one(&db, "RETURN [x IN ['a', 'b'] | x || x]"), QueryValue::List(vec![s("aa"), s("bb")]));
    assert_eq!(one(&db, "RETURN reduce(acc = '', x IN ['p', 'q'] | acc || x)"), s("pq"));
    let e = db.query("default", "RETURN 'a' || 1", &Params::new()).unwrap_err().to_string();
    assert!(e.contains("|| concatenates two strings or two lists, got a string and an integer"), "{e}");
}

/// `ORDER BY … NULLS FIRST | NULLS LAST` (GQL): the default puts nulls last ascending and first
/// descending; either may be asked for, per key, on a sort, a top-k (`LIMIT`) and an index's order.
#[test]
fn nulls_first_or_last() {
    let db = Database::in_memory();
    rows(&db, "UNWIND [3, null, 1, 2, null] AS k CREATE (:N {k: k, name: coalesce(toString(k), 'none')})");
    let ks = |q: &str| -> Vec<QueryValue> { rows(&db, q).into_iter().map(|r| r[0].clone()).collect() };
    let (i, null) = (QueryValue::Int, QueryValue::Null);
    for indexed in [false, true] {
        assert_eq!(ks("MATCH (n:N) RETURN n.k ORDER BY n.k"), [i(1), i(2), i(3), null.clone(), null.clone()], "indexed: {indexed}");
        assert_eq!(ks("MATCH (n:N) RETURN n.k ORDER BY n.k DESC"), [null.clone(), null.clone(), i(3), i(2), i(1)]);
        assert_eq!(ks("MATCH (n:N) RETURN n.k ORDER BY n.k NULLS FIRST"), [null.clone(), null.clone(), i(1), i(2), i(3)]);
        assert_eq!(ks("MATCH (n:N) RETURN n.k ORDER BY n.k DESC NULLS LAST"), [i(3), i(2), i(1), null.clone(), null.clone()]);
        assert_eq!(ks("MATCH (n:N) RETURN n.k ORDER BY n.k ASC NULLS LAST LIMIT 2"), [i(1), i(2)]);
        assert_eq!(ks("MATCH (n:N) RETURN n.k ORDER BY n.k NULLS FIRST LIMIT 3"), [null.clone(), null.clone(), i(1)]);
        assert_eq!(
            ks("MATCH (n:N) WHERE n.k >= 2 OR n.k IS NULL RETURN n.k ORDER BY n.k DESC NULLS LAST SKIP 1 LIMIT 2"),
            [i(2), null.clone()]
        );
        if !indexed {
            rows(&db, "CREATE INDEX FOR (n:N) ON (n.k)");
        }
    }
    assert_eq!(
        ks("MATCH (n:N) WITH n ORDER BY n.k IS NULL, n.k DESC NULLS FIRST RETURN collect(n.name)"),
        [QueryValue::List(vec![s("3"), s("2"), s("1"), s("none"), s("none")])]
    );
    let e = db.query("default", "MATCH (n) RETURN n ORDER BY n.k NULLS MIDDLE", &Params::new()).unwrap_err().to_string();
    assert!(e.contains("expected FIRST or LAST after NULLS at 1:39, found MIDDLE"), "{e}");
}

/// An `ORDER BY … LIMIT` read in the index's order over a range finds no null, so `NULLS FIRST`
/// changes nothing there: the same rows as a sort of all.
#[test]
fn nulls_first_over_an_ordered_range_read() {
    let db = Database::in_memory();
    rows(&db, "UNWIND range(1, 50) AS k CREATE (:N {k: CASE WHEN k % 7 = 0 THEN null ELSE k END})");
    rows(&db, "CREATE INDEX FOR (n:N) ON (n.k)");
    let q = "MATCH (n:N) WHERE n.k > 10 RETURN n.k ORDER BY n.k DESC NULLS FIRST LIMIT 3";
    let plan = db.query("default", &format!("EXPLAIN {q}"), &Params::new()).unwrap().plan.unwrap();
    assert!(plan.contains("in order DESC"), "{plan}");
    let got: Vec<QueryValue> = rows(&db, q).into_iter().map(|r| r[0].clone()).collect();
    assert_eq!(got, [QueryValue::Int(50), QueryValue::Int(48), QueryValue::Int(47)]);
}
