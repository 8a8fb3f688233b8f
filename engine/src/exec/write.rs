//! A query that writes runs as one engine transaction: on the writer's private copy of the state,
//! its read operators see what its earlier clauses wrote, each write goes through the batch
//! apply functions (the same validation as every other write), and the operations it applied are
//! the transaction's WAL record. A failing query leaves the copy to be dropped: nothing is
//! published.

use std::sync::Arc;

use engram_query::{Detail, ErrorType, QueryError};

use crate::ids::{ClaimId, EntityId, WorkspaceId};
use crate::limits::Limits;
use crate::read::policy::{Hidden, Rules};
use crate::read::scope::ReadContext;
use crate::read::view::WorkspaceView;
use crate::read::visibility::Visibility;
use crate::state::State;
use crate::time::Timestamp;
use crate::value::{Properties, Value};
use crate::write::apply::{apply_step, Created};
use crate::write::batch::{ClaimRef, CreateNode, CreateRelationship, Element, EntityRef, Op as BatchOp, WriteBatch};

use super::graph::Graph;
use super::ops::{build_path, optional_rows, subquery_rows, Row, Runner};
use super::procedures::{Embed, FilesFn, Host};
use super::value::Val;
use super::QueryStats;
use engram_query::plan::{CExpr, MergePlan, NewPattern, Op, OpStats, Part, SetItem};

/// One write query's transaction over the writer's copy of the state.
pub(crate) struct Tx<'s> {
    st: &'s mut State,
    ws: WorkspaceId,
    workspace: String,
    now: Timestamp,
    limits: &'s Limits,
    cx: &'s ReadContext,
    /// Whether the principal sees sensitive claims and properties.
    see_sensitive: bool,
    /// The rows the principal's row policies hide, as the transaction began (rows it creates
    /// are its own and seen), and the values its masking policies mask, as the state stands.
    policy: Option<Hidden>,
    /// The masking policies that apply (their values are masked again after each change).
    masker: Option<crate::read::mask::Masker>,
    params: &'s super::value::Bound<'s>,
    embed: Option<&'s Embed<'s>>,
    files: Option<&'s FilesFn<'s>>,
    /// Every operation applied, in order: the transaction's record.
    pub applied: Vec<BatchOp>,
    pub stats: QueryStats,
    /// Nodes deleted without DETACH: none may keep a relationship when the query ends.
    deleted_nodes: Vec<EntityId>,
    /// What it wrote: checked against the workspace's constraints when the query ends.
    touched: crate::write::constraints::Touched,
}

fn type_error(what: &str, got: &Val) -> QueryError {
    QueryError::runtime(ErrorType::TypeError, Detail::InvalidArgumentType, format!("{what}, got {}", got.kind()))
}

/// A query value as a stored property value: scalars, and lists of them.
fn property_value(key: &str, v: &Val) -> Result<Value, QueryError> {
    let bad = || {
        QueryError::runtime(
            ErrorType::TypeError,
            Detail::InvalidPropertyType,
            format!("property {key}: {} cannot be stored (scalars, temporal values, points and lists of them can)", v.kind()),
        )
    };
    Ok(match v {
        Val::Null => Value::Null,
        Val::Bool(b) => Value::Bool(*b),
        Val::Int(i) => Value::Int(*i),
        Val::Float(f) => Value::Float(*f),
        Val::Str(s) => Value::Str(s.clone()),
        Val::Temporal(t) => Value::Temporal(Box::new(**t)),
        Val::Point(p) => Value::Point(Box::new(**p)),
        Val::List(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items.iter() {
                match item {
                    Val::List(_) | Val::Map(_) | Val::Node(_) | Val::Rel(_) | Val::Path(_) => return Err(bad()),
                    other => out.push(property_value(key, other)?),
                }
            }
            // A list of floats (an embedding) is stored packed.
            Value::list(out)
        }
        _ => return Err(bad()),
    })
}

fn write_error(e: &crate::error::WriteError) -> QueryError {
    QueryError::runtime(ErrorType::ConstraintValidationFailed, Detail::InvalidArgumentValue, e.to_string())
}

