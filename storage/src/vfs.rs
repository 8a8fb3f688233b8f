//! The file-system seam: every byte engram stores goes through `Vfs`, so crash and fault tests can
//! swap the real file system for an in-memory one that loses unsynced data or fails on command.

use std::fmt::Debug;
use std::io;
use std::path::Path;

/// An open file. Offsets are explicit; there is no shared cursor.
pub trait VfsFile: Send + Sync + Debug {
    /// Reads up to `buf.len()` bytes at `offset`; returns how many were read (0 at the end).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;
    /// Writes all of `data` at `offset`, extending the file as needed.
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()>;
    /// Current length.
    fn len(&self) -> io::Result<u64>;
    /// Whether the file is empty.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Cuts or extends the file to `len`.
    fn truncate(&self, len: u64) -> io::Result<()>;
    /// Makes the file's data durable (fdatasync).
    fn sync(&self) -> io::Result<()>;

    /// Reads the whole file.
    fn read_all(&self) -> io::Result<Vec<u8>> {
        let len = usize::try_from(self.len()?).map_err(|_| io::Error::other("file too large for memory"))?;
        let mut buf = vec![0; len];
        let mut at = 0;
        while at < len {
            let n = self.read_at(at as u64, &mut buf[at..])?;
            if n == 0 {
                buf.truncate(at);
                break;
            }
            at += n;
        }
        Ok(buf)
    }
}

pub use crate::mapped::Mapped;

/// A held advisory lock; dropping it releases the lock.
pub type VfsLock = Box<dyn Send + Sync + Debug>;

/// The file system.
pub trait Vfs: Send + Sync + Debug {
    /// Opens (and with `create`, creates) a file for reading and writing.
    fn open(&self, path: &Path, create: bool) -> io::Result<Box<dyn VfsFile>>;
    /// Renames atomically.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file.
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// File names directly inside `dir`.
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// Creates a folder and its parents.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Makes the folder's entries (creations, renames, removals) durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Whether a file or folder exists.
    fn exists(&self, path: &Path) -> bool;
    /// Takes an exclusive advisory lock on `path` (created if absent), or fails with
    /// `WouldBlock` when another holder has it. The lock dies with its process.
    fn lock(&self, path: &Path) -> io::Result<VfsLock>;

    /// A read-only view of the whole file (a memory mapping where the file system allows it).
    fn map(&self, path: &Path) -> io::Result<Mapped> {
        Ok(Mapped::copy_of(&self.open(path, false)?.read_all()?))
    }
}

/// The operating system's file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsVfs;

#[derive(Debug)]
struct OsFile(std::fs::File);

impl VfsFile for OsFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(&self.0, buf, offset)
    }
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        std::os::unix::fs::FileExt::write_all_at(&self.0, data, offset)
    }
    fn len(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }
    fn truncate(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
    fn sync(&self) -> io::Result<()> {
        self.0.sync_data()
    }
}

impl Vfs for OsVfs {
    fn open(&self, path: &Path, create: bool) -> io::Result<Box<dyn VfsFile>> {
        let f = std::fs::OpenOptions::new().read(true).write(true).create(create).truncate(false).open(path)?;
        Ok(Box::new(OsFile(f)))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            if entry.file_type()?.is_file() {
                names.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
        names.sort();
        Ok(names)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        std::fs::File::open(dir)?.sync_all()
    }
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
    fn map(&self, path: &Path) -> io::Result<Mapped> {
        Mapped::map(&std::fs::File::open(path)?)
    }

    fn lock(&self, path: &Path) -> io::Result<VfsLock> {
        let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)?;
        match f.try_lock() {
            Ok(()) => Ok(Box::new(f)),
            Err(std::fs::TryLockError::WouldBlock) => Err(io::Error::new(io::ErrorKind::WouldBlock, "locked by another process")),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }
}
