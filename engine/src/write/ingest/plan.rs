//! Planning a parsed document against the newest state: each claim corroborates, supersedes,
//! is stored as history, or is new; the plan is an ordinary `WriteBatch`.

use super::report::{ClaimResult, IngestReport, Outcome, Resolution, ResolvedBy};
use super::resolve::{ext_of, resolve, VectorHint};
use super::{err, json_value, IngestDoc, IngestError, IngestOptions, Relation, Thresholds};
use crate::ids::{ClaimId, EntityId};
use crate::index::graph::Direction;
use crate::model::{Cardinality, ClaimState};
use crate::normalize::{name_key, vocabulary_key};
use crate::read::filter::EdgeFilter;
use crate::read::neighbors::NeighborQuery;
use crate::read::view::WorkspaceView;
use crate::time::Timestamp;
use crate::value::{Properties, Value};
use crate::write::batch::{
    AddClaim, AddEvidence, ClaimRef, DeclarePredicate, Element, EntityRef, Op, TagTarget, UpsertEntity, VectorTarget, WriteBatch,
};
use std::collections::HashMap;
use std::sync::Arc;

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
    if source_key.is_none() && !doc.claims.is_empty() {
        report.warnings.push(super::report::NO_SOURCE_KEY.to_owned());
    }
    let extracted_at = doc.source.extracted_at.as_deref().and_then(|t| Timestamp::parse(t).ok());
    // The message's tags: its claims' evidence carries them (first, so each new claim's flag is
    // set as its evidence arrives). Without a message to hang them on, they go to each claim.
    if let (Some((conv, msg)), false) = (source_key, doc.source.tags.is_empty()) {
        b.push(Op::SetTags {
            target: TagTarget::Message { conversation_id: conv.to_owned(), message_id: Some(msg.to_owned()) },
            set: doc.source.tags.clone(),
            remove: Vec::new(),
            inherit: true,
        });
    }

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
        if !e.labels.is_empty() {
            b.push(Op::SetLabels { entity: reference.clone(), add: e.labels.clone(), remove: Vec::new() });
        }
        if !e.tags.is_empty() {
            b.push(Op::SetTags { target: TagTarget::Entity(reference.clone()), set: e.tags.clone(), remove: Vec::new(), inherit: false });
        }
        if !e.properties.is_empty() && !doc.source.tags.is_empty() {
            // What it is said to be came from this message: it inherits the message's tags.
            b.push(Op::SetTags {
                target: TagTarget::Entity(reference.clone()),
                set: doc.source.tags.clone(),
                remove: Vec::new(),
                inherit: true,
            });
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
        add.sensitive = c.sensitive;
        b.add_claim(add);
        if !c.properties.is_empty() {
            let properties: Properties =
                c.properties.iter().map(|(k, v)| (Arc::from(k.as_str()), json_value(v).unwrap_or(Value::Null))).collect();
            b.push(Op::SetProperties { target: Element::Claim(ClaimRef::Ext(ext.clone())), properties, replace: false });
        }
        if !c.tags.is_empty() {
            b.push(Op::SetTags {
                target: TagTarget::Claim(ClaimRef::Ext(ext.clone())),
                set: c.tags.clone(),
                remove: Vec::new(),
                inherit: false,
            });
        }
        if source_key.is_none() && !doc.source.tags.is_empty() {
            b.push(Op::SetTags {
                target: TagTarget::Claim(ClaimRef::Ext(ext.clone())),
                set: doc.source.tags.clone(),
                remove: Vec::new(),
                inherit: true,
            });
        }
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
pub(super) fn evidence_id(conv: &str, msg: &str, i: usize) -> String {
    format!("{conv}/{msg}#{i}")
}

/// Current claims `subject PREDICATE *` (all objects when `object` is `None`), by id.
pub(super) fn current_out(view: &WorkspaceView<'_>, subject: Option<EntityId>, pred: &str) -> Vec<(ClaimId, EntityId)> {
    let Some(s) = subject else { return Vec::new() };
    let q = NeighborQuery { filter: EdgeFilter::new(Direction::Out).predicates(&[pred]), ..NeighborQuery::default() };
    view.neighbors(s, &q).map(|p| p.items.into_iter().map(|n| (n.claim, n.neighbor)).collect()).unwrap_or_default()
}

/// Current claims with exactly this subject, predicate and object.
pub(super) fn current_claims(view: &WorkspaceView<'_>, subject: Option<EntityId>, pred: &str, object: Option<EntityId>) -> Vec<ClaimId> {
    let Some(o) = object else { return Vec::new() };
    current_out(view, subject, pred).into_iter().filter(|(_, n)| *n == o).map(|(c, _)| c).collect()
}

/// Current claims with this subject and predicate but another object (what a single-valued
/// predicate's new value replaces).
pub(super) fn current_values(view: &WorkspaceView<'_>, subject: Option<EntityId>, pred: &str, object: Option<EntityId>) -> Vec<ClaimId> {
    current_out(view, subject, pred).into_iter().filter(|(_, n)| Some(*n) != object).map(|(c, _)| c).collect()
}

/// Every claim `subject PREDICATE <other object>` in any state and whenever valid (deleted ones
/// aside): id, `valid_from`, `valid_until`.
pub(super) fn history(
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
pub(super) fn corroborate(
    view: &WorkspaceView<'_>,
    claim: ClaimId,
    confidence: f32,
    conversation: Option<&str>,
    opts: Thresholds,
) -> (f32, bool) {
    let Some(existing) = view.claim(claim) else { return (confidence, false) };
    let cited: Vec<Option<Arc<str>>> =
        view.evidence_of(claim).map(|v| v.into_iter().map(|e| e.conversation_id).collect()).unwrap_or_default();
    let independent = conversation.is_some_and(|c| cited.iter().all(|x| x.as_deref() != Some(c)));
    let combined = if independent { noisy_or(existing.confidence, confidence) } else { existing.confidence.max(confidence) };
    let second_conversation = independent && cited.iter().any(Option::is_some);
    let accepted = existing.state == ClaimState::Proposed && (combined >= opts.accept_confidence || second_conversation);
    (combined, accepted)
}
