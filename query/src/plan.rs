//! The logical plan: operators over rows of slots, and expressions with variables resolved to
//! slots. Built once per query text (and cached by the engine); names of labels, types and keys
//! stay names and are bound to a snapshot's ids when the plan runs, so a cached plan is never
//! stale. `render` is the stable text EXPLAIN and PROFILE print.

use std::fmt::{self, Write as _};
use std::sync::Arc;

use crate::ast::{BinaryOp, Direction, Quantifier, Shortest};

/// A literal constant. Strings are shared so the executor turns one into a value without copying.
#[derive(Clone, Debug, PartialEq)]
pub enum Const {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A 64-bit integer.
    Int(i64),
    /// A 64-bit float.
    Float(f64),
    /// A string, escapes resolved.
    Str(Arc<str>),
}

/// A compiled expression.
#[derive(Clone, Debug)]
pub enum CExpr {
    /// A literal.
    Const(Const),
    /// `$name`.
    Param(Arc<str>),
    /// The value in a row's slot.
    Slot(usize),
    /// A variable of a list comprehension or quantifier, by depth.
    Local(usize),
    /// `[a, b]`.
    List(Vec<CExpr>),
    /// `{k: v}`.
    Map(Vec<(Arc<str>, CExpr)>),
    /// `e.key`.
    Prop(Box<CExpr>, Arc<str>),
    /// `e[i]`.
    Index(Box<CExpr>, Box<CExpr>),
    /// `e[from..to]`.
    Slice(Box<CExpr>, Option<Box<CExpr>>, Option<Box<CExpr>>),
    /// `e:A:B`.
    HasLabels(Box<CExpr>, Vec<Arc<str>>),
    /// `e:A|B`, `e:!A`, `e:%`.
    HasLabelExpr(Box<CExpr>, Labels),
    /// `NOT e`.
    Not(Box<CExpr>),
    /// `-e`.
    Neg(Box<CExpr>),
    /// A binary operator.
    Bin(BinaryOp, Box<CExpr>, Box<CExpr>),
    /// `e IS NULL` (`true`) or `e IS NOT NULL` (`false`).
    IsNull(Box<CExpr>, bool),
    /// `e IS [NOT] :: T` (`true` when `NOT`).
    IsType(Box<CExpr>, crate::types::TypeSpec, bool),
    /// `CASE [subject] WHEN … THEN … [ELSE …] END`.
    Case {
        /// The simple form's subject.
        subject: Option<Box<CExpr>>,
        /// (condition or value, result) in order.
        whens: Vec<(CExpr, CExpr)>,
        /// The ELSE branch.
        otherwise: Option<Box<CExpr>>,
    },
    /// A function call by its lowercase name.
    Func(Arc<str>, Vec<CExpr>),
    /// `[x IN list WHERE p | map]`; `x` is the next local.
    ListComp {
        /// The list iterated.
        list: Box<CExpr>,
        /// The WHERE.
        predicate: Option<Box<CExpr>>,
        /// The `| map`.
        map: Option<Box<CExpr>>,
    },
    /// `reduce(acc = init, x IN list | step)`; `acc` is the next local, `x` the one after.
    Reduce {
        /// The accumulator's first value.
        init: Box<CExpr>,
        /// The list iterated.
        list: Box<CExpr>,
        /// The accumulator's next value.
        step: Box<CExpr>,
    },
    /// `all/any/none/single(x IN list WHERE p)`.
    Quant {
        /// Which quantifier.
        quantifier: Quantifier,
        /// The list iterated.
        list: Box<CExpr>,
        /// The predicate, with `x` as the next local.
        predicate: Box<CExpr>,
    },
    /// A pattern as a value: runs `ops` on the current row; `map` gives each match's value
    /// (a pattern comprehension), or, with no `map`, the paths matched.
    Pattern {
        /// The pattern's operators.
        ops: Arc<Vec<Op>>,
        /// A pattern comprehension's projection.
        map: Option<Box<CExpr>>,
        /// The slot the matched path is bound to.
        path: usize,
    },
    /// `base {.key, k: v, .*}`.
    MapProjection {
        /// The node, relationship or map projected.
        base: Box<CExpr>,
        /// `.*`: all of the base's properties.
        all: bool,
        /// The items: `.key` is `(key, base.key)`.
        items: Vec<(Arc<str>, CExpr)>,
    },
}

/// An aggregate function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggFn {
    /// `count(*)`: rows.
    CountStar,
    /// `count(e)`: non-null values.
    Count,
    /// `collect(e)`.
    Collect,
    /// `sum(e)`.
    Sum,
    /// `avg(e)`.
    Avg,
    /// `min(e)`.
    Min,
    /// `max(e)`.
    Max,
    /// `stDev(e)`: sample standard deviation.
    StDev,
    /// `stDevP(e)`: population standard deviation.
    StDevP,
    /// `percentileCont(e, p)`: the `p` percentile, interpolated between the two nearest values.
    /// Its argument is the list `[e, p]`.
    PercentileCont,
    /// `percentileDisc(e, p)`: the `p` percentile, the nearest value itself. Its argument is
    /// the list `[e, p]`.
    PercentileDisc,
}

/// One aggregate of an aggregation: the function, DISTINCT, its argument and its slot.
#[derive(Clone, Debug)]
pub struct Aggregate {
    /// The function.
    pub func: AggFn,
    /// `DISTINCT`: each distinct value once.
    pub distinct: bool,
    /// The argument (none for `count(*)`).
    pub arg: Option<CExpr>,
    /// Where the result goes.
    pub slot: usize,
}

