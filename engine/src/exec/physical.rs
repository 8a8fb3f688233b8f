//! The choices of the physical plan that need the catalog's counts, made per run on the
//! snapshot the query reads (the cached logical plan holds names, so it cannot make them):
//!
//! - a label scan reads the label with the fewest nodes first (the rest are tests);
//! - a single hop between two unbound labelled nodes starts from the side with fewer nodes,
//!   walking the relationship the other way; a side the property index looks up (an equality on
//!   a stored property) counts as one node.
//!
//! The logical plan is returned as is (borrowed) when no choice changes it.

use std::borrow::Cow;
use std::sync::Arc;

use engram_query::ast::{BinaryOp, Direction};
use engram_query::plan::{CExpr, Hop, NodeTest, Op, ReadOrder, RelLookup};

use crate::read::view::WorkspaceView;

/// The operators to run for `ops` on `view`.
pub(crate) fn choose<'p>(ops: &'p [Op], view: &WorkspaceView<'_>) -> Cow<'p, [Op]> {
    if matches!(ops.first(), Some(Op::SeekNodesByRange { .. })) {
        if let Some(v) = in_order(ops.to_vec()) {
            return Cow::Owned(v);
        }
    }
    if let Some(v) = range_instead_of_lookup(ops) {
        return Cow::Owned(v);
    }
    let Some(Op::ScanNodes { test, .. }) = ops.first() else { return Cow::Borrowed(ops) };
    if test.labels.is_empty()
        && !matches!(ops.get(1), Some(Op::Expand(hop) | Op::CountExpand { hop, .. }) if hop.to_test.looks_up() || hop.looks_up())
        && !matches!((ops.get(1), ops.get(2)), (Some(Op::Expand(_)), Some(Op::Filter(_))))
    {
        return Cow::Borrowed(ops);
    }
    let labelled = |labels: &[Arc<str>]| labels.iter().map(|l| view.label_estimate(l)).min().unwrap_or(u64::MAX);
    // A side the property index looks up counts as one node.
    let count = |t: &NodeTest| if t.looks_up() { 1 } else { labelled(&t.labels) };
    let mut out: Option<Vec<Op>> = None;
    if let (Op::ScanNodes { slot, test }, Some(Op::Expand(hop) | Op::CountExpand { hop, .. })) = (&ops[0], ops.get(1)) {
        if reversible(*slot, hop, ops) && count(&hop.to_test) < count(test) {
            let mut v = ops.to_vec();
            let back = Hop {
                from: hop.to,
                to: *slot,
                direction: match hop.direction {
                    Direction::Out => Direction::In,
                    Direction::In => Direction::Out,
                    Direction::Both => Direction::Both,
                },
                to_test: test.clone(),
                ..(**hop).clone()
            };
            v[0] = Op::ScanNodes { slot: hop.to, test: hop.to_test.clone() };
            match &mut v[1] {
                Op::Expand(h) | Op::CountExpand { hop: h, .. } => **h = back,
                _ => {}
            }
            out = Some(v);
        }
    }
    let first = out.as_ref().map_or(&ops[0], |v| &v[0]);
    if let Op::ScanNodes { slot, test } = first {
        if test.labels.len() > 1 {
            let best = (0..test.labels.len()).min_by_key(|&i| view.label_estimate(&test.labels[i])).unwrap_or(0);
            if best != 0 {
                let mut labels = test.labels.clone();
                labels.swap(0, best);
                let scan = Op::ScanNodes { slot: *slot, test: NodeTest { labels, ..test.clone() } };
                out.get_or_insert_with(|| ops.to_vec())[0] = scan;
            }
        }
    }
    // A single hop whose relationship the property index looks up (an equality of the hop, or an
    // `IN` of the filter right after it) starts from the relationship, unless the scan looks up
    // its node.
    let (first, second, third) = match &out {
        Some(v) => (&v[0], v.get(1), v.get(2)),
        None => (&ops[0], ops.get(1), ops.get(2)),
    };
    if let (Op::ScanNodes { slot, test }, Some(Op::Expand(hop))) = (first, second) {
        let lookup = match third {
            Some(Op::Filter(f)) => rel_in(*slot, hop, f).or_else(|| rel_range(*slot, hop, f)),
            _ => None,
        };
        if hop.from == *slot
            && hop.to != *slot
            && !hop.to_bound
            && hop.length.is_none()
            && !hop.reach
            && hop.shortest.is_none()
            && hop.distinct_from.is_empty()
            && !test.looks_up()
            && (lookup.is_some() || hop.rel_props.iter().any(|(k, e)| super::ops::rel_lookup(*slot, hop, k, e)))
        {
            let seek = Op::SeekRels { slot: *slot, test: test.clone(), hop: hop.clone(), lookup };
            out.get_or_insert_with(|| ops.to_vec()).splice(0..2, [seek]);
        }
    }
    out.map_or(Cow::Borrowed(ops), Cow::Owned)
}

