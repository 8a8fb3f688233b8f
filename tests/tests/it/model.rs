//! Behaviour of the model through the public API: names and aliases, properties, lifecycle and
//! supersession, evidence, time travel on both axes, expiry, deletion and restore, workspaces,
//! pagination under concurrent writes, and the hierarchy and path reads.

use engram::{
    AddClaim, AddEvidence, ClaimState, Config, Database, DeclarePredicate, Direction, EdgeFilter, EntityId, KHopQuery, ManualClock,
    NeighborQuery, Op, ReadError, StateSet, Timestamp, UpsertEntity, Value, Visibility, WorkspaceError, WriteBatch,
};
use std::sync::Arc;

fn clocked() -> (Database, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(Timestamp::parse("2026-03-01T00:00:00Z").unwrap()));
    (Database::with_config(Config { clock: clock.clone(), ..Config::default() }), clock)
}

fn entity(ext: &str, ty: &str, name: &str, aliases: &[&str]) -> Op {
    Op::UpsertEntity(UpsertEntity {
        ext_id: ext.into(),
        entity_type: ty.into(),
        name: name.into(),
        aliases: aliases.iter().map(|s| (*s).to_owned()).collect(),
        properties: engram::Properties::default(),
    })
}

fn write(db: &Database, ops: Vec<Op>) {
    let mut b = WriteBatch::new("default");
    for op in ops {
        b.push(op);
    }
    db.write(&b).unwrap();
}

#[test]
fn names_resolve_across_spellings_and_renames() {
    let db = Database::in_memory();
    write(&db, vec![entity("auth", "service", "AuthService", &["auth-svc"]), entity("kin", "technology", "Kinesis", &[])]);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let auth = ws.entity_id("auth").unwrap();
    for spelling in ["AuthService", "Auth Service", "auth-service", "auth_service", "AUTH.SERVICE", "auth svc", "AUTH-SVC"] {
        assert_eq!(ws.find_by_name(spelling), vec![auth], "{spelling}");
    }
    assert_eq!(ws.entity(auth).unwrap().name.as_ref(), "AuthService", "the display form is kept");
    assert!(ws.find_by_name("Kafka").is_empty());
    write(&db, vec![Op::RenameEntity { entity: "auth".into(), name: "Identity Service".into() }]);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    assert_eq!(ws.find_by_name("identity-service"), vec![auth]);
    assert_eq!(ws.find_by_name("AuthService"), vec![auth], "the old name stays an alias");
    write(&db, vec![Op::RemoveAlias { entity: "auth".into(), alias: "Auth Svc".into() }]);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    assert!(ws.find_by_name("auth-svc").is_empty());
    assert_eq!(ws.entity(auth).unwrap().aliases, vec![Arc::<str>::from("AuthService")]);
}

#[test]
fn properties_are_typed_and_merged() {
    let db = Database::in_memory();
    write(
        &db,
        vec![
            entity("a", "service", "A", &[]),
            Op::SetProperty { entity: "a".into(), key: "tier".into(), value: Value::Int(1) },
            Op::SetProperty { entity: "a".into(), key: "owner".into(), value: "platform".into() },
        ],
    );
    write(&db, vec![Op::SetProperty { entity: "a".into(), key: "tier".into(), value: Value::Null }]);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let a = ws.entity(ws.entity_id("a").unwrap()).unwrap();
    assert_eq!(a.properties.len(), 1);
    assert_eq!(a.properties.get("owner"), Some(&Value::from("platform")));
    assert_eq!(a.entity_type.as_ref(), "service");
}

#[test]
fn predicates_are_case_insensitive_and_declared_per_workspace() {
    let db = Database::in_memory();
    db.create_workspace("other").unwrap();
    let mut d = DeclarePredicate::new("Streams_Events_With");
    d.cardinality = engram::Cardinality::One;
    d.half_life_days = Some(180.0);
    write(&db, vec![entity("a", "s", "A", &[]), entity("b", "s", "B", &[]), Op::DeclarePredicate(d)]);
    write(&db, vec![Op::AddClaim(AddClaim::new("a", "STREAMS_EVENTS_WITH", "b"))]);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let def = ws.predicate("streams_events_with").unwrap();
    assert_eq!((def.cardinality, def.half_life_days), (engram::Cardinality::One, Some(180.0)));
    let claim = ws.claim(ws.claim_id("c0").unwrap()).unwrap();
    assert_eq!(claim.predicate.as_ref(), "streams_events_with");
    // Undeclared elsewhere: the default.
    let other = snap.workspace("other").unwrap().predicate("streams_events_with").unwrap();
    assert_eq!((other.cardinality, other.transitive, other.half_life_days), (engram::Cardinality::Many, false, None));
}

