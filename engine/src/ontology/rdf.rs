//! RDF ontologies (Turtle, N-Triples, RDF/XML) through `oxrdfio`: OWL classes with
//! `rdfs:subClassOf` and `rdfs:label`, SKOS concept schemes, oboInOwl synonyms and annotations.
//!
//! Only named classes become terms. Triples on blank nodes (OWL restrictions, anonymous class
//! expressions, axiom annotations) are counted in [`Skipped`](crate::ontology::Skipped), as are
//! triples with no mapping, so the report says what was left out.

use crate::ontology::{curie, OntologyDoc, OntologyError, Scope, Synonym, Term};
use oxrdfio::{RdfFormat, RdfParser};
use std::collections::{HashMap, HashSet};
use std::io::Read;

const RDF: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
const RDFS: &str = "http://www.w3.org/2000/01/rdf-schema#";
const OWL: &str = "http://www.w3.org/2002/07/owl#";
const SKOS: &str = "http://www.w3.org/2004/02/skos/core#";
const OIO: &str = "http://www.geneontology.org/formats/oboInOwl#";
const OBO: &str = "http://purl.obolibrary.org/obo/";

/// Parses RDF in `format`. `fallback_name` names the ontology when it declares none.
pub fn parse(input: impl Read, format: RdfFormat, fallback_name: &str) -> Result<OntologyDoc, OntologyError> {
    let mut b = Builder::default();
    for quad in RdfParser::from_format(format).for_reader(input) {
        let quad = quad.map_err(|e| OntologyError::Syntax { format: "RDF", message: e.to_string() })?;
        b.triple(quad.subject, quad.predicate.as_str(), &quad.object);
    }
    Ok(b.finish(fallback_name))
}

#[derive(Default)]
struct Builder {
    index: HashMap<String, usize>,
    terms: Vec<Term>,
    /// Subjects declared classes or concepts (others are dropped at the end).
    classes: HashSet<usize>,
    restriction_nodes: HashSet<String>,
    blank_triples: usize,
    other: usize,
    ontology: Option<String>,
    version: Option<String>,
}

impl Builder {
    fn term(&mut self, iri: &str) -> &mut Term {
        let id = curie(iri);
        let n = self.terms.len();
        let i = *self.index.entry(id.clone()).or_insert(n);
        if i == n {
            self.terms.push(Term { id, ..Term::default() });
        }
        &mut self.terms[i]
    }

    fn mark_class(&mut self, iri: &str) {
        self.term(iri);
        let i = self.index[&curie(iri)];
        self.classes.insert(i);
    }

