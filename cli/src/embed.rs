//! `engram embed` (vectors for texts, no database) and `engram embedder distill` (the static
//! table from `MiniLM`).

use crate::fail::{bug, fail, Failure};
use engram::embed::{self, Embedder};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

/// Prints each text's vector as a JSON array on its own line; the selection line goes to stderr.
pub fn embed_texts(name: Option<&str>, model_dir: Option<&Path>, dim: usize, texts: &[String]) -> Result<String, Failure> {
    let (embedder, why) = embed::select(name, model_dir, dim).map_err(fail)?;
    eprintln!("engram: {why}");
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embedder.embed(&refs).map_err(fail)?;
    let mut out = String::new();
    for v in vectors {
        out.push_str(&serde_json::to_string(&v).map_err(bug)?);
        out.push('\n');
    }
    Ok(out)
}

/// Gives `db` the embedder named by `name`, else the one its settings record (so a database
/// written with `MiniLM` embeds its queries with `MiniLM`), else none. Logs which, and why, to stderr.
pub fn attach(db: &engram::Database, name: Option<&str>, model_dir: Option<&Path>) -> Result<(), Failure> {
    if let Some(why) = db.use_embedder(name, model_dir).map_err(fail)? {
        eprintln!("engram: {why}");
    }
    Ok(())
}

/// Distills the static table into the model folder and reports how it tracks `MiniLM`.
pub fn distill(model_dir: Option<&Path>, dims: usize) -> Result<String, Failure> {
    let dir = model_dir.map_or_else(embed::default_model_dir, Path::to_path_buf);
    let minilm = embed::MiniLm::load(&dir).map_err(fail)?;
    eprintln!("engram: distilling a {dims}-dimension static table from MiniLM in {}", dir.display());
    let report = embed::distill(&minilm, &dir, dims).map_err(fail)?;
    let table = embed::StaticModel::load(&dir).map_err(fail)?;
    let a = embed::pair_similarities(&minilm).map_err(fail)?;
    let b = embed::pair_similarities(&table).map_err(fail)?;
    let rho = embed::spearman(&a, &b);
    // Speed on the held sentences, repeated: same texts, same machine, one run.
    let texts: Vec<&str> = embed::HELD_PAIRS.iter().flat_map(|p| [p.0, p.1]).cycle().take(640).collect();
    let t = Instant::now();
    minilm.embed(&texts).map_err(fail)?;
    let minilm_rate = texts.len() as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    for _ in 0..50 {
        table.embed(&texts).map_err(fail)?;
    }
    let static_rate = 50.0 * texts.len() as f64 / t.elapsed().as_secs_f64();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        serde_json::json!({"table": dir.join(embed::STATIC_FILE), "rows": report.rows, "dims": report.dims,
            "pca_variance_kept": report.variance_kept, "vocabulary_embed_seconds": report.embed_seconds,
            "spearman_vs_minilm_on_held_pairs": rho, "held_pairs": embed::HELD_PAIRS.len(),
            "minilm_sentences_per_second": minilm_rate, "static_sentences_per_second": static_rate,
            "speedup": static_rate / minilm_rate})
    );
    Ok(out)
}
