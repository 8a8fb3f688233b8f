//! Durability: a reopened database equals the one that was closed; the folder lock keeps a second
//! opener out; a torn WAL tail is cut to the last whole batch; a crash at every I/O operation of a
//! seeded workload loses no acknowledged batch and shows no partial one; an fsync failure stops all
//! later writes (fail-stop); a full disk refuses the write and the database goes on once space
//! returns; corruption before the tail is refused with the file and byte offset; a folder written
//! by this format version (checked in) keeps opening.

use engram::{
    AddClaim, ClaimState, Config, Database, EntityId, FsyncPolicy, ManualClock, NeighborQuery, Op, StorageError, Timestamp, Value,
    Visibility, WriteBatch,
};
use engram_storage::{FaultPlan, FaultyVfs, MemVfs, Vfs};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Everything observable, for equality across reopen.
fn fingerprint(db: &Database) -> String {
    let snap = db.snapshot();
    let (ne, nc, nv) = snap.counts();
    let mut out = format!("{ne} {nc} {nv}\n");
    for w in snap.workspaces() {
        let ws = snap.workspace(&w.name).unwrap();
        writeln!(out, "{} {}", w.name, w.created_at).unwrap();
        for e in 0..ne {
            if let Some(ent) = ws.entity(EntityId(e as u32)) {
                let n = ws.neighbors(ent.id, &NeighborQuery::default()).unwrap();
                let past = Visibility { known_as_of: Some(Timestamp::parse("2026-03-01T00:00:20Z").unwrap()), ..Visibility::default() };
                let then = ws.neighbors(ent.id, &NeighborQuery { visibility: past, ..NeighborQuery::default() }).unwrap();
                let all =
                    ws.neighbors(ent.id, &NeighborQuery { visibility: Visibility::all_versions(), ..NeighborQuery::default() }).unwrap();
                // The traversal kernel reads the CSR's stored visibility bits: compare it too.
                let mut reach: Vec<u32> =
                    ws.khop(&[ent.id], &engram::KHopQuery::depth(2)).unwrap().entities.iter().map(|r| r.entity.0).collect();
                reach.sort_unstable();
                writeln!(out, "{ent:?} {:?} {:?} {:?} {:?} {reach:?}", n.items, then.items, all.items, ws.find_by_name(&ent.name)).unwrap();
            }
        }
        for c in 0..nc {
            if let Some(claim) = ws.claim(engram::ClaimId(c as u32)) {
                writeln!(out, "{claim:?} {:?}", ws.evidence_of(claim.id).unwrap()).unwrap();
            }
        }
    }
    out
}

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(Timestamp::parse("2026-03-01T00:00:00Z").unwrap()))
}

/// Batch `i` of the seeded workload: entities, claims, lifecycle changes, evidence.
fn batch(i: usize) -> WriteBatch {
    let mut b = WriteBatch::new("default");
    b.upsert_entity(&format!("e{i}"), if i.is_multiple_of(3) { "service" } else { "person" }, &format!("Entity {i}"));
    if i > 0 {
        b.add_claim(
            AddClaim::new(format!("e{i}").as_str(), "depends_on", format!("e{}", i / 2).as_str())
                .id(&format!("c{i}"))
                .text("t")
                .confidence(0.5),
        );
        b.push(Op::AddEvidence(engram::AddEvidence {
            claim: Some(format!("c{i}").into()),
            conversation_id: Some(format!("conv-{i}")),
            ..Default::default()
        }));
    }
    if i > 2 && i.is_multiple_of(4) {
        b.push(Op::Deprecate { claim: format!("c{}", i - 1).into(), superseded_by: Some(format!("c{i}").into()) });
    }
    if i > 3 && i.is_multiple_of(5) {
        b.push(Op::DeleteClaim { claim: format!("c{}", i - 2).into() });
    }
    b
}

fn config(clock: &Arc<ManualClock>) -> Config {
    Config { clock: clock.clone(), background_merge: false, wal_segment_bytes_max: 2048, wal_preallocate_bytes: 512, ..Config::default() }
}

fn dir() -> PathBuf {
    PathBuf::from("/db")
}

#[test]
fn reopen_restores_everything_on_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let c = clock();
    let before = {
        let db = Database::open_with(tmp.path(), config(&c), Arc::new(engram_storage::OsVfs)).unwrap();
        for i in 0..40 {
            c.advance_seconds(1);
            db.write(&batch(i)).unwrap();
        }
        db.create_workspace("team").unwrap();
        let mut b = WriteBatch::new("team");
        b.upsert_entity("x", "t", "X").upsert_entity("y", "t", "Y").add_claim(AddClaim::new("x", "r", "y").state(ClaimState::Accepted));
        db.write(&b).unwrap();
        db.create_workspace("gone").unwrap();
        db.drop_workspace("gone").unwrap();
        // Locked while open.
        let second = Database::open_with(tmp.path(), config(&c), Arc::new(engram_storage::OsVfs));
        assert!(matches!(second.unwrap_err().as_storage(), Some(StorageError::Locked(_))));
        fingerprint(&db)
    };
    let db = Database::open_with(tmp.path(), config(&c), Arc::new(engram_storage::OsVfs)).unwrap();
    assert_eq!(fingerprint(&db), before);
    // And it keeps accepting writes that survive the next reopen too.
    db.write(&batch(40)).unwrap();
    let after = fingerprint(&db);
    drop(db);
    assert_eq!(fingerprint(&Database::open(tmp.path()).unwrap()), after);
}

/// Fingerprints after each batch of the workload, from an in-memory reference run.
fn expected_states(batches: usize) -> Vec<String> {
    let c = clock();
    let vfs = MemVfs::new();
    let db = Database::open_with(dir(), config(&c), Arc::new(vfs)).unwrap();
    let mut states = vec![fingerprint(&db)];
    for i in 0..batches {
        c.advance_seconds(1);
        db.write(&batch(i)).unwrap();
        states.push(fingerprint(&db));
    }
    states
}

fn wal_files(vfs: &MemVfs) -> Vec<PathBuf> {
    vfs.list(&dir()).unwrap().into_iter().filter(|n| Path::new(n).extension().is_some_and(|e| e == "wal")).map(|n| dir().join(n)).collect()
}

#[test]
fn torn_tail_recovers_to_the_last_whole_batch() {
    let n = 12;
    let states = expected_states(n);
    let c = clock();
    let vfs = MemVfs::new();
    {
        let db = Database::open_with(dir(), config(&c), Arc::new(vfs.clone())).unwrap();
        for i in 0..n {
            c.advance_seconds(1);
            db.write(&batch(i)).unwrap();
        }
    }
    let last = wal_files(&vfs).pop().unwrap();
    let full = vfs.bytes(&last).unwrap();
    for cut in (24..full.len()).step_by(7).chain([full.len() - 1]) {
        let v = MemVfs::new();
        for f in wal_files(&vfs) {
            v.set_bytes(&f, vfs.bytes(&f).unwrap());
        }
        v.set_bytes(&last, full[..cut].to_vec());
        let db = Database::open_with(dir(), config(&clock()), Arc::new(v)).unwrap();
        let got = fingerprint(&db);
        assert!(states.contains(&got), "cut at {cut}: state is not one of the whole-batch states");
    }
}

