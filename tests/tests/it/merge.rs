//! Entity merge and its undo: claims are re-pointed (same rows, history and evidence), names move
//! as aliases, the retired entity is remembered; the undo restores exactly what the merge changed.
//! Checked in memory with the claims in the delta and in the base CSR, across WAL replay and a
//! snapshot, and for every refusal leaving no trace. (Random merge histories against the naive
//! reference are in `differential.rs`.)

use engram::ingest::IngestOptions;
use engram::{
    AddClaim, AddEvidence, Config, Database, Direction, EntityId, Error, FsyncPolicy, KHopQuery, ManualClock, NeighborQuery, Op, Timestamp,
    WriteBatch, WriteErrorKind,
};
use std::sync::Arc;

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(Timestamp::from_epoch_seconds(1_780_000_000)))
}

/// `AuthService` and a duplicate "Auth Svc" (alias "auth-api") with claims on both, one with evidence.
fn seed(db: &Database) {
    let mut b = WriteBatch::new("default");
    b.upsert_entity("auth", "service", "AuthService")
        .upsert_entity("authsvc", "service", "Auth Svc")
        .push(Op::AddAlias { entity: "authsvc".into(), alias: "auth-api".into() })
        .upsert_entity("kafka", "technology", "Kafka")
        .upsert_entity("team", "team", "Platform Team")
        .add_claim(AddClaim::new("authsvc", "uses", "kafka").id("k1").text("Auth Svc uses Kafka"))
        .add_claim(AddClaim::new("team", "owns", "authsvc").id("k2"))
        .add_claim(AddClaim::new("auth", "depends_on", "kafka").id("k3"))
        .add_claim(AddClaim::new("authsvc", "calls", "auth").id("k4"))
        .push(Op::AddEvidence(AddEvidence {
            claim: Some("k1".into()),
            conversation_id: Some("conv-1".into()),
            reasoning: Some("stated by the architect".into()),
            ..AddEvidence::default()
        }));
    db.write(&b).unwrap();
}

/// Every entity's neighbours as `(entity, claim, direction, neighbour)` external ids.
fn adjacency(db: &Database) -> Vec<(String, String, bool, String)> {
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let mut out = Vec::new();
    for ext in ["auth", "authsvc", "kafka", "team", "redis"] {
        let Some(e) = ws.entity_id(ext) else { continue };
        let Ok(page) = ws.neighbors(e, &NeighborQuery::default()) else { continue };
        for n in page.items {
            let claim = ws.claim(n.claim).unwrap().ext_id.to_string();
            let nbr = ws.entity(n.neighbor).unwrap().ext_id.to_string();
            out.push((ext.to_owned(), claim, n.direction == Direction::Out, nbr));
        }
    }
    out.sort();
    out
}

fn merge(from: &str, into: &str) -> WriteBatch {
    let mut b = WriteBatch::new("default");
    b.push(Op::MergeEntities { from: from.into(), into: into.into() });
    b
}

fn unmerge(entity: &str) -> WriteBatch {
    let mut b = WriteBatch::new("default");
    b.push(Op::UnmergeEntity { entity: entity.into() });
    b
}

fn edge(e: &str, claim: &str, out: bool, nbr: &str) -> (String, String, bool, String) {
    (e.to_owned(), claim.to_owned(), out, nbr.to_owned())
}

/// What the seed looks like after `authsvc` is merged into `auth` (k4 becomes a self-loop).
fn merged_adjacency() -> Vec<(String, String, bool, String)> {
    let mut v = vec![
        edge("auth", "k1", true, "kafka"),
        edge("auth", "k2", false, "team"),
        edge("auth", "k3", true, "kafka"),
        edge("auth", "k4", true, "auth"),
        edge("auth", "k4", false, "auth"),
        edge("kafka", "k1", false, "auth"),
        edge("kafka", "k3", false, "auth"),
        edge("team", "k2", true, "auth"),
    ];
    v.sort();
    v
}

