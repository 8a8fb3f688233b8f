//! Id scans of one workspace: all entities, by type, by name key, by property equality, and the
//! claims the view may see, as sorted id sets (roaring bitmaps: a label conjunction is an `and`).
//!
//! Entity scans leave out deleted and erased entities (`entities_under` applies a `Visibility`
//! instead); claim scans leave out deleted, erased and hidden claims, and keep every lifecycle
//! state (the executor applies its `Visibility` per row).

use crate::ids::{ClaimId, EntityId, TypeId};
use crate::index::bitmap::IdSet;
use crate::read::view::WorkspaceView;
use crate::read::visibility::Visibility;
use crate::value::Value;

/// A sorted set of entity ids.
#[derive(Clone, Debug, Default)]
pub struct EntitySet(IdSet);

/// A sorted set of claim ids.
#[derive(Clone, Debug, Default)]
pub struct ClaimSet(IdSet);

macro_rules! id_set {
    ($set:ident, $id:ident) => {
        impl $set {
            /// How many ids.
            pub fn len(&self) -> u64 {
                self.0.len()
            }

            /// Whether it holds none.
            pub fn is_empty(&self) -> bool {
                self.0.is_empty()
            }

            /// Whether it holds `id`.
            pub fn contains(&self, id: $id) -> bool {
                self.0.contains(id.0)
            }

            /// The ids, ascending.
            pub fn iter(&self) -> impl Iterator<Item = $id> + '_ {
                self.0.iter().map($id)
            }

            /// The ids in both.
            #[must_use]
            pub fn and(&self, other: &$set) -> $set {
                $set(self.0.and(&other.0))
            }

            /// The ids in either.
            #[must_use]
            pub fn or(&self, other: &$set) -> $set {
                $set(self.0.or(&other.0))
            }

            /// The ids of `self` not in `other`.
            #[must_use]
            pub fn and_not(&self, other: &$set) -> $set {
                $set(self.0.and_not(&other.0))
            }

            pub(crate) fn ids(&self) -> &IdSet {
                &self.0
            }
        }
    };
}

id_set!(EntitySet, EntityId);
id_set!(ClaimSet, ClaimId);

impl WorkspaceView<'_> {
    /// Every entity of this workspace (not deleted).
    pub fn entity_set(&self) -> EntitySet {
        let bm = &self.st.bitmaps;
        EntitySet(bm.entities_by_ws.get(&self.ws).map(|s| self.without_hidden(s.and_not(&bm.entities_deleted))).unwrap_or_default())
    }

    /// The entities of type `t` (not deleted).
    pub fn entities_of_type_id(&self, t: TypeId) -> EntitySet {
        let bm = &self.st.bitmaps;
        match (bm.entities_by_type.get(&t), bm.entities_by_ws.get(&self.ws)) {
            (Some(by_type), Some(by_ws)) => EntitySet(self.without_hidden(by_type.and(by_ws).and_not(&bm.entities_deleted))),
            _ => EntitySet::default(),
        }
    }

    /// The entities whose name or an alias has the normalised key of `name` (not deleted).
    pub fn entities_named(&self, name: &str) -> EntitySet {
        EntitySet(IdSet::from_sorted(&self.find_by_name(name).iter().map(|e| e.0).collect::<Vec<u32>>()))
    }

    /// The entities (not deleted) whose property `key` equals `value`. Costs one pass over the
    /// entities that carry properties.
    pub fn entities_with_property(&self, key: &str, value: &Value) -> EntitySet {
        if self.hidden_key(key) {
            return EntitySet::default();
        }
        let all = self.entity_set();
        let mut hits: Vec<u32> = self
            .st
            .entities
            .props
            .iter()
            .filter(|(e, props)| props.get(key) == Some(value) && all.contains(EntityId(*e)))
            .map(|(e, _)| e)
            .collect();
        hits.sort_unstable();
        EntitySet(IdSet::from_sorted(&hits))
    }

    /// The entities of this workspace (of type `t` when given) visible under `v`: with the
    /// default visibility exactly `entity_set` / `entities_of_type_id`; `ALL VERSIONS` and
    /// `include_deleted` add the deleted ones, `known_as_of` shows the entities as recorded then
    /// (none created later; those deleted since, as they were). A non-default visibility costs one
    /// test per entity of the workspace (or type).
    pub fn entities_under(&self, v: &Visibility, t: Option<TypeId>) -> EntitySet {
        if !v.all_versions && !v.include_deleted && v.known_as_of.is_none() {
            return t.map_or_else(|| self.entity_set(), |t| self.entities_of_type_id(t));
        }
        let bm = &self.st.bitmaps;
        let Some(by_ws) = bm.entities_by_ws.get(&self.ws) else { return EntitySet::default() };
        let candidates = match t {
            Some(t) => match bm.entities_by_type.get(&t) {
                Some(by_type) => by_type.and(by_ws),
                None => return EntitySet::default(),
            },
            None => by_ws.clone(),
        };
        let vis = self.vis(v);
        let kept: Vec<u32> = candidates.iter().filter(|&e| vis.entity(self.st, e)).collect();
        EntitySet(IdSet::from_sorted(&kept))
    }

    /// This workspace's entities carrying `t` as a later label (not as their type), ascending.
    pub fn entities_with_later_label(&self, t: TypeId) -> Vec<EntityId> {
        let mut out: Vec<EntityId> = self
            .st
            .entities
            .labels
            .iter()
            .filter(|(e, l)| l.contains(&t) && self.check_entity(EntityId(**e)).is_ok())
            .map(|(e, _)| EntityId(*e))
            .collect();
        out.sort_unstable();
        out
    }

    /// Whether any entity (of any workspace) has a property `id`.
    pub fn has_id_properties(&self) -> bool {
        !self.st.entities.id_props.is_empty()
    }

    /// How many entities (of any workspace) have a property `id`: an upper bound on
    /// `entities_with_id_property`'s length, without reading it.
    pub fn id_property_count(&self) -> usize {
        usize::try_from(self.st.entities.id_props.len()).unwrap_or(usize::MAX)
    }

    /// This workspace's entities with a property `id`, ascending.
    pub fn entities_with_id_property(&self) -> Vec<EntityId> {
        self.st.entities.id_props.iter().map(EntityId).filter(|e| self.check_entity(*e).is_ok()).collect()
    }

    /// Whether entity `e` of this workspace is visible under `v` (see `entities_under`).
    pub fn entity_visible(&self, e: EntityId, v: &Visibility) -> bool {
        self.check_entity(e).is_ok() && self.vis(v).entity(self.st, e.0)
    }

    /// Every claim of this workspace the view may see (not deleted, any state).
    pub fn claim_set(&self) -> ClaimSet {
        let bm = &self.st.bitmaps;
        let Some(by_ws) = bm.claims_by_ws.get(&self.ws) else { return ClaimSet::default() };
        let mut set = by_ws.and_not(&bm.claims_deleted);
        if self.hide_sensitive {
            set = set.and_not(&bm.claims_sensitive);
        }
        if let Some(h) = self.policy {
            set = set.and_not(&h.claims);
        }
        ClaimSet(set)
    }

    /// `set` without the entities a row policy hides from this view.
    fn without_hidden(&self, set: IdSet) -> IdSet {
        match self.policy {
            Some(h) => set.and_not(&h.entities),
            None => set,
        }
    }
}

