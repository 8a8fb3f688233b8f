//! Synonym resolution: text → concept. Curated mappings first, then the exact CURIE, label or
//! synonym (on the core's name key, so case, spaces and dashes do not matter; synonym scope sets
//! the score), then hybrid search over the flattened profiles (BM25, fused by reciprocal rank
//! with vector search over the profile vectors, or the concept name vectors, when a query vector
//! is given). Obsolete terms rank below live ones.

use crate::error::ReadError;
use crate::ids::EntityId;
use crate::normalize::name_key;
use crate::ontology::import::keys;
use crate::ontology::mapping::lookup_mapping;
use crate::ontology::profile::Profiles;
use crate::ontology::{Scope, CONCEPT_TYPE};
use crate::read::view::WorkspaceView;
use crate::search::semantic::VectorOptions;
use crate::value::Value;
use std::collections::{HashMap, HashSet};

/// How a candidate matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatchedBy {
    /// A curated term mapping.
    Mapping,
    /// The CURIE itself.
    Id,
    /// The label.
    Label,
    /// A synonym of this scope.
    Synonym(Scope),
    /// Search over the profiles.
    Profile,
}

impl MatchedBy {
    /// `mapping`, `id`, `label`, `synonym:exact`, …, `profile`.
    pub fn as_string(&self) -> String {
        match self {
            MatchedBy::Mapping => "mapping".into(),
            MatchedBy::Id => "id".into(),
            MatchedBy::Label => "label".into(),
            MatchedBy::Synonym(s) => format!("synonym:{}", s.as_str()),
            MatchedBy::Profile => "profile".into(),
        }
    }

    /// The score an exact match of this kind gets (search hits score below all of them).
    fn score(&self) -> f32 {
        match self {
            MatchedBy::Mapping | MatchedBy::Id | MatchedBy::Label => 1.0,
            MatchedBy::Synonym(Scope::Exact) => 0.95,
            MatchedBy::Synonym(Scope::Unknown) => 0.9,
            MatchedBy::Synonym(Scope::Narrow | Scope::Broad) => 0.85,
            MatchedBy::Synonym(Scope::Related) => 0.8,
            MatchedBy::Profile => 0.7,
        }
    }
}

/// One resolution candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The concept.
    pub concept: EntityId,
    /// Its CURIE.
    pub id: String,
    /// Its label.
    pub label: String,
    /// How it matched.
    pub matched_by: MatchedBy,
    /// In `[0, 1]`: 1 for mappings, ids and labels; by scope for synonyms; at most 0.7 for search.
    pub score: f32,
    /// Obsolete term.
    pub obsolete: bool,
}

fn scope_of(ws: &WorkspaceView<'_>, e: EntityId, key: &str) -> Option<Scope> {
    let Some(Value::List(syns)) = ws.entity_property(e, keys::SYNONYMS) else { return None };
    syns.iter()
        .filter_map(|s| match s {
            Value::Map(m) => {
                let Some(Value::Str(text)) = m.get("text") else { return None };
                let scope = match m.get("scope") {
                    Some(Value::Str(s)) => Scope::parse(s).unwrap_or(Scope::Unknown),
                    _ => Scope::Unknown,
                };
                (name_key(text) == key).then_some(scope)
            }
            _ => None,
        })
        .min()
}

fn candidate(ws: &WorkspaceView<'_>, e: EntityId, matched_by: MatchedBy, score: f32) -> Candidate {
    let obsolete = ws.entity_property(e, keys::OBSOLETE) == Some(&Value::Bool(true));
    Candidate {
        concept: e,
        id: ws.entity_ext_id(e).unwrap_or_default().to_owned(),
        label: ws.entity_name(e).unwrap_or_default().to_owned(),
        matched_by,
        score,
        obsolete,
    }
}

fn is_concept(ws: &WorkspaceView<'_>, e: EntityId) -> bool {
    ws.entity_type(e).is_some_and(|t| ws.type_id(CONCEPT_TYPE) == Some(t))
}

