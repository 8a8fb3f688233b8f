//! Process kill: a child process commits batches and reports each acknowledgement; the parent
//! `kill -9`s it at a seeded random moment, 50 times, reopening the folder after each kill. Every
//! acknowledged batch must be there, and every batch that is there must be whole.
//!
//! The child is this same test binary re-run on the `child_writer` test with an environment
//! variable naming the folder; run normally, `child_writer` does nothing.

use engram::{AddClaim, AddEvidence, Database, Op, WriteBatch};
use rand::{Rng, SeedableRng};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

const DIR_VAR: &str = "ENGRAM_KILL_CHILD_DIR";
const START_VAR: &str = "ENGRAM_KILL_CHILD_START";

fn batch(i: usize) -> WriteBatch {
    let mut b = WriteBatch::new("default");
    b.upsert_entity(&format!("e{i}"), "thing", &format!("Entity {i}"));
    if i > 0 {
        b.add_claim(AddClaim::new(format!("e{i}").as_str(), "follows", format!("e{}", i - 1).as_str()).id(&format!("c{i}")));
        b.push(Op::AddEvidence(AddEvidence {
            claim: Some(format!("c{i}").into()),
            message_id: Some(format!("m{i}")),
            ..AddEvidence::default()
        }));
    }
    b
}

#[test]
fn child_writer() {
    let Ok(dir) = std::env::var(DIR_VAR) else { return };
    let start: usize = std::env::var(START_VAR).unwrap().parse().unwrap();
    let db = Database::open(&dir).unwrap();
    let mut out = std::io::stdout().lock();
    for i in start.. {
        db.write(&batch(i)).unwrap();
        writeln!(out, "ack {i}").unwrap();
        out.flush().unwrap();
    }
}

/// How many whole batches the folder holds; panics on a partial one.
fn whole_batches(dir: &std::path::Path) -> usize {
    let db = Database::open(dir).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let mut n = 0;
    while let Some(e) = ws.entity_id(&format!("e{n}")) {
        if n > 0 {
            let c = ws.claim_id(&format!("c{n}")).unwrap_or_else(|| panic!("batch {n}: entity without its claim"));
            assert_eq!(ws.claim(c).unwrap().subject, e);
            assert_eq!(ws.evidence_of(c).unwrap().len(), 1, "batch {n}: claim without its evidence");
        }
        n += 1;
    }
    assert!(ws.claim_id(&format!("c{n}")).is_none(), "claim of batch {n} without its entity");
    n
}

#[test]
fn kill_9_loses_nothing_acknowledged() {
    let seed = 20_261_130u64;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let tmp = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut next = 0;
    for cycle in 0..50 {
        let mut child = Command::new(&exe)
            .args(["process_kill::child_writer", "--exact", "--nocapture", "--test-threads=1"])
            .env(DIR_VAR, tmp.path())
            .env(START_VAR, next.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .filter_map(|l| l.strip_prefix("ack ").and_then(|n| n.parse::<usize>().ok()))
                .max()
        });
        std::thread::sleep(Duration::from_millis(rng.gen_range(20..120)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let acked = reader.join().unwrap();
        let present = whole_batches(tmp.path());
        if let Some(a) = acked {
            assert!(present > a, "seed {seed} cycle {cycle}: batch {a} was acknowledged but only {present} batches survived");
        }
        assert!(present >= next, "seed {seed} cycle {cycle}: batches from earlier cycles were lost");
        next = present;
    }
    assert!(next > 50, "the children made progress ({next} batches)");
}
