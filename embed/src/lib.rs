//! Built-in text embedders, so an agent can write text and get vectors with no network and no
//! model hub:
//!
//! - [`MiniLm`]: sentence-transformers all-`MiniLM`-L6-v2 run with candle (BERT, mean pooling over the
//!   attention mask, L2 normalisation), truncating at 256 word pieces as sentence-transformers does;
//! - [`StaticModel`]: a static table distilled from `MiniLM` by engram itself (`Model2Vec`'s recipe:
//!   every vocabulary token through the model, PCA, Zipf-based SIF weights); inference is tokenize
//!   and a mean of rows;
//! - [`HashEmbedder`]: feature hashing of words, word bigrams and character n-grams; lexical, not
//!   semantic, and needs no files.
//!
//! [`select`] picks one: the configured name, else `MiniLM` when its files are present, else the
//! static table when present, else hashing, and says why.

mod hash;
#[cfg(feature = "models")]
mod minilm;
mod pairs;
#[cfg(feature = "models")]
mod pca;
#[cfg(feature = "models")]
mod static_model;
#[cfg(feature = "models")]
mod wordpiece;

pub use hash::HashEmbedder;
#[cfg(feature = "models")]
pub use minilm::{MiniLm, MAX_WORD_PIECES};
pub use pairs::{pair_similarities, spearman, HELD_PAIRS};
#[cfg(feature = "models")]
pub use static_model::{distill, DistillReport, StaticModel, STATIC_FILE};

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why embedding failed.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The model's files are not where they were looked for.
    #[error("{embedder} model files not found in {dir}: run scripts/fetch-model.sh (or set ENGRAM_MODEL_DIR / --model-dir)")]
    MissingFiles {
        /// Which embedder.
        embedder: &'static str,
        /// Where engram looked.
        dir: PathBuf,
    },
    /// A model file is present but unreadable or malformed.
    #[error("{path}: {message}")]
    BadFile {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        message: String,
    },
    /// The model failed while running.
    #[error("inference failed: {0}")]
    Inference(String),
    /// An unknown embedder name.
    #[error("unknown embedder `{0}` (minilm, static, hash)")]
    Unknown(String),
    /// A model embedder in a build without the `models` feature.
    #[error("embedder `{0}` is not in this build (built without the `models` feature; hash is)")]
    NotBuilt(String),
}

/// A text embedder.
pub trait Embedder: Send + Sync {
    /// Short name: `minilm`, `static`, `hash`.
    fn name(&self) -> &'static str;
    /// Version of the model behind the name (a file hash prefix or a scheme version).
    fn version(&self) -> &'static str;
    /// Output dimension.
    fn dim(&self) -> usize;
    /// One vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// `name/version/dim`: what a database records to refuse vectors from another embedder.
    fn id(&self) -> String {
        format!("{}/{}/{}", self.name(), self.version(), self.dim())
    }
}

/// Where engram looks for the model when nothing is configured: `$ENGRAM_MODEL_DIR`, else
/// `models/all-minilm-l6-v2` under the current folder, else under the folder of the executable's
/// workspace (so `cargo run` and `cargo test` from any crate find what `scripts/fetch-model.sh`
/// installed).
pub fn default_model_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("ENGRAM_MODEL_DIR") {
        return d.into();
    }
    let rel = Path::new("models").join("all-minilm-l6-v2");
    let mut candidates = vec![rel.clone()];
    if let Ok(exe) = std::env::current_exe() {
        candidates.extend(exe.ancestors().skip(1).map(|a| a.join(&rel)));
    }
    candidates.extend(Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().map(|a| a.join(&rel)));
    candidates.into_iter().find(|c| models_present(c)).unwrap_or(rel)
}

/// The embedder to use and one line saying which and why.
pub fn select(name: Option<&str>, model_dir: Option<&Path>, hash_dim: usize) -> Result<(Arc<dyn Embedder>, String), EmbedError> {
    let dir = model_dir.map_or_else(default_model_dir, Path::to_path_buf);
    select_in(name, &dir, hash_dim)
}

/// Whether `dir` holds model files this build can load.
#[cfg(feature = "models")]
fn models_present(dir: &Path) -> bool {
    dir.join(MiniLm::WEIGHTS).exists() || dir.join(STATIC_FILE).exists()
}

/// Whether `dir` holds model files this build can load: none, built without models.
#[cfg(not(feature = "models"))]
fn models_present(_dir: &Path) -> bool {
    false
}

/// `select` without models: hashing, or an error naming the missing feature.
#[cfg(not(feature = "models"))]
fn select_in(name: Option<&str>, dir: &Path, hash_dim: usize) -> Result<(Arc<dyn Embedder>, String), EmbedError> {
    match name {
        Some("hash") => Ok((Arc::new(HashEmbedder::new(hash_dim)), format!("embedder hash (configured), {hash_dim} dimensions"))),
        Some(other @ ("minilm" | "static")) => Err(EmbedError::NotBuilt(other.to_owned())),
        Some(other) => Err(EmbedError::Unknown(other.to_owned())),
        None => Ok((
            Arc::new(HashEmbedder::new(hash_dim)),
            format!("embedder hash ({hash_dim} dimensions, lexical): built without models, {} not read", dir.display()),
        )),
    }
}

#[cfg(feature = "models")]
fn select_in(name: Option<&str>, dir: &Path, hash_dim: usize) -> Result<(Arc<dyn Embedder>, String), EmbedError> {
    let dir = dir.to_path_buf();
    match name {
        Some("minilm") => Ok((Arc::new(MiniLm::load(&dir)?), format!("embedder minilm (configured), from {}", dir.display()))),
        Some("static") => Ok((Arc::new(StaticModel::load(&dir)?), format!("embedder static (configured), from {}", dir.display()))),
        Some("hash") => Ok((Arc::new(HashEmbedder::new(hash_dim)), format!("embedder hash (configured), {hash_dim} dimensions"))),
        Some(other) => Err(EmbedError::Unknown(other.to_owned())),
        None if MiniLm::present(&dir) => {
            Ok((Arc::new(MiniLm::load(&dir)?), format!("embedder minilm: none configured and its files are in {}", dir.display())))
        }
        None if StaticModel::present(&dir) => Ok((
            Arc::new(StaticModel::load(&dir)?),
            format!("embedder static: none configured, no MiniLM weights, its table is in {}", dir.display()),
        )),
        None => Ok((
            Arc::new(HashEmbedder::new(hash_dim)),
            format!("embedder hash ({hash_dim} dimensions, lexical): none configured and no model files in {}", dir.display()),
        )),
    }
}

/// `f` over every text, in order: on one thread for small batches, across cores from 256 texts.
pub(crate) fn map_texts<T: Send>(texts: &[&str], f: impl Fn(&str) -> T + Sync) -> Vec<T> {
    use rayon::prelude::*;
    if texts.len() < 256 {
        texts.iter().map(|t| f(t)).collect()
    } else {
        texts.par_iter().map(|t| f(t)).collect()
    }
}

/// Scales `v` to unit length (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        for x in v.iter_mut() {
            *x /= n;
        }
    }
}

/// Cosine similarity of two vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}
