//! engram for Python: the extension module `engram._engram`, the embedded database.
//!
//! Deliberately thin: each method is one engine call with the GIL released, taking and giving
//! the same shapes as the server's `ENGRAM.*` commands (JSON text for documents and records,
//! Python values for query rows), so that the pure-Python layer (`python/engram/`) wraps the
//! embedded database and the network client alike and both give identical results.

// Reason: PyO3 converts a Python argument into an owned value (`Vec`, `String`, `PathBuf`).
#![allow(clippy::needless_pass_by_value)]

mod result;

use std::path::PathBuf;
use std::sync::Arc;

use engram::exec::{Node, Path, Relationship};
use engram::{Bindings, Database, ErrorClass, Params, QueryResult, QueryValue};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

create_exception!(engram, EngramError, PyException, "An error from engram; `klass` names its class.");
create_exception!(engram, CallerError, EngramError, "The request was wrong: fix the request.");
create_exception!(engram, ConflictError, EngramError, "The request conflicts with the stored state.");
create_exception!(engram, LimitError, EngramError, "A named limit, a deadline or a cancellation stopped the work.");
create_exception!(engram, OperatorError, EngramError, "The environment: I/O, a full disk, a lock, a missing model.");
create_exception!(engram, CorruptionError, EngramError, "Stored bytes fail their checksum or decode wrongly.");
create_exception!(engram, BugError, EngramError, "A bug in engram.");

/// The Python exception for an engine error: its class picks the exception; a query error
/// carries `kind`, `line` and `column`.
fn py_err(py: Python<'_>, e: &engram::Error) -> PyErr {
    let message = e.to_string();
    let err = match e.class() {
        ErrorClass::Caller => CallerError::new_err(message),
        ErrorClass::Conflict => ConflictError::new_err(message),
        ErrorClass::Limit => LimitError::new_err(message),
        ErrorClass::Operator => OperatorError::new_err(message),
        ErrorClass::Corruption => CorruptionError::new_err(message),
        ErrorClass::Bug => BugError::new_err(message),
    };
    let value = err.value(py);
    let _ = value.setattr("klass", e.class().name());
    if let engram::Error::Query(q) = e {
        let _ = value.setattr("kind", q.kind.as_str());
        let _ = value.setattr("line", q.line());
        let _ = value.setattr("column", q.column());
    }
    err
}

/// A caller's mistake found before the engine was asked.
fn caller(message: impl Into<String>) -> PyErr {
    CallerError::new_err(message.into())
}

/// An embedded engram database.
#[pyclass(module = "engram._engram", name = "Database")]
struct PyDatabase {
    db: Option<Arc<Database>>,
    /// The workspace `run` uses when not given one (its `Memory`'s).
    workspace: std::sync::Mutex<Arc<str>>,
}

impl PyDatabase {
    fn new(db: Database) -> PyDatabase {
        PyDatabase { db: Some(Arc::new(db)), workspace: std::sync::Mutex::new(Arc::from(engram::DEFAULT_WORKSPACE)) }
    }

    fn db(&self) -> PyResult<Arc<Database>> {
        self.db.clone().ok_or_else(|| caller("the database is closed"))
    }
}

/// Why an engine call failed: the engine's error, or a caller's mistake found on the way.
enum Fail {
    Engine(engram::Error),
    Caller(String),
}

impl From<engram::Error> for Fail {
    fn from(e: engram::Error) -> Fail {
        Fail::Engine(e)
    }
}

impl From<engram::ReadError> for Fail {
    fn from(e: engram::ReadError) -> Fail {
        Fail::Engine(e.into())
    }
}

impl From<engram::WorkspaceError> for Fail {
    fn from(e: engram::WorkspaceError) -> Fail {
        Fail::Engine(e.into())
    }
}

/// Runs `f` on the database with the GIL released; an engine error becomes its exception.
fn engine<T: Send>(py: Python<'_>, db: &Arc<Database>, f: impl FnOnce(&Database) -> Result<T, Fail> + Send) -> PyResult<T> {
    py.detach(|| f(db)).map_err(|e| match e {
        Fail::Engine(e) => py_err(py, &e),
        Fail::Caller(m) => caller(m),
    })
}

