//! Checkpoint snapshots: the whole state as an rkyv archive of plain columns.
//!
//! The archive holds what cannot be recomputed (rows, lifecycle history, vocabulary, the WAL
//! position it covers); indexes (CSR, key indexes, bitmaps, visibility bits) are rebuilt on load in
//! parallel, as a bulk load builds them. The file envelope (block checksums, atomic write, mapping)
//! is `engram_storage::snapshot`; every block is verified before the archive is read, and the
//! archive is then accessed with rkyv's validation as well (`rkyv::access`), so no unchecked access
//! to file bytes happens.

use crate::ids::{ClaimId, PredicateId, TypeId, WorkspaceId, NONE};
use crate::index::bitcol::BitCol;
use crate::index::cow::CowVec;
use crate::index::keyindex::KeyIndex;
use crate::index::strvec::StrVec;
use crate::model::{Cardinality, ClaimState, PredicateDef, WorkspaceInfo};
use crate::state::{ClaimEvent, EntityEvent, EvidenceRow, State, LIVE, TIMED};
use crate::time::Timestamp;
use rayon::prelude::*;
use std::sync::Arc;

/// Strings packed as in a `StrVec`: row `i` is `bytes[ends[i-1]..ends[i]]`.
#[derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize, Default)]
pub struct Strs {
    bytes: String,
    ends: Vec<u64>,
}

impl Strs {
    fn of(v: &StrVec) -> Strs {
        let bytes = (0..v.len()).map(|i| v.get(i).len()).sum();
        let mut s = Strs { bytes: String::with_capacity(bytes), ends: Vec::with_capacity(v.len()) };
        for i in 0..v.len() {
            s.bytes.push_str(v.get(i));
            s.ends.push(s.bytes.len() as u64);
        }
        s
    }
}

impl ArchivedStrs {
    fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1].to_native() as usize };
        &self.bytes.as_str()[start..self.ends[i].to_native() as usize]
    }

    fn to_strvec(&self) -> StrVec {
        StrVec::build_par(self.ends.len(), |i, b| b.push_str(self.get(i)))
    }
}

/// One predicate declaration.
#[derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct PredDefRow {
    ws: u32,
    pred: u16,
    one: bool,
    inverse: Option<String>,
    transitive: bool,
    half_life_days: Option<f64>,
}

/// One evidence row.
#[derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct EvidenceRowV1 {
    claim: u32,
    ext_id: Option<String>,
    conversation_id: Option<String>,
    message_id: Option<String>,
    model: Option<String>,
    model_version: Option<String>,
    raw_confidence: Option<f32>,
    snippet: Option<String>,
    observed_at: i64,
    recorded_at: i64,
    next: u32,
}

/// One entity merge (format 2).
#[derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct MergeRowV2 {
    from: u32,
    into: u32,
    at: i64,
    undone_at: i64,
    claims: Vec<(u32, u8)>,
    aliases: Vec<String>,
}

/// What format 2 added to format 1.
#[derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct AddedV2 {
    /// Evidence reasoning, sparse: (evidence row, text), ascending.
    ev_reasoning: Vec<(u32, String)>,
    /// Entity merges, oldest first.
    merges: Vec<MergeRowV2>,
}

/// The archived state, format 2: the columns of format 1 and what format 2 added.
#[derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct SnapshotV2 {
    base: SnapshotV1,
    added: AddedV2,
}

/// What format 3 added (the query language's elements): sparse, ascending by row.
#[derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct AddedV3 {
    /// An entity's labels after its first (its type): (entity, type ids).
    e_labels: Vec<(u32, Vec<u16>)>,
    /// A claim's typed properties: (claim, postcard-encoded `Properties`).
    c_props: Vec<(u32, Vec<u8>)>,
    /// Each workspace's vocabulary in first-use order.
    vocab: Vec<VocabRowV3>,
}

/// One workspace's vocabulary (format 3), as `state::Vocabulary`.
#[derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct VocabRowV3 {
    ws: u32,
    labels: Vec<u16>,
    types: Vec<u16>,
    keys: Vec<String>,
    public_types: Vec<u16>,
    public_keys: Vec<String>,
}

/// The archived state, format 3: format 2 and what format 3 added.
#[derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct SnapshotV3 {
    v2: SnapshotV2,
    added: AddedV3,
}

/// Tags, as stored: (key, value) pairs in key order.
type TagPairs = Vec<(String, String)>;

/// What format 7 added: tags (sparse, ascending by row; messages by their key).
#[derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct AddedV7 {
    claims: Vec<(u32, TagPairs)>,
    entities: Vec<(u32, TagPairs)>,
    messages: Vec<(String, TagPairs)>,
}

/// The archived state, format 7: format 3 (whose layout formats 4 to 6 kept) and the tags.
#[derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct SnapshotV7 {
    v3: SnapshotV3,
    added: AddedV7,
}

/// One CSR direction, as stored.
#[derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct CsrV1 {
    offsets: Vec<u32>,
    preds: Vec<u16>,
    nbrs: Vec<u32>,
    claims: Vec<u32>,
}

/// The archived state, format 1.
#[derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct SnapshotV1 {
    /// Commit counter of the state.
    pub version: u64,
    committed_at: i64,
    /// The WAL position this snapshot covers everything before: (segment, offset).
    pub wal_from: (u64, u64),
    workspaces: Vec<(u32, String, i64, bool)>,
    predicates: Vec<String>,
    types: Vec<String>,
    predicate_defs: Vec<PredDefRow>,
    e_ws: Vec<u32>,
    e_ty: Vec<u16>,
    e_flags: Vec<u8>,
    e_ext: Strs,
    e_name: Strs,
    e_aliases: Strs,
    e_created: Vec<(u32, i64)>,
    e_updated: Vec<(u32, i64)>,
    e_props: Vec<(u32, Vec<u8>)>,
    e_last_event: Vec<(u32, u32)>,
    e_events: Vec<(i64, bool, u32)>,
    c_subject: Vec<u32>,
    c_object: Vec<u32>,
    c_pred: Vec<u16>,
    c_confidence: Vec<f32>,
    c_state: Vec<u8>,
    c_flags: Vec<u8>,
    c_valid_from: Vec<i64>,
    c_valid_until: Vec<i64>,
    c_ext: Strs,
    c_text: Strs,
    c_evidence_head: Vec<u32>,
    c_recorded: Vec<(u32, i64)>,
    c_updated: Vec<(u32, i64)>,
    c_expires: Vec<(u32, i64)>,
    c_superseded_by: Vec<(u32, u32)>,
    c_last_event: Vec<(u32, u32)>,
    c_events: Vec<(i64, u8, bool, u32)>,
    c_supersedes: Vec<(u32, Vec<u32>)>,
    evidence: Vec<EvidenceRowV1>,
    /// The stored settings, postcard-encoded.
    settings: Vec<u8>,
    /// The base CSR (out, in) over every claim, so a load maps instead of rebuilding it.
    csr: Vec<CsrV1>,
    /// The key indexes (`hash << 32 | row`, ascending): entity ids, names, claim ids.
    keys: [Vec<u64>; 3],
}

