//! A fault-injecting file system over `MemVfs`: it counts I/O operations and, at the planned one,
//! crashes (optionally tearing the write in progress), fails an fsync, or reports a full disk or an
//! I/O error. After a crash every operation fails until the test calls `MemVfs::crash` on the
//! underlying files and reopens on them.

use crate::mem::MemVfs;
use crate::vfs::{Vfs, VfsFile, VfsLock};
use parking_lot::{Condvar, Mutex};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// What to break, counted in operations (every call on the Vfs or a file is one operation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultPlan {
    /// Crash at this operation: it fails, and so does everything after it.
    pub crash_at: Option<u64>,
    /// When the crashing operation is a write, write this many leading bytes of it first.
    pub torn_bytes: Option<usize>,
    /// This fsync (if operation number `n` is a sync) fails with EIO; later ones succeed.
    pub fail_sync_at: Option<u64>,
    /// Writes from this operation on fail with "storage full" until `clear_disk_full`.
    pub disk_full_at: Option<u64>,
}

#[derive(Debug)]
struct State {
    plan: Mutex<FaultPlan>,
    ops: AtomicU64,
    crashed: AtomicBool,
    /// Syncs of files whose name ends with this wait until it is cleared (`hold_syncs`).
    hold: Mutex<Option<String>>,
    released: Condvar,
    /// Syncs waiting on the hold now.
    held: AtomicU64,
}

/// The fault-injecting file system.
#[derive(Debug, Clone)]
pub struct FaultyVfs {
    mem: MemVfs,
    state: Arc<State>,
}

#[derive(Debug)]
struct FaultyFile {
    inner: Box<dyn VfsFile>,
    state: Arc<State>,
    path: String,
}

enum Op<'a> {
    Write(&'a dyn VfsFile, u64, &'a [u8]),
    Sync,
    Other,
}

impl State {
    fn step(&self, op: &Op<'_>) -> io::Result<()> {
        if self.crashed.load(Ordering::SeqCst) {
            return Err(io::Error::other("simulated crash: the process is gone"));
        }
        let n = self.ops.fetch_add(1, Ordering::SeqCst) + 1;
        let plan = *self.plan.lock();
        if plan.crash_at == Some(n) {
            self.crashed.store(true, Ordering::SeqCst);
            if let (Op::Write(file, offset, data), Some(k)) = (op, plan.torn_bytes) {
                let _ = file.write_at(*offset, &data[..k.min(data.len())]);
            }
            return Err(io::Error::other("simulated crash"));
        }
        if matches!(op, Op::Sync) && plan.fail_sync_at == Some(n) {
            return Err(io::Error::other("simulated fsync failure (EIO)"));
        }
        if matches!(op, Op::Write(..)) && plan.disk_full_at.is_some_and(|at| n >= at) {
            return Err(io::Error::new(io::ErrorKind::StorageFull, "simulated ENOSPC"));
        }
        Ok(())
    }
}

impl FaultyVfs {
    /// Faults per `plan` over the files of `mem`.
    pub fn new(mem: MemVfs, plan: FaultPlan) -> FaultyVfs {
        let state = State {
            plan: Mutex::new(plan),
            ops: AtomicU64::new(0),
            crashed: AtomicBool::new(false),
            hold: Mutex::new(None),
            released: Condvar::new(),
            held: AtomicU64::new(0),
        };
        FaultyVfs { mem, state: Arc::new(state) }
    }

    /// From now on, an fsync of a file whose name ends with `suffix` blocks until
    /// `release_syncs`: a slow disk held still, so a test can look at what readers see meanwhile.
    pub fn hold_syncs(&self, suffix: &str) {
        *self.state.hold.lock() = Some(suffix.to_owned());
    }

    /// Lets every held fsync go on.
    pub fn release_syncs(&self) {
        *self.state.hold.lock() = None;
        self.state.released.notify_all();
    }

    /// How many fsyncs wait on the hold now.
    pub fn held_syncs(&self) -> u64 {
        self.state.held.load(Ordering::SeqCst)
    }

    /// Operations counted so far.
    pub fn ops(&self) -> u64 {
        self.state.ops.load(Ordering::SeqCst)
    }

    /// Whether the planned crash happened.
    pub fn crashed(&self) -> bool {
        self.state.crashed.load(Ordering::SeqCst)
    }

    /// Crashes now: every operation from here on fails, as after a planned crash (the process
    /// is gone; `MemVfs::crash` then takes what was not synced).
    pub fn crash_now(&self) {
        self.state.crashed.store(true, Ordering::SeqCst);
    }

    /// Space returns: writes succeed again.
    pub fn clear_disk_full(&self) {
        self.state.plan.lock().disk_full_at = None;
    }
}

impl VfsFile for FaultyFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.state.step(&Op::Other)?;
        self.inner.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.state.step(&Op::Write(self.inner.as_ref(), offset, data))?;
        self.inner.write_at(offset, data)
    }
    fn len(&self) -> io::Result<u64> {
        self.state.step(&Op::Other)?;
        self.inner.len()
    }
    fn truncate(&self, len: u64) -> io::Result<()> {
        self.state.step(&Op::Other)?;
        self.inner.truncate(len)
    }
    fn sync(&self) -> io::Result<()> {
        {
            let mut hold = self.state.hold.lock();
            if hold.as_ref().is_some_and(|s| self.path.ends_with(s.as_str())) {
                self.state.held.fetch_add(1, Ordering::SeqCst);
                while hold.as_ref().is_some_and(|s| self.path.ends_with(s.as_str())) {
                    self.state.released.wait(&mut hold);
                }
                self.state.held.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.state.step(&Op::Sync)?;
        self.inner.sync()
    }
}

impl Vfs for FaultyVfs {
    fn open(&self, path: &Path, create: bool) -> io::Result<Box<dyn VfsFile>> {
        self.state.step(&Op::Other)?;
        let inner = self.mem.open(path, create)?;
        Ok(Box::new(FaultyFile { inner, state: self.state.clone(), path: path.to_string_lossy().into_owned() }))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.state.step(&Op::Other)?;
        self.mem.rename(from, to)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        self.state.step(&Op::Other)?;
        self.mem.remove(path)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        self.state.step(&Op::Other)?;
        self.mem.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        self.state.step(&Op::Other)?;
        self.mem.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.state.step(&Op::Sync)?;
        self.mem.sync_dir(dir)
    }
    fn exists(&self, path: &Path) -> bool {
        self.mem.exists(path)
    }
    fn lock(&self, path: &Path) -> io::Result<VfsLock> {
        self.state.step(&Op::Other)?;
        self.mem.lock(path)
    }
}
