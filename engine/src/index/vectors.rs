//! Exact top-k vector search over one vector column (entity names or claim texts).
//!
//! A column is an immutable *base* (rows by dense id, read from the mapped vector file or held in
//! memory) plus a persistent *overlay* of rows written since the base was loaded, so a commit adds a
//! row without copying the base. A row is written once per id: ids are never reused and an id's
//! text does not change, so rows never need versioning.
//!
//! The scan is exact: every candidate row is scored, in chunks on rayon, each chunk keeping a
//! bounded heap. Filters (workspace, visibility) are applied *before* selection — a row that fails
//! them can never take a slot — but evaluated lazily, only for rows whose score would enter the
//! heap, so a filter costs almost nothing on a dense scan. Quantized modes scan an f16 or i8 copy
//! of the base (built on first use) for a short list and rescore it exactly in f32.

use crate::index::bitmap::IdSet;
use crate::index::kernels::{dot_f16, dot_f32, dot_i8, dot_i8_rows, f16, quantize_i8, to_f16};
use crate::index::STOP_EVERY;
use engram_storage::Mapped;
use rayon::prelude::*;
use std::collections::BinaryHeap;
use std::sync::{Arc, OnceLock};

/// Which copy of the vectors a scan reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum VectorMode {
    /// The f32 rows: exact.
    #[default]
    F32,
    /// An f16 copy (half the bytes), short list rescored in f32.
    F16,
    /// An i8 copy with one scale per row (a quarter of the bytes), short list rescored in f32.
    I8,
}

impl VectorMode {
    /// Parses `f32`, `f16` or `i8`.
    pub fn parse(s: &str) -> Option<VectorMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "f32" => Some(VectorMode::F32),
            "f16" => Some(VectorMode::F16),
            "i8" => Some(VectorMode::I8),
            _ => None,
        }
    }

    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            VectorMode::F32 => "f32",
            VectorMode::F16 => "f16",
            VectorMode::I8 => "i8",
        }
    }
}

/// Where base rows live.
#[derive(Debug)]
pub(crate) enum Rows {
    /// Owned floats (in-memory databases, tests).
    Owned(Vec<f32>),
    /// A mapped vector file: rows start `offset` bytes in.
    Mapped { map: Arc<Mapped>, offset: usize },
}

/// An immutable block of rows for ids `first..first + rows`, with lazily built quantized copies.
#[derive(Debug)]
pub struct VectorBase {
    dim: usize,
    first: u32,
    rows: usize,
    data: Rows,
    /// Rows that are not all zeros (an all-zero row is "no vector").
    present: OnceLock<Vec<u64>>,
    half: OnceLock<Vec<f16>>,
    int8: OnceLock<(Vec<i8>, Vec<f32>)>,
    /// `1 / |row|` per row (0 for absent rows), for cosine scans.
    inv_norms: OnceLock<Vec<f32>>,
}

/// Rows per parallel scan chunk: large enough that filling each chunk's heap is a small share
/// of its rows, small enough to balance two to a few dozen cores.
const CHUNK_ROWS: usize = 16_384;
/// Rows whose i8 products one `dot_i8_rows` call computes (a small buffer that stays in L1).
const DOT_BLOCK: usize = 256;

impl VectorBase {
    /// A base over owned rows (`values.len()` is a multiple of `dim`).
    pub fn owned(dim: usize, values: Vec<f32>) -> VectorBase {
        VectorBase::owned_at(0, dim, values)
    }

    /// Owned rows for ids starting at `first`.
    pub fn owned_at(first: u32, dim: usize, values: Vec<f32>) -> VectorBase {
        let rows = values.len() / dim.max(1);
        VectorBase {
            dim,
            first,
            rows,
            data: Rows::Owned(values),
            present: OnceLock::new(),
            half: OnceLock::new(),
            int8: OnceLock::new(),
            inv_norms: OnceLock::new(),
        }
    }

    /// A base over `rows` rows of a mapped file, starting `offset` bytes in. `None` when the bytes
    /// are not 4-byte aligned or too short.
    pub fn mapped(dim: usize, rows: usize, map: Arc<Mapped>, offset: usize) -> Option<VectorBase> {
        let end = offset.checked_add(rows.checked_mul(dim)?.checked_mul(4)?)?;
        let bytes = map.get(offset..end)?;
        bytemuck::try_cast_slice::<u8, f32>(bytes).ok()?;
        Some(VectorBase {
            dim,
            first: 0,
            rows,
            data: Rows::Mapped { map, offset },
            present: OnceLock::new(),
            half: OnceLock::new(),
            int8: OnceLock::new(),
            inv_norms: OnceLock::new(),
        })
    }

    /// All rows, back to back.
    pub fn floats(&self) -> &[f32] {
        match &self.data {
            Rows::Owned(v) => v,
            Rows::Mapped { map, offset } => {
                let bytes = &map[*offset..*offset + self.rows * self.dim * 4];
                // Checked at construction: aligned and long enough (little-endian hosts only).
                bytemuck::try_cast_slice(bytes).unwrap_or(&[])
            }
        }
    }

