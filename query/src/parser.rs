//! A recursive-descent parser for statements, clauses and patterns; expressions are in `expr.rs`.
//!
//! Errors say what was expected and what was found, at the token's line and column
//! (`expected ')' at 1:24, found WHERE`). The parser never panics on input: every index into the
//! token list is bounds-checked by `peek`, which returns `Tok::End` past the end.

use crate::ast::{
    Call, Clause, Create, Delete, Direction, Expr, ExprKind, Foreach, Group, LabelExpr, LoadCsv, Match, Merge, Mode, Name, NodePattern,
    PatternPart, Projection, ProjectionItem, Query, RelPattern, RemoveClause, RemoveItem, SetClause, SetItem, Shortest, SingleQuery,
    SortItem, Statement, Temporal, Unwind, Var,
};
use crate::cursor::{parse_int, Parser};
use crate::error::{Detail, QueryError, Span};
use crate::lexer::{lex, Sym, Tok};

/// A variable length's bounds: at least, at most.
type Bounds = (Option<u64>, Option<u64>);

/// Parses one statement (an optional trailing `;` is allowed).
pub fn parse(text: &str) -> Result<Statement, QueryError> {
    let tokens = lex(text)?;
    let mut p = Parser::new(text, tokens);
    let statement = p.statement()?;
    p.eat_sym(Sym::Semicolon);
    if !matches!(p.peek(), Tok::End) {
        return Err(p.unexpected("the end of the query"));
    }
    Ok(statement)
}

/// Parses one expression alone (a row policy's predicate): the whole text must be the expression.
pub fn parse_expression(text: &str) -> Result<Expr, QueryError> {
    let tokens = lex(text)?;
    let mut p = Parser::new(text, tokens);
    let e = p.expr()?;
    if !matches!(p.peek(), Tok::End) {
        return Err(p.unexpected("the end of the expression"));
    }
    Ok(e)
}

