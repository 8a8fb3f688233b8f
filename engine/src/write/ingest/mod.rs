//! The memory write path: ingest of an extractor's output (the `AI_EXTRACT` shape of the seed
//! article, extended with aliases, properties, text, validity, vectors and provenance) as one
//! atomic transaction, with entity resolution and the claim lifecycle.
//!
//! The document is parsed strictly (unknown fields are errors, every error names its JSON path),
//! then *planned* against the newest state under the writer lock: names resolve to entities
//! (normalised name or alias of the same type, then name-vector similarity, else a new entity),
//! each claim corroborates an identical current one (evidence added, confidence combined by
//! noisy-OR across conversations, PROPOSED → ACCEPTED past the threshold or on a second
//! conversation), supersedes the current value of a single-valued predicate (or, arriving out of
//! order, is stored as history), or is new. The plan is an ordinary `WriteBatch`: it is what the
//! WAL records, so replay gives the same result without re-planning.

//!
//! `mod.rs` holds the document and its parsing; `resolve` maps mentions to entities, `plan` turns
//! a document into a batch, `report` says what happened to each mention and claim.

mod conversation;
mod plan;
mod report;
mod resolve;

pub use conversation::{
    documents as conversation_documents, is_link, mentions, parse_conversation, Conversation, Turn, FOLLOWS, MENTIONS, SAID,
};
pub use plan::noisy_or;
pub(crate) use plan::plan;
pub use report::{ClaimResult, IngestReport, Outcome, Resolution, ResolvedBy};
pub(crate) use resolve::{vector_hints, VectorHint};

use crate::time::Timestamp;
use crate::value::Value;
use serde::Deserialize;
use std::sync::Arc;

/// An extraction document: one message's entities and claims.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IngestDoc {
    /// Target workspace (default `default`).
    #[serde(default = "default_workspace")]
    pub workspace: String,
    /// Where the extraction came from.
    #[serde(default)]
    pub source: Source,
    /// Predicate declarations (cardinality, half-life, transitivity, inverse).
    #[serde(default)]
    pub predicates: Vec<PredicateIn>,
    /// Entities mentioned.
    #[serde(default)]
    pub entities: Vec<EntityIn>,
    /// Claims extracted.
    #[serde(default)]
    pub claims: Vec<ClaimIn>,
}

fn default_workspace() -> String {
    crate::model::DEFAULT_WORKSPACE.to_owned()
}

/// Provenance of a document.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Conversation id.
    pub conversation_id: Option<String>,
    /// Message id (with the conversation: the idempotency key).
    pub message_id: Option<String>,
    /// Extraction model.
    pub model: Option<String>,
    /// Its version.
    pub model_version: Option<String>,
    /// When it was extracted (RFC 3339 or epoch seconds): the default `valid_from` of its claims.
    pub extracted_at: Option<String>,
    /// The source text.
    pub snippet: Option<String>,
    /// The message's tags (`key: value`): every claim with evidence from it carries them, and
    /// an entity whose properties it sets inherits them (`crate::tags`).
    #[serde(default)]
    pub tags: std::collections::BTreeMap<String, String>,
}

/// A predicate declaration.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PredicateIn {
    /// Name.
    pub name: String,
    /// `one` or `many` (default `many`).
    pub cardinality: Option<String>,
    /// Decay half-life in days.
    pub half_life_days: Option<f64>,
    /// Transitive (hierarchies).
    #[serde(default)]
    pub transitive: bool,
    /// The inverse predicate's name.
    pub inverse: Option<String>,
}

/// An entity mention.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityIn {
    /// Surface name.
    pub name: String,
    /// Type.
    #[serde(rename = "type")]
    pub entity_type: String,
    /// Other names.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Properties (JSON values: strings, numbers, booleans, null to remove).
    #[serde(default)]
    pub properties: serde_json::Map<String, serde_json::Value>,
    /// An external id to use if the entity is created.
    pub id: Option<String>,
    /// Name embedding (for resolution by similarity, and stored for a new entity).
    pub vector: Option<Vec<f32>>,
    /// More labels beside the type, as written (case kept), as the query language shows them.
    #[serde(default)]
    pub labels: Vec<String>,
    /// Tags of the entity (`key: value`).
    #[serde(default)]
    pub tags: std::collections::BTreeMap<String, String>,
}

