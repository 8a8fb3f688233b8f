//! FalkorDB's extensions to the function library, so that queries written for FalkorDB run
//! unchanged: `list.*`, `string.*`, `typeOf`, `hasLabels`, `toJSON`, `intern`, `pow`, the
//! `to…List` conversions and `indegree` / `outdegree`. Each follows FalkorDB's documented
//! behaviour for null and out-of-range arguments; a wrong argument type is a `TypeError`.

use std::collections::HashSet;
use std::sync::Arc;

use engram_query::{Detail, QueryError};
use serde_json::{json, Value as Json};

use super::super::eval::{arg_error, as_f64, type_error};
use super::super::graph::Graph;
use super::super::value::{Key, Val};
use super::{call, float_text, want_int, want_str};
use crate::ids::{ClaimId, EntityId};
use crate::index::graph::Direction;
use crate::temporal::Kind;

/// Calls `name` if it is one of these functions (lower case); `None` when it is not.
pub(super) fn call_extension(g: &Graph<'_, '_>, name: &str, args: &[Val]) -> Option<Result<Val, QueryError>> {
    let arg = |i: usize| args.get(i).unwrap_or(&Val::Null);
    match name {
        "typeof" => return Some(Ok(Val::str(type_of(arg(0))))),
        "string.matchregex" => return Some(match_regex(arg(0), arg(1))),
        _ => {}
    }
    // Null in, null out, for the rest.
    let nn = |f: &dyn Fn() -> Result<Val, QueryError>| if arg(0).is_null() { Ok(Val::Null) } else { f() };
    Some(match name {
        "haslabels" => nn(&|| has_labels(g, arg(0), arg(1))),
        "list.dedup" => nn(&|| want_list(name, arg(0)).map(|l| Val::list(dedup(l.iter().cloned())))),
        "list.insert" => nn(&|| insert(name, arg(0), std::slice::from_ref(arg(2)), arg(1), args.get(3), true)),
        "list.insertlistelements" => nn(&|| match arg(1) {
            Val::Null => want_list(name, arg(0)).map(|_| arg(0).clone()),
            Val::List(more) => insert(name, arg(0), more, arg(2), args.get(3), false),
            other => Err(type_error(format!("{name}() expects a list to insert, got {}", other.kind()))),
        }),
        "list.remove" => nn(&|| remove(name, arg(0), arg(1), args.get(2))),
        "list.sort" => nn(&|| sort(name, arg(0), args.get(1))),
        "tobooleanlist" | "tofloatlist" | "tointegerlist" | "tostringlist" => nn(&|| {
            let each = format!("{}ornull", name.trim_end_matches("list"));
            want_list(name, arg(0)).map(|l| Val::list(l.iter().map(|v| call(g, &each, vec![v.clone()]).unwrap_or(Val::Null)).collect()))
        }),
        "pow" => nn(&|| match (arg(0), arg(1)) {
            (_, Val::Null) => Ok(Val::Null),
            (a @ (Val::Int(_) | Val::Float(_)), b @ (Val::Int(_) | Val::Float(_))) => Ok(Val::Float(as_f64(a).powf(as_f64(b)))),
            (a, b) => Err(type_error(format!("pow() expects two numbers, got {} and {}", a.kind(), b.kind()))),
        }),
        "string.join" => nn(&|| join(name, arg(0), args.get(1))),
        "string.replaceregex" => nn(&|| replace_regex(name, arg(0), arg(1), arg(2))),
        "tojson" => nn(&|| to_json(g, arg(0)).map(|j| Val::str(&j.to_string()))),
        "intern" => nn(&|| want_str(name, arg(0)).map(Val::str)),
        "indegree" | "outdegree" => nn(&|| degree(g, name, arg(0), args.get(1..).unwrap_or(&[]))),
        _ => return None,
    })
}

