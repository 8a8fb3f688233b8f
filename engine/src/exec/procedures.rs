//! The procedures `CALL` reaches: the catalog (`db.labels`, `db.relationshipTypes`,
//! `db.propertyKeys`) and engram's reads (`engram.recall`, `engram.context`, `engram.neighbors`,
//! `engram.ancestors`, `engram.descendants`, `engram.search.text`, `engram.search.vector`).
//! Each yields rows in the column order of `engram_query::functions::PROCEDURES`.

use std::collections::BTreeMap;
use std::sync::Arc;

use engram_query::{Detail, ErrorType, QueryError};

use crate::db::audit::{AccessRecord, AuditFilter};
use crate::error::ReadError;
use crate::ids::EntityId;
use crate::index::graph::Direction;
use crate::read::scope::ReadContext;
use crate::search::recall::RecallQuery;
use crate::time::Timestamp;

use super::eval::type_error;
use super::graph::Graph;
use super::value::Val;

fn read_error(e: &ReadError) -> QueryError {
    super::eval::read_error(e, ErrorType::ProcedureError)
}

fn proc_error(message: impl Into<String>) -> QueryError {
    QueryError::runtime(ErrorType::ProcedureError, Detail::InvalidArgumentValue, message)
}

fn node_arg(g: &Graph<'_, '_>, name: &str, v: &Val) -> Result<Option<EntityId>, QueryError> {
    match v {
        Val::Null => Ok(None),
        Val::Node(n) => Ok(Some(*n)),
        Val::Str(id) => Ok(g.node_by_ext_id(id)),
        other => Err(type_error(format!("{name} takes a node or an external id, got {}", other.kind()))),
    }
}

fn int_arg(name: &str, v: Option<&Val>, default: i64) -> Result<i64, QueryError> {
    match v {
        None | Some(Val::Null) => Ok(default),
        Some(Val::Int(i)) if *i >= 0 => Ok(*i),
        Some(other) => Err(type_error(format!("{name} takes a non-negative integer, got {}", other.kind()))),
    }
}

fn option<'m>(options: Option<&'m Val>, key: &str) -> Option<&'m Val> {
    match options {
        Some(Val::Map(m)) => m.get(key).filter(|v| !v.is_null()),
        _ => None,
    }
}

/// Embeds a text with the database's embedder: `None` when the database has none.
pub type Embed<'a> = dyn Fn(&str) -> Result<Option<Vec<f32>>, String> + Sync + 'a;

/// Reads a file of the import folder (`LOAD CSV`), checking who asks: its path and bytes, or why
/// not.
pub type FilesFn<'a> = dyn Fn(&str) -> Result<ImportFile, String> + Sync + 'a;

/// A file of the import folder: its path and its bytes.
pub type ImportFile = (Arc<str>, Arc<[u8]>);

/// What a query may reach beyond its snapshot, as its caller hands it on: the database's embedder
/// and the import folder's files (each `None` where the caller has none to give).
#[derive(Clone, Copy, Default)]
pub(crate) struct Host<'a> {
    pub embed: Option<&'a Embed<'a>>,
    pub files: Option<&'a FilesFn<'a>>,
}

/// Reads the access history (checking who asks), when the query may reach it.
pub type AuditFn<'a> = dyn Fn(&AuditFilter) -> Result<Vec<AccessRecord>, String> + Sync + 'a;

/// `engram.audit.history(options)`: the records as rows, oldest first.
fn audit_history(audit: Option<&AuditFn<'_>>, options: Option<&Val>) -> Result<Vec<Vec<Val>>, QueryError> {
    let Some(audit) = audit else {
        return Err(QueryError::runtime(
            ErrorType::ProcedureError,
            Detail::Unsupported,
            "engram.audit.history: run the query through Database::query or Scope::query",
        ));
    };
    let text = |key: &str| match option(options, key) {
        None => Ok(None),
        Some(Val::Str(s)) => Ok(Some(s.to_string())),
        Some(other) => Err(type_error(format!("engram.audit.history: {key} takes a string, got {}", other.kind()))),
    };
    let since = match option(options, "since") {
        None => None,
        Some(v) => Some(super::time_value(v)?),
    };
    let limit = int_arg("limit", option(options, "limit"), 0)?;
    let filter = AuditFilter { since, user: text("user")?, op: text("op")?, limit: usize::try_from(limit).unwrap_or(usize::MAX) };
    let records = audit(&filter).map_err(proc_error)?;
    let s = |t: &str| Val::Str(Arc::from(t));
    Ok(records
        .into_iter()
        .map(|r| {
            vec![
                s(&r.at.to_rfc3339()),
                s(&r.user),
                Val::list(r.roles.iter().map(|x| s(x)).collect()),
                s(&r.interface),
                r.workspace.as_deref().map_or(Val::Null, s),
                s(&r.op),
                s(&r.text),
                Val::Int(i64::try_from(r.rows).unwrap_or(i64::MAX)),
                Val::list(r.claims.iter().map(|c| Val::Int(i64::try_from(*c).unwrap_or(i64::MAX))).collect()),
                Val::Int(i64::try_from(r.duration_us).unwrap_or(i64::MAX)),
                s(&r.outcome),
            ]
        })
        .collect())
}

