//! The state of the database at one commit: catalog, tables, indexes and graph.
//!
//! A `State` is immutable once published (`Arc<State>`). The writer clones the published state
//! (cheap: every column is copy-on-write), applies a batch to the clone, and publishes the clone.
//! A batch that fails part-way is simply dropped, so a failed transaction cannot leave a trace.

use crate::bitmap::IdSet;
use crate::cow::CowVec;
use crate::graph::Graph;
use crate::ids::{ClaimId, EntityId, PredicateId, TypeId, WorkspaceId, NONE};
use crate::model::{ClaimState, PredicateDef, WorkspaceInfo};
use crate::time::Timestamp;
use crate::value::Properties;
use std::sync::Arc;

/// Claim flag: visible in the lifecycle sense (not deprecated, not deleted, endpoints not deleted,
/// workspace not dropped). The hot traversal loops test this bit.
pub(crate) const LIVE: u8 = 1;
/// Claim flag: has a time bound that "now" can cross (future `valid_from`, finite `valid_until`
/// or expiry), so its time columns must be checked.
pub(crate) const TIMED: u8 = 2;
/// Claim/entity flag: soft-deleted.
pub(crate) const DELETED: u8 = 4;
/// Claim flag: sensitive.
pub(crate) const SENSITIVE: u8 = 8;
/// Claim/entity flag: its workspace was dropped; the row is erased and never served.
pub(crate) const ERASED: u8 = 16;

/// A string interner for predicate and type names (global; at most 65,536 names).
#[derive(Clone, Debug, Default)]
pub struct Interner {
    names: Arc<Vec<Arc<str>>>,
    ids: imbl::HashMap<Arc<str>, u16>,
}

impl Interner {
    /// The id of an already interned key.
    pub fn get(&self, key: &str) -> Option<u16> {
        self.ids.get(key).copied()
    }

    /// Interns `key` (already normalised); `None` when the table is full.
    pub fn intern(&mut self, key: &str) -> Option<u16> {
        if let Some(id) = self.get(key) {
            return Some(id);
        }
        let id = u16::try_from(self.names.len()).ok()?;
        let name: Arc<str> = Arc::from(key);
        Arc::make_mut(&mut self.names).push(name.clone());
        self.ids.insert(name, id);
        Some(id)
    }

    /// The name of `id`.
    pub fn name(&self, id: u16) -> &Arc<str> {
        &self.names[id as usize]
    }

    /// Number of names.
    pub fn len(&self) -> usize {
        self.names.len()
    }
}

/// Workspaces and vocabularies.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    /// By id; `None` once dropped.
    pub workspaces: Arc<Vec<Option<WorkspaceInfo>>>,
    pub workspace_by_name: imbl::HashMap<Arc<str>, WorkspaceId>,
    pub predicates: Interner,
    pub types: Interner,
    pub predicate_defs: imbl::HashMap<(WorkspaceId, PredicateId), PredicateDef>,
}

impl Catalog {
    /// The live workspace named `name`.
    pub fn workspace(&self, name: &str) -> Option<WorkspaceId> {
        self.workspace_by_name.get(name).copied()
    }

    /// The declaration of `pred` in `ws`, or the undeclared default.
    pub fn predicate_def(&self, ws: WorkspaceId, pred: PredicateId) -> PredicateDef {
        self.predicate_defs.get(&(ws, pred)).cloned().unwrap_or_else(|| PredicateDef::undeclared(self.predicates.name(pred.0).clone()))
    }
}

/// The cold part of an entity row.
#[derive(Clone, Debug)]
pub struct EntityRecord {
    pub ext_id: Arc<str>,
    pub name: Arc<str>,
    pub aliases: Arc<[Arc<str>]>,
    pub props: Option<Arc<Properties>>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Head of this entity's deletion history in `Entities::events`.
    pub last_event: u32,
}

/// A change of an entity's deleted flag, with the value before it (transaction-time history).
#[derive(Clone, Copy, Debug)]
pub struct EntityEvent {
    pub at: Timestamp,
    pub deleted_before: bool,
    pub prev: u32,
}

/// The entity table: hot columns apart, cold fields in one record column.
#[derive(Clone, Debug, Default)]
pub struct Entities {
    pub ws: CowVec<WorkspaceId>,
    pub ty: CowVec<TypeId>,
    pub flags: CowVec<u8>,
    pub rec: CowVec<EntityRecord>,
    pub events: CowVec<EntityEvent>,
    pub by_ext: imbl::HashMap<(WorkspaceId, Arc<str>), EntityId>,
    /// Normalised name/alias key → entities carrying it.
    pub by_name: imbl::HashMap<(WorkspaceId, Arc<str>), Arc<[EntityId]>>,
}

impl Entities {
    /// Number of rows (including deleted and erased).
    pub fn len(&self) -> usize {
        self.ws.len()
    }
}

/// The cold part of a claim row.
#[derive(Clone, Debug)]
pub struct ClaimRecord {
    pub ext_id: Option<Arc<str>>,
    pub text: Option<Arc<str>>,
    pub recorded_at: Timestamp,
    pub updated_at: Timestamp,
    pub expires_at: Timestamp,
    pub superseded_by: u32,
    pub last_event: u32,
    pub evidence_head: u32,
}

/// A change of a claim's state or deleted flag, with the values before it.
#[derive(Clone, Copy, Debug)]
pub struct ClaimEvent {
    pub at: Timestamp,
    pub state_before: ClaimState,
    pub deleted_before: bool,
    pub prev: u32,
}

