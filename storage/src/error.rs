//! Storage errors, classified by who must act.

use std::path::PathBuf;

/// A storage failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    /// An I/O error from the operating system (operator must act).
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The disk is full; nothing was acknowledged and the database stays usable once space returns.
    #[error("disk full writing {path}; the write was not acknowledged")]
    DiskFull {
        /// The file being written.
        path: PathBuf,
    },
    /// Stored bytes fail their checksum or structure before the tail: refuse to open.
    #[error("corrupt data in {path} at byte offset {offset}: {what}")]
    Corruption {
        /// The file.
        path: PathBuf,
        /// Byte offset of the bad record or header.
        offset: u64,
        /// What was wrong.
        what: &'static str,
    },
    /// The file was written by a format version this engram does not know.
    #[error("{path} has format version {found}; this engram reads versions up to {supported}")]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// Version found.
        found: u32,
        /// Newest version supported.
        supported: u32,
    },
    /// An earlier fsync failed: the log's durable state is unknown, so no later write is
    /// acknowledged until the database is reopened (fail-stop).
    #[error("an earlier fsync failed ({0}); no later write is acknowledged: reopen the database")]
    Poisoned(String),
    /// A log record that passed its checksum and decoded, but does not apply to the state
    /// before it: the files disagree with each other (refuse to open). `source` is why.
    #[error("the record in {path} at byte offset {offset} does not apply to the state before it: {source}")]
    Replay {
        /// The segment.
        path: PathBuf,
        /// Byte offset of the record.
        offset: u64,
        /// The error applying it gave.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Another process holds the folder's lock.
    #[error("{0} is locked by another process")]
    Locked(PathBuf),
    /// A record larger than the format allows.
    #[error("record of {len} bytes exceeds the limit of {limit} bytes")]
    RecordTooLarge {
        /// Its size.
        len: usize,
        /// The limit.
        limit: usize,
    },
}

impl StorageError {
    /// A copy of this error, for reporting one failure to every commit of a group (an I/O
    /// error's source is copied as its kind and message).
    #[must_use]
    pub fn duplicate(&self) -> StorageError {
        match self {
            StorageError::Io { path, source } => {
                StorageError::Io { path: path.clone(), source: std::io::Error::new(source.kind(), source.to_string()) }
            }
            StorageError::DiskFull { path } => StorageError::DiskFull { path: path.clone() },
            StorageError::Corruption { path, offset, what } => StorageError::Corruption { path: path.clone(), offset: *offset, what },
            StorageError::UnsupportedVersion { path, found, supported } => {
                StorageError::UnsupportedVersion { path: path.clone(), found: *found, supported: *supported }
            }
            StorageError::Replay { path, offset, source } => {
                StorageError::Replay { path: path.clone(), offset: *offset, source: source.to_string().into() }
            }
            StorageError::Poisoned(why) => StorageError::Poisoned(why.clone()),
            StorageError::Locked(path) => StorageError::Locked(path.clone()),
            StorageError::RecordTooLarge { len, limit } => StorageError::RecordTooLarge { len: *len, limit: *limit },
        }
    }

    /// Wraps an I/O error with its path, recognising a full disk.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> StorageError {
        let path = path.into();
        if source.kind() == std::io::ErrorKind::StorageFull {
            StorageError::DiskFull { path }
        } else {
            StorageError::Io { path, source }
        }
    }
}