/// The scenario of the seed article: Kafka replaced by Kinesis, with evidence and both time axes.
#[test]
fn supersession_evidence_and_time_travel() {
    let (db, clock) = clocked();
    write(
        &db,
        vec![
            entity("auth", "service", "AuthService", &[]),
            entity("kafka", "technology", "Kafka", &[]),
            entity("kinesis", "technology", "Kinesis", &[]),
            Op::AddClaim(
                AddClaim::new("auth", "streams_events_with", "kafka")
                    .id("k1")
                    .state(ClaimState::Accepted)
                    .valid(Some(Timestamp::parse("2026-01-01T00:00:00Z").unwrap()), None),
            ),
            Op::AddEvidence(AddEvidence {
                claim: Some("k1".into()),
                conversation_id: Some("conv-3".into()),
                message_id: Some("m-1".into()),
                snippet: Some("we are using Kafka".into()),
                ..AddEvidence::default()
            }),
        ],
    );
    let t_kafka_known = db.snapshot().now();
    clock.advance_seconds(86_400 * 10);
    let switch = Timestamp::parse("2026-03-10T00:00:00Z").unwrap();
    write(
        &db,
        vec![
            Op::AddClaim(
                AddClaim::new("auth", "streams_events_with", "kinesis").id("k2").state(ClaimState::Accepted).valid(Some(switch), None),
            ),
            Op::AddEvidence(AddEvidence { claim: Some("k2".into()), conversation_id: Some("conv-23".into()), ..AddEvidence::default() }),
            Op::AddEvidence(AddEvidence { claim: Some("k2".into()), conversation_id: Some("conv-38".into()), ..AddEvidence::default() }),
            Op::Deprecate { claim: "k1".into(), superseded_by: Some("k2".into()) },
        ],
    );
    clock.advance_seconds(60);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let auth = ws.entity_id("auth").unwrap();
    let (k1, k2) = (ws.claim_id("k1").unwrap(), ws.claim_id("k2").unwrap());
    let objects = |v: Visibility| -> Vec<String> {
        let q = NeighborQuery { filter: EdgeFilter::new(Direction::Out), visibility: v, ..NeighborQuery::default() };
        ws.neighbors(auth, &q).unwrap().items.iter().map(|n| ws.entity(n.neighbor).unwrap().name.to_string()).collect()
    };
    assert_eq!(objects(Visibility::default()), ["Kinesis"], "only the current fact is served");
    assert_eq!(objects(Visibility { known_as_of: Some(t_kafka_known), ..Visibility::default() }), ["Kafka"], "what we believed then");
    assert_eq!(objects(Visibility { states: StateSet::ALL, ..Visibility::default() }), ["Kafka", "Kinesis"]);
    // Valid time before the switch: Kinesis was not yet valid, Kafka is deprecated now.
    assert!(objects(Visibility::as_of(Timestamp::parse("2026-02-01T00:00:00Z").unwrap())).is_empty());
    assert_eq!(ws.supersession_chain(k1).unwrap(), vec![k1, k2]);
    assert_eq!(ws.supersession_chain(k2).unwrap(), vec![k1, k2]);
    assert_eq!(ws.superseded_by_claim(k2).unwrap(), vec![k1]);
    assert_eq!(ws.claim(k1).unwrap().superseded_by, Some(k2));
    let ev: Vec<String> = ws.evidence_of(k2).unwrap().iter().map(|e| e.conversation_id.clone().unwrap().to_string()).collect();
    assert_eq!(ev, ["conv-23", "conv-38"], "oldest first");
    assert_eq!(ws.evidence_of(k1).unwrap()[0].snippet.as_deref(), Some("we are using Kafka"));
}