/// `typeOf`'s names (FalkorDB's).
fn type_of(v: &Val) -> &'static str {
    match v {
        Val::Null => "Null",
        Val::Bool(_) => "Boolean",
        Val::Int(_) => "Integer",
        Val::Float(_) => "Float",
        Val::Str(_) => "String",
        Val::List(_) => "List",
        Val::Map(_) => "Map",
        Val::Node(_) => "Node",
        Val::Rel(_) => "Edge",
        Val::Path(_) => "Path",
        Val::Point(_) => "Point",
        Val::Temporal(t) => match t.kind() {
            Kind::Date => "Date",
            Kind::LocalTime | Kind::Time => "Time",
            Kind::LocalDateTime | Kind::DateTime => "Datetime",
            Kind::Duration => "Duration",
        },
    }
}

fn want_list<'v>(name: &str, v: &'v Val) -> Result<&'v Arc<Vec<Val>>, QueryError> {
    match v {
        Val::List(l) => Ok(l),
        other => Err(type_error(format!("{name}() expects a list, got {}", other.kind()))),
    }
}

fn want_bool(name: &str, v: Option<&Val>, default: bool) -> Result<bool, QueryError> {
    match v {
        None => Ok(default),
        Some(Val::Bool(b)) => Ok(*b),
        Some(other) => Err(type_error(format!("{name}() expects a boolean flag, got {}", other.kind()))),
    }
}

/// The values in order, each kept once (the first time it appears; `1` and `1.0` are one value,
/// as for DISTINCT).
fn dedup(items: impl Iterator<Item = Val>) -> Vec<Val> {
    let mut seen = HashSet::new();
    items.filter(|v| seen.insert(Key(vec![v.clone()]))).collect()
}

/// `idx` as a position in a list of `len`, counting from the end when negative; `None` past
/// either end. With `at_end`, `len` itself is a position (where an insert appends).
fn position(idx: i64, len: usize, at_end: bool) -> Option<usize> {
    let span = len as i64 + i64::from(at_end);
    let at = if idx < 0 { span + idx } else { idx };
    (0..span).contains(&at).then_some(at as usize)
}

/// `list.insert` (one value) and `list.insertListElements` (`several`): `values` put in at
/// `idx`; without `dups`, those already in the list (or earlier among `values`) are skipped.
fn insert(name: &str, list: &Val, values: &[Val], idx: &Val, dups: Option<&Val>, one: bool) -> Result<Val, QueryError> {
    let items = want_list(name, list)?;
    let idx = want_int(name, idx)?;
    let dups = want_bool(name, dups, true)?;
    if one && values.first().is_none_or(Val::is_null) {
        return Ok(list.clone());
    }
    let Some(at) = position(idx, items.len(), true) else { return Ok(list.clone()) };
    let new: Vec<Val> = if dups {
        values.to_vec()
    } else {
        let present: HashSet<Key> = items.iter().map(|v| Key(vec![v.clone()])).collect();
        dedup(values.iter().filter(|v| !present.contains(&Key(vec![(*v).clone()]))).cloned())
    };
    let mut out = Vec::with_capacity(items.len() + new.len());
    out.extend_from_slice(&items[..at]);
    out.extend(new);
    out.extend_from_slice(&items[at..]);
    Ok(Val::list(out))
}

/// `list.remove(list, idx[, count = 1])`.
fn remove(name: &str, list: &Val, idx: &Val, count: Option<&Val>) -> Result<Val, QueryError> {
    let items = want_list(name, list)?;
    let idx = want_int(name, idx)?;
    let count = count.map(|c| want_int(name, c)).transpose()?.unwrap_or(1);
    let Some(at) = position(idx, items.len(), false).filter(|_| count > 0) else { return Ok(list.clone()) };
    let end = at.saturating_add(usize::try_from(count).unwrap_or(usize::MAX)).min(items.len());
    Ok(Val::list(items[..at].iter().chain(&items[end..]).cloned().collect()))
}

/// `list.sort(list[, ascending = true])`, in the order ORDER BY uses.
fn sort(name: &str, list: &Val, ascending: Option<&Val>) -> Result<Val, QueryError> {
    let mut items = want_list(name, list)?.to_vec();
    let ascending = want_bool(name, ascending, true)?;
    items.sort_by(|a, b| if ascending { a.order(b) } else { b.order(a) });
    Ok(Val::list(items))
}

