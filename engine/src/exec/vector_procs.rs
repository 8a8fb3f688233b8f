//! FalkorDB's vector index procedures, `db.idx.vector.queryNodes(label, property, k, vector)` and
//! `…queryRelationships(type, property, k, vector)`: the exact k nearest by the distance the
//! index was declared with (`similarityFunction: 'cosine'` or `'euclidean'`; cosine without a
//! declaration), by a scan of the label's nodes (or the type's relationships) holding a vector
//! there. The score is the distance, smallest first, as FalkorDB gives it.

use engram_query::{Detail, ErrorType, QueryError};

use super::graph::Graph;
use super::value::Val;
use crate::value::Value;

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

/// The numbers of a stored list into `out` (cleared first); false when an item is no number.
fn stored_vector(items: &super::functions::Items<'_>, out: &mut Vec<f64>) -> bool {
    out.clear();
    let items = match items {
        super::functions::Items::Floats(f) => {
            out.extend_from_slice(f);
            return true;
        }
        super::functions::Items::Stored(items) => items,
        super::functions::Items::Vals(_) => return false,
    };
    for x in *items {
        match x {
            Value::Int(i) => out.push(*i as f64),
            Value::Float(f) => out.push(*f),
            _ => return false,
        }
    }
    true
}

/// The `k` items nearest `query` among those whose property (`stored`, a list borrowed from the
/// snapshot: a scan copies no vector out of it) is a vector; an item without one is skipped.
fn nearest<'a, T: Copy + Ord>(
    name: &str,
    items: Vec<T>,
    stored: impl Fn(T) -> Option<super::functions::Items<'a>>,
    query: &[f64],
    k: usize,
    euclidean: bool,
) -> Result<Vec<(T, f64)>, QueryError> {
    let mut hits = Vec::new();
    let mut v = Vec::with_capacity(query.len());
    for item in items {
        let Some(list) = stored(item) else { continue };
        if !stored_vector(&list, &mut v) {
            continue;
        }
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
fn query_nodes(g: &Graph<'_, '_>, name: &str, args: &[Val], k_max: usize) -> Result<Vec<Vec<Val>>, QueryError> {
    let (label, property, k, query) = arguments(name, args, k_max)?;
    let stored = |e| g.stored_list(&Val::Node(e), property);
    let hits = nearest(name, g.nodes_with_label(label), stored, &query, k, euclidean(g, "NODE", label, property))?;
    Ok(hits.into_iter().map(|(e, d)| vec![Val::Node(e), Val::Float(d)]).collect())
}

/// The vector procedure `name` (FalkorDB's `db.idx.vector.*` or Neo4j's `db.index.vector.*`),
/// at most `k_max` rows.
pub(crate) fn call(g: &Graph<'_, '_>, name: &str, args: &[Val], k_max: usize) -> Result<Vec<Vec<Val>>, QueryError> {
    match name {
        "db.idx.vector.queryNodes" => query_nodes(g, name, args, k_max),
        "db.idx.vector.queryRelationships" => query_relationships(g, name, args, k_max),
        _ => query_named(g, name, args, k_max),
    }
}

/// Neo4j's `db.index.vector.queryNodes(name, k, vector)` and `…queryRelationships`, on the
/// index declared under `name` (`CREATE VECTOR INDEX name FOR … OPTIONS {indexConfig: …}`): the
/// same k nearest as FalkorDB's procedures, scored as Neo4j scores them, a similarity in
/// `[0, 1]` with 1 the closest: `(2 - d) / 2` for the cosine distance `d`, `1 / (1 + d²)` for the
/// euclidean.
fn query_named(g: &Graph<'_, '_>, name: &str, args: &[Val], k_max: usize) -> Result<Vec<Vec<Val>>, QueryError> {
    let Some(Val::Str(index)) = args.first() else { return Err(bad(format!("{name} takes an index name, k and a vector"))) };
    let all = super::ddl::declared(g.view.setting(crate::settings::INDEXES_KEY));
    let (entity, label, properties) = super::ddl::named(&all, index, "VECTOR")?;
    let nodes = name.ends_with("queryNodes");
    if nodes != (entity == "NODE") {
        let what = if nodes { "a relationship" } else { "a node" };
        return Err(bad(format!("{name}: the index '{index}' is {what} index")));
    }
    let property = properties.first().cloned().unwrap_or_default();
    let falkordb = [
        Val::str(label.as_str()),
        Val::str(property.as_str()),
        args.get(1).cloned().unwrap_or(Val::Null),
        args.get(2).cloned().unwrap_or(Val::Null),
    ];
    let mut rows = if nodes { query_nodes(g, name, &falkordb, k_max)? } else { query_relationships(g, name, &falkordb, k_max)? };
    let euclidean = euclidean(g, &entity, &label, &property);
    for row in &mut rows {
        if let Some(Val::Float(d)) = row.get_mut(1) {
            *d = if euclidean { 1.0 / (1.0 + *d * *d) } else { (2.0 - *d) / 2.0 };
        }
    }
    Ok(rows)
}

/// `db.idx.vector.queryRelationships`: `[relationship, score]` rows, nearest first.
fn query_relationships(g: &Graph<'_, '_>, name: &str, args: &[Val], k_max: usize) -> Result<Vec<Vec<Val>>, QueryError> {
    let (rel_type, property, k, query) = arguments(name, args, k_max)?;
    let stored = |c| g.stored_list(&Val::Rel(c), property);
    let hits = nearest(name, g.rels_with_type(rel_type), stored, &query, k, euclidean(g, "RELATIONSHIP", rel_type, property))?;
    Ok(hits.into_iter().map(|(c, d)| vec![Val::Rel(c), Val::Float(d)]).collect())
}
