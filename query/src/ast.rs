//! The syntax tree. Every node that an error can point at carries its span.

use crate::error::Span;

/// A whole statement: an optional `EXPLAIN`/`PROFILE`, an optional temporal prefix, and the query.
#[derive(Clone, Debug, PartialEq)]
pub struct Statement {
    /// Plain, `EXPLAIN` or `PROFILE`.
    pub mode: Mode,
    /// Which version of the graph the query reads.
    pub temporal: Temporal,
    /// The query.
    pub query: Query,
}

/// How the statement runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// Run it.
    #[default]
    Run,
    /// Print the plan; run nothing.
    Explain,
    /// Run it and print the plan with rows and time per operator.
    Profile,
}

/// engram's temporal prefix.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Temporal {
    /// What is visible now.
    #[default]
    Now,
    /// `AS OF t`: valid at `t`.
    AsOf(Expr),
    /// `KNOWN AS OF t`: as recorded by `t` (transaction time).
    KnownAsOf(Expr),
    /// `ALL VERSIONS`: every version, deleted and superseded included.
    AllVersions,
}

/// Single queries joined by `UNION` / `UNION ALL`.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    /// The first part.
    pub first: SingleQuery,
    /// The following parts, each with `true` for `UNION ALL`.
    pub unions: Vec<(bool, SingleQuery)>,
}

/// A sequence of clauses.
#[derive(Clone, Debug, PartialEq)]
pub struct SingleQuery {
    /// The clauses in order.
    pub clauses: Vec<Clause>,
    /// Ended by `FINISH`: it returns nothing, whatever its last clause.
    pub finish: bool,
    /// The whole part.
    pub span: Span,
}

impl SingleQuery {
    /// As a part of `CALL { … }`: whether it starts with an importing `WITH` (plain variables
    /// only), the one way the outer query's variables are in scope inside.
    pub fn imports(&self) -> bool {
        matches!(self.clauses.first(), Some(Clause::With(p)) if !p.star && p.items.iter().all(|i| matches!(i.expr.kind, ExprKind::Var(_))))
    }
}

/// A clause.
#[derive(Clone, Debug, PartialEq)]
pub enum Clause {
    /// `[OPTIONAL] MATCH pattern [WHERE e]`.
    Match(Match),
    /// `UNWIND e AS x`.
    Unwind(Unwind),
    /// `LOAD CSV [WITH HEADERS] FROM e AS x [FIELDTERMINATOR c]`.
    LoadCsv(LoadCsv),
    /// `WITH …`.
    With(Projection),
    /// `RETURN …`.
    Return(Projection),
    /// `CREATE pattern`.
    Create(Create),
    /// `MERGE part [ON CREATE SET …] [ON MATCH SET …]`.
    Merge(Merge),
    /// `SET item, …`.
    Set(SetClause),
    /// `REMOVE item, …`.
    Remove(RemoveClause),
    /// `[DETACH] DELETE e, …`.
    Delete(Delete),
    /// `CALL proc(args) [YIELD …]`.
    Call(Call),
    /// `CALL { query }`: the query run once per row, its rows joined to that row.
    Subquery(Subquery),
    /// `FOREACH (x IN list | update …)`: the update clauses run once per element, per row.
    Foreach(Foreach),
}

/// `FOREACH (var IN list | clause …)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Foreach {
    /// The element variable, seen only by the clauses inside.
    pub var: Var,
    /// The list.
    pub list: Expr,
    /// The update clauses (CREATE, MERGE, SET, REMOVE, DELETE, FOREACH).
    pub clauses: Vec<Clause>,
    /// The clause.
    pub span: Span,
}

/// `CALL { [WITH imported, …] … RETURN … [UNION [ALL] …] }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Subquery {
    /// The inner query; a part that starts with `WITH` of plain variables imports them.
    pub query: Box<Query>,
    /// `CALL (a, b) { … }` / `CALL (*) { … }`: the outer variables every part sees.
    pub scope: Option<Imports>,
    /// `OPTIONAL CALL`: a row the subquery gives nothing for goes on with its columns null.
    pub optional: bool,
    /// `IN TRANSACTIONS …`: the input rows in batches, each its own transaction.
    pub in_transactions: Option<InTransactions>,
    /// The clause.
    pub span: Span,
}

