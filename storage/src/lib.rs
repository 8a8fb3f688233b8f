//! Durable bytes for engram: a narrow `Vfs` with a real, an in-memory and a fault-injecting
//! implementation, and checksummed write-ahead-log segments. This crate knows nothing of graphs:
//! it stores opaque records and tells a torn tail (a crash mid-write: cut it) from corruption
//! before the tail (refuse to open, naming the file and byte offset).
//!
//! Error classes, by who must act: `Corruption` and `UnsupportedVersion` are data errors (stop,
//! never repair silently); `Io` and `DiskFull` are operator errors; `Poisoned` means an earlier
//! fsync failed and the process must reopen the database (fail-stop).

pub mod error;
pub mod fault;
pub mod mem;
pub mod vfs;
pub mod wal;

pub use error::StorageError;
pub use fault::{FaultPlan, FaultyVfs};
pub use mem::MemVfs;
pub use vfs::{OsVfs, Vfs, VfsFile, VfsLock};
pub use wal::{replay, FsyncPolicy, ReplayReport, WalWriter, WAL_FORMAT_VERSION};
