//! Keyword search: a BM25 inverted index over claim texts (one kind) and entity names with their
//! aliases (the other).
//!
//! An index is a *base* built from the columns as they stood at open or after a bulk load — built
//! lazily, on rayon, by the first query that needs it, from column copies captured at rebase time
//! (copy-on-write, so capturing is free and the build sees exactly those rows) — plus a persistent
//! *delta* of documents indexed since, kept in step with every commit. A document re-indexed after
//! the rebase (a renamed entity) marks its base postings stale; one re-indexed again inside the
//! delta bumps its generation, and postings of older generations are skipped.
//!
//! Statistics (document count, average length, document frequency) are per workspace, so one
//! workspace's text never shifts another's ranking. They count every indexed document of the
//! workspace; visibility (deprecated, deleted, expired) filters the results, not the statistics.

use crate::ids::WorkspaceId;
use crate::index::cow::CowVec;
use crate::index::keyindex::{key_hash, KeyIndex};
use crate::index::runs::Runs;
use crate::index::strvec::{StrVec, ALIAS_SEP};
use crate::index::text::term_counts;
use rayon::prelude::*;
use std::collections::HashMap as StdHashMap;

/// Term dictionaries hash with foldhash: terms are short and plentiful, and `SipHash`'s flood
/// resistance buys nothing for an index the database builds from its own rows. (xxh3's
/// streaming `Hasher` was a tenth of a reopen: it buffers every write.) A fixed seed keeps the
/// dictionaries' order, and so what a checkpoint writes, the same from run to run.
type HashMap<K, V> = StdHashMap<K, V, foldhash::fast::FixedState>;
use std::sync::{Arc, OnceLock};

/// BM25 term-frequency saturation.
pub const K1: f32 = 1.2;
/// BM25 length normalisation: lighter than the textbook 0.75. Claims are short facts, and a
/// longer one usually says more rather than repeats itself; on conversational recall (`engram
/// replay`, the `LoCoMo` dev set) 0.75 → 0.4 moved R@10 0.607 → 0.628 (`bench/README.md`).
pub const B: f32 = 0.4;

/// What the base documents are made of, captured at rebase.
#[derive(Clone, Debug, Default)]
enum Source {
    #[default]
    Empty,
    /// Claim texts; a claim's workspace is its subject's.
    Claims { text: StrVec, subject: CowVec<u32>, entity_ws: CowVec<WorkspaceId> },
    /// Entity names and aliases.
    Entities { name: StrVec, aliases: StrVec, ws: CowVec<WorkspaceId> },
    /// Free texts of one workspace (derived documents such as concept profiles).
    Texts { texts: Arc<Vec<String>>, ws: WorkspaceId },
}

impl Source {
    fn doc(&self, d: usize, out: &mut String) -> WorkspaceId {
        out.clear();
        match self {
            Source::Empty => WorkspaceId(0),
            Source::Claims { text, subject, entity_ws } => {
                out.push_str(text.get(d));
                *entity_ws.get(*subject.get(d) as usize)
            }
            Source::Entities { name, aliases, ws } => {
                out.push_str(name.get(d));
                out.push(ALIAS_SEP);
                out.push_str(aliases.get(d));
                *ws.get(d)
            }
            Source::Texts { texts, ws } => {
                out.push_str(&texts[d]);
                *ws
            }
        }
    }
}

/// The built base: postings in CSR form.
#[derive(Debug, Default)]
struct Built {
    terms: HashMap<Box<str>, u32>,
    offsets: Vec<u32>,
    postings: Vec<(u32, u32)>,
    doc_len: Vec<u32>,
    doc_ws: Vec<WorkspaceId>,
    stats: HashMap<WorkspaceId, (u64, u64)>,
}

#[derive(Debug, Default)]
struct Base {
    source: Source,
    upto: u32,
    built: OnceLock<Built>,
}

impl Base {
    fn built(&self) -> &Built {
        self.built.get_or_init(|| build(&self.source, self.upto as usize))
    }
}

/// Documents per build chunk: each chunk interns its terms locally, on its own core.
const BUILD_CHUNK: usize = 16_384;

/// One chunk's share of a build: its local dictionary and postings by local term id.
struct Chunk {
    terms: Vec<String>,
    /// (local term, doc, tf), in doc order.
    postings: Vec<(u32, u32, u32)>,
    doc_len: Vec<u32>,
    doc_ws: Vec<WorkspaceId>,
}

