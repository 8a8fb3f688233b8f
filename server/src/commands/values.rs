//! Query results as replies: engram's shape (the `--json` shape as a map: `columns`, `rows`,
//! `stats`) and FalkorDB's two (compact: typed cells with label, type and key ids; verbose: plain
//! names and values).

use std::collections::HashMap;

use engram::exec::{Node, Path, Relationship};
use engram::spatial::{Crs, Point, PointMapValue};
use engram::temporal::Kind;
use engram::{QueryResult, QueryValue};

use crate::resp::encode::double_text;
use crate::resp::Reply;

/// A value in engram's shape: nodes `{id, labels, properties}`, relationships `{id, type, start,
/// end, properties}`, paths `{nodes, relationships}`.
pub(super) fn value(v: &QueryValue) -> Reply {
    let props = |p: &std::collections::BTreeMap<String, QueryValue>| Reply::Map(p.iter().map(|(k, v)| (k.clone(), value(v))).collect());
    let node = |n: &Node| {
        Reply::Map(vec![
            ("id".to_owned(), Reply::Int(id(n.id))),
            ("labels".to_owned(), Reply::Array(n.labels.iter().map(|l| Reply::text(l.clone())).collect())),
            ("properties".to_owned(), props(&n.properties)),
        ])
    };
    let rel = |r: &Relationship| {
        Reply::Map(vec![
            ("id".to_owned(), Reply::Int(id(r.id))),
            ("type".to_owned(), Reply::text(r.rel_type.clone())),
            ("start".to_owned(), Reply::Int(id(r.start))),
            ("end".to_owned(), Reply::Int(id(r.end))),
            ("properties".to_owned(), props(&r.properties)),
        ])
    };
    match v {
        QueryValue::Null => Reply::Nil,
        QueryValue::Bool(b) => Reply::Bool(*b),
        QueryValue::Int(i) => Reply::Int(*i),
        QueryValue::Float(f) => Reply::Double(*f),
        QueryValue::String(s) => Reply::text(s.clone()),
        QueryValue::List(items) => Reply::Array(items.iter().map(value).collect()),
        QueryValue::Map(m) => props(m),
        QueryValue::Node(n) => node(n),
        QueryValue::Relationship(r) => rel(r),
        QueryValue::Path(p) => Reply::Map(vec![
            ("nodes".to_owned(), Reply::Array(p.nodes.iter().map(node).collect())),
            ("relationships".to_owned(), Reply::Array(p.relationships.iter().map(rel).collect())),
        ]),
        QueryValue::Temporal(t) => Reply::text(t.to_string()),
        QueryValue::Point(p) => point(p),
    }
}

/// A point as the map `point()` takes: `crs`, then `x`, `y`[, `z`] or `longitude`, `latitude`[,
/// `height`] (engram's replies and the entity commands).
pub(super) fn point(p: &Point) -> Reply {
    Reply::Map(
        p.map_fields()
            .into_iter()
            .map(|(k, v)| {
                let v = match v {
                    PointMapValue::Str(s) => Reply::text(s),
                    PointMapValue::Float(f) => Reply::Double(f),
                };
                (k.to_owned(), v)
            })
            .collect(),
    )
}

fn id(i: u64) -> i64 {
    i64::try_from(i).unwrap_or(i64::MAX)
}

/// A result in engram's shape.
pub(super) fn engram_result(r: &QueryResult) -> Reply {
    let mut out = vec![
        ("columns".to_owned(), Reply::Array(r.columns.iter().map(|c| Reply::text(c.clone())).collect())),
        ("rows".to_owned(), Reply::Array(r.rows.iter().map(|row| Reply::Array(row.iter().map(value).collect())).collect())),
        (
            "stats".to_owned(),
            Reply::Map(
                r.stats.counters().iter().map(|(k, v)| ((*k).to_owned(), Reply::Int(i64::try_from(*v).unwrap_or(i64::MAX)))).collect(),
            ),
        ),
    ];
    if let Some(plan) = &r.plan {
        out.push(("plan".to_owned(), Reply::Array(plan.lines().map(|l| Reply::text(l.to_owned())).collect())));
    }
    Reply::Map(out)
}

/// FalkorDB's statistics strings; counters at zero are left out, as FalkorDB does.
pub(super) fn falkor_stats(r: &QueryResult, millis: f64) -> Reply {
    let s = &r.stats;
    let mut out = Vec::new();
    for (name, n) in [
        ("Labels added", s.labels_added),
        ("Labels removed", s.labels_removed),
        ("Nodes created", s.nodes_created),
        ("Nodes deleted", s.nodes_deleted),
        ("Properties set", s.properties_set),
        ("Properties removed", s.properties_removed),
        ("Relationships created", s.relationships_created),
        ("Relationships deleted", s.relationships_deleted),
        ("Indices created", s.indexes_added),
        ("Indices deleted", s.indexes_removed),
    ] {
        if n > 0 {
            out.push(Reply::text(format!("{name}: {n}")));
        }
    }
    out.push(Reply::text(format!("Cached execution: {}", u8::from(r.cached))));
    out.push(Reply::text(format!("Query internal execution time: {millis:.6} milliseconds")));
    Reply::Array(out)
}

