//! Read views: a `Snapshot` pins one published state; a `WorkspaceView` scopes it to one workspace.
//!
//! Every read goes through a `WorkspaceView`, and every id it accepts is checked to belong to its
//! workspace, so isolation is enforced here in the engine, not by callers.

use crate::error::ReadError;
use crate::ids::{ClaimId, EntityId, EvidenceId, WorkspaceId};
use crate::index::keyindex::key_hash;
use crate::model::{Claim, Entity, Evidence, PredicateDef, WorkspaceInfo};
use crate::normalize::{name_key, vocabulary_key};
use crate::read::policy::Hidden;
use crate::read::scope::{ReadContext, ROOT_CONTEXT};
use crate::read::visibility::{Vis, Visibility};
use crate::state::{State, DELETED, ERASED, SENSITIVE};
use crate::time::Timestamp;
use std::sync::Arc;

/// A consistent, immutable view of the database at one commit. Holding it never blocks writers.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub(crate) state: Arc<State>,
    pub(crate) now: Timestamp,
}

impl Snapshot {
    /// The commit counter this snapshot shows.
    pub fn version(&self) -> u64 {
        self.state.version
    }

    /// The "now" this snapshot evaluates validity at (taken from the clock when it was opened).
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// A copy evaluating validity at another "now" (tests and replays).
    #[must_use]
    pub fn at(&self, now: Timestamp) -> Snapshot {
        Snapshot { state: self.state.clone(), now }
    }

    /// Live workspaces, by name.
    pub fn workspaces(&self) -> Vec<WorkspaceInfo> {
        let mut v: Vec<WorkspaceInfo> = self.state.catalog.workspaces.iter().flatten().cloned().collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    /// A view of workspace `name`.
    pub fn workspace(&self, name: &str) -> Result<WorkspaceView<'_>, ReadError> {
        let ws = self.state.catalog.workspace(name).ok_or_else(|| ReadError::UnknownWorkspace(name.to_owned()))?;
        Ok(WorkspaceView {
            st: &self.state,
            ws,
            now: self.now,
            hide_sensitive: false,
            hidden_keys: None,
            cx: &ROOT_CONTEXT,
            sees_sensitive: true,
            policy: None,
            masked: None,
        })
    }

    /// Entities, claims and evidence rows held (all workspaces, deleted included).
    pub fn counts(&self) -> (usize, usize, usize) {
        (self.state.entities.len(), self.state.claims.len(), self.state.evidence.rows.len())
    }

    /// Whether both keyword indexes are built: loaded with the snapshot at open, or built by a
    /// first query (until then a keyword query pays for the build).
    pub fn keyword_index_ready(&self) -> bool {
        self.state.text.claims.is_built() && self.state.text.entities.is_built()
    }

    /// Edges in the delta overlay (two per claim not yet merged into the base CSR).
    pub fn delta_edges(&self) -> usize {
        self.state.graph.delta_len()
    }
}

/// One workspace of a snapshot: the scope of every read.
#[derive(Clone, Copy, Debug)]
pub struct WorkspaceView<'a> {
    pub(crate) st: &'a State,
    pub(crate) ws: WorkspaceId,
    pub(crate) now: Timestamp,
    /// Sensitive claims do not exist for this view (a principal without `see_sensitive`).
    pub(crate) hide_sensitive: bool,
    /// Property keys that do not exist for this view (the workspace's `sensitive_properties`, for
    /// a principal without `see_sensitive`), comma-separated.
    pub(crate) hidden_keys: Option<&'a str>,
    /// Read limits and interruption (`ROOT_CONTEXT` for unscoped views).
    pub(crate) cx: &'a ReadContext,
    /// The principal sees sensitive content (`hide_sensitive` is false also for a principal that
    /// does not, where the workspace has none now; names the principal may never meet depend on
    /// this, not on the data).
    pub(crate) sees_sensitive: bool,
    /// The rows the principal's row policies hide here (`None`: no policy applies, or it hides
    /// nothing).
    pub(crate) policy: Option<&'a Hidden>,
    /// The values the principal's masking policies mask here (`None`: none).
    pub(crate) masked: Option<&'a crate::read::mask::Masked>,
}

impl<'a> WorkspaceView<'a> {
    /// This workspace's id.
    pub fn id(&self) -> WorkspaceId {
        self.ws
    }

