//! Bulk load: build a workspace from columnar input in one atomic commit, on all cores.
//!
//! A `WriteBatch` validates and applies one operation at a time, which is right for an agent's
//! writes and far too slow for importing millions of rows. `Database::bulk_load` takes columns
//! (strings packed in `TextColumn`s, ids as row indexes), validates every row in parallel, builds
//! the columns, bitmaps, key indexes and the CSR in parallel, and publishes them as one commit.
//! The same rules as a batch apply; the first invalid row (in row order) is reported by section,
//! row and field, and nothing is written.

use crate::error::WriteErrorKind;
use crate::ids::{PredicateId, TypeId, NONE};
use crate::index::bitcol::BitCol;
use crate::index::bitmap::IdSet;
use crate::index::cow::CowVec;
use crate::index::graph::{build_base, initial_dirty, Graph};
use crate::index::keyindex::{key_hash, key_hash_bytes, sort_hashed_keys, KeyIndex};
use crate::index::strvec::{Leaf, StrVec, STRVEC_LEAF_LEN};
use crate::limits::Limits;
use crate::model::{ClaimState, PredicateDef};
use crate::normalize::{name_key_into, vocabulary_key};
use crate::state::{State, ALIAS_SEP, LIVE, TIMED};
use crate::time::Timestamp;
use crate::write::batch::DeclarePredicate;
use rayon::prelude::*;
use std::borrow::Cow;
use std::sync::Arc;

/// A column of strings for a bulk load, packed like the database's own string columns: leaves
/// of 1,024 rows, each one buffer plus 32-bit row ends. A load shares these leaves with the
/// database instead of copying the text again.
#[derive(Clone, Debug, Default)]
pub struct TextColumn {
    /// Full leaves.
    leaves: Vec<Arc<Leaf>>,
    /// The rows after them (fewer than a leaf), in a buffer reused from leaf to leaf.
    open: Leaf,
    /// Bytes of text in all rows.
    bytes: usize,
}

impl PartialEq for TextColumn {
    fn eq(&self, other: &TextColumn) -> bool {
        self.len() == other.len() && (0..self.len()).all(|i| self.get(i) == other.get(i))
    }
}

impl Eq for TextColumn {}

impl TextColumn {
    /// An empty column.
    pub fn new() -> TextColumn {
        TextColumn::default()
    }

    /// An empty column with room for `rows` rows of `bytes` bytes in all.
    pub fn with_capacity(rows: usize, bytes: usize) -> TextColumn {
        let per_leaf = bytes.div_ceil(rows.max(1)).saturating_mul(STRVEC_LEAF_LEN.min(rows.max(1)));
        let mut open = Leaf::default();
        open.reserve(per_leaf, STRVEC_LEAF_LEN.min(rows));
        TextColumn { leaves: Vec::with_capacity(rows / STRVEC_LEAF_LEN), open, bytes: 0 }
    }

    /// Appends a row.
    ///
    /// # Panics
    /// When the 1,024 rows of one leaf would hold more than 4 GiB of text (the CSV parser refuses
    /// lines over 4 MiB, so its columns never do).
    pub fn push(&mut self, s: &str) {
        self.open.push(s);
        self.bytes += s.len();
        if self.open.len() == STRVEC_LEAF_LEN {
            self.leaves.push(Arc::new(self.open.seal()));
        }
    }

    /// Appends all rows of `other`; when this column ends on a leaf boundary, `other`'s full
    /// leaves are shared rather than copied.
    pub fn append(&mut self, other: &TextColumn) {
        if self.open.len() == 0 {
            self.leaves.extend(other.leaves.iter().cloned());
            self.bytes += other.leaves.iter().map(|l| l.byte_len()).sum::<usize>();
        } else {
            for leaf in &other.leaves {
                (0..leaf.len()).for_each(|i| self.push(leaf.get(i)));
            }
        }
        (0..other.open.len()).for_each(|i| self.push(other.open.get(i)));
    }

