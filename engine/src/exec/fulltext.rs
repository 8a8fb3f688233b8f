//! FalkorDB's full-text procedures, `db.idx.fulltext.queryNodes(label, query)` and
//! `…queryRelationships(type, query)`, answered by a scan of the label's nodes (or the type's
//! relationships) with the keyword index's own terms (Unicode words, NLTK stop words out,
//! Snowball stems). The text searched is the properties a full-text index was declared on for
//! that label (`CREATE FULLTEXT INDEX`, `db.idx.fulltext.createNodeIndex`), else every string
//! property.
//!
//! The query is the `RediSearch` subset clients send: words (AND between them), `a | b` (OR),
//! parentheses, `"quoted phrases"` (their words all present), `prefix*`, and field restrictions
//! `@field:value`, `@field:"phrase"`, `@field:{tag | tag}` (that property must hold the words). The
//! score is the number of occurrences of the matched words in the searched text: monotone, not
//! BM25.

use std::collections::BTreeMap;
use std::sync::Arc;

use engram_query::{Detail, ErrorType, QueryError};

use super::graph::Graph;
use super::value::Val;
use crate::index::text::terms;

/// A parsed query.
#[derive(Debug, PartialEq)]
enum Q {
    /// All must match (scores add up).
    All(Vec<Q>),
    /// At least one must match (the matching ones' scores add up).
    Any(Vec<Q>),
    /// Every one of these terms occurs in the searched text; a term ending in `*` is a prefix.
    Words(Vec<String>),
    /// The property holds every one of these terms (a restriction: it adds no score).
    Field(String, Box<Q>),
}

fn bad(message: impl Into<String>) -> QueryError {
    QueryError::runtime(ErrorType::ProcedureError, Detail::InvalidArgumentValue, message)
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    at: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.at < self.s.len() && self.s[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.s.get(self.at).copied()
    }

    /// A sequence of alternatives, up to `)` or the end: all of them.
    fn sequence(&mut self, depth: usize) -> Result<Q, QueryError> {
        if depth > 32 {
            return Err(bad("full-text query: parentheses nest deeper than 32"));
        }
        let mut all = Vec::new();
        while let Some(c) = self.peek() {
            if c == b')' || c == b'}' {
                break;
            }
            all.push(self.alternatives(depth)?);
        }
        Ok(if all.len() == 1 { all.remove(0) } else { Q::All(all) })
    }

    fn alternatives(&mut self, depth: usize) -> Result<Q, QueryError> {
        let mut any = vec![self.unit(depth)?];
        while self.peek() == Some(b'|') {
            self.at += 1;
            any.push(self.unit(depth)?);
        }
        Ok(if any.len() == 1 { any.remove(0) } else { Q::Any(any) })
    }

    fn unit(&mut self, depth: usize) -> Result<Q, QueryError> {
        match self.peek() {
            Some(b'(') => {
                self.at += 1;
                let q = self.sequence(depth + 1)?;
                if self.peek() != Some(b')') {
                    return Err(bad(format!("full-text query: a `)` is missing at byte {}", self.at)));
                }
                self.at += 1;
                Ok(q)
            }
            Some(b'@') => {
                self.at += 1;
                let start = self.at;
                while self.at < self.s.len() && (self.s[self.at].is_ascii_alphanumeric() || self.s[self.at] == b'_') {
                    self.at += 1;
                }
                let field = self.text[start..self.at].to_owned();
                if field.is_empty() || self.s.get(self.at) != Some(&b':') {
                    return Err(bad(format!("full-text query: expected `@field:` at byte {start}")));
                }
                self.at += 1;
                let value = if self.peek() == Some(b'{') {
                    self.at += 1;
                    let q = self.sequence(depth + 1)?;
                    if self.peek() != Some(b'}') {
                        return Err(bad(format!("full-text query: a `}}` is missing at byte {}", self.at)));
                    }
                    self.at += 1;
                    q
                } else {
                    self.unit(depth + 1)?
                };
                Ok(Q::Field(field, Box::new(value)))
            }
            Some(b'"') => {
                self.at += 1;
                let start = self.at;
                while self.at < self.s.len() && self.s[self.at] != b'"' {
                    self.at += 1;
                }
                let phrase = &self.text[start..self.at.min(self.s.len())];
                self.at = (self.at + 1).min(self.s.len());
                Ok(Q::Words(terms(phrase)))
            }
            Some(_) => {
                let start = self.at;
                while self.at < self.s.len()
                    && !matches!(self.s[self.at], b' ' | b'\t' | b'\n' | b'\r' | b'(' | b')' | b'|' | b'{' | b'}' | b'"' | b'@')
                {
                    self.at += 1;
                }
                let word = &self.text[start..self.at];
                if word.is_empty() {
                    // A stray character the grammar does not know: skip it.
                    self.at += 1;
                    return Ok(Q::Words(Vec::new()));
                }
                let negated = word.starts_with('-');
                let word = word.trim_start_matches('-');
                if let Some(stem) = word.strip_suffix('*') {
                    return Ok(Q::Words(vec![format!("{}*", stem.to_lowercase())]));
                }
                if negated {
                    // Negation is not supported: the word is left out rather than misread.
                    return Ok(Q::Words(Vec::new()));
                }
                Ok(Q::Words(terms(word)))
            }
            None => Err(bad("full-text query: it ends where a term was expected")),
        }
    }
}