impl Parser<'_> {
    // ---- statements ----------------------------------------------------------------------

    fn statement(&mut self) -> Result<Statement, QueryError> {
        let mode = if self.eat_kw("EXPLAIN") {
            Mode::Explain
        } else if self.eat_kw("PROFILE") {
            Mode::Profile
        } else {
            Mode::Run
        };
        let temporal = self.temporal()?;
        let query = self.query()?;
        Ok(Statement { mode, temporal, query })
    }

    fn temporal(&mut self) -> Result<Temporal, QueryError> {
        if self.at_kw("AS") && self.peek_at(1).is_keyword("OF") {
            self.pos += 2;
            return Ok(Temporal::AsOf(self.time_expr()?));
        }
        if self.at_kw("KNOWN") && self.peek_at(1).is_keyword("AS") && self.peek_at(2).is_keyword("OF") {
            self.pos += 3;
            return Ok(Temporal::KnownAsOf(self.time_expr()?));
        }
        if self.at_kw("ALL") && self.peek_at(1).is_keyword("VERSIONS") {
            self.pos += 2;
            return Ok(Temporal::AllVersions);
        }
        Ok(Temporal::Now)
    }

    /// The time after `AS OF`: a string, an integer or a parameter.
    fn time_expr(&mut self) -> Result<Expr, QueryError> {
        match self.peek() {
            Tok::Str(_) | Tok::Int(_) | Tok::Param(_) => self.expr_atom(),
            // `datetime('…')` or `date('…')`: a temporal value's instant.
            Tok::Ident(name) if name.eq_ignore_ascii_case("datetime") || name.eq_ignore_ascii_case("date") => self.expr_atom(),
            _ => Err(self.unexpected("a time (an RFC 3339 string, epoch seconds, a parameter, datetime(…) or date(…))")),
        }
    }

    pub(crate) fn query(&mut self) -> Result<Query, QueryError> {
        let first = self.single_query()?;
        let mut unions = Vec::new();
        while self.eat_kw("UNION") {
            let all = self.eat_kw("ALL");
            unions.push((all, self.single_query()?));
        }
        Ok(Query { first, unions })
    }

    fn single_query(&mut self) -> Result<SingleQuery, QueryError> {
        let start = self.span();
        let mut clauses = Vec::new();
        loop {
            if matches!(self.peek(), Tok::End) || self.at_sym(Sym::Semicolon) || self.at_sym(Sym::RBrace) || self.at_kw("UNION") {
                break;
            }
            if !clauses.is_empty() && self.eat_kw("FINISH") {
                let ends =
                    matches!(self.peek(), Tok::End) || self.at_sym(Sym::Semicolon) || self.at_sym(Sym::RBrace) || self.at_kw("UNION");
                if !ends {
                    return Err(self.unexpected("the end of the query after FINISH"));
                }
                return Ok(SingleQuery { clauses, finish: true, span: start.to(self.prev_span()) });
            }
            clauses.push(self.clause()?);
        }
        if clauses.is_empty() {
            return Err(self.unexpected("a clause (MATCH, RETURN, CREATE, …)"));
        }
        Ok(SingleQuery { clauses, finish: false, span: start.to(self.prev_span()) })
    }

    /// `FOREACH (x IN list | clause …)`, after its keyword.
    fn foreach(&mut self, start: Span) -> Result<Clause, QueryError> {
        self.expect_sym(Sym::LParen)?;
        let var = self.var()?;
        self.expect_kw("IN")?;
        let list = self.expr()?;
        self.expect_sym(Sym::Pipe)?;
        let mut clauses = vec![self.clause()?];
        while !self.at_sym(Sym::RParen) {
            clauses.push(self.clause()?);
        }
        self.expect_sym(Sym::RParen)?;
        Ok(Clause::Foreach(Foreach { var, list, clauses, span: start.to(self.prev_span()) }))
    }

    /// `LOAD CSV [WITH HEADERS] FROM e AS x [FIELDTERMINATOR 'c']`, at its first keyword.
    fn load_csv(&mut self, start: Span) -> Result<Clause, QueryError> {
        self.expect_kw("LOAD")?;
        self.expect_kw("CSV")?;
        let headers = self.eat_kw("WITH");
        if headers {
            self.expect_kw("HEADERS")?;
        }
        self.expect_kw("FROM")?;
        let from = self.expr()?;
        self.expect_kw("AS")?;
        let var = self.var()?;
        let terminator = if self.eat_kw("FIELDTERMINATOR") {
            let at = self.span();
            let Tok::Str(s) = self.peek().clone() else {
                return Err(self.unexpected("a string after FIELDTERMINATOR (one character, such as ';' or '\\t')"));
            };
            self.bump();
            Some((s, at))
        } else {
            None
        };
        Ok(Clause::LoadCsv(LoadCsv { headers, from, var, terminator, span: start.to(self.prev_span()) }))
    }

    fn clause(&mut self) -> Result<Clause, QueryError> {
        let start = self.span();
        if self.eat_kw("OPTIONAL") {
            if self.eat_kw("CALL") {
                return match self.call_clause(start)? {
                    Clause::Subquery(mut s) => {
                        s.optional = true;
                        Ok(Clause::Subquery(s))
                    }
                    Clause::Call(mut c) => {
                        c.optional = true;
                        Ok(Clause::Call(c))
                    }
                    other => Ok(other),
                };
            }
            self.expect_kw("MATCH")?;
            return self.match_clause(true, start);
        }
        if self.eat_kw("MATCH") {
            return self.match_clause(false, start);
        }
        if self.at_kw("LOAD") {
            return self.load_csv(start);
        }
        if self.eat_kw("UNWIND") {
            let expr = self.expr()?;
            self.expect_kw("AS")?;
            let var = self.var()?;
            return Ok(Clause::Unwind(Unwind { expr, var, span: start.to(self.prev_span()) }));
        }
        if self.eat_kw("WITH") {
            return Ok(Clause::With(self.projection(true, start)?));
        }
        if self.eat_kw("SHOW") {
            if let Some(show) = self.show_procedures(start)? {
                return Ok(show);
            }
            return self.show_indexes(start);
        }
        if self.eat_kw("RETURN") {
            return Ok(Clause::Return(self.projection(false, start)?));
        }
        if self.eat_kw("CREATE") {
            let pattern = self.pattern()?;
            return Ok(Clause::Create(Create { pattern, span: start.to(self.prev_span()) }));
        }
        if self.eat_kw("MERGE") {
            return self.merge(start);
        }
        if self.eat_kw("FOREACH") {
            return self.foreach(start);
        }
        if self.eat_kw("SET") {
            let items = self.set_items()?;
            return Ok(Clause::Set(SetClause { items, span: start.to(self.prev_span()) }));
        }
        if self.eat_kw("REMOVE") {
            return self.remove(start);
        }
        if self.at_kw("DETACH") || self.at_kw("DELETE") {
            let detach = self.eat_kw("DETACH");
            self.expect_kw("DELETE")?;
            let mut exprs = vec![self.expr()?];
            while self.eat_sym(Sym::Comma) {
                exprs.push(self.expr()?);
            }
            return Ok(Clause::Delete(Delete { detach, exprs, span: start.to(self.prev_span()) }));
        }
        if self.eat_kw("CALL") {
            return self.call_clause(start);
        }
        Err(self.unexpected("a clause (MATCH, RETURN, CREATE, …)"))
    }

    /// `IN TRANSACTIONS [OF n ROW|ROWS] [ON ERROR FAIL|CONTINUE|BREAK] [REPORT STATUS AS s]` after a
    /// subquery, if there.
    fn in_transactions(&mut self) -> Result<Option<crate::ast::InTransactions>, QueryError> {
        if !(self.at_kw("IN") && matches!(self.peek_at(1), Tok::Ident(w) if w.eq_ignore_ascii_case("TRANSACTIONS"))) {
            return Ok(None);
        }
        let start = self.span();
        self.bump();
        self.bump();
        let rows = if self.eat_kw("OF") {
            let n = self.expr()?;
            if !(self.eat_kw("ROWS") || self.eat_kw("ROW")) {
                return Err(self.unexpected("ROWS"));
            }
            Some(n)
        } else {
            None
        };
        let on_error = if self.eat_kw("ON") {
            self.expect_kw("ERROR")?;
            if self.eat_kw("FAIL") {
                crate::ast::OnError::Fail
            } else if self.eat_kw("CONTINUE") {
                crate::ast::OnError::Continue
            } else if self.eat_kw("BREAK") {
                crate::ast::OnError::Break
            } else if self.at_kw("RETRY") {
                return Err(QueryError::syntax(
                    self.text,
                    self.span(),
                    Detail::Unsupported,
                    "ON ERROR RETRY is not supported: FAIL, CONTINUE or BREAK",
                ));
            } else {
                return Err(self.unexpected("FAIL, CONTINUE or BREAK after ON ERROR"));
            }
        } else {
            crate::ast::OnError::Fail
        };
        let status = if self.at_kw("REPORT") {
            let at = self.span();
            self.bump();
            self.expect_kw("STATUS")?;
            self.expect_kw("AS")?;
            if on_error == crate::ast::OnError::Fail {
                return Err(QueryError::syntax(
                    self.text,
                    at,
                    Detail::InvalidClauseComposition,
                    "REPORT STATUS needs ON ERROR CONTINUE or ON ERROR BREAK (with FAIL a failed batch ends the query)",
                ));
            }
            Some(self.var()?)
        } else {
            None
        };
        Ok(Some(crate::ast::InTransactions { rows, on_error, status, span: start.to(self.prev_span()) }))
    }

    /// After `CALL`: a subquery (`{ … }`, with its scope `(…)`) or a procedure call.
    fn call_clause(&mut self, start: Span) -> Result<Clause, QueryError> {
        let scope = if self.eat_sym(Sym::LParen) {
            let scope = if self.eat_sym(Sym::Star) {
                crate::ast::Imports::All
            } else {
                let mut vars = Vec::new();
                while !self.at_sym(Sym::RParen) {
                    vars.push(self.var()?);
                    if !self.eat_sym(Sym::Comma) {
                        break;
                    }
                }
                crate::ast::Imports::Vars(vars)
            };
            self.expect_sym(Sym::RParen)?;
            if !self.at_sym(Sym::LBrace) {
                return Err(self.unexpected("`{` opening the subquery after its scope `(…)`"));
            }
            Some(scope)
        } else {
            None
        };
        if self.eat_sym(Sym::LBrace) {
            self.enter()?;
            let query = self.query()?;
            self.expect_sym(Sym::RBrace)?;
            self.leave();
            let in_transactions = self.in_transactions()?;
            return Ok(Clause::Subquery(crate::ast::Subquery {
                query: Box::new(query),
                scope,
                optional: false,
                in_transactions,
                span: start.to(self.prev_span()),
            }));
        }
        self.call(start)
    }

    fn match_clause(&mut self, optional: bool, start: Span) -> Result<Clause, QueryError> {
        let pattern = self.pattern()?;
        let predicate = if self.eat_kw("WHERE") { Some(self.expr()?) } else { None };
        Ok(Clause::Match(Match { optional, pattern, predicate, span: start.to(self.prev_span()) }))
    }

    fn merge(&mut self, start: Span) -> Result<Clause, QueryError> {
        let part = self.pattern_part()?;
        let (mut on_create, mut on_match) = (Vec::new(), Vec::new());
        while self.at_kw("ON") {
            self.pos += 1;
            let create = if self.eat_kw("CREATE") {
                true
            } else if self.eat_kw("MATCH") {
                false
            } else {
                return Err(self.unexpected("CREATE or MATCH after ON"));
            };
            self.expect_kw("SET")?;
            let items = self.set_items()?;
            if create {
                on_create.extend(items);
            } else {
                on_match.extend(items);
            }
        }
        Ok(Clause::Merge(Merge { part, on_create, on_match, span: start.to(self.prev_span()) }))
    }

    fn set_items(&mut self) -> Result<Vec<SetItem>, QueryError> {
        let mut items = vec![self.set_item()?];
        while self.eat_sym(Sym::Comma) {
            items.push(self.set_item()?);
        }
        Ok(items)
    }

    fn set_item(&mut self) -> Result<SetItem, QueryError> {
        // `n = map`, `n += map`, `n:A:B`.
        if self.at_var() {
            let next = self.peek_at(1).clone();
            if matches!(next, Tok::Sym(Sym::Eq | Sym::PlusEq)) {
                let var = self.var()?;
                let merge = matches!(self.bump(), Tok::Sym(Sym::PlusEq));
                let value = self.expr()?;
                return Ok(SetItem::Properties { var, value, merge });
            }
            if matches!(next, Tok::Sym(Sym::Colon)) {
                let var = self.var()?;
                let labels = self.labels()?;
                return Ok(SetItem::Labels { var, labels });
            }
        }
        let (target, key) = self.property_target()?;
        self.expect_sym(Sym::Eq)?;
        let value = self.expr()?;
        Ok(SetItem::Property { target, key, value })
    }

    /// `expr.key` for SET and REMOVE: a property access whose last step is split off.
    fn property_target(&mut self) -> Result<(Expr, Name), QueryError> {
        let expr = self.expr_postfix()?;
        match expr.kind {
            ExprKind::Prop(target, key) => Ok((*target, key)),
            _ => Err(self.error_at(
                expr.span,
                Detail::UnexpectedSyntax,
                "expected a property (`n.key`), a variable with labels (`n:L`) or `n = map`",
            )),
        }
    }

    fn remove(&mut self, start: Span) -> Result<Clause, QueryError> {
        let mut items = Vec::new();
        loop {
            if self.at_var() && matches!(self.peek_at(1), Tok::Sym(Sym::Colon)) {
                let var = self.var()?;
                let labels = self.labels()?;
                items.push(RemoveItem::Labels { var, labels });
            } else {
                let (target, key) = self.property_target()?;
                items.push(RemoveItem::Property { target, key });
            }
            if !self.eat_sym(Sym::Comma) {
                break;
            }
        }
        Ok(Clause::Remove(RemoveClause { items, span: start.to(self.prev_span()) }))
    }

    fn call(&mut self, start: Span) -> Result<Clause, QueryError> {
        let first = self.name("a procedure name")?;
        let mut procedure = first.clone();
        while self.eat_sym(Sym::Dot) {
            let part = self.name("a procedure name")?;
            procedure.name.push('.');
            procedure.name.push_str(&part.name);
            procedure.span = procedure.span.to(part.span);
        }
        let args = if self.eat_sym(Sym::LParen) {
            let mut args = Vec::new();
            if !self.at_sym(Sym::RParen) {
                args.push(self.expr()?);
                while self.eat_sym(Sym::Comma) {
                    args.push(self.expr()?);
                }
            }
            self.expect_sym(Sym::RParen)?;
            Some(args)
        } else {
            None
        };
        let (yields, yield_all, predicate) = self.call_yields()?;
        Ok(Clause::Call(Call { procedure, args, yields, yield_all, predicate, optional: false, span: start.to(self.prev_span()) }))
    }

    /// `SHOW [ALL | RANGE | FULLTEXT | VECTOR | TEXT | POINT | LOOKUP] INDEX[ES] [YIELD …] [WHERE …]`,
    /// after `SHOW`: Neo4j's listing of indexes, as a call of `db.showIndexes(kind)` whose YIELD
    /// and WHERE it takes (a WHERE without YIELD sees every column); `SHOW CONSTRAINTS` likewise.
    fn show_indexes(&mut self, start: Span) -> Result<Clause, QueryError> {
        let kinds = ["ALL", "RANGE", "FULLTEXT", "VECTOR", "TEXT", "POINT", "LOOKUP"];
        let kind = kinds.iter().find(|k| self.eat_kw(k)).copied().unwrap_or("ALL");
        let (procedure, args) = if kind == "ALL" && (self.eat_kw("CONSTRAINTS") || self.eat_kw("CONSTRAINT")) {
            // `SHOW [ALL] CONSTRAINTS`: `db.showConstraints()`, the same way.
            (Name { name: "db.showConstraints".to_owned(), span: start }, Some(Vec::new()))
        } else if self.eat_kw("INDEXES") || self.eat_kw("INDEX") {
            let kind = Expr::new(ExprKind::Lit(crate::ast::Literal::Str(kind.to_owned())), start);
            (Name { name: "db.showIndexes".to_owned(), span: start }, Some(vec![kind]))
        } else {
            return Err(self.unexpected("INDEXES, CONSTRAINTS, PROCEDURES or FUNCTIONS after SHOW (the listings here)"));
        };
        let (yields, mut yield_all, mut predicate) = self.call_yields()?;
        if yields.is_none() && !yield_all && self.eat_kw("WHERE") {
            yield_all = true;
            predicate = Some(self.expr()?);
        }
        Ok(Clause::Call(Call { procedure, args, yields, yield_all, predicate, optional: false, span: start.to(self.prev_span()) }))
    }

    /// `SHOW [ALL | BUILT IN | USER DEFINED] PROCEDURE[S] | FUNCTION[S] [EXECUTABLE [BY CURRENT
    /// USER]] [YIELD …] [WHERE …]` after `SHOW`, as a call of `dbms.showProcedures(kind)` /
    /// `dbms.showFunctions(kind)`: Neo4j's default columns (`name`, `description`, `mode`,
    /// `worksOnSystem`; `name`, `category`, `description`) unless a YIELD names others (`YIELD *`:
    /// all). `None` when the listing is of something else.
    fn show_procedures(&mut self, start: Span) -> Result<Option<Clause>, QueryError> {
        let at = self.pos;
        let kind = if self.eat_kw("ALL") {
            "ALL"
        } else if self.eat_kw("BUILT") {
            self.expect_kw("IN")?;
            "BUILT IN"
        } else if self.eat_kw("USER") {
            self.expect_kw("DEFINED")?;
            "USER DEFINED"
        } else {
            "ALL"
        };
        let (procedure, defaults): (&str, &[&str]) = if self.eat_kw("PROCEDURES") || self.eat_kw("PROCEDURE") {
            ("dbms.showProcedures", &["name", "description", "mode", "worksOnSystem"])
        } else if self.eat_kw("FUNCTIONS") || self.eat_kw("FUNCTION") {
            ("dbms.showFunctions", &["name", "category", "description"])
        } else {
            self.pos = at;
            return Ok(None);
        };
        if self.eat_kw("EXECUTABLE") && self.eat_kw("BY") {
            // Every procedure and function here is executable by whoever may read the graph.
            if !(self.eat_kw("CURRENT") && self.eat_kw("USER")) {
                return Err(self.unexpected("CURRENT USER after EXECUTABLE BY (another user's rights are not listed)"));
            }
        }
        let procedure = Name { name: procedure.to_owned(), span: start };
        let (mut yields, yield_all, mut predicate) = self.call_yields()?;
        if yields.is_none() && !yield_all {
            let column = |c: &&str| (Name { name: (*c).to_owned(), span: start }, Var { name: (*c).to_owned(), span: start });
            yields = Some(defaults.iter().map(column).collect());
            if self.eat_kw("WHERE") {
                predicate = Some(self.expr()?);
            }
        }
        let kind = Expr::new(ExprKind::Lit(crate::ast::Literal::Str(kind.to_owned())), start);
        let call =
            Call { procedure, args: Some(vec![kind]), yields, yield_all, predicate, optional: false, span: start.to(self.prev_span()) };
        Ok(Some(Clause::Call(call)))
    }

    /// A call's `YIELD` items (or `YIELD *`) and the `WHERE` after them.
    #[allow(clippy::type_complexity)] // Reason: the three parts of `Call` it fills, as they are.
    fn call_yields(&mut self) -> Result<(Option<Vec<(Name, Var)>>, bool, Option<Expr>), QueryError> {
        let (mut yields, mut yield_all, mut predicate) = (None, false, None);
        if self.eat_kw("YIELD") {
            if self.eat_sym(Sym::Star) {
                yield_all = true;
            } else {
                let mut items = Vec::new();
                loop {
                    let column = self.name("a column to yield")?;
                    let var = if self.eat_kw("AS") { self.var()? } else { Var { name: column.name.clone(), span: column.span } };
                    items.push((column, var));
                    if !self.eat_sym(Sym::Comma) {
                        break;
                    }
                }
                yields = Some(items);
            }
            if self.eat_kw("WHERE") {
                predicate = Some(self.expr()?);
            }
        }
        Ok((yields, yield_all, predicate))
    }

    fn projection(&mut self, is_with: bool, start: Span) -> Result<Projection, QueryError> {
        let distinct = self.eat_kw("DISTINCT");
        let mut star = false;
        let mut items = Vec::new();
        if self.eat_sym(Sym::Star) {
            star = true;
            if self.eat_sym(Sym::Comma) {
                items = self.projection_items()?;
            }
        } else {
            items = self.projection_items()?;
        }
        let mut order = Vec::new();
        if self.at_kw("ORDER") {
            self.pos += 1;
            self.expect_kw("BY")?;
            loop {
                let expr = self.expr()?;
                let descending = if self.eat_kw("DESC") || self.eat_kw("DESCENDING") {
                    true
                } else {
                    let _ = self.eat_kw("ASC") || self.eat_kw("ASCENDING");
                    false
                };
                let nulls_first = if self.eat_kw("NULLS") {
                    if self.eat_kw("FIRST") {
                        Some(true)
                    } else if self.eat_kw("LAST") {
                        Some(false)
                    } else {
                        return Err(self.unexpected("FIRST or LAST after NULLS"));
                    }
                } else {
                    None
                };
                order.push(SortItem { expr, descending, nulls_first });
                if !self.eat_sym(Sym::Comma) {
                    break;
                }
            }
        }
        // `OFFSET` is GQL's `SKIP`.
        let skip = if self.eat_kw("SKIP") || self.eat_kw("OFFSET") { Some(self.expr()?) } else { None };
        let limit = if self.eat_kw("LIMIT") { Some(self.expr()?) } else { None };
        let predicate = if is_with && self.eat_kw("WHERE") { Some(self.expr()?) } else { None };
        Ok(Projection { distinct, star, items, order, skip, limit, predicate, span: start.to(self.prev_span()) })
    }

    fn projection_items(&mut self) -> Result<Vec<ProjectionItem>, QueryError> {
        let mut items = Vec::new();
        loop {
            let expr = self.expr()?;
            let text = self.text.get(expr.span.start..expr.span.end).unwrap_or("").to_owned();
            let alias = if self.eat_kw("AS") { Some(self.var()?) } else { None };
            items.push(ProjectionItem { expr, alias, text });
            if !self.eat_sym(Sym::Comma) {
                return Ok(items);
            }
        }
    }

    // ---- patterns ------------------------------------------------------------------------

    /// Comma-separated pattern parts.
    pub(crate) fn pattern(&mut self) -> Result<Vec<PatternPart>, QueryError> {
        let mut parts = vec![self.pattern_part()?];
        while self.eat_sym(Sym::Comma) {
            parts.push(self.pattern_part()?);
        }
        Ok(parts)
    }

    /// `[p =] (a)-[r]->(b)…`.
    pub(crate) fn pattern_part(&mut self) -> Result<PatternPart, QueryError> {
        let start = self.span();
        let var = if self.at_var() && matches!(self.peek_at(1), Tok::Sym(Sym::Eq)) {
            let v = self.var()?;
            self.pos += 1;
            Some(v)
        } else {
            None
        };
        let shortest = match self.peek() {
            Tok::Ident(name) if matches!(self.peek_at(1), Tok::Sym(Sym::LParen)) => {
                if name.eq_ignore_ascii_case("shortestPath") {
                    Some(Shortest::One)
                } else if name.eq_ignore_ascii_case("allShortestPaths") {
                    Some(Shortest::All)
                } else {
                    None
                }
            }
            _ => None,
        };
        let (start_node, chain) = if shortest.is_some() {
            self.pos += 1;
            self.expect_sym(Sym::LParen)?;
            let element = self.pattern_element()?;
            self.expect_sym(Sym::RParen)?;
            element
        } else {
            self.pattern_element()?
        };
        Ok(PatternPart { var, shortest, start: start_node, chain, span: start.to(self.prev_span()) })
    }

    /// A node and its chain; a parenthesized element `((a)-->(b))` is accepted too.
    pub(crate) fn pattern_element(&mut self) -> Result<(NodePattern, Vec<(RelPattern, NodePattern)>), QueryError> {
        self.enter()?;
        let result = self.pattern_element_inner();
        self.leave();
        result
    }

    fn pattern_element_inner(&mut self) -> Result<(NodePattern, Vec<(RelPattern, NodePattern)>), QueryError> {
        let mut chain = Vec::new();
        let start = if self.at_group() {
            let at = self.span();
            match self.group()? {
                // Parentheses around a whole element, without a quantifier, are only parentheses.
                Err(inner) => return Ok(inner),
                // A pattern may start with a group: the node before it is anonymous.
                Ok(rel) => {
                    chain.push((rel, self.node_after_group()?));
                    anonymous_node(at)
                }
            }
        } else {
            self.node_pattern()?
        };
        loop {
            if self.at_sym(Sym::Minus) || (self.at_sym(Sym::Lt) && matches!(self.peek_at(1), Tok::Sym(Sym::Minus))) {
                let rel = self.rel_pattern()?;
                let node = self.node_pattern()?;
                chain.push((rel, node));
            } else if self.at_group() {
                let span = self.span();
                let Ok(rel) = self.group()? else {
                    return Err(self.error_at(
                        span,
                        Detail::InvalidRelationshipPattern,
                        "a parenthesised group after a node needs a quantifier: ((a)-->(b)){1,3}, +, *",
                    ));
                };
                chain.push((rel, self.node_after_group()?));
            } else {
                return Ok((start, chain));
            }
        }
    }

    /// At `((`: a group (or parentheses around a pattern).
    fn at_group(&self) -> bool {
        self.at_sym(Sym::LParen) && matches!(self.peek_at(1), Tok::Sym(Sym::LParen))
    }

    /// `( element [WHERE …] )` and its quantifier: a quantified group, as its first relationship
    /// holding the rest (`group`); without a quantifier (or WHERE), the element itself.
    #[allow(clippy::type_complexity)] // Reason: a group, or the element it turned out to be.
    fn group(&mut self) -> Result<Result<RelPattern, (NodePattern, Vec<(RelPattern, NodePattern)>)>, QueryError> {
        let start = self.expect_sym(Sym::LParen)?;
        let (first, mut chain) = self.pattern_element()?;
        let predicate = if self.eat_kw("WHERE") { Some(self.expr()?) } else { None };
        self.expect_sym(Sym::RParen)?;
        let Some(bounds) = self.quantifier()? else {
            if let Some(w) = predicate {
                return Err(self.error_at(
                    w.span,
                    Detail::Unsupported,
                    "a WHERE inside parentheses in a pattern is for a quantified group: add a quantifier ({1,3}, +, *)",
                ));
            }
            return Ok(Err((first, chain)));
        };
        let span = start.to(self.prev_span());
        if chain.is_empty() {
            return Err(self.error_at(
                span,
                Detail::InvalidRelationshipPattern,
                "a quantified group holds a relationship, like ((a)-[:R]->(b)){1,3}",
            ));
        }
        let (rel, next) = chain.remove(0);
        for r in std::iter::once(&rel).chain(chain.iter().map(|(r, _)| r)) {
            if r.length.is_some() || r.group.is_some() {
                return Err(self.error_at(
                    r.span,
                    Detail::InvalidRelationshipPattern,
                    "a relationship inside a quantified group has no length of its own",
                ));
            }
        }
        let group = Group { first, next, more: chain, predicate, span };
        Ok(Ok(RelPattern { length: Some(bounds), group: Some(Box::new(group)), ..rel }))
    }

    /// The node written after a group, or an anonymous one where the pattern goes on or ends
    /// without one (`((a)-->(b))+ -->(c)`).
    fn node_after_group(&mut self) -> Result<NodePattern, QueryError> {
        if self.at_sym(Sym::LParen) && !self.at_group() {
            return self.node_pattern();
        }
        Ok(anonymous_node(self.prev_span()))
    }

    pub(crate) fn node_pattern(&mut self) -> Result<NodePattern, QueryError> {
        let start = self.expect_sym(Sym::LParen)?;
        let var = if self.at_var() { Some(self.var()?) } else { None };
        let (labels, label_expr) = if self.at_sym(Sym::Colon) { self.label_spec(true)? } else { (Vec::new(), None) };
        let props = self.pattern_props()?;
        let end = self.expect_sym(Sym::RParen)?;
        Ok(NodePattern { var, labels, label_expr, props, span: start.to(end) })
    }

    /// After a node or an expression: `:A:B` (labels all required) or `:` and a label expression
    /// (`A|B`, `A&B`, `!A`, `%`, parentheses). A conjunction of names is returned as the labels;
    /// anything else as the expression. `pipe` says whether `|` may continue it here.
    pub(crate) fn label_spec(&mut self, pipe: bool) -> Result<(Vec<Name>, Option<LabelExpr>), QueryError> {
        self.expect_sym(Sym::Colon)?;
        let first = self.label_or(pipe, "a label")?;
        if self.at_sym(Sym::Colon) {
            let LabelExpr::Name(name) = first else {
                return Err(self.error_at(self.span(), Detail::UnexpectedSyntax, "`:` joins labels; after a label expression use `&`"));
            };
            let mut labels = vec![name];
            while self.eat_sym(Sym::Colon) {
                labels.push(self.name("a label")?);
            }
            return Ok((labels, None));
        }
        Ok(match first {
            LabelExpr::Name(n) => (vec![n], None),
            LabelExpr::And(items) if items.iter().all(|i| matches!(i, LabelExpr::Name(_))) => {
                (items.into_iter().filter_map(|i| if let LabelExpr::Name(n) = i { Some(n) } else { None }).collect(), None)
            }
            other => (Vec::new(), Some(other)),
        })
    }

    /// `what` names a label or a relationship type in errors.
    fn label_or(&mut self, pipe: bool, what: &'static str) -> Result<LabelExpr, QueryError> {
        let mut items = vec![self.label_and(what)?];
        while pipe && self.eat_sym(Sym::Pipe) {
            // `:A|:B` (the older spelling) reads as `:A|B`.
            self.eat_sym(Sym::Colon);
            items.push(self.label_and(what)?);
        }
        Ok(if items.len() == 1 { items.remove(0) } else { LabelExpr::Or(items) })
    }

    fn label_and(&mut self, what: &'static str) -> Result<LabelExpr, QueryError> {
        let mut items = vec![self.label_factor(what)?];
        while self.eat_sym(Sym::Amp) {
            items.push(self.label_factor(what)?);
        }
        Ok(if items.len() == 1 { items.remove(0) } else { LabelExpr::And(items) })
    }

    fn label_factor(&mut self, what: &'static str) -> Result<LabelExpr, QueryError> {
        self.enter()?;
        let e = self.label_factor_inner(what);
        self.leave();
        e
    }

    fn label_factor_inner(&mut self, what: &'static str) -> Result<LabelExpr, QueryError> {
        if self.eat_sym(Sym::Bang) {
            return Ok(LabelExpr::Not(Box::new(self.label_factor(what)?)));
        }
        if self.eat_sym(Sym::Percent) {
            return Ok(LabelExpr::Any);
        }
        if self.eat_sym(Sym::LParen) {
            // Inside parentheses `|` is always the expression's.
            let e = self.label_or(true, what)?;
            self.expect_sym(Sym::RParen)?;
            return Ok(e);
        }
        self.name(what).map(LabelExpr::Name)
    }

    /// `:A:B` (also `:A|B` is refused here; that form is for relationship types).
    pub(crate) fn labels(&mut self) -> Result<Vec<Name>, QueryError> {
        let mut labels = Vec::new();
        while self.eat_sym(Sym::Colon) {
            labels.push(self.name("a label")?);
        }
        Ok(labels)
    }

    fn pattern_props(&mut self) -> Result<Option<Expr>, QueryError> {
        match self.peek() {
            Tok::Sym(Sym::LBrace) => Ok(Some(self.map_literal()?)),
            Tok::Param(_) => Ok(Some(self.expr_atom()?)),
            _ => Ok(None),
        }
    }

    fn rel_pattern(&mut self) -> Result<RelPattern, QueryError> {
        let start = self.span();
        let left = self.eat_sym(Sym::Lt);
        self.expect_sym(Sym::Minus)?;
        let (mut var, mut types, mut type_expr, mut length, mut props, mut predicate) = (None, Vec::new(), None, None, None, None);
        if self.eat_sym(Sym::LBracket) {
            if self.at_var() {
                var = Some(self.var()?);
            }
            if self.eat_sym(Sym::Colon) {
                // Alternatives of names are the types; anything else (`!A`, `A&B`, `%`) is a type
                // expression, tested on the one type each relationship has.
                match self.label_or(true, "a relationship type")? {
                    LabelExpr::Name(n) => types.push(n),
                    LabelExpr::Or(items) if items.iter().all(|i| matches!(i, LabelExpr::Name(_))) => {
                        types.extend(items.into_iter().filter_map(|i| if let LabelExpr::Name(n) = i { Some(n) } else { None }));
                    }
                    other => type_expr = Some(other),
                }
            }
            if self.eat_sym(Sym::Star) {
                length = Some(self.range()?);
            } else if self.at_sym(Sym::DotDot) || matches!(self.peek(), Tok::Int(_)) {
                return Err(self.error_at(
                    self.span(),
                    Detail::InvalidRelationshipPattern,
                    "a variable length needs '*' before its bounds (`[:T*1..3]`)",
                ));
            }
            props = self.pattern_props()?;
            if self.eat_kw("WHERE") {
                predicate = Some(self.expr()?);
            }
            self.expect_sym(Sym::RBracket)?;
        }
        self.expect_sym(Sym::Minus)?;
        let right = self.eat_sym(Sym::Gt);
        let direction = match (left, right) {
            (true, false) => Direction::In,
            (false, true) => Direction::Out,
            _ => Direction::Both,
        };
        // A quantifier after it (GQL's and Neo4j 5's `-[:T]->{1,3}`, `+`, `*`) is its variable length.
        if let Some(q) = self.quantifier()? {
            if length.is_some() {
                return Err(self.error_at(
                    self.prev_span(),
                    Detail::InvalidRelationshipPattern,
                    "a relationship has one length: `*` inside its brackets or a quantifier after them, not both",
                ));
            }
            length = Some(q);
        }
        Ok(RelPattern { var, types, type_expr, direction, length, props, predicate, group: None, span: start.to(self.prev_span()) })
    }

    /// `{n}`, `{m,n}`, `{m,}`, `{,n}`, `+` (one or more) or `*` (any number), if one comes next.
    fn quantifier(&mut self) -> Result<Option<Bounds>, QueryError> {
        if self.eat_sym(Sym::Plus) {
            return Ok(Some((Some(1), None)));
        }
        if self.eat_sym(Sym::Star) {
            return Ok(Some((Some(0), None)));
        }
        if !self.at_sym(Sym::LBrace) {
            return Ok(None);
        }
        self.pos += 1;
        let low = self.range_bound()?;
        let bounds = if self.eat_sym(Sym::Comma) { (Some(low.unwrap_or(0)), self.range_bound()?) } else { (low, low) };
        if bounds.0.is_none() {
            return Err(self.unexpected("a number in the quantifier `{m,n}`"));
        }
        self.expect_sym(Sym::RBrace)?;
        if let (Some(l), Some(h)) = bounds {
            if l > h {
                return Err(self.error_at(
                    self.prev_span(),
                    Detail::InvalidRelationshipPattern,
                    format!("the quantifier {{{l},{h}}} has its bounds the wrong way round"),
                ));
            }
        }
        Ok(Some(bounds))
    }

    /// After `*`: `n`, `n..m`, `..m`, `n..` or nothing.
    fn range(&mut self) -> Result<Bounds, QueryError> {
        let low = self.range_bound()?;
        if self.eat_sym(Sym::DotDot) {
            let high = self.range_bound()?;
            Ok((low, high))
        } else {
            Ok((low, low))
        }
    }

    fn range_bound(&mut self) -> Result<Option<u64>, QueryError> {
        if self.at_sym(Sym::Minus) {
            return Err(self.error_at(self.span(), Detail::InvalidRelationshipPattern, "a length bound cannot be negative"));
        }
        if let Tok::Int(text) = self.peek().clone() {
            let span = self.span();
            self.pos += 1;
            let value = parse_int(&text, false).map_err(|detail| self.error_at(span, detail, format!("invalid length bound '{text}'")))?;
            return Ok(Some(value.unsigned_abs()));
        }
        Ok(None)
    }
}

