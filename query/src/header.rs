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
    parse(text, true)
}

/// The query after the header (`split`'s second half, with the same errors), its values read
/// but not kept: nothing is allocated. For callers that only look at the query (whether it
/// writes, its plan), as a server does several times per request.
pub fn body(text: &str) -> Result<&str, QueryError> {
    parse(text, false).map(|(_, body)| body)
}

fn parse(text: &str, keep: bool) -> Result<(HeaderParams, &str), QueryError> {
    let trimmed = text.trim_start();
    let offset = text.len() - trimmed.len();
    // `get`, not indexing: the sixth byte may fall inside a character (`x1nané`).
    let is_header =
        trimmed.get(..6).is_some_and(|w| w.eq_ignore_ascii_case("CYPHER")) && trimmed[6..].chars().next().is_none_or(char::is_whitespace);
    if !is_header {
        return Ok((Vec::new(), text));
    }
    let mut p = Cursor { text, pos: offset + 6, keep };
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
        if keep {
            params.push((name.to_owned(), value));
        }
    }
    Ok((params, &text[p.pos..]))
}

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    /// Build the values (else only read past them, `HeaderValue::Null` standing in).
    keep: bool,
}

/// How deeply header lists and maps may nest (`query.max_nesting`).
const MAX_DEPTH: usize = crate::limits::MAX_NESTING;

impl<'a> Cursor<'a> {
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
    fn name(&mut self) -> Option<&'a str> {
        let text = self.text;
        if self.eat('`') {
            let rest = &text[self.pos..];
            let end = rest.find('`')?;
            self.pos += end + 1;
            return Some(&rest[..end]);
        }
        let start = self.pos;
        while let Some(c) = self.peek().filter(|c| c.is_alphanumeric() || *c == '_') {
            self.pos += c.len_utf8();
        }
        (self.pos > start).then(|| &text[start..self.pos])
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
                        let item = self.value(depth + 1)?;
                        if self.keep {
                            items.push(item);
                        }
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
                        let item = self.value(depth + 1)?;
                        if self.keep {
                            items.push((key.to_owned(), item));
                        }
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
                return Ok(if self.keep { HeaderValue::Str(out) } else { HeaderValue::Null });
            }
            let c = match (c, self.peek()) {
                ('\\', Some(e @ ('\\' | '"' | '\''))) => {
                    self.pos += 1;
                    e
                }
                _ => c,
            };
            if self.keep {
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
        let is = |names: &[&str]| names.iter().any(|n| word.eq_ignore_ascii_case(n));
        Ok(if is(&["null", "none"]) {
            HeaderValue::Null
        } else if is(&["true"]) {
            HeaderValue::Bool(true)
        } else if is(&["false"]) {
            HeaderValue::Bool(false)
        } else if is(&["inf", "+inf", "infinity"]) {
            HeaderValue::Float(f64::INFINITY)
        } else if is(&["-inf", "-infinity"]) {
            HeaderValue::Float(f64::NEG_INFINITY)
        } else if is(&["nan"]) {
            HeaderValue::Float(f64::NAN)
        } else if let Ok(i) = word.parse::<i64>() {
            HeaderValue::Int(i)
        } else if let Ok(f) = word.parse::<f64>() {
            HeaderValue::Float(f)
        } else {
            self.pos = start;
            return Err(self.error(format!("expected a parameter value, found {word:?}")));
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
        // A character across the sixth byte is no header either (this once panicked).
        assert_eq!(split("x1nané RETURN 1").expect("splits"), (vec![], "x1nané RETURN 1"));
        let err = split("CYPHER a=\"open MATCH (n) RETURN n").expect_err("unterminated");
        assert_eq!((err.detail, err.column()), (Detail::UnexpectedSyntax, Some(10)));
        assert!(split("CYPHER a=[1, 2 MATCH (n) RETURN n").is_err());
        assert!(split(&format!("CYPHER a={}", "[".repeat(100_000))).is_err());
    }

    proptest::proptest! {
        /// `body` reads exactly what `split` reads: the same query after the header, the same
        /// error (message and place) for a bad one, on texts made of header-like pieces.
        #[test]
        fn body_agrees_with_split(pieces in proptest::collection::vec(proptest::sample::select(vec![
            "CYPHER", "cypher", " ", "s", "`k y`", "=", "\"a\\\"b\"", "'x'", "\"", "[", "]", "{", "}", ":", ",",
            "1", "-2.5e3", "True", "none", "nan", "x1", "é", "\\", "MATCH (n) RETURN n",
        ]), 0..14)) {
            let text: String = pieces.concat();
            let whole = split(&text).map(|(_, b)| b);
            proptest::prop_assert_eq!(body(&text), whole);
        }
    }
}
