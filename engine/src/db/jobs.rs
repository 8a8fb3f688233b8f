//! The write jobs the commit path runs: a batch with the vectors its embedder computed, and
//! what a job hands back.

use super::commit::{Applied, JobContext};
use crate::error::Error;
use crate::ids::ClaimId;
use crate::state::State;
use crate::write::apply::apply_batch;
use crate::write::batch::WriteBatch;
use crate::write::mutation::encode_batch;
use std::sync::Arc;

/// Batches of up to this many operations are combined with concurrent writers' batches (cloned
/// into the group); larger ones commit alone, borrowed, where a group would save nothing.
pub(super) const QUEUED_OPS_MAX: usize = 1024;

/// A job's output, of the type its caller gave it.
pub(super) fn take_out<R: 'static>(out: Box<dyn std::any::Any + Send>) -> R {
    match out.downcast::<R>() {
        Ok(r) => *r,
        Err(_) => unreachable!("a job's output has the type its caller gave it"),
    }
}

/// Vectors to write with `batch`, by operation index: its entity names and claim texts that come
/// without a vector, embedded in one call. `None` when there are none.
pub(super) fn embed_batch(batch: &WriteBatch, embedder: &dyn engram_embed::Embedder) -> Result<Option<Arc<OpVectors>>, Error> {
    use crate::write::batch::{ClaimRef, EntityRef, Op, VectorTarget};
    // Vectors the batch brings itself, by external id.
    let (mut given_entities, mut given_claims) = (std::collections::HashSet::new(), std::collections::HashSet::new());
    for op in &batch.ops {
        match op {
            Op::SetVector { target: VectorTarget::Entity(EntityRef::Ext(x)), .. } => given_entities.insert(x.as_str()),
            Op::SetVector { target: VectorTarget::Claim(ClaimRef::Ext(x)), .. } => given_claims.insert(x.as_str()),
            _ => false,
        };
    }
    // (op index, text): entity names and claim texts with no vector in the batch.
    let mut wanted: Vec<(usize, &str)> = Vec::new();
    for (i, op) in batch.ops.iter().enumerate() {
        match op {
            Op::UpsertEntity(u) if !given_entities.contains(u.ext_id.as_str()) => wanted.push((i, &u.name)),
            Op::AddClaim(c) => {
                let named = c.ext_id.as_deref().is_some_and(|x| given_claims.contains(x));
                if let (Some(t), false) = (&c.text, named) {
                    wanted.push((i, t));
                }
            }
            _ => {}
        }
    }
    if wanted.is_empty() {
        return Ok(None);
    }
    let texts: Vec<&str> = wanted.iter().map(|(_, t)| *t).collect();
    let vectors = embed_directed(embedder, &texts)?;
    Ok(Some(Arc::new(wanted.iter().map(|(i, _)| *i).zip(vectors).filter_map(|(i, v)| Some((i, v?))).collect())))
}

/// `texts` embedded, `None` for one the embedder gives no direction: the hash embedder's all-zero
/// vector for a text without words ("…", an emoji). It is stored as no vector, as a client's
/// all-zero vector would be refused.
pub(super) fn embed_directed(embedder: &dyn engram_embed::Embedder, texts: &[&str]) -> Result<Vec<Option<Vec<f32>>>, Error> {
    Ok(embedder.embed(texts)?.into_iter().map(|v| v.iter().any(|x| *x != 0.0).then_some(v)).collect())
}

/// Embedded vectors by operation index.
pub(super) type OpVectors = std::collections::HashMap<usize, Vec<f32>>;

/// The job of `Database::write`: applies `batch`, completed with `SetVector` operations for the
/// embedded vectors (new entities only; existing ones keep theirs; new claims get the next dense
/// ids in operation order).
pub(super) fn apply_write(
    st: &mut State,
    cx: &JobContext<'_>,
    batch: &WriteBatch,
    vectors: Option<&Arc<OpVectors>>,
    encoded: Option<&[u8]>,
) -> Result<Applied, Error> {
    use crate::write::batch::{ClaimRef, EntityRef, Op, VectorTarget};
    let Some(by_op) = vectors else {
        let created = apply_batch(st, batch, cx.now, cx.limits)?;
        let record = match (cx.log, encoded) {
            (false, _) => Vec::new(),
            (true, Some(record)) => record.to_vec(),
            (true, None) => encode_batch(batch),
        };
        return Ok(Applied::wrote(record, created));
    };
    let ws = st.catalog.workspace(&batch.workspace);
    let mut next_claim = st.claims.len() as u32;
    let mut out = batch.clone();
    for (i, op) in batch.ops.iter().enumerate() {
        let vector = by_op.get(&i);
        match op {
            Op::UpsertEntity(u) => {
                let exists = ws.is_some_and(|w| st.entities.find_ext(w, &u.ext_id).is_some());
                if let (Some(v), false) = (vector, exists) {
                    out.push(Op::SetVector { target: VectorTarget::Entity(EntityRef::Ext(u.ext_id.clone())), vector: v.clone() });
                }
            }
            Op::AddClaim(_) => {
                if let Some(v) = vector {
                    out.push(Op::SetVector { target: VectorTarget::Claim(ClaimRef::Id(ClaimId(next_claim))), vector: v.clone() });
                }
                next_claim += 1;
            }
            _ => {}
        }
    }
    let created = apply_batch(st, &out, cx.now, cx.limits)?;
    Ok(Applied::wrote(if cx.log { encode_batch(&out) } else { Vec::new() }, created))
}
