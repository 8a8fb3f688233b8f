//! Write batches: the unit of atomicity.
//!
//! A `WriteBatch` is a list of operations against one workspace. It is validated completely and
//! applied to a private copy of the state; only when every operation succeeded is the copy published.
//! The operations are plain data so that, later, the batch itself is the WAL record.

use crate::ids::{ClaimId, EntityId};
use crate::model::{Cardinality, ClaimState};
use crate::time::Timestamp;
use crate::value::{Properties, Value};

/// Names an entity: by its external id, or by dense id.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum EntityRef {
    /// The external id given at upsert.
    Ext(String),
    /// The dense id.
    Id(EntityId),
}

impl From<&str> for EntityRef {
    fn from(s: &str) -> Self {
        EntityRef::Ext(s.to_owned())
    }
}
impl From<String> for EntityRef {
    fn from(s: String) -> Self {
        EntityRef::Ext(s)
    }
}
impl From<EntityId> for EntityRef {
    fn from(id: EntityId) -> Self {
        EntityRef::Id(id)
    }
}

/// Names a claim: by its external id, or by dense id.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ClaimRef {
    /// The external id given when the claim was added.
    Ext(String),
    /// The dense id.
    Id(ClaimId),
}

impl From<&str> for ClaimRef {
    fn from(s: &str) -> Self {
        ClaimRef::Ext(s.to_owned())
    }
}
impl From<String> for ClaimRef {
    fn from(s: String) -> Self {
        ClaimRef::Ext(s)
    }
}
impl From<ClaimId> for ClaimRef {
    fn from(id: ClaimId) -> Self {
        ClaimRef::Id(id)
    }
}

/// Inserts an entity, or updates the one with this external id.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct UpsertEntity {
    /// Stable external id (unique within the workspace).
    pub ext_id: String,
    /// Type name (case-insensitive).
    pub entity_type: String,
    /// Canonical name. On update, a different name renames the entity (the old name stays an alias).
    pub name: String,
    /// Aliases to add.
    pub aliases: Vec<String>,
    /// Properties to set (a `Null` value removes the key).
    pub properties: Properties,
}

/// Adds a claim `subject PREDICATE object`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AddClaim {
    /// Stable external id (unique within the workspace); `None` lets engram name it `c<dense id>`.
    pub ext_id: Option<String>,
    /// Subject entity.
    pub subject: EntityRef,
    /// Predicate name (case-insensitive; need not be declared).
    pub predicate: String,
    /// Object entity.
    pub object: EntityRef,
    /// Natural-language statement.
    pub text: Option<String>,
    /// Confidence in `[0, 1]`.
    pub confidence: f32,
    /// Initial state (`Proposed` by default).
    pub state: ClaimState,
    /// Valid from (inclusive); `None` = the commit time.
    pub valid_from: Option<Timestamp>,
    /// Valid until (exclusive); `None` = open.
    pub valid_until: Option<Timestamp>,
    /// Expiry; `None` = never.
    pub expires_at: Option<Timestamp>,
    /// Sensitive content.
    pub sensitive: bool,
}

impl AddClaim {
    /// A proposed claim with confidence 1 and no text, valid from the commit time.
    pub fn new(subject: impl Into<EntityRef>, predicate: &str, object: impl Into<EntityRef>) -> AddClaim {
        AddClaim {
            ext_id: None,
            subject: subject.into(),
            predicate: predicate.to_owned(),
            object: object.into(),
            text: None,
            confidence: 1.0,
            state: ClaimState::Proposed,
            valid_from: None,
            valid_until: None,
            expires_at: None,
            sensitive: false,
        }
    }

    /// Sets the external id.
    #[must_use]
    pub fn id(mut self, ext_id: &str) -> AddClaim {
        self.ext_id = Some(ext_id.to_owned());
        self
    }

    /// Sets the text.
    #[must_use]
    pub fn text(mut self, text: &str) -> AddClaim {
        self.text = Some(text.to_owned());
        self
    }

    /// Sets the confidence.
    #[must_use]
    pub fn confidence(mut self, confidence: f32) -> AddClaim {
        self.confidence = confidence;
        self
    }