/// What a node pattern requires.
#[derive(Clone, Debug, Default)]
pub struct NodeTest {
    /// Labels, all required.
    pub labels: Vec<Arc<str>>,
    /// A label expression the node must match as well (`(n:A|B)`).
    pub label_expr: Option<Labels>,
    /// Properties, each required equal.
    pub props: Vec<(Arc<str>, CExpr)>,
}

/// A label expression, planned: what a node's labels must satisfy.
#[derive(Clone, Debug, PartialEq)]
pub enum Labels {
    /// The label.
    Name(Arc<str>),
    /// At least one label.
    Any,
    /// Not the inner expression.
    Not(Box<Labels>),
    /// All of them.
    And(Vec<Labels>),
    /// One of them.
    Or(Vec<Labels>),
}

impl fmt::Display for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let join = |f: &mut fmt::Formatter<'_>, items: &[Labels], sep: &str| -> fmt::Result {
            for (i, e) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(sep)?;
                }
                match e {
                    Labels::And(_) | Labels::Or(_) => write!(f, "({e})")?,
                    _ => write!(f, "{e}")?,
                }
            }
            Ok(())
        };
        match self {
            Labels::Name(l) => f.write_str(l),
            Labels::Any => f.write_str("%"),
            Labels::Not(e) if matches!(**e, Labels::And(_) | Labels::Or(_)) => write!(f, "!({e})"),
            Labels::Not(e) => write!(f, "!{e}"),
            Labels::And(items) => join(f, items, "&"),
            Labels::Or(items) => join(f, items, "|"),
        }
    }
}

impl Labels {
    /// Whether a node whose labels `has` answers passes.
    pub fn matches(&self, has: &dyn Fn(&str) -> bool, any: &dyn Fn() -> bool) -> bool {
        match self {
            Labels::Name(l) => has(l),
            Labels::Any => any(),
            Labels::Not(e) => !e.matches(has, any),
            Labels::And(items) => items.iter().all(|e| e.matches(has, any)),
            Labels::Or(items) => items.iter().any(|e| e.matches(has, any)),
        }
    }

    /// From the parsed expression.
    pub fn of(e: &crate::ast::LabelExpr) -> Labels {
        use crate::ast::LabelExpr as L;
        match e {
            L::Name(n) => Labels::Name(Arc::from(n.name.as_str())),
            L::Any => Labels::Any,
            L::Not(e) => Labels::Not(Box::new(Labels::of(e))),
            L::And(items) => Labels::And(items.iter().map(Labels::of).collect()),
            L::Or(items) => Labels::Or(items.iter().map(Labels::of).collect()),
        }
    }
}

/// The relationship keys that read a claim's memory fields rather than stored properties.
pub const REL_FIELDS: [&str; 7] = ["id", "text", "confidence", "state", "valid_from", "valid_until", "recorded_at"];

impl Hop {
    /// Whether the hop's relationship can be looked up in the engine's property index: an
    /// equality on a stored property with a parameter, a constant or a bound variable.
    pub fn looks_up(&self) -> bool {
        self.rel_props.iter().any(|(k, e)| !REL_FIELDS.contains(&&**k) && matches!(e, CExpr::Param(_) | CExpr::Slot(_) | CExpr::Const(_)))
    }
}

/// The node keys that read an entity's memory fields rather than stored properties, where
/// nothing else was written under them (so no property index answers for them).
pub const NODE_FIELDS: [&str; 4] = ["id", "name", "aliases", "created_at"];

/// Whether the engine can look up nodes by an equality on `key`: a stored property, or the
/// name (its own index); not `id` (a seek of its own), `aliases` or `created_at`.
pub fn node_key_indexed(key: &str) -> bool {
    key == "name" || !NODE_FIELDS.contains(&key)
}

impl NodeTest {
    /// How a plan shows it: `:A:B {k}`, a label expression after the labels.
    fn text(&self) -> String {
        let mut s = String::new();
        for l in &self.labels {
            let _ = write!(s, ":{l}");
        }
        if let Some(e) = &self.label_expr {
            let _ = write!(s, ":{e}");
        }
        if !self.props.is_empty() {
            let keys: Vec<&str> = self.props.iter().map(|(k, _)| k.as_ref()).collect();
            let _ = write!(s, " {{{}}}", keys.join(", "));
        }
        s
    }

    /// Whether a scan with this test is a lookup in the engine's property index: an equality on
    /// a stored property or the name (`node_key_indexed`) with a parameter, a constant or a bound
    /// variable, none of which can fail to evaluate.
    pub fn looks_up(&self) -> bool {
        self.props.iter().any(|(k, e)| node_key_indexed(k) && matches!(e, CExpr::Param(_) | CExpr::Slot(_) | CExpr::Const(_)))
    }

    /// No label, no label expression and no property: every node passes.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.label_expr.is_none() && self.props.is_empty()
    }
}

