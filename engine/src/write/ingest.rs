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

use crate::ids::{ClaimId, EntityId};
use crate::index::bitmap::IdSet;
use crate::index::graph::Direction;
use crate::model::{Cardinality, ClaimState};
use crate::normalize::{name_key, vocabulary_key};
use crate::read::filter::EdgeFilter;
use crate::read::neighbors::NeighborQuery;
use crate::read::view::WorkspaceView;
use crate::search::semantic::{Metric, VectorOptions};
use crate::state::DELETED;
use crate::time::Timestamp;
use crate::value::{Properties, Value};
use crate::write::batch::{AddClaim, AddEvidence, ClaimRef, DeclarePredicate, EntityRef, Op, UpsertEntity, VectorTarget, WriteBatch};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
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

/// How a mention was resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "how")]
pub enum ResolvedBy {
    /// Its normalised name is the entity's canonical name.
    Name,
    /// Its normalised name is one of the entity's aliases.
    Alias,
    /// Its name vector is this similar to the entity's (the surface form became an alias).
    Vector {
        /// Cosine similarity.
        similarity: f32,
    },
    /// An earlier mention in the same document.
    Document,
    /// No match: a new entity.
    Created,
}

/// One mention's resolution.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Resolution {
    /// The surface name.
    pub name: String,
    /// The entity's external id.
    pub entity: String,
    /// How.
    #[serde(flatten)]
    pub how: ResolvedBy,
}

/// What happened to one claim.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Outcome {
    /// A new claim.
    Created {
        /// Its initial state.
        state: ClaimState,
    },
    /// Evidence added to an existing claim.
    Corroborated {
        /// Its combined confidence.
        confidence: f32,
        /// Whether this moved it to ACCEPTED.
        accepted: bool,
    },
    /// A new claim that deprecated the earlier value(s) of a single-valued predicate or, by the
    /// client's verdict, a contradicted or refined claim.
    Superseded {
        /// The claims it superseded.
        old: Vec<String>,
    },
    /// An out-of-order claim (older than the current value): stored as history.
    History {
        /// The newer claim that supersedes it.
        newer: String,
    },
}

/// One claim's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClaimResult {
    /// The claim's external id.
    pub claim: String,
    /// What happened.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// The extractor's reasoning, as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
}

/// The result of an ingest.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct IngestReport {
    /// This message was ingested before: nothing was written.
    pub duplicate: bool,
    /// The commit's version (`None` when nothing was written).
    pub version: Option<u64>,
    /// Each entity mention, in document order.
    pub entities: Vec<Resolution>,
    /// Each claim, in document order.
    pub claims: Vec<ClaimResult>,
}

