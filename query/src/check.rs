//! Semantic checks, run before anything executes: variables are defined before use and bound
//! once with one kind (node, relationship, path, value), aggregation is where it may be, clauses
//! compose, write patterns can be written, `SKIP`/`LIMIT` are constants, and types are right
//! where the text alone shows them (`NOT 1`, `labels(p)` on a path, `123.prop`).
//!
//! The result names the columns each part of the query returns.

use std::collections::BTreeMap;

use crate::ast::{
    BinaryOp, Call, Clause, Direction, Expr, ExprKind, Literal, MapProjectionItem, Match, PatternPart, Projection, Query, RemoveItem,
    SetItem, SingleQuery, Statement, SubqueryKind, Temporal, UnaryOp, Var,
};
use crate::error::{Detail, ErrorType, Phase, QueryError, Span};
use crate::functions::{function, procedure, FunctionKind};

/// What the text alone tells about a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// Unknown until run time (parameters, properties, list elements).
    Any,
    /// `null`.
    Null,
    /// A boolean.
    Bool,
    /// An integer.
    Int,
    /// A float.
    Float,
    /// A string.
    Str,
    /// A list.
    List,
    /// A map.
    Map,
    /// A node.
    Node,
    /// A relationship.
    Rel,
    /// The relationships of a variable-length pattern.
    RelList,
    /// A path.
    Path,
}

impl Ty {
    fn name(self) -> &'static str {
        match self {
            Ty::Any => "any",
            Ty::Null => "null",
            Ty::Bool => "a boolean",
            Ty::Int => "an integer",
            Ty::Float => "a float",
            Ty::Str => "a string",
            Ty::List | Ty::RelList => "a list",
            Ty::Map => "a map",
            Ty::Node => "a node",
            Ty::Rel => "a relationship",
            Ty::Path => "a path",
        }
    }

    /// Whether a value of this type can be used where one of `want` is expected (unknown and
    /// null always can: they are checked when the query runs).
    fn fits(self, want: &[Ty]) -> bool {
        matches!(self, Ty::Any | Ty::Null) || want.contains(&self)
    }
}

/// What the checker learned: the columns of the query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// The column names, in order (empty for a query that returns nothing).
    pub columns: Vec<String>,
    /// Whether the query writes.
    pub writes: bool,
}

/// Checks a parsed statement against the rules above.
pub fn check(text: &str, statement: &Statement) -> Result<Checked, QueryError> {
    let checker = Checker { text };
    let no_vars = Scope::default();
    match &statement.temporal {
        Temporal::AsOf(e) | Temporal::KnownAsOf(e) => {
            checker.expr(e, &no_vars, Agg::Forbidden)?;
        }
        Temporal::Now | Temporal::AllVersions => {}
    }
    checker.query(&statement.query)
}

type Scope = BTreeMap<String, Ty>;

/// Where aggregates may appear.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Agg {
    /// Not here (WHERE, update clauses, pattern properties, …).
    Forbidden,
    /// At the top of a projection item.
    Allowed,
    /// Inside an aggregate's argument: another aggregate would nest.
    Inside,
}

struct Checker<'a> {
    text: &'a str,
}

