//! BERT's uncased tokenization for ASCII text, without allocation per token: the static
//! embedder's hot path. Clean (control characters dropped, whitespace as space), lower case, split
//! on whitespace and ASCII punctuation, then greedy longest-match `WordPiece` with `##`
//! continuations and `[UNK]` for a word that cannot be covered or is over 100 characters. Text with
//! any non-ASCII byte goes to the `tokenizers` crate instead (accents, CJK and Unicode punctuation
//! need its normalizer); a test holds both equal on random ASCII text.

use std::collections::HashMap;
use tokenizers::Tokenizer;

/// Longest word `WordPiece` tries to split (BERT's `max_input_chars_per_word`).
const MAX_WORD: usize = 100;

/// The vocabulary split into word starts and `##` continuations.
pub struct AsciiWordPiece {
    start: HashMap<Box<str>, u32>,
    cont: HashMap<Box<str>, u32>,
    unk: u32,
    longest: usize,
}

impl AsciiWordPiece {
    /// From the tokenizer's vocabulary.
    pub fn new(tokenizer: &Tokenizer) -> Result<AsciiWordPiece, String> {
        let vocab = tokenizer.get_vocab(false);
        let unk = *vocab.get("[UNK]").ok_or("no [UNK] token")?;
        let (mut start, mut cont) = (HashMap::new(), HashMap::new());
        let mut longest = 0;
        for (piece, id) in vocab {
            longest = longest.max(piece.len());
            match piece.strip_prefix("##") {
                Some(rest) => cont.insert(rest.into(), id),
                None => start.insert(piece.into(), id),
            };
        }
        Ok(AsciiWordPiece { start, cont, unk, longest })
    }

    fn word(&self, word: &str, out: &mut Vec<u32>) {
        if word.len() > MAX_WORD {
            out.push(self.unk);
            return;
        }
        let mark = out.len();
        let mut at = 0;
        while at < word.len() {
            let map = if at == 0 { &self.start } else { &self.cont };
            let mut end = word.len().min(at + self.longest);
            let found = loop {
                if end <= at {
                    break None;
                }
                if let Some(id) = map.get(&word[at..end]) {
                    break Some(*id);
                }
                end -= 1;
            };
            match found {
                Some(id) => {
                    out.push(id);
                    at = end;
                }
                None => {
                    out.truncate(mark);
                    out.push(self.unk);
                    return;
                }
            }
        }
    }

    /// Appends the ids of `text` (no special tokens); false (nothing appended) when the text is
    /// not ASCII.
    pub fn ids(&self, text: &str, out: &mut Vec<u32>) -> bool {
        if !text.is_ascii() {
            return false;
        }
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut Vec<u32>| {
            if !word.is_empty() {
                self.word(word, out);
                word.clear();
            }
        };
        for b in text.bytes() {
            match b {
                b' ' | b'\t' | b'\n' | b'\r' => flush(&mut word, out),
                0..=31 | 127 => {}
                33..=47 | 58..=64 | 91..=96 | 123..=126 => {
                    flush(&mut word, out);
                    let p = [b];
                    // A punctuation mark is its own word.
                    self.word(std::str::from_utf8(&p).unwrap_or_default(), out);
                }
                _ => word.push(char::from(b.to_ascii_lowercase())),
            }
        }
        flush(&mut word, out);
        true
    }
}