    /// Sets the initial state.
    #[must_use]
    pub fn state(mut self, state: ClaimState) -> AddClaim {
        self.state = state;
        self
    }

    /// Sets the valid-time interval.
    #[must_use]
    pub fn valid(mut self, from: Option<Timestamp>, until: Option<Timestamp>) -> AddClaim {
        self.valid_from = from;
        self.valid_until = until;
        self
    }

    /// Sets the expiry.
    #[must_use]
    pub fn expires(mut self, at: Timestamp) -> AddClaim {
        self.expires_at = Some(at);
        self
    }

    /// Marks the claim sensitive: it does not exist for principals without `see_sensitive`.
    #[must_use]
    pub fn sensitive(mut self) -> AddClaim {
        self.sensitive = true;
        self
    }
}

/// Adds an evidence row to a claim.
#[derive(Clone, Debug, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct AddEvidence {
    /// Stable external id; `None` lets engram name it `v<dense id>`.
    pub ext_id: Option<String>,
    /// The claim it supports (`None` is rejected; `Option` only so `Default` works).
    pub claim: Option<ClaimRef>,
    /// Source conversation.
    pub conversation_id: Option<String>,
    /// Source message.
    pub message_id: Option<String>,
    /// Extraction model.
    pub model: Option<String>,
    /// Extraction model version.
    pub model_version: Option<String>,
    /// The extractor's confidence in `[0, 1]`.
    pub raw_confidence: Option<f32>,
    /// Source text span.
    pub snippet: Option<String>,
    /// When the source said it; `None` = the commit time.
    pub observed_at: Option<Timestamp>,
    /// Why the extractor made the claim (e.g. "stated by the architect"). Absent from records of
    /// format 1, which decode it as `None`.
    #[serde(deserialize_with = "crate::write::mutation::field_since_v2")]
    pub reasoning: Option<String>,
}

/// Declares (or redeclares) a predicate in the workspace's vocabulary.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeclarePredicate {
    /// Name (case-insensitive).
    pub name: String,
    /// One or many.
    pub cardinality: Cardinality,
    /// Inverse name.
    pub inverse: Option<String>,
    /// Transitive.
    pub transitive: bool,
    /// Decay half-life in days (positive, finite).
    pub half_life_days: Option<f64>,
}

impl DeclarePredicate {
    /// A many-valued, non-transitive predicate without decay.
    pub fn new(name: &str) -> DeclarePredicate {
        DeclarePredicate { name: name.to_owned(), cardinality: Cardinality::Many, inverse: None, transitive: false, half_life_days: None }
    }

    /// Marks it transitive.
    #[must_use]
    pub fn transitive(mut self) -> DeclarePredicate {
        self.transitive = true;
        self
    }
}

