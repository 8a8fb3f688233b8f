//! Differential tests: random write histories applied to engram and to the naive reference in
//! `engram_tests::reference`, then every read compared. Covers the CSR + delta overlay + merge (a
//! random history compacts at random points), the lifecycle flags and bitmaps, neighbours with every
//! filter and pagination, k-hop (sequential and parallel) and transitive closure.

use engram::{
    AddClaim, ClaimId, ClaimRef, ClaimState, Config, Database, DeclarePredicate, Direction, EdgeFilter, EntityId, EntityRef, KHopQuery,
    ManualClock, NeighborQuery, Op, Timestamp, Visibility, WriteBatch,
};
use engram_tests::reference::{visibilities, RefClaim, RefEntity, RefGraph};
use proptest::prelude::*;
use std::sync::Arc;

const TYPES: usize = 3;
const PREDS: usize = 4;
const T0: i64 = 1_700_000_000;

#[derive(Clone, Debug)]
enum Action {
    AddEntity(usize),
    AddClaim { s: usize, o: usize, p: usize, conf: u8, state: u8, shape: u8 },
    Accept(usize),
    Deprecate(usize, Option<usize>),
    DeleteClaim(usize),
    RestoreClaim(usize),
    DeleteEntity(usize),
    RestoreEntity(usize),
    Compact,
    Tick(u8),
    Merge(usize, usize),
    Unmerge(usize),
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        3 => (0..TYPES).prop_map(Action::AddEntity),
        8 => (any::<usize>(), any::<usize>(), 0..PREDS, 0u8..3, 0u8..3, 0u8..4)
            .prop_map(|(s, o, p, conf, state, shape)| Action::AddClaim { s, o, p, conf, state, shape }),
        1 => any::<usize>().prop_map(Action::Accept),
        1 => (any::<usize>(), proptest::option::of(any::<usize>())).prop_map(|(a, b)| Action::Deprecate(a, b)),
        1 => any::<usize>().prop_map(Action::DeleteClaim),
        1 => any::<usize>().prop_map(Action::RestoreClaim),
        1 => any::<usize>().prop_map(Action::DeleteEntity),
        1 => any::<usize>().prop_map(Action::RestoreEntity),
        1 => Just(Action::Compact),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Action::Merge(a, b)),
        1 => any::<usize>().prop_map(Action::Unmerge),
        1 => (1u8..40).prop_map(Action::Tick),
    ]
}

/// A change to apply to the reference if engram accepts the batch.
type RefChange = Box<dyn FnOnce(&mut RefGraph)>;

struct Harness {
    db: Database,
    clock: Arc<ManualClock>,
    reference: RefGraph,
    commit_times: Vec<Timestamp>,
}

impl Harness {
    fn new() -> Harness {
        let clock = Arc::new(ManualClock::new(Timestamp::from_epoch_seconds(T0)));
        let config = Config { clock: clock.clone(), merge_delta_edges_min: usize::MAX, background_merge: false, ..Config::default() };
        let db = Database::with_config(config);
        let mut b = WriteBatch::new("default");
        b.push(Op::DeclarePredicate(DeclarePredicate::new("p0").transitive()));
        db.write(&b).unwrap();
        Harness { db, clock, reference: RefGraph::default(), commit_times: Vec::new() }
    }

    fn now(&self) -> Timestamp {
        self.clock.now_ts()
    }

