//! The query language on the engine: reads over entities and claims, checked against hand-made
//! answers and, on random graphs, against the direct API (k-hop, neighbours, closures).

use std::collections::BTreeSet;

use engram::query::{Detail, ErrorType};
use engram::{AddClaim, ClaimState, Database, DeclarePredicate, KHopQuery, Params, QueryValue, WriteBatch};
use proptest::prelude::*;

fn db() -> Database {
    let db = Database::in_memory();
    let mut b = WriteBatch::new("default");
    b.push(engram::Op::DeclarePredicate(DeclarePredicate::new("DEPENDS_ON").transitive()));
    b.upsert_entity("auth", "service", "AuthService")
        .upsert_entity("db", "service", "Postgres")
        .upsert_entity("cache", "service", "Redis")
        .upsert_entity("alice", "person", "Alice")
        .add_claim(AddClaim::new("auth", "DEPENDS_ON", "db").state(ClaimState::Accepted).confidence(0.9).text("auth needs postgres"))
        .add_claim(AddClaim::new("auth", "DEPENDS_ON", "cache").confidence(0.4))
        .add_claim(AddClaim::new("db", "DEPENDS_ON", "cache").confidence(0.7))
        .add_claim(AddClaim::new("alice", "OWNS", "auth").confidence(1.0));
    db.write(&b).expect("writes");
    db
}

fn run_with(db: &Database, text: &str, params: &Params) -> Result<engram::QueryResult, engram::query::QueryError> {
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("workspace");
    ws.query(text, params)
}

fn rows(db: &Database, text: &str) -> Vec<Vec<QueryValue>> {
    run_with(db, text, &Params::new()).unwrap_or_else(|e| panic!("{text}: {e}")).rows
}

/// An in-memory database on a manual clock at 2030-01-01T00:00:00Z, and the clock.
fn clocked() -> (std::sync::Arc<engram::ManualClock>, Database) {
    let clock = std::sync::Arc::new(engram::ManualClock::new(engram::Timestamp::parse("2030-01-01T00:00:00Z").expect("time")));
    let db = Database::with_config(engram::Config { clock: clock.clone(), ..engram::Config::default() });
    (clock, db)
}

fn s(v: &str) -> QueryValue {
    QueryValue::String(v.to_owned())
}

fn i(v: i64) -> QueryValue {
    QueryValue::Int(v)
}

#[test]
fn match_where_return_order() {
    let db = db();
    let got = rows(&db, "MATCH (a:service)-[r:DEPENDS_ON]->(b) WHERE r.confidence > 0.5 RETURN a.name, b.name ORDER BY b.name");
    assert_eq!(got, vec![vec![s("AuthService"), s("Postgres")], vec![s("Postgres"), s("Redis")]]);
    // Incoming, undirected, type alternatives.
    let got = rows(&db, "MATCH (c {id: 'cache'})<-[:DEPENDS_ON]-(x) RETURN x.name ORDER BY x.name");
    assert_eq!(got, vec![vec![s("AuthService")], vec![s("Postgres")]]);
    let got = rows(&db, "MATCH (a {id: 'auth'})-[:OWNS|DEPENDS_ON]-(x) RETURN count(*)");
    assert_eq!(got, vec![vec![i(3)]]);
    // An unknown label or type is an empty result, not an error.
    assert!(rows(&db, "MATCH (n:nothing) RETURN n").is_empty());
    assert!(rows(&db, "MATCH ()-[r:NOTHING]->() RETURN r").is_empty());
}

#[test]
fn aggregation_distinct_skip_limit_unwind_union() {
    let db = db();
    let got = rows(&db, "MATCH (a)-[:DEPENDS_ON]->(b) RETURN a.name AS a, count(b) AS n, collect(b.name) AS bs ORDER BY n DESC, a");
    assert_eq!(got[0][0], s("AuthService"));
    assert_eq!(got[0][1], i(2));
    assert_eq!(got[1], vec![s("Postgres"), i(1), QueryValue::List(vec![s("Redis")])]);
    assert_eq!(rows(&db, "MATCH (n) RETURN count(DISTINCT labels(n))"), vec![vec![i(2)]]);
    assert_eq!(rows(&db, "UNWIND [3, 1, 2] AS x RETURN x ORDER BY x SKIP 1 LIMIT 1"), vec![vec![i(2)]]);
    assert_eq!(rows(&db, "RETURN 1 AS x UNION RETURN 1 AS x"), vec![vec![i(1)]]);
    assert_eq!(rows(&db, "RETURN 1 AS x UNION ALL RETURN 1 AS x").len(), 2);
    assert_eq!(rows(&db, "MATCH (n) WITH count(n) AS c RETURN c * 2 AS d"), vec![vec![i(8)]]);
    // No rows, no keys: one row of empty aggregates.
    assert_eq!(rows(&db, "MATCH (n:nothing) RETURN count(n), collect(n)"), vec![vec![i(0), QueryValue::List(vec![])]]);
}

#[test]
fn optional_match_and_paths() {
    let db = db();
    let got = rows(&db, "MATCH (p:person) OPTIONAL MATCH (p)-[:DEPENDS_ON]->(x) RETURN p.name, x");
    assert_eq!(got, vec![vec![s("Alice"), QueryValue::Null]]);
    let got =
        rows(&db, "MATCH p = (a {id: 'alice'})-[:OWNS]->()-[:DEPENDS_ON*1..2]->(c {id: 'cache'}) RETURN length(p) ORDER BY length(p)");
    assert_eq!(got, vec![vec![i(2)], vec![i(3)]]);
    let got = rows(&db, "MATCH p = (a {id: 'auth'})-[:DEPENDS_ON]->(b {id: 'db'}) RETURN nodes(p)[1].name, relationships(p)[0].text");
    assert_eq!(got, vec![vec![s("Postgres"), s("auth needs postgres")]]);
    // A pattern as a predicate.
    let got = rows(&db, "MATCH (n:service) WHERE NOT (n)-[:DEPENDS_ON]->() RETURN n.name");
    assert_eq!(got, vec![vec![s("Redis")]]);
}

#[test]
fn expressions_follow_cypher() {
    let db = db();
    let got = rows(
        &db,
        "RETURN null AND false AS a, null OR true AS b, 1 = 1.0 AS c, [1, 2] + 3 AS d, 'x' + 1 AS e, \
         [x IN range(1, 5) WHERE x % 2 = 1 | x * 10] AS f, coalesce(null, 'z') AS g, toUpper('ab') AS h",
    );
    assert_eq!(
        got,
        vec![vec![
            QueryValue::Bool(false),
            QueryValue::Bool(true),
            QueryValue::Bool(true),
            QueryValue::List(vec![i(1), i(2), i(3)]),
            s("x1"),
            QueryValue::List(vec![i(10), i(30), i(50)]),
            s("z"),
            s("AB"),
        ]]
    );
    let got = rows(&db, "RETURN CASE WHEN 1 > 2 THEN 'a' ELSE 'b' END, [1,2,3][-1], [1,2,3][1..], size('héllo'), 7 / 2, 7.0 / 2");
    assert_eq!(got, vec![vec![s("b"), i(3), QueryValue::List(vec![i(2), i(3)]), i(5), i(3), QueryValue::Float(3.5)]]);
}

#[test]
fn parameters_procedures_and_errors() {
    let db = db();
    let mut params = Params::new();
    params.insert("s".into(), s("auth"));
    let got = run_with(&db, "MATCH (a {id: $s})--(b) RETURN count(DISTINCT b)", &params).expect("runs");
    assert_eq!(got.rows, vec![vec![i(3)]]);
    // FalkorDB's header binds parameters; positions in errors still count from the whole text.
    let got = run_with(&db, "CYPHER s=\"auth\" n=1 MATCH (a {id: $s})--(b) RETURN count(DISTINCT b) + $n", &Params::new()).expect("runs");
    assert_eq!(got.rows, vec![vec![i(4)]]);
    let err = run_with(&db, "CYPHER s=\"auth\" MATCH (a) RETURN b", &Params::new()).expect_err("undefined");
    assert_eq!(err.column(), Some(34));
    let err = run_with(&db, "MATCH (a {id: $missing}) RETURN a", &Params::new()).expect_err("missing parameter");
    assert_eq!(err.kind, ErrorType::ParameterMissing);
    let err = run_with(&db, "MATCH (a) RETURN b", &Params::new()).expect_err("undefined");
    assert_eq!((err.detail, err.line(), err.column()), (Detail::UndefinedVariable, Some(1), Some(18)));
    let err = run_with(&db, "CREATE (n)", &Params::new()).expect_err("writes are not supported yet");
    assert_eq!(err.detail, Detail::Unsupported);
    let labels = rows(&db, "CALL db.labels() YIELD label RETURN label ORDER BY label");
    assert_eq!(labels, vec![vec![s("person")], vec![s("service")]]);
    let got = rows(&db, "CALL engram.neighbors('auth', {direction: 'out'}) YIELD neighbor RETURN neighbor.name ORDER BY neighbor.name");
    assert_eq!(got, vec![vec![s("Postgres")], vec![s("Redis")]]);
    let got = rows(&db, "CALL engram.ancestors('auth', 'DEPENDS_ON') YIELD node, depth RETURN node.name, depth ORDER BY node.name");
    assert!(got.contains(&vec![s("Redis"), i(1)]), "{got:?}");
    let explain = run_with(&db, "EXPLAIN MATCH (a:service)-->(b) RETURN b", &Params::new()).expect("explains");
    assert!(explain.rows.is_empty());
    let plan = explain.plan.expect("a plan");
    assert!(plan.contains("NodeByLabelScan") && plan.contains("Expand"), "{plan}");
    let profile = run_with(&db, "PROFILE MATCH (a:service)-->(b) RETURN b", &Params::new()).expect("profiles");
    assert_eq!(profile.rows.len(), 3);
    assert!(profile.plan.expect("a plan").contains("rows 3"));
}

/// A string parameter is borrowed from the caller's `Params` (a seek by external id reads it as
/// it is) and made a value where an expression needs one: both uses in one query agree, on a
/// read, on rows many operators share, and on a write (whose commit outlives the caller's map).
#[test]
fn a_string_parameter_is_read_where_it_is_given() {
    let db = db();
    let params: Params = [("s".to_owned(), s("auth")), ("n".to_owned(), i(3))].into();
    let got = run_with(&db, "MATCH (a {id: $s}) RETURN a.name, $s + '!', $s = a.id", &params).expect("reads");
    assert_eq!(got.rows, vec![vec![s("AuthService"), s("auth!"), QueryValue::Bool(true)]]);
    // Not a string: no external id matches it, as with the literal.
    let by_int = run_with(&db, "MATCH (a {id: $n}) RETURN a", &params).expect("reads");
    assert_eq!(by_int.rows, rows(&db, "MATCH (a {id: 3}) RETURN a"));
    assert!(by_int.rows.is_empty());
    // The caller's value wins over the header's.
    let got = run_with(&db, "CYPHER s=\"db\" MATCH (a {id: $s}) RETURN a.name", &params).expect("reads");
    assert_eq!(got.rows, vec![vec![s("AuthService")]]);
    // Many rows read it at once (the value is made once, whoever asks first).
    let got = run_with(&db, "UNWIND range(1, 50000) AS x WITH x WHERE $s + toString(x) STARTS WITH 'auth1' RETURN count(x)", &params)
        .expect("reads");
    assert_eq!(got.rows, vec![vec![i(11_111)]]);
    // A write: the seek and the property read the same text.
    let wrote =
        db.query("default", "MATCH (a {id: $s}) CREATE (a)-[:NAMED]->(:label {text: $s}) RETURN count(*)", &params).expect("writes");
    assert_eq!((wrote.rows, wrote.stats.nodes_created), (vec![vec![i(1)]], 1));
    assert_eq!(rows(&db, "MATCH ({id: 'auth'})-[:NAMED]->(l) RETURN l.text"), vec![vec![s("auth")]]);
}

/// A last projection that only copies slots is left out of the plan (the columns read the slots
/// it copied from): the answers stay those of the copies, swapped names, repeats, UNION, writes
/// and PROFILE included.
#[test]
fn a_projection_of_slots_alone_answers_from_them() {
    let db = db();
    assert_eq!(rows(&db, "WITH 1 AS a, 2 AS b RETURN b AS a, a AS b, a AS c"), vec![vec![i(2), i(1), i(1)]]);
    assert_eq!(
        rows(&db, "MATCH (a {id: 'auth'})-[:DEPENDS_ON*]->(b) RETURN count(DISTINCT b) AS n, count(DISTINCT b) AS m"),
        vec![vec![i(2), i(2)]]
    );
    let got = rows(&db, "MATCH (a:service) RETURN a.name AS x UNION MATCH (p:person) WITH p.name AS y RETURN y AS x");
    let names: BTreeSet<String> = got.iter().map(|r| format!("{:?}", r[0])).collect();
    assert_eq!(names.len(), 4, "{got:?}");
    let wrote = db.query("default", "CREATE (n:tmp {v: 7}) WITH n, n.v AS v RETURN v, n.v AS w", &Params::new()).expect("writes");
    assert_eq!(wrote.rows, vec![vec![i(7), i(7)]]);
    let profiled = run_with(&db, "PROFILE MATCH (a:service) RETURN a", &Params::new()).expect("profiles");
    assert_eq!(profiled.rows.len(), 3);
    assert!(!profiled.plan.expect("a plan").contains("Project"));
}

/// A text run again on the same thread takes its plan from the thread's latest, borrowed: each
/// run still binds its own parameters, reports a missing one, and refuses a write on a view.
#[test]
fn a_repeated_text_binds_each_run_afresh() {
    let db = db();
    let snap = db.snapshot();
    let view = snap.workspace("default").expect("default");
    let text = "MATCH (a {id: $s})-[:DEPENDS_ON*]->(b) RETURN count(DISTINCT b) AS n";
    for (id, n) in [("auth", 2), ("db", 1), ("cache", 0), ("auth", 2), ("nobody", 0)] {
        let params: Params = [("s".to_owned(), s(id))].into();
        assert_eq!(view.query(text, &params).expect("reads").rows, vec![vec![i(n)]], "{id}");
        let mut bound = engram::Bindings::new();
        bound.set_str("s", id);
        assert_eq!(view.query_bound(text, &bound).expect("reads").rows, vec![vec![i(n)]], "{id}");
    }
    for _ in 0..2 {
        let err = view.query(text, &Params::new()).expect_err("no $s");
        assert_eq!(err.detail, Detail::MissingParameter, "{err}");
        let err = view.query("CREATE (:x)", &Params::new()).expect_err("a view reads");
        assert!(err.to_string().contains("writes"), "{err}");
        // A header's value, and the caller's over it.
        let got = view.query("CYPHER s='db' RETURN $s", &Params::new()).expect("reads");
        assert_eq!(got.rows, vec![vec![s("db")]]);
        let got = view.query("CYPHER s='db' RETURN $s", &[("s".to_owned(), s("auth"))].into()).expect("reads");
        assert_eq!(got.rows, vec![vec![s("auth")]]);
    }
}

/// Parameters bound ahead (`Bindings`, what the Python extension builds) give the results,
/// errors and access records `Params` give, on reads, writes, headers and index statements.
#[test]
fn bindings_answer_as_params_do() {
    let db = db();
    let params: Params =
        [("s".to_owned(), s("auth")), ("n".to_owned(), i(2)), ("l".to_owned(), QueryValue::List(vec![i(1), s("x")]))].into();
    let mut bound = engram::Bindings::new();
    bound.set_str("s", "auth");
    bound.set("n", &i(2)).expect("an integer binds");
    bound.set("l", &QueryValue::List(vec![i(1), s("x")])).expect("a list binds");
    assert_eq!((bound.len(), bound.to_params()), (3, params.clone()));
    for text in [
        "MATCH (a {id: $s})--(b) RETURN count(DISTINCT b) + $n, $l",
        "CYPHER n=5 MATCH (a {id: $s})--(b) RETURN count(DISTINCT b) + $n, $l",
        "CYPHER m=5 MATCH (a {id: $s})--(b) RETURN count(DISTINCT b) + $m, $l",
        "MATCH (a {id: $s}) RETURN a.name, size($l) AS k",
    ] {
        assert_eq!(db.query_bound("default", text, &bound).expect(text), db.query("default", text, &params).expect(text), "{text}");
    }
    // A view's read-only variant answers the same, and refuses a write and an index statement.
    let snap = db.snapshot();
    let view = snap.workspace("default").expect("default");
    let text = "MATCH (a {id: $s})--(b) RETURN count(DISTINCT b) + $n, $l";
    assert_eq!(view.query_bound(text, &bound).expect("reads"), view.query(text, &params).expect("reads"));
    let err = view.query_bound("CREATE (:x)", &bound).expect_err("a view reads");
    assert!(err.to_string().contains("writes"), "{err}");
    assert!(view.query_bound("CREATE INDEX FOR (p:person) ON (p.name)", &bound).is_err());
    // The caller's value wins over the header's, as with `Params`.
    let got = db.query_bound("default", "CYPHER n=5 RETURN $n", &bound).expect("runs");
    assert_eq!(got.rows, vec![vec![i(2)]]);
    let err = db.query_bound("default", "RETURN $missing", &bound).expect_err("missing");
    assert!(err.to_string().contains("$missing"), "{err}");
    let node = db.query("default", "MATCH (a {id: 'auth'}) RETURN a", &Params::new()).expect("runs").rows[0][0].clone();
    let err = engram::Bindings::new().set("a", &node).expect_err("a node is no parameter");
    assert!(err.contains("$a") && err.contains("pass its id"), "{err}");
    // Writes and index statements go through it too.
    let mut name = engram::Bindings::new();
    name.set_str("name", "Mallory");
    let wrote = db.query_bound("default", "CREATE (p:person {name: $name}) RETURN p.name", &name).expect("writes");
    assert_eq!((wrote.rows.clone(), wrote.stats.nodes_created), (vec![vec![s("Mallory")]], 1));
    db.query_bound("default", "CREATE INDEX FOR (p:person) ON (p.name)", &engram::Bindings::new()).expect("an index statement");
    let found = db.query_bound("default", "MATCH (p:person {name: $name}) RETURN count(p)", &name).expect("reads");
    assert_eq!(found.rows, vec![vec![i(1)]]);
    // A recorded call keeps the digest `Params` would give it.
    db.set_setting("audit_root", "on").expect("audit on");
    db.query("default", "RETURN $n", &params).expect("runs");
    db.query_bound("default", "RETURN $n", &bound).expect("runs");
    let history = db.access_history(&engram::db::audit::AuditFilter::default()).expect("history");
    let digests: Vec<_> = history.iter().rev().take(2).map(|r| r.params_sha256.clone()).collect();
    assert!(digests[0].is_some() && digests[0] == digests[1], "{digests:?}");
}

/// Neo4j's index procedures query an index by the name its statement gave it: full-text
/// (`db.index.fulltext.queryNodes`) and vector (`db.index.vector.queryNodes`, with Neo4j's
/// `indexConfig` options and its similarity score), for nodes and relationships; a name is one
/// index, dropped by name; `SHOW INDEXES` lists them in Neo4j's columns; what is missing or of
/// the other kind is refused by name.
#[test]
fn neo4j_index_procedures_query_by_name() {
    let db = Database::in_memory();
    write(&db, "CREATE (:Doc {title: 'graph databases for agents', v: [1.0, 0.0]}), (:Doc {title: 'cooking pasta', v: [0.0, 1.0]})");
    write(&db, "CREATE (:Doc)-[:CITES {note: 'graph theory', w: [3, 4]}]->(:Doc)");
    write(&db, "CREATE FULLTEXT INDEX titles FOR (n:Doc) ON EACH [n.title]");
    write(&db, "CREATE FULLTEXT INDEX notes FOR ()-[r:CITES]-() ON EACH [r.note]");
    write(&db, "CREATE VECTOR INDEX docs FOR (n:Doc) ON (n.v) OPTIONS {indexConfig: {`vector.dimensions`: 2, `vector.similarity_function`: 'cosine'}}");
    write(&db, "CREATE VECTOR INDEX cites FOR ()-[r:CITES]-() ON (r.w) OPTIONS {indexConfig: {`vector.similarity_function`: 'euclidean'}}");
    let q = |text: &str| rows(&db, text);
    assert_eq!(q("CALL db.index.fulltext.queryNodes('titles', 'graph') YIELD node RETURN node.title"), [[s("graph databases for agents")]]);
    assert_eq!(
        q("CALL db.index.fulltext.queryRelationships('notes', 'graph') YIELD relationship RETURN relationship.note"),
        [[s("graph theory")]]
    );
    let nearest = q("CALL db.index.vector.queryNodes('docs', 2, [1.0, 0.0]) YIELD node, score RETURN node.title, score");
    assert_eq!(nearest, [[s("graph databases for agents"), QueryValue::Float(1.0)], [s("cooking pasta"), QueryValue::Float(0.5)]]);
    // Euclidean: 1 / (1 + d²), d = 5 from the origin.
    let far = q("CALL db.index.vector.queryRelationships('cites', 1, [0, 0]) YIELD relationship, score RETURN score");
    assert_eq!(far, [[QueryValue::Float(1.0 / 26.0)]]);
    write(&db, "CREATE VECTOR INDEX docs IF NOT EXISTS FOR (n:Doc) ON (n.v)");
    // SHOW INDEXES in Neo4j's columns, as LangChain's Neo4j vector store asks it; an unnamed
    // (FalkorDB) declaration is listed, and queried, under a name made from it.
    write(&db, "CREATE INDEX FOR (n:Doc) ON (n.title, n.v)");
    write(&db, "CREATE VECTOR INDEX FOR (n:Img) ON (n.e) OPTIONS {dimension: 2, similarityFunction: 'euclidean'}");
    let shown = q("SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties RETURN name, type, entityType, labelsOrTypes, properties ORDER BY name");
    let list = |v: &[&str]| QueryValue::List(v.iter().map(|x| s(x)).collect());
    assert_eq!(
        shown,
        [
            vec![s("cites"), s("VECTOR"), s("RELATIONSHIP"), list(&["CITES"]), list(&["w"])],
            vec![s("docs"), s("VECTOR"), s("NODE"), list(&["Doc"]), list(&["v"])],
            vec![s("notes"), s("FULLTEXT"), s("RELATIONSHIP"), list(&["CITES"]), list(&["note"])],
            vec![s("range_node_Doc"), s("RANGE"), s("NODE"), list(&["Doc"]), list(&["title", "v"])],
            vec![s("titles"), s("FULLTEXT"), s("NODE"), list(&["Doc"]), list(&["title"])],
            vec![s("vector_node_Img"), s("VECTOR"), s("NODE"), list(&["Img"]), list(&["e"])],
        ]
    );
    let langchain = "SHOW INDEXES YIELD name, type, labelsOrTypes, properties, options WHERE type = 'VECTOR' \
                     AND (name = $name OR (labelsOrTypes[0] = $label AND properties[0] = $property)) \
                     RETURN name, options.indexConfig['vector.dimensions'] AS dims, options.indexConfig['vector.similarity_function'] AS f";
    let p = Params::from([("name".to_owned(), s("nope")), ("label".to_owned(), s("Img")), ("property".to_owned(), s("e"))]);
    let found = db.query("default", langchain, &p).expect("show").rows;
    assert_eq!(found, [[s("vector_node_Img"), i(2), s("euclidean")]]);
    assert_eq!(q("SHOW FULLTEXT INDEXES YIELD name RETURN name ORDER BY name"), [[s("notes")], [s("titles")]]);
    assert_eq!(q("SHOW INDEXES WHERE type = 'RANGE' RETURN count(*)"), [[i(1)]]);
    assert_eq!(q("CALL db.index.vector.queryNodes('vector_node_Img', 1, [0, 0]) YIELD score RETURN score"), Vec::<Vec<QueryValue>>::new());
    let err = |text: &str| db.query("default", text, &Params::new()).expect_err(text).to_string();
    assert!(err("SHOW USERS").contains("expected INDEXES, CONSTRAINTS, PROCEDURES or FUNCTIONS after SHOW"));
    assert!(err("SHOW RANGE CONSTRAINTS").contains("expected INDEXES, CONSTRAINTS, PROCEDURES or FUNCTIONS after SHOW"));
    assert_eq!(q("SHOW CONSTRAINTS YIELD name RETURN count(*)"), [[i(0)]]);
    assert!(err("CREATE FULLTEXT INDEX titles FOR (n:Other) ON EACH [n.x]").contains("There already exists an index called 'titles'"));
    assert!(err("CALL db.index.vector.queryNodes('nope', 1, [1, 0]) YIELD node RETURN node")
        .contains("There is no such vector schema index: nope"));
    assert!(err("CALL db.index.fulltext.queryNodes('docs', 'x') YIELD node RETURN node").contains("no such fulltext schema index: docs"));
    assert!(err("CALL db.index.vector.queryRelationships('docs', 1, [1, 0]) YIELD relationship RETURN relationship")
        .contains("is a node index"));
    write(&db, "DROP INDEX docs");
    assert!(err("DROP INDEX docs").contains("no such index"));
    write(&db, "DROP INDEX docs IF EXISTS");
    assert!(err("CALL db.index.vector.queryNodes('docs', 1, [1, 0]) YIELD node RETURN node").contains("no such vector schema index"));
    // The other indexes stay.
    assert_eq!(q("CALL db.index.fulltext.queryNodes('titles', 'pasta') YIELD node RETURN count(node)"), [[i(1)]]);
}

#[test]
fn results_carry_graph_values() {
    let db = db();
    let got = rows(&db, "MATCH (a {id: 'auth'})-[r]->(b {id: 'db'}) RETURN a, r");
    let [QueryValue::Node(a), QueryValue::Relationship(r)] = got[0].as_slice() else { panic!("{got:?}") };
    assert_eq!(a.labels, ["service"]);
    assert_eq!(a.properties.get("name"), Some(&s("AuthService")));
    assert_eq!(r.rel_type, "depends_on");
    assert_eq!((r.start, r.end), (a.id, r.end));
    // Confidence reads as the shortest decimal of the stored f32.
    assert_eq!(r.properties.get("confidence"), Some(&QueryValue::Float(0.9)));
    assert_eq!(r.properties.get("state"), Some(&s("ACCEPTED")));
}

#[test]
fn a_node_is_found_by_its_internal_id() {
    let db = db();
    let QueryValue::Int(auth) = rows(&db, "MATCH (a {id: 'auth'}) RETURN id(a)")[0][0] else { panic!("id(a) is an integer") };
    let by_id = |text: &str| {
        let mut p = Params::new();
        p.insert("x".into(), i(auth));
        run_with(&db, text, &p).unwrap_or_else(|e| panic!("{text}: {e}"))
    };
    assert_eq!(by_id("MATCH (n) WHERE id(n) = $x RETURN n.id").rows, [[s("auth")]]);
    assert_eq!(by_id("MATCH (n)-[:DEPENDS_ON]->(m) WHERE id(n) = $x RETURN m.id ORDER BY m.id").rows, [[s("cache")], [s("db")]]);
    // The seek takes the other end when that is the one named.
    assert_eq!(by_id("MATCH (p)-[:OWNS]->(n) WHERE id(n) = $x RETURN p.id").rows, [[s("alice")]]);
    assert_eq!(by_id("MATCH (n:person) WHERE id(n) = $x RETURN n").rows, Vec::<Vec<QueryValue>>::new());
    assert_eq!(by_id("OPTIONAL MATCH (n) WHERE id(n) = 999999 RETURN n").rows, [[QueryValue::Null]]);
    assert!(by_id("EXPLAIN OPTIONAL MATCH (n) WHERE id(n) = 999999 RETURN n").plan.unwrap_or_default().contains("NodeByInternalIdSeek"));
    // In a write query too: the seek reads the transaction's own state.
    let mut p = Params::new();
    p.insert("x".into(), i(auth));
    let set = db.query("default", "MATCH (n) WHERE id(n) = $x SET n.seen = true RETURN n.id, n.seen", &p).expect("writes");
    assert_eq!(set.rows, [[s("auth"), QueryValue::Bool(true)]]);
    let made =
        db.query("default", "CREATE (m:made) WITH id(m) AS m MATCH (k) WHERE id(k) IN [m, $x] RETURN labels(k)", &p).expect("writes");
    let mut labels: Vec<String> = made.rows.iter().map(|r| format!("{:?}", r[0])).collect();
    labels.sort();
    assert_eq!(labels, [format!("{:?}", QueryValue::List(vec![s("made")])), format!("{:?}", QueryValue::List(vec![s("service")]))]);
    let plan = by_id("EXPLAIN MATCH (n)-[:DEPENDS_ON]->(m) WHERE id(n) = $x RETURN m").plan.unwrap_or_default();
    assert!(plan.contains("NodeByInternalIdSeek") && !plan.contains("Filter") && !plan.contains("AllNodesScan"), "{plan}");
}

#[test]
fn a_type_resolved_before_a_new_name_is_resolved_again() {
    let db = Database::in_memory();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("a", "node", "A").upsert_entity("b", "node", "B").add_claim(AddClaim::new("a", "KNOWS", "b"));
    db.write(&b).expect("writes");
    let count = |db: &Database| db.query("default", "MATCH ()-[:KNOWS]->() RETURN count(*)", &Params::new()).expect("runs").rows;
    // Ingest keeps the name in its folded form: the query's `KNOWS` finds it so.
    assert_eq!(count(&db), [[i(1)]]);
    assert_eq!(count(&db), [[i(1)]]);
    // The language keeps case: `KNOWS` as written is a second name, and the same text, resolved
    // on this thread before, now finds both.
    db.query("default", "CREATE (:x)-[:KNOWS]->(:y)", &Params::new()).expect("creates");
    assert_eq!(count(&db), [[i(2)]]);
    // An older snapshot still resolves as it did.
    let snap = db.snapshot();
    db.query("default", "CREATE (:x)-[:Knows]->(:y)", &Params::new()).expect("creates");
    let old =
        snap.workspace("default").expect("workspace").query("MATCH ()-[:Knows]->() RETURN count(*)", &Params::new()).expect("runs").rows;
    assert_eq!(old, [[i(1)]]);
    assert_eq!(db.query("default", "MATCH ()-[:Knows]->() RETURN count(*)", &Params::new()).expect("runs").rows, [[i(2)]]);
}