    /// Rows held (present or not).
    pub fn rows(&self) -> usize {
        self.rows
    }

    fn row(&self, i: usize) -> &[f32] {
        &self.floats()[i * self.dim..(i + 1) * self.dim]
    }

    fn present(&self) -> &[u64] {
        self.present.get_or_init(|| {
            let words: Vec<u64> = (0..self.rows.div_ceil(64))
                .into_par_iter()
                .map(|w| {
                    let mut bits = 0u64;
                    for b in 0..64 {
                        let i = w * 64 + b;
                        if i < self.rows && self.row(i).iter().any(|v| *v != 0.0) {
                            bits |= 1 << b;
                        }
                    }
                    bits
                })
                .collect();
            words
        })
    }

    /// Whether local row `i` is present.
    fn is_present(&self, i: usize) -> bool {
        i < self.rows && self.present()[i / 64] & (1 << (i % 64)) != 0
    }

    /// The local row of id `id`, if this block holds a vector for it.
    fn local(&self, id: u32) -> Option<usize> {
        let i = id.checked_sub(self.first)? as usize;
        self.is_present(i).then_some(i)
    }

    /// Ids and rows of the present rows.
    pub fn present_rows(&self) -> impl Iterator<Item = (u32, &[f32])> + '_ {
        (0..self.rows).filter(|i| self.is_present(*i)).map(|i| (self.first + i as u32, self.row(i)))
    }

    /// Whether the rows live in a mapped file (rather than memory).
    pub fn is_mapped(&self) -> bool {
        matches!(self.data, Rows::Mapped { .. })
    }

    fn inv_norms(&self) -> &[f32] {
        self.inv_norms.get_or_init(|| (0..self.rows).into_par_iter().map(|i| inv_norm(self.row(i))).collect())
    }

    fn half(&self) -> &[f16] {
        self.half.get_or_init(|| self.floats().par_chunks(self.dim.max(1) * 1024).flat_map_iter(to_f16).collect())
    }

    fn int8(&self) -> (&[i8], &[f32]) {
        let (q, s) = self.int8.get_or_init(|| {
            let dim = self.dim.max(1);
            let mut q = vec![0i8; self.rows * dim];
            let mut s = vec![0f32; self.rows];
            q.par_chunks_mut(dim).zip(s.par_iter_mut()).enumerate().for_each(|(i, (qr, sr))| *sr = quantize_i8(self.row(i), qr));
            (q, s)
        });
        (q, s)
    }
}

/// One vector column: base rows, segments folded from writes, and the rows written since.
#[derive(Clone, Debug, Default)]
pub struct VectorColumn {
    /// Rows loaded at open (or set whole).
    pub base: Option<Arc<VectorBase>>,
    /// Owned blocks folded from the overlay, ascending by first id.
    pub segments: Vec<Arc<VectorBase>>,
    /// Rows written since.
    pub overlay: imbl::OrdMap<u32, Arc<[f32]>>,
    /// Ids erased (`forget`) whose rows the base file still holds until a checkpoint zeroes them.
    pub erased: imbl::OrdSet<u32>,
    /// Contiguous i8 copies of row groups (an entity type's members), shared by every version
    /// of the column: rows never change once written, so a copy can only be incomplete, never
    /// wrong; `search_group` scans what it lacks directly.
    groups: Arc<parking_lot::Mutex<std::collections::HashMap<u64, Arc<GroupMatrix>>>>,
}

impl VectorColumn {
    /// A column over `base` alone.
    pub fn with_base(base: Arc<VectorBase>) -> VectorColumn {
        VectorColumn { base: Some(base), ..VectorColumn::default() }
    }
}

/// A group's rows, back to back in i8, with their scales and inverse norms.
#[derive(Debug)]
struct GroupMatrix {
    /// Ascending.
    ids: Vec<u32>,
    dim: usize,
    q: Vec<i8>,
    scales: Vec<f32>,
    /// `scale · 1/‖row‖`: a row's factor under cosine.
    cosine_scales: Vec<f32>,
    /// The group's members when the copy was built (a cheap clone: shards are shared).
    built_from: IdSet,
    /// Members then without a vector (they may have one now), ascending.
    vectorless: Vec<u32>,
}

/// A scored id.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scored {
    /// The row's id (entity or claim).
    pub id: u32,
    /// Its inner product with the query.
    pub score: f32,
}

/// Orders "worse" first: lower score, then higher id. A `BinaryHeap<Worst>` keeps the best k.
#[derive(Clone, Copy, Debug)]
struct Worst(Scored);

impl PartialEq for Worst {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == std::cmp::Ordering::Equal
    }
}
impl Eq for Worst {}
impl PartialOrd for Worst {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Worst {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.0.score.total_cmp(&self.0.score).then(self.0.id.cmp(&o.0.id))
    }
}

/// The best `k` by (score desc, id asc).
struct TopK {
    k: usize,
    heap: BinaryHeap<Worst>,
    /// The worst score held once full (`-inf` before): anything below is rejected with one
    /// comparison, which is what almost every row of a scan gets.
    floor: f32,
}

