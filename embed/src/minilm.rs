//! all-`MiniLM`-L6-v2 with candle: BERT forward pass, mean pooling over the attention mask, L2
//! normalisation. The tokenizer is the model's own `tokenizer.json`, truncating at 256 word pieces
//! (sentence-transformers' `max_seq_length`) and padding each batch to its longest text.

use crate::{EmbedError, Embedder};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use std::path::{Path, PathBuf};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// Word pieces kept per text (special tokens included), as sentence-transformers does.
pub const MAX_WORD_PIECES: usize = 256;
/// Texts per forward pass: long enough to use both cores, short enough to bound padding.
const BATCH: usize = 64;

/// The `MiniLM` embedder.
pub struct MiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
}

fn bad(path: &Path, e: impl std::fmt::Display) -> EmbedError {
    EmbedError::BadFile { path: path.to_owned(), message: e.to_string() }
}

fn infer(e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Inference(e.to_string())
}

impl MiniLm {
    /// The weights file name.
    pub const WEIGHTS: &'static str = "model.safetensors";

    /// Whether `dir` holds the three files `MiniLM` needs.
    pub fn present(dir: &Path) -> bool {
        [Self::WEIGHTS, "tokenizer.json", "config.json"].iter().all(|f| dir.join(f).is_file())
    }

    /// Loads the tokenizer with engram's truncation and padding.
    pub fn load_tokenizer(dir: &Path) -> Result<Tokenizer, EmbedError> {
        let path = dir.join("tokenizer.json");
        if !path.is_file() {
            return Err(EmbedError::MissingFiles { embedder: "minilm", dir: dir.to_owned() });
        }
        let mut tokenizer = Tokenizer::from_file(&path).map_err(|e| bad(&path, e))?;
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: MAX_WORD_PIECES, ..TruncationParams::default() }))
            .map_err(|e| bad(&path, e))?;
        tokenizer.with_padding(Some(PaddingParams { strategy: PaddingStrategy::BatchLongest, ..PaddingParams::default() }));
        Ok(tokenizer)
    }

    /// Loads the model from `dir` (`model.safetensors`, `config.json`, `tokenizer.json`).
    pub fn load(dir: &Path) -> Result<MiniLm, EmbedError> {
        if !Self::present(dir) {
            return Err(EmbedError::MissingFiles { embedder: "minilm", dir: dir.to_owned() });
        }
        let config_path = dir.join("config.json");
        let text = std::fs::read_to_string(&config_path).map_err(|e| bad(&config_path, e))?;
        let config: Config = serde_json::from_str(&text).map_err(|e| bad(&config_path, e))?;
        let weights: PathBuf = dir.join(Self::WEIGHTS);
        let bytes = std::fs::read(&weights).map_err(|e| bad(&weights, e))?;
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &device).map_err(|e| bad(&weights, e))?;
        let model = BertModel::load(vb, &config).map_err(|e| bad(&weights, e))?;
        Ok(MiniLm { model, tokenizer: Self::load_tokenizer(dir)?, device })
    }

    /// The word-piece ids of `text` as the model sees them (special tokens included, truncated).
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let enc = self.tokenizer.encode(text, true).map_err(infer)?;
        Ok(enc.get_ids().to_vec())
    }

    /// Sentence vectors of already tokenized inputs (each with its special tokens).
    pub fn embed_ids(&self, inputs: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let longest = inputs.iter().map(Vec::len).max().unwrap_or(0);
        if inputs.is_empty() || longest == 0 {
            return Ok(vec![Vec::new(); inputs.len()]);
        }
        let mut ids = Vec::with_capacity(inputs.len() * longest);
        let mut mask = Vec::with_capacity(inputs.len() * longest);
        for input in inputs {
            ids.extend(input.iter().copied().chain(std::iter::repeat_n(0, longest - input.len())));
            mask.extend(std::iter::repeat_n(1u32, input.len()).chain(std::iter::repeat_n(0, longest - input.len())));
        }
        self.forward(ids, mask, inputs.len(), longest)
    }

    fn forward(&self, ids: Vec<u32>, mask: Vec<u32>, rows: usize, cols: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
        let ids = Tensor::from_vec(ids, (rows, cols), &self.device).map_err(infer)?;
        let mask = Tensor::from_vec(mask, (rows, cols), &self.device).map_err(infer)?;
        let types = ids.zeros_like().map_err(infer)?;
        let hidden = self.model.forward(&ids, &types, Some(&mask)).map_err(infer)?;
        // Mean over the tokens the mask keeps, then unit length.
        let m = mask.to_dtype(DType::F32).map_err(infer)?.unsqueeze(2).map_err(infer)?;
        let summed = hidden.broadcast_mul(&m).and_then(|x| x.sum(1)).map_err(infer)?;
        let counts = m.sum(1).map_err(infer)?;
        let mean = summed.broadcast_div(&counts).map_err(infer)?;
        let norm = mean.sqr().and_then(|x| x.sum_keepdim(1)).and_then(|x| x.sqrt()).map_err(infer)?;
        let unit = mean.broadcast_div(&norm).map_err(infer)?;
        unit.to_vec2::<f32>().map_err(infer)
    }
}

impl Embedder for MiniLm {
    fn name(&self) -> &'static str {
        "minilm"
    }

    fn version(&self) -> &'static str {
        "all-MiniLM-L6-v2"
    }

    fn dim(&self) -> usize {
        384
    }

    /// Batches of 64, longest texts together (less padding); results in input order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(texts[i].len()));
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            let encodings = self.tokenizer.encode_batch(batch, true).map_err(infer)?;
            let cols = encodings.first().map_or(0, tokenizers::Encoding::len);
            let mut ids = Vec::with_capacity(chunk.len() * cols);
            let mut mask = Vec::with_capacity(chunk.len() * cols);
            for e in &encodings {
                ids.extend_from_slice(e.get_ids());
                mask.extend_from_slice(e.get_attention_mask());
            }
            let vectors = self.forward(ids, mask, chunk.len(), cols)?;
            for (&i, v) in chunk.iter().zip(vectors) {
                out[i] = v;
            }
        }
        Ok(out)
    }
}
