//! Bulk load: build a workspace from columnar input in one atomic commit, on all cores.
//!
//! A `WriteBatch` validates and applies one operation at a time, which is right for an agent's
//! writes and far too slow for importing millions of rows. `Database::bulk_load` takes columns
//! (strings packed in `TextColumn`s, ids as row indexes), validates every row in parallel, builds
//! the columns, bitmaps, key indexes and the CSR in parallel, and publishes them as one commit.
//! The same rules as a batch apply; the first invalid row (in row order) is reported by section,
//! row and field, and nothing is written.

use crate::batch::DeclarePredicate;
use crate::bitcol::BitCol;
use crate::bitmap::IdSet;
use crate::cow::CowVec;
use crate::error::WriteErrorKind;
use crate::graph::{build_base, Graph};
use crate::ids::{PredicateId, TypeId, NONE};
use crate::keyindex::{key_hash, KeyIndex};
use crate::limits::Limits;
use crate::model::{ClaimState, PredicateDef};
use crate::normalize::{name_key, vocabulary_key};
use crate::state::{State, ALIAS_SEP, LIVE, TIMED};
use crate::strvec::{StrVec, STRVEC_LEAF_LEN};
use crate::time::Timestamp;
use rayon::prelude::*;
use std::sync::Arc;

/// Strings packed into one buffer: row `i` is `bytes[ends[i-1]..ends[i]]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextColumn {
    bytes: String,
    ends: Vec<usize>,
}

impl TextColumn {
    /// An empty column.
    pub fn new() -> TextColumn {
        TextColumn::default()
    }

    /// Appends a row.
    pub fn push(&mut self, s: &str) {
        self.bytes.push_str(s);
        self.ends.push(self.bytes.len());
    }

    /// Appends all rows of `other`.
    pub fn append(&mut self, other: &TextColumn) {
        let base = self.bytes.len();
        self.bytes.push_str(&other.bytes);
        self.ends.extend(other.ends.iter().map(|e| e + base));
    }