/// Builds a base: chunks tokenize and intern locally in parallel, local dictionaries merge into
/// one, and a counting sort by term lays the postings out as CSR (doc order kept, since chunks are
/// in doc order). No step hashes a term more than once per chunk.
fn build(source: &Source, upto: usize) -> Built {
    let chunks: Vec<Chunk> = (0..upto.div_ceil(BUILD_CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut local: HashMap<String, u32> = HashMap::default();
            let mut chunk = Chunk { terms: Vec::new(), postings: Vec::new(), doc_len: Vec::new(), doc_ws: Vec::new() };
            let mut buf = String::new();
            for d in c * BUILD_CHUNK..((c + 1) * BUILD_CHUNK).min(upto) {
                let ws = source.doc(d, &mut buf);
                let tc = term_counts(&buf);
                chunk.doc_len.push(tc.iter().map(|(_, n)| n).sum());
                chunk.doc_ws.push(ws);
                for (t, n) in tc {
                    let id = match local.get(&t) {
                        Some(id) => *id,
                        None => {
                            let id = chunk.terms.len() as u32;
                            chunk.terms.push(t.clone());
                            local.insert(t, id);
                            id
                        }
                    };
                    chunk.postings.push((id, d as u32, n));
                }
            }
            chunk
        })
        .collect();
    let mut terms: HashMap<Box<str>, u32> = HashMap::default();
    let remaps: Vec<Vec<u32>> = chunks
        .iter()
        .map(|ch| {
            ch.terms
                .iter()
                .map(|t| {
                    let next = terms.len() as u32;
                    *terms.entry(t.as_str().into()).or_insert(next)
                })
                .collect()
        })
        .collect();
    let mut counts = vec![0u32; terms.len()];
    for (ch, remap) in chunks.iter().zip(&remaps) {
        for p in &ch.postings {
            counts[remap[p.0 as usize] as usize] += 1;
        }
    }
    let mut offsets = Vec::with_capacity(counts.len() + 1);
    let mut at = 0u32;
    offsets.push(0);
    for c in &counts {
        at += c;
        offsets.push(at);
    }
    let mut fill = offsets[..counts.len()].to_vec();
    let mut postings = vec![(0u32, 0u32); at as usize];
    let mut doc_len = Vec::with_capacity(upto);
    let mut doc_ws = Vec::with_capacity(upto);
    for (ch, remap) in chunks.into_iter().zip(&remaps) {
        for (t, d, n) in ch.postings {
            let id = remap[t as usize] as usize;
            postings[fill[id] as usize] = (d, n);
            fill[id] += 1;
        }
        doc_len.extend(ch.doc_len);
        doc_ws.extend(ch.doc_ws);
    }
    let mut stats: HashMap<WorkspaceId, (u64, u64)> = HashMap::default();
    for (len, ws) in doc_len.iter().zip(&doc_ws) {
        if *len > 0 {
            let s = stats.entry(*ws).or_default();
            s.0 += 1;
            s.1 += u64::from(*len);
        }
    }
    Built { terms, offsets, postings, doc_len, doc_ws, stats }
}

/// A built base in a serializable form (the `.text` file written beside each snapshot).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct PersistedBase {
    /// Documents covered (`0..upto`).
    pub upto: u32,
    /// Terms by term id.
    pub terms: Vec<String>,
    /// CSR offsets into `postings`, one per term plus one.
    pub offsets: Vec<u32>,
    /// (doc, term frequency), ascending by doc within a term.
    pub postings: Vec<(u32, u32)>,
    /// Terms per document.
    pub doc_len: Vec<u32>,
    /// Workspace per document.
    pub doc_ws: Vec<u32>,
}

/// A persisted base checked and turned into its in-memory form, ready to install
/// (`TextIndex::restore`); prepared apart so that loading can overlap it with other work.
pub struct RestoredBase {
    upto: u32,
    built: Built,
}

impl PersistedBase {
    /// Checks the base and builds its in-memory form (the term table).
    pub fn prepare(self) -> Result<RestoredBase, &'static str> {
        self.validate()?;
        Ok(RestoredBase { upto: self.upto, built: Built::restore(self) })
    }

    /// Checks the internal consistency a decoder cannot (lengths, bounds, order), so a loaded
    /// index can never index out of range.
    fn validate(&self) -> Result<(), &'static str> {
        let docs = self.upto as usize;
        if self.doc_len.len() != docs || self.doc_ws.len() != docs {
            return Err("text index: document columns do not match its document count");
        }
        if self.offsets.len() != self.terms.len() + 1 || self.offsets.first() != Some(&0) {
            return Err("text index: term offsets do not match its terms");
        }
        if self.offsets.windows(2).any(|w| w[0] > w[1]) || self.offsets.last().map(|o| *o as usize) != Some(self.postings.len()) {
            return Err("text index: term offsets are not ascending or do not end at the postings");
        }
        for w in self.offsets.windows(2) {
            let list = &self.postings[w[0] as usize..w[1] as usize];
            if list.iter().any(|p| p.0 as usize >= docs) || list.windows(2).any(|x| x[0].0 >= x[1].0) {
                return Err("text index: a posting list is out of range or not ascending");
            }
        }
        Ok(())
    }
}

