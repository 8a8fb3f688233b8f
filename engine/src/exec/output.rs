//! Query results as callers see them: one value enum with nodes, relationships and paths
//! materialized (id, labels or type, endpoints, properties), and its JSON form.

use std::collections::BTreeMap;

use super::graph::{Graph, Prop};
use super::value::Val;
use crate::value::Value;

/// A value in a query result (and a parameter value).
#[derive(Clone, Debug, PartialEq)]
pub enum QueryValue {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    String(String),
    /// A list.
    List(Vec<QueryValue>),
    /// A map.
    Map(BTreeMap<String, QueryValue>),
    /// A node (an entity).
    Node(Node),
    /// A relationship (a claim).
    Relationship(Relationship),
    /// A path.
    Path(Path),
    /// A date, time, date-time or duration.
    Temporal(crate::temporal::Temporal),
    /// A spatial point.
    Point(crate::spatial::Point),
}

/// A node in a result.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// `id(n)`: the entity's dense id, stable for its life.
    pub id: u64,
    /// Its labels.
    pub labels: Vec<String>,
    /// Its properties.
    pub properties: BTreeMap<String, QueryValue>,
}

/// A relationship in a result.
#[derive(Clone, Debug, PartialEq)]
pub struct Relationship {
    /// `id(r)`: the claim's dense id.
    pub id: u64,
    /// Its type (the predicate).
    pub rel_type: String,
    /// The start node's id.
    pub start: u64,
    /// The end node's id.
    pub end: u64,
    /// Its properties.
    pub properties: BTreeMap<String, QueryValue>,
}

/// A path in a result.
#[derive(Clone, Debug, PartialEq)]
pub struct Path {
    /// Its nodes, in order (one more than relationships).
    pub nodes: Vec<Node>,
    /// Its relationships, in order.
    pub relationships: Vec<Relationship>,
}

/// A listed property as a result value (strings copied once, from the snapshot).
fn prop(g: &Graph<'_, '_>, v: Prop<'_>) -> QueryValue {
    match v {
        Prop::Str(s) => QueryValue::String(s.to_owned()),
        Prop::Strs(items) => QueryValue::List(items.into_iter().map(|s| QueryValue::String(s.to_owned())).collect()),
        Prop::Stored(v) => stored(v),
        Prop::Val(v) => materialize(g, &v),
    }
}

/// A stored property value as a result value.
fn stored(v: &Value) -> QueryValue {
    match v {
        Value::Null => QueryValue::Null,
        Value::Bool(b) => QueryValue::Bool(*b),
        Value::Int(i) => QueryValue::Int(*i),
        Value::Float(f) => QueryValue::Float(*f),
        Value::Str(s) => QueryValue::String(s.to_string()),
        Value::List(items) => QueryValue::List(items.iter().map(stored).collect()),
        Value::Floats(items) => QueryValue::List(items.iter().map(|f| QueryValue::Float(*f)).collect()),
        Value::Map(m) => QueryValue::Map(m.iter().map(|(k, v)| (k.to_string(), stored(v))).collect()),
        Value::Temporal(t) => QueryValue::Temporal(**t),
        Value::Point(p) => QueryValue::Point(**p),
    }
}

fn node(g: &Graph<'_, '_>, e: crate::ids::EntityId) -> Node {
    let mut properties = BTreeMap::new();
    g.for_each_node_prop(e, |k, v| {
        properties.insert(k.as_str().to_owned(), prop(g, v));
    });
    Node { id: u64::from(e.0), labels: g.label_names(e).map(str::to_owned).collect(), properties }
}

fn rel(g: &Graph<'_, '_>, c: crate::ids::ClaimId) -> Relationship {
    let (s, o) = g.endpoints(c).unwrap_or((crate::ids::EntityId(0), crate::ids::EntityId(0)));
    Relationship {
        id: u64::from(c.0),
        rel_type: g.rel_type(c).map(|t| t.to_string()).unwrap_or_default(),
        start: u64::from(s.0),
        end: u64::from(o.0),
        properties: {
            let mut properties = BTreeMap::new();
            g.for_each_rel_prop(c, |k, v| {
                properties.insert(k.as_str().to_owned(), prop(g, v));
            });
            properties
        },
    }
}