/// Labels resolve as types do (`a_type_resolved_before_a_new_name_is_resolved_again`), in a
/// label scan and in a test on each node an expansion reaches.
#[test]
fn a_label_resolved_before_a_new_name_is_resolved_again() {
    let db = Database::in_memory();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("a", "person", "A").upsert_entity("b", "person", "B").add_claim(AddClaim::new("a", "KNOWS", "b"));
    db.write(&b).expect("writes");
    let count = |db: &Database, text: &str| db.query("default", text, &Params::new()).expect("runs").rows;
    let (scan, tested) = ("MATCH (n:Person) RETURN count(*)", "MATCH (a)-->(b:Person) RETURN count(*)");
    for _ in 0..2 {
        assert_eq!(count(&db, scan), [[i(2)]]);
        assert_eq!(count(&db, tested), [[i(1)]]);
    }
    // `Person` as written is a second name; the same texts, resolved on this thread before, now
    // find both.
    db.query("default", "CREATE (:Person)-[:KNOWS]->(:Person)", &Params::new()).expect("creates");
    assert_eq!(count(&db, scan), [[i(4)]]);
    assert_eq!(count(&db, tested), [[i(2)]]);
    // An older snapshot still resolves as it did.
    let snap = db.snapshot();
    db.query("default", "CREATE (:PERSON)-[:KNOWS]->(:PERSON)", &Params::new()).expect("creates");
    let old = snap.workspace("default").expect("workspace");
    assert_eq!(old.query("MATCH (a)-->(b:PERSON) RETURN count(*)", &Params::new()).expect("runs").rows, [[i(1)]]);
    assert_eq!(count(&db, "MATCH (a)-->(b:PERSON) RETURN count(*)"), [[i(2)]]);
}

fn random_graph(n: usize, edges: &[(usize, usize, bool)]) -> Database {
    let db = Database::in_memory();
    let mut b = WriteBatch::new("default");
    b.push(engram::Op::DeclarePredicate(DeclarePredicate::new("A").transitive()));
    for e in 0..n {
        b.upsert_entity(&format!("e{e}"), "node", &format!("n{e}"));
    }
    for (s, o, t) in edges {
        b.add_claim(AddClaim::new(format!("e{}", s % n).as_str(), if *t { "A" } else { "B" }, format!("e{}", o % n).as_str()));
    }
    db.write(&b).expect("writes");
    db
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]

    /// `count(DISTINCT b)` over `*0..k` equals the direct k-hop's reach, and one hop equals the
    /// neighbour set, on random graphs.
    #[test]
    fn patterns_equal_the_direct_api(n in 2usize..24, edges in prop::collection::vec((0usize..24, 0usize..24, any::<bool>()), 0..40), seed in 0usize..24, depth in 1u32..3) {
        let db = random_graph(n, &edges);
        let snap = db.snapshot();
        let ws = snap.workspace("default").expect("workspace");
        let start = format!("e{}", seed % n);
        let mut params = Params::new();
        params.insert("s".into(), QueryValue::String(start.clone()));
        let q = format!("MATCH (a {{id: $s}})-[*0..{depth}]-(b) RETURN count(DISTINCT b)");
        let got = ws.query(&q, &params).expect("runs").rows;
        let id = ws.entity_id(&start).expect("entity");
        let reached = ws.khop(&[id], &KHopQuery::depth(depth)).expect("khop");
        prop_assert_eq!(got, vec![vec![QueryValue::Int(reached.entities.len() as i64)]]);

        // Breadth-first reach (anonymous relationship) equals the trail walk (named one).
        for (fast, slow) in [
            (format!("MATCH (a {{id: $s}})-[*1..{depth}]->(b) RETURN count(DISTINCT b)"), format!("MATCH (a {{id: $s}})-[r*1..{depth}]->(b) RETURN count(DISTINCT b)")),
            (format!("MATCH (a {{id: $s}})<-[:A*..{depth}]-(b) RETURN collect(DISTINCT b.id)"), format!("MATCH (a {{id: $s}})<-[r:A*..{depth}]-(b) RETURN collect(DISTINCT b.id)")),
            (format!("MATCH (a {{id: $s}})-[*1..{depth}]-(b) WHERE b <> a RETURN count(DISTINCT b)"), format!("MATCH (a {{id: $s}})-[r*1..{depth}]-(b) WHERE b <> a RETURN count(DISTINCT b)")),
            (format!("MATCH (a {{id: $s}})-[:B*1..{}]->(b) RETURN count(DISTINCT b)", depth + 1), format!("MATCH (a {{id: $s}})-[r:B*1..{}]->(b) RETURN count(DISTINCT b)", depth + 1)),
        ] {
            let plan = ws.query(&format!("EXPLAIN {fast}"), &params).expect("explains").plan.unwrap_or_default();
            prop_assert!(plan.contains("BreadthFirstReach"), "{}", plan);
            let mut f = ws.query(&fast, &params).expect("runs").rows;
            let mut g = ws.query(&slow, &params).expect("runs").rows;
            for rows in [&mut f, &mut g] {
                for r in rows.iter_mut() {
                    if let QueryValue::List(items) = &mut r[0] {
                        items.sort_by_key(|v| format!("{v:?}"));
                    }
                }
            }
            prop_assert_eq!(f, g, "{}", fast);
        }

        // The closure equals the direct call (which leaves the start out).
        for (arrow, direct) in [("->", true), ("<-", false)] {
            let (l, r) = if arrow == "->" { ("-", "->") } else { ("<-", "-") };
            let q = format!("MATCH (a {{id: $s}}){l}[:A*]{r}(b) WHERE b <> a RETURN DISTINCT b.id");
            let mut got: Vec<String> = ws.query(&q, &params).expect("runs").rows.into_iter().map(|r| match &r[0] { QueryValue::String(s) => s.clone(), other => panic!("{other:?}") }).collect();
            got.sort();
            let found = if direct { ws.ancestors(id, "A", &engram::Visibility::default()) } else { ws.descendants(id, "A", &engram::Visibility::default()) }.expect("transitive");
            let mut want: Vec<String> = found.iter().map(|(e, _)| ws.entity_ext_id(*e).expect("ext").to_owned()).collect();
            want.sort();
            prop_assert_eq!(got, want, "{}", q);
        }

        // An unbounded walk over a transitive type is the engine's closure, cycles included.
        for dir in ["->", "<-"] {
            let (l, r) = if dir == "->" { ("-", "->") } else { ("<-", "-") };
            let closure = format!("MATCH (a {{id: $s}}){l}[:A*]{r}(b) RETURN collect(DISTINCT b.id)");
            let bounded = format!("MATCH (a {{id: $s}}){l}[:A*1..30]{r}(b) RETURN collect(DISTINCT b.id)");
            let mut f = ws.query(&closure, &params).expect("runs").rows;
            let mut g = ws.query(&bounded, &params).expect("runs").rows;
            for rows in [&mut f, &mut g] {
                if let QueryValue::List(items) = &mut rows[0][0] {
                    items.sort_by_key(|v| format!("{v:?}"));
                }
            }
            prop_assert_eq!(f, g, "{}", closure);
        }

        // The closure's count (a buffer the thread keeps, nothing handed over) equals the
        // bounded walk's, the start counted once when the pattern allows zero hops.
        for (l, r) in [("-", "->"), ("<-", "-")] {
            for min in ["", "0.."] {
                let counted = format!("MATCH (a {{id: $s}}){l}[:A*{min}]{r}(b) RETURN count(DISTINCT b)");
                let bounded = format!("MATCH (a {{id: $s}}){l}[:A*{}30]{r}(b) RETURN count(DISTINCT b)", if min.is_empty() { "1.." } else { "0.." });
                let plan = ws.query(&format!("EXPLAIN {counted}"), &params).expect("explains").plan.unwrap_or_default();
                prop_assert!(plan.contains("BreadthFirstReachCount"), "{}", plan);
                prop_assert_eq!(ws.query(&counted, &params).expect("runs").rows, ws.query(&bounded, &params).expect("runs").rows, "{}", counted);
            }
        }

        // A counted expand (fused) equals the same count summed row by row.
        for (fast, slow) in [
            ("MATCH (a {id: $s})-[r]-() RETURN count(r)", "MATCH (a {id: $s})-[r]-() RETURN sum(1)"),
            ("MATCH (a {id: $s})<-[:A]-(b) RETURN count(*)", "MATCH (a {id: $s})<-[:A]-(b) RETURN sum(1)"),
        ] {
            let plan = ws.query(&format!("EXPLAIN {fast}"), &params).expect("explains").plan.unwrap_or_default();
            prop_assert!(plan.contains("ExpandCount"), "{}", plan);
            let f = ws.query(fast, &params).expect("runs").rows;
            let g = ws.query(slow, &params).expect("runs").rows;
            let as_int = |rows: &[Vec<QueryValue>]| match rows[0][0] { QueryValue::Int(n) => n, QueryValue::Null => 0, ref other => panic!("{other:?}") };
            prop_assert_eq!(as_int(&f), as_int(&g), "{}", fast);
        }

        let q = "MATCH (a {id: $s})-[:A]->(b) RETURN b.id";
        let mut got: Vec<String> = ws.query(q, &params).expect("runs").rows.into_iter().map(|r| match &r[0] { QueryValue::String(s) => s.clone(), other => panic!("{other:?}") }).collect();
        got.sort();
        let mut want: Vec<String> = edges.iter().filter(|(s, _, t)| *t && s % n == seed % n).map(|(_, o, _)| format!("e{}", o % n)).collect();
        want.sort();
        prop_assert_eq!(got, want);
    }

    /// A query over many start rows (run in parallel) returns the rows a one-row-at-a-time
    /// run gives, in the same order.
    #[test]
    fn parallel_expansion_equals_sequential(n in 2usize..40, edges in prop::collection::vec((0usize..40, 0usize..40, any::<bool>()), 0..120)) {
        let db = random_graph(n, &edges);
        let snap = db.snapshot();
        let ws = snap.workspace("default").expect("workspace");
        // 300 copies of every node: past the parallel threshold.
        let whole = ws.query("UNWIND range(1, 300) AS k MATCH (a)-[r]->(b) RETURN k, a.id, b.id, id(r)", &Params::new()).expect("runs").rows;
        let mut pieces = Vec::new();
        for k in 1..=300 {
            let mut p = Params::new();
            p.insert("k".into(), QueryValue::Int(k));
            pieces.extend(ws.query("UNWIND [$k] AS k MATCH (a)-[r]->(b) RETURN k, a.id, b.id, id(r)", &p).expect("runs").rows);
        }
        prop_assert_eq!(whole.len(), pieces.len());
        let as_set = |rows: &[Vec<QueryValue>]| rows.iter().map(|r| format!("{r:?}")).collect::<BTreeSet<_>>();
        prop_assert_eq!(as_set(&whole), as_set(&pieces));
        prop_assert_eq!(whole, pieces);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]

    /// Where a labelled one-hop pattern starts is chosen by the labels' counts: starting from the
    /// smaller side (walking the hop backwards) gives exactly the matches a naive reading of the
    /// edges gives, in every direction, with and without a counted expand.
    #[test]
    fn the_start_chosen_by_counts_changes_no_match(n in 3usize..30, edges in prop::collection::vec((0usize..30, 0usize..30, any::<bool>()), 0..60)) {
        let db = Database::in_memory();
        let mut b = WriteBatch::new("default");
        // One node in four is `small`, the rest `big`.
        let label = |e: usize| if e.is_multiple_of(4) { "small" } else { "big" };
        for e in 0..n {
            b.upsert_entity(&format!("e{e}"), label(e), &format!("n{e}"));
        }
        for (s, o, t) in &edges {
            b.add_claim(AddClaim::new(format!("e{}", s % n).as_str(), if *t { "A" } else { "B" }, format!("e{}", o % n).as_str()));
        }
        db.write(&b).expect("writes");
        let snap = db.snapshot();
        let ws = snap.workspace("default").expect("workspace");
        let edges: Vec<(usize, usize, bool)> = edges.iter().map(|(s, o, t)| (s % n, o % n, *t)).collect();
        for (pattern, dir) in [("-[r:A]->", 0), ("<-[r:A]-", 1), ("-[r]-", 2)] {
            let q = format!("MATCH (a:big){pattern}(b:small) RETURN a.id, b.id, id(r)");
            let plan = ws.query(&format!("EXPLAIN {q}"), &Params::new()).expect("explains").plan.unwrap_or_default();
            prop_assert!(plan.contains("NodeByLabelScan (b:small)"), "{}", plan);
            let mut got: Vec<(String, String)> = ws.query(&q, &Params::new()).expect("runs").rows.into_iter().map(|r| match (&r[0], &r[1]) {
                (QueryValue::String(a), QueryValue::String(b)) => (a.clone(), b.clone()),
                other => panic!("{other:?}"),
            }).collect();
            got.sort();
            let mut want = Vec::new();
            for &(s, o, t) in &edges {
                let typed = t || dir == 2;
                let ends: &[(usize, usize)] = match dir { 0 => &[(s, o)], 1 => &[(o, s)], _ => &[(s, o), (o, s)] };
                for &(x, y) in ends {
                    // An undirected self-loop matches once.
                    if typed && label(x) == "big" && label(y) == "small" && !(dir == 2 && x == y && (x, y) != (s, o)) {
                        want.push((format!("e{x}"), format!("e{y}")));
                    }
                }
            }
            want.sort();
            prop_assert_eq!(&got, &want, "{}", q);
            let count = ws.query(&format!("MATCH (a:big){pattern}(b:small) RETURN count(*)"), &Params::new()).expect("runs").rows;
            prop_assert_eq!(count, vec![vec![QueryValue::Int(want.len() as i64)]]);
        }
    }
}

fn expr_strategy() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        any::<bool>().prop_map(|b| b.to_string()),
        any::<i64>().prop_map(|i| if i < 0 { format!("({i})") } else { i.to_string() }),
        (-1e300f64..1e300).prop_map(|f| format!("({f:e})")),
        "[a-z]{0,4}".prop_map(|s| format!("'{s}'")),
        Just("n".to_owned()),
        Just("n.name".to_owned()),
        Just("r".to_owned()),
        Just("0.0/0.0".to_owned()),
        Just("datetime('2020-02-29T23:59:59.999999999-11:59')".to_owned()),
        Just("date('-9999-01-01')".to_owned()),
        Just("duration({months: 9223372036854775807})".to_owned()),
        Just("localtime('12:00:01.5')".to_owned()),
        Just("[0.5, 1.5]".to_owned()),
        prop::sample::select(vec!["'week'", "'weekYear'", "'millennium'", "'day'", "'microsecond'"]).prop_map(str::to_owned),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        let ops = ["+", "-", "*", "/", "%", "^", "=", "<>", "<", ">=", "AND", "OR", "XOR", "IN", "STARTS WITH", "CONTAINS", "=~"];
        let funcs = [
            "size",
            "head",
            "last",
            "tail",
            "reverse",
            "toString",
            "toInteger",
            "toFloat",
            "toBoolean",
            "abs",
            "round",
            "sqrt",
            "labels",
            "type",
            "keys",
            "properties",
            "id",
            "length",
            "nodes",
            "toUpper",
            "trim",
            "sign",
            "exists",
            "date",
            "datetime",
            "localtime",
            "duration",
            "vecf32",
        ];
        prop_oneof![
            (inner.clone(), 0..ops.len(), inner.clone()).prop_map(move |(a, o, b)| format!("({a} {} {b})", ops[o])),
            (0..funcs.len(), inner.clone()).prop_map(move |(f, a)| format!("{}({a})", funcs[f])),
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{{k: {a}, j: {b}}}")),
            (inner.clone(), inner.clone()).prop_map(|(a, i)| format!("({a})[{i}]")),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(|(a, i, j)| format!("({a})[{i}..{j}]")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("range({a}, {b})")),
            (inner.clone(), inner.clone()).prop_map(|(l, p)| format!("[x IN {l} WHERE {p} | x]")),
            inner.clone().prop_map(|a| format!("NOT {a}")),
            inner.clone().prop_map(|a| format!("-{a}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("CASE WHEN {a} THEN {b} END")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("substring({a}, {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("duration.between({a}, {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("vec.cosineDistance({a}, {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("datetime({{epochSeconds: {a}, timezone: {b}}})")),
            (inner.clone(), inner.clone(), 0..4usize)
                .prop_map(|(u, v, k)| format!("{}.truncate({u}, {v})", ["date", "time", "datetime", "localdatetime"][k])),
            (inner.clone(), inner).prop_map(|(a, b)| format!("datetime.fromepoch({a}, {b})")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(256), ..ProptestConfig::default() })]

    /// Random expressions over nodes, relationships and values give a value or a typed error,
    /// never a panic (long runs: `PROPTEST_CASES=100000`).
    #[test]
    fn random_expressions_never_panic(e in expr_strategy(), agg in any::<bool>()) {
        let db = db();
        let snap = db.snapshot();
        let ws = snap.workspace("default").expect("workspace");
        let q = if agg {
            format!("MATCH (n)-[r]->() WITH n, r, {e} AS v RETURN count(v), collect(v)[0..2], min(v), max(v)")
        } else {
            format!("MATCH (n)-[r]->() RETURN {e} AS v ORDER BY v LIMIT 3")
        };
        let _ = ws.query(&q, &Params::new());
    }
}

/// Parameter values of every kind a caller can bind (finite floats: NaN is compared below by
/// its printed form, and a map or list holding one would not equal itself).
fn param_strategy() -> impl Strategy<Value = QueryValue> {
    let leaf = prop_oneof![
        Just(QueryValue::Null),
        any::<bool>().prop_map(QueryValue::Bool),
        any::<i64>().prop_map(QueryValue::Int),
        (-1e300f64..1e300).prop_map(QueryValue::Float),
        "[a-zé\"\\\\]{0,6}".prop_map(QueryValue::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(QueryValue::List),
            prop::collection::btree_map("[a-c]{1,2}", inner, 0..3).prop_map(QueryValue::Map),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(128), ..ProptestConfig::default() })]

    /// `Bindings` against `Params` on random values and expressions: the same values back, the
    /// same rows or the same error, with and without a header naming one of them too.
    #[test]
    fn bindings_equal_params_on_random_values(p in param_strategy(), q in param_strategy(), e in expr_strategy(), header in any::<bool>()) {
        let params: Params = [("p".to_owned(), p.clone()), ("q".to_owned(), q.clone())].into();
        let mut bound = engram::Bindings::new();
        bound.set("p", &p).expect("binds");
        bound.set("q", &q).expect("binds");
        prop_assert_eq!(bound.to_params(), params.clone());
        let db = db();
        let head = if header { "CYPHER q=1 x='h' " } else { "" };
        let text = format!("{head}MATCH (n)-[r]->() RETURN $p AS p, {e} AS v, $q = $p AS same ORDER BY v LIMIT 3");
        // Compared as they answer (the second run reuses the plan: `cached` differs).
        let answer = |r: engram::QueryResult| (r.columns, r.rows, r.stats, r.plan);
        let by_params = format!("{:?}", db.query("default", &text, &params).map(answer));
        let by_bindings = format!("{:?}", db.query_bound("default", &text, &bound).map(answer));
        prop_assert_eq!(by_params, by_bindings, "{}", text);
    }
}

#[test]
fn the_temporal_prefix_applies_to_nodes_too() {
    let db = db();
    let mut b = WriteBatch::new("default");
    b.push(engram::Op::DeleteEntity { entity: "alice".into() });
    db.write(&b).expect("deletes");
    assert_eq!(rows(&db, "MATCH (n) RETURN count(n)"), vec![vec![i(3)]]);
    assert_eq!(rows(&db, "MATCH (n {id: 'alice'}) RETURN n.name"), Vec::<Vec<QueryValue>>::new());
    // Every version: the deleted entity is there, by scan, label and id.
    assert_eq!(rows(&db, "ALL VERSIONS MATCH (n) RETURN count(n)"), vec![vec![i(4)]]);
    assert_eq!(rows(&db, "ALL VERSIONS MATCH (n:person) RETURN n.name"), vec![vec![s("Alice")]]);
    assert_eq!(rows(&db, "ALL VERSIONS MATCH (n {id: 'alice'})-[:OWNS]->(x) RETURN x.name"), vec![vec![s("AuthService")]]);
    // As recorded at the epoch, nothing existed; as recorded far ahead, what exists now.
    assert_eq!(rows(&db, "KNOWN AS OF 0 MATCH (n) RETURN count(n)"), vec![vec![i(0)]]);
    assert_eq!(rows(&db, "KNOWN AS OF '2999-01-01T00:00:00Z' MATCH (n:service) RETURN count(n)"), vec![vec![i(3)]]);
    // A date-time or a date value names the same instants.
    assert_eq!(rows(&db, "KNOWN AS OF datetime('2999-01-01T00:00Z') MATCH (n:service) RETURN count(n)"), vec![vec![i(3)]]);
    assert_eq!(rows(&db, "KNOWN AS OF date('1970-01-01') MATCH (n) RETURN count(n)"), vec![vec![i(0)]]);
}

#[test]
fn vector_search_and_recall_reach_the_databases_embedder() {
    use std::sync::Arc;
    let db = Database::in_memory();
    db.set_embedder(Arc::new(engram::embed::HashEmbedder::new(64))).expect("sets");
    let mut b = WriteBatch::new("default");
    b.upsert_entity("auth", "service", "AuthService").upsert_entity("kinesis", "technology", "Kinesis");
    b.add_claim(AddClaim::new("auth", "streams_events_with", "kinesis").text("AuthService streams events with Kinesis"));
    b.add_claim(AddClaim::new("kinesis", "owned_by", "auth").text("the platform team owns the billing ledger"));
    b.add_claim(AddClaim::new("auth", "keeps", "kinesis").text("login events are kept for a year"));
    db.write(&b).expect("writes");
    let q =
        "CALL engram.search.vector('AuthService streams events with Kinesis', 1) YIELD relationship, score RETURN relationship.text, score";
    let got = db.query("default", q, &Params::new()).expect("runs").rows;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0][0], s("AuthService streams events with Kinesis"));
    // A bare view has no embedder: the procedure says so, by name.
    let snap = db.snapshot();
    let err = snap.workspace("default").expect("ws").query(q, &Params::new()).expect_err("no embedder here");
    assert_eq!(err.detail, Detail::Unsupported);
    assert!(err.message.contains("Database::query"), "{}", err.message);
    // Recall through the database runs its semantic path too.
    let got = db
        .query("default", "CALL engram.recall('Kinesis events', {budget: 200}) YIELD rank, text RETURN rank, text", &Params::new())
        .expect("runs");
    assert!(!got.rows.is_empty());
    // The procedure returns what the direct call packs, in its order, the database's embedder
    // embedding the question and what it asks (`question_to_embed`: without the names of entities
    // with facts, here Kinesis), averaged (`embed_question`).
    let snap = db.snapshot();
    let view = snap.workspace("default").expect("ws");
    let mut asked = engram::RecallQuery::new("Kinesis events");
    assert_eq!(view.question_to_embed(&asked).expect("reads"), "events");
    asked.vector = db.embed_question("Kinesis events", "events").expect("embeds");
    let (whole, events) = (db.embed_query("Kinesis events").expect("embeds"), db.embed_query("events").expect("embeds"));
    assert_eq!(asked.vector, engram::search::semantic::question_vector(whole, events), "the mean of the two");
    let direct = view.recall(&asked).expect("recalls");
    let scores = |r: engram::Recall| r.packed.facts.iter().map(|f| (i(i64::from(f.id)), QueryValue::Float(f.score))).collect::<Vec<_>>();
    let whole = engram::RecallQuery { vector: db.embed_query("Kinesis events").expect("embeds"), ..asked.clone() };
    let direct = scores(direct);
    assert_eq!(direct.len(), 3);
    assert_ne!(scores(view.recall(&whole).expect("recalls")), direct, "the test tells the two apart");
    let via = db
        .query("default", "CALL engram.recall('Kinesis events') YIELD claim, score RETURN id(claim), score", &Params::new())
        .expect("runs");
    assert_eq!(via.rows.into_iter().map(|r| (r[0].clone(), r[1].clone())).collect::<Vec<_>>(), direct);
    // `engram.context` with a text ranks the entity's neighbourhood by its embedding.
    let auth = view.entity_id("auth").expect("auth");
    let vector = db.embed_query("Kinesis events").expect("embeds");
    let near = view.neighborhood(auth, "Kinesis events", vector.as_deref(), &engram::ContextQuery::default()).expect("reads");
    assert_eq!(near.paths_run, ["graph", "semantic"]);
    let near = scores(near);
    assert_eq!(near.len(), 3);
    let ctx = "CALL engram.context('auth', {text: 'Kinesis events'}) YIELD claim, score RETURN id(claim), score";
    let via = db.query("default", ctx, &Params::new()).expect("runs");
    assert_eq!(via.rows.into_iter().map(|r| (r[0].clone(), r[1].clone())).collect::<Vec<_>>(), near);
    // A database without an embedder refuses vector search with a reason.
    let plain = self::db();
    let err = plain.query("default", q, &Params::new()).expect_err("no embedder");
    assert!(err.to_string().contains("no embedder"), "{err}");
}

fn pattern_strategy() -> impl Strategy<Value = String> {
    let node = (prop::sample::select(vec!["", "a", "b", "c", "a:service", "b:person", "c {id: 'auth'}", ":nothing"]))
        .prop_map(|n| format!("({n})"));
    let rel = (
        prop::sample::select(vec!["-", "<-"]),
        prop::sample::select(vec!["", "r", "s", "r:DEPENDS_ON", ":OWNS|DEPENDS_ON", "r WHERE r.confidence > 0.5"]),
        prop::sample::select(vec!["", "*", "*0..2", "*2", "*..3", "*1.."]),
        prop::sample::select(vec!["-", "->"]),
    )
        .prop_map(|(l, inner, len, r)| {
            // The inline WHERE comes after the length.
            let (name, pred) = inner.split_once(" WHERE ").map_or((inner, ""), |(n, p)| (n, p));
            let pred = if pred.is_empty() { String::new() } else { format!(" WHERE {pred}") };
            format!("{l}[{name}{len}{pred}]{r}")
        });
    let chain = (node.clone(), prop::collection::vec((rel, node), 0..3)).prop_map(|(start, hops)| {
        let mut s = start;
        for (r, n) in hops {
            s.push_str(&r);
            s.push_str(&n);
        }
        s
    });
    let tail = prop::sample::select(vec![
        "RETURN count(*)",
        "RETURN *",
        "RETURN DISTINCT a",
        "WITH a, count(*) AS n RETURN a.name, n ORDER BY n DESC LIMIT 3",
        "RETURN collect(DISTINCT b) AS bs",
        "OPTIONAL MATCH (a)-[q]->(z) RETURN a, count(q)",
        "WHERE a <> b RETURN count(DISTINCT b)",
    ]);
    (prop::bool::ANY, chain.clone(), prop::option::of(chain), tail).prop_map(|(optional, first, second, tail)| {
        let m = if optional { "OPTIONAL MATCH" } else { "MATCH" };
        match second {
            Some(second) => format!("{m} {first}, {second} {tail}"),
            None => format!("{m} {first} {tail}"),
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(256), ..ProptestConfig::default() })]

    /// Random patterns (directions, types, lengths, inline WHERE, reused and unbound variables)
    /// give rows or a typed error, never a panic (long runs: `PROPTEST_CASES=100000`).
    #[test]
    fn random_patterns_never_panic(q in pattern_strategy()) {
        let db = db();
        let snap = db.snapshot();
        let ws = snap.workspace("default").expect("workspace");
        let _ = ws.query(&q, &Params::new());
    }
}

// ---- writes ----------------------------------------------------------------------------------

fn write(db: &Database, text: &str) -> engram::QueryResult {
    db.query("default", text, &Params::new()).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// A node or relationship the language writes shows exactly what was written: labels as written
/// (case kept, several or none), typed properties, a relationship type with its case.
#[test]
fn written_elements_show_exactly_what_was_written() {
    let db = Database::in_memory();
    let r = write(&db, "CREATE (a:Person:Admin {name: 'Ann', age: 41, tags: ['x', 'y']})-[r:KNOWS {since: 2020}]->(b) RETURN a, r, b");
    assert_eq!((r.stats.nodes_created, r.stats.relationships_created, r.stats.labels_added, r.stats.properties_set), (2, 1, 2, 4));
    let QueryValue::Node(a) = &r.rows[0][0] else { panic!("a node: {:?}", r.rows[0][0]) };
    assert_eq!(a.labels, vec!["Person".to_owned(), "Admin".to_owned()]);
    assert_eq!(a.properties.keys().collect::<Vec<_>>(), vec!["age", "name", "tags"]);
    let QueryValue::Relationship(rel) = &r.rows[0][1] else { panic!("a relationship") };
    assert_eq!(rel.rel_type, "KNOWS");
    assert_eq!(rel.properties.len(), 1, "confidence and state were not written: {:?}", rel.properties);
    let QueryValue::Node(b) = &r.rows[0][2] else { panic!("a node") };
    assert!(b.labels.is_empty() && b.properties.is_empty(), "{b:?}");
    // Case-sensitive in the language; readable memory fields stay readable but are not listed.
    assert_eq!(rows(&db, "MATCH (n:person) RETURN n").len(), 0);
    assert_eq!(rows(&db, "MATCH ()-[r:knows]->() RETURN r").len(), 0);
    assert_eq!(
        rows(&db, "MATCH (n:Admin) RETURN n.name, labels(n)"),
        vec![vec![s("Ann"), QueryValue::List(vec![s("Person"), s("Admin")])]]
    );
    assert_eq!(rows(&db, "MATCH ()-[r:KNOWS]->() RETURN r.confidence, r.state, keys(r)")[0][2], QueryValue::List(vec![s("since")]));
    // A string `name` is the entity's name for search too.
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    assert_eq!(ws.find_by_name("ann").len(), 1);
    // An integer `id` keeps its type and is matched as written.
    write(&db, "CREATE ({id: 7}), ({id: 7})");
    assert_eq!(rows(&db, "MATCH (n {id: 7}) RETURN count(n)"), vec![vec![i(2)]]);
}

/// SET, REMOVE and labels change what the node shows; an ingested entity keeps its memory
/// fields and gains what the language writes.
#[test]
fn set_remove_and_labels() {
    let db = db();
    let r = write(&db, "MATCH (n {id: 'auth'}) SET n.tier = 1, n:Critical, n += {owner: 'ops'} RETURN n.tier, labels(n)");
    assert_eq!(r.rows, vec![vec![i(1), QueryValue::List(vec![s("service"), s("Critical")])]]);
    assert_eq!((r.stats.properties_set, r.stats.labels_added), (2, 1));
    let props = rows(&db, "MATCH (n {id: 'auth'}) RETURN properties(n)");
    let QueryValue::Map(m) = &props[0][0] else { panic!("a map") };
    assert_eq!(m.keys().collect::<Vec<_>>(), vec!["id", "name", "owner", "tier"]);
    write(&db, "MATCH (n {id: 'auth'}) REMOVE n.tier, n:Critical SET n.name = 'Auth2'");
    assert_eq!(
        rows(&db, "MATCH (n {id: 'auth'}) RETURN n.tier, labels(n), n.name"),
        vec![vec![QueryValue::Null, QueryValue::List(vec![s("service")]), s("Auth2")]]
    );
    // A claim's confidence follows a number written in [0, 1].
    write(&db, "MATCH ({id: 'db'})-[r:DEPENDS_ON]->({id: 'cache'}) SET r.confidence = 0.25");
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let c = ws
        .claims_with(Some("depends_on"), ClaimState::Proposed)
        .into_iter()
        .find(|c| (ws.claim(*c).unwrap().confidence - 0.25).abs() < 1e-6);
    assert!(c.is_some(), "the claim's confidence is 0.25");
}

/// A write query is one transaction: a failing one leaves nothing, and a node deleted while it
/// keeps a relationship fails the whole query.
#[test]
fn a_failing_write_query_writes_nothing() {
    let db = db();
    let before = db.snapshot().counts();
    let version = db.snapshot().version();
    let e = db.query("default", "CREATE (x:Temp) WITH x MATCH (n {id: 'auth'}) DELETE n", &Params::new()).unwrap_err();
    let engram::Error::Query(q) = e else { panic!("a query error: {e}") };
    assert_eq!((q.kind, q.detail), (ErrorType::ConstraintValidationFailed, Detail::DeleteConnectedNode));
    let e = db.query("default", "CREATE (x:Temp {v: 1}) WITH x CREATE (y {bad: {nested: 1}})", &Params::new()).unwrap_err();
    let engram::Error::Query(q) = e else { panic!("a query error: {e}") };
    assert_eq!(q.detail, Detail::InvalidPropertyType);
    assert_eq!((db.snapshot().counts(), db.snapshot().version()), (before, version), "nothing was written");
    // DETACH DELETE takes the relationships with it; ALL VERSIONS still sees the deleted node.
    let r = write(&db, "MATCH (n {id: 'auth'}) DETACH DELETE n");
    assert_eq!((r.stats.nodes_deleted, r.stats.relationships_deleted), (1, 3));
    assert_eq!(rows(&db, "MATCH (n {id: 'auth'}) RETURN n").len(), 0);
    assert_eq!(rows(&db, "ALL VERSIONS MATCH (n {id: 'auth'}) RETURN n.name"), vec![vec![s("AuthService")]]);
    // A read-only view refuses a write before anything runs.
    let snap = db.snapshot();
    let err = snap.workspace("default").unwrap().query("CREATE ()", &Params::new()).unwrap_err();
    assert_eq!(err.detail, Detail::Unsupported);
}

/// MERGE matches what exists or creates it once, rows later in the same query seeing the first
/// row's creation.
#[test]
fn merge_creates_once() {
    let db = Database::in_memory();
    let r = write(
        &db,
        "UNWIND [1, 1, 2] AS k MERGE (n:K {k: k}) ON CREATE SET n.new = true ON MATCH SET n.seen = true RETURN n.k, n.new, n.seen",
    );
    assert_eq!(r.stats.nodes_created, 2);
    assert_eq!(r.rows.len(), 3);
    assert_eq!(
        rows(&db, "MATCH (n:K) RETURN n.k, n.seen ORDER BY n.k"),
        vec![vec![i(1), QueryValue::Bool(true)], vec![i(2), QueryValue::Null]]
    );
    write(&db, "MATCH (a:K {k: 1}), (b:K {k: 2}) MERGE (a)-[:NEXT]->(b) MERGE (a)-[:NEXT]->(b)");
    assert_eq!(rows(&db, "MATCH ()-[r:NEXT]->() RETURN count(r)"), vec![vec![i(1)]]);
    // PROFILE of a write shows each operator with the rows it passed on.
    let profiled = write(&db, "PROFILE UNWIND [3, 3, 4] AS k MERGE (n:K {k: k}) SET n.p = true");
    assert_eq!(profiled.stats.nodes_created, 2);
    let plan = profiled.plan.expect("a plan");
    for line in ["SetProperties 1 items  (rows 3,", "Merge 0 on create, 0 on match  (rows 3,", "Unwind k  (rows 3,"] {
        assert!(plan.contains(line), "{line} in {plan}");
    }
}

/// What a write query wrote survives a reopen, replayed from the WAL and read from a
/// checkpoint: labels, types and properties as written.
#[test]
fn written_elements_survive_reopen_and_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let check = |db: &Database| {
        let r = rows(db, "MATCH (a:City:Capital)-[r:ROAD {km: 1.5}]->(b) RETURN a.name, labels(a), r.km, type(r), b");
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0][..4], [s("Oslo"), QueryValue::List(vec![s("City"), s("Capital")]), QueryValue::Float(1.5), s("ROAD")]);
        let QueryValue::Node(b) = &r[0][4] else { panic!("a node") };
        assert!(b.labels.is_empty() && b.properties.is_empty());
    };
    {
        let db = Database::open(dir.path()).unwrap();
        write(&db, "CREATE (:City:Capital {name: 'Oslo'})-[:ROAD {km: 1.5}]->()");
        check(&db);
    }
    {
        let db = Database::open(dir.path()).unwrap();
        check(&db);
        db.checkpoint().unwrap();
    }
    let db = Database::open(dir.path()).unwrap();
    check(&db);
}

