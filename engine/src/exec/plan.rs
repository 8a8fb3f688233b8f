//! The physical plan: operators over rows of slots, and expressions with variables resolved to
//! slots. Built once per query text (and cached); names of labels, types and keys stay names and
//! are bound to the snapshot's ids when the plan runs, so a cached plan is never stale.

use std::fmt::{self, Write as _};
use std::sync::Arc;

use engram_query::ast::{BinaryOp, Quantifier};

use crate::index::graph::Direction;

use super::value::Val;

/// A compiled expression.
#[derive(Clone, Debug)]
pub(crate) enum CExpr {
    Const(Val),
    Param(Arc<str>),
    Slot(usize),
    /// A variable of a list comprehension or quantifier, by depth.
    Local(usize),
    List(Vec<CExpr>),
    Map(Vec<(Arc<str>, CExpr)>),
    Prop(Box<CExpr>, Arc<str>),
    Index(Box<CExpr>, Box<CExpr>),
    Slice(Box<CExpr>, Option<Box<CExpr>>, Option<Box<CExpr>>),
    HasLabels(Box<CExpr>, Vec<Arc<str>>),
    Not(Box<CExpr>),
    Neg(Box<CExpr>),
    Bin(BinaryOp, Box<CExpr>, Box<CExpr>),
    IsNull(Box<CExpr>, bool),
    Case {
        subject: Option<Box<CExpr>>,
        whens: Vec<(CExpr, CExpr)>,
        otherwise: Option<Box<CExpr>>,
    },
    Func(Arc<str>, Vec<CExpr>),
    ListComp {
        list: Box<CExpr>,
        predicate: Option<Box<CExpr>>,
        map: Option<Box<CExpr>>,
    },
    Quant {
        quantifier: Quantifier,
        list: Box<CExpr>,
        predicate: Box<CExpr>,
    },
    /// A pattern as a value: runs `ops` on the current row; `map` gives each match's value
    /// (a pattern comprehension), or, with no `map`, the paths matched.
    Pattern {
        ops: Arc<Vec<Op>>,
        map: Option<Box<CExpr>>,
        path: usize,
    },
    MapProjection {
        base: Box<CExpr>,
        all: bool,
        items: Vec<(Arc<str>, CExpr)>,
    },
}

/// An aggregate function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AggFn {
    CountStar,
    Count,
    Collect,
    Sum,
    Avg,
    Min,
    Max,
    StDev,
    StDevP,
}

/// One aggregate of an aggregation: the function, DISTINCT, its argument and its slot.
#[derive(Clone, Debug)]
pub(crate) struct Aggregate {
    pub func: AggFn,
    pub distinct: bool,
    pub arg: Option<CExpr>,
    pub slot: usize,
}

/// What a node pattern requires.
#[derive(Clone, Debug, Default)]
pub(crate) struct NodeTest {
    pub labels: Vec<Arc<str>>,
    pub props: Vec<(Arc<str>, CExpr)>,
}

impl NodeTest {
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.props.is_empty()
    }
}

/// One hop of a pattern.
#[derive(Clone, Debug)]
pub(crate) struct Hop {
    pub from: usize,
    /// The relationship's slot (a list of relationships for a variable length).
    pub rel: usize,
    pub to: usize,
    /// `to` was bound before this hop: check it instead of binding it.
    pub to_bound: bool,
    pub direction: Direction,
    pub types: Vec<Arc<str>>,
    /// `Some((min, max))` for a variable length.
    pub length: Option<(u64, Option<u64>)>,
    pub rel_props: Vec<(Arc<str>, CExpr)>,
    /// engram's inline WHERE, evaluated with the hop's relationship in `rel`.
    pub rel_predicate: Option<CExpr>,
    pub to_test: NodeTest,
    /// Relationship slots bound earlier in the same MATCH: a relationship is used once per match.
    pub distinct_from: Vec<usize>,
    /// Only the distinct end nodes are used (the paths are not): walk breadth first, one row per
    /// node reached, instead of one per trail. The planner sets it only where the two agree.
    pub reach: bool,
    /// With `reach`: the MATCH excludes the start node itself (`WHERE b <> a`, absorbed here).
    pub exclude_start: bool,
}

/// How a path variable is put together: its start node and hops.
#[derive(Clone, Debug)]
pub(crate) struct PathSpec {
    pub slot: usize,
    pub start: usize,
    /// (relationship slot, is variable length) per hop, in pattern order.
    pub hops: Vec<(usize, bool)>,
    /// Every node's slot, in pattern order.
    pub nodes: Vec<usize>,
}