    /// Row `i`.
    ///
    /// # Panics
    /// When `i` is not below `len()`.
    pub fn get(&self, i: usize) -> &str {
        let sealed = self.leaves.len() * STRVEC_LEAF_LEN;
        if i < sealed {
            self.leaves[i / STRVEC_LEAF_LEN].get(i % STRVEC_LEAF_LEN)
        } else {
            self.open.get(i - sealed)
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.leaves.len() * STRVEC_LEAF_LEN + self.open.len()
    }

    /// Total bytes of text.
    pub fn byte_len(&self) -> usize {
        self.bytes
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows as the database's string column, sharing the full leaves.
    pub(crate) fn to_strvec(&self) -> StrVec {
        let mut leaves = self.leaves.clone();
        // A clone is sized to its rows, not to the reused buffer's capacity.
        leaves.push(Arc::new(self.open.clone()));
        StrVec::from_leaves(leaves)
    }
}

/// The serialized shape (in bulk-load WAL records and JSON): all text in one string plus each
/// row's end offset, unchanged from when the column was stored that way.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename = "TextColumn")]
struct PackedText {
    bytes: String,
    ends: Vec<usize>,
}

impl serde::Serialize for TextColumn {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut packed = PackedText { bytes: String::with_capacity(self.bytes), ends: Vec::with_capacity(self.len()) };
        for i in 0..self.len() {
            packed.bytes.push_str(self.get(i));
            packed.ends.push(packed.bytes.len());
        }
        packed.serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for TextColumn {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<TextColumn, D::Error> {
        let packed = PackedText::deserialize(deserializer)?;
        let mut column = TextColumn::with_capacity(packed.ends.len(), packed.bytes.len());
        let mut start = 0;
        for (row, &end) in packed.ends.iter().enumerate() {
            let text = packed.bytes.get(start..end).ok_or_else(|| {
                serde::de::Error::custom(format!("text column row {row}: end {end} is not a character boundary after {start}"))
            })?;
            column.push(text);
            start = end;
        }
        if start != packed.bytes.len() {
            return Err(serde::de::Error::custom("text column: text after the last row"));
        }
        Ok(column)
    }
}

/// Entities to load. Row `i` of every column is entity `i` of this load.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct BulkEntities {
    /// External ids (unique within the workspace).
    pub ext_id: TextColumn,
    /// Type of each entity, as an index into `type_names`.
    pub entity_type: Vec<u16>,
    /// Type names (case-insensitive).
    pub type_names: Vec<String>,
    /// Canonical names.
    pub name: TextColumn,
    /// Aliases of each entity joined by `alias_separator` (empty rows allowed; the column may be
    /// empty altogether).
    pub aliases: TextColumn,
    /// What separates aliases inside a row of `aliases` (`|` by default).
    pub alias_separator: char,
}

/// Claims to load. Row `i` of every column is claim `i` of this load.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct BulkClaims {
    /// External ids; empty column = engram names them `c<dense id>`.
    pub ext_id: TextColumn,
    /// Subject, as a row index into this load's entities.
    pub subject: Vec<u32>,
    /// Predicate, as an index into `predicate_names`.
    pub predicate: Vec<u16>,
    /// Predicate names (case-insensitive).
    pub predicate_names: Vec<String>,
    /// Object, as a row index into this load's entities.
    pub object: Vec<u32>,
    /// Confidence in `[0, 1]`.
    pub confidence: Vec<f32>,
    /// Lifecycle state.
    pub state: Vec<ClaimState>,
    /// Valid from; empty column = the commit time.
    pub valid_from: Vec<Timestamp>,
    /// Claim text; empty column = none.
    pub text: TextColumn,
}

/// A bulk load into one (empty) workspace.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct BulkLoad {
    /// Target workspace; it must exist and hold no entities.
    pub workspace: String,
    /// Predicate declarations applied first.
    pub predicates: Vec<DeclarePredicate>,
    /// The entities.
    pub entities: BulkEntities,
    /// The claims.
    pub claims: BulkClaims,
}

impl BulkLoad {
    /// Runs the load's value checks without a database (what `bulk_load` would refuse besides a
    /// non-empty workspace or a full vocabulary), so a caller can refuse bad input before it
    /// touches anything.
    pub fn check(&self, limits: &Limits) -> Result<(), BulkError> {
        check_rows(self, limits)
    }
}

pub use crate::error::BulkError;

fn err(section: &'static str, row: usize, field: &'static str, kind: WriteErrorKind) -> BulkError {
    BulkError { section, row, field, kind }
}

fn check_name(s: &str, limits: &Limits) -> Option<WriteErrorKind> {
    if s.trim().is_empty() {
        Some(WriteErrorKind::Empty)
    } else if s.len() > limits.name_bytes_max {
        Some(WriteErrorKind::TooLong { len: s.len(), limit: limits.name_bytes_max, limit_name: "name_bytes_max" })
    } else if crate::normalize::has_control_chars(s) {
        Some(WriteErrorKind::Invalid("control characters are not allowed in names"))
    } else {
        None
    }
}

fn check_ext(s: &str, limits: &Limits) -> Option<WriteErrorKind> {
    if s.trim().is_empty() {
        Some(WriteErrorKind::Empty)
    } else if s.len() > limits.ext_id_bytes_max {
        Some(WriteErrorKind::TooLong { len: s.len(), limit: limits.ext_id_bytes_max, limit_name: "ext_id_bytes_max" })
    } else {
        None
    }
}

