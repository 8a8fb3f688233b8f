//! Flattened concept profiles (the seed's `GraphRAG` index): per concept its label, definition,
//! synonyms, parents and children, a sample of grandparents and grandchildren, and attributes
//! aggregated over all its descendants, rendered as one text and indexed for keyword search.
//!
//! Profiles are derived data, built from one snapshot and kept in step by [`Profiles::refresh`],
//! which rebuilds only the profiles a change can reach: the changed entities, their neighbours
//! two levels up and down (whose profiles name them), and all their ancestors (whose aggregates
//! count them).

use crate::error::ReadError;
use crate::ids::{EntityId, PredicateId, TypeId, WorkspaceId};
use crate::index::bm25::TextIndex;
use crate::index::graph::Direction;
use crate::normalize::vocabulary_key;
use crate::ontology::hierarchy::Relations;
use crate::ontology::import::keys;
use crate::ontology::CONCEPT_TYPE;
use crate::read::scan::ChangeMark;
use crate::read::view::WorkspaceView;
use crate::read::visibility::Visibility;
use crate::value::Value;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

/// What goes into a profile.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileConfig {
    /// The hierarchy relations (default `is_a`).
    pub relations: Relations,
    /// How many grandparents and grandchildren to list (default 5 each).
    pub sample: usize,
    /// Entity properties aggregated over the descendants (e.g. `tissue`).
    pub aggregate_properties: Vec<String>,
    /// Types of linked entities aggregated over the descendants (e.g. `dataset`).
    pub aggregate_linked_types: Vec<String>,
    /// Most values listed per aggregated attribute (default 10, most frequent first).
    pub aggregate_top: usize,
}

impl Default for ProfileConfig {
    fn default() -> Self {
        ProfileConfig {
            relations: Relations::is_a(),
            sample: 5,
            aggregate_properties: Vec::new(),
            aggregate_linked_types: Vec::new(),
            aggregate_top: 10,
        }
    }
}

/// One concept's profile.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// The concept.
    pub concept: EntityId,
    /// Its CURIE.
    pub id: String,
    /// Its label.
    pub label: String,
    /// Definition.
    pub definition: Option<String>,
    /// Synonyms (aliases).
    pub synonyms: Vec<String>,
    /// Parent labels.
    pub parents: Vec<String>,
    /// Child labels.
    pub children: Vec<String>,
    /// A sample of grandparent labels.
    pub grandparents: Vec<String>,
    /// A sample of grandchild labels.
    pub grandchildren: Vec<String>,
    /// Aggregated attributes: name → `(value, how many descendants (self included) have it)`,
    /// most frequent first.
    pub aggregates: BTreeMap<String, Vec<(String, usize)>>,
    /// Obsolete term.
    pub obsolete: bool,
}

impl Profile {
    /// The profile as one text: what the keyword index holds and what an agent reads.
    pub fn text(&self) -> String {
        let mut s = format!("{} ({})", self.label, self.id);
        if self.obsolete {
            s.push_str(" [obsolete]");
        }
        let mut line = |name: &str, items: &[String]| {
            if !items.is_empty() {
                let _ = write!(s, "\n{name}: {}", items.join("; "));
            }
        };
        if let Some(d) = &self.definition {
            line("Definition", std::slice::from_ref(d));
        }
        line("Synonyms", &self.synonyms);
        line("Parents", &self.parents);
        line("Children", &self.children);
        line("Grandparents", &self.grandparents);
        line("Grandchildren", &self.grandchildren);
        for (k, vals) in &self.aggregates {
            let items: Vec<String> = vals.iter().map(|(v, n)| format!("{v} ({n})")).collect();
            let _ = write!(s, "\n{k}: {}", items.join("; "));
        }
        s
    }
}

/// The embedder that vectorizes profile texts, shown by its id.
#[derive(Clone)]
struct ProfileEmbedder(std::sync::Arc<dyn engram_embed::Embedder>);

impl std::fmt::Debug for ProfileEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.id())
    }
}