/// A Python value as a query parameter: `None`, `bool`, `int`, `float`, `str`, lists and tuples,
/// dicts with string keys (what JSON holds; the same values the server's `PARAMS` takes), and
/// `datetime`, `date`, `time` and `timedelta`.
fn param_value(v: &Bound<'_, PyAny>, depth: usize) -> PyResult<QueryValue> {
    use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
    if depth > 64 {
        return Err(caller("params: nested deeper than 64"));
    }
    Ok(if v.is_none() {
        QueryValue::Null
    } else if let Ok(b) = v.cast::<PyBool>() {
        QueryValue::Bool(b.is_true())
    } else if v.is_instance_of::<PyInt>() {
        QueryValue::Int(v.extract::<i64>().map_err(|_| caller("params: an integer outside the 64-bit range"))?)
    } else if let Ok(f) = v.cast::<PyFloat>() {
        QueryValue::Float(f.value())
    } else if let Ok(s) = v.cast::<PyString>() {
        QueryValue::String(s.extract::<String>()?)
    } else if let Some(t) = temporal_param(v)? {
        t
    } else if let Ok(d) = v.cast::<PyDict>() {
        if let Some(t) = tagged_temporal(d)? {
            return Ok(t);
        }
        if let Some(p) = tagged_point(d)? {
            return Ok(p);
        }
        let mut m = std::collections::BTreeMap::new();
        for (k, x) in d.iter() {
            let k: String = k.extract().map_err(|_| caller("params: map keys must be strings"))?;
            m.insert(k, param_value(&x, depth + 1)?);
        }
        QueryValue::Map(m)
    } else if let Ok(l) = v.cast::<PyList>() {
        QueryValue::List(l.iter().map(|x| param_value(&x, depth + 1)).collect::<PyResult<_>>()?)
    } else if let Ok(t) = v.cast::<PyTuple>() {
        QueryValue::List(t.iter().map(|x| param_value(&x, depth + 1)).collect::<PyResult<_>>()?)
    } else {
        return Err(caller(format!(
            "params: a {} is not a query value (None, bool, int, float, str, list, dict, datetime, date, time, timedelta)",
            v.get_type().name()?
        )));
    })
}

/// A Python `datetime`, `date`, `time` or `timedelta` as the temporal value it is, read from the
/// ISO 8601 text the client back end sends for it (so both back ends bind the same value): a
/// `datetime` or `time` with a time zone is a `datetime` / `time` at its offset then (a `datetime`
/// whose zone is a `zoneinfo.ZoneInfo` keeps the zone's name), one without is local; a `timedelta` is a duration of its days and its seconds (with the microseconds).
fn temporal_param(v: &Bound<'_, PyAny>) -> PyResult<Option<QueryValue>> {
    use engram::temporal::{Kind, Temporal};
    use pyo3::sync::PyOnceLock;
    use pyo3::types::PyType;
    static CLASSES: [PyOnceLock<Py<PyType>>; 4] = [PyOnceLock::new(), PyOnceLock::new(), PyOnceLock::new(), PyOnceLock::new()];
    let py = v.py();
    let class = |i: usize, name: &str| CLASSES[i].import(py, "datetime", name);
    let zoned = |v: &Bound<'_, PyAny>| -> PyResult<bool> { Ok(!v.call_method0("utcoffset")?.is_none()) };
    let (kind, text) = if v.is_instance(class(0, "datetime")?)? {
        let mut text = v.call_method0("isoformat")?.extract::<String>()?;
        if zoned(v)? {
            // A `zoneinfo.ZoneInfo` names its zone: kept, so the value stays in that zone.
            if let Ok(key) = v.getattr("tzinfo")?.getattr("key").and_then(|k| k.extract::<String>()) {
                text = format!("{text}[{key}]");
            }
            (Kind::DateTime, text)
        } else {
            (Kind::LocalDateTime, text)
        }
    } else if v.is_instance(class(1, "date")?)? {
        (Kind::Date, v.call_method0("isoformat")?.extract::<String>()?)
    } else if v.is_instance(class(2, "time")?)? {
        (if zoned(v)? { Kind::Time } else { Kind::LocalTime }, v.call_method0("isoformat")?.extract::<String>()?)
    } else if v.is_instance(class(3, "timedelta")?)? {
        let part = |name: &str| -> PyResult<i64> { v.getattr(name)?.extract::<i64>() };
        (Kind::Duration, format!("P{}DT{}.{:06}S", part("days")?, part("seconds")?, part("microseconds")?))
    } else {
        return Ok(None);
    };
    let t = Temporal::parse(kind, &text).map_err(|e| caller(format!("params: a {}: {}", kind.name(), e.0)))?;
    Ok(Some(QueryValue::Temporal(t)))
}