/// Runs the workload on a fault-injecting file system; returns how many batches were acknowledged.
fn run_faulty(vfs: &FaultyVfs, batches: usize, c: &Arc<ManualClock>) -> usize {
    let Ok(db) = Database::open_with(dir(), config(c), Arc::new(vfs.clone())) else { return 0 };
    let mut acked = 0;
    for i in 0..batches {
        c.advance_seconds(1);
        match db.write(&batch(i)) {
            Ok(_) => acked += 1,
            Err(_) => break,
        }
    }
    acked
}

#[test]
fn crash_at_every_io_operation_loses_nothing_acknowledged() {
    let n = 10;
    let states = expected_states(n);
    // Count the operations of a clean run.
    let clean = FaultyVfs::new(MemVfs::new(), FaultPlan::default());
    assert_eq!(run_faulty(&clean, n, &clock()), n);
    let total = clean.ops();
    for crash_at in 1..=total {
        for torn in [None, Some(5)] {
            let mem = MemVfs::new();
            let vfs = FaultyVfs::new(mem.clone(), FaultPlan { crash_at: Some(crash_at), torn_bytes: torn, ..FaultPlan::default() });
            let acked = run_faulty(&vfs, n, &clock());
            mem.crash();
            let db = Database::open_with(dir(), config(&clock()), Arc::new(mem)).unwrap();
            let got = fingerprint(&db);
            // Every acknowledged batch is there; nothing partial: the state is a whole-batch state
            // at or after the last acknowledgement.
            let at = states.iter().position(|s| *s == got).unwrap_or_else(|| panic!("crash at op {crash_at}: not a whole-batch state"));
            assert!(at >= acked, "crash at op {crash_at}: {acked} acknowledged, recovered {at}");
        }
    }
}

#[test]
fn fsync_failure_stops_every_later_write() {
    let c = clock();
    let mem = MemVfs::new();
    // Find the first sync after opening and one batch.
    let probe = FaultyVfs::new(MemVfs::new(), FaultPlan::default());
    let db = Database::open_with(dir(), config(&c), Arc::new(probe.clone())).unwrap();
    db.write(&batch(0)).unwrap();
    let before_second = probe.ops();
    drop(db);
    // The second batch's append is a write then a sync: fail that sync.
    let vfs = FaultyVfs::new(mem.clone(), FaultPlan { fail_sync_at: Some(before_second + 2), ..FaultPlan::default() });
    let db = Database::open_with(dir(), config(&c), Arc::new(vfs)).unwrap();
    db.write(&batch(0)).unwrap();
    let version = db.snapshot().version();
    let err = db.write(&batch(1)).unwrap_err();
    assert!(matches!(err.as_storage(), Some(StorageError::Poisoned(_))), "{err}");
    assert!(err.to_string().contains("fsync"), "{err}");
    assert_eq!(db.snapshot().version(), version, "the failed batch is not visible");
    let again = db.write(&batch(2)).unwrap_err();
    assert!(matches!(again.as_storage(), Some(StorageError::Poisoned(_))), "no later write is acknowledged");
    drop(db);
    let reopened = Database::open_with(dir(), config(&c), Arc::new(mem)).unwrap();
    assert!(reopened.snapshot().workspace("default").unwrap().entity_id("e0").is_some());
}

/// Fail-stop with many writers, where groups queue behind the fsync in flight and the fsync thread
/// leads: for each placement of the failing fsync among the first ones, every write acknowledged
/// survives a reopen, every refusal names the fsync, and once a writer is refused it is never
/// acknowledged again.
#[test]
fn fsync_failure_with_many_writers_is_fail_stop() {
    let c = clock();
    let probe = FaultyVfs::new(MemVfs::new(), FaultPlan::default());
    drop(Database::open_with(dir(), config(&c), Arc::new(probe.clone())).unwrap());
    let opened = probe.ops();
    let mut failures = 0;
    for fail_at in opened + 4..opened + 60 {
        let mem = MemVfs::new();
        let vfs = FaultyVfs::new(mem.clone(), FaultPlan { fail_sync_at: Some(fail_at), ..FaultPlan::default() });
        let db = Database::open_with(dir(), config(&c), Arc::new(vfs)).unwrap();
        let writers: Vec<_> = (0..8)
            .map(|w| {
                let db = db.clone();
                std::thread::spawn(move || {
                    let (mut acked, mut refused) = (Vec::new(), false);
                    for j in 0..12 {
                        let mut b = WriteBatch::new("default");
                        b.upsert_entity(&format!("w{w}-{j}"), "s", "S");
                        match db.write(&b) {
                            Ok(_) => {
                                assert!(!refused, "w{w}-{j} acknowledged after a refusal");
                                acked.push(format!("w{w}-{j}"));
                            }
                            Err(e) => {
                                // The failed fsync itself (a segment roll syncs in the writer), or
                                // the poisoned log after it.
                                assert!(e.as_storage().is_some() && e.to_string().contains("fsync"), "{e}");
                                refused = true;
                            }
                        }
                    }
                    (acked, refused)
                })
            })
            .collect();
        let results: Vec<(Vec<String>, bool)> = writers.into_iter().map(|w| w.join().unwrap()).collect();
        failures += usize::from(results.iter().any(|r| r.1));
        drop(db);
        let reopened = Database::open_with(dir(), config(&c), Arc::new(mem)).unwrap();
        let snap = reopened.snapshot();
        let ws = snap.workspace("default").unwrap();
        for key in results.iter().flat_map(|r| &r.0) {
            assert!(ws.entity_id(key).is_some(), "fsync {fail_at} failed: acknowledged {key} is lost");
        }
    }
    assert!(failures > 0, "some placement hit an fsync");
}

#[test]
fn disk_full_is_typed_and_recoverable() {
    let c = clock();
    let mem = MemVfs::new();
    let vfs = FaultyVfs::new(mem.clone(), FaultPlan::default());
    let db = Database::open_with(dir(), config(&c), Arc::new(vfs.clone())).unwrap();
    db.write(&batch(0)).unwrap();
    let vfs2 = FaultyVfs::new(mem.clone(), FaultPlan { disk_full_at: Some(1), ..FaultPlan::default() });
    drop(db);
    let db = Database::open_with(dir(), config(&c), Arc::new(vfs2.clone())).unwrap_or_else(|e| panic!("open reads only: {e}"));
    let err = db.write(&batch(1)).unwrap_err();
    assert!(matches!(err.as_storage(), Some(StorageError::DiskFull { .. })), "{err}");
    assert!(db.snapshot().workspace("default").unwrap().entity_id("e1").is_none());
    vfs2.clear_disk_full();
    db.write(&batch(1)).unwrap();
    db.write(&batch(2)).unwrap();
    let want = fingerprint(&db);
    drop(db);
    mem.crash();
    assert_eq!(fingerprint(&Database::open_with(dir(), config(&c), Arc::new(mem)).unwrap()), want);
}