/// The query vector of `text`, or why there is none.
fn embed_text(embed: Option<&Embed<'_>>, name: &str, text: &str) -> Result<Vec<f32>, QueryError> {
    let unavailable = |why: String| QueryError::runtime(ErrorType::ProcedureError, Detail::Unsupported, format!("{name}: {why}"));
    let Some(embed) = embed else {
        return Err(unavailable("needs the database's embedder: run the query through Database::query or Scope::query".into()));
    };
    match embed(text) {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Err(unavailable("this database has no embedder (engram config DIR embedder …)".into())),
        Err(e) => {
            Err(QueryError::runtime(ErrorType::ProcedureError, Detail::InvalidArgumentValue, format!("{name}: embedding failed: {e}")))
        }
    }
}

/// Runs procedure `name` (as spelled in the table) with evaluated arguments.
pub(crate) fn call(
    g: &Graph<'_, '_>,
    cx: &ReadContext,
    (embed, audit): (Option<&Embed<'_>>, Option<&AuditFn<'_>>),
    name: &str,
    args: &[Val],
) -> Result<Vec<Vec<Val>>, QueryError> {
    let view = g.view;
    match name {
        "engram.audit.history" => audit_history(audit, args.first()),
        "db.labels" | "db.relationshipTypes" | "db.propertyKeys" => {
            // Row i is id i: the workspace's names in first-use order, append-only.
            let [labels, types, keys] = view.vocabulary();
            let names = match name {
                "db.labels" => labels,
                "db.relationshipTypes" => types,
                _ => keys,
            };
            Ok(names.into_iter().map(|n| vec![Val::Str(n)]).collect())
        }
        "db.idx.fulltext.queryNodes" | "db.idx.fulltext.queryRelationships" => {
            let (Val::Str(label), Some(Val::Str(query))) = (&args[0], args.get(1)) else {
                return Err(type_error(format!("{name} takes a label and a query string")));
            };
            if name.ends_with("queryNodes") {
                super::fulltext::query_nodes(g, label, query)
            } else {
                super::fulltext::query_relationships(g, label, query)
            }
        }
        "db.index.fulltext.queryNodes" | "db.index.fulltext.queryRelationships" => super::fulltext::query_named(g, name, args),
        "db.index.vector.queryNodes"
        | "db.index.vector.queryRelationships"
        | "db.idx.vector.queryNodes"
        | "db.idx.vector.queryRelationships" => super::vector_procs::call(g, name, args, cx.limits.vector_k_max.min(cx.limits.rows_max)),
        "db.indexes" | "db.showIndexes" | "db.constraints" | "db.showConstraints" => Ok(super::ddl::listing(view, name, args.first())),
        _ if name.starts_with("algo.") => super::algo_procs::call(g, cx, name, args),
        _ if super::schema_procs::NAMES.contains(&name) => Ok(super::schema_procs::call(g, name, args)),
        "dbms.procedures" => Ok(engram_query::functions::PROCEDURES
            .iter()
            .map(|p| vec![Val::str(p.name), Val::str(if p.writes { "write" } else { "read" })])
            .collect()),
        "db.meta.stats" => Ok(vec![meta_stats(g)]),
        "engram.forget" => {
            Err(QueryError::runtime(ErrorType::SemanticError, Detail::Unsupported, "engram.forget writes: it runs in a write query"))
        }
        "engram.neighbors" => {
            let Some(node) = node_arg(g, name, &args[0])? else { return Ok(Vec::new()) };
            let options = args.get(1);
            let direction = match option(options, "direction") {
                None => Direction::Both,
                Some(Val::Str(d)) => match d.to_ascii_lowercase().as_str() {
                    "out" => Direction::Out,
                    "in" => Direction::In,
                    "both" => Direction::Both,
                    _ => return Err(proc_error(format!("{name}: direction is 'out', 'in' or 'both', not '{d}'"))),
                },
                Some(other) => return Err(type_error(format!("{name}: direction must be a string, got {}", other.kind()))),
            };
            let types: Vec<Arc<str>> = match option(options, "types") {
                None => Vec::new(),
                Some(Val::List(items)) => items.iter().filter_map(|v| if let Val::Str(s) = v { Some(s.clone()) } else { None }).collect(),
                Some(other) => return Err(type_error(format!("{name}: types must be a list of strings, got {}", other.kind()))),
            };
            let Some(expander) = g.expander(direction, &types, None) else { return Ok(Vec::new()) };
            Ok(expander
                .edges(node)
                .map(|e| {
                    let dir = if e.direction == Direction::Out { "out" } else { "in" };
                    vec![Val::Rel(e.claim), Val::Node(e.neighbor), Val::str(dir)]
                })
                .collect())
        }
        "engram.ancestors" | "engram.descendants" => {
            let Some(node) = node_arg(g, name, &args[0])? else { return Ok(Vec::new()) };
            let Val::Str(predicate) = &args[1] else {
                return Err(type_error(format!("{name} takes a relationship type name as its second argument")));
            };
            let found = if name == "engram.ancestors" {
                view.ancestors(node, predicate, &g.vis)
            } else {
                view.descendants(node, predicate, &g.vis)
            }
            .map_err(|e| read_error(&e))?;
            Ok(found.into_iter().map(|(e, depth)| vec![Val::Node(e), Val::Int(i64::from(depth))]).collect())
        }
        "engram.search.text" => {
            let Val::Str(query) = &args[0] else { return Err(type_error(format!("{name} takes a query string"))) };
            let k = int_arg(name, args.get(1), 10)?;
            let k = usize::try_from(k).unwrap_or(usize::MAX).min(cx.limits.rows_max);
            let hits = view.search_claim_text(query, k, &g.vis).map_err(|e| read_error(&e))?;
            Ok(hits.into_iter().map(|(c, s)| vec![Val::Rel(c), Val::Float(f64::from(s))]).collect())
        }
        "engram.search.vector" => {
            let Val::Str(query) = &args[0] else { return Err(type_error(format!("{name} takes a query string"))) };
            let k = int_arg(name, args.get(1), 10)?;
            let k = usize::try_from(k).unwrap_or(usize::MAX).min(cx.limits.vector_k_max).min(cx.limits.rows_max);
            let vector = embed_text(embed, name, query)?;
            let opts = crate::search::semantic::VectorOptions { k, visibility: g.vis.clone(), ..Default::default() };
            let hits = view.search_claim_vectors(&vector, &opts).map_err(|e| read_error(&e))?;
            Ok(hits.into_iter().map(|(c, s)| vec![Val::Rel(c), Val::Float(f64::from(s))]).collect())
        }
        "engram.recall" => recall(g, embed, name, args),
        "engram.context" => context(g, embed, name, args),
        _ => Err(QueryError::runtime(ErrorType::ProcedureError, Detail::ProcedureNotFound, format!("there is no procedure `{name}`"))),
    }
}