/// A one-key dict `{"$datetime": "…"}` (any temporal kind) as that value, as JSON parameters
/// read it on the server, so a dict means the same on both back ends.
fn tagged_temporal(d: &Bound<'_, PyDict>) -> PyResult<Option<QueryValue>> {
    if d.len() != 1 {
        return Ok(None);
    }
    let Some((k, v)) = d.iter().next() else { return Ok(None) };
    let (Ok(k), text) = (k.extract::<String>(), v.extract::<String>().ok()) else { return Ok(None) };
    match engram::exec::tagged_temporal(std::iter::once((k.as_str(), text.as_deref()))) {
        Some(t) => t.map(|t| Some(QueryValue::Temporal(t))).map_err(|e| caller(format!("params: {e}"))),
        None => Ok(None),
    }
}

/// A one-key dict `{"$point": {"crs": "wgs-84", "longitude": …, "latitude": …}}` as that point,
/// as JSON parameters read it on the server.
fn tagged_point(d: &Bound<'_, PyDict>) -> PyResult<Option<QueryValue>> {
    use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
    let (1, Some(inner)) = (d.len(), d.get_item("$point")?) else { return Ok(None) };
    let json = match inner.cast::<PyDict>() {
        Ok(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m.iter() {
                let k: String = k.extract().map_err(|_| caller("params: $point: keys must be strings"))?;
                let v = if let Ok(s) = v.cast::<PyString>() {
                    serde_json::Value::from(s.to_str()?)
                } else if v.is_instance_of::<PyInt>() && !v.is_instance_of::<PyBool>() {
                    serde_json::Value::from(v.extract::<i64>().map_err(|_| caller(format!("params: $point.{k}: out of range")))?)
                } else if let Ok(f) = v.cast::<PyFloat>() {
                    serde_json::Number::from_f64(f.value()).map_or(serde_json::Value::Null, serde_json::Value::Number)
                } else {
                    serde_json::Value::Null
                };
                out.insert(k, v);
            }
            serde_json::Value::Object(out)
        }
        Err(_) => serde_json::Value::Null,
    };
    engram::exec::tagged_point(&json).map(|p| Some(QueryValue::Point(p))).map_err(|e| caller(format!("params: {e}")))
}

/// Parameters: a dict of Python values (or `None`), bound straight into the engine's values (a
/// string is copied once, from Python's own UTF-8).
fn params_from(params: Option<&Bound<'_, PyAny>>) -> PyResult<Bindings> {
    use pyo3::types::PyString;
    let mut out = Bindings::new();
    let Some(p) = params.filter(|p| !p.is_none()) else { return Ok(out) };
    let d = p.cast::<PyDict>().map_err(|_| caller("params: expected a dict of parameters"))?;
    for (k, v) in d.iter() {
        let k = k.cast::<PyString>().map_err(|_| caller("params: names must be strings"))?;
        let k = k.to_str()?;
        // Strings first: the usual parameter (an id, a name) and no `QueryValue` on the way.
        match v.cast::<PyString>() {
            Ok(s) => out.set_str(k, s.to_str()?),
            Err(_) => out.set(k, &param_value(&v, 0)?).map_err(caller)?,
        }
    }
    Ok(out)
}

/// Parameters as the server takes them: a JSON object of values.
fn params_of(json: Option<&str>) -> PyResult<Params> {
    let Some(json) = json else { return Ok(Params::new()) };
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(serde_json::Value::Object(map)) => engram::exec::params_from_json(&map).map_err(|e| caller(format!("params: {e}"))),
        Ok(_) => Err(caller("params: expected a dict of parameters")),
        Err(e) => Err(caller(format!("params: {e}"))),
    }
}

