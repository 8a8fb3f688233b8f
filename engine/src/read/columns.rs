//! Column accessors: one field of one entity or claim, borrowed from the snapshot, without
//! building the whole `Entity` or `Claim`.
//!
//! Each returns `None` for an id that is not an entity or claim of this view (another
//! workspace's, erased, or a claim hidden from it), so an executor holding ids from its own scans
//! and expands never sees another scope's data through them.

use crate::ids::{ClaimId, EntityId, EvidenceId, PredicateId, TypeId, NONE};
use crate::model::ClaimState;
use crate::read::view::WorkspaceView;
use crate::state::{BARE, DELETED, SENSITIVE};
use crate::time::Timestamp;
use crate::value::{Properties, Value};
use std::sync::Arc;

/// One lifecycle change of a claim: when, and the state and deleted flag before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateChange {
    /// Transaction time of the change.
    pub at: Timestamp,
    /// The state before it.
    pub state_before: ClaimState,
    /// Whether the claim was deleted before it.
    pub deleted_before: bool,
}

impl<'a> WorkspaceView<'a> {
    /// The entity's external id.
    pub fn entity_ext_id(&self, e: EntityId) -> Option<&'a str> {
        self.check_entity(e).ok()?;
        Some(self.st.entities.ext_id.get(e.index()))
    }

    /// The entity's canonical name.
    pub fn entity_name(&self, e: EntityId) -> Option<&'a str> {
        self.check_entity(e).ok()?;
        Some(self.st.entities.name.get(e.index()))
    }

    /// The entity's aliases.
    pub fn entity_aliases(&self, e: EntityId) -> impl Iterator<Item = &'a str> {
        let ok = self.check_entity(e).is_ok();
        let ents = &self.st.entities;
        ok.then(|| ents.aliases_of(e.0)).into_iter().flatten()
    }

    /// The entity's type.
    pub fn entity_type(&self, e: EntityId) -> Option<TypeId> {
        self.check_entity(e).ok()?;
        Some(*self.st.entities.ty.get(e.index()))
    }

    /// The entity's properties this view may see, by key (none when it is not of this view; a
    /// key the workspace marks sensitive is absent for a principal without `see_sensitive`).
    pub fn entity_properties(&self, e: EntityId) -> impl Iterator<Item = (&'a Arc<str>, &'a Value)> + '_ {
        let props: Option<&'a Properties> = if self.check_entity(e).is_ok() {
            let masked: Option<&'a crate::read::mask::Masked> = self.masked;
            masked.and_then(|m| m.entity_props.get(&e.0)).or_else(|| self.st.entities.props.get(e.0).map(AsRef::as_ref))
        } else {
            None
        };
        props.into_iter().flatten().filter(|(k, _)| !self.hidden_key(k))
    }

    /// One property of the entity (`None` when absent or hidden from this view).
    pub fn entity_property(&self, e: EntityId, key: &str) -> Option<&'a Value> {
        if self.hidden_key(key) {
            return None;
        }
        self.check_entity(e).ok()?;
        if let Some(p) = self.masked.and_then(|m| m.entity_props.get(&e.0)) {
            return p.get(key);
        }
        self.st.entities.props.get(e.0)?.get(key)
    }

    /// The entities that may hold `value` under the stored property `key` (ascending; each to be
    /// tested, as a scanned one would be). `None` where a lookup cannot stand in for a scan: a
    /// masked view (its values are not the stored ones).
    pub fn entities_with_prop(&self, key: &str, value: crate::index::propindex::Scalar<'_>) -> Option<Vec<EntityId>> {
        if self.masked.is_some() {
            return None;
        }
        Some(self.st.entities.with_prop(self.ws, key, value).into_iter().map(EntityId).collect())
    }

    /// The claims that may hold `value` under the stored property `key` (as
    /// `entities_with_prop`).
    pub fn claims_with_prop(&self, key: &str, value: crate::index::propindex::Scalar<'_>) -> Option<Vec<ClaimId>> {
        if self.masked.is_some() {
            return None;
        }
        Some(self.st.claims_with_prop(self.ws, key, value).into_iter().map(ClaimId).collect())
    }

    /// The entities whose name may be `name` (candidates from the name index: every entity
    /// named so, and some with a name or alias alike once normalised); `None` on a masked view.
    pub fn entities_maybe_named(&self, name: &str) -> Option<Vec<EntityId>> {
        if self.masked.is_some() {
            return None;
        }
        Some(self.st.entities.with_name_key(self.ws, &crate::normalize::name_key(name)).into_iter().map(EntityId).collect())
    }

    /// The entities that may hold under the stored property `key` a value of `class` with an
    /// order word in `lo..=hi` (`index::order`; candidates, as `entities_with_prop`).
    pub fn entities_in_range(&self, key: &str, range: (u8, u64, u64)) -> Option<Vec<EntityId>> {
        if self.masked.is_some() {
            return None;
        }
        Some(self.st.entities.in_range(self.ws, key, range).into_iter().map(EntityId).collect())
    }

    /// How many candidates `entities_with_prop`, `entities_maybe_named` (`name`) and
    /// `entities_in_range` (`range`) would read, counted in the index (`None` where they give
    /// none: a masked view). An estimate for choosing between them: it counts entries of other
    /// workspaces' alike hashes and stale ones too.
    pub fn entities_count(&self, key: &str, value: crate::index::propindex::Scalar<'_>) -> Option<usize> {
        self.masked.is_none().then(|| self.st.entities.count_with_prop(self.ws, key, value))
    }

    /// See `entities_count`.
    pub fn entities_named_count(&self, name: &str) -> Option<usize> {
        self.masked.is_none().then(|| self.st.entities.count_name_key(self.ws, &crate::normalize::name_key(name)))
    }

    /// See `entities_count`.
    pub fn entities_in_range_count(&self, key: &str, range: (u8, u64, u64)) -> Option<usize> {
        self.masked.is_none().then(|| self.st.entities.count_in_range(self.ws, key, range))
    }

    /// See `entities_count`: for `claims_with_prop`.
    pub fn claims_count(&self, key: &str, value: crate::index::propindex::Scalar<'_>) -> Option<usize> {
        self.masked.is_none().then(|| self.st.count_claims_with_prop(self.ws, key, value))
    }

    /// See `entities_count`: for `claims_in_range`.
    pub fn claims_in_range_count(&self, key: &str, range: (u8, u64, u64)) -> Option<usize> {
        self.masked.is_none().then(|| self.st.count_claims_in_range(self.ws, key, range))
    }

    /// `entities_in_range`'s candidates as `(order word, entity)` in the words' order
    /// (ascending, or descending), read as needed; `None` on a masked view.
    pub fn entities_in_order(
        &self,
        key: &str,
        range: (u8, u64, u64),
        descending: bool,
    ) -> Option<impl Iterator<Item = (u64, EntityId)> + '_> {
        if self.masked.is_some() {
            return None;
        }
        Some(self.st.entities.in_order(self.ws, key, range, descending).map(|(w, e)| (w, EntityId(e))))
    }

    /// The claims that may hold a value in a range under `key` (as `entities_in_range`).
    pub fn claims_in_range(&self, key: &str, range: (u8, u64, u64)) -> Option<Vec<ClaimId>> {
        if self.masked.is_some() {
            return None;
        }
        Some(self.st.claims_in_range(self.ws, key, range).into_iter().map(ClaimId).collect())
    }

    /// The entity's labels: its type (none when its type is the empty name) and the labels
    /// written after it.
    pub fn entity_labels(&self, e: EntityId) -> Vec<TypeId> {
        let Ok(()) = self.check_entity(e) else { return Vec::new() };
        let ty = *self.st.entities.ty.get(e.index());
        let mut out = Vec::new();
        if !self.st.catalog.types.name(ty.0).is_empty() {
            out.push(ty);
        }
        out.extend(self.st.entities.labels.get(&e.0).iter().flat_map(|l| l.iter().copied()));
        out
    }

    /// Whether the entity carries label `t` (as its type or a later label).
    pub fn entity_carries(&self, e: EntityId, t: TypeId) -> bool {
        self.check_entity(e).is_ok()
            && (*self.st.entities.ty.get(e.index()) == t || self.st.entities.labels.get(&e.0).is_some_and(|l| l.contains(&t)))
    }

    /// Whether the entity was written by the query language (it shows only its properties).
    pub fn entity_bare(&self, e: EntityId) -> bool {
        self.check_entity(e).is_ok() && *self.st.entities.flags.get(e.index()) & BARE != 0
    }

    /// Whether the claim was written by the query language (it shows only its properties).
    pub fn claim_bare(&self, c: ClaimId) -> bool {
        self.check_claim(c).is_ok() && *self.st.claims.flags.get(c.index()) & BARE != 0
    }

    /// The claim's typed properties this view may see (see `entity_properties`).
    pub fn claim_properties(&self, c: ClaimId) -> impl Iterator<Item = (&'a Arc<str>, &'a Value)> + '_ {
        let props: Option<&'a Properties> = if self.check_claim(c).is_ok() {
            let masked: Option<&'a crate::read::mask::Masked> = self.masked;
            masked.and_then(|m| m.claim_props.get(&c.0)).or_else(|| self.st.claims.props.get(c.0).map(AsRef::as_ref))
        } else {
            None
        };
        props.into_iter().flatten().filter(|(k, _)| !self.hidden_key(k))
    }

    /// One typed property of the claim (`None` when absent or hidden from this view).
    pub fn claim_property(&self, c: ClaimId, key: &str) -> Option<&'a Value> {
        if self.hidden_key(key) {
            return None;
        }
        self.check_claim(c).ok()?;
        if let Some(p) = self.masked.and_then(|m| m.claim_props.get(&c.0)) {
            return p.get(key);
        }
        self.st.claims.props.get(c.0)?.get(key)
    }

    /// Whether the entity is soft-deleted.
    pub fn entity_deleted(&self, e: EntityId) -> Option<bool> {
        self.check_entity(e).ok()?;
        Some(*self.st.entities.flags.get(e.index()) & DELETED != 0)
    }

    /// When the entity was created (transaction time).
    pub fn entity_created_at(&self, e: EntityId) -> Option<Timestamp> {
        self.check_entity(e).ok()?;
        Some(self.st.entities.created.at(e.0))
    }

    /// The claim's `(subject, predicate, object)`.
    pub fn claim_triple(&self, c: ClaimId) -> Option<(EntityId, PredicateId, EntityId)> {
        self.check_claim(c).ok()?;
        let cl = &self.st.claims;
        Some((EntityId(*cl.subject.get(c.index())), PredicateId(*cl.pred.get(c.index())), EntityId(*cl.object.get(c.index()))))
    }

    /// The claim's external id.
    pub fn claim_ext_id(&self, c: ClaimId) -> Option<&'a str> {
        self.check_claim(c).ok()?;
        Some(self.st.claims.ext_id.get(c.index()))
    }

    /// The claim's text (`None` when it has none or is not of this view).
    pub fn claim_text(&self, c: ClaimId) -> Option<&'a str> {
        self.check_claim(c).ok()?;
        let masked: Option<&'a crate::read::mask::Masked> = self.masked;
        if let Some(t) = masked.and_then(|m| m.claim_text.get(&c.0)) {
            return Some(&**t).filter(|t| !t.is_empty());
        }
        Some(self.st.claims.text.get(c.index())).filter(|t| !t.is_empty())
    }

    /// The claim's confidence.
    pub fn claim_confidence(&self, c: ClaimId) -> Option<f32> {
        self.check_claim(c).ok()?;
        Some(*self.st.claims.confidence.get(c.index()))
    }

    /// The claim's lifecycle state.
    pub fn claim_state(&self, c: ClaimId) -> Option<ClaimState> {
        self.check_claim(c).ok()?;
        Some(*self.st.claims.state.get(c.index()))
    }

    /// Whether the claim is soft-deleted.
    pub fn claim_deleted(&self, c: ClaimId) -> Option<bool> {
        self.check_claim(c).ok()?;
        Some(*self.st.claims.flags.get(c.index()) & DELETED != 0)
    }

    /// Whether the claim is marked sensitive (only a view that may see it gets `Some`).
    pub fn claim_sensitive(&self, c: ClaimId) -> Option<bool> {
        self.check_claim(c).ok()?;
        Some(*self.st.claims.flags.get(c.index()) & SENSITIVE != 0)
    }

    /// The claim's valid time, `[from, until)`.
    pub fn claim_valid(&self, c: ClaimId) -> Option<(Timestamp, Timestamp)> {
        self.check_claim(c).ok()?;
        Some((*self.st.claims.valid_from.get(c.index()), *self.st.claims.valid_until.get(c.index())))
    }

    /// When the claim was recorded (transaction time).
    pub fn claim_recorded_at(&self, c: ClaimId) -> Option<Timestamp> {
        self.check_claim(c).ok()?;
        Some(self.st.claims.recorded.at(c.0))
    }

    /// The predicate's half-life in days as declared in this workspace (`None`: no decay).
    pub fn half_life_days(&self, p: PredicateId) -> Option<f64> {
        self.st.catalog.predicate_def(self.ws, p).half_life_days
    }

    /// The claim's decay at time `at`: `0.5^(age / half-life)`, age counted from `valid_from`
    /// (1 when its predicate declares no half-life).
    pub fn claim_decay(&self, c: ClaimId, at: Timestamp) -> Option<f64> {
        let (_, pred, _) = self.claim_triple(c)?;
        let (from, _) = self.claim_valid(c)?;
        let age_days = ((at.0 - from.0).max(0) as f64) / 86_400e6;
        Some(self.half_life_days(pred).filter(|h| *h > 0.0).map_or(1.0, |h| 0.5f64.powf(age_days / h)))
    }

    /// The claim's evidence rows, newest first.
    pub fn claim_evidence(&self, c: ClaimId) -> impl Iterator<Item = EvidenceId> + 'a {
        let rows = &self.st.evidence.rows;
        let mut i = if self.check_claim(c).is_ok() { *self.st.claims.evidence_head.get(c.index()) } else { NONE };
        std::iter::from_fn(move || {
            (i != NONE).then(|| {
                let v = EvidenceId(i);
                i = rows.get(i as usize).next;
                v
            })
        })
    }

    /// When the source of evidence row `v` said it.
    pub fn evidence_observed_at(&self, v: EvidenceId) -> Option<Timestamp> {
        let row = self.st.evidence.rows.try_get(v.index())?;
        self.check_claim(row.claim).ok()?;
        Some(row.observed_at)
    }

    /// The claim's lifecycle changes, newest first (empty when it never changed).
    pub fn claim_history(&self, c: ClaimId) -> impl Iterator<Item = StateChange> + 'a {
        let cl = &self.st.claims;
        let mut ev = if self.check_claim(c).is_ok() { cl.last_event.get(&c.0).copied().unwrap_or(NONE) } else { NONE };
        std::iter::from_fn(move || {
            if ev == NONE {
                return None;
            }
            let e = cl.events.get(ev as usize);
            ev = e.prev;
            Some(StateChange { at: e.at, state_before: e.state_before, deleted_before: e.deleted_before })
        })
    }

    /// The claim's tags: its own and its evidence's messages' (`crate::tags`).
    pub fn claim_tags(&self, c: ClaimId) -> Option<crate::tags::Tags> {
        self.check_claim(c).ok()?;
        Some(self.st.claim_tags(c.0))
    }

    /// The claim's own tags (what an export writes: its messages' come with them).
    pub fn claim_own_tags(&self, c: ClaimId) -> Option<crate::tags::Tags> {
        self.check_claim(c).ok()?;
        Some(self.st.claims.tags.get(&c.0).map(|t| (**t).clone()).unwrap_or_default())
    }

    /// The entity's tags.
    pub fn entity_tags(&self, e: EntityId) -> Option<crate::tags::Tags> {
        self.check_entity(e).ok()?;
        Some(self.st.entities.tags.get(&e.0).map(|t| (**t).clone()).unwrap_or_default())
    }

    /// The tags of message `msg` of conversation `conv` (without `msg`: of the conversation) in
    /// this workspace.
    pub fn message_tags(&self, conv: &str, msg: Option<&str>) -> Option<crate::tags::Tags> {
        self.st.evidence.message_tags.get(&crate::state::message_key(self.ws, conv, msg)).map(|t| (**t).clone())
    }

    /// The claim's first (oldest) evidence row: the extraction that produced it.
    pub fn first_evidence(&self, c: ClaimId) -> Option<EvidenceId> {
        self.claim_evidence(c).last()
    }
}