/// A claim.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimIn {
    /// Subject name (an entity of the document or of the graph).
    pub subject: String,
    /// Predicate name.
    pub predicate: String,
    /// Object name.
    pub object: String,
    /// Extractor confidence in `[0, 1]`.
    pub confidence: f32,
    /// The extractor's reasoning (returned in the report).
    pub reasoning: Option<String>,
    /// Natural-language statement.
    pub text: Option<String>,
    /// Valid from (default: the source's `extracted_at`, else the commit time).
    pub valid_from: Option<String>,
    /// After this time the claim is no longer served (RFC 3339 or epoch seconds).
    pub expires_at: Option<String>,
    /// An external id to use if the claim is created.
    pub id: Option<String>,
    /// Text embedding.
    pub vector: Option<Vec<f32>>,
    /// The client's verdict about an existing claim: `{"corroborates" | "contradicts" | "refines": claim id}`.
    pub relation: Option<Relation>,
    /// Typed properties of a new claim (JSON values), shown by the query language.
    #[serde(default)]
    pub properties: serde_json::Map<String, serde_json::Value>,
    /// A new claim is sensitive: it does not exist for principals without `see_sensitive` (the
    /// tag `sensitivity: sensitive`).
    #[serde(default)]
    pub sensitive: bool,
    /// Tags of a new claim (`key: value`); its evidence's message adds the source's.
    #[serde(default)]
    pub tags: std::collections::BTreeMap<String, String>,
}

impl ClaimIn {
    /// What stands for a claim without text where one is embedded: its statement, subject,
    /// predicate words and object (`Platform team owns AuthService`), so vector search finds a
    /// typed fact by what it says. `None` for a claim with text (its text is embedded) and for a
    /// link (`model::is_link`: recall never returns one). Only ingest does this: a `WriteBatch`
    /// names entities by id, not by name, and its caller sends the vectors it wants.
    pub(crate) fn statement(&self) -> Option<String> {
        if self.text.is_some() || is_link(&self.predicate, None) {
            return None;
        }
        let mut words = String::new();
        crate::model::predicate_words(&self.predicate, &mut words);
        Some(format!("{} {} {}", self.subject, words.to_lowercase(), self.object))
    }
}

/// A verdict about an existing claim (the seed uses an LLM classifier; engram applies it).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum Relation {
    /// Same fact, another source: evidence and confidence go to the existing claim.
    Corroborates(String),
    /// The existing claim is no longer true: it is deprecated, superseded by the new one, its
    /// valid time ended.
    Contradicts(String),
    /// The new claim is a more precise version: the old one is deprecated and linked.
    Refines(String),
}

/// Thresholds of the write path.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IngestOptions {
    /// Combined confidence at which a claim becomes ACCEPTED; `None`: the workspace's stored
    /// `accept_confidence` setting, else 0.9.
    pub accept_confidence: Option<f32>,
    /// Cosine similarity of name vectors at which a mention resolves to an existing entity of
    /// the same type; `None`: the workspace's stored `resolve_similarity` setting, else 0.92.
    pub resolve_similarity: Option<f32>,
}

/// The thresholds an ingest runs with: its options over the workspace's stored settings over the
/// defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thresholds {
    /// See `IngestOptions::accept_confidence`.
    pub accept_confidence: f32,
    /// See `IngestOptions::resolve_similarity`.
    pub resolve_similarity: f32,
}

impl IngestOptions {
    /// The thresholds for workspace `ws` given the stored `settings`.
    pub fn thresholds(&self, settings: &crate::settings::Settings, ws: &str) -> Thresholds {
        Thresholds {
            accept_confidence: self.accept_confidence.or_else(|| settings.workspace_value(ws, "accept_confidence")).unwrap_or(0.9),
            resolve_similarity: self.resolve_similarity.or_else(|| settings.workspace_value(ws, "resolve_similarity")).unwrap_or(0.92),
        }
    }
}

pub use crate::error::IngestError;

fn err(path: impl Into<String>, message: impl Into<String>) -> IngestError {
    IngestError { path: path.into(), message: message.into() }
}