impl Built {
    fn persist(&self, upto: u32) -> PersistedBase {
        let mut terms = vec![String::new(); self.terms.len()];
        for (t, id) in &self.terms {
            terms[*id as usize] = t.to_string();
        }
        PersistedBase {
            upto,
            terms,
            offsets: self.offsets.clone(),
            postings: self.postings.clone(),
            doc_len: self.doc_len.clone(),
            doc_ws: self.doc_ws.iter().map(|w| w.0).collect(),
        }
    }

    fn restore(p: PersistedBase) -> Built {
        let mut stats: HashMap<WorkspaceId, (u64, u64)> = HashMap::default();
        for (len, ws) in p.doc_len.iter().zip(&p.doc_ws) {
            if *len > 0 {
                let s = stats.entry(WorkspaceId(*ws)).or_default();
                s.0 += 1;
                s.1 += u64::from(*len);
            }
        }
        Built {
            terms: p.terms.into_iter().enumerate().map(|(i, t)| (t.into_boxed_str(), i as u32)).collect(),
            offsets: p.offsets,
            postings: p.postings,
            doc_len: p.doc_len,
            doc_ws: p.doc_ws.into_iter().map(WorkspaceId).collect(),
            stats,
        }
    }
}

fn term_hash(term: &str) -> u32 {
    key_hash(WorkspaceId(0), term)
}

/// A document indexed since the rebase. `len` 0 marks one indexed empty (erased, or a text
/// removed): it keeps its generation so older postings stay dead.
#[derive(Clone, Copy, Debug)]
struct DeltaDoc {
    len: u32,
    ws: WorkspaceId,
    generation: u32,
}

/// Fills the rows of documents never indexed (a claim without text).
const NOT_INDEXED: DeltaDoc = DeltaDoc { len: 0, ws: WorkspaceId(0), generation: 0 };

/// One delta posting; ordered by term, then document, so a term's postings are one range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Posting {
    term: u32,
    doc: u32,
    tf: u32,
    generation: u32,
}

/// Delta postings: written by every commit, read only by queries, so merged by the tiered
/// policy (each posting copied once per level, not `FANOUT/2` times).
#[derive(Clone, Debug)]
struct DeltaPostings(Runs<Posting>);

impl Default for DeltaPostings {
    fn default() -> Self {
        DeltaPostings(Runs::tiered())
    }
}

/// One inverted index (claims or entities).
#[derive(Clone, Debug, Default)]
pub struct TextIndex {
    base: Arc<Base>,
    /// Delta term → candidate ids by hash (verified against `term_text`). Only a new word writes
    /// here, and then only a tail (see `runs`), not a path of map nodes.
    terms: KeyIndex,
    /// Delta terms by id.
    term_text: StrVec,
    /// Postings of delta documents, superseded generations included (skipped when read).
    delta: DeltaPostings,
    /// Delta documents from the base's `upto` on, by `doc - upto` (row ids are dense).
    fresh: CowVec<DeltaDoc>,
    /// Base documents re-indexed since the rebase.
    rewritten: crate::pmap::PMap<u32, DeltaDoc>,
    /// Base documents whose base postings no longer apply.
    stale: crate::pmap::PSet<u32>,
    /// Per workspace: delta documents and their total length.
    delta_stats: crate::pmap::PMap<WorkspaceId, (u64, u64)>,
}

/// A scored document.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Claim or entity id.
    pub doc: u32,
    /// BM25 score.
    pub score: f32,
}

impl TextIndex {
    /// An index whose base is the claim texts `0..upto` (built on first use).
    pub fn over_claims(text: &StrVec, subject: &CowVec<u32>, entity_ws: &CowVec<WorkspaceId>, upto: usize) -> TextIndex {
        let source = Source::Claims { text: text.clone(), subject: subject.clone(), entity_ws: entity_ws.clone() };
        TextIndex { base: Arc::new(Base { source, upto: upto as u32, built: OnceLock::new() }), ..TextIndex::default() }
    }

    /// An index whose base is the entity names and aliases `0..upto` (built on first use).
    pub fn over_entities(name: &StrVec, aliases: &StrVec, ws: &CowVec<WorkspaceId>, upto: usize) -> TextIndex {
        let source = Source::Entities { name: name.clone(), aliases: aliases.clone(), ws: ws.clone() };
        TextIndex { base: Arc::new(Base { source, upto: upto as u32, built: OnceLock::new() }), ..TextIndex::default() }
    }

    /// An index whose base is `texts` (document `i` is `texts[i]`), all of workspace `ws`, built
    /// on first use; later documents go to the delta through [`TextIndex::index`].
    pub fn over_texts(texts: Vec<String>, ws: WorkspaceId) -> TextIndex {
        let upto = texts.len() as u32;
        let source = Source::Texts { texts: Arc::new(texts), ws };
        TextIndex { base: Arc::new(Base { source, upto, built: OnceLock::new() }), ..TextIndex::default() }
    }

    /// The delta's id of `term`.
    fn term_id(&self, term: &str) -> Option<u32> {
        self.terms.find(term_hash(term), |id| self.term_text.get(id as usize) == term)
    }