/// The distinct aliases of a row: one per normalised key, none with the canonical name's key
/// (what a batch's upsert keeps, too).
fn distinct_aliases<'a>(name: &str, row: &'a str, sep: char) -> Vec<&'a str> {
    thread_local! {
        /// Key buffers reused across rows (a bulk load normalises millions of names).
        static KEYS: std::cell::RefCell<Vec<Vec<u8>>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    /// Writes `s`'s key into buffer `at`, adding a buffer if needed.
    fn key_at(keys: &mut Vec<Vec<u8>>, at: usize, s: &str) {
        if keys.len() == at {
            keys.push(Vec::new());
        }
        name_key_into(s, &mut keys[at]);
    }
    KEYS.with_borrow_mut(|keys| {
        key_at(keys, 0, name);
        let mut used = 1;
        let mut out = Vec::new();
        for a in row.split(sep).filter(|a| !a.is_empty()) {
            key_at(keys, used, a);
            if !keys[..used].contains(&keys[used]) {
                used += 1;
                out.push(a);
            }
        }
        out
    })
}

/// Writes entity `i`'s distinct aliases joined by `ALIAS_SEP`, skipping the ones `mask` (from
/// `name_keys`) marks as repeats.
fn push_distinct_aliases(ents: &BulkEntities, i: usize, mask: u32, sep: char, b: &mut String) {
    let row = if ents.aliases.is_empty() { "" } else { ents.aliases.get(i) };
    let kept: Vec<&str>;
    let aliases: &mut dyn Iterator<Item = &str> = if mask & ALIASES_UNMASKED != 0 {
        kept = distinct_aliases(ents.name.get(i), row, sep);
        &mut kept.iter().copied()
    } else {
        &mut row.split(sep).filter(|a| !a.is_empty()).enumerate().filter(|(k, _)| mask & 1 << k == 0).map(|(_, a)| a)
    };
    for (k, a) in aliases.enumerate() {
        if k > 0 {
            b.push(ALIAS_SEP);
        }
        b.push_str(a);
    }
}

/// The first row (in row order) for which `check` reports a problem.
fn first_bad<T: Send>(n: usize, check: impl Fn(usize) -> Option<T> + Sync) -> Option<(usize, T)> {
    (0..n).into_par_iter().find_map_first(|i| check(i).map(|e| (i, e)))
}

/// Builds a key index from `hash << 32 | id` keys, reporting the first pair of equal keys (by
/// the larger id) as a duplicate.
fn unique_index<'k>(
    existing: &KeyIndex,
    keys: Vec<u64>,
    key_of: impl Fn(u32) -> Cow<'k, str> + Sync,
    section: &'static str,
    first_id: u32,
) -> Result<KeyIndex, BulkError> {
    let keys = sort_hashed_keys(keys);
    let dup = keys
        .par_windows(2)
        .filter(|w| w[0] >> 32 == w[1] >> 32 && key_of(w[0] as u32) == key_of(w[1] as u32))
        .map(|w| (w[0] as u32).max(w[1] as u32))
        .min();
    if let Some(id) = dup {
        return Err(err(section, (id - first_id) as usize, "ext_id", WriteErrorKind::DuplicateId(key_of(id).into_owned())));
    }
    Ok(existing.with_sorted_keys(keys))
}

/// Bit of a `name_keys` alias mask that says the row has too many aliases for the mask, so
/// `distinct_aliases` decides.
const ALIASES_UNMASKED: u32 = 1 << 31;

/// The name keys of a load (`hash << 32 | id`: each entity's name, then each non-empty alias),
/// and per entity a mask of the aliases that repeat an earlier key of their row (bit k for the
/// k-th non-empty alias): the ones `distinct_aliases` drops, found without normalising twice.
fn name_keys(ents: &BulkEntities, ws: crate::ids::WorkspaceId, sep: char, e0: u32) -> (Vec<u64>, Vec<u32>) {
    const BLOCK: usize = 4096;
    let n = ents.ext_id.len();
    let names_of = |i: usize| {
        let aliases = if ents.aliases.is_empty() { "" } else { ents.aliases.get(i) };
        std::iter::once(ents.name.get(i)).chain(aliases.split(sep).filter(|a| !a.is_empty()))
    };
    // Counted first, so the keys are written once into a vector of their final size.
    let counts: Vec<usize> =
        (0..n.div_ceil(BLOCK)).into_par_iter().map(|b| (b * BLOCK..n.min((b + 1) * BLOCK)).map(|i| names_of(i).count()).sum()).collect();
    let mut keys = vec![0u64; counts.iter().sum()];
    let mut masks = vec![0u32; n];
    let mut slices = Vec::with_capacity(counts.len());
    let mut rest = &mut keys[..];
    for c in &counts {
        let (head, tail) = rest.split_at_mut(*c);
        slices.push(head);
        rest = tail;
    }
    // Per task: the current row's key bytes and hashes, reused.
    let scratch = || (Vec::<Vec<u8>>::new(), Vec::<u32>::new());
    slices.into_par_iter().zip(masks.par_chunks_mut(BLOCK)).enumerate().for_each_init(scratch, |(bufs, hashes), (b, (out, mask))| {
        let mut k = 0;
        for (r, i) in (b * BLOCK..n.min((b + 1) * BLOCK)).enumerate() {
            let id = u64::from(e0 + i as u32);
            hashes.clear();
            for (j, s) in names_of(i).enumerate() {
                if bufs.len() == j {
                    bufs.push(Vec::new());
                }
                name_key_into(s, &mut bufs[j]);
                let hash = key_hash_bytes(ws, &bufs[j]);
                out[k] = u64::from(hash) << 32 | id;
                k += 1;
                if j > 31 {
                    mask[r] |= ALIASES_UNMASKED;
                } else if j > 0 && hashes.iter().zip(&bufs[..j]).any(|(h, key)| *h == hash && *key == bufs[j]) {
                    mask[r] |= 1 << (j - 1);
                }
                hashes.push(hash);
            }
        }
    });
    (keys, masks)
}