/// The claim table.
#[derive(Clone, Debug, Default)]
pub struct Claims {
    pub ws: CowVec<WorkspaceId>,
    pub subject: CowVec<u32>,
    pub object: CowVec<u32>,
    pub pred: CowVec<u16>,
    pub confidence: CowVec<f32>,
    pub state: CowVec<ClaimState>,
    pub flags: CowVec<u8>,
    pub valid_from: CowVec<Timestamp>,
    pub valid_until: CowVec<Timestamp>,
    pub rec: CowVec<ClaimRecord>,
    pub events: CowVec<ClaimEvent>,
    pub by_ext: imbl::HashMap<(WorkspaceId, Arc<str>), ClaimId>,
    /// Replacement → the claims it superseded.
    pub supersedes: imbl::HashMap<u32, Arc<[ClaimId]>>,
}

impl Claims {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.ws.len()
    }
}

/// One evidence row.
#[derive(Clone, Debug)]
pub struct EvidenceRow {
    pub claim: ClaimId,
    pub ext_id: Option<Arc<str>>,
    pub conversation_id: Option<Arc<str>>,
    pub message_id: Option<Arc<str>>,
    pub model: Option<Arc<str>>,
    pub model_version: Option<Arc<str>>,
    pub raw_confidence: Option<f32>,
    pub snippet: Option<Arc<str>>,
    pub observed_at: Timestamp,
    pub recorded_at: Timestamp,
    /// Next (older) evidence row of the same claim.
    pub next: u32,
}

/// The evidence table.
#[derive(Clone, Debug, Default)]
pub struct EvidenceTable {
    pub rows: CowVec<EvidenceRow>,
    pub by_ext: imbl::HashMap<(WorkspaceId, Arc<str>), u32>,
}

/// Roaring bitmaps over entity and claim ids, kept in step with every write.
#[derive(Clone, Debug, Default)]
pub struct Bitmaps {
    pub claims_by_state: [IdSet; 3],
    pub claims_deleted: IdSet,
    /// Mirrors the `LIVE` flag: the lifecycle-visible claims.
    pub claims_live: IdSet,
    pub claims_by_ws: imbl::HashMap<WorkspaceId, IdSet>,
    pub claims_by_pred: imbl::HashMap<PredicateId, IdSet>,
    pub entities_by_ws: imbl::HashMap<WorkspaceId, IdSet>,
    pub entities_by_type: imbl::HashMap<TypeId, IdSet>,
    pub entities_deleted: IdSet,
}

/// Everything at one commit.
#[derive(Clone, Debug, Default)]
pub struct State {
    /// Commit counter: 0 for the empty database, +1 per published change.
    pub version: u64,
    /// Transaction time of the last commit.
    pub committed_at: Timestamp,
    pub catalog: Catalog,
    pub entities: Entities,
    pub claims: Claims,
    pub evidence: EvidenceTable,
    pub graph: Graph,
    pub bitmaps: Bitmaps,
}

impl State {
    /// Recomputes claim `c`'s `LIVE` flag from its state, deletion and endpoints, keeping the live
    /// bitmap in step.
    pub fn refresh_claim_live(&mut self, c: u32) {
        let i = c as usize;
        let flags = *self.claims.flags.get(i);
        let s = *self.claims.subject.get(i) as usize;
        let o = *self.claims.object.get(i) as usize;
        let endpoints_ok = (*self.entities.flags.get(s) | *self.entities.flags.get(o)) & (DELETED | ERASED) == 0;
        let live = flags & (DELETED | ERASED) == 0 && *self.claims.state.get(i) != ClaimState::Deprecated && endpoints_ok;
        let new_flags = if live { flags | LIVE } else { flags & !LIVE };
        if new_flags != flags {
            self.claims.flags.set(i, new_flags);
        }
        self.bitmaps.claims_live.set(c, live);
    }

    /// Whether claim `c` is valid and unexpired at valid time `t`.
    #[inline]
    pub fn claim_valid_at(&self, c: u32, t: Timestamp) -> bool {
        let i = c as usize;
        *self.claims.valid_from.get(i) <= t && t < *self.claims.valid_until.get(i) && t < self.claims.rec.get(i).expires_at
    }

    /// `(state, deleted)` of claim `c` as recorded at transaction time `k`.
    pub fn claim_lifecycle_at(&self, c: u32, k: Timestamp) -> (ClaimState, bool) {
        let i = c as usize;
        let mut state = *self.claims.state.get(i);
        let mut deleted = *self.claims.flags.get(i) & DELETED != 0;
        let mut ev = self.claims.rec.get(i).last_event;
        while ev != NONE {
            let e = self.claims.events.get(ev as usize);
            if e.at <= k {
                break;
            }
            state = e.state_before;
            deleted = e.deleted_before;
            ev = e.prev;
        }
        (state, deleted)
    }

    /// Whether entity `e` was deleted as recorded at transaction time `k`.
    pub fn entity_deleted_at(&self, e: u32, k: Timestamp) -> bool {
        let i = e as usize;
        let mut deleted = *self.entities.flags.get(i) & DELETED != 0;
        let mut ev = self.entities.rec.get(i).last_event;
        while ev != NONE {
            let x = self.entities.events.get(ev as usize);
            if x.at <= k {
                break;
            }
            deleted = x.deleted_before;
            ev = x.prev;
        }
        deleted
    }
}
