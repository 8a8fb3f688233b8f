//! Scopes: who asks decides what exists. A principal without `see_sensitive` never meets a
//! sensitive claim — not returned, counted, ranked or used as a hop, its canary word moving no
//! keyword score; a principal reads and writes only the workspaces it holds grants on; a scope's
//! limits name themselves and its deadline or cancel token stops a read within `CHECK_EVERY` units
//! of work. Error classes say who must act.

use engram::scope::CHECK_EVERY;
use engram::search::recall::RecallQuery;
use engram::search::semantic::VectorOptions;
use engram::{
    Access, AddClaim, CancelToken, ClaimState, Database, EntityId, Error, ErrorClass, Interrupted, KHopQuery, ManualClock, NeighborQuery,
    Principal, ReadError, ReadLimits, Timestamp, WriteBatch,
};
use std::sync::Arc;

const CANARY: &str = "zebracanary";

/// A small workspace `ops`: auth → kafka (public), auth → vault (sensitive, with the canary word
/// and its own predicate), vault → secrets (public, reachable only through the sensitive claim).
/// Claim vectors make the sensitive claim the best match of `[1, 0]`.
fn seeded(with_sensitive: bool) -> Database {
    let db = Database::in_memory();
    db.create_workspace("ops").unwrap();
    let mut b = WriteBatch::new("ops");
    b.upsert_entity("auth", "service", "AuthService")
        .upsert_entity("kafka", "service", "Kafka")
        .upsert_entity("vault", "service", "Vault")
        .upsert_entity("secrets", "store", "Secrets")
        .add_claim(AddClaim::new("auth", "DEPENDS_ON", "kafka").id("pub1").text("auth streams events to kafka").state(ClaimState::Accepted))
        .add_claim(AddClaim::new("vault", "STORES", "secrets").id("pub2").text("vault stores kafka secrets").state(ClaimState::Accepted));
    if with_sensitive {
        b.add_claim(
            AddClaim::new("auth", "READS_SECRET_FROM", "vault")
                .id("hidden")
                .text(&format!("auth reads kafka credentials {CANARY}"))
                .state(ClaimState::Accepted)
                .sensitive(),
        );
    }
    db.write(&b).unwrap();
    let mut v = WriteBatch::new("ops");
    v.set_claim_vector("pub1", vec![0.0, 1.0]).set_claim_vector("pub2", vec![0.6, 0.8]);
    if with_sensitive {
        v.set_claim_vector("hidden", vec![1.0, 0.0]);
    }
    db.write(&v).unwrap();
    db
}

fn reader(see_sensitive: bool) -> Arc<Principal> {
    Arc::new(Principal::named("agent").grant("ops", Access::Read, see_sensitive))
}

#[test]
fn a_sensitive_claim_does_not_exist_for_a_principal_without_see_sensitive() {
    let db = seeded(true);
    let scope = db.scope(reader(false));
    let ws = scope.workspace("ops").unwrap();
    let auth = ws.entity_id("auth").unwrap();
    let vault = ws.entity_id("vault").unwrap();
    let hidden = db.snapshot().workspace("ops").unwrap().claim_id("hidden").unwrap();

    // Not returned by id, external id, evidence or listing.
    assert!(ws.claim(hidden).is_none());
    assert!(ws.claim_id("hidden").is_none());
    assert!(ws.evidence_of(hidden).is_err());
    assert!(!ws.claims_with(None, ClaimState::Accepted).contains(&hidden));
    // Not a neighbour, not a hop: vault and secrets are reachable from auth only through it.
    let n = ws.neighbors(auth, &NeighborQuery::default()).unwrap();
    assert!(n.items.iter().all(|x| x.claim != hidden && &*x.predicate != "READS_SECRET_FROM"), "{:?}", n.items);
    let reach = ws.khop(&[auth], &KHopQuery::depth(3)).unwrap();
    assert!(reach.entities.iter().all(|r| r.entity != vault), "{:?}", reach.entities);
    assert_eq!(reach.entities.len(), 2);
    // Not found by its words, nor by its vector.
    assert!(ws.search_claim_text(CANARY, 10, &engram::Visibility::default()).unwrap().is_empty());
    let near = ws.search_claim_vectors(&[1.0, 0.0], &VectorOptions { k: 10, ..VectorOptions::default() }).unwrap();
    assert!(near.iter().all(|(c, _)| *c != hidden), "{near:?}");
    assert_eq!(near.len(), 2);
    // Not in recall: no fact carries the canary.
    let recall =
        ws.recall(&RecallQuery { vector: Some(vec![1.0, 0.0]), ..RecallQuery::new(&format!("kafka credentials {CANARY}")) }).unwrap();
    assert!(!recall.packed.context.contains(CANARY), "{}", recall.packed.context);
    assert!(recall.packed.facts.iter().all(|f| f.id != hidden.0));
    // Not in the executor's surface: no expand edge, no column, no scan row, no catalog count.
    let out = ws.expander(engram::Direction::Both, None, &engram::Visibility::default());
    assert!(out.edges(auth).all(|x| x.claim != hidden));
    assert_eq!(out.degree(auth), 1);
    assert!(ws.claim_text(hidden).is_none() && ws.claim_triple(hidden).is_none());
    assert!(!ws.claim_set().contains(hidden));
    let cat = ws.catalog();
    assert_eq!(cat.claims, 2);
    assert!(ws.predicate_id("READS_SECRET_FROM").is_some_and(|p| cat.predicate_count(p) == 0));
    assert!(cat.predicates.iter().all(|p| &*p.name != "reads_secret_from"), "{:?}", cat.predicates);
    assert!(ws.report().claims_per_predicate.keys().all(|p| p != "reads_secret_from"));

    // The same principal with `see_sensitive` sees all of it.
    let full = db.scope(reader(true));
    let ws = full.workspace("ops").unwrap();
    assert!(ws.claim(hidden).is_some());
    assert_eq!(ws.search_claim_text(CANARY, 10, &engram::Visibility::default()).unwrap().len(), 1);
    assert_eq!(ws.khop(&[auth], &KHopQuery::depth(3)).unwrap().entities.len(), 4);
    assert!(ws.claim_text(hidden).is_some_and(|t| t.contains(CANARY)));
    assert_eq!(ws.catalog().claims, 3);
    assert!(ws.catalog().predicates.iter().any(|p| &*p.name == "reads_secret_from"));
    assert!(ws.report().claims_per_predicate.contains_key("reads_secret_from"));
}

