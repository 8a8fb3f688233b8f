//! The state of the database at one commit: catalog, tables, indexes and graph.
//!
//! A `State` is immutable once published (`Arc<State>`). The writer clones the published state
//! (cheap: every column is copy-on-write), applies a batch to the clone, and publishes the clone.
//! A batch that fails part-way is simply dropped, so a failed transaction cannot leave a trace.

pub(crate) mod rowsets;

use crate::ids::{ClaimId, PredicateId, TypeId, WorkspaceId, NONE};
use crate::index::bitcol::BitCol;
use crate::index::bitmap::IdSet;
use crate::index::cow::CowVec;
use crate::index::graph::{build_base, initial_dirty, Base, Graph};
use crate::index::keyindex::{key_hash, KeyIndex};
use crate::index::propindex::{PropIndex, Scalar};
use crate::index::strvec::StrVec;
use crate::index::timelog::TimeLog;
use crate::model::{ClaimState, PredicateDef, WorkspaceInfo};
use crate::normalize::name_key;
use crate::tags::Tags;
use crate::time::Timestamp;
use crate::value::Properties;
use std::sync::{Arc, OnceLock};

/// Claim flag: visible in the lifecycle sense (not deprecated, not deleted, endpoints not deleted,
/// workspace not dropped). The hot traversal loops test this bit.
pub(crate) const LIVE: u8 = 1;
/// Claim flag: has a time bound that "now" can cross (future `valid_from`, finite `valid_until`
/// or expiry), so its time columns must be checked.
pub(crate) const TIMED: u8 = 2;
/// Claim/entity flag: soft-deleted.
pub(crate) const DELETED: u8 = 4;
/// Claim flag: sensitive.
pub(crate) const SENSITIVE: u8 = 8;
/// Claim/entity flag: its workspace was dropped; the row is erased and never served.
pub(crate) const ERASED: u8 = 16;
/// Claim/entity flag: written by the query language, so its memory fields (an entity's external
/// id and name, a claim's text, confidence and state) were not written as such: the element shows
/// exactly its typed properties.
pub(crate) const BARE: u8 = 32;

/// A string interner for predicate and type names (global; at most 65,536 names).
#[derive(Clone, Debug, Default)]
pub struct Interner {
    names: Arc<Vec<Arc<str>>>,
    ids: crate::pmap::PMap<Arc<str>, u16>,
}

impl Interner {
    /// The id of an already interned key.
    pub fn get(&self, key: &str) -> Option<u16> {
        self.ids.get(key).copied()
    }

    /// Interns `key` (already normalised); `None` when the table is full.
    pub fn intern(&mut self, key: &str) -> Option<u16> {
        if let Some(id) = self.get(key) {
            return Some(id);
        }
        let id = u16::try_from(self.names.len()).ok()?;
        let name: Arc<str> = Arc::from(key);
        Arc::make_mut(&mut self.names).push(name.clone());
        self.ids.insert(name, id);
        Some(id)
    }

    /// The name of `id`.
    pub fn name(&self, id: u16) -> &Arc<str> {
        &self.names[id as usize]
    }

    /// Number of names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// The names as one shared value. Interning into a table whose names are shared copies them
    /// first (`Arc::make_mut`), so while a caller holds this the names behind it never change:
    /// what was looked up in it may be remembered against it (`Arc::ptr_eq`).
    pub fn names(&self) -> &Arc<Vec<Arc<str>>> {
        &self.names
    }
}

/// A workspace's names in first-use order, append-only: the ids by which the language's
/// `db.labels()`, `db.relationshipTypes()` and `db.propertyKeys()` number their rows (and so the
/// ids a client may cache).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Vocabulary {
    pub labels: Vec<TypeId>,
    pub types: Vec<PredicateId>,
    pub keys: Vec<Arc<str>>,
    /// The types and keys noted by something other than a sensitive claim: what a principal
    /// without `see_sensitive` is numbered by (a name only a sensitive claim uses does not exist
    /// for it, not even as a row).
    pub public_types: Vec<PredicateId>,
    pub public_keys: Vec<Arc<str>>,
}

/// Workspaces and vocabularies.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    /// By id; `None` once dropped.
    pub workspaces: Arc<Vec<Option<WorkspaceInfo>>>,
    pub workspace_by_name: crate::pmap::PMap<Arc<str>, WorkspaceId>,
    pub predicates: Interner,
    pub types: Interner,
    pub predicate_defs: crate::pmap::PMap<(WorkspaceId, PredicateId), PredicateDef>,
    /// Each workspace's names in first-use order.
    pub vocab: crate::pmap::PMap<WorkspaceId, Arc<Vocabulary>>,
}

impl Catalog {
    /// Notes label `t` (not the empty type) as used in `ws`.
    pub fn note_label(&mut self, ws: WorkspaceId, t: TypeId) {
        if self.types.name(t.0).is_empty() || self.vocab.get(&ws).is_some_and(|v| v.labels.contains(&t)) {
            return;
        }
        Arc::make_mut(self.vocab.entry(ws).or_default()).labels.push(t);
    }

    /// Notes relationship type `p` as used in `ws` (by a sensitive claim or not).
    pub fn note_type(&mut self, ws: WorkspaceId, p: PredicateId, sensitive: bool) {
        let known = self.vocab.get(&ws).map_or((false, false), |v| (v.types.contains(&p), v.public_types.contains(&p)));
        if known.0 && (known.1 || sensitive) {
            return;
        }
        let v = Arc::make_mut(self.vocab.entry(ws).or_default());
        if !known.0 {
            v.types.push(p);
        }
        if !known.1 && !sensitive {
            v.public_types.push(p);
        }
    }

    /// Notes property keys as used in `ws` (by a sensitive claim or not).
    pub fn note_keys<'k>(&mut self, ws: WorkspaceId, keys: impl IntoIterator<Item = &'k str>, sensitive: bool) {
        for k in keys {
            let known =
                self.vocab.get(&ws).map_or((false, false), |v| (v.keys.iter().any(|x| &**x == k), v.public_keys.iter().any(|x| &**x == k)));
            if known.0 && (known.1 || sensitive) {
                continue;
            }
            let v = Arc::make_mut(self.vocab.entry(ws).or_default());
            if !known.0 {
                v.keys.push(Arc::from(k));
            }
            if !known.1 && !sensitive {
                v.public_keys.push(Arc::from(k));
            }
        }
    }

    /// The live workspace named `name`.
    pub fn workspace(&self, name: &str) -> Option<WorkspaceId> {
        self.workspace_by_name.get(name).copied()
    }

    /// Predicates declared transitive in some workspace (they get their own adjacency).
    pub fn transitive_predicates(&self) -> Vec<u16> {
        let mut v: Vec<u16> = self.predicate_defs.iter().filter(|(_, d)| d.transitive).map(|((_, p), _)| p.0).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The declaration of `pred` in `ws`, or the undeclared default.
    pub fn predicate_def(&self, ws: WorkspaceId, pred: PredicateId) -> PredicateDef {
        self.predicate_defs.get(&(ws, pred)).cloned().unwrap_or_else(|| PredicateDef::undeclared(self.predicates.name(pred.0).clone()))
    }
}