fn parse(text: &str) -> Result<Q, QueryError> {
    let mut p = Parser { s: text.as_bytes(), text, at: 0 };
    let q = p.sequence(0)?;
    if p.peek().is_some() {
        return Err(bad(format!("full-text query: unexpected `{}` at byte {}", char::from(p.s[p.at]), p.at)));
    }
    Ok(q)
}

/// A document: the searched text's terms (with counts) and each property's terms.
struct Doc {
    searched: BTreeMap<String, usize>,
    fields: BTreeMap<Arc<str>, Vec<String>>,
}

fn count(ts: &BTreeMap<String, usize>, term: &str) -> usize {
    match term.strip_suffix('*') {
        Some(prefix) => ts.range(prefix.to_owned()..).take_while(|(t, _)| t.starts_with(prefix)).map(|(_, n)| n).sum(),
        None => ts.get(term).copied().unwrap_or(0),
    }
}

/// The score of `doc` for `q`, or `None` when it does not match. A query with no words left
/// (only stop words) matches nothing.
fn score(q: &Q, doc: &Doc) -> Option<f64> {
    match q {
        Q::All(qs) => qs.iter().try_fold(0.0, |acc, q| score(q, doc).map(|s| acc + s)),
        Q::Any(qs) => {
            let hits: Vec<f64> = qs.iter().filter_map(|q| score(q, doc)).collect();
            (!hits.is_empty()).then(|| hits.iter().sum())
        }
        Q::Words(ws) if ws.is_empty() => None,
        Q::Words(ws) => ws.iter().try_fold(0.0, |acc, w| {
            let n = count(&doc.searched, w);
            (n > 0).then_some(acc + n as f64)
        }),
        Q::Field(field, value) => {
            let ts = doc.fields.get(field.as_str())?;
            let mut counts = BTreeMap::new();
            for t in ts {
                *counts.entry(t.clone()).or_insert(0) += 1;
            }
            score(value, &Doc { searched: counts, fields: BTreeMap::new() }).map(|_| 0.0)
        }
    }
}

fn texts(v: &Val, out: &mut Vec<String>) {
    match v {
        Val::Str(s) => out.push(s.to_string()),
        Val::List(items) => items.iter().for_each(|i| texts(i, out)),
        _ => {}
    }
}

fn doc(props: &BTreeMap<Arc<str>, Val>, searched: Option<&[String]>) -> Doc {
    let mut fields = BTreeMap::new();
    let mut counts = BTreeMap::new();
    for (k, v) in props {
        let mut parts = Vec::new();
        texts(v, &mut parts);
        if parts.is_empty() {
            continue;
        }
        let ts: Vec<String> = parts.iter().flat_map(|p| terms(p)).collect();
        if searched.is_none_or(|s| s.iter().any(|f| **f == **k)) {
            for t in &ts {
                *counts.entry(t.clone()).or_insert(0) += 1;
            }
        }
        fields.insert(k.clone(), ts);
    }
    Doc { searched: counts, fields }
}

/// The properties full-text indexes were declared on for (`entity`, `label`), if any.
fn declared_fields(g: &Graph<'_, '_>, entity: &str, label: &str) -> Option<Vec<String>> {
    let all = super::ddl::declared(g.view.setting(crate::settings::INDEXES_KEY));
    let fields: Vec<String> =
        all.into_iter().filter(|d| d.entity == entity && d.label == label && d.kind == "FULLTEXT").map(|d| d.property).collect();
    (!fields.is_empty()).then_some(fields)
}

fn ranked<T: Copy + Ord>(mut hits: Vec<(T, f64)>) -> Vec<(T, f64)> {
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hits
}

