//! Constraints (`CREATE CONSTRAINT … REQUIRE n.p IS UNIQUE | IS NOT NULL`, FalkorDB's
//! `GRAPH.CONSTRAINT`): declared per workspace in its settings (`CONSTRAINTS_KEY`, JSON), checked
//! when a transaction ends over the nodes and relationships it wrote (created, properties or
//! labels changed, restored), and over every stored element of the label when one is declared.
//! A WAL replay does not check: what it replays was checked when it was written.
//!
//! A property is read as the language reads it: what was written to the element, else, on an
//! element the language did not write, its `id` and `name` (a node) or `id` and `text` (a
//! relationship). Only live elements count: deleted, erased and merged-away ones do not.

use serde::{Deserialize, Serialize};

use crate::ids::WorkspaceId;
use crate::settings::CONSTRAINTS_KEY;
use crate::state::{State, BARE, DELETED, ERASED};
use crate::value::Value;

/// One declared constraint, as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Constraint {
    /// `UNIQUE`, `MANDATORY` or `KEY` (both).
    pub kind: String,
    /// `NODE` or `RELATIONSHIP`.
    pub entity: String,
    /// The label or relationship type.
    pub label: String,
    pub properties: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Constraint {
    fn nodes(&self) -> bool {
        self.entity == "NODE"
    }

    /// Every element of the label must hold every property.
    fn requires(&self) -> bool {
        self.kind == "MANDATORY" || self.kind == "KEY"
    }

    /// No two elements of the label may hold the same values.
    fn unique(&self) -> bool {
        self.kind == "UNIQUE" || self.kind == "KEY"
    }

    /// How an error names it: `UNIQUE (:Person {email})`.
    pub fn describe(&self) -> String {
        let props = self.properties.join(", ");
        if self.nodes() {
            format!("{} (:{} {{{props}}})", self.kind, self.label)
        } else {
            format!("{} ()-[:{} {{{props}}}]-()", self.kind, self.label)
        }
    }
}

/// The constraints in a workspace's settings value.
pub(crate) fn declared(value: Option<&str>) -> Vec<Constraint> {
    value.and_then(|v| serde_json::from_str(v).ok()).unwrap_or_default()
}

/// The settings value holding `all` (`-`, unset, when empty).
pub(crate) fn stored(all: &[Constraint]) -> String {
    if all.is_empty() {
        "-".to_owned()
    } else {
        serde_json::to_string(all).unwrap_or_default()
    }
}

/// The constraints declared on `workspace` of `st`.
pub(crate) fn declared_in(st: &State, workspace: &str) -> Vec<Constraint> {
    declared(st.settings.workspaces.get(workspace).and_then(|m| m.get(CONSTRAINTS_KEY)).map(String::as_str))
}

/// The nodes and relationships a transaction wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Touched {
    /// Entities (dense ids), possibly repeated.
    pub entities: Vec<u32>,
    /// Claims (dense ids), possibly repeated.
    pub claims: Vec<u32>,
}

/// A row of a label: a node or a relationship (dense ids).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Row {
    Node(u32),
    Rel(u32),
}

fn live(st: &State, ws: WorkspaceId, row: Row) -> bool {
    match row {
        Row::Node(e) => {
            (e as usize) < st.entities.len()
                && *st.entities.ws.get(e as usize) == ws
                && *st.entities.flags.get(e as usize) & (DELETED | ERASED) == 0
                && st.entities.merged_into(e).is_none()
        }
        Row::Rel(c) => (c as usize) < st.claims.len() && st.claim_ws(c) == ws && *st.claims.flags.get(c as usize) & (DELETED | ERASED) == 0,
    }
}

/// Whether `row` carries the constraint's label, whose ids are `ids` (`label_ids`).
fn labelled(st: &State, row: Row, ids: Ids) -> bool {
    let is = |t: u16| ids.contains(&Some(t));
    match row {
        Row::Node(e) => is(st.entities.ty.get(e as usize).0) || st.entities.labels.get(&e).is_some_and(|l| l.iter().any(|t| is(t.0))),
        Row::Rel(c) => is(*st.claims.pred.get(c as usize)),
    }
}