    /// The delta's record of document `doc`, if it was indexed since the rebase.
    fn delta_doc(&self, doc: u32) -> Option<&DeltaDoc> {
        match doc.checked_sub(self.base.upto) {
            Some(i) => self.fresh.try_get(i as usize),
            None => self.rewritten.get(&doc),
        }
    }

    fn set_delta_doc(&mut self, doc: u32, d: DeltaDoc) {
        match doc.checked_sub(self.base.upto) {
            Some(i) => {
                let i = i as usize;
                while self.fresh.len() <= i {
                    self.fresh.push(NOT_INDEXED);
                }
                self.fresh.set(i, d);
            }
            None => {
                self.rewritten.insert(doc, d);
            }
        }
    }

    /// (Re-)indexes document `doc` of workspace `ws` with `text`, replacing what it held.
    pub fn index(&mut self, doc: u32, ws: WorkspaceId, text: &str) {
        if doc < self.base.upto {
            self.stale.insert(doc);
        }
        let generation = match self.delta_doc(doc).copied() {
            Some(old) => {
                if old.len > 0 {
                    let s = self.delta_stats.entry(old.ws).or_default();
                    s.0 -= 1;
                    s.1 -= u64::from(old.len);
                }
                old.generation + 1
            }
            None => 0,
        };
        let tc = term_counts(text);
        let len: u32 = tc.iter().map(|(_, n)| n).sum();
        self.set_delta_doc(doc, DeltaDoc { len, ws, generation });
        if len == 0 {
            return;
        }
        let s = self.delta_stats.entry(ws).or_default();
        s.0 += 1;
        s.1 += u64::from(len);
        for (t, tf) in tc {
            let term = match self.term_id(&t) {
                Some(id) => id,
                None => {
                    let id = self.term_text.len() as u32;
                    self.terms.insert(term_hash(&t), id);
                    self.term_text.push(&t);
                    id
                }
            };
            self.delta.0.push(Posting { term, doc, tf, generation });
        }
    }

    /// Forces the lazy base build (after an open, so the first query does not pay for it).
    pub fn prepare(&self) {
        self.base.built();
    }

    /// Whether the base is built (loaded from a checkpoint, or built by an earlier query).
    pub fn is_built(&self) -> bool {
        self.base.built.get().is_some()
    }

    /// The base in serializable form, when this index is exactly its base (no delta, nothing
    /// stale): what a checkpoint persists.
    pub fn persist(&self) -> Option<PersistedBase> {
        self.is_base_only().then(|| self.base.built().persist(self.base.upto))
    }