#[test]
fn corruption_before_the_tail_is_refused_with_file_and_offset() {
    let c = clock();
    let mem = MemVfs::new();
    {
        let db = Database::open_with(dir(), config(&c), Arc::new(mem.clone())).unwrap();
        for i in 0..6 {
            db.write(&batch(i)).unwrap();
        }
    }
    let first = wal_files(&mem).remove(0);
    let mut bytes = mem.bytes(&first).unwrap();
    bytes[40] ^= 0x10;
    mem.set_bytes(&first, bytes);
    let err = Database::open_with(dir(), config(&c), Arc::new(mem.clone())).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err.as_storage(), Some(StorageError::Corruption { .. })), "{msg}");
    assert!(msg.contains("record checksum or length does not match") && msg.contains(&first.display().to_string()), "{msg}");
    // Nothing was "repaired": the file is as it was.
    let again = Database::open_with(dir(), config(&c), Arc::new(mem)).unwrap_err();
    assert_eq!(again.to_string(), msg);
}

/// Opens a copy of the checked-in fixture folder `name` (the fixture itself is never written).
fn open_fixture(name: &str) -> (tempfile::TempDir, Database) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name);
    let tmp = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&fixture).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), tmp.path().join(entry.file_name())).unwrap();
    }
    let db = Database::open(tmp.path()).unwrap();
    (tmp, db)
}

/// A folder written by WAL format 1 / record format 1, checked in under `tests/fixtures/v1`. If this
/// fails, a format change broke old databases: add a migration or a new version, never edit the
/// fixture.
#[test]
fn format_v1_fixture_keeps_opening() {
    let (_tmp, db) = open_fixture("v1");
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let a = ws.entity_id("auth").unwrap();
    assert_eq!(ws.entity(a).unwrap().name.as_ref(), "AuthService");
    let n = ws.neighbors(a, &NeighborQuery::default()).unwrap();
    assert_eq!(n.items.len(), 1);
    assert_eq!(ws.claim(n.items[0].claim).unwrap().text.as_deref(), Some("AuthService streams events with Kinesis"));
    assert_eq!(ws.claim(ws.claim_id("k1").unwrap()).unwrap().state, ClaimState::Deprecated);
}

/// Writes the v1 fixture (run by hand once per new format version:
/// `cargo test -p engram-tests --test it -- --ignored write_fixture`).
#[test]
#[ignore = "writes the checked-in fixture; run by hand for a new format version"]
fn write_fixture() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/v1");
    let _ = std::fs::remove_dir_all(&fixture);
    let c = clock();
    let db = Database::open_with(
        &fixture,
        Config { clock: c.clone(), fsync: FsyncPolicy::Always, ..Config::default() },
        Arc::new(engram_storage::OsVfs),
    )
    .unwrap();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("auth", "service", "AuthService")
        .upsert_entity("kafka", "technology", "Kafka")
        .upsert_entity("kinesis", "technology", "Kinesis")
        .add_claim(AddClaim::new("auth", "streams_events_with", "kafka").id("k1").state(ClaimState::Accepted));
    db.write(&b).unwrap();
    c.advance_seconds(60);
    let mut b = WriteBatch::new("default");
    b.add_claim(AddClaim::new("auth", "streams_events_with", "kinesis").id("k2").text("AuthService streams events with Kinesis"))
        .push(Op::Deprecate { claim: "k1".into(), superseded_by: Some("k2".into()) });
    db.write(&b).unwrap();
    drop(db);
    std::fs::remove_file(fixture.join(engram::LOCK_FILE)).unwrap();
    // The same, checkpointed, plus one commit after the snapshot (snapshot format 1 + WAL tail).
    let snap_fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/v1-snapshot");
    let _ = std::fs::remove_dir_all(&snap_fixture);
    std::fs::create_dir_all(&snap_fixture).unwrap();
    for entry in std::fs::read_dir(&fixture).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), snap_fixture.join(entry.file_name())).unwrap();
    }
    let db = Database::open_with(&snap_fixture, Config { clock: c.clone(), ..Config::default() }, Arc::new(engram_storage::OsVfs)).unwrap();
    db.set_setting("vector_dim", "3").unwrap();
    db.checkpoint().unwrap();
    c.advance_seconds(60);
    let mut b = WriteBatch::new("default");
    b.upsert_entity("kafka", "technology", "Apache Kafka");
    db.write(&b).unwrap();
    db.wait_for_merge();
    drop(db);
    std::fs::remove_file(snap_fixture.join(engram::LOCK_FILE)).unwrap();
}

/// Writes the format-2 fixture (record format 2, snapshot format 2): evidence with reasoning and
/// an entity merge in a snapshot, then a WAL tail. Run by hand once:
/// `cargo test -p engram-tests --test it -- --ignored write_fixture_v2`.
#[test]
#[ignore = "writes the checked-in fixture; run by hand for a new format version"]
fn write_fixture_v2() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/v2");
    let _ = std::fs::remove_dir_all(&fixture);
    let c = clock();
    let config = || Config { clock: c.clone(), fsync: FsyncPolicy::Always, wal_preallocate_bytes: 512, ..Config::default() };
    let db = Database::open_with(&fixture, config(), Arc::new(engram_storage::OsVfs)).unwrap();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("auth", "service", "AuthService")
        .upsert_entity("authsvc", "service", "Auth Svc")
        .upsert_entity("kinesis", "technology", "Kinesis")
        .add_claim(AddClaim::new("authsvc", "streams_events_with", "kinesis").id("k1"))
        .push(Op::AddEvidence(engram::AddEvidence {
            claim: Some("k1".into()),
            conversation_id: Some("conv-23".into()),
            reasoning: Some("stated by the architect".into()),
            ..engram::AddEvidence::default()
        }))
        .push(Op::MergeEntities { from: "authsvc".into(), into: "auth".into() });
    db.write(&b).unwrap();
    db.checkpoint().unwrap();
    c.advance_seconds(60);
    let mut b = WriteBatch::new("default");
    b.upsert_entity("kafka", "technology", "Kafka").add_claim(AddClaim::new("auth", "streams_events_with", "kafka").id("k2")).push(
        Op::AddEvidence(engram::AddEvidence {
            claim: Some("k2".into()),
            reasoning: Some("in the WAL tail".into()),
            ..engram::AddEvidence::default()
        }),
    );
    db.write(&b).unwrap();
    db.wait_for_merge();
    drop(db);
    std::fs::remove_file(fixture.join(engram::LOCK_FILE)).unwrap();
}