/// Where a change feed starts: the rows and the time a view had when the mark was taken. Opaque:
/// the row counters are database-wide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChangeMark {
    entities: u32,
    claims: u32,
    at: crate::time::Timestamp,
}

/// What changed in a workspace since a `ChangeMark`.
#[derive(Clone, Debug, Default)]
pub struct Changes {
    /// Entities created or changed since (deleted and erased ones included: a cache must drop them).
    pub entities: Vec<EntityId>,
    /// Claims the view may see that were created or changed since (erased ones left out).
    pub claims: Vec<ClaimId>,
    /// Both ends of every claim created or changed since that is not hidden from the view,
    /// erased ones included (what their endpoints show changed), ascending.
    pub endpoints: Vec<EntityId>,
}

impl WorkspaceView<'_> {
    /// A mark of this view's rows and time, for `changes_since` on a later view.
    pub fn change_mark(&self) -> ChangeMark {
        ChangeMark { entities: self.st.entities.len() as u32, claims: self.st.claims.len() as u32, at: self.now }
    }

    /// The entities and claims of this workspace created or changed since `mark` (taken on an
    /// earlier view of the same database), ascending.
    pub fn changes_since(&self, mark: &ChangeMark) -> Changes {
        let st = self.st;
        let mine = |e: u32| st.entities.ws.try_get(e as usize).is_some_and(|w| *w == self.ws);
        let shown = |e: u32| mine(e) && !self.hidden_entity(e);
        let mut entities: Vec<u32> = (mark.entities..st.entities.len() as u32).filter(|&e| shown(e)).collect();
        entities
            .extend(st.entities.updated_at.iter().filter(|(e, t)| **t >= mark.at && **e < mark.entities && shown(**e)).map(|(e, _)| *e));
        entities.sort_unstable();
        // A claim's workspace is its subject's; erased claims keep their columns.
        let ours = |c: u32| mine(*st.claims.subject.get(c as usize)) && !self.hidden(c);
        let mut changed: Vec<u32> = (mark.claims..st.claims.len() as u32).filter(|&c| ours(c)).collect();
        changed.extend(st.claims.updated_at.iter().filter(|(c, t)| **t >= mark.at && **c < mark.claims && ours(**c)).map(|(c, _)| *c));
        changed.sort_unstable();
        let mut endpoints: Vec<EntityId> =
            changed.iter().flat_map(|&c| [*st.claims.subject.get(c as usize), *st.claims.object.get(c as usize)]).map(EntityId).collect();
        endpoints.sort_unstable();
        endpoints.dedup();
        let claims = changed.into_iter().map(ClaimId).filter(|&c| self.check_claim(c).is_ok()).collect();
        Changes { entities: entities.into_iter().map(EntityId).collect(), claims, endpoints }
    }
}