/// One random write query over nodes and relationships named by their ids (`i`, `j` pick among
/// what exists by position; a missing one makes the query match nothing).
fn write_query_strategy() -> impl Strategy<Value = String> {
    let label = prop::sample::select(vec!["A", "B", "a"]);
    let value = prop::sample::select(vec![
        "1",
        "2.5",
        "'x'",
        "true",
        "[1, 2]",
        "null",
        "date('2020-02-29')",
        "datetime('2020-01-01T10:00:00.5+01:00')",
        "[duration('P1DT2H'), duration('PT-3S')]",
        "[0.5, -1.25, 1e300]",
    ]);
    prop_oneof![
        (label.clone(), value.clone()).prop_map(|(l, v)| format!("CREATE (:{l} {{k: {v}}})")),
        value.clone().prop_map(|v| format!("CREATE (:A {{id: {v}}})")),
        (0u8..6, 0u8..6, prop::sample::select(vec!["T", "t", "U"]), value.clone())
            .prop_map(|(i, j, t, v)| format!("MATCH (a), (b) WHERE id(a) = {i} AND id(b) = {j} CREATE (a)-[:{t} {{w: {v}}}]->(b)")),
        (0u8..6, value.clone(), label.clone()).prop_map(|(i, v, l)| format!("MATCH (n) WHERE id(n) = {i} SET n.k = {v}, n:{l}")),
        (0u8..6, label.clone()).prop_map(|(i, l)| format!("MATCH (n) WHERE id(n) = {i} REMOVE n:{l}, n.k")),
        (0u8..6).prop_map(|i| format!("MATCH (n) WHERE id(n) = {i} SET n = {{name: 'n{i}', z: {i}}}")),
        (0u8..6).prop_map(|i| format!("MATCH (n) WHERE id(n) = {i} DETACH DELETE n")),
        (0u8..6).prop_map(|i| format!("MATCH (n) WHERE id(n) = {i} DELETE n")),
        (0u8..6, value.clone())
            .prop_map(|(i, v)| format!("MATCH ()-[r]->() WHERE id(r) = {i} SET r.w = {v}, r.confidence = 0.5, r.state = 'ACCEPTED'")),
        (0u8..6).prop_map(|i| format!("MATCH ()-[r]->() WHERE id(r) = {i} DELETE r")),
        (label.clone(), 0u8..3).prop_map(|(l, v)| format!("MERGE (n:{l} {{k: {v}}}) ON MATCH SET n.hits = coalesce(n.hits, 0) + 1")),
        (label, 1u8..4).prop_map(|(l, n)| format!("UNWIND range(1, {n}) AS x CREATE (:{l} {{k: x}})-[:T]->(:{l})")),
    ]
}

/// Everything the language sees, in a canonical order, deleted elements included, and the
/// workspace's vocabularies in id order.
fn everything(db: &Database) -> Vec<Vec<QueryValue>> {
    let mut all = rows(db, "ALL VERSIONS MATCH (n) OPTIONAL MATCH (n)-[r]->(m) RETURN n, r, m ORDER BY id(n), id(r)");
    all.extend(rows(db, "MATCH (n {id: 1}) RETURN count(n)"));
    for call in ["CALL db.labels()", "CALL db.relationshipTypes()", "CALL db.propertyKeys()"] {
        all.push(rows(db, call).into_iter().flatten().collect());
    }
    all
}

/// `db.labels()`, `db.relationshipTypes()` and `db.propertyKeys()` number their rows by first
/// use, and only append: a name whose last use is gone keeps its row.
#[test]
fn vocabularies_are_dense_and_append_only() {
    let db = Database::in_memory();
    write(&db, "CREATE (:B {x: 1})-[:R]->(:A:C {y: 2})");
    write(&db, "CREATE (:A)-[:Q {z: 3}]->(:D)");
    let col = |call: &str| rows(&db, call).into_iter().flatten().collect::<Vec<_>>();
    let labels = col("CALL db.labels()");
    assert_eq!(labels, vec![s("B"), s("A"), s("C"), s("D")]);
    assert_eq!(col("CALL db.relationshipTypes()"), vec![s("R"), s("Q")]);
    assert_eq!(col("CALL db.propertyKeys()"), vec![s("x"), s("y"), s("z")]);
    write(&db, "MATCH (n:B) DETACH DELETE n");
    write(&db, "CREATE (:E)");
    assert_eq!(col("CALL db.labels()"), vec![s("B"), s("A"), s("C"), s("D"), s("E")]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(24), ..ProptestConfig::default() })]

    /// A write query's WAL record rebuilds exactly what it wrote: after random write queries
    /// (failing ones included), a reopened database (WAL replay) and one reopened from a
    /// checkpoint show the same graph as the live one, and a durable database answers every
    /// query as an in-memory one does.
    #[test]
    fn write_queries_replay_exactly(queries in prop::collection::vec(write_query_strategy(), 1..14)) {
        let dir = tempfile::tempdir().unwrap();
        let memory = Database::in_memory();
        let live = {
            let db = Database::open(dir.path()).unwrap();
            for q in &queries {
                let durable = db.query("default", q, &Params::new()).map(|r| (r.rows, r.stats)).map_err(|e| e.to_string());
                let in_memory = memory.query("default", q, &Params::new()).map(|r| (r.rows, r.stats)).map_err(|e| e.to_string());
                prop_assert_eq!(durable, in_memory, "{}", q);
            }
            everything(&db)
        };
        prop_assert_eq!(&live, &everything(&memory));
        {
            let db = Database::open(dir.path()).unwrap();
            prop_assert_eq!(&everything(&db), &live, "after WAL replay");
            db.checkpoint().unwrap();
        }
        let db = Database::open(dir.path()).unwrap();
        prop_assert_eq!(&everything(&db), &live, "after a checkpoint");
    }
}

/// An ingest document may carry labels beside the type and typed claim properties; the language
/// shows them (documents without them ingest as before).
#[test]
fn ingest_documents_carry_labels_and_claim_properties() {
    let db = Database::in_memory();
    let doc = r#"{"workspace": "default", "entities": [
        {"name": "Auth", "type": "service", "labels": ["Critical"]},
        {"name": "Kafka", "type": "service"}],
      "claims": [{"subject": "Auth", "predicate": "uses", "object": "Kafka", "confidence": 0.8,
                  "properties": {"port": 9092, "tls": true}}]}"#;
    db.ingest(doc, &engram::ingest::IngestOptions::default()).unwrap();
    assert_eq!(
        rows(&db, "MATCH (n:Critical) RETURN n.name, labels(n)"),
        vec![vec![s("Auth"), QueryValue::List(vec![s("service"), s("Critical")])]]
    );
    assert_eq!(
        rows(&db, "MATCH ()-[r:uses]->() RETURN r.port, r.tls, r.confidence"),
        vec![vec![i(9092), QueryValue::Bool(true), QueryValue::Float(0.8)]]
    );
}

/// A write query's record is one batch, so it is held to `batch_ops_max` (its replay would be):
/// the error names the limit and nothing is written.
#[test]
fn a_write_query_is_bounded_by_batch_ops_max() {
    let mut config = engram::Config::default();
    config.limits.batch_ops_max = 10;
    let db = Database::with_config(config);
    let e = db.query("default", "UNWIND range(1, 11) AS i CREATE ({i: i})", &Params::new()).unwrap_err();
    assert!(e.to_string().contains("batch_ops_max"), "{e}");
    assert_eq!(rows(&db, "MATCH (n) RETURN count(n)"), vec![vec![i(0)]]);
    write(&db, "UNWIND range(1, 10) AS i CREATE ({i: i})");
    assert_eq!(rows(&db, "MATCH (n) RETURN count(n)"), vec![vec![i(10)]]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(12), ..ProptestConfig::default() })]

    /// Grouped aggregation over many rows (its keys and arguments evaluated in parallel) equals a
    /// naive fold in Rust: counts, sums, extremes, distinct counts and `collect` in input order.
    #[test]
    fn aggregation_equals_a_naive_fold(xs in prop::collection::vec(-50i64..50, 0..9000), m in 1i64..9) {
        let db = Database::in_memory();
        let p = Params::from([
            ("xs".to_owned(), QueryValue::List(xs.iter().map(|x| QueryValue::Int(*x)).collect())),
            ("m".to_owned(), QueryValue::Int(m)),
        ]);
        let q = "UNWIND $xs AS x RETURN x % $m AS k, count(*) AS c, sum(x) AS s, min(x) AS lo, max(x) AS hi, \
                 count(DISTINCT x) AS d, collect(x) AS all ORDER BY k";
        let got = db.query("default", q, &p).expect("runs").rows;
        let mut want: std::collections::BTreeMap<i64, Vec<i64>> = std::collections::BTreeMap::new();
        for x in &xs {
            want.entry(x % m).or_default().push(*x);
        }
        let want: Vec<Vec<QueryValue>> = want
            .into_iter()
            .map(|(k, v)| {
                let distinct = v.iter().collect::<BTreeSet<_>>().len() as i64;
                vec![
                    i(k),
                    i(v.len() as i64),
                    i(v.iter().sum()),
                    i(*v.iter().min().unwrap()),
                    i(*v.iter().max().unwrap()),
                    i(distinct),
                    QueryValue::List(v.iter().map(|x| i(*x)).collect()),
                ]
            })
            .collect();
        prop_assert_eq!(got, want);
    }
}

/// Writing a memory field as a property moves the field: `state` moves the lifecycle (forward
/// only), and the property then reads the field, so a later change through the API shows.
#[test]
fn a_written_state_moves_the_lifecycle() {
    let db = db();
    write(&db, "MATCH ({id: 'auth'})-[r:DEPENDS_ON]->({id: 'cache'}) SET r.state = 'ACCEPTED'");
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let accepted = ws.claims_with(Some("depends_on"), ClaimState::Accepted);
    assert_eq!(accepted.len(), 2, "the engine's lifecycle moved");
    let e =
        db.query("default", "MATCH ({id: 'auth'})-[r:DEPENDS_ON]->({id: 'cache'}) SET r.state = 'PROPOSED'", &Params::new()).unwrap_err();
    assert!(e.to_string().contains("from ACCEPTED to PROPOSED"), "{e}");
    let c = accepted.into_iter().find(|c| ws.claim(*c).unwrap().object == ws.entity_id("cache").unwrap()).unwrap();
    let mut b = WriteBatch::new("default");
    b.push(engram::Op::Deprecate { claim: c.into(), superseded_by: None });
    db.write(&b).unwrap();
    assert_eq!(rows(&db, "ALL VERSIONS MATCH ({id: 'auth'})-[r:DEPENDS_ON]->({id: 'cache'}) RETURN r.state"), vec![vec![s("DEPRECATED")]]);
    let r = write(&db, "CREATE (a)-[r:T {state: 'ACCEPTED', confidence: 0.25}]->(a) RETURN r.state, r.confidence, keys(r)");
    assert_eq!(r.rows[0][..2], [s("ACCEPTED"), QueryValue::Float(0.25)]);
}

/// Variable-length patterns over types the language wrote (case kept) take the same breadth-first
/// and closure paths as ingested ones, and an unknown type reaches nothing.
#[test]
fn variable_length_over_written_types() {
    let db = Database::in_memory();
    write(&db, "CREATE (a:A)-[:T]->(b:B)-[:T]->(c:C)-[:Tt]->(d:D)");
    assert_eq!(rows(&db, "MATCH (a:A)-[:T*]->(x) RETURN count(DISTINCT x)"), vec![vec![i(2)]]);
    assert_eq!(rows(&db, "MATCH (a:A)-[:T*1..5]->(x) RETURN count(DISTINCT x)"), vec![vec![i(2)]]);
    assert_eq!(rows(&db, "MATCH (a:A)-[:T|Tt*]->(x) RETURN count(DISTINCT x)"), vec![vec![i(3)]]);
    assert_eq!(rows(&db, "MATCH (a:A)-[:TT*]->(x) RETURN count(DISTINCT x)"), vec![vec![i(0)]]);
    assert_eq!(rows(&db, "MATCH (a:A)-[:NOPE*]->(x) RETURN count(DISTINCT x)"), vec![vec![i(0)]]);
    assert_eq!(rows(&db, "MATCH (a:A)-[:T*]->(x) RETURN x"), rows(&db, "MATCH (a:A)-[:T*]->(x) RETURN DISTINCT x"));
    write(&db, "MATCH (c:C) CREATE (c)-[:T]->(:E)");
    let mut b = WriteBatch::new("default");
    b.push(engram::Op::DeclarePredicate(DeclarePredicate::new("T").transitive()));
    db.write(&b).unwrap();
    assert_eq!(rows(&db, "MATCH (a:A)-[:T*]->(x) RETURN count(DISTINCT x)"), vec![vec![i(3)]]);
}

/// `CALL engram.forget(n)` erases for good (ALL VERSIONS does not see it), unlike DELETE; it is a
/// write, refused by a read-only view.
#[test]
fn forget_erases_for_good() {
    let db = db();
    let r = write(&db, "MATCH (n {id: 'auth'}) CALL engram.forget(n) YIELD claims RETURN claims");
    assert_eq!(r.rows, vec![vec![i(3)]]);
    assert_eq!(rows(&db, "ALL VERSIONS MATCH (n {id: 'auth'}) RETURN n").len(), 0);
    assert_eq!(rows(&db, "ALL VERSIONS MATCH ()-[r]->() WHERE r.text CONTAINS 'postgres' RETURN r").len(), 0);
    assert_eq!(rows(&db, "ALL VERSIONS MATCH ()-[r]->() RETURN count(r)"), vec![vec![i(1)]]);
    let snap = db.snapshot();
    let err =
        snap.workspace("default").unwrap().query("MATCH (n {id: 'db'}) CALL engram.forget(n) YIELD claims RETURN claims", &Params::new());
    assert_eq!(err.unwrap_err().detail, Detail::Unsupported);
}

/// A time written under `valid_until` ends the claim's valid time: `AS OF` after it no longer sees
/// the claim, and a time before its `valid_from` is refused with nothing written.
#[test]
fn a_written_valid_until_ends_the_valid_time() {
    let db = db();
    let q = "MATCH ({id: 'db'})-[r:DEPENDS_ON]->({id: 'cache'}) SET r.valid_until = '2099-01-01T00:00:00Z' RETURN r.valid_until";
    assert_eq!(write(&db, q).rows, vec![vec![s("2099-01-01T00:00:00Z")]]);
    let seen = |when: &str| rows(&db, &format!("AS OF '{when}' MATCH ({{id: 'db'}})-[r:DEPENDS_ON]->() RETURN count(r)"));
    assert_eq!(seen("2098-06-01T00:00:00Z"), vec![vec![i(1)]]);
    assert_eq!(seen("2099-06-01T00:00:00Z"), vec![vec![i(0)]]);
    let e = db.query("default", "MATCH ({id: 'db'})-[r:DEPENDS_ON]->() SET r.valid_until = 0", &Params::new()).unwrap_err();
    assert!(e.to_string().contains("valid_until"), "{e}");
}

/// Write queries run as one commit group (a server's pipeline) equal the same queries run one by
/// one: each atomic, in order (later ones see earlier writes), a failing one writing nothing;
/// and the group costs one fsync.
#[test]
fn a_group_of_write_queries_equals_them_one_by_one() {
    let texts = [
        "CREATE (:A {i: 1})",
        "MATCH (a:A {i: 1}) CREATE (a)-[:R]->(:B {j: 2})",
        "UNWIND [1, 2] AS k CREATE (:C {k: CASE k WHEN 2 THEN {bad: 1} ELSE k END})",
        "MATCH (b:B) SET b.seen = true",
        "CREATE (:D)",
    ];
    let params = Params::new();
    let dir = tempfile::tempdir().expect("tempdir");
    let grouped = Database::open(dir.path()).expect("opens");
    let one_by_one = Database::in_memory();
    let root = std::sync::Arc::new(engram::Principal::root());
    let fsyncs = grouped.commit_stats().fsyncs;
    let queries: Vec<(&str, &str, &Params)> = texts.iter().map(|t| ("default", *t, &params)).collect();
    let got = grouped.scope(root.clone()).query_group(&queries);
    assert_eq!(grouped.commit_stats().fsyncs - fsyncs, 1, "one fsync for the group");
    let want: Vec<_> = texts.iter().map(|t| one_by_one.scope(root.clone()).query("default", t, &params)).collect();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        match (g, w) {
            (Ok(g), Ok(w)) => assert_eq!((&g.rows, &g.stats), (&w.rows, &w.stats)),
            (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string()),
            other => panic!("{other:?}"),
        }
    }
    assert!(got[2].is_err(), "the failing query fails");
    let all = "MATCH (n) OPTIONAL MATCH (n)-[r]->(m) RETURN labels(n)[0] AS l, properties(n) AS p, type(r) AS t ORDER BY l";
    assert_eq!(grouped.query("default", all, &params).expect("reads").rows, one_by_one.query("default", all, &params).expect("reads").rows);
    assert_eq!(rows(&grouped, "MATCH (c:C) RETURN count(c)"), vec![vec![i(0)]], "nothing of the failed query");
}

#[test]
fn a_transaction_commits_all_its_statements_or_none() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Database::open(dir.path()).expect("opens");
    let params = Params::new();
    let mut p = Params::new();
    p.insert("name".to_owned(), s("auth"));
    // Each statement sees the writes of those before it; a read inside sees them too.
    let results = db
        .transaction(
            "default",
            &[
                ("CREATE (:Service {name: $name})", &p),
                ("MATCH (a:Service {name: 'auth'}) CREATE (a)-[:DEPENDS_ON]->(:Service {name: 'db'})", &params),
                ("MATCH (a)-[:DEPENDS_ON]->(b) RETURN a.name, b.name", &params),
            ],
        )
        .expect("commits");
    assert_eq!(results.len(), 3);
    assert_eq!(results[0].stats.nodes_created, 1);
    assert_eq!(results[1].stats.relationships_created, 1);
    assert_eq!(results[2].rows, vec![vec![s("auth"), s("db")]]);
    let fsyncs = db.commit_stats().fsyncs;
    // A failing third statement undoes the first two; the error names it.
    let err = db
        .transaction(
            "default",
            &[
                ("CREATE (:Service {name: 'cache'})", &params),
                ("MATCH (s:Service) SET s.tier = 1", &params),
                ("MATCH (s:Service {name: 'db'}) DELETE s", &params),
            ],
        )
        .expect_err("a node with relationships cannot be deleted");
    assert!(err.to_string().contains("statement 2"), "{err}");
    assert_eq!(db.commit_stats().fsyncs, fsyncs, "nothing written");
    assert_eq!(rows(&db, "MATCH (s:Service) RETURN count(s), count(s.tier)"), vec![vec![i(2), i(0)]]);
    // A statement that does not compile fails the transaction before anything runs.
    let err = db.transaction("default", &[("CREATE (:X)", &params), ("MATCH (n RETURN n", &params)]).expect_err("syntax");
    assert!(err.to_string().contains("statement 1"), "{err}");
    let err = db.transaction("default", &[("AS OF '2020-01-01' MATCH (n) RETURN n", &params)]).expect_err("temporal");
    assert!(err.to_string().contains("reads the present"), "{err}");
    assert_eq!(rows(&db, "MATCH (x:X) RETURN count(x)"), vec![vec![i(0)]]);
    drop(db);
    // One WAL record: the committed transaction is whole after reopening.
    let db = Database::open(dir.path()).expect("reopens");
    assert_eq!(rows(&db, "MATCH (a)-[:DEPENDS_ON]->(b) RETURN a.name, b.name"), vec![vec![s("auth"), s("db")]]);
    // A principal with read access only may not run one.
    let reader = std::sync::Arc::new(engram::Principal::named("r").grant("default", engram::Access::Read, false));
    assert!(db.scope(reader).transaction("default", &[("CREATE (:Y)", &params)]).is_err());
}