/// A format-2 folder (snapshot with reasoning and a merge, WAL tail), checked in under
/// `tests/fixtures/v2`. Never edit it: a format change gets a new version and fixture.
#[test]
fn format_v2_fixture_keeps_opening() {
    let (_tmp, db) = open_fixture("v2");
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let (auth, authsvc) = (ws.entity_id("auth").unwrap(), ws.entity_id("authsvc").unwrap());
    assert_eq!(ws.entity(authsvc).unwrap().merged_into, Some(auth));
    let k1 = ws.claim_id("k1").unwrap();
    assert_eq!(ws.claim(k1).unwrap().subject, auth);
    assert_eq!(ws.evidence_of(k1).unwrap()[0].reasoning.as_deref(), Some("stated by the architect"));
    let k2 = ws.claim_id("k2").unwrap();
    assert_eq!(ws.evidence_of(k2).unwrap()[0].reasoning.as_deref(), Some("in the WAL tail"));
    assert_eq!(ws.neighbors(auth, &NeighborQuery::default()).unwrap().items.len(), 2);
    assert_eq!(ws.find_by_name("Auth Svc"), vec![auth]);
    // A format-2 snapshot kept no vocabulary: it is derived from the rows, then the tail appends.
    let labels = ws.query("CALL db.labels()", &engram::Params::new()).unwrap().rows;
    let s = |v: &str| vec![engram::QueryValue::String(v.to_owned())];
    assert_eq!(labels, vec![s("service"), s("technology")]);
}

/// Writes the format-3 fixture (record format 3, snapshot format 3): what the query language
/// writes (labels as written, a nameless node, typed claim properties, a deleted node) in a
/// snapshot, then more in a WAL tail. Run by hand once:
/// `cargo test -p engram-tests --test it -- --ignored write_fixture_v3`.
#[test]
#[ignore = "writes the checked-in fixture; run by hand for a new format version"]
fn write_fixture_v3() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/v3");
    let _ = std::fs::remove_dir_all(&fixture);
    let c = clock();
    let config = || Config { clock: c.clone(), fsync: FsyncPolicy::Always, wal_preallocate_bytes: 512, ..Config::default() };
    let db = Database::open_with(&fixture, config(), Arc::new(engram_storage::OsVfs)).unwrap();
    let none = engram::Params::new();
    db.query("default", "CREATE (:Team:Core {name: 'Platform', size: 4})-[:OWNS {since: 2024}]->(), (:Gone)", &none).unwrap();
    db.query("default", "MATCH (g:Gone) DELETE g", &none).unwrap();
    db.checkpoint().unwrap();
    c.advance_seconds(60);
    db.query("default", "MATCH (t:Team) SET t:Lead, t.size = 5 CREATE (t)-[:LEADS {note: 'tail'}]->(:Project)", &none).unwrap();
    db.wait_for_merge();
    drop(db);
    std::fs::remove_file(fixture.join(engram::LOCK_FILE)).unwrap();
}

/// A format-3 folder (snapshot with the query language's elements, WAL tail), checked in under
/// `tests/fixtures/v3`. Never edit it: a format change gets a new version and fixture.
#[test]
fn format_v3_fixture_keeps_opening() {
    let (_tmp, db) = open_fixture("v3");
    let rows = |q: &str| db.query("default", q, &engram::Params::new()).unwrap().rows;
    let s = |v: &str| engram::QueryValue::String(v.to_owned());
    let team = rows("MATCH (t:Team)-[r:OWNS]->(x) RETURN labels(t), t.size, r.since, keys(x)");
    assert_eq!(team.len(), 1);
    assert_eq!(team[0][0], engram::QueryValue::List(vec![s("Team"), s("Core"), s("Lead")]));
    assert_eq!(team[0][1..], [engram::QueryValue::Int(5), engram::QueryValue::Int(2024), engram::QueryValue::List(vec![])]);
    assert_eq!(rows("MATCH (:Team)-[r:LEADS]->(p:Project) RETURN r.note"), vec![vec![s("tail")]]);
    assert_eq!(rows("MATCH (g:Gone) RETURN g").len(), 0);
    assert_eq!(rows("ALL VERSIONS MATCH (g:Gone) RETURN count(g)"), vec![vec![engram::QueryValue::Int(1)]]);
    let labels: Vec<_> = rows("CALL db.labels()").into_iter().flatten().collect();
    assert_eq!(labels, vec![s("Team"), s("Core"), s("Gone"), s("Lead"), s("Project")]);
}

/// A folder with a format-1 snapshot and a WAL tail after it, checked in under
/// `tests/fixtures/v1-snapshot`. Never edit it: a format change gets a new version and fixture.
#[test]
fn format_v1_snapshot_fixture_keeps_opening() {
    let (_tmp, db) = open_fixture("v1-snapshot");
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let kafka = ws.entity_id("kafka").unwrap();
    assert_eq!(ws.entity(kafka).unwrap().name.as_ref(), "Apache Kafka", "the WAL tail after the snapshot");
    assert_eq!(ws.find_by_name("kafka"), vec![kafka], "the old name stays an alias");
    let auth = ws.entity_id("auth").unwrap();
    let n = ws.neighbors(auth, &NeighborQuery::default()).unwrap();
    assert_eq!(n.items.len(), 1);
    assert_eq!(ws.khop(&[auth], &engram::KHopQuery::depth(1)).unwrap().entities.len(), 2);
    assert_eq!(db.settings().vector_dim, Some(3));
}

fn names(vfs: &MemVfs, ext: &str) -> Vec<String> {
    vfs.list(&dir()).unwrap().into_iter().filter(|n| Path::new(n).extension().is_some_and(|e| e == ext)).collect()
}

/// A richer workload for snapshots: properties, aliases, deletes, a dropped workspace, a bulk load.
fn rich(db: &Database, c: &Arc<ManualClock>, from: usize, to: usize) {
    for i in from..to {
        c.advance_seconds(1);
        let mut b = WriteBatch::new("default");
        if i > 7 && (i - 1).is_multiple_of(7) {
            b.push(Op::RestoreEntity { entity: format!("e{}", i - 4).into() });
        }
        b.ops.extend(batch(i).ops);
        // A claim with words to search (`batch`'s texts are "t", a stop word).
        b.add_claim(
            AddClaim::new(format!("e{i}").as_str(), "noted", format!("e{i}").as_str()).id(&format!("n{i}")).text(&format!("note {i}")),
        );
        b.push(Op::SetProperty { entity: format!("e{i}").into(), key: "tier".into(), value: Value::Int(i as i64) });
        b.push(Op::AddAlias { entity: format!("e{i}").into(), alias: format!("alias {i}") });
        if i > 6 && i.is_multiple_of(7) {
            b.push(Op::DeleteEntity { entity: format!("e{}", i - 3).into() });
        }
        db.write(&b).unwrap();
    }
}