impl Checker<'_> {
    fn error(&self, span: Span, detail: Detail, message: impl Into<String>) -> QueryError {
        QueryError::syntax(self.text, span, detail, message)
    }

    fn query(&self, query: &Query) -> Result<Checked, QueryError> {
        let first = self.single(&query.first)?;
        let mut writes = first.writes;
        let mut all = None;
        for (is_all, part) in &query.unions {
            if all.is_some_and(|a| a != *is_all) {
                return Err(self.error(part.span, Detail::InvalidClauseComposition, "UNION and UNION ALL cannot be mixed in one query"));
            }
            all = Some(*is_all);
            let next = self.single(part)?;
            if next.columns != first.columns {
                return Err(self.error(
                    part.span,
                    Detail::DifferentColumnsInUnion,
                    format!("all parts of a UNION must return the same columns: {:?} against {:?}", first.columns, next.columns),
                ));
            }
            writes |= next.writes;
        }
        Ok(Checked { columns: first.columns, writes })
    }

    fn single(&self, query: &SingleQuery) -> Result<Checked, QueryError> {
        self.single_from(query, Scope::default())
    }

    /// The columns of `CALL { … }` under `outer`: each part sees the outer variables only if it
    /// starts with a `WITH` of plain variables (the importing WITH); every part ends with RETURN
    /// of the same columns, which must be new names outside.
    fn subquery(&self, sq: &crate::ast::Subquery, outer: &Scope) -> Result<Vec<String>, QueryError> {
        if let Some(t) = &sq.in_transactions {
            if sq.optional {
                return Err(self.error(t.span, Detail::InvalidClauseComposition, "OPTIONAL CALL { … } cannot run IN TRANSACTIONS"));
            }
            // The batch size is known before any row: a literal or a parameter.
            if let Some(n) = &t.rows {
                self.expr(n, &Scope::new(), Agg::Forbidden)?;
            }
        }
        // A part that writes may end without RETURN (a unit subquery: each outer row passes on
        // once); UNION needs RETURN in every part.
        let unit = |q: &SingleQuery| !matches!(q.clauses.last(), Some(Clause::Return(_))) && q.clauses.iter().any(Clause::writes);
        let seen = |part: &SingleQuery| -> Result<Scope, QueryError> {
            Ok(match sq.outer_seen(part) {
                None => Scope::default(),
                Some(None) => outer.clone(),
                Some(Some(vars)) => {
                    let mut s = Scope::default();
                    for v in vars {
                        let ty = outer.get(&v.name).ok_or_else(|| self.undefined(&v.name, v.span))?;
                        s.insert(v.name.clone(), *ty);
                    }
                    s
                }
            })
        };
        if sq.query.unions.is_empty() && unit(&sq.query.first) {
            self.single_from(&sq.query.first, seen(&sq.query.first)?)?;
            return Ok(Vec::new());
        }
        let parts = std::iter::once((None, &sq.query.first)).chain(sq.query.unions.iter().map(|(all, q)| (Some(*all), q)));
        let mut columns: Option<Vec<String>> = None;
        let mut mode = None;
        for (all, part) in parts {
            if let Some(all) = all {
                if mode.is_some_and(|m| m != all) {
                    return Err(self.error(
                        part.span,
                        Detail::InvalidClauseComposition,
                        "UNION and UNION ALL cannot be mixed in one query",
                    ));
                }
                mode = Some(all);
            }
            if !matches!(part.clauses.last(), Some(Clause::Return(_))) {
                return Err(self.error(
                    part.span,
                    Detail::InvalidClauseComposition,
                    "each part of a CALL { … } ends with RETURN (only a CALL { … } of one part that writes may end without)",
                ));
            }
            let checked = self.single_from(part, seen(part)?)?;
            match &columns {
                Some(c) if *c != checked.columns => {
                    return Err(self.error(
                        part.span,
                        Detail::DifferentColumnsInUnion,
                        format!("all parts of a UNION must return the same columns: {c:?} against {:?}", checked.columns),
                    ))
                }
                _ => columns = Some(checked.columns),
            }
        }
        let columns = columns.unwrap_or_default();
        if let Some(c) = columns.iter().find(|c| outer.contains_key(*c)) {
            return Err(self.error(
                sq.span,
                Detail::VariableAlreadyBound,
                format!("variable `{c}` is already defined outside the CALL {{ … }}; return it under another name"),
            ));
        }
        Ok(columns)
    }

    /// `DELETE`: nodes, relationships or paths (or lists of them).
    fn delete(&self, d: &crate::ast::Delete, scope: &Scope) -> Result<(), QueryError> {
        for e in &d.exprs {
            if matches!(e.kind, ExprKind::HasLabels(..) | ExprKind::HasLabelExpr(..)) {
                return Err(self.error(
                    e.span,
                    Detail::InvalidDelete,
                    "DELETE takes nodes, relationships or paths; to remove a label use REMOVE n:Label",
                ));
            }
            let ty = self.expr(e, scope, Agg::Forbidden)?;
            if !ty.fits(&[Ty::Node, Ty::Rel, Ty::Path, Ty::List, Ty::RelList]) {
                return Err(self.error(
                    e.span,
                    Detail::InvalidArgumentType,
                    format!("DELETE takes nodes, relationships or paths, not {}", ty.name()),
                ));
            }
        }
        Ok(())
    }

    /// `LOAD CSV`: its URL, its field terminator (one byte the CSV reader takes), its variable.
    fn load_csv(&self, l: &crate::ast::LoadCsv, scope: &mut Scope) -> Result<(), QueryError> {
        self.expr(&l.from, scope, Agg::Forbidden)?;
        if let Some((t, span)) = &l.terminator {
            if crate::plan::field_terminator(t).is_none() {
                return Err(self.error(
                    *span,
                    Detail::InvalidArgumentValue,
                    format!("FIELDTERMINATOR takes one ASCII character other than a quote or a line break, got {t:?}"),
                ));
            }
        }
        self.bind_new(scope, &l.var, Ty::Any)
    }

    fn single_from(&self, query: &SingleQuery, scope: Scope) -> Result<Checked, QueryError> {
        let mut scope = scope;
        let mut columns = Vec::new();
        let mut writes = false;
        let last = query.clauses.len().saturating_sub(1);
        for (i, clause) in query.clauses.iter().enumerate() {
            writes |= clause.writes();
            match clause {
                Clause::Match(m) => self.match_clause(m, &mut scope)?,
                Clause::Unwind(u) => {
                    self.expr(&u.expr, &scope, Agg::Forbidden)?;
                    self.bind_new(&mut scope, &u.var, Ty::Any)?;
                }
                Clause::LoadCsv(l) => self.load_csv(l, &mut scope)?,
                Clause::With(p) => {
                    let (next, _) = self.projection(p, &scope, false)?;
                    scope = next;
                }
                Clause::Return(p) => {
                    if i != last {
                        return Err(self.error(
                            query.clauses[i + 1].span_start(),
                            Detail::InvalidClauseComposition,
                            "RETURN must be the last clause of a query part",
                        ));
                    }
                    let (_, cols) = self.projection(p, &scope, true)?;
                    columns = cols;
                }
                Clause::Create(c) => {
                    for part in &c.pattern {
                        self.write_pattern(part, &mut scope, false)?;
                    }
                }
                Clause::Merge(m) => {
                    self.write_pattern(&m.part, &mut scope, true)?;
                    for item in m.on_create.iter().chain(&m.on_match) {
                        self.set_item(item, &scope)?;
                    }
                }
                Clause::Set(s) => {
                    for item in &s.items {
                        self.set_item(item, &scope)?;
                    }
                }
                Clause::Remove(r) => {
                    for item in &r.items {
                        match item {
                            RemoveItem::Property { target, .. } => {
                                let ty = self.expr(target, &scope, Agg::Forbidden)?;
                                self.want(target.span, ty, &[Ty::Node, Ty::Rel, Ty::Map], "REMOVE")?;
                            }
                            RemoveItem::Labels { var, .. } => self.want_var(var, &scope, &[Ty::Node])?,
                        }
                    }
                }
                Clause::Delete(d) => self.delete(d, &scope)?,
                Clause::Subquery(sq) => {
                    for c in self.subquery(sq, &scope)? {
                        scope.insert(c, Ty::Any);
                    }
                    if let Some(v) = sq.in_transactions.as_ref().and_then(|t| t.status.as_ref()) {
                        self.bind_new(&mut scope, v, Ty::Map)?;
                    }
                }
                Clause::Foreach(f) => self.foreach(f, &scope)?,
                Clause::Call(c) => {
                    let standalone = query.clauses.len() == 1;
                    let cols = self.call(c, &mut scope, standalone)?;
                    if standalone {
                        columns = cols;
                    }
                }
            }
        }
        let Some(last_clause) = query.clauses.last() else {
            return Ok(Checked { columns, writes });
        };
        let ends_well = query.finish || matches!(last_clause, Clause::Return(_) | Clause::Call(_)) || last_clause.writes();
        if !ends_well {
            return Err(self.error(
                last_clause.span_start(),
                Detail::InvalidClauseComposition,
                format!("a query cannot end with {} (end it with RETURN, an update clause or CALL)", last_clause.name()),
            ));
        }
        Ok(Checked { columns, writes })
    }

    /// `EXISTS { … }`, `COUNT { … }`, `COLLECT { … }`: a query of one part that sees the row's
    /// variables, reads only, and (COLLECT) returns one column. The parser ends EXISTS's and
    /// COUNT's without RETURN with one.
    fn subquery_expr(&self, kind: SubqueryKind, query: &SingleQuery, scope: &Scope) -> Result<Ty, QueryError> {
        let keyword = kind.keyword();
        if let Some(c) = query.clauses.iter().find(|c| c.writes()) {
            return Err(self.error(
                c.span_start(),
                Detail::InvalidClauseComposition,
                format!("{keyword} {{ … }} only reads; it cannot contain {}", c.name()),
            ));
        }
        if kind == SubqueryKind::Collect && !matches!(query.clauses.last(), Some(Clause::Return(_))) {
            return Err(self.error(query.span, Detail::InvalidClauseComposition, "COLLECT { … } ends with RETURN of one column"));
        }
        let checked = self.single_from(query, scope.clone())?;
        Ok(match kind {
            SubqueryKind::Exists => Ty::Bool,
            SubqueryKind::Count => Ty::Int,
            SubqueryKind::Collect if checked.columns.len() == 1 => Ty::List,
            SubqueryKind::Collect => {
                return Err(self.error(
                    query.span,
                    Detail::InvalidClauseComposition,
                    format!("COLLECT {{ … }} returns one column, not {}", checked.columns.len()),
                ))
            }
        })
    }

    /// `FOREACH`: its list is a list, its clauses update (and see its variable and what the
    /// query bound before; what they bind stays inside).
    fn foreach(&self, f: &crate::ast::Foreach, scope: &Scope) -> Result<(), QueryError> {
        let ty = self.expr(&f.list, scope, Agg::Forbidden)?;
        self.want(f.list.span, ty, &[Ty::List, Ty::RelList], "FOREACH")?;
        if let Some(c) = f.clauses.iter().find(|c| {
            !matches!(c, Clause::Create(_) | Clause::Merge(_) | Clause::Set(_) | Clause::Remove(_) | Clause::Delete(_) | Clause::Foreach(_))
        }) {
            return Err(self.error(
                c.span_start(),
                Detail::InvalidClauseComposition,
                format!("FOREACH runs update clauses only (CREATE, MERGE, SET, REMOVE, DELETE, FOREACH), not {}", c.name()),
            ));
        }
        let mut inner = scope.clone();
        self.bind_new(&mut inner, &f.var, Ty::Any)?;
        self.single_from(&SingleQuery { clauses: f.clauses.clone(), finish: false, span: f.span }, inner)?;
        Ok(())
    }

    // ---- binding -------------------------------------------------------------------------

    fn bind_new(&self, scope: &mut Scope, var: &Var, ty: Ty) -> Result<(), QueryError> {
        if scope.contains_key(&var.name) {
            return Err(self.error(var.span, Detail::VariableAlreadyBound, format!("variable `{}` is already defined", var.name)));
        }
        scope.insert(var.name.clone(), ty);
        Ok(())
    }

    /// Binds `var` as `ty`, or checks that its existing binding has that kind.
    fn bind_kind(&self, scope: &mut Scope, var: &Var, ty: Ty) -> Result<(), QueryError> {
        match scope.get(&var.name) {
            None => {
                scope.insert(var.name.clone(), ty);
                Ok(())
            }
            Some(&have) if have == ty || have == Ty::Any => Ok(()),
            // A list of relationships bound earlier may be matched again as a variable length.
            Some(Ty::List) if ty == Ty::RelList => Ok(()),
            Some(&have) => Err(self.error(
                var.span,
                Detail::VariableTypeConflict,
                format!("variable `{}` is {}, used here as {}", var.name, have.name(), ty.name()),
            )),
        }
    }

    fn match_clause(&self, m: &Match, scope: &mut Scope) -> Result<(), QueryError> {
        let mut rels_here: Vec<&str> = Vec::new();
        for part in &m.pattern {
            self.bind_part(part, scope, &mut rels_here)?;
        }
        for part in &m.pattern {
            self.pattern_exprs(part, scope, true)?;
        }
        if let Some(w) = &m.predicate {
            self.expr(w, scope, Agg::Forbidden)?;
        }
        Ok(())
    }

    /// Binds a MATCH pattern's variables.
    fn bind_part<'p>(&self, part: &'p PatternPart, scope: &mut Scope, rels_here: &mut Vec<&'p str>) -> Result<(), QueryError> {
        if part.shortest.is_some() {
            self.shortest_part(part)?;
        }
        if let Some(v) = &part.var {
            if scope.get(&v.name).is_some_and(|t| *t == Ty::Path) {
                return Err(self.error(v.span, Detail::VariableAlreadyBound, format!("path variable `{}` is already defined", v.name)));
            }
            self.bind_kind(scope, v, Ty::Path)?;
        }
        let nodes = std::iter::once(&part.start).chain(part.chain.iter().map(|(_, n)| n));
        for node in nodes {
            if let Some(v) = &node.var {
                self.bind_kind(scope, v, Ty::Node)?;
            }
        }
        for (rel, _) in &part.chain {
            if let Some(g) = &rel.group {
                self.bind_group(rel, g, scope, rels_here)?;
            }
            if let Some(v) = &rel.var {
                let ty = if rel.length.is_some() { Ty::RelList } else { Ty::Rel };
                if rels_here.contains(&v.name.as_str()) {
                    return Err(self.error(
                        v.span,
                        Detail::VariableAlreadyBound,
                        format!("relationship variable `{}` is used twice in one pattern", v.name),
                    ));
                }
                rels_here.push(&v.name);
                self.bind_kind(scope, v, ty)?;
            }
        }
        Ok(())
    }

    /// Binds a quantified group's variables, new ones, as the lists of each repetition's (its
    /// first relationship's is bound with the pattern's relationships).
    fn bind_group<'p>(
        &self,
        rel: &'p crate::ast::RelPattern,
        g: &'p crate::ast::Group,
        scope: &mut Scope,
        rels_here: &mut Vec<&'p str>,
    ) -> Result<(), QueryError> {
        let mut mine: Vec<&str> = rel.var.iter().map(|v| v.name.as_str()).collect();
        let nodes = g.nodes().filter_map(|n| n.var.as_ref()).map(|v| (v, Ty::List));
        let rels = g.more.iter().filter_map(|(r, _)| r.var.as_ref()).map(|v| (v, Ty::RelList));
        for (v, ty) in nodes.chain(rels) {
            if mine.contains(&v.name.as_str()) || rels_here.contains(&v.name.as_str()) {
                return Err(self.error(
                    v.span,
                    Detail::Unsupported,
                    format!("a quantified group's elements are each a variable of their own: `{}` twice", v.name),
                ));
            }
            if scope.contains_key(&v.name) {
                return Err(self.error(
                    v.span,
                    Detail::VariableAlreadyBound,
                    format!("variable `{}` is already defined; a quantified group's variables are its own", v.name),
                ));
            }
            mine.push(&v.name);
            scope.insert(v.name.clone(), ty);
        }
        rels_here.extend(g.more.iter().filter_map(|(r, _)| r.var.as_ref()).map(|v| v.name.as_str()));
        Ok(())
    }

    /// A `shortestPath(…)` / `allShortestPaths(…)` part: one relationship, from a lower bound of
    /// 0 or 1 (a breadth-first search finds the fewest hops; a longer lower bound is not that).
    fn shortest_part(&self, part: &PatternPart) -> Result<(), QueryError> {
        let [(rel, _)] = part.chain.as_slice() else {
            return Err(self.error(
                part.span,
                Detail::InvalidRelationshipPattern,
                "shortestPath and allShortestPaths take a pattern of one relationship, like (a)-[:KNOWS*]-(b)",
            ));
        };
        if rel.group.is_some() {
            return Err(self.error(
                rel.span,
                Detail::Unsupported,
                "shortestPath and allShortestPaths take a relationship, not a quantified group",
            ));
        }
        if let Some((Some(min), _)) = rel.length {
            if min > 1 {
                return Err(self.error(
                    rel.span,
                    Detail::InvalidRelationshipPattern,
                    format!("shortestPath and allShortestPaths take a lower bound of 0 or 1, not {min}"),
                ));
            }
        }
        Ok(())
    }

    /// Checks the property maps and inline predicates of a pattern.
    fn pattern_exprs(&self, part: &PatternPart, scope: &Scope, reading: bool) -> Result<(), QueryError> {
        let nodes = std::iter::once(&part.start).chain(part.chain.iter().map(|(_, n)| n));
        let props = nodes.map(|n| &n.props).chain(part.chain.iter().map(|(r, _)| &r.props)).filter_map(Option::as_ref);
        for p in props {
            if reading && matches!(p.kind, ExprKind::Param(_)) {
                return Err(self.error(
                    p.span,
                    Detail::InvalidParameterUse,
                    "a parameter cannot stand for a pattern's property map here; write {key: $param}",
                ));
            }
            self.expr(p, scope, Agg::Forbidden)?;
        }
        for (rel, _) in &part.chain {
            // Inside the inline WHERE, and a group's, the variables are one hop's, not the lists.
            let mut inner = scope.clone();
            if let Some(v) = &rel.var {
                inner.insert(v.name.clone(), Ty::Rel);
            }
            if let Some(g) = &rel.group {
                for v in g.nodes().filter_map(|n| n.var.as_ref()) {
                    inner.insert(v.name.clone(), Ty::Node);
                }
                for v in g.more.iter().filter_map(|(r, _)| r.var.as_ref()) {
                    inner.insert(v.name.clone(), Ty::Rel);
                }
                let more = g.more.iter().flat_map(|(r, _)| [&r.props, &r.predicate]);
                for e in g.nodes().map(|n| &n.props).chain(more).chain([&g.predicate]).flatten() {
                    self.expr(e, &inner, Agg::Forbidden)?;
                }
            }
            if let Some(w) = &rel.predicate {
                self.expr(w, &inner, Agg::Forbidden)?;
            }
        }
        Ok(())
    }

    /// Binds and checks a CREATE (`merge` false) or MERGE pattern.
    fn write_pattern(&self, part: &PatternPart, scope: &mut Scope, merge: bool) -> Result<(), QueryError> {
        let clause = if merge { "MERGE" } else { "CREATE" };
        if part.shortest.is_some() {
            return Err(self.error(
                part.span,
                Detail::InvalidClauseComposition,
                format!("{clause} cannot write a shortestPath or allShortestPaths pattern"),
            ));
        }
        let lone = part.chain.is_empty();
        let nodes = std::iter::once(&part.start).chain(part.chain.iter().map(|(_, n)| n));
        // Property maps see the variables bound before this part, and earlier nodes of it.
        for node in nodes {
            if node.label_expr.is_some() {
                return Err(self.error(
                    node.span,
                    Detail::UnexpectedSyntax,
                    format!("{clause} gives a node its labels: write them as :A:B or :A&B, not with |, ! or %"),
                ));
            }
            if let Some(p) = &node.props {
                if merge && matches!(p.kind, ExprKind::Param(_)) {
                    return Err(self.error(
                        p.span,
                        Detail::InvalidParameterUse,
                        "a parameter cannot stand for MERGE's property map; write {key: $param}",
                    ));
                }
                self.expr(p, scope, Agg::Forbidden)?;
            }
            let Some(v) = &node.var else { continue };
            match scope.get(&v.name) {
                Some(_) if lone || !node.labels.is_empty() || node.props.is_some() => {
                    return Err(self.error(
                        v.span,
                        Detail::VariableAlreadyBound,
                        format!("variable `{}` is already defined; {clause} cannot create it again", v.name),
                    ));
                }
                Some(_) => self.bind_kind(scope, v, Ty::Node)?,
                None => {
                    scope.insert(v.name.clone(), Ty::Node);
                }
            }
        }
        for (rel, _) in &part.chain {
            if let Some(v) = rel.var.as_ref().filter(|v| scope.contains_key(&v.name)) {
                return Err(self.error(
                    v.span,
                    Detail::VariableAlreadyBound,
                    format!("variable `{}` is already defined; {clause} cannot create it again", v.name),
                ));
            }
            if rel.types.len() != 1 {
                return Err(self.error(
                    rel.span,
                    Detail::NoSingleRelationshipType,
                    format!("{clause} needs exactly one relationship type, like -[:KNOWS]->"),
                ));
            }
            if rel.length.is_some() {
                return Err(self.error(
                    rel.span,
                    Detail::CreatingVarLength,
                    format!("{clause} cannot write a variable-length relationship"),
                ));
            }
            if !merge && rel.direction == Direction::Both {
                return Err(self.error(rel.span, Detail::RequiresDirectedRelationship, "CREATE needs a direction: -[:T]-> or <-[:T]-"));
            }
            if let Some(p) = &rel.props {
                if merge && matches!(p.kind, ExprKind::Param(_)) {
                    return Err(self.error(
                        p.span,
                        Detail::InvalidParameterUse,
                        "a parameter cannot stand for MERGE's property map; write {key: $param}",
                    ));
                }
                self.expr(p, scope, Agg::Forbidden)?;
            }
            if let Some(w) = &rel.predicate {
                return Err(self.error(w.span, Detail::UnexpectedSyntax, format!("{clause} takes no WHERE in a pattern")));
            }
            if let Some(v) = &rel.var {
                self.bind_new(scope, v, Ty::Rel)?;
            }
        }
        if let Some(v) = &part.var {
            self.bind_new(scope, v, Ty::Path)?;
        }
        Ok(())
    }

    fn set_item(&self, item: &SetItem, scope: &Scope) -> Result<(), QueryError> {
        match item {
            SetItem::Property { target, value, .. } => {
                let ty = self.expr(target, scope, Agg::Forbidden)?;
                self.want(target.span, ty, &[Ty::Node, Ty::Rel], "SET")?;
                self.expr(value, scope, Agg::Forbidden)?;
            }
            SetItem::Properties { var, value, .. } => {
                self.want_var(var, scope, &[Ty::Node, Ty::Rel])?;
                let ty = self.expr(value, scope, Agg::Forbidden)?;
                self.want(value.span, ty, &[Ty::Map, Ty::Node, Ty::Rel], "SET")?;
            }
            SetItem::Labels { var, .. } => self.want_var(var, scope, &[Ty::Node])?,
        }
        Ok(())
    }

    fn want(&self, span: Span, ty: Ty, want: &[Ty], what: &str) -> Result<(), QueryError> {
        if ty.fits(want) {
            return Ok(());
        }
        let mut names: Vec<_> = want.iter().map(|t| t.name()).collect();
        names.dedup();
        Err(self.error(span, Detail::InvalidArgumentType, format!("{what} expects {}, got {}", names.join(" or "), ty.name())))
    }

    fn want_var(&self, var: &Var, scope: &Scope, want: &[Ty]) -> Result<(), QueryError> {
        match scope.get(&var.name) {
            None => Err(self.undefined(&var.name, var.span)),
            Some(&ty) if ty.fits(want) => Ok(()),
            Some(&ty) => Err(self.error(
                var.span,
                Detail::VariableTypeConflict,
                format!("variable `{}` is {}, not {}", var.name, ty.name(), want[0].name()),
            )),
        }
    }

    fn undefined(&self, name: &str, span: Span) -> QueryError {
        self.error(span, Detail::UndefinedVariable, format!("variable `{name}` not defined"))
    }

    fn call(&self, c: &Call, scope: &mut Scope, standalone: bool) -> Result<Vec<String>, QueryError> {
        let Some(proc_) = procedure(&c.procedure.name) else {
            return Err(QueryError {
                kind: ErrorType::ProcedureError,
                detail: Detail::ProcedureNotFound,
                phase: Phase::Compile,
                message: format!("there is no procedure `{}`", c.procedure.name),
                at: Some(crate::error::Position::of(self.text, c.procedure.span.start)),
            });
        };
        if let Some(args) = &c.args {
            if args.len() < proc_.required || args.len() > proc_.args.len() {
                return Err(self.error(
                    c.procedure.span,
                    Detail::InvalidNumberOfArguments,
                    format!(
                        "{} takes {} to {} arguments ({}), got {}",
                        proc_.name,
                        proc_.required,
                        proc_.args.len(),
                        proc_.args.join(", "),
                        args.len()
                    ),
                ));
            }
            for a in args {
                self.expr(a, scope, Agg::Forbidden)?;
            }
        } else if !standalone || proc_.required > 0 {
            return Err(self.error(
                c.procedure.span,
                Detail::InvalidArgumentPassingMode,
                format!("{} needs its arguments in parentheses here", proc_.name),
            ));
        }
        let mut columns = Vec::new();
        match &c.yields {
            Some(items) => {
                for (column, var) in items {
                    if !proc_.yields.iter().any(|y| *y == column.name) {
                        return Err(self.error(
                            column.span,
                            Detail::UndefinedVariable,
                            format!("{} yields no column `{}` (it yields {})", proc_.name, column.name, proc_.yields.join(", ")),
                        ));
                    }
                    self.bind_new(scope, var, Ty::Any)?;
                    columns.push(var.name.clone());
                }
            }
            None if c.yield_all || standalone => {
                for y in proc_.yields {
                    let var = Var { name: (*y).to_owned(), span: c.span };
                    self.bind_new(scope, &var, Ty::Any)?;
                    columns.push((*y).to_owned());
                }
            }
            None => {
                return Err(self.error(
                    c.span,
                    Detail::UnexpectedSyntax,
                    format!("CALL {} inside a query needs YIELD (it yields {})", proc_.name, proc_.yields.join(", ")),
                ));
            }
        }
        if let Some(w) = &c.predicate {
            self.expr(w, scope, Agg::Forbidden)?;
        }
        Ok(columns)
    }

    // ---- projections ---------------------------------------------------------------------

    /// Checks a WITH or RETURN; gives the scope after it and its column names.
    fn projection(&self, p: &Projection, scope: &Scope, is_return: bool) -> Result<(Scope, Vec<String>), QueryError> {
        let mut next = Scope::default();
        let mut columns: Vec<String> = Vec::new();
        if p.star {
            if scope.is_empty() {
                return Err(self.error(
                    p.span,
                    Detail::NoVariablesInScope,
                    format!("{} * needs variables in scope, and there are none", if is_return { "RETURN" } else { "WITH" }),
                ));
            }
            for (name, ty) in scope {
                next.insert(name.clone(), *ty);
                columns.push(name.clone());
            }
        }
        let mut aggregating = false;
        let mut item_types = Vec::with_capacity(p.items.len());
        for item in &p.items {
            let ty = self.expr(&item.expr, scope, Agg::Allowed)?;
            aggregating |= contains_aggregate(&item.expr);
            item_types.push(ty);
            if !is_return && item.alias.is_none() && !matches!(item.expr.kind, ExprKind::Var(_)) {
                return Err(self.error(item.expr.span, Detail::NoExpressionAlias, "an expression in WITH needs a name: add AS name"));
            }
        }
        for (item, ty) in p.items.iter().zip(&item_types) {
            let column = item.column().to_owned();
            if columns.contains(&column) && !(p.star && matches!(&item.expr.kind, ExprKind::Var(v) if *v == column)) {
                return Err(self.error(
                    item.alias.as_ref().map_or(item.expr.span, |a| a.span),
                    Detail::ColumnNameConflict,
                    format!("column `{column}` is projected twice"),
                ));
            }
            if !columns.contains(&column) {
                columns.push(column.clone());
            }
            // A bare variable keeps its kind through WITH.
            next.insert(column, *ty);
        }
        if aggregating {
            let keys = GroupingKeys::of(self.text, p);
            for item in p.items.iter().filter(|i| contains_aggregate(&i.expr)) {
                if let Some(span) = keys.ambiguous(&item.expr) {
                    return Err(self.error(
                        span,
                        Detail::AmbiguousAggregationExpression,
                        "an expression mixing an aggregate with values must use only grouping keys outside the aggregate",
                    ));
                }
            }
        }
        // ORDER BY and WITH's WHERE see the new columns and the old variables; when the projection
        // aggregates or is DISTINCT, an old variable only inside an expression that was projected.
        let mut order_scope = scope.clone();
        order_scope.extend(next.iter().map(|(k, v)| (k.clone(), *v)));
        let narrowed = aggregating || p.distinct;
        for s in &p.order {
            if contains_aggregate(&s.expr) && !aggregating {
                return Err(self.error(s.expr.span, Detail::InvalidAggregation, "ORDER BY cannot aggregate unless the projection does"));
            }
            let allowed = if aggregating { Agg::Allowed } else { Agg::Forbidden };
            self.expr(&s.expr, &order_scope, allowed)?;
            if narrowed {
                if let Some((name, span)) = self.unprojected(&s.expr, p, &next) {
                    return Err(self.error(
                        span,
                        Detail::UndefinedVariable,
                        format!("variable `{name}` not defined: after DISTINCT or an aggregation only projected values can be sorted on"),
                    ));
                }
            }
        }
        for e in p.skip.iter().chain(&p.limit) {
            self.constant_count(e, if p.skip.as_ref() == Some(e) { "SKIP" } else { "LIMIT" })?;
        }
        if let Some(w) = &p.predicate {
            self.expr(w, &order_scope, Agg::Forbidden)?;
            if narrowed {
                if let Some((name, span)) = self.unprojected(w, p, &next) {
                    return Err(self.undefined(name, span));
                }
            }
        }
        Ok((next, columns))
    }

    /// The first variable `e` reads that is neither a new column nor inside a sub-expression
    /// written as one of the projection's items.
    fn unprojected<'e>(&self, e: &'e Expr, p: &Projection, next: &Scope) -> Option<(&'e str, Span)> {
        if p.items.iter().any(|i| same_expr(self.text, &i.expr, e)) {
            return None;
        }
        match &e.kind {
            ExprKind::Var(v) if !next.contains_key(v) => Some((v.as_str(), e.span)),
            // Their own variables are local; a full treatment is not needed for sorting keys.
            ExprKind::ListComprehension { .. }
            | ExprKind::Quantified { .. }
            | ExprKind::Reduce(_)
            | ExprKind::PatternComprehension { .. } => None,
            _ => {
                let mut found = None;
                e.for_each_child(|c| {
                    if found.is_none() {
                        found = self.unprojected(c, p, next);
                    }
                });
                found
            }
        }
    }

    fn constant_count(&self, e: &Expr, what: &str) -> Result<(), QueryError> {
        if let Some(span) = first_variable(e) {
            return Err(self.error(
                span,
                Detail::NonConstantExpression,
                format!("{what} takes a constant or a parameter, not an expression over variables"),
            ));
        }
        let ty = self.expr(e, &Scope::default(), Agg::Forbidden)?;
        match &e.kind {
            ExprKind::Lit(Literal::Int(i)) if *i < 0 => {
                Err(self.error(e.span, Detail::NegativeIntegerArgument, format!("{what} cannot be negative ({i})")))
            }
            _ if ty.fits(&[Ty::Int]) => Ok(()),
            _ => Err(self.error(e.span, Detail::InvalidArgumentType, format!("{what} takes an integer, got {}", ty.name()))),
        }
    }

    // ---- expressions ---------------------------------------------------------------------

    #[allow(clippy::too_many_lines)] // Reason: one arm per expression kind reads best in one place.
    fn expr(&self, e: &Expr, scope: &Scope, agg: Agg) -> Result<Ty, QueryError> {
        let ty = match &e.kind {
            ExprKind::Lit(l) => match l {
                Literal::Null => Ty::Null,
                Literal::Bool(_) => Ty::Bool,
                Literal::Int(_) => Ty::Int,
                Literal::Float(_) => Ty::Float,
                Literal::Str(_) => Ty::Str,
            },
            ExprKind::Param(_) => Ty::Any,
            ExprKind::Var(v) => *scope.get(v).ok_or_else(|| self.undefined(v, e.span))?,
            ExprKind::List(items) => {
                for i in items {
                    self.expr(i, scope, agg)?;
                }
                Ty::List
            }
            ExprKind::Map(items) => {
                for (_, v) in items {
                    self.expr(v, scope, agg)?;
                }
                Ty::Map
            }
            ExprKind::Prop(target, key) => {
                let ty = self.expr(target, scope, agg)?;
                self.want(target.span, ty, &[Ty::Node, Ty::Rel, Ty::Map], &format!("`.{}`", key.name))?;
                Ty::Any
            }
            ExprKind::Index(target, index) => {
                let ty = self.expr(target, scope, agg)?;
                let ity = self.expr(index, scope, agg)?;
                self.want(target.span, ty, &[Ty::List, Ty::RelList, Ty::Map, Ty::Node, Ty::Rel], "indexing")?;
                self.want(index.span, ity, &[Ty::Int, Ty::Str], "an index")?;
                Ty::Any
            }
            ExprKind::Slice(target, from, to) => {
                let ty = self.expr(target, scope, agg)?;
                self.want(target.span, ty, &[Ty::List, Ty::RelList], "slicing")?;
                for b in from.iter().chain(to) {
                    let bty = self.expr(b, scope, agg)?;
                    self.want(b.span, bty, &[Ty::Int], "a slice bound")?;
                }
                Ty::List
            }
            ExprKind::HasLabels(target, _) | ExprKind::HasLabelExpr(target, _) => {
                let ty = self.expr(target, scope, agg)?;
                self.want(target.span, ty, &[Ty::Node, Ty::Rel], "a label test")?;
                Ty::Bool
            }
            ExprKind::Unary(op, inner) => {
                let ty = self.expr(inner, scope, agg)?;
                match op {
                    UnaryOp::Not => {
                        self.want(inner.span, ty, &[Ty::Bool], "NOT")?;
                        Ty::Bool
                    }
                    UnaryOp::Neg | UnaryOp::Pos => {
                        self.want(inner.span, ty, &[Ty::Int, Ty::Float], "a sign")?;
                        ty
                    }
                }
            }
            ExprKind::Binary(op, a, b) => {
                let ta = self.expr(a, scope, agg)?;
                let tb = self.expr(b, scope, agg)?;
                binary_type(self, *op, (a, ta), (b, tb))?
            }
            ExprKind::IsNull(inner, _) | ExprKind::IsType(inner, _, _) => {
                self.expr(inner, scope, agg)?;
                Ty::Bool
            }
            ExprKind::Case { subject, whens, otherwise } => {
                if let Some(s) = subject {
                    self.expr(s, scope, agg)?;
                }
                for (w, t) in whens {
                    self.expr(w, scope, agg)?;
                    self.expr(t, scope, agg)?;
                }
                if let Some(o) = otherwise {
                    self.expr(o, scope, agg)?;
                }
                Ty::Any
            }
            ExprKind::CountStar => {
                self.aggregate_here(e.span, agg)?;
                Ty::Int
            }
            ExprKind::Call { name, distinct: _, args } => self.call_expr(name, args, e.span, scope, agg)?,
            ExprKind::ListComprehension { var, list, predicate, map } => {
                self.expr(list, scope, agg)?;
                let mut inner = scope.clone();
                inner.insert(var.name.clone(), Ty::Any);
                if let Some(p) = predicate {
                    self.expr(p, &inner, Agg::Forbidden)?;
                }
                if let Some(m) = map {
                    self.expr(m, &inner, agg)?;
                }
                Ty::List
            }
            ExprKind::Reduce(r) => {
                let crate::ast::Reduce { acc, init, var, list, step } = &**r;
                if acc.name == var.name {
                    return Err(self.error(
                        var.span,
                        Detail::VariableAlreadyBound,
                        format!("variable `{}` is already the accumulator of this reduce", var.name),
                    ));
                }
                self.expr(init, scope, agg)?;
                let lty = self.expr(list, scope, agg)?;
                self.want(list.span, lty, &[Ty::List, Ty::RelList], "reduce")?;
                let mut inner = scope.clone();
                inner.insert(acc.name.clone(), Ty::Any);
                inner.insert(var.name.clone(), Ty::Any);
                self.expr(step, &inner, Agg::Forbidden)?;
                Ty::Any
            }
            ExprKind::Quantified { var, list, predicate, .. } => {
                let lty = self.expr(list, scope, agg)?;
                self.want(list.span, lty, &[Ty::List, Ty::RelList], "a quantifier")?;
                let mut inner = scope.clone();
                inner.insert(var.name.clone(), Ty::Any);
                self.expr(predicate, &inner, Agg::Forbidden)?;
                Ty::Bool
            }
            ExprKind::Subquery { kind, query } => self.subquery_expr(*kind, query, scope)?,
            ExprKind::PatternComprehension { pattern, predicate, map } => {
                let mut inner = scope.clone();
                let mut rels = Vec::new();
                self.bind_part(pattern, &mut inner, &mut rels)?;
                self.pattern_exprs(pattern, &inner, true)?;
                if let Some(p) = predicate {
                    self.expr(p, &inner, Agg::Forbidden)?;
                }
                self.expr(map, &inner, agg)?;
                Ty::List
            }
            ExprKind::Pattern(part) => {
                let mut inner = scope.clone();
                let mut rels = Vec::new();
                self.bind_part(part, &mut inner, &mut rels)?;
                if let Some((name, span)) = pattern_vars(part).into_iter().find(|(n, _)| !scope.contains_key(*n)) {
                    return Err(self.error(
                        span,
                        Detail::UndefinedVariable,
                        format!("variable `{name}` not defined: a pattern used as a value cannot introduce variables"),
                    ));
                }
                self.pattern_exprs(part, &inner, true)?;
                Ty::Any
            }
            ExprKind::MapProjection { var, items } => {
                self.want_var(var, scope, &[Ty::Node, Ty::Rel, Ty::Map])?;
                for item in items {
                    match item {
                        MapProjectionItem::Literal(_, v) => {
                            self.expr(v, scope, agg)?;
                        }
                        MapProjectionItem::Variable(v) => {
                            if !scope.contains_key(&v.name) {
                                return Err(self.undefined(&v.name, v.span));
                            }
                        }
                        MapProjectionItem::Property(_) | MapProjectionItem::All => {}
                    }
                }
                Ty::Map
            }
        };
        Ok(ty)
    }

    fn aggregate_here(&self, span: Span, agg: Agg) -> Result<(), QueryError> {
        match agg {
            Agg::Allowed => Ok(()),
            Agg::Forbidden => Err(self.error(span, Detail::InvalidAggregation, "an aggregate cannot be used here")),
            Agg::Inside => Err(self.error(span, Detail::InvalidAggregation, "aggregates cannot nest")),
        }
    }

    fn call_expr(&self, name: &crate::ast::Name, args: &[Expr], span: Span, scope: &Scope, agg: Agg) -> Result<Ty, QueryError> {
        let Some(f) = function(&name.name) else {
            return Err(self.error(name.span, Detail::UnknownFunction, format!("unknown function `{}`", name.name)));
        };
        if args.len() < f.min_args || args.len() > f.max_args {
            let range = if f.max_args == usize::MAX {
                format!("at least {}", f.min_args)
            } else if f.min_args == f.max_args {
                f.min_args.to_string()
            } else {
                format!("{} to {}", f.min_args, f.max_args)
            };
            return Err(self.error(
                span,
                Detail::InvalidNumberOfArguments,
                format!("{} takes {range} arguments, got {}", f.name, args.len()),
            ));
        }
        let inner = if f.kind == FunctionKind::Aggregate {
            self.aggregate_here(span, agg)?;
            Agg::Inside
        } else {
            agg
        };
        let mut tys = Vec::with_capacity(args.len());
        for a in args {
            tys.push(self.expr(a, scope, inner)?);
        }
        let arg = |i: usize| (args[i].span, tys[i]);
        let want = |i: usize, ok: &[Ty]| {
            let (s, t) = arg(i);
            self.want(s, t, ok, f.name)
        };
        Ok(match f.name {
            "id" => {
                want(0, &[Ty::Node, Ty::Rel])?;
                Ty::Int
            }
            "labels" => {
                want(0, &[Ty::Node])?;
                Ty::List
            }
            "type" => {
                want(0, &[Ty::Rel])?;
                Ty::Str
            }
            "keys" => {
                want(0, &[Ty::Node, Ty::Rel, Ty::Map])?;
                Ty::List
            }
            "properties" => {
                want(0, &[Ty::Node, Ty::Rel, Ty::Map])?;
                Ty::Map
            }
            "startnode" | "endnode" => {
                want(0, &[Ty::Rel])?;
                Ty::Node
            }
            "nodes" | "relationships" => {
                want(0, &[Ty::Path])?;
                Ty::List
            }
            "length" => {
                want(0, &[Ty::Path])?;
                Ty::Int
            }
            "size" => {
                want(0, &[Ty::List, Ty::RelList, Ty::Str])?;
                Ty::Int
            }
            "isempty" => {
                want(0, &[Ty::List, Ty::RelList, Ty::Str, Ty::Map])?;
                Ty::Bool
            }
            "char_length" | "character_length" => {
                want(0, &[Ty::Str])?;
                Ty::Int
            }
            "shortestpath" | "allshortestpaths" => {
                if !matches!(&args[0].kind, ExprKind::Pattern(p) if p.shortest.is_some()) {
                    return Err(self.error(
                        args[0].span,
                        Detail::InvalidArgumentType,
                        format!("{} takes a pattern of one relationship, like (a)-[:KNOWS*]-(b)", f.name),
                    ));
                }
                if f.name == "shortestpath" {
                    Ty::Path
                } else {
                    Ty::List
                }
            }
            other => result_type(other),
        })
    }
}

