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
pub mod mapped;
pub mod mem;
pub mod snapshot;
pub mod vectors;
pub mod vfs;
pub mod wal;

pub use error::StorageError;
pub use fault::{FaultPlan, FaultyVfs};
pub use mapped::Mapped;
pub use mem::MemVfs;
pub use snapshot::{read_snapshot, write_snapshot, write_snapshot_streamed, SnapshotFile, SNAPSHOT_FORMAT_OLDEST, SNAPSHOT_FORMAT_VERSION};
pub use vectors::{VectorFile, VECTOR_FILE_HEADER, VECTOR_FORMAT_VERSION};
pub use vfs::{OsVfs, Vfs, VfsFile, VfsLock};
pub use wal::{
    remove_segments_before, replay, replay_from, replay_from_pipelined, replay_segment, FsyncPolicy, RecordPos, ReplayReport, WalWriter,
    RECORD_BYTES_MAX, WAL_FORMAT_VERSION,
};
