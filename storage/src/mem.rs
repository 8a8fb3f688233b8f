//! An in-memory file system that remembers what was synced, so a test can "crash" it: every file
//! falls back to its content at its last `sync`. Simplification, stated: folder entries (creations,
//! renames, removals) are durable at once, as if every folder were synced immediately.

use crate::vfs::{Vfs, VfsFile, VfsLock};
use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Default)]
struct MemData {
    data: Vec<u8>,
    durable: Vec<u8>,
}

#[derive(Debug, Default)]
struct Inner {
    files: BTreeMap<PathBuf, Arc<Mutex<MemData>>>,
    dirs: BTreeSet<PathBuf>,
    locks: BTreeSet<PathBuf>,
}

/// The in-memory file system. Clones share the same files.
#[derive(Debug, Default, Clone)]
pub struct MemVfs {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug)]
struct MemFile(Arc<Mutex<MemData>>);

impl VfsFile for MemFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let f = self.0.lock();
        let start = usize::try_from(offset).map_err(io::Error::other)?.min(f.data.len());
        let n = buf.len().min(f.data.len() - start);
        buf[..n].copy_from_slice(&f.data[start..start + n]);
        Ok(n)
    }
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut f = self.0.lock();
        let start = usize::try_from(offset).map_err(io::Error::other)?;
        if f.data.len() < start + data.len() {
            f.data.resize(start + data.len(), 0);
        }
        f.data[start..start + data.len()].copy_from_slice(data);
        Ok(())
    }
    fn len(&self) -> io::Result<u64> {
        Ok(self.0.lock().data.len() as u64)
    }
    fn truncate(&self, len: u64) -> io::Result<()> {
        self.0.lock().data.resize(usize::try_from(len).map_err(io::Error::other)?, 0);
        Ok(())
    }
    fn sync(&self) -> io::Result<()> {
        let mut f = self.0.lock();
        let MemData { data, durable } = &mut *f;
        durable.clone_from(data);
        Ok(())
    }
}

#[derive(Debug)]
struct MemLock {
    vfs: MemVfs,
    path: PathBuf,
}

impl Drop for MemLock {
    fn drop(&mut self) {
        self.vfs.inner.lock().locks.remove(&self.path);
    }
}

impl MemVfs {
    /// An empty file system.
    pub fn new() -> MemVfs {
        MemVfs::default()
    }

    /// Simulates power loss: every file returns to its last synced content. Locks are released
    /// (their process died).
    pub fn crash(&self) {
        let mut inner = self.inner.lock();
        for f in inner.files.values() {
            let mut f = f.lock();
            let MemData { data, durable } = &mut *f;
            data.clone_from(durable);
        }
        inner.locks.clear();
    }

    /// A file's current bytes (for tests that corrupt or inspect files).
    pub fn bytes(&self, path: &Path) -> Option<Vec<u8>> {
        self.inner.lock().files.get(path).map(|f| f.lock().data.clone())
    }

    /// Replaces a file's bytes, durably (for tests that corrupt files).
    pub fn set_bytes(&self, path: &Path, bytes: Vec<u8>) {
        let mut inner = self.inner.lock();
        let f = inner.files.entry(path.to_path_buf()).or_default();
        let mut f = f.lock();
        f.durable.clone_from(&bytes);
        f.data = bytes;
    }
}

impl Vfs for MemVfs {
    fn open(&self, path: &Path, create: bool) -> io::Result<Box<dyn VfsFile>> {
        let mut inner = self.inner.lock();
        if let Some(f) = inner.files.get(path) {
            return Ok(Box::new(MemFile(f.clone())));
        }
        if !create {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("{} not found", path.display())));
        }
        let f = Arc::new(Mutex::new(MemData::default()));
        inner.files.insert(path.to_path_buf(), f.clone());
        Ok(Box::new(MemFile(f)))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut inner = self.inner.lock();
        let f = inner.files.remove(from).ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "rename source not found"))?;
        inner.files.insert(to.to_path_buf(), f);
        Ok(())
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        self.inner.lock().files.remove(path).map(|_| ()).ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "not found"))
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let inner = self.inner.lock();
        Ok(inner
            .files
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect())
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        self.inner.lock().dirs.insert(dir.to_path_buf());
        Ok(())
    }
    fn sync_dir(&self, _dir: &Path) -> io::Result<()> {
        Ok(())
    }
    fn exists(&self, path: &Path) -> bool {
        let inner = self.inner.lock();
        inner.files.contains_key(path) || inner.dirs.contains(path)
    }
    fn lock(&self, path: &Path) -> io::Result<VfsLock> {
        if !self.inner.lock().locks.insert(path.to_path_buf()) {
            return Err(io::Error::new(io::ErrorKind::WouldBlock, "locked"));
        }
        Ok(Box::new(MemLock { vfs: self.clone(), path: path.to_path_buf() }))
    }
}