/// The result type of a function whose arguments are checked at run time.
fn result_type(name: &str) -> Ty {
    match name {
        "collect"
        | "tail"
        | "range"
        | "split"
        | "vecf32"
        | "list.dedup"
        | "list.insert"
        | "list.insertlistelements"
        | "list.remove"
        | "list.sort"
        | "tobooleanlist"
        | "tofloatlist"
        | "tointegerlist"
        | "tostringlist"
        | "string.matchregex" => Ty::List,
        "tofloat"
        | "sqrt"
        | "exp"
        | "log"
        | "log10"
        | "rand"
        | "vec.cosinedistance"
        | "vec.euclideandistance"
        | "round"
        | "pi"
        | "e"
        | "sin"
        | "cos"
        | "tan"
        | "cot"
        | "asin"
        | "acos"
        | "atan"
        | "atan2"
        | "degrees"
        | "radians"
        | "haversin"
        | "pow"
        | "percentilecont" => Ty::Float,
        "tostring"
        | "tolower"
        | "toupper"
        | "lower"
        | "upper"
        | "trim"
        | "ltrim"
        | "rtrim"
        | "substring"
        | "left"
        | "right"
        | "replace"
        | "elementid"
        | "randomuuid"
        | "typeof"
        | "string.join"
        | "string.replaceregex"
        | "tojson"
        | "intern" => Ty::Str,
        "toboolean" | "exists" | "haslabels" | "isnan" => Ty::Bool,
        "count" | "tointeger" | "timestamp" | "indegree" | "outdegree" => Ty::Int,
        _ => Ty::Any,
    }
}