    /// Applies one action to both sides; asserts they agree on whether it was accepted.
    #[allow(clippy::too_many_lines)] // Reason: one match arm per action keeps the two sides side by side.
    fn apply(&mut self, a: &Action) {
        let n_e = self.reference.entities.len();
        let n_c = self.reference.claims.len();
        self.clock.advance_seconds(1);
        let now = self.now();
        let mut b = WriteBatch::new("default");
        // What the reference does if engram accepts the batch; `None` means "expected to fail".
        let expected: Option<RefChange> = match a.clone() {
            Action::Tick(s) => {
                self.clock.advance_seconds(i64::from(s));
                return;
            }
            Action::Compact => {
                self.db.compact();
                return;
            }
            Action::AddEntity(ty) => {
                b.upsert_entity(&format!("e{n_e}"), &format!("t{ty}"), &format!("Entity {n_e}"));
                Some(Box::new(move |r: &mut RefGraph| {
                    r.entities.push(RefEntity { ty, created_at: now, history: vec![(now, false)], merged: None });
                }))
            }
            Action::AddClaim { s, o, p, conf, state, shape } => {
                if n_e == 0 {
                    return;
                }
                let (s, o) = (s % n_e, o % n_e);
                let confidence = [0.2f32, 0.5, 0.9][conf as usize];
                let state = ClaimState::ALL[state as usize];
                let (vf, vu, exp) = match shape {
                    0 => (now, Timestamp::MAX, Timestamp::MAX),
                    1 => (now.plus_seconds(-100), now.plus_seconds(50), Timestamp::MAX),
                    2 => (now.plus_seconds(30), Timestamp::MAX, Timestamp::MAX),
                    _ => (now.plus_seconds(-1000), Timestamp::MAX, now.plus_seconds(20)),
                };
                let mut claim = AddClaim::new(EntityId(s as u32), &format!("P{p}"), EntityId(o as u32)).confidence(confidence).state(state);
                if shape != 0 {
                    claim = claim.valid(Some(vf), (vu != Timestamp::MAX).then_some(vu));
                }
                if exp != Timestamp::MAX {
                    claim = claim.expires(exp);
                }
                b.add_claim(claim);
                let ok = !self.reference.entities[s].deleted() && !self.reference.entities[o].deleted();
                ok.then(|| -> RefChange {
                    Box::new(move |r: &mut RefGraph| {
                        r.claims.push(RefClaim {
                            s,
                            p,
                            o,
                            confidence,
                            valid_from: vf,
                            valid_until: vu,
                            expires_at: exp,
                            recorded_at: now,
                            history: vec![(now, state, false)],
                        });
                    })
                })
            }
            Action::Accept(c) | Action::Deprecate(c, _) | Action::DeleteClaim(c) | Action::RestoreClaim(c) => {
                if n_c == 0 {
                    return;
                }
                let c = c % n_c;
                let claim = &self.reference.claims[c];
                let (state, deleted) = (claim.state(), claim.deleted());
                let cref = ClaimRef::Id(ClaimId(c as u32));
                let (op, next): (Op, Option<(ClaimState, bool)>) = match a {
                    Action::Accept(_) => (
                        Op::AcceptClaim { claim: cref },
                        state.can_move_to(ClaimState::Accepted).then_some((ClaimState::Accepted, deleted)),
                    ),
                    Action::Deprecate(_, by) => {
                        let by = by.map(|x| x % n_c);
                        let ok = state != ClaimState::Deprecated && by != Some(c);
                        (
                            Op::Deprecate { claim: cref, superseded_by: by.map(|x| ClaimRef::Id(ClaimId(x as u32))) },
                            ok.then_some((ClaimState::Deprecated, deleted)),
                        )
                    }
                    Action::DeleteClaim(_) => (Op::DeleteClaim { claim: cref }, Some((state, true))),
                    _ => (Op::RestoreClaim { claim: cref }, Some((state, false))),
                };
                b.push(op);
                next.map(|(st, del)| -> RefChange {
                    Box::new(move |r: &mut RefGraph| {
                        let h = &mut r.claims[c].history;
                        if h.last().is_some_and(|l| (l.1, l.2) != (st, del)) {
                            h.push((now, st, del));
                        }
                    })
                })
            }
            Action::DeleteEntity(e) | Action::RestoreEntity(e) => {
                if n_e == 0 {
                    return;
                }
                let e = e % n_e;
                let del = matches!(a, Action::DeleteEntity(_));
                let eref = EntityRef::Id(EntityId(e as u32));
                b.push(if del { Op::DeleteEntity { entity: eref } } else { Op::RestoreEntity { entity: eref } });
                // A merged-away entity comes back only by undoing its merge.
                let merged = self.reference.entities[e].merged.is_some();
                (del || !merged).then(|| -> RefChange {
                    Box::new(move |r: &mut RefGraph| {
                        let h = &mut r.entities[e].history;
                        if h.last().is_some_and(|l| l.1 != del) {
                            h.push((now, del));
                        }
                    })
                })
            }
            Action::Merge(from, into) => {
                if n_e == 0 {
                    return;
                }
                let (from, into) = (from % n_e, into % n_e);
                b.push(Op::MergeEntities { from: EntityId(from as u32).into(), into: EntityId(into as u32).into() });
                let r = &self.reference;
                let ok = from != into && !r.entities[from].deleted() && !r.entities[into].deleted();
                ok.then(|| -> RefChange { Box::new(move |r: &mut RefGraph| r.merge(from, into, now)) })
            }
            Action::Unmerge(e) => {
                if n_e == 0 {
                    return;
                }
                let e = e % n_e;
                b.push(Op::UnmergeEntity { entity: EntityId(e as u32).into() });
                let r = &self.reference;
                // Undone in reverse order: not while the survivor is itself merged away.
                let ok = r.entities[e].merged.as_ref().is_some_and(|(into, _)| r.entities[*into].merged.is_none());
                ok.then(|| -> RefChange { Box::new(move |r: &mut RefGraph| r.unmerge(e, now)) })
            }
        };
        let result = self.db.write(&b);
        match (result, expected) {
            (Ok(_), Some(f)) => {
                f(&mut self.reference);
                self.commit_times.push(now);
            }
            (Err(_), None) => {}
            (Ok(_), None) => panic!("engram accepted {a:?}, the reference expected an error"),
            (Err(e), Some(_)) => panic!("engram rejected {a:?}: {e}"),
        }
    }