#[test]
fn vector_functions_follow_falkordb() {
    let db = db();
    let f = |text: &str| match &rows(&db, text)[0][0] {
        QueryValue::Float(x) => *x,
        other => panic!("{text}: {other:?}"),
    };
    assert!(f("RETURN vec.cosineDistance([1, 0], [0, 1])") - 1.0 < 1e-12);
    assert!(f("RETURN vec.cosineDistance([1, 2], [2, 4])").abs() < 1e-7);
    assert!((f("RETURN vec.cosineDistance([1, 0], [-1, 0])") - 2.0).abs() < 1e-12);
    assert!((f("RETURN vec.euclideanDistance([0, 0], [3, 4])") - 5.0).abs() < 1e-12);
    // vecf32 rounds each component to f32; a vector stored as a property reads back and compares.
    assert_eq!(
        rows(&db, "RETURN vecf32([0.1, 2])"),
        vec![vec![QueryValue::List(vec![QueryValue::Float(f64::from(0.1f32)), QueryValue::Float(2.0)])]]
    );
    write(&db, "CREATE (:Doc {k: 'a', embedding: vecf32([1.0, 0.0])}), (:Doc {k: 'b', embedding: vecf32([0.6, 0.8])})");
    assert_eq!(
        rows(&db, "MATCH (d:Doc) RETURN d.k ORDER BY vec.cosineDistance(d.embedding, vecf32([0.0, 1.0]))"),
        vec![vec![s("b")], vec![s("a")]]
    );
    assert_eq!(rows(&db, "RETURN vec.cosineDistance(null, [1])"), vec![vec![QueryValue::Null]]);
    for bad in ["RETURN vec.cosineDistance([1, 2], [1])", "RETURN vecf32(['x'])", "RETURN vecf32('x')"] {
        assert!(db.query("default", bad, &Params::new()).is_err(), "{bad}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]

    /// A distance reads a stored vector in place; it answers exactly (bit for bit, errors and
    /// nulls alike) as on the same list copied out first (`[x IN n.v | x]`), for nodes and
    /// relationships, either argument, either function, lists with a wrong item or length.
    #[test]
    fn distances_read_in_place_equal_those_of_copies(
        vs in prop::collection::vec(prop::collection::vec(-8i32..8, 0..6), 1..5),
        q in prop::collection::vec(-8i32..8, 0..6),
        odd in prop::sample::select(vec!["", ", 'x'", ", null", ", 1.5"]),
        euclid in any::<bool>(),
    ) {
        let db = Database::in_memory();
        let list = |v: &[i32]| format!("[{}]", v.iter().map(|x| if x % 2 == 0 { x.to_string() } else { format!("{x}.1") }).collect::<Vec<_>>().join(", "));
        for (i, v) in vs.iter().enumerate() {
            let stored = if i == 0 && !odd.is_empty() && !v.is_empty() { format!("{}{odd}]", &list(v)[..list(v).len() - 1]) } else { list(v) };
            let made = db.query("default", &format!("CREATE (:V {{i: {i}, v: {stored}}})-[:R {{v: {stored}}}]->(:W)"), &Params::new());
            if made.is_err() {
                // A list with a null or a mixed one may not be stored: the same list as written.
                db.query("default", &format!("CREATE (:V {{i: {i}, v: {}}})-[:R {{v: {}}}]->(:W)", list(v), list(v)), &Params::new()).expect("stores");
            }
        }
        let f = if euclid { "vec.euclideanDistance" } else { "vec.cosineDistance" };
        let q = list(&q);
        for (a, b) in [("n.v", q.as_str()), (q.as_str(), "n.v"), ("n.v", "r.v"), ("n.missing", "n.v")] {
            let copied = |x: &str| if x.contains('.') && !x.starts_with('[') { format!("[x IN {x} | x]") } else { x.to_owned() };
            let in_place = format!("MATCH (n:V)-[r:R]->() RETURN n.i, {f}({a}, {b}) ORDER BY n.i");
            let copy = format!("MATCH (n:V)-[r:R]->() RETURN n.i, {f}({}, {}) ORDER BY n.i", copied(a), copied(b));
            let one = run_with(&db, &in_place, &Params::new()).map(|r| format!("{:?}", r.rows)).map_err(|e| (e.kind, e.detail));
            let two = run_with(&db, &copy, &Params::new()).map(|r| format!("{:?}", r.rows)).map_err(|e| (e.kind, e.detail));
            prop_assert_eq!(one, two, "{}", in_place);
        }
    }
}

/// `cached` (FalkorDB's `Cached execution`) is false on a text's first run and true once a run
/// reuses its plan, whatever the parameters; looking a plan up without running it (as a server
/// does to route a write) is no run; EXPLAIN runs nothing.
#[test]
fn a_result_says_whether_its_plan_was_reused() {
    let db = db();
    let text = "MATCH (n) WHERE n.name = $n RETURN count(n) // reused-plan test";
    engram::exec::cached_plan(text).expect("plans");
    let params = |name: &str| Params::from([("n".to_owned(), s(name))]);
    let run = |name: &str| db.query("default", text, &params(name)).expect("runs");
    let explained = db.query("default", &format!("EXPLAIN {text}"), &params("x")).expect("explains");
    assert!(!explained.cached);
    let (first, again) = (run("Postgres"), run("Redis"));
    assert_eq!((first.rows.clone(), again.rows.clone()), (vec![vec![QueryValue::Int(1)]], vec![vec![QueryValue::Int(1)]]));
    assert!(!first.cached && again.cached);
    let w = "CREATE (:Reused {v: $n}) // reused-plan test";
    let write = |v: &str| db.query("default", w, &Params::from([("n".to_owned(), s(v))])).expect("writes").cached;
    assert_eq!((write("a"), write("b")), (false, true));
}

#[test]
fn index_statements_are_kept_listed_and_change_no_result() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Database::open(dir.path()).expect("opens");
    let p = Params::new();
    write(&db, "CREATE (:Entity {uuid: 'u1', name: 'Ann'})");
    let before = rows(&db, "MATCH (n:Entity {uuid: 'u1'}) RETURN n.name");
    let made = db.query("default", "CREATE INDEX FOR (n:Entity) ON (n.uuid, n.name)", &p).expect("declares");
    assert_eq!((made.stats.indexes_added, made.stats.indexes_removed), (2, 0), "one per property");
    db.query("default", "CREATE FULLTEXT INDEX FOR ()-[e:RELATES_TO]-() ON (e.fact)", &p).expect("declares");
    // FalkorDB's refusal, which its clients look for, and the form that does not refuse.
    let again = db.query("default", "CREATE INDEX FOR (n:Entity) ON (n.uuid)", &p).expect_err("already");
    assert!(again.to_string().contains("already indexed"), "{again}");
    let none = db.query("default", "CREATE INDEX IF NOT EXISTS FOR (n:Entity) ON (n.uuid)", &p).expect("no-op");
    assert_eq!(none.stats, engram::QueryStats::default(), "nothing declared");
    assert_eq!(rows(&db, "MATCH (n:Entity {uuid: 'u1'}) RETURN n.name"), before, "an index changes no result");
    // Kept across a reopen; listed one row per label.
    drop(db);
    let db = Database::open(dir.path()).expect("reopens");
    let listed = rows(&db, "CALL db.indexes() YIELD label, properties, entitytype RETURN label, properties, entitytype");
    assert_eq!(
        listed,
        vec![
            vec![s("Entity"), QueryValue::List(vec![s("uuid"), s("name")]), s("NODE")],
            vec![s("RELATES_TO"), QueryValue::List(vec![s("fact")]), s("RELATIONSHIP")]
        ]
    );
    let dropped = db.query("default", "DROP INDEX ON :Entity(name)", &p).expect("drops");
    assert_eq!((dropped.stats.indexes_added, dropped.stats.indexes_removed), (0, 1));
    assert!(db.query("default", "DROP INDEX ON :Entity(name)", &p).is_err(), "no such index");
    // Not in a transaction; and a reader may not declare one.
    assert!(db.transaction("default", &[("CREATE INDEX ON :X(y)", &p)]).is_err());
    let reader = std::sync::Arc::new(engram::Principal::named("r").grant("default", engram::Access::Read, false));
    assert!(db.scope(reader).query("default", "CREATE INDEX ON :X(y)", &p).is_err());
    assert!(engram::exec::writes("CREATE INDEX ON :X(y)").expect("parses"));
    // Planning an index statement never puts it in the plan cache, whose hit is how a query
    // skips the index-statement check.
    for t in ["CREATE INDEX ON :X(y)", "CALL db.idx.fulltext.createNodeIndex('X', 'y')"] {
        let _ = engram::exec::cached_plan(t);
        let _ = engram::exec::cached_plan(t);
        let e = db.snapshot().workspace("default").expect("ws").query(t, &p).expect_err("alone");
        assert!(e.to_string().contains("runs alone"), "{t}: {e}");
    }
}

#[test]
fn full_text_procedures_search_the_declared_properties() {
    let db = db();
    write(&db, "CREATE (:Episodic {content: 'Alice is shipping the release', source: 'chat about hiking', group_id: 'g1'})");
    write(&db, "CREATE (:Episodic {content: 'Bob went hiking twice', source: 'chat', group_id: 'g2'})");
    write(&db, "CREATE (a:E {name: 'a'})-[:RELATES_TO {fact: 'Alice ships releases', group_id: 'g1'}]->(b:E {name: 'b'})");
    write(&db, "CREATE (a:E {name: 'c'})-[:RELATES_TO {fact: 'Bob hikes', group_id: 'g2'}]->(b:E {name: 'd'})");
    let q = |text: &str| rows(&db, text);
    // Without a declaration every string property is searched; stems match ("hiking" ~ "hikes").
    assert_eq!(
        q("CALL db.idx.fulltext.queryNodes('Episodic', 'hiking') YIELD node, score RETURN node.group_id ORDER BY node.group_id"),
        vec![vec![s("g1")], vec![s("g2")]]
    );
    // Declared on `content` only: `source` is no longer searched.
    db.query("default", "CALL db.idx.fulltext.createNodeIndex('Episodic', 'content')", &Params::new()).expect("declares");
    assert_eq!(q("CALL db.idx.fulltext.queryNodes('Episodic', 'hiking') YIELD node RETURN node.group_id"), vec![vec![s("g2")]]);
    // RediSearch's field restriction and alternatives, best first.
    assert_eq!(
        q(
            r#"CALL db.idx.fulltext.queryRelationships('RELATES_TO', '(@group_id:"g1") (Alice | ships | hikes)') YIELD relationship, score RETURN relationship.fact, score"#
        ),
        vec![vec![s("Alice ships releases"), QueryValue::Float(2.0)]]
    );
    assert_eq!(
        q("CALL db.idx.fulltext.queryRelationships('RELATES_TO', 'hike*') YIELD relationship RETURN relationship.fact"),
        vec![vec![s("Bob hikes")]]
    );
    // What is deleted is not found; an unknown label finds nothing; a malformed query is an error.
    write(&db, "MATCH ()-[r:RELATES_TO {group_id: 'g2'}]->() DELETE r");
    assert!(q("CALL db.idx.fulltext.queryRelationships('RELATES_TO', 'hikes') YIELD relationship RETURN relationship").is_empty());
    assert!(q("CALL db.idx.fulltext.queryNodes('Nope', 'x') YIELD node RETURN node").is_empty());
    let err = db
        .query("default", "CALL db.idx.fulltext.queryNodes('Episodic', '(unclosed') YIELD node RETURN node", &Params::new())
        .expect_err("bad");
    assert!(err.to_string().contains("`)` is missing"), "{err}");
}

#[test]
fn call_subqueries_run_per_row_with_imported_variables() {
    let db = db();
    write(&db, "CREATE (a:A {x: 1})-[:R]->(:B {x: 2}), (a)<-[:S]-(:C {x: 3}), (:A {x: 9})");
    // UNION ALL of both directions, per outer row; a row the subquery gives nothing is dropped.
    assert_eq!(
        rows(&db, "MATCH (a:A) CALL { WITH a MATCH (a)-[r]->(t) RETURN t.x AS tx UNION ALL WITH a MATCH (a)<-[r]-(t) RETURN t.x AS tx } RETURN a.x, tx ORDER BY tx"),
        vec![vec![i(1), i(2)], vec![i(1), i(3)]]
    );
    // An aggregate inside counts per outer row; the outer row's variables survive it.
    assert_eq!(
        rows(&db, "MATCH (a:A) CALL { WITH a MATCH (a)--(b) RETURN count(b) AS n } RETURN a.x, n ORDER BY a.x"),
        vec![vec![i(1), i(2)], vec![i(9), i(0)]]
    );
    // Plain UNION keeps a row once per outer row; without an importing WITH the outer variables
    // are not seen; the map projection LlamaIndex sends works inside.
    assert_eq!(rows(&db, "CALL { MATCH (b:B) RETURN b.x AS v UNION MATCH (b:B) RETURN b.x AS v } RETURN v"), vec![vec![i(2)]]);
    assert_eq!(
        rows(&db, "MATCH (e:A {x: 1}) CALL { WITH e MATCH (e)-[r]->(t) RETURN e{.*, x: null} AS p, r{.*} AS rp } RETURN p, rp"),
        vec![vec![
            QueryValue::Map([("x".to_owned(), QueryValue::Null)].into_iter().collect()),
            QueryValue::Map(std::collections::BTreeMap::default())
        ]]
    );
    // A scope clause names what the subquery sees: `(a)`, `(*)`, `()`.
    assert_eq!(
        rows(&db, "MATCH (a:A) CALL (a) { MATCH (a)-[r]->(t) RETURN t.x AS tx UNION ALL MATCH (a)<-[r]-(t) RETURN t.x AS tx } RETURN a.x, tx ORDER BY tx"),
        vec![vec![i(1), i(2)], vec![i(1), i(3)]]
    );
    assert_eq!(rows(&db, "MATCH (a:A {x: 9}) WITH a, 5 AS five CALL (*) { RETURN a.x + five AS y } RETURN y"), vec![vec![i(14)]]);
    assert_eq!(
        rows(&db, "MATCH (a:A) CALL () { MATCH (b:B) RETURN b.x AS v } RETURN a.x, v ORDER BY a.x"),
        vec![vec![i(1), i(2)], vec![i(9), i(2)]]
    );
    // A write after it sees its rows.
    write(&db, "MATCH (a:A {x: 1}) CALL { WITH a MATCH (a)-->(b) RETURN b } CREATE (b)-[:T]->(:D)");
    assert_eq!(rows(&db, "MATCH (:B)-[:T]->(d:D) RETURN count(d)"), vec![vec![i(1)]]);
    // What is refused, by name.
    for (bad, why) in [
        ("MATCH (a:A) CALL { WITH a RETURN a.x AS a } RETURN a", "already defined outside"),
        ("MATCH (a:A) CALL { WITH a MATCH (a)-->(b) } RETURN a", "ends with RETURN"),
        ("CALL { CREATE (:Z) UNION CREATE (:Z) } RETURN 1", "ends with RETURN"),
        ("MATCH (a:A) CALL () { RETURN a.x AS v } RETURN v", "variable `a` not defined"),
        ("MATCH (a:A) WITH a, 1 AS b CALL (b) { RETURN a.x AS v } RETURN v", "variable `a` not defined"),
        ("CALL (zz) { RETURN 1 AS one } RETURN one", "variable `zz` not defined"),
        ("MATCH (a:A) CALL (a) RETURN a", "`{` opening the subquery"),
        ("UNWIND [1] AS x CALL (x) { CREATE (:Z) } IN TRANSACTIONS OF 10 ROWS ON ERROR RETRY", "ON ERROR RETRY is not supported"),
        ("CALL { RETURN 1 AS x UNION RETURN 2 AS y } RETURN x", "same columns"),
        ("CALL { RETURN 1 AS x RETURN x", "expected"),
    ] {
        let e = db.query("default", bad, &Params::new()).expect_err(bad);
        assert!(e.to_string().contains(why), "{bad}: {e}");
    }
}

#[test]
fn call_subqueries_write_row_by_row() {
    let db = db();
    write(&db, "UNWIND range(1, 3) AS i CREATE (:N {i: i})");
    // A unit subquery (no RETURN) passes each outer row on once, whatever it matched inside.
    let r = write(&db, "MATCH (n:N) CALL (n) { SET n.j = n.i * 10 } RETURN n.i, n.j ORDER BY n.i");
    assert_eq!(r.rows, vec![vec![i(1), i(10)], vec![i(2), i(20)], vec![i(3), i(30)]]);
    assert_eq!(r.stats.properties_set, 3);
    let r = write(&db, "UNWIND range(1, 4) AS k CALL { WITH k MATCH (n:N) WHERE n.i < k SET n.seen = k } RETURN count(*)");
    assert_eq!(r.rows, vec![vec![i(4)]]);
    assert_eq!(rows(&db, "MATCH (n:N) RETURN n.i, n.seen ORDER BY n.i"), vec![vec![i(1), i(4)], vec![i(2), i(4)], vec![i(3), i(4)]]);
    // One that returns joins its rows to the outer row, as a read one does.
    let r = write(&db, "MATCH (n:N) CALL { WITH n CREATE (m:M {from: n.i}) RETURN m } RETURN n.i, m.from ORDER BY n.i");
    assert_eq!(r.rows, vec![vec![i(1), i(1)], vec![i(2), i(2)], vec![i(3), i(3)]]);
    assert_eq!(r.stats.nodes_created, 3);
    // Rows run in order, each seeing what the ones before it wrote: MERGE finds the node the
    // first 1 created, and a counter adds up.
    let r = write(&db, "UNWIND [1, 1, 2] AS k CALL { WITH k MERGE (x:K {k: k}) RETURN id(x) AS x } RETURN k, x ORDER BY k");
    assert_eq!(r.rows[0][1], r.rows[1][1]);
    assert_ne!(r.rows[0][1], r.rows[2][1]);
    assert_eq!(r.stats.nodes_created, 2);
    write(&db, "CREATE (:Counter {n: 0})");
    write(&db, "UNWIND range(1, 4) AS i CALL { WITH i MATCH (c:Counter) SET c.n = c.n + i }");
    assert_eq!(rows(&db, "MATCH (c:Counter) RETURN c.n"), vec![vec![i(10)]]);
    // UNION of writing parts, each returning; a delete inside.
    let r = write(&db, "CALL { CREATE (:U) RETURN 1 AS a UNION ALL CREATE (:U) RETURN 2 AS a } RETURN a ORDER BY a");
    assert_eq!((r.rows.len(), r.stats.nodes_created), (2, 2));
    write(&db, "MATCH (u:U) CALL { WITH u DELETE u }");
    assert_eq!(rows(&db, "MATCH (u:U) RETURN count(u)"), vec![vec![i(0)]]);
    // The query is still one transaction: a failure in a later row's run writes nothing at all.
    let e =
        db.query("default", "UNWIND [1, 2, 0] AS k CALL { WITH k CREATE (:F {v: 10 / k}) }", &Params::new()).expect_err("division by zero");
    assert!(e.to_string().contains("zero"), "{e}");
    assert_eq!(rows(&db, "MATCH (f:F) RETURN count(f)"), vec![vec![i(0)]]);
    // A read-only call refuses it before running anything.
    let snap = db.snapshot();
    let e = snap.workspace("default").expect("ws").query("MATCH (n:N) CALL { WITH n SET n.x = 1 }", &Params::new()).expect_err("writes");
    assert!(e.to_string().contains("this query writes"), "{e}");
    assert_eq!(rows(&db, "MATCH (n:N) WHERE n.x IS NOT NULL RETURN count(n)"), vec![vec![i(0)]]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(24), ..ProptestConfig::default() })]
    /// A writing subquery per row equals FOREACH over the same list (and MERGE finds what the
    /// rows before it made).
    #[test]
    fn call_subquery_writes_equal_foreach(keys in prop::collection::vec(0i64..6, 0..12)) {
        let a = db();
        let b = db();
        let list = QueryValue::List(keys.iter().map(|k| i(*k)).collect());
        let p: Params = [("l".to_owned(), list)].into_iter().collect();
        let ra = a.query("default", "UNWIND $l AS k CALL { WITH k MERGE (x:K {k: k}) ON MATCH SET x.n = x.n + 1 ON CREATE SET x.n = 1 } RETURN count(*)", &p).expect("runs");
        b.query("default", "FOREACH (k IN $l | MERGE (x:K {k: k}) ON MATCH SET x.n = x.n + 1 ON CREATE SET x.n = 1)", &p).expect("runs");
        prop_assert_eq!(&ra.rows, &vec![vec![i(keys.len() as i64)]]);
        let q = "MATCH (x:K) RETURN x.k, x.n ORDER BY x.k";
        prop_assert_eq!(rows(&a, q), rows(&b, q));
    }
}

/// The values the property-index tests write and look up: equal numbers of both kinds, a
/// string, booleans, a list (not indexed) and a date; NaN only to look up (it cannot be stored).
fn indexed_value(nan: bool) -> impl Strategy<Value = QueryValue> {
    let floats = if nan { vec![0.0, -0.0, 1.0, 1.5, f64::NAN] } else { vec![0.0, -0.0, 1.0, 1.5] };
    prop_oneof![
        (0i64..3).prop_map(QueryValue::Int),
        prop::sample::select(floats).prop_map(QueryValue::Float),
        // Strings alike in their first eight bytes, integers that floats round together: where
        // the ordered index's words tie.
        prop::sample::select(vec!["a", "b", "abcdefgh1", "abcdefgh2", "abcdefgh"]).prop_map(|s| QueryValue::String(s.to_owned())),
        prop::sample::select(vec![9_007_199_254_740_992i64, 9_007_199_254_740_993, -9_007_199_254_740_993]).prop_map(QueryValue::Int),
        Just(QueryValue::Float(9_007_199_254_740_992.0)),
        any::<bool>().prop_map(QueryValue::Bool),
        Just(QueryValue::List(vec![QueryValue::Int(1)])),
        Just(QueryValue::Temporal(engram::Temporal::Date(18_262))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]
    /// A node pattern's property equality looked up in the property index finds exactly what a
    /// scan testing every node finds, after creates, overwrites, removals and deletes (stale index
    /// entries), in the present and as of before the changes, with and without a label; and
    /// MERGE, which looks up what the same transaction wrote, keeps one node per equal value.
    #[test]
    fn property_lookups_equal_scans(
        nodes in prop::collection::vec((any::<bool>(), indexed_value(false), prop::option::of(indexed_value(false))), 1..24),
        changes in prop::collection::vec((0usize..24, prop::option::of(indexed_value(false)), any::<bool>()), 0..12),
        want in indexed_value(true),
        wants in prop::collection::vec(prop::option::of(indexed_value(true)), 0..4),
    ) {
        let (clock, db) = clocked();
        for (a, k, j) in &nodes {
            let mut p = Params::new();
            p.insert("k".to_owned(), k.clone());
            p.insert("j".to_owned(), j.clone().unwrap_or(QueryValue::Null));
            let label = if *a { "A" } else { "B" };
            db.query("default", &format!("CREATE (:{label} {{k: $k, j: $j}})"), &p).expect("create");
        }
        clock.advance_seconds(10);
        for (i, v, delete) in &changes {
            let mut p = Params::new();
            p.insert("i".to_owned(), QueryValue::Int((*i % nodes.len()) as i64));
            if *delete {
                db.query("default", "MATCH (n) WHERE id(n) = $i DETACH DELETE n", &p).expect("delete");
            } else {
                p.insert("v".to_owned(), v.clone().unwrap_or(QueryValue::Null));
                db.query("default", "MATCH (n) WHERE id(n) = $i SET n.k = $v", &p).expect("set");
            }
        }
        let mut p = Params::new();
        p.insert("v".to_owned(), want.clone());
        for when in ["", "AS OF '2030-01-01T00:00:05Z' "] {
            for label in [":A", ""] {
                let looked = db.query("default", &format!("{when}MATCH (n{label} {{k: $v}}) RETURN id(n)"), &p).expect("lookup").rows;
                let scanned = db.query("default", &format!("{when}MATCH (n{label}) WHERE coalesce(n.k, null) = $v RETURN id(n)"), &p).expect("scan").rows;
                prop_assert_eq!(&looked, &scanned, "{}{} {:?}", when, label, want);
                // The WHERE form the planner turns into the pattern's map, too.
                let moved = db.query("default", &format!("{when}MATCH (n{label}) WHERE n.k = $v RETURN id(n)"), &p).expect("where").rows;
                prop_assert_eq!(&moved, &scanned);
            }
        }
        // Ranges: one bound or two, strict or not, of any kind (null, NaN, a list).
        p.insert("w".to_owned(), wants.first().cloned().flatten().unwrap_or(QueryValue::Null));
        for when in ["", "AS OF '2030-01-01T00:00:05Z' "] {
            for (label, cond) in [
                (":A", "n.k > $v"),
                ("", "n.k >= $v"),
                ("", "$v > n.k"),
                (":A", "n.k <= $v"),
                ("", "$v <= n.k AND n.k < $w"),
                (":B", "n.k > $v AND n.k >= $w"),
            ] {
                let looked = format!("{when}MATCH (n{label}) WHERE {cond} RETURN id(n)");
                let plan = db.query("default", &format!("EXPLAIN {looked}"), &p).expect("explain").plan.unwrap_or_default();
                prop_assert!(plan.contains("NodeByPropertyRange"), "{}", plan);
                let scanned = format!("{when}MATCH (n{label}) WHERE {} RETURN id(n)", cond.replace("n.k", "coalesce(n.k, null)"));
                let (x, y) = (db.query("default", &looked, &p).expect("range").rows, db.query("default", &scanned, &p).expect("scan").rows);
                prop_assert_eq!(x, y, "{} {:?} {:?}", looked, want, wants);
            }
        }
        // `IN` a list (nulls among its values), looked up per value.
        p.insert("vs".to_owned(), QueryValue::List(wants.iter().map(|w| w.clone().unwrap_or(QueryValue::Null)).collect()));
        for when in ["", "AS OF '2030-01-01T00:00:05Z' "] {
            for label in [":A", ""] {
                let looked = db.query("default", &format!("{when}MATCH (n{label}) WHERE n.k IN $vs RETURN id(n)"), &p).expect("lookup").rows;
                let scanned = db.query("default", &format!("{when}MATCH (n{label}) WHERE coalesce(n.k, null) IN $vs RETURN id(n)"), &p).expect("scan").rows;
                prop_assert_eq!(&looked, &scanned, "{}{} {:?}", when, label, wants);
            }
        }
        // MERGE by each value in turn, in one transaction: one node per class of equal values.
        let values: Vec<QueryValue> = nodes.iter().map(|(_, k, _)| k.clone()).collect();
        let mut p = Params::new();
        p.insert("vs".to_owned(), QueryValue::List(values.clone()));
        db.query("default", "UNWIND $vs AS v MERGE (:M {k: v})", &p).expect("merge");
        let want_count = db.query("default", "UNWIND $vs AS v RETURN count(DISTINCT v)", &p).expect("count").rows;
        prop_assert_eq!(rows(&db, "MATCH (m:M) RETURN count(m)"), want_count);
    }
}

/// Values for the ordered reads: ties (equal numbers of both kinds, strings alike in their first
/// eight bytes, integers that floats round together) and every indexed class, mixed.
fn ordered_value() -> impl Strategy<Value = QueryValue> {
    prop_oneof![
        4 => (0i64..8).prop_map(QueryValue::Int),
        1 => prop::sample::select(vec![0.5, 1.0, 2.5, 29.5]).prop_map(QueryValue::Float),
        2 => prop::sample::select(vec!["a", "b", "abcdefgh", "abcdefgh1", "abcdefgh2", "abcdefgi", "zz"]).prop_map(|s| QueryValue::String(s.to_owned())),
        1 => prop::sample::select(vec![9_007_199_254_740_992i64, 9_007_199_254_740_993, 9_007_199_254_740_994]).prop_map(QueryValue::Int),
        1 => any::<bool>().prop_map(QueryValue::Bool),
        1 => (18_260i64..18_270).prop_map(|d| QueryValue::Temporal(engram::Temporal::Date(d))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(32), ..ProptestConfig::default() })]
    /// `ORDER BY n.k … LIMIT` over a range of `n.k`, read in the property index's order a stretch
    /// at a time, gives exactly the rows of the scan and full sort it replaces: values that tie
    /// (equal, or alike in the index's words) and of every class, filters keeping few rows (so
    /// several stretches), either direction, SKIP, the key through WITH and an alias, a hop after
    /// the seek; after overwrites, removals and deletes (stale entries), now and as of before.
    #[test]
    fn ordered_range_reads_equal_sorts(
        nodes in prop::collection::vec((any::<bool>(), prop::option::of(ordered_value()), 0i64..4), 1..160),
        changes in prop::collection::vec((0usize..160, prop::option::of(ordered_value()), any::<bool>()), 0..16),
        (lo, hi) in (ordered_value(), prop::option::of(ordered_value())),
        (skip, take, g) in (0i64..4, 0i64..12, 0i64..4),
        gs in prop::collection::vec(0i64..4, 0..4),
    ) {
        let (clock, db) = clocked();
        let maps = |a: bool| {
            QueryValue::List(
                nodes
                    .iter()
                    .filter(|n| n.0 == a)
                    .map(|(_, k, g)| QueryValue::Map([("k".to_owned(), k.clone().unwrap_or(QueryValue::Null)), ("g".to_owned(), i(*g))].into_iter().collect()))
                    .collect(),
            )
        };
        let p: Params = [("a".to_owned(), maps(true)), ("b".to_owned(), maps(false))].into_iter().collect();
        db.query("default", "UNWIND $a AS r CREATE (:A {k: r.k, g: r.g})", &p).expect("create A");
        db.query("default", "UNWIND $b AS r CREATE (:B {k: r.k, g: r.g})", &p).expect("create B");
        // Nodes of group 0 get two relationships, of group 1 one, the others none.
        db.query("default", "MATCH (a:A) WHERE a.g < 2 CREATE (a)-[:R]->(a)", &Params::new()).expect("rels");
        db.query("default", "MATCH (a:A) WHERE a.g = 0 CREATE (a)-[:R]->(a)", &Params::new()).expect("rels");
        clock.advance_seconds(10);
        for (n, v, delete) in &changes {
            let mut p = Params::new();
            p.insert("i".to_owned(), i((*n % nodes.len()) as i64));
            if *delete {
                db.query("default", "MATCH (n) WHERE id(n) = $i DETACH DELETE n", &p).expect("delete");
            } else {
                p.insert("v".to_owned(), v.clone().unwrap_or(QueryValue::Null));
                db.query("default", "MATCH (n) WHERE id(n) = $i SET n.k = $v", &p).expect("set");
            }
        }
        let p: Params = [
            ("lo".to_owned(), lo.clone()),
            ("hi".to_owned(), hi.clone().unwrap_or(QueryValue::Null)),
            ("s".to_owned(), i(skip)),
            ("l".to_owned(), i(take)),
            ("g".to_owned(), i(g)),
            ("gs".to_owned(), QueryValue::List(gs.iter().map(|g| i(*g)).collect())),
        ]
        .into_iter()
        .collect();
        let upper = if hi.is_some() { " AND n.k < $hi" } else { "" };
        for when in ["", "AS OF '2030-01-01T00:00:05Z' "] {
            for desc in ["", " DESC"] {
                for shape in [
                    format!("MATCH (n:A) WHERE n.k >= $lo{upper} AND n.g <> $g RETURN n.k, id(n) ORDER BY n.k{desc}, id(n) SKIP $s LIMIT $l"),
                    format!("MATCH (n) WHERE $lo <= n.k{upper} WITH n, n.g AS g WHERE g = $g RETURN n.k AS v, id(n) AS i ORDER BY v{desc}, i SKIP $s LIMIT $l"),
                    format!("MATCH (n:A)-[r:R]->(x) WHERE n.k > $lo{upper} RETURN n.k, id(r) ORDER BY n.k{desc}, id(r) LIMIT $l"),
                    // The lookup by `IN` the planner chose, read in order instead until that
                    // costs more than it (then the lookup runs).
                    format!("MATCH (n) WHERE n.g IN $gs AND n.k >= $lo{upper} RETURN n.k, id(n) ORDER BY n.k{desc}, id(n) SKIP $s LIMIT $l"),
                ] {
                    let looked = format!("{when}{shape}");
                    let plan = db.query("default", &format!("EXPLAIN {looked}"), &p).expect("explain").plan.unwrap_or_default();
                    prop_assert!(plan.contains("in order"), "{}", plan);
                    prop_assert_eq!(shape.contains("IN $gs"), plan.contains("or by g IN"), "{}", plan);
                    let scanned = looked.replace("n.k >", "coalesce(n.k, null) >").replace("<= n.k", "<= coalesce(n.k, null)").replace("AND n.k <", "AND coalesce(n.k, null) <");
                    let (x, y) = (db.query("default", &looked, &p).expect("ordered").rows, db.query("default", &scanned, &p).expect("scan").rows);
                    prop_assert_eq!(x, y, "{} {:?} {:?}", looked, lo, hi);
                }
            }
        }
    }
}

/// Where an ORDER BY cannot be read from a range seek's order, the seek reads no order: another
/// key first, no LIMIT, an aggregation or DISTINCT between, the key's slot written over.
#[test]
fn ordered_range_reads_only_where_they_hold() {
    let db = db();
    write(&db, "UNWIND range(1, 50) AS x CREATE (:O {k: x, j: 50 - x})");
    let plan = |q: &str| run_with(&db, &format!("EXPLAIN {q}"), &Params::new()).expect("explain").plan.unwrap_or_default();
    assert!(plan("MATCH (n:O) WHERE n.k > 3 RETURN n.j ORDER BY n.k DESC LIMIT 2").contains("in order DESC"));
    for q in [
        "MATCH (n:O) WHERE n.k > 3 RETURN n.k ORDER BY n.j LIMIT 2",
        "MATCH (n:O) WHERE n.k > 3 RETURN n.k ORDER BY n.k",
        "MATCH (n:O) WHERE n.k > 3 RETURN DISTINCT n.k ORDER BY n.k LIMIT 2",
        "MATCH (n:O) WHERE n.k > 3 WITH n.j AS k, count(*) AS c RETURN k ORDER BY k LIMIT 2",
        "MATCH (n:O) WHERE n.k > 3 WITH n.j AS n RETURN n ORDER BY n LIMIT 2",
        "MATCH (n:O) WHERE n.k > 3 RETURN n.k ORDER BY n.k SKIP 2",
    ] {
        assert!(!plan(q).contains("in order"), "{q}: {}", plan(q));
    }
    assert_eq!(rows(&db, "MATCH (n:O) WHERE n.k > 3 RETURN n.j ORDER BY n.k DESC LIMIT 2"), vec![vec![i(0)], vec![i(1)]]);
    assert_eq!(rows(&db, "MATCH (n:O) WHERE n.k > 3 RETURN n.k ORDER BY n.k LIMIT 0"), Vec::<Vec<QueryValue>>::new());
    // A bound the index cannot place (a list) reads every candidate, as before.
    assert_eq!(rows(&db, "MATCH (n:O) WHERE n.k > [1] RETURN n.k ORDER BY n.k LIMIT 2"), Vec::<Vec<QueryValue>>::new());
    // A value set away and back is held twice by the index (once in a sealed run, once since):
    // the node still comes once.
    write(&db, "UNWIND range(1, 300) AS x CREATE (:D {k: x % 7})");
    write(&db, "MATCH (n:D) WITH n ORDER BY id(n) LIMIT 1 SET n.k = 100");
    write(&db, "MATCH (n:D) WITH n ORDER BY id(n) LIMIT 1 SET n.k = 1");
    let ordered = rows(&db, "MATCH (n:D) WHERE n.k >= 0 RETURN id(n) ORDER BY n.k, id(n) LIMIT 1000");
    assert_eq!(ordered, rows(&db, "MATCH (n:D) WHERE coalesce(n.k, null) >= 0 RETURN id(n) ORDER BY n.k, id(n) LIMIT 1000"));
    assert_eq!(ordered.len(), 300);
    // A lookup by `IN` read in order instead: in order while few nodes are read (three rows of a
    // group of 40 in 2,000), by the lookup once the read in order has taken more than it gives
    // (thirty rows of it; two rows wanted of eight).
    write(&db, "UNWIND range(1, 2000) AS x CREATE (:T {t: x, g: x % 50, h: x % 500})");
    for (q, want) in [
        ("MATCH (n:T) WHERE n.g IN [0] AND n.t >= 0 RETURN n.t ORDER BY n.t LIMIT 3", vec![50, 100, 150]),
        ("MATCH (n:T) WHERE n.g IN [0] AND n.t >= 0 RETURN n.t ORDER BY n.t LIMIT 30", (50..=1500).step_by(50).collect()),
        (
            "MATCH (n:T) WHERE n.h IN [7, 8] AND n.t < 5000 RETURN n.t ORDER BY n.t DESC LIMIT 40",
            vec![1508, 1507, 1008, 1007, 508, 507, 8, 7],
        ),
    ] {
        assert!(plan(q).contains("in order"), "{}", plan(q));
        assert_eq!(rows(&db, q), want.into_iter().map(|k| vec![i(k)]).collect::<Vec<_>>(), "{q}");
    }
}

