//! From a checked syntax tree to the logical plan: variables become slots, each MATCH pattern a
//! chain of scans, seeks and expands starting where it is cheapest to start without statistics
//! (a bound variable, an `{id: …}` seek, a label scan, then any node), projections become Project
//! or Aggregate with Distinct, Sort, Skip and Limit after them. The rewrites here need no
//! statistics (filters pushed into patterns, count fused into expand, breadth-first reach where
//! paths are unused); the engine makes the choices that need the catalog's counts.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::ast::{
    Call, Clause, Direction, Expr, ExprKind, Literal, MapProjectionItem, Match, NodePattern, PatternPart, Projection, RemoveItem,
    SetItem as AstSetItem, Shortest, SingleQuery, Statement, SubqueryKind, Temporal, UnaryOp,
};
use crate::functions::{function, procedure, FunctionKind};
use crate::{Detail, ErrorType, QueryError};

use crate::plan::{
    AggFn, Aggregate, CExpr, Const, GroupHop, GroupNode, GroupStep, Hop, MergePlan, NewNode, NewPattern, NewRel, NodeTest, Op, Part,
    PathSpec, Plan, ProcCall, SetItem, SortKey,
};

/// The temporal prefix, compiled.
#[derive(Clone, Debug)]
pub enum When {
    /// No prefix: what is visible now.
    Now,
    /// `AS OF t`: valid time.
    AsOf(CExpr),
    /// `KNOWN AS OF t`: transaction time.
    KnownAsOf(CExpr),
    /// `ALL VERSIONS`: deleted and superseded too.
    AllVersions,
}

/// A compiled statement.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The plan.
    pub plan: Plan,
    /// The temporal prefix.
    pub when: When,
    /// Slot names per part, for EXPLAIN.
    pub slot_names: Vec<Vec<String>>,
    /// The query writes (it needs a write transaction and write access).
    pub writes: bool,
    /// Run, EXPLAIN or PROFILE.
    pub mode: crate::ast::Mode,
    /// Whether a run has used this plan already (FalkorDB's `Cached execution`).
    pub ran: RanFlag,
}

/// Set by the executor on a plan's first run; a clone starts with the same value.
#[derive(Debug, Default)]
pub struct RanFlag(std::sync::atomic::AtomicBool);

impl RanFlag {
    /// Marks a run, returning whether an earlier run had used the plan. A load first: once set,
    /// a run writes nothing to the plan the threads share.
    pub fn mark(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        self.0.load(Relaxed) || self.0.swap(true, Relaxed)
    }
}

impl Clone for RanFlag {
    fn clone(&self) -> RanFlag {
        RanFlag(std::sync::atomic::AtomicBool::new(self.0.load(std::sync::atomic::Ordering::Relaxed)))
    }
}

/// The hidden names of the slots `LOAD CSV` fills with a row's line number and file's path.
const LINE_SLOT: &str = " linenumber()";
const FILE_SLOT: &str = " file()";

/// Parses, checks and compiles `text`.
pub fn compile(text: &str) -> Result<Compiled, QueryError> {
    if text.len() > crate::limits::MAX_TEXT_BYTES {
        return Err(QueryError {
            kind: ErrorType::LimitError,
            detail: Detail::Limit,
            phase: crate::Phase::Compile,
            message: format!("the query is {} bytes; query.max_text_bytes is {}", text.len(), crate::limits::MAX_TEXT_BYTES),
            at: None,
        });
    }
    let statement: Statement = crate::parse(text)?;
    let checked = crate::check(text, &statement)?;
    let mut params = BTreeSet::new();
    let when = {
        let mut c = Compiler::new(text, &mut params);
        match &statement.temporal {
            Temporal::Now => When::Now,
            Temporal::AllVersions => When::AllVersions,
            Temporal::AsOf(e) => When::AsOf(c.expr(e)?),
            Temporal::KnownAsOf(e) => When::KnownAsOf(c.expr(e)?),
        }
    };
    let mut parts = Vec::new();
    let mut slot_names = Vec::new();
    let queries = std::iter::once(&statement.query.first).chain(statement.query.unions.iter().map(|(_, q)| q));
    for q in queries {
        let mut c = Compiler::new(text, &mut params);
        let part = read_in_place(c.single(q)?);
        slot_names.push(c.slots.clone());
        parts.push(part);
    }
    let distinct = statement.query.unions.first().is_some_and(|(all, _)| !all);
    let plan = Plan { parts, distinct, columns: checked.columns.into(), params: params.into_iter().collect() };
    Ok(Compiled { plan, when, slot_names, writes: checked.writes, mode: statement.mode, ran: RanFlag::default() })
}

fn unsupported(text: &str, what: &str, span: crate::Span) -> QueryError {
    QueryError {
        kind: ErrorType::SemanticError,
        detail: Detail::Unsupported,
        phase: crate::Phase::Compile,
        message: format!("{what} is not supported yet"),
        at: Some(crate::Position::of(text, span.start)),
    }
}

struct Compiler<'t, 'p> {
    text: &'t str,
    slots: Vec<String>,
    scope: HashMap<String, usize>,
    locals: Vec<String>,
    params: &'p mut BTreeSet<Arc<str>>,
    /// Expressions (by their text without whitespace) already computed into a slot.
    subst: Vec<(String, usize)>,
    /// Where aggregates go while compiling an aggregating projection's items.
    aggregates: Option<Vec<Aggregate>>,
    /// The MATCH being compiled may walk its variable-length hop breadth first (see `reach_ok`).
    reach: bool,
}

impl<'t, 'p> Compiler<'t, 'p> {
    fn new(text: &'t str, params: &'p mut BTreeSet<Arc<str>>) -> Self {
        Compiler {
            text,
            slots: Vec::new(),
            scope: HashMap::new(),
            locals: Vec::new(),
            params,
            subst: Vec::new(),
            aggregates: None,
            reach: false,
        }
    }

    fn slot(&mut self, name: &str) -> usize {
        self.slots.push(name.to_owned());
        self.slots.len() - 1
    }

    fn squash(&self, e: &Expr) -> String {
        self.text.get(e.span.start..e.span.end).unwrap_or("").chars().filter(|c| !c.is_whitespace()).collect()
    }

    fn single(&mut self, q: &SingleQuery) -> Result<Part, QueryError> {
        let mut ops = Vec::new();
        let mut columns = Vec::new();
        for (i, clause) in q.clauses.iter().enumerate() {
            self.reach = matches!(clause, Clause::Match(m) if self.reach_ok(m, q.clauses.get(i + 1)));
            match clause {
                Clause::Match(m) if m.optional => {
                    let before: BTreeSet<usize> = self.scope.values().copied().collect();
                    let inner = self.match_ops(m)?;
                    let slots: Vec<usize> = self.scope.values().copied().filter(|s| !before.contains(s)).collect();
                    ops.push(Op::Optional { ops: inner, slots });
                }
                Clause::Match(m) => ops.extend(self.match_ops(m)?),
                Clause::Unwind(u) => {
                    let expr = self.expr(&u.expr)?;
                    let slot = self.slot(&u.var.name);
                    self.scope.insert(u.var.name.clone(), slot);
                    ops.push(Op::Unwind { expr, slot });
                }
                Clause::LoadCsv(l) => {
                    let from = self.expr(&l.from)?;
                    let slot = self.slot(&l.var.name);
                    self.scope.insert(l.var.name.clone(), slot);
                    // Hidden names (a leading space): `linenumber()` and `file()` read them.
                    let (line_slot, file_slot) = (self.slot(LINE_SLOT), self.slot(FILE_SLOT));
                    self.scope.insert(LINE_SLOT.to_owned(), line_slot);
                    self.scope.insert(FILE_SLOT.to_owned(), file_slot);
                    let delimiter = l.terminator.as_ref().and_then(|(t, _)| crate::plan::field_terminator(t)).unwrap_or(b',');
                    ops.push(Op::LoadCsv { from, slot, headers: l.headers, delimiter, line_slot, file_slot });
                }
                Clause::With(p) => {
                    self.projection(p, &mut ops)?;
                }
                Clause::Return(p) => columns = self.projection(p, &mut ops)?,
                Clause::Call(c) if c.optional => {
                    let mut inner = Vec::new();
                    columns = self.call(c, &mut inner)?;
                    ops.push(Op::Optional { ops: inner, slots: columns.iter().map(|(_, s)| *s).collect() });
                }
                Clause::Call(c) => columns = self.call(c, &mut ops)?,
                Clause::Subquery(sq) => ops.push(self.subquery_clause(sq)?),
                Clause::Foreach(f) => {
                    let list = self.expr(&f.list)?;
                    let outer = self.scope.clone();
                    let slot = self.slot(&f.var.name);
                    self.scope.insert(f.var.name.clone(), slot);
                    let inner = self.single(&SingleQuery { clauses: f.clauses.clone(), finish: false, span: f.span });
                    self.scope = outer;
                    ops.push(Op::Foreach { list, slot, ops: inner?.ops });
                }
                Clause::Create(c) => {
                    let mut pattern = NewPattern::default();
                    for part in &c.pattern {
                        self.new_part(part, &mut pattern)?;
                    }
                    ops.push(Op::Create(pattern));
                }
                Clause::Merge(m) => ops.push(self.merge(m)?),
                Clause::Set(s) => {
                    let mut items = Vec::new();
                    for item in &s.items {
                        items.push(self.set_item(item)?);
                    }
                    ops.push(Op::Set(items));
                }
                Clause::Remove(r) => {
                    let mut items = Vec::new();
                    for item in &r.items {
                        items.push(match item {
                            RemoveItem::Property { target, key } => SetItem::Prop {
                                target: self.expr(target)?,
                                key: Arc::from(key.name.as_str()),
                                value: CExpr::Const(Const::Null),
                            },
                            RemoveItem::Labels { var, labels } => SetItem::Labels {
                                target: self.var_expr(var)?,
                                labels: labels.iter().map(|l| Arc::from(l.name.as_str())).collect(),
                                add: false,
                            },
                        });
                    }
                    ops.push(Op::Set(items));
                }
                Clause::Delete(d) => {
                    let mut exprs = Vec::new();
                    for e in &d.exprs {
                        exprs.push(self.expr(e)?);
                    }
                    ops.push(Op::Delete { exprs, detach: d.detach });
                }
            }
        }
        if q.finish {
            // `FINISH`: everything runs, nothing is returned.
            ops.push(Op::Limit(CExpr::Const(Const::Int(0))));
        }
        Ok(Part { ops: fuse(ops), width: self.slots.len(), columns })
    }

