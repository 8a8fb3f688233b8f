//! One test per validation rule of a write batch. Each batch starts with valid operations and
//! fails at a known index; the test asserts the typed error (index, operation, field, kind) and
//! that the database is exactly as it was: same version, same rows.

use std::fmt::Write;

use engram::{
    AddClaim, AddEvidence, ClaimRef, ClaimState, Config, Database, DeclarePredicate, EntityId, EntityRef, Limits, Op, Timestamp,
    UpsertEntity, Value, WriteBatch, WriteError, WriteErrorKind,
};

/// A database with two entities and one claim in `default`, and one entity in `other`.
fn setup() -> Database {
    let db = Database::in_memory();
    db.create_workspace("other").unwrap();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("a", "service", "Alpha")
        .upsert_entity("b", "service", "Beta")
        .add_claim(AddClaim::new("a", "depends_on", "b").id("c1"));
    db.write(&b).unwrap();
    let mut o = WriteBatch::new("other");
    o.upsert_entity("x", "service", "Xray");
    db.write(&o).unwrap();
    db
}

/// Everything observable about the database, for "nothing changed" checks.
fn fingerprint(db: &Database) -> String {
    let snap = db.snapshot();
    let (ne, nc, nv) = snap.counts();
    let mut out = format!("v{} {ne} {nc} {nv}\n", snap.version());
    for w in snap.workspaces() {
        let ws = snap.workspace(&w.name).unwrap();
        for e in 0..ne {
            writeln!(out, "{:?}", ws.entity(EntityId(e as u32))).unwrap();
        }
        for c in 0..nc {
            writeln!(out, "{:?}", ws.claim(engram::ClaimId(c as u32))).unwrap();
        }
        writeln!(out, "{:?}", ws.predicate("depends_on")).unwrap();
    }
    out
}

/// Writes a batch of `ops` after one valid upsert, expecting failure at `ops[fail_at]`.
fn reject(db: &Database, workspace: &str, ops: Vec<Op>) -> WriteError {
    let before = fingerprint(db);
    let mut b = WriteBatch::new(workspace);
    b.upsert_entity("fresh", "service", "Fresh Entity");
    for op in ops {
        b.push(op);
    }
    let err = db.write(&b).expect_err("the batch must be rejected").as_write().cloned().expect("a rejected batch");
    assert_eq!(fingerprint(db), before, "a rejected batch changed the database");
    assert!(db.snapshot().workspace("default").unwrap().entity_id("fresh").is_none());
    err
}

fn claim(s: &str, o: &str) -> AddClaim {
    AddClaim::new(s, "depends_on", o)
}

#[test]
fn unknown_workspace() {
    let db = setup();
    let before = fingerprint(&db);
    let err = db.write(&WriteBatch::new("nope")).unwrap_err().as_write().cloned().unwrap();
    assert_eq!((err.op_index, err.field), (0, "workspace"));
    assert_eq!(err.kind, WriteErrorKind::UnknownWorkspace("nope".into()));
    assert_eq!(fingerprint(&db), before);
}

#[test]
fn unknown_entity() {
    let db = setup();
    let err = reject(&db, "default", vec![Op::AddClaim(claim("a", "ghost"))]);
    assert_eq!((err.op_index, err.op, err.field), (1, "add_claim", "object"));
    assert_eq!(err.kind, WriteErrorKind::UnknownEntity("ghost".into()));
    let err = reject(&db, "default", vec![Op::AddClaim(AddClaim::new(EntityId(999), "x", EntityRef::from("a")))]);
    assert_eq!((err.op_index, err.field), (1, "subject"));
    assert!(matches!(err.kind, WriteErrorKind::UnknownEntity(_)));
}

#[test]
fn cross_workspace_entity() {
    let db = setup();
    let x = db.snapshot().workspace("other").unwrap().entity_id("x").unwrap();
    let err = reject(&db, "default", vec![Op::AddClaim(AddClaim::new("a", "depends_on", x))]);
    assert_eq!((err.op_index, err.field), (1, "object"));
    assert_eq!(err.kind, WriteErrorKind::CrossWorkspaceEntity(x));
    // By external id the other workspace's entity is simply unknown here.
    let err = reject(&db, "default", vec![Op::AddClaim(claim("a", "x"))]);
    assert_eq!(err.kind, WriteErrorKind::UnknownEntity("x".into()));
}

