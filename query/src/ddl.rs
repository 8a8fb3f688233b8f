//! Index statements, as FalkorDB's and Neo4j's clients send them: `CREATE [RANGE|FULLTEXT|VECTOR]
//! INDEX … FOR (n:L) ON (n.p, …) [OPTIONS {…}]` (and the relationship form `FOR ()-[e:T]-()`), the
//! older `CREATE INDEX ON :L(p, …)`, `DROP [FULLTEXT|VECTOR] INDEX ON :L(p)` / `… FOR … ON …`, and
//! the full-text procedures `db.idx.fulltext.createNodeIndex` / `db.idx.fulltext.drop`.
//!
//! engram answers every query from its own in-memory indexes, so a declared index changes no
//! result: the declarations are kept (per workspace) so that `CALL db.indexes()` lists them, a
//! second declaration of the same index is refused as FalkorDB refuses it, and the full-text
//! procedures know which properties a label's text lives in.

use crate::error::{Detail, ErrorType, Phase, QueryError};
use crate::lexer::{lex, Sym, Tok, Token};

/// The kind of an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexKind {
    /// Exact and range lookups.
    Range,
    /// Full-text search over string properties.
    Fulltext,
    /// Vector similarity over list properties.
    Vector,
}

impl IndexKind {
    /// FalkorDB's name for it (`RANGE`, `FULLTEXT`, `VECTOR`).
    pub fn as_str(self) -> &'static str {
        match self {
            IndexKind::Range => "RANGE",
            IndexKind::Fulltext => "FULLTEXT",
            IndexKind::Vector => "VECTOR",
        }
    }
}

/// An option's value (`OPTIONS {dimension: 3, similarityFunction: 'cosine'}`).
#[derive(Clone, Debug, PartialEq)]
pub enum OptionValue {
    /// A whole number.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A boolean.
    Bool(bool),
    /// A list of strings (`stopwords: ['a', 'the']`).
    List(Vec<String>),
    /// A map (Neo4j's `indexConfig: {`vector.dimensions`: 3}`).
    Map(Vec<(String, OptionValue)>),
}

/// An index as declared.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexDef {
    /// Its name (`CREATE INDEX name FOR …`, Neo4j's way; `DROP INDEX name`), if written.
    pub name: Option<String>,
    /// Its kind.
    pub kind: IndexKind,
    /// True for a relationship type's index, false for a node label's.
    pub relationship: bool,
    /// The label or relationship type.
    pub label: String,
    /// The properties, in order.
    pub properties: Vec<String>,
    /// `OPTIONS {…}`, in order.
    pub options: Vec<(String, OptionValue)>,
}

/// The kind of a constraint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstraintKind {
    /// No two live elements of the label share the values of all the properties (elements
    /// missing one of them are not compared).
    Unique,
    /// Every live element of the label has each property.
    Mandatory,
    /// Both (Neo4j's `IS NODE KEY` / `IS RELATIONSHIP KEY`).
    Key,
}

impl ConstraintKind {
    /// FalkorDB's name for it (`UNIQUE`, `MANDATORY`).
    pub fn as_str(self) -> &'static str {
        match self {
            ConstraintKind::Unique => "UNIQUE",
            ConstraintKind::Mandatory => "MANDATORY",
            ConstraintKind::Key => "KEY",
        }
    }
}

/// A constraint as declared (`CREATE CONSTRAINT … FOR (n:L) REQUIRE n.p IS UNIQUE`, FalkorDB's
/// `GRAPH.CONSTRAINT CREATE`).
#[derive(Clone, Debug, PartialEq)]
pub struct ConstraintDef {
    /// Its name, if written.
    pub name: Option<String>,
    /// Its kind.
    pub kind: ConstraintKind,
    /// True for a relationship type's, false for a node label's.
    pub relationship: bool,
    /// The label or relationship type.
    pub label: String,
    /// The properties, in order.
    pub properties: Vec<String>,
}

