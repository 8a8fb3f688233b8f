//! Concurrency stress: one writer commits batches (with background CSR merges triggered often)
//! while several readers check that they never see part of a batch and that a snapshot they hold
//! never changes under them.

use engram::{AddClaim, Config, Database, KHopQuery, NeighborQuery, Op, WriteBatch};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const PER_BATCH: u64 = 7;
const BATCHES: u64 = 300;
const READERS: usize = 3;

/// Visible hub claims after `b` batches: each adds `PER_BATCH` and deprecates one of the previous.
fn expected_visible(b: u64) -> u64 {
    if b == 0 {
        0
    } else {
        PER_BATCH * b - (b - 1)
    }
}

#[test]
fn readers_see_whole_batches_and_stable_snapshots() {
    let config = Config { merge_delta_edges_min: 64, background_merge: true, ..Config::default() };
    let db = Database::with_config(config);
    let mut setup = WriteBatch::new("default");
    setup.upsert_entity("hub", "s", "Hub");
    db.write(&setup).unwrap();
    let v0 = db.snapshot().version();
    let hub = db.snapshot().workspace("default").unwrap().entity_id("hub").unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..READERS)
        .map(|_| {
            let db = db.clone();
            let done = done.clone();
            std::thread::spawn(move || {
                let mut checks = 0u64;
                while !done.load(Ordering::Acquire) {
                    let snap = db.snapshot();
                    let ws = snap.workspace("default").unwrap();
                    let b = snap.version() - v0;
                    let first = ws.neighbors(hub, &NeighborQuery::default()).unwrap();
                    assert_eq!(first.items.len() as u64, expected_visible(b), "partial batch seen at version {}", snap.version());
                    let reach = ws.khop(&[hub], &KHopQuery::depth(1)).unwrap();
                    assert_eq!(reach.entities.len() as u64, 1 + expected_visible(b));
                    std::thread::yield_now();
                    // The same snapshot, read again after more commits, is unchanged.
                    let again = ws.neighbors(hub, &NeighborQuery::default()).unwrap();
                    assert_eq!(first, again, "snapshot changed under a reader");
                    checks += 1;
                }
                checks
            })
        })
        .collect();
    for b in 0..BATCHES {
        let mut batch = WriteBatch::new("default");
        for j in 0..PER_BATCH {
            let ext = format!("n{b}-{j}");
            batch.upsert_entity(&ext, "s", &ext).add_claim(AddClaim::new("hub", "r", ext.as_str()).id(&format!("c{b}-{j}")));
        }
        if b > 0 {
            batch.push(Op::Deprecate { claim: format!("c{}-0", b - 1).into(), superseded_by: Some(format!("c{b}-0").into()) });
        }
        db.write(&batch).unwrap();
    }
    done.store(true, Ordering::Release);
    let checks: u64 = readers.into_iter().map(|r| r.join().expect("reader panicked")).sum();
    assert!(checks > 0);
    db.wait_for_merge();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    assert_eq!(ws.neighbors(hub, &NeighborQuery::default()).unwrap().items.len() as u64, expected_visible(BATCHES));
    db.compact();
    assert_eq!(db.snapshot().delta_edges(), 0);
}

#[test]
fn concurrent_writers_serialize() {
    let db = Database::in_memory();
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..100 {
                    let mut b = WriteBatch::new("default");
                    b.upsert_entity(&format!("w{w}-{i}"), "s", "E");
                    db.write(&b).unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let snap = db.snapshot();
    assert_eq!(snap.counts().0, 400);
    assert_eq!(snap.version(), 400);
}

/// Many writers whose small batches are combined into groups, one in three of them invalid (it
/// first upserts an entity, then names a missing one): every acknowledged batch is there whole at
/// its own version, no rejected batch leaves a trace, and versions are dense. On a durable
/// database (fsync `always`, so writers wait together), a reopen replays to the same state.
#[test]
fn combined_writers_keep_every_batch_atomic() {
    for durable in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let db = if durable { Database::open(tmp.path().join("db")).unwrap() } else { Database::in_memory() };
        let v0 = db.snapshot().version();
        let writers: Vec<_> = (0..12)
            .map(|w| {
                let db = db.clone();
                std::thread::spawn(move || {
                    let mut acked = Vec::new();
                    for i in 0..60 {
                        let mut b = WriteBatch::new("default");
                        let key = format!("w{w}-{i}");
                        b.upsert_entity(&key, "s", &key);
                        if i % 3 == 1 {
                            b.add_claim(AddClaim::new(key.as_str(), "likes", "nobody"));
                        } else {
                            b.upsert_entity(&format!("{key}-b"), "s", "B");
                            b.add_claim(AddClaim::new(key.as_str(), "likes", format!("{key}-b").as_str()));
                        }
                        match db.write(&b) {
                            Ok(info) => acked.push((key, info.version)),
                            Err(e) => {
                                assert_eq!(i % 3, 1, "{key}: {e}");
                                assert!(e.as_write().is_some_and(|w| w.op_index == 1), "{key}: {e}");
                            }
                        }
                    }
                    acked
                })
            })
            .collect();
        let acked: Vec<(String, u64)> = writers.into_iter().flat_map(|w| w.join().unwrap()).collect();
        assert_eq!(acked.len(), 12 * 40);
        let mut versions: Vec<u64> = acked.iter().map(|(_, v)| *v).collect();
        versions.sort_unstable();
        assert_eq!(versions, (v0 + 1..=v0 + acked.len() as u64).collect::<Vec<_>>(), "one version per acknowledged batch");
        let check = |db: &Database| {
            let snap = db.snapshot();
            assert_eq!(snap.version(), v0 + acked.len() as u64);
            assert_eq!(snap.counts(), (acked.len() * 2, acked.len(), 0));
            let ws = snap.workspace("default").unwrap();
            for w in 0..12 {
                for i in (1..60).step_by(3) {
                    assert!(ws.entity_id(&format!("w{w}-{i}")).is_none(), "rejected batch w{w}-{i} left a trace");
                }
            }
        };
        check(&db);
        // Dense ids and generated names come out as if the acknowledged batches had been applied
        // one by one in version order (groups and their rebuilds assign them in that order).
        let reference = Database::in_memory();
        let mut in_order = acked.clone();
        in_order.sort_by_key(|(_, v)| *v);
        for (key, _) in &in_order {
            let mut b = WriteBatch::new("default");
            b.upsert_entity(key, "s", key);
            b.upsert_entity(&format!("{key}-b"), "s", "B");
            b.add_claim(AddClaim::new(key.as_str(), "likes", format!("{key}-b").as_str()));
            reference.write(&b).unwrap();
        }
        assert_eq!(layout(&db), layout(&reference));
        if durable {
            let stats = db.commit_stats();
            assert!(stats.commits >= acked.len() as u64);
            // Every phase of a durable commit cycle ran, and was timed.
            assert!(
                stats.fsyncs > 0 && stats.apply_ns > 0 && stats.wal_write_ns > 0 && stats.fsync_ns > 0 && stats.ack_ns > 0,
                "{stats:?}"
            );
            db.wait_for_merge();
            drop(db);
            check(&Database::open(tmp.path().join("db")).unwrap());
        }
    }
}