/// Whether `ext` is `c<id>`: the id engram generates for claim `id`, which lookups find by
/// position instead of through the claim-id index.
pub(crate) fn is_positional_claim_id(ext: &str, id: u32) -> bool {
    // Canonical decimal only: `c007` or `c+7` is a name a caller chose, found through the index.
    let Some(digits) = ext.strip_prefix('c') else { return false };
    let canonical = digits.bytes().all(|b| b.is_ascii_digit()) && (digits == "0" || !digits.starts_with('0'));
    canonical && digits.parse::<u32>() == Ok(id)
}

/// A change of an entity's deleted flag, with the value before it (transaction-time history).
#[derive(Clone, Copy, Debug)]
pub struct EntityEvent {
    pub at: Timestamp,
    pub deleted_before: bool,
    pub prev: u32,
}

pub(crate) use crate::index::strvec::ALIAS_SEP;

/// The entity table. Dense columns for what every entity has; persistent sparse maps for what
/// few have (properties, later updates, deletion history), so a bulk-loaded entity costs only
/// its dense columns.
#[derive(Clone, Debug, Default)]
pub struct Entities {
    pub ws: CowVec<WorkspaceId>,
    pub ty: CowVec<TypeId>,
    pub flags: CowVec<u8>,
    pub ext_id: StrVec,
    pub name: StrVec,
    /// Aliases joined by `ALIAS_SEP`.
    pub aliases: StrVec,
    pub created: TimeLog,
    pub updated_at: crate::pmap::PMap<u32, Timestamp>,
    pub props: crate::index::rowmap::RowMap<Arc<Properties>>,
    /// The labels after the first (the first is the type), in the order written.
    pub labels: crate::pmap::PMap<u32, Arc<[TypeId]>>,
    /// The entities with a property `id`: where the language's `{id: v}` looks besides the
    /// external ids (kept by `set_props`).
    pub id_props: IdSet,
    /// Head of each entity's deletion history in `events`.
    pub last_event: crate::pmap::PMap<u32, u32>,
    pub events: CowVec<EntityEvent>,
    /// `key_hash(ws, ext_id)` → entity.
    pub by_ext: KeyIndex,
    /// `key_hash(ws, name_key(name or alias))` → entity.
    pub by_name: KeyIndex,
    /// `prop_hash(ws, key, value)` → entity, for every indexable property value written (kept by
    /// `set_props`; a value overwritten stays as a stale candidate, which readers test away).
    pub by_prop: PropIndex,
    /// Entity merges, oldest first; an undone merge stays listed (history).
    pub merges: CowVec<MergeRecord>,
    /// A merged-away entity → its merge in `merges`, until the merge is undone.
    pub merged: crate::pmap::PMap<u32, u32>,
    /// Its own tags (`crate::tags`).
    pub tags: crate::pmap::PMap<u32, Arc<Tags>>,
}

/// One entity merge, with what it changed so it can be undone exactly.
#[derive(Clone, Debug)]
pub struct MergeRecord {
    /// The entity retired.
    pub from: u32,
    /// The entity that took its claims.
    pub into: u32,
    /// Transaction time of the merge.
    pub at: Timestamp,
    /// Transaction time of the undo (`MAX` while the merge stands).
    pub undone_at: Timestamp,
    /// The claims re-pointed, each with the ends that were `from`: bit 0 subject, bit 1 object.
    pub claims: Arc<[(u32, u8)]>,
    /// The aliases the merge added to `into`.
    pub aliases: Arc<[Arc<str>]>,
}

impl Entities {
    /// Replaces entity `e`'s properties (`None` or empty: none), keeping `id_props` and the
    /// detector's `pii` tag (`crate::pii`) in step.
    pub fn set_props(&mut self, e: u32, props: Option<Properties>) {
        let props = props.filter(|p| !p.is_empty());
        self.id_props.set(e, props.as_ref().is_some_and(|p| p.contains_key("id")));
        let found = props.as_ref().and_then(|p| crate::pii::tag_value_of(crate::pii::strings(p)));
        if let Some(t) = crate::pii::retag(self.tags.get(&e).map(AsRef::as_ref), found) {
            if t.is_empty() {
                self.tags.remove(&e);
            } else {
                self.tags.insert(e, Arc::new(t));
            }
        }
        match props {
            Some(p) => {
                let before = self.props.get(e).cloned();
                let rebuild = self.by_prop.note(*self.ws.get(e as usize), e, before.as_deref(), Some(&p));
                self.props.insert(e, Arc::new(p));
                if rebuild {
                    self.rebuild_prop_index();
                }
            }
            None => {
                if let Some(before) = self.props.remove(e) {
                    self.by_prop.note(*self.ws.get(e as usize), e, Some(&before), None);
                }
            }
        }
    }

    /// `by_prop` made again from every entity's properties (its stale entries gone).
    pub fn rebuild_prop_index(&mut self) {
        let mut index = PropIndex::default();
        index.rebuild(self.props.iter().map(|(e, p)| (e, *self.ws.get(e as usize), &**p)));
        self.by_prop = index;
    }

