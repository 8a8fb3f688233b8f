//! The tokenizer of keyword search: Unicode word boundaries (UAX #29), lower-casing, NLTK's English
//! stop words dropped (so "the" matches nothing and a fact sharing only "the" with a question
//! scores nothing), then the Snowball English stemmer, so "Streaming", "streams" and "stream" meet
//! on one term. A change here changes every index built with it: bump `TOKENIZER_VERSION`.

use rust_stemmers::{Algorithm, Stemmer};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::OnceLock;
use unicode_segmentation::UnicodeSegmentation;

fn stemmer() -> &'static Stemmer {
    static S: OnceLock<Stemmer> = OnceLock::new();
    S.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// The version of what `terms` does. The keyword index persisted beside a snapshot is named with
/// it, so an index built by another tokenizer is not used (it is rebuilt from the columns).
pub const TOKENIZER_VERSION: u32 = 2;

/// NLTK's English stop words (the `stop-words` crate), as a set.
pub(crate) fn stop_words() -> &'static std::collections::HashSet<&'static str> {
    static S: OnceLock<std::collections::HashSet<&'static str>> = OnceLock::new();
    S.get_or_init(|| stop_words::get("en").iter().copied().collect())
}

/// Longest token kept, in bytes (longer ones are noise: hashes, base64, URLs run together).
const TOKEN_BYTES_MAX: usize = 64;

/// Words remembered per thread with their stems (`stem`); the table starts over when full.
const STEM_CACHE_MAX: usize = 1 << 16;

/// The stem of lower-cased word `lower`. Text repeats its words (an index build stems the same
/// few thousand words millions of times, and the Snowball stemmer was most of a build), so each
/// thread remembers the stems it computed.
fn stem(lower: String) -> String {
    thread_local! {
        static STEMS: RefCell<HashMap<Box<str>, Box<str>, foldhash::fast::FixedState>> = RefCell::default();
    }
    STEMS.with_borrow_mut(|stems| {
        if let Some(s) = stems.get(lower.as_str()) {
            return s.to_string();
        }
        let s = stemmer().stem(&lower).into_owned();
        if stems.len() >= STEM_CACHE_MAX {
            stems.clear();
        }
        stems.insert(lower.into_boxed_str(), s.as_str().into());
        s
    })
}

/// The terms of `text`, in order, repeats kept.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for w in text.unicode_words() {
        if w.len() > TOKEN_BYTES_MAX {
            continue;
        }
        let lower = w.to_lowercase();
        // Typographic apostrophes spell the same stop words ("don’t").
        if stop_words().contains(lower.replace('\u{2019}', "'").as_str()) {
            continue;
        }
        // Only words with letters have stems; numbers and codes ("0042", "v2") pass as they are.
        if lower.bytes().any(|b| b.is_ascii_digit()) {
            out.push(lower);
        } else {
            out.push(stem(lower));
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

    /// The per-thread stem table never changes a stem: every word, met once or many times, and
    /// after the table started over, stems as the stemmer does.
    #[test]
    fn remembered_stems_are_the_stemmers() {
        let words = ["streaming", "streams", "kinesis", "größe", "naïve", "running", "ran", "generously", "a", "ies"];
        for round in 0..3 {
            for w in words {
                assert_eq!(stem(w.to_owned()), stemmer().stem(w).into_owned(), "{w} in round {round}");
            }
        }
        for i in 0..STEM_CACHE_MAX + 10 {
            let w = format!("walking{i}s");
            assert_eq!(stem(w.clone()), stemmer().stem(&w).into_owned());
        }
    }

    #[test]
    fn words_fold_case_and_stem() {
        assert_eq!(terms("We switched to Kinesis for event-streaming!"), vec!["switch", "kinesi", "event", "stream"]);
        // Stop words are no terms, in either apostrophe.
        assert!(terms("The and of what is THE").is_empty());
        assert_eq!(terms("don't don\u{2019}t stop"), vec!["stop"]);
        assert_eq!(terms("Streams STREAMING streamed"), vec!["stream", "stream", "stream"]);
        // Non-Latin scripts split on word boundaries too; punctuation is dropped.
        assert_eq!(terms("Größe — naïve, 東京"), vec!["größe", "naïv", "東", "京"]);
        assert_eq!(term_counts("x b x"), vec![("b".to_owned(), 1), ("x".to_owned(), 2)]);
        assert!(terms(&"x".repeat(100)).is_empty());
        assert_eq!(terms("INC-0042 runs v2.10"), vec!["inc", "0042", "run", "v2.10"]);
    }
}
