//! Which index a seek reads, chosen per row by counting each choice's candidates in the
//! index (a binary search or two, nothing read): the seek's own (a range, a list of values), the
//! lookup a range stands in for, or an equality of the node's test (`{g: $g}`, or `n.g = $g`
//! taken into the pattern). The planner cannot make this choice: `n.t > $since AND n.g = $g`
//! is a few nodes or most of them depending on the values. Every choice gives the same rows:
//! the node test and the filter the planner kept check every condition again on each candidate.
//! Counts are upper bounds (they include stale entries and nodes not visible here); a tie keeps
//! the planner's choice. A relationship looked up by its property (`SeekRels`) chooses the same
//! way among its map's equalities and the filter's `IN` or range.

use std::borrow::Cow;

use engram_query::plan::{node_key_indexed, CExpr, Hop, NodeTest, Op, RelLookup};

use super::{rel_lookup, Fallible, Read, Row, Runner};
use crate::exec::value::Val;
use crate::ids::{ClaimId, EntityId};

/// A read of a hop's relationships from the property index (`indexed_rels`).
enum RelRead<'k, 'v> {
    /// An equality of the hop's property map.
    Equal(&'k str, Cow<'v, Val>),
    /// The filter's `IN` (null: no relationship).
    In(&'k str, Cow<'v, Val>),
    /// The filter's range.
    Range(&'k str, Option<Cow<'v, Val>>, Option<Cow<'v, Val>>),
}

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

    /// The relationships the property index gives for the hop's relationship (the hop from
    /// `slot`'s node): of its equalities (`[e {uuid: $u}]`) and the filter's lookup (`e.k IN
    /// …`, a range), whichever counts the fewest candidates (the earlier on a tie, the
    /// equalities first). `None` where none can answer.
    pub(super) fn indexed_rels<'h>(
        &self,
        slot: usize,
        hop: &'h Hop,
        lookup: Option<&'h RelLookup>,
        row: &[Val],
    ) -> Option<(Read<'h>, Vec<ClaimId>)> {
        let mut reads: Vec<RelRead<'h, '_>> = Vec::new();
        for (k, e) in hop.rel_props.iter().filter(|(k, e)| rel_lookup(slot, hop, k, e)) {
            if let Ok(want) = self.eval_ref(e, row) {
                reads.push(RelRead::Equal(k, want));
            }
        }
        match lookup {
            Some(RelLookup::In(key, values)) => {
                if let Ok(values) = self.eval_ref(values, row) {
                    reads.push(RelRead::In(key, values));
                }
            }
            Some(RelLookup::Range { key, lower, upper }) => {
                let bound = |e: &Option<CExpr>| e.as_ref().map(|e| self.eval_ref(e, row)).transpose();
                if let (Ok(lower), Ok(upper)) = (bound(lower), bound(upper)) {
                    reads.push(RelRead::Range(key, lower, upper));
                }
            }
            None => {}
        }
        // One read alone needs no count (the common `[e {uuid: $u}]`).
        let count = |r: &RelRead<'h, '_>| match r {
            RelRead::Equal(k, want) => self.graph.count_rels_with_prop(k, want),
            RelRead::In(k, values) => match &**values {
                Val::Null => Some(0),
                Val::List(items) => self.graph.count_rels_with_any(k, items),
                _ => None,
            },
            RelRead::Range(k, lower, upper) => self.graph.count_rels_in_range(k, lower.as_deref(), upper.as_deref()),
        };
        let mut best: Option<(usize, &RelRead<'h, '_>)> = None;
        if let [one] = &reads[..] {
            best = Some((0, one));
        } else {
            for r in &reads {
                if let Some(n) = count(r) {
                    if best.is_none_or(|(b, _)| n < b) {
                        best = Some((n, r));
                    }
                }
            }
        }
        match best?.1 {
            RelRead::Equal(k, want) => Some((Read::Equal(k), self.graph.rels_with_prop(k, want)?)),
            RelRead::In(k, values) => match &**values {
                Val::Null => Some((Read::In(k), Vec::new())),
                Val::List(items) => Some((Read::In(k), self.graph.rels_with_any(k, items)?)),
                _ => None,
            },
            RelRead::Range(k, lower, upper) => Some((Read::Range(k), self.graph.rels_in_range(k, lower.as_deref(), upper.as_deref())?)),
        }
    }
}