/// A runtime value as a result value.
pub(crate) fn materialize(g: &Graph<'_, '_>, v: &Val) -> QueryValue {
    match v {
        Val::Null => QueryValue::Null,
        Val::Bool(b) => QueryValue::Bool(*b),
        Val::Int(i) => QueryValue::Int(*i),
        Val::Float(f) => QueryValue::Float(*f),
        Val::Str(s) => QueryValue::String(s.to_string()),
        Val::List(items) => QueryValue::List(items.iter().map(|i| materialize(g, i)).collect()),
        Val::Map(m) => QueryValue::Map(m.iter().map(|(k, v)| (k.to_string(), materialize(g, v))).collect()),
        Val::Node(e) => QueryValue::Node(node(g, *e)),
        Val::Rel(c) => QueryValue::Relationship(rel(g, *c)),
        Val::Path(p) => QueryValue::Path(Path {
            nodes: std::iter::once(p.start).chain(p.steps.iter().map(|(_, n)| *n)).map(|n| node(g, n)).collect(),
            relationships: p.steps.iter().map(|(c, _)| rel(g, *c)).collect(),
        }),
        Val::Temporal(t) => QueryValue::Temporal(**t),
        Val::Point(p) => QueryValue::Point(**p),
    }
}

/// A parameter's value back as the caller gave it (parameters hold no nodes, relationships or
/// paths: `parameter` refuses them, so they come out as null here).
pub(crate) fn plain(v: &Val) -> QueryValue {
    match v {
        Val::Null | Val::Node(_) | Val::Rel(_) | Val::Path(_) => QueryValue::Null,
        Val::Bool(b) => QueryValue::Bool(*b),
        Val::Int(i) => QueryValue::Int(*i),
        Val::Float(f) => QueryValue::Float(*f),
        Val::Str(s) => QueryValue::String(s.to_string()),
        Val::List(items) => QueryValue::List(items.iter().map(plain).collect()),
        Val::Map(m) => QueryValue::Map(m.iter().map(|(k, v)| (k.to_string(), plain(v))).collect()),
        Val::Temporal(t) => QueryValue::Temporal(**t),
        Val::Point(p) => QueryValue::Point(**p),
    }
}

/// A parameter from a `FalkorDB` header.
pub(crate) fn from_header(v: engram_query::header::HeaderValue) -> QueryValue {
    use engram_query::header::HeaderValue as H;
    match v {
        H::Null => QueryValue::Null,
        H::Bool(b) => QueryValue::Bool(b),
        H::Int(i) => QueryValue::Int(i),
        H::Float(f) => QueryValue::Float(f),
        H::Str(s) => QueryValue::String(s),
        H::List(items) => QueryValue::List(items.into_iter().map(from_header).collect()),
        H::Map(items) => QueryValue::Map(items.into_iter().map(|(k, v)| (k, from_header(v))).collect()),
    }
}

/// A parameter as a runtime value; nodes and relationships cannot be parameters.
pub(crate) fn parameter(v: &QueryValue) -> Result<Val, String> {
    Ok(match v {
        QueryValue::Null => Val::Null,
        QueryValue::Bool(b) => Val::Bool(*b),
        QueryValue::Int(i) => Val::Int(*i),
        QueryValue::Float(f) => Val::Float(*f),
        QueryValue::String(s) => Val::str(s),
        QueryValue::List(items) => Val::list(items.iter().map(parameter).collect::<Result<_, _>>()?),
        QueryValue::Map(m) => {
            Val::map(m.iter().map(|(k, v)| Ok((std::sync::Arc::from(k.as_str()), parameter(v)?))).collect::<Result<_, String>>()?)
        }
        QueryValue::Temporal(t) => {
            t.validate().map_err(|e| e.0)?;
            Val::temporal(*t)
        }
        QueryValue::Point(p) => Val::point(*p),
        QueryValue::Node(_) | QueryValue::Relationship(_) | QueryValue::Path(_) => {
            return Err("a node, relationship or path cannot be a parameter; pass its id".to_owned())
        }
    })
}

