//! Row policies: a principal holding a role sees only the rows its workspace's policies let
//! through, on every read path, as if the other rows had never been written. The property test
//! holds each path, over random graphs and random policies, to a reference: a second database
//! written with only the rows the policy keeps (compared by names and texts, since ids differ),
//! keyword scores included (a hidden claim's words move no score).

use engram::search::recall::RecallQuery;
use engram::{Access, Database, ErrorClass, KHopQuery, NeighborQuery, Params, Principal, QueryValue, StoredPolicy, Visibility};
use proptest::prelude::*;
use std::sync::Arc;

const WS: &str = "support";
const CANARY: &str = "zebracanary";

fn run(db: &Database, q: &str) {
    db.query(WS, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}"));
}

fn policy(target: &str, roles: &[&str], predicate: &str) -> StoredPolicy {
    StoredPolicy { target: target.to_owned(), roles: roles.iter().map(|r| (*r).to_owned()).collect(), predicate: predicate.to_owned() }
}

fn agent(name: &str) -> Arc<Principal> {
    Arc::new(Principal::named(name).grant(WS, Access::Write, true).with_role("agent"))
}

fn cell(v: &QueryValue) -> String {
    match v {
        QueryValue::String(s) => s.clone(),
        QueryValue::Null => "null".to_owned(),
        other => format!("{other:?}"),
    }
}

fn rows(scope: &engram::Scope, q: &str) -> Vec<String> {
    let r = scope.query(WS, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}"));
    // A name no visible row uses is listed as "" (its id stays taken): not a name, left out.
    let mut out: Vec<String> =
        r.rows.iter().map(|row| row.iter().map(cell).collect::<Vec<_>>().join("|")).filter(|r| !r.is_empty()).collect();
    out.sort();
    out
}

/// Two customers' conversations in one workspace: ann's and bob's claims carry `user_id`, the
/// customers carry `tenant`; bob's secret claim holds the canary word and a predicate only he uses.
fn tenants() -> Database {
    let db = Database::in_memory();
    db.create_workspace(WS).unwrap();
    run(
        &db,
        "CREATE (:Customer {id: 'ann', name: 'Ann', tenant: 'ann'}), (:Customer {id: 'bob', name: 'Bob', tenant: 'bob'}), \
         (:Product {id: 'router', name: 'Router'}), (:Product {id: 'modem', name: 'Modem'}), \
         (:Project {id: 'bobsecret', name: 'Bob Zebracanary Project', tenant: 'bob'})",
    );
    run(
        &db,
        "MATCH (a {id: 'ann'}), (b {id: 'bob'}), (r {id: 'router'}), (m {id: 'modem'}), (p {id: 'bobsecret'}) \
         CREATE (a)-[:OWNS {text: 'ann owns a router that drops wifi', user_id: 'ann', state: 'accepted'}]->(r), \
                (b)-[:OWNS {text: 'bob owns a router and a modem', user_id: 'bob', state: 'accepted'}]->(r), \
                (b)-[:OWNS {text: 'bob owns a modem', user_id: 'bob', state: 'accepted'}]->(m), \
                (b)-[:FUNDS {text: 'bob funds zebracanary with his router budget', user_id: 'bob', state: 'accepted'}]->(p), \
                (r)-[:PAIRS_WITH {text: 'the router pairs with the modem', state: 'accepted'}]->(m)",
    );
    db
}

/// ann's view: claims of hers or of nobody, and entities of her tenant or of none.
fn with_tenant_policies(db: &Database) {
    db.put_policy(WS, "own-claims", policy("claims", &["agent"], "c.user_id IS NULL OR c.user_id = $user")).unwrap();
    db.put_policy(WS, "own-entities", policy("entities", &["agent"], "e.tenant IS NULL OR e.tenant = $user")).unwrap();
}

