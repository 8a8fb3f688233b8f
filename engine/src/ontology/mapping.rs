//! Curated term mappings: a phrase (often a composite, "internal organ lining") mapped to a union
//! of concepts, consulted before any search. Stored as data in the workspace, so they are
//! durable, audited and exported like everything else: one `term_mapping` entity per phrase
//! (named by the phrase, so the core's name key finds it) with a `maps_to` claim per concept.

use crate::db::Database;
use crate::error::Error;
use crate::ids::EntityId;
use crate::index::graph::Direction;
use crate::model::ClaimState;
use crate::normalize::name_key;
use crate::read::filter::EdgeFilter;
use crate::read::neighbors::NeighborQuery;
use crate::read::view::WorkspaceView;
use crate::value::{Properties, Value};
use crate::write::batch::{AddClaim, ClaimRef, EntityRef, Op, UpsertEntity, WriteBatch};
use std::sync::Arc;

/// The entity type of a mapping.
pub const MAPPING_TYPE: &str = "term_mapping";
/// The predicate from a mapping to each concept.
pub const MAPS_TO: &str = "maps_to";

/// One mapping as read.
#[derive(Clone, Debug, PartialEq)]
pub struct TermMapping {
    /// The phrase as written.
    pub text: String,
    /// The concepts it stands for.
    pub targets: Vec<EntityId>,
    /// An optional note (why the mapping exists).
    pub note: Option<String>,
}

fn ext_id(text: &str) -> String {
    format!("mapping:{}", name_key(text))
}

/// Sets (creates or replaces) the mapping of `text` to the concepts with CURIEs `targets`, in one
/// transaction. An unknown CURIE is an error and nothing changes.
pub fn set_mapping(db: &Database, workspace: &str, text: &str, targets: &[&str], note: Option<&str>) -> Result<(), Error> {
    let snap = db.snapshot();
    let ws = snap.workspace(workspace)?;
    let ext = ext_id(text);
    let mut batch = WriteBatch::new(workspace);
    let existing = ws.entity_id(&ext);
    if existing.and_then(|e| ws.entity(e)).is_some_and(|e| e.deleted) {
        batch.push(Op::RestoreEntity { entity: EntityRef::Ext(ext.clone()) });
    }
    let mut props = Properties::new();
    props.insert(Arc::from("note"), note.map_or(Value::Null, Value::from));
    batch.push(Op::UpsertEntity(UpsertEntity {
        ext_id: ext.clone(),
        entity_type: MAPPING_TYPE.to_owned(),
        name: text.to_owned(),
        aliases: Vec::new(),
        properties: props,
    }));
    let current = existing.map(|e| current_targets(&ws, e)).unwrap_or_default();
    let mut want = Vec::new();
    for t in targets {
        match ws.entity_id(t) {
            Some(id) => {
                want.push(id);
                if !current.iter().any(|(e, _)| *e == id) {
                    batch.add_claim(AddClaim::new(ext.as_str(), MAPS_TO, EntityRef::Id(id)).state(ClaimState::Accepted));
                }
            }
            // The write rejects it, naming the missing id; nothing is written.
            None => {
                batch.add_claim(AddClaim::new(ext.as_str(), MAPS_TO, *t));
            }
        }
    }
    for (e, claim) in current {
        if !want.contains(&e) {
            batch.push(Op::Deprecate { claim: ClaimRef::Id(claim), superseded_by: None });
        }
    }
    db.write(&batch)?;
    Ok(())
}

/// Removes the mapping of `text` (soft delete; its history stays). False when there was none.
pub fn remove_mapping(db: &Database, workspace: &str, text: &str) -> Result<bool, Error> {
    let snap = db.snapshot();
    let ws = snap.workspace(workspace)?;
    match ws.entity_id(&ext_id(text)).and_then(|e| ws.entity(e)) {
        Some(e) if !e.deleted => {
            let mut batch = WriteBatch::new(workspace);
            batch.push(Op::DeleteEntity { entity: EntityRef::Id(e.id) });
            db.write(&batch)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

fn current_targets(ws: &WorkspaceView<'_>, mapping: EntityId) -> Vec<(EntityId, crate::ids::ClaimId)> {
    let q = NeighborQuery { filter: EdgeFilter::new(Direction::Out).predicates(&[MAPS_TO]), ..NeighborQuery::default() };
    ws.neighbors(mapping, &q).map(|page| page.items.into_iter().map(|n| (n.neighbor, n.claim)).collect()).unwrap_or_default()
}

fn read(ws: &WorkspaceView<'_>, e: EntityId) -> Option<TermMapping> {
    let ent = ws.entity(e)?;
    if ent.deleted {
        return None;
    }
    let note = match ent.properties.get("note") {
        Some(Value::Str(s)) => Some(s.to_string()),
        _ => None,
    };
    let mut targets: Vec<EntityId> = current_targets(ws, e).into_iter().map(|(t, _)| t).collect();
    targets.sort_unstable();
    Some(TermMapping { text: ent.name.to_string(), targets, note })
}

/// The mapping of `text` (matched on the core's name key: case, spaces and dashes aside).
pub fn lookup_mapping(ws: &WorkspaceView<'_>, text: &str) -> Option<TermMapping> {
    read(ws, ws.entity_id(&ext_id(text))?)
}

/// Every mapping of the workspace, by phrase.
pub fn list_mappings(ws: &WorkspaceView<'_>) -> Vec<TermMapping> {
    let mut out: Vec<TermMapping> = ws.entities_of_type(MAPPING_TYPE).into_iter().filter_map(|e| read(ws, e)).collect();
    out.sort_by(|a, b| a.text.cmp(&b.text));
    out
}