#[test]
fn expiry_and_validity_follow_the_clock() {
    let (db, clock) = clocked();
    let now = db.snapshot().now();
    write(
        &db,
        vec![
            entity("a", "s", "A", &[]),
            entity("b", "s", "B", &[]),
            entity("c", "s", "C", &[]),
            Op::AddClaim(AddClaim::new("a", "r", "b").expires(now.plus_seconds(100))),
            Op::AddClaim(AddClaim::new("a", "r", "c").valid(Some(now.plus_seconds(50)), Some(now.plus_seconds(200)))),
        ],
    );
    let count = || {
        let snap = db.snapshot();
        let ws = snap.workspace("default").unwrap();
        ws.neighbors(ws.entity_id("a").unwrap(), &NeighborQuery::default()).unwrap().items.len()
    };
    assert_eq!(count(), 1);
    clock.advance_seconds(60);
    assert_eq!(count(), 2);
    clock.advance_seconds(60);
    assert_eq!(count(), 1, "the first claim expired");
    clock.advance_seconds(100);
    assert_eq!(count(), 0, "the second left its validity");
}

#[test]
fn deleting_an_entity_hides_its_claims_until_restored() {
    let (db, clock) = clocked();
    write(&db, vec![entity("a", "s", "A", &[]), entity("b", "s", "B", &[]), Op::AddClaim(AddClaim::new("a", "r", "b").id("ab"))]);
    clock.advance_seconds(1);
    let before_delete = db.snapshot().now();
    clock.advance_seconds(1);
    write(&db, vec![Op::DeleteEntity { entity: "b".into() }]);
    clock.advance_seconds(1);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let a = ws.entity_id("a").unwrap();
    assert!(ws.neighbors(a, &NeighborQuery::default()).unwrap().items.is_empty());
    assert!(ws.find_by_name("B").is_empty());
    assert!(ws.entity(ws.entity_id("b").unwrap()).unwrap().deleted);
    let incl = NeighborQuery { visibility: Visibility { include_deleted: true, ..Visibility::default() }, ..NeighborQuery::default() };
    assert_eq!(ws.neighbors(a, &incl).unwrap().items.len(), 1);
    let then =
        NeighborQuery { visibility: Visibility { known_as_of: Some(before_delete), ..Visibility::default() }, ..NeighborQuery::default() };
    assert_eq!(ws.neighbors(a, &then).unwrap().items.len(), 1, "history still shows it");
    write(&db, vec![Op::RestoreEntity { entity: "b".into() }]);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    assert_eq!(ws.neighbors(a, &NeighborQuery::default()).unwrap().items.len(), 1);
    // A claim deleted on its own stays hidden when its entity is restored.
    write(&db, vec![Op::DeleteClaim { claim: "ab".into() }, Op::DeleteEntity { entity: "b".into() }]);
    write(&db, vec![Op::RestoreEntity { entity: "b".into() }]);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    assert!(ws.neighbors(a, &NeighborQuery::default()).unwrap().items.is_empty());
    write(&db, vec![Op::RestoreClaim { claim: "ab".into() }]);
    assert_eq!(db.snapshot().workspace("default").unwrap().neighbors(a, &NeighborQuery::default()).unwrap().items.len(), 1);
}

#[test]
fn workspaces_are_isolated_and_drop_erases() {
    let db = Database::in_memory();
    db.create_workspace("team-a").unwrap();
    db.create_workspace("team-b").unwrap();
    assert_eq!(db.create_workspace("team-a").unwrap_err().as_workspace(), Some(&WorkspaceError::AlreadyExists("team-a".into())));
    assert!(matches!(db.create_workspace("").unwrap_err().as_workspace(), Some(WorkspaceError::InvalidName(_))));
    let names: Vec<String> = db.workspaces().iter().map(|w| w.name.to_string()).collect();
    assert_eq!(names, ["default", "team-a", "team-b"]);
    for ws in ["team-a", "team-b"] {
        let mut b = WriteBatch::new(ws);
        b.upsert_entity("auth", "service", "AuthService")
            .upsert_entity("db", "service", "Postgres")
            .add_claim(AddClaim::new("auth", "uses", "db"));
        db.write(&b).unwrap();
    }
    let snap = db.snapshot();
    let a = snap.workspace("team-a").unwrap();
    let b = snap.workspace("team-b").unwrap();
    let a_auth = a.entity_id("auth").unwrap();
    let b_auth = b.entity_id("auth").unwrap();
    assert_ne!(a_auth, b_auth);
    assert_eq!(a.find_by_name("authservice"), vec![a_auth]);
    assert_eq!(b.neighbors(a_auth, &NeighborQuery::default()), Err(ReadError::UnknownEntity(a_auth)), "ids do not cross workspaces");
    assert!(b.entity(a_auth).is_none());
    db.drop_workspace("team-a").unwrap();
    let snap2 = db.snapshot();
    assert!(matches!(snap2.workspace("team-a"), Err(ReadError::UnknownWorkspace(_))));
    assert_eq!(snap2.workspace("team-b").unwrap().khop(&[b_auth], &KHopQuery::depth(1)).unwrap().entities.len(), 2);
    // The old snapshot still reads the dropped workspace: snapshots are immutable.
    assert_eq!(a.khop(&[a_auth], &KHopQuery::depth(1)).unwrap().entities.len(), 2);
    db.create_workspace("team-a").unwrap();
    let fresh = db.snapshot();
    let fresh = fresh.workspace("team-a").unwrap();
    assert!(fresh.entity_id("auth").is_none() && fresh.find_by_name("AuthService").is_empty());
    assert!(fresh.entity(a_auth).is_none(), "erased rows never come back");
    assert_eq!(db.drop_workspace("nope").unwrap_err().as_workspace(), Some(&WorkspaceError::Unknown("nope".into())));
}