#[test]
fn a_tenant_never_meets_another_tenants_rows_on_any_read_path() {
    let db = tenants();
    with_tenant_policies(&db);
    let scope = db.scope(agent("ann"));
    let ws = scope.workspace(WS).unwrap();
    let root = db.snapshot();
    let all = root.workspace(WS).unwrap();
    let bob = all.find_by_name("Bob")[0];
    let router = all.find_by_name("Router")[0];

    // Entities: bob and his project do not exist, by id, name or scan.
    assert!(ws.entity(bob).is_none() && ws.entity_by_id_or_name("Bob").is_err());
    assert!(ws.find_by_name("Bob").is_empty());
    assert_eq!(ws.entity_set().len(), 3);
    assert_eq!(ws.catalog().entities, 3);
    // Claims: ann's and the shared one; bob's are not neighbours, hops, matches or words.
    let n = ws.neighbors(router, &NeighborQuery::default()).unwrap();
    assert_eq!(n.items.len(), 2, "{:?}", n.items);
    assert!(n.items.iter().all(|x| x.neighbor != bob));
    let reach = ws.khop(&[router], &KHopQuery::depth(4)).unwrap();
    assert_eq!(reach.entities.len(), 3, "router, modem and ann: {:?}", reach.entities);
    assert!(reach.entities.iter().all(|r| r.entity != bob));
    assert_eq!(ws.catalog().claims, 2);
    assert!(ws.search_claim_text(CANARY, 10, &Visibility::default()).unwrap().is_empty());
    assert!(ws.search_entity_text(CANARY, 10, &Visibility::default()).unwrap().is_empty());
    assert!(ws.search_claim_text("modem", 10, &Visibility::default()).unwrap().len() == 1);
    // The query language: every operator, and the names of what it cannot see.
    for q in [
        "MATCH (n) RETURN n.name, n.tenant",
        "MATCH (a)-[c]->(b) RETURN a.name, type(c), c.text, b.name",
        "MATCH (a)-[*1..4]-(b) RETURN DISTINCT b.name",
        "MATCH p = (a)-[*1..3]-(b) RETURN p",
        "MATCH (n) RETURN properties(n), keys(n)",
        "MATCH ()-[c]->() RETURN properties(c)",
        "CALL db.labels()",
        "CALL db.relationshipTypes()",
        "CALL db.propertyKeys()",
        "CALL db.meta.stats()",
        "CALL db.schema.nodeTypeProperties()",
        "CALL db.schema.relTypeProperties()",
        "CALL engram.search.text('zebracanary router', 10) YIELD relationship RETURN relationship",
        "CALL engram.neighbors('router') YIELD relationship RETURN relationship.text",
        "MATCH (n) OPTIONAL MATCH (n)-[r]->(m) RETURN n.name, type(r), m.name",
        // The weighted path procedures walk and weigh only what the caller sees.
        "MATCH (n) CALL algo.SSpaths({sourceNode: n, relDirection: 'both', pathCount: 100}) YIELD path, pathWeight RETURN path, pathWeight",
        "MATCH (a), (b) CALL algo.SPpaths({sourceNode: a, targetNode: b, relDirection: 'both', weightProp: 'confidence', pathCount: 0}) \
         YIELD path RETURN path",
        "CALL algo.betweenness() YIELD node, score RETURN node.name, score",
        "CALL algo.labelPropagation() YIELD node, communityId MATCH (c) WHERE id(c) = communityId RETURN node.name, c.name",
        "CALL algo.MSF() YIELD edges, nodes RETURN edges, nodes",
        // Lookups in the property index: bob's rows are no candidates either.
        "MATCH (n {tenant: 'bob'}) RETURN n.name, n.tenant",
        "MATCH (n:Project {tenant: 'bob'}) RETURN count(n)",
        "MATCH (n) WHERE n.tenant = 'bob' RETURN n.name",
        "MATCH (n) WHERE n.tenant IN ['bob', 'x'] RETURN n.name",
        "MATCH (n) WHERE n.tenant >= 'b' RETURN n.name",
        "MATCH (n {name: 'Bob'}) RETURN n.tenant",
        "MATCH (n) WHERE n.name IN ['Bob', 'Bob Zebracanary Project'] RETURN n.tenant",
        "MATCH (n) WHERE n.id IN ['bob', 'bobsecret'] RETURN n.name",
        "MATCH (n)-[r]->(m) WHERE r.user_id IN ['bob'] RETURN r.text, n.name",
    ] {
        let seen = rows(&scope, q).join("\n").to_lowercase();
        assert!(!seen.contains(CANARY) && !seen.contains("bob") && !seen.contains("funds") && !seen.contains("project"), "{q}: {seen}");
    }
    assert_eq!(rows(&scope, "MATCH ()-[c]->() RETURN count(c)"), ["Int(2)"]);
    assert_eq!(rows(&scope, "MATCH (n) RETURN count(n)"), ["Int(3)"]);
    assert_eq!(rows(&scope, "MATCH (n {tenant: 'bob'}) RETURN count(n)"), ["Int(0)"]);
    assert_eq!(rows(&scope, "MATCH (n {tenant: 'ann'}) RETURN n.name"), ["Ann"]);
    assert_eq!(rows(&scope, "MATCH (n) WHERE n.tenant IN ['ann', 'bob'] RETURN n.name"), ["Ann"]);
    assert_eq!(rows(&scope, "MATCH (n) WHERE n.tenant > 'a' RETURN n.name"), ["Ann"]);
    assert_eq!(rows(&scope, "MATCH (n:Customer {name: 'Ann'}) RETURN n.tenant"), ["ann"]);
    assert_eq!(rows(&scope, "MATCH ()-[r]->() WHERE r.user_id IN ['ann', 'bob'] RETURN count(r)"), ["Int(1)"]);
    assert_eq!(rows(&scope, "CALL db.meta.stats() YIELD relCount, nodeCount RETURN relCount, nodeCount"), ["Int(2)|Int(3)"]);
    // Recall packs no hidden fact.
    let recalled = ws.recall(&RecallQuery::new("router modem budget zebracanary")).unwrap();
    let context = recalled.packed.context.to_lowercase();
    assert!(!recalled.packed.facts.is_empty() && !context.contains(CANARY) && !context.contains("bob"), "{context}");
    // What a question asks, as embedded: a name is left out only for an entity whose facts the
    // principal sees, so the vector says nothing of bob's.
    let asked = |ws: &engram::WorkspaceView<'_>| ws.question_to_embed(&RecallQuery::new("What does Bob fund?")).unwrap();
    assert_eq!(asked(&ws), "What does Bob fund?");
    // A principal without the role sees everything: the checks above are not vacuous.
    let owner = db.scope(Arc::new(Principal::named("owner").grant(WS, Access::Admin, true)));
    assert_eq!(asked(&owner.workspace(WS).unwrap()), "what does fund");
    assert_eq!(rows(&owner, "MATCH ()-[c]->() RETURN count(c)"), ["Int(5)"]);
    assert_eq!(rows(&owner, "MATCH (n {tenant: 'bob'}) RETURN count(n)"), ["Int(2)"]);
    assert!(rows(&owner, "MATCH ()-[c]->() RETURN c.text").join(" ").contains(CANARY));
    let walked =
        "MATCH (n) CALL algo.SSpaths({sourceNode: n, relDirection: 'both', pathCount: 100}) YIELD path, pathWeight RETURN path, pathWeight";
    assert!(rows(&owner, walked).join(" ").contains(CANARY));
    assert!(rows(&owner, "CALL db.schema.relTypeProperties()").join(" ").contains(":`FUNDS`|user_id"));
    assert!(rows(&owner, "CALL db.schema.nodeTypeProperties()").join(" ").to_lowercase().contains("project"));
    // bob, under the same policies, sees his own and the shared rows, not ann's.
    let bob_scope = db.scope(agent("bob"));
    let seen = rows(&bob_scope, "MATCH (a)-[c]->(b) RETURN a.name, c.text, b.name").join("\n");
    assert!(seen.contains(CANARY) && !seen.contains("ann"), "{seen}");
}