    /// Installs a persisted base, which must cover exactly this index's base documents.
    pub fn restore(&mut self, p: RestoredBase) -> Result<(), &'static str> {
        if p.upto != self.base.upto || !self.is_base_only() {
            return Err("text index: covers a different number of documents than its snapshot");
        }
        let base = Base { source: self.base.source.clone(), upto: self.base.upto, built: OnceLock::new() };
        let _ = base.built.set(p.built);
        self.base = Arc::new(base);
        Ok(())
    }

    /// True when nothing was indexed since the rebase but empty documents past the base.
    fn is_base_only(&self) -> bool {
        self.delta.0.is_empty() && self.rewritten.is_empty() && self.stale.is_empty()
    }

    /// Documents and total length of workspace `ws`.
    fn stats(&self, ws: WorkspaceId) -> (u64, u64) {
        let b = self.base.built();
        let (mut n, mut len) = b.stats.get(&ws).copied().unwrap_or_default();
        for s in &self.stale {
            let i = *s as usize;
            if b.doc_ws[i] == ws && b.doc_len[i] > 0 {
                n -= 1;
                len -= u64::from(b.doc_len[i]);
            }
        }
        let (dn, dl) = self.delta_stats.get(&ws).copied().unwrap_or_default();
        (n + dn, len + dl)
    }

    /// The workspace and length of document `doc` as the index holds it now (`None`: not
    /// indexed, or indexed empty).
    fn doc_len(&self, doc: u32) -> Option<(WorkspaceId, u32)> {
        if let Some(d) = self.delta_doc(doc) {
            return (d.len > 0).then_some((d.ws, d.len));
        }
        let b = self.base.built();
        let i = doc as usize;
        (i < b.doc_len.len() && b.doc_len[i] > 0 && !self.stale.contains(&doc)).then(|| (b.doc_ws[i], b.doc_len[i]))
    }

    /// The postings of `term` in workspace `ws`, as (doc, term frequency, document length),
    /// ascending by doc.
    fn postings(&self, term: &str, ws: WorkspaceId) -> Vec<(u32, u32, u32)> {
        let b = self.base.built();
        let mut out = Vec::new();
        if let Some(&t) = b.terms.get(term) {
            for &(d, n) in &b.postings[b.offsets[t as usize] as usize..b.offsets[t as usize + 1] as usize] {
                if b.doc_ws[d as usize] == ws && (self.stale.is_empty() || !self.stale.contains(&d)) {
                    out.push((d, n, b.doc_len[d as usize]));
                }
            }
        }
        if let Some(term) = self.term_id(term) {
            let from = out.len();
            let (lo, hi) =
                (Posting { term, doc: 0, tf: 0, generation: 0 }, Posting { term, doc: u32::MAX, tf: u32::MAX, generation: u32::MAX });
            self.delta.0.for_each_in(&lo, &hi, |p| {
                if let Some(doc) = self.delta_doc(p.doc) {
                    if doc.generation == p.generation && doc.ws == ws && doc.len > 0 {
                        out.push((p.doc, p.tf, doc.len));
                    }
                }
            });
            out[from..].sort_unstable_by_key(|p| p.0);
            // Re-indexed base documents sit in the delta with ids below the base's: merge the runs.
            if from > 0 && from < out.len() && out[from].0 < out[from - 1].0 {
                let (base, delta) = out.split_at(from);
                let mut merged = Vec::with_capacity(out.len());
                let (mut i, mut j) = (0, 0);
                while i < base.len() || j < delta.len() {
                    if j == delta.len() || (i < base.len() && base[i].0 < delta[j].0) {
                        merged.push(base[i]);
                        i += 1;
                    } else {
                        merged.push(delta[j]);
                        j += 1;
                    }
                }
                out = merged;
            }
        }
        out
    }

    /// What a reader with `hidden` documents and `replaced` ones sees of workspace `ws`: the
    /// documents whose indexed postings it must skip (hidden and replaced, ascending), the replaced
    /// documents the index holds there and not hidden (their replacement enters; the others' clear
    /// text leaves), and its document count and total length.
    fn reader_stats<'r>(&self, ws: WorkspaceId, hidden: &[u32], replaced: &'r [Replaced]) -> (Vec<u32>, Vec<&'r Replaced>, u64, u64) {
        let replaced: Vec<&Replaced> = replaced
            .iter()
            .filter(|r| hidden.binary_search(&r.doc).is_err() && self.doc_len(r.doc).is_some_and(|(w, _)| w == ws))
            .collect();
        let mut gone: Vec<u32> = hidden.to_vec();
        if !replaced.is_empty() {
            gone.extend(replaced.iter().map(|r| r.doc));
            gone.sort_unstable();
            gone.dedup();
        }
        let (mut n, mut total) = self.stats(ws);
        for &d in &gone {
            if let Some((w, len)) = self.doc_len(d) {
                if w == ws {
                    n -= 1;
                    total -= u64::from(len);
                }
            }
        }
        for r in replaced.iter().filter(|r| r.len > 0) {
            n += 1;
            total += u64::from(r.len);
        }
        (gone, replaced, n, total)
    }

    /// The best `k` documents of workspace `ws` for `query` that pass `accept`, by BM25
    /// (ties: lower id first).
    ///
    /// Document-at-a-time with `MaxScore` pruning: each term's postings carry their score
    /// contribution, and a term's largest contribution bounds what it can add. Once the k-th best
    /// score exceeds the summed bounds of the weakest terms, documents holding only those terms
    /// cannot enter, so those lists are only probed for documents the others produce. Exact.
    ///
    /// `hidden` (ascending) are documents that do not exist for this reader: they are left out
    /// of the statistics (documents, lengths, document frequencies) as well as the results, so a
    /// word only they hold moves no score.
    pub fn search(&self, query: &str, ws: WorkspaceId, k: usize, hidden: &[u32], accept: impl Fn(u32) -> bool) -> Vec<Hit> {
        self.search_until(query, ws, k, hidden, accept, &|| false)
    }

    /// `search` that asks `stop` every `STOP_EVERY` documents walked and, when it says so, ends
    /// early with what it holds (the caller discards it: a deadline passed).
    pub fn search_until(
        &self,
        query: &str,
        ws: WorkspaceId,
        k: usize,
        hidden: &[u32],
        accept: impl Fn(u32) -> bool,
        stop: &dyn Fn() -> bool,
    ) -> Vec<Hit> {
        self.search_replaced(query, ws, k, hidden, &[], accept, stop)
    }

    /// `search_until` for a reader that sees the documents of `replaced` (ascending by doc) with
    /// other texts (masked claims): the index is read as if it held those texts instead, in its
    /// statistics as in its scores. A replaced document that is also hidden stays hidden.
    #[allow(clippy::too_many_arguments)]
    pub fn search_replaced(
        &self,
        query: &str,
        ws: WorkspaceId,
        k: usize,
        hidden: &[u32],
        replaced: &[Replaced],
        accept: impl Fn(u32) -> bool,
        stop: &dyn Fn() -> bool,
    ) -> Vec<Hit> {
        let terms: Vec<String> = term_counts(query).into_iter().map(|(t, _)| t).collect();
        let (gone, replaced, n, total) = self.reader_stats(ws, hidden, replaced);
        let hidden = &gone[..];
        if n == 0 || terms.is_empty() || k == 0 {
            return Vec::new();
        }
        let avgdl = total as f32 / n as f32;
        // One list per term: (doc, contribution), ascending by doc; and its largest contribution.
        let mut lists: Vec<(f32, Vec<(u32, f32)>)> = terms
            .iter()
            .filter_map(|t| {
                let mut post = self.postings(t, ws);
                if !hidden.is_empty() {
                    post.retain(|p| hidden.binary_search(&p.0).is_err());
                }
                let before = post.len();
                post.extend(replaced.iter().filter_map(|r| r.tf(t).map(|tf| (r.doc, tf, r.len))));
                if post.len() > before {
                    post.sort_unstable_by_key(|p| p.0);
                }
                if post.is_empty() {
                    return None;
                }
                let idf = idf(n, post.len() as u64);
                let list: Vec<(u32, f32)> = post.into_iter().map(|(d, tf, dl)| (d, idf * tf_part(tf, dl, avgdl))).collect();
                let ub = list.iter().fold(0f32, |m, p| m.max(p.1));
                Some((ub, list))
            })
            .collect();
        lists.sort_by(|a, b| a.0.total_cmp(&b.0));
        // prefix[i] = sum of the bounds of lists 0..i (the weakest first).
        let mut prefix = vec![0f32; lists.len() + 1];
        for (i, (ub, _)) in lists.iter().enumerate() {
            prefix[i + 1] = prefix[i] + ub;
        }
        let mut pos = vec![0usize; lists.len()];
        // `k` comes from the caller: reserve for what a result can plausibly hold, not for `k`.
        let mut top: Vec<Hit> = Vec::with_capacity(k.min(1024) + 1);
        let mut threshold = f32::NEG_INFINITY;
        // Lists `essential..` drive the walk; lists before it are only probed.
        let mut essential = 0;
        let mut walked = 0usize;
        loop {
            walked += 1;
            if walked.is_multiple_of(crate::index::STOP_EVERY) && stop() {
                break;
            }
            let mut next = u32::MAX;
            for i in essential..lists.len() {
                if let Some(p) = lists[i].1.get(pos[i]) {
                    next = next.min(p.0);
                }
            }
            if next == u32::MAX {
                break;
            }
            let mut score = 0f32;
            for i in essential..lists.len() {
                if let Some(p) = lists[i].1.get(pos[i]) {
                    if p.0 == next {
                        score += p.1;
                        pos[i] += 1;
                    }
                }
            }
            // The probed lists can add at most prefix[essential]: skip the probe when even that
            // cannot lift the document into the top k.
            if top.len() == k && score + prefix[essential] < threshold {
                continue;
            }
            for i in (0..essential).rev() {
                let list = &lists[i].1;
                let at = pos[i] + list[pos[i]..].partition_point(|p| p.0 < next);
                pos[i] = at;
                if let Some(p) = list.get(at) {
                    if p.0 == next {
                        score += p.1;
                    }
                }
            }
            // Ties go to the lower id (`next` is larger than every id already held).
            let enters = top.len() < k || score > threshold;
            if enters && accept(next) {
                let at = top.partition_point(|h| h.score >= score);
                top.insert(at, Hit { doc: next, score });
                top.truncate(k);
                if top.len() == k {
                    threshold = top[k - 1].score;
                    while essential < lists.len() && prefix[essential + 1] < threshold {
                        essential += 1;
                    }
                }
            }
        }
        top
    }
}

