//! Index statements (`engram_query::ddl`): declarations kept in the workspace's settings, one
//! entry per (entity kind, label, property, index kind), listed by `CALL db.indexes()`. They
//! change no query's result (every query is answered from engram's own indexes); a declaration
//! that exists already is refused with FalkorDB's words, which its clients look for.

use std::collections::BTreeMap;

use engram_query::ddl::{ConstraintDef, Ddl, IndexDef, OptionValue};
use engram_query::{Detail, ErrorType, QueryError};
use serde::{Deserialize, Serialize};

use super::{QueryResult, QueryStats};
use crate::settings::INDEXES_KEY;
use crate::write::constraints::{self, Constraint};

/// One declared index on one property.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Declared {
    /// `NODE` or `RELATIONSHIP`.
    pub entity: String,
    pub label: String,
    pub property: String,
    /// `RANGE`, `FULLTEXT` or `VECTOR`.
    pub kind: String,
    #[serde(default)]
    pub options: serde_json::Map<String, serde_json::Value>,
    /// The index's name, when its statement gave one (Neo4j's procedures query by it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Declared {
    /// The name `SHOW INDEXES` gives it and Neo4j's procedures find it by: the statement's, or,
    /// for an unnamed declaration, its kind, entity and label (`vector_node_Doc`).
    fn shown_name(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| format!("{}_{}_{}", self.kind.to_ascii_lowercase(), self.entity.to_ascii_lowercase(), self.label))
    }
}

/// The declarations in a workspace's settings value.
pub(crate) fn declared(value: Option<&str>) -> Vec<Declared> {
    value.and_then(|v| serde_json::from_str(v).ok()).unwrap_or_default()
}

fn option_json(v: &OptionValue) -> serde_json::Value {
    match v {
        OptionValue::Int(i) => (*i).into(),
        OptionValue::Float(f) => serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, serde_json::Value::Number),
        OptionValue::Str(s) => s.clone().into(),
        OptionValue::Bool(b) => (*b).into(),
        OptionValue::List(items) => items.iter().cloned().map(serde_json::Value::String).collect(),
        OptionValue::Map(items) => serde_json::Value::Object(items.iter().map(|(k, v)| (k.clone(), option_json(v))).collect()),
    }
}

/// A statement's options as stored: the vector settings of Neo4j's `indexConfig` map
/// (`vector.dimensions`, `vector.similarity_function`) also under FalkorDB's names
/// (`dimension`, `similarityFunction`), which the vector procedures read.
fn options_of(index: &IndexDef) -> serde_json::Map<String, serde_json::Value> {
    let mut options: serde_json::Map<_, _> = index.options.iter().map(|(k, v)| (k.clone(), option_json(v))).collect();
    let config = options.get("indexConfig").and_then(serde_json::Value::as_object).cloned().unwrap_or_default();
    for (neo4j, falkordb) in [("vector.dimensions", "dimension"), ("vector.similarity_function", "similarityFunction")] {
        if let Some(v) = config.get(neo4j) {
            options.entry(falkordb).or_insert_with(|| v.clone());
        }
    }
    options
}

fn entity(def: &IndexDef) -> &'static str {
    if def.relationship {
        "RELATIONSHIP"
    } else {
        "NODE"
    }
}

fn refused(message: String) -> QueryError {
    QueryError::runtime(ErrorType::SemanticError, Detail::InvalidArgumentValue, message)
}

/// The declarations after `ddl`, or FalkorDB's error for it.
pub(crate) fn apply(mut all: Vec<Declared>, ddl: &Ddl) -> Result<Vec<Declared>, QueryError> {
    match ddl {
        Ddl::CreateConstraint { .. } | Ddl::DropConstraint(_) | Ddl::DropConstraintNamed { .. } => Ok(all),
        Ddl::Create { index, if_not_exists } => {
            let options = options_of(index);
            if let Some(name) = &index.name {
                let same = |d: &Declared| d.entity == entity(index) && d.label == index.label && d.kind == index.kind.as_str();
                if all.iter().any(|d| d.name.as_ref() == Some(name) && !(same(d) && index.properties.contains(&d.property))) {
                    if *if_not_exists {
                        return Ok(all);
                    }
                    return Err(refused(format!("There already exists an index called '{name}'.")));
                }
            }
            let mut added = false;
            for p in &index.properties {
                let same =
                    |d: &Declared| d.entity == entity(index) && d.label == index.label && d.property == *p && d.kind == index.kind.as_str();
                if all.iter().any(same) {
                    continue;
                }
                all.push(Declared {
                    entity: entity(index).to_owned(),
                    label: index.label.clone(),
                    property: p.clone(),
                    kind: index.kind.as_str().to_owned(),
                    options: options.clone(),
                    name: index.name.clone(),
                });
                added = true;
            }
            if !added && !if_not_exists {
                let p = index.properties.first().map_or("", String::as_str);
                return Err(refused(format!("Attribute '{p}' is already indexed")));
            }
            Ok(all)
        }
        Ddl::Drop(index) => {
            let before = all.len();
            all.retain(|d| {
                !(d.entity == entity(index)
                    && d.label == index.label
                    && d.kind == index.kind.as_str()
                    && (index.properties.is_empty() || index.properties.contains(&d.property)))
            });
            if all.len() == before {
                return Err(refused(format!("Unable to drop index on :{}({}): no such index.", index.label, index.properties.join(", "))));
            }
            Ok(all)
        }
        Ddl::DropNamed { name, if_exists } => {
            let before = all.len();
            all.retain(|d| d.name.as_ref() != Some(name));
            if all.len() == before && !if_exists {
                return Err(refused(format!("Unable to drop index called '{name}': no such index.")));
            }
            Ok(all)
        }
    }
}