impl TopK {
    fn new(k: usize) -> TopK {
        // `k` may come from the caller (a short-list length): reserve modestly, grow if needed.
        TopK { k, heap: BinaryHeap::with_capacity(k.min(1024) + 1), floor: f32::NEG_INFINITY }
    }

    /// Whether `(score, id)` would enter.
    #[inline]
    fn admits(&self, score: f32, id: u32) -> bool {
        if score < self.floor || self.k == 0 {
            return false;
        }
        self.heap.len() < self.k || self.heap.peek().is_some_and(|w| Worst(Scored { id, score }) < *w)
    }

    #[inline]
    fn push(&mut self, s: Scored) {
        self.heap.push(Worst(s));
        if self.heap.len() > self.k {
            self.heap.pop();
        }
        if self.heap.len() == self.k {
            self.floor = self.heap.peek().map_or(f32::NEG_INFINITY, |w| w.0.score);
        }
    }

    fn merge(mut self, other: TopK) -> TopK {
        for w in other.heap {
            if self.admits(w.0.score, w.0.id) {
                self.push(w.0);
            }
        }
        self
    }

    fn into_sorted(self) -> Vec<Scored> {
        let mut v: Vec<Scored> = self.heap.into_iter().map(|w| w.0).collect();
        v.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        v
    }
}

/// `1 / |row|`, or 0 for a zero row.
fn inv_norm(row: &[f32]) -> f32 {
    let n = dot_f32(row, row).sqrt();
    if n > 0.0 {
        1.0 / n
    } else {
        0.0
    }
}

/// A vector query against one column.
#[derive(Clone, Copy)]
pub struct Scan<'q> {
    /// The query vector.
    pub query: &'q [f32],
    /// How many results.
    pub k: usize,
    /// Which copy to scan.
    pub mode: VectorMode,
    /// Short-list length for quantized modes (at least `k`).
    pub rescore: usize,
    /// Rank by cosine (the query must then be unit length) instead of the inner product.
    pub cosine: bool,
    /// Asked every `STOP_EVERY` rows of each chunk: `true` ends the scan early (its caller then
    /// discards the partial result: a deadline passed or a token was tripped).
    pub stop: Option<&'q (dyn Fn() -> bool + Sync)>,
}

impl Scan<'_> {
    /// Whether the scan must end before row `i` (of its chunk): asked every `STOP_EVERY` rows.
    #[inline]
    fn stopped(&self, i: usize) -> bool {
        i.is_multiple_of(STOP_EVERY) && self.stop.is_some_and(|f| f())
    }
}

/// Overlay rows that trigger a fold into a segment: the overlay is a persistent map (cheap to
/// copy per commit, slow to scan), segments are flat rows (scanned like the base).
pub const FOLD_ROWS: usize = 2048;
/// Ids further apart than this start a new segment instead of padding with absent rows.
const SEGMENT_GAP_MAX: u32 = 64;

impl VectorColumn {
    /// Every block: the base, then the segments.
    fn blocks(&self) -> impl Iterator<Item = &Arc<VectorBase>> {
        self.base.iter().chain(&self.segments)
    }

    /// Whether `id` has a vector.
    pub fn has(&self, id: u32) -> bool {
        !self.erased.contains(&id) && (self.overlay.contains_key(&id) || self.blocks().any(|b| b.local(id).is_some()))
    }

    /// The vector of `id`.
    pub fn get(&self, id: u32) -> Option<Vec<f32>> {
        if let Some(r) = self.overlay.get(&id) {
            return Some(r.to_vec());
        }
        if self.erased.contains(&id) {
            return None;
        }
        self.blocks().find_map(|b| b.local(id).map(|i| b.row(i).to_vec()))
    }

    /// Rows written since the base (segments and overlay), for checkpoints.
    pub fn written_rows(&self) -> Vec<(u32, &[f32])> {
        let mut v: Vec<(u32, &[f32])> = self.segments.iter().flat_map(|s| s.present_rows()).collect();
        v.extend(self.overlay.iter().map(|(id, r)| (*id, &r[..])));
        v
    }

    /// Erases `id`'s vector: gone from the overlay, zeroed in a copy of its segment, and listed
    /// for the next checkpoint to zero in the file. Reads never return it again.
    pub fn erase(&mut self, id: u32) {
        let mut had = self.overlay.remove(&id).is_some();
        for seg in &mut self.segments {
            if let Some(i) = seg.local(id) {
                let mut values = seg.floats().to_vec();
                values[i * seg.dim..(i + 1) * seg.dim].fill(0.0);
                *seg = Arc::new(VectorBase::owned_at(seg.first, seg.dim, values));
                had = true;
            }
        }
        if had || self.base.as_ref().is_some_and(|b| b.local(id).is_some()) {
            self.erased.insert(id);
        }
    }