    pub(crate) fn vis(&self, v: &Visibility) -> Vis<'a> {
        Vis::new(v, self.st, self.now, self.hide_sensitive, self.policy)
    }

    /// The read limits and interruption of this view.
    pub fn context(&self) -> &'a ReadContext {
        self.cx
    }

    /// Whether some rows of this workspace are hidden from this view (sensitive ones, or rows
    /// a row policy hides): names and counts must then come from what the view sees.
    pub fn hides_rows(&self) -> bool {
        self.hide_sensitive || self.policy.is_some()
    }

    /// The claims of this workspace hidden from this view, ascending (empty for most views).
    pub(crate) fn hidden_claims(&self) -> Vec<u32> {
        let mut out: Vec<u32> = if self.hide_sensitive {
            self.st.bitmaps.claims_sensitive.iter().filter(|&c| self.st.claim_ws(c) == self.ws).collect()
        } else {
            Vec::new()
        };
        if let Some(h) = self.policy {
            out.extend(h.claims.iter());
            out.sort_unstable();
            out.dedup();
        }
        out
    }

    /// Whether claim `c` is hidden from this view whatever the visibility (sensitive, for a
    /// principal that may not see it; or hidden by a row policy).
    #[inline]
    pub(crate) fn hidden(&self, c: u32) -> bool {
        (self.hide_sensitive && *self.st.claims.flags.get(c as usize) & SENSITIVE != 0) || self.policy.is_some_and(|h| h.claims.contains(c))
    }

    /// The entities of this workspace a row policy hides from this view, ascending.
    pub(crate) fn hidden_entities(&self) -> Vec<u32> {
        self.policy.map_or_else(Vec::new, |h| h.entities.iter().collect())
    }

    /// Whether entity `e` is hidden from this view by a row policy.
    #[inline]
    pub(crate) fn hidden_entity(&self, e: u32) -> bool {
        self.policy.is_some_and(|h| h.entities.contains(e))
    }

    /// Whether property `key` is hidden from this view.
    #[inline]
    pub(crate) fn hidden_key(&self, key: &str) -> bool {
        self.hidden_keys.is_some_and(|keys| keys.split(',').any(|k| k == key))
    }

    /// Checks that `e` is an entity of this workspace (deleted ones included).
    pub(crate) fn check_entity(&self, e: EntityId) -> Result<(), ReadError> {
        match self.st.entities.ws.try_get(e.index()) {
            Some(w) if *w == self.ws && *self.st.entities.flags.get(e.index()) & ERASED == 0 && !self.hidden_entity(e.0) => Ok(()),
            _ => Err(ReadError::UnknownEntity(e)),
        }
    }

    pub(crate) fn check_claim(&self, c: ClaimId) -> Result<(), ReadError> {
        if c.index() < self.st.claims.len()
            && self.st.claim_ws(c.0) == self.ws
            && *self.st.claims.flags.get(c.index()) & ERASED == 0
            && !self.hidden(c.0)
        {
            Ok(())
        } else {
            Err(ReadError::UnknownClaim(c))
        }
    }

    /// The entity a person or an agent names: by external id, else by its one name.
    pub fn entity_by_id_or_name(&self, text: &str) -> Result<EntityId, ReadError> {
        if let Some(e) = self.entity_id(text) {
            return Ok(e);
        }
        match self.find_by_name(text).as_slice() {
            [one] => Ok(*one),
            [] => Err(ReadError::NoEntityNamed(text.to_owned())),
            many => Err(ReadError::AmbiguousName { name: text.to_owned(), count: many.len() }),
        }
    }

    /// The workspace's stored setting `key`, if set.
    pub(crate) fn setting(&self, key: &str) -> Option<&'a str> {
        let st: &'a State = self.st;
        let name = st.catalog.workspace_by_name.iter().find(|(_, id)| **id == self.ws).map(|(n, _)| n)?;
        st.settings.workspaces.get(&**name)?.get(key).map(String::as_str)
    }

    /// The entity with this dense id, if it is in this workspace (deleted ones included, flagged).
    pub fn entity(&self, e: EntityId) -> Option<Entity> {
        self.check_entity(e).ok()?;
        let i = e.index();
        let ents = &self.st.entities;
        Some(Entity {
            id: e,
            ext_id: Arc::from(ents.ext_id.get(i)),
            workspace: self.ws,
            entity_type: self.st.catalog.types.name(ents.ty.get(i).0).clone(),
            name: Arc::from(ents.name.get(i)),
            aliases: ents.aliases_of(e.0).map(Arc::from).collect(),
            properties: self.entity_properties(e).map(|(k, v)| (k.clone(), v.clone())).collect(),
            created_at: ents.created.at(e.0),
            updated_at: ents.updated_at(e.0),
            deleted: *ents.flags.get(i) & DELETED != 0,
            merged_into: ents.merged_into(e.0).map(EntityId),
        })
    }

    /// The dense id of the entity with this external id.
    pub fn entity_id(&self, ext_id: &str) -> Option<EntityId> {
        self.st.entities.find_ext(self.ws, ext_id).filter(|&e| !self.hidden_entity(e)).map(EntityId)
    }

    /// The merges `e` took part in (retired or surviving), oldest first, undone ones included.
    pub fn merges_of(&self, e: EntityId) -> Vec<crate::model::Merge> {
        if self.check_entity(e).is_err() {
            return Vec::new();
        }
        self.st
            .entities
            .merges
            .iter()
            .filter(|m| (m.from == e.0 || m.into == e.0) && !self.hidden_entity(m.from) && !self.hidden_entity(m.into))
            .map(|m| crate::model::Merge {
                from: EntityId(m.from),
                into: EntityId(m.into),
                at: m.at,
                undone_at: (m.undone_at != Timestamp::MAX).then_some(m.undone_at),
                claims: m.claims.len(),
                aliases: m.aliases.to_vec(),
            })
            .collect()
    }

    /// Entities whose canonical name or an alias has the same normalised key as `name`
    /// ("Auth Service" finds `AuthService`), deleted ones excluded, in id order.
    pub fn find_by_name(&self, name: &str) -> Vec<EntityId> {
        let key = name_key(name);
        let ents = &self.st.entities;
        let mut v = Vec::new();
        ents.by_name.candidates(key_hash(self.ws, &key), |e| {
            let i = e as usize;
            if *ents.ws.get(i) == self.ws && *ents.flags.get(i) & (DELETED | ERASED) == 0 && !self.hidden_entity(e) && ents.has_key(e, &key)
            {
                v.push(EntityId(e));
            }
        });
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The claim with this dense id, if it is in this workspace (whatever its state).
    pub fn claim(&self, c: ClaimId) -> Option<Claim> {
        self.check_claim(c).ok()?;
        let i = c.index();
        let cl = &self.st.claims;
        let flags = *cl.flags.get(i);
        let text = self.masked.and_then(|m| m.claim_text.get(&c.0)).map_or_else(|| cl.text.get(i), |t| &**t);
        Some(Claim {
            id: c,
            ext_id: Arc::from(cl.ext_id.get(i)),
            workspace: self.ws,
            subject: EntityId(*self.st.claims.subject.get(i)),
            predicate: self.st.catalog.predicates.name(*self.st.claims.pred.get(i)).clone(),
            object: EntityId(*self.st.claims.object.get(i)),
            text: (!text.is_empty()).then(|| Arc::from(text)),
            confidence: *self.st.claims.confidence.get(i),
            state: *self.st.claims.state.get(i),
            valid_from: *self.st.claims.valid_from.get(i),
            valid_until: *self.st.claims.valid_until.get(i),
            recorded_at: cl.recorded.at(c.0),
            updated_at: cl.updated_at(c.0),
            superseded_by: cl.superseded_by.get(&c.0).filter(|b| !self.hidden(**b)).map(|b| ClaimId(*b)),
            deleted: flags & DELETED != 0,
            expires_at: cl.expires_at(c.0),
            sensitive: flags & SENSITIVE != 0,
        })
    }

    /// The dense id of the claim with this external id.
    pub fn claim_id(&self, ext_id: &str) -> Option<ClaimId> {
        self.st.find_claim_ext(self.ws, ext_id).filter(|&c| !self.hidden(c)).map(ClaimId)
    }

    /// Whether claim `c` is visible under `v` (false when it is not in this workspace).
    pub fn claim_visible(&self, c: ClaimId, v: &Visibility) -> bool {
        self.check_claim(c).is_ok() && self.vis(v).claim(self.st, c.0)
    }

    /// One evidence row.
    pub fn evidence(&self, v: EvidenceId) -> Option<Evidence> {
        let row = self.st.evidence.rows.try_get(v.index())?;
        self.check_claim(row.claim).ok()?;
        Some(Evidence {
            id: v,
            ext_id: row.ext_id.clone().unwrap_or_else(|| Arc::from(format!("v{}", v.0))),
            claim: row.claim,
            conversation_id: row.conversation_id.clone(),
            message_id: row.message_id.clone(),
            model: row.model.clone(),
            model_version: row.model_version.clone(),
            raw_confidence: row.raw_confidence,
            snippet: row.snippet.as_ref().and_then(|t| self.masked.map_or_else(|| Some(t.clone()), |m| m.evidence_text(row.claim.0, t))),
            reasoning: row
                .reasoning
                .as_ref()
                .and_then(|t| self.masked.map_or_else(|| Some(t.clone()), |m| m.evidence_text(row.claim.0, t))),
            observed_at: row.observed_at,
            recorded_at: row.recorded_at,
        })
    }

    /// A claim's evidence, oldest first.
    pub fn evidence_of(&self, c: ClaimId) -> Result<Vec<Evidence>, ReadError> {
        self.check_claim(c)?;
        let mut out: Vec<Evidence> = self.claim_evidence(c).filter_map(|v| self.evidence(v)).collect();
        out.reverse();
        Ok(out)
    }

    /// The declaration of a predicate here (the undeclared default if it was never declared;
    /// `None` if the name was never used anywhere).
    pub fn predicate(&self, name: &str) -> Option<PredicateDef> {
        let p = self.st.catalog.predicates.get(&vocabulary_key(name))?;
        Some(self.st.catalog.predicate_def(self.ws, crate::ids::PredicateId(p)))
    }

    /// The supersession chain through `c`, oldest first: the claims it replaced (following the
    /// earliest predecessor at each step), `c`, then its replacements up to the current one.
    pub fn supersession_chain(&self, c: ClaimId) -> Result<Vec<ClaimId>, ReadError> {
        self.check_claim(c)?;
        let mut back = Vec::new();
        let mut seen = std::collections::HashSet::from([c]);
        let mut cur = c;
        while let Some(prev) = self.st.claims.supersedes.get(&cur.0).and_then(|l| l.iter().filter(|p| !self.hidden(p.0)).min().copied()) {
            if !seen.insert(prev) {
                break;
            }
            back.push(prev);
            cur = prev;
        }
        back.reverse();
        back.push(c);
        let mut cur = c;
        while let Some(&next) = self.st.claims.superseded_by.get(&cur.0) {
            if self.hidden(next) || !seen.insert(ClaimId(next)) {
                break;
            }
            back.push(ClaimId(next));
            cur = ClaimId(next);
        }
        Ok(back)
    }

    /// The claims that `c` directly superseded.
    pub fn superseded_by_claim(&self, c: ClaimId) -> Result<Vec<ClaimId>, ReadError> {
        self.check_claim(c)?;
        let mut v = self.st.claims.supersedes.get(&c.0).map(|l| l.to_vec()).unwrap_or_default();
        v.retain(|&p| !self.hidden(p.0));
        v.sort_unstable();
        Ok(v)
    }

    /// Entities of this workspace with the given type (deleted excluded), via the type bitmap.
    pub fn entities_of_type(&self, entity_type: &str) -> Vec<EntityId> {
        let Some(t) = self.st.catalog.types.get(&vocabulary_key(entity_type)) else { return Vec::new() };
        let bm = &self.st.bitmaps;
        let (Some(by_type), Some(by_ws)) = (bm.entities_by_type.get(&crate::ids::TypeId(t)), bm.entities_by_ws.get(&self.ws)) else {
            return Vec::new();
        };
        by_type.and(by_ws).and_not(&bm.entities_deleted).iter().map(EntityId).collect()
    }

    /// Every claim of this workspace whose predicate a relationship type of the query language
    /// names (`rel_type_ids`), in every state and visibility, deleted ones included.
    pub fn claims_of_rel_type(&self, rel_type: &str) -> Vec<ClaimId> {
        let bm = &self.st.bitmaps;
        let Some(in_ws) = bm.claims_by_ws.get(&self.ws) else { return Vec::new() };
        let mut out = Vec::new();
        for p in self.rel_type_ids(rel_type).into_iter().flatten() {
            if let Some(of_type) = bm.claims_by_pred.get(&p) {
                out.extend(in_ws.and(of_type).iter().map(ClaimId));
            }
        }
        out
    }

    /// Claims of this workspace in `state` with the given predicate, via bitmap algebra
    /// (`None` predicate = all predicates). Deleted claims excluded.
    pub fn claims_with(&self, predicate: Option<&str>, state: crate::model::ClaimState) -> Vec<ClaimId> {
        let bm = &self.st.bitmaps;
        let Some(by_ws) = bm.claims_by_ws.get(&self.ws) else { return Vec::new() };
        let mut set = by_ws.and(&bm.claims_by_state[state as usize]);
        if let Some(p) = predicate {
            let Some(pid) = self.st.catalog.predicates.get(&vocabulary_key(p)) else { return Vec::new() };
            let Some(by_pred) = bm.claims_by_pred.get(&crate::ids::PredicateId(pid)) else { return Vec::new() };
            set = set.and(by_pred);
        }
        set.and_not(&bm.claims_deleted).iter().filter(|&c| !self.hidden(c)).map(ClaimId).collect()
    }
}
