//! Tags: a claim extracted from a confidential message is confidential; one from a message tagged
//! `sensitivity: sensitive` does not exist for a principal without `see_sensitive`; a claim that
//! supersedes another keeps the strictest sensitivity; forgetting the evidence recomputes; row
//! policies read tags; and tags survive checkpoint, restart and export → import.

use engram::ingest::IngestOptions;
use engram::{Access, ClaimId, Database, Principal, StoredPolicy};
use serde_json::json;
use std::sync::Arc;

const WS: &str = "default";

fn ingest(db: &Database, doc: &serde_json::Value) {
    db.ingest(&doc.to_string(), &IngestOptions::default()).unwrap();
}

fn claim(db: &Database, ext: &str) -> ClaimId {
    db.snapshot().workspace(WS).unwrap().claim_id(ext).unwrap()
}

fn tag(db: &Database, ext: &str, key: &str) -> Option<String> {
    let snap = db.snapshot();
    let ws = snap.workspace(WS).unwrap();
    ws.claim_tags(ws.claim_id(ext)?)?.get(key).map(ToString::to_string)
}

fn reader(db: &Database) -> engram::Scope {
    db.scope(Arc::new(Principal::named("reader").grant(WS, Access::Read, false)))
}

/// Three messages: a confidential one, a sensitive one, and a public one that repeats the
/// confidential fact (a second piece of evidence for it).
fn seeded(db: &Database) {
    let doc = |msg: &str, level: &str, claims: serde_json::Value| {
        json!({
            "source": {"conversation_id": "conv-1", "message_id": msg, "tags": {"sensitivity": level, "origin": "slack"}},
            "entities": [{"name": "Ann", "type": "person", "properties": {"email": "ann@example.com"}}, {"name": "Acme", "type": "company"}],
            "claims": claims,
        })
    };
    ingest(
        db,
        &doc(
            "m1",
            "confidential",
            json!([{"subject": "Ann", "predicate": "works_at", "object": "Acme", "confidence": 0.95, "id": "job", "text": "Ann works at Acme"}]),
        ),
    );
    ingest(
        db,
        &doc(
            "m2",
            "sensitive",
            json!([{"subject": "Ann", "predicate": "earns", "object": "Acme", "confidence": 0.95, "id": "pay", "text": "Ann earns zebrapay at Acme", "tags": {"team": "hr"}}]),
        ),
    );
}

#[test]
fn claims_carry_their_messages_tags_the_strictest_sensitivity_winning() {
    let db = Database::in_memory();
    seeded(&db);
    assert_eq!(tag(&db, "job", "sensitivity").as_deref(), Some("confidential"));
    assert_eq!(tag(&db, "job", "origin").as_deref(), Some("slack"));
    assert_eq!(tag(&db, "pay", "sensitivity").as_deref(), Some("sensitive"));
    assert_eq!(tag(&db, "pay", "team").as_deref(), Some("hr"));
    // The entity whose properties the messages set inherits their strictest sensitivity.
    let snap = db.snapshot();
    let ws = snap.workspace(WS).unwrap();
    let ann = ws.find_by_name("Ann")[0];
    assert_eq!(ws.entity_tags(ann).unwrap().get("sensitivity").map(|s| &**s), Some("sensitive"));
    // A sensitive message's claim does not exist without see_sensitive: the flag is the tag.
    assert!(ws.claim(claim(&db, "pay")).unwrap().sensitive);
    let r = reader(&db);
    let rows = r.query(WS, "MATCH ()-[c]->() RETURN c.text", &engram::Params::new()).unwrap();
    assert_eq!(rows.rows.len(), 1, "{:?}", rows.rows);
    assert!(!format!("{:?}", rows.rows).contains("zebrapay"));
}

#[test]
fn a_tag_changed_on_the_message_reaches_its_claims_and_forgetting_evidence_recomputes() {
    let db = Database::in_memory();
    seeded(&db);
    // The same fact from a public message: the claim keeps the strictest of its sources.
    ingest(
        &db,
        &json!({
            "source": {"conversation_id": "conv-2", "message_id": "m9", "tags": {"sensitivity": "public"}},
            "entities": [{"name": "Ann", "type": "person"}, {"name": "Acme", "type": "company"}],
            "claims": [{"subject": "Ann", "predicate": "earns", "object": "Acme", "confidence": 0.9, "text": "Ann earns zebrapay at Acme"}],
        }),
    );
    assert_eq!(tag(&db, "pay", "sensitivity").as_deref(), Some("sensitive"));
    assert_eq!(reader(&db).workspace(WS).unwrap().catalog().claims, 1);
    // Forgetting the sensitive conversation leaves the public evidence: the claim is public now.
    let mut b = engram::WriteBatch::new(WS);
    b.push(engram::Op::Forget(engram::ForgetTarget::Conversation("conv-1".into())));
    db.write(&b).unwrap();
    assert_eq!(tag(&db, "pay", "sensitivity").as_deref(), Some("public"));
    assert_eq!(tag(&db, "job", "sensitivity"), None, "job had only conv-1's evidence: erased");
    assert_eq!(reader(&db).workspace(WS).unwrap().catalog().claims, 1, "pay is visible, job is gone");
    // Tagging a message afterwards reaches the claims with evidence from it.
    let mut b = engram::WriteBatch::new(WS);
    b.push(engram::Op::SetTags {
        target: engram::TagTarget::Message { conversation_id: "conv-2".into(), message_id: None },
        set: [("sensitivity".to_owned(), "sensitive".to_owned())].into(),
        remove: Vec::new(),
        inherit: false,
    });
    db.write(&b).unwrap();
    assert_eq!(tag(&db, "pay", "sensitivity").as_deref(), Some("sensitive"));
    assert_eq!(reader(&db).workspace(WS).unwrap().catalog().claims, 0);
    // A bad tag changes nothing and names itself.
    let mut b = engram::WriteBatch::new(WS);
    b.push(engram::Op::SetTags {
        target: engram::TagTarget::Claim("pay".into()),
        set: [("sensitivity".to_owned(), "secret".to_owned())].into(),
        remove: Vec::new(),
        inherit: false,
    });
    let e = db.write(&b).unwrap_err();
    assert!(e.to_string().contains("expected one of public, internal, confidential, sensitive"), "{e}");
}