    /// `CALL { … }`: each part compiled with the outer variables in scope only if it starts with
    /// an importing `WITH` (the checker's rule), ending with a projection of its columns into
    /// slots shared by every part, which the outer query then sees.
    /// `[OPTIONAL] CALL { … } [IN TRANSACTIONS …]`: the subquery, wrapped as each asks.
    fn subquery_clause(&mut self, sq: &crate::ast::Subquery) -> Result<Op, QueryError> {
        let op = self.subquery(sq)?;
        Ok(match (&sq.in_transactions, op) {
            (Some(t), op) => {
                let rows = t.rows.as_ref().map(|n| self.expr(n)).transpose()?;
                let status = t.status.as_ref().map(|v| {
                    let slot = self.slot(&v.name);
                    self.scope.insert(v.name.clone(), slot);
                    slot
                });
                Op::InTransactions { sub: Box::new(op), rows, on_error: t.on_error, status }
            }
            (None, op @ Op::Subquery { .. }) if sq.optional => {
                let slots = match &op {
                    Op::Subquery { columns, .. } => columns.clone(),
                    _ => Vec::new(),
                };
                Op::Optional { ops: vec![op], slots }
            }
            (None, op) => op,
        })
    }

    fn subquery(&mut self, sq: &crate::ast::Subquery) -> Result<Op, QueryError> {
        let outer = self.scope.clone();
        let outer_subst = std::mem::take(&mut self.subst);
        let mut branches = Vec::new();
        let mut out: Vec<(String, usize)> = Vec::new();
        let parts = std::iter::once(&sq.query.first).chain(sq.query.unions.iter().map(|(_, q)| q));
        for part in parts {
            // The checker made sure every name a scope clause lists is bound outside.
            self.scope = match sq.outer_seen(part) {
                None => HashMap::new(),
                Some(None) => outer.clone(),
                Some(Some(vars)) => vars.iter().filter_map(|v| Some((v.name.clone(), *outer.get(&v.name)?))).collect(),
            };
            self.subst.clear();
            let inner = self.single(part)?;
            if out.is_empty() {
                for (name, _) in &inner.columns {
                    out.push((name.clone(), self.slot(name)));
                }
            }
            let mut ops = inner.ops;
            ops.push(Op::Project(inner.columns.iter().zip(&out).map(|((_, from), (_, to))| (*to, CExpr::Slot(*from))).collect()));
            branches.push(ops);
        }
        self.scope = outer;
        self.subst = outer_subst;
        for (name, slot) in &out {
            self.scope.insert(name.clone(), *slot);
        }
        let distinct = sq.query.unions.first().is_some_and(|(all, _)| !all);
        Ok(Op::Subquery { branches, distinct, columns: out.into_iter().map(|(_, s)| s).collect() })
    }

    fn call(&mut self, c: &Call, ops: &mut Vec<Op>) -> Result<Vec<(String, usize)>, QueryError> {
        let Some(p) = procedure(&c.procedure.name) else {
            return Err(unsupported(self.text, "this procedure", c.procedure.span));
        };
        let mut args = Vec::new();
        for a in c.args.iter().flatten() {
            args.push(self.expr(a)?);
        }
        let mut yields = Vec::new();
        let mut columns = Vec::new();
        let items: Vec<(String, String)> = match &c.yields {
            Some(items) => items.iter().map(|(col, var)| (col.name.clone(), var.name.clone())).collect(),
            None => p.yields.iter().map(|y| ((*y).to_owned(), (*y).to_owned())).collect(),
        };
        for (col, var) in items {
            let index = p.yields.iter().position(|y| *y == col).unwrap_or(0);
            let slot = self.slot(&var);
            self.scope.insert(var.clone(), slot);
            yields.push((index, slot));
            columns.push((var, slot));
        }
        ops.push(Op::Call(ProcCall { name: p.name, args, yields }));
        if let Some(w) = &c.predicate {
            let pred = self.expr(w)?;
            ops.push(Op::Filter(pred));
        }
        Ok(columns)
    }

    // ---- writes --------------------------------------------------------------------------

    /// A variable as an expression (SET and REMOVE name their targets so).
    fn var_expr(&mut self, v: &crate::ast::Var) -> Result<CExpr, QueryError> {
        self.expr(&Expr { kind: ExprKind::Var(v.name.clone()), span: v.span })
    }

    fn set_item(&mut self, item: &AstSetItem) -> Result<SetItem, QueryError> {
        Ok(match item {
            AstSetItem::Property { target, key, value } => {
                SetItem::Prop { target: self.expr(target)?, key: Arc::from(key.name.as_str()), value: self.expr(value)? }
            }
            AstSetItem::Properties { var, value, merge } => {
                SetItem::Props { target: self.var_expr(var)?, value: self.expr(value)?, replace: !merge }
            }
            AstSetItem::Labels { var, labels } => SetItem::Labels {
                target: self.var_expr(var)?,
                labels: labels.iter().map(|l| Arc::from(l.name.as_str())).collect(),
                add: true,
            },
        })
    }

    /// Adds a CREATE pattern part's elements to `pattern`: a node variable bound before (or
    /// earlier in the same CREATE) is reused, every other node and every relationship is new.
    fn new_part(&mut self, part: &PatternPart, pattern: &mut NewPattern) -> Result<(), QueryError> {
        let mut node_slots = Vec::with_capacity(part.chain.len() + 1);
        for n in std::iter::once(&part.start).chain(part.chain.iter().map(|(_, n)| n)) {
            let (slot, bound) = self.node_slot(n);
            let props = n.props.as_ref().map(|p| self.expr(p)).transpose()?;
            pattern.nodes.push(NewNode {
                slot,
                create: !bound,
                labels: n.labels.iter().map(|l| Arc::from(l.name.as_str())).collect(),
                props,
            });
            node_slots.push(slot);
        }
        let mut hops = Vec::with_capacity(part.chain.len());
        for (i, (rel, _)) in part.chain.iter().enumerate() {
            let (slot, _) = self.element_slot(rel.var.as_ref(), "  anon_rel");
            let (from, to) = match rel.direction {
                Direction::In => (node_slots[i + 1], node_slots[i]),
                Direction::Out | Direction::Both => (node_slots[i], node_slots[i + 1]),
            };
            let rel_type = rel.types.first().map_or_else(|| Arc::from(""), |t| Arc::from(t.name.as_str()));
            let props = rel.props.as_ref().map(|p| self.expr(p)).transpose()?;
            pattern.rels.push(NewRel { slot, rel_type, from, to, props });
            hops.push((slot, false));
        }
        if let Some(v) = &part.var {
            let slot = self.slot(&v.name);
            self.scope.insert(v.name.clone(), slot);
            pattern.paths.push(PathSpec { slot, start: node_slots[0], hops, nodes: node_slots });
        }
        Ok(())
    }

    /// A MERGE: its pattern matched as a MATCH would, and created with the same slots.
    fn merge(&mut self, m: &crate::ast::Merge) -> Result<Op, QueryError> {
        let before: BTreeSet<usize> = self.scope.values().copied().collect();
        let mut matching = Vec::new();
        let path = self.part_ops(&m.part, &mut matching, &mut Vec::new(), &mut [])?;
        let part = &m.part;
        let mut create = NewPattern::default();
        for (i, n) in std::iter::once(&part.start).chain(part.chain.iter().map(|(_, n)| n)).enumerate() {
            let slot = path.nodes[i];
            let props = n.props.as_ref().map(|p| self.expr(p)).transpose()?;
            let labels = n.labels.iter().map(|l| Arc::from(l.name.as_str())).collect();
            create.nodes.push(NewNode { slot, create: !before.contains(&slot), labels, props });
        }
        for (i, (rel, _)) in part.chain.iter().enumerate() {
            let (a, b) = (path.nodes[i], path.nodes[i + 1]);
            let (from, to) = if rel.direction == Direction::In { (b, a) } else { (a, b) };
            let rel_type = rel.types.first().map_or_else(|| Arc::from(""), |t| Arc::from(t.name.as_str()));
            let props = rel.props.as_ref().map(|p| self.expr(p)).transpose()?;
            create.rels.push(NewRel { slot: path.hops[i].0, rel_type, from, to, props });
        }
        if part.var.is_some() {
            create.paths.push(path);
        }
        let mut on_match = Vec::new();
        for item in &m.on_match {
            on_match.push(self.set_item(item)?);
        }
        let mut on_create = Vec::new();
        for item in &m.on_create {
            on_create.push(self.set_item(item)?);
        }
        Ok(Op::Merge(Box::new(MergePlan { matching, create, on_match, on_create })))
    }