    /// The entities of `ws` whose name or an alias has the normalised key `key` (`name_key`),
    /// or had it (candidates, as `with_prop`: in `ws`, not erased, ascending, once).
    pub fn with_name_key(&self, ws: WorkspaceId, key: &str) -> Vec<u32> {
        let mut out = Vec::new();
        self.by_name.candidates(key_hash(ws, key), |e| {
            if *self.ws.get(e as usize) == ws && *self.flags.get(e as usize) & ERASED == 0 {
                out.push(e);
            }
        });
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The entities of `ws` that may hold `value` under `key` (candidates: each in `ws` and not
    /// erased, ascending, once; the value itself is for the caller to test).
    pub fn with_prop(&self, ws: WorkspaceId, key: &str, value: Scalar<'_>) -> Vec<u32> {
        self.by_prop.find(ws, key, value, |e| *self.ws.get(e as usize) == ws && *self.flags.get(e as usize) & ERASED == 0)
    }

    /// How many entries the indexes hold for `with_name_key`, `with_prop` and `in_range`
    /// (before their checks): what a query weighs one lookup against another by.
    pub fn count_name_key(&self, ws: WorkspaceId, key: &str) -> usize {
        self.by_name.count(key_hash(ws, key))
    }

    /// See `count_name_key`.
    pub fn count_with_prop(&self, ws: WorkspaceId, key: &str, value: Scalar<'_>) -> usize {
        self.by_prop.count(ws, key, value)
    }

    /// See `count_name_key`.
    pub fn count_in_range(&self, ws: WorkspaceId, key: &str, range: (u8, u64, u64)) -> usize {
        self.by_prop.count_range(ws, key, range)
    }

    /// The entities of `ws` that may hold under `key` a value of `class` with an order word in
    /// `lo..=hi` (candidates, as `with_prop`; see `PropIndex::range`).
    pub fn in_range(&self, ws: WorkspaceId, key: &str, range: (u8, u64, u64)) -> Vec<u32> {
        self.by_prop.range(ws, key, range, |e| *self.ws.get(e as usize) == ws && *self.flags.get(e as usize) & ERASED == 0)
    }

    /// `in_range`'s candidates as `(order word, entity)` in the words' order, read as needed.
    pub fn in_order(&self, ws: WorkspaceId, key: &str, range: (u8, u64, u64), descending: bool) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.by_prop
            .in_order(ws, key, range, descending)
            .filter(move |(_, e)| *self.ws.get(*e as usize) == ws && *self.flags.get(*e as usize) & ERASED == 0)
    }

    /// Number of rows (including deleted and erased).
    pub fn len(&self) -> usize {
        self.ws.len()
    }

    /// The aliases of `e`.
    pub fn aliases_of(&self, e: u32) -> impl Iterator<Item = &str> {
        self.aliases.get(e as usize).split(ALIAS_SEP).filter(|a| !a.is_empty())
    }

    /// Last change time.
    pub fn updated_at(&self, e: u32) -> Timestamp {
        self.updated_at.get(&e).copied().unwrap_or_else(|| self.created.at(e))
    }

    /// The entity of `ws` with external id `ext`.
    pub fn find_ext(&self, ws: WorkspaceId, ext: &str) -> Option<u32> {
        self.by_ext.find(key_hash(ws, ext), |e| {
            // The text's two dependent loads start beside the workspace's and the flags'.
            self.ext_id.prefetch(e as usize);
            *self.ws.get(e as usize) == ws && self.ext_id.get(e as usize) == ext && *self.flags.get(e as usize) & ERASED == 0
        })
    }

    /// The entity `e` was merged into, while the merge stands.
    pub fn merged_into(&self, e: u32) -> Option<u32> {
        self.merged.get(&e).map(|m| self.merges.get(*m as usize).into)
    }

    /// Whether `e`'s canonical name or an alias has normalised key `key`.
    pub fn has_key(&self, e: u32, key: &str) -> bool {
        name_key(self.name.get(e as usize)) == key || self.aliases_of(e).any(|a| name_key(a) == key)
    }
}

/// A change of a claim's state or deleted flag, with the values before it.
#[derive(Clone, Copy, Debug)]
pub struct ClaimEvent {
    pub at: Timestamp,
    pub state_before: ClaimState,
    pub deleted_before: bool,
    pub prev: u32,
}

/// The claim table. A claim's workspace is its subject's.
#[derive(Clone, Debug, Default)]
pub struct Claims {
    pub subject: CowVec<u32>,
    pub object: CowVec<u32>,
    pub pred: CowVec<u16>,
    pub confidence: CowVec<f32>,
    pub state: CowVec<ClaimState>,
    pub flags: CowVec<u8>,
    /// `LIVE && !TIMED`: visible now without looking at any time column.
    pub fast: BitCol,
    /// `LIVE && TIMED`: visible if the clock is inside the claim's bounds.
    pub timed_live: BitCol,
    pub valid_from: CowVec<Timestamp>,
    pub valid_until: CowVec<Timestamp>,
    pub ext_id: StrVec,
    pub text: StrVec,
    pub evidence_head: CowVec<u32>,
    pub recorded: TimeLog,
    pub updated_at: crate::pmap::PMap<u32, Timestamp>,
    pub expires_at: crate::pmap::PMap<u32, Timestamp>,
    pub superseded_by: crate::pmap::PMap<u32, u32>,
    pub last_event: crate::pmap::PMap<u32, u32>,
    pub events: CowVec<ClaimEvent>,
    /// `key_hash(ws, ext_id)` → claim.
    pub by_ext: KeyIndex,
    /// Replacement → the claims it superseded.
    pub supersedes: crate::pmap::PMap<u32, Arc<[ClaimId]>>,
    /// Typed properties written by the query language (set through `State::set_claim_props`).
    pub props: crate::index::rowmap::RowMap<Arc<Properties>>,
    /// `prop_hash(ws, key, value)` → claim, as `Entities::by_prop`.
    pub by_prop: PropIndex,
    /// Its own tags (`crate::tags`; the tags of its evidence's messages join them when read).
    pub tags: crate::pmap::PMap<u32, Arc<Tags>>,
}

impl Claims {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.subject.len()
    }

    /// Expiry (`MAX` when none).
    pub fn expires_at(&self, c: u32) -> Timestamp {
        self.expires_at.get(&c).copied().unwrap_or(Timestamp::MAX)
    }

    /// Last change time.
    pub fn updated_at(&self, c: u32) -> Timestamp {
        self.updated_at.get(&c).copied().unwrap_or_else(|| self.recorded.at(c))
    }
}

/// One evidence row.
#[derive(Clone, Debug)]
pub struct EvidenceRow {
    pub claim: ClaimId,
    pub ext_id: Option<Arc<str>>,
    pub conversation_id: Option<Arc<str>>,
    pub message_id: Option<Arc<str>>,
    pub model: Option<Arc<str>>,
    pub model_version: Option<Arc<str>>,
    pub raw_confidence: Option<f32>,
    pub snippet: Option<Arc<str>>,
    pub reasoning: Option<Arc<str>>,
    pub observed_at: Timestamp,
    pub recorded_at: Timestamp,
    /// Next (older) evidence row of the same claim.
    pub next: u32,
}

