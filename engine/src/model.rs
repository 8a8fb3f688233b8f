//! The public shape of engram's data: what a caller reads back.
//!
//! Rows live in columns inside the engine (`state`); these are owned, cheap-to-clone views of one
//! row (strings are shared `Arc<str>`), returned by the read API.

use crate::ids::{ClaimId, EntityId, EvidenceId, WorkspaceId};
use crate::time::Timestamp;
use crate::value::Properties;
use std::sync::Arc;

/// The workspace every database starts with, and where writes that name none go.
pub const DEFAULT_WORKSPACE: &str = "default";

/// A claim's lifecycle state. It only moves forward: `Proposed → Accepted → Deprecated`
/// (or straight from `Proposed` to `Deprecated`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
#[serde(rename_all = "UPPERCASE")]
pub enum ClaimState {
    /// Extracted but not yet validated.
    #[serde(alias = "Proposed")]
    Proposed = 0,
    /// Confirmed by repetition, by a user, or by an authoritative high-confidence extraction.
    #[serde(alias = "Accepted")]
    Accepted = 1,
    /// Superseded or retracted; kept for history.
    #[serde(alias = "Deprecated")]
    Deprecated = 2,
}

impl ClaimState {
    /// All states, in lifecycle order.
    pub const ALL: [ClaimState; 3] = [ClaimState::Proposed, ClaimState::Accepted, ClaimState::Deprecated];

    /// Parses `PROPOSED` / `ACCEPTED` / `DEPRECATED`, in any case.
    pub fn parse(text: &str) -> Option<ClaimState> {
        let t = text.trim();
        ClaimState::ALL.into_iter().find(|s| s.as_str().eq_ignore_ascii_case(t))
    }

    /// The upper-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimState::Proposed => "PROPOSED",
            ClaimState::Accepted => "ACCEPTED",
            ClaimState::Deprecated => "DEPRECATED",
        }
    }

    /// Whether the lifecycle allows moving from `self` to `next`.
    pub fn can_move_to(self, next: ClaimState) -> bool {
        next >= self
    }
}

/// A set of claim states, as a bit mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StateSet(u8);

impl StateSet {
    /// Proposed and accepted: what an agent sees by default.
    pub const CURRENT: StateSet = StateSet(0b011);
    /// Every state.
    pub const ALL: StateSet = StateSet(0b111);

    /// The set holding exactly the given states.
    pub fn of(states: &[ClaimState]) -> StateSet {
        StateSet(states.iter().fold(0, |m, s| m | (1 << *s as u8)))
    }

    /// Membership test.
    #[inline]
    pub fn contains(self, s: ClaimState) -> bool {
        self.0 & (1 << s as u8) != 0
    }
}

impl Default for StateSet {
    fn default() -> Self {
        StateSet::CURRENT
    }
}

/// How many objects a subject may have for a predicate at one time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub enum Cardinality {
    /// One current value per subject (e.g. `streams_events_with`): a new value contradicts the old.
    One,
    /// Any number of values (the default for undeclared predicates).
    #[default]
    Many,
}

/// A predicate's declaration in one workspace's vocabulary.
#[derive(Clone, Debug, PartialEq)]
pub struct PredicateDef {
    /// Interned (lower-case) name.
    pub name: Arc<str>,
    /// One or many values per subject.
    pub cardinality: Cardinality,
    /// The name of the inverse predicate, if any (`part_of` ↔ `has_part`).
    pub inverse: Option<Arc<str>>,
    /// Whether the predicate is transitive (`subclass_of`): closure queries need it.
    pub transitive: bool,
    /// Time-decay half-life for ranking, in days; `None` means no decay.
    pub half_life_days: Option<f64>,
}

impl PredicateDef {
    /// The default for an undeclared predicate: many-valued, not transitive, no decay.
    pub fn undeclared(name: Arc<str>) -> PredicateDef {
        PredicateDef { name, cardinality: Cardinality::Many, inverse: None, transitive: false, half_life_days: None }
    }
}

/// A workspace as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkspaceInfo {
    /// Dense id (never reused).
    pub id: WorkspaceId,
    /// Its name.
    pub name: Arc<str>,
    /// When it was created (transaction time).
    pub created_at: Timestamp,
}

/// One entity, as read.
#[derive(Clone, Debug, PartialEq)]
pub struct Entity {
    /// Dense id.
    pub id: EntityId,
    /// Stable external id.
    pub ext_id: Arc<str>,
    /// Owning workspace.
    pub workspace: WorkspaceId,
    /// Type name (lower-case, interned).
    pub entity_type: Arc<str>,
    /// Canonical display name.
    pub name: Arc<str>,
    /// Alternative names.
    pub aliases: Vec<Arc<str>>,
    /// Typed properties.
    pub properties: Properties,
    /// When it was first recorded.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
    /// Soft-deleted (its claims are hidden with it).
    pub deleted: bool,
    /// The entity it was merged into (it is then also `deleted`), until the merge is undone.
    pub merged_into: Option<EntityId>,
}