#[test]
fn a_hidden_claims_words_move_no_keyword_score() {
    // "kafka" is in the hidden claim too: its document frequency and the average length must not
    // count it for a principal that cannot see it.
    let with = seeded(true);
    let without = seeded(false);
    let scores = |db: &Database| {
        let scope = db.scope(reader(false));
        let ws = scope.workspace("ops").unwrap();
        ws.search_claim_text("kafka secrets", 10, &engram::Visibility::default()).unwrap()
    };
    let (a, b) = (scores(&with), scores(&without));
    assert_eq!(a.len(), b.len());
    for ((ca, sa), (cb, sb)) in a.iter().zip(&b) {
        assert_eq!(ca, cb);
        assert!((sa - sb).abs() < 1e-6, "{a:?} vs {b:?}");
    }
    // Root sees the hidden claim, and its statistics differ: the comparison above is not vacuous.
    let root = with.snapshot();
    let all = root.workspace("ops").unwrap().search_claim_text("kafka secrets", 10, &engram::Visibility::default()).unwrap();
    assert_eq!(all.len(), 3);
    assert!(all.iter().any(|(c, s)| a.iter().any(|(c2, s2)| c == c2 && (s - s2).abs() > 1e-6)), "{all:?} vs {a:?}");
}

#[test]
fn grants_decide_which_workspaces_open_and_which_writes_land() {
    let db = seeded(false);
    db.create_workspace("other").unwrap();
    let scope = db.scope(reader(false));
    // Another workspace is refused as unknown: its existence is not revealed.
    assert!(matches!(scope.workspace("other"), Err(ReadError::UnknownWorkspace(_))));
    assert_eq!(scope.workspaces().iter().map(|w| &*w.name).collect::<Vec<_>>(), ["ops"]);
    // A reader's write is refused and writes nothing.
    let before = db.snapshot().counts();
    let mut b = WriteBatch::new("ops");
    b.upsert_entity("new", "service", "New");
    let err = scope.write(&b).unwrap_err();
    assert!(matches!(err, Error::Denied { needed: Access::Write, .. }), "{err}");
    assert_eq!(err.class(), ErrorClass::Caller);
    assert_eq!(db.snapshot().counts(), before);
    // A writer's write lands; `*` grants cover every workspace.
    let writer = db.scope(Arc::new(Principal::named("w").grant("*", Access::Write, false)));
    writer.write(&b).unwrap();
    assert!(writer.workspace("other").is_ok());
    assert_eq!(db.snapshot().counts().0, before.0 + 1);
}

/// A chain of `n` entities e0 → e1 → … in workspace `default`.
fn chain(n: usize) -> Database {
    let db = Database::in_memory();
    let mut b = WriteBatch::new("default");
    for i in 0..n {
        b.upsert_entity(&format!("e{i}"), "node", &format!("Node {i}"));
    }
    for i in 1..n {
        b.add_claim(AddClaim::new(format!("e{}", i - 1).as_str(), "NEXT", format!("e{i}").as_str()));
    }
    db.write(&b).unwrap();
    db
}