    // ---- patterns ------------------------------------------------------------------------

    fn match_ops(&mut self, m: &Match) -> Result<Vec<Op>, QueryError> {
        let mut ops = Vec::new();
        let mut rels_here = Vec::new();
        let conjuncts: Vec<&Expr> = m.predicate.as_ref().map(conjuncts).unwrap_or_default();
        let mut seeks = self.seeks(m, &conjuncts);
        let (pattern, pushed) = self.pushed_properties(m, &conjuncts, &seeks);
        let bound_before: BTreeSet<String> = self.scope.keys().cloned().collect();
        for part in pattern.as_deref().unwrap_or(&m.pattern) {
            self.part_ops(part, &mut ops, &mut rels_here, &mut seeks)?;
        }
        // An `=` a seek answers is true for every row it gives: the filter drops it. An `IN`
        // stays: on a value that is no list it is the filter's type error that answers. A
        // property equality the pattern took is answered by its node test.
        let answered = |i: usize| {
            seeks.iter().any(|s| s.used && matches!(s.by, SeekBy::Identity { many: false, .. }) && s.conjunct == i) || pushed.contains(&i)
        };
        let kept: Vec<&Expr> = conjuncts.iter().enumerate().filter(|(i, _)| !answered(*i)).map(|(_, c)| *c).collect();
        let kept = self.place_early(m, &bound_before, &mut ops, kept)?;
        let rebuilt;
        let predicate = match &m.predicate {
            Some(w) if kept.len() == conjuncts.len() => Some(w),
            Some(w) => {
                rebuilt = kept
                    .into_iter()
                    .cloned()
                    .reduce(|a, b| Expr::new(ExprKind::Binary(crate::ast::BinaryOp::And, Box::new(a), Box::new(b)), w.span));
                rebuilt.as_ref()
            }
            None => None,
        };
        if let Some(w) = predicate {
            // A breadth-first reach takes `WHERE b <> a` into the walk itself.
            let absorbed = match ops.last_mut() {
                Some(Op::Expand(h))
                    if h.reach && self.exclusion_slots(w).is_some_and(|(x, y)| (x, y) == (h.from, h.to) || (y, x) == (h.from, h.to)) =>
                {
                    h.exclude_start = true;
                    true
                }
                _ => false,
            };
            if !absorbed {
                ops.push(Op::Filter(self.expr(w)?));
            }
        }
        Ok(ops)
    }