    /// Stores a row (the caller checked the id has none) and folds the overlay into segments
    /// when it has grown to `FOLD_ROWS`.
    pub fn insert(&mut self, id: u32, row: Arc<[f32]>) {
        self.overlay.insert(id, row);
        if self.overlay.len() >= FOLD_ROWS {
            self.fold();
        }
    }

    /// Moves the overlay into flat segments (runs of nearby ids, absent rows zero), then merges
    /// the newest segments while they are adjacent and of similar size, so appends cost
    /// amortized O(log n) copies per row. Rows the base already holds (an overlay replayed over
    /// rows a checkpoint wrote) are dropped instead of duplicated.
    pub fn fold(&mut self) {
        let rows: Vec<(u32, Arc<[f32]>)> = std::mem::take(&mut self.overlay)
            .into_iter()
            .filter(|(id, _)| self.base.as_ref().is_none_or(|b| b.local(*id).is_none()))
            .collect();
        let Some(dim) = rows.first().map(|r| r.1.len()) else { return };
        let mut at = 0;
        while at < rows.len() {
            let first = rows[at].0;
            let mut end = at + 1;
            while end < rows.len() && rows[end].0 - rows[end - 1].0 <= SEGMENT_GAP_MAX {
                end += 1;
            }
            let span = (rows[end - 1].0 - first) as usize + 1;
            let mut values = vec![0f32; span * dim];
            for (id, r) in &rows[at..end] {
                let i = (id - first) as usize;
                values[i * dim..(i + 1) * dim].copy_from_slice(r);
            }
            self.segments.push(Arc::new(VectorBase::owned_at(first, dim, values)));
            at = end;
        }
        self.segments.sort_by_key(|s| s.first);
        while self.segments.len() >= 2 {
            let n = self.segments.len();
            let (a, b) = (&self.segments[n - 2], &self.segments[n - 1]);
            let a_end = a.first + a.rows as u32;
            if b.first < a_end || b.first - a_end > SEGMENT_GAP_MAX || a.rows > 2 * b.rows {
                break;
            }
            let span = (b.first + b.rows as u32 - a.first) as usize;
            let mut values = vec![0f32; span * dim];
            values[..a.rows * dim].copy_from_slice(a.floats());
            let off = (b.first - a.first) as usize * dim;
            values[off..off + b.rows * dim].copy_from_slice(b.floats());
            let merged = Arc::new(VectorBase::owned_at(a.first, dim, values));
            self.segments.truncate(n - 2);
            self.segments.push(merged);
        }
    }

    /// The best `scan.k` rows that pass `accept`, by inner product with the query (ties: lower id).
    pub fn search(&self, scan: &Scan<'_>, accept: &(dyn Fn(u32) -> bool + Sync)) -> Vec<Scored> {
        let mut top = TopK::new(scan.k);
        for (id, row) in &self.overlay {
            let s = dot_f32(scan.query, row) * if scan.cosine { inv_norm(row) } else { 1.0 };
            if top.admits(s, *id) && accept(*id) {
                top.push(Scored { id: *id, score: s });
            }
        }
        for block in self.blocks() {
            if block.dim == scan.query.len() && block.rows > 0 {
                top = top.merge(search_base(block, scan, accept, &self.overlay));
            }
        }
        top.into_sorted()
    }

    /// The cosine of row `id` with `unit` (a unit-length query), computed as the scans rescore:
    /// `None` when the row is absent or of another dimension.
    pub fn cosine_to_unit(&self, id: u32, unit: &[f32]) -> Option<f32> {
        let row = self.get(id).filter(|r| r.len() == unit.len())?;
        Some(dot_f32(unit, &row) * inv_norm(&row))
    }