/// `db.idx.fulltext.queryNodes(label, query)`: `[node, score]` rows, best first.
pub(crate) fn query_nodes(g: &Graph<'_, '_>, label: &str, query: &str) -> Result<Vec<Vec<Val>>, QueryError> {
    let q = parse(query)?;
    let fields = declared_fields(g, "NODE", label);
    let hits: Vec<_> = g
        .nodes_with_label(label)
        .into_iter()
        .filter_map(|e| score(&q, &doc(&g.node_props(e), fields.as_deref())).map(|s| (e, s)))
        .collect();
    Ok(ranked(hits).into_iter().map(|(e, s)| vec![Val::Node(e), Val::Float(s)]).collect())
}

/// Neo4j's `db.index.fulltext.queryNodes(name, query)` and `…queryRelationships`: FalkorDB's
/// procedures on the label or type of the full-text index declared under `name`.
pub(crate) fn query_named(g: &Graph<'_, '_>, name: &str, args: &[Val]) -> Result<Vec<Vec<Val>>, QueryError> {
    let bad = |m: String| QueryError::runtime(ErrorType::ProcedureError, Detail::InvalidArgumentValue, m);
    let (Some(Val::Str(index)), Some(Val::Str(query))) = (args.first(), args.get(1)) else {
        return Err(bad(format!("{name} takes an index name and a query string")));
    };
    let (entity, label, _) = super::ddl::named(&super::ddl::declared(g.view.setting(crate::settings::INDEXES_KEY)), index, "FULLTEXT")?;
    match (name.ends_with("queryNodes"), entity == "NODE") {
        (true, true) => query_nodes(g, &label, query),
        (false, false) => query_relationships(g, &label, query),
        (nodes, _) => Err(bad(format!("{name}: the index '{index}' is {} index", if nodes { "a relationship" } else { "a node" }))),
    }
}

/// `db.idx.fulltext.queryRelationships(type, query)`: `[relationship, score]` rows, best first.
pub(crate) fn query_relationships(g: &Graph<'_, '_>, rel_type: &str, query: &str) -> Result<Vec<Vec<Val>>, QueryError> {
    let q = parse(query)?;
    let fields = declared_fields(g, "RELATIONSHIP", rel_type);
    let hits: Vec<_> = g
        .rels_with_type(rel_type)
        .into_iter()
        .filter_map(|c| score(&q, &doc(&g.rel_props(c), fields.as_deref())).map(|s| (c, s)))
        .collect();
    Ok(ranked(hits).into_iter().map(|(c, s)| vec![Val::Rel(c), Val::Float(s)]).collect())
}

#[cfg(test)]
mod tests {
    use super::{doc, parse, score, Q};
    use crate::exec::value::Val;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    fn props(pairs: &[(&str, &str)]) -> BTreeMap<Arc<str>, Val> {
        pairs.iter().map(|(k, v)| (Arc::from(*k), Val::str(v))).collect()
    }

    #[test]
    fn graphitis_queries_parse_and_match() {
        let q = parse(r#"(@group_id:"grp") (Alice | works | Acme)"#).expect("parses");
        assert!(matches!(&q, Q::All(parts) if parts.len() == 2));
        let d = doc(&props(&[("group_id", "grp"), ("fact", "Alice works at Acme"), ("name", "WORKS_AT")]), Some(&["fact".to_owned()]));
        assert_eq!(score(&q, &d), Some(3.0));
        let other_group = doc(&props(&[("group_id", "g2"), ("fact", "Alice works at Acme")]), None);
        assert_eq!(score(&q, &other_group), None, "the field restriction holds");
        let unrelated = doc(&props(&[("group_id", "grp"), ("fact", "Bob sells cars")]), None);
        assert_eq!(score(&q, &unrelated), None);
        // Stems: "working" matches "works"; prefixes; tags.
        assert!(score(&parse("working").expect("parses"), &d).is_some());
        assert!(score(&parse("Acm*").expect("parses"), &d).is_some());
        assert!(score(&parse("@group_id:{grp | other}").expect("parses"), &d).is_some());
        // Only stop words: no match, not an error.
        assert_eq!(score(&parse("the of").expect("parses"), &d), None);
    }

    #[test]
    fn bad_queries_name_the_byte() {
        for (q, want) in [("(alice", "`)` is missing"), ("@:x", "expected `@field:`"), ("a)", "unexpected `)` at byte 1")] {
            let e = parse(q).expect_err(q);
            assert!(e.message.contains(want), "{q}: {}", e.message);
        }
    }
}
