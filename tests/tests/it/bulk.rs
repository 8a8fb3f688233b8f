//! Bulk load: the same data loaded in bulk and through write batches reads back identically, and
//! a bad row is reported by section, row and field with nothing written.

use engram::{
    AddClaim, BulkClaims, BulkEntities, BulkLoad, ClaimRef, ClaimState, Database, DeclarePredicate, EntityId, KHopQuery, NeighborQuery, Op,
    TextColumn, Timestamp, UpsertEntity, Visibility, WriteBatch, WriteErrorKind,
};
use proptest::prelude::*;

const TYPES: [&str; 3] = ["service", "person", "concept"];
const PREDS: [&str; 3] = ["DEPENDS_ON", "owns", "subclass_of"];

#[derive(Clone, Debug)]
struct Data {
    entities: Vec<(usize, Vec<String>)>,
    claims: Vec<(usize, usize, usize, u8, u8)>,
}

fn data() -> impl Strategy<Value = Data> {
    (1usize..40).prop_flat_map(|n| {
        (
            proptest::collection::vec((0..TYPES.len(), prop_oneof![4 => aliases(0..3), 1 => aliases(28..36)]), n),
            proptest::collection::vec((0..n, 0..n, 0..PREDS.len(), 0u8..=10, 0u8..3), 0..120),
        )
            .prop_map(|(entities, claims)| Data { entities, claims })
    })
}

/// Aliases of one entity; `NAME` stands for a spelling of the entity's own name, and the short
/// ones repeat each other's keys (`a-b` and `AB`), so rows drop some of their aliases.
fn aliases(count: std::ops::Range<usize>) -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(prop_oneof!["[a-z]{1,4}( [A-Z][a-z]{0,3})?", "[ab]{1,2}|[AB]-[ab]", Just("NAME".to_owned())], count)
}

/// `aliases` with `NAME` spelled out for entity `i` (its name is `Entity {i}`).
fn spelled(i: usize, aliases: &[String]) -> Vec<String> {
    aliases.iter().map(|a| if a == "NAME" { format!("entity-{i}") } else { a.clone() }).collect()
}

fn bulk(d: &Data) -> BulkLoad {
    let mut e =
        BulkEntities { type_names: TYPES.iter().map(|s| (*s).to_owned()).collect(), alias_separator: '|', ..BulkEntities::default() };
    for (i, (t, aliases)) in d.entities.iter().enumerate() {
        e.ext_id.push(&format!("e{i}"));
        e.entity_type.push(*t as u16);
        e.name.push(&format!("Entity {i}"));
        e.aliases.push(&spelled(i, aliases).join("|"));
    }
    let mut c = BulkClaims { predicate_names: PREDS.iter().map(|s| (*s).to_owned()).collect(), ..BulkClaims::default() };
    for (i, (s, o, p, conf, st)) in d.claims.iter().enumerate() {
        c.ext_id.push(&format!("k{i}"));
        c.subject.push(*s as u32);
        c.object.push(*o as u32);
        c.predicate.push(*p as u16);
        c.confidence.push(f32::from(*conf) / 10.0);
        c.state.push(ClaimState::ALL[*st as usize]);
        c.valid_from.push(Timestamp::from_epoch_seconds(1_600_000_000 + i as i64));
        c.text.push(&format!("claim {i}"));
    }
    BulkLoad { workspace: "default".into(), predicates: vec![DeclarePredicate::new("subclass_of").transitive()], entities: e, claims: c }
}