/// A sort key.
#[derive(Clone, Debug)]
pub(crate) struct SortKey {
    pub expr: CExpr,
    pub descending: bool,
}

/// A procedure call.
#[derive(Clone, Debug)]
pub(crate) struct ProcCall {
    pub name: &'static str,
    pub args: Vec<CExpr>,
    /// (column index in the procedure's yields, slot).
    pub yields: Vec<(usize, usize)>,
}

/// An operator: turns a batch of rows into the next.
#[derive(Clone, Debug)]
pub(crate) enum Op {
    /// For each row, every node passing `test` into `slot`.
    ScanNodes {
        slot: usize,
        test: NodeTest,
    },
    /// For each row, the node whose external id is `id` (when it passes `test`).
    SeekNode {
        slot: usize,
        id: CExpr,
        test: NodeTest,
    },
    /// Keeps the rows whose node in `slot` passes `test` (a bound variable in a pattern).
    CheckNode {
        slot: usize,
        test: NodeTest,
    },
    Expand(Box<Hop>),
    /// An expand whose rows only a keyless `count` reads: counts the matches per input row and
    /// yields one row with the sum in `slot` (Expand + Aggregate fused).
    CountExpand {
        hop: Box<Hop>,
        slot: usize,
    },
    BindPath(PathSpec),
    Filter(CExpr),
    /// For each row, runs `ops`; a row with no match continues with `slots` null.
    Optional {
        ops: Vec<Op>,
        slots: Vec<usize>,
    },
    Project(Vec<(usize, CExpr)>),
    Aggregate {
        keys: Vec<(usize, CExpr)>,
        aggregates: Vec<Aggregate>,
    },
    Distinct(Vec<usize>),
    Sort(Vec<SortKey>),
    Skip(CExpr),
    Limit(CExpr),
    Unwind {
        expr: CExpr,
        slot: usize,
    },
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
        exprs: Vec<CExpr>,
        detach: bool,
    },
}

/// A node CREATE or MERGE writes into `slot`; `create` is false for a variable bound before.
#[derive(Clone, Debug)]
pub(crate) struct NewNode {
    pub slot: usize,
    pub create: bool,
    pub labels: Vec<Arc<str>>,
    pub props: Option<CExpr>,
}

/// A relationship CREATE or MERGE writes: from the node in `from` to the node in `to`.
#[derive(Clone, Debug)]
pub(crate) struct NewRel {
    pub slot: usize,
    pub rel_type: Arc<str>,
    pub from: usize,
    pub to: usize,
    pub props: Option<CExpr>,
}

/// What one CREATE (or a MERGE's creation) writes, in pattern order, and the paths it binds.
#[derive(Clone, Debug, Default)]
pub(crate) struct NewPattern {
    pub nodes: Vec<NewNode>,
    pub rels: Vec<NewRel>,
    pub paths: Vec<PathSpec>,
}

/// A MERGE: the match of its pattern, what it creates when there is none, and its SET items.
#[derive(Clone, Debug)]
pub(crate) struct MergePlan {
    pub matching: Vec<Op>,
    pub create: NewPattern,
    pub on_match: Vec<SetItem>,
    pub on_create: Vec<SetItem>,
}

/// One SET or REMOVE item.
#[derive(Clone, Debug)]
pub(crate) enum SetItem {
    /// `target.key = value` (`REMOVE target.key`: value null).
    Prop { target: CExpr, key: Arc<str>, value: CExpr },
    /// `target = map` (`replace`) or `target += map`.
    Props { target: CExpr, value: CExpr, replace: bool },
    /// `target:A:B` added or (`REMOVE`) removed.
    Labels { target: CExpr, labels: Vec<Arc<str>>, add: bool },
}

/// A single query: its operators, the width of its rows and its output.
#[derive(Clone, Debug)]
pub(crate) struct Part {
    pub ops: Vec<Op>,
    pub width: usize,
    /// Output columns: name and slot.
    pub columns: Vec<(String, usize)>,
}

/// A whole plan: parts joined by UNION (`distinct` for plain UNION).
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub parts: Vec<Part>,
    pub distinct: bool,
    pub columns: Vec<String>,
    pub params: Vec<Arc<str>>,
}

