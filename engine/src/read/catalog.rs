//! A workspace's vocabulary as a planner needs it: entity types, predicates and property keys
//! resolved to ids, with how many rows each has.
//!
//! Names resolve case-insensitively, as writes intern them. Counts are over what the view may
//! see: a claim hidden from it (sensitive, for a principal without `see_sensitive`) is not
//! counted, so a plan estimate leaks nothing. Deleted rows are not counted; every lifecycle state
//! is (a planner's estimate, not a visibility answer).

use crate::ids::{PredicateId, TypeId};
use crate::normalize::with_vocabulary_key;
use crate::read::view::WorkspaceView;
use std::collections::BTreeMap;
use std::sync::Arc;

/// How many label and relationship-type resolutions a thread remembers (`resolve`).
const RESOLVED_MAX: usize = 16;

/// A resolution: the names it was made in (a type or predicate table's, held, so they cannot
/// change), the name, the ids.
type Resolved = (Arc<Vec<Arc<str>>>, Box<str>, [Option<u16>; 2]);

thread_local! {
    static RESOLVED: std::cell::RefCell<Vec<Resolved>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The ids `name` resolves to in `table`: the exact name, and its case-folded form when that is
/// another. Remembered per thread against the table's names it was resolved in (a query resolves
/// its labels and types on every run, and a label test on every candidate node; two map
/// lookups and a case fold each time were a tenth of a short query's fixed cost).
fn resolve(table: &crate::state::Interner, name: &str) -> [Option<u16>; 2] {
    let names = table.names();
    let remembered = RESOLVED.with(|r| {
        let r = r.try_borrow().ok()?;
        r.iter().find(|(n, k, _)| Arc::ptr_eq(n, names) && **k == *name).map(|(_, _, ids)| *ids)
    });
    if let Some(ids) = remembered {
        return ids;
    }
    let exact = table.get(name);
    let folded = with_vocabulary_key(name, |key| table.get(key));
    let ids = [exact, folded.filter(|f| Some(*f) != exact)];
    RESOLVED.with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            r.truncate(RESOLVED_MAX - 1);
            r.insert(0, (names.clone(), Box::from(name), ids));
        }
    });
    ids
}

/// One entity type and its entities here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeCount {
    /// The interned id.
    pub id: TypeId,
    /// The name, normalised as interned (lowercase).
    pub name: Arc<str>,
    /// Entities of this type in the workspace (not deleted).
    pub entities: u64,
}

/// One predicate and its claims here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PredicateCount {
    /// The interned id.
    pub id: PredicateId,
    /// The name, normalised as interned (lowercase).
    pub name: Arc<str>,
    /// Claims with this predicate in the workspace the view may see (not deleted, any state).
    pub claims: u64,
}

/// The catalog of one workspace as one view sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkspaceCatalog {
    /// Types with at least one entity here, by name.
    pub types: Vec<TypeCount>,
    /// Predicates with at least one claim here, by name.
    pub predicates: Vec<PredicateCount>,
    /// Property keys of entities here, with how many entities carry each.
    pub property_keys: BTreeMap<Arc<str>, u64>,
    /// Entities (not deleted).
    pub entities: u64,
    /// Claims the view may see (not deleted, any state).
    pub claims: u64,
}

impl WorkspaceCatalog {
    /// The entity count of `t` (0 when it has none here).
    pub fn type_count(&self, t: TypeId) -> u64 {
        self.types.iter().find(|c| c.id == t).map_or(0, |c| c.entities)
    }

    /// The claim count of `p` (0 when it has none here).
    pub fn predicate_count(&self, p: PredicateId) -> u64 {
        self.predicates.iter().find(|c| c.id == p).map_or(0, |c| c.claims)
    }
}

impl<'a> WorkspaceView<'a> {
    /// The id of entity type `name`, if any write ever used it. The vocabulary is database-wide:
    /// an id says nothing about this workspace (its count here may be 0, and scans then find none).
    pub fn type_id(&self, name: &str) -> Option<TypeId> {
        with_vocabulary_key(name, |key| self.st.catalog.types.get(key)).map(TypeId)
    }