/// The evidence table.
#[derive(Clone, Debug, Default)]
pub struct EvidenceTable {
    pub rows: CowVec<EvidenceRow>,
    /// External id (hashed with its workspace) → candidate rows, verified by [`State::find_evidence_ext`].
    pub by_ext: KeyIndex,
    /// The tags of messages and conversations, by `message_key`.
    pub message_tags: crate::pmap::PMap<Arc<str>, Arc<Tags>>,
}

/// The key of the tags of message `msg` of conversation `conv` in workspace `ws` (without a
/// message: of the whole conversation).
pub fn message_key(ws: WorkspaceId, conv: &str, msg: Option<&str>) -> Arc<str> {
    Arc::from(format!("{}\u{1f}{conv}\u{1f}{}", ws.0, msg.unwrap_or("")))
}

/// Roaring bitmaps over entity and claim ids, kept in step with every write.
#[derive(Clone, Debug, Default)]
pub struct Bitmaps {
    pub claims_by_state: [IdSet; 3],
    pub claims_deleted: IdSet,
    /// Mirrors the `LIVE` flag: the lifecycle-visible claims.
    pub claims_live: IdSet,
    /// Mirrors the `SENSITIVE` flag: the claims a principal without `see_sensitive` never sees.
    pub claims_sensitive: IdSet,
    pub claims_by_ws: crate::pmap::PMap<WorkspaceId, IdSet>,
    pub claims_by_pred: crate::pmap::PMap<PredicateId, IdSet>,
    pub entities_by_ws: crate::pmap::PMap<WorkspaceId, IdSet>,
    pub entities_by_type: crate::pmap::PMap<TypeId, IdSet>,
    pub entities_deleted: IdSet,
}

/// The two vector columns (rows by dense id).
#[derive(Clone, Debug, Default)]
pub struct Vectors {
    pub entity: crate::index::vectors::VectorColumn,
    pub claim: crate::index::vectors::VectorColumn,
}

/// Everything at one commit.
#[derive(Clone, Debug, Default)]
pub struct State {
    /// Commit counter: 0 for the empty database, +1 per published change.
    pub version: u64,
    /// Transaction time of the last commit.
    pub committed_at: Timestamp,
    pub catalog: Catalog,
    pub entities: Entities,
    pub claims: Claims,
    pub evidence: EvidenceTable,
    pub graph: Graph,
    /// The first claim a replay left out of `graph` (`None`: the graph holds every claim).
    pub unlinked_from: Option<u32>,
    pub bitmaps: Bitmaps,
    /// The first entity and claim rows whose bitmaps a replay leaves to `catch_up_bitmaps`
    /// (`None`: the bitmaps hold every row).
    pub bitmaps_from: Option<(u32, u32)>,
    /// Settings stored in the database.
    pub settings: Arc<crate::settings::Settings>,
    /// Entity-name and claim-text vectors.
    pub vectors: Vectors,
    /// Keyword indexes over claim texts and entity names.
    pub text: crate::index::bm25::TextIndexes,
    /// Entity vectors stored for entities of earlier commits (an entity created without one
    /// that gets one later). Ingest's resolution hints, computed on an older snapshot, are valid
    /// only while this is unchanged. Not persisted: hints never outlive the process.
    pub late_entity_vectors: u64,
    /// The `fast` and `timed_live` bit columns flattened, built on first use by a read of this
    /// snapshot and reset by the writer for each new state.
    pub fast_flat: OnceLock<Arc<FlatFilter>>,
}

/// A claim's visibility, `(live, fast, timed_live)`, from its flags, its lifecycle state and the
/// union of its endpoints' flags: live when neither it nor an endpoint is deleted or erased and it
/// is not deprecated; `fast` when live without a time bound, `timed_live` when live with one.
#[inline]
pub fn claim_visibility(flags: u8, state: ClaimState, endpoint_flags: u8) -> (bool, bool, bool) {
    let live = (flags | endpoint_flags) & (DELETED | ERASED) == 0 && state != ClaimState::Deprecated;
    (live, live && flags & TIMED == 0, live && flags & TIMED != 0)
}

impl State {
    /// Drops what reads derive lazily from one version's columns (`fast_flat`): a writer calls it
    /// on every state it changes.
    pub fn reset_caches(&mut self) {
        self.fast_flat = OnceLock::new();
    }

    /// Recomputes claim `c`'s `LIVE` flag from its state, deletion and endpoints, keeping the live
    /// bitmap in step.
    pub fn refresh_claim_live(&mut self, c: u32) {
        let i = c as usize;
        let flags = *self.claims.flags.get(i);
        let s = *self.claims.subject.get(i) as usize;
        let o = *self.claims.object.get(i) as usize;
        let endpoints = *self.entities.flags.get(s) | *self.entities.flags.get(o);
        let (live, fast, timed_live) = claim_visibility(flags, *self.claims.state.get(i), endpoints);
        let new_flags = if live { flags | LIVE } else { flags & !LIVE };
        if new_flags != flags {
            self.claims.flags.set(i, new_flags);
        }
        if c < self.graph.watermark && (fast != self.claims.fast.get(i) || timed_live) {
            // The base CSR's LIVE_BIT for this claim is now stale (or needs a clock check).
            self.graph.mark_dirty(s as u32);
            self.graph.mark_dirty(o as u32);
        }
        self.claims.fast.set(i, fast);
        self.claims.timed_live.set(i, timed_live);
        if !self.claim_bitmaps_deferred(c) {
            self.bitmaps.claims_live.set(c, live);
        }
    }

    /// Whether claim `c` is valid and unexpired at valid time `t`.
    #[inline]
    pub fn claim_valid_at(&self, c: u32, t: Timestamp) -> bool {
        let i = c as usize;
        *self.claims.valid_from.get(i) <= t && t < *self.claims.valid_until.get(i) && t < self.claims.expires_at(c)
    }

    /// The state claim `c` had before it was deprecated: the state before the event that moved it
    /// to DEPRECATED; ACCEPTED for a claim stored deprecated from the start (history that arrived
    /// after its successor: it was the value of its time).
    pub fn claim_state_before_deprecation(&self, c: u32) -> ClaimState {
        let mut ev = self.claims.last_event.get(&c).copied().unwrap_or(NONE);
        while ev != NONE {
            let e = self.claims.events.get(ev as usize);
            if e.state_before != ClaimState::Deprecated {
                return e.state_before;
            }
            ev = e.prev;
        }
        ClaimState::Accepted
    }