fn sorted_keys(index: &KeyIndex) -> Vec<u64> {
    let mut v = Vec::new();
    index.for_each_key(|k| v.push(k));
    v.par_sort_unstable();
    v.dedup();
    v
}

/// Both directions of the base CSR over every claim. A base with a delta or stale stored bits is
/// rebuilt for the snapshot; a clean one (after a bulk load or a merge) is written as it is.
fn base_csr(st: &State) -> Vec<CsrV1> {
    let g = &st.graph;
    let fresh;
    let base = if g.watermark as usize == st.claims.len() && g.delta_len() == 0 && !g.dirty.any() && g.moved.is_empty() {
        &g.base
    } else {
        fresh = st.build_base().0;
        &fresh.csr
    };
    base.iter()
        .map(|c| {
            let (o, p, n, k) = c.parts();
            CsrV1 { offsets: o.to_vec(), preds: p.to_vec(), nbrs: n.to_vec(), claims: k.to_vec() }
        })
        .collect()
}

fn sparse<V: Copy>(m: &crate::pmap::PMap<u32, V>) -> Vec<(u32, V)> {
    let mut v: Vec<(u32, V)> = m.iter().map(|(k, v)| (*k, *v)).collect();
    v.sort_unstable_by_key(|p| p.0);
    v
}

fn opt(s: Option<&Arc<str>>) -> Option<String> {
    s.map(ToString::to_string)
}

/// Captures `st` (covering the WAL before `wal_from`) as the columns an archive body holds.
pub fn capture(st: &State, wal_from: (u64, u64)) -> SnapshotV7 {
    let pairs = |t: &crate::tags::Tags| -> TagPairs { t.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect() };
    let mut c_tags: Vec<(u32, TagPairs)> = st.claims.tags.iter().map(|(c, t)| (*c, pairs(t))).collect();
    c_tags.sort_unstable_by_key(|r| r.0);
    let mut e_tags: Vec<(u32, TagPairs)> = st.entities.tags.iter().map(|(e, t)| (*e, pairs(t))).collect();
    e_tags.sort_unstable_by_key(|r| r.0);
    let mut m_tags: Vec<(String, TagPairs)> = st.evidence.message_tags.iter().map(|(k, t)| (k.to_string(), pairs(t))).collect();
    m_tags.sort_unstable();
    SnapshotV7 { v3: capture_v3(st, wal_from), added: AddedV7 { claims: c_tags, entities: e_tags, messages: m_tags } }
}