#[test]
fn writes_by_a_filtered_role_never_match_hidden_rows() {
    let db = tenants();
    with_tenant_policies(&db);
    let scope = db.scope(agent("ann"));
    let p = Params::new();
    // ann's SET over every relationship touches only what she sees.
    let r = scope.query(WS, "MATCH ()-[c]->() SET c.seen_by = 'ann' RETURN count(c)", &p).unwrap();
    assert_eq!(r.stats.properties_set, 2);
    let owner = db.scope(Arc::new(Principal::root()));
    assert_eq!(rows(&owner, "MATCH ()-[c]->() WHERE c.seen_by = 'ann' RETURN count(c)"), ["Int(2)"]);
    // DETACH DELETE of every node she sees leaves bob's rows alone.
    scope.query(WS, "MATCH (n) DETACH DELETE n", &p).unwrap();
    let owner = db.scope(Arc::new(Principal::root()));
    assert_eq!(rows(&owner, "MATCH (n) RETURN n.name"), ["Bob", "Bob Zebracanary Project"]);
}

#[test]
fn policies_are_checked_when_stored_and_survive_restart_and_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path()).unwrap();
        db.create_workspace(WS).unwrap();
        let e = db.put_policy(WS, "bad", policy("claims", &["agent"], "c.state = 'accepted' AND x.name = 1")).unwrap_err();
        assert_eq!(e.class(), ErrorClass::Caller);
        assert!(e.to_string().contains("unknown variable `x`") && e.to_string().contains("1:26"), "{e}");
        let e = db.put_policy(WS, "bad", policy("rows", &["agent"], "true")).unwrap_err();
        assert!(e.to_string().contains("unknown target `rows`"), "{e}");
        let e = db.put_policy(WS, "bad", policy("claims", &[], "true")).unwrap_err();
        assert!(e.to_string().contains("at least one role"), "{e}");
        assert!(db.policies().is_empty(), "a refused policy stores nothing");
        db.put_policy(WS, "accepted-only", policy("claims", &["agent"], "c.state = 'accepted'")).unwrap();
        db.add_role("agent").unwrap();
        db.grant_role("agent", WS, engram::StoredGrant::of(Access::Read, false)).unwrap();
        db.put_user("ann", engram::StoredUser::default()).unwrap();
        db.assign_role("ann", "agent").unwrap();
    }
    for round in 0..2 {
        let db = Database::open(dir.path()).unwrap();
        assert_eq!(db.policies()[WS]["accepted-only"].predicate, "c.state = 'accepted'");
        let ann = db.user_principal("ann").unwrap();
        assert!(ann.holds("agent") && ann.may(WS, Access::Read) && !ann.may(WS, Access::Write), "{ann:?}");
        assert_eq!(db.policies_applying(&ann, WS).len(), 1);
        if round == 0 {
            db.checkpoint().unwrap();
        }
    }
    let db = Database::open(dir.path()).unwrap();
    assert!(db.remove_policy(WS, "accepted-only").unwrap());
    assert!(!db.remove_policy(WS, "accepted-only").unwrap());
    assert!(db.remove_role("agent").unwrap());
    assert!(!db.user_principal("ann").unwrap().holds("agent"));
}

