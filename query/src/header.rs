//! `FalkorDB`'s parameter header: clients send parameters inside the query text,
//! ``CYPHER name="x" `ids`=[1,2] flag=True MATCH …``. Strings are double-quoted with `\"` and `\\`
//! escapes (other characters raw), map keys backquoted, booleans in any case, floats as Python
//! prints them (`1e-05`, `inf`, `nan`), `null` (also `None`). The header is split off before the
//! query is compiled, so the plan cache sees one text for every parameter value.

use crate::error::{Detail, QueryError, Span};

/// A parameter value from the header.
#[derive(Clone, Debug, PartialEq)]
pub enum HeaderValue {
    /// `null`.
    Null,
    /// `True` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A list.
    List(Vec<HeaderValue>),
    /// A map (keys in written order).
    Map(Vec<(String, HeaderValue)>),
}

/// The header's parameters, in written order.
pub type HeaderParams = Vec<(String, HeaderValue)>;

/// Splits a leading `CYPHER k=v …` header off `text`: the parameters and the query after them.
/// Text without the header comes back whole with no parameters.
pub fn split(text: &str) -> Result<(HeaderParams, &str), QueryError> {
    let trimmed = text.trim_start();
    let offset = text.len() - trimmed.len();
    let is_header =
        trimmed.len() >= 6 && trimmed[..6].eq_ignore_ascii_case("CYPHER") && trimmed[6..].chars().next().is_none_or(char::is_whitespace);
    if !is_header {
        return Ok((Vec::new(), text));
    }
    let mut p = Cursor { text, pos: offset + 6 };
    let mut params = Vec::new();
    loop {
        p.skip_space();
        let save = p.pos;
        let Some(name) = p.name() else { break };
        p.skip_space();
        if !p.eat('=') {
            p.pos = save;
            break;
        }
        p.skip_space();
        let value = p.value(0)?;
        params.push((name, value));
    }
    Ok((params, &text[p.pos..]))
}

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