    /// `(state, deleted)` of claim `c` as recorded at transaction time `k`.
    pub fn claim_lifecycle_at(&self, c: u32, k: Timestamp) -> (ClaimState, bool) {
        let i = c as usize;
        let mut state = *self.claims.state.get(i);
        let mut deleted = *self.claims.flags.get(i) & DELETED != 0;
        let mut ev = self.claims.last_event.get(&c).copied().unwrap_or(NONE);
        while ev != NONE {
            let e = self.claims.events.get(ev as usize);
            if e.at <= k {
                break;
            }
            state = e.state_before;
            deleted = e.deleted_before;
            ev = e.prev;
        }
        (state, deleted)
    }

    /// The claims of workspace `ws` that are history older than `before`: soft-deleted at or
    /// before it (the transaction time of the latest deletion), or expired by then. Erased
    /// claims are not listed.
    pub fn history_before(&self, ws: WorkspaceId, before: Timestamp) -> Vec<u32> {
        let Some(claims) = self.bitmaps.claims_by_ws.get(&ws) else { return Vec::new() };
        claims
            .iter()
            .filter(|&c| {
                let flags = *self.claims.flags.get(c as usize);
                if flags & ERASED != 0 {
                    return false;
                }
                self.claims.expires_at(c) <= before || (flags & DELETED != 0 && self.claim_deleted_since(c).is_some_and(|t| t <= before))
            })
            .collect()
    }

    /// From here on, bitmaps skip the rows added after this point (a replay builds them once,
    /// from the columns, instead of growing a dozen sets record by record).
    pub fn defer_bitmaps(&mut self) {
        self.bitmaps_from = Some((self.entities.len() as u32, self.claims.len() as u32));
    }

    /// Defers from the current row counts on, if deferring at all (after a mutation that set its
    /// own rows' bitmaps).
    pub fn restart_bitmap_deferral(&mut self) {
        if self.bitmaps_from.is_some() {
            self.defer_bitmaps();
        }
    }

    /// Whether the bitmaps of entity `e` wait for `catch_up_bitmaps`.
    #[inline]
    pub fn entity_bitmaps_deferred(&self, e: u32) -> bool {
        self.bitmaps_from.is_some_and(|(from, _)| e >= from)
    }

    /// Whether the bitmaps of claim `c` wait for `catch_up_bitmaps`.
    #[inline]
    pub fn claim_bitmaps_deferred(&self, c: u32) -> bool {
        self.bitmaps_from.is_some_and(|(_, from)| c >= from)
    }

    /// The bitmaps of the rows deferred so far, as their columns stand now (`None`: no row is).
    pub fn deferred_bitmaps(&self) -> Option<Bitmaps> {
        let (entities, claims) = self.bitmaps_from?;
        (entities as usize != self.entities.len() || claims as usize != self.claims.len())
            .then(|| rowsets::bitmaps_of_rows_from(self, entities, claims))
    }

    /// Adds `added` (this state's `deferred_bitmaps`) to the bitmaps; deferral restarts here.
    fn absorb_deferred(&mut self, added: Option<Bitmaps>) {
        if let Some(added) = added {
            rowsets::absorb(&mut self.bitmaps, &added);
            self.defer_bitmaps();
        }
    }

    /// Adds the deferred rows to the bitmaps and goes on deferring the rows added after. Called
    /// before anything reads the bitmaps during a replay.
    pub fn catch_up_bitmaps(&mut self) {
        let added = self.deferred_bitmaps();
        self.absorb_deferred(added);
    }

    /// Adds `added` (this state's `deferred_bitmaps`, computed beside other work) and stops
    /// deferring.
    pub fn end_bitmap_deferral(&mut self, added: Option<Bitmaps>) {
        self.absorb_deferred(added);
        self.bitmaps_from = None;
    }

    /// Links into the delta adjacency the claims a replay deferred.
    pub fn link_deferred(&mut self) {
        if let Some(from) = self.unlinked_from.take() {
            for c in from..self.claims.len() as u32 {
                let i = c as usize;
                self.graph.add_claim(c, *self.claims.subject.get(i), *self.claims.pred.get(i), *self.claims.object.get(i));
            }
        }
    }

    /// The claims with `e` at either end (linking deferred claims first).
    pub fn incident_claims(&mut self, e: u32) -> Vec<u32> {
        self.link_deferred();
        let mut incident = Vec::new();
        for dir in [0, 1] {
            self.graph.for_each_edge(e, dir, None, |edge| incident.push(edge.claim));
        }
        incident
    }

    /// The live workspace named `name`.
    pub fn workspace_id(&self, name: &str) -> Option<WorkspaceId> {
        self.catalog.workspace(name)
    }

    /// Rebuilds workspace `ws`'s vocabulary from its rows in id order: for a bulk load (into an
    /// empty workspace, where row order is first use) and for snapshots older than format 3.
    pub fn derive_vocab(&mut self, ws: WorkspaceId) {
        self.catalog.vocab.remove(&ws);
        for e in 0..self.entities.len() as u32 {
            let i = e as usize;
            if *self.entities.ws.get(i) != ws || *self.entities.flags.get(i) & ERASED != 0 {
                continue;
            }
            let bare = *self.entities.flags.get(i) & BARE != 0;
            self.catalog.note_label(ws, *self.entities.ty.get(i));
            let extra: Vec<TypeId> = self.entities.labels.get(&e).map(|l| l.to_vec()).unwrap_or_default();
            for t in extra {
                self.catalog.note_label(ws, t);
            }
            // In the order a write notes them: id and name, the properties, then aliases.
            if !bare {
                self.catalog.note_keys(ws, ["id", "name"], false);
            }
            if let Some(p) = self.entities.props.get(e).cloned() {
                self.catalog.note_keys(ws, p.keys().map(AsRef::as_ref), false);
            }
            if !bare && !self.entities.aliases.get(i).is_empty() {
                self.catalog.note_keys(ws, ["aliases"], false);
            }
        }
        for c in 0..self.claims.len() as u32 {
            let i = c as usize;
            if self.claim_ws(c) != ws || *self.claims.flags.get(i) & ERASED != 0 {
                continue;
            }
            let sensitive = *self.claims.flags.get(i) & SENSITIVE != 0;
            self.catalog.note_type(ws, PredicateId(*self.claims.pred.get(i)), sensitive);
            if *self.claims.flags.get(i) & BARE == 0 {
                let text = !self.claims.text.get(i).is_empty();
                self.catalog.note_keys(ws, ["text"].into_iter().filter(|_| text).chain(["confidence", "state"]), sensitive);
            }
            if let Some(p) = self.claims.props.get(c).cloned() {
                self.catalog.note_keys(ws, p.keys().map(AsRef::as_ref), sensitive);
            }
        }
    }