fn no_auto(c: &Arc<ManualClock>) -> Config {
    Config { checkpoint_wal_bytes: u64::MAX, ..config(c) }
}

#[test]
fn checkpoint_then_reopen_equals_before() {
    let c = clock();
    let mem = MemVfs::new();
    let before = {
        let db = Database::open_with(dir(), no_auto(&c), Arc::new(mem.clone())).unwrap();
        rich(&db, &c, 0, 30);
        db.create_workspace("gone").unwrap();
        db.drop_workspace("gone").unwrap();
        db.create_workspace("bulk").unwrap();
        let mut load = engram::BulkLoad { workspace: "bulk".into(), ..Default::default() };
        load.entities.type_names = vec!["t".into()];
        for i in 0..5 {
            load.entities.ext_id.push(&format!("b{i}"));
            load.entities.name.push(&format!("Bulk {i}"));
            load.entities.entity_type.push(0);
        }
        load.claims.predicate_names = vec!["r".into()];
        for i in 0..4u32 {
            load.claims.subject.push(i);
            load.claims.object.push(i + 1);
            load.claims.predicate.push(0);
            load.claims.confidence.push(0.5);
            load.claims.state.push(ClaimState::Accepted);
        }
        db.bulk_load(&load).unwrap();
        let snap_path = db.checkpoint().unwrap().unwrap();
        assert!(mem.exists(&snap_path));
        assert_eq!(wal_files(&mem).len(), 1, "covered segments are removed");
        rich(&db, &c, 30, 40);
        fingerprint(&db)
    };
    let db = Database::open_with(dir(), no_auto(&c), Arc::new(mem.clone())).unwrap();
    assert_eq!(fingerprint(&db), before, "snapshot + WAL tail");
    db.checkpoint().unwrap();
    assert_eq!(names(&mem, "snap").len(), 1, "older snapshots are removed");
    drop(db);
    let db = Database::open_with(dir(), no_auto(&c), Arc::new(mem.clone())).unwrap();
    assert_eq!(fingerprint(&db), before, "snapshot alone");
    rich(&db, &c, 40, 45);
    let after = fingerprint(&db);
    drop(db);
    assert_eq!(fingerprint(&Database::open_with(dir(), no_auto(&c), Arc::new(mem)).unwrap()), after);
}

#[test]
fn automatic_checkpoints_by_wal_size() {
    let c = clock();
    let mem = MemVfs::new();
    let cfg = || Config { checkpoint_wal_bytes: 4096, ..config(&c) };
    let db = Database::open_with(dir(), cfg(), Arc::new(mem.clone())).unwrap();
    rich(&db, &c, 0, 60);
    for _ in 0..300 {
        if !names(&mem, "snap").is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(!names(&mem, "snap").is_empty(), "a checkpoint was written");
    let want = fingerprint(&db);
    drop(db);
    // A background checkpoint holds a handle (and the folder lock) until it ends.
    let reopened = (0..300)
        .find_map(|_| match Database::open_with(dir(), cfg(), Arc::new(mem.clone())) {
            Ok(db) => Some(db),
            Err(_) => {
                std::thread::sleep(std::time::Duration::from_millis(10));
                None
            }
        })
        .expect("the folder is released once the background checkpoint ends");
    assert_eq!(fingerprint(&reopened), want);
}

#[test]
fn corrupt_snapshot_is_refused_by_name() {
    let c = clock();
    let mem = MemVfs::new();
    {
        let db = Database::open_with(dir(), no_auto(&c), Arc::new(mem.clone())).unwrap();
        rich(&db, &c, 0, 10);
        db.checkpoint().unwrap();
    }
    let snap = dir().join(names(&mem, "snap").remove(0));
    let mut bytes = mem.bytes(&snap).unwrap();
    let at = bytes.len() - 10;
    bytes[at] ^= 0x01;
    mem.set_bytes(&snap, bytes);
    let err = Database::open_with(dir(), no_auto(&c), Arc::new(mem)).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("checksum mismatch") && msg.contains(&snap.display().to_string()), "{msg}");
}

fn copy_of(base: &MemVfs) -> MemVfs {
    let mem = MemVfs::new();
    for f in base.list(&dir()).unwrap() {
        mem.set_bytes(&dir().join(&f), base.bytes(&dir().join(&f)).unwrap());
    }
    mem
}

/// Keyword answers over entity names and aliases and over claim texts.
fn keyword_answers(db: &Database) -> String {
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    format!(
        "{:?} {:?}",
        ws.search_entity_text("alias", 50, &Visibility::default()).unwrap(),
        ws.search_claim_text("note", 50, &Visibility::all_versions()).unwrap()
    )
}

/// A crash at every I/O operation of a checkpoint (the snapshot, then its keyword-index file,
/// then removals) leaves a folder that opens to the same state and the same keyword answers,
/// including when the snapshot landed and its keyword-index file did not.
#[test]
fn crash_at_every_operation_of_a_checkpoint() {
    let c = clock();
    let base = MemVfs::new();
    let (want, want_answers) = {
        let db = Database::open_with(dir(), no_auto(&c), Arc::new(base.clone())).unwrap();
        rich(&db, &c, 0, 15);
        let snap = db.snapshot();
        let ws = snap.workspace("default").unwrap();
        assert!(!ws.search_entity_text("alias", 50, &Visibility::default()).unwrap().is_empty(), "entity answers to compare");
        assert!(!ws.search_claim_text("note", 50, &Visibility::all_versions()).unwrap().is_empty(), "claim answers to compare");
        (fingerprint(&db), keyword_answers(&db))
    };
    let mut snapshot_without_text = 0;
    let probe = FaultyVfs::new(copy_of(&base), FaultPlan::default());
    let db = Database::open_with(dir(), no_auto(&c), Arc::new(probe.clone())).unwrap();
    let start = probe.ops();
    db.checkpoint().unwrap();
    let end = probe.ops();
    drop(db);
    for crash_at in start + 1..=end {
        let mem = copy_of(&base);
        let vfs = FaultyVfs::new(mem.clone(), FaultPlan { crash_at: Some(crash_at), torn_bytes: Some(100), ..FaultPlan::default() });
        if let Ok(db) = Database::open_with(dir(), no_auto(&c), Arc::new(vfs)) {
            let _ = db.checkpoint();
        }
        mem.crash();
        let snaps = names(&mem, "snap");
        let newest = snaps.iter().max().cloned();
        if newest.is_some_and(|n| !names(&mem, "text").contains(&n.replace(".snap", ".text"))) {
            snapshot_without_text += 1;
        }
        let db = Database::open_with(dir(), no_auto(&c), Arc::new(mem.clone())).unwrap_or_else(|e| panic!("crash at op {crash_at}: {e}"));
        assert_eq!(fingerprint(&db), want, "crash at op {crash_at}");
        assert_eq!(keyword_answers(&db), want_answers, "crash at op {crash_at}");
        assert!(names(&mem, "tmp").is_empty(), "leftover temporary files are removed at open");
    }
    assert!(snapshot_without_text > 0, "some crash left the new snapshot without its keyword-index file");
}

