//! The static embedder: one row per vocabulary token, distilled from `MiniLM` by engram itself,
//! following the `Model2Vec` recipe: embed every token alone through the model, reduce the
//! dimension by PCA, weight each row by a smooth-inverse-frequency weight from the token's rank
//! (Zipf). Inference is tokenize + mean of rows + unit length. The table is `static.safetensors`
//! (tensor `embeddings`, rows × dims, f32) beside the model's `tokenizer.json`.

use crate::minilm::MiniLm;
use crate::{normalize, EmbedError, Embedder};
use std::collections::HashMap;
use std::path::Path;
use tokenizers::Tokenizer;

/// The table's file name.
pub const STATIC_FILE: &str = "static.safetensors";
/// `Model2Vec`'s SIF coefficient.
const SIF: f64 = 1e-4;

/// The static embedder.
pub struct StaticModel {
    tokenizer: Tokenizer,
    fast: crate::wordpiece::AsciiWordPiece,
    table: Vec<f32>,
    rows: usize,
    dim: usize,
}

fn bad(path: &Path, e: impl std::fmt::Display) -> EmbedError {
    EmbedError::BadFile { path: path.to_owned(), message: e.to_string() }
}

impl StaticModel {
    /// Whether `dir` holds the table and the tokenizer.
    pub fn present(dir: &Path) -> bool {
        dir.join(STATIC_FILE).is_file() && dir.join("tokenizer.json").is_file()
    }

    /// Loads the table and the tokenizer from `dir`.
    pub fn load(dir: &Path) -> Result<StaticModel, EmbedError> {
        if !Self::present(dir) {
            return Err(EmbedError::MissingFiles { embedder: "static", dir: dir.to_owned() });
        }
        let path = dir.join(STATIC_FILE);
        let bytes = std::fs::read(&path).map_err(|e| bad(&path, e))?;
        let tensors = safetensors::SafeTensors::deserialize(&bytes).map_err(|e| bad(&path, e))?;
        let t = tensors.tensor("embeddings").map_err(|e| bad(&path, e))?;
        let (rows, dim) = match (t.dtype(), t.shape()) {
            (safetensors::Dtype::F32, [r, d]) => (*r, *d),
            (dt, shape) => return Err(bad(&path, format!("`embeddings` is {dt:?} {shape:?}, expected F32 [rows, dims]"))),
        };
        let table: Vec<f32> = t.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        let tok_path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_file(&tok_path).map_err(|e| bad(&tok_path, e))?;
        // The model's file pads and truncates to 128 for the transformer; a mean of rows wants
        // neither (padding rows would pull every text towards the `[PAD]` row).
        tokenizer.with_padding(None);
        tokenizer.with_truncation(None).map_err(|e| bad(&tok_path, e))?;
        let fast = crate::wordpiece::AsciiWordPiece::new(&tokenizer).map_err(|e| bad(&tok_path, e))?;
        Ok(StaticModel { tokenizer, fast, table, rows, dim })
    }

    /// The token ids of `text` (no special tokens): the ASCII fast path, else the tokenizer.
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let mut ids = Vec::new();
        if !self.fast.ids(text, &mut ids) {
            ids = self.tokenizer.encode(text, false).map_err(|e| EmbedError::Inference(e.to_string()))?.get_ids().to_vec();
        }
        Ok(ids)
    }

    /// One text's vector: the mean of its tokens' rows, unit length (zero for no tokens).
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let ids = self.token_ids(text)?;
        let mut v = vec![0.0f32; self.dim];
        for &id in &ids {
            let id = id as usize;
            if id < self.rows {
                for (x, r) in v.iter_mut().zip(&self.table[id * self.dim..(id + 1) * self.dim]) {
                    *x += r;
                }
            }
        }
        normalize(&mut v);
        Ok(v)
    }
}

impl Embedder for StaticModel {
    fn name(&self) -> &'static str {
        "static"
    }

    fn version(&self) -> &'static str {
        "minilm-distilled-1"
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        crate::map_texts(texts, |t| self.embed_one(t)).into_iter().collect()
    }
}

/// What a distillation did.
#[derive(Clone, Debug)]
pub struct DistillReport {
    /// Rows (vocabulary size).
    pub rows: usize,
    /// Output dimension.
    pub dims: usize,
    /// Share of the variance the PCA kept.
    pub variance_kept: f64,
    /// Seconds spent embedding the vocabulary.
    pub embed_seconds: f64,
}

/// Distills a static table from `model` into `dir/static.safetensors`, `dims` wide.
pub fn distill(model: &MiniLm, dir: &Path, dims: usize) -> Result<DistillReport, EmbedError> {
    let tok_path = dir.join("tokenizer.json");
    let tokenizer = Tokenizer::from_file(&tok_path).map_err(|e| bad(&tok_path, e))?;
    let special = |t: &str| tokenizer.token_to_id(t).ok_or_else(|| bad(&tok_path, format!("no {t} token")));
    let (cls, sep) = (special("[CLS]")?, special("[SEP]")?);
    let rows = tokenizer.get_vocab_size(true);
    let started = std::time::Instant::now();
    let mut vectors = Vec::with_capacity(rows);
    let ids: Vec<u32> = (0..rows as u32).collect();
    for chunk in ids.chunks(512) {
        let inputs: Vec<Vec<u32>> = chunk.iter().map(|&id| vec![cls, id, sep]).collect();
        vectors.extend(model.embed_ids(&inputs)?);
    }
    let embed_seconds = started.elapsed().as_secs_f64();
    let d = model.dim();
    let (mut reduced, variance_kept) = crate::pca::reduce(&vectors, d, dims);
    // Zipf: a token's probability taken as proportional to 1 / (rank + 2), rank = vocabulary index
    // (WordPiece vocabularies list whole words by frequency); SIF weight = a / (a + p).
    let harmonic: f64 = (0..rows).map(|r| 1.0 / (r as f64 + 2.0)).sum();
    for (r, row) in reduced.iter_mut().enumerate() {
        let p = 1.0 / (r as f64 + 2.0) / harmonic;
        let w = (SIF / (SIF + p)) as f32;
        for x in row.iter_mut() {
            *x *= w;
        }
    }
    let dims = reduced.first().map_or(0, Vec::len);
    let bytes: Vec<u8> = reduced.iter().flat_map(|r| r.iter().flat_map(|x| x.to_le_bytes())).collect();
    let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![rows, dims], &bytes).map_err(|e| bad(dir, e))?;
    let mut meta = HashMap::new();
    meta.insert("source".to_owned(), "all-MiniLM-L6-v2, distilled by engram (PCA + Zipf SIF)".to_owned());
    let out = safetensors::serialize([("embeddings", view)], Some(meta)).map_err(|e| bad(dir, e))?;
    let path = dir.join(STATIC_FILE);
    let tmp = dir.join(format!("{STATIC_FILE}.tmp"));
    std::fs::write(&tmp, out).and_then(|()| std::fs::rename(&tmp, &path)).map_err(|e| bad(&path, e))?;
    Ok(DistillReport { rows, dims, variance_kept, embed_seconds })
}