/// One hop of a pattern.
#[derive(Clone, Debug)]
pub struct Hop {
    /// The bound node the hop starts from.
    pub from: usize,
    /// The relationship's slot (a list of relationships for a variable length).
    pub rel: usize,
    /// The node reached.
    pub to: usize,
    /// `to` was bound before this hop: check it instead of binding it.
    pub to_bound: bool,
    /// Seen from `from`.
    pub direction: Direction,
    /// Type alternatives (any of them; none: any type, unless `type_expr`).
    pub types: Vec<Arc<str>>,
    /// A type expression (`:!A`, `:A&B`) the relationship's type must pass; `types` is empty.
    pub type_expr: Option<Labels>,
    /// `Some((min, max))` for a variable length.
    pub length: Option<(u64, Option<u64>)>,
    /// The relationship's property map, each required equal.
    pub rel_props: Vec<(Arc<str>, CExpr)>,
    /// engram's inline WHERE, evaluated with the hop's relationship in `rel`.
    pub rel_predicate: Option<CExpr>,
    /// What the node reached must pass.
    pub to_test: NodeTest,
    /// Relationship slots bound earlier in the same MATCH: a relationship is used once per match.
    pub distinct_from: Vec<usize>,
    /// Only the distinct end nodes are used (the paths are not): walk breadth first, one row per
    /// node reached, instead of one per trail. The planner sets it only where the two agree.
    pub reach: bool,
    /// With `reach`: the MATCH excludes the start node itself (`WHERE b <> a`, absorbed here).
    pub exclude_start: bool,
    /// `shortestPath` / `allShortestPaths`: between `from` and the bound `to`, only the paths
    /// of fewest hops (breadth first), one or all of them.
    pub shortest: Option<Shortest>,
    /// A quantified group's tests on each repetition (the hop has a length then).
    pub group: Option<Box<GroupHop>>,
}

/// A quantified group `((x:A)-[r]->(y:B)-[s]->(z) WHERE …){m,n}` walked as a variable-length
/// hop whose steps go round the group's relationships (the hop's own first, then `steps`): each
/// step's relationship and the node it reaches pass their tests, each repetition's first node
/// its own, and a completed repetition the group's predicate, with one repetition's elements in
/// their slots.
#[derive(Clone, Debug)]
pub struct GroupHop {
    /// One repetition's nodes, in the pattern's order (one more than its relationships).
    pub nodes: Vec<GroupNode>,
    /// Where the first relationship (the hop's) is put while the tests run: the hop's `rel` for
    /// a group of one relationship, whose list is then the hop's.
    pub rel_slot: usize,
    /// The slot of the list of each repetition's first relationship, for a group of more than
    /// one with a variable there (the hop's `rel` lists all the walk's).
    pub rel_list: Option<usize>,
    /// The group's relationships after the first.
    pub steps: Vec<GroupStep>,
    /// The group's WHERE.
    pub predicate: Option<CExpr>,
    /// The walk goes from the group's last node to its first (the pattern is matched leftwards;
    /// only a group of one relationship is).
    pub backward: bool,
}

/// A node of a quantified group.
#[derive(Clone, Debug)]
pub struct GroupNode {
    /// Where it is put while the tests run.
    pub slot: usize,
    /// What it must pass.
    pub test: NodeTest,
    /// The slot of the list of it in each repetition, where it has a variable.
    pub list: Option<usize>,
}

/// A quantified group's relationship after its first, and what it must pass.
#[derive(Clone, Debug)]
pub struct GroupStep {
    /// Seen from the node before it.
    pub direction: Direction,
    /// Type alternatives (none: any type, unless `type_expr`).
    pub types: Vec<Arc<str>>,
    /// A type expression.
    pub type_expr: Option<Labels>,
    /// Its property map, each required equal.
    pub rel_props: Vec<(Arc<str>, CExpr)>,
    /// Its inline WHERE.
    pub rel_predicate: Option<CExpr>,
    /// Where it is put while the tests run.
    pub slot: usize,
    /// The slot of the list of it in each repetition, where it has a variable.
    pub list: Option<usize>,
}

impl GroupHop {
    /// How many relationships one repetition has.
    pub fn rels(&self) -> usize {
        self.steps.len() + 1
    }
}

impl Hop {
    /// The hop as a pattern, for EXPLAIN: `(a)-[r:T*1..3]->(b:L)`, a group as `((:A)-[r:T]->())`.
    pub fn text(&self, slots: &dyn Fn(usize) -> String) -> String {
        let (h, test) = (self, NodeTest::text);
        let types = types_text(&h.types, h.type_expr.as_ref());
        let (l, r) = arrows(h.direction);
        match (&h.group, h.length) {
            (Some(g), Some((min, max))) => {
                let mut inner = String::new();
                for (step, node) in g.steps.iter().zip(g.nodes.iter().skip(2)) {
                    let (l, r) = arrows(step.direction);
                    let types = types_text(&step.types, step.type_expr.as_ref());
                    // Writing to a String cannot fail.
                    let _ = write!(inner, "{l}[{}{types}]{r}({})", slots(step.slot), test(&node.test));
                }
                let (first, next) = (test(&g.nodes[0].test), test(&g.nodes[1].test));
                let (first, next) = if g.backward { (next, first) } else { (first, next) };
                let w = if g.predicate.is_some() { " WHERE …" } else { "" };
                let max = max.map_or(String::new(), |m| m.to_string());
                format!(
                    "({}) (({first}){l}[{}{types}]{r}({next}){inner}{w}){{{min},{max}}} ({}{})",
                    slots(h.from),
                    slots(g.rel_slot),
                    slots(h.to),
                    test(&h.to_test)
                )
            }
            _ => {
                let len = match h.length {
                    Some((min, Some(max))) => format!("*{min}..{max}"),
                    Some((min, None)) => format!("*{min}.."),
                    None => String::new(),
                };
                format!("({}){l}[{}{types}{len}]{r}({}{})", slots(h.from), slots(h.rel), slots(h.to), test(&h.to_test))
            }
        }
    }
}