    fn triple(&mut self, s: oxrdf::NamedOrBlankNode, p: &str, o: &oxrdf::Term) {
        use oxrdf::{NamedOrBlankNode as S, Term as O};
        let s = match s {
            S::NamedNode(n) => n.into_string(),
            S::BlankNode(b) => {
                self.blank_triples += 1;
                if p == format!("{RDF}type") && matches!(o, O::NamedNode(n) if n.as_str() == format!("{OWL}Restriction")) {
                    self.restriction_nodes.insert(b.into_string());
                }
                return;
            }
        };
        let (named, literal) = match o {
            O::NamedNode(n) => (Some(n.as_str().to_owned()), None),
            O::Literal(l) => (None, Some(l.value().to_owned())),
            O::BlankNode(_) => {
                self.blank_triples += 1;
                return;
            }
            #[allow(unreachable_patterns)] // Reason: as above.
            _ => {
                self.other += 1;
                return;
            }
        };
        let local = |ns: &str| p.strip_prefix(ns);
        match (local(RDF), local(RDFS), local(OWL), local(SKOS), local(OIO), local(OBO), named, literal) {
            (Some("type"), .., Some(t), _) => match t.as_str() {
                x if x == format!("{OWL}Class") || x == format!("{SKOS}Concept") || x == format!("{RDFS}Class") => self.mark_class(&s),
                x if x == format!("{OWL}Ontology") => self.ontology = Some(s),
                _ => self.other += 1,
            },
            (_, Some("subClassOf"), .., Some(parent), _) | (_, _, _, Some("broader"), .., Some(parent), _) => {
                self.mark_class(&s);
                self.mark_class(&parent);
                self.term(&s).parents.push(curie(&parent));
            }
            (_, _, _, Some("narrower"), .., Some(child), _) => {
                self.mark_class(&s);
                self.mark_class(&child);
                self.term(&child).parents.push(curie(&s));
            }
            (_, _, Some("equivalentClass"), .., Some(other), _) => self.term(&s).relations.push(("equivalent_to".into(), curie(&other))),
            (_, _, _, Some(m @ ("exactMatch" | "closeMatch" | "broadMatch" | "narrowMatch" | "relatedMatch")), .., Some(other), _) => {
                let rel = crate::normalize::vocabulary_key(&m.replace("Match", "_match"));
                self.term(&s).relations.push((rel, curie(&other)));
            }
            (_, Some("label"), .., Some(text)) | (_, _, _, Some("prefLabel"), .., Some(text)) => {
                let t = self.term(&s);
                if t.label.is_none() || p.starts_with(SKOS) {
                    t.label = Some(text);
                }
            }
            (_, _, _, Some("altLabel"), .., Some(text)) => self.term(&s).synonyms.push(Synonym { text, scope: Scope::Exact, kind: None }),
            (_, _, _, Some("hiddenLabel"), .., Some(text)) => {
                self.term(&s).synonyms.push(Synonym { text, scope: Scope::Related, kind: None });
            }
            (_, _, _, _, Some(kind), .., Some(text)) if kind.starts_with("has") && kind.ends_with("Synonym") => {
                let scope = match kind {
                    "hasExactSynonym" => Scope::Exact,
                    "hasNarrowSynonym" => Scope::Narrow,
                    "hasBroadSynonym" => Scope::Broad,
                    "hasRelatedSynonym" => Scope::Related,
                    _ => Scope::Unknown,
                };
                self.term(&s).synonyms.push(Synonym { text, scope, kind: None });
            }
            (_, _, _, Some("definition"), .., Some(text)) | (.., Some("IAO_0000115"), _, Some(text)) => {
                self.term(&s).definition = Some(text);
            }
            (_, Some("comment"), .., Some(text)) => self.term(&s).comment = Some(text),
            (_, _, _, _, Some("hasDbXref"), .., Some(text)) => self.term(&s).xrefs.push(text),
            (_, _, _, _, Some("hasOBONamespace"), .., Some(text)) => self.term(&s).namespace = Some(text),
            (_, _, Some("deprecated"), .., Some(text)) => self.term(&s).obsolete = text == "true" || text == "1",
            (.., Some("IAO_0100001"), Some(by), _) => self.term(&s).replaced_by.push(curie(&by)),
            (_, _, _, _, Some("consider"), _, named, literal) => {
                if let Some(c) = named.clone().or(literal.clone()) {
                    self.term(&s).consider.push(curie(&c));
                }
            }
            (_, _, Some("versionInfo"), .., Some(v)) => self.version = Some(v),
            (_, _, Some("versionIRI"), .., Some(v), _) => self.version = self.version.take().or(Some(v)),
            _ => self.other += 1,
        }
    }