#[test]
fn cross_workspace_claim() {
    let db = setup();
    let c1 = db.snapshot().workspace("default").unwrap().claim_id("c1").unwrap();
    let err = reject(&db, "other", vec![Op::DeleteClaim { claim: ClaimRef::Id(c1) }]);
    assert_eq!((err.op_index, err.op, err.field), (1, "delete_claim", "claim"));
    assert_eq!(err.kind, WriteErrorKind::CrossWorkspaceClaim(c1));
}

#[test]
fn unknown_claim() {
    let db = setup();
    let err = reject(&db, "default", vec![Op::AcceptClaim { claim: "nope".into() }]);
    assert_eq!((err.op_index, err.field), (1, "claim"));
    assert_eq!(err.kind, WriteErrorKind::UnknownClaim("nope".into()));
}

#[test]
fn confidence_outside_unit_interval() {
    let db = setup();
    for bad in [1.5f32, -0.1] {
        let err = reject(&db, "default", vec![Op::AddClaim(claim("a", "b").confidence(bad))]);
        assert_eq!((err.op_index, err.field), (1, "confidence"));
        assert_eq!(err.kind, WriteErrorKind::ConfidenceOutOfRange(bad));
    }
    let err = reject(&db, "default", vec![Op::SetConfidence { claim: "c1".into(), confidence: 2.0 }]);
    assert_eq!((err.op, err.field), ("set_confidence", "confidence"));
    let err = reject(
        &db,
        "default",
        vec![Op::AddEvidence(AddEvidence { claim: Some("c1".into()), raw_confidence: Some(7.0), ..AddEvidence::default() })],
    );
    assert_eq!((err.op, err.field), ("add_evidence", "raw_confidence"));
}

#[test]
fn nan_is_rejected() {
    let db = setup();
    let err = reject(&db, "default", vec![Op::AddClaim(claim("a", "b").confidence(f32::NAN))]);
    assert_eq!((err.field, err.kind), ("confidence", WriteErrorKind::NotFinite));
    let err = reject(&db, "default", vec![Op::SetProperty { entity: "a".into(), key: "score".into(), value: Value::Float(f64::NAN) }]);
    assert_eq!((err.op, err.field, err.kind), ("set_property", "properties", WriteErrorKind::NotFinite));
    let mut d = DeclarePredicate::new("decays");
    d.half_life_days = Some(f64::NAN);
    let err = reject(&db, "default", vec![Op::DeclarePredicate(d)]);
    assert_eq!((err.field, err.kind), ("half_life_days", WriteErrorKind::NotFinite));
}

#[test]
fn valid_until_before_valid_from() {
    let db = setup();
    let t = Timestamp::parse("2026-03-01T00:00:00Z").unwrap();
    let err = reject(&db, "default", vec![Op::AddClaim(claim("a", "b").valid(Some(t), Some(t.plus_seconds(-1))))]);
    assert_eq!((err.op_index, err.field, err.kind), (1, "valid_until", WriteErrorKind::InvalidInterval));
    // An empty interval is rejected too.
    let err = reject(&db, "default", vec![Op::AddClaim(claim("a", "b").valid(Some(t), Some(t)))]);
    assert_eq!(err.kind, WriteErrorKind::InvalidInterval);
}

#[test]
fn duplicate_id() {
    let db = setup();
    let err = reject(&db, "default", vec![Op::AddClaim(claim("a", "b").id("c1"))]);
    assert_eq!((err.op_index, err.field, err.kind), (1, "ext_id", WriteErrorKind::DuplicateId("c1".into())));
    // Within one batch.
    let err = reject(&db, "default", vec![Op::AddClaim(claim("a", "b").id("new")), Op::AddClaim(claim("b", "a").id("new"))]);
    assert_eq!((err.op_index, err.kind), (2, WriteErrorKind::DuplicateId("new".into())));
    // The same id in another workspace is fine.
    let mut ok = WriteBatch::new("other");
    ok.upsert_entity("y", "t", "Y").add_claim(AddClaim::new("x", "r", "y").id("c1"));
    db.write(&ok).unwrap();
}

#[test]
fn empty_name() {
    let db = setup();
    let err = reject(
        &db,
        "default",
        vec![Op::UpsertEntity(UpsertEntity {
            ext_id: "n".into(),
            entity_type: "t".into(),
            name: "   ".into(),
            aliases: vec![],
            properties: engram::Properties::default(),
        })],
    );
    assert_eq!((err.op_index, err.op, err.field, err.kind), (1, "upsert_entity", "name", WriteErrorKind::Empty));
    let err = reject(&db, "default", vec![Op::RenameEntity { entity: "a".into(), name: String::new() }]);
    assert_eq!((err.op, err.field, err.kind), ("rename_entity", "name", WriteErrorKind::Empty));
    let err = reject(&db, "default", vec![Op::AddClaim(AddClaim::new("a", "", "b"))]);
    assert_eq!((err.field, err.kind), ("predicate", WriteErrorKind::Empty));
}