/// `MATCH (n:L) RETURN count(*)` counts the label's nodes without a row each: the same counts as
/// the rows give, with labels added later, deletes, every version, and several input rows.
#[test]
fn label_counts_equal_counted_rows() {
    let db = db();
    write(&db, "UNWIND range(1, 50) AS x CREATE (:P {x: x})");
    write(&db, "MATCH (n:P) WHERE n.x % 3 = 0 SET n:Q");
    write(&db, "MATCH (n:P) WHERE n.x % 5 = 0 DETACH DELETE n");
    write(&db, "UNWIND range(1, 7) AS x CREATE (:Q)");
    for (q, want) in [
        ("MATCH (n:P) RETURN count(*)", 40),
        ("MATCH (n:Q) RETURN count(n)", 20),
        ("ALL VERSIONS MATCH (n:P) RETURN count(*)", 50),
        ("UNWIND [1, 2, 3] AS x MATCH (n:Q) RETURN count(*)", 60),
        ("MATCH (n:Nothing) RETURN count(*)", 0),
    ] {
        assert_eq!(rows(&db, q), vec![vec![i(want)]], "{q}");
        assert_eq!(rows(&db, &q.replace(" RETURN", " WHERE n IS NOT NULL RETURN")), vec![vec![i(want)]], "{q}");
    }
    let all = rows(&db, "MATCH (n) RETURN count(*)");
    assert_eq!(all, rows(&db, "MATCH (n) WHERE n IS NOT NULL RETURN count(*)"));
}