/// The declarations of the index called `name` (`Declared::shown_name`) with `kind` (`FULLTEXT`,
/// `VECTOR`): its entity, label and properties, for Neo4j's procedures; Neo4j's error when there
/// is none.
pub(crate) fn named(all: &[Declared], name: &str, kind: &str) -> Result<(String, String, Vec<String>), QueryError> {
    let mine: Vec<&Declared> = all.iter().filter(|d| d.shown_name() == name && d.kind == kind).collect();
    let Some(first) = mine.first() else {
        let what = if kind == "VECTOR" { "vector" } else { "fulltext" };
        return Err(QueryError::runtime(
            ErrorType::ProcedureError,
            Detail::InvalidArgumentValue,
            format!("There is no such {what} schema index: {name}"),
        ));
    };
    Ok((first.entity.clone(), first.label.clone(), mine.iter().map(|d| d.property.clone()).collect()))
}

/// The settings value holding `all`.
pub(crate) fn stored(all: &[Declared]) -> String {
    serde_json::to_string(all).unwrap_or_else(|_| "[]".to_owned())
}

/// `CALL db.indexes()`'s rows, FalkorDB's shape: one per (entity kind, label): `label`,
/// `properties`, `types` (property → kinds), `options` (property → options), `language`,
/// `stopwords`, `entitytype`, `status`, `info`.
pub(crate) fn rows(all: &[Declared]) -> Vec<Vec<super::value::Val>> {
    use super::value::Val;
    let mut groups: BTreeMap<(&str, &str), Vec<&Declared>> = BTreeMap::new();
    for d in all {
        groups.entry((d.entity.as_str(), d.label.as_str())).or_default().push(d);
    }
    groups
        .into_iter()
        .map(|((entity, label), decls)| {
            let mut properties: Vec<&str> = decls.iter().map(|d| d.property.as_str()).collect();
            properties.dedup();
            let mut types: BTreeMap<std::sync::Arc<str>, Val> = BTreeMap::new();
            let mut options: BTreeMap<std::sync::Arc<str>, Val> = BTreeMap::new();
            for p in &properties {
                let kinds = decls.iter().filter(|d| d.property == *p).map(|d| Val::str(&d.kind)).collect();
                types.insert((*p).into(), Val::list(kinds));
                let opts = decls
                    .iter()
                    .filter(|d| d.property == *p)
                    .flat_map(|d| d.options.iter())
                    .map(|(k, v)| (std::sync::Arc::from(k.as_str()), json_val(v)))
                    .collect();
                options.insert((*p).into(), Val::map(opts));
            }
            vec![
                Val::str(label),
                Val::list(properties.iter().map(|p| Val::str(p)).collect()),
                Val::map(types),
                Val::map(options),
                Val::str("english"),
                Val::list(Vec::new()),
                Val::str(entity),
                Val::str("OPERATIONAL"),
                Val::map(BTreeMap::new()),
            ]
        })
        .collect()
}

