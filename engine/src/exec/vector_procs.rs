//! FalkorDB's vector index procedures, `db.idx.vector.queryNodes(label, property, k, vector)` and
//! `…queryRelationships(type, property, k, vector)`: the exact k nearest by the distance the
//! index was declared with (`similarityFunction: 'cosine'` or `'euclidean'`; cosine without a
//! declaration), by a scan of the label's nodes (or the type's relationships) holding a vector
//! there. The score is the distance, smallest first, as FalkorDB gives it.

use std::sync::Arc;

use engram_query::{Detail, ErrorType, QueryError};

use super::graph::Graph;
use super::value::Val;

fn bad(message: impl Into<String>) -> QueryError {
    QueryError::runtime(ErrorType::ProcedureError, Detail::InvalidArgumentValue, message)
}

fn vector_of(v: &Val) -> Option<Vec<f64>> {
    let Val::List(items) = v else { return None };
    items
        .iter()
        .map(|x| match x {
            Val::Int(i) => Some(*i as f64),
            Val::Float(f) => Some(*f),
            _ => None,
        })
        .collect()
}

/// The declared distance of (`entity`, `label`, `property`): `true` for euclidean.
fn euclidean(g: &Graph<'_, '_>, entity: &str, label: &str, property: &str) -> bool {
    super::ddl::declared(g.view.setting(crate::settings::INDEXES_KEY)).iter().any(|d| {
        d.entity == entity
            && d.label == label
            && d.property == property
            && d.kind == "VECTOR"
            && d.options.get("similarityFunction").and_then(serde_json::Value::as_str).is_some_and(|f| f.eq_ignore_ascii_case("euclidean"))
    })
}

fn distance(a: &[f64], b: &[f64], euclidean: bool) -> f64 {
    if euclidean {
        super::functions::euclidean_distance(a, b)
    } else {
        super::functions::cosine_distance(a, b)
    }
}

/// The arguments: label, property, k (at most `k_max`), query vector.
fn arguments<'v>(name: &str, args: &'v [Val], k_max: usize) -> Result<(&'v str, &'v str, usize, Vec<f64>), QueryError> {
    let (Some(Val::Str(label)), Some(Val::Str(property)), Some(Val::Int(k)), Some(query)) =
        (args.first(), args.get(1), args.get(2), args.get(3))
    else {
        return Err(bad(format!("{name} takes a label, a property name, k and a vector")));
    };
    let k = usize::try_from(*k).map_err(|_| bad(format!("{name}: k must not be negative")))?.min(k_max);
    let query = vector_of(query).ok_or_else(|| bad(format!("{name}: the query vector must be a list of numbers")))?;
    Ok((label, property, k, query))
}

fn nearest<T: Copy + Ord>(
    name: &str,
    items: Vec<T>,
    props: impl Fn(T) -> Option<Val>,
    query: &[f64],
    k: usize,
    euclidean: bool,
) -> Result<Vec<(T, f64)>, QueryError> {
    let mut hits = Vec::new();
    for item in items {
        let Some(v) = props(item).as_ref().and_then(vector_of) else { continue };
        if v.len() != query.len() {
            return Err(bad(format!("{name}: vector dimension mismatch: stored {}, query {}", v.len(), query.len())));
        }
        hits.push((item, distance(&v, query, euclidean)));
    }
    hits.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    hits.truncate(k);
    Ok(hits)
}

/// `db.idx.vector.queryNodes`: `[node, score]` rows, nearest first.
pub(crate) fn query_nodes(g: &Graph<'_, '_>, name: &str, args: &[Val], k_max: usize) -> Result<Vec<Vec<Val>>, QueryError> {
    let (label, property, k, query) = arguments(name, args, k_max)?;
    let key: Arc<str> = Arc::from(property);
    let props = |e| g.node_props(e).remove(&key);
    let hits = nearest(name, g.nodes_with_label(label), props, &query, k, euclidean(g, "NODE", label, property))?;
    Ok(hits.into_iter().map(|(e, d)| vec![Val::Node(e), Val::Float(d)]).collect())
}

/// `db.idx.vector.queryRelationships`: `[relationship, score]` rows, nearest first.
pub(crate) fn query_relationships(g: &Graph<'_, '_>, name: &str, args: &[Val], k_max: usize) -> Result<Vec<Vec<Val>>, QueryError> {
    let (rel_type, property, k, query) = arguments(name, args, k_max)?;
    let key: Arc<str> = Arc::from(property);
    let props = |c| g.rel_props(c).remove(&key);
    let hits = nearest(name, g.rels_with_type(rel_type), props, &query, k, euclidean(g, "RELATIONSHIP", rel_type, property))?;
    Ok(hits.into_iter().map(|(c, d)| vec![Val::Rel(c), Val::Float(d)]).collect())
}
