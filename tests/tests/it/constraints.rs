//! Constraints (`CREATE CONSTRAINT … IS UNIQUE | IS NOT NULL`): every write path keeps them,
//! a write that breaks one changes nothing, and the check (which reads the property index for
//! candidates) refuses exactly what a naive scan of the whole label says it must.

use std::collections::BTreeMap;

use engram::{CreateNode, Database, EntityRef, Op, Params, QueryValue, WriteBatch};
use proptest::prelude::*;

fn run(db: &Database, text: &str) -> Result<engram::QueryResult, engram::Error> {
    db.query("default", text, &Params::new())
}

fn ok(db: &Database, text: &str) -> engram::QueryResult {
    run(db, text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn refused(db: &Database, text: &str, why: &str) {
    match run(db, text) {
        Err(e) => assert!(e.to_string().contains(why), "{text}: {e}"),
        Ok(r) => panic!("{text}: accepted ({:?})", r.stats),
    }
}

/// One write of the random sequences: on node `i` (its `nid`), with the value `v` (an index
/// into `VALUES`, or none).
#[derive(Clone, Debug)]
enum Step {
    Create {
        p: bool,
        v: Option<usize>,
    },
    Set {
        i: usize,
        v: Option<usize>,
    },
    Relabel {
        i: usize,
        p: bool,
    },
    Delete {
        i: usize,
    },
    /// Two nodes in one query: the pair must hold together.
    CreateTwo {
        a: Option<usize>,
        b: Option<usize>,
    },
    /// Through the Rust API: a batch creating a node and setting another's value.
    Batch {
        v: Option<usize>,
        i: usize,
        w: Option<usize>,
    },
}

/// The values written: `1` and `1.0` are the same value to the constraint, as to `=`.
const VALUES: [&str; 5] = ["1", "1.0", "2", "'a'", "'b'"];

fn same_value(a: usize, b: usize) -> bool {
    let class = |i: usize| if i <= 1 { 0 } else { i };
    class(a) == class(b)
}

fn step() -> impl Strategy<Value = Step> {
    let v = prop::option::of(0..VALUES.len());
    prop_oneof![
        (any::<bool>(), v.clone()).prop_map(|(p, v)| Step::Create { p, v }),
        (0..8usize, v.clone()).prop_map(|(i, v)| Step::Set { i, v }),
        (0..8usize, any::<bool>()).prop_map(|(i, p)| Step::Relabel { i, p }),
        (0..8usize).prop_map(|i| Step::Delete { i }),
        (v.clone(), v.clone()).prop_map(|(a, b)| Step::CreateTwo { a, b }),
        (v.clone(), 0..8usize, v).prop_map(|(v, i, w)| Step::Batch { v, i, w }),
    ]
}

/// The naive model: each node's label (P or Q), value and whether it lives.
#[derive(Clone, Debug, Default)]
struct Model {
    nodes: Vec<(bool, Option<usize>, bool)>,
}

impl Model {
    /// No two live `P` nodes share a value (nodes without one are not compared).
    fn holds(&self) -> bool {
        let held: Vec<usize> = self.nodes.iter().filter(|(p, v, live)| *p && *live && v.is_some()).filter_map(|n| n.1).collect();
        held.iter().enumerate().all(|(x, a)| held[x + 1..].iter().all(|b| !same_value(*a, *b)))
    }
}

fn props(v: Option<usize>, nid: usize) -> String {
    match v {
        Some(v) => format!("{{nid: {nid}, k: {}}}", VALUES[v]),
        None => format!("{{nid: {nid}}}"),
    }
}

fn label(p: bool) -> &'static str {
    if p {
        "P"
    } else {
        "Q"
    }
}

fn value_of(v: Option<usize>) -> engram::Value {
    match v.map(|v| VALUES[v]) {
        None => engram::Value::Null,
        Some("1") => engram::Value::Int(1),
        Some("1.0") => engram::Value::Float(1.0),
        Some("2") => engram::Value::Int(2),
        Some(s) => engram::Value::Str(s.trim_matches('\'').into()),
    }
}

/// Applies `s` to `db` and to a copy of `model`: whether the database accepted it, and the
/// model after it.
fn apply(db: &Database, model: &Model, s: &Step) -> (bool, Model) {
    let mut next = model.clone();
    let n = next.nodes.len();
    let text = match s {
        Step::Create { p, v } => {
            next.nodes.push((*p, *v, true));
            format!("CREATE (:{} {})", label(*p), props(*v, n))
        }
        Step::CreateTwo { a, b } => {
            next.nodes.push((true, *a, true));
            next.nodes.push((true, *b, true));
            format!("CREATE (:P {}), (:P {})", props(*a, n), props(*b, n + 1))
        }
        Step::Set { i, v } if *i < n && next.nodes[*i].2 => {
            next.nodes[*i].1 = *v;
            match v {
                Some(v) => format!("MATCH (x {{nid: {i}}}) SET x.k = {}", VALUES[*v]),
                None => format!("MATCH (x {{nid: {i}}}) REMOVE x.k"),
            }
        }
        Step::Relabel { i, p } if *i < n && next.nodes[*i].2 => {
            next.nodes[*i].0 = *p;
            format!("MATCH (x {{nid: {i}}}) REMOVE x:{} SET x:{}", label(!*p), label(*p))
        }
        Step::Delete { i } if *i < n && next.nodes[*i].2 => {
            next.nodes[*i].2 = false;
            format!("MATCH (x {{nid: {i}}}) DETACH DELETE x")
        }
        Step::Batch { v, i, w } => {
            // A node created and another's value set in one batch of the Rust API.
            let mut b = WriteBatch::new("default");
            let mut properties = engram::Properties::new();
            properties.insert("nid".into(), engram::Value::Int(n as i64));
            if v.is_some() {
                properties.insert("k".into(), value_of(*v));
            }
            b.push(Op::CreateNode(CreateNode { ext_id: None, labels: vec!["P".to_owned()], properties }));
            next.nodes.push((true, *v, true));
            if *i < n && next.nodes[*i].2 {
                let id = ok(db, &format!("MATCH (x {{nid: {i}}}) RETURN id(x)"));
                let QueryValue::Int(id) = id.rows[0][0] else { panic!("an id: {id:?}") };
                let entity = EntityRef::Id(engram::EntityId(u32::try_from(id).expect("an id")));
                let mut changes = engram::Properties::new();
                changes.insert("k".into(), value_of(*w));
                b.push(Op::SetProperties { target: engram::Element::Entity(entity), properties: changes, replace: false });
                next.nodes[*i].1 = *w;
            }
            let accepted = match db.write(&b) {
                Ok(_) => true,
                Err(e) => {
                    assert!(e.to_string().contains("same values"), "{e}");
                    false
                }
            };
            return (accepted, next);
        }
        _ => return (true, next),
    };
    let accepted = match run(db, &text) {
        Ok(_) => true,
        Err(e) => {
            assert!(e.to_string().contains("same values"), "{text}: {e}");
            false
        }
    };
    (accepted, next)
}

/// What the database holds: each live `P` node's `nid` and value (as the model writes it).
fn stored(db: &Database) -> BTreeMap<i64, String> {
    ok(db, "MATCH (x:P) RETURN x.nid, x.k")
        .rows
        .iter()
        .map(|r| {
            let QueryValue::Int(nid) = r[0] else { panic!("{r:?}") };
            (nid, format!("{:?}", r[1]))
        })
        .collect()
}

fn expected(model: &Model) -> BTreeMap<i64, String> {
    let shown = |v: Option<usize>| match v.map(|v| VALUES[v]) {
        None => format!("{:?}", QueryValue::Null),
        Some("1") => format!("{:?}", QueryValue::Int(1)),
        Some("1.0") => format!("{:?}", QueryValue::Float(1.0)),
        Some("2") => format!("{:?}", QueryValue::Int(2)),
        Some(s) => format!("{:?}", QueryValue::String(s.trim_matches('\'').to_owned())),
    };
    model.nodes.iter().enumerate().filter(|(_, (p, _, live))| *p && *live).map(|(i, (_, v, _))| (i as i64, shown(*v))).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Under `UNIQUE (:P {k})`, every write (Cypher or a Rust batch) is accepted exactly when
    /// the naive model says the live `P` nodes still hold distinct values after it; a refused
    /// write changes nothing.
    #[test]
    fn a_unique_constraint_refuses_exactly_the_writes_a_scan_says_break_it(steps in prop::collection::vec(step(), 1..24)) {
        let db = Database::in_memory();
        ok(&db, "CREATE CONSTRAINT FOR (x:P) REQUIRE x.k IS UNIQUE");
        let mut model = Model::default();
        for s in &steps {
            let (accepted, next) = apply(&db, &model, s);
            prop_assert_eq!(accepted, next.holds(), "{:?} on {:?}", s, model);
            if accepted {
                model = next;
            }
            prop_assert_eq!(stored(&db), expected(&model), "after {:?}", s);
        }
    }
}

/// The paths beside the language's CREATE and SET: a mandatory property removed, a label
/// added, a node restored, an entity written by the memory API (its name a memory field), a
/// relationship type's constraints, a declaration the data breaks, names and `IF [NOT] EXISTS`,
/// and a reopen (the constraints are stored with the workspace's settings).
#[test]
fn every_write_path_keeps_the_constraints_and_they_survive_a_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Database::open(dir.path()).expect("opens");
    ok(&db, "CREATE (:P {email: 'a', name: 'Ann'})-[:KNOWS {since: 1}]->(:P {email: 'b', name: 'Bob'}), (:Q {email: 'a'})");
    let made = ok(&db, "CREATE CONSTRAINT p_email IF NOT EXISTS FOR (x:P) REQUIRE x.email IS UNIQUE");
    assert_eq!((made.stats.constraints_added, made.stats.constraints_removed), (1, 0));
    assert_eq!(ok(&db, "CREATE CONSTRAINT p_email IF NOT EXISTS FOR (x:P) REQUIRE x.email IS UNIQUE").stats.constraints_added, 0);
    refused(&db, "CREATE CONSTRAINT p_email FOR (x:P) REQUIRE x.name IS UNIQUE", "already exists");
    ok(&db, "CREATE CONSTRAINT FOR (x:P) REQUIRE x.name IS NOT NULL");
    ok(&db, "CREATE CONSTRAINT FOR ()-[r:KNOWS]-() REQUIRE r.since IS NOT NULL");
    // A label added makes the Q node a P with a taken email; a mandatory property removed.
    refused(&db, "MATCH (q:Q) SET q:P, q.name = 'Q'", "same values");
    refused(&db, "MATCH (p:P {name: 'Ann'}) REMOVE p.name", "has no property `name`");
    refused(&db, "MATCH (a:P {name: 'Ann'}), (b:P {name: 'Bob'}) CREATE (b)-[:KNOWS]->(a)", "has no property `since`");
    // A write that is set right before the query ends is accepted: the check is at its end.
    ok(&db, "CREATE (c:P {email: 'c'}) SET c.name = 'Cy'");
    // A deleted node frees its value; restoring it while another holds the value is refused.
    let cy = ok(&db, "MATCH (c:P {email: 'c'}) RETURN id(c)");
    let QueryValue::Int(cy) = cy.rows[0][0] else { panic!("{cy:?}") };
    let cy = EntityRef::Id(engram::EntityId(u32::try_from(cy).expect("an id")));
    ok(&db, "MATCH (c:P {email: 'c'}) DELETE c");
    ok(&db, "CREATE (:P {email: 'c', name: 'Cy2'})");
    let mut b = WriteBatch::new("default");
    b.push(Op::RestoreEntity { entity: cy.clone() });
    let e = db.write(&b).expect_err("Cy2 holds its email now");
    assert!(e.to_string().contains("same values"), "{e}");
    ok(&db, "MATCH (c:P {email: 'c'}) DELETE c");
    db.write(&b).expect("restored once the value is free");
    // The memory API: an entity whose type is P, without an email (not compared), its name a
    // memory field, which the language reads as `name`: a unique name now clashes with Ann's.
    let mut b = WriteBatch::new("default");
    b.upsert_entity("ann-2", "P", "Ann");
    db.write(&b).expect("no email, and a name");
    assert_eq!(ok(&db, "MATCH (x:P) WHERE x.name = 'Ann' RETURN count(*)").rows, vec![vec![QueryValue::Int(2)]], "as :P");
    refused(&db, "CREATE CONSTRAINT FOR (x:P) REQUIRE x.name IS UNIQUE", "same values");
    assert_eq!(ok(&db, "SHOW CONSTRAINTS YIELD name RETURN count(*)").rows, vec![vec![QueryValue::Int(3)]]);
    // Kept with the workspace's settings: still held after a reopen, until dropped.
    drop(db);
    let db = Database::open(dir.path()).expect("reopens");
    refused(&db, "CREATE (:P {email: 'a', name: 'Z'})", "same values");
    let dropped = ok(&db, "DROP CONSTRAINT p_email");
    assert_eq!(dropped.stats.constraints_removed, 1);
    ok(&db, "CREATE (:P {email: 'a', name: 'Z'})");
    refused(&db, "DROP CONSTRAINT p_email", "no such constraint");
    ok(&db, "DROP CONSTRAINT p_email IF EXISTS");
    // Only the workspace's admins declare or drop one (a writer may still index).
    for access in [engram::Access::Read, engram::Access::Write] {
        let who = std::sync::Arc::new(engram::Principal::named("w").grant("default", access, false));
        for text in ["CREATE CONSTRAINT FOR (x:P) REQUIRE x.z IS UNIQUE", "DROP CONSTRAINT p_email IF EXISTS"] {
            let e = db.scope(who.clone()).query("default", text, &Params::new()).expect_err(text);
            assert!(e.to_string().contains("admin"), "{text}: {e}");
        }
    }
    let writer = std::sync::Arc::new(engram::Principal::named("w").grant("default", engram::Access::Write, false));
    db.scope(writer).query("default", "CREATE INDEX FOR (x:P) ON (x.z)", &Params::new()).expect("a writer indexes");
    let admin = std::sync::Arc::new(engram::Principal::named("a").grant("default", engram::Access::Admin, false));
    db.scope(admin).query("default", "CREATE CONSTRAINT FOR (x:P) REQUIRE x.z IS UNIQUE", &Params::new()).expect("an admin declares");
}