fn batched(d: &Data) -> Database {
    let db = Database::in_memory();
    let mut b = WriteBatch::new("default");
    b.push(Op::DeclarePredicate(DeclarePredicate::new("subclass_of").transitive()));
    for (i, (t, aliases)) in d.entities.iter().enumerate() {
        b.push(Op::UpsertEntity(UpsertEntity {
            ext_id: format!("e{i}"),
            entity_type: TYPES[*t].into(),
            name: format!("Entity {i}"),
            aliases: spelled(i, aliases),
            properties: engram::Properties::default(),
        }));
    }
    for (i, (s, o, p, conf, st)) in d.claims.iter().enumerate() {
        b.add_claim(
            AddClaim::new(EntityId(*s as u32), PREDS[*p], EntityId(*o as u32))
                .id(&format!("k{i}"))
                .confidence(f32::from(*conf) / 10.0)
                .state(ClaimState::ALL[*st as usize])
                .valid(Some(Timestamp::from_epoch_seconds(1_600_000_000 + i as i64)), None)
                .text(&format!("claim {i}")),
        );
    }
    db.write(&b).unwrap();
    db
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(64), ..ProptestConfig::default() })]

    #[test]
    fn bulk_equals_batches(d in data()) {
        let b = batched(&d);
        // Borrowed, then owned (whose string columns the database takes over without a copy).
        for owned in [false, true] {
            let a = Database::in_memory();
            if owned {
                a.bulk_load_owned(bulk(&d)).unwrap();
            } else {
                a.bulk_load(&bulk(&d)).unwrap();
            }
            let (sa, sb) = (a.snapshot(), b.snapshot());
            let (wa, wb) = (sa.workspace("default").unwrap(), sb.workspace("default").unwrap());
            for i in 0..d.entities.len() {
                let e = EntityId(i as u32);
                let (ea, eb) = (wa.entity(e).unwrap(), wb.entity(e).unwrap());
                prop_assert_eq!((&ea.ext_id, &ea.name, &ea.entity_type, &ea.aliases), (&eb.ext_id, &eb.name, &eb.entity_type, &eb.aliases));
                for name in std::iter::once(ea.name.to_string()).chain(ea.aliases.iter().map(ToString::to_string)) {
                    prop_assert_eq!(wa.find_by_name(&name), wb.find_by_name(&name));
                }
                for v in [Visibility::default(), Visibility { states: engram::StateSet::ALL, ..Visibility::default() }] {
                    let q = NeighborQuery { visibility: v, ..NeighborQuery::default() };
                    prop_assert_eq!(wa.neighbors(e, &q).unwrap(), wb.neighbors(e, &q).unwrap());
                }
                let sorted = |db: &engram::WorkspaceView<'_>| {
                    let mut r = db.khop(&[e], &KHopQuery::depth(2)).unwrap().entities;
                    r.sort_by_key(|x| (x.depth, x.entity));
                    r
                };
                prop_assert_eq!(sorted(&wa), sorted(&wb));
                let anc = |db: &engram::WorkspaceView<'_>| {
                    let mut r = db.ancestors(e, "SUBCLASS_OF", &Visibility::default()).unwrap();
                    r.sort_by_key(|x| (x.1, x.0));
                    r
                };
                prop_assert_eq!(anc(&wa), anc(&wb));
            }
            for i in 0..d.claims.len() {
                let ca = wa.claim(wa.claim_id(&format!("k{i}")).unwrap()).unwrap();
                let cb = wb.claim(wb.claim_id(&format!("k{i}")).unwrap()).unwrap();
                prop_assert_eq!((ca.subject, &ca.predicate, ca.object, ca.confidence, ca.state, ca.valid_from, &ca.text),
                                (cb.subject, &cb.predicate, cb.object, cb.confidence, cb.state, cb.valid_from, &cb.text));
            }
            for s in ClaimState::ALL {
                prop_assert_eq!(wa.claims_with(Some("owns"), s), wb.claims_with(Some("owns"), s));
            }
            for t in TYPES {
                prop_assert_eq!(wa.entities_of_type(t), wb.entities_of_type(t));
            }
            prop_assert_eq!(sa.delta_edges(), 0);
            // Writes after a bulk load behave as usual, also into rows whose columns a load shares
            // between rows (no evidence yet, valid forever, no text).
            let mut w = WriteBatch::new("default");
            w.upsert_entity("late", "service", "Late").add_claim(AddClaim::new("late", "owns", "e0").id("late-claim"));
            if !d.claims.is_empty() {
                w.push(Op::AddEvidence(engram::AddEvidence { claim: Some(ClaimRef::Ext("k0".into())), snippet: Some("seen".into()), ..Default::default() }));
                w.push(Op::DeleteClaim { claim: ClaimRef::Ext(format!("k{}", d.claims.len() - 1)) });
            }
            a.write(&w).unwrap();
            let after = a.snapshot();
            let wa2 = after.workspace("default").unwrap();
            for i in 0..d.claims.len() {
                let c = wa2.claim_id(&format!("k{i}")).unwrap();
                let evidence: Vec<_> = wa2.evidence_of(c).unwrap().into_iter().map(|e| e.snippet).collect();
                prop_assert_eq!(evidence, if i == 0 { vec![Some("seen".into())] } else { vec![] });
                prop_assert_eq!(wa2.claim(c).unwrap().deleted, i + 1 == d.claims.len(), "claim {} deleted", i);
                prop_assert!(!wa.claim(c).unwrap().deleted);
                prop_assert_eq!(wa.evidence_of(c).unwrap().len(), 0, "the snapshot before the write keeps its rows");
            }
            let s2 = a.snapshot();
            let w2 = s2.workspace("default").unwrap();
            prop_assert!(w2.claim_id("late-claim").is_some());
            prop_assert_eq!(w2.find_by_name("late"), vec![w2.entity_id("late").unwrap()]);
        }
    }
}

