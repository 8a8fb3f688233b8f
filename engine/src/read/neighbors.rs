//! One-hop neighbours with filters and cursor pagination.
//!
//! Results are ordered by (claim id, direction). Claim ids only grow, so a cursor naming the last
//! (claim, direction) returned stays correct while writes go on: later pages never repeat or skip a
//! claim that was visible throughout, and new claims appear at the end.

use crate::error::ReadError;
use crate::ids::{ClaimId, EntityId};
use crate::index::graph::Direction;
use crate::read::filter::{Compiled, EdgeFilter};
use crate::read::view::WorkspaceView;
use crate::read::visibility::Visibility;
use std::sync::Arc;

/// A neighbours query.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NeighborQuery {
    /// Direction, predicates, neighbour types, minimum confidence.
    pub filter: EdgeFilter,
    /// Which claims count.
    pub visibility: Visibility,
    /// Page size; `None` = everything.
    pub limit: Option<usize>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// One neighbour: the claim and the entity at its other end.
#[derive(Clone, Debug, PartialEq)]
pub struct Neighbor {
    /// The claim.
    pub claim: ClaimId,
    /// `Out` when the queried entity is the subject, `In` when it is the object.
    pub direction: Direction,
    /// The predicate name.
    pub predicate: Arc<str>,
    /// The entity at the other end.
    pub neighbor: EntityId,
}

/// A page of neighbours.
#[derive(Clone, Debug, PartialEq)]
pub struct NeighborPage {
    /// The neighbours, ordered by (claim id, direction).
    pub items: Vec<Neighbor>,
    /// Pass this as `cursor` to get the next page; `None` on the last page.
    pub next_cursor: Option<String>,
}

fn encode_cursor(key: u64) -> String {
    format!("n1.{key:x}")
}

fn decode_cursor(s: &str) -> Result<u64, ReadError> {
    s.strip_prefix("n1.")
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .ok_or_else(|| ReadError::InvalidCursor(s.chars().take(64).collect()))
}

impl WorkspaceView<'_> {
    /// The neighbours of `entity`.
    pub fn neighbors(&self, entity: EntityId, q: &NeighborQuery) -> Result<NeighborPage, ReadError> {
        self.check_entity(entity)?;
        if q.limit == Some(0) {
            return Err(ReadError::InvalidParameter { name: "limit", reason: "must be at least 1" });
        }
        let after = q.cursor.as_deref().map(decode_cursor).transpose()?;
        let vis = self.vis(&q.visibility);
        if !vis.entity(self.st, entity.0) {
            return Ok(NeighborPage { items: Vec::new(), next_cursor: None });
        }
        let filter = Compiled::new(&q.filter, self.st);
        let mut keyed: Vec<(u64, u32, u16)> = Vec::new();
        filter.for_each(self.st, &vis, entity.0, |dir, edge| {
            let key = (u64::from(edge.claim) << 1) | dir as u64;
            if after.is_none_or(|a| key > a) {
                keyed.push((key, edge.nbr, edge.pred));
            }
        });
        keyed.sort_unstable_by_key(|k| k.0);
        // Pages are capped by the scope's row limit; the cursor goes on from there.
        let limit = q.limit.unwrap_or(usize::MAX).min(self.cx.limits.rows_max);
        let more = keyed.len() > limit;
        keyed.truncate(limit);
        let next_cursor = if more { keyed.last().map(|k| encode_cursor(k.0)) } else { None };
        let items = keyed
            .into_iter()
            .map(|(key, nbr, pred)| Neighbor {
                claim: ClaimId((key >> 1) as u32),
                direction: if key & 1 == 0 { Direction::Out } else { Direction::In },
                predicate: self.st.catalog.predicates.name(pred).clone(),
                neighbor: EntityId(nbr),
            })
            .collect();
        Ok(NeighborPage { items, next_cursor })
    }
}
