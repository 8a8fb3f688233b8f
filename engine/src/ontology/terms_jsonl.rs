//! Engram's own term JSON lines: one term per line, for sources with no standard ontology file
//! (`WordNet`, in-house taxonomies). An optional first line names the ontology:
//!
//! ```text
//! {"ontology": "wordnet", "version": "3.0"}
//! {"id": "wn:02084071", "label": "dog", "definition": "a member of the genus Canis", "synonyms": ["domestic dog", {"text": "Canis familiaris", "scope": "exact"}], "parents": ["wn:02083346"]}
//! {"id": "wn:05220461", "label": "body", "relations": [{"relation": "part_of", "target": "wn:00007846"}], "obsolete": false}
//! ```
//!
//! Term fields: `id` (required), `label`, `definition`, `synonyms` (strings, scope `unknown`, or
//! `{text, scope, type}`), `parents`, `relations`, `xrefs`, `obsolete`, `replaced_by`, `consider`,
//! `namespace`, `comment`. Any other field is an error naming line and field.

use crate::ontology::{relation_name, OntologyDoc, OntologyError, Scope, Synonym, Term};
use std::io::BufRead;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    ontology: String,
    #[serde(default)]
    version: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum SynonymLine {
    Plain(String),
    Scoped {
        text: String,
        #[serde(default)]
        scope: Option<String>,
        #[serde(default, rename = "type")]
        kind: Option<String>,
    },
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RelationLine {
    relation: String,
    target: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TermLine {
    id: String,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    definition: Option<String>,
    #[serde(default)]
    synonyms: Vec<SynonymLine>,
    #[serde(default)]
    parents: Vec<String>,
    #[serde(default)]
    relations: Vec<RelationLine>,
    #[serde(default)]
    xrefs: Vec<String>,
    #[serde(default)]
    obsolete: bool,
    #[serde(default)]
    replaced_by: Vec<String>,
    #[serde(default)]
    consider: Vec<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    comment: Option<String>,
}

/// Parses term lines. `fallback_name` names the ontology when there is no header line.
pub fn parse(input: impl BufRead, fallback_name: &str) -> Result<OntologyDoc, OntologyError> {
    let mut doc = OntologyDoc { name: fallback_name.to_owned(), ..OntologyDoc::default() };
    for (i, line) in input.lines().enumerate() {
        let line = line.map_err(|e| OntologyError::Io(e.to_string()))?;
        let lineno = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let err = |path: String, message: String| OntologyError::JsonLine { line: lineno, path, message };
        if i == 0 && line.contains("\"ontology\"") {
            let mut de = serde_json::Deserializer::from_str(&line);
            let h: Header = serde_path_to_error::deserialize(&mut de).map_err(|e| err(e.path().to_string(), e.inner().to_string()))?;
            doc.name = h.ontology;
            doc.version = h.version;
            continue;
        }
        let mut de = serde_json::Deserializer::from_str(&line);
        let t: TermLine = serde_path_to_error::deserialize(&mut de).map_err(|e| err(e.path().to_string(), e.inner().to_string()))?;
        let mut synonyms = Vec::with_capacity(t.synonyms.len());
        for (j, s) in t.synonyms.into_iter().enumerate() {
            synonyms.push(match s {
                SynonymLine::Plain(text) => Synonym { text, scope: Scope::Unknown, kind: None },
                SynonymLine::Scoped { text, scope, kind } => {
                    let scope = match scope {
                        None => Scope::Unknown,
                        Some(s) => Scope::parse(&s).ok_or_else(|| {
                            err(format!("synonyms[{j}].scope"), format!("unknown scope `{s}` (exact, narrow, broad, related, unknown)"))
                        })?,
                    };
                    Synonym { text, scope, kind }
                }
            });
        }
        if t.id.trim().is_empty() {
            return Err(err("id".into(), "empty term id".into()));
        }
        doc.terms.push(Term {
            id: t.id,
            label: t.label,
            definition: t.definition,
            synonyms,
            xrefs: t.xrefs,
            parents: t.parents,
            relations: t.relations.into_iter().map(|r| (relation_name(&r.relation), r.target)).collect(),
            obsolete: t.obsolete,
            replaced_by: t.replaced_by,
            consider: t.consider,
            namespace: t.namespace,
            comment: t.comment,
        });
    }
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_terms_and_scoped_synonyms() {
        let text = "{\"ontology\": \"wn\", \"version\": \"3.0\"}\n\
{\"id\": \"wn:1\", \"label\": \"dog\", \"synonyms\": [\"domestic dog\", {\"text\": \"Canis familiaris\", \"scope\": \"EXACT\"}], \"parents\": [\"wn:2\"]}\n\
\n{\"id\": \"wn:2\", \"label\": \"canine\", \"relations\": [{\"relation\": \"Part_Of\", \"target\": \"wn:3\"}]}\n";
        let doc = parse(text.as_bytes(), "x").expect("parses");
        assert_eq!((doc.name.as_str(), doc.version.as_deref()), ("wn", Some("3.0")));
        assert_eq!(doc.terms.len(), 2);
        assert_eq!(doc.terms[0].synonyms[1].scope, Scope::Exact);
        assert_eq!(doc.terms[0].synonyms[0].scope, Scope::Unknown);
        assert_eq!(doc.terms[1].relations, vec![("part_of".to_owned(), "wn:3".to_owned())]);
    }

    #[test]
    fn errors_name_line_and_field() {
        let err = parse("{\"id\": \"a\"}\n{\"id\": \"b\", \"colour\": 3}\n".as_bytes(), "x").expect_err("unknown field");
        let msg = err.to_string();
        assert!(msg.contains("line 2") && msg.contains("colour"), "{msg}");
        let err =
            parse("{\"id\": \"a\", \"synonyms\": [{\"text\": \"b\", \"scope\": \"wide\"}]}\n".as_bytes(), "x").expect_err("bad scope");
        assert!(err.to_string().contains("synonyms[0].scope"), "{err}");
    }
}
