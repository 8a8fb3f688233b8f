//! Applying a write batch to a private copy of the state.
//!
//! Every operation is validated against the state as the earlier operations of the batch left it,
//! then applied to the copy. The first invalid operation aborts the batch with an error naming its
//! index and field; the caller drops the copy, so the published state never sees any of it.

use crate::error::{WriteError, WriteErrorKind};
use crate::ids::{ClaimId, EntityId, PredicateId, TypeId, WorkspaceId, NONE};
use crate::index::keyindex::key_hash;
use crate::limits::Limits;
use crate::model::{ClaimState, PredicateDef};
use crate::normalize::{is_plain_vocabulary_key, name_key, vocabulary_key, vocabulary_key_of};
use crate::state::{
    claim_visibility, ClaimEvent, EntityEvent, EvidenceRow, MergeRecord, State, ALIAS_SEP, BARE, DELETED, ERASED, LIVE, SENSITIVE, TIMED,
};
use crate::tags::Tags;
use crate::time::Timestamp;
use crate::value::{Properties, Value};
use crate::write::batch::{
    AddClaim, AddEvidence, ClaimRef, DeclarePredicate, EntityRef, ForgetTarget, Op, TagTarget, UpsertEntity, VectorTarget, WriteBatch,
};
use std::collections::BTreeMap;
use std::sync::Arc;

pub(super) type OpResult<T> = Result<T, (&'static str, WriteErrorKind)>;

/// What a committed batch created, in operation order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Created {
    /// The entity of each `UpsertEntity` (new or existing).
    pub entities: Vec<EntityId>,
    /// The id of each `AddClaim`.
    pub claims: Vec<ClaimId>,
    /// The id of each `AddEvidence`.
    pub evidence: Vec<crate::ids::EvidenceId>,
    /// The nodes and relationships written (what the workspace's constraints are checked on).
    pub touched: super::constraints::Touched,
}

/// Applies `batch` to `state` at transaction time `now`, as one transaction: what it wrote must
/// meet the workspace's constraints.
pub fn apply_batch(state: &mut State, batch: &WriteBatch, now: Timestamp, limits: &Limits) -> Result<Created, WriteError> {
    let created = apply_batch_with(state, batch, now, limits, Deferred::default())?;
    check_constraints(state, &batch.workspace, &created.touched, batch.ops.len())?;
    Ok(created)
}

/// The error of a write that breaks a constraint of `workspace` (the batch's last operation
/// stands for the transaction, which the check follows).
pub(crate) fn check_constraints(
    state: &State,
    workspace: &str,
    touched: &super::constraints::Touched,
    ops: usize,
) -> Result<(), WriteError> {
    super::constraints::check(state, workspace, touched).map_err(|why| WriteError {
        op_index: ops.saturating_sub(1),
        op: "constraint",
        field: "properties",
        kind: WriteErrorKind::ConstraintViolated(why),
    })
}

/// Index work a WAL replay leaves to the end of the replay, where the open rebuilds those
/// indexes from the columns in one parallel pass anyway. (The bitmaps of new rows are deferred
/// through the state itself: `State::defer_bitmaps`.)
#[derive(Clone, Copy, Debug, Default)]
pub struct Deferred {
    /// Keyword and recency indexes (rebased after the replay).
    pub text: bool,
    /// The delta adjacency (a fresh CSR is built after the replay). Operations that read
    /// adjacency first link what was deferred (`State::link_deferred`).
    pub graph: bool,
}

/// `apply_batch`, leaving the `deferred` index work undone, and without the constraint check.
pub fn apply_batch_with(
    state: &mut State,
    batch: &WriteBatch,
    now: Timestamp,
    limits: &Limits,
    deferred: Deferred,
) -> Result<Created, WriteError> {
    apply_into(state, batch, now, limits, deferred, Created::default())
}

/// One step of a longer transaction (the language's): `apply_batch` without the constraint
/// check, adding what it wrote to `touched`, which the transaction checks once when it ends.
/// The buffer goes into the step and back, so a step allocates none.
pub fn apply_step(
    state: &mut State,
    batch: &WriteBatch,
    now: Timestamp,
    limits: &Limits,
    touched: &mut super::constraints::Touched,
) -> Result<Created, WriteError> {
    let start = Created { touched: std::mem::take(touched), ..Created::default() };
    let mut created = apply_into(state, batch, now, limits, Deferred::default(), start)?;
    *touched = std::mem::take(&mut created.touched);
    Ok(created)
}

fn apply_into(
    state: &mut State,
    batch: &WriteBatch,
    now: Timestamp,
    limits: &Limits,
    deferred: Deferred,
    created: Created,
) -> Result<Created, WriteError> {
    let fail = |op_index, op, (field, kind)| WriteError { op_index, op, field, kind };
    let ws = state
        .catalog
        .workspace(&batch.workspace)
        .ok_or_else(|| fail(0, "batch", ("workspace", WriteErrorKind::UnknownWorkspace(batch.workspace.clone()))))?;
    if batch.ops.len() > limits.batch_ops_max {
        return Err(fail(
            0,
            "batch",
            ("ops", WriteErrorKind::TooMany { count: batch.ops.len(), limit: limits.batch_ops_max, limit_name: "batch_ops_max" }),
        ));
    }
    // A batch that is large beside what is stored rebuilds the keyword indexes from the columns
    // (lazily, in parallel) instead of growing their persistent deltas op by op.
    let rows = state.entities.len() + state.claims.len();
    let rebase = batch.ops.len() >= REBASE_TEXT_OPS_MIN && batch.ops.len() * 4 >= rows;
    let index_text = !rebase && !deferred.text;
    let entities_before = state.entities.len();
    let mut w =
        Writer { st: state, ws, now, limits, created, names_changed: Vec::new(), index_text, link_graph: !deferred.graph, entities_before };
    for (i, op) in batch.ops.iter().enumerate() {
        w.apply(op).map_err(|e| fail(i, op_name(op), e))?;
    }
    if deferred.text {
        return Ok(w.created);
    }
    if rebase {
        w.st.rebase_text();
        return Ok(w.created);
    }
    // Entities whose name or aliases changed get their keyword document rebuilt, once each.
    let mut changed = std::mem::take(&mut w.names_changed);
    changed.sort_unstable();
    changed.dedup();
    let mut doc = String::new();
    for e in changed {
        doc.clear();
        doc.push_str(w.st.entities.name.get(e as usize));
        doc.push(ALIAS_SEP);
        doc.push_str(w.st.entities.aliases.get(e as usize));
        w.st.text.entities.index(e, ws, &doc);
    }
    Ok(w.created)
}

/// `c<id>`, the name a claim gets when its caller gives none (`format!` costs a fifth of a
/// one-claim WAL record's replay).
pub(crate) fn positional_claim_id(id: u64) -> String {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(id);
    let mut name = String::with_capacity(1 + digits.len());
    name.push('c');
    name.push_str(digits);
    name
}