/// Writers racing to take the same values (their queries share group commits): each value is
/// taken once, by exactly one of them, and every refusal is the constraint's.
#[test]
fn concurrent_writers_never_take_a_unique_value_twice() {
    let db = std::sync::Arc::new(Database::in_memory());
    ok(&db, "CREATE CONSTRAINT FOR (x:P) REQUIRE x.k IS UNIQUE");
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut won = Vec::new();
                for k in 0..40 {
                    match db.query("default", &format!("CREATE (:P {{k: {k}, t: {t}}})"), &Params::new()) {
                        Ok(_) => won.push(k),
                        Err(e) => assert!(e.to_string().contains("same values"), "{e}"),
                    }
                }
                won
            })
        })
        .collect();
    let mut won: Vec<i64> = threads.into_iter().flat_map(|h| h.join().expect("a writer")).collect();
    won.sort_unstable();
    assert_eq!(won, (0..40).collect::<Vec<i64>>(), "each value taken exactly once");
    let stored = ok(&db, "MATCH (x:P) RETURN x.k AS k, count(*) AS n ORDER BY k");
    assert_eq!(stored.rows.len(), 40);
    assert!(stored.rows.iter().all(|r| r[1] == QueryValue::Int(1)), "{:?}", stored.rows);
}

/// `IS NODE KEY`: both at once — every node of the label holds the properties, and no two hold
/// the same values of all of them.
#[test]
fn a_key_is_required_and_unique() {
    let db = Database::in_memory();
    ok(&db, "CREATE (:K {a: 1, b: 1}), (:K {a: 1, b: 2})");
    ok(&db, "CREATE CONSTRAINT k FOR (x:K) REQUIRE (x.a, x.b) IS NODE KEY");
    refused(&db, "CREATE (:K {a: 1})", "has no property `b`");
    refused(&db, "CREATE (:K {a: 1, b: 2.0})", "same values");
    ok(&db, "CREATE (:K {a: 2, b: 2})");
    let shown = ok(&db, "SHOW CONSTRAINTS YIELD type, properties RETURN type, properties").rows;
    assert_eq!(
        shown,
        vec![vec![
            QueryValue::String("NODE_KEY".into()),
            QueryValue::List(vec![QueryValue::String("a".into()), QueryValue::String("b".into())])
        ]]
    );
    ok(&db, "DROP CONSTRAINT k");
    ok(&db, "CREATE (:K {a: 1})");
    refused(&db, "CREATE CONSTRAINT FOR (x:K) REQUIRE (x.a, x.b) IS NODE KEY", "has no property `b`");
}