#[test]
fn a_tripped_token_or_a_passed_deadline_stops_a_traversal_within_check_every_units() {
    let db = chain(5_000);
    let root = Arc::new(Principal::root());
    let start = EntityId(0);
    // Not interrupted: the whole chain.
    let token = CancelToken::new();
    let scope = db.scope(root.clone()).with_cancel(token.clone());
    let ws = scope.workspace("default").unwrap();
    let full = ws.khop(&[start], &KHopQuery::depth(10_000)).unwrap();
    assert_eq!(full.entities.len(), 5_000);
    // 5,000 entities expanded, one check per CHECK_EVERY of them.
    let per_run = scope.context().checks();
    assert!(per_run >= 4 && per_run <= 5_000 / u64::from(CHECK_EVERY) + 1, "{per_run} checks");
    // Tripped: the next check stops it, so at most CHECK_EVERY units ran after the trip.
    token.cancel();
    let err = ws.khop(&[start], &KHopQuery::depth(10_000)).unwrap_err();
    assert_eq!(err, ReadError::Interrupted(Interrupted::Cancelled));
    assert_eq!(scope.context().checks(), per_run + 1);
    assert_eq!(Error::from(err).class(), ErrorClass::Limit);
    // The scratch state of the stopped walk was cleaned: a later walk is whole.
    assert_eq!(db.snapshot().workspace("default").unwrap().khop(&[start], &KHopQuery::depth(10_000)).unwrap().entities.len(), 5_000);

    // A fake clock: a deadline not yet reached lets the walk finish; once reached, it stops.
    let clock = Arc::new(ManualClock::new(Timestamp::parse("2026-01-01T00:00:00Z").unwrap()));
    let deadline = Timestamp::parse("2026-01-01T00:00:01Z").unwrap();
    let timed = db.scope(root).with_deadline(deadline, clock.clone());
    let ws = timed.workspace("default").unwrap();
    assert_eq!(ws.khop(&[start], &KHopQuery::depth(10_000)).unwrap().entities.len(), 5_000);
    clock.advance_seconds(1);
    assert_eq!(ws.khop(&[start], &KHopQuery::depth(10_000)).unwrap_err(), ReadError::Interrupted(Interrupted::Deadline));
    let err = ws.recall(&RecallQuery::new("node")).unwrap_err();
    assert_eq!(err, ReadError::Interrupted(Interrupted::Deadline));
}

#[test]
fn scope_limits_name_themselves() {
    let db = chain(100);
    db.set_setting("vector_dim", "1").unwrap();
    let limits = ReadLimits { visited_max: 10, vector_k_max: 5, recall_budget_max: 100, ..ReadLimits::default() };
    let scope = db.scope(Arc::new(Principal::root())).with_limits(limits);
    let ws = scope.workspace("default").unwrap();
    // A traversal stops at the limit and says so, even when the query asks for more.
    let r = ws.khop(&[EntityId(0)], &KHopQuery { max_visited: Some(1_000), ..KHopQuery::depth(100) }).unwrap();
    assert!(r.truncated);
    assert_eq!(r.entities.len(), 10);
    let err = ws.search_claim_vectors(&[1.0], &VectorOptions { k: 6, ..VectorOptions::default() }).unwrap_err();
    assert!(matches!(err, ReadError::Limit { name: "vector_k_max", limit: 5, .. }), "{err}");
    assert!(err.to_string().contains("vector_k_max = 5"), "{err}");
    let err = ws.recall(&RecallQuery { budget: 101, ..RecallQuery::new("node") }).unwrap_err();
    assert!(matches!(err, ReadError::Limit { name: "recall_budget_max", .. }), "{err}");
    assert_eq!(Error::from(err).class(), ErrorClass::Limit);
}

/// A scope starts from the documented defaults (and the database's traversal limit); the embedded
/// shorthand trusts its program with the sizes it asks for.
#[test]
fn scopes_default_to_the_documented_limits_and_the_shorthand_to_the_callers_sizes() {
    let db = chain(10);
    let big = RecallQuery { budget: ReadLimits::DEFAULT.recall_budget_max + 1, ..RecallQuery::new("node") };
    let scope = db.scope(Arc::new(Principal::root()));
    let err = scope.workspace("default").unwrap().recall(&big).unwrap_err();
    assert!(matches!(err, ReadError::Limit { name: "recall_budget_max", limit: 32_768, .. }), "{err}");
    let snap = db.snapshot();
    assert!(snap.workspace("default").unwrap().recall(&big).is_ok());
}

#[test]
fn errors_have_classes() {
    let db = chain(3);
    let mut dup = WriteBatch::new("default");
    dup.upsert_entity("x", "node", "X")
        .add_claim(AddClaim::new("x", "NEXT", "x").id("same"))
        .add_claim(AddClaim::new("x", "NEXT", "x").id("same"));
    assert_eq!(db.write(&dup).unwrap_err().class(), ErrorClass::Conflict);
    let unknown = WriteBatch::new("nowhere");
    let mut unknown = unknown;
    unknown.upsert_entity("x", "node", "X");
    assert_eq!(db.write(&unknown).unwrap_err().class(), ErrorClass::Caller);
    assert_eq!(db.create_workspace("default").unwrap_err().class(), ErrorClass::Conflict);
    let dir = tempfile::tempdir().unwrap();
    let held = Database::open(dir.path()).unwrap();
    assert_eq!(Database::open(dir.path()).unwrap_err().class(), ErrorClass::Operator);
    drop(held);
}