/// `db.meta.stats`'s one row, from what the caller sees: each label's nodes and each type's
/// relationships (names the caller cannot see are not listed), the totals, and how many labels,
/// types and property keys it can name.
fn meta_stats(g: &Graph<'_, '_>) -> Vec<Val> {
    let [labels, types, keys] = g.view.vocabulary();
    let named = |names: &[Arc<str>]| names.iter().filter(|n| !n.is_empty()).count() as i64;
    let mut per_label: BTreeMap<Arc<str>, Val> = labels.iter().filter(|l| !l.is_empty()).map(|l| (l.clone(), Val::Int(0))).collect();
    let nodes = g.nodes();
    for &e in &nodes {
        for l in g.label_names(e) {
            if let Some(Val::Int(n)) = per_label.get_mut(l) {
                *n += 1;
            }
        }
    }
    let per_type: BTreeMap<Arc<str>, Val> =
        types.iter().filter(|t| !t.is_empty()).map(|t| (t.clone(), Val::Int(g.rels_with_type(t).len() as i64))).collect();
    let rels: i64 = per_type.values().map(|v| if let Val::Int(n) = v { *n } else { 0 }).sum();
    vec![
        Val::map(per_label),
        Val::map(per_type),
        Val::Int(rels),
        Val::Int(nodes.len() as i64),
        Val::Int(named(&labels)),
        Val::Int(named(&types)),
        Val::Int(named(&keys)),
    ]
}

fn recall(g: &Graph<'_, '_>, embed: Option<&Embed<'_>>, name: &str, args: &[Val]) -> Result<Vec<Vec<Val>>, QueryError> {
    let Val::Str(text) = &args[0] else { return Err(type_error(format!("{name} takes the question as a string"))) };
    let options = args.get(1);
    let mut q = RecallQuery::new(text);
    q.visibility = g.vis.clone();
    if let Some(b) = option(options, "budget") {
        q.budget = usize::try_from(int_arg(name, Some(b), 0)?).unwrap_or(usize::MAX);
    }
    if let Some(h) = option(options, "hops") {
        q.hops = u32::try_from(int_arg(name, Some(h), 0)?).unwrap_or(u32::MAX);
    }
    if let Some(at) = as_of_option(name, options)? {
        q.visibility.as_of = Some(at);
    }
    if let Some(Val::List(seeds)) = option(options, "entities") {
        for s in seeds.iter() {
            if let Some(e) = node_arg(g, name, s)? {
                q.seeds.push(e);
            }
        }
    }
    // With the database's embedder, the semantic path runs too; without it, the other three.
    if let Some(embed) = embed {
        let asked = g.view.question_to_embed(&q).map_err(|e| read_error(&e))?;
        let vector = |t: &str| embed(t).ok().flatten();
        q.vector = if asked == q.text { vector(text) } else { crate::search::semantic::question_vector(vector(text), vector(&asked)) };
    }
    let result = g.view.recall(&q).map_err(|e| read_error(&e))?;
    Ok(recall_rows(&result))
}

