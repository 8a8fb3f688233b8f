//! The state's bitmaps computed from its columns: the whole table when a snapshot loads, and
//! the rows a WAL replay added when it catches up (`State::catch_up_bitmaps`).
//!
//! Membership, the rule both follow and the write path maintains: an erased row belongs to no
//! set. An entity belongs to its workspace's and its type's sets, and to `entities_deleted` when
//! deleted; a claim to its lifecycle state's set, its subject's workspace's and its predicate's,
//! and to `claims_deleted` / `claims_live` / `claims_sensitive` by its flags. Property tests hold both builds to the
//! sets the write path maintained.

use crate::ids::{PredicateId, TypeId, WorkspaceId};
use crate::index::bitmap::IdSet;
use crate::state::{Bitmaps, State, DELETED, ERASED, LIVE, SENSITIVE};

/// The bitmaps of every row, each set family built shard by shard on rayon straight into
/// roaring containers (`partition`): no list of millions of ids is materialized first.
pub fn bitmaps_of(st: &State) -> Bitmaps {
    let (e, c) = (&st.entities, &st.claims);
    let (n, m) = (e.len(), c.len());
    let (preds, types, spaces) = (st.catalog.predicates.len(), st.catalog.types.len(), st.catalog.workspaces.len());
    // Each set family scans the columns it reads, row range by row range; a row the flags say is
    // erased picks no set.
    let ent = |r: std::ops::Range<usize>| e.flags.rows(r).map(|f| f & ERASED == 0);
    let claim = |r: std::ops::Range<usize>| c.flags.rows(r).map(|f| (*f & ERASED == 0, *f));
    let (
        (entities_by_ws, entities_by_type, entities_deleted),
        (claims_by_state, claims_deleted, claims_live, claims_sensitive, claims_by_ws, claims_by_pred),
    ) = rayon::join(
        || {
            (
                IdSet::partition_rows(n, spaces, 0, |r| e.ws.rows(r.clone()).zip(ent(r)).map(|(w, kept)| kept.then_some(w.0 as usize))),
                IdSet::partition_rows(n, types, 0, |r| e.ty.rows(r.clone()).zip(ent(r)).map(|(t, kept)| kept.then_some(usize::from(t.0)))),
                only(IdSet::partition_rows(n, 1, 0, |r| e.flags.rows(r).map(|f| (f & ERASED == 0 && f & DELETED != 0).then_some(0)))),
            )
        },
        || {
            (
                IdSet::partition_rows(m, 3, 0, |r| c.state.rows(r.clone()).zip(claim(r)).map(|(s, (kept, _))| kept.then_some(*s as usize))),
                only(IdSet::partition_rows(m, 1, 0, |r| claim(r).map(|(kept, f)| (kept && f & DELETED != 0).then_some(0)))),
                only(IdSet::partition_rows(m, 1, 0, |r| claim(r).map(|(kept, f)| (kept && f & LIVE != 0).then_some(0)))),
                only(IdSet::partition_rows(m, 1, 0, |r| claim(r).map(|(kept, f)| (kept && f & SENSITIVE != 0).then_some(0)))),
                IdSet::partition_rows(m, spaces, 0, |r| {
                    c.subject.rows(r.clone()).zip(claim(r)).map(|(s, (kept, _))| kept.then(|| e.ws.get(*s as usize).0 as usize))
                }),
                IdSet::partition_rows(m, preds, 0, |r| {
                    c.pred.rows(r.clone()).zip(claim(r)).map(|(p, (kept, _))| kept.then_some(usize::from(*p)))
                }),
            )
        },
    );
    // The three lifecycle states by their discriminants (`ClaimState as usize`).
    let claims_by_state: [IdSet; 3] = std::array::from_fn(|k| claims_by_state.get(k).cloned().unwrap_or_default());
    let keyed = |sets: Vec<IdSet>| sets.into_iter().enumerate().filter(|(_, s)| !s.is_empty());
    Bitmaps {
        claims_by_state,
        claims_deleted,
        claims_live,
        claims_sensitive,
        claims_by_ws: keyed(claims_by_ws).map(|(k, v)| (WorkspaceId(k as u32), v)).collect(),
        claims_by_pred: keyed(claims_by_pred).map(|(k, v)| (PredicateId(k as u16), v)).collect(),
        entities_by_ws: keyed(entities_by_ws).map(|(k, v)| (WorkspaceId(k as u32), v)).collect(),
        entities_by_type: keyed(entities_by_type).map(|(k, v)| (TypeId(k as u16), v)).collect(),
        entities_deleted,
    }
}