/// `SHOW INDEXES`'s rows in Neo4j's columns (`db.showIndexes`'s yields), of `kind` (`ALL`, the
/// default, or one kind): one per named index, and one per label and kind for the unnamed declarations
/// (FalkorDB's, one per property), named after them. A vector index's `options` carry Neo4j's
/// `indexConfig`, made from FalkorDB's options where the statement gave those.
pub(crate) fn show_rows(all: &[Declared], kind: Option<&super::value::Val>) -> Vec<Vec<super::value::Val>> {
    use super::value::Val;
    let kind = match kind {
        Some(Val::Str(k)) => k.to_ascii_uppercase(),
        _ => "ALL".to_owned(),
    };
    // (name, entity, label, kind) → properties and options, in declaration order.
    let mut groups: Vec<(String, &Declared, Vec<Val>)> = Vec::new();
    for d in all.iter().filter(|d| kind == "ALL" || d.kind == kind) {
        let name = d.shown_name();
        match groups.iter_mut().find(|(n, g, _)| *n == name && g.entity == d.entity && g.label == d.label && g.kind == d.kind) {
            Some((_, _, props)) => props.push(Val::str(d.property.as_str())),
            None => groups.push((name, d, vec![Val::str(d.property.as_str())])),
        }
    }
    let provider = |kind: &str| match kind {
        "FULLTEXT" => "fulltext-1.0",
        "VECTOR" => "vector-2.0",
        _ => "range-1.0",
    };
    groups
        .into_iter()
        .enumerate()
        .map(|(id, (name, d, properties))| {
            let mut config = d.options.get("indexConfig").and_then(serde_json::Value::as_object).cloned().unwrap_or_default();
            if d.kind == "VECTOR" {
                for (falkordb, neo4j) in [("dimension", "vector.dimensions"), ("similarityFunction", "vector.similarity_function")] {
                    if let Some(v) = d.options.get(falkordb) {
                        config.entry(neo4j).or_insert_with(|| v.clone());
                    }
                }
            }
            let options = serde_json::json!({ "indexProvider": provider(&d.kind), "indexConfig": config });
            vec![
                Val::Int(i64::try_from(id).unwrap_or(i64::MAX)),
                Val::str(name.as_str()),
                Val::str("ONLINE"),
                Val::Float(100.0),
                Val::str(d.kind.as_str()),
                Val::str(d.entity.as_str()),
                Val::list(vec![Val::str(d.label.as_str())]),
                Val::list(properties),
                Val::str(provider(&d.kind)),
                Val::Null,
                Val::Null,
                Val::Null,
                json_val(&options),
            ]
        })
        .collect()
}

fn json_val(v: &serde_json::Value) -> super::value::Val {
    use super::value::Val;
    match v {
        serde_json::Value::Bool(b) => Val::Bool(*b),
        serde_json::Value::Number(n) => n.as_i64().map_or_else(|| Val::Float(n.as_f64().unwrap_or(0.0)), Val::Int),
        serde_json::Value::String(s) => Val::str(s),
        serde_json::Value::Array(items) => Val::list(items.iter().map(json_val).collect()),
        serde_json::Value::Object(items) => Val::map(items.iter().map(|(k, v)| (std::sync::Arc::from(k.as_str()), json_val(v))).collect()),
        serde_json::Value::Null => Val::Null,
    }
}

/// Runs an index or constraint statement on `workspace` of `db`: one settings write, read and
/// changed under the writer (two concurrent statements cannot lose one another's declaration).
pub(crate) fn run(db: &crate::db::Database, workspace: &str, ddl: &Ddl) -> Result<QueryResult, crate::error::Error> {
    if db.snapshot().state.catalog.workspace(workspace).is_none() {
        return Err(crate::error::WorkspaceError::Unknown(workspace.to_owned()).into());
    }
    let mut stats = QueryStats::default();
    db.update_settings(|s, st| {
        if ddl.is_constraint() {
            let key = crate::settings::CONSTRAINTS_KEY;
            let before = constraints::declared(s.workspaces.get(workspace).and_then(|m| m.get(key)).map(String::as_str));
            let next = constrain(before.clone(), ddl, |c| constraints::check_all(st, workspace, c))?;
            stats.constraints_added = next.iter().filter(|d| !before.contains(d)).count() as u64;
            stats.constraints_removed = before.iter().filter(|d| !next.contains(d)).count() as u64;
            return s.set_for(workspace, key, &constraints::stored(&next)).map_err(crate::error::Error::from);
        }
        let current = s.workspaces.get(workspace).and_then(|m| m.get(INDEXES_KEY).cloned());
        let before = declared(current.as_deref());
        let next = apply(before.clone(), ddl)?;
        // Counted per property, as declared: what the statement added and what it removed.
        stats.indexes_added = next.iter().filter(|d| !before.contains(d)).count() as u64;
        stats.indexes_removed = before.iter().filter(|d| !next.contains(d)).count() as u64;
        let value = if next.is_empty() { "-".to_owned() } else { stored(&next) };
        s.set_for(workspace, INDEXES_KEY, &value).map_err(crate::error::Error::from)
    })?;
    Ok(QueryResult { columns: std::sync::Arc::from([]), rows: Vec::new(), stats, plan: None, cached: false })
}

