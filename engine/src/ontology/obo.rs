//! OBO 1.2 / 1.4 flat files, through `fastobo`.

use crate::ontology::{relation_name, OntologyDoc, OntologyError, Scope, Synonym, Term};
use fastobo::ast::{EntityFrame, HeaderClause, SynonymScope, TermClause, TypedefClause};
use std::io::BufRead;

/// Parses an OBO document. `fallback_name` names the ontology when its header has no
/// `ontology:` line.
pub fn parse(input: impl BufRead, fallback_name: &str) -> Result<OntologyDoc, OntologyError> {
    // The sequential parser keeps file order (the default, threaded one did not always), so
    // dense ids follow the file.
    let parser = <fastobo::parser::SequentialParser<_> as fastobo::parser::Parser<_>>::new(input);
    let doc = fastobo::ast::OboDoc::try_from(parser).map_err(|e| OntologyError::Syntax { format: "OBO", message: e.to_string() })?;
    let mut out = OntologyDoc { name: fallback_name.to_owned(), ..OntologyDoc::default() };
    for clause in doc.header() {
        match clause {
            HeaderClause::Ontology(name) => name.as_str().clone_into(&mut out.name),
            HeaderClause::DataVersion(v) => out.version = Some(v.as_str().to_owned()),
            _ => {}
        }
    }
    for frame in doc.entities() {
        match frame {
            EntityFrame::Term(frame) => {
                let mut term = Term { id: frame.id().as_inner().to_string(), ..Term::default() };
                for line in frame.clauses() {
                    add_clause(&mut term, line.as_inner(), &mut out.skipped.other);
                }
                out.terms.push(term);
            }
            EntityFrame::Typedef(frame) => {
                if frame.clauses().iter().any(|c| matches!(c.as_inner(), TypedefClause::IsTransitive(true))) {
                    out.transitive_relations.push(relation_name(&frame.id().as_inner().to_string()));
                }
            }
            EntityFrame::Instance(_) => out.skipped.other += 1,
        }
    }
    Ok(out)
}

fn add_clause(term: &mut Term, clause: &TermClause, skipped: &mut usize) {
    match clause {
        TermClause::Name(name) => term.label = Some(name.as_str().to_owned()),
        TermClause::Def(def) => term.definition = Some(def.text().as_str().to_owned()),
        TermClause::Synonym(s) => term.synonyms.push(Synonym {
            text: s.description().as_str().to_owned(),
            scope: match s.scope() {
                SynonymScope::Exact => Scope::Exact,
                SynonymScope::Narrow => Scope::Narrow,
                SynonymScope::Broad => Scope::Broad,
                SynonymScope::Related => Scope::Related,
            },
            kind: s.ty().map(ToString::to_string),
        }),
        TermClause::Xref(x) => term.xrefs.push(x.id().to_string()),
        TermClause::IsA(parent) => term.parents.push(parent.to_string()),
        TermClause::Relationship(rel, target) => term.relations.push((relation_name(&rel.to_string()), target.to_string())),
        TermClause::IsObsolete(b) => term.obsolete = *b,
        TermClause::ReplacedBy(t) => term.replaced_by.push(t.to_string()),
        TermClause::Consider(t) => term.consider.push(t.to_string()),
        TermClause::Namespace(ns) => term.namespace = Some(ns.to_string()),
        TermClause::Comment(c) => term.comment = Some(c.as_str().to_owned()),
        TermClause::Subset(_) | TermClause::CreatedBy(_) | TermClause::CreationDate(_) | TermClause::AltId(_) => {}
        _ => *skipped += 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "format-version: 1.2\ndata-version: test/2024\nontology: tiny\n\n\
[Term]\nid: T:1\nname: cell\ndef: \"A unit of life.\" []\nsynonym: \"cellula\" EXACT []\n\n\
[Term]\nid: T:2\nname: neuron\nis_a: T:1 ! cell\nrelationship: part_of T:9\nsynonym: \"nerve cell\" EXACT []\nsynonym: \"neurone\" RELATED []\nxref: FMA:1\n\n\
[Term]\nid: T:3\nname: old neuron\nis_obsolete: true\nreplaced_by: T:2\n\n\
[Typedef]\nid: part_of\nname: part of\nis_transitive: true\n";

    #[test]
    fn reads_terms_edges_synonyms_and_obsolescence() {
        let doc = parse(SAMPLE.as_bytes(), "fallback").expect("parses");
        assert_eq!(doc.name, "tiny");
        assert_eq!(doc.version.as_deref(), Some("test/2024"));
        assert_eq!(doc.terms.len(), 3);
        let ids: Vec<&str> = doc.terms.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["T:1", "T:2", "T:3"], "file order");
        let get = |id: &str| doc.terms.iter().find(|t| t.id == id).expect(id);
        let n = get("T:2");
        assert_eq!(n.label.as_deref(), Some("neuron"));
        assert_eq!(n.parents, vec!["T:1"]);
        assert_eq!(n.relations, vec![("part_of".to_owned(), "T:9".to_owned())]);
        assert_eq!(
            n.synonyms.iter().map(|s| (s.text.as_str(), s.scope)).collect::<Vec<_>>(),
            [("nerve cell", Scope::Exact), ("neurone", Scope::Related)]
        );
        assert_eq!(n.xrefs, vec!["FMA:1"]);
        assert_eq!(get("T:1").definition.as_deref(), Some("A unit of life."));
        assert!(get("T:3").obsolete);
        assert_eq!(get("T:3").replaced_by, vec!["T:2"]);
        assert_eq!(doc.transitive_relations, vec!["part_of"]);
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let err = parse("format-version: 1.2\n\n[Term]\nid: T:1\nis_a T:2\n".as_bytes(), "x").expect_err("bad clause");
        let msg = err.to_string();
        assert!(msg.contains("OBO") && msg.contains('5'), "{msg}");
    }
}