/// One operation of a batch.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Op {
    /// Insert or update an entity.
    UpsertEntity(UpsertEntity),
    /// Change an entity's canonical name (the old one stays an alias).
    RenameEntity {
        /// Which entity.
        entity: EntityRef,
        /// The new canonical name.
        name: String,
    },
    /// Add an alias.
    AddAlias {
        /// Which entity.
        entity: EntityRef,
        /// The alias.
        alias: String,
    },
    /// Remove an alias (by normalised key).
    RemoveAlias {
        /// Which entity.
        entity: EntityRef,
        /// The alias.
        alias: String,
    },
    /// Set (or with `Null`, remove) one property.
    SetProperty {
        /// Which entity.
        entity: EntityRef,
        /// Property key.
        key: String,
        /// New value.
        value: Value,
    },
    /// Add a claim.
    AddClaim(AddClaim),
    /// Add evidence to a claim.
    AddEvidence(AddEvidence),
    /// Move a claim to `Accepted` (from `Proposed`).
    AcceptClaim {
        /// Which claim.
        claim: ClaimRef,
    },
    /// Set a claim's confidence (corroboration raises it, doubt lowers it).
    SetConfidence {
        /// Which claim.
        claim: ClaimRef,
        /// New confidence in `[0, 1]`.
        confidence: f32,
    },
    /// Deprecate a claim, optionally naming its replacement.
    Deprecate {
        /// Which claim.
        claim: ClaimRef,
        /// The claim that replaces it (same workspace, not itself).
        superseded_by: Option<ClaimRef>,
    },
    /// Soft-delete a claim (restorable).
    DeleteClaim {
        /// Which claim.
        claim: ClaimRef,
    },
    /// Restore a soft-deleted claim.
    RestoreClaim {
        /// Which claim.
        claim: ClaimRef,
    },
    /// Soft-delete an entity; its claims are hidden with it.
    DeleteEntity {
        /// Which entity.
        entity: EntityRef,
    },
    /// Restore a soft-deleted entity (and so its claims, unless deleted themselves).
    RestoreEntity {
        /// Which entity.
        entity: EntityRef,
    },
    /// Declare a predicate.
    DeclarePredicate(DeclarePredicate),
    /// Attach an embedding: an entity's name vector or a claim's text vector. The database's
    /// dimension is fixed by the first vector it stores; each id gets its vector once.
    SetVector {
        /// Whose vector.
        target: VectorTarget,
        /// The components (finite; the database's dimension).
        vector: Vec<f32>,
    },
    /// End a claim's valid time (it stopped being true then): what a contradiction records on
    /// the claim it supersedes.
    EndValidity {
        /// Which claim.
        claim: ClaimRef,
        /// Valid until (exclusive); after the claim's `valid_from`.
        valid_until: Timestamp,
    },
    /// Erase for good (a privacy request), unlike soft delete: an entity with every claim it
    /// takes part in, or everything a conversation contributed (its evidence rows, and the
    /// claims no other source supports). Content leaves every index; history does not keep it.
    Forget(ForgetTarget),
    /// Merges entity `from` into `into` (two names found to mean one thing): `from`'s claims are
    /// re-pointed to `into` (the same claim rows, with their history and evidence, never
    /// copies), `from`'s name and aliases become aliases of `into`, and `from` is retired:
    /// soft-deleted and remembered as merged. `UnmergeEntity` undoes it. Appended last: record
    /// decoding numbers variants by position.
    MergeEntities {
        /// The entity that goes away.
        from: EntityRef,
        /// The entity that stays.
        into: EntityRef,
    },
    /// Undoes the merge that retired `entity`: the claims it moved go back to `entity`, the
    /// aliases it added to the survivor are removed, and `entity` is restored. Claims written
    /// about the survivor since stay with it.
    UnmergeEntity {
        /// The merged-away entity.
        entity: EntityRef,
    },
    /// Creates an entity as the query language writes a node (`CREATE (:A:B {k: v})`): labels
    /// as written (case kept; the first is its type; none is allowed), typed properties, and no
    /// external id or name of its own (it is named `_n<id>`; a string `name` property is also its
    /// name for search and resolution). The four operations from here on came with record
    /// format 3.
    CreateNode(CreateNode),
    /// Creates a claim as the query language writes a relationship: its predicate is the type as
    /// written (case kept), its typed properties are kept as written, and a `text` string or a
    /// `confidence` number in `[0, 1]` among them also sets the claim's memory field.
    CreateRelationship(CreateRelationship),
    /// Sets properties of an entity or a claim (a `Null` value removes the key); `replace` first
    /// removes every other key. The memory fields follow as at creation.
    SetProperties {
        /// Whose properties.
        target: Element,
        /// Keys and values.
        properties: Properties,
        /// Remove the keys not listed (`SET n = {…}`).
        replace: bool,
    },
    /// Adds and removes labels (case kept) of an entity; the first label left is its type.
    SetLabels {
        /// Which entity.
        entity: EntityRef,
        /// Labels to add (those it has are skipped).
        add: Vec<String>,
        /// Labels to remove (those it lacks are skipped).
        remove: Vec<String>,
    },
    /// Sets and removes tags (`crate::tags`) of an entity, a claim, or a message (a claim's
    /// evidence from it carries them to the claim). With `inherit`, the tags are a source's:
    /// keys the row has stay, and `sensitivity` becomes the stricter of the two. Came with
    /// record format 7.
    SetTags {
        /// Whose tags.
        target: TagTarget,
        /// Keys and values to set.
        set: std::collections::BTreeMap<String, String>,
        /// Keys to remove.
        remove: Vec<String>,
        /// Inherit from a source rather than set.
        inherit: bool,
    },
}