    /// Moves the WHERE's conjuncts that read only this pattern's new nodes and single-hop
    /// relationships to right after the operator that binds the last of them (when that is not
    /// the last one): a row is dropped before the expansions after it, and a filter right after a
    /// scan is applied to each candidate. Only conjuncts that cannot fail move (comparisons, null
    /// and label tests, and AND / OR / XOR / NOT of those, over properties, literals and
    /// parameters), so no error appears on a row a later operator would have dropped. Gives the
    /// conjuncts left for the end.
    fn place_early<'e>(
        &mut self,
        m: &Match,
        bound_before: &BTreeSet<String>,
        ops: &mut Vec<Op>,
        kept: Vec<&'e Expr>,
    ) -> Result<Vec<&'e Expr>, QueryError> {
        if kept.is_empty() {
            return Ok(kept);
        }
        // The variables a moved conjunct may read, by slot: nodes and single-hop relationships
        // this MATCH binds (graph elements, so reading their properties cannot fail).
        let mut movable: HashMap<&str, (usize, bool)> = HashMap::new();
        for part in &m.pattern {
            let nodes =
                std::iter::once(&part.start).chain(part.chain.iter().map(|(_, n)| n)).filter_map(|n| n.var.as_ref()).map(|v| (v, true));
            let rels = part.chain.iter().filter(|(r, _)| r.length.is_none()).filter_map(|(r, _)| r.var.as_ref()).map(|v| (v, false));
            for (v, node) in nodes.chain(rels) {
                if let (false, Some(&slot)) = (bound_before.contains(&v.name), self.scope.get(&v.name)) {
                    movable.insert(v.name.as_str(), (slot, node));
                }
            }
        }
        if movable.is_empty() || ops.len() < 2 {
            return Ok(kept);
        }
        // The slots bound once each operator has run.
        let mut bound = std::collections::HashSet::new();
        let bound_after: Vec<std::collections::HashSet<usize>> = ops
            .iter()
            .map(|op| {
                match op {
                    Op::ScanNodes { slot, .. }
                    | Op::SeekNode { slot, .. }
                    | Op::SeekNodeByIdentity { slot, .. }
                    | Op::SeekNodesByProperty { slot, .. }
                    | Op::SeekNodesByRange { slot, .. } => {
                        bound.insert(*slot);
                    }
                    Op::Expand(h) => {
                        bound.insert(h.rel);
                        bound.insert(h.to);
                    }
                    _ => {}
                }
                bound.clone()
            })
            .collect();
        let mut early: Vec<(usize, &'e Expr)> = Vec::new();
        let mut left = Vec::new();
        for c in kept {
            let mut slots = Vec::new();
            let at = if infallible_test(c, &movable, &mut slots) && !slots.is_empty() {
                bound_after.iter().position(|b| slots.iter().all(|s| b.contains(s))).filter(|&i| i + 1 < ops.len())
            } else {
                None
            };
            match at {
                Some(i) => early.push((i, c)),
                None => left.push(c),
            }
        }
        // From the back, so the positions before stay valid; conjuncts after one operator keep
        // their order.
        for (i, c) in early.into_iter().rev() {
            let e = self.expr(c)?;
            ops.insert(i + 1, Op::Filter(e));
        }
        Ok(left)
    }

    /// The pattern with the WHERE's property equalities moved into its node patterns, and which
    /// conjuncts moved (`None`: none did). `v.k = e` (or `e = v.k`), with `v` a node of the
    /// pattern not bound before and `e` a literal or a parameter, means what `(v {k: e})` means;
    /// as a node test it is checked on each candidate as it is found, before a row is built, and
    /// `{id: e}` is a seek. Not for a node a seek by internal id starts from, nor one whose
    /// property map is a parameter.
    fn pushed_properties(&self, m: &Match, conjuncts: &[&Expr], seeks: &[Seek]) -> (Option<Vec<PatternPart>>, Vec<usize>) {
        let prop_of = |e: &Expr| match &e.kind {
            ExprKind::Prop(t, k) => match &t.kind {
                ExprKind::Var(v) => Some((v.clone(), k.clone())),
                _ => None,
            },
            _ => None,
        };
        let mut pattern: Option<Vec<PatternPart>> = None;
        let mut pushed = Vec::new();
        for (i, c) in conjuncts.iter().enumerate() {
            let ExprKind::Binary(crate::ast::BinaryOp::Eq, x, y) = &c.kind else { continue };
            let found =
                prop_of(x).filter(|_| is_constant(y)).map(|p| (p, y)).or_else(|| prop_of(y).filter(|_| is_constant(x)).map(|p| (p, x)));
            let Some(((var, key), value)) = found else { continue };
            if self.scope.contains_key(&var) || seeks.iter().any(|s| s.var == var && s.by_identity()) {
                continue;
            }
            let parts = pattern.get_or_insert_with(|| m.pattern.clone());
            let mut took = false;
            for part in parts.iter_mut() {
                for node in std::iter::once(&mut part.start).chain(part.chain.iter_mut().map(|(_, n)| n)) {
                    if node.var.as_ref().is_none_or(|v| v.name != var) {
                        continue;
                    }
                    match &mut node.props {
                        None => {
                            node.props = Some(Expr::new(ExprKind::Map(vec![(key.clone(), (**value).clone())]), c.span));
                            took = true;
                        }
                        Some(Expr { kind: ExprKind::Map(items), .. }) => {
                            items.push((key.clone(), (**value).clone()));
                            took = true;
                        }
                        // A parameter map: MATCH refuses it, with its own error.
                        Some(_) => {}
                    }
                }
            }
            if took {
                pushed.push(i);
            }
        }
        if pushed.is_empty() {
            return (None, pushed);
        }
        (pattern, pushed)
    }

    /// The seeks the conjuncts of a MATCH's WHERE allow, with `v` a node of the pattern not bound
    /// before and `e` a literal or a parameter: by internal id, `id(v) = e`, `e = id(v)` or
    /// `id(v) IN e`, the first one per variable; then by a property, `v.k IN e`, the first one
    /// per variable with no seek by internal id.
    fn seeks(&self, m: &Match, conjuncts: &[&Expr]) -> Vec<Seek> {
        let in_pattern = |v: &str| {
            m.pattern.iter().any(|p| {
                std::iter::once(&p.start).chain(p.chain.iter().map(|(_, n)| n)).any(|n| n.var.as_ref().is_some_and(|x| x.name == v))
            })
        };
        let mut seeks: Vec<Seek> = Vec::new();
        for (i, c) in conjuncts.iter().enumerate() {
            let ExprKind::Binary(op, x, y) = &c.kind else { continue };
            let found = match op {
                crate::ast::BinaryOp::Eq => identity_of(x)
                    .filter(|_| is_constant(y))
                    .map(|v| (v, y, false))
                    .or_else(|| identity_of(y).filter(|_| is_constant(x)).map(|v| (v, x, false))),
                crate::ast::BinaryOp::In => identity_of(x).filter(|_| is_constant_list(y)).map(|v| (v, y, true)),
                _ => None,
            };
            if let Some((var, value, many)) = found {
                if !self.scope.contains_key(var) && in_pattern(var) && !seeks.iter().any(|s| s.var == var) {
                    let by = SeekBy::Identity { value: (**value).clone(), many };
                    seeks.push(Seek { var: var.to_owned(), by, conjunct: i, used: false });
                }
            }
        }
        for (i, c) in conjuncts.iter().enumerate() {
            let ExprKind::Binary(crate::ast::BinaryOp::In, x, y) = &c.kind else { continue };
            let ExprKind::Prop(target, key) = &x.kind else { continue };
            let ExprKind::Var(var) = &target.kind else { continue };
            // `aliases` and `created_at` have no index to look up (a scan answers them).
            let indexed = key.name == "id" || crate::plan::node_key_indexed(&key.name);
            if indexed && is_constant_list(y) && !self.scope.contains_key(var) && in_pattern(var) && !seeks.iter().any(|s| s.var == *var) {
                let by = SeekBy::Values { key: Arc::from(key.name.as_str()), value: (**y).clone() };
                seeks.push(Seek { var: var.clone(), by, conjunct: i, used: false });
            }
        }
        // Ranges: `v.k < e`, `e <= v.k`, …, the bounds of the first key per variable.
        for (i, c) in conjuncts.iter().enumerate() {
            use crate::ast::BinaryOp as B;
            let ExprKind::Binary(op @ (B::Lt | B::Le | B::Gt | B::Ge), x, y) = &c.kind else { continue };
            let prop_of = |e: &Expr| match &e.kind {
                ExprKind::Prop(t, k) => match &t.kind {
                    ExprKind::Var(v) if !crate::plan::NODE_FIELDS.contains(&k.name.as_str()) => Some((v.clone(), k.name.clone())),
                    _ => None,
                },
                _ => None,
            };
            // The property on the left: `<` gives an upper bound; on the right, a lower one.
            let (var, key, bound, upper) = match (prop_of(x), prop_of(y)) {
                (Some((v, k)), _) if is_constant(y) => (v, k, y, matches!(op, B::Lt | B::Le)),
                (_, Some((v, k))) if is_constant(x) => (v, k, x, matches!(op, B::Gt | B::Ge)),
                _ => continue,
            };
            if self.scope.contains_key(&var) || !in_pattern(&var) {
                continue;
            }
            match seeks.iter_mut().find(|s| s.var == var) {
                None => {
                    let (lower, upper) = if upper { (None, Some((**bound).clone())) } else { (Some((**bound).clone()), None) };
                    seeks.push(Seek { var, by: SeekBy::Range { key: Arc::from(key.as_str()), lower, upper }, conjunct: i, used: false });
                }
                Some(Seek { by: SeekBy::Range { key: k, lower, upper: high }, .. }) if **k == *key => {
                    let slot = if upper { high } else { lower };
                    if slot.is_none() {
                        *slot = Some((**bound).clone());
                    }
                }
                Some(_) => {}
            }
        }
        seeks
    }

    fn node_test(&mut self, n: &NodePattern) -> Result<NodeTest, QueryError> {
        let labels = n.labels.iter().map(|l| Arc::from(l.name.as_str())).collect();
        let mut props = Vec::new();
        if let Some(p) = &n.props {
            props = self.prop_map(p)?;
        }
        Ok(NodeTest { labels, label_expr: n.label_expr.as_ref().map(crate::plan::Labels::of), props })
    }

    fn prop_map(&mut self, p: &Expr) -> Result<Vec<(Arc<str>, CExpr)>, QueryError> {
        match &p.kind {
            ExprKind::Map(items) => {
                let mut out = Vec::new();
                for (k, v) in items {
                    out.push((Arc::from(k.name.as_str()), self.expr(v)?));
                }
                Ok(out)
            }
            _ => Err(unsupported(self.text, "a parameter as a pattern's property map", p.span)),
        }
    }

    /// The slot of a pattern element's variable (a fresh hidden one, named `anon`, when it has
    /// none), and whether it was bound before.
    fn element_slot(&mut self, var: Option<&crate::ast::Var>, anon: &str) -> (usize, bool) {
        match var {
            Some(v) => match self.scope.get(&v.name) {
                Some(&s) => (s, true),
                None => {
                    let s = self.slot(&v.name);
                    self.scope.insert(v.name.clone(), s);
                    (s, false)
                }
            },
            None => (self.slot(anon), false),
        }
    }

    /// The slot of a node of a pattern, and whether it was bound before.
    fn node_slot(&mut self, n: &NodePattern) -> (usize, bool) {
        self.element_slot(n.var.as_ref(), "  anon_node")
    }

    /// The op that binds a pattern part's start node: a check of a node bound before, a seek
    /// (by internal id, external id, a property's values or range: `seek`, an index into
    /// `seeks`) or a scan. Returns its slot.
    fn start_op(
        &mut self,
        node: &NodePattern,
        seek: Option<usize>,
        ops: &mut Vec<Op>,
        seeks: &mut [Seek],
        span: crate::Span,
    ) -> Result<usize, QueryError> {
        let (slot, was_bound) = self.node_slot(node);
        let test = self.node_test(node)?;
        if was_bound {
            if !test.is_empty() {
                ops.push(Op::CheckNode { slot, test });
            }
        } else if let Some((k, SeekBy::Identity { value, many })) = seek.map(|k| (k, &seeks[k].by)).filter(|(k, _)| seeks[*k].by_identity())
        {
            let (id, many) = (self.expr(value)?, *many);
            seeks[k].used = true;
            ops.push(Op::SeekNodeByIdentity { slot, id, many, test });
        } else if let Some(at) = test.props.iter().position(|(k, _)| k.as_ref() == "id") {
            // The seek finds exactly the node with that id: the test need not check it again.
            let mut test = test;
            let (_, id) = test.props.remove(at);
            ops.push(Op::SeekNode { slot, id, test });
        } else if let Some(k) = seek {
            seeks[k].used = true;
            let op = match &seeks[k].by {
                SeekBy::Values { key, value } => Op::SeekNodesByProperty { slot, key: key.clone(), values: self.expr(value)?, test },
                SeekBy::Range { key, lower, upper } => {
                    let lower = lower.as_ref().map(|e| self.expr(e)).transpose()?;
                    let upper = upper.as_ref().map(|e| self.expr(e)).transpose()?;
                    Op::SeekNodesByRange { slot, key: key.clone(), lower, upper, test, order: None, instead: None }
                }
                SeekBy::Identity { .. } => return Err(unsupported(self.text, "this seek", span)),
            };
            ops.push(op);
        } else {
            ops.push(Op::ScanNodes { slot, test });
        }
        Ok(slot)
    }

    /// Compiles one pattern part into `ops`; gives the path it matches: the first node's slot
    /// and each hop's relationship slot (and whether it has a variable length).
    /// `seeks` are the seeks by internal id its MATCH's WHERE allows (see `identity_seeks`); the
    /// one used is marked.
    fn part_ops(
        &mut self,
        part: &PatternPart,
        ops: &mut Vec<Op>,
        rels_here: &mut Vec<usize>,
        seeks: &mut [Seek],
    ) -> Result<PathSpec, QueryError> {
        if let Some(which) = part.shortest {
            return self.shortest_ops(part, which, ops, rels_here, seeks);
        }
        let nodes: Vec<&NodePattern> = std::iter::once(&part.start).chain(part.chain.iter().map(|(_, n)| n)).collect();
        let bound = |n: &NodePattern| n.var.as_ref().is_some_and(|v| self.scope.contains_key(&v.name));
        let has_id = |n: &NodePattern| matches!(&n.props, Some(Expr { kind: ExprKind::Map(items), .. }) if items.iter().any(|(k, v)| k.name == "id" && is_constant(v)));
        let seek_of = |n: &NodePattern| n.var.as_ref().and_then(|v| seeks.iter().position(|s| s.var == v.name));
        let by_identity = |n: &NodePattern| seek_of(n).is_some_and(|k| seeks[k].by_identity());
        // Bound, then a seek by internal id, by external id, by a property's list of values,
        // then a label scan.
        // A group of several relationships is walked rightwards only: the start is left of it.
        let several = |r: &crate::ast::RelPattern| r.group.as_ref().is_some_and(|g| !g.more.is_empty());
        let leftmost = part.chain.iter().position(|(r, _)| several(r)).unwrap_or(part.chain.len());
        let candidates = &nodes[..=leftmost];
        let start = candidates
            .iter()
            .position(|n| bound(n))
            .or_else(|| candidates.iter().position(|n| by_identity(n)))
            .or_else(|| candidates.iter().position(|n| has_id(n)))
            .or_else(|| candidates.iter().position(|n| seek_of(n).is_some()))
            .or_else(|| candidates.iter().position(|n| !n.labels.is_empty()))
            .unwrap_or(0);
        let mut node_slots = vec![usize::MAX; nodes.len()];
        let mut rel_slots = vec![usize::MAX; part.chain.len()];
        node_slots[start] = self.start_op(nodes[start], seek_of(nodes[start]), ops, seeks, part.span)?;
        // Rightwards from the start, then leftwards.
        let order: Vec<(usize, bool)> = (start..part.chain.len()).map(|i| (i, true)).chain((0..start).rev().map(|i| (i, false))).collect();
        for (i, forward) in order {
            let (rel, _) = &part.chain[i];
            let (from_i, to_i) = if forward { (i, i + 1) } else { (i + 1, i) };
            let from = node_slots[from_i];
            let (to, to_bound) = self.node_slot(nodes[to_i]);
            node_slots[to_i] = to;
            let to_test = self.node_test(nodes[to_i])?;
            let (rel_slot, rel_bound) = self.element_slot(rel.var.as_ref(), "  anon_rel");
            let direction = match (rel.direction, forward) {
                (Direction::Both, _) => Direction::Both,
                (Direction::Out, true) | (Direction::In, false) => Direction::Out,
                (Direction::In, true) | (Direction::Out, false) => Direction::In,
            };
            let (rel_props, rel_predicate) = self.rel_tests(rel)?;
            let group = self.group_hop(rel, forward, (rel_slot, rel_bound))?;
            let length = rel.length.map(|(min, max)| (min.unwrap_or(1), max));
            // A bound relationship is matched again into a fresh slot and compared after; a
            // group of several relationships lists the walk's in a slot of its own.
            let target = if rel_bound {
                self.slot("  rebound_rel")
            } else if group.as_ref().is_some_and(|g| !g.steps.is_empty()) {
                self.slot("  group_rels")
            } else {
                rel_slot
            };
            rel_slots[i] = target;
            ops.push(Op::Expand(Box::new(Hop {
                from,
                rel: target,
                to,
                to_bound,
                direction,
                types: rel.types.iter().map(|t| Arc::from(t.name.as_str())).collect(),
                type_expr: rel.type_expr.as_ref().map(crate::plan::Labels::of),
                length,
                rel_props,
                rel_predicate,
                to_test,
                distinct_from: rels_here.clone(),
                reach: self.reach && length.is_some(),
                exclude_start: false,
                shortest: None,
                group,
            })));
            if rel_bound {
                ops.push(Op::Filter(CExpr::Bin(crate::ast::BinaryOp::Eq, Box::new(CExpr::Slot(target)), Box::new(CExpr::Slot(rel_slot)))));
            }
            rels_here.push(target);
            // A leftward variable-length hop collected its relationships end to start.
            if !forward && length.is_some() {
                ops.push(Op::Project(vec![(target, CExpr::Func(Arc::from("reverse"), vec![CExpr::Slot(target)]))]));
            }
        }
        let hops = part.chain.iter().enumerate().map(|(i, (r, _))| (rel_slots[i], r.length.is_some())).collect();
        let mut path = PathSpec { slot: usize::MAX, start: node_slots[0], hops, nodes: node_slots };
        if let Some(v) = &part.var {
            path.slot = self.slot(&v.name);
            self.scope.insert(v.name.clone(), path.slot);
            ops.push(Op::BindPath(path.clone()));
        }
        Ok(path)
    }

    /// A quantified group's tests and WHERE, compiled with its variables in the slots where each
    /// step puts one repetition's elements (`rel_slot` is the first relationship's, where the
    /// hop's own tests see it); after it, the variables are the lists of each repetition's.
    fn group_hop(
        &mut self,
        rel: &crate::ast::RelPattern,
        forward: bool,
        (rel_slot, rel_bound): (usize, bool),
    ) -> Result<Option<Box<GroupHop>>, QueryError> {
        let Some(g) = &rel.group else { return Ok(None) };
        if rel_bound {
            return Err(unsupported(self.text, "a quantified group over a relationship variable bound before", rel.span));
        }
        let named = |v: &Option<crate::ast::Var>| v.as_ref().map(|v| v.name.clone());
        let node_names: Vec<Option<String>> = g.nodes().map(|n| named(&n.var)).collect();
        let rel_names: Vec<Option<String>> = g.more.iter().map(|(r, _)| named(&r.var)).collect();
        let node_slots: Vec<usize> = node_names.iter().map(|_| self.slot("  group_node")).collect();
        let step_slots: Vec<usize> = rel_names.iter().map(|_| self.slot("  group_rel")).collect();
        for (name, slot) in node_names.iter().zip(&node_slots).chain(rel_names.iter().zip(&step_slots)) {
            if let Some(n) = name {
                self.scope.insert(n.clone(), *slot);
            }
        }
        let mut nodes = Vec::with_capacity(node_slots.len());
        for (n, slot) in g.nodes().zip(&node_slots) {
            nodes.push(GroupNode { slot: *slot, test: self.node_test(n)?, list: None });
        }
        let mut steps = Vec::with_capacity(g.more.len());
        for ((r, _), slot) in g.more.iter().zip(&step_slots) {
            let (rel_props, rel_predicate) = self.rel_tests(r)?;
            let types = r.types.iter().map(|t| Arc::from(t.name.as_str())).collect();
            let type_expr = r.type_expr.as_ref().map(crate::plan::Labels::of);
            steps.push(GroupStep { direction: r.direction, types, type_expr, rel_props, rel_predicate, slot: *slot, list: None });
        }
        let predicate = g.predicate.as_ref().map(|w| self.expr(w)).transpose()?;
        let mut list_of = |name: &Option<String>| {
            name.as_ref().map(|n| {
                let slot = self.slot(n);
                self.scope.insert(n.clone(), slot);
                slot
            })
        };
        for (node, name) in nodes.iter_mut().zip(&node_names) {
            node.list = list_of(name);
        }
        for (step, name) in steps.iter_mut().zip(&rel_names) {
            step.list = list_of(name);
        }
        // With more than one relationship, the hop's own list holds every relationship of the
        // walk (for a path), and the first relationship's variable a list of its own.
        let rel_list = if steps.is_empty() { None } else { list_of(&named(&rel.var)) };
        Ok(Some(Box::new(GroupHop { nodes, rel_slot, rel_list, steps, predicate, backward: !forward })))
    }

    /// A relationship pattern's property map and inline WHERE, compiled.
    fn rel_tests(&mut self, rel: &crate::ast::RelPattern) -> Result<RelTests, QueryError> {
        let props = match &rel.props {
            Some(p) => self.prop_map(p)?,
            None => Vec::new(),
        };
        let predicate = match &rel.predicate {
            Some(w) => Some(self.expr(w)?),
            None => None,
        };
        Ok((props, predicate))
    }

    /// A `shortestPath(…)` / `allShortestPaths(…)` part (one relationship, checked): each end
    /// is bound or found on its own, as in `(a), (b)`, then the search runs between the two.
    fn shortest_ops(
        &mut self,
        part: &PatternPart,
        which: Shortest,
        ops: &mut Vec<Op>,
        rels_here: &mut Vec<usize>,
        seeks: &mut [Seek],
    ) -> Result<PathSpec, QueryError> {
        let [(rel, end)] = part.chain.as_slice() else {
            return Err(unsupported(self.text, "a shortest path of more than one relationship", part.span));
        };
        let lone = |n: &NodePattern| PatternPart { var: None, shortest: None, start: n.clone(), chain: Vec::new(), span: n.span };
        let from = self.part_ops(&lone(&part.start), ops, rels_here, seeks)?.start;
        let to = self.part_ops(&lone(end), ops, rels_here, seeks)?.start;
        let (rel_slot, rel_bound) = self.element_slot(rel.var.as_ref(), "  anon_rel");
        if rel_bound {
            return Err(unsupported(self.text, "a shortest path over a relationship variable bound before", rel.span));
        }
        let (rel_props, rel_predicate) = self.rel_tests(rel)?;
        ops.push(Op::Expand(Box::new(Hop {
            from,
            rel: rel_slot,
            to,
            to_bound: true,
            direction: rel.direction,
            types: rel.types.iter().map(|t| Arc::from(t.name.as_str())).collect(),
            type_expr: rel.type_expr.as_ref().map(crate::plan::Labels::of),
            length: rel.length.map(|(min, max)| (min.unwrap_or(1), max)),
            rel_props,
            rel_predicate,
            to_test: NodeTest::default(),
            distinct_from: rels_here.clone(),
            reach: false,
            exclude_start: false,
            shortest: Some(which),
            group: None,
        })));
        rels_here.push(rel_slot);
        let mut path = PathSpec { slot: usize::MAX, start: from, hops: vec![(rel_slot, rel.length.is_some())], nodes: vec![from, to] };
        if let Some(v) = &part.var {
            path.slot = self.slot(&v.name);
            self.scope.insert(v.name.clone(), path.slot);
            ops.push(Op::BindPath(path.clone()));
        }
        Ok(path)
    }

    /// Whether MATCH `m`'s single variable-length hop may be walked breadth first: its trails
    /// are not used (no relationship or path variable, no per-hop filter), the next clause uses
    /// the end node only through `count(DISTINCT b)` / `collect(DISTINCT b)` or `RETURN DISTINCT`,
    /// and the lower bound is 0 or 1. Then the nodes a trail reaches are exactly the nodes within
    /// the bounds of a shortest path, but for the start node itself at bound 1: a directed walk
    /// finds it when a cycle leads back (the shortest closed walk is a cycle, so a trail); an
    /// undirected one cannot tell, so there the MATCH must exclude it (`WHERE b <> a`).
    fn reach_ok(&self, m: &Match, next: Option<&Clause>) -> bool {
        let [part] = m.pattern.as_slice() else { return false };
        let [(rel, end)] = part.chain.as_slice() else { return false };
        let Some((min, _)) = rel.length else { return false };
        if part.var.is_some()
            || rel.var.is_some()
            || rel.props.is_some()
            || rel.predicate.is_some()
            || rel.group.is_some()
            || min.unwrap_or(1) > 1
        {
            return false;
        }
        let Some(b) = end.var.as_ref().map(|v| v.name.as_str()) else { return false };
        if self.scope.contains_key(b) || part.start.var.as_ref().is_some_and(|v| v.name == b) {
            return false;
        }
        let a = part.start.var.as_ref().map(|v| v.name.as_str());
        if min.unwrap_or(1) == 1 && rel.direction == Direction::Both {
            let excludes_start = a.is_some_and(|a| m.predicate.as_ref().is_some_and(|w| excludes(w, a, b)));
            if !excludes_start {
                return false;
            }
        }
        let Some(Clause::With(p) | Clause::Return(p)) = next else { return false };
        ignores_repeats(p)
    }

    /// The slots of `x` and `y` when predicate `w` is exactly `x <> y` or `NOT x = y`.
    fn exclusion_slots(&self, w: &Expr) -> Option<(usize, usize)> {
        let (x, y) = match &w.kind {
            ExprKind::Binary(crate::ast::BinaryOp::Neq, x, y) => (x, y),
            ExprKind::Unary(UnaryOp::Not, inner) => match &inner.kind {
                ExprKind::Binary(crate::ast::BinaryOp::Eq, x, y) => (x, y),
                _ => return None,
            },
            _ => return None,
        };
        match (&x.kind, &y.kind) {
            (ExprKind::Var(p), ExprKind::Var(q)) => Some((*self.scope.get(p)?, *self.scope.get(q)?)),
            _ => None,
        }
    }

    // ---- projections ---------------------------------------------------------------------

    /// Compiles a WITH or RETURN; gives its columns.
    #[allow(clippy::too_many_lines)] // Reason: projection, aggregation, then the clauses after it, in order.
    fn projection(&mut self, p: &Projection, ops: &mut Vec<Op>) -> Result<Vec<(String, usize)>, QueryError> {
        let mut items: Vec<(String, Expr)> = Vec::new();
        if p.star {
            let mut names: Vec<&String> = self.scope.keys().filter(|k| !k.starts_with(' ')).collect();
            names.sort();
            for n in names {
                items.push((n.clone(), Expr::new(ExprKind::Var(n.clone()), crate::Span::default())));
            }
        }
        for item in &p.items {
            items.push((item.column().to_owned(), item.expr.clone()));
        }
        let aggregating = p.items.iter().any(|i| crate::check::contains_aggregate(&i.expr));
        let mut columns: Vec<(String, usize)> = Vec::new();
        let mut subst = Vec::new();
        if aggregating {
            let mut keys = Vec::new();
            let mut post = Vec::new();
            for (name, e) in items.iter().filter(|(_, e)| !crate::check::contains_aggregate(e)) {
                let slot = self.slot(name);
                keys.push((slot, self.expr(e)?));
                if e.span != crate::Span::default() {
                    subst.push((self.squash(e), slot));
                }
                if let ExprKind::Var(v) = &e.kind {
                    subst.push((v.clone(), slot));
                }
            }
            let saved = std::mem::replace(&mut self.subst, subst.clone());
            self.aggregates = Some(Vec::new());
            let mut agg_items = Vec::new();
            for (name, e) in items.iter().filter(|(_, e)| crate::check::contains_aggregate(e)) {
                let compiled = self.expr(e)?;
                agg_items.push((name.clone(), e, compiled));
            }
            let aggregates = self.aggregates.take().unwrap_or_default();
            self.subst = saved;
            ops.push(Op::Aggregate { keys: keys.clone(), aggregates });
            for (name, e, compiled) in agg_items {
                let slot = self.slot(&name);
                post.push((slot, compiled));
                subst.push((self.squash(e), slot));
            }
            if !post.is_empty() {
                ops.push(Op::Project(post));
            }
            // Columns in the written order.
            for (name, _) in &items {
                let slot =
                    subst.iter().rev().find(|(_, s)| self.slots.get(*s).is_some_and(|n| n == name)).map(|(_, s)| *s).unwrap_or_default();
                columns.push((name.clone(), slot));
            }
        } else {
            let mut project = Vec::new();
            for (name, e) in &items {
                let slot = self.slot(name);
                project.push((slot, self.expr(e)?));
                subst.push((self.squash(e), slot));
                columns.push((name.clone(), slot));
            }
            ops.push(Op::Project(project));
        }
        if p.distinct {
            ops.push(Op::Distinct(columns.iter().map(|(_, s)| *s).collect()));
        }
        // ORDER BY and WHERE see the new names over the old ones, and reuse projected values.
        let new_scope: HashMap<String, usize> = columns.iter().cloned().collect();
        let mut sort_scope = if aggregating { HashMap::new() } else { self.scope.clone() };
        sort_scope.extend(new_scope.clone());
        let saved_scope = std::mem::replace(&mut self.scope, sort_scope);
        let saved_subst = std::mem::replace(&mut self.subst, subst);
        let mut result = Ok(());
        if !p.order.is_empty() {
            let mut keys = Vec::new();
            for s in &p.order {
                match self.expr(&s.expr) {
                    Ok(expr) => keys.push(SortKey { expr, descending: s.descending, nulls_first: s.nulls_first.unwrap_or(s.descending) }),
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
            ops.push(Op::Sort(keys));
        }
        if result.is_ok() {
            if let Some(e) = &p.skip {
                match self.expr(e) {
                    Ok(x) => ops.push(Op::Skip(x)),
                    Err(e) => result = Err(e),
                }
            }
        }
        if result.is_ok() {
            if let Some(e) = &p.limit {
                match self.expr(e) {
                    Ok(x) => ops.push(Op::Limit(x)),
                    Err(e) => result = Err(e),
                }
            }
        }
        if result.is_ok() {
            if let Some(w) = &p.predicate {
                match self.expr(w) {
                    Ok(x) => ops.push(Op::Filter(x)),
                    Err(e) => result = Err(e),
                }
            }
        }
        self.subst = saved_subst;
        drop(saved_scope);
        result?;
        self.scope = new_scope;
        Ok(columns)
    }

    // ---- expressions ---------------------------------------------------------------------

    fn exprs(&mut self, es: &[Expr]) -> Result<Vec<CExpr>, QueryError> {
        es.iter().map(|e| self.expr(e)).collect()
    }

    fn boxed(&mut self, e: &Expr) -> Result<Box<CExpr>, QueryError> {
        Ok(Box::new(self.expr(e)?))
    }

    #[allow(clippy::too_many_lines)] // Reason: one arm per expression kind.
    pub fn expr(&mut self, e: &Expr) -> Result<CExpr, QueryError> {
        if !self.subst.is_empty() && e.span != crate::Span::default() {
            let text = self.squash(e);
            if let Some((_, slot)) = self.subst.iter().find(|(t, _)| *t == text) {
                return Ok(CExpr::Slot(*slot));
            }
        }
        Ok(match &e.kind {
            ExprKind::Lit(l) => CExpr::Const(match l {
                Literal::Null => Const::Null,
                Literal::Bool(b) => Const::Bool(*b),
                Literal::Int(i) => Const::Int(*i),
                Literal::Float(f) => Const::Float(*f),
                Literal::Str(s) => Const::Str(Arc::from(s.as_str())),
            }),
            ExprKind::Param(p) => {
                let name: Arc<str> = Arc::from(p.as_str());
                self.params.insert(name.clone());
                CExpr::Param(name)
            }
            ExprKind::Var(v) => {
                if let Some(depth) = self.locals.iter().rposition(|l| l == v) {
                    CExpr::Local(depth)
                } else if let Some(s) = self.subst.iter().find(|(t, _)| t == v).map(|(_, s)| *s) {
                    CExpr::Slot(s)
                } else if let Some(&s) = self.scope.get(v) {
                    CExpr::Slot(s)
                } else {
                    return Err(QueryError::syntax(self.text, e.span, Detail::UndefinedVariable, format!("variable `{v}` not defined")));
                }
            }
            ExprKind::List(items) => CExpr::List(self.exprs(items)?),
            ExprKind::Map(items) => {
                let mut out = Vec::new();
                for (k, v) in items {
                    out.push((Arc::from(k.name.as_str()), self.expr(v)?));
                }
                CExpr::Map(out)
            }
            ExprKind::Prop(t, k) => CExpr::Prop(self.boxed(t)?, Arc::from(k.name.as_str())),
            ExprKind::Index(t, i) => CExpr::Index(self.boxed(t)?, self.boxed(i)?),
            ExprKind::Slice(t, a, b) => {
                let t = self.boxed(t)?;
                let a = match a {
                    Some(a) => Some(self.boxed(a)?),
                    None => None,
                };
                let b = match b {
                    Some(b) => Some(self.boxed(b)?),
                    None => None,
                };
                CExpr::Slice(t, a, b)
            }
            ExprKind::HasLabels(t, labels) => CExpr::HasLabels(self.boxed(t)?, labels.iter().map(|l| Arc::from(l.name.as_str())).collect()),
            ExprKind::HasLabelExpr(t, e) => CExpr::HasLabelExpr(self.boxed(t)?, crate::plan::Labels::of(e)),
            ExprKind::Unary(op, inner) => match op {
                UnaryOp::Not => CExpr::Not(self.boxed(inner)?),
                UnaryOp::Neg => CExpr::Neg(self.boxed(inner)?),
                UnaryOp::Pos => self.expr(inner)?,
            },
            ExprKind::Binary(op, a, b) => CExpr::Bin(*op, self.boxed(a)?, self.boxed(b)?),
            ExprKind::IsNull(inner, not) => CExpr::IsNull(self.boxed(inner)?, *not),
            ExprKind::IsType(inner, t, not) => CExpr::IsType(self.boxed(inner)?, t.clone(), *not),
            ExprKind::Case { subject, whens, otherwise } => {
                let subject = match subject {
                    Some(s) => Some(self.boxed(s)?),
                    None => None,
                };
                let mut ws = Vec::new();
                for (w, t) in whens {
                    ws.push((self.expr(w)?, self.expr(t)?));
                }
                let otherwise = match otherwise {
                    Some(o) => Some(self.boxed(o)?),
                    None => None,
                };
                CExpr::Case { subject, whens: ws, otherwise }
            }
            ExprKind::CountStar => self.aggregate(AggFn::CountStar, false, None, e)?,
            ExprKind::Call { name, distinct, args } => {
                let lower = name.name.to_ascii_lowercase();
                match function(&lower) {
                    Some(f) if f.kind == FunctionKind::Aggregate => {
                        let func = match lower.as_str() {
                            "count" => AggFn::Count,
                            "collect" => AggFn::Collect,
                            "sum" => AggFn::Sum,
                            "avg" => AggFn::Avg,
                            "min" => AggFn::Min,
                            "max" => AggFn::Max,
                            "stdev" => AggFn::StDev,
                            "percentilecont" => AggFn::PercentileCont,
                            "percentiledisc" => AggFn::PercentileDisc,
                            _ => AggFn::StDevP,
                        };
                        if matches!(func, AggFn::PercentileCont | AggFn::PercentileDisc) {
                            // The value and the percentile, evaluated together per row.
                            let both = Expr::new(ExprKind::List(args.clone()), e.span);
                            self.aggregate(func, *distinct, Some(&both), e)?
                        } else {
                            self.aggregate(func, *distinct, args.first(), e)?
                        }
                    }
                    // The row's line and file, from the `LOAD CSV` in scope (null without one).
                    _ if (lower == "linenumber" || lower == "file") && args.is_empty() => {
                        match self.scope.get(if lower == "linenumber" { LINE_SLOT } else { FILE_SLOT }) {
                            Some(s) => CExpr::Slot(*s),
                            None => CExpr::Const(Const::Null),
                        }
                    }
                    // `exists(pattern)` is the pattern predicate itself (whether the pattern
                    // matches), not whether the predicate's value is null.
                    _ if lower == "exists" && matches!(args.as_slice(), [a] if matches!(a.kind, ExprKind::Pattern(_))) => {
                        self.expr(&args[0])?
                    }
                    // The list of shortest paths the pattern matches (the checker made sure it is
                    // one): its first for `shortestPath`, null when there is none.
                    _ if lower == "shortestpath" || lower == "allshortestpaths" => {
                        let [Expr { kind: ExprKind::Pattern(part), .. }] = args.as_slice() else {
                            return Err(unsupported(self.text, "shortestPath of anything but a pattern", e.span));
                        };
                        let paths = self.pattern_expr(part, None)?;
                        if lower == "shortestpath" {
                            CExpr::Func(Arc::from("head"), vec![paths])
                        } else {
                            paths
                        }
                    }
                    _ => {
                        let mut cargs = Vec::new();
                        for a in args {
                            // A pattern is a list of paths as an argument, except to exists().
                            if let (ExprKind::Pattern(part), false) = (&a.kind, lower == "exists") {
                                cargs.push(self.pattern_expr(part, None)?);
                            } else {
                                cargs.push(self.expr(a)?);
                            }
                        }
                        CExpr::Func(Arc::from(lower.as_str()), cargs)
                    }
                }
            }
            ExprKind::ListComprehension { var, list, predicate, map } => {
                let list = self.boxed(list)?;
                self.locals.push(var.name.clone());
                let predicate = predicate.as_ref().map(|p| self.boxed(p)).transpose();
                let map = map.as_ref().map(|m| self.boxed(m)).transpose();
                self.locals.pop();
                CExpr::ListComp { list, predicate: predicate?, map: map? }
            }
            ExprKind::Reduce(r) => {
                let init = self.boxed(&r.init)?;
                let list = self.boxed(&r.list)?;
                self.locals.push(r.acc.name.clone());
                self.locals.push(r.var.name.clone());
                let step = self.boxed(&r.step);
                self.locals.truncate(self.locals.len() - 2);
                CExpr::Reduce { init, list, step: step? }
            }
            ExprKind::Quantified { quantifier, var, list, predicate } => {
                let list = self.boxed(list)?;
                self.locals.push(var.name.clone());
                let predicate = self.boxed(predicate);
                self.locals.pop();
                CExpr::Quant { quantifier: *quantifier, list, predicate: predicate? }
            }
            ExprKind::PatternComprehension { pattern, predicate, map } => self.pattern_expr(pattern, Some((predicate.as_deref(), map)))?,
            ExprKind::Subquery { kind, query } => self.subquery_expr(*kind, query, e.span)?,
            ExprKind::Pattern(part) => {
                let paths = self.pattern_expr(part, None)?;
                CExpr::Func(Arc::from("exists"), vec![paths])
            }
            ExprKind::MapProjection { var, items } => {
                let base = Box::new(self.expr(&Expr::new(ExprKind::Var(var.name.clone()), var.span))?);
                let mut all = false;
                let mut out = Vec::new();
                for item in items {
                    match item {
                        MapProjectionItem::All => all = true,
                        MapProjectionItem::Property(k) => {
                            out.push((Arc::from(k.name.as_str()), CExpr::Prop(base.clone(), Arc::from(k.name.as_str()))));
                        }
                        MapProjectionItem::Literal(k, v) => out.push((Arc::from(k.name.as_str()), self.expr(v)?)),
                        MapProjectionItem::Variable(v) => {
                            let value = self.expr(&Expr::new(ExprKind::Var(v.name.clone()), v.span))?;
                            out.push((Arc::from(v.name.as_str()), value));
                        }
                    }
                }
                CExpr::MapProjection { base, all, items: out }
            }
        })
    }

    fn aggregate(&mut self, func: AggFn, distinct: bool, arg: Option<&Expr>, e: &Expr) -> Result<CExpr, QueryError> {
        let arg = match arg {
            Some(a) => {
                // Inside the aggregate, expressions read the rows before grouping.
                let saved = std::mem::take(&mut self.subst);
                let r = self.expr(a);
                self.subst = saved;
                Some(r?)
            }
            None => None,
        };
        // Named by its text as written (spaces collapsed), which is how EXPLAIN shows it.
        let name = self.text.get(e.span.start..e.span.end).unwrap_or("").split_whitespace().collect::<Vec<_>>().join(" ");
        let slot = self.slot(&name);
        match &mut self.aggregates {
            Some(aggs) => {
                aggs.push(Aggregate { func, distinct, arg, slot });
                Ok(CExpr::Slot(slot))
            }
            None => Err(QueryError::syntax(self.text, e.span, Detail::InvalidAggregation, "an aggregate cannot be used here")),
        }
    }

    /// A pattern inside an expression: its own operators, run on the current row. With `comp`
    /// (a comprehension's filter and projection), the value is the list of projections;
    /// otherwise the list of paths.
    /// `EXISTS { … }`, `COUNT { … }`, `COLLECT { … }`: the query compiled with the row's
    /// variables in scope (those an aggregation before projected, under their names), run per
    /// row as a pattern comprehension's operators are; its rows counted, or its one column
    /// collected.
    fn subquery_expr(&mut self, kind: SubqueryKind, query: &SingleQuery, span: crate::Span) -> Result<CExpr, QueryError> {
        let scope = self.scope.clone();
        let plain = |t: &str| t.chars().all(|c| c.is_alphanumeric() || c == '_');
        for (t, s) in self.subst.iter().filter(|(t, _)| plain(t)) {
            self.scope.insert(t.clone(), *s);
        }
        let subst = std::mem::take(&mut self.subst);
        let locals = std::mem::take(&mut self.locals);
        let reach = self.reach;
        let part = self.single(query);
        self.scope = scope;
        self.subst = subst;
        let in_comprehension = !locals.is_empty();
        self.locals = locals;
        self.reach = reach;
        let part = match part {
            Err(e) if in_comprehension && e.detail == Detail::UndefinedVariable => {
                let what = format!("{} {{ … }} reading a list comprehension's, quantifier's or reduce's variable", kind.keyword());
                return Err(unsupported(self.text, &what, span));
            }
            other => other?,
        };
        let column = part.columns.first().map_or(usize::MAX, |(_, s)| *s);
        let value = match kind {
            SubqueryKind::Collect => CExpr::Slot(column),
            SubqueryKind::Exists | SubqueryKind::Count => CExpr::Const(Const::Int(1)),
        };
        let rows = CExpr::Pattern { ops: Arc::new(part.ops), map: Some(Box::new(value)), path: column };
        let size = |rows| CExpr::Func(Arc::from("size"), vec![rows]);
        Ok(match kind {
            SubqueryKind::Exists => CExpr::Bin(crate::ast::BinaryOp::Gt, Box::new(size(rows)), Box::new(CExpr::Const(Const::Int(0)))),
            SubqueryKind::Count => size(rows),
            SubqueryKind::Collect => rows,
        })
    }

    fn pattern_expr(&mut self, part: &PatternPart, comp: Option<(Option<&Expr>, &Expr)>) -> Result<CExpr, QueryError> {
        let saved = self.scope.clone();
        let mut ops = Vec::new();
        let mut rels = Vec::new();
        let path_slot = self.slot("  path");
        let result = (|| -> Result<CExpr, QueryError> {
            let spec = self.part_ops(part, &mut ops, &mut rels, &mut [])?;
            ops.push(Op::BindPath(PathSpec { slot: path_slot, ..spec }));
            let map = match comp {
                Some((predicate, map)) => {
                    if let Some(w) = predicate {
                        ops.push(Op::Filter(self.expr(w)?));
                    }
                    Some(Box::new(self.expr(map)?))
                }
                None => None,
            };
            Ok(CExpr::Pattern { ops: Arc::new(ops), map, path: path_slot })
        })();
        self.scope = saved;
        result
    }
}

/// A query's last operator dropped when it only copies slots (`RETURN n`, `RETURN count(*) AS c`
/// after an aggregation): its columns read the slots it copied from, so no value is copied per
/// row. Its items read the row before any of them is written, so each copy reads what the
/// column would have held. Only for a whole query's parts, whose columns alone are read.
fn read_in_place(mut part: Part) -> Part {
    let Some(Op::Project(items)) = part.ops.last() else { return part };
    let copies: Option<Vec<(usize, usize)>> =
        items.iter().map(|(out, e)| if let CExpr::Slot(from) = e { Some((*out, *from)) } else { None }).collect();
    let Some(copies) = copies else { return part };
    for (_, slot) in &mut part.columns {
        if let Some((_, from)) = copies.iter().find(|(out, _)| out == slot) {
            *slot = *from;
        }
    }
    part.ops.pop();
    part
}

/// Rewrites an Expand followed directly by a keyless Aggregate that only counts its matches
/// (`count(*)`, `count(r)` or `count(b)` for a one-hop expand, whose slots are never null;
/// `count(DISTINCT b)` for a breadth-first reach, whose nodes are distinct) into one
/// `CountExpand`, which counts without making a row per match.
/// A relationship pattern's required properties and inline WHERE.
type RelTests = (Vec<(Arc<str>, CExpr)>, Option<CExpr>);

fn fuse(ops: Vec<Op>) -> Vec<Op> {
    let mut out: Vec<Op> = Vec::with_capacity(ops.len());
    for op in ops {
        let fused = match (&op, out.last()) {
            (Op::Aggregate { keys, aggregates }, Some(Op::Expand(h))) if keys.is_empty() && aggregates.len() == 1 => {
                let a = &aggregates[0];
                let plain = h.length.is_none() && !h.to_bound && h.rel_props.is_empty() && h.rel_predicate.is_none();
                let counts_matches = match (a.func, &a.arg) {
                    (AggFn::CountStar, _) => plain,
                    (AggFn::Count, Some(CExpr::Slot(s))) if !a.distinct => plain && (*s == h.rel || *s == h.to),
                    (AggFn::Count, Some(CExpr::Slot(s))) => h.reach && *s == h.to,
                    _ => false,
                };
                // Only a single start row makes the reach's per-row distinct nodes distinct overall;
                // the operator checks that when it runs.
                counts_matches.then_some(a.slot)
            }
            _ => None,
        };
        match (fused, out.pop()) {
            (Some(slot), Some(Op::Expand(hop))) => out.push(Op::CountExpand { hop, slot }),
            (_, Some(prev)) => {
                out.push(prev);
                out.push(op);
            }
            (_, None) => out.push(op),
        }
    }
    out
}

/// Whether a projection gives the same rows however often each row before it repeats: a
/// DISTINCT projection, or an aggregation whose aggregates ignore repeats (DISTINCT ones, `min`,
/// `max`; a group exists either way), and nothing in it that gives a new value per row. Trails
/// repeat an end node once per way to reach it; a reach gives it once.
fn ignores_repeats(p: &Projection) -> bool {
    let exprs = || p.items.iter().map(|i| &i.expr).chain(p.order.iter().map(|s| &s.expr));
    if p.star || exprs().any(varies_per_row) {
        return false;
    }
    if p.items.iter().any(|i| crate::check::contains_aggregate(&i.expr)) {
        exprs().all(aggregates_ignore_repeats)
    } else {
        p.distinct
    }
}

/// Whether `e` calls a function that gives a new value each time (`rand()`, `randomUUID()`,
/// `timestamp()`).
fn varies_per_row(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call { name, .. }
            if ["rand", "randomuuid", "timestamp", "linenumber", "file"].iter().any(|f| name.name.eq_ignore_ascii_case(f)) =>
        {
            true
        }
        _ => {
            let mut found = false;
            e.for_each_child(|c| found |= varies_per_row(c));
            found
        }
    }
}

