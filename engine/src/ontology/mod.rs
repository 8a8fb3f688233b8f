//! Ontologies as a first-class part of memory: import (OBO, RDF/SKOS, the cellxgene JSON shape and
//! engram's own term JSON lines), hierarchy operations over one or several relations, synonym
//! resolution, flattened concept profiles and curated term mappings.
//!
//! Every input format is parsed into one format-neutral [`OntologyDoc`]; [`import`] alone knows
//! how a document becomes entities and claims. Terms are entities of type `concept` keyed by their
//! CURIE; `is_a` is the transitive `subclass_of` predicate; synonyms are aliases (so the core's
//! exact name resolution finds them) and keep their scope in the `synonyms` property.

pub mod cxg;
pub mod detect;
pub mod hierarchy;
pub mod import;
pub mod mapping;
#[cfg(feature = "ontology-formats")]
pub mod obo;
pub mod profile;
#[cfg(feature = "ontology-formats")]
pub mod rdf;
pub mod resolve;
pub mod terms_jsonl;

pub use detect::{read_ontology, Format, OntologyError};
pub use hierarchy::{Cohort, Relations};
pub use import::{import_ontology, ImportReport};
pub use mapping::{list_mappings, lookup_mapping, remove_mapping, set_mapping, TermMapping};
pub use profile::{Profile, ProfileConfig, Profiles, RefreshStats};
pub use resolve::{resolve, Candidate, MatchedBy};

/// The entity type every imported term gets.
pub const CONCEPT_TYPE: &str = "concept";
/// The predicate `is_a` (and `rdfs:subClassOf`, `skos:broader`) becomes; declared transitive.
pub const SUBCLASS_OF: &str = "subclass_of";
/// The predicate OBO `part_of` keeps; declared transitive.
pub const PART_OF: &str = "part_of";

/// A synonym's scope, as OBO and oboInOwl name it; `Unknown` where the source does not say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// The same meaning.
    Exact,
    /// A narrower term.
    Narrow,
    /// A broader term.
    Broad,
    /// Related in meaning.
    Related,
    /// Not recorded by the source (the cellxgene JSON, plain labels lists).
    Unknown,
}

impl Scope {
    /// The lower-case name stored in the `synonyms` property.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Exact => "exact",
            Scope::Narrow => "narrow",
            Scope::Broad => "broad",
            Scope::Related => "related",
            Scope::Unknown => "unknown",
        }
    }

    /// Parses a stored or OBO scope name, in any case.
    pub fn parse(s: &str) -> Option<Scope> {
        [Scope::Exact, Scope::Narrow, Scope::Broad, Scope::Related, Scope::Unknown].into_iter().find(|x| x.as_str().eq_ignore_ascii_case(s))
    }
}

/// A synonym of a term.
#[derive(Clone, Debug, PartialEq)]
pub struct Synonym {
    /// The text.
    pub text: String,
    /// Its scope.
    pub scope: Scope,
    /// The synonym type, when the source gives one (OBO `synonymtypedef`).
    pub kind: Option<String>,
}

/// One term of an ontology, format-neutral.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Term {
    /// CURIE (`CL:0000540`), or the full IRI when no prefix is known.
    pub id: String,
    /// The label (`name:` in OBO, `rdfs:label` / `skos:prefLabel` in RDF).
    pub label: Option<String>,
    /// Definition text.
    pub definition: Option<String>,
    /// Synonyms with scope.
    pub synonyms: Vec<Synonym>,
    /// Cross-references.
    pub xrefs: Vec<String>,
    /// Direct parents (`is_a`).
    pub parents: Vec<String>,
    /// Other relations `(relation, target)`, e.g. `("part_of", "UBERON:0000948")`.
    pub relations: Vec<(String, String)>,
    /// Marked obsolete / deprecated.
    pub obsolete: bool,
    /// Replacement terms of an obsolete term.
    pub replaced_by: Vec<String>,
    /// Terms to consider instead of an obsolete term.
    pub consider: Vec<String>,
    /// OBO namespace.
    pub namespace: Option<String>,
    /// Free comment.
    pub comment: Option<String>,
}

/// What a parser saw but could not turn into terms, counted so nothing is dropped silently.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    /// RDF triples whose subject or object is a blank node.
    pub blank_node_triples: usize,
    /// OWL restrictions (`owl:Restriction` nodes) met.
    pub restrictions: usize,
    /// Other triples or clauses with no mapping (annotation properties engram does not keep).
    pub other: usize,
}

/// A parsed ontology.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OntologyDoc {
    /// Short name (`cl`, `uberon`): the OBO `ontology:` header, else the file stem.
    pub name: String,
    /// Release version (`data-version`, `owl:versionInfo`), when given.
    pub version: Option<String>,
    /// Terms, in file order.
    pub terms: Vec<Term>,
    /// Relations the file declares transitive (OBO `[Typedef]` with `is_transitive: true`).
    pub transitive_relations: Vec<String>,
    /// Counts of input not mapped.
    pub skipped: Skipped,
    /// Terms whose closure shipped in the file cannot be derived from its direct edges (the
    /// cellxgene JSON ships both): `(term, why)`.
    pub closure_mismatches: Vec<(String, String)>,
}

/// Compacts an OBO PURL (`http://purl.obolibrary.org/obo/CL_0000540`) to its CURIE; other IRIs
/// stay as they are.
pub fn curie(iri: &str) -> String {
    if let Some(rest) = iri.strip_prefix("http://purl.obolibrary.org/obo/") {
        if let Some((prefix, local)) = rest.split_once('_') {
            if !prefix.is_empty() && prefix.chars().all(|c| c.is_ascii_alphanumeric()) && !local.contains('/') {
                return format!("{prefix}:{local}");
            }
        }
    }
    iri.to_owned()
}

/// The relation name engram stores for an OBO relation id or label (`BFO:0000050` → `part_of`).
pub fn relation_name(rel: &str) -> String {
    match rel {
        "BFO:0000050" => PART_OF.to_owned(),
        "BFO:0000051" => "has_part".to_owned(),
        "RO:0002202" => "develops_from".to_owned(),
        "is_a" => SUBCLASS_OF.to_owned(),
        other => crate::normalize::vocabulary_key(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curies_from_obo_purls_only() {
        assert_eq!(curie("http://purl.obolibrary.org/obo/CL_0000540"), "CL:0000540");
        assert_eq!(curie("http://purl.obolibrary.org/obo/uberon/core#part_of"), "http://purl.obolibrary.org/obo/uberon/core#part_of");
        assert_eq!(curie("http://example.org/a_b"), "http://example.org/a_b");
    }

    #[test]
    fn scope_round_trip() {
        for s in [Scope::Exact, Scope::Narrow, Scope::Broad, Scope::Related, Scope::Unknown] {
            assert_eq!(Scope::parse(s.as_str()), Some(s));
        }
        assert_eq!(Scope::parse("EXACT"), Some(Scope::Exact));
        assert_eq!(Scope::parse("sideways"), None);
    }
}