/// Closures (ancestors/descendants) count entities expanded like k-hop: a tripped token stops
/// one at its next check, and a scope's `visited_max` ends it with an error naming the limit.
#[test]
fn a_closure_stops_at_the_token_and_at_the_visited_limit() {
    let db = Database::in_memory();
    let mut b = WriteBatch::new("default");
    b.push(engram::Op::DeclarePredicate(engram::DeclarePredicate::new("PARENT").transitive()));
    for i in 0..3_000 {
        b.upsert_entity(&format!("e{i}"), "node", &format!("Node {i}"));
    }
    for i in 1..3_000 {
        b.add_claim(AddClaim::new(format!("e{i}").as_str(), "PARENT", format!("e{}", i - 1).as_str()));
    }
    db.write(&b).unwrap();
    let v = engram::Visibility::default();
    let token = CancelToken::new();
    let scope = db.scope(Arc::new(Principal::root())).with_cancel(token.clone());
    let ws = scope.workspace("default").unwrap();
    let top = ws.entity_id("e0").unwrap();
    assert_eq!(ws.descendants(top, "PARENT", &v).unwrap().len(), 2_999);
    let per_run = scope.context().checks();
    assert!(per_run >= 2 && per_run <= 3_000 / u64::from(CHECK_EVERY) + 1, "{per_run} checks");
    token.cancel();
    assert_eq!(ws.descendants(top, "PARENT", &v).unwrap_err(), ReadError::Interrupted(Interrupted::Cancelled));
    assert_eq!(scope.context().checks(), per_run + 1);
    // The stopped walk left no marks behind.
    assert_eq!(db.snapshot().workspace("default").unwrap().descendants(top, "PARENT", &v).unwrap().len(), 2_999);

    let small = db.scope(Arc::new(Principal::root())).with_limits(ReadLimits { visited_max: 100, ..ReadLimits::default() });
    let err = small.workspace("default").unwrap().descendants(top, "PARENT", &v).unwrap_err();
    assert!(matches!(err, ReadError::Limit { name: "visited_max", limit: 100, .. }), "{err}");
}

#[test]
fn context_queries_name_the_facts_limit() {
    let db = chain(10);
    let scope = db.scope(Arc::new(Principal::root())).with_limits(ReadLimits { facts_max: 5, ..ReadLimits::default() });
    let ws = scope.workspace("default").unwrap();
    let q = engram::ContextQuery { max_facts: 6, ..engram::ContextQuery::default() };
    let err = ws.entity_context(EntityId(0), &q).unwrap_err();
    assert!(matches!(err, ReadError::Limit { name: "facts_max", limit: 5, .. }), "{err}");
    let q = engram::ContextQuery { max_facts: 5, ..engram::ContextQuery::default() };
    assert!(ws.entity_context(EntityId(0), &q).is_ok());
    // And its hops, by the recall's limit.
    let q = engram::ContextQuery { depth: 5, max_facts: 5, ..engram::ContextQuery::default() };
    let err = ws.neighborhood(EntityId(0), "x", None, &q).unwrap_err();
    assert!(matches!(err, ReadError::Limit { name: "recall_hops_max", limit: 4, .. }), "{err}");
    assert!(ws.entity_context(EntityId(0), &engram::ContextQuery { depth: 4, ..q }).is_ok());
}

/// Database-wide totals count other workspaces and hidden claims: only a principal that sees
/// everything gets them; a reader counts what it may see through its workspace's catalog.
#[test]
fn database_wide_totals_need_admin_with_see_sensitive_everywhere() {
    let db = seeded(true);
    let reader = db.scope(reader(false));
    let err = reader.counts().unwrap_err();
    assert!(matches!(err, Error::Denied { .. }), "{err}");
    assert!(reader.memory().is_err());
    assert_eq!(reader.workspace("ops").unwrap().catalog().claims, 2);
    let admin_blind = db.scope(Arc::new(Principal::named("a").grant("*", Access::Admin, false)));
    assert!(admin_blind.counts().is_err());
    let root = db.scope(Arc::new(Principal::root()));
    assert_eq!(root.counts().unwrap(), db.snapshot().counts());
    assert_eq!(root.counts().unwrap().1, 3);
    assert!(root.memory().is_ok());
}

/// A clock that moves one microsecond each time it is read: a deadline passes after a known
/// number of checks, whatever the machine's speed.
#[derive(Debug)]
struct Ticking(std::sync::atomic::AtomicI64);

impl engram::Clock for Ticking {
    fn now(&self) -> Timestamp {
        Timestamp(self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst))
    }
}

