//! A naive reference model: plain vectors and linear scans, written to be obviously right. The
//! differential tests apply the same writes to it and to engram and compare every read.

use engram::{ClaimState, Direction, StateSet, Timestamp, Visibility};

/// One entity of the reference.
#[derive(Clone, Debug)]
pub struct RefEntity {
    /// Type index (the test names types `t0`, `t1`, ...).
    pub ty: usize,
    /// Transaction time it was created.
    pub created_at: Timestamp,
    /// `(at, deleted)` history, oldest first; the first entry is the creation.
    pub history: Vec<(Timestamp, bool)>,
    /// While merged away: the survivor, and the claims moved with the ends that were this
    /// entity (bit 0 subject, bit 1 object).
    pub merged: Option<(usize, Vec<(usize, u8)>)>,
}

/// One claim of the reference.
#[derive(Clone, Debug)]
pub struct RefClaim {
    /// Subject index.
    pub s: usize,
    /// Predicate index (`p0`, `p1`, ...).
    pub p: usize,
    /// Object index.
    pub o: usize,
    /// Confidence.
    pub confidence: f32,
    /// Valid from.
    pub valid_from: Timestamp,
    /// Valid until.
    pub valid_until: Timestamp,
    /// Expiry.
    pub expires_at: Timestamp,
    /// Transaction time of creation.
    pub recorded_at: Timestamp,
    /// `(at, state, deleted)` history, oldest first.
    pub history: Vec<(Timestamp, ClaimState, bool)>,
}

impl RefEntity {
    /// Deleted as known at `k`.
    pub fn deleted_at(&self, k: Timestamp) -> bool {
        self.history.iter().rev().find(|(at, _)| *at <= k).is_some_and(|(_, d)| *d)
    }
    /// Current deletion flag.
    pub fn deleted(&self) -> bool {
        self.history.last().is_some_and(|(_, d)| *d)
    }
}

impl RefClaim {
    /// Current state.
    pub fn state(&self) -> ClaimState {
        self.history.last().map_or(ClaimState::Proposed, |h| h.1)
    }
    /// Current deletion flag.
    pub fn deleted(&self) -> bool {
        self.history.last().is_some_and(|h| h.2)
    }
    /// `(state, deleted)` as known at `k`, if the claim existed then.
    pub fn at(&self, k: Timestamp) -> Option<(ClaimState, bool)> {
        self.history.iter().rev().find(|h| h.0 <= k).map(|h| (h.1, h.2))
    }
}

/// The reference graph.
#[derive(Clone, Debug, Default)]
pub struct RefGraph {
    /// Entities by dense id.
    pub entities: Vec<RefEntity>,
    /// Claims by dense id.
    pub claims: Vec<RefClaim>,
}

impl RefGraph {
    /// Merges `from` into `into`: every claim with `from` at an end moves to `into`.
    pub fn merge(&mut self, from: usize, into: usize, at: Timestamp) {
        let mut moved = Vec::new();
        for (c, claim) in self.claims.iter_mut().enumerate() {
            let ends = u8::from(claim.s == from) | u8::from(claim.o == from) << 1;
            if ends != 0 {
                if claim.s == from {
                    claim.s = into;
                }
                if claim.o == from {
                    claim.o = into;
                }
                moved.push((c, ends));
            }
        }
        self.entities[from].merged = Some((into, moved));
        self.entities[from].history.push((at, true));
    }

    /// Undoes `from`'s merge: the moved ends that are still the survivor go back.
    pub fn unmerge(&mut self, from: usize, at: Timestamp) {
        let Some((into, moved)) = self.entities[from].merged.take() else { return };
        for (c, ends) in moved {
            let claim = &mut self.claims[c];
            if ends & 1 != 0 && claim.s == into {
                claim.s = from;
            }
            if ends & 2 != 0 && claim.o == into {
                claim.o = from;
            }
        }
        self.entities[from].history.push((at, false));
    }

    /// The spec of visibility, evaluated by brute force.
    pub fn visible(&self, c: usize, v: &Visibility, now: Timestamp) -> bool {
        if v.all_versions {
            return true;
        }
        let claim = &self.claims[c];
        let k = v.known_as_of.unwrap_or(Timestamp::MAX);
        let Some((state, deleted)) = claim.at(k) else { return false };
        // With valid time moved, a claim superseded since (deprecated, validity ended) counts
        // with the last state it had before it was deprecated (ACCEPTED if it never had another).
        let state = if v.as_of.is_some() && state == ClaimState::Deprecated && claim.valid_until != Timestamp::MAX {
            claim.history.iter().rev().map(|h| h.1).find(|s| *s != ClaimState::Deprecated).unwrap_or(ClaimState::Accepted)
        } else {
            state
        };
        if !v.states.contains(state) {
            return false;
        }
        if !v.include_deleted && (deleted || self.entities[claim.s].deleted_at(k) || self.entities[claim.o].deleted_at(k)) {
            return false;
        }
        let t = v.as_of.unwrap_or(now);
        claim.valid_from <= t && t < claim.valid_until && t < claim.expires_at
    }