/// How deeply header lists and maps may nest (`query.max_nesting`).
const MAX_DEPTH: usize = crate::limits::MAX_NESTING;

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn skip_space(&mut self) {
        while let Some(c) = self.peek().filter(|c| c.is_whitespace()) {
            self.pos += c.len_utf8();
        }
    }

    fn error(&self, message: impl Into<String>) -> QueryError {
        QueryError::syntax(self.text, Span::new(self.pos, self.pos), Detail::UnexpectedSyntax, message)
    }

    /// A parameter or key name: backquoted, or letters, digits and `_`.
    fn name(&mut self) -> Option<String> {
        if self.eat('`') {
            let rest = &self.text[self.pos..];
            let end = rest.find('`')?;
            let name = rest[..end].to_owned();
            self.pos += end + 1;
            return Some(name);
        }
        let start = self.pos;
        while let Some(c) = self.peek().filter(|c| c.is_alphanumeric() || *c == '_') {
            self.pos += c.len_utf8();
        }
        (self.pos > start).then(|| self.text[start..self.pos].to_owned())
    }

    fn value(&mut self, depth: usize) -> Result<HeaderValue, QueryError> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("a header value nests deeper than query.max_nesting ({MAX_DEPTH})")));
        }
        self.skip_space();
        match self.peek() {
            Some('"' | '\'') => self.string(),
            Some('[') => {
                self.pos += 1;
                let mut items = Vec::new();
                self.skip_space();
                if !self.eat(']') {
                    loop {
                        items.push(self.value(depth + 1)?);
                        self.skip_space();
                        if self.eat(']') {
                            break;
                        }
                        if !self.eat(',') {
                            return Err(self.error("expected ',' or ']' in a header list"));
                        }
                    }
                }
                Ok(HeaderValue::List(items))
            }
            Some('{') => {
                self.pos += 1;
                let mut items = Vec::new();
                self.skip_space();
                if !self.eat('}') {
                    loop {
                        self.skip_space();
                        let key = self.name().ok_or_else(|| self.error("expected a map key in a header map"))?;
                        self.skip_space();
                        if !self.eat(':') {
                            return Err(self.error("expected ':' after a header map key"));
                        }
                        items.push((key, self.value(depth + 1)?));
                        self.skip_space();
                        if self.eat('}') {
                            break;
                        }
                        if !self.eat(',') {
                            return Err(self.error("expected ',' or '}' in a header map"));
                        }
                    }
                }
                Ok(HeaderValue::Map(items))
            }
            Some(_) => self.scalar(),
            None => Err(self.error("expected a parameter value, found the end of the query")),
        }
    }

    fn string(&mut self) -> Result<HeaderValue, QueryError> {
        let quote = self.peek().unwrap_or('"');
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                self.pos = start;
                return Err(self.error("unterminated string in the parameter header"));
            };
            self.pos += c.len_utf8();
            if c == quote {
                return Ok(HeaderValue::Str(out));
            }
            if c == '\\' {
                match self.peek() {
                    Some(e @ ('\\' | '"' | '\'')) => {
                        out.push(e);
                        self.pos += 1;
                    }
                    _ => out.push('\\'),
                }
            } else {
                out.push(c);
            }
        }
    }

    fn scalar(&mut self) -> Result<HeaderValue, QueryError> {
        let start = self.pos;
        while let Some(c) = self.peek().filter(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '+')) {
            self.pos += c.len_utf8();
        }
        let word = &self.text[start..self.pos];
        let lower = word.to_ascii_lowercase();
        Ok(match lower.as_str() {
            "null" | "none" => HeaderValue::Null,
            "true" => HeaderValue::Bool(true),
            "false" => HeaderValue::Bool(false),
            "inf" | "+inf" | "infinity" => HeaderValue::Float(f64::INFINITY),
            "-inf" | "-infinity" => HeaderValue::Float(f64::NEG_INFINITY),
            "nan" => HeaderValue::Float(f64::NAN),
            _ => {
                if let Ok(i) = word.parse::<i64>() {
                    HeaderValue::Int(i)
                } else if let Ok(f) = word.parse::<f64>() {
                    HeaderValue::Float(f)
                } else {
                    self.pos = start;
                    return Err(self.error(format!("expected a parameter value, found {word:?}")));
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_binds_parameters_and_leaves_the_query() {
        let text = "CYPHER name=\"a \\\"b\\\" \\\\ c\" `ids`=[1, 2] flag=True f=1e-05 n=null m={`k`:[0.5,\"x\"]} MATCH (n) RETURN n";
        let (params, query) = split(text).expect("splits");
        assert_eq!(query.trim(), "MATCH (n) RETURN n");
        assert_eq!(params[0], ("name".into(), HeaderValue::Str("a \"b\" \\ c".into())));
        assert_eq!(params[1], ("ids".into(), HeaderValue::List(vec![HeaderValue::Int(1), HeaderValue::Int(2)])));
        assert_eq!(params[2], ("flag".into(), HeaderValue::Bool(true)));
        assert_eq!(params[3], ("f".into(), HeaderValue::Float(1e-5)));
        assert_eq!(params[4], ("n".into(), HeaderValue::Null));
        assert_eq!(
            params[5],
            (
                "m".into(),
                HeaderValue::Map(vec![("k".into(), HeaderValue::List(vec![HeaderValue::Float(0.5), HeaderValue::Str("x".into())]))])
            )
        );
    }

    #[test]
    fn bare_prefixes_plain_queries_and_errors() {
        assert_eq!(split("CYPHER MATCH (n) RETURN n").expect("splits"), (vec![], "MATCH (n) RETURN n"));
        assert_eq!(split("MATCH (n) RETURN n").expect("splits"), (vec![], "MATCH (n) RETURN n"));
        // A query that merely starts with the word is not a header.
        assert_eq!(split("CYPHERX").expect("splits"), (vec![], "CYPHERX"));
        let err = split("CYPHER a=\"open MATCH (n) RETURN n").expect_err("unterminated");
        assert_eq!((err.detail, err.column()), (Detail::UnexpectedSyntax, Some(10)));
        assert!(split("CYPHER a=[1, 2 MATCH (n) RETURN n").is_err());
        assert!(split(&format!("CYPHER a={}", "[".repeat(100_000))).is_err());
    }
}