fn flags_live_timed(st: &State, c: u32) -> bool {
    let f = *st.claims.flags.get(c as usize);
    f & LIVE != 0 && f & TIMED != 0
}

/// What the parallel builders share.
struct Input<'a> {
    ws: crate::ids::WorkspaceId,
    e0: u32,
    c0: u32,
    n: usize,
    m: usize,
    now: Timestamp,
    sep: char,
    type_map: &'a [u16],
    pred_map: &'a [u16],
    load: &'a BulkLoad,
    transitive: Vec<u16>,
}

/// Everything built for the loaded entities.
struct EntityPart {
    ext_id: StrVec,
    name: StrVec,
    aliases: StrVec,
    by_ext: KeyIndex,
    by_name: KeyIndex,
    type_sets: Vec<IdSet>,
}

fn build_entities(inp: &Input<'_>, existing: &crate::state::Entities) -> Result<EntityPart, BulkError> {
    let (ents, n, e0, ws, sep) = (&inp.load.entities, inp.n, inp.e0, inp.ws, inp.sep);
    let (by_ext, (ext_id, ((by_name, aliases), name))) = rayon::join(
        || {
            let keys: Vec<u64> =
                (0..n).into_par_iter().map(|i| u64::from(key_hash(ws, ents.ext_id.get(i))) << 32 | u64::from(e0 + i as u32)).collect();
            unique_index(&existing.by_ext, keys, |id| Cow::Borrowed(ents.ext_id.get((id - e0) as usize)), "entities", e0)
        },
        || {
            rayon::join(
                || ents.ext_id.to_strvec(),
                || {
                    rayon::join(
                        || {
                            let (keys, masks) = name_keys(ents, ws, sep, e0);
                            rayon::join(
                                || existing.by_name.with_sorted_keys(sort_hashed_keys(keys)),
                                || StrVec::build_par(n, |i, b| push_distinct_aliases(ents, i, masks[i], sep, b)),
                            )
                        },
                        || ents.name.to_strvec(),
                    )
                },
            )
        },
    );
    let type_sets = IdSet::partition(n, inp.type_map.len(), e0, |i| Some(ents.entity_type[i] as usize));
    Ok(EntityPart { ext_id, name, aliases, by_ext: by_ext?, by_name, type_sets })
}

/// Claim columns computed for the load: global predicate ids and flags.
type ClaimColumns = (Vec<u16>, Vec<u8>);

/// Everything built for the loaded claims.
struct ClaimPart {
    columns: ClaimColumns,
    base: Option<crate::index::graph::Base>,
    fast: (BitCol, BitCol),
    state_sets: Vec<IdSet>,
    live: IdSet,
    pred_sets: Vec<IdSet>,
    ext_id: StrVec,
    text: StrVec,
}