/// A document as one reader sees it with another text (a masked claim: `read::mask`).
#[derive(Clone, Debug)]
pub struct Replaced {
    /// The document.
    pub doc: u32,
    /// Its terms with their frequencies, ascending by term.
    terms: Vec<(String, u32)>,
    /// Its length in terms.
    len: u32,
}

impl Replaced {
    /// Document `doc` read as `text`.
    pub fn of(doc: u32, text: &str) -> Replaced {
        let mut terms = term_counts(text);
        terms.sort_unstable();
        let len = terms.iter().map(|t| t.1).sum();
        Replaced { doc, terms, len }
    }

    fn tf(&self, term: &str) -> Option<u32> {
        self.terms.binary_search_by(|t| t.0.as_str().cmp(term)).ok().map(|i| self.terms[i].1)
    }
}

/// BM25's inverse document frequency (the non-negative form).
pub fn idf(n: u64, df: u64) -> f32 {
    (1.0 + (n as f32 - df as f32 + 0.5) / (df as f32 + 0.5)).ln()
}

/// BM25's saturated, length-normalised term frequency.
pub fn tf_part(tf: u32, dl: u32, avgdl: f32) -> f32 {
    let tf = tf as f32;
    tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * dl as f32 / avgdl))
}

/// The claim and entity keyword indexes and the claim recency index of one state.
#[derive(Clone, Debug, Default)]
pub struct TextIndexes {
    /// Claim texts.
    pub claims: TextIndex,
    /// Entity names and aliases.
    pub entities: TextIndex,
    /// Claims by `valid_from`.
    pub recency: crate::index::recency::RecencyIndex,
}