    /// Whether an entity is visible under `v`.
    pub fn entity_visible(&self, e: usize, v: &Visibility) -> bool {
        if v.all_versions {
            return true;
        }
        let ent = &self.entities[e];
        let k = v.known_as_of.unwrap_or(Timestamp::MAX);
        ent.created_at <= k && (v.include_deleted || !ent.deleted_at(k))
    }

    /// Edges of `e` passing the filter: `(claim, dir 0 out / 1 in, neighbour)`, sorted.
    #[allow(clippy::too_many_arguments)] // Reason: mirrors the filter fields one to one.
    pub fn edges(
        &self,
        e: usize,
        direction: Direction,
        preds: Option<&[usize]>,
        types: Option<&[usize]>,
        min_conf: f32,
        v: &Visibility,
        now: Timestamp,
    ) -> Vec<(usize, usize, usize)> {
        let mut out = Vec::new();
        for (c, claim) in self.claims.iter().enumerate() {
            if !self.visible(c, v, now) || claim.confidence < min_conf || preds.is_some_and(|p| !p.contains(&claim.p)) {
                continue;
            }
            let ends: &[(usize, usize, usize)] = &[(0, claim.s, claim.o), (1, claim.o, claim.s)];
            for &(dir, from, to) in ends {
                let dir_ok = matches!((direction, dir), (Direction::Both, _) | (Direction::Out, 0) | (Direction::In, 1));
                if dir_ok && from == e && types.is_none_or(|t| t.contains(&self.entities[to].ty)) {
                    out.push((c, dir, to));
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Naive BFS: `(entity, depth)` for everything within `depth` hops, plus per entity the
    /// claims from the previous level.
    pub fn khop(&self, seeds: &[usize], depth: u32, v: &Visibility, now: Timestamp) -> Vec<(usize, u32, Vec<usize>)> {
        let mut depth_of: Vec<Option<u32>> = vec![None; self.entities.len()];
        let mut out: Vec<(usize, u32, Vec<usize>)> = Vec::new();
        let mut frontier = Vec::new();
        for &s in seeds {
            if depth_of[s].is_none() && self.entity_visible(s, v) {
                depth_of[s] = Some(0);
                out.push((s, 0, Vec::new()));
                frontier.push(s);
            }
        }
        for d in 1..=depth {
            let mut next = Vec::new();
            let mut via: std::collections::BTreeMap<usize, Vec<usize>> = std::collections::BTreeMap::new();
            for &e in &frontier {
                for (c, _, to) in self.edges(e, Direction::Both, None, None, 0.0, v, now) {
                    match depth_of[to] {
                        None => {
                            depth_of[to] = Some(d);
                            next.push(to);
                            via.entry(to).or_default().push(c);
                        }
                        Some(x) if x == d => via.entry(to).or_default().push(c),
                        _ => {}
                    }
                }
            }
            for (e, mut cs) in via {
                cs.sort_unstable();
                cs.dedup();
                out.push((e, d, cs));
            }
            frontier = next;
        }
        out.sort_by_key(|x| (x.1, x.0));
        out
    }

    /// Naive transitive closure over predicate `p` (out = ancestors), with minimum distance.
    pub fn closure(&self, e: usize, p: usize, out_dir: bool, v: &Visibility, now: Timestamp) -> Vec<(usize, u32)> {
        let dir = if out_dir { Direction::Out } else { Direction::In };
        let mut dist: Vec<Option<u32>> = vec![None; self.entities.len()];
        dist[e] = Some(0);
        let mut frontier = vec![e];
        let mut d = 0;
        while !frontier.is_empty() {
            d += 1;
            let mut next = Vec::new();
            for &x in &frontier {
                for (_, _, to) in self.edges(x, dir, Some(&[p]), None, 0.0, v, now) {
                    if dist[to].is_none() {
                        dist[to] = Some(d);
                        next.push(to);
                    }
                }
            }
            frontier = next;
        }
        let mut out: Vec<(usize, u32)> = dist.iter().enumerate().filter_map(|(i, d)| d.map(|d| (i, d))).filter(|(i, _)| *i != e).collect();
        out.sort_by_key(|x| (x.1, x.0));
        out
    }
}

/// The visibility settings the differential tests sweep.
pub fn visibilities(now: Timestamp, past: Timestamp) -> Vec<Visibility> {
    vec![
        Visibility::default(),
        Visibility::as_of(now.plus_seconds(-60)),
        Visibility::as_of(now.plus_seconds(100)),
        Visibility { known_as_of: Some(past), ..Visibility::default() },
        Visibility { states: StateSet::ALL, ..Visibility::default() },
        Visibility { states: StateSet::of(&[ClaimState::Accepted]), ..Visibility::default() },
        Visibility { include_deleted: true, ..Visibility::default() },
        Visibility { include_deleted: true, known_as_of: Some(past), states: StateSet::ALL, ..Visibility::default() },
        Visibility::all_versions(),
    ]
}