// ---- the property test ------------------------------------------------------------------------

/// One random graph: entities `(type, tenant)` and claims `(subject, object, predicate, state,
/// confidence in tenths, user)`.
#[derive(Clone, Debug)]
struct Graph {
    entities: Vec<(usize, Option<usize>)>,
    claims: Vec<(usize, usize, usize, bool, u8, Option<usize>)>,
}

const TYPES: [&str; 3] = ["person", "device", "secret"];
const PREDICATES: [&str; 3] = ["KNOWS", "USES", "HIDES"];
const USERS: [&str; 3] = ["ann", "bob", "cy"];
const WORDS: [&str; 6] = ["router", "modem", "wifi", "zebracanary", "budget", "cable"];

/// The policy templates: stored target and text, and the reference's test for a row.
#[derive(Clone, Copy, Debug)]
enum Template {
    OwnClaims,
    Accepted,
    Predicates,
    Confident,
    PersonSubjects,
    OwnEntities,
    NoSecrets,
}

impl Template {
    fn stored(self) -> (&'static str, &'static str) {
        match self {
            Template::OwnClaims => ("claims", "c.user_id = $user"),
            Template::Accepted => ("claims", "c.state = 'accepted'"),
            Template::Predicates => ("claims", "type(c) IN ['KNOWS', 'uses']"),
            Template::Confident => ("claims", "c.confidence >= 0.5"),
            Template::PersonSubjects => ("claims", "s.type = 'Person' OR NOT o.type <> 'person'"),
            Template::OwnEntities => ("entities", "e.tenant IS NULL OR e.tenant = $user"),
            Template::NoSecrets => ("entities", "NOT e.type = 'secret'"),
        }
    }