fn binary_type(c: &Checker<'_>, op: BinaryOp, (a, ta): (&Expr, Ty), (b, tb): (&Expr, Ty)) -> Result<Ty, QueryError> {
    Ok(match op {
        BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => {
            c.want(a.span, ta, &[Ty::Bool], op.text())?;
            c.want(b.span, tb, &[Ty::Bool], op.text())?;
            Ty::Bool
        }
        BinaryOp::In => {
            c.want(b.span, tb, &[Ty::List, Ty::RelList], "IN")?;
            Ty::Bool
        }
        BinaryOp::Eq
        | BinaryOp::Neq
        | BinaryOp::Lt
        | BinaryOp::Gt
        | BinaryOp::Le
        | BinaryOp::Ge
        | BinaryOp::StartsWith
        | BinaryOp::EndsWith
        | BinaryOp::Contains
        | BinaryOp::Regex => Ty::Bool,
        BinaryOp::Add => match (ta, tb) {
            (Ty::Int, Ty::Int) => Ty::Int,
            (Ty::Float, Ty::Int | Ty::Float) | (Ty::Int, Ty::Float) => Ty::Float,
            (Ty::Str, Ty::Str | Ty::Int | Ty::Float) | (Ty::Int | Ty::Float, Ty::Str) => Ty::Str,
            (Ty::List | Ty::RelList, _) | (_, Ty::List | Ty::RelList) => Ty::List,
            _ => Ty::Any,
        },
        BinaryOp::Concat => match (ta, tb) {
            (Ty::Str, Ty::Str) => Ty::Str,
            (Ty::List | Ty::RelList, Ty::List | Ty::RelList) => Ty::List,
            _ => Ty::Any,
        },
        BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod | BinaryOp::Pow => match (ta, tb) {
            (Ty::Int, Ty::Int) if op != BinaryOp::Pow => Ty::Int,
            (Ty::Float | Ty::Int, Ty::Float | Ty::Int) => Ty::Float,
            _ => Ty::Any,
        },
    })
}