/// Candidates for `text`, best first, at most `k`. `profiles` enables search when no exact
/// match fills `k`; `query_vector` adds vector search over concept name vectors to it.
pub fn resolve(
    ws: &WorkspaceView<'_>,
    text: &str,
    k: usize,
    profiles: Option<&Profiles>,
    query_vector: Option<&[f32]>,
) -> Result<Vec<Candidate>, ReadError> {
    let mut out: Vec<Candidate> = Vec::new();
    let mut seen: HashSet<EntityId> = HashSet::new();
    let mut push = |c: Candidate, out: &mut Vec<Candidate>| {
        if seen.insert(c.concept) {
            out.push(c);
        }
    };
    if let Some(m) = lookup_mapping(ws, text) {
        for t in m.targets {
            push(candidate(ws, t, MatchedBy::Mapping, 1.0), &mut out);
        }
    }
    if let Some(e) = ws.entity_id(text.trim()).filter(|&e| is_concept(ws, e)) {
        push(candidate(ws, e, MatchedBy::Id, 1.0), &mut out);
    }
    let key = name_key(text);
    let mut exact: Vec<Candidate> = Vec::new();
    for e in ws.find_by_name(text).into_iter().filter(|&e| is_concept(ws, e)) {
        let by = if ws.entity_name(e).is_some_and(|n| name_key(n) == key) {
            MatchedBy::Label
        } else {
            MatchedBy::Synonym(scope_of(ws, e, &key).unwrap_or(Scope::Unknown))
        };
        let score = by.score();
        exact.push(candidate(ws, e, by, score));
    }
    exact.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.concept.cmp(&b.concept)));
    for c in exact {
        push(c, &mut out);
    }
    if out.len() < k {
        if let Some(p) = profiles {
            for (e, s) in search(ws, p, text, k * 2, query_vector)? {
                push(candidate(ws, e, MatchedBy::Profile, s), &mut out);
            }
        }
    }
    // Live before obsolete; otherwise by score, stable.
    out.sort_by(|a, b| a.obsolete.cmp(&b.obsolete).then(b.score.total_cmp(&a.score)));
    out.truncate(k);
    Ok(out)
}

/// Profile search: BM25 alone, or fused by reciprocal rank with vector search — over the profile
/// vectors when the profiles were embedded, else over the concepts' name vectors; scores scaled
/// into `(0, 0.7]` so a search hit never outranks an exact match.
fn search(
    ws: &WorkspaceView<'_>,
    profiles: &Profiles,
    text: &str,
    k: usize,
    query_vector: Option<&[f32]>,
) -> Result<Vec<(EntityId, f32)>, ReadError> {
    const RRF_K: f32 = 60.0;
    let mut fused: HashMap<EntityId, f32> = HashMap::new();
    for (rank, (e, _)) in profiles.search(text, k).into_iter().enumerate() {
        *fused.entry(e).or_default() += 1.0 / (RRF_K + rank as f32 + 1.0);
    }
    if let Some(q) = query_vector.filter(|_| profiles.has_vectors()) {
        for (rank, (e, _)) in profiles.search_vector(q, k).into_iter().enumerate() {
            *fused.entry(e).or_default() += 1.0 / (RRF_K + rank as f32 + 1.0);
        }
    } else if let Some(q) = query_vector {
        let opts = VectorOptions { k, entity_types: vec![CONCEPT_TYPE.to_owned()], ..VectorOptions::default() };
        for (rank, (e, _)) in ws.search_entity_vectors(q, &opts)?.into_iter().enumerate() {
            *fused.entry(e).or_default() += 1.0 / (RRF_K + rank as f32 + 1.0);
        }
    }
    let best = fused.values().copied().fold(0.0f32, f32::max);
    let mut hits: Vec<(EntityId, f32)> = fused.into_iter().map(|(e, s)| (e, MatchedBy::Profile.score() * s / best)).collect();
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hits.truncate(k);
    Ok(hits)
}