    fn keeps_entity(self, g: &Graph, e: usize, user: &str) -> bool {
        let (ty, tenant) = g.entities[e];
        match self {
            Template::OwnEntities => tenant.is_none_or(|t| USERS[t] == user),
            Template::NoSecrets => TYPES[ty] != "secret",
            _ => true,
        }
    }

    fn keeps_claim(self, g: &Graph, c: usize, user: &str) -> bool {
        let (s, o, p, accepted, conf, u) = g.claims[c];
        match self {
            Template::OwnClaims => u.is_some_and(|u| USERS[u] == user),
            Template::Accepted => accepted,
            Template::Predicates => PREDICATES[p] != "HIDES",
            Template::Confident => conf >= 5,
            Template::PersonSubjects => TYPES[g.entities[s].0] == "person" || TYPES[g.entities[o].0] == "person",
            _ => true,
        }
    }
}

fn claim_text(g: &Graph, c: usize) -> String {
    let (s, o, p, ..) = g.claims[c];
    format!("e{s} {} e{o} {} {}", PREDICATES[p].to_lowercase(), WORDS[c % WORDS.len()], WORDS[(c * 7 + s) % WORDS.len()])
}

/// Writes the entities and claims `keep` lets through.
fn write(g: &Graph, keep_entity: &dyn Fn(usize) -> bool, keep_claim: &dyn Fn(usize) -> bool) -> Database {
    let db = Database::in_memory();
    db.create_workspace(WS).unwrap();
    for (i, (ty, tenant)) in g.entities.iter().enumerate().filter(|(i, _)| keep_entity(*i)) {
        let tenant = tenant.map_or("null".to_owned(), |t| format!("'{}'", USERS[t]));
        let label = TYPES[*ty][..1].to_uppercase() + &TYPES[*ty][1..];
        run(&db, &format!("CREATE (:{label} {{id: 'e{i}', name: 'E{i} {}', tenant: {tenant}}})", WORDS[i % WORDS.len()]));
    }
    for (c, (s, o, p, accepted, conf, u)) in g.claims.iter().enumerate() {
        if !keep_claim(c) || !keep_entity(*s) || !keep_entity(*o) {
            continue;
        }
        let user = u.map_or("null".to_owned(), |u| format!("'{}'", USERS[u]));
        let state = if *accepted { "accepted" } else { "proposed" };
        run(
            &db,
            &format!(
                "MATCH (a {{id: 'e{s}'}}), (b {{id: 'e{o}'}}) CREATE (a)-[:{} {{text: '{}', user_id: {user}, state: '{state}', confidence: {}}}]->(b)",
                PREDICATES[*p],
                claim_text(g, c),
                f64::from(*conf) / 10.0
            ),
        );
    }
    db
}