    /// Whether entity `e` is soft-deleted.
    pub fn entity_is_deleted(&self, e: u32) -> bool {
        *self.entities.flags.get(e as usize) & DELETED != 0
    }

    /// Whether claim `c` is soft-deleted.
    pub fn claim_is_deleted(&self, c: u32) -> bool {
        *self.claims.flags.get(c as usize) & DELETED != 0
    }

    /// Whether entity `e` has a claim neither deleted nor erased (sensitive ones only when
    /// `with_sensitive`).
    pub fn has_standing_claims(&mut self, e: u32, with_sensitive: bool) -> bool {
        self.incident_claims(e).into_iter().any(|c| {
            let flags = *self.claims.flags.get(c as usize);
            flags & (DELETED | ERASED) == 0 && (with_sensitive || flags & SENSITIVE == 0)
        })
    }

    /// When deleted claim `c` was deleted (its latest deletion), from its lifecycle events.
    fn claim_deleted_since(&self, c: u32) -> Option<Timestamp> {
        let mut ev = self.claims.last_event.get(&c).copied().unwrap_or(NONE);
        while ev != NONE {
            let e = self.claims.events.get(ev as usize);
            if !e.deleted_before {
                return Some(e.at);
            }
            ev = e.prev;
        }
        None
    }

    /// Whether entity `e` was deleted as recorded at transaction time `k`.
    pub fn entity_deleted_at(&self, e: u32, k: Timestamp) -> bool {
        let i = e as usize;
        let mut deleted = *self.entities.flags.get(i) & DELETED != 0;
        let mut ev = self.entities.last_event.get(&e).copied().unwrap_or(NONE);
        while ev != NONE {
            let x = self.entities.events.get(ev as usize);
            if x.at <= k {
                break;
            }
            deleted = x.deleted_before;
            ev = x.prev;
        }
        deleted
    }
}

impl State {
    /// The workspace of claim `c` (its subject's).
    #[inline]
    pub fn claim_ws(&self, c: u32) -> WorkspaceId {
        *self.entities.ws.get(*self.claims.subject.get(c as usize) as usize)
    }

    /// Replaces claim `c`'s properties (`None` or empty: none), keeping `claims.by_prop` in step.
    pub fn set_claim_props(&mut self, c: u32, props: Option<Properties>) {
        let ws = self.claim_ws(c);
        let before = self.claims.props.get(c).cloned();
        let after = props.filter(|p| !p.is_empty());
        let rebuild = self.claims.by_prop.note(ws, c, before.as_deref(), after.as_ref());
        match after {
            Some(p) => {
                self.claims.props.insert(c, Arc::new(p));
            }
            None => {
                self.claims.props.remove(c);
            }
        }
        if rebuild {
            self.rebuild_claim_prop_index();
        }
    }

    /// `claims.by_prop` made again from every claim's properties (after a snapshot is read, and
    /// once stale entries outnumber the live ones).
    pub fn rebuild_claim_prop_index(&mut self) {
        let mut index = PropIndex::default();
        index.rebuild(self.claims.props.iter().map(|(c, p)| (c, self.claim_ws(c), &**p)));
        self.claims.by_prop = index;
    }

    /// The claims of `ws` that may hold `value` under `key` (candidates, as
    /// `Entities::with_prop`).
    pub fn claims_with_prop(&self, ws: WorkspaceId, key: &str, value: Scalar<'_>) -> Vec<u32> {
        self.claims.by_prop.find(ws, key, value, |c| {
            (c as usize) < self.claims.len() && self.claim_ws(c) == ws && *self.claims.flags.get(c as usize) & ERASED == 0
        })
    }

    /// The claims of `ws` that may hold a value in a range under `key` (candidates, as
    /// `Entities::in_range`).
    pub fn claims_in_range(&self, ws: WorkspaceId, key: &str, range: (u8, u64, u64)) -> Vec<u32> {
        self.claims.by_prop.range(ws, key, range, |c| {
            (c as usize) < self.claims.len() && self.claim_ws(c) == ws && *self.claims.flags.get(c as usize) & ERASED == 0
        })
    }

    /// How many entries the index holds for `claims_with_prop` (before its checks).
    pub fn count_claims_with_prop(&self, ws: WorkspaceId, key: &str, value: Scalar<'_>) -> usize {
        self.claims.by_prop.count(ws, key, value)
    }

    /// How many entries the index holds for `claims_in_range` (before its checks).
    pub fn count_claims_in_range(&self, ws: WorkspaceId, key: &str, range: (u8, u64, u64)) -> usize {
        self.claims.by_prop.count_range(ws, key, range)
    }

    /// The claim of `ws` with external id `ext`.
    pub fn find_claim_ext(&self, ws: WorkspaceId, ext: &str) -> Option<u32> {
        // A generated `c<id>` names claim `id` and is not in the index (see `apply::add_claim`).
        if let Some(c) = ext.strip_prefix('c').and_then(|d| d.parse::<u32>().ok()) {
            if (c as usize) < self.claims.ext_id.len() && is_positional_claim_id(ext, c) && self.claim_has_ext(c, ws, ext) {
                return Some(c);
            }
        }
        self.find_claim_ext_indexed(ws, ext)
    }

    /// The claim the claim-id index holds for `ext` in `ws`: every claim whose id is not its
    /// position's `c<id>`.
    pub fn find_claim_ext_indexed(&self, ws: WorkspaceId, ext: &str) -> Option<u32> {
        self.claims.by_ext.find(key_hash(ws, ext), |c| self.claim_has_ext(c, ws, ext))
    }

    fn claim_has_ext(&self, c: u32, ws: WorkspaceId, ext: &str) -> bool {
        self.claim_ws(c) == ws && self.claims.ext_id.get(c as usize) == ext && *self.claims.flags.get(c as usize) & ERASED == 0
    }

    /// The evidence row with external id `ext` in workspace `ws`.
    pub fn find_evidence_ext(&self, ws: WorkspaceId, ext: &str) -> Option<u32> {
        self.evidence.by_ext.find(key_hash(ws, ext), |e| {
            let row = self.evidence.rows.get(e as usize);
            row.ext_id.as_deref() == Some(ext) && self.claim_ws(row.claim.0) == ws
        })
    }

    /// Endpoints of the claims among `0..upto` that are live but time-bounded.
    pub fn timed_live_endpoints(&self, upto: usize) -> Vec<(u32, u32)> {
        let words = self.claims.timed_live.flatten();
        let mut out = Vec::new();
        for (w, &bits) in words.iter().enumerate() {
            let mut b = bits;
            while b != 0 {
                let c = w * 64 + b.trailing_zeros() as usize;
                b &= b - 1;
                if c < upto {
                    out.push((*self.claims.subject.get(c), *self.claims.object.get(c)));
                }
            }
        }
        out
    }

