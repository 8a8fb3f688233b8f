//! What a caller learns about the language and the graph's shape: `SHOW PROCEDURES` and `SHOW
//! FUNCTIONS` (`dbms.showProcedures()`, `dbms.showFunctions()`) and Neo4j's `db.schema.nodeTypeProperties()` /
//! `db.schema.relTypeProperties()`, which tools and models call to learn a graph's labels,
//! types and property keys before they write a query. The schema is read through the query's
//! graph: a principal learns only the shape of what it may see.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use engram_query::function_docs::{FunctionDoc, FUNCTION_DOCS};
use engram_query::functions::{function, FunctionKind, Procedure, PROCEDURES};
use engram_query::types::BaseType;

use super::graph::Graph;
use super::value::Val;

/// The procedures this module answers.
pub(super) const NAMES: [&str; 4] =
    ["dbms.showProcedures", "dbms.showFunctions", "db.schema.nodeTypeProperties", "db.schema.relTypeProperties"];

/// The rows of `dbms.showProcedures`, `dbms.showFunctions`, `db.schema.nodeTypeProperties` or
/// `db.schema.relTypeProperties` (`name`).
pub(super) fn call(g: &Graph<'_, '_>, name: &str, args: &[Val]) -> Vec<Vec<Val>> {
    // Everything here is built in: a listing of user-defined ones is empty.
    let user_defined = matches!(args.first(), Some(Val::Str(k)) if k.eq_ignore_ascii_case("USER DEFINED"));
    match name {
        "dbms.showProcedures" if !user_defined => show_procedures(),
        "dbms.showFunctions" if !user_defined => show_functions(),
        "dbms.showProcedures" | "dbms.showFunctions" => Vec::new(),
        "db.schema.nodeTypeProperties" => node_type_properties(g),
        _ => rel_type_properties(g),
    }
}

/// `SHOW FUNCTIONS`'s rows, in `dbms.showFunctions`'s columns, by name.
fn show_functions() -> Vec<Vec<Val>> {
    let mut docs: Vec<&FunctionDoc> = FUNCTION_DOCS.iter().collect();
    docs.sort_by_key(|d| d.name.to_ascii_lowercase());
    docs.into_iter()
        .map(|d| {
            let aggregating = function(d.name).is_some_and(|f| f.kind == FunctionKind::Aggregate);
            vec![
                Val::str(d.name),
                Val::str(d.category),
                Val::str(d.description),
                Val::str(&format!("{}({})", d.name, d.args)),
                Val::Bool(true),
                Val::Bool(aggregating),
                Val::Bool(false),
            ]
        })
        .collect()
}

/// `SHOW PROCEDURES`'s rows, in `dbms.showProcedures`'s columns.
fn show_procedures() -> Vec<Vec<Val>> {
    let mut procedures: Vec<&Procedure> = PROCEDURES.iter().collect();
    procedures.sort_by_key(|p| p.name);
    procedures
        .into_iter()
        .map(|p| {
            let args = p.args.iter().enumerate().map(|(i, a)| {
                let mut m = BTreeMap::from([
                    (Arc::from("name"), Val::str(a)),
                    (Arc::from("type"), Val::str("ANY")),
                    (Arc::from("description"), Val::str(&format!("{a} :: ANY"))),
                    (Arc::from("isDeprecated"), Val::Bool(false)),
                ]);
                if i >= p.required {
                    m.insert(Arc::from("default"), Val::str("DefaultParameterValue{value=null, type=ANY}"));
                }
                Val::map(m)
            });
            let columns = p.yields.iter().map(|y| {
                Val::map(BTreeMap::from([
                    (Arc::from("name"), Val::str(y)),
                    (Arc::from("type"), Val::str("ANY")),
                    (Arc::from("description"), Val::str(&format!("{y} :: ANY"))),
                    (Arc::from("isDeprecated"), Val::Bool(false)),
                ]))
            });
            vec![
                Val::str(p.name),
                Val::str(p.doc),
                Val::str(if p.writes { "WRITE" } else { "READ" }),
                Val::Bool(false),
                Val::str(&signature(p)),
                Val::list(args.collect()),
                Val::list(columns.collect()),
                Val::Bool(false),
            ]
        })
        .collect()
}

/// Neo4j's signature text: `db.labels() :: (label :: ANY)`, an optional argument `= null`.
fn signature(p: &Procedure) -> String {
    let args: Vec<String> =
        p.args.iter().enumerate().map(|(i, a)| if i < p.required { format!("{a} :: ANY") } else { format!("{a} = null :: ANY") }).collect();
    let columns: Vec<String> = p.yields.iter().map(|y| format!("{y} :: ANY")).collect();
    format!("{}({}) :: ({})", p.name, args.join(", "), columns.join(", "))
}

