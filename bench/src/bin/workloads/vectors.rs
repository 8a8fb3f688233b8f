//! W5: exact top-10 over the entity vectors, per scan mode, with recall@10 against an independent
//! scalar brute force (plain loops, f64 accumulation, no SIMD crate).

use rayon::prelude::*;
use std::path::Path;

/// Reads a file of little-endian f32 rows.
pub fn read_f32(path: &Path, dim: usize) -> Result<Vec<f32>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() % (dim * 4) != 0 {
        return Err(format!("{}: {} bytes is not a whole number of {dim}-float rows", path.display(), bytes.len()));
    }
    Ok(bytes.chunks_exact(4).map(|w| f32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect())
}

/// The ids of the 10 rows with the largest inner product with `q` (ties: lower id).
pub fn brute_top10(rows: &[f32], dim: usize, q: &[f32]) -> Vec<u32> {
    let mut best: Vec<(f64, u32)> = Vec::with_capacity(11);
    for (i, r) in rows.chunks_exact(dim).enumerate() {
        let mut s = 0f64;
        for (a, b) in r.iter().zip(q) {
            s += f64::from(*a) * f64::from(*b);
        }
        if best.len() < 10 || s > best[best.len() - 1].0 {
            let at = best.partition_point(|(t, _)| *t >= s);
            best.insert(at, (s, i as u32));
            best.truncate(10);
        }
    }
    best.into_iter().map(|(_, i)| i).collect()
}

/// Brute-force answers for the first `n` queries, on all cores.
pub fn reference(rows: &[f32], dim: usize, queries: &[f32], n: usize) -> Vec<Vec<u32>> {
    queries.par_chunks_exact(dim).take(n).map(|q| brute_top10(rows, dim, q)).collect()
}

/// Mean fraction of the reference's ids found.
pub fn recall(got: &[Vec<u32>], want: &[Vec<u32>]) -> f64 {
    let hits: usize = got.iter().zip(want).map(|(g, w)| g.iter().filter(|x| w.contains(x)).count()).sum();
    hits as f64 / (want.len() * 10).max(1) as f64
}