/// Ascending ids per key, for the sets keyed by workspace, type or predicate. Consecutive rows
/// mostly share their key, so the last key's list is found without hashing.
#[derive(Default)]
struct Keyed {
    lists: Vec<(u32, Vec<u32>)>,
    index: std::collections::HashMap<u32, usize, foldhash::fast::FixedState>,
    last: Option<usize>,
}

impl Keyed {
    fn push(&mut self, key: u32, id: u32) {
        let at = match self.last {
            Some(at) if self.lists[at].0 == key => at,
            _ => {
                let next = self.lists.len();
                let at = *self.index.entry(key).or_insert(next);
                if at == next {
                    self.lists.push((key, Vec::new()));
                }
                self.last = Some(at);
                at
            }
        };
        self.lists[at].1.push(id);
    }

    fn into_sets<K: std::hash::Hash + Eq + Clone>(self, key: impl Fn(u32) -> K) -> crate::pmap::PMap<K, IdSet> {
        self.lists.into_iter().map(|(k, ids)| (key(k), IdSet::from_sorted(&ids))).collect()
    }
}

/// The bitmaps of entity rows `entities_from..` and claim rows `claims_from..`: the rows a replay
/// added since it last caught up, read in one pass into id lists (a few per row), so a catch-up
/// costs in proportion to the log, not to the table.
pub fn bitmaps_of_rows_from(st: &State, entities_from: u32, claims_from: u32) -> Bitmaps {
    let (e, c) = (&st.entities, &st.claims);
    let (mut e_ws, mut e_ty, mut e_deleted) = (Keyed::default(), Keyed::default(), Vec::new());
    for id in entities_from..e.len() as u32 {
        let i = id as usize;
        let flags = *e.flags.get(i);
        if flags & ERASED != 0 {
            continue;
        }
        e_ws.push(e.ws.get(i).0, id);
        e_ty.push(u32::from(e.ty.get(i).0), id);
        if flags & DELETED != 0 {
            e_deleted.push(id);
        }
    }
    let (mut c_state, mut c_deleted, mut c_live, mut c_sensitive) = (<[Vec<u32>; 3]>::default(), Vec::new(), Vec::new(), Vec::new());
    let (mut c_ws, mut c_pred) = (Keyed::default(), Keyed::default());
    for id in claims_from..c.len() as u32 {
        let i = id as usize;
        let flags = *c.flags.get(i);
        if flags & ERASED != 0 {
            continue;
        }
        c_state[*c.state.get(i) as usize].push(id);
        if flags & DELETED != 0 {
            c_deleted.push(id);
        }
        if flags & LIVE != 0 {
            c_live.push(id);
        }
        if flags & SENSITIVE != 0 {
            c_sensitive.push(id);
        }
        c_ws.push(e.ws.get(*c.subject.get(i) as usize).0, id);
        c_pred.push(u32::from(*c.pred.get(i)), id);
    }
    Bitmaps {
        claims_by_state: c_state.map(|ids| IdSet::from_sorted(&ids)),
        claims_deleted: IdSet::from_sorted(&c_deleted),
        claims_live: IdSet::from_sorted(&c_live),
        claims_sensitive: IdSet::from_sorted(&c_sensitive),
        claims_by_ws: c_ws.into_sets(WorkspaceId),
        claims_by_pred: c_pred.into_sets(|k| PredicateId(k as u16)),
        entities_by_ws: e_ws.into_sets(WorkspaceId),
        entities_by_type: e_ty.into_sets(|k| TypeId(k as u16)),
        entities_deleted: IdSet::from_sorted(&e_deleted),
    }
}

/// Adds every member of `more` to `into`, family by family and key by key.
pub fn absorb(into: &mut Bitmaps, more: &Bitmaps) {
    let join = |a: &mut IdSet, b: &IdSet| {
        if !b.is_empty() {
            *a = a.or(b);
        }
    };
    for (a, b) in into.claims_by_state.iter_mut().zip(&more.claims_by_state) {
        join(a, b);
    }
    join(&mut into.claims_deleted, &more.claims_deleted);
    join(&mut into.claims_live, &more.claims_live);
    join(&mut into.claims_sensitive, &more.claims_sensitive);
    join(&mut into.entities_deleted, &more.entities_deleted);
    for (k, b) in &more.claims_by_ws {
        join(into.claims_by_ws.entry(*k).or_default(), b);
    }
    for (k, b) in &more.claims_by_pred {
        join(into.claims_by_pred.entry(*k).or_default(), b);
    }
    for (k, b) in &more.entities_by_ws {
        join(into.entities_by_ws.entry(*k).or_default(), b);
    }
    for (k, b) in &more.entities_by_type {
        join(into.entities_by_type.entry(*k).or_default(), b);
    }
}

/// The one set of a one-set partition.
fn only(mut sets: Vec<IdSet>) -> IdSet {
    sets.pop().unwrap_or_default()
}