#[test]
fn oversized_strings() {
    let db = setup();
    let limits = Limits::default();
    let long_name = "x".repeat(limits.name_bytes_max + 1);
    let err = reject(&db, "default", vec![Op::AddAlias { entity: "a".into(), alias: long_name.clone() }]);
    assert_eq!(err.field, "alias");
    assert_eq!(err.kind, WriteErrorKind::TooLong { len: long_name.len(), limit: limits.name_bytes_max, limit_name: "name_bytes_max" });
    let long_text = "y".repeat(limits.text_bytes_max + 1);
    let err = reject(&db, "default", vec![Op::AddClaim(claim("a", "b").text(&long_text))]);
    assert_eq!(err.field, "text");
    assert!(matches!(err.kind, WriteErrorKind::TooLong { limit_name: "text_bytes_max", .. }));
}

#[test]
fn too_many_items() {
    let config = Config { limits: Limits { aliases_max: 2, batch_ops_max: 3, ..Limits::default() }, ..Config::default() };
    let db = Database::with_config(config);
    let mut b = WriteBatch::new("default");
    b.upsert_entity("a", "t", "A");
    db.write(&b).unwrap();
    let before = fingerprint(&db);
    let mut b = WriteBatch::new("default");
    for alias in ["one", "two", "three"] {
        b.push(Op::AddAlias { entity: "a".into(), alias: alias.into() });
    }
    let err = db.write(&b).unwrap_err().as_write().cloned().unwrap();
    assert_eq!((err.op_index, err.field), (2, "aliases"));
    assert!(matches!(err.kind, WriteErrorKind::TooMany { limit: 2, limit_name: "aliases_max", .. }));
    assert_eq!(fingerprint(&db), before);
    let mut b = WriteBatch::new("default");
    for i in 0..4 {
        b.upsert_entity(&format!("n{i}"), "t", "N");
    }
    let err = db.write(&b).unwrap_err().as_write().cloned().unwrap();
    assert!(matches!(err.kind, WriteErrorKind::TooMany { count: 4, limit: 3, limit_name: "batch_ops_max" }));
    assert_eq!(fingerprint(&db), before);
}

#[test]
fn lifecycle_only_moves_forward() {
    let db = setup();
    let mut b = WriteBatch::new("default");
    b.push(Op::Deprecate { claim: "c1".into(), superseded_by: None });
    db.write(&b).unwrap();
    let err = reject(&db, "default", vec![Op::AcceptClaim { claim: "c1".into() }]);
    assert_eq!(err.kind, WriteErrorKind::IllegalTransition { from: ClaimState::Deprecated, to: ClaimState::Accepted });
    let err = reject(&db, "default", vec![Op::Deprecate { claim: "c1".into(), superseded_by: None }]);
    assert!(matches!(err.kind, WriteErrorKind::IllegalTransition { .. }));
}

#[test]
fn claim_cannot_supersede_itself() {
    let db = setup();
    let err = reject(&db, "default", vec![Op::Deprecate { claim: "c1".into(), superseded_by: Some("c1".into()) }]);
    assert_eq!((err.field, err.kind), ("superseded_by", WriteErrorKind::SelfSupersession));
}

#[test]
fn claims_about_deleted_entities_are_refused() {
    let db = setup();
    let mut b = WriteBatch::new("default");
    b.push(Op::DeleteEntity { entity: "b".into() });
    db.write(&b).unwrap();
    let b_id = db.snapshot().workspace("default").unwrap().entity_id("b").unwrap();
    let err = reject(&db, "default", vec![Op::AddClaim(claim("a", "b"))]);
    assert_eq!((err.field, err.kind), ("object", WriteErrorKind::EntityDeleted(b_id)));
}

#[test]
fn error_message_names_index_and_field() {
    let db = setup();
    let err = reject(&db, "default", vec![Op::AddClaim(claim("a", "b").confidence(3.0))]);
    assert_eq!(err.to_string(), "operation 1 (add_claim), field `confidence`: 3 is outside 0..=1");
}