/// Whether every aggregate in `e` gives the same value however often its inputs repeat.
fn aggregates_ignore_repeats(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::CountStar => false,
        ExprKind::Call { name, distinct, .. } if function(&name.name).is_some_and(|f| f.kind == FunctionKind::Aggregate) => {
            *distinct || name.name.eq_ignore_ascii_case("min") || name.name.eq_ignore_ascii_case("max")
        }
        _ => {
            let mut all = true;
            e.for_each_child(|c| all &= aggregates_ignore_repeats(c));
            all
        }
    }
}

/// Whether predicate `w` keeps only rows where `b` is not `a`: `b <> a`, `a <> b`, `NOT a = b`,
/// or a conjunction holding one of them.
fn excludes(w: &Expr, a: &str, b: &str) -> bool {
    let pair =
        |x: &Expr, y: &Expr| matches!((&x.kind, &y.kind), (ExprKind::Var(p), ExprKind::Var(q)) if (p == a && q == b) || (p == b && q == a));
    match &w.kind {
        ExprKind::Binary(crate::ast::BinaryOp::Neq, x, y) => pair(x, y),
        ExprKind::Unary(UnaryOp::Not, inner) => {
            matches!(&inner.kind, ExprKind::Binary(crate::ast::BinaryOp::Eq, x, y) if pair(x, y))
        }
        ExprKind::Binary(crate::ast::BinaryOp::And, x, y) => excludes(x, a, b) || excludes(y, a, b),
        _ => false,
    }
}