/// `hasLabels(node, labels)`: whether the node has every label listed (true for none).
fn has_labels(g: &Graph<'_, '_>, node: &Val, labels: &Val) -> Result<Val, QueryError> {
    let Val::Node(n) = node else { return Err(type_error(format!("hasLabels() expects a node, got {}", node.kind()))) };
    g.check_not_deleted(node)?;
    let mut all = true;
    for l in want_list("hasLabels", labels)?.iter() {
        all &= g.has_label(*n, want_str("hasLabels", l)?);
    }
    Ok(Val::Bool(all))
}

/// `indegree(node[, type…])` / `outdegree(…)`: the node's incoming or outgoing relationships,
/// of the given types (as several arguments or one list) or of any.
fn degree(g: &Graph<'_, '_>, name: &str, node: &Val, types: &[Val]) -> Result<Val, QueryError> {
    let Val::Node(n) = node else { return Err(type_error(format!("{name}() expects a node, got {}", node.kind()))) };
    g.check_not_deleted(node)?;
    let listed: Vec<&Val> = match types {
        [Val::List(l)] => l.iter().collect(),
        _ => types.iter().collect(),
    };
    let types = listed.into_iter().map(|t| want_str(name, t).map(Arc::from)).collect::<Result<Vec<Arc<str>>, _>>()?;
    let dir = if name == "indegree" { Direction::In } else { Direction::Out };
    Ok(Val::Int(g.expander(dir, &types, None).map_or(0, |x| x.edges(*n).count()) as i64))
}

/// `string.join(list[, delimiter = ''])`.
fn join(name: &str, list: &Val, delimiter: Option<&Val>) -> Result<Val, QueryError> {
    let items = want_list(name, list)?;
    let delimiter = match delimiter {
        None => "",
        Some(Val::Null) => return Ok(Val::Null),
        Some(d) => want_str(name, d)?,
    };
    let parts = items.iter().map(|v| want_str(name, v)).collect::<Result<Vec<&str>, _>>()?;
    Ok(Val::str(&parts.join(delimiter)))
}

fn regex(pattern: &str) -> Result<regex::Regex, QueryError> {
    regex::Regex::new(pattern).map_err(|e| arg_error(Detail::InvalidArgumentValue, format!("invalid regular expression: {e}")))
}

/// `string.matchRegEx(text, regex)`: each match as a list of the whole match and its groups
/// (`""` for a group that took no part); an empty list when either is null.
fn match_regex(text: &Val, pattern: &Val) -> Result<Val, QueryError> {
    if text.is_null() || pattern.is_null() {
        return Ok(Val::list(Vec::new()));
    }
    let (text, re) = (want_str("string.matchRegEx", text)?, regex(want_str("string.matchRegEx", pattern)?)?);
    Ok(Val::list(re.captures_iter(text).map(|c| Val::list(c.iter().map(|m| Val::str(m.map_or("", |m| m.as_str()))).collect())).collect()))
}

/// `string.replaceRegEx(text, regex, replacement)`: every match replaced by the replacement,
/// taken literally.
fn replace_regex(name: &str, text: &Val, pattern: &Val, replacement: &Val) -> Result<Val, QueryError> {
    if pattern.is_null() || replacement.is_null() {
        return Ok(Val::Null);
    }
    let (text, re, with) = (want_str(name, text)?, regex(want_str(name, pattern)?)?, want_str(name, replacement)?);
    Ok(Val::str(&re.replace_all(text, regex::NoExpand(with))))
}