fn build_claims<'k>(inp: &Input<'_>, claim_ext_of: &(impl Fn(usize) -> Cow<'k, str> + Sync), st: &State) -> ClaimPart {
    let (claims, m, e0, c0, now) = (&inp.load.claims, inp.m, inp.e0, inp.c0, inp.now);
    let pred: Vec<u16> = claims.predicate.par_iter().map(|p| inp.pred_map[*p as usize]).collect();
    let entity_count = st.entities.len() + inp.n;
    let flags: Vec<u8> = (0..m)
        .into_par_iter()
        .map(|i| {
            let timed = claims.valid_from.get(i).is_some_and(|t| *t > now);
            let live = claims.state[i] != ClaimState::Deprecated;
            (u8::from(timed) * TIMED) | (u8::from(live) * LIVE)
        })
        .collect();
    let is_fast = |f: u8| f & LIVE != 0 && f & TIMED == 0;
    let (base, (rest, (ext_id, text))) = rayon::join(
        // A load into an empty database builds the CSR straight from the load's vectors.
        || {
            (c0 == 0).then(|| {
                let fast = |c: u32| is_fast(flags[c as usize]);
                if e0 == 0 {
                    build_base(entity_count, &claims.subject, &pred, &claims.object, &fast, &inp.transitive)
                } else {
                    let subject: Vec<u32> = claims.subject.par_iter().map(|s| e0 + s).collect();
                    let object: Vec<u32> = claims.object.par_iter().map(|o| e0 + o).collect();
                    build_base(entity_count, &subject, &pred, &object, &fast, &inp.transitive)
                }
            })
        },
        || {
            rayon::join(
                || {
                    let fast = BitCol::from_bits(flags.iter().map(|f| is_fast(*f)));
                    let timed = BitCol::from_bits(flags.iter().map(|f| f & LIVE != 0 && f & TIMED != 0));
                    let pred_sets = IdSet::partition(m, claims.predicate_names.len(), c0, |i| Some(claims.predicate[i] as usize));
                    let state_sets = IdSet::partition(m, 3, c0, |i| Some(claims.state[i] as usize));
                    let live = IdSet::partition(m, 1, c0, |i| (flags[i] & LIVE != 0).then_some(0)).pop().unwrap_or_default();
                    ((fast, timed), state_sets, live, pred_sets)
                },
                || {
                    rayon::join(
                        || {
                            if claims.ext_id.is_empty() {
                                StrVec::build_par(m, |i, b| b.push_str(&claim_ext_of(i)))
                            } else {
                                claims.ext_id.to_strvec()
                            }
                        },
                        || {
                            if claims.text.is_empty() {
                                StrVec::empty_rows(m)
                            } else {
                                claims.text.to_strvec()
                            }
                        },
                    )
                },
            )
        },
    );
    let (fast, state_sets, live, pred_sets) = rest;
    ClaimPart { columns: (pred, flags), base, fast, state_sets, live, pred_sets, ext_id, text }
}

/// The checks of a load's rows that need no database: column lengths, names, ids, confidences,
/// texts against `limits`. The first bad row in row order wins.
fn check_rows(load: &BulkLoad, limits: &Limits) -> Result<(), BulkError> {
    let (ents, claims) = (&load.entities, &load.claims);
    let n = ents.ext_id.len();
    let m = claims.subject.len();
    for (field, len) in [("entity_type", ents.entity_type.len()), ("name", ents.name.len())] {
        if len != n {
            return Err(err("entities", 0, field, WriteErrorKind::Invalid("column length differs from ext_id")));
        }
    }
    if !ents.aliases.is_empty() && ents.aliases.len() != n {
        return Err(err("entities", 0, "aliases", WriteErrorKind::Invalid("column length differs from ext_id")));
    }
    for (field, len, optional) in [
        ("ext_id", claims.ext_id.len(), true),
        ("predicate", claims.predicate.len(), false),
        ("object", claims.object.len(), false),
        ("confidence", claims.confidence.len(), false),
        ("state", claims.state.len(), false),
        ("valid_from", claims.valid_from.len(), true),
        ("text", claims.text.len(), true),
    ] {
        if len != m && !(optional && len == 0) {
            return Err(err("claims", 0, field, WriteErrorKind::Invalid("column length differs from subject")));
        }
    }
    // Row checks, in parallel; the first bad row in row order wins.
    let sep = if ents.alias_separator == '\0' { '|' } else { ents.alias_separator };
    let bad = first_bad(n, |i| {
        if let Some(k) = check_ext(ents.ext_id.get(i), limits) {
            return Some(("ext_id", k));
        }
        if let Some(k) = check_name(ents.name.get(i), limits) {
            return Some(("name", k));
        }
        if ents.entity_type[i] as usize >= ents.type_names.len() {
            return Some(("entity_type", WriteErrorKind::Invalid("type index out of range")));
        }
        if !ents.aliases.is_empty() {
            let row = ents.aliases.get(i);
            let mut raw = 0;
            for a in row.split(sep).filter(|a| !a.is_empty()) {
                if let Some(k) = check_name(a, limits) {
                    return Some(("aliases", k));
                }
                raw += 1;
            }
            let count = if raw > limits.aliases_max { distinct_aliases(ents.name.get(i), row, sep).len() } else { raw };
            if count > limits.aliases_max {
                return Some(("aliases", WriteErrorKind::TooMany { count, limit: limits.aliases_max, limit_name: "aliases_max" }));
            }
        }
        None
    });
    if let Some((row, (field, kind))) = bad {
        return Err(err("entities", row, field, kind));
    }
    let bad = first_bad(m, |i| {
        if !claims.ext_id.is_empty() {
            if let Some(k) = check_ext(claims.ext_id.get(i), limits) {
                return Some(("ext_id", k));
            }
        }
        if claims.subject[i] as usize >= n {
            return Some(("subject", WriteErrorKind::UnknownEntity(format!("row {}", claims.subject[i]))));
        }
        if claims.object[i] as usize >= n {
            return Some(("object", WriteErrorKind::UnknownEntity(format!("row {}", claims.object[i]))));
        }
        if claims.predicate[i] as usize >= claims.predicate_names.len() {
            return Some(("predicate", WriteErrorKind::Invalid("predicate index out of range")));
        }
        let c = claims.confidence[i];
        if !c.is_finite() {
            return Some(("confidence", WriteErrorKind::NotFinite));
        }
        if !(0.0..=1.0).contains(&c) {
            return Some(("confidence", WriteErrorKind::ConfidenceOutOfRange(c)));
        }
        if !claims.text.is_empty() && claims.text.get(i).len() > limits.text_bytes_max {
            let len = claims.text.get(i).len();
            return Some(("text", WriteErrorKind::TooLong { len, limit: limits.text_bytes_max, limit_name: "text_bytes_max" }));
        }
        if claims.valid_from.get(i).is_some_and(|t| *t == Timestamp::MAX) {
            return Some(("valid_from", WriteErrorKind::InvalidInterval));
        }
        None
    });
    if let Some((row, (field, kind))) = bad {
        return Err(err("claims", row, field, kind));
    }

    Ok(())
}

