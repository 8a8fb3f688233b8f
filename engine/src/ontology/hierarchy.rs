//! Hierarchy operations over one or several relations (`is_a`, or `is_a ∪ part_of`): ancestors
//! and descendants with shortest distances, hierarchy paths, lowest common ancestors and cohort
//! expansion. Breadth-first over the per-predicate adjacency the core keeps for hierarchies,
//! with the thread's reusable visited set; cycle-safe.

use crate::error::ReadError;
use crate::ids::{ClaimId, EntityId, PredicateId};
use crate::index::graph::Direction;
use crate::normalize::vocabulary_key;
use crate::ontology::SUBCLASS_OF;
use crate::read::khop::for_each_pred_edge;
use crate::read::view::WorkspaceView;
use crate::read::visibility::Visibility;
use std::collections::{HashMap, HashSet};

/// The relations a hierarchy walk follows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relations(Vec<String>);

impl Relations {
    /// `is_a` alone (`subclass_of`).
    pub fn is_a() -> Relations {
        Relations(vec![SUBCLASS_OF.to_owned()])
    }

    /// A comma-separated list; `is_a` names `subclass_of`; `-` and spaces read as `_`.
    pub fn parse(list: &str) -> Relations {
        let mut names: Vec<String> = list
            .split(',')
            .map(|r| vocabulary_key(r).replace(['-', ' '], "_"))
            .filter(|r| !r.is_empty())
            .map(|r| if r == "is_a" { SUBCLASS_OF.to_owned() } else { r })
            .collect();
        names.dedup();
        if names.is_empty() {
            Relations::is_a()
        } else {
            Relations(names)
        }
    }

    /// The predicate names.
    pub fn names(&self) -> &[String] {
        &self.0
    }
}

/// The result of [`WorkspaceView::expand_cohort`].
#[derive(Clone, Debug, PartialEq)]
pub struct Cohort {
    /// The concept and all its descendants, with distance.
    pub concepts: Vec<(EntityId, u32)>,
    /// Data entities linked to any of those concepts, each with the claims that link it.
    pub members: Vec<(EntityId, Vec<ClaimId>)>,
}

