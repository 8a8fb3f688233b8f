//! Embedding in the write path: texts without vectors are embedded in the same atomic commit,
//! vectors of another embedder or dimension are refused with a named error, and an embedding
//! failure writes nothing. Uses the hashing embedder and test embedders (no model files).

use engram::embed::{EmbedError, Embedder, HashEmbedder};
use engram::{AddClaim, Database, Error, Op, VectorTarget, WriteBatch};
use std::sync::Arc;

/// Hashing that fails on a marked text and counts the texts it is given.
struct Flaky(HashEmbedder, std::sync::atomic::AtomicUsize);

impl Flaky {
    fn new(dim: usize) -> Flaky {
        Flaky(HashEmbedder::new(dim), 0.into())
    }
}

impl Embedder for Flaky {
    fn name(&self) -> &'static str {
        "hash"
    }
    fn version(&self) -> &'static str {
        "1"
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.iter().any(|t| t.contains("POISON")) {
            return Err(EmbedError::Inference("the model refused `POISON`".into()));
        }
        self.1.fetch_add(texts.len(), std::sync::atomic::Ordering::Relaxed);
        self.0.embed(texts)
    }
}

fn batch() -> WriteBatch {
    let mut b = WriteBatch::new("default");
    b.upsert_entity("auth", "service", "AuthService").upsert_entity("kinesis", "technology", "Kinesis");
    b.add_claim(AddClaim::new("auth", "streams_events_with", "kinesis").text("AuthService streams events with Kinesis"));
    b.add_claim(AddClaim::new("auth", "uses", "kinesis"));
    b
}

#[test]
fn texts_without_vectors_are_embedded_in_the_same_commit() {
    let db = Database::in_memory();
    let hash = HashEmbedder::new(64);
    db.set_embedder(Arc::new(hash.clone())).unwrap();
    assert_eq!(db.settings().embedder.as_deref(), Some("hash/1/64"));
    let mut b = batch();
    // A client-supplied vector is kept, not replaced.
    let mine = vec![0.125f32; 64];
    b.push(Op::SetVector { target: VectorTarget::Entity("kinesis".into()), vector: mine.clone() });
    let info = db.write(&b).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let auth = ws.entity_id("auth").unwrap();
    assert_eq!(db.entity_vector(auth), Some(hash.embed_one("AuthService")));
    assert_eq!(db.entity_vector(ws.entity_id("kinesis").unwrap()), Some(mine));
    let claims = &info.created.claims;
    assert_eq!(db.claim_vector(claims[0]), Some(hash.embed_one("AuthService streams events with Kinesis")));
    assert_eq!(db.claim_vector(claims[1]), None, "no text, no vector");
    // Upserting a known entity again does not re-embed it (nor fail).
    let mut again = WriteBatch::new("default");
    again.upsert_entity("auth", "service", "AuthService");
    db.write(&again).unwrap();
    assert_eq!(db.embed_query("AuthService").unwrap(), Some(hash.embed_one("AuthService")));
}

#[test]
fn an_embedding_failure_writes_nothing() {
    let db = Database::in_memory();
    db.set_embedder(Arc::new(Flaky::new(32))).unwrap();
    let before = db.snapshot().version();
    let mut b = batch();
    b.upsert_entity("x", "thing", "POISON pill");
    let err = db.write(&b).unwrap_err();
    assert!(matches!(err, Error::Embed(_)), "{err}");
    assert!(err.to_string().contains("nothing written") && err.to_string().contains("POISON"), "{err}");
    assert_eq!(db.snapshot().version(), before);
    assert!(db.snapshot().workspace("default").unwrap().entity_id("auth").is_none());
}

#[test]
fn another_embedder_or_dimension_is_refused_by_name() {
    // Client vectors of dimension 32 first: an embedder of 64 dimensions is refused.
    let db = Database::in_memory();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("a", "t", "A").push(Op::SetVector { target: VectorTarget::Entity("a".into()), vector: vec![1.0; 32] });
    db.write(&b).unwrap();
    let err = db.set_embedder(Arc::new(HashEmbedder::new(64))).unwrap_err();
    assert!(matches!(&err, Error::EmbedderMismatch { stored, .. } if stored == "vectors of dimension 32"), "{err}");
    // Same dimension: accepted; a client vector of another dimension is still refused, nothing written.
    db.set_embedder(Arc::new(HashEmbedder::new(32))).unwrap();
    let before = db.snapshot().version();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("b", "t", "B").push(Op::SetVector { target: VectorTarget::Entity("b".into()), vector: vec![1.0; 16] });
    assert!(db.write(&b).is_err());
    assert_eq!(db.snapshot().version(), before);

    // The embedder is recorded in the folder: reopening with another one is refused.
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path()).unwrap();
        db.set_embedder(Arc::new(HashEmbedder::new(48))).unwrap();
        db.write(&batch()).unwrap();
    }
    let db = Database::open(dir.path()).unwrap();
    assert_eq!(db.settings().embedder.as_deref(), Some("hash/1/48"));
    let err = db.set_embedder(Arc::new(HashEmbedder::new(96))).unwrap_err();
    assert!(err.to_string().contains("hash/1/48") && err.to_string().contains("hash/1/96"), "{err}");
    db.set_embedder(Arc::new(HashEmbedder::new(48))).unwrap();
}