/// Applies `load` to `st` (a private copy) at transaction time `now`.
#[allow(clippy::too_many_lines)] // Reason: one linear pipeline; splitting it would scatter the row-index bookkeeping.
pub fn apply_bulk(st: &mut State, mut load: Cow<'_, BulkLoad>, now: Timestamp, limits: &Limits) -> Result<(usize, usize), BulkError> {
    let ws = st
        .catalog
        .workspace(&load.workspace)
        .ok_or_else(|| err("workspace", 0, "workspace", WriteErrorKind::UnknownWorkspace(load.workspace.clone())))?;
    if st.bitmaps.entities_by_ws.get(&ws).is_some_and(|s| !s.is_empty()) {
        return Err(err(
            "workspace",
            0,
            "workspace",
            WriteErrorKind::Invalid("bulk load needs an empty workspace; use write batches to add to one"),
        ));
    }
    if !super::constraints::declared_in(st, &load.workspace).is_empty() {
        return Err(err(
            "workspace",
            0,
            "workspace",
            WriteErrorKind::Invalid(
                "a bulk load does not check constraints: load into a workspace without any, then declare them (the declaration checks the data)",
            ),
        ));
    }
    let (ents, claims) = (&load.entities, &load.claims);
    let (n, m) = (ents.ext_id.len(), claims.subject.len());
    let e0 = st.entities.len();
    let c0 = st.claims.len();
    if e0 + n >= crate::index::graph::csr::LIVE_BIT as usize || c0 + m >= NONE as usize {
        return Err(err("entities", 0, "ext_id", WriteErrorKind::Invalid("the load would exceed 2^31 entities or 2^32 - 1 claims")));
    }
    let (e0, c0) = (e0 as u32, c0 as u32);

    // Vocabulary.
    for (i, d) in load.predicates.iter().enumerate() {
        if let Some(k) = check_name(&d.name, limits) {
            return Err(err("predicates", i, "name", k));
        }
        if d.half_life_days.is_some_and(|h| !h.is_finite() || h <= 0.0) {
            return Err(err("predicates", i, "half_life_days", WriteErrorKind::Invalid("half_life_days must be positive and finite")));
        }
        let p = st
            .catalog
            .predicates
            .intern(&vocabulary_key(&d.name))
            .ok_or_else(|| err("predicates", i, "name", WriteErrorKind::Invalid("the predicate vocabulary is full")))?;
        let def = PredicateDef {
            name: st.catalog.predicates.name(p).clone(),
            cardinality: d.cardinality,
            inverse: d.inverse.as_deref().map(|s| Arc::from(vocabulary_key(s))),
            transitive: d.transitive,
            half_life_days: d.half_life_days,
        };
        st.catalog.predicate_defs.insert((ws, PredicateId(p)), def);
    }
    let mut type_map = Vec::with_capacity(ents.type_names.len());
    for (i, t) in ents.type_names.iter().enumerate() {
        if let Some(k) = check_name(t, limits) {
            return Err(err("entities", i, "entity_type", k));
        }
        let id = st
            .catalog
            .types
            .intern(&vocabulary_key(t))
            .ok_or_else(|| err("entities", i, "entity_type", WriteErrorKind::Invalid("the type vocabulary is full")))?;
        type_map.push(id);
    }
    let mut pred_map = Vec::with_capacity(claims.predicate_names.len());
    for (i, p) in claims.predicate_names.iter().enumerate() {
        if let Some(k) = check_name(p, limits) {
            return Err(err("claims", i, "predicate", k));
        }
        let id = st
            .catalog
            .predicates
            .intern(&vocabulary_key(p))
            .ok_or_else(|| err("claims", i, "predicate", WriteErrorKind::Invalid("the predicate vocabulary is full")))?;
        pred_map.push(id);
    }

    check_rows(&load, limits)?;
    let sep = if ents.alias_separator == '\0' { '|' } else { ents.alias_separator };

    // Three independent builds run side by side: the claim id index, everything about entities,
    // and the claim columns with the CSR and bitmaps. Each is parallel inside as well.
    let claim_ext_of = |i: usize| -> Cow<'_, str> {
        if claims.ext_id.is_empty() {
            Cow::Owned(crate::write::apply::positional_claim_id(u64::from(c0) + i as u64))
        } else {
            Cow::Borrowed(claims.ext_id.get(i))
        }
    };
    let input = Input {
        ws,
        e0,
        c0,
        n,
        m,
        now,
        sep,
        type_map: &type_map,
        pred_map: &pred_map,
        load: &load,
        transitive: st.catalog.transitive_predicates(),
    };
    let (claim_ext, (entity_part, claim_part)) = rayon::join(
        || {
            let keys: Vec<u64> =
                (0..m).into_par_iter().map(|i| u64::from(key_hash(ws, &claim_ext_of(i))) << 32 | u64::from(c0 + i as u32)).collect();
            unique_index(&st.claims.by_ext, keys, |id| claim_ext_of((id - c0) as usize), "claims", c0)
        },
        || rayon::join(|| build_entities(&input, &st.entities), || build_claims(&input, &claim_ext_of, st)),
    );
    let claim_ext = claim_ext?;
    let entity_part = entity_part?;

    // From here on, an owned load's columns are freed as soon as they are copied, so the peak
    // holds the new state plus one column rather than the whole load.
    release(&mut load, |l| &mut l.entities.aliases);
    release(&mut load, |l| &mut l.claims.ext_id);
    release(&mut load, |l| &mut l.claims.text);
    let e = &mut st.entities;
    e.ws.extend_repeat(n, ws);
    e.ty.extend_par(n, |i| TypeId(type_map[load.entities.entity_type[i] as usize]));
    e.flags.extend_repeat(n, 0);
    e.ext_id.extend_from(&entity_part.ext_id);
    e.name.extend_from(&entity_part.name);
    e.aliases.extend_from(&entity_part.aliases);
    drop(entity_part.ext_id);
    drop(entity_part.name);
    drop(entity_part.aliases);
    release(&mut load, |l| &mut l.entities.ext_id);
    release(&mut load, |l| &mut l.entities.name);
    release(&mut load, |l| &mut l.entities.entity_type);
    if n > 0 {
        e.created.note(e0, now);
    }
    e.by_ext = entity_part.by_ext;
    e.by_name = entity_part.by_name;

    let ClaimPart { columns, base, fast, state_sets, live, pred_sets, ext_id, text } = claim_part;
    let c = &mut st.claims;
    let (fast, timed) = fast;
    if c.fast.is_empty() {
        c.fast = fast;
        c.timed_live = timed;
    } else {
        c.fast.extend_bits((0..m).map(|i| fast.get(i)));
        c.timed_live.extend_bits((0..m).map(|i| timed.get(i)));
    }
    let (pred, flags) = columns;
    release(&mut load, |l| &mut l.claims.predicate);
    c.pred.extend_from_vec(pred);
    c.flags.extend_par(m, |i| flags[i]);
    drop(flags);
    c.subject.extend_par(m, |i| e0 + load.claims.subject[i]);
    c.object.extend_par(m, |i| e0 + load.claims.object[i]);
    c.confidence.extend_par(m, |i| load.claims.confidence[i]);
    release(&mut load, |l| &mut l.claims.confidence);
    c.state.extend_par(m, |i| load.claims.state[i]);
    release(&mut load, |l| &mut l.claims.state);
    c.valid_from.extend_par(m, |i| load.claims.valid_from.get(i).copied().unwrap_or(now));
    release(&mut load, |l| &mut l.claims.valid_from);
    c.valid_until.extend_repeat(m, Timestamp::MAX);
    c.ext_id.extend_from(&ext_id);
    c.text.extend_from(&text);
    drop((ext_id, text));
    c.evidence_head.extend_repeat(m, NONE);
    if m > 0 {
        c.recorded.note(c0, now);
    }
    c.by_ext = claim_ext;

    // The PII detector tags the loaded texts (`crate::pii`; the new claims have no tags yet).
    let texts = &st.claims.text;
    let found: Vec<(u32, String)> =
        (c0..c0 + m as u32).into_par_iter().filter_map(|id| crate::pii::tag_value(texts.get(id as usize)).map(|v| (id, v))).collect();
    for (id, v) in found {
        st.claims.tags.insert(id, Arc::new(crate::tags::Tags::from([(Arc::from(crate::pii::TAG), Arc::from(v))])));
    }

    let bm = &mut st.bitmaps;
    bm.entities_by_ws.insert(ws, IdSet::from_range(e0, e0 + n as u32));
    for (global, ids) in type_map.iter().zip(entity_part.type_sets) {
        let entry = bm.entities_by_type.entry(TypeId(*global)).or_default();
        *entry = entry.or(&ids);
    }
    let existing = bm.claims_by_ws.get(&ws).cloned().unwrap_or_default();
    bm.claims_by_ws.insert(ws, existing.or(&IdSet::from_range(c0, c0 + m as u32)));
    for (s, ids) in state_sets.into_iter().enumerate() {
        bm.claims_by_state[s] = bm.claims_by_state[s].or(&ids);
    }
    bm.claims_live = bm.claims_live.or(&live);
    for (global, ids) in pred_map.iter().zip(pred_sets) {
        let entry = bm.claims_by_pred.entry(PredicateId(*global)).or_default();
        *entry = entry.or(&ids);
    }

    // Adjacency: a fresh base over every claim, so the load leaves no delta behind.
    st.graph = match base {
        Some(base) => {
            let claims = &load.claims;
            let timed = (0..m).filter(|i| flags_live_timed(st, c0 + *i as u32)).map(|i| (e0 + claims.subject[i], e0 + claims.object[i]));
            let dirty = initial_dirty(st.entities.len(), timed);
            Graph::new(base, st.claims.len() as u32, dirty)
        }
        None => st.fresh_graph(),
    };
    // It covers the claims a replay had left unlinked, too.
    st.unlinked_from = None;
    st.rebase_text();
    st.derive_vocab(ws);
    Ok((n, m))
}