/// `toJSON`'s value, in FalkorDB's shapes: a node `{"type": "node", "id", "labels",
/// "properties"}`, a relationship `{"type": "relationship", "id", "relationship",
/// "properties", "start", "end"}` (its ends as nodes without `type`), a path the list of its
/// nodes and relationships in order. NaN and the infinities are the strings `"NaN"`, `"Inf"`,
/// `"-Inf"`, as in engram's other JSON.
fn to_json(g: &Graph<'_, '_>, v: &Val) -> Result<Json, QueryError> {
    Ok(match v {
        Val::Null => Json::Null,
        Val::Bool(b) => json!(b),
        Val::Int(i) => json!(i),
        Val::Float(f) if f.is_finite() => json!(f),
        Val::Float(f) => json!(float_text(*f).replace("Infinity", "Inf")),
        Val::Str(s) => json!(s.as_ref()),
        Val::Temporal(t) => json!(t.to_string()),
        Val::Point(p) => crate::exec::point_json(p),
        Val::List(l) => Json::Array(l.iter().map(|x| to_json(g, x)).collect::<Result<_, _>>()?),
        Val::Map(m) => Json::Object(m.iter().map(|(k, x)| Ok((k.to_string(), to_json(g, x)?))).collect::<Result<_, QueryError>>()?),
        Val::Node(n) => {
            g.check_not_deleted(v)?;
            let mut node = node_json(g, *n)?;
            node.insert("type".to_owned(), json!("node"));
            Json::Object(node)
        }
        Val::Rel(r) => rel_json(g, *r)?,
        Val::Path(p) => {
            let mut out = vec![to_json(g, &Val::Node(p.start))?];
            for (r, n) in &p.steps {
                out.push(rel_json(g, *r)?);
                out.push(to_json(g, &Val::Node(*n))?);
            }
            Json::Array(out)
        }
    })
}

fn node_json(g: &Graph<'_, '_>, n: EntityId) -> Result<serde_json::Map<String, Json>, QueryError> {
    let mut out = serde_json::Map::new();
    out.insert("id".to_owned(), json!(n.0));
    out.insert("labels".to_owned(), json!(g.labels(n).iter().map(ToString::to_string).collect::<Vec<_>>()));
    out.insert("properties".to_owned(), to_json(g, &Val::map(g.node_props(n)))?);
    Ok(out)
}

fn rel_json(g: &Graph<'_, '_>, r: ClaimId) -> Result<Json, QueryError> {
    g.check_not_deleted(&Val::Rel(r))?;
    let mut out = serde_json::Map::new();
    out.insert("type".to_owned(), json!("relationship"));
    out.insert("id".to_owned(), json!(r.0));
    out.insert("relationship".to_owned(), json!(g.rel_type(r).map(|t| t.to_string())));
    out.insert("properties".to_owned(), to_json(g, &Val::map(g.rel_props(r)))?);
    if let Some((s, o)) = g.endpoints(r) {
        out.insert("start".to_owned(), Json::Object(node_json(g, s)?));
        out.insert("end".to_owned(), Json::Object(node_json(g, o)?));
    }
    Ok(Json::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each FalkorDB function the language declares is answered here (not by the core
    /// functions), and positions count from either end as FalkorDB documents.
    #[test]
    fn extensions_are_answered_here_and_positions_count_from_both_ends() {
        let names = engram_query::functions::FUNCTIONS.iter().map(|f| f.name).filter(|n| {
            n.starts_with("list.")
                || n.starts_with("string.")
                || n.ends_with("list")
                || ["typeof", "haslabels", "pow", "tojson", "intern", "indegree", "outdegree"].contains(n)
        });
        let db = crate::db::Database::in_memory();
        let snap = db.snapshot();
        let view = snap.workspace("default").expect("workspace");
        let g = Graph { view: &view, vis: crate::read::visibility::Visibility::current(), now: crate::exec::graph::clock_at(view.now) };
        for name in names {
            assert!(call_extension(&g, name, &[Val::Null]).is_some(), "{name} is not answered here");
        }
        assert_eq!(position(-1, 3, false), Some(2));
        assert_eq!(position(-3, 3, false), Some(0));
        assert_eq!(position(-4, 3, false), None);
        assert_eq!(position(3, 3, false), None);
        assert_eq!(position(3, 3, true), Some(3));
        assert_eq!(position(-1, 3, true), Some(3));
        assert_eq!(position(-4, 3, true), Some(0));
        assert_eq!(position(-5, 3, true), None);
    }
}