/// Parses a document, naming the JSON path of the first bad value.
pub fn parse(text: &str) -> Result<IngestDoc, IngestError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let doc: IngestDoc = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        // serde_json appends "at line L column C": keep it, it locates the value in the text.
        err(if path.is_empty() || path == "." { ".".to_owned() } else { path }, inner.to_string())
    })?;
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
    if let Some(t) = &doc.source.extracted_at {
        Timestamp::parse(t).map_err(|e| err("source.extracted_at", e.to_string()))?;
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

/// Noisy-OR: the chance that at least one of two independent sources is right.
pub fn noisy_or(a: f32, b: f32) -> f32 {
    1.0 - (1.0 - a) * (1.0 - b)
}

/// Plans a document against `view` (the newest state, under the writer lock): the batch to
/// commit and the report. `Ok(None)` when the message was ingested before.
#[allow(clippy::too_many_lines)] // Reason: one pass in document order (predicates, entities, claims); splitting it would thread eight shared maps through helpers.
pub(crate) fn plan(
    view: &WorkspaceView<'_>,
    doc: &IngestDoc,
    opts: IngestOptions,
    now: Timestamp,
    hints: &[Option<VectorHint>],
) -> Result<Option<(WriteBatch, IngestReport)>, IngestError> {
    let st = view.st;
    let opts = opts.thresholds(&st.settings, &doc.workspace);
    let source_key = doc.source.conversation_id.as_deref().zip(doc.source.message_id.as_deref());
    if let Some((conv, msg)) = source_key {
        if !doc.claims.is_empty() && st.find_evidence_ext(view.ws, &evidence_id(conv, msg, 0)).is_some() {
            return Ok(None);
        }
    }
    let mut b = WriteBatch::new(&doc.workspace);
    let mut report = IngestReport::default();
    let extracted_at = doc.source.extracted_at.as_deref().and_then(|t| Timestamp::parse(t).ok());

    // Predicates: declared ones override; the rest keep their stored definition.
    let mut single: HashMap<String, bool> = HashMap::new();
    for p in &doc.predicates {
        let one = p.cardinality.as_deref() == Some("one");
        single.insert(vocabulary_key(&p.name), one);
        b.push(Op::DeclarePredicate(DeclarePredicate {
            name: p.name.clone(),
            cardinality: if one { Cardinality::One } else { Cardinality::Many },
            inverse: p.inverse.clone(),
            transitive: p.transitive,
            half_life_days: p.half_life_days,
        }));
    }

    // Entities: name key → the reference claims use.
    let mut names: HashMap<String, (EntityRef, Option<EntityId>)> = HashMap::new();
    for (i, e) in doc.entities.iter().enumerate() {
        let ty = vocabulary_key(&e.entity_type);
        let key = name_key(&e.name);
        if let Some((r, _)) = names.get(&key) {
            report.entities.push(Resolution { name: e.name.clone(), entity: ext_of(view, r), how: ResolvedBy::Document });
            continue;
        }
        let (reference, existing, how) = match resolve(view, e, &ty, opts, hints.get(i).and_then(Option::as_ref)) {
            // Resolved against the newest state under the writer lock: the dense id is exact and
            // spares the apply a lookup by external id per mention.
            Some((id, how)) => (EntityRef::Id(id), Some(id), how),
            None => {
                let ext = e.id.clone().unwrap_or_else(|| format!("{ty}:{key}"));
                if view.entity_id(&ext).is_some() {
                    return Err(err(format!("entities[{i}].id"), format!("`{ext}` names an entity of another type or name")));
                }
                (EntityRef::Ext(ext), None, ResolvedBy::Created)
            }
        };
        let mut props = Properties::new();
        for (k, v) in &e.properties {
            props.insert(Arc::from(k.as_str()), json_value(v).unwrap_or(Value::Null));
        }
        match existing {
            None => {
                let EntityRef::Ext(ext) = &reference else { unreachable!("created entities are named by external id") };
                b.push(Op::UpsertEntity(UpsertEntity {
                    ext_id: ext.clone(),
                    entity_type: e.entity_type.clone(),
                    name: e.name.clone(),
                    aliases: e.aliases.clone(),
                    properties: props,
                }));
                if let Some(v) = &e.vector {
                    b.push(Op::SetVector { target: VectorTarget::Entity(reference.clone()), vector: v.clone() });
                }
            }
            Some(id) => {
                let known = |a: &str| st.entities.has_key(id.0, &name_key(a));
                let mut aliases: Vec<String> = e.aliases.iter().filter(|a| !known(a)).cloned().collect();
                if !known(&e.name) {
                    aliases.push(e.name.clone());
                }
                for alias in aliases {
                    b.push(Op::AddAlias { entity: reference.clone(), alias });
                }
                for (k, v) in props {
                    b.push(Op::SetProperty { entity: reference.clone(), key: k.to_string(), value: v });
                }
                if let Some(v) = &e.vector {
                    if !st.vectors.entity.has(id.0) {
                        b.push(Op::SetVector { target: VectorTarget::Entity(reference.clone()), vector: v.clone() });
                    }
                }
            }
        }
        report.entities.push(Resolution { name: e.name.clone(), entity: ext_of(view, &reference), how });
        names.insert(key.clone(), (reference.clone(), existing));
        for a in &e.aliases {
            names.entry(name_key(a)).or_insert_with(|| (reference.clone(), existing));
        }
    }

    // Claims.
    let mut made: HashMap<(String, String, String), String> = HashMap::new();
    for (i, c) in doc.claims.iter().enumerate() {
        let end = |field: &str, name: &str| -> Result<(EntityRef, Option<EntityId>), IngestError> {
            if let Some(x) = names.get(&name_key(name)) {
                return Ok(x.clone());
            }
            match view.find_by_name(name).as_slice() {
                [one] => Ok((EntityRef::Id(*one), Some(*one))),
                [] => Err(err(format!("claims[{i}].{field}"), format!("`{name}` names no entity of the document or the graph"))),
                many => Err(err(
                    format!("claims[{i}].{field}"),
                    format!("`{name}` names {} entities; list it in `entities` with its type", many.len()),
                )),
            }
        };
        let (s_ref, s_id) = end("subject", &c.subject)?;
        let (o_ref, o_id) = end("object", &c.object)?;
        let pred = vocabulary_key(&c.predicate);
        let one = match single.get(&pred) {
            Some(one) => *one,
            None => st
                .catalog
                .predicates
                .get(&pred)
                .is_some_and(|p| st.catalog.predicate_def(view.ws, crate::ids::PredicateId(p)).cardinality == Cardinality::One),
        };
        let valid_from = c.valid_from.as_deref().and_then(|t| Timestamp::parse(t).ok()).or(extracted_at).unwrap_or(now);
        let evidence = |claim: ClaimRef| {
            Op::AddEvidence(AddEvidence {
                ext_id: source_key.map(|(conv, msg)| evidence_id(conv, msg, i)),
                claim: Some(claim),
                conversation_id: doc.source.conversation_id.clone(),
                message_id: doc.source.message_id.clone(),
                model: doc.source.model.clone(),
                model_version: doc.source.model_version.clone(),
                raw_confidence: Some(c.confidence),
                snippet: doc.source.snippet.clone(),
                observed_at: extracted_at,
                reasoning: c.reasoning.clone(),
            })
        };
        let reasoning = c.reasoning.clone();

        // The same fact, current: from the client's verdict, this document, or the graph.
        let verdict_target = match &c.relation {
            Some(Relation::Corroborates(id) | Relation::Contradicts(id) | Relation::Refines(id)) => {
                Some(view.claim_id(id).ok_or_else(|| err(format!("claims[{i}].relation"), format!("no claim `{id}` in this workspace")))?)
            }
            None => None,
        };
        let same = if let Some(Relation::Corroborates(_)) = &c.relation {
            verdict_target
        } else if c.relation.is_some() {
            None
        } else {
            current_claims(view, s_id, &pred, o_id).into_iter().next()
        };
        let triple = (ext_of(view, &s_ref), pred.clone(), ext_of(view, &o_ref));
        if c.relation.is_none() {
            if let Some(ext) = made.get(&triple) {
                // Repeated inside one document: one claim, one more piece of evidence.
                b.push(evidence(ClaimRef::Ext(ext.clone())));
                report.claims.push(ClaimResult {
                    claim: ext.clone(),
                    outcome: Outcome::Corroborated { confidence: c.confidence, accepted: false },
                    reasoning,
                });
                continue;
            }
        }
        if let Some(existing) = same {
            let (conf, accepted) = corroborate(view, existing, c.confidence, doc.source.conversation_id.as_deref(), opts);
            let r = ClaimRef::Id(existing);
            b.push(evidence(r.clone()));
            b.push(Op::SetConfidence { claim: r.clone(), confidence: conf });
            if accepted {
                b.push(Op::AcceptClaim { claim: r });
            }
            let ext = view.claim(existing).map(|x| x.ext_id.to_string()).unwrap_or_default();
            report.claims.push(ClaimResult { claim: ext, outcome: Outcome::Corroborated { confidence: conf, accepted }, reasoning });
            continue;
        }

        // A new claim.
        let ext = c.id.clone().unwrap_or_else(|| match source_key {
            Some((conv, msg)) => format!("{conv}/{msg}/{i}"),
            None => format!("ingest/{:016x}/{i}", xxhash_rust::xxh3::xxh3_64(format!("{now:?}{triple:?}").as_bytes())),
        });
        if view.claim_id(&ext).is_some() {
            return Err(err(format!("claims[{i}].id"), format!("claim `{ext}` already exists")));
        }
        let state = if c.confidence >= opts.accept_confidence { ClaimState::Accepted } else { ClaimState::Proposed };
        let mut add = AddClaim::new(s_ref.clone(), &c.predicate, o_ref.clone()).id(&ext).confidence(c.confidence).state(state);
        add.valid_from = Some(valid_from);
        add.expires_at = c.expires_at.as_deref().and_then(|t| Timestamp::parse(t).ok());
        add.text.clone_from(&c.text);
        b.add_claim(add);
        b.push(evidence(ClaimRef::Ext(ext.clone())));
        if let Some(v) = &c.vector {
            b.set_claim_vector(ext.as_str(), v.clone());
        }
        made.insert(triple, ext.clone());
        let new_ref = ClaimRef::Ext(ext.clone());

        // What it replaces: the client's verdict, or the current value of a single-valued predicate.
        let mut olds: Vec<ClaimId> = Vec::new();
        match &c.relation {
            Some(Relation::Contradicts(_) | Relation::Refines(_)) => olds.extend(verdict_target),
            _ if one => olds.extend(current_values(view, s_id, &pred, o_id)),
            _ => {}
        }
        let mut superseded = Vec::new();
        let mut late = false;
        for old in olds {
            let Some(o) = view.claim(old) else { continue };
            if o.valid_from > valid_from && !matches!(c.relation, Some(Relation::Refines(_))) {
                // Out of order: the newer value stays current; this one becomes history.
                late = true;
                continue;
            }
            b.push(Op::Deprecate { claim: ClaimRef::Id(old), superseded_by: Some(new_ref.clone()) });
            if valid_from > o.valid_from && o.valid_until > valid_from {
                b.push(Op::EndValidity { claim: ClaimRef::Id(old), valid_until: valid_from });
            }
            superseded.push(o.ext_id.to_string());
        }
        let outcome = if late && superseded.is_empty() {
            // Inserted into the value's history: valid until the next value (the earliest one
            // after it), which supersedes it; the value before it now ends where it begins.
            let all = history(view, s_id, &pred, o_id);
            let next = all.iter().filter(|x| x.1 > valid_from).min_by_key(|x| (x.1, x.0));
            let before = all.iter().filter(|x| x.1 < valid_from).max_by_key(|x| (x.1, x.0));
            let newer = next.map(|(id, from, _)| {
                b.push(Op::Deprecate { claim: new_ref.clone(), superseded_by: Some(ClaimRef::Id(*id)) });
                b.push(Op::EndValidity { claim: new_ref.clone(), valid_until: *from });
                view.claim(*id).map(|x| x.ext_id.to_string()).unwrap_or_default()
            });
            if let Some((id, _, until)) = before {
                if *until > valid_from {
                    b.push(Op::EndValidity { claim: ClaimRef::Id(*id), valid_until: valid_from });
                }
            }
            Outcome::History { newer: newer.unwrap_or_default() }
        } else if superseded.is_empty() {
            Outcome::Created { state }
        } else {
            Outcome::Superseded { old: superseded }
        };
        report.claims.push(ClaimResult { claim: ext, outcome, reasoning });
    }
    Ok(Some((b, report)))
}

/// The idempotency key of a message's `i`-th claim's evidence.
fn evidence_id(conv: &str, msg: &str, i: usize) -> String {
    format!("{conv}/{msg}#{i}")
}

fn entity_ext(view: &WorkspaceView<'_>, e: EntityId) -> String {
    // The column, not `view.entity`: the report needs only the id, and this runs per mention.
    let ents = &view.st.entities;
    if e.index() < ents.ext_id.len() {
        ents.ext_id.get(e.index()).to_owned()
    } else {
        String::new()
    }
}

fn ext_of(view: &WorkspaceView<'_>, r: &EntityRef) -> String {
    match r {
        EntityRef::Ext(s) => s.clone(),
        EntityRef::Id(id) => entity_ext(view, *id),
    }
}

/// The exact normalised name or an alias of `e` among entities of type `ty` (lowest id first).
fn resolve_by_name(view: &WorkspaceView<'_>, e: &EntityIn, ty: &str) -> Option<(EntityId, ResolvedBy)> {
    // Columns, not `view.entity`: this runs per mention, and a whole `Entity` allocates.
    let ents = &view.st.entities;
    let same_type = |id: EntityId| **view.st.catalog.types.name(ents.ty.get(id.index()).0) == *ty;
    for name in std::iter::once(&e.name).chain(&e.aliases) {
        if let Some(id) = view.find_by_name(name).into_iter().find(|id| same_type(*id)) {
            let canonical = name_key(ents.name.get(id.index())) == name_key(name);
            return Some((id, if canonical { ResolvedBy::Name } else { ResolvedBy::Alias }));
        }
    }
    None
}

/// The entity of type `ty` whose name vector is most similar to `v`: an i8 scan of the type's
/// members, the best few rescored exactly (so the threshold compares exact cosines).
fn best_by_vector(view: &WorkspaceView<'_>, v: &[f32], ty: &str) -> Option<(EntityId, f32)> {
    let vo = VectorOptions {
        k: 1,
        metric: Metric::Cosine,
        mode: crate::index::vectors::VectorMode::I8,
        rescore: 8,
        entity_types: vec![ty.to_owned()],
        ..VectorOptions::default()
    };
    view.search_entity_vectors(v, &vo).ok()?.into_iter().next()
}

/// What a search by vector found on a published snapshot, before the commit: under the writer
/// lock only what changed since is scored (`VectorHint::refine`), so the scan itself runs in
/// the writer's own thread, in parallel with other writers, instead of inside the commit.
#[derive(Clone, Debug)]
pub(crate) struct VectorHint {
    /// The type's members in the snapshot searched (a cheap clone: shards are shared).
    members: IdSet,
    /// `State::late_entity_vectors` of that snapshot.
    late_vectors: u64,
    /// The best member then, with its exact cosine.
    best: Option<(EntityId, f32)>,
}

/// The hints for `doc`'s entities (by position): a search by vector on `view` for each mention
/// with a vector and no exact name or alias there.
pub(crate) fn vector_hints(view: &WorkspaceView<'_>, doc: &IngestDoc) -> Vec<Option<VectorHint>> {
    // One search after the other: side by side on rayon measured slower (waking the second
    // worker costs about what half a scan of 10,000 rows saves).
    doc.entities
        .iter()
        .map(|e| {
            let v = e.vector.as_ref()?;
            let ty = vocabulary_key(&e.entity_type);
            if resolve_by_name(view, e, &ty).is_some() {
                return None;
            }
            let tid = view.st.catalog.types.get(&ty)?;
            let members = view.st.bitmaps.entities_by_type.get(&crate::ids::TypeId(tid))?.clone();
            Some(VectorHint { members, late_vectors: view.st.late_entity_vectors, best: best_by_vector(view, v, &ty) })
        })
        .collect()
}

impl VectorHint {
    /// The best entity of type `ty` for `v` on `view` (a newer state than the hint's), from the
    /// hint plus the members added since, each scored exactly; `None` when the hint cannot
    /// answer (its best left the type or is no longer visible, or an older entity got a
    /// vector since): the caller then searches in full.
    fn refine(&self, view: &WorkspaceView<'_>, v: &[f32], ty: &str) -> Result<Option<(EntityId, f32)>, Stale> {
        let st = view.st;
        if st.late_entity_vectors != self.late_vectors {
            return Err(Stale);
        }
        let tid = st.catalog.types.get(ty).ok_or(Stale)?;
        let members = st.bitmaps.entities_by_type.get(&crate::ids::TypeId(tid)).ok_or(Stale)?;
        let visible = |id: u32| view.check_entity(EntityId(id)).is_ok() && *st.entities.flags.get(id as usize) & DELETED == 0;
        if let Some((best, _)) = self.best {
            if !members.contains(best.0) || !visible(best.0) {
                return Err(Stale);
            }
        }
        let n = crate::index::kernels::dot_f32(v, v).sqrt();
        let unit: Vec<f32> = v.iter().map(|x| x / n).collect();
        let mut best = self.best;
        for id in members.added_since(&self.members) {
            if !visible(id) {
                continue;
            }
            if let Some(score) = st.vectors.entity.cosine_to_unit(id, &unit) {
                // Ties go to the lower id, as in the scan.
                let better = |(b, s): (EntityId, f32)| match score.total_cmp(&s) {
                    std::cmp::Ordering::Greater => true,
                    std::cmp::Ordering::Equal => id < b.0,
                    std::cmp::Ordering::Less => false,
                };
                if best.is_none_or(better) {
                    best = Some((EntityId(id), score));
                }
            }
        }
        Ok(best)
    }
}

/// A hint that cannot answer for the newest state.
#[derive(Debug, PartialEq)]
struct Stale;

/// Exact normalised name or alias of the same type (lowest id first), then name-vector
/// similarity among entities of the same type (from `hint` when it can answer).
fn resolve(
    view: &WorkspaceView<'_>,
    e: &EntityIn,
    ty: &str,
    opts: Thresholds,
    hint: Option<&VectorHint>,
) -> Option<(EntityId, ResolvedBy)> {
    if let Some(found) = resolve_by_name(view, e, ty) {
        return Some(found);
    }
    let v = e.vector.as_ref()?;
    let best = match hint.map(|h| h.refine(view, v, ty)) {
        Some(Ok(best)) => best,
        _ => best_by_vector(view, v, ty),
    };
    let same_type = |id: EntityId| view.entity(id).is_some_and(|x| *x.entity_type == *ty);
    best.filter(|(id, sim)| *sim >= opts.resolve_similarity && same_type(*id))
        .map(|(id, similarity)| (id, ResolvedBy::Vector { similarity }))
}

/// Current claims `subject PREDICATE *` (all objects when `object` is `None`), by id.
fn current_out(view: &WorkspaceView<'_>, subject: Option<EntityId>, pred: &str) -> Vec<(ClaimId, EntityId)> {
    let Some(s) = subject else { return Vec::new() };
    let q = NeighborQuery { filter: EdgeFilter::new(Direction::Out).predicates(&[pred]), ..NeighborQuery::default() };
    view.neighbors(s, &q).map(|p| p.items.into_iter().map(|n| (n.claim, n.neighbor)).collect()).unwrap_or_default()
}

/// Current claims with exactly this subject, predicate and object.
fn current_claims(view: &WorkspaceView<'_>, subject: Option<EntityId>, pred: &str, object: Option<EntityId>) -> Vec<ClaimId> {
    let Some(o) = object else { return Vec::new() };
    current_out(view, subject, pred).into_iter().filter(|(_, n)| *n == o).map(|(c, _)| c).collect()
}

/// Current claims with this subject and predicate but another object (what a single-valued
/// predicate's new value replaces).
fn current_values(view: &WorkspaceView<'_>, subject: Option<EntityId>, pred: &str, object: Option<EntityId>) -> Vec<ClaimId> {
    current_out(view, subject, pred).into_iter().filter(|(_, n)| Some(*n) != object).map(|(c, _)| c).collect()
}

/// Every claim `subject PREDICATE <other object>` in any state and whenever valid (deleted ones
/// aside): id, `valid_from`, `valid_until`.
fn history(
    view: &WorkspaceView<'_>,
    subject: Option<EntityId>,
    pred: &str,
    object: Option<EntityId>,
) -> Vec<(ClaimId, Timestamp, Timestamp)> {
    let Some(s) = subject else { return Vec::new() };
    let q = NeighborQuery {
        filter: EdgeFilter::new(Direction::Out).predicates(&[pred]),
        visibility: crate::read::visibility::Visibility::all_versions(),
        ..NeighborQuery::default()
    };
    let items = view.neighbors(s, &q).map(|p| p.items).unwrap_or_default();
    items
        .into_iter()
        .filter(|n| Some(n.neighbor) != object)
        .filter_map(|n| view.claim(n.claim))
        .filter(|c| !c.deleted)
        .map(|c| (c.id, c.valid_from, c.valid_until))
        .collect()
}

/// Combined confidence of an existing claim and a new mention, and whether it now becomes
/// ACCEPTED. Sources are independent when the mention's conversation differs from every
/// conversation already cited (noisy-OR); a repeat within a conversation keeps the larger.
fn corroborate(view: &WorkspaceView<'_>, claim: ClaimId, confidence: f32, conversation: Option<&str>, opts: Thresholds) -> (f32, bool) {
    let Some(existing) = view.claim(claim) else { return (confidence, false) };
    let cited: Vec<Option<Arc<str>>> =
        view.evidence_of(claim).map(|v| v.into_iter().map(|e| e.conversation_id).collect()).unwrap_or_default();
    let independent = conversation.is_some_and(|c| cited.iter().all(|x| x.as_deref() != Some(c)));
    let combined = if independent { noisy_or(existing.confidence, confidence) } else { existing.confidence.max(confidence) };
    let second_conversation = independent && cited.iter().any(Option::is_some);
    let accepted = existing.state == ClaimState::Proposed && (combined >= opts.accept_confidence || second_conversation);
    (combined, accepted)
}

#[cfg(test)]
mod tests {
    use super::*;
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