    fn finish(self, fallback_name: &str) -> OntologyDoc {
        let name = self
            .ontology
            .as_deref()
            .and_then(|iri| iri.trim_end_matches(['/', '#']).rsplit(['/', '#']).next())
            .map(|n| n.trim_end_matches(".owl").to_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| fallback_name.to_owned());
        let mut doc = OntologyDoc { name, version: self.version, ..OntologyDoc::default() };
        doc.skipped.blank_node_triples = self.blank_triples;
        doc.skipped.restrictions = self.restriction_nodes.len();
        doc.skipped.other = self.other;
        for (i, mut t) in self.terms.into_iter().enumerate() {
            if !self.classes.contains(&i) {
                // Annotations on something never declared a class (properties, the ontology).
                doc.skipped.other += 1;
                continue;
            }
            t.parents.dedup();
            doc.terms.push(t);
        }
        doc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: &str = r#"
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix oio: <http://www.geneontology.org/formats/oboInOwl#> .
@prefix obo: <http://purl.obolibrary.org/obo/> .
<http://example.org/onto.owl> a owl:Ontology ; owl:versionInfo "2024-01" .
obo:X_1 a owl:Class ; rdfs:label "cell" ; obo:IAO_0000115 "A unit." .
obo:X_2 a owl:Class ; rdfs:label "neuron" ; rdfs:subClassOf obo:X_1 ;
    oio:hasExactSynonym "nerve cell" ; oio:hasRelatedSynonym "neurone" ;
    rdfs:subClassOf [ a owl:Restriction ; owl:onProperty obo:BFO_0000050 ; owl:someValuesFrom obo:X_9 ] .
obo:X_3 a owl:Class ; owl:deprecated true ; obo:IAO_0100001 obo:X_2 ; rdfs:label "obsolete neuron" .
<http://ex.org/animals> a skos:Concept ; skos:prefLabel "animals" ; skos:narrower <http://ex.org/dogs> .
<http://ex.org/dogs> skos:prefLabel "dogs" ; skos:altLabel "hounds" ; skos:exactMatch obo:X_2 .
"#;

    #[test]
    fn turtle_classes_skos_and_counted_restrictions() {
        let doc = parse(TTL.as_bytes(), RdfFormat::Turtle, "fallback").expect("parses");
        assert_eq!(doc.name, "onto");
        assert_eq!(doc.version.as_deref(), Some("2024-01"));
        let get = |id: &str| doc.terms.iter().find(|t| t.id == id).expect(id);
        assert_eq!(get("X:2").parents, vec!["X:1"]);
        assert_eq!(get("X:2").synonyms.len(), 2);
        assert_eq!(get("X:1").definition.as_deref(), Some("A unit."));
        assert!(get("X:3").obsolete);
        assert_eq!(get("X:3").replaced_by, vec!["X:2"]);
        assert_eq!(get("http://ex.org/dogs").parents, vec!["http://ex.org/animals"]);
        assert_eq!(get("http://ex.org/dogs").synonyms[0].text, "hounds");
        assert_eq!(get("http://ex.org/dogs").relations, vec![("exact_match".to_owned(), "X:2".to_owned())]);
        assert_eq!(doc.skipped.restrictions, 1);
        assert!(doc.skipped.blank_node_triples >= 3, "{:?}", doc.skipped);
    }

    #[test]
    fn ntriples_and_syntax_errors() {
        let nt = "<http://purl.obolibrary.org/obo/A_1> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <http://purl.obolibrary.org/obo/A_2> .\n";
        let doc = parse(nt.as_bytes(), RdfFormat::NTriples, "a").expect("parses");
        assert_eq!(doc.terms.len(), 2);
        let err = parse("<a> <b> .\n".as_bytes(), RdfFormat::NTriples, "a").expect_err("bad");
        assert!(err.to_string().contains("RDF"), "{err}");
    }

    #[test]
    fn rdf_xml_classes_labels_and_synonyms() {
        let xml = r#"<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#"
         xmlns:owl="http://www.w3.org/2002/07/owl#" xmlns:oboInOwl="http://www.geneontology.org/formats/oboInOwl#">
  <owl:Class rdf:about="http://purl.obolibrary.org/obo/UBERON_0000948">
    <rdfs:label>heart</rdfs:label>
    <oboInOwl:hasExactSynonym>cardium</oboInOwl:hasExactSynonym>
    <rdfs:subClassOf rdf:resource="http://purl.obolibrary.org/obo/UBERON_0000062"/>
    <rdfs:subClassOf><owl:Restriction><owl:onProperty rdf:resource="http://purl.obolibrary.org/obo/BFO_0000050"/>
      <owl:someValuesFrom rdf:resource="http://purl.obolibrary.org/obo/UBERON_0004535"/></owl:Restriction></rdfs:subClassOf>
  </owl:Class>
</rdf:RDF>"#;
        let doc = parse(xml.as_bytes(), RdfFormat::RdfXml, "x").expect("parses");
        let heart = doc.terms.iter().find(|t| t.id == "UBERON:0000948").expect("heart");
        assert_eq!(heart.label.as_deref(), Some("heart"));
        assert_eq!(heart.parents, vec!["UBERON:0000062"]);
        assert_eq!(heart.synonyms[0].scope, Scope::Exact);
        assert_eq!(doc.skipped.restrictions, 1);
    }
}