    /// `search_among` for a recurring group (`key` names it, e.g. an entity type; `members` is
    /// its current set), filtered by `accept` lazily: in i8 mode the group's rows are scanned
    /// from a contiguous copy built on first use (scattered rows cost a cache miss each; a
    /// contiguous copy streams), members the copy lacks (added since, or without a vector then)
    /// are scanned directly, and the short list is rescored exactly. What changed since the copy
    /// is found from the set's shards that changed (`IdSet::added_since`), not by listing the
    /// members. Other modes: `search_among`.
    pub fn search_group(&self, key: u64, scan: &Scan<'_>, members: &IdSet, accept: &(dyn Fn(u32) -> bool + Sync)) -> Vec<Scored> {
        if scan.mode != VectorMode::I8 || members.is_empty() {
            let accepted: Vec<u32> = members.iter().filter(|id| accept(*id)).collect();
            return self.search_among(scan, &accepted);
        }
        let dim = scan.query.len();
        let cached = self.groups.lock().get(&key).cloned();
        let mut lacking = Vec::new();
        let m = match cached {
            // Rebuilt once a quarter of the copy's size joined the group since.
            Some(m)
                if m.dim == dim && {
                    lacking = members.added_since(&m.built_from);
                    lacking.len() * 4 <= m.ids.len()
                } =>
            {
                lacking.extend(m.vectorless.iter().copied().filter(|id| members.contains(*id)));
                lacking.sort_unstable();
                m
            }
            _ => {
                lacking.clear();
                let mut m = GroupMatrix {
                    ids: Vec::new(),
                    dim,
                    q: Vec::new(),
                    scales: Vec::new(),
                    cosine_scales: Vec::new(),
                    built_from: members.clone(),
                    vectorless: Vec::new(),
                };
                let rows = members.len() as usize;
                m.ids.reserve(rows);
                m.q.reserve(rows * dim);
                m.scales.reserve(rows);
                m.cosine_scales.reserve(rows);
                let mut row_q = vec![0i8; dim];
                for id in members.iter() {
                    match self.get(id).filter(|r| r.len() == dim) {
                        Some(row) => {
                            let scale = quantize_i8(&row, &mut row_q);
                            m.scales.push(scale);
                            m.q.extend_from_slice(&row_q);
                            m.cosine_scales.push(scale * inv_norm(&row));
                            m.ids.push(id);
                        }
                        None => m.vectorless.push(id),
                    }
                }
                lacking.clone_from(&m.vectorless);
                let m = Arc::new(m);
                self.groups.lock().insert(key, m.clone());
                m
            }
        };
        let short = scan.rescore.max(scan.k);
        let mut q = vec![0i8; dim];
        let qs = quantize_i8(scan.query, &mut q);
        // Rows of the copy that left the group, and members the filter refuses, are checked only
        // for rows that would enter the short list.
        let listed = |id: u32| members.contains(id) && accept(id);
        let pre = (0..m.ids.len().div_ceil(CHUNK_ROWS))
            .into_par_iter()
            .map(|c| {
                let mut top = TopK::new(short);
                let (mut dots, mut scores) = (vec![0i32; DOT_BLOCK], vec![0f32; DOT_BLOCK]);
                let rows = c * CHUNK_ROWS..((c + 1) * CHUNK_ROWS).min(m.ids.len());
                for start in rows.clone().step_by(DOT_BLOCK).take_while(|&start| !scan.stopped(start)) {
                    let end = (start + DOT_BLOCK).min(rows.end);
                    let (dots, scores) = (&mut dots[..end - start], &mut scores[..end - start]);
                    dot_i8_rows(&q, &m.q[start * dim..end * dim], dots);
                    let factors = if scan.cosine { &m.cosine_scales[start..end] } else { &m.scales[start..end] };
                    // Scores for the block first (vectorized), then only a block whose best can
                    // enter the short list is walked row by row: once the list fills, most are not.
                    for ((s, d), f) in scores.iter_mut().zip(dots.iter()).zip(factors) {
                        *s = *d as f32 * *f * qs;
                    }
                    if scores.iter().fold(f32::NEG_INFINITY, |a, s| a.max(*s)) < top.floor {
                        continue;
                    }
                    for (j, s) in (start..end).zip(scores.iter()) {
                        let id = m.ids[j];
                        if top.admits(*s, id) && listed(id) {
                            top.push(Scored { id, score: *s });
                        }
                    }
                }
                top
            })
            .reduce(|| TopK::new(short), TopK::merge);
        let mut top = TopK::new(scan.k);
        for w in pre.heap {
            if let Some(row) = self.get(w.0.id) {
                let s = dot_f32(scan.query, &row) * if scan.cosine { inv_norm(&row) } else { 1.0 };
                if top.admits(s, w.0.id) {
                    top.push(Scored { id: w.0.id, score: s });
                }
            }
        }
        lacking.retain(|id| accept(*id));
        for s in self.search_among(scan, &lacking) {
            if top.admits(s.score, s.id) {
                top.push(s);
            }
        }
        top.into_sorted()
    }

    /// Like `search`, over the listed ids only (ascending; a selective filter: cheaper than a
    /// full scan). Each block scores its share of the ids in the scan's mode.
    pub fn search_among(&self, scan: &Scan<'_>, ids: &[u32]) -> Vec<Scored> {
        debug_assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids must be ascending");
        if ids.is_empty() {
            // Nothing to score; the overlay walk below is not free (up to a segment's rows).
            return Vec::new();
        }
        let mut top = TopK::new(scan.k);
        // The overlay is small: walk it against the sorted ids rather than probing it per id.
        for (id, row) in &self.overlay {
            if ids.binary_search(id).is_ok() {
                let s = dot_f32(scan.query, row) * if scan.cosine { inv_norm(row) } else { 1.0 };
                if top.admits(s, *id) {
                    top.push(Scored { id: *id, score: s });
                }
            }
        }
        for block in self.blocks() {
            if block.dim != scan.query.len() || block.rows == 0 {
                continue;
            }
            let end = u64::from(block.first) + block.rows as u64;
            let part = &ids[ids.partition_point(|id| *id < block.first)..ids.partition_point(|id| u64::from(*id) < end)];
            // An overlay row shadows a block row only after a replay over rows a checkpoint
            // wrote; check per id only when the overlay reaches into this block at all.
            let shadowed = self.overlay.range(block.first..).next().is_some_and(|(id, _)| u64::from(*id) < end);
            let present = block.present();
            let local: Vec<usize> = part
                .iter()
                .map(|id| (id - block.first) as usize)
                .filter(|i| present[i / 64] & (1 << (i % 64)) != 0 && (!shadowed || !self.overlay.contains_key(&(block.first + *i as u32))))
                .collect();
            if !local.is_empty() {
                top = top.merge(search_rows(block, scan, &local));
            }
        }
        top.into_sorted()
    }
}