/// Types as a pattern writes them: `:A|B`, `:!A`, or nothing for any type.
fn types_text(types: &[Arc<str>], expr: Option<&Labels>) -> String {
    match expr {
        Some(e) => format!(":{e}"),
        None if types.is_empty() => String::new(),
        None => format!(":{}", types.join("|")),
    }
}

/// A relationship pattern's two ends seen from the node before it: `-`/`->`, `<-`/`-`, `-`/`-`.
fn arrows(d: Direction) -> (&'static str, &'static str) {
    match d {
        Direction::Out => ("-", "->"),
        Direction::In => ("<-", "-"),
        Direction::Both => ("-", "-"),
    }
}

/// How a path variable is put together: its start node and hops.
#[derive(Clone, Debug)]
pub struct PathSpec {
    /// Where the path goes.
    pub slot: usize,
    /// The start node's slot.
    pub start: usize,
    /// (relationship slot, is variable length) per hop, in pattern order.
    pub hops: Vec<(usize, bool)>,
    /// Every node's slot, in pattern order.
    pub nodes: Vec<usize>,
}

/// A sort key.
#[derive(Clone, Debug)]
pub struct SortKey {
    /// The value sorted by.
    pub expr: CExpr,
    /// `DESC`.
    pub descending: bool,
    /// Nulls before every other value (`NULLS FIRST`, or `DESC` without `NULLS LAST`).
    pub nulls_first: bool,
}

/// The order a seek reads its nodes in (`Op::SeekNodesByRange`'s `order`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadOrder {
    /// Smallest value first.
    Ascending,
    /// Largest value first.
    Descending,
}

/// A procedure call.
#[derive(Clone, Debug)]
pub struct ProcCall {
    /// The procedure's name as the catalog of procedures spells it.
    pub name: &'static str,
    /// Its arguments.
    pub args: Vec<CExpr>,
    /// (column index in the procedure's yields, slot).
    pub yields: Vec<(usize, usize)>,
}

/// A relationship's property as a filter requires it, for `Op::SeekRels`.
#[derive(Clone, Debug)]
pub enum RelLookup {
    /// `r.key IN list`.
    In(Arc<str>, CExpr),
    /// `r.key` between bounds (`>`, `>=`, `<`, `<=`; each compared again by the filter).
    Range {
        /// The property.
        key: Arc<str>,
        /// The lower bound, if any.
        lower: Option<CExpr>,
        /// The upper bound, if any.
        upper: Option<CExpr>,
    },
}