/// Profiles of every concept of one workspace, with their keyword index and, once
/// [`Profiles::embed_with`] is called, their vectors.
#[derive(Clone, Debug)]
pub struct Profiles {
    config: ProfileConfig,
    ws: WorkspaceId,
    /// Where the next refresh's change feed starts.
    mark: ChangeMark,
    /// Document number → concept.
    order: Vec<EntityId>,
    doc_of: HashMap<EntityId, u32>,
    by_concept: HashMap<EntityId, Profile>,
    index: TextIndex,
    embedder: Option<ProfileEmbedder>,
    vectors: HashMap<EntityId, Vec<f32>>,
}

/// What a refresh did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RefreshStats {
    /// Entities or claim endpoints that changed since the last build.
    pub changed: usize,
    /// Profiles rebuilt.
    pub rebuilt: usize,
}

fn label_of(ws: &WorkspaceView<'_>, e: EntityId) -> String {
    ws.entity_name(e).unwrap_or_default().to_owned()
}

/// Values of one attribute on one entity, as strings.
fn values(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Null | Value::Map(_) => {}
        Value::Str(s) => out.push(s.to_string()),
        Value::List(items) => items.iter().for_each(|i| values(i, out)),
        Value::Floats(items) => out.extend(items.iter().map(f64::to_string)),
        Value::Bool(b) => out.push(b.to_string()),
        Value::Int(i) => out.push(i.to_string()),
        Value::Float(f) => out.push(f.to_string()),
        Value::Temporal(t) => out.push(t.to_string()),
        Value::Point(p) => out.push(p.to_string()),
    }
}

impl Profiles {
    fn is_concept(ws: &WorkspaceView<'_>, e: EntityId) -> bool {
        ws.entity_type(e).is_some_and(|t| ws.type_id(CONCEPT_TYPE) == Some(t)) && ws.entity_deleted(e) == Some(false)
    }