/// A query value as a Python value; nodes, relationships and paths as `engram.Node`,
/// `engram.Relationship` and `engram.Path`.
fn value<'py>(py: Python<'py>, types: &Types<'py>, v: &QueryValue) -> PyResult<Bound<'py, PyAny>> {
    let props = |p: &std::collections::BTreeMap<String, QueryValue>| -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in p {
            d.set_item(k, value(py, types, v)?)?;
        }
        Ok(d)
    };
    let node =
        |n: &Node| -> PyResult<Bound<'py, PyAny>> { types.get()?.getattr("Node")?.call1((n.id, n.labels.clone(), props(&n.properties)?)) };
    let rel = |r: &Relationship| -> PyResult<Bound<'py, PyAny>> {
        types.get()?.getattr("Relationship")?.call1((r.id, r.rel_type.clone(), r.start, r.end, props(&r.properties)?))
    };
    Ok(match v {
        QueryValue::Null => py.None().into_bound(py),
        QueryValue::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        QueryValue::Int(i) => i.into_pyobject(py)?.into_any(),
        QueryValue::Float(f) => f.into_pyobject(py)?.into_any(),
        QueryValue::String(s) => s.into_pyobject(py)?.into_any(),
        // Python's `datetime` holds microseconds and no offset-only time zone for `time`:
        // temporal values come as their ISO 8601 text, exact.
        QueryValue::Temporal(t) => t.to_string().into_pyobject(py)?.into_any(),
        // A point as the dict `point()` takes (`{"crs": "wgs-84", "longitude": …, "latitude": …}`),
        // as the server back end gives it.
        QueryValue::Point(p) => {
            let d = PyDict::new(py);
            for (k, v) in p.map_fields() {
                match v {
                    engram::spatial::PointMapValue::Str(s) => d.set_item(k, s)?,
                    engram::spatial::PointMapValue::Float(f) => d.set_item(k, f)?,
                }
            }
            d.into_any()
        }
        QueryValue::List(items) => PyList::new(py, items.iter().map(|i| value(py, types, i)).collect::<PyResult<Vec<_>>>()?)?.into_any(),
        QueryValue::Map(m) => props(m)?.into_any(),
        QueryValue::Node(n) => node(n)?,
        QueryValue::Relationship(r) => rel(r)?,
        QueryValue::Path(Path { nodes, relationships }) => {
            let nodes = nodes.iter().map(node).collect::<PyResult<Vec<_>>>()?;
            let rels = relationships.iter().map(rel).collect::<PyResult<Vec<_>>>()?;
            types.get()?.getattr("Path")?.call1((nodes, rels))?
        }
    })
}

/// `engram._types`, imported the first time a node, relationship or path needs its class (a
/// result of plain values never pays for the import).
struct Types<'py> {
    py: Python<'py>,
    module: std::cell::OnceCell<Bound<'py, PyModule>>,
}

impl<'py> Types<'py> {
    fn get(&self) -> PyResult<&Bound<'py, PyModule>> {
        if let Some(m) = self.module.get() {
            return Ok(m);
        }
        let m = self.py.import("engram._types")?;
        Ok(self.module.get_or_init(|| m))
    }
}

/// A result as `(columns, rows, stats, plan)`: rows are tuples; `plan` is `None` unless
/// EXPLAIN or PROFILE made one.
fn result<'py>(py: Python<'py>, r: &QueryResult) -> PyResult<Bound<'py, PyTuple>> {
    let [rows, stats, plan] = result_parts(py, r)?;
    PyTuple::new(py, [PyList::new(py, r.columns.iter())?.into_any(), rows, stats, plan])
}