/// Deserializes `text`, naming the JSON path of the first bad value.
fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, IngestError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        // serde_json appends "at line L column C": keep it, it locates the value in the text.
        err(if path.is_empty() || path == "." { ".".to_owned() } else { path }, inner.to_string())
    })
}

/// Parses a document, naming the JSON path of the first bad value.
pub fn parse(text: &str) -> Result<IngestDoc, IngestError> {
    let doc: IngestDoc = from_json(text)?;
    validate(&doc)?;
    Ok(doc)
}

fn non_empty(path: String, s: &str) -> Result<(), IngestError> {
    if s.trim().is_empty() {
        return Err(err(path, "must not be empty"));
    }
    Ok(())
}

/// The checks serde cannot express.
fn validate(doc: &IngestDoc) -> Result<(), IngestError> {
    non_empty("workspace".into(), &doc.workspace)?;
    // The pair is the idempotency key: half a key, or an empty part, would make different
    // messages "duplicates" of each other.
    let (conv, msg) = (&doc.source.conversation_id, &doc.source.message_id);
    for (field, value) in [("source.conversation_id", conv), ("source.message_id", msg)] {
        if let Some(v) = value {
            non_empty(field.into(), v)?;
        }
    }
    match (conv, msg) {
        (Some(_), None) => return Err(err("source.message_id", "is missing: `conversation_id` and `message_id` come together")),
        (None, Some(_)) => return Err(err("source.conversation_id", "is missing: `conversation_id` and `message_id` come together")),
        _ => {}
    }
    if let Some(t) = &doc.source.extracted_at {
        Timestamp::parse(t).map_err(|e| err("source.extracted_at", e.to_string()))?;
    }
    let tags = |path: String, tags: &std::collections::BTreeMap<String, String>| -> Result<(), IngestError> {
        if tags.len() > crate::tags::TAGS_MAX {
            return Err(err(path, format!("more than TAGS_MAX = {} tags", crate::tags::TAGS_MAX)));
        }
        tags.iter().try_for_each(|(k, v)| crate::tags::check(k, v).map_err(|e| err(format!("{path}.{k}"), e)))
    };
    tags("source.tags".into(), &doc.source.tags)?;
    for (i, e) in doc.entities.iter().enumerate() {
        tags(format!("entities[{i}].tags"), &e.tags)?;
    }
    for (i, c) in doc.claims.iter().enumerate() {
        tags(format!("claims[{i}].tags"), &c.tags)?;
    }
    for (i, p) in doc.predicates.iter().enumerate() {
        non_empty(format!("predicates[{i}].name"), &p.name)?;
        if let Some(c) = &p.cardinality {
            if c != "one" && c != "many" {
                return Err(err(format!("predicates[{i}].cardinality"), format!("`{c}` is not `one` or `many`")));
            }
        }
        if p.half_life_days.is_some_and(|h| !h.is_finite() || h <= 0.0) {
            return Err(err(format!("predicates[{i}].half_life_days"), "must be a positive number of days"));
        }
    }
    for (i, e) in doc.entities.iter().enumerate() {
        non_empty(format!("entities[{i}].name"), &e.name)?;
        non_empty(format!("entities[{i}].type"), &e.entity_type)?;
        for (j, a) in e.aliases.iter().enumerate() {
            non_empty(format!("entities[{i}].aliases[{j}]"), a)?;
        }
        for (k, v) in &e.properties {
            json_value(v).ok_or_else(|| err(format!("entities[{i}].properties.{k}"), "must be a string, number, boolean or null"))?;
        }
    }
    for (i, c) in doc.claims.iter().enumerate() {
        non_empty(format!("claims[{i}].subject"), &c.subject)?;
        non_empty(format!("claims[{i}].predicate"), &c.predicate)?;
        non_empty(format!("claims[{i}].object"), &c.object)?;
        if !c.confidence.is_finite() || !(0.0..=1.0).contains(&c.confidence) {
            return Err(err(format!("claims[{i}].confidence"), format!("{} is outside 0..=1", c.confidence)));
        }
        if let Some(t) = &c.valid_from {
            Timestamp::parse(t).map_err(|e| err(format!("claims[{i}].valid_from"), e.to_string()))?;
        }
        if let Some(t) = &c.expires_at {
            Timestamp::parse(t).map_err(|e| err(format!("claims[{i}].expires_at"), e.to_string()))?;
        }
    }
    Ok(())
}