/// A writer whose row policy hides a node learns of it from a uniqueness refusal only that some
/// element holds the value (as any database's unique check tells): never its id or values.
#[test]
fn a_refusal_never_names_a_row_the_writer_may_not_see() {
    let db = Database::in_memory();
    let p = Params::new();
    ok(&db, "CREATE (:P {email: 'shared', tenant: 'theirs', secret: 'CANARY-4471'})");
    ok(&db, "CREATE CONSTRAINT FOR (x:P) REQUIRE x.email IS UNIQUE");
    let own = engram::settings::StoredPolicy {
        target: "entities".to_owned(),
        roles: vec!["agent".to_owned()],
        predicate: "e.tenant IS NULL OR e.tenant = $user".to_owned(),
    };
    db.put_policy("default", "own", own).expect("a policy");
    let agent = std::sync::Arc::new(engram::Principal::named("mine").grant("default", engram::Access::Write, true).with_role("agent"));
    let scope = db.scope(agent);
    assert_eq!(scope.query("default", "MATCH (x:P) RETURN count(x)", &p).expect("reads").rows, vec![vec![QueryValue::Int(0)]]);
    let hidden = ok(&db, "MATCH (x:P) RETURN id(x)").rows[0][0].clone();
    let QueryValue::Int(hidden) = hidden else { panic!("{hidden:?}") };
    let hidden = engram::EntityId(u32::try_from(hidden).expect("an id"));
    let hidden = db.snapshot().workspace("default").expect("ws").entity(hidden).expect("stored").ext_id.to_string();
    let e = scope.query("default", "CREATE (:P {email: 'shared', tenant: 'mine'})", &p).expect_err("the value is taken");
    let text = e.to_string();
    assert!(text.contains("another element of the label"), "{text}");
    assert!(!text.contains(&hidden) && !text.contains("CANARY") && !text.contains("theirs"), "{text}");
}