impl QueryValue {
    /// The JSON form: scalars as JSON values (a float always reads as a float: `1.0`; NaN and
    /// the infinities as the strings `"NaN"`, `"Inf"`, `"-Inf"`), nodes as `{"id", "labels",
    /// "properties"}`, relationships as `{"id", "type", "start", "end", "properties"}`, paths as
    /// `{"nodes", "relationships"}`, temporal values as their ISO 8601 text, points as the map
    /// `point()` takes (`{"crs": "wgs-84", "longitude": 12.5, "latitude": 55.6}`).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::{json, Value};
        match self {
            QueryValue::Null => Value::Null,
            QueryValue::Bool(b) => Value::Bool(*b),
            QueryValue::Int(i) => json!(i),
            QueryValue::Float(f) if f.is_nan() => json!("NaN"),
            QueryValue::Float(f) if f.is_infinite() => json!(if *f > 0.0 { "Inf" } else { "-Inf" }),
            QueryValue::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            QueryValue::String(s) => json!(s),
            QueryValue::List(items) => Value::Array(items.iter().map(QueryValue::to_json).collect()),
            QueryValue::Map(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
            QueryValue::Node(n) => n.to_json(),
            QueryValue::Relationship(r) => r.to_json(),
            QueryValue::Path(p) => json!({
                "nodes": p.nodes.iter().map(Node::to_json).collect::<Vec<_>>(),
                "relationships": p.relationships.iter().map(Relationship::to_json).collect::<Vec<_>>(),
            }),
            QueryValue::Temporal(t) => json!(t.to_string()),
            QueryValue::Point(p) => point_json(p),
        }
    }

    /// A parameter from JSON: a number without fraction or exponent is an integer, an object
    /// `{"$datetime": "…"}` (any temporal kind; see [`tagged_temporal`]) is that value, and
    /// `{"$point": {…}}` the point its map describes (see [`tagged_point`]).
    pub fn from_json(v: &serde_json::Value) -> Result<QueryValue, String> {
        use serde_json::Value;
        Ok(match v {
            Value::Null => QueryValue::Null,
            Value::Bool(b) => QueryValue::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) if !n.to_string().contains(['.', 'e', 'E']) => QueryValue::Int(i),
                _ => QueryValue::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => QueryValue::String(s.clone()),
            Value::Array(items) => QueryValue::List(items.iter().map(QueryValue::from_json).collect::<Result<_, _>>()?),
            Value::Object(m) => match tagged_temporal(m.iter().map(|(k, v)| (k.as_str(), v.as_str()))) {
                Some(t) => QueryValue::Temporal(t?),
                None if m.len() == 1 && m.contains_key("$point") => QueryValue::Point(tagged_point(&m["$point"])?),
                None => QueryValue::Map(
                    m.iter()
                        .map(|(k, v)| QueryValue::from_json(v).map(|v| (k.clone(), v)).map_err(|e| format!("{k}: {e}")))
                        .collect::<Result<_, _>>()?,
                ),
            },
        })
    }
}