fn check_merged(db: &Database) {
    assert_eq!(adjacency(db), merged_adjacency());
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let (auth, authsvc) = (ws.entity_id("auth").unwrap(), ws.entity_id("authsvc").unwrap());
    let retired = ws.entity(authsvc).unwrap();
    assert!(retired.deleted);
    assert_eq!(retired.merged_into, Some(auth));
    let survivor = ws.entity(auth).unwrap();
    assert_eq!(survivor.aliases.iter().map(AsRef::as_ref).collect::<Vec<&str>>(), vec!["Auth Svc", "auth-api"]);
    for name in ["Auth Svc", "auth api", "AuthService"] {
        assert_eq!(ws.find_by_name(name), vec![auth], "{name}");
    }
    // Keyword search over names finds the survivor (through its new aliases), not the retired one.
    let hits: Vec<EntityId> = ws.search_entity_text("svc", 5, &engram::Visibility::default()).unwrap().into_iter().map(|h| h.0).collect();
    assert_eq!(hits, vec![auth]);
    // The same claim row, with its evidence and text.
    let k1 = ws.claim_id("k1").unwrap();
    let claim = ws.claim(k1).unwrap();
    assert_eq!((claim.subject, claim.text.as_deref()), (auth, Some("Auth Svc uses Kafka")));
    let evidence = ws.evidence_of(k1).unwrap();
    assert_eq!(evidence.len(), 1);
    assert_eq!(evidence[0].reasoning.as_deref(), Some("stated by the architect"));
    let merges = ws.merges_of(auth);
    assert_eq!(merges.len(), 1);
    assert_eq!((merges[0].from, merges[0].into, merges[0].claims, merges[0].undone_at), (authsvc, auth, 3, None));
    // Two hops from the team reach the survivor and, through the moved claim, Kafka.
    let team = ws.entity_id("team").unwrap();
    let reached = ws.khop(&[team], &KHopQuery::depth(2)).unwrap();
    let mut ids: Vec<EntityId> = reached.entities.iter().map(|r| r.entity).collect();
    ids.sort_unstable();
    assert_eq!(ids, vec![auth, ws.entity_id("kafka").unwrap(), team]);
}

/// The whole story in one database, the claims in the delta or (`compact_first`) in the base CSR.
fn merge_then_undo(compact_first: bool) {
    let db = Database::with_config(Config { clock: clock(), background_merge: false, ..Config::default() });
    seed(&db);
    if compact_first {
        db.compact();
    }
    let before = adjacency(&db);
    db.write(&merge("authsvc", "auth")).unwrap();
    check_merged(&db);
    // A claim about the retired entity is refused, naming the survivor.
    let mut b = WriteBatch::new("default");
    b.add_claim(AddClaim::new("authsvc", "uses", "kafka"));
    let err = db.write(&b).unwrap_err().to_string();
    assert!(err.contains("was merged into"), "{err}");
    // New facts about the survivor stay with it after the undo.
    let mut b = WriteBatch::new("default");
    b.upsert_entity("redis", "technology", "Redis").add_claim(AddClaim::new("auth", "caches_in", "redis").id("k5"));
    db.write(&b).unwrap();
    db.compact();
    check_merged_plus_k5(&db);
    db.write(&unmerge("authsvc")).unwrap();
    let mut want = before.clone();
    want.extend([edge("auth", "k5", true, "redis"), edge("redis", "k5", false, "auth")]);
    want.sort();
    assert_eq!(adjacency(&db), want);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let (auth, authsvc) = (ws.entity_id("auth").unwrap(), ws.entity_id("authsvc").unwrap());
    let back = ws.entity(authsvc).unwrap();
    assert!(!back.deleted && back.merged_into.is_none());
    assert!(ws.entity(auth).unwrap().aliases.is_empty());
    assert_eq!(ws.find_by_name("auth-api"), vec![authsvc]);
    let hits: Vec<EntityId> = ws.search_entity_text("svc", 5, &engram::Visibility::default()).unwrap().into_iter().map(|h| h.0).collect();
    assert_eq!(hits, vec![authsvc]);
    assert!(ws.merges_of(authsvc)[0].undone_at.is_some());
    drop(snap);
    db.compact();
    assert_eq!(adjacency(&db), want);
    // Merged again, then undone again: still exact.
    db.write(&merge("authsvc", "auth")).unwrap();
    db.write(&unmerge("authsvc")).unwrap();
    assert_eq!(adjacency(&db), want);
}

fn check_merged_plus_k5(db: &Database) {
    let mut want = merged_adjacency();
    want.extend([edge("auth", "k5", true, "redis"), edge("redis", "k5", false, "auth")]);
    want.sort();
    assert_eq!(adjacency(db), want);
}

#[test]
fn merge_repoints_claims_and_undo_restores_them_delta_layout() {
    merge_then_undo(false);
}

#[test]
fn merge_repoints_claims_and_undo_restores_them_base_layout() {
    merge_then_undo(true);
}