fn json_value(v: &serde_json::Value) -> Option<Value> {
    match v {
        serde_json::Value::Null => Some(Value::Null),
        serde_json::Value::Bool(b) => Some(Value::Bool(*b)),
        serde_json::Value::Number(n) => n.as_i64().map(Value::Int).or_else(|| n.as_f64().map(Value::Float)),
        serde_json::Value::String(s) => Some(Value::Str(Arc::from(s.as_str()))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::resolve::{best_by_vector, Stale};
    use super::*;
    use crate::ids::EntityId;
    use crate::write::batch::{Op, WriteBatch};
    use crate::Database;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    /// A hint computed on an older snapshot answers exactly like a full search on the newest
    /// state — with entities added, deleted or of another type since — or declines to answer.
    #[test]
    fn vector_hints_answer_like_a_full_search_on_the_newest_state() {
        let db = Database::in_memory();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let rows: Vec<Vec<f32>> = (0..60).map(|_| unit(&(0..8).map(|_| next()).collect::<Vec<_>>())).collect();
        let mut b = WriteBatch::new("default");
        for (i, row) in rows.iter().enumerate().take(50) {
            b.upsert_entity(&format!("s{i}"), "service", &format!("svc {i}")).set_entity_vector(format!("s{i}").as_str(), row.clone());
        }
        b.upsert_entity("bare", "service", "no vector yet");
        db.write(&b).unwrap();
        let v: Vec<f32> = unit(&rows[7].iter().enumerate().map(|(i, x)| x + if i == 0 { 0.05 } else { 0.0 }).collect::<Vec<_>>());
        let doc = IngestDoc {
            entities: vec![
                EntityIn { name: "something new".into(), entity_type: "service".into(), vector: Some(v.clone()), ..EntityIn::default() },
                EntityIn { name: "svc 3".into(), entity_type: "service".into(), vector: Some(v.clone()), ..EntityIn::default() },
            ],
            ..IngestDoc::default()
        };
        let snap = db.snapshot();
        let hints = vector_hints(&snap.workspace("default").unwrap(), &doc);
        drop(snap);
        assert!(hints[1].is_none(), "an exact name needs no search");
        let hint = hints[0].clone().unwrap();
        let s = |i: usize| EntityId(i as u32);
        let check = |db: &Database, want: Option<EntityId>| {
            let snap = db.snapshot();
            let view = snap.workspace("default").unwrap();
            let full = best_by_vector(&view, &v, "service");
            assert_eq!(full.map(|b| b.0), want);
            hint.refine(&view, &v, "service").map(|r| assert_eq!(r, full, "the hint disagrees with a full search"))
        };
        assert!(check(&db, Some(s(7))).is_ok());
        // A closer entity of the same type arrives, and an identical one of another type.
        let mut b = WriteBatch::new("default");
        b.upsert_entity("close", "service", "close one").set_entity_vector("close", v.clone());
        b.upsert_entity("other", "person", "other type").set_entity_vector("other", v.clone());
        db.write(&b).unwrap();
        assert!(check(&db, Some(s(51))).is_ok());
        // It is deleted again: the hint's own best answers.
        let mut b = WriteBatch::new("default");
        b.push(Op::DeleteEntity { entity: "close".into() });
        db.write(&b).unwrap();
        assert!(check(&db, Some(s(7))).is_ok());
        // An older entity gets a vector: the hint declines (it could be the best).
        let mut b = WriteBatch::new("default");
        b.set_entity_vector("bare", rows[55].clone());
        db.write(&b).unwrap();
        assert_eq!(check(&db, Some(s(7))), Err(Stale));
        // The hint's best is deleted: it declines too.
        let fresh = vector_hints(&db.snapshot().workspace("default").unwrap(), &doc)[0].clone().unwrap();
        let mut b = WriteBatch::new("default");
        b.push(Op::DeleteEntity { entity: "s7".into() });
        db.write(&b).unwrap();
        let snap = db.snapshot();
        assert_eq!(fresh.refine(&snap.workspace("default").unwrap(), &v, "service"), Err(Stale));
    }
}