    /// The attributes `e` contributes to its ancestors' aggregates: `(attribute, value)`.
    fn own_attributes(&self, ws: &WorkspaceView<'_>, e: EntityId) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for key in &self.config.aggregate_properties {
            if let Some(v) = ws.entity_property(e, key) {
                let mut vals = Vec::new();
                values(v, &mut vals);
                out.extend(vals.into_iter().map(|v| (key.clone(), v)));
            }
        }
        if !self.config.aggregate_linked_types.is_empty() {
            let hierarchy: HashSet<PredicateId> = self.config.relations.names().iter().filter_map(|r| ws.predicate_id(r)).collect();
            // Linked types by id, each with the name its attribute carries (as interned).
            let linked: Vec<(TypeId, String)> =
                self.config.aggregate_linked_types.iter().filter_map(|t| Some((ws.type_id(t)?, vocabulary_key(t)))).collect();
            for edge in ws.expander(Direction::Both, None, &Visibility::default()).edges(e) {
                if hierarchy.contains(&edge.predicate) {
                    continue;
                }
                let ty = ws.entity_type(edge.neighbor);
                if let Some((_, name)) = linked.iter().find(|(t, _)| Some(*t) == ty) {
                    out.push((format!("linked {name}"), label_of(ws, edge.neighbor)));
                }
            }
        }
        out
    }

    fn profile(&self, ws: &WorkspaceView<'_>, e: EntityId, own: &HashMap<EntityId, Vec<(String, String)>>) -> Result<Profile, ReadError> {
        let v = Visibility::default();
        let rels = &self.config.relations;
        let labels = |ids: &[EntityId]| -> Vec<String> {
            let mut l: Vec<String> = ids.iter().map(|&p| label_of(ws, p)).collect();
            l.sort();
            l.dedup();
            l
        };
        let parents = ws.hierarchy_neighbors(e, rels, true, &v)?;
        let children = ws.hierarchy_neighbors(e, rels, false, &v)?;
        let up = ws.ancestors_over(e, rels, &v)?;
        let down = ws.descendants_over(e, rels, &v)?;
        let at = |list: &[(EntityId, u32)], d: u32| -> Vec<EntityId> { list.iter().filter(|(_, x)| *x == d).map(|(e, _)| *e).collect() };
        let mut grandparents = labels(&at(&up, 2));
        grandparents.truncate(self.config.sample);
        let mut grandchildren = labels(&at(&down, 2));
        grandchildren.truncate(self.config.sample);
        let mut aggregates: BTreeMap<String, Vec<(String, usize)>> = BTreeMap::new();
        if self.needs_own() {
            let mut counts: HashMap<(String, String), usize> = HashMap::new();
            for d in std::iter::once(e).chain(down.iter().map(|(d, _)| *d)) {
                // Concepts were computed once up front; other entities (instances) here.
                let computed;
                let attrs = match own.get(&d) {
                    Some(a) => a,
                    None => {
                        computed = self.own_attributes(ws, d);
                        &computed
                    }
                };
                for (k, val) in attrs {
                    *counts.entry((k.clone(), val.clone())).or_default() += 1;
                }
            }
            for ((k, val), n) in counts {
                aggregates.entry(k).or_default().push((val, n));
            }
        }
        for list in aggregates.values_mut() {
            list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            list.truncate(self.config.aggregate_top);
        }
        let prop_str = |k: &str| match ws.entity_property(e, k) {
            Some(Value::Str(s)) => Some(s.to_string()),
            _ => None,
        };
        Ok(Profile {
            concept: e,
            id: ws.entity_ext_id(e).unwrap_or_default().to_owned(),
            label: label_of(ws, e),
            definition: prop_str(keys::DEFINITION),
            synonyms: ws.entity_aliases(e).map(str::to_owned).collect(),
            parents: labels(&parents),
            children: labels(&children),
            grandparents,
            grandchildren,
            aggregates,
            obsolete: ws.entity_property(e, keys::OBSOLETE) == Some(&Value::Bool(true)),
        })
    }

    fn needs_own(&self) -> bool {
        !self.config.aggregate_properties.is_empty() || !self.config.aggregate_linked_types.is_empty()
    }

    fn build_many(&self, ws: &WorkspaceView<'_>, concepts: &[EntityId]) -> Result<Vec<Profile>, ReadError> {
        // Each concept's own attributes once, not once per ancestor.
        let own: HashMap<EntityId, Vec<(String, String)>> = if self.needs_own() {
            ws.entities_of_type(CONCEPT_TYPE).par_iter().map(|&e| (e, self.own_attributes(ws, e))).collect()
        } else {
            HashMap::new()
        };
        concepts.par_iter().map(|&e| self.profile(ws, e, &own)).collect()
    }

    /// Builds the profiles of every concept of `ws`.
    pub fn build(ws: &WorkspaceView<'_>, config: ProfileConfig) -> Result<Profiles, ReadError> {
        let mut p = Profiles {
            config,
            ws: ws.id(),
            mark: ws.change_mark(),
            order: Vec::new(),
            doc_of: HashMap::new(),
            by_concept: HashMap::new(),
            index: TextIndex::default(),
            embedder: None,
            vectors: HashMap::new(),
        };
        let concepts: Vec<EntityId> = ws.entities_of_type(CONCEPT_TYPE).into_iter().filter(|&e| !Self::is_external(ws, e)).collect();
        let built = p.build_many(ws, &concepts)?;
        let texts: Vec<String> = built.iter().map(Profile::text).collect();
        p.index = TextIndex::over_texts(texts, ws.id());
        p.index.prepare();
        for (i, prof) in built.into_iter().enumerate() {
            p.order.push(prof.concept);
            p.doc_of.insert(prof.concept, i as u32);
            p.by_concept.insert(prof.concept, prof);
        }
        Ok(p)
    }

    fn is_external(ws: &WorkspaceView<'_>, e: EntityId) -> bool {
        ws.entity_property(e, keys::EXTERNAL) == Some(&Value::Bool(true))
    }

    /// Entities of this workspace created or changed since the last build or refresh, and the
    /// endpoints of claims created or changed since then.
    fn changed_since(&self, ws: &WorkspaceView<'_>) -> HashSet<EntityId> {
        let changes = ws.changes_since(&self.mark);
        changes.entities.into_iter().chain(changes.endpoints).collect()
    }

    /// Brings the profiles up to date with `ws` (a later snapshot of the same workspace),
    /// rebuilding only those a change can reach.
    pub fn refresh(&mut self, ws: &WorkspaceView<'_>) -> Result<RefreshStats, ReadError> {
        let mut changed = self.changed_since(ws);
        let v = Visibility::default();
        let rels = self.config.relations.clone();
        if !self.config.aggregate_linked_types.is_empty() {
            // A linked entity's name is part of the attributes of what it links to: a renamed
            // dataset changes the aggregates above every concept it is linked with.
            let expand = ws.expander(Direction::Both, None, &v);
            let mut linked = Vec::new();
            for &e in &changed {
                linked.extend(expand.edges(e).map(|edge| edge.neighbor));
            }
            changed.extend(linked);
        }
        let mut affected: HashSet<EntityId> = HashSet::new();
        for &e in &changed {
            affected.insert(e);
            if ws.entity_type(e).is_none() {
                continue;
            }
            for (a, _) in ws.ancestors_over(e, &rels, &v)? {
                affected.insert(a);
            }
            for (d, dist) in ws.descendants_over(e, &rels, &v)? {
                if dist > 2 {
                    break;
                }
                affected.insert(d);
            }
        }
        // A removed edge's old neighbours are rebuilt too: the changed set holds both endpoints of
        // every changed claim.
        let mut live = Vec::new();
        for &e in &affected {
            if Self::is_concept(ws, e) && !Self::is_external(ws, e) {
                live.push(e);
            } else if let Some(&doc) = self.doc_of.get(&e) {
                self.by_concept.remove(&e);
                self.vectors.remove(&e);
                self.index.index(doc, self.ws, "");
            }
        }
        live.sort_unstable();
        let built = self.build_many(ws, &live)?;
        let stats = RefreshStats { changed: changed.len(), rebuilt: built.len() };
        if let Some(e) = &self.embedder {
            let texts: Vec<String> = built.iter().map(Profile::text).collect();
            let text_refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vectors =
                e.0.embed(&text_refs)
                    .map_err(|_| ReadError::InvalidParameter { name: "embedder", reason: "failed to embed refreshed profiles" })?;
            for (p, v) in built.iter().zip(vectors) {
                self.vectors.insert(p.concept, v);
            }
        }
        for prof in built {
            let doc = match self.doc_of.get(&prof.concept) {
                Some(&d) => d,
                None => {
                    let d = self.order.len() as u32;
                    self.order.push(prof.concept);
                    self.doc_of.insert(prof.concept, d);
                    d
                }
            };
            self.index.index(doc, self.ws, &prof.text());
            self.by_concept.insert(prof.concept, prof);
        }
        self.mark = ws.change_mark();
        Ok(stats)
    }

    /// The profile of concept `e`.
    pub fn get(&self, e: EntityId) -> Option<&Profile> {
        self.by_concept.get(&e)
    }

    /// Number of profiles.
    pub fn len(&self) -> usize {
        self.by_concept.len()
    }

    /// True when there are no profiles.
    pub fn is_empty(&self) -> bool {
        self.by_concept.is_empty()
    }

    /// Embeds every profile text with `embedder` (batched) so [`Profiles::search_vector`] works;
    /// later refreshes embed the profiles they rebuild.
    pub fn embed_with(&mut self, embedder: std::sync::Arc<dyn engram_embed::Embedder>) -> Result<(), engram_embed::EmbedError> {
        let concepts: Vec<EntityId> = self.order.iter().copied().filter(|e| self.by_concept.contains_key(e)).collect();
        let texts: Vec<String> = concepts.iter().map(|e| self.by_concept[e].text()).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = embedder.embed(&refs)?;
        self.vectors = concepts.into_iter().zip(vectors).collect();
        self.embedder = Some(ProfileEmbedder(embedder));
        Ok(())
    }

    /// Whether the profiles have vectors.
    pub fn has_vectors(&self) -> bool {
        self.embedder.is_some()
    }

    /// The `k` profiles whose vectors are closest to `query` by cosine (exact), best first.
    pub fn search_vector(&self, query: &[f32], k: usize) -> Vec<(EntityId, f32)> {
        let mut hits: Vec<(EntityId, f32)> = self.vectors.iter().map(|(e, v)| (*e, engram_embed::cosine(query, v))).collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(k);
        hits
    }

    /// The `k` profiles that best match `query` by BM25, best first.
    pub fn search(&self, query: &str, k: usize) -> Vec<(EntityId, f32)> {
        self.index.search(query, self.ws, k, &[], |_| true).into_iter().map(|h| (self.order[h.doc as usize], h.score)).collect()
    }
}