/// Every entity (dense id, external id, name) and claim (dense id, external id, endpoints).
fn layout(db: &Database) -> Vec<String> {
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let (entities, claims, _) = snap.counts();
    let mut out = Vec::new();
    for e in 0..entities as u32 {
        if let Some(x) = ws.entity(engram::EntityId(e)) {
            out.push(format!("e{e} {} {}", x.ext_id, x.name));
        }
    }
    for c in 0..claims as u32 {
        if let Some(x) = ws.claim(engram::ClaimId(c)) {
            out.push(format!("c{c} {} {} {}", x.ext_id, x.subject.0, x.object.0));
        }
    }
    out
}

/// Every entity's neighbours as `(entity, claim, outgoing, neighbour)`, from adjacency.
fn adjacency_of(db: &Database, entities: u32) -> Vec<(u32, u32, bool, u32)> {
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let mut out = Vec::new();
    for e in 0..entities {
        if let Ok(page) = ws.neighbors(engram::EntityId(e), &NeighborQuery::default()) {
            out.extend(page.items.iter().map(|n| (e, n.claim.0, n.direction == engram::Direction::Out, n.neighbor.0)));
        }
    }
    out.sort_unstable();
    out
}

/// The same, from the claim columns alone (every claim here is live; merged-away entities hold none).
fn adjacency_from_columns(db: &Database, claims: u32) -> Vec<(u32, u32, bool, u32)> {
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let mut out = Vec::new();
    for c in 0..claims {
        let claim = ws.claim(engram::ClaimId(c)).unwrap();
        let (s, o) = (claim.subject.0, claim.object.0);
        out.push((s, c, true, o));
        out.push((o, c, false, s));
    }
    out.sort_unstable();
    out
}

/// Entity merges re-point claims while CSR rebuilds run beside them (each rebuild starts from an
/// older snapshot and must carry over the claims moved meanwhile): adjacency always equals the
/// claim columns.
#[test]
fn merges_during_csr_rebuilds_keep_adjacency_exact() {
    const N: u32 = 40;
    let db = Database::with_config(Config { merge_delta_edges_min: 16, background_merge: false, ..Config::default() });
    let mut b = WriteBatch::new("default");
    for e in 0..N {
        b.upsert_entity(&format!("e{e}"), "t", &format!("E{e}"));
    }
    db.write(&b).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let compactor = {
        let db = db.clone();
        let done = done.clone();
        std::thread::spawn(move || {
            let mut rebuilds = 0u32;
            while !done.load(Ordering::Acquire) {
                db.compact();
                rebuilds += 1;
            }
            rebuilds
        })
    };
    let mut claims = 0u32;
    let mut merged: Vec<u32> = Vec::new();
    for round in 0..300u32 {
        let mut b = WriteBatch::new("default");
        // Claims between entities that are not merged away.
        let live: Vec<u32> = (0..N).filter(|e| !merged.contains(e)).collect();
        for k in 0..3 {
            let (s, o) = (live[(round as usize * 7 + k) % live.len()], live[(round as usize * 13 + k * 5) % live.len()]);
            b.add_claim(AddClaim::new(engram::EntityId(s), "r", engram::EntityId(o)));
            claims += 1;
        }
        db.write(&b).unwrap();
        let mut b = WriteBatch::new("default");
        if round % 3 == 2 && !merged.is_empty() {
            let e = merged.pop().unwrap();
            b.push(Op::UnmergeEntity { entity: engram::EntityId(e).into() });
        } else if live.len() > 4 {
            let (from, into) = (live[round as usize % live.len()], live[(round as usize + 1) % live.len()]);
            b.push(Op::MergeEntities { from: engram::EntityId(from).into(), into: engram::EntityId(into).into() });
            merged.push(from);
        }
        if !b.is_empty() {
            db.write(&b).unwrap();
        }
        if round % 25 == 0 {
            assert_eq!(adjacency_of(&db, N), adjacency_from_columns(&db, claims), "round {round}");
        }
    }
    done.store(true, Ordering::Release);
    let rebuilds = compactor.join().unwrap();
    assert!(rebuilds > 0);
    assert_eq!(adjacency_of(&db, N), adjacency_from_columns(&db, claims));
}
