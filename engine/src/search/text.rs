//! The tokenizer of keyword search: Unicode word boundaries (UAX #29), lower-casing, then the
//! Snowball English stemmer, so "Streaming", "streams" and "stream" meet on one term.

use rust_stemmers::{Algorithm, Stemmer};
use std::sync::OnceLock;
use unicode_segmentation::UnicodeSegmentation;

fn stemmer() -> &'static Stemmer {
    static S: OnceLock<Stemmer> = OnceLock::new();
    S.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// Longest token kept, in bytes (longer ones are noise: hashes, base64, URLs run together).
const TOKEN_BYTES_MAX: usize = 64;

/// The terms of `text`, in order, repeats kept.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for w in text.unicode_words() {
        if w.len() > TOKEN_BYTES_MAX {
            continue;
        }
        let lower = w.to_lowercase();
        // Only words with letters have stems; numbers and codes ("0042", "v2") pass as they are.
        if lower.bytes().any(|b| b.is_ascii_digit()) {
            out.push(lower);
        } else {
            out.push(stemmer().stem(&lower).into_owned());
        }
    }
    out
}

/// `terms` grouped: each distinct term with its count, sorted by term.
pub fn term_counts(text: &str) -> Vec<(String, u32)> {
    let mut t = terms(text);
    t.sort_unstable();
    let mut out: Vec<(String, u32)> = Vec::new();
    for term in t {
        match out.last_mut() {
            Some((last, n)) if *last == term => *n += 1,
            _ => out.push((term, 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_fold_case_and_stem() {
        assert_eq!(terms("We switched to Kinesis for event-streaming!"), vec!["we", "switch", "to", "kinesi", "for", "event", "stream"]);
        assert_eq!(terms("Streams STREAMING streamed"), vec!["stream", "stream", "stream"]);
        // Non-Latin scripts split on word boundaries too; punctuation is dropped.
        assert_eq!(terms("Größe — naïve, 東京"), vec!["größe", "naïv", "東", "京"]);
        assert_eq!(term_counts("a b a"), vec![("a".to_owned(), 2), ("b".to_owned(), 1)]);
        assert!(terms(&"x".repeat(100)).is_empty());
        assert_eq!(terms("INC-0042 runs v2.10"), vec!["inc", "0042", "run", "v2.10"]);
    }
}