/// A vector scan checks the deadline every `STOP_EVERY` rows of each chunk: uninterrupted, a
/// 20,000-row scan makes about one check per 1,024 rows; interrupted, it stops at the failing check
/// (one more per parallel chunk at most) and returns no partial result.
#[test]
fn a_vector_scan_stops_within_check_every_rows_of_its_deadline() {
    const ROWS: usize = 20_000;
    let db = Database::in_memory();
    let mut b = WriteBatch::new("default");
    for i in 0..ROWS {
        b.upsert_entity(&format!("e{i}"), "node", &format!("Node {i}"));
    }
    db.write(&b).unwrap();
    let values: Vec<f32> = (0..ROWS).flat_map(|i| [1.0, i as f32 / ROWS as f32]).collect();
    db.set_entity_vectors(2, values).unwrap();
    let opts = VectorOptions { k: 5, mode: engram::VectorMode::F32, ..VectorOptions::default() };
    let run = |deadline_after: i64| {
        let clock = Arc::new(Ticking(std::sync::atomic::AtomicI64::new(0)));
        let scope = db.scope(Arc::new(Principal::root())).with_deadline(Timestamp(deadline_after), clock);
        let got = scope.workspace("default").unwrap().search_entity_vectors(&[1.0, 0.5], &opts);
        (got, scope.context().checks())
    };
    let (full, checks) = run(i64::MAX);
    assert_eq!(full.unwrap().len(), 5);
    assert!(checks as usize >= ROWS / CHECK_EVERY as usize, "{checks} checks");
    let (stopped, checks) = run(5);
    assert_eq!(stopped.unwrap_err(), ReadError::Interrupted(Interrupted::Deadline));
    // Five checks pass, the sixth fails; the other chunk fails at its next one; then the final check.
    assert!(checks <= 8, "{checks} checks after a deadline at the sixth");
}

/// Keyword search counts candidates like a traversal counts entities: uninterrupted it checks
/// about once per 1,024 of them; past the deadline it fails and returns nothing.
#[test]
fn a_keyword_search_stops_at_its_deadline() {
    const CLAIMS: usize = 5_000;
    let db = Database::in_memory();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("hub", "node", "Hub");
    for i in 0..CLAIMS {
        b.upsert_entity(&format!("e{i}"), "node", &format!("Node {i}"));
        b.add_claim(AddClaim::new("hub", "LINKS", format!("e{i}").as_str()).text(&format!("alpha link number {i}")));
    }
    db.write(&b).unwrap();
    let v = engram::Visibility::default();
    let run = |deadline_after: i64| {
        let clock = Arc::new(Ticking(std::sync::atomic::AtomicI64::new(0)));
        let scope = db.scope(Arc::new(Principal::root())).with_deadline(Timestamp(deadline_after), clock);
        let got = scope.workspace("default").unwrap().search_claim_text("alpha", 10, &v);
        (got, scope.context().checks())
    };
    let (full, checks) = run(i64::MAX);
    assert_eq!(full.unwrap().len(), 10);
    assert!(checks as usize >= CLAIMS / CHECK_EVERY as usize, "{checks} checks");
    let (stopped, checks) = run(2);
    assert_eq!(stopped.unwrap_err(), ReadError::Interrupted(Interrupted::Deadline));
    assert_eq!(checks, 3, "the entry check, one in the search, then the failing one");
}

/// A property key the workspace marks sensitive does not exist for a principal without
/// `see_sensitive`: absent from the entity, its accessor, its catalog and property scans.
#[test]
fn a_sensitive_property_is_absent_for_a_principal_without_see_sensitive() {
    let db = seeded(false);
    let mut props = engram::Properties::new();
    props.insert("email".into(), engram::Value::from("ann@example.com"));
    props.insert("team".into(), engram::Value::from("platform"));
    let mut b = WriteBatch::new("ops");
    b.push(engram::Op::UpsertEntity(engram::UpsertEntity {
        ext_id: "ann".into(),
        entity_type: "person".into(),
        name: "Ann".into(),
        aliases: Vec::new(),
        properties: props,
    }));
    db.write(&b).unwrap();
    assert!(db.set_workspace_setting("ops", "sensitive_properties", "email,,phone").is_err());
    db.set_workspace_setting("ops", "sensitive_properties", "email,phone").unwrap();
    let email = engram::Value::from("ann@example.com");

    let blind = db.scope(reader(false));
    let ws = blind.workspace("ops").unwrap();
    let ann = ws.entity_id("ann").unwrap();
    let entity = ws.entity(ann).unwrap();
    assert!(!entity.properties.contains_key("email") && entity.properties.contains_key("team"), "{:?}", entity.properties);
    assert_eq!(ws.entity_property(ann, "email"), None);
    assert_eq!(ws.entity_properties(ann).map(|(k, _)| k.to_string()).collect::<Vec<_>>(), ["team"]);
    assert!(ws.entities_with_property("email", &email).is_empty());
    assert!(!ws.catalog().property_keys.contains_key("email"));
    // The language's seeks by the hidden key find nothing and read nothing (PROFILE would show a
    // count of the nodes holding the value otherwise), whichever index they could read.
    for q in [
        "MATCH (n {email: 'ann@example.com'}) RETURN n.team",
        "MATCH (n {team: 'platform', email: 'ann@example.com'}) RETURN n.team",
        "MATCH (n) WHERE n.email >= 'a' RETURN n.team",
        "MATCH (n) WHERE n.email IN ['ann@example.com'] AND n.email > 'a' RETURN n.team",
    ] {
        let r = blind.query("ops", &format!("PROFILE {q}"), &engram::Params::new()).unwrap();
        let plan = r.plan.unwrap_or_default();
        assert!(r.rows.is_empty() && plan.contains("read 0 by email") && !plan.contains("read 1"), "{q}: {plan}");
        assert_eq!(db.scope(reader(true)).query("ops", q, &engram::Params::new()).unwrap().rows.len(), 1, "{q}");
    }
    // The same for a relationship's hidden key.
    db.query("ops", "MATCH (a:person) CREATE (a)-[:MAILS {email: 'ann@example.com', team: 'platform'}]->(a)", &engram::Params::new())
        .unwrap();
    let blind = db.scope(reader(false));
    for q in [
        "MATCH ()-[e:MAILS {email: 'ann@example.com'}]->() RETURN e.team",
        "MATCH ()-[e:MAILS {team: 'platform', email: 'ann@example.com'}]->() RETURN e.team",
        "MATCH ()-[e:MAILS]->() WHERE e.email >= 'a' RETURN e.team",
    ] {
        let r = blind.query("ops", &format!("PROFILE {q}"), &engram::Params::new()).unwrap();
        let plan = r.plan.unwrap_or_default();
        assert!(r.rows.is_empty() && plan.contains("read 0 by email") && !plan.contains("read 1"), "{q}: {plan}");
        assert_eq!(db.scope(reader(true)).query("ops", q, &engram::Params::new()).unwrap().rows.len(), 1, "{q}");
    }

    let full = db.scope(reader(true));
    let ws = full.workspace("ops").unwrap();
    assert_eq!(ws.entity_property(ann, "email"), Some(&email));
    assert!(ws.entity(ann).unwrap().properties.contains_key("email"));
    assert_eq!(ws.entities_with_property("email", &email).len(), 1);
    assert_eq!(ws.catalog().property_keys.get("email"), Some(&1));
    // The embedded shorthand is root: it sees everything.
    assert!(db.snapshot().workspace("ops").unwrap().entity(ann).unwrap().properties.contains_key("email"));
}