/// An operator: turns a batch of rows into the next.
#[derive(Clone, Debug)]
pub enum Op {
    /// For each row, every node passing `test` into `slot`.
    ScanNodes {
        /// The node's slot.
        slot: usize,
        /// What it must pass.
        test: NodeTest,
    },
    /// For each row, the node whose external id is `id` (when it passes `test`).
    SeekNode {
        /// The node's slot.
        slot: usize,
        /// The external id sought.
        id: CExpr,
        /// What it must pass besides.
        test: NodeTest,
    },
    /// For each row, the node whose internal id (`id(n)`) equals `id`, or, with `many`, each
    /// node whose internal id is in the list `id` (ascending, once each; every node when `id` is
    /// no list, for the filter after it to refuse), when it passes `test`: what
    /// `WHERE id(n) = …` and `WHERE id(n) IN …` ask, without a scan.
    SeekNodeByIdentity {
        /// The node's slot.
        slot: usize,
        /// The id, or the list of ids (`many`).
        id: CExpr,
        /// `IN` a list rather than `=`.
        many: bool,
        /// What it must pass besides.
        test: NodeTest,
    },
    /// For each row, each node whose property `key` equals an element of the list `values`
    /// (once each, ascending) and passes `test`: what `WHERE n.k IN $list` asks, from the
    /// engine's property index instead of a scan. The `IN` stays as a filter after it, so the
    /// nodes given are candidates a scan would test (every node carrying `test`'s labels where
    /// the index cannot answer, as when `values` is no list, for that filter to refuse).
    SeekNodesByProperty {
        /// The node's slot.
        slot: usize,
        /// The property.
        key: Arc<str>,
        /// The list of wanted values.
        values: CExpr,
        /// What it must pass besides.
        test: NodeTest,
    },
    /// For each row, each node whose property `key` may lie between `lower` and `upper` (once
    /// each, ascending) and passes `test`: what `WHERE n.k > $a AND n.k <= $b` asks, from the
    /// order the engine's property index keeps instead of a scan. The comparisons stay as a
    /// filter after it, which decides (the nodes given are candidates: every node carrying
    /// `test`'s labels where the index cannot answer).
    SeekNodesByRange {
        /// The node's slot.
        slot: usize,
        /// The property.
        key: Arc<str>,
        /// The lower bound, if any.
        lower: Option<CExpr>,
        /// The upper bound, if any.
        upper: Option<CExpr>,
        /// What it must pass besides.
        test: NodeTest,
        /// Set by the engine's physical step when the rows go to an `ORDER BY` of the same
        /// property with a `LIMIT` through operators that keep each row's value of it: the nodes
        /// are read in the index's order, a stretch at a time, until the limit is met.
        order: Option<ReadOrder>,
        /// The lookup the planner chose (`SeekNodesByProperty`), which the physical step
        /// replaced by this read in order: run instead where it gives fewer candidates than the
        /// read in order has taken so far.
        instead: Option<Box<Op>>,
    },
    /// Keeps the rows whose node in `slot` passes `test` (a bound variable in a pattern).
    CheckNode {
        /// The node's slot.
        slot: usize,
        /// What it must pass.
        test: NodeTest,
    },
    /// For each row, one row per match of the hop.
    Expand(Box<Hop>),
    /// `ScanNodes { slot, test }` then `Expand(hop)` from it, found from the relationship: the
    /// relationships the engine's property index gives for one of the hop's properties (or, by
    /// `lookup`, for what a filter after it requires of the relationship's property), each from
    /// an end node that passes `test`, then the hop's own tests as `Expand` makes them. Made
    /// only by the engine's physical step, never by the planner.
    SeekRels {
        /// The start node's slot.
        slot: usize,
        /// What the start node must pass.
        test: NodeTest,
        /// The hop (one relationship, from `slot`).
        hop: Box<Hop>,
        /// What the filter after it looks up, when no equality of the hop is.
        lookup: Option<RelLookup>,
    },
    /// An expand whose rows only a keyless `count` reads: counts the matches per input row and
    /// yields one row with the sum in `slot` (Expand + Aggregate fused).
    CountExpand {
        /// The hop counted.
        hop: Box<Hop>,
        /// Where the count goes.
        slot: usize,
    },
    /// Puts a path variable together from its slots.
    BindPath(PathSpec),
    /// Keeps the rows where the predicate is true.
    Filter(CExpr),
    /// For each row, runs the update `ops` once per element of `list` (in `slot`); the rows go on
    /// unchanged.
    Foreach {
        /// The list.
        list: CExpr,
        /// The element's slot.
        slot: usize,
        /// The updates.
        ops: Vec<Op>,
    },
    /// For each row, runs `ops`; a row with no match continues with `slots` null.
    Optional {
        /// The optional match's operators.
        ops: Vec<Op>,
        /// The slots it binds.
        slots: Vec<usize>,
    },
    /// For each row, runs each branch (`CALL { … }`'s parts, each ending by projecting into
    /// `columns`) and keeps every row they give (`distinct`: per input row, once each); a row
    /// they give none is dropped. No columns: a unit subquery (one part that writes and returns
    /// nothing), which passes each row on once.
    Subquery {
        /// One operator list per part (UNION).
        branches: Vec<Vec<Op>>,
        /// Plain UNION: repeated rows of one input row are kept once.
        distinct: bool,
        /// The slots the subquery returns into.
        columns: Vec<usize>,
    },
    /// Computes each (slot, expression).
    Project(Vec<(usize, CExpr)>),
    /// Groups by `keys` and computes `aggregates` per group.
    Aggregate {
        /// The grouping keys: (slot, expression).
        keys: Vec<(usize, CExpr)>,
        /// The aggregates.
        aggregates: Vec<Aggregate>,
    },
    /// Keeps the first row of each distinct combination of the slots.
    Distinct(Vec<usize>),
    /// Sorts by the keys in order.
    Sort(Vec<SortKey>),
    /// Drops the first n rows.
    Skip(CExpr),
    /// Keeps the first n rows.
    Limit(CExpr),
    /// One row per element of the list.
    Unwind {
        /// The list.
        expr: CExpr,
        /// Where each element goes.
        slot: usize,
    },
    /// One row per line of a file of the import folder: a list of strings, or with `headers` a
    /// map from the first line's names (`LOAD CSV`).
    LoadCsv {
        /// The file's URL.
        from: CExpr,
        /// Where each line goes.
        slot: usize,
        /// `WITH HEADERS`.
        headers: bool,
        /// The field terminator.
        delimiter: u8,
        /// Where each row's line number goes (`linenumber()`).
        line_slot: usize,
        /// Where its file's path goes (`file()`).
        file_slot: usize,
    },
    /// `CALL { … } IN TRANSACTIONS`: the subquery over the input rows in batches, each batch its
    /// own transaction (the engine runs it at the top of a query; a read runs `sub` as is).
    InTransactions {
        /// The subquery (`Op::Subquery`).
        sub: Box<Op>,
        /// Rows per batch (`OF n ROWS`).
        rows: Option<CExpr>,
        /// What a failing batch does.
        on_error: crate::ast::OnError,
        /// `REPORT STATUS AS s`: the slot each row's batch status goes to.
        status: Option<usize>,
    },
    /// A procedure call, one row per row it yields.
    Call(ProcCall),
    /// For each row, creates the pattern's new elements (the writes below run in a write
    /// transaction only).
    Create(NewPattern),
    /// For each row, the pattern's matches (then `on_match`), or else the pattern created (then
    /// `on_create`).
    Merge(Box<MergePlan>),
    /// For each row, the items in order (`SET` and `REMOVE`).
    Set(Vec<SetItem>),
    /// For each row, deletes what the expressions give (`DETACH`: with their relationships).
    Delete {
        /// The nodes, relationships or paths to delete.
        exprs: Vec<CExpr>,
        /// `DETACH DELETE`.
        detach: bool,
    },
}

/// A node CREATE or MERGE writes into `slot`; `create` is false for a variable bound before.
#[derive(Clone, Debug)]
pub struct NewNode {
    /// The node's slot.
    pub slot: usize,
    /// A new node (not one bound earlier).
    pub create: bool,
    /// Its labels.
    pub labels: Vec<Arc<str>>,
    /// Its property map.
    pub props: Option<CExpr>,
}