/// `IN TRANSACTIONS [OF n ROWS] [ON ERROR FAIL | CONTINUE | BREAK] [REPORT STATUS AS s]` after
/// `CALL { … }`.
#[derive(Clone, Debug, PartialEq)]
pub struct InTransactions {
    /// `OF n ROWS` (1,000 when not given).
    pub rows: Option<Expr>,
    /// What a failing batch does.
    pub on_error: OnError,
    /// `REPORT STATUS AS s`: the variable each row's batch status binds.
    pub status: Option<Var>,
    /// The `IN TRANSACTIONS …` words.
    pub span: Span,
}

/// `ON ERROR …` of `IN TRANSACTIONS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// The query fails (the batches before stay committed).
    Fail,
    /// The failed batch writes nothing; the next ones run.
    Continue,
    /// The failed batch writes nothing; no more run.
    Break,
}

/// A subquery's scope clause.
#[derive(Clone, Debug, PartialEq)]
pub enum Imports {
    /// `(*)`: every outer variable.
    All,
    /// `(a, b)`: these (none for `()`).
    Vars(Vec<Var>),
}

impl Subquery {
    /// The outer variables `part` sees: `None` none, `Some(None)` all of them (a `(*)` scope, or
    /// an importing `WITH` without a scope clause), `Some(Some(vars))` those a scope clause names.
    pub fn outer_seen(&self, part: &SingleQuery) -> Option<Option<&[Var]>> {
        match &self.scope {
            Some(Imports::All) => Some(None),
            Some(Imports::Vars(v)) => Some(Some(v)),
            None if part.imports() => Some(None),
            None => None,
        }
    }
}

impl Clause {
    /// The clause's name, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Clause::Match(m) if m.optional => "OPTIONAL MATCH",
            Clause::Match(_) => "MATCH",
            Clause::Unwind(_) => "UNWIND",
            Clause::LoadCsv(_) => "LOAD CSV",
            Clause::With(_) => "WITH",
            Clause::Return(_) => "RETURN",
            Clause::Create(_) => "CREATE",
            Clause::Merge(_) => "MERGE",
            Clause::Set(_) => "SET",
            Clause::Remove(_) => "REMOVE",
            Clause::Delete(_) => "DELETE",
            Clause::Call(_) => "CALL",
            Clause::Subquery(_) => "CALL { … }",
            Clause::Foreach(_) => "FOREACH",
        }
    }

    /// Whether the clause writes.
    pub fn writes(&self) -> bool {
        match self {
            Clause::Create(_) | Clause::Merge(_) | Clause::Set(_) | Clause::Remove(_) | Clause::Delete(_) => true,
            Clause::Call(c) => crate::functions::procedure(&c.procedure.name).is_some_and(|p| p.writes),
            Clause::Subquery(s) => {
                std::iter::once(&s.query.first).chain(s.query.unions.iter().map(|(_, q)| q)).any(|q| q.clauses.iter().any(Clause::writes))
            }
            Clause::Foreach(f) => f.clauses.iter().any(Clause::writes),
            _ => false,
        }
    }
}

/// `[OPTIONAL] MATCH`.
#[derive(Clone, Debug, PartialEq)]
pub struct Match {
    /// `OPTIONAL MATCH`.
    pub optional: bool,
    /// Comma-separated pattern parts.
    pub pattern: Vec<PatternPart>,
    /// The `WHERE` predicate.
    pub predicate: Option<Expr>,
    /// The clause.
    pub span: Span,
}

/// `UNWIND e AS x`.
#[derive(Clone, Debug, PartialEq)]
pub struct Unwind {
    /// The list.
    pub expr: Expr,
    /// The variable each element binds.
    pub var: Var,
    /// The clause.
    pub span: Span,
}

/// `LOAD CSV [WITH HEADERS] FROM e AS x [FIELDTERMINATOR c]`: one row per line of a file of the
/// import folder.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadCsv {
    /// `WITH HEADERS`: the first line names the fields, and each row is a map.
    pub headers: bool,
    /// The file's URL (`file:///name.csv`, or the name).
    pub from: Expr,
    /// The variable each row binds (a list of strings, or a map with headers).
    pub var: Var,
    /// The field terminator (`,` when not given), with its span.
    pub terminator: Option<(String, Span)>,
    /// The clause.
    pub span: Span,
}

/// `CREATE`.
#[derive(Clone, Debug, PartialEq)]
pub struct Create {
    /// Comma-separated pattern parts.
    pub pattern: Vec<PatternPart>,
    /// The clause.
    pub span: Span,
}

