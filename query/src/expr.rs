//! Expressions, by precedence climbing. From loosest to tightest: `OR`, `XOR`, `AND`, `NOT`,
//! comparisons (chained: `a < b < c` is `a < b AND b < c`), the string/list/null predicates
//! (`STARTS WITH`, `IN`, `IS NULL`, `=~`, …), `+ -`, `* / %`, `^`, unary `+ -`, then postfix
//! property access, indexing, slicing and label tests on an atom.

use crate::ast::{
    BinaryOp, Clause, Expr, ExprKind, Literal, MapProjectionItem, Match, Name, Projection, ProjectionItem, Quantifier, SingleQuery,
    SubqueryKind, UnaryOp, Var,
};
use crate::cursor::{is_reserved, parse_int, Parser};
use crate::error::{Detail, QueryError, Span};
use crate::lexer::{Sym, Tok};
use crate::types::{BaseType, TypeSpec};

impl Parser<'_> {
    /// A whole expression.
    pub(crate) fn expr(&mut self) -> Result<Expr, QueryError> {
        self.enter()?;
        let result = self.or_expr();
        self.leave();
        result
    }

    fn binary(op: BinaryOp, a: Expr, b: Expr) -> Expr {
        let span = a.span.to(b.span);
        Expr::new(ExprKind::Binary(op, Box::new(a), Box::new(b)), span)
    }

    fn or_expr(&mut self) -> Result<Expr, QueryError> {
        let mut e = self.xor_expr()?;
        while self.eat_kw("OR") {
            let r = self.xor_expr()?;
            e = Self::binary(BinaryOp::Or, e, r);
        }
        Ok(e)
    }

    fn xor_expr(&mut self) -> Result<Expr, QueryError> {
        let mut e = self.and_expr()?;
        while self.eat_kw("XOR") {
            let r = self.and_expr()?;
            e = Self::binary(BinaryOp::Xor, e, r);
        }
        Ok(e)
    }

    fn and_expr(&mut self) -> Result<Expr, QueryError> {
        let mut e = self.not_expr()?;
        while self.eat_kw("AND") {
            let r = self.not_expr()?;
            e = Self::binary(BinaryOp::And, e, r);
        }
        Ok(e)
    }

    fn not_expr(&mut self) -> Result<Expr, QueryError> {
        if self.at_kw("NOT") {
            let start = self.span();
            self.pos += 1;
            self.enter()?;
            let inner = self.not_expr();
            self.leave();
            let inner = inner?;
            let span = start.to(inner.span);
            return Ok(Expr::new(ExprKind::Unary(UnaryOp::Not, Box::new(inner)), span));
        }
        self.comparison()
    }

    fn comparison_op(&self) -> Option<BinaryOp> {
        match self.peek() {
            Tok::Sym(Sym::Eq) => Some(BinaryOp::Eq),
            Tok::Sym(Sym::Neq) => Some(BinaryOp::Neq),
            Tok::Sym(Sym::Lt) => Some(BinaryOp::Lt),
            Tok::Sym(Sym::Gt) => Some(BinaryOp::Gt),
            Tok::Sym(Sym::Le) => Some(BinaryOp::Le),
            Tok::Sym(Sym::Ge) => Some(BinaryOp::Ge),
            _ => None,
        }
    }

    fn comparison(&mut self) -> Result<Expr, QueryError> {
        let first = self.predicates()?;
        let Some(op) = self.comparison_op() else { return Ok(first) };
        self.pos += 1;
        let second = self.predicates()?;
        let mut result = Self::binary(op, first, second.clone());
        let mut last = second;
        while let Some(op) = self.comparison_op() {
            self.pos += 1;
            let next = self.predicates()?;
            let step = Self::binary(op, last, next.clone());
            result = Self::binary(BinaryOp::And, result, step);
            last = next;
        }
        Ok(result)
    }

    fn predicates(&mut self) -> Result<Expr, QueryError> {
        let mut e = self.additive()?;
        loop {
            let op = if self.at_kw("STARTS") && self.peek_at(1).is_keyword("WITH") {
                self.pos += 2;
                BinaryOp::StartsWith
            } else if self.at_kw("ENDS") && self.peek_at(1).is_keyword("WITH") {
                self.pos += 2;
                BinaryOp::EndsWith
            } else if self.eat_kw("CONTAINS") {
                BinaryOp::Contains
            } else if self.eat_kw("IN") {
                BinaryOp::In
            } else if self.eat_sym(Sym::RegexMatch) {
                BinaryOp::Regex
            } else if self.at_kw("IS") {
                self.pos += 1;
                let not = self.eat_kw("NOT");
                // `IS [NOT] :: T`, `IS [NOT] TYPED T` (a type predicate) or `IS [NOT] NULL`.
                let typed = self.at_double_colon() || self.at_kw("TYPED");
                let start = e.span;
                let kind = if typed {
                    self.pos += if self.at_kw("TYPED") { 1 } else { 2 };
                    ExprKind::IsType(Box::new(e), self.type_spec()?, not)
                } else {
                    self.expect_kw("NULL")?;
                    ExprKind::IsNull(Box::new(e), not)
                };
                e = Expr::new(kind, start.to(self.prev_span()));
                continue;
            } else if self.at_double_colon() {
                self.pos += 2;
                let t = self.type_spec()?;
                let span = e.span.to(self.prev_span());
                e = Expr::new(ExprKind::IsType(Box::new(e), t, false), span);
                continue;
            } else {
                return Ok(e);
            };
            let r = self.additive()?;
            e = Self::binary(op, e, r);
        }
    }

    fn additive(&mut self) -> Result<Expr, QueryError> {
        let mut e = self.multiplicative()?;
        loop {
            let op = if self.eat_sym(Sym::Plus) {
                BinaryOp::Add
            } else if self.eat_sym(Sym::Minus) {
                BinaryOp::Sub
            } else if self.eat_sym(Sym::Concat) {
                BinaryOp::Concat
            } else {
                return Ok(e);
            };
            let r = self.multiplicative()?;
            e = Self::binary(op, e, r);
        }
    }

    fn multiplicative(&mut self) -> Result<Expr, QueryError> {
        let mut e = self.power()?;
        loop {
            let op = if self.eat_sym(Sym::Star) {
                BinaryOp::Mul
            } else if self.eat_sym(Sym::Slash) {
                BinaryOp::Div
            } else if self.eat_sym(Sym::Percent) {
                BinaryOp::Mod
            } else {
                return Ok(e);
            };
            let r = self.power()?;
            e = Self::binary(op, e, r);
        }
    }

    fn power(&mut self) -> Result<Expr, QueryError> {
        let mut e = self.unary()?;
        while self.eat_sym(Sym::Caret) {
            let r = self.unary()?;
            e = Self::binary(BinaryOp::Pow, e, r);
        }
        Ok(e)
    }

    fn unary(&mut self) -> Result<Expr, QueryError> {
        let start = self.span();
        if self.at_sym(Sym::Minus) || self.at_sym(Sym::Plus) {
            let neg = self.at_sym(Sym::Minus);
            self.pos += 1;
            // `-9223372036854775808` is one literal: its magnitude alone does not fit.
            if neg {
                if let Tok::Int(text) = self.peek().clone() {
                    let span = start.to(self.span());
                    self.pos += 1;
                    let value = parse_int(&text, true).map_err(|d| self.int_error(span, d, &text))?;
                    let lit = Expr::new(ExprKind::Lit(Literal::Int(value)), span);
                    return self.postfix(lit);
                }
            }
            self.enter()?;
            let inner = self.unary();
            self.leave();
            let inner = inner?;
            let span = start.to(inner.span);
            let op = if neg { UnaryOp::Neg } else { UnaryOp::Pos };
            return Ok(Expr::new(ExprKind::Unary(op, Box::new(inner)), span));
        }
        self.expr_postfix()
    }

    fn int_error(&self, span: Span, detail: Detail, text: &str) -> QueryError {
        let message = match detail {
            Detail::IntegerOverflow => format!("integer literal {text} does not fit in 64 bits"),
            _ => format!("invalid number literal '{text}'"),
        };
        self.error_at(span, detail, message)
    }

    /// An atom with its postfix operators.
    pub(crate) fn expr_postfix(&mut self) -> Result<Expr, QueryError> {
        let atom = self.expr_atom()?;
        self.postfix(atom)
    }

    fn postfix(&mut self, mut e: Expr) -> Result<Expr, QueryError> {
        loop {
            if self.at_sym(Sym::Dot) {
                self.pos += 1;
                let key = self.name("a property key")?;
                let span = e.span.to(key.span);
                e = Expr::new(ExprKind::Prop(Box::new(e), key), span);
            } else if self.at_sym(Sym::LBracket) {
                self.pos += 1;
                let from = if self.at_sym(Sym::DotDot) { None } else { Some(Box::new(self.expr()?)) };
                if self.eat_sym(Sym::DotDot) {
                    let to = if self.at_sym(Sym::RBracket) { None } else { Some(Box::new(self.expr()?)) };
                    let end = self.expect_sym(Sym::RBracket)?;
                    let span = e.span.to(end);
                    e = Expr::new(ExprKind::Slice(Box::new(e), from, to), span);
                } else {
                    let end = self.expect_sym(Sym::RBracket)?;
                    let Some(index) = from else { return Err(self.unexpected("an index")) };
                    let span = e.span.to(end);
                    e = Expr::new(ExprKind::Index(Box::new(e), index), span);
                }
            } else if self.at_sym(Sym::Colon) && !self.at_double_colon() && matches!(e.kind, ExprKind::Var(_)) {
                let (labels, expr) = self.label_spec(!self.pipe_ends_predicate)?;
                let span = e.span.to(self.prev_span());
                e = Expr::new(
                    match expr {
                        Some(x) => ExprKind::HasLabelExpr(Box::new(e), x),
                        None => ExprKind::HasLabels(Box::new(e), labels),
                    },
                    span,
                );
            } else {
                return Ok(e);
            }
        }
    }

    /// An atom: a literal, parameter, variable, call, list, map, `CASE`, pattern or `( e )`.
    pub(crate) fn expr_atom(&mut self) -> Result<Expr, QueryError> {
        let start = self.span();
        let tok = self.peek().clone();
        let lit = |kind: Literal| Expr::new(ExprKind::Lit(kind), start);
        match tok {
            Tok::Int(text) => {
                self.pos += 1;
                let value = parse_int(&text, false).map_err(|d| self.int_error(start, d, &text))?;
                Ok(lit(Literal::Int(value)))
            }
            Tok::BadNumber(text) => Err(self.int_error(start, Detail::InvalidNumberLiteral, &text)),
            Tok::Float(f) => {
                self.pos += 1;
                Ok(lit(Literal::Float(f)))
            }
            Tok::Str(s) => {
                self.pos += 1;
                Ok(lit(Literal::Str(s)))
            }
            Tok::Param(p) => {
                self.pos += 1;
                Ok(Expr::new(ExprKind::Param(p), start))
            }
            Tok::Sym(Sym::LBracket) => self.list_or_comprehension(),
            Tok::Sym(Sym::LBrace) => self.map_literal(),
            Tok::Sym(Sym::LParen) => self.paren_or_pattern(),
            Tok::Ident(word) => self.word(&word, start),
            Tok::Quoted(name) => {
                self.pos += 1;
                let var = Expr::new(ExprKind::Var(name), start);
                self.maybe_map_projection(var)
            }
            _ => Err(self.unexpected("an expression")),
        }
    }

    fn word(&mut self, word: &str, start: Span) -> Result<Expr, QueryError> {
        let upper = word.to_ascii_uppercase();
        match upper.as_str() {
            "NULL" => {
                self.pos += 1;
                return Ok(Expr::new(ExprKind::Lit(Literal::Null), start));
            }
            "TRUE" | "FALSE" => {
                self.pos += 1;
                return Ok(Expr::new(ExprKind::Lit(Literal::Bool(upper == "TRUE")), start));
            }
            "CASE" => return self.case(),
            "EXISTS" | "COUNT" | "COLLECT" if self.at_subquery_brace() => {
                let kind = match upper.as_str() {
                    "EXISTS" => SubqueryKind::Exists,
                    "COUNT" => SubqueryKind::Count,
                    _ => SubqueryKind::Collect,
                };
                return self.subquery_expr(kind, start);
            }
            _ => {}
        }
        // A call: `name(`, or dotted `a.b.c(`.
        let mut ahead = 1;
        while matches!(self.peek_at(ahead), Tok::Sym(Sym::Dot)) && matches!(self.peek_at(ahead + 1), Tok::Ident(_) | Tok::Quoted(_)) {
            ahead += 2;
        }
        if matches!(self.peek_at(ahead), Tok::Sym(Sym::LParen)) {
            return self.call_expr(ahead);
        }
        if is_reserved(word) {
            return Err(self.unexpected("an expression"));
        }
        self.pos += 1;
        let var = Expr::new(ExprKind::Var(word.to_owned()), start);
        self.maybe_map_projection(var)
    }

    /// After `EXISTS` / `COUNT` / `COLLECT`: `{` opening a pattern (`{ (a)-->(b) … }`) or a
    /// query (`{ MATCH (a)… }`, `{ OPTIONAL MATCH …`, `UNWIND`, `WITH`, `CALL`, …), not a map
    /// projection of a variable so named (`count {.x}`, `count {x, y: 1}`).
    fn at_subquery_brace(&self) -> bool {
        // The updating clauses too, for the checker to refuse by name.
        let clause = |w: &str| {
            ["MATCH", "OPTIONAL", "UNWIND", "WITH", "CALL", "RETURN", "CREATE", "MERGE", "SET", "REMOVE", "DELETE", "DETACH", "FOREACH"]
                .iter()
                .any(|k| w.eq_ignore_ascii_case(k))
        };
        matches!(self.peek_at(1), Tok::Sym(Sym::LBrace))
            && match self.peek_at(2) {
                Tok::Sym(Sym::LParen) => true,
                Tok::Ident(w) if clause(w) => !matches!(self.peek_at(3), Tok::Sym(Sym::Colon | Sym::Comma | Sym::RBrace)),
                _ => false,
            }
    }

    /// `EXISTS { … }`, `COUNT { … }` and `COLLECT { … }`: over a pattern (`{ (a)-->(b), (c)
    /// WHERE p }`) or a query of one part (`{ MATCH … [WITH …] [RETURN …] }`). The common form,
    /// one pattern with a relationship, is the pattern comprehension `[pattern WHERE p | 1]`'s
    /// size (above 0); the others are a subquery the planner compiles with the row's variables
    /// in scope.
    fn subquery_expr(&mut self, kind: SubqueryKind, start: Span) -> Result<Expr, QueryError> {
        self.pos += 2;
        self.enter()?;
        let parsed = self.subquery_body(kind);
        self.leave();
        let (query, end) = parsed?;
        let span = start.to(end);
        if let (SubqueryKind::Exists | SubqueryKind::Count, [Clause::Match(m)]) = (kind, query.clauses.as_slice()) {
            if let (false, [part]) = (m.optional, m.pattern.as_slice()) {
                if !part.chain.is_empty() {
                    let one = |v: i64| Expr::new(ExprKind::Lit(Literal::Int(v)), span);
                    let (pattern, predicate) = (Box::new(part.clone()), m.predicate.clone().map(Box::new));
                    let comp = Expr::new(ExprKind::PatternComprehension { pattern, predicate, map: Box::new(one(1)) }, span);
                    let name = Name { name: "size".to_owned(), span };
                    let size = Expr::new(ExprKind::Call { name, distinct: false, args: vec![comp] }, span);
                    return Ok(if kind == SubqueryKind::Exists {
                        Expr::new(ExprKind::Binary(BinaryOp::Gt, Box::new(size), Box::new(one(0))), span)
                    } else {
                        size
                    });
                }
            }
        }
        Ok(Expr::new(ExprKind::Subquery { kind, query: Box::new(query) }, span))
    }

    /// What is between the braces of a subquery expression, as a query of one part, and the
    /// closing brace's span.
    fn subquery_body(&mut self, kind: SubqueryKind) -> Result<(SingleQuery, Span), QueryError> {
        let start = self.span();
        let query = if self.at_sym(Sym::LParen) {
            let mut pattern = vec![self.pattern_part()?];
            while self.eat_sym(Sym::Comma) {
                pattern.push(self.pattern_part()?);
            }
            let predicate = if self.eat_kw("WHERE") { Some(self.expr()?) } else { None };
            let span = start.to(self.prev_span());
            SingleQuery { clauses: vec![Clause::Match(Match { optional: false, pattern, predicate, span })], finish: false, span }
        } else {
            let query = self.query()?;
            if let Some((_, part)) = query.unions.first() {
                return Err(QueryError::syntax(
                    self.text,
                    part.span,
                    Detail::Unsupported,
                    format!("UNION inside {} {{ … }} is not supported; use one query part", kind.keyword()),
                ));
            }
            query.first
        };
        let end = self.expect_sym(Sym::RBrace)?;
        // EXISTS and COUNT may end without RETURN: each row counts, as though `RETURN 1`.
        let mut query = query;
        if kind != SubqueryKind::Collect && !matches!(query.clauses.last(), Some(Clause::Return(_))) {
            let one = Expr::new(ExprKind::Lit(Literal::Int(1)), end);
            let item = ProjectionItem { expr: one, alias: Some(Var { name: "  row".to_owned(), span: end }), text: "1".to_owned() };
            let projection = Projection {
                distinct: false,
                star: false,
                items: vec![item],
                order: Vec::new(),
                skip: None,
                limit: None,
                predicate: None,
                span: end,
            };
            query.clauses.push(Clause::Return(projection));
        }
        Ok((query, end))
    }

    fn maybe_map_projection(&mut self, var: Expr) -> Result<Expr, QueryError> {
        if !self.at_sym(Sym::LBrace) {
            return Ok(var);
        }
        let ExprKind::Var(name) = &var.kind else { return Ok(var) };
        let v = Var { name: name.clone(), span: var.span };
        self.pos += 1;
        let mut items = Vec::new();
        if !self.at_sym(Sym::RBrace) {
            loop {
                if self.eat_sym(Sym::Dot) {
                    if self.eat_sym(Sym::Star) {
                        items.push(MapProjectionItem::All);
                    } else {
                        items.push(MapProjectionItem::Property(self.name("a property key")?));
                    }
                } else if matches!(self.peek_at(1), Tok::Sym(Sym::Colon)) {
                    let key = self.name("a key")?;
                    self.pos += 1;
                    items.push(MapProjectionItem::Literal(key, self.expr()?));
                } else {
                    items.push(MapProjectionItem::Variable(self.var()?));
                }
                if !self.eat_sym(Sym::Comma) {
                    break;
                }
            }
        }
        let end = self.expect_sym(Sym::RBrace)?;
        Ok(Expr::new(ExprKind::MapProjection { var: v, items }, var.span.to(end)))
    }

    fn call_expr(&mut self, name_tokens: usize) -> Result<Expr, QueryError> {
        let start = self.span();
        let mut name = String::new();
        for i in 0..name_tokens {
            match self.peek_at(i) {
                Tok::Ident(s) | Tok::Quoted(s) => name.push_str(s),
                _ => name.push('.'),
            }
        }
        let name_span = start.to(self.tokens.get(self.pos + name_tokens - 1).map_or(start, |t| t.span));
        self.pos += name_tokens;
        self.expect_sym(Sym::LParen)?;
        let name = Name { name, span: name_span };
        let lower = name.name.to_ascii_lowercase();
        if lower == "count" && self.at_sym(Sym::Star) {
            self.pos += 1;
            let end = self.expect_sym(Sym::RParen)?;
            return Ok(Expr::new(ExprKind::CountStar, start.to(end)));
        }
        let quantifier = match lower.as_str() {
            "any" => Some(Quantifier::Any),
            "all" => Some(Quantifier::All),
            "none" => Some(Quantifier::None),
            "single" => Some(Quantifier::Single),
            _ => None,
        };
        if lower == "reduce" && self.at_var() && matches!(self.peek_at(1), Tok::Sym(Sym::Eq)) {
            return self.reduce(start);
        }
        if let Some(quantifier) = quantifier {
            if self.at_var() && self.peek_at(1).is_keyword("IN") {
                let var = self.var()?;
                self.pos += 1;
                let list = Box::new(self.expr()?);
                self.expect_kw("WHERE")?;
                let predicate = Box::new(self.expr()?);
                let end = self.expect_sym(Sym::RParen)?;
                return Ok(Expr::new(ExprKind::Quantified { quantifier, var, list, predicate }, start.to(end)));
            }
        }
        let distinct = self.eat_kw("DISTINCT");
        let mut args = Vec::new();
        if !self.at_sym(Sym::RParen) {
            args.push(self.expr()?);
            while self.eat_sym(Sym::Comma) {
                args.push(self.expr()?);
            }
        }
        let end = self.expect_sym(Sym::RParen)?;
        // `shortestPath(pattern)` / `allShortestPaths(pattern)` as a value (FalkorDB's form, in
        // WITH or RETURN): the pattern is the shortest-path part the checker validates.
        let shortest = match lower.as_str() {
            "shortestpath" => Some(crate::ast::Shortest::One),
            "allshortestpaths" => Some(crate::ast::Shortest::All),
            _ => None,
        };
        if let (Some(which), [Expr { kind: ExprKind::Pattern(part), .. }]) = (shortest, args.as_mut_slice()) {
            part.shortest = Some(which);
        }
        // `normalize(s, NFKC)`: the form is a bare word.
        if let ("normalize", [_, form @ Expr { kind: ExprKind::Var(_), .. }]) = (lower.as_str(), args.as_mut_slice()) {
            if let ExprKind::Var(v) = &form.kind {
                if ["NFC", "NFD", "NFKC", "NFKD"].iter().any(|f| f.eq_ignore_ascii_case(v)) {
                    form.kind = ExprKind::Lit(Literal::Str(v.to_ascii_uppercase()));
                }
            }
        }
        Ok(Expr::new(ExprKind::Call { name, distinct, args }, start.to(end)))
    }

    /// `reduce(acc = init, x IN list | step)`, after `reduce(`.
    fn reduce(&mut self, start: Span) -> Result<Expr, QueryError> {
        let acc = self.var()?;
        self.pos += 1;
        let init = self.expr()?;
        self.expect_sym(Sym::Comma)?;
        let var = self.var()?;
        self.expect_kw("IN")?;
        let list = self.expr()?;
        self.expect_sym(Sym::Pipe)?;
        let step = self.expr()?;
        let end = self.expect_sym(Sym::RParen)?;
        Ok(Expr::new(ExprKind::Reduce(Box::new(crate::ast::Reduce { acc, init, var, list, step })), start.to(end)))
    }

    fn case(&mut self) -> Result<Expr, QueryError> {
        let start = self.span();
        self.pos += 1;
        let subject = if self.at_kw("WHEN") { None } else { Some(Box::new(self.expr()?)) };
        let mut whens = Vec::new();
        while self.eat_kw("WHEN") {
            let when = self.expr()?;
            self.expect_kw("THEN")?;
            whens.push((when, self.expr()?));
        }
        if whens.is_empty() {
            return Err(self.unexpected("WHEN"));
        }
        let otherwise = if self.eat_kw("ELSE") { Some(Box::new(self.expr()?)) } else { None };
        self.expect_kw("END")?;
        Ok(Expr::new(ExprKind::Case { subject, whens, otherwise }, start.to(self.prev_span())))
    }

    /// `{k: v, …}`.
    pub(crate) fn map_literal(&mut self) -> Result<Expr, QueryError> {
        let start = self.expect_sym(Sym::LBrace)?;
        self.enter()?;
        let mut items = Vec::new();
        if !self.at_sym(Sym::RBrace) {
            loop {
                let key = self.name("a map key")?;
                self.expect_sym(Sym::Colon)?;
                items.push((key, self.expr()?));
                if !self.eat_sym(Sym::Comma) {
                    break;
                }
            }
        }
        self.leave();
        let end = self.expect_sym(Sym::RBrace)?;
        Ok(Expr::new(ExprKind::Map(items), start.to(end)))
    }

    fn list_or_comprehension(&mut self) -> Result<Expr, QueryError> {
        let start = self.expect_sym(Sym::LBracket)?;
        self.enter()?;
        let result = self.list_body(start);
        self.leave();
        result
    }

    fn at_double_colon(&self) -> bool {
        self.at_sym(Sym::Colon) && matches!(self.peek_at(1), Tok::Sym(Sym::Colon))
    }

    /// A type (`INTEGER`, `LIST<STRING NOT NULL>`, `INTEGER | FLOAT`, `ANY<…>`).
    pub(crate) fn type_spec(&mut self) -> Result<TypeSpec, QueryError> {
        let mut items = vec![self.type_member()?];
        while !self.pipe_ends_predicate && self.eat_sym(Sym::Pipe) {
            items.push(self.type_member()?);
        }
        if items.len() == 1 {
            return Ok(items.remove(0));
        }
        let nullable = items.iter().any(|t| t.nullable);
        Ok(TypeSpec { base: BaseType::Union(items), nullable })
    }

    fn type_member(&mut self) -> Result<TypeSpec, QueryError> {
        self.enter()?;
        let t = self.type_member_inner();
        self.leave();
        t
    }

    fn type_member_inner(&mut self) -> Result<TypeSpec, QueryError> {
        let wrapper = ["LIST", "ARRAY", "ANY"].into_iter().find(|w| self.at_kw(w));
        let base = if let (Some(w), Tok::Sym(Sym::Lt)) = (wrapper, self.peek_at(1)) {
            self.pos += 2;
            // Inside `<…>` a `|` is the type's.
            let outer = std::mem::replace(&mut self.pipe_ends_predicate, false);
            let inner = self.type_spec();
            self.pipe_ends_predicate = outer;
            let inner = inner?;
            self.expect_sym(Sym::Gt)?;
            if w == "ANY" {
                inner.base
            } else {
                BaseType::List(Box::new(inner))
            }
        } else if self.at_kw("LIST") || self.at_kw("ARRAY") {
            self.pos += 1;
            BaseType::List(Box::new(TypeSpec::nullable(BaseType::Any)))
        } else {
            let mut words: Vec<&str> = Vec::new();
            for i in 0..crate::types::MAX_TYPE_WORDS {
                match self.peek_at(i) {
                    Tok::Ident(w) => words.push(w),
                    _ => break,
                }
            }
            let found = (1..=words.len()).rev().find_map(|n| crate::types::base_of_words(&words[..n]).map(|b| (n, b)));
            let Some((n, base)) = found else {
                return Err(self.unexpected("a type such as INTEGER, STRING, LIST<…> or ZONED DATETIME"));
            };
            self.pos += n;
            base
        };
        let not_null = (self.at_kw("NOT") && self.peek_at(1).is_keyword("NULL")) || self.at_sym(Sym::Bang);
        if not_null {
            self.pos += if self.at_sym(Sym::Bang) { 1 } else { 2 };
        }
        Ok(TypeSpec { base, nullable: !not_null })
    }

    /// A comprehension's `WHERE` predicate, which a `|` ends.
    fn predicate_before_pipe(&mut self) -> Result<Expr, QueryError> {
        let outer = std::mem::replace(&mut self.pipe_ends_predicate, true);
        let e = self.expr();
        self.pipe_ends_predicate = outer;
        e
    }

    fn list_body(&mut self, start: Span) -> Result<Expr, QueryError> {
        // `[x IN list WHERE p | e]`.
        if self.at_var() && self.peek_at(1).is_keyword("IN") {
            let var = self.var()?;
            self.pos += 1;
            let list = Box::new(self.expr()?);
            let predicate = if self.eat_kw("WHERE") { Some(Box::new(self.predicate_before_pipe()?)) } else { None };
            let map = if self.eat_sym(Sym::Pipe) { Some(Box::new(self.expr()?)) } else { None };
            let end = self.expect_sym(Sym::RBracket)?;
            return Ok(Expr::new(ExprKind::ListComprehension { var, list, predicate, map }, start.to(end)));
        }
        // `[(a)-->(b) WHERE p | e]`, possibly with a path variable.
        let looks_like_pattern = self.at_sym(Sym::LParen)
            || (self.at_var() && matches!(self.peek_at(1), Tok::Sym(Sym::Eq)) && matches!(self.peek_at(2), Tok::Sym(Sym::LParen)));
        if looks_like_pattern {
            let saved = (self.pos, self.depth);
            if let Ok(part) = self.pattern_part() {
                if !part.chain.is_empty() && (self.at_kw("WHERE") || self.at_sym(Sym::Pipe)) {
                    let predicate = if self.eat_kw("WHERE") { Some(Box::new(self.predicate_before_pipe()?)) } else { None };
                    self.expect_sym(Sym::Pipe)?;
                    let map = Box::new(self.expr()?);
                    let end = self.expect_sym(Sym::RBracket)?;
                    return Ok(Expr::new(ExprKind::PatternComprehension { pattern: Box::new(part), predicate, map }, start.to(end)));
                }
            }
            (self.pos, self.depth) = saved;
        }
        let mut items = Vec::new();
        if !self.at_sym(Sym::RBracket) {
            items.push(self.expr()?);
            while self.eat_sym(Sym::Comma) {
                items.push(self.expr()?);
            }
        }
        let end = self.expect_sym(Sym::RBracket)?;
        Ok(Expr::new(ExprKind::List(items), start.to(end)))
    }

    /// `( e )`, or a pattern used as an expression: `(a)-[:T]->(b)`.
    fn paren_or_pattern(&mut self) -> Result<Expr, QueryError> {
        let saved = (self.pos, self.depth);
        if let Ok(part) = self.pattern_part() {
            if !part.chain.is_empty() {
                let span = part.span;
                return Ok(Expr::new(ExprKind::Pattern(Box::new(part)), span));
            }
        }
        (self.pos, self.depth) = saved;
        let start = self.expect_sym(Sym::LParen)?;
        let inner = self.expr()?;
        let end = self.expect_sym(Sym::RParen)?;
        // Keep the parentheses in the span so a column named by its text reads as written.
        Ok(Expr::new(inner.kind, start.to(end)))
    }
}