/// A relationship CREATE or MERGE writes: from the node in `from` to the node in `to`.
#[derive(Clone, Debug)]
pub struct NewRel {
    /// The relationship's slot.
    pub slot: usize,
    /// Its one type.
    pub rel_type: Arc<str>,
    /// The start node's slot.
    pub from: usize,
    /// The end node's slot.
    pub to: usize,
    /// Its property map.
    pub props: Option<CExpr>,
}

/// What one CREATE (or a MERGE's creation) writes, in pattern order, and the paths it binds.
#[derive(Clone, Debug, Default)]
pub struct NewPattern {
    /// The nodes, in pattern order.
    pub nodes: Vec<NewNode>,
    /// The relationships, in pattern order.
    pub rels: Vec<NewRel>,
    /// The path variables bound.
    pub paths: Vec<PathSpec>,
}

/// A MERGE: the match of its pattern, what it creates when there is none, and its SET items.
#[derive(Clone, Debug)]
pub struct MergePlan {
    /// Operators matching the pattern.
    pub matching: Vec<Op>,
    /// What is created when nothing matches.
    pub create: NewPattern,
    /// `ON MATCH SET`.
    pub on_match: Vec<SetItem>,
    /// `ON CREATE SET`.
    pub on_create: Vec<SetItem>,
}

/// One SET or REMOVE item.
#[derive(Clone, Debug)]
pub enum SetItem {
    /// `target.key = value` (`REMOVE target.key`: value null).
    Prop {
        /// The node, relationship or map.
        target: CExpr,
        /// The key.
        key: Arc<str>,
        /// The value (null removes).
        value: CExpr,
    },
    /// `target = map` (`replace`) or `target += map`.
    Props {
        /// The node or relationship.
        target: CExpr,
        /// The map (or a node or relationship whose properties are copied).
        value: CExpr,
        /// `=`: properties not in the map are removed.
        replace: bool,
    },
    /// `target:A:B` added or (`REMOVE`) removed.
    Labels {
        /// The node.
        target: CExpr,
        /// The labels.
        labels: Vec<Arc<str>>,
        /// Added (`SET`) or removed (`REMOVE`).
        add: bool,
    },
}

/// A single query: its operators, the width of its rows and its output.
#[derive(Clone, Debug)]
pub struct Part {
    /// The operators, first to last.
    pub ops: Vec<Op>,
    /// Slots per row.
    pub width: usize,
    /// Output columns: name and slot.
    pub columns: Vec<(String, usize)>,
}

/// A whole plan: parts joined by UNION (`distinct` for plain UNION).
#[derive(Clone, Debug)]
pub struct Plan {
    /// One per single query.
    pub parts: Vec<Part>,
    /// Plain `UNION` (not `UNION ALL`).
    pub distinct: bool,
    /// The output columns.
    pub columns: Arc<[String]>,
    /// The parameters the query reads.
    pub params: Vec<Arc<str>>,
}

impl Plan {
    /// True when some part calls a procedure (`CALL`, in a subquery too): work the executor's
    /// deadline checks do not bound (an embedder, a search).
    pub fn calls_procedure(&self) -> bool {
        fn any_call(ops: &[Op]) -> bool {
            ops.iter().any(|op| match op {
                Op::Call(_) => true,
                Op::Optional { ops, .. } | Op::Foreach { ops, .. } => any_call(ops),
                Op::InTransactions { sub, .. } => any_call(std::slice::from_ref(sub)),
                Op::Subquery { branches, .. } => branches.iter().any(|b| any_call(b)),
                _ => false,
            })
        }
        self.parts.iter().any(|p| any_call(&p.ops))
    }

    /// Whether the plan reads a file (`LOAD CSV`), in any part or nested operator.
    pub fn loads_files(&self) -> bool {
        fn any_load(ops: &[Op]) -> bool {
            ops.iter().any(|op| match op {
                Op::LoadCsv { .. } => true,
                Op::Optional { ops, .. } | Op::Foreach { ops, .. } => any_load(ops),
                Op::InTransactions { sub, .. } => any_load(std::slice::from_ref(sub)),
                Op::Subquery { branches, .. } => branches.iter().any(|b| any_load(b)),
                _ => false,
            })
        }
        self.parts.iter().any(|p| any_load(&p.ops))
    }
}

/// A `FIELDTERMINATOR`'s byte: one ASCII character other than a quote, a carriage return or a line
/// feed; `None` for anything else.
pub fn field_terminator(t: &str) -> Option<u8> {
    match t.as_bytes() {
        [b] if b.is_ascii() && !matches!(b, b'"' | b'\r' | b'\n') => Some(*b),
        _ => None,
    }
}