/// `MERGE`.
#[derive(Clone, Debug, PartialEq)]
pub struct Merge {
    /// The one pattern part.
    pub part: PatternPart,
    /// `ON CREATE SET` items.
    pub on_create: Vec<SetItem>,
    /// `ON MATCH SET` items.
    pub on_match: Vec<SetItem>,
    /// The clause.
    pub span: Span,
}

/// `SET`.
#[derive(Clone, Debug, PartialEq)]
pub struct SetClause {
    /// The items.
    pub items: Vec<SetItem>,
    /// The clause.
    pub span: Span,
}

/// One `SET` item.
#[derive(Clone, Debug, PartialEq)]
pub enum SetItem {
    /// `target.key = value` (the target is any expression yielding a node, relationship or null).
    Property {
        /// The entity.
        target: Expr,
        /// The key.
        key: Name,
        /// The new value (`null` removes).
        value: Expr,
    },
    /// `n = map` (replace all properties) or `n += map` (merge).
    Properties {
        /// The variable.
        var: Var,
        /// The map (or node/relationship whose properties are copied).
        value: Expr,
        /// `+=`.
        merge: bool,
    },
    /// `n:A:B`.
    Labels {
        /// The variable.
        var: Var,
        /// The labels.
        labels: Vec<Name>,
    },
}

/// `REMOVE`.
#[derive(Clone, Debug, PartialEq)]
pub struct RemoveClause {
    /// The items.
    pub items: Vec<RemoveItem>,
    /// The clause.
    pub span: Span,
}

/// One `REMOVE` item.
#[derive(Clone, Debug, PartialEq)]
pub enum RemoveItem {
    /// `target.key`.
    Property {
        /// The entity.
        target: Expr,
        /// The key.
        key: Name,
    },
    /// `n:A:B`.
    Labels {
        /// The variable.
        var: Var,
        /// The labels.
        labels: Vec<Name>,
    },
}

/// `[DETACH] DELETE`.
#[derive(Clone, Debug, PartialEq)]
pub struct Delete {
    /// `DETACH DELETE`.
    pub detach: bool,
    /// What to delete.
    pub exprs: Vec<Expr>,
    /// The clause.
    pub span: Span,
}

/// `CALL name(args) [YIELD a [AS b], … [WHERE e]]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The dotted procedure name, as written.
    pub procedure: Name,
    /// The arguments; `None` for the implicit form without parentheses.
    pub args: Option<Vec<Expr>>,
    /// The `YIELD` items: column and the variable it binds.
    pub yields: Option<Vec<(Name, Var)>>,
    /// `YIELD *`.
    pub yield_all: bool,
    /// A `WHERE` after `YIELD`.
    pub predicate: Option<Expr>,
    /// `OPTIONAL CALL`: a row the procedure yields nothing for goes on with its columns null.
    pub optional: bool,
    /// The clause.
    pub span: Span,
}

/// `RETURN` or `WITH`.
#[derive(Clone, Debug, PartialEq)]
pub struct Projection {
    /// `DISTINCT`.
    pub distinct: bool,
    /// `*` (every variable in scope, before the items).
    pub star: bool,
    /// The items.
    pub items: Vec<ProjectionItem>,
    /// `ORDER BY`.
    pub order: Vec<SortItem>,
    /// `SKIP`.
    pub skip: Option<Expr>,
    /// `LIMIT`.
    pub limit: Option<Expr>,
    /// `WHERE` (only after `WITH`).
    pub predicate: Option<Expr>,
    /// The clause.
    pub span: Span,
}

/// One projected expression.
#[derive(Clone, Debug, PartialEq)]
pub struct ProjectionItem {
    /// The expression.
    pub expr: Expr,
    /// `AS alias`.
    pub alias: Option<Var>,
    /// The expression's text as written: the column name when there is no alias.
    pub text: String,
}

impl ProjectionItem {
    /// The column name: the alias, or the text as written.
    pub fn column(&self) -> &str {
        self.alias.as_ref().map_or(&self.text, |a| &a.name)
    }
}

/// `ORDER BY e [ASC|DESC]`.
#[derive(Clone, Debug, PartialEq)]
pub struct SortItem {
    /// The key.
    pub expr: Expr,
    /// Descending.
    pub descending: bool,
    /// `NULLS FIRST` (`Some(true)`) or `NULLS LAST` (GQL's); by default nulls sort as the
    /// largest value: last ascending, first descending.
    pub nulls_first: Option<bool>,
}