/// Path searches count the entities they settle (shortest path) or the steps they take (hierarchy
/// paths) against the scope's `visited_max`, and stop at its token.
#[test]
fn path_searches_stop_at_the_visited_limit_and_the_token() {
    let db = chain(100);
    let v = engram::Visibility::default();
    let filter = engram::EdgeFilter::new(engram::Direction::Out);
    let (from, to) = (EntityId(0), EntityId(99));
    let root = db.scope(Arc::new(Principal::root()));
    assert_eq!(root.workspace("default").unwrap().shortest_path(from, to, &filter, &v).unwrap().unwrap().len(), 100);
    let small = db.scope(Arc::new(Principal::root())).with_limits(ReadLimits { visited_max: 10, ..ReadLimits::default() });
    let err = small.workspace("default").unwrap().shortest_path(from, to, &filter, &v).unwrap_err();
    assert!(matches!(err, ReadError::Limit { name: "visited_max", limit: 10, .. }), "{err}");
    let token = CancelToken::new();
    token.cancel();
    let stopped = db.scope(Arc::new(Principal::root())).with_cancel(token);
    let err = stopped.workspace("default").unwrap().shortest_path(from, to, &filter, &v).unwrap_err();
    assert_eq!(err, ReadError::Interrupted(Interrupted::Cancelled));

    let db = Database::in_memory();
    let mut b = WriteBatch::new("default");
    b.push(engram::Op::DeclarePredicate(engram::DeclarePredicate::new("PARENT").transitive()));
    for i in 0..50 {
        b.upsert_entity(&format!("e{i}"), "node", &format!("Node {i}"));
    }
    for i in 1..50 {
        b.add_claim(AddClaim::new(format!("e{i}").as_str(), "PARENT", format!("e{}", i - 1).as_str()));
    }
    db.write(&b).unwrap();
    let ws_of = |limits: ReadLimits| db.scope(Arc::new(Principal::root())).with_limits(limits);
    let full = ws_of(ReadLimits::default());
    let view = full.workspace("default").unwrap();
    let (leaf, top) = (view.entity_id("e49").unwrap(), view.entity_id("e0").unwrap());
    assert_eq!(view.hierarchy_paths(leaf, top, "PARENT", 5, &v).unwrap().len(), 1);
    let small = ws_of(ReadLimits { visited_max: 20, ..ReadLimits::default() });
    let err = small.workspace("default").unwrap().hierarchy_paths(leaf, top, "PARENT", 5, &v).unwrap_err();
    assert!(matches!(err, ReadError::Limit { name: "visited_max", .. }), "{err}");
}