impl Op {
    /// The operator's name in a plan.
    pub fn name(&self) -> &'static str {
        match self {
            Op::ScanNodes { test, .. } if test.looks_up() => "NodeByPropertyLookup",
            Op::ScanNodes { test, .. } if test.labels.is_empty() && matches!(test.label_expr, Some(Labels::Or(_))) => "NodeByLabelScan",
            Op::ScanNodes { test, .. } if test.labels.is_empty() => "AllNodesScan",
            Op::ScanNodes { .. } => "NodeByLabelScan",
            Op::SeekNode { .. } => "NodeByIdSeek",
            Op::SeekNodeByIdentity { .. } => "NodeByInternalIdSeek",
            Op::SeekNodesByProperty { .. } => "NodeByPropertyLookup",
            Op::SeekNodesByRange { .. } => "NodeByPropertyRange",
            Op::CheckNode { .. } => "NodeFilter",
            Op::CountExpand { hop, .. } if hop.reach => "BreadthFirstReachCount",
            Op::CountExpand { .. } => "ExpandCount",
            Op::SeekRels { .. } => "RelationshipByPropertyLookup",
            Op::Expand(h) if h.shortest == Some(Shortest::One) => "ShortestPath",
            Op::Expand(h) if h.shortest == Some(Shortest::All) => "AllShortestPaths",
            Op::Expand(h) if h.reach => "BreadthFirstReach",
            Op::Expand(h) if h.length.is_some() => "VarLengthExpand",
            Op::Expand(h) if h.to_bound => "ExpandInto",
            Op::Expand(_) => "Expand",
            Op::BindPath(_) => "BindPath",
            Op::Filter(_) => "Filter",
            Op::Optional { .. } => "Optional",
            Op::Foreach { .. } => "Foreach",
            Op::Subquery { .. } => "Subquery",
            Op::InTransactions { .. } => "InTransactions",
            Op::Project(_) => "Project",
            Op::Aggregate { .. } => "Aggregate",
            Op::Distinct(_) => "Distinct",
            Op::Sort(_) => "Sort",
            Op::Skip(_) => "Skip",
            Op::Limit(_) => "Limit",
            Op::Unwind { .. } => "Unwind",
            Op::LoadCsv { .. } => "LoadCSV",
            Op::Call(_) => "ProcedureCall",
            Op::Create(_) => "Create",
            Op::Merge(_) => "Merge",
            Op::Set(_) => "SetProperties",
            Op::Delete { detach: true, .. } => "DetachDelete",
            Op::Delete { .. } => "Delete",
        }
    }

    /// A short description of the operator's arguments.
    pub fn detail(&self, slots: &dyn Fn(usize) -> String) -> String {
        let test = NodeTest::text;
        match self {
            Op::ScanNodes { slot, test: t }
            | Op::SeekNode { slot, test: t, .. }
            | Op::SeekNodeByIdentity { slot, test: t, .. }
            | Op::CheckNode { slot, test: t } => {
                format!("({}{})", slots(*slot), test(t))
            }
            Op::SeekNodesByProperty { slot, key, test: t, .. } => format!("({}{}) {key} IN", slots(*slot), test(t)),
            Op::SeekNodesByRange { slot, key, lower, upper, test: t, order, instead } => {
                let (l, u) = (if lower.is_some() { " > …" } else { "" }, if upper.is_some() { " < …" } else { "" });
                let order = match order {
                    None => "",
                    Some(ReadOrder::Ascending) => ", in order",
                    Some(ReadOrder::Descending) => ", in order DESC",
                };
                let instead = match instead.as_deref() {
                    Some(Op::SeekNodesByProperty { key, .. }) => format!(", or by {key} IN"),
                    _ => String::new(),
                };
                format!("({}{}) {key}{l}{u}{order}{instead}", slots(*slot), test(t))
            }
            Op::SeekRels { slot, test: t, hop: h, lookup } => {
                let types = types_text(&h.types, h.type_expr.as_ref());
                let mut keys: Vec<String> = h.rel_props.iter().map(|(k, _)| k.to_string()).collect();
                keys.extend(lookup.iter().map(|l| match l {
                    RelLookup::In(k, _) => format!("{k} IN"),
                    RelLookup::Range { key, lower, upper } => {
                        format!("{key}{}{}", if lower.is_some() { " > …" } else { "" }, if upper.is_some() { " < …" } else { "" })
                    }
                }));
                let (l, r) = arrows(h.direction);
                format!(
                    "({}{}){l}[{}{types} {{{}}}]{r}({}{})",
                    slots(*slot),
                    test(t),
                    slots(h.rel),
                    keys.join(", "),
                    slots(h.to),
                    test(&h.to_test)
                )
            }
            Op::Expand(h) | Op::CountExpand { hop: h, .. } => h.text(slots),
            Op::BindPath(p) => slots(p.slot),
            Op::Project(items) => items.iter().map(|(s, _)| slots(*s)).collect::<Vec<_>>().join(", "),
            Op::Aggregate { keys, aggregates } => {
                let k: Vec<String> = keys.iter().map(|(s, _)| slots(*s)).collect();
                let a: Vec<String> = aggregates.iter().map(|a| slots(a.slot)).collect();
                format!("keys [{}], {}", k.join(", "), a.join(", "))
            }
            Op::Distinct(s) => s.iter().map(|s| slots(*s)).collect::<Vec<_>>().join(", "),
            Op::Unwind { slot, .. } | Op::Foreach { slot, .. } | Op::LoadCsv { slot, .. } => slots(*slot),
            Op::Call(c) => c.name.to_owned(),
            Op::Optional { slots: s, .. } => s.iter().map(|s| slots(*s)).collect::<Vec<_>>().join(", "),
            Op::InTransactions { on_error, status, .. } => format!(
                "batches, on error {}{}",
                format!("{on_error:?}").to_uppercase(),
                status.map(|s| format!(", status into {}", slots(s))).unwrap_or_default()
            ),
            Op::Subquery { columns, .. } if columns.is_empty() => "1 part, each row once (unit)".to_owned(),
            Op::Subquery { columns, branches, distinct } => format!(
                "{} into {}{}",
                if branches.len() == 1 { "1 part".to_owned() } else { format!("{} parts", branches.len()) },
                columns.iter().map(|s| slots(*s)).collect::<Vec<_>>().join(", "),
                if *distinct { ", distinct" } else { "" }
            ),
            Op::Sort(keys) => format!("{} keys", keys.len()),
            Op::Create(p) => {
                let nodes: Vec<String> = p.nodes.iter().filter(|n| n.create).map(|n| slots(n.slot)).collect();
                let rels: Vec<String> = p.rels.iter().map(|r| format!("[{}:{}]", slots(r.slot), r.rel_type)).collect();
                nodes.into_iter().chain(rels).collect::<Vec<_>>().join(", ")
            }
            Op::Merge(m) => format!("{} on create, {} on match", m.on_create.len(), m.on_match.len()),
            Op::Set(items) => format!("{} items", items.len()),
            Op::Filter(_) | Op::Skip(_) | Op::Limit(_) | Op::Delete { .. } => String::new(),
        }
    }
}