/// The interned ids a label or type of the language names (as `read::catalog` resolves it).
type Ids = [Option<u16>; 2];

/// Property `key` of `row`, as the language reads it (see the module comment).
fn value(st: &State, row: Row, key: &str) -> Option<Value> {
    let (stored, bare) = match row {
        Row::Node(e) => (st.entities.props.get(e).and_then(|p| p.get(key)), *st.entities.flags.get(e as usize) & BARE != 0),
        Row::Rel(c) => (st.claims.props.get(c).and_then(|p| p.get(key)), *st.claims.flags.get(c as usize) & BARE != 0),
    };
    if let Some(v) = stored.filter(|v| **v != Value::Null) {
        return Some(v.clone());
    }
    if bare {
        return None;
    }
    let field = match (row, key) {
        (Row::Node(e), "id") => st.entities.ext_id.get(e as usize),
        (Row::Node(e), "name") => st.entities.name.get(e as usize),
        (Row::Rel(c), "id") => st.claims.ext_id.get(c as usize),
        (Row::Rel(c), "text") => st.claims.text.get(c as usize),
        _ => "",
    };
    (!field.is_empty()).then(|| Value::Str(field.into()))
}

/// Equal as the language compares them (`1 = 1.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // The language compares an integer with a float as floats: equal exactly, no margin.
        #[allow(clippy::cast_precision_loss, clippy::float_cmp)]
        (Value::Int(x), Value::Float(y)) | (Value::Float(y), Value::Int(x)) => *x as f64 == *y,
        _ => a == b,
    }
}

fn name_of(st: &State, row: Row) -> String {
    match row {
        Row::Node(e) => format!("node {e} (`{}`)", st.entities.ext_id.get(e as usize)),
        Row::Rel(c) => format!("relationship {c} (`{}`)", st.claims.ext_id.get(c as usize)),
    }
}

/// The rows of `ws` that may hold `v` under `key`: from the property index, with, for a memory
/// field, the rows its own index gives; every row of the workspace where no index answers (a
/// list, a relationship's `text`).
fn candidates(st: &State, ws: WorkspaceId, nodes: bool, key: &str, v: &Value) -> Vec<Row> {
    let every = || -> Vec<Row> {
        if nodes {
            (0..st.entities.len() as u32).map(Row::Node).collect()
        } else {
            (0..st.claims.len() as u32).map(Row::Rel).collect()
        }
    };
    let Some(s) = crate::index::propindex::Scalar::of_value(v) else { return every() };
    let mut rows: Vec<Row> = if nodes {
        st.entities.with_prop(ws, key, s).into_iter().map(Row::Node).collect()
    } else {
        st.claims_with_prop(ws, key, s).into_iter().map(Row::Rel).collect()
    };
    match (nodes, key, v) {
        (true, "id", Value::Str(id)) => rows.extend(st.entities.find_ext(ws, id).map(Row::Node)),
        (true, "name", Value::Str(name)) => {
            rows.extend(st.entities.with_name_key(ws, &crate::normalize::name_key(name)).into_iter().map(Row::Node));
        }
        (false, "id", Value::Str(id)) => rows.extend(st.find_claim_ext_indexed(ws, id).map(Row::Rel)),
        (false, "text", Value::Str(_)) => return every(),
        _ => {}
    }
    rows
}

/// Whether `row` meets `c` in `ws`; the violation, in words, when it does not (naming `row`,
/// which the transaction wrote, never the row it clashes with).
fn check_row(st: &State, ws: WorkspaceId, c: &Constraint, id: Ids, row: Row) -> Result<(), String> {
    let values: Vec<Option<Value>> = c.properties.iter().map(|p| value(st, row, p)).collect();
    if c.requires() {
        if let Some(i) = values.iter().position(Option::is_none) {
            return Err(format!("{} has no property `{}`, which {} requires", name_of(st, row), c.properties[i], c.describe()));
        }
    }
    if !c.unique() {
        return Ok(());
    }
    // Uniqueness compares only rows holding every property.
    let Some(values) = values.into_iter().collect::<Option<Vec<Value>>>() else { return Ok(()) };
    let clash = candidates(st, ws, c.nodes(), &c.properties[0], &values[0]).into_iter().find(|&other| {
        other != row
            && live(st, ws, other)
            && labelled(st, other, id)
            && c.properties.iter().zip(&values).all(|(p, v)| value(st, other, p).is_some_and(|o| same(&o, v)))
    });
    // The other row is not named: the writer may not see it (row policies), as with any
    // uniqueness check, its existence is all the refusal tells.
    match clash {
        Some(_) => {
            Err(format!("{} holds the same values as another element of the label, which {} forbids", name_of(st, row), c.describe()))
        }
        None => Ok(()),
    }
}