    #[allow(clippy::too_many_lines)] // Reason: one sweep over every read kind keeps the comparison in one place.
    fn check_all(&self) {
        let snap = self.db.snapshot();
        let ws = snap.workspace("default").unwrap();
        let now = snap.now();
        let past = self.commit_times.get(self.commit_times.len() / 2).copied().unwrap_or(now);
        let r = &self.reference;
        let n_e = r.entities.len();
        let pred_sets: [Option<Vec<usize>>; 4] = [None, Some(vec![0]), Some(vec![1, 2]), Some(vec![])];
        for v in visibilities(now, past) {
            for e in 0..n_e {
                for dir in [Direction::Out, Direction::In, Direction::Both] {
                    for preds in &pred_sets {
                        for (types, min_conf) in [(None, 0.0f32), (Some(vec![1usize]), 0.0), (None, 0.5)] {
                            let filter = filter_of(dir, preds.as_deref(), types.as_deref(), min_conf);
                            let want = r.edges(e, dir, preds.as_deref(), types.as_deref(), min_conf, &v, now);
                            let want: Vec<(usize, usize, usize)> = if r.entity_visible(e, &v) { want } else { Vec::new() };
                            let q = NeighborQuery { filter: filter.clone(), visibility: v.clone(), limit: None, cursor: None };
                            let page = ws.neighbors(EntityId(e as u32), &q).unwrap();
                            let got: Vec<(usize, usize, usize)> = page
                                .items
                                .iter()
                                .map(|n| (n.claim.0 as usize, usize::from(n.direction == Direction::In), n.neighbor.0 as usize))
                                .collect();
                            assert_eq!(
                                got, want,
                                "neighbors of e{e} dir {dir:?} preds {preds:?} types {types:?} conf {min_conf} vis {v:?}"
                            );
                            // Pagination in pages of 2 gives the same sequence.
                            let mut paged = Vec::new();
                            let mut cursor = None;
                            loop {
                                let q = NeighborQuery { filter: filter.clone(), visibility: v.clone(), limit: Some(2), cursor };
                                let page = ws.neighbors(EntityId(e as u32), &q).unwrap();
                                paged.extend(page.items.iter().map(|n| n.claim));
                                match page.next_cursor {
                                    Some(c) => cursor = Some(c),
                                    None => break,
                                }
                            }
                            assert_eq!(paged, page.items.iter().map(|n| n.claim).collect::<Vec<_>>());
                            // The executor's expand iterator agrees, in its own order.
                            if types.is_none() && min_conf == 0.0 {
                                let ids: Option<Vec<engram::PredicateId>> =
                                    preds.as_ref().map(|p| p.iter().filter_map(|p| ws.predicate_id(&format!("p{p}"))).collect());
                                let ex = ws.expander(dir, ids.as_deref(), &v);
                                let mut edges: Vec<(usize, usize, usize)> = ex
                                    .edges(EntityId(e as u32))
                                    .map(|x| {
                                        let p = r.claims[x.claim.0 as usize].p;
                                        assert_eq!(Some(x.predicate), ws.predicate_id(&format!("P{p}")));
                                        assert_eq!(Some(x.predicate), ws.claim_triple(x.claim).map(|t| t.1));
                                        (x.claim.0 as usize, usize::from(x.direction == Direction::In), x.neighbor.0 as usize)
                                    })
                                    .collect();
                                edges.sort_unstable();
                                assert_eq!(edges, want, "expand e{e} dir {dir:?} preds {preds:?} vis {v:?}");
                                assert_eq!(ex.degree(EntityId(e as u32)), want.len());
                                // `next` (external) and `fold` (internal iteration) give the same edges in the same order.
                                let mut it = ex.edges(EntityId(e as u32));
                                let stepped: Vec<_> = std::iter::from_fn(|| it.next()).collect();
                                assert_eq!(stepped, ex.edges(EntityId(e as u32)).collect::<Vec<_>>());
                            }
                        }
                    }
                }
            }
            self.check_claims_between(&ws, &pred_sets, &v, now);
            // k-hop from a couple of seeds, sequential and parallel.
            if n_e > 0 {
                let seeds = [0usize, n_e / 2];
                let want = r.khop(&seeds, 3, &v, now);
                for parallel in [false, true] {
                    let q = KHopQuery { max_depth: 3, visibility: v.clone(), with_claims: true, parallel, ..KHopQuery::default() };
                    let got = ws.khop(&seeds.map(|s| EntityId(s as u32)), &q).unwrap();
                    let mut got: Vec<(usize, u32, Vec<usize>)> = got
                        .entities
                        .iter()
                        .zip(&got.via)
                        .map(|(x, via)| (x.entity.0 as usize, x.depth, via.iter().map(|c| c.0 as usize).collect()))
                        .collect();
                    got.sort_by_key(|x| (x.1, x.0));
                    assert_eq!(got, want, "khop vis {v:?}");
                }
                // One hop from every entity: the traversal kernel's per-entity paths (stored live
                // bits vs per-claim checks) must all agree with the reference.
                for e in 0..n_e {
                    let q = KHopQuery { max_depth: 1, visibility: v.clone(), with_claims: true, ..KHopQuery::default() };
                    let got = ws.khop(&[EntityId(e as u32)], &q).unwrap();
                    let mut got: Vec<(usize, u32, Vec<usize>)> = got
                        .entities
                        .iter()
                        .zip(&got.via)
                        .map(|(x, via)| (x.entity.0 as usize, x.depth, via.iter().map(|c| c.0 as usize).collect()))
                        .collect();
                    got.sort_by_key(|x| (x.1, x.0));
                    assert_eq!(got, r.khop(&[e], 1, &v, now), "1-hop from e{e} vis {v:?}");
                    let q = KHopQuery { max_depth: 1, visibility: v.clone(), ..KHopQuery::default() };
                    let mut plain: Vec<u32> = ws.khop(&[EntityId(e as u32)], &q).unwrap().entities.iter().map(|x| x.entity.0).collect();
                    plain.sort_unstable();
                    let mut want: Vec<u32> = r.khop(&[e], 1, &v, now).iter().map(|x| x.0 as u32).collect();
                    want.sort_unstable();
                    assert_eq!(plain, want, "1-hop (no claims) from e{e} vis {v:?}");
                }
                for e in [0, n_e - 1] {
                    for up in [true, false] {
                        let want = r.closure(e, 0, up, &v, now);
                        let got =
                            if up { ws.ancestors(EntityId(e as u32), "P0", &v) } else { ws.descendants(EntityId(e as u32), "p0", &v) }
                                .unwrap();
                        let mut got: Vec<(usize, u32)> = got.into_iter().map(|(x, d)| (x.0 as usize, d)).collect();
                        got.sort_by_key(|x| (x.1, x.0));
                        assert_eq!(got, want, "closure up={up} from e{e} vis {v:?}");
                    }
                }
            }
        }
        // Bitmap algebra agrees with the columns.
        for (p, state) in [(None, ClaimState::Accepted), (Some(1usize), ClaimState::Proposed), (Some(0), ClaimState::Deprecated)] {
            let name = p.map(|p| format!("p{p}"));
            let got: Vec<usize> = ws.claims_with(name.as_deref(), state).into_iter().map(|c| c.0 as usize).collect();
            let want: Vec<usize> = (0..r.claims.len())
                .filter(|&c| r.claims[c].state() == state && !r.claims[c].deleted() && p.is_none_or(|p| r.claims[c].p == p))
                .collect();
            assert_eq!(got, want, "claims_with {name:?} {state:?}");
        }
        for t in 0..TYPES {
            let got: Vec<usize> = ws.entities_of_type(&format!("t{t}")).into_iter().map(|e| e.0 as usize).collect();
            let want: Vec<usize> = (0..n_e).filter(|&e| r.entities[e].ty == t && !r.entities[e].deleted()).collect();
            assert_eq!(got, want);
        }
        // Scans and the catalog's counts agree with the reference.
        let live: Vec<usize> = (0..n_e).filter(|&e| !r.entities[e].deleted()).collect();
        assert_eq!(ws.entity_set().iter().map(|e| e.0 as usize).collect::<Vec<_>>(), live);
        let claims: Vec<usize> = (0..r.claims.len()).filter(|&c| !r.claims[c].deleted()).collect();
        assert_eq!(ws.claim_set().iter().map(|c| c.0 as usize).collect::<Vec<_>>(), claims);
        let cat = ws.catalog();
        assert_eq!((cat.entities, cat.claims), (live.len() as u64, claims.len() as u64));
        for t in 0..TYPES {
            let want = live.iter().filter(|&&e| r.entities[e].ty == t).count() as u64;
            let got = ws.type_id(&format!("T{t}")).map_or(0, |id| {
                assert_eq!(ws.entities_of_type_id(id).len(), cat.type_count(id));
                cat.type_count(id)
            });
            assert_eq!(got, want, "type t{t}");
        }
        for p in 0..PREDS {
            let want = claims.iter().filter(|&&c| r.claims[c].p == p).count() as u64;
            assert_eq!(ws.predicate_id(&format!("p{p}")).map_or(0, |id| cat.predicate_count(id)), want, "predicate p{p}");
        }
        let _ = Visibility::default();
    }
}

