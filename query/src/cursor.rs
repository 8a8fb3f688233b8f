//! The parser's cursor over the tokens: peeking, expecting, names, nesting depth, and the
//! errors that say what was expected where. Statements and patterns (`parser.rs`) and
//! expressions (`expr.rs`) are methods on it.

use crate::ast::{Name, Var};
use crate::error::{Detail, QueryError, Span};
use crate::lexer::{Sym, Tok, Token};
use crate::limits::MAX_NESTING;

/// The parser's state: the text (for spans and error positions) and the tokens.
pub(crate) struct Parser<'a> {
    pub(crate) text: &'a str,
    pub(crate) tokens: Vec<Token>,
    pub(crate) pos: usize,
    /// Nesting depth of expressions and patterns, bounded so deep input cannot overflow the stack.
    pub(crate) depth: usize,
    /// Set while a comprehension's `WHERE` is read: there `|` ends the predicate, so a label
    /// test's `|` needs parentheses (`x:(A|B)`).
    pub(crate) pipe_ends_predicate: bool,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(text: &'a str, tokens: Vec<Token>) -> Parser<'a> {
        Parser { text, tokens, pos: 0, depth: 0, pipe_ends_predicate: false }
    }

    // ---- tokens --------------------------------------------------------------------------

    pub(crate) fn peek(&self) -> &Tok {
        self.peek_at(0)
    }

    pub(crate) fn peek_at(&self, ahead: usize) -> &Tok {
        self.tokens.get(self.pos + ahead).map_or(&Tok::End, |t| &t.tok)
    }

    pub(crate) fn span(&self) -> Span {
        self.tokens.get(self.pos).or(self.tokens.last()).map_or(Span::default(), |t| t.span)
    }

    /// The span of the previous token (the last one consumed).
    pub(crate) fn prev_span(&self) -> Span {
        self.pos.checked_sub(1).and_then(|i| self.tokens.get(i)).map_or(Span::default(), |t| t.span)
    }

    pub(crate) fn bump(&mut self) -> Tok {
        let tok = self.peek().clone();
        if self.pos < self.tokens.len() {
            self.pos += 1;
        }
        tok
    }

    pub(crate) fn at_sym(&self, s: Sym) -> bool {
        matches!(self.peek(), Tok::Sym(x) if *x == s)
    }

    pub(crate) fn eat_sym(&mut self, s: Sym) -> bool {
        if self.at_sym(s) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(crate) fn expect_sym(&mut self, s: Sym) -> Result<Span, QueryError> {
        if self.at_sym(s) {
            let span = self.span();
            self.pos += 1;
            Ok(span)
        } else {
            Err(self.unexpected(&format!("'{}'", s.text())))
        }
    }

    pub(crate) fn at_kw(&self, kw: &str) -> bool {
        self.peek().is_keyword(kw)
    }

    pub(crate) fn eat_kw(&mut self, kw: &str) -> bool {
        if self.at_kw(kw) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(crate) fn expect_kw(&mut self, kw: &str) -> Result<(), QueryError> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.unexpected(kw))
        }
    }

    /// `expected X at L:C, found Y`.
    pub(crate) fn unexpected(&self, expected: &str) -> QueryError {
        let span = self.span();
        let found = self.peek().describe();
        let at = crate::error::Position::of(self.text, span.start);
        QueryError::syntax(
            self.text,
            span,
            Detail::UnexpectedSyntax,
            format!("expected {expected} at {}:{}, found {found}", at.line, at.column),
        )
    }

    pub(crate) fn error_at(&self, span: Span, detail: Detail, message: impl Into<String>) -> QueryError {
        QueryError::syntax(self.text, span, detail, message)
    }

    /// Enters one level of nesting; errors past `MAX_NESTING`.
    pub(crate) fn enter(&mut self) -> Result<(), QueryError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.error_at(
                self.span(),
                Detail::Limit,
                format!("the query nests deeper than query.max_nesting ({MAX_NESTING})"),
            ));
        }
        Ok(())
    }

    pub(crate) fn leave(&mut self) {
        self.depth -= 1;
    }

    /// A symbolic name: an identifier (keywords allowed) or a backquoted name.
    pub(crate) fn name(&mut self, what: &str) -> Result<Name, QueryError> {
        let span = self.span();
        match self.peek().clone() {
            Tok::Ident(name) | Tok::Quoted(name) => {
                self.pos += 1;
                Ok(Name { name, span })
            }
            _ => Err(self.unexpected(what)),
        }
    }

    /// A variable name. Reserved words that would make the grammar ambiguous are refused.
    pub(crate) fn var(&mut self) -> Result<Var, QueryError> {
        let span = self.span();
        match self.peek().clone() {
            Tok::Ident(name) if !is_reserved(&name) => {
                self.pos += 1;
                Ok(Var { name, span })
            }
            Tok::Quoted(name) => {
                self.pos += 1;
                Ok(Var { name, span })
            }
            _ => Err(self.unexpected("a variable name")),
        }
    }

    pub(crate) fn at_var(&self) -> bool {
        match self.peek() {
            Tok::Ident(name) => !is_reserved(name),
            Tok::Quoted(_) => true,
            _ => false,
        }
    }
}

/// Words that cannot be a bare variable because they would be read as an operator or a literal.
pub(crate) fn is_reserved(word: &str) -> bool {
    const RESERVED: [&str; 28] = [
        "AND", "OR", "XOR", "NOT", "IN", "IS", "AS", "WHERE", "RETURN", "WITH", "MATCH", "OPTIONAL", "UNWIND", "CREATE", "MERGE", "SET",
        "REMOVE", "DELETE", "DETACH", "ORDER", "SKIP", "LIMIT", "UNION", "CASE", "WHEN", "THEN", "ELSE", "END",
    ];
    RESERVED.iter().any(|r| r.eq_ignore_ascii_case(word))
        || ["STARTS", "ENDS", "CONTAINS", "DISTINCT", "NULL", "TRUE", "FALSE", "CALL", "YIELD"].iter().any(|r| r.eq_ignore_ascii_case(word))
}

/// Parses an integer literal's text (`123`, `0x1F`, `0o17`), negated when `negative`, so the
/// smallest integer is reachable. Errors with the detail to report.
pub(crate) fn parse_int(text: &str, negative: bool) -> Result<i64, Detail> {
    let lower = text.to_ascii_lowercase();
    let (digits, radix) = if let Some(h) = lower.strip_prefix("0x") {
        (h, 16)
    } else if let Some(o) = lower.strip_prefix("0o") {
        (o, 8)
    } else {
        (lower.as_str(), 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(Detail::InvalidNumberLiteral);
    }
    let magnitude = u128::from_str_radix(digits, radix).map_err(|_| Detail::IntegerOverflow)?;
    let value = if negative { -(magnitude as i128) } else { magnitude as i128 };
    i64::try_from(value).map_err(|_| Detail::IntegerOverflow)
}