/// An index or constraint statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Ddl {
    /// Declare an index (`if_not_exists`: a second declaration is not an error).
    Create {
        /// What.
        index: IndexDef,
        /// `IF NOT EXISTS` was written.
        if_not_exists: bool,
    },
    /// Remove a declaration (the properties may be empty: every index of that kind on the label).
    Drop(IndexDef),
    /// `DROP INDEX name [IF EXISTS]`: remove the declarations of that name.
    DropNamed {
        /// The index's name.
        name: String,
        /// `IF EXISTS` was written: no such index is not an error.
        if_exists: bool,
    },
    /// Declare a constraint; the elements already stored must meet it.
    CreateConstraint {
        /// What.
        constraint: ConstraintDef,
        /// `IF NOT EXISTS` was written.
        if_not_exists: bool,
    },
    /// Remove a constraint, by what it constrains.
    DropConstraint(ConstraintDef),
    /// `DROP CONSTRAINT name [IF EXISTS]`.
    DropConstraintNamed {
        /// The constraint's name.
        name: String,
        /// `IF EXISTS` was written: no such constraint is not an error.
        if_exists: bool,
    },
}

impl Ddl {
    /// A constraint statement (they bind every writer of the workspace: its admins' to make).
    pub fn is_constraint(&self) -> bool {
        matches!(self, Ddl::CreateConstraint { .. } | Ddl::DropConstraint(_) | Ddl::DropConstraintNamed { .. })
    }
}

/// Whether `text` is an index statement: `None` when it is not (it is an ordinary query); the
/// statement, or a syntax error naming its place, when it is.
pub fn parse(text: &str) -> Option<Result<Ddl, QueryError>> {
    if !may_be_index_statement(text) {
        return None;
    }
    let tokens = lex(text).ok()?;
    let first = tokens.first()?;
    let is = |i: usize, kw: &str| tokens.get(i).is_some_and(|t| t.tok.is_keyword(kw));
    let kind_at = |i: usize| ["RANGE", "FULLTEXT", "VECTOR"].iter().any(|k| is(i, k));
    let create_or_drop = first.tok.is_keyword("CREATE") || first.tok.is_keyword("DROP");
    if create_or_drop && is(1, "CONSTRAINT") {
        return Some(Parser { text, tokens, at: 0 }.constraint());
    }
    let ddl = create_or_drop && (is(1, "INDEX") || (kind_at(1) && is(2, "INDEX")));
    let procedure =
        first.tok.is_keyword("CALL") && tokens.get(1).is_some_and(|t| matches!(&t.tok, Tok::Ident(s) if s.eq_ignore_ascii_case("db")));
    if ddl {
        return Some(Parser { text, tokens, at: 0 }.statement());
    }
    if procedure {
        let mut p = Parser { text, tokens, at: 0 };
        return p.fulltext_procedure();
    }
    None
}