/// A node pattern nobody wrote, where a group starts or ends a pattern without one.
fn anonymous_node(at: Span) -> NodePattern {
    NodePattern { var: None, labels: Vec::new(), label_expr: None, props: None, span: at.to(at) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::ExprKind;

    #[test]
    fn clauses_and_patterns_parse_with_their_parts() {
        let s = parse("MATCH p = (a:Person {name: 'x'})-[r:KNOWS|LIKES*1..3]->(b), (c)<--(d) WHERE a.age > 3 RETURN DISTINCT a.name AS n ORDER BY n DESC SKIP 1 LIMIT 2").expect("parses");
        let clauses = &s.query.first.clauses;
        assert_eq!(clauses.len(), 2);
        let Clause::Match(m) = &clauses[0] else { panic!("match") };
        assert_eq!(m.pattern.len(), 2);
        assert_eq!(m.pattern[0].var.as_ref().map(|v| v.name.as_str()), Some("p"));
        let (rel, _) = &m.pattern[0].chain[0];
        assert_eq!(rel.types.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["KNOWS", "LIKES"]);
        assert_eq!(rel.length, Some((Some(1), Some(3))));
        assert_eq!(rel.direction, Direction::Out);
        assert_eq!(m.pattern[1].chain[0].0.direction, Direction::In);
        let Clause::Return(r) = &clauses[1] else { panic!("return") };
        assert!(r.distinct);
        assert_eq!(r.items[0].column(), "n");
        assert!(r.order[0].descending);
    }

    #[test]
    fn lengths_in_every_form() {
        for (text, want) in [
            ("*", (None, None)),
            ("*2", (Some(2), Some(2))),
            ("*1..3", (Some(1), Some(3))),
            ("*..2", (None, Some(2))),
            ("*2..", (Some(2), None)),
        ] {
            let s = parse(&format!("MATCH ()-[{text}]-() RETURN 1")).expect(text);
            let Clause::Match(m) = &s.query.first.clauses[0] else { panic!("match") };
            assert_eq!(m.pattern[0].chain[0].0.length, Some(want), "{text}");
        }
    }

    #[test]
    fn errors_say_what_was_expected_where() {
        let err = parse("MATCH (a)-[:T]->(b WHERE a.x = 1 RETURN a").expect_err("missing paren");
        assert_eq!(err.detail, Detail::UnexpectedSyntax);
        assert_eq!((err.line(), err.column()), (Some(1), Some(20)));
        assert!(err.message.starts_with("expected ')' at 1:20, found WHERE"), "{}", err.message);
        let err = parse("MATCH (n)\nRETURN n ORDER n").expect_err("missing BY");
        assert_eq!((err.line(), err.column()), (Some(2), Some(16)));
    }

    #[test]
    fn the_temporal_prefix_and_explain() {
        let s = parse("EXPLAIN AS OF '2024-01-01T00:00:00Z' MATCH (n) RETURN n").expect("parses");
        assert_eq!(s.mode, Mode::Explain);
        assert!(matches!(s.temporal, Temporal::AsOf(Expr { kind: ExprKind::Lit(_), .. })));
        let s = parse("KNOWN AS OF $t MATCH (n) RETURN n").expect("parses");
        assert!(matches!(s.temporal, Temporal::KnownAsOf(_)));
        let s = parse("ALL VERSIONS MATCH (n) RETURN n").expect("parses");
        assert_eq!(s.temporal, Temporal::AllVersions);
    }

    #[test]
    fn writes_parse() {
        let s = parse(
            "MERGE (a:A {id: 1}) ON CREATE SET a.new = true ON MATCH SET a += {seen: 1}, a:B \
             WITH a SET a.x = 1, a = {y: 2} REMOVE a.x, a:B DETACH DELETE a",
        )
        .expect("parses");
        let names: Vec<_> = s.query.first.clauses.iter().map(Clause::name).collect();
        assert_eq!(names, ["MERGE", "WITH", "SET", "REMOVE", "DELETE"]);
        let Clause::Merge(m) = &s.query.first.clauses[0] else { panic!("merge") };
        assert_eq!((m.on_create.len(), m.on_match.len()), (1, 2));
    }

    #[test]
    fn call_union_and_inline_where() {
        let s = parse("CALL db.labels() YIELD label AS l WHERE l <> 'x' RETURN l UNION ALL RETURN 'y' AS l").expect("parses");
        let Clause::Call(c) = &s.query.first.clauses[0] else { panic!("call") };
        assert_eq!(c.procedure.name, "db.labels");
        assert_eq!(s.query.unions.len(), 1);
        assert!(s.query.unions[0].0);
        let s = parse("MATCH (a)-[c:DEPENDS_ON*1..3 WHERE c.confidence > 0.5]->(b) RETURN b").expect("parses");
        let Clause::Match(m) = &s.query.first.clauses[0] else { panic!("match") };
        assert!(m.pattern[0].chain[0].0.predicate.is_some());
    }
}