#[test]
fn read_only_open_beside_a_writer() {
    let tmp = tempfile::tempdir().unwrap();
    let c = clock();
    let writer = Database::open_with(tmp.path(), no_auto(&c), Arc::new(engram_storage::OsVfs)).unwrap();
    for i in 0..10 {
        writer.write(&batch(i)).unwrap();
    }
    let ro = Database::open_read_only(tmp.path()).unwrap();
    assert_eq!(fingerprint(&ro), fingerprint(&writer));
    assert!(matches!(ro.write(&batch(10)), Err(engram::Error::ReadOnly)));
    assert!(matches!(ro.checkpoint(), Err(engram::Error::ReadOnly)));
    assert!(matches!(ro.write_entity_vectors(1, &[0.0]), Err(engram::Error::ReadOnly)));
    writer.checkpoint().unwrap();
    for i in 10..15 {
        writer.write(&batch(i)).unwrap();
    }
    let ro2 = Database::open_read_only(tmp.path()).unwrap();
    assert_eq!(fingerprint(&ro2), fingerprint(&writer), "snapshot + WAL written since");
    assert!(fingerprint(&ro) != fingerprint(&ro2), "a read-only view is a snapshot in time");
}

#[test]
fn online_backup_is_consistent_and_opens() {
    let tmp = tempfile::tempdir().unwrap();
    let c = clock();
    let db = Database::open_with(tmp.path().join("live"), no_auto(&c), Arc::new(engram_storage::OsVfs)).unwrap();
    for i in 0..20 {
        db.write(&batch(i)).unwrap();
    }
    // The reference: the same batches, same clock (never advanced: commit times step by 1 µs).
    let states: Vec<String> = {
        let reference = Database::open_with(dir(), no_auto(&clock()), Arc::new(MemVfs::new())).unwrap();
        let mut v = vec![fingerprint(&reference)];
        for i in 0..60 {
            reference.write(&batch(i)).unwrap();
            v.push(fingerprint(&reference));
        }
        v
    };
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            for i in 20..60 {
                db.write(&batch(i)).unwrap();
            }
        })
    };
    let path = db.backup(tmp.path().join("copy")).unwrap();
    writer.join().unwrap();
    assert!(path.exists());
    let copy = Database::open_with(tmp.path().join("copy"), no_auto(&c), Arc::new(engram_storage::OsVfs)).unwrap();
    let got = fingerprint(&copy);
    let at = states.iter().position(|s| *s == got).expect("the backup is a whole-batch state");
    assert!(at >= 20, "everything acknowledged before the backup is in it");
    // The copy is a database of its own.
    copy.write(&batch(at)).unwrap();
    let err = db.backup(tmp.path().join("copy")).unwrap_err();
    assert!(err.to_string().contains("already holds a database"), "{err}");
}

/// A WAL-only reopen (the replay defers adjacency and keyword indexes to its end) gives the same
/// state as before, including entity deletions, restores and a forget in the middle of the log,
/// which read adjacency while the log replays, and the same keyword answers.
#[test]
fn wal_replay_with_deferred_indexes_equals_before() {
    let c = clock();
    let mem = MemVfs::new();
    let search = |db: &Database| {
        let snap = db.snapshot();
        let ws = snap.workspace("default").unwrap();
        (
            ws.search_entity_text("alias", 50, &Visibility::default()).unwrap(),
            ws.search_claim_text("note", 50, &Visibility::all_versions()).unwrap(),
        )
    };
    let before = {
        let db = Database::open_with(dir(), no_auto(&c), Arc::new(mem.clone())).unwrap();
        rich(&db, &c, 0, 20);
        let mut b = WriteBatch::new("default");
        b.push(Op::Forget(engram::ForgetTarget::Entity("e5".into())));
        db.write(&b).unwrap();
        rich(&db, &c, 20, 30);
        assert!(names(&mem, "snap").is_empty(), "the reopen below replays the log alone");
        let found = search(&db);
        assert!(!found.0.is_empty() && !found.1.is_empty(), "both searches have answers to compare");
        (fingerprint(&db), found)
    };
    let db = Database::open_with(dir(), no_auto(&c), Arc::new(mem)).unwrap();
    assert_eq!(fingerprint(&db), before.0);
    assert_eq!(search(&db), before.1);
}

/// A checkpoint that fails on a full disk, at any of its I/O operations, leaves a folder that
/// reads (no empty WAL segment, nothing half-written under a real name): a read-only open and a
/// writable reopen both see every commit.
#[test]
fn a_failed_checkpoint_leaves_the_folder_as_it_was() {
    let c = clock();
    let base = MemVfs::new();
    {
        let db = Database::open_with(dir(), no_auto(&c), Arc::new(base.clone())).unwrap();
        rich(&db, &c, 0, 8);
    }
    let want = fingerprint(&Database::open_read_only_with(dir(), no_auto(&c), Arc::new(base.clone())).unwrap());
    let real_files = |mem: &MemVfs| {
        let mut v: Vec<(String, u64)> = mem
            .list(&dir())
            .unwrap()
            .into_iter()
            .filter(|n| Path::new(n).extension().is_none_or(|e| e != "tmp"))
            .map(|n| {
                // A WAL segment's preallocated zeros are not content: a roll cuts them.
                let mut bytes = mem.bytes(&dir().join(&n)).unwrap();
                if Path::new(&n).extension().is_some_and(|e| e == "wal") {
                    while bytes.last() == Some(&0) {
                        bytes.pop();
                    }
                }
                (n.clone(), {
                    use std::hash::{Hash, Hasher};
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    bytes.hash(&mut h);
                    h.finish()
                })
            })
            .collect();
        v.sort();
        v
    };
    let mut failures = 0;
    for at in 1..200 {
        let mem = copy_of(&base);
        let vfs = FaultyVfs::new(mem.clone(), FaultPlan::default());
        let db = Database::open_with(dir(), no_auto(&c), Arc::new(vfs.clone())).unwrap();
        let start = vfs.ops();
        let vfs_full = FaultyVfs::new(mem.clone(), FaultPlan { disk_full_at: Some(start + at), ..FaultPlan::default() });
        drop(db);
        let db = Database::open_with(dir(), no_auto(&c), Arc::new(vfs_full.clone())).unwrap();
        match db.checkpoint() {
            Ok(_) => {
                if at > 150 {
                    break;
                }
                continue;
            }
            Err(e) => {
                failures += 1;
                assert!(matches!(e.as_storage(), Some(StorageError::DiskFull { .. } | StorageError::Poisoned(_))), "{e}");
            }
        }
        drop(db);
        // What was there before the checkpoint is there or replaced by what the checkpoint
        // finished (a snapshot); no WAL segment is left shorter than its header.
        let after = real_files(&mem);
        assert!(!after.is_empty());
        for (name, _) in after.iter().filter(|(n, _)| Path::new(n).extension().is_some_and(|e| e == "wal")) {
            assert!(mem.bytes(&dir().join(name)).unwrap().len() >= 24, "op {at} left a short segment {name}");
        }
        let read = Database::open_read_only_with(dir(), no_auto(&c), Arc::new(mem.clone())).unwrap_or_else(|e| panic!("op {at}: {e}"));
        assert_eq!(fingerprint(&read), want, "read-only after a failed checkpoint at op {at}");
        let again = Database::open_with(dir(), no_auto(&c), Arc::new(mem.clone())).unwrap_or_else(|e| panic!("op {at}: {e}"));
        assert_eq!(fingerprint(&again), want);
    }
    assert!(failures > 3, "the checkpoint failed at several operations");
}

