//! Turns an [`OntologyDoc`] into entities and claims, in one transaction.
//!
//! Terms are `concept` entities keyed by CURIE; `is_a` is `subclass_of` and every other relation
//! keeps its name; each edge is an accepted claim with ext id `subject|predicate|object` and one
//! evidence row naming the ontology and release. A re-import of a newer release compares with
//! what the workspace holds: new terms are added, changed ones updated in place, removed or newly
//! obsolete ones marked obsolete (never deleted), vanished edges deprecated; the report counts
//! each. References to terms outside the file become `external` concepts.

use crate::db::Database;
use crate::error::Error;
use crate::ids::EntityId;
use crate::model::ClaimState;
use crate::ontology::{OntologyDoc, Skipped, Term, CONCEPT_TYPE, PART_OF, SUBCLASS_OF};
use crate::read::view::WorkspaceView;
use crate::value::{Properties, Value};
use crate::write::batch::{AddClaim, AddEvidence, ClaimRef, DeclarePredicate, EntityRef, Op, UpsertEntity, WriteBatch};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// Property keys engram writes on concepts.
pub mod keys {
    /// The ontology a term came from.
    pub const ONTOLOGY: &str = "ontology";
    /// Definition text.
    pub const DEFINITION: &str = "definition";
    /// `[{text, scope, type?}]`.
    pub const SYNONYMS: &str = "synonyms";
    /// Cross-references.
    pub const XREFS: &str = "xrefs";
    /// `true` for obsolete / deprecated terms.
    pub const OBSOLETE: &str = "obsolete";
    /// Replacements of an obsolete term.
    pub const REPLACED_BY: &str = "replaced_by";
    /// Terms to consider instead.
    pub const CONSIDER: &str = "consider";
    /// OBO namespace.
    pub const NAMESPACE: &str = "namespace";
    /// Free comment.
    pub const COMMENT: &str = "comment";
    /// `true` for a term referenced by an ontology but not defined in it.
    pub const EXTERNAL: &str = "external";
    /// The release that no longer had the term.
    pub const REMOVED_IN: &str = "removed_in";
}

/// What an import did, and what the file held.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ImportReport {
    /// Ontology name.
    pub ontology: String,
    /// Release version, when the file gives one.
    pub version: Option<String>,
    /// Terms in the file.
    pub terms: usize,
    /// Of which obsolete.
    pub obsolete: usize,
    /// `is_a` edges in the file.
    pub is_a: usize,
    /// Other relation edges in the file, by relation.
    pub relations: BTreeMap<String, usize>,
    /// Synonyms in the file.
    pub synonyms: usize,
    /// Terms with a definition.
    pub definitions: usize,
    /// Cross-references in the file.
    pub xrefs: usize,
    /// Terms created.
    pub added: usize,
    /// Terms already present whose label, synonyms or annotations changed.
    pub updated: usize,
    /// Terms already present and unchanged.
    pub unchanged: usize,
    /// Terms that were live and are obsolete in this release.
    pub obsoleted: usize,
    /// Terms of an earlier import absent from this release (marked obsolete, not deleted).
    pub removed: usize,
    /// Edges written as new claims.
    pub claims_added: usize,
    /// Edges of an earlier import absent from this release (deprecated).
    pub claims_deprecated: usize,
    /// Edges whose target is not defined in the file.
    pub external_references: usize,
    /// Distinct targets outside the file (sorted); new ones became `external` concepts.
    pub dangling: Vec<String>,
    /// External concepts created by this import.
    pub external_entities: usize,
    /// Synonyms not stored as aliases because a term had more than the alias limit.
    pub aliases_truncated: usize,
    /// What the parser could not map.
    pub skipped: Skipped,
    /// Terms whose shipped closure differs from the one derived from the direct edges.
    pub closure_mismatches: Vec<(String, String)>,
    /// The version the import committed (`None` when nothing changed).
    pub committed_version: Option<u64>,
}