/// What `Op::SetTags` tags.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum TagTarget {
    /// An entity.
    Entity(EntityRef),
    /// A claim.
    Claim(ClaimRef),
    /// A message of a conversation, or (without a message id) the whole conversation.
    Message {
        /// The conversation.
        conversation_id: String,
        /// The message.
        message_id: Option<String>,
    },
}

/// A node of the query language (`Op::CreateNode`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CreateNode {
    /// External id; `None` names it `_n<id>` (an import gives the exported one).
    pub ext_id: Option<String>,
    /// Labels, as written.
    pub labels: Vec<String>,
    /// Typed properties (`Null` values are dropped).
    pub properties: Properties,
}

/// A relationship of the query language (`Op::CreateRelationship`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CreateRelationship {
    /// External id; `None` names it `c<id>` (an import gives the exported one).
    pub ext_id: Option<String>,
    /// Start node.
    pub subject: EntityRef,
    /// Relationship type, as written.
    pub rel_type: String,
    /// End node.
    pub object: EntityRef,
    /// Typed properties (`Null` values are dropped).
    pub properties: Properties,
    /// Valid from; `None` = the commit time (an import gives the exported one).
    pub valid_from: Option<Timestamp>,
}

/// An entity or a claim.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Element {
    /// An entity.
    Entity(EntityRef),
    /// A claim.
    Claim(ClaimRef),
}

/// What `Op::Forget` erases.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ForgetTarget {
    /// An entity and all its claims.
    Entity(EntityRef),
    /// A conversation id: its evidence, and the claims only it supports.
    Conversation(String),
    /// History: every claim of the workspace soft-deleted at or before `before` (transaction
    /// time of the deletion), or whose expiry is at or before it. What a retention setting
    /// compacts.
    History {
        /// The cut-off.
        before: Timestamp,
    },
}

/// What a vector belongs to.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum VectorTarget {
    /// An entity (its name embedding).
    Entity(EntityRef),
    /// A claim (its text embedding).
    Claim(ClaimRef),
}

/// A batch of operations against one workspace, committed atomically.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WriteBatch {
    /// Target workspace name.
    pub workspace: String,
    /// The operations, applied in order (later ones may refer to what earlier ones created).
    pub ops: Vec<Op>,
}

impl WriteBatch {
    /// An empty batch for `workspace`.
    pub fn new(workspace: &str) -> WriteBatch {
        WriteBatch { workspace: workspace.to_owned(), ops: Vec::new() }
    }

    /// Appends any operation.
    pub fn push(&mut self, op: Op) -> &mut Self {
        self.ops.push(op);
        self
    }

    /// Upserts an entity with no aliases or properties.
    pub fn upsert_entity(&mut self, ext_id: &str, entity_type: &str, name: &str) -> &mut Self {
        self.push(Op::UpsertEntity(UpsertEntity {
            ext_id: ext_id.to_owned(),
            entity_type: entity_type.to_owned(),
            name: name.to_owned(),
            aliases: Vec::new(),
            properties: Properties::new(),
        }))
    }

    /// Adds a claim.
    pub fn add_claim(&mut self, claim: AddClaim) -> &mut Self {
        self.push(Op::AddClaim(claim))
    }

    /// Attaches an entity's name embedding.
    pub fn set_entity_vector(&mut self, entity: impl Into<EntityRef>, vector: Vec<f32>) -> &mut Self {
        self.push(Op::SetVector { target: VectorTarget::Entity(entity.into()), vector })
    }

    /// Attaches a claim's text embedding.
    pub fn set_claim_vector(&mut self, claim: impl Into<ClaimRef>, vector: Vec<f32>) -> &mut Self {
        self.push(Op::SetVector { target: VectorTarget::Claim(claim.into()), vector })
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// True when there are no operations.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}