#[test]
fn a_claim_that_supersedes_a_confidential_one_stays_confidential() {
    let db = Database::in_memory();
    seeded(&db);
    ingest(
        &db,
        &json!({
            "source": {"conversation_id": "conv-3", "message_id": "m1", "tags": {"sensitivity": "public"}},
            "entities": [{"name": "Ann", "type": "person"}, {"name": "Globex", "type": "company"}],
            "claims": [{"subject": "Ann", "predicate": "works_at", "object": "Globex", "confidence": 0.95, "id": "job2",
                        "text": "Ann moved to Globex", "relation": {"contradicts": "job"}}],
        }),
    );
    let snap = db.snapshot();
    let ws = snap.workspace(WS).unwrap();
    assert_eq!(ws.claim(claim(&db, "job")).unwrap().superseded_by, Some(claim(&db, "job2")));
    assert_eq!(tag(&db, "job2", "sensitivity").as_deref(), Some("confidential"));
}

#[test]
fn row_policies_read_tags() {
    let db = Database::in_memory();
    seeded(&db);
    let policy = StoredPolicy {
        target: "claims".into(),
        roles: vec!["contractor".into()],
        predicate: "c.tags.sensitivity IN ['public', 'internal'] OR c.tags.sensitivity IS NULL".into(),
    };
    db.put_policy(WS, "no-confidential", policy).unwrap();
    let p = Arc::new(Principal::named("cy").grant(WS, Access::Read, true).with_role("contractor"));
    assert_eq!(db.scope(p).workspace(WS).unwrap().catalog().claims, 0);
    let p = Arc::new(Principal::named("dee").grant(WS, Access::Read, true));
    assert_eq!(db.scope(p).workspace(WS).unwrap().catalog().claims, 2);
}

#[test]
fn tags_survive_checkpoint_restart_and_export_import() {
    let dir = tempfile::tempdir().unwrap();
    let exported = {
        let db = Database::open(dir.path()).unwrap();
        seeded(&db);
        db.checkpoint().unwrap();
        let mut b = engram::WriteBatch::new(WS);
        b.push(engram::Op::SetTags {
            target: engram::TagTarget::Claim("job".into()),
            set: [("reviewed".to_owned(), "yes".to_owned())].into(),
            remove: Vec::new(),
            inherit: false,
        });
        db.write(&b).unwrap();
        engram::jsonl::export(&db.snapshot())
    };
    let db = Database::open(dir.path()).unwrap();
    assert_eq!(tag(&db, "job", "sensitivity").as_deref(), Some("confidential"), "from the snapshot");
    assert_eq!(tag(&db, "job", "reviewed").as_deref(), Some("yes"), "from the log");
    assert_eq!(tag(&db, "pay", "sensitivity").as_deref(), Some("sensitive"));
    db.checkpoint().unwrap();
    drop(db);
    let db = Database::open(dir.path()).unwrap();
    assert_eq!(tag(&db, "job", "reviewed").as_deref(), Some("yes"), "from the second snapshot");
    assert!(exported.iter().any(|l| l.contains("\"kind\":\"message\"") && l.contains("confidential")), "{exported:?}");
    let copy = Database::in_memory();
    engram::jsonl::import(&copy, &exported.join("\n"), "export.jsonl").unwrap();
    for (c, k, v) in
        [("job", "sensitivity", "confidential"), ("job", "reviewed", "yes"), ("pay", "sensitivity", "sensitive"), ("pay", "team", "hr")]
    {
        assert_eq!(tag(&copy, c, k).as_deref(), Some(v), "{c} {k}");
    }
    assert_eq!(engram::jsonl::export(&copy.snapshot()), exported, "export → import → export gives the same lines");
    assert_eq!(reader(&copy).workspace(WS).unwrap().catalog().claims, 1);
}