/// `result`'s parts but the columns: rows, counters, plan.
fn result_parts<'py>(py: Python<'py>, r: &QueryResult) -> PyResult<[Bound<'py, PyAny>; 3]> {
    let types = Types { py, module: std::cell::OnceCell::new() };
    let rows = r
        .rows
        .iter()
        .map(|row| PyTuple::new(py, row.iter().map(|v| value(py, &types, v)).collect::<PyResult<Vec<_>>>()?))
        .collect::<PyResult<Vec<_>>>()?;
    // The counters in their documented order, or `None` when all are zero (a read): the Python
    // `Result` makes its `stats` dict from them when asked, not on every call.
    let counters = r.stats.counters();
    let stats = if counters.iter().all(|(_, n)| *n == 0) {
        py.None().into_bound(py)
    } else {
        PyTuple::new(py, counters.iter().map(|(_, n)| *n))?.into_any()
    };
    let plan: Option<Vec<&str>> = r.plan.as_ref().map(|p| p.lines().collect());
    Ok([PyList::new(py, rows)?.into_any(), stats, plan.into_pyobject(py)?.into_any()])
}

/// A result as an `engram.Result`.
fn result_object<'py>(py: Python<'py>, r: &QueryResult) -> PyResult<Bound<'py, result::QueryResultObject>> {
    let [rows, stats, plan] = result_parts(py, r)?;
    Bound::new(py, result::QueryResultObject::from_parts(r.columns.clone(), rows.unbind(), stats.unbind(), plan.unbind()))
}

fn json<T: serde::Serialize>(v: &T) -> PyResult<String> {
    serde_json::to_string(v).map_err(|e| BugError::new_err(e.to_string()))
}

#[pymethods]
impl PyDatabase {
    /// Picks the embedder (`minilm`, `static`, `hash`; `None`: the one the database records);
    /// returns which one and why, or `None`.
    #[pyo3(signature = (name=None, model_dir=None))]
    fn use_embedder(&self, py: Python<'_>, name: Option<String>, model_dir: Option<PathBuf>) -> PyResult<Option<String>> {
        let db = self.db()?;
        engine(py, &db, |db| Ok(db.use_embedder(name.as_deref(), model_dir.as_deref())?))
    }

    /// Runs one query: an `engram.Result`.
    #[pyo3(signature = (workspace, text, params=None))]
    fn query<'py>(
        &self,
        py: Python<'py>,
        workspace: &str,
        text: &str,
        params: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, result::QueryResultObject>> {
        let db = self.db()?;
        let params = params_from(params)?;
        let r = engine(py, &db, |db| {
            // As the server's ENGRAM.QUERY: an unknown workspace is created.
            db.ensure_workspace(workspace)?;
            Ok(db.query_bound(workspace, text, &params)?)
        })?;
        result_object(py, &r)
    }