/// The desired state of one term.
struct Desired {
    name: String,
    aliases: Vec<String>,
    props: Properties,
}

fn str_list(items: &[String]) -> Value {
    Value::List(items.iter().map(|s| Value::Str(Arc::from(s.as_str()))).collect())
}

fn desired(t: &Term, ontology: &str, aliases_max: usize, truncated: &mut usize) -> Desired {
    let name = t.label.clone().unwrap_or_else(|| t.id.clone());
    let mut seen: HashSet<&str> = HashSet::from([name.as_str()]);
    let mut aliases: Vec<String> =
        t.synonyms.iter().map(|s| s.text.as_str()).filter(|s| !s.trim().is_empty() && seen.insert(s)).map(str::to_owned).collect();
    if aliases.len() > aliases_max {
        *truncated += aliases.len() - aliases_max;
        aliases.truncate(aliases_max);
    }
    let mut props = Properties::new();
    props.insert(Arc::from(keys::ONTOLOGY), Value::from(ontology));
    props.insert(Arc::from(keys::OBSOLETE), Value::Bool(t.obsolete));
    if let Some(d) = &t.definition {
        props.insert(Arc::from(keys::DEFINITION), Value::from(d.as_str()));
    }
    if !t.synonyms.is_empty() {
        let list = t
            .synonyms
            .iter()
            .map(|s| {
                let mut m = BTreeMap::new();
                m.insert(Arc::from("text"), Value::from(s.text.as_str()));
                m.insert(Arc::from("scope"), Value::from(s.scope.as_str()));
                if let Some(k) = &s.kind {
                    m.insert(Arc::from("type"), Value::from(k.as_str()));
                }
                Value::Map(m)
            })
            .collect();
        props.insert(Arc::from(keys::SYNONYMS), Value::List(list));
    }
    for (key, items) in [(keys::XREFS, &t.xrefs), (keys::REPLACED_BY, &t.replaced_by), (keys::CONSIDER, &t.consider)] {
        if !items.is_empty() {
            props.insert(Arc::from(key), str_list(items));
        }
    }
    for (key, item) in [(keys::NAMESPACE, &t.namespace), (keys::COMMENT, &t.comment)] {
        if let Some(v) = item {
            props.insert(Arc::from(key), Value::from(v.as_str()));
        }
    }
    Desired { name, aliases, props }
}

/// The claim ext id of an ontology edge.
pub fn edge_id(subject: &str, predicate: &str, object: &str) -> String {
    format!("{subject}|{predicate}|{object}")
}

/// Imports `doc` into `workspace` (created if absent) in one transaction and reports what
/// changed. A failed write leaves the database as it was.
pub fn import_ontology(db: &Database, workspace: &str, doc: &OntologyDoc) -> Result<ImportReport, Error> {
    if db.snapshot().workspace(workspace).is_err() {
        db.create_workspace(workspace)?;
    }
    let snap = db.snapshot();
    let ws = snap.workspace(workspace)?;
    let limits = db.config().limits.clone();
    let mut report = count_file(doc);
    let mut batch = WriteBatch::new(workspace);
    declare_predicates(&ws, doc, &mut batch);

    let in_file: HashMap<&str, &Term> = doc.terms.iter().map(|t| (t.id.as_str(), t)).collect();
    let previous = previous_terms(&ws, &doc.name);
    for t in &doc.terms {
        let want = desired(t, &doc.name, limits.aliases_max, &mut report.aliases_truncated);
        match ws.entity_id(&t.id) {
            None => {
                report.added += 1;
                batch.push(Op::UpsertEntity(UpsertEntity {
                    ext_id: t.id.clone(),
                    entity_type: CONCEPT_TYPE.to_owned(),
                    name: want.name,
                    aliases: want.aliases,
                    properties: want.props,
                }));
            }
            Some(id) => {
                let was_live = previous.get(t.id.as_str()).is_some_and(|live| *live);
                if t.obsolete && was_live {
                    report.obsoleted += 1;
                }
                if update_entity(&ws, id, &t.id, &want, &mut batch) {
                    report.updated += 1;
                } else {
                    report.unchanged += 1;
                }
            }
        }
    }
    let version = Value::from(doc.version.as_deref().unwrap_or("unknown"));
    for (id, live) in &previous {
        if *live && !in_file.contains_key(id.as_str()) {
            report.removed += 1;
            for (key, value) in [(keys::OBSOLETE, Value::Bool(true)), (keys::REMOVED_IN, version.clone())] {
                batch.push(Op::SetProperty { entity: EntityRef::Ext(id.clone()), key: key.to_owned(), value });
            }
        }
    }
    write_edges(&ws, doc, &in_file, &previous, &mut batch, &mut report);
    if !batch.is_empty() {
        report.committed_version = Some(db.write(&batch)?.version);
    }
    Ok(report)
}

