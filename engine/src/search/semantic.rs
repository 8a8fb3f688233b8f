//! The semantic path: top-k entities (by name vector) or claims (by text vector) for a query
//! vector, scoped to one workspace and to what the read's visibility lets it see.

use crate::error::ReadError;
use crate::ids::{ClaimId, EntityId};
use crate::index::vectors::{Scan, Scored, VectorColumn, VectorMode};
use crate::read::view::WorkspaceView;
use crate::read::visibility::Visibility;

/// The vector recall searches with, from the whole question's and that of what it asks (the
/// question without the names the graph answers for, `WorkspaceView::question_to_embed`): their
/// mean, at unit length, so a name counts half. Measured on conversations (`engram replay`,
/// `bench/README.md`): the names alone outweigh what is asked, and what is asked alone loses what a
/// name says to a small static embedder. Either vector alone when the other is missing.
pub fn question_vector(whole: Option<Vec<f32>>, asked: Option<Vec<f32>>) -> Option<Vec<f32>> {
    match (whole, asked) {
        (Some(w), Some(a)) if w.len() == a.len() => {
            let sum: Vec<f32> = w.iter().zip(&a).map(|(x, y)| x + y).collect();
            let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
            // Opposite vectors say nothing together: the whole question's then.
            Some(if norm > 0.0 { sum.into_iter().map(|x| x / norm).collect() } else { w })
        }
        (w, a) => w.or(a),
    }
}

/// How rows are compared with the query.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Metric {
    /// Inner product (the cosine, for unit-length vectors as embedders emit them).
    #[default]
    Dot,
    /// Cosine similarity, whatever the vectors' lengths.
    Cosine,
}

/// Options of a vector search.
#[derive(Clone, Debug, PartialEq)]
pub struct VectorOptions {
    /// How many results (default 10).
    pub k: usize,
    /// Which copy to scan (default exact f32).
    pub mode: VectorMode,
    /// Short-list length rescored in f32 by the quantized modes (default 100; at least `k`).
    pub rescore: usize,
    /// What the search may return (default: what is current now).
    pub visibility: Visibility,
    /// Inner product (default) or cosine.
    pub metric: Metric,
    /// Entity searches only: only entities of these types (empty = any). The type's members
    /// are then scanned directly, so a rare type costs a fraction of a full scan.
    pub entity_types: Vec<String>,
}

impl Default for VectorOptions {
    fn default() -> Self {
        VectorOptions {
            k: 10,
            mode: VectorMode::F32,
            rescore: 100,
            visibility: Visibility::current(),
            metric: Metric::Dot,
            entity_types: Vec::new(),
        }
    }
}

/// Results above this many are refused (a search is a ranking, not an export).
pub const VECTOR_K_MAX: usize = 100_000;

impl WorkspaceView<'_> {
    fn check_query(&self, query: &[f32], opts: &VectorOptions) -> Result<(), ReadError> {
        let dim = self.st.settings.vector_dim.map(|d| d as usize);
        if dim != Some(query.len()) {
            return Err(ReadError::VectorDimension { expected: dim, got: query.len() });
        }
        if query.iter().any(|v| !v.is_finite()) {
            return Err(ReadError::InvalidParameter { name: "vector", reason: "components must be finite" });
        }
        if opts.metric == Metric::Cosine && query.iter().all(|v| *v == 0.0) {
            return Err(ReadError::InvalidParameter { name: "vector", reason: "a zero vector has no cosine" });
        }
        if opts.k > VECTOR_K_MAX {
            return Err(ReadError::InvalidParameter { name: "k", reason: "at most 100,000" });
        }
        crate::read::scope::ReadLimits::check("vector_k_max", self.cx.limits.vector_k_max, opts.k, "the vector search's k")?;
        // One check before the scan: the scan itself is one pass over the rows on rayon.
        self.cx.check().map_err(ReadError::Interrupted)
    }

    /// The `opts.k` visible entities of this workspace whose name vectors have the largest inner
    /// product with `query` (ties: lower id first).
    pub fn search_entity_vectors(&self, query: &[f32], opts: &VectorOptions) -> Result<Vec<(EntityId, f32)>, ReadError> {
        self.check_query(query, opts)?;
        let vis = self.vis(&opts.visibility);
        let st = self.st;
        let ws = self.ws;
        let accept = |e: u32| *st.entities.ws.get(e as usize) == ws && vis.entity(st, e);
        if !opts.entity_types.is_empty() {
            // The group's cache key: the sorted type ids (one type: the common case).
            let mut key_types: Vec<u16> = Vec::new();
            for t in &opts.entity_types {
                if let Some(tid) = st.catalog.types.get(&crate::normalize::vocabulary_key(t)) {
                    key_types.push(tid);
                }
            }
            key_types.sort_unstable();
            key_types.dedup();
            let key = key_types.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, t| (h ^ u64::from(*t)).wrapping_mul(0x100_0000_01b3));
            let set_of = |t: &u16| st.bitmaps.entities_by_type.get(&crate::ids::TypeId(*t)).cloned().unwrap_or_default();
            let members = match key_types.as_slice() {
                [one] => set_of(one),
                many => many.iter().fold(crate::index::bitmap::IdSet::new(), |all, t| all.or(&set_of(t))),
            };
            let q = ranked_query(query, opts);
            let stop = || self.cx.check().is_err();
            let hits = st.vectors.entity.search_group(key, &scan_for(&q, opts, self.stop(&stop)), &members, &accept);
            self.cx.check().map_err(ReadError::Interrupted)?;
            return Ok(hits.into_iter().map(|s| (EntityId(s.id), s.score)).collect());
        }
        let members = st.bitmaps.entities_by_ws.get(&ws);
        let stop = || self.cx.check().is_err();
        let size = (st.entities.len(), members.map(crate::index::bitmap::IdSet::len));
        let hits = scan(&st.vectors.entity, query, opts, size, self.stop(&stop), &accept, || {
            members.map(|m| m.iter().filter(|e| accept(*e)).collect()).unwrap_or_default()
        });
        // A stopped scan's partial result is never returned.
        self.cx.check().map_err(ReadError::Interrupted)?;
        Ok(hits.into_iter().map(|s| (EntityId(s.id), s.score)).collect())
    }

    /// The `opts.k` visible claims of this workspace whose text vectors have the largest inner
    /// product with `query` (ties: lower id first).
    pub fn search_claim_vectors(&self, query: &[f32], opts: &VectorOptions) -> Result<Vec<(ClaimId, f32)>, ReadError> {
        self.check_query(query, opts)?;
        let vis = self.vis(&opts.visibility);
        let st = self.st;
        let ws = self.ws;
        // A claim whose text is masked here takes no part: its vector is of the clear text.
        let masked = self.masked.map(|m| &m.claim_text);
        let accept = |c: u32| {
            (c as usize) < st.claims.len() && st.claim_ws(c) == ws && vis.claim(st, c) && masked.is_none_or(|m| !m.contains_key(&c))
        };
        let members = st.bitmaps.claims_by_ws.get(&ws);
        let stop = || self.cx.check().is_err();
        let size = (st.claims.len(), members.map(crate::index::bitmap::IdSet::len));
        let hits = scan(&st.vectors.claim, query, opts, size, self.stop(&stop), &accept, || {
            members.map(|m| m.iter().filter(|c| accept(*c)).collect()).unwrap_or_default()
        });
        self.cx.check().map_err(ReadError::Interrupted)?;
        Ok(hits.into_iter().map(|s| (ClaimId(s.id), s.score)).collect())
    }

    /// The scan's stop check, when anything can interrupt this view's reads.
    fn stop<'s>(&self, check: &'s (dyn Fn() -> bool + Sync)) -> Option<&'s (dyn Fn() -> bool + Sync)> {
        self.cx.interruptible().then_some(check)
    }
}