/// A full disk fails a whole ingest group with the operator's error (what stops `engram ingest`
/// at once), writes none of it, and the database takes the same documents once space is back.
#[test]
fn a_full_disk_fails_an_ingest_group_whole() {
    let c = clock();
    let mem = MemVfs::new();
    drop(Database::open_with(dir(), config(&c), Arc::new(mem.clone())).unwrap());
    let vfs = FaultyVfs::new(mem.clone(), FaultPlan { disk_full_at: Some(1), ..FaultPlan::default() });
    let db = Database::open_with(dir(), config(&c), Arc::new(vfs.clone())).unwrap();
    let docs: Vec<_> = (0..5)
        .map(|i| {
            engram::ingest::parse(&format!(
                r#"{{"source": {{"conversation_id": "c", "message_id": "m{i}"}}, "entities": [{{"name": "E{i}", "type": "t"}}, {{"name": "F{i}", "type": "t"}}],
                    "claims": [{{"subject": "E{i}", "predicate": "p", "object": "F{i}", "confidence": 0.5}}]}}"#
            ))
            .unwrap()
        })
        .collect();
    let reports = db.ingest_docs(docs.clone(), &engram::ingest::IngestOptions::default()).unwrap();
    assert_eq!(reports.len(), 5);
    for r in &reports {
        let e = r.as_ref().unwrap_err();
        assert_eq!(e.class(), engram::ErrorClass::Operator, "{e}");
    }
    assert_eq!(db.snapshot().counts().1, 0, "nothing of the group was written");
    vfs.clear_disk_full();
    let reports = db.ingest_docs(docs, &engram::ingest::IngestOptions::default()).unwrap();
    assert!(reports.iter().all(|r| r.as_ref().is_ok_and(|r| !r.duplicate)));
    drop(db);
    assert_eq!(Database::open_with(dir(), config(&c), Arc::new(mem)).unwrap().snapshot().counts().1, 5);
}

/// A write group's access records ride in its WAL write (one fsync for both, none of the
/// history's own). A power loss that takes the history's unsynced tail loses none of them:
/// reopening puts back exactly the ones missing, each once, in order; a clean reopen adds none;
/// a checkpoint makes them durable in the history before the WAL that carried them goes.
#[test]
fn access_records_ride_with_their_writes_through_a_crash() {
    use engram::db::audit::AuditFilter;
    use engram::{Access, Params, Principal};
    let c = clock();
    let mem = MemVfs::new();
    let ann = Arc::new(Principal::named("ann").grant("default", Access::Write, false));
    let ops = |db: &Database| -> Vec<String> {
        db.access_history(&AuditFilter::default()).unwrap().into_iter().filter(|r| r.user == "ann").map(|r| r.text).collect()
    };
    let group = |db: &Database, from: usize| {
        let texts: Vec<String> = (from..from + 3).map(|i| format!("CREATE (:W {{n: {i}}})")).collect();
        let p = Params::new();
        let queries: Vec<(&str, &str, &Params)> = texts.iter().map(|t| ("default", t.as_str(), &p)).collect();
        for r in db.scope(ann.clone()).query_group(&queries) {
            r.unwrap();
        }
    };
    let want = |n: usize| -> Vec<String> { (0..n).map(|i| format!("CREATE (:W {{n: {i}}})")).collect() };
    // The process dies (every file operation fails from then on), then the power goes (the
    // files lose what was not synced).
    let crash = |db: Database, vfs: &FaultyVfs| {
        vfs.crash_now();
        drop(db);
        mem.crash();
    };
    // A flush interval long enough that the history writes nothing of its own before the crash.
    let vfs = FaultyVfs::new(mem.clone(), FaultPlan::default());
    let db = Database::open_with(dir(), config(&c), Arc::new(vfs.clone())).unwrap();
    db.set_setting("audit_flush_ms", "60000").unwrap();
    drop(db);
    let db = Database::open_with(dir(), config(&c), Arc::new(vfs.clone())).unwrap();
    let before = db.commit_stats().fsyncs;
    group(&db, 0);
    group(&db, 3);
    assert_eq!(db.commit_stats().fsyncs - before, 2, "one fsync per group");
    crash(db, &vfs);
    let on_disk = engram::db::audit::read_dir(&mem, &dir().join("audit"), &AuditFilter::default()).unwrap();
    assert!(on_disk.iter().all(|r| r.user != "ann"), "the history synced nothing of its own");
    let db = Database::open_with(dir(), config(&c), Arc::new(mem.clone())).unwrap();
    assert_eq!(ops(&db), want(6), "the WAL put back the records the history lost, once each");
    let count = db.query("default", "MATCH (w:W) RETURN count(w)", &Params::new()).unwrap().rows;
    assert_eq!(count, vec![vec![engram::QueryValue::Int(6)]]);
    group(&db, 6);
    drop(db);
    // A clean close wrote everything: reopening (the WAL still carries all nine) adds nothing.
    let db = Database::open_with(dir(), config(&c), Arc::new(mem.clone())).unwrap();
    assert_eq!(ops(&db), want(9));
    group(&db, 9);
    // The checkpoint removes the WAL that carried them: the history holds them durably first.
    db.checkpoint().unwrap();
    drop(db);
    let vfs = FaultyVfs::new(mem.clone(), FaultPlan::default());
    let db = Database::open_with(dir(), config(&c), Arc::new(vfs.clone())).unwrap();
    group(&db, 12);
    db.checkpoint().unwrap();
    crash(db, &vfs);
    let db = Database::open_with(dir(), config(&c), Arc::new(mem.clone())).unwrap();
    assert_eq!(ops(&db), want(15));
}

