//! Id scans of one workspace: all entities, by type, by name key, by property equality, and the
//! claims the view may see, as sorted id sets (roaring bitmaps: a label conjunction is an `and`).
//!
//! Entity scans leave out deleted and erased entities; claim scans leave out deleted, erased and
//! hidden claims, and keep every lifecycle state (the executor applies its `Visibility` per row).

use crate::bitmap::IdSet;
use crate::ids::{ClaimId, EntityId, TypeId};
use crate::read::view::WorkspaceView;
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
        EntitySet(bm.entities_by_ws.get(&self.ws).map(|s| s.and_not(&bm.entities_deleted)).unwrap_or_default())
    }

    /// The entities of type `t` (not deleted).
    pub fn entities_of_type_id(&self, t: TypeId) -> EntitySet {
        let bm = &self.st.bitmaps;
        match (bm.entities_by_type.get(&t), bm.entities_by_ws.get(&self.ws)) {
            (Some(by_type), Some(by_ws)) => EntitySet(by_type.and(by_ws).and_not(&bm.entities_deleted)),
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
        let all = self.entity_set();
        let mut hits: Vec<u32> = self
            .st
            .entities
            .props
            .iter()
            .filter(|(e, props)| props.get(key) == Some(value) && all.contains(EntityId(**e)))
            .map(|(e, _)| *e)
            .collect();
        hits.sort_unstable();
        EntitySet(IdSet::from_sorted(&hits))
    }

    /// Every claim of this workspace the view may see (not deleted, any state).
    pub fn claim_set(&self) -> ClaimSet {
        let bm = &self.st.bitmaps;
        let Some(by_ws) = bm.claims_by_ws.get(&self.ws) else { return ClaimSet::default() };
        let mut set = by_ws.and_not(&bm.claims_deleted);
        if self.hide_sensitive {
            set = set.and_not(&bm.claims_sensitive);
        }
        ClaimSet(set)
    }
}
