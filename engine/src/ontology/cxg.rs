//! The pre-digested JSON shape of the cellxgene ontology guide: an object keyed by CURIE, each
//! term with `label`, `description`, `synonyms`, `deprecated`, `ancestors` (the closure over
//! `is_a ∪ part_of` with minimum distances), `replaced_by`, `consider`, `comments`, `term_tracker`.
//!
//! The relation type is not recorded, so the entries at distance 1 (a term's direct parents)
//! become `subclass_of`. The shipped closure is kept only as an oracle: each term's closure derived
//! from the direct edges is compared with it, and the terms where they differ are reported.

use crate::ontology::{OntologyDoc, OntologyError, Scope, Synonym, Term};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::BufRead;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CxgTerm {
    label: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    synonyms: Vec<String>,
    #[serde(default)]
    deprecated: bool,
    #[serde(default)]
    ancestors: BTreeMap<String, u32>,
    #[serde(default)]
    replaced_by: Option<String>,
    #[serde(default)]
    consider: Vec<String>,
    #[serde(default)]
    comments: Vec<String>,
    #[serde(default)]
    term_tracker: Option<String>,
}

/// Parses the JSON. `name` names the ontology (the file carries no header).
pub fn parse(input: impl BufRead, name: &str) -> Result<OntologyDoc, OntologyError> {
    let mut de = serde_json::Deserializer::from_reader(input);
    let terms: BTreeMap<String, CxgTerm> = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| OntologyError::Json { path: e.path().to_string(), message: e.inner().to_string() })?;
    let mut doc = OntologyDoc { name: name.to_owned(), ..OntologyDoc::default() };
    let mut shipped: HashMap<&str, &BTreeMap<String, u32>> = HashMap::new();
    for (id, t) in &terms {
        let parents: Vec<String> = t.ancestors.iter().filter(|(_, d)| **d == 1).map(|(a, _)| a.clone()).collect();
        shipped.insert(id.as_str(), &t.ancestors);
        let mut comment = t.comments.join("\n");
        if let Some(tracker) = &t.term_tracker {
            if !comment.is_empty() {
                comment.push('\n');
            }
            comment.push_str(tracker);
        }
        doc.terms.push(Term {
            id: id.clone(),
            label: Some(t.label.clone()).filter(|l| !l.trim().is_empty()),
            definition: t.description.clone(),
            synonyms: t.synonyms.iter().map(|s| Synonym { text: s.clone(), scope: Scope::Unknown, kind: None }).collect(),
            parents,
            obsolete: t.deprecated,
            replaced_by: t.replaced_by.iter().map(|r| crate::ontology::curie(r)).collect(),
            consider: t.consider.iter().map(|c| crate::ontology::curie(c)).collect(),
            comment: Some(comment).filter(|c| !c.is_empty()),
            ..Term::default()
        });
    }
    doc.closure_mismatches = closure_mismatches(&doc.terms, &shipped);
    Ok(doc)
}

/// Terms whose closure over the direct edges differs from the shipped one, with the first
/// difference found.
fn closure_mismatches(terms: &[Term], shipped: &HashMap<&str, &BTreeMap<String, u32>>) -> Vec<(String, String)> {
    let parents: HashMap<&str, &[String]> = terms.iter().map(|t| (t.id.as_str(), t.parents.as_slice())).collect();
    let mut out = Vec::new();
    for t in terms {
        let mut dist: HashMap<&str, u32> = HashMap::new();
        let mut queue = VecDeque::from([(t.id.as_str(), 0u32)]);
        while let Some((e, d)) = queue.pop_front() {
            for p in parents.get(e).copied().unwrap_or_default() {
                if p != &t.id && !dist.contains_key(p.as_str()) {
                    dist.insert(p, d + 1);
                    queue.push_back((p, d + 1));
                }
            }
        }
        let want = shipped[t.id.as_str()];
        let why = if dist.len() == want.len() {
            want.iter().find_map(|(a, d)| match dist.get(a.as_str()) {
                Some(got) if got == d => None,
                Some(got) => Some(format!("{a}: derived distance {got}, shipped {d}")),
                None => Some(format!("{a}: shipped but not derivable")),
            })
        } else {
            Some(format!("derived {} ancestors, shipped {}", dist.len(), want.len()))
        };
        if let Some(why) = why {
            out.push((t.id.clone(), why));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_parents_become_is_a_and_closures_are_checked() {
        let json = r#"{
          "X:1": {"label": "root", "deprecated": false, "ancestors": {}},
          "X:2": {"label": "mid", "deprecated": false, "ancestors": {"X:1": 1}, "synonyms": ["middle"]},
          "X:3": {"label": "leaf", "deprecated": false, "ancestors": {"X:2": 1, "X:1": 2}},
          "X:4": {"label": "odd", "deprecated": false, "ancestors": {"X:2": 1, "X:1": 1}},
          "X:5": {"label": "", "deprecated": true, "ancestors": {}, "replaced_by": "http://purl.obolibrary.org/obo/X_3"}
        }"#;
        let doc = parse(json.as_bytes(), "x").expect("parses");
        assert_eq!(doc.terms.len(), 5);
        assert_eq!(doc.terms[2].parents, vec!["X:2"]);
        assert_eq!(doc.terms[1].synonyms[0].scope, Scope::Unknown);
        assert_eq!(doc.terms[4].label, None);
        assert_eq!(doc.terms[4].replaced_by, vec!["X:3"]);
        // X:4 lists X:1 at distance 1 (a direct edge) so its closure is derivable; none mismatch.
        assert!(doc.closure_mismatches.is_empty(), "{:?}", doc.closure_mismatches);
        let bad = r#"{"X:1": {"label": "a", "deprecated": false, "ancestors": {"X:9": 2}}}"#;
        let doc = parse(bad.as_bytes(), "x").expect("parses");
        assert_eq!(doc.closure_mismatches.len(), 1);
    }

    #[test]
    fn bad_fields_are_named_by_path() {
        let err = parse(r#"{"X:1": {"label": "a", "deprecated": "no", "ancestors": {}}}"#.as_bytes(), "x").expect_err("bad type");
        assert!(err.to_string().contains("X:1.deprecated"), "{err}");
        let err = parse(r#"{"X:1": {"label": "a", "colour": 1}}"#.as_bytes(), "x").expect_err("unknown field");
        assert!(err.to_string().contains("colour"), "{err}");
    }
}