#[allow(clippy::too_many_lines)] // Reason: one field after another; splitting would only move the list.
fn capture_v3(st: &State, wal_from: (u64, u64)) -> SnapshotV3 {
    let c = &st.catalog;
    let (e, cl) = (&st.entities, &st.claims);
    // The large columns are copied out side by side: one after another they took about 1.7 s of
    // CPU at M scale (5M claims).
    let (mut entity_ids, mut entity_names, mut entity_aliases, mut claim_ids, mut claim_texts) = Default::default();
    let (mut c_subject, mut c_object, mut c_pred, mut c_confidence) = Default::default();
    let (mut c_state, mut c_flags, mut c_valid_from, mut c_valid_until, mut c_evidence_head) = Default::default();
    let (mut csr, mut keys) = (Vec::new(), <[Vec<u64>; 3]>::default());
    rayon::scope(|s| {
        s.spawn(|_| entity_ids = Strs::of(&e.ext_id));
        s.spawn(|_| entity_names = Strs::of(&e.name));
        s.spawn(|_| entity_aliases = Strs::of(&e.aliases));
        s.spawn(|_| claim_ids = Strs::of(&cl.ext_id));
        s.spawn(|_| claim_texts = Strs::of(&cl.text));
        s.spawn(|_| c_subject = cl.subject.iter().copied().collect());
        s.spawn(|_| c_object = cl.object.iter().copied().collect());
        s.spawn(|_| c_pred = cl.pred.iter().copied().collect());
        s.spawn(|_| c_confidence = cl.confidence.iter().copied().collect());
        s.spawn(|_| c_state = cl.state.iter().map(|s| *s as u8).collect());
        s.spawn(|_| c_flags = cl.flags.iter().copied().collect());
        s.spawn(|_| c_valid_from = cl.valid_from.iter().map(|t| t.0).collect());
        s.spawn(|_| c_valid_until = cl.valid_until.iter().map(|t| t.0).collect());
        s.spawn(|_| c_evidence_head = cl.evidence_head.iter().copied().collect());
        s.spawn(|_| csr = base_csr(st));
        for (out, index) in keys.iter_mut().zip([&e.by_ext, &e.by_name, &cl.by_ext]) {
            s.spawn(move |_| *out = sorted_keys(index));
        }
    });
    let base = SnapshotV1 {
        version: st.version,
        committed_at: st.committed_at.0,
        wal_from,
        workspaces: c
            .workspaces
            .iter()
            .enumerate()
            .map(|(i, w)| match w {
                Some(w) => (i as u32, w.name.to_string(), w.created_at.0, true),
                None => (i as u32, String::new(), 0, false),
            })
            .collect(),
        predicates: (0..c.predicates.len()).map(|i| c.predicates.name(i as u16).to_string()).collect(),
        types: (0..c.types.len()).map(|i| c.types.name(i as u16).to_string()).collect(),
        predicate_defs: c
            .predicate_defs
            .iter()
            .map(|((ws, p), d)| PredDefRow {
                ws: ws.0,
                pred: p.0,
                one: d.cardinality == Cardinality::One,
                inverse: opt(d.inverse.as_ref()),
                transitive: d.transitive,
                half_life_days: d.half_life_days,
            })
            .collect(),
        e_ws: e.ws.iter().map(|w| w.0).collect(),
        e_ty: e.ty.iter().map(|t| t.0).collect(),
        e_flags: e.flags.iter().copied().collect(),
        e_ext: entity_ids,
        e_name: entity_names,
        e_aliases: entity_aliases,
        e_created: e.created.entries().into_iter().map(|(id, t)| (id, t.0)).collect(),
        e_updated: sparse(&e.updated_at).into_iter().map(|(k, t)| (k, t.0)).collect(),
        e_props: {
            let mut v: Vec<(u32, Vec<u8>)> =
                e.props.iter().map(|(k, p)| (k, postcard::to_allocvec(p.as_ref()).expect("properties encode"))).collect();
            v.sort_unstable_by_key(|p| p.0);
            v
        },
        e_last_event: sparse(&e.last_event),
        e_events: e.events.iter().map(|x| (x.at.0, x.deleted_before, x.prev)).collect(),
        c_subject,
        c_object,
        c_pred,
        c_confidence,
        c_state,
        c_flags,
        c_valid_from,
        c_valid_until,
        c_ext: claim_ids,
        c_text: claim_texts,
        c_evidence_head,
        c_recorded: cl.recorded.entries().into_iter().map(|(id, t)| (id, t.0)).collect(),
        c_updated: sparse(&cl.updated_at).into_iter().map(|(k, t)| (k, t.0)).collect(),
        c_expires: sparse(&cl.expires_at).into_iter().map(|(k, t)| (k, t.0)).collect(),
        c_superseded_by: sparse(&cl.superseded_by),
        c_last_event: sparse(&cl.last_event),
        c_events: cl.events.iter().map(|x| (x.at.0, x.state_before as u8, x.deleted_before, x.prev)).collect(),
        c_supersedes: {
            let mut v: Vec<(u32, Vec<u32>)> = cl.supersedes.iter().map(|(k, l)| (*k, l.iter().map(|c| c.0).collect())).collect();
            v.sort_unstable_by_key(|p| p.0);
            v
        },
        evidence: st
            .evidence
            .rows
            .iter()
            .map(|r| EvidenceRowV1 {
                claim: r.claim.0,
                ext_id: opt(r.ext_id.as_ref()),
                conversation_id: opt(r.conversation_id.as_ref()),
                message_id: opt(r.message_id.as_ref()),
                model: opt(r.model.as_ref()),
                model_version: opt(r.model_version.as_ref()),
                raw_confidence: r.raw_confidence,
                snippet: opt(r.snippet.as_ref()),
                observed_at: r.observed_at.0,
                recorded_at: r.recorded_at.0,
                next: r.next,
            })
            .collect(),
        settings: postcard::to_allocvec(st.settings.as_ref()).expect("settings encode"),
        csr,
        keys,
    };
    let added = AddedV2 {
        ev_reasoning: st
            .evidence
            .rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.reasoning.as_ref().map(|t| (i as u32, t.to_string())))
            .collect(),
        merges: e
            .merges
            .iter()
            .map(|m| MergeRowV2 {
                from: m.from,
                into: m.into,
                at: m.at.0,
                undone_at: m.undone_at.0,
                claims: m.claims.to_vec(),
                aliases: m.aliases.iter().map(ToString::to_string).collect(),
            })
            .collect(),
    };
    let mut e_labels: Vec<(u32, Vec<u16>)> = e.labels.iter().map(|(k, l)| (*k, l.iter().map(|t| t.0).collect())).collect();
    e_labels.sort_unstable_by_key(|r| r.0);
    let mut c_props: Vec<(u32, Vec<u8>)> =
        st.claims.props.iter().map(|(k, p)| (k, postcard::to_allocvec(p.as_ref()).expect("properties encode"))).collect();
    c_props.sort_unstable_by_key(|r| r.0);
    let strings = |keys: &[Arc<str>]| keys.iter().map(ToString::to_string).collect();
    let mut vocab: Vec<VocabRowV3> = st
        .catalog
        .vocab
        .iter()
        .map(|(w, v)| VocabRowV3 {
            ws: w.0,
            labels: v.labels.iter().map(|t| t.0).collect(),
            types: v.types.iter().map(|p| p.0).collect(),
            keys: strings(&v.keys),
            public_types: v.public_types.iter().map(|p| p.0).collect(),
            public_keys: strings(&v.public_keys),
        })
        .collect();
    vocab.sort_unstable_by_key(|r| r.ws);
    SnapshotV3 { v2: SnapshotV2 { base, added }, added: AddedV3 { e_labels, c_props, vocab } }
}

/// The archive body's length in bytes, found by serializing into a sink that only counts.
pub fn body_len(snap: &SnapshotV7) -> usize {
    use rkyv::ser::Positional;
    rkyv::api::high::to_bytes_in::<_, rkyv::rancor::Error>(snap, rkyv::ser::writer::IoWriter::new(std::io::sink())).map_or(0, |w| w.pos())
}

/// Serializes the archive body into `sink` as it goes (positions are relative to the body's
/// start, which the snapshot file aligns to 64 bytes), so no copy of it is held in memory.
pub fn write_body(snap: &SnapshotV7, sink: &mut dyn std::io::Write) -> std::io::Result<()> {
    rkyv::api::high::to_bytes_in::<_, rkyv::rancor::Error>(snap, rkyv::ser::writer::IoWriter::new(sink))
        .map(|_| ())
        .map_err(std::io::Error::other)
}

