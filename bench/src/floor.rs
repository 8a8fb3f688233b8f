//! The floor of durable group commit on this machine: the simplest correct group commit, with no
//! engine work at all, measured beside engram in the same run (`durable` prints it as
//! `group_commit_floor` and engram's rate as `vs_floor`).
//!
//! Each writer appends a 128-byte record to a shared buffer and waits until an fdatasync covers it.
//! One writer at a time leads: it takes everything appended so far, writes it with one call into
//! preallocated space (as engram's WAL does, so the fdatasync writes data, not the file size),
//! syncs, and wakes every waiter (leader/follower group commit, the way `PostgreSQL` flushes its
//! WAL). Records appended while a sync is in flight go into the next one. What this costs is the
//! disk plus the wake-ups of the writers, which is all a commit cycle needs besides the engine's
//! own work: engram's rate divided by this one says how much of the machine's durable commit rate
//! engram reaches. `bench/floor/group_commit_floor.c` is the same program in C.

use parking_lot::{Condvar, Mutex};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes of each record (the disk baseline's size).
pub const RECORD_BYTES: usize = 128;
/// The log wraps around inside this many preallocated bytes, so its size never changes.
const LOG_BYTES: u64 = 64 << 20;

/// What a floor run measured.
#[derive(Clone, Debug)]
pub struct FloorRun {
    /// Acknowledged (durable) commits.
    pub commits: u64,
    /// fdatasyncs run.
    pub syncs: u64,
    /// Record bytes written and synced (acknowledged records, and any taken by a last sync).
    pub bytes_synced: u64,
    /// Commit latencies in microseconds, sorted.
    pub latencies_us: Vec<f64>,
    /// Wall time of the run.
    pub seconds: f64,
}

impl FloorRun {
    /// Durable commits per second.
    pub fn rate(&self) -> f64 {
        self.commits as f64 / self.seconds
    }
}

struct Log {
    /// Records appended and not yet taken by a leader.
    buffer: Vec<u8>,
    /// Records appended since the start (a writer's record is number `appended` after its push).
    appended: u64,
    /// Records up to this number are durable.
    synced: u64,
    /// A writer is writing and syncing.
    leading: bool,
    /// The first sync or write error: every writer stops with it.
    failed: Option<String>,
    /// Where the next write goes.
    offset: u64,
    syncs: u64,
    bytes_synced: u64,
}

struct Shared {
    log: Mutex<Log>,
    synced: Condvar,
    file: File,
    stop: AtomicBool,
}

/// Runs `threads` writers for `span` against a log file created in `dir` (removed afterwards).
pub fn run(dir: &Path, threads: usize, span: Duration) -> io::Result<FloorRun> {
    let path = dir.join("group_commit_floor.log");
    let file = File::options().read(true).write(true).create(true).truncate(true).open(&path)?;
    file.write_all_at(&vec![0u8; LOG_BYTES as usize], 0)?;
    file.sync_all()?;
    let shared = Arc::new(Shared {
        log: Mutex::new(Log {
            buffer: Vec::new(),
            appended: 0,
            synced: 0,
            leading: false,
            failed: None,
            offset: 0,
            syncs: 0,
            bytes_synced: 0,
        }),
        synced: Condvar::new(),
        file,
        stop: AtomicBool::new(false),
    });
    let t0 = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let shared = shared.clone();
            std::thread::spawn(move || writer(&shared, t as u8))
        })
        .collect();
    std::thread::sleep(span);
    shared.stop.store(true, Ordering::Relaxed);
    let mut latencies_us = Vec::new();
    for h in handles {
        latencies_us.extend(h.join().map_err(|_| io::Error::other("floor writer panicked"))?);
    }
    let seconds = t0.elapsed().as_secs_f64();
    std::fs::remove_file(&path)?;
    let log = shared.log.lock();
    if let Some(why) = &log.failed {
        return Err(io::Error::other(why.clone()));
    }
    latencies_us.sort_by(f64::total_cmp);
    Ok(FloorRun { commits: latencies_us.len() as u64, syncs: log.syncs, bytes_synced: log.bytes_synced, latencies_us, seconds })
}

/// One writer: commits records until told to stop; returns each commit's latency.
fn writer(shared: &Shared, tag: u8) -> Vec<f64> {
    let record = [tag | 1; RECORD_BYTES];
    let mut latencies = Vec::new();
    let mut out = Vec::new();
    while !shared.stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        let mut log = shared.log.lock();
        log.buffer.extend_from_slice(&record);
        log.appended += 1;
        let mine = log.appended;
        while log.synced < mine && log.failed.is_none() {
            if log.leading {
                shared.synced.wait(&mut log);
                continue;
            }
            log.leading = true;
            let upto = log.appended;
            std::mem::swap(&mut out, &mut log.buffer);
            let offset = log.offset;
            log.offset = (offset + out.len() as u64) % (LOG_BYTES - (1 << 20));
            drop(log);
            let done = shared.file.write_all_at(&out, offset).and_then(|()| shared.file.sync_data());
            let bytes = out.len() as u64;
            out.clear();
            log = shared.log.lock();
            log.leading = false;
            log.syncs += 1;
            match done {
                Ok(()) => {
                    log.synced = upto;
                    log.bytes_synced += bytes;
                }
                Err(e) => log.failed = Some(format!("floor log: {e}")),
            }
            shared.synced.notify_all();
        }
        if log.failed.is_some() {
            break;
        }
        drop(log);
        latencies.push(started.elapsed().as_secs_f64() * 1e6);
    }
    latencies
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every acknowledged record was synced (the synced bytes cover at least the acknowledged
    /// records), no sync ran empty, and the log file is removed.
    #[test]
    fn acknowledged_records_are_synced() {
        let dir = tempfile::tempdir().unwrap();
        let run = run(dir.path(), 4, Duration::from_millis(300)).unwrap();
        assert!(run.commits > 0);
        assert!(run.bytes_synced >= run.commits * RECORD_BYTES as u64, "{} bytes for {} commits", run.bytes_synced, run.commits);
        assert!(run.syncs > 0 && run.bytes_synced >= run.syncs * RECORD_BYTES as u64, "{} syncs for {} bytes", run.syncs, run.bytes_synced);
        assert_eq!(run.latencies_us.len() as u64, run.commits);
        assert!(run.latencies_us.windows(2).all(|w| w[0] <= w[1]));
        assert!(!dir.path().join("group_commit_floor.log").exists());
    }
}
