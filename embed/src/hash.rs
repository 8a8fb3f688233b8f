//! Feature hashing: words, word bigrams and character 3–5-grams (of each word with boundary marks)
//! hashed into the dimension with a sign bit, weighted, L2-normalised. Lexical, not semantic: texts
//! that share words and spellings land close; paraphrases with other words do not.

use crate::{normalize, EmbedError, Embedder};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// The hashing embedder.
#[derive(Clone, Debug)]
pub struct HashEmbedder {
    dim: usize,
}

const WORD: f32 = 1.0;
const BIGRAM: f32 = 0.7;
const CHARGRAM: f32 = 0.35;

impl HashEmbedder {
    /// An embedder into `dim` dimensions (at least 1).
    pub fn new(dim: usize) -> HashEmbedder {
        HashEmbedder { dim: dim.max(1) }
    }

    fn add(&self, v: &mut [f32], feature: &[u8], seed: u64, weight: f32) {
        let h = xxh3_64_with_seed(feature, seed);
        let i = (h % self.dim as u64) as usize;
        v[i] += if h >> 63 == 0 { weight } else { -weight };
    }

    /// One text's vector.
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; self.dim];
        let lower = text.to_lowercase();
        let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
        let mut buf = String::new();
        for (i, w) in words.iter().enumerate() {
            self.add(&mut v, w.as_bytes(), 1, WORD);
            if let Some(next) = words.get(i + 1) {
                buf.clear();
                buf.push_str(w);
                buf.push(' ');
                buf.push_str(next);
                self.add(&mut v, buf.as_bytes(), 2, BIGRAM);
            }
            buf.clear();
            buf.push('<');
            buf.push_str(w);
            buf.push('>');
            let chars: Vec<(usize, char)> = buf.char_indices().collect();
            for n in 3..=5 {
                for start in 0..chars.len().saturating_sub(n - 1) {
                    let from = chars[start].0;
                    let to = chars.get(start + n).map_or(buf.len(), |c| c.0);
                    self.add(&mut v, &buf.as_bytes()[from..to], 3, CHARGRAM);
                }
            }
        }
        normalize(&mut v);
        v
    }
}

impl Embedder for HashEmbedder {
    fn name(&self) -> &'static str {
        "hash"
    }

    fn version(&self) -> &'static str {
        "1"
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cosine;

    #[test]
    fn unit_norm_deterministic_and_lexical() {
        let h = HashEmbedder::new(384);
        let a = h.embed_one("AuthService streams events with Kinesis");
        assert_eq!(a.len(), 384);
        assert!((a.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
        assert_eq!(a, h.embed_one("AuthService streams events with Kinesis"));
        let near = h.embed_one("authservice streams its events to kinesis");
        let far = h.embed_one("the billing ledger closes monthly");
        assert!(cosine(&a, &near) > cosine(&a, &far) + 0.3, "{} vs {}", cosine(&a, &near), cosine(&a, &far));
        assert!(h.embed_one("").iter().all(|x| *x == 0.0));
        assert_eq!(HashEmbedder::new(64).embed_one("ünïcode wörds").len(), 64);
    }
}