fn small() -> BulkLoad {
    bulk(&Data { entities: vec![(0, vec!["x".into()]), (1, vec![])], claims: vec![(0, 1, 0, 5, 1), (1, 0, 1, 9, 0)] })
}

fn rejected(db: &Database, load: &BulkLoad) -> engram::BulkError {
    let before = db.snapshot();
    let e = db.bulk_load(load).unwrap_err().as_bulk().cloned().expect("a rejected load");
    let after = db.snapshot();
    assert_eq!(after.version(), before.version());
    assert_eq!(after.counts(), before.counts());
    e
}

#[test]
fn bad_rows_are_named_and_nothing_is_written() {
    let db = Database::in_memory();
    let mut l = small();
    l.claims.confidence[1] = 1.5;
    let e = rejected(&db, &l);
    assert_eq!((e.section, e.row, e.field, e.kind), ("claims", 1, "confidence", WriteErrorKind::ConfidenceOutOfRange(1.5)));
    let mut l = small();
    l.claims.object[0] = 99;
    let e = rejected(&db, &l);
    assert_eq!((e.section, e.row, e.field), ("claims", 0, "object"));
    let mut l = small();
    l.entities.ext_id = TextColumn::new();
    l.entities.ext_id.push("same");
    l.entities.ext_id.push("same");
    let e = rejected(&db, &l);
    assert_eq!((e.section, e.row, e.field, e.kind), ("entities", 1, "ext_id", WriteErrorKind::DuplicateId("same".into())));
    let mut l = small();
    l.entities.name = TextColumn::new();
    l.entities.name.push("ok");
    l.entities.name.push("");
    let e = rejected(&db, &l);
    assert_eq!((e.section, e.row, e.field, e.kind), ("entities", 1, "name", WriteErrorKind::Empty));
    let mut l = small();
    l.claims.confidence[0] = f32::NAN;
    assert_eq!(rejected(&db, &l).kind, WriteErrorKind::NotFinite);
    let mut l = small();
    l.claims.state.pop();
    assert_eq!(rejected(&db, &l).field, "state");
    // A successful load, then a second one into the same workspace is refused.
    db.bulk_load(&small()).unwrap();
    let e = rejected(&db, &small());
    assert_eq!(e.section, "workspace");
    assert_eq!(
        e.to_string(),
        "workspace row 0, field `workspace`: invalid value: bulk load needs an empty workspace; use write batches to add to one"
    );
    // Another workspace can be bulk loaded beside it; not one with a constraint (a load does
    // not check them), until it is dropped.
    db.create_workspace("second").unwrap();
    let mut l = small();
    l.workspace = "second".into();
    let p = engram::Params::new();
    db.query("second", "CREATE CONSTRAINT c FOR (n:t) REQUIRE n.name IS UNIQUE", &p).unwrap();
    assert!(rejected(&db, &l).to_string().contains("does not check constraints"));
    db.query("second", "DROP CONSTRAINT c", &p).unwrap();
    let info = db.bulk_load(&l).unwrap();
    assert_eq!((info.first_entity, info.entities, info.claims), (EntityId(2), 2, 2));
    let snap = db.snapshot();
    let ws = snap.workspace("second").unwrap();
    assert_eq!(ws.find_by_name("X"), vec![EntityId(2)]);
    assert_eq!(ws.neighbors(EntityId(2), &NeighborQuery::default()).unwrap().items.len(), 2);
    assert!(snap.workspace("default").unwrap().entity(EntityId(2)).is_none());
}

