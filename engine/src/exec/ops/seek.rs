//! Which index a node seek reads, chosen per row by counting each choice's candidates in the
//! index (a binary search or two, nothing read): the seek's own (a range, a list of values), the
//! lookup a range stands in for, or an equality of the node's test (`{g: $g}`, or `n.g = $g`
//! taken into the pattern). The planner cannot make this choice: `n.t > $since AND n.g = $g`
//! is a few nodes or most of them depending on the values. Every choice gives the same rows:
//! the node test and the filter the planner kept check every condition again on each candidate.
//! Counts are upper bounds (they include stale entries and nodes not visible here); a tie keeps
//! the planner's choice.

use std::borrow::Cow;

use engram_query::plan::{node_key_indexed, CExpr, NodeTest, Op};

use super::{Fallible, Read, Row, Runner};
use crate::exec::value::Val;
use crate::ids::EntityId;

impl Runner<'_, '_, '_> {
    /// The equality of `test` the property index answers with the fewest candidates: its key,
    /// the value wanted and the count. Only a parameter, a constant or a bound variable is
    /// looked up (`NodeTest::looks_up`: nothing that could fail to evaluate).
    pub(super) fn fewest_equality<'s>(&'s self, test: &'s NodeTest, row: &'s [Val]) -> Option<(&'s str, Cow<'s, Val>, usize)> {
        if !test.looks_up() {
            return None;
        }
        let mut best: Option<(&str, Cow<'_, Val>, usize)> = None;
        for (k, e) in &test.props {
            if !matches!(e, CExpr::Param(_) | CExpr::Slot(_) | CExpr::Const(_)) || !node_key_indexed(k) {
                continue;
            }
            let Ok(want) = self.eval_ref(e, row) else { continue };
            let Some(n) = self.graph.count_with_prop(k, &want) else { continue };
            if best.as_ref().is_none_or(|b| n < b.2) {
                best = Some((k, want, n));
            }
        }
        best
    }

    /// The nodes the property index gives for the equality of `test` with the fewest candidates
    /// (`fewest_equality`), and its key: the same nodes a scan would test, fewer. `None` when no
    /// property of the test can be looked up.
    pub(super) fn indexed_nodes<'t>(&self, test: &'t NodeTest, row: &[Val]) -> Option<(&'t str, Vec<EntityId>)> {
        // One equality alone needs no count (the common `{uuid: $u}`).
        let mut lookups =
            test.props.iter().filter(|(k, e)| matches!(e, CExpr::Param(_) | CExpr::Slot(_) | CExpr::Const(_)) && node_key_indexed(k));
        if let (Some((key, e)), None) = (lookups.next(), lookups.next()) {
            let found = self.graph.nodes_with_prop(key, &*self.eval_ref(e, row).ok()?)?;
            return Some((key, found));
        }
        let (key, want, _) = self.fewest_equality(test, row)?;
        let found = self.graph.nodes_with_prop(key, &want)?;
        // The key as the test holds it (the value borrowed the row, which the caller keeps).
        let key = test.props.iter().map(|(k, _)| &**k).find(|k| *k == key)?;
        Some((key, found))
    }

    /// `Op::SeekNodesByProperty` (`n.k IN values`) on one row: the lookup of the list, or of an
    /// equality of `test` where that counts fewer candidates.
    pub(super) fn seek_by_values(
        &self,
        (slot, key, values): (usize, &str, &CExpr),
        test: &NodeTest,
        row: &Row,
        out: &mut Vec<Row>,
    ) -> Fallible<()> {
        let found = match &*self.eval_ref(values, row)? {
            // `n.k IN null` is null for every node.
            Val::Null => return Ok(()),
            Val::List(items) => {
                let listed = self.graph.count_with_any(key, items);
                match self.fewest_equality(test, row) {
                    Some((k, want, n)) if listed.is_none_or(|l| n < l) => (self.graph.nodes_with_prop(k, &want), Read::Equal(k)),
                    _ => (self.graph.nodes_with_any(key, items), Read::In(key)),
                }
            }
            // Not a list: the scan, for the filter the planner kept to refuse.
            _ => (None, Read::All),
        };
        self.bind_found(found, slot, test, row, out)
    }

    /// `Op::SeekNodesByRange` read in no order on one row: the range, the lookup it stands in
    /// for (`instead`), or an equality of `test`, whichever counts the fewest candidates.
    pub(super) fn seek_range(&self, seek: &Op, row: Row, out: &mut Vec<Row>) -> Fallible<()> {
        let Op::SeekNodesByRange { slot, key, lower, upper, test, instead, .. } = seek else { return Ok(()) };
        // The candidates, or `None` where the lookup the range stands in for runs instead.
        let found = {
            let bound = |e: &Option<CExpr>| e.as_ref().map(|e| self.eval_ref(e, &row)).transpose();
            let (lower, upper) = (bound(lower)?, bound(upper)?);
            let (lower, upper) = (lower.as_deref(), upper.as_deref());
            let listed = match instead.as_deref() {
                Some(Op::SeekNodesByProperty { key, values, .. }) => match &*self.eval_ref(values, &row)? {
                    Val::List(items) => self.graph.count_with_any(key, items),
                    // Null or not a list: the lookup answers (no row, or the filter's error).
                    _ => Some(0),
                },
                _ => None,
            };
            let ranged = self.graph.count_in_range(key, lower, upper);
            let equal = self.fewest_equality(test, &row);
            // The planner's choice first, so that it stays on a tie: the lookup where there is
            // one, else the range.
            let counts = [listed, ranged, equal.as_ref().map(|e| e.2)];
            let best = (0..counts.len()).filter(|&i| counts[i].is_some()).min_by_key(|&i| counts[i]);
            match best {
                Some(0) => None,
                Some(2) => equal.map(|(k, want, _)| (self.graph.nodes_with_prop(k, &want), Read::Equal(k))),
                _ => Some((self.graph.nodes_in_range(key, lower, upper), Read::Range(key))),
            }
        };
        match (found, instead.as_deref()) {
            (Some(found), _) => self.bind_found(found, *slot, test, &row, out),
            (None, Some(lookup)) => {
                out.extend(self.op(lookup, vec![row])?);
                Ok(())
            }
            (None, None) => Ok(()),
        }
    }
}