impl Op {
    /// The operator's name in a plan.
    pub fn name(&self) -> &'static str {
        match self {
            Op::ScanNodes { test, .. } if test.labels.is_empty() => "AllNodesScan",
            Op::ScanNodes { .. } => "NodeByLabelScan",
            Op::SeekNode { .. } => "NodeByIdSeek",
            Op::CheckNode { .. } => "NodeFilter",
            Op::CountExpand { hop, .. } if hop.reach => "BreadthFirstReachCount",
            Op::CountExpand { .. } => "ExpandCount",
            Op::Expand(h) if h.reach => "BreadthFirstReach",
            Op::Expand(h) if h.length.is_some() => "VarLengthExpand",
            Op::Expand(h) if h.to_bound => "ExpandInto",
            Op::Expand(_) => "Expand",
            Op::BindPath(_) => "BindPath",
            Op::Filter(_) => "Filter",
            Op::Optional { .. } => "Optional",
            Op::Project(_) => "Project",
            Op::Aggregate { .. } => "Aggregate",
            Op::Distinct(_) => "Distinct",
            Op::Sort(_) => "Sort",
            Op::Skip(_) => "Skip",
            Op::Limit(_) => "Limit",
            Op::Unwind { .. } => "Unwind",
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
        let test = |t: &NodeTest| -> String {
            let mut s = String::new();
            for l in &t.labels {
                let _ = write!(s, ":{l}");
            }
            if !t.props.is_empty() {
                let keys: Vec<&str> = t.props.iter().map(|(k, _)| k.as_ref()).collect();
                let _ = write!(s, " {{{}}}", keys.join(", "));
            }
            s
        };
        match self {
            Op::ScanNodes { slot, test: t } | Op::SeekNode { slot, test: t, .. } | Op::CheckNode { slot, test: t } => {
                format!("({}{})", slots(*slot), test(t))
            }
            Op::Expand(h) | Op::CountExpand { hop: h, .. } => {
                let types: Vec<&str> = h.types.iter().map(AsRef::as_ref).collect();
                let types = if types.is_empty() { String::new() } else { format!(":{}", types.join("|")) };
                let len = match h.length {
                    Some((min, Some(max))) => format!("*{min}..{max}"),
                    Some((min, None)) => format!("*{min}.."),
                    None => String::new(),
                };
                let (l, r) = match h.direction {
                    Direction::Out => ("-", "->"),
                    Direction::In => ("<-", "-"),
                    Direction::Both => ("-", "-"),
                };
                format!("({}){l}[{}{types}{len}]{r}({}{})", slots(h.from), slots(h.rel), slots(h.to), test(&h.to_test))
            }
            Op::BindPath(p) => slots(p.slot),
            Op::Project(items) => items.iter().map(|(s, _)| slots(*s)).collect::<Vec<_>>().join(", "),
            Op::Aggregate { keys, aggregates } => {
                let k: Vec<String> = keys.iter().map(|(s, _)| slots(*s)).collect();
                let a: Vec<String> = aggregates.iter().map(|a| format!("{}={:?}", slots(a.slot), a.func)).collect();
                format!("keys [{}], {}", k.join(", "), a.join(", "))
            }
            Op::Distinct(s) => s.iter().map(|s| slots(*s)).collect::<Vec<_>>().join(", "),
            Op::Unwind { slot, .. } => slots(*slot),
            Op::Call(c) => c.name.to_owned(),
            Op::Optional { slots: s, .. } => s.iter().map(|s| slots(*s)).collect::<Vec<_>>().join(", "),
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

/// Prints a plan as a tree, last operator on top, as `EXPLAIN` shows it. `stats` adds rows and
/// time per operator (`PROFILE`), in plan order.
pub(crate) fn render(plan: &Plan, names: &[Vec<String>], stats: Option<&[Vec<(u64, u64)>]>) -> String {
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

fn render_ops(out: &mut String, ops: &[Op], indent: usize, names: &dyn Fn(usize) -> String, stats: Option<&[(u64, u64)]>) {
    for (i, op) in ops.iter().enumerate().rev() {
        let detail = op.detail(names);
        let _ = write!(out, "{:indent$}{}", "", op.name());
        if !detail.is_empty() {
            let _ = write!(out, " {detail}");
        }
        if let Some((rows, micros)) = stats.and_then(|s| s.get(i)) {
            let _ = write!(out, "  (rows {rows}, {micros} µs)");
        }
        out.push('\n');
        if let Op::Optional { ops, .. } = op {
            render_ops(out, ops, indent + 2, names, None);
        }
    }
}

impl fmt::Display for AggFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}