/// Whether `text` can start an index statement (`CREATE`, `DROP` or `CALL` first, or a comment
/// before it): the check every query pays, so it looks at the first word, not the tokens.
fn may_be_index_statement(text: &str) -> bool {
    let t = text.trim_start();
    if t.starts_with('/') {
        return true;
    }
    let word = t.split(|c: char| !c.is_ascii_alphabetic()).next().unwrap_or("");
    ["CREATE", "DROP", "CALL"].iter().any(|k| word.eq_ignore_ascii_case(k))
}

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.tokens[self.at.min(self.tokens.len() - 1)]
    }

    fn error(&self, expected: &str) -> QueryError {
        let t = self.peek();
        QueryError::syntax(self.text, t.span, Detail::UnexpectedSyntax, format!("expected {expected}, found {}", t.tok.describe()))
    }

    fn keyword(&mut self, kw: &str) -> bool {
        if self.peek().tok.is_keyword(kw) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect_keyword(&mut self, kw: &str) -> Result<(), QueryError> {
        if self.keyword(kw) {
            Ok(())
        } else {
            Err(self.error(kw))
        }
    }

    fn sym(&mut self, s: Sym) -> bool {
        if self.peek().tok == Tok::Sym(s) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect_sym(&mut self, s: Sym) -> Result<(), QueryError> {
        if self.sym(s) {
            Ok(())
        } else {
            Err(self.error(&format!("'{}'", s.text())))
        }
    }

    fn name(&mut self) -> Result<String, QueryError> {
        match &self.peek().tok {
            Tok::Ident(s) | Tok::Quoted(s) => {
                let s = s.clone();
                self.at += 1;
                Ok(s)
            }
            _ => Err(self.error("a name")),
        }
    }

    fn end(&mut self) -> Result<(), QueryError> {
        self.sym(Sym::Semicolon);
        if self.peek().tok == Tok::End {
            Ok(())
        } else {
            Err(self.error("the end of the statement"))
        }
    }

    fn statement(mut self) -> Result<Ddl, QueryError> {
        let create = self.keyword("CREATE");
        if !create {
            self.expect_keyword("DROP")?;
        }
        let kind = if self.keyword("FULLTEXT") {
            IndexKind::Fulltext
        } else if self.keyword("VECTOR") {
            IndexKind::Vector
        } else {
            self.keyword("RANGE");
            IndexKind::Range
        };
        self.expect_keyword("INDEX")?;
        // An index name (`CREATE INDEX my_index FOR …`): what Neo4j's procedures query by.
        let (name, if_not_exists, by_name) = self.head(create)?;
        if let Some(name) = by_name {
            return Ok(Ddl::DropNamed { name, if_exists: if_not_exists });
        }
        let (relationship, label, properties) = if self.keyword("ON") {
            // `ON :Label(p, q)`
            self.expect_sym(Sym::Colon)?;
            let label = self.name()?;
            self.expect_sym(Sym::LParen)?;
            let mut props = Vec::new();
            if !self.sym(Sym::RParen) {
                loop {
                    props.push(self.name()?);
                    if self.sym(Sym::RParen) {
                        break;
                    }
                    self.expect_sym(Sym::Comma)?;
                }
            }
            (false, label, props)
        } else {
            self.expect_keyword("FOR")?;
            let (relationship, var, label) = self.pattern()?;
            self.expect_keyword("ON")?;
            let each = self.keyword("EACH");
            let close = if each {
                self.expect_sym(Sym::LBracket)?;
                Sym::RBracket
            } else {
                self.expect_sym(Sym::LParen)?;
                Sym::RParen
            };
            let mut props = Vec::new();
            loop {
                props.push(self.property_of(&var)?);
                if self.sym(close) {
                    break;
                }
                self.expect_sym(Sym::Comma)?;
            }
            (relationship, label, props)
        };
        let options = if self.keyword("OPTIONS") { self.options()? } else { Vec::new() };
        self.end()?;
        let index = IndexDef { name, kind, relationship, label, properties, options };
        Ok(if create { Ddl::Create { index, if_not_exists } } else { Ddl::Drop(index) })
    }

    /// `CREATE CONSTRAINT [name] [IF NOT EXISTS] FOR (n:L) REQUIRE n.p IS [NODE|REL] UNIQUE`
    /// (or `(n.p, n.q)`, or `IS NOT NULL`, where several properties are each required, as
    /// FalkorDB's `MANDATORY` allows; `ON … ASSERT …` and `ASSERT exists(n.p)` as Neo4j 4
    /// wrote them; `OPTIONS {…}` ignored), `DROP CONSTRAINT name [IF EXISTS]` and `DROP
    /// CONSTRAINT ON (n:L) ASSERT …`.
    fn constraint(mut self) -> Result<Ddl, QueryError> {
        let create = self.keyword("CREATE");
        if !create {
            self.expect_keyword("DROP")?;
        }
        self.expect_keyword("CONSTRAINT")?;
        let (name, if_not_exists, by_name) = self.head(create)?;
        if let Some(name) = by_name {
            return Ok(Ddl::DropConstraintNamed { name, if_exists: if_not_exists });
        }
        let old_form = self.keyword("ON");
        if !old_form {
            self.expect_keyword("FOR")?;
        }
        let (relationship, var, label) = self.pattern()?;
        self.expect_keyword(if old_form { "ASSERT" } else { "REQUIRE" })?;
        let (properties, kind) = if self.peek().tok.is_keyword("exists") {
            // Neo4j 4's `ASSERT exists(n.p)`.
            self.at += 1;
            self.expect_sym(Sym::LParen)?;
            let p = self.property_of(&var)?;
            self.expect_sym(Sym::RParen)?;
            (vec![p], ConstraintKind::Mandatory)
        } else {
            let mut properties = Vec::new();
            if self.sym(Sym::LParen) {
                loop {
                    properties.push(self.property_of(&var)?);
                    if self.sym(Sym::RParen) {
                        break;
                    }
                    self.expect_sym(Sym::Comma)?;
                }
            } else {
                properties.push(self.property_of(&var)?);
            }
            self.expect_keyword("IS")?;
            let kind = if self.keyword("NOT") {
                self.expect_keyword("NULL")?;
                ConstraintKind::Mandatory
            } else {
                let _ = self.keyword("NODE") || self.keyword("RELATIONSHIP") || self.keyword("REL");
                if self.keyword("KEY") {
                    ConstraintKind::Key
                } else if self.keyword("UNIQUE") {
                    ConstraintKind::Unique
                } else {
                    return Err(self.error("UNIQUE, KEY or NOT NULL (the constraints engram keeps)"));
                }
            };
            (properties, kind)
        };
        if self.keyword("OPTIONS") {
            self.options()?;
        }
        self.end()?;
        let constraint = ConstraintDef { name, kind, relationship, label, properties };
        Ok(if create { Ddl::CreateConstraint { constraint, if_not_exists } } else { Ddl::DropConstraint(constraint) })
    }

    /// After `CREATE|DROP INDEX|CONSTRAINT`: the optional name, then whether `IF NOT EXISTS`
    /// (a create) or `IF EXISTS` (a drop) follows, and the name again when the statement is a
    /// drop by name alone, which ends there.
    fn head(&mut self, create: bool) -> Result<(Option<String>, bool, Option<String>), QueryError> {
        let mut name = None;
        if !["FOR", "ON", "IF"].iter().any(|k| self.peek().tok.is_keyword(k)) {
            name = Some(self.name()?);
        }
        let mut if_exists = false;
        if self.keyword("IF") {
            if create {
                self.expect_keyword("NOT")?;
            }
            self.expect_keyword("EXISTS")?;
            if_exists = true;
        }
        if let (false, Some(name)) = (create, &name) {
            if !self.peek().tok.is_keyword("ON") && !self.peek().tok.is_keyword("FOR") {
                self.end()?;
                return Ok((Some(name.clone()), if_exists, Some(name.clone())));
            }
        }
        Ok((name, if_exists, None))
    }

    /// `var.p`: the property `p` of the pattern's variable.
    fn property_of(&mut self, var: &str) -> Result<String, QueryError> {
        let v = self.name()?;
        if v != var {
            return Err(QueryError::syntax(
                self.text,
                self.tokens[self.at - 1].span,
                Detail::UndefinedVariable,
                format!("`{v}` is not the pattern's variable `{var}`"),
            ));
        }
        self.expect_sym(Sym::Dot)?;
        self.name()
    }

    /// `(n:Label)` or `()-[e:TYPE]-()` (either arrow): whether a relationship, the variable, the
    /// label.
    fn pattern(&mut self) -> Result<(bool, String, String), QueryError> {
        self.expect_sym(Sym::LParen)?;
        if self.sym(Sym::RParen) {
            self.sym(Sym::Lt);
            self.expect_sym(Sym::Minus)?;
            self.expect_sym(Sym::LBracket)?;
            let var = self.name()?;
            self.expect_sym(Sym::Colon)?;
            let label = self.name()?;
            self.expect_sym(Sym::RBracket)?;
            self.expect_sym(Sym::Minus)?;
            self.sym(Sym::Gt);
            self.expect_sym(Sym::LParen)?;
            self.expect_sym(Sym::RParen)?;
            return Ok((true, var, label));
        }
        let var = self.name()?;
        self.expect_sym(Sym::Colon)?;
        let label = self.name()?;
        self.expect_sym(Sym::RParen)?;
        Ok((false, var, label))
    }

    fn options(&mut self) -> Result<Vec<(String, OptionValue)>, QueryError> {
        self.expect_sym(Sym::LBrace)?;
        let mut out = Vec::new();
        if self.sym(Sym::RBrace) {
            return Ok(out);
        }
        loop {
            let key = self.name()?;
            self.expect_sym(Sym::Colon)?;
            out.push((key, self.option_value()?));
            if self.sym(Sym::RBrace) {
                return Ok(out);
            }
            self.expect_sym(Sym::Comma)?;
        }
    }

    fn option_value(&mut self) -> Result<OptionValue, QueryError> {
        let negative = self.sym(Sym::Minus);
        let t = self.peek().clone();
        let v = match t.tok {
            Tok::Int(s) => {
                let n: i64 = s.parse().map_err(|_| self.error("a whole number"))?;
                OptionValue::Int(if negative { -n } else { n })
            }
            Tok::Float(f) => OptionValue::Float(if negative { -f } else { f }),
            Tok::Str(s) if !negative => OptionValue::Str(s),
            Tok::Ident(s) if !negative && (s.eq_ignore_ascii_case("true") || s.eq_ignore_ascii_case("false")) => {
                OptionValue::Bool(s.eq_ignore_ascii_case("true"))
            }
            Tok::Sym(Sym::LBrace) if !negative => return Ok(OptionValue::Map(self.options()?)),
            Tok::Sym(Sym::LBracket) if !negative => {
                self.at += 1;
                let mut items = Vec::new();
                if !self.sym(Sym::RBracket) {
                    loop {
                        match &self.peek().tok {
                            Tok::Str(s) => items.push(s.clone()),
                            _ => return Err(self.error("a string")),
                        }
                        self.at += 1;
                        if self.sym(Sym::RBracket) {
                            break;
                        }
                        self.expect_sym(Sym::Comma)?;
                    }
                }
                return Ok(OptionValue::List(items));
            }
            _ => return Err(self.error("a number, a string, a boolean, a list of strings or a map")),
        };
        self.at += 1;
        Ok(v)
    }

    /// `CALL db.idx.fulltext.createNodeIndex(label | {label: …, stopwords: […]}, 'p', …)` and
    /// `CALL db.idx.fulltext.drop(label)`; `None` for any other procedure.
    fn fulltext_procedure(&mut self) -> Option<Result<Ddl, QueryError>> {
        self.at = 1;
        let mut parts = Vec::new();
        loop {
            match &self.peek().tok {
                Tok::Ident(s) => parts.push(s.to_ascii_lowercase()),
                _ => return None,
            }
            self.at += 1;
            if !self.sym(Sym::Dot) {
                break;
            }
        }
        let name = parts.join(".");
        if name != "db.idx.fulltext.createnodeindex" && name != "db.idx.fulltext.drop" {
            return None;
        }
        Some(self.fulltext_args(name == "db.idx.fulltext.drop"))
    }

    fn fulltext_args(&mut self, drop: bool) -> Result<Ddl, QueryError> {
        self.expect_sym(Sym::LParen)?;
        let mut options = Vec::new();
        let label = match self.peek().tok.clone() {
            Tok::Str(s) => {
                self.at += 1;
                s
            }
            Tok::Sym(Sym::LBrace) if !drop => {
                options = self.options()?;
                let pos = options.iter().position(|(k, _)| k == "label");
                match pos.map(|i| options.remove(i).1) {
                    Some(OptionValue::Str(s)) => s,
                    _ => return Err(self.error("a map with `label`")),
                }
            }
            _ => return Err(self.error("the label as a string")),
        };
        let mut properties = Vec::new();
        while self.sym(Sym::Comma) {
            match &self.peek().tok {
                Tok::Str(s) => properties.push(s.clone()),
                _ => return Err(self.error("a property name as a string")),
            }
            self.at += 1;
        }
        self.expect_sym(Sym::RParen)?;
        self.end()?;
        if !drop && properties.is_empty() {
            return Err(QueryError {
                kind: ErrorType::SyntaxError,
                detail: Detail::InvalidArgumentValue,
                phase: Phase::Compile,
                message: "db.idx.fulltext.createNodeIndex takes the label, then at least one property".to_owned(),
                at: None,
            });
        }
        let index = IndexDef { name: None, kind: IndexKind::Fulltext, relationship: false, label, properties, options };
        Ok(if drop { Ddl::Drop(index) } else { Ddl::Create { index, if_not_exists: false } })
    }
}

#[cfg(test)]
mod tests {
    use super::{parse, ConstraintDef, ConstraintKind, Ddl, IndexKind, OptionValue};

    fn ok(text: &str) -> Ddl {
        match parse(text) {
            Some(Ok(d)) => d,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn the_first_word_decides_without_lexing_and_comments_still_count() {
        assert!(matches!(ok("  create index for (n:A) on (n.x)"), Ddl::Create { .. }));
        assert!(matches!(ok("/* why */ DROP INDEX FOR (n:A) ON (n.x)"), Ddl::Drop(_)));
        assert!(matches!(ok("// line\nCREATE INDEX FOR (n:A) ON (n.x)"), Ddl::Create { .. }));
        for query in ["MATCH (n) RETURN n", "CREATE (n:A)", "CALL db.labels()", "RETURN 1", "", "CREATED", "callx"] {
            assert!(!matches!(parse(query), Some(Ok(_))), "{query}");
        }
        assert!(parse("MATCH (n) RETURN n").is_none());
    }

    #[test]
    fn the_forms_clients_send() {
        let Ddl::Create { index, if_not_exists } = ok("CREATE INDEX FOR (n:Entity) ON (n.uuid, n.group_id, n.name)") else { panic!() };
        assert_eq!(
            (index.kind, index.relationship, index.label.as_str(), index.properties.len(), if_not_exists),
            (IndexKind::Range, false, "Entity", 3, false)
        );
        let Ddl::Create { index, .. } = ok("CREATE INDEX FOR ()-[e:RELATES_TO]-() ON (e.uuid)") else { panic!() };
        assert!(index.relationship && index.label == "RELATES_TO");
        let Ddl::Create { index, .. } = ok("CREATE FULLTEXT INDEX FOR ()-[e:RELATES_TO]-() ON (e.name, e.fact, e.group_id)") else {
            panic!()
        };
        assert_eq!(index.kind, IndexKind::Fulltext);
        let Ddl::Create { index, .. } =
            ok("CREATE VECTOR INDEX FOR (n:`__Entity__`) ON (n.embedding) OPTIONS {dimension: 3, similarityFunction: 'cosine'}")
        else {
            panic!()
        };
        assert_eq!(index.label, "__Entity__");
        assert_eq!(
            index.options,
            vec![("dimension".to_owned(), OptionValue::Int(3)), ("similarityFunction".to_owned(), OptionValue::Str("cosine".to_owned()))]
        );
        assert!(matches!(ok("CREATE INDEX IF NOT EXISTS FOR (n:A) ON (n.x)"), Ddl::Create { if_not_exists: true, .. }));
        assert!(matches!(ok("CREATE INDEX ON :Person(name, age)"), Ddl::Create { .. }));
        assert!(matches!(ok("DROP INDEX ON :Person(name)"), Ddl::Drop(_)));
        assert!(matches!(ok("drop fulltext index for (n:Doc) on (n.text);"), Ddl::Drop(_)));
        let Ddl::Create { index, .. } =
            ok("CALL db.idx.fulltext.createNodeIndex({label: 'Episodic', stopwords: ['a', 'the']}, 'content', 'source')")
        else {
            panic!()
        };
        assert_eq!((index.label.as_str(), index.properties.clone()), ("Episodic", vec!["content".to_owned(), "source".to_owned()]));
        assert!(matches!(ok("CALL db.idx.fulltext.drop('Episodic')"), Ddl::Drop(_)));
        // Neo4j's named indexes, their nested options, and a drop by name.
        let Ddl::Create { index, .. } =
            ok("CREATE VECTOR INDEX docs IF NOT EXISTS FOR (n:Doc) ON (n.v) OPTIONS {indexConfig: {`vector.dimensions`: 3}}")
        else {
            panic!()
        };
        assert_eq!(index.name.as_deref(), Some("docs"));
        let config = OptionValue::Map(vec![("vector.dimensions".to_owned(), OptionValue::Int(3))]);
        assert_eq!(index.options, vec![("indexConfig".to_owned(), config)]);
        assert_eq!(ok("DROP INDEX docs"), Ddl::DropNamed { name: "docs".to_owned(), if_exists: false });
        assert_eq!(ok("DROP INDEX docs IF EXISTS"), Ddl::DropNamed { name: "docs".to_owned(), if_exists: true });
    }

    #[test]
    fn constraint_statements_in_neo4js_forms() {
        let unique = |label: &str, props: &[&str], relationship: bool| ConstraintDef {
            name: None,
            kind: ConstraintKind::Unique,
            relationship,
            label: label.to_owned(),
            properties: props.iter().map(|p| (*p).to_owned()).collect(),
        };
        assert_eq!(
            ok("CREATE CONSTRAINT FOR (p:Person) REQUIRE p.email IS UNIQUE"),
            Ddl::CreateConstraint { constraint: unique("Person", &["email"], false), if_not_exists: false }
        );
        assert_eq!(
            ok("create constraint IF NOT EXISTS for (p:Person) require (p.first, p.last) is node unique;"),
            Ddl::CreateConstraint { constraint: unique("Person", &["first", "last"], false), if_not_exists: true }
        );
        assert_eq!(
            ok("CREATE CONSTRAINT ON (p:Person) ASSERT p.email IS UNIQUE"),
            Ddl::CreateConstraint { constraint: unique("Person", &["email"], false), if_not_exists: false }
        );
        assert_eq!(ok("DROP CONSTRAINT ON (p:Person) ASSERT p.email IS UNIQUE"), Ddl::DropConstraint(unique("Person", &["email"], false)));
        let Ddl::CreateConstraint { constraint, .. } = ok("CREATE CONSTRAINT rel_id FOR ()-[r:KNOWS]-() REQUIRE r.id IS REL UNIQUE") else {
            panic!()
        };
        assert_eq!(constraint, ConstraintDef { name: Some("rel_id".to_owned()), ..unique("KNOWS", &["id"], true) });
        for text in [
            "CREATE CONSTRAINT has_name FOR (p:Person) REQUIRE p.name IS NOT NULL",
            "CREATE CONSTRAINT has_name ON (p:Person) ASSERT exists(p.name)",
        ] {
            let Ddl::CreateConstraint { constraint, .. } = ok(text) else { panic!("{text}") };
            assert_eq!((constraint.kind, constraint.properties), (ConstraintKind::Mandatory, vec!["name".to_owned()]), "{text}");
        }
        let Ddl::CreateConstraint { constraint, .. } = ok("CREATE CONSTRAINT FOR (p:Person) REQUIRE (p.a, p.b) IS NODE KEY") else {
            panic!()
        };
        assert_eq!((constraint.kind, constraint.properties.len()), (ConstraintKind::Key, 2));
        assert_eq!(ok("DROP CONSTRAINT has_name IF EXISTS"), Ddl::DropConstraintNamed { name: "has_name".to_owned(), if_exists: true });
        for (q, col) in [
            ("CREATE CONSTRAINT FOR (p:Person) REQUIRE q.email IS UNIQUE", 42),
            ("CREATE CONSTRAINT FOR (p:Person) REQUIRE p.email IS NODE TYPED", 58),
        ] {
            match parse(q) {
                Some(Err(e)) => assert_eq!(e.at.map(|a| a.column), Some(col), "{q}: {e}"),
                other => panic!("{q}: {other:?}"),
            }
        }
    }

    #[test]
    fn other_queries_are_not_ddl_and_bad_ddl_names_its_place() {
        for q in
            ["MATCH (n) RETURN n", "CREATE (n:Index)", "CALL db.labels()", "CALL db.idx.fulltext.queryNodes('A', 'x')", "CREATE (index)"]
        {
            assert!(parse(q).is_none(), "{q}");
        }
        for (q, col) in [("CREATE INDEX FOR (n:A) ON (m.x)", 28), ("CREATE INDEX FOR (n:A) ON n.x", 27), ("CREATE INDEX ON :A(x) junk", 23)]
        {
            match parse(q) {
                Some(Err(e)) => assert_eq!(e.at.map(|a| a.column), Some(col), "{q}: {e}"),
                other => panic!("{q}: {other:?}"),
            }
        }
    }
}