    /// The id of predicate `name`, if any write ever used it.
    pub fn predicate_id(&self, name: &str) -> Option<PredicateId> {
        with_vocabulary_key(name, |key| self.st.catalog.predicates.get(key)).map(PredicateId)
    }

    /// The types a label of the query language names: the one written with exactly this case,
    /// and the one ingest's case-insensitive resolution finds (its names have no case).
    pub fn label_ids(&self, name: &str) -> [Option<TypeId>; 2] {
        resolve(&self.st.catalog.types, name).map(|t| t.map(TypeId))
    }

    /// An upper bound on the entities carrying label `name`, in O(1): every workspace's entities
    /// of its types (deleted ones included) plus every entity with later labels. The planner
    /// compares these to pick where a pattern starts.
    pub fn label_estimate(&self, name: &str) -> u64 {
        let by_type = &self.st.bitmaps.entities_by_type;
        let typed: u64 =
            self.label_ids(name).into_iter().flatten().filter_map(|t| by_type.get(&t)).map(crate::index::bitmap::IdSet::len).sum();
        typed + self.st.entities.labels.len() as u64
    }

    /// The predicates a relationship type of the query language names (as `label_ids`).
    /// Remembered per thread against the predicate names it was resolved in (a query resolves
    /// its types on every run; two map lookups were a tenth of a short one's fixed cost).
    pub fn rel_type_ids(&self, name: &str) -> [Option<PredicateId>; 2] {
        resolve(&self.st.catalog.predicates, name).map(|p| p.map(PredicateId))
    }

    /// This workspace's labels, relationship types and property keys in first-use order: row `i`
    /// of each is id `i`, and later writes only append. The ids are the same for every principal
    /// (a client may cache them); for one without `see_sensitive`, a name only sensitive claims
    /// use, and a key the workspace marks sensitive, is listed as `""`: its id stays taken, its
    /// name does not leave the engine.
    pub fn vocabulary(&self) -> [Vec<Arc<str>>; 3] {
        let Some(v) = self.st.catalog.vocab.get(&self.ws) else { return Default::default() };
        let cat = &self.st.catalog;
        let hidden: Arc<str> = Arc::from("");
        if self.policy.is_some() {
            return self.vocabulary_seen(v);
        }
        let labels = v.labels.iter().map(|t| cat.types.name(t.0).clone()).collect();
        if self.sees_sensitive {
            return [labels, v.types.iter().map(|p| cat.predicates.name(p.0).clone()).collect(), v.keys.clone()];
        }
        let public_types: std::collections::HashSet<_> = v.public_types.iter().collect();
        let public_keys: std::collections::HashSet<_> = v.public_keys.iter().collect();
        [
            labels,
            v.types.iter().map(|p| if public_types.contains(p) { cat.predicates.name(p.0).clone() } else { hidden.clone() }).collect(),
            v.keys.iter().map(|k| if public_keys.contains(k) && !self.hidden_key(k) { k.clone() } else { hidden.clone() }).collect(),
        ]
    }

