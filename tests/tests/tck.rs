//! The openCypher TCK, run as a `harness = false` test: one line per feature file and the closing
//! line `TCK: N passed, N failed, N skipped`. A scenario is skipped only when `tests/tck-skips.txt`
//! lists it with a reason; any other scenario that does not pass fails the test.
//!
//! `TCK_RUN_SKIPPED=1` runs the listed scenarios too and names those that now pass (so the list
//! can shrink); `TCK_VERBOSE=1` prints each failure's reason; `TCK_FILTER=Match1` runs matching
//! files only.

use std::collections::BTreeMap;
use std::process::ExitCode;

use engram::{Database, QueryValue};
use engram_tests::tck::{harness, value, Census, Failure, Graph, Outcome};

fn failure(e: &engram_query::QueryError) -> Failure {
    Failure {
        kind: e.kind.as_str().to_owned(),
        phase: e.phase.as_str().to_owned(),
        detail: e.detail.as_str().to_owned(),
        message: match (e.line(), e.column()) {
            (Some(l), Some(c)) => format!("{} at {l}:{c}", e.message),
            _ => e.message.clone(),
        },
    }
}

/// A fresh in-memory engram database, driven through the query language.
struct Engine {
    db: Database,
}

fn to_tck(v: &QueryValue) -> value::Value {
    use value::Value as V;
    let props = |p: &BTreeMap<String, QueryValue>| p.iter().map(|(k, v)| (k.clone(), to_tck(v))).collect();
    let node = |n: &engram::exec::Node| value::Node { labels: n.labels.iter().cloned().collect(), props: props(&n.properties) };
    let rel = |r: &engram::exec::Relationship| value::Rel { ty: r.rel_type.clone(), props: props(&r.properties) };
    match v {
        QueryValue::Null => V::Null,
        QueryValue::Bool(b) => V::Bool(*b),
        QueryValue::Int(i) => V::Int(*i),
        QueryValue::Float(f) => V::Float(*f),
        QueryValue::String(s) => V::Str(s.clone()),
        // The TCK writes a temporal value as its ISO 8601 text in quotes (it has no temporal
        // literal), as openCypher's own adapters compare them.
        QueryValue::Temporal(t) => V::Str(t.to_string()),
        // No scenario here makes a point; its text is what Neo4j's adapters would compare.
        QueryValue::Point(p) => V::Str(p.to_string()),
        QueryValue::List(items) => V::List(items.iter().map(to_tck).collect()),
        QueryValue::Map(m) => V::Map(props(m)),
        QueryValue::Node(n) => V::Node(node(n)),
        QueryValue::Relationship(r) => V::Rel(rel(r)),
        QueryValue::Path(p) => {
            let Some(first) = p.nodes.first() else { return V::Null };
            let steps = p.relationships.iter().zip(p.nodes.windows(2)).map(|(r, w)| (rel(r), r.start == w[0].id, node(&w[1]))).collect();
            V::Path(node(first), steps)
        }
    }
}

fn from_tck(v: &value::Value) -> QueryValue {
    use value::Value as V;
    match v {
        // Graph values are never parameters in the TCK.
        V::Null | V::Node(_) | V::Rel(_) | V::Path(..) => QueryValue::Null,
        V::Bool(b) => QueryValue::Bool(*b),
        V::Int(i) => QueryValue::Int(*i),
        V::Float(f) => QueryValue::Float(*f),
        V::Str(s) => QueryValue::String(s.clone()),
        V::List(items) => QueryValue::List(items.iter().map(from_tck).collect()),
        V::Map(m) => QueryValue::Map(m.iter().map(|(k, v)| (k.clone(), from_tck(v))).collect()),
    }
}

impl Graph for Engine {
    fn run(&mut self, query: &str, params: &BTreeMap<String, value::Value>) -> Result<Outcome, Failure> {
        let params: engram::Params = params.iter().map(|(k, v)| (k.clone(), from_tck(v))).collect();
        let result = self.db.query(engram::DEFAULT_WORKSPACE, query, &params).map_err(|e| match e {
            engram::Error::Query(q) => failure(&q),
            other => Failure { kind: "Error".into(), phase: "runtime".into(), detail: "Harness".into(), message: other.to_string() },
        })?;
        Ok(Outcome { columns: result.columns.to_vec(), rows: result.rows.iter().map(|r| r.iter().map(to_tck).collect()).collect() })
    }

    fn census(&self) -> Census {
        let mut c = Census::default();
        let snap = self.db.snapshot();
        let Ok(ws) = snap.workspace(engram::DEFAULT_WORKSPACE) else { return c };
        let Ok(all) = ws.query("MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN n, r", &engram::Params::new()) else { return c };
        for row in all.rows {
            if let QueryValue::Node(n) = &row[0] {
                c.nodes.insert(n.id);
                c.labels.extend(n.labels.iter().cloned());
                for (k, v) in &n.properties {
                    c.props.insert((false, n.id, k.clone(), format!("{v:?}")));
                }
            }
            if let QueryValue::Relationship(r) = &row[1] {
                c.rels.insert(r.id);
                for (k, v) in &r.properties {
                    c.props.insert((true, r.id, k.clone(), format!("{v:?}")));
                }
            }
        }
        c
    }
}

fn main() -> ExitCode {
    harness::run_all("TCK", &|| -> Box<dyn Graph> { Box::new(Engine { db: Database::in_memory() }) })
}