impl Clause {
    /// The span of the clause's start, for errors about the clause as a whole.
    fn span_start(&self) -> Span {
        match self {
            Clause::Match(m) => m.span,
            Clause::Unwind(u) => u.span,
            Clause::LoadCsv(l) => l.span,
            Clause::With(p) | Clause::Return(p) => p.span,
            Clause::Create(c) => c.span,
            Clause::Merge(m) => m.span,
            Clause::Set(s) => s.span,
            Clause::Remove(r) => r.span,
            Clause::Delete(d) => d.span,
            Clause::Call(c) => c.span,
            Clause::Subquery(s) => s.span,
            Clause::Foreach(f) => f.span,
        }
    }
}

/// Whether `e` contains an aggregate call outside a nested scope.
pub fn contains_aggregate(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::CountStar => true,
        ExprKind::Call { name, .. } if function(&name.name).is_some_and(|f| f.kind == FunctionKind::Aggregate) => true,
        _ => {
            let mut found = false;
            e.for_each_child(|c| found |= contains_aggregate(c));
            found
        }
    }
}

/// The grouping keys of an aggregating projection, as the rule for mixed items reads them: bare
/// variables, and property accesses written as an item (`me.age`). A longer expression that
/// happens to be an item (`me.age + you.age`) is not recognised inside another one.
struct GroupingKeys<'a> {
    text: &'a str,
    vars: Vec<&'a str>,
    props: Vec<String>,
}