/// The query as the scan ranks it: for cosine, unit length (the scan then divides each row's
/// product by the row's norm).
fn ranked_query<'q>(query: &'q [f32], opts: &VectorOptions) -> std::borrow::Cow<'q, [f32]> {
    if opts.metric == Metric::Cosine {
        let n = crate::index::kernels::dot_f32(query, query).sqrt();
        std::borrow::Cow::Owned(query.iter().map(|x| x / n).collect())
    } else {
        std::borrow::Cow::Borrowed(query)
    }
}

/// The scan `opts` ask for, over a query from `ranked_query`.
fn scan_for<'q>(query: &'q [f32], opts: &VectorOptions, stop: Option<&'q (dyn Fn() -> bool + Sync)>) -> Scan<'q> {
    Scan { query, k: opts.k, mode: opts.mode, rescore: opts.rescore.max(opts.k), cosine: opts.metric == Metric::Cosine, stop }
}

/// A full scan with a lazy filter when the workspace holds most rows; otherwise the workspace's
/// own ids, filtered first.
fn scan(
    col: &VectorColumn,
    query: &[f32],
    opts: &VectorOptions,
    (rows, members): (usize, Option<u64>),
    stop: Option<&(dyn Fn() -> bool + Sync)>,
    accept: &(dyn Fn(u32) -> bool + Sync),
    ids: impl FnOnce() -> Vec<u32>,
) -> Vec<Scored> {
    let q = ranked_query(query, opts);
    let scan = scan_for(&q, opts, stop);
    let members = members.unwrap_or(0) as usize;
    if members == 0 {
        return Vec::new();
    }
    if members * 4 < rows {
        col.search_among(&scan, &ids())
    } else {
        col.search(&scan, accept)
    }
}

#[cfg(test)]
mod tests {
    use super::question_vector;

    /// The mean at unit length; either alone when the other is missing or of another length;
    /// the whole question's when the two cancel out.
    #[test]
    fn the_question_vector_is_the_mean_of_the_two() {
        let half = std::f32::consts::FRAC_1_SQRT_2;
        assert_eq!(question_vector(Some(vec![1.0, 0.0]), Some(vec![0.0, 1.0])), Some(vec![half, half]));
        assert_eq!(question_vector(Some(vec![0.6, 0.8]), Some(vec![0.6, 0.8])), Some(vec![0.6, 0.8]));
        assert_eq!(question_vector(Some(vec![1.0, 0.0]), None), Some(vec![1.0, 0.0]));
        assert_eq!(question_vector(None, Some(vec![0.0, 1.0])), Some(vec![0.0, 1.0]));
        assert_eq!(question_vector(Some(vec![1.0, 0.0]), Some(vec![1.0])), Some(vec![1.0, 0.0]));
        assert_eq!(question_vector(Some(vec![1.0, 0.0]), Some(vec![-1.0, 0.0])), Some(vec![1.0, 0.0]));
        assert_eq!(question_vector(None, None), None);
    }
}