#[cfg(test)]
mod tests {
    use crate::ast::{BinaryOp, Clause, Expr, ExprKind, Literal, UnaryOp};
    use crate::error::Detail;

    fn expr(text: &str) -> Expr {
        let s = crate::parser::parse(&format!("RETURN {text}")).unwrap_or_else(|e| panic!("{text}: {e}"));
        let Clause::Return(r) = &s.query.first.clauses[0] else { panic!("return") };
        r.items[0].expr.clone()
    }

    fn show(e: &Expr) -> String {
        match &e.kind {
            ExprKind::Lit(Literal::Int(i)) => i.to_string(),
            ExprKind::Lit(Literal::Bool(b)) => b.to_string(),
            ExprKind::Var(v) => v.clone(),
            ExprKind::Binary(op, a, b) => format!("({} {} {})", show(a), op.text(), show(b)),
            ExprKind::Unary(UnaryOp::Not, a) => format!("(NOT {})", show(a)),
            ExprKind::Unary(UnaryOp::Neg, a) => format!("(-{})", show(a)),
            ExprKind::IsNull(a, not) => format!("({} IS {}NULL)", show(a), if *not { "NOT " } else { "" }),
            ExprKind::IsType(a, t, not) => format!("({} IS {}:: {t})", show(a), if *not { "NOT " } else { "" }),
            ExprKind::Prop(a, k) => format!("{}.{}", show(a), k.name),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn precedence_follows_the_grammar() {
        assert_eq!(show(&expr("1 + 2 * 3")), "(1 + (2 * 3))");
        assert_eq!(show(&expr("a OR b AND NOT c = d")), "(a OR (b AND (NOT (c = d))))");
        assert_eq!(show(&expr("a XOR b OR c")), "((a XOR b) OR c)");
        assert_eq!(show(&expr("1 < a < 3")), "((1 < a) AND (a < 3))");
        assert_eq!(show(&expr("a + 1 IN l")), "((a + 1) IN l)");
        assert_eq!(show(&expr("n.x IS NOT NULL AND true")), "((n.x IS NOT NULL) AND true)");
        assert_eq!(show(&expr("-2 ^ 2")), "(-2 ^ 2)");
        assert_eq!(show(&expr("- x ^ 2")), "((-x) ^ 2)");
    }

    #[test]
    fn integer_literals_and_their_limits() {
        assert_eq!(expr("-9223372036854775808").kind, ExprKind::Lit(Literal::Int(i64::MIN)));
        assert_eq!(expr("0x1F").kind, ExprKind::Lit(Literal::Int(31)));
        assert_eq!(expr("-0o17").kind, ExprKind::Lit(Literal::Int(-15)));
        for (text, detail) in [
            ("9223372036854775808", Detail::IntegerOverflow),
            ("-9223372036854775809", Detail::IntegerOverflow),
            ("9223372h54775808", Detail::InvalidNumberLiteral),
            ("0xZ1", Detail::InvalidNumberLiteral),
        ] {
            let err = crate::parser::parse(&format!("RETURN {text}")).expect_err(text);
            assert_eq!(err.detail, detail, "{text}");
            assert_eq!(err.column(), Some(8), "{text}");
        }
    }

    #[test]
    fn comprehensions_patterns_and_calls() {
        assert!(matches!(expr("[x IN range(1, 3) WHERE x > 1 | x * 2]").kind, ExprKind::ListComprehension { .. }));
        assert!(matches!(expr("[(a)-->(b) | b.name]").kind, ExprKind::PatternComprehension { .. }));
        assert!(matches!(expr("[(a), 1]").kind, ExprKind::List(_)));
        assert!(matches!(expr("(a)-[:T]->(:B)").kind, ExprKind::Pattern(_)));
        assert!(matches!(expr("(a)").kind, ExprKind::Var(_)));
        assert!(matches!(expr("count(*)").kind, ExprKind::CountStar));
        assert!(matches!(expr("any(x IN l WHERE x)").kind, ExprKind::Quantified { .. }));
        let ExprKind::Call { name, distinct, args } = expr("count(DISTINCT n.x)").kind else { panic!("call") };
        assert_eq!((name.name.as_str(), distinct, args.len()), ("count", true, 1));
        let ExprKind::Call { name, .. } = expr("engram.search.text('x')").kind else { panic!("call") };
        assert_eq!(name.name, "engram.search.text");
        assert!(matches!(expr("n {.name, k: 1, .*}").kind, ExprKind::MapProjection { .. }));
        assert!(matches!(expr("l[1..]").kind, ExprKind::Slice(_, Some(_), None)));
        assert!(matches!(expr("n:A:B").kind, ExprKind::HasLabels(_, _)));
        assert!(matches!(expr("CASE WHEN a THEN 1 ELSE 2 END").kind, ExprKind::Case { .. }));
        assert!(matches!(expr("a STARTS WITH 'x'").kind, ExprKind::Binary(BinaryOp::StartsWith, _, _)));
    }

    #[test]
    fn deep_nesting_is_a_named_limit_not_a_stack_overflow() {
        let deep = format!("RETURN {}1{}", "[".repeat(10_000), "]".repeat(10_000));
        let err = crate::parser::parse(&deep).expect_err("too deep");
        assert_eq!(err.detail, Detail::Limit);
        assert!(err.message.contains("query.max_nesting"), "{}", err.message);
        let deep = format!("RETURN {}1", "NOT ".repeat(10_000));
        assert_eq!(crate::parser::parse(&deep).expect_err("too deep").detail, Detail::Limit);
        let deep = format!("RETURN {}1", "- ".repeat(10_000));
        assert_eq!(crate::parser::parse(&deep).expect_err("too deep").detail, Detail::Limit);
    }
}
