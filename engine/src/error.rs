//! Typed errors, one family per operation, plus the umbrella `Error` and its `ErrorClass`.
//!
//! A failed operation changed nothing: the database is unchanged and usable (but after a failed
//! fsync, which stops writes until reopen). Write errors name the operation's index in the batch
//! and the field that was wrong. `Error::class` says who must act, for a server's reply codes and
//! the CLI's exit codes.

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
    /// What the batch wrote breaks a constraint of the workspace (`CREATE CONSTRAINT`).
    #[error("{0}")]
    ConstraintViolated(String),
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
    #[error("a claim cannot move from {} to {} (the lifecycle only moves forward)", from.as_str(), to.as_str())]
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
    /// A tag that is not valid (`crate::tags::check`).
    #[error("{0}")]
    BadTag(String),
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
    /// A read went past a named limit of its scope; nothing was returned.
    #[error("{what} exceeds the limit {name} = {limit}")]
    Limit {
        /// The limit's name (a field of `ReadLimits`).
        name: &'static str,
        /// Its value.
        limit: u64,
        /// What went past it.
        what: &'static str,
    },
    /// The scope's deadline passed, or its cancel token was tripped, before the read finished;
    /// nothing was returned.
    #[error("{0}")]
    Interrupted(Interrupted),
    /// No entity has this external id or name.
    #[error("no entity `{0}` in the workspace (by external id or name)")]
    NoEntityNamed(String),
    /// Several entities have this name (and none has it as external id).
    #[error("`{name}` names {count} entities; give the external id")]
    AmbiguousName {
        /// The name.
        name: String,
        /// How many entities have it.
        count: usize,
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

/// A row policy that is refused: what is wrong, and where in its predicate (line and column;
/// 1:1 for what is not about the text, such as an unknown target).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("policy predicate: {message} at {line}:{column}")]
pub struct PolicyError {
    /// What is wrong.
    pub message: String,
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
}

/// Any engram error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A rejected bulk load.
    #[error(transparent)]
    Bulk(#[from] BulkError),
    /// A rejected setting.
    #[error(transparent)]
    Settings(#[from] crate::settings::SettingsError),
    /// A rejected row policy.
    #[error(transparent)]
    Policy(#[from] PolicyError),
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
    Ingest(#[from] IngestError),
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
    /// A query failed: its type, detail, phase and place say why. Nothing was written.
    #[error(transparent)]
    Query(#[from] engram_query::QueryError),
    /// The principal lacks the access the operation needs on the workspace; nothing was done.
    #[error("{principal} may not {} workspace `{workspace}`", match needed { crate::model::Access::Read => "read", crate::model::Access::Write => "write to", crate::model::Access::Admin => "administer" })]
    Denied {
        /// Who asked.
        principal: String,
        /// The workspace (`*` for database-wide operations).
        workspace: String,
        /// The access it needs.
        needed: crate::model::Access,
    },
}

/// Why work stopped before it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Interrupted {
    /// The deadline passed.
    #[error("the deadline passed before the work finished")]
    Deadline,
    /// The cancel token was tripped.
    #[error("cancelled before the work finished")]
    Cancelled,
}

/// Who must act on an error: the class a server maps to a reply and the CLI to an exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// The request was wrong (bad input, unknown names, usage): fix the request.
    Caller,
    /// The request conflicts with the stored state (a duplicate id, a lifecycle move, a
    /// workspace that exists): look at the data, then retry or change the request.
    Conflict,
    /// A named limit, a deadline or a cancellation stopped the work: ask for less or allow more.
    Limit,
    /// The environment: I/O, a full disk, a lock held by another process, a missing model, an
    /// unknown format version, a failed fsync. The operator must act.
    Operator,
    /// Stored bytes fail their checksum or decode wrongly.
    Corruption,
    /// A bug in engram.
    Bug,
}

impl ErrorClass {
    /// The CLI's exit code for this class (one table for every command: 2 caller, 3 conflict, 4
    /// limit or deadline, 5 operator, 6 corruption, 70 bug; 0 is success and 1 a finding).
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorClass::Caller => 2,
            ErrorClass::Conflict => 3,
            ErrorClass::Limit => 4,
            ErrorClass::Operator => 5,
            ErrorClass::Corruption => 6,
            ErrorClass::Bug => 70,
        }
    }

    /// The class's name in lower case (`caller`, `conflict`, …), as servers report it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Caller => "caller",
            ErrorClass::Conflict => "conflict",
            ErrorClass::Limit => "limit",
            ErrorClass::Operator => "operator",
            ErrorClass::Corruption => "corruption",
            ErrorClass::Bug => "bug",
        }
    }
}