/// Thousands of claims without text, evidence or an end of validity: those columns share their
/// leaves between rows until a write copies one.
fn large_load(n: usize) -> BulkLoad {
    let mut e = BulkEntities { type_names: vec!["t".into()], ..BulkEntities::default() };
    for i in 0..n {
        e.ext_id.push(&format!("e{i}"));
        e.entity_type.push(0);
        e.name.push(&format!("Entity {i}"));
    }
    let mut c = BulkClaims { predicate_names: vec!["LINKS".into()], ..BulkClaims::default() };
    for i in 0..n {
        c.subject.push(i as u32);
        c.object.push(((i * 7) % n) as u32);
        c.predicate.push(0);
        c.confidence.push(0.5);
        c.state.push(ClaimState::Accepted);
    }
    BulkLoad { workspace: "default".into(), entities: e, claims: c, ..BulkLoad::default() }
}

/// Adds evidence to two claims and deletes a third, then checks that only those rows changed and
/// that the snapshot taken before the write still reads as before.
fn write_into_shared_rows(db: &Database, n: u32) {
    let before = db.snapshot();
    let mut w = WriteBatch::new("default");
    for k in [5, 2500] {
        w.push(Op::AddEvidence(engram::AddEvidence {
            claim: Some(ClaimRef::Id(engram::ClaimId(k))),
            snippet: Some(format!("about {k}")),
            ..Default::default()
        }));
    }
    w.push(Op::DeleteClaim { claim: ClaimRef::Id(engram::ClaimId(1500)) });
    db.write(&w).unwrap();
    let after = db.snapshot();
    let (was, now) = (before.workspace("default").unwrap(), after.workspace("default").unwrap());
    for k in 0..n {
        let id = engram::ClaimId(k);
        let snippets: Vec<_> = now.evidence_of(id).unwrap().into_iter().filter_map(|e| e.snippet).collect();
        let want: Vec<String> = if k == 5 || k == 2500 { vec![format!("about {k}")] } else { vec![] };
        assert_eq!(snippets.iter().map(ToString::to_string).collect::<Vec<_>>(), want, "claim {k}");
        let (old, new) = (was.claim(id).unwrap(), now.claim(id).unwrap());
        assert_eq!(new.deleted, k == 1500, "claim {k}");
        assert!(!old.deleted && was.evidence_of(id).unwrap().is_empty());
        assert_eq!((new.valid_until, new.text.as_deref()), (Timestamp::MAX, None));
    }
}

#[test]
fn writes_into_a_large_load_touch_only_their_rows() {
    let db = Database::in_memory();
    db.bulk_load_owned(large_load(3000)).unwrap();
    write_into_shared_rows(&db, 3000);
}

#[test]
fn a_reopened_load_shares_its_constant_columns_again() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = {
        let db = Database::open(dir.path()).unwrap();
        db.bulk_load_checkpointed(large_load(3000)).unwrap();
        db.snapshot().memory().claim_bytes
    };
    let db = Database::open(dir.path()).unwrap();
    // Decoded from the snapshot, the columns that hold one value share their leaves as they did
    // after the load (the snapshot itself stores every row).
    assert_eq!(db.snapshot().memory().claim_bytes, loaded);
    write_into_shared_rows(&db, 3000);
    drop(db);
    let db = Database::open(dir.path()).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    assert_eq!(ws.evidence_of(engram::ClaimId(2500)).unwrap().len(), 1);
    assert!(ws.claim(engram::ClaimId(1500)).unwrap().deleted);
}