/// The constraints after `ddl` (a constraint statement), or the error for it: a constraint the
/// stored data breaks (`check`) is not declared.
pub(crate) fn constrain(
    mut all: Vec<Constraint>,
    ddl: &Ddl,
    check: impl Fn(&Constraint) -> Result<(), String>,
) -> Result<Vec<Constraint>, QueryError> {
    let as_stored = |d: &ConstraintDef| Constraint {
        kind: d.kind.as_str().to_owned(),
        entity: if d.relationship { "RELATIONSHIP" } else { "NODE" }.to_owned(),
        label: d.label.clone(),
        properties: d.properties.clone(),
        name: d.name.clone(),
    };
    let same =
        |a: &Constraint, b: &Constraint| a.kind == b.kind && a.entity == b.entity && a.label == b.label && a.properties == b.properties;
    match ddl {
        Ddl::CreateConstraint { constraint, if_not_exists } => {
            let c = as_stored(constraint);
            let taken = |d: &Constraint| same(d, &c) || (c.name.is_some() && d.name == c.name);
            if let Some(d) = all.iter().find(|d| taken(d)) {
                if *if_not_exists {
                    return Ok(all);
                }
                return Err(QueryError::runtime(
                    ErrorType::SemanticError,
                    Detail::InvalidArgumentValue,
                    format!("Constraint already exists: {}", d.describe()),
                ));
            }
            check(&c).map_err(|why| {
                QueryError::runtime(
                    ErrorType::ConstraintValidationFailed,
                    Detail::InvalidArgumentValue,
                    format!("cannot create {}: {why}", c.describe()),
                )
            })?;
            all.push(c);
        }
        Ddl::DropConstraint(constraint) => {
            let c = as_stored(constraint);
            let before = all.len();
            all.retain(|d| !same(d, &c));
            if all.len() == before {
                return Err(refused(format!("Unable to drop constraint {}: no such constraint.", c.describe())));
            }
        }
        Ddl::DropConstraintNamed { name, if_exists } => {
            let before = all.len();
            all.retain(|d| d.name.as_ref() != Some(name));
            if all.len() == before && !if_exists {
                return Err(refused(format!("Unable to drop constraint called '{name}': no such constraint.")));
            }
        }
        Ddl::Create { .. } | Ddl::Drop(_) | Ddl::DropNamed { .. } => {}
    }
    Ok(all)
}

/// The rows of the schema procedures: `db.indexes()`, `db.showIndexes(kind)`,
/// `db.constraints()`, `db.showConstraints()`.
pub(crate) fn listing(
    view: &crate::read::view::WorkspaceView<'_>,
    procedure: &str,
    kind: Option<&super::value::Val>,
) -> Vec<Vec<super::value::Val>> {
    let indexes = || declared(view.setting(INDEXES_KEY));
    let constraints = || constraints::declared(view.setting(crate::settings::CONSTRAINTS_KEY));
    match procedure {
        "db.indexes" => rows(&indexes()),
        "db.showIndexes" => show_rows(&indexes(), kind),
        "db.constraints" => constraint_rows(&constraints()),
        _ => show_constraint_rows(&constraints()),
    }
}

/// `db.constraints()`: FalkorDB's rows (`type`, `label`, `properties`, `entitytype`, `status`).
pub(crate) fn constraint_rows(all: &[Constraint]) -> Vec<Vec<super::value::Val>> {
    use super::value::Val;
    all.iter()
        .map(|c| {
            vec![
                Val::str(&c.kind),
                Val::str(&c.label),
                Val::list(c.properties.iter().map(|p| Val::str(p)).collect()),
                Val::str(&c.entity),
                Val::str("OPERATIONAL"),
            ]
        })
        .collect()
}

/// `SHOW CONSTRAINTS`: Neo4j's rows (`id`, `name`, `type`, `entityType`, `labelsOrTypes`,
/// `properties`, `ownedIndex`, `propertyType`).
pub(crate) fn show_constraint_rows(all: &[Constraint]) -> Vec<Vec<super::value::Val>> {
    use super::value::Val;
    all.iter()
        .enumerate()
        .map(|(i, c)| {
            let kind = match (c.entity.as_str(), c.kind.as_str()) {
                ("NODE", "UNIQUE") => "UNIQUENESS",
                ("NODE", "KEY") => "NODE_KEY",
                (_, "KEY") => "RELATIONSHIP_KEY",
                ("NODE", _) => "NODE_PROPERTY_EXISTENCE",
                (_, "UNIQUE") => "RELATIONSHIP_UNIQUENESS",
                _ => "RELATIONSHIP_PROPERTY_EXISTENCE",
            };
            let name = c
                .name
                .clone()
                .unwrap_or_else(|| format!("constraint_{}_{}_{}", c.kind.to_ascii_lowercase(), c.label, c.properties.join("_")));
            vec![
                Val::Int(i64::try_from(i + 1).unwrap_or(i64::MAX)),
                Val::str(&name),
                Val::str(kind),
                Val::str(&c.entity),
                Val::list(vec![Val::str(&c.label)]),
                Val::list(c.properties.iter().map(|p| Val::str(p)).collect()),
                Val::Null,
                Val::Null,
            ]
        })
        .collect()
}