/// Why an archive could not be turned back into a state.
#[derive(Debug)]
pub struct DecodeError(pub &'static str);

#[allow(clippy::trivially_copy_pass_by_ref)] // Reason: called on borrowed archive fields; by reference reads best there.
fn ts(t: &rkyv::rend::i64_le) -> Timestamp {
    Timestamp(t.to_native())
}

fn arc(s: &rkyv::option::ArchivedOption<rkyv::string::ArchivedString>) -> Option<Arc<str>> {
    s.as_ref().map(|s| Arc::from(s.as_str()))
}

/// Rebuilds a state from a verified archive body of snapshot format `format` (1 or 2); returns
/// it with the WAL position it covers.
pub fn decode(body: &[u8], format: u32) -> Result<(State, (u64, u64)), DecodeError> {
    let invalid = |_| DecodeError("the snapshot archive does not validate");
    if format == 1 {
        let a = rkyv::access::<ArchivedSnapshotV1, rkyv::rancor::Error>(body).map_err(invalid)?;
        let (mut st, wal_from) = decode_columns(a, None)?;
        derive_vocabularies(&mut st);
        pii_tags(&mut st);
        return Ok((st, wal_from));
    }
    if format == 2 {
        let a = rkyv::access::<ArchivedSnapshotV2, rkyv::rancor::Error>(body).map_err(invalid)?;
        let (mut st, wal_from) = decode_columns(&a.base, Some(&a.added))?;
        derive_vocabularies(&mut st);
        pii_tags(&mut st);
        return Ok((st, wal_from));
    }
    if format < 7 {
        let a = rkyv::access::<ArchivedSnapshotV3, rkyv::rancor::Error>(body).map_err(invalid)?;
        let (mut st, wal_from) = decode_columns(&a.v2.base, Some(&a.v2.added))?;
        decode_elements(&mut st, &a.added)?;
        tags_of_sensitive_claims(&mut st);
        pii_tags(&mut st);
        return Ok((st, wal_from));
    }
    let a = rkyv::access::<ArchivedSnapshotV7, rkyv::rancor::Error>(body).map_err(invalid)?;
    let (mut st, wal_from) = decode_columns(&a.v3.v2.base, Some(&a.v3.v2.added))?;
    decode_elements(&mut st, &a.v3.added)?;
    decode_tags(&mut st, &a.added)?;
    if format < 8 {
        pii_tags(&mut st);
    }
    Ok((st, wal_from))
}

/// Before format 8 no row had its `pii` tag: the detector runs over every claim text and
/// property value once.
fn pii_tags(st: &mut State) {
    for c in 0..st.claims.len() as u32 {
        if !st.claims.text.get(c as usize).is_empty() || st.claims.props.contains_key(c) {
            st.note_pii(c);
        }
    }
    let with_props: Vec<(u32, crate::value::Properties)> = st.entities.props.iter().map(|(e, p)| (e, (**p).clone())).collect();
    for (e, p) in with_props {
        st.entities.set_props(e, Some(p));
    }
}

/// Before tags, a sensitive claim had only its flag: it gets the tag the flag stands for.
fn tags_of_sensitive_claims(st: &mut State) {
    let tag = crate::tags::sensitive();
    for c in 0..st.claims.len() as u32 {
        if *st.claims.flags.get(c as usize) & crate::state::SENSITIVE != 0 {
            st.claims.tags.insert(c, tag.clone());
        }
    }
}

/// Format 7's tags, checked against the tables.
fn decode_tags(st: &mut State, a: &ArchivedAddedV7) -> Result<(), DecodeError> {
    let tags = |pairs: &rkyv::vec::ArchivedVec<rkyv::tuple::ArchivedTuple2<rkyv::string::ArchivedString, rkyv::string::ArchivedString>>| {
        Arc::new(pairs.iter().map(|p| (Arc::from(p.0.as_str()), Arc::from(p.1.as_str()))).collect::<crate::tags::Tags>())
    };
    for row in a.claims.iter() {
        let c = row.0.to_native();
        if c as usize >= st.claims.len() {
            return Err(DecodeError("claim tags name a missing claim"));
        }
        st.claims.tags.insert(c, tags(&row.1));
    }
    for row in a.entities.iter() {
        let e = row.0.to_native();
        if e as usize >= st.entities.len() {
            return Err(DecodeError("entity tags name a missing entity"));
        }
        st.entities.tags.insert(e, tags(&row.1));
    }
    for row in a.messages.iter() {
        st.evidence.message_tags.insert(Arc::from(row.0.as_str()), tags(&row.1));
    }
    Ok(())
}

/// The vocabularies a snapshot before format 3 did not keep, from the rows in id order.
fn derive_vocabularies(st: &mut State) {
    let live: Vec<WorkspaceId> = st.catalog.workspaces.iter().flatten().map(|w| w.id).collect();
    for ws in live {
        st.derive_vocab(ws);
    }
}

/// Format 3's labels, claim properties and vocabularies, checked against the tables.
fn decode_elements(st: &mut State, a: &ArchivedAddedV3) -> Result<(), DecodeError> {
    let types = st.catalog.types.len();
    for row in a.e_labels.iter() {
        let e = row.0.to_native();
        if e as usize >= st.entities.len() || row.1.iter().any(|t| usize::from(t.to_native()) >= types) {
            return Err(DecodeError("an entity label names a missing entity or type"));
        }
        let labels: Vec<TypeId> = row.1.iter().map(|t| TypeId(t.to_native())).collect();
        st.entities.labels.insert(e, Arc::from(labels));
    }
    for row in a.c_props.iter() {
        let c = row.0.to_native();
        if c as usize >= st.claims.len() {
            return Err(DecodeError("claim properties name a missing claim"));
        }
        let props = postcard::from_bytes(&row.1).map_err(|_| DecodeError("claim properties do not decode"))?;
        st.claims.props.insert(c, Arc::new(props));
    }
    st.rebuild_claim_prop_index();
    let (types, preds) = (st.catalog.types.len(), st.catalog.predicates.len());
    for row in a.vocab.iter() {
        let preds_ok = |ps: &rkyv::vec::ArchivedVec<rkyv::rend::u16_le>| ps.iter().all(|p| usize::from(p.to_native()) < preds);
        if row.labels.iter().any(|t| usize::from(t.to_native()) >= types) || !preds_ok(&row.types) || !preds_ok(&row.public_types) {
            return Err(DecodeError("a vocabulary names a missing type or predicate"));
        }
        let keys = |ks: &rkyv::vec::ArchivedVec<rkyv::string::ArchivedString>| ks.iter().map(|k| Arc::from(k.as_str())).collect();
        let vocab = crate::state::Vocabulary {
            labels: row.labels.iter().map(|t| TypeId(t.to_native())).collect(),
            types: row.types.iter().map(|p| PredicateId(p.to_native())).collect(),
            keys: keys(&row.keys),
            public_types: row.public_types.iter().map(|p| PredicateId(p.to_native())).collect(),
            public_keys: keys(&row.public_keys),
        };
        st.catalog.vocab.insert(WorkspaceId(row.ws.to_native()), Arc::new(vocab));
    }
    Ok(())
}

/// The state from format 1's columns and, from format 2 on, what was added to them.
#[allow(clippy::too_many_lines)] // Reason: one column after another; splitting would only move the list.
fn decode_columns(a: &ArchivedSnapshotV1, added: Option<&ArchivedAddedV2>) -> Result<(State, (u64, u64)), DecodeError> {
    let mut st = State { version: a.version.to_native(), committed_at: Timestamp(a.committed_at.to_native()), ..State::default() };
    // Catalog.
    let mut workspaces = Vec::new();
    for w in a.workspaces.iter() {
        let (id, name, created, live) = (w.0.to_native(), w.1.as_str(), w.2.to_native(), w.3);
        if live {
            let name: Arc<str> = Arc::from(name);
            st.catalog.workspace_by_name.insert(name.clone(), WorkspaceId(id));
            workspaces.push(Some(WorkspaceInfo { id: WorkspaceId(id), name, created_at: Timestamp(created) }));
        } else {
            workspaces.push(None);
        }
    }
    st.catalog.workspaces = Arc::new(workspaces);
    for p in a.predicates.iter() {
        st.catalog.predicates.intern(p.as_str()).ok_or(DecodeError("too many predicates"))?;
    }
    for t in a.types.iter() {
        st.catalog.types.intern(t.as_str()).ok_or(DecodeError("too many types"))?;
    }
    for d in a.predicate_defs.iter() {
        let pred = d.pred.to_native();
        if usize::from(pred) >= st.catalog.predicates.len() {
            return Err(DecodeError("predicate declaration names an unknown predicate"));
        }
        let def = PredicateDef {
            name: st.catalog.predicates.name(pred).clone(),
            cardinality: if d.one { Cardinality::One } else { Cardinality::Many },
            inverse: arc(&d.inverse),
            transitive: d.transitive,
            half_life_days: d.half_life_days.as_ref().map(|h| h.to_native()),
        };
        st.catalog.predicate_defs.insert((WorkspaceId(d.ws.to_native()), PredicateId(pred)), def);
    }
    // Entities.
    let n = a.e_ws.len();
    let m = a.c_subject.len();
    if [a.e_ty.len(), a.e_flags.len(), a.e_ext.ends.len(), a.e_name.ends.len(), a.e_aliases.ends.len()].iter().any(|l| *l != n) {
        return Err(DecodeError("entity columns differ in length"));
    }
    if [
        a.c_object.len(),
        a.c_pred.len(),
        a.c_confidence.len(),
        a.c_state.len(),
        a.c_flags.len(),
        a.c_valid_from.len(),
        a.c_valid_until.len(),
        a.c_ext.ends.len(),
        a.c_text.ends.len(),
        a.c_evidence_head.len(),
    ]
    .iter()
    .any(|l| *l != m)
    {
        return Err(DecodeError("claim columns differ in length"));
    }
    if a.c_subject.iter().chain(a.c_object.iter()).any(|e| e.to_native() as usize >= n)
        || a.c_state.iter().chain(a.c_events.iter().map(|x| &x.1)).any(|s| *s > 2)
    {
        return Err(DecodeError("a claim names a missing entity or an unknown state"));
    }
    let (preds, types, spaces) = (st.catalog.predicates.len(), st.catalog.types.len(), st.catalog.workspaces.len());
    if a.c_pred.iter().any(|p| usize::from(p.to_native()) >= preds)
        || a.e_ty.iter().any(|t| usize::from(t.to_native()) >= types)
        || a.e_ws.iter().any(|w| w.to_native() as usize >= spaces)
    {
        return Err(DecodeError("a row names an unknown predicate, type or workspace"));
    }
    let e = &mut st.entities;
    // Columns that mostly hold one value share their leaves, as right after a bulk load.
    let first_ws = a.e_ws.first().map_or(0, |w| w.to_native());
    e.ws = CowVec::build_par_sharing(n, WorkspaceId(first_ws), |i| WorkspaceId(a.e_ws[i].to_native()));
    e.ty = CowVec::build_par(n, |i| TypeId(a.e_ty[i].to_native()));
    e.flags = CowVec::build_par_sharing(n, 0, |i| a.e_flags[i]);
    let (ext, (name, aliases)) = rayon::join(|| a.e_ext.to_strvec(), || rayon::join(|| a.e_name.to_strvec(), || a.e_aliases.to_strvec()));
    (e.ext_id, e.name, e.aliases) = (ext, name, aliases);
    for p in a.e_created.iter() {
        e.created.note(p.0.to_native(), ts(&p.1));
    }
    e.updated_at = a.e_updated.iter().map(|p| (p.0.to_native(), ts(&p.1))).collect();
    for p in a.e_props.iter() {
        let props = postcard::from_bytes(&p.1).map_err(|_| DecodeError("entity properties do not decode"))?;
        e.set_props(p.0.to_native(), Some(props));
    }
    e.last_event = a.e_last_event.iter().map(|p| (p.0.to_native(), p.1.to_native())).collect();
    e.events =
        CowVec::from_vec(a.e_events.iter().map(|x| EntityEvent { at: ts(&x.0), deleted_before: x.1, prev: x.2.to_native() }).collect());
    // Claims.
    let c = &mut st.claims;
    c.subject = CowVec::build_par(m, |i| a.c_subject[i].to_native());
    c.object = CowVec::build_par(m, |i| a.c_object[i].to_native());
    c.pred = CowVec::build_par(m, |i| a.c_pred[i].to_native());
    c.confidence = CowVec::build_par(m, |i| a.c_confidence[i].to_native());
    c.state = CowVec::build_par(m, |i| state_of(a.c_state[i]));
    c.flags = CowVec::build_par(m, |i| a.c_flags[i]);
    c.fast = BitCol::from_bits(a.c_flags.iter().map(|f| f & LIVE != 0 && f & TIMED == 0));
    c.timed_live = BitCol::from_bits(a.c_flags.iter().map(|f| f & LIVE != 0 && f & TIMED != 0));
    c.valid_from = CowVec::build_par(m, |i| ts(&a.c_valid_from[i]));
    c.valid_until = CowVec::build_par_sharing(m, Timestamp::MAX, |i| ts(&a.c_valid_until[i]));
    let (ext, text) = rayon::join(|| a.c_ext.to_strvec(), || a.c_text.to_strvec());
    (c.ext_id, c.text) = (ext, text);
    c.evidence_head = CowVec::build_par_sharing(m, NONE, |i| a.c_evidence_head[i].to_native());
    for p in a.c_recorded.iter() {
        c.recorded.note(p.0.to_native(), ts(&p.1));
    }
    c.updated_at = a.c_updated.iter().map(|p| (p.0.to_native(), ts(&p.1))).collect();
    c.expires_at = a.c_expires.iter().map(|p| (p.0.to_native(), ts(&p.1))).collect();
    c.superseded_by = a.c_superseded_by.iter().map(|p| (p.0.to_native(), p.1.to_native())).collect();
    c.last_event = a.c_last_event.iter().map(|p| (p.0.to_native(), p.1.to_native())).collect();
    c.events = CowVec::from_vec(
        a.c_events
            .iter()
            .map(|x| ClaimEvent { at: ts(&x.0), state_before: state_of(x.1), deleted_before: x.2, prev: x.3.to_native() })
            .collect(),
    );
    c.supersedes = a
        .c_supersedes
        .iter()
        .map(|p| (p.0.to_native(), Arc::from(p.1.iter().map(|x| ClaimId(x.to_native())).collect::<Vec<_>>())))
        .collect();
    // Evidence.
    let mut reasoning = added.map(|x| x.ev_reasoning.iter().map(|p| (p.0.to_native(), p.1.as_str())).peekable());
    let mut evidence_keys = Vec::with_capacity(a.evidence.len());
    for (i, r) in a.evidence.iter().enumerate() {
        let claim = r.claim.to_native();
        if claim as usize >= m {
            return Err(DecodeError("evidence names a missing claim"));
        }
        let row = EvidenceRow {
            claim: ClaimId(claim),
            ext_id: arc(&r.ext_id),
            conversation_id: arc(&r.conversation_id),
            message_id: arc(&r.message_id),
            model: arc(&r.model),
            model_version: arc(&r.model_version),
            raw_confidence: r.raw_confidence.as_ref().map(|x| x.to_native()),
            snippet: arc(&r.snippet),
            reasoning: reasoning.as_mut().and_then(|it| it.next_if(|(row, _)| *row as usize == i)).map(|(_, t)| Arc::from(t)),
            observed_at: ts(&r.observed_at),
            recorded_at: ts(&r.recorded_at),
            next: r.next.to_native(),
        };
        if let Some(ext) = &row.ext_id {
            evidence_keys.push((crate::index::keyindex::key_hash(st_claim_ws(&st.entities, &st.claims, claim), ext), i as u32));
        }
        st.evidence.rows.push(row);
    }
    st.evidence.by_ext = KeyIndex::from_pairs(evidence_keys);
    if reasoning.is_some_and(|mut it| it.next().is_some()) {
        return Err(DecodeError("evidence reasoning names a missing or unordered evidence row"));
    }
    if let Some(added) = added {
        decode_merges(&mut st.entities, &added.merges, m)?;
    }
    st.settings = Arc::new(crate::settings::Settings::decode(&a.settings).ok_or(DecodeError("settings do not decode"))?);
    // Bitmaps are rebuilt; the key indexes and the CSR are read back (checked, in parallel).
    let (bitmaps, (keys, graph)) =
        rayon::join(|| crate::state::rowsets::bitmaps_of(&st), || rayon::join(|| archived_keys(&a.keys), || archived_graph(&a.csr, &st)));
    let [by_ext, by_name, claim_by_ext] = keys?;
    Indexes { by_ext, by_name, claim_by_ext, bitmaps }.install(&mut st);
    st.graph = graph?;
    Ok((st, (a.wal_from.0.to_native(), a.wal_from.1.to_native())))
}

/// The merge history, checked against the tables; the standing merges are indexed.
fn decode_merges(e: &mut crate::state::Entities, rows: &[ArchivedMergeRowV2], claims: usize) -> Result<(), DecodeError> {
    let n = e.len() as u32;
    for (i, r) in rows.iter().enumerate() {
        let (from, into) = (r.from.to_native(), r.into.to_native());
        if from >= n || into >= n || r.claims.iter().any(|c| c.0.to_native() as usize >= claims) {
            return Err(DecodeError("an entity merge names a missing entity or claim"));
        }
        let undone_at = ts(&r.undone_at);
        if undone_at == Timestamp::MAX {
            e.merged.insert(from, i as u32);
        }
        e.merges.push(crate::state::MergeRecord {
            from,
            into,
            at: ts(&r.at),
            undone_at,
            claims: r.claims.iter().map(|c| (c.0.to_native(), c.1)).collect(),
            aliases: r.aliases.iter().map(|a| Arc::from(a.as_str())).collect(),
        });
    }
    Ok(())
}

/// A stored state byte (checked to be 0..=2 before use).
fn state_of(b: u8) -> ClaimState {
    ClaimState::ALL[usize::from(b.min(2))]
}

fn st_claim_ws(e: &crate::state::Entities, c: &crate::state::Claims, claim: u32) -> WorkspaceId {
    *e.ws.get(*c.subject.get(claim as usize) as usize)
}

/// The three key indexes from the archive, checked to be sorted.
fn archived_keys(keys: &[rkyv::vec::ArchivedVec<rkyv::rend::u64_le>; 3]) -> Result<[KeyIndex; 3], DecodeError> {
    let read = |v: &rkyv::vec::ArchivedVec<rkyv::rend::u64_le>| -> Result<KeyIndex, DecodeError> {
        let keys: Vec<u64> = v.as_slice().par_iter().map(|k| k.to_native()).collect();
        if !keys.par_windows(2).all(|w| w[0] < w[1]) {
            return Err(DecodeError("a key index is not sorted"));
        }
        Ok(KeyIndex::from_sorted_keys(keys))
    };
    Ok([read(&keys[0])?, read(&keys[1])?, read(&keys[2])?])
}

/// The base CSR from the archive, checked against the columns; the delta is empty and the dirty
/// set holds the endpoints of time-bounded claims, as after a fresh build.
fn archived_graph(csr: &rkyv::vec::ArchivedVec<ArchivedCsrV1>, st: &State) -> Result<crate::index::graph::Graph, DecodeError> {
    let (n, m) = (st.entities.len(), st.claims.len());
    if csr.len() != 2 {
        return Err(DecodeError("the snapshot does not hold two CSR directions"));
    }
    let read = |c: &ArchivedCsrV1| -> Result<crate::index::graph::csr::Csr, DecodeError> {
        let offsets: Vec<u32> = c.offsets.as_slice().par_iter().map(|x| x.to_native()).collect();
        let preds: Vec<u16> = c.preds.as_slice().par_iter().map(|x| x.to_native()).collect();
        let nbrs: Vec<u32> = c.nbrs.as_slice().par_iter().map(|x| x.to_native()).collect();
        let claims: Vec<u32> = c.claims.as_slice().par_iter().map(|x| x.to_native()).collect();
        if offsets.is_empty() && nbrs.is_empty() && m == 0 {
            return Ok(crate::index::graph::csr::Csr::default());
        }
        // Entities created after the base was built have no base edges: the offsets may stop short.
        let in_range = offsets.len() <= n + 1
            && nbrs.len() == m
            && nbrs.par_iter().all(|v| (crate::index::graph::csr::nbr_id(*v) as usize) < n)
            && claims.par_iter().all(|c| (*c as usize) < m);
        if !in_range {
            return Err(DecodeError("the stored CSR does not match the claim columns"));
        }
        crate::index::graph::csr::Csr::from_parts(offsets, preds, nbrs, claims).ok_or(DecodeError("the stored CSR is inconsistent"))
    };
    let (out, inn) = rayon::join(|| read(&csr[0]), || read(&csr[1]));
    let subjects: Vec<u32> = st.claims.subject.iter().copied().collect();
    let preds: Vec<u16> = st.claims.pred.iter().copied().collect();
    let objects: Vec<u32> = st.claims.object.iter().copied().collect();
    let fast = st.claims.fast.flatten();
    let base = crate::index::graph::base_from_csr(
        out?,
        inn?,
        &subjects,
        &preds,
        &objects,
        &|c| crate::state::FlatFilter::bit(&fast, c),
        &st.catalog.transitive_predicates(),
    );
    let dirty = crate::index::graph::initial_dirty(n, st.timed_live_endpoints(m).into_iter());
    Ok(crate::index::graph::Graph::new(base, m as u32, dirty))
}

/// Key indexes and bitmaps recomputed from the columns (erased rows are left out).
struct Indexes {
    by_ext: KeyIndex,
    by_name: KeyIndex,
    claim_by_ext: KeyIndex,
    bitmaps: crate::state::Bitmaps,
}

impl Indexes {
    fn install(self, st: &mut State) {
        st.entities.by_ext = self.by_ext;
        st.entities.by_name = self.by_name;
        st.claims.by_ext = self.claim_by_ext;
        st.bitmaps = self.bitmaps;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Database;
    use crate::ids::ClaimId;
    use crate::index::bitmap::IdSet;
    use crate::write::batch::{AddClaim, ForgetTarget, Op, WriteBatch};
    use proptest::prelude::*;

    fn ids(s: &IdSet) -> Vec<u32> {
        s.iter().collect()
    }

    /// The non-empty sets of a map, by key, as sorted lists.
    fn sets<K: Ord + Copy + std::hash::Hash + Eq>(m: &crate::pmap::PMap<K, IdSet>) -> Vec<(K, Vec<u32>)> {
        let mut v: Vec<(K, Vec<u32>)> = m.iter().map(|(k, s)| (*k, ids(s))).filter(|(_, s)| !s.is_empty()).collect();
        v.sort_unstable_by_key(|p| p.0);
        v
    }

    /// Rows that name a predicate, type or workspace the catalog lacks are refused by name
    /// (the bitmaps are built per catalog entry), not indexed out of range.
    #[test]
    fn rows_naming_unknown_vocabulary_are_refused() {
        let db = Database::in_memory();
        let mut w = WriteBatch::new("default");
        w.upsert_entity("a", "t", "A");
        w.upsert_entity("b", "t", "B");
        w.add_claim(AddClaim::new("a", "p", "b"));
        db.write(&w).unwrap();
        let st = db.snapshot().state;
        let encode = |corrupt: &dyn Fn(&mut SnapshotV1)| {
            let mut snap = capture(&st, (0, 0));
            corrupt(&mut snap.v3.v2.base);
            let mut body = Vec::new();
            write_body(&snap, &mut body).unwrap();
            body
        };
        assert!(decode(&encode(&|_| {}), 7).is_ok());
        let predicate = |s: &mut SnapshotV1| s.c_pred[0] = 999;
        let ty = |s: &mut SnapshotV1| s.e_ty[0] = 999;
        let workspace = |s: &mut SnapshotV1| s.e_ws[0] = 999;
        for (what, corrupt) in [("predicate", &predicate as &dyn Fn(&mut SnapshotV1)), ("type", &ty), ("workspace", &workspace)] {
            let err = decode(&encode(corrupt), 7).err().unwrap_or_else(|| panic!("a bad {what} id decoded"));
            assert_eq!(err.0, "a row names an unknown predicate, type or workspace", "{what}");
        }
    }

    /// Writes a random history over two workspaces (lifecycle moves, deletes, restores, forgets)
    /// to `db`; calls `between(i)` before the `i`-th operation.
    fn random_history(db: &Database, ops: Vec<(u8, u32, u32)>, mut between: impl FnMut(usize)) {
        db.create_workspace("other").unwrap();
        let mut claims: Vec<(&str, ClaimId)> = Vec::new();
        for (i, (op, a, b)) in ops.into_iter().enumerate() {
            between(i);
            let ws = if a % 3 == 0 { "other" } else { "default" };
            let mut w = WriteBatch::new(ws);
            match op {
                0 | 1 => {
                    w.upsert_entity(&format!("e{a}"), ["t0", "t1", "t2"][(b % 3) as usize], &format!("E {a}"));
                }
                2 | 3 => {
                    w.upsert_entity(&format!("e{a}"), "t0", &format!("E {a}"));
                    w.upsert_entity(&format!("e{b}"), "t1", &format!("E {b}"));
                    w.add_claim(AddClaim::new(
                        format!("e{a}").as_str(),
                        ["p0", "p1", "p2", "p3"][(b % 4) as usize],
                        format!("e{b}").as_str(),
                    ));
                }
                9 => {
                    // A bulk load (once) into a workspace of its own; its claims join the ones
                    // later operations move, delete and forget.
                    if db.create_workspace("bulk").is_ok() {
                        claims.extend(bulk_into(db, "bulk").into_iter().map(|c| ("bulk", c)));
                    }
                    continue;
                }
                _ if claims.is_empty() => continue,
                4 => {
                    let (ws, c) = claims[(a as usize) % claims.len()];
                    w = WriteBatch::new(ws);
                    w.push(if b % 2 == 0 {
                        Op::AcceptClaim { claim: c.into() }
                    } else {
                        Op::Deprecate { claim: c.into(), superseded_by: None }
                    });
                }
                5 => {
                    let (ws, c) = claims[(a as usize) % claims.len()];
                    w = WriteBatch::new(ws);
                    w.push(if b % 2 == 0 { Op::DeleteClaim { claim: c.into() } } else { Op::RestoreClaim { claim: c.into() } });
                }
                6 => {
                    w.push(if b % 2 == 0 {
                        Op::DeleteEntity { entity: format!("e{a}").into() }
                    } else {
                        Op::RestoreEntity { entity: format!("e{a}").into() }
                    });
                }
                7 => {
                    // A claim and its endpoints created and changed in the same batch as a forget.
                    w.upsert_entity(&format!("e{b}"), "t2", &format!("E {b}"));
                    w.add_claim(AddClaim::new(format!("e{b}").as_str(), "p0", format!("e{b}").as_str()));
                    w.push(Op::Forget(ForgetTarget::Entity(format!("e{a}").into())));
                    w.push(Op::DeleteEntity { entity: format!("e{b}").into() });
                }
                _ if b % 2 == 0 => {
                    w.push(Op::Forget(ForgetTarget::Entity(format!("e{a}").into())));
                }
                _ => {
                    // Reads the workspace's claim set: every soft-deleted claim is erased.
                    w.push(Op::Forget(ForgetTarget::History { before: Timestamp::MAX }));
                }
            }
            // Operations on rows that do not exist (or are gone) fail and change nothing.
            if let Ok(info) = db.write(&w) {
                claims.extend(info.created.claims.iter().map(|&c| (ws, c)));
            }
        }
    }

    /// Bulk-loads three entities and three claims (one deprecated, one accepted) into `ws`.
    fn bulk_into(db: &Database, ws: &str) -> Vec<ClaimId> {
        let ents = b"id,type,name,aliases\nb0,t0,B0,\nb1,t1,B1,bee\nb2,t0,B2,\n";
        let entities = crate::io::csv::parse_entities(ents, "e.csv").unwrap();
        let index = crate::io::csv::EntityIndex::new(&entities, "e.csv").unwrap();
        let rows = b"id,subject,predicate,object,confidence,state,valid_from\nk0,b0,p0,b1,0.9,PROPOSED,1\nk1,b1,p1,b2,0.5,ACCEPTED,1\nk2,b2,p0,b0,0.7,DEPRECATED,1\n";
        let claims = crate::io::csv::parse_claims(rows, "c.csv", &index).unwrap();
        drop(index);
        let load = crate::BulkLoad { workspace: ws.into(), predicates: Vec::new(), entities, claims };
        let info = db.bulk_load(&load).unwrap();
        (0..info.claims as u32).map(|k| ClaimId(info.first_claim.0 + k)).collect()
    }

    /// Asserts that two families of bitmaps hold the same sets.
    fn assert_same_bitmaps(got: &crate::state::Bitmaps, want: &crate::state::Bitmaps) -> Result<(), TestCaseError> {
        for k in 0..3 {
            prop_assert_eq!(ids(&got.claims_by_state[k]), ids(&want.claims_by_state[k]));
        }
        prop_assert_eq!(ids(&got.claims_deleted), ids(&want.claims_deleted));
        prop_assert_eq!(ids(&got.claims_sensitive), ids(&want.claims_sensitive));
        prop_assert_eq!(ids(&got.claims_live), ids(&want.claims_live));
        prop_assert_eq!(ids(&got.entities_deleted), ids(&want.entities_deleted));
        prop_assert_eq!(sets(&got.claims_by_ws), sets(&want.claims_by_ws));
        prop_assert_eq!(sets(&got.claims_by_pred), sets(&want.claims_by_pred));
        prop_assert_eq!(sets(&got.entities_by_ws), sets(&want.entities_by_ws));
        prop_assert_eq!(sets(&got.entities_by_type), sets(&want.entities_by_type));
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// The bitmaps rebuilt from the columns on load equal the ones the write path maintained,
        /// after a random history.
        #[test]
        fn rebuilt_bitmaps_equal_the_maintained_ones(ops in proptest::collection::vec((0u8..10, 0u32..40, 0u32..40), 1..120)) {
            let db = Database::in_memory();
            random_history(&db, ops, |_| {});
            let st = db.snapshot().state;
            assert_same_bitmaps(&crate::state::rowsets::bitmaps_of(&st), &st.bitmaps)?;
        }

        /// A replay defers the bitmaps of the rows it adds (catching up before each forget) and
        /// ends with the sets the write path maintained, whether the log starts empty or after a
        /// checkpoint taken anywhere in the history.
        #[test]
        fn replayed_bitmaps_equal_the_maintained_ones(
            ops in proptest::collection::vec((0u8..10, 0u32..40, 0u32..40), 1..120),
            checkpoint_at in proptest::option::of(0usize..120),
        ) {
            let vfs = engram_storage::MemVfs::new();
            let dir = std::path::Path::new("/db");
            let open = || Database::open_with(dir, crate::Config::default(), Arc::new(vfs.clone())).unwrap();
            let db = open();
            random_history(&db, ops, |i| {
                if Some(i) == checkpoint_at {
                    db.checkpoint().unwrap();
                }
            });
            let want = db.snapshot().state;
            db.wait_for_merge();
            drop(db);
            let got = open().snapshot().state;
            prop_assert_eq!(got.bitmaps_from, None);
            assert_same_bitmaps(&got.bitmaps, &want.bitmaps)?;
        }
    }
}