/// One claim, as read.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    /// Dense id.
    pub id: ClaimId,
    /// Stable external id.
    pub ext_id: Arc<str>,
    /// Owning workspace.
    pub workspace: WorkspaceId,
    /// The subject entity.
    pub subject: EntityId,
    /// The predicate name (lower-case, interned).
    pub predicate: Arc<str>,
    /// The object entity.
    pub object: EntityId,
    /// Natural-language statement of the claim.
    pub text: Option<Arc<str>>,
    /// Confidence in `[0, 1]`.
    pub confidence: f32,
    /// Lifecycle state.
    pub state: ClaimState,
    /// Valid time: from (inclusive).
    pub valid_from: Timestamp,
    /// Valid time: until (exclusive); `Timestamp::MAX` when open.
    pub valid_until: Timestamp,
    /// Transaction time: when engram recorded it.
    pub recorded_at: Timestamp,
    /// Transaction time of the last change (state, deletion, restore).
    pub updated_at: Timestamp,
    /// The claim that replaced this one.
    pub superseded_by: Option<ClaimId>,
    /// Soft-deleted.
    pub deleted: bool,
    /// After this time the claim is no longer served; `Timestamp::MAX` when it never expires.
    pub expires_at: Timestamp,
    /// Marked as holding sensitive content (roles may hide it).
    pub sensitive: bool,
}

/// One evidence row: where a claim came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Evidence {
    /// Dense id.
    pub id: EvidenceId,
    /// Stable external id.
    pub ext_id: Arc<str>,
    /// The claim it supports.
    pub claim: ClaimId,
    /// Source conversation.
    pub conversation_id: Option<Arc<str>>,
    /// Source message.
    pub message_id: Option<Arc<str>>,
    /// Extraction model name.
    pub model: Option<Arc<str>>,
    /// Extraction model version.
    pub model_version: Option<Arc<str>>,
    /// The extractor's own confidence.
    pub raw_confidence: Option<f32>,
    /// The source text span.
    pub snippet: Option<Arc<str>>,
    /// Why the extractor made the claim.
    pub reasoning: Option<Arc<str>>,
    /// When the source said it (e.g. the extraction time).
    pub observed_at: Timestamp,
    /// When engram recorded this row.
    pub recorded_at: Timestamp,
}

/// One entity merge, as read (`WorkspaceView::merges_of`).
#[derive(Clone, Debug, PartialEq)]
pub struct Merge {
    /// The entity retired.
    pub from: EntityId,
    /// The entity that took its claims.
    pub into: EntityId,
    /// Transaction time of the merge.
    pub at: Timestamp,
    /// Transaction time of its undo, if undone.
    pub undone_at: Option<Timestamp>,
    /// How many claims it re-pointed.
    pub claims: usize,
    /// The aliases it gave `into`.
    pub aliases: Vec<Arc<str>>,
}

/// How much a grant allows, each level including the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Access {
    /// Read what the grant shows.
    Read,
    /// Read and write.
    Write,
    /// Read, write, and manage (settings, workspaces, checkpoints; users and grants on `*`).
    Admin,
}

impl Access {
    /// The lower-case name (`read`, `write`, `admin`).
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::Admin => "admin",
        }
    }

    /// Parses `read`, `write` or `admin` (any case).
    pub fn parse(s: &str) -> Option<Access> {
        match s.to_ascii_lowercase().as_str() {
            "read" => Some(Access::Read),
            "write" => Some(Access::Write),
            "admin" => Some(Access::Admin),
            _ => None,
        }
    }
}

/// The predicate linking a text (a conversation's turn) to a name it mentions.
pub const MENTIONS: &str = "mentions";

/// The predicate linking a text (a conversation's turn) to the one before it.
pub const FOLLOWS: &str = "follows";

/// Whether a claim only links two texts or a text and a name: a `MENTIONS` or `FOLLOWS` claim
/// without text. Recall walks such links and never returns them as facts.
pub fn is_link(predicate: &str, text: Option<&str>) -> bool {
    text.is_none() && (predicate.eq_ignore_ascii_case(MENTIONS) || predicate.eq_ignore_ascii_case(FOLLOWS))
}

/// The words of a predicate's name, appended to `out`: `STREAMS_EVENTS_WITH` → `STREAMS EVENTS
/// WITH`, `worksAt` → `works At`, `part-of` → `part of` (a name is one token to the tokenizer,
/// which keeps `_` inside words and does not split camel case).
pub fn predicate_words(name: &str, out: &mut String) {
    let mut prev: Option<char> = None;
    for ch in name.chars() {
        if ch == '_' || ch == '-' || ch == '.' || ch == ':' || ch == '/' {
            out.push(' ');
        } else {
            if ch.is_uppercase() && prev.is_some_and(char::is_lowercase) {
                out.push(' ');
            }
            out.push(ch);
        }
        prev = Some(ch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(predicate: &str) -> String {
        let mut out = String::new();
        predicate_words(predicate, &mut out);
        out
    }

    #[test]
    fn a_predicates_words() {
        assert_eq!(words("STREAMS_EVENTS_WITH"), "STREAMS EVENTS WITH");
        assert_eq!(words("worksAt"), "works At");
        assert_eq!(words("part-of"), "part of");
        assert_eq!(words("schema:knows"), "schema knows");
        assert_eq!(words("HTTPServer"), "HTTPServer", "a run of capitals is one word");
        assert_eq!(words("said"), "said");
    }
}