/// Frees a column of an owned load once it has been consumed (a borrowed load is left as it is).
fn release<T: Default>(load: &mut Cow<'_, BulkLoad>, column: impl FnOnce(&mut BulkLoad) -> &mut T) {
    if let Cow::Owned(l) = load {
        drop(std::mem::take(column(l)));
    }
}

impl BitCol {
    /// Appends bits.
    pub fn extend_bits(&mut self, bits: impl Iterator<Item = bool>) {
        for b in bits {
            self.push(b);
        }
    }
}

impl<T: Clone> CowVec<T> {
    /// Appends rows from a vector (moved into fresh leaves when the column is leaf-aligned).
    pub fn extend_from_vec(&mut self, rows: Vec<T>) {
        if self.is_empty() {
            *self = CowVec::from_vec(rows);
        } else {
            for r in rows {
                self.push(r);
            }
        }
    }
}

impl KeyIndex {
    /// A new index holding this one's keys plus `keys` (`hash << 32 | id`, ascending).
    #[must_use]
    pub fn with_sorted_keys(&self, mut keys: Vec<u64>) -> KeyIndex {
        if self.is_empty() {
            return KeyIndex::from_sorted_keys(keys);
        }
        self.for_each_key(|k| keys.push(k));
        KeyIndex::from_sorted_keys(sort_hashed_keys(keys))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
        #[test]
        fn text_column_behaves_like_a_vec_of_strings(rows in proptest::collection::vec("[a-zé|]{0,5}", 0..3500), cut in 0usize..3500) {
            let cut = cut.min(rows.len());
            let mut column = TextColumn::with_capacity(rows.len(), rows.len() * 3);
            for r in &rows {
                column.push(r);
            }
            // Joined from two parts, on or off a leaf boundary.
            for at in [cut, cut / STRVEC_LEAF_LEN * STRVEC_LEAF_LEN] {
                let (mut a, mut b) = (TextColumn::new(), TextColumn::new());
                for (k, r) in rows.iter().enumerate() {
                    if k < at { a.push(r) } else { b.push(r) }
                }
                a.append(&b);
                prop_assert_eq!(&a, &column);
            }
            prop_assert_eq!(column.len(), rows.len());
            prop_assert_eq!(column.byte_len(), rows.iter().map(String::len).sum::<usize>());
            let shared = column.to_strvec();
            prop_assert_eq!(shared.len(), rows.len());
            for (i, r) in rows.iter().enumerate() {
                prop_assert_eq!(column.get(i), r.as_str());
                prop_assert_eq!(shared.get(i), r.as_str());
            }
            // The encoding is the one a column stored as (all text, row ends) always had.
            let ends: Vec<usize> = rows.iter().scan(0, |end, r| { *end += r.len(); Some(*end) }).collect();
            let encoded = postcard::to_allocvec(&column).unwrap();
            prop_assert_eq!(&encoded, &postcard::to_allocvec(&(rows.concat(), ends)).unwrap());
            prop_assert_eq!(postcard::from_bytes::<TextColumn>(&encoded).unwrap(), column);
        }
    }

    #[test]
    fn a_text_column_refuses_ends_that_do_not_fit_its_text() {
        for (bytes, ends) in [("abc", vec![2usize, 1]), ("abc", vec![4]), ("é", vec![1]), ("abc", vec![2])] {
            let encoded = postcard::to_allocvec(&(bytes, ends.clone())).unwrap();
            assert!(postcard::from_bytes::<TextColumn>(&encoded).is_err(), "{bytes:?} {ends:?}");
        }
    }
}
