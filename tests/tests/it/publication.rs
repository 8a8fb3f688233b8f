//! Publication: a state becomes visible only through the commit module's one path. Under fsync
//! policy `always`, with the WAL's fsync held still, no reader sees a commit before it is durable,
//! not even when entity vectors are imported meanwhile; once the fsync returns, both the commit and
//! the vectors are visible, and stay so.

use engram::{AddClaim, Config, Database, FsyncPolicy, WriteBatch};
use engram_storage::{FaultPlan, FaultyVfs, MemVfs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Waits (bounded) until `cond` holds.
fn wait_until(what: &str, cond: impl Fn() -> bool) {
    for _ in 0..10_000 {
        if cond() {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("timed out waiting until {what}");
}

#[test]
fn nothing_is_published_ahead_of_its_fsync_and_imported_vectors_survive_the_group() {
    let vfs = FaultyVfs::new(MemVfs::new(), FaultPlan::default());
    let config = Config { fsync: FsyncPolicy::Always, background_merge: false, ..Config::default() };
    let db = Database::open_with("/db", config, Arc::new(vfs.clone())).unwrap();
    let mut setup = WriteBatch::new("default");
    for i in 0..4 {
        setup.upsert_entity(&format!("e{i}"), "service", &format!("Entity {i}"));
    }
    db.write(&setup).unwrap();
    // The dimension is set beforehand, so the import itself needs no settings commit.
    db.set_setting("vector_dim", "2").unwrap();
    let claims_before = db.snapshot().counts().1;

    // The disk holds every WAL fsync still: a writer's group is written and waits for it.
    vfs.hold_syncs(".wal");
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            let mut b = WriteBatch::new("default");
            b.add_claim(AddClaim::new("e0", "DEPENDS_ON", "e1"));
            db.write(&b)
        })
    };
    wait_until("the writer's group waits for its fsync", || vfs.held_syncs() > 0);

    // A reader polls throughout: it must never see the undurable claim while the fsync is held.
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (db, stop, vfs) = (db.clone(), stop.clone(), vfs.clone());
        std::thread::spawn(move || {
            let mut early = 0;
            while !stop.load(Ordering::SeqCst) {
                let snap = db.snapshot();
                if snap.counts().1 > claims_before && vfs.held_syncs() > 0 {
                    early += 1;
                }
                std::thread::yield_now();
            }
            early
        })
    };

    // Entity vectors are imported while the group waits.
    let importer = {
        let db = db.clone();
        std::thread::spawn(move || db.write_entity_vectors(2, &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.5, 0.5]))
    };
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(db.snapshot().counts().1, claims_before, "a claim was published before its fsync");
    assert!(db.entity_vector(engram::EntityId(0)).is_none(), "vectors published ahead of an undurable group");

    vfs.release_syncs();
    writer.join().unwrap().unwrap();
    assert_eq!(importer.join().unwrap().unwrap(), 4);
    stop.store(true, Ordering::SeqCst);
    assert_eq!(reader.join().unwrap(), 0, "a reader saw an undurable commit");

    // Both are visible now, and stay visible after later groups publish.
    let snap = db.snapshot();
    assert_eq!(snap.counts().1, claims_before + 1);
    assert_eq!(db.entity_vector(engram::EntityId(0)), Some(vec![1.0, 0.0]));
    let mut later = WriteBatch::new("default");
    later.add_claim(AddClaim::new("e2", "DEPENDS_ON", "e3"));
    db.write(&later).unwrap();
    assert_eq!(db.snapshot().counts().1, claims_before + 2);
    assert_eq!(db.entity_vector(engram::EntityId(3)), Some(vec![0.5, 0.5]));
    assert_eq!(db.settings().vector_dim, Some(2));
}