/// An export through a scope holds only what the principal may see: no workspace it cannot
/// read, no hidden claim (its text, id or predicate), and it stops at the scope's token.
#[test]
fn a_scoped_export_leaks_nothing_hidden() {
    let db = seeded(true);
    db.create_workspace("other").unwrap();
    let mut b = WriteBatch::new("other");
    b.upsert_entity("x", "thing", "OtherCanaryEntity");
    db.write(&b).unwrap();
    let all = engram::jsonl::export(&db.snapshot()).join("\n");
    assert!(all.contains(CANARY) && all.contains("OtherCanaryEntity"));

    let lines = engram::jsonl::export_scope(&db.scope(reader(false))).unwrap().join("\n");
    assert!(!lines.contains(CANARY), "{lines}");
    assert!(!lines.contains("\"hidden\"") && !lines.contains("READS_SECRET_FROM"), "{lines}");
    assert!(!lines.contains("OtherCanaryEntity"), "a workspace without a grant is not exported");
    assert!(lines.contains("auth streams events to kafka"));
    let seen = engram::jsonl::export_scope(&db.scope(reader(true))).unwrap().join("\n");
    assert!(seen.contains(CANARY));

    let token = CancelToken::new();
    token.cancel();
    let err = engram::jsonl::export_scope(&db.scope(reader(true)).with_cancel(token)).unwrap_err();
    assert_eq!(err, ReadError::Interrupted(Interrupted::Cancelled));
}

/// The query language runs through the scope: a sensitive claim, its type, text and canary word
/// appear in no row, count, catalog procedure or traversal; a tripped token stops a query.
#[test]
fn queries_see_only_what_the_scope_may_see() {
    let db = seeded(true);
    let p = engram::Params::new();
    let blind = db.scope(reader(false));
    let full = db.scope(reader(true));
    let text = |scope: &engram::Scope, q: &str| -> String {
        let r = scope.query("ops", q, &p).unwrap();
        format!("{:?}", r.rows)
    };
    for q in [
        "MATCH ()-[r]->() RETURN type(r), r.text",
        "MATCH (a {id: 'auth'})-[*1..3]-(b) RETURN collect(DISTINCT b.name)",
        "MATCH (a {id: 'auth'})-[r*1..3]-(b) RETURN r",
        "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType",
        "CALL db.meta.stats()",
        "CALL db.schema.relTypeProperties()",
        "CALL db.schema.nodeTypeProperties()",
        "CALL engram.search.text('zebracanary', 10) YIELD relationship RETURN relationship",
        "CALL engram.neighbors('auth') YIELD relationship RETURN relationship.text",
        "MATCH (n) OPTIONAL MATCH (n)-[r]->(m) RETURN n.name, type(r), m.name",
    ] {
        let seen = text(&blind, q);
        assert!(!seen.contains(CANARY) && !seen.to_lowercase().contains("reads_secret_from"), "{q}: {seen}");
        // Vault and Secrets are reachable from auth only through the hidden claim.
        if q.contains("'auth'})") {
            assert!(!seen.contains("Vault") && !seen.contains("Secrets"), "{q}: {seen}");
        }
    }
    assert_eq!(text(&blind, "MATCH ()-[r]->() RETURN count(r)"), "[[Int(2)]]");
    assert_eq!(text(&full, "MATCH ()-[r]->() RETURN count(r)"), "[[Int(3)]]");
    assert_eq!(text(&blind, "CALL db.meta.stats() YIELD relCount RETURN relCount"), "[[Int(2)]]");
    assert_eq!(text(&full, "CALL db.meta.stats() YIELD relCount RETURN relCount"), "[[Int(3)]]");
    assert!(text(&full, "MATCH ()-[r]->() RETURN r.text").contains(CANARY));
    // A property key only the sensitive claim carries is listed as "" for it: the same ids for
    // every principal (a client caches them), the name never leaves the engine; a principal who
    // sees sensitive content has it.
    db.query("ops", "MATCH ()-[r:READS_SECRET_FROM]->() SET r.zebrakey = 1", &p).unwrap();
    let blind = db.scope(reader(false));
    let full = db.scope(reader(true));
    let blind_keys = text(&blind, "CALL db.propertyKeys()");
    assert!(!blind_keys.contains("zebrakey"), "{blind_keys}");
    assert!(text(&full, "CALL db.propertyKeys()").contains("zebrakey"));
    let full_keys = text(&full, "CALL db.propertyKeys()");
    assert_eq!(blind_keys, full_keys.replace("zebrakey", ""), "{blind_keys} / {full_keys}");
    let blind_schema = text(&blind, "CALL db.schema.relTypeProperties()");
    assert!(!blind_schema.contains("zebrakey") && !blind_schema.to_lowercase().contains("reads_secret_from"), "{blind_schema}");
    assert!(text(&full, "CALL db.schema.relTypeProperties()").contains("zebrakey"));
    let blind_types = text(&blind, "CALL db.relationshipTypes()");
    assert_eq!(blind_types, text(&full, "CALL db.relationshipTypes()").replace("READS_SECRET_FROM", "").replace("reads_secret_from", ""));
    // Another workspace does not open for this principal.
    assert!(blind.query("default", "RETURN 1", &p).is_err());
    // A tripped token stops the query.
    let token = CancelToken::new();
    let stopped = db.scope(Arc::new(Principal::root())).with_cancel(token.clone());
    token.cancel();
    let err = stopped.query("ops", "MATCH (a)-[*1..3]-(b) RETURN count(*)", &p).unwrap_err();
    assert_eq!(err.class(), ErrorClass::Limit, "{err}");
}

