//! A copy-on-write bit column, and its flat per-snapshot copy for hot loops.

use crate::index::cow::CowVec;

/// One bit per row.
#[derive(Clone, Debug, Default)]
pub struct BitCol {
    words: CowVec<u64>,
    len: usize,
}

impl BitCol {
    /// Number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends a bit.
    pub fn push(&mut self, bit: bool) {
        if self.len.is_multiple_of(64) {
            self.words.push(0);
        }
        self.len += 1;
        self.set(self.len - 1, bit);
    }

    /// Sets bit `i`.
    pub fn set(&mut self, i: usize, bit: bool) {
        let w = *self.words.get(i / 64);
        let m = 1u64 << (i % 64);
        let n = if bit { w | m } else { w & !m };
        if n != w {
            self.words.set(i / 64, n);
        }
    }

    /// Whether any bit is set.
    pub fn any(&self) -> bool {
        self.words.iter().any(|w| *w != 0)
    }

    /// Bit `i`.
    pub fn get(&self, i: usize) -> bool {
        self.words.get(i / 64) >> (i % 64) & 1 == 1
    }

    /// The words as one flat vector (for a snapshot's materialized filter).
    pub fn flatten(&self) -> Vec<u64> {
        let mut v = Vec::with_capacity(self.words.len());
        for leaf in self.words.leaves() {
            v.extend_from_slice(leaf);
        }
        v
    }

    /// Builds a column from bits.
    pub fn from_bits(bits: impl ExactSizeIterator<Item = bool>) -> BitCol {
        let len = bits.len();
        let mut words = vec![0u64; len.div_ceil(64)];
        for (i, b) in bits.enumerate() {
            if b {
                words[i / 64] |= 1 << (i % 64);
            }
        }
        BitCol { words: CowVec::from_vec(words), len }
    }
}