    /// A base CSR over every claim of this state, and the `fast` bits it stored.
    pub fn build_base(&self) -> (Base, Vec<u64>) {
        let subjects: Vec<u32> = self.claims.subject.iter().copied().collect();
        let preds: Vec<u16> = self.claims.pred.iter().copied().collect();
        let objects: Vec<u32> = self.claims.object.iter().copied().collect();
        let fast = self.claims.fast.flatten();
        let base = build_base(
            self.entities.len(),
            &subjects,
            &preds,
            &objects,
            &|c| FlatFilter::bit(&fast, c),
            &self.catalog.transitive_predicates(),
        );
        (base, fast)
    }

    /// The next commit's starting point: a copy of this state one version on, at `now`, with no
    /// materialized filter (that belongs to the state it was built from).
    pub fn successor(&self, now: Timestamp) -> State {
        let mut next = self.clone();
        next.version += 1;
        next.committed_at = now;
        next.reset_caches();
        next
    }

    /// Erases claim `c` (of workspace `ws`): content cleared, removed from every bitmap, its
    /// vector and its evidence rows' content erased. Adjacency keeps the bare ids (invisible).
    pub fn erase_claim(&mut self, ws: WorkspaceId, c: u32) {
        let i = c as usize;
        let f = *self.claims.flags.get(i);
        if f & ERASED != 0 {
            return;
        }
        self.claims.flags.set(i, (f | ERASED) & !LIVE);
        self.claims.fast.set(i, false);
        self.claims.timed_live.set(i, false);
        self.claims.ext_id.set(i, "");
        self.claims.text.set(i, "");
        self.claims.props.remove(c);
        self.claims.tags.remove(&c);
        let mut ev = *self.claims.evidence_head.get(i);
        while ev != NONE {
            self.erase_evidence_row(ev);
            ev = self.evidence.rows.get(ev as usize).next;
        }
        self.claims.supersedes.remove(&c);
        self.claims.superseded_by.remove(&c);
        let bm = &mut self.bitmaps;
        for s in &mut bm.claims_by_state {
            s.remove(c);
        }
        bm.claims_deleted.remove(c);
        bm.claims_live.remove(c);
        bm.claims_sensitive.remove(c);
        if let Some(set) = bm.claims_by_ws.get_mut(&ws) {
            set.remove(c);
        }
        let p = PredicateId(*self.claims.pred.get(i));
        if let Some(set) = bm.claims_by_pred.get_mut(&p) {
            set.remove(c);
        }
        self.vectors.claim.erase(c);
        if c < self.graph.watermark {
            self.graph.mark_dirty(*self.claims.subject.get(i));
            self.graph.mark_dirty(*self.claims.object.get(i));
        }
    }

    /// The tags of the message evidence row `row` of workspace `ws` came from: its
    /// conversation's, then its message's (the message's values win, the strictest sensitivity).
    pub fn evidence_tags(&self, ws: WorkspaceId, row: &EvidenceRow) -> Option<Tags> {
        let conv = row.conversation_id.as_deref()?;
        let of_conv = self.evidence.message_tags.get(&message_key(ws, conv, None));
        let of_msg = row.message_id.as_deref().and_then(|m| self.evidence.message_tags.get(&message_key(ws, conv, Some(m))));
        match (of_msg, of_conv) {
            (None, None) => None,
            (Some(m), None) => Some((**m).clone()),
            (None, Some(c)) => Some((**c).clone()),
            (Some(m), Some(c)) => {
                let mut t = (**m).clone();
                crate::tags::inherit(&mut t, c);
                Some(t)
            }
        }
    }

    /// Claim `c`'s tags: its own, then its evidence's messages' (newest evidence first), the
    /// strictest sensitivity of all (see `crate::tags`).
    pub fn claim_tags(&self, c: u32) -> Tags {
        let mut out: Tags = self.claims.tags.get(&c).map(|t| (**t).clone()).unwrap_or_default();
        if self.evidence.message_tags.is_empty() {
            return out;
        }
        let ws = self.claim_ws(c);
        let mut ev = *self.claims.evidence_head.get(c as usize);
        while ev != NONE {
            let row = self.evidence.rows.get(ev as usize);
            if let Some(t) = self.evidence_tags(ws, row) {
                crate::tags::inherit(&mut out, &t);
            }
            ev = row.next;
        }
        out
    }

    /// Keeps claim `c`'s `pii` tag equal to the kinds `crate::pii` finds in its text and its
    /// string property values.
    pub(crate) fn note_pii(&mut self, c: u32) {
        let text = self.claims.text.get(c as usize);
        let props = self.claims.props.get(c);
        let found = crate::pii::tag_value_of(std::iter::once(text).chain(props.map(|p| crate::pii::strings(p)).unwrap_or_default()));
        let Some(t) = crate::pii::retag(self.claims.tags.get(&c).map(AsRef::as_ref), found) else { return };
        if t.is_empty() {
            self.claims.tags.remove(&c);
        } else {
            self.claims.tags.insert(c, Arc::new(t));
        }
    }

    /// Whether claim `c`'s tags make it sensitive (`sensitivity=sensitive`).
    pub fn claim_tagged_sensitive(&self, c: u32) -> bool {
        self.claim_tags(c).get(crate::tags::SENSITIVITY).is_some_and(|v| &**v == crate::tags::SENSITIVE_LEVEL)
    }

    /// Clears one evidence row's content and its external id.
    pub fn erase_evidence_row(&mut self, ev: u32) {
        let row = self.evidence.rows.get_mut(ev as usize);
        // The key index keeps its entry; lookups verify the row's id, which is now gone.
        row.ext_id = None;
        row.conversation_id = None;
        row.message_id = None;
        row.model = None;
        row.model_version = None;
        row.snippet = None;
        row.reasoning = None;
        row.raw_confidence = None;
    }

    /// Erases entity `e`: names, aliases, properties cleared, removed from every bitmap, its
    /// vector erased. (Its claims are erased by the caller.)
    pub fn erase_entity(&mut self, e: u32) {
        let i = e as usize;
        let f = *self.entities.flags.get(i);
        if f & ERASED != 0 {
            return;
        }
        self.entities.flags.set(i, f | ERASED);
        self.entities.name.set(i, "");
        self.entities.ext_id.set(i, "");
        self.entities.aliases.set(i, "");
        self.entities.set_props(e, None);
        self.entities.tags.remove(&e);
        self.entities.labels.remove(&e);
        let ty = *self.entities.ty.get(i);
        if let Some(set) = self.bitmaps.entities_by_type.get_mut(&ty) {
            set.remove(e);
        }
        let ws = *self.entities.ws.get(i);
        if let Some(set) = self.bitmaps.entities_by_ws.get_mut(&ws) {
            set.remove(e);
        }
        self.bitmaps.entities_deleted.remove(e);
        self.vectors.entity.erase(e);
    }