/// A node seek reads the index that counts the fewest candidates for the values of the run, as
/// PROFILE shows: the most selective equality wherever it stands in the pattern, an equality or
/// an `IN` beside a range either way round, one cached plan choosing differently per parameters.
/// (A range reads its bounds inclusive: `t > 1990` reads 11 candidates, the filter keeps 10.)
#[test]
fn seeks_read_the_index_with_fewest_candidates() {
    let db = db();
    write(&db, "UNWIND range(1, 2000) AS x CREATE (:S {t: x, g: x % 10, u: 'u' + toString(x)})");
    // The seek's line of the plan: what it read, and the rows out of the whole query.
    let read = |q: &str, p: &Params| -> (String, usize) {
        let r = run_with(&db, &format!("PROFILE {q}"), p).unwrap_or_else(|e| panic!("{q}: {e}"));
        let plan = r.plan.unwrap_or_default();
        let line = plan.lines().find(|l| l.contains("NodeBy") || l.contains("RelationshipBy")).unwrap_or_else(|| panic!("{q}: {plan}"));
        let at = line.find("read ").unwrap_or_else(|| panic!("{q}: {plan}"));
        (line[at..].trim_end_matches(')').to_owned(), r.rows.len())
    };
    let none = Params::new();
    for (q, want, rows) in [
        ("MATCH (n:S {g: 3, u: 'u13'}) RETURN n.t", "read 1 by u", 1),
        ("MATCH (n:S {u: 'u13', g: 3}) RETURN n.t", "read 1 by u", 1),
        ("MATCH (n:S) WHERE n.g = 3 AND n.u = 'u14' RETURN n.t", "read 1 by u", 0),
        ("MATCH (n:S) WHERE n.g = 3 AND n.t > 1990 RETURN n.t", "read 11 by t range", 1),
        ("MATCH (n:S) WHERE n.t > 10 AND n.g = 3 RETURN n.t", "read 200 by g", 199),
        ("MATCH (n:S) WHERE n.g IN [3, 4] AND n.t > 1990 RETURN n.t", "read 11 by t range", 2),
        ("MATCH (n:S) WHERE n.g IN [3] AND n.t > 10 RETURN n.t", "read 200 by g IN", 199),
        ("MATCH (n:S) WHERE n.g IN [3, 4] AND n.u = 'u13' RETURN n.t", "read 1 by u", 1),
        ("MATCH (n:S) WHERE n.g IN [3, 4] RETURN n.t", "read 400 by g IN", 400),
        ("MATCH (n:S) RETURN n.t", "read 2000 by :S", 2000),
    ] {
        assert_eq!(read(q, &none), (want.to_owned(), rows), "{q}");
    }
    let q = "MATCH (n:S) WHERE n.g = $g AND n.t > $t RETURN n.t";
    for (t, want, rows) in [(1990, "read 11 by t range", 1), (10, "read 200 by g", 199)] {
        let p: Params = [("g".to_owned(), i(3)), ("t".to_owned(), i(t))].into_iter().collect();
        assert_eq!(read(q, &p), (want.to_owned(), rows), "t > {t}");
    }
    // Relationships looked up by their properties choose the same way.
    write(&db, "MATCH (n:S) WHERE n.t <= 1000 CREATE (n)-[:L {t: n.t, g: n.g, u: n.u}]->(n)");
    for (q, want, rows) in [
        ("MATCH ()-[e:L {g: 3, u: 'u13'}]->() RETURN e.t", "read 1 by u", 1),
        ("MATCH ()-[e:L {g: 3}]->() WHERE e.t > 990 RETURN e.t", "read 11 by t range", 1),
        ("MATCH ()-[e:L {g: 3}]->() WHERE e.t > 10 RETURN e.t", "read 100 by g", 99),
        ("MATCH ()-[e:L {g: 3}]->() WHERE e.u IN $us RETURN e.t", "read 2 by u IN", 2),
        ("MATCH ()-[e:L {g: 3}]->() WHERE e.u IN ['u13', 'u23', 'u33'] RETURN e.t", "read 3 by u IN", 3),
    ] {
        let us: Params = [("us".to_owned(), QueryValue::List(vec![s("u13"), s("u23")]))].into_iter().collect();
        assert_eq!(read(q, &us), (want.to_owned(), rows), "{q}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(32), ..ProptestConfig::default() })]
    /// A node seek reads whichever of its indexes counts the fewest candidates for the row's
    /// values (the range, the `IN` lookup, an equality of the node's test; `ops::seek`), and
    /// every choice gives exactly the rows of a scan that reads no index: equalities in either
    /// order, an equality or an `IN` beside a range, an `IN` beside an equality, a read in order
    /// that gives up for a small group, a hop after; values of every class and missing ones;
    /// after overwrites, removals and deletes (stale entries), now and as of before them.
    #[test]
    fn seeks_read_the_fewest_candidates_and_equal_scans(
        nodes in prop::collection::vec(
            (any::<bool>(), prop::option::of(0i64..4), prop::option::of(prop::sample::select(vec!["x", "y", "z", "w"])), prop::option::of(ordered_value())),
            1..160,
        ),
        changes in prop::collection::vec((0usize..160, 0usize..4, prop::option::of(0i64..4)), 0..16),
        (g, u, lo, hi) in (0i64..4, prop::sample::select(vec!["x", "y", "q"]), ordered_value(), ordered_value()),
        (gs, take) in (prop::collection::vec(0i64..4, 0..3), 1i64..12),
    ) {
        let (clock, db) = clocked();
        let maps = |a: bool| {
            QueryValue::List(
                nodes
                    .iter()
                    .filter(|n| n.0 == a)
                    .map(|(_, g, u, t)| {
                        let mut m = std::collections::BTreeMap::new();
                        m.insert("g".to_owned(), g.map_or(QueryValue::Null, i));
                        m.insert("u".to_owned(), u.map_or(QueryValue::Null, s));
                        m.insert("t".to_owned(), t.clone().unwrap_or(QueryValue::Null));
                        QueryValue::Map(m.into_iter().collect())
                    })
                    .collect(),
            )
        };
        let p: Params = [("a".to_owned(), maps(true)), ("b".to_owned(), maps(false))].into_iter().collect();
        db.query("default", "UNWIND $a AS r CREATE (n:A) SET n = r", &p).expect("create A");
        db.query("default", "UNWIND $b AS r CREATE (n:B) SET n = r", &p).expect("create B");
        db.query("default", "MATCH (a:A) WHERE a.g < 2 CREATE (a)-[:R]->(a)", &Params::new()).expect("rels");
        clock.advance_seconds(10);
        for (n, what, v) in &changes {
            let mut p = Params::new();
            p.insert("i".to_owned(), i((*n % nodes.len()) as i64));
            p.insert("v".to_owned(), v.map_or(QueryValue::Null, i));
            let text = match what {
                0 => "MATCH (n) WHERE id(n) = $i DETACH DELETE n",
                1 => "MATCH (n) WHERE id(n) = $i SET n.g = $v",
                2 => "MATCH (n) WHERE id(n) = $i SET n.t = $v",
                _ => "MATCH (n) WHERE id(n) = $i REMOVE n.u",
            };
            db.query("default", text, &p).expect("change");
        }
        let p: Params = [
            ("g".to_owned(), i(g)),
            ("u".to_owned(), s(u)),
            ("lo".to_owned(), lo.clone()),
            ("hi".to_owned(), hi.clone()),
            ("gs".to_owned(), QueryValue::List(gs.iter().map(|g| i(*g)).collect())),
            ("l".to_owned(), i(take)),
        ]
        .into_iter()
        .collect();
        for when in ["", "AS OF '2030-01-01T00:00:05Z' "] {
            for shape in [
                "MATCH (n:A {g: $g, u: $u}) RETURN id(n) ORDER BY id(n)",
                "MATCH (n {u: $u, g: $g}) RETURN id(n) ORDER BY id(n)",
                "MATCH (n) WHERE n.g = $g AND n.t > $lo RETURN id(n) ORDER BY id(n)",
                "MATCH (n:A) WHERE n.t <= $hi AND n.g = $g AND n.t >= $lo RETURN id(n) ORDER BY id(n)",
                "MATCH (n) WHERE n.g IN $gs AND n.t < $hi RETURN id(n) ORDER BY id(n)",
                "MATCH (n:B) WHERE n.g IN $gs AND n.u = $u RETURN id(n) ORDER BY id(n)",
                "MATCH (n {u: $u}) WHERE n.g IN $gs AND n.t >= $lo RETURN id(n) ORDER BY id(n)",
                "MATCH (n:A)-[r:R]->(m) WHERE n.g = $g AND n.t > $lo RETURN id(r) ORDER BY id(r)",
                "MATCH (n) WHERE n.g = $g AND n.t >= $lo RETURN n.t, id(n) ORDER BY n.t DESC, id(n) LIMIT $l",
                "MATCH (n) WHERE n.g IN $gs AND n.u = $u AND n.t <= $hi RETURN n.t, id(n) ORDER BY n.t, id(n) LIMIT $l",
            ] {
                let looked = format!("{when}{shape}");
                // No index reads `coalesce(…)`: every node is tested.
                let scanned = ["n.g", "n.u", "n.t"]
                    .iter()
                    .fold(looked.replace("{g: $g, u: $u}", "").replace("{u: $u, g: $g}", "").replace("{u: $u}", ""), |q, k| {
                        q.replace(&format!("WHERE {k}"), &format!("WHERE coalesce({k}, null)")).replace(&format!("AND {k}"), &format!("AND coalesce({k}, null)"))
                    });
                let scanned = match shape {
                    s if s.contains("{g: $g, u: $u}") || s.contains("{u: $u, g: $g}") => {
                        scanned.replace("RETURN", "WHERE coalesce(n.g, null) = $g AND coalesce(n.u, null) = $u RETURN")
                    }
                    s if s.contains("{u: $u}") => scanned.replace("WHERE", "WHERE coalesce(n.u, null) = $u AND"),
                    _ => scanned,
                };
                prop_assert!(!scanned.contains(" n.g") && !scanned.contains(" n.u") && !scanned.contains('{'), "{}", scanned);
                let (x, y) = (db.query("default", &looked, &p).expect("seek").rows, db.query("default", &scanned, &p).expect("scan").rows);
                prop_assert_eq!(x, y, "{} | {}", looked, scanned);
            }
            // A scan only counted is counted without its rows; a filter that keeps every node
            // makes the rows.
            for shape in ["MATCH (n:A) RETURN count(*)", "MATCH (n) RETURN count(n)", "UNWIND $gs AS x MATCH (n:B) RETURN count(*)", "MATCH (n:Z) RETURN count(n)"] {
                let counted = format!("{when}{shape}");
                let rowed = counted.replace(" RETURN", " WHERE n IS NOT NULL RETURN");
                let (x, y) = (db.query("default", &counted, &p).expect("count").rows, db.query("default", &rowed, &p).expect("rows").rows);
                prop_assert_eq!(x, y, "{}", counted);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]
    /// A relationship looked up by a property (`()-[r:T {k: $v}]->()`, found from the
    /// relationship) gives exactly the rows the scan and expand it replaces give: every
    /// direction, with and without a type, a start label and a target label, loops included,
    /// after overwrites, removals and deletes, now and as of before them.
    #[test]
    fn relationship_lookups_equal_scans(
        labels in prop::collection::vec(any::<bool>(), 2..8),
        rels in prop::collection::vec((0usize..8, 0usize..8, any::<bool>(), indexed_value(false)), 1..20),
        changes in prop::collection::vec((0usize..20, prop::option::of(indexed_value(false)), any::<bool>()), 0..8),
        want in indexed_value(true),
        wants in prop::collection::vec(prop::option::of(indexed_value(true)), 0..4),
    ) {
        let (clock, db) = clocked();
        for a in &labels {
            db.query("default", if *a { "CREATE (:A)" } else { "CREATE (:B)" }, &Params::new()).expect("node");
        }
        let n = labels.len();
        for (s, o, r, v) in &rels {
            let mut p = Params::new();
            p.insert("s".to_owned(), QueryValue::Int((*s % n) as i64));
            p.insert("o".to_owned(), QueryValue::Int((*o % n) as i64));
            p.insert("v".to_owned(), v.clone());
            let t = if *r { "R" } else { "S" };
            // A second property, `j`, of two values: seeks choose between it and `k` by counts.
            p.insert("j".to_owned(), QueryValue::Int((*s % 2) as i64));
            db.query("default", &format!("MATCH (a), (b) WHERE id(a) = $s AND id(b) = $o CREATE (a)-[:{t} {{k: $v, j: $j}}]->(b)"), &p).expect("rel");
        }
        clock.advance_seconds(10);
        for (i, v, delete) in &changes {
            let mut p = Params::new();
            p.insert("i".to_owned(), QueryValue::Int((*i % rels.len()) as i64));
            let q = match (delete, v) {
                (true, _) => "MATCH ()-[r]->() WHERE id(r) = $i DELETE r",
                (false, None) => "MATCH ()-[r]->() WHERE id(r) = $i REMOVE r.k",
                (false, Some(v)) => {
                    p.insert("v".to_owned(), v.clone());
                    "MATCH ()-[r]->() WHERE id(r) = $i SET r.k = $v"
                }
            };
            db.query("default", q, &p).expect("change");
        }
        let mut p = Params::new();
        p.insert("v".to_owned(), want.clone());
        let shapes = [
            ("(a)", "-", "->", ":R", "(b)"),
            ("(a:A)", "<-", "-", ":R", "(b)"),
            ("(a)", "-", "-", "", "(b:B)"),
            ("(a:B)", "-", "-", ":R|S", "(b:A)"),
            ("(a)", "-", "->", "", "(b)"),
        ];
        for when in ["", "AS OF '2030-01-01T00:00:05Z' "] {
            for (from, l, r, t, to) in shapes {
                let looked = format!("{when}MATCH {from}{l}[e{t} {{k: $v}}]{r}{to} RETURN id(a), id(e), id(b) ORDER BY id(a), id(e), id(b)");
                let plan = db.query("default", &format!("EXPLAIN {looked}"), &p).expect("explain").plan.unwrap_or_default();
                prop_assert!(plan.contains("RelationshipByPropertyLookup"), "{}", plan);
                let scanned = format!("{when}MATCH {from}{l}[e{t}]{r}{to} WHERE coalesce(e.k, null) = $v RETURN id(a), id(e), id(b) ORDER BY id(a), id(e), id(b)");
                let (x, y) = (db.query("default", &looked, &p).expect("lookup").rows, db.query("default", &scanned, &p).expect("scan").rows);
                prop_assert_eq!(x, y, "{}", looked);
                // Counted: the expand the planner fuses with its count is looked up too.
                let counted = format!("{when}MATCH {from}{l}[e{t} {{k: $v}}]{r}{to} RETURN count(*)");
                let plan = db.query("default", &format!("EXPLAIN {counted}"), &p).expect("explain").plan.unwrap_or_default();
                prop_assert!(plan.contains("RelationshipByPropertyLookup"), "{}", plan);
                let scanned = format!("{when}MATCH {from}{l}[e{t}]{r}{to} WHERE coalesce(e.k, null) = $v RETURN count(*)");
                prop_assert_eq!(db.query("default", &counted, &p).expect("count").rows, db.query("default", &scanned, &p).expect("scan").rows);
                // `IN` a list, looked up per value.
                let mut p = p.clone();
                p.insert("vs".to_owned(), QueryValue::List(wants.iter().map(|w| w.clone().unwrap_or(QueryValue::Null)).collect()));
                let looked = format!("{when}MATCH {from}{l}[e{t}]{r}{to} WHERE e.k IN $vs RETURN id(a), id(e), id(b) ORDER BY id(a), id(e), id(b)");
                let plan = db.query("default", &format!("EXPLAIN {looked}"), &p).expect("explain").plan.unwrap_or_default();
                prop_assert!(plan.contains("RelationshipByPropertyLookup"), "{}", plan);
                let scanned = format!("{when}MATCH {from}{l}[e{t}]{r}{to} WHERE coalesce(e.k, null) IN $vs RETURN id(a), id(e), id(b) ORDER BY id(a), id(e), id(b)");
                let (x, y) = (db.query("default", &looked, &p).expect("lookup").rows, db.query("default", &scanned, &p).expect("scan").rows);
                prop_assert_eq!(x, y, "{} {:?}", looked, wants);
                // Ranges, one bound or two.
                p.insert("w".to_owned(), wants.first().cloned().flatten().unwrap_or(QueryValue::Null));
                for cond in ["e.k >= $v", "$v > e.k", "e.k > $v AND e.k <= $w"] {
                    let looked = format!("{when}MATCH {from}{l}[e{t}]{r}{to} WHERE {cond} RETURN id(a), id(e), id(b) ORDER BY id(a), id(e), id(b)");
                    let plan = db.query("default", &format!("EXPLAIN {looked}"), &p).expect("explain").plan.unwrap_or_default();
                    prop_assert!(plan.contains("RelationshipByPropertyLookup"), "{}", plan);
                    let scanned = looked.replace("e.k", "coalesce(e.k, null)");
                    let (x, y) = (db.query("default", &looked, &p).expect("range").rows, db.query("default", &scanned, &p).expect("scan").rows);
                    prop_assert_eq!(x, y, "{} {:?} {:?}", looked, want, wants);
                }
                // Two equalities, or one beside the filter's `IN` or range: whichever counts the
                // fewest candidates is read (`indexed_rels`), the same rows every way.
                p.insert("j".to_owned(), QueryValue::Int(1));
                for (map, cond) in [("{j: $j, k: $v}", "true"), ("{k: $v, j: $j}", "true"), ("{j: $j}", "e.k IN $vs"), ("{j: $j}", "e.k >= $v")] {
                    let looked = format!("{when}MATCH {from}{l}[e{t} {map}]{r}{to} WHERE {cond} RETURN id(a), id(e), id(b) ORDER BY id(a), id(e), id(b)");
                    let plan = db.query("default", &format!("EXPLAIN {looked}"), &p).expect("explain").plan.unwrap_or_default();
                    prop_assert!(plan.contains("RelationshipByPropertyLookup"), "{}", plan);
                    let scanned = format!("{when}MATCH {from}{l}[e{t}]{r}{to} WHERE coalesce(e.j, null) = $j AND {} RETURN id(a), id(e), id(b) ORDER BY id(a), id(e), id(b)", if map.contains('k') { "coalesce(e.k, null) = $v".to_owned() } else { cond.replace("e.k", "coalesce(e.k, null)") });
                    let (x, y) = (db.query("default", &looked, &p).expect("choice").rows, db.query("default", &scanned, &p).expect("scan").rows);
                    prop_assert_eq!(x, y, "{} {:?} {:?}", looked, want, wants);
                }
            }
        }
    }
}

/// The property index is rebuilt from a checkpoint and the WAL on open, keeps workspaces apart,
/// and is not used where it cannot stand in for a scan (a field's key, a list value).
#[test]
fn property_lookups_survive_reopen_and_keep_workspaces_apart() {
    let dir = tempfile::tempdir().expect("dir");
    let uuids = |db: &Database, ws: &str| -> Vec<Vec<QueryValue>> {
        let mut out = Vec::new();
        for u in 0..12 {
            let p: Params = [("u".to_owned(), QueryValue::String(format!("u{u}")))].into_iter().collect();
            let looked = db.query(ws, "MATCH (n:E {uuid: $u}) RETURN n.i", &p).expect("lookup").rows;
            let scanned = db.query(ws, "MATCH (n:E) WHERE coalesce(n.uuid, 0) = $u RETURN n.i", &p).expect("scan").rows;
            assert_eq!(looked, scanned, "{ws} u{u}");
            out.push(looked.into_iter().flatten().collect());
        }
        out
    };
    let before = {
        let db = Database::open(dir.path()).expect("open");
        for ws in ["a", "b"] {
            db.create_workspace(ws).expect("workspace");
            let offset = if ws == "a" { 0 } else { 100 };
            let q = format!("UNWIND range(0, 9) AS i CREATE (:E {{uuid: 'u' + toString(i), i: i + {offset}}})");
            db.query(ws, &q, &Params::new()).expect("create");
            let q = format!("CREATE (:F)-[:R {{uuid: 'r1', i: {offset}}}]->(:F), (:F)-[:R {{uuid: 'r2'}}]->(:F)");
            db.query(ws, &q, &Params::new()).expect("create");
        }
        db.checkpoint().expect("checkpoint");
        // After the checkpoint: an overwrite, a removal, a new node, a delete (the WAL's tail).
        db.query("a", "MATCH (n:E {uuid: 'u1'}) SET n.uuid = 'u11'", &Params::new()).expect("set");
        db.query("a", "MATCH (n:E {uuid: 'u2'}) REMOVE n.uuid", &Params::new()).expect("remove");
        db.query("a", "CREATE (:E {uuid: 'u10', i: 10})", &Params::new()).expect("create");
        db.query("b", "MATCH (n:E {uuid: 'u3'}) DELETE n", &Params::new()).expect("delete");
        (uuids(&db, "a"), uuids(&db, "b"))
    };
    let db = Database::open(dir.path()).expect("reopen");
    assert_eq!((uuids(&db, "a"), uuids(&db, "b")), before);
    // Relationships too, each workspace its own.
    for (ws, want) in [("a", 0), ("b", 100)] {
        assert_eq!(db.query(ws, "MATCH ()-[r:R {uuid: 'r1'}]->() RETURN r.i", &Params::new()).expect("lookup").rows, vec![vec![i(want)]]);
    }
    // Ranges too, each workspace its own values.
    for (ws, from, want) in [("a", 8, vec![8, 9, 10]), ("b", 102, vec![102, 104, 105, 106, 107, 108, 109])] {
        let got = db.query(ws, &format!("MATCH (n:E) WHERE n.i >= {from} RETURN n.i ORDER BY n.i"), &Params::new()).expect("range").rows;
        assert_eq!(got, want.into_iter().map(|v| vec![i(v)]).collect::<Vec<_>>(), "{ws}");
    }
    let (a, b) = before;
    assert_eq!(
        (a[0].clone(), a[1].clone(), a[2].clone(), a[10].clone(), a[11].clone()),
        (vec![i(0)], vec![], vec![], vec![i(10)], vec![i(1)])
    );
    assert_eq!((b[0].clone(), b[3].clone()), (vec![i(100)], vec![]));
    let plan = |q: &str| db.query("a", &format!("EXPLAIN {q}"), &Params::new()).expect("explain").plan.unwrap_or_default();
    assert!(plan("MATCH (n:E {uuid: 'u1'}) RETURN n").contains("NodeByPropertyLookup (n:E {uuid})"));
    assert!(plan("MATCH (n:E) WHERE n.uuid = 'u1' RETURN n").contains("NodeByPropertyLookup"));
    assert!(plan("MATCH (n:E {name: 'x'}) RETURN n").contains("NodeByPropertyLookup"));
    assert!(plan("MATCH (n:E {aliases: 'x'}) RETURN n").contains("NodeByLabelScan"));
    assert!(plan("MATCH (n:E {uuid: toUpper('u1')}) RETURN n").contains("NodeByLabelScan"));
    assert!(plan("MATCH (n:E) WHERE n.uuid IN ['u1', 'u2'] RETURN n").contains("NodeByPropertyLookup (n:E) uuid IN"));
    assert!(plan("MATCH (n:E) WHERE n.created_at IN ['u1'] RETURN n").contains("NodeByLabelScan"));
}

/// `WHERE n.k IN list` is a lookup per value: the nodes holding one of them, once each, tested
/// like scanned ones; `n.id IN list` seeks external ids (and `id` properties); a value that is no
/// list is still the filter's type error.
#[test]
fn property_in_lists_are_looked_up() {
    let db = db();
    write(&db, "CREATE (:E {uuid: 'u1', i: 1}), (:E {uuid: 'u2', i: 2}), (:F {uuid: 'u2', i: 20}), (:E {uuid: 'u3', i: 3})");
    let q = "MATCH (n:E) WHERE n.uuid IN ['u2', 'u1', 'u2', null, 'nope'] RETURN n.i ORDER BY n.i";
    assert_eq!(rows(&db, q), [[i(1)], [i(2)]]);
    assert_eq!(rows(&db, "MATCH (n) WHERE n.uuid IN ['u2'] AND n.i > 5 RETURN n.i"), [[i(20)]]);
    assert_eq!(rows(&db, "MATCH (n) WHERE n.uuid IN [] RETURN n.i"), Vec::<Vec<QueryValue>>::new());
    assert_eq!(rows(&db, "MATCH (n) WHERE n.uuid IN null RETURN n.i"), Vec::<Vec<QueryValue>>::new());
    assert_eq!(rows(&db, "MATCH (n) WHERE n.i IN [1.0, 3] RETURN n.uuid ORDER BY n.uuid"), [[s("u1")], [s("u3")]]);
    // By external id, then across a hop from it.
    assert_eq!(rows(&db, "MATCH (n) WHERE n.id IN ['db', 'auth', 'nope'] RETURN n.id ORDER BY n.id"), [[s("auth")], [s("db")]]);
    assert_eq!(rows(&db, "MATCH (p)-[:OWNS]->(n) WHERE n.id IN ['auth'] RETURN p.id"), [[s("alice")]]);
    // One row per incoming row, each with its own list.
    let per_row = "UNWIND [['u1'], ['u3', 'u1']] AS l MATCH (n:E) WHERE n.uuid IN l RETURN size(l), n.i ORDER BY size(l), n.i";
    assert_eq!(rows(&db, per_row), [[i(1), i(1)], [i(2), i(1)], [i(2), i(3)]]);
    let e = db.query("default", "MATCH (n:E) WHERE n.uuid IN 'u1' RETURN n", &Params::new()).expect_err("no list");
    assert!(e.to_string().contains("IN expects a list"), "{e}");
    let plan = |q: &str| db.query("default", &format!("EXPLAIN {q}"), &Params::new()).expect("explain").plan.unwrap_or_default();
    assert!(plan("MATCH (n) WHERE n.id IN ['auth'] RETURN n").contains("NodeByPropertyLookup (n) id IN"));
    // A seek by internal id comes first.
    assert!(plan("MATCH (n) WHERE n.uuid IN ['u1'] AND id(n) = 0 RETURN n").contains("NodeByInternalIdSeek"));
}

#[test]
fn vector_index_procedures_give_the_exact_nearest() {
    let db = db();
    write(&db, "CREATE (:E {k: 'a', embedding: vecf32([1.0, 0.0])}), (:E {k: 'b', embedding: vecf32([0.6, 0.8])}), (:E {k: 'c'}), (:E {k: 'd', embedding: vecf32([0.0, 1.0])})");
    write(&db, "CREATE (:X)-[:R {v: [3, 4]}]->(:Y)");
    let got = rows(&db, "CALL db.idx.vector.queryNodes('E', 'embedding', 2, vecf32([0.0, 1.0])) YIELD node, score RETURN node.k, round(score * 1000) / 1000.0");
    assert_eq!(got, vec![vec![s("d"), QueryValue::Float(0.0)], vec![s("b"), QueryValue::Float(0.2)]]);
    // A declared euclidean index measures so.
    db.query(
        "default",
        "CREATE VECTOR INDEX FOR ()-[r:R]-() ON (r.v) OPTIONS {dimension: 2, similarityFunction: 'euclidean'}",
        &Params::new(),
    )
    .expect("declares");
    assert_eq!(
        rows(&db, "CALL db.idx.vector.queryRelationships('R', 'v', 5, [0, 0]) YIELD relationship, score RETURN score"),
        vec![vec![QueryValue::Float(5.0)]]
    );
    let e = db
        .query("default", "CALL db.idx.vector.queryNodes('E', 'embedding', 2, [1, 2, 3]) YIELD node RETURN node", &Params::new())
        .expect_err("dims");
    assert!(e.to_string().contains("dimension mismatch"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]

    /// `db.idx.vector.queryNodes` gives the k nearest by cosine distance exactly as a scan in the
    /// test computes them: nodes without the property, or with a list that is no vector, are
    /// skipped; ties go to the smaller id.
    #[test]
    fn the_vector_procedure_equals_a_naive_scan(
        vs in prop::collection::vec(prop::option::of(prop::collection::vec(-4i64..5, 3)), 1..14),
        q in prop::collection::vec(-4i64..5, 3),
        k in 1usize..6,
        strings in any::<bool>(),
        floats in any::<bool>(),
    ) {
        let db = Database::in_memory();
        for (i, v) in vs.iter().enumerate() {
            let text = match v {
                // Written as floats, the list is stored packed; as integers, as a list of values.
                Some(v) if floats => format!("CREATE (:E {{i: {i}, e: [{}.0, {}.0, {}.0]}})", v[0], v[1], v[2]),
                Some(v) => format!("CREATE (:E {{i: {i}, e: [{}, {}, {}]}})", v[0], v[1], v[2]),
                None if strings => format!("CREATE (:E {{i: {i}, e: ['a', 'b', 'c']}})"),
                None => format!("CREATE (:E {{i: {i}}})"),
            };
            write(&db, &text);
        }
        let cosine = |a: &[i64]| {
            let (mut dot, mut na, mut nq) = (0.0f64, 0.0f64, 0.0f64);
            for (x, y) in a.iter().zip(&q) {
                let (x, y) = (*x as f64, *y as f64);
                dot += x * y;
                na += x * x;
                nq += y * y;
            }
            if na == 0.0 || nq == 0.0 { 1.0 } else { 1.0 - dot / (na.sqrt() * nq.sqrt()) }
        };
        let mut want: Vec<(f64, i64)> = vs.iter().enumerate().filter_map(|(i, v)| v.as_ref().map(|v| (cosine(v), i as i64))).collect();
        want.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        want.truncate(k);
        let got = rows(&db, &format!("CALL db.idx.vector.queryNodes('E', 'e', {k}, [{}, {}, {}]) YIELD node, score RETURN node.i, score", q[0], q[1], q[2]));
        let want: Vec<Vec<QueryValue>> = want.into_iter().map(|(d, i)| vec![QueryValue::Int(i), QueryValue::Float(d)]).collect();
        prop_assert_eq!(got, want);
    }
}

/// `bounded_read` says which texts a server may run on its I/O thread under a short deadline:
/// reads without procedure calls (in a subquery too), never a write, an index statement, a
/// procedure or a text that does not compile.
#[test]
fn bounded_reads_are_reads_without_procedures() {
    use engram::exec::bounded_read;
    for text in [
        "MATCH (a {id: $s})-[r]-() RETURN count(r)",
        "MATCH (c {id: $s})-[:SUBCLASS_OF*]->(a) RETURN count(DISTINCT a)",
        "CYPHER s=\"x\" MATCH (n) WHERE n.name = $s RETURN n",
        "OPTIONAL MATCH (n:X) RETURN n",
        "RETURN 1",
    ] {
        assert!(bounded_read(text), "{text}");
    }
    for text in [
        "CREATE (:X)",
        "MATCH (n) SET n.x = 1",
        "MATCH (n) DETACH DELETE n",
        "CALL db.labels() YIELD label RETURN label",
        "MATCH (n) CALL { WITH n CALL db.labels() YIELD label RETURN label } RETURN n, label",
        "CALL engram.recall('x', {budget: 10}) YIELD rank, text RETURN rank, text",
        "CREATE INDEX ON :X(y)",
    ] {
        assert!(engram::exec::writes(text).is_ok(), "compiles: {text}");
        assert!(!bounded_read(text), "{text}");
    }
    for text in ["MATCH (n RETURN n", ""] {
        assert!(!bounded_read(text), "{text}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]

    /// A seek by internal id (`WHERE id(n) = …`, `IN …`) gives the rows the scan and filter give
    /// (`id(n) + 0`, which no seek answers): the workspace's own nodes only, deleted ones only
    /// under `ALL VERSIONS`, floats with an integer's value equal to it, null and other kinds
    /// matching nothing, and a right side of `IN` that is no list the same error.
    #[test]
    fn seeks_by_internal_id_equal_the_scan(
        n in 2usize..16,
        edges in prop::collection::vec((0usize..16, 0usize..16, any::<bool>()), 0..30),
        deleted in prop::collection::vec(0usize..16, 0..3),
        picks in prop::collection::vec(-3i64..40, 1..5),
        as_float in any::<bool>(),
    ) {
        let db = random_graph(n, &edges);
        db.create_workspace("other").expect("workspace");
        for i in 0..3 {
            // Another workspace's nodes between this one's: their ids are never this one's rows.
            db.query("other", &format!("CREATE (:node {{k: {i}}})"), &Params::new()).expect("creates");
            db.query("default", &format!("CREATE (:bare {{k: {i}}})"), &Params::new()).expect("creates");
        }
        for d in &deleted {
            db.query("default", &format!("MATCH (x {{id: 'e{}'}}) DETACH DELETE x", d % n), &Params::new()).expect("deletes");
        }
        let snap = db.snapshot();
        let ws = snap.workspace("default").expect("workspace");
        #[allow(clippy::cast_precision_loss)] // Reason: small ids, exact as floats.
        let value = |i: i64| if as_float { QueryValue::Float(i as f64) } else { QueryValue::Int(i) };
        let mut list: Vec<QueryValue> = picks.iter().map(|&i| value(i)).collect();
        list.extend([QueryValue::Null, QueryValue::String("e1".into()), QueryValue::Float(1.5), value(picks[0])]);
        let mut params = Params::new();
        params.insert("x".into(), value(picks[0]));
        params.insert("xs".into(), QueryValue::List(list));
        for (fast, slow) in [
            ("MATCH (n) WHERE id(n) = $x RETURN id(n), n", "MATCH (n) WHERE id(n) + 0 = $x RETURN id(n), n"),
            ("MATCH (n) WHERE id(n) IN $xs RETURN id(n), n.k", "MATCH (n) WHERE id(n) + 0 IN $xs RETURN id(n), n.k"),
            (
                "MATCH (a)-[r]->(b) WHERE id(b) = $x AND a.id <> 'e0' RETURN a.id, b.id, type(r)",
                "MATCH (a)-[r]->(b) WHERE id(b) + 0 = $x AND a.id <> 'e0' RETURN a.id, b.id, type(r)",
            ),
            ("MATCH (n:node) WHERE $x = ID(n) RETURN n.id", "MATCH (n:node) WHERE $x = id(n) + 0 RETURN n.id"),
            ("MATCH (n) WHERE id(n) IN [$x, 2, null] RETURN id(n)", "MATCH (n) WHERE id(n) + 0 IN [$x, 2, null] RETURN id(n)"),
            ("ALL VERSIONS MATCH (n) WHERE id(n) IN $xs RETURN id(n)", "ALL VERSIONS MATCH (n) WHERE id(n) + 0 IN $xs RETURN id(n)"),
            ("MATCH (n) WHERE id(n) = null RETURN n", "MATCH (n) WHERE id(n) + 0 = null RETURN n"),
            // No list on the right of IN: the same type error, when a node reaches the filter.
            ("MATCH (n) WHERE id(n) IN $x RETURN n", "MATCH (n) WHERE id(n) + 0 IN $x RETURN n"),
        ] {
            let plan = ws.query(&format!("EXPLAIN {fast}"), &params).expect("explains").plan.unwrap_or_default();
            prop_assert!(plan.contains("NodeByInternalIdSeek"), "{}", plan);
            let slow_plan = ws.query(&format!("EXPLAIN {slow}"), &params).expect("explains").plan.unwrap_or_default();
            prop_assert!(!slow_plan.contains("NodeByInternalIdSeek"), "{}", slow_plan);
            let outcome = |q: &str| match ws.query(q, &params) {
                Ok(r) => {
                    let mut rows: Vec<String> = r.rows.iter().map(|row| format!("{row:?}")).collect();
                    rows.sort();
                    Ok(rows)
                }
                Err(e) => Err((e.kind, e.detail)),
            };
            prop_assert_eq!(outcome(fast), outcome(slow), "{}", fast);
        }
    }
}

/// A value a random SET writes: every kind, and values a memory field would mirror (a state
/// name, a confidence in [0, 1], a time).
fn prop_value_strategy() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "'text written'",
        "'ACCEPTED'",
        "'nope'",
        "0.25",
        "7.5",
        "3",
        "true",
        "null",
        "['a', 'b']",
        "[1, 2.5]",
        "{k: 1}",
        "'2024-01-02T03:04:05Z'",
        "''",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]
    /// A node or relationship in a result shows exactly what `properties()`, `keys()`,
    /// `labels()` and `type()` read of it (the result's form is built straight from the snapshot,
    /// the functions' through the executor's values), whatever was written over its memory
    /// fields: ingested entities and claims, elements the language wrote, keys named as fields.
    #[test]
    fn results_show_what_the_functions_read(
        sets in prop::collection::vec((0usize..5, prop::sample::select(vec!["id", "name", "aliases", "text", "state", "confidence", "valid_until", "age"]), prop_value_strategy(), any::<bool>()), 0..14),
    ) {
        let db = db();
        write(&db, "CREATE (:Made {name: 'made'})-[:MADE {w: 1}]->(:Made)");
        for (target, key, value, on_rel) in &sets {
            let text = if *on_rel {
                format!("MATCH ()-[r]->() WITH r ORDER BY id(r) SKIP {target} LIMIT 1 SET r.{key} = {value}")
            } else {
                format!("MATCH (n) WITH n ORDER BY id(n) SKIP {target} LIMIT 1 SET n.{key} = {value}")
            };
            // Some writes are refused (a list of mixed kinds, for one); a refused one writes nothing.
            let _ = db.query("default", &text, &Params::new());
        }
        let map_keys = |m: &std::collections::BTreeMap<String, QueryValue>| QueryValue::List(m.keys().map(|k| s(k)).collect());
        for row in rows(&db, "MATCH (n) RETURN n, properties(n), keys(n), labels(n)") {
            let QueryValue::Node(n) = &row[0] else { panic!("a node: {:?}", row[0]) };
            prop_assert_eq!(&row[1], &QueryValue::Map(n.properties.clone()));
            let QueryValue::List(keys) = &row[2] else { panic!("keys: {:?}", row[2]) };
            let mut keys = keys.clone();
            keys.sort_by_key(|k| format!("{k:?}"));
            prop_assert_eq!(QueryValue::List(keys), map_keys(&n.properties));
            prop_assert_eq!(&row[3], &QueryValue::List(n.labels.iter().map(|l| s(l)).collect()));
        }
        for row in rows(&db, "MATCH ()-[r]->() RETURN r, properties(r), keys(r), type(r)") {
            let QueryValue::Relationship(r) = &row[0] else { panic!("a relationship: {:?}", row[0]) };
            prop_assert_eq!(&row[1], &QueryValue::Map(r.properties.clone()));
            let QueryValue::List(keys) = &row[2] else { panic!("keys: {:?}", row[2]) };
            let mut keys = keys.clone();
            keys.sort_by_key(|k| format!("{k:?}"));
            prop_assert_eq!(QueryValue::List(keys), map_keys(&r.properties));
            prop_assert_eq!(&row[3], &s(&r.rel_type));
        }
    }
}

/// A query's rows as a sorted list (the order of unordered results is no contract).
fn sorted_rows(ws: &engram::WorkspaceView<'_>, text: &str, params: &Params) -> Vec<String> {
    let mut rows: Vec<String> =
        ws.query(text, params).unwrap_or_else(|e| panic!("{text}: {e}")).rows.iter().map(|r| format!("{r:?}")).collect();
    rows.sort();
    rows
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]
    /// `WHERE v.k = e` is checked in the pattern (as `(v {k: e})`: on each candidate as it is
    /// found, and `v.id = e` as a seek); `NOT (v.k <> e)` means the same under three-valued logic
    /// and stays a filter. Both give the same rows on random graphs and values, null and a
    /// string id included, in MATCH, OPTIONAL MATCH, variable-length reaches and counts. So do
    /// tests moved to right after the operator binding what they read, against the same tests
    /// compared with `true` (which stay at the end).
    #[test]
    fn where_equalities_in_the_pattern_equal_the_filter(
        n in 2usize..20,
        edges in prop::collection::vec((0usize..20, 0usize..20, any::<bool>()), 0..40),
        k in prop::sample::select(vec![QueryValue::Int(0), QueryValue::Int(1), QueryValue::Int(2), QueryValue::Null, QueryValue::String("x".into())]),
        w in 0i64..3,
        seed in 0usize..20,
    ) {
        let db = random_graph(n, &edges);
        db.query("default", "MATCH (n) SET n.k = id(n) % 3, n.s = CASE WHEN id(n) % 2 = 0 THEN 'x' ELSE null END", &Params::new()).expect("sets");
        // Nodes the language wrote: their `name` and `id` are properties, not the memory fields.
        db.query("default", "CREATE (:node {name: 'n1', id: 'e1'}), (:node {name: 1})", &Params::new()).expect("creates");
        let snap = db.snapshot();
        let ws = snap.workspace("default").expect("workspace");
        let mut params = Params::new();
        params.insert("v".into(), k.clone());
        params.insert("w".into(), QueryValue::Int(w));
        params.insert("e".into(), QueryValue::String(format!("e{}", seed % n)));
        params.insert("nm".into(), QueryValue::String(format!("n{}", seed % n)));
        for (pushed, filtered) in [
            ("MATCH (a)-[r]->(b) WHERE b.k = $v RETURN id(a), id(r), id(b)", "MATCH (a)-[r]->(b) WHERE NOT (b.k <> $v) RETURN id(a), id(r), id(b)"),
            ("MATCH (a:node)-[r]-(b) WHERE $w = a.k AND b.s = 'x' RETURN id(a), id(b)", "MATCH (a:node)-[r]-(b) WHERE NOT ($w <> a.k) AND NOT (b.s <> 'x') RETURN id(a), id(b)"),
            ("MATCH (a) WHERE a.id = $e RETURN id(a), a.k", "MATCH (a) WHERE NOT (a.id <> $e) RETURN id(a), a.k"),
            ("MATCH (a) WHERE a.s = $v RETURN id(a)", "MATCH (a) WHERE NOT (a.s <> $v) RETURN id(a)"),
            ("MATCH (a:node) WHERE a.name = $nm RETURN id(a)", "MATCH (a:node) WHERE NOT (a.name <> $nm) RETURN id(a)"),
            ("MATCH (a:node) WHERE a.name = $v RETURN id(a)", "MATCH (a:node) WHERE NOT (a.name <> $v) RETURN id(a)"),
            ("MATCH (a {id: $e})-[:A*]->(b) WHERE b.k = $w RETURN count(DISTINCT b)", "MATCH (a {id: $e})-[:A*]->(b) WHERE NOT (b.k <> $w) RETURN count(DISTINCT b)"),
            ("MATCH (a)-[*1..2]-(b) WHERE a.k = $w AND b.k = $v RETURN count(DISTINCT b)", "MATCH (a)-[*1..2]-(b) WHERE NOT (a.k <> $w) AND NOT (b.k <> $v) RETURN count(DISTINCT b)"),
            ("MATCH (a) OPTIONAL MATCH (a)-->(b) WHERE b.k = $w RETURN id(a), id(b)", "MATCH (a) OPTIONAL MATCH (a)-->(b) WHERE NOT (b.k <> $w) RETURN id(a), id(b)"),
            ("MATCH (a)-->(b)-->(a) WHERE a.k = $w RETURN id(a), id(b)", "MATCH (a)-->(b)-->(a) WHERE NOT (a.k <> $w) RETURN id(a), id(b)"),
            // Tests that move to right after the operator binding what they read (`(x) = true`
            // means `x` to a filter and moves nowhere).
            ("MATCH (a)-[r]->(b)-->(c) WHERE a.k < $w AND r.w IS NULL RETURN id(a), id(b), id(c)", "MATCH (a)-[r]->(b)-->(c) WHERE (a.k < $w AND r.w IS NULL) = true RETURN id(a), id(b), id(c)"),
            ("MATCH (a:node)-->(b) WHERE NOT a.s STARTS WITH 'x' OR a.k >= $v RETURN id(a), id(b)", "MATCH (a:node)-->(b) WHERE (NOT a.s STARTS WITH 'x' OR a.k >= $v) = true RETURN id(a), id(b)"),
            ("MATCH (a), (b) WHERE a.k > $w AND b.k <= a.k AND a:node RETURN id(a), id(b)", "MATCH (a), (b) WHERE (a.k > $w AND b.k <= a.k AND a:node) = true RETURN id(a), id(b)"),
            ("MATCH (a)-[*1..2]->(b)-->(c) WHERE b.k <> $w XOR c.s = 'x' RETURN id(a), id(c)", "MATCH (a)-[*1..2]->(b)-->(c) WHERE (b.k <> $w XOR c.s = 'x') = true RETURN id(a), id(c)"),
        ] {
            prop_assert_eq!(sorted_rows(&ws, pushed, &params), sorted_rows(&ws, filtered, &params), "{}", pushed);
        }
    }
}

/// The equalities a pattern takes from its WHERE show in the plan as node tests, and `v.id = e`
/// as the external-id seek; a variable bound before, or compared with another variable, stays in
/// the filter; a test that cannot fail moves to right after the scan.
#[test]
fn where_equalities_move_into_the_pattern() {
    let db = db();
    let plan = |text: &str| db.query("default", &format!("EXPLAIN {text}"), &Params::new()).expect("explains").plan.unwrap_or_default();
    let p = plan("MATCH (a:service) WHERE a.id = 'auth' RETURN a");
    assert!(p.contains("NodeByIdSeek (a:service)") && !p.contains("Filter"), "{p}");
    let p = plan("MATCH (a)-[:DEPENDS_ON]->(b) WHERE b.name = 'Redis' AND a.name = 'AuthService' RETURN b");
    assert!(!p.contains("Filter"), "{p}");
    let p = plan("MATCH (a), (b) WHERE a.name = b.name RETURN a");
    assert!(p.contains("Filter"), "{p}");
    let p = plan("MATCH (a) WITH a MATCH (a)-->(b) WHERE a.name = 'x' RETURN b");
    assert!(p.contains("Filter"), "{p}");
    // A test that cannot fail runs right after the scan binding what it reads, before the
    // expansions; one that can (a sum of a property) stays at the end.
    let p = plan("MATCH (a:service)-[:DEPENDS_ON]->(b)-->(c) WHERE a.name < 'B' RETURN c");
    assert!(p.ends_with("  Filter\n  NodeByLabelScan (a:service)\n"), "{p}");
    let p = plan("MATCH (a:service)-[:DEPENDS_ON]->(b)-->(c) WHERE a.name + 1 < 'B' RETURN c");
    assert!(p.ends_with("  Expand (a)-[:DEPENDS_ON]->(b)\n  NodeByLabelScan (a:service)\n"), "{p}");
    assert_eq!(
        rows(&db, "MATCH (a)-[:DEPENDS_ON]->(b) WHERE b.name = 'Redis' RETURN a.name ORDER BY a.name"),
        vec![vec![s("AuthService")], vec![s("Postgres")]]
    );
}

/// An external-id seek's key, however it is given (a literal, a parameter, a variable bound
/// before, an expression), finds what a scan filtered on the same key finds; a key that is not
/// a string finds nothing, and a missing parameter is an error, not an empty result.
#[test]
fn seek_keys_from_every_source_equal_the_scan() {
    let db = db();
    let seek_plan = |text: &str, p: &Params| db.query("default", &format!("EXPLAIN {text}"), p).expect("explains").plan.unwrap_or_default();
    let keys = ["auth", "db", "cache", "alice", "nobody"];
    for key in keys {
        let p = Params::from([("k".to_owned(), s(key))]);
        let want = run_with(&db, "MATCH (n) WHERE n.id + '' = $k RETURN n.name", &p).expect("scan").rows;
        for text in [
            format!("MATCH (n {{id: '{key}'}}) RETURN n.name"),
            "MATCH (n {id: $k}) RETURN n.name".to_owned(),
            "WITH $k AS k MATCH (n {id: k}) RETURN n.name".to_owned(),
            "UNWIND [$k] AS k MATCH (n {id: k}) RETURN n.name".to_owned(),
            "MATCH (n {id: substring($k + '!', 0, size($k))}) RETURN n.name".to_owned(),
        ] {
            assert!(seek_plan(&text, &p).contains("NodeByIdSeek"), "{text}");
            assert_eq!(run_with(&db, &text, &p).expect("seeks").rows, want, "{text} with {key}");
        }
    }
    let p = Params::from([("k".to_owned(), i(1))]);
    assert!(run_with(&db, "MATCH (n {id: $k}) RETURN n", &p).expect("runs").rows.is_empty());
    let e = run_with(&db, "MATCH (n {id: $k}) RETURN n", &Params::new()).expect_err("a missing parameter");
    assert_eq!(e.kind, ErrorType::ParameterMissing);
}

/// `exists(pattern)` is whether the pattern matches (the pattern predicate), in WHERE and in a
/// result; `exists(property)` stays whether the property is there, whatever its value.
#[test]
fn exists_of_a_pattern_is_whether_it_matches() {
    let db = db();
    let ids = |text: &str| rows(&db, text).into_iter().map(|r| r[0].clone()).collect::<Vec<_>>();
    let want = vec![s("alice"), s("auth"), s("db")];
    assert_eq!(ids("MATCH (n) WHERE exists((n)-->()) RETURN n.id ORDER BY n.id"), want);
    assert_eq!(ids("MATCH (n) WHERE (n)-->() RETURN n.id ORDER BY n.id"), want);
    assert_eq!(ids("MATCH (n) WHERE NOT exists((n)-->()) RETURN n.id ORDER BY n.id"), vec![s("cache")]);
    assert_eq!(ids("MATCH (n) WHERE exists((n)-[:OWNS]->(:service)) RETURN n.id"), vec![s("alice")]);
    assert_eq!(
        rows(&db, "MATCH (n {id: 'cache'}) RETURN exists((n)-->()) AS out, exists((n)<--()) AS inc"),
        vec![vec![QueryValue::Bool(false), QueryValue::Bool(true)]]
    );
    db.query("default", "MATCH (n {id: 'cache'}) SET n.flag = false", &Params::new()).expect("sets");
    assert_eq!(
        rows(&db, "MATCH (n:service) RETURN n.id, exists(n.flag) ORDER BY n.id"),
        vec![vec![s("auth"), QueryValue::Bool(false)], vec![s("cache"), QueryValue::Bool(true)], vec![s("db"), QueryValue::Bool(false)]]
    );
}

/// Every simple path from `a` to `b` over `edges` (`(from, to, rel)`, walked as `dir` says: `>`
/// along, `<` against, `-` either way) of `min..=max` hops, as relationship sequences, fewest
/// hops only: the naive reference of `allShortestPaths`.
fn naive_shortest(edges: &[(String, String, i64)], a: &str, b: &str, dir: char, (min, max): (usize, usize)) -> Vec<Vec<i64>> {
    if a == b {
        return if min == 0 { vec![Vec::new()] } else { Vec::new() };
    }
    let mut found: Vec<Vec<i64>> = Vec::new();
    let mut stack: Vec<(String, Vec<i64>, Vec<String>)> = vec![(a.to_owned(), Vec::new(), vec![a.to_owned()])];
    while let Some((at, rels, seen)) = stack.pop() {
        if at == b {
            found.push(rels);
            continue;
        }
        if rels.len() >= max {
            continue;
        }
        for (x, y, r) in edges {
            let along = *x == at && dir != '<';
            let against = *y == at && dir != '>';
            let next = if along {
                y
            } else if against {
                x
            } else {
                continue;
            };
            if seen.contains(next) {
                continue;
            }
            let (mut rels, mut seen) = (rels.clone(), seen.clone());
            rels.push(*r);
            seen.push(next.clone());
            stack.push((next.clone(), rels, seen));
        }
    }
    let fewest = found.iter().map(Vec::len).filter(|l| *l >= min).min();
    let mut out: Vec<Vec<i64>> = found.into_iter().filter(|p| Some(p.len()) == fewest).collect();
    out.sort();
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(64), ..ProptestConfig::default() })]

    /// `allShortestPaths` gives exactly the fewest-hop simple paths a naive search over the
    /// graph's relationships finds, `shortestPath` one of them (none when there is none), and the
    /// value forms in RETURN equal the MATCH forms, over directions, types and bounds.
    #[test]
    fn shortest_paths_equal_a_naive_search(
        n in 2usize..14,
        edges in prop::collection::vec((0usize..14, 0usize..14, any::<bool>()), 0..24),
        ends in (0usize..14, 0usize..14),
        dir in prop::sample::select(vec!['>', '<', '-']),
        types in prop::sample::select(vec!["", ":A", ":B", ":A|B"]),
        bounds in prop::sample::select(vec![(1usize, None), (0, None), (1, Some(2usize)), (0, Some(1))]),
    ) {
        let db = random_graph(n, &edges);
        let snap = db.snapshot();
        let ws = snap.workspace("default").expect("workspace");
        // The batch API's predicates resolve without regard to case (`b` is `:B`).
        let typed = |t: &str| types.is_empty() || types.trim_start_matches(':').split('|').any(|x| x.eq_ignore_ascii_case(t));
        let all: Vec<(String, String, i64)> = ws
            .query("MATCH (x)-[r]->(y) RETURN x.id, y.id, id(r), type(r)", &Params::new())
            .expect("runs")
            .rows
            .into_iter()
            .filter_map(|r| match (&r[0], &r[1], &r[2], &r[3]) {
                (QueryValue::String(x), QueryValue::String(y), QueryValue::Int(id), QueryValue::String(t)) if typed(t) => Some((x.clone(), y.clone(), *id)),
                _ => None,
            })
            .collect();
        let (a, b) = (format!("e{}", ends.0 % n), format!("e{}", ends.1 % n));
        let (min, max) = bounds;
        let want = naive_shortest(&all, &a, &b, dir, (min, max.unwrap_or(usize::MAX)));
        let (l, r) = match dir { '>' => ("-", "->"), '<' => ("<-", "-"), _ => ("-", "-") };
        let len = format!("*{min}..{}", max.map(|m| m.to_string()).unwrap_or_default());
        let pattern = format!("(a){l}[{types}{len}]{r}(b)");
        let params = Params::from([("a".to_owned(), s(&a)), ("b".to_owned(), s(&b))]);
        let ids = |p: &QueryValue| -> Vec<i64> {
            let QueryValue::Path(p) = p else { return vec![-1] };
            p.relationships.iter().map(|r| r.id as i64).collect()
        };
        let run = |text: &str| ws.query(text, &params).unwrap_or_else(|e| panic!("{text}: {e}")).rows;
        let mut got: Vec<Vec<i64>> = run(&format!("MATCH p = allShortestPaths({pattern}) WHERE a.id = $a AND b.id = $b RETURN p"))
            .iter().map(|row| ids(&row[0])).collect();
        got.sort();
        prop_assert_eq!(&got, &want, "{}", pattern);
        let one = run(&format!("MATCH p = shortestPath({pattern}) WHERE a.id = $a AND b.id = $b RETURN p"));
        prop_assert_eq!(one.len(), usize::from(!want.is_empty()), "{}", pattern);
        if let Some(row) = one.first() {
            prop_assert!(want.contains(&ids(&row[0])), "{}: {:?}", pattern, row);
        }
        // The value forms, on the two ends bound before.
        let value = run(&format!("MATCH (a {{id: $a}}), (b {{id: $b}}) RETURN shortestPath({pattern}), allShortestPaths({pattern})"));
        prop_assert_eq!(value.len(), 1);
        match &value[0][0] {
            QueryValue::Null => prop_assert!(want.is_empty()),
            p => prop_assert!(want.contains(&ids(p)), "{}: {:?}", pattern, p),
        }
        let QueryValue::List(paths) = &value[0][1] else { panic!("{:?}", value[0][1]) };
        let mut listed: Vec<Vec<i64>> = paths.iter().map(ids).collect();
        listed.sort();
        prop_assert_eq!(listed, want.clone());
        // The engine's own path call: as long as the fewest hops, each step along an edge.
        if bounds == (1, None) && a != b {
            let mut filter = engram::EdgeFilter::new(match dir { '>' => engram::Direction::Out, '<' => engram::Direction::In, _ => engram::Direction::Both });
            filter.predicates = types.trim_start_matches(':').split('|').filter(|t| !t.is_empty()).map(str::to_owned).collect();
            let (ea, eb) = (ws.entity_id(&a).expect("a"), ws.entity_id(&b).expect("b"));
            let direct = ws.shortest_path(ea, eb, &filter, &engram::Visibility::default()).expect("searches");
            prop_assert_eq!(direct.as_ref().map(|p| p.len() - 1), want.first().map(Vec::len), "{}", pattern);
            if let Some(p) = direct {
                let ext: Vec<String> = p.iter().map(|e| ws.entity_ext_id(*e).expect("ext").to_owned()).collect();
                prop_assert!(ext.first() == Some(&a) && ext.last() == Some(&b));
                for w in ext.windows(2) {
                    let along = all.iter().any(|(x, y, _)| dir != '<' && *x == w[0] && *y == w[1]);
                    let against = all.iter().any(|(x, y, _)| dir != '>' && *y == w[0] && *x == w[1]);
                    prop_assert!(along || against, "{:?} in {:?}", w, ext);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(32), ..ProptestConfig::default() })]

    /// On larger graphs, where the two ends of the search meet on many entities at once and
    /// paths cross each side's levels by several edges, `allShortestPaths` still gives exactly
    /// the fewest-hop paths of the naive search.
    #[test]
    fn all_shortest_paths_on_larger_graphs_equal_a_naive_search(
        n in 8usize..40,
        edges in prop::collection::vec((0usize..40, 0usize..40, any::<bool>()), 20..110),
        ends in (0usize..40, 0usize..40),
        dir in prop::sample::select(vec!['>', '<', '-']),
        max in 2usize..6,
    ) {
        let db = random_graph(n, &edges);
        let snap = db.snapshot();
        let ws = snap.workspace("default").expect("workspace");
        let all: Vec<(String, String, i64)> = ws
            .query("MATCH (x)-[r]->(y) RETURN x.id, y.id, id(r)", &Params::new())
            .expect("runs")
            .rows
            .into_iter()
            .filter_map(|r| match (&r[0], &r[1], &r[2]) {
                (QueryValue::String(x), QueryValue::String(y), QueryValue::Int(id)) => Some((x.clone(), y.clone(), *id)),
                _ => None,
            })
            .collect();
        let (a, b) = (format!("e{}", ends.0 % n), format!("e{}", ends.1 % n));
        let want = naive_shortest(&all, &a, &b, dir, (1, max));
        let (l, r) = match dir { '>' => ("-", "->"), '<' => ("<-", "-"), _ => ("-", "-") };
        let text = format!("MATCH (a {{id: $a}}), (b {{id: $b}}) MATCH p = allShortestPaths((a){l}[*..{max}]{r}(b)) RETURN [x IN relationships(p) | id(x)]");
        let params = Params::from([("a".to_owned(), s(&a)), ("b".to_owned(), s(&b))]);
        let mut got: Vec<Vec<i64>> = ws
            .query(&text, &params)
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .rows
            .iter()
            .map(|row| match &row[0] {
                QueryValue::List(ids) => ids.iter().map(|v| if let QueryValue::Int(i) = v { *i } else { -1 }).collect(),
                _ => vec![-1],
            })
            .collect();
        got.sort();
        prop_assert_eq!(got, want, "{}", text);
    }
}

/// The search honours the relationship's own tests (a longer path around an edge the inline
/// WHERE refuses), a lower bound of 0 gives the empty path from a node to itself, OPTIONAL MATCH
/// gives null where there is no path, and what the search cannot do is refused by name.
#[test]
fn shortest_paths_follow_the_pattern_and_refuse_what_they_cannot_do() {
    let db = Database::in_memory();
    db.query(
        "default",
        "CREATE (a:P {name: 'a'})-[:R {w: 1}]->(b:P {name: 'b'}), (a)-[:R {w: 9}]->(c:P {name: 'c'}), (c)-[:R {w: 1}]->(d:P {name: 'd'}), (d)-[:R {w: 1}]->(b)",
        &Params::new(),
    )
    .expect("creates");
    let names = |text: &str| -> Vec<Vec<QueryValue>> { rows(&db, text) };
    let path_names = "[n IN nodes(p) | n.name]";
    assert_eq!(
        names(&format!("MATCH p = shortestPath((a:P {{name: 'a'}})-[:R*]->(b:P {{name: 'b'}})) RETURN {path_names}")),
        vec![vec![QueryValue::List(vec![s("a"), s("b")])]]
    );
    assert_eq!(
        names(&format!("MATCH p = shortestPath((a:P {{name: 'c'}})-[r:R* WHERE r.w = 1]-(b:P {{name: 'a'}})) RETURN {path_names}")),
        vec![vec![QueryValue::List(vec![s("c"), s("d"), s("b"), s("a")])]]
    );
    assert_eq!(names("MATCH p = shortestPath((a:P {name: 'a'})-[:R*0..]->(b:P {name: 'a'})) RETURN length(p)"), vec![vec![i(0)]]);
    assert!(names("MATCH p = shortestPath((a:P {name: 'a'})-[:R*]->(b:P {name: 'a'})) RETURN p").is_empty());
    assert_eq!(
        names("MATCH (b:P {name: 'b'}) OPTIONAL MATCH p = shortestPath((b)-[:R*]->(x:P {name: 'a'})) RETURN p"),
        vec![vec![QueryValue::Null]]
    );
    let plan = db.query("default", "EXPLAIN MATCH p = allShortestPaths((a:P)-[:R*]->(b:P)) RETURN p", &Params::new()).expect("explains");
    assert!(plan.plan.unwrap_or_default().contains("AllShortestPaths (a)-[:R*1..]->(b)"));
    for (text, detail) in [
        ("MATCH p = shortestPath((a)-[*2..]->(b)) RETURN p", Detail::InvalidRelationshipPattern),
        ("MATCH p = shortestPath((a)-->()-->(b)) RETURN p", Detail::InvalidRelationshipPattern),
        ("CREATE p = shortestPath((a)-[:R]->(b))", Detail::InvalidClauseComposition),
        ("RETURN shortestPath(1)", Detail::InvalidArgumentType),
    ] {
        let e = run_with(&db, text, &Params::new()).expect_err(text);
        assert_eq!(e.detail, detail, "{text}: {e}");
    }
}

/// A `*0..` over a type no relationship has still matches its zero hops (the start itself),
/// counted or not, and a `*1..` over it matches nothing.
#[test]
fn zero_hops_of_an_unknown_type_match_the_start() {
    let db = db();
    assert_eq!(rows(&db, "MATCH (a {id: 'auth'})-[:NOPE*0..]->(b) RETURN b.id"), vec![vec![s("auth")]]);
    assert_eq!(rows(&db, "MATCH (a {id: 'auth'})-[r:NOPE*0..2]-(b) RETURN b.id, size(r)"), vec![vec![s("auth"), i(0)]]);
    assert_eq!(rows(&db, "MATCH (a {id: 'auth'})-[:NOPE*0..]->(b) RETURN count(DISTINCT b)"), vec![vec![i(1)]]);
    assert_eq!(rows(&db, "MATCH (a {id: 'auth'})-[:NOPE*1..]->(b) RETURN count(b)"), vec![vec![i(0)]]);
    assert_eq!(rows(&db, "MATCH p = shortestPath((a {id: 'auth'})-[:NOPE*0..]->(b {id: 'auth'})) RETURN length(p)"), vec![vec![i(0)]]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(64), ..ProptestConfig::default() })]

    /// `reduce` folds left to right: a sum equals `sum` over the unwound list, a running string
    /// equals the concatenation in order, a list built up equals the comprehension, and a null
    /// list gives null.
    #[test]
    fn reduce_folds_left_to_right(xs in prop::collection::vec(-50i64..50, 0..12)) {
        let db = Database::in_memory();
        let p = Params::from([("xs".to_owned(), QueryValue::List(xs.iter().map(|x| QueryValue::Int(*x)).collect()))]);
        let one = |text: &str| run_with(&db, text, &p).unwrap_or_else(|e| panic!("{text}: {e}")).rows.remove(0).remove(0);
        prop_assert_eq!(one("RETURN reduce(s = 0, x IN $xs | s + x)"), QueryValue::Int(xs.iter().sum()));
        let sum = one("UNWIND $xs AS x RETURN sum(x)");
        prop_assert_eq!(one("RETURN reduce(s = 0, x IN $xs | s + x)"), sum);
        let text: String = xs.iter().map(ToString::to_string).collect();
        prop_assert_eq!(one("RETURN reduce(s = '', x IN $xs | s + toString(x))"), s(&text));
        prop_assert_eq!(one("RETURN reduce(l = [], x IN $xs | l + [x * 2]) = [x IN $xs | x * 2]"), QueryValue::Bool(true));
        prop_assert_eq!(one("RETURN reduce(s = 0, x IN null | s + x)"), QueryValue::Null);
    }
}