/// `engram.context(node, {text, depth, budget, max_facts, predicates, types, as_of})`: the graph-
/// first forms of recall. Without `text`, the entity's context (the claims within `depth` hops,
/// nearest first, then by confidence, decay and recent activity); with it, neighbourhood RAG (those
/// claims ranked by similarity to `text`: the cosine with its embedding when the database has an
/// embedder, else BM25). The rows of `engram.recall`.
fn context(g: &Graph<'_, '_>, embed: Option<&Embed<'_>>, name: &str, args: &[Val]) -> Result<Vec<Vec<Val>>, QueryError> {
    let Some(node) = node_arg(g, name, &args[0])? else { return Ok(Vec::new()) };
    let options = args.get(1);
    let mut q = crate::search::recall::ContextQuery { visibility: g.vis.clone(), ..Default::default() };
    if let Some(d) = option(options, "depth") {
        q.depth = u32::try_from(int_arg(name, Some(d), 0)?).unwrap_or(u32::MAX);
    }
    if let Some(b) = option(options, "budget") {
        q.budget = usize::try_from(int_arg(name, Some(b), 0)?).unwrap_or(usize::MAX);
    }
    if let Some(m) = option(options, "max_facts") {
        q.max_facts = usize::try_from(int_arg(name, Some(m), 0)?).unwrap_or(usize::MAX);
    }
    q.predicates = strings_option(name, options, "predicates")?;
    q.types = strings_option(name, options, "types")?;
    if let Some(at) = as_of_option(name, options)? {
        q.visibility.as_of = Some(at);
    }
    let result = match option(options, "text") {
        None => g.view.entity_context(node, &q),
        Some(Val::Str(text)) => {
            let vector = embed.and_then(|e| e(text).ok().flatten());
            g.view.neighborhood(node, text, vector.as_deref(), &q)
        }
        Some(other) => return Err(type_error(format!("{name}: text must be a string, got {}", other.kind()))),
    }
    .map_err(|e| read_error(&e))?;
    Ok(recall_rows(&result))
}

/// Option `key`, a list of strings (absent: none).
fn strings_option(name: &str, options: Option<&Val>, key: &str) -> Result<Vec<String>, QueryError> {
    match option(options, key) {
        None => Ok(Vec::new()),
        Some(Val::List(items)) => items
            .iter()
            .map(|v| match v {
                Val::Str(s) => Ok(s.to_string()),
                other => Err(type_error(format!("{name}: {key} must be a list of strings, got {} in it", other.kind()))),
            })
            .collect(),
        Some(other) => Err(type_error(format!("{name}: {key} must be a list of strings, got {}", other.kind()))),
    }
}

/// Option `as_of`: an RFC 3339 string or epoch seconds.
fn as_of_option(name: &str, options: Option<&Val>) -> Result<Option<Timestamp>, QueryError> {
    match option(options, "as_of") {
        None => Ok(None),
        Some(Val::Str(s)) => Timestamp::parse(s).map(Some).map_err(|e| proc_error(format!("{name}: as_of: {e}"))),
        Some(Val::Int(secs)) => Ok(Some(Timestamp::from_epoch_seconds(*secs))),
        Some(other) => Err(type_error(format!("{name}: as_of is a time, got {}", other.kind()))),
    }
}

/// The rows of `engram.recall` and `engram.context`: one per packed fact, in rank order.
fn recall_rows(result: &crate::search::recall::Recall) -> Vec<Vec<Val>> {
    let context = Val::Str(Arc::from(result.packed.context.as_str()));
    let mut rows = Vec::with_capacity(result.packed.facts.len());
    for (rank, f) in result.packed.facts.iter().enumerate() {
        let claim = crate::ids::ClaimId(f.id);
        rows.push(vec![
            Val::Int(rank as i64 + 1),
            Val::Rel(claim),
            Val::Node(EntityId(f.subject.id)),
            Val::Node(EntityId(f.object.id)),
            f.text.as_deref().map_or(Val::Null, Val::str),
            Val::Float(f.score),
            Val::list(f.evidence.iter().map(|e| Val::str(e)).collect()),
            context.clone(),
        ]);
    }
    rows
}