    /// Keyword indexes whose bases are every row as it stands now (built lazily on first query).
    pub fn rebase_text(&mut self) {
        use crate::index::bm25::{TextIndex, TextIndexes};
        let (c, e) = (&self.claims, &self.entities);
        self.text = TextIndexes {
            claims: TextIndex::over_claims(&c.text, &c.subject, &e.ws, c.len()),
            entities: TextIndex::over_entities(&e.name, &e.aliases, &e.ws, e.len()),
            recency: crate::index::recency::RecencyIndex::over(&c.valid_from, c.len()),
        };
    }

    /// The keyword bases of this state, built on rayon, in the form a checkpoint writes.
    /// An index that is exactly its base (as after an open with no WAL tail, or a bulk load) is
    /// written as it is (building it if it was not yet, which then serves this state's queries
    /// too); one with a delta is rebuilt from the columns.
    pub fn persisted_text(&self) -> crate::index::bm25::PersistedText {
        let mut fresh = None;
        let mut get = |which: fn(&crate::index::bm25::TextIndexes) -> &crate::index::bm25::TextIndex| {
            which(&self.text).persist().unwrap_or_else(|| {
                let f = fresh.get_or_insert_with(|| {
                    let mut f = self.clone();
                    f.rebase_text();
                    f
                });
                which(&f.text).persist().unwrap_or_default()
            })
        };
        let claims = get(|t| &t.claims);
        let entities = get(|t| &t.entities);
        crate::index::bm25::PersistedText { claims, entities }
    }

    /// A graph whose base covers every claim (no delta), built on rayon.
    pub fn fresh_graph(&self) -> Graph {
        let (base, _) = self.build_base();
        let dirty = initial_dirty(self.entities.len(), self.timed_live_endpoints(self.claims.len()).into_iter());
        Graph::new(base, self.claims.len() as u32, dirty)
    }

    /// The flat visibility bits of this snapshot, built once.
    pub fn flat_filter(&self) -> &FlatFilter {
        self.fast_flat.get_or_init(|| {
            let timed = self.claims.timed_live.flatten();
            let any_timed = timed.iter().any(|w| *w != 0);
            Arc::new(FlatFilter { fast: self.claims.fast.flatten(), timed: any_timed.then_some(timed), dirty: self.graph.dirty.flatten() })
        })
    }
}

/// The default visibility materialized per snapshot as two flat bitsets over claim ids, so the
/// hot loops test one bit (in an array small enough to stay in cache) per edge.
#[derive(Debug)]
pub struct FlatFilter {
    /// Visible now, no clock check needed.
    pub fast: Vec<u64>,
    /// Lifecycle-visible but time-bounded: visible if the clock check passes (`None` when the
    /// snapshot has no such claim, which saves a second lookup per edge).
    pub timed: Option<Vec<u64>>,
    /// Entities whose base `LIVE_BIT`s cannot be trusted (see `Graph::dirty`).
    pub dirty: Vec<u64>,
}

impl FlatFilter {
    /// Tests bit `c` of `bits`.
    #[inline]
    pub fn bit(bits: &[u64], c: u32) -> bool {
        bits[(c >> 6) as usize] >> (c & 63) & 1 == 1
    }

    /// Whether claim `c` is visible by default at valid time `t`.
    #[inline]
    pub fn visible(&self, st: &State, c: u32, t: Timestamp) -> bool {
        FlatFilter::bit(&self.fast, c) || self.timed.as_ref().is_some_and(|timed| FlatFilter::bit(timed, c) && st.claim_valid_at(c, t))
    }

    /// Whether entity `e`'s base `LIVE_BIT`s can be trusted.
    #[inline]
    pub fn clean(&self, e: u32) -> bool {
        let w = (e >> 6) as usize;
        w >= self.dirty.len() || self.dirty[w] >> (e & 63) & 1 == 0
    }
}

impl State {
    /// The first broken invariant of the recovered state, if any (for `engram check`).
    pub fn check_invariants(&self) -> Option<&'static str> {
        let (e, c) = (&self.entities, &self.claims);
        let n = e.len();
        for col in [e.ty.len(), e.flags.len(), e.ext_id.len(), e.name.len(), e.aliases.len()] {
            if col != n {
                return Some("entity columns differ in length");
            }
        }
        let m = c.len();
        for col in [
            c.object.len(),
            c.pred.len(),
            c.confidence.len(),
            c.state.len(),
            c.flags.len(),
            c.valid_from.len(),
            c.valid_until.len(),
            c.ext_id.len(),
            c.text.len(),
            c.evidence_head.len(),
        ] {
            if col != m {
                return Some("claim columns differ in length");
            }
        }
        for i in 0..m {
            let (s, o) = (*c.subject.get(i) as usize, *c.object.get(i) as usize);
            if s >= n || o >= n {
                return Some("a claim names a missing entity");
            }
            if e.ws.get(s) != e.ws.get(o) {
                return Some("a claim connects two workspaces");
            }
            let conf = *c.confidence.get(i);
            if !(0.0..=1.0).contains(&conf) {
                return Some("a confidence is outside 0..=1");
            }
            if c.valid_until.get(i) <= c.valid_from.get(i) {
                return Some("a validity interval is empty");
            }
            let f = *c.flags.get(i);
            let live = f & (DELETED | ERASED) == 0
                && *c.state.get(i) != ClaimState::Deprecated
                && (*e.flags.get(s) | *e.flags.get(o)) & (DELETED | ERASED) == 0;
            if live != (f & LIVE != 0) {
                return Some("a claim's LIVE flag disagrees with its state");
            }
        }
        if self.graph.watermark as usize > m {
            return Some("the CSR covers claims that do not exist");
        }
        for (&from, &idx) in &e.merged {
            let standing = e.merges.try_get(idx as usize).is_some_and(|r| r.from == from && r.undone_at == Timestamp::MAX);
            if !standing || (from as usize) >= n || *e.flags.get(from as usize) & DELETED == 0 {
                return Some("a merged-away entity is not retired by a standing merge");
            }
        }
        None
    }
}
