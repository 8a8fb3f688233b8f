//! `ORDER BY n.k [SKIP s] LIMIT l` read from the property index's order (`Op::SeekNodesByRange`
//! with an `order`, set by the physical step): the seek's nodes come in the order of their
//! values' words, a stretch of whole words at a time, and the operators up to the sort run on
//! each stretch, until `s + l` rows have come out. A later stretch cannot change the first
//! `s + l` rows: its values all sort after (before, descending) every value read so far, since
//! two stretches never share a word. The sort itself still runs, exactly, on the rows read. As
//! in an engine that evaluates lazily under a LIMIT, the nodes it never reads are never tested,
//! so an expression that would fail only on one of them raises nothing.

use engram_query::plan::{CExpr, Op, ReadOrder};

use super::{limit, Fallible, Row, Runner};
use crate::exec::value::Val;
use crate::ids::EntityId;

/// Candidates in the first stretch per row wanted (at least `FIRST_STRETCH_MIN`); each next
/// stretch is twice the one before, so a selective filter costs a few stretches, not one per row.
const STRETCH_PER_ROW: usize = 2;
const FIRST_STRETCH_MIN: usize = 4;

impl Runner<'_, '_, '_> {
    /// Where the sort the seek at `at` reads in order for is (its index in `ops`), and how many
    /// of its first rows are kept (`SKIP` + `LIMIT`); `None` when the bounds do not evaluate here
    /// (the operators then run as usual, and raise what they raise).
    pub(super) fn ordered_upto(&self, ops: &[Op], at: usize) -> Option<(usize, usize)> {
        let sort_at = at + ops[at..].iter().position(|o| matches!(o, Op::Sort(_)))?;
        let (skip, take, _) = self.top_bounds(&ops[sort_at + 1..])?;
        Some((sort_at, skip.saturating_add(take)))
    }

    /// The rows `seek` then `then` give for `rows`, read in `order` until `need` rows per input
    /// row have come out of whole stretches (every row, where the index cannot give the order).
    pub(super) fn read_in_order(&self, seek: &Op, then: &[Op], (order, need): (ReadOrder, usize), rows: Vec<Row>) -> Fallible<Vec<Row>> {
        let Op::SeekNodesByRange { slot, key, lower, upper, test, instead, .. } = seek else {
            return self.run_ops(then, self.op(seek, rows)?, false);
        };
        let mut out = Vec::new();
        for row in rows {
            // The seek as it runs in no order (the lookup it stands in for, if any).
            let unordered = |row: Row, out: &mut Vec<Row>| -> Fallible<()> {
                let sought = self.op(seek, vec![row])?;
                out.extend(self.run_ops(then, sought, false)?);
                Ok(())
            };
            // The list the lookup would look up.
            let lookup = match instead.as_deref() {
                Some(Op::SeekNodesByProperty { key, values, .. }) => Some((key, self.eval_ref(values, &row)?)),
                _ => None,
            };
            match lookup.as_ref().map(|(_, values)| &**values) {
                // `n.k IN null` is null for every node: no row.
                Some(Val::Null) => continue,
                // Not a list: the lookup's path raises the filter's type error.
                Some(values) if !matches!(values, Val::List(_)) => {
                    unordered(row.clone(), &mut out)?;
                    continue;
                }
                _ => {}
            }
            // The fewest candidates another read gives (the lookup the range stands in for, an
            // equality of the node's test), counted in the index: once the next stretch would
            // take the read in order past twice that many, the seek runs in no order instead
            // (`seek_range`, which takes that read), and sorts what it finds.
            let listed = match lookup.as_ref().map(|(k, v)| (k, &**v)) {
                Some((key, Val::List(items))) => self.graph.count_with_any(key, items),
                _ => None,
            };
            let budget = [listed, self.fewest_equality(test, &row).map(|e| e.2)].into_iter().flatten().min();
            let bound = |e: &Option<CExpr>| e.as_ref().map(|e| self.eval_ref(e, &row)).transpose();
            let (lo, hi) = (bound(lower)?, bound(upper)?);
            let Some(mut found) = self.graph.nodes_in_order(key, (lo.as_deref(), hi.as_deref()), order == ReadOrder::Descending) else {
                unordered(row, &mut out)?;
                continue;
            };
            let start = out.len();
            let mut stretch = need.saturating_mul(STRETCH_PER_ROW).max(FIRST_STRETCH_MIN);
            let mut next: Option<(u64, EntityId)> = None;
            let (mut came, mut read) = (0, 0usize);
            let mut nodes: Vec<EntityId> = Vec::new();
            while came < need {
                if budget.is_some_and(|b| read.saturating_add(stretch) > b.saturating_mul(2)) {
                    out.truncate(start);
                    unordered(row.clone(), &mut out)?;
                    break;
                }
                // Whole words only: past `stretch` nodes, the stretch ends where the word changes.
                nodes.clear();
                let mut word = None;
                while let Some((w, e)) = next.take().or_else(|| found.next()) {
                    if nodes.len() >= stretch && word != Some(w) {
                        next = Some((w, e));
                        break;
                    }
                    word = Some(w);
                    nodes.push(e);
                }
                if nodes.is_empty() {
                    break;
                }
                read += nodes.len();
                // In id order, as the unordered seek gives them (a node may come twice: once
                // from the index's base, once from what was added since).
                nodes.sort_unstable();
                nodes.dedup();
                let mut bound_rows = Vec::new();
                self.bind_each(&nodes, *slot, (test, 0), None, &row, &mut bound_rows)?;
                let rows = self.run_ops(then, bound_rows, false)?;
                came += rows.len();
                out.extend(rows);
                if out.len() > self.rows_max() {
                    return Err(Box::new(limit("rows_max", self.rows_max(), "an intermediate result")));
                }
                stretch = stretch.saturating_mul(2);
            }
        }
        Ok(out)
    }
}