/// What one property key holds across the elements of one label set or type: the type names
/// seen and on how many elements.
#[derive(Default)]
struct Seen {
    elements: usize,
    keys: BTreeMap<Arc<str>, (BTreeSet<&'static str>, usize)>,
}

impl Seen {
    fn add(&mut self, props: BTreeMap<Arc<str>, Val>) {
        self.elements += 1;
        for (k, v) in props {
            let (types, n) = self.keys.entry(k).or_default();
            types.insert(type_name(&v));
            *n += 1;
        }
    }

    /// Rows of `[.., propertyName, propertyTypes, mandatory]` after `head`; one row with a null
    /// key where no element has a property.
    fn rows(self, head: &[Val], out: &mut Vec<Vec<Val>>) {
        if self.keys.is_empty() {
            out.push([head, &[Val::Null, Val::Null, Val::Bool(false)]].concat());
        }
        for (k, (types, n)) in self.keys {
            let types = Val::list(types.into_iter().map(Val::str).collect());
            out.push([head, &[Val::Str(k), types, Val::Bool(n == self.elements)]].concat());
        }
    }
}

/// `db.schema.nodeTypeProperties()`: per set of labels nodes carry together (`nodeType`
/// ":`A`:`B`", `nodeLabels`) and property key, the type names its values have and whether
/// every such node has it (`mandatory`).
fn node_type_properties(g: &Graph<'_, '_>) -> Vec<Vec<Val>> {
    let mut by_labels: BTreeMap<Vec<&str>, Seen> = BTreeMap::new();
    for e in g.nodes() {
        let mut labels: Vec<&str> = g.label_names(e).collect();
        labels.sort_unstable();
        labels.dedup();
        by_labels.entry(labels).or_default().add(g.node_props(e));
    }
    let mut out = Vec::new();
    for (labels, seen) in by_labels {
        let node_type: String = labels.iter().map(|l| [":`", l, "`"].concat()).collect();
        let head = [Val::str(&node_type), Val::list(labels.iter().map(|l| Val::str(l)).collect())];
        seen.rows(&head, &mut out);
    }
    out
}

/// `db.schema.relTypeProperties()`: per relationship type (`relType` ":`T`") and property key,
/// as `node_type_properties`.
fn rel_type_properties(g: &Graph<'_, '_>) -> Vec<Vec<Val>> {
    let [_, types, _] = g.view.vocabulary();
    let mut by_type: BTreeMap<Arc<str>, Seen> = BTreeMap::new();
    for t in types.iter().filter(|t| !t.is_empty()) {
        for c in g.rels_with_type(t) {
            by_type.entry(t.clone()).or_default().add(g.rel_props(c));
        }
    }
    let mut out = Vec::new();
    for (t, seen) in by_type {
        seen.rows(&[Val::str(&format!(":`{t}`"))], &mut out);
    }
    out
}

/// Neo4j's name for a stored value's type in these listings: `String`, `Long`, `Double`,
/// `Boolean`, `Date`, `DateTime`, …, and `StringArray` and the like for a list of one type.
fn type_name(v: &Val) -> &'static str {
    let scalar = |b: &BaseType| match b {
        BaseType::Boolean => Some(("Boolean", "BooleanArray")),
        BaseType::String => Some(("String", "StringArray")),
        BaseType::Integer => Some(("Long", "LongArray")),
        BaseType::Float => Some(("Double", "DoubleArray")),
        BaseType::Date => Some(("Date", "DateArray")),
        BaseType::LocalTime => Some(("LocalTime", "LocalTimeArray")),
        BaseType::ZonedTime => Some(("Time", "TimeArray")),
        BaseType::LocalDateTime => Some(("LocalDateTime", "LocalDateTimeArray")),
        BaseType::ZonedDateTime => Some(("DateTime", "DateTimeArray")),
        BaseType::Duration => Some(("Duration", "DurationArray")),
        BaseType::Point => Some(("Point", "PointArray")),
        _ => None,
    };
    match v {
        Val::List(items) => {
            let mut kinds = items.iter().map(|i| scalar(&i.value_type().base).map(|(_, array)| array));
            match kinds.next() {
                Some(Some(first)) if kinds.all(|k| k == Some(first)) => first,
                _ => "List",
            }
        }
        Val::Map(_) => "Map",
        other => scalar(&other.value_type().base).map_or("Any", |(name, _)| name),
    }
}