#[test]
fn pagination_stays_correct_while_writes_go_on() {
    let db = Database::in_memory();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("hub", "s", "Hub");
    for i in 0..50 {
        b.upsert_entity(&format!("n{i}"), "s", &format!("N{i}"))
            .add_claim(AddClaim::new("hub", "r", format!("n{i}").as_str()).id(&format!("c{i}")));
    }
    db.write(&b).unwrap();
    let hub = db.snapshot().workspace("default").unwrap().entity_id("hub").unwrap();
    let mut seen = Vec::new();
    let mut cursor = None;
    let mut round = 0;
    loop {
        let snap = db.snapshot();
        let ws = snap.workspace("default").unwrap();
        let page = ws.neighbors(hub, &NeighborQuery { limit: Some(7), cursor: cursor.clone(), ..NeighborQuery::default() }).unwrap();
        seen.extend(page.items.iter().map(|n| ws.claim(n.claim).unwrap().ext_id.to_string()));
        // Between pages: delete one claim not yet seen, add a new one, and force a merge.
        let mut w = WriteBatch::new("default");
        w.push(Op::DeleteClaim { claim: format!("c{}", 49 - round).into() });
        w.upsert_entity(&format!("m{round}"), "s", "M")
            .add_claim(AddClaim::new("hub", "r", format!("m{round}").as_str()).id(&format!("new{round}")));
        db.write(&w).unwrap();
        db.compact();
        round += 1;
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "no claim is returned twice");
    for i in 0..(50 - round) {
        assert!(seen.contains(&format!("c{i}")), "c{i} was visible throughout and must be returned");
    }
    assert!(seen.iter().any(|s| s.starts_with("new")), "claims added meanwhile appear at the end");
    assert!(matches!(
        db.snapshot()
            .workspace("default")
            .unwrap()
            .neighbors(hub, &NeighborQuery { cursor: Some("garbage".into()), ..NeighborQuery::default() }),
        Err(ReadError::InvalidCursor(_))
    ));
}

