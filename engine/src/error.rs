//! Typed errors, one family per operation, plus the umbrella `Error`.
//!
//! Every error here is the caller's to act on (bad input): the database is unchanged and usable.
//! Write errors name the operation's index in the batch and the field that was wrong.

use crate::ids::{ClaimId, EntityId};
use crate::model::ClaimState;

/// A rejected write batch. Nothing of the batch was applied.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("operation {op_index} ({op}), field `{field}`: {kind}")]
pub struct WriteError {
    /// Index of the failing operation in the batch (0-based).
    pub op_index: usize,
    /// The operation's name (`add_claim`, `upsert_entity`, ...).
    pub op: &'static str,
    /// The field that was wrong.
    pub field: &'static str,
    /// What was wrong.
    pub kind: WriteErrorKind,
}

/// What was wrong with a write operation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum WriteErrorKind {
    /// The batch names a workspace that does not exist.
    #[error("unknown workspace `{0}`")]
    UnknownWorkspace(String),
    /// No entity with this reference in the workspace.
    #[error("unknown entity `{0}`")]
    UnknownEntity(String),
    /// The entity exists but belongs to another workspace.
    #[error("entity {0} belongs to another workspace")]
    CrossWorkspaceEntity(EntityId),
    /// No claim with this reference in the workspace.
    #[error("unknown claim `{0}`")]
    UnknownClaim(String),
    /// The claim exists but belongs to another workspace.
    #[error("claim {0} belongs to another workspace")]
    CrossWorkspaceClaim(ClaimId),
    /// A confidence outside `[0, 1]`.
    #[error("{0} is outside 0..=1")]
    ConfidenceOutOfRange(f32),
    /// NaN or infinity where a finite number is needed.
    #[error("not a finite number")]
    NotFinite,
    /// `valid_until` is not after `valid_from`.
    #[error("valid_until must be after valid_from")]
    InvalidInterval,
    /// The external id is already taken (in the workspace or earlier in the batch).
    #[error("duplicate id `{0}`")]
    DuplicateId(String),
    /// A required string is empty (or only whitespace).
    #[error("must not be empty")]
    Empty,
    /// A string is longer than its named limit.
    #[error("{len} bytes exceeds the limit {limit_name} = {limit}")]
    TooLong {
        /// Actual length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
        /// The limit's name in `Limits`.
        limit_name: &'static str,
    },
    /// A list is longer than its named limit.
    #[error("{count} items exceeds the limit {limit_name} = {limit}")]
    TooMany {
        /// Actual count.
        count: usize,
        /// The limit.
        limit: usize,
        /// The limit's name in `Limits`.
        limit_name: &'static str,
    },
    /// A vector whose length is not the database's dimension.
    #[error("a vector of {got} components; this database stores {expected}")]
    VectorDimension {
        /// The database's dimension.
        expected: usize,
        /// The vector's length.
        got: usize,
    },
    /// The entity or claim already has a different vector (vectors are written once per id).
    #[error("already has a different vector")]
    VectorAlreadySet,
    /// The lifecycle does not allow this move.
    #[error("a {from:?} claim cannot become {to:?}")]
    IllegalTransition {
        /// Current state.
        from: ClaimState,
        /// Requested state.
        to: ClaimState,
    },
    /// A claim cannot supersede itself.
    #[error("a claim cannot supersede itself")]
    SelfSupersession,
    /// The entity is soft-deleted; restore it before writing claims about it.
    #[error("entity {0} is deleted")]
    EntityDeleted(EntityId),
    /// The entity was merged into another: write about the survivor, or undo the merge first.
    #[error("entity {entity} was merged into {into}; write about {into} or undo the merge first")]
    EntityMerged {
        /// The merged-away entity.
        entity: EntityId,
        /// The entity it was merged into.
        into: EntityId,
    },
    /// A name was given that is not a valid declaration value (e.g. a non-positive half-life).
    #[error("invalid value: {0}")]
    Invalid(&'static str),
}