/// The best rows among `rows` (local indexes, all present) of one block, in the scan's mode.
fn search_rows(block: &VectorBase, scan: &Scan<'_>, rows: &[usize]) -> TopK {
    let short = short_list(scan);
    let first = block.first;
    scored(block, scan, &|score| {
        rows.par_chunks(CHUNK_ROWS)
            .map(|chunk| {
                let mut top = TopK::new(short);
                for (_, &i) in chunk.iter().enumerate().take_while(|&(n, _)| !scan.stopped(n)) {
                    let s = score(i);
                    let id = first + i as u32;
                    if top.admits(s, id) {
                        top.push(Scored { id, score: s });
                    }
                }
                top
            })
            .reduce(|| TopK::new(short), TopK::merge)
    })
}

/// Every present row of a block that passes `accept` (and is not shadowed by the overlay),
/// scanned in chunks; the filter is evaluated only for rows that would enter the heap.
fn search_base(base: &VectorBase, scan: &Scan<'_>, accept: &(dyn Fn(u32) -> bool + Sync), overlay: &imbl::OrdMap<u32, Arc<[f32]>>) -> TopK {
    let present = base.present();
    let first = base.first;
    let ok = |i: usize| {
        let id = first + i as u32;
        present[i / 64] & (1 << (i % 64)) != 0 && (overlay.is_empty() || !overlay.contains_key(&id)) && accept(id)
    };
    scored(base, scan, &|score| scan_chunks(first, base.rows, short_list(scan), &ok, score, scan.stop))
}

/// Local row → score, in one scan mode.
type RowScorer<'a> = dyn Fn(usize) -> f32 + Sync + 'a;

/// How many rows a scan keeps before rescoring: `k` when exact, the short list when quantized.
fn short_list(scan: &Scan<'_>) -> usize {
    match scan.mode {
        VectorMode::F32 => scan.k,
        _ => scan.rescore.max(scan.k),
    }
}

/// Runs `drive` with the scorer of the scan's mode over `block` (local row → score; cosine
/// divides by the row's norm, the query being unit length), then rescores a quantized short
/// list exactly.
fn scored(block: &VectorBase, scan: &Scan<'_>, drive: &dyn Fn(&RowScorer<'_>) -> TopK) -> TopK {
    let dim = block.dim;
    let norms: Option<&[f32]> = scan.cosine.then(|| block.inv_norms());
    let w = |i: usize| norms.map_or(1.0, |n| n[i]);
    match scan.mode {
        VectorMode::F32 => {
            let floats = block.floats();
            drive(&|i| dot_f32(scan.query, &floats[i * dim..(i + 1) * dim]) * w(i))
        }
        VectorMode::F16 => {
            let half = block.half();
            let q = to_f16(scan.query);
            rescore(block, scan, drive(&|i| dot_f16(&q, &half[i * dim..(i + 1) * dim]) * w(i)))
        }
        VectorMode::I8 => {
            let (int8, scales) = block.int8();
            let mut q = vec![0i8; dim];
            let qs = quantize_i8(scan.query, &mut q);
            rescore(block, scan, drive(&|i| dot_i8(&q, &int8[i * dim..(i + 1) * dim]) * scales[i] * qs * w(i)))
        }
    }
}

/// The best `short` rows by `score` among those passing `ok`, chunk by chunk on rayon.
fn scan_chunks(
    first: u32,
    rows: usize,
    short: usize,
    ok: &(impl Fn(usize) -> bool + Sync),
    score: &RowScorer<'_>,
    stop: Option<&(dyn Fn() -> bool + Sync)>,
) -> TopK {
    (0..rows.div_ceil(CHUNK_ROWS))
        .into_par_iter()
        .map(|c| {
            let mut top = TopK::new(short);
            for i in c * CHUNK_ROWS..((c + 1) * CHUNK_ROWS).min(rows) {
                if i % STOP_EVERY == 0 && stop.is_some_and(|f| f()) {
                    break;
                }
                let s = score(i);
                let id = first + i as u32;
                if top.admits(s, id) && ok(i) {
                    top.push(Scored { id, score: s });
                }
            }
            top
        })
        .reduce(|| TopK::new(short), TopK::merge)
}