    /// Row `i`.
    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

/// Entities to load. Row `i` of every column is entity `i` of this load.
#[derive(Clone, Debug, Default)]
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
#[derive(Clone, Debug, Default)]
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
#[derive(Clone, Debug, Default)]
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

fn err(section: &'static str, row: usize, field: &'static str, kind: WriteErrorKind) -> BulkError {
    BulkError { section, row, field, kind }
}

fn check_name(s: &str, limits: &Limits) -> Option<WriteErrorKind> {
    if s.trim().is_empty() {
        Some(WriteErrorKind::Empty)
    } else if s.len() > limits.name_bytes_max {
        Some(WriteErrorKind::TooLong { len: s.len(), limit: limits.name_bytes_max, limit_name: "name_bytes_max" })
    } else if s.chars().any(char::is_control) {
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
    let mut keys = vec![name_key(name)];
    let mut out = Vec::new();
    for a in row.split(sep).filter(|a| !a.is_empty()) {
        let k = name_key(a);
        if !keys.contains(&k) {
            keys.push(k);
            out.push(a);
        }
    }
    out
}

/// The first row (in row order) for which `check` reports a problem.
fn first_bad<T: Send>(n: usize, check: impl Fn(usize) -> Option<T> + Sync) -> Option<(usize, T)> {
    (0..n).into_par_iter().find_map_first(|i| check(i).map(|e| (i, e)))
}

/// Builds a `StrVec` from rows on rayon, leaf-aligned chunks so the pieces are shared, not copied.
fn build_strvec(n: usize, row: impl Fn(usize, &mut StrVec) + Sync) -> StrVec {
    let chunk = STRVEC_LEAF_LEN * 16;
    let parts: Vec<StrVec> = (0..n.div_ceil(chunk))
        .into_par_iter()
        .map(|c| {
            let mut v = StrVec::new();
            for i in c * chunk..((c + 1) * chunk).min(n) {
                row(i, &mut v);
            }
            v
        })
        .collect();
    let mut out = StrVec::new();
    for p in &parts {
        out.extend_from(p);
    }
    out
}

/// Sorted `(hash, id)` pairs; reports the first pair of equal keys as a duplicate.
fn unique_index(
    existing: &KeyIndex,
    pairs: Vec<(u32, u32)>,
    key_of: impl Fn(u32) -> String + Sync,
    section: &'static str,
    first_id: u32,
) -> Result<KeyIndex, BulkError> {
    let mut sorted = pairs.clone();
    sorted.par_sort_unstable();
    let dup = sorted.par_windows(2).filter(|w| w[0].0 == w[1].0 && key_of(w[0].1) == key_of(w[1].1)).map(|w| w[0].1.max(w[1].1)).min();
    if let Some(id) = dup {
        return Err(err(section, (id - first_id) as usize, "ext_id", WriteErrorKind::DuplicateId(key_of(id))));
    }
    Ok(existing.with_pairs(sorted))
}

/// Applies `load` to `st` (a private copy) at transaction time `now`.
#[allow(clippy::too_many_lines)] // Reason: one linear pipeline; splitting it would scatter the row-index bookkeeping.
pub fn apply_bulk(st: &mut State, load: &BulkLoad, now: Timestamp, limits: &Limits) -> Result<(usize, usize), BulkError> {
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
    let e0 = st.entities.len();
    let c0 = st.claims.len();
    if e0 + n >= NONE as usize || c0 + m >= NONE as usize {
        return Err(err("entities", 0, "ext_id", WriteErrorKind::Invalid("the load would exceed 2^32 - 1 rows")));
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

    // Row checks, in parallel; the first bad row in row order wins.
    let sep = if ents.alias_separator == '\0' { '|' } else { ents.alias_separator };
    let bad = first_bad(n, |i| {
        if let Some(k) = check_ext(ents.ext_id.get(i), limits) {
            return Some(("ext_id", k));
        }
        if let Some(k) = check_name(ents.name.get(i), limits) {
            return Some(("name", k));
        }
        if ents.entity_type[i] as usize >= type_map.len() {
            return Some(("entity_type", WriteErrorKind::Invalid("type index out of range")));
        }
        if !ents.aliases.is_empty() {
            let row = ents.aliases.get(i);
            for a in row.split(sep).filter(|a| !a.is_empty()) {
                if let Some(k) = check_name(a, limits) {
                    return Some(("aliases", k));
                }
            }
            let count = distinct_aliases(ents.name.get(i), row, sep).len();
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
        if claims.predicate[i] as usize >= pred_map.len() {
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

    // Key indexes (duplicates are errors) before anything else is built.
    let ext_pairs: Vec<(u32, u32)> = (0..n).into_par_iter().map(|i| (key_hash(ws, ents.ext_id.get(i)), e0 + i as u32)).collect();
    let ent_ext = unique_index(&st.entities.by_ext, ext_pairs, |id| ents.ext_id.get((id - e0) as usize).to_owned(), "entities", e0)?;
    let claim_ext_of = |i: usize| if claims.ext_id.is_empty() { format!("c{}", c0 as usize + i) } else { claims.ext_id.get(i).to_owned() };
    let claim_pairs: Vec<(u32, u32)> = if claims.ext_id.is_empty() {
        (0..m).into_par_iter().map(|i| (key_hash(ws, &claim_ext_of(i)), c0 + i as u32)).collect()
    } else {
        (0..m).into_par_iter().map(|i| (key_hash(ws, claims.ext_id.get(i)), c0 + i as u32)).collect()
    };
    let claim_ext = unique_index(&st.claims.by_ext, claim_pairs, |id| claim_ext_of((id - c0) as usize), "claims", c0)?;
    let name_pairs: Vec<(u32, u32)> = (0..n)
        .into_par_iter()
        .flat_map_iter(|i| {
            let id = e0 + i as u32;
            let aliases = if ents.aliases.is_empty() { "" } else { ents.aliases.get(i) };
            std::iter::once(ents.name.get(i))
                .chain(aliases.split(sep).filter(|a| !a.is_empty()))
                .map(move |s| (key_hash(ws, &name_key(s)), id))
        })
        .collect();
    let by_name = st.entities.by_name.with_pairs(name_pairs);

    // Entity columns.
    let e = &mut st.entities;
    e.ws.extend_from_vec(vec![ws; n]);
    e.ty.extend_from_vec(ents.entity_type.par_iter().map(|t| TypeId(type_map[*t as usize])).collect());
    e.flags.extend_from_vec(vec![0; n]);
    e.ext_id.extend_from(&build_strvec(n, |i, v| v.push(ents.ext_id.get(i))));
    e.name.extend_from(&build_strvec(n, |i, v| v.push(ents.name.get(i))));
    e.aliases.extend_from(&build_strvec(n, |i, v| {
        if ents.aliases.is_empty() {
            v.push("");
        } else {
            v.push(&distinct_aliases(ents.name.get(i), ents.aliases.get(i), sep).join(&ALIAS_SEP.to_string()));
        }
    }));
    if n > 0 {
        e.created.note(e0, now);
    }
    e.by_ext = ent_ext;
    e.by_name = by_name;

    // Claim columns.
    let subject: Vec<u32> = claims.subject.par_iter().map(|s| e0 + s).collect();
    let object: Vec<u32> = claims.object.par_iter().map(|o| e0 + o).collect();
    let pred: Vec<u16> = claims.predicate.par_iter().map(|p| pred_map[*p as usize]).collect();
    let valid_from: Vec<Timestamp> = if claims.valid_from.is_empty() { vec![now; m] } else { claims.valid_from.clone() };
    let flags: Vec<u8> = (0..m)
        .into_par_iter()
        .map(|i| {
            let timed = valid_from[i] > now;
            let live = claims.state[i] != ClaimState::Deprecated;
            u8::from(timed) * TIMED | u8::from(live) * LIVE
        })
        .collect();
    let c = &mut st.claims;
    c.fast.extend_bits(flags.iter().map(|f| f & LIVE != 0 && f & TIMED == 0));
    c.subject.extend_from_vec(subject);
    c.object.extend_from_vec(object);
    c.pred.extend_from_vec(pred.clone());
    c.confidence.extend_from_vec(claims.confidence.clone());
    c.state.extend_from_vec(claims.state.clone());
    c.flags.extend_from_vec(flags.clone());
    c.valid_from.extend_from_vec(valid_from);
    c.valid_until.extend_from_vec(vec![Timestamp::MAX; m]);
    c.ext_id.extend_from(&build_strvec(m, |i, v| v.push(&claim_ext_of(i))));
    c.text.extend_from(&build_strvec(m, |i, v| v.push(if claims.text.is_empty() { "" } else { claims.text.get(i) })));
    c.evidence_head.extend_from_vec(vec![NONE; m]);
    if m > 0 {
        c.recorded.note(c0, now);
    }
    c.by_ext = claim_ext;

    // Bitmaps.
    let bm = &mut st.bitmaps;
    let ent_ids = IdSet::from_ids(e0..e0 + n as u32);
    bm.entities_by_ws.insert(ws, ent_ids);
    for (local, global) in type_map.iter().enumerate() {
        let ids = IdSet::from_ids((0..n).filter(|i| ents.entity_type[*i] as usize == local).map(|i| e0 + i as u32));
        let entry = bm.entities_by_type.entry(TypeId(*global)).or_default();
        *entry = entry.or(&ids);
    }
    let claim_ids = IdSet::from_ids(c0..c0 + m as u32);
    let existing = bm.claims_by_ws.get(&ws).cloned().unwrap_or_default();
    bm.claims_by_ws.insert(ws, existing.or(&claim_ids));
    for s in ClaimState::ALL {
        let ids = IdSet::from_ids((0..m).filter(|i| claims.state[*i] == s).map(|i| c0 + i as u32));
        bm.claims_by_state[s as usize] = bm.claims_by_state[s as usize].or(&ids);
    }
    bm.claims_live = bm.claims_live.or(&IdSet::from_ids((0..m).filter(|i| flags[*i] & LIVE != 0).map(|i| c0 + i as u32)));
    for global in &pred_map {
        let ids = IdSet::from_ids((0..m).filter(|i| pred[*i] == *global).map(|i| c0 + i as u32));
        let entry = bm.claims_by_pred.entry(PredicateId(*global)).or_default();
        *entry = entry.or(&ids);
    }

    // Adjacency: a fresh base over every claim, so the load leaves no delta behind.
    let subjects: Vec<u32> = st.claims.subject.iter().copied().collect();
    let preds: Vec<u16> = st.claims.pred.iter().copied().collect();
    let objects: Vec<u32> = st.claims.object.iter().copied().collect();
    let base = build_base(st.entities.len(), &subjects, &preds, &objects);
    st.graph = Graph { base, watermark: st.claims.len() as u32, delta: crate::graph::delta::Delta::default() };
    Ok((n, m))
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
    /// A new index holding this one's keys plus `pairs`.
    pub fn with_pairs(&self, mut pairs: Vec<(u32, u32)>) -> KeyIndex {
        self.for_each_pair(|h, id| pairs.push((h, id)));
        KeyIndex::from_pairs(pairs)
    }
}