/// A failed read. Reads never change anything.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// No such workspace.
    #[error("unknown workspace `{0}`")]
    UnknownWorkspace(String),
    /// The entity does not exist in this workspace.
    #[error("unknown entity {0} in this workspace")]
    UnknownEntity(EntityId),
    /// The claim does not exist in this workspace.
    #[error("unknown claim {0} in this workspace")]
    UnknownClaim(ClaimId),
    /// Closure queries need a predicate declared transitive.
    #[error("predicate `{0}` is not declared transitive in this workspace")]
    NotTransitive(String),
    /// A relation named in a hierarchy query that this workspace has never used or declared.
    #[error("unknown relation `{0}` in this workspace")]
    UnknownPredicate(String),
    /// A cursor from another query shape or a corrupted string.
    #[error("invalid cursor `{0}`")]
    InvalidCursor(String),
    /// A query vector whose length is not the database's dimension (or the database has none).
    #[error("query vector has {got} components; the stored vectors have {}", expected.map_or_else(|| "none (no vectors stored)".to_owned(), |d| d.to_string()))]
    VectorDimension {
        /// The database's dimension, if it has vectors.
        expected: Option<usize>,
        /// The query's length.
        got: usize,
    },
    /// A query parameter out of its allowed range.
    #[error("parameter `{name}`: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Why.
        reason: &'static str,
    },
}

/// Workspace management errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WorkspaceError {
    /// The name is taken.
    #[error("workspace `{0}` already exists")]
    AlreadyExists(String),
    /// No such workspace.
    #[error("unknown workspace `{0}`")]
    Unknown(String),
    /// Empty, too long, or containing control characters.
    #[error("invalid workspace name `{0}`: 1..=128 bytes, no control characters")]
    InvalidName(String),
}

/// Any engram error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A rejected bulk load.
    #[error(transparent)]
    Bulk(#[from] crate::bulk::BulkError),
    /// A rejected setting.
    #[error(transparent)]
    Settings(#[from] crate::settings::SettingsError),
    /// The database was opened read-only.
    #[error("the database was opened read-only; writes need Database::open")]
    ReadOnly,
    /// Storage failed: disk full, I/O error, corruption, an unknown format version, or an earlier
    /// fsync failure (fail-stop). A failed commit was not acknowledged and is not visible.
    #[error(transparent)]
    Storage(#[from] engram_storage::StorageError),
    /// A rejected write.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// A failed read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A workspace operation failed.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// A rejected extraction document.
    #[error(transparent)]
    Ingest(#[from] crate::ingest::IngestError),
    /// The database's vectors were made by another embedder or have another dimension.
    #[error("embedder mismatch: this database's vectors come from `{stored}`, the configured embedder is `{configured}`; vectors are never mixed")]
    EmbedderMismatch {
        /// What the database records (`name/version/dim`, or `vectors of dimension D`).
        stored: String,
        /// The embedder offered.
        configured: String,
    },
    /// Embedding the batch's texts failed; nothing was written.
    #[error("embedding failed, nothing written: {0}")]
    Embed(#[from] engram_embed::EmbedError),
    /// A bug in engram stopped this write; nothing was written and the database stays usable.
    #[error("internal error (a bug in engram; please report it), nothing written: {0}")]
    Internal(String),
}

impl Error {
    /// The rejected write batch's error, when that is what this is.
    pub fn as_write(&self) -> Option<&WriteError> {
        match self {
            Error::Write(e) => Some(e),
            _ => None,
        }
    }

    /// The workspace error, when that is what this is.
    pub fn as_workspace(&self) -> Option<&WorkspaceError> {
        match self {
            Error::Workspace(e) => Some(e),
            _ => None,
        }
    }

    /// The bulk-load error, when that is what this is.
    pub fn as_bulk(&self) -> Option<&crate::bulk::BulkError> {
        match self {
            Error::Bulk(e) => Some(e),
            _ => None,
        }
    }

    /// The storage error, when that is what this is.
    pub fn as_storage(&self) -> Option<&engram_storage::StorageError> {
        match self {
            Error::Storage(e) => Some(e),
            _ => None,
        }
    }
}