/// A transaction of several statements is checked once, when it ends: a statement may leave a
/// constraint broken for a later one to mend; one that ends broken writes nothing.
#[test]
fn a_transaction_of_statements_is_checked_when_it_ends() {
    let db = Database::in_memory();
    let p = Params::new();
    ok(&db, "CREATE CONSTRAINT FOR (x:P) REQUIRE x.name IS NOT NULL");
    ok(&db, "CREATE CONSTRAINT FOR (x:P) REQUIRE x.email IS UNIQUE");
    let mended: [(&str, &Params); 2] = [("CREATE (:P {email: 't'})", &p), ("MATCH (x:P {email: 't'}) SET x.name = 'T'", &p)];
    db.transaction("default", &mended).expect("mended before the end");
    let broken: [(&str, &Params); 2] = [("CREATE (:P {email: 'u', name: 'U'})", &p), ("CREATE (:P {email: 'u', name: 'V'})", &p)];
    let e = db.transaction("default", &broken).expect_err("two of one email at the end");
    assert!(e.to_string().contains("same values"), "{e}");
    let unnamed: [(&str, &Params); 1] = [("CREATE (:P {email: 'w'})", &p)];
    assert!(db.transaction("default", &unnamed).expect_err("no name").to_string().contains("has no property `name`"));
    assert_eq!(
        ok(&db, "MATCH (x:P) RETURN x.email, x.name").rows,
        vec![vec![QueryValue::String("t".into()), QueryValue::String("T".into())]]
    );
}