/// The workspace's vocabulary as FalkorDB's clients cache it: name → dense id.
pub(super) struct Vocab {
    labels: HashMap<String, i64>,
    types: HashMap<String, i64>,
    keys: HashMap<String, i64>,
}

impl Vocab {
    /// From `db.labels()`, `db.relationshipTypes()`, `db.propertyKeys()` (row i = id i).
    pub(super) fn new(lists: &[Vec<std::sync::Arc<str>>; 3]) -> Vocab {
        let index =
            |l: &[std::sync::Arc<str>]| l.iter().enumerate().map(|(i, n)| (n.to_string(), i64::try_from(i).unwrap_or(i64::MAX))).collect();
        Vocab { labels: index(&lists[0]), types: index(&lists[1]), keys: index(&lists[2]) }
    }
}

/// Whether a result holds a node, relationship or path anywhere (only then is the vocabulary
/// needed).
pub(super) fn has_elements(r: &QueryResult) -> bool {
    fn any(v: &QueryValue) -> bool {
        match v {
            QueryValue::Node(_) | QueryValue::Relationship(_) | QueryValue::Path(_) => true,
            QueryValue::List(items) => items.iter().any(any),
            QueryValue::Map(m) => m.values().any(any),
            _ => false,
        }
    }
    r.rows.iter().flatten().any(any)
}

/// A compact cell `[code, value]`.
pub(super) fn compact(v: &QueryValue, vocab: Option<&Vocab>) -> Reply {
    let cell = |code: i64, value: Reply| Reply::Array(vec![Reply::Int(code), value]);
    let lookup = |m: Option<&HashMap<String, i64>>, name: &str| m.and_then(|m| m.get(name)).copied().unwrap_or(-1);
    let props = |p: &std::collections::BTreeMap<String, QueryValue>| {
        Reply::Array(
            p.iter()
                .map(|(k, v)| {
                    let Reply::Array(mut parts) = compact(v, vocab) else { return Reply::Nil };
                    parts.insert(0, Reply::Int(lookup(vocab.map(|v| &v.keys), k)));
                    Reply::Array(parts)
                })
                .collect(),
        )
    };
    let node = |n: &Node| {
        cell(
            8,
            Reply::Array(vec![
                Reply::Int(id(n.id)),
                Reply::Array(n.labels.iter().map(|l| Reply::Int(lookup(vocab.map(|v| &v.labels), l))).collect()),
                props(&n.properties),
            ]),
        )
    };
    let rel = |r: &Relationship| {
        cell(
            7,
            Reply::Array(vec![
                Reply::Int(id(r.id)),
                Reply::Int(lookup(vocab.map(|v| &v.types), &r.rel_type)),
                Reply::Int(id(r.start)),
                Reply::Int(id(r.end)),
                props(&r.properties),
            ]),
        )
    };
    match v {
        QueryValue::Null => cell(1, Reply::Nil),
        QueryValue::String(s) => cell(2, Reply::text(s.clone())),
        QueryValue::Int(i) => cell(3, Reply::Int(*i)),
        QueryValue::Bool(b) => cell(4, Reply::text(if *b { "true" } else { "false" })),
        QueryValue::Float(f) => cell(5, Reply::text(double_text(*f))),
        // A list of floats only (what `vecf32` makes) travels as FalkorDB's vector cell: one array
        // of numbers, read by the clients as the same list of floats, at a fraction of the frames.
        QueryValue::List(items) if !items.is_empty() && items.iter().all(|i| matches!(i, QueryValue::Float(_))) => cell(
            12,
            Reply::Array(items.iter().map(|i| if let QueryValue::Float(f) = i { Reply::Double(*f) } else { Reply::Nil }).collect()),
        ),
        QueryValue::List(items) => cell(6, Reply::Array(items.iter().map(|i| compact(i, vocab)).collect())),
        QueryValue::Relationship(r) => rel(r),
        QueryValue::Node(n) => node(n),
        QueryValue::Path(Path { nodes, relationships }) => cell(
            9,
            Reply::Array(vec![
                cell(6, Reply::Array(nodes.iter().map(node).collect())),
                cell(6, Reply::Array(relationships.iter().map(rel).collect())),
            ]),
        ),
        QueryValue::Map(m) => {
            let mut flat = Vec::with_capacity(m.len() * 2);
            for (k, v) in m {
                flat.push(Reply::text(k.clone()));
                flat.push(compact(v, vocab));
            }
            cell(10, Reply::Array(flat))
        }
        // FalkorDB's temporal cells carry whole seconds since the epoch (its clients make a
        // `datetime`, `date`, `time` or `relativedelta` of them); a local value reads as UTC.
        QueryValue::Temporal(t) => {
            let code = match t.kind() {
                Kind::DateTime | Kind::LocalDateTime => 13,
                Kind::Date => 14,
                Kind::Time | Kind::LocalTime => 15,
                Kind::Duration => 16,
            };
            cell(code, Reply::Int(t.falkordb_seconds()))
        }
        // FalkorDB's points are geographic and 2D: `[latitude, longitude]`, as the clients read
        // them. engram's other points travel as the map `point()` takes, so nothing is lost.
        QueryValue::Point(p) if p.crs() == Crs::Wgs84 => {
            cell(11, Reply::Array(vec![Reply::text(double_text(p.y())), Reply::text(double_text(p.x()))]))
        }
        QueryValue::Point(p) => {
            let map = p.map_fields().into_iter().map(|(k, v)| {
                let v = match v {
                    PointMapValue::Str(s) => QueryValue::String(s.to_owned()),
                    PointMapValue::Float(f) => QueryValue::Float(f),
                };
                (k.to_owned(), v)
            });
            compact(&QueryValue::Map(map.collect()), vocab)
        }
    }
}