fn count_file(doc: &OntologyDoc) -> ImportReport {
    let mut r = ImportReport {
        ontology: doc.name.clone(),
        version: doc.version.clone(),
        terms: doc.terms.len(),
        skipped: doc.skipped.clone(),
        closure_mismatches: doc.closure_mismatches.clone(),
        ..ImportReport::default()
    };
    for t in &doc.terms {
        r.obsolete += usize::from(t.obsolete);
        r.is_a += t.parents.len();
        r.synonyms += t.synonyms.len();
        r.definitions += usize::from(t.definition.is_some());
        r.xrefs += t.xrefs.len();
        for (rel, _) in &t.relations {
            *r.relations.entry(rel.clone()).or_default() += 1;
        }
    }
    r
}

fn declare_predicates(ws: &WorkspaceView<'_>, doc: &OntologyDoc, batch: &mut WriteBatch) {
    let mut transitive: BTreeSet<&str> = BTreeSet::from([SUBCLASS_OF, PART_OF]);
    transitive.extend(doc.transitive_relations.iter().map(String::as_str));
    for name in transitive {
        if !ws.predicate(name).is_some_and(|d| d.transitive) {
            batch.push(Op::DeclarePredicate(DeclarePredicate::new(name).transitive()));
        }
    }
}

/// Concepts of this ontology already in the workspace (externals aside): ext id → live.
fn previous_terms(ws: &WorkspaceView<'_>, ontology: &str) -> HashMap<String, bool> {
    let mut out = HashMap::new();
    for e in ws.entities_of_type(CONCEPT_TYPE) {
        let Some(ent) = ws.entity(e) else { continue };
        if ent.properties.get(keys::ONTOLOGY).is_some_and(|v| *v == Value::from(ontology)) {
            let obsolete = ent.properties.get(keys::OBSOLETE) == Some(&Value::Bool(true));
            out.insert(ent.ext_id.to_string(), !obsolete);
        }
    }
    out
}

/// Emits the operations that bring entity `id` to `want`; false when it already matches.
fn update_entity(ws: &WorkspaceView<'_>, id: EntityId, ext: &str, want: &Desired, batch: &mut WriteBatch) -> bool {
    let Some(have) = ws.entity(id) else { return false };
    let entity = || EntityRef::Ext(ext.to_owned());
    let before = batch.len();
    if *have.name != *want.name {
        batch.push(Op::RenameEntity { entity: entity(), name: want.name.clone() });
    }
    let want_aliases: HashSet<&str> = want.aliases.iter().map(String::as_str).collect();
    // A rename keeps the old name as an alias; it goes unless it is still a synonym.
    let mut have_aliases: HashSet<&str> = have.aliases.iter().map(|a| &**a).collect();
    if *have.name != *want.name {
        have_aliases.insert(&have.name);
    }
    for a in &have_aliases {
        if !want_aliases.contains(a) {
            batch.push(Op::RemoveAlias { entity: entity(), alias: (*a).to_owned() });
        }
    }
    for a in &want.aliases {
        if !have_aliases.contains(a.as_str()) {
            batch.push(Op::AddAlias { entity: entity(), alias: a.clone() });
        }
    }
    for (k, v) in &want.props {
        if have.properties.get(k) != Some(v) {
            batch.push(Op::SetProperty { entity: entity(), key: k.to_string(), value: v.clone() });
        }
    }
    for k in have.properties.keys() {
        if !want.props.contains_key(k) {
            batch.push(Op::SetProperty { entity: entity(), key: k.to_string(), value: Value::Null });
        }
    }
    batch.len() > before
}

