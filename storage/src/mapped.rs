//! Read-only whole-file views for snapshots: a memory mapping (zero-copy, the page cache is used
//! in place) or, for file systems that cannot map (the in-memory test Vfs), an 8-byte-aligned copy.
//! This module holds the crate's only `unsafe` code.

use std::io;

/// The bytes of a whole file, 8-byte aligned.
pub enum Mapped {
    /// A read-only mapping of the file.
    Map(memmap2::Mmap),
    /// An aligned copy.
    Owned {
        /// Backing words (`u64` for alignment).
        words: Vec<u64>,
        /// Length in bytes.
        len: usize,
    },
}

impl std::fmt::Debug for Mapped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mapped({} bytes)", self.len())
    }
}

impl Mapped {
    /// Maps `file` read-only.
    pub fn map(file: &std::fs::File) -> io::Result<Mapped> {
        // Safety: the mapping is read-only and engram never writes a snapshot file after renaming
        // it into place (snapshots are immutable; a new one gets a new name). Another process
        // truncating the file under us could fault the reader (SIGBUS); the folder lock keeps
        // other engram processes out, and checksums catch any other change of content.
        unsafe { memmap2::Mmap::map(file) }.map(Mapped::Map)
    }

    /// An aligned copy of `bytes`.
    pub fn copy_of(bytes: &[u8]) -> Mapped {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        for (w, chunk) in words.iter_mut().zip(bytes.chunks(8)) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            *w = u64::from_ne_bytes(b);
        }
        Mapped::Owned { words, len: bytes.len() }
    }
}

impl std::ops::Deref for Mapped {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Mapped::Map(m) => m,
            Mapped::Owned { words, len } => {
                // Safety: `words` holds `words.len() * 8 >= len` initialised bytes; `u8` has no
                // alignment or validity requirement, and the borrow of `self` keeps them alive.
                unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), *len) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_and_maps_are_the_same_bytes() {
        let bytes: Vec<u8> = (0..1001u32).map(|i| (i % 251) as u8).collect();
        let copy = Mapped::copy_of(&bytes);
        assert_eq!(&copy[..], &bytes[..]);
        assert_eq!(copy.as_ptr().align_offset(8), 0);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, &bytes).unwrap();
        let mapped = Mapped::map(&std::fs::File::open(&path).unwrap()).unwrap();
        assert_eq!(&mapped[..], &bytes[..]);
    }
}