fn graph() -> impl Strategy<Value = Graph> {
    (2usize..9).prop_flat_map(|n| {
        let entity = (0..TYPES.len(), proptest::option::of(0..USERS.len()));
        let claim = (0..n, 0..n, 0..PREDICATES.len(), any::<bool>(), 0u8..=10, proptest::option::of(0..USERS.len()));
        (proptest::collection::vec(entity, n), proptest::collection::vec(claim, 0..16))
            .prop_map(|(entities, claims)| Graph { entities, claims })
    })
}

fn template() -> impl Strategy<Value = Template> {
    prop_oneof![
        Just(Template::OwnClaims),
        Just(Template::Accepted),
        Just(Template::Predicates),
        Just(Template::Confident),
        Just(Template::PersonSubjects),
        Just(Template::OwnEntities),
        Just(Template::NoSecrets),
    ]
}

/// What each read path answers, by names and texts (scores rounded).
fn answers(scope: &engram::Scope) -> Vec<String> {
    let mut out = Vec::new();
    for q in [
        "MATCH (n) RETURN n.name",
        "MATCH (a)-[c]->(b) RETURN a.name, type(c), c.text, b.name",
        "MATCH (a)-[*1..3]->(b) RETURN a.name, count(DISTINCT b)",
        "MATCH (n) RETURN n.name, size([(n)--() | 1])",
        "MATCH ()-[c]->() RETURN count(c), sum(c.confidence)",
        "MATCH (n) RETURN count(*)",
        "MATCH (n:Person) RETURN count(n)",
        "MATCH (n:Secret) RETURN count(*)",
        "MATCH (n) CALL algo.SSpaths({sourceNode: n, relDirection: 'both', maxLen: 3, pathCount: 4}) YIELD pathWeight RETURN n.name, collect(pathWeight)",
        "CALL algo.betweenness() YIELD node, score RETURN node.name, score",
        "MATCH (a), (b) CALL algo.SPpaths({sourceNode: a, targetNode: b, weightProp: 'confidence', pathCount: 0}) YIELD pathWeight RETURN a.name, b.name, pathWeight",
        "CALL db.labels()",
        "CALL db.relationshipTypes()",
        "CALL db.meta.stats()",
    ] {
        out.push(format!("{q}: {:?}", rows(scope, q)));
    }
    // What each seek read, as PROFILE shows it (which index, how many candidates): counts that
    // weighed hidden rows would show here, as a different choice or number.
    for q in [
        "PROFILE MATCH (n) WHERE n.tenant IN ['ann', 'bob'] AND n.tenant = 'bob' RETURN n.name",
        "PROFILE MATCH (n) WHERE n.tenant >= 'a' AND n.tenant = 'ann' RETURN n.name",
        "PROFILE MATCH (n) WHERE n.tenant IN ['ann', 'cy'] AND n.tenant < 'c' RETURN n.name",
        "PROFILE MATCH (n:Person) RETURN n.name",
    ] {
        let r = scope.query(WS, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}"));
        let plan = r.plan.unwrap_or_default();
        let read: Vec<&str> = plan.lines().filter_map(|l| l.find(", read ").map(|at| &l[at..])).collect();
        out.push(format!("{q}: {read:?} {}", r.rows.len()));
    }
    let ws = scope.workspace(WS).unwrap();
    let cat = ws.catalog();
    out.push(format!(
        "catalog: {} {} {:?}",
        cat.entities,
        cat.claims,
        cat.predicates.iter().map(|p| (&p.name, p.claims)).collect::<Vec<_>>()
    ));
    for word in WORDS {
        let hits = ws.search_claim_text(word, 20, &Visibility::default()).unwrap();
        let mut named: Vec<String> = hits.iter().map(|(c, s)| format!("{} {:.4}", ws.claim_text(*c).unwrap_or_default(), s)).collect();
        named.sort();
        out.push(format!("text {word}: {named:?}"));
        let ents = ws.search_entity_text(word, 20, &Visibility::default()).unwrap();
        let mut named: Vec<String> = ents.iter().map(|(e, s)| format!("{} {:.4}", ws.entity_name(*e).unwrap_or_default(), s)).collect();
        named.sort();
        out.push(format!("entities {word}: {named:?}"));
    }
    // The claims among every entity the principal sees (recall's graph path adds them for its
    // seeds): a hidden row is none of them.
    let all: Vec<engram::EntityId> = ws.entity_set().iter().collect();
    let between = ws.claims_between(&all, &engram::EdgeFilter::default(), &Visibility::default()).unwrap();
    let mut texts: Vec<String> = between.iter().map(|c| ws.claim_text(*c).unwrap_or_default().to_owned()).collect();
    texts.sort();
    out.push(format!("between: {texts:?}"));
    for e in ws.entity_set().iter() {
        let name = ws.entity_name(e).unwrap_or_default().to_owned();
        let reach = ws.khop(&[e], &KHopQuery::depth(3)).unwrap();
        let mut names: Vec<&str> = reach.entities.iter().filter_map(|r| ws.entity_name(r.entity)).collect();
        names.sort_unstable();
        out.push(format!("khop {name}: {names:?}"));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]

    /// Every read path under random policies answers exactly what a database holding only the
    /// rows the policies keep answers.
    #[test]
    fn a_filtered_view_equals_a_database_without_the_hidden_rows(
        g in graph(),
        templates in proptest::collection::vec(template(), 1..3),
        user in 0..USERS.len(),
    ) {
        let user = USERS[user];
        let full = write(&g, &|_| true, &|_| true);
        for (i, t) in templates.iter().enumerate() {
            let (target, text) = t.stored();
            full.put_policy(WS, &format!("p{i}"), policy(target, &["agent"], text)).unwrap();
        }
        let keep_e = |e: usize| templates.iter().all(|t| t.keeps_entity(&g, e, user));
        let keep_c = |c: usize| templates.iter().all(|t| t.keeps_claim(&g, c, user));
        let reference = write(&g, &keep_e, &keep_c);
        let got = answers(&full.scope(agent(user)));
        let want = answers(&reference.scope(Arc::new(Principal::named(user).grant(WS, Access::Write, true))));
        prop_assert_eq!(got, want);
    }
}