/// The edge filter of a direction, predicates (`Some(empty)`: one that matches none), neighbour
/// types and a least confidence.
fn filter_of(dir: Direction, preds: Option<&[usize]>, types: Option<&[usize]>, min_conf: f32) -> EdgeFilter {
    let mut filter = EdgeFilter::new(dir).min_confidence(min_conf);
    if let Some(p) = preds {
        filter.predicates = if p.is_empty() { vec!["nope".into()] } else { p.iter().map(|p| format!("p{p}")).collect() };
    }
    if let Some(t) = types {
        filter.neighbor_types = t.iter().map(|t| format!("T{t}")).collect();
    }
    filter
}

impl Harness {
    /// The claims among a few entities (`claims_between`, which recall's graph path adds for
    /// its seeds) equal every edge the reference has from one of them to another, per filter.
    fn check_claims_between(&self, ws: &engram::WorkspaceView<'_>, pred_sets: &[Option<Vec<usize>>], v: &Visibility, now: Timestamp) {
        let r = &self.reference;
        let n_e = r.entities.len();
        if n_e == 0 {
            return;
        }
        let set = [0usize, n_e / 2, n_e - 1, n_e / 3];
        for dir in [Direction::Out, Direction::In, Direction::Both] {
            for preds in pred_sets {
                for (types, min_conf) in [(None, 0.0f32), (Some(vec![1usize]), 0.0), (None, 0.5)] {
                    let filter = filter_of(dir, preds.as_deref(), types.as_deref(), min_conf);
                    let mut want: Vec<usize> = set
                        .iter()
                        .filter(|&&e| r.entity_visible(e, v))
                        .flat_map(|&e| r.edges(e, dir, preds.as_deref(), types.as_deref(), min_conf, v, now))
                        .filter(|x| set.contains(&x.2))
                        .map(|x| x.0)
                        .collect();
                    want.sort_unstable();
                    want.dedup();
                    let got = ws.claims_between(&set.map(|e| EntityId(e as u32)), &filter, v).unwrap();
                    let got: Vec<usize> = got.into_iter().map(|c| c.0 as usize).collect();
                    assert_eq!(got, want, "claims between {set:?} dir {dir:?} preds {preds:?} types {types:?} conf {min_conf} vis {v:?}");
                }
            }
        }
    }
}