impl<'a> GroupingKeys<'a> {
    fn of(text: &'a str, p: &'a Projection) -> GroupingKeys<'a> {
        let mut keys = GroupingKeys { text, vars: Vec::new(), props: Vec::new() };
        for item in p.items.iter().filter(|i| !contains_aggregate(&i.expr)) {
            match &item.expr.kind {
                ExprKind::Var(v) => keys.vars.push(v),
                ExprKind::Prop(..) => keys.props.push(squash(text, &item.expr)),
                _ => {}
            }
        }
        keys
    }

    /// In an aggregating item, the first sub-expression outside the aggregates that reads a
    /// variable that is not a grouping key (a comprehension's, quantifier's or reduce's own
    /// variables are not the row's: `[x IN collect(n) | x.v]` is fine).
    fn ambiguous(&self, e: &Expr) -> Option<Span> {
        self.ambiguous_in(e, &mut Vec::new())
    }

    fn ambiguous_in<'e>(&self, e: &'e Expr, locals: &mut Vec<&'e str>) -> Option<Span> {
        let within = |vars: &[&'e str], parts: &[Option<&'e Expr>], locals: &mut Vec<&'e str>| {
            locals.extend_from_slice(vars);
            let found = parts.iter().flatten().find_map(|p| self.ambiguous_in(p, locals));
            locals.truncate(locals.len() - vars.len());
            found
        };
        match &e.kind {
            ExprKind::CountStar => None,
            ExprKind::Call { name, .. } if function(&name.name).is_some_and(|f| f.kind == FunctionKind::Aggregate) => None,
            ExprKind::Var(v) if self.vars.contains(&v.as_str()) || locals.contains(&v.as_str()) => None,
            ExprKind::Var(_) => Some(e.span),
            ExprKind::Prop(..) if self.props.contains(&squash(self.text, e)) => None,
            ExprKind::ListComprehension { var, list, predicate, map } => {
                self.ambiguous_in(list, locals).or_else(|| within(&[var.name.as_str()], &[predicate.as_deref(), map.as_deref()], locals))
            }
            ExprKind::Quantified { var, list, predicate, .. } => {
                self.ambiguous_in(list, locals).or_else(|| within(&[var.name.as_str()], &[Some(predicate)], locals))
            }
            ExprKind::Reduce(r) => self
                .ambiguous_in(&r.init, locals)
                .or_else(|| self.ambiguous_in(&r.list, locals))
                .or_else(|| within(&[r.acc.name.as_str(), r.var.name.as_str()], &[Some(&r.step)], locals)),
            _ => {
                let mut found = None;
                e.for_each_child(|c| {
                    if found.is_none() {
                        found = self.ambiguous_in(c, locals);
                    }
                });
                found
            }
        }
    }
}