/// `[p =] (a)-[r]->(b)…`.
#[derive(Clone, Debug, PartialEq)]
pub struct PatternPart {
    /// The path variable.
    pub var: Option<Var>,
    /// `shortestPath(…)` or `allShortestPaths(…)` around the element.
    pub shortest: Option<Shortest>,
    /// The first node.
    pub start: NodePattern,
    /// Each hop: the relationship and the node it reaches.
    pub chain: Vec<(RelPattern, NodePattern)>,
    /// The part.
    pub span: Span,
}

/// `reduce(acc = init, x IN list | step)`: `step` over each element in turn, with `acc` the
/// value so far.
#[derive(Clone, Debug, PartialEq)]
pub struct Reduce {
    /// The accumulator.
    pub acc: Var,
    /// Its first value.
    pub init: Expr,
    /// The element variable.
    pub var: Var,
    /// The list.
    pub list: Expr,
    /// The next value of the accumulator.
    pub step: Expr,
}

/// Which shortest paths a `shortestPath(…)` / `allShortestPaths(…)` part matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shortest {
    /// One of the fewest-hop paths.
    One,
    /// Every fewest-hop path.
    All,
}

/// `(n:A:B {k: v})`, or with a label expression `(n:A|B)`.
#[derive(Clone, Debug, PartialEq)]
pub struct NodePattern {
    /// The variable.
    pub var: Option<Var>,
    /// Labels, all required.
    pub labels: Vec<Name>,
    /// A label expression that is more than labels all required (`:A|B`, `:!A`, `:%`); matched
    /// as well as `labels`.
    pub label_expr: Option<LabelExpr>,
    /// A property map (or a parameter, which MATCH refuses).
    pub props: Option<Expr>,
    /// The node pattern.
    pub span: Span,
}

/// A label expression (Neo4j 5's): `A`, `%` (any label), `!e`, `e & f`, `e | f`, `(e)`.
#[derive(Clone, Debug, PartialEq)]
pub enum LabelExpr {
    /// The label.
    Name(Name),
    /// `%`: at least one label.
    Any,
    /// `!e`.
    Not(Box<LabelExpr>),
    /// `e & f & …`.
    And(Vec<LabelExpr>),
    /// `e | f | …`.
    Or(Vec<LabelExpr>),
}

/// Which way a relationship pattern points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// `-->`.
    Out,
    /// `<--`.
    In,
    /// `--` (or `<-->`).
    Both,
}

/// `-[r:A|B*1..3 {k: v} WHERE …]->`.
#[derive(Clone, Debug, PartialEq)]
pub struct RelPattern {
    /// The variable.
    pub var: Option<Var>,
    /// Type alternatives (any of them).
    pub types: Vec<Name>,
    /// A type expression that is more than alternatives (`:!A`, `:A&B`, `:%`, `:(A|B)&!C`),
    /// tested on the relationship's one type; `types` is then empty.
    pub type_expr: Option<LabelExpr>,
    /// Direction.
    pub direction: Direction,
    /// Variable length: `None` for one hop, else the bounds (`*` = (None, None)).
    pub length: Option<(Option<u64>, Option<u64>)>,
    /// A property map.
    pub props: Option<Expr>,
    /// engram's inline `WHERE`, applied on every hop.
    pub predicate: Option<Expr>,
    /// A quantified group this relationship is the one relationship of:
    /// `((x:A)-[r:R]->(y:B) WHERE …){1,3}` (its quantifier is `length`).
    pub group: Option<Box<Group>>,
    /// The relationship pattern.
    pub span: Span,
}

/// The rest of a quantified path pattern (Neo4j 5, GQL) whose first relationship is the
/// `RelPattern` holding it: each repetition's nodes pass their tests, its relationships theirs,
/// and all of them together `predicate`; outside the group, their variables are the lists of
/// each repetition's.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// The node each repetition starts from (the node before the group, for the first).
    pub first: NodePattern,
    /// The node the first relationship reaches.
    pub next: NodePattern,
    /// The group's further relationships, each with the node it reaches; the last node is where
    /// each repetition ends (the node after the group, for the last).
    pub more: Vec<(RelPattern, NodePattern)>,
    /// `WHERE` inside the group's parentheses, on one repetition.
    pub predicate: Option<Expr>,
    /// The group, quantifier included.
    pub span: Span,
}

impl Group {
    /// One repetition's nodes, in order.
    pub fn nodes(&self) -> impl Iterator<Item = &NodePattern> {
        [&self.first, &self.next].into_iter().chain(self.more.iter().map(|(_, n)| n))
    }
}