#[test]
fn refused_merges_change_nothing() {
    let db = Database::in_memory();
    seed(&db);
    let mut b = WriteBatch::new("default");
    b.upsert_entity("gone", "service", "Gone").push(Op::DeleteEntity { entity: "gone".into() });
    db.write(&b).unwrap();
    let version = db.snapshot().version();
    let refused = |batch: &WriteBatch, want: &dyn Fn(&WriteErrorKind) -> bool| {
        let before = adjacency(&db);
        match db.write(batch) {
            Err(Error::Write(e)) => assert!(want(&e.kind), "{e}"),
            other => panic!("expected a write error, got {other:?}"),
        }
        assert_eq!(db.snapshot().version(), version);
        assert_eq!(adjacency(&db), before);
    };
    refused(&merge("auth", "auth"), &|k| matches!(k, WriteErrorKind::Invalid(_)));
    refused(&merge("gone", "auth"), &|k| matches!(k, WriteErrorKind::EntityDeleted(_)));
    refused(&merge("auth", "gone"), &|k| matches!(k, WriteErrorKind::EntityDeleted(_)));
    refused(&merge("nobody", "auth"), &|k| matches!(k, WriteErrorKind::UnknownEntity(_)));
    refused(&unmerge("auth"), &|k| matches!(k, WriteErrorKind::Invalid(_)));
    // A merge inside a batch that fails later leaves no trace either.
    let mut b = merge("authsvc", "auth");
    b.add_claim(AddClaim::new("auth", "uses", "nobody"));
    refused(&b, &|k| matches!(k, WriteErrorKind::UnknownEntity(_)));
    // Undo runs in reverse order of merges that chain.
    db.write(&merge("authsvc", "auth")).unwrap();
    db.write(&merge("auth", "kafka")).unwrap();
    let version = db.snapshot().version();
    match db.write(&unmerge("authsvc")) {
        Err(Error::Write(e)) => assert!(matches!(e.kind, WriteErrorKind::EntityMerged { .. }), "{e}"),
        other => panic!("expected a write error, got {other:?}"),
    }
    assert_eq!(db.snapshot().version(), version);
    for op in [Op::RestoreEntity { entity: "auth".into() }, Op::Forget(engram::ForgetTarget::Entity("auth".into()))] {
        let mut b = WriteBatch::new("default");
        b.push(op);
        let err = db.write(&b).unwrap_err().to_string();
        assert!(err.contains("was merged into"), "{err}");
    }
    db.write(&unmerge("auth")).unwrap();
    db.write(&unmerge("authsvc")).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let k4 = ws.claim(ws.claim_id("k4").unwrap()).unwrap();
    assert_eq!((k4.subject, k4.object), (ws.entity_id("authsvc").unwrap(), ws.entity_id("auth").unwrap()));
}

#[test]
fn merges_survive_wal_replay_and_snapshots() {
    let tmp = tempfile::tempdir().unwrap();
    let c = clock();
    let open = || {
        let config = Config { clock: c.clone(), fsync: FsyncPolicy::Never, wal_preallocate_bytes: 512, ..Config::default() };
        Database::open_with(tmp.path(), config, Arc::new(engram_storage::OsVfs)).unwrap()
    };
    let db = open();
    seed(&db);
    db.write(&merge("authsvc", "auth")).unwrap();
    drop(db);
    // `engram check`'s invariants hold with a merge standing.
    assert_eq!(engram::check(&engram::OsVfs, tmp.path()).unwrap().claims, 4);
    let db = open();
    check_merged(&db);
    db.checkpoint().unwrap();
    drop(db);
    let db = open();
    check_merged(&db);
    let mut b = WriteBatch::new("default");
    b.upsert_entity("redis", "technology", "Redis").add_claim(AddClaim::new("auth", "caches_in", "redis").id("k5"));
    db.write(&b).unwrap();
    drop(db);
    let db = open();
    check_merged_plus_k5(&db);
    db.write(&unmerge("authsvc")).unwrap();
    let undone = adjacency(&db);
    db.checkpoint().unwrap();
    drop(db);
    let db = open();
    assert_eq!(adjacency(&db), undone);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    assert!(ws.merges_of(ws.entity_id("auth").unwrap())[0].undone_at.is_some());
    drop(snap);
    drop(db);
    let report = engram::check(&engram::OsVfs, tmp.path()).unwrap();
    assert_eq!((report.entities, report.claims), (5, 5));
}

#[test]
fn ingest_after_a_merge_resolves_the_old_names_to_the_survivor() {
    let db = Database::with_config(Config { clock: clock(), ..Config::default() });
    seed(&db);
    db.write(&merge("authsvc", "auth")).unwrap();
    let doc = r#"{"source": {"conversation_id": "conv-9", "message_id": "m-1"},
        "entities": [{"name": "auth-api", "type": "service"}, {"name": "Kafka", "type": "technology"}],
        "claims": [{"subject": "auth-api", "predicate": "publishes_to", "object": "Kafka", "confidence": 0.8,
                    "reasoning": "seen in the deploy log"}]}"#;
    let report = db.ingest(doc, &IngestOptions::default()).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let auth = ws.entity_id("auth").unwrap();
    let c = ws.claim_id(&report.claims[0].claim).unwrap();
    assert_eq!(ws.claim(c).unwrap().subject, auth);
    assert_eq!(ws.evidence_of(c).unwrap()[0].reasoning.as_deref(), Some("seen in the deploy log"));
}
