//! The WAL record: one committed change, with its transaction time.
//!
//! Replaying the records in order through the same apply functions, at their recorded times,
//! rebuilds exactly the state that was acknowledged: every id and every timestamp is derived from
//! the state and the record, never from the replaying machine's clock. Payload layout: one byte of
//! record format version, then the record in postcard (serde) encoding.

use crate::batch::WriteBatch;
use crate::bulk::BulkLoad;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};

/// The record format this engram writes (and the newest it reads).
pub const RECORD_FORMAT_VERSION: u8 = 1;

/// One committed change.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Mutation {
    /// A write batch.
    Batch(WriteBatch),
    /// A new workspace.
    CreateWorkspace(String),
    /// A dropped (erased) workspace.
    DropWorkspace(String),
    /// A bulk load (boxed: it is far larger than the other variants).
    Bulk(Box<BulkLoad>),
    /// The stored settings, replaced whole.
    Settings(crate::settings::Settings),
}

/// A WAL record: the change and the transaction time it was committed at.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WalRecord {
    /// Transaction time of the commit.
    pub committed_at: Timestamp,
    /// The change.
    pub mutation: Mutation,
}

/// Why a payload could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// Written by a newer record format.
    Version(u8),
    /// Not a valid record.
    Malformed,
}

impl WalRecord {
    /// Encodes to a WAL payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![RECORD_FORMAT_VERSION];
        postcard::to_io(self, &mut out).expect("encoding to a Vec cannot fail");
        out
    }

    /// Decodes a WAL payload.
    pub fn decode(payload: &[u8]) -> Result<WalRecord, DecodeError> {
        match payload.split_first() {
            Some((&RECORD_FORMAT_VERSION, body)) => postcard::from_bytes(body).map_err(|_| DecodeError::Malformed),
            Some((&v, _)) => Err(DecodeError::Version(v)),
            None => Err(DecodeError::Malformed),
        }
    }
}