/// `c<digits>` written into `buf` (a `u32` has at most 10 digits).
fn positional_name<'a>(buf: &'a mut [u8; 11], digits: &str) -> &'a str {
    buf[0] = b'c';
    buf[1..=digits.len()].copy_from_slice(digits.as_bytes());
    // `c` and ASCII digits: valid UTF-8 by construction.
    std::str::from_utf8(&buf[..=digits.len()]).unwrap_or("c")
}

/// Fewest operations in a batch for which the keyword indexes are rebuilt rather than updated
/// (and only when the batch is at least a quarter of the rows already stored).
pub const REBASE_TEXT_OPS_MIN: usize = 16_384;

/// The operation's name as used in errors.
pub fn op_name(op: &Op) -> &'static str {
    match op {
        Op::UpsertEntity(_) => "upsert_entity",
        Op::RenameEntity { .. } => "rename_entity",
        Op::AddAlias { .. } => "add_alias",
        Op::RemoveAlias { .. } => "remove_alias",
        Op::SetProperty { .. } => "set_property",
        Op::AddClaim(_) => "add_claim",
        Op::AddEvidence(_) => "add_evidence",
        Op::AcceptClaim { .. } => "accept_claim",
        Op::SetConfidence { .. } => "set_confidence",
        Op::Deprecate { .. } => "deprecate",
        Op::DeleteClaim { .. } => "delete_claim",
        Op::RestoreClaim { .. } => "restore_claim",
        Op::DeleteEntity { .. } => "delete_entity",
        Op::RestoreEntity { .. } => "restore_entity",
        Op::DeclarePredicate(_) => "declare_predicate",
        Op::SetVector { .. } => "set_vector",
        Op::EndValidity { .. } => "end_validity",
        Op::Forget(_) => "forget",
        Op::MergeEntities { .. } => "merge_entities",
        Op::UnmergeEntity { .. } => "unmerge_entity",
        Op::CreateNode(_) => "create_node",
        Op::CreateRelationship(_) => "create_relationship",
        Op::SetProperties { .. } => "set_properties",
        Op::SetLabels { .. } => "set_labels",
        Op::SetTags { .. } => "set_tags",
    }
}

pub(super) struct Writer<'a> {
    pub(super) st: &'a mut State,
    pub(super) ws: WorkspaceId,
    pub(super) now: Timestamp,
    pub(super) limits: &'a Limits,
    pub(super) created: Created,
    /// Entities whose name or aliases changed in this batch.
    pub(super) names_changed: Vec<u32>,
    /// False when the batch ends with a rebuild of the keyword indexes (or a replay defers it).
    pub(super) index_text: bool,
    /// False when a replay defers the delta adjacency.
    link_graph: bool,
    /// Entities before this batch (those of earlier commits).
    entities_before: usize,
}

fn check_str(field: &'static str, s: &str, limit: usize, limit_name: &'static str) -> OpResult<()> {
    if s.trim().is_empty() {
        return Err((field, WriteErrorKind::Empty));
    }
    check_len(field, s, limit, limit_name)
}

/// A name, alias, type or predicate: non-empty, within its limit, no control characters.
pub(super) fn check_name(field: &'static str, s: &str, limit: usize) -> OpResult<()> {
    check_str(field, s, limit, "name_bytes_max")?;
    if crate::normalize::has_control_chars(s) {
        return Err((field, WriteErrorKind::Invalid("control characters are not allowed in names")));
    }
    Ok(())
}

/// A claim text within `text_bytes_max`.
pub(super) fn check_text(text: &str, limits: &Limits) -> OpResult<()> {
    check_len("text", text, limits.text_bytes_max, "text_bytes_max")
}

fn check_len(field: &'static str, s: &str, limit: usize, limit_name: &'static str) -> OpResult<()> {
    if s.len() > limit {
        return Err((field, WriteErrorKind::TooLong { len: s.len(), limit, limit_name }));
    }
    Ok(())
}

fn check_confidence(field: &'static str, c: f32) -> OpResult<()> {
    if !c.is_finite() {
        return Err((field, WriteErrorKind::NotFinite));
    }
    if !(0.0..=1.0).contains(&c) {
        return Err((field, WriteErrorKind::ConfidenceOutOfRange(c)));
    }
    Ok(())
}

fn opt_arc(s: Option<&String>) -> Option<Arc<str>> {
    s.map(|s| Arc::from(s.as_str()))
}