fn write_edges(
    ws: &WorkspaceView<'_>,
    doc: &OntologyDoc,
    in_file: &HashMap<&str, &Term>,
    previous: &HashMap<String, bool>,
    batch: &mut WriteBatch,
    report: &mut ImportReport,
) {
    let mut wanted: HashSet<String> = HashSet::new();
    let mut dangling: BTreeSet<&str> = BTreeSet::new();
    let source = format!("ontology:{}", doc.name);
    for t in &doc.terms {
        let edges = t.parents.iter().map(|p| (SUBCLASS_OF, p.as_str())).chain(t.relations.iter().map(|(r, o)| (r.as_str(), o.as_str())));
        for (pred, object) in edges {
            if !in_file.contains_key(object) {
                report.external_references += 1;
                if dangling.insert(object) && ws.entity_id(object).is_none() {
                    report.external_entities += 1;
                    let mut props = Properties::new();
                    props.insert(Arc::from(keys::EXTERNAL), Value::Bool(true));
                    batch.push(Op::UpsertEntity(UpsertEntity {
                        ext_id: object.to_owned(),
                        entity_type: CONCEPT_TYPE.to_owned(),
                        name: object.to_owned(),
                        aliases: Vec::new(),
                        properties: props,
                    }));
                }
            }
            let ext = edge_id(&t.id, pred, object);
            if !wanted.insert(ext.clone()) {
                continue; // the same edge twice in the file
            }
            let Some(ext) = free_claim_id(ws, &ext) else { continue };
            report.claims_added += 1;
            batch.add_claim(AddClaim::new(t.id.as_str(), pred, object).id(&ext).state(ClaimState::Accepted));
            batch.push(Op::AddEvidence(AddEvidence {
                claim: Some(ClaimRef::Ext(ext)),
                model: Some(source.clone()),
                model_version: doc.version.clone(),
                ..AddEvidence::default()
            }));
        }
    }
    report.dangling = dangling.into_iter().map(str::to_owned).collect();
    if previous.is_empty() {
        return;
    }
    // Edges of the earlier import that this release no longer has.
    for c in ws.claims_with(None, ClaimState::Accepted).into_iter().chain(ws.claims_with(None, ClaimState::Proposed)) {
        let Some(claim) = ws.claim(c) else { continue };
        let base = claim.ext_id.split('#').next().unwrap_or_default();
        let Some(subject) = base.split('|').next() else { continue };
        if base.matches('|').count() == 2 && previous.contains_key(subject) && !wanted.contains(base) {
            report.claims_deprecated += 1;
            batch.push(Op::Deprecate { claim: ClaimRef::Id(c), superseded_by: None });
        }
    }
}

/// The ext id to write edge `ext` under: `None` when a live claim already holds it; else `ext`
/// if no claim has it yet, or `ext#2`, `ext#3`, … (an edge deprecated by an earlier release that
/// is back gets a fresh claim; the old one keeps its history).
fn free_claim_id(ws: &WorkspaceView<'_>, ext: &str) -> Option<String> {
    let mut id = ext.to_owned();
    for n in 2.. {
        match ws.claim_id(&id).and_then(|c| ws.claim(c)) {
            None => return Some(id),
            Some(c) if c.state != ClaimState::Deprecated && !c.deleted => return None,
            Some(_) => id = format!("{ext}#{n}"),
        }
    }
    None
}