/// Exact f32 scores for a short list, keeping the best k.
fn rescore(base: &VectorBase, scan: &Scan<'_>, short: TopK) -> TopK {
    let mut top = TopK::new(scan.k);
    for w in short.heap {
        let id = w.0.id;
        let i = (id - base.first) as usize;
        let s = dot_f32(scan.query, base.row(i)) * if scan.cosine { base.inv_norms()[i] } else { 1.0 };
        if top.admits(s, id) {
            top.push(Scored { id, score: s });
        }
    }
    top
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::kernels::scalar;
    use proptest::prelude::*;

    /// The reference: score every row in f64 with the scalar kernel, filter, sort, cut.
    fn brute(rows: &[Vec<f32>], q: &[f32], k: usize, accept: impl Fn(u32) -> bool) -> Vec<u32> {
        let mut v: Vec<(f64, u32)> = rows
            .iter()
            .enumerate()
            .filter(|(i, r)| r.iter().any(|x| *x != 0.0) && accept(*i as u32))
            .map(|(i, r)| (scalar::dot_f32(q, r), i as u32))
            .collect();
        v.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        v.into_iter().take(k).map(|x| x.1).collect()
    }

    fn column(rows: &[Vec<f32>], split: usize) -> VectorColumn {
        let dim = rows[0].len();
        let base: Vec<f32> = rows[..split].iter().flatten().copied().collect();
        let mut col = VectorColumn::with_base(Arc::new(VectorBase::owned(dim, base)));
        // Inserted in a scrambled order, so folds see runs, gaps and out-of-order segments.
        let mut order: Vec<usize> = (split..rows.len()).collect();
        let n = order.len();
        for i in 0..n {
            order.swap(i, (i * 7919) % n);
        }
        for i in order {
            if rows[i].iter().any(|x| *x != 0.0) {
                col.insert(i as u32, Arc::from(rows[i].as_slice()));
            }
        }
        for (i, r) in rows.iter().enumerate() {
            let want = r.iter().any(|x| *x != 0.0).then(|| r.clone());
            assert_eq!(col.get(i as u32), want, "row {i}");
        }
        col
    }

    fn data() -> impl Strategy<Value = (Vec<Vec<f32>>, Vec<f32>, usize, usize, u32)> {
        (2usize..40, 1usize..9000).prop_flat_map(|(dim, n)| {
            (
                // Quantized to 1/64 steps so ties between rows are common and f64/f32 agree exactly.
                prop::collection::vec(
                    prop_oneof![1 => Just(vec![0.0; dim]), 9 => prop::collection::vec((-64i32..64).prop_map(|x| x as f32 / 64.0), dim)],
                    n,
                ),
                prop::collection::vec((-64i32..64).prop_map(|x| x as f32 / 64.0), dim),
                0..=n,
                1usize..30,
                1u32..5,
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        #[test]
        fn exact_search_equals_brute_force((rows, q, split, k, modulus) in data()) {
            let col = column(&rows, split);
            let accept = move |id: u32| id % modulus != 1;
            let got: Vec<u32> = col.search(&Scan { query: &q, k, mode: VectorMode::F32, rescore: k, cosine: false, stop: None }, &accept).iter().map(|s| s.id).collect();
            prop_assert_eq!(&got, &brute(&rows, &q, k, accept));
            let ids: Vec<u32> = (0..rows.len() as u32).filter(|i| accept(*i)).collect();
            let among: Vec<u32> = col.search_among(&Scan { query: &q, k, mode: VectorMode::F32, rescore: k, cosine: false, stop: None }, &ids).iter().map(|s| s.id).collect();
            prop_assert_eq!(among, got);
        }

        #[test]
        fn quantized_modes_with_full_rescoring_are_exact((rows, q, split, k, modulus) in data()) {
            // A short list as long as the data makes the rescoring see every row: exact again.
            let col = column(&rows, split);
            let accept = move |id: u32| !id.is_multiple_of(modulus);
            for mode in [VectorMode::F16, VectorMode::I8] {
                let got: Vec<u32> = col.search(&Scan { query: &q, k, mode, rescore: rows.len(), cosine: false, stop: None }, &accept).iter().map(|s| s.id).collect();
                prop_assert_eq!(&got, &brute(&rows, &q, k, accept));
            }
        }
    }

    /// Cosine over rows of very different lengths: the exact scan equals a scalar cosine brute
    /// force (rows and query drawn from continuous values, so ties do not occur).
    #[test]
    fn cosine_scans_equal_scalar_cosine() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(21);
        let dim = 24;
        for n in [1usize, 50, 5000, 20_000] {
            let rows: Vec<Vec<f32>> = (0..n)
                .map(|_| {
                    let len = rng.gen_range(0.01f32..100.0);
                    (0..dim).map(|_| rng.gen_range(-1.0f32..1.0) * len).collect()
                })
                .collect();
            let col = column(&rows, n / 2);
            let q: Vec<f32> = (0..dim).map(|_| rng.gen_range(-3.0f32..3.0)).collect();
            let qn = scalar::dot_f32(&q, &q).sqrt();
            let unit: Vec<f32> = q.iter().map(|x| (f64::from(*x) / qn) as f32).collect();
            let mut want: Vec<(f64, u32)> =
                rows.iter().enumerate().map(|(i, r)| (scalar::dot_f32(&q, r) / (qn * scalar::dot_f32(r, r).sqrt()), i as u32)).collect();
            want.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            for mode in [VectorMode::F32, VectorMode::I8] {
                let got = col.search(&Scan { query: &unit, k: 10, mode, rescore: 200, cosine: true, stop: None }, &|_| true);
                let ids: Vec<u32> = got.iter().map(|s| s.id).collect();
                assert_eq!(ids, want.iter().take(10).map(|w| w.1).collect::<Vec<_>>(), "n={n} {mode:?}");
                for (g, w) in got.iter().zip(&want) {
                    assert!((f64::from(g.score) - w.0).abs() < 1e-5, "{} vs {}", g.score, w.0);
                }
            }
        }
    }

    /// A cached group copy answers like a direct scan of the group, also after the group grows
    /// (members the copy lacks), shrinks (members it holds that left) or is rebuilt.
    #[test]
    fn group_scans_equal_brute_force_as_the_group_changes() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let dim = 16;
        let rows: Vec<Vec<f32>> = (0..6000).map(|_| (0..dim).map(|_| rng.gen_range(-1.0f32..1.0)).collect()).collect();
        let mut col = column(&rows[..4000], 2000);
        // `present`: rows below it have a vector in the column.
        let check = |col: &VectorColumn, set: &IdSet, present: u32, rows: &[Vec<f32>], rng: &mut rand::rngs::StdRng| {
            let ids: Vec<u32> = set.iter().filter(|i| *i < present).collect();
            for _ in 0..5 {
                let q: Vec<f32> = (0..dim).map(|_| rng.gen_range(-0.5f32..0.5)).collect();
                let n = scalar::dot_f32(&q, &q).sqrt();
                let unit: Vec<f32> = q.iter().map(|x| (f64::from(*x) / n) as f32).collect();
                let scan = Scan { query: &unit, k: 7, mode: VectorMode::I8, rescore: ids.len(), cosine: true, stop: None };
                let got: Vec<u32> = col.search_group(9, &scan, set, &|_| true).iter().map(|s| s.id).collect();
                let mut want: Vec<(f64, u32)> = ids
                    .iter()
                    .map(|&i| {
                        let r = &rows[i as usize];
                        (scalar::dot_f32(&q, r) / (n * scalar::dot_f32(r, r).sqrt()), i)
                    })
                    .collect();
                want.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                assert_eq!(got, want.iter().take(7).map(|w| w.1).collect::<Vec<_>>());
                // A filter refusing some members: applied before selection, never after.
                let even = |id: u32| id.is_multiple_of(2);
                let got: Vec<u32> = col.search_group(9, &scan, set, &even).iter().map(|s| s.id).collect();
                assert_eq!(got, want.iter().filter(|w| even(w.1)).take(7).map(|w| w.1).collect::<Vec<_>>());
            }
        };
        // Members 4000.. have no vector yet: the copy lists them as vectorless.
        let group = IdSet::from_sorted(&(0..4500).filter(|i| i % 3 == 0).collect::<Vec<_>>());
        check(&col, &group, 4000, &rows, &mut rng);
        // Later versions of the same set (shards shared where untouched): the vectorless members
        // get vectors, new members join (the copy lacks them), some old members leave.
        for (i, r) in rows.iter().enumerate().skip(4000) {
            col.insert(i as u32, Arc::from(r.as_slice()));
        }
        let mut grown = group.clone();
        for i in (4500..6000).filter(|i| i % 3 == 0) {
            grown.insert(i);
        }
        for i in (0..6000).filter(|i| i % 7 == 0) {
            grown.remove(i);
        }
        check(&col, &grown, 6000, &rows, &mut rng);
        let mut far = grown.clone();
        far.insert(70_000);
        check(&col, &far, 6000, &rows, &mut rng);
        // Mostly new: the copy is rebuilt.
        let other = IdSet::from_sorted(&(0..6000).filter(|i| i % 3 == 1).collect::<Vec<_>>());
        check(&col, &other, 6000, &rows, &mut rng);
    }

    #[test]
    fn quantized_short_lists_keep_recall_on_clustered_unit_vectors() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let (dim, n) = (64, 20_000);
        let unit = |v: Vec<f32>| {
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / n).collect::<Vec<f32>>()
        };
        let centers: Vec<Vec<f32>> = (0..50).map(|_| unit((0..dim).map(|_| rng.gen_range(-1.0..1.0)).collect())).collect();
        let rows: Vec<Vec<f32>> = (0..n).map(|i| unit(centers[i % 50].iter().map(|c| c + rng.gen_range(-0.3..0.3)).collect())).collect();
        let col = column(&rows, n);
        let mut hits = 0;
        for center in centers.iter().take(20) {
            let q = unit(center.iter().map(|c| c + rng.gen_range(-0.3..0.3)).collect());
            let want = brute(&rows, &q, 10, |_| true);
            for mode in [VectorMode::F16, VectorMode::I8] {
                let got = col.search(&Scan { query: &q, k: 10, mode, rescore: 100, cosine: false, stop: None }, &|_| true);
                hits += got.iter().filter(|s| want.contains(&s.id)).count();
            }
        }
        assert!(hits as f64 / 400.0 >= 0.99, "recall {}", hits as f64 / 400.0);
    }
}