/// What PROFILE measured of one operator.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpStats {
    /// Rows out.
    pub rows: u64,
    /// Microseconds in it.
    pub micros: u64,
    /// The candidate nodes its seeks and scans tested, by what gave them, in the order first
    /// read: a property's index (`g`, `t range`, `g IN`), a label (`:E`) or every node (`all`).
    pub read: Vec<(String, u64)>,
}

impl OpStats {
    /// Adds `n` candidates read by `by`.
    pub fn add_read(read: &mut Vec<(String, u64)>, by: &str, n: u64) {
        match read.iter_mut().find(|(b, _)| b == by) {
            Some((_, m)) => *m += n,
            None => read.push((by.to_owned(), n)),
        }
    }
}

/// Prints a plan as a tree, last operator on top, as `EXPLAIN` shows it. `stats` adds rows,
/// time and the candidates read per operator (`PROFILE`), in plan order.
pub fn render(plan: &Plan, names: &[Vec<String>], stats: Option<&[Vec<OpStats>]>) -> String {
    let mut out = String::new();
    if plan.parts.len() > 1 {
        let _ = writeln!(out, "{}", if plan.distinct { "Union" } else { "UnionAll" });
    }
    for (pi, part) in plan.parts.iter().enumerate() {
        // Anonymous pattern elements (named with a leading space) print as nothing: `()-[]->()`.
        let slot_name = |s: usize| match names.get(pi).and_then(|n| n.get(s)) {
            Some(n) if n.starts_with(' ') => String::new(),
            Some(n) => n.clone(),
            None => format!("#{s}"),
        };
        let indent = usize::from(plan.parts.len() > 1) * 2;
        let cols: Vec<&str> = part.columns.iter().map(|(c, _)| c.as_str()).collect();
        let _ = writeln!(out, "{:indent$}Produce [{}]", "", cols.join(", "));
        render_ops(&mut out, &part.ops, indent + 2, &slot_name, stats.and_then(|s| s.get(pi)).map(Vec::as_slice));
    }
    out
}

fn render_ops(out: &mut String, ops: &[Op], indent: usize, names: &dyn Fn(usize) -> String, stats: Option<&[OpStats]>) {
    for (i, op) in ops.iter().enumerate().rev() {
        let detail = op.detail(names);
        let _ = write!(out, "{:indent$}{}", "", op.name());
        if !detail.is_empty() {
            let _ = write!(out, " {detail}");
        }
        if let Some(OpStats { rows, micros, read }) = stats.and_then(|s| s.get(i)) {
            let _ = write!(out, "  (rows {rows}, {micros} µs");
            for (k, (by, n)) in read.iter().enumerate() {
                let _ = write!(out, "{}{n} by {by}", if k == 0 { ", read " } else { ", " });
            }
            out.push(')');
        }
        out.push('\n');
        if let Op::Optional { ops, .. } | Op::Foreach { ops, .. } = op {
            render_ops(out, ops, indent + 2, names, None);
        }
        if let Op::InTransactions { sub, .. } = op {
            render_ops(out, std::slice::from_ref(sub), indent + 2, names, None);
        }
        if let Op::Subquery { branches, .. } = op {
            for ops in branches {
                render_ops(out, ops, indent + 2, names, None);
            }
        }
    }
}

impl fmt::Display for AggFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::render;

    fn explain(text: &str) -> String {
        let c = crate::compile(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        render(&c.plan, &c.slot_names, None)
    }

    /// The printer's text is a contract (EXPLAIN's output): it changes only on purpose.
    #[test]
    fn plans_print_stably() {
        // The WHERE's `b.tier = 1` is the pattern's `(b {tier: 1})`: a test on each node reached.
        assert_eq!(
            explain("MATCH (a:Service {id: $s})-[:DEPENDS_ON*1..3]->(b) WHERE b.tier = 1 RETURN count(DISTINCT b) AS n"),
            "Produce [n]\n  BreadthFirstReachCount (a)-[:DEPENDS_ON*1..3]->(b {tier})\n  NodeByIdSeek (a:Service)\n"
        );
        // A last projection that only copies slots is left out (the columns read them); one
        // that computes, or that an ORDER BY follows, stays.
        assert_eq!(explain("MATCH (a) RETURN a"), "Produce [a]\n  AllNodesScan (a)\n");
        assert_eq!(explain("MATCH (a) RETURN a, a.x AS x"), "Produce [a, x]\n  Project a, x\n  AllNodesScan (a)\n");
        assert!(explain("MATCH (a) RETURN a ORDER BY a.x").contains("Project"));
        assert_eq!(
            explain("MATCH (a) RETURN a.name AS x UNION MATCH (b:B) RETURN b.name AS x"),
            "Union\n  Produce [x]\n    Project x\n    AllNodesScan (a)\n  Produce [x]\n    Project x\n    NodeByLabelScan (b:B)\n"
        );
    }
}