/// The first variable an expression reads (outside nested scopes' own variables).
fn first_variable(e: &Expr) -> Option<Span> {
    match &e.kind {
        ExprKind::Var(_) | ExprKind::Pattern(_) | ExprKind::Subquery { .. } => Some(e.span),
        _ => {
            let mut found = None;
            e.for_each_child(|c| {
                if found.is_none() {
                    found = first_variable(c);
                }
            });
            found
        }
    }
}

/// The named variables of a pattern part.
fn pattern_vars(part: &PatternPart) -> Vec<(&str, Span)> {
    let mut out = Vec::new();
    if let Some(v) = &part.var {
        out.push((v.name.as_str(), v.span));
    }
    let nodes = std::iter::once(&part.start).chain(part.chain.iter().map(|(_, n)| n));
    for n in nodes {
        if let Some(v) = &n.var {
            out.push((v.name.as_str(), v.span));
        }
    }
    for (r, _) in &part.chain {
        if let Some(v) = &r.var {
            out.push((v.name.as_str(), v.span));
        }
        if let Some(g) = &r.group {
            let rels = g.more.iter().filter_map(|(r, _)| r.var.as_ref());
            out.extend(g.nodes().filter_map(|n| n.var.as_ref()).chain(rels).map(|v| (v.name.as_str(), v.span)));
        }
    }
    out
}