/// The history read from the files alone (`engram audit DIR`, while a server holds the folder or
/// after it was killed) includes the records the data WAL carried that the history's file has
/// not got yet, once each.
#[test]
fn the_history_read_from_the_files_includes_what_the_wal_carries() {
    use engram::db::audit::{read_access_history, AuditFilter};
    use engram::{Access, Params, Principal};
    let tmp = tempfile::tempdir().unwrap();
    let db = Database::open(tmp.path()).unwrap();
    db.set_setting("audit_flush_ms", "60000").unwrap();
    drop(db);
    let db = Database::open(tmp.path()).unwrap();
    let ann = Arc::new(Principal::named("ann").grant("default", Access::Write, false));
    let texts: Vec<String> = (0..3).map(|i| format!("CREATE (:W {{n: {i}}})")).collect();
    let p = Params::new();
    let queries: Vec<(&str, &str, &Params)> = texts.iter().map(|t| ("default", t.as_str(), &p)).collect();
    let ann_texts = || -> Vec<String> {
        let all = read_access_history(tmp.path(), &AuditFilter::default()).unwrap();
        all.into_iter().filter(|r| r.user == "ann").map(|r| r.text).collect()
    };
    for r in db.scope(ann.clone()).query_group(&queries) {
        r.unwrap();
    }
    // The history's flusher has written nothing yet: the records are in the data WAL alone.
    assert_eq!(ann_texts(), texts);
    drop(db);
    // Now in both: still once each.
    assert_eq!(ann_texts(), texts);
}

/// Writers committing groups at once, a checkpoint among them, then a crash: every answered
/// write's access record is in the reopened history exactly once.
#[test]
fn concurrent_groups_keep_each_answered_record_once_through_a_crash() {
    use engram::db::audit::AuditFilter;
    use engram::{Access, Params, Principal};
    let c = clock();
    let mem = MemVfs::new();
    let vfs = FaultyVfs::new(mem.clone(), FaultPlan::default());
    let db = Database::open_with(dir(), config(&c), Arc::new(vfs.clone())).unwrap();
    db.set_setting("audit_flush_ms", "60000").unwrap();
    drop(db);
    let db = Database::open_with(dir(), config(&c), Arc::new(vfs.clone())).unwrap();
    let answered: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..4)
            .map(|t| {
                let db = db.clone();
                s.spawn(move || {
                    let who = Arc::new(Principal::named(&format!("w{t}")).grant("default", Access::Write, false));
                    let mut done = Vec::new();
                    for g in 0..10 {
                        let texts: Vec<String> = (0..3).map(|i| format!("CREATE (:W {{t: {t}, g: {g}, i: {i}}})")).collect();
                        let p = Params::new();
                        let queries: Vec<(&str, &str, &Params)> = texts.iter().map(|q| ("default", q.as_str(), &p)).collect();
                        for (text, r) in texts.iter().zip(db.scope(who.clone()).query_group(&queries)) {
                            r.unwrap();
                            done.push(text.clone());
                        }
                        if t == 0 && g == 5 {
                            db.checkpoint().unwrap();
                        }
                    }
                    done
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    vfs.crash_now();
    drop(db);
    mem.crash();
    let db = Database::open_with(dir(), config(&c), Arc::new(mem.clone())).unwrap();
    let history: Vec<String> =
        db.access_history(&AuditFilter::default()).unwrap().into_iter().filter(|r| r.user.starts_with('w')).map(|r| r.text).collect();
    assert_eq!(answered.len(), 120);
    for text in &answered {
        assert_eq!(history.iter().filter(|h| *h == text).count(), 1, "{text}");
    }
    assert_eq!(history.len(), answered.len());
}

/// A single write query through an audited scope (and the embedded root with `audit_root`):
/// its record rides in its group's WAL write, one fsync for both, and survives a crash; a
/// failed write's record is still synced on its own.
#[test]
fn an_audited_write_query_costs_one_fsync_and_keeps_its_record() {
    use engram::db::audit::AuditFilter;
    use engram::{Access, Params, Principal};
    let c = clock();
    let mem = MemVfs::new();
    let vfs = FaultyVfs::new(mem.clone(), FaultPlan::default());
    let db = Database::open_with(dir(), config(&c), Arc::new(vfs.clone())).unwrap();
    db.set_setting("audit_flush_ms", "60000").unwrap();
    db.set_setting("audit_root", "on").unwrap();
    drop(db);
    let db = Database::open_with(dir(), config(&c), Arc::new(vfs.clone())).unwrap();
    let ann = db.scope(Arc::new(Principal::named("ann").grant("default", Access::Write, false)));
    let p = Params::new();
    // A read, then a write that fails: its record is synced on its own (with the read's).
    ann.query("default", "MATCH (w:W) RETURN count(w)", &p).unwrap();
    assert!(ann.query("default", "CREATE (:W {n: 1/0})", &p).is_err());
    let before = db.commit_stats().fsyncs;
    ann.query("default", "CREATE (:W {n: 1})", &p).unwrap();
    db.query("default", "CREATE (:W {n: 2})", &p).unwrap();
    assert_eq!(db.commit_stats().fsyncs - before, 2, "one fsync per write");
    let texts = |db: &Database| -> Vec<(String, String, String)> {
        let all = db.access_history(&AuditFilter::default()).unwrap();
        all.into_iter()
            .filter(|r| r.op == "query")
            .map(|r| (r.user, r.text, r.outcome.split(':').next().unwrap_or("").to_owned()))
            .collect()
    };
    let want = vec![
        ("ann".to_owned(), "MATCH (w:W) RETURN count(w)".to_owned(), "ok".to_owned()),
        ("ann".to_owned(), "CREATE (:W {n: 1/0})".to_owned(), "error".to_owned()),
        ("ann".to_owned(), "CREATE (:W {n: 1})".to_owned(), "ok".to_owned()),
        ("root".to_owned(), "CREATE (:W {n: 2})".to_owned(), "ok".to_owned()),
    ];
    vfs.crash_now();
    drop(db);
    mem.crash();
    // On disk in the history: the first two; the writes' records rode in the data WAL alone.
    let on_disk: Vec<String> =
        engram::db::audit::read_dir(&mem, &dir().join("audit"), &AuditFilter::default()).unwrap().into_iter().map(|r| r.text).collect();
    assert_eq!(on_disk, ["MATCH (w:W) RETURN count(w)", "CREATE (:W {n: 1/0})"]);
    let db = Database::open_with(dir(), config(&c), Arc::new(mem.clone())).unwrap();
    assert_eq!(texts(&db), want);
}
