//! Engram: an in-memory, temporal, trust-scored knowledge graph that is the long-term memory of
//! AI agents.
//!
//! Entities are nodes; claims are directed, typed edges `subject PREDICATE object` with a
//! confidence, a lifecycle (`PROPOSED → ACCEPTED → DEPRECATED`), valid time and transaction time;
//! evidence rows say where each claim came from. Writes are atomic batches; reads see consistent
//! snapshots and, by default, only the claims an agent should act on now.
//!
//! ```
//! use engram::{AddClaim, ClaimState, Database, KHopQuery, WriteBatch};
//!
//! let db = Database::in_memory();
//! let mut batch = WriteBatch::new("default");
//! batch
//!     .upsert_entity("auth", "service", "AuthService")
//!     .upsert_entity("upstream", "service", "UpstreamService")
//!     .add_claim(AddClaim::new("auth", "DEPENDS_ON", "upstream").state(ClaimState::Accepted).confidence(0.9));
//! db.write(&batch)?;
//!
//! let snap = db.snapshot();
//! let ws = snap.workspace("default")?;
//! let auth = ws.find_by_name("auth service")[0];
//! let reached = ws.khop(&[auth], &KHopQuery::depth(2))?;
//! assert_eq!(reached.entities.len(), 2);
//! # Ok::<(), engram::Error>(())
//! ```

pub mod db;
mod error;
pub mod exec;
mod ids;
mod index;
pub mod io;
mod limits;
mod model;
pub mod normalize;
pub mod ontology;
mod persist;
pub mod pii;
mod pmap;
pub mod read;
mod reaper;
pub mod report;
pub mod search;
pub mod settings;
pub mod spatial;
pub(crate) mod state;
pub mod stats;
pub mod tags;
pub mod temporal;
mod time;
mod value;
pub mod write;

pub use db::scope::Scope;
pub use db::{
    check, BulkInfo, CheckReport, CommitInfo, CommitStats, Config, Database, CLAIM_VECTOR_FILE, DEFAULT_WORKSPACE, LOCK_FILE, VECTOR_FILE,
};
pub use engram_embed as embed;
pub use engram_query as query;
pub use engram_storage::{FsyncPolicy, OsVfs, StorageError};
pub use error::{Error, ErrorClass, Interrupted, PolicyError, ReadError, WorkspaceError, WriteError, WriteErrorKind};
pub use exec::{Bindings, Params, QueryResult, QueryStats, QueryValue, Statements};
pub use ids::{ClaimId, EntityId, EvidenceId, PredicateId, TypeId, WorkspaceId};
pub use index::graph::Direction;
pub use index::vectors::VectorMode;
pub use io::{csv, jsonl};
pub use limits::Limits;
pub use model::{Cardinality, Claim, ClaimState, Entity, Evidence, Merge, PredicateDef, StateSet, WorkspaceInfo};
pub use read::catalog::{PredicateCount, TypeCount, WorkspaceCatalog};
pub use read::columns::StateChange;
pub use read::expand::{EdgeRow, Edges, Expander};
pub use read::filter::EdgeFilter;
pub use read::khop::{KHopQuery, KHopResult, Reached};
pub use read::neighbors::{Neighbor, NeighborPage, NeighborQuery};
pub use read::pathview::{ClaimEdge, GraphView};
pub use read::scan::{ChangeMark, Changes, ClaimSet, EntitySet};
pub use read::scope;
pub use read::scope::{Access, CancelToken, Grant, Principal, ReadContext, ReadLimits};
pub use read::view::{Snapshot, WorkspaceView};
pub use read::visibility::Visibility;
pub use search::context::{Fact, FactEntity, Packed, PathRanks};
pub use search::recall::{ContextQuery, PathWeights, Recall, RecallQuery, Skipped};
pub use search::semantic::{Metric, VectorOptions};
pub use settings::{Settings, SettingsError, StoredGrant, StoredMask, StoredPolicy, StoredRole, StoredToken, StoredUser};
pub use stats::{Counts, MemoryReport};
pub use temporal::{Duration, Temporal};
pub use time::{Clock, ManualClock, SystemClock, TimeParseError, Timestamp};
pub use value::{shortest_f64, Properties, Value};
pub use write::apply::Created;
pub use write::batch::{
    AddClaim, AddEvidence, ClaimRef, CreateNode, CreateRelationship, DeclarePredicate, Element, EntityRef, ForgetTarget, Op, TagTarget,
    UpsertEntity, VectorTarget, WriteBatch,
};
pub use write::bulk::{BulkClaims, BulkEntities, BulkError, BulkLoad, TextColumn};
pub use write::{apply, classifier, ingest};

/// The README's embedded example, compiled and run as a doctest so it cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