/// An expression's text without whitespace.
fn squash(text: &str, e: &Expr) -> String {
    text.get(e.span.start..e.span.end).unwrap_or("").chars().filter(|c| !c.is_whitespace()).collect()
}

/// Whether two expressions are written the same (ignoring whitespace).
fn same_expr(text: &str, a: &Expr, b: &Expr) -> bool {
    squash(text, a) == squash(text, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(text: &str) -> Option<Detail> {
        let statement = crate::parser::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        check(text, &statement).err().map(|e| e.detail)
    }

    #[test]
    fn each_rule_names_its_detail() {
        for (text, want) in [
            ("MATCH (n) RETURN m", Some(Detail::UndefinedVariable)),
            ("MATCH ()-[r]-(r) RETURN r", Some(Detail::VariableTypeConflict)),
            ("MATCH r = ()-[]-(), (r) RETURN r", Some(Detail::VariableTypeConflict)),
            ("WITH 123 AS n MATCH (n) RETURN n", Some(Detail::VariableTypeConflict)),
            ("MATCH (a) CREATE (a)", Some(Detail::VariableAlreadyBound)),
            ("MATCH (a) CREATE (a {name: 'foo'}) RETURN a", Some(Detail::VariableAlreadyBound)),
            ("MATCH (a) CREATE (a)-[:T]->(b)", None),
            ("CREATE (a)-[:A|B]->(b)", Some(Detail::NoSingleRelationshipType)),
            ("CREATE (a)-[:T]-(b)", Some(Detail::RequiresDirectedRelationship)),
            ("CREATE (a)-[:T*2]->(b)", Some(Detail::CreatingVarLength)),
            ("MATCH (n $p) RETURN n", Some(Detail::InvalidParameterUse)),
            ("CREATE (n $p)", None),
            ("MATCH (a) WHERE count(a) > 10 RETURN a", Some(Detail::InvalidAggregation)),
            ("RETURN count(count(*))", Some(Detail::InvalidAggregation)),
            ("MATCH (me)--(you) WITH me.age + count(you.age) AS agg RETURN *", Some(Detail::AmbiguousAggregationExpression)),
            ("MATCH (me)--(you) WITH me, me.age + count(you.age) AS agg RETURN *", None),
            ("MATCH (n) RETURN n SKIP n.count", Some(Detail::NonConstantExpression)),
            ("MATCH (n) RETURN n SKIP -1", Some(Detail::NegativeIntegerArgument)),
            ("MATCH (n) RETURN n LIMIT 1.5", Some(Detail::InvalidArgumentType)),
            ("MATCH (n) RETURN n LIMIT $l", None),
            ("RETURN 1 AS a, 2 AS a", Some(Detail::ColumnNameConflict)),
            ("MATCH () RETURN *", Some(Detail::NoVariablesInScope)),
            ("MATCH (a) RETURN foo(a)", Some(Detail::UnknownFunction)),
            ("MATCH (n) DELETE n:Person", Some(Detail::InvalidDelete)),
            ("RETURN NOT 1", Some(Detail::InvalidArgumentType)),
            ("RETURN 123 AND true", Some(Detail::InvalidArgumentType)),
            ("WITH 123 AS x RETURN x.num", Some(Detail::InvalidArgumentType)),
            ("MATCH p = (a) RETURN labels(p)", Some(Detail::InvalidArgumentType)),
            ("RETURN 1 IN 2", Some(Detail::InvalidArgumentType)),
            ("MATCH (n) WITH n.num1 AS foo ORDER BY count(1) RETURN foo", Some(Detail::InvalidAggregation)),
            ("MATCH (a) RETURN a UNION RETURN 1 AS b", Some(Detail::DifferentColumnsInUnion)),
            ("MATCH (a)", Some(Detail::InvalidClauseComposition)),
            ("MATCH (a) WHERE (a)-->(b) RETURN a", Some(Detail::UndefinedVariable)),
            ("MATCH (a) WHERE (a)-->(:B) RETURN a", None),
            ("RETURN [x IN [1, 2] WHERE x > 1 | x * 2] AS l", None),
            ("RETURN x", Some(Detail::UndefinedVariable)),
            ("CALL db.labels() YIELD label RETURN label", None),
            ("CALL db.labels", None),
            ("CALL db.nope()", Some(Detail::ProcedureNotFound)),
            ("CALL db.labels() YIELD nope RETURN nope", Some(Detail::UndefinedVariable)),
            ("UNWIND [1] AS x UNWIND [2] AS x RETURN x", Some(Detail::VariableAlreadyBound)),
            ("MATCH (a)-[r*1..2]->(b) WITH r RETURN size(r)", None),
            ("MATCH (n) RETURN n.x AS x ORDER BY n.y", None),
            ("MATCH (n) RETURN DISTINCT n.x AS x ORDER BY n.y", Some(Detail::UndefinedVariable)),
            ("MATCH (a) WITH a.name AS name, count(*) AS cnt ORDER BY a.name + 'C' RETURN name", None),
            ("MATCH (a) WITH a.name AS name WHERE a.name = 'B' RETURN *", None),
            ("MATCH (me)--(you) WITH me.age AS age, me.age + count(you.age) AS agg RETURN *", None),
            (
                "MATCH (me)--(you) WITH me.age + you.age AS grp, me.age + you.age + count(*) AS agg RETURN *",
                Some(Detail::AmbiguousAggregationExpression),
            ),
            ("MATCH (a)-[r]->(b) MERGE (a)-[r]->(b)", Some(Detail::VariableAlreadyBound)),
            ("MATCH ()-[r]->() WITH [r] AS rs MATCH (a)-[rs*]->(b) RETURN a", None),
        ] {
            assert_eq!(detail(text), want, "{text}");
        }
    }

    #[test]
    fn columns_are_named_as_written() {
        let text = "MATCH (n) RETURN n.name, count(*) AS c, labels(n)";
        let statement = crate::parser::parse(text).expect("parses");
        assert_eq!(check(text, &statement).expect("checks").columns, ["n.name", "c", "labels(n)"]);
    }
}
