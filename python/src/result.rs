//! `engram.Result`, a query's result: made in Rust, so a query costs no Python frame for it, and
//! its `columns` list and `stats` dict are made only when read (a caller mostly reads the rows,
//! and a read query's counters are all zero).

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

/// The write counters' names, in the engine's order (`QueryStats::counters`).
const STATS: [&str; 12] = [
    "nodes_created",
    "nodes_deleted",
    "relationships_created",
    "relationships_deleted",
    "properties_set",
    "properties_removed",
    "labels_added",
    "labels_removed",
    "indexes_added",
    "indexes_removed",
    "constraints_added",
    "constraints_removed",
];

/// A query's result: `columns`, `rows` (tuples of values), `stats` (what it wrote, counted) and
/// `plan` (the plan's lines, for EXPLAIN and PROFILE; else `None`).
#[pyclass(module = "engram", name = "Result")]
pub struct QueryResultObject {
    columns: Columns,
    #[pyo3(get, set)]
    rows: Py<PyAny>,
    /// `None` (all zero), the counters in `STATS` order, or the dict once made.
    stats: Py<PyAny>,
    #[pyo3(get, set)]
    plan: Py<PyAny>,
}

/// The column names: the plan's own until `columns` is first read, then that Python list (a
/// caller may change it, so each result has its own).
enum Columns {
    Plan(Arc<[String]>),
    Python(Py<PyAny>),
}

impl QueryResultObject {
    /// A result from the engine's: `counters` `None` when all are zero.
    pub fn from_parts(columns: Arc<[String]>, rows: Py<PyAny>, counters: Py<PyAny>, plan: Py<PyAny>) -> QueryResultObject {
        QueryResultObject { columns: Columns::Plan(columns), rows, stats: counters, plan }
    }

    fn parts<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let stats = self.stats(py)?;
        PyTuple::new(py, [self.columns(py)?, self.rows.bind(py).clone(), stats.into_any(), self.plan.bind(py).clone()])
    }
}

#[pymethods]
impl QueryResultObject {
    #[new]
    #[pyo3(signature = (columns, rows, stats=None, plan=None))]
    fn new(columns: Py<PyAny>, rows: Py<PyAny>, stats: Option<Py<PyAny>>, plan: Option<Py<PyAny>>, py: Python<'_>) -> Self {
        QueryResultObject {
            columns: Columns::Python(columns),
            rows,
            stats: stats.unwrap_or_else(|| py.None()),
            plan: plan.unwrap_or_else(|| py.None()),
        }
    }

    #[getter]
    fn columns<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let list = match &self.columns {
            Columns::Python(held) => return Ok(held.bind(py).clone()),
            Columns::Plan(names) => PyList::new(py, names.iter())?.into_any(),
        };
        self.columns = Columns::Python(list.clone().unbind());
        Ok(list)
    }

    #[setter(columns)]
    fn set_columns(&mut self, columns: Py<PyAny>) {
        self.columns = Columns::Python(columns);
    }

    /// What the query wrote: a dict of the eight counters.
    #[getter]
    fn stats<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let held = self.stats.bind(py);
        if let Ok(d) = held.cast::<PyDict>() {
            return Ok(d.clone());
        }
        let d = PyDict::new(py);
        if held.is_none() {
            for k in STATS {
                d.set_item(k, 0)?;
            }
        } else {
            for (k, n) in STATS.iter().zip(held.try_iter()?) {
                d.set_item(k, n?)?;
            }
        }
        self.stats = d.clone().into_any().unbind();
        Ok(d)
    }

    #[setter(stats)]
    fn set_stats(&mut self, stats: Py<PyAny>) {
        self.stats = stats;
    }

    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let Ok(other) = other.cast::<QueryResultObject>() else { return Ok(py.NotImplemented()) };
        let equal = slf.is(other) || {
            let mine = slf.borrow_mut().parts(py)?;
            let theirs = other.borrow_mut().parts(py)?;
            mine.eq(theirs)?
        };
        Ok(equal.into_pyobject(py)?.to_owned().into_any().unbind())
    }

    fn __repr__(&mut self, py: Python<'_>) -> PyResult<String> {
        let stats = self.stats(py)?;
        Ok(format!(
            "Result(columns={}, rows={}, stats={}, plan={})",
            self.columns(py)?.repr()?,
            self.rows.bind(py).repr()?,
            stats.repr()?,
            self.plan.bind(py).repr()?
        ))
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.rows.bind(py).try_iter()?.into_any())
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.rows.bind(py).len()
    }
}
