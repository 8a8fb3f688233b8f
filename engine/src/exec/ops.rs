//! Runs operators over batches of rows. Each operator takes the whole batch and gives the next
//! (materialized: simple, and the batches are bounded by `rows_max`); expands over many rows run
//! on rayon and keep the input order, so a parallel run returns exactly the sequential rows.
//!
//! Every loop ticks the scope's read context (deadline, cancel token) at least every
//! `CHECK_EVERY` units of work.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use engram_query::{Detail, ErrorType, QueryError};
use rayon::prelude::*;

use crate::ids::{ClaimId, EntityId};
use crate::index::graph::Direction;
use crate::read::scope::{ReadContext, CHECK_EVERY};

use super::eval::{truth, type_error, Env, Fallible, Matcher};
use super::graph::Graph;
use super::procedures;
use super::value::{Key, PathVal, Val};
use engram_query::plan::{AggFn, Aggregate, CExpr, GroupHop, Hop, Labels, NodeTest, Op, OpStats, PathSpec, RelLookup, SortKey};

mod load_csv;
mod ordered;
mod seek;
mod shortest;

pub(crate) type Row = Vec<Val>;

/// `CALL { … }` over `rows`: `run` runs a branch on one row. Each row is joined to every row its
/// branches give (`distinct`: each repeated one once), the returned `columns` copied in (what the
/// branch did to other slots, an aggregation's fresh rows, does not leak out); a row they give
/// none is dropped. A unit subquery (no columns: it writes and returns nothing) passes each row
/// on once, whatever its branch gave. Rows run in order, so a write is seen by the next row's run.
pub(crate) fn subquery_rows<E>(
    rows: Vec<Row>,
    branches: &[Vec<Op>],
    distinct: bool,
    columns: &[usize],
    mut run: impl FnMut(&[Op], Row) -> Result<Vec<Row>, E>,
) -> Result<Vec<Row>, E> {
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        if columns.is_empty() {
            for branch in branches {
                run(branch, row.clone())?;
            }
            out.push(row);
            continue;
        }
        let mut seen = HashSet::new();
        for branch in branches {
            for r in run(branch, row.clone())? {
                let values: Vec<Val> = columns.iter().map(|s| r[*s].clone()).collect();
                if distinct && !seen.insert(Key(values.clone())) {
                    continue;
                }
                let mut joined = row.clone();
                for (s, v) in columns.iter().zip(values) {
                    joined[*s] = v;
                }
                out.push(joined);
            }
        }
    }
    Ok(out)
}

/// `OPTIONAL`'s rule over a run per row: each row's results, or the row itself with `slots` null
/// when the run gives none.
pub(crate) fn optional_rows<E>(rows: Vec<Row>, slots: &[usize], mut run: impl FnMut(Row) -> Result<Vec<Row>, E>) -> Result<Vec<Row>, E> {
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let matched = run(row.clone())?;
        if matched.is_empty() {
            let mut r = row;
            for s in slots {
                r[*s] = Val::Null;
            }
            out.push(r);
        } else {
            out.extend(matched);
        }
    }
    Ok(out)
}

/// Rows at or above which an expand runs in parallel.
const PARALLEL_ROWS: usize = 256;
/// One row's grouping key and aggregate arguments.
type Evaluated = (Vec<Val>, Vec<Val>);

/// Rows at or above which an aggregation evaluates its keys and arguments in parallel.
const PARALLEL_AGGREGATE_ROWS: usize = 4096;

/// What the operators read: the graph, the parameters, the read context and its limits.
pub(crate) struct Runner<'e, 'v, 'a> {
    pub graph: &'e Graph<'v, 'a>,
    pub params: &'e super::value::Bound<'e>,
    pub cx: &'e ReadContext,
    /// The width of the part's rows (every slot it uses).
    pub width: usize,
    /// Embeds a query text with the database's embedder, when the query may reach it.
    pub embed: Option<&'e procedures::Embed<'e>>,
    /// Reads the access history, when the query may reach it (`engram.audit.history`).
    pub audit: Option<&'e procedures::AuditFn<'e>>,
    /// Reads the import folder's files, when the query may reach them (`LOAD CSV`).
    pub files: Option<&'e procedures::FilesFn<'e>>,
    /// Rows, microseconds and candidates read per top-level operator, when profiling.
    pub profile: Option<std::sync::Mutex<Profile>>,
}

/// What PROFILE records while a part runs.
#[derive(Debug, Default)]
pub struct Profile {
    /// Per top-level operator run so far.
    pub ops: Vec<OpStats>,
    /// The candidates read since the last top-level operator ended (those of the operators it
    /// ran inside, too).
    reading: Vec<(String, u64)>,
}

/// What a seek's or a scan's candidates came from, as PROFILE names it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Read<'k> {
    /// An equality of a property, from its index.
    Equal(&'k str),
    /// A list of a property's values (`IN`).
    In(&'k str),
    /// A range of a property's values.
    Range(&'k str),
    /// A label's nodes.
    Label(&'k str),
    /// Every node.
    All,
}

impl std::fmt::Display for Read<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Read::Equal(k) => write!(f, "{k}"),
            Read::In(k) => write!(f, "{k} IN"),
            Read::Range(k) => write!(f, "{k} range"),
            Read::Label(l) => write!(f, ":{l}"),
            Read::All => write!(f, "all"),
        }
    }
}

/// The node whose internal id (`id(n)`) equals `v` under Cypher's `=`: an integer, or a float
/// with an integer's value, in the id range.
fn identity(v: &Val) -> Option<EntityId> {
    let i = match *v {
        Val::Int(i) => i,
        #[allow(clippy::cast_possible_truncation)] // Reason: checked below to be that integer exactly.
        Val::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => f as i64,
        _ => return None,
    };
    let n = u32::try_from(i).ok()?;
    (Val::Int(i64::from(n)).equals(v) == Some(true)).then_some(EntityId(n))
}

/// Keeps the rows `keep` says yes to, in order and in place (it may also change them); the
/// first error stops it.
fn retain_rows(mut rows: Vec<Row>, mut keep: impl FnMut(&mut Row) -> Fallible<bool>) -> Fallible<Vec<Row>> {
    let mut failed = None;
    rows.retain_mut(|row| {
        failed.is_none()
            && keep(row).unwrap_or_else(|e| {
                failed = Some(e);
                false
            })
    });
    failed.map_or(Ok(rows), Err)
}

fn interrupted(e: crate::error::Interrupted) -> QueryError {
    QueryError::runtime(ErrorType::LimitError, Detail::Deadline, format!("the query stopped: {e}"))
}

fn limit(name: &str, limit: usize, what: &str) -> QueryError {
    QueryError::runtime(ErrorType::LimitError, Detail::Limit, format!("{what} exceeded the limit {name} = {limit}"))
}