#[test]
fn hierarchy_paths_shortest_path_and_transitivity() {
    let db = Database::in_memory();
    let mut ops = vec![Op::DeclarePredicate(DeclarePredicate::new("SUBCLASS_OF").transitive())];
    for n in ["cell", "immune", "lymphocyte", "t_cell", "nk", "myeloid"] {
        ops.push(entity(n, "concept", n, &[]));
    }
    for (c, p) in [
        ("immune", "cell"),
        ("lymphocyte", "immune"),
        ("t_cell", "lymphocyte"),
        ("nk", "lymphocyte"),
        ("t_cell", "immune"),
        ("myeloid", "immune"),
    ] {
        ops.push(Op::AddClaim(AddClaim::new(c, "subclass_of", p)));
    }
    // A cycle must not hang anything.
    ops.push(Op::AddClaim(AddClaim::new("cell", "related_to", "t_cell")));
    write(&db, ops);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let id = |n: &str| ws.entity_id(n).unwrap();
    let v = Visibility::default();
    let anc = ws.ancestors(id("t_cell"), "subclass_of", &v).unwrap();
    assert_eq!(anc, vec![(id("immune"), 1), (id("lymphocyte"), 1), (id("cell"), 2)]);
    let desc = ws.descendants(id("immune"), "SUBCLASS_OF", &v).unwrap();
    assert_eq!(desc.len(), 4);
    assert!(desc.contains(&(id("t_cell"), 1)) && desc.contains(&(id("nk"), 2)));
    let paths = ws.hierarchy_paths(id("t_cell"), id("cell"), "subclass_of", 10, &v).unwrap();
    assert_eq!(paths, vec![vec![id("t_cell"), id("immune"), id("cell")], vec![id("t_cell"), id("lymphocyte"), id("immune"), id("cell")]]);
    assert!(ws.hierarchy_paths(id("cell"), id("t_cell"), "subclass_of", 10, &v).unwrap().is_empty());
    assert_eq!(ws.ancestors(id("t_cell"), "related_to", &v), Err(ReadError::NotTransitive("related_to".into())));
    let path = ws.shortest_path(id("nk"), id("myeloid"), &EdgeFilter::default(), &v).unwrap().unwrap();
    assert_eq!(path, vec![id("nk"), id("lymphocyte"), id("immune"), id("myeloid")]);
    let none = ws.shortest_path(id("nk"), id("myeloid"), &EdgeFilter::new(Direction::Out), &v).unwrap();
    assert!(none.is_none(), "upward only, myeloid is not above nk");
    // petgraph algorithms run on the view directly.
    let g = ws.graph_view(&EdgeFilter::new(Direction::Out).predicates(&["subclass_of"]), &v);
    let dist = petgraph::algo::dijkstra(&g, id("nk"), None, |_| 1u32);
    assert_eq!(dist.get(&id("cell")), Some(&3));
}

#[test]
fn khop_reports_truncation_and_claims() {
    let db = Database::in_memory();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("root", "s", "Root");
    for i in 0..20 {
        b.upsert_entity(&format!("n{i}"), "s", "N").add_claim(AddClaim::new("root", "r", format!("n{i}").as_str()));
    }
    db.write(&b).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let root = ws.entity_id("root").unwrap();
    let r = ws.khop(&[root], &KHopQuery { max_depth: 2, max_visited: Some(5), with_claims: true, ..KHopQuery::default() }).unwrap();
    assert!(r.truncated);
    assert_eq!(r.entities.len(), 5);
    assert_eq!(r.via[1].len(), 1);
    let full = ws.khop(&[root], &KHopQuery::depth(2)).unwrap();
    assert!(!full.truncated);
    assert_eq!(full.entities.len(), 21);
    assert!(matches!(ws.khop(&[EntityId(10_000)], &KHopQuery::depth(1)), Err(ReadError::UnknownEntity(_))));
}

/// Generated claim ids (`c<id>`) are found by position, caller-chosen ones through the index,
/// including a caller's `c<n>` that collides with a later generated id (which then gets a
/// suffix); the same after a checkpoint and reopen.
#[test]
fn generated_and_chosen_claim_ids_resolve() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("db");
    let db = Database::open(&path).unwrap();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("a", "t", "A");
    b.upsert_entity("b", "t", "B");
    b.add_claim(AddClaim::new("a", "p", "b")); // c0
    b.add_claim(AddClaim::new("a", "q", "b").id("c3")); // claim 1, named c3 by the caller
    b.add_claim(AddClaim::new("a", "r", "b").id("c02")); // claim 2
    b.add_claim(AddClaim::new("b", "s", "a")); // claim 3: c3 is taken → c3_1
    db.write(&b).unwrap();
    let check = |db: &Database| {
        let snap = db.snapshot();
        let ws = snap.workspace("default").unwrap();
        let id = |x: &str| ws.claim_id(x).map(|c| c.0);
        assert_eq!(id("c0"), Some(0));
        assert_eq!(id("c3"), Some(1));
        assert_eq!(id("c02"), Some(2));
        assert_eq!(id("c2"), None);
        assert_eq!(id("c3_1"), Some(3));
        assert_eq!(id("c1"), None);
        assert_eq!(id("c9"), None);
        assert_eq!(ws.claim(engram::ClaimId(3)).unwrap().ext_id.as_ref(), "c3_1");
    };
    check(&db);
    db.checkpoint().unwrap();
    db.wait_for_merge();
    drop(db);
    check(&Database::open(&path).unwrap());
}