/// A user's embedded requests through a scope are in the access history, once each, with the
/// user and the outcome; the embedded root's reads are not, until `audit_root` is on.
#[test]
fn scoped_embedded_requests_are_recorded_and_root_reads_only_with_audit_root() {
    let db = tenants();
    let history = |user: &str| {
        let f = engram::db::audit::AuditFilter { user: Some(user.to_owned()), ..Default::default() };
        db.access_history(&f).unwrap()
    };
    let scope = db.scope(agent("ann"));
    scope.query(WS, "MATCH (n) RETURN count(n)", &Params::new()).unwrap();
    let params: Params = [("x".to_owned(), QueryValue::String("hunter2".into()))].into();
    assert!(scope.query_read(WS, "MATCH (n) WHERE n.name = $x RETURN n", &params).is_ok());
    assert!(scope.query("elsewhere", "MATCH (n) RETURN n", &Params::new()).is_err());
    let ann = history("ann");
    assert_eq!(ann.len(), 3, "{ann:?}");
    assert!(ann.iter().all(|r| r.interface == "embedded" && r.roles == ["agent"]));
    assert_eq!((ann[0].rows, ann[0].outcome.as_str()), (1, "ok"));
    assert!(ann[1].params_sha256.is_some() && !format!("{:?}", ann[1]).contains("hunter2"));
    assert!(ann[2].outcome.starts_with("error: caller"), "{}", ann[2].outcome);
    db.query(WS, "MATCH (n) RETURN n", &Params::new()).unwrap();
    assert!(history("root").is_empty());
    db.set_setting("audit_root", "on").unwrap();
    db.query(WS, "MATCH (n) RETURN n", &Params::new()).unwrap();
    assert_eq!(history("root").len(), 1);
}