impl Matcher for Runner<'_, '_, '_> {
    fn run(&self, ops: &[Op], row: Vec<Val>) -> Fallible<Vec<Vec<Val>>> {
        self.run_ops(ops, vec![row], false)
    }

    /// Stops at the first match when the pattern's last hop is a single relationship (only path
    /// bindings, filters and projections after it, run on each match in turn): `WHERE (n)-->()`
    /// on a node with a million relationships tries one, not all.
    fn any(&self, ops: &[Op], row: Vec<Val>) -> Fallible<bool> {
        let last = ops.iter().rposition(|o| !matches!(o, Op::BindPath(_) | Op::Filter(_) | Op::Project(_)));
        let hop = match last.map(|i| &ops[i]) {
            Some(Op::Expand(hop)) if hop.length.is_none() && hop.shortest.is_none() && !hop.reach => hop,
            _ => return Ok(!self.run_ops(ops, vec![row], false)?.is_empty()),
        };
        let at = last.unwrap_or_default();
        let Some(expander) = self.graph.expander(engine_dir(hop.direction), &hop.types, hop.type_expr.as_ref()) else { return Ok(false) };
        let (head, tail) = (&ops[..at], &ops[at + 1..]);
        for r in self.run_ops(head, vec![row], false)? {
            let Val::Node(from) = r[hop.from] else { continue };
            let used = Self::used_rels(hop, &r);
            let mut found = false;
            self.expand_each(hop, &expander, (from, &used), r, &mut |x| {
                found = !self.run_ops(tail, vec![x], false)?.is_empty();
                Ok(!found)
            })?;
            if found {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

impl<'v, 'a> Runner<'_, 'v, 'a> {
    fn env(&self) -> Env<'_, 'v, 'a> {
        Env { graph: self.graph, params: self.params, matcher: self }
    }

    fn check(&self) -> Fallible<()> {
        self.cx.check().map_err(|e| Box::new(interrupted(e)))
    }

    fn rows_max(&self) -> usize {
        self.cx.limits.rows_max
    }

    /// Runs `ops` over `rows`; `top` records the profile of top-level operators.
    pub fn run_ops(&self, ops: &[Op], mut rows: Vec<Row>, top: bool) -> Fallible<Vec<Row>> {
        let mut at = 0;
        while let Some(op) = ops.get(at) {
            let started = self.profile.as_ref().filter(|_| top).map(|_| Instant::now());
            // A filter right after a label or all-node scan is applied to each candidate before
            // its row is copied out, so a selective WHERE does not build and drop a row per node.
            // Not under PROFILE, which counts each operator's rows.
            match (op, ops.get(at + 1), &self.profile) {
                (Op::ScanNodes { slot, test }, Some(Op::Filter(e)), None) => {
                    rows = self.scan(*slot, test, Some(e), rows)?;
                    at += 2;
                }
                // `MATCH (n[:L]) RETURN count(*)` (or `count(n)`): the scan's nodes counted, no
                // row built for each. Not under PROFILE either.
                (Op::ScanNodes { slot, test }, Some(Op::Aggregate { keys, aggregates }), None)
                    if keys.is_empty()
                        && test.props.is_empty()
                        && test.label_expr.is_none()
                        && test.labels.len() <= 1
                        && counts_each(aggregates, *slot) =>
                {
                    let nodes = match test.labels.first() {
                        Some(l) => self.graph.count_nodes_with_label(l),
                        None => self.graph.count_nodes(),
                    };
                    let n = if rows.is_empty() { 0 } else { nodes.saturating_mul(rows.len() as u64) };
                    rows = self.count_row(rows, aggregates[0].slot, n);
                    at += 2;
                }
                // ORDER BY … [SKIP s] LIMIT n keeps only the first s + n rows in order: a
                // selection, then a sort of those, instead of sorting every row.
                (Op::Sort(keys), Some(Op::Skip(_) | Op::Limit(_)), None) => match self.top_bounds(&ops[at + 1..]) {
                    Some((skip, take, used)) => {
                        rows = self.sort(keys, rows, Some(skip.saturating_add(take)))?;
                        rows = rows.into_iter().skip(skip).take(take).collect();
                        at += 1 + used;
                    }
                    None => {
                        rows = self.op(op, rows)?;
                        at += 1;
                    }
                },
                // ORDER BY … LIMIT over a range seek of the same property: read in the index's
                // order until the limit is met (`ordered`). Not under PROFILE either.
                (Op::SeekNodesByRange { order: Some(order), .. }, _, None) => match self.ordered_upto(ops, at) {
                    Some((sort_at, need)) => {
                        rows = self.read_in_order(op, &ops[at + 1..sort_at], (*order, need), rows)?;
                        at = sort_at;
                    }
                    None => {
                        rows = self.op(op, rows)?;
                        at += 1;
                    }
                },
                _ => {
                    rows = self.op(op, rows)?;
                    at += 1;
                }
            }
            if rows.len() > self.rows_max() {
                return Err(Box::new(limit("rows_max", self.rows_max(), "an intermediate result")));
            }
            self.check()?;
            if let (Some(started), Some(p)) = (started, &self.profile) {
                let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
                if let Ok(mut p) = p.lock() {
                    let read = std::mem::take(&mut p.reading);
                    p.ops.push(OpStats { rows: rows.len() as u64, micros, read });
                }
            }
        }
        Ok(rows)
    }

    /// Notes for PROFILE that `n` candidates were read by `by` (nothing when not profiling).
    pub(crate) fn note_read(&self, by: Read<'_>, n: usize) {
        if let Some(Ok(mut p)) = self.profile.as_ref().map(std::sync::Mutex::lock) {
            OpStats::add_read(&mut p.reading, &by.to_string(), n as u64);
        }
    }

    /// `ScanNodes`: each input row with each node carrying `test`'s first label (every node
    /// when it has none) that passes `test` and `filter`.
    fn scan(&self, slot: usize, test: &NodeTest, filter: Option<&CExpr>, rows: Vec<Row>) -> Fallible<Vec<Row>> {
        let mut scanned: Option<Vec<EntityId>> = None;
        let mut out = Vec::new();
        for row in rows {
            if let Some((key, found)) = self.indexed_nodes(test, &row) {
                self.note_read(Read::Equal(key), found.len());
                // Every test runs on each, the labels included.
                self.bind_each(&found, slot, (test, 0), filter, &row, &mut out)?;
                continue;
            }
            let candidates = scanned.get_or_insert_with(|| self.scanned(test));
            self.note_read(test.labels.first().map_or(Read::All, |l| Read::Label(l)), candidates.len());
            // The label scanned for needs no test on its nodes.
            self.bind_each(candidates, slot, (test, 1), filter, &row, &mut out)?;
        }
        Ok(out)
    }

    /// One row with the count `n` in `slot` alone (the input's first row's storage, when there
    /// is one): an aggregation without keys, counted without its rows.
    fn count_row(&self, mut rows: Vec<Row>, slot: usize, n: u64) -> Vec<Row> {
        rows.truncate(1);
        match rows.first_mut() {
            Some(row) => row.iter_mut().for_each(|v| *v = Val::Null),
            None => rows.push(super::value::nulls(self.width)),
        }
        rows[0][slot] = Val::Int(i64::try_from(n).unwrap_or(i64::MAX));
        rows
    }

    /// The nodes carrying `test`'s first label; without one, those carrying one of the labels a
    /// label expression `:A|B|…` names (in id order, as every scan); else every node.
    fn scanned(&self, test: &NodeTest) -> Vec<EntityId> {
        match (test.labels.first(), &test.label_expr) {
            (Some(l), _) => self.graph.nodes_with_label(l),
            (None, Some(Labels::Or(items))) if items.iter().all(|i| matches!(i, Labels::Name(_))) => {
                let mut ids: Vec<EntityId> = items
                    .iter()
                    .filter_map(|i| if let Labels::Name(l) = i { Some(l) } else { None })
                    .flat_map(|l| self.graph.nodes_with_label(l))
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                ids
            }
            (None, _) => self.graph.nodes(),
        }
    }

    /// `bind_each` over the nodes an index `found` (by `by`), or, where it could not answer,
    /// over those a scan of `test`'s first label (or of every node) gives.
    fn bind_found(
        &self,
        (found, by): (Option<Vec<EntityId>>, Read<'_>),
        slot: usize,
        test: &NodeTest,
        row: &Row,
        out: &mut Vec<Row>,
    ) -> Fallible<()> {
        match found {
            Some(ids) => {
                self.note_read(by, ids.len());
                self.bind_each(&ids, slot, (test, 0), None, row, out)
            }
            None => {
                let scanned = self.scanned(test);
                self.note_read(test.labels.first().map_or(Read::All, |l| Read::Label(l)), scanned.len());
                self.bind_each(&scanned, slot, (test, 1), None, row, out)
            }
        }
    }

    /// One row per node of `candidates` passing `test` (its labels from the given one on) and
    /// `filter`: `row` with the node in `slot`, into `out` (checked against `rows_max`, and the
    /// deadline every `CHECK_EVERY` candidates). A row is copied only for a node that passes.
    fn bind_each(
        &self,
        candidates: &[EntityId],
        slot: usize,
        (test, labels_from): (&NodeTest, usize),
        filter: Option<&CExpr>,
        row: &Row,
        out: &mut Vec<Row>,
    ) -> Fallible<()> {
        let mut candidate = row.clone();
        let mut wanted = Vec::with_capacity(test.props.len());
        for (i, &n) in candidates.iter().enumerate() {
            if i % CHECK_EVERY as usize == 0 {
                self.check()?;
            }
            if !self.node_passes_in(n, (test, labels_from), row, Some(&mut wanted))? {
                continue;
            }
            candidate[slot] = Val::Node(n);
            if let Some(f) = filter {
                if !self.keep(f, &candidate)? {
                    continue;
                }
            }
            out.push(candidate.clone());
            if out.len() > self.rows_max() {
                return Err(Box::new(limit("rows_max", self.rows_max(), "an intermediate result")));
            }
        }
        Ok(())
    }

    pub(super) fn eval(&self, e: &CExpr, row: &[Val]) -> Fallible<Val> {
        self.env().eval(e, row, &mut Vec::new())
    }

    /// `eval`, borrowing a parameter's or a slot's value instead of cloning it (a seek's key is
    /// usually one of them).
    fn eval_ref<'r>(&'r self, e: &CExpr, row: &'r [Val]) -> Fallible<std::borrow::Cow<'r, Val>> {
        use std::borrow::Cow;
        match e {
            CExpr::Param(p) => match self.params.get(p) {
                Some(v) => Ok(Cow::Borrowed(v)),
                None => self.eval(e, row).map(Cow::Owned),
            },
            CExpr::Slot(s) => Ok(row.get(*s).map_or(Cow::Owned(Val::Null), Cow::Borrowed)),
            _ => self.eval(e, row).map(Cow::Owned),
        }
    }

    fn keep(&self, e: &CExpr, row: &[Val]) -> Fallible<bool> {
        Ok(truth(&self.eval(e, row)?)? == Some(true))
    }

    #[allow(clippy::too_many_lines)] // Reason: one arm per operator.
    /// The error boxed: the result moves through every operator of every query, and an error is
    /// rare (a `Result` as large as `QueryError` was a few percent of a short query).
    fn op(&self, op: &Op, rows: Vec<Row>) -> Fallible<Vec<Row>> {
        Ok(match op {
            Op::Create(_) | Op::Merge(_) | Op::Set(_) | Op::Delete { .. } | Op::Foreach { .. } => {
                return Err(Box::new(QueryError::runtime(
                    ErrorType::SemanticError,
                    Detail::Unsupported,
                    "a write outside a write transaction",
                )));
            }
            Op::ScanNodes { slot, test } => self.scan(*slot, test, None, rows)?,
            Op::SeekNode { slot, id, test } if !self.graph.view.has_id_properties() => {
                // The common case: the external id alone answers, one node at most per row, so
                // the rows are kept or dropped in place.
                retain_rows(rows, |row| {
                    // A string parameter is looked up as the caller gave it (no value built).
                    let text = if let CExpr::Param(p) = id { self.params.text(p) } else { None };
                    let found = match text {
                        Some(text) => self.graph.node_with_ext_text(text),
                        None => self.graph.node_with_ext_id(&*self.eval_ref(id, row)?),
                    };
                    match found {
                        Some(n) if self.node_passes(n, test, row)? => {
                            row[*slot] = Val::Node(n);
                            Ok(true)
                        }
                        _ => Ok(false),
                    }
                })?
            }
            Op::SeekNode { slot, id, test } => {
                let mut out = Vec::new();
                for mut row in rows {
                    let id = self.eval(id, &row)?;
                    // The row itself goes to the last match (one clone per match before it).
                    let mut pending = None;
                    for n in self.graph.nodes_with_id(&id) {
                        if self.node_passes(n, test, &row)? {
                            if let Some(p) = pending.replace(n) {
                                row[*slot] = Val::Node(p);
                                out.push(row.clone());
                            }
                        }
                    }
                    if let Some(p) = pending {
                        row[*slot] = Val::Node(p);
                        out.push(row);
                    }
                }
                out
            }
            Op::SeekNodeByIdentity { slot, id, many: false, test } => retain_rows(rows, |row| {
                let id = self.eval(id, row)?;
                match identity(&id).filter(|&n| self.graph.node_visible(n)) {
                    Some(n) if self.node_passes(n, test, row)? => {
                        row[*slot] = Val::Node(n);
                        Ok(true)
                    }
                    _ => Ok(false),
                }
            })?,
            Op::SeekNodeByIdentity { slot, id, many: true, test } => {
                let mut out = Vec::new();
                for row in rows {
                    let ids = match self.eval(id, &row)? {
                        Val::Null => continue,
                        Val::List(items) => {
                            let mut ids: Vec<EntityId> =
                                items.iter().filter_map(identity).filter(|&n| self.graph.node_visible(n)).collect();
                            ids.sort_unstable();
                            ids.dedup();
                            ids
                        }
                        // Not a list: every node, so that the filter the planner kept fails on
                        // the rows that reach it, as it would have without the seek.
                        _ => self.graph.nodes(),
                    };
                    self.bind_each(&ids, *slot, (test, 0), None, &row, &mut out)?;
                }
                out
            }
            Op::SeekNodesByProperty { slot, key, values, test } => {
                let mut out = Vec::new();
                for row in rows {
                    self.seek_by_values((*slot, key, values), test, &row, &mut out)?;
                }
                out
            }
            // Read in no order: the range, the lookup it stands in for or an equality of its
            // test, by their counts (`seek`).
            Op::SeekNodesByRange { .. } => {
                let mut out = Vec::new();
                for row in rows {
                    self.seek_range(op, row, &mut out)?;
                }
                out
            }
            Op::CheckNode { slot, test } => retain_rows(rows, |row| match row[*slot] {
                Val::Node(n) => self.node_passes(n, test, row),
                _ => Ok(false),
            })?,
            Op::Expand(hop) => self.expand(hop, rows)?,
            Op::SeekRels { slot, test, hop, lookup } => self.seek_rels(*slot, test, (hop, lookup.as_ref()), rows)?,
            Op::CountExpand { hop, slot } => {
                let n = self.count_expand(hop, &rows)?;
                self.count_row(rows, *slot, n as u64)
            }
            Op::BindPath(spec) => {
                let mut out = Vec::with_capacity(rows.len());
                for mut row in rows {
                    let path = build_path(self.graph, spec, &row);
                    row[spec.slot] = path;
                    out.push(row);
                }
                out
            }
            Op::Filter(e) => retain_rows(rows, |row| self.keep(e, row))?,
            Op::Optional { ops, slots } => optional_rows(rows, slots, |row| self.run_ops(ops, vec![row], false))?,
            Op::Subquery { branches, distinct, columns } => {
                subquery_rows(rows, branches, *distinct, columns, |ops, row| self.run_ops(ops, vec![row], false))?
            }
            Op::Project(items) => {
                let mut rows = rows;
                for row in &mut rows {
                    if let [(slot, e)] = items.as_slice() {
                        // One item: nothing it reads can change under it.
                        row[*slot] = self.eval(e, row)?;
                        continue;
                    }
                    let mut values = Vec::with_capacity(items.len());
                    for (_, e) in items {
                        values.push(self.eval(e, row)?);
                    }
                    for ((slot, _), v) in items.iter().zip(values) {
                        row[*slot] = v;
                    }
                }
                rows
            }
            Op::Aggregate { keys, aggregates } => self.aggregate(keys, aggregates, &rows)?,
            Op::Distinct(slots) => {
                let mut seen = HashSet::new();
                rows.into_iter().filter(|r| seen.insert(Key(slots.iter().map(|s| r[*s].clone()).collect()))).collect()
            }
            Op::Sort(keys) => self.sort(keys, rows, None)?,
            Op::Skip(e) => {
                let n = self.count_arg(e, "SKIP")?;
                rows.into_iter().skip(n).collect()
            }
            Op::Limit(e) => {
                let n = self.count_arg(e, "LIMIT")?;
                rows.into_iter().take(n).collect()
            }
            Op::Unwind { expr, slot } => {
                let mut out = Vec::new();
                for row in rows {
                    match self.eval(expr, &row)? {
                        Val::Null => {}
                        Val::List(items) => {
                            for item in items.iter() {
                                let mut r = row.clone();
                                r[*slot] = item.clone();
                                out.push(r);
                            }
                        }
                        other => {
                            let mut r = row;
                            r[*slot] = other;
                            out.push(r);
                        }
                    }
                }
                out
            }
            // A read's subquery needs no transactions of its own.
            Op::InTransactions { sub, status: None, .. } => self.op(sub, rows)?,
            // With `REPORT STATUS`, each batch's rows carry its status (every batch commits).
            Op::InTransactions { sub, rows: size, status: Some(slot), .. } => {
                let n = size.as_ref().map(|e| self.eval(e, &vec![Val::Null; self.width])).transpose()?;
                let size = batch_size(n.as_ref())?;
                let mut out = Vec::with_capacity(rows.len());
                let mut rows = rows.into_iter().peekable();
                let mut batch = 0;
                while rows.peek().is_some() {
                    batch += 1;
                    let mut done = self.op(sub, rows.by_ref().take(size).collect())?;
                    let status = batch_status(Some(batch), None);
                    for r in &mut done {
                        r[*slot] = status.clone();
                    }
                    out.extend(done);
                }
                out
            }
            Op::LoadCsv { from, slot, headers, delimiter, line_slot, file_slot } => {
                self.load_csv(from, (*slot, *line_slot, *file_slot), *headers, *delimiter, rows)?
            }
            Op::Call(call) => {
                let mut out = Vec::new();
                for row in rows {
                    let mut args = Vec::with_capacity(call.args.len());
                    for a in &call.args {
                        args.push(self.eval(a, &row)?);
                    }
                    for result in procedures::call(self.graph, self.cx, (self.embed, self.audit), call.name, &args)? {
                        let mut r = row.clone();
                        for (index, slot) in &call.yields {
                            r[*slot] = result.get(*index).cloned().unwrap_or(Val::Null);
                        }
                        out.push(r);
                    }
                }
                out
            }
        })
    }

    /// The SKIP and LIMIT values at the start of `ops` (a LIMIT, or a SKIP then a LIMIT) and how
    /// many operators they are; `None` for anything else, or when evaluating either fails (the
    /// operators then run as written and report it in their order).
    fn top_bounds(&self, ops: &[Op]) -> Option<(usize, usize, usize)> {
        match ops {
            [Op::Limit(l), ..] => Some((0, self.count_arg(l, "LIMIT").ok()?, 1)),
            [Op::Skip(s), Op::Limit(l), ..] => Some((self.count_arg(s, "SKIP").ok()?, self.count_arg(l, "LIMIT").ok()?, 2)),
            _ => None,
        }
    }

    fn count_arg(&self, e: &CExpr, what: &str) -> Fallible<usize> {
        match self.eval(e, &[])? {
            Val::Int(i) if i >= 0 => Ok(usize::try_from(i).unwrap_or(usize::MAX)),
            Val::Int(i) => Err(Box::new(QueryError::runtime(
                ErrorType::ArgumentError,
                Detail::NegativeIntegerArgument,
                format!("{what} cannot be negative ({i})"),
            ))),
            other => Err(Box::new(QueryError::runtime(
                ErrorType::ArgumentError,
                Detail::InvalidArgumentType,
                format!("{what} takes an integer, got {}", other.kind()),
            ))),
        }
    }

    fn node_passes(&self, n: EntityId, test: &NodeTest, row: &[Val]) -> Fallible<bool> {
        self.node_passes_in(n, (test, 0), row, None)
    }

    /// Whether node `n` passes `test` (its labels from the given one on). For one of many candidates of `row`,
    /// `wanted` keeps the properties' wanted values (they depend on the row alone): each is
    /// evaluated when a candidate first needs it, in order.
    fn node_passes_in(
        &self,
        n: EntityId,
        (test, labels_from): (&NodeTest, usize),
        row: &[Val],
        mut wanted: Option<&mut Vec<Val>>,
    ) -> Fallible<bool> {
        if !test.labels.iter().skip(labels_from).all(|l| self.graph.has_label(n, l)) {
            return Ok(false);
        }
        if test.label_expr.as_ref().is_some_and(|e| !self.graph.labels_match(n, e)) {
            return Ok(false);
        }
        for (i, (k, e)) in test.props.iter().enumerate() {
            let fresh;
            let want = match &mut wanted {
                Some(w) => {
                    if w.len() == i {
                        w.push(self.eval(e, row)?);
                    }
                    &w[i]
                }
                None => {
                    fresh = self.eval(e, row)?;
                    &fresh
                }
            };
            if self.graph.node_prop_equals(n, k, want) != Some(true) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn rel_passes(&self, c: ClaimId, hop: &Hop, row: &mut Row) -> Fallible<bool> {
        if hop.rel_predicate.is_none() {
            return self.rel_tests_pass(c, (&hop.rel_props, None), row);
        }
        let saved = std::mem::replace(&mut row[hop.rel], Val::Rel(c));
        let ok = self.rel_tests_pass(c, (&hop.rel_props, hop.rel_predicate.as_ref()), row);
        row[hop.rel] = saved;
        ok
    }

    /// A relationship's property map and inline WHERE (which reads it from its slot in `row`).
    fn rel_tests_pass(&self, c: ClaimId, (props, predicate): (&[(Arc<str>, CExpr)], Option<&CExpr>), row: &Row) -> Fallible<bool> {
        for (k, e) in props {
            let want = self.eval(e, row)?;
            if self.graph.rel_prop(c, k).equals(&want) != Some(true) {
                return Ok(false);
            }
        }
        predicate.map_or(Ok(true), |p| self.keep(p, row))
    }

    /// One step of a variable-length hop, `from` over `c` to `to`, with `walk` and `trail` the
    /// nodes and relationships before it: the relationship's tests and, in a quantified group,
    /// those of the group's relationship `j` (the step's place in its repetition), of the node
    /// it reaches, of the repetition's first node when it starts one, and the group's WHERE
    /// when it ends one, with the repetition's elements in their slots.
    fn step_passes(
        &self,
        hop: &Hop,
        (from, c, to): (EntityId, ClaimId, EntityId),
        (walk, trail): (&[EntityId], &[ClaimId]),
        row: &mut Row,
    ) -> Fallible<bool> {
        let Some(g) = &hop.group else { return self.rel_passes(c, hop, row) };
        let j = trail.len() % g.rels();
        let start = trail.len() - j;
        let mut saved: Vec<(usize, Val)> = Vec::with_capacity(2 * j + 3);
        let mut put = |row: &mut Row, slot: usize, v: Val| saved.push((slot, std::mem::replace(&mut row[slot], v)));
        // Leftwards (a group of one relationship only), the step goes from its last node to its first.
        let (here, there) = if g.backward { (to, from) } else { (from, to) };
        for (p, node) in g.nodes.iter().enumerate().take(j) {
            put(row, node.slot, Val::Node(walk[start + p]));
        }
        put(row, g.nodes[j].slot, Val::Node(here));
        put(row, g.nodes[j + 1].slot, Val::Node(there));
        let rel_slot = |q: usize| if q == 0 { g.rel_slot } else { g.steps[q - 1].slot };
        for q in 0..j {
            put(row, rel_slot(q), Val::Rel(trail[start + q]));
        }
        put(row, rel_slot(j), Val::Rel(c));
        let tests = match j {
            0 => (&hop.rel_props[..], hop.rel_predicate.as_ref()),
            _ => (&g.steps[j - 1].rel_props[..], g.steps[j - 1].rel_predicate.as_ref()),
        };
        let passes = (|| -> Fallible<bool> {
            Ok((j > 0 || self.node_passes(here, &g.nodes[0].test, row)?)
                && self.rel_tests_pass(c, tests, row)?
                && self.node_passes(there, &g.nodes[j + 1].test, row)?
                && (j + 1 < g.rels() || g.predicate.as_ref().map_or(Ok(true), |p| self.keep(p, row))?))
        })();
        for (slot, v) in saved.into_iter().rev() {
            row[slot] = v;
        }
        passes
    }

    /// Relationships bound earlier in the same MATCH, which this hop may not use again.
    fn used_rels(hop: &Hop, row: &[Val]) -> Vec<ClaimId> {
        let mut used = Vec::new();
        for s in &hop.distinct_from {
            match &row[*s] {
                Val::Rel(c) => used.push(*c),
                Val::List(items) => used.extend(items.iter().filter_map(|v| if let Val::Rel(c) = v { Some(*c) } else { None })),
                _ => {}
            }
        }
        used
    }

    fn expand(&self, hop: &Hop, rows: Vec<Row>) -> Fallible<Vec<Row>> {
        let expander = match self.graph.expander(engine_dir(hop.direction), &hop.types, hop.type_expr.as_ref()) {
            Some(x) => x,
            // No relationship has these types: a `*0..` still matches its zero hops.
            None if hop.length.is_some_and(|(min, _)| min == 0) => self.graph.no_edges(engine_dir(hop.direction)),
            None => return Ok(Vec::new()),
        };
        let one = |row: Row| -> Fallible<Vec<Row>> {
            if hop.shortest.is_some() {
                return self.shortest(hop, &expander, row);
            }
            let Val::Node(from) = row[hop.from] else { return Ok(Vec::new()) };
            let used = Self::used_rels(hop, &row);
            match hop.length {
                Some((min, max)) if hop.reach => Ok(self
                    .reach(hop, from, &row, min, max)?
                    .into_iter()
                    .map(|n| {
                        let mut r = row.clone();
                        r[hop.to] = Val::Node(n);
                        r
                    })
                    .collect()),
                None => self.expand_one(hop, &expander, from, &used, row),
                Some((min, max)) => self.expand_var(hop, &expander, from, &used, row, min, max),
            }
        };
        if rows.len() >= PARALLEL_ROWS {
            let parts: Vec<Fallible<Vec<Row>>> = rows.into_par_iter().map(one).collect();
            let mut out = Vec::new();
            for p in parts {
                out.extend(p?);
                if out.len() > self.rows_max() {
                    return Err(limit("rows_max", self.rows_max(), "an intermediate result").into());
                }
            }
            Ok(out)
        } else {
            let mut out = Vec::new();
            for row in rows {
                out.extend(one(row)?);
                if out.len() > self.rows_max() {
                    return Err(limit("rows_max", self.rows_max(), "an intermediate result").into());
                }
            }
            Ok(out)
        }
    }

    /// `SeekRels`: per row, the relationships the property index gives for the hop, each from
    /// an end that passes the scan's `test`, then the hop's tests as `expand_one` makes them. A
    /// row the index cannot answer (a masked view) runs as the scan and expand it stands for.
    fn seek_rels(&self, slot: usize, test: &NodeTest, (hop, lookup): (&Hop, Option<&RelLookup>), rows: Vec<Row>) -> Fallible<Vec<Row>> {
        let Some(expander) = self.graph.expander(engine_dir(hop.direction), &hop.types, hop.type_expr.as_ref()) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for row in rows {
            let Some((by, found)) = self.indexed_rels(slot, hop, lookup, &row) else {
                let scanned = self.scan(slot, test, None, vec![row])?;
                out.extend(self.expand(hop, scanned)?);
                continue;
            };
            self.note_read(by, found.len());
            for (i, c) in found.into_iter().enumerate() {
                if i % CHECK_EVERY as usize == CHECK_EVERY as usize - 1 {
                    self.check()?;
                }
                let Some((s, o)) = self.graph.endpoints(c) else { continue };
                for from in if s == o { vec![s] } else { vec![s, o] } {
                    if !self.graph.node_visible(from) || !self.node_passes_in(from, (test, 0), &row, None)? {
                        continue;
                    }
                    let mut r = row.clone();
                    r[slot] = Val::Node(from);
                    for edge in expander.edges_of_claim(c, from) {
                        if second_sight(hop, from, &edge) || !self.rel_passes(c, hop, &mut r)? || !self.target_ok(hop, edge.neighbor, &r)? {
                            continue;
                        }
                        let mut x = r.clone();
                        x[hop.rel] = Val::Rel(c);
                        x[hop.to] = Val::Node(edge.neighbor);
                        out.push(x);
                        if out.len() > self.rows_max() {
                            return Err(limit("rows_max", self.rows_max(), "an intermediate result").into());
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    fn target_ok(&self, hop: &Hop, to: EntityId, row: &Row) -> Fallible<bool> {
        if hop.to_bound {
            return Ok(matches!(row[hop.to], Val::Node(b) if b == to) && self.node_passes(to, &hop.to_test, row)?);
        }
        self.node_passes(to, &hop.to_test, row)
    }

    fn expand_one(
        &self,
        hop: &Hop,
        expander: &crate::read::expand::Expander<'_>,
        from: EntityId,
        used: &[ClaimId],
        row: Row,
    ) -> Fallible<Vec<Row>> {
        let mut out = Vec::new();
        self.expand_each(hop, expander, (from, used), row, &mut |r| {
            out.push(r);
            Ok(true)
        })?;
        Ok(out)
    }

    /// Each match of the single hop from `from` (its relationships not in `used`) to `sink`, in
    /// the expander's order, until `sink` says stop (`false`).
    fn expand_each(
        &self,
        hop: &Hop,
        expander: &crate::read::expand::Expander<'_>,
        (from, used): (EntityId, &[ClaimId]),
        mut row: Row,
        sink: &mut dyn FnMut(Row) -> Fallible<bool>,
    ) -> Fallible<()> {
        for (i, edge) in expander.edges(from).enumerate() {
            if i % CHECK_EVERY as usize == CHECK_EVERY as usize - 1 {
                self.check()?;
            }
            if second_sight(hop, from, &edge) {
                continue;
            }
            if used.contains(&edge.claim) || !self.rel_passes(edge.claim, hop, &mut row)? {
                continue;
            }
            if !self.target_ok(hop, edge.neighbor, &row)? {
                continue;
            }
            let mut r = row.clone();
            r[hop.rel] = Val::Rel(edge.claim);
            r[hop.to] = Val::Node(edge.neighbor);
            if !sink(r)? {
                break;
            }
        }
        Ok(())
    }

    /// Every trail (no relationship twice) from `from` of `min..=max` hops, depth first.
    #[allow(clippy::too_many_arguments)] // Reason: the walk's fixed inputs, passed once.
    fn expand_var(
        &self,
        hop: &Hop,
        expander: &crate::read::expand::Expander<'_>,
        from: EntityId,
        used: &[ClaimId],
        mut row: Row,
        min: u64,
        max: Option<u64>,
    ) -> Fallible<Vec<Row>> {
        let mut out = Vec::new();
        let mut trail: Vec<ClaimId> = Vec::new();
        // Each stack frame: the node reached and its remaining edges.
        let mut stack: Vec<(EntityId, Vec<(ClaimId, EntityId)>)> = Vec::new();
        let visited_max = self.cx.limits.visited_max;
        let mut visited = 0usize;
        let rows_max = self.rows_max();
        // The nodes along the trail, `from` first (a group's lists are made of them).
        let mut walk: Vec<EntityId> = vec![from];
        // A group of k relationships: the steps go round them, and a match is whole repetitions
        // (`min` and `max` count repetitions).
        let k = hop.group.as_ref().map_or(1, |g| g.rels());
        let more: Vec<(Direction, Option<crate::read::expand::Expander<'_>>)> = hop.group.as_ref().map_or_else(Vec::new, |g| {
            let dir = |s: &engram_query::plan::GroupStep| engine_dir(s.direction);
            g.steps.iter().map(|s| (dir(s), self.graph.expander(dir(s), &s.types, s.type_expr.as_ref()))).collect()
        });
        let emit = |node: EntityId, trail: &[ClaimId], walk: &[EntityId], row: &Row, out: &mut Vec<Row>| -> Fallible<()> {
            if out.len() >= rows_max {
                return Err(limit("rows_max", rows_max, "a variable-length pattern's matches").into());
            }
            if trail.len().is_multiple_of(k) && (trail.len() / k) as u64 >= min && self.target_ok(hop, node, row)? {
                let mut r = row.clone();
                r[hop.rel] = Val::list(trail.iter().map(|c| Val::Rel(*c)).collect());
                r[hop.to] = Val::Node(node);
                if let Some(g) = &hop.group {
                    group_lists(g, (walk, trail), &mut r);
                }
                out.push(r);
            }
            Ok(())
        };
        emit(from, &trail, &walk, &row, &mut out)?;
        if max == Some(0) {
            return Ok(out);
        }
        let edges_of = |node: EntityId, row: &mut Row, (walk, trail): (&[EntityId], &[ClaimId])| -> Fallible<Vec<(ClaimId, EntityId)>> {
            let mut next = Vec::new();
            let (dir, step) = match trail.len() % k {
                0 => (engine_dir(hop.direction), Some(expander)),
                j => (more[j - 1].0, more[j - 1].1.as_ref()),
            };
            for edge in step.into_iter().flat_map(|x| x.edges(node)) {
                if dir == Direction::Both && edge.neighbor == node && edge.direction == Direction::In {
                    // An undirected self-loop's second appearance: it is one relationship.
                    continue;
                }
                if trail.contains(&edge.claim)
                    || used.contains(&edge.claim)
                    || !self.step_passes(hop, (node, edge.claim, edge.neighbor), (walk, trail), row)?
                {
                    continue;
                }
                next.push((edge.claim, edge.neighbor));
            }
            next.reverse();
            Ok(next)
        };
        let first = edges_of(from, &mut row, (&walk, &trail))?;
        stack.push((from, first));
        while let Some((_, edges)) = stack.last_mut() {
            let Some((claim, next)) = edges.pop() else {
                stack.pop();
                trail.pop();
                walk.truncate(trail.len() + 1);
                continue;
            };
            visited += 1;
            if visited.is_multiple_of(CHECK_EVERY as usize) {
                self.check()?;
            }
            if visited > visited_max {
                return Err(limit("visited_max", visited_max, "a variable-length pattern").into());
            }
            trail.push(claim);
            walk.push(next);
            emit(next, &trail, &walk, &row, &mut out)?;
            if max.is_some_and(|m| trail.len() as u64 >= m.saturating_mul(k as u64)) {
                trail.pop();
                walk.pop();
                continue;
            }
            let edges = edges_of(next, &mut row, (&walk, &trail))?;
            stack.push((next, edges));
        }
        Ok(out)
    }

    /// The distinct nodes within `min..=max` hops of `from` (`min` is 0 or 1) that pass the
    /// hop's node test: the engine's closure for an unbounded walk over one transitive type,
    /// its k-hop otherwise.
    fn reach(&self, hop: &Hop, from: EntityId, row: &Row, min: u64, max: Option<u64>) -> Fallible<Vec<EntityId>> {
        let mut reached = match self.closure(hop, from, max) {
            Some(found) => found.into_iter().map(|(e, _)| e).collect(),
            None => self.khop(hop, from, max)?,
        };
        // A lower bound of 0 reaches the start, unless the pattern rules it out (`b <> a`).
        if min == 0 && !hop.exclude_start && !reached.contains(&from) {
            reached.push(from);
        }
        if !hop.to_test.is_empty() {
            let mut kept = Vec::with_capacity(reached.len());
            for n in reached {
                if self.node_passes(n, &hop.to_test, row)? {
                    kept.push(n);
                }
            }
            reached = kept;
        }
        Ok(reached)
    }

    /// An unbounded directed walk over one transitive type is the engine's closure
    /// (`ancestors` / `descendants`, its hierarchy index), the start included when a cycle leads
    /// back to it. `None` when the closure does not apply.
    fn closure(&self, hop: &Hop, from: EntityId, max: Option<u64>) -> Option<Vec<(EntityId, u32)>> {
        let pid = self.closure_type(hop, max)?;
        // Not transitive here, or stopped on a limit or deadline: the k-hop walk takes over (and
        // reports the limit).
        // The start is in when a cycle leads back to it, unless the pattern rules it out.
        self.graph.view.closure_by_id(from, pid, engine_dir(hop.direction), &self.graph.vis, !hop.exclude_start).ok()?
    }

    /// The one predicate a hop the closure may walk names: unbounded, directed, one type.
    fn closure_type(&self, hop: &Hop, max: Option<u64>) -> Option<crate::ids::PredicateId> {
        let [ty] = hop.types.as_slice() else { return None };
        if max.is_some() || engine_dir(hop.direction) == Direction::Both {
            return None;
        }
        // One predicate only (a name written in two cases is two types: the k-hop walk takes both).
        let ([Some(pid), None] | [None, Some(pid)]) = self.graph.view.rel_type_ids(ty) else { return None };
        Some(pid)
    }

    /// `closure`'s count, and whether the start is among those reached.
    fn closure_count(&self, hop: &Hop, from: EntityId, max: Option<u64>) -> Option<(usize, bool)> {
        let pid = self.closure_type(hop, max)?;
        self.graph.view.closure_count_by_id(from, pid, engine_dir(hop.direction), &self.graph.vis, !hop.exclude_start).ok()?
    }

    /// The walk as the engine's k-hop (its bitset visited set and parallel frontiers): the nodes
    /// at 1..=max hops, and the start when a directed cycle of at most `max` hops leads back to
    /// it (a predecessor reached within `max - 1`). A truncated walk is a limit error, never a
    /// partial answer.
    fn khop(&self, hop: &Hop, from: EntityId, max: Option<u64>) -> Fallible<Vec<EntityId>> {
        let (found, back_to_start) = self.khop_walk(hop, from, max)?;
        let mut reached: Vec<EntityId> = found.entities.iter().filter(|r| r.depth >= 1).map(|r| r.entity).collect();
        if back_to_start {
            reached.push(from);
        }
        Ok(reached)
    }

    /// How many nodes `khop` gives besides the start, without collecting them, and whether it
    /// gives the start.
    fn khop_count(&self, hop: &Hop, from: EntityId, max: Option<u64>) -> Fallible<(usize, bool)> {
        let (found, back_to_start) = self.khop_walk(hop, from, max)?;
        Ok((found.entities.iter().filter(|r| r.depth >= 1).count(), back_to_start))
    }

    /// The k-hop walk of `khop`, and whether a directed cycle of at most `max` hops leads back to
    /// the start (unless the pattern rules the start out).
    fn khop_walk(&self, hop: &Hop, from: EntityId, max: Option<u64>) -> Fallible<(crate::read::khop::KHopResult, bool)> {
        let mut filter = crate::read::filter::EdgeFilter::new(engine_dir(hop.direction));
        filter.predicates = hop.types.iter().map(ToString::to_string).collect();
        let mut max_depth = max.map_or(u32::MAX, |m| u32::try_from(m).unwrap_or(u32::MAX));
        if let Some(e) = &hop.type_expr {
            filter.predicate_ids = self.graph.type_ids(&[], Some(e)).unwrap_or_default();
            if filter.predicate_ids.is_empty() {
                // No predicate passes the expression: the walk reaches nothing past the start.
                max_depth = 0;
            }
        }
        let visited_max = self.cx.limits.visited_max;
        let q = crate::read::khop::KHopQuery {
            max_depth,
            hops: vec![filter],
            visibility: self.graph.vis.clone(),
            max_visited: Some(visited_max),
            ..crate::read::khop::KHopQuery::default()
        };
        let found = self.graph.view.khop(&[from], &q).map_err(|e| super::eval::read_error(&e, ErrorType::SemanticError))?;
        if found.truncated {
            return Err(limit("visited_max", visited_max, "a variable-length pattern").into());
        }
        let mut back_to_start = false;
        if engine_dir(hop.direction) != Direction::Both && !hop.exclude_start && max_depth >= 1 {
            let back = if engine_dir(hop.direction) == Direction::Out { Direction::In } else { Direction::Out };
            let preds: Vec<EntityId> = self
                .graph
                .expander(back, &hop.types, hop.type_expr.as_ref())
                .map(|x| x.edges(from).map(|e| e.neighbor).collect())
                .unwrap_or_default();
            if !preds.is_empty() {
                let depth: foldhash::HashMap<u32, u32> = found.entities.iter().map(|r| (r.entity.0, r.depth)).collect();
                // A predecessor p closes a walk of depth(p) + 1 hops (p = the start: a self-loop).
                back_to_start = preds.iter().any(|p| depth.get(&p.0).is_some_and(|d| d.saturating_add(1) <= max_depth));
            }
        }
        Ok((found, back_to_start))
    }

    /// How many matches `hop` has over `rows`: edges for a one-hop expand, distinct nodes (over
    /// all rows) for a breadth-first reach.
    fn count_expand(&self, hop: &Hop, rows: &[Row]) -> Fallible<usize> {
        if let Some((min, max)) = hop.length {
            let mut all: foldhash::HashSet<u32> = foldhash::HashSet::default();
            let one_row = rows.len() == 1;
            let mut n = 0;
            for row in rows {
                let Val::Node(from) = row[hop.from] else { continue };
                if one_row && hop.to_test.is_empty() {
                    // One start and nothing to test per node: the closure's own count, else the
                    // k-hop walk's (neither collects the nodes it counts).
                    if let Some((found, has_start)) = self.closure_count(hop, from, max) {
                        return Ok(found + usize::from(min == 0 && !has_start && !hop.exclude_start));
                    }
                    let (n, back_to_start) = self.khop_count(hop, from, max)?;
                    return Ok(n + usize::from(back_to_start || (min == 0 && !hop.exclude_start)));
                }
                let reached = self.reach(hop, from, row, min, max)?;
                if one_row {
                    n = reached.len();
                } else {
                    all.extend(reached.into_iter().map(|e| e.0));
                }
            }
            return Ok(if one_row { n } else { all.len() });
        }
        let Some(expander) = self.graph.expander(engine_dir(hop.direction), &hop.types, hop.type_expr.as_ref()) else { return Ok(0) };
        let mut n = 0;
        if hop.distinct_from.is_empty() && hop.to_test.is_empty() {
            // Nothing to test per edge: the expander's internal iteration counts (one tight loop
            // per stored run instead of its state machine per edge).
            for row in rows {
                let Val::Node(from) = row[hop.from] else { continue };
                let (mut seen, mut stop) = (0usize, Ok(()));
                n += expander.edges(from).fold(0usize, |acc, edge| {
                    seen += 1;
                    if seen % CHECK_EVERY as usize == 0 && stop.is_ok() {
                        stop = self.check();
                    }
                    acc + usize::from(!second_sight(hop, from, &edge))
                });
                stop?;
            }
            return Ok(n);
        }
        for row in rows {
            let Val::Node(from) = row[hop.from] else { continue };
            let used = Self::used_rels(hop, row);
            for (i, edge) in expander.edges(from).enumerate() {
                if i % CHECK_EVERY as usize == CHECK_EVERY as usize - 1 {
                    self.check()?;
                }
                if second_sight(hop, from, &edge) {
                    continue;
                }
                if used.contains(&edge.claim) || !self.node_passes(edge.neighbor, &hop.to_test, row)? {
                    continue;
                }
                n += 1;
            }
        }
        Ok(n)
    }

    /// The rows in the keys' order, ties in input order; with `keep`, only the first `keep` of
    /// them (selected, then sorted: the same rows in the same order as sorting all).
    fn sort(&self, keys: &[SortKey], rows: Vec<Row>, keep: Option<usize>) -> Fallible<Vec<Row>> {
        let mut keyed = Vec::with_capacity(rows.len());
        for (i, row) in rows.into_iter().enumerate() {
            let mut k = Vec::with_capacity(keys.len());
            for key in keys {
                k.push(self.eval(&key.expr, &row)?);
            }
            keyed.push((k, i, row));
        }
        // The input position breaks ties: an unstable sort or selection orders as a stable sort.
        let cmp = |a: &(Vec<Val>, usize, Row), b: &(Vec<Val>, usize, Row)| {
            for (i, key) in keys.iter().enumerate() {
                let (x, y) = (&a.0[i], &b.0[i]);
                let o = match (x.is_null(), y.is_null()) {
                    (true, false) if key.nulls_first => std::cmp::Ordering::Less,
                    (true, false) => std::cmp::Ordering::Greater,
                    (false, true) if key.nulls_first => std::cmp::Ordering::Greater,
                    (false, true) => std::cmp::Ordering::Less,
                    _ if key.descending => x.order(y).reverse(),
                    _ => x.order(y),
                };
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
            }
            a.1.cmp(&b.1)
        };
        match keep {
            Some(0) => keyed.clear(),
            Some(n) if n < keyed.len() => {
                keyed.select_nth_unstable_by(n - 1, cmp);
                keyed.truncate(n);
                keyed.sort_unstable_by(cmp);
            }
            _ if keyed.len() >= PARALLEL_ROWS * 16 => keyed.par_sort_unstable_by(cmp),
            _ => keyed.sort_unstable_by(cmp),
        }
        Ok(keyed.into_iter().map(|(_, _, r)| r).collect())
    }

    fn aggregate(&self, keys: &[(usize, CExpr)], aggregates: &[Aggregate], rows: &[Row]) -> Fallible<Vec<Row>> {
        let mut groups: HashMap<Key, usize> = HashMap::new();
        let mut order: Vec<(Vec<Val>, Vec<Acc>)> = Vec::new();
        let no_rows = rows.is_empty();
        // Each row's grouping key and aggregate arguments: in parallel for many rows (in row order,
        // and the first failing row's error, as a sequential run); folded in row order below.
        let evaluate = |row: &Row| -> Fallible<Evaluated> {
            let mut k = Vec::with_capacity(keys.len());
            for (_, e) in keys {
                k.push(self.eval(e, row)?);
            }
            let mut args = Vec::with_capacity(aggregates.len());
            for a in aggregates {
                args.push(match &a.arg {
                    Some(e) => self.eval(e, row)?,
                    None => Val::Null,
                });
            }
            Ok((k, args))
        };
        let evaluated: Vec<Fallible<Evaluated>> = if rows.len() >= PARALLEL_AGGREGATE_ROWS {
            self.check()?;
            rows.par_iter().map(evaluate).collect()
        } else {
            rows.iter().map(evaluate).collect()
        };
        for (i, r) in evaluated.into_iter().enumerate() {
            if i % CHECK_EVERY as usize == CHECK_EVERY as usize - 1 {
                self.check()?;
            }
            let (k, args) = r?;
            let at = match groups.get(&Key(k.clone())) {
                Some(&at) => at,
                None => {
                    groups.insert(Key(k.clone()), order.len());
                    order.push((k, aggregates.iter().map(|a| Acc::new(a.func, a.distinct)).collect()));
                    order.len() - 1
                }
            };
            for (v, acc) in args.into_iter().zip(order[at].1.iter_mut()) {
                acc.add(v)?;
            }
        }
        // No rows and no grouping keys: one row of empty aggregates (count 0, collect []).
        if no_rows && keys.is_empty() {
            order.push((Vec::new(), aggregates.iter().map(|a| Acc::new(a.func, a.distinct)).collect()));
        }
        let width = self.width;
        let mut out = Vec::with_capacity(order.len());
        for (k, accs) in order {
            let mut row = vec![Val::Null; width];
            for ((slot, _), v) in keys.iter().zip(k) {
                row[*slot] = v;
            }
            for (a, acc) in aggregates.iter().zip(accs) {
                row[a.slot] = acc.finish()?;
            }
            out.push(row);
        }
        Ok(out)
    }
}

/// Whether the hop's property `k = e` can be looked up before the hop from the scan in `slot` is
/// made: `Hop::looks_up`'s kind of value, and no slot the hop binds (their values exist only
/// during the expand it replaces).
/// Whether `aggregates` is one count of every row: `count(*)`, or `count(n)` of the node in
/// `slot` (never null), not DISTINCT.
fn counts_each(aggregates: &[Aggregate], slot: usize) -> bool {
    match aggregates {
        [a] if !a.distinct => match (a.func, &a.arg) {
            (AggFn::CountStar, _) => true,
            (AggFn::Count, Some(CExpr::Slot(s))) => *s == slot,
            _ => false,
        },
        _ => false,
    }
}

pub(crate) fn rel_lookup(slot: usize, hop: &Hop, k: &str, e: &CExpr) -> bool {
    !engram_query::plan::REL_FIELDS.contains(&k)
        && match e {
            CExpr::Slot(s) => ![slot, hop.rel, hop.to].contains(s),
            CExpr::Param(_) | CExpr::Const(_) => true,
            // A list literal of constants and parameters (`e.uuid IN ['a', $b]`): nothing in it can
            // fail to evaluate (an equality with a list reads no index, and scans).
            CExpr::List(items) => items.iter().all(|i| matches!(i, CExpr::Param(_) | CExpr::Const(_))),
            _ => false,
        }
}

/// Binds a quantified group's lists from the nodes `walk` went through and the relationships of
/// `trail`: each repetition's, in the pattern's order (reversed when the walk went against it).
fn group_lists(g: &GroupHop, (walk, trail): (&[EntityId], &[ClaimId]), row: &mut Row) {
    let k = g.rels();
    let reps = trail.len() / k;
    let ordered = |mut v: Vec<Val>| {
        if g.backward {
            v.reverse();
        }
        Val::list(v)
    };
    for (p, node) in g.nodes.iter().enumerate() {
        if let Some(s) = node.list {
            // Leftwards (one relationship), a repetition's first node is the later of its two.
            let at = |i: usize| if g.backward { walk[i + 1 - p] } else { walk[i * k + p] };
            row[s] = ordered((0..reps).map(|i| Val::Node(at(i))).collect());
        }
    }
    let lists = std::iter::once(g.rel_list).chain(g.steps.iter().map(|s| s.list));
    for (q, list) in lists.enumerate() {
        if let Some(s) = list {
            row[s] = ordered((0..reps).map(|i| Val::Rel(trail[i * k + q])).collect());
        }
    }
}

/// Whether `edge` of `node` is an undirected self-loop's second appearance: the expander yields
/// a self-loop once per direction, and it is one relationship.
fn second_sight(hop: &Hop, node: EntityId, edge: &crate::read::expand::EdgeRow) -> bool {
    engine_dir(hop.direction) == Direction::Both && edge.neighbor == node && edge.direction == Direction::In
}

/// One aggregate's running state.
struct Acc {
    func: AggFn,
    seen: Option<HashSet<Key>>,
    count: i64,
    int_sum: Option<i64>,
    float_sum: f64,
    any_float: bool,
    values: Vec<Val>,
    best: Option<Val>,
    overflowed: bool,
    /// `sum` and `avg` over durations (Cypher's other summable kind).
    durations: Option<crate::temporal::Duration>,
}

impl Acc {
    fn new(func: AggFn, distinct: bool) -> Acc {
        Acc {
            func,
            seen: distinct.then(HashSet::new),
            count: 0,
            int_sum: Some(0),
            float_sum: 0.0,
            any_float: false,
            values: Vec::new(),
            best: None,
            overflowed: false,
            durations: None,
        }
    }

    fn add(&mut self, v: Val) -> Fallible<()> {
        if self.func == AggFn::CountStar {
            self.count += 1;
            return Ok(());
        }
        if v.is_null() {
            return Ok(());
        }
        if let Some(seen) = &mut self.seen {
            if !seen.insert(Key(vec![v.clone()])) {
                return Ok(());
            }
        }
        self.count += 1;
        match self.func {
            AggFn::Count | AggFn::CountStar => {}
            AggFn::Collect => self.values.push(v),
            AggFn::Sum | AggFn::Avg | AggFn::StDev | AggFn::StDevP => match v {
                Val::Temporal(t)
                    if t.as_duration().is_some()
                        && matches!(self.func, AggFn::Sum | AggFn::Avg)
                        && (self.durations.is_some() || self.count == 1) =>
                {
                    let d = t.as_duration().unwrap_or_default();
                    let sum = self.durations.unwrap_or_default().plus(&d).map_err(super::functions::temporal_error)?;
                    self.durations = Some(sum);
                }
                Val::Int(i) if self.durations.is_none() => {
                    self.int_sum = self.int_sum.and_then(|s| s.checked_add(i));
                    if self.int_sum.is_none() {
                        self.overflowed = true;
                    }
                    self.float_sum += i as f64;
                    self.values.push(Val::Float(i as f64));
                }
                Val::Float(f) if self.durations.is_none() => {
                    self.any_float = true;
                    self.float_sum += f;
                    self.values.push(Val::Float(f));
                }
                other => {
                    let want = if matches!(self.func, AggFn::Sum | AggFn::Avg) { "numbers or durations (not both)" } else { "numbers" };
                    return Err(type_error(format!("{:?} needs {want}, got {}", self.func, other.kind())).into());
                }
            },
            AggFn::PercentileCont | AggFn::PercentileDisc => {
                let Val::List(pair) = &v else { return Ok(()) };
                let (x, p) = (pair.first().cloned().unwrap_or(Val::Null), pair.get(1).cloned().unwrap_or(Val::Null));
                let p = match p {
                    Val::Int(i) => i as f64,
                    Val::Float(f) => f,
                    other => return Err(type_error(format!("a percentile is a number from 0 to 1, got {}", other.kind())).into()),
                };
                if !(0.0..=1.0).contains(&p) {
                    return Err(Box::new(QueryError::runtime(
                        ErrorType::ArgumentError,
                        Detail::InvalidArgumentValue,
                        format!("a percentile is a number from 0 to 1, got {p}"),
                    )));
                }
                self.float_sum = p;
                match x {
                    Val::Null => self.count -= 1,
                    Val::Int(_) | Val::Float(_) => self.values.push(x),
                    other => return Err(type_error(format!("{:?} needs numbers, got {}", self.func, other.kind())).into()),
                }
            }
            AggFn::Min | AggFn::Max => {
                let better = match &self.best {
                    None => true,
                    Some(b) => {
                        let o = v.order(b);
                        if self.func == AggFn::Min {
                            o == std::cmp::Ordering::Less
                        } else {
                            o == std::cmp::Ordering::Greater
                        }
                    }
                };
                if better {
                    self.best = Some(v);
                }
            }
        }
        Ok(())
    }

    fn finish(self) -> Fallible<Val> {
        if let Some(d) = self.durations {
            let d = if self.func == AggFn::Avg { d.times(1.0 / self.count as f64) } else { Ok(d) };
            return Ok(Val::temporal(crate::temporal::Temporal::Duration(d.map_err(super::functions::temporal_error)?)));
        }
        Ok(match self.func {
            AggFn::Count | AggFn::CountStar => Val::Int(self.count),
            AggFn::Collect => Val::list(self.values),
            AggFn::Sum => match (self.any_float, self.int_sum) {
                (false, Some(s)) if !self.overflowed => Val::Int(s),
                _ => Val::Float(self.float_sum),
            },
            AggFn::Avg if self.count == 0 => Val::Null,
            AggFn::Avg => Val::Float(self.float_sum / self.count as f64),
            AggFn::Min | AggFn::Max => self.best.unwrap_or(Val::Null),
            AggFn::PercentileCont | AggFn::PercentileDisc => percentile(self.func, self.values, self.float_sum),
            AggFn::StDev | AggFn::StDevP => {
                let n = self.values.len();
                let denominator = if self.func == AggFn::StDev { n.saturating_sub(1) } else { n };
                if denominator == 0 {
                    return Ok(Val::Float(0.0));
                }
                let mean = self.float_sum / n as f64;
                let ss: f64 = self.values.iter().map(|v| if let Val::Float(f) = v { (f - mean).powi(2) } else { 0.0 }).sum();
                Val::Float((ss / denominator as f64).sqrt())
            }
        })
    }
}

/// The `p` percentile of `values` (numbers): `percentileDisc` the value at that rank (the
/// smallest whose share of the values reaches `p`), `percentileCont` the linear interpolation
/// between the two values around it; null for no values.
fn percentile(func: AggFn, mut values: Vec<Val>, p: f64) -> Val {
    if values.is_empty() {
        return Val::Null;
    }
    values.sort_by(|a, b| super::eval::as_f64(a).total_cmp(&super::eval::as_f64(b)));
    let n = values.len();
    if func == AggFn::PercentileDisc {
        let rank = (p * n as f64).ceil() as usize;
        return values[rank.clamp(1, n) - 1].clone();
    }
    let at = p * (n - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    let (a, b) = (super::eval::as_f64(&values[lo]), super::eval::as_f64(&values[hi.min(n - 1)]));
    Val::Float(a + (at - lo as f64) * (b - a))
}

/// The path a `PathSpec` names on `row`: start node, then each hop's relationships in order,
/// each reaching the relationship's other end.
pub(super) fn build_path(g: &Graph<'_, '_>, spec: &PathSpec, row: &[Val]) -> Val {
    let Val::Node(start) = row[spec.start] else { return Val::Null };
    let mut steps = Vec::new();
    let mut at = start;
    for (slot, _) in &spec.hops {
        let rels: Vec<ClaimId> = match &row[*slot] {
            Val::Rel(c) => vec![*c],
            Val::List(items) => items.iter().filter_map(|v| if let Val::Rel(c) = v { Some(*c) } else { None }).collect(),
            _ => return Val::Null,
        };
        for c in rels {
            let Some((s, o)) = g.endpoints(c) else { return Val::Null };
            let next = if s == at { o } else { s };
            steps.push((c, next));
            at = next;
        }
    }
    Val::Path(Arc::new(PathVal { start, steps }))
}

/// The engine's direction for a pattern's.
fn engine_dir(d: engram_query::ast::Direction) -> Direction {
    match d {
        engram_query::ast::Direction::Out => Direction::Out,
        engram_query::ast::Direction::In => Direction::In,
        engram_query::ast::Direction::Both => Direction::Both,
    }
}

/// Rows per batch of `IN TRANSACTIONS` when `OF n ROWS` is not given (Neo4j's default).
const DEFAULT_BATCH_ROWS: i64 = 1000;

/// The rows per batch `OF n ROWS` asks for (`n` evaluated; the default without it).
pub(super) fn batch_size(n: Option<&Val>) -> Result<usize, QueryError> {
    let bad = |got: &str| {
        QueryError::runtime(
            ErrorType::ArgumentError,
            Detail::InvalidArgumentValue,
            format!("IN TRANSACTIONS OF n ROWS takes a positive integer, got {got}"),
        )
    };
    let n = match n {
        None => DEFAULT_BATCH_ROWS,
        Some(Val::Int(n)) => *n,
        Some(other) => return Err(bad(other.kind())),
    };
    if n < 1 {
        return Err(bad(&n.to_string()));
    }
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// What `REPORT STATUS AS s` binds for a row of batch `batch` (its number in the query, from 1;
/// `None`: the batch did not start, after a `BREAK`): Neo4j's map of `started`, `committed`,
/// `transactionId` (here the batch's number as text) and `errorMessage` (the failed batch's error).
pub(super) fn batch_status(batch: Option<usize>, error: Option<&str>) -> Val {
    let mut m = std::collections::BTreeMap::new();
    m.insert(Arc::from("started"), Val::Bool(batch.is_some()));
    m.insert(Arc::from("committed"), Val::Bool(batch.is_some() && error.is_none()));
    m.insert(Arc::from("transactionId"), batch.map_or(Val::Null, |b| Val::str(&b.to_string())));
    m.insert(Arc::from("errorMessage"), error.map_or(Val::Null, Val::str));
    Val::map(m)
}