trait NowTs {
    fn now_ts(&self) -> Timestamp;
}
impl NowTs for ManualClock {
    fn now_ts(&self) -> Timestamp {
        engram::Clock::now(self)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(48), ..ProptestConfig::default() })]

    #[test]
    fn engine_matches_reference(actions in proptest::collection::vec(action(), 1..120)) {
        let mut h = Harness::new();
        for a in &actions {
            h.apply(a);
        }
        h.check_all();
        // After a final merge everything still agrees (base-only layout).
        h.db.compact();
        h.check_all();
    }
}

/// A larger graph where frontiers exceed the parallel threshold: parallel k-hop must return
/// exactly what the sequential path and the reference return.
#[test]
fn parallel_khop_equals_sequential_on_a_large_graph() {
    use rand::{Rng, SeedableRng};
    let seed = 7u64;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let db = Database::in_memory();
    let n = 3000usize;
    let mut b = WriteBatch::new("default");
    for i in 0..n {
        b.upsert_entity(&format!("e{i}"), "t", &format!("E{i}"));
    }
    for _ in 0..12_000 {
        // Skewed degrees: a few hubs.
        let s = if rng.gen_bool(0.2) { rng.gen_range(0..10) } else { rng.gen_range(0..n) };
        let o = rng.gen_range(0..n);
        let state = if rng.gen_bool(0.1) { ClaimState::Deprecated } else { ClaimState::Accepted };
        b.add_claim(AddClaim::new(EntityId(s as u32), "rel", EntityId(o as u32)).state(state));
    }
    db.write(&b).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let seeds: Vec<EntityId> = (0..20).map(|i| EntityId(i * 97)).collect();
    for depth in [1, 2, 3] {
        let seq = ws.khop(&seeds, &KHopQuery { max_depth: depth, parallel: false, with_claims: true, ..KHopQuery::default() }).unwrap();
        let par = ws.khop(&seeds, &KHopQuery { max_depth: depth, parallel: true, with_claims: true, ..KHopQuery::default() }).unwrap();
        assert_eq!(seq, par, "seed {seed} depth {depth}");
        let capped_seq =
            ws.khop(&seeds, &KHopQuery { max_depth: depth, parallel: false, max_visited: Some(500), ..KHopQuery::default() }).unwrap();
        let capped_par =
            ws.khop(&seeds, &KHopQuery { max_depth: depth, parallel: true, max_visited: Some(500), ..KHopQuery::default() }).unwrap();
        assert_eq!(capped_seq, capped_par);
        if seq.entities.len() > 500 {
            assert!(capped_seq.truncated);
            assert_eq!(capped_seq.entities.len(), 500);
        }
    }
    let each_seq = ws.khop_each(&seeds, &KHopQuery { max_depth: 2, parallel: false, ..KHopQuery::default() }).unwrap();
    let each_par = ws.khop_each(&seeds, &KHopQuery { max_depth: 2, parallel: true, ..KHopQuery::default() }).unwrap();
    assert_eq!(each_seq, each_par);
}
