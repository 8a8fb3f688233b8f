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
        let mut prev: Option<&str> = None;
        let mut buf = String::new();
        let mut starts: Vec<usize> = Vec::new();
        for w in lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            self.add(&mut v, w.as_bytes(), 1, WORD);
            if let Some(p) = prev {
                buf.clear();
                buf.push_str(p);
                buf.push(' ');
                buf.push_str(w);
                self.add(&mut v, buf.as_bytes(), 2, BIGRAM);
            }
            prev = Some(w);
            buf.clear();
            buf.push('<');
            buf.push_str(w);
            buf.push('>');
            // Character n-grams over char boundaries (byte windows when the word is ASCII).
            starts.clear();
            starts.extend(buf.char_indices().map(|(i, _)| i));
            starts.push(buf.len());
            let chars = starts.len() - 1;
            for n in 3..=5 {
                for first in 0..chars.saturating_sub(n - 1) {
                    self.add(&mut v, &buf.as_bytes()[starts[first]..starts[first + n]], 3, CHARGRAM);
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

    /// Large batches are split across cores.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(crate::map_texts(texts, |t| self.embed_one(t)))
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
        let texts: Vec<String> = (0..600).map(|i| format!("text number {i} über")).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let batch = h.embed(&refs).expect("embeds");
        assert!(refs.iter().zip(&batch).all(|(t, v)| *v == h.embed_one(t)), "parallel batches equal one by one");
    }

    /// The n-gram windows equal a naive per-character construction.
    #[test]
    fn char_ngrams_match_a_naive_construction() {
        let h = HashEmbedder::new(4096);
        for word in ["kinesis", "über", "日本語テキスト", "ab"] {
            let mut want = vec![0.0f32; 4096];
            h.add(&mut want, word.as_bytes(), 1, WORD);
            let marked: Vec<char> = format!("<{word}>").chars().collect();
            for n in 3..=5 {
                for w in marked.windows(n) {
                    h.add(&mut want, w.iter().collect::<String>().as_bytes(), 3, CHARGRAM);
                }
            }
            normalize(&mut want);
            assert_eq!(h.embed_one(word), want, "{word}");
        }
    }
}
