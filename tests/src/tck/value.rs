//! The TCK's value syntax and equality: `1` and `1.0` differ, maps ignore key order, nodes
//! compare by labels and properties, relationships by type and properties, paths step by step.
//! Both the expected cells and engram's results are turned into `Value` and compared
//! structurally, never as printed text.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};

/// A value as the TCK writes it.
#[derive(Clone, Debug)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float (`NaN`, `Inf`, `-Inf` included).
    Float(f64),
    /// A string.
    Str(String),
    /// A list.
    List(Vec<Value>),
    /// A map.
    Map(BTreeMap<String, Value>),
    /// A node: labels and properties (ids are not compared).
    Node(Node),
    /// A relationship: type and properties (endpoints are not compared).
    Rel(Rel),
    /// A path: a start node and steps, each a relationship, its direction and the next node.
    Path(Node, Vec<(Rel, bool, Node)>),
}

/// A node's comparable parts.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Labels, as a set.
    pub labels: BTreeSet<String>,
    /// Properties.
    pub props: BTreeMap<String, Value>,
}

/// A relationship's comparable parts.
#[derive(Clone, Debug, PartialEq)]
pub struct Rel {
    /// The type.
    pub ty: String,
    /// Properties.
    pub props: BTreeMap<String, Value>,
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        use Value::{Bool, Float, Int, List, Map, Null, Path, Rel, Str};
        match (self, other) {
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            // NaN equals NaN here: the TCK writes `NaN` and expects NaN.
            (Float(a), Float(b)) => a == b || (a.is_nan() && b.is_nan()),
            (Str(a), Str(b)) => a == b,
            (List(a), List(b)) => a == b,
            (Map(a), Map(b)) => a == b,
            (Value::Node(a), Value::Node(b)) => a == b,
            (Rel(a), Rel(b)) => a == b,
            (Path(a, sa), Path(b, sb)) => a == b && sa == sb,
            _ => false,
        }
    }
}

impl Value {
    /// The same value with every list sorted (by printed form), recursively: for the
    /// "ignoring element order for lists" comparisons.
    #[must_use]
    pub fn lists_unordered(&self) -> Value {
        match self {
            Value::List(items) => {
                let mut items: Vec<Value> = items.iter().map(Value::lists_unordered).collect();
                items.sort_by_key(ToString::to_string);
                Value::List(items)
            }
            Value::Map(m) => Value::Map(m.iter().map(|(k, v)| (k.clone(), v.lists_unordered())).collect()),
            other => other.clone(),
        }
    }
}

fn write_props(f: &mut fmt::Formatter<'_>, props: &BTreeMap<String, Value>) -> fmt::Result {
    if props.is_empty() {
        return Ok(());
    }
    write!(f, " {{")?;
    for (i, (k, v)) in props.iter().enumerate() {
        if i > 0 {
            write!(f, ", ")?;
        }
        write!(f, "{k}: {v}")?;
    }
    write!(f, "}}")
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "(")?;
        for l in &self.labels {
            write!(f, ":{l}")?;
        }
        if self.labels.is_empty() && !self.props.is_empty() {
            // `({k: v})`, not `( {k: v})`.
            let mut s = String::new();
            for (i, (k, v)) in self.props.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                let _ = write!(s, "{k}: {v}");
            }
            return write!(f, "{{{s}}})");
        }
        write_props(f, &self.props)?;
        write!(f, ")")
    }
}

impl fmt::Display for Rel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[:{}", self.ty)?;
        write_props(f, &self.props)?;
        write!(f, "]")
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => write!(f, "null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) if x.is_nan() => write!(f, "NaN"),
            Value::Float(x) if x.is_infinite() => write!(f, "{}", if *x > 0.0 { "Inf" } else { "-Inf" }),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Str(s) => write!(f, "'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
            Value::List(items) => {
                write!(f, "[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{v}")?;
                }
                write!(f, "]")
            }
            Value::Map(m) => {
                write!(f, "{{")?;
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                write!(f, "}}")
            }
            Value::Node(n) => write!(f, "{n}"),
            Value::Rel(r) => write!(f, "{r}"),
            Value::Path(start, steps) => {
                write!(f, "<{start}")?;
                for (rel, forward, node) in steps {
                    if *forward {
                        write!(f, "-{rel}->{node}")?;
                    } else {
                        write!(f, "<-{rel}-{node}")?;
                    }
                }
                write!(f, ">")
            }
        }
    }
}

/// Parses a TCK cell (or a parameter value).
pub fn parse(text: &str) -> Result<Value, String> {
    let mut p = P { s: text.as_bytes(), text, i: 0 };
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("trailing text at byte {} of {text:?}", p.i));
    }
    Ok(v)
}

struct P<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