impl Writer<'_> {
    fn apply(&mut self, op: &Op) -> OpResult<()> {
        match op {
            Op::UpsertEntity(u) => self.upsert_entity(u),
            Op::RenameEntity { entity, name } => {
                let e = self.entity(entity)?;
                check_name("name", name, self.limits.name_bytes_max)?;
                self.rename(e, name);
                Ok(())
            }
            Op::AddAlias { entity, alias } => {
                let e = self.entity(entity)?;
                check_name("alias", alias, self.limits.name_bytes_max)?;
                self.add_aliases(e, std::slice::from_ref(alias))
            }
            Op::RemoveAlias { entity, alias } => {
                let e = self.entity(entity)?;
                check_str("alias", alias, self.limits.name_bytes_max, "name_bytes_max")?;
                self.remove_alias(e, alias);
                Ok(())
            }
            Op::SetProperty { entity, key, value } => {
                let e = self.entity(entity)?;
                let mut props = Properties::new();
                props.insert(Arc::from(key.as_str()), value.clone());
                self.check_properties(&props)?;
                self.merge_properties(e, &props);
                Ok(())
            }
            Op::AddClaim(c) => {
                let id = self.add_claim(c, false)?;
                if c.text.is_some() {
                    self.st.note_pii(id);
                }
                if c.sensitive {
                    // The flag is the tag `sensitivity=sensitive`.
                    let mut t: Tags = self.st.claims.tags.get(&id).map(|t| (**t).clone()).unwrap_or_default();
                    t.extend(crate::tags::sensitive().iter().map(|(k, v)| (k.clone(), v.clone())));
                    self.st.claims.tags.insert(id, Arc::new(t));
                }
                self.created.claims.push(ClaimId(id));
                Ok(())
            }
            Op::AddEvidence(v) => self.add_evidence(v),
            Op::AcceptClaim { claim } => {
                let c = self.claim(claim, "claim")?;
                self.transition(c, ClaimState::Accepted)
            }
            Op::SetConfidence { claim, confidence } => {
                let c = self.claim(claim, "claim")?;
                check_confidence("confidence", *confidence)?;
                self.st.claims.confidence.set(c as usize, *confidence);
                self.st.claims.updated_at.insert(c, self.now);
                Ok(())
            }
            Op::Deprecate { claim, superseded_by } => self.deprecate(claim, superseded_by.as_ref()),
            Op::DeleteClaim { claim } => {
                let c = self.claim(claim, "claim")?;
                self.set_claim_deleted(c, true);
                Ok(())
            }
            Op::RestoreClaim { claim } => {
                let c = self.claim(claim, "claim")?;
                self.set_claim_deleted(c, false);
                Ok(())
            }
            Op::DeleteEntity { entity } => {
                let e = self.entity(entity)?;
                self.set_entity_deleted(e, true);
                Ok(())
            }
            Op::RestoreEntity { entity } => {
                let e = self.entity(entity)?;
                self.check_not_merged("entity", e)?;
                self.set_entity_deleted(e, false);
                Ok(())
            }
            Op::MergeEntities { from, into } => self.merge_entities(from, into),
            Op::UnmergeEntity { entity } => self.unmerge_entity(entity),
            Op::CreateNode(n) => self.create_node(n),
            Op::CreateRelationship(r) => self.create_relationship(r),
            Op::SetProperties { target, properties, replace } => self.set_properties(target, properties, *replace),
            Op::SetLabels { entity, add, remove } => self.set_labels(entity, add, remove),
            Op::SetTags { target, set, remove, inherit } => self.set_tags(target, set, remove, *inherit),
            Op::DeclarePredicate(d) => self.declare_predicate(d),
            Op::SetVector { target, vector } => self.set_vector(target, vector),
            Op::Forget(target) => {
                // The one operation that reads the bitmaps (a replay may have deferred them).
                self.st.catch_up_bitmaps();
                self.forget(target)
            }
            Op::EndValidity { claim, valid_until } => {
                let c = self.claim(claim, "claim")?;
                self.end_validity(c, *valid_until)
            }
        }
    }

    fn forget(&mut self, target: &ForgetTarget) -> OpResult<()> {
        let ws = self.ws;
        match target {
            ForgetTarget::Entity(r) => {
                let e = self.entity_in("target", r)?;
                // Its claims now belong to the survivor; forgetting it means undoing the merge.
                self.check_not_merged("target", e)?;
                for c in self.st.incident_claims(e) {
                    self.st.erase_claim(ws, c);
                }
                self.st.erase_entity(e);
            }
            ForgetTarget::Conversation(conv) => {
                let claims: Vec<u32> = self.st.bitmaps.claims_by_ws.get(&ws).map(|s| s.iter().collect()).unwrap_or_default();
                for c in claims {
                    let (mut ours, mut others) = (Vec::new(), 0);
                    let mut ev = *self.st.claims.evidence_head.get(c as usize);
                    while ev != NONE {
                        let row = self.st.evidence.rows.get(ev as usize);
                        if row.conversation_id.as_deref() == Some(conv.as_str()) {
                            ours.push(ev);
                        } else {
                            others += 1;
                        }
                        ev = row.next;
                    }
                    if ours.is_empty() {
                        continue;
                    }
                    if others == 0 {
                        self.st.erase_claim(ws, c);
                    } else {
                        for ev in ours {
                            self.st.erase_evidence_row(ev);
                        }
                        // Tags that came with the erased evidence leave with it.
                        self.refresh_sensitive(c);
                    }
                }
                // The conversation's key and its messages' start alike (`message_key`).
                let prefix = crate::state::message_key(ws, conv, None);
                let keys: Vec<Arc<str>> = self.st.evidence.message_tags.keys().filter(|k| k.starts_with(&*prefix)).cloned().collect();
                for k in keys {
                    self.st.evidence.message_tags.remove(&k);
                }
            }
            ForgetTarget::History { before } => {
                for c in self.st.history_before(ws, *before) {
                    self.st.erase_claim(ws, c);
                }
            }
        }
        // The keyword indexes held the erased words: rebuilt from the cleared columns.
        self.st.rebase_text();
        Ok(())
    }

    /// Stores a vector once per id; storing the identical vector again is a no-op (so a replay
    /// over rows a checkpoint already wrote to the vector file succeeds).
    fn set_vector(&mut self, target: &VectorTarget, vector: &[f32]) -> OpResult<()> {
        let (id, entity) = match target {
            VectorTarget::Entity(r) => (self.entity_in("target", r)?, true),
            VectorTarget::Claim(r) => (self.claim(r, "target")?, false),
        };
        if vector.iter().any(|v| !v.is_finite()) {
            return Err(("vector", WriteErrorKind::NotFinite));
        }
        match self.st.settings.vector_dim.map(|d| d as usize) {
            Some(dim) if dim != vector.len() => {
                return Err(("vector", WriteErrorKind::VectorDimension { expected: dim, got: vector.len() }))
            }
            Some(_) => {}
            None => {
                if vector.is_empty() || vector.len() > self.limits.vector_dim_max {
                    return Err((
                        "vector",
                        WriteErrorKind::TooMany { count: vector.len(), limit: self.limits.vector_dim_max, limit_name: "vector_dim_max" },
                    ));
                }
                Arc::make_mut(&mut self.st.settings).vector_dim = Some(vector.len() as u32);
            }
        }
        if vector.iter().all(|v| *v == 0.0) {
            return Err(("vector", WriteErrorKind::Invalid("an all-zero vector has no direction")));
        }
        let col = if entity { &mut self.st.vectors.entity } else { &mut self.st.vectors.claim };
        match col.get(id) {
            Some(old) if old == vector => Ok(()),
            Some(_) => Err(("vector", WriteErrorKind::VectorAlreadySet)),
            None => {
                col.insert(id, Arc::from(vector));
                if entity && (id as usize) < self.entities_before {
                    self.st.late_entity_vectors += 1;
                }
                Ok(())
            }
        }
    }

    // ----- resolution -------------------------------------------------------------------------

    pub(super) fn entity(&self, r: &EntityRef) -> OpResult<u32> {
        self.entity_in("entity", r)
    }

    pub(super) fn entity_in(&self, field: &'static str, r: &EntityRef) -> OpResult<u32> {
        match r {
            EntityRef::Ext(s) => self.st.entities.find_ext(self.ws, s).ok_or_else(|| (field, WriteErrorKind::UnknownEntity(s.clone()))),
            EntityRef::Id(id) => {
                let ents = &self.st.entities;
                match ents.ws.try_get(id.index()) {
                    None => Err((field, WriteErrorKind::UnknownEntity(id.to_string()))),
                    Some(_) if *ents.flags.get(id.index()) & ERASED != 0 => Err((field, WriteErrorKind::UnknownEntity(id.to_string()))),
                    Some(w) if *w != self.ws => Err((field, WriteErrorKind::CrossWorkspaceEntity(*id))),
                    Some(_) => Ok(id.0),
                }
            }
        }
    }

    pub(super) fn claim(&self, r: &ClaimRef, field: &'static str) -> OpResult<u32> {
        match r {
            ClaimRef::Ext(s) => self.st.find_claim_ext(self.ws, s).ok_or_else(|| (field, WriteErrorKind::UnknownClaim(s.clone()))),
            ClaimRef::Id(id) => {
                let claims = &self.st.claims;
                if id.index() >= claims.len() || *claims.flags.get(id.index()) & ERASED != 0 {
                    Err((field, WriteErrorKind::UnknownClaim(id.to_string())))
                } else if self.st.claim_ws(id.0) != self.ws {
                    Err((field, WriteErrorKind::CrossWorkspaceClaim(*id)))
                } else {
                    Ok(id.0)
                }
            }
        }
    }

    // ----- entities ---------------------------------------------------------------------------

    pub(super) fn check_properties(&self, props: &Properties) -> OpResult<()> {
        for (k, v) in props {
            check_str("properties", k, self.limits.name_bytes_max, "name_bytes_max")?;
            if v.has_non_finite() {
                return Err(("properties", WriteErrorKind::NotFinite));
            }
            let bytes = v.approx_bytes();
            if bytes > self.limits.property_bytes_max {
                return Err((
                    "properties",
                    WriteErrorKind::TooLong { len: bytes, limit: self.limits.property_bytes_max, limit_name: "property_bytes_max" },
                ));
            }
        }
        Ok(())
    }

    pub(super) fn intern_type(&mut self, t: &str) -> OpResult<TypeId> {
        let key = self.vocabulary_name("entity_type", t)?;
        self.st
            .catalog
            .types
            .intern(&key)
            .map(TypeId)
            .ok_or(("entity_type", WriteErrorKind::Invalid("the type vocabulary is full (65,536 names)")))
    }

    fn upsert_entity(&mut self, u: &UpsertEntity) -> OpResult<()> {
        check_str("ext_id", &u.ext_id, self.limits.ext_id_bytes_max, "ext_id_bytes_max")?;
        check_name("name", &u.name, self.limits.name_bytes_max)?;
        if u.aliases.len() > self.limits.aliases_max {
            return Err((
                "aliases",
                WriteErrorKind::TooMany { count: u.aliases.len(), limit: self.limits.aliases_max, limit_name: "aliases_max" },
            ));
        }
        for a in &u.aliases {
            check_name("aliases", a, self.limits.name_bytes_max)?;
        }
        self.check_properties(&u.properties)?;
        let ty = self.intern_type(&u.entity_type)?;
        if let Some(e) = self.st.entities.find_ext(self.ws, &u.ext_id) {
            self.set_type(e, ty);
            self.created.touched.entities.push(e);
            let flags = *self.st.entities.flags.get(e as usize);
            if flags & BARE != 0 {
                // Named through the memory API: its memory fields are written now.
                self.st.entities.flags.set(e as usize, flags & !BARE);
            }
            if self.st.entities.name.get(e as usize) != u.name {
                self.rename(e, &u.name);
            }
            self.add_aliases(e, &u.aliases)?;
            self.merge_properties(e, &u.properties);
            self.st.entities.updated_at.insert(e, self.now);
            self.created.entities.push(EntityId(e));
            return Ok(());
        }
        let e = self.push_entity(&u.ext_id, ty, 0, &u.name, &u.properties)?;
        self.created.entities.push(EntityId(e));
        self.add_aliases(e, &u.aliases)
    }

    /// Appends a new entity row (`Null` properties dropped) with its indexes and bitmaps.
    pub(super) fn push_entity(&mut self, ext_id: &str, ty: TypeId, flags: u8, name: &str, properties: &Properties) -> OpResult<u32> {
        let e = u32::try_from(self.st.entities.len())
            .ok()
            .filter(|e| *e < crate::index::graph::csr::LIVE_BIT)
            .ok_or(("ext_id", WriteErrorKind::Invalid("entity table is full (2^31 entities)")))?;
        let props: Properties = properties.iter().filter(|(_, v)| **v != Value::Null).map(|(k, v)| (k.clone(), v.clone())).collect();
        let ents = &mut self.st.entities;
        ents.ws.push(self.ws);
        ents.ty.push(ty);
        ents.flags.push(flags);
        ents.ext_id.push(ext_id);
        ents.name.push(name);
        ents.aliases.push("");
        ents.created.note(e, self.now);
        ents.set_props(e, Some(props));
        ents.by_ext.insert(key_hash(self.ws, ext_id), e);
        self.created.touched.entities.push(e);
        let cat = &mut self.st.catalog;
        cat.note_label(self.ws, ty);
        if flags & BARE == 0 {
            cat.note_keys(self.ws, ["id", "name"], false);
        }
        if let Some(p) = self.st.entities.props.get(e) {
            self.st.catalog.note_keys(self.ws, p.keys().map(AsRef::as_ref), false);
        }
        if !name.is_empty() {
            self.index_name(e, &name_key(name));
        }
        self.names_changed.push(e);
        if !self.st.entity_bitmaps_deferred(e) {
            self.st.bitmaps.entities_by_ws.entry(self.ws).or_default().insert(e);
            self.st.bitmaps.entities_by_type.entry(ty).or_default().insert(e);
        }
        Ok(e)
    }

    /// Moves entity `e` to type `ty`, keeping the type bitmaps in step.
    pub(super) fn set_type(&mut self, e: u32, ty: TypeId) {
        let old_ty = *self.st.entities.ty.get(e as usize);
        if old_ty == ty {
            return;
        }
        self.st.entities.ty.set(e as usize, ty);
        self.st.catalog.note_label(self.ws, ty);
        if !self.st.entity_bitmaps_deferred(e) {
            if let Some(set) = self.st.bitmaps.entities_by_type.get_mut(&old_ty) {
                set.remove(e);
            }
            self.st.bitmaps.entities_by_type.entry(ty).or_default().insert(e);
        }
    }

    pub(super) fn index_name(&mut self, e: u32, key: &str) {
        self.st.entities.by_name.insert(key_hash(self.ws, key), e);
    }

    fn set_aliases(&mut self, e: u32, aliases: &[&str]) {
        self.names_changed.push(e);
        if !aliases.is_empty() {
            self.st.catalog.note_keys(self.ws, ["aliases"], false);
        }
        let joined = aliases.join(&ALIAS_SEP.to_string());
        self.st.entities.aliases.set(e as usize, &joined);
        self.st.entities.updated_at.insert(e, self.now);
    }

    pub(super) fn rename(&mut self, e: u32, name: &str) {
        self.names_changed.push(e);
        self.created.touched.entities.push(e);
        let old = self.st.entities.name.get(e as usize).to_owned();
        self.st.entities.name.set(e as usize, name);
        self.st.entities.updated_at.insert(e, self.now);
        let old_key = name_key(&old);
        let new_key = name_key(name);
        // The old name stays findable: it becomes an alias unless one with its key exists.
        if old_key != new_key && !self.st.entities.aliases_of(e).any(|a| name_key(a) == old_key) {
            let mut v: Vec<&str> = self.st.entities.aliases_of(e).collect();
            v.push(&old);
            let v: Vec<String> = v.into_iter().map(str::to_owned).collect();
            self.set_aliases(e, &v.iter().map(String::as_str).collect::<Vec<_>>());
        }
        self.index_name(e, &new_key);
    }

    fn add_aliases(&mut self, e: u32, aliases: &[String]) -> OpResult<()> {
        for alias in aliases {
            let key = name_key(alias);
            if self.st.entities.has_key(e, &key) {
                continue;
            }
            let mut v: Vec<String> = self.st.entities.aliases_of(e).map(str::to_owned).collect();
            if v.len() >= self.limits.aliases_max {
                return Err((
                    "aliases",
                    WriteErrorKind::TooMany { count: v.len() + 1, limit: self.limits.aliases_max, limit_name: "aliases_max" },
                ));
            }
            v.push(alias.clone());
            self.set_aliases(e, &v.iter().map(String::as_str).collect::<Vec<_>>());
            self.index_name(e, &key);
        }
        Ok(())
    }

    /// Removes the aliases with `alias`'s key. The name index keeps a stale candidate, which
    /// lookups reject by re-checking the entity's names.
    fn remove_alias(&mut self, e: u32, alias: &str) {
        let key = name_key(alias);
        let all: Vec<String> = self.st.entities.aliases_of(e).map(str::to_owned).collect();
        let kept: Vec<&str> = all.iter().map(String::as_str).filter(|a| name_key(a) != key).collect();
        if kept.len() != all.len() {
            self.set_aliases(e, &kept);
        }
    }

    fn merge_properties(&mut self, e: u32, props: &Properties) {
        if props.is_empty() {
            return;
        }
        let mut merged = self.st.entities.props.get(e).map(|p| p.as_ref().clone()).unwrap_or_default();
        for (k, v) in props {
            if *v == Value::Null {
                merged.remove(k);
            } else {
                merged.insert(k.clone(), v.clone());
            }
        }
        self.st.catalog.note_keys(self.ws, merged.keys().map(AsRef::as_ref), false);
        self.st.entities.set_props(e, Some(merged));
        self.created.touched.entities.push(e);
        self.st.entities.updated_at.insert(e, self.now);
    }

    fn set_entity_deleted(&mut self, e: u32, deleted: bool) {
        let i = e as usize;
        let flags = *self.st.entities.flags.get(i);
        if (flags & DELETED != 0) == deleted {
            return;
        }
        if !deleted {
            self.created.touched.entities.push(e);
        }
        let prev = self.st.entities.last_event.get(&e).copied().unwrap_or(NONE);
        let ev_idx = self.st.entities.events.len() as u32;
        self.st.entities.events.push(EntityEvent { at: self.now, deleted_before: !deleted, prev });
        self.st.entities.last_event.insert(e, ev_idx);
        self.st.entities.updated_at.insert(e, self.now);
        self.st.entities.flags.set(i, if deleted { flags | DELETED } else { flags & !DELETED });
        if !self.st.entity_bitmaps_deferred(e) {
            self.st.bitmaps.entities_deleted.set(e, deleted);
        }
        // The entity's claims are hidden (or shown again) with it.
        for c in self.st.incident_claims(e) {
            self.st.refresh_claim_live(c);
        }
    }

    fn check_not_merged(&self, field: &'static str, e: u32) -> OpResult<()> {
        match self.st.entities.merged_into(e) {
            Some(into) => Err((field, WriteErrorKind::EntityMerged { entity: EntityId(e), into: EntityId(into) })),
            None => Ok(()),
        }
    }

    /// Neither merged away nor deleted: claims may be written about it.
    pub(super) fn check_current(&self, field: &'static str, e: u32) -> OpResult<()> {
        self.check_not_merged(field, e)?;
        if *self.st.entities.flags.get(e as usize) & DELETED != 0 {
            return Err((field, WriteErrorKind::EntityDeleted(EntityId(e))));
        }
        Ok(())
    }

    fn merge_entities(&mut self, from: &EntityRef, into: &EntityRef) -> OpResult<()> {
        let b = self.entity_in("from", from)?;
        let a = self.entity_in("into", into)?;
        if a == b {
            return Err(("into", WriteErrorKind::Invalid("an entity cannot be merged into itself")));
        }
        self.check_current("from", b)?;
        self.check_current("into", a)?;
        // Names first: a merge that would pass the alias limit fails before anything moves.
        let ents = &self.st.entities;
        let mut added: Vec<String> = Vec::new();
        for name in std::iter::once(ents.name.get(b as usize)).chain(ents.aliases_of(b)) {
            let key = name_key(name);
            if !ents.has_key(a, &key) && !added.iter().any(|n| name_key(n) == key) {
                added.push(name.to_owned());
            }
        }
        self.add_aliases(a, &added)?;
        let mut claims = self.st.incident_claims(b);
        claims.sort_unstable();
        claims.dedup();
        let mut moved = Vec::with_capacity(claims.len());
        for c in claims {
            let i = c as usize;
            if *self.st.claims.flags.get(i) & ERASED != 0 {
                continue;
            }
            let (s, o) = (*self.st.claims.subject.get(i), *self.st.claims.object.get(i));
            self.repoint_claim(c, (if s == b { a } else { s }, if o == b { a } else { o }));
            moved.push((c, u8::from(s == b) | u8::from(o == b) << 1));
        }
        self.set_entity_deleted(b, true);
        let idx = self.st.entities.merges.len() as u32;
        self.st.entities.merges.push(MergeRecord {
            from: b,
            into: a,
            at: self.now,
            undone_at: Timestamp::MAX,
            claims: moved.into(),
            aliases: added.iter().map(|n| Arc::from(n.as_str())).collect(),
        });
        self.st.entities.merged.insert(b, idx);
        self.st.entities.updated_at.insert(a, self.now);
        Ok(())
    }

    fn unmerge_entity(&mut self, entity: &EntityRef) -> OpResult<()> {
        let b = self.entity_in("entity", entity)?;
        let Some(&idx) = self.st.entities.merged.get(&b) else {
            return Err(("entity", WriteErrorKind::Invalid("the entity is not merged into another")));
        };
        let record = self.st.entities.merges.get(idx as usize).clone();
        let a = record.into;
        // Undo in reverse order: while the survivor is itself merged away, its claims are not its own.
        self.check_not_merged("entity", a)?;
        self.set_entity_deleted(b, false);
        for &(c, ends) in record.claims.iter() {
            let i = c as usize;
            if *self.st.claims.flags.get(i) & ERASED != 0 {
                continue;
            }
            let (s, o) = (*self.st.claims.subject.get(i), *self.st.claims.object.get(i));
            let back = |end: u32, bit: u8| if ends & bit != 0 && end == a { b } else { end };
            self.repoint_claim(c, (back(s, 1), back(o, 2)));
        }
        if *self.st.entities.flags.get(a as usize) & ERASED == 0 {
            let canonical = name_key(self.st.entities.name.get(a as usize));
            for alias in record.aliases.iter().filter(|n| name_key(n) != canonical) {
                self.remove_alias(a, alias);
            }
            self.st.entities.updated_at.insert(a, self.now);
        }
        self.st.entities.merges.get_mut(idx as usize).undone_at = self.now;
        self.st.entities.merged.remove(&b);
        Ok(())
    }

    /// Gives claim `c` the endpoints `to` (the same row: id, history and evidence stay).
    fn repoint_claim(&mut self, c: u32, to: (u32, u32)) {
        let i = c as usize;
        let from = (*self.st.claims.subject.get(i), *self.st.claims.object.get(i));
        if from == to {
            return;
        }
        self.st.claims.subject.set(i, to.0);
        self.st.claims.object.set(i, to.1);
        self.st.claims.updated_at.insert(c, self.now);
        self.st.link_deferred();
        let pred = *self.st.claims.pred.get(i);
        self.st.graph.repoint(c, pred, from, to);
        self.st.refresh_claim_live(c);
    }

    // ----- claims -----------------------------------------------------------------------------

    /// A predicate or type name, checked, as its vocabulary key.
    fn vocabulary_name<'n>(&self, field: &'static str, name: &'n str) -> OpResult<std::borrow::Cow<'n, str>> {
        // The usual name is printable lower-case ASCII: valid, and its own key, in one pass.
        if is_plain_vocabulary_key(name) {
            check_len(field, name, self.limits.name_bytes_max, "name_bytes_max")?;
            return Ok(std::borrow::Cow::Borrowed(name));
        }
        check_name(field, name, self.limits.name_bytes_max)?;
        Ok(vocabulary_key_of(name))
    }

    fn intern_predicate(&mut self, field: &'static str, name: &str) -> OpResult<PredicateId> {
        let key = self.vocabulary_name(field, name)?;
        self.st
            .catalog
            .predicates
            .intern(&key)
            .map(PredicateId)
            .ok_or((field, WriteErrorKind::Invalid("the predicate vocabulary is full (65,536 names)")))
    }

    /// Adds a claim; `written` for the query language's relationships (the predicate is interned as
    /// written, case kept, and the claim is marked `BARE`).
    pub(super) fn add_claim(&mut self, c: &AddClaim, written: bool) -> OpResult<u32> {
        if let Some(ext) = &c.ext_id {
            check_str("ext_id", ext, self.limits.ext_id_bytes_max, "ext_id_bytes_max")?;
            if self.st.find_claim_ext(self.ws, ext).is_some() {
                return Err(("ext_id", WriteErrorKind::DuplicateId(ext.clone())));
            }
        }
        let s = self.entity_in("subject", &c.subject)?;
        let o = self.entity_in("object", &c.object)?;
        for (field, e) in [("subject", s), ("object", o)] {
            self.check_current(field, e)?;
        }
        check_confidence("confidence", c.confidence)?;
        if let Some(t) = &c.text {
            check_len("text", t, self.limits.text_bytes_max, "text_bytes_max")?;
        }
        let valid_from = c.valid_from.unwrap_or(self.now);
        let valid_until = c.valid_until.unwrap_or(Timestamp::MAX);
        if valid_until <= valid_from {
            return Err(("valid_until", WriteErrorKind::InvalidInterval));
        }
        let expires_at = c.expires_at.unwrap_or(Timestamp::MAX);
        let pred = if written {
            self.intern_written("predicate", &c.predicate).map(PredicateId)?
        } else {
            self.intern_predicate("predicate", &c.predicate)?
        };
        let id = u32::try_from(self.st.claims.len())
            .ok()
            .filter(|&id| id != NONE)
            .ok_or(("ext_id", WriteErrorKind::Invalid("claim table is full")))?;
        // The usual name, `c<id>`, is written on the stack; only a taken one is allocated.
        let mut digits = itoa::Buffer::new();
        let mut positional = [0u8; 11];
        let generated;
        let (ext, by_position): (&str, bool) = match &c.ext_id {
            Some(e) => (e, crate::state::is_positional_claim_id(e, id)),
            None => {
                let base = positional_name(&mut positional, digits.format(id));
                // Row `id` is new, so only a caller's explicit `c<id>` (in the index) can hold it.
                if self.st.find_claim_ext_indexed(self.ws, base).is_none() {
                    (base, true)
                } else {
                    generated = self.generated_claim_id(id);
                    (&generated, false)
                }
            }
        };
        let timed = valid_from > self.now || valid_until != Timestamp::MAX || expires_at != Timestamp::MAX;
        let flags = if timed { TIMED } else { 0 } | if c.sensitive { SENSITIVE } else { 0 } | if written { BARE } else { 0 };
        // Its visibility is pushed with it (`refresh_claim_live` would read back what was just
        // pushed; a new claim is above the CSR, so no base edge goes stale).
        let endpoints = *self.st.entities.flags.get(s as usize) | *self.st.entities.flags.get(o as usize);
        let (live, fast, timed_live) = claim_visibility(flags, c.state, endpoints);
        let cl = &mut self.st.claims;
        cl.subject.push(s);
        cl.object.push(o);
        cl.pred.push(pred.0);
        cl.confidence.push(c.confidence);
        cl.state.push(c.state);
        cl.flags.push(if live { flags | LIVE } else { flags });
        cl.fast.push(fast);
        cl.timed_live.push(timed_live);
        cl.valid_from.push(valid_from);
        cl.valid_until.push(valid_until);
        cl.ext_id.push(ext);
        cl.text.push(c.text.as_deref().unwrap_or(""));
        if self.index_text {
            if let Some(t) = &c.text {
                self.st.text.claims.index(id, self.ws, t);
            }
            self.st.text.recency.insert(id, valid_from);
        }
        cl.evidence_head.push(NONE);
        cl.recorded.note(id, self.now);
        if expires_at != Timestamp::MAX {
            cl.expires_at.insert(id, expires_at);
        }
        if !by_position {
            // `c<id>` is found by position (`State::find_claim_ext`), not through the index.
            cl.by_ext.insert(key_hash(self.ws, ext), id);
        }
        let cat = &mut self.st.catalog;
        cat.note_type(self.ws, pred, c.sensitive);
        if !written {
            cat.note_keys(self.ws, ["text"].into_iter().filter(|_| c.text.is_some()).chain(["confidence", "state"]), c.sensitive);
        }
        if self.link_graph {
            self.st.graph.add_claim(id, s, pred.0, o);
        } else {
            self.st.unlinked_from.get_or_insert(id);
        }
        if !self.st.claim_bitmaps_deferred(id) {
            let bm = &mut self.st.bitmaps;
            bm.claims_by_state[c.state as usize].insert(id);
            bm.claims_by_ws.entry(self.ws).or_default().insert(id);
            if flags & SENSITIVE != 0 {
                bm.claims_sensitive.insert(id);
            }
            bm.claims_by_pred.entry(pred).or_default().insert(id);
            if live {
                bm.claims_live.insert(id);
            }
        }
        self.created.touched.claims.push(id);
        Ok(id)
    }

    /// `c<id>` with a suffix, for when a caller already took `c<id>` itself.
    fn generated_claim_id(&self, id: u32) -> String {
        let base = positional_claim_id(id.into());
        let mut n: u64 = 1;
        loop {
            let candidate = format!("{base}_{n}");
            if self.st.find_claim_ext(self.ws, &candidate).is_none() {
                return candidate;
            }
            n += 1;
        }
    }

    fn record_claim_event(&mut self, c: u32) {
        let i = c as usize;
        let ev = ClaimEvent {
            at: self.now,
            state_before: *self.st.claims.state.get(i),
            deleted_before: *self.st.claims.flags.get(i) & DELETED != 0,
            prev: self.st.claims.last_event.get(&c).copied().unwrap_or(NONE),
        };
        let idx = self.st.claims.events.len() as u32;
        self.st.claims.events.push(ev);
        self.st.claims.last_event.insert(c, idx);
        self.st.claims.updated_at.insert(c, self.now);
    }

    /// Ends claim `c`'s valid time at `valid_until` (after its `valid_from`).
    pub(super) fn end_validity(&mut self, c: u32, valid_until: Timestamp) -> OpResult<()> {
        let i = c as usize;
        if valid_until <= *self.st.claims.valid_from.get(i) {
            return Err(("valid_until", WriteErrorKind::InvalidInterval));
        }
        self.st.claims.valid_until.set(i, valid_until);
        let flags = *self.st.claims.flags.get(i);
        self.st.claims.flags.set(i, flags | TIMED);
        self.st.claims.updated_at.insert(c, self.now);
        self.st.refresh_claim_live(c);
        Ok(())
    }

    pub(super) fn transition(&mut self, c: u32, to: ClaimState) -> OpResult<()> {
        let from = *self.st.claims.state.get(c as usize);
        if from == to {
            return Ok(());
        }
        if !from.can_move_to(to) {
            return Err(("claim", WriteErrorKind::IllegalTransition { from, to }));
        }
        self.record_claim_event(c);
        self.st.claims.state.set(c as usize, to);
        if !self.st.claim_bitmaps_deferred(c) {
            let bm = &mut self.st.bitmaps;
            bm.claims_by_state[from as usize].remove(c);
            bm.claims_by_state[to as usize].insert(c);
        }
        self.st.refresh_claim_live(c);
        Ok(())
    }

    fn deprecate(&mut self, claim: &ClaimRef, superseded_by: Option<&ClaimRef>) -> OpResult<()> {
        let c = self.claim(claim, "claim")?;
        let by = superseded_by.map(|r| self.claim(r, "superseded_by")).transpose()?;
        if by == Some(c) {
            return Err(("superseded_by", WriteErrorKind::SelfSupersession));
        }
        let from = *self.st.claims.state.get(c as usize);
        if from == ClaimState::Deprecated {
            return Err(("claim", WriteErrorKind::IllegalTransition { from, to: ClaimState::Deprecated }));
        }
        self.transition(c, ClaimState::Deprecated)?;
        if let Some(b) = by {
            // The replacement keeps at least the sensitivity of what it replaces.
            let old = self.st.claim_tags(c);
            if let Some(level) = old.get(crate::tags::SENSITIVITY) {
                let mut own: Tags = self.st.claims.tags.get(&b).map(|t| (**t).clone()).unwrap_or_default();
                crate::tags::inherit(&mut own, &Tags::from([(Arc::from(crate::tags::SENSITIVITY), level.clone())]));
                self.st.claims.tags.insert(b, Arc::new(own));
                self.refresh_sensitive(b);
            }
            self.st.claims.superseded_by.insert(c, b);
            let list = self.st.claims.supersedes.entry(b).or_insert_with(|| Arc::from(Vec::new()));
            let mut v = list.to_vec();
            v.push(ClaimId(c));
            *list = Arc::from(v);
        }
        Ok(())
    }

    /// `Op::SetTags`: validates every tag first (nothing changes on an error), then merges.
    fn set_tags(&mut self, target: &TagTarget, set: &BTreeMap<String, String>, remove: &[String], inherit: bool) -> OpResult<()> {
        for (k, v) in set {
            crate::tags::check(k, v).map_err(|e| ("set", WriteErrorKind::BadTag(e)))?;
        }
        if set.keys().chain(remove).any(|k| k == crate::pii::TAG) {
            return Err(("set", WriteErrorKind::BadTag(format!("tag key `{}` is kept by the PII detector", crate::pii::TAG))));
        }
        let new: Tags = set.iter().map(|(k, v)| (Arc::from(k.as_str()), Arc::from(v.as_str()))).collect();
        let merge = |had: Option<&Arc<Tags>>| -> Result<Option<Arc<Tags>>, (&'static str, WriteErrorKind)> {
            let mut t: Tags = had.map(|t| (**t).clone()).unwrap_or_default();
            for k in remove {
                t.remove(k.as_str());
            }
            if inherit {
                crate::tags::inherit(&mut t, &new);
            } else {
                t.extend(new.clone());
            }
            if t.len() > crate::tags::TAGS_MAX {
                return Err(("set", WriteErrorKind::TooMany { count: t.len(), limit: crate::tags::TAGS_MAX, limit_name: "TAGS_MAX" }));
            }
            Ok((!t.is_empty()).then(|| Arc::new(t)))
        };
        match target {
            TagTarget::Entity(r) => {
                let e = self.entity_in("target", r)?;
                match merge(self.st.entities.tags.get(&e))? {
                    Some(t) => self.st.entities.tags.insert(e, t),
                    None => self.st.entities.tags.remove(&e),
                };
                self.st.entities.updated_at.insert(e, self.now);
            }
            TagTarget::Claim(r) => {
                let c = self.claim(r, "target")?;
                match merge(self.st.claims.tags.get(&c))? {
                    Some(t) => self.st.claims.tags.insert(c, t),
                    None => self.st.claims.tags.remove(&c),
                };
                self.st.claims.updated_at.insert(c, self.now);
                self.refresh_sensitive(c);
            }
            TagTarget::Message { conversation_id, message_id } => {
                check_str("conversation_id", conversation_id, self.limits.ext_id_bytes_max, "ext_id_bytes_max")?;
                if let Some(m) = message_id {
                    check_str("message_id", m, self.limits.ext_id_bytes_max, "ext_id_bytes_max")?;
                }
                let key = crate::state::message_key(self.ws, conversation_id, message_id.as_deref());
                match merge(self.st.evidence.message_tags.get(&key))? {
                    Some(t) => self.st.evidence.message_tags.insert(key, t),
                    None => self.st.evidence.message_tags.remove(&key),
                };
                // The claims with evidence from it take its tags now.
                let mut touched: Vec<u32> = self
                    .st
                    .evidence
                    .rows
                    .iter()
                    .filter(|row| {
                        row.conversation_id.as_deref() == Some(conversation_id.as_str())
                            && (message_id.is_none() || row.message_id.as_deref() == message_id.as_deref())
                    })
                    .map(|row| row.claim.0)
                    .filter(|c| self.st.claim_ws(*c) == self.ws)
                    .collect();
                touched.sort_unstable();
                touched.dedup();
                for c in touched {
                    self.refresh_sensitive(c);
                }
            }
        }
        Ok(())
    }

    /// Keeps claim `c`'s `SENSITIVE` flag equal to its tags (`sensitivity=sensitive`, its own or
    /// from its evidence's messages). A claim that becomes visible to everyone notes its names
    /// as public.
    pub(super) fn refresh_sensitive(&mut self, c: u32) {
        let i = c as usize;
        let flags = *self.st.claims.flags.get(i);
        if flags & ERASED != 0 {
            return;
        }
        let should = self.st.claim_tagged_sensitive(c);
        if (flags & SENSITIVE != 0) == should {
            return;
        }
        self.st.claims.flags.set(i, if should { flags | SENSITIVE } else { flags & !SENSITIVE });
        if !self.st.claim_bitmaps_deferred(c) {
            self.st.bitmaps.claims_sensitive.set(c, should);
        }
        if !should {
            let pred = PredicateId(*self.st.claims.pred.get(i));
            let keys: Vec<Arc<str>> = self.st.claims.props.get(c).map(|p| p.keys().cloned().collect()).unwrap_or_default();
            let text = !self.st.claims.text.get(i).is_empty();
            let cat = &mut self.st.catalog;
            cat.note_type(self.ws, pred, false);
            cat.note_keys(
                self.ws,
                keys.iter().map(|k| &**k).chain(["text"].into_iter().filter(|_| text)).chain(["confidence", "state"]),
                false,
            );
        }
    }

    fn set_claim_deleted(&mut self, c: u32, deleted: bool) {
        let i = c as usize;
        let flags = *self.st.claims.flags.get(i);
        if (flags & DELETED != 0) == deleted {
            return;
        }
        if !deleted {
            self.created.touched.claims.push(c);
        }
        self.record_claim_event(c);
        self.st.claims.flags.set(i, if deleted { flags | DELETED } else { flags & !DELETED });
        if !self.st.claim_bitmaps_deferred(c) {
            self.st.bitmaps.claims_deleted.set(c, deleted);
        }
        self.st.refresh_claim_live(c);
    }

    fn add_evidence(&mut self, v: &AddEvidence) -> OpResult<()> {
        let claim = v.claim.as_ref().ok_or(("claim", WriteErrorKind::Empty))?;
        let c = self.claim(claim, "claim")?;
        if let Some(rc) = v.raw_confidence {
            check_confidence("raw_confidence", rc)?;
        }
        for (field, s) in [
            ("conversation_id", &v.conversation_id),
            ("message_id", &v.message_id),
            ("model", &v.model),
            ("model_version", &v.model_version),
        ] {
            if let Some(s) = s {
                check_len(field, s, self.limits.ext_id_bytes_max, "ext_id_bytes_max")?;
            }
        }
        for (field, s) in [("snippet", &v.snippet), ("reasoning", &v.reasoning)] {
            if let Some(s) = s {
                check_len(field, s, self.limits.text_bytes_max, "text_bytes_max")?;
            }
        }
        let id = self.st.evidence.rows.len() as u32;
        let ext: Arc<str> = match &v.ext_id {
            Some(e) => {
                check_str("ext_id", e, self.limits.ext_id_bytes_max, "ext_id_bytes_max")?;
                if self.st.find_evidence_ext(self.ws, e).is_some() {
                    return Err(("ext_id", WriteErrorKind::DuplicateId(e.clone())));
                }
                Arc::from(e.as_str())
            }
            None => {
                let mut candidate = format!("v{id}");
                let mut n = 1;
                while self.st.find_evidence_ext(self.ws, &candidate).is_some() {
                    candidate = format!("v{id}_{n}");
                    n += 1;
                }
                Arc::from(candidate)
            }
        };
        let head = *self.st.claims.evidence_head.get(c as usize);
        self.st.evidence.rows.push(EvidenceRow {
            claim: ClaimId(c),
            ext_id: Some(ext.clone()),
            conversation_id: opt_arc(v.conversation_id.as_ref()),
            message_id: opt_arc(v.message_id.as_ref()),
            model: opt_arc(v.model.as_ref()),
            model_version: opt_arc(v.model_version.as_ref()),
            raw_confidence: v.raw_confidence,
            snippet: opt_arc(v.snippet.as_ref()),
            reasoning: opt_arc(v.reasoning.as_ref()),
            observed_at: v.observed_at.unwrap_or(self.now),
            recorded_at: self.now,
            next: head,
        });
        self.st.evidence.by_ext.insert(key_hash(self.ws, &ext), id);
        self.st.claims.evidence_head.set(c as usize, id);
        self.created.evidence.push(crate::ids::EvidenceId(id));
        if v.conversation_id.is_some() && !self.st.evidence.message_tags.is_empty() {
            // Its message's tags join the claim's.
            self.refresh_sensitive(c);
        }
        Ok(())
    }

    fn declare_predicate(&mut self, d: &DeclarePredicate) -> OpResult<()> {
        let pred = self.intern_predicate("name", &d.name)?;
        if let Some(h) = d.half_life_days {
            if !h.is_finite() {
                return Err(("half_life_days", WriteErrorKind::NotFinite));
            }
            if h <= 0.0 {
                return Err(("half_life_days", WriteErrorKind::Invalid("half_life_days must be positive")));
            }
        }
        let inverse = match &d.inverse {
            Some(inv) => {
                check_name("inverse", inv, self.limits.name_bytes_max)?;
                Some(Arc::<str>::from(vocabulary_key(inv)))
            }
            None => None,
        };
        let def = PredicateDef {
            name: self.st.catalog.predicates.name(pred.0).clone(),
            cardinality: d.cardinality,
            inverse,
            transitive: d.transitive,
            half_life_days: d.half_life_days,
        };
        self.st.catalog.predicate_defs.insert((self.ws, pred), def);
        Ok(())
    }
}