/// Whether `e` is a test that cannot fail on any row: a comparison, null test or label test over
/// properties of `vars` (graph elements), scalar literals and parameters, or AND / OR / XOR / NOT
/// of such tests (each is true, false or null). The slots of the variables it reads go to `slots`.
fn infallible_test(e: &Expr, vars: &HashMap<&str, (usize, bool)>, slots: &mut Vec<usize>) -> bool {
    use crate::ast::BinaryOp as B;
    let operand = |e: &Expr, slots: &mut Vec<usize>| match &e.kind {
        ExprKind::Lit(_) | ExprKind::Param(_) => true,
        ExprKind::Prop(t, _) => match &t.kind {
            ExprKind::Var(v) => vars.get(v.as_str()).map(|(s, _)| slots.push(*s)).is_some(),
            _ => false,
        },
        _ => false,
    };
    match &e.kind {
        ExprKind::Binary(B::And | B::Or | B::Xor, a, b) => infallible_test(a, vars, slots) && infallible_test(b, vars, slots),
        ExprKind::Unary(UnaryOp::Not, a) => infallible_test(a, vars, slots),
        ExprKind::Binary(B::Eq | B::Neq | B::Lt | B::Le | B::Gt | B::Ge | B::StartsWith | B::EndsWith | B::Contains, a, b) => {
            operand(a, slots) && operand(b, slots)
        }
        ExprKind::IsNull(a, _) | ExprKind::IsType(a, _, _) => operand(a, slots),
        ExprKind::HasLabels(t, _) | ExprKind::HasLabelExpr(t, _) => match &t.kind {
            // On a node only (on anything else it is a type error).
            ExprKind::Var(v) => vars.get(v.as_str()).filter(|(_, node)| *node).map(|(s, _)| slots.push(*s)).is_some(),
            _ => false,
        },
        _ => false,
    }
}