impl WriteErrorKind {
    /// Who must act on this write error.
    pub fn class(&self) -> ErrorClass {
        match self {
            WriteErrorKind::DuplicateId(_)
            | WriteErrorKind::VectorAlreadySet
            | WriteErrorKind::IllegalTransition { .. }
            | WriteErrorKind::EntityDeleted(_)
            | WriteErrorKind::EntityMerged { .. }
            | WriteErrorKind::ConstraintViolated(_) => ErrorClass::Conflict,
            WriteErrorKind::TooLong { .. } | WriteErrorKind::TooMany { .. } => ErrorClass::Limit,
            _ => ErrorClass::Caller,
        }
    }
}

/// Who must act on a storage error.
pub fn storage_class(e: &engram_storage::StorageError) -> ErrorClass {
    use engram_storage::StorageError as S;
    match e {
        S::Corruption { .. } | S::Replay { .. } => ErrorClass::Corruption,
        S::RecordTooLarge { .. } => ErrorClass::Limit,
        _ => ErrorClass::Operator,
    }
}

impl Error {
    /// Who must act on this error.
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::Bulk(e) => {
                if matches!(e.kind, WriteErrorKind::Invalid(why) if why.starts_with("commits are in flight")) {
                    ErrorClass::Conflict
                } else {
                    e.kind.class()
                }
            }
            Error::Write(e) => e.kind.class(),
            Error::Settings(crate::settings::SettingsError::Frozen(_)) | Error::Workspace(WorkspaceError::AlreadyExists(_)) => {
                ErrorClass::Conflict
            }
            Error::Read(ReadError::Limit { .. } | ReadError::Interrupted(_)) => ErrorClass::Limit,
            Error::Settings(_)
            | Error::Policy(_)
            | Error::ReadOnly
            | Error::Read(_)
            | Error::Workspace(_)
            | Error::Ingest(_)
            | Error::Denied { .. }
            | Error::Embed(engram_embed::EmbedError::Unknown(_)) => ErrorClass::Caller,
            Error::Storage(e) => storage_class(e),
            Error::EmbedderMismatch { .. } | Error::Embed(_) => ErrorClass::Operator,
            Error::Internal(_) => ErrorClass::Bug,
            Error::Query(q) => match q.kind {
                engram_query::ErrorType::LimitError => ErrorClass::Limit,
                engram_query::ErrorType::ConstraintValidationFailed => ErrorClass::Conflict,
                _ => ErrorClass::Caller,
            },
        }
    }

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
    pub fn as_bulk(&self) -> Option<&BulkError> {
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

/// A rejected bulk load: which section, row and field, and what was wrong. Nothing was written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{section} row {row}, field `{field}`: {kind}")]
pub struct BulkError {
    /// `workspace`, `predicates`, `entities` or `claims`.
    pub section: &'static str,
    /// Row index within the section (0 for whole-section problems).
    pub row: usize,
    /// The field.
    pub field: &'static str,
    /// What was wrong.
    pub kind: WriteErrorKind,
}

/// A rejected document: the JSON path of the bad value and what was wrong. Nothing was written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct IngestError {
    /// JSON path, e.g. `claims[0].confidence` (`.` for the document itself).
    pub path: String,
    /// What was wrong.
    pub message: String,
}