impl<'s> Tx<'s> {
    #[allow(clippy::too_many_arguments)] // Reason: the transaction's whole context, named once here.
    pub fn new(
        st: &'s mut State,
        workspace: &str,
        now: Timestamp,
        limits: &'s Limits,
        cx: &'s ReadContext,
        (see_sensitive, rules): (bool, &Rules),
        params: &'s super::value::Bound<'s>,
        host: Host<'s>,
    ) -> Result<Tx<'s>, crate::error::Error> {
        let ws = st.workspace_id(workspace).ok_or_else(|| crate::error::ReadError::UnknownWorkspace(workspace.to_owned()))?;
        let policy = (!rules.is_empty()).then(|| Hidden::compute(st, ws, rules)).filter(|h| !h.is_empty());
        let masker = rules.masks.clone();
        Ok(Tx {
            policy,
            masker,
            st,
            ws,
            workspace: workspace.to_owned(),
            now,
            limits,
            cx,
            see_sensitive,
            params,
            embed: host.embed,
            files: host.files,
            applied: Vec::new(),
            stats: QueryStats::default(),
            deleted_nodes: Vec::new(),
            touched: crate::write::constraints::Touched::default(),
        })
    }

    /// A view of the transaction's state as it stands, hiding what the principal may not see.
    pub fn view(&self) -> WorkspaceView<'_> {
        let st: &State = self.st;
        let hidden_keys = if self.see_sensitive { None } else { st.settings.sensitive_properties(&self.workspace) };
        WorkspaceView {
            st,
            ws: self.ws,
            now: self.now,
            hide_sensitive: !self.see_sensitive,
            hidden_keys,
            cx: self.cx,
            sees_sensitive: self.see_sensitive,
            policy: self.policy.as_ref().filter(|h| h.hides_rows()),
            masked: self.policy.as_ref().and_then(|h| h.masked.as_ref()),
        }
    }

    /// Runs `f` with a runner over the state as it stands.
    fn read<R>(&self, width: usize, f: impl FnOnce(&Runner<'_, '_, '_>) -> R) -> R {
        let view = self.view();
        let graph = Graph { view: &view, vis: Visibility::current(), now: super::graph::clock_at(self.now) };
        let runner = Runner {
            graph: &graph,
            params: self.params,
            cx: self.cx,
            width,
            embed: self.embed,
            audit: None,
            files: self.files,
            profile: None,
        };
        f(&runner)
    }

    pub(super) fn eval(&self, width: usize, e: &CExpr, row: &[Val]) -> Result<Val, QueryError> {
        self.read(width, |r| r.eval(e, row)).map_err(|e| *e)
    }

    /// Applies `ops` to the state now, as part of the transaction.
    fn apply(&mut self, ops: Vec<BatchOp>) -> Result<Created, QueryError> {
        // The transaction's record is one batch: its replay holds it to the same limit.
        if self.applied.len() + ops.len() > self.limits.batch_ops_max {
            return Err(QueryError::runtime(
                ErrorType::LimitError,
                Detail::Limit,
                format!("the query writes more than batch_ops_max = {} operations in one transaction", self.limits.batch_ops_max),
            ));
        }
        let batch = WriteBatch { workspace: self.workspace.clone(), ops };
        // Constraints hold when the query ends, not after each step (`check_constraints`).
        let created = apply_step(self.st, &batch, self.now, self.limits, &mut self.touched).map_err(|e| write_error(&e))?;
        self.st.reset_caches();
        self.applied.extend(batch.ops);
        if let (Some(m), Some(h)) = (&self.masker, &mut self.policy) {
            // What is read next sees the changed rows masked (a full pass: masked principals'
            // writes pay it, no one else's).
            h.masked = Some(crate::read::mask::Masked::compute(self.st, self.ws, m));
        }
        Ok(created)
    }

    /// Checks the deadline and cancel token every `CHECK_EVERY` rows a write loop handles.
    fn tick(&self, row: usize) -> Result<(), QueryError> {
        if !row.is_multiple_of(crate::read::scope::CHECK_EVERY as usize) {
            return Ok(());
        }
        self.cx.check().map_err(|e| QueryError::runtime(ErrorType::LimitError, Detail::Deadline, format!("the query stopped: {e}")))
    }

    /// Runs one part of the plan; the rows it returns are read back through `view` by the caller.
    /// Runs one part's operators (`ops`: the part's, as the physical step chose them); with
    /// `profile`, records rows out and µs per operator.
    pub fn run_part(&mut self, part: &Part, ops: &[Op], mut profile: Option<&mut Vec<OpStats>>) -> Result<Vec<Row>, QueryError> {
        let mut rows = vec![super::value::nulls(part.width)];
        if profile.is_none() {
            return self.run_ops(part, ops, rows);
        }
        for op in ops {
            let started = profile.is_some().then(std::time::Instant::now);
            rows = self.run_op(part, op, rows)?;
            if let (Some(started), Some(p)) = (started, profile.as_deref_mut()) {
                let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
                p.push(OpStats { rows: rows.len() as u64, micros, read: Vec::new() });
            }
        }
        Ok(rows)
    }

    /// Runs `ops` over `rows` (a batch of `IN TRANSACTIONS`, or the clauses around it).
    pub fn run_ops(&mut self, part: &Part, ops: &[Op], mut rows: Vec<Row>) -> Result<Vec<Row>, QueryError> {
        for op in ops {
            rows = self.run_op(part, op, rows)?;
        }
        Ok(rows)
    }

    /// Runs one operator over `rows`.
    fn run_op(&mut self, part: &Part, op: &Op, rows: Vec<Row>) -> Result<Vec<Row>, QueryError> {
        Ok(match op {
            Op::Create(p) => {
                let mut out = Vec::with_capacity(rows.len());
                for (i, mut row) in rows.into_iter().enumerate() {
                    self.tick(i)?;
                    self.create(part.width, p, &mut row)?;
                    out.push(row);
                }
                out
            }
            Op::Merge(m) => self.merge(part.width, m, rows)?,
            Op::Set(items) => {
                for (i, row) in rows.iter().enumerate() {
                    self.tick(i)?;
                    for item in items {
                        self.set(part.width, item, row)?;
                    }
                }
                rows
            }
            Op::Delete { exprs, detach } => {
                for (i, row) in rows.iter().enumerate() {
                    self.tick(i)?;
                    for e in exprs {
                        let v = self.eval(part.width, e, row)?;
                        self.delete(&v, *detach)?;
                    }
                }
                rows
            }
            Op::Call(c) if c.name == "engram.forget" => {
                let mut out = Vec::with_capacity(rows.len());
                for (i, mut row) in rows.into_iter().enumerate() {
                    self.tick(i)?;
                    let claims = self.forget(part.width, &c.args, &row)?;
                    for (_, slot) in &c.yields {
                        row[*slot] = Val::Int(claims);
                    }
                    out.push(row);
                }
                out
            }
            Op::Foreach { list, slot, ops } => {
                for (i, row) in rows.iter().enumerate() {
                    self.tick(i)?;
                    let items = match self.eval(part.width, list, row)? {
                        Val::Null => continue,
                        Val::List(items) => items,
                        other => {
                            return Err(QueryError::runtime(
                                ErrorType::TypeError,
                                Detail::InvalidArgumentType,
                                format!("FOREACH needs a list, got {}", other.kind()),
                            ))
                        }
                    };
                    for (k, item) in items.iter().enumerate() {
                        self.tick(k)?;
                        let mut inner = row.clone();
                        inner[*slot] = item.clone();
                        let mut inner = vec![inner];
                        for op in ops {
                            inner = self.run_op(part, op, inner)?;
                        }
                    }
                }
                rows
            }
            // An `OPTIONAL CALL { … }` that writes: row by row, as the subquery runs.
            Op::Optional { ops, slots } if ops.iter().any(|o| matches!(o, Op::Subquery { .. })) => optional_rows(rows, slots, |row| {
                let mut inner = vec![row];
                for op in ops {
                    inner = self.run_op(part, op, inner)?;
                }
                Ok(inner)
            })?,
            // Writes inside run here, row by row, each seeing what the rows before it wrote.
            Op::Subquery { branches, distinct, columns } => subquery_rows(rows, branches, *distinct, columns, |ops, row| {
                let mut inner = vec![row];
                for op in ops {
                    inner = self.run_op(part, op, inner)?;
                }
                Ok(inner)
            })?,
            // Met here, it is not at the top of a query (`batches.rs` runs those).
            Op::InTransactions { .. } => return Err(misplaced()),
            read => self.read(part.width, |r| r.run_ops(std::slice::from_ref(read), rows, true).map_err(|e| *e))?,
        })
    }

    /// Refuses a node deleted without DETACH that still has a relationship the principal sees.
    /// The workspace's constraints, over what the query wrote (called when it ends).
    pub fn check_constraints(&mut self) -> Result<(), QueryError> {
        let touched = std::mem::take(&mut self.touched);
        crate::write::constraints::check(self.st, &self.workspace, &touched)
            .map_err(|why| QueryError::runtime(ErrorType::ConstraintValidationFailed, Detail::InvalidArgumentValue, why))
    }

    /// Adds what the query wrote to `all`, which a longer transaction checks when it ends.
    pub fn hand_touched(&mut self, all: &mut crate::write::constraints::Touched) {
        let mine = std::mem::take(&mut self.touched);
        all.entities.extend(mine.entities);
        all.claims.extend(mine.claims);
    }

    pub fn check_deletes(&mut self) -> Result<(), QueryError> {
        for e in std::mem::take(&mut self.deleted_nodes) {
            if self.st.has_standing_claims(e.0, self.see_sensitive) {
                return Err(QueryError::runtime(
                    ErrorType::ConstraintValidationFailed,
                    Detail::DeleteConnectedNode,
                    format!("node {} still has relationships; DETACH DELETE deletes them with it", e.0),
                ));
            }
        }
        Ok(())
    }

    fn props(&self, width: usize, e: Option<&CExpr>, row: &[Val]) -> Result<Properties, QueryError> {
        let Some(e) = e else { return Ok(Properties::new()) };
        match self.eval(width, e, row)? {
            Val::Map(m) => {
                let mut out = Properties::new();
                for (k, v) in m.iter() {
                    let v = property_value(k, v)?;
                    if v != Value::Null {
                        out.insert(k.clone(), v);
                    }
                }
                Ok(out)
            }
            Val::Null => Ok(Properties::new()),
            other => Err(type_error("a property map must be a map", &other)),
        }
    }

    fn node_in(row: &[Val], slot: usize) -> Result<EntityId, QueryError> {
        match &row[slot] {
            Val::Node(n) => Ok(*n),
            other => Err(QueryError::runtime(
                ErrorType::SemanticError,
                Detail::InvalidArgumentType,
                format!("a relationship needs a node at each end, got {}", other.kind()),
            )),
        }
    }

    fn create(&mut self, width: usize, p: &NewPattern, row: &mut Row) -> Result<(), QueryError> {
        for n in &p.nodes {
            if !n.create {
                Self::node_in(row, n.slot)?;
                continue;
            }
            let properties = self.props(width, n.props.as_ref(), row)?;
            self.stats.properties_set += properties.len() as u64;
            let mut labels: Vec<String> = Vec::with_capacity(n.labels.len());
            for l in &n.labels {
                if !labels.iter().any(|x| x == l.as_ref()) {
                    labels.push(l.to_string());
                }
            }
            self.stats.labels_added += labels.len() as u64;
            let created = self.apply(vec![BatchOp::CreateNode(CreateNode { ext_id: None, labels, properties })])?;
            row[n.slot] = Val::Node(created.entities[0]);
            self.stats.nodes_created += 1;
        }
        for r in &p.rels {
            let (from, to) = (Self::node_in(row, r.from)?, Self::node_in(row, r.to)?);
            let properties = self.props(width, r.props.as_ref(), row)?;
            self.stats.properties_set += properties.len() as u64;
            let op = CreateRelationship {
                ext_id: None,
                subject: EntityRef::Id(from),
                rel_type: r.rel_type.to_string(),
                object: EntityRef::Id(to),
                properties,
                valid_from: None,
            };
            let created = self.apply(vec![BatchOp::CreateRelationship(op)])?;
            row[r.slot] = Val::Rel(created.claims[0]);
            self.stats.relationships_created += 1;
        }
        if !p.paths.is_empty() {
            let view = self.view();
            let graph = Graph { view: &view, vis: Visibility::current(), now: super::graph::clock_at(self.now) };
            let paths: Vec<(usize, Val)> = p.paths.iter().map(|spec| (spec.slot, build_path(&graph, spec, row))).collect();
            for (slot, v) in paths {
                row[slot] = v;
            }
        }
        Ok(())
    }

    fn merge(&mut self, width: usize, m: &MergePlan, rows: Vec<Row>) -> Result<Vec<Row>, QueryError> {
        let mut out = Vec::with_capacity(rows.len());
        for (i, row) in rows.into_iter().enumerate() {
            self.tick(i)?;
            self.no_null_in_merge(width, &m.create, &row)?;
            let found = self.read(width, |r| r.run_ops(&m.matching, vec![row.clone()], false).map_err(|e| *e))?;
            if found.is_empty() {
                let mut row = row;
                self.create(width, &m.create, &mut row)?;
                for item in &m.on_create {
                    self.set(width, item, &row)?;
                }
                out.push(row);
            } else {
                for f in found {
                    for item in &m.on_match {
                        self.set(width, item, &f)?;
                    }
                    out.push(f);
                }
            }
        }
        Ok(out)
    }

    /// MERGE cannot match a null property (nothing equals null) and would create a duplicate on
    /// every run: refused, as Cypher does.
    fn no_null_in_merge(&self, width: usize, p: &NewPattern, row: &[Val]) -> Result<(), QueryError> {
        let maps = p.nodes.iter().filter_map(|n| n.props.as_ref()).chain(p.rels.iter().filter_map(|r| r.props.as_ref()));
        for e in maps {
            if let Val::Map(m) = self.eval(width, e, row)? {
                if let Some((k, _)) = m.iter().find(|(_, v)| v.is_null()) {
                    return Err(QueryError::runtime(
                        ErrorType::SemanticError,
                        Detail::MergeReadOwnWrites,
                        format!("MERGE cannot match the null property {k}"),
                    ));
                }
            }
        }
        Ok(())
    }

    fn element(v: &Val, what: &str) -> Result<Option<Element>, QueryError> {
        match v {
            Val::Node(n) => Ok(Some(Element::Entity(EntityRef::Id(*n)))),
            Val::Rel(c) => Ok(Some(Element::Claim(ClaimRef::Id(*c)))),
            Val::Null => Ok(None),
            other => Err(type_error(what, other)),
        }
    }

    fn set(&mut self, width: usize, item: &SetItem, row: &[Val]) -> Result<(), QueryError> {
        match item {
            SetItem::Prop { target, key, value } => {
                let t = self.eval(width, target, row)?;
                let Some(target) = Self::element(&t, "SET and REMOVE take a node or a relationship")? else { return Ok(()) };
                let v = property_value(key, &self.eval(width, value, row)?)?;
                if v == Value::Null {
                    self.stats.properties_removed += 1;
                } else {
                    self.stats.properties_set += 1;
                }
                let mut properties = Properties::new();
                properties.insert(key.clone(), v);
                self.apply(vec![BatchOp::SetProperties { target, properties, replace: false }])?;
            }
            SetItem::Props { target, value, replace } => {
                let t = self.eval(width, target, row)?;
                let Some(target) = Self::element(&t, "SET takes a node or a relationship")? else { return Ok(()) };
                let source = self.eval(width, value, row)?;
                let map: Vec<(Arc<str>, Val)> = self.read(width, |r| match &source {
                    Val::Map(m) => Ok(m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
                    Val::Node(n) => Ok(r.graph.node_props(*n).into_iter().collect()),
                    Val::Rel(c) => Ok(r.graph.rel_props(*c).into_iter().collect()),
                    Val::Null => Ok(Vec::new()),
                    other => Err(type_error("SET takes a map of properties", other)),
                })?;
                let mut properties = Properties::new();
                for (k, v) in &map {
                    properties.insert(k.clone(), property_value(k, v)?);
                }
                self.stats.properties_set += properties.values().filter(|v| **v != Value::Null).count() as u64;
                self.apply(vec![BatchOp::SetProperties { target, properties, replace: *replace }])?;
            }
            SetItem::Labels { target, labels, add } => {
                let t = self.eval(width, target, row)?;
                let entity = match t {
                    Val::Node(n) => n,
                    Val::Null => return Ok(()),
                    other => return Err(type_error("labels belong to nodes", &other)),
                };
                let before: Vec<Arc<str>> = self.read(width, |r| r.graph.labels(entity));
                let names: Vec<String> = labels.iter().map(ToString::to_string).collect();
                let changed = labels.iter().filter(|l| before.contains(l) != *add).count() as u64;
                let (add_list, remove_list) = if *add { (names, Vec::new()) } else { (Vec::new(), names) };
                if *add {
                    self.stats.labels_added += changed;
                } else {
                    self.stats.labels_removed += changed;
                }
                self.apply(vec![BatchOp::SetLabels { entity: EntityRef::Id(entity), add: add_list, remove: remove_list }])?;
            }
        }
        Ok(())
    }

    fn delete(&mut self, v: &Val, detach: bool) -> Result<(), QueryError> {
        match v {
            Val::Null => Ok(()),
            Val::Node(n) => self.delete_node(*n, detach),
            Val::Rel(c) => self.delete_rel(*c),
            Val::Path(p) => {
                for (c, _) in &p.steps {
                    self.delete_rel(*c)?;
                }
                self.delete_node(p.start, detach)?;
                for (_, n) in &p.steps {
                    self.delete_node(*n, detach)?;
                }
                Ok(())
            }
            other => Err(type_error("DELETE takes a node, a relationship or a path", other)),
        }
    }

    /// `engram.forget(node)`: erases the node with every claim it takes part in; the count is of
    /// the claims the principal sees (hidden ones go too, uncounted).
    fn forget(&mut self, width: usize, args: &[CExpr], row: &[Val]) -> Result<i64, QueryError> {
        let Some(arg) = args.first() else { return Ok(0) };
        let n = match self.eval(width, arg, row)? {
            Val::Node(n) => n,
            Val::Null => return Ok(0),
            other => return Err(type_error("engram.forget takes a node", &other)),
        };
        let seen = self.visible_claims(n).len();
        self.apply(vec![BatchOp::Forget(crate::write::batch::ForgetTarget::Entity(EntityRef::Id(n)))])?;
        Ok(i64::try_from(seen).unwrap_or(i64::MAX))
    }

    /// The claims at node `n` the principal sees now, each once (a self-loop shows both ways).
    fn visible_claims(&self, n: EntityId) -> Vec<ClaimId> {
        self.read(0, |r| {
            let mut out = Vec::new();
            for dir in [crate::index::graph::Direction::Out, crate::index::graph::Direction::In] {
                if let Some(x) = r.graph.expander(dir, &[], None) {
                    out.extend(x.edges(n).map(|e| e.claim));
                }
            }
            out.sort_unstable();
            out.dedup();
            out
        })
    }

    fn delete_rel(&mut self, c: ClaimId) -> Result<(), QueryError> {
        if self.st.claim_is_deleted(c.0) {
            return Ok(());
        }
        self.apply(vec![BatchOp::DeleteClaim { claim: ClaimRef::Id(c) }])?;
        self.stats.relationships_deleted += 1;
        Ok(())
    }

    fn delete_node(&mut self, n: EntityId, detach: bool) -> Result<(), QueryError> {
        if self.st.entity_is_deleted(n.0) {
            return Ok(());
        }
        if detach {
            // Only the relationships the principal sees; hidden ones go out of sight with the node.
            let rels = self.visible_claims(n);
            for c in rels {
                self.delete_rel(c)?;
            }
        } else {
            self.deleted_nodes.push(n);
        }
        self.apply(vec![BatchOp::DeleteEntity { entity: EntityRef::Id(n) }])?;
        self.stats.nodes_deleted += 1;
        Ok(())
    }
}

/// `IN TRANSACTIONS` where it may not run (`batches.rs` runs it at the top of a query).
pub(super) fn misplaced() -> QueryError {
    QueryError::runtime(
        ErrorType::SemanticError,
        Detail::InvalidClauseComposition,
        "CALL { … } IN TRANSACTIONS runs at the top of a query of one part (not inside a subquery, FOREACH, UNION or a \
         transaction of several statements), once, after clauses that only read",
    )
}