/// A conjunct `r.k IN values` of `filter` on the relationship of `hop` (from the scan in
/// `slot`) that the property index can answer (`rel_lookup`).
fn rel_in(slot: usize, hop: &Hop, filter: &CExpr) -> Option<RelLookup> {
    conjuncts(filter).into_iter().find_map(|c| match c {
        CExpr::Bin(BinaryOp::In, x, values) => {
            let k = rel_key(hop, x)?;
            super::ops::rel_lookup(slot, hop, k, values).then(|| RelLookup::In(k.clone(), (**values).clone()))
        }
        _ => None,
    })
}

/// The bounds the conjuncts of `filter` set on one property of the relationship of `hop` (`r.k
/// < e`, `e >= r.k`, …, the first key compared, the first bound of each side), when the
/// property index can answer (`rel_lookup`).
fn rel_range(slot: usize, hop: &Hop, filter: &CExpr) -> Option<RelLookup> {
    let (key, lower, upper) = bounds(filter, |e| rel_key(hop, e), |k, b| super::ops::rel_lookup(slot, hop, k, b)).into_iter().next()?;
    Some(RelLookup::Range { key: key.clone(), lower, upper })
}

/// The bounds the conjuncts of `filter` set on properties (`x.k < e`, `e >= x.k`, …): per key
/// `property` reads, in the order first compared, the first lower and upper bound `usable` takes.
fn bounds<'f>(
    filter: &'f CExpr,
    property: impl Fn(&'f CExpr) -> Option<&'f Arc<str>>,
    usable: impl Fn(&Arc<str>, &CExpr) -> bool,
) -> Vec<(&'f Arc<str>, Option<CExpr>, Option<CExpr>)> {
    let mut out: Vec<(&Arc<str>, Option<CExpr>, Option<CExpr>)> = Vec::new();
    for c in conjuncts(filter) {
        let CExpr::Bin(op @ (BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge), x, y) = c else { continue };
        // The property on the left: `<` bounds it above; on the right, below.
        let (k, bound, above) = match (property(x), property(y)) {
            (Some(k), _) if usable(k, y) => (k, y, matches!(op, BinaryOp::Lt | BinaryOp::Le)),
            (_, Some(k)) if usable(k, x) => (k, x, matches!(op, BinaryOp::Gt | BinaryOp::Ge)),
            _ => continue,
        };
        let at = match out.iter().position(|r| r.0 == k) {
            Some(at) => at,
            None => {
                out.push((k, None, None));
                out.len() - 1
            }
        };
        let side = if above { &mut out[at].2 } else { &mut out[at].1 };
        side.get_or_insert_with(|| (**bound).clone());
    }
    out
}

/// `k` when `e` is `r.k`, `r` the relationship of `hop`.
fn rel_key<'e>(hop: &Hop, e: &'e CExpr) -> Option<&'e Arc<str>> {
    match e {
        CExpr::Prop(r, k) if matches!(**r, CExpr::Slot(s) if s == hop.rel) => Some(k),
        _ => None,
    }
}