/// A variable and where it is written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Var {
    /// The name.
    pub name: String,
    /// Where.
    pub span: Span,
}

/// A label, type, key or function name and where it is written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Name {
    /// As written (case kept).
    pub name: String,
    /// Where.
    pub span: Span,
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where.
    pub span: Span,
}

/// A literal value.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `NOT`.
    Not,
    /// `-`.
    Neg,
    /// `+`.
    Pos,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // Reason: each variant is the operator its name spells.
pub enum BinaryOp {
    Or,
    Xor,
    And,
    Eq,
    Neq,
    Lt,
    Gt,
    Le,
    Ge,
    Add,
    Sub,
    /// `||`: two strings or two lists, concatenated.
    Concat,
    Mul,
    Div,
    Mod,
    Pow,
    In,
    StartsWith,
    EndsWith,
    Contains,
    Regex,
}

impl BinaryOp {
    /// The operator as written.
    pub fn text(self) -> &'static str {
        match self {
            BinaryOp::Or => "OR",
            BinaryOp::Xor => "XOR",
            BinaryOp::And => "AND",
            BinaryOp::Eq => "=",
            BinaryOp::Neq => "<>",
            BinaryOp::Lt => "<",
            BinaryOp::Gt => ">",
            BinaryOp::Le => "<=",
            BinaryOp::Ge => ">=",
            BinaryOp::Add => "+",
            BinaryOp::Concat => "||",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Mod => "%",
            BinaryOp::Pow => "^",
            BinaryOp::In => "IN",
            BinaryOp::StartsWith => "STARTS WITH",
            BinaryOp::EndsWith => "ENDS WITH",
            BinaryOp::Contains => "CONTAINS",
            BinaryOp::Regex => "=~",
        }
    }
}

/// `any`, `all`, `none`, `single`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // Reason: each variant is the quantifier its name spells.
pub enum Quantifier {
    Any,
    All,
    None,
    Single,
}

/// Expression kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A literal.
    Lit(Literal),
    /// `$name`.
    Param(String),
    /// A variable.
    Var(String),
    /// `[a, b]`.
    List(Vec<Expr>),
    /// `{k: v}` (keys in written order).
    Map(Vec<(Name, Expr)>),
    /// `e.key`.
    Prop(Box<Expr>, Name),
    /// `e[i]`.
    Index(Box<Expr>, Box<Expr>),
    /// `e[a..b]`.
    Slice(Box<Expr>, Option<Box<Expr>>, Option<Box<Expr>>),
    /// `e:A:B` (a label test).
    HasLabels(Box<Expr>, Vec<Name>),
    /// `e:A|B`, `e:!A`, `e:%` (a label test with a label expression).
    HasLabelExpr(Box<Expr>, LabelExpr),
    /// A unary operator.
    Unary(UnaryOp, Box<Expr>),
    /// A binary operator.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `e IS NULL` (false) / `e IS NOT NULL` (true).
    IsNull(Box<Expr>, bool),
    /// `e IS [NOT] :: T` (`true` when `NOT`), `e :: T`.
    IsType(Box<Expr>, crate::types::TypeSpec, bool),
    /// `CASE [subject] WHEN … THEN … [ELSE …] END`.
    Case {
        /// The simple form's subject.
        subject: Option<Box<Expr>>,
        /// `WHEN` / `THEN` pairs.
        whens: Vec<(Expr, Expr)>,
        /// `ELSE`.
        otherwise: Option<Box<Expr>>,
    },
    /// `f(args)` / `f(DISTINCT args)`; `name` as written, dotted for namespaces.
    Call {
        /// The function name.
        name: Name,
        /// `DISTINCT`.
        distinct: bool,
        /// The arguments.
        args: Vec<Expr>,
    },
    /// `count(*)`.
    CountStar,
    /// `[x IN list WHERE p | e]`.
    ListComprehension {
        /// The element variable.
        var: Var,
        /// The list.
        list: Box<Expr>,
        /// The filter.
        predicate: Option<Box<Expr>>,
        /// The projection.
        map: Option<Box<Expr>>,
    },
    /// `reduce(acc = init, x IN list | e)` (boxed: a large variant would enlarge every
    /// expression, and the parser's frames with them).
    Reduce(Box<Reduce>),
    /// `any(x IN list WHERE p)` and friends.
    Quantified {
        /// Which quantifier.
        quantifier: Quantifier,
        /// The element variable.
        var: Var,
        /// The list.
        list: Box<Expr>,
        /// The predicate.
        predicate: Box<Expr>,
    },
    /// `[p = (a)-->(b) WHERE … | e]`.
    PatternComprehension {
        /// The pattern.
        pattern: Box<PatternPart>,
        /// The filter.
        predicate: Option<Box<Expr>>,
        /// The projection.
        map: Box<Expr>,
    },
    /// `EXISTS { … }`, `COUNT { … }` and `COLLECT { … }` over a query that sees the row's
    /// variables (its own stay inside): whether it gives a row, how many, the list of its one
    /// column. The query of EXISTS and COUNT may end without RETURN. (The common
    /// `EXISTS { (a)-->(b) }` is a pattern comprehension's size instead.)
    Subquery {
        /// Which of the three.
        kind: SubqueryKind,
        /// The query.
        query: Box<SingleQuery>,
    },
    /// A pattern used as a predicate: `(a)-->(:B)`.
    Pattern(Box<PatternPart>),
    /// `n {.a, b: e, .*}`.
    MapProjection {
        /// The variable projected.
        var: Var,
        /// The items.
        items: Vec<MapProjectionItem>,
    },
}