/// JSON's stand-in for a temporal value, as the JSON-lines export writes it: an object with one
/// key, `$date`, `$localtime`, `$time`, `$localdatetime`, `$datetime` or `$duration`, whose value
/// is that kind's ISO 8601 text (`{"$datetime": "2024-05-06T07:08:09+02:00"}`). `None` when the
/// object is not of that shape; the value's error when its text is not of its kind.
pub fn tagged_temporal<'a>(
    mut entries: impl ExactSizeIterator<Item = (&'a str, Option<&'a str>)>,
) -> Option<Result<crate::temporal::Temporal, String>> {
    if entries.len() != 1 {
        return None;
    }
    let (key, text) = entries.next()?;
    let kind = crate::temporal::Kind::of_function(key.strip_prefix('$')?)?;
    Some(match text {
        Some(text) => crate::temporal::Temporal::parse(kind, text).map_err(|e| {
            // The tag names the text already.
            let why = e.0.strip_prefix(&format!("'{text}': ")).unwrap_or(&e.0).to_owned();
            format!("{{\"{key}\": {text:?}}}: {why}")
        }),
        None => Err(format!("{{\"{key}\": …}} takes the value's ISO 8601 text")),
    })
}

/// A point as JSON: the map `point()` takes, `crs` first.
pub fn point_json(p: &crate::spatial::Point) -> serde_json::Value {
    use crate::spatial::PointMapValue;
    serde_json::Value::Object(
        p.map_fields()
            .into_iter()
            .map(|(k, v)| {
                let v = match v {
                    PointMapValue::Str(s) => serde_json::json!(s),
                    PointMapValue::Float(f) => serde_json::Number::from_f64(f).map_or(serde_json::Value::Null, serde_json::Value::Number),
                };
                (k.to_owned(), v)
            })
            .collect(),
    )
}

/// JSON's stand-in for a point, as the JSON-lines export writes it and parameters take it: the
/// value of `{"$point": {…}}`, a map as `point()` takes it (`crs` or `srid`, and `x`/`y`[/`z`] or
/// `longitude`/`latitude`[/`height`], numbers). The error names the key at fault.
pub fn tagged_point(v: &serde_json::Value) -> Result<crate::spatial::Point, String> {
    use crate::spatial::{Point, PointFields};
    let serde_json::Value::Object(m) = v else {
        return Err("{\"$point\": …} takes a map such as {\"crs\": \"wgs-84\", \"longitude\": 12.5, \"latitude\": 55.6}".to_owned());
    };
    let mut f = PointFields::default();
    for (k, v) in m {
        let key = k.to_ascii_lowercase();
        if let Some(slot) = f.coordinate(&key) {
            *slot = Some(v.as_f64().ok_or_else(|| format!("$point.{k}: a number, not {v}"))?);
            continue;
        }
        match key.as_str() {
            "crs" => f.crs = Some(v.as_str().ok_or_else(|| format!("$point.{k}: a string, not {v}"))?.to_owned()),
            "srid" => f.srid = Some(v.as_i64().ok_or_else(|| format!("$point.{k}: an integer, not {v}"))?),
            _ => return Err(format!("$point.{k}: not a point's key (x, y, z, longitude, latitude, height, crs, srid)")),
        }
    }
    Point::from_fields(&f).map_err(|e| format!("$point: {e}"))
}

/// Query parameters from a JSON object (what `PARAMS`, HTTP, MCP and `--param` take): values as
/// [`QueryValue::from_json`] reads them; an error names the parameter.
pub fn params_from_json(map: &serde_json::Map<String, serde_json::Value>) -> Result<super::Params, String> {
    map.iter().map(|(k, v)| QueryValue::from_json(v).map(|v| (k.clone(), v)).map_err(|e| format!("parameter ${k}: {e}"))).collect()
}

impl Node {
    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "id": self.id,
            "labels": self.labels,
            "properties": self.properties.iter().map(|(k, v)| (k.clone(), v.to_json())).collect::<serde_json::Map<_, _>>(),
        })
    }
}

impl Relationship {
    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "id": self.id,
            "type": self.rel_type,
            "start": self.start,
            "end": self.end,
            "properties": self.properties.iter().map(|(k, v)| (k.clone(), v.to_json())).collect::<serde_json::Map<_, _>>(),
        })
    }
}