/// Whether an expression is a constant or a parameter (usable for a seek before any row).
fn is_constant(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Lit(_) | ExprKind::Param(_))
}

/// A literal, a parameter, or a list of those.
fn is_constant_list(e: &Expr) -> bool {
    is_constant(e) || matches!(&e.kind, ExprKind::List(items) if items.iter().all(is_constant))
}

/// `v` when `e` is `id(v)`.
fn identity_of(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Call { name, distinct: false, args } if name.name.eq_ignore_ascii_case("id") => match args.as_slice() {
            [Expr { kind: ExprKind::Var(v), .. }] => Some(v),
            _ => None,
        },
        _ => None,
    }
}

/// The operands of `e`'s top-level `AND`s, left to right (`e` alone when it is no `AND`).
fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Binary(crate::ast::BinaryOp::And, a, b) => {
            let mut out = conjuncts(a);
            out.extend(conjuncts(b));
            out
        }
        _ => vec![e],
    }
}

/// A seek a MATCH's WHERE allows, from its `conjunct`-th conjunct; `used` once a pattern part
/// starts with it.
struct Seek {
    var: String,
    by: SeekBy,
    conjunct: usize,
    used: bool,
}

/// What a seek finds its node by.
enum SeekBy {
    /// `id(var) = value`, or `id(var) IN value` (`many`).
    Identity { value: Expr, many: bool },
    /// `var.key IN value`.
    Values { key: Arc<str>, value: Expr },
    /// `var.key` compared with literals or parameters (`<`, `<=`, `>`, `>=`): the bounds.
    Range { key: Arc<str>, lower: Option<Expr>, upper: Option<Expr> },
}

impl Seek {
    fn by_identity(&self) -> bool {
        matches!(self.by, SeekBy::Identity { .. })
    }
}