/// The `.text` file: both keyword bases of one snapshot.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct PersistedText {
    /// Claim texts.
    pub claims: PersistedBase,
    /// Entity names and aliases.
    pub entities: PersistedBase,
}

impl PersistedText {
    /// Internal consistency of both bases.
    pub fn validate(&self) -> Result<(), &'static str> {
        self.claims.validate()?;
        self.entities.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::text::terms;

    fn ws(i: u32) -> WorkspaceId {
        WorkspaceId(i)
    }

    /// BM25 computed by hand on a three-document corpus.
    #[test]
    fn scores_equal_the_hand_computed_reference() {
        let mut idx = TextIndex::default();
        idx.index(0, ws(1), "kafka streams events");
        idx.index(1, ws(1), "kinesis streams events events");
        idx.index(2, ws(1), "postgres stores rows");
        idx.index(3, ws(2), "kafka kafka kafka"); // another workspace: no effect on ws 1
        let hits = idx.search("kafka events", ws(1), 10, &[], |_| true);
        // N = 3, avgdl = (3 + 4 + 3) / 3; "kafka": df 1, "event": df 2.
        let (n, avgdl) = (3.0f32, 10.0f32 / 3.0);
        let idf_k = (1.0f32 + (n - 1.0 + 0.5) / 1.5).ln();
        let idf_e = (1.0f32 + (n - 2.0 + 0.5) / 2.5).ln();
        let tf = |tf: f32, dl: f32| tf * 2.2 / (tf + 1.2 * (0.6 + 0.4 * dl / avgdl));
        let d0 = idf_k * tf(1.0, 3.0) + idf_e * tf(1.0, 3.0);
        let d1 = idf_e * tf(2.0, 4.0);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].doc, 0);
        assert!((hits[0].score - d0).abs() < 1e-5, "{} vs {d0}", hits[0].score);
        assert_eq!(hits[1].doc, 1);
        assert!((hits[1].score - d1).abs() < 1e-5);
        // Re-indexing replaces a document's postings and statistics.
        idx.index(0, ws(1), "nothing relevant here");
        let hits = idx.search("kafka", ws(1), 10, &[], |_| true);
        assert!(hits.is_empty());
        // "here" is a stop word: two terms.
        assert_eq!(idx.stats(ws(1)), (3, 2 + 4 + 3));
    }

    /// A document emptied (as `forget` does) and indexed again must not revive its first text:
    /// the emptied document keeps its generation.
    #[test]
    fn emptied_then_reindexed_document_forgets_its_old_text() {
        for upto in [0usize, 2] {
            let texts = vec!["unrelated words".to_owned(); upto];
            let mut idx = TextIndex::over_texts(texts, ws(1));
            let doc = 1 + upto as u32; // past a filler row, when `upto` > 0
            idx.index(doc, ws(1), "kafka streams");
            idx.index(doc, ws(1), "");
            assert!(idx.search("kafka", ws(1), 10, &[], |_| true).is_empty());
            idx.index(doc, ws(1), "kinesis");
            assert!(idx.search("kafka", ws(1), 10, &[], |_| true).is_empty(), "upto {upto}");
            assert_eq!(idx.search("kinesis", ws(1), 10, &[], |_| true).len(), 1);
            assert_eq!(idx.stats(ws(1)).0, upto as u64 + 1);
        }
    }

    /// A base built from columns answers exactly like the same documents indexed one by one.
    #[test]
    fn base_and_delta_agree() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let words = ["alpha", "beta", "gamma", "delta", "streams", "streaming", "kafka", "kinesis"];
        let docs: Vec<String> = (0..400)
            .map(|_| (0..rng.gen_range(0..6)).map(|_| words[rng.gen_range(0..words.len())]).collect::<Vec<_>>().join(" "))
            .collect();
        let mut name = StrVec::new();
        let mut aliases = StrVec::new();
        let mut wsc = CowVec::new();
        let mut delta = TextIndex::default();
        for (i, d) in docs.iter().enumerate() {
            name.push(d);
            aliases.push("");
            wsc.push(ws((i % 2) as u32));
            delta.index(i as u32, ws((i % 2) as u32), d);
        }
        let mut based = TextIndex::over_entities(&name, &aliases, &wsc, 300);
        for (i, d) in docs.iter().enumerate().skip(300) {
            based.index(i as u32, ws((i % 2) as u32), d);
        }
        // A re-index on both sides (base document and delta document).
        for idx in [&mut delta, &mut based] {
            idx.index(5, ws(1), "kafka kafka alpha");
            idx.index(350, ws(0), "kinesis");
        }
        for q in ["kafka", "streams alpha", "kinesis gamma delta", "stream", "absent"] {
            for w in [0, 1] {
                let a = delta.search(q, ws(w), 50, &[], |d| d % 7 != 0);
                let b = based.search(q, ws(w), 50, &[], |d| d % 7 != 0);
                assert_eq!(a.len(), b.len(), "{q}");
                for (x, y) in a.iter().zip(&b) {
                    assert_eq!(x.doc, y.doc);
                    assert!((x.score - y.score).abs() < 1e-5);
                }
            }
        }
        assert!(!terms("streaming").is_empty());
    }

    /// The index (base + delta, re-indexed documents, `MaxScore` pruning) against BM25 computed
    /// directly from the documents' words, on random corpora, filters and k.
    mod reference {
        use super::*;
        use proptest::prelude::*;

        /// Documents (workspace, word indexes), base split, query words, k, filter modulus.
        type Corpus = (Vec<(u32, Vec<usize>)>, usize, Vec<usize>, usize, u32);

        fn corpus() -> impl Strategy<Value = Corpus> {
            (
                prop::collection::vec((0u32..2, prop::collection::vec(0usize..12, 0..8)), 1..120),
                0usize..120,
                prop::collection::vec(0usize..14, 1..5),
                1usize..12,
                1u32..4,
            )
        }

        const WORDS: [&str; 14] = [
            "kafka", "kinesis", "stream", "event", "queue", "lag", "alpha", "beta", "gamma", "delta", "omega", "zeta", "absent1", "absent2",
        ];

        proptest! {
            #[test]
            fn search_equals_direct_bm25((docs, split, query, k, m) in corpus()) {
                let texts: Vec<String> = docs.iter().map(|(_, w)| w.iter().map(|i| WORDS[*i]).collect::<Vec<_>>().join(" ")).collect();
                let (mut name, mut aliases, mut wsc) = (StrVec::new(), StrVec::new(), CowVec::new());
                for (i, t) in texts.iter().enumerate() {
                    name.push(t);
                    aliases.push("");
                    wsc.push(ws(docs[i].0));
                }
                let split = split.min(docs.len());
                let mut idx = TextIndex::over_entities(&name, &aliases, &wsc, split);
                for (i, t) in texts.iter().enumerate().skip(split) {
                    idx.index(i as u32, ws(docs[i].0), t);
                }
                // Re-index every third document (base or delta) with other words, as a rename does.
                let mut docs = docs;
                for i in (0..docs.len()).step_by(3) {
                    let mut words = docs[i].1.clone();
                    words.reverse();
                    words.push(i % 12);
                    idx.index(i as u32, ws(docs[i].0), &words.iter().map(|w| WORDS[*w]).collect::<Vec<_>>().join(" "));
                    docs[i].1 = words;
                }
                let q: String = query.iter().map(|i| WORDS[*i]).collect::<Vec<_>>().join(" ");
                let accept = |d: u32| d % m != 1;
                // Documents that do not exist for the reader: out of the statistics too.
                let hidden: Vec<u32> = (0..docs.len() as u32).filter(|d| d % 5 == 2).collect();
                for w in 0..2u32 {
                    let mine: Vec<usize> =
                        (0..docs.len()).filter(|&i| docs[i].0 == w && !docs[i].1.is_empty() && i % 5 != 2).collect();
                    let n = mine.len() as f32;
                    let avgdl = mine.iter().map(|&i| docs[i].1.len()).sum::<usize>() as f32 / n.max(1.0);
                    let mut qterms: Vec<usize> = query.clone();
                    qterms.sort_unstable();
                    qterms.dedup();
                    let mut want: Vec<(f32, u32)> = Vec::new();
                    for &i in &mine {
                        let mut s = 0f32;
                        let mut hit = false;
                        for &t in &qterms {
                            let tf = docs[i].1.iter().filter(|&&x| x == t).count() as u32;
                            if tf == 0 {
                                continue;
                            }
                            hit = true;
                            let df = mine.iter().filter(|&&j| docs[j].1.contains(&t)).count() as u64;
                            s += idf(n as u64, df) * tf_part(tf, docs[i].1.len() as u32, avgdl);
                        }
                        if hit && accept(i as u32) {
                            want.push((s, i as u32));
                        }
                    }
                    want.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                    let all = want.clone();
                    want.truncate(k);
                    let got = idx.search(&q, ws(w), k, &hidden, accept);
                    prop_assert_eq!(got.len(), want.len());
                    for (g, (ws_, wd)) in got.iter().zip(&want) {
                        prop_assert!((g.score - ws_).abs() < 1e-4, "{:?} vs {:?}", got, want);
                        // Documents may differ only where scores tie (the two sum their terms in
                        // different orders, so a tie can differ by an ulp): the document returned
                        // must score, computed directly, what the reference has at that rank.
                        if g.doc != *wd {
                            let direct = all.iter().find(|x| x.1 == g.doc).map(|x| x.0);
                            prop_assert!(direct.is_some_and(|d| (d - ws_).abs() < 1e-4), "{:?} vs {:?}", got, want);
                        }
                    }
                }
            }
        }
    }
}
