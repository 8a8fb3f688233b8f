//! What an ingest did with each mention and claim: the report a caller gets back.

use crate::model::ClaimState;
use serde::Serialize;

/// How a mention was resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "how")]
pub enum ResolvedBy {
    /// Its normalised name is the entity's canonical name.
    Name,
    /// Its normalised name is one of the entity's aliases.
    Alias,
    /// Its name vector is this similar to the entity's (the surface form became an alias).
    Vector {
        /// Cosine similarity.
        similarity: f32,
    },
    /// An earlier mention in the same document.
    Document,
    /// No match: a new entity.
    Created,
}

/// One mention's resolution.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Resolution {
    /// The surface name.
    pub name: String,
    /// The entity's external id.
    pub entity: String,
    /// How.
    #[serde(flatten)]
    pub how: ResolvedBy,
}

/// What happened to one claim.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Outcome {
    /// A new claim.
    Created {
        /// Its initial state.
        state: ClaimState,
    },
    /// Evidence added to an existing claim.
    Corroborated {
        /// Its combined confidence.
        confidence: f32,
        /// Whether this moved it to ACCEPTED.
        accepted: bool,
    },
    /// A new claim that deprecated the earlier value(s) of a single-valued predicate or, by the
    /// client's verdict, a contradicted or refined claim.
    Superseded {
        /// The claims it superseded.
        old: Vec<String>,
    },
    /// An out-of-order claim (older than the current value): stored as history.
    History {
        /// The newer claim that supersedes it.
        newer: String,
    },
}

/// One claim's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClaimResult {
    /// The claim's external id.
    pub claim: String,
    /// What happened.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// The extractor's reasoning, as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
}

/// The result of an ingest.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct IngestReport {
    /// This message was ingested before: nothing was written.
    pub duplicate: bool,
    /// The commit's version (`None` when nothing was written).
    pub version: Option<u64>,
    /// Each entity mention, in document order.
    pub entities: Vec<Resolution>,
    /// Each claim, in document order.
    pub claims: Vec<ClaimResult>,
    /// What the caller should know: a document without a source is not idempotent.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The warning of a document without `conversation_id` / `message_id`.
pub const NO_SOURCE_KEY: &str = "no source.conversation_id / message_id: this document is not idempotent; ingesting it again \
adds its evidence again (without raising confidence: a repeat with no conversation is not an independent source)";