/// A query's intermediate results are bounded by the scope's `rows_max`, and its variable-length
/// walks by `visited_max`: the error names the limit, and nothing partial comes back.
#[test]
fn query_limits_name_themselves() {
    let db = chain(200);
    let p = engram::Params::new();
    let small = db.scope(Arc::new(Principal::root())).with_limits(ReadLimits { rows_max: 10, visited_max: 50, ..ReadLimits::default() });
    let err = small.query(engram::DEFAULT_WORKSPACE, "UNWIND range(1, 100) AS x RETURN x", &p).unwrap_err();
    assert_eq!(err.class(), ErrorClass::Limit);
    assert!(err.to_string().contains("rows_max = 10"), "{err}");
    let err = small.query(engram::DEFAULT_WORKSPACE, "MATCH (a {id: 'e0'})-[*1..300]->(b) RETURN count(DISTINCT b)", &p).unwrap_err();
    assert_eq!(err.class(), ErrorClass::Limit, "{err}");
    assert!(err.to_string().contains("visited_max = 50"), "{err}");
    let err = small.query(engram::DEFAULT_WORKSPACE, "MATCH (a {id: 'e0'})-[r*1..300]->(b) RETURN count(r)", &p).unwrap_err();
    assert!(err.to_string().contains("rows_max = 10"), "{err}");
    // Within the limits the same scope answers.
    let ok = small.query(engram::DEFAULT_WORKSPACE, "UNWIND range(1, 5) AS x RETURN x", &p).unwrap();
    assert_eq!(ok.rows.len(), 5);
}

/// A query that writes needs write access; for a writer without `see_sensitive`, a sensitive
/// claim is not matched, counted or deleted by the language's writes, and does not stop a plain
/// DELETE of its node (it goes out of sight with the node, soft-deleted, as `Database::write`
/// would hide it).
#[test]
fn write_queries_need_write_access_and_never_meet_hidden_claims() {
    let db = seeded(true);
    let none = engram::Params::new();
    let err = db.scope(reader(true)).query("ops", "CREATE (:X)", &none).unwrap_err();
    assert!(matches!(err, Error::Denied { needed: Access::Write, .. }), "{err}");
    assert_eq!(db.snapshot().workspace("ops").unwrap().query("MATCH (n:X) RETURN n", &none).unwrap().rows.len(), 0);
    let writer = db.scope(Arc::new(Principal::named("w").grant("ops", Access::Write, false)));
    // The hidden claim is not matched by SET.
    let r = writer.query("ops", "MATCH ({id: 'auth'})-[r]->() SET r.seen = true RETURN count(r)", &none).unwrap();
    assert_eq!(r.rows[0][0], engram::QueryValue::Int(1), "only the public claim");
    // DETACH DELETE counts only the claims the writer sees.
    let r = writer.query("ops", "MATCH (n {id: 'auth'}) DETACH DELETE n", &none).unwrap();
    assert_eq!((r.stats.nodes_deleted, r.stats.relationships_deleted), (1, 1));
    let snap = db.snapshot();
    let all = snap.workspace("ops").unwrap();
    let hidden = all.claim_id("hidden").unwrap();
    assert!(!all.claim(hidden).unwrap().deleted, "the sensitive claim itself was not deleted");
    assert!(all.claim(hidden).unwrap().text.unwrap().contains(CANARY));
    // A tripped token stops a write query too, and it writes nothing.
    let token = CancelToken::new();
    let stopped = db.scope(Arc::new(Principal::root())).with_cancel(token.clone());
    token.cancel();
    let err = stopped.query("ops", "UNWIND range(1, 5000) AS i CREATE (:Many)", &none).unwrap_err();
    assert_eq!(err.class(), ErrorClass::Limit, "{err}");
    assert_eq!(db.query("ops", "MATCH (n:Many) RETURN count(n)", &none).unwrap().rows[0][0], engram::QueryValue::Int(0));
}

/// `engram.forget` through a writer without `see_sensitive` erases the hidden claim with the node
/// but counts only what the writer sees.
#[test]
fn forget_counts_only_what_the_writer_sees() {
    let db = seeded(true);
    let none = engram::Params::new();
    let writer = db.scope(Arc::new(Principal::named("w").grant("ops", Access::Write, false)));
    let r = writer.query("ops", "MATCH (n {id: 'auth'}) CALL engram.forget(n) YIELD claims RETURN claims", &none).unwrap();
    assert_eq!(r.rows, vec![vec![engram::QueryValue::Int(1)]], "the public claim only");
    let snap = db.snapshot();
    let all = snap.workspace("ops").unwrap();
    assert!(all.claim_id("hidden").is_none(), "the sensitive claim was erased with its node");
    assert!(all.search_claim_text(CANARY, 10, &engram::Visibility::all_versions()).unwrap().is_empty());
}