/// A verbose value (no `--compact`): plain names and values, as redis-cli users read them.
pub(super) fn verbose(v: &QueryValue) -> Reply {
    let props = |p: &std::collections::BTreeMap<String, QueryValue>| {
        Reply::Array(p.iter().map(|(k, v)| Reply::Array(vec![Reply::text(k.clone()), verbose(v)])).collect())
    };
    let node = |n: &Node| {
        Reply::Array(vec![
            Reply::Array(vec![Reply::text("id"), Reply::Int(id(n.id))]),
            Reply::Array(vec![Reply::text("labels"), Reply::Array(n.labels.iter().map(|l| Reply::text(l.clone())).collect())]),
            Reply::Array(vec![Reply::text("properties"), props(&n.properties)]),
        ])
    };
    let rel = |r: &Relationship| {
        Reply::Array(vec![
            Reply::Array(vec![Reply::text("id"), Reply::Int(id(r.id))]),
            Reply::Array(vec![Reply::text("type"), Reply::text(r.rel_type.clone())]),
            Reply::Array(vec![Reply::text("src_node"), Reply::Int(id(r.start))]),
            Reply::Array(vec![Reply::text("dest_node"), Reply::Int(id(r.end))]),
            Reply::Array(vec![Reply::text("properties"), props(&r.properties)]),
        ])
    };
    match v {
        QueryValue::Null => Reply::Nil,
        QueryValue::String(s) => Reply::text(s.clone()),
        QueryValue::Int(i) => Reply::Int(*i),
        QueryValue::Bool(b) => Reply::text(if *b { "true" } else { "false" }),
        QueryValue::Float(f) => Reply::text(double_text(*f)),
        QueryValue::List(items) => Reply::Array(items.iter().map(verbose).collect()),
        QueryValue::Map(m) => Reply::Array(m.iter().flat_map(|(k, v)| [Reply::text(k.clone()), verbose(v)]).collect()),
        QueryValue::Node(n) => node(n),
        QueryValue::Relationship(r) => rel(r),
        QueryValue::Path(p) => {
            Reply::Array(vec![Reply::Array(p.nodes.iter().map(node).collect()), Reply::Array(p.relationships.iter().map(rel).collect())])
        }
        QueryValue::Temporal(t) => Reply::text(t.to_string()),
        // FalkorDB's text for its (geographic, 2D) points; Neo4j's for the others.
        QueryValue::Point(p) if p.crs() == Crs::Wgs84 => Reply::text(format!("point({{latitude:{:.6}, longitude:{:.6}}})", p.y(), p.x())),
        QueryValue::Point(p) => Reply::text(p.to_string()),
    }
}

/// A JSON value as a reply: objects as maps, arrays as arrays, integers as integers, other
/// numbers as doubles (RESP2: strings), `null` as null.
pub(super) fn json(v: &serde_json::Value) -> Reply {
    match v {
        serde_json::Value::Null => Reply::Nil,
        serde_json::Value::Bool(b) => Reply::Bool(*b),
        serde_json::Value::Number(n) => n.as_i64().map_or_else(|| Reply::Double(n.as_f64().unwrap_or(f64::NAN)), Reply::Int),
        serde_json::Value::String(s) => Reply::text(s.clone()),
        serde_json::Value::Array(items) => Reply::Array(items.iter().map(json).collect()),
        serde_json::Value::Object(m) => Reply::Map(m.iter().map(|(k, v)| (k.clone(), json(v))).collect()),
    }
}