/// The ids of `c`'s label or type in `st`, as the language resolves it: the name with exactly
/// this case, and the one the memory API's case-insensitive names give (`None`: nothing
/// carries it).
fn label_id(st: &State, c: &Constraint) -> Option<Ids> {
    let table = if c.nodes() { &st.catalog.types } else { &st.catalog.predicates };
    let exact = table.get(&c.label);
    let folded = crate::normalize::with_vocabulary_key(&c.label, |key| table.get(key)).filter(|f| Some(*f) != exact);
    (exact.is_some() || folded.is_some()).then_some([exact, folded])
}

/// Checks what a transaction on `workspace` wrote against its constraints: the first violation,
/// in words.
pub(crate) fn check(st: &State, workspace: &str, touched: &Touched) -> Result<(), String> {
    if touched.entities.is_empty() && touched.claims.is_empty() {
        return Ok(());
    }
    let all = declared_in(st, workspace);
    let Some(ws) = st.catalog.workspace(workspace).filter(|_| !all.is_empty()) else { return Ok(()) };
    let mut rows: Vec<Row> = touched.entities.iter().map(|&e| Row::Node(e)).chain(touched.claims.iter().map(|&c| Row::Rel(c))).collect();
    rows.sort_unstable_by_key(|r| match r {
        Row::Node(e) => (0, *e),
        Row::Rel(c) => (1, *c),
    });
    rows.dedup();
    for c in &all {
        let Some(id) = label_id(st, c) else { continue };
        for &row in &rows {
            if matches!(row, Row::Node(_)) == c.nodes() && live(st, ws, row) && labelled(st, row, id) {
                check_row(st, ws, c, id, row)?;
            }
        }
    }
    Ok(())
}

/// Checks every stored element of `c`'s label in `workspace` (before declaring it).
pub(crate) fn check_all(st: &State, workspace: &str, c: &Constraint) -> Result<(), String> {
    let (Some(ws), Some(id)) = (st.catalog.workspace(workspace), label_id(st, c)) else { return Ok(()) };
    let rows: Vec<Row> = if c.nodes() {
        (0..st.entities.len() as u32).map(Row::Node).collect()
    } else {
        (0..st.claims.len() as u32).map(Row::Rel).collect()
    };
    let mine: Vec<Row> = rows.into_iter().filter(|&r| live(st, ws, r) && labelled(st, r, id)).collect();
    if !c.unique() {
        return mine.into_iter().try_for_each(|r| check_row(st, ws, c, id, r));
    }
    if c.requires() {
        let present = |r: &Row| c.properties.iter().all(|p| value(st, *r, p).is_some());
        if let Some(r) = mine.iter().find(|r| !present(r)) {
            return check_row(st, ws, c, id, *r);
        }
    }
    // Uniqueness by sorting the rows' values once, not a lookup per row.
    let mut keyed: Vec<(String, Row)> = mine
        .into_iter()
        .filter_map(|r| {
            let values: Option<Vec<Value>> = c.properties.iter().map(|p| value(st, r, p)).collect();
            values.map(|v| (format!("{:?}", v.iter().map(normal).collect::<Vec<_>>()), r))
        })
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    match keyed.windows(2).find(|w| w[0].0 == w[1].0) {
        Some(w) => Err(format!("{} and {} hold the same values, which {} forbids", name_of(st, w[0].1), name_of(st, w[1].1), c.describe())),
        None => Ok(()),
    }
}

/// A value with an integral float written as the integer (so `1` and `1.0` sort as one).
fn normal(v: &Value) -> Value {
    match v {
        #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)] // Reason: only an integral float in the integers' range.
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::Int(*f as i64),
        other => other.clone(),
    }
}