/// The operands of `e`'s top-level `AND`s.
fn conjuncts(e: &CExpr) -> Vec<&CExpr> {
    match e {
        CExpr::Bin(BinaryOp::And, a, b) => {
            let mut out = conjuncts(a);
            out.extend(conjuncts(b));
            out
        }
        _ => vec![e],
    }
}

/// A hop from the scanned node in `slot` that can be walked from its other end with the same
/// matches: one hop (not variable length), to a node not bound before and not the scanned one,
/// labelled (else there is nothing to compare), with no path assembled from the pattern (a path
/// keeps the pattern's order) and no property test on the far node reading the near one.
fn reversible(slot: usize, hop: &Hop, ops: &[Op]) -> bool {
    hop.from == slot
        && hop.to != slot
        && !hop.to_bound
        && hop.length.is_none()
        && !hop.reach
        && hop.distinct_from.is_empty()
        && (!hop.to_test.labels.is_empty() || hop.to_test.looks_up())
        && hop.to_test.props.iter().chain(&hop.rel_props).all(|(_, e)| !reads_node(e, slot, hop.to))
        && hop.rel_predicate.as_ref().is_none_or(|e| !reads_node(e, slot, hop.to))
        && !ops.iter().any(|o| matches!(o, Op::BindPath(_)))
}

/// Whether `e` may read the slot `a` or `b` (conservatively: a pattern inside may read any).
fn reads_node(e: &CExpr, a: usize, b: usize) -> bool {
    let r = |e: &CExpr| reads_node(e, a, b);
    let ro = |e: &Option<Box<CExpr>>| e.as_deref().is_some_and(r);
    match e {
        CExpr::Const(_) | CExpr::Param(_) | CExpr::Local(_) => false,
        CExpr::Slot(s) => *s == a || *s == b,
        CExpr::List(items) | CExpr::Func(_, items) => items.iter().any(r),
        CExpr::Map(items) => items.iter().any(|(_, e)| r(e)),
        CExpr::Prop(e, _)
        | CExpr::HasLabels(e, _)
        | CExpr::HasLabelExpr(e, _)
        | CExpr::Not(e)
        | CExpr::Neg(e)
        | CExpr::IsNull(e, _)
        | CExpr::IsType(e, _, _) => r(e),
        CExpr::Index(x, y) | CExpr::Bin(_, x, y) => r(x) || r(y),
        CExpr::Slice(x, y, z) => r(x) || ro(y) || ro(z),
        CExpr::Case { subject, whens, otherwise } => ro(subject) || ro(otherwise) || whens.iter().any(|(w, t)| r(w) || r(t)),
        CExpr::ListComp { list, predicate, map } => r(list) || ro(predicate) || ro(map),
        CExpr::Quant { list, predicate, .. } => r(list) || r(predicate),
        CExpr::Reduce { init, list, step } => r(init) || r(list) || r(step),
        CExpr::Pattern { .. } => true,
        CExpr::MapProjection { base, items, .. } => r(base) || items.iter().any(|(_, e)| r(e)),
    }
}