    /// `Memory.query` itself for the embedded back end, bound to the `Memory` so a query runs no
    /// Python frame: the workspace given, else the one `set_workspace` last set.
    #[pyo3(signature = (cypher, params=None, *, workspace=None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        cypher: &str,
        params: Option<&Bound<'py, PyAny>>,
        workspace: Option<&str>,
    ) -> PyResult<Bound<'py, result::QueryResultObject>> {
        match workspace.filter(|w| !w.is_empty()) {
            Some(w) => self.query(py, w, cypher, params),
            None => {
                let w = self.workspace.lock().map_err(|_| BugError::new_err("the workspace lock is poisoned"))?.clone();
                self.query(py, &w, cypher, params)
            }
        }
    }

    /// The workspace `run` uses when not given one.
    fn set_workspace(&self, workspace: &str) -> PyResult<()> {
        *self.workspace.lock().map_err(|_| BugError::new_err("the workspace lock is poisoned"))? = Arc::from(workspace);
        Ok(())
    }

    /// Runs `(text, params_json)` statements as one atomic transaction: one result each.
    fn transaction<'py>(
        &self,
        py: Python<'py>,
        workspace: &str,
        statements: Vec<(String, Option<String>)>,
    ) -> PyResult<Bound<'py, PyList>> {
        let db = self.db()?;
        let bound = statements.iter().map(|(t, p)| Ok((t.as_str(), params_of(p.as_deref())?))).collect::<PyResult<Vec<_>>>()?;
        let results = engine(py, &db, |db| {
            db.ensure_workspace(workspace)?;
            let refs: Vec<(&str, &Params)> = bound.iter().map(|(t, p)| (*t, p)).collect();
            Ok(db.transaction(workspace, &refs)?)
        })?;
        PyList::new(py, results.iter().map(|r| result(py, r)).collect::<PyResult<Vec<_>>>()?)
    }

    /// Ingests a JSON array of documents in one commit group (one fsync): a JSON array of
    /// reports, an error object `{"error", "class"}` in place of a document that failed.
    fn ingest(&self, py: Python<'_>, docs: &str) -> PyResult<String> {
        let db = self.db()?;
        let parsed: Vec<serde_json::Value> = serde_json::from_str(docs).map_err(|e| caller(format!("ingest: {e}")))?;
        let failed = |e: &engram::Error| serde_json::json!({"error": e.to_string(), "class": e.class().name()});
        // Each document stands alone: one that does not parse fails alone, the others go on.
        let mut out: Vec<Option<serde_json::Value>> = Vec::with_capacity(parsed.len());
        let mut docs = Vec::new();
        for d in &parsed {
            match engram::ingest::parse(&d.to_string()) {
                Ok(doc) => {
                    out.push(None);
                    docs.push(doc);
                }
                Err(e) => out.push(Some(failed(&e.into()))),
            }
        }
        let reports = engine(py, &db, |db| {
            for d in &docs {
                db.ensure_workspace(&d.workspace)?;
            }
            Ok(db.ingest_docs(docs, &engram::ingest::IngestOptions::default())?)
        })?;
        let mut reports = reports.into_iter();
        let out: Vec<serde_json::Value> = out
            .into_iter()
            .map(|slot| {
                slot.unwrap_or_else(|| match reports.next() {
                    Some(Ok(report)) => serde_json::to_value(&report).unwrap_or(serde_json::Value::Null),
                    Some(Err(e)) => failed(&e),
                    None => serde_json::Value::Null,
                })
            })
            .collect();
        json(&out)
    }

    /// Recall as the server's `ENGRAM.RECALL` gives it, as JSON.
    #[pyo3(signature = (workspace, text, budget=None, seeds=Vec::new(), hops=None, as_of=None, vector=None, properties=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn recall(
        &self,
        py: Python<'_>,
        workspace: &str,
        text: &str,
        budget: Option<usize>,
        seeds: Vec<String>,
        hops: Option<u32>,
        as_of: Option<String>,
        vector: Option<Vec<f32>>,
        properties: Vec<(String, String)>,
    ) -> PyResult<String> {
        let db = self.db()?;
        let as_of = as_of.map(|t| engram::Timestamp::parse(&t).map_err(|e| caller(format!("as_of: {e}")))).transpose()?;
        let r = engine(py, &db, |db| {
            let snap = db.snapshot();
            let view = snap.workspace(workspace)?;
            let mut q = engram::RecallQuery::new(text);
            if let Some(b) = budget {
                q.budget = b;
            }
            if let Some(h) = hops {
                q.hops = h;
            }
            for s in &seeds {
                q.seeds.push(view.entity_by_id_or_name(s)?);
            }
            q.visibility.as_of = as_of;
            for (k, v) in properties {
                q.properties.push((k, engram::Value::Str(v.into())));
            }
            // The caller's vector, else the database's embedder's of the question and what it asks.
            q.vector = match vector {
                Some(v) => Some(v),
                None => db.embed_question(text, &view.question_to_embed(&q)?)?,
            };
            Ok(view.recall(&q)?)
        })?;
        json(&r)
    }

    /// An entity's context, or with `text` its neighbourhood ranked by it, as the server's
    /// `ENGRAM.CONTEXT` gives it, as JSON.
    #[pyo3(signature = (workspace, entity, text=None, depth=None, budget=None, max_facts=None, predicates=Vec::new(), types=Vec::new(), as_of=None))]
    #[allow(clippy::too_many_arguments)]
    fn context(
        &self,
        py: Python<'_>,
        workspace: &str,
        entity: &str,
        text: Option<String>,
        depth: Option<u32>,
        budget: Option<usize>,
        max_facts: Option<usize>,
        predicates: Vec<String>,
        types: Vec<String>,
        as_of: Option<String>,
    ) -> PyResult<String> {
        let db = self.db()?;
        let mut q = engram::ContextQuery { predicates, types, ..engram::ContextQuery::default() };
        q.visibility.as_of = as_of.map(|t| engram::Timestamp::parse(&t).map_err(|e| caller(format!("as_of: {e}")))).transpose()?;
        q.depth = depth.unwrap_or(q.depth);
        q.budget = budget.unwrap_or(q.budget);
        q.max_facts = max_facts.unwrap_or(q.max_facts);
        let r = engine(py, &db, |db| {
            let vector = text.as_deref().map(|t| db.embed_query(t)).transpose()?.flatten();
            let snap = db.snapshot();
            let view = snap.workspace(workspace)?;
            let root = view.entity_by_id_or_name(entity)?;
            Ok(match &text {
                Some(t) => view.neighborhood(root, t, vector.as_deref(), &q)?,
                None => view.entity_context(root, &q)?,
            })
        })?;
        json(&r)
    }

    /// The edges of an entity, as the server's `ENGRAM.NEIGHBORS` gives them, as JSON.
    #[pyo3(signature = (workspace, entity, limit=None, direction="both"))]
    fn neighbors(&self, py: Python<'_>, workspace: &str, entity: &str, limit: Option<usize>, direction: &str) -> PyResult<String> {
        let db = self.db()?;
        let direction = match direction {
            "out" => engram::Direction::Out,
            "in" => engram::Direction::In,
            "both" => engram::Direction::Both,
            other => return Err(caller(format!("direction: `{other}` is not out, in or both"))),
        };
        let page = engine(py, &db, |db| {
            let snap = db.snapshot();
            let view = snap.workspace(workspace)?;
            let mut q = engram::NeighborQuery { limit, ..Default::default() };
            q.filter.direction = direction;
            let e = view.entity_by_id_or_name(entity)?;
            let page = view.neighbors(e, &q)?;
            let items: Vec<serde_json::Value> = page
                .items
                .iter()
                .map(|n| {
                    serde_json::json!({
                        "claim": n.claim.0,
                        "direction": if n.direction == engram::Direction::Out { "out" } else { "in" },
                        "predicate": n.predicate.to_string(),
                        "neighbor": view.entity_ext_id(n.neighbor).unwrap_or_default(),
                        "neighbor_id": n.neighbor.0,
                    })
                })
                .collect();
            Ok(serde_json::json!({"items": items, "next_cursor": page.next_cursor}))
        })?;
        json(&page)
    }

    /// `delete`, `restore` or `forget` of an `entity`, a `claim` or (forget) a `conversation`.
    fn lifecycle(&self, py: Python<'_>, workspace: &str, verb: &str, kind: &str, id: &str) -> PyResult<()> {
        use engram::{ClaimRef, EntityRef, ForgetTarget, Op, WriteBatch};
        let db = self.db()?;
        let claim = || id.parse::<u32>().map_or_else(|_| ClaimRef::Ext(id.to_owned()), |n| ClaimRef::Id(engram::ClaimId(n)));
        let entity = || EntityRef::Ext(id.to_owned());
        let op = match (verb, kind) {
            ("delete", "entity") => Op::DeleteEntity { entity: entity() },
            ("delete", "claim") => Op::DeleteClaim { claim: claim() },
            ("restore", "entity") => Op::RestoreEntity { entity: entity() },
            ("restore", "claim") => Op::RestoreClaim { claim: claim() },
            ("forget", "entity") => Op::Forget(ForgetTarget::Entity(entity())),
            ("forget", "conversation") => Op::Forget(ForgetTarget::Conversation(id.to_owned())),
            _ => return Err(caller(format!("{verb}: expected entity= or {}", if verb == "forget" { "conversation=" } else { "claim=" }))),
        };
        let mut batch = WriteBatch::new(workspace);
        batch.push(op);
        engine(py, &db, |db| Ok(db.write(&batch).map(|_| ())?))
    }

    /// What the workspace holds, counted, as the server's `ENGRAM.STATS` gives it, as JSON.
    fn stats(&self, py: Python<'_>, workspace: &str) -> PyResult<String> {
        let db = self.db()?;
        let v = engine(py, &db, |db| {
            let snap = db.snapshot();
            let c = snap.workspace(workspace)?.catalog();
            Ok(serde_json::json!({
                "entities": c.entities,
                "claims": c.claims,
                "types": c.types.iter().map(|t| (t.name.to_string(), t.entities)).collect::<std::collections::BTreeMap<_, _>>(),
                "predicates": c.predicates.iter().map(|p| (p.name.to_string(), p.claims)).collect::<std::collections::BTreeMap<_, _>>(),
            }))
        })?;
        json(&v)
    }

    /// Benchmarking aid: runs `text` once per parameter set (JSON) through the engine's own
    /// `Database::query` (plan cache included; with `bound`, `Database::query_bound` with the
    /// same values bound ahead, as `run` calls it) and returns each call's microseconds, timed
    /// in Rust, so a caller can set what Python adds beside what the engine takes.
    #[pyo3(signature = (workspace, text, params, bound=false))]
    fn _time_query(&self, py: Python<'_>, workspace: &str, text: &str, params: Vec<String>, bound: bool) -> PyResult<Vec<f64>> {
        let db = self.db()?;
        let maps = params.iter().map(|p| params_of(Some(p))).collect::<PyResult<Vec<_>>>()?;
        let mut bindings = Vec::with_capacity(maps.len());
        for map in &maps {
            let mut b = Bindings::new();
            for (k, v) in map {
                b.set(k, v).map_err(caller)?;
            }
            bindings.push(b);
        }
        engine(py, &db, |db| {
            let mut out = Vec::with_capacity(maps.len());
            for (map, b) in maps.iter().zip(&bindings) {
                let t = std::time::Instant::now();
                // The result is released inside the timing, as `db.query`'s is on the Python side.
                if bound {
                    drop(std::hint::black_box(db.query_bound(workspace, text, b)?));
                } else {
                    drop(std::hint::black_box(db.query(workspace, text, map)?));
                }
                out.push(t.elapsed().as_secs_f64() * 1e6);
            }
            Ok(out)
        })
    }

    /// Each text's vector by the database's embedder.
    fn embed(&self, py: Python<'_>, texts: Vec<String>) -> PyResult<Vec<Vec<f64>>> {
        let db = self.db()?;
        engine(py, &db, |db| {
            let Some(embedder) = db.embedder() else {
                return Err(Fail::Caller("the database has no embedder (open it with embedder=)".to_owned()));
            };
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vectors = embedder.embed(&refs).map_err(|e| Fail::Engine(e.into()))?;
            Ok(vectors.iter().map(|v| v.iter().map(|x| engram::shortest_f64(*x)).collect()).collect())
        })
    }

    /// The workspaces' names.
    fn workspaces(&self) -> PyResult<Vec<String>> {
        Ok(self.db()?.workspaces().iter().map(|w| w.name.to_string()).collect())
    }

    /// Closes the database: later calls fail; the folder's lock is released once no call runs.
    fn close(&mut self) {
        self.db = None;
    }
}