    /// `vocabulary` for a view a row policy filters: a name is listed only if a row the view sees
    /// (deleted ones aside) uses it, since another tenant's rows must not leak their names.
    fn vocabulary_seen(&self, v: &crate::state::Vocabulary) -> [Vec<Arc<str>>; 3] {
        let st = self.st;
        let cat = &st.catalog;
        let hidden: Arc<str> = Arc::from("");
        let entities = self.entity_set();
        let claims = self.claim_set();
        let mut labels = std::collections::HashSet::new();
        let mut keys: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for e in entities.iter() {
            labels.insert(*st.entities.ty.get(e.index()));
            labels.extend(st.entities.labels.get(&e.0).into_iter().flat_map(|l| l.iter().copied()));
            keys.extend(st.entities.props.get(e.0).into_iter().flat_map(|p| p.keys().map(|k| &**k)));
        }
        let mut types = std::collections::HashSet::new();
        for c in claims.iter() {
            types.insert(PredicateId(*st.claims.pred.get(c.index())));
            keys.extend(st.claims.props.get(c.0).into_iter().flat_map(|p| p.keys().map(|k| &**k)));
            if !st.claims.text.get(c.index()).is_empty() {
                keys.insert("text");
            }
        }
        if !claims.is_empty() {
            keys.extend(["confidence", "state"]);
        }
        let public_keys: std::collections::HashSet<_> = v.public_keys.iter().map(|k| &**k).collect();
        let key_shown = |k: &str| keys.contains(k) && !self.hidden_key(k) && (self.sees_sensitive || public_keys.contains(k));
        let public_types: std::collections::HashSet<_> = v.public_types.iter().collect();
        let type_shown = |p: &PredicateId| types.contains(p) && (self.sees_sensitive || public_types.contains(p));
        [
            v.labels.iter().map(|t| if labels.contains(t) { cat.types.name(t.0).clone() } else { hidden.clone() }).collect(),
            v.types.iter().map(|p| if type_shown(p) { cat.predicates.name(p.0).clone() } else { hidden.clone() }).collect(),
            v.keys.iter().map(|k| if key_shown(k) { k.clone() } else { hidden.clone() }).collect(),
        ]
    }

    /// The name of type `t` as interned (lowercase).
    pub fn type_name(&self, t: TypeId) -> Option<Arc<str>> {
        (usize::from(t.0) < self.st.catalog.types.len()).then(|| self.st.catalog.types.name(t.0).clone())
    }

    /// `type_name`, borrowed from the snapshot.
    pub fn type_name_ref(&self, t: TypeId) -> Option<&'a str> {
        let types = &self.st.catalog.types;
        (usize::from(t.0) < types.len()).then(|| &**types.name(t.0))
    }

    /// Every predicate any write used, database-wide (a type expression is tested on each).
    pub fn predicate_ids(&self) -> impl Iterator<Item = PredicateId> {
        (0..self.st.catalog.predicates.len()).filter_map(|p| u16::try_from(p).ok()).map(PredicateId)
    }

    /// The name of predicate `p` as interned (lowercase).
    pub fn predicate_name(&self, p: PredicateId) -> Option<Arc<str>> {
        (usize::from(p.0) < self.st.catalog.predicates.len()).then(|| self.st.catalog.predicates.name(p.0).clone())
    }

    /// This workspace's types, predicates and property keys with their counts (see the module
    /// documentation for what is counted). Costs one pass over the type and predicate bitmaps and
    /// over the entities that carry properties.
    pub fn catalog(&self) -> WorkspaceCatalog {
        let st = self.st;
        let bm = &st.bitmaps;
        let mut cat = WorkspaceCatalog::default();
        let entities = self.entity_set();
        cat.entities = entities.len();
        for (t, set) in &bm.entities_by_type {
            let n = set.and(entities.ids()).len();
            if n > 0 {
                cat.types.push(TypeCount { id: *t, name: st.catalog.types.name(t.0).clone(), entities: n });
            }
        }
        let claims = self.claim_set();
        cat.claims = claims.len();
        for (p, set) in &bm.claims_by_pred {
            let n = set.and(claims.ids()).len();
            if n > 0 {
                cat.predicates.push(PredicateCount { id: *p, name: st.catalog.predicates.name(p.0).clone(), claims: n });
            }
        }
        cat.types.sort_by(|a, b| a.name.cmp(&b.name));
        cat.predicates.sort_by(|a, b| a.name.cmp(&b.name));
        for (e, props) in st.entities.props.iter() {
            if entities.contains(crate::ids::EntityId(e)) {
                for k in props.keys().filter(|k| !self.hidden_key(k)) {
                    *cat.property_keys.entry(k.clone()).or_default() += 1;
                }
            }
        }
        cat
    }
}