/// The order a range seek first in `ops` can read its nodes in (`Op::SeekNodesByRange`'s
/// `order`): when an `ORDER BY` whose first key is the same property follows with a `LIMIT`, and
/// the operators between keep each row's node (or its value of the property) in slots the sort
/// key reads: filters, node checks, single or variable-length expands, paths and projections.
fn read_order(ops: &[Op]) -> Option<ReadOrder> {
    let Some(Op::SeekNodesByRange { slot, key, order: None, .. }) = ops.first() else { return None };
    // The slots holding the seek's node, and those holding its value of `key`.
    let (mut nodes, mut values) = (vec![*slot], Vec::new());
    for (i, op) in ops.iter().enumerate().skip(1) {
        let written = match op {
            Op::Filter(_) | Op::CheckNode { .. } => Vec::new(),
            Op::Expand(h) if !h.reach && h.shortest.is_none() => vec![h.rel, h.to],
            Op::BindPath(p) => vec![p.slot],
            Op::Project(items) => {
                let (before_nodes, before_values) = (nodes.clone(), values.clone());
                for (s, e) in items {
                    nodes.retain(|n| n != s);
                    values.retain(|v| v != s);
                    match e {
                        CExpr::Slot(x) if before_nodes.contains(x) => nodes.push(*s),
                        CExpr::Slot(x) if before_values.contains(x) => values.push(*s),
                        CExpr::Prop(t, k) if **k == **key && matches!(**t, CExpr::Slot(x) if before_nodes.contains(&x)) => values.push(*s),
                        _ => {}
                    }
                }
                Vec::new()
            }
            Op::Sort(keys) => {
                let first = keys.first()?;
                let reads = match &first.expr {
                    CExpr::Prop(t, k) => **k == **key && matches!(**t, CExpr::Slot(x) if nodes.contains(&x)),
                    CExpr::Slot(x) => values.contains(x),
                    _ => false,
                };
                // (A range seek finds no null: where nulls would sort does not matter.)
                let limited = matches!(&ops[i + 1..], [Op::Limit(_), ..] | [Op::Skip(_), Op::Limit(_), ..]);
                return (reads && limited).then_some(if first.descending { ReadOrder::Descending } else { ReadOrder::Ascending });
            }
            _ => return None,
        };
        nodes.retain(|n| !written.contains(n));
        values.retain(|v| !written.contains(v));
    }
    None
}

/// `ops` with a lookup by a property's list of values (`n.g IN $gs`) replaced by a range of
/// another property that the filter right after the lookup bounds (`n.k < $c`), the lookup kept
/// to run instead: the `IN` stays in the filter. Read in order where `read_order` holds for a
/// range (`… ORDER BY n.k DESC LIMIT 10`; Graphiti's previous episodes of a group: in order, a
/// few of a large group's nodes; by the lookup, every one), the seek runs in no order once the
/// read in order would take twice the candidates the lookup counts; else the first range's. In
/// no order, a run reads whichever counts fewer (`ops::seek`).
fn range_instead_of_lookup(ops: &[Op]) -> Option<Vec<Op>> {
    let (Some(lookup @ Op::SeekNodesByProperty { slot, test, .. }), Some(Op::Filter(filter))) = (ops.first(), ops.get(1)) else {
        return None;
    };
    // The bounds the filter sets on each stored property of the node, by key.
    let ranges = bounds(filter, |e| node_key(*slot, e), |_, b| matches!(b, CExpr::Param(_) | CExpr::Const(_)));
    let replaced: Vec<Vec<Op>> = ranges
        .into_iter()
        .map(|(key, lower, upper)| {
            let seek = Op::SeekNodesByRange {
                slot: *slot,
                key: key.clone(),
                lower,
                upper,
                test: test.clone(),
                order: None,
                instead: Some(Box::new(lookup.clone())),
            };
            let mut v = ops.to_vec();
            v[0] = seek;
            v
        })
        .collect();
    let first = replaced.first().cloned();
    replaced.into_iter().find_map(in_order).or(first)
}

/// `ops` with its first operator, a range seek, marked to read in the order `read_order` finds;
/// `None` where it finds none.
fn in_order(mut ops: Vec<Op>) -> Option<Vec<Op>> {
    let read = read_order(&ops)?;
    if let Some(Op::SeekNodesByRange { order, .. }) = ops.first_mut() {
        *order = Some(read);
    }
    Some(ops)
}

/// `k` when `e` is `n.k`, `n` the node in `slot` and `k` a stored property.
fn node_key(slot: usize, e: &CExpr) -> Option<&Arc<str>> {
    match e {
        CExpr::Prop(n, k) if matches!(**n, CExpr::Slot(s) if s == slot) && !engram_query::plan::NODE_FIELDS.contains(&k.as_ref()) => {
            Some(k)
        }
        _ => None,
    }
}