/// Opens (or creates) the database in the folder `path`.
#[pyfunction]
#[pyo3(signature = (path, read_only=false))]
fn open(py: Python<'_>, path: PathBuf, read_only: bool) -> PyResult<PyDatabase> {
    let db = py.detach(|| if read_only { Database::open_read_only(&path) } else { Database::open(&path) }).map_err(|e| py_err(py, &e))?;
    Ok(PyDatabase::new(db))
}

/// A database in memory only.
#[pyfunction]
fn memory() -> PyDatabase {
    PyDatabase::new(Database::in_memory())
}

/// The module `engram._engram`.
#[pymodule]
fn _engram(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyDatabase>()?;
    m.add_class::<result::QueryResultObject>()?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(memory, m)?)?;
    m.add("EngramError", py.get_type::<EngramError>())?;
    m.add("CallerError", py.get_type::<CallerError>())?;
    m.add("ConflictError", py.get_type::<ConflictError>())?;
    m.add("LimitError", py.get_type::<LimitError>())?;
    m.add("OperatorError", py.get_type::<OperatorError>())?;
    m.add("CorruptionError", py.get_type::<CorruptionError>())?;
    m.add("BugError", py.get_type::<BugError>())?;
    m.add("DEFAULT_WORKSPACE", engram::DEFAULT_WORKSPACE)?;
    Ok(())
}