/// Which subquery expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubqueryKind {
    /// `EXISTS { … }`: a boolean.
    Exists,
    /// `COUNT { … }`: the number of rows.
    Count,
    /// `COLLECT { … }`: its one column's values, as a list.
    Collect,
}

impl SubqueryKind {
    /// The keyword, for messages.
    pub fn keyword(self) -> &'static str {
        match self {
            SubqueryKind::Exists => "EXISTS",
            SubqueryKind::Count => "COUNT",
            SubqueryKind::Collect => "COLLECT",
        }
    }
}

/// One item of a map projection.
#[derive(Clone, Debug, PartialEq)]
pub enum MapProjectionItem {
    /// `.key`.
    Property(Name),
    /// `key: e`.
    Literal(Name, Expr),
    /// `v` (a variable, keyed by its name).
    Variable(Var),
    /// `.*`.
    All,
}

impl Expr {
    /// An expression at `span`.
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }

    /// Calls `f` on each direct sub-expression (not into patterns' own property maps).
    pub fn for_each_child<'a>(&'a self, mut f: impl FnMut(&'a Expr)) {
        match &self.kind {
            // A subquery's expressions are its own clauses', in their own scope.
            ExprKind::Lit(_)
            | ExprKind::Param(_)
            | ExprKind::Var(_)
            | ExprKind::CountStar
            | ExprKind::Pattern(_)
            | ExprKind::Subquery { .. } => {}
            ExprKind::List(items) => items.iter().for_each(f),
            ExprKind::Map(items) => items.iter().for_each(|(_, e)| f(e)),
            ExprKind::Prop(e, _)
            | ExprKind::HasLabels(e, _)
            | ExprKind::HasLabelExpr(e, _)
            | ExprKind::Unary(_, e)
            | ExprKind::IsNull(e, _)
            | ExprKind::IsType(e, _, _) => f(e),
            ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
                f(a);
                f(b);
            }
            ExprKind::Slice(e, a, b) => {
                f(e);
                if let Some(a) = a {
                    f(a);
                }
                if let Some(b) = b {
                    f(b);
                }
            }
            ExprKind::Case { subject, whens, otherwise } => {
                if let Some(s) = subject {
                    f(s);
                }
                for (w, t) in whens {
                    f(w);
                    f(t);
                }
                if let Some(o) = otherwise {
                    f(o);
                }
            }
            ExprKind::Call { args, .. } => args.iter().for_each(f),
            ExprKind::ListComprehension { list, predicate, map, .. } => {
                f(list);
                if let Some(p) = predicate {
                    f(p);
                }
                if let Some(m) = map {
                    f(m);
                }
            }
            ExprKind::Quantified { list, predicate, .. } => {
                f(list);
                f(predicate);
            }
            ExprKind::Reduce(r) => {
                f(&r.init);
                f(&r.list);
                f(&r.step);
            }
            ExprKind::PatternComprehension { predicate, map, .. } => {
                if let Some(p) = predicate {
                    f(p);
                }
                f(map);
            }
            ExprKind::MapProjection { items, .. } => {
                for item in items {
                    if let MapProjectionItem::Literal(_, e) = item {
                        f(e);
                    }
                }
            }
        }
    }
}