/// `reduce` reads the row's variables and nests; its two variables are its own, must differ,
/// and its list must be a list.
#[test]
fn reduce_reads_the_row_and_refuses_what_it_cannot_fold() {
    let db = db();
    assert_eq!(
        rows(&db, "MATCH (a {id: 'auth'})-[r:DEPENDS_ON]->(b) WITH a, collect(r.confidence) AS cs RETURN reduce(m = 0.0, c IN cs | CASE WHEN c > m THEN c ELSE m END) AS best"),
        vec![vec![QueryValue::Float(0.9)]]
    );
    assert_eq!(rows(&db, "RETURN reduce(a = 0, x IN [[1, 2], [3]] | a + reduce(b = 0, y IN x | b + y))"), vec![vec![i(6)]]);
    for (text, detail) in [
        ("RETURN reduce(s = 0, s IN [1, 2] | s + 1)", Detail::VariableAlreadyBound),
        ("RETURN reduce(s = 0, x IN [1] | s + y)", Detail::UndefinedVariable),
        ("RETURN reduce(s = 0, x IN 5 | s + x)", Detail::InvalidArgumentType),
        ("RETURN reduce(s = 0, x IN [1] | count(x))", Detail::InvalidAggregation),
    ] {
        let e = run_with(&db, text, &Params::new()).expect_err(text);
        assert_eq!(e.detail, detail, "{text}: {e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]

    /// `COUNT { pattern [WHERE p] }` per node equals what a MATCH of the same pattern counts for
    /// it, and `EXISTS { … }` is that count above zero, on random graphs (with and without the
    /// `MATCH` keyword, a WHERE reading the subquery's own variable, and a type); so are the
    /// pattern predicates `(n)-->()` and `exists(…)`, which stop at their first match.
    #[test]
    fn pattern_subqueries_equal_the_match_they_stand_for(n in 2usize..10, edges in prop::collection::vec((0usize..10, 0usize..10, any::<bool>()), 0..24)) {
        let db = random_graph(n, &edges);
        let snap = db.snapshot();
        let ws = snap.workspace("default").expect("workspace");
        let run = |text: &str| ws.query(text, &Params::new()).unwrap_or_else(|e| panic!("{text}: {e}")).rows;
        for (inner, pattern) in [
            ("(n)-->()", "(n)-[r]->()"),
            ("MATCH (n)-[:A]-(m) WHERE m <> n", "(n)-[r:A]-(m) WHERE m <> n"),
            ("(n)<-[:B]-(m:node) WHERE m.id > n.id", "(n)<-[r:B]-(m:node) WHERE m.id > n.id"),
        ] {
            let got = run(&format!("MATCH (n) RETURN n.id, COUNT {{ {inner} }}, EXISTS {{ {inner} }} ORDER BY n.id"));
            let want = run(&format!("MATCH (n) OPTIONAL MATCH {pattern} RETURN n.id, count(r), count(r) > 0 ORDER BY n.id"));
            prop_assert_eq!(got, want, "{}", inner);
        }
        // Pattern predicates, which stop at the first match, against counts, which do not.
        let got = run("MATCH (n) WHERE (n)-[:A]->() AND NOT exists((n)<-[:B]-(:node)) RETURN n.id ORDER BY n.id");
        let want = run("MATCH (n) WHERE COUNT { (n)-[:A]->() } >= 1 AND COUNT { (n)<-[:B]-(:node) } = 0 RETURN n.id ORDER BY n.id");
        prop_assert_eq!(got, want);
    }
}

/// `EXISTS { … }` only reads and sees only its own and the row's variables; a variable named
/// `count` still takes a map projection.
#[test]
fn pattern_subqueries_refuse_what_they_cannot_match() {
    let db = db();
    for (text, detail) in [
        ("MATCH (a) WHERE EXISTS { CREATE (a)-[:T]->() } RETURN a", Detail::InvalidClauseComposition),
        ("MATCH (a) WHERE EXISTS { (a)-->(b) WHERE c.x = 1 } RETURN a", Detail::UndefinedVariable),
        ("MATCH (a) RETURN COUNT { (a)-->(b) } + b.x", Detail::UndefinedVariable),
    ] {
        let e = run_with(&db, text, &Params::new()).expect_err(text);
        assert_eq!(e.detail, detail, "{text}: {e}");
    }
    assert_eq!(rows(&db, "WITH {x: 1} AS count RETURN count {.x} AS m"), vec![vec![QueryValue::Map([("x".to_owned(), i(1))].into())]]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(32), ..ProptestConfig::default() })]

    /// FOREACH writes what UNWIND writes (the same nodes, properties and counters), nested ones
    /// what nested UNWINDs write, a SET over a collected list what a SET over the rows does, and
    /// the rows after it are the rows before.
    #[test]
    fn foreach_writes_what_unwind_writes(xs in prop::collection::vec(-5i64..5, 0..6), ys in prop::collection::vec(0i64..3, 0..3)) {
        let db = Database::in_memory();
        let p = Params::from([
            ("xs".to_owned(), QueryValue::List(xs.iter().map(|x| QueryValue::Int(*x)).collect())),
            ("ys".to_owned(), QueryValue::List(ys.iter().map(|y| QueryValue::Int(*y)).collect())),
        ]);
        let write = |text: &str| db.query("default", text, &p).unwrap_or_else(|e| panic!("{text}: {e}"));
        let read = |text: &str| run_with(&db, text, &p).unwrap_or_else(|e| panic!("{text}: {e}")).rows;
        let a = write("FOREACH (x IN $xs | CREATE (:F {v: x}))");
        let b = write("UNWIND $xs AS x CREATE (:U {v: x})");
        prop_assert_eq!(a.stats, b.stats);
        prop_assert_eq!(read("MATCH (n:F) RETURN n.v ORDER BY n.v"), read("MATCH (n:U) RETURN n.v ORDER BY n.v"));
        let a = write("FOREACH (x IN $xs | FOREACH (y IN $ys | MERGE (:FP {s: x * 10 + y})))");
        let b = write("UNWIND $xs AS x UNWIND $ys AS y MERGE (:UP {s: x * 10 + y})");
        prop_assert_eq!(a.stats, b.stats);
        prop_assert_eq!(read("MATCH (n:FP) RETURN n.s ORDER BY n.s"), read("MATCH (n:UP) RETURN n.s ORDER BY n.s"));
        let a = write("MATCH (n:F) WITH collect(n) AS ns FOREACH (n IN ns | SET n.seen = true) RETURN size(ns)");
        let b = write("MATCH (n:U) SET n.seen = true RETURN count(n)");
        prop_assert_eq!(a.stats, b.stats);
        prop_assert_eq!(a.rows, b.rows);
        prop_assert_eq!(read("MATCH (n:F) WHERE n.seen RETURN count(n)"), read("MATCH (n:U) WHERE n.seen RETURN count(n)"));
    }
}

/// A FOREACH that fails on one element writes nothing at all; its variable is its own; it runs
/// update clauses only, over a list.
#[test]
fn foreach_is_atomic_and_refuses_what_it_cannot_run() {
    let db = Database::in_memory();
    let e = db.query("default", "FOREACH (n IN [2, 3, 1] | CREATE (:Y {v: 10 / (n - 1)}))", &Params::new()).expect_err("divides by zero");
    assert!(e.to_string().contains("division by zero") || e.to_string().contains("DivisionByZero"), "{e}");
    assert_eq!(rows(&db, "MATCH (y:Y) RETURN count(y)"), vec![vec![i(0)]]);
    for (text, detail) in [
        ("FOREACH (n IN [1] | MATCH (x) RETURN x)", Detail::InvalidClauseComposition),
        ("FOREACH (n IN 5 | CREATE (:X))", Detail::InvalidArgumentType),
        ("FOREACH (n IN [1] | CREATE (:X {v: n})) RETURN n", Detail::UndefinedVariable),
        ("WITH 1 AS n FOREACH (n IN [1] | CREATE (:X))", Detail::VariableAlreadyBound),
    ] {
        let e = run_with(&db, text, &Params::new()).expect_err(text);
        assert_eq!(e.detail, detail, "{text}: {e}");
    }
    let plan = db.query("default", "EXPLAIN FOREACH (n IN [1] | CREATE (:X {v: n}))", &Params::new()).expect("explains");
    assert!(plan.plan.unwrap_or_default().contains("Foreach n\n    Create"));
}