/// A text without words (an emoji, "…") has no hashed direction: it is stored without a vector
/// instead of failing the write, by `write` and by `ingest` alike, and a question without words
/// recalls without the semantic path.
#[test]
fn a_text_without_words_is_stored_without_a_vector() {
    let db = Database::in_memory();
    db.set_embedder(Arc::new(HashEmbedder::new(64))).unwrap();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("me", "person", "Ann").upsert_entity("dots", "thing", "…");
    b.add_claim(AddClaim::new("me", "said", "dots").id("smile").text("😊"));
    db.write(&b).unwrap();
    let doc = r#"{"source": {"conversation_id": "c1", "message_id": "m1"},
      "claims": [{"subject": "Ann", "predicate": "said", "object": "…", "confidence": 0.9, "text": "🙂 …"}]}"#;
    db.ingest(doc, &engram::ingest::IngestOptions::default()).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    assert_eq!(db.claim_vector(ws.claim_id("smile").unwrap()), None);
    assert_eq!(db.entity_vector(ws.entity_id("dots").unwrap()), None);
    assert!(db.entity_vector(ws.entity_id("me").unwrap()).is_some(), "a name with words has its vector");
    let said = ws.claims_with(Some("said"), engram::ClaimState::Accepted);
    assert_eq!(said.len(), 1, "the ingested claim is written");
    assert_eq!(db.claim_vector(said[0]), None);
    assert_eq!(db.embed_query("?!").unwrap(), None);
}

#[test]
fn ingest_embeds_mentions_and_claim_texts() {
    let db = Database::in_memory();
    let hash = HashEmbedder::new(64);
    db.set_embedder(Arc::new(hash.clone())).unwrap();
    let doc = r#"{"source": {"conversation_id": "c1", "message_id": "m1"},
      "entities": [{"name": "AuthService", "type": "service"}, {"name": "Kinesis", "type": "technology"}],
      "claims": [{"subject": "AuthService", "predicate": "streams_events_with", "object": "Kinesis", "confidence": 0.9,
                  "text": "AuthService streams events with Kinesis"}]}"#;
    db.ingest(doc, &engram::ingest::IngestOptions::default()).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let auth = ws.find_by_name("AuthService")[0];
    assert_eq!(db.entity_vector(auth), Some(hash.embed_one("AuthService")));
    let mut claim = ws.claims_with(Some("streams_events_with"), engram::ClaimState::Proposed);
    claim.extend(ws.claims_with(Some("streams_events_with"), engram::ClaimState::Accepted));
    assert_eq!(claim.len(), 1);
    assert_eq!(db.claim_vector(claim[0]), Some(hash.embed_one("AuthService streams events with Kinesis")));
}

/// An ingested claim without text is embedded by its statement (subject, predicate words,
/// object), so vector search finds a typed fact; a link (`mentions` without text) is not
/// embedded, and a claim with text keeps its text's vector.
#[test]
fn ingest_embeds_a_claim_without_text_by_its_statement() {
    let db = Database::in_memory();
    let hash = HashEmbedder::new(64);
    db.set_embedder(Arc::new(hash.clone())).unwrap();
    let doc = r#"{"source": {"conversation_id": "c1", "message_id": "m1"},
      "entities": [{"name": "AuthService", "type": "service"}, {"name": "Platform team", "type": "team"}],
      "claims": [{"subject": "Platform team", "predicate": "OWNS_SERVICE", "object": "AuthService", "confidence": 0.9},
                 {"subject": "AuthService", "predicate": "mentions", "object": "Platform team", "confidence": 0.9},
                 {"subject": "AuthService", "predicate": "dependsOn", "object": "Platform team", "confidence": 0.9, "text": "it needs them"}]}"#;
    db.ingest(doc, &engram::ingest::IngestOptions::default()).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let owns = ws.claim_id("c1/m1/0").unwrap();
    assert_eq!(db.claim_vector(owns), Some(hash.embed_one("Platform team owns service AuthService")));
    assert_eq!(db.claim_vector(ws.claim_id("c1/m1/1").unwrap()), None, "a link is not embedded");
    assert_eq!(db.claim_vector(ws.claim_id("c1/m1/2").unwrap()), Some(hash.embed_one("it needs them")));
    let q = hash.embed_one("who owns the AuthService service");
    let hits = ws.search_claim_vectors(&q, &engram::VectorOptions { k: 1, ..engram::VectorOptions::default() }).unwrap();
    assert_eq!(hits.first().map(|h| h.0), Some(owns));
}

/// A group of documents embeds each distinct text once (a speaker named in every document is
/// embedded once), and every mention and claim still gets its own text's vector.
#[test]
fn a_group_embeds_each_distinct_text_once() {
    let db = Database::in_memory();
    let counting = Arc::new(Flaky::new(32));
    db.set_embedder(counting.clone()).unwrap();
    let docs: Vec<_> = (0..10)
        .map(|i| {
            engram::ingest::parse(&format!(
                r#"{{"source": {{"conversation_id": "c", "message_id": "m{i}"}}, "entities": [{{"name": "Ann", "type": "person"}}, {{"name": "Topic {i}", "type": "topic"}}],
                    "claims": [{{"subject": "Ann", "predicate": "mentions", "object": "Topic {i}", "confidence": 0.9, "text": "Ann mentions topic {i}"}}]}}"#
            ))
            .unwrap()
        })
        .collect();
    for r in db.ingest_docs(docs, &engram::ingest::IngestOptions::default()).unwrap() {
        r.unwrap();
    }
    // "Ann" once, ten topics, ten claim texts.
    assert_eq!(counting.1.load(std::sync::atomic::Ordering::Relaxed), 21);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let hash = HashEmbedder::new(32);
    assert_eq!(db.entity_vector(ws.find_by_name("Ann")[0]), Some(hash.embed_one("Ann")));
    assert_eq!(db.entity_vector(ws.find_by_name("Topic 7")[0]), Some(hash.embed_one("Topic 7")));
    let c = ws.claim_id("c/m7/0").unwrap();
    assert_eq!(db.claim_vector(c), Some(hash.embed_one("Ann mentions topic 7")));
}