impl P<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected '{}' at byte {} of {:?}", c as char, self.i, self.text))
        }
    }

    fn starts(&mut self, word: &str) -> bool {
        self.ws();
        if self.text[self.i..].starts_with(word) {
            self.i += word.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        match self.peek() {
            Some(b'\'') => self.string().map(Value::Str),
            Some(b'[') if self.text[self.i + 1..].trim_start().starts_with(':') => Ok(Value::Rel(self.rel()?)),
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                if !self.eat(b']') {
                    loop {
                        items.push(self.value()?);
                        if self.eat(b']') {
                            break;
                        }
                        self.expect(b',')?;
                    }
                }
                Ok(Value::List(items))
            }
            Some(b'{') => Ok(Value::Map(self.map()?)),
            Some(b'(') => Ok(Value::Node(self.node()?)),
            Some(b'<') => self.path(),
            _ if self.starts("null") => Ok(Value::Null),
            _ if self.starts("true") => Ok(Value::Bool(true)),
            _ if self.starts("false") => Ok(Value::Bool(false)),
            _ if self.starts("NaN") => Ok(Value::Float(f64::NAN)),
            _ if self.starts("Inf") => Ok(Value::Float(f64::INFINITY)),
            _ if self.starts("-Inf") => Ok(Value::Float(f64::NEG_INFINITY)),
            _ => self.number(),
        }
    }

    fn number(&mut self) -> Result<Value, String> {
        self.ws();
        let start = self.i;
        while self.i < self.s.len() && matches!(self.s[self.i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
            self.i += 1;
        }
        let t = &self.text[start..self.i];
        if t.is_empty() {
            return Err(format!("expected a value at byte {start} of {:?}", self.text));
        }
        if t.contains(['.', 'e', 'E']) {
            t.parse::<f64>().map(Value::Float).map_err(|e| format!("{t}: {e}"))
        } else {
            t.parse::<i64>().map(Value::Int).map_err(|e| format!("{t}: {e}"))
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'\'')?;
        let mut out = String::new();
        let rest = &self.text[self.i..];
        let mut chars = rest.char_indices();
        while let Some((at, c)) = chars.next() {
            match c {
                '\'' => {
                    self.i += at + 1;
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some((_, e)) => out.push(e),
                    None => break,
                },
                c => out.push(c),
            }
        }
        Err(format!("unterminated string in {:?}", self.text))
    }

    fn key(&mut self) -> Result<String, String> {
        self.ws();
        if self.peek() == Some(b'`') {
            self.i += 1;
            let end = self.text[self.i..].find('`').ok_or("unterminated backquote")?;
            let k = self.text[self.i..self.i + end].to_owned();
            self.i += end + 1;
            return Ok(k);
        }
        let start = self.i;
        while self.i < self.s.len() && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_' || self.s[self.i] >= 0x80) {
            self.i += 1;
        }
        if start == self.i {
            return Err(format!("expected a name at byte {start} of {:?}", self.text));
        }
        Ok(self.text[start..self.i].to_owned())
    }

    fn map(&mut self) -> Result<BTreeMap<String, Value>, String> {
        self.expect(b'{')?;
        let mut m = BTreeMap::new();
        if self.eat(b'}') {
            return Ok(m);
        }
        loop {
            let k = self.key()?;
            self.expect(b':')?;
            let v = self.value()?;
            m.insert(k, v);
            if self.eat(b'}') {
                return Ok(m);
            }
            self.expect(b',')?;
        }
    }

    fn node(&mut self) -> Result<Node, String> {
        self.expect(b'(')?;
        let mut labels = BTreeSet::new();
        while self.eat(b':') {
            labels.insert(self.key()?);
        }
        let props = if self.peek() == Some(b'{') { self.map()? } else { BTreeMap::new() };
        self.expect(b')')?;
        Ok(Node { labels, props })
    }

    fn rel(&mut self) -> Result<Rel, String> {
        self.expect(b'[')?;
        self.expect(b':')?;
        let ty = self.key()?;
        let props = if self.peek() == Some(b'{') { self.map()? } else { BTreeMap::new() };
        self.expect(b']')?;
        Ok(Rel { ty, props })
    }

    fn path(&mut self) -> Result<Value, String> {
        self.expect(b'<')?;
        let start = self.node()?;
        let mut steps = Vec::new();
        loop {
            if self.eat(b'>') {
                return Ok(Value::Path(start, steps));
            }
            let backward = self.eat(b'<');
            self.expect(b'-')?;
            let rel = self.rel()?;
            self.expect(b'-')?;
            let forward = !backward && self.eat(b'>');
            let node = self.node()?;
            steps.push((rel, forward, node));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_and_floats_differ() {
        assert_ne!(parse("1").expect("int"), parse("1.0").expect("float"));
        assert_eq!(parse("1.0").expect("float"), Value::Float(1.0));
        assert_eq!(parse("-1e3").expect("float"), Value::Float(-1000.0));
        assert_eq!(parse("NaN").expect("nan"), parse("NaN").expect("nan"));
    }

    #[test]
    fn graph_values_compare_by_their_parts() {
        assert_eq!(parse("(:B:A {x: 1, y: 'a'})").expect("node"), parse("(:A:B {y: 'a', x: 1})").expect("node"));
        assert_ne!(parse("(:A)").expect("node"), parse("(:A {x: 1})").expect("node"));
        assert_eq!(parse("[:T {x: 1}]").expect("rel"), Value::Rel(Rel { ty: "T".into(), props: [("x".into(), Value::Int(1))].into() }));
        assert_ne!(parse("[:T {x: 1}]").expect("rel"), parse("[:U {x: 1}]").expect("rel"));
        let p = parse("<(:A)-[:T]->(:B)<-[:U {k: 'v'}]-()>").expect("path");
        assert_eq!(p.to_string(), "<(:A)-[:T]->(:B)<-[:U {k: 'v'}]-()>");
        assert_ne!(p, parse("<(:A)-[:T]->(:B)-[:U {k: 'v'}]->()>").expect("path"));
        assert_eq!(parse("'a\\'b'").expect("str"), Value::Str("a'b".into()));
        assert_eq!(parse("{`a b`: [1, null]}").expect("map").to_string(), "{a b: [1, null]}");
    }
}
