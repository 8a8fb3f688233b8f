//! Entity resolution: a mention to an existing entity (normalised name or alias of the same
//! type, then name-vector similarity, helped by hints computed before the writer lock) or none.

use super::report::ResolvedBy;
use super::{EntityIn, IngestDoc, Thresholds};
use crate::ids::EntityId;
use crate::index::bitmap::IdSet;
use crate::normalize::{name_key, vocabulary_key};
use crate::read::view::WorkspaceView;
use crate::search::semantic::{Metric, VectorOptions};
use crate::state::DELETED;
use crate::write::batch::EntityRef;

pub(super) fn entity_ext(view: &WorkspaceView<'_>, e: EntityId) -> String {
    // The column, not `view.entity`: the report needs only the id, and this runs per mention.
    let ents = &view.st.entities;
    if e.index() < ents.ext_id.len() {
        ents.ext_id.get(e.index()).to_owned()
    } else {
        String::new()
    }
}

pub(super) fn ext_of(view: &WorkspaceView<'_>, r: &EntityRef) -> String {
    match r {
        EntityRef::Ext(s) => s.clone(),
        EntityRef::Id(id) => entity_ext(view, *id),
    }
}

/// The exact normalised name or an alias of `e` among entities of type `ty` (lowest id first).
pub(super) fn resolve_by_name(view: &WorkspaceView<'_>, e: &EntityIn, ty: &str) -> Option<(EntityId, ResolvedBy)> {
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
pub(super) fn best_by_vector(view: &WorkspaceView<'_>, v: &[f32], ty: &str) -> Option<(EntityId, f32)> {
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
    pub(super) fn refine(&self, view: &WorkspaceView<'_>, v: &[f32], ty: &str) -> Result<Option<(EntityId, f32)>, Stale> {
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
pub(super) struct Stale;

/// Exact normalised name or alias of the same type (lowest id first), then name-vector
/// similarity among entities of the same type (from `hint` when it can answer).
pub(super) fn resolve(
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