impl WorkspaceView<'_> {
    fn relation_ids(&self, rels: &Relations) -> Result<Vec<u16>, ReadError> {
        rels.0.iter().map(|r| self.predicate_id(r).map(|p| p.0).ok_or_else(|| ReadError::UnknownPredicate(r.clone()))).collect()
    }

    /// Breadth-first closure from `entity` over `rels` (subject → object when `up`).
    fn closure_over(&self, entity: EntityId, rels: &Relations, up: bool, v: &Visibility) -> Result<Vec<(EntityId, u32)>, ReadError> {
        self.check_entity(entity)?;
        let preds = self.relation_ids(rels)?;
        self.closure_over_preds(entity, &preds, usize::from(!up), v)
    }

    /// Ancestors of `entity` over `rels`, each with its shortest distance, nearest first.
    pub fn ancestors_over(&self, entity: EntityId, rels: &Relations, v: &Visibility) -> Result<Vec<(EntityId, u32)>, ReadError> {
        self.closure_over(entity, rels, true, v)
    }

    /// Descendants of `entity` over `rels`, each with its shortest distance, nearest first.
    pub fn descendants_over(&self, entity: EntityId, rels: &Relations, v: &Visibility) -> Result<Vec<(EntityId, u32)>, ReadError> {
        self.closure_over(entity, rels, false, v)
    }

    /// The direct parents (`up`) or children of `entity` over `rels`.
    pub fn hierarchy_neighbors(&self, entity: EntityId, rels: &Relations, up: bool, v: &Visibility) -> Result<Vec<EntityId>, ReadError> {
        self.check_entity(entity)?;
        let preds = self.relation_ids(rels)?;
        let vis = self.vis(v);
        let mut out = Vec::new();
        for p in preds {
            for_each_pred_edge(self.st, &vis, entity.0, usize::from(!up), p, |n| out.push(EntityId(n)));
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// One shortest hierarchy path from `from` up to its ancestor `to` over `rels` (both ends
    /// included), or `None` when `to` is not an ancestor.
    pub fn shortest_hierarchy_path(
        &self,
        from: EntityId,
        to: EntityId,
        rels: &Relations,
        v: &Visibility,
    ) -> Result<Option<Vec<EntityId>>, ReadError> {
        self.check_entity(from)?;
        self.check_entity(to)?;
        let preds = self.relation_ids(rels)?;
        let vis = self.vis(v);
        let mut parent: HashMap<u32, u32> = HashMap::from([(from.0, from.0)]);
        let mut frontier = vec![from.0];
        while !frontier.is_empty() && !parent.contains_key(&to.0) {
            let mut next = Vec::new();
            for &e in &frontier {
                for &p in &preds {
                    for_each_pred_edge(self.st, &vis, e, 0, p, |n| {
                        if let std::collections::hash_map::Entry::Vacant(slot) = parent.entry(n) {
                            slot.insert(e);
                            next.push(n);
                        }
                    });
                }
            }
            frontier = next;
        }
        if !parent.contains_key(&to.0) {
            return Ok(None);
        }
        let mut path = vec![to];
        let mut at = to.0;
        while at != from.0 {
            at = parent[&at];
            path.push(EntityId(at));
        }
        path.reverse();
        Ok(Some(path))
    }

    /// The lowest common ancestors of `a` and `b` over `rels` (each may be the other's ancestor,
    /// or the same entity): common ancestors that are not an ancestor of another common ancestor,
    /// as `(ancestor, distance from a, distance from b)`, closest (smallest sum) first.
    pub fn lowest_common_ancestors(
        &self,
        a: EntityId,
        b: EntityId,
        rels: &Relations,
        v: &Visibility,
    ) -> Result<Vec<(EntityId, u32, u32)>, ReadError> {
        let mut up_a: HashMap<EntityId, u32> = self.ancestors_over(a, rels, v)?.into_iter().collect();
        up_a.insert(a, 0);
        let mut up_b: HashMap<EntityId, u32> = self.ancestors_over(b, rels, v)?.into_iter().collect();
        up_b.insert(b, 0);
        let common: Vec<EntityId> = up_a.keys().filter(|e| up_b.contains_key(e)).copied().collect();
        // A common ancestor is not lowest when it is an ancestor of another common one.
        let mut above: HashSet<EntityId> = HashSet::new();
        for &c in &common {
            if above.contains(&c) {
                continue;
            }
            above.extend(self.ancestors_over(c, rels, v)?.into_iter().map(|(e, _)| e));
        }
        let mut out: Vec<(EntityId, u32, u32)> =
            common.into_iter().filter(|c| !above.contains(c)).map(|c| (c, up_a[&c], up_b[&c])).collect();
        out.sort_by_key(|&(e, da, db)| (da + db, e));
        Ok(out)
    }

    /// A concept, all its descendants over `rels`, and the entities linked to any of them by a
    /// visible claim of another predicate (`link_predicates` narrows which; other concepts of the
    /// hierarchy are not members).
    pub fn expand_cohort(
        &self,
        concept: EntityId,
        rels: &Relations,
        link_predicates: Option<&[&str]>,
        v: &Visibility,
    ) -> Result<Cohort, ReadError> {
        let mut concepts = vec![(concept, 0)];
        concepts.extend(self.descendants_over(concept, rels, v)?);
        let in_cohort: HashSet<EntityId> = concepts.iter().map(|(e, _)| *e).collect();
        let hierarchy: HashSet<PredicateId> = rels.0.iter().filter_map(|r| self.predicate_id(r)).collect();
        let links: Option<HashSet<PredicateId>> = link_predicates.map(|ps| ps.iter().filter_map(|p| self.predicate_id(p)).collect());
        let mut members: HashMap<EntityId, Vec<ClaimId>> = HashMap::new();
        let expand = self.expander(Direction::Both, None, v);
        for &(c, _) in &concepts {
            for edge in expand.edges(c) {
                let wanted = match &links {
                    Some(l) => l.contains(&edge.predicate),
                    None => !hierarchy.contains(&edge.predicate),
                };
                if wanted && !in_cohort.contains(&edge.neighbor) {
                    members.entry(edge.neighbor).or_default().push(edge.claim);
                }
            }
        }
        let mut members: Vec<(EntityId, Vec<ClaimId>)> = members.into_iter().collect();
        members.sort_unstable_by_key(|(e, _)| *e);
        for (_, claims) in &mut members {
            claims.sort_unstable();
            claims.dedup();
        }
        Ok(Cohort { concepts, members })
    }
}