/// The functions agents' Cypher reaches for beyond the core set: conversions that give null,
/// emptiness, lengths, element ids that find their element again, random UUIDs (version 4, each
/// new), the constants and trigonometry, and `round` to a number of places with a mode.
#[test]
fn more_functions_answer_as_cypher_does() {
    let db = db();
    let one = |text: &str| rows(&db, text).remove(0);
    assert_eq!(
        one("RETURN toIntegerOrNull('x'), toIntegerOrNull([1]), toIntegerOrNull('42'), toStringOrNull(1.5), toFloatOrNull({}), toBooleanOrNull('true'), toStringOrNull(null)"),
        vec![QueryValue::Null, QueryValue::Null, i(42), s("1.5"), QueryValue::Null, QueryValue::Bool(true), QueryValue::Null]
    );
    assert_eq!(
        one("RETURN isEmpty([]), isEmpty('a'), isEmpty({}), isEmpty(null), char_length('héllo'), character_length('')"),
        vec![QueryValue::Bool(true), QueryValue::Bool(false), QueryValue::Bool(true), QueryValue::Null, i(5), i(0)]
    );
    assert_eq!(
        rows(&db, "MATCH (a {id: 'auth'})-[r:DEPENDS_ON]->(b {id: 'db'}) WITH elementId(a) AS ea, elementId(r) AS er MATCH (x)-[y]->() WHERE elementId(x) = ea AND elementId(y) = er RETURN x.id, toUpper(type(y))"),
        vec![vec![s("auth"), s("DEPENDS_ON")]]
    );
    let uuids = rows(&db, "UNWIND range(1, 50) AS k RETURN randomUUID()");
    let texts: BTreeSet<String> = uuids
        .iter()
        .map(|r| match &r[0] {
            QueryValue::String(u) => u.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(texts.len(), 50, "each is new");
    for u in &texts {
        let parts: Vec<&str> = u.split('-').collect();
        assert_eq!(parts.iter().map(|p| p.len()).collect::<Vec<_>>(), [8, 4, 4, 4, 12], "{u}");
        assert!(u.chars().all(|c| c == '-' || c.is_ascii_hexdigit()) && parts[2].starts_with('4'), "{u}");
        assert!(matches!(parts[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b'), "{u}");
    }
    assert_eq!(
        one("RETURN pi() = 3.141592653589793, round(e(), 1), degrees(pi()), radians(180) = pi(), round(atan2(1, 1) * 4, 1), round(sin(0.0), 1), cos(0)"),
        vec![QueryValue::Bool(true), QueryValue::Float(2.7), QueryValue::Float(180.0), QueryValue::Bool(true), QueryValue::Float(3.1), QueryValue::Float(0.0), QueryValue::Float(1.0)]
    );
    assert_eq!(
        one("RETURN round(2.675, 2), round(-2.5, 0), round(2.5, 0, 'HALF_EVEN'), round(1234.5, -2), round(1.5), round(2.5, null), round(null, 2)"),
        vec![QueryValue::Float(2.68), QueryValue::Float(-3.0), QueryValue::Float(2.0), QueryValue::Float(1200.0), QueryValue::Float(2.0), QueryValue::Null, QueryValue::Null]
    );
    for (text, detail) in [
        ("RETURN round(1.5, 0, 'SIDEWAYS')", Detail::InvalidArgumentValue),
        ("RETURN isEmpty(1)", Detail::InvalidArgumentType),
        ("RETURN char_length(1)", Detail::InvalidArgumentType),
        ("RETURN randomUUID(1)", Detail::InvalidNumberOfArguments),
    ] {
        let e = run_with(&db, text, &Params::new()).expect_err(text);
        assert_eq!(e.detail, detail, "{text}: {e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(64), ..ProptestConfig::default() })]

    /// `percentileDisc` is the smallest value whose share of the values reaches `p` (the
    /// smallest for 0), `percentileCont` the linear interpolation at rank `p × (n − 1)`; nulls
    /// are left out, no values give null, and grouping keeps each group's own.
    #[test]
    fn percentiles_equal_their_definitions(xs in prop::collection::vec(prop::option::of(-20i64..20), 0..14), p in prop::sample::select(vec![0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0])) {
        let db = Database::in_memory();
        let list = QueryValue::List(xs.iter().map(|x| x.map_or(QueryValue::Null, QueryValue::Int)).collect());
        let params = Params::from([("xs".to_owned(), list), ("p".to_owned(), QueryValue::Float(p))]);
        let got = run_with(&db, "UNWIND $xs AS x RETURN percentileDisc(x, $p), percentileCont(x, $p)", &params).expect("runs").rows;
        let mut v: Vec<i64> = xs.iter().flatten().copied().collect();
        v.sort_unstable();
        let n = v.len();
        let disc = if n == 0 {
            QueryValue::Null
        } else if p == 0.0 {
            QueryValue::Int(v[0])
        } else {
            QueryValue::Int(*v.iter().find(|&&x| v.iter().filter(|&&y| y <= x).count() as f64 / n as f64 >= p - 1e-12).expect("the largest reaches 1"))
        };
        let cont = if n == 0 {
            QueryValue::Null
        } else {
            let at = p * (n - 1) as f64;
            let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
            QueryValue::Float(v[lo] as f64 + (at - lo as f64) * (v[hi] - v[lo]) as f64)
        };
        prop_assert_eq!(got, vec![vec![disc, cont]]);
    }
}

/// A percentile outside 0..1 is refused by name; percentiles group like any aggregate.
#[test]
fn percentiles_refuse_a_rank_outside_0_to_1_and_group() {
    let db = db();
    let e = run_with(&db, "UNWIND [1, 2] AS x RETURN percentileCont(x, 1.5)", &Params::new()).expect_err("out of range");
    assert_eq!(e.detail, Detail::InvalidArgumentValue, "{e}");
    let e = run_with(&db, "UNWIND ['a'] AS x RETURN percentileDisc(x, 0.5)", &Params::new()).expect_err("not a number");
    assert_eq!(e.kind, ErrorType::TypeError, "{e}");
    assert_eq!(
        rows(&db, "UNWIND [['a', 1], ['a', 3], ['b', 10]] AS r RETURN r[0] AS k, percentileCont(r[1], 0.5) AS m ORDER BY k"),
        vec![vec![s("a"), QueryValue::Float(2.0)], vec![s("b"), QueryValue::Float(10.0)]]
    );
}

/// A comprehension, quantifier or reduce over an aggregate uses its own variables freely; a row
/// variable inside it still has to be a grouping key.
#[test]
fn aggregates_inside_comprehensions_see_their_own_variables() {
    let db = db();
    assert_eq!(
        rows(&db, "MATCH (n:service) RETURN [x IN collect(n.id) WHERE x <> 'db' | toUpper(x)] AS ids, any(y IN collect(n.id) WHERE y = 'cache') AS c, reduce(s = '', x IN collect(n.id) | s + x) = '' AS e"),
        vec![vec![QueryValue::List(vec![s("AUTH"), s("CACHE")]), QueryValue::Bool(true), QueryValue::Bool(false)]]
    );
    let e = run_with(&db, "MATCH (n) RETURN [x IN collect(n.id) | x + n.name] AS bad", &Params::new()).expect_err("n is no key");
    assert_eq!(e.detail, Detail::AmbiguousAggregationExpression, "{e}");
    assert_eq!(rows(&db, "MATCH (n:service) RETURN n.name AS k, [x IN collect(n.id) | x + n.name] AS l ORDER BY k").len(), 3);
}

/// FalkorDB's extensions to the function library answer as its documentation says, nulls and
/// out-of-range positions included, and refuse wrong argument types by name.
#[test]
fn falkordb_functions_answer_as_documented() {
    let db = db();
    let one = |text: &str| rows(&db, text).remove(0);
    let list = |xs: Vec<QueryValue>| QueryValue::List(xs);
    let f = QueryValue::Float;
    let b = QueryValue::Bool;
    assert_eq!(
        one("MATCH (a {id: 'auth'}) RETURN typeOf(a), typeOf(1), typeOf(1.5), typeOf('x'), typeOf(true), typeOf([]), typeOf({}), typeOf(null)"),
        vec![s("Node"), s("Integer"), s("Float"), s("String"), s("Boolean"), s("List"), s("Map"), s("Null")]
    );
    assert_eq!(
        one("MATCH (a {id: 'auth'})-[r:DEPENDS_ON]->(b {id: 'db'}) RETURN typeOf(r), hasLabels(a, ['service']), hasLabels(a, ['service', 'person']), hasLabels(a, [])"),
        vec![s("Edge"), b(true), b(false), b(true)]
    );
    assert_eq!(
        one("MATCH (a {id: 'auth'}), (c {id: 'cache'}) RETURN outdegree(a), indegree(a), outdegree(a, 'DEPENDS_ON'), outdegree(a, ['OWNS']), indegree(c, 'DEPENDS_ON', 'OWNS'), outdegree(a, 'NOTHING')"),
        vec![i(2), i(1), i(2), i(0), i(2), i(0)]
    );
    assert_eq!(
        one("RETURN list.dedup([1, 1.0, 'a', 2, 'a']), list.insert([1, 2], 0, 9), list.insert([1, 2], -1, 9), list.insert([1, 2], 3, 9), list.insert([1, 2], 1, null), list.insert([1, 2], 1, 2, false)"),
        vec![
            list(vec![i(1), s("a"), i(2)]),
            list(vec![i(9), i(1), i(2)]),
            list(vec![i(1), i(2), i(9)]),
            list(vec![i(1), i(2)]),
            list(vec![i(1), i(2)]),
            list(vec![i(1), i(2)]),
        ]
    );
    assert_eq!(
        one("RETURN list.insertListElements([1, 2], [2, 3, 3], 1, false), list.insertListElements([1], null, 0), list.remove([1, 2, 3], -1), list.remove([1, 2, 3], 0, 2), list.remove([1, 2, 3], 3), list.remove([1, 2, 3], 0, 0), list.sort([3, 1, 2], false)"),
        vec![
            list(vec![i(1), i(3), i(2)]),
            list(vec![i(1)]),
            list(vec![i(1), i(2)]),
            list(vec![i(3)]),
            list(vec![i(1), i(2), i(3)]),
            list(vec![i(1), i(2), i(3)]),
            list(vec![i(3), i(2), i(1)]),
        ]
    );
    assert_eq!(
        one("RETURN toIntegerList(['1', 'x', 2.7, true]), toFloatList(['1.5', 'x']), toBooleanList(['TRUE', 0, 'x']), toStringList([1, 2.5, true, [1]]), toIntegerList(null)"),
        vec![
            list(vec![i(1), QueryValue::Null, i(2), i(1)]),
            list(vec![f(1.5), QueryValue::Null]),
            list(vec![b(true), b(false), QueryValue::Null]),
            list(vec![s("1"), s("2.5"), s("true"), QueryValue::Null]),
            QueryValue::Null,
        ]
    );
    assert_eq!(
        one("RETURN pow(2, 10), pow(2, null), string.join(['a', 'b'], '-'), string.join(['a', 'b']), string.join(['a'], null), string.replaceRegEx('a1b22', '[0-9]', '$0#'), intern('x')"),
        vec![f(1024.0), QueryValue::Null, s("a-b"), s("ab"), QueryValue::Null, s("a$0#b$0#$0#"), s("x")]
    );
    assert_eq!(
        one("RETURN string.matchRegEx('a1b22', '([a-z])([0-9]+)'), string.matchRegEx('ab', '(x)?b'), string.matchRegEx(null, 'a')"),
        vec![
            list(vec![list(vec![s("a1"), s("a"), s("1")]), list(vec![s("b22"), s("b"), s("22")])]),
            list(vec![list(vec![s("b"), s("")])]),
            list(vec![]),
        ]
    );
    assert_eq!(
        one("RETURN nullIf(1, 1), nullIf(1, 2), isNaN(0.0 / 0.0), isNaN(1), lower('A'), upper('a')"),
        vec![QueryValue::Null, i(1), b(true), b(false), s("a"), s("A")]
    );
    for (text, detail) in [
        ("RETURN list.dedup(1)", Detail::InvalidArgumentType),
        ("RETURN list.insert([1], 'x', 2)", Detail::InvalidArgumentType),
        ("RETURN list.insert([1], 0, 2, 'no')", Detail::InvalidArgumentType),
        ("RETURN list.remove([1], 0, 'all')", Detail::InvalidArgumentType),
        ("RETURN string.join(['a', 1])", Detail::InvalidArgumentType),
        ("RETURN string.matchRegEx('a', '(')", Detail::InvalidArgumentValue),
        ("RETURN hasLabels(1, ['A'])", Detail::InvalidArgumentType),
        ("RETURN pow('2', 2)", Detail::InvalidArgumentType),
        ("RETURN list.sort([1], 1, 2)", Detail::InvalidNumberOfArguments),
    ] {
        let e = run_with(&db, text, &Params::new()).expect_err(text);
        assert_eq!(e.detail, detail, "{text}: {e}");
    }
}

/// `toJSON` of a node, a relationship and a path reads back as FalkorDB's shapes, with the same
/// labels, type, ends and properties the result's own values carry; strings are escaped.
#[test]
fn to_json_gives_falkordb_shapes() {
    let db = db();
    let got = rows(&db, "MATCH p = (a {id: 'auth'})-[r:DEPENDS_ON]->(b {id: 'db'}) RETURN toJSON(a), toJSON(r), toJSON(p), a, r, b, toJSON({k: ['q\"uote', 1.5, null]})").remove(0);
    let parse = |v: &QueryValue| -> serde_json::Value {
        let QueryValue::String(t) = v else { panic!("{v:?}") };
        serde_json::from_str(t).unwrap_or_else(|e| panic!("{t}: {e}"))
    };
    let (node, rel, path) = (parse(&got[0]), parse(&got[1]), parse(&got[2]));
    let (a, r, bn) = (got[3].to_json(), got[4].to_json(), got[5].to_json());
    assert_eq!(node["type"], "node");
    assert_eq!(node["id"], a["id"]);
    assert_eq!(node["labels"], a["labels"]);
    assert_eq!(node["properties"], a["properties"]);
    assert_eq!(rel["type"], "relationship");
    assert_eq!(rel["id"], r["id"]);
    assert_eq!(rel["relationship"], r["type"]);
    assert_eq!(rel["properties"], r["properties"]);
    assert_eq!(rel["start"]["id"], a["id"]);
    assert_eq!(rel["end"]["id"], bn["id"]);
    assert_eq!(rel["end"]["properties"], bn["properties"]);
    assert_eq!(path, serde_json::json!([node, rel, parse(&rows(&db, "MATCH (b {id: 'db'}) RETURN toJSON(b)")[0][0])]));
    assert_eq!(parse(&got[6]), serde_json::json!({"k": ["q\"uote", 1.5, null]}));
}

/// The list model each `list.*` function is checked against: a position counted from the end
/// when negative, `None` past either end (`len` itself a position when inserting).
fn model_position(idx: i64, len: usize, at_end: bool) -> Option<usize> {
    let span = len as i64 + i64::from(at_end);
    let at = if idx < 0 { span + idx } else { idx };
    (0 <= at && at < span).then_some(at as usize)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(64), ..ProptestConfig::default() })]

    /// On random lists, positions and counts: `list.insert`, `list.insertListElements`,
    /// `list.remove` and `list.dedup` equal a model written from FalkorDB's documentation,
    /// `list.sort` equals ORDER BY over the same values, and `string.join` equals `reduce`.
    #[test]
    fn list_functions_equal_a_model(
        xs in prop::collection::vec(0i64..5, 0..7),
        more in prop::collection::vec(0i64..5, 0..4),
        idx in -9i64..9,
        count in -1i64..5,
        dups in any::<bool>(),
    ) {
        let db = Database::in_memory();
        let ints = |v: &[i64]| QueryValue::List(v.iter().map(|x| QueryValue::Int(*x)).collect());
        let params = Params::from([
            ("xs".to_owned(), ints(&xs)),
            ("more".to_owned(), ints(&more)),
            ("idx".to_owned(), QueryValue::Int(idx)),
            ("count".to_owned(), QueryValue::Int(count)),
            ("dups".to_owned(), QueryValue::Bool(dups)),
        ]);
        let got = run_with(
            &db,
            "RETURN list.insert($xs, $idx, 7, $dups), list.insertListElements($xs, $more, $idx, $dups), list.remove($xs, $idx, $count), list.dedup($xs + $more), list.sort($xs + $more, $dups), string.join([x IN $xs | toString(x)], ','), reduce(t = '', x IN $xs | t + CASE t WHEN '' THEN '' ELSE ',' END + toString(x))",
            &params,
        ).expect("runs").rows.remove(0);
        let dedup = |v: Vec<i64>| -> Vec<i64> { let mut seen = BTreeSet::new(); v.into_iter().filter(|x| seen.insert(*x)).collect() };
        let insert = |new: Vec<i64>| -> Vec<i64> {
            let Some(at) = model_position(idx, xs.len(), true) else { return xs.clone() };
            let new: Vec<i64> = if dups { new } else { dedup(new.into_iter().filter(|x| !xs.contains(x)).collect()) };
            xs[..at].iter().chain(&new).chain(&xs[at..]).copied().collect()
        };
        prop_assert_eq!(&got[0], &ints(&insert(vec![7])));
        prop_assert_eq!(&got[1], &ints(&insert(more.clone())));
        let removed = match model_position(idx, xs.len(), false) {
            Some(at) if count > 0 => { let mut v = xs.clone(); v.drain(at..(at + count as usize).min(xs.len())); v }
            _ => xs.clone(),
        };
        prop_assert_eq!(&got[2], &ints(&removed));
        let both: Vec<i64> = xs.iter().chain(&more).copied().collect();
        prop_assert_eq!(&got[3], &ints(&dedup(both.clone())));
        let ordered = run_with(&db, &format!("UNWIND $xs + $more AS x RETURN x ORDER BY x {}", if dups { "ASC" } else { "DESC" }), &params).expect("runs").rows;
        prop_assert_eq!(&got[4], &QueryValue::List(ordered.into_iter().map(|mut r| r.remove(0)).collect()));
        prop_assert_eq!(&got[5], &got[6]);
    }

    /// `outdegree` / `indegree`, with and without types, equal counting the node's
    /// relationships with a pattern, on random graphs.
    #[test]
    fn degrees_equal_counting_the_pattern(
        n in 1usize..10,
        edges in prop::collection::vec((0usize..10, 0usize..10, any::<bool>()), 0..24),
        types in prop::sample::select(vec!["", "A", "B"]),
    ) {
        let db = random_graph(n, &edges);
        let (args, label) = if types.is_empty() { (String::new(), String::new()) } else { (format!(", '{types}'"), format!(":{types}")) };
        let text = format!("MATCH (x) RETURN x.id, outdegree(x{args}), size([(x)-[{label}]->() | 1]), indegree(x{args}), size([(x)<-[{label}]-() | 1]) ORDER BY x.id");
        for row in rows(&db, &text) {
            prop_assert_eq!(&row[1], &row[2], "{:?}", row);
            prop_assert_eq!(&row[3], &row[4], "{:?}", row);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]

    /// `db.meta.stats()` equals counting with MATCH: nodes per label, relationships per type,
    /// the totals, and the names `db.labels()` & co list.
    #[test]
    fn meta_stats_equal_counting_with_match(
        n in 1usize..10,
        edges in prop::collection::vec((0usize..10, 0usize..10, any::<bool>()), 0..20),
        extra in prop::collection::vec((0usize..10, prop::sample::select(vec!["X", "Y"])), 0..6),
    ) {
        let db = random_graph(n, &edges);
        for (e, label) in &extra {
            db.query("default", &format!("MATCH (v {{id: 'e{}'}}) SET v:{label}", e % n), &Params::new()).expect("labels");
        }
        let stats = rows(&db, "CALL db.meta.stats()").remove(0);
        let counted = |text: &str| -> Vec<(String, QueryValue)> {
            rows(&db, text).into_iter().map(|mut r| { let c = r.remove(1); let QueryValue::String(k) = r.remove(0) else { panic!() }; (k, c) }).collect()
        };
        let as_map = |v: &QueryValue| -> Vec<(String, QueryValue)> {
            let QueryValue::Map(m) = v else { panic!("{v:?}") };
            m.iter().filter(|(_, c)| **c != QueryValue::Int(0)).map(|(k, c)| (k.clone(), c.clone())).collect()
        };
        prop_assert_eq!(as_map(&stats[0]), counted("MATCH (v) UNWIND labels(v) AS l RETURN l, count(*) ORDER BY l"));
        prop_assert_eq!(as_map(&stats[1]), counted("MATCH ()-[r]->() RETURN type(r) AS t, count(*) ORDER BY t"));
        prop_assert_eq!(&stats[2], &rows(&db, "MATCH ()-[r]->() RETURN count(r)")[0][0]);
        prop_assert_eq!(&stats[3], &rows(&db, "MATCH (v) RETURN count(v)")[0][0]);
        for (i, call) in [(4, "CALL db.labels()"), (5, "CALL db.relationshipTypes()"), (6, "CALL db.propertyKeys()")] {
            prop_assert_eq!(&stats[i], &QueryValue::Int(rows(&db, call).len() as i64), "{}", call);
        }
    }
}

/// `dbms.procedures()` lists every procedure once with whether it reads or writes, and
/// `db.constraints()` has FalkorDB's columns and no rows (engram declares no constraints).
#[test]
fn dbms_procedures_and_constraints() {
    let db = db();
    let listed = rows(&db, "CALL dbms.procedures() YIELD name, mode RETURN name, mode ORDER BY name");
    assert_eq!(listed.len(), engram::query::functions::PROCEDURES.len());
    assert!(listed.contains(&vec![s("engram.forget"), s("write")]) && listed.contains(&vec![s("db.labels"), s("read")]), "{listed:?}");
    let r = run_with(&db, "CALL db.constraints()", &Params::new()).expect("runs");
    assert_eq!(r.columns.to_vec(), ["type", "label", "properties", "entitytype", "status"]);
    assert!(r.rows.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]

    /// `algo.BFS` reaches exactly the nodes a variable-length pattern reaches along outgoing
    /// relationships within the level bound, nearest first, each with a relationship from the
    /// source or a node reached before it; no row when it reaches none.
    #[test]
    fn algo_bfs_equals_the_pattern_reach(
        n in 1usize..10,
        edges in prop::collection::vec((0usize..10, 0usize..10, any::<bool>()), 0..20),
        start in 0usize..10,
        max_level in -1i64..4,
        typed in any::<bool>(),
    ) {
        let db = random_graph(n, &edges);
        let start = format!("e{}", start % n);
        let (arg, label) = if typed { ("'A'", ":A") } else { ("NULL", "") };
        let got = rows(&db, &format!("MATCH (a {{id: '{start}'}}) CALL algo.BFS(a, {max_level}, {arg}) YIELD nodes, edges RETURN [x IN nodes | x.id], [r IN edges | [startNode(r).id, endNode(r).id, type(r)]]"));
        let bound = if max_level <= 0 { String::new() } else { max_level.to_string() };
        let want: BTreeSet<String> = rows(&db, &format!("MATCH (a {{id: '{start}'}})-[{label}*1..{bound}]->(b) WHERE b <> a RETURN DISTINCT b.id"))
            .into_iter()
            .map(|r| match &r[0] { QueryValue::String(x) => x.clone(), other => panic!("{other:?}") })
            .collect();
        if want.is_empty() {
            prop_assert!(got.is_empty(), "{:?}", got);
            return Ok(());
        }
        let (QueryValue::List(nodes), QueryValue::List(rels)) = (&got[0][0], &got[0][1]) else { panic!("{got:?}") };
        let ids: Vec<String> = nodes.iter().map(|x| match x { QueryValue::String(x) => x.clone(), other => panic!("{other:?}") }).collect();
        prop_assert_eq!(ids.iter().cloned().collect::<BTreeSet<_>>(), want);
        prop_assert_eq!(ids.len(), nodes.len());
        let mut before = vec![start.clone()];
        for (id, rel) in ids.iter().zip(rels) {
            let QueryValue::List(r) = rel else { panic!("{rel:?}") };
            let (QueryValue::String(from), QueryValue::String(to), QueryValue::String(t)) = (&r[0], &r[1], &r[2]) else { panic!("{r:?}") };
            prop_assert!(before.contains(from) && to == id && (!typed || t.eq_ignore_ascii_case("A")), "{:?} reaching {}", r, id);
            before.push(id.clone());
        }
    }

    /// `algo.pageRank` equals a power iteration written here over the adjacency matrix (edges
    /// between two nodes counted once, a node without outgoing ones spreading its rank over all,
    /// damping 0.85, stopping once the ranks move less than 1e-4 in all), the ranks summing to 1.
    #[test]
    fn algo_page_rank_equals_a_power_iteration(
        n in 1usize..9,
        edges in prop::collection::vec((0usize..9, 0usize..9, any::<bool>()), 0..20),
        typed in any::<bool>(),
    ) {
        let db = random_graph(n, &edges);
        let arg = if typed { "'A'" } else { "NULL" };
        let got: Vec<(String, f64)> = rows(&db, &format!("CALL algo.pageRank(NULL, {arg}) YIELD node, score RETURN node.id, score"))
            .into_iter()
            .map(|r| match (&r[0], &r[1]) { (QueryValue::String(x), QueryValue::Float(s)) => (x.clone(), *s), other => panic!("{other:?}") })
            .collect();
        let mut adj = vec![vec![false; n]; n];
        for (s, o, t) in &edges {
            if !typed || *t {
                adj[s % n][o % n] = true;
            }
        }
        let mut rank = vec![1.0 / n as f64; n];
        for _ in 0..100 {
            let mut next = vec![0.15 / n as f64; n];
            for i in 0..n {
                let outs: Vec<usize> = (0..n).filter(|&j| adj[i][j]).collect();
                if outs.is_empty() {
                    for x in &mut next {
                        *x += 0.85 * rank[i] / n as f64;
                    }
                }
                for &j in &outs {
                    next[j] += 0.85 * rank[i] / outs.len() as f64;
                }
            }
            let change: f64 = next.iter().zip(&rank).map(|(a, b)| (a - b).abs()).sum();
            rank = next;
            if change < 1e-4 {
                break;
            }
        }
        prop_assert_eq!(got.len(), n);
        prop_assert!((got.iter().map(|(_, s)| s).sum::<f64>() - 1.0).abs() < 1e-9);
        prop_assert!(got.windows(2).all(|w| w[0].1 >= w[1].1), "highest first: {:?}", got);
        for (id, score) in &got {
            let i: usize = id.trim_start_matches('e').parse().expect("an id");
            prop_assert!((score - rank[i]).abs() < 1e-9, "{}: {} against {}", id, score, rank[i]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]

    /// `algo.WCC` puts two nodes in one component exactly when an undirected walk joins them
    /// (found here by a flood fill over the relationships a MATCH lists), each component named
    /// by its smallest node id, with and without a type filter.
    #[test]
    fn algo_wcc_equals_undirected_reach(
        n in 1usize..10,
        edges in prop::collection::vec((0usize..10, 0usize..10, any::<bool>()), 0..14),
        typed in any::<bool>(),
    ) {
        let db = random_graph(n, &edges);
        let config = if typed { "{relationshipTypes: ['A']}" } else { "{}" };
        let int = |v: &QueryValue| match v { QueryValue::Int(i) => *i, other => panic!("{other:?}") };
        let got: Vec<(i64, i64)> = rows(&db, &format!("CALL algo.WCC({config}) YIELD node, componentId RETURN id(node), componentId ORDER BY id(node)"))
            .iter()
            .map(|r| (int(&r[0]), int(&r[1])))
            .collect();
        let ids: Vec<i64> = rows(&db, "MATCH (x) RETURN id(x) ORDER BY id(x)").iter().map(|r| int(&r[0])).collect();
        prop_assert_eq!(got.iter().map(|(a, _)| *a).collect::<Vec<_>>(), ids.clone());
        let rel = if typed { ":A" } else { "" };
        let links: Vec<(i64, i64)> = rows(&db, &format!("MATCH (x)-[{rel}]->(y) RETURN id(x), id(y)")).iter().map(|r| (int(&r[0]), int(&r[1]))).collect();
        for &(a, c) in &got {
            let mut reach = BTreeSet::from([a]);
            loop {
                let more: Vec<i64> = links
                    .iter()
                    .filter_map(|&(x, y)| if reach.contains(&x) { Some(y) } else if reach.contains(&y) { Some(x) } else { None })
                    .filter(|z| !reach.contains(z))
                    .collect();
                if more.is_empty() {
                    break;
                }
                reach.extend(more);
            }
            prop_assert_eq!(c, *reach.iter().next().expect("itself"), "node {}", a);
            for &(b, d) in &got {
                prop_assert_eq!(reach.contains(&b), c == d, "{} and {}", a, b);
            }
        }
    }
}

/// `algo.WCC` keeps to the labels asked for, takes null or no argument for everything, and
/// refuses a configuration key it does not know by name.
#[test]
fn algo_wcc_filters_by_label_and_refuses_unknown_keys() {
    let db = Database::in_memory();
    db.query("default", "CREATE (a:P {n: 'a'})-[:R]->(b:P {n: 'b'}), (b)-[:R]->(c:Q {n: 'c'}), (c)-[:R]->(d:P {n: 'd'})", &Params::new())
        .expect("creates");
    let groups = |text: &str| -> Vec<Vec<QueryValue>> { rows(&db, text) };
    let by_label =
        groups("CALL algo.WCC({nodeLabels: ['P']}) YIELD node, componentId RETURN componentId, collect(node.n) AS ns ORDER BY ns");
    assert_eq!(
        by_label.iter().map(|r| r[1].clone()).collect::<Vec<_>>(),
        [QueryValue::List(vec![s("a"), s("b")]), QueryValue::List(vec![s("d")])]
    );
    for all in [
        "CALL algo.WCC() YIELD componentId RETURN count(DISTINCT componentId)",
        "CALL algo.WCC(null) YIELD componentId RETURN count(DISTINCT componentId)",
    ] {
        assert_eq!(groups(all), vec![vec![i(1)]], "{all}");
    }
    let e = run_with(&db, "CALL algo.WCC({labels: ['P']})", &Params::new()).expect_err("an unknown key");
    assert!(e.message.contains("labels") && e.detail == Detail::InvalidArgumentValue, "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]

    /// A variable-length MATCH planned as a reach (each end node once) answers as the same
    /// MATCH enumerating trails (a path variable, unused, forces them), whatever the projection
    /// after it: the rewrite applies only where repeats of an end node cannot change the rows
    /// (`count(*)` and a plain `RETURN a.id` counted each trail and were wrongly rewritten).
    #[test]
    fn a_reach_answers_as_the_trails_would(
        n in 1usize..8,
        edges in prop::collection::vec((0usize..8, 0usize..8, any::<bool>()), 0..12),
        start in 0usize..8,
        shape in prop::sample::select(vec!["->", "-"]),
        bounds in prop::sample::select(vec!["*0..2", "*1..3", "*2"]),
        projection in prop::sample::select(vec![
            "count(*)",
            "a.id",
            "DISTINCT a.id",
            "count(DISTINCT b)",
            "list.sort(collect(DISTINCT b.id))",
            "min(b.id), max(b.id)",
            "sum(1)",
            "DISTINCT id(b)",
            "b.id, count(*)",
            "b.id, count(DISTINCT a)",
            "count(b.id)",
            "DISTINCT b.id ORDER BY b.id DESC LIMIT 2",
        ]),
        optional in any::<bool>(),
    ) {
        let db = random_graph(n, &edges);
        let start = format!("e{}", start % n);
        let exclude = if shape == "-" { " WHERE b <> a" } else { "" };
        let optional = if optional { "OPTIONAL " } else { "" };
        let text = |path: &str| format!("MATCH (a {{id: '{start}'}}) {optional}MATCH {path}(a)-[{bounds}]{shape}(b){exclude} RETURN {projection}");
        let (reach, trails) = (text(""), text("p = "));
        let sorted = |q: &str| { let mut r: Vec<String> = rows(&db, q).iter().map(|r| format!("{r:?}")).collect(); r.sort(); r };
        prop_assert_eq!(sorted(&reach), sorted(&trails), "{}", reach);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]

    /// A count fused into its expansion (`count(*)`, `count(r)`, `count(b)`, `count(DISTINCT b)`
    /// right after the last hop) equals collecting the same matches and taking the list's size,
    /// which no rewrite touches: over directions, types, a tested or repeated far end, a second
    /// hop, and several start rows.
    #[test]
    fn fused_counts_equal_collected_sizes(
        n in 1usize..8,
        edges in prop::collection::vec((0usize..8, 0usize..8, any::<bool>()), 0..16),
        start in prop::sample::select(vec!["(a {id: 'e0'})", "(a)", "(a:node)"]),
        hop in prop::sample::select(vec!["-[r]->", "<-[r]-", "-[r]-", "-[r:A]-", "-[r:A|B]->"]),
        far in prop::sample::select(vec!["(b)", "(b {id: 'e1'})", "(a)", "()-[s]->(b)", "(b)<-[s]-(c)"]),
        what in prop::sample::select(vec!["count(*)", "count(r)", "count(b)", "count(DISTINCT b)"]),
    ) {
        let db = random_graph(n, &edges);
        let (what, collected) = match what {
            "count(DISTINCT b)" if !far.contains('b') => ("count(DISTINCT a)", "size(collect(DISTINCT a))"),
            "count(b)" if !far.contains('b') => ("count(a)", "size(collect(a))"),
            "count(*)" => ("count(*)", "size(collect(1))"),
            "count(r)" => ("count(r)", "size(collect(r))"),
            "count(b)" => ("count(b)", "size(collect(b))"),
            _ => ("count(DISTINCT b)", "size(collect(DISTINCT b))"),
        };
        let pattern = format!("MATCH {start}{hop}{far}");
        let fused = rows(&db, &format!("{pattern} RETURN {what}"));
        let plain = rows(&db, &format!("{pattern} RETURN {collected}"));
        prop_assert_eq!(fused, plain, "{}", pattern);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(64), ..ProptestConfig::default() })]

    /// ORDER BY … [SKIP] LIMIT, which keeps only the rows it returns (a selection), gives the
    /// rows and order of sorting everything and then slicing (PROFILE runs the operators one by
    /// one; a collected list is sliced after a full sort), ties in input order, over keys of
    /// mixed kinds and nulls.
    #[test]
    fn order_by_limit_equals_a_full_sort(
        keys in prop::collection::vec(prop::option::of(prop_oneof![(0i64..4).prop_map(QueryValue::Int), "[ab]".prop_map(QueryValue::String)]), 0..30),
        descending in any::<bool>(),
        skip in prop::option::of(0i64..6),
        limit in 0i64..9,
    ) {
        let db = Database::in_memory();
        let xs = QueryValue::List(
            keys.iter()
                .enumerate()
                .map(|(i, k)| QueryValue::Map([("k".to_owned(), k.clone().unwrap_or(QueryValue::Null)), ("v".to_owned(), QueryValue::Int(i as i64))].into_iter().collect()))
                .collect(),
        );
        let params = Params::from([("xs".to_owned(), xs)]);
        let dir = if descending { "DESC" } else { "ASC" };
        let skipped = skip.map(|s| format!(" SKIP {s}")).unwrap_or_default();
        let text = format!("UNWIND $xs AS x RETURN x.v ORDER BY x.k {dir}{skipped} LIMIT {limit}");
        let got = run_with(&db, &text, &params).expect("runs").rows;
        let profiled = run_with(&db, &format!("PROFILE {text}"), &params).expect("runs").rows;
        prop_assert_eq!(&got, &profiled, "{}", text);
        let from = skip.unwrap_or(0);
        let sliced = run_with(&db, &format!("UNWIND $xs AS x WITH x ORDER BY x.k {dir} WITH collect(x.v) AS vs RETURN vs[{from}..{}]", from + limit), &params).expect("runs").rows;
        let QueryValue::List(want) = &sliced[0][0] else { panic!("{sliced:?}") };
        prop_assert_eq!(got.into_iter().map(|mut r| r.remove(0)).collect::<Vec<_>>(), want.clone(), "{}", text);
    }
}

/// `reduce` could nest a value one level per element, and what reads a value recurses through
/// its nesting: past `query.max_value_depth` it is refused by name (a hundred thousand levels
/// aborted the process on a stack overflow before), and a value at the limit is read, compared,
/// hashed, sorted, encoded and returned on a 2 MiB thread stack. A flat accumulator, or one handed
/// back unchanged, is not limited.
#[test]
fn reduce_cannot_nest_values_past_the_limit() {
    let run = || {
        let db = Database::in_memory();
        for deep in ["reduce(acc = [], x IN range(1, 100000) | [acc])", "reduce(acc = {}, x IN range(1, 100000) | {k: acc})"] {
            let e = run_with(&db, &format!("WITH {deep} AS v RETURN v = v"), &Params::new()).expect_err("too deep");
            assert!(e.kind == ErrorType::LimitError && e.message.contains("query.max_value_depth"), "{e}");
        }
        let at_limit = "reduce(acc = [], x IN range(1, 255) | [acc])";
        let got = rows(&db, &format!("WITH {at_limit} AS v RETURN v = v, count(DISTINCT v), size(toJSON(v)), v ORDER BY v"));
        assert_eq!(got[0][..3], [QueryValue::Bool(true), i(1), i(512)]);
        assert_eq!(rows(&db, "RETURN size(reduce(acc = [], x IN range(1, 5000) | acc + [x])), size(reduce(acc = range(1, 5000), x IN range(1, 5000) | acc))"), vec![vec![i(5000), i(5000)]]);
    };
    std::thread::Builder::new().stack_size(2 << 20).spawn(run).expect("spawns").join().expect("no overflow");
}

/// Neo4j 5's subquery expressions: `EXISTS { … }` and `COUNT { … }` over a pattern (a node alone
/// too) or a query that sees the row's variables (RETURN optional), `COLLECT { … RETURN x }`;
/// what they bind stays inside; each gives per row what the same question asked another way
/// gives; writes, a second column and UNION are refused by name.
#[test]
fn subquery_expressions() {
    let db = Database::in_memory();
    write(&db, "CREATE (a:A {k: 1})-[:R]->(:B {k: 2}), (a)-[:R]->(:B {k: 5}), (:A {k: 3}), (:A {k: 4})-[:S]->(:B {k: 5})");
    let q = |text: &str| rows(&db, text);
    let by_k = |sub: &str| q(&format!("MATCH (n:A) RETURN n.k, {sub} AS x ORDER BY n.k"));
    let col = |v: Vec<QueryValue>| v.into_iter().zip([1, 3, 4]).map(|(x, k)| vec![i(k), x]).collect::<Vec<_>>();
    let b = QueryValue::Bool;
    // Counting rows: each form against the pattern comprehension it equals.
    let sizes = col(vec![i(2), i(0), i(1)]);
    assert_eq!(by_k("size([(n)-->(m) | 1])"), sizes);
    assert_eq!(by_k("COUNT { (n)-->() }"), sizes);
    assert_eq!(by_k("COUNT { MATCH (n)-->(m) }"), sizes);
    assert_eq!(by_k("COUNT { MATCH (n)-->(m) RETURN m }"), sizes);
    assert_eq!(by_k("COUNT { MATCH (n)-->(m) WITH m WHERE m.k > 2 RETURN m.k }"), col(vec![i(1), i(0), i(1)]));
    // Aggregating inside: one row per outer row.
    assert_eq!(by_k("COUNT { MATCH (n)-->(m) RETURN count(m) AS c }"), col(vec![i(1), i(1), i(1)]));
    // A node alone, correlated or not.
    assert_eq!(by_k("COUNT { (m:B) WHERE m.k > n.k }"), col(vec![i(3), i(2), i(2)]));
    assert_eq!(by_k("EXISTS { (m:B) WHERE m.k = n.k + 1 }"), col(vec![b(true), b(false), b(true)]));
    assert_eq!(by_k("EXISTS { (n:B) }"), col(vec![b(false), b(false), b(false)]));
    assert_eq!(by_k("EXISTS { MATCH (n)-[:S]->(m) WHERE m.k = 5 }"), col(vec![b(false), b(false), b(true)]));
    // Collecting one column, in the order the subquery gives.
    let got = by_k("COLLECT { MATCH (n)-->(m) RETURN m.k ORDER BY m.k DESC }");
    assert_eq!(got, col(vec![QueryValue::List(vec![i(5), i(2)]), QueryValue::List(vec![]), QueryValue::List(vec![i(5)])]));
    assert_eq!(
        q("RETURN COLLECT { UNWIND [3, 1, 2] AS x WITH x ORDER BY x RETURN x * 10 } AS l"),
        [[QueryValue::List(vec![i(10), i(20), i(30)])]]
    );
    // After an aggregation, in WHERE, ORDER BY and SET; its own variables stay inside.
    let after = q("MATCH (n:A) WITH n.k % 2 AS odd, count(*) AS c RETURN odd, c, COUNT { (m:B) WHERE m.k % 2 = odd } AS same ORDER BY odd");
    assert_eq!(after, [[i(0), i(1), i(1)], [i(1), i(2), i(2)]]);
    assert_eq!(q("MATCH (n:A) WHERE COUNT { (n)-->() } = 0 RETURN n.k"), [[i(3)]]);
    assert_eq!(q("MATCH (n:A) RETURN n.k ORDER BY COUNT { (n)-->() } DESC, n.k"), [[i(1)], [i(4)], [i(3)]]);
    assert_eq!(write(&db, "MATCH (n:A {k: 1}) SET n.c = COUNT { MATCH (n)-->(m) RETURN m } RETURN n.c").rows, [[i(2)]]);
    assert_eq!(q("MATCH (n:A) WHERE EXISTS { MATCH (n)-->(m) } RETURN count(*)"), [[i(2)]]);
    let err = |text: &str| db.query("default", text, &Params::new()).expect_err(text).to_string();
    assert!(err("MATCH (n:A) WHERE EXISTS { MATCH (n)-->(m) } RETURN m").contains("`m` not defined"));
    assert!(err("RETURN COUNT { CREATE (:X) } AS c").contains("COUNT { … } only reads; it cannot contain CREATE"));
    assert!(err("RETURN COLLECT { MATCH (n) RETURN n.k, n } AS c").contains("returns one column, not 2"));
    assert!(err("RETURN COLLECT { MATCH (n) } AS c").contains("ends with RETURN of one column"));
    assert!(err("RETURN EXISTS { MATCH (n) RETURN n UNION MATCH (n) RETURN n } AS c").contains("UNION inside EXISTS"));
    assert!(err("RETURN [x IN [1] | COUNT { MATCH (n) WHERE n.k = x }] AS c").contains("not supported"));
    assert_eq!(q("MATCH (count:A {k: 3}) RETURN count {.k} AS m"), [[QueryValue::Map([("k".to_owned(), i(3))].into_iter().collect())]]);
}

fn name_value() -> impl Strategy<Value = QueryValue> {
    prop_oneof![
        prop::sample::select(vec!["Alice", "alice", "ALICE", "Al ice", "Bob", ""]).prop_map(|s| QueryValue::String(s.to_owned())),
        Just(QueryValue::Int(5)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]
    /// `{name: $v}`, `WHERE n.name = $v` and `n.name IN $vs`, looked up in the name index, find
    /// exactly what a scan finds: names written by ingest (renamed: the old one an alias, alike
    /// once normalised) and by the language (of any type, empty, overwritten, removed), deleted
    /// nodes, now and as of before the changes.
    #[test]
    fn name_lookups_equal_scans(
        ingested in prop::collection::vec((0usize..4, prop::sample::select(vec!["Alice", "alice", "Al ice", "Bob"])), 0..8),
        written in prop::collection::vec((any::<bool>(), prop::option::of(name_value())), 0..10),
        changes in prop::collection::vec((0usize..18, prop::option::of(name_value()), any::<bool>()), 0..8),
        want in name_value(),
        wants in prop::collection::vec(name_value(), 0..3),
    ) {
        let (clock, db) = clocked();
        for (i, name) in &ingested {
            let mut b = WriteBatch::new("default");
            b.upsert_entity(&format!("e{i}"), "person", name);
            db.write(&b).expect("ingest");
        }
        for (a, name) in &written {
            let label = if *a { "A" } else { "B" };
            let p = Params::from([("v".to_owned(), name.clone().unwrap_or(QueryValue::Null))]);
            let q = if name.is_some() { format!("CREATE (:{label} {{name: $v}})") } else { format!("CREATE (:{label})") };
            db.query("default", &q, &p).expect("create");
        }
        clock.advance_seconds(10);
        let count = rows(&db, "MATCH (n) RETURN count(n)");
        let QueryValue::Int(n) = count[0][0] else { panic!("count") };
        for (i, v, delete) in &changes {
            if n == 0 {
                break;
            }
            let mut p = Params::from([("i".to_owned(), QueryValue::Int(*i as i64 % n))]);
            let q = match (delete, v) {
                (true, _) => "MATCH (n) WHERE id(n) = $i DETACH DELETE n",
                (false, None) => "MATCH (n) WHERE id(n) = $i REMOVE n.name",
                (false, Some(v)) => {
                    p.insert("v".to_owned(), v.clone());
                    "MATCH (n) WHERE id(n) = $i SET n.name = $v"
                }
            };
            db.query("default", q, &p).expect("change");
        }
        let p = Params::from([
            ("v".to_owned(), want.clone()),
            ("vs".to_owned(), QueryValue::List(wants.clone())),
        ]);
        for when in ["", "AS OF '2030-01-01T00:00:05Z' "] {
            for label in ["", ":A", ":person"] {
                let run = |q: String| db.query("default", &q, &p).expect("runs").rows;
                let scanned = run(format!("{when}MATCH (n{label}) WHERE coalesce(n.name, null) = $v RETURN id(n)"));
                prop_assert_eq!(run(format!("{when}MATCH (n{label} {{name: $v}}) RETURN id(n)")), scanned.clone(), "{}{} {:?}", when, label, want);
                prop_assert_eq!(run(format!("{when}MATCH (n{label}) WHERE n.name = $v RETURN id(n)")), scanned);
                let scanned = run(format!("{when}MATCH (n{label}) WHERE coalesce(n.name, null) IN $vs RETURN id(n)"));
                prop_assert_eq!(run(format!("{when}MATCH (n{label}) WHERE n.name IN $vs RETURN id(n)")), scanned, "{:?}", wants);
            }
        }
        let plan = db.query("default", "EXPLAIN MATCH (n:person {name: $v}) RETURN n", &p).expect("explain").plan.unwrap_or_default();
        prop_assert!(plan.contains("NodeByPropertyLookup"), "{}", plan);
    }
}
